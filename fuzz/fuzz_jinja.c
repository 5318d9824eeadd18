/* Target: the chat-template reader (parser/jinja.c) and rules (validator/template.c), on the
 * bytes as a template and, when they are a JSON document, as a tokenizer_config.json.
 * Seeds: corpus/jinja/. Dict: fuzz/jinja.dict.
 * Properties checked (abort on failure):
 *   - the same bytes lex the same way twice (tokens, error code and offset);
 *   - tokens lie inside the buffer, in order and without overlap, and a whole lex ends with
 *     one EOF token at the end; an error's offset lies inside the buffer (or at its end);
 *   - a string value never writes past its buffer, and is decoded the same way twice;
 *   - the rules give the same findings twice, every offset inside the buffer, and a report
 *     with an unsafe, malformed or limit finding is never ok. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/jinja.h"
#include "validator/report.h"
#include "validator/template.h"

static void lex_props(const uint8_t *data, size_t size)
{
    stg_jinja_lex a, b;
    bool oka = stg_jinja_lex_run(&a, data, size);
    bool okb = stg_jinja_lex_run(&b, data, size);
    if (oka != okb || a.count != b.count || a.error != b.error ||
        a.error_offset != b.error_offset) {
        abort();
    }
    for (size_t i = 0; i < a.count; i++) {
        const stg_jinja_tok *x = &a.toks[i], *y = &b.toks[i];
        if (x->offset != y->offset || x->len != y->len || x->type != y->type || x->op != y->op) {
            abort();
        }
    }
    if (!oka && a.error_offset > size) {
        abort();
    }
    size_t end = 0;
    for (size_t i = 0; i < a.count; i++) {
        const stg_jinja_tok *t = &a.toks[i];
        if (t->offset < end || t->offset > size || t->len > size - t->offset) {
            abort();
        }
        end = (size_t)t->offset + t->len;
        if (t->type == STG_JT_STRING) {
            uint8_t v1[64], v2[64];
            bool e1, e2;
            size_t n1 = stg_jinja_string_value(data, t, v1, sizeof v1, &e1);
            size_t n2 = stg_jinja_string_value(data, t, v2, sizeof v2, &e2);
            if (n1 > sizeof v1 || n1 != n2 || e1 != e2 || memcmp(v1, v2, n1) != 0) {
                abort();
            }
        }
    }
    if (oka && (a.count == 0 || a.toks[a.count - 1].type != STG_JT_EOF ||
                a.toks[a.count - 1].offset != size)) {
        abort();
    }
    stg_jinja_lex_release(&a);
    stg_jinja_lex_release(&b);
}

static stg_report *check_once(const uint8_t *data, size_t size, const stg_limits *lim, bool json)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        abort();
    }
    if (json) {
        (void)stg_template_check_json(data, size, lim, 0, r);
    } else {
        stg_template_src src = {data, size, 0, NULL, NULL, "fuzzed", NULL, 0};
        stg_template_check(&src, 0, r);
    }
    stg_report_finish(r);
    return r;
}

static void rule_props(const uint8_t *data, size_t size, bool json)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *a = check_once(data, size, &lim, json);
    stg_report *b = check_once(data, size, &lim, json);
    size_t n = stg_report_count(a);
    if (n != stg_report_count(b) || stg_report_verdict(a) != stg_report_verdict(b)) {
        abort();
    }
    bool failing = false;
    for (size_t i = 0; i < n; i++) {
        const stg_finding *fa = stg_report_at(a, i), *fb = stg_report_at(b, i);
        if (fa->code != fb->code || fa->offset != fb->offset ||
            (fa->has_offset && fa->offset > size)) {
            abort();
        }
        failing = failing || fa->code == STG_TEMPLATE_UNSAFE ||
                  fa->code == STG_TEMPLATE_MALFORMED || fa->code == STG_LIMIT_EXCEEDED;
    }
    if (failing && stg_report_verdict(a) == STG_VERDICT_OK) {
        abort();
    }
    stg_report_free(a);
    stg_report_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lex_props(data, size);
    rule_props(data, size, false);
    if (size > 0 && data[0] == '{') {
        rule_props(data, size, true);
    }
    return 0;
}
