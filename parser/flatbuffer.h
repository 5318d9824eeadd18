/* A bounded FlatBuffers walker (internal; docs/flatbuffers.md): tables, vtables, scalars,
 * vectors, strings and unions of a FlatBuffers binary, read through the cursor. Every offset is
 * checked against the buffer before it is followed (tables and vtables aligned and inside the
 * buffer, every field inside the buffer, vectors and strings inside the buffer, strings
 * NUL-terminated), so no position it hands back leaves the buffer. Offsets to tables, vectors
 * and strings point forward only (FlatBuffers' uoffset is unsigned), so no walk cycles; a DAG of
 * shared offsets (a "bomb" that makes one table reachable a billion ways) is bounded by a total
 * count of visits, and a nesting depth is bounded too. It knows no schema: the TFLite and
 * ExecuTorch rules (validator/tflite.c, validator/executorch.c) say which fields to read.
 *
 * Failure is sticky: the first failure is kept in the walker's status and detail (offset and
 * a constant text), and every later call returns it, so a rule may read several fields and
 * check once. */
#ifndef STG_PARSER_FLATBUFFER_H
#define STG_PARSER_FLATBUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Hard ceilings: tables nested deeper than this, or more visits (tables entered, vector
 * elements and strings read) than this, stop the walk with STG_PARSE_LIMIT. A file's own visit
 * budget is smaller (stg_fb_visit_budget). */
#define STG_FB_DEPTH_CEILING 64u
#define STG_FB_VISITS_CEILING ((uint64_t)1 << 26)

/* The walker: the buffer, the visits left, the first failure. */
typedef struct stg_fb {
    const uint8_t *buf;
    size_t len;
    uint64_t visits_left;
    stg_parse_status status;
    stg_parse_detail detail;
} stg_fb;

/* A table whose vtable was checked: its position, its vtable's, their sizes, its depth. */
typedef struct stg_fb_table {
    size_t pos, vtable;
    uint16_t vtable_len, table_len;
    unsigned depth;
} stg_fb_table;

/* A vector whose extent was checked: the first element's position, the count, the size of an
 * element, and the depth of the table holding it. */
typedef struct stg_fb_vec {
    size_t data;
    uint32_t count;
    size_t elem;
    unsigned depth;
} stg_fb_vec;

/* A string: its bytes (inside the buffer, NUL after them) and the position of its length. */
typedef struct stg_fb_str {
    const uint8_t *bytes;
    uint32_t len;
    size_t pos;
} stg_fb_str;

/* A budget of visits for a buffer of len bytes: every table is at least 4 bytes and read once
 * by a walk of a tree, and every vector element read is at least 1 byte, so a file that shares
 * no offsets needs fewer visits than 4096 + len; past it the walk stops (STG_PARSE_LIMIT). */
uint64_t stg_fb_visit_budget(size_t len);

void stg_fb_init(stg_fb *fb, const uint8_t *buf, size_t len, uint64_t max_visits);

/* The root table: the uoffset at position 0 of the buffer. */
stg_parse_status stg_fb_root(stg_fb *fb, stg_fb_table *out);

/* Field `id` of table t as a scalar of `width` bytes (1, 2, 4 or 8), little-endian, zero-
 * extended; def when the field is absent. */
stg_parse_status stg_fb_scalar(stg_fb *fb, const stg_fb_table *t, unsigned id, size_t width,
                               uint64_t def, uint64_t *out);
/* Field `id` as a table; *present false (and no failure) when the field is absent. */
stg_parse_status stg_fb_table_field(stg_fb *fb, const stg_fb_table *t, unsigned id,
                                    stg_fb_table *out, bool *present);
/* Field `id` as a vector of elements of elem bytes (a vector of tables or strings: 4); an
 * absent field is an empty vector. */
stg_parse_status stg_fb_vector(stg_fb *fb, const stg_fb_table *t, unsigned id, size_t elem,
                               stg_fb_vec *out);
/* Field `id` as a string; *present false when absent. */
stg_parse_status stg_fb_string(stg_fb *fb, const stg_fb_table *t, unsigned id, stg_fb_str *out,
                               bool *present);
/* A union: its type (field type_id, a ubyte; 0 = NONE) and, when the type is not NONE, its
 * value table (field type_id + 1, which must then be present). */
stg_parse_status stg_fb_union(stg_fb *fb, const stg_fb_table *t, unsigned type_id, uint8_t *type,
                              stg_fb_table *value);

/* Element i (< v->count) of a vector of tables. */
stg_parse_status stg_fb_vec_table(stg_fb *fb, const stg_fb_vec *v, uint32_t i, stg_fb_table *out);
/* Element i of a vector of scalars (v->elem bytes each, zero-extended). */
stg_parse_status stg_fb_vec_scalar(stg_fb *fb, const stg_fb_vec *v, uint32_t i, uint64_t *out);
/* A scalar of width bytes at byte `at` of element i of a vector of structs (v->elem bytes
 * each). */
stg_parse_status stg_fb_vec_struct_field(stg_fb *fb, const stg_fb_vec *v, uint32_t i, size_t at,
                                         size_t width, uint64_t *out);

#endif
