/* parser/json: event sequences, error kinds and offsets, duplicates, depth, numbers, memory. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parser/arena.h"
#include "parser/json.h"

#define DEFAULT_DEPTH 64u
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
        ck_assert_ptr_nonnull(t->s);
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
    ck_assert_ptr_nonnull(dec);
    size_t n = stg_json_decode(ev->str, ev->str_len, dec);
    ck_assert_uint_le(n, ev->str_len);
    if (!ev->has_escapes) {
        ck_assert_uint_eq(n, ev->str_len);
        ck_assert(memcmp(dec, ev->str, n) == 0);
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
    case STG_JSON_E_NONE:
        return "none";
    case STG_JSON_E_SYNTAX:
        return "syntax";
    case STG_JSON_E_UTF8:
        return "utf8";
    case STG_JSON_E_DEPTH:
        return "depth";
    case STG_JSON_E_MEMORY:
        return "memory";
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
        ck_assert_uint_lt(count, 10 * len + 10);
        stg_json_type ty = stg_json_next(&p, &ev);
        ck_assert_int_eq(ty, ev.type);
        if (t.len > 0) {
            text_put(&t, " ", 1);
        }
        switch (ty) {
        case STG_JSON_OBJECT_BEGIN:
        case STG_JSON_ARRAY_BEGIN:
            ck_assert_uint_eq(ev.depth, open);
            open++;
            text_put(&t, ty == STG_JSON_OBJECT_BEGIN ? "{" : "[", 1);
            break;
        case STG_JSON_OBJECT_END:
        case STG_JSON_ARRAY_END:
            ck_assert_uint_gt(open, 0);
            open--;
            ck_assert_uint_eq(ev.depth, open);
            text_put(&t, ty == STG_JSON_OBJECT_END ? "}" : "]", 1);
            break;
        case STG_JSON_KEY:
            ck_assert_uint_eq(ev.depth, open);
            text_put(&t, "k", 1);
            text_str(&t, &ev);
            break;
        case STG_JSON_STRING:
            ck_assert_uint_eq(ev.depth, open);
            text_put(&t, "s", 1);
            text_str(&t, &ev);
            break;
        case STG_JSON_NUMBER:
            ck_assert_uint_eq(ev.depth, open);
            text_fmt(&t, "n%.*s", (int)ev.len, (const char *)in + ev.offset);
            if (ev.is_uint && ev.uint_overflow) {
                text_put(&t, "o", 1);
            } else if (ev.is_uint) {
                text_fmt(&t, "u%llu", (unsigned long long)ev.uint_value);
            }
            break;
        case STG_JSON_TRUE:
            text_put(&t, "t", 1);
            break;
        case STG_JSON_FALSE:
            text_put(&t, "f", 1);
            break;
        case STG_JSON_NULL:
            text_put(&t, "z", 1);
            break;
        case STG_JSON_DUPLICATE:
            ck_assert_uint_eq(ev.depth, open);
            ck_assert_uint_lt(ev.prev_offset, ev.offset);
            text_fmt(&t, "D@%zu<%zu", ev.offset, ev.prev_offset);
            break;
        case STG_JSON_END:
            ck_assert_uint_eq(open, 0);
            text_fmt(&t, "$@%zu", ev.offset);
            break;
        case STG_JSON_ERROR:
            ck_assert_uint_le(p.error_offset, len);
            text_fmt(&t, "E%s@%zu", error_name(p.error), p.error_offset);
            break;
        case STG_JSON_NONE:
            ck_abort_msg("NONE event");
        }
        if (ty == STG_JSON_END || ty == STG_JSON_ERROR) {
            /* sticky */
            stg_json_event again;
            ck_assert_int_eq(stg_json_next(&p, &again), ty);
            ck_assert_uint_eq(again.offset, ev.offset);
            break;
        }
    }
    stg_json_release(&p);
    ck_assert_uint_eq(arena.reserved <= arena.peak, 1);
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
    {"utf8 edges", "\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"", 0,
     "s\\xc2\\x80\\xdf\\xbf\\xe0\\xa0\\x80\\xef\\xbf\\xbf\\xf0\\x90\\x80\\x80\\xf4\\x8f\\xbf\\xbf $@20"},
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
        {STG_JSON_OBJECT_BEGIN, 0, 1, 0}, {STG_JSON_KEY, 2, 4, 1},    {STG_JSON_ARRAY_BEGIN, 9, 1, 1},
        {STG_JSON_NUMBER, 11, 2, 2},      {STG_JSON_STRING, 16, 5, 2}, {STG_JSON_TRUE, 24, 4, 2},
        {STG_JSON_ARRAY_END, 29, 1, 1},   {STG_JSON_OBJECT_END, 31, 1, 0}, {STG_JSON_END, 32, 0, 0},
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

Suite *json_suite(void);
Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_json_table, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_json_token_offsets);
    tcase_add_test(tc, test_json_rest_is_ws);
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
