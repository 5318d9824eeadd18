/* parser/json: event sequences, error kinds and offsets, duplicates, depth, numbers, memory. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parser/arena.h"
#include "parser/hash.h"
#include "parser/json.h"
#include "parser/mem.h" /* STG_SANITIZED */
#include "parser/sort.h"

#define DEFAULT_DEPTH 64u

/* Check logs every passing ck_assert (a write per call): hot loops use these instead, which only
 * call into Check when they fail. */
#define REQ(c)                                                 \
    do {                                                       \
        if (!(c)) {                                            \
            ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); \
        }                                                      \
    } while (0)
#define REQ_CMP(a, op, b)                                                                        \
    do {                                                                                         \
        uintmax_t a_ = (uintmax_t)(a), b_ = (uintmax_t)(b);                                      \
        if (!(a_ op b_)) {                                                                       \
            ck_abort_msg("%s:%d: %s %s %s (%ju, %ju)", __FILE__, __LINE__, #a, #op, #b, a_, b_); \
        }                                                                                        \
    } while (0)
#define REQ_CMP_EQ(a, b) REQ_CMP(a, ==, b)
#define REQ_CMP_LE(a, b) REQ_CMP(a, <=, b)
#define REQ_CMP_LT(a, b) REQ_CMP(a, <, b)
#define REQ_CMP_GT(a, b) REQ_CMP(a, >, b)
#define BIG_CAP ((size_t)1 << 30)

/* ------------------------------------------------------------------------------------------ */
/* rendering an event stream as text, so tables can state whole sequences */

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void text_put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap == 0 ? 256 : t->cap;
        while (cap < t->len + n + 1) {
            cap *= 2;
        }
        t->s = realloc(t->s, cap);
        REQ((t->s) != NULL);
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void text_fmt(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_fmt(text *t, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    text_put(t, buf, (size_t)n);
}

/* Decoded string, printable ASCII as is, other bytes as \xHH. */
static void text_str(text *t, const stg_json_event *ev)
{
    uint8_t *dec = malloc(ev->str_len + 1);
    REQ((dec) != NULL);
    size_t n = stg_json_decode(ev->str, ev->str_len, dec);
    REQ_CMP_LE(n, ev->str_len);
    if (!ev->has_escapes) {
        REQ_CMP_EQ(n, ev->str_len);
        REQ(memcmp(dec, ev->str, n) == 0);
    }
    for (size_t i = 0; i < n; i++) {
        if (dec[i] >= 0x20 && dec[i] < 0x7f && dec[i] != '\\') {
            text_put(t, (const char *)&dec[i], 1);
        } else {
            text_fmt(t, "\\x%02x", dec[i]);
        }
    }
    free(dec);
}

static const char *error_name(stg_json_error e)
{
    switch (e) {
    case STG_JSON_E_NONE: return "none";
    case STG_JSON_E_SYNTAX: return "syntax";
    case STG_JSON_E_UTF8: return "utf8";
    case STG_JSON_E_DEPTH: return "depth";
    case STG_JSON_E_MEMORY: return "memory";
    case STG_JSON_E_RANGE: return "range";
    }
    return "?";
}

/* Renders every event: { } [ ] k<key> s<str> n<raw>[u<value>|o] t f z D@off<prev $@off
 * E<kind>@off. Also checks the invariants every stream must keep. */
static char *render(const uint8_t *in, size_t len, uint32_t depth, size_t cap, size_t *peak)
{
    stg_arena arena;
    stg_arena_init(&arena, cap);
    stg_json_parser p;
    stg_json_init(&p, in, len, depth, &arena);
    text t = {0};
    stg_json_event ev;
    uint32_t open = 0;
    for (size_t count = 0;; count++) {
        REQ_CMP_LT(count, 10 * len + 10);
        stg_json_type ty = stg_json_next(&p, &ev);
        REQ_CMP_EQ(ty, ev.type);
        if (t.len > 0) {
            text_put(&t, " ", 1);
        }
        switch (ty) {
        case STG_JSON_OBJECT_BEGIN:
        case STG_JSON_ARRAY_BEGIN:
            REQ_CMP_EQ(ev.depth, open);
            open++;
            text_put(&t, ty == STG_JSON_OBJECT_BEGIN ? "{" : "[", 1);
            break;
        case STG_JSON_OBJECT_END:
        case STG_JSON_ARRAY_END:
            REQ_CMP_GT(open, 0);
            open--;
            REQ_CMP_EQ(ev.depth, open);
            text_put(&t, ty == STG_JSON_OBJECT_END ? "}" : "]", 1);
            break;
        case STG_JSON_KEY:
            REQ_CMP_EQ(ev.depth, open);
            text_put(&t, "k", 1);
            text_str(&t, &ev);
            break;
        case STG_JSON_STRING:
            REQ_CMP_EQ(ev.depth, open);
            text_put(&t, "s", 1);
            text_str(&t, &ev);
            break;
        case STG_JSON_NUMBER:
            REQ_CMP_EQ(ev.depth, open);
            text_fmt(&t, "n%.*s", (int)ev.len, (const char *)in + ev.offset);
            if (ev.is_uint && ev.uint_overflow) {
                text_put(&t, "o", 1);
            } else if (ev.is_uint) {
                text_fmt(&t, "u%llu", (unsigned long long)ev.uint_value);
            }
            break;
        case STG_JSON_TRUE: text_put(&t, "t", 1); break;
        case STG_JSON_FALSE: text_put(&t, "f", 1); break;
        case STG_JSON_NULL: text_put(&t, "z", 1); break;
        case STG_JSON_DUPLICATE:
            REQ_CMP_EQ(ev.depth, open);
            REQ_CMP_LT(ev.prev_offset, ev.offset);
            text_fmt(&t, "D@%zu<%zu", ev.offset, ev.prev_offset);
            break;
        case STG_JSON_END:
            REQ_CMP_EQ(open, 0);
            text_fmt(&t, "$@%zu", ev.offset);
            break;
        case STG_JSON_ERROR:
            REQ_CMP_LE(p.error_offset, len);
            text_fmt(&t, "E%s@%zu", error_name(p.error), p.error_offset);
            break;
        case STG_JSON_NONE: ck_abort_msg("NONE event");
        }
        if (ty == STG_JSON_END || ty == STG_JSON_ERROR) {
            /* sticky */
            stg_json_event again;
            REQ_CMP_EQ(stg_json_next(&p, &again), ty);
            REQ_CMP_EQ(again.offset, ev.offset);
            break;
        }
    }
    stg_json_release(&p);
    REQ_CMP_EQ(arena.reserved <= arena.peak, 1);
    if (peak != NULL) {
        *peak = arena.peak;
    }
    stg_arena_release(&arena);
    return t.s;
}

static char *render_str(const char *in, size_t len, uint32_t depth)
{
    return render((const uint8_t *)in, len, depth, BIG_CAP, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* the main table: input -> whole event stream */

typedef struct json_case {
    const char *name;
    const char *in;
    size_t len; /* 0: strlen(in) */
    const char *want;
} json_case;

static const json_case cases[] = {
    /* every value type */
    {"empty object", "{}", 0, "{ } $@2"},
    {"empty array", "[]", 0, "[ ] $@2"},
    {"object", "{\"a\":1,\"b\":\"x\"}", 0, "{ ka n1u1 kb sx } $@15"},
    {"array of all", "[true,false,null,\"s\",-1.5e+3,0,{}]", 0,
     "[ t f z ss n-1.5e+3 n0u0 { } ] $@34"},
    {"nested", "{\"a\":[1,[2,{\"b\":null}]]}", 0, "{ ka [ n1u1 [ n2u2 { kb z } ] ] } $@24"},
    {"whitespace everywhere", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n", 0, "{ ka [ n1u1 n2u2 ] } $@23"},
    {"top string", "\"abc\"", 0, "sabc $@5"},
    {"top number", "42", 0, "n42u42 $@2"},
    {"top true", "true", 0, "t $@4"},
    {"top false", "false", 0, "f $@5"},
    {"top null", "null", 0, "z $@4"},
    {"stops after value", "{} x", 0, "{ } $@2"},
    {"stops after number", "1 2", 0, "n1u1 $@1"},
    /* numbers */
    {"zero", "0", 0, "n0u0 $@1"},
    {"minus zero", "-0", 0, "n-0 $@2"},
    {"one point zero", "1.0", 0, "n1.0 $@3"},
    {"exponent", "1e0", 0, "n1e0 $@3"},
    {"exponent upper", "1E+2", 0, "n1E+2 $@4"},
    {"exponent minus", "[2e-3]", 0, "[ n2e-3 ] $@6"},
    {"fraction exp", "0.5e10", 0, "n0.5e10 $@6"},
    {"u64 max", "18446744073709551615", 0, "n18446744073709551615u18446744073709551615 $@20"},
    {"u64 max+1", "18446744073709551616", 0, "n18446744073709551616o $@20"},
    {"u64 huge", "[99999999999999999999999]", 0, "[ n99999999999999999999999o ] $@25"},
    {"u64 max/10 boundary", "1844674407370955161", 0,
     "n1844674407370955161u1844674407370955161 $@19"},
    {"u64 19 digits", "18446744073709551620", 0, "n18446744073709551620o $@20"},
    {"negative big", "-18446744073709551616", 0, "n-18446744073709551616 $@21"},
    {"leading zero", "01", 0, "Esyntax@1"},
    {"leading zero in array", "[00]", 0, "[ Esyntax@2"},
    {"leading zero negative", "-01", 0, "Esyntax@2"},
    {"minus alone", "-", 0, "Esyntax@1"},
    {"minus then space", "[- 1]", 0, "[ Esyntax@2"},
    {"one dot", "1.", 0, "Esyntax@2"},
    {"one dot in array", "[1.]", 0, "[ Esyntax@3"},
    {"dot five", ".5", 0, "Esyntax@0"},
    {"one e", "1e", 0, "Esyntax@2"},
    {"one e plus", "[1e+]", 0, "[ Esyntax@4"},
    {"plus sign", "+1", 0, "Esyntax@0"},
    {"hex", "[0x1]", 0, "[ n0u0 Esyntax@2"},
    {"nan", "NaN", 0, "Esyntax@0"},
    {"infinity", "[-Infinity]", 0, "[ Esyntax@2"},
    /* literals */
    {"tru", "tru", 0, "Esyntax@3"},
    {"trUe", "trUe", 0, "Esyntax@2"},
    {"nul in array", "[nul]", 0, "[ Esyntax@4"},
    {"True", "True", 0, "Esyntax@0"},
    /* strings and escapes */
    {"escapes", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", 0, "s\"\\x5c/\\x08\\x0c\\x0a\\x0d\\x09 $@18"},
    {"u escapes", "\"\\u0041\\u00e9\\u20AC\"", 0, "sA\\xc3\\xa9\\xe2\\x82\\xac $@20"},
    {"u0000", "\"a\\u0000b\"", 0, "sa\\x00b $@10"},
    {"surrogate pair", "\"\\uD83D\\uDE00\"", 0, "s\\xf0\\x9f\\x98\\x80 $@14"},
    {"max pair", "\"\\uDBFF\\uDFFF\"", 0, "s\\xf4\\x8f\\xbf\\xbf $@14"},
    {"lone high", "\"\\uD800\"", 0, "Eutf8@1"},
    {"lone high then text", "[\"ab\\uD800xy\"]", 0, "[ Eutf8@4"},
    {"high then non-low", "\"\\uD800\\u0041\"", 0, "Eutf8@1"},
    {"high then high", "\"\\uD800\\uD800\"", 0, "Eutf8@1"},
    {"high then other escape", "\"\\uD800\\n\"", 0, "Eutf8@1"},
    {"lone low", "\"\\uDC00\"", 0, "Eutf8@1"},
    {"low then high", "\"\\uDC00\\uD800\"", 0, "Eutf8@1"},
    {"high at end", "\"\\uD800", 0, "Esyntax@7"},
    {"high backslash end", "\"\\uD800\\", 0, "Esyntax@8"},
    {"high then bad hex", "\"\\uD800\\uDCxx\"", 0, "Esyntax@7"},
    {"bad escape", "\"\\x\"", 0, "Esyntax@1"},
    {"bad escape quote", "[\"ab\\'\"]", 0, "[ Esyntax@4"},
    {"bad u hex", "\"\\u12G4\"", 0, "Esyntax@1"},
    {"short u", "\"\\u12\"", 0, "Esyntax@1"},
    {"u cut short", "\"\\u12", 0, "Esyntax@5"},
    {"backslash at end", "\"\\", 0, "Esyntax@2"},
    {"unterminated", "\"abc", 0, "Esyntax@4"},
    {"unterminated long", "[\"abcdefghijklmnopqrstuvwxyz", 0, "[ Esyntax@28"},
    {"raw newline", "\"a\nb\"", 0, "Esyntax@2"},
    {"raw tab", "[\"abcdefghij\tk\"]", 0, "[ Esyntax@12"},
    {"raw nul", "\"ab\0cd\"", 7, "Esyntax@3"},
    {"raw 0x1f", "\"\x1f\"", 0, "Esyntax@1"},
    {"del is fine", "\"\x7f\"", 0, "s\\x7f $@3"},
    {"single quotes", "['a']", 0, "[ Esyntax@1"},
    /* UTF-8 */
    {"utf8 2 3 4", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", 0,
     "s\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9f\\x98\\x80 $@11"},
    {"utf8 long run", "\"abcdefgh\xc3\xa9ijklmnop\xe4\xb8\xad\"", 0,
     "sabcdefgh\\xc3\\xa9ijklmnop\\xe4\\xb8\\xad $@23"},
    {"utf8 edges", "\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"",
     0,
     "s\\xc2\\x80\\xdf\\xbf\\xe0\\xa0\\x80\\xef\\xbf\\xbf\\xf0\\x90\\x80\\x80\\xf4\\x8f\\xbf\\xbf "
     "$@20"},
    {"ed 9f ok", "\"\xed\x9f\xbf\"", 0, "s\\xed\\x9f\\xbf $@5"},
    {"overlong 2 c0", "\"\xc0\xaf\"", 0, "Eutf8@1"},
    {"overlong 2 c1", "\"ab\xc1\xbf\"", 0, "Eutf8@3"},
    {"overlong 3", "\"\xe0\x80\xaf\"", 0, "Eutf8@1"},
    {"overlong 3 max", "\"\xe0\x9f\xbf\"", 0, "Eutf8@1"},
    {"overlong 4", "\"\xf0\x80\x80\xaf\"", 0, "Eutf8@1"},
    {"overlong 4 max", "\"\xf0\x8f\xbf\xbf\"", 0, "Eutf8@1"},
    {"surrogate encoded d800", "\"\xed\xa0\x80\"", 0, "Eutf8@1"},
    {"surrogate encoded dfff", "[\"x\xed\xbf\xbf\"]", 0, "[ Eutf8@3"},
    {"above 10ffff f4 90", "\"\xf4\x90\x80\x80\"", 0, "Eutf8@1"},
    {"f5 lead", "\"\xf5\x80\x80\x80\"", 0, "Eutf8@1"},
    {"ff byte", "\"\xff\"", 0, "Eutf8@1"},
    {"lone continuation", "\"a\x80\"", 0, "Eutf8@2"},
    {"lone continuation in fast path", "\"abcdefghijklmnop\xbfqrstuvwxyz\"", 0, "Eutf8@17"},
    {"truncated 2", "\"\xc3\"", 0, "Eutf8@1"},
    {"truncated 3", "\"\xe2\x82\"", 0, "Eutf8@1"},
    {"truncated 4", "\"\xf0\x9f\x98\"", 0, "Eutf8@1"},
    {"truncated at end of input", "\"\xe2\x82", 0, "Eutf8@1"},
    {"bad second byte", "\"\xe2\x28\xa1\"", 0, "Eutf8@1"},
    {"bad third byte", "\"\xf0\x9f\x28\x80\"", 0, "Eutf8@1"},
    {"utf8 in key", "{\"\xc3\xa9\":1,\"\xc3\":2}", 0, "{ k\\xc3\\xa9 n1u1 Eutf8@9"},
    {"bom", "\xef\xbb\xbf{}", 0, "Esyntax@0"},
    {"invalid byte outside", "\xff", 0, "Eutf8@0"},
    {"invalid byte after value", "[1,\x80]", 0, "[ n1u1 Eutf8@3"},
    {"valid utf8 outside", "[\xc3\xa9]", 0, "[ Esyntax@1"},
    /* structure */
    {"empty input", "", 0, "Esyntax@0"},
    {"whitespace only", " \n\t\r ", 0, "Esyntax@5"},
    {"vertical tab", "\v{}", 0, "Esyntax@0"},
    {"trailing comma array", "[1,]", 0, "[ n1u1 Esyntax@3"},
    {"trailing comma object", "{\"a\":1,}", 0, "{ ka n1u1 Esyntax@7"},
    {"leading comma", "[,1]", 0, "[ Esyntax@1"},
    {"double comma", "[1,,2]", 0, "[ n1u1 Esyntax@3"},
    {"missing comma", "[1 2]", 0, "[ n1u1 Esyntax@3"},
    {"missing colon", "{\"a\" 1}", 0, "{ ka Esyntax@5"},
    {"missing value", "{\"a\":}", 0, "{ ka Esyntax@5"},
    {"key not string", "{1:2}", 0, "{ Esyntax@1"},
    {"key bare", "{a:1}", 0, "{ Esyntax@1"},
    {"colon in array", "[1:2]", 0, "[ n1u1 Esyntax@2"},
    {"mismatched close", "[1}", 0, "[ n1u1 Esyntax@2"},
    {"mismatched close obj", "{\"a\":1]", 0, "{ ka n1u1 Esyntax@6"},
    {"unclosed array", "[1", 0, "[ n1u1 Esyntax@2"},
    {"unclosed object", "{\"a\":1", 0, "{ ka n1u1 Esyntax@6"},
    {"unclosed after colon", "{\"a\":", 0, "{ ka Esyntax@5"},
    {"unclosed after key", "{\"a\"", 0, "{ ka Esyntax@4"},
    {"unclosed nested", "[[[]]", 0, "[ [ [ ] ] Esyntax@5"},
    {"lone close", "]", 0, "Esyntax@0"},
    {"comment", "[1 /*x*/]", 0, "[ n1u1 Esyntax@3"},
    {"nul outside", "[\0]", 3, "[ Esyntax@1"},
    /* duplicates */
    {"dup top", "{\"a\":1,\"a\":2}", 0, "{ ka n1u1 ka n2u2 D@7<1 } $@13"},
    {"dup three", "{\"a\":1,\"b\":2,\"a\":3,\"a\":4}", 0,
     "{ ka n1u1 kb n2u2 ka n3u3 ka n4u4 D@13<1 D@19<13 } $@25"},
    {"dup nested", "{\"x\":{\"a\":1,\"a\":2},\"y\":0}", 0,
     "{ kx { ka n1u1 ka n2u2 D@12<6 } ky n0u0 } $@25"},
    {"dup in array of objects", "[{\"a\":1},{\"a\":1,\"b\":2,\"a\":3}]", 0,
     "[ { ka n1u1 } { ka n1u1 kb n2u2 ka n3u3 D@22<10 } ] $@29"},
    {"dup escaped", "{\"a\\u0062\":1,\"ab\":2}", 0, "{ kab n1u1 kab n2u2 D@13<1 } $@20"},
    {"dup escaped slash", "{\"a/\":1,\"a\\/\":2}", 0, "{ ka/ n1u1 ka/ n2u2 D@8<1 } $@16"},
    {"dup pair vs raw", "{\"\\uD83D\\uDE00\":1,\"\xf0\x9f\x98\x80\":2}", 0,
     "{ k\\xf0\\x9f\\x98\\x80 n1u1 k\\xf0\\x9f\\x98\\x80 n2u2 D@18<1 } $@27"},
    {"not dup: prefix", "{\"a\":1,\"ab\":2,\"a\\u0000\":3}", 0,
     "{ ka n1u1 kab n2u2 ka\\x00 n3u3 } $@26"},
    {"not dup: case", "{\"A\":1,\"a\":2}", 0, "{ kA n1u1 ka n2u2 } $@13"},
    {"dup both levels", "{\"a\":{\"b\":1,\"b\":2},\"a\":3}", 0,
     "{ ka { kb n1u1 kb n2u2 D@12<6 } ka n3u3 D@19<1 } $@25"},
    {"dup empty keys", "{\"\":1,\"\":2}", 0, "{ k n1u1 k n2u2 D@6<1 } $@11"},
    {"dup then error", "{\"a\":1,\"a\":2", 0, "{ ka n1u1 ka n2u2 Esyntax@12"},
};

START_TEST(test_json_table)
{
    const json_case *c = &cases[_i];
    size_t len = c->len != 0 ? c->len : strlen(c->in);
    char *got = render_str(c->in, len, DEFAULT_DEPTH);
    ck_assert_msg(strcmp(got, c->want) == 0, "%s:\n got  %s\n want %s", c->name, got, c->want);
    free(got);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* offsets and lengths of tokens */

START_TEST(test_json_token_offsets)
{
    const char *in = "{ \"ab\" : [ 12 , \"x\\n\" , true ] }";
    stg_arena arena;
    stg_arena_init(&arena, BIG_CAP);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)in, strlen(in), 8, &arena);
    static const struct {
        stg_json_type type;
        size_t offset, len;
        uint32_t depth;
    } want[] = {
        {STG_JSON_OBJECT_BEGIN, 0, 1, 0}, {STG_JSON_KEY, 2, 4, 1},
        {STG_JSON_ARRAY_BEGIN, 9, 1, 1},  {STG_JSON_NUMBER, 11, 2, 2},
        {STG_JSON_STRING, 16, 5, 2},      {STG_JSON_TRUE, 24, 4, 2},
        {STG_JSON_ARRAY_END, 29, 1, 1},   {STG_JSON_OBJECT_END, 31, 1, 0},
        {STG_JSON_END, 32, 0, 0},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        stg_json_event ev;
        stg_json_type t = stg_json_next(&p, &ev);
        ck_assert_msg(t == want[k].type, "event %zu: type %d", k, (int)t);
        ck_assert_uint_eq(ev.offset, want[k].offset);
        ck_assert_uint_eq(ev.len, want[k].len);
        ck_assert_uint_eq(ev.depth, want[k].depth);
        if (t == STG_JSON_KEY) {
            ck_assert_uint_eq(ev.str_len, 2);
            ck_assert(memcmp(ev.str, "ab", 2) == 0);
            ck_assert(!ev.has_escapes);
        }
        if (t == STG_JSON_STRING) {
            ck_assert_uint_eq(ev.str_len, 3);
            ck_assert(ev.has_escapes);
        }
        if (t == STG_JSON_NUMBER) {
            ck_assert(ev.is_uint);
            ck_assert_uint_eq(ev.uint_value, 12);
        }
    }
    stg_json_release(&p);
    stg_arena_release(&arena);
}
END_TEST

START_TEST(test_json_rest_is_ws)
{
    const uint8_t *b = (const uint8_t *)"{} \t\r\n";
    ck_assert(stg_json_rest_is_ws(b, 6, 2));
    ck_assert(stg_json_rest_is_ws(b, 6, 6));
    ck_assert(stg_json_rest_is_ws(b, 6, 7));
    ck_assert(!stg_json_rest_is_ws(b, 6, 1));
    ck_assert(!stg_json_rest_is_ws((const uint8_t *)"{} \v", 4, 2));
    ck_assert(!stg_json_rest_is_ws((const uint8_t *)"{} \0", 4, 2));
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* depth */

static char *nest(const char *open, const char *close, size_t levels)
{
    size_t lo = strlen(open), lc = strlen(close);
    char *s = malloc(levels * (lo + lc) + 1);
    ck_assert_ptr_nonnull(s);
    size_t n = 0;
    for (size_t i = 0; i < levels; i++) {
        memcpy(s + n, open, lo);
        n += lo;
    }
    for (size_t i = 0; i < levels; i++) {
        memcpy(s + n, close, lc);
        n += lc;
    }
    s[n] = '\0';
    return s;
}

/* Parses to the end; returns the final type, with the error kind and offset. */
static stg_json_type run_all(const char *in, size_t len, uint32_t depth, size_t cap,
                             stg_json_error *err, size_t *err_off, size_t *peak)
{
    stg_arena arena;
    stg_arena_init(&arena, cap);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)in, len, depth, &arena);
    stg_json_event ev;
    stg_json_type t;
    do {
        t = stg_json_next(&p, &ev);
    } while (t != STG_JSON_END && t != STG_JSON_ERROR);
    *err = p.error;
    *err_off = p.error_offset;
    stg_json_release(&p);
    if (peak != NULL) {
        *peak = arena.peak;
    }
    stg_arena_release(&arena);
    return t;
}

/* Numbers whose magnitude rounds to infinity as an f64 fail with STG_JSON_E_RANGE at their
 * first byte when the caller asks (the safetensors header does), else they are numbers. */
#define F64_MIDPOINT                                                                               \
    "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797" \
    "75872070963302864166928879109465555478519404026306574886715058206819089020007083836762738548" \
    "45817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711" \
    "559699508093042880177904174497792"
#define F64_MIDPOINT_MINUS_1                                                                       \
    "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797" \
    "75872070963302864166928879109465555478519404026306574886715058206819089020007083836762738548" \
    "45817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711" \
    "559699508093042880177904174497791"

static const struct range_case {
    const char *num;
    bool beyond;
} range_cases[] = {
    {"8e308", true},
    {"1e400", true},
    {"-1e400", true},
    {"1e309", true},
    {"0.0001e313", true},
    {"1e99999999999999999999999999", true},
    {F64_MIDPOINT, true},
    {F64_MIDPOINT ".0", true},
    {F64_MIDPOINT_MINUS_1 ".99999", false},
    {"-" F64_MIDPOINT_MINUS_1, false},
    {"1.7976931348623158079372897140530341507993413271003782693617377898044496829276475094664901"
     "797e308",
     false},
    {"1.7976931348623158079372897140530341507993413271003782693617377898044496829276475094664901"
     "797758720709633028641669288791094655554785194040263065748867150582068190890200070838367627"
     "385484581771153176447573027006985557136695962284291481986083493647529271907416844436551070"
     "4342711559699508093042880177904174497792e308",
     true},
    {"1.7976931348623157e308", false},
    {"1.7976931348623158e308", false}, /* finite; serde_json 1.0.87 overflows it (docs/json.md) */
    {"17976931348623158e292", false},
    /* issue 24: at or above the midpoint, 18 significant digits scaled by 10^291: serde_json
     * 1.0.87 rounds them to DBL_MAX and accepts them; each rounds to infinity (docs/json.md) */
    {"1.79769313486231581e308", true},
    {"1.79769313486231599e308", true},
    {"-179769313486231590e291", true},
    {"0.0179769313486231581e310", true},
    {"1.797693134862315808e308", true},
    {"1.79769313486231580e308", false}, /* below the midpoint: finite */
    {"179769313486231580e291", false},
    {"1.797693134862315807e308", false},
    {"1e308", false},
    {"0.00001e313", false},
    {"0e99999999", false},
    {"-0.0e400", false},
    {"1e-400", false},
    {"1e-99999999999999999999999999", false},
    {"18446744073709551616.5", false},
    {"18446744073709551616", false},
};

START_TEST(test_json_f64_range)
{
    const struct range_case *c = &range_cases[_i];
    char doc[1024];
    int n = snprintf(doc, sizeof doc, "[1,%s]", c->num);
    REQ_CMP_LT((size_t)n, sizeof doc);
    for (int asked = 0; asked < 2; asked++) {
        stg_arena arena;
        stg_arena_init(&arena, BIG_CAP);
        stg_json_parser p;
        stg_json_init(&p, (const uint8_t *)doc, (size_t)n, 8, &arena);
        p.reject_f64_overflow = asked != 0;
        stg_json_event ev;
        stg_json_type t;
        do {
            t = stg_json_next(&p, &ev);
        } while (t != STG_JSON_END && t != STG_JSON_ERROR);
        if (asked && c->beyond) {
            ck_assert_msg(t == STG_JSON_ERROR && p.error == STG_JSON_E_RANGE, "%s", c->num);
            ck_assert_uint_eq(p.error_offset, 3);
        } else {
            ck_assert_msg(t == STG_JSON_END, "%s (asked %d): %s", c->num, asked,
                          error_name(p.error));
        }
        stg_json_release(&p);
        stg_arena_release(&arena);
    }
}
END_TEST

START_TEST(test_json_depth_exact)
{
    /* arrays: max_depth containers pass, max_depth + 1 fail at the extra bracket */
    static const uint32_t depths[] = {1, 2, 3, 17, 128, STG_JSON_DEPTH_CEILING};
    for (size_t k = 0; k < sizeof depths / sizeof depths[0]; k++) {
        uint32_t md = depths[k];
        stg_json_error e;
        size_t off;
        char *ok = nest("[", "]", md);
        ck_assert_int_eq(run_all(ok, strlen(ok), md, BIG_CAP, &e, &off, NULL), STG_JSON_END);
        free(ok);
        char *bad = nest("[", "]", (size_t)md + 1);
        ck_assert_int_eq(run_all(bad, strlen(bad), md, BIG_CAP, &e, &off, NULL), STG_JSON_ERROR);
        ck_assert_int_eq(e, STG_JSON_E_DEPTH);
        ck_assert_uint_eq(off, md);
        free(bad);
        /* objects: {"k":{"k":...{}...}} -- each level is 5 bytes before the next '{' */
        char *okobj = nest("{\"k\":", "}", md - 1);
        size_t lo = strlen(okobj);
        char *full = malloc(lo + 3);
        size_t half = (size_t)(md - 1) * 5;
        memcpy(full, okobj, half);
        memcpy(full + half, "{}", 2);
        memcpy(full + half + 2, okobj + half, lo - half + 1);
        ck_assert_int_eq(run_all(full, strlen(full), md, BIG_CAP, &e, &off, NULL), STG_JSON_END);
        /* one more level: fails at the '{' that would be level md + 1 */
        ck_assert_int_eq(
            run_all(full, strlen(full), md - 1 == 0 ? 1 : md - 1, BIG_CAP, &e, &off, NULL),
            md - 1 == 0 ? STG_JSON_END : STG_JSON_ERROR);
        if (md > 1) {
            ck_assert_int_eq(e, STG_JSON_E_DEPTH);
            ck_assert_uint_eq(off, half);
        }
        free(full);
        free(okobj);
    }
    /* 0 means 1; values above the ceiling are clamped to it */
    stg_json_error e;
    size_t off;
    ck_assert_int_eq(run_all("[]", 2, 0, BIG_CAP, &e, &off, NULL), STG_JSON_END);
    ck_assert_int_eq(run_all("[[]]", 4, 0, BIG_CAP, &e, &off, NULL), STG_JSON_ERROR);
    ck_assert_int_eq(e, STG_JSON_E_DEPTH);
    ck_assert_uint_eq(off, 1);
    char *deep = nest("[", "]", STG_JSON_DEPTH_CEILING + 1);
    ck_assert_int_eq(run_all(deep, strlen(deep), UINT32_MAX, BIG_CAP, &e, &off, NULL),
                     STG_JSON_ERROR);
    ck_assert_int_eq(e, STG_JSON_E_DEPTH);
    ck_assert_uint_eq(off, STG_JSON_DEPTH_CEILING);
    free(deep);
    /* a scalar at depth max_depth is fine: it is no container */
    ck_assert_int_eq(run_all("[[1]]", 5, 2, BIG_CAP, &e, &off, NULL), STG_JSON_END);
    ck_assert_int_eq(run_all("7", 1, 1, BIG_CAP, &e, &off, NULL), STG_JSON_END);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* duplicates against a naive reference */

/* Deterministic generator (tests only). */
static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

typedef struct ref_key {
    uint8_t *dec;
    size_t len, offset;
} ref_key;

typedef struct ref_obj {
    ref_key *keys;
    size_t count, cap;
} ref_obj;

static int ref_key_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const ref_key *a = pa, *b = pb;
    size_t common = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->dec, b->dec, common);
    if (c != 0) {
        return c;
    }
    if (a->len != b->len) {
        return a->len < b->len ? -1 : 1;
    }
    return a->offset < b->offset ? -1 : (a->offset > b->offset ? 1 : 0);
}

static int pair_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const size_t *a = pa, *b = pb;
    return a[0] < b[0] ? -1 : (a[0] > b[0] ? 1 : 0);
}

/* Parses `in` and checks, at every OBJECT_END, that the DUPLICATE events just before it are
 * exactly: for each key (in position order) equal after decoding to an earlier key of the same
 * object, one event (offset = that key, prev_offset = the latest earlier equal key). Returns the
 * number of duplicates seen. */
/* The seed check_dups_against_reference's parser is keyed with (0: stg_json_init's default). */
static uint64_t ref_seed;

static size_t check_dups_against_reference(const char *in, size_t len, uint32_t depth)
{
    stg_arena arena;
    stg_arena_init(&arena, BIG_CAP);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)in, len, depth, &arena);
    stg_json_set_seed(&p, ref_seed);
    ref_obj *stack = calloc((size_t)depth + 2, sizeof *stack);
    REQ((stack) != NULL);
    size_t top = 0; /* stack[top] is the innermost open object or array (arrays hold no keys) */
    size_t total_dups = 0;
    size_t *got = NULL;
    size_t got_n = 0, got_cap = 0;
    stg_json_event ev;
    for (;;) {
        stg_json_type t = stg_json_next(&p, &ev);
        if (t == STG_JSON_ERROR) {
            ck_abort_msg("error %d at %zu", (int)p.error, p.error_offset);
        }
        if (t == STG_JSON_END) {
            break;
        }
        if (t == STG_JSON_OBJECT_BEGIN || t == STG_JSON_ARRAY_BEGIN) {
            top++;
            stack[top].count = 0;
        } else if (t == STG_JSON_KEY) {
            ref_obj *o = &stack[top];
            if (o->count == o->cap) {
                o->cap = o->cap == 0 ? 16 : o->cap * 2;
                o->keys = realloc(o->keys, o->cap * sizeof *o->keys);
                REQ((o->keys) != NULL);
            }
            ref_key *k = &o->keys[o->count++];
            k->dec = malloc(ev.str_len + 1);
            REQ((k->dec) != NULL);
            k->len = stg_json_decode(ev.str, ev.str_len, k->dec);
            k->offset = ev.offset;
        } else if (t == STG_JSON_DUPLICATE) {
            if (got_n == got_cap) {
                got_cap = got_cap == 0 ? 16 : got_cap * 2;
                got = realloc(got, got_cap * 2 * sizeof(size_t));
                REQ((got) != NULL);
            }
            got[2 * got_n] = ev.offset;
            got[2 * got_n + 1] = ev.prev_offset;
            got_n++;
        } else if (t == STG_JSON_OBJECT_END || t == STG_JSON_ARRAY_END) {
            ref_obj *o = &stack[top];
            /* reference: sort by (decoded bytes, position); equal neighbours are repeats */
            if (o->count > 1) {
                stg_sort(o->keys, o->count, sizeof *o->keys, ref_key_cmp, NULL);
            }
            size_t *want = malloc((o->count + 1) * 2 * sizeof(size_t));
            REQ((want) != NULL);
            size_t want_n = 0;
            for (size_t j = 1; j < o->count; j++) {
                if (o->keys[j - 1].len == o->keys[j].len &&
                    memcmp(o->keys[j - 1].dec, o->keys[j].dec, o->keys[j].len) == 0) {
                    want[2 * want_n] = o->keys[j].offset;
                    want[2 * want_n + 1] = o->keys[j - 1].offset;
                    want_n++;
                }
            }
            if (want_n > 1) {
                stg_sort(want, want_n, 2 * sizeof(size_t), pair_cmp, NULL);
            }
            REQ_CMP_EQ(want_n, got_n);
            for (size_t k = 0; k < want_n; k++) {
                REQ_CMP_EQ(got[2 * k], want[2 * k]);
                REQ_CMP_EQ(got[2 * k + 1], want[2 * k + 1]);
            }
            free(want);
            REQ_CMP_EQ(want_n, got_n);
            total_dups += got_n;
            got_n = 0;
            for (size_t j = 0; j < o->count; j++) {
                free(o->keys[j].dec);
            }
            o->count = 0;
            top--;
        } else {
            REQ_CMP_EQ(got_n, 0); /* duplicates come right before OBJECT_END */
        }
    }
    for (size_t i = 0; i < (size_t)depth + 2; i++) {
        free(stack[i].keys);
    }
    free(stack);
    free(got);
    stg_json_release(&p);
    stg_arena_release(&arena);
    return total_dups;
}

/* Spellings of a few keys; some decode to the same bytes. */
static const char *const key_pool[] = {
    "a",
    "b",
    "ab",
    "a\\u0062",
    "\\u0061b",
    "\\u0061\\u0062",
    "",
    "a\\u0000",
    "a\\u0000b",
    "\xc3\xa9",
    "\\u00e9",
    "\\u00E9",
    "\xf0\x9f\x98\x80",
    "\\ud83d\\ude00",
    "\\uD83D\\uDE00",
    "model.layers.0.self_attn.q_proj.weight",
    "model.layers.0.self_attn.q_proj.weigh\\u0074",
    "model.layers.0.self_attn.q_proj.weights",
    "\\/x",
    "/x",
    "dtype",
    "shape",
    "data_offsets",
    "0123456789abcdef",
    "0123456789abcdeg",
    "01234567",
    "0123456\\u0037",
    "\\\\",
    "\\\"",
    "\\n",
    "\\u000a",
    "\\u000A",
};

typedef struct gen {
    char *s;
    size_t len, cap;
} gen;

static void gen_put(gen *g, const char *s)
{
    size_t n = strlen(s);
    if (g->len + n + 1 > g->cap) {
        g->cap = (g->len + n + 1) * 2;
        g->s = realloc(g->s, g->cap);
        REQ((g->s) != NULL);
    }
    memcpy(g->s + g->len, s, n + 1);
    g->len += n;
}

/* A random object: `keys` members, values scalars or (while depth allows) nested objects and
 * arrays of objects. Key spellings come from the pool or are fresh numbered names. */
static void gen_object(gen *g, size_t keys, unsigned depth_left, unsigned pool_share)
{
    gen_put(g, "{");
    for (size_t i = 0; i < keys; i++) {
        if (i > 0) {
            gen_put(g, rng() % 4 == 0 ? " , " : ",");
        }
        gen_put(g, "\"");
        if (rng() % 100 < pool_share) {
            gen_put(g, key_pool[rng() % (sizeof key_pool / sizeof key_pool[0])]);
        } else {
            char name[32];
            snprintf(name, sizeof name, "k%zu", (size_t)rng() % (keys + 1));
            gen_put(g, name);
        }
        gen_put(g, "\":");
        unsigned r = rng() % 10;
        if (depth_left > 0 && r == 0) {
            gen_object(g, rng() % 12, depth_left - 1, pool_share);
        } else if (depth_left > 0 && r == 1) {
            gen_put(g, "[");
            gen_object(g, rng() % 10, depth_left - 1, pool_share);
            gen_put(g, ",");
            gen_object(g, rng() % 40, depth_left - 1, pool_share);
            gen_put(g, "]");
        } else {
            gen_put(g, r < 6 ? "0" : "\"v\"");
        }
    }
    gen_put(g, "}");
}

START_TEST(test_json_dups_random)
{
    static const size_t sizes[] = {0,  1,  2,  3,  7,   8,   9,    10,  16,
                                   31, 32, 33, 64, 100, 257, 1000, 5000};
    rng_state = 12345;
    size_t dups = 0;
    for (size_t round = 0; round < 6; round++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            gen g = {0};
            gen_object(&g, sizes[k], 3, (unsigned)(round * 20));
            dups += check_dups_against_reference(g.s, g.len, 16);
            free(g.s);
        }
    }
    ck_assert_uint_gt(dups, 1000); /* the generator does make many duplicates */
    /* one object large enough for both in-place radix levels (> 256 x 96 keys) */
    gen g = {0};
    gen_object(&g, 60000, 0, 10);
    ck_assert_uint_gt(check_dups_against_reference(g.s, g.len, 4), 10000);
    free(g.s);
}
END_TEST

/* Every key equal: a chain of repeats, each pointing at the one before. */
START_TEST(test_json_dups_all_same)
{
    static const size_t sizes[] = {2, 8, 9, 32, 33, 1000, 20000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        gen g = {0};
        gen_put(&g, "{");
        for (size_t i = 0; i < sizes[k]; i++) {
            gen_put(&g, i == 0 ? "" : ",");
            gen_put(&g, i % 3 == 0 ? "\"x\":1" : (i % 3 == 1 ? "\"\\u0078\":1" : "\"\\x\":1"));
        }
        gen_put(&g, "}");
        /* "\x" is no valid escape: build with "x" spellings only when i % 3 == 2 */
        for (char *q = strstr(g.s, "\\x"); q != NULL; q = strstr(q, "\\x")) {
            q[0] = 'x';
            q[1] = 'x';
        }
        size_t dups = check_dups_against_reference(g.s, g.len, 4);
        /* keys are "x" or "xx": repeats = all but the first of each spelling class */
        size_t xx = sizes[k] / 3;
        size_t x = sizes[k] - xx;
        ck_assert_uint_eq(dups, (x > 0 ? x - 1 : 0) + (xx > 0 ? xx - 1 : 0));
        free(g.s);
    }
}
END_TEST

/* One step of the hash as json.c defines it (the state and a word multiplied by the key's odd
 * multiplier into 128 bits, the halves folded): used only to build keys colliding under a known
 * seed; the test checks the collisions with stg_json_key_hash itself. */
static uint64_t test_hash_step(const stg_json_hash_key *k, uint64_t h, uint64_t w)
{
    __extension__ typedef unsigned __int128 wide;
    wide m = (wide)(h ^ w) * k->mul;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

static uint64_t le64_of(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | b[i];
    }
    return v;
}

/* The next key of a flood: 16 decoded bytes (w1, w2) with one 64-bit hash, w1 8 letters from
 * *ctr, w2 = s1(target) ^ w2(target) ^ s1(w1), kept when all its bytes are ASCII so it can be
 * written as \u00XX escapes; written to raw (8 letters and 8 escapes, NUL-terminated). */
static void flood_key(uint64_t *ctr, char raw[8 + 48 + 1])
{
    stg_json_hash_key k; /* the default seed's: what stg_json_init keys a parser with */
    stg_json_hash_key_init(&k, STG_HASH_SEED_DEFAULT);
    static const uint8_t target[16] = "AAAAAAAAtarget!!";
    uint64_t goal = test_hash_step(&k, k.start, le64_of(target)) ^ le64_of(target + 8);
    for (;;) {
        uint8_t key[16];
        uint64_t c = (*ctr)++;
        for (int i = 0; i < 8; i++) {
            key[i] = (uint8_t)('a' + c % 26);
            c /= 26;
        }
        uint64_t w2 = goal ^ test_hash_step(&k, k.start, le64_of(key));
        if ((w2 & 0x8080808080808080ull) != 0) {
            continue;
        }
        for (int i = 0; i < 8; i++) {
            key[8 + i] = (uint8_t)(w2 >> (8 * i));
        }
        REQ_CMP_EQ(stg_json_key_hash(&k, key, 16),
                   stg_json_key_hash(&k, target, 16)); /* precondition */
        memcpy(raw, key, 8);
        for (int i = 0; i < 8; i++) {
            snprintf(raw + 8 + 6 * i, 7, "\\u%04x", key[8 + i]);
        }
        return;
    }
}

START_TEST(test_json_hash_flood)
{
    const size_t want = 20000;
    gen g = {0};
    gen_put(&g, "{");
    uint64_t ctr = 1;
    for (size_t made = 0; made < want;) {
        char raw[8 + 48 + 1];
        flood_key(&ctr, raw);
        gen_put(&g, made == 0 ? "\"" : ",\"");
        gen_put(&g, raw);
        gen_put(&g, "\":0");
        made++;
        if (made % 5000 == 0) {
            /* a real repeat in the flood, spelled without escapes where possible */
            gen_put(&g, ",\"");
            gen_put(&g, raw);
            gen_put(&g, "\":1");
        }
    }
    gen_put(&g, "}");
    clock_t t0 = clock();
    size_t dups = check_dups_against_reference(g.s, g.len, 4);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    REQ_CMP_EQ(dups, want / 5000);
    /* pairwise would be 2e8 comparisons of 56-byte escaped keys: minutes, not seconds */
    ck_assert_msg(secs < 20.0, "flood took %.1f s", secs);
    free(g.s);
}
END_TEST

/* A random value for test_json_skip_elided: objects whose keys repeat the one before them
 * byte for byte (what stg_json_skip counts without recording), other repeats, escaped
 * spellings of the same key, nested objects and arrays. */
static void gen_skip_value(gen *g, unsigned *rng, int depth)
{
    static const char *const keys[] = {"", "a", "\\u0061", "b", "ab", "a\\u0062"};
    *rng = *rng * 1103515245u + 12345u;
    unsigned r = (*rng >> 8) % 10;
    if (depth >= 5 || r < 3) {
        gen_put(g, r == 0 ? "\"s\"" : "0");
        return;
    }
    bool obj = r >= 5;
    gen_put(g, obj ? "{" : "[");
    *rng = *rng * 1103515245u + 12345u;
    size_t n = (*rng >> 8) % 24, k = 0;
    for (size_t i = 0; i < n; i++) {
        *rng = *rng * 1103515245u + 12345u;
        if (i > 0) {
            gen_put(g, ",");
        }
        if (obj) {
            if ((*rng >> 12) % 3 != 0) { /* else the key before it again */
                k = (*rng >> 16) % (sizeof keys / sizeof keys[0]);
            }
            gen_put(g, "\"");
            gen_put(g, keys[k]);
            gen_put(g, "\":");
        }
        gen_skip_value(g, rng, depth + 1);
    }
    gen_put(g, obj ? "}" : "]");
}

/* stg_json_skip counts repeats it does not record: its count and first repeat must be those
 * the events of the same value give, for objects that repeat keys in every way. */
/* Sanitizer builds walk a fifth of the values: each round's arena costs them far more. */
#ifdef STG_SANITIZED
#define ELIDED_ROUNDS 600
#else
#define ELIDED_ROUNDS 3000
#endif

START_TEST(test_json_skip_elided)
{
    unsigned rng = 7;
    size_t with_dups = 0;
    for (int round = 0; round < ELIDED_ROUNDS; round++) {
        gen g = {0};
        gen_put(&g, "[");
        gen_skip_value(&g, &rng, 1);
        gen_put(&g, ",1]");
        stg_arena arena;
        stg_arena_init(&arena, BIG_CAP);
        stg_json_parser a, b;
        stg_json_event ev, first_a, first_b;
        memset(&first_a, 0, sizeof first_a);
        memset(&first_b, 0, sizeof first_b);
        stg_json_init(&a, (const uint8_t *)g.s, g.len, 16, &arena);
        stg_json_init(&b, (const uint8_t *)g.s, g.len, 16, &arena);
        ck_assert_int_eq(stg_json_next(&a, &ev), STG_JSON_ARRAY_BEGIN);
        ck_assert_int_eq(stg_json_next(&b, &ev), STG_JSON_ARRAY_BEGIN);
        stg_json_event begin;
        stg_json_type t = stg_json_next(&a, &begin);
        (void)stg_json_next(&b, &ev);
        size_t count_a = 0, count_b = 0;
        stg_json_type last = stg_json_skip(&a, &begin, &count_a, &first_a);
        if (t == STG_JSON_OBJECT_BEGIN || t == STG_JSON_ARRAY_BEGIN) {
            ck_assert_int_eq(last,
                             t == STG_JSON_OBJECT_BEGIN ? STG_JSON_OBJECT_END : STG_JSON_ARRAY_END);
            for (;;) { /* the events, one by one */
                stg_json_type u = stg_json_next(&b, &ev);
                REQ(u != STG_JSON_ERROR && u != STG_JSON_END);
                if (u == STG_JSON_DUPLICATE && count_b++ == 0) {
                    first_b = ev;
                }
                if ((u == STG_JSON_OBJECT_END || u == STG_JSON_ARRAY_END) &&
                    ev.depth == begin.depth) {
                    break;
                }
            }
        }
        ck_assert_uint_eq(count_a, count_b);
        if (count_b > 0) {
            with_dups++;
            ck_assert_uint_eq(first_a.offset, first_b.offset);
            ck_assert_uint_eq(first_a.prev_offset, first_b.prev_offset);
            ck_assert_uint_eq(first_a.len, first_b.len);
        }
        /* both parsers go on in step after the skipped value */
        ck_assert_int_eq(stg_json_next(&a, &ev), STG_JSON_NUMBER);
        ck_assert_int_eq(stg_json_next(&b, &ev), STG_JSON_NUMBER);
        ck_assert_int_eq(stg_json_next(&a, &ev), STG_JSON_ARRAY_END);
        ck_assert_int_eq(stg_json_next(&b, &ev), STG_JSON_ARRAY_END);
        ck_assert_int_eq(stg_json_next(&a, &ev), STG_JSON_END);
        stg_json_release(&a);
        stg_json_release(&b);
        stg_arena_release(&arena);
        free(g.s);
    }
    ck_assert_uint_gt(with_dups,
                      ELIDED_ROUNDS / 10); /* the generator makes what the test is about */
}
END_TEST

/* The flood's keys collide only under the seed they were built for: under another one (what a
 * door's secret seed is to a file) they spread, and the duplicates found are the same. */
START_TEST(test_json_hash_flood_other_seed)
{
    stg_json_hash_key dflt, other;
    stg_json_hash_key_init(&dflt, STG_HASH_SEED_DEFAULT);
    stg_json_hash_key_init(&other, 0x0123456789abcdefull);
    ck_assert(dflt.start != other.start || dflt.mul != other.mul);
    gen g = {0};
    gen_put(&g, "{");
    uint64_t ctr = 1;
    uint64_t first_other = 0;
    size_t same_other = 0;
    for (size_t made = 0; made < 2000; made++) {
        char raw[8 + 48 + 1];
        flood_key(&ctr, raw);
        uint8_t dec[16];
        size_t n = stg_json_decode((const uint8_t *)raw, strlen(raw), dec);
        REQ_CMP_EQ(n, 16);
        uint64_t h = stg_json_key_hash(&other, dec, n);
        if (made == 0) {
            first_other = h;
        } else {
            same_other += h == first_other;
        }
        gen_put(&g, made == 0 ? "\"" : ",\"");
        gen_put(&g, raw);
        gen_put(&g, made % 500 == 499 ? "\":1,\"" : "\":0");
        if (made % 500 == 499) {
            gen_put(&g, raw); /* a real repeat */
            gen_put(&g, "\":2");
        }
    }
    gen_put(&g, "}");
    ck_assert_uint_eq(same_other, 0);
    ref_seed = 0x0123456789abcdefull;
    size_t dups_other = check_dups_against_reference(g.s, g.len, 4);
    ref_seed = 0;
    size_t dups_default = check_dups_against_reference(g.s, g.len, 4);
    ck_assert_uint_eq(dups_other, 4);
    ck_assert_uint_eq(dups_default, 4);
    free(g.s);
}
END_TEST

/* Repeats first, a flood after them: the hash set has already turned many records into pending
 * repeats when the flood makes it give up, and the sort it falls back to must see every record
 * as it was (the same events as the reference). */
START_TEST(test_json_flood_after_repeats)
{
    static const char *const spellings[] = {"a", "\\u0061", "b", "a", "c", "\\u0062"};
    static const int key_of[] = {0, 0, 1, 0, 2, 1}; /* a, b, c */
    size_t seen[3] = {0, 0, 0};
    gen g = {0};
    gen_put(&g, "{");
    for (size_t i = 0; i < 3000; i++) {
        gen_put(&g, i ? ",\"" : "\"");
        gen_put(&g, i < 1000 ? "z" : spellings[i % 6]);
        gen_put(&g, "\":0");
        seen[key_of[i % 6]] += i >= 1000;
    }
    uint64_t ctr = 1;
    char raw[8 + 48 + 1], first[8 + 48 + 1];
    for (size_t i = 0; i < 400; i++) { /* past the set's probe ceiling of 256 */
        flood_key(&ctr, raw);
        if (i == 0) {
            memcpy(first, raw, sizeof raw);
        }
        gen_put(&g, ",\"");
        gen_put(&g, raw);
        gen_put(&g, "\":1");
    }
    gen_put(&g, ",\"");
    gen_put(&g, first);
    gen_put(&g, "\":2,\"z\":3,\"c\":4}");
    /* "z" 999 + 1, each of "a" "b" "c" all but its first (and "c" once more), the first flood
     * key once */
    REQ_CMP_EQ(check_dups_against_reference(g.s, g.len, 4),
               1000 + (seen[0] - 1) + (seen[1] - 1) + seen[2] + 1);
    free(g.s);
}
END_TEST

/* A flood whose keys also repeat, thousands of times each: the fallback's sort puts each run of
 * equal keys of one hash in position order by radix passes after a three-way partition; the
 * events are still the reference's. Keys of distinct hashes between them keep the runs apart. */
START_TEST(test_json_flood_with_copies)
{
    enum { FLOOD = 300, COPIED = 5, COPIES = 3000 };
    char keys[FLOOD][8 + 48 + 1];
    uint64_t ctr = 1;
    gen g = {0};
    gen_put(&g, "{");
    for (size_t i = 0; i < FLOOD; i++) {
        flood_key(&ctr, keys[i]);
        gen_put(&g, i ? ",\"" : "\"");
        gen_put(&g, keys[i]);
        gen_put(&g, "\":0");
    }
    for (size_t i = 0; i < COPIES; i++) {
        gen_put(&g, ",\"");
        gen_put(&g, keys[(i * 7) % COPIED]);
        gen_put(&g, i % 3 ? "\":1" : "\":1,\"\":2");
    }
    gen_put(&g, "}");
    /* each copy repeats one of the five flood keys; "" appears COPIES / 3 times */
    REQ_CMP_EQ(check_dups_against_reference(g.s, g.len, 4), COPIES + COPIES / 3 - 1);
    free(g.s);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* skip and decode */

/* The compact-object fast path: {"K0":"S","K1":[..],"K2":[..]} read in one call, or nothing
 * consumed and the event path unchanged. */
typedef struct compact_case {
    const char *entry; /* the value of key "a" in {"a":ENTRY,"z":1} */
    bool fast;         /* the fast path takes it */
    uint32_t depth;    /* max_depth */
} compact_case;

static const compact_case compact_cases[] = {
    {"{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]}", true, 16},
    {"{\"dtype\":\"\",\"shape\":[],\"data_offsets\":[7]}", true, 16},
    /* near misses: each differs from the compact form in one way */
    {"{\"dtype\": \"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]}", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[2, 3],\"data_offsets\":[0,12]}", false, 16},
    {"{\"dtype\":\"F\\u0031\",\"shape\":[2,3],\"data_offsets\":[0,12]}", false, 16},
    {"{\"dtype\":\"F\xc3\xa9\",\"shape\":[2,3],\"data_offsets\":[0,12]}", false, 16},
    {"{\"shape\":[2,3],\"dtype\":\"F16\",\"data_offsets\":[0,12]}", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12,1]}", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[02],\"data_offsets\":[0,12]}", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[2.0],\"data_offsets\":[0,12]}", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[12345678901234567890],\"data_offsets\":[0,1]}", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12],\"x\":1}", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]", false, 16},
    {"{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]}", false, 2}, /* arrays too deep */
};

START_TEST(test_json_compact_object)
{
    const compact_case *tc = &compact_cases[_i];
    char in[256];
    snprintf(in, sizeof in, "{\"a\":%s,\"z\":1}", tc->entry);
    size_t len = strlen(in);
    stg_json_compact_form form;
    ck_assert(stg_json_compact_form_init(&form, "dtype", "shape", "data_offsets"));
    /* the event stream with and without the fast path */
    text with = {0}, without = {0};
    for (int pass = 0; pass < 2; pass++) {
        stg_arena arena;
        stg_arena_init(&arena, BIG_CAP);
        stg_json_parser p;
        stg_json_init(&p, (const uint8_t *)in, len, tc->depth, &arena);
        text *t = pass == 0 ? &with : &without;
        stg_json_event ev;
        bool tried = false;
        for (int guard = 0; guard < 64; guard++) {
            stg_json_type ty = stg_json_next(&p, &ev);
            text_fmt(t, "%d@%zu/%u ", (int)ty, ev.offset, ev.depth);
            if (ty == STG_JSON_END || ty == STG_JSON_ERROR) {
                break;
            }
            if (pass == 0 && ty == STG_JSON_OBJECT_BEGIN && ev.depth == 1 && !tried) {
                tried = true;
                uint64_t a[4] = {0}, b[2] = {0};
                stg_json_compact cf;
                bool fast = stg_json_compact_object(&p, &form, a, 4, b, 2, &cf);
                ck_assert_msg(fast == tc->fast, "case %d: fast path %d", _i, fast);
                if (fast) {
                    /* what the event path would have said, as text */
                    text_fmt(t, "S@%zu:%.*s ", cf.str_offset, (int)cf.str_len,
                             (const char *)cf.str);
                    ck_assert_int_eq(in[cf.str_offset], '"');
                    ck_assert_int_eq(in[cf.arr_offset[0]], '[');
                    ck_assert_int_eq(in[cf.arr_offset[1]], '[');
                    text_fmt(t, "A@%zu:%zu A@%zu:%zu ", cf.arr_offset[0], cf.count[0],
                             cf.arr_offset[1], cf.count[1]);
                    if (_i == 0) {
                        ck_assert_uint_eq(a[0], 2);
                        ck_assert_uint_eq(a[1], 3);
                        ck_assert_uint_eq(b[0], 0);
                        ck_assert_uint_eq(b[1], 12);
                    }
                } else {
                    ck_assert_uint_eq(p.pos, 6); /* nothing consumed */
                }
            }
        }
        stg_json_release(&p);
        stg_arena_release(&arena);
    }
    /* after the fast path the stream goes on exactly as after the entry's OBJECT_END: from
     * the key "z" on (or, when it is not taken, the whole stream) */
    char z[32];
    snprintf(z, sizeof z, "%d@%zu/1 ", (int)STG_JSON_KEY, len - 6);
    if (tc->fast) {
        ck_assert_ptr_nonnull(strstr(with.s, z));
        ck_assert_ptr_nonnull(strstr(without.s, z));
        ck_assert_str_eq(strstr(with.s, z), strstr(without.s, z));
    } else {
        ck_assert_str_eq(with.s, without.s);
    }
    free(with.s);
    free(without.s);
}
END_TEST

START_TEST(test_json_compact_form_keys)
{
    stg_json_compact_form f;
    ck_assert(stg_json_compact_form_init(&f, "dtype", "shape", "data_offsets"));
    ck_assert_uint_eq(f.glue_len[0], strlen("\"dtype\":\""));
    ck_assert(!stg_json_compact_form_init(&f, "a", "b", "a"));   /* not distinct */
    ck_assert(!stg_json_compact_form_init(&f, "a\"", "b", "c")); /* a quote */
    ck_assert(!stg_json_compact_form_init(&f, "a\\", "b", "c")); /* a backslash */
    ck_assert(!stg_json_compact_form_init(&f, "", "b", "c"));    /* empty */
    ck_assert(!stg_json_compact_form_init(&f, "a\n", "b", "c")); /* a control byte */
    ck_assert(!stg_json_compact_form_init(&f, "0123456789012345678901234567890123", "b", "c"));
}
END_TEST

/* The hash set ahead of the sort (objects of more than 8 keys): no repeat gives no event; any
 * repeat falls back to the sort, which reports every repeat with its latest earlier
 * occurrence, in position order. */
START_TEST(test_json_many_keys_repeats)
{
    gen g = {0};
    size_t off_k3 = 0, off_r1 = 0, off_r2 = 0;
    gen_put(&g, "{");
    for (int i = 0; i < 300; i++) {
        char k[48];
        const char *name = k;
        snprintf(k, sizeof k, "model.layers.%d.weight", i);
        if (i == 150 || i == 299) {
            name = "model.layers.3.weight";
        }
        if (i > 0) {
            gen_put(&g, ",");
        }
        if (i == 3) {
            off_k3 = g.len;
        } else if (i == 150) {
            off_r1 = g.len;
        } else if (i == 299) {
            off_r2 = g.len;
        }
        gen_put(&g, "\"");
        gen_put(&g, name);
        gen_put(&g, "\":0");
    }
    gen_put(&g, "}");
    for (int with_repeats = 0; with_repeats < 2; with_repeats++) {
        if (!with_repeats) { /* the same object with the repeats renamed */
            g.s[off_r1 + 1] = 'X';
            g.s[off_r2 + 1] = 'Y';
        } else {
            g.s[off_r1 + 1] = 'm';
            g.s[off_r2 + 1] = 'm';
        }
        stg_arena arena;
        stg_arena_init(&arena, BIG_CAP);
        stg_json_parser p;
        stg_json_init(&p, (const uint8_t *)g.s, g.len, DEFAULT_DEPTH, &arena);
        stg_json_event ev;
        size_t dups = 0;
        stg_json_type ty;
        while ((ty = stg_json_next(&p, &ev)) != STG_JSON_END && ty != STG_JSON_ERROR) {
            if (ty == STG_JSON_DUPLICATE) {
                ck_assert_uint_eq(ev.offset, dups == 0 ? off_r1 : off_r2);
                ck_assert_uint_eq(ev.prev_offset, dups == 0 ? off_k3 : off_r1);
                dups++;
            }
        }
        ck_assert_int_eq(ty, STG_JSON_END);
        ck_assert_uint_eq(dups, with_repeats ? 2 : 0);
        stg_json_release(&p);
        stg_arena_release(&arena);
    }
    free(g.s);
}
END_TEST

/* stg_json_skip over objects of many repeats (it takes all but the first as a count): the
 * same count, first duplicate and following event as walking the events one by one. */
START_TEST(test_json_skip_many_repeats)
{
    gen g = {0};
    gen_put(&g, "{\"v\":{");
    for (int i = 0; i < 300; i++) {
        gen_put(&g, i ? ",\"k\":" : "\"k\":");
        gen_put(&g, i % 50 == 7 ? "{\"q\":0,\"q\":1,\"q\":2}" : "0");
    }
    gen_put(&g, ",\"\\u006b\":[{\"r\":1,\"r\":2}]},\"after\":1}");
    size_t got_count[2] = {0, 0}, got_first[2] = {0, 0}, got_next[2] = {0, 0};
    for (int walk = 0; walk < 2; walk++) {
        stg_arena arena;
        stg_arena_init(&arena, BIG_CAP);
        stg_json_parser p;
        stg_json_init(&p, (const uint8_t *)g.s, g.len, 16, &arena);
        stg_json_event ev, first = {0};
        REQ_CMP_EQ(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
        REQ_CMP_EQ(stg_json_next(&p, &ev), STG_JSON_KEY);
        REQ_CMP_EQ(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
        if (walk == 0) {
            REQ_CMP_EQ(stg_json_skip(&p, &ev, &got_count[0], &first), STG_JSON_OBJECT_END);
        } else {
            stg_json_type t;
            while ((t = stg_json_next(&p, &ev)) != STG_JSON_OBJECT_END || ev.depth != 1) {
                REQ((t) != STG_JSON_ERROR);
                if (t == STG_JSON_DUPLICATE && got_count[1]++ == 0) {
                    first = ev;
                }
            }
        }
        got_first[walk] = first.offset;
        REQ_CMP_EQ(stg_json_next(&p, &ev), STG_JSON_KEY);
        got_next[walk] = ev.offset;
        stg_json_release(&p);
        stg_arena_release(&arena);
    }
    /* 300 repeats of "k" (the last spelled with an escape), 2 of "q" in each of 6 objects, 1 of "r" */
    ck_assert_uint_eq(got_count[1], 300 + 12 + 1);
    ck_assert_uint_eq(got_count[0], got_count[1]);
    ck_assert_uint_eq(got_first[0], got_first[1]);
    ck_assert_uint_eq(got_next[0], got_next[1]);
    free(g.s);
}
END_TEST

START_TEST(test_json_skip)
{
    const char *in = "{\"a\":{\"x\":[1,{\"y\":2,\"y\":3}],\"x\":4},\"b\":[[],{}],\"c\":5,\"d\":"
                     "{\"e\":1}}";
    stg_arena arena;
    stg_arena_init(&arena, BIG_CAP);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)in, strlen(in), 16, &arena);
    stg_json_event ev, first;
    size_t dups = 0;
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY); /* a */
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert_int_eq(stg_json_skip(&p, &ev, &dups, &first), STG_JSON_OBJECT_END);
    ck_assert_uint_eq(dups, 2);
    ck_assert_uint_eq(first.offset, 20); /* the inner "y" repeat is handed out first */
    ck_assert_uint_eq(first.prev_offset, 14);
    ck_assert_int_eq(first.type, STG_JSON_DUPLICATE);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY); /* b */
    ck_assert_uint_eq(ev.offset, 35);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
    ck_assert_int_eq(stg_json_skip(&p, &ev, NULL, NULL), STG_JSON_ARRAY_END);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY); /* c */
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_NUMBER);
    ck_assert_int_eq(stg_json_skip(&p, &ev, &dups, NULL), STG_JSON_NUMBER); /* no-op */
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY);                 /* d */
    ck_assert_uint_eq(ev.offset, 53);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert_int_eq(stg_json_skip(&p, &ev, &dups, NULL), STG_JSON_OBJECT_END);
    ck_assert_uint_eq(dups, 2);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_END);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_END);
    stg_json_release(&p);

    /* an error inside the skipped value ends the skip with ERROR */
    const char *bad = "[{\"a\":[1,2,}]";
    stg_json_init(&p, (const uint8_t *)bad, strlen(bad), 16, &arena);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert_int_eq(stg_json_skip(&p, &ev, NULL, NULL), STG_JSON_ERROR);
    ck_assert_int_eq(p.error, STG_JSON_E_SYNTAX);
    ck_assert_uint_eq(p.error_offset, 11);
    stg_json_release(&p);
    stg_arena_release(&arena);
}
END_TEST

static const struct {
    const char *raw, *dec;
    size_t dec_len;
} decode_cases[] = {
    {"", "", 0},
    {"plain", "plain", 5},
    {"a\\\"b", "a\"b", 3},
    {"\\\\\\/\\b\\f\\n\\r\\t", "\\/\b\f\n\r\t", 7},
    {"\\u0000", "\0", 1},
    {"x\\u0041y", "xAy", 3},
    {"\\u007f\\u0080", "\x7f\xc2\x80", 3},
    {"\\u07FF\\u0800", "\xdf\xbf\xe0\xa0\x80", 5},
    {"\\uFFFF", "\xef\xbf\xbf", 3},
    {"\\uD800\\uDC00", "\xf0\x90\x80\x80", 4},
    {"\\uDBFF\\uDFFF", "\xf4\x8f\xbf\xbf", 4},
    {"\xc3\xa9\\u00e9", "\xc3\xa9\xc3\xa9", 4},
    {"ab\\u0062\\u0063d", "abbcd", 5},
};

START_TEST(test_json_decode)
{
    const char *raw = decode_cases[_i].raw;
    size_t rl = strlen(raw);
    uint8_t out[64];
    memset(out, 0xAA, sizeof out);
    size_t n = stg_json_decode((const uint8_t *)raw, rl, out);
    ck_assert_uint_eq(n, decode_cases[_i].dec_len);
    ck_assert_uint_le(n, rl);
    ck_assert(memcmp(out, decode_cases[_i].dec, n) == 0);
    ck_assert_uint_eq(out[rl < sizeof out ? rl : 0] == 0xAA || rl == 0, 1);
    /* the parser accepts the same body as a string and hands it out raw */
    char doc[80];
    snprintf(doc, sizeof doc, "\"%s\"", raw);
    stg_arena arena;
    stg_arena_init(&arena, BIG_CAP);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)doc, strlen(doc), 4, &arena);
    stg_json_event ev;
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_STRING);
    ck_assert_uint_eq(ev.str_len, rl);
    ck_assert_int_eq(ev.has_escapes, strchr(raw, '\\') != NULL);
    /* the hash of a decoded key is the hash of its bytes, escaped or not */
    stg_json_hash_key k;
    stg_json_hash_key_init(&k, 12345);
    ck_assert_uint_eq(stg_json_key_hash(&k, out, n),
                      stg_json_key_hash(&k, (const uint8_t *)decode_cases[_i].dec, n));
    stg_json_release(&p);
    stg_arena_release(&arena);
}
END_TEST

/* Bodies the parser would reject (a caller may still hand them over): escapes that cannot be
 * decoded are copied through byte by byte, never read past raw_len, never longer than the raw
 * body. */
START_TEST(test_json_decode_unvalidated)
{
    static const struct {
        const char *raw, *dec;
    } rows[] = {
        {"ab\\", "ab\\"},       /* a backslash as the last byte */
        {"\\x", "\\x"},         /* an escape letter JSON does not have */
        {"\\u12G4", "\\u12G4"}, /* a non-hex digit */
        {"a\\u12", "a\\u12"},   /* cut short */
        {"\\\\\\q", "\\\\q"},   /* a good escape, then a bad one */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t rl = strlen(rows[i].raw);
        uint8_t out[32];
        memset(out, 0xAA, sizeof out);
        size_t n = stg_json_decode((const uint8_t *)rows[i].raw, rl, out);
        ck_assert_uint_eq(n, strlen(rows[i].dec));
        ck_assert_uint_le(n, rl);
        ck_assert_msg(memcmp(out, rows[i].dec, n) == 0, "row %zu", i);
        ck_assert_uint_eq(out[rl], 0xAA);
        /* and the parser refuses each of them as a string body */
        char doc[40];
        snprintf(doc, sizeof doc, "\"%s\"", rows[i].raw);
        stg_arena arena;
        stg_arena_init(&arena, BIG_CAP);
        stg_json_parser p;
        stg_json_init(&p, (const uint8_t *)doc, strlen(doc), 4, &arena);
        stg_json_event ev;
        ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ERROR);
        ck_assert_int_eq(p.error, STG_JSON_E_SYNTAX);
        stg_json_release(&p);
        stg_arena_release(&arena);
    }
}
END_TEST

/* Entry points used out of their usual order: they refuse, consume nothing, and the event
 * stream goes on as if they had not been called. */
START_TEST(test_json_api_edges)
{
    static const char doc[] = "[[1,2],{\"a\":[3]},[4,5]]";
    stg_arena arena;
    stg_arena_init(&arena, BIG_CAP);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)doc, strlen(doc), 8, &arena);
    uint64_t out[4];
    size_t count = 99;
    stg_json_event ev;
    /* before the first event: not just after an ARRAY_BEGIN */
    ck_assert(!stg_json_uint_array(&p, out, 4, &count));
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
    ck_assert_uint_eq(ev.offset, 0);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_NUMBER);
    /* after an element: refused, the next element still comes as an event */
    ck_assert(!stg_json_uint_array(&p, out, 4, &count));
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_NUMBER);
    ck_assert_uint_eq(ev.uint_value, 2);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_END);
    /* just after an OBJECT_BEGIN: refused */
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert(!stg_json_uint_array(&p, out, 4, &count));
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
    ck_assert(stg_json_uint_array(&p, out, 4, &count)); /* the normal use */
    ck_assert_uint_eq(count, 1);
    ck_assert_uint_eq(out[0], 3);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_END);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
    ck_assert(stg_json_uint_array(&p, out, 4, &count));
    ck_assert_uint_eq(count, 2);
    ck_assert_uint_eq(out[1], 5);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_END);
    ck_assert_uint_eq(ev.offset, strlen(doc) - 1);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_END);
    stg_json_release(&p);

    /* skip without a duplicate counter still hands out the first duplicate */
    static const char dups[] = "{\"x\":{\"k\":1,\"j\":{\"k\":0,\"k\":0},\"k\":2},\"y\":0}";
    stg_json_init(&p, (const uint8_t *)dups, strlen(dups), 8, &arena);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    stg_json_event first;
    memset(&first, 0, sizeof first);
    ck_assert_int_eq(stg_json_skip(&p, &ev, NULL, &first), STG_JSON_OBJECT_END);
    ck_assert_int_eq(first.type, STG_JSON_DUPLICATE);
    ck_assert_uint_eq(first.offset, (size_t)(strstr(dups, ",\"k\":0}") - dups) + 1);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY);
    ck_assert_uint_eq(ev.str_len, 1);
    ck_assert_int_eq(ev.str[0], 'y');
    stg_json_release(&p);

    /* no buffer: an empty input, a syntax error at 0 */
    stg_json_init(&p, NULL, 5, 8, &arena);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ERROR);
    ck_assert_int_eq(p.error, STG_JSON_E_SYNTAX);
    ck_assert_uint_eq(p.error_offset, 0);
    stg_json_release(&p);
    stg_arena_release(&arena);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* memory: the documented bound holds, and a capped arena fails cleanly */

static char *make_many_keys(size_t members, int mode, size_t *len)
{
    gen g = {0};
    gen_put(&g, "{");
    for (size_t i = 0; i < members; i++) {
        char key[64];
        switch (mode) {
        case 0: /* distinct tiny keys */
            snprintf(key, sizeof key, "%s\"%zx\":0", i ? "," : "", i);
            break;
        case 1: /* the densest keys: all the same, all empty */
            snprintf(key, sizeof key, "%s\"\":0", i ? "," : "");
            break;
        case 2: /* long escaped keys, every third one repeated */
            snprintf(key, sizeof key, "%s\"\\u0041\\u00e9\\ud83d\\ude00long-key-%zu\":[]",
                     i ? "," : "", i - i % 3);
            break;
        default: /* small nested objects full of keys */
            snprintf(key, sizeof key, "%s\"%zu\":{\"a\":0,\"b\":0,\"a\":1}", i ? "," : "", i % 7);
            break;
        }
        gen_put(&g, key);
    }
    gen_put(&g, "}");
    *len = g.len;
    return g.s;
}

START_TEST(test_json_memory_bound)
{
    static const uint32_t depths[] = {1, 128, STG_JSON_DEPTH_CEILING};
    char *inputs[20];
    size_t lens[20];
    size_t ninputs = 0;
    static const size_t members[] = {10, 1000, 100000};
    for (int mode = 0; mode < 4; mode++) {
        for (size_t m = 0; m < sizeof members / sizeof members[0]; m++) {
            if (ninputs < 12) {
                inputs[ninputs] = make_many_keys(members[m], mode, &lens[ninputs]);
                ninputs++;
            }
        }
    }
    /* deep: a key per level ({"":{"":...), then arrays; and the same cut short after a colon */
    char *deep_obj = nest("{\"\":", "}", STG_JSON_DEPTH_CEILING - 1);
    inputs[ninputs] = deep_obj;
    lens[ninputs++] = strlen(deep_obj);
    inputs[ninputs] = strdup(deep_obj);
    lens[ninputs++] = 4 * (size_t)(STG_JSON_DEPTH_CEILING - 1);
    char *deep_arr = nest("[{\"a\":0,\"a\":", "}]", 1000);
    inputs[ninputs] = deep_arr;
    lens[ninputs++] = strlen(deep_arr);
    /* many keys open on every level at once: 100 levels of 2000 dense keys, then the child */
    gen wide = {0};
    for (int level = 0; level < 100; level++) {
        gen_put(&wide, "{");
        for (int k = 0; k < 2000; k++) {
            gen_put(&wide, "\"\":0,");
        }
        gen_put(&wide, "\"\":");
    }
    gen_put(&wide, "0");
    for (int level = 0; level < 100; level++) {
        gen_put(&wide, "}");
    }
    inputs[ninputs] = wide.s;
    lens[ninputs++] = wide.len;
    /* the same cut right after a key: its colon and value never come */
    inputs[ninputs] = strdup(wide.s);
    lens[ninputs++] = (size_t)50 * 10004 + 1 + 1000 * 5 + 2;
    for (size_t k = 0; k < ninputs; k++) {
        for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
            stg_json_error e;
            size_t off, peak;
            run_all(inputs[k], lens[k], depths[d], BIG_CAP, &e, &off, &peak);
            uint64_t bound = stg_json_memory_bound(lens[k], depths[d]);
            ck_assert_msg(peak <= bound, "input %zu (%zu bytes) depth %u: peak %zu > bound %llu", k,
                          lens[k], depths[d], peak, (unsigned long long)bound);
            ck_assert_int_ne(e, STG_JSON_E_MEMORY);
        }
        free(inputs[k]);
    }
    /* the formula itself: monotonic, and linear with a small constant */
    ck_assert_uint_le(stg_json_memory_bound(0, 1), stg_json_memory_bound(1000, 1));
    ck_assert_uint_le(stg_json_memory_bound(1000, 1), stg_json_memory_bound(1000, 4096));
    ck_assert_uint_le(stg_json_memory_bound(100000000, 128), 13ull * 100000000 + 200000);
    ck_assert_uint_eq(stg_json_memory_bound(UINT64_MAX, 128), UINT64_MAX); /* saturates */
    ck_assert_uint_eq(stg_json_memory_bound(1000, 0), stg_json_memory_bound(1000, 1));
    ck_assert_uint_eq(stg_json_memory_bound(1000, UINT32_MAX),
                      stg_json_memory_bound(1000, STG_JSON_DEPTH_CEILING));
}
END_TEST

/* With any cap, the stream is the uncapped one, or a prefix of it ending in a memory error. */
START_TEST(test_json_memory_cap)
{
    size_t len;
    char *in = make_many_keys(3000, 3, &len);
    gen g = {0};
    gen_put(&g, "[");
    gen_put(&g, in);
    gen_put(&g, ",");
    free(in);
    in = make_many_keys(5000, 0, &len);
    gen_put(&g, in);
    gen_put(&g, "]");
    free(in);
    size_t full_peak = 0;
    char *want = render((const uint8_t *)g.s, g.len, 8, BIG_CAP, &full_peak);
    ck_assert_ptr_nonnull(strstr(want, "$@"));
    size_t fails = 0;
    for (size_t cap = 0; cap <= full_peak + 4096; cap += cap < 70000 ? 4999 : 16411) {
        size_t peak;
        char *got = render((const uint8_t *)g.s, g.len, 8, cap, &peak);
        REQ_CMP_LE(peak, cap);
        if (strcmp(got, want) != 0) {
            char *err = strstr(got, "Ememory@");
            ck_assert_msg(err != NULL, "cap %zu: %s", cap, got);
            ck_assert_str_eq(err + strcspn(err, " "), ""); /* the error ends the stream */
            size_t prefix = (size_t)(err - got);
            ck_assert(strncmp(got, want, prefix) == 0);
            fails++;
        }
        free(got);
    }
    ck_assert_uint_gt(fails, 5);
    /* no budget at all: the first event is the error, at offset 0 */
    char *none = render((const uint8_t *)"{}", 2, 8, 0, NULL);
    ck_assert_str_eq(none, "Ememory@0");
    free(none);
    free(want);
    free(g.s);
}
END_TEST

START_TEST(test_json_release_mid_parse)
{
    const char *in = "{\"a\":[1,2],\"b\":3}";
    stg_arena arena;
    stg_arena_init(&arena, BIG_CAP);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)in, strlen(in), 8, &arena);
    stg_json_event ev;
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY);
    size_t before = arena.reserved;
    stg_json_release(&p);
    ck_assert_uint_lt(arena.reserved, before); /* the key stack went back to the budget */
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ERROR);
    stg_json_release(&p); /* twice is harmless */
    stg_arena_release(&arena);
}
END_TEST

/* Unsigned integers of every length, at every distance from the end of the input (the digit
 * reader takes 8 bytes at a time when it can), against strtoull. */
START_TEST(test_json_uint_values)
{
    rng_state = 777;
    char doc[64];
    for (int round = 0; round < 5000; round++) {
        uint64_t v = ((uint64_t)rng() << 32 | rng()) >> (rng() % 64);
        int tail = (int)(rng() % 10); /* bytes after the number */
        int n = snprintf(doc, sizeof doc, "[%llu%.*s", (unsigned long long)v, tail, "]         ");
        if (tail == 0) {
            n = snprintf(doc, sizeof doc, "%llu", (unsigned long long)v);
        }
        stg_arena arena;
        stg_arena_init(&arena, BIG_CAP);
        stg_json_parser p;
        stg_json_init(&p, (const uint8_t *)doc, (size_t)n, 4, &arena);
        stg_json_event ev;
        stg_json_type t = stg_json_next(&p, &ev);
        if (tail > 0) {
            REQ_CMP_EQ(t, STG_JSON_ARRAY_BEGIN);
            t = stg_json_next(&p, &ev);
        }
        REQ_CMP_EQ(t, STG_JSON_NUMBER);
        REQ(ev.is_uint && !ev.uint_overflow);
        REQ_CMP_EQ(ev.uint_value, v);
        REQ_CMP_EQ(ev.uint_value, strtoull(doc + ev.offset, NULL, 10));
        stg_json_release(&p);
        stg_arena_release(&arena);
    }
    /* 20 digits and more: overflow exactly from 2^64 on */
    static const struct {
        const char *in;
        bool overflow;
        uint64_t value;
    } big[] = {
        {"10000000000000000000", false, 10000000000000000000ull},
        {"18446744073709551615", false, UINT64_MAX},
        {"18446744073709551616", true, 0},
        {"18446744073709551619", true, 0},
        {"18446744073709551700", true, 0},
        {"19000000000000000000", true, 0},
        {"99999999999999999999", true, 0},
        {"100000000000000000000", true, 0},
        {"00", false, 0}, /* a syntax error, see below */
    };
    for (size_t k = 0; k + 1 < sizeof big / sizeof big[0]; k++) {
        char *r = render_str(big[k].in, strlen(big[k].in), 4);
        char want[128];
        if (big[k].overflow) {
            snprintf(want, sizeof want, "n%so $@%zu", big[k].in, strlen(big[k].in));
        } else {
            snprintf(want, sizeof want, "n%su%llu $@%zu", big[k].in,
                     (unsigned long long)big[k].value, strlen(big[k].in));
        }
        ck_assert_str_eq(r, want);
        free(r);
    }
}
END_TEST

Suite *json_suite(void);
Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_json_table, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_json_token_offsets);
    tcase_add_test(tc, test_json_rest_is_ws);
    tcase_add_test(tc, test_json_depth_exact);
    tcase_add_test(tc, test_json_dups_random);
    tcase_add_test(tc, test_json_dups_all_same);
    tcase_add_test(tc, test_json_hash_flood);
    tcase_add_test(tc, test_json_hash_flood_other_seed);
    tcase_add_test(tc, test_json_skip_elided);
    tcase_add_test(tc, test_json_flood_after_repeats);
    tcase_add_test(tc, test_json_flood_with_copies);
    tcase_add_loop_test(tc, test_json_f64_range, 0,
                        (int)(sizeof range_cases / sizeof range_cases[0]));
    tcase_add_test(tc, test_json_skip);
    tcase_add_test(tc, test_json_skip_many_repeats);
    tcase_add_loop_test(tc, test_json_compact_object, 0,
                        (int)(sizeof compact_cases / sizeof compact_cases[0]));
    tcase_add_test(tc, test_json_compact_form_keys);
    tcase_add_test(tc, test_json_many_keys_repeats);
    tcase_add_test(tc, test_json_uint_values);
    tcase_add_test(tc, test_json_memory_bound);
    tcase_add_test(tc, test_json_memory_cap);
    tcase_add_test(tc, test_json_release_mid_parse);
    tcase_add_loop_test(tc, test_json_decode, 0,
                        (int)(sizeof decode_cases / sizeof decode_cases[0]));
    tcase_add_test(tc, test_json_decode_unvalidated);
    tcase_add_test(tc, test_json_api_edges);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(json_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
