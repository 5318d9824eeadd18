/* Pickle opcode walker (protocols 0-5). It reads opcodes exactly as CPython's C unpickler
 * (_pickle.c) does and simulates the value stack, the mark stack and the memo, so that every
 * global a loader would import and every call it would make is seen, whatever decoys sit in
 * between. It never executes or imports anything, allocates nothing per opcode, and reports
 * what it sees through hooks: the parser decides no policy (validator/pickle_scan does).
 *
 * Values are small tagged records (stg_pv). Strings and bytes point into the input; tuples and
 * small dicts keep their elements in a bounded pool so hooks can look at call arguments,
 * persistent ids and object state. Memory: stack, marks, memo and pool are capped by the
 * limits and charged to one arena (docs/pickle.md gives the formula). */
#ifndef STG_PARSER_PICKLE_H
#define STG_PARSER_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

/* Kinds of simulated values. */
typedef enum stg_pv_kind {
    STG_PV_NONE = 0,
    STG_PV_BOOL,
    STG_PV_INT,    /* a = value as int64 bits (fits) */
    STG_PV_BIGINT, /* an integer that does not fit int64 */
    STG_PV_FLOAT,
    STG_PV_STR,   /* text: a = offset of the encoded bytes, n = their length, enc says how */
    STG_PV_BYTES, /* bytes / bytearray: same fields as STR */
    STG_PV_TUPLE, /* a = pool index, n = element count (STG_PV_UNTRACKED: not kept) */
    STG_PV_LIST,
    STG_PV_DICT, /* a = pool index of key/value pairs, n = pair count (or untracked) */
    STG_PV_SET,
    STG_PV_GLOBAL, /* a module attribute from GLOBAL/STACK_GLOBAL/INST lookup/EXT: tag = hook's */
    STG_PV_CALL,   /* result of REDUCE/INST/OBJ/NEWOBJ(_EX): tag = callable's, a = pool index
                        of the argument value (or STG_PV_NO_POOL) */
    STG_PV_PERSISTENT, /* result of persistent_load */
    STG_PV_OTHER       /* buffers and anything else that cannot be named */
} stg_pv_kind;

/* How the bytes of a STR/BYTES value are encoded in the input. */
typedef enum stg_pv_enc {
    STG_ENC_RAW = 0,     /* the bytes themselves (BIN* opcodes; UTF-8 for BINUNICODE) */
    STG_ENC_ESCAPED = 1, /* protocol 0 STRING: Python bytes escapes inside the quotes */
    STG_ENC_RAWUNI = 2   /* protocol 0 UNICODE: raw-unicode-escape (\uXXXX, \UXXXXXXXX) */
} stg_pv_enc;

#define STG_PV_UNTRACKED UINT32_MAX
#define STG_PV_NO_POOL UINT64_MAX

/* 16 bytes: the stack, memo and pool hold many of them. */
typedef struct stg_pv {
    uint8_t kind;   /* stg_pv_kind */
    uint8_t enc;    /* stg_pv_enc for STR/BYTES */
    uint16_t flags; /* STG_PV_F_* */
    uint32_t n;     /* length of STR/BYTES; element count of TUPLE/DICT; tag of GLOBAL/CALL */
    uint64_t a;
} stg_pv;

#define STG_PV_F_UNRESOLVED 1u /* a GLOBAL whose name could not be resolved (EXT, STACK_GLOBAL) */
#define STG_PV_F_HUGE 2u       /* a STR/BYTES of 4 GiB or more: its bytes are not looked at */
#define STG_PV_F_NO_INIT 4u /* a CALL made by NEWOBJ/NEWOBJ_EX: cls.__new__ ran, __init__ did not */
/* Aliasing: the walker keeps values, not objects, so two copies of one dict (the stack's and
 * the memo's, or the two of a DUP) stop agreeing once either is changed. MEMOIZED: this value
 * was memoized (PUT/MEMOIZE) or DUP'ed; COPIED: it came from the memo (GET) or a DUP. */
#define STG_PV_F_MEMOIZED 8u
#define STG_PV_F_COPIED 16u

/* Outcome of one walk. */
/* Error text of a GLOBAL/INST module line that no unpickler could import (a space, '=', '('
 * ...): the load ends there, before any import or call, so such bytes are text. */
#define STG_PICKLE_MSG_NOT_A_NAME \
    "a GLOBAL/INST module is not a dotted Python name: the unpickler fails to import it"

/* Error text of a walk its BUILD hook abandoned (STG_PICKLE_ABANDON). */
#define STG_PICKLE_MSG_ABANDONED "the walk was abandoned where the loader's next byte is unknown"

typedef enum stg_pickle_status {
    STG_PW_STOP = 0,      /* reached STOP: *end is the offset after it */
    STG_PW_MALFORMED = 1, /* invalid stream: err_offset / err_msg */
    STG_PW_LIMIT = 2,     /* a limit was hit: err_limit names it */
    STG_PW_NOMEM = 3,     /* the system refused memory */
    STG_PW_OK = 4         /* inside the walk only: an opcode was handled, the walk goes on
                             (stg_pickle_walk never returns it) */
} stg_pickle_status;

/* Inline pickles (joblib object arrays) walked inside one pickle: max_inline is clamped to it.
 * The walker keeps one level record per inline pickle plus the outermost one. */
#define STG_PICKLE_INLINE_CEILING 7u
#define STG_PICKLE_LEVELS (STG_PICKLE_INLINE_CEILING + 1u)

/* What a BUILD hook asks the walker to do with the bytes right after the BUILD opcode. */
typedef enum stg_pickle_action {
    STG_PICKLE_CONTINUE = 0, /* nothing special */
    STG_PICKLE_SKIP = 1,     /* skip *skip bytes (inline raw payload, e.g. a joblib array) */
    STG_PICKLE_INLINE = 2,   /* a complete pickle follows inline (joblib object array): walk it
                                with a fresh stack and memo, then resume */
    STG_PICKLE_ABANDON = 3   /* the hook cannot tell where the loader goes on (it reported why):
                                the walk ends there, STG_PW_MALFORMED with STG_PICKLE_MSG_ABANDONED */
} stg_pickle_action;

typedef struct stg_pickle_walker stg_pickle_walker;

/* Hooks (each may be NULL). Offsets are positions in the walked buffer (opcode offsets). */
typedef struct stg_pickle_hooks {
    void *ctx;
    /* A global was named (GLOBAL, INST, STACK_GLOBAL with resolved operands). Returns the tag
     * stored in the pushed value. module/name are the decoded bytes (not NUL-terminated). */
    uint32_t (*global)(void *ctx, const uint8_t *module, size_t module_len, const uint8_t *name,
                       size_t name_len, uint64_t offset);
    /* A global that cannot be resolved statically (STACK_GLOBAL operands that are not known
     * strings, EXT1/2/4). why is constant text. */
    void (*unresolved)(void *ctx, uint64_t offset, const char *why);
    /* A call: REDUCE, INST, OBJ, NEWOBJ, NEWOBJ_EX. callable is the called value (GLOBAL when
     * named), args the argument value (TUPLE, or OTHER when unknown). */
    void (*call)(void *ctx, stg_pickle_walker *w, uint8_t opcode, const stg_pv *callable,
                 const stg_pv *args, uint64_t offset);
    /* BUILD, SETITEM(S), APPEND(S) or ADDITEMS applied to a value that is a global. */
    void (*mutate_global)(void *ctx, uint8_t opcode, const stg_pv *target, uint64_t offset);
    /* After BUILD(target, state): may ask to skip or walk inline bytes that follow. */
    stg_pickle_action (*build)(void *ctx, stg_pickle_walker *w, const stg_pv *target,
                               const stg_pv *state, uint64_t after, uint64_t *skip);
    /* PERSID/BINPERSID with its id value. */
    void (*persid)(void *ctx, stg_pickle_walker *w, const stg_pv *pid, uint64_t offset);
    /* APPEND(S) of item onto a list value. */
    void (*append)(void *ctx, stg_pickle_walker *w, const stg_pv *item);
    /* An opcode or argument straddles the end of a FRAME (readers disagree), or a new FRAME
     * starts before the previous one ended. */
    void (*frame_divergence)(void *ctx, uint64_t offset);
    /* A string or bytes argument longer than max_string (the walk skips it and goes on). */
    void (*string_limit)(void *ctx, uint64_t offset, uint64_t length);
    /* A memo index no pickler writes and the C unpickler allocates for (see memo_sparse in
     * pickle.c); once per walk, the walk goes on. */
    void (*memo_sparse)(void *ctx, uint64_t offset, uint64_t index);
    /* GET/BINGET/LONG_BINGET or DUP pushed one more copy of a GLOBAL value (v, with its tag):
     * with the global hook's calls, every stack copy of a global is seen. */
    void (*copy_global)(void *ctx, const stg_pv *v, uint64_t offset);
} stg_pickle_hooks;

typedef struct stg_pickle_limits {
    uint32_t max_stack;  /* values on the stack (and marks) */
    uint32_t max_memo;   /* distinct memo entries */
    uint64_t max_string; /* one string/bytes argument */
    uint32_t max_inline; /* inline pickles inside a pickle (joblib object arrays); at most
                            STG_PICKLE_INLINE_CEILING */
    uint64_t hash_seed;  /* keys the memo hash (parser/hash.h); 0: STG_HASH_SEED_DEFAULT */
} stg_pickle_limits;

struct stg_pickle_walker {
    stg_pickle_limits lim;
    const stg_pickle_hooks *hooks;
    stg_arena arena;
    const uint8_t *buf;
    size_t len;
    /* stack of values, mark stack (stack heights), memo hash, element pool, decode scratch */
    stg_pv *stack;
    size_t stack_bytes;
    uint32_t sp;
    uint32_t stack_room; /* entries allocated, never more than max_stack */
    uint32_t fence_at;   /* lowest stack index an opcode may pop: innermost mark or level */
    uint32_t *marks;
    size_t marks_bytes;
    uint32_t nmarks;
    struct stg_memo_slot *memo;
    size_t memo_bytes;
    uint32_t memo_cap;            /* slots, power of two (0: none yet) */
    uint32_t memo_count;          /* hash slots used by this walk */
    uint32_t memo_total;          /* distinct memo entries of this walk (max_pickle_memo) */
    uint64_t memo_probes;         /* hash slots looked at, all walks (complexity tests) */
    bool memo_sparse_seen;        /* this walk reported a sparse index already */
    struct stg_memo_dense *dense; /* level 0, small indexes: see pickle.c */
    size_t dense_bytes;
    uint32_t dense_cap;
    stg_pv *pool;
    size_t pool_bytes;
    uint32_t npool;
    uint32_t pool_room; /* entries allocated */
    uint32_t max_pool;
    uint8_t *scratch, *scratch2;
    size_t scratch_bytes, scratch2_bytes;
    /* inline pickle levels: bases of the stack and mark stack, memo length per level */
    struct stg_pickle_level {
        uint32_t stack_base, marks_base, memo_len;
        uint32_t id; /* memo entries of this level carry it */
    } levels[STG_PICKLE_LEVELS];
    uint32_t level;
    uint32_t next_id;       /* next level id (ids only grow, so old memo slots go stale) */
    uint32_t walk_first_id; /* slots with a smaller id belong to earlier walks: free */
    uint8_t proto;
    /* FRAME state: frame_end > 0 while inside a frame */
    uint64_t frame_end;
    /* error details of the last walk */
    uint64_t err_offset;
    const char *err_msg;
    const char *err_limit;
    uint64_t err_value;
    uint64_t opcodes; /* opcodes walked, all walks */
    /* Set after stg_pickle_init when the reader sets no persistent_load (a file's first
     * pickle as torch.load, pickle.load, numpy.load and joblib.load read it): PERSID and
     * BINPERSID then end the walk as an error, as they end those loads. */
    bool no_persistent_load;
    /* The walk failed on a counted argument (string, bytes, FRAME) that needs the data to
     * reach this offset (UINT64_MAX: beyond any size); 0 otherwise. */
    uint64_t need_end;
    /* The walk failed on a text line (GLOBAL, INST, UNICODE, STRING, INT, PUT, ...) that no
     * '\n' ends in the data: the line's offset; UINT64_MAX otherwise. */
    uint64_t open_line;
    /* This walk met a container whose elements the pool (max_pickle_stack values, or memory)
     * had no room for: values built since may not be held. */
    bool pool_full;
    stg_pv result; /* the value the outermost STOP of the last walk popped (NONE otherwise) */
    /* this walk: SETITEM(S) on a dict that was memoized / that came from the memo or a DUP
     * (saturating) */
    uint32_t memoized_dict_changes, copied_dict_changes;
    /* the same for lists: APPEND(S), SETITEM(S) */
    uint32_t memoized_list_changes, copied_list_changes;
};

/* Prepares a walker (no allocation yet). hooks may be NULL. */
void stg_pickle_init(stg_pickle_walker *w, const stg_pickle_limits *lim,
                     const stg_pickle_hooks *hooks);
/* The most memory (bytes of its arena, stg_arena.peak) a walker with these limits holds after
 * walks of buffers of at most len bytes, whatever they contain and whatever strings the hooks
 * decode through stg_pickle_bytes; docs/pickle.md gives the formula term by term. The walker's
 * budget (arena.cap, set by stg_pickle_init) bounds it too: past it a walk ends with the limit
 * max_memory. */
uint64_t stg_pickle_memory_bound(const stg_pickle_limits *lim, size_t len);
/* Frees everything the walker holds. */
void stg_pickle_free(stg_pickle_walker *w);

/* Walks one pickle of buf[0..len) starting at `start` until its STOP. On STG_PW_STOP,
 * *end is the offset after STOP. Otherwise err_offset / err_msg / err_limit say why. The stack
 * and memo start empty on every call (buffers are reused). */
stg_pickle_status stg_pickle_walk(stg_pickle_walker *w, const uint8_t *buf, size_t len,
                                  size_t start, size_t *end);

/* After a walk of buf[0..len) that returned st: true when bytes past len could have changed the
 * outcome (the walk ran into the end, or hit a limit or budget that scales with len). false
 * (STOP, or a malformed stream that failed inside buf) means a walk of any longer buffer with
 * the same first len bytes ends the same way: loader/window.c reads files in growing windows
 * on that promise. */
bool stg_pickle_ran_out(const stg_pickle_walker *w, stg_pickle_status st);
/* stg_pickle_ran_out for a walk of the first bytes of data that is total bytes long: false also
 * when the walk failed on a counted argument ending past total (no longer prefix helps). */
bool stg_pickle_ran_out_of(const stg_pickle_walker *w, stg_pickle_status st, uint64_t total);
/* After a walk that ran out (stg_pickle_ran_out) inside a text line that no '\n' ends in the
 * data: the line's offset; UINT64_MAX otherwise. When no '\n' follows in the rest of the file
 * either, a walk of the whole file fails on that same line: the bytes after it, whatever they
 * are, cannot change the outcome, so they need not be held (loader/window.c). */
uint64_t stg_pickle_open_line(const stg_pickle_walker *w, stg_pickle_status st);

/* Accessors for hooks. */
/* Element i of a tracked TUPLE (false when untracked or out of range). */
bool stg_pickle_tuple_at(const stg_pickle_walker *w, const stg_pv *t, uint32_t i, stg_pv *out);
/* Element i of a tracked LIST (at most STG_POOL_TUPLE_MAX elements are kept; APPEND(S) extend
 * it, SETITEM(S) on it leaves it untracked). Only meaningful with stg_pickle_list_current. */
bool stg_pickle_list_at(const stg_pickle_walker *w, const stg_pv *l, uint32_t i, stg_pv *out);
/* As stg_pickle_dict_current, for a list: no other copy of it was changed behind this one. */
bool stg_pickle_list_current(const stg_pickle_walker *w, const stg_pv *l);
/* The value stored under a string key in a tracked DICT (false when absent or untracked). */
bool stg_pickle_dict_get(stg_pickle_walker *w, const stg_pv *d, const char *key, stg_pv *out);
/* true when the walker's view of dict d is certainly the object's content: no other copy of
 * it (memo, GET, DUP) was changed behind this one (see STG_PV_F_MEMOIZED). */
bool stg_pickle_dict_current(const stg_pickle_walker *w, const stg_pv *d);
/* Argument value of a CALL result (false when not kept). */
bool stg_pickle_call_args(const stg_pickle_walker *w, const stg_pv *call, stg_pv *out);
/* Decoded bytes of a STR/BYTES value (UTF-8 for text). The pointer is into the input or into
 * scratch memory valid until the next accessor call. false: not a string, or undecodable. */
bool stg_pickle_bytes(stg_pickle_walker *w, const stg_pv *v, const uint8_t **out, size_t *len);
/* Integer value of INT/BOOL. */
bool stg_pickle_int(const stg_pv *v, int64_t *out);

/* Name of an opcode ("REDUCE"), "?" for bytes that are no opcode. */
const char *stg_pickle_opcode_name(uint8_t op);

/* What follows an opcode byte in the stream (the ARG column of pickle_ops.def). */
typedef enum stg_pickle_arg {
    STG_PICKLE_ARG_NONE,  /* nothing */
    STG_PICKLE_ARG_FIXED, /* width bytes, little-endian */
    STG_PICKLE_ARG_LINE,  /* text up to a newline (GLOBAL and INST: two lines) */
    STG_PICKLE_ARG_LEN,   /* an unsigned length of width bytes, then that many bytes */
    STG_PICKLE_ARG_SLEN   /* a signed length of width bytes (negative: refused), then the bytes */
} stg_pickle_arg;

/* One row of pickle_ops.def. */
typedef struct stg_pickle_opinfo {
    const char *name;   /* CPython's name: "BININT" */
    stg_pickle_arg arg; /* what follows the byte */
    uint8_t width;      /* FIXED: the argument's bytes; LEN, SLEN: the length's; else 0 */
    uint8_t proto;      /* the first protocol that has it */
} stg_pickle_opinfo;

/* The row of opcode byte op, NULL for a byte that is no opcode of protocols 0-5. */
const stg_pickle_opinfo *stg_pickle_opinfo_of(uint8_t op);

#endif
