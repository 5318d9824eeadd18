#!/usr/bin/env python3
"""Writes corpus/examples/: a small example model folder for trying `stguard scan`.

Python 3 standard library only; the output is deterministic and committed, so running this again
must leave `git status` clean. Each file stays far below 64 KiB. What each file is and the verdict
stguard gives it is listed in corpus/examples/README.md (also written here).

    python3 tools/make_examples.py [OUTPUT_DIR]     (default: corpus/examples next to tools/)
"""
import io
import json
import os
import struct
import sys
import zipfile


def safetensors(header, data, pad_to=8, raw_header=None):
    """8-byte little-endian header length, the JSON header (padded with spaces so the data
    section starts at a multiple of pad_to; pad_to=1: no padding), then the data bytes."""
    text = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":"))
    body = text.encode("utf-8")
    if pad_to > 1:
        body += b" " * ((-(8 + len(body))) % pad_to)
    return struct.pack("<Q", len(body)) + body + data


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def pickle_str(text):
    data = text.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def torch_zip():
    """{'weight': _rebuild_tensor_v2(storage('0', cpu, 4 floats), 0, (4,), (1,), False,
    OrderedDict())} as protocol-2 opcodes, in a stored zip with fixed timestamps."""
    pkl = (b"\x80\x02}q\x00(" + pickle_str("weight")
           + b"ctorch._utils\n_rebuild_tensor_v2\n("
           + b"(" + pickle_str("storage") + b"ctorch\nFloatStorage\n" + pickle_str("0")
           + pickle_str("cpu") + b"K\x04tQ"
           + b"K\x00K\x04\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtRu.")
    members = [("archive/data.pkl", pkl), ("archive/byteorder", b"little"),
               ("archive/data/0", f32(1.0, 2.0, 3.0, 4.0)), ("archive/version", b"3\n")]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


def gguf_str(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def gguf_file(kvs, tensors, dims_lie=None):
    """A GGUF version 3 file (ggml docs/gguf.md): header, metadata (key, type, value), tensor
    infos (name, n_dims, dims, ggml type, offset), padding to 32, then the data section.
    tensors: (name, dims, F32 values); dims_lie: dimensions to write for the last tensor
    instead of its true ones (its data stays what the true ones need)."""
    meta = b""
    for key, vtype, raw in kvs:
        meta += gguf_str(key) + struct.pack("<I", vtype) + raw
    infos, data = b"", b""
    for i, (name, dims, values) in enumerate(tensors):
        shown = dims_lie if dims_lie is not None and i == len(tensors) - 1 else dims
        infos += gguf_str(name) + struct.pack("<I", len(shown))
        infos += b"".join(struct.pack("<Q", d) for d in shown)
        infos += struct.pack("<IQ", 0, len(data))  # type 0: F32
        data += f32(*values)
        data += b"\0" * ((-len(data)) % 32)
    body = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + meta + infos
    body += b"\0" * ((-len(body)) % 32)
    return body + data


def gguf_model(dims_lie=None):
    vocab = ["<unk>", "<s>", "</s>", "hello", "world"]
    tokens = struct.pack("<IQ", 8, len(vocab)) + b"".join(gguf_str(t) for t in vocab)
    kvs = [("general.architecture", 8, gguf_str("llama")),
           ("general.name", 8, gguf_str("stguard example")),
           ("llama.context_length", 4, struct.pack("<I", 64)),
           ("tokenizer.ggml.tokens", 9, tokens)]
    return gguf_file(kvs, [("token_embd.weight", [2, 5], [0.5] * 10),
                           ("output_norm.weight", [2], [1.0, 1.0])], dims_lie)


def pb_varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pb_field(number, payload):
    """A length-delimited field (wire type 2); an int payload is a varint field (wire type 0)."""
    if isinstance(payload, int):
        return pb_varint(number << 3) + pb_varint(payload)
    if isinstance(payload, str):
        payload = payload.encode()
    return pb_varint(number << 3 | 2) + pb_varint(len(payload)) + payload


def onnx_external_model(location):
    """An ONNX ModelProto (ir_version 8, opset "" 13) whose graph has one Relu node and one
    initializer "w" (4 floats) with data_location EXTERNAL at `location`: protobuf wire data
    written field by field (onnx.proto numbers), no onnx library."""
    entries = b"".join(pb_field(13, pb_field(1, k) + pb_field(2, v))
                       for k, v in (("location", location), ("offset", "0"), ("length", "16")))
    tensor = pb_field(1, 4) + pb_field(2, 1) + pb_field(8, "w") + entries + pb_field(14, 1)
    node = pb_field(1, "w") + pb_field(2, "y") + pb_field(4, "Relu")
    graph = pb_field(1, node) + pb_field(2, "g") + pb_field(5, tensor)
    return (pb_field(1, 8) + pb_field(2, "stguard example") + pb_field(7, graph)
            + pb_field(8, pb_field(1, "") + pb_field(2, 13)))


def examples():
    out = {}
    weight = f32(0.5, -1.0, 2.0, 0.25, 1.5, -0.75)
    bias = f32(0.1, 0.2)
    out["model.safetensors"] = safetensors(
        {
            "__metadata__": {"format": "pt", "note": "stguard example"},
            "linear.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
            "linear.bias": {"dtype": "F32", "shape": [2], "data_offsets": [24, 32]},
        },
        weight + bias,
    )
    # Valid for the reference loader, but the data section starts at an offset that is not a
    # multiple of 8: header_not_padded (warning) -> verdict warn.
    unpadded = None
    for extra in range(8):
        candidate = safetensors(
            {"embed": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
             "__metadata__": {"pad": "x" * extra}},
            b"\x01\x02\x03\x04", pad_to=1)
        header_len = struct.unpack("<Q", candidate[:8])[0]
        if (8 + header_len) % 8 != 0:
            unpadded = candidate
            break
    out["unpadded.safetensors"] = unpadded
    # Two tensors sharing bytes 8..16: offsets_overlap (error) -> invalid.
    out["broken/overlap.safetensors"] = safetensors(
        {
            "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
            "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]},
        },
        f32(*range(6)),
    )
    # The header claims 4096 bytes but the file ends long before: header_truncated -> invalid.
    good = safetensors({"t": {"dtype": "I8", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x02")
    out["broken/truncated.safetensors"] = struct.pack("<Q", 4096) + good[8:]
    # A shape whose byte size differs from the range it claims: size_mismatch -> invalid.
    out["broken/size_mismatch.safetensors"] = safetensors(
        {"t": {"dtype": "F16", "shape": [3], "data_offsets": [0, 4]}}, b"\x00" * 4)
    # A ".bin" name claims a pickle-based format, the content is none: format_mismatch.
    out["broken/weights.bin"] = b"these bytes are no model format at all\n"
    # A pickle (protocol 2) that would call os.system("echo pwned") if loaded. stguard never
    # loads it: the scan reports the global (unsafe). Built from opcodes, never pickled here.
    out["unsafe/os_system.pkl"] = (
        b"\x80\x02" + b"cos\nsystem\n" + b"X\x0a\x00\x00\x00echo pwned" + b"\x85" + b"R" + b".")
    # A PyTorch zip checkpoint (what torch.save writes since 1.6), built by hand: data.pkl names
    # only globals that weights_only loading allows, and one storage. pickle_file (info) -> ok.
    out["torch/pytorch_model.bin"] = torch_zip()
    # A sharded model: an index plus two shards that agree with it -> ok for all three.
    shard1 = safetensors({"layer0.weight": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}},
                         f32(1.0, 2.0))
    shard2 = safetensors({"layer1.weight": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}},
                         f32(3.0, 4.0))
    out["sharded/model-00001-of-00002.safetensors"] = shard1
    out["sharded/model-00002-of-00002.safetensors"] = shard2
    index = {
        "metadata": {"total_size": 16},
        "weight_map": {
            "layer0.weight": "model-00001-of-00002.safetensors",
            "layer1.weight": "model-00002-of-00002.safetensors",
        },
    }
    out["sharded/model.safetensors.index.json"] = (json.dumps(index, indent=2) + "\n").encode()
    # A GGUF file (llama.cpp's format): metadata with a 5-token vocabulary, two F32 tensors.
    out["gguf/model.gguf"] = gguf_model()
    # The same file whose header says output_norm.weight is [2, 4096]: the tensor would run
    # past the end of the file (offsets_out_of_range) -> invalid.
    out["broken/lying_dims.gguf"] = gguf_model(dims_lie=[2, 4096])
    # An ONNX model whose initializer's external data is "../../etc/passwd": path traversal
    # (onnx_external_path_unsafe, critical; CVE-2024-27318 class) -> unsafe.
    out["unsafe/escape.onnx"] = onnx_external_model("../../etc/passwd")
    return out


README = """# Example model folder

Generated by `tools/make_examples.py` (Python standard library only); do not edit by hand.
Try `stguard scan corpus/examples` or `stguard scan --format json corpus/examples`.

| file | what it is | verdict |
|---|---|---|
| model.safetensors | two F32 tensors and `__metadata__` | ok |
| unpadded.safetensors | data section not 8-byte aligned (header_not_padded) | warn |
| README.md | this text (format text, no finding) | ok |
| broken/overlap.safetensors | two tensors share bytes (offsets_overlap) | invalid |
| broken/truncated.safetensors | header length past the end of the file (header_truncated) | invalid |
| broken/size_mismatch.safetensors | range differs from shape x dtype (size_mismatch) | invalid |
| broken/weights.bin | a pickle-format name on content that is no format (format_mismatch) | invalid |
| unsafe/os_system.pkl | a pickle that would call os.system (pickle_global_dangerous) | unsafe |
| torch/pytorch_model.bin | a PyTorch zip checkpoint whose globals are all on the built-in allowlist (pickle_file, info) | ok |
| sharded/ | an index and two shards that agree | ok |
| gguf/model.gguf | a GGUF file: metadata with a 5-token vocabulary, two F32 tensors | ok |
| broken/lying_dims.gguf | a GGUF header that says a tensor is [2, 4096] when its data holds 2 floats (offsets_out_of_range) | invalid |
| unsafe/escape.onnx | an ONNX model whose external data is `../../etc/passwd` (onnx_external_path_unsafe) | unsafe |

The exit status of a scan of this folder is 1 (some files are invalid or unsafe).
"""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "corpus", "examples")
    files = examples()
    files["README.md"] = README.encode()
    for rel, data in sorted(files.items()):
        assert len(data) < 64 * 1024, rel
        path = os.path.join(target, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
