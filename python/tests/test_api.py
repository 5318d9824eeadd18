"""The safetensors-style API against numpy and torch: get_slice's indexing, save/save_file,
load/load_file, load_pickle against torch.load, guard_torch_load (run by ctest as
python_package with the rest of python/tests)."""

import io
import json
import os
import pathlib
import pickle
import random
import struct
import sys

import numpy
import pytest

import stguard
from stguard import _save

try:
    import torch
except ImportError:  # torch comparisons are skipped only when torch is absent
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
SOURCE = pathlib.Path(os.environ.get("STG_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
EXAMPLES = SOURCE / "corpus" / "examples"

# ------------------------------------------------------------------------------------ get_slice

SHAPES = [(), (0,), (1,), (7,), (5, 3), (4, 0, 2), (3, 4, 5), (2, 3, 1, 4)]


def _random_item(rng, n):
    kind = rng.randrange(9)
    if kind == 0:
        return rng.randrange(-n - 2, n + 2) if n else rng.randrange(-2, 2)
    if kind == 1:
        return None
    if kind == 2:
        return rng.choice([True, False, numpy.bool_(True)])
    if kind == 3:
        return Ellipsis
    if kind == 4:
        return numpy.int64(rng.randrange(-n, n)) if n else 0
    pick = lambda: rng.choice([None, rng.randrange(-n - 3, n + 4)])  # noqa: E731
    step = rng.choice([None, 1, 2, 3, -1, -2, -3, n + 1])
    return slice(pick(), pick(), step if step != 0 else None)


def _random_key(rng, shape):
    items = tuple(_random_item(rng, rng.choice(shape) if shape else 1)
                  for _ in range(rng.randrange(0, len(shape) + 3)))
    return items[0] if len(items) == 1 and rng.random() < 0.5 else items


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    path = tmp_path_factory.mktemp("slice") / "s.safetensors"
    tensors = {f"t{i}": numpy.arange(int(numpy.prod(s)), dtype="<i4").reshape(s) * 3 - 7
               for i, s in enumerate(SHAPES)}
    tensors["bf"] = numpy.arange(12, dtype="<u2").reshape(3, 4)  # read back as BF16 below
    stguard.save_file(tensors, path)
    return path, tensors


def test_get_slice_equals_numpy_on_generated_indexes(sliced):
    path, tensors = sliced
    rng = random.Random(20260)
    compared = refused = 0
    with stguard.safe_open(path) as f:
        for i, shape in enumerate(SHAPES):
            want_all, s = tensors[f"t{i}"], f.get_slice(f"t{i}")
            for _ in range(500):
                key = _random_key(rng, shape)
                try:
                    want = want_all[key]
                except IndexError:
                    with pytest.raises(IndexError):
                        s[key]
                    refused += 1
                    continue
                got = s[key]
                assert got.shape == want.shape and got.dtype == want.dtype, (shape, key)
                assert numpy.array_equal(got, want), (shape, key)
                compared += 1
    assert compared > 2500 and refused > 100, (compared, refused)


def test_get_slice_fixed_cases(sliced):
    path, tensors = sliced
    a1, a3 = tensors["t3"], tensors["t6"]
    with stguard.safe_open(path) as f:
        s1, s3 = f.get_slice("t3"), f.get_slice("t6")
        cases = [(s1, a1, (True,)), (s1, a1, (None,)), (s1, a1, (..., 0)), (s1, a1, (False,)),
                 (s1, a1, slice(None, None, -1)), (s1, a1, slice(-2, 1, -2)), (s3, a3, (True, 0)),
                 (s3, a3, (0, True, ..., None, -1)), (s3, a3, (slice(None, None, -2), ..., 1)),
                 (s3, a3, (True, slice(1, None), False)), (s3, a3, ())]
        for s, a, key in cases:
            assert s[key].shape == a[key].shape and numpy.array_equal(s[key], a[key]), key
        scalar = f.get_slice("t0")
        assert numpy.array_equal(scalar[...], tensors["t0"][...]) and scalar[None].shape == (1,)
        for bad in ([0, 1], numpy.array([0]), 1.5, "a"):
            with pytest.raises(IndexError):
                s1[bad]
        with pytest.raises(IndexError):
            s3[..., ...]


@needs_torch
def test_get_slice_torch(sliced):
    path, tensors = sliced
    with stguard.safe_open(path, framework="torch") as f:
        got = f.get_slice("t6")[::-2, None, 1:]
        assert isinstance(got, torch.Tensor)
        want = numpy.ascontiguousarray(tensors["t6"][::-2, None, 1:])
        assert torch.equal(got, torch.from_numpy(want))
        assert f.get_slice("t0")[...].shape == ()


# ------------------------------------------------------------------------------------ save

NUMPY_DTYPES = {"BOOL": "?", "U8": "u1", "I8": "i1", "I16": "<i2", "U16": "<u2", "F16": "<f2",
                "I32": "<i4", "U32": "<u4", "F32": "<f4", "C64": "<c8", "F64": "<f8",
                "I64": "<i8", "U64": "<u8"}
ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
         "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64",
         "F64", "I64", "U64"]


def _reference_layout(entries, metadata):
    """The reference writer's layout (safetensors/src/tensor.rs, prepare), written out here
    independently of stguard/_save.py: dtype order descending, then name bytes; contiguous
    offsets; __metadata__ first; spaces to a multiple of 8."""
    entries = sorted(entries, key=lambda e: (-ORDER.index(e[1]), e[0].encode()))
    head, pos, data = {}, 0, b""
    if metadata is not None:
        head["__metadata__"] = metadata
    for name, dtype, shape, raw in entries:
        head[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [pos, pos + len(raw)]}
        pos += len(raw)
        data += raw
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def _values(dtype):
    rng = numpy.random.default_rng(7)
    if dtype == "?":
        return rng.integers(0, 2, (3, 2)).astype("?")
    d = numpy.dtype(dtype)
    if d.kind in "iu":
        info = numpy.iinfo(d)
        return rng.integers(info.min, info.max, (3, 2), dtype=d, endpoint=True)
    return (rng.standard_normal((3, 2)) * 100).astype(d)


def test_save_every_numpy_dtype_as_the_reference_lays_it_out(tmp_path):
    tensors = {f"t_{st}": _values(npd) for st, npd in NUMPY_DTYPES.items()}
    tensors.update({"scalar": numpy.float32(1.5), "empty": numpy.zeros((0, 3), "<f8"),
                    "big": numpy.arange(6, dtype=">f4").reshape(2, 3),
                    "strided": numpy.arange(24, dtype="<i2").reshape(4, 6)[::2, ::-3],
                    "fortran": numpy.asfortranarray(numpy.arange(6.0).reshape(2, 3)),
                    "ünïcode": numpy.ones(2, "u1")})
    meta = {"format": "np", "note": "ä\"\\"}
    data = stguard.save(tensors, metadata=meta)
    expect = []
    for name, arr in tensors.items():
        arr = numpy.asarray(arr)
        st = [k for k, v in NUMPY_DTYPES.items() if numpy.dtype(v) == arr.dtype.newbyteorder("<")
              or numpy.dtype(v) == arr.dtype][0]
        little = numpy.ascontiguousarray(arr, dtype=numpy.dtype(NUMPY_DTYPES[st]))
        expect.append((name, st, arr.shape, little.tobytes()))
    assert data == _reference_layout(expect, meta)
    assert stguard.scan_bytes(data).ok
    path = tmp_path / "out.safetensors"
    stguard.save_file(tensors, path, metadata=meta)
    assert path.read_bytes() == data
    assert [p.name for p in tmp_path.iterdir()] == ["out.safetensors"]  # no temporary left
    with stguard.safe_open(path) as f:
        assert f.metadata() == meta and f.report.ok
        for name, arr in tensors.items():
            got = f.get_tensor(name)
            assert got.shape == numpy.shape(arr) and numpy.array_equal(got, arr), name
    loaded = stguard.load(data)
    assert set(loaded) == set(tensors) and numpy.array_equal(loaded["big"], tensors["big"])
    assert loaded["big"].dtype == numpy.dtype("<f4")


@needs_torch
def test_save_torch_tensors(tmp_path):
    kinds = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
             "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
             "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
             "complex64": torch.complex64}
    for extra in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"):
        if hasattr(torch, extra):
            kinds[extra] = getattr(torch, extra)
    gen = torch.Generator().manual_seed(3)
    tensors = {n: (torch.randn(3, 4, generator=gen) * 50).to(d) for n, d in kinds.items()}
    base = torch.arange(30, dtype=torch.float32).reshape(5, 6)
    tensors.update({"scalar": torch.tensor(2.5), "empty": torch.zeros(0, 4),
                    "transposed": torch.arange(6.0).reshape(2, 3).t(),
                    "grad": torch.ones(2, requires_grad=True),
                    "low_rows": base[:2], "high_rows": base[3:]})  # disjoint views: allowed
    path = tmp_path / "t.safetensors"
    stguard.save_file(tensors, path)
    assert path.read_bytes() == stguard.save(tensors)
    back = stguard.load_file(path, framework="pt")
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype and back[name].shape == t.shape, name
        assert torch.equal(back[name], t.detach()), name
    assert back["transposed"].is_contiguous()
    try:
        from safetensors.torch import load_file as reference_load
    except ImportError:  # the reference reader is compared only where it is installed
        reference_load = None
    if reference_load is not None:
        ref = reference_load(str(path))
        assert all(torch.equal(ref[n], back[n]) for n in tensors)


@needs_torch
def test_save_refuses_shared_storage_as_the_reference(tmp_path):
    w = torch.zeros(4, 4)
    for shared in ({"a": w, "b": w}, {"a": w, "b": w[1]}, {"a": w[:3], "b": w[2:]},
                   {"a": w, "b": w.t()}):
        with pytest.raises(RuntimeError, match="share memory"):
            stguard.save(shared)
        with pytest.raises(RuntimeError):
            stguard.save_file(shared, tmp_path / "x.safetensors")
    assert not list(tmp_path.iterdir())
    stguard.save({"a": w[:2], "b": w[2:], "c": w.clone()})  # the near miss: no overlap


def test_save_refusals_leave_no_file(tmp_path, monkeypatch):
    target = tmp_path / "keep.safetensors"
    target.write_bytes(b"old")
    bad = [{"a": [1, 2]}, {"a": numpy.array(["text"])}, {"a": numpy.zeros(2, "f16")},
           {"__metadata__": numpy.zeros(1)}, {1: numpy.zeros(1)}, {"\udc80": numpy.zeros(1)}]
    for tensors in bad:
        with pytest.raises((TypeError, ValueError)):
            stguard.save_file(tensors, target)
    with pytest.raises(TypeError):
        stguard.save_file({"a": numpy.zeros(1)}, target, metadata={"k": 1})
    with pytest.raises(stguard.UnsafeFileError, match="tensor_name_invalid"):
        stguard.save_file({"line\nbreak": numpy.zeros(1)}, target)  # the strict profile's refusal

    def interrupted(entries, metadata):  # an interrupt after the header was written
        yield _save._header(entries, metadata)
        raise KeyboardInterrupt

    monkeypatch.setattr(_save, "_chunks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        stguard.save_file({"a": numpy.zeros(4)}, target)
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == [target.name]


def test_save_output_is_checked_by_the_strict_validator(monkeypatch, tmp_path):
    # a writer bug (here: a header that claims one byte too many) never reaches the caller
    real = _save._header

    def wrong(entries, metadata):
        h = bytearray(real(entries, metadata))
        h[:8] = struct.pack("<Q", struct.unpack("<Q", h[:8])[0] + 1)
        return bytes(h)

    monkeypatch.setattr(_save, "_header", wrong)
    with pytest.raises(stguard.UnsafeFileError, match="not strictly valid"):
        stguard.save({"a": numpy.zeros(4)})
    with pytest.raises(stguard.UnsafeFileError):
        stguard.save_file({"a": numpy.zeros(4)}, tmp_path / "x.safetensors")
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------------------------ opening


def test_frameworks_devices_and_the_torch_zip_message(tmp_path):
    path = tmp_path / "m.safetensors"
    stguard.save_file({"a": numpy.arange(3, dtype="<i8")}, path)
    for fw in ("np", "numpy"):
        assert isinstance(stguard.safe_open(path, framework=fw).get_tensor("a"), numpy.ndarray)
    for device in ("cuda", "cuda:0", 0, "meta", "cpu:1"):
        with pytest.raises(ValueError, match="CPU"):
            stguard.safe_open(path, device=device)
        with pytest.raises(ValueError):
            stguard.load_file(path, device=device)
    assert stguard.load_file(path, "cpu")["a"].tolist() == [0, 1, 2]
    with pytest.raises(stguard.UnsafeFileError) as e:
        stguard.safe_open(EXAMPLES / "torch" / "pytorch_model.bin")
    msg = str(e.value)
    assert "not a safetensors file" in msg and "torch-zip" in msg and "load_pickle" in msg
    assert "convert" in msg and e.value.report.verdict >= stguard.Verdict.INVALID
    with pytest.raises(stguard.UnsafeFileError, match="not a safetensors file.*unsafe"):
        stguard.safe_open(EXAMPLES / "unsafe" / "os_system.pkl")
    with pytest.raises(stguard.UnsafeFileError) as e:  # a broken safetensors file: its findings
        stguard.safe_open(EXAMPLES / "broken" / "overlap.safetensors")
    assert "offsets_overlap" in str(e.value) and "not a safetensors" not in str(e.value)
    with pytest.raises(stguard.UnsafeFileError):
        stguard.load((EXAMPLES / "broken" / "overlap.safetensors").read_bytes())


@needs_torch
def test_torch_framework_names(tmp_path):
    path = tmp_path / "m.safetensors"
    stguard.save_file({"a": torch.arange(3)}, path)
    for fw in ("pt", "torch"):
        with stguard.safe_open(path, framework=fw, device=torch.device("cpu")) as f:
            assert torch.equal(f.get_tensor("a"), torch.arange(3))
    assert torch.equal(stguard.load(path.read_bytes(), framework="pt")["a"], torch.arange(3))


# ------------------------------------------------------------------------------------ load_pickle


def _torch_reference(path):
    return torch.load(path, weights_only=True)


def _assert_same(got, want, where=""):
    if torch.is_tensor(want):
        assert type(got) is type(want) and got.requires_grad == want.requires_grad, where
        assert got.dtype == want.dtype and got.shape == want.shape, where
        assert got.stride() == want.stride(), where
        assert got.storage_offset() == want.storage_offset(), where
        assert torch.equal(got, want), where
    elif isinstance(want, dict):
        assert type(got) is type(want) and list(got) == list(want), where
        for k in want:
            _assert_same(got[k], want[k], f"{where}/{k}")
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    else:
        assert got == want and type(got) is type(want), where


@needs_torch
@pytest.mark.parametrize("zipped", [True, False])
def test_load_pickle_equals_torch_load(tmp_path, zipped):
    import collections

    w = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
    sd = collections.OrderedDict(
        [("w", w), ("tied", w), ("wt", w.t()), ("row", w[2]), ("cols", w[:, 1:5:2]),
         ("half", torch.randn(5).half()), ("bf16", torch.randn(3).bfloat16()),
         ("i64", torch.arange(-3, 3)), ("u8", torch.arange(250, 256, dtype=torch.uint8)),
         ("b", torch.tensor([True, False])), ("scalar", torch.tensor(7)),
         ("empty", torch.zeros(0, 3)), ("c64", torch.randn(2, dtype=torch.complex64)),
         ("param", torch.nn.Parameter(torch.ones(2))),
         ("frozen", torch.nn.Parameter(torch.ones(3), requires_grad=False)),
         ("leaf_grad", torch.zeros(2, requires_grad=True))])
    ck = {"state_dict": sd, "epoch": 12, "names": ["a", "b"], "pair": (1, None), "flag": True}
    path = tmp_path / "ck.pt"
    torch.save(ck, path, _use_new_zipfile_serialization=zipped)
    want = _torch_reference(path)
    got = stguard.load_pickle(path)
    _assert_same(got, want)
    g = got["state_dict"]
    assert g["tied"] is g["w"] and g["wt"].data_ptr() == g["w"].data_ptr()
    assert g["row"].storage_offset() == 12  # a view of the same storage, as torch.load gives
    g["w"][0, 0] = 99.0  # shared memory: a change through one name shows through its views
    assert g["wt"][0, 0] == 99.0
    sub = stguard.load_pickle(path, select="state_dict")
    assert list(sub) == list(sd)
    arrays = stguard.load_pickle(path, framework="np", select="state_dict")
    for name, t in sd.items():
        a = arrays[name]
        if t.dtype == torch.bfloat16:
            assert a.dtype == numpy.dtype("<u2")
            assert torch.equal(torch.from_numpy(a.view("<i2").copy()).view(torch.bfloat16), t)
        else:
            assert numpy.array_equal(a, t.detach().numpy()) and a.shape == tuple(t.shape), name
    assert isinstance(g["param"], torch.nn.Parameter) and g["param"].requires_grad
    with pytest.raises(KeyError):
        stguard.load_pickle(path, select="absent")


def test_load_pickle_numpy_files(tmp_path):
    a = numpy.arange(12, dtype=">i4").reshape(3, 4)
    numpy.save(tmp_path / "a.npy", a)
    got = stguard.load_pickle(tmp_path / "a.npy", framework="np")
    assert list(got) == ["array"]
    assert numpy.array_equal(got["array"], numpy.load(tmp_path / "a.npy"))
    numpy.savez(tmp_path / "b.npz", x=numpy.eye(3), y=numpy.asfortranarray(a))
    got = stguard.load_pickle(tmp_path / "b.npz", framework="np")
    with numpy.load(tmp_path / "b.npz") as want:
        assert sorted(got) == sorted(want.files)
        for k in want.files:
            assert numpy.array_equal(got[k], want[k]) and got[k].shape == want[k].shape


def _command_pickle(folder, name):
    """A pickle that would create folder/ran when loaded: (its path, the marker's path)."""
    marker = folder / "ran"
    evil = folder / name
    evil.write_bytes(b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
    return evil, marker


def test_load_pickle_refuses_what_is_not_weights_only(tmp_path):
    evil, marker = _command_pickle(tmp_path, "evil.pt")
    with pytest.raises(stguard.UnsafeFileError) as e:
        stguard.load_pickle(evil)
    assert e.value.report.verdict == stguard.Verdict.UNSAFE and not marker.exists()
    # scans clean, but written by no torch.save: the evaluator refuses the text opcodes
    text = tmp_path / "text.pkl"
    text.write_bytes(pickle.dumps([1, 2], protocol=0))
    with pytest.raises(stguard.UnsafeFileError) as e:
        stguard.load_pickle(text)
    assert any(c.startswith("convert_") for c in e.value.report.codes()), e.value.report
    with pytest.raises(stguard.UnsafeFileError):
        stguard.load_pickle(EXAMPLES / "model.safetensors")
    with pytest.raises(FileNotFoundError):
        stguard.load_pickle(tmp_path / "absent.pt")


@needs_torch
def test_load_pickle_refuses_torchscript_routes(tmp_path):
    """torch.load hands a zip holding <folder>/constants.pkl to torch.jit.load: load_pickle refuses
    it as convert does (the scan's torchscript_program means code runs), also without code/."""
    import zipfile

    plain = tmp_path / "plain.pt"
    torch.save({"w": torch.arange(4.0)}, plain)
    assert set(stguard.load_pickle(plain)) == {"w"}  # the near miss: a plain torch.save zip
    routed = tmp_path / "routed.pt"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(routed, "w") as dst:
        folder = src.namelist()[0].split("/")[0]
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr(folder + "/constants.pkl", pickle.dumps((), protocol=2))
    with pytest.raises(stguard.UnsafeFileError) as e:
        stguard.load_pickle(routed)
    assert "convert_unsupported" in e.value.report.codes(), e.value.report


# ------------------------------------------------------------------------------------ the guard


@needs_torch
def test_guard_torch_load(tmp_path):
    evil, marker = _command_pickle(tmp_path, "pytorch_model.bin")
    good = tmp_path / "good.pt"
    torch.save({"w": torch.arange(4)}, good)
    original = torch.load
    with stguard.guard_torch_load() as guard:
        assert guard.active and torch.load is not original
        assert torch.equal(torch.load(good)["w"], torch.arange(4))
        with pytest.raises(stguard.UnsafeFileError) as e:
            torch.load(evil)
        assert e.value.report.verdict == stguard.Verdict.UNSAFE
        with pytest.raises(stguard.UnsafeFileError):
            torch.load(str(evil), map_location="cpu")
        with open(evil, "rb") as fh:  # file objects: scanned from their bytes
            with pytest.raises(stguard.UnsafeFileError):
                torch.load(fh)
        assert torch.equal(torch.load(io.BytesIO(good.read_bytes()))["w"], torch.arange(4))
        legacy = io.BytesIO()
        torch.save({"w": torch.arange(4)}, legacy, _use_new_zipfile_serialization=False)
        buf = io.BytesIO(b"junk" + legacy.getvalue())
        buf.seek(4)  # a legacy file is read from the current position
        assert torch.equal(torch.load(buf)["w"], torch.arange(4)) and buf.tell() > 4
        with pytest.raises(stguard.UnsafeFileError):
            torch.load(io.BytesIO(evil.read_bytes()))
        # a zip at the position is read by torch through the whole stream: scanned whole
        buf = io.BytesIO(evil.read_bytes() + good.read_bytes())
        buf.seek(len(evil.read_bytes()))
        with pytest.raises(stguard.UnsafeFileError):
            torch.load(buf)
    assert torch.load is original and not marker.exists()
    guard = stguard.guard_torch_load(allow_warn=False)
    try:
        with pytest.raises(stguard.UnsafeFileError):
            torch.load(evil)
    finally:
        guard.remove()
    guard.remove()  # twice is fine
    assert torch.load is original and not marker.exists()


@needs_torch
def test_load_pickle_hostile_values(tmp_path):
    """Values the evaluator rebuilds that a naive walk would loop on or recurse through."""
    import zipfile

    base = tmp_path / "base.pt"
    torch.save({"w": torch.zeros(1)}, base)

    def with_pickle(name, pkl):
        out = tmp_path / name
        with zipfile.ZipFile(base) as src, zipfile.ZipFile(out, "w") as dst:
            for info in src.infolist():
                data = pkl if info.filename.endswith("/data.pkl") else src.read(info)
                dst.writestr(info.filename, data)
        return out

    # a list holding itself, a dict holding itself (memo references): the same object again
    got = stguard.load_pickle(with_pickle("l.pt", b"\x80\x02]q\x00h\x00a."))
    assert isinstance(got, list) and got[0] is got
    got = stguard.load_pickle(with_pickle("d.pt", b"\x80\x02}q\x00X\x01\x00\x00\x00kq\x01h\x00s."))
    assert got["k"] is got
    # nesting past the walk's depth: refused, not a crash
    deep = with_pickle("deep.pt", b"\x80\x02" + b"]" * 300 + b"a" * 299 + b".")
    with pytest.raises(ValueError, match="deeper"):
        stguard.load_pickle(deep)
    nested = b"\x80\x02" + b"]" * 150 + b"a" * 149 + b"."
    shallow = stguard.load_pickle(with_pickle("ok.pt", nested))
    depth = 0
    while shallow:
        shallow, depth = shallow[0], depth + 1
    assert depth == 149


def test_threads_load_and_save(tmp_path):
    import threading

    arrays = {f"a{i}": numpy.arange(1000, dtype="<f4") * i for i in range(8)}
    numpy.savez(tmp_path / "x.npz", **arrays)
    errors = []

    def work(k):
        try:
            for _ in range(20):
                got = stguard.load_pickle(tmp_path / "x.npz", framework="np")
                assert all(numpy.array_equal(got[n], arrays[n]) for n in arrays)
                path = tmp_path / f"out{k}.safetensors"
                stguard.save_file(got, path)
                back = stguard.load_file(path)
                assert all(numpy.array_equal(v, arrays[n]) for n, v in back.items())
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_caller_mapping_truncated_meanwhile_is_the_callers_risk(tmp_path):
    """docs/python.md, "Mappings": scan_bytes reads a caller's mmap in place, so a file truncated
    under that mapping raises SIGBUS in the reading process, as for any reader of the mapping;
    stguard.scan(path) reads with pread and reports the file as it now is."""
    import signal
    import subprocess

    path = tmp_path / "m.bin"
    path.write_bytes(b"\x80\x02" + b"x" * (1 << 20))
    code = f"""
import mmap, os, stguard
fh = open({str(path)!r}, "rb")
m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
os.truncate({str(path)!r}, 0)  # what another process may do at any moment
print(stguard.scan({str(path)!r}).verdict, flush=True)
stguard.scan_bytes(m)
print("not reached", flush=True)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == -signal.SIGBUS, (run.returncode, run.stdout, run.stderr)
    assert run.stdout.split() == ["invalid"], run.stdout


def _rss_kib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_no_leak_in_the_new_calls(tmp_path):
    numpy.savez(tmp_path / "x.npz", a=numpy.arange(65536, dtype="<f4"), b=numpy.eye(8))  # 256 KiB
    text = tmp_path / "text.pkl"
    text.write_bytes(pickle.dumps([1, 2], protocol=0))
    arrays = {"a": numpy.arange(65536, dtype="<f4"), "s": numpy.float64(1.0)}
    sliced = tmp_path / "s.safetensors"
    stguard.save_file({"m": numpy.arange(600, dtype="<i2").reshape(20, 30)}, sliced)

    def round_():
        stguard.load_pickle(tmp_path / "x.npz", framework="np")
        for bad in (text, EXAMPLES / "unsafe" / "os_system.pkl"):
            with pytest.raises(stguard.UnsafeFileError):
                stguard.load_pickle(bad, framework="np")
        data = stguard.save(arrays, {"k": "v"})
        stguard.load(data)
        stguard.save_file(arrays, tmp_path / "o.safetensors")
        with stguard.safe_open(sliced) as f:
            f.get_slice("m")[::-3, None, 5]

    for _ in range(20):
        round_()
    before = _rss_kib()
    for _ in range(200):
        round_()
    grown = _rss_kib() - before
    assert grown < 4096, f"RSS grew by {grown} KiB over 200 rounds"


@needs_torch
def test_guard_loads_the_file_it_scanned(tmp_path, monkeypatch):
    from stguard import _pickle

    evil, marker = _command_pickle(tmp_path, "evil.bin")
    path = tmp_path / "pytorch_model.bin"
    torch.save({"w": torch.arange(3)}, path)
    real = _pickle._scan_open_file
    seen = []

    def scan_then_swap(p, fh, options):  # the file is renamed over right after its scan
        report = real(p, fh, options)
        seen.append(report.format)
        if evil.exists():
            os.replace(evil, path)
        return report

    monkeypatch.setattr(_pickle, "_scan_open_file", scan_then_swap)
    with stguard.guard_torch_load():
        assert torch.equal(torch.load(path)["w"], torch.arange(3))  # the scanned file's data
        with pytest.raises(stguard.UnsafeFileError):  # the next load scans what is there now
            torch.load(path)
    assert seen == ["torch-zip", "pickle"] and not marker.exists()
    fifo = tmp_path / "fifo.bin"
    os.mkfifo(fifo)
    with stguard.guard_torch_load():  # never opened for reading by torch (it would block)
        with pytest.raises(stguard.UnsafeFileError, match="not_regular_file"):
            torch.load(fifo)
