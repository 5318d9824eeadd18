/* parser/npy: .npy headers as numpy.lib.format reads them. Each rule has a trigger and a near
 * miss; failures assert their offset. The differential test against numpy itself is
 * tests/differential/script_npy_differential.sh. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/npy.h"
#include "testutil.h"
#include "dispatch/check.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

#define HDR(d, s) "{'descr': " d ", 'fortran_order': False, 'shape': " s ", }"

/* A .npy prefix: magic, version, length, header text (no padding needed by numpy). */
static uint8_t *npy_file(const char *header, int version, size_t data, size_t *len)
{
    size_t hl = strlen(header), pre = version == 1 ? 10 : 12;
    *len = pre + hl + data;
    uint8_t *b = calloc(1, *len);
    ck_assert_ptr_nonnull(b);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)version;
    b[7] = 0;
    b[8] = (uint8_t)(hl & 0xFF);
    b[9] = (uint8_t)(hl >> 8);
    memcpy(b + pre, header, hl);
    return b;
}

static stg_parse_status read_hdr(const uint8_t *b, size_t len, stg_npy_header *h,
                                 stg_npy_error *err, const stg_npy_limits *lim_in)
{
    stg_limits def;
    stg_limits_default(&def);
    stg_npy_limits lim = {def.max_header_len, def.max_json_depth, def.max_metadata_entries};
    if (lim_in != NULL) {
        lim = *lim_in;
    }
    size_t cap = stg_npy_nodes_needed(b, len, &lim);
    stg_pylit_node *nodes = calloc(cap + 1, sizeof *nodes);
    stg_npy_dtype *sc = calloc(cap + 1, sizeof *sc);
    ck_assert(nodes != NULL && sc != NULL);
    stg_parse_status st = stg_npy_read(b, len, &lim, nodes, sc, cap, h, err);
    free(nodes);
    free(sc);
    return st;
}

static const struct {
    const char *name, *header;
    bool has_object;
    uint64_t itemsize;
} good[] = {
    {"f4", HDR("'<f4'", "(2,)"), false, 4},
    {"object", HDR("'object'", "(2,)"), true, 8},
    {"object_", HDR("'object_'", "(2,)"), true, 8},
    {"object0", HDR("'object0'", "(2,)"), true, 8},
    {"O8", HDR("'O8'", "(2,)"), true, 8},
    {"|O", HDR("'|O'", "(2,)"), true, 8},
    {"<O", HDR("'<O'", "(2,)"), true, 8},
    {"escaped O", HDR("'\\x4f'", "(2,)"), true, 8},
    {"unicode-escaped O", HDR("u'\\u004F'", "(2,)"), true, 8},
    {"octal O", HDR("'\\117'", "(2,)"), true, 8},
    {"raw O", HDR("r'O'", "(2,)"), true, 8},
    {"paren O", HDR("('O')", "(2,)"), true, 8},
    {"subarray O", HDR("('O', (2,))", "(2,)"), true, 16},
    {"subarray f4", HDR("('<f4', (3,))", "(2,)"), false, 12},
    {"subarray int", HDR("('<f4', 3)", "(2,)"), false, 12},
    {"flexible from int", HDR("('U', 5)", "(2,)"), false, 20},
    {"nested object", HDR("[('a', '<f4'), ('b', [('c', 'O')])]", "(2,)"), true, 12},
    {"lists as fields", HDR("[['a', '<f4'], ['b', [['c', '|O']]]]", "(2,)"), true, 12},
    {"title", HDR("[(('t', 'a'), 'O')]", "(2,)"), true, 8},
    {"field subarray", HDR("[('a', '<i2', (2, 3))]", "(2,)"), false, 12},
    {"padding", HDR("[('a', '<f4'), ('', '|V4')]", "(2,)"), false, 8},
    {"object padding skipped", HDR("[('', 'O', (2,))]", "(2,)"), false, 16},
    {"empty name object kept", HDR("[('', '|O')]", "(2,)"), true, 8},
    {"names", HDR("'float32'", "(2,)"), false, 4},
    {"letter", HDR("'d'", "(2,)"), false, 8},
    {"datetime", HDR("'<M8[ns]'", "(2,)"), false, 8},
    {"datetime name", HDR("'datetime64[10ms]'", "(2,)"), false, 8},
    {"unicode", HDR("'<U3'", "(2,)"), false, 12},
    {"c is S1", HDR("'c'", "(2,)"), false, 1},
    {"last key wins", "{'descr': '<f4', 'descr': 'O', 'fortran_order': False, 'shape': (2,)}", true,
     8},
    {"comment and newlines", "{'descr': '<f4', # x\n'fortran_order': False,\n'shape': (2,)}", false,
     4},
    {"py2 long", HDR("'<f4'", "(2L,)"), false, 4},
    {"hex dims", HDR("'<f4'", "(0x2,)"), false, 4},
};

START_TEST(test_good)
{
    size_t len;
    uint8_t *b = npy_file(good[_i].header, 1, 0, &len);
    stg_npy_header h;
    stg_npy_error err;
    stg_parse_status st = read_hdr(b, len, &h, &err, NULL);
    ck_assert_msg(st == STG_PARSE_OK, "%s: %s at %zu", good[_i].name, err.what, err.offset);
    ck_assert_msg(h.dtype.has_object == good[_i].has_object, "%s: has_object", good[_i].name);
    ck_assert_msg(h.dtype.itemsize == good[_i].itemsize, "%s: itemsize %llu", good[_i].name,
                  (unsigned long long)h.dtype.itemsize);
    ck_assert_uint_eq(h.count, 2);
    ck_assert(h.count_known);
    ck_assert_uint_eq(h.data_offset, len);
    free(b);
}
END_TEST

/* Failures: the offset is the byte (from the file start) numpy's reading breaks at; for a
 * descriptor string, its first byte after the quote. */
static const struct {
    const char *name, *header;
    size_t offset; /* in the header text; the file adds 10 */
} bad[] = {
    {"comma string", HDR("'i4,O'", "(2,)"), 11},
    {"shape string", HDR("'(2,)O'", "(2,)"), 11},
    {"two-char field", HDR("['aO']", "(2,)"), 10},
    {"named escape", HDR("'\\N{LATIN CAPITAL LETTER O}'", "(2,)"), 11},
    {"O2", HDR("'O2'", "(2,)"), 11},
    {"f3", HDR("'<f3'", "(2,)"), 11},
    {"name with order", HDR("'<float32'", "(2,)"), 11},
    {"negative subarray", HDR("('<f4', (-1,))", "(2,)"), 10},
    {"bool subarray", HDR("('<f4', True)", "(2,)"), 10},
    {"duplicate field", HDR("[('a', '<f4'), ('a', 'O')]", "(2,)"), 10},
    {"field name int", HDR("[(1, 'O')]", "(2,)"), 10},
    {"bytes descr", HDR("b'<f4'", "(2,)"), 12},
    {"name", HDR("object", "(2,)"), 10},
    {"triple quotes", HDR("'''O'''", "(2,)"), 10},
    {"set", "{'descr', 'shape'}", 8},
    {"extra key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 57},
    {"missing key", "{'descr': '<f4', 'shape': (2,)}", 0},
    {"fortran int", "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 34},
    {"shape int", "{'descr': '<f4', 'fortran_order': False, 'shape': 2}", 50},
    {"shape float", "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}", 51},
    {"shape too big", "{'descr': 'O', 'fortran_order': False, 'shape': (9223372036854775808,)}",
     49},
    {"leading zero", "{'descr': 'O', 'fortran_order': False, 'shape': (02,)}", 49},
    {"unclosed", "{'descr': 'O', 'fortran_order': False, 'shape': (2,)", 52},
    {"trailing", "{'descr': 'O', 'fortran_order': False, 'shape': (2,)} x", 54},
    {"NUL", "{'descr': 'O', 'fortran_order': False, 'shape': (2,)}\0", 53},
    {"indented later line", "\n {'descr': 'O', 'fortran_order': False, 'shape': (2,)}", 2},
    {"truncated escape", HDR("'\\x4'", "(2,)"), 11},
    {"string across lines", HDR("'O\n'", "(2,)"), 12},
};

START_TEST(test_bad)
{
    size_t hl = strlen(bad[_i].header);
    if (strcmp(bad[_i].name, "NUL") == 0) {
        hl++; /* the NUL is part of the header */
    }
    char *h = malloc(hl + 1);
    memcpy(h, bad[_i].header, hl);
    h[hl] = 0;
    size_t len = 10 + hl;
    uint8_t *b = npy_file("", 1, hl, &len);
    b[8] = (uint8_t)hl;
    memcpy(b + 10, h, hl);
    stg_npy_header hd;
    stg_npy_error err;
    stg_parse_status st = read_hdr(b, len, &hd, &err, NULL);
    ck_assert_msg(st == STG_PARSE_MALFORMED, "%s: status %d", bad[_i].name, (int)st);
    ck_assert_msg(err.offset == 10 + bad[_i].offset, "%s: offset %zu (%s)", bad[_i].name,
                  err.offset, err.what);
    free(b);
    free(h);
}
END_TEST

START_TEST(test_frame)
{
    size_t len;
    uint8_t *b = npy_file(HDR("'<f4'", "(2,)"), 1, 0, &len);
    stg_npy_header h;
    stg_npy_error err;
    b[7] = 1; /* version 1.1: numpy reads only x.0 */
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(err.offset, 6);
    b[7] = 0;
    b[6] = 4;
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(err.offset, 6);
    b[6] = 1;
    ck_assert_int_eq(read_hdr(b, len - 1, &h, &err, NULL), STG_PARSE_MALFORMED); /* header cut */
    ck_assert_uint_eq(err.offset, 8);
    ck_assert_int_eq(read_hdr(b, 9, &h, &err, NULL), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(err.offset, 8);
    b[0] = 'X';
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(err.offset, 0);
    free(b);
    /* version 3.0 is UTF-8: a latin-1 byte in a field name is refused there, read in 1.0 */
    static const char latin[] = HDR("[('\xe9', '<f4')]", "(2,)");
    b = npy_file(latin, 1, 0, &len);
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_OK);
    free(b);
    b = npy_file(latin, 3, 0, &len);
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(err.offset, 12 + 13);
    free(b);
    /* the Python 2 long suffix is dropped only for 1.0 and 2.0 */
    b = npy_file(HDR("'<f4'", "(2L,)"), 3, 0, &len);
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_MALFORMED);
    free(b);
    /* negative dimension: read (numpy reads it), but the count is unknown */
    b = npy_file(HDR("'O'", "(-1, 2)"), 1, 0, &len);
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_OK);
    ck_assert(!h.count_known);
    ck_assert(h.dtype.has_object);
    free(b);
    /* fortran_order and 0-d */
    b = npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': ()}", 2, 8, &len);
    ck_assert_int_eq(read_hdr(b, len, &h, &err, NULL), STG_PARSE_OK);
    ck_assert(h.fortran_order);
    ck_assert_uint_eq(h.count, 1);
    ck_assert_uint_eq(h.ndim, 0);
    ck_assert_uint_eq(h.data_offset, len - 8);
    free(b);
}
END_TEST

START_TEST(test_limits)
{
    /* 198 brackets deep: Python reads it; 200: "too many nested parentheses" */
    for (int levels = 99; levels <= 100; levels++) {
        static char hdr[4096];
        size_t n = 0;
        n += (size_t)snprintf(hdr + n, sizeof hdr - n, "{'descr': ");
        for (int d = 0; d < levels; d++) {
            n += (size_t)snprintf(hdr + n, sizeof hdr - n, "[('a', ");
        }
        n += (size_t)snprintf(hdr + n, sizeof hdr - n, "'O'");
        for (int d = 0; d < levels; d++) {
            n += (size_t)snprintf(hdr + n, sizeof hdr - n, ")]");
        }
        snprintf(hdr + n, sizeof hdr - n, ", 'fortran_order': False, 'shape': (1,)}");
        size_t len;
        uint8_t *b = npy_file(hdr, 1, 0, &len);
        stg_npy_header h;
        stg_npy_error err;
        stg_npy_limits deep = {100000, STG_NPY_DEPTH_CEILING, 100000};
        stg_parse_status st = read_hdr(b, len, &h, &err, &deep);
        ck_assert_int_eq(st, levels == 99 ? STG_PARSE_OK : STG_PARSE_MALFORMED);
        ck_assert(st != STG_PARSE_OK || h.dtype.has_object);
        free(b);
    }
    /* max_json_depth and max_metadata_entries at the limit and one past it */
    size_t len;
    uint8_t *b = npy_file(HDR("[('a', [('b', 'O')])]", "(2,)"), 1, 0, &len);
    stg_npy_limits lim = {1000, 5, 100};
    stg_npy_header h;
    stg_npy_error err;
    ck_assert_int_eq(read_hdr(b, len, &h, &err, &lim), STG_PARSE_OK);
    lim.max_depth = 4;
    ck_assert_int_eq(read_hdr(b, len, &h, &err, &lim), STG_PARSE_LIMIT);
    ck_assert_str_eq(err.limit, "max_json_depth");
    ck_assert_uint_eq(err.offset, 10 + 18); /* the fifth bracket */
    lim.max_depth = 5;
    lim.max_nodes = 13; /* 14 values: dict, 3 keys, 7 in the descriptor, False, shape and 2 */
    ck_assert_int_eq(read_hdr(b, len, &h, &err, &lim), STG_PARSE_LIMIT);
    ck_assert_str_eq(err.limit, "max_metadata_entries");
    lim.max_nodes = 14;
    ck_assert_int_eq(read_hdr(b, len, &h, &err, &lim), STG_PARSE_OK);
    lim.max_header_len = len - 11;
    ck_assert_int_eq(read_hdr(b, len, &h, &err, &lim), STG_PARSE_LIMIT);
    ck_assert_str_eq(err.limit, "max_header_len");
    lim.max_header_len = len - 10;
    ck_assert_int_eq(read_hdr(b, len, &h, &err, &lim), STG_PARSE_OK);
    free(b);
}
END_TEST

/* Through the validator: objects at any depth are scanned as a pickle; plain types must have
 * exactly count x itemsize data bytes. */
static stg_report *check(const char *header, const char *data, size_t dl)
{
    size_t len;
    uint8_t *b = npy_file(header, 1, dl, &len);
    memcpy(b + len - dl, data, dl);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    (void)stg_check_npy(b, len, 0, &ctx);
    stg_report_finish(r);
    free(b);
    return r;
}

START_TEST(test_validator)
{
    static const char evil[] = "cos\nsystem\n(S'true'\ntR.";
    stg_report *r = check(HDR("[('a', '<f4'), ('b', [('c', 'object')])]", "(1,)"), evil,
                          sizeof evil - 1);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_UNSAFE, "%s", tu_describe(r));
    stg_report_free(r);
    /* near miss: the same type without the object is data, sized */
    r = check(HDR("[('a', '<f4'), ('b', [('c', '<f4')])]", "(2,)"),
              "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    r = check(HDR("('<f4', (2,))", "(3,)"), "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 23);
    const stg_finding *f = stg_report_at(r, (size_t)tu_find(r, STG_CONTAINER_MALFORMED));
    ck_assert_uint_eq(f->offset, 10 + strlen(HDR("('<f4', (2,))", "(3,)")));
    stg_report_free(r);
    /* a descriptor the reader does not know fails closed at the descriptor */
    r = check(HDR("'i4,O'", "(1,)"), evil, sizeof evil - 1);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_INVALID, "%s", tu_describe(r));
    f = stg_report_at(r, (size_t)tu_find(r, STG_CONTAINER_MALFORMED));
    ck_assert_uint_eq(f->offset, 21); /* the string's first byte */
    stg_report_free(r);
    /* a negative dimension on a plain type: malformed; on an object type the pickle is read */
    r = check(HDR("'<f4'", "(-1,)"), "", 0);
    ck_assert_int_ge(tu_find(r, STG_CONTAINER_MALFORMED), 0);
    stg_report_free(r);
    r = check(HDR("'O'", "(-1,)"), evil, sizeof evil - 1);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_UNSAFE, "%s", tu_describe(r));
    stg_report_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_good, 0, (int)(sizeof good / sizeof good[0]));
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_frame);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_validator);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
