#!/bin/bash
# Whole-file scan with SHA-256 (push API over read(), validation + digest) of a generated 4 GiB
# safetensors file, side by side with `openssl dgst -sha256` and `sha256sum` on the same file,
# hot page cache; then the stream's peak RSS when the file arrives through a pipe.
# Usage: bench/sha256.sh BENCH_STREAM_BINARY [MIB] [DIR]   (defaults: 4096, /tmp)
# The generated file is deleted at the end (also on failure).
set -euo pipefail
BIN=${1:?path of the bench_stream binary}
MIB=${2:-4096}
DIR=$(mktemp -d "${3:-/tmp}/stg-bench-sha.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
F=$DIR/model.safetensors
need=$((MIB + 64))
avail=$(df -Pm "$DIR" | awk 'NR==2 {print $4}')
if [ "$avail" -lt $((need * 2)) ]; then
    echo "not enough space in $DIR ($avail MiB free, want $((need * 2)))" >&2
    exit 1
fi
"$BIN" gen "$F" "$MIB" >/dev/null
cat "$F" >/dev/null # warm the page cache
cat "$F" >/dev/null
size=$(stat -c %s "$F")

best() { sort -n | head -1; }
timeit() { # prints seconds of one run of "$@" (output discarded)
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}
runs=${RUNS:-3}
s_stg=$(for i in $(seq "$runs"); do timeit "$BIN" stream "$F"; done | best)
s_ossl=$(for i in $(seq "$runs"); do timeit openssl dgst -sha256 "$F"; done | best)
s_sum=$(for i in $(seq "$runs"); do timeit sha256sum "$F"; done | best)
d_stg=$("$BIN" stream "$F" | sed -n 's/.*sha256=\([0-9a-f]*\).*/\1/p')
d_ossl=$(openssl dgst -sha256 -r "$F" | cut -d' ' -f1)
[ "$d_stg" = "$d_ossl" ] || { echo "digest mismatch: $d_stg vs $d_ossl" >&2; exit 1; }
mibs() { echo "$size / 1048576 / $1" | bc -l | xargs printf '%.0f'; }
echo "file: $size bytes ($MIB MiB), hot page cache, best of $runs"
printf '%-40s %8.3f s %6s MiB/s\n' "stguard stream (validate + SHA-256)" "$s_stg" "$(mibs "$s_stg")"
printf '%-40s %8.3f s %6s MiB/s\n' "openssl dgst -sha256" "$s_ossl" "$(mibs "$s_ossl")"
printf '%-40s %8.3f s %6s MiB/s\n' "sha256sum" "$s_sum" "$(mibs "$s_sum")"
printf 'stguard / openssl throughput: %.2f\n' "$(echo "$s_ossl / $s_stg" | bc -l)"
# peak RSS of the stream fed from a pipe
rss=$( { cat "$F" | /usr/bin/time -v "$BIN" stream - >"$DIR/out"; } 2>&1 | sed -n 's/.*Maximum resident set size (kbytes): //p')
echo "stream from a pipe: peak RSS ${rss} KiB; $(tr ' ' '\n' <"$DIR/out" | grep -E '^(verdict|stream_memory)=' | tr '\n' ' ')"
