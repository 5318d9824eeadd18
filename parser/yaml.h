/* A bounded reader of a YAML subset (docs/yaml.md): what configs (hydra, OmegaConf, NeMo's
 * model_config.yaml) are written in, read into a flat tree of nodes, never by recursion.
 *
 * Read: one document (an optional `---` first, an optional `...` last), block mappings and
 * sequences by indentation (spaces only), sequences indented or not under a key, compact
 * `- key: value` items, flow collections `[...]` and `{...}` (over several lines too), plain
 * scalars on one line, single- and double-quoted scalars on one line (every escape YAML 1.1
 * defines), literal `|` and folded `>` block scalars with `-`/`+` chomping, comments, anchors
 * on values (`key: &a ...`, `- &a ...`, inside flows) and aliases (`*a`), bounded: an alias
 * copies the anchored subtree into the tree (as a composer hands it on), so every expansion
 * counts against the node limit and a billion-laughs document stops there.
 *
 * Refused as unsupported (STG_YAML_E_UNSUPPORTED: valid YAML perhaps, but not read here):
 * anchors elsewhere (on a key, on a line of their own), recursive aliases, tags (`!x`), complex keys (`?`), directives (`%`), several
 * documents, plain or quoted scalars over several lines, block scalars with an explicit
 * indentation digit or more-indented folded lines, single-pair mappings inside flow sequences,
 * characters YAML 1.1 takes as line breaks (U+0085, U+2028, U+2029, a lone CR), a BOM past the
 * start, keys longer than 1024 bytes. Refused as malformed (STG_YAML_E_SYNTAX): what YAML
 * itself refuses (bad indentation, an unclosed quote or flow collection, a tab in indentation,
 * control characters, invalid UTF-8, `key: a: b`, a sequence entry where a key is due).
 *
 * The tree: nodes in document order; a collection's children follow it up to its `end`; a
 * mapping's children alternate key, value. Scalars carry their decoded bytes (plain ones point
 * into the input). No type is resolved: `yes`, `1.5` and `null` are their text, as a YAML
 * composer's scalar nodes hold them (an empty value is an empty plain scalar). */
#ifndef STG_PARSER_YAML_H
#define STG_PARSER_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

#define STG_YAML_DEPTH_CEILING 256u     /* nesting of collections, block and flow */
#define STG_YAML_NODES_CEILING 4000000u /* nodes of one document */
#define STG_YAML_KEY_MAX 1024u          /* YAML's own bound on a simple key */
#define STG_YAML_ANCHORS_CEILING 256u   /* anchors of one document */
#define STG_YAML_ALIASES_CEILING 65536u /* aliases of one document (each copies its subtree) */

typedef enum stg_yaml_kind {
    STG_YAML_SCALAR = 1,
    STG_YAML_MAP = 2,
    STG_YAML_SEQ = 3
} stg_yaml_kind;

typedef enum stg_yaml_style {
    STG_YAML_PLAIN = 0,
    STG_YAML_SINGLE = 1,
    STG_YAML_DOUBLE = 2,
    STG_YAML_LITERAL = 3,
    STG_YAML_FOLDED = 4,
    STG_YAML_FLOW = 5 /* a flow collection */
} stg_yaml_style;

typedef struct stg_yaml_node {
    uint8_t kind;       /* stg_yaml_kind */
    uint8_t style;      /* stg_yaml_style */
    uint32_t end;       /* index just past this node's subtree */
    size_t offset;      /* first byte of its token (the quote, the '|', the '[', the first key) */
    const uint8_t *str; /* scalars: decoded value (not NUL-terminated; may hold NUL) */
    size_t str_len;
} stg_yaml_node;

typedef enum stg_yaml_status {
    STG_YAML_OK = 0,
    STG_YAML_E_SYNTAX = 1,      /* not YAML */
    STG_YAML_E_UNSUPPORTED = 2, /* outside the subset */
    STG_YAML_E_DEPTH = 3,       /* deeper than max_depth */
    STG_YAML_E_NODES = 4,       /* more nodes than max_nodes */
    STG_YAML_E_MEMORY = 5       /* the arena's budget was exhausted */
} stg_yaml_status;

typedef struct stg_yaml_doc {
    stg_yaml_node *nodes; /* in the arena; nodes[0] is the root (count 0: an empty document) */
    size_t count;
    stg_yaml_status status;
    size_t error_offset;    /* the byte that cannot continue (status != OK) */
    const char *error_what; /* constant text: what was refused */
    size_t nodes_cap_bytes; /* private: the node buffer's size (stg_yaml_release frees it) */
} stg_yaml_doc;

/* Reads buf[0..len) into doc (memory from arena). max_depth is clamped to
 * STG_YAML_DEPTH_CEILING (0 means 1), max_nodes to STG_YAML_NODES_CEILING. Returns doc->status;
 * on an error the nodes read so far stay in doc (not a complete tree). */
stg_yaml_status stg_yaml_parse(const uint8_t *buf, size_t len, uint32_t max_depth, size_t max_nodes,
                               stg_arena *arena, stg_yaml_doc *doc);

/* Frees the node buffer (a grown buffer of the arena: stg_arena_release alone keeps it). */
void stg_yaml_release(stg_yaml_doc *doc, stg_arena *arena);

/* The index of the child after `child` inside the collection node `parent` (first child:
 * pass parent + 1 ... use stg_yaml_first_child), or doc->count when none is left. */
static inline size_t stg_yaml_first_child(const stg_yaml_doc *doc, size_t parent)
{
    return parent + 1 < doc->nodes[parent].end ? parent + 1 : doc->count;
}

static inline size_t stg_yaml_next_child(const stg_yaml_doc *doc, size_t parent, size_t child)
{
    size_t next = doc->nodes[child].end;
    return next < doc->nodes[parent].end ? next : doc->count;
}

/* true when node i is a scalar whose decoded value is exactly s (NUL-terminated). */
bool stg_yaml_scalar_is(const stg_yaml_doc *doc, size_t i, const char *s);

#endif
