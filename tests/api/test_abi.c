/* The caller-filled structs' convention (docs/abi.md, "Caller-filled structs"):
 * - struct_version is the first field of stg_limits, stg_scan_options and stg_stream_options,
 *   and their sizes are pinned (new fields take reserved space);
 * - the _init functions fill the defaults and say whether they know the version; the header's
 *   _default inlines pass STG_STRUCT_VERSION;
 * - every entry point taking such a struct refuses version 0 (not initialised) and a version
 *   newer than the library's with STG_E_STRUCT_VERSION, before making a report;
 * - reserved bytes are never read: garbage there changes nothing. */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"

#define T1 "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"

static const uint32_t bad_versions[] = {0u, STG_STRUCT_VERSION + 1u, UINT32_MAX};
#define NBAD (sizeof bad_versions / sizeof bad_versions[0])

START_TEST(test_layout)
{
    ck_assert_uint_eq(STG_STRUCT_VERSION, 1);
    ck_assert_uint_eq(offsetof(stg_limits, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_scan_options, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_stream_options, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_tree_options, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_signature_options, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_signature_options, reserved) +
                          sizeof(((stg_signature_options *)0)->reserved),
                      sizeof(stg_signature_options));
    ck_assert_uint_eq(offsetof(stg_tree_record, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_tree_progress, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_tree_summary, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_gguf_entry, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_gguf_tensor_info, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_gguf_entry, reserved) + sizeof(((stg_gguf_entry *)0)->reserved),
                      sizeof(stg_gguf_entry));
    ck_assert_uint_eq(offsetof(stg_gguf_tensor_info, reserved) +
                          sizeof(((stg_gguf_tensor_info *)0)->reserved),
                      sizeof(stg_gguf_tensor_info));
    ck_assert_uint_eq(offsetof(stg_onnx_model_info, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_onnx_opset_info, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_onnx_value_info, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_onnx_op_info, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_onnx_tensor_info, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_onnx_model_info, reserved) +
                          sizeof(((stg_onnx_model_info *)0)->reserved),
                      sizeof(stg_onnx_model_info));
    ck_assert_uint_eq(offsetof(stg_onnx_opset_info, reserved) +
                          sizeof(((stg_onnx_opset_info *)0)->reserved),
                      sizeof(stg_onnx_opset_info));
    ck_assert_uint_eq(offsetof(stg_onnx_value_info, reserved) +
                          sizeof(((stg_onnx_value_info *)0)->reserved),
                      sizeof(stg_onnx_value_info));
    ck_assert_uint_eq(offsetof(stg_onnx_op_info, reserved) +
                          sizeof(((stg_onnx_op_info *)0)->reserved),
                      sizeof(stg_onnx_op_info));
    ck_assert_uint_eq(offsetof(stg_onnx_tensor_info, reserved) +
                          sizeof(((stg_onnx_tensor_info *)0)->reserved),
                      sizeof(stg_onnx_tensor_info));
    ck_assert_uint_eq(offsetof(stg_flax_param_info, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_flax_param_info, reserved) +
                          sizeof(((stg_flax_param_info *)0)->reserved),
                      sizeof(stg_flax_param_info));
    ck_assert_uint_eq(offsetof(stg_summary_entry, struct_version), 0);
    ck_assert_uint_eq(offsetof(stg_summary_entry, reserved) +
                          sizeof(((stg_summary_entry *)0)->reserved),
                      sizeof(stg_summary_entry));
    /* Reserved space is last, so a new field never moves an earlier one. */
    ck_assert_uint_eq(offsetof(stg_limits, reserved) + sizeof(((stg_limits *)0)->reserved),
                      sizeof(stg_limits));
    ck_assert_uint_eq(offsetof(stg_scan_options, reserved) +
                          sizeof(((stg_scan_options *)0)->reserved),
                      sizeof(stg_scan_options));
    ck_assert_uint_eq(offsetof(stg_stream_options, reserved) +
                          sizeof(((stg_stream_options *)0)->reserved),
                      sizeof(stg_stream_options));
    ck_assert_uint_eq(offsetof(stg_tree_options, reserved) +
                          sizeof(((stg_tree_options *)0)->reserved),
                      sizeof(stg_tree_options));
    ck_assert_uint_eq(offsetof(stg_tree_summary, reserved) +
                          sizeof(((stg_tree_summary *)0)->reserved),
                      sizeof(stg_tree_summary));
#if UINTPTR_MAX == UINT64_MAX
    /* The LP64 sizes of libstguard.so.1: changing one is an ABI break (docs/abi.md). */
    ck_assert_uint_eq(sizeof(stg_limits), 256);
    ck_assert_uint_eq(offsetof(stg_limits, reserved), 96);
    ck_assert_uint_eq(sizeof(stg_scan_options), 360);
    ck_assert_uint_eq(offsetof(stg_scan_options, limits), 8);
    ck_assert_uint_eq(offsetof(stg_scan_options, reserved), 296);
    ck_assert_uint_eq(sizeof(stg_stream_options), 80);
    ck_assert_uint_eq(offsetof(stg_stream_options, reserved), 16);
    ck_assert_uint_eq(sizeof(stg_signature_options), 136);
    ck_assert_uint_eq(offsetof(stg_signature_options, reserved), 72);
    ck_assert_uint_eq(sizeof(stg_signature_finding), 40);
    ck_assert_uint_eq(sizeof(stg_tree_options), 536);
    ck_assert_uint_eq(offsetof(stg_tree_options, scan), 8);
    ck_assert_uint_eq(offsetof(stg_tree_options, reserved), 472);
    ck_assert_uint_eq(sizeof(stg_tree_record), 64);
    ck_assert_uint_eq(offsetof(stg_tree_record, reserved), 32);
    ck_assert_uint_eq(sizeof(stg_tree_progress), 88);
    ck_assert_uint_eq(offsetof(stg_tree_progress, reserved), 56);
    ck_assert_uint_eq(sizeof(stg_tree_summary), 184);
    ck_assert_uint_eq(offsetof(stg_tree_summary, reserved), 120);
    ck_assert_uint_eq(sizeof(stg_gguf_entry), 112);
    ck_assert_uint_eq(offsetof(stg_gguf_entry, reserved), 80);
    ck_assert_uint_eq(sizeof(stg_gguf_tensor_info), 128);
    ck_assert_uint_eq(offsetof(stg_gguf_tensor_info, reserved), 96);
    ck_assert_uint_eq(sizeof(stg_onnx_model_info), 184);
    ck_assert_uint_eq(offsetof(stg_onnx_model_info, reserved), 128);
    ck_assert_uint_eq(sizeof(stg_onnx_opset_info), 56);
    ck_assert_uint_eq(offsetof(stg_onnx_opset_info, reserved), 32);
    ck_assert_uint_eq(sizeof(stg_onnx_value_info), 80);
    ck_assert_uint_eq(offsetof(stg_onnx_value_info, reserved), 48);
    ck_assert_uint_eq(sizeof(stg_onnx_op_info), 72);
    ck_assert_uint_eq(offsetof(stg_onnx_op_info, reserved), 56);
    ck_assert_uint_eq(sizeof(stg_onnx_tensor_info), 136);
    ck_assert_uint_eq(offsetof(stg_onnx_tensor_info, reserved), 104);
    ck_assert_uint_eq(sizeof(stg_onnx_dim), 24); /* an array element: its layout is fixed */
    ck_assert_uint_eq(sizeof(stg_flax_param_info), 352);
    ck_assert_uint_eq(offsetof(stg_flax_param_info, reserved), 320);
    ck_assert_uint_eq(sizeof(stg_summary_entry), 104);
    ck_assert_uint_eq(offsetof(stg_summary_entry, reserved), 72);
#endif
}
END_TEST

START_TEST(test_init)
{
    stg_limits lim;
    memset(&lim, 0xA5, sizeof lim);
    stg_limits_default(&lim);
    ck_assert_uint_eq(lim.struct_version, STG_STRUCT_VERSION);
    ck_assert_uint_eq(lim.max_rank, 64);
    for (size_t i = 0; i < sizeof lim.reserved / sizeof lim.reserved[0]; i++) {
        ck_assert_uint_eq(lim.reserved[i], 0);
    }
    ck_assert_int_eq(stg_limits_init(&lim, 1), STG_OK);
    ck_assert_int_eq(stg_limits_init(NULL, 1), STG_E_BAD_ARG);
    for (size_t b = 0; b < NBAD; b++) {
        /* Unknown: filled (with that version, so every later call refuses it) but said so. */
        memset(&lim, 0xA5, sizeof lim);
        ck_assert_int_eq(stg_limits_init(&lim, bad_versions[b]), STG_E_STRUCT_VERSION);
        ck_assert_uint_eq(lim.struct_version, bad_versions[b]);
        ck_assert_uint_eq(lim.max_rank, 64);
        ck_assert_int_eq(stg_limits_set(&lim, "max_rank", "8"), STG_E_STRUCT_VERSION);
        ck_assert_uint_eq(lim.max_rank, 64);
    }

    stg_scan_options opt;
    memset(&opt, 0xA5, sizeof opt);
    stg_scan_options_default(&opt);
    ck_assert_uint_eq(opt.struct_version, STG_STRUCT_VERSION);
    ck_assert_uint_eq(opt.limits.struct_version, STG_STRUCT_VERSION);
    ck_assert(opt.digest);
    ck_assert_ptr_null(opt.policy);
    ck_assert_ptr_null(opt.root);
    ck_assert_int_eq(stg_scan_options_init(NULL, 1), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_scan_options_init(&opt, 0), STG_E_STRUCT_VERSION);
    ck_assert_uint_eq(opt.limits.struct_version, 0);

    stg_stream_options so;
    memset(&so, 0xA5, sizeof so);
    stg_stream_options_default(&so);
    ck_assert_uint_eq(so.struct_version, STG_STRUCT_VERSION);
    ck_assert(so.digest);
    ck_assert(!so.tensor_digests);
    ck_assert_int_eq(stg_stream_options_init(NULL, 1), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_stream_options_init(&so, STG_STRUCT_VERSION + 1), STG_E_STRUCT_VERSION);
}
END_TEST

/* Every entry point refuses an unknown version before it reports anything. */
START_TEST(test_entry_points_refuse)
{
    const uint32_t v = bad_versions[_i];
    size_t len = 0;
    uint8_t *buf = tu_st_file("{\"a\":" T1 "}", 0, "x", 1, &len);
    const char *path = tu_src("tests/data"); /* never opened: the check comes first */

    stg_limits lim;
    stg_limits_default(&lim);
    lim.struct_version = v;
    stg_report *r = (stg_report *)&lim; /* any non-NULL value: must be reset to NULL */
    ck_assert_int_eq(stg_validate_buffer(buf, len, &lim, &r), STG_E_STRUCT_VERSION);
    ck_assert_ptr_null(r);
    stg_file *f = NULL;
    r = NULL;
    ck_assert_int_eq(stg_file_open(path, &lim, &f, &r), STG_E_STRUCT_VERSION);
    ck_assert_ptr_null(f);
    ck_assert_ptr_null(r);
    stg_model *m = NULL;
    ck_assert_int_eq(stg_model_open(path, &lim, &m, &r), STG_E_STRUCT_VERSION);
    ck_assert_ptr_null(m);
    ck_assert_ptr_null(r);
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(&lim, NULL, &s), STG_E_STRUCT_VERSION);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(stg_limits_set(&lim, "profile", "compat"), STG_E_STRUCT_VERSION);

    stg_stream_options so;
    stg_stream_options_default(&so);
    so.struct_version = v;
    ck_assert_int_eq(stg_stream_new(NULL, &so, &s), STG_E_STRUCT_VERSION);
    ck_assert_ptr_null(s);

    /* The options' own version and the embedded limits' version are both checked. */
    for (int which = 0; which < 2; which++) {
        stg_scan_options opt;
        stg_scan_options_default(&opt);
        if (which == 0) {
            opt.struct_version = v;
        } else {
            opt.limits.struct_version = v;
        }
        r = (stg_report *)&opt;
        ck_assert_int_eq(stg_scan_buffer(buf, len, "m.safetensors", &opt, &r),
                         STG_E_STRUCT_VERSION);
        ck_assert_ptr_null(r);
        r = (stg_report *)&opt;
        ck_assert_int_eq(stg_scan_path(path, &opt, &r), STG_E_STRUCT_VERSION);
        ck_assert_ptr_null(r);
    }
    ck_assert_str_eq(stg_status_name(STG_E_STRUCT_VERSION), "STG_E_STRUCT_VERSION");
    free(buf);
}
END_TEST

/* Near miss of the test above: the current version is accepted and its fields are honoured
 * (compat makes whitespace before the header object a warning), whatever the
 * reserved bytes hold. */
static stg_verdict scan_with(const uint8_t *buf, size_t len, bool garbage, stg_profile profile,
                             size_t *count)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    opt.limits.profile = profile;
    if (garbage) {
        memset(opt.reserved, 0xFF, sizeof opt.reserved);
        memset(opt.limits.reserved, 0xFF, sizeof opt.limits.reserved);
    }
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(buf, len, "m.safetensors", &opt, &r), STG_OK);
    stg_verdict v = stg_report_verdict(r);
    *count = stg_report_count(r);
    stg_report_free(r);
    return v;
}

START_TEST(test_reserved_ignored)
{
    size_t len = 0;
    /* leading whitespace: strict error, compat warning */
    uint8_t *buf = tu_st_file(" {\"a\":" T1 "}", 0, "x", 1, &len);
    for (int p = 0; p < 2; p++) {
        size_t clean_n = 0, dirty_n = 0;
        stg_verdict clean = scan_with(buf, len, false, (stg_profile)p, &clean_n);
        stg_verdict dirty = scan_with(buf, len, true, (stg_profile)p, &dirty_n);
        ck_assert_int_eq(clean, p == 0 ? STG_VERDICT_INVALID : STG_VERDICT_WARN);
        ck_assert_int_eq(dirty, clean);
        ck_assert_uint_eq(dirty_n, clean_n);
    }

    stg_limits lim;
    stg_limits_default(&lim);
    memset(lim.reserved, 0xFF, sizeof lim.reserved);
    ck_assert_int_eq(stg_limits_set(&lim, "profile", "compat"), STG_OK);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_validate_buffer(buf, len, &lim, &r), STG_OK);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_report_free(r);

    stg_stream_options so;
    stg_stream_options_default(&so);
    memset(so.reserved, 0xFF, sizeof so.reserved);
    so.digest = false;
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(&lim, &so, &s), STG_OK);
    ck_assert_int_eq(stg_stream_feed(s, buf, len), STG_OK);
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    ck_assert_ptr_null(stg_report_sha256(r)); /* digest = false was read */
    stg_report_free(r);
    stg_stream_free(s);
    free(buf);
}
END_TEST

static Suite *abi_suite(void)
{
    Suite *s = suite_create("abi");
    TCase *tc = tcase_create("structs");
    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_init);
    tcase_add_loop_test(tc, test_entry_points_refuse, 0, (int)NBAD);
    tcase_add_test(tc, test_reserved_ignored);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(abi_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
