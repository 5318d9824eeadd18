#!/usr/bin/env bash
# ABI checks of the shared library (docs/abi.md): SONAME libstguard.so.0; every exported symbol
# starts with stg_ and carries the version STGUARD_0; every STG_API function of the public
# header is exported, and nothing else is.
set -euo pipefail
: "${STG_BINARY_DIR:?set by ctest}"
: "${STG_SOURCE_DIR:?set by ctest}"

lib="$STG_BINARY_DIR/libstguard.so.0"
if grep -q '^STG_CORE_ONLY:BOOL=ON' "$STG_BINARY_DIR/CMakeCache.txt" 2>/dev/null; then
    echo "skipped: STG_CORE_ONLY builds have no shared library"
    exit 77
fi
[ -e "$lib" ] || { echo "FAIL: $lib does not exist" >&2; exit 1; }
fail=0

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "libstguard.so.0" ]; then
    echo "FAIL: SONAME is '$soname', expected libstguard.so.0" >&2
    fail=1
fi

# Defined dynamic symbols as NAME@@VERSION (readelf prints the version after the name).
# The version node itself shows up as an ABS symbol named STGUARD_0: it is not a function.
mapfile -t syms < <(readelf --dyn-syms -W "$lib" |
    awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && $8 != "" {print $8}' | sort -u)
if [ ${#syms[@]} -eq 0 ]; then
    echo "FAIL: no defined dynamic symbols in $lib" >&2
    exit 1
fi
exported=()
for s in "${syms[@]}"; do
    name=${s%%@*}
    version=${s#*@}
    version=${version#@}
    case "$name" in
        stg_*) ;;
        *) echo "FAIL: exported symbol without the stg_ prefix: $s" >&2; fail=1 ;;
    esac
    if [ "$version" != "STGUARD_0" ] || [ "$name" = "$s" ]; then
        echo "FAIL: symbol not versioned STGUARD_0: $s" >&2
        fail=1
    fi
    exported+=("$name")
done

# Cross-check with nm: the same defined names.
nm_names=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {sub(/@.*/, "", $3); print $3}' | sort -u)
if [ "$nm_names" != "$(printf '%s\n' "${exported[@]}" | sort -u)" ]; then
    echo "FAIL: nm -D and readelf disagree on the exported names" >&2
    diff <(echo "$nm_names") <(printf '%s\n' "${exported[@]}" | sort -u) >&2 || true
    fail=1
fi

# The header's STG_API declarations are the whole public ABI.
declared=$(sed -n 's/^STG_API[^(]*[ *]\(stg_[a-z0-9_]*\)(.*/\1/p' \
    "$STG_SOURCE_DIR/include/stguard/stguard.h" | sort -u)
missing=$(comm -23 <(echo "$declared") <(printf '%s\n' "${exported[@]}" | sort -u))
extra=$(comm -13 <(echo "$declared") <(printf '%s\n' "${exported[@]}" | sort -u))
if [ -n "$missing" ]; then
    echo "FAIL: declared STG_API in stguard.h but not exported (not implemented?):" >&2
    echo "$missing" | sed 's/^/    /' >&2
    fail=1
fi
if [ -n "$extra" ]; then
    echo "FAIL: exported but not declared in stguard.h (internal symbol leaking):" >&2
    echo "$extra" | sed 's/^/    /' >&2
    fail=1
fi

[ $fail -eq 0 ] || exit 1
echo "abi: ok (SONAME $soname, ${#exported[@]} symbols, all stg_*@@STGUARD_0)"
