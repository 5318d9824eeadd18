/* Target: stg_onnx_check (parser/protobuf.c through validator/onnx.c). Seeds: corpus/onnx/.
 * Dict: fuzz/onnx.dict.
 * Properties checked (abort on failure):
 *   - the same bytes give the same findings twice, in both profiles;
 *   - the wire walker's fields lie inside their message, and it reads each field the same way
 *     when walked on its own;
 *   - every external-data entry and opset import points inside the buffer, and an entry marked
 *     safe passes stg_onnx_location_safe;
 *   - wire data the walk could not read leaves an error finding (never an ok verdict). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/protobuf.h"
#include "validator/onnx.h"
#include "validator/report.h"

static void inside(const uint8_t *data, size_t size, const uint8_t *p, size_t n)
{
    if (n > 0 && (p < data || (size_t)(p - data) > size || n > size - (size_t)(p - data))) {
        abort();
    }
}

static void walk_props(const uint8_t *data, size_t size)
{
    stg_cursor c = stg_cur_make(data, size);
    stg_pb_field f;
    uint64_t at = 0;
    for (;;) {
        size_t before = c.pos;
        stg_pb_status s = stg_pb_next(&c, &f, &at);
        if (s == STG_PB_END) {
            return;
        }
        if (s != STG_PB_OK) {
            /* the cursor stays before the bad field (a skipped group may precede it) */
            if (c.pos < before || c.pos > at || at > size) {
                abort();
            }
            return;
        }
        if (c.pos <= before || f.offset < before || f.number == 0 ||
            (f.wire == STG_PB_LEN && (f.sub.pos < f.offset || f.sub.end != c.pos))) {
            abort();
        }
    }
}

static stg_report *check(const uint8_t *data, size_t size, const stg_limits *lim, stg_onnx_model *m)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        abort();
    }
    if (stg_onnx_check(data, size, lim, 0, r, m) != STG_OK) {
        abort();
    }
    stg_report_finish(r);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    walk_props(data, size);
    stg_limits lim;
    stg_limits_default(&lim);
    for (int p = 0; p < 2; p++) {
        lim.profile = (stg_profile)p;
        stg_onnx_model m;
        stg_report *a = check(data, size, &lim, &m);
        stg_report *b = check(data, size, &lim, NULL);
        if (stg_report_count(a) != stg_report_count(b) ||
            stg_report_verdict(a) != stg_report_verdict(b)) {
            abort();
        }
        for (size_t i = 0; i < stg_report_count(a); i++) {
            const stg_finding *fa = stg_report_at(a, i), *fb = stg_report_at(b, i);
            if (fa->code != fb->code || fa->offset != fb->offset || fa->offset > size) {
                if (fa->has_offset || fb->has_offset) {
                    abort();
                }
            }
        }
        for (size_t i = 0; i < m.next; i++) {
            const stg_onnx_external *e = &m.ext[i];
            inside(data, size, e->location, e->location_len);
            inside(data, size, e->tensor, e->tensor_len);
            if (e->safe && !stg_onnx_location_safe(e->location, e->location_len)) {
                abort();
            }
        }
        for (size_t i = 0; i < m.nopsets; i++) {
            inside(data, size, m.opsets[i].domain, m.opsets[i].domain_len);
        }
        if (!m.wire_ok && stg_report_verdict(a) == STG_VERDICT_OK) {
            abort();
        }
        stg_onnx_model_release(&m);
        stg_report_free(a);
        stg_report_free(b);
    }
    return 0;
}
