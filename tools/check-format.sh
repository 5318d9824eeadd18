#!/usr/bin/env bash
# Checks that the tracked C sources follow .clang-format (docs/design.md).
#   tools/check-format.sh          list files that need reformatting; exit 1 if any
#   tools/check-format.sh --fix    reformat them in place
# clang-format 14 is preferred: .clang-format was tuned with it (Debian 12).
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
    --fix) fix=1 ;;
    "") ;;
    *) echo "usage: $0 [--fix]" >&2; exit 2 ;;
esac

cf=""
for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null 2>&1; then cf=$c; break; fi
done
if [ -z "$cf" ]; then
    echo "check-format: clang-format not found (tools/setup-debian.sh installs it)" >&2
    exit 2
fi

# Tracked files only, so half-written untracked files and build/ are left alone.
mapfile -t files < <(git ls-files -- '*.c' '*.h' | grep -E '^(include|parser|validator|dispatch|loader|tools|tests|fuzz|bench)/')
if [ ${#files[@]} -eq 0 ]; then
    echo "check-format: no files"
    exit 0
fi

if [ $fix -eq 1 ]; then
    "$cf" -i "${files[@]}"
    echo "check-format: reformatted ${#files[@]} files with $cf"
    exit 0
fi

bad=0
for f in "${files[@]}"; do
    n=$("$cf" --dry-run "$f" 2>&1 | grep -c ': warning:' || true)
    if [ "$n" -gt 0 ]; then
        echo "check-format: $f: $n place(s) differ from .clang-format"
        bad=$((bad + 1))
    fi
done
if [ $bad -gt 0 ]; then
    echo "check-format: $bad of ${#files[@]} files need formatting (run tools/check-format.sh --fix)"
    exit 1
fi
echo "check-format: ${#files[@]} files OK ($cf)"
