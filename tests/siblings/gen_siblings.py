#!/usr/bin/python3
"""Repo-shaped folders whose models keep their weights in sibling files, written by the real
writers (Debian's python3-onnx), for tests/siblings/script_siblings.sh.

  gen_siblings.py OUT

OUT/onnx_data/  model.onnx + model.onnx_data (onnx.save_model's default-style name)
OUT/onnx_bin/   model.onnx + weights.bin     (a .bin name, which claims a pickle)
OUT/repo/       a bert-like repo: config.json, README.md, tokenizer.json, vocab.txt and
                onnx/model.onnx + onnx/model.onnx_data, onnx/model_fp16.onnx + weights.bin,
                openvino/openvino_model.xml + .bin (gen_openvino.py), and a Core ML package
                coreml/fill-mask/float32_model.mlpackage (Manifest.json, model.mlmodel,
                weights/weight.bin in MILBlob's blob storage format: StorageFormat.hpp @
                f391218c2714481cd2e964b18492a490fed23a79 of apple/coremltools)
OUT/hub/        the same repo as a Hugging Face cache: models--org--bert/blobs/<sha256> and
                snapshots/<rev>/... links to them, refs/main
Each ONNX model is reloaded with onnx.load (which reads its external data) and checked with
onnx.checker, so every ONNX fixture is what a runtime accepts."""
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_openvino  # noqa: E402

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, location, dtype=np.float32):
    w = numpy_helper.from_array(np.arange(4096, dtype=dtype).reshape(64, 64), name="W")
    b = numpy_helper.from_array(np.ones(64, dtype=dtype), name="B")
    elem = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["H"]), helper.make_node("Add", ["H", "B"], ["Y"])],
        "g",
        [helper.make_tensor_value_info("X", elem, [1, 64])],
        [helper.make_tensor_value_info("Y", elem, [1, 64])],
        [w, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=0)
    back = onnx.load(path)  # reads the external data back
    onnx.checker.check_model(back)
    got = numpy_helper.to_array(back.graph.initializer[0])
    assert got.shape == (64, 64) and float(got[1, 2]) == 66.0


def coreml_package(pkg):
    """The layout coremltools writes for an ML program: the weights item names the folder."""
    apple = os.path.join(pkg, "Data", "com.apple.CoreML")
    os.makedirs(os.path.join(apple, "weights"))

    def varint(v):
        b = bytearray()
        while True:
            x, v = v & 0x7F, v >> 7
            b.append(x | (0x80 if v else 0))
            if not v:
                return bytes(b)

    def field(n, wire, payload):
        return varint(n << 3 | wire) + (varint(len(payload)) + payload if wire == 2 else payload)

    # Model: specificationVersion 8, description (one input), mlProgram (field 502)
    model = (field(1, 0, varint(8)) + field(2, 2, field(1, 2, field(1, 2, b"input_ids")))
             + field(502, 2, field(1, 0, varint(1))))
    with open(os.path.join(apple, "model.mlmodel"), "wb") as f:
        f.write(model)
    blobs = [bytes(range(40)), bytes(4096)]
    data = bytearray(struct.pack("<II", len(blobs), 2) + bytes(56))
    for b in blobs:
        data += struct.pack("<IIQQQ", 0xDEADBEEF, 1, len(b), len(data) + 64, 0) + bytes(32)
        data += b
        data += bytes(-len(data) % 64)
    with open(os.path.join(apple, "weights", "weight.bin"), "wb") as f:
        f.write(bytes(data))
    manifest = {"fileFormatVersion": "1.0.0", "itemInfoEntries": {
        "5E2F9A3C-0000-4000-8000-000000000001": {
            "author": "com.apple.CoreML", "description": "CoreML Model Weights",
            "name": "weights", "path": "com.apple.CoreML/weights"},
        "5E2F9A3C-0000-4000-8000-000000000002": {
            "author": "com.apple.CoreML", "description": "CoreML Model Specification",
            "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"}},
        "rootModelIdentifier": "5E2F9A3C-0000-4000-8000-000000000002"}
    with open(os.path.join(pkg, "Manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


def hub_cache(repo, hub):
    """repo as huggingface_hub caches it: each file a blob named by its SHA-256, linked from
    snapshots/<rev>/<path> by a relative link."""
    top = os.path.join(hub, "models--org--bert")
    rev = "0123456789abcdef0123456789abcdef01234567"
    os.makedirs(os.path.join(top, "blobs"))
    os.makedirs(os.path.join(top, "refs"))
    with open(os.path.join(top, "refs", "main"), "w") as f:
        f.write(rev)
    for base, _, files in os.walk(repo):
        for name in files:
            src = os.path.join(base, name)
            rel = os.path.relpath(src, repo)
            data = open(src, "rb").read()
            blob = os.path.join(top, "blobs", hashlib.sha256(data).hexdigest())
            with open(blob, "wb") as f:
                f.write(data)
            link = os.path.join(top, "snapshots", rev, rel)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(os.path.relpath(blob, os.path.dirname(link)), link)


def main(out):
    for sub, loc in (("onnx_data", "model.onnx_data"), ("onnx_bin", "weights.bin")):
        os.makedirs(os.path.join(out, sub))
        save(os.path.join(out, sub, "model.onnx"), loc)
    repo = os.path.join(out, "repo")
    os.makedirs(os.path.join(repo, "onnx"))
    with open(os.path.join(repo, "config.json"), "w") as f:
        json.dump({"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 64}, f)
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("---\nlicense: apache-2.0\n---\n# a small bert-like model\n")
    with open(os.path.join(repo, "tokenizer.json"), "w") as f:
        json.dump({"version": "1.0", "model": {"type": "WordPiece", "vocab": {"[PAD]": 0}}}, f)
    with open(os.path.join(repo, "vocab.txt"), "w") as f:
        f.write("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    save(os.path.join(repo, "onnx", "model.onnx"), "model.onnx_data")
    save(os.path.join(repo, "onnx", "model_fp16.onnx"), "weights.bin", np.float16)
    gen_openvino.write(os.path.join(repo, "openvino"), "openvino_model",
                       gen_openvino.model("Model0", False))
    coreml_package(os.path.join(repo, "coreml", "fill-mask", "float32_model.mlpackage"))
    hub_cache(repo, os.path.join(out, "hub"))


if __name__ == "__main__":
    main(sys.argv[1])
