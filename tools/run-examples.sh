#!/usr/bin/env bash
# README command (a): installs the Debian packages the tool needs (tools/setup-debian.sh
# --minimal), builds the release preset (tool, shared and static library: everything
# `cmake --install build/release` installs; no tests) and scans the example models in
# corpus/examples/, printing the files that need a look (verdict not ok) with their findings
# and the counts (pass -v to list every file).
#   tools/run-examples.sh [--no-setup] [stguard scan options...]
# Exit status: 0 when the scan ran (the examples are meant to include invalid and unsafe files,
# so the scan's own status 1 is expected), non-zero when the set-up, the build or the scan failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ "${1:-}" = "--no-setup" ]; then
    shift
else
    bash tools/setup-debian.sh --minimal
fi

echo "== building the release preset (build/release)"
mkdir -p build
# Tests and benchmarks need the full tool set (command (b)); the release build does not.
cmake --preset release -DSTG_BUILD_TESTS=OFF -DSTG_BUILD_BENCH=OFF >build/release.configure.log 2>&1 ||
    { tail -40 build/release.configure.log; exit 1; }
cmake --build --preset release -j2 >build/release.build.log 2>&1 ||
    { tail -40 build/release.build.log; exit 1; }

[ -d corpus/examples ] || { echo "run-examples: corpus/examples/ does not exist yet" >&2; exit 1; }
[ -f corpus/examples/README.md ] && echo "== what the examples are: corpus/examples/README.md"
echo "== build/release/stguard scan corpus/examples $*"
st=0
build/release/stguard scan corpus/examples "$@" || st=$?
case $st in
    0) echo "== exit status 0: every file ok" ;;
    1) echo "== exit status 1: some files are invalid or unsafe (as the examples intend)" ;;
    *) echo "== exit status $st: usage error or a file could not be scanned" >&2; exit "$st" ;;
esac
