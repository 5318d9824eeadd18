/* Hard ceilings (STG_*_CEILING in stguard.h): stg_limits_set refuses values past them
 * (test_names), and limits raised past them by hand are used as the ceilings: nesting stops at
 * STG_NESTING_CEILING however deep an archive goes, and member paths stay within
 * STG_MEMBER_PATH_MAX (a 6,000-level nested zip once made them grow with the square of the
 * depth). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "dispatch/check.h"
#include "dispatch/containers.h"
#include "parser/mem.h"
#include "zipbuild.h"

/* A stored zip nested `levels` deep: each archive holds one member "a.zip", the next archive;
 * the innermost holds "x.txt". */
static uint8_t *nested_zip(unsigned levels, size_t *len)
{
    zb_entry e = zb_file("x.txt", "hello", 5);
    uint8_t *cur = zb_build(&e, 1, NULL, len, NULL);
    for (unsigned i = 1; i < levels; i++) {
        zb_entry outer = zb_file("a.zip", cur, *len);
        size_t next_len;
        uint8_t *next = zb_build(&outer, 1, NULL, &next_len, NULL);
        free(cur);
        cur = next;
        *len = next_len;
    }
    return cur;
}

static long find_limit(const stg_report *r, const char *limit)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->code == STG_LIMIT_EXCEEDED && f->limit != NULL && strcmp(f->limit, limit) == 0) {
            return (long)i;
        }
    }
    return -1;
}

/* max_nesting = 100000 set by hand: the scan stops at the ceiling (64 levels) with
 * limit_exceeded max_nesting, and the member path of that finding has 64 components. */
START_TEST(test_nesting_clamped_to_ceiling)
{
    size_t len;
    uint8_t *z = nested_zip(STG_NESTING_CEILING + 20, &len);
    stg_scan_options so;
    stg_scan_options_default(&so);
    so.limits.max_nesting = 100000;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(z, len, "deep.zip", &so, &r), STG_OK);
    long at = find_limit(r, "max_nesting");
    ck_assert_int_ge(at, 0);
    const stg_finding *f = stg_report_at(r, (size_t)at);
    ck_assert_ptr_nonnull(f->member);
    size_t parts = 1;
    for (const char *p = f->member; *p != '\0'; p++) {
        parts += *p == '!';
    }
    ck_assert_uint_eq(parts, STG_NESTING_CEILING + 1); /* the member that was not entered */
    ck_assert_ptr_nonnull(strstr(f->message, "(64)"));
    stg_report_free(r);
    /* near miss: one level fewer than the ceiling allows is scanned to the bottom */
    free(z);
    z = nested_zip(STG_NESTING_CEILING, &len);
    ck_assert_int_eq(stg_scan_buffer(z, len, "deep.zip", &so, &r), STG_OK);
    ck_assert_int_eq(find_limit(r, "max_nesting"), -1);
    stg_report_free(r);
    free(z);
}
END_TEST

/* stg_limits_clamp brings each field past its ceiling down to it and leaves the rest alone. */
START_TEST(test_limits_clamp)
{
    stg_limits lim, def;
    stg_limits_default(&def);
    lim = def;
    stg_limits_clamp(&lim);
    ck_assert_int_eq(memcmp(&lim, &def, sizeof lim), 0); /* the defaults are within */
    lim.max_nesting = UINT32_MAX;
    lim.max_findings = UINT32_MAX;
    lim.max_pickle_stack = UINT32_MAX;
    lim.max_pickle_memo = UINT32_MAX;
    lim.max_pickle_string = UINT64_MAX;
    lim.max_inflate_bytes = UINT64_MAX;
    lim.max_inflate_ratio = UINT32_MAX;
    stg_limits_clamp(&lim);
    ck_assert_uint_eq(lim.max_nesting, STG_NESTING_CEILING);
    ck_assert_uint_eq(lim.max_findings, STG_FINDINGS_CEILING);
    ck_assert_uint_eq(lim.max_pickle_stack, STG_PICKLE_STACK_CEILING);
    ck_assert_uint_eq(lim.max_pickle_memo, STG_PICKLE_MEMO_CEILING);
    ck_assert_uint_eq(lim.max_pickle_string, STG_PICKLE_STRING_CEILING);
    ck_assert_uint_eq(lim.max_inflate_bytes, STG_INFLATE_BYTES_CEILING);
    ck_assert_uint_eq(lim.max_inflate_ratio, STG_INFLATE_RATIO_CEILING);
    ck_assert_uint_eq(lim.max_header_len, def.max_header_len);
}
END_TEST

/* Member paths: "outer!inner" as before up to STG_MEMBER_PATH_MAX; past it "..." and the last
 * bytes, so the innermost name is always there. */
START_TEST(test_member_path_cap)
{
    char *outer = malloc(STG_MEMBER_PATH_MAX + 2);
    ck_assert_ptr_nonnull(outer);
    memset(outer, 'o', 1000);
    outer[1000] = '\0';
    stg_member_link up = {NULL, outer, NULL};
    char *p = stg_member_path_render(&up, "inner.pkl");
    ck_assert_uint_eq(strlen(p), 1000 + 1 + 9);
    ck_assert_int_eq(p[1000], '!');
    ck_assert_str_eq(p + 1001, "inner.pkl");
    stg_mem_free(p); /* the library's allocator: large blocks are mappings */
    /* exactly at the cap: not cut */
    size_t a = STG_MEMBER_PATH_MAX - 10;
    memset(outer, 'o', a);
    outer[a] = '\0';
    p = stg_member_path_render(&up, "inner.pkl");
    ck_assert_uint_eq(strlen(p), STG_MEMBER_PATH_MAX);
    ck_assert_int_eq(p[0], 'o');
    stg_mem_free(p);
    /* one byte over: cut to the cap, innermost name kept */
    p = stg_member_path_render(&up, "inner.pklX");
    ck_assert_uint_eq(strlen(p), STG_MEMBER_PATH_MAX);
    ck_assert_int_eq(memcmp(p, "...", 3), 0);
    ck_assert_str_eq(p + strlen(p) - 11, "!inner.pklX");
    stg_mem_free(p);
    /* a single name longer than the cap (no outer path) */
    memset(outer, 'n', STG_MEMBER_PATH_MAX + 1);
    outer[STG_MEMBER_PATH_MAX + 1] = '\0';
    p = stg_member_path_render(NULL, outer);
    ck_assert_uint_eq(strlen(p), STG_MEMBER_PATH_MAX);
    ck_assert_int_eq(memcmp(p, "...n", 4), 0);
    stg_mem_free(p);
    free(outer);
}
END_TEST

static Suite *ceilings_suite(void)
{
    Suite *s = suite_create("ceilings");
    TCase *tc = tcase_create("ceilings");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_nesting_clamped_to_ceiling);
    tcase_add_test(tc, test_limits_clamp);
    tcase_add_test(tc, test_member_path_cap);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ceilings_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
