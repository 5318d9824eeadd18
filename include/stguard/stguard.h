/**
 * @file stguard.h
 * @brief stguard: decide whether a model file is safe to load, before anything loads it.
 *
 * One public header. Every function that takes untrusted bytes returns a report whose verdict
 * fails closed: a report that was not completed says `error`. The library never exits, never
 * prints, never reads environment variables, keeps no global mutable state, and is safe to use
 * from several threads on different objects.
 *
 * Example:
 * @code
 *   stg_limits lim;
 *   stg_report *rep = NULL;
 *   stg_limits_default(&lim);
 *   if (stg_validate_buffer(buf, len, &lim, &rep) == STG_OK) {
 *       for (size_t i = 0; i < stg_report_count(rep); i++) {
 *           const stg_finding *f = stg_report_at(rep, i);
 *           printf("%s at %llu: %s\n", stg_code_name(f->code),
 *                  (unsigned long long)f->offset, f->message);
 *       }
 *       ok = stg_report_verdict(rep) == STG_VERDICT_OK;
 *   }
 *   stg_report_free(rep);
 * @endcode
 */
#ifndef STGUARD_STGUARD_H
#define STGUARD_STGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STG_VERSION_MAJOR 0
#define STG_VERSION_MINOR 1
#define STG_VERSION_PATCH 0
#define STG_VERSION_STRING "0.1.0"

#if defined(__GNUC__) || defined(__clang__)
#define STG_API __attribute__((visibility("default")))
#else
#define STG_API
#endif

/* ------------------------------------------------------------------------------------------ */
/* Status codes: what an API call returns. Explicit values, never renumbered or reused.         */

typedef enum stg_status {
    STG_OK = 0,
    /* 1..63: the input violates its format (findings say where) */
    STG_E_TRUNCATED = 1,
    STG_E_HEADER_LEN = 2,
    STG_E_JSON_SYNTAX = 3,
    STG_E_JSON_DUP_KEY = 4,
    STG_E_INT_OVERFLOW = 5,
    STG_E_OFFSET_RANGE = 6,
    STG_E_UTF8 = 7,
    STG_E_INVALID = 8, /**< input rejected: the report has the findings */
    /* 64..95: a configured limit was hit */
    STG_E_LIMIT_DEPTH = 64,
    STG_E_LIMIT_MEMORY = 65,
    STG_E_LIMIT_TENSORS = 66,
    STG_E_LIMIT = 67, /**< any other limit */
    /* 96..127: caller misuse */
    STG_E_BAD_ARG = 96,
    STG_E_INCOMPLETE = 97, /**< operation needs more input or a finished object */
    STG_E_STATE = 98,      /**< call out of order (feed after finish, ...) */
    STG_E_NOT_FOUND = 99,
    STG_E_RANGE = 100, /**< destination too small, index out of range */
    /** a caller-filled struct's struct_version is 0 (not initialised by its _default function)
     *  or newer than this library knows (built against a newer header): docs/abi.md */
    STG_E_STRUCT_VERSION = 101,
    /* 128..159: environment */
    STG_E_IO = 128,
    STG_E_CRYPTO = 129,
    STG_E_NOMEM = 130,
    STG_FILE_CHANGED = 131 /**< the file shrank or was replaced after it was validated */
} stg_status;

/** Stable name of a status ("STG_E_IO"), never NULL. */
STG_API const char *stg_status_name(stg_status s);
/** What a status means, in one sentence for a person ("an I/O error: the file could not be
 *  read"), never NULL; a number this library does not know gets a sentence saying so. The text
 *  may change between versions: compare statuses, not messages. */
STG_API const char *stg_status_message(stg_status s);

/* ------------------------------------------------------------------------------------------ */
/* Finding codes (docs/findings.md). Explicit numbers, never reused; strings are stable.     */

typedef enum stg_code {
    STG_FILE_TOO_SMALL = 1,
    STG_HEADER_LENGTH_INVALID = 2,
    STG_HEADER_TOO_LARGE = 3,
    STG_HEADER_TRUNCATED = 4,
    STG_HEADER_NOT_JSON_OBJECT = 5,
    STG_HEADER_TRAILING_BYTES = 6,
    STG_JSON_SYNTAX = 7,
    STG_JSON_INVALID_UTF8 = 8,
    STG_JSON_DUPLICATE_KEY = 9,
    STG_JSON_TOO_DEEP = 10,
    STG_JSON_NUMBER_OVERFLOW = 11,
    STG_TENSOR_INFO_INVALID = 12,
    STG_TENSOR_NAME_INVALID = 13,
    STG_DTYPE_UNKNOWN = 14,
    STG_SHAPE_INVALID = 15,
    STG_SHAPE_OVERFLOW = 16,
    STG_SUBBYTE_MISALIGNED = 17,
    STG_SIZE_MISMATCH = 18,
    STG_OFFSETS_INVALID = 19,
    STG_OFFSETS_OUT_OF_RANGE = 20,
    STG_OFFSETS_OVERLAP = 21,
    STG_DATA_GAP = 22,
    STG_DATA_TRAILING = 23,
    STG_HEADER_NOT_PADDED = 24,
    STG_TENSOR_MISALIGNED = 25,
    STG_METADATA_INVALID = 26,
    STG_LIMIT_EXCEEDED = 27,
    STG_FINDINGS_TRUNCATED = 28,
    STG_POLYGLOT_ZIP = 29,
    STG_POLYGLOT_PICKLE = 30,
    STG_FORMAT_UNKNOWN = 31,
    STG_FORMAT_MISMATCH = 32,
    STG_FORMAT_NOT_VALIDATED = 33,
    STG_FORMAT_UNSCANNABLE = 34,
    STG_PICKLE_FILE = 35,
    STG_PICKLE_GLOBAL_BENIGN = 36,
    STG_PICKLE_GLOBAL_DANGEROUS = 37,
    STG_PICKLE_GLOBAL_UNKNOWN = 38,
    STG_PICKLE_GLOBAL_UNRESOLVED = 39,
    STG_PICKLE_FRAME_DIVERGENCE = 40,
    STG_PICKLE_MALFORMED = 41,
    STG_PICKLE_NESTED = 42,
    STG_PICKLE_BUILD_ON_GLOBAL = 43,
    STG_ZIP_MALFORMED = 44,
    STG_CONTAINER_MALFORMED = 45,
    STG_ZIP_HEADER_MISMATCH = 46,
    STG_ZIP_ENCRYPTED_FLAG = 47,
    STG_ZIP_BOMB = 48,
    STG_INDEX_INVALID = 49,
    STG_INDEX_SHARD_PATH_UNSAFE = 50,
    STG_INDEX_SHARD_MISSING = 51,
    STG_INDEX_TENSOR_MISSING = 52,
    STG_INDEX_TENSOR_UNLISTED = 53,
    STG_INDEX_TENSOR_DUPLICATE = 54,
    STG_INDEX_TOTAL_SIZE_MISMATCH = 55,
    STG_DIGEST_MISMATCH = 56,
    STG_SYMLINK_SKIPPED = 57,
    STG_NOT_REGULAR_FILE = 58,
    STG_FILE_CHANGED_CODE = 59, /**< "file_changed" (the status STG_FILE_CHANGED is distinct) */
    STG_IO_ERROR = 60,
    STG_POLYGLOT_TAR = 61,      /**< "polyglot_tar": the file is also a tar torch.load would open */
    STG_TAR_LINK_EXTERNAL = 62, /**< "tar_link_external": torch extracts a link to the host */
    STG_ZIP_AMBIGUOUS = 63,     /**< the zip readers of two loaders read different directories */
    STG_JOBLIB_SIDE_FILE_ESCAPE = 65,     /**< a joblib side file named outside the file's folder */
    STG_JOBLIB_SIDE_FILE_MISSING = 66,    /**< a side file joblib.load would open is absent */
    STG_JOBLIB_SIDE_FILE_UNRESOLVED = 67, /**< a side file that could not be located or named */
    STG_PICKLE_MEMO_SPARSE =
        71,               /**< a memo index no pickler writes (C and Python loaders differ) */
    STG_LFS_POINTER = 75, /**< a Git LFS pointer file, not the content it stands for */
    /* GGUF (docs/gguf.md) */
    STG_GGUF_HEADER_INVALID = 80,         /**< magic, version or header length */
    STG_GGUF_VERSION_OBSOLETE = 81,       /**< GGUF version 1 */
    STG_GGUF_COUNT_INVALID = 82,          /**< a tensor or metadata count cannot fit the file */
    STG_GGUF_TRUNCATED = 83,              /**< a field or the data section past the end */
    STG_GGUF_STRING_INVALID = 84,         /**< a string length past the end, or not UTF-8 */
    STG_GGUF_KEY_INVALID = 85,            /**< an empty, non-UTF-8 or over-long metadata key */
    STG_GGUF_KEY_DUPLICATE = 86,          /**< a metadata key given twice */
    STG_GGUF_VALUE_TYPE_INVALID = 87,     /**< an unknown value type, or arrays of arrays */
    STG_GGUF_ARRAY_INVALID = 88,          /**< an array count that cannot fit the file */
    STG_GGUF_METADATA_TYPE_MISMATCH = 89, /**< a well-known key with the wrong value type */
    STG_GGUF_ALIGNMENT_INVALID = 90,      /**< general.alignment not a sane power of two */
    STG_GGUF_TENSOR_NAME_INVALID = 91,    /**< a tensor name too long, not UTF-8 or with NUL */
    STG_GGUF_TENSOR_DUPLICATE = 92,       /**< two tensor infos with one name */
    STG_GGUF_TENSOR_SHAPE_INVALID = 93,   /**< dimensions: count, zero, negative, overflow */
    STG_GGUF_TENSOR_TYPE_INVALID = 94,    /**< an unknown ggml type, or a row not whole blocks */
    /* ONNX (docs/onnx.md) */
    STG_ONNX_MALFORMED = 95,            /**< protobuf wire data ModelProto cannot be read from */
    STG_ONNX_EXTERNAL_PATH_UNSAFE = 96, /**< external data location absolute, `..`, NUL */
    STG_ONNX_EXTERNAL_MISSING = 97,     /**< external data file missing or too short */
    STG_ONNX_CUSTOM_DOMAIN = 98,        /**< an operator from a non-standard domain */
    STG_ONNX_OPSET_INVALID = 99,        /**< opset imports missing, repeated or unversioned */
    /* 100..109: stg_convert (docs/convert.md) */
    STG_CONVERT_UNSUPPORTED = 100,    /**< a global, call, opcode or object not reconstructed */
    STG_CONVERT_TENSOR_INVALID = 101, /**< a tensor's dtype, shape, strides or range */
    STG_CONVERT_LEAF_SKIPPED = 102,   /**< a non-tensor value left out of the output */
    STG_CONVERT_INPUT_UNKNOWN = 103,  /**< not torch zip, legacy torch, .npy or .npz */
    STG_CONVERT_ALIAS_DROPPED = 104,  /**< an exact alias left out (--drop-aliases) */
    /* TorchScript (docs/containers.md) */
    STG_TORCHSCRIPT_PROGRAM = 110, /**< a torch zip holding a TorchScript program */
    /* 120..124: skipped bytes (docs/pickle.md, "Routes") */
    STG_PICKLE_SKIP_UNRESOLVED = 120,     /**< bytes a loader reads as data, range not known */
    STG_TORCH01_STORAGE_UNRESOLVED = 121, /**< a PyTorch 0.1 storage of no known element size */
    /* 125..127: a TorchScript archive's globals as TorchScript resolves them (docs/containers.md) */
    STG_TORCHSCRIPT_CLASS = 125,           /**< a __torch__ class defined by the archive's code/ */
    STG_TORCHSCRIPT_BUILTIN = 126,         /**< a torch.jit._pickle helper TorchScript builds */
    STG_TORCHSCRIPT_CLASS_UNDEFINED = 127, /**< a __torch__ class whose source is absent */
    /* Model signatures (docs/signing.md): findings of stg_signature_*, never of a file scan. */
    STG_SIGNATURE_MALFORMED = 130,         /**< model.sig is not a model signature bundle */
    STG_SIGNATURE_STATEMENT_INVALID = 131, /**< the signed statement is unreadable/inconsistent */
    STG_SIGNATURE_INVALID = 132,           /**< the DSSE signature does not verify */
    STG_SIGNATURE_UNTRUSTED = 133,         /**< the key or certificate is not the one trusted */
    STG_SIGNATURE_UNSUPPORTED = 134,       /**< a signature form that is not verified (keyless) */
    STG_SIGNED_FILE_MODIFIED = 135,        /**< a signed file's SHA-256 differs */
    STG_SIGNED_FILE_EXTRA = 136,           /**< a file the signature does not list */
    STG_SIGNED_FILE_MISSING = 137,         /**< a signed file that is absent */
    STG_SIGNED_FILE_UNVERIFIABLE = 138,    /**< a link, special file or unreadable entry */
    STG_SIGNATURE_INCOMPLETE = 139,        /**< verification could not finish (limit, memory) */
    /* 140..149: TFLite, ExecuTorch (docs/flatbuffers.md), TensorFlow variables and datasets
     * (docs/data-formats.md) */
    STG_FLATBUFFER_MALFORMED = 140, /**< a flatbuffer offset, vtable or string outside the file */
    STG_FLATBUFFER_INDEX_INVALID = 141, /**< a buffer, tensor, opcode or value index out of range */
    STG_FLATBUFFER_CUSTOM_OP = 142, /**< custom or Flex operators (native code the runtime needs) */
    STG_EXECUTORCH_DELEGATE = 143,  /**< subgraphs handed to backend delegates */
    STG_FLATBUFFER_DATA_RANGE = 144, /**< a buffer or segment range outside the file */
    STG_TF_INDEX_MALFORMED = 145,    /**< a variables.index table footer or block outside */
    STG_DATASET_MALFORMED = 146,     /**< a Parquet or Arrow file's framing outside the file */
    STG_DATASET_TEXT_INVALID = 147,  /**< a JSON Lines line that is no JSON */
    /* 150..159: Keras, HDF5 and TensorFlow SavedModel (docs/keras.md) */
    STG_KERAS_LAMBDA = 150,            /**< a Keras config holding marshalled Python bytecode */
    STG_KERAS_MODULE_UNSAFE = 151,     /**< a Keras config naming a module or API outside Keras */
    STG_KERAS_CUSTOM_OBJECT = 152,     /**< a registered custom object the loader must provide */
    STG_KERAS_CONFIG_MALFORMED = 153,  /**< a Keras config that is not a readable model config */
    STG_HDF5_MALFORMED = 154,          /**< HDF5 structures that cannot be read */
    STG_HDF5_UNSUPPORTED = 155,        /**< an HDF5 layout stguard's reader does not read */
    STG_TF_OP_UNSAFE = 157,            /**< a SavedModel op that reads or writes files */
    STG_TF_PYFUNC = 158,               /**< a SavedModel op calling a registered Python function */
    STG_TF_SAVEDMODEL_MALFORMED = 159, /**< SavedModel wire data TensorFlow refuses */
    /* 160..164: chat templates (docs/templates.md) */
    STG_TEMPLATE_UNSAFE = 160,        /**< a Jinja2 sandbox-escape construct */
    STG_TEMPLATE_MALFORMED = 161,     /**< a template jinja2 would not compile */
    STG_TEMPLATE_LOADER = 162,        /**< extends / include / import of another template */
    STG_TEMPLATE_FOUND = 163,         /**< a chat template was found and checked (info) */
    STG_TEMPLATE_FIELD_INVALID = 164, /**< a chat_template JSON value transformers cannot read */
    /* 165..169: code a Hub loader runs from a repo (docs/remote-code.md) */
    STG_REMOTE_CODE = 165,            /**< an auto_map entry: trust_remote_code runs that module */
    STG_REMOTE_CODE_CROSS_REPO = 166, /**< an auto_map entry naming code in another repo */
    STG_REMOTE_CODE_INVALID = 167,    /**< an auto_map entry not of the form module.Class */
    /* 170..179: Flax msgpack (docs/flax.md), legacy GGML, tokenizers (docs/tokenizers.md) */
    STG_FLAX_MALFORMED = 170,      /**< msgpack wire data, a str not UTF-8, an unusable key */
    STG_FLAX_TRAILING = 171,       /**< bytes after the top-level msgpack value */
    STG_FLAX_EXT_UNKNOWN = 172,    /**< an extension code Flax does not decode */
    STG_FLAX_ARRAY_INVALID = 173,  /**< an array or complex payload that does not decode */
    STG_FLAX_DTYPE_UNKNOWN = 174,  /**< an array dtype name the writer never gives */
    STG_FLAX_SIZE_MISMATCH = 175,  /**< shape product x itemsize != buffer length, or overflow */
    STG_FLAX_KEY_DUPLICATE = 176,  /**< a key twice in one map (the later value wins) */
    STG_GGML_LEGACY = 177,         /**< a pre-GGUF ggml/ggmf/ggjt file: superseded format */
    STG_TOKENIZER_MALFORMED = 178, /**< a tokenizer or vocabulary file that does not read */
    /* 180..189: sibling data files and the models that name them (docs/siblings.md) */
    STG_SIBLING_RANGE_OUTSIDE = 180,        /**< a model beside the file names bytes past its end */
    STG_XML_MALFORMED = 181,                /**< an OpenVINO IR's XML outside the subset read */
    STG_OPENVINO_CONST_INVALID = 182,       /**< a Const layer's offset/size/type/shape */
    STG_OPENVINO_WEIGHTS_MISSING = 183,     /**< the IR's .bin absent or shorter than a Const */
    STG_OPENVINO_VERSION_UNSUPPORTED = 184, /**< an IR version the frontend does not read */
    STG_COREML_BLOB_INVALID = 185,          /**< a Core ML weight.bin's header or records */
    STG_COREML_MODEL_MALFORMED = 186,       /**< a model.mlmodel that is no Model protobuf */
    /* 190..194: hydra/NeMo configs and the YAML reader (docs/yaml.md) */
    STG_HYDRA_TARGET_UNSAFE = 190,     /**< a _target_ outside the NeMo/PyTorch/Lightning names */
    STG_HYDRA_TARGET_UNRESOLVED = 191, /**< a _target_ that is no plain string (interpolation) */
    STG_YAML_MALFORMED = 192,          /**< YAML that does not parse */
    STG_YAML_UNSUPPORTED = 193,        /**< YAML outside the reader's subset or limits */
    /* 195..199: skops (docs/remote-code.md) */
    STG_SKOPS_TYPE_UNTRUSTED = 195, /**< a schema.json type skops does not trust by default */
    STG_SKOPS_TYPE_DANGEROUS = 196, /**< ... and on the pickle policy's deny list */
    STG_SKOPS_MALFORMED = 197       /**< a skops state skops cannot audit */
} stg_code;

#define STG_CODE_MAX 197 /**< highest code number in this version */

/** Stable string of a code as in JSON ("header_too_large"); NULL for a number not in use. */
STG_API const char *stg_code_name(stg_code code);

/** One sentence saying what a finding of the code means ("The header length is 0."), as in the
 *  SARIF rules of the CLI; NULL for a number not in use. Not a stable string. */
STG_API const char *stg_code_description(stg_code code);

typedef enum stg_severity {
    STG_SEV_INFO = 0,
    STG_SEV_WARNING = 1,
    STG_SEV_ERROR = 2,
    STG_SEV_CRITICAL = 3
} stg_severity;

/** "info", "warning", "error", "critical". */
STG_API const char *stg_severity_name(stg_severity s);

/** Ordered from best to worst; a report's verdict is the worst that applies. */
typedef enum stg_verdict {
    STG_VERDICT_OK = 0,
    STG_VERDICT_WARN = 1,
    STG_VERDICT_INVALID = 2,
    STG_VERDICT_UNSAFE = 3,
    STG_VERDICT_ERROR = 4
} stg_verdict;

/** "ok", "warn", "invalid", "unsafe", "error". */
STG_API const char *stg_verdict_name(stg_verdict v);

/* ------------------------------------------------------------------------------------------ */
/* Limits and profiles (docs/design.md and SECURITY.md).                                            */

typedef enum stg_profile { STG_PROFILE_STRICT = 0, STG_PROFILE_COMPAT = 1 } stg_profile;

/** Default severity of a code's findings under a profile (docs/findings.md's severity column;
 *  any profile other than STG_PROFILE_COMPAT is strict). A few findings deliberately differ from
 *  it where their context decides (e.g. json_duplicate_key on a repeated dtype field is an error
 *  in compat too): the severity of a finding is its stg_finding.severity. STG_SEV_ERROR for a
 *  number not in use. */
STG_API stg_severity stg_code_severity(stg_code code, stg_profile profile);

/* Hard ceilings. No option raises a limit past its ceiling: stg_limits_set refuses a larger
 * value (STG_E_BAD_ARG), and a limit set past it in the struct by hand is used as the ceiling.
 * They bound what a scan can be made to spend whatever the caller configures (SECURITY.md). */
#define STG_NESTING_CEILING 64u            /**< max_nesting: archives/pickles in others */
#define STG_FINDINGS_CEILING 1000000u      /**< max_findings stored per file */
#define STG_PICKLE_STACK_CEILING 16777216u /**< max_pickle_stack */
#define STG_PICKLE_MEMO_CEILING 16777216u  /**< max_pickle_memo */
#define STG_PICKLE_STRING_CEILING ((uint64_t)4 << 30) /**< max_pickle_string: 4 GiB */
#define STG_INFLATE_BYTES_CEILING ((uint64_t)1 << 40) /**< max_inflate_bytes: 1 TiB */
#define STG_INFLATE_RATIO_CEILING 1000000u            /**< max_inflate_ratio */
/** Bytes of a finding's `member` path ("outer!inner!..."); a longer path keeps its last bytes
 *  after "...". Paths within the default max_nesting of zip names (at most 65,535 bytes each)
 *  are never cut. */
#define STG_MEMBER_PATH_MAX ((size_t)1 << 20)

/** Layout version of the caller-filled structs of this header (stg_limits, stg_scan_options,
 *  stg_stream_options): the first field of each, set by its _default function. Raised by one
 *  whenever one of them gains a field (in its reserved space, so sizeof does not change); the
 *  library refuses a version it does not know with STG_E_STRUCT_VERSION (docs/abi.md). */
#define STG_STRUCT_VERSION 1u

typedef struct stg_limits {
    uint32_t struct_version; /**< STG_STRUCT_VERSION, set by stg_limits_default (docs/abi.md) */
    uint64_t max_header_len; /**< 100,000,000 (the reference's cap); ceiling 4 GiB - 1 */
    uint64_t max_tensors;    /**< 10,000,000: more than a max-size header can hold */
    uint32_t max_rank;       /**< 64 */
    /** 127: the deepest nesting accepted, as serde in the reference (its limit of 128 fails at
     *  the 128th level); ceiling 4096 */
    uint32_t max_json_depth;
    uint32_t max_name_len;         /**< 65,536 bytes, after unescaping */
    uint32_t max_metadata_entries; /**< 1,000,000 */
    uint64_t max_memory;           /**< 0 = derived: 16 x header length + 8 MiB; else a hard cap */
    uint32_t max_findings;      /**< 1,000 per file; more are counted (findings_truncated); ceiling
                                STG_FINDINGS_CEILING */
    uint32_t max_pickle_stack;  /**< 1,000,000; ceiling STG_PICKLE_STACK_CEILING */
    uint32_t max_pickle_memo;   /**< 1,000,000; ceiling STG_PICKLE_MEMO_CEILING */
    uint64_t max_pickle_string; /**< 256 MiB: one string/bytes argument; ceiling 4 GiB */
    /** 4: pickles in pickles, archives in archives; ceiling STG_NESTING_CEILING (inline pickles
     *  of joblib object arrays: at most 7 levels whatever the value) */
    uint32_t max_nesting;
    /** 4 GiB per member, and the most of one file a scan holds in memory (a file that is not
     *  safetensors or a zip is read whole, a zip as its directory and the members read as
     *  bytes: more is limit_exceeded); ceiling 1 TiB */
    uint64_t max_inflate_bytes;
    uint32_t max_inflate_ratio; /**< 1000 (:1); ceiling STG_INFLATE_RATIO_CEILING */
    stg_profile profile;        /**< STG_PROFILE_STRICT */
    uint64_t reserved[20];      /**< room for new limits (docs/abi.md); never read */
} stg_limits;

/**
 * Fills *out with the documented defaults, for a caller built against struct_version (pass
 * STG_STRUCT_VERSION; stg_limits_default does). For bindings that cannot call the inline below.
 * @return STG_OK; STG_E_STRUCT_VERSION for a version this library does not know (*out is filled
 *         with that version, and every call given it refuses it); STG_E_BAD_ARG for NULL.
 */
STG_API stg_status stg_limits_init(stg_limits *out, uint32_t struct_version);

/** Fills *out with the documented defaults (struct_version of this header). */
static inline void stg_limits_default(stg_limits *out)
{
    (void)stg_limits_init(out, STG_STRUCT_VERSION);
}

/**
 * Sets one limit by its field name ("max_rank", "profile" takes "strict"/"compat").
 * @return STG_OK, STG_E_NOT_FOUND for an unknown name, STG_E_BAD_ARG for a bad value.
 */
STG_API stg_status stg_limits_set(stg_limits *lim, const char *name, const char *value);

/* ------------------------------------------------------------------------------------------ */
/* Reports                                                                                      */

typedef struct stg_report stg_report;

/** One finding. Strings are NUL-terminated UTF-8 owned by the report; absent fields are NULL. */
typedef struct stg_finding {
    stg_code code;
    stg_severity severity;
    bool has_offset;     /**< false: offset does not apply (JSON null) */
    uint64_t offset;     /**< absolute byte offset in the file or buffer (or in `member`) */
    const char *message; /**< one sentence; never built from input bytes as a format */
    const char *tensor;  /**< tensor name (may contain NUL: use tensor_len) */
    size_t tensor_len;
    const char *module; /**< pickle global module (may contain NUL: use module_len) */
    const char *name;   /**< pickle global name (may contain NUL: use name_len) */
    const char *member; /**< zip/tar member; then offset is inside the member's bytes */
    bool has_member_offset;
    uint64_t member_offset; /**< file offset of the member's local header */
    const char *limit;      /**< name of the limit that was hit */
    size_t module_len;      /**< bytes of module (0 when module is NULL) */
    size_t name_len;        /**< bytes of name (0 when name is NULL) */
} stg_finding;

/** Policy class of a pickle global. */
typedef enum stg_global_class {
    STG_GLOBAL_ALLOWED = 0,
    STG_GLOBAL_BENIGN = 1,
    STG_GLOBAL_DANGEROUS = 2,
    STG_GLOBAL_UNKNOWN = 3
} stg_global_class;

/** "allowed", "benign", "dangerous", "unknown". */
STG_API const char *stg_global_class_name(stg_global_class c);

/** A global a pickle would import. */
typedef struct stg_global {
    const char *module; /**< the bytes the pickle names (may contain NUL: use module_len) */
    const char *name;   /**< (may contain NUL: use name_len) */
    uint64_t offset;    /**< opcode offset (inside `member` when set) */
    const char *member; /**< NULL when not inside an archive member */
    stg_global_class klass;
    size_t module_len;
    size_t name_len;
} stg_global;

/** Content formats (the JSON `format` field). */
typedef enum stg_format {
    STG_FMT_UNKNOWN = 0,
    STG_FMT_SAFETENSORS = 1,
    STG_FMT_SAFETENSORS_INDEX = 2,
    STG_FMT_PICKLE = 3,
    STG_FMT_TORCH_ZIP = 4,
    STG_FMT_TORCH_LEGACY = 5,
    STG_FMT_TORCH_TAR = 6,
    STG_FMT_NUMPY = 7,
    STG_FMT_NUMPY_ZIP = 8,
    STG_FMT_JOBLIB = 9,
    STG_FMT_ZIP = 10,
    STG_FMT_TAR = 11,
    STG_FMT_GZIP = 12,
    STG_FMT_ZLIB = 13,
    STG_FMT_BZ2 = 14,
    STG_FMT_XZ = 15,
    STG_FMT_GGUF = 16,
    STG_FMT_ONNX = 17,
    STG_FMT_TEXT = 18,            /**< UTF-8 text that no model format claims (README, .py, YAML) */
    STG_FMT_JSON = 19,            /**< a JSON document (config.json, tokenizer.json) */
    STG_FMT_GIT_LFS_POINTER = 20, /**< a Git LFS pointer file (spec v1) */
    STG_FMT_KERAS = 21,           /**< a Keras model: .keras zip, config JSON, legacy .h5 */
    STG_FMT_HDF5 = 22,            /**< an HDF5 file with no Keras model config (weights) */
    STG_FMT_TF_SAVEDMODEL = 23,   /**< a TensorFlow SavedModel (saved_model.pb) */
    STG_FMT_CHAT_TEMPLATE = 24,   /**< a Jinja2 chat template file (*.jinja) */
    STG_FMT_PYTHON_CODE = 25,     /**< a .py file (code a repo's auto_map may name) */
    STG_FMT_YAML = 26,            /**< a .yaml / .yml config (hydra _target_ rules) */
    STG_FMT_SKOPS = 27,           /**< a skops zip (schema.json) */
    STG_FMT_NEMO = 28,            /**< a NeMo .nemo tar (model_config.yaml) */
    STG_FMT_FLAX_MSGPACK = 29,    /**< a Flax checkpoint (msgpack state dict, docs/flax.md) */
    STG_FMT_GGML_LEGACY = 30,     /**< a pre-GGUF ggml, ggmf or ggjt file */
    STG_FMT_SENTENCEPIECE = 31,   /**< a SentencePiece model (tokenizer.model) */
    STG_FMT_TIKTOKEN = 32,        /**< a tiktoken BPE file (*.tiktoken) */
    /* 33..37: sibling data files and the models that name them (docs/siblings.md) */
    STG_FMT_ONNX_EXTERNAL_DATA = 33, /**< raw tensor bytes an ONNX model beside it names */
    STG_FMT_OPENVINO_IR = 34,        /**< an OpenVINO IR model (the XML) */
    STG_FMT_OPENVINO_WEIGHTS = 35,   /**< the .bin an OpenVINO IR beside it names */
    STG_FMT_COREML_MODEL = 36,       /**< a Core ML model (model.mlmodel protobuf) */
    STG_FMT_COREML_WEIGHTS = 37,     /**< a Core ML package's weight.bin blob storage */
    STG_FMT_TFLITE = 38,             /**< a TFLite flatbuffer model (docs/flatbuffers.md) */
    STG_FMT_EXECUTORCH = 39,         /**< an ExecuTorch .pte program (docs/flatbuffers.md) */
    STG_FMT_TF_VARIABLES_INDEX = 40, /**< a TensorFlow checkpoint's variables.index table */
    STG_FMT_TF_VARIABLES_DATA = 41,  /**< a TensorFlow checkpoint's variables.data-* shard */
    STG_FMT_PARQUET = 42,            /**< an Apache Parquet file */
    STG_FMT_ARROW = 43,              /**< an Arrow IPC file or stream (.arrow, .feather) */
    STG_FMT_DATASET_TEXT = 44        /**< a CSV or JSON Lines dataset (docs/data-formats.md) */
} stg_format;

/** "safetensors", "torch-zip", ... as in docs/cli.md. */
STG_API const char *stg_format_name(stg_format f);

/** The door that opens a file for inspection (stg_door_of). */
typedef enum stg_door {
    STG_DOOR_SAFETENSORS = 0, /**< stg_file_open (every file's fallback: it says what else the
                                   file is when it is no safetensors file) */
    STG_DOOR_MODEL = 1,       /**< stg_model_open (a sharded model's index) */
    STG_DOOR_GGUF = 2,        /**< stg_gguf_open */
    STG_DOOR_ONNX = 3         /**< stg_onnx_open */
} stg_door;

/** Which door opens the regular file at path, by the library's format table (no rules run):
 *  a name that decides a format with a door of its own (`.safetensors.index.json`: the model
 *  door), else the file's magic (GGUF), else the name of a format without magic (`.onnx`);
 *  else STG_DOOR_SAFETENSORS. Reads at most the file's first 16 bytes; a path that is not a
 *  regular file, or one that cannot be read, is STG_E_IO (*out is then the door its name
 *  alone says). STG_E_BAD_ARG for a NULL
 *  argument. */
STG_API stg_status stg_door_of(const char *path, stg_door *out);

STG_API size_t stg_report_count(const stg_report *r);
/** i-th finding in file order; NULL when i is out of range. */
STG_API const stg_finding *stg_report_at(const stg_report *r, size_t i);
/** Findings past max_findings that were counted but not stored. */
STG_API uint64_t stg_report_truncated(const stg_report *r);
/** Fails closed: STG_VERDICT_ERROR for NULL or for a report whose run did not finish. */
STG_API stg_verdict stg_report_verdict(const stg_report *r);
STG_API stg_format stg_report_format(const stg_report *r);
/** Size in bytes of what was scanned. */
STG_API uint64_t stg_report_size(const stg_report *r);
/** Lower-case hex SHA-256 of the whole content, or NULL when it was not computed. */
STG_API const char *stg_report_sha256(const stg_report *r);
/** Path the report is about (stg_scan_path), or NULL. */
STG_API const char *stg_report_path(const stg_report *r);
/** Resolved link target (e.g. a Hugging Face blob), or NULL. */
STG_API const char *stg_report_blob(const stg_report *r);
STG_API size_t stg_report_global_count(const stg_report *r);
STG_API const stg_global *stg_report_global_at(const stg_report *r, size_t i);
STG_API void stg_report_free(stg_report *r);

/** Value of the "schema" field of the JSON records (docs/cli.schema.json). */
#define STG_REPORT_JSON_SCHEMA 1

/**
 * The report as one JSON object: the `{"type":"file",...}` record that `stguard scan --format
 * json` writes for it (docs/cli.md, docs/cli.schema.json), byte for byte, without the newline
 * that ends a JSON Lines record. Strings are escaped so the record parses whatever the file
 * named (invalid UTF-8 becomes U+FFFD; a path that is not UTF-8 also gets `path_hex`).
 * Written like snprintf, without allocating: at most cap - 1 bytes and a NUL go to buf.
 * @param path    the record's "path"; NULL: stg_report_path(r), or "-" when that is NULL.
 * @param buf     may be NULL when cap is 0 (to learn the length first).
 * @param needed  receives the record's length without the NUL: the record is whole in buf when
 *                *needed < cap.
 * @return STG_OK; STG_E_BAD_ARG when r or needed is NULL, or buf is NULL with cap > 0.
 *
 *     size_t n;
 *     stg_report_to_json(r, NULL, NULL, 0, &n);
 *     char *json = malloc(n + 1);
 *     if (json != NULL && stg_report_to_json(r, NULL, json, n + 1, &n) == STG_OK)
 *         puts(json);
 */
STG_API stg_status stg_report_to_json(const stg_report *r, const char *path, char *buf, size_t cap,
                                      size_t *needed);

/* ------------------------------------------------------------------------------------------ */
/* Validation of one buffer as safetensors (pure: no I/O).                                      */

/**
 * Validates buf[0..len) as a safetensors file.
 * @param buf  may be NULL only when len is 0.
 * @param lim  NULL means stg_limits_default().
 * @param out  receives a report even when the file is invalid; free with stg_report_free.
 * @return STG_OK when a report was produced (read its verdict), STG_E_BAD_ARG, STG_E_NOMEM.
 */
STG_API stg_status stg_validate_buffer(const void *buf, size_t len, const stg_limits *lim,
                                       stg_report **out);

/* ------------------------------------------------------------------------------------------ */
/* Scanning any format (pickle-based files, archives, safetensors, indexes).                    */

typedef struct stg_policy stg_policy;

/** Lists a policy entry can go to. */
typedef enum stg_policy_list {
    STG_POLICY_ALLOW = 0, /**< exact (module, name) pairs treated as allowed */
    STG_POLICY_DENY = 1   /**< module prefixes or pairs treated as dangerous */
} stg_policy_list;

/** A policy starting from the built-in lists. */
STG_API stg_status stg_policy_new(stg_policy **out);
/** Adds (module, name) to a list; name NULL on the deny list denies the whole module. */
STG_API stg_status stg_policy_add(stg_policy *p, stg_policy_list list, const char *module,
                                  const char *name);
/** Adds "MODULE:NAME" (the --allow-global syntax) to the allow list. */
STG_API stg_status stg_policy_allow_spec(stg_policy *p, const char *spec);
/**
 * Reads a policy file's bytes (format: docs/policy.md). On error *err_line is the 1-based line.
 */
STG_API stg_status stg_policy_load(stg_policy *p, const void *buf, size_t len, uint64_t *err_line);
STG_API void stg_policy_free(stg_policy *p);
/** Version of the built-in lists ("2026.11.1"). */
STG_API const char *stg_policy_version(void);

typedef struct stg_scan_options {
    uint32_t struct_version;     /**< STG_STRUCT_VERSION, set by stg_scan_options_default */
    stg_limits limits;           /**< its own struct_version is checked too */
    const stg_policy *policy;    /**< NULL: built-in lists only */
    bool digest;                 /**< compute SHA-256 of whole contents (default true) */
    const char *expected_sha256; /**< hex; a mismatch is digest_mismatch. NULL: none */
    const char *root;            /**< scan root for link containment; NULL: the path itself */
    uint64_t reserved[8];        /**< room for new options (docs/abi.md); never read */
} stg_scan_options;

/** As stg_limits_init, for stg_scan_options (limits included). */
STG_API stg_status stg_scan_options_init(stg_scan_options *out, uint32_t struct_version);

/** Fills *out with the defaults (struct_version of this header). */
static inline void stg_scan_options_default(stg_scan_options *out)
{
    (void)stg_scan_options_init(out, STG_STRUCT_VERSION);
}

/**
 * Scans buf by content, whatever its format. name_hint (a file name, may be NULL) is used only
 * as docs/containers.md says. *out always receives a report on STG_OK.
 */
STG_API stg_status stg_scan_buffer(const void *buf, size_t len, const char *name_hint,
                                   const stg_scan_options *opt, stg_report **out);

/** Scans one file (not a directory). Unreadable files give a report with io_error. With
 *  opt->root set, the path's real path must lie inside the root's: outside, symlink_skipped (not
 *  read); a path that cannot be resolved, io_error (not read: containment cannot be checked). */
STG_API stg_status stg_scan_path(const char *path, const stg_scan_options *opt, stg_report **out);

/** Lower-case hex SHA-256 of buf[0..len) into out (64 digits and a NUL).
 *  @return STG_OK; STG_E_BAD_ARG (out NULL, or buf NULL with len > 0); STG_E_CRYPTO. */
STG_API stg_status stg_sha256_hex(const void *buf, size_t len, char out[65]);

/** true when hex is exactly 64 hex digits (either case, nothing else); then out (when not NULL)
 *  gets them in lower case with a NUL: the form reports and digest checks use. */
STG_API bool stg_sha256_hex_normalize(const char *hex, char out[65]);

/* ------------------------------------------------------------------------------------------ */
/* Tree scans: what `stguard scan PATH...` runs (rules in docs/cli.md, "What is scanned").      */

#define STG_TREE_MAX_THREADS 256

/** Progress of a tree scan, handed to on_progress (read it through the pointer; fields added
 *  later take reserved space and say "since struct version N": read one only when
 *  struct_version >= N). */
typedef struct stg_tree_progress {
    uint32_t struct_version; /**< the library's STG_STRUCT_VERSION */
    uint64_t files_done;     /**< records handed out so far */
    uint64_t files_total;    /**< records the walk found */
    uint64_t bytes_done;     /**< bytes scanned so far (each distinct file once) */
    uint64_t bytes_total;    /**< sizes of the regular files to read, as found */
    double seconds;          /**< since the scan started */
    const char *current;     /**< path of the record being waited for, or NULL */
    uint64_t reserved[4];    /**< docs/abi.md */
} stg_tree_progress;

/** Options of stg_scan_tree: a caller-filled struct (docs/abi.md): fill it with
 *  stg_tree_options_default, then change fields. */
typedef struct stg_tree_options {
    uint32_t struct_version;    /**< STG_STRUCT_VERSION, set by stg_tree_options_default */
    stg_scan_options scan;      /**< limits, profile, policy, digest on/off; expected_sha256 only
                                  when the paths lead to exactly one record. Its own
                                  struct_version is checked too */
    const char *const *include; /**< fnmatch globs: a file is scanned when one matches its path
                                     relative to the argument or its name (none: every file) */
    size_t include_count;
    const char *const *exclude; /**< globs: a match skips the file, or the folder and all in it */
    size_t exclude_count;
    uint32_t threads;       /**< worker threads, 1..STG_TREE_MAX_THREADS (0 means 1); the
                                  records come in the same order whatever the number. One
                                  file and no on_progress: scanned on the calling thread */
    int32_t stdin_fd;       /**< read for the path "-" (default 0) */
    const char *stdin_name; /**< shown instead of "-" and used as its name hint; NULL */
    bool follow_links;      /**< follow symbolic links whose target lies inside the argument's
                                  root (default true); false: every link met inside a tree is a
                                  symlink_skipped record (a link named as a path is followed) */
    bool hf_cache;          /**< Hugging Face cache rules (default true): the repo folder is the
                                  root, blobs are reported under their snapshot links and checked
                                  against their names, .no_exist/.locks folders and partial
                                  downloads are skipped and counted. false: a plain tree */
    bool scan_git;          /**< walk `.git` folders too (default false: skipped, counted) */
    bool skip_file;         /**< never scan the file skip_dev/skip_ino (a caller's output file
                                  inside the tree: `scan . > out.sarif`); it gets no record */
    uint32_t shard_index;   /**< with shard_count > 0: only records whose path hashes (FNV-1a
                                  modulo shard_count) to shard_index are scanned and handed out */
    uint32_t shard_count;   /**< 0: no sharding */
    uint64_t skip_dev, skip_ino;
    /** When not NULL and *cancel becomes non-zero (e.g. from a signal handler), no more files
     *  are started and the reads in progress stop between two chunks (16 MiB at most): those
     *  files get no record; the records before them are handed out, in order; then the call
     *  returns STG_OK with summary->interrupted set. Set before the call: no record. Checked at
     *  least every progress_ms and before every chunk read. */
    const volatile int *cancel;
    uint32_t progress_ms; /**< period of on_progress calls while a scan is waited for (0: 250) */
    /** Called from the calling thread after each record and periodically while waiting; NULL:
     *  none. p and p->current are valid during the call only. */
    void (*on_progress)(void *user, const stg_tree_progress *p);
    uint64_t reserved[8]; /**< room for new options (docs/abi.md); never read */
} stg_tree_options;

/** As stg_limits_init, for stg_tree_options (scan options and limits included). */
STG_API stg_status stg_tree_options_init(stg_tree_options *out, uint32_t struct_version);

/** Fills *out with the defaults (struct_version of this header). */
static inline void stg_tree_options_default(stg_tree_options *out)
{
    (void)stg_tree_options_init(out, STG_STRUCT_VERSION);
}

/** What a record of a tree scan is. */
typedef enum stg_tree_kind {
    STG_TREE_FILE = 0,    /**< a regular file, read and scanned */
    STG_TREE_LINK = 1,    /**< a symbolic link followed to a file inside the root (`blob` is the
                                file's path: a Hugging Face blob for a snapshot link) */
    STG_TREE_STDIN = 2,   /**< the path "-": standard input (stdin_fd) */
    STG_TREE_NOT_READ = 3 /**< not read: a link not followed, a FIFO/device/socket, a path that
                                could not be listed or resolved; the report says why */
} stg_tree_kind;

/** One record of a tree scan, handed to the callback in walk order (sorted by bytes, depth
 *  first). Everything it points to is valid during the call only; fields added later take
 *  reserved space (read one only when struct_version covers it). */
typedef struct stg_tree_record {
    uint32_t struct_version; /**< the library's STG_STRUCT_VERSION */
    stg_tree_kind kind;
    const char *path;         /**< the path as walked (what stg_report_path(report) says) */
    const char *blob;         /**< for STG_TREE_LINK the target's path, else NULL */
    const stg_report *report; /**< the verdict and findings (do not free) */
    uint64_t reserved[4];     /**< docs/abi.md */
} stg_tree_record;

typedef void (*stg_tree_record_fn)(void *user, const stg_tree_record *rec);

/** Totals of a tree scan, written whole by stg_scan_tree (the caller only allocates it). */
typedef struct stg_tree_summary {
    uint32_t struct_version;     /**< the library's STG_STRUCT_VERSION */
    bool interrupted;            /**< *cancel stopped the scan before every record was out */
    uint64_t records;            /**< records handed out */
    uint64_t records_total;      /**< records found (= records unless interrupted) */
    uint64_t verdicts[5];        /**< records handed out, by stg_verdict */
    uint64_t bytes;              /**< bytes read and scanned, each distinct file once */
    uint64_t files_read;         /**< distinct files (and standard input) read */
    uint64_t skipped_self;       /**< files left out as skip_dev/skip_ino */
    uint64_t skipped_git;        /**< `.git` folders not walked */
    uint64_t skipped_no_exist;   /**< Hugging Face `.no_exist` folders not walked */
    uint64_t skipped_locks;      /**< Hugging Face `.locks` folders not walked */
    uint64_t skipped_incomplete; /**< Hugging Face partial downloads (`blobs/<etag>.incomplete`) */
    uint64_t reserved[8];        /**< docs/abi.md */
} stg_tree_summary;

/**
 * Walks and scans paths[0..count) as `stguard scan` does: files, folders (recursively, sorted),
 * "-" for standard input (at most once); every distinct file is read once (on opt->threads
 * worker threads) and on_record is called once per record, in walk order, from the calling
 * thread. A path that is missing, unreadable or a link outside the root is a record, not a
 * failure. With opt->scan.root NULL, a path's root when it is a folder (its Hugging Face repo
 * folder, else the path) is the scan root of its files (joblib side files, ONNX external data,
 * shards); a file named alone keeps its own folder. summary (may be NULL) gets the totals, also when the call fails part way.
 * @return STG_OK (also when interrupted); STG_E_STRUCT_VERSION (opt, opt->scan or its limits
 *         not initialised, or from a newer header); STG_E_BAD_ARG for misuse (no paths, a NULL
 *         path, "-" twice, threads or shard out of range, expected_sha256 not hex or with other
 *         than exactly one record); in both cases no record was handed out; STG_E_NOMEM;
 *         STG_E_CRYPTO when OpenSSL fails on standard input (its bytes cannot be read again).
 */
STG_API stg_status stg_scan_tree(const char *const *paths, size_t count,
                                 const stg_tree_options *opt, stg_tree_record_fn on_record,
                                 void *user, stg_tree_summary *summary);

/* ------------------------------------------------------------------------------------------ */
/* Conversion of pickle-based checkpoints to safetensors, without running the pickle
 * (docs/convert.md).                                                                          */

/** Options of stg_convert and stg_convert_buffer: fill with stg_convert_options_default, then
 *  change fields. */
typedef struct stg_convert_options {
    uint32_t struct_version; /**< STG_STRUCT_VERSION, set by stg_convert_options_default */
    /** The scan that must pass before anything is converted (its limits, policy); its
     *  digest field is ignored. A verdict worse than `warn` refuses the conversion. */
    stg_scan_options scan;
    const char *select; /**< NULL: the top-level dict; else the key of the checkpoint dict whose
                             value is converted ("state_dict", "model", ...) */
    bool force;         /**< stg_convert: replace an existing output (default false) */
    bool drop_aliases;  /**< leave out tensors that exactly alias another, named in
                             __metadata__ (default false: every tensor written whole) */
    bool strict_leaves; /**< a value that is not a tensor refuses instead of being left out */
    bool sha256;        /**< the output's SHA-256 in stg_report_sha256 (default false) */
    /** Most bytes of output (header and data; tensors sharing a storage are each written, so
     *  output can outgrow input). 0: unbounded for stg_convert, 4 GiB for stg_convert_buffer. */
    uint64_t max_output;
    uint64_t reserved[8]; /**< room for new options (docs/abi.md); never read */
} stg_convert_options;

/** As stg_limits_init, for stg_convert_options (scan options and limits included). */
STG_API stg_status stg_convert_options_init(stg_convert_options *out, uint32_t struct_version);

/** Fills *out with the defaults (struct_version of this header). */
static inline void stg_convert_options_default(stg_convert_options *out)
{
    (void)stg_convert_options_init(out, STG_STRUCT_VERSION);
}

/**
 * Converts the checkpoint at `in` (torch.save zip or legacy format, NumPy .npy / .npz) to a safetensors
 * file at `out`, evaluating its pickle with a restricted evaluator that executes nothing. The
 * file is scanned first (stg_scan_buffer over the same bytes that are converted); the output
 * is written to a temporary file in out's folder, validated by the strict validator, then
 * renamed into place (never over an existing file unless opt->force).
 * @param opt  NULL means stg_convert_options_default().
 * @param rep  receives the report (scan findings, refusals, skipped leaves; with opt->sha256
 *             the output's digest) whenever the call returns anything but STG_E_BAD_ARG or
 *             STG_E_STRUCT_VERSION. Free it with stg_report_free.
 * @return STG_OK (converted); STG_E_INVALID (refused: the report says why, no output file);
 *         STG_E_IO (unreadable input, existing output without force, write failure; report has
 *         io_error); STG_E_BAD_ARG; STG_E_STRUCT_VERSION; STG_E_NOMEM.
 */
STG_API stg_status stg_convert(const char *in, const char *out, const stg_convert_options *opt,
                               stg_report **rep);

/**
 * stg_convert from bytes to bytes: on STG_OK, *out (free with stg_convert_free) holds *out_len
 * bytes of safetensors that stg_validate_buffer found ok under the strict profile. On any
 * other return *out is NULL. opt->force is ignored.
 */
STG_API stg_status stg_convert_buffer(const void *in, size_t len, const stg_convert_options *opt,
                                      void **out, size_t *out_len, stg_report **rep);

/** Frees a buffer from stg_convert_buffer (NULL is fine). */
STG_API void stg_convert_free(void *buf);

/* ------------------------------------------------------------------------------------------ */
/* Tensors and the mmap loader (docs/loaders.md).                                           */

typedef enum stg_dtype {
    STG_DTYPE_BOOL = 0,
    STG_DTYPE_F4 = 1,
    STG_DTYPE_F6_E2M3 = 2,
    STG_DTYPE_F6_E3M2 = 3,
    STG_DTYPE_U8 = 4,
    STG_DTYPE_I8 = 5,
    STG_DTYPE_F8_E5M2 = 6,
    STG_DTYPE_F8_E4M3 = 7,
    STG_DTYPE_F8_E8M0 = 8,
    STG_DTYPE_F8_E4M3FNUZ = 9,
    STG_DTYPE_F8_E5M2FNUZ = 10,
    STG_DTYPE_I16 = 11,
    STG_DTYPE_U16 = 12,
    STG_DTYPE_F16 = 13,
    STG_DTYPE_BF16 = 14,
    STG_DTYPE_I32 = 15,
    STG_DTYPE_U32 = 16,
    STG_DTYPE_F32 = 17,
    STG_DTYPE_C64 = 18,
    STG_DTYPE_F64 = 19,
    STG_DTYPE_I64 = 20,
    STG_DTYPE_U64 = 21
} stg_dtype;

/** "BF16" etc.; NULL for a value not in the table. */
STG_API const char *stg_dtype_name(stg_dtype d);
/** Bits per element (4, 6, 8, ...); 0 for a value not in the table. */
STG_API uint32_t stg_dtype_bits(stg_dtype d);
/**
 * Turns tensor bytes from file order into host order, in place. Every tensor byte the library
 * hands out (stg_file_tensor_data, stg_file_read_tensor, stg_model_read_tensor, the converter's
 * output) is in file order: safetensors stores values little-endian whatever the host. On a
 * little-endian host this checks the arguments and changes nothing; on a big-endian one it
 * reverses the bytes of each element (complex64: of each float32 half). Calling it again turns
 * host order back into file order (for writing a file on a big-endian host).
 * One-byte and sub-byte types (BOOL, U8, I8, F8_*, F4, F6_*) are left as they are.
 * @param buf  the bytes of whole elements; NULL only with len 0
 * @param len  a multiple of the element size (any length for the one- and sub-byte types)
 * @return STG_OK; STG_E_BAD_ARG for a dtype not in the table, a NULL buf with len > 0, or a
 *         length that is not whole elements (checked on every host alike)
 *
 * Example: `stg_file_read_tensor(f, t, dst, n)` then `stg_dtype_to_host(t->dtype, dst, n)`,
 * and dst holds float values a `float *` may read.
 */
STG_API stg_status stg_dtype_to_host(stg_dtype d, void *buf, size_t len);

/** A validated tensor. begin/end are relative to the data section. */
typedef struct stg_tensor {
    const char *name; /**< NUL-terminated copy (valid until the file, stream or model is
                           closed); a name may also contain NUL: name_len is its length */
    size_t name_len;
    stg_dtype dtype;
    uint32_t rank;
    const uint64_t *shape; /**< rank entries */
    uint64_t begin, end;
    uint32_t shard; /**< shard number inside a stg_model (0 for a plain file) */
} stg_tensor;

typedef struct stg_file stg_file;

/**
 * Maps path read-only and validates it with the same core as stg_validate_buffer before
 * exposing anything. On findings that make the file invalid, returns STG_E_INVALID, *out NULL
 * and *rep the report. rep may be NULL.
 */
STG_API stg_status stg_file_open(const char *path, const stg_limits *lim, stg_file **out,
                                 stg_report **rep);
STG_API size_t stg_file_tensor_count(const stg_file *f);
/** Tensors in data order (by begin). */
STG_API const stg_tensor *stg_file_tensor_at(const stg_file *f, size_t i);
/** O(log n) lookup by exact name bytes (names may hold NUL). NULL when absent. */
STG_API const stg_tensor *stg_file_tensor_find(const stg_file *f, const char *name,
                                               size_t name_len);
/**
 * Safe copying read of a tensor's bytes with pread. dst_len must be at least end - begin.
 * @return STG_OK, STG_E_RANGE, STG_FILE_CHANGED (file shrank or was replaced), STG_E_IO.
 */
STG_API stg_status stg_file_read_tensor(const stg_file *f, const stg_tensor *t, void *dst,
                                        size_t dst_len);
/**
 * The same safe copying read of len bytes starting offset bytes into the tensor (a row slice).
 * @return STG_E_RANGE when [offset, offset + len) is not inside the tensor; else as above.
 */
STG_API stg_status stg_file_read_tensor_range(const stg_file *f, const stg_tensor *t,
                                              uint64_t offset, void *dst, size_t len);
/**
 * Raw zero-copy view of a tensor's bytes in the read-only mapping. The caller opts into the
 * usual mmap risk: if another process truncates the file, touching the view raises SIGBUS; the
 * library installs no signal handlers. Use stg_file_read_tensor where that matters. This is the
 * only view into a file mapping: stg_file_open, the scans and the tree walk copy what they read
 * with pread, so a file changed under them is STG_FILE_CHANGED / file_changed or io_error.
 */
STG_API const void *stg_file_tensor_data(const stg_file *f, const stg_tensor *t);
STG_API uint64_t stg_file_header_length(const stg_file *f);
STG_API uint64_t stg_file_data_start(const stg_file *f);
STG_API size_t stg_file_metadata_count(const stg_file *f);
/** i-th `__metadata__` entry (key order of the file); strings may hold NUL. */
STG_API stg_status stg_file_metadata_at(const stg_file *f, size_t i, const char **key,
                                        size_t *key_len, const char **value, size_t *value_len);
STG_API void stg_file_close(stg_file *f);

/* ------------------------------------------------------------------------------------------ */
/* GGUF files (docs/gguf.md, "Inspecting"): the header of a validated file, read-only.          */

typedef struct stg_gguf stg_gguf;

/** One metadata entry of a GGUF file, written whole by stg_gguf_metadata_at into the caller's
 *  struct (docs/abi.md: struct_version first, reserved space last). Strings point into the
 *  handle and may hold NUL: use the lengths; valid until stg_gguf_close. */
typedef struct stg_gguf_entry {
    uint32_t struct_version; /**< set by the library to its STG_STRUCT_VERSION */
    uint32_t type;           /**< GGUF value type: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32,
                                  6 f32, 7 bool, 8 string, 9 array, 10 u64, 11 i64, 12 f64 */
    const char *key;
    size_t key_len;
    uint32_t elem_type; /**< arrays: the element type; otherwise = type */
    uint32_t reserved0;
    uint64_t count;  /**< arrays: the element count (elements are not exposed); else 1 */
    const char *str; /**< type 8: the string's bytes; NULL otherwise */
    size_t str_len;
    uint64_t u64; /**< integer and bool values, as unsigned (signed ones sign-extended) */
    int64_t i64;  /**< integer and bool values, as signed */
    double f64;   /**< types 6 and 12 */
    uint64_t reserved[4];
} stg_gguf_entry;

/** One tensor info of a GGUF file, written whole by stg_gguf_tensor_at (as stg_gguf_entry). */
typedef struct stg_gguf_tensor_info {
    uint32_t struct_version; /**< set by the library to its STG_STRUCT_VERSION */
    uint32_t ggml_type;      /**< ggml type id */
    const char *name;
    size_t name_len;
    const char *type_name; /**< ggml's name of the type ("F32", "Q4_K", ...) */
    uint32_t n_dims;
    uint32_t reserved0;
    uint64_t dims[4];  /**< ne[0..3]: dimensions past n_dims are 1 */
    uint64_t elements; /**< product of the dimensions */
    uint64_t begin;    /**< absolute byte range of the tensor's data in the file: validated */
    uint64_t end;
    uint64_t reserved[4];
} stg_gguf_tensor_info;

/**
 * Reads path's header (never its tensor data) and validates it with the rules of a scan
 * (stg_gguf_check, lim's profile and limits) before exposing anything. On findings that make
 * the file invalid, returns STG_E_INVALID, *out NULL and *rep the report (rep may be NULL).
 */
STG_API stg_status stg_gguf_open(const char *path, const stg_limits *lim, stg_gguf **out,
                                 stg_report **rep);
STG_API uint32_t stg_gguf_version(const stg_gguf *g);
/** The alignment in force (general.alignment, or 32). */
STG_API uint32_t stg_gguf_alignment(const stg_gguf *g);
/** Offset of the data section (the aligned end of the tensor infos). */
STG_API uint64_t stg_gguf_data_start(const stg_gguf *g);
/** Sum of the tensors' element counts. */
STG_API uint64_t stg_gguf_parameter_count(const stg_gguf *g);
STG_API size_t stg_gguf_metadata_count(const stg_gguf *g);
/** i-th metadata entry, in file order. @return STG_OK, STG_E_RANGE, STG_E_BAD_ARG. */
STG_API stg_status stg_gguf_metadata_at(const stg_gguf *g, size_t i, stg_gguf_entry *out);
STG_API size_t stg_gguf_tensor_count(const stg_gguf *g);
/** i-th tensor info, in file order. @return STG_OK, STG_E_RANGE, STG_E_BAD_ARG. */
STG_API stg_status stg_gguf_tensor_at(const stg_gguf *g, size_t i, stg_gguf_tensor_info *out);
/**
 * Copies len bytes starting offset bytes into tensor i's validated range, with pread (never
 * through a mapping), checking before and after that the file is the one that was validated.
 * @return STG_OK, STG_E_RANGE (i, or [offset, offset + len) outside the tensor), STG_E_BAD_ARG,
 *         STG_FILE_CHANGED (the file shrank, changed or was replaced), STG_E_IO.
 */
STG_API stg_status stg_gguf_read_tensor(const stg_gguf *g, size_t i, uint64_t offset, void *dst,
                                        size_t len);
STG_API void stg_gguf_close(stg_gguf *g);

/* ------------------------------------------------------------------------------------------ */
/* ONNX models (docs/onnx.md, "Inspecting"): the ModelProto of a validated file, read-only.     */

typedef struct stg_onnx stg_onnx;

/** What stg_onnx_describe writes whole into the caller's struct (docs/abi.md: struct_version
 *  first, reserved space last). Strings point into the handle and may hold NUL: use the
 *  lengths (NULL, 0 when the model has no such field); valid until stg_onnx_close. */
typedef struct stg_onnx_model_info {
    uint32_t struct_version; /**< set by the library to its STG_STRUCT_VERSION */
    uint32_t reserved0;
    int64_t ir_version;
    int64_t model_version;
    const char *producer_name;
    size_t producer_name_len;
    const char *producer_version;
    size_t producer_version_len;
    const char *domain;
    size_t domain_len;
    const char *graph_name; /**< the main graph's name */
    size_t graph_name_len;
    uint64_t node_count;        /**< nodes of the main graph (not those of its subgraphs) */
    uint64_t initializer_count; /**< the main graph's initializers */
    uint64_t parameters;        /**< sum of the initializers' element counts (saturating) */
    uint64_t tensor_bytes;      /**< sum of their byte sizes, inline and external (saturating) */
    uint64_t external_count;    /**< initializers whose data lives in another file */
    uint64_t reserved[7];
} stg_onnx_model_info;

/** One opset import (ModelProto.opset_import), written whole by stg_onnx_opset_at. */
typedef struct stg_onnx_opset_info {
    uint32_t struct_version;
    uint32_t reserved0;
    const char *domain; /**< "" (or "ai.onnx") for the default domain */
    size_t domain_len;
    int64_t version;
    uint64_t reserved[3];
} stg_onnx_opset_info;

/** One dimension of a graph input's or output's shape (an array element: its layout is fixed). */
typedef struct stg_onnx_dim {
    int64_t value;     /**< dim_value, or -1 when the dimension is not static */
    const char *param; /**< dim_param (a symbolic name such as "batch"), or NULL */
    size_t param_len;
} stg_onnx_dim;

/** One graph input or output (ValueInfoProto), written whole by stg_onnx_input_at /
 *  stg_onnx_output_at. */
typedef struct stg_onnx_value_info {
    uint32_t struct_version;
    int32_t elem_type; /**< TensorProto.DataType of a tensor (or sparse tensor) type; 0 else */
    const char *name;
    size_t name_len;
    const char *type_name; /**< onnx's name of elem_type ("FLOAT", "INT64", ...), "UNDEFINED" */
    uint32_t has_shape;    /**< 1 when the type gives a shape (rank may then be 0: a scalar) */
    uint32_t rank;
    const stg_onnx_dim *dims; /**< rank entries */
    uint64_t reserved[4];
} stg_onnx_value_info;

/** One operator of the main graph's histogram, written whole by stg_onnx_op_at. */
typedef struct stg_onnx_op_info {
    uint32_t struct_version;
    uint32_t custom; /**< 1 when the domain is none of "", ai.onnx, ai.onnx.ml,
                          ai.onnx.preview.training (a runtime loads native code for it unless
                          the model defines it as a function) */
    const char *domain;
    size_t domain_len;
    const char *op_type;
    size_t op_type_len;
    uint64_t count;          /**< nodes of the main graph with this domain and op_type */
    uint32_t local_function; /**< 1 when the model defines a function of this domain and name
                                  (ModelProto.functions): the runtime expands it, no native code */
    uint32_t reserved1;
    uint64_t reserved[2];
} stg_onnx_op_info;

/** One initializer of the main graph (TensorProto), written whole by stg_onnx_initializer_at. */
typedef struct stg_onnx_tensor_info {
    uint32_t struct_version;
    int32_t data_type; /**< TensorProto.DataType */
    const char *name;
    size_t name_len;
    const char *type_name; /**< onnx's name of data_type, "?" for one onnx does not define */
    uint32_t rank;
    uint32_t external;    /**< 1: data_location EXTERNAL, the data is in `location` */
    const int64_t *dims;  /**< rank entries, as the file gives them */
    uint64_t elements;    /**< product of the dims; UINT64_MAX when one is negative or the
                                product overflows */
    uint64_t bytes;       /**< data size the type and dims give (strings: the stored bytes);
                                UINT64_MAX when not computable */
    const char *location; /**< external: the file, relative to the model's folder */
    size_t location_len;
    uint64_t offset; /**< external: where the data starts in it */
    uint64_t length; /**< external: its length (has_length), else to the end */
    uint32_t has_length;
    uint32_t reserved1;
    uint64_t reserved[4];
} stg_onnx_tensor_info;

/**
 * Reads path whole (up to max_inflate_bytes, as a scan does) and validates it with the ONNX
 * rules of a scan (stg_onnx_check, its external-data files in the model's folder; lim's profile
 * and limits) before exposing anything, whatever its name. On findings that make the file
 * invalid, returns STG_E_INVALID, *out NULL and *rep the report (rep may be NULL). The tables
 * are built under lim->max_memory (0: 8 MiB + 4 x the file size).
 */
STG_API stg_status stg_onnx_open(const char *path, const stg_limits *lim, stg_onnx **out,
                                 stg_report **rep);
/** The model's header fields and totals. @return STG_OK, STG_E_BAD_ARG. */
STG_API stg_status stg_onnx_describe(const stg_onnx *m, stg_onnx_model_info *out);
STG_API size_t stg_onnx_metadata_count(const stg_onnx *m);
/** i-th ModelProto.metadata_props entry (file order); strings may hold NUL. */
STG_API stg_status stg_onnx_metadata_at(const stg_onnx *m, size_t i, const char **key,
                                        size_t *key_len, const char **value, size_t *value_len);
STG_API size_t stg_onnx_opset_count(const stg_onnx *m);
/** i-th opset import, in file order. @return STG_OK, STG_E_RANGE, STG_E_BAD_ARG. */
STG_API stg_status stg_onnx_opset_at(const stg_onnx *m, size_t i, stg_onnx_opset_info *out);
STG_API size_t stg_onnx_input_count(const stg_onnx *m);
/** i-th input of the main graph, in file order. @return STG_OK, STG_E_RANGE, STG_E_BAD_ARG. */
STG_API stg_status stg_onnx_input_at(const stg_onnx *m, size_t i, stg_onnx_value_info *out);
STG_API size_t stg_onnx_output_count(const stg_onnx *m);
STG_API stg_status stg_onnx_output_at(const stg_onnx *m, size_t i, stg_onnx_value_info *out);
/** Distinct (domain, op_type) pairs of the main graph's nodes. */
STG_API size_t stg_onnx_op_count(const stg_onnx *m);
/** i-th pair, most frequent first (ties: domain, then op_type, bytewise). */
STG_API stg_status stg_onnx_op_at(const stg_onnx *m, size_t i, stg_onnx_op_info *out);
STG_API size_t stg_onnx_initializer_count(const stg_onnx *m);
/** i-th initializer of the main graph, in file order. */
STG_API stg_status stg_onnx_initializer_at(const stg_onnx *m, size_t i, stg_onnx_tensor_info *out);
STG_API void stg_onnx_close(stg_onnx *m);

/* ------------------------------------------------------------------------------------------ */
/* Flax checkpoints (flax_model.msgpack): the parameter tree of a validated file (docs/flax.md). */

typedef struct stg_flax stg_flax;

/** One array leaf of the tree, written whole by stg_flax_param_at (docs/abi.md: struct_version
 *  first, reserved space last). Strings are valid until stg_flax_close. */
typedef struct stg_flax_param_info {
    uint32_t struct_version; /**< STG_STRUCT_VERSION of the library */
    uint32_t rank;           /**< dimensions (at most 32) */
    const char *name;        /**< the keys from the root, '/'-joined (NUL-terminated; may hold
                                  NUL: use name_len; cut to 1,024 bytes keeping the end) */
    uint64_t name_len;
    const char *dtype; /**< numpy's dtype name as written ("float32", "bfloat16"): not
                            NUL-terminated */
    uint64_t dtype_len;
    uint64_t shape[32]; /**< the first rank entries are the dimensions */
    uint64_t offset;    /**< offset of the leaf's msgpack extension in the file */
    uint64_t nbytes;    /**< its buffer's length (shape product x itemsize) */
    int32_t ext;        /**< 1: an ndarray, 3: a numpy scalar (flax's extension codes) */
    uint32_t reserved1;
    uint64_t reserved[4];
} stg_flax_param_info;

/**
 * Reads path whole (up to max_inflate_bytes, as a scan does) and validates it with the Flax rules
 * of a scan (lim's profile and limits) before exposing anything, whatever its name. On findings
 * that make the file invalid, returns STG_E_INVALID, *out NULL and *rep the report (rep may be
 * NULL). The leaf table is built under lim->max_memory (0: 8 MiB + 4 x the file size).
 */
STG_API stg_status stg_flax_open(const char *path, const stg_limits *lim, stg_flax **out,
                                 stg_report **rep);
/** Array leaves of the tree (ndarrays and numpy scalars), in file order. */
STG_API size_t stg_flax_param_count(const stg_flax *f);
/** i-th leaf. @return STG_OK, STG_E_RANGE, STG_E_BAD_ARG. */
STG_API stg_status stg_flax_param_at(const stg_flax *f, size_t i, stg_flax_param_info *out);
STG_API void stg_flax_close(stg_flax *f);

/* ------------------------------------------------------------------------------------------ */
/* Sharded models: model.safetensors.index.json and its shards as one tensor table.             */

typedef struct stg_model stg_model;

STG_API stg_status stg_model_open(const char *dir_or_index, const stg_limits *lim, stg_model **out,
                                  stg_report **rep);
STG_API size_t stg_model_tensor_count(const stg_model *m);
STG_API const stg_tensor *stg_model_tensor_at(const stg_model *m, size_t i);
STG_API const stg_tensor *stg_model_tensor_find(const stg_model *m, const char *name,
                                                size_t name_len);
STG_API stg_status stg_model_read_tensor(const stg_model *m, const stg_tensor *t, void *dst,
                                         size_t dst_len);
/** stg_file_read_tensor_range on the tensor's shard. */
STG_API stg_status stg_model_read_tensor_range(const stg_model *m, const stg_tensor *t,
                                               uint64_t offset, void *dst, size_t len);
STG_API size_t stg_model_shard_count(const stg_model *m);
/** File name of shard i (as listed in the index). */
STG_API const char *stg_model_shard_name(const stg_model *m, size_t i);
STG_API void stg_model_close(stg_model *m);

/* ------------------------------------------------------------------------------------------ */
/* Streaming validation (push API).                                                             */

typedef struct stg_stream stg_stream;

typedef struct stg_stream_options {
    uint32_t struct_version;     /**< STG_STRUCT_VERSION, set by stg_stream_options_default */
    bool digest;                 /**< SHA-256 of the whole stream (default true) */
    bool tensor_digests;         /**< SHA-256 per tensor (default false) */
    const char *expected_sha256; /**< hex; mismatch is digest_mismatch. NULL: none */
    uint64_t reserved[8];        /**< room for new options (docs/abi.md); never read */
} stg_stream_options;

/** As stg_limits_init, for stg_stream_options. */
STG_API stg_status stg_stream_options_init(stg_stream_options *out, uint32_t struct_version);

/** Fills *out with the defaults (struct_version of this header). */
static inline void stg_stream_options_default(stg_stream_options *out)
{
    (void)stg_stream_options_init(out, STG_STRUCT_VERSION);
}
/** lim and opt may be NULL (defaults). */
STG_API stg_status stg_stream_new(const stg_limits *lim, const stg_stream_options *opt,
                                  stg_stream **out);
/** Feeds the next chunk (any size, including 0). */
STG_API stg_status stg_stream_feed(stg_stream *s, const void *chunk, size_t len);
/** Ends the stream: *out gets the report, identical to stg_validate_buffer on the whole input. */
STG_API stg_status stg_stream_finish(stg_stream *s, stg_report **out);
/** After finish: the validated tensor table (empty when the header was invalid). */
STG_API size_t stg_stream_tensor_count(const stg_stream *s);
STG_API const stg_tensor *stg_stream_tensor_at(const stg_stream *s, size_t i);
/** After finish with tensor_digests: the 32-byte SHA-256 of tensor i. */
STG_API stg_status stg_stream_tensor_sha256(const stg_stream *s, size_t i, uint8_t out[32]);
STG_API void stg_stream_free(stg_stream *s);

/* ------------------------------------------------------------------------------------------ */
/* Model signatures: OpenSSF model_signing's `model.sig` verified offline (docs/signing.md).     */

/** How the bundle says it was signed. */
typedef enum stg_signature_method {
    STG_SIGNATURE_METHOD_UNKNOWN = 0,     /**< the bundle could not be read */
    STG_SIGNATURE_METHOD_KEY = 1,         /**< an EC key pair (model_signing `key`) */
    STG_SIGNATURE_METHOD_CERTIFICATE = 2, /**< a leaf certificate and chain (`certificate`) */
    STG_SIGNATURE_METHOD_KEYLESS = 3      /**< Sigstore keyless (Fulcio, Rekor): not verified */
} stg_signature_method;

/** "unknown", "key", "certificate", "sigstore". */
STG_API const char *stg_signature_method_name(stg_signature_method m);

/** Trust material and hashing rules of a check: fill with stg_signature_options_default. */
typedef struct stg_signature_options {
    uint32_t struct_version;              /**< STG_STRUCT_VERSION */
    const char *public_key;               /**< PEM file of the signer's EC public key, or NULL */
    const char *const *certificate_chain; /**< PEM files of the trusted roots (and CAs) */
    size_t certificate_chain_count;       /**< exactly one of public_key, a chain and
                                               trusted_root is given */
    const char *trusted_root;        /**< Sigstore trusted_root.json for keyless bundles: keyless
                                   verification is not implemented, such a bundle is
                                   signature_unsupported (never verified) */
    const char *const *ignore_paths; /**< model_signing's --ignore-paths: paths (absolute or
                                               from the working folder) left out when inside the
                                               model */
    size_t ignore_path_count;
    bool ignore_git_paths; /**< leave out .git, .gitattributes, .github, .gitignore at the
                                model's root (default true, as model_signing) */
    bool allow_symlinks;   /**< hash links to files with their target's bytes (default false:
                                a link is signed_file_unverifiable) */
    uint64_t max_files;    /**< files listed or found at most (default 1,000,000; at most
                                1,048,576); past it: signature_incomplete */
    uint64_t reserved[8];  /**< docs/abi.md */
} stg_signature_options;

/** As stg_limits_init, for stg_signature_options. */
STG_API stg_status stg_signature_options_init(stg_signature_options *out, uint32_t struct_version);

static inline void stg_signature_options_default(stg_signature_options *out)
{
    (void)stg_signature_options_init(out, STG_STRUCT_VERSION);
}

/** One finding of a signature check. Strings are owned by the check; absent ones are NULL. */
typedef struct stg_signature_finding {
    stg_code code; /**< one of the signature codes (130-139, docs/findings.md) */
    stg_severity severity;
    bool has_offset;
    uint64_t offset;     /**< in the signature file, or in the decoded payload (the message says) */
    const char *file;    /**< the model-relative path the finding is about (raw bytes, escape
                              before printing) */
    const char *message; /**< one sentence of constant text and values */
} stg_signature_finding;

typedef struct stg_signature stg_signature;

/** Kinds of entry stg_signature_add_file takes. */
typedef enum stg_signature_entry {
    STG_SIGNATURE_ENTRY_FILE = 0,    /**< a regular file; sha256_hex is its digest */
    STG_SIGNATURE_ENTRY_LINK = 1,    /**< a link to a file; sha256_hex is the target's */
    STG_SIGNATURE_ENTRY_UNHASHED = 2 /**< an entry that could not be hashed (special file,
                                            unreadable, a linked folder, not read) */
} stg_signature_entry;

/**
 * Reads the signature file sig_path (NULL: MODEL/model.sig) of the model at `model` (a folder, or
 * one file) and checks all that needs no model file: the bundle, the DSSE signature with the
 * options' key or chain, the statement and its root digest. Then the model's files are given with
 * stg_signature_add_file / stg_signature_add_record, or hashed by stg_signature_hash_model, and
 * stg_signature_finish compares. A bundle that cannot be read or does not verify is a finding,
 * not a failure: *out is set on STG_OK.
 * @return STG_OK; STG_E_BAD_ARG (NULL arguments, neither or both of a key and a chain, a key or
 *         chain file that holds no PEM key or certificate); STG_E_IO (the model or a key or chain
 *         file cannot be read; a missing signature file is a finding); STG_E_STRUCT_VERSION;
 *         STG_E_NOMEM; STG_E_CRYPTO (libcrypto cannot be loaded).
 */
STG_API stg_status stg_signature_open(const char *model, const char *sig_path,
                                      const stg_signature_options *opt, stg_signature **out);
/** Whether rel (a path relative to the model, '/'-separated) is left out of the comparison. */
STG_API bool stg_signature_ignores(const stg_signature *s, const char *rel);
/** A file of the model, hashed by the caller: rel is its model-relative path ("." for a
 *  single-file model). sha256_hex: 64 hex digits (ignored for ENTRY_UNHASHED). Ignored paths
 *  are skipped here. @return STG_OK, STG_E_BAD_ARG, STG_E_STATE after finish. */
STG_API stg_status stg_signature_add_file(stg_signature *s, const char *rel,
                                          stg_signature_entry kind, const char *sha256_hex);
/** A record of stg_scan_tree over the model (its path under the model as opened): the digest
 *  its report holds, its kind as the walk saw it, and the links among its folders. */
STG_API stg_status stg_signature_add_record(stg_signature *s, const stg_tree_record *rec);
/** Walks the model as model_signing does and hashes every file not ignored (one read each). */
STG_API stg_status stg_signature_hash_model(stg_signature *s);
/** Ends the check: listed files not given are signed_file_missing. */
STG_API stg_status stg_signature_finish(stg_signature *s);
/** true only after finish with no finding at all. */
STG_API bool stg_signature_verified(const stg_signature *s);
STG_API stg_signature_method stg_signature_method_of(const stg_signature *s);
/** Who signed: "sha256:<hex>" of the key's PEM (what the bundle's hint holds) for the key
 *  method, the leaf certificate's subject for the certificate method; NULL when unknown. */
STG_API const char *stg_signature_signer(const stg_signature *s);
/** The signature file the check read (sig_path, or the default). */
STG_API const char *stg_signature_file(const stg_signature *s);
/** The subject name the statement gives the model (informative only), or NULL. */
STG_API const char *stg_signature_model_name(const stg_signature *s);
/** Files compared (given or hashed, not ignored). */
STG_API uint64_t stg_signature_file_count(const stg_signature *s);
STG_API size_t stg_signature_finding_count(const stg_signature *s);
STG_API const stg_signature_finding *stg_signature_finding_at(const stg_signature *s, size_t i);
/** Findings not stored (past 1000, or memory refused); they still mean "not verified". */
STG_API uint64_t stg_signature_findings_dropped(const stg_signature *s);
STG_API void stg_signature_free(stg_signature *s);

/* ------------------------------------------------------------------------------------------ */

/** Library version string, same as STG_VERSION_STRING of the header it was built with. */
STG_API const char *stg_version(void);

#ifdef __cplusplus
}
#endif

#endif /* STGUARD_STGUARD_H */
