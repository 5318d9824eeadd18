/* Target: stg_onnx_check (parser/protobuf.c through validator/onnx.c), the content sniff
 * (stg_onnx_sniff) and the inspect view behind the ONNX door (stg_onnx_info_read,
 * validator/onnx_info.c). Seeds: corpus/onnx/. Dict: fuzz/onnx.dict.
 * Properties checked (abort on failure):
 *   - the same bytes give the same findings twice, in both profiles;
 *   - the wire walker's fields lie inside their message, and it reads each field the same way
 *     when walked on its own;
 *   - every external-data entry and opset import points inside the buffer, and an entry marked
 *     safe passes stg_onnx_location_safe;
 *   - wire data the walk could not read leaves an error finding (never an ok verdict);
 *   - bytes the sniff accepts walk as well-formed wire data to their end;
 *   - the inspect view of a model the rules could read: every string, name and dimension inside
 *     the buffer or the view's tables, the op histogram's counts summing to the node count and
 *     most frequent first, totals the (saturating) sums of the initializers'; under a small
 *     max_memory it fails with STG_E_LIMIT_MEMORY or succeeds the same way. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/protobuf.h"
#include "parser/util.h"
#include "validator/onnx.h"
#include "validator/onnx_info.h"
#include "validator/report.h"

static void inside(const uint8_t *data, size_t size, const uint8_t *p, size_t n)
{
    if (n > 0 && (p < data || (size_t)(p - data) > size || n > size - (size_t)(p - data))) {
        abort();
    }
}

/* true when the top level walks to its end. */
static bool walk_props(const uint8_t *data, size_t size)
{
    stg_cursor c = stg_cur_make(data, size);
    stg_pb_field f;
    for (;;) {
        size_t before = c.pos;
        stg_parse_detail d = {.what = NULL};
        stg_parse_status s = stg_pb_next(&c, &f, &d);
        uint64_t at = d.offset;
        if (s == STG_PARSE_END) {
            return true;
        }
        if (s != STG_PARSE_OK) {
            /* the cursor stays before the bad field (a skipped group may precede it) */
            if (c.pos < before || c.pos > at || at > size) {
                abort();
            }
            return false;
        }
        if (c.pos <= before || f.offset < before || f.number == 0 ||
            (f.wire == STG_PB_LEN && (f.sub.pos < f.offset || f.sub.end != c.pos))) {
            abort();
        }
    }
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t s = 0;
    return stg_add_u64(a, b, &s) ? UINT64_MAX : s;
}

static void info_props(const uint8_t *data, size_t size)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_onnx_info in;
    uint64_t at = 0;
    stg_status st = stg_onnx_info_read(data, size, &lim, 0, &in, &at);
    if (st != STG_OK) {
        if ((st != STG_E_INVALID && st != STG_E_LIMIT) || at > size) {
            abort();
        }
        stg_onnx_info_release(&in);
        return;
    }
    inside(data, size, in.producer, in.producer_len);
    inside(data, size, in.producer_version, in.producer_version_len);
    inside(data, size, in.domain, in.domain_len);
    inside(data, size, in.graph_name, in.graph_name_len);
    uint64_t nodes = 0, params = 0, bytes = 0, ext = 0;
    for (size_t i = 0; i < in.nops; i++) {
        const stg_onnx_op_rec *o = &in.ops[i];
        inside(data, size, o->op, o->op_len);
        inside(data, size, o->domain, o->domain_len);
        if (o->count == 0 || (i > 0 && in.ops[i - 1].count < o->count)) {
            abort();
        }
        nodes += o->count;
    }
    for (size_t i = 0; i < in.ninits; i++) {
        const stg_onnx_init_rec *t = &in.inits[i];
        inside(data, size, t->name, t->name_len);
        inside(data, size, t->location, t->location_len);
        if (t->dims_at > in.ntdims || t->rank > in.ntdims - t->dims_at ||
            (!t->external && t->location != NULL)) {
            abort();
        }
        params = sat_add(params, t->elements);
        bytes = sat_add(bytes, t->bytes);
        ext += t->external;
    }
    const stg_onnx_value_rec *sets[2] = {in.inputs, in.outputs};
    size_t counts[2] = {in.ninputs, in.noutputs};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < counts[k]; i++) {
            const stg_onnx_value_rec *v = &sets[k][i];
            inside(data, size, v->name, v->name_len);
            if (v->dims_at > in.nvdims || v->rank > in.nvdims - v->dims_at) {
                abort();
            }
            for (uint32_t d = 0; d < v->rank; d++) {
                const stg_onnx_dim *dm = &in.vdims[v->dims_at + d];
                inside(data, size, (const uint8_t *)dm->param, dm->param_len);
            }
        }
    }
    for (size_t i = 0; i < in.nfuncs; i++) {
        inside(data, size, in.funcs[i].op, in.funcs[i].op_len);
        inside(data, size, in.funcs[i].domain, in.funcs[i].domain_len);
    }
    for (size_t i = 0; i < in.nmeta; i++) {
        if (in.meta[i].key_len > 0) {
            inside(data, size, in.meta[i].key, in.meta[i].key_len);
        }
        if (in.meta[i].value_len > 0) {
            inside(data, size, in.meta[i].value, in.meta[i].value_len);
        }
    }
    if (nodes != in.nodes || params != in.parameters || bytes != in.tensor_bytes ||
        ext != in.external) {
        abort();
    }
    uint64_t nodes_all = in.nodes;
    stg_onnx_info_release(&in);
    /* the same walk under a budget too small for its tables fails closed, or matches */
    lim.max_memory = 4096 + size / 2;
    st = stg_onnx_info_read(data, size, &lim, 0, &in, &at);
    if ((st != STG_OK && st != STG_E_LIMIT_MEMORY) || (st == STG_OK && in.nodes != nodes_all)) {
        abort();
    }
    stg_onnx_info_release(&in);
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
    bool top_ok = walk_props(data, size);
    if (stg_onnx_sniff(data, size) && !top_ok) {
        abort();
    }
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
        if (p == 0 && m.wire_ok) {
            info_props(data, size);
        }
        stg_onnx_model_release(&m);
        stg_report_free(a);
        stg_report_free(b);
    }
    return 0;
}
