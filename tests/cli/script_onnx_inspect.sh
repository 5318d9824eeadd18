#!/bin/bash
# `stguard inspect --format json` on ONNX models (the ONNX door, stg_onnx_open) against what
# Debian's python3-onnx reads from the same files: header fields, metadata_props, opset imports,
# the main graph's inputs and outputs (element types, static and symbolic dimensions, missing
# shapes, non-tensor types), the node count and op-type histogram (most frequent first, custom
# domains), and every initializer (type name, dims, element count, byte size, inline or external
# location, offset and length). Models: every valid fixture of tests/data/onnx, the custom-domain
# one, and a model written here with many op types, seven tensor types and external data; each
# also renamed to model.bin (recognised by content). Every record validates against
# docs/cli.schema.json. Skips (77) when Debian's python3 cannot import onnx.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "onnx, numpy, jsonschema"
fail=0
mkdir -p "$tmp/models"
for d in "$SRC"/tests/data/onnx/ok-* "$SRC"/tests/data/onnx/bad-onnx_custom_domain; do
    cp -r "$d" "$tmp/models/"
done
"$PY" - "$tmp/models/rich" <<'PYEOF' || { echo "FAIL: writing the rich model"; exit 1; }
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
os.makedirs(out)
ops = [("Relu", "")] * 5 + [("Add", "")] * 3 + [("Foo", "com.acme")] * 2 + \
      [("Normalizer", "ai.onnx.ml"), ("Sigmoid", ""), ("Abs", "ai.onnx")]
nodes = [helper.make_node(op, ["x"], ["t%d" % i], domain=dom) for i, (op, dom) in enumerate(ops)]
inputs = [
    helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None]),
    helper.make_tensor_value_info("scalar", TensorProto.INT64, []),
    helper.make_tensor_value_info("noshape", TensorProto.BOOL, None),
    helper.make_value_info("seq", helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))),
]
outputs = [helper.make_tensor_value_info("t0", TensorProto.FLOAT16, [7, "n"])]
inits = [
    numpy_helper.from_array(np.ones((32, 32), dtype=np.float32), name="big"),
    numpy_helper.from_array(np.zeros((3, 5), dtype=np.float16), name="half"),
    numpy_helper.from_array(np.array([True, False, True]), name="flags"),
    numpy_helper.from_array(np.array(7, dtype=np.int8), name="scalar8"),
    numpy_helper.from_array(np.arange(6, dtype=np.float64).reshape(2, 3), name="dbl"),
    helper.make_tensor("words", TensorProto.STRING, [2], [b"alpha", b"be"]),
    numpy_helper.from_array(np.arange(40, dtype=np.uint16).reshape(4, 10), name="u16"),
]
g = helper.make_graph(nodes, "rich-graph", inputs, outputs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                        helper.make_opsetid("ai.onnx.ml", 3),
                                        helper.make_opsetid("com.acme", 1)],
                      producer_name="rich", producer_version="2.0", model_version=9)
helper.set_model_props(m, {"k": "v"})
onnx.save_model(m, os.path.join(out, "model.onnx"), save_as_external_data=True,
                all_tensors_to_one_file=True, location="rich.data", size_threshold=100)
PYEOF
n=0
for d in "$tmp"/models/*/; do
    cp "$d/model.onnx" "$d/model.bin"
    for name in model.onnx model.bin; do
        f="$d$name"
        if ! "$STGUARD_CLI" inspect --format json "$f" >"$tmp/out.json" 2>"$tmp/err"; then
            echo "FAIL: inspect $f: $(cat "$tmp/out.json" "$tmp/err")"
            fail=1
            continue
        fi
        "$PY" - "$f" "$tmp/out.json" "$SRC/docs/cli.schema.json" <<'PYEOF' || fail=1
import collections, json, sys
import numpy as np
import jsonschema
import onnx
from onnx import TensorProto, helper
path, out, schema = sys.argv[1:4]
d = json.load(open(out))
jsonschema.Draft7Validator(json.load(open(schema))).validate(d)
m = onnx.load(path, load_external_data=False)
g = m.graph
def opt(msg, field):
    return getattr(msg, field) if msg.HasField(field) else None
def type_name(t):
    return TensorProto.DataType.Name(t)
def value(v):
    t = v.type
    tt = t.tensor_type if t.HasField("tensor_type") else \
        t.sparse_tensor_type if t.HasField("sparse_tensor_type") else None
    if tt is None:
        return {"name": v.name, "elem_type": "UNDEFINED", "shape": None}
    shape = None
    if tt.HasField("shape"):
        shape = [x.dim_value if x.HasField("dim_value") else
                 x.dim_param if x.HasField("dim_param") else None for x in tt.shape.dim]
    return {"name": v.name, "elem_type": type_name(tt.elem_type), "shape": shape}
def tensor(t):
    n = int(np.prod(t.dims, dtype=np.uint64)) if len(t.dims) else 1
    if t.data_type == TensorProto.STRING:
        size = sum(len(s) for s in t.string_data)
    else:
        size = n * np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]).itemsize
    r = {"name": t.name, "dtype": type_name(t.data_type), "shape": list(t.dims),
         "parameters": n, "bytes": size}
    if t.data_location == TensorProto.EXTERNAL:
        e = {x.key: x.value for x in t.external_data}
        r.update(stored="external", location=e["location"], offset=int(e.get("offset", 0)),
                 length=int(e["length"]) if "length" in e else None)
    else:
        r["stored"] = "inline"
    return r
std = {"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training"}
local = {("" if f.domain == "ai.onnx" else f.domain, f.name) for f in m.functions}
counts = collections.Counter(("" if n.domain == "ai.onnx" else n.domain, n.op_type) for n in g.node)
hist = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0].encode(), kv[0][1].encode()))
tensors = [tensor(t) for t in g.initializer]
want = {
    "format": "onnx", "ir_version": m.ir_version, "model_version": m.model_version,
    "producer_name": opt(m, "producer_name"), "producer_version": opt(m, "producer_version"),
    "domain": opt(m, "domain"), "graph_name": opt(g, "name"),
    "metadata": {p.key: p.value for p in m.metadata_props},
    "opset_import": [{"domain": o.domain, "version": o.version} for o in m.opset_import],
    "inputs": [value(v) for v in g.input], "outputs": [value(v) for v in g.output],
    "nodes": len(g.node),
    "op_types": [{"domain": dom, "op_type": op, "count": c, "custom": dom not in std,
                  "local_function": (dom, op) in local} for (dom, op), c in hist],
    "parameters": sum(t["parameters"] for t in tensors),
    "tensor_bytes": sum(t["bytes"] for t in tensors),
    "external_tensors": sum(t["stored"] == "external" for t in tensors),
    "tensors": tensors,
}
got = {k: d[k] for k in want}
if got != want:
    for k in want:
        if got[k] != want[k]:
            print("FAIL %s: %s: stguard %r, onnx %r" % (path, k, got[k], want[k]))
    sys.exit(1)
PYEOF
        n=$((n + 1))
    done
done
echo "$n inspect records compared with python3-onnx"
[ "$n" -ge 16 ] || { echo "FAIL: only $n records"; fail=1; }
# the rich model is what it should be: every kind of entry present
"$STGUARD_CLI" inspect --format json "$tmp/models/rich/model.bin" >"$tmp/rich.json"
"$PY" - "$tmp/rich.json" <<'PYEOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert [o["op_type"] for o in d["op_types"][:3]] == ["Relu", "Add", "Foo"], d["op_types"]
assert d["op_types"][2]["custom"] and not d["op_types"][0]["custom"], d["op_types"]
assert {t["stored"] for t in d["tensors"]} == {"inline", "external"}, d["tensors"]
shapes = {v["name"]: v["shape"] for v in d["inputs"]}
assert shapes == {"x": ["batch", 3, None], "scalar": [], "noshape": None, "seq": None}, shapes
PYEOF
exit $fail
