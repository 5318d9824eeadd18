#!/usr/bin/python3
"""Differential test of stguard's .npy header reader against numpy.lib.format.

Writes .npy files of three kinds into DIR and compares, file by file, what the test driver
npy_probe (parser/npy.c) reads with what numpy 1.24 reads (the same calls numpy.load makes with
allow_pickle=True: read_magic, _check_version, _read_array_header -> descr_to_dtype):

- `save_*`: numpy.save / format.write_array of real arrays of every dtype kind (numeric in both
  byte orders, bool, datetime, strings, void, object, subarrays, structured with objects at any
  depth, titles, aligned padding, Fortran order, 0-d and empty arrays, versions 1.0/2.0/3.0);
- `hand_*`: hand-written headers with other spellings numpy accepts or refuses;
- `mut_*`: seeded random mutations of those headers.

Rules: when stguard accepts a header, numpy must accept it too and agree on has_object,
itemsize, element count, fortran_order, ndim and the data offset. When numpy accepts a header
stguard refuses, that is failing closed; it is allowed only for mutations and for hand-written
spellings marked `closed` below, never for a numpy.save output.

Usage: npy_differential.py PROBE DIR SEED [MUTATIONS]
       npy_differential.py --evil DIR   (malicious object-dtype fixtures, see EVIL)
"""
import json
import os
import random
import subprocess
import sys
import warnings

import numpy as np
from numpy.lib import format as npf

warnings.simplefilter("ignore")


def numpy_reading(path):
    try:
        with open(path, "rb") as fp:
            version = npf.read_magic(fp)
            npf._check_version(version)
            shape, fortran, dtype = npf._read_array_header(fp, version, max_header_size=2**64)
            off = fp.tell()
            if len(shape):  # read_array multiplies the dimensions before reading any data
                np.multiply.reduce(shape, dtype=np.int64)
    except Exception as e:  # numpy refuses the header: nothing is loaded
        return {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
    count, known = 1, True
    for d in shape:
        if d < 0:
            known = False
        count *= int(d)
    if count >= 2**64 or count < 0:
        known = False
    r = {"ok": True, "has_object": bool(dtype.hasobject), "itemsize": int(dtype.itemsize),
         "count_known": known, "fortran_order": bool(fortran), "ndim": len(shape),
         "data_offset": off}
    if known:
        r["count"] = count
    return r


def header_bytes(text, version):
    """A .npy prefix around header text, padded as numpy pads it."""
    enc = text.encode("utf8" if version == 3 else "latin1")
    pre = b"\x93NUMPY" + bytes([version, 0])
    hl = 2 if version == 1 else 4
    pad = (-(len(pre) + hl + len(enc) + 1)) % 64
    enc = enc + b" " * pad + b"\n"
    if version == 1 and len(enc) > 0xFFFF:
        enc = enc[:0xFFFF]
    n = len(enc).to_bytes(hl, "little")
    return pre + n + enc


def save_fixtures(out):
    def dt(x, **kw):
        return np.dtype(x, **kw)
    kinds = ["?", "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
             "f16", "c8", "c16", "c32", ">i4", ">f8", ">c16", "<u2", "M8[ns]", "M8[D]",
             ">m8[s]", "m8[us]", "S5", "U3", ">U2", "V7", "O"]
    arrays = {}
    for k in kinds:
        d = dt(k)
        arrays["scalar_" + k.replace("[", "_").replace("]", "").replace(">", "be").replace(
            "<", "le").replace("?", "bool")] = np.zeros((2, 3), dtype=d)
    structured = {
        "rec_plain": [("a", "<f4"), ("b", ">i8"), ("c", "S3")],
        "rec_object": [("a", "<f4"), ("b", "O")],
        "rec_nested_object": [("a", "<f4"), ("b", [("c", "<i2"), ("d", [("e", "O")])])],
        "rec_subarray": [("a", "<f4", (3,)), ("b", "<i2", (2, 2))],
        "rec_subarray_object": [("a", "O", (2,))],
        "rec_titles": [(("title a", "a"), "<f4"), (("t", "b"), "O")],
        "rec_unicode": [("a", "U4"), ("b", "M8[ms]")],
        "rec_deep": [("l0", [("l1", [("l2", [("l3", [("l4", "<f8")])])])])],
    }
    for name, descr in structured.items():
        arrays[name] = np.zeros(4, dtype=dt(descr))
    arrays["rec_aligned"] = np.zeros(3, dtype=dt([("a", "u1"), ("b", "<f8"), ("c", "u1")],
                                                 align=True))
    arrays["rec_offsets"] = np.zeros(3, dtype=dt({"names": ["x", "y"], "formats": ["<i4", "O"],
                                                  "offsets": [0, 16], "itemsize": 32}))
    arrays["subarray_top"] = np.zeros(2, dtype=dt(("<f4", (3,))))
    arrays["zero_d"] = np.array(3.5)
    arrays["empty"] = np.zeros((0, 5), dtype="<i4")
    arrays["fortran"] = np.asfortranarray(np.arange(12, dtype="<f8").reshape(3, 4))
    arrays["object_list"] = np.array([[1, 2], "x", None], dtype=object)
    arrays["strings_big"] = np.array(["a" * 40, "b"], dtype="S40")
    n = 0
    for name, a in arrays.items():
        for version in (1, 2, 3):
            path = os.path.join(out, "save_%s_v%d.npy" % (name, version))
            with open(path, "wb") as f:
                npf.write_array(f, a, version=(version, 0), allow_pickle=True)
            n += 1
    # a field name only version 3 can hold (numpy.save picks 3.0 itself)
    a = np.zeros(2, dtype=dt([("\u00e9t\u00e9", "<f4"), ("\u4e2d", "O")]))
    np.save(os.path.join(out, "save_unicode_names.npy"), a, allow_pickle=True)
    return n + 1


# (name, header text, closed): closed = a spelling numpy may accept that stguard refuses
# (fails closed, documented in docs/pickle.md).
def shape_hdr(descr, shape="(2,)", order="False"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, order, shape)


HAND = [
    ("obj_object", shape_hdr("'object'"), False),
    ("obj_object_", shape_hdr("'object_'"), False),
    ("obj_object0", shape_hdr("'object0'"), False),
    ("obj_O8", shape_hdr("'O8'"), False),
    ("obj_O4", shape_hdr("'>O4'"), False),
    ("obj_pipeO", shape_hdr("'|O'"), False),
    ("obj_ltO", shape_hdr("'<O'"), False),
    ("obj_eqO", shape_hdr("'=O'"), False),
    ("obj_hex_escape", shape_hdr("'\\x4f'"), False),
    ("obj_u_escape", shape_hdr("'\\u004f'"), False),
    ("obj_octal", shape_hdr("'\\117'"), False),
    ("obj_uprefix", shape_hdr("u'O'"), False),
    ("obj_raw", shape_hdr("r'O'"), False),
    ("obj_dq", shape_hdr('"O"'), False),
    ("obj_paren", shape_hdr("('O')"), False),
    ("obj_subarray", shape_hdr("('O', (2,))"), False),
    ("obj_subarray_int", shape_hdr("('|O', 3)"), False),
    ("obj_subarray_extra", shape_hdr("('O', (2,), 'x')"), False),
    ("obj_nested", shape_hdr("[('a', '<f4'), ('b', [('c', 'O')])]"), False),
    ("obj_nested_list", shape_hdr("[['a', '<f4'], ['b', [['c', 'object']]]]"), False),
    ("obj_field_sub", shape_hdr("[('a', 'O', (2, 2))]"), False),
    ("obj_title", shape_hdr("[(('t', 'a'), 'O')]"), False),
    ("obj_pad_name", shape_hdr("[('', '|O')]"), False),
    ("obj_deep", shape_hdr("[('a', " * 30 + "'O'" + ")]" * 30), False),
    ("obj_str_field", shape_hdr("['aO']"), True),
    ("obj_comma_str", shape_hdr("'i4,O'"), True),
    ("obj_shape_str", shape_hdr("'(2,)O'"), True),
    ("obj_named_escape", shape_hdr("'\\N{LATIN CAPITAL LETTER O}'"), True),
    ("obj_dict_descr", shape_hdr("{'aO': 1}"), True),
    ("obj_neg_shape", shape_hdr("'O'", "(-1,)"), False),
    ("obj_bool_shape", shape_hdr("'O'", "(True, 2)"), False),
    ("plain_f4", shape_hdr("'<f4'"), False),
    ("plain_float32", shape_hdr("'float32'"), False),
    ("plain_d", shape_hdr("'d'"), False),
    ("plain_longdouble", shape_hdr("'longdouble'"), False),
    ("plain_c", shape_hdr("'c'"), False),
    ("plain_a5", shape_hdr("'a5'"), False),
    ("plain_S01", shape_hdr("'S01'"), False),
    ("plain_U", shape_hdr("('U', 5)"), False),
    ("plain_dt_name", shape_hdr("'<datetime64[ns]'"), False),
    ("plain_dt_mult", shape_hdr("'M8[10ms]'"), False),
    ("plain_pad", shape_hdr("[('a', '<f4'), ('', '|V4')]"), False),
    ("plain_hex_shape", shape_hdr("'<f4'", "(0x2, 0o3, 0b1, 1_0)"), False),
    ("plain_long_suffix", shape_hdr("'<f4'", "(2L, 3L)"), False),
    ("plain_neg_zero", shape_hdr("'<f4'", "(-0, 2)"), False),
    ("plain_comment", "{'descr': '<f4', # c\n 'fortran_order': False, 'shape': (2,)}", False),
    ("plain_newlines", "{\n'descr':\n'<f4',\n'fortran_order': False, 'shape': (2,)\n}", False),
    ("plain_leading_ws", "  \t{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", False),
    ("plain_leading_nl", "\n{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", False),
    ("plain_leading_nl_indent",
     "\n  {'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", False),
    ("plain_paren_dict", "({'descr': '<f4', 'fortran_order': False, 'shape': (2,)})", False),
    ("plain_paren_shape", shape_hdr("'<f4'", "((2), (3))"), False),
    ("dup_key_last_wins",
     "{'descr': '<f4', 'descr': '|O', 'fortran_order': False, 'shape': (2,)}", False),
    ("dup_key_last_plain",
     "{'descr': '|O', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", False),
    ("key_escape", "{'d\\x65scr': 'O', 'fortran_order': False, 'shape': (2,)}", False),
    ("bad_extra_key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", False),
    ("bad_missing_key", "{'descr': '<f4', 'shape': (2,)}", False),
    ("bad_bytes_key", "{b'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", False),
    ("bad_order_int", shape_hdr("'<f4'", "(2,)", "0"), False),
    ("bad_shape_list", shape_hdr("'<f4'", "[2]"), False),
    ("bad_shape_int", shape_hdr("'<f4'", "(2)"), False),
    ("bad_shape_float", shape_hdr("'<f4'", "(2.0,)"), False),
    ("bad_shape_big", shape_hdr("'O'", "(99999999999999999999,)"), False),
    ("bad_set", "{'descr', 'fortran_order'}", False),
    ("bad_list_top", "['descr', '<f4']", False),
    ("bad_triple", shape_hdr("'''O'''"), True),
    ("bad_concat", shape_hdr("'<' 'f4'"), True),
    ("bad_fstring", shape_hdr("f'O'"), False),
    ("bad_name", shape_hdr("object"), False),
    ("bad_call", shape_hdr("__import__('os')"), False),
    ("bad_nested_200", shape_hdr("(" * 200 + "'O'" + ",)" * 200), False),
    ("ok_nested_150", shape_hdr("[('a', " * 60 + "'<f4'" + ")]" * 60), False),
    ("bad_typestr", shape_hdr("'<f3'"), False),
    ("bad_O2", shape_hdr("'O2'"), False),
    ("bad_space", shape_hdr("' f4'"), False),
    ("bad_subarray_neg", shape_hdr("('<f4', (-1,))"), False),
    ("bad_dup_field", shape_hdr("[('a', '<f4'), ('a', 'O')]"), True),
    ("bad_field_name_int", shape_hdr("[(1, 'O')]"), False),
    ("bad_unclosed", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", False),
    ("bad_nul", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\x00", False),
    ("bad_escape", shape_hdr("'\\x4'"), False),
    ("bad_bytes_descr", shape_hdr("b'<f4'"), False),
    ("bad_trailing", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", False),
    ("bad_minor_version", None, False),
]

ALPHABET = list("'\"(),:[]{} \n#\\xuOfi48<>|=_-L0123ab") + ["True", "False", "None", "'O'",
                                                              "('O', (2,))", "[('a', 'O')]"]


def write_hand(out, rng, mutations):
    expect_closed = {}
    texts = []
    for name, text, closed in HAND:
        for version in (1, 3):
            path = os.path.join(out, "hand_%s_v%d.npy" % (name, version))
            if text is None:
                data = header_bytes(shape_hdr("'<f4'"), version)
                data = data[:7] + b"\x01" + data[8:] + b"\0" * 8
            else:
                data = header_bytes(text, version) + b"\0" * 64
                texts.append((text, version))
            with open(path, "wb") as f:
                f.write(data)
            expect_closed[path] = closed
    for i in range(mutations):
        text, version = rng.choice(texts)
        t = list(text)
        for _ in range(rng.randint(1, 3)):
            op = rng.randrange(3)
            pos = rng.randrange(len(t) + 1)
            if op == 0 and pos < len(t):
                t[pos] = rng.choice(ALPHABET)
            elif op == 1:
                t.insert(pos, rng.choice(ALPHABET))
            elif pos < len(t):
                del t[pos]
        path = os.path.join(out, "mut_%05d_v%d.npy" % (i, version))
        with open(path, "wb") as f:
            f.write(header_bytes("".join(t), version) + b"\0" * 64)
        expect_closed[path] = True
    return expect_closed


# Object dtypes in every spelling, each followed by a pickle that calls os.system: numpy.load
# (allow_pickle=True) unpickles it. Only ever loaded under tests/loaders/reach.py.
EVIL_PAYLOAD = b"cos\nsystem\n(S'true'\ntR."
EVIL = {
    "object": "'object'",
    "object_": "'object_'",
    "O8": "'>O8'",
    "escaped": "'\\x4f'",
    "subarray": "('O', (2,))",
    "nested": "[('a', '<f4'), ('b', [('c', [('d', 'O')])])]",
    "title": "[(('t', 'a'), '|O')]",
    "dupkey": "'<f4', 'descr': '|O'",
}


def write_evil(out):
    os.makedirs(out, exist_ok=True)
    for name, descr in EVIL.items():
        for version in (1, 3):
            with open(os.path.join(out, "evil_%s_v%d.npy" % (name, version)), "wb") as f:
                f.write(header_bytes(shape_hdr(descr), version) + EVIL_PAYLOAD)
    return 0


def main():
    if sys.argv[1] == "--evil":
        return write_evil(sys.argv[2])
    probe, out, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mutations = int(sys.argv[4]) if len(sys.argv) > 4 else 3000
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    nsave = save_fixtures(out)
    closed_ok = write_hand(out, rng, mutations)
    files = sorted(os.path.join(out, f) for f in os.listdir(out))
    res = subprocess.run([probe] + files, check=True, capture_output=True, text=True)
    ours = {}
    for line in res.stdout.splitlines():
        r = json.loads(line)
        ours[r["file"]] = r
    fails, closed, agree = [], 0, 0
    for path in files:
        theirs, mine = numpy_reading(path), ours[path]
        name = os.path.basename(path)
        if mine["ok"]:
            if not theirs["ok"]:
                fails.append("%s: stguard accepts a header numpy refuses (%s)" %
                             (name, theirs["error"]))
                continue
            for k in ("has_object", "itemsize", "count_known", "fortran_order", "ndim",
                      "data_offset"):
                if mine[k] != theirs[k]:
                    fails.append("%s: %s stguard %r numpy %r" % (name, k, mine[k], theirs[k]))
            if theirs["count_known"] and mine["count"] != theirs["count"]:
                fails.append("%s: count stguard %r numpy %r" % (name, mine["count"],
                                                                theirs["count"]))
            agree += 1
        elif theirs["ok"]:
            if name.startswith("save_") or not closed_ok.get(path, False):
                fails.append("%s: numpy reads it (%r) but stguard refuses: %s at %s" %
                             (name, theirs, mine.get("what"), mine.get("offset")))
            closed += 1
        else:
            agree += 1
    print("seed %d: %d files (%d numpy.save), %d agree, %d fail closed, %d mismatches" %
          (seed, len(files), nsave, agree, closed, len(fails)))
    for f in fails[:40]:
        print("FAIL", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
