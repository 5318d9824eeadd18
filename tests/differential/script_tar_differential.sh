#!/bin/bash
# stguard's tar member list against CPython's tarfile (what torch.load reads a PyTorch 0.1 file
# with): tests/differential/tar_differential.py builds archives of every class tarfile treats specially plus
# seeded random mutations and compares, archive by archive, what tests/support/tar_members.c
# (stguard's reader) and tarfile list: opening, members, offsets, sizes, link resolution and
# getmember(). Skips (77) only when Debian's python3 is absent.
set -u
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
    echo "skip: no $PY"
    exit 77
fi
if [ -z "${STG_TAR_MEMBERS:-}" ] || [ ! -x "$STG_TAR_MEMBERS" ]; then
    echo "FAIL: no tar member driver (STG_TAR_MEMBERS)"
    exit 1
fi
SRC=${STG_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Fixed seeds keep CI repeatable: 20261201, and 52124, which once found a directory whose
# base-256 size is 2^56 or more. STG_TAR_DIFF_SEEDS="..." widens a local run.
rc=0
for seed in ${STG_TAR_DIFF_SEEDS:-20261201 52124}; do
    "$PY" "$SRC/tests/differential/tar_differential.py" "$STG_TAR_MEMBERS" "$tmp/$seed" "$seed" 600 || rc=1
done
exit $rc
