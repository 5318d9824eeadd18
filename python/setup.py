"""Builds stguard._stguard against libstguard's static library, which CMake builds first from the
repository this folder lives in (python/..), so the installed package needs no libstguard.so.

    python3 -m venv --system-site-packages VENV      # Debian 12's pip refuses outside a venv
    VENV/bin/pip install --no-build-isolation ./python

Environment: STGUARD_CMAKE (cmake binary, default "cmake"), STGUARD_BUILD_DIR (where the library
is built, default python/build/libstguard)."""

import os
import pathlib
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


class BuildWithLibrary(build_ext):
    def run(self):
        build = pathlib.Path(os.environ.get("STGUARD_BUILD_DIR", HERE / "build" / "libstguard"))
        cmake = os.environ.get("STGUARD_CMAKE", "cmake")
        off = ["TESTS", "TOOLS", "FUZZERS", "REPLAY", "BENCH", "PYTHON"]
        subprocess.check_call(
            [cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
            + [f"-DSTG_BUILD_{o}=OFF" for o in off]
        )
        subprocess.check_call([cmake, "--build", str(build), "--target", "stguard_static", "-j2"])
        for ext in self.extensions:
            ext.extra_objects = [str(build / "libstguard.a")]
        super().run()


setup(
    ext_modules=[
        Extension(
            "stguard._stguard",
            sources=["src/_stguard.c"],
            # ROOT: convert/load.h (load_pickle), linked from the same static library
            include_dirs=[str(ROOT / "include"), str(ROOT)],
            # libcrypto, zlib, liblzma and libbz2 are loaded by the library on first use (dlopen)
            libraries=["dl", "pthread"],
            extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers"],
            # the library's symbols stay inside the extension
            extra_link_args=["-Wl,--exclude-libs,ALL", "-Wl,-z,relro,-z,now"],
        )
    ],
    cmdclass={"build_ext": BuildWithLibrary},
)
