#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a small consumer twice:
# through CMake's find_package(stguard) (target stguard::stguard) and through pkg-config.
# The consumer validates a small valid buffer and an invalid one and checks both verdicts.
set -euo pipefail
: "${STG_BINARY_DIR:?set by ctest}"

cache="$STG_BINARY_DIR/CMakeCache.txt"
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -1; }
if [ "$(cache_get STG_CORE_ONLY)" = "ON" ]; then
    echo "FAIL: STG_CORE_ONLY builds install nothing to check"
    exit 1
fi
if [ ! -e "$STG_BINARY_DIR/libstguard.so" ]; then
    echo "FAIL: $STG_BINARY_DIR/libstguard.so was not built" >&2
    exit 1
fi

# The consumer is compiled like the library (same compiler, sanitizer and profiling flags),
# since an instrumented library needs the instrumentation runtime in the program too.
cc=$(cache_get CMAKE_C_COMPILER)
san=$(cache_get STG_SANITIZE)
cflags="$(cache_get CMAKE_C_FLAGS)${san:+ -fsanitize=$san}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stguard-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

cmake --install "$STG_BINARY_DIR" --prefix "$prefix" >"$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log"; echo "FAIL: cmake --install" >&2; exit 1; }
for f in include/stguard/stguard.h share/man/man1/stguard.1 share/doc/stguard/README.md \
    share/doc/stguard/policy.md share/doc/stguard/findings.md share/doc/stguard/SECURITY.md \
    share/doc/stguard/cli.md share/doc/stguard/cli.schema.json \
    share/bash-completion/completions/stguard share/zsh/site-functions/_stguard; do
    [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed" >&2; exit 1; }
done
# The installed README's links to docs lead to the pages installed next to it (no docs/ there)
doc="$prefix/share/doc/stguard"
for link in $(grep -o '](\([A-Za-z0-9_.-]*\.\(md\|json\)\)' "$doc/README.md" | sed 's/^](//'); do
    [ -f "$doc/$link" ] || { echo "FAIL: the installed README links $link, not installed" >&2; exit 1; }
done
grep -q '](docs/' "$doc/README.md" && { echo "FAIL: docs/ links in the installed README" >&2; exit 1; }
# man finds the installed page (man -M PREFIX/share/man stguard) and it renders without warnings
if command -v man >/dev/null 2>&1; then
    page=$(MANWIDTH=80 MANPAGER=cat man -M "$prefix/share/man" stguard 2>"$tmp/man.err") || {
        cat "$tmp/man.err" >&2; echo "FAIL: man -M $prefix/share/man stguard" >&2; exit 1; }
    case "$page" in
        *STGUARD*"--format text|json|sarif"*"--shard K/N"*"EXIT STATUS"*) ;;
        *) echo "FAIL: the installed manual: $(echo "$page" | head -5)" >&2; exit 1 ;;
    esac
    [ ! -s "$tmp/man.err" ] || { cat "$tmp/man.err" >&2; echo "FAIL: man warnings" >&2; exit 1; }
    echo "-- man -M $prefix/share/man stguard: ok"
fi
# The installed bash completion: every long option of `stguard --help` is completed (the
# bash-completion helpers it calls are stubbed), and --fail-on offers the verdict names.
comp_out=$(bash -c '
    _init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]};
                         words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
    _filedir() { COMPREPLY=(); }
    compopt() { :; }
    . "$1"
    COMP_WORDS=(stguard scan --); COMP_CWORD=2; _stguard; echo "${COMPREPLY[*]}"
    COMP_WORDS=(stguard scan --fail-on ""); COMP_CWORD=3; _stguard; echo "${COMPREPLY[*]}"
' _ "$prefix/share/bash-completion/completions/stguard")
scan_help=$("$STG_BINARY_DIR/stguard" --help 2>/dev/null | sed -n '/^scan options:/,/^exit status/p' |
    grep -o -- '--[a-z0-9-]*' | sort -u) || true
for o in $scan_help; do
    case " $(echo "$comp_out" | head -1) " in *" $o "*) ;;
        *) echo "FAIL: bash completion lacks $o" >&2; exit 1 ;; esac
    grep -q -- "'$o\[\|'(-[a-z] $o)\|{-[a-z],$o}" "$prefix/share/zsh/site-functions/_stguard" ||
        grep -q -- "$o\[" "$prefix/share/zsh/site-functions/_stguard" ||
        { echo "FAIL: zsh completion lacks $o" >&2; exit 1; }
done
[ "$(echo "$comp_out" | sed -n 2p)" = "ok warn invalid unsafe" ] || {
    echo "FAIL: bash completion of --fail-on: $(echo "$comp_out" | sed -n 2p)" >&2; exit 1; }
[ -n "$scan_help" ] && echo "-- completion: $(echo "$scan_help" | wc -l) scan options in bash and zsh"
pcfile=$(find "$prefix" -name stguard.pc | head -1)
config=$(find "$prefix" -name stguardConfig.cmake | head -1)
[ -n "$pcfile" ] || { echo "FAIL: stguard.pc not installed" >&2; exit 1; }
[ -n "$config" ] || { echo "FAIL: stguardConfig.cmake not installed" >&2; exit 1; }
# Nothing is linked against libcrypto (it is loaded at run time): the installed CMake files
# must not ask a consumer for OpenSSL (issue 24).
if grep -rn "OpenSSL" "$(dirname "$config")" >/dev/null; then
    echo "FAIL: the installed CMake files name OpenSSL:" >&2
    grep -rn "OpenSSL" "$(dirname "$config")" >&2
    exit 1
fi
grep -q '^Description: .*GGUF, ONNX' "$pcfile" || { echo "FAIL: stale .pc description" >&2; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'libstguard.so.1' | head -1)")
[ -f "$libdir/libstguard.a" ] || { echo "FAIL: static library not installed" >&2; exit 1; }

# The installed CLI links the installed shared library (RPATH $ORIGIN/../lib...), with no
# LD_LIBRARY_PATH, and runs: --version, and a scan of a file through the public tree scan.
if [ "$(cache_get STG_BUILD_TOOLS)" != "OFF" ]; then
    cli="$prefix/bin/stguard"
    [ -x "$cli" ] || { echo "FAIL: bin/stguard not installed" >&2; exit 1; }
    if command -v ldd >/dev/null 2>&1; then
        deps=$(env -u LD_LIBRARY_PATH ldd "$cli")
        loaded=$(echo "$deps" | awk '$1 == "libstguard.so.1" {print $3}')
        if [ -z "$loaded" ] || [ "$(readlink -f "$loaded")" != "$(readlink -f "$libdir/libstguard.so.1")" ]; then
            echo "FAIL: the installed CLI does not load $libdir/libstguard.so.1:" >&2
            echo "$deps" >&2
            exit 1
        fi
    fi
    env -u LD_LIBRARY_PATH "$cli" --version | grep -q '^stguard ' || {
        echo "FAIL: the installed CLI does not run" >&2; exit 1; }
    printf 'plain words\n' >"$tmp/words.txt"
    out=$(env -u LD_LIBRARY_PATH "$cli" scan --format json "$tmp/words.txt") || {
        echo "FAIL: the installed CLI's scan: $out" >&2; exit 1; }
    case "$out" in
        *'"format":"text"'*'"verdict":"ok"'*) ;;
        *) echo "FAIL: the installed CLI's scan record: $out" >&2; exit 1 ;;
    esac
    echo "-- installed CLI: ok"
fi

mkdir -p "$tmp/src"
# The README's first C example (the upload gate), compiled as the body of gate(): it must build
# against the installed header and give 0 for a valid file, -1 for a pickle calling os.system.
readme_gate=$(awk '/^## Using the library/ {on = 1} on && /^```c/ {inside = 1; next}
                   inside && /^```/ {exit} inside && !/^#include/ {print}' "$STG_SOURCE_DIR/README.md")
[ -n "$readme_gate" ] || { echo "FAIL: no C example under README's 'Using the library'" >&2; exit 1; }
{
cat <<'C'
#include <stdio.h>
#include <string.h>

#include <stguard/stguard.h>

static void log_line(const char *json)
{
    printf("gate record: %.60s...\n", json);
}

static int gate(const void *buf, size_t len, const char *name)
{
C
echo "$readme_gate"
echo "}"
cat <<'C'

/* Builds "<u64 n><header padded with spaces to 8 + n = 0 mod 8><2 data bytes>". */
static size_t make_file(unsigned char *out, size_t cap)
{
    const char *json = "{\"t\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}";
    size_t n = strlen(json);
    while ((8 + n) % 8 != 0) {
        n++;
    }
    if (8 + n + 2 > cap) {
        return 0;
    }
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)((n >> (8 * i)) & 0xff);
    }
    memset(out + 8, ' ', n);
    memcpy(out + 8, json, strlen(json));
    out[8 + n] = 1;
    out[8 + n + 1] = 2;
    return 8 + n + 2;
}

static int expect(const unsigned char *buf, size_t len, stg_verdict want, const char *what)
{
    stg_report *rep = NULL;
    stg_status st = stg_validate_buffer(buf, len, NULL, &rep);
    if (st != STG_OK || rep == NULL) {
        fprintf(stderr, "%s: stg_validate_buffer returned %s\n", what, stg_status_name(st));
        return 1;
    }
    stg_verdict got = stg_report_verdict(rep);
    size_t count = stg_report_count(rep);
    stg_report_free(rep);
    if (got != want) {
        fprintf(stderr, "%s: verdict %s (%zu findings), expected %s\n", what,
                stg_verdict_name(got), count, stg_verdict_name(want));
        return 1;
    }
    return 0;
}

int main(void)
{
    unsigned char buf[256];
    size_t len = make_file(buf, sizeof buf);
    if (len == 0) {
        return 1;
    }
    int bad = expect(buf, len, STG_VERDICT_OK, "valid file");
    static const unsigned char os_system[] = "\x80\x02\x63os\nsystem\nX\x02\x00\x00\x00id\x85R.";
    if (gate(buf, len, "model.safetensors") != 0 ||
        gate(os_system, sizeof os_system - 1, "model.bin") != -1) {
        fprintf(stderr, "the README's upload gate lets the wrong file through\n");
        bad = 1;
    }
    memset(buf, 0, 8); /* header length 0: header_length_invalid */
    bad |= expect(buf, len, STG_VERDICT_INVALID, "zero header length");
    if (strcmp(stg_version(), STG_VERSION_STRING) != 0) {
        fprintf(stderr, "stg_version() %s differs from the header's %s\n", stg_version(),
                STG_VERSION_STRING);
        bad = 1;
    }
    if (bad == 0) {
        printf("consumer: ok (stguard %s)\n", stg_version());
    }
    return bad;
}
C
} >"$tmp/src/consumer.c"
cat >"$tmp/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(stguard_consumer LANGUAGES C)
find_package(stguard 0.1 REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE stguard::stguard)
CM

echo "-- consumer through find_package(stguard)"
cmake -S "$tmp/src" -B "$tmp/cmake-build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/consumer.log" 2>&1 &&
    cmake --build "$tmp/cmake-build" >>"$tmp/consumer.log" 2>&1 || {
    cat "$tmp/consumer.log"; echo "FAIL: CMake consumer did not build" >&2; exit 1; }
# The dynamic linker must pick the installed library (CMake put its directory in the RPATH).
"$tmp/cmake-build/consumer"
if command -v ldd >/dev/null 2>&1; then
    deps=$(ldd "$tmp/cmake-build/consumer")
    case "$deps" in
        *"=> $libdir/libstguard.so.1 "*) ;;
        *) echo "FAIL: the CMake consumer does not load $libdir/libstguard.so.1:" >&2
           echo "$deps" >&2
           exit 1 ;;
    esac
fi

echo "-- consumer through pkg-config"
export PKG_CONFIG_PATH="$(dirname "$pcfile")"
flags=$(pkg-config --cflags --libs stguard) || { echo "FAIL: pkg-config stguard" >&2; exit 1; }
# shellcheck disable=SC2086 # flags are word lists
"$cc" $cflags -o "$tmp/consumer-pc" "$tmp/src/consumer.c" $flags || {
    echo "FAIL: pkg-config consumer did not build (flags: $flags)" >&2; exit 1; }
LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc"
echo "install: ok"
