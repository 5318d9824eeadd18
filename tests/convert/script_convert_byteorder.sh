#!/bin/bash
# The converter writes little-endian safetensors whatever the input's byte order
# (docs/convert.md, "Byte order"): NumPy arrays saved big-endian (numpy.save of '>f4', '>f8',
# '>i2', '>i8', '>c8', '>f2', '>u4', C and Fortran order, and the same in an np.savez) and
# little-endian convert to tensors whose bytes are numpy's own astype('<..') of the array, in C
# order; the header's dtype and shape are the array's. Skips (77) without numpy.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "numpy"
"$PY" - "$STGUARD_CLI" "$tmp" <<'EOF'
import json, struct, subprocess, sys
import numpy as np

cli, tmp = sys.argv[1], sys.argv[2]
names = {"f4": "F32", "f8": "F64", "i2": "I16", "i8": "I64", "c8": "C64", "f2": "F16", "u4": "U32"}
rng = np.random.default_rng(30)
arrays = {}
for code in names:
    for order in "<>":
        base = rng.standard_normal((3, 5)) * 1000
        if code == "c8":
            base = base + 1j * rng.standard_normal((3, 5))
        a = base.astype(order + code)
        arrays[f"{code}{'be' if order == '>' else 'le'}"] = a
        arrays[f"{code}{'be' if order == '>' else 'le'}_fortran"] = np.asfortranarray(a)

def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}

def check(name, a, got):
    dtype, shape, raw = got
    want = np.ascontiguousarray(a).astype("<" + a.dtype.str[1:])
    assert dtype == names[a.dtype.str[1:]], (name, dtype)
    assert shape == list(a.shape), (name, shape)
    assert raw == want.tobytes(order="C"), f"{name}: bytes differ from astype('<')"
    assert np.array_equal(np.frombuffer(raw, dtype=want.dtype).reshape(a.shape), a), name

fails = 0
for name, a in arrays.items():
    src, out = f"{tmp}/{name}.npy", f"{tmp}/{name}.safetensors"
    np.save(src, a)
    assert open(src, "rb").read(60).count(b"'>" if a.dtype.byteorder == ">" else b"'<") == 1, name
    r = subprocess.run([cli, "convert", src, out], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {name}.npy: exit {r.returncode}: {r.stderr}")
        fails += 1
        continue
    got = tensors(out)
    try:
        check(name, a, got["array"])
    except AssertionError as e:
        print(f"FAIL: {e}")
        fails += 1
# An .npz of every array at once: one tensor per member.
np.savez(f"{tmp}/all.npz", **arrays)
r = subprocess.run([cli, "convert", f"{tmp}/all.npz", f"{tmp}/all.safetensors"],
                   capture_output=True, text=True)
if r.returncode != 0:
    print(f"FAIL: all.npz: exit {r.returncode}: {r.stderr}")
    fails += 1
else:
    got = tensors(f"{tmp}/all.safetensors")
    for name, a in arrays.items():
        try:
            check(f"all.npz:{name}", a, got[name])
        except (AssertionError, KeyError) as e:
            print(f"FAIL: {e!r}")
            fails += 1
print(f"convert byte order: {len(arrays)} .npy files and one .npz, {fails} failures")
sys.exit(1 if fails else 0)
EOF
