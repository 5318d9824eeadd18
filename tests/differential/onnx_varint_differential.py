#!/usr/bin/python3
"""Every varint field stguard's ONNX walker reads, written at every width protobuf accepts,
against python3-onnx (onnx.load, the C++ protobuf parser) on the same bytes.

    onnx_varint_differential.py STGUARD_CLI OUT_DIR SEED COUNT

The model is written field by field here (no protobuf library), so each varint can be given a
value that differs from the plain one only in what its declared type drops: an int32 or enum
field gets high bits above bit 31 (2^32 + v, 0xFFFFFFFF00000000 | v, sign extensions), every
field gets non-minimal encodings (continuation bytes of zeros up to the 10-byte maximum) and a
10th byte whose bits past 64 protobuf drops; data_location also gets values its closed proto2
enum does not name, alone or after a valid one, and an 11-byte varint (malformed to both).
For each of COUNT seeded mutants, onnx.load_model_from_string and `stguard inspect --format
json` must agree on whether the file parses and, when it does, on every value read from a
varint: ir_version, model_version, opset versions, tensor dims, data_type and storage
(inline or external), input/output element types and dimensions. Mutants whose
data_location is EXTERNAL to onnx also get `stguard scan` with a location that leaves the
folder, which must be onnx_external_path_unsafe. Exit 1 on any disagreement."""
import json
import os
import random
import subprocess
import sys

import onnx
from onnx import TensorProto

U64 = (1 << 64) - 1


def varint(v, pad=0, tenth=None):
    """v (0 <= v < 2^64) as a varint, with pad extra zero groups (non-minimal, at most 10
    bytes in all); tenth: a 10-byte encoding whose last byte also carries these bits (bits
    1-6 of the 10th byte lie past bit 63: protobuf drops them)."""
    groups = []
    while True:
        groups.append(v & 0x7F)
        v >>= 7
        if v == 0:
            break
    if tenth is not None:
        last = groups[9] if len(groups) == 10 else 0
        groups = groups[:9] + [0] * (9 - min(len(groups), 9)) + [last | tenth]
    else:
        groups += [0] * pad
    out = bytearray()
    for i, g in enumerate(groups):
        out.append(g | (0x80 if i + 1 < len(groups) else 0))
    return bytes(out)


def tag(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):
    return tag(field, 2) + varint(len(payload)) + payload


def s(field, text):
    return ld(field, text.encode())


class Writer:
    """Writes the model; each varint field named in `plan` gets its planned encoding."""

    def __init__(self, plan):
        self.plan = plan

    def v(self, name, field, value):
        enc = self.plan.get(name)
        if enc is None:
            return tag(field, 0) + varint(value)
        return b"".join(tag(field, 0) + e for e in enc)

    def dims(self, name, field, values, packed):
        if packed:
            enc = self.plan.get(name)
            body = b"".join(enc) if enc is not None else b"".join(varint(x) for x in values)
            return ld(field, body)
        enc = self.plan.get(name)
        if enc is not None:
            return b"".join(tag(field, 0) + e for e in enc)
        return b"".join(tag(field, 0) + varint(x) for x in values)

    def value_info(self, prefix, name, elem, shape):
        dims = b""
        for i, d in enumerate(shape):
            body = self.v("%s.dim%d" % (prefix, i), 1, d) if isinstance(d, int) else s(2, d)
            dims += ld(1, body)
        tensor_type = self.v(prefix + ".elem_type", 1, elem) + ld(2, dims)
        return s(1, name) + ld(2, ld(1, tensor_type))

    def model(self, location, packed):
        inline = (self.dims("w.dims", 1, [2, 3], packed) + self.v("w.data_type", 2, 1) +
                  s(8, "w") + ld(9, bytes(24)))
        ext = (self.dims("e.dims", 1, [4], packed) + self.v("e.data_type", 2, 1) + s(8, "e") +
               ld(13, s(1, "location") + s(2, location)) + ld(13, s(1, "offset") + s(2, "0")) +
               ld(13, s(1, "length") + s(2, "16")) + self.v("e.data_location", 14, 1))
        node = s(1, "x") + s(2, "y") + s(4, "Relu")
        graph = (ld(1, node) + s(2, "g") + ld(5, inline) + ld(5, ext) +
                 ld(11, self.value_info("in", "x", 1, [2, "n"])) +
                 ld(12, self.value_info("out", "y", 1, [2, "n"])))
        opset = s(1, "") + self.v("opset.version", 2, 13)
        return (self.v("ir_version", 1, 8) + self.v("model_version", 5, 3) + ld(7, graph) +
                ld(8, opset))


# field name -> (declared type, plain value(s))
FIELDS = {
    "ir_version": ("int64", [8]), "model_version": ("int64", [3]),
    "opset.version": ("int64", [13]),
    "w.dims": ("int64", [2, 3]), "e.dims": ("int64", [4]),
    "w.data_type": ("int32", [1]), "e.data_type": ("int32", [1]),
    "e.data_location": ("enum", [1]),
    "in.elem_type": ("int32", [1]), "out.elem_type": ("int32", [1]),
    "in.dim0": ("int64", [2]), "out.dim0": ("int64", [2]),
}


def same_width(rng, kind, v):
    """An encoding of v, or of a value protobuf reads as v for this declared type."""
    choice = rng.randrange(4)
    if kind in ("int32", "enum") and choice < 2:
        high = rng.choice([1, 0xFFFFFFFF, rng.randrange(1, 1 << 32)])
        return varint((high << 32 | v) & U64, pad=rng.randrange(2) if high < 1 << 28 else 0)
    if choice == 2:
        return varint(v, tenth=rng.choice([0, 0x02, 0x40, 0x7E]))
    return varint(v, pad=rng.randrange(0, 10 - len(varint(v)) + 1))


def mutant(rng):
    """(plan, note, packed): which fields get which encodings."""
    plan, notes = {}, []
    for name in rng.sample(sorted(FIELDS), rng.randrange(1, 4)):
        kind, values = FIELDS[name]
        plan[name] = [same_width(rng, kind, v) for v in values]
        notes.append(name)
    if rng.randrange(3) == 0:
        # values the closed enum does not name, alone or after a valid one
        bad = rng.choice([2, 5, 0xFFFFFFFF, U64, 1 << 32 | 7, 1 << 32])
        seq = rng.choice([[bad], [1, bad], [bad, 1], [0, bad], [1, 0]])
        plan["e.data_location"] = [varint(x) for x in seq]
        notes.append("data_location %s" % [hex(x) for x in seq])
    if rng.randrange(40) == 0:
        plan["e.data_location"] = [b"\x81" * 10 + b"\x00"]  # 11 bytes: malformed
        notes.append("11-byte varint")
    return plan, ", ".join(notes), rng.randrange(2) == 0


def onnx_reading(data):
    try:
        m = onnx.load_model_from_string(data)
    except Exception:  # DecodeError: what a loader refuses
        return None
    g = m.graph

    def vi(v):
        tt = v.type.tensor_type
        return {"name": v.name, "elem_type": TensorProto.DataType.Name(tt.elem_type),
                "shape": [d.dim_value if d.HasField("dim_value") else d.dim_param
                          for d in tt.shape.dim]}
    return {
        "ir_version": m.ir_version, "model_version": m.model_version,
        "opset_import": [{"domain": o.domain, "version": o.version} for o in m.opset_import],
        "inputs": [vi(v) for v in g.input], "outputs": [vi(v) for v in g.output],
        "tensors": [{"name": t.name, "dtype": TensorProto.DataType.Name(t.data_type),
                     "shape": list(t.dims),
                     "stored": "external" if t.data_location == TensorProto.EXTERNAL
                     else "inline"} for t in g.initializer],
    }


def stguard_reading(cli, path):
    p = subprocess.run([cli, "inspect", "--format", "json", path], capture_output=True)
    if p.returncode != 0:
        return None
    d = json.loads(p.stdout)
    r = {k: d[k] for k in ("ir_version", "model_version", "opset_import", "inputs", "outputs")}
    r["tensors"] = [{k: t[k] for k in ("name", "dtype", "shape", "stored")}
                    for t in d["tensors"]]
    return r


def scan_codes(cli, path):
    p = subprocess.run([cli, "scan", "--format", "json", path], capture_output=True)
    out = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return {f["code"] for rec in out for f in rec.get("findings", [])}


def main():
    cli, out, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    inside = os.path.join(out, "m")
    os.makedirs(inside, exist_ok=True)
    with open(os.path.join(inside, "w.bin"), "wb") as f:
        f.write(bytes(16))
    path = os.path.join(inside, "model.onnx")
    bad = 0
    stats = {"parsed": 0, "refused": 0, "external": 0, "not external": 0}
    for i in range(count):
        plan, note, packed = mutant(rng) if i > 0 else ({}, "plain", False)
        data = Writer(plan).model("w.bin", packed)
        with open(path, "wb") as f:
            f.write(data)
        want, got = onnx_reading(data), stguard_reading(cli, path)
        if want != got:
            bad += 1
            print("FAIL mutant %d (%s, packed %s):\n  onnx    %s\n  stguard %s"
                  % (i, note, packed, want, got))
            continue
        stats["parsed" if want is not None else "refused"] += 1
        if want is None:
            continue
        external = want["tensors"][1]["stored"] == "external"
        stats["external" if external else "not external"] += 1
        # the same encodings with a location that leaves the folder
        with open(path, "wb") as f:
            f.write(Writer(plan).model("../outside/secret.bin", packed))
        unsafe = "onnx_external_path_unsafe" in scan_codes(cli, path)
        if unsafe != external:
            bad += 1
            print("FAIL mutant %d (%s): onnx reads data_location %s, stguard scan %s"
                  % (i, note, "EXTERNAL" if external else "DEFAULT",
                     "unsafe" if unsafe else "clean of the traversal"))
    print("%d mutants (seed %d): %s; %d disagreements" % (count, seed, stats, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
