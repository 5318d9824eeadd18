#!/usr/bin/env bash
# Builds stguard and runs every test stage that CI runs (docs/fuzzing.md):
#   setup        tools/setup-debian.sh (Debian packages; skipped with --no-setup)
#   dev          dev preset (gcc, -Werror) + all tests (ctest --preset dev)
#   asan         asan preset (clang, ASan + UBSan) + all tests, corpus replay included
#   fuzz         fuzz preset + N seconds of libFuzzer per harness, two harnesses at a time
#   s390x        big-endian: the s390x preset (gcc-s390x-linux-gnu, tests under qemu-s390x):
#                unit tests and corpus replay (ctest --preset s390x), then tools/compare-cross.sh
#                (the s390x CLI's output equals the dev build's on corpus/ and tests/data);
#                skipped when the cross toolchain is not installed (tools/setup-debian.sh
#                --cross s390x)
#   conformance  compat conformance check, only when ../shared/conformance exists
#   format       tools/check-format.sh against .clang-format, tools/check-layers.sh (the
#                layering of docs/design.md: no upward include, no include cycle, no function
#                over 150 lines in any C folder, out_of_memory only through stg_report_oom, ...)
#                and tools/check-formats.sh (format knowledge in the format table only)
#
# Usage: tools/run-tests.sh [--quick] [--only STAGES] [--skip STAGES] [--fuzz-seconds N]
#                           [--no-setup] [--build-prefix DIR]
#   --quick            dev stage only (same as --only dev)
#   --only a,b         run only these stages;  --skip a,b  run all but these
#   --fuzz-seconds N   seconds of libFuzzer per harness (default 20: 25 harnesses keep CI under its budget)
#   --build-prefix P   build in P<preset> instead of build/<preset> (e.g. build/h-build-)
# Exit status: 0 when every selected stage passed, 1 otherwise, 2 on usage errors.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

all_stages="dev asan fuzz s390x conformance format"
stages=$all_stages
skip=""
fuzz_seconds=20
do_setup=1
build_prefix=""

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) stages="dev" ;;
        --only) stages=${2//,/ }; shift ;;
        --only=*) stages=${1#--only=}; stages=${stages//,/ } ;;
        --skip) skip=${2//,/ }; shift ;;
        --skip=*) skip=${1#--skip=}; skip=${skip//,/ } ;;
        --fuzz-seconds) fuzz_seconds=$2; shift ;;
        --fuzz-seconds=*) fuzz_seconds=${1#--fuzz-seconds=} ;;
        --no-setup) do_setup=0 ;;
        --build-prefix) build_prefix=$2; shift ;;
        --build-prefix=*) build_prefix=${1#--build-prefix=} ;;
        -h | --help) usage; exit 0 ;;
        *) echo "run-tests: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for s in $stages $skip; do
    case " $all_stages " in
        *" $s "*) ;;
        *) echo "run-tests: unknown stage '$s' (stages: $all_stages)" >&2; exit 2 ;;
    esac
done
case "$fuzz_seconds" in '' | *[!0-9]*) echo "run-tests: --fuzz-seconds needs a number" >&2; exit 2 ;; esac

selected() {
    case " $stages " in *" $1 "*) ;; *) return 1 ;; esac
    case " $skip " in *" $1 "*) return 1 ;; esac
    return 0
}

logdir=$(mktemp -d "${TMPDIR:-/tmp}/stguard-tests.XXXXXX")
trap 'rm -rf "$logdir"' EXIT
results=()
failed=0
t_all=$SECONDS

banner() {
    printf '\n==================================================================\n'
    printf '== %s\n' "$*"
    printf '==================================================================\n'
}
record() { # stage status seconds
    results+=("$(printf '%-12s %-8s %5ss' "$1" "$2" "$3")")
    [ "$2" = "FAIL" ] && failed=1
    return 0
}

builddir() { # preset -> binary dir
    if [ -n "$build_prefix" ]; then
        echo "$build_prefix$1"
    else
        echo "build/$1"
    fi
}

# The pickle tests need a python3 with torch, numpy and joblib (Debian's python3-* packages).
# A python3 earlier on PATH (pyenv, venv) may lack them: then put /usr/bin first.
py_ok() { "$1" -c 'import torch, numpy, joblib' >/dev/null 2>&1; }
if command -v python3 >/dev/null 2>&1 && ! py_ok python3 && [ -x /usr/bin/python3 ] && py_ok /usr/bin/python3; then
    export PATH="/usr/bin:$PATH"
fi

# configure + build + ctest for one preset; the ctest output is kept for the final summary.
build_and_test() { # preset
    local preset=$1 dir
    dir=$(builddir "$preset")
    echo "-- configure ($preset -> $dir)"
    cmake --preset "$preset" -B "$dir" >"$logdir/$preset.configure.log" 2>&1 || {
        cat "$logdir/$preset.configure.log"; return 1; }
    echo "-- build"
    cmake --build "$dir" -j2 >"$logdir/$preset.build.log" 2>&1 || {
        grep -E -B2 -A6 'error|Error' "$logdir/$preset.build.log" | head -150; return 1; }
    echo "-- test"
    if [ -z "$build_prefix" ]; then
        ctest --preset "$preset" 2>&1 | tee "$logdir/$preset.ctest.log"
    else
        # ctest --preset would test the preset's own binaryDir; the same settings, by hand.
        local extra=()
        [ "$preset" = s390x ] && extra=(-E '^script_')
        env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            CK_FORK="$([ "$preset" = asan ] && echo no || echo "${CK_FORK:-}")" \
            CK_TIMEOUT_MULTIPLIER="$([ "$preset" = s390x ] && echo 10 || echo "${CK_TIMEOUT_MULTIPLIER:-1}")" \
            ctest --test-dir "$dir" -j2 --output-on-failure "${extra[@]}" 2>&1 | tee "$logdir/$preset.ctest.log"
    fi
    return "${PIPESTATUS[0]}"
}

# Slowest tests first, so a slow stage says what dominates it.
slowest_tests() { # preset
    [ -f "$logdir/$1.ctest.log" ] || return 0
    grep -E '^ *[0-9]+/[0-9]+ Test +#' "$logdir/$1.ctest.log" |
        sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' | sort -rn | head -5 |
        awk 'BEGIN{print "-- slowest tests:"} {printf "   %8.2f s  %s\n", $1, $2}'
}

# ------------------------------------------------------------------------------------ setup
if [ $do_setup -eq 1 ]; then
    banner "setup: Debian packages"
    t=$SECONDS
    if bash tools/setup-debian.sh; then record setup ok $((SECONDS - t)); else record setup FAIL $((SECONDS - t)); fi
fi

# ------------------------------------------------------------------------------------ dev, asan
for preset in dev asan; do
    selected $preset || continue
    banner "$preset: build + all tests"
    t=$SECONDS
    if build_and_test $preset; then
        record $preset ok $((SECONDS - t))
    else
        record $preset FAIL $((SECONDS - t))
    fi
    slowest_tests $preset
done

# ------------------------------------------------------------------------------------ fuzz
# libFuzzer flags from fuzz/<entry>.options ([libfuzzer] section, "key = value"), dict excepted.
options_flags() { # entry
    [ -f "fuzz/$1.options" ] || return 0
    awk -F' *= *' '/^\[/ {sec = $0; next} sec == "[libfuzzer]" && NF == 2 && $1 != "dict" {print "-" $1 "=" $2}' \
        "fuzz/$1.options"
}
run_harness() { # binary entry log
    local bin=$1 entry=$2 log=$3 work
    work=$(mktemp -d "$logdir/corpus-$entry.XXXXXX")
    # Seeds are copied: libFuzzer writes new inputs into its first corpus dir, never the repo.
    if [ -d "corpus/$entry" ]; then
        find "corpus/$entry" -type f -exec cp -t "$work" {} + 2>/dev/null
    fi
    # A fixed seed (STG_FUZZ_SEED, default 1) makes a CI run repeatable; crash inputs are kept in
    # build/fuzz-artifacts/ (outside the temporary log folder) so they can become regressions.
    mkdir -p "$root/build/fuzz-artifacts"
    local args=(-max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -seed="${STG_FUZZ_SEED:-1}" -artifact_prefix="$root/build/fuzz-artifacts/crash-$entry-")
    [ -f "fuzz/$entry.dict" ] && args+=(-dict="fuzz/$entry.dict")
    mapfile -t -O "${#args[@]}" args < <(options_flags "$entry")
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$bin" "${args[@]}" "$work" >"$log" 2>&1
}

if selected fuzz; then
    banner "fuzz: build + ${fuzz_seconds}s of libFuzzer per harness, two at a time"
    t=$SECONDS
    dir=$(builddir fuzz)
    ok=1
    if ! cmake --preset fuzz -B "$dir" >"$logdir/fuzz.configure.log" 2>&1; then
        cat "$logdir/fuzz.configure.log"; ok=0
    elif ! mapfile -t targets < <(for f in fuzz/fuzz_*.c; do [ -e "$f" ] && basename "$f" .c; done) ||
        [ ${#targets[@]} -eq 0 ]; then
        echo "-- no fuzz/fuzz_*.c harnesses"; ok=0
    elif ! cmake --build "$dir" -j2 --target "${targets[@]}" >"$logdir/fuzz.build.log" 2>&1; then
        # Only the harnesses: the replay drivers, CLI and shared library are tested elsewhere.
        grep -E -B2 -A6 'error|Error' "$logdir/fuzz.build.log" | head -150; ok=0
    else
        harnesses=()
        for target in "${targets[@]}"; do harnesses+=("$dir/fuzz/$target"); done
        declare -A pids=()
        finish_one() { # pid
            local p=$1 e=${pids[$1]} st
            wait "$p" 2>/dev/null
            st=$(cat "$logdir/fuzz-$e.rc" 2>/dev/null || echo 1)
            local stats
            stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added):' \
                "$logdir/fuzz-$e.log" | sed 's/^stat:://' | tr '\n' ' ')
            if [ $st -eq 0 ]; then
                echo "   fuzz_$e: ok ($stats)"
            else
                echo "   fuzz_$e: FAILED (exit $st); last lines of its log:"
                tail -40 "$logdir/fuzz-$e.log" | sed 's/^/      /'
                ls "$root"/build/fuzz-artifacts/crash-"$e"-* 2>/dev/null | sed 's/^/      artifact: /'
                ok=0
            fi
            unset "pids[$p]"
        }
        for bin in "${harnesses[@]}"; do
            entry=$(basename "$bin"); entry=${entry#fuzz_}
            while [ ${#pids[@]} -ge 2 ]; do
                # Two run at once: poll for whichever ends first (each leaves its .rc file).
                sleep 1
                for p in "${!pids[@]}"; do
                    [ -f "$logdir/fuzz-${pids[$p]}.rc" ] && finish_one "$p"
                done
            done
            echo "-- fuzz_$entry: ${fuzz_seconds}s"
            { st=0; run_harness "$bin" "$entry" "$logdir/fuzz-$entry.log" || st=$?
              echo $st >"$logdir/fuzz-$entry.rc"; } &
            pids[$!]=$entry
        done
        for p in "${!pids[@]}"; do finish_one "$p"; done
    fi
    if [ $ok -eq 1 ]; then record fuzz ok $((SECONDS - t)); else record fuzz FAIL $((SECONDS - t)); fi
fi

# ------------------------------------------------------------------------------------ s390x
# Big-endian proof (docs/fuzzing.md, "Big-endian: s390x under qemu"). The unit tests and the
# replay run under qemu through CMAKE_CROSSCOMPILING_EMULATOR; the comparison needs the dev
# stage's CLI (built here when that stage did not run).
if selected s390x; then
    banner "s390x: cross build, unit tests + corpus replay under qemu, output comparison"
    t=$SECONDS
    sysroot=${STG_S390X_SYSROOT:-/opt/stguard/s390x-sysroot}
    if ! command -v s390x-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-s390x >/dev/null 2>&1 ||
        [ ! -d "$sysroot/usr/include" ]; then
        echo "-- SKIPPED: no cross toolchain, qemu-s390x or $sysroot (tools/setup-debian.sh --cross s390x)"
        record s390x skipped $((SECONDS - t))
    else
        ok=1
        native=$(builddir dev)
        build_and_test s390x || ok=0
        slowest_tests s390x
        # The comparison runs even when a unit test failed: its diffs say more.
        if [ ! -x "$(builddir s390x)/stguard" ]; then
            ok=0
        elif [ ! -x "$native/stguard" ] && ! { cmake --preset dev -B "$native" >"$logdir/s390x-dev.log" 2>&1 &&
            cmake --build "$native" -j2 --target stguard_cli >>"$logdir/s390x-dev.log" 2>&1; }; then
            tail -40 "$logdir/s390x-dev.log"; ok=0
        else
            echo "-- compare: the s390x CLI against $native/stguard"
            bash tools/compare-cross.sh --native "$native" --cross "$(builddir s390x)" || ok=0
        fi
        if [ $ok -eq 1 ]; then record s390x ok $((SECONDS - t)); else record s390x FAIL $((SECONDS - t)); fi
    fi
fi

# ------------------------------------------------------------------------------------ conformance
if selected conformance; then
    banner "conformance: compat profile against the reference's verdicts"
    t=$SECONDS
    conf_dir="$root/../shared/conformance"
    if [ ! -d "$conf_dir" ]; then
        echo "-- SKIPPED: $conf_dir does not exist (the check needs the shared probe set)"
        record conformance skipped $((SECONDS - t))
    else
        # Whichever script the tree has; it gets the build of the dev stage (else the asan one).
        script=""
        [ -f tests/validator/script_conformance.sh ] && script=tests/validator/script_conformance.sh
        [ -f tools/conformance.sh ] && script=tools/conformance.sh
        bdir=$(builddir dev)
        [ -x "$bdir/stguard" ] || bdir=$(builddir asan)
    fi
    if [ -d "$conf_dir" ] && [ -n "$script" ]; then
        st=0
        case $bdir in /*) ;; *) bdir=$root/$bdir ;; esac
        STG_SOURCE_DIR=$root STG_BINARY_DIR=$bdir STGUARD_CLI=$bdir/stguard \
            bash "$script" || st=$?
        case $st in
            0) record conformance ok $((SECONDS - t)) ;;
            77) echo "-- SKIPPED by $script (see its message above)"
                record conformance skipped $((SECONDS - t)) ;;
            *) record conformance FAIL $((SECONDS - t)) ;;
        esac
    elif [ -d "$conf_dir" ]; then
        echo "-- SKIPPED: neither tools/conformance.sh nor tests/validator/script_conformance.sh exists yet"
        record conformance skipped $((SECONDS - t))
    fi
fi

# ------------------------------------------------------------------------------------ format
if selected format; then
    banner "format: clang-format check, layer check"
    t=$SECONDS
    if [ ! -f .clang-format ]; then
        echo "-- SKIPPED: no .clang-format"; record format skipped $((SECONDS - t))
    elif bash tools/check-format.sh && bash tools/check-layers.sh && bash tools/check-formats.sh; then
        record format ok $((SECONDS - t))
    else
        record format FAIL $((SECONDS - t))
    fi
fi

# ------------------------------------------------------------------------------------ summary
banner "summary ($((SECONDS - t_all))s in all)"
for r in "${results[@]}"; do echo "   $r"; done
if [ $failed -ne 0 ]; then
    echo "run-tests: FAILED"
else
    echo "run-tests: all selected stages passed"
fi
# Last, ctest's own summary lines of each test stage.
for preset in dev asan s390x; do
    if [ -f "$logdir/$preset.ctest.log" ]; then
        echo "-- ctest ($preset):"
        grep -E 'tests passed|tests failed|Total Test time' "$logdir/$preset.ctest.log"
    fi
done
exit $failed
