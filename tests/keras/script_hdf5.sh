#!/bin/bash
# HDF5 files and .keras zips written by h5py and zipfile in Keras' layouts (gen_hdf5.py names
# the Keras source lines it follows): every ok-* file is ok, every bad-<code>-* file carries
# <code> and is not ok; the labels are keras for a model_config or a .keras zip, hdf5 for
# weights; and the reader's view of each file's root attributes (hdf5_probe) equals h5py's
# (names, and the value of every string attribute), for superblocks 0 and 3, version 1 and 2
# headers, fixed and variable-length strings, a user block and dense attribute storage.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "h5py, numpy"
if [ -z "${STG_HDF5_PROBE:-}" ] || [ ! -x "$STG_HDF5_PROBE" ]; then
    echo "skip: no hdf5_probe"
    exit 77
fi
"$PY" "$SRC/tests/keras/gen_hdf5.py" "$tmp" >"$tmp/readback.txt" || exit 1
fail=0
for f in "$tmp"/*.h5 "$tmp"/*.keras; do
    name=$(basename "$f")
    out=$("$STGUARD_CLI" scan --format json "$f" | head -1)
    verdict=$(printf '%s' "$out" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
    format=$(printf '%s' "$out" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["format"])')
    codes=$(printf '%s' "$out" | "$PY" -c 'import json,sys; print(" ".join(x["code"] for x in json.load(sys.stdin)["findings"]))')
    case "$name" in
    ok-*)
        if [ "$verdict" != ok ]; then echo "FAIL $name: $verdict ($codes)"; fail=1; fi ;;
    bad-*)
        code=${name#bad-}; code=${code%%-*}
        case " $codes " in *" $code "*) ;; *) echo "FAIL $name: no $code ($codes)"; fail=1 ;; esac
        if [ "$verdict" = ok ]; then echo "FAIL $name: ok"; fail=1; fi ;;
    esac
    case "$name" in
    ok-weights-*) want=hdf5 ;;
    *) want=keras ;;
    esac
    if [ "$format" != "$want" ]; then echo "FAIL $name: format $format, want $want"; fail=1; fi
done
# the reader against h5py, attribute by attribute
"$PY" - "$tmp" "$STG_HDF5_PROBE" <<'PYEOF' || fail=1
import os, subprocess, sys
import h5py, numpy as np
folder, probe = sys.argv[1], sys.argv[2]
bad = 0
for name in sorted(os.listdir(folder)):
    if not name.endswith(".h5"):
        continue
    path = os.path.join(folder, name)
    lines = subprocess.run([probe, path], capture_output=True, text=True, check=True).stdout.split("\n")
    got = {}
    result = None
    for line in lines:
        parts = line.split()
        if parts and parts[0] == "attr":
            got[bytes.fromhex(parts[1]).decode()] = bytes.fromhex(parts[3]) if parts[2] == "string" and parts[3] != "-" else (b"" if parts[2] == "string" else None)
        elif parts and parts[0] == "result":
            result = parts[1:]
    want = {}
    with h5py.File(path, "r") as f:
        for k in f.attrs:
            v = f.attrs[k]
            if isinstance(v, bytes):
                want[k] = v
            elif isinstance(v, str):
                want[k] = v.encode("utf8")
            else:
                want[k] = None
    if result is None or result[0] != "0" or got != want:
        bad += 1
        print("FAIL reader differs from h5py on", name, result, sorted(set(got) ^ set(want)))
    else:
        print("same as h5py:", name, "superblock", result[1], "header", result[2], "dense", result[3], len(got), "attributes")
sys.exit(1 if bad else 0)
PYEOF
if [ $fail -ne 0 ]; then
    exit 1
fi
echo "hdf5 fixtures: all as expected"
