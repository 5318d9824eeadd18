"""stguard: decide whether a model file is safe to load, before anything loads it.

    import stguard
    report = stguard.scan("pytorch_model.bin")       # any format: a Report, never an exception
    if report.verdict >= stguard.Verdict.INVALID: ...
    with stguard.safe_open("model.safetensors") as f:  # validated first, then like safetensors
        w = f.get_tensor("lm_head.weight")

docs/python.md has the whole API."""

from ._core import (
    JSON_SCHEMA,
    FileChangedError,
    Finding,
    Global,
    Limits,
    Policy,
    ReadError,
    Report,
    Severity,
    StguardError,
    TreeScan,
    UnsafeFileError,
    Verdict,
    scan,
    scan_bytes,
    scan_tree,
    versions,
)
from ._open import (
    RAW_VIEW_DTYPES,
    Model,
    SafeOpen,
    TensorSlice,
    load,
    load_file,
    open_model,
    safe_open,
)
from ._pickle import TorchLoadGuard, guard_torch_load, load_pickle
from ._save import save, save_file

__version__ = versions()["library"]

__all__ = [
    "JSON_SCHEMA",
    "FileChangedError",
    "Finding",
    "Global",
    "Limits",
    "Model",
    "Policy",
    "RAW_VIEW_DTYPES",
    "ReadError",
    "Report",
    "SafeOpen",
    "Severity",
    "StguardError",
    "TensorSlice",
    "TreeScan",
    "UnsafeFileError",
    "Verdict",
    "TorchLoadGuard",
    "guard_torch_load",
    "load",
    "load_file",
    "load_pickle",
    "open_model",
    "safe_open",
    "save",
    "save_file",
    "scan",
    "scan_bytes",
    "scan_tree",
    "versions",
]
