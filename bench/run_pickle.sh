#!/usr/bin/env bash
# Pickle scan benchmark.
#  1. Pure pickle: the data.pkl of a torch.save() of a ~20k-tensor state_dict, scanned in memory
#     by stguard (bench_pickle: stg_scan_buffer without digest) against Python's own pickle
#     tools on the same bytes: `python3 -m pickletools -o /dev/null` (full disassembly, the named
#     baseline) and a bare pickletools.genops loop (opcode decoding only). The Python figures are
#     whole-process wall times; the interpreter's start-up is printed for reference.
#  2. File size against pickle size: `stguard scan --no-digest` on torch zip files that share one
#     pickle (same tensors, same structure) but whose data differs in size (a few MB against
#     BIG_TOTAL bytes of stored zero tensors). If only the pickle is read, both take about the
#     same time. The big file is deleted afterwards unless KEEP_BIG=1.
#
# Environment:
#   SKIP_BUILD=1      with BUILD_DIR: use the binaries already built there
#   BUILD_DIR=...   configured build tree to use instead of the release preset
#   DATA_DIR=...    generated files (default build/bench-data)
#   REPEAT=N        timed runs per measurement (default 5; pickletools -o: min(REPEAT, 3))
#   TENSORS=N       state_dict size (default 20000)
#   BIG_TOTAL=BYTES data in the big zip (default 4 GiB, as 4 tensors); needs twice that free
#   PYTHON=...      Debian's interpreter with python3-torch (default /usr/bin/python3)
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${DATA_DIR:-$src_dir/build/bench-data}
repeat=${REPEAT:-5}
tensors=${TENSORS:-20000}
big_total=${BIG_TOTAL:-$((4 * 1024 * 1024 * 1024))}
python=${PYTHON:-/usr/bin/python3}
timer=("$python" "$src_dir/bench/time_cmd.py")

if [[ -z "${BUILD_DIR:-}" ]]; then
    (cd "$src_dir" && cmake --preset release >/dev/null &&
        cmake --build --preset release -j2 --target bench_pickle stguard_cli >/dev/null)
    build_dir=$src_dir/build/release
elif [[ ${SKIP_BUILD:-0} == 1 ]]; then
    build_dir=$BUILD_DIR
else
    build_dir=$BUILD_DIR
    cmake --build "$build_dir" -j2 --target bench_pickle stguard_cli >/dev/null
fi
bench=$build_dir/bench/bench_pickle
cli=$build_dir/stguard
for exe in "$bench" "$cli"; do
    [[ -x $exe ]] || { echo "run_pickle.sh: $exe not built" >&2; exit 2; }
done
"$python" -c 'import torch' 2>/dev/null || { echo "run_pickle.sh: $python lacks torch" >&2; exit 2; }

mkdir -p "$data_dir"
state=$data_dir/state_${tensors}.pt
pkl=$data_dir/state_${tensors}.pkl
if [[ ! -f $state || ! -f $pkl || $src_dir/bench/gen_pickle.py -nt $state ]]; then
    "$python" "$src_dir/bench/gen_pickle.py" "$state" --tensors "$tensors" --pickle "$pkl" >&2
fi
pkl_bytes=$(stat -c %s "$pkl")

echo "## 1. Pure pickle: data.pkl of torch.save() of $tensors tensors ($pkl_bytes bytes)"
echo
echo "| scanner | runs | best s | median s | best MB/s | median MB/s | peak RSS MiB | result |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
line=$("$bench" "$pkl" --name data.pkl --min-runs "$repeat" 2>/dev/null)
"$python" - "$line" <<'EOF'
import sys
kv = dict(i.split("=", 1) for i in sys.argv[1].split())
print("| stguard (stg_scan_buffer, in memory) | %s | %.3f | %.3f | %s [CPU %s] | %s | %.1f | "
      "%s, %s, %s globals |"
      % (kv["runs"], float(kv["best_s"]), float(kv["median_s"]), kv["best_MBps"],
         kv["cpu_best_MBps"], kv["median_MBps"], int(kv["hwm_kib"]) / 1024, kv["format"],
         kv["verdict"], kv["globals"]))
EOF
table_row() { # label, time_cmd output
    "$python" - "$1" "$2" <<'EOF'
import sys
kv = dict(i.split("=", 1) for i in sys.argv[2].split())
print("| %s | %s | %.3f | %.3f | %s | %s | %.1f | exit %s |"
      % (sys.argv[1], kv["runs"], float(kv["best_s"]), float(kv["median_s"]),
         kv.get("best_MBps", "-"), kv.get("median_MBps", "-"), int(kv["max_rss_kib"]) / 1024,
         kv["exit"]))
EOF
}
table_row "stguard scan --no-digest (CLI, whole .pt file)" \
    "$("${timer[@]}" "$repeat" --bytes "$pkl_bytes" -- "$cli" scan --no-digest --quiet "$state")"
table_row "python3 -m pickletools -o /dev/null" \
    "$("${timer[@]}" $((repeat < 3 ? repeat : 3)) --no-warmup --bytes "$pkl_bytes" -- \
        "$python" -m pickletools -o /dev/null "$pkl")"
table_row "python3 pickletools.genops loop" \
    "$("${timer[@]}" "$repeat" --bytes "$pkl_bytes" -- "$python" -c \
        'import pickletools, sys
for _ in pickletools.genops(open(sys.argv[1], "rb").read()): pass' "$pkl")"
table_row "python3 start-up (import pickletools)" \
    "$("${timer[@]}" "$repeat" -- "$python" -c 'import pickletools')"
echo
echo "(The CLI row divides data.pkl's size by the time to scan the whole .pt archive: process"
echo "start-up, zip parsing of $tensors+ members and sniffing included.)"
echo

echo "## 2. Same pickle, different file sizes: stguard scan --no-digest"
echo
df -h "$data_dir" | sed 's/^/    /'
echo
avail=$(df --output=avail -B1 "$data_dir" | tail -1)
if ((avail < 2 * big_total + (1 << 30))); then
    echo "run_pickle.sh: not enough free space for a $big_total-byte file; skipping part 2" >&2
    exit 0
fi
small=$data_dir/zip_small.pt
big=$data_dir/zip_big.pt
per=$((big_total / 4))
"$python" "$src_dir/bench/gen_pickle.py" "$small" --tensors "$tensors" --big 4 --big-bytes 1048576 \
    --pickle "$data_dir/zip_small.pkl" >/dev/null
"$python" "$src_dir/bench/gen_pickle.py" "$big" --tensors "$tensors" --big 4 --big-bytes "$per" \
    --pickle "$data_dir/zip_big.pkl" >/dev/null
[[ ${KEEP_BIG:-0} == 1 ]] || trap 'rm -f "$big"' EXIT
echo "| file | file size | data.pkl bytes | runs | best s | median s | file MB/s (median) | peak RSS MiB | verdict |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
for f in "$small" "$big"; do
    size=$(stat -c %s "$f")
    psize=$(stat -c %s "${f%.pt}.pkl")
    verdict=$("$cli" scan --no-digest --format json "$f" | "$python" -c \
        'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "file": print(r["verdict"])' || true)
    out=$("${timer[@]}" "$repeat" --bytes "$size" -- "$cli" scan --no-digest --quiet "$f")
    "$python" - "$(basename "$f")" "$size" "$psize" "$verdict" "$out" <<'EOF'
import sys
name, size, psize, verdict, out = sys.argv[1:]
kv = dict(i.split("=", 1) for i in out.split())
print("| %s | %.2f GB | %s | %s | %.3f | %.3f | %.0f | %.1f | %s |"
      % (name, int(size) / 1e9, psize, kv["runs"], float(kv["best_s"]), float(kv["median_s"]),
         float(kv["median_MBps"]), int(kv["max_rss_kib"]) / 1024, verdict))
EOF
done
