/* stg_cv_load_buffer (convert/load.h): the values load_pickle walks, as the evaluator leaves
 * them (corpus/load/ seeds, made by torch.save and numpy), and its refusals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/load.h"
#include "testutil.h"

/* The value under a text key of a dict (NULL when absent). */
static const stg_cv *get(const stg_cv *d, const char *key)
{
    ck_assert_int_eq(d->kind, STG_CV_DICT);
    return stg_cv_dict_get(d, key);
}

typedef struct loaded {
    uint8_t *buf;
    stg_cv_eval ev;
    stg_cv *root;
    stg_report *rep;
    stg_status st;
} loaded;

static void load(loaded *l, const uint8_t *buf, size_t len)
{
    l->st = stg_cv_load_buffer(buf, len, NULL, NULL, &l->ev, &l->root, &l->rep);
}

static void load_seed(loaded *l, const char *name)
{
    char path[256];
    size_t len = 0;
    snprintf(path, sizeof path, "corpus/load/%s", name);
    l->buf = tu_read_file(tu_src(path), &len);
    ck_assert_ptr_nonnull(l->buf);
    load(l, l->buf, len);
}

static void unload(loaded *l)
{
    stg_cv_free(&l->ev);
    stg_report_free(l->rep);
    free(l->buf);
}

START_TEST(test_views_share_one_storage)
{
    loaded l = {0};
    load_seed(&l, "views-zip"); /* OrderedDict w (3x4 f32), wt = w.t(), row = w[1], tied = w */
    ck_assert_int_eq(l.st, STG_OK);
    const stg_cv *w = get(l.root, "w"), *wt = get(l.root, "wt"), *row = get(l.root, "row");
    ck_assert_ptr_nonnull(w);
    ck_assert(l.root->ordered);
    ck_assert_ptr_eq(get(l.root, "tied"), w); /* one object under two names */
    ck_assert_ptr_eq(wt->u.t->storage, w->u.t->storage);
    ck_assert_uint_eq(wt->u.t->stride[0], 1);
    ck_assert_uint_eq(wt->u.t->stride[1], 4);
    ck_assert_uint_eq(row->u.t->storage_offset, 4);
    ck_assert_uint_eq(w->u.t->storage->numel, 12);
    ck_assert(!w->u.t->parameter && !w->u.t->requires_grad);
    unload(&l);
}
END_TEST

START_TEST(test_parameters_keep_their_flags)
{
    loaded l = {0};
    load_seed(&l, "parameters"); /* p: Parameter; f: Parameter(requires_grad=False); g: grad */
    ck_assert_int_eq(l.st, STG_OK);
    const stg_cv_tensor *p = get(l.root, "p")->u.t, *f = get(l.root, "f")->u.t,
                        *g = get(l.root, "g")->u.t;
    ck_assert(p->parameter && p->requires_grad);
    ck_assert(f->parameter && !f->requires_grad);
    ck_assert(!g->parameter && g->requires_grad);
    unload(&l);
}
END_TEST

START_TEST(test_self_reference_is_one_value)
{
    loaded l = {0};
    load_seed(&l, "self-list");
    ck_assert_int_eq(l.st, STG_OK);
    ck_assert_int_eq(l.root->kind, STG_CV_LIST);
    ck_assert_uint_eq(l.root->n, 1);
    ck_assert_ptr_eq(l.root->u.items[0], l.root);
    unload(&l);
}
END_TEST

START_TEST(test_numpy_inputs)
{
    loaded l = {0};
    load_seed(&l, "fortran.npy"); /* 2x3 >i4 in Fortran order */
    ck_assert_int_eq(l.st, STG_OK);
    const stg_cv_tensor *a = get(l.root, "array")->u.t;
    ck_assert(a->storage->big_endian);
    ck_assert_uint_eq(a->stride[0], 1);
    ck_assert_uint_eq(a->stride[1], 2);
    unload(&l);
    loaded z = {0};
    load_seed(&z, "two.npz");
    ck_assert_int_eq(z.st, STG_OK);
    ck_assert_ptr_nonnull(get(z.root, "x"));
    ck_assert_ptr_nonnull(get(z.root, "y"));
    unload(&z);
}
END_TEST

START_TEST(test_refusals)
{
    /* a pickle that calls os.system: the scan refuses it, the evaluator never sees it */
    static const char evil[] = "cos\nsystem\n(S'true'\ntR.";
    loaded l = {0};
    load(&l, (const uint8_t *)evil, sizeof evil - 1);
    ck_assert_int_eq(l.st, STG_E_INVALID);
    ck_assert_ptr_null(l.root);
    ck_assert_int_eq(stg_report_verdict(l.rep), STG_VERDICT_UNSAFE);
    ck_assert_int_ge(tu_find(l.rep, STG_PICKLE_GLOBAL_DANGEROUS), 0);
    unload(&l);
    /* scans clean, but no torch.save wrote it: the converter's input framing refuses it */
    static const uint8_t plain[] = {0x80, 0x02, ']', 'q', 0x00, '.'};
    loaded p = {0};
    load(&p, plain, sizeof plain);
    ck_assert_int_eq(p.st, STG_E_INVALID);
    ck_assert_int_ge(tu_find(p.rep, STG_CONVERT_INPUT_UNKNOWN), 0);
    unload(&p);
}
END_TEST

START_TEST(test_bad_arguments)
{
    stg_cv_eval ev;
    stg_cv *root = (stg_cv *)1;
    stg_report *rep = (stg_report *)1;
    ck_assert_int_eq(stg_cv_load_buffer(NULL, 3, NULL, NULL, &ev, &root, &rep), STG_E_BAD_ARG);
    ck_assert_ptr_null(root);
    ck_assert_ptr_null(rep);
    stg_cv_free(&ev);
    stg_scan_options o;
    stg_scan_options_default(&o);
    o.struct_version = 0;
    ck_assert_int_eq(stg_cv_load_buffer((const uint8_t *)"x", 1, NULL, &o, &ev, &root, &rep),
                     STG_E_STRUCT_VERSION);
    stg_cv_free(&ev);
    /* an empty buffer is a refusal with a report, not a bad argument */
    ck_assert_int_eq(stg_cv_load_buffer(NULL, 0, NULL, NULL, &ev, &root, &rep), STG_E_INVALID);
    ck_assert_ptr_nonnull(rep);
    stg_cv_free(&ev);
    stg_report_free(rep);
}
END_TEST

static Suite *load_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_views_share_one_storage);
    tcase_add_test(tc, test_parameters_keep_their_flags);
    tcase_add_test(tc, test_self_reference_is_one_value);
    tcase_add_test(tc, test_numpy_inputs);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(load_suite());
}
