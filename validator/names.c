/* Stable strings for every public enum, the version, and the default limits. Each name
 * function is a switch without default so -Wswitch-enum flags a missing case. */
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "stguard/stguard.h"

/* The layouts docs/abi.md promises: sizeof never changes within a SONAME (new fields take
 * reserved space), so a struct embedded in another keeps every later offset. */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(stg_limits) == 256, "stg_limits layout is part of the ABI");
#endif

const char *stg_version(void)
{
    return STG_VERSION_STRING;
}

/* Every row of codes.def keeps its number. */
#define STG_CODE(number, id, name, strict_sev, compat_sev, description) \
    _Static_assert((int)(id) == (number), #id " keeps its number");
#include "codes.def"
#undef STG_CODE

typedef struct code_row {
    const char *name;
    stg_severity strict_sev, compat_sev;
    const char *description;
} code_row;

/* The row of a code, NULL for a number not in use. A switch over the table's rows, so a code of
 * the enum without a row is a -Wswitch-enum error and a row twice a duplicate case. */
static const code_row *code_row_of(stg_code code)
{
    switch (code) {
#define STG_CODE(number, id, name, strict_sev, compat_sev, description)                \
    case id: {                                                                         \
        static const code_row row = {name, STG_SEV_##strict_sev, STG_SEV_##compat_sev, \
                                     description};                                     \
        return &row;                                                                   \
    }
#include "codes.def"
#undef STG_CODE
    }
    return NULL;
}

const char *stg_code_name(stg_code code)
{
    const code_row *row = code_row_of(code);
    return row != NULL ? row->name : NULL;
}

const char *stg_code_description(stg_code code)
{
    const code_row *row = code_row_of(code);
    return row != NULL ? row->description : NULL;
}

stg_severity stg_code_severity(stg_code code, stg_profile profile)
{
    const code_row *row = code_row_of(code);
    if (row == NULL) {
        return STG_SEV_ERROR; /* a number not in use: fail closed */
    }
    return profile == STG_PROFILE_COMPAT ? row->compat_sev : row->strict_sev;
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
    case STG_E_STRUCT_VERSION: return "STG_E_STRUCT_VERSION";
    case STG_E_IO: return "STG_E_IO";
    case STG_E_CRYPTO: return "STG_E_CRYPTO";
    case STG_E_NOMEM: return "STG_E_NOMEM";
    case STG_FILE_CHANGED: return "STG_FILE_CHANGED";
    }
    return "STG_E_UNKNOWN_STATUS";
}

const char *stg_status_message(stg_status s)
{
    switch (s) {
    case STG_OK: return "success";
    case STG_E_TRUNCATED: return "the input ends too early";
    case STG_E_HEADER_LEN: return "the header length is invalid";
    case STG_E_JSON_SYNTAX: return "the header is not valid JSON";
    case STG_E_JSON_DUP_KEY: return "the header repeats a key";
    case STG_E_INT_OVERFLOW: return "a number in the input overflows";
    case STG_E_OFFSET_RANGE: return "an offset in the input is out of range";
    case STG_E_UTF8: return "the input holds invalid UTF-8";
    case STG_E_INVALID: return "the input was rejected: the report's findings say why";
    case STG_E_LIMIT_DEPTH: return "the nesting depth limit was exceeded";
    case STG_E_LIMIT_MEMORY: return "the memory limit was exceeded";
    case STG_E_LIMIT_TENSORS: return "the tensor count limit was exceeded";
    case STG_E_LIMIT: return "a configured limit was exceeded";
    case STG_E_BAD_ARG: return "an argument is invalid (NULL, or out of its range)";
    case STG_E_INCOMPLETE: return "more input is needed, or the object is not finished";
    case STG_E_STATE: return "the call is out of order for this object";
    case STG_E_NOT_FOUND: return "not found";
    case STG_E_RANGE: return "an index or range is out of bounds, or the buffer is too small";
    case STG_E_STRUCT_VERSION:
        return "a struct's struct_version is 0 (not initialised with its _default function) or "
               "newer than this library";
    case STG_E_IO: return "an I/O error: the file could not be read or written";
    case STG_E_CRYPTO: return "SHA-256 failed (libcrypto could not be loaded or failed)";
    case STG_E_NOMEM: return "out of memory";
    case STG_FILE_CHANGED: return "the file changed (shrank or was replaced) while it was read";
    }
    return "an unknown status (newer than this library)";
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
    case STG_FMT_KERAS: return "keras";
    case STG_FMT_HDF5: return "hdf5";
    case STG_FMT_TF_SAVEDMODEL: return "tf-savedmodel";
    case STG_FMT_FLAX_MSGPACK: return "flax-msgpack";
    case STG_FMT_GGML_LEGACY: return "ggml-legacy";
    case STG_FMT_SENTENCEPIECE: return "sentencepiece";
    case STG_FMT_TIKTOKEN: return "tiktoken";
    case STG_FMT_CHAT_TEMPLATE: return "chat-template";
    case STG_FMT_PYTHON_CODE: return "python_code";
    case STG_FMT_YAML: return "yaml";
    case STG_FMT_SKOPS: return "skops";
    case STG_FMT_NEMO: return "nemo";
    case STG_FMT_ONNX_EXTERNAL_DATA: return "onnx-external-data";
    case STG_FMT_OPENVINO_IR: return "openvino-ir";
    case STG_FMT_OPENVINO_WEIGHTS: return "openvino-weights";
    case STG_FMT_COREML_MODEL: return "coreml-model";
    case STG_FMT_COREML_WEIGHTS: return "coreml-weights";
    case STG_FMT_TFLITE: return "tflite";
    case STG_FMT_EXECUTORCH: return "executorch";
    case STG_FMT_TF_VARIABLES_INDEX: return "tf-variables-index";
    case STG_FMT_TF_VARIABLES_DATA: return "tf-variables-data";
    case STG_FMT_PARQUET: return "parquet";
    case STG_FMT_ARROW: return "arrow";
    case STG_FMT_DATASET_TEXT: return "dataset-text";
    }
    return "unknown";
}

static void limits_fill(stg_limits *out, uint32_t struct_version)
{
    memset(out, 0, sizeof *out);
    out->struct_version = struct_version;
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

stg_status stg_limits_init(stg_limits *out, uint32_t struct_version)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    limits_fill(out, struct_version);
    return stg_struct_version_known(struct_version) ? STG_OK : STG_E_STRUCT_VERSION;
}

stg_status stg_limits_accept(const stg_limits *in, stg_limits *out)
{
    limits_fill(out, STG_STRUCT_VERSION);
    if (!stg_struct_version_known(in->struct_version)) {
        return STG_E_STRUCT_VERSION;
    }
    /* Every field is in struct version 1. A field added in version N is copied only when
     * in->struct_version >= N (else it keeps the default limits_fill gave it). */
    uint64_t reserved[sizeof out->reserved / sizeof out->reserved[0]];
    memcpy(reserved, out->reserved, sizeof reserved);
    *out = *in;
    memcpy(out->reserved, reserved, sizeof reserved);
    out->struct_version = STG_STRUCT_VERSION;
    return STG_OK;
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
    if (!stg_struct_version_known(lim->struct_version)) {
        return STG_E_STRUCT_VERSION;
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
