#!/usr/bin/env bash
# Source coverage of the library (parser/, validator/, loader/) from the unit tests and the corpus
# replay: coverage preset (clang -fprofile-instr-generate -fcoverage-mapping), ctest with
# LLVM_PROFILE_FILE, llvm-profdata merge, llvm-cov report. Prints the per-file table, then the
# total line and branch percentages.
#   tools/coverage.sh [--html DIR] [--build-dir DIR] [--harness NAME] [--tests REGEX] [--missed F] [--sources "F..."]
#     --html DIR       also write an HTML report to DIR
#     --build-dir DIR  build there instead of build/coverage (parallel work in one checkout)
#     --harness NAME   only replay_NAME over corpus/NAME/ (what that harness's corpus reaches)
#     --tests REGEX    only the ctest tests matching REGEX
#     --missed FILE    after the report, list FILE's uncovered lines (path under the root)
#     --sources "F..." report only these files (paths under the root) instead of the three folders
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
html=""
dir=build/coverage
harness=""
tests=""
missed=""
only=""
while [ $# -gt 0 ]; do
    case "$1" in
    --html) html=${2:?--html needs a directory}; shift 2 ;;
    --build-dir) dir=${2:?--build-dir needs a directory}; shift 2 ;;
    --harness) harness=${2#fuzz_}; harness=${harness:?--harness needs a name}; shift 2 ;;
    --tests) tests=${2:?--tests needs a regex}; shift 2 ;;
    --missed) missed=${2:?--missed needs a file}; shift 2 ;;
    --sources) only=${2:?--sources needs file names}; shift 2 ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
dir=$(mkdir -p "$dir" && cd "$dir" && pwd)

profiles="$dir/profiles"
tool() { # llvm-profdata / llvm-cov, versioned names when the plain one is missing
    if command -v "$1" >/dev/null 2>&1; then echo "$1"; else echo "$1-14"; fi
}
profdata=$(tool llvm-profdata)
cov=$(tool llvm-cov)

cmake --preset coverage -B "$dir" >/dev/null
cmake --build "$dir" -j2 >"$dir.build.log" 2>&1 || { tail -40 "$dir.build.log"; exit 1; }
rm -rf "$profiles"
mkdir -p "$profiles"
export LLVM_PROFILE_FILE="$profiles/%p-%m.profraw"
# A failing test still gives coverage; its status is reported, not fatal.
test_status=0
if [ -n "$harness" ]; then
    "$dir/fuzz/replay_$harness" "$root/corpus/$harness" >"$dir.ctest.log" 2>&1 || test_status=$?
    echo "replay_$harness over corpus/$harness/: $(find "corpus/$harness" -type f | wc -l) files"
else
    ctest --test-dir "$dir" -j2 ${tests:+-R "$tests"} >"$dir.ctest.log" 2>&1 || test_status=$?
    grep -E 'tests passed|tests failed' "$dir.ctest.log" || true
fi

shopt -s nullglob
raw=("$profiles"/*.profraw)
[ ${#raw[@]} -gt 0 ] || { echo "coverage: no profiles written" >&2; exit 1; }
"$profdata" merge -sparse "${raw[@]}" -o "$dir/merged.profdata"

# Every instrumented executable that ran: unit tests, replay drivers, the CLI, and the shared
# library the CLI links (what the script tests run of the library is counted there).
objects=()
for f in "$dir"/tests/test_* "$dir"/fuzz/replay_* "$dir"/stguard; do
    [ -f "$f" ] && [ -x "$f" ] && objects+=("$f")
done
for f in "$dir"/libstguard.so.*.*.*; do
    [ -f "$f" ] && [ ! -L "$f" ] && objects+=("$f")
done
first=${objects[0]}
args=("$first")
for o in "${objects[@]:1}"; do args+=(-object "$o"); done
sources=("$root/parser" "$root/validator" "$root/loader")
scope="parser/ validator/ loader/"
if [ -n "$only" ]; then
    sources=()
    for f in $only; do sources+=("$root/$f"); done
    scope=$only
fi

"$cov" report "${args[@]}" -instr-profile="$dir/merged.profdata" "${sources[@]}" | tee "$dir/report.txt"
if [ -n "$html" ]; then
    "$cov" show "${args[@]}" -instr-profile="$dir/merged.profdata" -format=html \
        -output-dir="$html" "${sources[@]}"
    echo "coverage: HTML report in $html/index.html"
fi
if [ -n "$missed" ]; then
    # Lines whose execution count is 0: "  NN|      0|source".
    "$cov" show "${args[@]}" -instr-profile="$dir/merged.profdata" -show-branches=count \
        "$root/$missed" | grep -E '^ +[0-9]+\| +0\||Branch \([0-9]+:[0-9]+\): \[True: 0|False: 0\]' || true
fi
# TOTAL row: regions, missed, cover, functions, missed, cover, lines, missed, cover, branches, missed, cover
awk -v scope="$scope" '$1 == "TOTAL" {printf "coverage: lines %s, branches %s, functions %s (%s)\n", $10, $13, $7, scope}' \
    "$dir/report.txt"
[ $test_status -eq 0 ] || echo "coverage: note: some tests failed (see $dir.ctest.log)"
