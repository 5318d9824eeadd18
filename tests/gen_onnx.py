#!/usr/bin/python3
"""Writes the ONNX fixtures of tests/test_onnx.c with Debian's python3-onnx (onnx 1.12).

    /usr/bin/python3 tests/gen_onnx.py OUT_DIR

Each case is a folder OUT_DIR/<case>/ holding model.onnx and, where the case needs them, its
external-data files, so the loader's folder rule applies per case:
  ok-*        valid models (plain, external data written by onnx.save_model in one file or
              one per tensor, ai.onnx.ml, a local function in a custom domain, an If whose
              branches hold an external tensor)
  bad-<code>-* models that must carry finding <code> (traversal locations, custom domains,
              missing or short external files, opset problems)."""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def graph_with_weight(name="w", n=64, domain="", op="Add", extra_nodes=()):
    w = numpy_helper.from_array(np.arange(n, dtype=np.float32), name=name)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])
    node = helper.make_node(op, ["x", name], ["y"], domain=domain)
    return helper.make_graph([node, *extra_nodes], "g", [x], [y], [w])


def model(graph, opsets=(("", 13),), **kw):
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                             **kw)


def save(out, case, m, **kw):
    d = os.path.join(out, case)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    onnx.save_model(m, os.path.join(d, "model.onnx"), **kw)
    return d


def point_external(m, location, offset=None, length=None):
    """Marks the first initializer external with the given entries (no data written)."""
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, v
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    m = model(graph_with_weight())
    onnx.checker.check_model(m)
    save(out, "ok-plain", m)
    # external data as onnx writes it: one file beside the model, every tensor in it
    save(out, "ok-external", model(graph_with_weight(n=1024)), save_as_external_data=True,
         all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    # external data in a subfolder, one file per tensor
    save(out, "ok-external-per-tensor", model(graph_with_weight(n=1024)),
         save_as_external_data=True, all_tensors_to_one_file=False, size_threshold=0)
    ml = helper.make_node("Normalizer", ["y"], ["z"], domain="ai.onnx.ml", norm="L2")
    g = graph_with_weight(extra_nodes=[ml])
    g.output[0].name = "z"
    save(out, "ok-ml", model(g, opsets=(("", 13), ("ai.onnx.ml", 3))))
    # a custom-domain op that is a local function of the model: no native code
    fn = helper.make_function("local.fns", "AddTwice", ["a", "b"], ["c"],
                              [helper.make_node("Add", ["a", "b"], ["t"]),
                               helper.make_node("Add", ["t", "b"], ["c"])],
                              [helper.make_opsetid("", 13)])
    g = graph_with_weight(domain="local.fns", op="AddTwice")
    save(out, "ok-function", model(g, opsets=(("", 13), ("local.fns", 1)), functions=[fn]))
    # a subgraph (If) whose branch holds an external tensor
    then_w = numpy_helper.from_array(np.ones(8, dtype=np.float32), name="tw")
    then_g = helper.make_graph([helper.make_node("Identity", ["tw"], ["o"])], "then", [],
                               [helper.make_tensor_value_info("o", TensorProto.FLOAT, [8])],
                               [then_w])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    o = helper.make_tensor_value_info("o", TensorProto.FLOAT, [8])
    ifn = helper.make_node("If", ["cond"], ["o"], then_branch=then_g, else_branch=then_g)
    save(out, "ok-subgraph", model(helper.make_graph([ifn], "g", [cond], [o])),
         save_as_external_data=True, location="branch.bin", size_threshold=0)

    # for inspect (stg_onnx_open): header fields, metadata, symbolic and unknown dimensions, an
    # op histogram, inline and external initializers of several types
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, None])
    big = numpy_helper.from_array(np.ones((16, 16), dtype=np.float32), name="big")
    small = numpy_helper.from_array(np.arange(4, dtype=np.int64), name="small")
    half = numpy_helper.from_array(np.zeros((2, 3), dtype=np.float16), name="half")
    nodes = [helper.make_node("Relu", ["x"], ["r1"]), helper.make_node("Relu", ["r1"], ["r2"]),
             helper.make_node("Relu", ["r2"], ["r3"]), helper.make_node("Add", ["r3", "r3"], ["y"])]
    g = helper.make_graph(nodes, "inspect-graph", [x], [y], [big, small, half])
    m = model(g, producer_name="stguard-test", producer_version="1.0", domain="org.example",
              model_version=3, doc_string="a model for stguard inspect")
    helper.set_model_props(m, {"author": "stguard", "license": "MIT"})
    save(out, "ok-inspect", m, save_as_external_data=True, all_tensors_to_one_file=True,
         location="inspect.data", size_threshold=1024)

    # traversal: locations no runtime may follow
    for case, loc in (("bad-onnx_external_path_unsafe-dotdot", "../secret.bin"),
                      ("bad-onnx_external_path_unsafe-absolute", "/etc/passwd"),
                      ("bad-onnx_external_path_unsafe-inner", "sub/../../x.bin"),
                      ("bad-onnx_external_path_unsafe-backslash", "..\\..\\x.bin")):
        save(out, case, point_external(model(graph_with_weight()), loc, "0", "256"))
    save(out, "bad-onnx_external_missing-absent",
         point_external(model(graph_with_weight()), "missing.bin", "0", "256"))
    d = save(out, "bad-onnx_external_missing-short",
             point_external(model(graph_with_weight()), "short.bin", "128", "256"))
    with open(os.path.join(d, "short.bin"), "wb") as f:
        f.write(b"\0" * 300)
    save(out, "bad-onnx_malformed-offset",
         point_external(model(graph_with_weight()), "w.bin", "12abc", "256"))
    save(out, "bad-onnx_custom_domain",
         model(graph_with_weight(domain="com.example.ops", op="Secret"),
               opsets=(("", 13), ("com.example.ops", 1))))
    save(out, "bad-onnx_opset_invalid-unimported",
         model(graph_with_weight(domain="com.example.ops", op="Secret")))
    save(out, "bad-onnx_opset_invalid-none", model(graph_with_weight(), opsets=()))
    # the valid ones are valid to onnx itself, external data included
    for case in sorted(os.listdir(out)):
        if case.startswith("ok-"):
            path = os.path.join(out, case, "model.onnx")
            onnx.checker.check_model(path)
            onnx.load(path)  # reads the external data files back
    with open(os.path.join(out, "ok-plain", "model.onnx"), "rb") as f:
        good = f.read()
    d = os.path.join(out, "bad-onnx_malformed-truncated")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(good[: len(good) - 5])


if __name__ == "__main__":
    main()
