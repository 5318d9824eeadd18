#!/usr/bin/python3
"""Fixtures for `stguard convert` (tests/convert/script_convert.sh), written by Debian's torch 1.13.

usage: gen_convert_fixtures.py OUTDIR

Writes OUTDIR/<name>.pt files and OUTDIR/manifest.json: one record per file with
  args     extra arguments of `stguard convert`
  expect   "ok" (converted) or "refused" (exit 1, no output)
  codes    for refusals: finding codes of which one must be reported
  limit    for refusals: the limit the findings must name
  twin     for hand-made files whose torch.load reading is not the truth (big-endian
           byteorder: torch 1.13 ignores the record): the file whose tensors the output must
           equal instead
  dropped  names --drop-aliases must leave out (and list in __metadata__)
"""
import collections
import io
import json
import os
import shutil
import sys
import zipfile

import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(1234)
manifest = []


def save(name, obj, legacy=False, **rec):
    path = os.path.join(out, name + ".pt")
    if legacy:
        torch.save(obj, path, _use_new_zipfile_serialization=False)
    else:
        torch.save(obj, path)
    rec.setdefault("args", [])
    rec.setdefault("expect", "ok")
    rec["file"] = name + ".pt"
    manifest.append(rec)
    return path


nn = torch.nn
# real modules' state_dicts
save("linear", nn.Linear(8, 4).state_dict())
save("conv2d", nn.Conv2d(3, 6, 3).state_dict())
save("layernorm", nn.LayerNorm(16).state_dict())
save("embedding", nn.Embedding(50, 8).state_dict())
save("lstm", nn.LSTM(6, 5, num_layers=2).state_dict())
block = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32)
save("transformer", block.state_dict())
save("batchnorm", nn.BatchNorm1d(7).state_dict())  # num_batches_tracked: a 0-d int64

# every dtype torch 1.13 has that safetensors can hold
dtypes = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8,
    "u8": torch.uint8, "bool": torch.bool,
}
d = collections.OrderedDict()
for k, dt in dtypes.items():
    if dt == torch.bool:
        d[k] = torch.rand(3, 5) > 0.5
    elif dt.is_floating_point:
        d[k] = (torch.randn(3, 5) * 100).to(dt)
    else:
        d[k] = torch.randint(-100 if dt != torch.uint8 else 0, 100, (3, 5)).to(dt)
d["c64"] = torch.randn(4, dtype=torch.complex64)
save("dtypes", d)
save("dtypes_legacy", d, legacy=True)

# 0-d and empty
save("scalars_empty", {"zero_d": torch.tensor(3.5), "zero_d_int": torch.tensor(7),
                       "empty": torch.empty(0), "empty_2d": torch.zeros(0, 4),
                       "empty_mid": torch.zeros(3, 0, 2, dtype=torch.float16)})

# non-contiguous views: transpose, steps, expand (stride 0), a 3-d permute
base = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
views = {"t": base[0].t(), "step": base[:, ::2, 1::3], "expand": torch.arange(4.).expand(3, 4),
         "permute": base.permute(2, 0, 1), "col": base[:, :, 2]}
save("views", views)
save("views_legacy", views, legacy=True)

# several tensors on one storage, with offsets
flat = torch.arange(40, dtype=torch.int32)
save("shared", {"a": flat[3:11], "b": flat[20:32].view(3, 4), "whole": flat,
                "c": flat[1:9].view(2, 4).t()})

# tied weights: one tensor under two names, plus a non-alias view of the same storage
w = torch.randn(10, 4)
tied = collections.OrderedDict([("emb.weight", w), ("head.weight", w), ("row", w[1])])
save("tied", tied)
save("tied_drop", tied, args=["--drop-aliases"], dropped=["head.weight"])

# legacy format
save("linear_legacy", nn.Linear(5, 3).state_dict(), legacy=True)
save("lstm_legacy", nn.LSTM(4, 3).state_dict(), legacy=True)

# checkpoint dict: state_dict + optimizer state
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model(torch.randn(3, 4)).sum().backward()
opt.step()
ckpt = {"state_dict": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}
save("checkpoint", ckpt, args=["--select", "state_dict"])
save("checkpoint_noselect", ckpt, expect="refused", codes=["convert_unsupported"])
save("checkpoint_strict", ckpt, args=["--select", "state_dict", "--strict-leaves"])
save("leaves", {"w": torch.ones(2), "epoch": 3, "name": "x"})
save("leaves_strict", {"w": torch.ones(2), "epoch": 3}, args=["--strict-leaves"],
     expect="refused", codes=["convert_unsupported"])
save("checkpoint_legacy", ckpt, legacy=True, args=["--select", "state_dict"])

# refusals: a good state_dict mixed with one unknown global; complex128; a quantized tensor
class Stranger:
    pass


save("mixed_unknown_class", {"w": torch.ones(3), "x": Stranger()}, expect="refused",
     codes=["pickle_global_unknown", "convert_unsupported"])
save("mixed_dtype_global", {"w": torch.ones(3), "dt": torch.float32}, expect="refused",
     codes=["convert_unsupported"])
save("complex128", {"w": torch.randn(3, dtype=torch.complex128)}, expect="refused",
     codes=["convert_unsupported", "pickle_global_unknown"])
save("quantized", {"q": torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8)},
     expect="refused", codes=["convert_unsupported", "pickle_global_unknown"])


# a big-endian archive, hand-made: torch 1.13 never writes one (it has no byteorder record);
# newer torch writes <folder>/byteorder and swaps on load. Storage bytes swapped per element.
def big_endian_copy(src, dst):
    zin = zipfile.ZipFile(src)
    buf = io.BytesIO()
    obj = torch.load(src, weights_only=True)
    sizes = {}
    # element size of every storage key, from the pickle's persistent ids
    import pickle

    class U(pickle.Unpickler):
        def find_class(self, mod, name):
            if mod == "torch" and name.endswith("Storage"):
                return name
            return super().find_class(mod, name)

        def persistent_load(self, pid):
            sizes[pid[2]] = {"FloatStorage": 4, "DoubleStorage": 8, "HalfStorage": 2,
                             "LongStorage": 8, "IntStorage": 4, "ShortStorage": 2,
                             "BFloat16Storage": 2, "ByteStorage": 1, "CharStorage": 1,
                             "BoolStorage": 1}[pid[1]]
            return torch.zeros(pid[4]).storage()

    folder = zin.namelist()[0].split("/")[0]
    try:
        U(io.BytesIO(zin.read(folder + "/data.pkl"))).load()
    except Exception:
        pass
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            key = info.filename[len(folder) + len("/data/"):]
            if info.filename.startswith(folder + "/data/") and key in sizes:
                n = sizes[key]
                data = b"".join(data[i:i + n][::-1] for i in range(0, len(data), n))
            zout.writestr(info, data)
        zout.writestr(folder + "/byteorder", "big")
    open(dst, "wb").write(buf.getvalue())
    del obj


big = {"f32": torch.randn(3, 4), "i64": torch.arange(6).view(2, 3), "f16": torch.randn(5).half(),
       "view": torch.randn(4, 6)[:, ::2]}
little = save("big_endian_twin", big)
big_endian_copy(little, os.path.join(out, "big_endian.pt"))
manifest.append({"file": "big_endian.pt", "args": [], "expect": "ok",
                 "twin": "big_endian_twin.pt"})

# NumPy: .npy (C and Fortran order, big-endian, bool, 0-d) and .npz (numpy.savez)
import numpy as np  # noqa: E402

rng = np.random.default_rng(7)


def npsave(name, arr=None, npz=None, **rec):
    path = os.path.join(out, name)
    if npz is not None:
        np.savez(path, **npz)
    else:
        np.save(path, arr)
    rec.setdefault("args", [])
    rec.setdefault("expect", "ok")
    rec["file"] = name
    rec["numpy"] = True
    manifest.append(rec)


npsave("f32.npy", rng.standard_normal((3, 4)).astype("<f4"))
npsave("big_i64.npy", np.arange(12, dtype=">i8").reshape(3, 4))
npsave("big_f16.npy", rng.standard_normal(5).astype(">f2"))
npsave("fortran.npy", np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4)))
npsave("bool.npy", rng.standard_normal(7) > 0)
npsave("scalar.npy", np.float16(2.5))
npsave("empty.npy", np.zeros((0, 3), dtype=np.int16))
npsave("c64.npy", (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64))
npsave("multi.npz", npz={"a": np.arange(5, dtype=np.int32), "b.w": rng.standard_normal((2, 2)),
                         "c": np.ones((2, 3), dtype=np.uint8)})
npsave("strings.npy", np.array(["ab", "c"]), expect="refused", codes=["convert_unsupported"])
# numpy.savez_compressed: deflated members, inflated into memory (max_inflate_bytes,
# max_inflate_ratio); 4 MiB of zeros deflates at ~1007:1, just past the 1000:1 cap
np.savez_compressed(os.path.join(out, "compressed.npz"), a=np.arange(5),
                    b=rng.standard_normal((3, 4)).astype(np.float32),
                    c=np.arange(24, dtype=">i2").reshape(2, 3, 4), d=rng.standard_normal(7) > 0)
manifest.append({"file": "compressed.npz", "args": [], "expect": "ok", "numpy": True})
np.savez_compressed(os.path.join(out, "ratio_bomb.npz"), z=np.zeros(4 << 20, dtype=np.uint8))
manifest.append({"file": "ratio_bomb.npz", "args": [], "expect": "refused", "numpy": True,
                 "codes": ["zip_bomb"], "limit": "max_inflate_ratio"})


# torch zips rewritten with every member deflated (torch.load reads them: miniz inflates)
def deflated_copy(src, dst):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))


for name in ("linear", "dtypes", "views"):
    deflated_copy(os.path.join(out, name + ".pt"), os.path.join(out, name + "_deflated.pt"))
    manifest.append({"file": name + "_deflated.pt", "args": [], "expect": "ok"})


# torch.storage.UntypedStorage in the persistent ids (hand-made: torch 1.13 writes typed
# storage names for tensors): torch.load reads them as uint8 storages of numel bytes, so the
# tensors are uint8 whatever view they take; a FloatStorage id renamed so views the first
# numel bytes of the float data as uint8, as torch.load does
def untyped_copy(src, dst, typename):
    old = b"ctorch\n" + typename + b"\n"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                assert old in data
                data = data.replace(old, b"ctorch.storage\nUntypedStorage\n")
            zout.writestr(info, data)


u8 = torch.arange(24, dtype=torch.uint8).reshape(4, 6)
save("untyped_src", {"u": u8, "t": u8.t(), "row": u8[2, 1::2]})
untyped_copy(os.path.join(out, "untyped_src.pt"), os.path.join(out, "untyped.pt"), b"ByteStorage")
manifest.append({"file": "untyped.pt", "args": [], "expect": "ok"})
save("untyped_float_src", {"f": torch.randn(2, 3)})
untyped_copy(os.path.join(out, "untyped_float_src.pt"), os.path.join(out, "untyped_float.pt"),
             b"FloatStorage")
manifest.append({"file": "untyped_float.pt", "args": [], "expect": "ok"})


# every pickle protocol torch.save takes (1 writes INT for False, 4 and 5 FRAME and MEMOIZE), in
# both layouts; protocol 0 writes a text persistent id that torch.load itself fails on
for proto in (1, 2, 3, 4, 5):
    sd = {"w": torch.randn(3, 4), "b": torch.arange(4), "big": torch.zeros(2, dtype=torch.int64)}
    for legacy in (False, True):
        name = "proto%d%s" % (proto, "_legacy" if legacy else "")
        path = os.path.join(out, name + ".pt")
        torch.save(sd, path, pickle_protocol=proto, _use_new_zipfile_serialization=not legacy)
        manifest.append({"file": name + ".pt", "args": [], "expect": "ok"})


# Archives torch.load hands to torch.jit.load (torch 1.13 serialization.py: load() calls
# _is_torchscript_zip, true when the reader's get_all_records() lists "constants.pkl"): a real
# torch.jit.save (tests/data/torchscript/scripted.pt, from tests/fixtures/gen_torchscript.py), and
# torch.save zips with a constants.pkl member added (with and without code/), under a name the
# C reader cuts at 511 bytes, and under a name with a NUL. Each is checked here with torch.load
# itself (torch.jit.load replaced by a recorder). Near miss: constants.pkl.bak.
def routes_to_torchscript(path):
    seen = []
    real = torch.jit.load
    torch.jit.load = lambda f, map_location=None, **kw: seen.append(f)
    try:
        torch.load(path)
    except Exception:
        pass
    finally:
        torch.jit.load = real
    return bool(seen)


def refolder(src, dst, folder, extra, patch=None):
    """src's members under `folder`, then `extra` (name, bytes) members; patch: (old, new) bytes
    replaced in the written archive (names zipfile cannot write, e.g. with a NUL)."""
    with zipfile.ZipFile(src) as zin:
        old = zin.namelist()[0].split("/")[0]
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zout:
            for n in zin.namelist():
                zout.writestr(folder + n[len(old):], zin.read(n))
            for n, b in extra:
                zout.writestr(n, b)
    data = buf.getvalue()
    if patch is not None:
        assert data.count(patch[0]) == 2  # the local and the central name
        data = data.replace(*patch)
    open(dst, "wb").write(data)


import warnings  # noqa: E402

warnings.simplefilter("ignore")  # torch.load's "looks like a TorchScript archive" warning
shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "torchscript",
                         "scripted.pt"), os.path.join(out, "ts_scripted.pt"))
ts_src = save("ts_src", nn.Linear(2, 2).state_dict())
EMPTY = b"\x80\x02)."  # a constants.pkl that unpickles (an empty tuple), so the scan passes it
long_folder = "a" * 497  # "<folder>/constants.pkl" is exactly 511 bytes
torchscript = {
    "ts_constants.pt": ("archive", [("archive/constants.pkl", EMPTY)], None),
    "ts_constants_code.pt": ("archive", [("archive/constants.pkl", EMPTY),
                                         ("archive/code/__torch__.py", b"")], None),
    "ts_long_name.pt": (long_folder, [(long_folder + "/constants.pklXYZ", EMPTY)], None),
    "ts_nul_name.pt": ("archive", [("archive/constants.pklZabc", EMPTY)],
                       (b"constants.pklZabc", b"constants.pkl\0abc")),
    "ts_near_miss.pt": ("archive", [("archive/constants.pkl.bak", EMPTY)], None),
}
for name, (folder, extra, patch) in torchscript.items():
    refolder(ts_src, os.path.join(out, name), folder, extra, patch)
for name in ["ts_scripted.pt"] + list(torchscript):
    routed = routes_to_torchscript(os.path.join(out, name))
    assert routed == (name != "ts_near_miss.pt"), name
    if routed:
        # the real program is unsafe by its pickles too; the others are refused for routing
        manifest.append({"file": name, "args": [], "expect": "refused",
                         "codes": ["torchscript_program"],
                         "stderr": "" if name == "ts_scripted.pt"
                         else "loading the file runs code (torchscript_program)"})
    else:
        manifest.append({"file": name, "args": [], "expect": "ok"})


# .npz by its members: np.savez keys holding '/' (Flax's params/Dense_0/kernel), stored and
# deflated; members compressed with bzip2 (zip method 12) and LZMA (method 14), which numpy.load
# reads through zipfile
flax = {"params/Dense_0/kernel": rng.standard_normal((3, 4)).astype(np.float32),
        "params/Dense_0/bias": np.zeros(4, dtype=np.float32),
        "params/Dense_1/kernel": np.arange(8, dtype=np.int64).reshape(4, 2)}
np.savez(os.path.join(out, "flax.npz"), **flax)
np.savez_compressed(os.path.join(out, "flax_compressed.npz"), **flax)


def npz_with(path, method):
    with zipfile.ZipFile(path, "w", method) as z:
        for k, a in flax.items():
            b = io.BytesIO()
            np.save(b, a)
            z.writestr(k + ".npy", b.getvalue())


npz_with(os.path.join(out, "bzip2.npz"), zipfile.ZIP_BZIP2)
npz_with(os.path.join(out, "lzma.npz"), zipfile.ZIP_LZMA)
for name in ("flax.npz", "flax_compressed.npz", "bzip2.npz", "lzma.npz"):
    with np.load(os.path.join(out, name)) as z:
        assert sorted(z.files) == sorted(flax), name
manifest += [{"file": n, "args": [], "expect": "ok", "numpy": True}
             for n in ("flax.npz", "flax_compressed.npz", "bzip2.npz", "lzma.npz")]

json.dump(manifest, open(os.path.join(out, "manifest.json"), "w"), indent=1)
