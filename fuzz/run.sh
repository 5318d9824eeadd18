#!/usr/bin/env bash
# Runs a fuzzing campaign on one harness (docs/fuzzing.md).
#
#   fuzz/run.sh HARNESS SECONDS [--engine libfuzzer|afl] [-- ENGINE_ARGS...]
#
# HARNESS is the entry name (json, validate, ...) or fuzz_<entry>. The right preset is built if
# needed (fuzz for libFuzzer; afl plus a CMPLOG build for AFL++). Seeds come from corpus/<entry>/
# and the dictionary from fuzz/<entry>.dict when present. The working corpus lives under
# build/campaigns/<engine>/<entry>/ and grows across runs; the repository is never written
# (fuzz/merge.sh minimises a campaign back into corpus/<entry>/).
# At the end it prints execs/s and the corpus size; crashes are listed with their paths.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 2 ] || usage
entry=${1#fuzz_}
seconds=$2
shift 2
engine=libfuzzer
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --engine) engine=$2; shift ;;
        --engine=*) engine=${1#--engine=} ;;
        --) shift; extra=("$@"); break ;;
        *) usage ;;
    esac
    shift
done
case "$seconds" in '' | *[!0-9]*) echo "run.sh: SECONDS must be a number" >&2; exit 2 ;; esac
[ -f "fuzz/fuzz_$entry.c" ] || { echo "run.sh: no harness fuzz/fuzz_$entry.c" >&2; exit 2; }

seeds="corpus/$entry"
dict="fuzz/$entry.dict"
camp="build/campaigns/$engine/$entry"
mkdir -p "$camp"

build_preset() { # preset dir target [env...]
    local preset=$1 dir=$2 target=$3
    shift 3
    if [ ! -f "$dir/CMakeCache.txt" ]; then
        env "$@" cmake --preset "$preset" -B "$dir" >"$camp/configure.log" 2>&1 ||
            { cat "$camp/configure.log"; exit 1; }
    fi
    env "$@" cmake --build "$dir" -j2 --target "$target" >"$camp/build.log" 2>&1 ||
        { tail -50 "$camp/build.log"; exit 1; }
}

# libFuzzer flags from fuzz/<entry>.options ([libfuzzer] section, "key = value"), dict excepted.
options_flags() { # entry
    [ -f "fuzz/$1.options" ] || return 0
    awk -F' *= *' '/^\[/ {sec = $0; next} sec == "[libfuzzer]" && NF == 2 && $1 != "dict" {print "-" $1 "=" $2}' \
        "fuzz/$1.options"
}

corpus_size() { # dir
    local n bytes
    n=$(find "$1" -maxdepth 1 -type f | wc -l)
    bytes=$(find "$1" -maxdepth 1 -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    echo "$n files, $bytes bytes"
}

case "$engine" in
libfuzzer)
    build_preset fuzz build/fuzz "fuzz_$entry"
    bin="build/fuzz/fuzz/fuzz_$entry"
    mkdir -p "$camp/corpus" "$camp/artifacts"
    args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$camp/artifacts/")
    [ -f "$dict" ] && args+=(-dict="$dict")
    mapfile -t -O "${#args[@]}" args < <(options_flags "$entry")
    dirs=("$camp/corpus")
    # Second corpus dir: read for seeds, never written (libFuzzer writes to the first only).
    [ -d "$seeds" ] && dirs+=("$seeds")
    echo "run.sh: libFuzzer on fuzz_$entry for ${seconds}s (corpus $camp/corpus$([ -f "$dict" ] && echo ", dict $dict"))"
    set +e
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
        "$bin" "${args[@]}" "${extra[@]}" "${dirs[@]}" 2>&1 | tee "$camp/last.log" |
        grep --line-buffered -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|==[0-9]+==ERROR|SUMMARY|stat::|Test unit written)'
    st=${PIPESTATUS[0]}
    set -e
    execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$camp/last.log")
    echo "run.sh: fuzz_$entry: ${execs:-?} execs/s; corpus $(corpus_size "$camp/corpus")"
    ;;
afl)
    command -v afl-fuzz >/dev/null || { echo "run.sh: afl-fuzz not found (tools/setup-debian.sh)" >&2; exit 1; }
    build_preset afl build/afl "fuzz_$entry"
    # CMPLOG: the same harness built again with comparison logging, for afl-fuzz -c.
    build_preset afl build/afl-cmplog "fuzz_$entry" AFL_LLVM_CMPLOG=1
    bin="build/afl/fuzz/fuzz_$entry"
    cmplog="build/afl-cmplog/fuzz/fuzz_$entry"
    in="$camp/seeds"
    rm -rf "$in"
    mkdir -p "$in"
    # Seeds under 1 MiB; counted in bytes: find rounds -size -1M up to whole MiB (empty files only).
    [ -d "$seeds" ] && find "$seeds" -type f -size -1048576c -exec cp -t "$in" {} +
    # afl-fuzz needs at least one seed.
    [ -n "$(ls -A "$in")" ] || printf '{}' >"$in/empty"
    args=(-i "$in" -o "$camp/out" -V "$seconds" -c "$cmplog" -m none -t 5000)
    [ -f "$dict" ] && args+=(-x "$dict")
    echo "run.sh: AFL++ on fuzz_$entry for ${seconds}s (out $camp/out$([ -f "$dict" ] && echo ", dict $dict"))"
    st=0
    AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_AUTORESUME=1 \
        ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:symbolize=0} \
        afl-fuzz "${args[@]}" "${extra[@]}" -- "$bin" >"$camp/last.log" 2>&1 || st=$?
    stats="$camp/out/default/fuzzer_stats"
    if [ -f "$stats" ]; then
        execs=$(sed -n 's/^execs_per_sec *: *//p' "$stats")
        count=$(sed -n 's/^corpus_count *: *//p' "$stats")
        crashes=$(sed -n 's/^saved_crashes *: *//p' "$stats")
        echo "run.sh: fuzz_$entry: ${execs:-?} execs/s; corpus ${count:-?} entries ($(corpus_size "$camp/out/default/queue")); crashes ${crashes:-0}"
        if [ "${crashes:-0}" != "0" ]; then
            ls "$camp/out/default/crashes"/id* | sed 's/^/   crash: /'
            st=1
        fi
    else
        tail -30 "$camp/last.log"
        st=1
    fi
    ;;
*) usage ;;
esac

if [ -d "$camp/artifacts" ] && [ -n "$(ls -A "$camp/artifacts" 2>/dev/null)" ]; then
    ls "$camp/artifacts" | sed "s|^|   artifact: $camp/artifacts/|"
fi
exit "$st"
