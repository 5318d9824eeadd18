#!/usr/bin/env bash
# Runs the native stguard CLI and a cross-built one (the s390x preset: big-endian, under qemu-user)
# over every file of corpus/ and tests/data and requires the same output (docs/fuzzing.md,
# "Big-endian: s390x under qemu"):
#   scan         --format json (strict and compat), text and sarif over both folders at once:
#                verdicts, codes, offsets, messages, digests, SARIF fingerprints; the summary's
#                time ("seconds", "in N s") is the only field left out
#   inspect      --format json --tensor-sha256 of every safetensors, GGUF, ONNX file and index the
#                scan passes (ok or warn): header fields, tensor tables, per-tensor digests
#   convert      --sha256 of every torch, NumPy file the scan passes: exit status, findings on
#                stderr and the output's bytes (the converter writes little-endian on any host)
# Usage: tools/compare-cross.sh [--native DIR] [--cross DIR]   (default build/dev, build/s390x)
# The cross build's CMAKE_CROSSCOMPILING_EMULATOR (its CMakeCache.txt) runs the cross CLI.
# Exit status: 0 all equal, 1 a difference (the first lines of each diff are shown), 2 setup.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
native_dir=build/dev
cross_dir=build/s390x
while [ $# -gt 0 ]; do
    case "$1" in
        --native) native_dir=$2; shift ;;
        --cross) cross_dir=$2; shift ;;
        -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "compare-cross: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
case $native_dir in /*) ;; *) native_dir=$root/$native_dir ;; esac
case $cross_dir in /*) ;; *) cross_dir=$root/$cross_dir ;; esac
for d in "$native_dir" "$cross_dir"; do
    if [ ! -x "$d/stguard" ]; then
        echo "compare-cross: no $d/stguard (build it first)" >&2
        exit 2
    fi
done
emulator=$(sed -n 's/^CMAKE_CROSSCOMPILING_EMULATOR:[A-Z]*=//p' "$cross_dir/CMakeCache.txt" | tr ';' ' ')
if [ -z "$emulator" ]; then
    echo "compare-cross: $cross_dir is not a cross build (no CMAKE_CROSSCOMPILING_EMULATOR)" >&2
    exit 2
fi
native=("$native_dir/stguard")
read -r -a cross <<<"$emulator"
cross+=("$cross_dir/stguard")

work=$(mktemp -d "${TMPDIR:-/tmp}/stguard-cross.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
compared=0

# run NAME CMD...: both CLIs with the same arguments; stdout, stderr and the exit status kept.
run_both() { # name args...
    local name=$1
    shift
    "${native[@]}" "$@" >"$work/$name.native.out" 2>"$work/$name.native.err"
    echo $? >"$work/$name.native.rc"
    "${cross[@]}" "$@" >"$work/$name.cross.out" 2>"$work/$name.cross.err"
    echo $? >"$work/$name.cross.rc"
}
# same NAME [SED]: the two runs agree (after SED, which removes timing, on stdout).
same() { # name [sed expression]
    local name=$1 expr=${2:-}
    local ok=1
    for part in out err rc; do
        local a=$work/$name.native.$part b=$work/$name.cross.$part
        if [ -n "$expr" ] && [ $part = out ]; then
            sed -E -i "$expr" "$a" "$b"
        fi
        if ! cmp -s "$a" "$b"; then
            [ $ok -eq 1 ] && echo "-- DIFFERENT: $name ($part; < native, > cross)"
            diff "$a" "$b" | cut -c1-300 | head -8
            ok=0
        fi
    done
    compared=$((compared + 1))
    [ $ok -eq 1 ] || failed=1
}

inputs=(corpus tests/data)
strip_seconds='s/"seconds":[0-9.eE+-]+/"seconds":0/'
run_both scan-json scan --format json "${inputs[@]}"
same scan-json "$strip_seconds"
run_both scan-compat scan --format json --profile compat "${inputs[@]}"
same scan-compat "$strip_seconds"
run_both scan-text scan --format text "${inputs[@]}"
same scan-text 's/ bytes in [0-9.]+ s$/ bytes in 0 s/'
run_both scan-sarif scan --format sarif "${inputs[@]}"
same scan-sarif

# The files each later step takes, from the native JSON records (path, format, verdict).
python_cmd=python3
command -v "$python_cmd" >/dev/null 2>&1 || python_cmd=/usr/bin/python3
"$python_cmd" - "$work/scan-json.native.out" "$work/inspect.list" "$work/convert.list" <<'EOF'
import json, sys
inspect_formats = {"safetensors", "safetensors-index", "gguf", "onnx"}
convert_formats = {"torch-zip", "torch-legacy", "torch-tar", "numpy", "numpy-zip"}
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as ins, open(sys.argv[3], "w") as conv:
    for line in f:
        r = json.loads(line)
        if r.get("type") != "file" or r["verdict"] not in ("ok", "warn") or r.get("blob"):
            continue
        if r["format"] in inspect_formats:
            ins.write(r["path"] + "\n")
        elif r["format"] in convert_formats:
            conv.write(r["path"] + "\n")
EOF

n=0
while IFS= read -r path; do
    n=$((n + 1))
    run_both "inspect-$n" inspect --format json --tensor-sha256 "$path"
    same "inspect-$n"
done <"$work/inspect.list"
echo "-- inspect: $n files"

n=0
while IFS= read -r path; do
    n=$((n + 1))
    # Same output name for both (stdout names it): each CLI writes into its own folder.
    mkdir -p "$work/native-$n" "$work/cross-$n"
    (cd "$work/native-$n" && "${native[@]}" convert "$root/$path" out.safetensors --sha256 \
        >../"convert-$n.native.out" 2>../"convert-$n.native.err"; echo $? >../"convert-$n.native.rc")
    (cd "$work/cross-$n" && "${cross[@]}" convert "$root/$path" out.safetensors --sha256 \
        >../"convert-$n.cross.out" 2>../"convert-$n.cross.err"; echo $? >../"convert-$n.cross.rc")
    same "convert-$n"
    if [ -f "$work/native-$n/out.safetensors" ] || [ -f "$work/cross-$n/out.safetensors" ]; then
        if ! cmp -s "$work/native-$n/out.safetensors" "$work/cross-$n/out.safetensors"; then
            echo "-- DIFFERENT: convert output of $path"
            failed=1
        fi
    fi
    rm -rf "$work/native-$n" "$work/cross-$n"
done <"$work/convert.list"
echo "-- convert: $n files"

if [ $failed -ne 0 ]; then
    echo "compare-cross: FAILED ($compared comparisons)"
    exit 1
fi
echo "compare-cross: $compared comparisons, native and cross output identical"
