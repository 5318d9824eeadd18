/* Stable strings for every public enum, the version, and the default limits. Each name
 * function is a switch without default so -Wswitch-enum flags a missing case. */
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"

const char *stg_version(void)
{
    return STG_VERSION_STRING;
}

const char *stg_code_name(stg_code code)
{
    switch (code) {
    case STG_FILE_TOO_SMALL: return "file_too_small";
    case STG_HEADER_LENGTH_INVALID: return "header_length_invalid";
    case STG_HEADER_TOO_LARGE: return "header_too_large";
    case STG_HEADER_TRUNCATED: return "header_truncated";
    case STG_HEADER_NOT_JSON_OBJECT: return "header_not_json_object";
    case STG_HEADER_TRAILING_BYTES: return "header_trailing_bytes";
    case STG_JSON_SYNTAX: return "json_syntax";
    case STG_JSON_INVALID_UTF8: return "json_invalid_utf8";
    case STG_JSON_DUPLICATE_KEY: return "json_duplicate_key";
    case STG_JSON_TOO_DEEP: return "json_too_deep";
    case STG_JSON_NUMBER_OVERFLOW: return "json_number_overflow";
    case STG_TENSOR_INFO_INVALID: return "tensor_info_invalid";
    case STG_TENSOR_NAME_INVALID: return "tensor_name_invalid";
    case STG_DTYPE_UNKNOWN: return "dtype_unknown";
    case STG_SHAPE_INVALID: return "shape_invalid";
    case STG_SHAPE_OVERFLOW: return "shape_overflow";
    case STG_SUBBYTE_MISALIGNED: return "subbyte_misaligned";
    case STG_SIZE_MISMATCH: return "size_mismatch";
    case STG_OFFSETS_INVALID: return "offsets_invalid";
    case STG_OFFSETS_OUT_OF_RANGE: return "offsets_out_of_range";
    case STG_OFFSETS_OVERLAP: return "offsets_overlap";
    case STG_DATA_GAP: return "data_gap";
    case STG_DATA_TRAILING: return "data_trailing";
    case STG_HEADER_NOT_PADDED: return "header_not_padded";
    case STG_TENSOR_MISALIGNED: return "tensor_misaligned";
    case STG_METADATA_INVALID: return "metadata_invalid";
    case STG_LIMIT_EXCEEDED: return "limit_exceeded";
    case STG_FINDINGS_TRUNCATED: return "findings_truncated";
    case STG_POLYGLOT_ZIP: return "polyglot_zip";
    case STG_POLYGLOT_PICKLE: return "polyglot_pickle";
    case STG_FORMAT_UNKNOWN: return "format_unknown";
    case STG_FORMAT_MISMATCH: return "format_mismatch";
    case STG_FORMAT_NOT_VALIDATED: return "format_not_validated";
    case STG_FORMAT_UNSCANNABLE: return "format_unscannable";
    case STG_PICKLE_FILE: return "pickle_file";
    case STG_PICKLE_GLOBAL_BENIGN: return "pickle_global_benign";
    case STG_PICKLE_GLOBAL_DANGEROUS: return "pickle_global_dangerous";
    case STG_PICKLE_GLOBAL_UNKNOWN: return "pickle_global_unknown";
    case STG_PICKLE_GLOBAL_UNRESOLVED: return "pickle_global_unresolved";
    case STG_PICKLE_FRAME_DIVERGENCE: return "pickle_frame_divergence";
    case STG_PICKLE_MALFORMED: return "pickle_malformed";
    case STG_PICKLE_NESTED: return "pickle_nested";
    case STG_PICKLE_BUILD_ON_GLOBAL: return "pickle_build_on_global";
    case STG_ZIP_MALFORMED: return "zip_malformed";
    case STG_CONTAINER_MALFORMED: return "container_malformed";
    case STG_ZIP_HEADER_MISMATCH: return "zip_header_mismatch";
    case STG_ZIP_ENCRYPTED_FLAG: return "zip_encrypted_flag";
    case STG_ZIP_BOMB: return "zip_bomb";
    case STG_ZIP_AMBIGUOUS: return "zip_ambiguous";
    case STG_JOBLIB_SIDE_FILE_ESCAPE: return "joblib_side_file_escape";
    case STG_JOBLIB_SIDE_FILE_MISSING: return "joblib_side_file_missing";
    case STG_JOBLIB_SIDE_FILE_UNRESOLVED: return "joblib_side_file_unresolved";
    case STG_INDEX_INVALID: return "index_invalid";
    case STG_INDEX_SHARD_PATH_UNSAFE: return "index_shard_path_unsafe";
    case STG_INDEX_SHARD_MISSING: return "index_shard_missing";
    case STG_INDEX_TENSOR_MISSING: return "index_tensor_missing";
    case STG_INDEX_TENSOR_UNLISTED: return "index_tensor_unlisted";
    case STG_INDEX_TENSOR_DUPLICATE: return "index_tensor_duplicate";
    case STG_INDEX_TOTAL_SIZE_MISMATCH: return "index_total_size_mismatch";
    case STG_DIGEST_MISMATCH: return "digest_mismatch";
    case STG_SYMLINK_SKIPPED: return "symlink_skipped";
    case STG_NOT_REGULAR_FILE: return "not_regular_file";
    case STG_FILE_CHANGED_CODE: return "file_changed";
    case STG_IO_ERROR: return "io_error";
    case STG_POLYGLOT_TAR: return "polyglot_tar";
    case STG_TAR_LINK_EXTERNAL: return "tar_link_external";
    case STG_PICKLE_MEMO_SPARSE: return "pickle_memo_sparse";
    case STG_LFS_POINTER: return "lfs_pointer";
    }
    return NULL;
}

const char *stg_status_name(stg_status s)
{
    switch (s) {
    case STG_OK: return "STG_OK";
    case STG_E_TRUNCATED: return "STG_E_TRUNCATED";
    case STG_E_HEADER_LEN: return "STG_E_HEADER_LEN";
    case STG_E_JSON_SYNTAX: return "STG_E_JSON_SYNTAX";
    case STG_E_JSON_DUP_KEY: return "STG_E_JSON_DUP_KEY";
    case STG_E_INT_OVERFLOW: return "STG_E_INT_OVERFLOW";
    case STG_E_OFFSET_RANGE: return "STG_E_OFFSET_RANGE";
    case STG_E_UTF8: return "STG_E_UTF8";
    case STG_E_INVALID: return "STG_E_INVALID";
    case STG_E_LIMIT_DEPTH: return "STG_E_LIMIT_DEPTH";
    case STG_E_LIMIT_MEMORY: return "STG_E_LIMIT_MEMORY";
    case STG_E_LIMIT_TENSORS: return "STG_E_LIMIT_TENSORS";
    case STG_E_LIMIT: return "STG_E_LIMIT";
    case STG_E_BAD_ARG: return "STG_E_BAD_ARG";
    case STG_E_INCOMPLETE: return "STG_E_INCOMPLETE";
    case STG_E_STATE: return "STG_E_STATE";
    case STG_E_NOT_FOUND: return "STG_E_NOT_FOUND";
    case STG_E_RANGE: return "STG_E_RANGE";
    case STG_E_IO: return "STG_E_IO";
    case STG_E_CRYPTO: return "STG_E_CRYPTO";
    case STG_E_NOMEM: return "STG_E_NOMEM";
    case STG_FILE_CHANGED: return "STG_FILE_CHANGED";
    }
    return "STG_E_UNKNOWN_STATUS";
}

const char *stg_severity_name(stg_severity s)
{
    switch (s) {
    case STG_SEV_INFO: return "info";
    case STG_SEV_WARNING: return "warning";
    case STG_SEV_ERROR: return "error";
    case STG_SEV_CRITICAL: return "critical";
    }
    return "unknown";
}

const char *stg_verdict_name(stg_verdict v)
{
    switch (v) {
    case STG_VERDICT_OK: return "ok";
    case STG_VERDICT_WARN: return "warn";
    case STG_VERDICT_INVALID: return "invalid";
    case STG_VERDICT_UNSAFE: return "unsafe";
    case STG_VERDICT_ERROR: return "error";
    }
    return "error";
}

const char *stg_global_class_name(stg_global_class c)
{
    switch (c) {
    case STG_GLOBAL_ALLOWED: return "allowed";
    case STG_GLOBAL_BENIGN: return "benign";
    case STG_GLOBAL_DANGEROUS: return "dangerous";
    case STG_GLOBAL_UNKNOWN: return "unknown";
    }
    return "unknown";
}

const char *stg_format_name(stg_format f)
{
    switch (f) {
    case STG_FMT_UNKNOWN: return "unknown";
    case STG_FMT_SAFETENSORS: return "safetensors";
    case STG_FMT_SAFETENSORS_INDEX: return "safetensors-index";
    case STG_FMT_PICKLE: return "pickle";
    case STG_FMT_TORCH_ZIP: return "torch-zip";
    case STG_FMT_TORCH_LEGACY: return "torch-legacy";
    case STG_FMT_TORCH_TAR: return "torch-tar";
    case STG_FMT_NUMPY: return "numpy";
    case STG_FMT_NUMPY_ZIP: return "numpy-zip";
    case STG_FMT_JOBLIB: return "joblib";
    case STG_FMT_ZIP: return "zip";
    case STG_FMT_TAR: return "tar";
    case STG_FMT_GZIP: return "gzip";
    case STG_FMT_ZLIB: return "zlib";
    case STG_FMT_BZ2: return "bz2";
    case STG_FMT_XZ: return "xz";
    case STG_FMT_GGUF: return "gguf";
    case STG_FMT_ONNX: return "onnx";
    case STG_FMT_TEXT: return "text";
    case STG_FMT_JSON: return "json";
    case STG_FMT_GIT_LFS_POINTER: return "git-lfs-pointer";
    }
    return "unknown";
}

void stg_limits_default(stg_limits *out)
{
    memset(out, 0, sizeof *out);
    out->max_header_len = 100000000u;
    out->max_tensors = 10000000u;
    out->max_rank = 64;
    out->max_json_depth = 127; /* serde_json in the reference fails at the 128th level */
    out->max_name_len = 65536;
    out->max_metadata_entries = 1000000;
    out->max_memory = 0;
    out->max_findings = 1000;
    out->max_pickle_stack = 1000000;
    out->max_pickle_memo = 1000000;
    out->max_pickle_string = (uint64_t)256 * 1024 * 1024;
    out->max_nesting = 4;
    out->max_inflate_bytes = (uint64_t)4 * 1024 * 1024 * 1024;
    out->max_inflate_ratio = 1000;
    out->profile = STG_PROFILE_STRICT;
}

/* Digits only, no sign, checked per step: the same rule as JSON sizes. s is not NULL (the
 * caller checked). */
static int parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0') {
        return -1;
    }
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9') {
            return -1;
        }
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return -1;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

stg_status stg_limits_set(stg_limits *lim, const char *name, const char *value)
{
    if (lim == NULL || name == NULL || value == NULL) {
        return STG_E_BAD_ARG;
    }
    if (strcmp(name, "profile") == 0) {
        if (strcmp(value, "strict") == 0) {
            lim->profile = STG_PROFILE_STRICT;
        } else if (strcmp(value, "compat") == 0) {
            lim->profile = STG_PROFILE_COMPAT;
        } else {
            return STG_E_BAD_ARG;
        }
        return STG_OK;
    }
    static const struct {
        const char *name;
        size_t off;
        int wide;         /* 1: uint64_t field, 0: uint32_t */
        uint64_t ceiling; /* a larger value is refused (the field's width otherwise) */
    } fields[] = {
        {"max_header_len", offsetof(stg_limits, max_header_len), 1, UINT64_MAX},
        {"max_tensors", offsetof(stg_limits, max_tensors), 1, UINT64_MAX},
        {"max_rank", offsetof(stg_limits, max_rank), 0, UINT32_MAX},
        {"max_json_depth", offsetof(stg_limits, max_json_depth), 0, UINT32_MAX},
        {"max_name_len", offsetof(stg_limits, max_name_len), 0, UINT32_MAX},
        {"max_metadata_entries", offsetof(stg_limits, max_metadata_entries), 0, UINT32_MAX},
        {"max_memory", offsetof(stg_limits, max_memory), 1, UINT64_MAX},
        {"max_findings", offsetof(stg_limits, max_findings), 0, STG_FINDINGS_CEILING},
        {"max_pickle_stack", offsetof(stg_limits, max_pickle_stack), 0, STG_PICKLE_STACK_CEILING},
        {"max_pickle_memo", offsetof(stg_limits, max_pickle_memo), 0, STG_PICKLE_MEMO_CEILING},
        {"max_pickle_string", offsetof(stg_limits, max_pickle_string), 1,
         STG_PICKLE_STRING_CEILING},
        {"max_nesting", offsetof(stg_limits, max_nesting), 0, STG_NESTING_CEILING},
        {"max_inflate_bytes", offsetof(stg_limits, max_inflate_bytes), 1,
         STG_INFLATE_BYTES_CEILING},
        {"max_inflate_ratio", offsetof(stg_limits, max_inflate_ratio), 0,
         STG_INFLATE_RATIO_CEILING},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(name, fields[i].name) != 0) {
            continue;
        }
        uint64_t v;
        if (parse_u64(value, &v) != 0 || v > fields[i].ceiling) {
            return STG_E_BAD_ARG;
        }
        unsigned char *base = (unsigned char *)lim + fields[i].off;
        if (fields[i].wide) {
            memcpy(base, &v, sizeof v);
        } else {
            if (v > UINT32_MAX) {
                return STG_E_BAD_ARG;
            }
            uint32_t v32 = (uint32_t)v;
            memcpy(base, &v32, sizeof v32);
        }
        return STG_OK;
    }
    return STG_E_NOT_FOUND;
}
