/* Stage 2 (JSON header -> tensor table): every header and schema code with its severity in both
 * profiles and its byte offset, each with a near-miss input that must stay clean; then the
 * table the stage builds (names, escapes, shapes, metadata, last-wins). */
#include <stdio.h>

#include "sttest.h"

#define E STG_SEV_ERROR
#define W STG_SEV_WARNING

#define U8_1 "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"
#define X10 "xxxxxxxxxx"
#define X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10

static const struct hcase {
    const char *name;
    const char *hdr;
    size_t data;
    stg_code code;
    stg_severity strict_sev, compat_sev;
    const char *marker; /* the finding is at this substring's first occurrence ... */
    int skip;           /* ... plus skip bytes */
    const char *near;   /* near-miss header that must not produce the code */
    size_t near_data;
} cases[] = {
    {"not_object", "[]", 0, STG_HEADER_NOT_JSON_OBJECT, E, E, "[", 0, "{}", 0},
    {"leading_ws", " {}", 0, STG_HEADER_NOT_JSON_OBJECT, E, W, " ", 0, "{} ", 0},
    {"leading_garbage", "x{}", 0, STG_HEADER_NOT_JSON_OBJECT, E, E, "x", 0, "{}", 0},
    {"bom", "\xef\xbb\xbf{}", 0, STG_HEADER_NOT_JSON_OBJECT, E, E, "\xef", 0, "{}", 0},
    {"trailing_garbage", "{}x", 0, STG_HEADER_TRAILING_BYTES, E, E, "x", 0, "{}  ", 0},
    {"trailing_nul", "{} \0", 0, STG_HEADER_TRAILING_BYTES, E, E, "}", 2, "{}  ", 0},
    {"trailing_second_object", "{}{}", 0, STG_HEADER_TRAILING_BYTES, E, E, "}", 1, "{}", 0},
    {"trailing_tab", "{} \t", 0, STG_HEADER_TRAILING_BYTES, E, W, "\t", 0, "{}  ", 0},
    {"trailing_newline", "{}\n", 0, STG_HEADER_TRAILING_BYTES, E, W, "\n", 0, "{} ", 0},
    {"json_syntax", "{\"a\":}", 0, STG_JSON_SYNTAX, E, E, "}", 0, "{\"a\":" U8_1 "}", 1},
    {"json_truncated", "{\"a\":{\"dty", 0, STG_JSON_SYNTAX, E, E, "{\"dty", 5, "{\"a\":" U8_1 "}",
     1},
    {"json_utf8", "{\"a\xff\":" U8_1 "}", 1, STG_JSON_INVALID_UTF8, E, E, "\xff", 0,
     "{\"a\xc3\xa9\":" U8_1 "}", 1},
    {"json_lone_surrogate", "{\"a\\ud800\":" U8_1 "}", 1, STG_JSON_INVALID_UTF8, E, E, "\\ud8", 0,
     "{\"a\\ud83d\\ude00\":" U8_1 "}", 1},
    {"dup_tensor", "{\"a\":" U8_1 ",\"a\":" U8_1 "}", 1, STG_JSON_DUPLICATE_KEY, E, W, ",\"a\"", 1,
     "{\"a\":" U8_1 ",\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2},
    {"dup_tensor_escaped", "{\"ab\":" U8_1 ",\"a\\u0062\":" U8_1 "}", 1, STG_JSON_DUPLICATE_KEY, E,
     W, "\"a\\u", 0, "{\"ab\":" U8_1 "}", 1},
    {"dup_field",
     "{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_JSON_DUPLICATE_KEY, E, E, ",\"dtype\"", 1, "{\"a\":" U8_1 "}", 1},
    {"dup_field_shape",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_JSON_DUPLICATE_KEY, E, E, "],\"shape\"", 2, "{\"a\":" U8_1 "}", 1},
    {"dup_metadata_key", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, STG_JSON_DUPLICATE_KEY,
     E, W, ",\"k\"", 1, "{\"__metadata__\":{\"k\":\"1\",\"j\":\"2\"}}", 0},
    {"dup_metadata", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, STG_JSON_DUPLICATE_KEY, E, E,
     ",\"__", 1, "{\"__metadata__\":{}}", 0},
    {"dup_in_ignored",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":{\"k\":1,\"k\":2}}}", 1,
     STG_JSON_DUPLICATE_KEY, E, W, ",\"k\"", 1, "{\"a\":" U8_1 "}", 1},
    {"number_overflow",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[18446744073709551616],\"data_offsets\":[0,1]}}", 1,
     STG_JSON_NUMBER_OVERFLOW, E, E, "18446744073709551616", 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0,18446744073709551615],\"data_offsets\":[0,0]}}", 0},
    {"number_overflow_offsets",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,99999999999999999999]}}", 0,
     STG_JSON_NUMBER_OVERFLOW, E, E, "9999", 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", 0},
    /* issue 24: just above the f64 midpoint; serde_json 1.0.87 rounds it down to DBL_MAX and
     * accepts it (docs/json.md, differences); numbers just below are in test_json.c (an
     * ignored field is an error in strict, so the near miss here is the entry without it) */
    {"number_above_f64_midpoint",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1.79769313486231581e308}"
     "}",
     1, STG_JSON_NUMBER_OVERFLOW, E, E, "1.797", 0, "{\"a\":" U8_1 "}", 1},
    {"info_not_object", "{\"a\":\"x\"}", 0, STG_TENSOR_INFO_INVALID, E, E, "\"x\"", 0,
     "{\"a\":" U8_1 "}", 1},
    {"info_missing_offsets", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, STG_TENSOR_INFO_INVALID,
     E, E, "{\"dtype", 0, "{\"a\":" U8_1 "}", 1},
    {"info_missing_dtype", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_TENSOR_INFO_INVALID, E, E, "{\"shape", 0, "{\"a\":" U8_1 "}", 1},
    {"info_unknown_field",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"extra\":1}}", 1,
     STG_TENSOR_INFO_INVALID, E, W, "\"extra\"", 0, "{\"a\":" U8_1 "}", 1},
    {"info_field_case",
     "{\"a\":{\"Dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_TENSOR_INFO_INVALID, E, W, "\"Dtype\"", 0, "{\"a\":" U8_1 "}", 1},
    {"info_array_form", "{\"a\":[\"U8\",[1],[0,1]]}", 1, STG_TENSOR_INFO_INVALID, E, W, "[\"U8\"",
     0, "{\"a\":" U8_1 "}", 1},
    {"info_array_short", "{\"a\":[\"U8\",[1]]}", 1, STG_TENSOR_INFO_INVALID, E, E, "[\"U8\"", 0,
     "{\"a\":" U8_1 "}", 1},
    {"info_array_long", "{\"a\":[\"U8\",[1],[0,1],\"x\"]}", 1, STG_TENSOR_INFO_INVALID, E, E,
     "[\"U8\"", 0, "{\"a\":" U8_1 "}", 1},
    {"dtype_enum_form", "{\"a\":{\"dtype\":{\"U8\":null},\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_TENSOR_INFO_INVALID, E, W, "{\"U8\"", 0, "{\"a\":" U8_1 "}", 1},
    {"dtype_enum_nonnull", "{\"a\":{\"dtype\":{\"U8\":1},\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_TENSOR_INFO_INVALID, E, E, "{\"U8\"", 0, "{\"a\":" U8_1 "}", 1},
    {"dtype_enum_two",
     "{\"a\":{\"dtype\":{\"U8\":null,\"I8\":null},\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_TENSOR_INFO_INVALID, E, E, "{\"U8\"", 0, "{\"a\":" U8_1 "}", 1},
    {"dtype_number", "{\"a\":{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_TENSOR_INFO_INVALID, E, E, "5,", 0, "{\"a\":" U8_1 "}", 1},
    {"name_empty", "{\"\":" U8_1 "}", 1, STG_TENSOR_NAME_INVALID, E, W, "\"\"", 0,
     "{\"a b\":" U8_1 "}", 1},
    {"name_control", "{\"a\\u0001\":" U8_1 "}", 1, STG_TENSOR_NAME_INVALID, E, W, "\"a", 0,
     "{\"a\\u0041\":" U8_1 "}", 1},
    {"name_nul", "{\"a\\u0000b\":" U8_1 "}", 1, STG_TENSOR_NAME_INVALID, E, W, "\"a", 0,
     "{\"ab\":" U8_1 "}", 1},
    {"name_c1_control", "{\"a\\u0085\":" U8_1 "}", 1, STG_TENSOR_NAME_INVALID, E, W, "\"a", 0,
     "{\"a\\u00e9\":" U8_1 "}", 1},
    {"dtype_unknown", "{\"a\":{\"dtype\":\"F128\",\"shape\":[1],\"data_offsets\":[0,16]}}", 16,
     STG_DTYPE_UNKNOWN, E, E, "\"F128\"", 0,
     "{\"a\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]}}", 16},
    {"dtype_lowercase", "{\"a\":{\"dtype\":\"u8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_DTYPE_UNKNOWN, E, E, "\"u8\"", 0,
     "{\"a\":{\"dtype\":\"\\u0055\\u0038\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1},
    {"dtype_long_escaped",
     "{\"a\":{\"dtype\":\"\\u0055" X100 "\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_DTYPE_UNKNOWN, E, E, "\"\\u0055", 0,
     "{\"a\":{\"dtype\":\"\\u0055\\u0038\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1},
    {"dtype_enum_unknown",
     "{\"a\":{\"dtype\":{\"F128\":null},\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     STG_DTYPE_UNKNOWN, E, E, "{\"F128\"", 0, "{\"a\":" U8_1 "}", 1},
    {"shape_float", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1.0],\"data_offsets\":[0,1]}}", 1,
     STG_SHAPE_INVALID, E, E, "1.0", 0, "{\"a\":" U8_1 "}", 1},
    {"shape_negative", "{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}}", 1,
     STG_SHAPE_INVALID, E, E, "-1", 0, "{\"a\":" U8_1 "}", 1},
    {"shape_not_array", "{\"a\":{\"dtype\":\"U8\",\"shape\":\"x\",\"data_offsets\":[0,1]}}", 1,
     STG_SHAPE_INVALID, E, E, "\"x\"", 0, "{\"a\":" U8_1 "}", 1},
    {"shape_nested", "{\"a\":{\"dtype\":\"U8\",\"shape\":[[1]],\"data_offsets\":[0,1]}}", 1,
     STG_SHAPE_INVALID, E, E, "[1]", 0, "{\"a\":" U8_1 "}", 1},
    {"shape_overflow",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[18446744073709551615,2,0],\"data_offsets\":[0,0]}}", 0,
     STG_SHAPE_OVERFLOW, E, E, "[1844", 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0,18446744073709551615,2],\"data_offsets\":[0,0]}}", 0},
    {"shape_overflow_bits",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,0]}}", 0,
     STG_SHAPE_OVERFLOW, E, E, "[4611", 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0,4611686018427387904],\"data_offsets\":[0,0]}}", 0},
    {"subbyte", "{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 2,
     STG_SUBBYTE_MISALIGNED, E, E, "[3]", 0,
     "{\"a\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[0,2]}}", 2},
    {"subbyte_scalar", "{\"a\":{\"dtype\":\"F6_E2M3\",\"shape\":[],\"data_offsets\":[0,1]}}", 1,
     STG_SUBBYTE_MISALIGNED, E, E, "[]", 0,
     "{\"a\":{\"dtype\":\"F6_E2M3\",\"shape\":[4],\"data_offsets\":[0,3]}}", 3},
    {"size_mismatch", "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1,
     STG_SIZE_MISMATCH, E, E, "[0,1]", 0, "{\"a\":" U8_1 "}", 1},
    {"size_mismatch_end_max",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,18446744073709551615]}}", 1,
     STG_SIZE_MISMATCH, E, E, "[0,1844", 0, "{\"a\":" U8_1 "}", 1},
    {"offsets_reversed", "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[1,0]}}", 1,
     STG_OFFSETS_INVALID, E, E, "[1,0]", 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", 0},
    {"offsets_one", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]}}", 1,
     STG_OFFSETS_INVALID, E, E, "[0]", 0, "{\"a\":" U8_1 "}", 1},
    {"offsets_three", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 1,
     STG_OFFSETS_INVALID, E, E, "[0,1,2]", 0, "{\"a\":" U8_1 "}", 1},
    {"offsets_float", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1.0]}}", 1,
     STG_OFFSETS_INVALID, E, E, "1.0", 0, "{\"a\":" U8_1 "}", 1},
    {"offsets_object", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":{\"0\":0}}}", 1,
     STG_OFFSETS_INVALID, E, E, "{\"0\"", 0, "{\"a\":" U8_1 "}", 1},
    {"metadata_null", "{\"__metadata__\":null}", 0, STG_METADATA_INVALID, E, W, "null", 0,
     "{\"__metadata__\":{\"k\":\"v\"}}", 0},
    {"metadata_int_value", "{\"__metadata__\":{\"k\":1}}", 0, STG_METADATA_INVALID, E, E, "1}", 0,
     "{\"__metadata__\":{\"k\":\"1\"}}", 0},
    {"metadata_null_value", "{\"__metadata__\":{\"k\":null}}", 0, STG_METADATA_INVALID, E, E,
     "null", 0, "{\"__metadata__\":{\"k\":\"null\"}}", 0},
    {"metadata_string", "{\"__metadata__\":\"x\"}", 0, STG_METADATA_INVALID, E, E, "\"x\"", 0,
     "{\"__metadata__\":{}}", 0},
    {"metadata_tensor_like", "{\"__metadata__\":" U8_1 "}", 1, STG_METADATA_INVALID, E, E, "[1]", 0,
     "{\"__metadata_\":" U8_1 "}", 1},
    {"metadata_escaped_key", "{\"\\u005f_metadata__\":{\"k\":2}}", 0, STG_METADATA_INVALID, E, E,
     "2}", 0, "{\"\\u005f_metadata__\":{\"k\":\"2\"}}", 0},
};

START_TEST(test_header_codes)
{
    const struct hcase *c = &cases[_i];
    /* headers with an embedded NUL are built with their literal length */
    uint64_t off = st_at(c->hdr, c->marker) + (uint64_t)c->skip;
    if (strcmp(c->name, "trailing_nul") == 0) {
        static const char h[] = "{} \0";
        size_t len;
        uint8_t *b = tu_st_file("{} ", 0, NULL, 0, &len);
        uint8_t *b2 = malloc(len + 1);
        memcpy(b2, b, len);
        b2[len] = 0;
        b2[0] = (uint8_t)(sizeof h - 1);
        for (int p = 0; p < 2; p++) {
            stg_limits lim = st_limits((stg_profile)p);
            stg_report *r = st_run_lim(b2, len + 1, &lim);
            st_expect(r, STG_HEADER_TRAILING_BYTES, E, 11);
            st_expect_verdict(r, STG_VERDICT_INVALID);
            stg_report_free(r);
        }
        free(b);
        free(b2);
    } else {
        st_check_both(c->hdr, c->data, c->code, c->strict_sev, c->compat_sev, off);
    }
    st_check_clean(c->near, c->near_data, c->code);
}
END_TEST

/* A finding about a tensor names it. */
START_TEST(test_findings_carry_tensor_name)
{
    stg_report *r = st_run(
        "{\"w\\u0000x\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,1]}}", 0, 1,
        STG_PROFILE_STRICT);
    const stg_finding *f = st_find(r, STG_SIZE_MISMATCH);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->tensor_len, 3);
    ck_assert_int_eq(memcmp(f->tensor, "w\0x", 3), 0);
    f = st_find(r, STG_TENSOR_NAME_INVALID);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->tensor_len, 3);
    stg_report_free(r);
}
END_TEST

/* The table stage 2 builds: file order, decoded names and dtypes, shapes, metadata. */
START_TEST(test_table_contents)
{
    const char *hdr =
        "{\"__metadata__\":{\"format\":\"pt\",\"n\\u00e9\":\"v\\n\"},"
        "\"b\\u0062\":{\"\\u0064type\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]},"
        "\"a\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[12,13]}}";
    size_t len;
    uint8_t *b = st_file(hdr, 0, 13, &len);
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    h.want_public = true; /* the shapes too, as the loaders ask */
    stg_st_validate(b, len, &lim, r, &h);
    ck_assert(h.schema_ok);
    ck_assert(h.layout_ok);
    ck_assert_uint_eq(h.header_len, strlen(hdr));
    ck_assert_uint_eq(h.data_start, 8 + strlen(hdr));
    ck_assert_uint_eq(h.tensor_count, 2);
    /* the compact records: the escaped name in its side record, offsets found again */
    ck_assert_uint_eq(stg_st_name_offset(&h.tensors[0]), st_at(hdr, "\"b\\u"));
    ck_assert_uint_eq(stg_st_offsets_offset(&h, &h.tensors[0]), st_at(hdr, "[0,12]"));
    ck_assert_uint_eq(stg_st_offsets_offset(&h, &h.tensors[1]), st_at(hdr, "[12,13]"));
    ck_assert_ptr_nonnull(stg_st_rare_of(&h, &h.tensors[0]));
    ck_assert_ptr_null(stg_st_rare_of(&h, &h.tensors[1]));
    const stg_tensor *t = &h.pub[0];
    ck_assert_uint_eq(t->name_len, 2);
    ck_assert_int_eq(memcmp(t->name, "bb", 2), 0);
    ck_assert_int_eq(t->dtype, STG_DTYPE_F16);
    ck_assert_uint_eq(t->rank, 2);
    ck_assert_uint_eq(t->shape[0], 2);
    ck_assert_uint_eq(t->shape[1], 3);
    ck_assert_uint_eq(t->begin, 0);
    ck_assert_uint_eq(t->end, 12);
    t = &h.pub[1];
    ck_assert_uint_eq(t->name_len, 1);
    ck_assert_int_eq(t->name[0], 'a');
    ck_assert_uint_eq(t->rank, 0);
    ck_assert_uint_eq(t->end - t->begin, 1);
    ck_assert_uint_eq(h.metadata_count, 2);
    ck_assert_uint_eq(h.metadata[0].key_len, 6);
    ck_assert_int_eq(memcmp(h.metadata[0].key, "format", 6), 0);
    ck_assert_uint_eq(h.metadata[1].key_len, 3);
    ck_assert_int_eq(memcmp(h.metadata[1].key, "n\xc3\xa9", 3), 0);
    ck_assert_uint_eq(h.metadata[1].value_len, 2);
    ck_assert_int_eq(memcmp(h.metadata[1].value, "v\n", 2), 0);
    stg_report_finish(r);
    /* at most header_not_padded */
    bool padded = (8 + strlen(hdr)) % 8 == 0;
    st_expect_verdict(r, padded ? STG_VERDICT_OK : STG_VERDICT_WARN);
    ck_assert_uint_eq(stg_report_count(r), padded ? 0 : 1);
    stg_st_header_release(&h);
    stg_report_free(r);
    free(b);
}
END_TEST

/* Compat keeps the last of repeated names (as the reference) and the last metadata value. */
START_TEST(test_compat_last_wins_table)
{
    const char *hdr = "{\"__metadata__\":{\"k\":\"1\",\"j\":\"x\",\"k\":\"2\"},"
                      "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"a\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[0,2]}}";
    size_t len;
    uint8_t *b = st_file(hdr, 0, 2, &len);
    stg_limits lim = st_limits(STG_PROFILE_COMPAT);
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    stg_st_validate(b, len, &lim, r, &h);
    stg_report_finish(r);
    st_expect_verdict(r, STG_VERDICT_WARN);
    ck_assert_uint_eq(tu_count(r, STG_JSON_DUPLICATE_KEY), 2);
    ck_assert_uint_eq(h.tensor_count, 1);
    ck_assert_int_eq(stg_st_dtype(&h.tensors[0]), STG_DTYPE_I16);
    ck_assert_uint_eq(h.tensors[0].end, 2);
    ck_assert_uint_eq(h.metadata_count, 2);
    ck_assert_int_eq(memcmp(h.metadata[0].key, "j", 1), 0);
    ck_assert_int_eq(memcmp(h.metadata[1].key, "k", 1), 0);
    ck_assert_int_eq(memcmp(h.metadata[1].value, "2", 1), 0);
    stg_st_header_release(&h);
    stg_report_free(r);
    free(b);
    /* The first entry would not fit one byte of data: only the kept one counts. */
    r = st_run("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},\"a\":" U8_1 "}", 0,
               1, STG_PROFILE_COMPAT);
    st_expect_verdict(r, STG_VERDICT_WARN);
    stg_report_free(r);
    /* A dropped entry's own size is not checked (the reference validates the kept map only)... */
    r = st_run("{\"a\":{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[3,1]},\"a\":" U8_1 "}", 0,
               1, STG_PROFILE_COMPAT);
    st_expect_verdict(r, STG_VERDICT_WARN);
    stg_report_free(r);
    /* ... but its JSON types are (serde deserializes every value). */
    const char *neg = "{\"a\":{\"dtype\":\"U8\",\"shape\":[-5],\"data_offsets\":[0,1]},\"a\":" U8_1
                      "}";
    r = st_run(neg, 0, 1, STG_PROFILE_COMPAT);
    st_expect(r, STG_SHAPE_INVALID, E, st_at(neg, "-5"));
    st_expect_verdict(r, STG_VERDICT_INVALID);
    stg_report_free(r);
}
END_TEST

/* Schema findings are not reported when the JSON itself is broken (dependent checks skipped). */
START_TEST(test_syntax_hides_schema)
{
    stg_report *r = st_run("{\"a\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]},", 0, 1,
                           STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_JSON_SYNTAX);
    stg_report_free(r);
}
END_TEST

/* The same bytes give the same findings, and the report is in file order. */
START_TEST(test_deterministic_file_order)
{
    const char *hdr = "{\"b\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]},"
                      "\"a\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]},\"\":\"x\"}";
    stg_report *r1 = st_run(hdr, 0, 2, STG_PROFILE_STRICT);
    stg_report *r2 = st_run(hdr, 0, 2, STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_report_count(r1), stg_report_count(r2));
    ck_assert_uint_ge(stg_report_count(r1), 3);
    for (size_t i = 0; i < stg_report_count(r1); i++) {
        const stg_finding *a = stg_report_at(r1, i), *b = stg_report_at(r2, i);
        ck_assert_int_eq(a->code, b->code);
        ck_assert_uint_eq(a->offset, b->offset);
        ck_assert_str_eq(a->message, b->message);
        if (i > 0) {
            ck_assert_uint_ge(a->offset, stg_report_at(r1, i - 1)->offset);
        }
    }
    stg_report_free(r1);
    stg_report_free(r2);
}
END_TEST

/* Precedence (docs/findings.md) inside the header. */
START_TEST(test_header_precedence)
{
    /* nesting past the limit wins over what follows it (a syntax error, schema errors) */
    char deep[1024];
    int n = snprintf(deep, sizeof deep, "{\"a\":{\"dtype\":\"Q\",\"shape\":[1],\"x\":");
    for (int i = 0; i < 130; i++) {
        deep[n++] = '[';
    }
    strcpy(deep + n, "]]} junk");
    for (int p = 0; p < 2; p++) {
        stg_report *r = st_run(deep, 0, 0, (stg_profile)p);
        ck_assert_uint_eq(stg_report_count(r), 1);
        st_expect(r, STG_JSON_TOO_DEEP, E, st_at(deep, "[[[") + 125);
        stg_report_free(r);
    }
    /* a repeated name with the same range is json_duplicate_key, never offsets_overlap */
    const char *dup = "{\"a\":" U8_1 ",\"a\":" U8_1 "}";
    for (int p = 0; p < 2; p++) {
        stg_report *r = st_run(dup, 0, 1, (stg_profile)p);
        ck_assert_int_ge(tu_find(r, STG_JSON_DUPLICATE_KEY), 0);
        ck_assert_int_eq(tu_find(r, STG_OFFSETS_OVERLAP), -1);
        stg_report_free(r);
    }
    /* {"U8":null} is tensor_info_invalid, not dtype_unknown */
    const char *enum_form =
        "{\"a\":{\"dtype\":{\"U8\":null},\"shape\":[1],\"data_offsets\":[0,1]}}";
    for (int p = 0; p < 2; p++) {
        stg_report *r = st_run(enum_form, 0, 1, (stg_profile)p);
        ck_assert_int_ge(tu_find(r, STG_TENSOR_INFO_INVALID), 0);
        ck_assert_int_eq(tu_find(r, STG_DTYPE_UNKNOWN), -1);
        stg_report_free(r);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Stage 1 and 2 entry points called directly (the stream and mmap doors use them this way). */

START_TEST(test_frame_stage)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    uint64_t n = 0;
    static const uint8_t four[4] = {2, 0, 0, 0};
    /* Fewer than 8 bytes so far: more may come while the total is unknown or larger. */
    stg_report *r = stg_report_new(&lim);
    ck_assert_int_eq(stg_st_check_frame(four, 4, STG_ST_TOTAL_UNKNOWN, &lim, r, &n),
                     STG_ST_FRAME_NEED_MORE);
    ck_assert_int_eq(stg_st_check_frame(four, 4, 100, &lim, r, &n), STG_ST_FRAME_NEED_MORE);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_int_eq(stg_st_check_frame(four, 4, 4, &lim, r, &n), STG_ST_FRAME_FAILED);
    ck_assert_uint_eq(stg_report_count(r), 1);
    const stg_finding *f = stg_report_at(r, 0);
    ck_assert_int_eq(f->code, STG_FILE_TOO_SMALL);
    ck_assert_uint_eq(f->offset, 0);
    ck_assert_str_eq(f->message,
                     "the file has 4 bytes, fewer than the 8 of the header length field");
    stg_report_free(r);

    /* max_header_len above the 4 GiB - 1 ceiling: the ceiling applies, at N and N + 1. */
    lim.max_header_len = UINT64_MAX;
    static const uint8_t at_ceiling[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    static const uint8_t past_ceiling[8] = {0, 0, 0, 0, 1, 0, 0, 0};
    r = stg_report_new(&lim);
    ck_assert_int_eq(stg_st_check_frame(at_ceiling, 8, STG_ST_TOTAL_UNKNOWN, &lim, r, &n),
                     STG_ST_FRAME_OK);
    ck_assert_uint_eq(n, 4294967295u);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_int_eq(stg_st_check_frame(past_ceiling, 8, STG_ST_TOTAL_UNKNOWN, &lim, r, &n),
                     STG_ST_FRAME_FAILED);
    ck_assert_uint_eq(n, 4294967296u);
    f = stg_report_at(r, 0);
    ck_assert_int_eq(f->code, STG_HEADER_TOO_LARGE);
    ck_assert_str_eq(f->limit, "max_header_len");
    ck_assert_str_eq(f->message, "header length 4294967296 is over max_header_len 4294967295");
    stg_report_free(r);

    /* 8 + n against the total: exactly the end is fine, one byte short is header_truncated. */
    static const uint8_t ten[8] = {10, 0, 0, 0, 0, 0, 0, 0};
    r = stg_report_new(&lim);
    ck_assert_int_eq(stg_st_check_frame(ten, 8, 18, &lim, r, &n), STG_ST_FRAME_OK);
    ck_assert_int_eq(stg_st_check_frame(ten, 8, 17, &lim, r, &n), STG_ST_FRAME_FAILED);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_HEADER_TRUNCATED);
    stg_report_free(r);
}
END_TEST

START_TEST(test_parse_header_ceiling)
{
    /* A caller that skipped framing still cannot hand stage 2 a length past the ceiling. */
    stg_limits lim = st_limits(STG_PROFILE_COMPAT);
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    static const uint8_t hdr[] = "{}";
    ck_assert(!stg_st_parse_header(hdr, (uint64_t)UINT32_MAX + 1, &lim, r, &h));
    ck_assert(!h.schema_ok);
    ck_assert_uint_eq(h.data_start, (uint64_t)UINT32_MAX + 9);
    ck_assert_uint_eq(stg_report_count(r), 1);
    const stg_finding *f = stg_report_at(r, 0);
    ck_assert_int_eq(f->code, STG_HEADER_TOO_LARGE);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, 0);
    ck_assert_str_eq(f->limit, "max_header_len");
    ck_assert_uint_eq(h.arena.reserved, 0); /* refused before any memory was taken */
    stg_st_header_release(&h);
    stg_report_free(r);
}
END_TEST

START_TEST(test_memory_budget)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_st_memory_budget(&lim, 0), 8u << 20);
    ck_assert_uint_eq(stg_st_memory_budget(&lim, 100), 1600 + (8u << 20));
    ck_assert_uint_eq(stg_st_memory_budget(&lim, 100000000), 1600000000 + (8u << 20));
    /* The formula saturates instead of wrapping (16n, then + 8 MiB). */
    ck_assert_uint_eq(stg_st_memory_budget(&lim, UINT64_MAX / 16 + 1), UINT64_MAX);
    ck_assert_uint_eq(stg_st_memory_budget(&lim, UINT64_MAX / 16 - 10), UINT64_MAX);
    lim.max_memory = 12345; /* a hard cap is used as it is */
    ck_assert_uint_eq(stg_st_memory_budget(&lim, 100000000), 12345);
}
END_TEST

/* Builds a header into a malloc'd buffer (grows as needed). */
typedef struct hbuf {
    char *s;
    size_t len, cap;
} hbuf;

static void hb_add(hbuf *b, const char *text)
{
    size_t l = strlen(text);
    if (b->len + l + 1 > b->cap) {
        b->cap = (b->len + l + 1) * 2;
        b->s = realloc(b->s, b->cap);
        ck_assert_ptr_nonnull(b->s);
    }
    memcpy(b->s + b->len, text, l + 1);
    b->len += l;
}

/* Spaces that make 8 + header length a multiple of 8 (no header_not_padded). */
static size_t pad_for(size_t hlen)
{
    return (8 - hlen % 8) % 8;
}

/* Compat's last wins over many repeats at every distance (the earlier entry of each duplicate is
 * found by a search outward from the last one's, forward and backward): the kept entries are
 * each key's last value, in the order of those last occurrences. */
START_TEST(test_metadata_repeats_last_wins)
{
    enum { ENTRIES = 6000, NAMES = 97 };
    int last_at[NAMES];
    for (int k = 0; k < NAMES; k++) {
        last_at[k] = -1;
    }
    hbuf b = {0};
    hb_add(&b, "{\"__metadata__\":{");
    uint32_t x = 2463534242u;
    for (int i = 0; i < ENTRIES; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        /* runs of one key, short cycles, and random picks */
        int k = i < 1000 ? 7 : (i < 2000 ? i % 5 : (int)(x % NAMES));
        char e[48];
        snprintf(e, sizeof e, "%s\"m%d\":\"%d\"", i ? "," : "", k, i);
        hb_add(&b, e);
        last_at[k] = i;
    }
    hb_add(&b, "},\"a\":" U8_1 "}");
    size_t len;
    uint8_t *f = st_file(b.s, pad_for(b.len), 1, &len);
    stg_limits lim = st_limits(STG_PROFILE_COMPAT);
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    stg_st_validate(f, len, &lim, r, &h);
    stg_report_finish(r);
    st_expect_verdict(r, STG_VERDICT_WARN);
    size_t kept = 0;
    for (int i = 0; i < ENTRIES; i++) { /* expected entries in position order */
        for (int k = 0; k < NAMES; k++) {
            if (last_at[k] != i) {
                continue;
            }
            char key[16], value[16];
            snprintf(key, sizeof key, "m%d", k);
            snprintf(value, sizeof value, "%d", i);
            ck_assert_uint_lt(kept, h.metadata_count);
            ck_assert_uint_eq(h.metadata[kept].key_len, strlen(key));
            ck_assert_int_eq(memcmp(h.metadata[kept].key, key, strlen(key)), 0);
            ck_assert_uint_eq(h.metadata[kept].value_len, strlen(value));
            ck_assert_int_eq(memcmp(h.metadata[kept].value, value, strlen(value)), 0);
            kept++;
        }
    }
    ck_assert_uint_eq(h.metadata_count, kept);
    ck_assert_uint_eq(kept, NAMES);
    stg_st_header_release(&h);
    stg_report_free(r);
    free(f);
    free(b.s);
}
END_TEST

/* Regression: each __metadata__ entry used to grow the metadata array by half again whether it
 * was full or not, so ~60 entries exhausted the default budget (limit_exceeded max_memory on a
 * valid file). */
START_TEST(test_many_metadata_entries)
{
    hbuf b = {0};
    hb_add(&b, "{\"__metadata__\":{");
    for (int i = 0; i < 3000; i++) {
        char e[48];
        snprintf(e, sizeof e, "%s\"key%d\":\"value %d\"", i ? "," : "", i, i);
        hb_add(&b, e);
    }
    hb_add(&b, "},\"a\":" U8_1 "}");
    for (int p = 0; p < 2; p++) {
        size_t len;
        uint8_t *f = st_file(b.s, pad_for(b.len), 1, &len);
        stg_limits lim = st_limits((stg_profile)p);
        stg_report *r = stg_report_new(&lim);
        stg_st_header h;
        stg_st_header_init(&h);
        stg_st_validate(f, len, &lim, r, &h);
        stg_report_finish(r);
        ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
        st_expect_verdict(r, STG_VERDICT_OK);
        ck_assert_uint_eq(h.metadata_count, 3000);
        ck_assert_uint_eq(h.metadata[2999].key_len, 7);
        ck_assert_int_eq(memcmp(h.metadata[2999].key, "key2999", 7), 0);
        ck_assert_int_eq(memcmp(h.metadata[2999].value, "value 2999", 10), 0);
        /* the array grew geometrically: well under twice what the entries need */
        ck_assert_uint_le(h.metadata_cap_bytes, 2 * 3000 * sizeof(stg_st_meta));
        ck_assert_uint_le(h.arena.peak, stg_st_memory_budget(&lim, b.len + pad_for(b.len)));
        stg_st_header_release(&h);
        stg_report_free(r);
        free(f);
    }
    free(b.s);
}
END_TEST

/* Field names may be escaped: they compare after decoding. */
START_TEST(test_escaped_field_names)
{
    const char *hdr = "{\"a\":{\"\\u0064type\":\"U8\",\"\\u0073hape\":[1],"
                      "\"data\\u005foffsets\":[0,1]}}";
    stg_report *r = st_run(hdr, pad_for(strlen(hdr)), 1, STG_PROFILE_STRICT);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    /* escaped, but another name: an unknown field */
    const char *other = "{\"a\":{\"dtype\":\"U8\",\"\\u0073hapes\":[1],\"shape\":[1],"
                        "\"data_offsets\":[0,1]}}";
    st_check_both(other, 1, STG_TENSOR_INFO_INVALID, E, W, st_at(other, "\"\\u0073"));
}
END_TEST

/* Repeated keys too long to be a field name or __metadata__ once decoded. */
START_TEST(test_long_escaped_duplicates)
{
    const char *names = "{\"\\u0061" X100 "\":" U8_1 ",\"\\u0061" X100 "\":" U8_1 "}";
    st_check_both(names, 1, STG_JSON_DUPLICATE_KEY, E, W, st_at(names, ",\"\\u") + 1);
    const char *fields = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
                         "\"\\u0078" X100 "\":1,\"\\u0078" X100 "\":2}}";
    /* an unknown field repeated: strict error, compat warning (a known one is an error) */
    st_check_both(fields, 1, STG_JSON_DUPLICATE_KEY, E, W, st_at(fields, "1,\"\\u") + 2);
}
END_TEST

/* A table of more than 4 MiB (huge-page advice on Linux) behaves as any other. */
START_TEST(test_large_table)
{
    enum { N = 180000, BAD = 31234 };
    hbuf b = {0};
    hb_add(&b, "{");
    char bad_marker[64] = "";
    for (int i = 0; i < N; i++) {
        char e[128];
        snprintf(e, sizeof e,
                 "%s\"t%05d\":{\"dtype\":\"U8\",\"shape\":[%d],\"data_offsets\":[%d,%d]}",
                 i ? "," : "", i, i == BAD ? 2 : 1, i, i + 1);
        hb_add(&b, e);
        if (i == BAD) {
            snprintf(bad_marker, sizeof bad_marker, "[%d,%d]", i, i + 1);
        }
    }
    hb_add(&b, "}");
    ck_assert_uint_gt(N * sizeof(stg_st_tensor), (size_t)4 << 20);
    size_t len;
    uint8_t *f = st_file(b.s, pad_for(b.len), N, &len);
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    stg_st_validate(f, len, &lim, r, &h);
    stg_report_finish(r);
    /* one schema error: layout is skipped */
    ck_assert_msg(stg_report_count(r) == 1, "%s", tu_describe(r));
    const stg_finding *fd = stg_report_at(r, 0);
    ck_assert_int_eq(fd->code, STG_SIZE_MISMATCH);
    ck_assert_uint_eq(fd->offset, st_at(b.s, bad_marker));
    ck_assert_uint_eq(fd->tensor_len, 6);
    ck_assert_int_eq(memcmp(fd->tensor, "t31234", 6), 0);
    ck_assert_uint_eq(h.tensor_count, N);
    ck_assert(!h.schema_ok);
    ck_assert_uint_le(h.arena.peak, stg_st_memory_budget(&lim, b.len + pad_for(b.len)));
    stg_st_header_release(&h);
    stg_report_free(r);
    free(f);

    /* the same table with the bad entry fixed is ok */
    char *at = strstr(b.s, "\"t31234\"");
    ck_assert_ptr_nonnull(at);
    char *shape = strstr(at, "[2]");
    shape[1] = '1';
    f = st_file(b.s, pad_for(b.len), N, &len);
    r = st_run_lim(f, len, &lim);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    st_expect_verdict(r, STG_VERDICT_OK);
    stg_report_free(r);
    free(f);
    free(b.s);
}
END_TEST

/* A header full of '{' inside strings: the table's space is reserved from the header length
 * (one record per 48 bytes, the shortest entry), not from the brace count, and the budget is
 * charged only for the records there are. */
START_TEST(test_brace_flood)
{
    hbuf b = {0};
    hb_add(&b, "{\"__metadata__\":{\"k\":\"");
    char braces[1001];
    memset(braces, '{', 1000);
    braces[1000] = '\0';
    for (int i = 0; i < 200; i++) {
        hb_add(&b, braces);
    }
    hb_add(&b, "\"},\"a\":" U8_1 ",\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}");
    size_t len;
    uint8_t *f = st_file(b.s, pad_for(b.len), 2, &len);
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    stg_st_validate(f, len, &lim, r, &h);
    stg_report_finish(r);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    ck_assert_uint_eq(h.tensor_count, 2);
    /* space reserved from the header length, not the brace count (200,000), and charged only
     * as records fill it */
    ck_assert_uint_le(h.tensors_space_bytes, (b.len / 48 + 1) * sizeof(stg_st_tensor));
    ck_assert_uint_lt(h.tensors_cap_bytes, 1000 * sizeof(stg_st_tensor));
    ck_assert_uint_eq(h.metadata_count, 1);
    ck_assert_uint_eq(h.metadata[0].value_len, 200000);
    stg_st_header_release(&h);
    stg_report_free(r);
    free(f);
    free(b.s);
}
END_TEST

static Suite *header_suite(void)
{
    Suite *s = suite_create("header");
    TCase *tc = tcase_create("codes");
    tcase_add_loop_test(tc, test_header_codes, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_findings_carry_tensor_name);
    tcase_add_test(tc, test_table_contents);
    tcase_add_test(tc, test_compat_last_wins_table);
    tcase_add_test(tc, test_syntax_hides_schema);
    tcase_add_test(tc, test_deterministic_file_order);
    tcase_add_test(tc, test_header_precedence);
    tcase_add_test(tc, test_frame_stage);
    tcase_add_test(tc, test_parse_header_ceiling);
    tcase_add_test(tc, test_memory_budget);
    tcase_add_test(tc, test_many_metadata_entries);
    tcase_add_test(tc, test_metadata_repeats_last_wins);
    tcase_add_test(tc, test_escaped_field_names);
    tcase_add_test(tc, test_long_escaped_duplicates);
    tcase_add_test(tc, test_large_table);
    tcase_add_test(tc, test_brace_flood);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(header_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
