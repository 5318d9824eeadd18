"""Flax's msgpack checkpoint format, reimplemented from its source for stguard's fixtures and
differential tests (flax is not packaged in Debian; python3-msgpack and numpy are).

Source read: google/flax, flax/serialization.py at commit
18f8f311c275d57f46d95e41b15aa97b454754c0:
  - lines 249-259  _ndarray_to_bytes: msgpack.packb((arr.shape, arr.dtype.name,
                   arr.tobytes('C')), use_bin_type=True); object and structured dtypes refused
  - lines 262-275  _dtype_from_name / _ndarray_from_bytes: msgpack.unpackb(data, raw=True),
                   np.dtype(name) (b'bfloat16' -> jax.numpy.bfloat16), np.frombuffer(...)
                   .reshape(shape, order='C')
  - lines 278-283  _MsgpackExtType: ndarray = 1, native_complex = 2, npscalar = 3
  - lines 286-301  _msgpack_ext_pack: ndarray -> ExtType(1, ...), np.generic -> ExtType(3,
                   _ndarray_to_bytes(np.asarray(x))), complex -> ExtType(2, packb((re, im)))
  - lines 304-314  _msgpack_ext_unpack: the inverse; an unknown code stays an ExtType
  - lines 396-415  msgpack_serialize: msgpack.packb(tree, default=_msgpack_ext_pack,
                   strict_types=True)
  - lines 344-353  _chunk: a leaf over MAX_CHUNK_SIZE (2^30 bytes) becomes
                   {'__msgpack_chunked_array__': True, 'shape': {'0': d0, ...},
                   'chunks': {'0': flat[0:n], ...}} (n = MAX_CHUNK_SIZE // itemsize)
  - lines 356-393  _unchunk / _unchunk_array_leaves_in_place: the inverse, np.concatenate of the
                   chunks reshaped to the shape, for a marked map at the root or under maps
  - lines 418-434  msgpack_restore: msgpack.unpackb(data, ext_hook=_msgpack_ext_unpack,
                   raw=False, strict_map_key=False), then the chunked-array reassembly
The code below is written from that description, not copied. Without JAX there is no bfloat16
dtype: a bfloat16 array is written as flax writes jax's (the name 'bfloat16', two bytes an
element) and read back as uint16 of the same shape.
"""
import msgpack
import numpy as np

EXT_NDARRAY, EXT_COMPLEX, EXT_NPSCALAR = 1, 2, 3


class BF16:
    """A bfloat16 array as JAX hands it to flax: its bits (uint16) and the dtype name."""

    def __init__(self, bits):
        self.bits = np.ascontiguousarray(bits, dtype=np.uint16)


def array_bytes(shape, dtype_name, raw):
    return msgpack.packb((tuple(shape), dtype_name, raw), use_bin_type=True)


def ndarray_to_bytes(arr):
    if isinstance(arr, BF16):
        return array_bytes(arr.bits.shape, "bfloat16", arr.bits.tobytes("C"))
    if arr.dtype.hasobject or arr.dtype.isalignedstruct:
        raise ValueError("flax refuses object and structured dtypes")
    return array_bytes(arr.shape, arr.dtype.name, arr.tobytes("C"))


def ext_pack(x):
    if isinstance(x, (np.ndarray, BF16)):
        return msgpack.ExtType(EXT_NDARRAY, ndarray_to_bytes(x))
    if isinstance(x, np.generic):
        return msgpack.ExtType(EXT_NPSCALAR, ndarray_to_bytes(np.asarray(x)))
    if isinstance(x, complex):
        return msgpack.ExtType(EXT_COMPLEX, msgpack.packb((x.real, x.imag)))
    return x


def serialize(tree):
    return msgpack.packb(tree, default=ext_pack, strict_types=True)


def dtype_from_name(name):
    return np.dtype(np.uint16) if name == b"bfloat16" else np.dtype(name)


def ndarray_from_bytes(data):
    shape, dtype_name, buf = msgpack.unpackb(data, raw=True)
    return np.frombuffer(buf, dtype=dtype_from_name(dtype_name), count=-1, offset=0).reshape(
        shape, order="C"), dtype_name


def ext_unpack(code, data):
    if code == EXT_NDARRAY:
        arr, name = ndarray_from_bytes(data)
        return ("array", name, arr)
    if code == EXT_COMPLEX:
        t = msgpack.unpackb(data)
        return complex(t[0], t[1])
    if code == EXT_NPSCALAR:
        arr, name = ndarray_from_bytes(data)
        return ("scalar", name, arr[()])
    return msgpack.ExtType(code, data)


MARKER = "__msgpack_chunked_array__"


def chunk(arr, chunksize):
    """_chunk with a chunk size of our choosing (flax's is 2^30 bytes: no test writes that)."""
    flat = arr.reshape(-1)
    return {MARKER: True, "shape": {str(i): d for i, d in enumerate(arr.shape)},
            "chunks": {str(i): flat[k:k + chunksize]
                       for i, k in enumerate(range(0, flat.size, chunksize))}}


def dict_to_tuple(d):
    return tuple(d[str(i)] for i in range(len(d)))


def unchunk(d):
    shape = dict_to_tuple(d["shape"])
    chunks = [c[2] if isinstance(c, tuple) and len(c) == 3 else c
              for c in dict_to_tuple(d["chunks"])]
    flat = np.concatenate(chunks)
    return ("array", flat.dtype.name.encode(), flat.reshape(shape))


def unchunk_leaves(d):
    if isinstance(d, dict):
        if MARKER in d:
            return unchunk(d)
        for k, v in d.items():
            if isinstance(v, dict) and MARKER in v:
                d[k] = unchunk(v)
            elif isinstance(v, dict):
                unchunk_leaves(v)
    return d


def unpack(data):
    """What msgpack.unpackb with flax's hook returns, before the chunks are joined."""
    return msgpack.unpackb(data, ext_hook=ext_unpack, raw=False, strict_map_key=False)


def restore(data):
    """msgpack_restore: unpack, then join chunked arrays."""
    return unchunk_leaves(unpack(data))


def leaves(tree, path=()):
    """(path, dtype name, shape) of every array leaf, in file order (maps keep their order)."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from leaves(v, path + (k if isinstance(k, str) else str(k),))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from leaves(v, path + (str(i),))
    elif isinstance(tree, tuple) and len(tree) == 3 and tree[0] in ("array", "scalar"):
        yield "/".join(path), tree[1].decode("latin-1"), list(np.shape(tree[2]))
