/* Target: stg_st_validate / stg_validate_buffer (safetensors frame, header, layout).
 * Seeds: corpus/validate/. Dict: fuzz/validate.dict.
 * Properties checked (abort on violation), not just "no crash":
 *  - an accepted file (ok/warn) has a table sorted by (begin, end) whose ranges lie inside the
 *    data section, are disjoint and tile it exactly, with end - begin = the tensor's byte size;
 *  - compat never rejects what strict accepts (verdict compat <= verdict strict);
 *  - the same bytes give the same findings (codes, severities, offsets) every time;
 *  - the staged API (frame with the total unknown, header, frame with the total, layout) gives
 *    the same findings as the whole-buffer run;
 *  - stg_validate_buffer (the stages plus the polyglot checks) never gives a better verdict than
 *    the stages alone.
 * Inputs starting with 0xFF 'L' take small limits from the next 7 bytes (the rest is the file),
 * so limit paths are explored too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "validator/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_table(const stg_st_header *h, uint64_t data_len)
{
    uint64_t covered = 0;
    for (size_t i = 0; i < h->tensor_count; i++) {
        const stg_st_tensor *t = &h->tensors[i];
        const stg_tensor *v = &h->pub[i];
        if (i > 0) {
            const stg_st_tensor *p = &h->tensors[i - 1];
            if (p->begin > t->begin || (p->begin == t->begin && p->end > t->end)) {
                abort(); /* not sorted */
            }
        }
        if (t->begin != covered || t->end < t->begin || t->end > data_len) {
            abort(); /* gap, overlap or out of range in an accepted file */
        }
        /* the public view agrees with the record, and its shape and dtype give the size */
        uint64_t count = 1;
        for (uint32_t d = 0; d < v->rank; d++) {
            count *= v->shape[d];
        }
        if (v->begin != t->begin || v->end != t->end || v->dtype != stg_st_dtype(t) ||
            count * stg_dtype_bits(v->dtype) != (t->end - t->begin) * 8) {
            abort();
        }
        covered = t->end;
    }
    if (covered != data_len) {
        abort(); /* data section not tiled exactly */
    }
}

static stg_report *run(const uint8_t *data, size_t size, const stg_limits *lim, bool check)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return NULL;
    }
    stg_st_header h;
    stg_st_header_init(&h);
    h.want_public = true; /* check_table compares the public views too */
    stg_st_validate(data, size, lim, r, &h);
    stg_report_finish(r);
    stg_verdict v = stg_report_verdict(r);
    if (check && v <= STG_VERDICT_WARN) {
        if (!h.schema_ok || !h.layout_ok || size < 8) {
            abort();
        }
        check_table(&h, (uint64_t)size - h.data_start);
    }
    stg_st_header_release(&h);
    return r;
}

static stg_report *run_staged(const uint8_t *data, size_t size, const stg_limits *lim)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return NULL;
    }
    uint64_t n = 0;
    stg_st_frame fr = stg_st_check_frame(data, size < 8 ? size : 8, STG_ST_TOTAL_UNKNOWN, lim, r,
                                         &n);
    if (fr == STG_ST_FRAME_NEED_MORE) {
        fr = stg_st_check_frame(data, size, size, lim, r, &n);
    }
    if (fr == STG_ST_FRAME_OK && n <= size - 8) {
        stg_st_header h;
        stg_st_header_init(&h);
        if (stg_st_parse_header(data + 8, n, lim, r, &h)) {
            if (stg_st_check_frame(data, 8, size, lim, r, &n) == STG_ST_FRAME_OK) {
                stg_st_check_layout(&h, size - 8 - n, lim, r);
            }
        }
        stg_st_header_release(&h);
    } else if (fr == STG_ST_FRAME_OK) {
        stg_st_check_frame(data, 8, size, lim, r, &n); /* header_truncated */
    }
    stg_report_finish(r);
    return r;
}

static void same_findings(const stg_report *a, const stg_report *b)
{
    if (a == NULL || b == NULL) {
        return;
    }
    if (stg_report_count(a) != stg_report_count(b) ||
        stg_report_verdict(a) != stg_report_verdict(b) ||
        stg_report_truncated(a) != stg_report_truncated(b)) {
        abort();
    }
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *x = stg_report_at(a, i), *y = stg_report_at(b, i);
        if (x->code != y->code || x->severity != y->severity || x->has_offset != y->has_offset ||
            x->offset != y->offset) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_header_len = 1u << 20; /* small inputs keep runs fast */
    if (size >= 9 && data[0] == 0xFF && data[1] == 'L') {
        lim.max_tensors = data[2] % 8u + 1u;
        lim.max_rank = data[3] % 8u;
        lim.max_json_depth = data[4] % 16u + 1u;
        lim.max_name_len = data[5] % 32u;
        lim.max_metadata_entries = data[6] % 4u;
        lim.max_findings = data[7] % 8u + 1u;
        lim.max_memory = data[8] < 128 ? 0 : (uint64_t)(data[8] - 127u) * 1024u;
        data += 9;
        size -= 9;
    }
    lim.profile = STG_PROFILE_STRICT;
    stg_report *strict1 = run(data, size, &lim, true);
    stg_report *strict2 = run(data, size, &lim, true);
    stg_report *staged = run_staged(data, size, &lim);
    same_findings(strict1, strict2);
    same_findings(strict1, staged);
    lim.profile = STG_PROFILE_COMPAT;
    stg_report *compat = run(data, size, &lim, true);
    if (strict1 != NULL && compat != NULL &&
        stg_report_verdict(compat) > stg_report_verdict(strict1)) {
        abort(); /* compat rejected what strict accepted */
    }
    lim.profile = STG_PROFILE_STRICT;
    stg_report *pub = NULL;
    if (stg_validate_buffer(data, size, &lim, &pub) == STG_OK && strict1 != NULL &&
        stg_report_verdict(pub) < stg_report_verdict(strict1)) {
        abort();
    }
    stg_report_free(pub);
    stg_report_free(strict1);
    stg_report_free(strict2);
    stg_report_free(staged);
    stg_report_free(compat);
    return 0;
}
