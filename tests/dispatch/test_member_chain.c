/* The member chain of nested containers (dispatch/check.c): a finding inside carries the whole
 * chain, the one depth guard (max_nesting) stops at its path, and member paths are rendered from
 * the chain only when needed. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "testutil.h"
#include "validator/report.h"
#include "zipbuild.h"

static size_t count_code(const stg_report *r, stg_code code)
{
    size_t n = 0;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        n += stg_report_at(r, i)->code == code;
    }
    return n;
}

/* A zip in a zip in a zip: the finding inside carries the whole chain; one level fewer
 * allowed and the innermost payload is the limit finding, at its path. */
START_TEST(test_chain_and_depth_guard)
{
    static const uint8_t evil[] = "\x80\x02"
                                  "cos\nsystem\n"
                                  "q\0.";
    zb_entry in[] = {zb_file("data.pkl", evil, sizeof evil - 1)};
    size_t l1, l2, l3;
    uint8_t *z1 = zb_build(in, 1, NULL, &l1, NULL);
    zb_entry mid[] = {zb_file("inner.zip", z1, l1)};
    uint8_t *z2 = zb_build(mid, 1, NULL, &l2, NULL);
    zb_entry out[] = {zb_file("middle.zip", z2, l2)};
    uint8_t *z3 = zb_build(out, 1, NULL, &l3, NULL);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_buffer(z3, l3, NULL, &ctx);
    const stg_finding *f = NULL;
    for (size_t i = 0; i < stg_report_count(r) && f == NULL; i++) {
        f = stg_report_at(r, i)->code == STG_PICKLE_GLOBAL_DANGEROUS ? stg_report_at(r, i) : NULL;
    }
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->member, "middle.zip!inner.zip!data.pkl");
    stg_report_free(r);

    lim.max_nesting = 2;
    r = stg_report_new(&lim);
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_buffer(z3, l3, NULL, &ctx);
    ck_assert_uint_eq(count_code(r, STG_PICKLE_GLOBAL_DANGEROUS), 0);
    ck_assert_uint_eq(count_code(r, STG_LIMIT_EXCEEDED), 1);
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *g = stg_report_at(r, i);
        if (g->code == STG_LIMIT_EXCEEDED) {
            ck_assert_str_eq(g->member, "middle.zip!inner.zip!data.pkl");
            ck_assert_str_eq(g->limit, "max_nesting");
        }
    }
    stg_report_free(r);
    free(z1);
    free(z2);
    free(z3);
}
END_TEST

START_TEST(test_path_rendered_only_when_needed)
{
    stg_member_link root = {NULL, "a.zip", NULL};
    stg_member_link leaf = {&root, "b.pkl", NULL};
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    ck_assert_ptr_null(stg_ctx_member_path(&ctx)); /* top level */
    ctx.member = &leaf;
    ck_assert_ptr_null(leaf.path);
    const char *p = stg_ctx_member_path(&ctx);
    ck_assert_str_eq(p, "a.zip!b.pkl");
    ck_assert_ptr_eq(stg_ctx_member_path(&ctx), p); /* kept on the link */
    char *entry = stg_ctx_entry_path(&ctx, "c");
    ck_assert_str_eq(entry, "a.zip!b.pkl!c");
    free(entry);
    free(leaf.path);
    stg_report_free(r);
}
END_TEST

static Suite *member_chain_suite(void)
{
    Suite *s = suite_create("member_chain");
    TCase *tc = tcase_create("member_chain");
    tcase_add_test(tc, test_chain_and_depth_guard);
    tcase_add_test(tc, test_path_rendered_only_when_needed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(member_chain_suite());
}
