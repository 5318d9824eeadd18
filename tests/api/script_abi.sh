#!/usr/bin/env bash
# ABI checks of the shared library (docs/abi.md): SONAME libstguard.so.1; every exported symbol
# starts with stg_ and carries the version STGUARD_1; every STG_API function of the public
# header is exported, and nothing else is; a program linked against the shared library gets
# the caller-filled structs' convention (struct_version set by the header's _default inlines,
# an unknown version refused with STG_E_STRUCT_VERSION, what a binding without inlines does).
set -euo pipefail
: "${STG_BINARY_DIR:?set by ctest}"
: "${STG_SOURCE_DIR:?set by ctest}"

lib="$STG_BINARY_DIR/libstguard.so.1"
if grep -q '^STG_CORE_ONLY:BOOL=ON' "$STG_BINARY_DIR/CMakeCache.txt" 2>/dev/null; then
    echo "FAIL: STG_CORE_ONLY builds have no shared library to check"
    exit 1
fi
[ -e "$lib" ] || { echo "FAIL: $lib does not exist" >&2; exit 1; }
fail=0

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "libstguard.so.1" ]; then
    echo "FAIL: SONAME is '$soname', expected libstguard.so.1" >&2
    fail=1
fi

# Defined dynamic symbols as NAME@@VERSION (readelf prints the version after the name).
# The version node itself shows up as an ABS symbol named STGUARD_1: it is not a function.
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
    if [ "$version" != "STGUARD_1" ] || [ "$name" = "$s" ]; then
        echo "FAIL: symbol not versioned STGUARD_1: $s" >&2
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

# A consumer of the shared library, as a program built against this header (or a newer one).
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$STG_BINARY_DIR/CMakeCache.txt")
# built like the library (an instrumented library needs the sanitizer runtime in the program)
san=$(sed -n 's/^STG_SANITIZE:[A-Z]*=//p' "$STG_BINARY_DIR/CMakeCache.txt")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/consumer.c" <<'CONSUMER'
#include <stdio.h>
#include <string.h>
#include "stguard/stguard.h"
#define CHECK(c) do { if (!(c)) { printf("FAIL: %s\n", #c); return 1; } } while (0)
int main(void)
{
    static const unsigned char st[] = {2, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
    stg_limits lim;
    stg_limits_default(&lim);
    CHECK(lim.struct_version == STG_STRUCT_VERSION);
    stg_report *r = NULL;
    CHECK(stg_validate_buffer(st, sizeof st, &lim, &r) == STG_OK);
    CHECK(stg_report_verdict(r) == STG_VERDICT_WARN); /* header_not_padded */
    stg_report_free(r);
    /* a binding without inlines (ctypes) calls _init with the version it was written for */
    stg_scan_options opt;
    CHECK(stg_scan_options_init(&opt, 1) == STG_OK);
    CHECK(stg_scan_buffer(st, sizeof st, NULL, &opt, &r) == STG_OK);
    stg_report_free(r);
    /* built against a newer header: refused, not half understood */
    CHECK(stg_scan_options_init(&opt, STG_STRUCT_VERSION + 1) == STG_E_STRUCT_VERSION);
    r = NULL;
    CHECK(stg_scan_buffer(st, sizeof st, NULL, &opt, &r) == STG_E_STRUCT_VERSION && r == NULL);
    /* never initialised */
    memset(&lim, 0, sizeof lim);
    CHECK(stg_validate_buffer(st, sizeof st, &lim, &r) == STG_E_STRUCT_VERSION && r == NULL);
    CHECK(strcmp(stg_status_name(STG_E_STRUCT_VERSION), "STG_E_STRUCT_VERSION") == 0);
    puts("consumer: ok");
    return 0;
}
CONSUMER
if ! "$cc" -std=c11 -Wall -Werror ${san:+-fsanitize=$san} -I"$STG_SOURCE_DIR/include" \
    -o "$tmp/consumer" "$tmp/consumer.c" \
    "$lib" -Wl,-rpath,"$STG_BINARY_DIR" >"$tmp/cc.log" 2>&1; then
    echo "FAIL: the consumer does not build against the shared library:" >&2
    cat "$tmp/cc.log" >&2
    fail=1
elif ! out=$("$tmp/consumer"); then
    echo "FAIL: consumer of the shared library: $out" >&2
    fail=1
elif ! grep -qF "libstguard.so.1 => $STG_BINARY_DIR/libstguard.so.1" <<<"$(ldd "$tmp/consumer")"; then
    # (not `ldd | grep -q`: under pipefail, grep leaving early gives ldd SIGPIPE, a false fail)
    echo "FAIL: the consumer does not load $lib" >&2
    fail=1
fi

[ $fail -eq 0 ] || exit 1
echo "abi: ok (SONAME $soname, ${#exported[@]} symbols, all stg_*@@STGUARD_1)"
