/* Compat conformance: stguard's compat verdict (ok/warn or invalid) must be what
 * huggingface/safetensors 0.8 answers (OK or ERR).
 *  - Always: a built-in selection of the reference's probes, with the verdicts it gave.
 *  - With STG_CONFORMANCE_DIR (probe files from ../shared/conformance/gen_probes.py) and
 *    STG_CONFORMANCE_TSV (reference_verdicts.tsv): every probe listed; prints
 *    "conformance: N passed, M failed" (tools/conformance.sh sets both). */
#include <stdio.h>

#include "sttest.h"

#define U8_1 "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"

static const struct probe {
    const char *name;
    const char *hdr;
    size_t pad, data;
    bool reference_ok;
} probes[] = {
    {"ok_single", "{\"a\":{\"dtype\":\"BF16\",\"shape\":[1,1],\"data_offsets\":[0,2]}}", 0, 2,
     true},
    {"up_ws_leading", "\t\n{}\r ", 0, 0, true},
    {"up_ws_trailing", "{}\r \t\n", 0, 0, true},
    {"ws_vt_pad", "{}\v", 0, 0, false},
    {"trailing_garbage", "{}x", 0, 0, false},
    {"two_objects", "{}{}", 0, 0, false},
    {"top_array", "[]", 0, 0, false},
    {"dup_tensor_last_wins",
     "{\"a\":" U8_1 ",\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 0, 2, true},
    {"dup_tensor_first_would_win",
     "{\"a\":" U8_1 ",\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 0, 1, false},
    {"dup_metadata", "{\"__metadata__\":{\"x\":\"1\"},\"__metadata__\":{\"x\":\"2\"}}", 0, 0,
     false},
    {"dup_metadata_inner_key", "{\"__metadata__\":{\"x\":\"1\",\"x\":\"2\"}}", 0, 0, true},
    {"dup_field_in_info",
     "{\"a\":{\"dtype\":\"U8\",\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 0, 1,
     false},
    {"metadata_null", "{\"__metadata__\":null}", 0, 0, true},
    {"metadata_value_null", "{\"__metadata__\":{\"k\":null}}", 0, 0, false},
    {"metadata_key_is_tensorinfo", "{\"__metadata__\":" U8_1 "}", 0, 1, false},
    {"metadata_escaped_key", "{\"\\u005f_metadata__\":{\"k\":\"v\"}}", 0, 0, true},
    {"unknown_field_in_info",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"evil\":{\"deep\":[1,2,3]}}}",
     0, 1, true},
    {"info_as_array", "{\"a\":[\"U8\",[1],[0,1]]}", 0, 1, true},
    {"info_as_array_4", "{\"a\":[\"U8\",[1],[0,1],\"extra\"]}", 0, 1, false},
    {"dtype_as_map", "{\"a\":{\"dtype\":{\"U8\":null},\"shape\":[1],\"data_offsets\":[0,1]}}", 0, 1,
     true},
    {"dtype_as_map_nonnull", "{\"a\":{\"dtype\":{\"U8\":1},\"shape\":[1],\"data_offsets\":[0,1]}}",
     0, 1, false},
    {"dtype_escaped", "{\"a\":{\"dtype\":\"\\u0055\\u0038\",\"shape\":[1],\"data_offsets\":[0,1]}}",
     0, 1, true},
    {"dtype_F8_E4M3FN", "{\"a\":{\"dtype\":\"F8_E4M3FN\",\"shape\":[1],\"data_offsets\":[0,1]}}", 0,
     1, false},
    {"shape_neg_zero", "{\"a\":{\"dtype\":\"U8\",\"shape\":[-0],\"data_offsets\":[0,0]}}", 0, 0,
     false},
    {"offsets_unsorted_in_json",
     "{\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},\"a\":" U8_1 "}", 0, 2, true},
    {"offsets_alias_same",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
     "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}",
     0, 2, false},
    {"zero_size_many_same_offset",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[3,0,5],\"data_offsets\":[0,0]},\"c\":" U8_1 "}",
     0, 1, true},
    {"zero_dim_with_huge_other",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0,18446744073709551615],\"data_offsets\":[0,0]}}", 0, 0,
     true},
    {"zero_dim_overflow_before_zero",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[18446744073709551615,2,0],\"data_offsets\":[0,0]}}", 0, 0,
     false},
    {"empty_name", "{\"\":" U8_1 "}", 0, 1, true},
    {"name_with_nul_escape", "{\"a\\u0000b\":" U8_1 "}", 0, 1, true},
    {"name_lone_surrogate", "{\"a\\ud800\":" U8_1 "}", 0, 1, false},
    {"f4_odd", "{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 0, 2, false},
    {"f6_4elems", "{\"a\":{\"dtype\":\"F6_E2M3\",\"shape\":[4],\"data_offsets\":[0,3]}}", 0, 3,
     true},
    {"unknown_toplevel_string", "{\"x\":\"y\"}", 0, 0, false},
    {"empty_obj_with_trailing_data", "{}", 0, 1, false},
    {"up_empty_serialized", "{}", 6, 0, true},
};

START_TEST(test_builtin_probes)
{
    const struct probe *p = &probes[_i];
    stg_report *r = st_run(p->hdr, p->pad, p->data, STG_PROFILE_COMPAT);
    bool ok = stg_report_verdict(r) <= STG_VERDICT_WARN;
    ck_assert_msg(ok == p->reference_ok, "%s: reference %s, compat %s: %s", p->name,
                  p->reference_ok ? "OK" : "ERR", stg_verdict_name(stg_report_verdict(r)),
                  tu_describe(r));
    stg_report_free(r);
}
END_TEST

START_TEST(test_probe_directory)
{
    const char *dir = getenv("STG_CONFORMANCE_DIR");
    const char *tsv = getenv("STG_CONFORMANCE_TSV");
    if (dir == NULL || tsv == NULL) {
        printf(
            "conformance: probe directory not given (STG_CONFORMANCE_DIR), built-in probes only\n");
        return;
    }
    FILE *f = fopen(tsv, "r");
    ck_assert_msg(f != NULL, "cannot open %s", tsv);
    char line[512];
    unsigned passed = 0, failed = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char *tab = strchr(line, '\t');
        if (tab == NULL) {
            continue;
        }
        *tab = '\0';
        bool ref_ok = strncmp(tab + 1, "OK", 2) == 0;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, line);
        size_t len = 0;
        uint8_t *b = tu_read_file(path, &len);
        if (b == NULL) {
            printf("MISSING %s\n", path);
            failed++;
            continue;
        }
        stg_limits lim = st_limits(STG_PROFILE_COMPAT);
        stg_report *r = st_run_lim(b, len, &lim);
        stg_verdict v = stg_report_verdict(r);
        bool ok = v <= STG_VERDICT_WARN;
        if (ok == ref_ok && v != STG_VERDICT_ERROR) {
            passed++;
        } else {
            failed++;
            printf("MISMATCH %s: reference %s, stguard %s: %s\n", line, ref_ok ? "OK" : "ERR",
                   stg_verdict_name(v), tu_describe(r));
        }
        stg_report_free(r);
        free(b);
    }
    fclose(f);
    printf("conformance: %u passed, %u failed\n", passed, failed);
    ck_assert_uint_eq(failed, 0);
    ck_assert_uint_gt(passed, 0);
}
END_TEST

static Suite *conformance_suite(void)
{
    Suite *s = suite_create("conformance");
    TCase *tc = tcase_create("conformance");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_builtin_probes, 0, (int)(sizeof probes / sizeof probes[0]));
    tcase_add_test(tc, test_probe_directory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(conformance_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
