#!/bin/bash
# The TorchScript fixtures of test_containers (tests/data/torchscript) are exactly what
# tests/gen_torchscript.py writes with Debian's python3-torch (torch.jit.save of a scripted
# module, its lite-interpreter save, a torch.save near miss; the generator checks that
# torch.jit.load runs the program), and the CLI reports torchscript_program for the scripted ones
# only. Skips (77) when Debian's python3 cannot import torch.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "torch"
fail=0
"$PY" "$SRC/tests/gen_torchscript.py" "$tmp/ts" || { echo "FAIL: gen_torchscript.py"; exit 1; }
if ! diff -r "$SRC/tests/data/torchscript" "$tmp/ts"; then
    echo "FAIL: tests/data/torchscript differs from what its generator writes"
    fail=1
fi
for f in scripted.pt scripted.ptl plain.pt names.zip; do
    "$STGUARD_CLI" scan --no-digest --format json "$tmp/ts/$f" >"$tmp/out.json"
    n=$(grep -o '"code":"torchscript_program"' "$tmp/out.json" | wc -l)
    case $f in
    scripted.*) want=1 ;;
    *) want=0 ;;
    esac
    if [ "$n" -ne "$want" ]; then
        echo "FAIL: $f: $n torchscript_program findings, want $want"
        fail=1
    fi
done
exit $fail
