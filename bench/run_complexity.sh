#!/usr/bin/env bash
# Complexity regression suite (not a timed test): bench_complexity times each parser (header,
# pickle memo, pickle globals, zip directory, tar, index) on random, sequential and adversarial
# inputs of 1x, 2x, 4x and 8x a base size and prints one table row per case with its growth
# exponent; the run fails (exit 1) when a row grows faster than MAX_EXPONENT (linear is 1.0,
# n log n over these sizes about 1.1). Results: docs/performance.md.
#
# Environment:
#   BUILD_DIR=...     configured build tree (default build/release, configured if missing)
#   SKIP_BUILD=1      use the binary already built in BUILD_DIR
#   SCALE=S           multiply the base sizes (default 1)
#   MAX_EXPONENT=E    default 1.3
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$src_dir/build/release}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    if [ ! -f "$build_dir/CMakeCache.txt" ]; then
        cmake -S "$src_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
    fi
    cmake --build "$build_dir" -j2 --target bench_complexity >/dev/null
fi
exec "$build_dir/bench/bench_complexity" --scale "${SCALE:-1}" --max-exponent "${MAX_EXPONENT:-1.3}"
