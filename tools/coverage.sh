#!/usr/bin/env bash
# Source coverage of the library (parser/, validator/, loader/) from the unit tests and the corpus
# replay: coverage preset (clang -fprofile-instr-generate -fcoverage-mapping), ctest with
# LLVM_PROFILE_FILE, llvm-profdata merge, llvm-cov report. Prints the per-file table, then the
# total line and branch percentages.
#   tools/coverage.sh [--html DIR]    also writes an HTML report to DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
html=""
[ "${1:-}" = "--html" ] && html=${2:?--html needs a directory}

dir=build/coverage
profiles="$dir/profiles"
tool() { # llvm-profdata / llvm-cov, versioned names when the plain one is missing
    if command -v "$1" >/dev/null 2>&1; then echo "$1"; else echo "$1-14"; fi
}
profdata=$(tool llvm-profdata)
cov=$(tool llvm-cov)

cmake --preset coverage >/dev/null
cmake --build --preset coverage -j2 >"$dir.build.log" 2>&1 || { tail -40 "$dir.build.log"; exit 1; }
rm -rf "$profiles"
mkdir -p "$profiles"
# The coverage test preset sets LLVM_PROFILE_FILE=build/coverage/profiles/%p-%m.profraw.
# A failing test still gives coverage; its status is reported, not fatal.
test_status=0
ctest --preset coverage -j2 >"$dir.ctest.log" 2>&1 || test_status=$?
grep -E 'tests passed|tests failed' "$dir.ctest.log" || true

shopt -s nullglob
raw=("$profiles"/*.profraw)
[ ${#raw[@]} -gt 0 ] || { echo "coverage: no profiles written" >&2; exit 1; }
"$profdata" merge -sparse "${raw[@]}" -o "$dir/merged.profdata"

# Every instrumented executable that ran: unit tests, replay drivers, the CLI.
objects=()
for f in "$dir"/tests/test_* "$dir"/fuzz/replay_* "$dir"/stguard; do
    [ -f "$f" ] && [ -x "$f" ] && objects+=("$f")
done
first=${objects[0]}
args=("$first")
for o in "${objects[@]:1}"; do args+=(-object "$o"); done
sources=("$root/parser" "$root/validator" "$root/loader")

"$cov" report "${args[@]}" -instr-profile="$dir/merged.profdata" "${sources[@]}" | tee "$dir/report.txt"
if [ -n "$html" ]; then
    "$cov" show "${args[@]}" -instr-profile="$dir/merged.profdata" -format=html \
        -output-dir="$html" "${sources[@]}"
    echo "coverage: HTML report in $html/index.html"
fi
# TOTAL row: regions, missed, cover, functions, missed, cover, lines, missed, cover, branches, missed, cover
awk '$1 == "TOTAL" {printf "coverage: lines %s, branches %s, functions %s (parser/ validator/ loader/)\n", $10, $13, $7}' \
    "$dir/report.txt"
[ $test_status -eq 0 ] || echo "coverage: note: some tests failed (see $dir.ctest.log)"
