#!/usr/bin/env bash
# Per-file latency of the Python package beside the CLI, in one run on the same files:
#   stguard.scan(path)          in-process (the extension, GIL released while C runs)
#   subprocess stguard scan     what a Python program did before the package: spawn the CLI
#                               and parse its JSON Lines
#   safetensors-like loading    stguard.safe_open + get_tensor of every tensor
# Usage: bench/run_python.sh [BUILD_DIR]   (default build/release; needs its python/ and CLI)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
[ -x "$build/stguard" ] || { echo "run_python: no CLI in $build (cmake --preset release && cmake --build build/release)" >&2; exit 2; }
[ -d "$build/python/stguard" ] || { echo "run_python: no Python package in $build/python" >&2; exit 2; }
PYTHONPATH="$build/python" STGUARD_CLI="$build/stguard" STG_SOURCE_DIR="$root" \
    /usr/bin/python3 "$root/bench/python_latency.py"
