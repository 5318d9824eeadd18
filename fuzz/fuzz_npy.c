/* Target: stg_npy_read (parser/npy.c: .npy header, Python literal, descriptor). Seeds:
 * corpus/npy/. Dict: fuzz/npy.dict.
 * Properties checked (abort on failure):
 *   - the same bytes read the same way twice;
 *   - an accepted header ends inside the buffer (dict_offset + dict_len == data_offset <= size);
 *   - a failure's offset lies inside the buffer (or at its end);
 *   - with one node less than stg_npy_nodes_needed asks for, the reader never writes past it
 *     (ASan) and fails with a status, never a wrong success;
 *   - stg_check_npy on the same bytes never reports ok for a header the reader refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/npy.h"
#include "dispatch/check.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

static stg_parse_status read_once(const uint8_t *data, size_t size, const stg_npy_limits *lim,
                                  size_t cap, stg_npy_header *h, stg_npy_error *err)
{
    stg_pylit_node *nodes = cap > 0 ? malloc(cap * sizeof *nodes) : NULL;
    stg_npy_dtype *sc = cap > 0 ? malloc(cap * sizeof *sc) : NULL;
    if (cap > 0 && (nodes == NULL || sc == NULL)) {
        abort();
    }
    stg_parse_status st = stg_npy_read(data, size, lim, nodes, sc, cap, h, err);
    free(nodes);
    free(sc);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_limits def;
    stg_limits_default(&def);
    stg_npy_limits lim = {1u << 16, 64, 1u << 14};
    size_t cap = stg_npy_nodes_needed(data, size, &lim);
    stg_npy_header a, b;
    stg_npy_error ea, eb;
    stg_parse_status sa = read_once(data, size, &lim, cap, &a, &ea);
    stg_parse_status sb = read_once(data, size, &lim, cap, &b, &eb);
    if (sa != sb) {
        abort();
    }
    if (sa == STG_PARSE_OK) {
        if (a.dict_offset + a.dict_len != a.data_offset || a.data_offset > size ||
            a.dtype.has_object != b.dtype.has_object || a.dtype.itemsize != b.dtype.itemsize ||
            a.count != b.count || a.count_known != b.count_known) {
            abort();
        }
    } else if (ea.offset > size || ea.what == NULL) {
        abort();
    }
    if (cap > 1) {
        stg_npy_header c;
        stg_npy_error ec;
        stg_parse_status sc = read_once(data, size, &lim, cap - 1, &c, &ec);
        if (sc == STG_PARSE_OK && sa != STG_PARSE_OK) {
            abort();
        }
    }
    def.max_header_len = lim.max_header_len;
    def.max_json_depth = lim.max_depth;
    def.max_metadata_entries = lim.max_nodes;
    stg_report *r = stg_report_new(&def);
    if (r == NULL) {
        return 0;
    }
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &def, r);
    (void)stg_check_npy(data, size, 0, &ctx);
    stg_report_finish(r);
    if (sa != STG_PARSE_OK && stg_report_verdict(r) == STG_VERDICT_OK) {
        abort();
    }
    stg_report_free(r);
    return 0;
}
