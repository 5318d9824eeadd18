/* Target: stg_xml_next / stg_xml_attr / stg_xml_decode (parser/xml.c) and stg_openvino_check,
 * stg_openvino_sniff (validator/openvino.c). Seeds: corpus/openvino_xml/. Dict:
 * fuzz/openvino_xml.dict.
 * Properties checked (abort on failure):
 *   - the same bytes give the same events twice, and the walk ends (DONE or ERROR) within one
 *     event per input byte plus one;
 *   - every span (names, attributes) lies inside the buffer; an END closes the element the
 *     last open START opened (same depth, same name bytes); depths never pass the ceiling;
 *     an error's offset lies inside the buffer (or at its end);
 *   - every attribute of every start tag is found by name and decodes into no more bytes
 *     than its raw text;
 *   - the IR check runs, a complete walk means the parser reached DONE, every kept constant's
 *     offset + size does not wrap, and a report with an error is never ok. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/mem.h"
#include "parser/xml.h"
#include "validator/openvino.h"
#include "validator/report.h"

static void inside(size_t size, stg_xml_span sp)
{
    if (sp.off > size || sp.len > size - sp.off) {
        abort();
    }
}

/* Every attribute of a checked start tag: found by its name (the first of that name), and
 * decodable within its raw length. */
static void attrs_props(const uint8_t *data, size_t size, stg_xml_span attrs)
{
    uint8_t *out = stg_mem_alloc(attrs.len + 1);
    if (out == NULL) {
        return;
    }
    size_t i = attrs.off, end = attrs.off + attrs.len;
    while (i < end) {
        while (i < end &&
               (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r')) {
            i++;
        }
        if (i == end) {
            break;
        }
        size_t name_start = i;
        while (i < end && data[i] != '=' && data[i] != ' ' && data[i] != '\t' && data[i] != '\n' &&
               data[i] != '\r') {
            i++;
        }
        char name[64];
        size_t n = i - name_start;
        if (n == 0 || n >= sizeof name) {
            break; /* long names are looked up by the walk, not here */
        }
        memcpy(name, data + name_start, n);
        name[n] = '\0';
        stg_xml_span v;
        size_t at;
        if (!stg_xml_attr(data, attrs, name, &v, &at) || at > name_start) {
            abort();
        }
        inside(size, v);
        if (stg_xml_decode(data, v, out, v.len) == SIZE_MAX) {
            abort();
        }
        while (i < end && data[i] != '"' && data[i] != '\'') {
            i++;
        }
        if (i == end) {
            abort(); /* a checked attribute has a quoted value */
        }
        const uint8_t *close = memchr(data + i + 1, data[i], end - i - 1);
        if (close == NULL) {
            abort();
        }
        i = (size_t)(close - data) + 1;
    }
    stg_mem_free(out);
}

/* The walk's events; returns a digest of them (for the second run). */
static uint64_t walk_props(const uint8_t *data, size_t size)
{
    stg_xml *x = stg_mem_alloc(sizeof *x);
    if (x == NULL) {
        return 0;
    }
    stg_xml_init(x, data, size);
    stg_xml_span open[STG_XML_DEPTH_CEILING];
    uint32_t depth = 0;
    uint64_t digest = 1469598103934665603ull;
    stg_xml_event ev;
    for (size_t steps = 0;; steps++) {
        if (steps > size + 1) {
            abort(); /* every event consumes input */
        }
        stg_xml_kind k = stg_xml_next(x, &ev);
        digest = (digest ^ ((uint64_t)k << 40 ^ ev.offset)) * 1099511628211ull;
        if (k == STG_XML_DONE || k == STG_XML_ERROR) {
            if (ev.offset > size || (k == STG_XML_DONE && depth != 0)) {
                abort();
            }
            break;
        }
        inside(size, ev.name);
        if (k == STG_XML_START) {
            inside(size, ev.attrs);
            if (depth == STG_XML_DEPTH_CEILING || ev.depth != depth + 1) {
                abort();
            }
            open[depth++] = ev.name;
            attrs_props(data, size, ev.attrs);
        } else {
            if (depth == 0 || ev.depth != depth || open[depth - 1].len != ev.name.len ||
                memcmp(data + open[depth - 1].off, data + ev.name.off, ev.name.len) != 0) {
                abort();
            }
            depth--;
        }
    }
    stg_mem_free(x);
    return digest;
}

static void ir_props(const uint8_t *data, size_t size)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    if (r == NULL) {
        return;
    }
    stg_openvino_ir ir;
    stg_openvino_ir_init(&ir);
    stg_status st = stg_openvino_check(data, size, r, &ir);
    if (st != STG_OK && st != STG_E_NOMEM) {
        abort();
    }
    stg_report_finish(r);
    for (size_t i = 0; i < ir.nconsts; i++) {
        uint64_t end;
        if (__builtin_add_overflow(ir.consts[i].data_offset, ir.consts[i].data_size, &end) ||
            ir.consts[i].offset >= size) {
            abort();
        }
    }
    bool error = false;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        error = error || stg_report_at(r, i)->severity >= STG_SEV_ERROR;
    }
    if (error && stg_report_verdict(r) == STG_VERDICT_OK) {
        abort();
    }
    if (ir.complete && stg_report_has(r, STG_XML_MALFORMED)) {
        abort();
    }
    (void)stg_openvino_sniff(data, size);
    stg_openvino_ir_release(&ir);
    stg_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (walk_props(data, size) != walk_props(data, size)) {
        abort();
    }
    ir_props(data, size);
    return 0;
}
