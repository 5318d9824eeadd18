"""Tests of the stguard Python package (run by ctest as python_package, or by hand with
PYTHONPATH=build/dev/python /usr/bin/python3 -m pytest python/tests)."""

import dataclasses
import json
import mmap
import os
import pathlib
import shutil
import struct
import subprocess
import threading

import numpy
import pytest

import stguard

SOURCE = pathlib.Path(os.environ.get("STG_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
EXAMPLES = SOURCE / "corpus" / "examples"
CLI = os.environ.get("STGUARD_CLI")

try:
    import torch
except ImportError:  # torch comparisons are skipped only when torch is absent
    torch = None


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype, shape, raw bytes); writes them in order, header padded."""
    header, data, pos = {}, b"", 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [pos, pos + len(raw)]}
        data += raw
        pos += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    pathlib.Path(path).write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


def example_files():
    return sorted(p for p in EXAMPLES.rglob("*") if p.is_file())


# ------------------------------------------------------------------------------------ scanning


def test_verdicts_of_the_examples():
    want = {
        "model.safetensors": stguard.Verdict.OK,
        "unpadded.safetensors": stguard.Verdict.WARN,
        "broken/overlap.safetensors": stguard.Verdict.INVALID,
        "broken/truncated.safetensors": stguard.Verdict.INVALID,
        "unsafe/os_system.pkl": stguard.Verdict.UNSAFE,
    }
    for rel, verdict in want.items():
        r = stguard.scan(EXAMPLES / rel)
        assert r.verdict == verdict, (rel, r)
        assert r.size == (EXAMPLES / rel).stat().st_size
        assert r.sha256 is not None and len(r.sha256) == 64
    r = stguard.scan(EXAMPLES / "unsafe" / "os_system.pkl")
    assert "pickle_global_dangerous" in r.codes()
    dangerous = [f for f in r.findings if f.code == "pickle_global_dangerous"][0]
    assert dangerous.severity == stguard.Severity.CRITICAL
    assert dangerous.global_name in ("os.system", "posix.system")
    assert isinstance(dangerous.offset, int)
    assert any(g.klass == "dangerous" for g in r.globals)


@pytest.mark.skipif(CLI is None, reason="STGUARD_CLI not set (ctest sets it)")
def test_records_equal_the_cli():
    out = subprocess.run(
        [CLI, "scan", "--format", "json", str(EXAMPLES)], capture_output=True, text=True
    )
    assert out.returncode == 1, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    files = [r for r in records if r["type"] == "file"]
    assert len(files) == len(example_files())
    for rec in files:
        mine = stguard.scan(rec["path"]).to_dict(path=rec["path"])
        assert mine == rec
        assert json.loads(stguard.scan(rec["path"]).to_json(rec["path"])) == rec


def test_scan_bytes_same_as_scan_for_every_buffer_kind(tmp_path):
    for p in example_files():
        data = p.read_bytes()
        want = stguard.scan(p)
        for buf in (data, bytearray(data), memoryview(data)):
            got = stguard.scan_bytes(buf, name=p.name)
            assert got.verdict == want.verdict, p
            assert got.codes() == want.codes(), p
            assert got.sha256 == want.sha256
            assert [f.offset for f in got.findings] == [f.offset for f in want.findings]
        if data:
            with open(p, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                assert stguard.scan_bytes(m, name=p.name).codes() == want.codes()
    # a slice of a larger buffer is read in place, not from its start
    model = (EXAMPLES / "model.safetensors").read_bytes()
    padded = bytearray(b"junk" + model + b"tail")
    assert stguard.scan_bytes(memoryview(padded)[4 : 4 + len(model)]).ok


def test_scan_options():
    p = EXAMPLES / "model.safetensors"
    assert stguard.scan(p, digest=False).sha256 is None
    good = stguard.scan(p).sha256
    assert stguard.scan(p, expected_sha256=good).ok
    bad = stguard.scan(p, expected_sha256="0" * 64)
    assert "digest_mismatch" in bad.codes()
    missing = stguard.scan(EXAMPLES / "no-such-file")
    assert missing.verdict == stguard.Verdict.ERROR and "io_error" in missing.codes()
    # compat profile: a name the strict profile warns about stays readable either way
    assert stguard.scan(p, profile="compat").ok


def test_limits():
    d = stguard.Limits.defaults()
    assert d.max_rank == 64 and d.max_nesting == 4
    with pytest.raises(TypeError):
        stguard.Limits(max_rank=-1)
    with pytest.raises(TypeError):
        stguard.Limits(max_rank="3")
    # a limit that the file exceeds is a finding naming the limit
    r = stguard.scan(EXAMPLES / "model.safetensors", limits=stguard.Limits(max_tensors=1))
    assert r.verdict >= stguard.Verdict.INVALID
    assert any(f.limit == "max_tensors" for f in r.findings), r
    # the near miss: enough tensors allowed
    assert stguard.scan(EXAMPLES / "model.safetensors", limits=stguard.Limits(max_tensors=2)).ok
    with pytest.raises(ValueError):  # above the hard ceiling
        stguard.scan(EXAMPLES / "model.safetensors", limits=stguard.Limits(max_nesting=10**6))
    with pytest.raises(ValueError):
        stguard.scan(EXAMPLES / "model.safetensors", profile="lenient")


# protocol 2: GLOBAL mypkg.Thing, then STOP
UNKNOWN_GLOBAL_PICKLE = b"\x80\x02cmypkg\nThing\nq\x00."


def test_policy():
    pkl = EXAMPLES / "torch" / "pytorch_model.bin"
    assert stguard.scan(pkl).verdict <= stguard.Verdict.WARN
    base = stguard.scan_bytes(UNKNOWN_GLOBAL_PICKLE, name="x.pkl")
    assert base.verdict == stguard.Verdict.UNSAFE and base.globals[0].klass == "unknown"
    allowed = stguard.scan_bytes(
        UNKNOWN_GLOBAL_PICKLE, name="x.pkl", policy=stguard.Policy(allow=["mypkg:Thing"])
    )
    assert allowed.verdict <= stguard.Verdict.WARN and allowed.globals[0].klass == "allowed"
    pairs = stguard.scan_bytes(
        UNKNOWN_GLOBAL_PICKLE, name="x.pkl", policy=stguard.Policy(allow=[("mypkg", "Thing")])
    )
    assert pairs.globals[0].klass == "allowed"
    denied = stguard.scan_bytes(
        UNKNOWN_GLOBAL_PICKLE, name="x.pkl", policy=stguard.Policy(deny=["mypkg"])
    )
    assert denied.verdict == stguard.Verdict.UNSAFE and denied.globals[0].klass == "dangerous"
    from_text = stguard.Policy(text="stguard-policy 1\nallow mypkg Thing\n")
    assert stguard.scan_bytes(UNKNOWN_GLOBAL_PICKLE, policy=from_text).globals[0].klass == "allowed"
    with pytest.raises(ValueError):
        stguard.Policy(allow=["os:system"])  # hard-blocked: never allowed
    with pytest.raises(ValueError):
        stguard.Policy(allow=["no-colon"])
    pol = stguard.Policy(allow=[("collections", "OrderedDict")])
    with pytest.raises(AttributeError):
        pol._c = None
    with pytest.raises(TypeError):
        stguard.scan(pkl, policy="torch")
    assert stguard.Policy.version()


def test_reports_are_immutable():
    r = stguard.scan(EXAMPLES / "unsafe" / "os_system.pkl")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.verdict = stguard.Verdict.OK
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.findings[0].code = "x"
    assert isinstance(r.findings, tuple)


def test_bad_arguments():
    with pytest.raises(TypeError):
        stguard.scan(123)
    with pytest.raises(TypeError):
        stguard.scan_bytes("text is not bytes")
    with pytest.raises(TypeError):
        stguard.scan(EXAMPLES / "model.safetensors", limits={"max_rank": 3})
    with pytest.raises(ValueError):
        stguard.scan("a\0b")


def test_verdict_order():
    assert stguard.Verdict.OK < stguard.Verdict.WARN < stguard.Verdict.INVALID
    assert stguard.Verdict.INVALID < stguard.Verdict.UNSAFE < stguard.Verdict.ERROR
    assert stguard.Verdict.from_label("unsafe") is stguard.Verdict.UNSAFE
    assert stguard.Verdict.WARN.label == "warn"


# ------------------------------------------------------------------------------------ loading

NUMPY_CASES = [
    ("BOOL", "?", [True, False, True]),
    ("U8", "u1", [0, 7, 255]),
    ("I8", "i1", [-128, 0, 127]),
    ("I16", "<i2", [-3, 0, 30000]),
    ("U16", "<u2", [0, 1, 65535]),
    ("F16", "<f2", [0.5, -2.0, 65504.0]),
    ("I32", "<i4", [-(2**31), 0, 2**31 - 1]),
    ("U32", "<u4", [0, 1, 2**32 - 1]),
    ("F32", "<f4", [1.5, -0.25, 3.0e38]),
    ("F64", "<f8", [1e300, -1e-300, 0.0]),
    ("I64", "<i8", [-(2**63), 0, 2**63 - 1]),
    ("U64", "<u8", [0, 1, 2**64 - 1]),
    ("C64", "<c8", [1 + 2j, -3j, 0]),
]


@pytest.fixture
def all_dtypes(tmp_path):
    """Every dtype, written widest element first so each tensor starts aligned to its element
    (a misaligned one would be a warning)."""
    tensors = []
    rows = numpy.arange(24, dtype="<i4").reshape(6, 4)
    cases = sorted(NUMPY_CASES, key=lambda c: -numpy.dtype(c[1]).itemsize)
    for st, npd, values in cases:
        arr = numpy.array(values, dtype=numpy.dtype(npd)).reshape(3, 1)
        tensors.append((st, st, arr.shape, arr.tobytes()))
        if st == "C64":
            tensors.append(("rows", "I32", rows.shape, rows.tobytes()))
            tensors.append(("scalar", "F32", (), struct.pack("<f", 2.5)))
            tensors.append(("empty", "F32", (0, 4), b""))
        if st == "F16":
            tensors.append(("BF16", "BF16", (2, 2), struct.pack("<4H", 0x3F80, 0xC000, 0, 0x7F80)))
    tensors.append(("F8_E4M3", "F8_E4M3", (4,), bytes([0x38, 0x40, 0xB8, 0x00])))
    tensors.append(("F8_E5M2", "F8_E5M2", (2,), bytes([0x3C, 0xC0])))
    tensors.append(("F4", "F4", (4,), bytes([0x21, 0x43])))
    return write_safetensors(tmp_path / "all.safetensors", tensors, {"format": "pt", "k": "v"})


def test_safe_open_every_numpy_dtype(all_dtypes):
    with stguard.safe_open(all_dtypes, framework="numpy") as f:
        assert f.keys() == sorted(f.keys()) and "rows" in f.keys()
        assert f.metadata() == {"format": "pt", "k": "v"}
        assert f.report.ok
        for st, npd, values in NUMPY_CASES:
            got = f.get_tensor(st)
            want = numpy.frombuffer(
                numpy.array(values, dtype=numpy.dtype(npd)).tobytes(), dtype=numpy.dtype(npd)
            ).reshape(3, 1)
            assert got.dtype == want.dtype and got.shape == (3, 1)
            assert numpy.array_equal(got, want), st
        bf = f.get_tensor("BF16")  # raw uint16 view: numpy has no bfloat16
        assert bf.dtype == numpy.dtype("<u2") and bf.tolist() == [[0x3F80, 0xC000], [0, 0x7F80]]
        assert "BF16" in stguard.RAW_VIEW_DTYPES
        assert f.get_tensor("F8_E4M3").tolist() == [0x38, 0x40, 0xB8, 0x00]
        with pytest.raises(TypeError):
            f.get_tensor("F4")  # no whole-byte element
        assert f.read_bytes("F4") == bytes([0x21, 0x43])
        assert f.get_tensor("scalar").shape == () and float(f.get_tensor("scalar")) == 2.5
        assert f.get_tensor("empty").shape == (0, 4)
        with pytest.raises(KeyError):
            f.get_tensor("absent")


def test_get_slice_reads_rows(all_dtypes):
    rows = numpy.arange(24, dtype="<i4").reshape(6, 4)
    with stguard.safe_open(all_dtypes) as f:
        s = f.get_slice("rows")
        assert s.get_shape() == [6, 4] and s.get_dtype() == "I32"
        assert numpy.array_equal(s[1:4], rows[1:4])
        assert numpy.array_equal(s[2], rows[2])
        assert numpy.array_equal(s[-1], rows[-1])
        assert numpy.array_equal(s[1:5, 2:], rows[1:5, 2:])
        assert numpy.array_equal(s[:], rows)
        assert numpy.array_equal(s[...], rows)
        assert s[4:2].shape == (0, 4)
        with pytest.raises(IndexError):
            s[6]
        assert numpy.array_equal(s[::2], rows[::2])  # steps: test_api.py compares them all


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_safe_open_torch(all_dtypes):
    with stguard.safe_open(all_dtypes, framework="pt") as f:
        for st, npd, values in NUMPY_CASES:
            name = {"U16": "uint16", "U32": "uint32", "U64": "uint64"}.get(st)
            if name is not None and not hasattr(torch, name):
                with pytest.raises(TypeError):
                    f.get_tensor(st)
                continue
            got = f.get_tensor(st)
            want = torch.from_numpy(numpy.array(values, dtype=numpy.dtype(npd)).reshape(3, 1))
            assert got.dtype == want.dtype and torch.equal(got, want), st
        bf = f.get_tensor("BF16")
        assert bf.dtype == torch.bfloat16
        assert bf.float().tolist() == [[1.0, -2.0], [0.0, float("inf")]]
        assert torch.equal(f.get_slice("rows")[2:4], torch.arange(24, dtype=torch.int32).reshape(6, 4)[2:4])


def test_load_file(all_dtypes, tmp_path):
    rows = numpy.arange(24, dtype="<i4").reshape(6, 4)
    p = write_safetensors(tmp_path / "two.safetensors",
                          [("rows", "I32", rows.shape, rows.tobytes()), ("b", "U8", (2,), b"\1\2")])
    d = stguard.load_file(p)
    assert set(d) == {"rows", "b"}
    assert numpy.array_equal(d["rows"], rows) and d["b"].tolist() == [1, 2]
    with pytest.raises(TypeError):  # the F4 tensor has no numpy form: refused, not guessed
        stguard.load_file(all_dtypes)


def test_safe_open_refuses_broken_and_unsafe_files():
    for rel in ("broken/overlap.safetensors", "broken/truncated.safetensors",
                "broken/size_mismatch.safetensors", "broken/weights.bin", "unsafe/os_system.pkl",
                "torch/pytorch_model.bin"):
        with pytest.raises(stguard.UnsafeFileError) as e:
            stguard.safe_open(EXAMPLES / rel)
        assert e.value.report.verdict >= stguard.Verdict.INVALID, rel
        assert e.value.report.findings, rel
    # warn passes by default, not with allow_warn=False
    with stguard.safe_open(EXAMPLES / "unpadded.safetensors") as f:
        assert f.report.verdict == stguard.Verdict.WARN
    with pytest.raises(stguard.UnsafeFileError):
        stguard.safe_open(EXAMPLES / "unpadded.safetensors", allow_warn=False)
    with pytest.raises(stguard.ReadError) as e:
        stguard.safe_open(EXAMPLES / "no-such-file.safetensors")
    assert isinstance(e.value, OSError) and e.value.status == "STG_E_IO"
    with pytest.raises(ValueError):
        stguard.safe_open(EXAMPLES / "model.safetensors", framework="jax")


def test_file_changed_after_open(tmp_path):
    p = write_safetensors(tmp_path / "m.safetensors", [("a", "F32", (4,), b"\0" * 16)])
    f = stguard.safe_open(p)
    os.truncate(p, os.path.getsize(p) - 8)
    with pytest.raises(stguard.FileChangedError) as e:
        f.get_tensor("a")
    assert e.value.status == "STG_FILE_CHANGED"
    f.close()
    with pytest.raises(ValueError):
        f.get_tensor("a")  # closed


def test_open_model_sharded():
    with stguard.open_model(EXAMPLES / "sharded") as m:
        assert len(m.shards()) == 2
        assert m.keys()
        for name in m.keys():
            t = m.get_tensor(name)
            assert isinstance(t, numpy.ndarray)
    with stguard.open_model(EXAMPLES / "sharded" / "model.safetensors.index.json") as m2:
        assert m2.keys() == stguard.open_model(EXAMPLES / "sharded").keys()


def test_open_model_with_missing_shard(tmp_path):
    d = tmp_path / "m"
    shutil.copytree(EXAMPLES / "sharded", d)
    (d / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(stguard.StguardError):
        stguard.open_model(d)


# ------------------------------------------------------------------------------------ threads, leaks


def test_threads_scan_the_same_tree():
    files = example_files()
    want = {p: stguard.scan(p).to_dict() for p in files}
    results, errors = [], []

    def work():
        try:
            for p in files:
                results.append((p, stguard.scan(p).to_dict()))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 8 * len(files)
    for p, rec in results:
        assert rec == want[p]


def _rss_kib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_no_leak_in_a_loop(all_dtypes):
    def round_():
        for p in example_files():
            stguard.scan(p)
            stguard.scan_bytes(p.read_bytes(), name=p.name)
        with stguard.safe_open(all_dtypes) as f:
            for k in f.keys():
                try:
                    f.get_tensor(k)
                except TypeError:
                    pass
        try:
            stguard.safe_open(EXAMPLES / "unsafe" / "os_system.pkl")
        except stguard.UnsafeFileError:
            pass

    for _ in range(30):
        round_()
    before = _rss_kib()
    for _ in range(300):
        round_()
    grown = _rss_kib() - before
    assert grown < 4096, f"RSS grew by {grown} KiB over 300 rounds"
