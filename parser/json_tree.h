/* A whole JSON document as a tree of nodes, for the small documents read as records rather
 * than streamed (a signature bundle and the statement inside it). Built from parser/json.c's
 * events, so it is exactly as strict (RFC 8259, strict UTF-8, duplicate keys found); nodes live
 * in one buffer charged to the caller's arena, strings are decoded into the arena (or point into
 * the input when they hold no escape), and the node count has a cap, so the memory is bounded by
 * the arena's budget whatever the input. Children are linked by index: a member lookup walks one
 * object's members, so looking up a fixed set of names costs O(members). */
#ifndef STG_PARSER_JSON_TREE_H
#define STG_PARSER_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "json.h"

#define STG_JT_NONE UINT32_MAX
#define STG_JT_NODES_CEILING ((size_t)1 << 24) /* max_nodes values above this are clamped */

typedef struct stg_jt_node {
    stg_json_type type; /* OBJECT_BEGIN, ARRAY_BEGIN, STRING, NUMBER, TRUE, FALSE or NULL */
    size_t offset;      /* the value's first byte in the input */
    size_t key_offset;  /* a member's name: its opening quote (0 outside objects) */
    const uint8_t *key; /* a member's decoded name (NULL outside objects) */
    size_t key_len;
    const uint8_t *str; /* STRING: the decoded value */
    size_t str_len;
    bool is_uint; /* NUMBER: digits only and below 2^64; then uint_value holds it */
    uint64_t uint_value;
    uint32_t first_child, next_sibling, child_count;
} stg_jt_node;

typedef struct stg_jt {
    stg_jt_node *nodes; /* nodes[0] is the top-level value */
    size_t count, cap_bytes;
    stg_arena *arena;
} stg_jt;

typedef enum stg_jt_status {
    STG_JT_OK = 0,
    STG_JT_SYNTAX = 1,    /* not RFC 8259 JSON (or invalid UTF-8): error_offset says where */
    STG_JT_DUPLICATE = 2, /* a repeated member name: the repeat's offset */
    STG_JT_DEPTH = 3,     /* nested deeper than max_depth */
    STG_JT_NODES = 4,     /* more than max_nodes values */
    STG_JT_MEMORY = 5,    /* the arena's budget is spent */
    STG_JT_TRAILING = 6   /* bytes other than whitespace after the top-level value */
} stg_jt_status;

/* Parses buf[0..len) whole. On STG_JT_OK *out holds the tree (release with stg_jt_release or
 * with the arena); otherwise *err_offset is where it failed and *out holds nothing. */
stg_jt_status stg_jt_parse(const uint8_t *buf, size_t len, uint32_t max_depth, size_t max_nodes,
                           stg_arena *arena, stg_jt *out, size_t *err_offset);

/* The node at index i (i < count), or NULL for STG_JT_NONE. */
const stg_jt_node *stg_jt_at(const stg_jt *t, uint32_t i);

/* The member of obj named key (NUL-terminated, compared with the decoded name), or NULL when
 * obj is not an object or has none. */
const stg_jt_node *stg_jt_member(const stg_jt *t, const stg_jt_node *obj, const char *key);

/* true when the string node n equals the NUL-terminated s byte for byte. */
bool stg_jt_str_is(const stg_jt_node *n, const char *s);

void stg_jt_release(stg_jt *t);

#endif
