/* Test-only driver: prints stguard's reading of .npy headers (parser/npy) as one JSON line per
 * file, so tests/script_npy_differential.sh can compare it with numpy.lib.format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/npy.h"

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

int main(int argc, char **argv)
{
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
        stg_status st = stg_npy_read(buf, len, &lim, nodes, scratch, cap, &h, &err);
        printf("{\"file\": \"%s\", \"ok\": %s", argv[a], st == STG_OK ? "true" : "false");
        if (st == STG_OK) {
            printf(", \"has_object\": %s, \"itemsize\": %llu, \"count_known\": %s, "
                   "\"count\": %llu, \"fortran_order\": %s, \"ndim\": %u, \"data_offset\": %zu",
                   h.dtype.has_object ? "true" : "false", (unsigned long long)h.dtype.itemsize,
                   h.count_known ? "true" : "false", (unsigned long long)h.count,
                   h.fortran_order ? "true" : "false", h.ndim, h.data_offset);
        } else {
            printf(", \"status\": \"%s\", \"offset\": %zu, \"what\": \"%s\"", stg_status_name(st),
                   err.offset, err.what);
        }
        printf("}\n");
        free(nodes);
        free(scratch);
        free(buf);
    }
    return 0;
}
