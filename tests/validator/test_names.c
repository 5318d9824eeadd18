/* The stable strings of every public enum and the limit names (validator/names.c):
 * - every stg_code keeps its number and the name docs/findings.md gives it, and the codes a
 *   single buffer can raise come out with their default severity (stg_code_severity), in both
 *   profiles;
 * - every stg_status, severity, verdict, global class and format has its pinned number and name,
 *   and values outside the enums get the documented fallback;
 * - every dtype name and size is the reference's, looked up exactly;
 * - every limit name round-trips through stg_limits_set (and only that field changes), bad
 *   names and values are rejected and leave the limits as they were; the defaults are the documented ones (SECURITY.md). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/dtype.h"

/* The enum's pinned numbers and stable names, in number order (validator/codes.def has the
 * rest of each code; tests/validator/test_codes.c checks its severities against docs/findings.md). */
static const struct code_row {
    stg_code code;
    int number;
    const char *name;
} codes[] = {
    {STG_FILE_TOO_SMALL, 1, "file_too_small"},
    {STG_HEADER_LENGTH_INVALID, 2, "header_length_invalid"},
    {STG_HEADER_TOO_LARGE, 3, "header_too_large"},
    {STG_HEADER_TRUNCATED, 4, "header_truncated"},
    {STG_HEADER_NOT_JSON_OBJECT, 5, "header_not_json_object"},
    {STG_HEADER_TRAILING_BYTES, 6, "header_trailing_bytes"},
    {STG_JSON_SYNTAX, 7, "json_syntax"},
    {STG_JSON_INVALID_UTF8, 8, "json_invalid_utf8"},
    {STG_JSON_DUPLICATE_KEY, 9, "json_duplicate_key"},
    {STG_JSON_TOO_DEEP, 10, "json_too_deep"},
    {STG_JSON_NUMBER_OVERFLOW, 11, "json_number_overflow"},
    {STG_TENSOR_INFO_INVALID, 12, "tensor_info_invalid"},
    {STG_TENSOR_NAME_INVALID, 13, "tensor_name_invalid"},
    {STG_DTYPE_UNKNOWN, 14, "dtype_unknown"},
    {STG_SHAPE_INVALID, 15, "shape_invalid"},
    {STG_SHAPE_OVERFLOW, 16, "shape_overflow"},
    {STG_SUBBYTE_MISALIGNED, 17, "subbyte_misaligned"},
    {STG_SIZE_MISMATCH, 18, "size_mismatch"},
    {STG_OFFSETS_INVALID, 19, "offsets_invalid"},
    {STG_OFFSETS_OUT_OF_RANGE, 20, "offsets_out_of_range"},
    {STG_OFFSETS_OVERLAP, 21, "offsets_overlap"},
    {STG_DATA_GAP, 22, "data_gap"},
    {STG_DATA_TRAILING, 23, "data_trailing"},
    {STG_HEADER_NOT_PADDED, 24, "header_not_padded"},
    {STG_TENSOR_MISALIGNED, 25, "tensor_misaligned"},
    {STG_METADATA_INVALID, 26, "metadata_invalid"},
    {STG_LIMIT_EXCEEDED, 27, "limit_exceeded"},
    {STG_FINDINGS_TRUNCATED, 28, "findings_truncated"},
    {STG_POLYGLOT_ZIP, 29, "polyglot_zip"},
    {STG_POLYGLOT_PICKLE, 30, "polyglot_pickle"},
    {STG_FORMAT_UNKNOWN, 31, "format_unknown"},
    {STG_FORMAT_MISMATCH, 32, "format_mismatch"},
    {STG_FORMAT_NOT_VALIDATED, 33, "format_not_validated"},
    {STG_FORMAT_UNSCANNABLE, 34, "format_unscannable"},
    {STG_PICKLE_FILE, 35, "pickle_file"},
    {STG_PICKLE_GLOBAL_BENIGN, 36, "pickle_global_benign"},
    {STG_PICKLE_GLOBAL_DANGEROUS, 37, "pickle_global_dangerous"},
    {STG_PICKLE_GLOBAL_UNKNOWN, 38, "pickle_global_unknown"},
    {STG_PICKLE_GLOBAL_UNRESOLVED, 39, "pickle_global_unresolved"},
    {STG_PICKLE_FRAME_DIVERGENCE, 40, "pickle_frame_divergence"},
    {STG_PICKLE_MALFORMED, 41, "pickle_malformed"},
    {STG_PICKLE_NESTED, 42, "pickle_nested"},
    {STG_PICKLE_BUILD_ON_GLOBAL, 43, "pickle_build_on_global"},
    {STG_ZIP_MALFORMED, 44, "zip_malformed"},
    {STG_CONTAINER_MALFORMED, 45, "container_malformed"},
    {STG_ZIP_HEADER_MISMATCH, 46, "zip_header_mismatch"},
    {STG_ZIP_ENCRYPTED_FLAG, 47, "zip_encrypted_flag"},
    {STG_ZIP_BOMB, 48, "zip_bomb"},
    {STG_INDEX_INVALID, 49, "index_invalid"},
    {STG_INDEX_SHARD_PATH_UNSAFE, 50, "index_shard_path_unsafe"},
    {STG_INDEX_SHARD_MISSING, 51, "index_shard_missing"},
    {STG_INDEX_TENSOR_MISSING, 52, "index_tensor_missing"},
    {STG_INDEX_TENSOR_UNLISTED, 53, "index_tensor_unlisted"},
    {STG_INDEX_TENSOR_DUPLICATE, 54, "index_tensor_duplicate"},
    {STG_INDEX_TOTAL_SIZE_MISMATCH, 55, "index_total_size_mismatch"},
    {STG_DIGEST_MISMATCH, 56, "digest_mismatch"},
    {STG_SYMLINK_SKIPPED, 57, "symlink_skipped"},
    {STG_NOT_REGULAR_FILE, 58, "not_regular_file"},
    {STG_FILE_CHANGED_CODE, 59, "file_changed"},
    {STG_IO_ERROR, 60, "io_error"},
    {STG_POLYGLOT_TAR, 61, "polyglot_tar"},
    {STG_TAR_LINK_EXTERNAL, 62, "tar_link_external"},
    {STG_ZIP_AMBIGUOUS, 63, "zip_ambiguous"},
    {STG_JOBLIB_SIDE_FILE_ESCAPE, 65, "joblib_side_file_escape"},
    {STG_JOBLIB_SIDE_FILE_MISSING, 66, "joblib_side_file_missing"},
    {STG_JOBLIB_SIDE_FILE_UNRESOLVED, 67, "joblib_side_file_unresolved"},
    {STG_PICKLE_MEMO_SPARSE, 71, "pickle_memo_sparse"},
    {STG_LFS_POINTER, 75, "lfs_pointer"},
    {STG_GGUF_HEADER_INVALID, 80, "gguf_header_invalid"},
    {STG_GGUF_VERSION_OBSOLETE, 81, "gguf_version_obsolete"},
    {STG_GGUF_COUNT_INVALID, 82, "gguf_count_invalid"},
    {STG_GGUF_TRUNCATED, 83, "gguf_truncated"},
    {STG_GGUF_STRING_INVALID, 84, "gguf_string_invalid"},
    {STG_GGUF_KEY_INVALID, 85, "gguf_key_invalid"},
    {STG_GGUF_KEY_DUPLICATE, 86, "gguf_key_duplicate"},
    {STG_GGUF_VALUE_TYPE_INVALID, 87, "gguf_value_type_invalid"},
    {STG_GGUF_ARRAY_INVALID, 88, "gguf_array_invalid"},
    {STG_GGUF_METADATA_TYPE_MISMATCH, 89, "gguf_metadata_type_mismatch"},
    {STG_GGUF_ALIGNMENT_INVALID, 90, "gguf_alignment_invalid"},
    {STG_GGUF_TENSOR_NAME_INVALID, 91, "gguf_tensor_name_invalid"},
    {STG_GGUF_TENSOR_DUPLICATE, 92, "gguf_tensor_duplicate"},
    {STG_GGUF_TENSOR_SHAPE_INVALID, 93, "gguf_tensor_shape_invalid"},
    {STG_GGUF_TENSOR_TYPE_INVALID, 94, "gguf_tensor_type_invalid"},
    {STG_ONNX_MALFORMED, 95, "onnx_malformed"},
    {STG_ONNX_EXTERNAL_PATH_UNSAFE, 96, "onnx_external_path_unsafe"},
    {STG_ONNX_EXTERNAL_MISSING, 97, "onnx_external_missing"},
    {STG_ONNX_CUSTOM_DOMAIN, 98, "onnx_custom_domain"},
    {STG_ONNX_OPSET_INVALID, 99, "onnx_opset_invalid"},
    {STG_CONVERT_UNSUPPORTED, 100, "convert_unsupported"},
    {STG_CONVERT_TENSOR_INVALID, 101, "convert_tensor_invalid"},
    {STG_CONVERT_LEAF_SKIPPED, 102, "convert_leaf_skipped"},
    {STG_CONVERT_INPUT_UNKNOWN, 103, "convert_input_unknown"},
    {STG_CONVERT_ALIAS_DROPPED, 104, "convert_alias_dropped"},
    {STG_TORCHSCRIPT_PROGRAM, 110, "torchscript_program"},
    {STG_PICKLE_SKIP_UNRESOLVED, 120, "pickle_skip_unresolved"},
    {STG_TORCH01_STORAGE_UNRESOLVED, 121, "torch01_storage_unresolved"},
    {STG_TORCHSCRIPT_CLASS, 125, "torchscript_class"},
    {STG_TORCHSCRIPT_BUILTIN, 126, "torchscript_builtin"},
    {STG_TORCHSCRIPT_CLASS_UNDEFINED, 127, "torchscript_class_undefined"},
    {STG_SIGNATURE_MALFORMED, 130, "signature_malformed"},
    {STG_SIGNATURE_STATEMENT_INVALID, 131, "signature_statement_invalid"},
    {STG_SIGNATURE_INVALID, 132, "signature_invalid"},
    {STG_SIGNATURE_UNTRUSTED, 133, "signature_untrusted"},
    {STG_SIGNATURE_UNSUPPORTED, 134, "signature_unsupported"},
    {STG_SIGNED_FILE_MODIFIED, 135, "signed_file_modified"},
    {STG_SIGNED_FILE_EXTRA, 136, "signed_file_extra"},
    {STG_SIGNED_FILE_MISSING, 137, "signed_file_missing"},
    {STG_SIGNED_FILE_UNVERIFIABLE, 138, "signed_file_unverifiable"},
    {STG_SIGNATURE_INCOMPLETE, 139, "signature_incomplete"},
    {STG_FLATBUFFER_MALFORMED, 140, "flatbuffer_malformed"},
    {STG_FLATBUFFER_INDEX_INVALID, 141, "flatbuffer_index_invalid"},
    {STG_FLATBUFFER_CUSTOM_OP, 142, "flatbuffer_custom_op"},
    {STG_EXECUTORCH_DELEGATE, 143, "executorch_delegate"},
    {STG_FLATBUFFER_DATA_RANGE, 144, "flatbuffer_data_range"},
    {STG_TF_INDEX_MALFORMED, 145, "tf_index_malformed"},
    {STG_DATASET_MALFORMED, 146, "dataset_malformed"},
    {STG_DATASET_TEXT_INVALID, 147, "dataset_text_invalid"},
    {STG_KERAS_LAMBDA, 150, "keras_lambda"},
    {STG_KERAS_MODULE_UNSAFE, 151, "keras_module_unsafe"},
    {STG_KERAS_CUSTOM_OBJECT, 152, "keras_custom_object"},
    {STG_KERAS_CONFIG_MALFORMED, 153, "keras_config_malformed"},
    {STG_HDF5_MALFORMED, 154, "hdf5_malformed"},
    {STG_HDF5_UNSUPPORTED, 155, "hdf5_unsupported"},
    {STG_TF_OP_UNSAFE, 157, "tf_op_unsafe"},
    {STG_TF_PYFUNC, 158, "tf_pyfunc"},
    {STG_TF_SAVEDMODEL_MALFORMED, 159, "tf_savedmodel_malformed"},
    {STG_TEMPLATE_UNSAFE, 160, "chat_template_unsafe"},
    {STG_TEMPLATE_MALFORMED, 161, "chat_template_malformed"},
    {STG_TEMPLATE_LOADER, 162, "chat_template_loader"},
    {STG_TEMPLATE_FOUND, 163, "chat_template_found"},
    {STG_TEMPLATE_FIELD_INVALID, 164, "chat_template_field_invalid"},
    {STG_REMOTE_CODE, 165, "remote_code"},
    {STG_REMOTE_CODE_CROSS_REPO, 166, "remote_code_cross_repo"},
    {STG_REMOTE_CODE_INVALID, 167, "remote_code_invalid"},
    {STG_FLAX_MALFORMED, 170, "flax_malformed"},
    {STG_FLAX_TRAILING, 171, "flax_trailing"},
    {STG_FLAX_EXT_UNKNOWN, 172, "flax_ext_unknown"},
    {STG_FLAX_ARRAY_INVALID, 173, "flax_array_invalid"},
    {STG_FLAX_DTYPE_UNKNOWN, 174, "flax_dtype_unknown"},
    {STG_FLAX_SIZE_MISMATCH, 175, "flax_size_mismatch"},
    {STG_FLAX_KEY_DUPLICATE, 176, "flax_key_duplicate"},
    {STG_GGML_LEGACY, 177, "ggml_legacy"},
    {STG_TOKENIZER_MALFORMED, 178, "tokenizer_malformed"},
    {STG_SIBLING_RANGE_OUTSIDE, 180, "sibling_range_outside"},
    {STG_XML_MALFORMED, 181, "xml_malformed"},
    {STG_OPENVINO_CONST_INVALID, 182, "openvino_const_invalid"},
    {STG_OPENVINO_WEIGHTS_MISSING, 183, "openvino_weights_missing"},
    {STG_OPENVINO_VERSION_UNSUPPORTED, 184, "openvino_version_unsupported"},
    {STG_COREML_BLOB_INVALID, 185, "coreml_blob_invalid"},
    {STG_COREML_MODEL_MALFORMED, 186, "coreml_model_malformed"},
    {STG_HYDRA_TARGET_UNSAFE, 190, "hydra_target_unsafe"},
    {STG_HYDRA_TARGET_UNRESOLVED, 191, "hydra_target_unresolved"},
    {STG_YAML_MALFORMED, 192, "yaml_malformed"},
    {STG_YAML_UNSUPPORTED, 193, "yaml_unsupported"},
    {STG_SKOPS_TYPE_UNTRUSTED, 195, "skops_type_untrusted"},
    {STG_SKOPS_TYPE_DANGEROUS, 196, "skops_type_dangerous"},
    {STG_SKOPS_MALFORMED, 197, "skops_malformed"},
};
#define ORIGINAL_CODES 60 /* 1..60 are the original table, dense */
#define NCODES (sizeof codes / sizeof codes[0])

START_TEST(test_code_numbers_and_names)
{
    const struct code_row *c = &codes[_i];
    ck_assert_int_eq((int)c->code, c->number);
    /* in the table's order, never renumbered; ranges reserved for parallel work may leave gaps */
    ck_assert_int_gt(c->number, _i == 0 ? 0 : codes[_i - 1].number);
    ck_assert_int_le(c->number, STG_CODE_MAX);
    const char *got = stg_code_name(c->code);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, c->name);
    /* stable strings are the JSON names: lower case, digits and '_' only */
    for (const char *s = got; *s != '\0'; s++) {
        ck_assert_msg((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_',
                      "%s: bad char", got);
    }
    for (size_t j = 0; j < NCODES; j++) {
        if (j != (size_t)_i) {
            ck_assert_msg(strcmp(got, stg_code_name(codes[j].code)) != 0, "%s twice", got);
        }
    }
}
END_TEST

START_TEST(test_code_out_of_range)
{
    /* Numbers outside the enum have no name: NULL, never a made-up string. */
    ck_assert_ptr_null(stg_code_name((stg_code)0));
    ck_assert_ptr_null(stg_code_name((stg_code)(STG_CODE_MAX + 1)));
    for (int n = 1; n <= STG_CODE_MAX; n++) {
        bool listed = false;
        for (size_t j = 0; j < NCODES; j++) {
            listed = listed || codes[j].number == n;
        }
        ck_assert_msg(listed == (stg_code_name((stg_code)n) != NULL), "code %d", n);
    }
    ck_assert_ptr_null(stg_code_name((stg_code)-1));
    ck_assert_ptr_null(stg_code_name((stg_code)1000));
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Severity per profile, for the codes one buffer can raise through stg_scan_buffer. */

/* A Git LFS pointer as `git lfs` writes it (spec v1). */
#define LFS_PTR                                                                     \
    "version https://git-lfs.github.com/spec/v1\n"                                  \
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n" \
    "size 12345\n"

typedef struct trigger {
    const char *what;
    stg_code code;
    const char *bytes; /* NULL: a safetensors file is built from `header` */
    size_t len;
    const char *header;
    size_t data;
    const char *hint;
} trigger;

#define T1 "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"

static const trigger triggers[] = {
    {"too_small", STG_FILE_TOO_SMALL, "\x02\0\0\0", 4, NULL, 0, "m.safetensors"},
    {"len_zero", STG_HEADER_LENGTH_INVALID, "\0\0\0\0\0\0\0\0{}", 10, NULL, 0, "m.safetensors"},
    {"too_large", STG_HEADER_TOO_LARGE, "\xff\xff\xff\xff\0\0\0\0{}", 10, NULL, 0, "m.safetensors"},
    {"truncated", STG_HEADER_TRUNCATED, "\x10\0\0\0\0\0\0\0{}", 10, NULL, 0, "m.safetensors"},
    {"leading_ws", STG_HEADER_NOT_JSON_OBJECT, NULL, 0, " {}", 0, NULL},
    {"trailing_tab", STG_HEADER_TRAILING_BYTES, NULL, 0, "{}\t", 0, NULL},
    {"syntax", STG_JSON_SYNTAX, NULL, 0, "{\"a\":}", 0, NULL},
    {"utf8", STG_JSON_INVALID_UTF8, NULL, 0, "{\"\xff\":1}", 0, NULL},
    {"dup_tensor", STG_JSON_DUPLICATE_KEY, NULL, 0, "{\"a\":" T1 ",\"a\":" T1 "}", 1, NULL},
    {"deep", STG_JSON_TOO_DEEP, NULL, 0,
     "{\"__metadata__\":{\"a\":"
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
     0, NULL},
    {"number", STG_JSON_NUMBER_OVERFLOW, NULL, 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,18446744073709551616]}}", 0, NULL},
    {"extra_field", STG_TENSOR_INFO_INVALID, NULL, 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1, NULL},
    {"empty_name", STG_TENSOR_NAME_INVALID, NULL, 0, "{\"\":" T1 "}", 1, NULL},
    {"dtype", STG_DTYPE_UNKNOWN, NULL, 0,
     "{\"a\":{\"dtype\":\"u8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, NULL},
    {"shape", STG_SHAPE_INVALID, NULL, 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}}", 1, NULL},
    {"shape_overflow", STG_SHAPE_OVERFLOW, NULL, 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,0],\"data_offsets\":[0,0]}}", 0,
     NULL},
    {"subbyte", STG_SUBBYTE_MISALIGNED, NULL, 0,
     "{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}}", 1, NULL},
    {"size", STG_SIZE_MISMATCH, NULL, 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1, NULL},
    {"offsets", STG_OFFSETS_INVALID, NULL, 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,0]}}", 1, NULL},
    {"range", STG_OFFSETS_OUT_OF_RANGE, NULL, 0, "{\"a\":" T1 "}", 0, NULL},
    {"overlap", STG_OFFSETS_OVERLAP, NULL, 0,
     "{\"a\":" T1 ",\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, NULL},
    {"gap", STG_DATA_GAP, NULL, 0,
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2, NULL},
    {"trailing", STG_DATA_TRAILING, NULL, 0, "{\"a\":" T1 "}", 2, NULL},
    {"not_padded", STG_HEADER_NOT_PADDED, NULL, 0, "{}", 0, NULL},
    {"misaligned", STG_TENSOR_MISALIGNED, NULL, 0,
     "{\"a\":" T1 ",\"b\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[1,3]}}", 3, NULL},
    {"metadata_null", STG_METADATA_INVALID, NULL, 0, "{\"__metadata__\":null}", 0, NULL},
    {"unknown", STG_FORMAT_UNKNOWN, "\x01hello, world", 13, NULL, 0, NULL},
    {"lfs_pointer", STG_LFS_POINTER, LFS_PTR, sizeof LFS_PTR - 1, NULL, 0, "model.safetensors"},
    {"mismatch", STG_FORMAT_MISMATCH, "hello, world", 12, NULL, 0, "model.bin"},
    /* GGUF is validated (no format says format_not_validated any more): version 1 */
    {"gguf", STG_GGUF_VERSION_OBSOLETE, "GGUF\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24, NULL, 0,
     NULL},
    /* a reviewed framework class: pickle_file stays a warning (test_pickle_file_severity) */
    {"pickle", STG_PICKLE_FILE, "ctorch.nn.modules.linear\nIdentity\n.", 35, NULL, 0, NULL},
    {"dangerous", STG_PICKLE_GLOBAL_DANGEROUS, "cos\nsystem\n.", 12, NULL, 0, NULL},
    {"unknown_global", STG_PICKLE_GLOBAL_UNKNOWN, "cfoo\nbar\n.", 10, NULL, 0, NULL},
    {"malformed", STG_PICKLE_MALFORMED, "\x80\x02K", 3, NULL, 0, "model.pkl"},
    {"memo_sparse", STG_PICKLE_MEMO_SPARSE, "\x80\x02Nr\xff\xff\xff\xff.", 9, NULL, 0, "model.pkl"},
};
#define NTRIGGERS (sizeof triggers / sizeof triggers[0])

static const struct code_row *row_of(stg_code code)
{
    for (size_t i = 0; i < NCODES; i++) {
        if (codes[i].code == code) {
            return &codes[i];
        }
    }
    ck_abort_msg("code %d not in the table", (int)code);
    return NULL;
}

START_TEST(test_code_severity)
{
    const trigger *t = &triggers[_i];
    const struct code_row *row = row_of(t->code);
    size_t len = t->len;
    uint8_t *built = NULL;
    const void *bytes = t->bytes;
    if (bytes == NULL) {
        built = tu_st_file(t->header, 0, NULL, t->data, &len);
        bytes = built;
    }
    for (int p = 0; p < 2; p++) {
        stg_scan_options opt;
        stg_scan_options_default(&opt);
        opt.limits.profile = (stg_profile)p;
        opt.digest = false;
        stg_report *r = NULL;
        ck_assert_int_eq(stg_scan_buffer(bytes, len, t->hint, &opt, &r), STG_OK);
        long at = tu_find(r, t->code);
        ck_assert_msg(at >= 0, "%s: no %s in %s", t->what, row->name, tu_describe(r));
        const stg_finding *f = stg_report_at(r, (size_t)at);
        stg_severity want = stg_code_severity(t->code, (stg_profile)p);
        ck_assert_msg(f->severity == want, "%s (%s): %s is %s, its default is %s", t->what,
                      p ? "compat" : "strict", row->name, stg_severity_name(f->severity),
                      stg_severity_name(want));
        ck_assert_ptr_nonnull(f->message);
        ck_assert_uint_gt(strlen(f->message), 0);
        stg_report_free(r);
    }
    free(built);
}
END_TEST

/* pickle_file is a warning (the table above) unless every global the pickle names is on the
 * built-in allowlist: then it is info and the verdict ok (docs/findings.md). */
START_TEST(test_pickle_file_severity)
{
    static const struct {
        const char *what, *bytes;
        size_t len;
        const char *allow; /* --allow-global given, or NULL */
        stg_severity want;
    } cases[] = {
        {"no global", "\x80\x02K\x01.", 5, NULL, STG_SEV_INFO},
        {"built-in allowed", "ccollections\nOrderedDict\n)R.", 28, NULL, STG_SEV_INFO},
        {"benign", "ctorch.nn.modules.linear\nIdentity\n)R.", 37, NULL, STG_SEV_WARNING},
        {"caller-allowed", "cmypkg\nNet\n)R.", 14, "mypkg:Net", STG_SEV_WARNING},
        {"allowed then benign",
         "ccollections\nOrderedDict\n)R0ctorch.nn.modules.linear\nIdentity\n.", 63, NULL,
         STG_SEV_WARNING},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_uint_eq(strlen(cases[i].bytes), cases[i].len);
        stg_scan_options opt;
        stg_scan_options_default(&opt);
        opt.digest = false;
        stg_policy *pol = NULL;
        if (cases[i].allow != NULL) {
            ck_assert_int_eq(stg_policy_new(&pol), STG_OK);
            ck_assert_int_eq(stg_policy_allow_spec(pol, cases[i].allow), STG_OK);
            opt.policy = pol;
        }
        stg_report *r = NULL;
        ck_assert_int_eq(stg_scan_buffer(cases[i].bytes, cases[i].len, "model.pkl", &opt, &r),
                         STG_OK);
        long at = tu_find(r, STG_PICKLE_FILE);
        ck_assert_msg(at >= 0, "%s: %s", cases[i].what, tu_describe(r));
        stg_severity got = stg_report_at(r, (size_t)at)->severity;
        ck_assert_msg(got == cases[i].want, "%s: pickle_file is %s in %s", cases[i].what,
                      stg_severity_name(got), tu_describe(r));
        if (cases[i].want == STG_SEV_INFO) {
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
        } else {
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
        }
        stg_report_free(r);
        stg_policy_free(pol);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The other enums */

START_TEST(test_status_names)
{
    static const struct {
        stg_status s;
        int number;
        const char *name;
    } rows[] = {
        {STG_OK, 0, "STG_OK"},
        {STG_E_TRUNCATED, 1, "STG_E_TRUNCATED"},
        {STG_E_HEADER_LEN, 2, "STG_E_HEADER_LEN"},
        {STG_E_JSON_SYNTAX, 3, "STG_E_JSON_SYNTAX"},
        {STG_E_JSON_DUP_KEY, 4, "STG_E_JSON_DUP_KEY"},
        {STG_E_INT_OVERFLOW, 5, "STG_E_INT_OVERFLOW"},
        {STG_E_OFFSET_RANGE, 6, "STG_E_OFFSET_RANGE"},
        {STG_E_UTF8, 7, "STG_E_UTF8"},
        {STG_E_INVALID, 8, "STG_E_INVALID"},
        {STG_E_LIMIT_DEPTH, 64, "STG_E_LIMIT_DEPTH"},
        {STG_E_LIMIT_MEMORY, 65, "STG_E_LIMIT_MEMORY"},
        {STG_E_LIMIT_TENSORS, 66, "STG_E_LIMIT_TENSORS"},
        {STG_E_LIMIT, 67, "STG_E_LIMIT"},
        {STG_E_BAD_ARG, 96, "STG_E_BAD_ARG"},
        {STG_E_INCOMPLETE, 97, "STG_E_INCOMPLETE"},
        {STG_E_STATE, 98, "STG_E_STATE"},
        {STG_E_NOT_FOUND, 99, "STG_E_NOT_FOUND"},
        {STG_E_RANGE, 100, "STG_E_RANGE"},
        {STG_E_STRUCT_VERSION, 101, "STG_E_STRUCT_VERSION"},
        {STG_E_IO, 128, "STG_E_IO"},
        {STG_E_CRYPTO, 129, "STG_E_CRYPTO"},
        {STG_E_NOMEM, 130, "STG_E_NOMEM"},
        {STG_FILE_CHANGED, 131, "STG_FILE_CHANGED"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ck_assert_int_eq((int)rows[i].s, rows[i].number);
        ck_assert_str_eq(stg_status_name(rows[i].s), rows[i].name);
    }
    /* Numbers no status has (the gaps between the ranges, and past the end). */
    static const int unused[] = {9, 63, 68, 95, 102, 127, 132, -1};
    for (size_t i = 0; i < sizeof unused / sizeof unused[0]; i++) {
        ck_assert_str_eq(stg_status_name((stg_status)unused[i]), "STG_E_UNKNOWN_STATUS");
    }
}
END_TEST

START_TEST(test_severity_verdict_class_names)
{
    ck_assert_int_eq(STG_SEV_INFO, 0);
    ck_assert_int_eq(STG_SEV_CRITICAL, 3);
    ck_assert_str_eq(stg_severity_name(STG_SEV_INFO), "info");
    ck_assert_str_eq(stg_severity_name(STG_SEV_WARNING), "warning");
    ck_assert_str_eq(stg_severity_name(STG_SEV_ERROR), "error");
    ck_assert_str_eq(stg_severity_name(STG_SEV_CRITICAL), "critical");
    ck_assert_str_eq(stg_severity_name((stg_severity)4), "unknown");

    ck_assert_int_eq(STG_VERDICT_OK, 0);
    ck_assert_int_eq(STG_VERDICT_ERROR, 4);
    ck_assert_str_eq(stg_verdict_name(STG_VERDICT_OK), "ok");
    ck_assert_str_eq(stg_verdict_name(STG_VERDICT_WARN), "warn");
    ck_assert_str_eq(stg_verdict_name(STG_VERDICT_INVALID), "invalid");
    ck_assert_str_eq(stg_verdict_name(STG_VERDICT_UNSAFE), "unsafe");
    ck_assert_str_eq(stg_verdict_name(STG_VERDICT_ERROR), "error");
    /* fails closed: a value no verdict has reads as error, never as ok */
    ck_assert_str_eq(stg_verdict_name((stg_verdict)5), "error");
    ck_assert_str_eq(stg_verdict_name((stg_verdict)-1), "error");

    ck_assert_int_eq(STG_GLOBAL_ALLOWED, 0);
    ck_assert_int_eq(STG_GLOBAL_UNKNOWN, 3);
    ck_assert_str_eq(stg_global_class_name(STG_GLOBAL_ALLOWED), "allowed");
    ck_assert_str_eq(stg_global_class_name(STG_GLOBAL_BENIGN), "benign");
    ck_assert_str_eq(stg_global_class_name(STG_GLOBAL_DANGEROUS), "dangerous");
    ck_assert_str_eq(stg_global_class_name(STG_GLOBAL_UNKNOWN), "unknown");
    ck_assert_str_eq(stg_global_class_name((stg_global_class)4), "unknown");
}
END_TEST

/* docs/cli.md, the `format` field: one of these, in this order. */
static const char *const format_names[] = {
    "unknown",
    "safetensors",
    "safetensors-index",
    "pickle",
    "torch-zip",
    "torch-legacy",
    "torch-tar",
    "numpy",
    "numpy-zip",
    "joblib",
    "zip",
    "tar",
    "gzip",
    "zlib",
    "bz2",
    "xz",
    "gguf",
    "onnx",
    "text",
    "json",
    "git-lfs-pointer",
    "keras",
    "hdf5",
    "tf-savedmodel",
    "chat-template",
    "python_code",
    "yaml",
    "skops",
    "nemo",
    "flax-msgpack",
    "ggml-legacy",
    "sentencepiece",
    "tiktoken",
    "onnx-external-data",
    "openvino-ir",
    "openvino-weights",
    "coreml-model",
    "coreml-weights",
    "tflite",
    "executorch",
    "tf-variables-index",
    "tf-variables-data",
    "parquet",
    "arrow",
    "dataset-text",
};
#define NFORMATS (sizeof format_names / sizeof format_names[0])

START_TEST(test_format_names)
{
    /* The values are dense and each has its own name (docs/cli.md lists them). */
    ck_assert_int_eq(STG_FMT_DATASET_TEXT, (int)NFORMATS - 1);
    for (size_t i = 0; i < NFORMATS; i++) {
        ck_assert_str_eq(stg_format_name((stg_format)i), format_names[i]);
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(format_names[j], format_names[i]);
        }
    }
    /* Pinned numbers of the formats added together (each reader chose its own). */
    ck_assert_int_eq(STG_FMT_KERAS, 21);
    ck_assert_int_eq(STG_FMT_CHAT_TEMPLATE, 24);
    ck_assert_int_eq(STG_FMT_PYTHON_CODE, 25);
    ck_assert_int_eq(STG_FMT_NEMO, 28);
    ck_assert_int_eq(STG_FMT_FLAX_MSGPACK, 29);
    ck_assert_int_eq(STG_FMT_ONNX_EXTERNAL_DATA, 33);
    ck_assert_int_eq(STG_FMT_TFLITE, 38);
    /* Out of range: the neutral "unknown", never NULL (the CLI prints it as is). */
    ck_assert_str_eq(stg_format_name((stg_format)NFORMATS), "unknown");
    ck_assert_str_eq(stg_format_name((stg_format)-1), "unknown");
}
END_TEST

/* A scanned buffer reports the format its content has, under the name the JSON output uses. */
START_TEST(test_format_of_scans)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *hint;
        stg_format want;
    } rows[] = {
        {"\x02\0\0\0\0\0\0\0{}", 10, NULL, STG_FMT_SAFETENSORS},
        {"\x80\x02K\x01.", 5, NULL, STG_FMT_PICKLE},
        {"GGUF\3\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24, NULL, STG_FMT_GGUF},
        {"\x1f\x8b\x08\0\0\0\0\0\0\x03", 10, NULL, STG_FMT_GZIP},
        {"BZh91AY&SY", 10, NULL, STG_FMT_BZ2},
        {"\xfd"
         "7zXZ\0\0\0",
         8, NULL, STG_FMT_XZ},
        {"\x01hello, world", 13, NULL, STG_FMT_UNKNOWN},
        {"hello, world", 12, NULL, STG_FMT_TEXT},
        {"{\"model_type\": \"bert\"}\n", 23, "config.json", STG_FMT_JSON},
        {LFS_PTR, sizeof LFS_PTR - 1, NULL, STG_FMT_GIT_LFS_POINTER},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        stg_scan_options opt;
        stg_scan_options_default(&opt);
        opt.digest = false;
        stg_report *r = NULL;
        ck_assert_int_eq(stg_scan_buffer(rows[i].bytes, rows[i].len, rows[i].hint, &opt, &r),
                         STG_OK);
        ck_assert_msg(stg_report_format(r) == rows[i].want, "row %zu: format %s, want %s", i,
                      stg_format_name(stg_report_format(r)), stg_format_name(rows[i].want));
        ck_assert_str_eq(stg_format_name(stg_report_format(r)), format_names[rows[i].want]);
        stg_report_free(r);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Limits */

START_TEST(test_limits_default)
{
    stg_limits lim;
    memset(&lim, 0xA5, sizeof lim);
    stg_limits_default(&lim);
    ck_assert_uint_eq(lim.max_header_len, 100000000u);
    ck_assert_uint_eq(lim.max_tensors, 10000000u);
    ck_assert_uint_eq(lim.max_rank, 64);
    ck_assert_uint_eq(lim.max_json_depth, 127); /* documented deviation: docs/findings.md */
    ck_assert_uint_eq(lim.max_name_len, 65536);
    ck_assert_uint_eq(lim.max_metadata_entries, 1000000);
    ck_assert_uint_eq(lim.max_memory, 0);
    ck_assert_uint_eq(lim.max_findings, 1000);
    ck_assert_uint_eq(lim.max_pickle_stack, 1000000);
    ck_assert_uint_eq(lim.max_pickle_memo, 1000000);
    ck_assert_uint_eq(lim.max_pickle_string, (uint64_t)256 << 20);
    ck_assert_uint_eq(lim.max_nesting, 4);
    ck_assert_uint_eq(lim.max_inflate_bytes, (uint64_t)4 << 30);
    ck_assert_uint_eq(lim.max_inflate_ratio, 1000);
    ck_assert_int_eq(lim.profile, STG_PROFILE_STRICT);
}
END_TEST

/* Every settable field: its name, whether it is 64-bit, and where it lives. */
#define FIELD(f, wide, ceiling)                    \
    {                                              \
#f, offsetof(stg_limits, f), wide, ceiling \
    }
static const struct limit_row {
    const char *name;
    size_t off;
    int wide;
    uint64_t ceiling; /* the largest value stg_limits_set takes */
} limit_rows[] = {
    FIELD(max_header_len, 1, UINT64_MAX),
    FIELD(max_tensors, 1, UINT64_MAX),
    FIELD(max_rank, 0, UINT32_MAX),
    FIELD(max_json_depth, 0, UINT32_MAX),
    FIELD(max_name_len, 0, UINT32_MAX),
    FIELD(max_metadata_entries, 0, UINT32_MAX),
    FIELD(max_memory, 1, UINT64_MAX),
    FIELD(max_findings, 0, STG_FINDINGS_CEILING),
    FIELD(max_pickle_stack, 0, STG_PICKLE_STACK_CEILING),
    FIELD(max_pickle_memo, 0, STG_PICKLE_MEMO_CEILING),
    FIELD(max_pickle_string, 1, STG_PICKLE_STRING_CEILING),
    FIELD(max_nesting, 0, STG_NESTING_CEILING),
    FIELD(max_inflate_bytes, 1, STG_INFLATE_BYTES_CEILING),
    FIELD(max_inflate_ratio, 0, STG_INFLATE_RATIO_CEILING),
};
#define NLIMITS (sizeof limit_rows / sizeof limit_rows[0])

static uint64_t field_value(const stg_limits *lim, const struct limit_row *row)
{
    const unsigned char *p = (const unsigned char *)lim + row->off;
    if (row->wide) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

START_TEST(test_limits_set_round_trip)
{
    const struct limit_row *row = &limit_rows[_i];
    stg_limits def, lim;
    stg_limits_default(&def);
    lim = def;
    char ceiling[32];
    snprintf(ceiling, sizeof ceiling, "%llu", (unsigned long long)row->ceiling);
    const char *values[] = {"0", "1", "7", row->ceiling >= UINT32_MAX ? "4294967295" : ceiling};
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        ck_assert_int_eq(stg_limits_set(&lim, row->name, values[v]), STG_OK);
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)field_value(&lim, row));
        ck_assert_str_eq(buf, values[v]);
    }
    /* Only that field changed. */
    stg_limits other = lim;
    memcpy((unsigned char *)&other + row->off, (const unsigned char *)&def + row->off,
           row->wide ? 8 : 4);
    ck_assert_int_eq(memcmp(&other, &def, sizeof def), 0);

    /* The ceiling (or the widest value of the field's type) is accepted, one more is not. */
    stg_limits keep = lim;
    if (row->ceiling != UINT64_MAX && row->ceiling != UINT32_MAX) {
        ck_assert_int_eq(stg_limits_set(&lim, row->name, ceiling), STG_OK);
        ck_assert_uint_eq(field_value(&lim, row), row->ceiling);
        keep = lim;
        char over[32];
        snprintf(over, sizeof over, "%llu", (unsigned long long)row->ceiling + 1);
        ck_assert_int_eq(stg_limits_set(&lim, row->name, over), STG_E_BAD_ARG);
    } else if (row->wide) {
        ck_assert_int_eq(stg_limits_set(&lim, row->name, "18446744073709551615"), STG_OK);
        ck_assert_uint_eq(field_value(&lim, row), UINT64_MAX);
        keep = lim;
        ck_assert_int_eq(stg_limits_set(&lim, row->name, "18446744073709551616"), STG_E_BAD_ARG);
    } else {
        ck_assert_int_eq(stg_limits_set(&lim, row->name, "4294967296"), STG_E_BAD_ARG);
    }
    ck_assert_int_eq(memcmp(&lim, &keep, sizeof lim), 0);
    /* Digits only: no sign, space, hex, fraction or empty value; nothing changes. */
    static const char *const bad[] = {"", "-1", "+1", " 1", "1 ", "0x10", "1.0", "1e3", "12a"};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        ck_assert_msg(stg_limits_set(&lim, row->name, bad[b]) == STG_E_BAD_ARG, "%s=\"%s\"",
                      row->name, bad[b]);
        ck_assert_int_eq(memcmp(&lim, &keep, sizeof lim), 0);
    }
}
END_TEST

START_TEST(test_limits_set_profile_and_errors)
{
    stg_limits lim, def;
    stg_limits_default(&lim);
    def = lim;
    ck_assert_int_eq(stg_limits_set(&lim, "profile", "compat"), STG_OK);
    ck_assert_int_eq(lim.profile, STG_PROFILE_COMPAT);
    ck_assert_int_eq(stg_limits_set(&lim, "profile", "strict"), STG_OK);
    ck_assert_int_eq(lim.profile, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_limits_set(&lim, "profile", "compat"), STG_OK);
    /* Exact and case-sensitive. */
    ck_assert_int_eq(stg_limits_set(&lim, "profile", "Strict"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_limits_set(&lim, "profile", ""), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_limits_set(&lim, "profile", "0"), STG_E_BAD_ARG);
    ck_assert_int_eq(lim.profile, STG_PROFILE_COMPAT);
    lim.profile = STG_PROFILE_STRICT;
    ck_assert_int_eq(memcmp(&lim, &def, sizeof lim), 0);

    /* Unknown names (prefixes, case, the struct's non-limit words) are not found. */
    static const char *const unknown[] = {"max_ranks", "max_", "MAX_RANK", "rank", "", "limits"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        ck_assert_msg(stg_limits_set(&lim, unknown[i], "1") == STG_E_NOT_FOUND, "\"%s\"",
                      unknown[i]);
    }
    /* A known name with a bad value is a bad argument, even when the name is checked first. */
    ck_assert_int_eq(stg_limits_set(&lim, "max_rank", "x"), STG_E_BAD_ARG);
    ck_assert_int_eq(memcmp(&lim, &def, sizeof lim), 0);

    ck_assert_int_eq(stg_limits_set(NULL, "max_rank", "1"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_limits_set(&lim, NULL, "1"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_limits_set(&lim, "max_rank", NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_limits_set(&lim, "profile", NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(memcmp(&lim, &def, sizeof lim), 0);
}
END_TEST

/* A limit set by name is the one validation enforces (and reports by that name). */
START_TEST(test_limits_set_is_enforced)
{
    stg_limits lim;
    stg_limits_default(&lim);
    ck_assert_int_eq(stg_limits_set(&lim, "max_rank", "2"), STG_OK);
    size_t len;
    uint8_t *b = tu_st_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1],\"data_offsets\":[0,1]}}",
                            0, NULL, 1, &len);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_validate_buffer(b, len, &lim, &r), STG_OK);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_rank");
    stg_report_free(r);
    ck_assert_int_eq(stg_limits_set(&lim, "max_rank", "3"), STG_OK);
    ck_assert_int_eq(stg_validate_buffer(b, len, &lim, &r), STG_OK);
    ck_assert_int_lt(tu_find(r, STG_LIMIT_EXCEEDED), 0);
    stg_report_free(r);
    free(b);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* dtypes: the reference's names (exact, case-sensitive) and bits per element */

static const struct {
    stg_dtype d;
    const char *name;
    uint32_t bits;
} dtypes[] = {
    {STG_DTYPE_BOOL, "BOOL", 8},
    {STG_DTYPE_F4, "F4", 4},
    {STG_DTYPE_F6_E2M3, "F6_E2M3", 6},
    {STG_DTYPE_F6_E3M2, "F6_E3M2", 6},
    {STG_DTYPE_U8, "U8", 8},
    {STG_DTYPE_I8, "I8", 8},
    {STG_DTYPE_F8_E5M2, "F8_E5M2", 8},
    {STG_DTYPE_F8_E4M3, "F8_E4M3", 8},
    {STG_DTYPE_F8_E8M0, "F8_E8M0", 8},
    {STG_DTYPE_F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {STG_DTYPE_F8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {STG_DTYPE_I16, "I16", 16},
    {STG_DTYPE_U16, "U16", 16},
    {STG_DTYPE_F16, "F16", 16},
    {STG_DTYPE_BF16, "BF16", 16},
    {STG_DTYPE_I32, "I32", 32},
    {STG_DTYPE_U32, "U32", 32},
    {STG_DTYPE_F32, "F32", 32},
    {STG_DTYPE_C64, "C64", 64},
    {STG_DTYPE_F64, "F64", 64},
    {STG_DTYPE_I64, "I64", 64},
    {STG_DTYPE_U64, "U64", 64},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

START_TEST(test_dtype_names)
{
    ck_assert_int_eq(NDTYPES, STG_DTYPE_COUNT);
    for (size_t i = 0; i < NDTYPES; i++) {
        ck_assert_int_eq((int)dtypes[i].d, (int)i);
        ck_assert_str_eq(stg_dtype_name(dtypes[i].d), dtypes[i].name);
        ck_assert_uint_eq(stg_dtype_bits(dtypes[i].d), dtypes[i].bits);
        stg_dtype got = (stg_dtype)-1;
        ck_assert(stg_dtype_lookup((const uint8_t *)dtypes[i].name, strlen(dtypes[i].name), &got));
        ck_assert_int_eq(got, dtypes[i].d);
    }
    /* Values outside the table: no name, no size. */
    ck_assert_ptr_null(stg_dtype_name((stg_dtype)STG_DTYPE_COUNT));
    ck_assert_ptr_null(stg_dtype_name((stg_dtype)-1));
    ck_assert_uint_eq(stg_dtype_bits((stg_dtype)STG_DTYPE_COUNT), 0);
    ck_assert_uint_eq(stg_dtype_bits((stg_dtype)-1), 0);
    /* Exact matches only: no case folding, prefixes, extensions or trailing NUL. */
    static const char *const bad[] = {"u8",  "F", "F8",   "F8_E4M3FNU", "F8_E4M3FNUZZ", "BOOL ",
                                      " U8", "",  "Bf16", "F32\n",      "float32"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stg_dtype got = STG_DTYPE_U64;
        ck_assert_msg(!stg_dtype_lookup((const uint8_t *)bad[i], strlen(bad[i]), &got), "\"%s\"",
                      bad[i]);
        ck_assert_int_eq(got, STG_DTYPE_U64); /* untouched */
    }
    ck_assert(!stg_dtype_lookup((const uint8_t *)"U8\0", 3, &(stg_dtype){STG_DTYPE_U8}));
}
END_TEST

START_TEST(test_version)
{
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", STG_VERSION_MAJOR, STG_VERSION_MINOR,
             STG_VERSION_PATCH);
    ck_assert_str_eq(stg_version(), want);
    ck_assert_str_eq(stg_version(), STG_VERSION_STRING);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tcase_create("names");
    tcase_add_loop_test(tc, test_code_numbers_and_names, 0, (int)NCODES);
    tcase_add_test(tc, test_code_out_of_range);
    tcase_add_loop_test(tc, test_code_severity, 0, (int)NTRIGGERS);
    tcase_add_test(tc, test_pickle_file_severity);
    tcase_add_test(tc, test_status_names);
    tcase_add_test(tc, test_severity_verdict_class_names);
    tcase_add_test(tc, test_format_names);
    tcase_add_test(tc, test_format_of_scans);
    tcase_add_test(tc, test_limits_default);
    tcase_add_loop_test(tc, test_limits_set_round_trip, 0, (int)NLIMITS);
    tcase_add_test(tc, test_limits_set_profile_and_errors);
    tcase_add_test(tc, test_limits_set_is_enforced);
    tcase_add_test(tc, test_dtype_names);
    tcase_add_test(tc, test_version);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
