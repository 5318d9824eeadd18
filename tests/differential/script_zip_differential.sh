#!/bin/bash
# Differential test: stguard's per-reader zip view (tests/support/zip_members.c) against what
# Python's zipfile and torch's PyTorchFileReader really load, on generated archives of every
# class where the readers can disagree plus seeded random variations
# (tests/differential/zip_differential.py). Skips (77) only when no Python with torch is installed.
set -u
py=/usr/bin/python3
if ! [ -x "$py" ] || ! "$py" -c 'import torch, zipfile' >/dev/null 2>&1; then
    echo "skip: no /usr/bin/python3 with torch"
    exit 77
fi
driver=${STG_ZIP_MEMBERS:-$STG_BINARY_DIR/tests/zip_members}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" "$STG_SOURCE_DIR/tests/differential/zip_differential.py" "$driver" "$work" "${ZIPDIFF_SEED:-9}"
