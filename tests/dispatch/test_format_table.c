/* The table of formats (dispatch/formats.c): every kind has one entry, names decide before
 * content, the door each entry opens, the sniff order, and one label rule for a full scan and a
 * quick label. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "dispatch/formats.h"
#include "dispatch/sniff.h"
#include "sniffname.h"
#include "testutil.h"
#include "validator/report.h"
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
    stg_archive_facts f = {false, false, false};
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

static Suite *format_table_suite(void)
{
    Suite *s = suite_create("format_table");
    TCase *tc = tcase_create("format_table");
    tcase_add_test(tc, test_every_kind_has_one_entry);
    tcase_add_test(tc, test_names_decide_before_content);
    tcase_add_test(tc, test_format_door);
    tcase_add_test(tc, test_sniff_order);
    tcase_add_test(tc, test_labels_agree);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(format_table_suite());
}
