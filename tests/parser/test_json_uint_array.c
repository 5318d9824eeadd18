/* parser/json: stg_json_uint_array, the fast path for arrays of plain unsigned integers, gives
 * exactly what the event path gives (same values, same following events), and declines (consuming
 * nothing) whenever the event path would see anything else. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/arena.h"
#include "parser/json.h"

#define CAP ((size_t)1 << 26)

/* Parses doc = `{"k":ARRAY,"z":1}` up to the array's ARRAY_BEGIN, then calls the fast path. */
typedef struct fixture {
    stg_arena arena;
    stg_json_parser p;
} fixture;

static void open_at_array(fixture *f, const char *doc)
{
    stg_arena_init(&f->arena, CAP);
    stg_json_init(&f->p, (const uint8_t *)doc, strlen(doc), 64, &f->arena);
    stg_json_event ev;
    ck_assert_int_eq(stg_json_next(&f->p, &ev), STG_JSON_OBJECT_BEGIN);
    ck_assert_int_eq(stg_json_next(&f->p, &ev), STG_JSON_KEY);
    ck_assert_int_eq(stg_json_next(&f->p, &ev), STG_JSON_ARRAY_BEGIN);
}

static void close_fixture(fixture *f)
{
    stg_json_release(&f->p);
    stg_arena_release(&f->arena);
}

/* The rest of the event stream as text: type and offset per event, plus error kind/offset. */
static void rest_of_stream(stg_json_parser *p, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = 0;
    for (int guard = 0; guard < 1000; guard++) {
        stg_json_event ev;
        stg_json_type t = stg_json_next(p, &ev);
        int w = snprintf(out + used, cap - used, "%d@%zu/%llu ", (int)t, ev.offset,
                         (unsigned long long)ev.uint_value);
        ck_assert(w > 0 && (size_t)w < cap - used);
        used += (size_t)w;
        if (t == STG_JSON_END) {
            return;
        }
        if (t == STG_JSON_ERROR) {
            snprintf(out + used, cap - used, "E%d@%zu", (int)p->error, p->error_offset);
            return;
        }
    }
    ck_abort_msg("event stream does not end");
}

/* The event path's reading of the array: values if all are plain non-overflowing integers. */
static int event_path(stg_json_parser *p, uint64_t *vals, size_t max, size_t *count)
{
    size_t k = 0;
    int plain = 1;
    for (;;) {
        stg_json_event ev;
        stg_json_type t = stg_json_next(p, &ev);
        if (t == STG_JSON_ARRAY_END && ev.depth == 1) {
            break;
        }
        if (t == STG_JSON_ERROR || t == STG_JSON_END) {
            return -1;
        }
        if (t == STG_JSON_NUMBER && ev.is_uint && !ev.uint_overflow && k < max) {
            vals[k++] = ev.uint_value;
        } else {
            plain = 0;
            if (t == STG_JSON_OBJECT_BEGIN || t == STG_JSON_ARRAY_BEGIN) {
                if (stg_json_skip(p, &ev, NULL, NULL) == STG_JSON_ERROR) {
                    return -1;
                }
            }
        }
    }
    *count = k;
    return plain;
}

/* Checks one array text against the event path: when the fast path accepts, the values and the
 * rest of the stream match; when it declines, the stream is untouched. Returns its verdict. */
static bool check_array(const char *array, size_t max)
{
    char doc[512], fast_rest[4096], slow_rest[4096];
    snprintf(doc, sizeof doc, "{\"k\":%s,\"z\":1}", array);
    fixture a, b;
    uint64_t fv[16], sv[16];
    size_t fc = 99, sc = 0;
    open_at_array(&a, doc);
    bool took = stg_json_uint_array(&a.p, fv, max, &fc);
    open_at_array(&b, doc);
    if (took) {
        ck_assert_msg(event_path(&b.p, sv, max, &sc) == 1, "fast path took %s", array);
        ck_assert_uint_eq(fc, sc);
        for (size_t i = 0; i < fc; i++) {
            ck_assert_uint_eq(fv[i], sv[i]);
        }
    } else {
        ck_assert_uint_eq(fc, 99); /* nothing written to *count */
    }
    rest_of_stream(&a.p, fast_rest, sizeof fast_rest);
    rest_of_stream(&b.p, slow_rest, sizeof slow_rest);
    ck_assert_msg(strcmp(fast_rest, slow_rest) == 0, "%s: %s vs %s", array, fast_rest, slow_rest);
    close_fixture(&a);
    close_fixture(&b);
    return took;
}

START_TEST(test_uint_array_accepts)
{
    ck_assert(check_array("[]", 8));
    ck_assert(check_array("[ ]", 8));
    ck_assert(check_array("[0]", 8));
    ck_assert(check_array("[4096,4096]", 8));
    ck_assert(check_array("[ 1 ,\t2\n,\r3 ]", 8));
    ck_assert(check_array("[9999999999999999999]", 8)); /* 19 digits */
    ck_assert(check_array("[1234567890123456789,0]", 8));
    ck_assert(check_array("[12345678,123456789,1234567]", 8));
    ck_assert(check_array("[1,2]", 2));
    ck_assert(check_array("[]", 0));
}
END_TEST

START_TEST(test_uint_array_declines)
{
    ck_assert(!check_array("[1,2,3]", 2)); /* more than max */
    ck_assert(!check_array("[1]", 0));
    ck_assert(!check_array("[18446744073709551615]", 8)); /* 20 digits: may overflow */
    ck_assert(!check_array("[18446744073709551616]", 8));
    ck_assert(!check_array("[00]", 8));
    ck_assert(!check_array("[01]", 8));
    ck_assert(!check_array("[-1]", 8));
    ck_assert(!check_array("[-0]", 8));
    ck_assert(!check_array("[1.0]", 8));
    ck_assert(!check_array("[1e3]", 8));
    ck_assert(!check_array("[1E3]", 8));
    ck_assert(!check_array("[0.5]", 8));
    ck_assert(!check_array("[1,]", 8));
    ck_assert(!check_array("[,1]", 8));
    ck_assert(!check_array("[1 2]", 8));
    ck_assert(!check_array("[1,\"2\"]", 8));
    ck_assert(!check_array("[[1]]", 8));
    ck_assert(!check_array("[1,null]", 8));
    ck_assert(!check_array("[1}", 8));
    ck_assert(!check_array("[12345678x]", 8));
}
END_TEST

/* Not right after an ARRAY_BEGIN, or at the end of the input: declines, consumes nothing. */
START_TEST(test_uint_array_wrong_place)
{
    static const char *cut[] = {"{\"k\":[", "{\"k\":[1", "{\"k\":[1,", "{\"k\":[12345678901",
                                "{\"k\":[1 "};
    for (size_t c = 0; c < sizeof cut / sizeof cut[0]; c++) {
        stg_arena arena;
        stg_arena_init(&arena, CAP);
        stg_json_parser p;
        stg_json_init(&p, (const uint8_t *)cut[c], strlen(cut[c]), 64, &arena);
        stg_json_event ev;
        ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_OBJECT_BEGIN);
        uint64_t v[4];
        size_t n = 7;
        ck_assert(!stg_json_uint_array(&p, v, 4, &n)); /* inside an object, not an array */
        ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_KEY);
        ck_assert(!stg_json_uint_array(&p, v, 4, &n));
        ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
        ck_assert(!stg_json_uint_array(&p, v, 4, &n)); /* input cut inside the array */
        ck_assert_uint_eq(n, 7);
        stg_json_type t;
        while ((t = stg_json_next(&p, &ev)) != STG_JSON_ERROR) {
            ck_assert_int_ne(t, STG_JSON_END);
        }
        ck_assert_int_eq(p.error, STG_JSON_E_SYNTAX);
        ck_assert_uint_eq(p.error_offset, strlen(cut[c]));
        ck_assert(!stg_json_uint_array(&p, v, 4, &n)); /* after an error */
        stg_json_release(&p);
        stg_arena_release(&arena);
    }
    /* a top-level array (depth 1) and after the END */
    stg_arena arena;
    stg_arena_init(&arena, CAP);
    stg_json_parser p;
    const char *doc = "[7,8] ";
    stg_json_init(&p, (const uint8_t *)doc, strlen(doc), 64, &arena);
    stg_json_event ev;
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_ARRAY_BEGIN);
    uint64_t v[4];
    size_t n = 0;
    ck_assert(stg_json_uint_array(&p, v, 4, &n));
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(v[0], 7);
    ck_assert_uint_eq(v[1], 8);
    ck_assert_int_eq(stg_json_next(&p, &ev), STG_JSON_END);
    ck_assert_uint_eq(ev.offset, 5);
    ck_assert(!stg_json_uint_array(&p, v, 4, &n));
    stg_json_release(&p);
    stg_arena_release(&arena);
}
END_TEST

/* Random arrays of numbers, spacing and the odd non-integer, against the event path. */
START_TEST(test_uint_array_random)
{
    srand(12345);
    static const char *odd[] = {"-1",
                                "1.5",
                                "2e3",
                                "01",
                                "true",
                                "\"7\"",
                                "[]",
                                "{}",
                                "00",
                                "12345678901234567890",
                                "99999999999999999999999"};
    static const char *ws[] = {"", "", "", " ", "\n", " \t "};
    size_t took = 0;
    for (int iter = 0; iter < 4000; iter++) {
        char arr[400];
        size_t len = 0;
        int count = rand() % 6;
        len += (size_t)snprintf(arr + len, sizeof arr - len, "[%s", ws[rand() % 6]);
        for (int k = 0; k < count; k++) {
            if (k > 0) {
                len += (size_t)snprintf(arr + len, sizeof arr - len, "%s,%s", ws[rand() % 6],
                                        ws[rand() % 6]);
            }
            if (rand() % 25 == 0) {
                len += (size_t)snprintf(arr + len, sizeof arr - len, "%s", odd[rand() % 11]);
            } else {
                int digits = 1 + rand() % 19;
                for (int d = 0; d < digits; d++) {
                    arr[len++] = (char)('0' + (d == 0 ? 1 + rand() % 9 : rand() % 10));
                }
                arr[len] = 0;
                if (rand() % 10 == 0) {
                    arr[len - (size_t)digits] = '0';
                    arr[len - (size_t)digits + 1] = 0;
                    len = len - (size_t)digits + 1;
                }
            }
        }
        snprintf(arr + len, sizeof arr - len, "%s]", ws[rand() % 6]);
        took += check_array(arr, (size_t)(rand() % 7)) ? 1u : 0u;
    }
    ck_assert_uint_gt(took, 500); /* both verdicts well exercised */
    ck_assert_uint_lt(took, 3800);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("json_uint_array");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_uint_array_accepts);
    tcase_add_test(tc, test_uint_array_declines);
    tcase_add_test(tc, test_uint_array_wrong_place);
    tcase_add_test(tc, test_uint_array_random);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
