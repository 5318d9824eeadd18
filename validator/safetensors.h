/* Safetensors rules (internal API), split in stages so every door (buffer, stream, mmap, index)
 * runs the same code:
 *   1. frame   the first 8 bytes and the total length           (header.c)
 *   2. header  JSON + schema of the n header bytes -> tensor table (header.c)
 *   3. layout  table + data section length -> range/overlap/coverage/alignment (layout.c)
 * Checks that depend on an earlier failure are skipped (docs/findings.md). */
#ifndef STG_VALIDATOR_SAFETENSORS_H
#define STG_VALIDATOR_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/arena.h"
#include "ctx.h"
#include "report.h"
#include "stguard/stguard.h"

/* One tensor record, 24 bytes: what the layout stage needs, and where to find the rest in the
 * header bytes (which outlive the table). The name is the key token's content when it has no
 * escapes (found again from key_pos); escaped names, data_offsets tokens far from their key and
 * entries whose size check failed have a side record (stg_st_rare, flag STG_ST_RARE). Shapes
 * are kept only when a door asks for public views (stg_st_header.want_public). */
typedef struct stg_st_tensor {
    uint64_t begin, end; /* data_offsets */
    uint32_t key_pos;    /* header position of the tensor's key token (its opening quote) */
    uint32_t info;       /* dtype (STG_ST_DTYPE_MASK), flags, and above STG_ST_DELTA_SHIFT the
                            data_offsets token's position minus key_pos (0: in the side record) */
} stg_st_tensor;

#define STG_ST_DTYPE_MASK 0x1fu /* stg_dtype values 0..21 */
#define STG_ST_RARE 0x20u       /* a side record exists (by key_pos) */
#define STG_ST_SUPERSEDED 0x40u /* a later entry of the same name replaced it (compat: last wins) */
#define STG_ST_SIZE_ISSUE 0x80u /* offsets, shape and dtype disagree (reported by stage 2) */
#define STG_ST_DELTA_SHIFT 8u
#define STG_ST_DELTA_MAX 0xffffffu

/* Side record of a tensor with an escaped name, a far data_offsets token or a size issue, in
 * key_pos order (file order). */
typedef struct stg_st_rare {
    uint32_t key_pos;
    uint32_t offsets_pos; /* header position of the data_offsets token */
    uint32_t shape_pos;   /* header position of the shape token (size issues) */
    uint8_t issue;        /* 0, or which size check failed (header.c) */
    uint64_t value;       /* element count (sub-byte issue) or the byte size (mismatch) */
    const char *name;     /* decoded name in the arena, NULL when the name has no escapes */
    size_t name_len;
} stg_st_rare;

/* A tensor's shape, kept when want_public (parallel to `tensors`). */
typedef struct stg_st_shape {
    const uint64_t *dims; /* in the arena */
    uint32_t rank;
} stg_st_shape;

typedef struct stg_st_meta {
    const char *key;
    size_t key_len;
    const char *value;
    size_t value_len;
} stg_st_meta;

typedef struct stg_st_header {
    stg_arena arena;        /* everything below lives here; capped by max_memory */
    uint64_t header_len;    /* n */
    uint64_t data_start;    /* 8 + n */
    const uint8_t *hdr;     /* the n header bytes the records point into */
    stg_st_tensor *tensors; /* file order after stage 2; (begin, end) order after stage 3 */
    size_t tensor_count;
    stg_st_rare *rare; /* side records, key_pos order */
    size_t rare_count;
    uint64_t hash_seed;    /* set before stage 2: keys the duplicate check's hash (parser/hash.h;
                              0: the fixed default) */
    bool want_public;      /* set before stage 2: keep shapes and publish `pub` after stage 3 */
    stg_arena pub_arena;   /* want_public: shapes and views, apart from `arena` so that every
                             door's budgeted use (and so every limit finding) is the buffer's */
    stg_st_shape *shapes;  /* want_public: parallel to `tensors` */
    stg_tensor *pub;       /* want_public: public views in `tensors` order, built by stage 3 */
    char *pub_names;       /* want_public: the views' NUL-terminated names, reserved by stage 2
                              (a name plus one byte each: at most the header's length) */
    stg_st_meta *metadata; /* `__metadata__` entries in file order */
    size_t metadata_count;
    bool schema_ok;             /* stages 1-2 found no error: stage 3 may run */
    bool layout_ok;             /* stage 3 found no error */
    bool data_order;            /* stage 2 saw every record's (begin, end) strictly above the one
                                  before (writers' order): stage 3 need not check the order */
    size_t tensors_cap_bytes;   /* bytes of `tensors` charged to `arena` */
    size_t tensors_space_bytes; /* bytes allocated for `tensors` (>= the charge: address space
                                   reserved by stage 2, touched only as records fill it) */
    size_t metadata_cap_bytes;  /* bytes reserved for `metadata` (charged to `arena`) */
    size_t rare_cap_bytes;      /* the same for `rare`, `shapes` and `pub` */
    size_t shapes_cap_bytes;
    size_t pub_cap_bytes;
} stg_st_header;

/* Result of framing. */
typedef enum stg_st_frame {
    STG_ST_FRAME_OK = 0,    /* header_len valid and (if total known) fully present */
    STG_ST_FRAME_NEED_MORE, /* fewer than 8 bytes and total not known yet (streams) */
    STG_ST_FRAME_FAILED     /* a framing finding was added */
} stg_st_frame;

#define STG_ST_TOTAL_UNKNOWN UINT64_MAX

/* Stage 1. `first` holds min(avail, 8) leading bytes; `total` is the whole input length, or
 * STG_ST_TOTAL_UNKNOWN while a stream is still arriving (then only the header length cap is
 * checked; call again with the total when it is known). */
stg_st_frame stg_st_check_frame(const uint8_t *first, size_t avail, uint64_t total,
                                const stg_limits *lim, stg_report *r, uint64_t *header_len);

/* Stage 2 over the n header bytes (file offset 8). Fills h (initialise with
 * stg_st_header_init). Returns h->schema_ok. */
bool stg_st_parse_header(const uint8_t *hdr, uint64_t n, const stg_limits *lim, stg_report *r,
                         stg_st_header *h);

/* Stage 3 for a data section of data_len bytes. Sorts h->tensors by (begin, end). */
void stg_st_check_layout(stg_st_header *h, uint64_t data_len, const stg_limits *lim, stg_report *r);

typedef struct stg_st_door stg_st_door;

struct stg_st_door {
    const uint8_t *first; /* the leading min(first_len, 8) bytes */
    size_t first_len;
    uint64_t total; /* the whole input's length */
    /* The n header bytes at offset 8, in memory that lives as long as h (names point into
     * it); NULL stops the pipeline (the door recorded why). NULL callback: `parsed`. */
    const uint8_t *(*header)(stg_st_door *d, uint64_t n);
    /* true: stage 2 already ran as the bytes arrived (a stream): h holds its result. */
    bool parsed;
    /* true: framing already failed as the bytes arrived (a stream that stopped early): the
     * stages are not run again. */
    bool frame_failed;
    /* The bytes the polyglot checks read (the whole input, or an image of it), *len set;
     * NULL with *len = 0: none to check; *stop set: stop the pipeline (the door recorded
     * why). NULL callback: `polyglot` runs instead. */
    const uint8_t *(*image)(stg_st_door *d, size_t *len, bool *stop);
    /* The door's own polyglot checks (a stream keeps only windows of its bytes); false:
     * memory failed. */
    bool (*polyglot)(stg_st_door *d, stg_check_ctx *ctx);
    void *state; /* the door's */
};

/* Stages 1-3 as a door's bytes arrive: frame (first, total), header (d->header, or h as
 * parsed), layout. false when d->header stopped it. */
bool stg_st_stages(stg_st_door *d, const stg_limits *lim, stg_report *r, stg_st_header *h);

/* All three stages over a whole buffer (stg_st_stages with the buffer as its door). h may be NULL (then the table is released). */
void stg_st_validate(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r,
                     stg_st_header *h);

void stg_st_header_init(stg_st_header *h);
void stg_st_header_release(stg_st_header *h);

/* A record's fields that live elsewhere: its name (in the header bytes or decoded in the
 * arena), dtype, and the file offsets of its key and data_offsets tokens. */
void stg_st_name(const stg_st_header *h, const stg_st_tensor *t, const char **name, size_t *len);
static inline stg_dtype stg_st_dtype(const stg_st_tensor *t)
{
    return (stg_dtype)(t->info & STG_ST_DTYPE_MASK);
}
static inline uint64_t stg_st_name_offset(const stg_st_tensor *t)
{
    return (uint64_t)t->key_pos + 8u;
}
uint64_t stg_st_offsets_offset(const stg_st_header *h, const stg_st_tensor *t);
/* The side record of t (t->info has STG_ST_RARE), else NULL. */
const stg_st_rare *stg_st_rare_of(const stg_st_header *h, const stg_st_tensor *t);

/* Memory budget for a header of n bytes: max_memory, or 16n + 8 MiB when it is 0. */
uint64_t stg_st_memory_budget(const stg_limits *lim, uint64_t n);

#endif
