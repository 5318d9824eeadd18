/* A bounded pull reader of MessagePack (the msgpack spec, every type): one call gives the next
 * value (a container gives its header, then its elements, then a CLOSE item), so a caller
 * walks any nesting with no recursion; the reader's own stack is a fixed array, its depth
 * capped by the caller's limit under STG_MP_DEPTH_CEILING. Nothing is allocated.
 *
 * What is malformed here is what msgpack-python's unpacker refuses at the wire level: the
 * reserved byte 0xc1, a length or a value cut by the end of the buffer, a container count that
 * cannot fit in the bytes left (each element takes at least one byte, as the unpacker's own
 * max_array_len / max_map_len defaults say). Rules on values (UTF-8 keys, ext payloads, trailing
 * bytes) are the caller's: validator/flax.c. */
#ifndef STG_PARSER_MSGPACK_H
#define STG_PARSER_MSGPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cursor.h"

/* msgpack-python's unpacker stack holds 1024 open containers; a 1025th is StackError. */
#define STG_MP_DEPTH_CEILING 1024u

typedef enum stg_mp_kind {
    STG_MP_NIL = 0,
    STG_MP_BOOL,
    STG_MP_UINT, /* positive fixint, uint 8..64 (and a non-negative int 8..64) */
    STG_MP_INT,  /* a negative fixint or int 8..64 below zero */
    STG_MP_FLOAT,
    STG_MP_STR,
    STG_MP_BIN,
    STG_MP_ARRAY,
    STG_MP_MAP,
    STG_MP_EXT,
    STG_MP_CLOSE /* the end of the innermost open array or map */
} stg_mp_kind;

typedef enum stg_mp_status {
    STG_MP_OK = 0,
    STG_MP_DONE,        /* the top-level value is complete: nothing more is read */
    STG_MP_E_TRUNCATED, /* a length, a value or a payload runs past the end */
    STG_MP_E_RESERVED,  /* the byte 0xc1, which the spec never uses */
    STG_MP_E_COUNT,     /* an array or map count that cannot fit in the bytes left */
    STG_MP_E_DEPTH,     /* containers nested deeper than the limit */
    STG_MP_E_LIMIT      /* a count over max_count, or a str/bin/ext over max_len */
} stg_mp_status;

typedef struct stg_mp_limits {
    uint32_t max_depth; /* open containers at once; clamped to STG_MP_DEPTH_CEILING */
    uint64_t max_count; /* elements of one array, pairs of one map */
    uint64_t max_len;   /* bytes of one str, bin or ext payload */
} stg_mp_limits;

typedef struct stg_mp_item {
    stg_mp_kind kind;
    uint64_t offset;     /* absolute offset of the type byte (CLOSE: of the byte after the end) */
    uint32_t depth;      /* containers around the item: 0 = the top-level value */
    bool key;            /* the item is a map key */
    bool b;              /* BOOL */
    uint64_t u;          /* UINT */
    int64_t i;           /* INT */
    double f;            /* FLOAT (a float 32 widened) */
    uint64_t count;      /* ARRAY: elements; MAP: pairs */
    int8_t ext_type;     /* EXT */
    const uint8_t *data; /* STR, BIN, EXT: the payload (inside the buffer) */
    size_t len;
    uint64_t data_offset; /* absolute offset of data */
} stg_mp_item;

typedef struct stg_mp_frame {
    uint64_t left; /* values still to come (a map counts its keys and its values) */
    bool map;
} stg_mp_frame;

typedef struct stg_mp_reader {
    stg_cursor cur;
    stg_mp_limits lim;
    uint32_t depth;
    bool done;
    stg_mp_status failed; /* STG_MP_OK, or the error every later call returns */
    uint64_t err_at;      /* after an error: the offset of the byte that made it */
    stg_mp_frame stack[STG_MP_DEPTH_CEILING];
} stg_mp_reader;

/* A reader of one value from c's window (its end is the end of what may be read). */
void stg_mp_init(stg_mp_reader *r, stg_cursor c, const stg_mp_limits *lim);

/* The next item, STG_MP_DONE once the top-level value is complete (r->cur.pos is then the
 * offset after it: what follows is the caller's), or an error (r->err_at says where; the
 * reader then stays in error). */
stg_mp_status stg_mp_next(stg_mp_reader *r, stg_mp_item *it);

/* "a length or value past the end", ... for findings. */
const char *stg_mp_status_text(stg_mp_status s);

/* "str", "map", ... */
const char *stg_mp_kind_name(stg_mp_kind k);

#endif
