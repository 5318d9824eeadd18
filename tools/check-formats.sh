#!/usr/bin/env bash
# Checks that format knowledge lives in the format table (docs/design.md, "The format table");
# exit 1 on a violation, each printed as file:line: rule: text. Run by tools/run-tests.sh
# (format stage). The rules:
#  1. one definition: every name suffix of the table (`.suffix = "..."` in dispatch/names.c)
#     and every magic it uses (`.magic = "..."`, or the macro it names, defined with a string
#     literal in a parser/ header) is written as that exact C string literal in one place of
#     the library and tools/ sources;
#  2. tools/ routes nothing by name or bytes: no memcmp, strcasecmp, strncasecmp or
#     strncmp-on-a-suffix in tools/*.[ch] (the CLI asks the library: stg_door_of, stg_sniff,
#     stg_report_format).
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0
report() { printf '%s:%s: %s: %s\n' "$1" "$2" "$3" "$4"; fail=1; }

table=dispatch/formats.c
mapfile -t sources < <(git ls-files --cached --others --exclude-standard -- 'parser/*.[ch]' \
    'validator/*.[ch]' 'dispatch/*.[ch]' 'loader/*.[ch]' 'convert/*.[ch]' 'tools/*.[ch]' 'include/*.h')

mapfile -t routing < <(printf '%s\n' "${sources[@]}" | grep -E '^(dispatch|loader|tools|include)/')

literals=()
while IFS= read -r lit; do literals+=("$lit"); done < <(
    grep -o '\.suffix = "[^"]*"' dispatch/names.c | sed 's/^\.suffix = //'
    grep -o '\.magic = "[^"]*"' "$table" | sed 's/^\.magic = //'
    for macro in $(grep -o '\.magic = STG_[A-Z0-9_]*' "$table" | sed 's/^\.magic = //'); do
        def=$(grep -h "^#define $macro \"" parser/*.h || true)
        if [ -z "$def" ]; then
            report "$table" 0 one-definition "magic $macro is not defined as a string literal in parser/"
        else
            printf '%s\n' "${def#\#define $macro }"
        fi
    done)
[ "${#literals[@]}" -ge 8 ] || report "$table" 0 one-definition "found only ${#literals[@]} table literals"

for lit in "${literals[@]}"; do
    # suffixes in the routing layers (convert/ reads .npz members by numpy's own rule), magics
    # everywhere; comment lines are left out
    case "$lit" in \".*) where=("${routing[@]}") ;; *) where=("${sources[@]}") ;; esac
    hits=$(grep -nF -- "$lit" "${where[@]}" | grep -vE ':[0-9]+:\s*(/?\*|//)' || true)
    n=$(printf '%s' "$hits" | grep -c . || true)
    if [ "$n" -ne 1 ]; then
        while IFS= read -r h; do
            [ -n "$h" ] && report "${h%%:*}" "$(cut -d: -f2 <<<"$h")" one-definition "$lit written $n times"
        done <<<"$hits"
        [ "$n" -eq 0 ] && report "$table" 0 one-definition "$lit is written nowhere"
    fi
done

while IFS= read -r h; do
    report "${h%%:*}" "$(cut -d: -f2 <<<"$h")" tools-routing "${h#*:*:}"
done < <(grep -nE '\b(memcmp|strcasecmp|strncasecmp)\s*\(|strn?cmp\([^;]*"\.[a-z]' tools/*.[ch] || true)

if [ "$fail" -eq 0 ]; then
    echo "check-formats: ${#literals[@]} table literals defined once; tools/ routes nothing"
fi
exit "$fail"
