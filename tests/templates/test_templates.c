/* Chat templates (parser/jinja.c, validator/template.c; docs/templates.md): the lexer's tokens,
 * string values and errors; for every chat_template_* code an input that triggers it (severity
 * in both profiles, byte offset) and a near miss; the three containers (a .jinja file,
 * tokenizer_config.json as a string and a list, GGUF tokenizer.chat_template[.name]) with
 * offsets in the file; the limits; and the benign templates of tests/templates/data/benign
 * (real models' templates: every one ok). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codetest.h"
#include "parser/jinja.h"
#include "stguard/stguard.h"
#include "testutil.h"

#define C STG_SEV_CRITICAL
#define E STG_SEV_ERROR
#define W STG_SEV_WARNING
#define I STG_SEV_INFO
#define NONE TU_NONE

static const char *run_name = "chat_template.jinja";

static stg_report *scan_named(const void *buf, size_t len, const char *name, stg_profile p)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.limits.profile = p;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(buf, len, name, &opt, &r), STG_OK);
    return r;
}

static stg_report *run(const tu_buf *b, stg_profile p)
{
    return scan_named(b->p, b->n, run_name, p);
}

static tu_buf text(const char *s)
{
    tu_buf b = {NULL, 0, 0};
    tu_buf_put(&b, s, strlen(s));
    return b;
}

static void expect_text(const char *s, stg_code code, stg_severity strict, stg_severity compat,
                        uint64_t off)
{
    tu_buf b = text(s);
    tu_expect(run, &b, code, strict, compat, off);
    free(b.p);
}

static uint64_t at(const char *s, const char *needle)
{
    const char *p = strstr(s, needle);
    ck_assert_ptr_nonnull(p);
    return (uint64_t)(p - s);
}

/* ------------------------------------------------------------------------------ lexer */

START_TEST(test_lexer_tokens)
{
    const char *s = "a{# c #}{{- x.y['k'] ~ 1.5 // 2 -}}{% raw %}{{ z }}{% endraw %}"
                    "{{ {'a': 1}}}";
    stg_jinja_lex lx;
    ck_assert(stg_jinja_lex_run(&lx, (const uint8_t *)s, strlen(s)));
    static const uint8_t want[] = {
        STG_JT_DATA,    STG_JT_VAR_BEGIN, STG_JT_NAME,    STG_JT_OP,      STG_JT_NAME,
        STG_JT_OP,      STG_JT_STRING,    STG_JT_OP,      STG_JT_OP,      STG_JT_FLOAT,
        STG_JT_OP,      STG_JT_INTEGER,   STG_JT_VAR_END, STG_JT_DATA,    STG_JT_VAR_BEGIN,
        STG_JT_OP,      STG_JT_STRING,    STG_JT_OP,      STG_JT_INTEGER, STG_JT_OP,
        STG_JT_VAR_END, STG_JT_EOF};
    ck_assert_uint_eq(lx.count, sizeof want);
    for (size_t i = 0; i < sizeof want; i++) {
        ck_assert_msg(lx.toks[i].type == want[i], "token %zu is %u", i, lx.toks[i].type);
    }
    ck_assert_uint_eq(lx.toks[10].op, STG_JOP_FLOORDIV);
    /* the raw block's content is data: its {{ is no tag */
    ck_assert_uint_eq(lx.toks[13].len, strlen("{{ z }}"));
    /* '}}}': the dict's '}' then the tag's end */
    ck_assert_uint_eq(lx.toks[19].op, '}');
    stg_jinja_lex_release(&lx);
}
END_TEST

START_TEST(test_lexer_errors)
{
    static const struct {
        const char *s;
        stg_jinja_error e;
        size_t off;
    } cases[] = {
        {"ab{{ 'x }}", STG_JINJA_E_SYNTAX, 5}, /* unclosed string */
        {"{# x", STG_JINJA_E_SYNTAX, 0},       /* unclosed comment */
        {"{{ x", STG_JINJA_E_SYNTAX, 0},       /* unclosed tag */
        {"{{ x ! y }}", STG_JINJA_E_SYNTAX, 5}, {"{{ (x] }}", STG_JINJA_E_BRACKET, 5},
        {"{{ x) }}", STG_JINJA_E_BRACKET, 4},   {"{% raw %}x", STG_JINJA_E_SYNTAX, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_jinja_lex lx;
        ck_assert_msg(!stg_jinja_lex_run(&lx, (const uint8_t *)cases[i].s, strlen(cases[i].s)),
                      "case %zu", i);
        ck_assert_int_eq(lx.error, cases[i].e);
        ck_assert_uint_eq(lx.error_offset, cases[i].off);
        ck_assert_ptr_nonnull(lx.why);
        stg_jinja_lex_release(&lx);
    }
    /* near misses: the same shapes, closed */
    const char *ok[] = {"ab{{ 'x' }}",  "{# x #}",   "{{ x }}",
                        "{{ x != y }}", "{{ (x) }}", "{% raw %}x{% endraw %}",
                        "{{ '}}' }}"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        stg_jinja_lex lx;
        ck_assert_msg(stg_jinja_lex_run(&lx, (const uint8_t *)ok[i], strlen(ok[i])), "%s", ok[i]);
        stg_jinja_lex_release(&lx);
    }
}
END_TEST

static void expect_value(const char *lit, const char *want, bool want_exact)
{
    stg_jinja_tok t = {0, (uint32_t)strlen(lit), STG_JT_STRING, 0};
    uint8_t out[64];
    bool exact = true;
    size_t n = stg_jinja_string_value((const uint8_t *)lit, &t, out, sizeof out, &exact);
    ck_assert_msg(exact == want_exact, "%s: exact %d", lit, exact);
    if (want_exact) {
        ck_assert_msg(n == strlen(want) && memcmp(out, want, n) == 0, "%s: %.*s", lit, (int)n,
                      (const char *)out);
    }
}

START_TEST(test_string_values)
{
    expect_value("'\\x5f\\x5fclass\\x5f\\x5f'", "__class__", true);
    expect_value("\"\\u005f\\U0000005fx\"", "__x", true);
    expect_value("'\\137\\137'", "__", true);
    expect_value("'a\\'b\\\\c\\n'", "a'b\\c\n", true);
    expect_value("'\\q'", "\\q", true); /* an unknown escape keeps its backslash */
    expect_value("'\\u00e9'", "\xc3\xa9", true);
    expect_value("'a\r\nb\rc'", "a\nb\nc", true);
    expect_value("'\\N{LOW LINE}'", "", false);
    expect_value("'\\x5'", "", false); /* Python refuses it */
}
END_TEST

/* ----------------------------------------------------------------------------- unsafe */

START_TEST(test_unsafe_triggers)
{
    static const struct {
        const char *s, *where;
    } cases[] = {
        {"{{ self.__init__ }}", "self"},
        {"{{ x.__init__ }}", "__init__"},
        {"{{ x._TemplateReference__context }}", "_Template"},
        {"{{ (()|select).gi_frame.f_globals }}", "gi_frame"},
        {"{{ g['gi' ~ '_frame'] }}", "'gi'"},
        {"{{ t.tb_frame }}", "tb_frame"},
        {"{{ c.co_consts }}", "co_consts"},
        {"{{ dict.mro() }}", "mro"},
        {"{{ x[__builtins__] }}", "__builtins__"},
        {"{{ lipsum }}", "lipsum"},
        {"{{ cycler.next() }}", "cycler"},
        {"{{ joiner() }}", "joiner"},
        {"{{ config.items() }}", "config"},
        {"{{ request }}", "request"},
        {"{{ ''['__cla' 'ss__'] }}", "'__cla'"},
        {"{{ ''['\\x5f\\x5fclass\\x5f\\x5f'] }}", "'\\x5f"},
        {"{{ x|attr('__class__') }}", "'__class__'"},
        {"{% set u = '_' %}{{ x[u ~ u ~ 'class' ~ u ~ u] }}", "u ~ u ~"},
        {"{{ x[('_', '_')|join ~ 'class'] }}", "('_'"},
        {"{{ x['%c%c'|format(95, 95)] }}", "'%c"},
        {"{{ x['__ssalc__'|reverse] }}", "'__ssalc"},
        {"{{ x[(()|select|string)[24]] }}", "(()"},
        {"{% set s %}__class__{% endset %}{{ x[s] }}", "s] }}"},
        {"{{ x['_' * 2] }}", "'_' *"},
        {"{{ x['%s' % y] }}", "'%s'"},
        {"{{ '{0.__class__}'.format(x) }}", "format"},
        {"{% set ns = namespace(k='__class__') %}{{ x[ns.k] }}", "ns.k]"},
        {"{% macro f(k) %}{{ x[k] }}{% endmacro %}{{ f('__class__') }}", "k] }}"},
        {"{% macro f() %}{{ x[varargs[0]] }}{% endmacro %}{{ f('__class__') }}", "varargs[0]"},
        {"{% macro f() %}{{ x[kwargs.k] }}{% endmacro %}{{ f(k='__class__') }}", "kwargs.k"},
        {"{{ x[d.get('a', '__class__')] }}", "d.get"},
        {"{{ messages|map(attribute='a.__class__')|list }}", "attribute"},
        {"{{ messages|selectattr('__class__')|list }}", "'__class__'"},
        {"{{ messages|map('attr', '__class__')|list }}", "'__class__'"},
        {"{{ messages|map(f|string)|list }}", "f|string"},
        {"{% for k in ['__class__'] %}{{ x[k] }}{% endfor %}", "k] }}"},
        {"{{ x[strftime_now('__class__')] }}", "strftime_now"},
        {"{{ x[dict(a=1)|first] }}", "dict"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_text(cases[i].s, STG_TEMPLATE_UNSAFE, C, C, at(cases[i].s, cases[i].where));
    }
}
END_TEST

START_TEST(test_unsafe_near_misses)
{
    /* each a step away from a case above: the caller's data, a literal without '_', a name
     * printed rather than looked up, a single-underscore variable */
    static const char *const cases[] = {
        "{{ x['role'] }}",
        "{{ x.frame }}{{ x.globals }}{{ x.gi }}{{ x.code }}",
        "{{ x|attr('content') }}",
        "{{ x[y] }}",
        "{{ x[loop.index0 - 1] }}",
        "{{ messages[messages|length - 1] }}",
        "{% set u = '__' %}{{ u }}",
        "{{ 'lipsum' }}",
        "{% set _tmp = 1 %}{{ _tmp }}",
        "{{ x['a' 'b'] }}",
        "{{ x['a' ~ 'b'] }}",
        "{% set u = 'a' %}{{ x[u] }}",
        "{{ '{0}'.format(x) }}",
        "{% set ns = namespace(k='role') %}{{ x[ns.k] }}",
        "{% macro f(k) %}{{ x[k] }}{% endmacro %}{{ f('role') }}",
        "{% macro f() %}{{ x[varargs[0]] }}{% endmacro %}{{ f('role') }}",
        "{{ messages|map(attribute='content')|list }}",
        "{{ messages|selectattr('role', 'equalto', 'system')|list }}",
        "{% for k in ['role', 'content'] %}{{ x[k] }}{% endfor %}",
        "{% set d = {'a': 'b'} %}{% for k, v in d.items() %}{{ d[k] }}{% endfor %}",
        "{% for m in messages %}{% set ns.s = ns.s ~ m.content ~ '\\n' %}{% endfor %}{{ ns.s }}",
        "{{ x[message.role] }}",
        "{{ (x|string)[0] }}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_buf b = text(cases[i]);
        tu_expect(run, &b, STG_TEMPLATE_UNSAFE, NONE, NONE, STG_NO_OFFSET);
        tu_expect(run, &b, STG_TEMPLATE_MALFORMED, NONE, NONE, STG_NO_OFFSET);
        free(b.p);
    }
}
END_TEST

/* -------------------------------------------------------------------------- malformed */

START_TEST(test_malformed)
{
    static const struct {
        const char *s, *where;
    } cases[] = {
        {"{% if %}x{% endif %}", "%}x"},
        {"{% for x in y %}x", ""},
        {"x{% endif %}", "endif"},
        {"{% if a %}{% endfor %}", "endfor"},
        {"{% else %}", "else"},
        {"{{ x[ }}", "}}"},
        {"{{ x. }}", "}}"},
        {"{% do x %}", "do"},
        {"{{ x is }}", "}}"},
        {"{% for x y %}{% endfor %}", "y %}"},
        {"{{ 'abc }}", "'abc"},
        {"{{ x ! }}", "!"},
        {"{% macro f(1) %}{% endmacro %}", "1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t off = cases[i].where[0] != '\0' ? at(cases[i].s, cases[i].where)
                                                 : (uint64_t)strlen(cases[i].s);
        expect_text(cases[i].s, STG_TEMPLATE_MALFORMED, E, E, off);
    }
    /* near misses: the same tags, well formed (with transformers' extensions) */
    static const char *const ok[] = {
        "{% if a %}x{% endif %}",
        "{% for x in y if x %}x{% else %}none{% endfor %}",
        "{% if a %}{% elif b %}{% else %}{% endif %}",
        "{% for x in y recursive %}{{ loop(x.children) }}{% endfor %}",
        "{% for x in y %}{% if x %}{% break %}{% endif %}{% continue %}{% endfor %}",
        "{% generation %}x{% endgeneration %}",
        "{% macro f(a, b=1) %}{{ a }}{% endmacro %}{% call f(1) %}x{% endcall %}",
        "{% filter upper %}x{% endfilter %}{% with a = 1, b = 2 %}{{ a }}{% endwith %}",
        "{% set x %}y{% endset %}{% set a, b = 1, 2 %}{% set ns.a = 1 %}",
        "{{ x is defined and y is not none and z is divisibleby 3 }}",
        "{{ a if b else c }}{{ -1 }}{{ [1, 2][0] }}{{ {'a': 1}['a'] }}{{ (1, 2) }}{{ () }}",
        "{{ x[1:] }}{{ x[::-1] }}{{ x[:2] }}{{ 'a' ~ 1 }}{{ 2 ** 3 // 1 % 2 }}",
        "{{ 0x5f + 0o17 + 0b101 + 1_000 + 1.5e3 }}",
        "{% block b %}x{% endblock b %}{% autoescape true %}x{% endautoescape %}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tu_buf b = text(ok[i]);
        tu_expect(run, &b, STG_TEMPLATE_MALFORMED, NONE, NONE, STG_NO_OFFSET);
        tu_expect(run, &b, STG_TEMPLATE_UNSAFE, NONE, NONE, STG_NO_OFFSET);
        free(b.p);
    }
}
END_TEST

START_TEST(test_loader)
{
    const char *s = "x{% include 'other.jinja' %}";
    expect_text(s, STG_TEMPLATE_LOADER, W, W, at(s, "include"));
    expect_text("{% extends 'base' %}", STG_TEMPLATE_LOADER, W, W, 3);
    expect_text("{% from 'm' import f %}", STG_TEMPLATE_LOADER, W, W, 3);
    /* near miss: a variable that is named include */
    expect_text("{{ include }}", STG_TEMPLATE_LOADER, NONE, NONE, STG_NO_OFFSET);
}
END_TEST

/* -------------------------------------------------------------------------- containers */

START_TEST(test_found)
{
    expect_text("hello", STG_TEMPLATE_FOUND, I, I, 0);
    /* a .jinja file is a chat template whatever it holds; the format says so */
    stg_report *r = scan_named("hello", 5, "chat_template.jinja", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_CHAT_TEMPLATE);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    /* near miss: the same text under another name is text, no template */
    r = scan_named("hello", 5, "notes.txt", STG_PROFILE_STRICT);
    ck_assert(tu_find(r, STG_TEMPLATE_FOUND) < 0);
    stg_report_free(r);
}
END_TEST

static stg_report *run_json(const tu_buf *b, stg_profile p)
{
    return scan_named(b->p, b->n, "tokenizer_config.json", p);
}

START_TEST(test_json_string)
{
    /* escapes before the gadget: the offset is the raw file's (\n is 2 bytes, \u00e9 6) */
    const char *s = "{\"bos_token\": \"<s>\", \"chat_template\": \"\\u00e9\\n{{ x.__class__ }}\"}";
    tu_buf b = text(s);
    tu_expect(run_json, &b, STG_TEMPLATE_UNSAFE, C, C, at(s, "__class__"));
    tu_expect(run_json, &b, STG_TEMPLATE_FOUND, I, I, at(s, "\\u00e9"));
    free(b.p);
    /* an escaped quote and backslash inside the template's own string literal */
    s = "{\"chat_template\": \"{{ x['\\\\x5f\\\\x5fclass\\\\x5f\\\\x5f'] }}\"}";
    b = text(s);
    tu_expect(run_json, &b, STG_TEMPLATE_UNSAFE, C, C, at(s, "'"));
    free(b.p);
    /* near miss: the same key one level down is no template of transformers' */
    s = "{\"x\": {\"chat_template\": \"{{ x.__class__ }}\"}}";
    b = text(s);
    tu_expect(run_json, &b, STG_TEMPLATE_UNSAFE, NONE, NONE, STG_NO_OFFSET);
    tu_expect(run_json, &b, STG_TEMPLATE_FOUND, NONE, NONE, STG_NO_OFFSET);
    free(b.p);
}
END_TEST

START_TEST(test_json_list)
{
    const char *s = "{\"chat_template\": [{\"name\": \"default\", \"template\": \"{{ x }}\"}, "
                    "{\"template\": \"{{ cycler }}\", \"name\": \"tool_use\"}]}";
    tu_buf b = text(s);
    tu_expect(run_json, &b, STG_TEMPLATE_UNSAFE, C, C, at(s, "cycler"));
    tu_expect(run_json, &b, STG_TEMPLATE_FIELD_INVALID, NONE, NONE, STG_NO_OFFSET);
    stg_report *r = run_json(&b, STG_PROFILE_STRICT);
    ck_assert_uint_eq(tu_count(r, STG_TEMPLATE_FOUND), 2);
    bool named = false;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        named = named || (f->code == STG_TEMPLATE_FOUND && strstr(f->message, "(tool_use)"));
    }
    ck_assert_msg(named, "%s", tu_describe(r));
    stg_report_free(r);
    free(b.p);
}
END_TEST

START_TEST(test_field_invalid)
{
    static const struct {
        const char *s, *where;
    } bad[] = {
        {"{\"chat_template\": 5}", "5"},
        {"{\"chat_template\": {\"a\": \"b\"}}", "{\"a"},
        {"{\"chat_template\": [\"{{ x }}\"]}", "\"{{"},
        {"{\"chat_template\": [{\"name\": \"a\"}]}", "{\"name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_buf b = text(bad[i].s);
        tu_expect(run_json, &b, STG_TEMPLATE_FIELD_INVALID, E, W, at(bad[i].s, bad[i].where));
        free(b.p);
    }
    static const char *const ok[] = {"{\"chat_template\": null}", "{\"chat_template\": \"x\"}",
                                     "{\"chat_template\": []}", "{\"other\": 5}"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tu_buf b = text(ok[i]);
        tu_expect(run_json, &b, STG_TEMPLATE_FIELD_INVALID, NONE, NONE, STG_NO_OFFSET);
        free(b.p);
    }
}
END_TEST

/* A GGUF v3 file with no tensors and the given string metadata. */
static tu_buf gguf_strings(const char *const *keys, const char *const *values, size_t n)
{
    tu_buf b = {NULL, 0, 0};
    uint8_t head[24];
    memcpy(head, "GGUF", 4);
    tu_store_le(head + 4, 3, 4);
    tu_store_le(head + 8, 0, 8);
    tu_store_le(head + 16, n, 8);
    tu_buf_put(&b, head, sizeof head);
    for (size_t i = 0; i < n; i++) {
        uint8_t len[8], type[4];
        tu_store_le(len, strlen(keys[i]), 8);
        tu_buf_put(&b, len, 8);
        tu_buf_put(&b, keys[i], strlen(keys[i]));
        tu_store_le(type, 8, 4);
        tu_buf_put(&b, type, 4);
        tu_store_le(len, strlen(values[i]), 8);
        tu_buf_put(&b, len, 8);
        tu_buf_put(&b, values[i], strlen(values[i]));
    }
    return b;
}

static stg_report *run_gguf(const tu_buf *b, stg_profile p)
{
    return scan_named(b->p, b->n, "model.gguf", p);
}

START_TEST(test_gguf_templates)
{
    const char *keys[] = {"general.architecture", "tokenizer.chat_template",
                          "tokenizer.chat_template.tool_use"};
    const char *values[] = {"llama", "{{ bos_token }}", "{{ x.__globals__ }}"};
    tu_buf b = gguf_strings(keys, values, 3);
    const uint8_t *p = memmem(b.p, b.n, "__globals__", 11);
    ck_assert_ptr_nonnull(p);
    tu_expect(run_gguf, &b, STG_TEMPLATE_UNSAFE, C, C, (uint64_t)(p - b.p));
    stg_report *r = run_gguf(&b, STG_PROFILE_STRICT);
    ck_assert_uint_eq(tu_count(r, STG_TEMPLATE_FOUND), 2);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_GGUF);
    stg_report_free(r);
    free(b.p);
    /* near miss: a key that only starts like it is no template */
    const char *k2[] = {"tokenizer.chat_templates", "tokenizer.chat_template."};
    const char *v2[] = {"{{ x.__globals__ }}", "{{ x.__globals__ }}"};
    b = gguf_strings(k2, v2, 2);
    tu_expect(run_gguf, &b, STG_TEMPLATE_UNSAFE, NONE, NONE, STG_NO_OFFSET);
    tu_expect(run_gguf, &b, STG_TEMPLATE_FOUND, NONE, NONE, STG_NO_OFFSET);
    free(b.p);
}
END_TEST

/* ------------------------------------------------------------------------------ limits */

static void expect_limit(const char *prefix, const char *unit, size_t times, const char *suffix,
                         const char *suffix_unit)
{
    tu_buf b = text(prefix);
    for (size_t i = 0; i < times; i++) {
        tu_buf_put(&b, unit, strlen(unit));
    }
    for (size_t i = 0; suffix_unit != NULL && i < times; i++) {
        tu_buf_put(&b, suffix_unit, strlen(suffix_unit));
    }
    tu_buf_put(&b, suffix, strlen(suffix));
    stg_report *r = run(&b, STG_PROFILE_STRICT);
    ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) >= 0, "%s", tu_describe(r));
    ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    free(b.p);
}

START_TEST(test_limits)
{
    expect_limit("{{ ", "(", 300, " }}", ")");                         /* bracket depth */
    expect_limit("{{ ", "not ", 200, "x }}", NULL);                    /* expression nesting */
    expect_limit("", "{% if a %}", 200, "", "{% endif %}");            /* block nesting */
    expect_limit("", "{{a}}", STG_JINJA_MAX_TOKENS / 3 + 1, "", NULL); /* tokens */
    /* near misses: just inside each limit */
    static const char *const ok[] = {"{{ ((((x)))) }}", "{{ not not x }}"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tu_buf b = text(ok[i]);
        tu_expect(run, &b, STG_LIMIT_EXCEEDED, NONE, NONE, STG_NO_OFFSET);
        free(b.p);
    }
    /* the template size: STG_JINJA_MAX_BYTES + 1 bytes of data */
    size_t n = STG_JINJA_MAX_BYTES + 1;
    char *big = malloc(n);
    ck_assert_ptr_nonnull(big);
    memset(big, 'a', n);
    stg_report *r = scan_named(big, n, "chat_template.jinja", STG_PROFILE_STRICT);
    ck_assert(tu_find(r, STG_LIMIT_EXCEEDED) >= 0);
    stg_report_free(r);
    free(big);
}
END_TEST

/* --------------------------------------------------------------------------- fixtures */

START_TEST(test_benign_fixtures)
{
    const char *dir = tu_src("tests/templates/data/benign");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t seen = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 6, ".jinja") != 0) {
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = 0;
        uint8_t *buf = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(buf);
        for (int p = 0; p < 2; p++) {
            stg_report *r = scan_named(buf, len, e->d_name, (stg_profile)p);
            ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK && stg_report_count(r) == 1,
                          "%s: %s", e->d_name, tu_describe(r));
            stg_report_free(r);
        }
        free(buf);
        seen++;
    }
    closedir(d);
    ck_assert_uint_ge(seen, 90);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("templates");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_lexer_tokens);
    tcase_add_test(tc, test_lexer_errors);
    tcase_add_test(tc, test_string_values);
    tcase_add_test(tc, test_unsafe_triggers);
    tcase_add_test(tc, test_unsafe_near_misses);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_loader);
    tcase_add_test(tc, test_found);
    tcase_add_test(tc, test_json_string);
    tcase_add_test(tc, test_json_list);
    tcase_add_test(tc, test_field_invalid);
    tcase_add_test(tc, test_gguf_templates);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_benign_fixtures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
