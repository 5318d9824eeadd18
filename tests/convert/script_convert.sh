#!/bin/bash
# `stguard convert` against torch itself (docs/convert.md, "Proof"): fixtures written by Debian's
# torch 1.13 (tests/convert/gen_convert_fixtures.py) convert to files whose every tensor equals what
# torch.load(weights_only=True) returns, byte for byte, in dtype and shape, and that are ok under
# strict (tests/convert/convert_check.py); the expected refusals exit 1 and leave no file. Then every
# file of corpus/ and tests/data/: a conversion that succeeds must give a strict-ok file, and a
# file the scanner calls unsafe (or invalid) is never converted. Skips (77) without torch.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "torch"
"$PY" "$SRC/tests/convert/gen_convert_fixtures.py" "$tmp/fx" >/dev/null || { echo "FAIL: generator"; exit 1; }
mkdir -p "$tmp/work"
fail=0
"$PY" "$SRC/tests/convert/convert_check.py" "$STGUARD_CLI" "$tmp/fx" "$tmp/work" || fail=1

# --force: an existing output is kept (exit 3, the output cannot be written) unless --force
# replaces it; the messages name --force and say what happened, not a status name alone
out="$tmp/work/force.safetensors"
echo keep >"$out"
"$STGUARD_CLI" convert "$tmp/fx/linear.pt" "$out" 2>"$tmp/force.err"
rc=$?
if [ "$rc" != 3 ] || [ "$(cat "$out")" != keep ]; then
    echo "FAIL: an existing output was replaced without --force (exit $rc)"; fail=1
fi
if ! grep -q "the output file exists and was kept: .*--force" "$tmp/force.err" ||
    ! grep -q "not converted: .*nothing was written" "$tmp/force.err" ||
    grep -q "failed: STG_E_IO\|force to replace" "$tmp/force.err"; then
    echo "FAIL: messages of a refused convert: $(cat "$tmp/force.err")"; fail=1
fi
"$STGUARD_CLI" convert --force "$tmp/fx/linear.pt" "$out" 2>/dev/null || { echo "FAIL: --force"; fail=1; }
"$STGUARD_CLI" scan "$out" >/dev/null || { echo "FAIL: --force output not ok"; fail=1; }
"$STGUARD_CLI" convert --help | grep -q "Exit status: 0 converted, 1 refused" || { echo "FAIL: --help"; fail=1; }
"$STGUARD_CLI" convert only-one-arg >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL: usage error is not exit 2"; fail=1; }

# --max-output and the scan's limits: a bound too small refuses (exit 1, nothing written, the
# limit named); one large enough converts; bad values are usage errors (exit 2)
lim="$tmp/work/limits.safetensors"
"$STGUARD_CLI" convert --max-output 64 "$tmp/fx/linear.pt" "$lim" 2>"$tmp/lim.err"
rc=$?
if [ $rc != 1 ] || [ -e "$lim" ] || ! grep -q "limit max_output" "$tmp/lim.err"; then
    echo "FAIL: --max-output 64 (exit $rc)"; cat "$tmp/lim.err"; fail=1
fi
"$STGUARD_CLI" convert --max-output 100000000 --profile compat --max-findings 50 \
    "$tmp/fx/linear.pt" "$lim" 2>/dev/null || { echo "FAIL: generous limits refused"; fail=1; }
rm -f "$lim"
"$STGUARD_CLI" convert --limit max_pickle_memo=1 "$tmp/fx/linear.pt" "$lim" 2>"$tmp/lim.err"
rc=$?
if [ $rc != 1 ] || [ -e "$lim" ] || ! grep -q "limit max_pickle_memo" "$tmp/lim.err"; then
    echo "FAIL: --limit max_pickle_memo=1 (exit $rc)"; cat "$tmp/lim.err"; fail=1
fi
for bad in "--max-output 0" "--max-output 12k" "--limit nosuch=1" "--max-memory x" \
    "--profile lax"; do
    # shellcheck disable=SC2086
    "$STGUARD_CLI" convert $bad "$tmp/fx/linear.pt" "$lim" >/dev/null 2>&1
    rc=$?
    if [ $rc != 2 ] || [ -e "$lim" ]; then echo "FAIL: convert $bad: exit $rc"; fail=1; fi
done

# every file of the corpus and the test data: one scan gives every verdict and format; convert
# then runs on each file a loader could unpickle or that the scan does not call ok or warn, and
# on one in eight of the rest (junk fuzzing seeds, text, JSON: refused as not pickle-based)
find "$SRC/corpus" "$SRC/tests/data" -type f -print0 | sort -z >"$tmp/files"
"$STGUARD_CLI" scan --no-digest --format json --files-from "$tmp/files" --null >"$tmp/sweep.jsonl" 2>/dev/null
"$PY" - "$tmp/sweep.jsonl" >"$tmp/verdicts" <<'PYEOF' || { echo "FAIL: sweep scan output"; exit 1; }
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("type") == "file":
        print("%s\t%s\t%s" % (r["verdict"], r["format"], r["path"]))
PYEOF
n=0; tried=0; converted=0; refused=0
while IFS=$'\t' read -r verdict format f; do
    n=$((n + 1))
    case "$verdict/$format" in
        ok/unknown | warn/unknown | ok/text | ok/json) [ $((n % 8)) = 0 ] || continue ;;
    esac
    tried=$((tried + 1))
    o="$tmp/work/sweep.safetensors"
    rm -f "$o"
    "$STGUARD_CLI" convert "$f" "$o" >/dev/null 2>&1
    rc=$?
    if [ "$rc" = 0 ]; then
        converted=$((converted + 1))
        case "$verdict" in ok | warn) ;; *) echo "FAIL: $f: scan says $verdict, converted"; fail=1 ;; esac
        "$STGUARD_CLI" scan --no-digest "$o" >/dev/null 2>&1 || { echo "FAIL: $f: output not ok"; fail=1; }
    else
        refused=$((refused + 1))
        if [ -e "$o" ]; then echo "FAIL: $f: refused (exit $rc) but wrote $o"; fail=1; fi
        if [ "$rc" != 1 ] && [ "$rc" != 2 ]; then echo "FAIL: $f: exit $rc"; fail=1; fi
    fi
    if ls "$tmp/work" | grep -q '\.stguard-'; then echo "FAIL: $f: temporary file left"; fail=1; fi
done <"$tmp/verdicts"
[ "$n" = "$(tr -cd '\0' <"$tmp/files" | wc -c)" ] || { echo "FAIL: the sweep scan left files out"; fail=1; }
echo "sweep: $n files, $tried tried, $converted converted, $refused refused"
[ "$n" -gt 100 ] || { echo "FAIL: the sweep found too few files"; fail=1; }
exit $fail
