/* skops schema rules (validator/skops.c): the trusted defaults per loader as skops defines them
 * (skops/io/_general.py, _numpy.py, _sklearn.py at skops-dev/skops 50d3165), and each skops_*
 * code with a trigger and a near miss through stg_scan_buffer of a schema.json. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/report.h"
#include "validator/skops.h"

static bool trusted(const char *loader, const char *module, const char *name)
{
    return stg_skops_trusted(loader, module, strlen(module), name, strlen(name));
}

START_TEST(test_trusted_defaults)
{
    ck_assert(trusted("DictNode", "builtins", "dict"));
    ck_assert(trusted("DictNode", "collections", "OrderedDict"));
    ck_assert(trusted("ListNode", "builtins", "list"));
    ck_assert(trusted("JsonNode", "anything", "at_all")); /* skops: always safe */
    ck_assert(trusted("NdArrayNode", "numpy", "ndarray"));
    ck_assert(trusted("TypeNode", "numpy", "float64"));
    ck_assert(trusted("ObjectNode", "sklearn.linear_model._logistic", "LogisticRegression"));
    /* near misses: the right type under another loader, a look-alike module */
    ck_assert(!trusted("ListNode", "builtins", "dict"));
    ck_assert(!trusted("ObjectNode", "sklearnx", "Thing"));
    ck_assert(!trusted("ObjectNode", "builtins", "dict"));
    ck_assert(!trusted("FunctionNode", "numpy", "load"));
    ck_assert(!trusted("MethodNode", "sklearn.base", "BaseEstimator"));
    ck_assert(!trusted("TypeNode", "numpy", "load"));
}
END_TEST

static stg_report *scan_schema(const char *text, stg_profile p)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.limits.profile = p;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(text, strlen(text), "schema.json", &opt, &r), STG_OK);
    return r;
}

static void expect(const char *text, stg_code code, int sev, long offset)
{
    for (int p = 0; p < 2; p++) {
        stg_report *r = scan_schema(text, (stg_profile)p);
        long at = tu_find(r, code);
        if (sev < 0) {
            ck_assert_msg(at < 0, "%s: %s", text, tu_describe(r));
        } else {
            ck_assert_msg(at >= 0, "%s: %s", text, tu_describe(r));
            const stg_finding *f = stg_report_at(r, (size_t)at);
            ck_assert_int_eq(f->severity, sev);
            ck_assert_uint_eq(f->offset, (uint64_t)offset);
        }
        ck_assert_int_eq(stg_report_format(r), STG_FMT_JSON);
        stg_report_free(r);
    }
}

#define ROOT_OPEN                                                                      \
    "{\"__class__\":\"dict\",\"__module__\":\"builtins\",\"__loader__\":\"DictNode\"," \
    "\"protocol\":2,\"content\":{\"a\":"

START_TEST(test_codes)
{
    const char *dangerous = ROOT_OPEN
        "{\"__class__\":\"system\",\"__module__\":\"os\",\"__loader__\":"
        "\"FunctionNode\"}}}";
    expect(dangerous, STG_SKOPS_TYPE_DANGEROUS, STG_SEV_CRITICAL,
           (long)(strstr(dangerous, "{\"__class__\":\"system") - dangerous));
    const char *untrusted = ROOT_OPEN
        "{\"__class__\":\"T\",\"__module__\":\"pkg.mod\",\"__loader__\":"
        "\"ObjectNode\"}}}";
    expect(untrusted, STG_SKOPS_TYPE_UNTRUSTED, STG_SEV_WARNING,
           (long)(strstr(untrusted, "{\"__class__\":\"T\"") - untrusted));
    expect(untrusted, STG_SKOPS_TYPE_DANGEROUS, -1, 0);
    const char *malformed = ROOT_OPEN "{\"__loader__\":\"ObjectNode\"}}}";
    expect(malformed, STG_SKOPS_MALFORMED, STG_SEV_ERROR,
           (long)(strstr(malformed, "{\"__loader__\":\"Obj") - malformed));
    /* near misses: trusted nodes; the same dangerous state in JSON that is no skops schema
     * (no "protocol" at the top) */
    const char *fine = ROOT_OPEN
        "{\"__class__\":\"list\",\"__module__\":\"builtins\",\"__loader__\":"
        "\"ListNode\",\"content\":[]}}}";
    expect(fine, STG_SKOPS_TYPE_UNTRUSTED, -1, 0);
    expect(fine, STG_SKOPS_MALFORMED, -1, 0);
    const char *not_schema = "{\"a\":{\"__class__\":\"system\",\"__module__\":\"os\","
                             "\"__loader__\":\"FunctionNode\"}}";
    expect(not_schema, STG_SKOPS_TYPE_DANGEROUS, -1, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("skops");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_trusted_defaults);
    tcase_add_test(tc, test_codes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
