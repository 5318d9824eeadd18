/* NumPy .npy headers read as numpy.lib.format reads them: the magic, the version, the header
 * length, then a Python literal (ast.literal_eval) that must be a dict with exactly the keys
 * 'descr', 'fortran_order' and 'shape'; the descriptor is interpreted as descr_to_dtype and
 * numpy's dtype constructor do, far enough to know the item size and whether the type holds
 * Python objects (then numpy pickle.load-s the data). Anything this reader does not understand
 * is an error, never a guess. Nothing here allocates: literal nodes live in the caller's array.
 * No recursion: the literal parser keeps an explicit stack, the descriptor is evaluated in one
 * backward pass over the nodes (children come after their parent). */
#ifndef STG_PARSER_NPY_H
#define STG_PARSER_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "stguard/stguard.h"

/* The magic an .npy file starts with (NEP 1). */
#define STG_NPY_MAGIC "\x93NUMPY"
#define STG_NPY_MAGIC_LEN 6

#define STG_NPY_DEPTH_CEILING 4096u /* nesting of the header literal; max_json_depth applies */

typedef enum stg_pylit_kind {
    STG_PYLIT_STR = 1,
    STG_PYLIT_BYTES,
    STG_PYLIT_INT,
    STG_PYLIT_BOOL,
    STG_PYLIT_NONE,
    STG_PYLIT_TUPLE,
    STG_PYLIT_LIST,
    STG_PYLIT_DICT, /* children: key, value, key, value... */
    STG_PYLIT_PAREN /* a parenthesised value, not a tuple: its only child is the value */
} stg_pylit_kind;

/* One value of the literal. Parents come before their children (pre-order). */
typedef struct stg_pylit_node {
    uint8_t kind;
    bool raw;       /* string: r prefix (no escapes) */
    bool big;       /* int: outside int64 */
    uint32_t count; /* children */
    uint32_t next;  /* index of the first node after this subtree */
    size_t off;     /* string/bytes: first byte after the opening quote; else the token */
    size_t len;     /* string/bytes: body length; else token length */
    int64_t ival;   /* int, bool */
} stg_pylit_node;

/* What the descriptor means. */
typedef struct stg_npy_dtype {
    bool has_object;   /* numpy pickle.load-s the data */
    uint64_t itemsize; /* bytes per element (for object types, 8 per object slot) */
    bool ok;           /* evaluation scratch: the node is a descriptor numpy accepts */
    uint8_t flex_unit; /* evaluation scratch: 1 for S/a/V, 4 for U, else 0 */
    bool unnamed_void; /* evaluation scratch: numpy.void without fields (V types, subarrays) */
} stg_npy_dtype;

typedef struct stg_npy_header {
    uint8_t major, minor;
    size_t dict_offset, dict_len; /* the header literal */
    size_t data_offset;           /* first data byte */
    bool fortran_order;
    uint32_t ndim;
    bool count_known; /* false: a dimension is negative or the product passes 2^64 */
    uint64_t count;   /* product of the dimensions (1 for shape ()) */
    stg_npy_dtype dtype;
    size_t descr_node, shape_node; /* the values of 'descr' and 'shape' in the caller's nodes */
} stg_npy_header;

/* Why stg_npy_read failed: offset (absolute in buf), a constant sentence, and for limit
 * failures the limit's name. */
/* Where and why a read failed: the parser detail (parser/status.h: offset, what, limit, and as
 * reason STG_NPY_E_NODES when the caller's node array, not a limit, was too small). */
typedef stg_parse_detail stg_npy_error;
enum { STG_NPY_E_NODES = 1 };

/* Limits the reader takes from stg_limits: max_header_len (header bytes), max_json_depth
 * (literal nesting, at most STG_NPY_DEPTH_CEILING), max_metadata_entries (literal values). */
typedef struct stg_npy_limits {
    uint64_t max_header_len;
    uint32_t max_depth;
    uint32_t max_nodes;
} stg_npy_limits;

/* Parses a Python literal text[0..len) into nodes[0..cap); *count gets the number used.
 * Offsets in nodes and in *err are text offsets plus base. latin1: the text is decoded as
 * latin-1 (npy 1.0/2.0) rather than UTF-8 (3.0); py2_long: an int may be followed by an `L`
 * name (numpy's _filter_header drops it for 1.0/2.0). Returns STG_PARSE_OK, STG_PARSE_MALFORMED (syntax,
 * or something literal_eval accepts that this parser does not: sets, floats, implicit string
 * concatenation, triple quotes) or STG_PARSE_LIMIT (*err's limit: max_json_depth for the nesting;
 * max_metadata_entries, with reason STG_NPY_E_NODES, for more than cap nodes). */
stg_parse_status stg_pylit_parse(const uint8_t *text, size_t len, size_t base, bool latin1,
                                 bool py2_long, uint32_t max_depth, stg_pylit_node *nodes,
                                 size_t cap, size_t *count, stg_npy_error *err);

/* Decodes the string node n of src (src is the text the offsets count in) into out[0..cap)
 * as UTF-8; false when it does not fit or holds a \N{...} escape (its value is unknown here). */
bool stg_pylit_str(const uint8_t *src, const stg_pylit_node *n, bool latin1, uint8_t *out,
                   size_t cap, size_t *out_len);

/* A dtype string as numpy.dtype(str) reads it ('<f4', '|O', 'object', 'M8[ns]', 'U5'...).
 * false for anything not understood (comma lists, '(2,)i4' shapes, repeat counts...).
 * *flex_unit is 1 for S/a/V, 4 for U (their size may come from a subarray int), else 0. */
bool stg_npy_typestr(const uint8_t *s, size_t n, stg_npy_dtype *out, unsigned *flex_unit);

/* Interprets nodes[root] as a descriptor (numpy.lib.format.descr_to_dtype): a dtype string, a
 * (descr, shape) tuple or a list of (name, descr[, shape]) fields, nested to any depth. `scratch`
 * holds one stg_npy_dtype per node (cap >= count). */
stg_parse_status stg_npy_descr(const uint8_t *src, const stg_pylit_node *nodes, size_t count,
                               size_t root, bool latin1, stg_npy_dtype *scratch, stg_npy_dtype *out,
                               stg_npy_error *err);

/* Reads the .npy prefix of buf: magic, version 1.0-3.x, header length, the header dict and its
 * descriptor. nodes/scratch: caller arrays of `cap` entries (stg_npy_nodes_needed). */
stg_parse_status stg_npy_read(const uint8_t *buf, size_t len, const stg_npy_limits *lim,
                              stg_pylit_node *nodes, stg_npy_dtype *scratch, size_t cap,
                              stg_npy_header *out, stg_npy_error *err);

/* Nodes a header of buf can need at most: min(header length + 1, lim->max_nodes + 1); 0 when
 * buf is no .npy with a complete header length. */
size_t stg_npy_nodes_needed(const uint8_t *buf, size_t len, const stg_npy_limits *lim);

#endif
