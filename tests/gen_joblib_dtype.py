#!/usr/bin/python3
"""joblib arrays whose dtype state decides how joblib reads the bytes after the wrapper.

benign_*.joblib: joblib.dump of record (structured) arrays, nested, with subarrays, with object
fields, Fortran order, strings; stguard must read them (never invalid or unsafe).
evil_flags_*.joblib: a joblib.dump of a record array whose pickled dtype state has its flags
(state[7]) set to NPY_ITEM_HASOBJECT: numpy then says dtype.hasobject, and joblib's read_array
pickle.load-s the array bytes, here a pickle calling os.system. Only ever loaded under
tests/loaders/reach.py.

Usage: gen_joblib_dtype.py DIR
"""
import os
import sys

import joblib
import numpy as np

PAYLOAD = b"cos\nsystem\n(S'true'\ntR."


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    benign = {
        "rec": np.zeros(3, dtype=[("a", "<f8"), ("b", "<i4")]),
        "rec_nested": np.zeros(2, dtype=[("a", [("b", "<f4"), ("c", "S3")]), ("d", "<u2")]),
        "rec_subarray": np.zeros(2, dtype=[("a", "<f4", (3,)), ("b", "<i8")]),
        "rec_object": np.array([(1.0, "x"), (2.0, None)], dtype=[("a", "<f8"), ("b", "O")]),
        "rec_fortran": np.asfortranarray(np.zeros((2, 3), dtype=[("a", "<f8")])),
        "subarray_top": np.zeros(2, dtype=("<f4", (2,))),
        "strings": np.array(["abc", "d"]),
        "bytes": np.array([b"ab", b"c"]),
        "dict_of_recs": {"x": np.zeros(2, dtype=[("a", "<f8")]), "y": np.arange(4)},
    }
    for name, obj in benign.items():
        joblib.dump(obj, os.path.join(out, "benign_%s.joblib" % name))
    # evil: patch the record dtype's flags (K\x10 after elsize 8, alignment 1) to 1
    for itemsize, fields in ((8, [("a", "<f8")]), (16, [("a", "<f8"), ("b", "<i8")])):
        path = os.path.join(out, "evil_flags_%d.joblib" % itemsize)
        joblib.dump(np.zeros(2, dtype=fields), path)
        data = open(path, "rb").read()
        state_tail = b"K" + bytes([itemsize]) + b"K\x01K\x10t"
        assert data.count(state_tail) == 1, data
        data = data.replace(state_tail, b"K" + bytes([itemsize]) + b"K\x01K\x01t")
        # the array bytes (padding-length byte, padding, data) become a pickle
        at = data.index(b"numpy_array_alignment_bytes")
        build = data.index(b"ub", at) + 2
        data = data[:build] + PAYLOAD + b"."
        with open(path, "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
