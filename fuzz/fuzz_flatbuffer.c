/* Target: the FlatBuffers walker (parser/flatbuffer.c) through the TFLite and ExecuTorch rules
 * (validator/flatbuf_models.c), and the data-file framing (parser/dataformats.c: variables.index
 * tables, Parquet, Arrow, whose footers and messages are flatbuffers too). Seeds:
 * corpus/flatbuffer/ (files python3-flatbuffers' Builder and LevelDB write, tests/flatbuf/gen_*.py).
 * Dict: fuzz/flatbuffer.dict.
 * Properties checked (abort on failure):
 *   - the same bytes give the same findings twice (count and first code/offset);
 *   - every finding's offset lies inside the buffer (or at its end);
 *   - a walk that did not complete left a failing finding, and a report with an error finding
 *     is never ok (fails closed);
 *   - every string the walker hands back lies inside the buffer, NUL after it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/dataformats.h"
#include "parser/flatbuffer.h"
#include "validator/dataformats.h"
#include "validator/flatbuf_models.h"
#include "validator/report.h"

typedef void (*check_fn)(const uint8_t *, size_t, stg_report *, stg_fb_model_info *);

static void run_tflite(const uint8_t *d, size_t n, stg_report *r, stg_fb_model_info *i)
{
    if (stg_tflite_check(d, n, r, i) != STG_OK) {
        abort();
    }
}

static void run_executorch(const uint8_t *d, size_t n, stg_report *r, stg_fb_model_info *i)
{
    if (stg_executorch_check(d, n, r, i) != STG_OK) {
        abort();
    }
}

static void run_data(const uint8_t *d, size_t n, stg_report *r, stg_fb_model_info *i)
{
    i->complete = true;
    stg_check_tf_index(d, n, r);
    stg_check_parquet(d, n, r);
    stg_check_arrow(d, n, r);
}

static void check_once(const uint8_t *data, size_t size, check_fn fn, bool walk)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *a = stg_report_new(&lim), *b = stg_report_new(&lim);
    if (a == NULL || b == NULL) {
        abort();
    }
    stg_fb_model_info ia, ib;
    fn(data, size, a, &ia);
    fn(data, size, b, &ib);
    stg_report_finish(a);
    stg_report_finish(b);
    size_t n = stg_report_count(a);
    if (n != stg_report_count(b) || ia.complete != ib.complete ||
        (n > 0 && (stg_report_at(a, 0)->code != stg_report_at(b, 0)->code ||
                   stg_report_at(a, 0)->offset != stg_report_at(b, 0)->offset))) {
        abort();
    }
    bool error = false;
    for (size_t i = 0; i < n; i++) {
        const stg_finding *f = stg_report_at(a, i);
        if (f->offset != STG_NO_OFFSET && f->offset > size) {
            abort();
        }
        error = error || f->severity >= STG_SEV_ERROR;
    }
    if ((walk && !ia.complete && !error) || (error && stg_report_verdict(a) == STG_VERDICT_OK)) {
        abort();
    }
    stg_report_free(a);
    stg_report_free(b);
}

/* The walker's strings lie inside the buffer: every string field of the root's first 8. */
static void strings_inside(const uint8_t *data, size_t size)
{
    stg_fb fb;
    stg_fb_table t;
    stg_fb_init(&fb, data, size, stg_fb_visit_budget(size));
    if (stg_fb_root(&fb, &t) != STG_PARSE_OK) {
        return;
    }
    for (unsigned id = 0; id < 8 && fb.status == STG_PARSE_OK; id++) {
        stg_fb_str s;
        bool present = false;
        if (stg_fb_string(&fb, &t, id, &s, &present) == STG_PARSE_OK && present &&
            (s.bytes < data || (size_t)(s.bytes - data) + s.len >= size || s.bytes[s.len] != 0)) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_once(data, size, run_tflite, true);
    check_once(data, size, run_executorch, true);
    check_once(data, size, run_data, false);
    strings_inside(data, size);
    return 0;
}
