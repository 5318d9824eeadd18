#!/usr/bin/env bash
# Memory bound on minimal-entry safetensors headers up to 100 MB, buffer and stream paths
# (bench_memory.c; tests/validator/test_memory_bound.c runs the smaller sizes in ctest). Results:
# docs/performance.md and SECURITY.md. Needs about 2 GB of free memory at 100 MB.
#
# Environment:
#   BUILD_DIR=...   configured build tree (default build/release, configured if missing)
#   SKIP_BUILD=1    use the binary already built in BUILD_DIR
#   SIZES="1 10 100"  header sizes in MB
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$src_dir/build/release}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    if [ ! -f "$build_dir/CMakeCache.txt" ]; then
        cmake -S "$src_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
    fi
    cmake --build "$build_dir" -j2 --target bench_memory >/dev/null
fi
# shellcheck disable=SC2086
exec "$build_dir/bench/bench_memory" ${SIZES:-1 10 100}
