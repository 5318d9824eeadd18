"""The differential of stguard's Flax rules against flax's reader (msgpack.unpackb with flax's
extension hook, tests/flax/flaxpack.py) over seeded mutations of writer output.

python3 flax_differential.py gen DIR        writes the mutants DIR/m_NNNN.msgpack
python3 flax_differential.py judge DIR SCAN TREE
    SCAN: stguard scan --format json over DIR; TREE: tests/support/flax_tree over the mutants.
    Fails when stguard calls a file ok that flax's reader refuses, or ok with another tree of
    arrays (paths, dtype names, shapes) than the reader returns; or when the reader refuses a
    file stguard calls ok (the same rule read the other way: a refused file is never ok)."""
import json
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flaxpack  # noqa: E402

SEED = 20261207
MUTANTS = 1500
INTERESTING = [0x00, 0x01, 0x7f, 0x80, 0x90, 0xa0, 0xc0, 0xc1, 0xc4, 0xc6, 0xc9, 0xca, 0xd4,
               0xd8, 0xd9, 0xdc, 0xde, 0xdf, 0xe0, 0xff]


def bases():
    rng = np.random.default_rng(SEED)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    yield flaxpack.serialize({"params": {"Dense_0": {"kernel": f32(3, 2), "bias": f32(2)},
                                         "LayerNorm": {"scale": f32(2)}}})
    yield flaxpack.serialize({"step": 7, "lr": np.float32(0.5), "z": complex(1.0, 2.0),
                              "e": np.zeros((0, 3), np.int8), "s": [np.arange(3), "adam", None],
                              "bf": {"k": flaxpack.BF16(np.arange(4).reshape(2, 2))}})
    yield flaxpack.serialize({"a": {"b": {"c": {"d": np.ones((2, 2, 2), np.float16)}}},
                              "t": True, "u": np.uint64(2**63)})
    # a chunked leaf, as flax writes one over 2^30 bytes (chunks of 4 elements here)
    yield flaxpack.serialize({"params": {"emb": flaxpack.chunk(f32(2, 5), 4), "b": f32(3)}})


def mutate(data, r):
    b = bytearray(data)
    for _ in range(r.choice((1, 1, 1, 2, 3))):
        kind = r.randrange(6)
        at = r.randrange(len(b)) if b else 0
        if kind == 0 and b:
            b[at] = r.randrange(256)
        elif kind == 1 and b:
            b[at] = r.choice(INTERESTING)
        elif kind == 2:
            del b[r.randrange(len(b) + 1):]
        elif kind == 3:
            b.insert(at, r.randrange(256))
        elif kind == 4 and b:
            del b[at]
        elif b:
            b[at] ^= 1 << r.randrange(8)
    return bytes(b)


def gen(out):
    r = random.Random(SEED)
    base = list(bases())
    for i, data in enumerate(base):
        with open(os.path.join(out, "m_base%d.msgpack" % i), "wb") as f:
            f.write(data)
    for i in range(MUTANTS):
        with open(os.path.join(out, "m_%04d.msgpack" % i), "wb") as f:
            f.write(mutate(r.choice(base), r))


def key_bytes(k):
    if isinstance(k, str):
        return k.encode("utf-8", "surrogatepass")
    if isinstance(k, bytes):
        return k
    if isinstance(k, int) and not isinstance(k, bool) and k >= 0:
        return str(k).encode()
    return b"?"


def reader_leaves(tree, path=()):
    """(path hex, dtype hex, shape) of every array leaf the reader returns, in file order."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from reader_leaves(v, path + (key_bytes(k),))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from reader_leaves(v, path + (str(i).encode(),))
    elif isinstance(tree, tuple) and len(tree) == 3 and tree[0] in ("array", "scalar"):
        shape = list(np.shape(tree[2])) if tree[0] == "array" else None
        yield [b"/".join(path).hex(), tree[1].hex(), shape]


def judge(out, scan_path, tree_path):
    verdicts = {}
    for rec in map(json.loads, open(scan_path)):
        if rec.get("type") == "file":
            verdicts[os.path.basename(rec["path"])] = rec
    trees = {os.path.basename(t["file"]): t for t in map(json.loads, open(tree_path))}
    bad, table = [], {}
    for name in sorted(os.listdir(out)):
        data = open(os.path.join(out, name), "rb").read()
        try:
            flaxpack.restore(data)
            tree, err = flaxpack.unpack(data), None  # the leaves as stored, chunks apart
        except Exception as e:  # every refusal of the reader counts
            tree, err = None, "%s: %s" % (type(e).__name__, e)
        rec = verdicts.get(name)
        if rec is None:
            bad.append("%s: not scanned" % name)
            continue
        ok = rec["verdict"] == "ok"
        table[(ok, err is None)] = table.get((ok, err is None), 0) + 1
        if ok and err is not None:
            bad.append("%s: stguard ok, flax's reader refuses it (%s)" % (name, err))
        elif ok:
            want = list(reader_leaves(tree))
            got = trees[name]["leaves"]
            # a scalar leaf's shape is what its payload said: compare the path and dtype only
            got = [g if w[2] is not None else [g[0], g[1], None] for g, w in zip(got, want)] \
                if len(got) == len(want) else got
            if got != want:
                bad.append("%s: stguard ok, other leaves: %r != %r" % (name, got, want))
        if name.startswith("m_base") and not ok:
            bad.append("%s: writer output not ok: %r" % (name, rec["findings"]))
    for b in bad[:40]:
        print("FAIL " + b)
    print("stguard ok / reader ok: %d, ok / refuses: %d, not ok / reader ok: %d, "
          "not ok / refuses: %d; %d failures" % (
              table.get((True, True), 0), table.get((True, False), 0),
              table.get((False, True), 0), table.get((False, False), 0), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        sys.exit(judge(sys.argv[2], sys.argv[3], sys.argv[4]))
