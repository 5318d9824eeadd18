#!/bin/bash
# skops files laid out as skops.io.dump writes them (tests/remotecode/gen_skops.py): a plain
# estimator is ok (label skops); a type skops does not trust by default is
# skops_type_untrusted, one on the pickle policy's deny list skops_type_dangerous, a state
# without its type skops_malformed, each with schema.json as member; a .skops name over bytes
# that are no zip is format_mismatch. Skips (77) when Debian's python3 cannot import numpy.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "numpy"
"$PY" "$SRC/tests/remotecode/gen_skops.py" "$tmp" || { echo "FAIL: generator"; exit 1; }
fail=0
expect() { # FILE VERDICT LABEL [TEXT...]
    local p=$1 v=$2 l=$3
    shift 3
    "$STGUARD_CLI" scan -v --no-digest "$tmp/$p" >"$tmp/out.txt" 2>&1
    local ok=1
    grep -q ": $v ($l)" "$tmp/out.txt" || ok=0
    for t in "$@"; do grep -qF -- "$t" "$tmp/out.txt" || ok=0; done
    if [ $ok -eq 0 ]; then
        echo "FAIL: $p: want $v ($l) $*"
        cat "$tmp/out.txt"
        fail=1
    fi
}
expect benign.skops OK skops
expect dangerous.skops UNSAFE skops "skops_type_dangerous" "[global os.system]" 'member "schema.json"'
expect untrusted.skops WARN skops "skops_type_untrusted" "[global mypackage.transforms.MyTransformer]"
expect malformed.skops INVALID skops "skops_malformed"
printf 'not a zip' >"$tmp/fake.skops"
expect fake.skops INVALID unknown "format_mismatch"
[ $fail -eq 0 ] && echo "skops files judged as skops' audit judges them"
exit $fail
