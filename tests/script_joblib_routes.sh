#!/bin/bash
# The array after a joblib NumpyArrayWrapper's BUILD on every route (tests/gen_joblib_routes.py):
# every hand-made payload reaches os.system in its real loader under tests/loaders/reach.py's
# refusing hook (joblib.load, torch.load, numpy.load, pickle.load), and stguard calls each file
# unsafe or invalid; seeded joblib.dump files of random arrays with every compressor stay ok or
# warn, and joblib.load of each reaches no payload global. Skips (77) without Debian's
# python3-numpy/-joblib/-torch.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "numpy, joblib, torch"
"$PY" "$SRC/tests/gen_joblib_routes.py" "$tmp" || { echo "FAIL: generator"; exit 1; }
fail=0
for loader in joblib torch numpy pickle; do
    awk -v l=$loader -F'\t' '$1 == l { print $2 }' "$tmp/evil.tsv" >"$tmp/files.txt"
    [ -s "$tmp/files.txt" ] || continue
    xargs -d '\n' "$PY" "$SRC/tests/loaders/reach.py" $loader <"$tmp/files.txt" >>"$tmp/reach.jsonl"
done
"$PY" "$SRC/tests/loaders/reach.py" joblib "$tmp"/benign/* >"$tmp/benign.jsonl"
"$PY" -c 'import json,sys
evil=[json.loads(l) for l in open(sys.argv[1])]
benign=[json.loads(l) for l in open(sys.argv[2])]
bad=[x["file"] for x in evil if not x["reached"]]
bad+=[x["file"] + " (benign)" for x in benign if x["reached"] or x["error"]]
[print("FAIL: the real loader disagrees with the fixture:", b) for b in bad]
print("reach: %d payloads reached, %d benign dumps loaded" % (len(evil), len(benign)))
sys.exit(1 if bad or len(evil) < 40 or len(benign) < 200 else 0)' \
    "$tmp/reach.jsonl" "$tmp/benign.jsonl" || fail=1
cut -f2 "$tmp/evil.tsv" | xargs -d '\n' "$STGUARD_CLI" scan --no-digest >"$tmp/evil.txt" 2>&1
n=$(grep -cE "^[^ ].*: (UNSAFE|INVALID) \(" "$tmp/evil.txt")
if [ "$n" -ne "$(wc -l <"$tmp/evil.tsv")" ]; then
    echo "FAIL: $n of $(wc -l <"$tmp/evil.tsv") payload files unsafe or invalid:"
    grep -E "^[^ ].*: (OK|WARN|ERROR) \(" "$tmp/evil.txt"
    fail=1
fi
"$STGUARD_CLI" scan --no-digest "$tmp"/benign/* >"$tmp/benign.txt" 2>&1
if grep -E "^[^ ].*: (UNSAFE|INVALID|ERROR) \(" "$tmp/benign.txt"; then
    echo "FAIL: benign joblib dumps flagged"
    fail=1
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
