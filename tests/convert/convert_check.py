#!/usr/bin/python3
"""Equivalence checks of `stguard convert` (tests/convert/script_convert.sh).

usage: convert_check.py STGUARD FIXTURES_DIR WORK_DIR

For every record of FIXTURES_DIR/manifest.json (tests/convert/gen_convert_fixtures.py):
- expect "ok": `stguard convert` exits 0; the output is `ok` under `stguard scan` (strict);
  its tensors are exactly the tensors of torch.load(weights_only=True) (of --select's key),
  each equal byte for byte, in dtype and in shape; non-tensor values are left out and reported;
  with --drop-aliases the dropped names are in __metadata__ (name -> kept name), and --sha256
  prints the output's real digest;
- expect "refused": exit 1, one of the expected codes reported (and the limit named, when the
  record has "limit"; the text of "stderr", when it has one), and no output file.
The safetensors file is read here with a few lines of Python (the format is small), so the
check does not depend on the safetensors package.
"""
import hashlib
import json
import os
import struct
import subprocess
import sys

import torch

cli, fx, work = sys.argv[1], sys.argv[2], sys.argv[3]
DT = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
      "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
      "U8": torch.uint8, "BOOL": torch.bool, "C64": torch.complex64}
failures = []


def raw_bytes(t):
    t = t.detach().contiguous().reshape(-1)
    if t.is_complex():
        t = torch.view_as_real(t).reshape(-1)
    return bytes(t.view(torch.uint8).tolist()) if t.numel() else b""


def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        out[name] = (info["dtype"], info["shape"], body[b:e])
    return meta, out, data


def check(rec):
    name = rec["file"]
    src = os.path.join(fx, name)
    dst = os.path.join(work, name + ".safetensors")
    if os.path.exists(dst):
        os.unlink(dst)
    p = subprocess.run([cli, "convert", src, dst, "--sha256"] + rec["args"], capture_output=True,
                       text=True)
    if rec["expect"] == "refused":
        if p.returncode != 1:
            return "expected refusal (exit 1), got %d: %s" % (p.returncode, p.stderr)
        if os.path.exists(dst) or [f for f in os.listdir(work) if ".stguard-" in f]:
            return "a refused conversion left a file"
        if not any(c in p.stderr for c in rec["codes"]):
            return "none of %r reported: %s" % (rec["codes"], p.stderr)
        if "stderr" in rec and rec["stderr"] not in p.stderr:
            return "%r is not said: %s" % (rec["stderr"], p.stderr)
        if "limit" in rec and ("[limit %s]" % rec["limit"]) not in p.stderr:
            return "the limit %s is not named: %s" % (rec["limit"], p.stderr)
        return None
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr)
    scan = subprocess.run([cli, "scan", "--format", "json", dst], capture_output=True, text=True)
    verdict = json.loads(scan.stdout.splitlines()[0])["verdict"]
    if scan.returncode != 0 or verdict != "ok":
        return "output not ok under strict: %s" % scan.stdout
    meta, got, data = read_safetensors(dst)
    digest = hashlib.sha256(data).hexdigest()
    if not p.stdout.startswith(digest + "  "):
        return "--sha256 printed %r, the output's digest is %s" % (p.stdout, digest)
    if meta.get("format") != "pt":
        return "__metadata__ lacks format: pt: %r" % meta
    if rec.get("numpy"):
        return check_numpy(rec, p, got, name)
    truth_path = os.path.join(fx, rec.get("twin", name))
    try:
        truth = torch.load(truth_path, weights_only=True)
    except Exception:
        # torch 1.13's weights-only unpickler has no BINFLOAT: optimizer state (lr, betas) is
        # beyond it. These fixtures are our own, so the full loader is safe to use for them.
        truth = torch.load(truth_path)
    args = rec["args"]
    if "--select" in args:
        truth = truth[args[args.index("--select") + 1]]
    tensors = {k: v for k, v in truth.items() if isinstance(k, str) and torch.is_tensor(v)}
    leaves = [k for k, v in truth.items() if not (isinstance(k, str) and torch.is_tensor(v))]
    for k in leaves:
        if "convert_leaf_skipped" not in p.stderr or ('"%s"' % k) not in p.stderr:
            return "leaf %r not reported as skipped: %s" % (k, p.stderr)
    dropped = rec.get("dropped", [])
    for k in dropped:
        if k in got or k not in meta or meta[k] not in got:
            return "alias %r not dropped into __metadata__ (%r)" % (k, meta)
    want = set(tensors) - set(dropped)
    if set(got) != want:
        return "names differ: got %r, want %r" % (sorted(got), sorted(want))
    for k in want:
        dtype, shape, raw = got[k]
        t = tensors[k]
        if DT.get(dtype) != t.dtype or list(t.shape) != shape:
            return "%s: %s %r, torch.load gives %s %r" % (k, dtype, shape, t.dtype, list(t.shape))
        if raw != raw_bytes(t):
            return "%s: bytes differ" % k
    order = [n for n, _ in sorted(
        ((n, i["data_offsets"][0]) for n, i in json.loads(
            data[8:8 + struct.unpack("<Q", data[:8])[0]]).items() if n != "__metadata__"),
        key=lambda x: x[1])]
    sizes = [torch.empty(0, dtype=DT[got[n][0]]).element_size() for n in order]
    expect_order = sorted(order, key=lambda n: (-torch.empty(0, dtype=DT[got[n][0]])
                                                .element_size(), n.encode()))
    if order != expect_order:
        return "data order is not by dtype size then name: %r" % order
    del sizes
    return None


NP = {"F64": "f8", "F32": "f4", "F16": "f2", "I64": "i8", "I32": "i4", "I16": "i2", "I8": "i1",
      "U64": "u8", "U32": "u4", "U16": "u2", "U8": "u1", "BOOL": "b1", "C64": "c8"}


def check_numpy(rec, p, got, name):
    import numpy as np
    path = os.path.join(fx, name)
    if name.endswith(".npz"):
        with np.load(path) as z:
            truth = {k: z[k] for k in z.files}
    else:
        truth = {"array": np.load(path)}
    if set(got) != set(truth):
        return "names differ: got %r, want %r" % (sorted(got), sorted(truth))
    for k, a in truth.items():
        dtype, shape, raw = got[k]
        if np.dtype("<" + NP[dtype]) != a.dtype.newbyteorder("<") or list(a.shape) != shape:
            return "%s: %s %r, numpy.load gives %s %r" % (k, dtype, shape, a.dtype, list(a.shape))
        want = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        if raw != want:
            return "%s: bytes differ" % k
    return None


manifest = json.load(open(os.path.join(fx, "manifest.json")))
for rec in manifest:
    err = check(rec)
    print("%-28s %s" % (rec["file"], "ok" if err is None else "FAIL: " + err))
    if err is not None:
        failures.append(rec["file"])
print("%d fixtures, %d failed" % (len(manifest), len(failures)))
sys.exit(1 if failures else 0)
