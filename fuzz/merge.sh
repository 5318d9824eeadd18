#!/usr/bin/env bash
# Minimises a campaign's corpus back into corpus/<entry>/ with libFuzzer's -set_cover_merge=1
# -use_counters=0: the smallest set found that reaches the same edges (hit counts are ignored, so
# the replayed corpus stays small enough for CI).
#
#   fuzz/merge.sh HARNESS [--replace]
#
# Inputs come from build/campaigns/libfuzzer/<entry>/corpus and, when present, the AFL++ queue
# build/campaigns/afl/<entry>/out/default/queue (both written by fuzz/run.sh).
# Default: additive; only inputs that reach coverage corpus/<entry>/ lacks are copied in (named
# by their SHA-1), and the existing seeds stay as they are.
# --replace: minimise seeds and campaign together into a fresh set that replaces corpus/<entry>/
# (hand-named seeds may be renamed or dropped: review `git status` before committing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

[ $# -ge 1 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
entry=${1#fuzz_}
replace=0
[ "${2:-}" = "--replace" ] && replace=1
[ -f "fuzz/fuzz_$entry.c" ] || { echo "merge.sh: no harness fuzz/fuzz_$entry.c" >&2; exit 2; }

sources=()
for d in "build/campaigns/libfuzzer/$entry/corpus" "build/campaigns/afl/$entry/out/default/queue"; do
    [ -d "$d" ] && sources+=("$d")
done
[ ${#sources[@]} -gt 0 ] || { echo "merge.sh: no campaign for $entry yet (fuzz/run.sh $entry SECONDS)" >&2; exit 1; }

if [ ! -f build/fuzz/CMakeCache.txt ]; then
    cmake --preset fuzz >/dev/null
fi
cmake --build build/fuzz -j2 --target "fuzz_$entry" >/dev/null
bin="build/fuzz/fuzz/fuzz_$entry"
seeds="corpus/$entry"
mkdir -p "$seeds"
count() { find "$1" -maxdepth 1 -type f | wc -l; }
before=$(count "$seeds")

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
merge_flags=(-set_cover_merge=1 -use_counters=0)
if [ $replace -eq 1 ]; then
    fresh=$(mktemp -d "build/campaigns/merge-$entry.XXXXXX")
    "$bin" "${merge_flags[@]}" "$fresh" "$seeds" "${sources[@]}" >"$fresh.log" 2>&1 ||
        { tail -30 "$fresh.log"; exit 1; }
    find "$seeds" -maxdepth 1 -type f -delete
    find "$fresh" -maxdepth 1 -type f -exec mv -t "$seeds" {} +
    rm -rf "$fresh"
else
    log=$(mktemp)
    "$bin" "${merge_flags[@]}" "$seeds" "${sources[@]}" >"$log" 2>&1 || { tail -30 "$log"; rm -f "$log"; exit 1; }
    rm -f "$log"
fi
echo "merge.sh: corpus/$entry: $before -> $(count "$seeds") files"
