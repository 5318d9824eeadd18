#!/usr/bin/env python3
"""Generate a realistic safetensors file for the header benchmarks (python3 stdlib only).

The file looks like what the reference writer (huggingface/safetensors) produces for a
Llama-style checkpoint:
  * tensor names model.embed_tokens.weight, model.layers.{i}.self_attn.{q,k,v,o}_proj.weight,
    model.layers.{i}.mlp.{gate,up,down}_proj.weight, model.layers.{i}.input_layernorm.weight,
    model.layers.{i}.post_attention_layernorm.weight, model.norm.weight, lm_head.weight
    (or Meta's layers.{i}.attention.wq.weight ... when those would not fit under the cap);
  * dtypes BF16 (projections), F16 (embedding and head), F32 (norms), 2-D and 1-D shapes;
  * entries ordered as the writer orders them (dtype alignment descending, then name), with
    contiguous data offsets from 0 in that order;
  * compact JSON, `__metadata__` {"format":"pt"} first, fields dtype, shape, data_offsets;
  * the header padded with spaces so the data section starts at a multiple of 8.

The data section is consistent with the offsets but is not written: the file is extended with
truncate(), so on a file system with sparse files it costs no disk blocks however large the
model claims to be. Readers should map the file (bench_header.c does) rather than read it.

Usage: gen_header.py N OUT [--names hf|meta] [--hidden H] [--header-only] [--tiny]
  N            exact number of tensors (the last layer is cut short when needed)
  --names      naming scheme (default: hf when the header fits under the reference's
               100,000,000-byte cap, else meta)
  --hidden H   model width (default 512, narrowed only if the header would not fit)
  --header-only  write only the 8-byte length and the header to OUT (no data section)
  --tiny       every tensor BF16 of shape [1,1] (two bytes each): the same names, the most
               entries per header byte a realistic writer produces
Prints one line: tensors, header bytes, data bytes, file bytes.
"""

import argparse
import json
import os
import struct
import sys

HEADER_CAP = 100_000_000
DTYPE_BYTES = {"F32": 4, "BF16": 2, "F16": 2}


# Two real naming schemes for the same Llama layout: Hugging Face transformers' and Meta's
# original one (also used by Mistral's consolidated.safetensors). The shorter Meta names let
# 900,000 tensors fit under the reference's 100,000,000-byte header cap.
NAMES = {
    "hf": {
        "embed": "model.embed_tokens.weight", "layer": "model.layers.%d.",
        "q": "self_attn.q_proj.weight", "k": "self_attn.k_proj.weight",
        "v": "self_attn.v_proj.weight", "o": "self_attn.o_proj.weight",
        "gate": "mlp.gate_proj.weight", "up": "mlp.up_proj.weight",
        "down": "mlp.down_proj.weight", "norm1": "input_layernorm.weight",
        "norm2": "post_attention_layernorm.weight", "norm": "model.norm.weight",
        "head": "lm_head.weight",
    },
    "meta": {
        "embed": "tok_embeddings.weight", "layer": "layers.%d.",
        "q": "attention.wq.weight", "k": "attention.wk.weight",
        "v": "attention.wv.weight", "o": "attention.wo.weight",
        "gate": "feed_forward.w1.weight", "up": "feed_forward.w3.weight",
        "down": "feed_forward.w2.weight", "norm1": "attention_norm.weight",
        "norm2": "ffn_norm.weight", "norm": "norm.weight", "head": "output.weight",
    },
}


def llama_tensors(count, hidden, scheme="hf"):
    """Returns `count` (name, dtype, shape) triples in model order (the last layer may be cut
    short; the final norm and head are kept when count >= 3)."""
    names = NAMES[scheme]
    intermediate = hidden * 11 // 4  # about Llama's ratio, kept a multiple of 8
    intermediate -= intermediate % 8
    vocab = 32000
    per_layer = [
        ("q", "BF16", [hidden, hidden]), ("k", "BF16", [hidden, hidden]),
        ("v", "BF16", [hidden, hidden]), ("o", "BF16", [hidden, hidden]),
        ("gate", "BF16", [intermediate, hidden]), ("up", "BF16", [intermediate, hidden]),
        ("down", "BF16", [hidden, intermediate]),
        ("norm1", "F32", [hidden]), ("norm2", "F32", [hidden]),
    ]
    out = [(names["embed"], "F16", [vocab, hidden])]
    tail = [(names["norm"], "F32", [hidden]), (names["head"], "F16", [vocab, hidden])]
    if count < 3:
        tail = []
    layer = 0
    while len(out) < count - len(tail):
        prefix = names["layer"] % layer
        for kind, dtype, shape in per_layer:
            if len(out) >= count - len(tail):
                break
            out.append((prefix + names[kind], dtype, shape))
        layer += 1
    return (out + tail)[:count]


def element_count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def build_header(tensors):
    """Returns (header bytes padded to 8, data section length), as the reference writer does."""
    # The writer sorts by dtype alignment (descending), then by name, and lays data out in that
    # order; its JSON lists the tensors in the same (offset) order after __metadata__.
    ordered = sorted(tensors, key=lambda t: (-DTYPE_BYTES[t[1]], t[0]))
    parts = ['{"__metadata__":{"format":"pt"}']
    offset = 0
    for name, dtype, shape in ordered:
        size = element_count(shape) * DTYPE_BYTES[dtype]
        parts.append(',%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
                     % (json.dumps(name), dtype, ",".join(str(d) for d in shape),
                        offset, offset + size))
        offset += size
    parts.append("}")
    header = "".join(parts).encode("utf-8")
    header += b" " * ((8 - len(header) % 8) % 8)
    return header, offset


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("count", type=int)
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=0)
    ap.add_argument("--names", choices=sorted(NAMES), default=None)
    ap.add_argument("--header-only", action="store_true")
    ap.add_argument("--tiny", action="store_true")
    args = ap.parse_args()
    if args.count < 1:
        ap.error("N must be at least 1")

    # Hugging Face names at width 512 when the header fits under the cap, else Meta's names,
    # narrowing the model if even those do not fit.
    widths = [args.hidden] if args.hidden else [512, 256, 128, 64]
    choices = [(s, w) for s in ([args.names] if args.names else ["hf", "meta"]) for w in widths]
    for scheme, hidden in choices:
        tensors = llama_tensors(args.count, hidden, scheme)
        if args.tiny:
            tensors = [(name, "BF16", [1, 1]) for name, _, _ in tensors]
        header, data_len = build_header(tensors)
        if len(header) <= HEADER_CAP:
            break
    if len(header) > HEADER_CAP:
        sys.exit("header of %d bytes exceeds the reference's cap of %d" % (len(header), HEADER_CAP))

    with open(args.out, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        if not args.header_only:
            # Sparse data section: the bytes read as zeros and occupy no blocks.
            f.truncate(8 + len(header) + data_len)
    size = os.path.getsize(args.out)
    print("tensors=%d names=%s hidden=%d header_bytes=%d data_bytes=%d file_bytes=%d"
          % (args.count, scheme, hidden, len(header), data_len if not args.header_only else 0, size))


if __name__ == "__main__":
    main()
