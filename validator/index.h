/* Sharded-model index rules (pure: no I/O). model.safetensors.index.json has the shape
 *   {"metadata": {... any JSON ..., "total_size": u64 (optional)}, "weight_map": {tensor: shard}}
 * Stage 1 (stg_index_parse) checks the JSON and that shape, decodes the map and checks every
 * shard name is a plain file name. Stage 2 (stg_index_check_shards) compares the map with the
 * shards' tensor tables, which the caller (loader/model.c) obtained by opening the shards.
 * Offsets of index findings are byte positions in the index file; findings about a shard's own
 * tensors carry `member` = the shard's name and the offset of the tensor's key in that shard. */
#ifndef STG_VALIDATOR_INDEX_H
#define STG_VALIDATOR_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/arena.h"
#include "report.h"
#include "stguard/stguard.h"

typedef struct stg_index_entry {
    const char *tensor; /* decoded name (NUL-terminated, may hold NUL: use tensor_len) */
    size_t tensor_len;
    uint32_t shard;      /* index into stg_index.shards */
    uint64_t key_offset; /* offset of the tensor's key token in the index */
    bool dropped;        /* compat: an earlier duplicate key that a later one replaced */
} stg_index_entry;

typedef struct stg_index_shard {
    const char *name; /* decoded file name (NUL-terminated; may hold NUL when unsafe) */
    size_t name_len;
    uint64_t offset; /* offset of the first map value naming this shard */
    bool unsafe;     /* index_shard_path_unsafe was reported: never open it */
} stg_index_shard;

typedef struct stg_index {
    stg_arena arena;          /* everything below lives here; capped like a header */
    stg_index_entry *entries; /* weight_map entries in file order */
    size_t entry_count;
    size_t entries_cap_bytes; /* private: entries is a growable buffer charged to the arena */
    stg_index_shard *shards;  /* distinct shard names in order of first appearance */
    size_t shard_count;
    bool has_total_size;
    uint64_t total_size;
    uint64_t total_size_offset;
    bool ok; /* JSON and shape are valid: stage 2 may run */
} stg_index;

/* A shard's tensor table as the loader found it. */
typedef struct stg_index_shard_tensor {
    const char *name;
    size_t name_len;
    uint64_t name_offset; /* offset of the tensor's key in the shard */
    uint64_t byte_size;   /* end - begin */
} stg_index_shard_tensor;

typedef struct stg_index_shard_table {
    bool available; /* opened and its header passed schema: tensors below are real */
    const stg_index_shard_tensor *tensors;
    size_t count;
} stg_index_shard_table;

void stg_index_init(stg_index *ix);
void stg_index_release(stg_index *ix);

/* Stage 1 over the whole index file. Adds json_* / index_invalid / index_shard_path_unsafe /
 * limit_exceeded findings to r. Returns ix->ok. */
bool stg_index_parse(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r,
                     stg_index *ix);

/* true when name[0..len) is a plain file name that stays inside the index's folder: not empty,
 * not "." , no "..", no '/', '\\' or NUL, no drive prefix such as "C:". */
bool stg_index_shard_name_safe(const char *name, size_t len);

/* Stage 2. tables[i] describes ix->shards[i]. Adds index_tensor_missing (a mapped tensor its
 * available shard lacks), index_tensor_unlisted (a shard tensor the map does not name),
 * index_tensor_duplicate (a tensor held by two shards) and, when every shard is available,
 * index_total_size_mismatch. */
void stg_index_check_shards(const stg_index *ix, const stg_index_shard_table *tables,
                            const stg_limits *lim, stg_report *r);

#endif
