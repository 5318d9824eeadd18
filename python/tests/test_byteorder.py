"""Byte order of the arrays stguard hands out (docs/python.md, "Byte order"): numpy arrays carry
little-endian dtypes (file order: values right on any host; .astype with '=' gives host order),
torch tensors are made in host order (torch.frombuffer reads host order, so the package reverses
each element's bytes on a big-endian host). The big-endian branch is exercised here on any host
by asking _host_order for byteorder "big" and reading the result as big-endian numpy dtypes.
corpus/examples/model.safetensors is tools/make_examples.py's: linear.weight 0.5 -1 2 0.25 1.5
-0.75 (F32, 2x3), linear.bias 0.1 0.2."""

import os
import pathlib

import numpy
import pytest

import stguard
from stguard import _open

SOURCE = pathlib.Path(os.environ.get("STG_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
MODEL = SOURCE / "corpus" / "examples" / "model.safetensors"
WEIGHT = numpy.array([[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]], dtype=numpy.float32)

try:
    import torch
except ImportError:  # the torch comparison is skipped only when torch is absent
    torch = None

# safetensors dtype -> (values, little-endian dtype, big-endian dtype)
CASES = {
    "F32": ([1.5, -2.0, 3.0e38], "<f4", ">f4"),
    "F64": ([1.5, -1234.5625], "<f8", ">f8"),
    "I16": ([-2, 0x1234], "<i2", ">i2"),
    "BF16": ([0x3F80, 0xC000], "<u2", ">u2"),
    "I64": ([-(2**63), 7], "<i8", ">i8"),
    "C64": ([1.5 - 2.25j, 3.0 + 0.5j], "<c8", ">c8"),
}


@pytest.mark.parametrize("dtype", sorted(CASES))
def test_host_order_on_a_big_endian_host(dtype):
    values, le, be = CASES[dtype]
    want = numpy.array(values, dtype=le)
    got = _open._host_order(bytearray(want.tobytes()), dtype, "big")
    assert bytes(got) == want.astype(be).tobytes()
    assert numpy.array_equal(numpy.frombuffer(got, dtype=be), want)


def test_host_order_little_and_bytes_unchanged():
    buf = bytearray(b"\x01\x02\x03\x04")
    assert _open._host_order(buf, "F32", "little") is buf
    assert _open._host_order(buf, "U8", "big") is buf
    assert _open._host_order(buf, "F8_E4M3", "big") is buf


def test_numpy_arrays_are_little_endian_and_astype_gives_host_order():
    with stguard.safe_open(MODEL, framework="numpy") as f:
        w = f.get_tensor("linear.weight")
    assert w.dtype == numpy.dtype("<f4")  # explicit little-endian, whatever the host
    assert numpy.array_equal(w, WEIGHT)
    host = w.astype(w.dtype.newbyteorder("="))  # the documented way to host order
    assert host.dtype.isnative
    assert numpy.array_equal(host, WEIGHT)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_tensors_hold_the_file_values():
    with stguard.safe_open(MODEL, framework="pt") as f:
        w = f.get_tensor("linear.weight")
        b = f.get_tensor("linear.bias")
    assert torch.equal(w, torch.from_numpy(WEIGHT))
    assert torch.equal(b, torch.tensor([0.1, 0.2], dtype=torch.float32))
