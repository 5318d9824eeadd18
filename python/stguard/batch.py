"""Scanning a tree on an existing Dask cluster: one task per shard of the tree.

Each task runs the library's own tree scan (stguard.scan_tree) on its shard (shard=(k, n): the
records whose path hashes to k, as `stguard scan --shard K/N`), so the union of the shards is
exactly the records of one scan of the tree; they are merged back into walk order. Workers need
the stguard package importable (the same environment as the client)."""

from __future__ import annotations

import json
import os
from typing import IO, Any, Iterable, List, Optional, Tuple

from ._core import PathLike, scan_tree

_VERDICTS = ("ok", "warn", "invalid", "unsafe", "error")


def _walk_key(path: str) -> Tuple[bytes, ...]:
    """Walk order: folders sorted by name bytes, depth first = component-wise byte order."""
    return tuple(os.fsencode(path).split(b"/"))


def _scan_shard(paths: List[str], k: int, n: int, options: dict):
    tree = scan_tree(paths, shard=(k, n), **options)
    records = [r.to_dict() for r in tree]
    return records, tree.summary


def merge_summaries(summaries: Iterable[dict]) -> dict:
    total: dict = {"records": 0, "verdicts": dict.fromkeys(_VERDICTS, 0), "bytes": 0,
                   "interrupted": False}
    for s in summaries:
        total["records"] += s["records"]
        total["bytes"] += s["bytes"]
        total["interrupted"] = total["interrupted"] or s["interrupted"]
        for v in _VERDICTS:
            total["verdicts"][v] += s["verdicts"][v]
    return total


def scan_on_dask(
    paths: Iterable[PathLike],
    *,
    client: Any = None,
    shards: Optional[int] = None,
    out: Optional[IO[str]] = None,
    **options: Any,
) -> Tuple[List[dict], dict]:
    """Scans paths (files and folders) on a Dask cluster with one dask.bag task per shard.

    client: a distributed.Client (None: dask's current default scheduler). shards: how many
    tasks (default: 2 x the workers the client has, at least 1). options: scan_tree's keyword
    arguments (jobs, include, exclude, profile, limits, policy, digest, ...).
    Returns (records, summary): the CLI's {"type": "file"} records in walk order and the summed
    counts; with out, also writes the records there as JSON Lines, then a summary record with the
    CLI's summary fields for these counts ({"type": "summary", "files", "ok", ..., "bytes",
    "interrupted"})."""
    import dask.bag as db

    paths = [os.fspath(p) for p in paths]
    if shards is None:
        workers = len(client.scheduler_info().get("workers", {})) if client is not None else 1
        shards = max(1, 2 * workers)
    bag = db.from_sequence(range(shards), npartitions=shards).map(
        lambda k: _scan_shard(paths, k, shards, options)
    )
    parts = client.compute(bag).result() if client is not None else bag.compute()
    records = sorted((r for recs, _ in parts for r in recs), key=lambda r: _walk_key(r["path"]))
    summary = merge_summaries(s for _, s in parts)
    if out is not None:
        last = {"type": "summary", "schema": 1, "files": summary["records"],
                **summary["verdicts"], "bytes": summary["bytes"],
                "interrupted": summary["interrupted"]}
        for r in records + [last]:
            out.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    return records, summary
