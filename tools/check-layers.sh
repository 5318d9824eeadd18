#!/usr/bin/env bash
# Checks the layering of docs/design.md ("Layers") on the tracked sources; exit 1 on a
# violation, each printed as file:line: rule: text. Run by tools/run-tests.sh (format stage).
#
# Layers, lowest first: parser/ < validator/ < dispatch/ < loader/ < convert/ < tools/ (include/stguard/
# is the public header, reachable from all). The rules:
#  1. upward include: a file includes a header of a higher layer ("../loader/x.h" from
#     dispatch/, "dispatch/x.h" from validator/...);
#  2. include cycle: two modules (x.c + x.h) of any library folder or tools/ include each other,
#     directly or through others (tsort finds the loop): a module that needs a function of one
#     that includes it is handed a function pointer instead (as ctx->scan does for dispatch);
#  3. <sys/mman.h> in parser/, validator/ or dispatch/ (except parser/mem.c, the memory layer);
#  4. malloc, calloc, realloc or free called in parser/, validator/ or dispatch/ (except
#     parser/mem.c: everything else allocates through parser/mem.h or an arena);
#  5. OpenSSL (<openssl/...>) in parser/, validator/ or dispatch/;
#  6. I/O in parser/, validator/ or dispatch/: stdio streams and POSIX calls (fopen, fread,
#     fwrite, printf, fprintf, puts, fputs, fgets, perror, stdin/stdout/stderr, open, openat,
#     read, pread, write, close, stat, fstat, mmap, munmap, madvise; snprintf into a buffer is
#     no I/O; parser/mem.c may madvise);
#  7. raw input reads outside the cursor: a fixed-width load (stg_le16/32/64) in validator/ or
#     dispatch/ (their bytes are read by parser/ functions or through parser/cursor.h), or in
#     parser/ straight off the input pointer (`stg_leNN(buf ...` / `stg_leNN(base ...`);
#  8. strchr, strrchr, strstr, strpbrk or strspn in parser/, validator/ or dispatch/ (they stop
#     at a NUL and read past a length: untrusted bytes are searched with memchr and a length);
#  9. a function longer than 150 lines in any tracked C source (the library, tools/, tests/,
#     fuzz/, bench/, python/: every C folder);
# 10. a source of parser/, validator/, dispatch/, loader/, convert/ or tools/ that CMakeLists.txt does not
#     list (the layer targets have explicit source lists);
# 11. tools/ including anything of the library but the public header (<stguard/stguard.h>):
#     the CLI is a client of the public API only; its own headers are tools/*.h.
# 12. a report's out_of_memory set anywhere but validator/report.c (`->out_of_memory = true`,
#     `|=`, or its address handed to a callee) in validator/, dispatch/, loader/, convert/ or
#     tools/: memory that ran out is reported with stg_report_oom (parser/ structures such as
#     the arena keep flags of their own).
# Comments are left out before rules 3-8 and 12 are applied. An exception is written where it is
# taken: a line carrying `layer-check: <reason>` (or with such a comment on one of the two
# lines above it) is exempt from rules 6-8; rule 9 has none.
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0
report() { # file line rule text
    printf '%s:%s: %s: %s\n' "$1" "$2" "$3" "$4"
    fail=1
}

layer_of() {
    case "$1" in
    include/*) echo 0 ;; parser/*) echo 1 ;; validator/*) echo 2 ;; dispatch/*) echo 3 ;;
    loader/*) echo 4 ;; convert/*) echo 5 ;; tools/*) echo 6 ;; *) echo 9 ;;
    esac
}

mapfile -t sources < <(git ls-files -- 'parser/*.[ch]' 'validator/*.[ch]' 'dispatch/*.[ch]' \
    'loader/*.[ch]' 'convert/*.[ch]' 'tools/*.[ch]')
mapfile -t core < <(git ls-files -- 'parser/*.[ch]' 'validator/*.[ch]' 'dispatch/*.[ch]')

# Rule 1 and the edges of rule 2.
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in "${sources[@]}"; do
    own=$(layer_of "$f")
    dir=$(dirname "$f")
    while IFS=: read -r line inc; do
        inc=${inc#*\"}
        inc=${inc%%\"*}
        case "$inc" in
        stguard/*) target="include/$inc" ;;
        ../*) target=$(realpath -m --relative-to=. "$dir/$inc") ;;
        */*) target="$inc" ;;
        *) target="$dir/$inc" ;;
        esac
        to=$(layer_of "$target")
        if [ "$to" -gt "$own" ] && [ "$to" -ne 9 ]; then
            report "$f" "$line" "upward include" "$inc"
        fi
        case "$f" in parser/* | validator/* | dispatch/* | loader/* | convert/* | tools/*)
            case "$target" in parser/* | validator/* | dispatch/* | loader/* | convert/* | tools/*)
                a=${f%.*}
                b=${target%.*}
                [ "$a" != "$b" ] && echo "$a $b" >>"$edges"
                ;;
            esac
            ;;
        esac
    done < <(grep -n '^#include "' "$f" || true)
done
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
    report "(modules)" 0 "include cycle" "$(grep -v 'input contains a loop' "$edges.err" |
        sed 's/^tsort: //' | tr '\n' ' ')"
fi
rm -f "$edges.err"

# Rules 3-8 on the core folders, comments blanked (line numbers kept).
strip_comments() {
    perl -0pe 's{/\*.*?\*/}{ (my $c = $&) =~ s/[^\n]//g; $c }gse; s{//[^\n]*}{}g' "$1"
}
exempt() { # file line: true when the line or one of the two above says layer-check:
    local from=$(($2 > 2 ? $2 - 2 : 1))
    grep -q 'layer-check:' <<<"$(sed -n "${from},${2}p" "$1")" # no pipe: pipefail + grep -q
}
io='\b(fopen|fdopen|fclose|fread|fwrite|fflush|printf|fprintf|vfprintf|puts|fputs|fgets|getc|fgetc|putc|fputc|perror|open|openat|read|pread|write|pwrite|close|stat|fstat|lstat|mmap|munmap|madvise)[[:space:]]*\(|\b(stdin|stdout|stderr)\b'
for f in "${core[@]}"; do
    text=$(strip_comments "$f")
    check() { # rule regex
        while IFS=: read -r line rest; do
            [ -n "$line" ] || continue
            if [ "$1" = "I/O" ] || [ "$1" = "raw input read" ] || [ "$1" = "unbounded search" ]; then
                exempt "$f" "$line" && continue
            fi
            report "$f" "$line" "$1" "$(echo "$rest" | sed 's/^[[:space:]]*//')"
        done < <(printf '%s\n' "$text" | grep -nE "$2" || true)
    }
    if [ "$f" != parser/mem.c ]; then
        check "<sys/mman.h>" '#include[[:space:]]*<sys/mman\.h>'
        check "allocation outside parser/mem.c" '\b(malloc|calloc|realloc|free)[[:space:]]*\('
        check "I/O" "$io"
    fi
    check "OpenSSL" '#include[[:space:]]*<openssl/'
    case "$f" in
    parser/*) check "raw input read" '\bstg_le(16|32|64)\((buf|base)\b' ;;
    *) check "raw input read" '\bstg_le(16|32|64)\(' ;;
    esac
    check "unbounded search" '\b(strchr|strrchr|strstr|strpbrk|strspn)[[:space:]]*\('
done

# Rule 12.
oom='->out_of_memory[[:space:]]*(=[[:space:]]*true|\|=)|&[A-Za-z_]+(->[A-Za-z_]+)*->out_of_memory\b'
for f in $(git ls-files -- 'validator/*.[ch]' 'dispatch/*.[ch]' 'loader/*.[ch]' 'convert/*.[ch]' \
    'tools/*.[ch]'); do
    [ "$f" = validator/report.c ] && continue
    while IFS=: read -r line rest; do
        [ -n "$line" ] || continue
        report "$f" "$line" "out_of_memory outside stg_report_oom" "$(echo "$rest" | sed 's/^[[:space:]]*//')"
    done < <(strip_comments "$f" | grep -nE -e "$oom" || true)
done

# Rule 9: a function starts at a line in column 0 followed by "{" in column 0 and ends at the
# next "}" in column 0 (clang-format puts them there).
# No exceptions.
mapfile -t all_c < <(git ls-files -- '*.c')
while read -r n file name; do
    report "$file" 0 "function longer than 150 lines" "$name ($n lines)"
done < <(awk '
    FNR == 1 { body = 0; sig = "" }
    /^[A-Za-z_].*\(/ { if (!body) { sig = $0; at = FNR } }
    /^\{/ { if (sig != "") { body = 1 } }
    /^\}/ { if (body) {
        n = FNR - at + 1
        name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
        if (n > 150) print n, FILENAME, name
        body = 0; sig = "" } }' "${all_c[@]}" || true)

# Rule 11.
for f in $(git ls-files -- 'tools/*.[ch]'); do
    while IFS=: read -r line inc; do
        case "$inc" in
        *'<stguard/stguard.h>'* | *'"stguard/stguard.h"'*) ;;
        *'<stguard/'*) report "$f" "$line" "tools/ past the public API" "$inc" ;;
        *'"'*)
            name=${inc#*\"}
            name=${name%%\"*}
            [ -f "$(dirname "$f")/$name" ] && [[ "$name" != */* ]] ||
                report "$f" "$line" "tools/ past the public API" "$inc"
            ;;
        esac
    done < <(grep -n '^#include' "$f" || true)
done

# Rule 10.
for f in "${sources[@]}"; do
    case "$f" in *.c) grep -qF "$f" CMakeLists.txt || report "$f" 0 "not in CMakeLists.txt" \
        "add it to its layer's source list" ;; esac
done

if [ "$fail" -ne 0 ]; then
    echo "check-layers: violations above (docs/design.md, \"Layers\")" >&2
    exit 1
fi
echo "check-layers: ${#sources[@]} files OK"
