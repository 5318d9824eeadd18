/* Test-only driver: prints stguard's reading of an HDF5 file's root attributes (parser/hdf5)
 * for tests/keras/script_hdf5.sh, which compares it with h5py's: one line per attribute,
 * "attr <name hex> <string|other> <value hex>", then "result <n> <superblock version>
 * <root header version> <dense 0|1>". */
#include <stdio.h>
#include <stdlib.h>

#include "parser/hdf5.h"

static void hex(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("%02x", p[i]);
    }
    if (n == 0) {
        printf("-");
    }
}

static void on_attr(void *arg, const stg_hdf5_attr *a)
{
    (void)arg;
    printf("attr ");
    hex(a->name, a->name_len);
    printf(" %s ", a->is_string ? "string" : "other");
    hex(a->is_string ? a->value : a->name, a->is_string ? a->value_len : 0);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        return 2;
    }
    (void)fseek(f, 0, SEEK_END);
    long n = ftell(f);
    (void)fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        return 2;
    }
    fclose(f);
    stg_hdf5_file h;
    stg_hdf5_result r = stg_hdf5_read_root(buf, (size_t)n, &h, on_attr, NULL);
    printf("result %d %u %u %d\n", (int)r, h.superblock_version, h.root_header_version,
           h.dense_attributes ? 1 : 0);
    free(buf);
    return 0;
}
