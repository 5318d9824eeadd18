"""stguard.scan() on an ONNX model whose external data names a FIFO in its own folder (issue 23
item 1): it returns promptly with not_regular_file (it used to block in open() for good, and no
signal ended it). The scan runs in a child process so that a hang fails the test, not the run."""
import os
import subprocess
import sys
import textwrap


def _varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if v == 0:
            return bytes(out)


def _ld(field, payload):
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _model(location):
    """ir_version 8, opset 13, one Relu and an initializer whose data is external at location."""
    entry = lambda k, v: _ld(13, _ld(1, k.encode()) + _ld(2, v.encode()))  # noqa: E731
    tensor = (_varint(1 << 3) + _varint(4) + _varint(2 << 3) + _varint(1) + _ld(8, b"w") +
              entry("location", location) + entry("offset", "0") + entry("length", "16") +
              _varint(14 << 3) + _varint(1))
    node = _ld(1, b"x") + _ld(2, b"y") + _ld(4, b"Relu")
    graph = _ld(1, node) + _ld(2, b"g") + _ld(5, tensor)
    opset = _ld(1, b"") + _varint(2 << 3) + _varint(13)
    return _varint(1 << 3) + _varint(8) + _ld(7, graph) + _ld(8, opset)


def test_scan_external_data_fifo_returns(tmp_path):
    (tmp_path / "model.onnx").write_bytes(_model("w.bin"))
    os.mkfifo(tmp_path / "w.bin")
    child = textwrap.dedent("""
        import sys, stguard
        r = stguard.scan(sys.argv[1])
        print(r.verdict.name, " ".join(r.codes()))
    """)
    p = subprocess.run([sys.executable, "-c", child, str(tmp_path / "model.onnx")],
                       capture_output=True, text=True, timeout=30, env=os.environ.copy())
    assert p.returncode == 0, p.stderr
    verdict, *codes = p.stdout.split()
    assert verdict == "INVALID" and "not_regular_file" in codes, p.stdout
    # near miss: a regular file of the size the entry names
    os.unlink(tmp_path / "w.bin")
    (tmp_path / "w.bin").write_bytes(bytes(16))
    p = subprocess.run([sys.executable, "-c", child, str(tmp_path / "model.onnx")],
                       capture_output=True, text=True, timeout=30, env=os.environ.copy())
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[0] == "OK", p.stdout
