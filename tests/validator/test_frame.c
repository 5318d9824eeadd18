/* Stage 1 (the 8-byte header length and the file length): codes, offsets, the precedence of
 * docs/findings.md, the stream form (total unknown, then known), and stg_validate_buffer's
 * argument handling. */
#include "sttest.h"

static uint8_t *frame_with(uint64_t n, size_t body, size_t *len)
{
    uint8_t *b = calloc(1, 8 + body + 1);
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(n >> (8 * i));
    }
    if (body > 0) {
        b[8] = '{';
    }
    if (body > 1) {
        memset(b + 9, ' ', body - 1);
        b[8 + body - 1] = '}';
    }
    *len = 8 + body;
    return b;
}

static void expect_only(const uint8_t *b, size_t len, const stg_limits *base, stg_code code)
{
    for (int p = 0; p < 2; p++) {
        stg_limits lim = *base;
        lim.profile = (stg_profile)p;
        stg_report *r = st_run_lim(b, len, &lim);
        ck_assert_msg(stg_report_count(r) == 1, "%s", tu_describe(r));
        const stg_finding *f = stg_report_at(r, 0);
        ck_assert_int_eq(f->code, code);
        ck_assert_int_eq(f->severity, STG_SEV_ERROR);
        ck_assert(f->has_offset);
        ck_assert_uint_eq(f->offset, 0);
        st_expect_verdict(r, STG_VERDICT_INVALID);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
        ck_assert_uint_eq(stg_report_size(r), len);
        stg_report_free(r);
    }
}

START_TEST(test_file_too_small)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    uint8_t b[8] = {2, 0, 0, 0, 0, 0, 0, 0};
    for (size_t len = 0; len < 8; len++) {
        expect_only(b, len, &lim, STG_FILE_TOO_SMALL);
    }
    /* near miss: 8 bytes are enough for the frame (then the length 2 runs past the end) */
    expect_only(b, 8, &lim, STG_HEADER_TRUNCATED);
}
END_TEST

START_TEST(test_header_length_invalid)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    size_t len;
    uint8_t *b = frame_with(0, 0, &len);
    expect_only(b, len, &lim, STG_HEADER_LENGTH_INVALID);
    free(b);
    /* n = 0 wins even when bytes follow */
    b = frame_with(0, 2, &len);
    expect_only(b, len, &lim, STG_HEADER_LENGTH_INVALID);
    free(b);
    /* near miss: n = 2 with "{}" is a valid empty file */
    b = frame_with(2, 2, &len);
    stg_report *r = st_run_lim(b, len, &lim);
    ck_assert_int_eq(tu_find(r, STG_HEADER_LENGTH_INVALID), -1);
    ck_assert_uint_le(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_report_free(r);
    free(b);
}
END_TEST

START_TEST(test_header_too_large_and_precedence)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    size_t len;
    /* 100,000,001 > cap, checked before the file length (which is far shorter) */
    uint8_t *b = frame_with(100000001u, 2, &len);
    expect_only(b, len, &lim, STG_HEADER_TOO_LARGE);
    stg_report *r = st_run_lim(b, len, &lim);
    ck_assert_str_eq(stg_report_at(r, 0)->limit, "max_header_len");
    stg_report_free(r);
    free(b);
    b = frame_with(UINT64_MAX, 2, &len);
    expect_only(b, len, &lim, STG_HEADER_TOO_LARGE);
    free(b);
    /* exactly the cap is accepted by the cap check; the short file is then header_truncated */
    b = frame_with(100000000u, 2, &len);
    expect_only(b, len, &lim, STG_HEADER_TRUNCATED);
    free(b);
}
END_TEST

START_TEST(test_header_truncated)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    size_t len;
    uint8_t *b = frame_with(3, 2, &len); /* needs 11 bytes, has 10 */
    expect_only(b, len, &lim, STG_HEADER_TRUNCATED);
    free(b);
    /* near miss: n = len - 8 exactly */
    b = frame_with(2, 2, &len);
    stg_report *r = st_run_lim(b, len, &lim);
    ck_assert_int_eq(tu_find(r, STG_HEADER_TRUNCATED), -1);
    stg_report_free(r);
    free(b);
}
END_TEST

/* A stream calls the frame with the total unknown, then again once it is known: findings are
 * never duplicated. */
START_TEST(test_frame_stream_total_unknown)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    uint8_t b[8] = {40, 0, 0, 0, 0, 0, 0, 0};
    uint64_t n = 0;
    stg_report *r = stg_report_new(&lim);
    for (size_t avail = 0; avail < 8; avail++) {
        ck_assert_int_eq(stg_st_check_frame(b, avail, STG_ST_TOTAL_UNKNOWN, &lim, r, &n),
                         STG_ST_FRAME_NEED_MORE);
    }
    ck_assert_int_eq(stg_st_check_frame(b, 8, STG_ST_TOTAL_UNKNOWN, &lim, r, &n), STG_ST_FRAME_OK);
    ck_assert_uint_eq(n, 40);
    ck_assert_uint_eq(stg_report_count(r), 0);
    /* later: the stream ended after 30 bytes */
    ck_assert_int_eq(stg_st_check_frame(b, 8, 30, &lim, r, &n), STG_ST_FRAME_FAILED);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_HEADER_TRUNCATED);
    stg_report_free(r);

    /* the cap and n = 0 are decided without the total */
    r = stg_report_new(&lim);
    uint8_t big[8] = {0, 0, 0, 0, 0, 0, 0, 0x80};
    ck_assert_int_eq(stg_st_check_frame(big, 8, STG_ST_TOTAL_UNKNOWN, &lim, r, &n),
                     STG_ST_FRAME_FAILED);
    ck_assert_int_eq(tu_find(r, STG_HEADER_TOO_LARGE), 0);
    stg_report_free(r);
    r = stg_report_new(&lim);
    uint8_t zero[8] = {0};
    ck_assert_int_eq(stg_st_check_frame(zero, 8, STG_ST_TOTAL_UNKNOWN, &lim, r, &n),
                     STG_ST_FRAME_FAILED);
    ck_assert_int_eq(tu_find(r, STG_HEADER_LENGTH_INVALID), 0);
    stg_report_free(r);
    /* a stream that ends before 8 bytes */
    r = stg_report_new(&lim);
    ck_assert_int_eq(stg_st_check_frame(b, 5, 5, &lim, r, &n), STG_ST_FRAME_FAILED);
    ck_assert_int_eq(tu_find(r, STG_FILE_TOO_SMALL), 0);
    ck_assert_uint_eq(stg_report_count(r), 1);
    stg_report_free(r);
}
END_TEST

/* The staged functions give exactly what stg_st_validate gives on the whole buffer. */
START_TEST(test_stages_equal_whole)
{
    static const char *hdrs[] = {
        ("{\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
         "\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[3,5]}}"),
        "{\"a\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]}}",
        " {\"a\":[\"U8\",[1],[0,1]]}\n",
    };
    for (size_t k = 0; k < sizeof hdrs / sizeof hdrs[0]; k++) {
        for (int p = 0; p < 2; p++) {
            size_t len;
            uint8_t *b = st_file(hdrs[k], 0, 7, &len);
            stg_limits lim = st_limits((stg_profile)p);
            stg_report *whole = stg_report_new(&lim);
            stg_st_validate(b, len, &lim, whole, NULL);
            stg_report_finish(whole);

            stg_report *staged = stg_report_new(&lim);
            uint64_t n;
            ck_assert_int_eq(stg_st_check_frame(b, 8, STG_ST_TOTAL_UNKNOWN, &lim, staged, &n),
                             STG_ST_FRAME_OK);
            stg_st_header h;
            stg_st_header_init(&h);
            if (stg_st_parse_header(b + 8, n, &lim, staged, &h)) {
                ck_assert_int_eq(stg_st_check_frame(b, 8, len, &lim, staged, &n), STG_ST_FRAME_OK);
                stg_st_check_layout(&h, len - 8 - n, &lim, staged);
            }
            stg_report_finish(staged);
            ck_assert_str_eq(tu_describe(whole), tu_describe(staged));
            ck_assert_int_eq(stg_report_verdict(whole), stg_report_verdict(staged));
            stg_st_header_release(&h);
            stg_report_free(whole);
            stg_report_free(staged);
            free(b);
        }
    }
}
END_TEST

START_TEST(test_validate_buffer_arguments)
{
    stg_report *r = (stg_report *)1;
    ck_assert_int_eq(stg_validate_buffer(NULL, 3, NULL, &r), STG_E_BAD_ARG);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(stg_validate_buffer("x", 1, NULL, NULL), STG_E_BAD_ARG);
    /* NULL with length 0 is an empty input; NULL limits are the defaults */
    ck_assert_int_eq(stg_validate_buffer(NULL, 0, NULL, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_FILE_TOO_SMALL), 0);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
    ck_assert_uint_eq(stg_report_size(r), 0);
    stg_report_free(r);
    size_t len;
    uint8_t *b = st_file("{}", 6, 0, &len); /* 8 + 8: padded, no findings */
    ck_assert_int_eq(stg_validate_buffer(b, len, NULL, &r), STG_OK);
    st_expect_verdict(r, STG_VERDICT_OK);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_uint_eq(stg_report_size(r), 16);
    stg_report_free(r);
    free(b);
}
END_TEST

START_TEST(test_memory_budget_formula)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_st_memory_budget(&lim, 0), 8u << 20);
    ck_assert_uint_eq(stg_st_memory_budget(&lim, 1000), 16000 + (8u << 20));
    ck_assert_uint_eq(stg_st_memory_budget(&lim, UINT64_MAX), UINT64_MAX);
    lim.max_memory = 12345;
    ck_assert_uint_eq(stg_st_memory_budget(&lim, 1000), 12345);
}
END_TEST

static Suite *frame_suite(void)
{
    Suite *s = suite_create("frame");
    TCase *tc = tcase_create("frame");
    tcase_add_test(tc, test_file_too_small);
    tcase_add_test(tc, test_header_length_invalid);
    tcase_add_test(tc, test_header_too_large_and_precedence);
    tcase_add_test(tc, test_header_truncated);
    tcase_add_test(tc, test_frame_stream_total_unknown);
    tcase_add_test(tc, test_stages_equal_whole);
    tcase_add_test(tc, test_validate_buffer_arguments);
    tcase_add_test(tc, test_memory_budget_formula);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(frame_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
