#!/bin/bash
# joblib arrays read by their dtype state (tests/differential/gen_joblib_dtype.py): record arrays of every
# shape are never invalid or unsafe; a dtype whose state flags say "holds objects" makes joblib
# pickle.load the array bytes: reached by the real joblib.load (tests/loaders/reach.py) and
# unsafe for stguard. Skips (77) when Debian's python3 cannot import numpy and joblib.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "numpy, joblib"
"$PY" "$SRC/tests/differential/gen_joblib_dtype.py" "$tmp" || { echo "FAIL: generator"; exit 1; }
fail=0
for f in "$tmp"/benign_*.joblib; do
    "$STGUARD_CLI" scan -v --no-digest "$f" >"$tmp/out.txt" 2>&1
    if ! grep -Eq ": (OK|WARN) \(joblib\)" "$tmp/out.txt"; then
        echo "FAIL: benign $(basename "$f")"
        cat "$tmp/out.txt"
        fail=1
    fi
done
"$PY" "$SRC/tests/loaders/reach.py" joblib "$tmp"/evil_*.joblib >"$tmp/reach.jsonl"
"$PY" -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
bad=[x["file"] for x in r if not x["reached"]]
[print("FAIL: joblib.load does not reach the payload of", b) for b in bad]
print("reach: %d malicious fixtures" % len(r)); sys.exit(1 if bad or not r else 0)' \
    "$tmp/reach.jsonl" || fail=1
for f in "$tmp"/evil_*.joblib; do
    "$STGUARD_CLI" scan -v --no-digest "$f" >"$tmp/out.txt" 2>&1
    if ! grep -q ": UNSAFE (joblib)" "$tmp/out.txt" || ! grep -q "os.system" "$tmp/out.txt"; then
        echo "FAIL: malicious $(basename "$f") not blocked"
        cat "$tmp/out.txt"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo PASS
exit $fail
