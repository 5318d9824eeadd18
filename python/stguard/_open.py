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

from . import _slice, _stguard
from ._core import Limits, PathLike, ReadError, Report, UnsafeFileError, Verdict, _limit_spec, scan

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


def _check_device(device: Any) -> None:
    """Only the CPU: "cpu", torch.device("cpu"); CUDA devices, indexes and "meta" are refused."""
    if str(device) != "cpu" or isinstance(device, int):
        raise ValueError(
            f"device={device!r}: stguard hands out CPU tensors only (device='cpu'); move them "
            "with .to(device) after loading"
        )


def _check_framework(framework: str) -> str:
    if framework not in _FRAMEWORKS:
        raise ValueError(f"framework must be one of {_FRAMEWORKS}, not {framework!r}")
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

        tdtype = _torch_dtype(dtype)
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
    """get_slice(name)[key]: numpy's basic indexing (stguard/_slice.py). Only the rows of the
    first dimension the key touches are read, through the safe copying path; the rest of the
    key is applied by numpy to those rows, so the result equals numpy's on the whole tensor."""

    def __init__(self, owner: _Opened, t: _Tensor):
        self._owner = owner
        self._t = t

    def get_shape(self) -> List[int]:
        return list(self._t.shape)

    def get_dtype(self) -> str:
        return self._t.dtype

    def __getitem__(self, key: Any) -> Any:
        import numpy

        t = self._t
        entry = _NUMPY_DTYPES.get(t.dtype)
        if entry is None:
            raise TypeError(f"{t.dtype} has no whole-byte element")
        shape = tuple(t.shape)
        lo, hi, rebased = _slice.plan(key, shape)
        row_bytes = entry[1] * math.prod(shape[1:])
        if shape:
            buf = self._owner._h.read(t.index, lo * row_bytes, (hi - lo) * row_bytes)
            rows = numpy.frombuffer(buf, dtype=numpy.dtype(entry[0])).reshape(
                (hi - lo,) + shape[1:]
            )
        else:
            rows = numpy.frombuffer(self._owner._h.read(t.index), dtype=numpy.dtype(entry[0]))
            rows = rows.reshape(())
        out = rows[rebased]  # an array, or a numpy scalar when every dimension took an int
        if self._owner._framework == "pt":
            arr = numpy.asarray(out)  # (not ascontiguousarray: it makes 0-d arrays 1-d)
            return _numpy_to_torch(arr if arr.flags.c_contiguous else arr.copy(order="C"), t.dtype)
        return out


# numpy arrays of these dtypes become torch tensors with torch.from_numpy as they are; the
# others (bf16, float8, the unsigned types torch may lack) are reinterpreted from a signed view
# of the same width
_FROM_NUMPY_AS_IS = frozenset({"BOOL", "U8", "I8", "I16", "F16", "I32", "F32", "C64", "F64", "I64"})


def _numpy_to_torch(arr: Any, dtype: str) -> Any:
    import torch

    tdtype = _torch_dtype(dtype)
    if dtype in _FROM_NUMPY_AS_IS:
        return torch.from_numpy(arr)
    signed = {1: "u1", 2: "<i2", 4: "<i4", 8: "<i8"}[arr.dtype.itemsize]
    return torch.from_numpy(arr.view(signed)).view(tdtype)


def _torch_dtype(dtype: str) -> Any:
    import torch

    name = _TORCH_NAMES.get(dtype)
    tdtype = getattr(torch, name, None) if name is not None else None
    if tdtype is None:
        raise TypeError(f"torch {torch.__version__} has no dtype for {dtype}")
    return tdtype


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


_NOT_SAFETENSORS_HINT = (
    "a weights-only PyTorch or NumPy checkpoint loads with stguard.load_pickle(path) (nothing in "
    "it runs) or converts with `stguard convert`; stguard.scan(path) says what is in it"
)


def _refuse_other_format(path: PathLike, refusal: UnsafeFileError) -> None:
    """safe_open refused the file as safetensors: when its content is another format (a torch
    zip, a pickle, GGUF ...), say that, rather than the safetensors findings, which read like an
    attack on a file that is only not safetensors (header_too_large, polyglot_zip)."""
    try:
        content = scan(path, digest=False)
    except Exception:  # the refusal stands as it is
        return
    if content.format in ("safetensors", "unknown"):
        return
    judged = content.verdict.label
    hint = _NOT_SAFETENSORS_HINT
    if content.verdict >= Verdict.INVALID:
        judged += " (" + ", ".join(c for c in content.codes() if c != "pickle_file") + ")"
        hint = "do not load it; stguard.scan(path) has the findings"
    raise UnsafeFileError(
        f"{os.fspath(path)}: not a safetensors file: its content is {content.format}, which "
        f"stguard.scan calls {judged}; {hint}",
        refusal.report,
    ) from None


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
    _check_device(device)
    fw = _check_framework(framework)
    handle, raw, status = _stguard.open_file(os.fspath(path), _limit_spec(limits, profile))
    report = None if raw is None else Report._from_raw(raw)
    try:
        _raise_unless_passes(report, status, allow_warn, os.fspath(path))
    except UnsafeFileError as e:
        if handle is not None:
            handle.close()
        _refuse_other_format(path, e)
        raise
    except BaseException:
        if handle is not None:
            handle.close()
        raise
    if handle is None:  # pragma: no cover - a refusal always has a report that fails
        raise _stguard.StguardError(f"{os.fspath(path)}: {status}")
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


def load_file(
    path: PathLike, device: str = "cpu", *, framework: str = "numpy", **kwargs: Any
) -> Dict[str, Any]:
    """Every tensor of a validated safetensors file, like safetensors' load_file(path, device)
    (numpy arrays by default, torch tensors with framework="pt")."""
    if device in _FRAMEWORKS:  # the older load_file(path, framework) call
        device, framework = "cpu", device
    with safe_open(path, framework, device, **kwargs) as f:
        return {name: f.get_tensor(name) for name in f.keys()}


def load(
    data: Any,
    framework: str = "numpy",
    *,
    allow_warn: bool = True,
    profile: str = "strict",
    limits: Optional[Limits] = None,
) -> Dict[str, Any]:
    """Every tensor of safetensors bytes (bytes, bytearray, memoryview), validated first like
    safe_open, as safetensors' load(data). Tensors are copies: they do not keep data alive."""
    fw = _check_framework(framework)
    view = memoryview(data).cast("B")  # held: the exporter cannot resize data meanwhile
    raw, tensors, data_start = _stguard.validate_buffer(view, _limit_spec(limits, profile))
    report = Report._from_raw(raw)
    _raise_unless_passes(report, "STG_E_INVALID", allow_warn, "safetensors bytes")
    out: Dict[str, Any] = {}
    for raw_t in tensors:
        t = _Tensor(raw_t)
        buf = bytearray(view[data_start + t.begin : data_start + t.end])
        out[t.name] = _to_array(buf, t.dtype, t.shape, fw)
    return out
