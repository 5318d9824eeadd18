"""Benign Flax checkpoints written as flax.serialization writes them (tests/flax/flaxpack.py
cites the source): python3 gen_flax.py OUTDIR (and --data DIR: the files of tests/data/flax/). Each file is also read back with the same
reader flax uses (msgpack.unpackb with flax's extension hook) and must give the saved tree."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flaxpack  # noqa: E402


def bert_like(rng, layers=2, hidden=16, vocab=50):
    """The nested parameter dict transformers' FlaxBertModel saves (names as its modules)."""
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    p = {"embeddings": {
        "word_embeddings": {"embedding": f32(vocab, hidden)},
        "position_embeddings": {"embedding": f32(32, hidden)},
        "token_type_embeddings": {"embedding": f32(2, hidden)},
        "LayerNorm": {"scale": f32(hidden), "bias": f32(hidden)}}}
    enc = {}
    for i in range(layers):
        enc[str(i)] = {
            "attention": {"self": {n: {"kernel": f32(hidden, hidden), "bias": f32(hidden)}
                                   for n in ("query", "key", "value")},
                          "output": {"dense": {"kernel": f32(hidden, hidden), "bias": f32(hidden)},
                                     "LayerNorm": {"scale": f32(hidden), "bias": f32(hidden)}}},
            "intermediate": {"dense": {"kernel": f32(hidden, 4 * hidden), "bias": f32(4 * hidden)}},
            "output": {"dense": {"kernel": f32(4 * hidden, hidden), "bias": f32(hidden)},
                       "LayerNorm": {"scale": f32(hidden), "bias": f32(hidden)}}}
    p["encoder"] = {"layer": enc}
    p["pooler"] = {"dense": {"kernel": f32(hidden, hidden), "bias": f32(hidden)}}
    return p


def train_state(rng):
    """An optimizer state of every leaf kind the writer packs: numpy scalars (ext 3), a complex
    (ext 2), Python ints, floats, bools, None, strings, lists, 0-d and empty arrays, every
    numeric dtype, and JAX's bfloat16."""
    arrays = {dt: rng.integers(0, 100, size=(3, 2)).astype(dt) for dt in (
        "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
        "float16", "float32", "float64", "complex64", "complex128")}
    return {"step": 1200, "params": {"w": np.arange(6, dtype=np.float32).reshape(2, 3)},
            "opt_state": [{"count": np.int32(7), "mu": {"w": np.zeros((2, 3), np.float32)}},
                          {"lr": np.float32(1e-3), "b1": 0.9, "nesterov": False, "name": "adam",
                           "extra": None}],
            "zero_d": np.array(2.5), "empty": np.zeros((0, 4), np.float32),
            "phase": complex(0.5, -1.0), "scalar64": np.float64(3.0),
            "dtypes": arrays,
            "bf16": {"kernel": flaxpack.BF16(rng.integers(0, 65535, size=(4, 4)))}}


def data_fixtures(out):
    """tests/data/flax/ (committed; `python3 gen_flax.py --data tests/data/flax`): a small
    training state that must be ok, and a bfloat16 leaf whose shape says (2, 4) over the 12
    bytes of (2, 3): flax_size_mismatch."""
    rng = np.random.default_rng(20261207)
    tree = {"params": {"Dense_0": {"kernel": rng.standard_normal((4, 3)).astype(np.float32),
                                   "bias": np.zeros(3, np.float32)}},
            "step": np.int32(12), "phase": complex(1.0, -0.5)}
    data = flaxpack.serialize(tree)
    with open(os.path.join(out, "ok-train_state.msgpack"), "wb") as f:
        f.write(data)
    short = flaxpack.serialize({"w": flaxpack.BF16(np.arange(6).reshape(2, 3))})
    # the payload's shape says (2, 3) of bfloat16 (12 bytes); make it say (2, 4)
    bad = short.replace(bytes([0x92, 0x02, 0x03]), bytes([0x92, 0x02, 0x04]), 1)
    assert bad != short
    with open(os.path.join(out, "bad-flax_size_mismatch.msgpack"), "wb") as f:
        f.write(bad)


def main(out):
    rng = np.random.default_rng(20261207)
    trees = {
        "flax_model.msgpack": {"params": bert_like(rng)},
        "train_state.msgpack": train_state(rng),
        # the same bytes under names that say nothing: recognised by content
        "checkpoint_0": {"params": bert_like(rng, layers=1)},
        "shard-00001-of-00002.msgpack": {"params": {"Dense_%d" % i: {
            "kernel": rng.standard_normal((64, 64)).astype(np.float32),
            "bias": np.zeros(64, np.float32)} for i in range(40)}},
    }
    for name, tree in trees.items():
        data = flaxpack.serialize(tree)
        back = flaxpack.restore(data)
        assert isinstance(back, dict) and list(back) == list(tree), name
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("\n".join(sorted(trees)))


if __name__ == "__main__":
    if sys.argv[1] == "--data":
        data_fixtures(sys.argv[2])
    else:
        main(sys.argv[1])
