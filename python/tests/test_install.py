"""`pip install --no-build-isolation ./python` works offline and gives a self-contained package:
the extension holds the library (no libstguard.so needed), exports only its init function, and
scans and loads like the build-tree package."""

import os
import pathlib
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(os.environ.get("STG_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


def have(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


@pytest.mark.skipif(not have("pip") or not have("setuptools"), reason="pip/setuptools absent")
def test_pip_install_offline(tmp_path):
    target, build = tmp_path / "site", tmp_path / "libbuild"
    env = dict(os.environ, STGUARD_BUILD_DIR=str(build), PIP_NO_INDEX="1")
    env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
         "--no-deps", "--target", str(target), str(SOURCE / "python")],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    ext = list((target / "stguard").glob("_stguard*.so"))
    assert len(ext) == 1
    ldd = subprocess.run(["ldd", str(ext[0])], capture_output=True, text=True).stdout
    assert "libstguard" not in ldd  # the static library is inside
    nm = subprocess.run(["nm", "-D", "--defined-only", str(ext[0])], capture_output=True, text=True)
    exported = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
    assert exported == {"PyInit__stguard"}, exported
    check = (
        "import stguard, sys;"
        f"r = stguard.scan({str(SOURCE / 'corpus/examples/unsafe/os_system.pkl')!r});"
        "assert r.verdict == stguard.Verdict.UNSAFE, r;"
        f"f = stguard.safe_open({str(SOURCE / 'corpus/examples/model.safetensors')!r});"
        "assert f.keys(); print(stguard.__file__)"
    )
    run = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                         env=dict(env, PYTHONPATH=str(target)), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().startswith(str(target))
