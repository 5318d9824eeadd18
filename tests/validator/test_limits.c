/* Every limit the safetensors stages enforce, at the limit (accepted) and one past it (rejected,
 * in both profiles), with the code, the limit name and the offset; the memory bound; and
 * max_findings (findings_truncated, with the right verdict). */
#include <stdio.h>

#include "sttest.h"

static stg_report *run_with(const char *hdr, size_t pad, size_t data, const stg_limits *lim)
{
    size_t len;
    uint8_t *b = st_file(hdr, pad, data, &len);
    stg_report *r = st_run_lim(b, len, lim);
    free(b);
    return r;
}

/* Both profiles: no finding with `code` (accepted side). */
static void accepted(const char *hdr, size_t pad, size_t data, stg_limits lim, stg_code code)
{
    for (int p = 0; p < 2; p++) {
        lim.profile = (stg_profile)p;
        stg_report *r = run_with(hdr, pad, data, &lim);
        ck_assert_msg(tu_find(r, code) < 0, "unexpected %s: %s", stg_code_name(code),
                      tu_describe(r));
        ck_assert_msg(stg_report_verdict(r) <= STG_VERDICT_WARN, "%s", tu_describe(r));
        stg_report_free(r);
    }
}

/* Both profiles: the limit finding, its name and offset; verdict invalid. */
static void rejected(const char *hdr, size_t pad, size_t data, stg_limits lim, stg_code code,
                     const char *limit, uint64_t off)
{
    for (int p = 0; p < 2; p++) {
        lim.profile = (stg_profile)p;
        stg_report *r = run_with(hdr, pad, data, &lim);
        st_expect(r, code, STG_SEV_ERROR, off);
        const stg_finding *f = st_find(r, code);
        ck_assert_ptr_nonnull(f->limit);
        ck_assert_str_eq(f->limit, limit);
        st_expect_verdict(r, STG_VERDICT_INVALID);
        stg_report_free(r);
    }
}

static stg_limits base(void)
{
    return st_limits(STG_PROFILE_STRICT);
}

START_TEST(test_max_header_len)
{
    stg_limits lim = base();
    lim.max_header_len = 24;
    accepted("{}", 22, 0, lim, STG_HEADER_TOO_LARGE); /* n = 24 */
    rejected("{}", 23, 0, lim, STG_HEADER_TOO_LARGE, "max_header_len", 0);
}
END_TEST

START_TEST(test_max_json_depth)
{
    /* top object (1), entry (2), unknown field with two arrays (3, 4); compat ignores the field
     * with a warning, strict reports it as an error, so only the depth code is compared */
    const char *d4 = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":[[]]}}";
    const char *d5 = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":[[[]]]}}";
    stg_limits lim = base();
    lim.max_json_depth = 4;
    lim.profile = STG_PROFILE_COMPAT;
    stg_report *r = run_with(d4, 0, 1, &lim);
    ck_assert_int_eq(tu_find(r, STG_JSON_TOO_DEEP), -1);
    st_expect_verdict(r, STG_VERDICT_WARN);
    stg_report_free(r);
    rejected(d5, 0, 1, lim, STG_JSON_TOO_DEEP, "max_json_depth", st_at(d5, "[[[") + 2);
    /* the default (127) accepts the reference's own 127-deep probe */
    char deep[1024];
    int n = snprintf(deep, sizeof deep,
                     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":");
    for (int i = 0; i < 125; i++) {
        deep[n++] = '[';
    }
    for (int i = 0; i < 125; i++) {
        deep[n++] = ']';
    }
    strcpy(deep + n, "}}");
    lim = base();
    lim.profile = STG_PROFILE_COMPAT;
    r = run_with(deep, 0, 1, &lim);
    st_expect_verdict(r, STG_VERDICT_WARN);
    stg_report_free(r);
    /* ... and one level more (128 containers) is refused, as serde in the reference refuses it */
    n = snprintf(deep, sizeof deep,
                 "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":");
    for (int i = 0; i < 126; i++) {
        deep[n++] = '[';
    }
    for (int i = 0; i < 126; i++) {
        deep[n++] = ']';
    }
    strcpy(deep + n, "}}");
    rejected(deep, 0, 1, lim, STG_JSON_TOO_DEEP, "max_json_depth", st_at(deep, "[[[") + 125);
}
END_TEST

START_TEST(test_max_tensors)
{
    const char *three = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                        "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
                        "\"c\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]}}";
    const char *four = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                       "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
                       "\"c\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]},"
                       "\"d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[3,4]}}";
    stg_limits lim = base();
    lim.max_tensors = 3;
    accepted(three, 0, 3, lim, STG_LIMIT_EXCEEDED);
    rejected(four, 0, 4, lim, STG_LIMIT_EXCEEDED, "max_tensors", st_at(four, "\"d\""));
    /* __metadata__ is not a tensor */
    const char *meta =
        "{\"__metadata__\":{},\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
        "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
        "\"c\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]}}";
    accepted(meta, 0, 3, lim, STG_LIMIT_EXCEEDED);
}
END_TEST

START_TEST(test_max_rank)
{
    const char *r3 = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1],\"data_offsets\":[0,1]}}";
    const char *r4 = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1],\"data_offsets\":[0,1]}}";
    stg_limits lim = base();
    lim.max_rank = 3;
    accepted(r3, 0, 1, lim, STG_LIMIT_EXCEEDED);
    rejected(r4, 0, 1, lim, STG_LIMIT_EXCEEDED, "max_rank", st_at(r4, "[1,1") + 7);
    /* default 64 */
    char buf[512];
    int n = snprintf(buf, sizeof buf, "{\"a\":{\"dtype\":\"U8\",\"shape\":[");
    for (int i = 0; i < 65; i++) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, i ? ",0" : "0");
    }
    snprintf(buf + n, sizeof buf - (size_t)n, "],\"data_offsets\":[0,0]}}");
    lim = base();
    rejected(buf, 0, 0, lim, STG_LIMIT_EXCEEDED, "max_rank", st_at(buf, "[0,") + 1 + 64 * 2);
}
END_TEST

START_TEST(test_max_name_len)
{
    const char *n4 = "{\"abcd\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    const char *n4esc = "{\"\\u0061bcd\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    const char *n5 = "{\"abcde\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    stg_limits lim = base();
    lim.max_name_len = 4;
    accepted(n4, 0, 1, lim, STG_LIMIT_EXCEEDED);
    accepted(n4esc, 0, 1, lim, STG_LIMIT_EXCEEDED); /* counted after unescaping */
    rejected(n5, 0, 1, lim, STG_LIMIT_EXCEEDED, "max_name_len", 9);
}
END_TEST

START_TEST(test_max_metadata_entries)
{
    const char *m2 = "{\"__metadata__\":{\"a\":\"1\",\"b\":\"2\"}}";
    const char *m3 = "{\"__metadata__\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}}";
    stg_limits lim = base();
    lim.max_metadata_entries = 2;
    accepted(m2, 0, 0, lim, STG_LIMIT_EXCEEDED);
    rejected(m3, 0, 0, lim, STG_LIMIT_EXCEEDED, "max_metadata_entries", st_at(m3, "\"c\""));
}
END_TEST

static char *many_tensors(int count, size_t *data)
{
    char *hdr = malloc((size_t)count * 80 + 8);
    char *p = hdr;
    *p++ = '{';
    for (int i = 0; i < count; i++) {
        p += sprintf(p,
                     "\"layer.%d.w\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[%d,%d]}%s",
                     i, i * 4, i * 4 + 4, i + 1 < count ? "," : "}");
    }
    *p = '\0';
    *data = (size_t)count * 4;
    return hdr;
}

START_TEST(test_max_memory)
{
    size_t data;
    char *hdr = many_tensors(5000, &data);
    size_t len;
    uint8_t *b = st_file(hdr, 0, data, &len);
    /* measure the peak under the derived budget: it must respect 2n + 8 MiB */
    stg_limits lim = base();
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    stg_st_validate(b, len, &lim, r, &h);
    ck_assert(h.layout_ok);
    size_t peak = h.arena.peak;
    ck_assert_uint_le(peak, stg_st_memory_budget(&lim, strlen(hdr)));
    ck_assert_uint_le(peak, 2 * strlen(hdr) + (8u << 20));
    stg_st_header_release(&h);
    stg_report_free(r);
    /* a hard cap equal to that peak is enough */
    lim.max_memory = peak;
    r = st_run_lim(b, len, &lim);
    ck_assert_int_eq(tu_find(r, STG_LIMIT_EXCEEDED), -1);
    st_expect_verdict(r, STG_VERDICT_WARN);
    stg_report_free(r);
    /* a quarter of it is not: limit_exceeded max_memory, in both profiles */
    for (int p = 0; p < 2; p++) {
        lim.max_memory = peak / 4;
        lim.profile = (stg_profile)p;
        r = st_run_lim(b, len, &lim);
        const stg_finding *f = st_find(r, STG_LIMIT_EXCEEDED);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->limit, "max_memory");
        st_expect_verdict(r, STG_VERDICT_INVALID);
        stg_report_free(r);
    }
    free(b);
    free(hdr);
}
END_TEST

/* The memory bound holds for a header of many tiny entries and for a maximal-rank shape. */
START_TEST(test_memory_bound_formula)
{
    size_t data;
    char *hdr = many_tensors(40000, &data);
    size_t len;
    uint8_t *b = st_file(hdr, 0, data, &len);
    stg_limits lim = base();
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    stg_st_validate(b, len, &lim, r, &h);
    ck_assert(h.layout_ok);
    ck_assert_uint_le(h.arena.peak, 2 * (uint64_t)strlen(hdr) + (8u << 20));
    stg_st_header_release(&h);
    stg_report_free(r);
    free(b);
    free(hdr);
}
END_TEST

/* Text made of prefix, `count` copies of unit, suffix (malloc'd). */
static char *repeat(const char *prefix, const char *unit, size_t count, const char *suffix)
{
    size_t pl = strlen(prefix), ul = strlen(unit), sl = strlen(suffix);
    char *s = malloc(pl + ul * count + sl + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, prefix, pl);
    for (size_t i = 0; i < count; i++) {
        memcpy(s + pl + i * ul, unit, ul);
    }
    memcpy(s + pl + ul * count, suffix, sl + 1);
    return s;
}

/* Each place stage 2 takes memory stops at max_memory with limit_exceeded max_memory at the
 * token it was reading, and the same header passes under the derived budget. The caps are far
 * from the sizes involved (the request alone is over the cap, or what is left is less than half
 * of it), so the tests do not depend on the arena's exact bookkeeping. */
START_TEST(test_max_memory_sites)
{
    enum { ESC = 50000 }; /* a \u0041 escape is 6 raw bytes: 300,000 bytes to copy */
    char *hdr = NULL;
    uint64_t max_memory = 0, want_at = 0, within_from = 0, within_to = 0;
    uint32_t max_rank = 64;
    switch (_i) {
    case 0: /* decoded copy of an escaped metadata key */
        hdr = repeat("{\"__metadata__\":{\"", "\\u0041", ESC, "\":\"v\"}}");
        max_memory = 200000;
        want_at = 8 + 17;
        break;
    case 1: /* decoded copy of an escaped metadata value */
        hdr = repeat("{\"__metadata__\":{\"k\":\"", "\\u0041", ESC, "\"}}");
        max_memory = 200000;
        want_at = 8 + 21;
        break;
    case 2: /* decoded copy of an escaped tensor name (before its length is judged) */
        hdr = repeat("{\"", "\\u0041", ESC,
                     "\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}");
        max_memory = 200000;
        want_at = 8 + 1;
        break;
    case 3: /* the scratch buffer of a long shape (30,000 dimensions, max_rank raised) */
        hdr = repeat("{\"a\":{\"dtype\":\"U8\",\"shape\":[", "1,", 29999,
                     "1],\"data_offsets\":[0,1]}}");
        max_memory = 200000;
        max_rank = 100000;
        within_from = st_at(hdr, "[1,");
        within_to = st_at(hdr, "1]");
        break;
    default: ck_abort();
    }
    size_t len;
    uint8_t *b = st_file(hdr, 0, 1, &len);
    for (int p = 0; p < 2; p++) {
        stg_limits lim = base();
        lim.profile = (stg_profile)p;
        lim.max_rank = max_rank;
        lim.max_memory = max_memory;
        stg_report *r = run_with(hdr, 0, 1, &lim);
        /* the limit is the only finding of stage 2 */
        ck_assert_msg(stg_report_count(r) >= 1, "%s", tu_describe(r));
        const stg_finding *f = st_find(r, STG_LIMIT_EXCEEDED);
        ck_assert_msg(f != NULL, "case %d: %s", _i, tu_describe(r));
        ck_assert_str_eq(f->limit, "max_memory");
        ck_assert_int_eq(f->severity, STG_SEV_ERROR);
        ck_assert(f->has_offset);
        if (want_at != 0) {
            ck_assert_uint_eq(f->offset, want_at);
        } else {
            ck_assert_uint_gt(f->offset, within_from);
            ck_assert_uint_lt(f->offset, within_to);
        }
        for (size_t i = 0; i < stg_report_count(r); i++) {
            stg_code c = stg_report_at(r, i)->code;
            ck_assert_msg(c == STG_LIMIT_EXCEEDED || c == STG_HEADER_NOT_PADDED, "%s",
                          tu_describe(r));
        }
        st_expect_verdict(r, STG_VERDICT_INVALID);
        stg_report_free(r);
        /* derived budget (2n + 8 MiB): no limit */
        lim.max_memory = 0;
        r = run_with(hdr, 0, 1, &lim);
        ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) < 0, "%s", tu_describe(r));
        stg_report_free(r);
    }
    free(b);
    free(hdr);
}
END_TEST

/* Validation keeps no copy of a shape (only its element count; the loaders' public views are
 * outside the budget, so every door reports alike): 10,000 dimensions need only the 80,000-byte
 * scratch buffer, which fits a cap that the old copy beside it did not. A cap below the scratch
 * buffer is still limit_exceeded (case 3 above). */
START_TEST(test_shape_not_kept)
{
    char *hdr = repeat("{\"a\":{\"dtype\":\"U8\",\"shape\":[", "1,", 9999,
                       "1],\"data_offsets\":[0,1]}}");
    for (int p = 0; p < 2; p++) {
        stg_limits lim = base();
        lim.profile = (stg_profile)p;
        lim.max_rank = 100000;
        lim.max_memory = 240000;
        stg_report *r = run_with(hdr, 0, 1, &lim);
        ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) < 0, "%s", tu_describe(r));
        stg_report_free(r);
        lim.max_memory = 60000;
        r = run_with(hdr, 0, 1, &lim);
        ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) >= 0, "%s", tu_describe(r));
        stg_report_free(r);
    }
    free(hdr);
}
END_TEST

START_TEST(test_max_findings)
{
    /* 5 dtype_unknown errors; max_findings 5 keeps all, 4 truncates */
    const char *hdr = "{\"a\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"b\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"c\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"d\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"e\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    stg_limits lim = base();
    lim.max_findings = 5;
    stg_report *r = run_with(hdr, 0, 1, &lim);
    ck_assert_uint_eq(tu_count(r, STG_DTYPE_UNKNOWN), 5);
    ck_assert_int_eq(tu_find(r, STG_FINDINGS_TRUNCATED), -1);
    stg_report_free(r);
    for (int p = 0; p < 2; p++) {
        lim.max_findings = 4;
        lim.profile = (stg_profile)p;
        r = run_with(hdr, 0, 1, &lim);
        ck_assert_uint_eq(tu_count(r, STG_DTYPE_UNKNOWN), 4);
        const stg_finding *f = st_find(r, STG_FINDINGS_TRUNCATED);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, STG_SEV_WARNING);
        ck_assert(!f->has_offset);
        ck_assert_uint_eq(stg_report_truncated(r), 1);
        st_expect_verdict(r, STG_VERDICT_INVALID);
        stg_report_free(r);
    }
    /* the stored findings are warnings, the counted one is an error: still invalid */
    const char *warn_then_err = " {\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    lim = base();
    lim.profile = STG_PROFILE_COMPAT;
    lim.max_findings = 1;
    r = run_with(warn_then_err, 0, 2, &lim); /* leading ws (warning), then data_trailing */
    ck_assert_uint_eq(tu_count(r, STG_DATA_TRAILING), 0);
    ck_assert_int_ge(tu_find(r, STG_FINDINGS_TRUNCATED), 0);
    st_expect_verdict(r, STG_VERDICT_INVALID);
    stg_report_free(r);
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_max_header_len);
    tcase_add_test(tc, test_max_json_depth);
    tcase_add_test(tc, test_max_tensors);
    tcase_add_test(tc, test_max_rank);
    tcase_add_test(tc, test_max_name_len);
    tcase_add_test(tc, test_max_metadata_entries);
    tcase_add_test(tc, test_max_memory);
    tcase_add_test(tc, test_memory_bound_formula);
    tcase_add_test(tc, test_max_findings);
    tcase_add_loop_test(tc, test_max_memory_sites, 0, 4);
    tcase_add_test(tc, test_shape_not_kept);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(limits_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
