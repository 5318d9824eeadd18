#!/usr/bin/env python3
"""Times a command: one warm-up run, then RUNS timed runs; prints best and median wall time, best
and median CPU time of the child (user + system, from wait4's rusage: what other processes on a
shared machine disturb least) and the largest peak RSS of the child, as one line of key=value
pairs.

Usage: time_cmd.py RUNS [--bytes N] [--label L] [--no-warmup] -- COMMAND [ARG...]
  --bytes N   also print MB/s for N bytes (10^6 bytes per MB) from the best and median time
  --no-warmup skip the warm-up run (for slow commands whose inputs are already cached)
The command's stdout and stderr are discarded; its exit status is reported (a scanner's
status 1 for findings is not an error here, but the caller may want to see it).
python3 stdlib only.
"""

import os
import statistics
import subprocess
import sys
import time


def run_once(cmd):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss, proc.returncode, usage.ru_utime + usage.ru_stime


def main():
    argv = sys.argv[1:]
    if "--" not in argv or not argv:
        raise SystemExit(__doc__)
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1:]
    runs = int(opts[0])
    nbytes = 0
    label = os.path.basename(cmd[0])
    warmup = True
    i = 1
    while i < len(opts):
        if opts[i] == "--bytes":
            nbytes = int(opts[i + 1])
            i += 2
        elif opts[i] == "--no-warmup":
            warmup = False
            i += 1
        elif opts[i] == "--label":
            label = opts[i + 1]
            i += 2
        else:
            raise SystemExit("time_cmd.py: unknown option " + opts[i])

    if warmup:
        run_once(cmd)  # page cache, interpreter files
    times, cpus, rss, codes = [], [], 0, set()
    for _ in range(runs):
        elapsed, maxrss, code, cpu = run_once(cmd)
        times.append(elapsed)
        cpus.append(cpu)
        rss = max(rss, maxrss)
        codes.add(code)
    best, median = min(times), statistics.median(times)
    line = "label=%s runs=%d best_s=%.6f median_s=%.6f max_rss_kib=%d exit=%s" % (
        label, runs, best, median, rss, ",".join(str(c) for c in sorted(codes)))
    if nbytes:
        line += " bytes=%d best_MBps=%.1f median_MBps=%.1f" % (
            nbytes, nbytes / 1e6 / best, nbytes / 1e6 / median)
    line += " cpu_best_s=%.6f cpu_median_s=%.6f" % (min(cpus), statistics.median(cpus))
    print(line)


if __name__ == "__main__":
    main()
