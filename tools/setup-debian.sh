#!/usr/bin/env bash
# Installs what stguard needs to build, test and fuzz on Debian 12 (DESIGN.md section 9).
# Idempotent: when every package is already installed it only asks dpkg and returns.
# Works as root, or as a user with sudo. Quiet unless something fails.
set -euo pipefail

packages=(
    # build
    cmake make gcc clang libclang-rt-14-dev llvm pkg-config git
    # libraries
    check libssl-dev zlib1g-dev liblzma-dev libbz2-dev
    # fuzzing, formatting and the ABI/install checks (nm, readelf)
    afl++ clang-format-14 binutils
    # pickle test fixtures are generated with the real libraries
    python3 python3-torch python3-numpy python3-joblib
)

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
