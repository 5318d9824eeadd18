/* Pull parser for exactly RFC 8259 JSON with strict UTF-8 and no recursion.
 *
 * The caller asks for one event at a time. Containers are tracked on an explicit stack of at
 * most max_depth levels; memory comes from the caller's arena (the budget every validation has),
 * so parsing never allocates past that cap. Duplicate keys are found at every level when an
 * object closes (hash + sort: O(k log k) for k keys, immune to hash flooding because equal
 * hashes fall back to comparing the decoded keys), and reported as STG_JSON_DUPLICATE events just
 * before that object's OBJECT_END, one per repeat. What a profile does with them is the
 * validator's business.
 *
 * Whitespace before the top-level value is skipped (RFC 8259 allows it); after the top-level
 * value closes the parser stops and returns STG_JSON_END with `offset` just past the value; it
 * does not look at the bytes after it (the caller decides what may follow, see
 * stg_json_rest_is_ws). All offsets are positions in the buffer given to stg_json_init.
 *
 * Error offsets (stg_json_parser.error_offset) point at the first byte that cannot continue the
 * grammar: the unexpected byte, the lead byte of a bad UTF-8 sequence, the backslash of a bad or
 * lone-surrogate escape, the bracket that opens one level too many, the digit after a leading
 * zero; input that ends too early gives the input length. docs/json.md has the details, the
 * memory formula and the measured speed. */
#ifndef STG_PARSER_JSON_H
#define STG_PARSER_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

#define STG_JSON_DEPTH_CEILING 4096u /* max_depth values above this are clamped */
/* Inputs longer than this fail at once with STG_JSON_E_MEMORY at offset 0 (key records keep
 * 32-bit positions; a safetensors header is below it by its ceiling). */
#define STG_JSON_MAX_LEN ((size_t)UINT32_MAX)

typedef enum stg_json_type {
    STG_JSON_NONE = 0,
    STG_JSON_OBJECT_BEGIN = 1,
    STG_JSON_OBJECT_END = 2,
    STG_JSON_ARRAY_BEGIN = 3,
    STG_JSON_ARRAY_END = 4,
    STG_JSON_KEY = 5, /* an object member name; its value's events follow */
    STG_JSON_STRING = 6,
    STG_JSON_NUMBER = 7,
    STG_JSON_TRUE = 8,
    STG_JSON_FALSE = 9,
    STG_JSON_NULL = 10,
    STG_JSON_DUPLICATE = 11, /* a repeated key of the object about to close */
    STG_JSON_END = 12,       /* the top-level value is complete */
    STG_JSON_ERROR = 13      /* see stg_json_parser.error / error_offset; sticky */
} stg_json_type;

typedef enum stg_json_error {
    STG_JSON_E_NONE = 0,
    STG_JSON_E_SYNTAX = 1, /* not RFC 8259 (incl. truncated input) */
    STG_JSON_E_UTF8 = 2,   /* invalid UTF-8, overlong form, encoded surrogate, lone \u surrogate */
    STG_JSON_E_DEPTH = 3,  /* a container opened past max_depth */
    STG_JSON_E_MEMORY = 4, /* the arena budget was exhausted */
    STG_JSON_E_RANGE = 5   /* a number beyond the f64 range, with reject_f64_overflow set */
} stg_json_error;

typedef struct stg_json_event {
    stg_json_type type;
    size_t offset;  /* first byte of the token (the opening quote of strings and keys) */
    size_t len;     /* raw token length (strings and keys: quotes included) */
    uint32_t depth; /* containers open around this token (inside the top object: 1);
                             a container's BEGIN and END carry the depth around it, so the
                             top-level OBJECT_BEGIN has depth 0 and its keys depth 1 */
    /* STG_JSON_KEY, STG_JSON_STRING and STG_JSON_DUPLICATE (the repeated key) */
    const uint8_t *str; /* raw content between the quotes; escapes not decoded */
    size_t str_len;
    bool has_escapes; /* when false, str[0..str_len) is already the decoded value */
    /* STG_JSON_NUMBER */
    bool is_uint;        /* digits only: no sign, fraction or exponent (leading zeros are
                             already a syntax error) */
    bool uint_overflow;  /* is_uint and the value is >= 2^64 */
    uint64_t uint_value; /* valid when is_uint && !uint_overflow */
    /* STG_JSON_DUPLICATE: `offset` is the repeat's key, prev_offset the occurrence before it
     * (keys compare after decoding, so "a\u0062" repeats "ab"). Fields that do not apply to an
     * event's type are 0 / NULL / false. */
    size_t prev_offset;
} stg_json_event;

typedef struct stg_json_key stg_json_key; /* private: one open object's key record */
typedef struct stg_json_dup stg_json_dup; /* private: one pending duplicate (repeat, previous) */

/* The secret of the duplicate check's key hash, derived from a seed (stg_json_hash_key_init). */
typedef struct stg_json_hash_key {
    uint64_t start; /* the state before the first word */
    uint64_t mul;   /* odd */
} stg_json_hash_key;

typedef struct stg_json_parser {
    /* all fields private except error and error_offset */
    const uint8_t *buf;
    size_t len, pos;
    uint32_t max_depth, depth;
    uint8_t *kind;      /* [max_depth + 1]: '{' or '[' per open level */
    size_t *key_base;   /* [max_depth + 1]: index of each open object's first key */
    uint8_t *state;     /* [max_depth + 1]: what the parser expects next at each level */
    stg_json_key *keys; /* keys of all open objects, stack-like */
    size_t keys_count, keys_cap_bytes;
    stg_json_dup *pending; /* duplicates waiting to be handed out, then OBJECT_END; they live
                                 in `keys` or `sort_tmp`, whichever the sort left free */
    size_t pending_count, pending_next;
    stg_json_key *sort_tmp; /* scratch for sorting one closing object's keys by hash */
    size_t sort_tmp_cap_bytes;
    size_t close_offset; /* offset of the '}' whose events are pending */
    stg_arena *arena;
    int started, finished; /* finished: the top-level value is complete; started: unused */
    int slow;              /* next() leaves its fast path: finished, an error, or pending
                                 duplicates */
    stg_json_error error;
    size_t error_offset;
    /* Public, false after init: a number whose magnitude rounds to infinity as an f64 (correct
     * rounding: at least 2^1024 - 2^970) fails with STG_JSON_E_RANGE at its first byte, as
     * serde_json's "number out of range". RFC 8259 leaves number range to implementations. */
    bool reject_f64_overflow;
    stg_json_hash_key hash_key; /* from the seed (stg_json_set_seed; init: the default) */
    /* Inside stg_json_skip, a key spelled byte for byte as the last key recorded for its object
     * is a repeat of it whatever else the object holds: it is counted instead of recorded (one
     * object level at a time, elide_depth; 0: none), and only the first such repeat is kept,
     * as a DUPLICATE event to hand out at the object's close when no other repeat comes
     * before it (the skip reports the first repeat and counts the rest). */
    bool skipping;
    bool elide_emit;        /* at the close being handed out: the elided repeat comes first */
    bool elide_close;       /* a close is being handed out whose pending list may be empty */
    uint32_t elide_depth;   /* the object level whose repeats are elided */
    size_t elide_count;     /* repeats elided at elide_depth */
    uint32_t elide_offset;  /* the first of them */
    uint32_t elide_prev;    /* the key it repeats (the one just before it) */
    size_t elide_uncounted; /* elided repeats no event stands for, for stg_json_skip */
} stg_json_parser;

/* max_depth: the deepest container allowed (the top-level one is depth 1); 0 means 1. */
void stg_json_init(stg_json_parser *p, const uint8_t *buf, size_t len, uint32_t max_depth,
                   stg_arena *arena);

/* Keys the duplicate check's hash with a per-scan secret (parser/hash.h: loader/ draws it from
 * the OS; 0: STG_HASH_SEED_DEFAULT, what stg_json_init sets). Call before the first event. No
 * verdict depends on the seed: only the time a flood of keys of one hash costs. */
void stg_json_set_seed(stg_json_parser *p, uint64_t seed);

/* Next event. After STG_JSON_END or STG_JSON_ERROR, every call returns the same type again. */
stg_json_type stg_json_next(stg_json_parser *p, stg_json_event *ev);

/* After an OBJECT_BEGIN or ARRAY_BEGIN event: consumes events up to and including the matching
 * end (duplicate keys inside are still checked: their events are dropped, but `dup_count` is
 * increased when non-NULL, and `first_dup` gets the first one). Returns the type of the last
 * event: the END of that container, or STG_JSON_ERROR. For scalars it does nothing. */
stg_json_type stg_json_skip(stg_json_parser *p, const stg_json_event *begin, size_t *dup_count,
                            stg_json_event *first_dup);

/* Fast path for the common case, right after an ARRAY_BEGIN event: when the array holds only
 * plain unsigned integers (digits only, at most 19 of them, so no overflow is possible) and at
 * most `max` of them, stores them in out[0..*count), consumes the array up to and including its
 * ']' (as the NUMBER and ARRAY_END events would have) and returns true. Otherwise (anything
 * else in the array, malformed input, more than `max` elements, not just after an ARRAY_BEGIN)
 * it consumes nothing and returns false: the caller reads the same array event by event, and
 * gets every error and offset from there. */
bool stg_json_uint_array(stg_json_parser *p, uint64_t *out, size_t max, size_t *count);

/* The compact form of an object of three members: a string, then two arrays of unsigned
 * integers, under three fixed keys in a fixed order, written without whitespace or escapes
 * (what writers such as safetensors' produce for every tensor entry):
 *     {"K0":"S","K1":[u,u,...],"K2":[u,...]}
 * Built once by stg_json_compact_form_init from the keys, which must be distinct, 1 to 31
 * printable ASCII bytes without '"' or '\' (false otherwise: then no form is usable). */
#define STG_JSON_COMPACT_GLUE 48u
typedef struct stg_json_compact_form {
    uint8_t glue[3][STG_JSON_COMPACT_GLUE]; /* "K0":"   ","K1":[   ],"K2":[ */
    size_t glue_len[3];
} stg_json_compact_form;

typedef struct stg_json_compact {
    size_t str_offset;  /* opening quote of the string value */
    const uint8_t *str; /* its content: printable ASCII, no escapes (so already decoded) */
    size_t str_len;
    size_t arr_offset[2]; /* the '[' of each array */
    size_t count[2];      /* elements stored in a[] and b[] */
} stg_json_compact;

bool stg_json_compact_form_init(stg_json_compact_form *f, const char *k0, const char *k1,
                                const char *k2);

/* Fast path right after an OBJECT_BEGIN: when the rest of the object is exactly the compact
 * form (string content printable ASCII; integers plain, at most 19 digits; at most max_a and
 * max_b of them), stores what it holds, consumes the object up to and including its '}' (as
 * the events up to its OBJECT_END would have: the keys are distinct, so no DUPLICATE event is
 * due) and returns true. Otherwise it consumes nothing and returns false: the caller reads the
 * object event by event, which gives every error and offset. Also false when the arrays would
 * open past max_depth. */
bool stg_json_compact_object(stg_json_parser *p, const stg_json_compact_form *f, uint64_t *a,
                             size_t max_a, uint64_t *b, size_t max_b, stg_json_compact *out);

/* Decodes the raw content of a STRING or KEY event (escapes resolved, already validated by the
 * parser) into dst, which must hold at least raw_len bytes: the decoded form is never longer.
 * Returns the decoded length. */
size_t stg_json_decode(const uint8_t *raw, size_t raw_len, uint8_t *dst);

/* The decoded bytes of a STRING or KEY event copied into arena a, NUL-terminated (the bytes
 * may hold NUL: *n is their length); NULL when the arena refuses. */
char *stg_json_string_copy(stg_arena *a, const stg_json_event *ev, size_t *n);

/* true when buf[from..len) holds only JSON whitespace (space, tab, CR, LF). */
bool stg_json_rest_is_ws(const uint8_t *buf, size_t len, size_t from);

/* Releases the parser's buffers back to the arena budget (the arena itself stays). */
void stg_json_release(stg_json_parser *p);

/* The hash the duplicate check uses, over a key's DECODED bytes, under key k (exposed so tests
 * can build colliding keys against a known seed). Not a cryptographic hash: collisions only
 * cost time, never correctness, and that time stays O(k log k). */
void stg_json_hash_key_init(stg_json_hash_key *k, uint64_t seed);
uint64_t stg_json_key_hash(const stg_json_hash_key *k, const uint8_t *decoded, size_t len);

/* Worst-case arena bytes the parser can use for an input of `len` bytes at `max_depth`: the
 * documented formula (docs/json.md), which a test checks against stg_arena.peak. */
uint64_t stg_json_memory_bound(uint64_t len, uint32_t max_depth);

#endif
