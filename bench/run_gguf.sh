#!/usr/bin/env bash
# GGUF header validation benchmark (stg_gguf_check) on a Llama-3-70B-like header (723 tensors,
# a 128,256-token vocabulary and 280,147 merges: 8.2 MB) and a synthetic 100,000-tensor one,
# both sparse files from bench/gen_gguf_header.py; prints one key=value line per file.
#
#   bench/run_gguf.sh        build bench_gguf with the release preset, then measure
#
# Environment: BUILD_DIR (an already configured tree), DATA_DIR (default build/bench-data),
# PROFILE=strict|compat, SECONDS_PER=S (default 2).
set -euo pipefail
src_dir=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${DATA_DIR:-$src_dir/build/bench-data}
if [[ -z "${BUILD_DIR:-}" ]]; then
    (cd "$src_dir" && cmake --preset release >/dev/null &&
        cmake --build --preset release -j2 --target bench_gguf >/dev/null)
    build_dir=$src_dir/build/release
else
    build_dir=$BUILD_DIR
    cmake --build "$build_dir" -j2 --target bench_gguf >/dev/null
fi
mkdir -p "$data_dir"
[[ -f $data_dir/llama70b.gguf ]] || python3 "$src_dir/bench/gen_gguf_header.py" llama70b "$data_dir/llama70b.gguf"
[[ -f $data_dir/synth100k.gguf ]] ||
    python3 "$src_dir/bench/gen_gguf_header.py" synthetic 100000 "$data_dir/synth100k.gguf"
for f in llama70b synth100k; do
    "$build_dir/bench/bench_gguf" "$data_dir/$f.gguf" "${SECONDS_PER:-2}" "${PROFILE:-strict}"
done
