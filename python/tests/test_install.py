"""The documented install route works offline and gives a self-contained package: a venv that
sees the system's packages (`python3 -m venv --system-site-packages`; Debian 12's pip refuses to
install outside one, PEP 668), then `pip install --no-build-isolation ./python` in it. The
extension holds the library (no libstguard.so needed), exports only its init function, and
scans, loads, saves and loads pickles like the build-tree package, with the system's numpy (and
torch, when installed) seen from the venv."""

import os
import pathlib
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(os.environ.get("STG_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


def have(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


@pytest.mark.skipif(not have("venv") or not have("ensurepip"), reason="venv/ensurepip absent")
def test_venv_install_offline(tmp_path):
    venv, build = tmp_path / "venv", tmp_path / "libbuild"
    env = dict(os.environ, STGUARD_BUILD_DIR=str(build), PIP_NO_INDEX="1")
    env.pop("PYTHONPATH", None)
    made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    py = venv / "bin" / "python"
    out = subprocess.run(
        [str(py), "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
         str(SOURCE / "python")],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    ext = list(venv.glob("lib/python3*/site-packages/stguard/_stguard*.so"))
    assert len(ext) == 1, ext
    ldd = subprocess.run(["ldd", str(ext[0])], capture_output=True, text=True).stdout
    assert "libstguard" not in ldd  # the static library is inside
    nm = subprocess.run(["nm", "-D", "--defined-only", str(ext[0])], capture_output=True, text=True)
    exported = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
    assert exported == {"PyInit__stguard"}, exported
    check = f"""
import numpy, stguard, sys
r = stguard.scan({str(SOURCE / 'corpus/examples/unsafe/os_system.pkl')!r})
assert r.verdict == stguard.Verdict.UNSAFE, r
f = stguard.safe_open({str(SOURCE / 'corpus/examples/model.safetensors')!r})
assert f.keys()
data = stguard.save({{"a": numpy.arange(4.0)}})
assert stguard.load(data)["a"].tolist() == [0.0, 1.0, 2.0, 3.0]
try:
    import torch
except ImportError:
    torch = None
if torch is not None:  # the system's torch, seen from the venv
    torch.save({{"w": torch.ones(2)}}, "ck.pt")
    assert torch.equal(stguard.load_pickle("ck.pt")["w"], torch.ones(2))
print(stguard.__file__)
"""
    run = subprocess.run([str(py), "-c", check], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().startswith(str(venv))
