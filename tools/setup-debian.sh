#!/usr/bin/env bash
# Installs what stguard needs on Debian 12. Two sets:
#   tools/setup-debian.sh --minimal   build and run the tool and library (cmake, a compiler, the
#                                     libraries): what README command (a) needs
#   tools/setup-debian.sh             everything: the minimal set plus clang, Check, the fuzzers,
#                                     the formatter and the real loaders the tests compare with
#   tools/setup-debian.sh --cross s390x
#                                     everything, plus the big-endian cross build (the s390x
#                                     preset): gcc-s390x-linux-gnu, the s390x C library, qemu-user,
#                                     and Debian's s390x Check, zlib, liblzma, libbz2 and OpenSSL
#                                     unpacked into a sysroot (see cross_s390x below)
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
    # libtorch's C++ writers (tests/torchscript/gen_libtorch.cpp: what tch-rs's save and C++
    # torch::save write; about 2 MB over the libtorch1.13 that python3-torch brings)
    libtorch-dev
    # ONNX fixtures (tests/fixtures/gen_onnx.py: onnx.save_model, external data)
    python3-onnx
    # Flax checkpoints (tests/flax: msgpack as flax.serialization packs it) and SentencePiece
    # models (tests/flax/gen_tokenizers.py: sentencepiece's trainer writes tokenizer.model)
    python3-msgpack python3-sentencepiece
    # signed-model fixtures (tests/signing/gen_signing.py: EC keys, a CA, ECDSA signatures)
    python3-cryptography
    # Keras-shaped HDF5 fixtures and the HDF5 reader's differential (tests/keras/gen_hdf5.py)
    python3-h5py
    # SavedModel fixtures written in TensorFlow's schema (tests/keras/gen_savedmodel.py)
    python3-protobuf
    # TFLite and ExecuTorch fixtures (tests/flatbuf/gen_flatbuf.py: the FlatBuffers Builder;
    # tests/repos/gen_repos.py's TFLite files)
    python3-flatbuffers
    # a TensorFlow variables.index written by LevelDB itself (tests/flatbuf/gen_data.py,
    # also in tests/repos)
    python3-plyvel
    # the SARIF and JSON Lines schema tests; the README workflow test (tests/cli/script_workflow.sh);
    # python3-yaml is also the reference reader of the YAML differential
    # (tests/remotecode/script_yaml_differential.sh)
    python3-jsonschema python3-yaml
    # the chat-template oracle (tests/templates/script_templates_oracle.sh): jinja2's sandbox
    # and plain environments render the templates stguard judges
    python3-jinja2
    # the Python package (python/): headers, build, the venv install route (docs/python.md),
    # its tests, the Dask helper
    python3-dev python3-setuptools python3-pip python3-venv python3-pytest python3-distributed
    # bench/run_speed.sh: simdjson's On-Demand walk as a baseline (C++, built by the script only)
    g++ libsimdjson-dev
    # bench/reference/build.sh (REF_SRC): the reference's crate dependencies, built offline by cargo
    librust-serde-dev librust-serde-derive-dev librust-serde-json-dev librust-hashbrown-dev
)
# The s390x cross build: compiler, C library (/usr/s390x-linux-gnu) and the emulator.
cross_s390x_host=(gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user)
# Its libraries, as s390x packages: unpacked (dpkg-deb -x) into $STG_S390X_SYSROOT, not installed.
# Installing them as multiarch :s390x packages fails on Debian 12 today: Multi-Arch: same packages
# must have the same version in every architecture, and bookworm-security no longer builds s390x,
# so the amd64 libssl3, liblzma5 and linux-libc-dev (and zlib1g's update) are newer than any
# s390x build.
cross_s390x_libs=(zlib1g zlib1g-dev liblzma5 liblzma-dev libbz2-1.0 libbz2-dev libssl3 libssl-dev
    check libsubunit0 libsubunit-dev)
cross=""
case "${1:-}" in
    --minimal) packages=("${minimal[@]}") ;;
    "") packages=("${full[@]}") ;;
    --cross)
        [ "${2:-}" = s390x ] || { echo "usage: tools/setup-debian.sh --cross s390x" >&2; exit 2; }
        cross=s390x
        packages=("${full[@]}" "${cross_s390x_host[@]}") ;;
    *) echo "usage: tools/setup-debian.sh [--minimal | --cross s390x]" >&2; exit 2 ;;
esac
sysroot=${STG_S390X_SYSROOT:-/opt/stguard/s390x-sysroot}

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$p")
done

# Whether the sysroot holds exactly the s390x packages and versions Debian offers now.
sysroot_current() {
    [ -f "$sysroot/.stguard-packages" ] || return 1
    local want
    want=$(apt-cache policy "${cross_s390x_libs[@]/%/:s390x}" 2>/dev/null |
        awk '/^[^ ]/ {p = $1} /Candidate:/ {print p, $2}')
    [ -n "$want" ] && [ "$want" = "$(cat "$sysroot/.stguard-packages")" ]
}

if [ ${#missing[@]} -eq 0 ] && { [ -z "$cross" ] || sysroot_current; }; then
    echo "setup-debian: all ${#packages[@]} packages already installed${cross:+, s390x sysroot $sysroot current}"
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

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
debs=$(mktemp -d)
trap 'rm -rf "$log" "$debs"' EXIT
fail() { cat "$log" >&2; echo "setup-debian: $*" >&2; exit 1; }

if [ -n "$cross" ] && ! dpkg --print-foreign-architectures | grep -qx s390x; then
    echo "setup-debian: adding the s390x architecture (for its package lists)"
    "${sudo[@]}" dpkg --add-architecture s390x >"$log" 2>&1 || fail "dpkg --add-architecture failed"
fi
"${sudo[@]}" apt-get update -qq >"$log" 2>&1 || fail "apt-get update failed"
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup-debian: installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >"$log" 2>&1 || fail "apt-get install failed"
fi

# cross_s390x: download the s390x library packages and unpack them into the sysroot
# (cmake/toolchains/s390x-linux-gnu.cmake reads it). Their absolute symbolic links
# (libz.so -> /lib/s390x-linux-gnu/...) are pointed into the sysroot.
if [ -n "$cross" ] && ! sysroot_current; then
    echo "setup-debian: unpacking ${cross_s390x_libs[*]} (s390x) into $sysroot"
    chmod 0777 "$debs" # apt's download sandbox user writes here
    (cd "$debs" && apt-get download -q "${cross_s390x_libs[@]/%/:s390x}") >"$log" 2>&1 ||
        fail "apt-get download of the s390x packages failed"
    "${sudo[@]}" rm -rf "$sysroot.new"
    "${sudo[@]}" mkdir -p "$sysroot.new"
    for deb in "$debs"/*.deb; do
        "${sudo[@]}" dpkg-deb -x "$deb" "$sysroot.new" >"$log" 2>&1 || fail "dpkg-deb -x $deb failed"
    done
    while IFS= read -r link; do
        "${sudo[@]}" ln -sfn "$sysroot$(readlink "$link")" "$link"
    done < <(find "$sysroot.new" -type l -lname '/*')
    apt-cache policy "${cross_s390x_libs[@]/%/:s390x}" |
        awk '/^[^ ]/ {p = $1} /Candidate:/ {print p, $2}' |
        "${sudo[@]}" tee "$sysroot.new/.stguard-packages" >/dev/null
    "${sudo[@]}" rm -rf "$sysroot"
    "${sudo[@]}" mv "$sysroot.new" "$sysroot"
fi
echo "setup-debian: done"
