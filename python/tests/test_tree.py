"""stguard.scan_tree (the library's tree scan) and the Dask helper, against the CLI."""

import json
import os
import pathlib
import subprocess

import pytest

import stguard

SOURCE = pathlib.Path(os.environ.get("STG_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
EXAMPLES = SOURCE / "corpus" / "examples"
CLI = os.environ.get("STGUARD_CLI")
needs_cli = pytest.mark.skipif(CLI is None, reason="STGUARD_CLI not set (ctest sets it)")


def cli_records(*args):
    out = subprocess.run([CLI, "scan", "--format", "json", *map(str, args)],
                         capture_output=True, text=True)
    records = [json.loads(line) for line in out.stdout.splitlines()]
    return [r for r in records if r["type"] == "file"], records[-1]


@needs_cli
def test_scan_tree_equals_the_cli():
    files, summary = cli_records(EXAMPLES)
    for jobs in (1, 2, 4):
        tree = stguard.scan_tree(EXAMPLES, jobs=jobs)
        mine = [r.to_dict() for r in tree]
        assert mine == files  # same records, same order
        assert tree.summary["records"] == summary["files"]
        for v in ("ok", "warn", "invalid", "unsafe", "error"):
            assert tree.summary["verdicts"][v] == summary[v]
        assert all(r.kind == "file" for r in stguard.scan_tree(EXAMPLES))


def test_scan_tree_options(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "m.safetensors").write_bytes((EXAMPLES / "model.safetensors").read_bytes())
    (tmp_path / "a" / "x.pkl").write_bytes((EXAMPLES / "unsafe" / "os_system.pkl").read_bytes())
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    os.symlink("a/m.safetensors", tmp_path / "link.safetensors")
    os.symlink("/etc/passwd", tmp_path / "out")
    recs = {pathlib.Path(r.path).name: r for r in stguard.scan_tree(tmp_path)}
    assert recs["link.safetensors"].kind == "link" and recs["link.safetensors"].ok
    assert recs["out"].kind == "not_read" and "symlink_skipped" in recs["out"].codes()
    assert recs["x.pkl"].verdict == stguard.Verdict.UNSAFE
    assert "config" not in recs
    tree = stguard.scan_tree(tmp_path, scan_git=True)
    assert "config" in {pathlib.Path(r.path).name for r in tree}
    tree = stguard.scan_tree(tmp_path)
    list(tree)
    assert tree.summary["skipped_git"] == 1
    only = [pathlib.Path(r.path).name for r in stguard.scan_tree(tmp_path, include=["*.pkl"])]
    assert only == ["x.pkl"]
    skipped = [pathlib.Path(r.path).name for r in stguard.scan_tree(tmp_path, exclude=["a"])]
    assert "x.pkl" not in skipped and "m.safetensors" not in skipped
    nolinks = {pathlib.Path(r.path).name: r for r in stguard.scan_tree(tmp_path, follow_links=False)}
    assert nolinks["link.safetensors"].kind == "not_read"
    # shards partition the records
    everything = sorted(r.path for r in stguard.scan_tree(tmp_path))
    parts = [sorted(r.path for r in stguard.scan_tree(tmp_path, shard=(k, 3))) for k in range(3)]
    assert sorted(p for part in parts for p in part) == everything
    assert sum(1 for part in parts if part) >= 1


def test_scan_tree_errors_and_early_exit():
    with pytest.raises(ValueError):
        stguard.scan_tree([])
    with pytest.raises(ValueError):
        stguard.scan_tree(EXAMPLES, jobs=0)
    with pytest.raises(ValueError):
        stguard.scan_tree(EXAMPLES, shard=(3, 3))
    with pytest.raises(ValueError):  # "-" twice: the library refuses, raised to the consumer
        list(stguard.scan_tree(["-", "-"]))
    # leaving the loop early cancels the scan; the summary says interrupted
    tree = stguard.scan_tree(SOURCE / "corpus", jobs=2)
    for i, _ in enumerate(tree):
        if i == 2:
            break
    tree.close()
    assert tree.summary["interrupted"] and tree.summary["records"] < tree.summary["records_total"]
    with stguard.scan_tree(EXAMPLES) as t:
        first = next(t)
    assert first.path.endswith("README.md")


def test_scan_tree_callback_exception_propagates(monkeypatch):
    def boom(raw, kind=None):
        raise RuntimeError("consumer failed")

    with monkeypatch.context() as m:
        m.setattr(stguard.Report, "_from_raw", staticmethod(boom))
        tree = stguard.scan_tree(EXAMPLES)
        with pytest.raises(RuntimeError):
            list(tree)
        assert tree.summary is None  # the scan stopped at the first record
    assert len(list(stguard.scan_tree(EXAMPLES))) > 0


distributed = pytest.importorskip("distributed")


@needs_cli
def test_dask_local_cluster_same_records_as_one_scan(tmp_path):
    from stguard.batch import scan_on_dask

    files, summary = cli_records(EXAMPLES)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        out = tmp_path / "out.jsonl"
        with open(out, "w") as fh:
            records, total = scan_on_dask([EXAMPLES], client=client, shards=4, out=fh)
    assert records == files
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[:-1] == files
    assert lines[-1]["type"] == "summary" and lines[-1]["files"] == summary["files"], lines[-1]
    assert {k: lines[-1][k] for k in ("ok", "warn", "invalid", "unsafe", "error", "bytes")} == \
        {k: summary[k] for k in ("ok", "warn", "invalid", "unsafe", "error", "bytes")}
    assert total["records"] == summary["files"]
    assert total["verdicts"]["unsafe"] == summary["unsafe"]
