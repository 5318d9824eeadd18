#!/bin/bash
# GGUF: stguard's reader against ggml's own (gguf_init_from_file) on tests/fixtures/gen_gguf.py's
# fixtures and seeded mutations of them (tests/differential/gguf_ggml_differential.py): a file stguard
# passes is one ggml reads the same way, and a file ggml reads is GGUF to stguard.
# ggml is not packaged for Debian 12, so this needs GGML_SRC, a ggml source tree
# (github.com/ggml-org/ggml; its ggml-base library is built here with cmake, into
# STG_GGML_BUILD or a temporary folder); without it the script skips (77) and says so.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "json"
if [ -z "${GGML_SRC:-}" ] || [ ! -f "$GGML_SRC/src/gguf.cpp" ]; then
    echo "skip: GGML_SRC (a ggml source tree) is not set: ggml is not installed on this machine"
    exit 77
fi
build=${STG_GGML_BUILD:-$tmp/ggml}
if [ ! -f "$build/src/libggml-base.so" ]; then
    cmake -S "$GGML_SRC" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_CPU=OFF \
        -DGGML_BACKEND_DL=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF >"$tmp/cfg.log" 2>&1 &&
        cmake --build "$build" -j2 --target ggml-base >"$tmp/build.log" 2>&1 ||
        { echo "FAIL: ggml did not build"; tail -20 "$tmp/build.log"; exit 1; }
fi
probe=$tmp/ggml_gguf_probe
cc -O1 -std=c11 -I "$GGML_SRC/include" -o "$probe" "$SRC/tests/loaders/ggml_gguf_probe.c" \
    -L "$build/src" -lggml-base -Wl,-rpath,"$build/src" ||
    { echo "FAIL: the probe did not build"; exit 1; }
# ggml's own writer: models without tensors (its padding after the metadata is not trailing
# data) must pass, and ggml's reader must read them (issue 23 item 5)
writer=$tmp/ggml_gguf_write
cc -O1 -std=c11 -I "$GGML_SRC/include" -o "$writer" "$SRC/tests/loaders/ggml_gguf_write.c" \
    -L "$build/src" -lggml-base -Wl,-rpath,"$build/src" ||
    { echo "FAIL: the writer did not build"; exit 1; }
mkdir -p "$tmp/w"
"$writer" "$tmp/w" || { echo "FAIL: ggml's writer failed"; exit 1; }
for f in "$tmp"/w/*.gguf; do
    for profile in strict compat; do
        v=$("$STGUARD_CLI" scan --format json --no-digest --profile "$profile" "$f" |
            "$PY" -c 'import json,sys
r=[json.loads(x) for x in sys.stdin if x.strip()]
print([x for x in r if x.get("type")=="file"][0]["verdict"])')
        [ "$v" = ok ] || { echo "FAIL: ggml's writer output $(basename "$f") is $v ($profile)"; exit 1; }
    done
    "$probe" "$f" | grep -q '"ok": *true' || { echo "FAIL: ggml does not read $(basename "$f")"; exit 1; }
done
echo "ggml's writer: $(ls "$tmp"/w/*.gguf | wc -l) files without tensors pass in both profiles"
seed=${STG_GGUF_SEED:-$((RANDOM % 100000))}
"$PY" "$SRC/tests/differential/gguf_ggml_differential.py" "$probe" "$STGUARD_CLI" "$SRC/tests/fixtures/gen_gguf.py" \
    "$tmp/d" "$seed" "${STG_GGUF_MUTATIONS:-3000}" && echo "PASS (seed $seed)"
