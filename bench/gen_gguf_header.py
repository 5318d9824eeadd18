#!/usr/bin/env python3
"""Writes a sparse GGUF file for bench/bench_gguf.c: a header as large as a real model's, the
data section a hole (the validator never reads it). Python standard library only.

    gen_gguf_header.py llama70b OUT   a Llama-3-70B-like Q4_K_M header: 80 blocks of 9 tensors
                                      plus token_embd, output_norm and output (723 tensors), the
                                      128,256-token vocabulary (tokens, token_type) and 280,147
                                      BPE merges, the usual llama.* keys
    gen_gguf_header.py synthetic N OUT  N F32 tensors of 256 elements and a short metadata
"""
import os
import struct
import sys

U32, F32, STR, ARR, I32 = 4, 6, 8, 9, 5
Q4_K, Q6_K, F32T = 12, 14, 0
BLOCK = {F32T: (1, 4), Q4_K: (256, 144), Q6_K: (256, 210)}


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, raw):
    return gstr(key) + struct.pack("<I", vtype) + raw


def arr(etype, items):
    if etype == STR:
        body = b"".join(gstr(x) for x in items)
    else:
        body = struct.pack("<%d%s" % (len(items), "i" if etype == I32 else "f"), *items)
    return struct.pack("<IQ", etype, len(items)) + body


def nbytes(dims, t):
    blk, size = BLOCK[t]
    n = 1
    for d in dims[1:]:
        n *= d
    return dims[0] // blk * size * n


def write(path, kvs, tensors, align=32):
    infos, off = b"", 0
    for name, dims, t in tensors:
        infos += gstr(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", t, off)
        off += nbytes(dims, t)
        off += (-off) % align
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + infos
    head += b"\0" * ((-len(head)) % align)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + off)
    return len(head), off


def llama70b(path):
    vocab = ["<|tok_%d|>" % i if i >= 128000 else "tok%06d" % i for i in range(128256)]
    merges = ["t%d o%d" % (i % 977, i) for i in range(280147)]
    kvs = [kv("general.architecture", STR, gstr("llama")),
           kv("general.name", STR, gstr("Meta-Llama-3-70B-Instruct")),
           kv("llama.block_count", U32, struct.pack("<I", 80)),
           kv("llama.context_length", U32, struct.pack("<I", 8192)),
           kv("llama.embedding_length", U32, struct.pack("<I", 8192)),
           kv("llama.feed_forward_length", U32, struct.pack("<I", 28672)),
           kv("llama.attention.head_count", U32, struct.pack("<I", 64)),
           kv("llama.attention.head_count_kv", U32, struct.pack("<I", 8)),
           kv("llama.rope.freq_base", F32, struct.pack("<f", 500000.0)),
           kv("general.file_type", U32, struct.pack("<I", 15)),
           kv("tokenizer.ggml.model", STR, gstr("gpt2")),
           kv("tokenizer.ggml.tokens", ARR, arr(STR, vocab)),
           kv("tokenizer.ggml.token_type", ARR, arr(I32, [1] * len(vocab))),
           kv("tokenizer.ggml.merges", ARR, arr(STR, merges)),
           kv("tokenizer.ggml.bos_token_id", U32, struct.pack("<I", 128000))]
    h, ff, kvd, nv = 8192, 28672, 1024, len(vocab)
    tensors = [("token_embd.weight", [h, nv], Q4_K)]
    for b in range(80):
        p = "blk.%d." % b
        tensors += [(p + "attn_norm.weight", [h], F32T), (p + "attn_q.weight", [h, h], Q4_K),
                    (p + "attn_k.weight", [h, kvd], Q4_K), (p + "attn_v.weight", [h, kvd], Q6_K),
                    (p + "attn_output.weight", [h, h], Q4_K), (p + "ffn_norm.weight", [h], F32T),
                    (p + "ffn_gate.weight", [h, ff], Q4_K), (p + "ffn_up.weight", [h, ff], Q4_K),
                    (p + "ffn_down.weight", [ff, h], Q6_K)]
    tensors += [("output_norm.weight", [h], F32T), ("output.weight", [h, nv], Q6_K)]
    return write(path, kvs, tensors)


def synthetic(n, path):
    kvs = [kv("general.architecture", STR, gstr("synthetic"))]
    tensors = [("t.%07d.weight" % i, [256], F32T) for i in range(n)]
    return write(path, kvs, tensors)


def main():
    if sys.argv[1] == "llama70b":
        head, data = llama70b(sys.argv[2])
    else:
        head, data = synthetic(int(sys.argv[2]), sys.argv[3])
    print("header %d bytes, data %d bytes" % (head, data))


if __name__ == "__main__":
    main()
