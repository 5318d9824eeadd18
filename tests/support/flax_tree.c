/* Test-only driver: prints, for each file named on the command line, the array leaves stguard's
 * Flax rules read (validator/flax.h, the visitor) and whether they found anything. One JSON
 * line per file: {"file":..., "findings":N, "leaves":[[path hex, dtype hex, [shape]], ...]};
 * paths and dtype names are hex so no escaping is needed. The differential test
 * (tests/flax/script_flax_differential.sh) compares the leaves with the tree msgpack.unpackb
 * and flax's extension decoding (reimplemented in tests/flax/flaxpack.py) return. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "validator/flax.h"
#include "validator/report.h"

static void print_hex(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        printf("%02x", b[i]);
    }
}

static void on_leaf(void *arg, const stg_flax_leaf *leaf)
{
    bool *first = arg;
    printf("%s[\"", *first ? "" : ",");
    *first = false;
    print_hex(leaf->path, leaf->path_len);
    printf("\",\"");
    print_hex(leaf->dtype, leaf->dtype_len);
    printf("\",[");
    for (uint32_t k = 0; k < leaf->rank; k++) {
        printf("%s%llu", k > 0 ? "," : "", (unsigned long long)leaf->shape[k]);
    }
    printf("]]");
}

int main(int argc, char **argv)
{
    stg_limits lim;
    stg_limits_default(&lim);
    for (int i = 1; i < argc; i++) {
        size_t len;
        uint8_t *buf = tu_read_file(argv[i], &len);
        if (buf == NULL) {
            fprintf(stderr, "flax_tree: cannot read %s\n", argv[i]);
            return 1;
        }
        stg_report *r = stg_report_new(&lim);
        bool first = true;
        printf("{\"file\":\"%s\",\"leaves\":[", argv[i]);
        stg_status st = stg_flax_check(buf, len, &lim, r, on_leaf, &first);
        printf("],\"status\":%d,\"findings\":%zu}\n", (int)st, stg_report_count(r));
        stg_report_free(r);
        free(buf);
    }
    return 0;
}
