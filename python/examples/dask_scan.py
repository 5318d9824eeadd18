"""Scan a model tree on a Dask cluster and write JSON Lines (one record per file, as
`stguard scan --format json`).

    python3 dask_scan.py TREE [--scheduler tcp://host:8786] [--shards N] > out.jsonl

Without --scheduler a LocalCluster with 2 workers is started for the run."""

import argparse
import sys

from distributed import Client, LocalCluster

from stguard.batch import scan_on_dask


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--scheduler")
    ap.add_argument("--shards", type=int)
    args = ap.parse_args()
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None))
    with client:
        _, summary = scan_on_dask(args.paths, client=client, shards=args.shards, out=sys.stdout)
    print(summary, file=sys.stderr)
    bad = summary["verdicts"]["invalid"] + summary["verdicts"]["unsafe"] + summary["verdicts"]["error"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
