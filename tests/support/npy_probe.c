/* Test-only driver: prints stguard's reading of .npy headers (parser/npy) as one JSON line per
 * file, so tests/differential/script_npy_differential.sh can compare it with numpy.lib.format; with
 * --reduce, its reading of numpy.dtype reduce strings (parser/npy_reduce) given as hex
 * arguments, for tests/differential/npy_reduce_differential.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/npy.h"
#include "parser/npy_reduce.h"
#include "parser/text.h"

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            break;
        }
        uint8_t *nb = realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* One line per hex argument: {"fixed": ..., "itemsize": ..., "object": ..., "flexible": ...,
 * "kind": ..., "count": ...}. */
static int probe_reduce(int argc, char **argv)
{
    for (int a = 2; a < argc; a++) {
        uint8_t s[64];
        size_t n = strlen(argv[a]) / 2;
        if (n > sizeof s || !stg_hex_decode(argv[a], s, n)) {
            fprintf(stderr, "npy_probe: bad hex %s\n", argv[a]);
            return 2;
        }
        uint64_t size = 0, count = 0;
        bool object = false;
        uint8_t kind = 0;
        bool fixed = stg_npy_reduce_fixed(s, n, &size, &object);
        bool flexible = stg_npy_reduce_flexible(s, n, &kind, &count);
        printf("{\"fixed\": %s, \"itemsize\": %llu, \"object\": %s, \"flexible\": %s, "
               "\"kind\": \"%c\", \"count\": %llu}\n",
               fixed ? "true" : "false", (unsigned long long)size, object ? "true" : "false",
               flexible ? "true" : "false", flexible ? kind : '-', (unsigned long long)count);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--reduce") == 0) {
        return probe_reduce(argc, argv);
    }
    stg_limits def;
    stg_limits_default(&def);
    stg_npy_limits lim = {def.max_header_len, def.max_json_depth, def.max_metadata_entries};
    for (int a = 1; a < argc; a++) {
        size_t len = 0;
        uint8_t *buf = slurp(argv[a], &len);
        if (buf == NULL) {
            fprintf(stderr, "npy_probe: cannot read %s\n", argv[a]);
            return 2;
        }
        size_t cap = stg_npy_nodes_needed(buf, len, &lim);
        stg_pylit_node *nodes = calloc(cap + 1, sizeof *nodes);
        stg_npy_dtype *scratch = calloc(cap + 1, sizeof *scratch);
        if (nodes == NULL || scratch == NULL) {
            fprintf(stderr, "npy_probe: out of memory\n");
            return 2;
        }
        stg_npy_header h;
        stg_npy_error err;
        stg_parse_status st = stg_npy_read(buf, len, &lim, nodes, scratch, cap, &h, &err);
        printf("{\"file\": \"%s\", \"ok\": %s", argv[a], st == STG_PARSE_OK ? "true" : "false");
        if (st == STG_PARSE_OK) {
            printf(", \"has_object\": %s, \"itemsize\": %llu, \"count_known\": %s, "
                   "\"count\": %llu, \"fortran_order\": %s, \"ndim\": %u, \"data_offset\": %zu",
                   h.dtype.has_object ? "true" : "false", (unsigned long long)h.dtype.itemsize,
                   h.count_known ? "true" : "false", (unsigned long long)h.count,
                   h.fortran_order ? "true" : "false", h.ndim, h.data_offset);
        } else {
            printf(", \"status\": \"%s\", \"offset\": %llu, \"what\": \"%s\"",
                   st == STG_PARSE_LIMIT ? "limit" : "malformed", (unsigned long long)err.offset,
                   err.what);
        }
        printf("}\n");
        free(nodes);
        free(scratch);
        free(buf);
    }
    return 0;
}
