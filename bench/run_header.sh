#!/usr/bin/env bash
# Header validation benchmark: stguard (stg_validate_buffer) against Python's json.loads on the
# same header bytes, for every size in one run, printed as a Markdown table.
#
#   bench/run_header.sh                 build with the release preset, then measure
#
# Environment:
#   SIZES="1000 10000 100000 900000"  tensor counts
#   SKIP_BUILD=1      with BUILD_DIR: use the binaries already built there
#   BUILD_DIR=...     an already configured build tree to use instead of the release preset
#                     (e.g. build/h-bench configured with -DCMAKE_BUILD_TYPE=Release)
#   DATA_DIR=...      where generated files live (default build/bench-data; kept between runs)
#   REPEAT=N          processes per measurement (default 3): best = best of all, median = median
#                     of the per-process medians, RSS = largest peak
#   PROFILE=strict|compat   stguard profile (default strict)
#   PYTHON=...        interpreter for the baseline (default /usr/bin/python3)
#   SECONDS_PER=S     time budget per process (default 2; at least 5 stguard / 3 json runs)
#   WARM=1            diagnostic: stguard only, with glibc told never to give freed memory back
#                     (GLIBC_TUNABLES below), so timed runs reuse pages the warm-up faulted in;
#                     separates first-touch page-fault cost from parsing cost
# Files: sparse safetensors files from bench/gen_header.py (their data sections are holes).
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
sizes=${SIZES:-"1000 10000 100000 900000"}
data_dir=${DATA_DIR:-$src_dir/build/bench-data}
repeat=${REPEAT:-3}
profile=${PROFILE:-strict}
python=${PYTHON:-/usr/bin/python3}
seconds=${SECONDS_PER:-2}

if [[ -z "${BUILD_DIR:-}" ]]; then
    (cd "$src_dir" && cmake --preset release >/dev/null &&
        cmake --build --preset release -j2 --target bench_header >/dev/null)
    build_dir=$src_dir/build/release
elif [[ ${SKIP_BUILD:-0} == 1 ]]; then
    build_dir=$BUILD_DIR
else
    build_dir=$BUILD_DIR
    cmake --build "$build_dir" -j2 --target bench_header >/dev/null
fi
bench=$build_dir/bench/bench_header
[[ -x $bench ]] || { echo "run_header.sh: $bench not built" >&2; exit 2; }

mkdir -p "$data_dir"
results=$(mktemp)
trap 'rm -f "$results"' EXIT

for n in $sizes; do
    file=$data_dir/header_$n.safetensors
    if [[ ! -f $file || $src_dir/bench/gen_header.py -nt $file ]]; then
        "$python" "$src_dir/bench/gen_header.py" "$n" "$file" >&2
    fi
    for ((r = 0; r < repeat; r++)); do
        if [[ ${WARM:-0} == 1 ]]; then
            echo "tool=stguard n=$n $(GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776 \
                "$bench" "$file" --profile "$profile" --seconds "$seconds")" >>"$results"
            continue
        fi
        echo "tool=stguard n=$n $("$bench" "$file" --profile "$profile" --seconds "$seconds")" >>"$results"
        echo "tool=json n=$n $("$python" "$src_dir/bench/json_baseline.py" "$file" --seconds "$seconds")" >>"$results"
    done
done

"$python" - "$results" "$profile" <<'EOF'
import statistics
import sys

rows = {}
for line in open(sys.argv[1]):
    kv = dict(item.split("=", 1) for item in line.split())
    rows.setdefault(int(kv["n"]), {}).setdefault(kv["tool"], []).append(kv)

def summary(runs):
    best = max(float(r["best_MBps"]) for r in runs)
    median = statistics.median(float(r["median_MBps"]) for r in runs)
    cpu = max(float(r["cpu_best_MBps"]) for r in runs)
    hwm = max(int(r["hwm_kib"]) for r in runs) / 1024
    base = max(int(r["hwm_base_kib"]) for r in runs) / 1024
    tps = statistics.median(float(r["tensors_per_s"]) for r in runs)
    return best, median, cpu, hwm, base, tps

print("profile: %s; MB = 10^6 bytes of header; MB/s = wall-clock best / median [best by "
      "process CPU time]; peak RSS = VmHWM of a fresh process (in brackets: the part added by "
      "parsing, over the process with the header loaded); ratio = stguard / json.loads, "
      "medians" % sys.argv[2])
print()
print("| tensors | header MB | stguard MB/s | stguard tensors/s | stguard peak RSS MiB | "
      "arena peak MiB (budget) | json.loads MB/s | json.loads peak RSS MiB | speed ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in sorted(rows):
    st = rows[n]["stguard"]
    sb, sm, sc, sh, sbase, stps = summary(st)
    arena = max(int(r["arena_peak"]) for r in st) / 2**20
    budget = int(st[0]["budget"]) / 2**20
    header_mb = int(st[0]["header_bytes"]) / 1e6
    if "json" in rows[n]:
        jb, jm, jc, jh, jbase, _ = summary(rows[n]["json"])
        baseline = "%.1f / %.1f [%.1f] | %.1f (+%.1f) | %.1fx" % (jb, jm, jc, jh, jh - jbase,
                                                                  sm / jm)
    else:
        baseline = "- | - | -"
    print("| %d | %.2f | %.0f / %.0f [%.0f] | %.2fM | %.1f (+%.1f) | %.1f (%.1f) | %s |"
          % (n, header_mb, sb, sm, sc, stps / 1e6, sh, sh - sbase, arena, budget, baseline))
EOF
