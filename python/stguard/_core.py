"""Reports, limits, policies, errors and scanning: the Python face of libstguard's scan API."""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import queue
import threading
from typing import Any, Iterable, Mapping, Optional, Tuple, Union

from . import _stguard

StguardError = _stguard.StguardError
FileChangedError = _stguard.FileChangedError

#: The record shape version of the CLI's JSON Lines output (docs/cli.md) that to_dict() follows.
JSON_SCHEMA = 1

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


class _Labelled(enum.IntEnum):
    """An ordered enum whose str() is the CLI's lower-case spelling."""

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str):
        return cls[label.upper()]

    def __str__(self) -> str:
        return self.label


class Verdict(_Labelled):
    """A file's verdict, ordered: a larger value is worse ("ok", "warn", ... as labels)."""

    OK = 0
    WARN = 1
    INVALID = 2
    UNSAFE = 3
    ERROR = 4


class Severity(_Labelled):
    """A finding's severity ("info", "warning", "error", "critical")."""

    INFO = 0
    WARNING = 1
    ERROR = 2
    CRITICAL = 3


def _json_text(s: str) -> str:
    """As the CLI prints strings: every byte that is not UTF-8 becomes U+FFFD (the strings here
    carry such bytes as surrogateescape code points, one per byte)."""
    if not any("\udc80" <= c <= "\udcff" for c in s):
        return s
    return "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in s)


def _raw_hex(s: str) -> str:
    return s.encode("utf-8", "surrogateescape").hex()


def _is_clean(s: str) -> bool:
    return not any("\udc80" <= c <= "\udcff" for c in s)


@dataclasses.dataclass(frozen=True)
class Finding:
    """One finding: a stable code, its severity, where (offset, member) and the context."""

    code: str
    severity: Severity
    offset: Optional[int]
    message: str
    tensor: Optional[str] = None
    module: Optional[str] = None
    name: Optional[str] = None
    member: Optional[str] = None
    member_offset: Optional[int] = None
    limit: Optional[str] = None

    @property
    def global_name(self) -> Optional[str]:
        """"module.name" of the pickle global the finding is about."""
        if self.module is None or self.name is None:
            return None
        return self.module + "." + self.name

    def to_dict(self) -> dict:
        d: dict = {
            "code": self.code,
            "severity": self.severity.label,
            "offset": self.offset,
            "message": self.message,
        }
        if self.tensor is not None:
            d["tensor"] = _json_text(self.tensor)
        if self.module is not None and self.name is not None:
            d["module"] = _json_text(self.module)
            d["name"] = _json_text(self.name)
            d["global"] = _json_text(self.module + "." + self.name)
        if self.member is not None:
            d["member"] = _json_text(self.member)
            if self.member_offset is not None:
                d["member_offset"] = self.member_offset
        if self.limit is not None:
            d["limit"] = self.limit
        return d


@dataclasses.dataclass(frozen=True)
class Global:
    """A global a pickle would import, with its policy class."""

    module: str
    name: str
    offset: int
    member: Optional[str]
    klass: str  # "allowed", "benign", "dangerous", "unknown"

    def to_dict(self) -> dict:
        return {
            "module": _json_text(self.module),
            "name": _json_text(self.name),
            "offset": self.offset,
            "member": None if self.member is None else _json_text(self.member),
            "class": self.klass,
        }


@dataclasses.dataclass(frozen=True)
class Report:
    """The verdict on one file or buffer. Immutable; to_dict()/to_json() give the CLI's JSON
    Lines record."""

    path: Optional[str]
    blob: Optional[str]
    format: str
    size: int
    sha256: Optional[str]
    verdict: Verdict
    findings: Tuple[Finding, ...]
    globals: Tuple[Global, ...]
    findings_truncated: int = 0
    #: for a record of scan_tree: "file", "link" (blob is the target), "stdin" or "not_read"
    kind: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.verdict == Verdict.OK

    def codes(self) -> Tuple[str, ...]:
        return tuple(f.code for f in self.findings)

    def to_dict(self, path: Optional[str] = None) -> dict:
        """The CLI's {"type": "file"} record (docs/cli.md), path overridable like the CLI's
        display path."""
        shown = path if path is not None else (self.path if self.path is not None else "-")
        d: dict = {"type": "file", "schema": JSON_SCHEMA, "path": _json_text(shown)}
        if not _is_clean(shown):
            d["path_hex"] = _raw_hex(shown)
        d["blob"] = None if self.blob is None else _json_text(self.blob)
        if self.blob is not None and not _is_clean(self.blob):
            d["blob_hex"] = _raw_hex(self.blob)
        d.update(
            {
                "format": self.format,
                "size": self.size,
                "sha256": self.sha256,
                "verdict": self.verdict.label,
                "findings": [f.to_dict() for f in self.findings],
                "globals": [g.to_dict() for g in self.globals],
            }
        )
        return d

    def to_json(self, path: Optional[str] = None) -> str:
        return json.dumps(self.to_dict(path), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def _from_raw(cls, raw: tuple, kind: Optional[str] = None) -> "Report":
        path, blob, fmt, size, sha, verdict, findings, globals_, truncated = raw
        return cls(
            kind=kind,
            path=path,
            blob=blob,
            format=fmt,
            size=size,
            sha256=sha,
            verdict=Verdict.from_label(verdict),
            findings=tuple(
                Finding(
                    code=f[0],
                    severity=Severity.from_label(f[1]),
                    offset=f[2],
                    message=f[3],
                    tensor=f[4],
                    module=f[5],
                    name=f[6],
                    member=f[7],
                    member_offset=f[8],
                    limit=f[9],
                )
                for f in findings
            ),
            globals=tuple(Global(*g) for g in globals_),
            findings_truncated=truncated,
        )


class UnsafeFileError(StguardError):
    """The file did not pass the gate; .report says why."""

    def __init__(self, message: str, report: Report):
        super().__init__(message)
        self.report = report
        self.status = "STG_E_INVALID"


class ReadError(StguardError, OSError):
    """The file could not be read (missing, unreadable, not a regular file); .report has the
    io_error finding."""

    def __init__(self, message: str, report: Report):
        StguardError.__init__(self, message)
        self.report = report
        self.status = "STG_E_IO"

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_LIMIT_NAMES = tuple(_stguard.limit_defaults().keys())


@dataclasses.dataclass(frozen=True)
class Limits:
    """Mirror of stg_limits: None keeps the library default (Limits.defaults() shows them). A
    value above a limit's hard ceiling raises ValueError when used, as the CLI's --limit does."""

    max_header_len: Optional[int] = None
    max_tensors: Optional[int] = None
    max_rank: Optional[int] = None
    max_json_depth: Optional[int] = None
    max_name_len: Optional[int] = None
    max_metadata_entries: Optional[int] = None
    max_memory: Optional[int] = None
    max_findings: Optional[int] = None
    max_pickle_stack: Optional[int] = None
    max_pickle_memo: Optional[int] = None
    max_pickle_string: Optional[int] = None
    max_nesting: Optional[int] = None
    max_inflate_bytes: Optional[int] = None
    max_inflate_ratio: Optional[int] = None

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise TypeError(f"{f.name} must be a non-negative int or None")

    @classmethod
    def defaults(cls) -> "Limits":
        return cls(**_stguard.limit_defaults())

    def _spec(self, profile: str) -> dict:
        spec = {
            f.name: str(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None
        }
        spec["profile"] = profile
        return spec


assert set(_LIMIT_NAMES) == {f.name for f in dataclasses.fields(Limits)}, (
    "stguard.Limits is out of step with the C library's stg_limits"
)


def _limit_spec(limits: Optional[Limits], profile: str) -> dict:
    if profile not in ("strict", "compat"):
        raise ValueError("profile must be 'strict' or 'compat'")
    if limits is None:
        limits = Limits()
    if not isinstance(limits, Limits):
        raise TypeError("limits must be a stguard.Limits")
    return limits._spec(profile)


class Policy:
    """Allow/deny lists on top of the built-in ones (docs/policy.md). Built once, immutable, so
    one policy can serve scans on many threads.

    allow: "module:name" strings or (module, name) pairs; the hard-block list (os.system, ...)
           cannot be allowed (ValueError).
    deny:  "module" (the whole module), "module:name", or (module, name) pairs.
    file:  a policy file (path) in the format docs/policy.md gives; text: the same as a string.
    """

    __slots__ = ("_c",)

    def __init__(
        self,
        allow: Iterable[Union[str, Tuple[str, str]]] = (),
        deny: Iterable[Union[str, Tuple[str, Optional[str]]]] = (),
        *,
        file: Optional[PathLike] = None,
        text: Optional[str] = None,
    ):
        c = _stguard.Policy()
        if file is not None:
            with open(file, "rb") as fh:
                c._load(fh.read())
        if text is not None:
            c._load(text.encode("utf-8"))
        for entry in allow:
            if isinstance(entry, str):
                c._allow_spec(entry)
            else:
                module, name = entry
                c._add(0, module, name)
        for entry in deny:
            if isinstance(entry, str):
                module, _, name = entry.partition(":")
                c._add(1, module, name or None)
            else:
                module, name = entry
                c._add(1, module, name)
        object.__setattr__(self, "_c", c)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a stguard.Policy is immutable")

    @staticmethod
    def version() -> str:
        """Version of the built-in lists."""
        return _stguard.versions()[1]


def _policy_c(policy: Optional[Policy]):
    if policy is None:
        return None
    if not isinstance(policy, Policy):
        raise TypeError("policy must be a stguard.Policy")
    return policy._c


def scan(
    path: PathLike,
    *,
    profile: str = "strict",
    limits: Optional[Limits] = None,
    policy: Optional[Policy] = None,
    digest: bool = True,
    expected_sha256: Optional[str] = None,
    root: Optional[PathLike] = None,
) -> Report:
    """Scans one file by content (any format stguard knows). An unreadable file gives a report
    with io_error, not an exception."""
    raw = _stguard.scan_path(
        os.fspath(path),
        _limit_spec(limits, profile),
        _policy_c(policy),
        bool(digest),
        expected_sha256,
        None if root is None else os.fspath(root),
    )
    return Report._from_raw(raw)


def scan_bytes(
    data: Any,
    name: Optional[str] = None,
    *,
    profile: str = "strict",
    limits: Optional[Limits] = None,
    policy: Optional[Policy] = None,
    digest: bool = True,
    expected_sha256: Optional[str] = None,
) -> Report:
    """Scans bytes in memory (bytes, bytearray, memoryview, mmap: read in place, not copied).
    name is a file-name hint, used only as docs/containers.md says."""
    raw = _stguard.scan_buffer(
        data, name, _limit_spec(limits, profile), _policy_c(policy), bool(digest), expected_sha256
    )
    return Report._from_raw(raw)


class TreeScan:
    """The records of scan_tree, as an iterator; .summary has the totals once it is exhausted.

    The scan runs on a background thread (C code, GIL released) and hands records over in walk
    order through a bounded queue; leaving the loop early (break, an exception, close()) cancels
    the scan."""

    _END = object()

    def __init__(self, paths, options):
        self.summary: Optional[dict] = None
        self._queue: "queue.Queue" = queue.Queue(maxsize=256)
        self._stop = threading.Event()
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(paths, options), daemon=True)
        self._thread.start()

    def _on_record(self, raw, kind) -> bool:
        if self._stop.is_set():
            return False
        self._queue.put(Report._from_raw(raw, kind))
        return not self._stop.is_set()

    def _run(self, paths, options) -> None:
        try:
            self.summary = _stguard.scan_tree(paths, *options, self._on_record)
        except BaseException as e:  # handed to the consumer
            self._error = e
        finally:
            self._queue.put(self._END)

    def __iter__(self) -> "TreeScan":
        return self

    def __next__(self) -> Report:
        item = self._queue.get() if self._thread is not None else self._END
        if item is self._END:
            self._finish()
            raise StopIteration
        return item

    def _finish(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def close(self) -> None:
        """Stops the scan (records not yet taken are dropped)."""
        if self._thread is None:
            return
        self._stop.set()
        while self._queue.get() is not self._END:
            pass
        self._thread.join()
        self._thread = None

    def __enter__(self) -> "TreeScan":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def scan_tree(
    paths: Union[PathLike, Iterable[PathLike]],
    *,
    jobs: int = 1,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    follow_links: bool = True,
    hf_cache: bool = True,
    scan_git: bool = False,
    shard: Optional[Tuple[int, int]] = None,
    profile: str = "strict",
    limits: Optional[Limits] = None,
    policy: Optional[Policy] = None,
    digest: bool = True,
) -> TreeScan:
    """Walks and scans paths as `stguard scan PATH...` does (docs/cli.md, "What is scanned"):
    folders recursively in a stable order, links kept inside the root, Hugging Face caches by
    their layout, each distinct file read once on `jobs` threads. Yields one Report per record
    (report.kind says what it is); shard=(k, n) keeps the records of shard k of n, as the CLI's
    --shard K/N (0-based k here)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("scan_tree needs at least one path")
    if not isinstance(jobs, int) or not 1 <= jobs <= 256:
        raise ValueError("jobs must be an int from 1 to 256")
    index, count = (0, 0) if shard is None else shard
    if shard is not None and not (isinstance(index, int) and isinstance(count, int)
                                  and 0 <= index < count):
        raise ValueError("shard must be (k, n) with 0 <= k < n")
    options = (
        list(include),
        list(exclude),
        bool(follow_links),
        bool(hf_cache),
        bool(scan_git),
        jobs,
        index,
        count,
        _limit_spec(limits, profile),
        _policy_c(policy),
        bool(digest),
    )
    return TreeScan(paths, options)


def versions() -> Mapping[str, str]:
    lib, pol = _stguard.versions()
    return {"library": lib, "policy": pol}
