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

# One run of "$@" (output discarded): prints "wall cpu" in seconds (cpu = user + system, which
# moves little when other processes compete for the cores).
timeit() {
    /usr/bin/time -f '%e %U %S' -o "$DIR/t" "$@" >/dev/null
    awk '{printf "%s %.2f\n", $1, $2 + $3}' "$DIR/t"
}
runs=${RUNS:-3}
series() { for _ in $(seq "$runs"); do timeit "$@"; done; }
best_wall() { sort -n -k1,1 | head -1 | cut -d' ' -f1; }
best_cpu() { sort -n -k2,2 | head -1 | cut -d' ' -f2; }
series "$BIN" stream "$F" >"$DIR/stg"
series openssl dgst -sha256 "$F" >"$DIR/ossl"
series sha256sum "$F" >"$DIR/sum"
d_stg=$("$BIN" stream "$F" | sed -n 's/.*sha256=\([0-9a-f]*\).*/\1/p')
d_ossl=$(openssl dgst -sha256 -r "$F" | cut -d' ' -f1)
[ "$d_stg" = "$d_ossl" ] || { echo "digest mismatch: $d_stg vs $d_ossl" >&2; exit 1; }
mibs() { echo "$size / 1048576 / $1" | bc -l | xargs printf '%.0f'; }
echo "file: $size bytes ($MIB MiB), hot page cache, best of $runs (wall and cpu = user + sys)"
printf '%-38s %8s %8s %10s %10s\n' "" "wall s" "cpu s" "MiB/s wall" "MiB/s cpu"
for k in stg ossl sum; do
    case $k in
    stg) label="stguard stream (validate + SHA-256)" ;;
    ossl) label="openssl dgst -sha256" ;;
    sum) label="sha256sum" ;;
    esac
    w=$(best_wall <"$DIR/$k")
    c=$(best_cpu <"$DIR/$k")
    printf '%-38s %8.2f %8.2f %10s %10s\n' "$label" "$w" "$c" "$(mibs "$w")" "$(mibs "$c")"
done
printf 'stguard / openssl throughput: wall %.2f, cpu %.2f\n' \
    "$(echo "$(best_wall <"$DIR/ossl") / $(best_wall <"$DIR/stg")" | bc -l)" \
    "$(echo "$(best_cpu <"$DIR/ossl") / $(best_cpu <"$DIR/stg")" | bc -l)"
# peak RSS of the stream fed from a pipe
rss=$( { cat "$F" | /usr/bin/time -v "$BIN" stream - >"$DIR/out"; } 2>&1 | sed -n 's/.*Maximum resident set size (kbytes): //p')
echo "stream from a pipe: peak RSS ${rss} KiB; $(tr ' ' '\n' <"$DIR/out" | grep -E '^(verdict|stream_memory)=' | tr '\n' ' ')"
