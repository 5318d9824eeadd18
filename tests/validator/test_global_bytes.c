/* Module and name of a pickle global are byte strings with a length: a NUL inside one is part
 * of it, in findings, the globals list, merged reports and the policy, so what is shown is
 * what was classified. GLOBAL "os\0junk" system is no os.system (the loader cannot import it:
 * it is an unknown module, denied by default), and shows as os\x00junk / os\u0000junk. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "validator/pickle_policy.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

static const uint8_t nul_module[] = "cos\0junk\nsystem\n(Vx\ntR.";
#define MOD "os\0junk"
#define MOD_LEN 7

static void assert_global_bytes(const stg_report *r)
{
    long at = tu_find(r, STG_PICKLE_GLOBAL_UNKNOWN);
    ck_assert_int_ge(at, 0);
    ck_assert_int_lt(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS), 0); /* not taken for "os" */
    const stg_finding *f = stg_report_at(r, (size_t)at);
    ck_assert_uint_eq(f->module_len, MOD_LEN);
    ck_assert_mem_eq(f->module, MOD, MOD_LEN);
    ck_assert_uint_eq(f->name_len, 6);
    ck_assert_str_eq(f->name, "system");
    ck_assert_uint_eq(stg_report_global_count(r), 1);
    const stg_global *g = stg_report_global_at(r, 0);
    ck_assert_uint_eq(g->module_len, MOD_LEN);
    ck_assert_mem_eq(g->module, MOD, MOD_LEN);
    ck_assert_uint_eq(g->name_len, 6);
    ck_assert_int_eq(g->klass, STG_GLOBAL_UNKNOWN);
}

START_TEST(test_global_nul_in_module)
{
    stg_report *r = tu_scan_pickles(nul_module, sizeof nul_module - 1, STG_PICKLE_RAW, NULL);
    ck_assert_ptr_nonnull(r);
    assert_global_bytes(r);
    /* a merge (archive members, nested payloads) keeps the bytes */
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *outer = stg_report_new(&lim);
    ck_assert_ptr_nonnull(outer);
    stg_report_merge(outer, r, "member.pkl", 0);
    assert_global_bytes(outer);
    stg_report_free(outer);
    stg_report_free(r);

    /* the near miss: plain os.system is dangerous, with its lengths */
    static const uint8_t plain[] = "cos\nsystem\n(Vx\ntR.";
    r = tu_scan_pickles(plain, sizeof plain - 1, STG_PICKLE_RAW, NULL);
    long at = tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_int_ge(at, 0);
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->module_len, 2);
    ck_assert_uint_eq(stg_report_global_at(r, 0)->name_len, 6);
    stg_report_free(r);
}
END_TEST

START_TEST(test_policy_exact_bytes)
{
    /* classify reads every byte: a NUL never ends a comparison early */
    stg_policy_verdict v = stg_policy_classify(NULL, MOD, MOD_LEN, "system", 6);
    ck_assert_int_eq(v.klass, STG_GLOBAL_UNKNOWN);
    ck_assert(!v.hard_block);
    v = stg_policy_classify(NULL, "os", 2, "system", 6);
    ck_assert_int_eq(v.klass, STG_GLOBAL_DANGEROUS);
    v = stg_policy_classify(NULL, "os", 2, "system\0x", 8);
    ck_assert_int_eq(v.klass, STG_GLOBAL_DANGEROUS); /* module os: denied whatever the name */
    v = stg_policy_classify(NULL, "collections", 11, "OrderedDict", 11);
    ck_assert_int_eq(v.klass, STG_GLOBAL_ALLOWED);
    v = stg_policy_classify(NULL, "collections", 11, "OrderedDict\0", 12);
    ck_assert_int_ne(v.klass, STG_GLOBAL_ALLOWED);
    v = stg_policy_classify(NULL, "collections\0", 12, "OrderedDict", 11);
    ck_assert_int_ne(v.klass, STG_GLOBAL_ALLOWED);
}
END_TEST

static Suite *global_bytes_suite(void)
{
    Suite *s = suite_create("global_bytes");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_global_nul_in_module);
    tcase_add_test(tc, test_policy_exact_bytes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(global_bytes_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
