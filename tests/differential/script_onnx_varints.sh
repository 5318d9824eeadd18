#!/bin/bash
# ONNX varints as protobuf reads them (issue 23 item 2): every varint field stguard's ONNX walker
# reads, written with the high bits its declared type drops (int32/enum: above bit 31), in
# non-minimal encodings and with a 10th byte's dropped bits, plus data_location values its closed
# enum does not name; onnx.load (python3-onnx, C++ protobuf) and `stguard inspect` must read the
# same values, and a data_location onnx reads as EXTERNAL with a location outside the folder
# must be onnx_external_path_unsafe to `stguard scan` (tests/differential/onnx_varint_differential.py).
# Seeded: STG_ONNX_SEED to replay, STG_ONNX_MUTANTS for more. Skips (77) without python3-onnx.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "onnx"
seed=${STG_ONNX_SEED:-$((RANDOM % 100000))}
# two CLI runs per mutant: a sanitizer build (each run some 0.1 s slower) takes fewer
san=$(sed -n 's/^STG_SANITIZE:[A-Z]*=//p' "${STG_BINARY_DIR:-/nonexistent}/CMakeCache.txt" 2>/dev/null)
count=${STG_ONNX_MUTANTS:-$([ -n "$san" ] && echo 60 || echo 250)}
"$PY" "$SRC/tests/differential/onnx_varint_differential.py" "$STGUARD_CLI" "$tmp" "$seed" "$count" &&
    echo "PASS (seed $seed)"
