"""Pickle checkpoints without torch's unpickler: load_pickle, and guard_torch_load.

load_pickle hands the file's bytes to the library's restricted evaluator (convert/eval.c, the
one `stguard convert` uses) after the scan passed: nothing in the file runs, and only the
reconstruction calls of a weights file are understood (docs/convert.md). The values it rebuilds
become Python objects here: one buffer per storage, every tensor a strided view of its storage
(so tied weights and views share memory, as torch.load gives them)."""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from typing import Any, Callable, Dict, List, Optional

from . import _stguard
from ._core import (
    Limits,
    PathLike,
    Policy,
    Report,
    UnsafeFileError,
    _limit_spec,
    _policy_c,
    scan,
)
from ._open import _NUMPY_DTYPES, _check_framework, _torch_dtype


def _make_storage_numpy(buf: bytearray, dtype: str, big_endian: bool) -> Any:
    import numpy

    entry = _NUMPY_DTYPES.get(dtype)
    if entry is None:  # the evaluator makes no storage of a sub-byte type
        raise TypeError(f"{dtype} has no whole-byte element")
    arr = numpy.frombuffer(buf, dtype=numpy.dtype(entry[0]))
    if big_endian:
        arr.byteswap(inplace=True)
    return arr


def _make_tensor_numpy(base: Any, offset: int, shape: tuple, stride: tuple, requires_grad: bool,
                       parameter: bool) -> Any:
    from numpy.lib.stride_tricks import as_strided

    size = base.itemsize
    return as_strided(base[offset:], shape=shape, strides=tuple(s * size for s in stride))


def _make_storage_torch(buf: bytearray, dtype: str, big_endian: bool) -> Any:
    import torch

    arr = _make_storage_numpy(buf, dtype, big_endian)
    tdtype = _torch_dtype(dtype)
    if arr.size == 0:
        return torch.empty(0, dtype=tdtype)
    return torch.frombuffer(buf, dtype=tdtype)


def _make_tensor_torch(base: Any, offset: int, shape: tuple, stride: tuple, requires_grad: bool,
                       parameter: bool) -> Any:
    import torch

    t = base.as_strided(shape, stride, offset)  # a leaf: base requires no grad
    if parameter:  # as torch._utils._rebuild_parameter
        return torch.nn.Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def load_pickle(
    path: PathLike,
    framework: str = "pt",
    select: Optional[str] = None,
    *,
    profile: str = "strict",
    limits: Optional[Limits] = None,
    policy: Optional[Policy] = None,
) -> Dict[Any, Any]:
    """Loads a torch.save file (zip or legacy), a .npy or an .npz without unpickling it: the
    scan must pass (verdict at worst warn), then the restricted evaluator rebuilds the values.
    Returns the checkpoint's dict (torch tensors with framework="pt", numpy arrays with "np");
    select="state_dict" returns the dict under that key. Raises UnsafeFileError (with .report)
    for anything that is not weights only; nothing in the file runs either way."""
    where = os.fspath(path)
    with open(where, "rb") as fh:  # read once: the bytes scanned are the bytes evaluated
        data = fh.read()
    value = _load_bytes(data, os.fsdecode(where), framework, profile, limits, policy)
    if select is not None:
        if not isinstance(value, dict) or select not in value:
            raise KeyError(f"{where}: select={select!r} is not a key of the checkpoint's dict")
        value = value[select]
        if not isinstance(value, dict):
            raise TypeError(f"{where}: the value under {select!r} is not a dict")
    return value


def _load_bytes(data, where, framework, profile, limits, policy) -> Any:
    fw = _check_framework(framework)
    make = (_make_storage_torch, _make_tensor_torch) if fw == "pt" else (
        _make_storage_numpy, _make_tensor_numpy)
    spec = _limit_spec(limits, profile)
    raw, value = _stguard.load_pickle(
        data, os.path.basename(where), spec, _policy_c(policy), make[0], make[1]
    )
    report = Report._from_raw(raw)
    if value is None:
        codes = ", ".join(c for c in report.codes() if c != "pickle_file") or "refused"
        raise UnsafeFileError(
            f"{where}: not loaded ({report.verdict.label}: {codes}): it is not a weights-only "
            "checkpoint that the restricted evaluator rebuilds; nothing in it ran", report)
    return value


# ---------------------------------------------------------------------------- guard_torch_load


class TorchLoadGuard:
    """What guard_torch_load returns: torch.load scans every file before loading it until
    remove() (or the end of the with block) puts the original back."""

    def __init__(self, original: Callable, guarded: Callable, options: dict):
        self._original = original
        self._guarded = guarded
        self.options = options

    @property
    def active(self) -> bool:
        import torch

        return torch.load is self._guarded

    def remove(self) -> None:
        """Undoes the patch (a no-op when already removed). When another patch was put over
        this one meanwhile, that one is left in place and this guard no longer scans."""
        import torch

        with _GUARD_LOCK:
            if torch.load is self._guarded:
                torch.load = self._original
            self._guarded.__stguard_removed__ = True  # type: ignore[attr-defined]

    def __enter__(self) -> "TorchLoadGuard":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


_GUARD_LOCK = threading.Lock()


def _open_regular(path: Any) -> Optional[Any]:
    """The file torch.load will read, opened once, without blocking (a FIFO would block); None
    when it is not a regular file (which the scan refuses to read)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _scan_open_file(path: Any, fh: Any, options: dict) -> Report:
    """Scans the very file fh is open on (so a file renamed over path after the scan is not
    what torch reads), under path's own name (the name a format is claimed by): through a link
    of that name to /proc/self/fd/N. Without /proc, the path itself is scanned."""
    from ._core import scan

    proc = f"/proc/self/fd/{fh.fileno()}"
    if not os.path.exists(proc):  # pragma: no cover - Linux has /proc
        return scan(path, **options)
    with tempfile.TemporaryDirectory(prefix="stguard-guard-") as d:
        link = os.path.join(d, os.path.basename(os.fsdecode(path)) or "file")
        os.symlink(proc, link)
        return scan(link, **options)


def _scan_stream(f: Any, options: dict) -> List[Report]:
    """Reports on what torch.load(f) reads from a file-like object: its bytes at the current
    position (the position is put back), which is where torch.load reads a legacy file or a
    pickle; when those bytes start as a zip (torch's _is_zipfile looks at the same four bytes),
    torch's zip reader seeks to absolute offsets in the whole stream, so the whole stream is
    scanned as well."""
    from ._core import scan_bytes

    pos = f.tell()
    f.seek(0)
    whole = f.read()
    f.seek(pos)
    name = getattr(f, "name", None)
    hint = os.path.basename(name) if isinstance(name, str) else None
    reports = [scan_bytes(memoryview(whole)[pos:], hint, **options)]
    if pos != 0 and whole[pos : pos + 4] == b"PK\x03\x04":
        reports.append(scan_bytes(whole, hint, **options))
    return reports


def guard_torch_load(
    *,
    allow_warn: bool = True,
    profile: str = "strict",
    limits: Optional[Limits] = None,
    policy: Optional[Policy] = None,
) -> TorchLoadGuard:
    """Patches torch.load (and so code that calls it, transformers' loading of
    pytorch_model.bin included) to scan the file first: a file whose verdict is worse than warn
    (than ok with allow_warn=False) raises UnsafeFileError before torch reads a byte; others
    load as before. Use as `with stguard.guard_torch_load(): ...` or keep the returned object
    and call its remove()."""
    import torch

    options = {"profile": profile, "limits": limits, "policy": policy, "digest": False}
    worst = 1 if allow_warn else 0

    with _GUARD_LOCK:
        original = torch.load

        def guarded_load(f, *args, **kwargs):
            if getattr(guarded_load, "__stguard_removed__", False):
                return original(f, *args, **kwargs)
            if not isinstance(f, (str, bytes, os.PathLike)):
                refuse(f, max(_scan_stream(f, options), key=lambda r: r.verdict))
                return original(f, *args, **kwargs)
            if kwargs.get("mmap"):  # torch maps the path itself: scanned by path
                refuse(f, scan(f, **options))
                return original(f, *args, **kwargs)
            fh = _open_regular(f)
            if fh is None:
                refuse(f, scan(f, **options), always=True)
            with fh:  # torch reads the very file that was scanned
                refuse(f, _scan_open_file(f, fh, options))
                return original(fh, *args, **kwargs)

        def refuse(f, report: Report, always: bool = False) -> None:
            if always or int(report.verdict) > worst:
                codes = ", ".join(c for c in report.codes() if c != "pickle_file")
                shown = os.fsdecode(f) if isinstance(f, (str, bytes, os.PathLike)) else repr(f)
                raise UnsafeFileError(
                    f"torch.load({shown}) refused by stguard: {report.verdict.label} ({codes})",
                    report)

        guarded_load.__wrapped__ = original  # type: ignore[attr-defined]
        guarded_load.__doc__ = original.__doc__
        torch.load = guarded_load
    return TorchLoadGuard(original, guarded_load, options)
