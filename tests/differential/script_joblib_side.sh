#!/bin/bash
# joblib < 0.10 side files (tests/differential/gen_joblib_side.py): an NDArrayWrapper's side file is opened
# next to the joblib file and scanned as np.load(allow_pickle=True) reads it. The malicious
# cases are reached by the real joblib.load (tests/loaders/reach.py) and never `ok`/`warn` for
# stguard: a payload in the side file is unsafe with the side file as member; a name that leaves
# the folder (absolute, '..', a link out) is joblib_side_file_escape; an absent file
# joblib_side_file_missing; standard input (no folder) joblib_side_file_unresolved. Near misses
# (a subfolder, 'a..b', a link inside the folder, plain floats and benign object arrays) stay
# ok: every global, the side files' object arrays included, is on the built-in allowlist. Skips (77) when Debian's python3 cannot import numpy and joblib.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "numpy, joblib"
"$PY" "$SRC/tests/differential/gen_joblib_side.py" "$tmp" || { echo "FAIL: generator"; exit 1; }
fail=0
expect() { # CASE VERDICT [TEXT...]: the scan of CASE/model.pkl says VERDICT and every TEXT
    local c=$1 v=$2
    shift 2
    "$STGUARD_CLI" scan -v --no-digest "$tmp/$c/model.pkl" >"$tmp/out.txt" 2>&1
    local ok=1
    grep -q ": $v (joblib)" "$tmp/out.txt" || ok=0
    for t in "$@"; do grep -qF -- "$t" "$tmp/out.txt" || ok=0; done
    if [ $ok -eq 0 ]; then
        echo "FAIL: $c: want $v $*"
        cat "$tmp/out.txt"
        fail=1
    fi
}
cd "$tmp" || exit 1
"$PY" "$SRC/tests/loaders/reach.py" joblib */model.pkl >"$tmp/reach.jsonl" 2>/dev/null
"$PY" -c 'import json,sys
r={x["file"].split("/")[0]: x for x in map(json.loads, open(sys.argv[1]))}
bad=[c for c in ("evil_npy","evil_raw","evil_abs","evil_dotdot","evil_link") if not r[c]["reached"]]
bad+=[c for c in ("benign","subdir","link_inside","missing") if r[c]["reached"]]
bad+=[c for c in ("benign","subdir","link_inside") if r[c]["error"]]
bad+=[] if "FileNotFoundError" in (r["missing"]["error"] or "") else ["missing raises"]
[print("FAIL: reach.py disagrees on", b) for b in bad]
sys.exit(1 if bad else 0)' "$tmp/reach.jsonl" || fail=1
expect benign OK 'loading it runs no code [member "model.pkl_02.npy"]'
expect subdir OK
expect link_inside OK 'pickle_file: pickle-based file whose globals are all on the built-in allowlist'
expect evil_npy UNSAFE '[global posix.system] [member "model.pkl_01.npy"]'
expect evil_raw UNSAFE '[global posix.system] [member "model.pkl_01.npy"]'
expect evil_abs INVALID 'joblib_side_file_escape @'
expect evil_dotdot INVALID 'joblib_side_file_escape @'
expect evil_link INVALID 'joblib_side_file_escape @78: a side file joblib.load would open resolves outside the scan root'
expect missing INVALID 'joblib_side_file_missing @78:' '[member "model.pkl_01.npy"]'
# A side file that is a FIFO (joblib.load would block on it), a directory or a device through a
# link inside the folder: a finding at once, never a hang (issue 23 item 1).
for kind in fifo dir; do
    rm -rf "$tmp/special_$kind"
    cp -r "$tmp/benign" "$tmp/special_$kind"
    rm -f "$tmp/special_$kind/model.pkl_01.npy"
    case $kind in
    fifo) mkfifo "$tmp/special_$kind/model.pkl_01.npy" ;;
    dir) mkdir "$tmp/special_$kind/model.pkl_01.npy" ;;
    esac
    timeout 20 "$STGUARD_CLI" scan --no-digest "$tmp/special_$kind/model.pkl" >"$tmp/out.txt" 2>&1
    rc=$?
    if [ $rc -eq 124 ] || ! grep -q ": INVALID (joblib)" "$tmp/out.txt" ||
        ! grep -q "not_regular_file" "$tmp/out.txt"; then
        echo "FAIL: side file that is a $kind (rc $rc)"
        cat "$tmp/out.txt"
        fail=1
    fi
done
for c in benign subdir link_inside; do
    if grep -q "joblib_side_file" <("$STGUARD_CLI" scan -v --no-digest "$c/model.pkl" 2>&1); then
        echo "FAIL: near miss $c has a side-file finding"
        fail=1
    fi
done
# No folder: standard input names side files it cannot resolve; a pickle naming none is clean.
"$STGUARD_CLI" scan -v --no-digest - <benign/model.pkl >"$tmp/out.txt" 2>&1
if [ "$(grep -c 'joblib_side_file_unresolved @' "$tmp/out.txt")" != 2 ]; then
    echo "FAIL: stdin side files not unresolved"
    cat "$tmp/out.txt"
    fail=1
fi
"$STGUARD_CLI" scan -v --no-digest - <outside/evil.npy >"$tmp/out.txt" 2>&1
if grep -q joblib_side_file "$tmp/out.txt"; then
    echo "FAIL: a pickle without wrappers has side-file findings"
    fail=1
fi
# A ZF file written by joblib 0.9.4 (Debian's test data) without its .npy.z side files.
zf=$(dpkg -L python3-joblib 2>/dev/null | grep 'compressed_cache_size_pickle_py35_np19.gz$' | head -1)
if [ -n "$zf" ] && [ -f "$zf" ]; then
    mkdir -p zf && cp "$zf" zf/
    "$STGUARD_CLI" scan -v --no-digest zf/"$(basename "$zf")" >"$tmp/out.txt" 2>&1
    if [ "$(grep -c 'joblib_side_file_missing' "$tmp/out.txt")" != 3 ]; then
        echo "FAIL: ZF without its side files"
        cat "$tmp/out.txt"
        fail=1
    fi
    "$STGUARD_CLI" scan -v --no-digest "$zf" >"$tmp/out.txt" 2>&1
    if ! grep -q ": OK (joblib)" "$tmp/out.txt"; then
        echo "FAIL: ZF with its side files"
        cat "$tmp/out.txt"
        fail=1
    fi
fi
# The ZF side files (*.npy.z: raw array bytes) scanned on their own are read as the side-file
# route reads them: ok, no format_unknown. Near miss: the same bytes under another name keep
# format_unknown (a ZF file joblib.load reads directly unpickles its content); a ZF .npy.z
# holding a pickle is still walked as one (os.system: unsafe).
side=$(dpkg -L python3-joblib 2>/dev/null | grep '_np19.gz_01.npy.z$' | head -1)
if [ -n "$side" ] && [ -f "$side" ]; then
    "$STGUARD_CLI" scan -v --no-digest "$side" >"$tmp/out.txt" 2>&1
    if ! grep -q ": OK (joblib)" "$tmp/out.txt" || grep -q format_unknown "$tmp/out.txt"; then
        echo "FAIL: a .npy.z side file on its own"; cat "$tmp/out.txt"; fail=1
    fi
    cp "$side" "$tmp/renamed.z"
    "$STGUARD_CLI" scan -v --no-digest "$tmp/renamed.z" >"$tmp/out.txt" 2>&1
    if ! grep -q ": WARN (joblib)" "$tmp/out.txt" || ! grep -q format_unknown "$tmp/out.txt"; then
        echo "FAIL: near miss: ZF raw bytes not named .npy.z"; cat "$tmp/out.txt"; fail=1
    fi
fi
"$PY" - "$tmp/evil_01.npy.z" <<'PYEOF' || { echo "FAIL: writing a ZF pickle"; fail=1; }
import os, pickle, sys
from joblib.numpy_pickle_compat import write_zfile
class Evil:
    def __reduce__(self):
        return (os.system, ("true",))
with open(sys.argv[1], "wb") as f:
    write_zfile(f, pickle.dumps(Evil(), 2))
PYEOF
"$STGUARD_CLI" scan --no-digest "$tmp/evil_01.npy.z" >"$tmp/out.txt" 2>&1
if ! grep -q ": UNSAFE (joblib)" "$tmp/out.txt"; then
    echo "FAIL: a ZF .npy.z holding a pickle"; cat "$tmp/out.txt"; fail=1
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
