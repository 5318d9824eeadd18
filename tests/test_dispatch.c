/* The dispatch layer and the byte framing moved into parser/ (issue 12): the table of formats
 * (every kind has one entry, names decide before content, loader order), one label rule for a
 * full scan and a quick label, the one depth guard, member paths rendered from the chain only
 * when needed; the cursor's window; legacy torch framing; numpy.dtype reduce strings. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "dispatch/formats.h"
#include "dispatch/sniff.h"
#include "parser/cursor.h"
#include "parser/npy_reduce.h"
#include "parser/torch.h"
#include "testutil.h"
#include "validator/report.h"
#include "sniffname.h"
#include "zipbuild.h"

#define B(lit) (const uint8_t *)(lit), sizeof(lit) - 1

/* ---------------------------------------------------------------------------- table */

/* Every entry scans and has a name; sniff orders are unique (precedence never depends on the
 * row order); no name suffix is listed twice (a name matches one rule). */
START_TEST(test_every_kind_has_one_entry)
{
    size_t n = 0, nf = 0;
    const stg_format_entry *const *t = stg_format_entries(&n);
    const stg_filter_entry *const *f = stg_filter_entries(&nf);
    ck_assert_uint_gt(n, 8);
    for (size_t i = 0; i < n; i++) {
        ck_assert(t[i]->scan != NULL);
        ck_assert_ptr_nonnull(t[i]->name);
        for (size_t j = 0; j < n; j++) {
            ck_assert_msg(i == j || t[i]->sniff_order == 0 ||
                              t[i]->sniff_order != t[j]->sniff_order,
                          "%s %s", t[i]->name, t[j]->name);
            for (size_t a = 0; t[i]->names != NULL && t[i]->names[a].suffix != NULL; a++) {
                for (size_t b = 0; t[j]->names != NULL && t[j]->names[b].suffix != NULL; b++) {
                    ck_assert_msg((i == j && a == b) ||
                                      strcmp(t[i]->names[a].suffix, t[j]->names[b].suffix) != 0,
                                  "%s", t[i]->names[a].suffix);
                }
            }
        }
    }
    for (size_t i = 0; i < nf; i++) {
        for (size_t j = 0; j < nf; j++) {
            ck_assert(i == j || f[i]->sniff_order != f[j]->sniff_order);
        }
    }
}
END_TEST

START_TEST(test_names_decide_before_content)
{
    const stg_format_entry *e = stg_format_by_name("dir/Model.SafeTensors");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->name, "safetensors");
    e = stg_format_by_name("model.safetensors.index.json");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->name, "safetensors index");
    ck_assert(e->neighbours && !e->alone);
    /* ONNX is a name the table knows, but it decides only for content no entry claims */
    ck_assert_ptr_null(stg_format_by_name("model.onnx"));
    stg_name_hint h = stg_name_hint_of("model.onnx");
    ck_assert_ptr_nonnull(h.entry);
    ck_assert(h.entry->last_resort);
    ck_assert_ptr_null(stg_format_by_name("model.safetensors.json"));
    ck_assert_ptr_null(stg_format_by_name(NULL));
    /* pickle names claim, .joblib also labels */
    h = stg_name_hint_of("m.JOBLIB");
    ck_assert(stg_name_hint_claims_pickle(&h));
    ck_assert_int_eq(stg_name_hint_pickle_label(&h, STG_FMT_PICKLE), STG_FMT_JOBLIB);
    h = stg_name_hint_of("m.pt");
    ck_assert_int_eq(stg_name_hint_pickle_label(&h, STG_FMT_PICKLE), STG_FMT_PICKLE);
    h = stg_name_hint_of("m.gguf");
    ck_assert(!stg_name_hint_claims_pickle(&h));
    ck_assert_ptr_null(stg_name_hint_decides(&h));
}
END_TEST

/* The door a file opens by: a deciding name with a door, a magic, a claiming name. */
START_TEST(test_format_door)
{
    ck_assert_int_eq(stg_format_door("a/model.safetensors.index.json", B("GGUF")), STG_DOOR_MODEL);
    ck_assert_int_eq(stg_format_door("x.safetensors", B("GGUF\x03")), STG_DOOR_GGUF);
    ck_assert_int_eq(stg_format_door("x.bin", B("GGUF\x03")), STG_DOOR_GGUF);
    ck_assert_int_eq(stg_format_door("x.bin", B("GGUX\x03")), STG_DOOR_SAFETENSORS);
    ck_assert_int_eq(stg_format_door("x.ONNX", B("\x08\x07")), STG_DOOR_ONNX);
    ck_assert_int_eq(stg_format_door(NULL, B("\x08\x07")), STG_DOOR_SAFETENSORS);
}
END_TEST

/* What the loaders check first wins: a safetensors header that is also a tar header is
 * safetensors; a zip magic wins over what follows it. */
START_TEST(test_sniff_order)
{
    bool oom = false;
    const stg_format_entry *e = stg_format_sniff(B("\x02\0\0\0\0\0\0\0{}"), &oom);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->name, "safetensors");
    e = stg_format_sniff(B("PK\x03\x04\x80\x02]q\0."), &oom);
    ck_assert_str_eq(e->name, "zip");
    e = stg_format_sniff(B("\x80\x02]q\0."), &oom);
    ck_assert_str_eq(e->name, "pickle");
    ck_assert_ptr_null(stg_format_sniff(B("plain text"), &oom));
    ck_assert(!oom);
    ck_assert_str_eq(tu_sniffed(B("BZh9")), "bzip2");
    ck_assert_str_eq(tu_sniffed(B("BZh0")), "unknown"); /* near miss */
}
END_TEST

/* The quick label and the full scan's label come from the same rule. */
START_TEST(test_labels_agree)
{
    stg_archive_facts f = {false, false, false, false};
    ck_assert_int_eq(stg_format_zip_label(&f), STG_FMT_ZIP);
    f.all_npy = true;
    ck_assert_int_eq(stg_format_zip_label(&f), STG_FMT_NUMPY_ZIP);
    f.pickle = true;
    ck_assert_int_eq(stg_format_zip_label(&f), STG_FMT_TORCH_ZIP);
    ck_assert_int_eq(stg_format_tar_label(&f), STG_FMT_TAR);
    f.torch_tar = true;
    ck_assert_int_eq(stg_format_tar_label(&f), STG_FMT_TORCH_TAR);

    uint8_t *p;
    size_t len;
    zb_entry npy[] = {zb_file("a.npy", "\x93NUMPY", 6)};
    p = zb_build(npy, 1, NULL, &len, NULL);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_buffer(p, len, NULL, &ctx);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_NUMPY_ZIP);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_NUMPY_ZIP);
    stg_report_free(r);
    free(p);
}
END_TEST

/* ------------------------------------------------------------------ member chain, depth */

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

/* --------------------------------------------------------------------------- cursor */

START_TEST(test_cursor_window)
{
    static const uint8_t buf[16] = {0};
    stg_cursor c = stg_cur_make(buf, sizeof buf);
    ck_assert_int_eq(stg_cur_skip(&c, 4), STG_OK);
    stg_cursor sub;
    ck_assert_int_eq(stg_cur_sub(&c, 8, &sub), STG_OK);
    ck_assert_uint_eq(sub.begin, 4);
    ck_assert_uint_eq(sub.pos, 4);
    ck_assert_int_eq(stg_cur_seek(&sub, 3), STG_E_TRUNCATED);  /* before its window */
    ck_assert_int_eq(stg_cur_seek(&sub, 13), STG_E_TRUNCATED); /* past it */
    ck_assert_int_eq(stg_cur_seek(&sub, 12), STG_OK);          /* its end */
    ck_assert_int_eq(stg_cur_seek(&sub, 4), STG_OK);           /* its start */
    ck_assert_int_eq(stg_cur_seek(&c, 0), STG_OK);             /* the parent's window is all */
}
END_TEST

/* ----------------------------------------------------------------------- torch framing */

START_TEST(test_torch_legacy_magic)
{
    ck_assert(
        stg_torch_legacy_magic(B("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")));
    ck_assert(stg_torch_legacy_magic(
        B("\x80\x04\x95\x0d\0\0\0\0\0\0\0\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")));
    ck_assert(stg_torch_legacy_magic(B("L119547037146038801333356L\n.")));
    /* near misses: protocol 1 with LONG1, one magic byte off, cut short */
    ck_assert(
        !stg_torch_legacy_magic(B("\x80\x01\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")));
    ck_assert(
        !stg_torch_legacy_magic(B("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x18.")));
    ck_assert(
        !stg_torch_legacy_magic(B("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")));
    ck_assert(!stg_torch_legacy_magic(NULL, 0));
}
END_TEST

START_TEST(test_torch_storage_record)
{
    /* count 3, 4-byte elements: 12 bytes follow */
    static const uint8_t rec[8 + 12 + 1] = {3};
    stg_cursor c = stg_cur_make(rec, sizeof rec);
    uint64_t bytes = 0;
    ck_assert_int_eq(stg_torch_storage_record(&c, 4, &bytes), STG_OK);
    ck_assert_uint_eq(bytes, 12);
    ck_assert_uint_eq(c.pos, 8);
    /* 8-byte elements would need 24: past the end */
    c = stg_cur_make(rec, sizeof rec);
    ck_assert_int_eq(stg_torch_storage_record(&c, 8, &bytes), STG_E_INT_OVERFLOW);
    /* a count that wraps the product */
    static const uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    c = stg_cur_make(huge, sizeof huge);
    ck_assert_int_eq(stg_torch_storage_record(&c, 2, &bytes), STG_E_INT_OVERFLOW);
    c = stg_cur_make(rec, 7);
    ck_assert_int_eq(stg_torch_storage_record(&c, 1, &bytes), STG_E_TRUNCATED);
}
END_TEST

START_TEST(test_torch01_tensor_record)
{
    /* ndim 2: 4 + 4 + 2 x 16 + 8 = 48 bytes */
    static const uint8_t rec[48] = {2};
    stg_cursor c = stg_cur_make(rec, sizeof rec);
    ck_assert(stg_torch01_tensor_record(&c));
    ck_assert_uint_eq(c.pos, 48);
    c = stg_cur_make(rec, 47); /* one byte short: unchanged */
    ck_assert(!stg_torch01_tensor_record(&c));
    ck_assert_uint_eq(c.pos, 0);
    static const uint8_t many[4 + 4 + 65 * 16 + 8] = {65}; /* ndim past the cap */
    c = stg_cur_make(many, sizeof many);
    ck_assert(!stg_torch01_tensor_record(&c));
}
END_TEST

/* ------------------------------------------------------------------- dtype reduce strings */

START_TEST(test_npy_reduce_strings)
{
    uint64_t size = 0;
    bool object = false;
    ck_assert(stg_npy_reduce_fixed(B("f8"), &size, &object));
    ck_assert_uint_eq(size, 8);
    ck_assert(!object);
    ck_assert(stg_npy_reduce_fixed(B("c16"), &size, &object));
    ck_assert_uint_eq(size, 16);
    ck_assert(stg_npy_reduce_fixed(B("O8"), &size, &object));
    ck_assert(object);
    ck_assert(!stg_npy_reduce_fixed(B("f3"), &size, &object)); /* no such size */
    ck_assert(!stg_npy_reduce_fixed(B("S8"), &size, &object)); /* flexible */
    ck_assert(!stg_npy_reduce_fixed(B("\0"
                                      "8"),
                                    &size, &object)); /* a NUL is no kind */
    ck_assert(!stg_npy_reduce_fixed(B("f"), &size, &object));
    ck_assert(stg_npy_reduce_fixed(B("c32"), &size, &object)); /* numpy's complex256 */
    ck_assert_uint_eq(size, 32);
    ck_assert(!stg_npy_reduce_fixed(B("i16"), &size, &object)); /* numpy has no int128 */
    ck_assert(!stg_npy_reduce_fixed(B("c4"), &size, &object));
    uint8_t kind = 0;
    uint64_t count = 0;
    ck_assert(stg_npy_reduce_flexible(B("U5"), &kind, &count));
    ck_assert_int_eq(kind, 'U');
    ck_assert_uint_eq(count, 5);
    ck_assert(!stg_npy_reduce_flexible(B("U5x"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("f5"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("V123456789012"), &kind, &count)); /* 13 bytes */
    /* numpy keeps the item size in a C int: a larger one wraps there, so none is agreed on */
    ck_assert(stg_npy_reduce_flexible(B("S2147483647"), &kind, &count));
    ck_assert_uint_eq(count, 2147483647u);
    ck_assert(!stg_npy_reduce_flexible(B("S2147483648"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("S4294967297"), &kind, &count)); /* numpy: 1 byte */
    ck_assert(stg_npy_reduce_flexible(B("U536870911"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("U536870912"), &kind, &count)); /* x 4 wraps */
    ck_assert(!stg_npy_reduce_flexible(B("S+5"), &kind, &count)); /* numpy's strtol takes it */
}
END_TEST

static Suite *dispatch_suite(void)
{
    Suite *s = suite_create("dispatch");
    TCase *tc = tcase_create("dispatch");
    tcase_add_test(tc, test_every_kind_has_one_entry);
    tcase_add_test(tc, test_names_decide_before_content);
    tcase_add_test(tc, test_format_door);
    tcase_add_test(tc, test_sniff_order);
    tcase_add_test(tc, test_labels_agree);
    tcase_add_test(tc, test_chain_and_depth_guard);
    tcase_add_test(tc, test_path_rendered_only_when_needed);
    tcase_add_test(tc, test_cursor_window);
    tcase_add_test(tc, test_torch_legacy_magic);
    tcase_add_test(tc, test_torch_storage_record);
    tcase_add_test(tc, test_torch01_tensor_record);
    tcase_add_test(tc, test_npy_reduce_strings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(dispatch_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
