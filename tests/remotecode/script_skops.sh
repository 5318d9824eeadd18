#!/bin/bash
# skops files laid out as skops.io.dump writes them (tests/remotecode/gen_skops.py): a plain
# estimator is ok (label skops); a type skops does not trust by default is
# skops_type_untrusted, one on the pickle policy's deny list skops_type_dangerous, a state
# without its type skops_malformed, each with schema.json as member; a .skops name over bytes
# that are no zip is format_mismatch. Skips (77) when Debian's python3 cannot import numpy.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "numpy"
"$PY" "$SRC/tests/remotecode/gen_skops.py" "$tmp" || { echo "FAIL: generator"; exit 1; }
. "$(dirname "$0")/cli_expect.sh"
expect benign.skops OK skops
expect dangerous.skops UNSAFE skops "skops_type_dangerous" "[global os.system]" 'member "schema.json"'
expect untrusted.skops WARN skops "skops_type_untrusted" "[global mypackage.transforms.MyTransformer]"
expect malformed.skops INVALID skops "skops_malformed"
printf 'not a zip' >"$tmp/fake.skops"
expect fake.skops INVALID unknown "format_mismatch"
[ $fail -eq 0 ] && echo "skops files judged as skops' audit judges them"
exit $fail
