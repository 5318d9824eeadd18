#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script (docs/fuzzing.md).
# Uses $CC, $CFLAGS and $LIB_FUZZING_ENGINE from the environment and writes to $OUT, per harness:
#   fuzz_<entry>                      the fuzzer (fuzz/fuzz_<entry>.c)
#   fuzz_<entry>.dict                 fuzz/<entry>.dict, when present
#   fuzz_<entry>.options              fuzz/<entry>.options (libFuzzer flags), when present
#   fuzz_<entry>_seed_corpus.zip      corpus/<entry>/, when present
# (OSS-Fuzz finds a dictionary and a seed corpus by the fuzzer's name, hence the fuzz_ prefix.)
# Local check, no Docker needed:
#   CC=clang CFLAGS='-fsanitize=address,fuzzer-no-link' LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
#   SRC=/tmp/x OUT=/tmp/out bash fuzz/oss-fuzz/build.sh

# The checkout: $SRC/stguard inside the OSS-Fuzz image, else the tree this script belongs to.
if [ -f "${SRC:-/nonexistent}/stguard/CMakeLists.txt" ]; then
    src="$SRC/stguard"
else
    src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fi
: "${CC:?}" "${OUT:?}" "${LIB_FUZZING_ENGINE:?}"
CFLAGS=${CFLAGS:-}
work=${WORK:-$(mktemp -d)}
build="$work/stguard-build"
mkdir -p "$OUT"

opts=(-DSTG_OSSFUZZ=ON -DSTG_BUILD_FUZZERS=ON -DSTG_BUILD_TESTS=OFF -DSTG_BUILD_TOOLS=OFF
      -DSTG_BUILD_REPLAY=OFF -DSTG_BUILD_BENCH=OFF -DSTG_WERROR=OFF)
if [ "${SANITIZER:-}" = "memory" ]; then
    # MSan needs every linked library instrumented: only the parser + validator + dispatch core
    # (harnesses marked "Needs: loader" are left out, see fuzz/README.md).
    opts+=(-DSTG_CORE_ONLY=ON)
else
    # The runner image has no libcrypto or libz: link them statically.
    opts+=(-DOPENSSL_USE_STATIC_LIBS=TRUE -DZLIB_USE_STATIC_LIBS=ON)
fi

# No CMAKE_BUILD_TYPE: $CFLAGS alone decide optimisation and instrumentation.
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" \
    -DCMAKE_BUILD_TYPE= "${opts[@]}"
cmake --build "$build" -j"$(nproc)"

zip_dir() { # dir zipfile
    rm -f "$2"
    if command -v zip >/dev/null 2>&1; then
        (cd "$1" && find . -type f -print0 | xargs -0 -r zip -q -j "$2")
    else
        python3 - "$1" "$2" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    for dirpath, _, names in os.walk(sys.argv[1]):
        for n in sorted(names):
            p = os.path.join(dirpath, n)
            z.write(p, os.path.relpath(p, sys.argv[1]).replace(os.sep, "_"))
PY
    fi
}

built=0
for harness in "$src"/fuzz/fuzz_*.c; do
    [ -e "$harness" ] || continue
    name=$(basename "$harness" .c)
    entry=${name#fuzz_}
    if [ ! -x "$build/fuzz/$name" ]; then
        echo "build.sh: $name not built in this configuration (skipped)"
        continue
    fi
    cp "$build/fuzz/$name" "$OUT/$name"
    [ -f "$src/fuzz/$entry.dict" ] && cp "$src/fuzz/$entry.dict" "$OUT/$name.dict"
    # libFuzzer options (max_len, ...): the dictionary goes by the fuzzer's name in $OUT.
    if [ -f "$src/fuzz/$entry.options" ]; then
        sed "s/^\(dict *= *\).*/\1$name.dict/" "$src/fuzz/$entry.options" >"$OUT/$name.options"
    fi
    if [ -d "$src/corpus/$entry" ] && [ -n "$(ls -A "$src/corpus/$entry")" ]; then
        zip_dir "$src/corpus/$entry" "$OUT/${name}_seed_corpus.zip"
    fi
    built=$((built + 1))
done
echo "build.sh: $built fuzzers in $OUT"
[ $built -gt 0 ]
