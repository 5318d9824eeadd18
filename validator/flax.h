/* Flax checkpoints (internal API; docs/flax.md): a msgpack document as flax.serialization's
 * msgpack_serialize writes it (a tree of maps whose leaves are arrays in msgpack extension
 * types), read with parser/msgpack.h and checked as msgpack_restore would decode it. Pure: no
 * I/O. */
#ifndef STG_VALIDATOR_FLAX_H
#define STG_VALIDATOR_FLAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* flax.serialization's _MsgpackExtType: the extension codes its reader decodes. */
#define STG_FLAX_EXT_NDARRAY 1
#define STG_FLAX_EXT_COMPLEX 2
#define STG_FLAX_EXT_NPSCALAR 3

/* The deepest array payload (shape, dtype name, buffer) read: the tuple and its shape list. */
#define STG_FLAX_PAYLOAD_DEPTH 2u
/* numpy 1.x's NPY_MAXDIMS: reshape refuses a 33rd dimension. */
#define STG_FLAX_MAX_RANK 32u
/* The longest path of keys a finding or the visitor renders; longer paths keep their end. */
#define STG_FLAX_PATH_MAX 1024u

/* One array leaf as the tree walk meets it, for an inspect view or a test. */
typedef struct stg_flax_leaf {
    const char *path; /* the keys from the root, '/'-joined (NUL-terminated; cut to
                         STG_FLAX_PATH_MAX keeping the end) */
    size_t path_len;
    const char *dtype; /* the dtype name as written (not NUL-terminated) */
    size_t dtype_len;
    uint32_t rank;
    uint64_t shape[STG_FLAX_MAX_RANK];
    uint64_t offset; /* of the extension value */
    uint64_t nbytes; /* the buffer's length */
    int8_t ext;      /* STG_FLAX_EXT_NDARRAY or STG_FLAX_EXT_NPSCALAR */
} stg_flax_leaf;

typedef void (*stg_flax_visit)(void *arg, const stg_flax_leaf *leaf);

/**
 * Validates buf[0..len) as a Flax msgpack checkpoint, adding findings to r.
 * @param visit  called for every well-formed array leaf, in file order (may be NULL).
 * @return STG_OK when the check ran (read the report), STG_E_NOMEM when memory was refused
 *         (the report then fails closed), STG_E_BAD_ARG for NULL arguments.
 */
stg_status stg_flax_check(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r,
                          stg_flax_visit visit, void *arg);

/* true when buf is a msgpack map at the top, with at least one entry and only UTF-8 string
 * keys, that reads to exactly its end: a Flax state dict by content, whatever its name. *oom
 * (may be NULL) is set when the reader's memory was refused (the answer is then false). */
bool stg_flax_sniff(const uint8_t *buf, size_t len, bool *oom);

/* The byte size of one element of a dtype name flax's writer gives (numpy's dtype.name of a
 * numeric type, and JAX's bfloat16), 0 for any other name. */
uint32_t stg_flax_dtype_size(const uint8_t *name, size_t len);

#endif
