"""Loading, validated first: the surface of safetensors.safe_open over libstguard's loader.

Every byte handed out is copied with pread from a file whose header, layout and polyglot checks
passed (stg_file_open / stg_model_open); a file changed after it was validated raises
FileChangedError instead of returning other bytes."""

from __future__ import annotations

import array
import math
import os
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

from . import _stguard
from ._core import Limits, PathLike, ReadError, Report, UnsafeFileError, Verdict, _limit_spec

# safetensors dtype -> (numpy dtype string, itemsize). Types numpy has no dtype for are handed
# out as raw unsigned views of the same width (bf16 as uint16, the F8 types as uint8); the
# sub-byte types (F4, F6_*) have no whole-byte element and are refused by get_tensor.
_NUMPY_DTYPES = {
    "BOOL": ("?", 1),
    "U8": ("u1", 1),
    "I8": ("i1", 1),
    "I16": ("<i2", 2),
    "U16": ("<u2", 2),
    "F16": ("<f2", 2),
    "BF16": ("<u2", 2),
    "I32": ("<i4", 4),
    "U32": ("<u4", 4),
    "F32": ("<f4", 4),
    "C64": ("<c8", 8),
    "F64": ("<f8", 8),
    "I64": ("<i8", 8),
    "U64": ("<u8", 8),
    "F8_E5M2": ("u1", 1),
    "F8_E4M3": ("u1", 1),
    "F8_E8M0": ("u1", 1),
    "F8_E4M3FNUZ": ("u1", 1),
    "F8_E5M2FNUZ": ("u1", 1),
}

# dtypes whose numpy form is a raw view, not the value type
RAW_VIEW_DTYPES = frozenset(
    {"BF16", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ"}
)

_TORCH_NAMES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "I16": "int16",
    "F16": "float16",
    "BF16": "bfloat16",
    "I32": "int32",
    "F32": "float32",
    "C64": "complex64",
    "F64": "float64",
    "I64": "int64",
    "U16": "uint16",
    "U32": "uint32",
    "U64": "uint64",
    "F8_E5M2": "float8_e5m2",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz",
    "F8_E8M0": "float8_e8m0fnu",
}

_FRAMEWORKS = ("numpy", "np", "pt", "torch")


def _check_framework(framework: str) -> str:
    if framework not in _FRAMEWORKS:
        raise ValueError(f"framework must be one of {_FRAMEWORKS}")
    if framework in ("pt", "torch"):
        try:
            import torch  # noqa: F401
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("framework='pt' needs torch") from e
        return "pt"
    return "numpy"


def _host_order(buf: bytearray, dtype: str, byteorder: str = sys.byteorder) -> bytearray:
    """buf (file order: little-endian) in the byte order of a host of `byteorder`: unchanged on a
    little-endian host and for one-byte types; on a big-endian one each element's bytes reversed
    (complex64: each float32 half). torch.frombuffer reads host order, numpy gets '<' dtypes."""
    unit = 4 if dtype == "C64" else _NUMPY_DTYPES.get(dtype, ("", 1))[1]
    if byteorder == "little" or unit == 1:
        return buf
    words = array.array(next(c for c in "HILQ" if array.array(c).itemsize == unit), bytes(buf))
    words.byteswap()
    return bytearray(words.tobytes())


def _to_array(buf: bytearray, dtype: str, shape: Tuple[int, ...], framework: str) -> Any:
    if framework == "pt":
        import torch

        name = _TORCH_NAMES.get(dtype)
        tdtype = getattr(torch, name, None) if name is not None else None
        if tdtype is None:
            raise TypeError(f"torch {torch.__version__} has no dtype for {dtype}")
        if len(buf) == 0:
            return torch.empty(shape, dtype=tdtype)
        return torch.frombuffer(_host_order(buf, dtype), dtype=tdtype).reshape(shape)
    import numpy

    entry = _NUMPY_DTYPES.get(dtype)
    if entry is None:
        raise TypeError(f"{dtype} has no whole-byte element; read its packed bytes with read_bytes()")
    return numpy.frombuffer(buf, dtype=numpy.dtype(entry[0])).reshape(shape)


class _Tensor:
    __slots__ = ("index", "name", "dtype", "shape", "begin", "end", "shard")

    def __init__(self, raw: tuple):
        self.index, self.name, self.dtype, self.shape, self.begin, self.end, self.shard = raw

    @property
    def nbytes(self) -> int:
        return self.end - self.begin


class _Opened:
    """What safe_open and open_model share: a validated handle and its tensor table."""

    def __init__(self, handle, report: Report, framework: str):
        self._h = handle
        self.report = report
        self._framework = framework
        self._tensors: Dict[str, _Tensor] = {}
        for raw in handle.tensors():
            t = _Tensor(raw)
            self._tensors[t.name] = t

    # context manager
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._h.close()

    def keys(self) -> List[str]:
        """Tensor names, sorted (as safetensors.safe_open.keys())."""
        return sorted(self._tensors)

    def offset_keys(self) -> List[str]:
        """Tensor names in data order."""
        return [t.name for t in sorted(self._tensors.values(), key=lambda t: t.index)]

    def _tensor(self, name: str) -> _Tensor:
        try:
            return self._tensors[name]
        except KeyError:
            raise KeyError(f"no tensor named {name!r}") from None

    def read_bytes(self, name: str) -> bytes:
        """The tensor's bytes exactly as stored (little-endian, packed for sub-byte types)."""
        t = self._tensor(name)
        return bytes(self._h.read(t.index))

    def get_tensor(self, name: str) -> Any:
        t = self._tensor(name)
        return _to_array(self._h.read(t.index), t.dtype, t.shape, self._framework)

    def get_slice(self, name: str) -> "TensorSlice":
        return TensorSlice(self, self._tensor(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._tensors)


class SafeOpen(_Opened):
    """A validated safetensors file (see safe_open)."""

    def metadata(self) -> Optional[Dict[str, str]]:
        """The __metadata__ strings, or None when the file has none (as safetensors)."""
        entries = self._h.metadata()
        return dict(entries) if entries else None


class Model(_Opened):
    """A validated sharded model (see open_model)."""

    def shards(self) -> Tuple[str, ...]:
        return self._h.shards()

    def metadata(self) -> Optional[Dict[str, str]]:
        return None


class TensorSlice:
    """get_slice(name)[rows, ...]: rows (the first dimension) are read alone through the safe
    copying path; the remaining indexes are applied to those rows in memory."""

    def __init__(self, owner: _Opened, t: _Tensor):
        self._owner = owner
        self._t = t

    def get_shape(self) -> List[int]:
        return list(self._t.shape)

    def get_dtype(self) -> str:
        return self._t.dtype

    def __getitem__(self, key: Any) -> Any:
        t = self._t
        rest: Tuple[Any, ...] = ()
        if isinstance(key, tuple):
            key, rest = (key[0], key[1:]) if key else (slice(None), ())
        if len(t.shape) == 0:
            if key not in (Ellipsis, slice(None)) or rest:
                raise IndexError("a scalar tensor takes [...] or [:] only")
            return self._owner.get_tensor(t.name)
        if key is Ellipsis:
            key, rest = slice(None), (Ellipsis,) + rest
        rows = t.shape[0]
        if isinstance(key, int):
            index = key + rows if key < 0 else key
            if not 0 <= index < rows:
                raise IndexError("row index out of range")
            start, stop, squeeze = index, index + 1, True
        elif isinstance(key, slice):
            start, stop, step = key.indices(rows)
            if step != 1:
                raise ValueError("row slices take step 1")
            stop = max(stop, start)
            squeeze = False
        else:
            raise TypeError("index rows with an int or a slice")
        entry = _NUMPY_DTYPES.get(t.dtype)
        if entry is None:
            raise TypeError(f"{t.dtype} has no whole-byte element")
        row_bytes = entry[1] * math.prod(t.shape[1:])
        buf = self._owner._h.read(t.index, start * row_bytes, (stop - start) * row_bytes)
        shape = (stop - start,) + tuple(t.shape[1:])
        out = _to_array(buf, t.dtype, shape, self._owner._framework)
        if squeeze:
            return out[0][rest] if rest else out[0]
        return out[(slice(None),) + rest] if rest else out


def _raise_unless_passes(report: Optional[Report], status: str, allow_warn: bool, what: str):
    if report is None:
        raise _stguard.StguardError(f"{what}: {status}")
    if status == "STG_E_IO":
        detail = "; ".join(f.message for f in report.findings) or status
        raise ReadError(f"{what}: {detail}", report)
    worst = Verdict.WARN if allow_warn else Verdict.OK
    if report.verdict > worst:
        codes = ", ".join(report.codes()) or status
        raise UnsafeFileError(f"{what}: {report.verdict.label} ({codes})", report)


def safe_open(
    path: PathLike,
    framework: str = "numpy",
    device: str = "cpu",
    *,
    allow_warn: bool = True,
    profile: str = "strict",
    limits: Optional[Limits] = None,
) -> SafeOpen:
    """Validates a safetensors file, then opens it like safetensors.safe_open. Raises
    UnsafeFileError (carrying the report) when its verdict is worse than warn (or than ok with
    allow_warn=False)."""
    if device != "cpu":
        raise ValueError("stguard hands out CPU tensors only; move them with .to(device)")
    fw = _check_framework(framework)
    handle, raw, status = _stguard.open_file(os.fspath(path), _limit_spec(limits, profile))
    report = None if raw is None else Report._from_raw(raw)
    if handle is None:
        _raise_unless_passes(report, status, allow_warn, os.fspath(path))
        raise _stguard.StguardError(f"{os.fspath(path)}: {status}")  # pragma: no cover
    try:
        _raise_unless_passes(report, status, allow_warn, os.fspath(path))
    except BaseException:
        handle.close()
        raise
    return SafeOpen(handle, report, fw)


def open_model(
    dir_or_index: PathLike,
    framework: str = "numpy",
    *,
    allow_warn: bool = True,
    profile: str = "strict",
    limits: Optional[Limits] = None,
) -> Model:
    """A sharded model (a folder holding model.safetensors.index.json, or the index itself) with
    every shard validated, as one tensor table."""
    fw = _check_framework(framework)
    where = os.fspath(dir_or_index)
    handle, raw, status = _stguard.open_model(where, _limit_spec(limits, profile))
    report = None if raw is None else Report._from_raw(raw)
    if handle is None:
        _raise_unless_passes(report, status, allow_warn, where)
        raise _stguard.StguardError(f"{where}: {status}")  # pragma: no cover
    try:
        _raise_unless_passes(report, status, allow_warn, where)
    except BaseException:
        handle.close()
        raise
    return Model(handle, report, fw)


def load_file(path: PathLike, framework: str = "numpy", **kwargs: Any) -> Dict[str, Any]:
    """Every tensor of a validated safetensors file, like safetensors.numpy.load_file."""
    with safe_open(path, framework, **kwargs) as f:
        return {name: f.get_tensor(name) for name in f.keys()}
