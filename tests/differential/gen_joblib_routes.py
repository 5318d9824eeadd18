#!/usr/bin/python3
"""The array after a joblib NumpyArrayWrapper's BUILD, on every route a loader reads it.

Writes into DIR:
- benign/*: joblib.dump of seeded random arrays (several dtypes and shapes, object arrays, every
  compressor joblib has here, protocols 2-5); stguard must call them ok or warn.
- evil_<loader>_*: hand-made pickles whose payload (a call of os.system) sits where a reader
  that mis-sizes the wrapper's array, or skips it on the wrong route, would not look:
  * joblib route (loader joblib): for each wrapper state shape (a list shape, numpy-scalar dims,
    17 dims, a (dict, None) state, a slot state that overrides the dict, more than 16 state
    entries, a wrapper built by REDUCE, dtype spellings 'uint8' 'B' '|u1' '<u1', an aliased
    state dict, a wrapper built twice), plain and with every compressor joblib 1.2 has
    (zlib, gzip, bz2, xz, lzma; lz4 needs a module Debian lacks): the array has exactly the
    bytes joblib reads (numpy.dtype and the state are the oracle), the payload follows it;
    shapes of numpy integer scalars as numpy pickles them (little- and big-endian) and lists
    (benign/shape_*: the same arrays then STOP, which joblib.load reads to the end), a numpy
    scalar whose dtype is built again after the scalar was made, a list changed after the
    memo's copy (the shape) was taken;
    and a grid of numpy.dtype(typestr, False, copy) with BUILD states of other element sizes
    and flags, each sized by what numpy itself makes of it (benign/grid_*: the same arrays of
    zero bytes, where the state is one numpy writes);
  * every other route (loaders torch, numpy, pickle, joblib): the payload right after the BUILD,
    inside what joblib's NumpyUnpickler would take for array bytes: torch zip data.pkl, legacy
    torch file, torch 0.1 tar member, .npy object array, plain pickle, gzip pickle (loader
    gzip: pickle.load(gzip.open(...))), joblib ZF, joblib side
    file (.npy named by an NDArrayWrapper).
Each evil file's loader is in DIR/evil.tsv (loader, file). Only ever loaded under
tests/loaders/reach.py's refusing hook.

Usage: gen_joblib_routes.py DIR [JOBLIB_DUMPS [TORCH_SAVES]]   (defaults 216 and 88, CI's size;
docs/pickle.md has the measured run at 1,500 and 800)
"""
import gzip
import io
import os
import pickle
import random
import struct
import sys
import tarfile
import zipfile
import zlib

import joblib
import numpy as np

PAYLOAD = b"cos\nsystem\n(S'true'\ntR."  # after the array: os.system('true'), then STOP
WRAPPER = b"cjoblib.numpy_pickle\nNumpyArrayWrapper\n"


def s(text):
    """SHORT_BINUNICODE-free protocol 2 str: BINUNICODE."""
    b = text.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def dtype(spelling):
    return b"cnumpy\ndtype\n" + s(spelling) + b"\x89\x88\x87R"


def tup(items):
    return b"(" + b"".join(items) + b"t"


def state_dict(pairs, full=True):
    """A state dict; full: with the subclass and order read_array needs besides."""
    if full:
        pairs = [("subclass", b"cnumpy\nndarray\n"), ("order", s("C"))] + list(pairs)
    return b"}(" + b"".join(s(k) + v for k, v in pairs) + b"u"


def wrapper_file(state_parts, nbytes, align=False, payload_in_array=False, prefix=b""):
    """PROTO 2, a wrapper made by NEWOBJ, BUILD(state), the array joblib reads, payload."""
    body = b"\x80\x02" + prefix + WRAPPER + b")\x81" + state_parts + b"b"
    array = (b"\x00" if align else b"") + bytes(nbytes)
    if payload_in_array:
        return body + b"0" + PAYLOAD
    return body + array + b"0" + PAYLOAD


def numpy_scalar(value, np_type, order="<"):
    """value as numpy pickles a scalar of np_type (protocol 3: numpy.core.multiarray.scalar of
    numpy.dtype(t, False, True) with its BUILD state, and the bytes); order '>' rewrites the
    state's byte order and the bytes to big-endian, which numpy then reads."""
    data = pickle.dumps(np_type(value), 3)[2:-1]
    if order == ">":
        raw = np_type(value).tobytes()
        head = b"C" + bytes([len(raw)])
        data = data.replace(b"X\x01\x00\x00\x00<", b"X\x01\x00\x00\x00>")
        data = data.replace(head + raw, head + raw[::-1])
    return data


def readable_shapes():
    """(name, shape pickle, array bytes): shapes of numpy integer scalars as numpy pickles
    them, and lists; stguard reads the dims exactly (joblib.load of the benign twin is the
    proof)."""
    yield "i8", tup([numpy_scalar(7, np.int64)]), 7
    yield "be_u1", tup([numpy_scalar(3, np.int64, ">"), numpy_scalar(2, np.uint8)]), 6
    yield "i2_mixed", tup([b"K\x02", numpy_scalar(300, np.int16), numpy_scalar(1, np.uint32)]), 600
    yield "i4_be", tup([numpy_scalar(258, np.int32, ">")]), 258
    # lists (numpy takes a list as a shape): APPENDS, APPEND, LIST
    yield "list_appends", b"]q\x01(K\x03K\x02e", 6
    yield "list_append", b"]K\x02a" + numpy_scalar(4, np.int16) + b"a", 8
    yield "list_opcode", b"(K\x05K\x01l", 5


def joblib_variations():
    """(name, pickle bytes) that joblib.load reads to the payload after the array."""
    u1 = dtype("u1")
    v = {}
    v["baseline"] = wrapper_file(state_dict([("dtype", u1), ("shape", tup([b"K\x05"]))]), 5)
    v["list_shape"] = wrapper_file(state_dict([("dtype", u1), ("shape", b"](K\x03K\x02e")]), 6)
    scalar = (b"cnumpy.core.multiarray\nscalar\n(" + dtype("<i8") + b"C\x08" +
              struct.pack("<q", 7) + b"tR")
    v["scalar_dim"] = wrapper_file(state_dict([("dtype", u1), ("shape", tup([scalar]))]), 7)
    for name, shape, nbytes in readable_shapes():
        v["shape_" + name] = wrapper_file(state_dict([("dtype", u1), ("shape", shape)]),
                                                 nbytes)
    # the dtype built again (through the memo) after the scalar was made: numpy read the dims
    # with the first state ('<'), the second ('>') is not what it used: not understood
    again = numpy_scalar(2, np.int64)  # memo 4: the dtype; 9: the scalar
    # a list changed after it was memoized: the memo's copy (the shape) is what joblib reads
    v["list_stale_copy"] = wrapper_file(
        state_dict([("dtype", u1), ("shape", b"h\x03")]), 4, prefix=b"]q\x03K\x04a0")
    v["scalar_rebuilt_dtype"] = wrapper_file(
        state_dict([("dtype", u1), ("shape", tup([b"h\x09"]))]), 2,
        prefix=again + b"0h\x04" + tup([b"K\x03", s(">"), b"NNN", b"J\xff\xff\xff\xff",
                                          b"J\xff\xff\xff\xff", b"K\x00"]) + b"b0")
    v["dims17"] = wrapper_file(state_dict([("dtype", u1), ("shape", tup([b"K\x01"] * 16 +
                                                                         [b"K\x03"]))]), 3)
    v["dict_none"] = wrapper_file(tup([state_dict([("dtype", u1), ("shape", tup([b"K\x04"]))]),
                                       b"N"]), 4)
    v["slot_override"] = wrapper_file(tup([state_dict([("dtype", u1), ("shape", tup([b"K\x01"]))]),
                                           state_dict([("shape", tup([b"K\x09"]))], False)]), 9)
    many = [("junk%d" % i, b"N") for i in range(17)]
    v["dict17"] = wrapper_file(state_dict(many + [("dtype", u1), ("shape", tup([b"K\x06"]))]), 6)
    for sp in ("uint8", "B", "|u1", "<u1"):
        v["dtype_" + sp.replace("|", "bar").replace("<", "lt")] = wrapper_file(
            state_dict([("dtype", dtype(sp)), ("shape", tup([b"K\x0b"]))]), 11)
    # an object array: joblib's read_array pickle.load-s it with the plain unpickler, so a
    # wrapper BUILD inside it is followed by opcodes, not by an array
    inner = wrapper_file(state_dict([("dtype", u1), ("shape", tup([b"K\x05"]))]), 5,
                         payload_in_array=True)
    v["inline_wrapper"] = wrapper_file(state_dict([("dtype", dtype("O8")),
                                                   ("shape", tup([b"K\x01"]))]), 0,
                                       payload_in_array=True)[:-len(b"0" + PAYLOAD)] + inner
    # REDUCE: __init__ runs, numpy_array_alignment_bytes = 16: a padding-length byte first
    v["reduce_built"] = (b"\x80\x02" + WRAPPER + tup([b"cnumpy\nndarray\n", tup([b"K\x02"]),
                                                      s("C"), u1]) + b"R}b" + b"\x00" +
                         bytes(2) + b"0" + PAYLOAD)
    # an aliased state dict: memoized holding shape (1,), then changed to (8,) on the stack;
    # BUILD takes the memo's copy, which is the same dict: joblib reads 8 bytes
    v["aliased_dict"] = (b"\x80\x02" + WRAPPER + b")\x81" + b"}q\x07(" + s("dtype") + u1 +
                         s("order") + s("C") + s("subclass") + b"cnumpy\nndarray\n" +
                         s("shape") + tup([b"K\x01"]) + b"u" + s("shape") + tup([b"K\x08"]) +
                         b"s0h\x07b" + bytes(8) + b"0" + PAYLOAD)
    # built twice: the second BUILD (through the memo) merges, joblib reads a second array
    st = state_dict([("dtype", u1), ("shape", tup([b"K\x02"]))])
    v["built_twice"] = (b"\x80\x02" + WRAPPER + b")\x81q\x09" + st + b"b" + bytes(2) + b"0h\x09" +
                        state_dict([("shape", tup([b"K\x05"]))], False) + b"b" + bytes(5) + b"0" +
                        PAYLOAD)
    return v


def dtype_grid():
    """numpy.dtype(typestr, False, copy) given a BUILD state (element size, flags): numpy's own
    itemsize and hasobject decide what joblib reads. Yields (name, pickle, benign or None):
    the pickle has the payload right after the array (or inside it, as the pickle joblib loads
    when hasobject); benign is the same array of zero bytes then STOP, or None when numpy's
    state is not the one numpy writes (a real dump never has it) or the array is objects."""
    for t in ("f8", "u1", "O8", "S5", "U2", "V8", "S0"):
        for copy in (False, True):
            natural = list(np.dtype(t).__reduce__()[2])
            for flags in (0, 1):
                for el in (natural[5], 3):
                    st = list(natural)
                    st[5], st[7] = el, flags
                    d = np.dtype(t, False, copy)
                    d.__setstate__(tuple(st))
                    fields = [b"K\x03", s(st[1]), b"NNN"]
                    fields += [b"J" + struct.pack("<i", v) for v in (st[5], st[6], st[7])]
                    pickled = (b"cnumpy\ndtype\n" + s(t) + b"\x89" + (b"\x88" if copy else b"\x89") +
                               b"\x87R" + tup(fields) + b"b")
                    head = (b"\x80\x02" + WRAPPER + b")\x81" +
                            state_dict([("dtype", pickled), ("shape", tup([b"K\x02"]))]) + b"b")
                    name = "grid_%s_copy%d_flags%d_el%d" % (t, copy, flags, el)
                    if d.hasobject:
                        yield name, head + b"\x80\x02" + PAYLOAD, None
                        continue
                    array = bytes(2 * d.itemsize)
                    # an O8 state without the flag: raw bytes as object pointers (joblib.load
                    # crashes on zeros): never benign
                    exact = el == natural[5] and natural[7] == flags and t != "O8"
                    if d.itemsize == 0:
                        continue  # read_array divides by the item size: the load fails
                    yield name, head + array + b"0" + PAYLOAD, head + array + b"." if exact else None


def write_compressed(path, data, compressor):
    """data as joblib 1.2 writes a file with this compressor: through joblib's own compressor
    file object (joblib/compressor.py, CompressorWrapper.compressor_file), or plain."""
    with open(path, "wb") as raw:
        if not compressor:
            raw.write(data)
            return
        wrapper = joblib.compressor._COMPRESSORS[compressor]
        with wrapper.compressor_file(raw, compresslevel=3) as f:
            f.write(data)


def npy_object(pickle_bytes):
    header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
    header += " " * (63 - len(header) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + pickle_bytes


def other_routes(out):
    """The payload right after the BUILD: a plain unpickler runs it on each of these routes."""
    inner = wrapper_file(state_dict([("dtype", dtype("u1")), ("shape", tup([b"K\x05"]))]), 5,
                         payload_in_array=True)
    rows = []

    def put(name, data, loader):
        path = os.path.join(out, name)
        with open(path, "wb") as f:
            f.write(data)
        rows.append((loader, path))

    put("evil_pickle_plain.pkl", inner, "pickle")
    put("evil_pickle_gzip.pkl.gz", gzip.compress(inner), "gzip")  # pickle.load(gzip.open(...))
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as z:
        z.writestr("archive/data.pkl", inner)
        z.writestr("archive/version", "3\n")
    put("evil_torch_zip.pt", zbuf.getvalue(), "torch")
    magic = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19."
    put("evil_torch_legacy.pt", magic + b"\x80\x02M\xe9\x03." + inner, "torch")
    tbuf = io.BytesIO()
    with tarfile.open(fileobj=tbuf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in (("sys_info", b"\x80\x02}."), ("storages", inner)):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    put("evil_torch_tar.tar", tbuf.getvalue(), "torch")
    # torch 1.13 legacy_load (serialization.py, the tar branch): each storage record is a pickle
    # (key, location, storage class) and then _new_with_file's 8-byte count and count x
    # _element_size(class.dtype) bytes; the next record is read right after. A HalfStorage of 3
    # elements is 6 bytes: the payload is the second record, which torch unpickles.
    half = (b"\x80\x02(X\x01\x00\x00\x000X\x03\x00\x00\x00cpuctorch\nHalfStorage\nt." +
            struct.pack("<q", 3) + b"\x01\x02" * 3)
    tbuf = io.BytesIO()
    with tarfile.open(fileobj=tbuf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in (("sys_info", b"\x80\x02}."), ("storages", b"K\x02." + half + inner)):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    put("evil_torch_tar_storage_record.tar", tbuf.getvalue(), "torch")
    put("evil_numpy_object.npy", npy_object(inner), "numpy")
    put("evil_joblib_zf.pkl", b"ZF" + ("%x" % len(inner)).ljust(19).encode() + zlib.compress(inner),
        "joblib")
    side = os.path.join(out, "side")
    os.makedirs(side, exist_ok=True)
    with open(os.path.join(side, "a.npy"), "wb") as f:
        f.write(npy_object(inner))
    nd = (b"\x80\x02cjoblib.numpy_pickle_compat\nNDArrayWrapper\n)\x81" +
          state_dict([("filename", s("a.npy")), ("subclass", b"cnumpy\nndarray\n"),
                      ("allow_mmap", b"\x89")], False) + b"b.")
    path = os.path.join(side, "evil_joblib_side.pkl")
    with open(path, "wb") as f:
        f.write(nd)
    rows.append(("joblib", path))
    return rows


def random_array(rng, i):
    """A seeded random array: any of the dtypes below, 0 to 4 dims (0-d and zero-size among
    them), C or Fortran order, object arrays and records with objects mixed in."""
    kinds = ["f8", "f4", "f2", "i8", "i4", "i2", "u1", "u8", "?", "c8", "c16", "U3", "S2", "O",
             "M8[ns]", "m8[s]", ">f8", ">i4", "V4", "rec"]
    kind = rng.choice(kinds)
    shape = tuple(rng.randint(0, 4) for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4))))
    nrng = np.random.default_rng(i)
    if kind == "O":
        arr = np.empty(shape, dtype=object)
        for j, _ in enumerate(arr.flat):
            arr.flat[j] = rng.choice(({"k": i}, [1, 2], "x", 3.5, None, np.float32(j)))
    elif kind in ("U3", "S2"):
        arr = np.full(shape, "ab", dtype=kind)
    elif kind in ("M8[ns]", "m8[s]"):
        arr = (nrng.random(shape) * 1e9).astype("i8").astype(kind)
    elif kind == "V4":
        arr = np.frombuffer(nrng.bytes(4 * int(np.prod(shape))), dtype="V4").reshape(shape)
    elif kind == "rec":
        arr = np.zeros(shape, dtype=[("a", "<f4", (2,)), ("b", "S3"), ("c", "O")])
    else:
        arr = (nrng.random(shape) * 100).astype(kind)
    if arr.ndim >= 2 and rng.random() < 0.4:
        arr = np.asfortranarray(arr)
    return arr


def benign(out, count):
    """count joblib.dump files of random arrays, cycling through every compressor joblib 1.2
    has without lz4 (zlib, gzip, bz2, lzma, xz) and none, at random levels and protocols 2-5."""
    rng = random.Random(22)
    compressors = [None, "zlib", "gzip", "bz2", "xz", "lzma"]
    for i in range(count):
        arr = random_array(rng, i)
        if i % 3 == 0:  # several arrays (and an object array) in one pickle
            obj = {"w": arr, "b": np.arange(i % 7), "o": random_array(rng, i + 1), "n": i}
        else:
            obj = arr
        comp = compressors[i % len(compressors)]
        path = os.path.join(out, "benign", "b%04d.joblib" % i)
        joblib.dump(obj, path, compress=(comp, rng.randint(1, 9)) if comp else 0,
                    protocol=rng.randint(2, 5))


def benign_torch(out, count):
    """Legacy torch.save files (the format whose storages stguard skips) of seeded tensors."""
    import torch
    os.makedirs(os.path.join(out, "benign_torch"), exist_ok=True)
    kinds = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
             torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool, torch.complex64,
             torch.complex128]
    g = torch.Generator().manual_seed(22)
    rng = random.Random(22)
    for i in range(count):
        shape = [int(x) for x in torch.randint(0, 4, (rng.randint(0, 4),), generator=g)]
        t = (torch.rand(shape, generator=g) * 100).to(rng.choice(kinds))
        obj = {"w": t, "v": t.view(-1)[:1], "n": i} if i % 2 else t
        torch.save(obj, os.path.join(out, "benign_torch", "t%04d.pt" % i),
                   _use_new_zipfile_serialization=False)


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "benign"), exist_ok=True)
    benign(out, int(sys.argv[2]) if len(sys.argv) > 2 else 216)
    benign_torch(out, int(sys.argv[3]) if len(sys.argv) > 3 else 88)
    rows = []
    for name, data in joblib_variations().items():
        for comp in ("", "zlib", "gzip", "bz2", "xz", "lzma"):
            path = os.path.join(out, "evil_joblib_%s.pkl%s" % (name, comp and "." + comp))
            write_compressed(path, data, comp)
            rows.append(("joblib", path))
    for name, data, benign_data in dtype_grid():
        path = os.path.join(out, "evil_joblib_%s.pkl" % name)
        with open(path, "wb") as f:
            f.write(data)
        rows.append(("joblib", path))
        if benign_data is not None:
            with open(os.path.join(out, "benign", name + ".pkl"), "wb") as f:
                f.write(benign_data)
    for name, shape, nbytes in readable_shapes():
        with open(os.path.join(out, "benign", "shape_%s.pkl" % name), "wb") as f:
            f.write(b"\x80\x02" + WRAPPER + b")\x81" +
                    state_dict([("dtype", dtype("u1")), ("shape", shape)]) + b"b" +
                    bytes(nbytes) + b".")
    rows += other_routes(out)
    with open(os.path.join(out, "evil.tsv"), "w") as f:
        for loader, path in rows:
            f.write("%s\t%s\n" % (loader, path))


if __name__ == "__main__":
    main()
