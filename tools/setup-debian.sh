#!/usr/bin/env bash
# Installs what stguard needs on Debian 12. Two sets:
#   tools/setup-debian.sh --minimal   build and run the tool and library (cmake, a compiler, the
#                                     libraries): what README command (a) needs
#   tools/setup-debian.sh             everything: the minimal set plus clang, Check, the fuzzers,
#                                     the formatter and the real loaders the tests compare with
# Idempotent: when every package is already installed it only asks dpkg and returns.
# Works as root, or as a user with sudo. Quiet unless something fails.
set -euo pipefail

minimal=(
    # build and run: the tool, the shared and static library, install; liblzma and libbz2 open
    # xz/lzma/bz2-compressed pickles (without them those fail closed as format_unscannable)
    cmake make gcc pkg-config libssl-dev zlib1g-dev liblzma-dev libbz2-dev
)
full=(
    "${minimal[@]}" git
    # sanitizer and fuzzing toolchain
    clang libclang-rt-14-dev llvm afl++
    # unit tests, formatting and the ABI/install checks (nm, readelf)
    check clang-format-14 binutils
    # test fixtures are generated with, and checked against, the real loaders
    python3 python3-torch python3-numpy python3-joblib
    # ONNX fixtures (tests/gen_onnx.py: onnx.save_model, external data)
    python3-onnx
    # the SARIF and JSON Lines schema tests; the README workflow test (tests/script_workflow.sh)
    python3-jsonschema python3-yaml
    # the Python package (python/): headers, build, the venv install route (docs/python.md),
    # its tests, the Dask helper
    python3-dev python3-setuptools python3-pip python3-venv python3-pytest python3-distributed
    # bench/run_speed.sh: simdjson's On-Demand walk as a baseline (C++, built by the script only)
    g++ libsimdjson-dev
    # bench/reference/build.sh (REF_SRC): the reference's crate dependencies, built offline by cargo
    librust-serde-dev librust-serde-derive-dev librust-serde-json-dev librust-hashbrown-dev
)
case "${1:-}" in
    --minimal) packages=("${minimal[@]}") ;;
    "") packages=("${full[@]}") ;;
    *) echo "usage: tools/setup-debian.sh [--minimal]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup-debian: all ${#packages[@]} packages already installed"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "setup-debian: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi

echo "setup-debian: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${sudo[@]}" apt-get update -qq &&
       "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
           --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup-debian: apt-get failed" >&2
    exit 1
fi
echo "setup-debian: done"
