/* Strict versus compat: what strict adds to the reference becomes a warning with the same code
 * in compat; what the reference itself rejects stays an error in both; compat never rejects
 * what strict accepts. */
#include "sttest.h"

#define U8_1 "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"
#define INV STG_VERDICT_INVALID
#define WRN STG_VERDICT_WARN
#define OK STG_VERDICT_OK

static const struct pcase {
    const char *name;
    const char *hdr;
    size_t no_pad, data; /* no_pad: keep the header unpadded (else padded to 8) */
    stg_code code;       /* the code both profiles report */
    stg_verdict strict_v, compat_v;
} cases[] = {
    /* strict-only: warning in compat (files padded so that nothing else is reported) */
    {"leading_ws", "\n{\"a\":" U8_1 "}", 0, 1, STG_HEADER_NOT_JSON_OBJECT, INV, WRN},
    {"trailing_crlf", "{\"a\":" U8_1 "}\r\n", 0, 1, STG_HEADER_TRAILING_BYTES, INV, WRN},
    {"dup_tensor", "{\"a\":" U8_1 ",\"a\":" U8_1 "}", 0, 1, STG_JSON_DUPLICATE_KEY, INV, WRN},
    {"dup_metadata_key", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, 0,
     STG_JSON_DUPLICATE_KEY, INV, WRN},
    {"dup_in_ignored",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":{\"k\":1,\"k\":1}}}", 0,
     1, STG_JSON_DUPLICATE_KEY, INV, WRN},
    {"unknown_field", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":null}}",
     0, 1, STG_TENSOR_INFO_INVALID, INV, WRN},
    {"array_form", "{\"a\":[\"U8\",[1],[0,1]]}", 0, 1, STG_TENSOR_INFO_INVALID, INV, WRN},
    {"enum_dtype", "{\"a\":{\"dtype\":{\"U8\":null},\"shape\":[1],\"data_offsets\":[0,1]}}", 0, 1,
     STG_TENSOR_INFO_INVALID, INV, WRN},
    {"metadata_null", "{\"__metadata__\":null}", 0, 0, STG_METADATA_INVALID, INV, WRN},
    {"empty_name", "{\"\":" U8_1 "}", 0, 1, STG_TENSOR_NAME_INVALID, INV, WRN},
    {"control_name", "{\"a\\u001f\":" U8_1 "}", 0, 1, STG_TENSOR_NAME_INVALID, INV, WRN},
    /* the reference rejects these: error in both */
    {"dup_field", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"shape\":[1],\"data_offsets\":[0,1]}}",
     0, 1, STG_JSON_DUPLICATE_KEY, INV, INV},
    {"second_metadata", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, 0, STG_JSON_DUPLICATE_KEY,
     INV, INV},
    {"top_string_value", "{\"x\":\"y\"}", 0, 0, STG_TENSOR_INFO_INVALID, INV, INV},
    {"metadata_value_null", "{\"__metadata__\":{\"k\":null}}", 0, 0, STG_METADATA_INVALID, INV,
     INV},
    {"array_four", "{\"a\":[\"U8\",[1],[0,1],1]}", 0, 1, STG_TENSOR_INFO_INVALID, INV, INV},
    {"enum_dtype_empty_object",
     "{\"a\":{\"dtype\":{\"U8\":{}},\"shape\":[1],\"data_offsets\":[0,1]}}", 0, 1,
     STG_TENSOR_INFO_INVALID, INV, INV},
    {"trailing_formfeed", "{}\f", 0, 0, STG_HEADER_TRAILING_BYTES, INV, INV},
    /* numbers beyond the f64 range, even in ignored fields (serde_json: number out of range) */
    {"ignored_8e308", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":8e308}}",
     0, 1, STG_JSON_NUMBER_OVERFLOW, INV, INV},
    {"ignored_minus_1e400",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":[{\"y\":-1e400}]}}", 0, 1,
     STG_JSON_NUMBER_OVERFLOW, INV, INV},
    /* near misses: finite, so an ignored field as any other (RFC 8259 for the ...616.5 that
     * serde_json 1.0.87 rejected; 1.7976931348623158e308 is finite, see docs/json.md) */
    {"ignored_2_64_fraction",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":18446744073709551616.5}}",
     0, 1, STG_TENSOR_INFO_INVALID, INV, WRN},
    {"ignored_near_max",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":-1.7976931348623158e308}"
     "}",
     0, 1, STG_TENSOR_INFO_INVALID, INV, WRN},
    /* warnings in both */
    {"not_padded", "{}", 1, 0, STG_HEADER_NOT_PADDED, WRN, WRN},
    {"misaligned",
     "{\"a\":" U8_1 ",\"b\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[1,3]}}", 1, 3,
     STG_TENSOR_MISALIGNED, WRN, WRN},
};

START_TEST(test_profile_difference)
{
    const struct pcase *c = &cases[_i];
    size_t pad = c->no_pad ? 0 : (8 - (8 + strlen(c->hdr)) % 8) % 8;
    stg_report *s = st_run(c->hdr, pad, c->data, STG_PROFILE_STRICT);
    stg_report *k = st_run(c->hdr, pad, c->data, STG_PROFILE_COMPAT);
    ck_assert_msg(tu_find(s, c->code) >= 0, "%s strict: %s", c->name, tu_describe(s));
    ck_assert_msg(tu_find(k, c->code) >= 0, "%s compat: %s", c->name, tu_describe(k));
    ck_assert_msg(stg_report_verdict(s) == c->strict_v, "%s strict: %s", c->name, tu_describe(s));
    ck_assert_msg(stg_report_verdict(k) == c->compat_v, "%s compat: %s", c->name, tu_describe(k));
    /* compat never rejects what strict accepts */
    ck_assert_uint_le(stg_report_verdict(k), stg_report_verdict(s));
    /* same codes at the same offsets, only severities may differ */
    ck_assert_uint_eq(stg_report_count(s), stg_report_count(k));
    for (size_t i = 0; i < stg_report_count(s); i++) {
        ck_assert_int_eq(stg_report_at(s, i)->code, stg_report_at(k, i)->code);
        ck_assert_uint_eq(stg_report_at(s, i)->offset, stg_report_at(k, i)->offset);
        ck_assert_uint_le(stg_report_at(k, i)->severity, stg_report_at(s, i)->severity);
    }
    stg_report_free(s);
    stg_report_free(k);
}
END_TEST

/* A writer-style file (compact JSON, metadata first, padded with spaces, aligned, contiguous)
 * is ok in both profiles with no finding at all. */
START_TEST(test_clean_file_ok_in_both)
{
    const char *hdr = "{\"__metadata__\":{\"format\":\"pt\"},"
                      "\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                      "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[16,22]},"
                      "\"c\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[22,23]}}";
    size_t pad = (8 - (8 + strlen(hdr)) % 8) % 8;
    for (int p = 0; p < 2; p++) {
        stg_report *r = st_run(hdr, pad, 23, (stg_profile)p);
        ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
        st_expect_verdict(r, OK);
        stg_report_free(r);
    }
}
END_TEST

static Suite *profiles_suite(void)
{
    Suite *s = suite_create("profiles");
    TCase *tc = tcase_create("profiles");
    tcase_add_loop_test(tc, test_profile_difference, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_clean_file_ok_in_both);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(profiles_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
