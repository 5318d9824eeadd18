#!/usr/bin/python3
"""Writes Keras-shaped HDF5 files and .keras zips with h5py and zipfile (no Keras: Debian does
not package it), in the layouts Keras' own writers give, into the folder named by argv[1]:

- legacy .h5 (keras-team/keras at 3422977a5e38fb2f7709aaa9a08e47f0c43d0f60,
  keras/src/legacy/saving/legacy_h5_format.py save_model_to_hdf5, lines 46-66: root attributes
  from saving_utils.model_metadata, dicts json.dumps'ed and encoded to bytes, a model_weights
  group with backend and keras_version attributes at lines 213-221; load_model_from_hdf5,
  lines 118-141, reads f.attrs.get("model_config") back and json-decodes it);
- .keras (keras/src/saving/saving_lib.py _save_model_to_fileobj, lines 198-267: a zip written
  with zipfile's defaults (stored) holding metadata.json, config.json and model.weights.h5,
  which H5IOStore fills with groups <path>/vars and one dataset per variable, lines 1340-1475).

Each file name says what stguard must say: ok-* are ok, bad-<code>-* carry <code>. Every HDF5
layout h5py writes is covered: libver earliest (superblock 0, version 1 headers) and latest
(superblock 3, OHDR headers), fixed-length (bytes) and variable-length (str) strings, a user
block, and many attributes (dense storage under libver latest). The script reads every file back
with h5py and prints, per file, whether h5py sees a root model_config."""
import io
import json
import os
import sys
import zipfile

import h5py
import numpy as np

OUT = sys.argv[1]

DT = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
      "registered_name": None}


def dense(name, units, act="relu"):
    return {"module": "keras.layers", "class_name": "Dense",
            "config": {"name": name, "trainable": True, "dtype": DT, "units": units,
                       "activation": act, "use_bias": True,
                       "kernel_initializer": {"module": "keras.initializers",
                                              "class_name": "GlorotUniform",
                                              "config": {"seed": None}, "registered_name": None},
                       "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros",
                                            "config": {}, "registered_name": None}},
            "registered_name": None, "build_config": {"input_shape": [None, 4]}}


def sequential(layers):
    return {"module": "keras", "class_name": "Sequential",
            "config": {"name": "sequential", "trainable": True, "dtype": DT,
                       "layers": [{"module": "keras.layers", "class_name": "InputLayer",
                                   "config": {"batch_shape": [None, 4], "dtype": "float32",
                                              "name": "input_layer"},
                                   "registered_name": None}] + layers},
            "registered_name": None, "build_config": {"input_shape": [None, 4]},
            "compile_config": {"optimizer": {"module": "keras.optimizers", "class_name": "Adam",
                                             "config": {"learning_rate": 0.001},
                                             "registered_name": None},
                               "loss": "mean_squared_error", "metrics": None}}


# Keras 2 (tf.keras) model_config and training_config, as legacy_h5_format writes them.
K2 = {"class_name": "Sequential",
      "config": {"name": "sequential",
                 "layers": [{"class_name": "InputLayer",
                             "config": {"batch_input_shape": [None, 4], "dtype": "float32",
                                        "sparse": False, "ragged": False, "name": "dense_input"}},
                            {"class_name": "Dense",
                             "config": {"name": "dense", "trainable": True, "units": 2,
                                        "activation": "relu",
                                        "kernel_initializer": {"class_name": "GlorotUniform",
                                                               "config": {"seed": None}}}}]},
      "keras_version": "2.12.0", "backend": "tensorflow"}
K2_TRAIN = {"loss": "mse", "metrics": ["mae"], "optimizer_config":
            {"class_name": "Adam", "config": {"learning_rate": 0.001}}}
K2_LAMBDA = {"class_name": "Sequential",
             "config": {"name": "sequential",
                        "layers": [{"class_name": "Lambda",
                                    "config": {"name": "lambda", "trainable": True,
                                               "function": ["4wEAAAAAAAAAAAAAAAEAAAACAAAAQwAAAHMI\n",
                                                            None, None],
                                               "function_type": "lambda", "module": "__main__",
                                               "output_shape": None,
                                               "output_shape_type": "raw", "arguments": {}}}]}}
K2_OS = {"class_name": "Sequential",
         "config": {"layers": [{"class_name": "Dense",
                                "config": {"units": 1,
                                           "kernel_initializer": {"module": "os",
                                                                  "class_name": "system",
                                                                  "config": {},
                                                                  "registered_name": None}}}]}}


def legacy_h5(path, config, libver, vlen=False, train=None, userblock=0, extra_attrs=0):
    kw = {"libver": libver}
    if userblock:
        kw["userblock_size"] = userblock
    with h5py.File(path, "w", **kw) as f:
        for i in range(extra_attrs):
            f.attrs["note_%03d" % i] = np.int64(i)
        f.attrs["backend"] = "tensorflow" if vlen else b"tensorflow"
        f.attrs["keras_version"] = "2.12.0" if vlen else b"2.12.0"
        text = json.dumps(config)
        f.attrs["model_config"] = text if vlen else text.encode("utf8")
        if train is not None:
            f.attrs["training_config"] = json.dumps(train).encode("utf8")
        g = f.create_group("model_weights")
        g.attrs["backend"] = b"tensorflow"
        g.attrs["keras_version"] = b"2.12.0"
        g.attrs["layer_names"] = np.array([b"dense"])
        d = g.create_group("dense")
        d.attrs["weight_names"] = np.array([b"dense/kernel:0", b"dense/bias:0"])
        d.create_dataset("dense/kernel:0", data=np.ones((4, 2), dtype=np.float32))
        d.create_dataset("dense/bias:0", data=np.zeros((2,), dtype=np.float32))


def weights_h5(libver):
    """model.weights.h5 as H5IOStore writes it: groups <path>/vars, datasets 0, 1, ..."""
    b = io.BytesIO()
    with h5py.File(b, "w", libver=libver) as f:
        for layer in ("layers/dense", "layers/dense_1"):
            v = f.create_group(layer).create_group("vars")
            v["0"] = np.ones((4, 8), dtype=np.float32)
            v["1"] = np.zeros((8,), dtype=np.float32)
        f.create_group("optimizer").create_group("vars")["0"] = np.int64(0)
    return b.getvalue()


def keras_zip(path, config, libver):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("metadata.json", json.dumps({"keras_version": "3.5.0",
                                                 "date_saved": "2024-09-01@10:00:00"}))
        zf.writestr("config.json", json.dumps(config))
        zf.writestr("model.weights.h5", weights_h5(libver))


LAMBDA3 = {"module": "keras.layers", "class_name": "Lambda",
           "config": {"name": "lambda", "function": {"class_name": "__lambda__",
                                                     "config": {"code": "4wEAAAAAAAAA",
                                                                "defaults": None,
                                                                "closure": None}},
                      "arguments": {}}, "registered_name": None}

for lib in ("earliest", "latest"):
    legacy_h5(os.path.join(OUT, "ok-k2-bytes-%s.h5" % lib), K2, lib, train=K2_TRAIN)
    legacy_h5(os.path.join(OUT, "ok-k2-vlen-%s.h5" % lib), K2, lib, vlen=True)
    legacy_h5(os.path.join(OUT, "ok-k3-%s.h5" % lib), sequential([dense("d", 2)]), lib)
    legacy_h5(os.path.join(OUT, "bad-keras_lambda-%s.h5" % lib), K2_LAMBDA, lib)
    legacy_h5(os.path.join(OUT, "bad-keras_lambda-vlen-%s.h5" % lib), K2_LAMBDA, lib, vlen=True)
    legacy_h5(os.path.join(OUT, "bad-keras_module_unsafe-%s.h5" % lib), K2_OS, lib)
    legacy_h5(os.path.join(OUT, "bad-keras_lambda-userblock-%s.h5" % lib), K2_LAMBDA, lib,
              userblock=512)
    legacy_h5(os.path.join(OUT, "bad-keras_lambda-many-%s.h5" % lib), K2_LAMBDA, lib,
              extra_attrs=40)
    legacy_h5(os.path.join(OUT, "ok-k2-many-%s.h5" % lib), K2, lib, extra_attrs=40)
    with open(os.path.join(OUT, "ok-weights-%s.h5" % lib), "wb") as fh:
        fh.write(weights_h5(lib))
    keras_zip(os.path.join(OUT, "ok-seq-%s.keras" % lib), sequential([dense("d", 8),
                                                                    dense("d1", 1, "linear")]), lib)
    keras_zip(os.path.join(OUT, "bad-keras_lambda-%s.keras" % lib), sequential([LAMBDA3]), lib)

# a model_config of 170 KB (h5py keeps it in the global heap) with a Lambda at its end
BIG = {"class_name": "Sequential",
       "config": {"layers": [{"class_name": "Dense",
                              "config": {"name": "d%d" % i, "units": 4, "activation": "relu"}}
                             for i in range(2000)] + K2_LAMBDA["config"]["layers"]}}
for lib in ("earliest", "latest"):
    legacy_h5(os.path.join(OUT, "bad-keras_lambda-big-%s.h5" % lib), BIG, lib)
    legacy_h5(os.path.join(OUT, "ok-k2-many200-%s.h5" % lib), K2, lib, extra_attrs=200)

# training_config naming os (compile arguments are deserialized too)
legacy_h5(os.path.join(OUT, "bad-keras_module_unsafe-train.h5"), K2, "earliest",
          train={"loss": {"module": "os", "class_name": "function", "config": "system"}})

# read back: does h5py see a root model_config?
for name in sorted(os.listdir(OUT)):
    if name.endswith(".h5"):
        with h5py.File(os.path.join(OUT, name), "r") as f:
            mc = f.attrs.get("model_config")
            if isinstance(mc, bytes):
                mc = mc.decode("utf8")
            print(name, "model_config" if mc is not None else "none",
                  len(json.loads(mc)["config"]["layers"]) if mc is not None else 0)
