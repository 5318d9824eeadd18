#!/bin/bash
# .npy headers: stguard's reader (parser/npy.c, through the test driver npy_probe) against
# numpy.lib.format on numpy.save outputs of every dtype kind, hand-written spellings and seeded
# mutations (tests/differential/npy_differential.py), and dtype reduce strings (parser/npy_reduce.c) against
# numpy.dtype (tests/differential/npy_reduce_differential.py); then through the CLI: every numpy.save output is ok or
# warn, and object dtypes in every spelling followed by an os.system pickle are reached by the
# real numpy.load (tests/loaders/reach.py, refused there) and unsafe for stguard.
# Skips (77) when Debian's python3 cannot import numpy.
set -u
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" >/dev/null 2>&1; then
    echo "skip: $PY cannot import numpy"
    exit 77
fi
if [ -z "${STGUARD_CLI:-}" ] || [ ! -x "$STGUARD_CLI" ] || [ ! -x "${STG_NPY_PROBE:-}" ]; then
    echo "FAIL: no CLI binary (STGUARD_CLI) or npy_probe (STG_NPY_PROBE)"
    exit 1
fi
SRC=${STG_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seed=${STG_NPY_SEED:-$((RANDOM % 100000))}
fail=0
"$PY" "$SRC/tests/differential/npy_differential.py" "$STG_NPY_PROBE" "$tmp/d" "$seed" 3000 || fail=1
# numpy.dtype reduce strings (joblib array wrappers): parser/npy_reduce against numpy.dtype
"$PY" "$SRC/tests/differential/npy_reduce_differential.py" "$STG_NPY_PROBE" "$seed" 3000 || fail=1

# Benign: numpy.save outputs never invalid or unsafe.
for f in "$tmp"/d/save_*.npy; do
    "$STGUARD_CLI" scan -v --no-digest "$f" >"$tmp/out.txt" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! grep -Eq ": (OK|WARN) \(numpy\)" "$tmp/out.txt"; then
        echo "FAIL: benign $(basename "$f") rc=$rc"
        cat "$tmp/out.txt"
        fail=1
    fi
done

# Malicious: reached by numpy.load, unsafe for stguard.
"$PY" "$SRC/tests/differential/npy_differential.py" --evil "$tmp/e" || { echo "FAIL: generator"; exit 1; }
"$PY" "$SRC/tests/loaders/reach.py" numpy "$tmp"/e/*.npy >"$tmp/reach.jsonl"
n=$("$PY" -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; \
bad=[x["file"] for x in r if not x["reached"]]; print(len(r)); \
[print("FAIL: numpy.load does not reach the payload of", b, file=sys.stderr) for b in bad]; \
sys.exit(1 if bad else 0)' "$tmp/reach.jsonl") || fail=1
echo "reach: $n malicious fixtures checked"
for f in "$tmp"/e/*.npy; do
    "$STGUARD_CLI" scan -v --no-digest "$f" >"$tmp/out.txt" 2>&1
    rc=$?
    if ! grep -q ": UNSAFE (numpy)" "$tmp/out.txt" || ! grep -q "os.system" "$tmp/out.txt"; then
        echo "FAIL: malicious $(basename "$f") not blocked (rc=$rc)"
        cat "$tmp/out.txt"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "PASS (seed $seed)"
exit $fail
