#!/usr/bin/env python3
"""Baseline for bench_header: Python's json.loads over the same safetensors header bytes.

Usage: json_baseline.py FILE [--min-runs N] [--max-runs N] [--seconds S]

Reads the 8-byte length and the header only (the data section may be a sparse multi-GB hole),
then times json.loads(header_bytes) (bytes in, so UTF-8 decoding is included, as stguard's UTF-8
check is) the same way bench_header times stg_validate_buffer: one warm-up run, then at least
--min-runs timed runs, more until about --seconds were spent; best and median of wall time and
of process CPU time are reported.
Each result is dropped before the next run so only one parsed header is alive at a time.
The garbage collector stays at its defaults, as a user's process would have it.

Memory: `hwm_base_kib` is the peak RSS after the header bytes were read, `hwm_kib` the peak
after all runs (VmHWM from /proc/self/status): run one file per process.

Prints one line of key=value pairs, as bench_header does. python3 stdlib only.
"""

import argparse
import json
import statistics
import struct
import time


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--min-runs", type=int, default=3)
    ap.add_argument("--max-runs", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()

    with open(args.file, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = f.read(header_len)
    if len(header) != header_len:
        raise SystemExit("json_baseline: header truncated")
    hwm_base = status_kib("VmHWM:")

    start = time.perf_counter()
    parsed = json.loads(header)
    warmup = time.perf_counter() - start
    tensors = sum(1 for k in parsed if k != "__metadata__")
    del parsed

    runs = args.min_runs
    if warmup > 0 and warmup * runs < args.seconds:
        runs = min(args.max_runs, max(args.min_runs, int(args.seconds / warmup)))
    times, cpu = [], []
    for _ in range(runs):
        cpu_start = time.process_time()
        start = time.perf_counter()
        parsed = json.loads(header)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
        del parsed
    hwm = status_kib("VmHWM:")

    best, median = min(times), statistics.median(times)
    cpu_best, cpu_median = min(cpu), statistics.median(cpu)
    mb = header_len / 1e6
    print("file=%s header_bytes=%d tensors=%d runs=%d best_s=%.6f median_s=%.6f "
          "best_MBps=%.1f median_MBps=%.1f cpu_best_MBps=%.1f cpu_median_MBps=%.1f "
          "tensors_per_s=%.0f hwm_base_kib=%d hwm_kib=%d"
          % (args.file, header_len, tensors, runs, best, median, mb / best, mb / median,
             mb / cpu_best, mb / cpu_median, tensors / median, hwm_base, hwm))


if __name__ == "__main__":
    main()
