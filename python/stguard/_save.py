"""Writing safetensors: save(tensors, metadata) -> bytes and save_file(tensors, path, metadata).

The layout is the reference writer's (huggingface/safetensors, safetensors/src/tensor.rs,
`prepare` and `Metadata`'s serialisation): tensors sorted by dtype in the format's dtype order,
largest first (so every tensor starts aligned to its element), then by name (bytewise UTF-8);
data contiguous from offset 0; compact JSON with `__metadata__` first, then the tensors in data
order, each as {"dtype", "shape", "data_offsets"}; the header padded with spaces to a multiple of
8. Every output is read back by the library's strict validator before it is handed over;
save_file writes a temporary file in the target folder and renames it into place only then."""

from __future__ import annotations

import json
import os
import struct
import sys
import tempfile
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from . import _stguard
from ._core import Limits, PathLike, Report, UnsafeFileError, Verdict, _limit_spec

# The format's dtype order (the reference's `Dtype` enum, stguard's stg_dtype numbering): the
# writer sorts by it, descending.
_DTYPE_ORDER = (
    "BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
    "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64",
    "F64", "I64", "U64",
)  # fmt: skip
_RANK = {name: i for i, name in enumerate(_DTYPE_ORDER)}

# numpy (kind, itemsize) -> safetensors dtype
_FROM_NUMPY = {
    ("b", 1): "BOOL", ("u", 1): "U8", ("i", 1): "I8", ("i", 2): "I16", ("u", 2): "U16",
    ("f", 2): "F16", ("i", 4): "I32", ("u", 4): "U32", ("f", 4): "F32", ("c", 8): "C64",
    ("f", 8): "F64", ("i", 8): "I64", ("u", 8): "U64",
}  # fmt: skip

# torch dtype name -> safetensors dtype (names a given torch lacks are simply never met)
_FROM_TORCH = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16",
    "float16": "F16", "bfloat16": "BF16", "int32": "I32", "uint32": "U32", "float32": "F32",
    "complex64": "C64", "float64": "F64", "int64": "I64", "uint64": "U64",
    "float8_e5m2": "F8_E5M2", "float8_e4m3fn": "F8_E4M3", "float8_e8m0fnu": "F8_E8M0",
    "float8_e4m3fnuz": "F8_E4M3FNUZ", "float8_e5m2fnuz": "F8_E5M2FNUZ",
}  # fmt: skip


class _Entry:
    __slots__ = ("name", "key", "dtype", "shape", "raw")

    def __init__(self, name: str, key: bytes, dtype: str, shape: Tuple[int, ...], raw: Any):
        self.name, self.key, self.dtype, self.shape, self.raw = name, key, dtype, shape, raw


def _is_torch(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _numpy_entry(name: str, key: bytes, arr: Any) -> _Entry:
    import numpy

    arr = numpy.asarray(arr)
    dtype = _FROM_NUMPY.get((arr.dtype.kind, arr.dtype.itemsize))  # structured: kind "V"
    if dtype is None:
        raise TypeError(f"tensor {name!r}: numpy dtype {arr.dtype} has no safetensors dtype")
    # little-endian always (a '>f4' array is byte-swapped), row-major always
    little = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    return _Entry(name, key, dtype, tuple(int(d) for d in arr.shape), little)


def _torch_entry(name: str, key: bytes, t: Any) -> _Entry:
    import torch

    if t.layout != torch.strided:
        raise ValueError(f"tensor {name!r} is {t.layout}: make it dense (.to_dense()) first")
    if t.device.type == "meta":
        raise ValueError(f"tensor {name!r} is on the meta device: it has no data to write")
    dtype = _FROM_TORCH.get(str(t.dtype).rsplit(".", 1)[-1])
    if dtype is None:
        raise TypeError(f"tensor {name!r}: torch dtype {t.dtype} has no safetensors dtype")
    flat = t.detach().cpu().contiguous().reshape(-1)
    width = flat.element_size()
    signed = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[width]
    # the same bytes as numpy integers of the element's width: converted to little-endian below
    arr = flat.view(signed).numpy()
    little = arr.astype(f"<{arr.dtype.kind}{width}", copy=False)
    return _Entry(name, key, dtype, tuple(int(d) for d in t.shape), little)


def _storage_key(t: Any) -> Tuple[Any, int, int]:
    get = getattr(t, "untyped_storage", None) or t.storage
    s = get()
    return (t.device, s.data_ptr(), s.nbytes())


def _end_ptr(t: Any) -> int:
    """One past the last byte t reads (its last element: strides are never negative)."""
    if t.numel() == 0:
        return t.data_ptr()
    last = sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    return t.data_ptr() + (last + 1) * t.element_size()


def _refuse_shared(tensors: Mapping[str, Any]) -> None:
    """Tensors whose bytes overlap in one storage (tied weights, views of one buffer) are
    refused as the reference's save_file refuses them (safetensors/torch.py,
    _find_shared_tensors and _filter_shared_not_shared): grouped by storage, then by
    overlapping [data_ptr, end) ranges. Views of one storage that do not overlap are fine."""
    groups: Dict[Tuple[Any, int, int], List[str]] = {}
    for name, t in tensors.items():
        if not _is_torch(t) or t.device.type == "meta":
            continue
        key = _storage_key(t)
        if key[1] != 0 and key[2] != 0:
            groups.setdefault(key, []).append(name)
    failing = []
    for names in groups.values():
        if len(names) < 2:
            continue
        areas = sorted((tensors[n].data_ptr(), _end_ptr(tensors[n]), n) for n in names)
        current, last_stop = [areas[0][2]], areas[0][1]
        for start, stop, n in areas[1:]:
            if start >= last_stop:
                if len(current) > 1:
                    failing.append(sorted(current))
                current = [n]
            else:
                current.append(n)
            last_stop = stop
        if len(current) > 1:
            failing.append(sorted(current))
    if failing:
        raise RuntimeError(
            f"these tensors share memory: {sorted(failing)}. safetensors stores each name's "
            "bytes once and cannot say that two names are one tensor, so the reference writer "
            "refuses them; save one name of each group (and tie them again after loading) or "
            "pass copies (.clone())"
        )


def _entries(tensors: Mapping[str, Any]) -> List[_Entry]:
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must be a dict of name -> tensor, not {type(tensors).__name__}")
    _refuse_shared(tensors)
    out = []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, not {type(name).__name__}")
        if name == "__metadata__":
            raise ValueError("'__metadata__' is the header's metadata key, not a tensor name")
        try:
            key = name.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"tensor name {name!r} is not valid UTF-8 text") from None
        if _is_torch(value):
            out.append(_torch_entry(name, key, value))
        elif type(value).__module__ == "numpy" or hasattr(value, "__array_interface__"):
            out.append(_numpy_entry(name, key, value))
        else:
            raise TypeError(
                f"tensor {name!r} is a {type(value).__name__}: save takes numpy arrays and "
                "torch tensors"
            )
    out.sort(key=lambda e: (-_RANK[e.dtype], e.key))
    return out


def _header(entries: List[_Entry], metadata: Optional[Mapping[str, str]]) -> bytes:
    head: Dict[str, Any] = {}
    if metadata is not None:
        if not isinstance(metadata, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            raise TypeError("metadata must be a dict of str -> str")
        head["__metadata__"] = dict(metadata)
    pos = 0
    for e in entries:
        n = e.raw.nbytes
        head[e.name] = {"dtype": e.dtype, "shape": list(e.shape), "data_offsets": [pos, pos + n]}
        pos += n
    try:
        text = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("metadata holds text that is not valid UTF-8") from None
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def _chunks(entries: List[_Entry], metadata: Optional[Mapping[str, str]]) -> Iterator[bytes]:
    yield _header(entries, metadata)
    for e in entries:
        yield e.raw.tobytes(order="C")


def _refuse_unless_strict_ok(raw: tuple, what: str) -> None:
    report = Report._from_raw(raw)
    if report.verdict != Verdict.OK:
        codes = ", ".join(report.codes())
        raise UnsafeFileError(
            f"{what}: the written file is not strictly valid safetensors ({report.verdict.label}: "
            f"{codes}); nothing was saved", report
        )


def _strict() -> dict:
    return _limit_spec(Limits(), "strict")


def save(tensors: Mapping[str, Any], metadata: Optional[Mapping[str, str]] = None) -> bytes:
    """The safetensors bytes of tensors (numpy arrays or torch tensors), as the reference's
    save(tensors, metadata) writes them, checked by the strict validator."""
    data = b"".join(_chunks(_entries(tensors), metadata))
    raw, _tensors, _start = _stguard.validate_buffer(data, _strict())
    _refuse_unless_strict_ok(raw, "save")
    return data


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def save_file(
    tensors: Mapping[str, Any], path: PathLike, metadata: Optional[Mapping[str, str]] = None
) -> None:
    """Writes tensors to path as save() lays them out: into a temporary file in path's folder,
    flushed and read back by the strict validator, then renamed over path. On any error or
    interrupt the temporary file is removed and path is left as it was."""
    entries = _entries(tensors)
    target = os.fspath(path)
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    folder, base = os.path.split(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".stguard-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in _chunks(entries, metadata):
                fh.write(chunk)
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            os.fsync(fh.fileno())
        handle, raw, status = _stguard.open_file(tmp, _strict())
        if handle is not None:
            handle.close()
        if raw is None:
            raise _stguard.StguardError(f"{target}: checking the written file failed: {status}")
        _refuse_unless_strict_ok(raw, target)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
