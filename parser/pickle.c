#include "pickle.h"

#include <string.h>

#include "cursor.h"
#include "hash.h"
#include "mem.h"
#include "util.h"

/* Opcodes of protocols 0-5 (Lib/pickletools.py names). */
enum {
    OP_MARK = '(',
    OP_STOP = '.',
    OP_POP = '0',
    OP_POP_MARK = '1',
    OP_DUP = '2',
    OP_FLOAT = 'F',
    OP_INT = 'I',
    OP_BININT = 'J',
    OP_BININT1 = 'K',
    OP_LONG = 'L',
    OP_BININT2 = 'M',
    OP_NONE = 'N',
    OP_PERSID = 'P',
    OP_BINPERSID = 'Q',
    OP_REDUCE = 'R',
    OP_STRING = 'S',
    OP_BINSTRING = 'T',
    OP_SHORT_BINSTRING = 'U',
    OP_UNICODE = 'V',
    OP_BINUNICODE = 'X',
    OP_APPEND = 'a',
    OP_BUILD = 'b',
    OP_GLOBAL = 'c',
    OP_DICT = 'd',
    OP_EMPTY_DICT = '}',
    OP_APPENDS = 'e',
    OP_GET = 'g',
    OP_BINGET = 'h',
    OP_INST = 'i',
    OP_LONG_BINGET = 'j',
    OP_LIST = 'l',
    OP_EMPTY_LIST = ']',
    OP_OBJ = 'o',
    OP_PUT = 'p',
    OP_BINPUT = 'q',
    OP_LONG_BINPUT = 'r',
    OP_SETITEM = 's',
    OP_TUPLE = 't',
    OP_EMPTY_TUPLE = ')',
    OP_SETITEMS = 'u',
    OP_BINFLOAT = 'G',
    OP_PROTO = 0x80,
    OP_NEWOBJ = 0x81,
    OP_EXT1 = 0x82,
    OP_EXT2 = 0x83,
    OP_EXT4 = 0x84,
    OP_TUPLE1 = 0x85,
    OP_TUPLE2 = 0x86,
    OP_TUPLE3 = 0x87,
    OP_NEWTRUE = 0x88,
    OP_NEWFALSE = 0x89,
    OP_LONG1 = 0x8a,
    OP_LONG4 = 0x8b,
    OP_BINBYTES = 'B',
    OP_SHORT_BINBYTES = 'C',
    OP_SHORT_BINUNICODE = 0x8c,
    OP_BINUNICODE8 = 0x8d,
    OP_BINBYTES8 = 0x8e,
    OP_EMPTY_SET = 0x8f,
    OP_ADDITEMS = 0x90,
    OP_FROZENSET = 0x91,
    OP_NEWOBJ_EX = 0x92,
    OP_STACK_GLOBAL = 0x93,
    OP_MEMOIZE = 0x94,
    OP_FRAME = 0x95,
    OP_BYTEARRAY8 = 0x96,
    OP_NEXT_BUFFER = 0x97,
    OP_READONLY_BUFFER = 0x98
};

#define STG_PICKLE_HIGHEST_PROTOCOL 5
#define STG_SSIZE_MAX ((uint64_t)INT64_MAX)
/* Containers whose elements are kept for hooks: call arguments, persistent ids and object
 * state are short; longer ones are walked but not kept. */
#define STG_POOL_TUPLE_MAX 16u
#define STG_POOL_DICT_MAX 16u
/* Longest STACK_GLOBAL operand decoded (encoded bytes); longer ones are unresolved. */
#define STG_PICKLE_NAME_MAX 1024u

struct stg_memo_slot {
    uint64_t key;
    uint32_t id; /* level instance that stored it; 0 = never used */
    uint32_t pad;
    stg_pv v;
};

/* Dense part of the memo (see dense_cover). */
struct stg_memo_dense {
    stg_pv v;
    uint32_t id;
    uint32_t pad;
};

const char *stg_pickle_opcode_name(uint8_t op)
{
    switch (op) {
    case OP_MARK: return "MARK";
    case OP_STOP: return "STOP";
    case OP_POP: return "POP";
    case OP_POP_MARK: return "POP_MARK";
    case OP_DUP: return "DUP";
    case OP_FLOAT: return "FLOAT";
    case OP_INT: return "INT";
    case OP_BININT: return "BININT";
    case OP_BININT1: return "BININT1";
    case OP_LONG: return "LONG";
    case OP_BININT2: return "BININT2";
    case OP_NONE: return "NONE";
    case OP_PERSID: return "PERSID";
    case OP_BINPERSID: return "BINPERSID";
    case OP_REDUCE: return "REDUCE";
    case OP_STRING: return "STRING";
    case OP_BINSTRING: return "BINSTRING";
    case OP_SHORT_BINSTRING: return "SHORT_BINSTRING";
    case OP_UNICODE: return "UNICODE";
    case OP_BINUNICODE: return "BINUNICODE";
    case OP_APPEND: return "APPEND";
    case OP_BUILD: return "BUILD";
    case OP_GLOBAL: return "GLOBAL";
    case OP_DICT: return "DICT";
    case OP_EMPTY_DICT: return "EMPTY_DICT";
    case OP_APPENDS: return "APPENDS";
    case OP_GET: return "GET";
    case OP_BINGET: return "BINGET";
    case OP_INST: return "INST";
    case OP_LONG_BINGET: return "LONG_BINGET";
    case OP_LIST: return "LIST";
    case OP_EMPTY_LIST: return "EMPTY_LIST";
    case OP_OBJ: return "OBJ";
    case OP_PUT: return "PUT";
    case OP_BINPUT: return "BINPUT";
    case OP_LONG_BINPUT: return "LONG_BINPUT";
    case OP_SETITEM: return "SETITEM";
    case OP_TUPLE: return "TUPLE";
    case OP_EMPTY_TUPLE: return "EMPTY_TUPLE";
    case OP_SETITEMS: return "SETITEMS";
    case OP_BINFLOAT: return "BINFLOAT";
    case OP_PROTO: return "PROTO";
    case OP_NEWOBJ: return "NEWOBJ";
    case OP_EXT1: return "EXT1";
    case OP_EXT2: return "EXT2";
    case OP_EXT4: return "EXT4";
    case OP_TUPLE1: return "TUPLE1";
    case OP_TUPLE2: return "TUPLE2";
    case OP_TUPLE3: return "TUPLE3";
    case OP_NEWTRUE: return "NEWTRUE";
    case OP_NEWFALSE: return "NEWFALSE";
    case OP_LONG1: return "LONG1";
    case OP_LONG4: return "LONG4";
    case OP_BINBYTES: return "BINBYTES";
    case OP_SHORT_BINBYTES: return "SHORT_BINBYTES";
    case OP_SHORT_BINUNICODE: return "SHORT_BINUNICODE";
    case OP_BINUNICODE8: return "BINUNICODE8";
    case OP_BINBYTES8: return "BINBYTES8";
    case OP_EMPTY_SET: return "EMPTY_SET";
    case OP_ADDITEMS: return "ADDITEMS";
    case OP_FROZENSET: return "FROZENSET";
    case OP_NEWOBJ_EX: return "NEWOBJ_EX";
    case OP_STACK_GLOBAL: return "STACK_GLOBAL";
    case OP_MEMOIZE: return "MEMOIZE";
    case OP_FRAME: return "FRAME";
    case OP_BYTEARRAY8: return "BYTEARRAY8";
    case OP_NEXT_BUFFER: return "NEXT_BUFFER";
    case OP_READONLY_BUFFER: return "READONLY_BUFFER";
    default: return "?";
    }
}

/* Stands in for NULL hooks, so the walk tests only the hook it wants to call. */
static const stg_pickle_hooks no_hooks = {0};

void stg_pickle_init(stg_pickle_walker *w, const stg_pickle_limits *lim,
                     const stg_pickle_hooks *hooks)
{
    memset(w, 0, sizeof *w);
    w->lim = *lim;
    if (w->lim.max_inline > 7) {
        w->lim.max_inline = 7;
    }
    if (w->lim.hash_seed == 0) {
        w->lim.hash_seed = STG_HASH_SEED_DEFAULT;
    }
    w->hooks = hooks != NULL ? hooks : &no_hooks;
    w->max_pool = lim->max_stack;
    /* Budget: the count limits bound every buffer; the arena keeps the sum honest. Doubling
     * growth may reserve up to twice the bytes in use. */
    uint64_t stack = (uint64_t)lim->max_stack * (sizeof(stg_pv) + sizeof(uint32_t)) * 2;
    uint64_t memo = (uint64_t)lim->max_memo *
                    (sizeof(struct stg_memo_slot) * 4 + sizeof(struct stg_memo_dense) * 2);
    uint64_t pool = (uint64_t)lim->max_stack * sizeof(stg_pv) * 2;
    uint64_t scratch = lim->max_string > (UINT64_MAX / 8) ? UINT64_MAX / 8 : lim->max_string * 4;
    uint64_t cap = stack + memo + pool + scratch + ((uint64_t)1 << 20);
    if (cap > SIZE_MAX) {
        cap = SIZE_MAX;
    }
    stg_arena_init(&w->arena, (size_t)cap);
}

void stg_pickle_free(stg_pickle_walker *w)
{
    stg_arena_free_buffer(&w->arena, (void **)&w->stack, &w->stack_bytes);
    stg_arena_free_buffer(&w->arena, (void **)&w->marks, &w->marks_bytes);
    stg_arena_free_buffer(&w->arena, (void **)&w->memo, &w->memo_bytes);
    stg_mem_free(w->dense);
    w->dense = NULL;
    w->arena.reserved -= w->dense_bytes;
    w->dense_bytes = 0;
    stg_arena_free_buffer(&w->arena, (void **)&w->pool, &w->pool_bytes);
    stg_arena_free_buffer(&w->arena, (void **)&w->scratch, &w->scratch_bytes);
    stg_arena_free_buffer(&w->arena, (void **)&w->scratch2, &w->scratch2_bytes);
    stg_arena_release(&w->arena);
}

/* ---------------------------------------------------------------- errors */

/* Failures that more bytes after the end could have avoided (stg_pickle_ran_out). */
static const char PAST_END_STRING[] = "a string or bytes argument runs past the end of the data";
static const char PAST_END_STOP[] = "the data ends before a STOP opcode";
static const char PAST_END_INLINE[] = "an inline array runs past the end";
static const char PAST_END_FRAME[] = "a FRAME runs past the end of the data";
static const char PAST_END_ARG[] = "the argument runs past the end of the data";

#define FAIL(w, off, msg)        \
    do {                         \
        (w)->err_offset = (off); \
        (w)->err_msg = (msg);    \
        return STG_PW_MALFORMED; \
    } while (0)

static stg_pickle_status limit_hit(stg_pickle_walker *w, uint64_t off, const char *limit,
                                   uint64_t value)
{
    w->err_offset = off;
    w->err_limit = limit;
    w->err_value = value;
    w->err_msg = "a limit was exceeded";
    return STG_PW_LIMIT;
}

static stg_pickle_status nomem(stg_pickle_walker *w, uint64_t off)
{
    w->err_offset = off;
    w->err_msg = "out of memory";
    if (!w->arena.out_of_memory) {
        /* The budget (not the system) refused: report it as the memory limit. */
        w->err_limit = "max_memory";
        w->err_value = w->arena.cap;
        return STG_PW_LIMIT;
    }
    return STG_PW_NOMEM;
}

/* ---------------------------------------------------------------- stack, marks, pool */

static inline uint32_t fence(const stg_pickle_walker *w)
{
    return w->fence_at;
}

/* Recomputes the fence after the mark stack or the level changed. */
static inline void refence(stg_pickle_walker *w)
{
    const struct stg_pickle_level *lv = &w->levels[w->level];
    w->fence_at = w->nmarks > lv->marks_base ? w->marks[w->nmarks - 1] : lv->stack_base;
}

static stg_pickle_status push_slow(stg_pickle_walker *w, const stg_pv *v, uint64_t off)
{
    if (w->sp >= w->lim.max_stack) {
        return limit_hit(w, off, "max_pickle_stack", w->lim.max_stack);
    }
    if (stg_arena_grow_buffer(&w->arena, (void **)&w->stack, &w->stack_bytes,
                              ((size_t)w->sp + 1) * sizeof(stg_pv)) != 0) {
        return nomem(w, off);
    }
    size_t room = w->stack_bytes / sizeof(stg_pv);
    w->stack_room = room < w->lim.max_stack ? (uint32_t)room : w->lim.max_stack;
    w->stack[w->sp++] = *v;
    return STG_PW_STOP;
}

static inline stg_pickle_status push(stg_pickle_walker *w, const stg_pv *v, uint64_t off)
{
    if (__builtin_expect(w->sp < w->stack_room, 1)) {
        w->stack[w->sp++] = *v;
        return STG_PW_STOP;
    }
    return push_slow(w, v, off);
}

static stg_pv pv_make(stg_pv_kind kind)
{
    stg_pv v;
    memset(&v, 0, sizeof v);
    v.kind = (uint8_t)kind;
    return v;
}

/* A STR/BYTES value of n encoded bytes at offset `at`: 4 GiB or more is flagged huge. */
static stg_pv pv_string(stg_pv_kind kind, stg_pv_enc enc, uint64_t at, uint64_t n)
{
    stg_pv v = pv_make(kind);
    v.enc = (uint8_t)enc;
    v.a = at;
    if (n > UINT32_MAX) {
        v.flags = STG_PV_F_HUGE;
    } else {
        v.n = (uint32_t)n;
    }
    return v;
}

/* Pops the top value if it lies above the fence (the innermost mark or inline level). */
static inline bool pop(stg_pickle_walker *w, stg_pv *out)
{
    if (w->sp <= fence(w)) {
        return false;
    }
    *out = w->stack[--w->sp];
    return true;
}

/* Pops the innermost mark: *k gets the stack height it recorded. */
static bool marker(stg_pickle_walker *w, uint32_t *k)
{
    if (w->nmarks <= w->levels[w->level].marks_base) {
        return false;
    }
    *k = w->marks[--w->nmarks];
    refence(w);
    return true;
}

/* Copies n values into the pool; STG_PV_NO_POOL when the pool is full. */
static uint64_t pool_put_slow(stg_pickle_walker *w, const stg_pv *v, uint32_t n)
{
    if ((uint64_t)w->npool + n > w->max_pool) {
        return STG_PV_NO_POOL;
    }
    /* Here npool + n <= max_pool but > pool_room, so pool_room is pool_bytes / 16 and the pool
     * must grow; n > 0 (n = 0 always takes the fast path). */
    size_t need = ((size_t)w->npool + n) * sizeof(stg_pv);
    if (stg_arena_grow_buffer(&w->arena, (void **)&w->pool, &w->pool_bytes, need) != 0) {
        w->arena.failed = 0; /* a full pool only means "not kept": no error */
        return STG_PV_NO_POOL;
    }
    size_t room = w->pool_bytes / sizeof(stg_pv);
    w->pool_room = room < w->max_pool ? (uint32_t)room : w->max_pool;
    memcpy(&w->pool[w->npool], v, n * sizeof(stg_pv));
    uint64_t at = w->npool;
    w->npool += n;
    return at;
}

static inline uint64_t pool_put(stg_pickle_walker *w, const stg_pv *v, uint32_t n)
{
    if (__builtin_expect(n <= w->pool_room - w->npool, 1)) {
        for (uint32_t i = 0; i < n; i++) {
            w->pool[w->npool + i] = v[i]; /* no pointer arithmetic on an empty (NULL) pool */
        }
        uint64_t at = w->npool;
        w->npool += n;
        return at;
    }
    return pool_put_slow(w, v, n);
}

static stg_pv make_container(stg_pickle_walker *w, stg_pv_kind kind, const stg_pv *items,
                             uint32_t n, uint32_t keep_max)
{
    stg_pv v = pv_make(kind);
    v.n = STG_PV_UNTRACKED;
    v.a = STG_PV_NO_POOL;
    if (n <= keep_max) {
        uint64_t at = pool_put(w, items, n);
        if (at != STG_PV_NO_POOL) {
            v.a = at;
            v.n = kind == STG_PV_DICT ? n / 2 : n;
        }
    }
    return v;
}

/* Adds npairs >= 1 key/value pairs to a tracked dict value in place. */
static void dict_extend(stg_pickle_walker *w, stg_pv *d, const stg_pv *pairs, uint32_t npairs)
{
    if (d->n == STG_PV_UNTRACKED) {
        return;
    }
    if (d->n + npairs > STG_POOL_DICT_MAX) {
        d->n = STG_PV_UNTRACKED;
        return;
    }
    uint32_t old = d->n * 2;
    if (d->a + old != w->npool) {
        /* Not at the pool's end: move the existing pairs there first (at most 32 values). */
        stg_pv tmp[STG_POOL_DICT_MAX * 2];
        memcpy(tmp, &w->pool[d->a], old * sizeof(stg_pv));
        uint64_t at = pool_put(w, tmp, old);
        if (at == STG_PV_NO_POOL) {
            d->n = STG_PV_UNTRACKED;
            return;
        }
        d->a = at;
    }
    if (pool_put(w, pairs, npairs * 2) == STG_PV_NO_POOL) {
        d->n = STG_PV_UNTRACKED;
        return;
    }
    d->n += npairs;
}

/* ---------------------------------------------------------------- memo */

/* The memo index is the pickle's choice (PUT takes any decimal up to 2^63 - 1): keyed by the
 * scan's seed, and no probe walks past STG_HASH_PROBE_CEILING slots (an insert that would is
 * refused: the walk stops with that limit, so a flood costs at most the ceiling per opcode). */
static uint32_t memo_hash(const stg_pickle_walker *w, uint64_t key, uint32_t id)
{
    return (uint32_t)stg_hash_u64(w->lim.hash_seed, key, id);
}

static bool slot_live(const stg_pickle_walker *w, const struct stg_memo_slot *s)
{
    return s->id >= w->walk_first_id;
}

static struct stg_memo_slot *memo_find(stg_pickle_walker *w, uint64_t key, uint32_t id)
{
    if (w->memo_cap == 0) {
        return NULL;
    }
    uint32_t mask = w->memo_cap - 1;
    uint32_t i = memo_hash(w, key, id) & mask;
    for (uint32_t probe = 0; probe < STG_HASH_PROBE_CEILING; probe++, i = (i + 1) & mask) {
        struct stg_memo_slot *s = &w->memo[i];
        w->memo_probes++;
        if (!slot_live(w, s)) {
            return NULL;
        }
        if (s->key == key && s->id == id) {
            return s;
        }
    }
    return NULL; /* inserts never place a key further than the ceiling */
}

/* Inserts a (key, id) the table does not hold (memo_find said so, or a rehash of distinct
 * entries), without growing; the caller keeps the load factor under 1/2. NULL when the
 * probe ceiling is reached. */
static struct stg_memo_slot *memo_insert(stg_pickle_walker *w, uint64_t key, uint32_t id)
{
    uint32_t mask = w->memo_cap - 1;
    uint32_t i = memo_hash(w, key, id) & mask;
    for (uint32_t probe = 0; slot_live(w, &w->memo[i]); probe++, i = (i + 1) & mask) {
        w->memo_probes++;
        if (probe + 1 >= STG_HASH_PROBE_CEILING) {
            return NULL;
        }
    }
    struct stg_memo_slot *s = &w->memo[i];
    s->key = key;
    s->id = id;
    return s;
}

static stg_pickle_status probe_limit(stg_pickle_walker *w, uint64_t off)
{
    return limit_hit(w, off, "hash_probe_ceiling", STG_HASH_PROBE_CEILING);
}

static stg_pickle_status memo_grow(stg_pickle_walker *w, uint64_t off)
{
    uint32_t ncap = w->memo_cap == 0 ? 64 : w->memo_cap * 2;
    size_t nbytes = (size_t)ncap * sizeof(struct stg_memo_slot);
    struct stg_memo_slot *old = w->memo;
    size_t old_bytes = w->memo_bytes;
    uint32_t old_cap = w->memo_cap;
    struct stg_memo_slot *nm = NULL;
    size_t nm_bytes = 0;
    if (stg_arena_grow_buffer(&w->arena, (void **)&nm, &nm_bytes, nbytes) != 0) {
        return nomem(w, off);
    }
    memset(nm, 0, nm_bytes);
    w->memo = nm;
    w->memo_bytes = nm_bytes;
    w->memo_cap = ncap;
    stg_pickle_status st = STG_PW_STOP;
    for (uint32_t i = 0; i < old_cap && st == STG_PW_STOP; i++) {
        if (slot_live(w, &old[i])) {
            struct stg_memo_slot *s = memo_insert(w, old[i].key, old[i].id);
            if (s == NULL) {
                st = probe_limit(w, off); /* only keys chosen against a known seed get here */
            } else {
                s->v = old[i].v;
            }
        }
    }
    stg_arena_free_buffer(&w->arena, (void **)&old, &old_bytes);
    return st;
}

/* Dense part of the memo: pickles number memo entries 0, 1, 2 ... (MEMOIZE always does), so
 * level 0 keeps small indexes in an array indexed directly; sparse or huge indexes and inline
 * levels use the hash. An entry is valid when its id is the current level's. */
static stg_pv *memo_get(stg_pickle_walker *w, uint64_t key)
{
    uint32_t id = w->levels[w->level].id;
    if (key < w->dense_cap && w->dense[key].id == id) {
        return &w->dense[key].v;
    }
    struct stg_memo_slot *s = memo_find(w, key, id);
    return s != NULL ? &s->v : NULL;
}

/* The dense array is allocated once, zeroed by the allocator (large blocks come as fresh pages,
 * so untouched entries cost nothing, and small ones are few), sized for the memo of a real
 * pickle of this length. Keys it does not cover go to the hash. */
static bool dense_cover(stg_pickle_walker *w, uint64_t key)
{
    if (w->level != 0) {
        return false; /* an inline pickle's memo is its own (joblib's nested pickle.load): its
                         entry 0 must not overwrite the enclosing pickle's */
    }
    if (key < w->dense_cap) {
        return true;
    }
    if (w->dense != NULL) {
        return false;
    }
    uint64_t want = (uint64_t)w->len / 4 + 1024; /* a memoized value takes >= 4 bytes in
                                                    real pickles; the hash takes the rest */
    if (want > w->lim.max_memo) {
        want = w->lim.max_memo;
    }
    if (key >= want) {
        return false;
    }
    size_t bytes = (size_t)want * sizeof(struct stg_memo_dense);
    if (bytes > w->arena.cap - w->arena.reserved) {
        return false;
    }
    w->dense = stg_mem_calloc((size_t)want, sizeof(struct stg_memo_dense));
    if (w->dense == NULL) {
        return false; /* the hash still works */
    }
    w->dense_bytes = bytes;
    w->arena.reserved += bytes; /* charged to the walker's budget */
    w->dense_cap = (uint32_t)want;
    return true;
}

/* A memo index at or past STG_MEMO_SPARSE_MIN and past the pickle's length: no pickler writes
 * one (it numbers entries 0, 1, 2 ... and each takes an opcode byte), and the C unpickler
 * (_pickle.c) keeps the memo as an array it resizes to twice the largest index and clears,
 * 16 bytes per index on 64-bit: 256 MiB at the minimum, 64 GiB for a LONG_BINPUT of 2^32 - 1,
 * a MemoryError or worse for a PUT of 2^40. The pure-Python unpickler (joblib's) uses a dict
 * and loads the file, so the two loaders disagree: reported, and the walk goes on. */
#define STG_MEMO_SPARSE_MIN ((uint64_t)1 << 24)

static void memo_sparse(stg_pickle_walker *w, uint64_t key, uint64_t off)
{
    if (key < STG_MEMO_SPARSE_MIN || key < (uint64_t)w->len || w->memo_sparse_seen) {
        return;
    }
    w->memo_sparse_seen = true;
    if (w->hooks->memo_sparse != NULL) {
        w->hooks->memo_sparse(w->hooks->ctx, off, key);
    }
}

static stg_pickle_status memo_put(stg_pickle_walker *w, uint64_t key, const stg_pv *v, uint64_t off)
{
    struct stg_pickle_level *lv = &w->levels[w->level];
    if (dense_cover(w, key)) {
        struct stg_memo_dense *d = &w->dense[key];
        if (d->id != lv->id) {
            /* New here; it may still sit in the hash from before the array covered it. */
            if (w->memo_count == 0 || memo_find(w, key, lv->id) == NULL) {
                if (w->memo_total >= w->lim.max_memo) {
                    return limit_hit(w, off, "max_pickle_memo", w->lim.max_memo);
                }
                w->memo_total++;
                lv->memo_len++;
            }
            d->id = lv->id;
        }
        d->v = *v;
        return STG_PW_STOP;
    }
    struct stg_memo_slot *s = memo_find(w, key, lv->id);
    if (s != NULL) {
        s->v = *v;
        return STG_PW_STOP;
    }
    if (w->memo_total >= w->lim.max_memo) {
        return limit_hit(w, off, "max_pickle_memo", w->lim.max_memo);
    }
    if (w->memo_count + 1 > w->memo_cap / 2) {
        stg_pickle_status st = memo_grow(w, off);
        if (st != STG_PW_STOP) {
            return st;
        }
    }
    s = memo_insert(w, key, lv->id);
    if (s == NULL) {
        return probe_limit(w, off);
    }
    s->v = *v;
    w->memo_count++;
    w->memo_total++;
    lv->memo_len++;
    return STG_PW_STOP;
}

/* ---------------------------------------------------------------- lexical helpers */

/* Reads one line (through '\n'); the line p, n excludes the newline. */
static bool read_line(stg_cursor *c, const uint8_t **p, size_t *n)
{
    const uint8_t *s = NULL;
    size_t avail = stg_cur_avail(c);
    (void)stg_cur_peek(c, avail, &s); /* cannot fail: avail bytes are there */
    const uint8_t *nl = avail > 0 ? memchr(s, '\n', avail) : NULL;
    if (nl == NULL) {
        return false;
    }
    *n = (size_t)(nl - s);
    *p = s;
    return stg_cur_skip(c, *n + 1) == STG_OK;
}

/* Python's whitespace, less '\n': only the text of a line (read_line) is ever looked at. */
static bool py_space(uint8_t ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == 0x0b || ch == 0x0c;
}

/* int(line, 10) as PyLong_FromString reads a NUL-terminated copy of the line: surrounding
 * whitespace, one sign, digits with single underscores between them; the text ends at the
 * first NUL. *neg is set for a minus sign. false: not a number or over INT64_MAX. */
static bool parse_dec(const uint8_t *p, size_t n, uint64_t *out, bool *neg)
{
    const uint8_t *nul = n > 0 ? memchr(p, 0, n) : NULL;
    if (nul != NULL) {
        n = (size_t)(nul - p);
    }
    size_t i = 0;
    while (i < n && py_space(p[i])) {
        i++;
    }
    *neg = false;
    if (i < n && (p[i] == '+' || p[i] == '-')) {
        *neg = p[i] == '-';
        i++;
    }
    uint64_t v = 0;
    size_t digits = 0;
    bool last_us = false;
    for (; i < n; i++) {
        uint8_t ch = p[i];
        if (ch >= '0' && ch <= '9') {
            if (v > (STG_SSIZE_MAX - (uint64_t)(ch - '0')) / 10) {
                return false;
            }
            v = v * 10 + (uint64_t)(ch - '0');
            digits++;
            last_us = false;
        } else if (ch == '_' && digits > 0 && !last_us) {
            last_us = true;
        } else {
            break;
        }
    }
    if (digits == 0 || last_us) {
        return false;
    }
    while (i < n && py_space(p[i])) {
        i++;
    }
    if (i != n) {
        return false;
    }
    *out = v;
    return true;
}

static int hexval(uint8_t ch);

/* A protocol 0 INT/LONG line as strtol or int(text, 0) accept it: surrounding whitespace, one
 * sign, a 0x/0o/0b prefix or decimal digits (leading zeros allowed, as strtol reads octal),
 * single underscores between digits; the text ends at the first NUL. *v gets the value when it
 * is decimal and fits int64, else kind BIGINT. */
static bool int_line(const uint8_t *p, size_t n, stg_pv *v)
{
    const uint8_t *nul = n > 0 ? memchr(p, 0, n) : NULL;
    if (nul != NULL) {
        n = (size_t)(nul - p);
    }
    size_t i = 0;
    while (i < n && py_space(p[i])) {
        i++;
    }
    if (i < n && (p[i] == '+' || p[i] == '-')) {
        i++;
    }
    int base = 10;
    if (n - i >= 2 && p[i] == '0' && memchr("xXoObB", p[i + 1], 6) != NULL) {
        base = (p[i + 1] | 0x20) == 'x' ? 16 : (p[i + 1] | 0x20) == 'o' ? 8 : 2;
        i += 2;
        if (i < n && p[i] == '_') {
            i++; /* int("0x_1", 0) is valid */
        }
    }
    size_t digits = 0;
    bool last_us = false;
    for (; i < n && !py_space(p[i]); i++) {
        int d = hexval(p[i]);
        if (d >= 0 && d < base) {
            digits++;
            last_us = false;
        } else if (p[i] == '_' && digits > 0 && !last_us) {
            last_us = true;
        } else {
            return false;
        }
    }
    while (i < n && py_space(p[i])) {
        i++;
    }
    if (digits == 0 || last_us || i != n) {
        return false;
    }
    uint64_t u;
    bool neg;
    if (base == 10 && parse_dec(p, n, &u, &neg)) {
        v->kind = STG_PV_INT;
        v->a = neg ? (uint64_t)0 - u : u;
    } else {
        v->kind = STG_PV_BIGINT;
    }
    return true;
}

/* FLOAT lines are checked loosely (a malformed number only makes the loader fail). */
static bool float_line(const uint8_t *p, size_t n)
{
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = p[i];
        bool ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
                  (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '+' || ch == '-' || ch == '.' ||
                  py_space(ch) || ch == 0;
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* UTF-8 as CPython's decoder with "surrogatepass" accepts it (BINUNICODE and GLOBAL lines use
 * "strict", which differs only on encoded surrogates: surrogatepass=false rejects them). */
static bool utf8_valid(const uint8_t *s, size_t n, bool surrogatepass)
{
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 8 bytes at a time. */
        while (i + 8 <= n) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            if ((x & 0x8080808080808080ull) != 0) {
                break;
            }
            i += 8;
        }
        if (i >= n) {
            break;
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
            cp = c & 0x1Fu;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            cp = c & 0x0Fu;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            cp = c & 0x07u;
        } else {
            return false;
        }
        if (n - i - 1 < need) {
            return false;
        }
        for (size_t k = 1; k <= need; k++) {
            uint8_t cc = s[i + k];
            if ((cc & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (cc & 0x3Fu);
        }
        if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
            return false;
        }
        if (!surrogatepass && cp >= 0xD800 && cp <= 0xDFFF) {
            return false;
        }
        i += need + 1;
    }
    return true;
}

static int hexval(uint8_t ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
        return ch - 'A' + 10;
    }
    return -1;
}

/* Decodes Python bytes escapes as PyBytes_DecodeEscape does (protocol 0 STRING). out may be
 * NULL to validate only; it needs n bytes (the result is never longer). false: invalid. */
static bool decode_escaped(const uint8_t *s, size_t n, uint8_t *out, size_t *out_len)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint8_t ch = s[i++];
        if (ch != '\\') {
            if (out != NULL) {
                out[o] = ch;
            }
            o++;
            continue;
        }
        if (i >= n) {
            return false; /* "Trailing \ in string" */
        }
        ch = s[i++];
        int val;
        switch (ch) { /* a STRING argument is one line: no backslash-newline continuation */
        case '\\': val = '\\'; break;
        case '\'': val = '\''; break;
        case '"': val = '"'; break;
        case 'b': val = '\b'; break;
        case 'f': val = '\f'; break;
        case 't': val = '\t'; break;
        case 'n': val = '\n'; break;
        case 'r': val = '\r'; break;
        case 'v': val = '\v'; break;
        case 'a': val = '\a'; break;
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
            val = ch - '0';
            if (i < n && s[i] >= '0' && s[i] <= '7') {
                val = val * 8 + (s[i++] - '0');
                if (i < n && s[i] >= '0' && s[i] <= '7') {
                    val = val * 8 + (s[i++] - '0');
                }
            }
            val &= 0xFF; /* CPython keeps the low byte of \400..\777 (with a warning) */
            break;
        case 'x': {
            if (n - i < 2) {
                return false;
            }
            int hi = hexval(s[i]), lo = hexval(s[i + 1]);
            if (hi < 0 || lo < 0) {
                return false;
            }
            val = hi * 16 + lo;
            i += 2;
            break;
        }
        default:
            /* Unknown escapes stay as they are, backslash included. */
            if (out != NULL) {
                out[o] = '\\';
            }
            o++;
            val = ch;
            break;
        }
        if (out != NULL) {
            out[o] = (uint8_t)val;
        }
        o++;
    }
    *out_len = o;
    return true;
}

/* raw-unicode-escape as CPython decodes it (protocol 0 UNICODE), output as UTF-8: a run of k
 * backslashes followed by u/U is an escape when k is odd (k - 1 stay literal); \u takes exactly
 * 4 hex digits, \U exactly 8 (at most 0x10FFFF); every other byte is the code point of the same
 * value. out may be NULL to validate; it needs 2 * n bytes. */
static bool decode_rawuni(const uint8_t *s, size_t n, uint8_t *out, size_t *out_len)
{
    size_t o = 0;
    uint8_t tmp[4];
    for (size_t i = 0; i < n;) {
        uint8_t ch = s[i];
        if (ch != '\\') {
            size_t k = stg_utf8_put(out != NULL ? out + o : tmp, ch);
            o += k;
            i++;
            continue;
        }
        size_t run = 0;
        while (i + run < n && s[i + run] == '\\') {
            run++;
        }
        size_t after = i + run;
        bool esc = (run & 1) == 1 && after < n && (s[after] == 'u' || s[after] == 'U');
        size_t literal = esc ? run - 1 : run;
        if (out != NULL) {
            memset(out + o, '\\', literal);
        }
        o += literal;
        i = after;
        if (!esc) {
            continue;
        }
        size_t count = s[after] == 'u' ? 4 : 8;
        i++;
        if (n - i < count) {
            return false;
        }
        uint32_t cp = 0;
        for (size_t k = 0; k < count; k++) {
            int h = hexval(s[i + k]);
            if (h < 0) {
                return false;
            }
            cp = (cp << 4) | (uint32_t)h;
        }
        if (cp > 0x10FFFF) {
            return false;
        }
        i += count;
        o += stg_utf8_put(out != NULL ? out + o : tmp, cp);
    }
    *out_len = o;
    return true;
}

/* ---------------------------------------------------------------- accessors */

static bool decode_into(stg_pickle_walker *w, const stg_pv *v, uint8_t **buf, size_t *bytes,
                        const uint8_t **out, size_t *len)
{
    if (v->kind != STG_PV_STR && v->kind != STG_PV_BYTES) {
        return false;
    }
    if ((v->flags & STG_PV_F_HUGE) != 0 || v->a > w->len || v->n > w->len - v->a) {
        return false;
    }
    const uint8_t *src = w->buf + v->a;
    size_t n = v->n;
    if (v->enc == STG_ENC_RAW) {
        *out = src;
        *len = n;
        return true;
    }
    size_t need = v->enc == STG_ENC_RAWUNI ? n * 2 + 1 : n + 1;
    if (need > *bytes && stg_arena_grow_buffer(&w->arena, (void **)buf, bytes, need) != 0) {
        w->arena.failed = 0;
        return false;
    }
    bool ok = v->enc == STG_ENC_RAWUNI ? decode_rawuni(src, n, *buf, len)
                                       : decode_escaped(src, n, *buf, len);
    *out = *buf;
    return ok;
}

bool stg_pickle_bytes(stg_pickle_walker *w, const stg_pv *v, const uint8_t **out, size_t *len)
{
    return decode_into(w, v, &w->scratch, &w->scratch_bytes, out, len);
}

bool stg_pickle_int(const stg_pv *v, int64_t *out)
{
    if (v->kind == STG_PV_INT || v->kind == STG_PV_BOOL) {
        *out = (int64_t)v->a;
        return true;
    }
    return false;
}

bool stg_pickle_tuple_at(const stg_pickle_walker *w, const stg_pv *t, uint32_t i, stg_pv *out)
{
    if (t->kind != STG_PV_TUPLE || t->n == STG_PV_UNTRACKED || i >= t->n || t->a >= w->npool ||
        t->n > w->npool - t->a) {
        return false;
    }
    *out = w->pool[t->a + i];
    return true;
}

bool stg_pickle_call_args(const stg_pickle_walker *w, const stg_pv *call, stg_pv *out)
{
    if (call->kind != STG_PV_CALL || call->a >= w->npool) {
        return false;
    }
    *out = w->pool[call->a];
    return true;
}

bool stg_pickle_dict_get(stg_pickle_walker *w, const stg_pv *d, const char *key, stg_pv *out)
{
    if (d->kind != STG_PV_DICT || d->n == STG_PV_UNTRACKED || d->a >= w->npool ||
        (uint64_t)d->n * 2 > w->npool - d->a) {
        return false;
    }
    size_t klen = strlen(key);
    bool found = false;
    for (uint32_t i = 0; i < d->n; i++) {
        const stg_pv *k = &w->pool[d->a + 2u * i];
        const uint8_t *kb;
        size_t kl;
        if (k->kind == STG_PV_STR && k->n <= 4 * klen + 2 && stg_pickle_bytes(w, k, &kb, &kl) &&
            kl == klen && memcmp(kb, key, klen) == 0) {
            *out = w->pool[d->a + 2u * i + 1]; /* last one wins, as in a dict */
            found = true;
        }
    }
    return found;
}

/* ---------------------------------------------------------------- the walk */

static stg_pickle_status push_string(stg_pickle_walker *w, stg_cursor *c, stg_pv_kind kind,
                                     uint64_t n, bool check_utf8, uint64_t op_off)
{
    if (n > stg_cur_avail(c)) {
        FAIL(w, op_off, PAST_END_STRING);
    }
    if (n > w->lim.max_string && w->hooks->string_limit != NULL) {
        w->hooks->string_limit(w->hooks->ctx, op_off, n);
    }
    stg_pv v = pv_string(kind, STG_ENC_RAW, c->pos, n);
    if (check_utf8 && n <= w->lim.max_string && !utf8_valid(c->base + c->pos, (size_t)n, true)) {
        FAIL(w, op_off, "a BINUNICODE argument is not valid UTF-8");
    }
    c->pos += (size_t)n;
    return push(w, &v, op_off);
}

static uint32_t call_global_hook(stg_pickle_walker *w, const uint8_t *m, size_t ml,
                                 const uint8_t *nm, size_t nl, uint64_t off)
{
    if (w->hooks->global == NULL) {
        return 0;
    }
    return w->hooks->global(w->hooks->ctx, m, ml, nm, nl, off);
}

static void call_hook(stg_pickle_walker *w, uint8_t op, const stg_pv *callable, const stg_pv *args,
                      uint64_t off)
{
    if (w->hooks->call != NULL) {
        w->hooks->call(w->hooks->ctx, w, op, callable, args, off);
    }
}

static void mutate_hook(stg_pickle_walker *w, uint8_t op, const stg_pv *target, uint64_t off)
{
    if (target->kind == STG_PV_GLOBAL && w->hooks->mutate_global != NULL) {
        w->hooks->mutate_global(w->hooks->ctx, op, target, off);
    }
}

static stg_pv call_result(stg_pickle_walker *w, const stg_pv *callable, const stg_pv *args)
{
    stg_pv r = pv_make(STG_PV_CALL);
    r.n = callable->kind == STG_PV_GLOBAL ? callable->n : 0;
    r.flags = callable->flags;
    r.a = pool_put(w, args, 1);
    return r;
}

/* A GLOBAL/INST line pair: both UTF-8 (strict), newline excluded. */
/* A module name the unpickler could import (applied to the first component of a GLOBAL/INST
 * module line): dot-separated components,
 * none empty, none starting with a digit, none holding ASCII space or punctuation other than
 * '_'. find_class imports the module before anything else happens, and no importable module or
 * attribute has such a name, so a line that breaks this rule ends the load right there, before
 * any call: the bytes are text (a README, requirements.txt, CMakeLists.txt, YAML, a git object),
 * not a pickle. Control bytes, NUL and non-ASCII stay allowed: they fail closed (the global is
 * reported, exact bytes kept). */
static bool importable_dotted(const uint8_t *s, size_t n)
{
    bool start = true;
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = s[i];
        if (ch == '.') {
            if (start) {
                return false; /* empty component */
            }
            start = true;
            continue;
        }
        bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                    ch >= 0x80 || ch < 0x20 || ch == 0x7f;
        bool digit = ch >= '0' && ch <= '9';
        if (!(word || (digit && !start)) || ch == '\t' || ch == '\r') {
            return false;
        }
        start = false;
    }
    return !start;
}

static stg_pickle_status read_global_lines(stg_pickle_walker *w, stg_cursor *c, uint64_t off,
                                           stg_pv *out)
{
    const uint8_t *m, *nm;
    size_t ml, nl;
    if (!read_line(c, &m, &ml) || !read_line(c, &nm, &nl)) {
        FAIL(w, off, "a GLOBAL/INST argument is not two complete lines");
    }
    if (!utf8_valid(m, ml, false) || !utf8_valid(nm, nl, false)) {
        FAIL(w, off, "a GLOBAL/INST module or name is not valid UTF-8");
    }
    /* Only the module decides: find_class imports it first (an import can act by itself), and
     * looks the name up after. */
    /* __import__ imports a dotted name's parents first: once the first component is a name,
     * something may be imported, so only a first component that is no name makes the bytes
     * text. */
    const uint8_t *dot = ml > 0 ? memchr(m, '.', ml) : NULL;
    if (!importable_dotted(m, dot != NULL ? (size_t)(dot - m) : ml)) {
        FAIL(w, off, STG_PICKLE_MSG_NOT_A_NAME);
    }
    *out = pv_make(STG_PV_GLOBAL);
    out->n = call_global_hook(w, m, ml, nm, nl, off);
    out->a = off;
    return STG_PW_STOP;
}

#define CHECK(expr)                     \
    do {                                \
        stg_pickle_status st_ = (expr); \
        if (st_ != STG_PW_STOP) {       \
            return st_;                 \
        }                               \
    } while (0)

#define NEED(cond, msg)           \
    do {                          \
        if (!(cond)) {            \
            FAIL(w, op_off, msg); \
        }                         \
    } while (0)

static const char UNDERFLOW[] = "the stack has no value there (underflow or below a MARK)";
static const char NOMARK[] = "the opcode needs a MARK that is not there";
#define TRUNC PAST_END_ARG

static stg_pickle_status start_level(stg_pickle_walker *w, uint64_t off)
{
    if (w->level >= w->lim.max_inline) {
        return limit_hit(w, off, "max_nesting", w->lim.max_inline);
    }
    if (w->next_id == UINT32_MAX) {
        return limit_hit(w, off, "max_pickle_memo", w->lim.max_memo);
    }
    w->level++;
    struct stg_pickle_level *lv = &w->levels[w->level];
    lv->stack_base = w->sp;
    lv->marks_base = w->nmarks;
    lv->memo_len = 0;
    lv->id = w->next_id++;
    refence(w);
    return STG_PW_STOP;
}

stg_pickle_status stg_pickle_walk(stg_pickle_walker *w, const uint8_t *buf, size_t len,
                                  size_t start, size_t *end)
{
    w->buf = buf;
    w->len = len;
    w->sp = 0;
    w->nmarks = 0;
    w->npool = 0;
    w->fence_at = 0;
    w->level = 0;
    w->proto = 0;
    w->frame_end = 0;
    w->err_offset = 0;
    w->err_msg = NULL;
    w->err_limit = NULL;
    w->err_value = 0;
    w->memo_count = 0;
    w->memo_total = 0;
    w->memo_sparse_seen = false;
    if (w->next_id == 0 || w->next_id > UINT32_MAX - 64) {
        /* First walk, or ids about to wrap: forget every slot. */
        if (w->memo != NULL) {
            memset(w->memo, 0, w->memo_bytes);
        }
        if (w->dense != NULL) {
            memset(w->dense, 0, w->dense_bytes);
        }
        w->next_id = 1;
    }
    w->walk_first_id = w->next_id;
    memset(&w->levels[0], 0, sizeof w->levels[0]);
    w->levels[0].id = w->next_id++;

    stg_cursor cur = stg_cur_make(buf, len);
    stg_cursor *c = &cur;
    if (stg_cur_seek(c, start) != STG_OK) {
        w->err_offset = len;
        w->err_msg = "no data";
        return STG_PW_MALFORMED;
    }
    for (;;) {
        uint64_t op_off = c->pos;
        uint8_t op;
        if (stg_cur_u8(c, &op) != STG_OK) {
            FAIL(w, op_off, PAST_END_STOP);
        }
        w->opcodes++;
        stg_pv v, x, y, z;
        uint32_t k;
        const uint8_t *p;
        size_t n;
        uint64_t u64;
        bool neg;
        switch (op) {
        case OP_MARK:
            if (w->nmarks >= w->lim.max_stack) {
                return limit_hit(w, op_off, "max_pickle_stack", w->lim.max_stack);
            }
            if (((size_t)w->nmarks + 1) * sizeof(uint32_t) > w->marks_bytes &&
                stg_arena_grow_buffer(&w->arena, (void **)&w->marks, &w->marks_bytes,
                                      ((size_t)w->nmarks + 1) * sizeof(uint32_t)) != 0) {
                return nomem(w, op_off);
            }
            w->marks[w->nmarks++] = w->sp;
            w->fence_at = w->sp;
            break;
        case OP_STOP:
            NEED(pop(w, &v), UNDERFLOW);
            if (w->frame_end != 0 && c->pos < w->frame_end && w->hooks->frame_divergence != NULL) {
                /* The pure-Python reader drops the rest of the frame; _pickle does not. */
                w->hooks->frame_divergence(w->hooks->ctx, op_off);
            }
            if (w->level > 0) {
                /* End of an inline pickle: back to the enclosing one. */
                w->sp = w->levels[w->level].stack_base;
                w->nmarks = w->levels[w->level].marks_base;
                w->level--;
                refence(w);
                break;
            }
            *end = c->pos;
            return STG_PW_STOP;
        case OP_POP:
            if (w->nmarks > w->levels[w->level].marks_base && w->marks[w->nmarks - 1] == w->sp) {
                w->nmarks--; /* POP of a mark on top, as _pickle does */
                refence(w);
            } else {
                NEED(pop(w, &v), UNDERFLOW);
            }
            break;
        case OP_POP_MARK:
            NEED(marker(w, &k), NOMARK);
            w->sp = k;
            break;
        case OP_DUP:
            NEED(w->sp > fence(w), UNDERFLOW);
            v = w->stack[w->sp - 1];
            CHECK(push(w, &v, op_off));
            break;
        case OP_FLOAT:
        case OP_INT:
        case OP_LONG:
            NEED(read_line(c, &p, &n), TRUNC);
            v = pv_make(STG_PV_FLOAT);
            if (op == OP_INT && n == 2 && p[0] == '0' && (p[1] == '0' || p[1] == '1')) {
                v.kind = STG_PV_BOOL;
                v.a = p[1] == '1';
            } else if (op == OP_FLOAT) {
                NEED(float_line(p, n), "a FLOAT argument is not a number");
            } else {
                if (op == OP_LONG && n > 0 && p[n - 1] == 'L') {
                    n--;
                }
                NEED(int_line(p, n, &v), "an INT/LONG argument is not a number");
            }
            CHECK(push(w, &v, op_off));
            break;
        case OP_BININT:
        case OP_BININT1:
        case OP_BININT2: {
            size_t width = op == OP_BININT ? 4 : op == OP_BININT2 ? 2 : 1;
            NEED(stg_cur_take(c, width, &p) == STG_OK, TRUNC);
            v = pv_make(STG_PV_INT);
            if (width == 4) {
                v.a = (uint64_t)(int64_t)(int32_t)stg_le32(p);
            } else {
                v.a = width == 2 ? stg_le16(p) : p[0];
            }
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_LONG1:
        case OP_LONG4: {
            if (op == OP_LONG1) {
                NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
                u64 = p[0];
            } else {
                NEED(stg_cur_take(c, 4, &p) == STG_OK, TRUNC);
                int32_t s32 = (int32_t)stg_le32(p);
                NEED(s32 >= 0, "a LONG4 byte count is negative");
                u64 = (uint64_t)s32;
            }
            NEED(u64 <= stg_cur_avail(c), TRUNC);
            NEED(stg_cur_take(c, (size_t)u64, &p) == STG_OK, TRUNC);
            v = pv_make(u64 <= 8 ? STG_PV_INT : STG_PV_BIGINT);
            if (u64 <= 8) {
                uint64_t val = 0;
                for (size_t i = 0; i < u64; i++) {
                    val |= (uint64_t)p[i] << (8 * i);
                }
                if (u64 > 0 && u64 < 8 && (p[u64 - 1] & 0x80) != 0) {
                    val |= ~(uint64_t)0 << (8 * u64); /* sign-extend */
                }
                v.a = val;
            }
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_BINFLOAT:
            NEED(stg_cur_skip(c, 8) == STG_OK, TRUNC);
            v = pv_make(STG_PV_FLOAT);
            CHECK(push(w, &v, op_off));
            break;
        case OP_NONE:
            v = pv_make(STG_PV_NONE);
            CHECK(push(w, &v, op_off));
            break;
        case OP_NEWTRUE:
        case OP_NEWFALSE:
            v = pv_make(STG_PV_BOOL);
            v.a = op == OP_NEWTRUE;
            CHECK(push(w, &v, op_off));
            break;
        case OP_PERSID:
            NEED(read_line(c, &p, &n), TRUNC);
            for (size_t i = 0; i < n; i++) {
                NEED(p[i] < 0x80, "a PERSID argument is not ASCII");
            }
            v = pv_string(STG_PV_STR, STG_ENC_RAW, (uint64_t)(p - buf), n);
            if (w->hooks->persid != NULL) {
                w->hooks->persid(w->hooks->ctx, w, &v, op_off);
            }
            v = pv_make(STG_PV_PERSISTENT);
            CHECK(push(w, &v, op_off));
            break;
        case OP_BINPERSID:
            NEED(pop(w, &v), UNDERFLOW);
            if (w->hooks->persid != NULL) {
                w->hooks->persid(w->hooks->ctx, w, &v, op_off);
            }
            v = pv_make(STG_PV_PERSISTENT);
            CHECK(push(w, &v, op_off));
            break;
        case OP_STRING: {
            NEED(read_line(c, &p, &n), TRUNC);
            NEED(n >= 2 && p[0] == p[n - 1] && (p[0] == '\'' || p[0] == '"'),
                 "the STRING opcode argument must be quoted");
            size_t dl;
            NEED(decode_escaped(p + 1, n - 2, NULL, &dl), "a STRING argument has a bad escape");
            if (n - 2 > w->lim.max_string && w->hooks->string_limit != NULL) {
                w->hooks->string_limit(w->hooks->ctx, op_off, n - 2);
            }
            v = pv_string(STG_PV_STR, STG_ENC_ESCAPED, (uint64_t)(p + 1 - buf), n - 2);
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_UNICODE: {
            NEED(read_line(c, &p, &n), TRUNC);
            size_t dl;
            NEED(decode_rawuni(p, n, NULL, &dl), "a UNICODE argument has a bad \\u escape");
            if (n > w->lim.max_string && w->hooks->string_limit != NULL) {
                w->hooks->string_limit(w->hooks->ctx, op_off, n);
            }
            v = pv_string(STG_PV_STR, STG_ENC_RAWUNI, (uint64_t)(p - buf), n);
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_BINSTRING: {
            NEED(stg_cur_take(c, 4, &p) == STG_OK, TRUNC);
            int32_t s32 = (int32_t)stg_le32(p);
            NEED(s32 >= 0, "a BINSTRING byte count is negative");
            CHECK(push_string(w, c, STG_PV_STR, (uint64_t)s32, false, op_off));
            break;
        }
        case OP_SHORT_BINSTRING:
        case OP_SHORT_BINBYTES:
        case OP_SHORT_BINUNICODE:
            NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
            CHECK(push_string(w, c, op == OP_SHORT_BINBYTES ? STG_PV_BYTES : STG_PV_STR, p[0],
                              op == OP_SHORT_BINUNICODE, op_off));
            break;
        case OP_BINUNICODE:
        case OP_BINBYTES:
            NEED(stg_cur_take(c, 4, &p) == STG_OK, TRUNC);
            CHECK(push_string(w, c, op == OP_BINBYTES ? STG_PV_BYTES : STG_PV_STR, stg_le32(p),
                              op == OP_BINUNICODE, op_off));
            break;
        case OP_BINUNICODE8:
        case OP_BINBYTES8:
        case OP_BYTEARRAY8:
            NEED(stg_cur_take(c, 8, &p) == STG_OK, TRUNC);
            u64 = stg_le64(p);
            NEED(u64 <= STG_SSIZE_MAX, "a byte count exceeds the largest Python size");
            CHECK(push_string(w, c, op == OP_BINUNICODE8 ? STG_PV_STR : STG_PV_BYTES, u64,
                              op == OP_BINUNICODE8, op_off));
            break;
        case OP_EMPTY_TUPLE:
            v = make_container(w, STG_PV_TUPLE, NULL, 0, STG_POOL_TUPLE_MAX);
            CHECK(push(w, &v, op_off));
            break;
        case OP_TUPLE1:
        case OP_TUPLE2:
        case OP_TUPLE3: {
            uint32_t cnt = (uint32_t)(op - OP_TUPLE1 + 1);
            NEED(w->sp >= fence(w) + cnt, UNDERFLOW);
            w->sp -= cnt;
            v = make_container(w, STG_PV_TUPLE, &w->stack[w->sp], cnt, STG_POOL_TUPLE_MAX);
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_TUPLE:
        case OP_LIST:
        case OP_DICT:
        case OP_FROZENSET: {
            NEED(marker(w, &k), NOMARK);
            uint32_t cnt = w->sp - k;
            if (op == OP_DICT) {
                NEED(cnt % 2 == 0, "odd number of items for DICT");
            }
            w->sp = k;
            stg_pv_kind kind = op == OP_TUPLE  ? STG_PV_TUPLE
                               : op == OP_LIST ? STG_PV_LIST
                               : op == OP_DICT ? STG_PV_DICT
                                               : STG_PV_SET;
            v = make_container(w, kind, cnt > 0 ? &w->stack[k] : NULL, cnt,
                               kind == STG_PV_TUPLE  ? STG_POOL_TUPLE_MAX
                               : kind == STG_PV_DICT ? STG_POOL_DICT_MAX * 2
                                                     : 0);
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_EMPTY_LIST:
        case OP_EMPTY_DICT:
        case OP_EMPTY_SET:
            v = make_container(w,
                               op == OP_EMPTY_LIST   ? STG_PV_LIST
                               : op == OP_EMPTY_DICT ? STG_PV_DICT
                                                     : STG_PV_SET,
                               NULL, 0, STG_POOL_DICT_MAX);
            CHECK(push(w, &v, op_off));
            break;
        case OP_APPEND:
            NEED(w->sp >= fence(w) + 2, UNDERFLOW);
            v = w->stack[--w->sp];
            mutate_hook(w, op, &w->stack[w->sp - 1], op_off);
            if (w->stack[w->sp - 1].kind == STG_PV_LIST && w->hooks->append != NULL) {
                w->hooks->append(w->hooks->ctx, w, &v);
            }
            break;
        case OP_APPENDS:
        case OP_SETITEMS:
        case OP_ADDITEMS: {
            NEED(marker(w, &k), NOMARK);
            NEED(k > fence(w) && k <= w->sp, UNDERFLOW);
            uint32_t cnt = w->sp - k;
            if (cnt == 0) {
                break; /* nothing is added: _pickle returns before touching the target */
            }
            stg_pv *target = &w->stack[k - 1];
            mutate_hook(w, op, target, op_off);
            if (op == OP_SETITEMS) {
                NEED(cnt % 2 == 0, "odd number of items for SETITEMS");
                if (target->kind == STG_PV_DICT) {
                    dict_extend(w, target, &w->stack[k], cnt / 2);
                }
            } else if (op == OP_APPENDS && target->kind == STG_PV_LIST &&
                       w->hooks->append != NULL) {
                for (uint32_t i = 0; i < cnt; i++) {
                    w->hooks->append(w->hooks->ctx, w, &w->stack[k + i]);
                }
            }
            w->sp = k;
            break;
        }
        case OP_SETITEM:
            NEED(w->sp >= fence(w) + 3, UNDERFLOW);
            w->sp -= 2;
            mutate_hook(w, op, &w->stack[w->sp - 1], op_off);
            if (w->stack[w->sp - 1].kind == STG_PV_DICT) {
                dict_extend(w, &w->stack[w->sp - 1], &w->stack[w->sp], 1);
            }
            break;
        case OP_GET:
        case OP_BINGET:
        case OP_LONG_BINGET: {
            if (op == OP_GET) {
                NEED(read_line(c, &p, &n), TRUNC);
                NEED(parse_dec(p, n, &u64, &neg) && !neg, "a GET index is not a memo index");
            } else if (op == OP_BINGET) {
                NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
                u64 = p[0];
            } else {
                NEED(stg_cur_take(c, 4, &p) == STG_OK, TRUNC);
                u64 = stg_le32(p);
            }
            const stg_pv *got = memo_get(w, u64);
            NEED(got != NULL, "the memo has no value at this index");
            v = *got;
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_PUT:
        case OP_BINPUT:
        case OP_LONG_BINPUT:
        case OP_MEMOIZE:
            if (op == OP_PUT) {
                NEED(read_line(c, &p, &n), TRUNC);
                NEED(parse_dec(p, n, &u64, &neg) && !neg, "a PUT index is not a memo index");
            } else if (op == OP_BINPUT) {
                NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
                u64 = p[0];
            } else if (op == OP_LONG_BINPUT) {
                NEED(stg_cur_take(c, 4, &p) == STG_OK, TRUNC);
                u64 = stg_le32(p);
            } else {
                u64 = w->levels[w->level].memo_len;
            }
            NEED(w->sp > fence(w), UNDERFLOW);
            memo_sparse(w, u64, op_off);
            CHECK(memo_put(w, u64, &w->stack[w->sp - 1], op_off));
            break;
        case OP_GLOBAL:
            CHECK(read_global_lines(w, c, op_off, &v));
            CHECK(push(w, &v, op_off));
            break;
        case OP_INST:
            NEED(marker(w, &k), NOMARK);
            CHECK(read_global_lines(w, c, op_off, &x));
            v = make_container(w, STG_PV_TUPLE, w->sp > k ? &w->stack[k] : NULL, w->sp - k,
                               STG_POOL_TUPLE_MAX);
            w->sp = k;
            call_hook(w, op, &x, &v, op_off);
            y = call_result(w, &x, &v);
            CHECK(push(w, &y, op_off));
            break;
        case OP_OBJ:
            NEED(marker(w, &k), NOMARK);
            NEED(w->sp > k, UNDERFLOW);
            x = w->stack[k];
            v = make_container(w, STG_PV_TUPLE, &w->stack[k + 1], w->sp - k - 1,
                               STG_POOL_TUPLE_MAX);
            w->sp = k;
            call_hook(w, op, &x, &v, op_off);
            y = call_result(w, &x, &v);
            CHECK(push(w, &y, op_off));
            break;
        case OP_REDUCE:
        case OP_NEWOBJ:
            NEED(pop(w, &v), UNDERFLOW);
            NEED(pop(w, &x), UNDERFLOW);
            call_hook(w, op, &x, &v, op_off);
            y = call_result(w, &x, &v);
            CHECK(push(w, &y, op_off));
            break;
        case OP_NEWOBJ_EX:
            NEED(pop(w, &z), UNDERFLOW); /* kwargs */
            NEED(pop(w, &v), UNDERFLOW);
            NEED(pop(w, &x), UNDERFLOW);
            call_hook(w, op, &x, &v, op_off);
            y = call_result(w, &x, &v);
            CHECK(push(w, &y, op_off));
            break;
        case OP_STACK_GLOBAL: {
            NEED(pop(w, &y), UNDERFLOW); /* name */
            NEED(pop(w, &x), UNDERFLOW); /* module */
            v = pv_make(STG_PV_GLOBAL);
            v.a = op_off;
            const uint8_t *mb, *nb;
            size_t ml, nl;
            /* Names longer than STG_PICKLE_NAME_MAX are never on a list; not decoding them
             * keeps a memo-repeated huge operand from costing its length each time. */
            if (x.kind == STG_PV_STR && y.kind == STG_PV_STR && x.n <= STG_PICKLE_NAME_MAX &&
                y.n <= STG_PICKLE_NAME_MAX && ((x.flags | y.flags) & STG_PV_F_HUGE) == 0) {
                NEED(decode_into(w, &x, &w->scratch2, &w->scratch2_bytes, &mb, &ml) &&
                         decode_into(w, &y, &w->scratch, &w->scratch_bytes, &nb, &nl),
                     "a STACK_GLOBAL operand cannot be decoded");
                v.n = call_global_hook(w, mb, ml, nb, nl, op_off);
            } else {
                v.flags = STG_PV_F_UNRESOLVED;
                if (w->hooks->unresolved != NULL) {
                    w->hooks->unresolved(w->hooks->ctx, op_off,
                                         "STACK_GLOBAL operands are not known strings of at "
                                         "most 1024 bytes");
                }
            }
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_EXT1:
        case OP_EXT2:
        case OP_EXT4: {
            size_t width = op == OP_EXT1 ? 1 : op == OP_EXT2 ? 2 : 4;
            NEED(stg_cur_take(c, width, &p) == STG_OK, TRUNC);
            int64_t code = width == 1 ? p[0] : width == 2 ? stg_le16(p) : (int32_t)stg_le32(p);
            NEED(code > 0, "an EXT code is not positive");
            if (w->hooks->unresolved != NULL) {
                w->hooks->unresolved(w->hooks->ctx, op_off,
                                     "EXT1/EXT2/EXT4 name a global through the copyreg "
                                     "extension registry");
            }
            v = pv_make(STG_PV_GLOBAL);
            v.flags = STG_PV_F_UNRESOLVED;
            v.a = op_off;
            CHECK(push(w, &v, op_off));
            break;
        }
        case OP_BUILD: {
            NEED(w->sp >= fence(w) + 2, UNDERFLOW);
            v = w->stack[--w->sp]; /* state */
            stg_pv *target = &w->stack[w->sp - 1];
            mutate_hook(w, op, target, op_off);
            if (w->hooks->build != NULL) {
                uint64_t skip = 0;
                stg_pickle_action act = w->hooks->build(w->hooks->ctx, w, target, &v, c->pos,
                                                        &skip);
                if (act != STG_PICKLE_CONTINUE) {
                    if (w->frame_end != 0 && c->pos != w->frame_end) {
                        /* The payload is read from the file, past any frame: the readers
                         * would not agree where it is. */
                        if (w->hooks->frame_divergence != NULL) {
                            w->hooks->frame_divergence(w->hooks->ctx, op_off);
                        }
                        break;
                    }
                    w->frame_end = 0;
                    *target = pv_make(STG_PV_OTHER);
                    if (act == STG_PICKLE_SKIP) {
                        NEED(skip <= stg_cur_avail(c), PAST_END_INLINE);
                        c->pos += (size_t)skip;
                    } else {
                        CHECK(start_level(w, op_off));
                    }
                }
            }
            break;
        }
        case OP_PROTO:
            NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
            NEED(p[0] <= STG_PICKLE_HIGHEST_PROTOCOL, "unsupported pickle protocol");
            w->proto = p[0];
            break;
        case OP_FRAME:
            NEED(stg_cur_take(c, 8, &p) == STG_OK, TRUNC);
            u64 = stg_le64(p);
            NEED(u64 <= STG_SSIZE_MAX, "a FRAME length exceeds the largest Python size");
            NEED(u64 <= stg_cur_avail(c), PAST_END_FRAME);
            if (w->frame_end != 0 && w->hooks->frame_divergence != NULL) {
                w->hooks->frame_divergence(w->hooks->ctx, op_off); /* op_off < frame_end */
            }
            w->frame_end = c->pos + u64;
            if (w->frame_end == c->pos) {
                w->frame_end = 0;
            }
            continue; /* the frame check below concerns the previous frame only */
        case OP_NEXT_BUFFER:
            v = pv_make(STG_PV_OTHER);
            CHECK(push(w, &v, op_off));
            break;
        case OP_READONLY_BUFFER: NEED(w->sp > fence(w), UNDERFLOW); break;
        default: FAIL(w, op_off, "an unknown opcode");
        }
        /* Invariant at every opcode start: frame_end == 0 or op_off < frame_end (only FRAME, which
         * skips this, sets a frame end; it lies past the FRAME). */
        if (w->frame_end != 0 && c->pos >= w->frame_end) {
            if (c->pos > w->frame_end && w->hooks->frame_divergence != NULL) {
                w->hooks->frame_divergence(w->hooks->ctx, op_off);
            }
            w->frame_end = 0;
        }
    }
}

bool stg_pickle_ran_out(const stg_pickle_walker *w, stg_pickle_status st)
{
    if (st == STG_PW_STOP) {
        return false;
    }
    if (st != STG_PW_MALFORMED) {
        return true; /* limits and memory budgets scale with the data length */
    }
    const char *m = w->err_msg;
    return m == PAST_END_STRING || m == PAST_END_STOP || m == PAST_END_INLINE ||
           m == PAST_END_FRAME || m == PAST_END_ARG;
}
