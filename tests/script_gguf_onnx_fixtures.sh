#!/bin/bash
# The GGUF and ONNX fixtures of test_gguf and test_onnx (tests/data/gguf, tests/data/onnx) are
# exactly what their generators write: tests/gen_gguf.py (the GGUF specification, no library)
# and tests/gen_onnx.py (Debian's python3-onnx, which also checks and reloads every valid model,
# external data included). Skips (77) when Debian's python3 cannot import onnx.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "onnx, numpy"
fail=0
"$PY" "$SRC/tests/gen_gguf.py" "$tmp/gguf" || { echo "FAIL: gen_gguf.py"; exit 1; }
"$PY" "$SRC/tests/gen_onnx.py" "$tmp/onnx" || { echo "FAIL: gen_onnx.py"; exit 1; }
for kind in gguf onnx; do
    if ! diff -r "$SRC/tests/data/$kind" "$tmp/$kind"; then
        echo "FAIL: tests/data/$kind differs from what its generator writes"
        fail=1
    fi
done
n_gguf=$(find "$tmp/gguf" -name '*.gguf' | wc -l)
n_onnx=$(find "$tmp/onnx" -name model.onnx | wc -l)
echo "fixtures: $n_gguf GGUF files, $n_onnx ONNX models"
[ "$n_gguf" -ge 60 ] && [ "$n_onnx" -ge 15 ] || fail=1
exit $fail
