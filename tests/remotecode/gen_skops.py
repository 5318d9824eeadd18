#!/usr/bin/python3
"""skops files for script_skops.sh, laid out as skops.io.dump writes them (skops-dev/skops
50d3165; skops is not packaged by Debian, so the layout is built here from its source):
skops/io/_persist.py _save (lines 29-41): a ZipFile (ZIP_STORED by default) holding
schema.json, json.dumps(state, indent=2) of the root state with "protocol" (2,
skops/io/_protocol.py line 26) and "_skops_version" added, and one <id>.npy per array written
with np.save(allow_pickle=False) (skops/io/_numpy.py ndarray_get_state). Every state carries
"__class__", "__module__" and "__loader__" (skops/io/_general.py: dict_get_state with
"key_types", JsonNode states with "is_json", ObjectNode for estimators).

usage: gen_skops.py OUTDIR   (writes OUTDIR/<case>.skops)"""
import io
import json
import os
import sys
import zipfile

import numpy as np


def json_state(value):
    return {"__class__": type(value).__name__, "__module__": "builtins",
            "__loader__": "JsonNode", "content": json.dumps(value), "is_json": True}


def list_state(items):
    return {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
            "content": items}


def type_state(cls_name):
    return {"__class__": cls_name, "__module__": "builtins", "__loader__": "TypeNode",
            "__id__": 1}


def dict_state(content):
    return {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode",
            "content": content, "key_types": list_state([type_state("str") for _ in content])}


def array_state(name):
    return {"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode",
            "type": "numpy", "file": name}


def estimator(extra=None):
    attrs = {"C": json_state(1.0), "max_iter": json_state(100), "penalty": json_state("l2"),
             "coef_": array_state("140001.npy"), "intercept_": array_state("140002.npy")}
    attrs.update(extra or {})
    return {"__class__": "LogisticRegression", "__module__": "sklearn.linear_model._logistic",
            "__loader__": "ObjectNode", "content": dict_state(attrs)}


def write(path, state):
    state = dict(state, protocol=2, _skops_version="0.10.0")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("schema.json", json.dumps(state, indent=2))
        for name, arr in (("140001.npy", np.zeros((1, 4))), ("140002.npy", np.zeros(1))):
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            z.writestr(name, buf.getvalue())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "benign.skops"), estimator())
    # a FunctionNode (skops' function_get_state: __class__ the function's name, __module__ its
    # module) naming os.system, hidden in an estimator's attributes
    fn = {"__class__": "system", "__module__": "os", "__loader__": "FunctionNode", "content": {}}
    write(os.path.join(out, "dangerous.skops"), estimator({"callback_": fn}))
    # an ObjectNode of a class outside sklearn: skops refuses it unless trusted
    custom = {"__class__": "MyTransformer", "__module__": "mypackage.transforms",
              "__loader__": "ObjectNode", "content": dict_state({})}
    write(os.path.join(out, "untrusted.skops"), estimator({"prep_": custom}))
    broken = {"__loader__": "ObjectNode", "content": dict_state({})}
    write(os.path.join(out, "malformed.skops"), estimator({"x_": broken}))


if __name__ == "__main__":
    main()
