#!/usr/bin/python3
"""Repo-shaped folders whose models keep their weights in sibling files, written by the real
writers (Debian's python3-onnx), for tests/siblings/script_siblings.sh.

  gen_siblings.py OUT

OUT/onnx_data/  model.onnx + model.onnx_data (onnx.save_model's default-style name)
OUT/onnx_bin/   model.onnx + weights.bin     (a .bin name, which claims a pickle)
OUT/repo/       a bert-like repo: config.json, README.md, tokenizer.json, vocab.txt and
                onnx/model.onnx + onnx/model.onnx_data, onnx/model_fp16.onnx + weights.bin
Each model is reloaded with onnx.load (which reads its external data) and checked with
onnx.checker, so every fixture is what a runtime accepts."""
import json
import os
import sys

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


if __name__ == "__main__":
    main(sys.argv[1])
