#!/usr/bin/python3
"""Generate torch.save() checkpoints for the pickle benchmarks (needs Debian's python3-torch).

Usage:
  gen_pickle.py OUT.pt [--tensors N] [--big K --big-bytes BYTES] [--pickle OUT.pkl]

Writes torch.save(state_dict, OUT.pt) in the default zip format, where state_dict holds N small
tensors named like a Llama checkpoint (model.layers.{i}.self_attn.q_proj.weight ..., BF16 2-D
weights and F32 1-D norms of a few elements each, so the file stays small), plus K zero tensors
of BYTES bytes each (F32) named extra.{j}.weight. Two files made with the same N and K but
different BYTES have pickles of the same length and structure (only the sizes inside differ),
so they separate the cost of the pickle from the cost of the file's size.

--pickle OUT.pkl also extracts the archive's data.pkl member (the pure pickle stream).
Prints one line: file bytes, data.pkl bytes, tensors.
"""

import argparse
import os
import zipfile

import torch

LAYER_PARTS = [
    ("self_attn.q_proj.weight", torch.bfloat16, (8, 8)),
    ("self_attn.k_proj.weight", torch.bfloat16, (8, 8)),
    ("self_attn.v_proj.weight", torch.bfloat16, (8, 8)),
    ("self_attn.o_proj.weight", torch.bfloat16, (8, 8)),
    ("mlp.gate_proj.weight", torch.bfloat16, (22, 8)),
    ("mlp.up_proj.weight", torch.bfloat16, (22, 8)),
    ("mlp.down_proj.weight", torch.bfloat16, (8, 22)),
    ("input_layernorm.weight", torch.float32, (8,)),
    ("post_attention_layernorm.weight", torch.float32, (8,)),
]


def state_dict(count, big, big_bytes):
    sd = {"model.embed_tokens.weight": torch.zeros(64, 8, dtype=torch.bfloat16)}
    layer = 0
    while len(sd) < count - 2:
        for part, dtype, shape in LAYER_PARTS:
            if len(sd) >= count - 2:
                break
            sd["model.layers.%d.%s" % (layer, part)] = torch.zeros(shape, dtype=dtype)
        layer += 1
    sd["model.norm.weight"] = torch.zeros(8, dtype=torch.float32)
    sd["lm_head.weight"] = torch.zeros(64, 8, dtype=torch.bfloat16)
    for j in range(big):
        sd["extra.%d.weight" % j] = torch.zeros(big_bytes // 4, dtype=torch.float32)
    return sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tensors", type=int, default=20000)
    ap.add_argument("--big", type=int, default=0)
    ap.add_argument("--big-bytes", type=int, default=4096)
    ap.add_argument("--pickle")
    args = ap.parse_args()
    if args.tensors < 3:
        ap.error("--tensors must be at least 3")

    sd = state_dict(args.tensors, args.big, args.big_bytes)
    torch.save(sd, args.out)
    del sd
    with zipfile.ZipFile(args.out) as z:
        member = next(n for n in z.namelist() if n.endswith("/data.pkl"))
        pkl = z.read(member)
    if args.pickle:
        with open(args.pickle, "wb") as f:
            f.write(pkl)
    print("file_bytes=%d pickle_bytes=%d tensors=%d"
          % (os.path.getsize(args.out), len(pkl), args.tensors + args.big))


if __name__ == "__main__":
    main()
