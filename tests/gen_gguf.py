#!/usr/bin/env python3
"""Writes GGUF fixtures to the specification (ggml docs/gguf.md), with no GGUF library.

    gen_gguf.py OUT_DIR

ok-*.gguf are valid files (every ggml type, several alignments, both versions, every value
type, a vocabulary); bad-<code>-*.gguf each break one rule and must carry finding <code>
(tests/test_gguf.c reads them). The block sizes below are the ones gguf-py lists for each
ggml type (elements per block, bytes per block)."""
import os
import struct
import sys

GGML = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18), 42: ("Q2_0", 64, 18),
}

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
       BOOL: "<B", U64: "<Q", I64: "<q", F64: "<d"}


def gstr(s):
    b = s if isinstance(s, bytes) else s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def value(vtype, v):
    if vtype == STR:
        return gstr(v)
    if vtype == ARR:
        etype, items = v
        out = struct.pack("<IQ", etype, len(items))
        return out + b"".join(value(etype, x) for x in items)
    return struct.pack(FMT[vtype], v)


def kv(key, vtype, v):
    return gstr(key) + struct.pack("<I", vtype) + value(vtype, v)


def pad_to(n, a):
    return (a - n % a) % a


def nbytes(dims, t):
    _, blk, size = GGML[t]
    ne = list(dims) + [1] * (4 - len(dims))
    n = 1
    for d in ne[1:]:
        n *= d
    return ne[0] // blk * size * n


def gguf(kvs=(), tensors=(), version=3, alignment=None, trailing=b"", override=None,
         writer_pad=False):
    """tensors: (name, dims, type[, offset]); offsets default to the aligned running end.
    writer_pad: pad after the tensor infos even without tensors, as ggml's writer does
    (gguf_write_out in src/gguf.cpp pads to the alignment whatever the tensor count; its
    reader seeks past that padding only when there are tensors)."""
    a = alignment if alignment is not None else 32
    meta = list(kvs)
    if alignment is not None:
        meta.insert(0, kv("general.alignment", U32, alignment))
    infos, data, off = b"", b"", 0
    for t in tensors:
        name, dims, typ = t[0], t[1], t[2]
        size = nbytes(dims, typ) if typ in GGML else 0
        if size > 1 << 20:  # a header that lies about its size: no data for it
            size = 0
        o = t[3] if len(t) > 3 else off
        infos += gstr(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", typ, o)
        chunk = bytes((i * 7 + 1) & 0xFF for i in range(size))
        data += chunk + b"\0" * pad_to(len(chunk), a)
        off += size + pad_to(size, a)
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(meta))
    body = head + b"".join(meta) + infos
    if tensors or writer_pad:
        body += b"\0" * pad_to(len(body), a)
    out = body + data + trailing
    if override:
        out = override(out)
    return out


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {}
    arch = kv("general.architecture", STR, "llama")
    for t, (name, blk, _) in GGML.items():
        files["ok-type-%02d-%s" % (t, name.lower())] = gguf(
            [arch], [("blk.0.w", [2 * blk, 3], t), ("blk.0.b", [blk], t)])
    for a in (8, 16, 64, 128, 4096):
        files["ok-align-%d" % a] = gguf([arch], [("a", [3], 0), ("b", [5, 2], 1)], alignment=a)
    files["ok-version-2"] = gguf([arch], [("a", [4], 0)], version=2)
    files["ok-empty"] = gguf()
    files["ok-metadata-only"] = gguf([arch, kv("general.name", STR, "tiny")])
    files["ok-4d"] = gguf([arch], [("t", [2, 3, 4, 5], 0)])
    files["ok-scalar"] = gguf([arch], [("s", [], 0)])
    every = [kv("v.u8", U8, 1), kv("v.i8", I8, -1), kv("v.u16", U16, 2), kv("v.i16", I16, -2),
             kv("v.u32", U32, 3), kv("v.i32", I32, -3), kv("v.f32", F32, 0.5),
             kv("v.bool", BOOL, 1), kv("v.str", STR, "h\u00e9llo"), kv("v.u64", U64, 4),
             kv("v.i64", I64, -4), kv("v.f64", F64, 0.25),
             kv("v.arr_u8", ARR, (U8, [1, 2, 3])), kv("v.arr_str", ARR, (STR, ["a", "", "c"])),
             kv("v.arr_empty", ARR, (F64, []))]
    files["ok-every-value-type"] = gguf(every, [("a", [4], 0)])
    vocab = ["<unk>", "<s>", "</s>"] + ["tok%d" % i for i in range(500)]
    files["ok-vocab"] = gguf([arch, kv("tokenizer.ggml.model", STR, "llama"),
                              kv("tokenizer.ggml.tokens", ARR, (STR, vocab)),
                              kv("tokenizer.ggml.scores", ARR, (F32, [0.0] * len(vocab))),
                              kv("tokenizer.ggml.token_type", ARR, (I32, [1] * len(vocab)))],
                             [("token_embd.weight", [64, len(vocab)], 8)])

    # what writers emit for a model without tensors (a vocabulary-only conversion): the
    # metadata padded to the alignment
    files["ok-writer-metadata-only"] = gguf([arch, kv("general.name", STR, "tiny")],
                                            writer_pad=True)
    files["ok-writer-vocab-only"] = gguf(
        [arch, kv("tokenizer.ggml.model", STR, "llama"),
         kv("tokenizer.ggml.tokens", ARR, (STR, vocab[:40])),
         kv("tokenizer.ggml.scores", ARR, (F32, [0.0] * 40)),
         kv("tokenizer.ggml.token_type", ARR, (I32, [1] * 40))], writer_pad=True)
    files["ok-align-2mib"] = gguf([arch], alignment=1 << 21)  # any power of two (no tensors)

    def at(pos, b):
        return lambda d: d[:pos] + b + d[pos + len(b):]

    good = gguf([arch], [("a", [8], 0)])
    files["bad-gguf_header_invalid-magic"] = b"GGUX" + good[4:]
    files["bad-gguf_header_invalid-version4"] = gguf([arch], [("a", [8], 0)], version=4)
    files["bad-gguf_header_invalid-bigendian"] = at(4, struct.pack(">I", 3))(good)
    files["bad-gguf_header_invalid-short"] = good[:20]
    files["bad-gguf_version_obsolete-v1"] = b"GGUF" + struct.pack("<III", 1, 0, 0)
    files["bad-gguf_count_invalid-tensors"] = at(8, struct.pack("<Q", 1 << 50))(good)
    files["bad-gguf_count_invalid-kv"] = at(16, struct.pack("<Q", 1 << 63))(good)
    files["bad-gguf_truncated-cut"] = good[:102]  # the tensor infos, without padding or data
    files["bad-gguf_string_invalid-keylen"] = at(24, struct.pack("<Q", 1 << 40))(good)
    files["bad-gguf_key_invalid-empty"] = gguf([kv("", U8, 0)])
    files["bad-gguf_key_duplicate"] = gguf([arch, kv("general.architecture", STR, "gpt2")])
    # ggml's gguf_find_key compares C strings and takes the first: the shadow's 64
    files["bad-gguf_key_duplicate-nul-shadow"] = gguf(
        [kv(b"general.alignment\0", U32, 64), kv("general.alignment", U32, 32)],
        [("a", [8], 0)])
    files["bad-gguf_metadata_type_mismatch-token_type-u8"] = gguf(
        [arch, kv("tokenizer.ggml.tokens", ARR, (STR, ["a", "b"])),
         kv("tokenizer.ggml.token_type", ARR, (U8, [1, 1]))])
    files["bad-gguf_value_type_invalid-bool2"] = gguf([arch, kv("v.flag", BOOL, 2)])
    files["bad-gguf_value_type_invalid-13"] = gguf(
        [gstr("x") + struct.pack("<II", 13, 0)])
    files["bad-gguf_value_type_invalid-nested"] = gguf(
        [kv("x", ARR, (ARR, [(U8, [1]), (U8, [2, 3])]))])
    files["bad-gguf_array_invalid-count"] = gguf(
        [gstr("x") + struct.pack("<IIQ", ARR, U64, 1 << 61) + b"\0" * 8])
    files["bad-gguf_metadata_type_mismatch-alignment-str"] = gguf(
        [kv("general.alignment", STR, "32")], [("a", [8], 0)])
    files["bad-gguf_metadata_type_mismatch-scores"] = gguf(
        [kv("tokenizer.ggml.tokens", ARR, (STR, ["a", "b", "c"])),
         kv("tokenizer.ggml.scores", ARR, (F32, [0.0]))])
    files["bad-gguf_alignment_invalid-48"] = gguf([arch], [("a", [8], 0)], alignment=48)
    files["bad-gguf_alignment_invalid-0"] = gguf([kv("general.alignment", U32, 0)])
    files["bad-gguf_tensor_name_invalid-64"] = gguf([arch], [("n" * 64, [8], 0)])
    files["bad-gguf_tensor_name_invalid-nul"] = gguf([arch], [("a\0b", [8], 0)])
    files["bad-gguf_tensor_duplicate"] = gguf([arch], [("a", [8], 0), ("a", [8], 0)])
    files["bad-gguf_tensor_shape_invalid-wrap"] = gguf(
        [arch], [("w", [1 << 32, 1 << 32, 16], 0, 0)])
    files["bad-gguf_tensor_shape_invalid-5d"] = gguf([arch], [("a", [1, 1, 1, 1, 1], 0)])
    files["bad-gguf_tensor_shape_invalid-zero-dim2"] = gguf([arch], [("a", [4, 0], 0)])
    files["bad-gguf_tensor_type_invalid-removed"] = gguf([arch], [("a", [32], 4, 0)])
    files["bad-gguf_tensor_type_invalid-block"] = gguf([arch], [("a", [33], 2, 0)])
    files["bad-tensor_misaligned"] = gguf([arch], [("a", [3], 0), ("b", [3], 0, 16)])
    files["bad-data_gap"] = gguf([arch], [("a", [3], 0), ("b", [3], 0, 64)], trailing=b"\0" * 64)
    files["bad-offsets_overlap"] = gguf([arch], [("a", [8], 0), ("b", [8], 0, 0)])
    files["bad-offsets_out_of_range"] = gguf([arch], [("a", [8], 0)])[:-4]
    files["bad-data_trailing"] = gguf([arch], [("a", [8], 0)], trailing=b"PK\3\4")
    for name, data in files.items():
        with open(os.path.join(out, name + ".gguf"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
