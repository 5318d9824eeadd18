/* GGUF reader (versions 2 and 3; docs/gguf.md): bytes -> header, metadata records and tensor
 * infos, nothing else. Every read goes through the bounded cursor; every count is compared with
 * the bytes that remain before anything is reserved for it; the records grow with what was
 * really read (a lying count costs nothing), inside one capped arena.
 *
 * What this file decides: where the structure stops being readable (stg_gguf_fail: the first
 * field that cannot be read, a count that cannot fit, an unknown value type, a limit). What it
 * leaves to validator/gguf.c: every rule about values that were read (UTF-8, duplicates,
 * alignment, the ggml type table, sizes and offsets), so that profiles stay in one place. The
 * helpers below the parse (type table, byte size, duplicate marks) are pure functions the
 * validator calls. */
#ifndef STG_PARSER_GGUF_H
#define STG_PARSER_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

#define STG_GGUF_MAGIC "GGUF"
#define STG_GGUF_HEADER_SIZE 24u       /* magic, version, tensor_count, kv_count (v2, v3) */
#define STG_GGUF_MAX_DIMS 4u           /* ceiling: GGML_MAX_DIMS; more dims is not readable */
#define STG_GGUF_DEFAULT_ALIGNMENT 32u /* when general.alignment is absent */
#define STG_GGUF_DEPTH_CEILING 64u     /* arrays in arrays, whatever max_array_depth says */
#define STG_GGUF_NONE UINT32_MAX       /* "no record" in dup_of */

/* Value types of metadata (the spec's gguf_metadata_value_type). */
typedef enum stg_gguf_type {
    STG_GGUF_UINT8 = 0,
    STG_GGUF_INT8 = 1,
    STG_GGUF_UINT16 = 2,
    STG_GGUF_INT16 = 3,
    STG_GGUF_UINT32 = 4,
    STG_GGUF_INT32 = 5,
    STG_GGUF_FLOAT32 = 6,
    STG_GGUF_BOOL = 7,
    STG_GGUF_STRING = 8,
    STG_GGUF_ARRAY = 9,
    STG_GGUF_UINT64 = 10,
    STG_GGUF_INT64 = 11,
    STG_GGUF_FLOAT64 = 12
} stg_gguf_type;
#define STG_GGUF_TYPE_COUNT 13u

/* Bytes of one value of a fixed-size type; 0 for string, array and unknown types. */
uint32_t stg_gguf_type_size(uint32_t type);
/* "u8", "str", "arr", ... ; NULL for an unknown type. */
const char *stg_gguf_type_name(uint32_t type);

/* Explicit limits of one parse (validator/gguf.c fills them from stg_limits and its defaults). */
typedef struct stg_gguf_limits {
    uint64_t max_tensors;     /* tensor_count above this stops the parse */
    uint64_t max_kv;          /* metadata_kv_count above this stops the parse */
    uint64_t max_key_len;     /* bytes of one key */
    uint64_t max_string_len;  /* bytes of one string value (and of a tensor name) */
    uint64_t max_array_elems; /* elements of one array (at any depth) */
    uint32_t max_array_depth; /* 1 = an array may hold no array; clamped to the ceiling */
    uint64_t max_header_len;  /* bytes from 0 to the end of the tensor infos */
    size_t max_memory;        /* the arena's cap: records, names index and hash tables */
    uint64_t hash_seed;       /* keyed hash of the duplicate check (parser/hash.h) */
} stg_gguf_limits;

/* Why the parse stopped (the bytes after that point are not interpreted). */
typedef enum stg_gguf_error {
    STG_GGUF_OK = 0,
    STG_GGUF_E_MAGIC,      /* the first 4 bytes are not "GGUF" */
    STG_GGUF_E_SHORT,      /* the file ends inside the 24-byte header */
    STG_GGUF_E_VERSION,    /* version 0, above 3, or byte-swapped; value = version */
    STG_GGUF_E_VERSION_1,  /* version 1 (32-bit counts): obsolete */
    STG_GGUF_E_COUNT,      /* a count that is negative as int64 or cannot fit in the bytes left */
    STG_GGUF_E_TRUNCATED,  /* a fixed-size field runs past the end of the file */
    STG_GGUF_E_STRING,     /* a string's length runs past the end of the file */
    STG_GGUF_E_VALUE_TYPE, /* an unknown value type (or array element type); value = type */
    STG_GGUF_E_ARRAY,      /* an array's count x element size cannot fit in the bytes left */
    STG_GGUF_E_NDIMS,      /* a tensor's n_dims above STG_GGUF_MAX_DIMS; value = n_dims */
    STG_GGUF_E_LIMIT,      /* a limit of stg_gguf_limits; `limit` names it, value = what hit */
    STG_GGUF_E_MEMORY      /* the arena's cap (or the system) refused */
} stg_gguf_error;

typedef struct stg_gguf_fail {
    stg_gguf_error code;
    uint64_t offset;   /* absolute offset of the field that failed */
    uint64_t value;    /* the offending number, when there is one */
    const char *limit; /* STG_GGUF_E_LIMIT: the limit's name ("max_tensors", ...) */
    uint32_t kv;       /* index of the metadata record being read, or STG_GGUF_NONE */
    uint32_t tensor;   /* index of the tensor info being read, or STG_GGUF_NONE */
} stg_gguf_fail;

/* One metadata key-value pair. Pointers are into the caller's buffer. */
typedef struct stg_gguf_kv {
    uint64_t offset; /* of the key's length field */
    const uint8_t *key;
    size_t key_len;
    uint64_t type_offset;  /* of the value type field */
    uint32_t type;         /* value type (STG_GGUF_ARRAY for arrays) */
    uint32_t elem_type;    /* arrays: the element type of the outer array; else = type */
    uint64_t count;        /* arrays: the outer array's element count; else 1 */
    uint64_t value_offset; /* first byte of the value (after an array's type and count) */
    uint64_t value_len;    /* bytes of the value (an array's elements; a string's bytes) */
    uint32_t depth;        /* deepest array nesting inside (0 scalar/string, 1 plain array) */
    bool key_utf8;         /* the key is valid UTF-8 */
    bool key_nul;          /* the key holds a NUL byte */
    uint64_t bad_utf8;     /* offset of the first string value that is not UTF-8, or UINT64_MAX */
    uint64_t bad_bool;     /* offset of the first bool byte that is not 0 or 1, or UINT64_MAX */
    uint32_t dup_of;       /* earlier record with the same key up to its first NUL (as ggml
                            * compares keys: C strings), or STG_GGUF_NONE */
    uint64_t hash;         /* keyed hash of the key (duplicate check) */
} stg_gguf_kv;

/* One tensor info. */
typedef struct stg_gguf_tensor {
    uint64_t offset; /* of the name's length field */
    const uint8_t *name;
    size_t name_len;
    bool name_utf8;
    bool name_nul;
    uint32_t n_dims;
    uint64_t ne[STG_GGUF_MAX_DIMS]; /* dims past n_dims are 1, as ggml fills them */
    uint64_t dims_offset;           /* of the first dimension */
    uint64_t type_offset;           /* of the ggml type field */
    uint32_t type;                  /* ggml type as read (int32 bits) */
    uint64_t data_field_offset;     /* of the offset field */
    uint64_t data_offset;           /* relative to the data section */
    uint32_t dup_of;                /* earlier tensor with the same name bytes, or STG_GGUF_NONE */
    uint64_t hash;
} stg_gguf_tensor;

typedef struct stg_gguf_file {
    stg_arena arena;
    uint32_t version;
    uint64_t tensor_count; /* as declared */
    uint64_t kv_count;     /* as declared */
    stg_gguf_kv *kvs;      /* the records read, in file order (all of them when fail is OK) */
    size_t nkv;
    stg_gguf_tensor *tensors;
    size_t ntensors;
    uint64_t infos_end; /* offset after the last tensor info (valid when fail is OK) */
    stg_gguf_fail fail;
    size_t kvs_cap_bytes, tensors_cap_bytes; /* growable buffers charged to `arena` */
} stg_gguf_file;

void stg_gguf_file_init(stg_gguf_file *f, size_t max_memory);
void stg_gguf_file_release(stg_gguf_file *f);

/* Reads buf[0..len). Returns true when everything up to the end of the tensor infos was read
 * (f->fail.code == STG_GGUF_OK); false otherwise, with f->fail set and the records read before
 * the failure kept. Duplicates are marked (dup_of) for every record read. */
bool stg_gguf_parse(const uint8_t *buf, size_t len, const stg_gguf_limits *lim, stg_gguf_file *f);

/* The key's bytes before its first NUL (all of them when it holds none): the key as ggml's
 * gguf_find_key sees it (strcmp of C strings). */
size_t stg_gguf_key_cstr_len(const stg_gguf_kv *kv);

/* Index of the first record whose key, read as a C string, is key (as ggml's gguf_find_key
 * finds it: "general.alignment\0x" shadows a later "general.alignment"), or STG_GGUF_NONE.
 * Linear: for the few well-known keys the validator looks up. */
uint32_t stg_gguf_find_key(const stg_gguf_file *f, const char *key);

/* ggml tensor types: block size in elements and bytes per block. */
typedef struct stg_ggml_type_info {
    const char *name;
    uint32_t block; /* elements per block (1 for plain types) */
    uint32_t bytes; /* bytes per block */
} stg_ggml_type_info;

/* The type's entry, or NULL for an id ggml does not define or has removed (4, 5, 31-33,
 * 36-38) and for ids at or past its count. */
const stg_ggml_type_info *stg_ggml_type(uint32_t id);
#define STG_GGML_TYPE_COUNT 43u /* one past the highest id current ggml defines */

/* Sizes of one tensor. */
typedef enum stg_gguf_size {
    STG_GGUF_SIZE_OK = 0,
    STG_GGUF_SIZE_NEGATIVE, /* a dimension is at least 2^63 (negative as ggml's int64) */
    STG_GGUF_SIZE_OVERFLOW, /* the element count is not below 2^63, or the byte size wraps */
    STG_GGUF_SIZE_TYPE,     /* the type is not in the table */
    STG_GGUF_SIZE_BLOCK     /* the first dimension is not a multiple of the block size */
} stg_gguf_size;

/* Element count and byte size with checked arithmetic (every product checked, so dimensions
 * whose product wraps to a small number, such as 2^32 x 2^32 x 16, are an overflow). */
stg_gguf_size stg_gguf_tensor_size(const stg_gguf_tensor *t, uint64_t *elements, uint64_t *bytes);

/* x rounded up to a multiple of align (a power of two); false when that wraps. */
bool stg_gguf_pad(uint64_t x, uint64_t align, uint64_t *out);

#endif
