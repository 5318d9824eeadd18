/* The converter's output: which tensors of the evaluated checkpoint are written (selection,
 * non-tensor leaves, exact aliases), in which order and under which header (as the reference
 * writer: __metadata__ {"format":"pt"}, entries by dtype size then name, contiguous data, the
 * header padded with spaces to a multiple of 8), and the data streamed to a sink through one
 * bounded buffer: memory is the plan (names and header), not the tensors' bytes. */
#ifndef STG_CONVERT_WRITE_H
#define STG_CONVERT_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../validator/report.h"
#include "eval.h"

typedef struct stg_cv_select {
    const char *select; /* NULL: the top-level mapping */
    bool drop_aliases;
    bool strict_leaves;
    uint64_t max_header_len;
} stg_cv_select;

typedef struct stg_cv_entry {
    const uint8_t *name;
    size_t name_len;
    const stg_cv_tensor *t;
    uint64_t nbytes;
    uint64_t begin;                      /* in the data section */
    const struct stg_cv_entry *alias_of; /* dropped: the entry kept in its place */
} stg_cv_entry;

typedef struct stg_cv_plan {
    stg_cv_entry *entries;
    size_t count;    /* entries (dropped ones too) */
    size_t *order;   /* written entries, in data order */
    size_t written;  /* entries in order */
    uint8_t *header; /* 8-byte length prefix + padded JSON */
    size_t header_len;
    uint64_t data_len;
} stg_cv_plan;

/* Bytes out: returns STG_OK or the failure (STG_E_IO, STG_E_LIMIT ...). */
typedef struct stg_cv_sink {
    stg_status (*write)(void *ctx, const uint8_t *p, size_t n);
    /* may be NULL: the storage bytes [p, p + n) were read and will not be needed soon */
    void (*release)(void *ctx, const uint8_t *p, size_t n);
    void *ctx;
} stg_cv_sink;

/* Builds the plan from the checkpoint's top value. false: rep has the refusal. */
bool stg_cv_plan_build(const stg_cv *root, const stg_cv_select *sel, stg_cv_plan *p,
                       stg_report *rep);
/* Writes header and data (output size: header_len + data_len). */
stg_status stg_cv_plan_write(const stg_cv_plan *p, const stg_cv_sink *sink);
void stg_cv_plan_free(stg_cv_plan *p);

#endif
