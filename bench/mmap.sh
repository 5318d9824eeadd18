#!/bin/bash
# stg_file_open (validate) + stg_file_read_tensor of the first tensor (a fixed 8 KiB one), for a
# 1 GiB and a 16 GiB sparse safetensors file with the same header layout: the time should not
# depend on the file size.
# Each size is measured twice: with the header as generated, and padded so that the first byte
# of the length field is 'P' (0x50). That byte is what a pickle reader takes for an opcode: 'P'
# (PERSID) and the other text opcodes ('S', 'I', 'F', 'L', 'V', 'c', 'g', 'p', 'i', ...) read to
# the next newline, so the polyglot pickle check (dispatch/polyglot.c, run by stg_validate_buffer
# and therefore by stg_file_open) reads on through a data section without one, and open becomes
# proportional to the file size.
# Usage: bench/mmap.sh BENCH_STREAM_BINARY [DIR]   (default /tmp). Files are deleted at the end.
set -euo pipefail
BIN=${1:?path of the bench_stream binary}
DIR=$(mktemp -d "${2:-/tmp}/stg-bench-mmap.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
for mib in 1024 16384; do
    f=$DIR/m$mib.safetensors
    "$BIN" gen "$f" "$mib" sparse 0 >/dev/null
    b0=$((16#$(xxd -p -l 1 "$f")))
    for pad in 0 $(((0x50 - b0 + 256) % 256)); do
        "$BIN" gen "$f" "$mib" sparse "$pad" >/dev/null
        printf '%6d MiB sparse, length byte 0 = 0x%s: ' "$mib" "$(xxd -p -l 1 "$f")"
        "$BIN" mmap "$f" "${REPEAT:-31}" | sed 's/path=[^ ]* //'
    done
    rm -f "$f"
done
