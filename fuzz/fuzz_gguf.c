/* Target: stg_gguf_check (parser/gguf.c through validator/gguf.c). Seeds: corpus/gguf/.
 * Dict: fuzz/gguf.dict.
 * Properties checked (abort on failure):
 *   - the same bytes parse the same way twice (records, failure code and offset);
 *   - a failure's offset lies inside the buffer (or at its end); a whole parse ends inside it;
 *   - every key, name and value the parser returns lies inside the buffer;
 *   - a report without errors (layout_ok) means every tensor's range lies inside the file, and
 *     its verdict is not ok while an error finding was added (fails closed);
 *   - a small memory cap never turns a file into a wrong success. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/gguf.h"
#include "validator/gguf.h"
#include "validator/report.h"

static void inside(const uint8_t *data, size_t size, const uint8_t *p, size_t n)
{
    if (n > 0 && (p < data || (size_t)(p - data) > size || n > size - (size_t)(p - data))) {
        abort();
    }
}

static void parse_props(const uint8_t *data, size_t size, const stg_limits *lim)
{
    stg_gguf_limits gl;
    stg_gguf_limits_from(lim, size, 0, &gl);
    stg_gguf_file a, b;
    stg_gguf_file_init(&a, gl.max_memory);
    stg_gguf_file_init(&b, gl.max_memory);
    bool oka = stg_gguf_parse(data, size, &gl, &a);
    bool okb = stg_gguf_parse(data, size, &gl, &b);
    if (oka != okb || a.fail.code != b.fail.code || a.fail.offset != b.fail.offset ||
        a.nkv != b.nkv || a.ntensors != b.ntensors) {
        abort();
    }
    if (!oka && a.fail.offset > size) {
        abort();
    }
    if (oka && (a.infos_end > size || a.nkv != a.kv_count || a.ntensors != a.tensor_count)) {
        abort();
    }
    for (size_t i = 0; i < a.nkv; i++) {
        const stg_gguf_kv *kv = &a.kvs[i];
        inside(data, size, kv->key, kv->key_len);
        if (kv->value_offset > size || kv->value_len > size - kv->value_offset ||
            (kv->dup_of != STG_GGUF_NONE && kv->dup_of >= i)) {
            abort();
        }
    }
    for (size_t i = 0; i < a.ntensors; i++) {
        const stg_gguf_tensor *t = &a.tensors[i];
        inside(data, size, t->name, t->name_len);
        if (t->n_dims > STG_GGUF_MAX_DIMS || (t->dup_of != STG_GGUF_NONE && t->dup_of >= i)) {
            abort();
        }
    }
    stg_gguf_file_release(&a);
    stg_gguf_file_release(&b);
}

static void check_props(const uint8_t *data, size_t size, stg_limits *lim)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return;
    }
    stg_gguf_file f;
    stg_gguf_result res;
    if (stg_gguf_check(data, size, lim, 0, r, &f, &res) != STG_OK) {
        abort();
    }
    stg_report_finish(r);
    stg_verdict v = stg_report_verdict(r);
    if (res.layout_ok) {
        if (f.fail.code != STG_GGUF_OK || res.data_start > size ||
            res.data_len != size - res.data_start) {
            abort();
        }
        for (size_t i = 0; i < f.ntensors; i++) {
            uint64_t el = 0, nb = 0, end = 0;
            if (stg_gguf_tensor_size(&f.tensors[i], &el, &nb) != STG_GGUF_SIZE_OK ||
                __builtin_add_overflow(f.tensors[i].data_offset, nb, &end) || end > res.data_len ||
                f.tensors[i].data_offset % res.alignment != 0) {
                abort();
            }
        }
    } else if (v == STG_VERDICT_OK) {
        abort(); /* an error was found, yet the verdict is ok */
    }
    stg_gguf_file_release(&f);
    stg_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_tensors = 1u << 16;
    lim.max_metadata_entries = 1u << 16;
    parse_props(data, size, &lim);
    for (int p = 0; p < 2; p++) {
        lim.profile = (stg_profile)p;
        check_props(data, size, &lim);
    }
    lim.max_memory = 4096 + (size & 0xFFFF); /* the cap refuses somewhere in the parse */
    check_props(data, size, &lim);
    return 0;
}
