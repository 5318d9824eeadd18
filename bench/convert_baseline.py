#!/usr/bin/python3
"""Baseline of bench/run_convert.sh: what the usual converters do. torch.load (it unpickles:
weights_only=True here, which torch 1.13 can do for a plain state_dict) and then a Python
safetensors writer of the same bytes: the header as the reference writes it (__metadata__
{"format":"pt"}, entries by element size then name, padded to 8), each tensor's bytes
(.contiguous(), viewed as uint8, written with one write per tensor). No safetensors package is
needed (Debian 12 has none).

usage: convert_baseline.py INPUT OUTPUT
"""
import json
import struct
import sys

import torch

DT = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
      torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
      torch.uint8: "U8", torch.bool: "BOOL"}
sd = torch.load(sys.argv[1], weights_only=True)
items = sorted(sd.items(), key=lambda kv: (-kv[1].element_size(), kv[0].encode()))
header = {"__metadata__": {"format": "pt"}}
at = 0
for name, t in items:
    n = t.numel() * t.element_size()
    header[name] = {"dtype": DT[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + n]}
    at += n
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<Q", len(h)))
    f.write(h)
    for _, t in items:
        f.write(t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
