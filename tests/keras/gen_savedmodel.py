#!/usr/bin/python3
"""Writes TensorFlow SavedModel files with python3-protobuf (Debian has no TensorFlow): the
messages on the path to the ops are declared here with the field numbers and types of
TensorFlow's own schema, and protobuf's serializer writes them, so the bytes are what
TensorFlow's writer gives for these fields:

- tensorflow/core/protobuf/saved_model.proto: SavedModel { int64 saved_model_schema_version
  = 1; repeated MetaGraphDef meta_graphs = 2; }
- tensorflow/core/protobuf/meta_graph.proto: MetaGraphDef { MetaInfoDef meta_info_def = 1
  (tags = 4); GraphDef graph_def = 2; }
- tensorflow/core/framework/graph.proto: GraphDef { repeated NodeDef node = 1;
  FunctionDefLibrary library = 2; }
- tensorflow/core/framework/function.proto: FunctionDefLibrary { repeated FunctionDef function
  = 1; } FunctionDef { OpDef signature = 1; repeated NodeDef node_def = 3; }
- tensorflow/core/framework/op_def.proto: OpDef { string name = 1; }
- tensorflow/core/framework/node_def.proto: NodeDef { string name = 1; string op = 2;
  repeated string input = 3; string device = 4; }
- tf_keras/protobuf/saved_metadata.proto (keras-team/tf-keras at 6add81a9): SavedMetadata
  { repeated SavedObject nodes = 1; } SavedObject { int32 node_id = 2; string node_path = 3;
  string identifier = 4; string metadata = 5; }

Writes into argv[1]/<case>/saved_model.pb (and keras_metadata.pb); ok-* cases are ok,
bad-<code>-* carry <code>. Then parses every file back with the same classes and prints its
op names, one line per file, for the script to compare with stguard's findings."""
import json
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
fdp = descriptor_pb2.FileDescriptorProto(name="stg_tf.proto", package="stgtf", syntax="proto3")


def msg(name, fields):
    m = fdp.message_type.add(name=name)
    for fname, num, kind, label, type_name in fields:
        f = m.field.add(name=fname, number=num, type=kind, label=label)
        if type_name:
            f.type_name = ".stgtf." + type_name


OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED
# tensorflow/core/framework/tensor.proto TensorProto { DataType dtype = 1; repeated bytes
# string_val = 8; }, attr_value.proto AttrValue { TensorProto tensor = 8; }; NodeDef's
# map<string, AttrValue> attr = 5 is on the wire a repeated entry { key = 1; value = 2; }.
msg("TensorProto", [("dtype", 1, F.TYPE_INT32, OPT, None),
                    ("string_val", 8, F.TYPE_BYTES, REP, None)])
msg("AttrValue", [("tensor", 8, F.TYPE_MESSAGE, OPT, "TensorProto")])
msg("AttrEntry", [("key", 1, F.TYPE_STRING, OPT, None),
                  ("value", 2, F.TYPE_MESSAGE, OPT, "AttrValue")])
msg("NodeDef", [("name", 1, F.TYPE_STRING, OPT, None), ("op", 2, F.TYPE_STRING, OPT, None),
                ("input", 3, F.TYPE_STRING, REP, None), ("device", 4, F.TYPE_STRING, OPT, None),
                ("attr", 5, F.TYPE_MESSAGE, REP, "AttrEntry")])
msg("OpDef", [("name", 1, F.TYPE_STRING, OPT, None)])
msg("FunctionDef", [("signature", 1, F.TYPE_MESSAGE, OPT, "OpDef"),
                    ("node_def", 3, F.TYPE_MESSAGE, REP, "NodeDef")])
msg("FunctionDefLibrary", [("function", 1, F.TYPE_MESSAGE, REP, "FunctionDef")])
msg("GraphDef", [("node", 1, F.TYPE_MESSAGE, REP, "NodeDef"),
                 ("library", 2, F.TYPE_MESSAGE, OPT, "FunctionDefLibrary")])
msg("MetaInfoDef", [("tags", 4, F.TYPE_STRING, REP, None)])
msg("MetaGraphDef", [("meta_info_def", 1, F.TYPE_MESSAGE, OPT, "MetaInfoDef"),
                     ("graph_def", 2, F.TYPE_MESSAGE, OPT, "GraphDef")])
msg("SavedModel", [("saved_model_schema_version", 1, F.TYPE_INT64, OPT, None),
                   ("meta_graphs", 2, F.TYPE_MESSAGE, REP, "MetaGraphDef")])
msg("SavedObject", [("node_id", 2, F.TYPE_INT32, OPT, None),
                    ("node_path", 3, F.TYPE_STRING, OPT, None),
                    ("identifier", 4, F.TYPE_STRING, OPT, None),
                    ("metadata", 5, F.TYPE_STRING, OPT, None)])
msg("SavedMetadata", [("nodes", 1, F.TYPE_MESSAGE, REP, "SavedObject")])

pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
factory = message_factory.MessageFactory(pool)
C = {n: factory.GetPrototype(pool.FindMessageTypeByName("stgtf." + n))
     for n in ("SavedModel", "NodeDef", "FunctionDef", "SavedMetadata")}

# The ops of a TF2 Keras SavedModel: variables, the saver, and a Dense layer's forward pass
SAVER = ["Const", "Placeholder", "StringJoin", "ShardedFilename", "SaveV2", "RestoreV2",
         "MergeV2Checkpoints", "Identity", "NoOp", "StaticRegexFullMatch", "Select"]
FORWARD = ["Placeholder", "ReadVariableOp", "MatMul", "BiasAdd", "Relu", "Identity",
           "StatefulPartitionedCall", "VarHandleOp", "AssignVariableOp"]


def saved_model(graph_ops, functions, save_path=None):
    sm = C["SavedModel"](saved_model_schema_version=1)
    mg = sm.meta_graphs.add()
    mg.meta_info_def.tags.append("serve")
    for i, op in enumerate(graph_ops):
        mg.graph_def.node.add(name="n%d" % i, op=op)
    if save_path is not None:
        # TF1's Saver: save/Const holds the default file name and feeds SaveV2 and RestoreV2
        c = mg.graph_def.node.add(name="save/Const", op="Const")
        a = c.attr.add(key="value")
        a.value.tensor.dtype = 7
        a.value.tensor.string_val.append(save_path.encode())
        for op in ("SaveV2", "RestoreV2"):
            mg.graph_def.node.add(name="save/" + op, op=op,
                                  input=["save/Const:0", "save/tensor_names"])
    for fname, ops in functions:
        fn = mg.graph_def.library.function.add()
        fn.signature.name = fname
        for i, op in enumerate(ops):
            fn.node_def.add(name="%s_%d" % (fname, i), op=op)
    return sm.SerializeToString()


def keras_metadata(objects):
    md = C["SavedMetadata"]()
    for i, (ident, meta) in enumerate(objects):
        md.nodes.add(node_id=i, node_path="root" if i == 0 else "root.layer-%d" % i,
                     identifier=ident, metadata=json.dumps(meta))
    return md.SerializeToString()


DENSE_META = {"name": "dense", "trainable": True, "expects_training_arg": False,
              "dtype": "float32", "class_name": "Dense",
              "config": {"name": "dense", "units": 2, "activation": "relu"}}
LAMBDA_META = {"name": "lambda", "trainable": True, "class_name": "Lambda",
               "config": {"name": "lambda", "function": ["4wEAAAAAAAAA\n", None, None],
                          "function_type": "lambda", "module": "__main__"}}
MODEL_META = {"name": "sequential", "class_name": "Sequential",
              "config": {"name": "sequential", "layers": []}}

CASES = {
    "ok-tf2-keras": (SAVER, [("__inference_call_123", FORWARD), ("__inference_save_45", SAVER)],
                     [("_tf_keras_sequential", MODEL_META), ("_tf_keras_layer", DENSE_META)]),
    "ok-tf1-graph": (FORWARD + SAVER, [], None, "model"),
    "bad-tf_op_unsafe-const-path": (FORWARD, [], None, "/etc/passwd"),
    "bad-tf_op_unsafe-function": (SAVER, [("__inference_call_9", FORWARD + ["ReadFile"])], None),
    "bad-tf_op_unsafe-graph": (SAVER + ["WriteFile", "MatchingFiles"], [], None),
    "bad-tf_pyfunc": (SAVER, [("__inference_call_7", FORWARD + ["EagerPyFunc"])], None),
    "bad-keras_lambda-metadata": (SAVER, [("__inference_call_1", FORWARD)],
                                  [("_tf_keras_sequential", MODEL_META),
                                   ("_tf_keras_layer", LAMBDA_META)]),
}

out = sys.argv[1]
for case, spec in CASES.items():
    graph_ops, functions, meta = spec[:3]
    os.makedirs(os.path.join(out, case))
    with open(os.path.join(out, case, "saved_model.pb"), "wb") as fh:
        fh.write(saved_model(graph_ops, functions, spec[3] if len(spec) > 3 else None))
    if meta is not None:
        with open(os.path.join(out, case, "keras_metadata.pb"), "wb") as fh:
            fh.write(keras_metadata(meta))

# read back with protobuf: the ops each file holds
for case in sorted(CASES):
    sm = C["SavedModel"]()
    with open(os.path.join(out, case, "saved_model.pb"), "rb") as fh:
        sm.ParseFromString(fh.read())
    ops = [n.op for mg in sm.meta_graphs for n in mg.graph_def.node]
    ops += [n.op for mg in sm.meta_graphs for f in mg.graph_def.library.function
            for n in f.node_def]
    print(case, " ".join(sorted(set(ops))))
