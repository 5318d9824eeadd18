/* GGUF rules (internal API; docs/gguf.md): parser/gguf.h's structure -> findings, in the strict
 * or the compat reading of lim->profile. Pure: no I/O. */
#ifndef STG_VALIDATOR_GGUF_H
#define STG_VALIDATOR_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "../parser/gguf.h"
#include "report.h"
#include "stguard/stguard.h"

/* The GGUF limits that stg_limits has no field for (a static table for now; docs/gguf.md):
 * 64 MiB per string and 64 Mi elements per array (ggml's own caps), arrays nested at most 8
 * deep. general.alignment has no cap: ggml takes any power of two. */
#define STG_GGUF_MAX_STRING ((uint64_t)64 << 20)
#define STG_GGUF_MAX_ARRAY ((uint64_t)64 << 20)
#define STG_GGUF_MAX_ARRAY_DEPTH 8u
#define STG_GGUF_MAX_KEY_LEN 65535u  /* the spec: keys of at most 2^16 - 1 bytes */
#define STG_GGUF_MAX_TENSOR_NAME 63u /* ggml keeps names in 64 bytes with their NUL */

/* Fills the parser's limits from lim (max_tensors, max_metadata_entries, max_header_len,
 * max_memory) and the table above. The memory cap is max_memory, or, when that is 0,
 * 8 MiB + 8 x min(len, max_header_len). */
void stg_gguf_limits_from(const stg_limits *lim, size_t len, uint64_t hash_seed,
                          stg_gguf_limits *out);

/* Result of a check: what a later door (inspect, the mmap loader) needs. */
typedef struct stg_gguf_result {
    bool layout_ok;     /* no error finding: every tensor range below lies inside the file */
    uint32_t alignment; /* the alignment in force (32 when absent or invalid) */
    uint64_t data_start;
    uint64_t data_len;
} stg_gguf_result;

/**
 * Validates buf[0..len) as a GGUF file, adding findings to r.
 * @param lim        limits and profile; never NULL.
 * @param hash_seed  keys the duplicate tables (0: STG_HASH_SEED_DEFAULT).
 * @param f          receives the parsed structure (release it with stg_gguf_file_release);
 *                   NULL: released here.
 * @param res        may be NULL.
 * @return STG_OK when the check ran (read the report), STG_E_BAD_ARG for NULL arguments.
 */
stg_status stg_gguf_check(const uint8_t *buf, size_t len, const stg_limits *lim, uint64_t hash_seed,
                          stg_report *r, stg_gguf_file *f, stg_gguf_result *res);

#endif
