#!/bin/bash
# The libtorch fixtures of test_torchscript against their writers and the real loader:
# - tests/data/torchscript/libtorch is exactly what gen_libtorch.cpp writes with Debian's
#   libtorch-dev (tch-rs's save, C++ torch::save, Module::save, torch::pickle_save), when the
#   headers are installed (tools/setup-debian.sh installs them; without them this part says so
#   and the rest still runs);
# - tests/data/torchscript/variants is exactly what gen_variants.py writes from rust_model.ot;
# - the oracle (tests/loaders/reach.py, torch.load under a refusing audit hook): torch.load
#   hands every archive with constants.pkl to torch.jit.load, whose C++ unpickler never calls
#   Python's find_class (no global recorded), loads the real ones and refuses the undefined class
#   and os.system ("Unknown type name"); without constants.pkl, torch.load unpickles data.pkl in
#   Python (find_class called);
# - the CLI's verdicts: the real archives warn, every variant is unsafe.
# Skips (77) when Debian's python3 cannot import torch (the oracle).
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "torch"
fail=0
data="$SRC/tests/data/torchscript"
if [ -f /usr/include/torch/script.h ] && command -v g++ >/dev/null; then
    # libtorch's headers take about a minute to compile: the binary is kept in the build tree
    # while the generator is unchanged
    bin="${STG_BINARY_DIR:-$tmp}/gen_libtorch"
    if [ ! -x "$bin" ] || [ "$SRC/tests/torchscript/gen_libtorch.cpp" -nt "$bin" ]; then
        g++ -std=c++17 -O0 -o "$bin" "$SRC/tests/torchscript/gen_libtorch.cpp" \
            -I/usr/include/torch/csrc/api/include -ltorch -ltorch_cpu -lc10 ||
            { echo "FAIL: gen_libtorch.cpp does not build"; exit 1; }
    fi
    mkdir -p "$tmp/libtorch"
    "$bin" "$tmp/libtorch" || { echo "FAIL: gen_libtorch"; exit 1; }
    if ! diff -r "$data/libtorch" "$tmp/libtorch"; then
        echo "FAIL: tests/data/torchscript/libtorch differs from what gen_libtorch.cpp writes"
        fail=1
    fi
else
    echo "note: libtorch-dev not installed: tests/data/torchscript/libtorch not regenerated"
fi
"$PY" "$SRC/tests/torchscript/gen_variants.py" "$data/libtorch/rust_model.ot" "$tmp/variants" ||
    { echo "FAIL: gen_variants.py"; exit 1; }
if ! diff -r "$data/variants" "$tmp/variants"; then
    echo "FAIL: tests/data/torchscript/variants differs from what gen_variants.py writes"
    fail=1
fi

# the oracle: one JSON line per file
files=("$data"/libtorch/*.ot "$data"/libtorch/*.pt "$data"/variants/*.ot)
"$PY" "$SRC/tests/loaders/reach.py" torch "${files[@]}" >"$tmp/reach.jsonl" 2>/dev/null ||
    { echo "FAIL: reach.py"; exit 1; }
"$PY" - "$tmp/reach.jsonl" <<'PYEOF' || fail=1
import json, os, sys
want = {  # file: (Python's find_class called, load error)
    "rust_model.ot": (False, False), "tensor.pt": (False, False), "module.pt": (False, False),
    "pickle_save.pt": (True, False), "undefined-class.ot": (False, True),
    "payload-global.ot": (False, True), "jit-other.ot": (False, False),
    "extra-pickle.ot": (False, False), "no-constants.ot": (True, True),
}
bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    name = os.path.basename(r["file"])
    got = (bool(r["globals"]), r["error"] is not None)
    if r["reached"] or got != want.pop(name):
        print("FAIL: torch.load of %s: %s" % (name, line.strip()))
        bad = 1
if want:
    print("FAIL: no oracle result for %s" % sorted(want))
    bad = 1
sys.exit(bad)
PYEOF

for f in "${files[@]}"; do
    "$STGUARD_CLI" scan --no-digest --format json "$f" >"$tmp/out.json"
    case $(basename "$f") in
    rust_model.ot | tensor.pt | module.pt) want=warn ;;
    *) want=unsafe ;;
    esac
    if ! grep -q "\"verdict\":\"$want\"" "$tmp/out.json"; then
        echo "FAIL: $f: want verdict $want: $(head -c 600 "$tmp/out.json")"
        fail=1
    fi
done
exit $fail
