/* Test-only driver: prints, for each FILE, the member list stguard's tar reader takes (the one
 * torch.load's tarfile would take) as one JSON line, for tests/differential/script_tar_differential.sh to
 * compare with what Python's tarfile returns:
 *   {"file": ..., "opens": bool, "end": "end"|"malformed", "error_offset": N, "why": ...,
 *    "members": [{"name": HEX, "link": HEX, "type": BYTE, "offset": N, "offset_data": N,
 *                 "size": N, "sparse": bool, "resolves": INDEX | "none" | "missing" | "loop"}],
 *    "lookup": {"sys_info": INDEX|-1, "pickle": ..., "storages": ..., "tensors": ...}}
 * Names are hex so that any byte survives. Not installed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/tar.h"

static void put_hex(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        printf("%02x", (unsigned)(unsigned char)s[i]);
    }
    putchar('"');
}

static void put_text(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\') {
            putchar('\\');
        }
        putchar(*s);
    }
    putchar('"');
}

static int dump(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf == NULL) {
        return 1;
    }
    stg_tar_list l;
    if (!stg_tar_list_build(&l, buf, len)) {
        fprintf(stderr, "%s: out of memory\n", path);
        free(buf);
        return 1;
    }
    printf("{\"file\": ");
    put_text(path);
    printf(", \"opens\": %s, \"end\": \"%s\", \"error_offset\": %" PRIu64 ", \"why\": ",
           l.opened ? "true" : "false", l.end == STG_PARSE_END ? "end" : "malformed",
           l.end == STG_PARSE_END ? 0 : l.err.offset);
    put_text(l.end == STG_PARSE_END || l.err.what == NULL ? "" : l.err.what);
    printf(", \"members\": [");
    for (size_t i = 0; i < l.count; i++) {
        const stg_tar_member *m = &l.m[i];
        printf("%s{\"name\": ", i > 0 ? ", " : "");
        put_hex(stg_tar_member_name(&l, i), m->name_len);
        printf(", \"link\": ");
        put_hex(stg_tar_member_link(&l, i), m->link_len);
        printf(", \"type\": %u, \"offset\": %" PRIu64 ", \"offset_data\": %" PRIu64
               ", \"size\": %" PRId64 ", \"sparse\": %s, \"resolves\": ",
               (unsigned)(unsigned char)m->type, m->header_offset, m->data_offset, m->size,
               m->sparse ? "true" : "false");
        size_t target = 0;
        unsigned hops = 0;
        bool sym = false;
        switch (stg_tar_list_resolve(&l, i, &target, &hops, &sym)) {
        case STG_TARRES_DATA: printf("%zu", target); break;
        case STG_TARRES_NO_DATA: printf("\"none\""); break;
        case STG_TARRES_MISSING: printf("\"missing\""); break;
        case STG_TARRES_LOOP: printf("\"loop\""); break;
        case STG_TARRES_NOMEM: printf("\"nomem\""); break;
        }
        printf("}");
    }
    printf("], \"lookup\": {");
    static const char *const names[] = {"sys_info", "pickle", "storages", "tensors"};
    for (size_t i = 0; i < 4; i++) {
        size_t at = stg_tar_list_find(&l, names[i], strlen(names[i]));
        printf("%s\"%s\": %lld", i > 0 ? ", " : "", names[i],
               at == STG_TAR_NONE ? -1LL : (long long)at);
    }
    printf("}}\n");
    stg_tar_list_free(&l);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        rc |= dump(argv[i]);
    }
    return rc;
}
