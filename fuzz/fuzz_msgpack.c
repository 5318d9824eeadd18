/* Target: the msgpack reader (parser/msgpack.c) and the Flax rules over it (validator/flax.c:
 * stg_flax_check, stg_flax_sniff). Seeds: corpus/msgpack/. Dict: fuzz/msgpack.dict.
 * Properties checked (abort on failure):
 *   - the same bytes read the same way twice (items, the final status, where it stopped);
 *   - every item lies inside the buffer: its offset, its payload; offsets never go back; the
 *     depth never passes the limit; an error's offset and a whole value's end lie inside;
 *   - the walk ends (items <= 2 x size + 1: each value takes a byte, each close ends one);
 *   - stg_flax_check runs (STG_OK, or STG_E_NOMEM only under a small memory cap), a report
 *     with an error finding is not ok, and every leaf the visitor gets has a dtype name inside
 *     the buffer and a rank of at most 32;
 *   - what the content sniff takes reads as msgpack to its end: no flax_malformed and no
 *     flax_trailing in its check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/msgpack.h"
#include "validator/flax.h"
#include "validator/report.h"

typedef struct walk_sum {
    uint64_t items, last_offset, end;
    stg_mp_status status;
} walk_sum;

static walk_sum read_all(const uint8_t *data, size_t size, stg_mp_reader *rd)
{
    stg_mp_limits lim = {64, 1u << 20, UINT64_MAX};
    stg_mp_init(rd, stg_cur_make(data, size), &lim);
    walk_sum s = {0, 0, 0, STG_MP_OK};
    stg_mp_item it;
    while ((s.status = stg_mp_next(rd, &it)) == STG_MP_OK) {
        if (++s.items > 2 * (uint64_t)size + 1 || it.offset > size || it.offset < s.last_offset ||
            it.depth > lim.max_depth) {
            abort();
        }
        s.last_offset = it.offset;
        if (it.len > 0 && (it.data < data || it.data_offset > size ||
                           it.len > size - it.data_offset || it.data != data + it.data_offset)) {
            abort();
        }
    }
    if ((s.status == STG_MP_DONE && rd->cur.pos > size) ||
        (s.status != STG_MP_DONE && rd->err_at > size)) {
        abort();
    }
    s.end = s.status == STG_MP_DONE ? rd->cur.pos : rd->err_at;
    return s;
}

typedef struct leaf_ctx {
    const uint8_t *data;
    size_t size;
} leaf_ctx;

static void on_leaf(void *arg, const stg_flax_leaf *leaf)
{
    const leaf_ctx *c = arg;
    const uint8_t *d = (const uint8_t *)leaf->dtype;
    if (leaf->rank > STG_FLAX_MAX_RANK || d < c->data || leaf->dtype_len > c->size ||
        (size_t)(d - c->data) > c->size - leaf->dtype_len || leaf->path_len > STG_FLAX_PATH_MAX) {
        abort();
    }
}

static void check_props(const uint8_t *data, size_t size, const stg_limits *lim, bool sniffed,
                        bool capped)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return;
    }
    leaf_ctx c = {data, size};
    stg_status st = stg_flax_check(data, size, lim, r, on_leaf, &c);
    if (st != STG_OK && !(capped && st == STG_E_NOMEM)) {
        abort();
    }
    stg_report_finish(r);
    bool errors = false;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        errors = errors || stg_report_at(r, i)->severity >= STG_SEV_ERROR;
    }
    if (errors && stg_report_verdict(r) == STG_VERDICT_OK) {
        abort();
    }
    if (sniffed && st == STG_OK &&
        (stg_report_has(r, STG_FLAX_MALFORMED) || stg_report_has(r, STG_FLAX_TRAILING))) {
        abort();
    }
    stg_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_mp_reader *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return 0;
    }
    walk_sum sa = read_all(data, size, a), sb = read_all(data, size, b);
    if (memcmp(&sa, &sb, sizeof sa) != 0) {
        abort();
    }
    free(a);
    free(b);
    bool oom = false;
    bool sniffed = stg_flax_sniff(data, size, &oom);
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_json_depth = 1024; /* the sniff's depth: its files read without a depth limit */
    for (int p = 0; p < 2; p++) {
        lim.profile = (stg_profile)p;
        check_props(data, size, &lim, sniffed && !oom, false);
    }
    lim.max_metadata_entries = 1 + (size & 0xF); /* the key table's cap */
    lim.max_tensors = 1 + (size & 0x7);
    check_props(data, size, &lim, false, true);
    return 0;
}
