#include "pickle.h"

#include <string.h>

#include "cursor.h"
#include "hash.h"
#include "mem.h"
#include "text.h"
#include "util.h"

/* Opcodes of protocols 0-5 (Lib/pickletools.py names). */
/* The opcodes by name, from the one table (pickle_ops.def). */
enum {
#define STG_PICKLE_OP(name, byte, arg, width, proto) OP_##name = (byte),
#include "pickle_ops.def"
#undef STG_PICKLE_OP
};

static const stg_pickle_opinfo op_info[256] = {
#define STG_PICKLE_OP(name, byte, arg, width, proto) \
    [(byte)] = {#name, STG_PICKLE_ARG_##arg, (width), (proto)},
#include "pickle_ops.def"
#undef STG_PICKLE_OP
};

#define STG_PICKLE_HIGHEST_PROTOCOL 5
#define STG_SSIZE_MAX ((uint64_t)INT64_MAX)
/* Containers whose elements are kept for hooks: call arguments, persistent ids and object
 * state are short; longer ones are walked but not kept. */
#define STG_POOL_TUPLE_MAX 16u
#define STG_POOL_DICT_MAX 16u
/* Longest STACK_GLOBAL operand decoded (encoded bytes); longer ones are unresolved. */
#define STG_PICKLE_NAME_MAX 1024u
/* Level ids only grow within a walker's life; when fewer than this many are left before
 * UINT32_MAX, a walk clears the memo and starts again at 1 (a walk needs at most
 * STG_PICKLE_LEVELS ids). */
#define STG_PICKLE_ID_HEADROOM 64u
/* First size of the memo hash, in slots (a power of two; it doubles from there). */
#define STG_MEMO_MIN_SLOTS 64u
/* The dense memo covers len / STG_MEMO_DENSE_BYTES + STG_MEMO_DENSE_EXTRA indexes: a memoized
 * value takes at least 4 bytes in real pickles (the hash takes the rest). */
#define STG_MEMO_DENSE_BYTES 4u
#define STG_MEMO_DENSE_EXTRA 1024u
/* Budget on top of the count-derived terms (stg_pickle_init). */
#define STG_PICKLE_BUDGET_EXTRA ((uint64_t)1 << 20)

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

const stg_pickle_opinfo *stg_pickle_opinfo_of(uint8_t op)
{
    return op_info[op].name != NULL ? &op_info[op] : NULL;
}

const char *stg_pickle_opcode_name(uint8_t op)
{
    return op_info[op].name != NULL ? op_info[op].name : "?";
}

/* Stands in for NULL hooks, so the walk tests only the hook it wants to call. */
static const stg_pickle_hooks no_hooks = {0};

void stg_pickle_init(stg_pickle_walker *w, const stg_pickle_limits *lim,
                     const stg_pickle_hooks *hooks)
{
    memset(w, 0, sizeof *w);
    w->lim = *lim;
    if (w->lim.max_inline > STG_PICKLE_INLINE_CEILING) {
        w->lim.max_inline = STG_PICKLE_INLINE_CEILING;
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
    uint64_t cap = stack + memo + pool + scratch + STG_PICKLE_BUDGET_EXTRA;
    if (cap > SIZE_MAX) {
        cap = SIZE_MAX;
    }
    stg_arena_init(&w->arena, (size_t)cap);
}

/* A buffer grown by doubling (stg_arena_grow_buffer) to hold `need` bytes. */
static uint64_t grown_bytes(uint64_t need)
{
    return need <= STG_ARENA_MIN_BUFFER / 2 ? STG_ARENA_MIN_BUFFER : 2 * need;
}

uint64_t stg_pickle_memory_bound(const stg_pickle_limits *lim, size_t len)
{
    uint64_t s = lim->max_stack, m = lim->max_memo;
    uint64_t n = (uint64_t)len > (UINT64_MAX >> 4) ? (UINT64_MAX >> 4) : (uint64_t)len;
    uint64_t stack = grown_bytes(s * sizeof(stg_pv));
    uint64_t marks = grown_bytes(s * sizeof(uint32_t));
    uint64_t pool = grown_bytes(s * sizeof(stg_pv)); /* the pool holds max_stack values */
    uint64_t dense = n / STG_MEMO_DENSE_BYTES + STG_MEMO_DENSE_EXTRA;
    dense = (dense < m ? dense : m) * sizeof(struct stg_memo_dense);
    /* The hash stays under half full: it holds fewer than 4m slots, and while it grows the old
     * table (half the new one) is still there. */
    uint64_t hash = m == 0 ? 0
                           : grown_bytes(2 * m * sizeof(struct stg_memo_slot)) +
                                 grown_bytes(m * sizeof(struct stg_memo_slot));
    /* Decoding a protocol 0 string of k <= len bytes needs 2k + 1 (raw-unicode-escape to
     * UTF-8); STACK_GLOBAL modules (at most STG_PICKLE_NAME_MAX bytes) have their own buffer. */
    uint64_t scratch = grown_bytes(2 * n + 1) + grown_bytes(2 * STG_PICKLE_NAME_MAX + 1);
    return stack + marks + pool + dense + hash + scratch;
}

void stg_pickle_free(stg_pickle_walker *w)
{
    stg_arena_free_buffer(&w->arena, (void **)&w->stack, &w->stack_bytes);
    stg_arena_free_buffer(&w->arena, (void **)&w->marks, &w->marks_bytes);
    stg_arena_free_buffer(&w->arena, (void **)&w->memo, &w->memo_bytes);
    stg_arena_free_buffer(&w->arena, (void **)&w->dense, &w->dense_bytes);
    w->dense_cap = 0;
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
static const char PAST_END_LINES[] = "a GLOBAL/INST argument is not two complete lines";

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
    return STG_PW_OK;
}

static inline stg_pickle_status push(stg_pickle_walker *w, const stg_pv *v, uint64_t off)
{
    if (__builtin_expect(w->sp < w->stack_room, 1)) {
        w->stack[w->sp++] = *v;
        return STG_PW_OK;
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
        w->pool_full = true;
        return STG_PV_NO_POOL;
    }
    /* Here npool + n <= max_pool but > pool_room, so pool_room is pool_bytes / 16 and the pool
     * must grow; n > 0 (n = 0 always takes the fast path). */
    size_t need = ((size_t)w->npool + n) * sizeof(stg_pv);
    if (stg_arena_grow_buffer(&w->arena, (void **)&w->pool, &w->pool_bytes, need) != 0) {
        w->arena.failed = 0; /* a full pool only means "not kept": no error */
        w->pool_full = true;
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

/* Counts a change of value v in the counters of its kind's aliasing check (saturating: a
 * count that wrapped to 0 would call a stale copy current). */
static void count_change(const stg_pv *v, uint32_t *memoized, uint32_t *copied)
{
    if ((v->flags & STG_PV_F_MEMOIZED) != 0 && *memoized < UINT32_MAX) {
        (*memoized)++;
    }
    if ((v->flags & STG_PV_F_COPIED) != 0 && *copied < UINT32_MAX) {
        (*copied)++;
    }
}

/* Appends n >= 1 entries (width values each: 2 for a dict's pairs, 1 for a list's items) to a
 * tracked container in place, keeping at most max entries; past that it is untracked. */
static void container_extend(stg_pickle_walker *w, stg_pv *d, const stg_pv *items, uint32_t n,
                             uint32_t width, uint32_t max)
{
    if (d->n == STG_PV_UNTRACKED) {
        return;
    }
    if (d->n + n > max) {
        d->n = STG_PV_UNTRACKED;
        return;
    }
    uint32_t old = d->n * width;
    if (d->a + old != w->npool) {
        /* Not at the pool's end: move the existing values there first (at most 32). */
        stg_pv tmp[STG_POOL_DICT_MAX * 2];
        memcpy(tmp, &w->pool[d->a], old * sizeof(stg_pv));
        uint64_t at = pool_put(w, tmp, old);
        if (at == STG_PV_NO_POOL) {
            d->n = STG_PV_UNTRACKED;
            return;
        }
        d->a = at;
    }
    if (pool_put(w, items, n * width) == STG_PV_NO_POOL) {
        d->n = STG_PV_UNTRACKED;
        return;
    }
    d->n += n;
}

/* Adds npairs >= 1 key/value pairs to a tracked dict value in place. */
static void dict_extend(stg_pickle_walker *w, stg_pv *d, const stg_pv *pairs, uint32_t npairs)
{
    count_change(d, &w->memoized_dict_changes, &w->copied_dict_changes);
    container_extend(w, d, pairs, npairs, 2, STG_POOL_DICT_MAX);
}

/* APPEND(S) of n >= 1 items to a list value (tracked up to STG_POOL_TUPLE_MAX items). */
static void list_extend(stg_pickle_walker *w, stg_pv *l, const stg_pv *items, uint32_t n)
{
    count_change(l, &w->memoized_list_changes, &w->copied_list_changes);
    container_extend(w, l, items, n, 1, STG_POOL_TUPLE_MAX);
}

/* SETITEM(S) on a list (list[i] = v): which element changed is not followed. */
static void list_untrack(stg_pickle_walker *w, stg_pv *l)
{
    count_change(l, &w->memoized_list_changes, &w->copied_list_changes);
    l->n = STG_PV_UNTRACKED;
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
    uint32_t ncap = w->memo_cap == 0 ? STG_MEMO_MIN_SLOTS : w->memo_cap * 2;
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
    stg_pickle_status st = STG_PW_OK;
    for (uint32_t i = 0; i < old_cap && st == STG_PW_OK; i++) {
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
    uint64_t want = (uint64_t)w->len / STG_MEMO_DENSE_BYTES + STG_MEMO_DENSE_EXTRA;
    if (want > w->lim.max_memo) {
        want = w->lim.max_memo;
    }
    if (key >= want) {
        return false;
    }
    /* A refusal only means the hash takes these keys too: no error. */
    int failed = w->arena.failed, out_of_memory = w->arena.out_of_memory;
    if (stg_arena_zero_buffer(&w->arena, (void **)&w->dense, &w->dense_bytes, (size_t)want,
                              sizeof(struct stg_memo_dense)) != 0) {
        w->arena.failed = failed;
        w->arena.out_of_memory = out_of_memory;
        return false;
    }
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
        return STG_PW_OK;
    }
    struct stg_memo_slot *s = memo_find(w, key, lv->id);
    if (s != NULL) {
        s->v = *v;
        return STG_PW_OK;
    }
    if (w->memo_total >= w->lim.max_memo) {
        return limit_hit(w, off, "max_pickle_memo", w->lim.max_memo);
    }
    if (w->memo_count + 1 > w->memo_cap / 2) {
        stg_pickle_status st = memo_grow(w, off);
        if (st != STG_PW_OK) {
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
    return STG_PW_OK;
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

/* read_line for the walk: a line that no '\n' ends in the data leaves its start in
 * w->open_line (a reader fails there too: stg_pickle_open_line). */
static bool walk_line(stg_pickle_walker *w, stg_cursor *c, const uint8_t **p, size_t *n)
{
    size_t at = c->pos;
    if (read_line(c, p, n)) {
        return true;
    }
    w->open_line = at;
    return false;
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
        int d = stg_hex_digit(p[i]);
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
            int hi = stg_hex_digit(s[i]), lo = stg_hex_digit(s[i + 1]);
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
 * value. out may be NULL to validate; it needs 2 * n bytes. out_len (may be NULL when out is)
 * gets the output's length. */
static bool decode_rawuni(const uint8_t *s, size_t n, uint8_t *out, size_t *out_len)
{
    size_t o = 0;
    uint8_t tmp[4];
    for (size_t i = 0; i < n;) {
        uint8_t ch = s[i];
        if (ch != '\\' && out == NULL) {
            /* validating: up to the next backslash every byte is one code point below U+0100,
             * one UTF-8 byte or two; without out_len only escapes matter (a line of megabytes
             * of tensor data costs a memchr) */
            const uint8_t *bs = memchr(s + i, '\\', n - i);
            size_t end = bs != NULL ? (size_t)(bs - s) : n, high = 0;
            for (size_t j = i; out_len != NULL && j < end; j++) {
                high += (size_t)(s[j] >> 7);
            }
            o += end - i + high;
            i = end;
            continue;
        }
        if (ch != '\\') {
            size_t k = stg_utf8_put(out + o, ch);
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
            int h = stg_hex_digit(s[i + k]);
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
    if (out_len != NULL) {
        *out_len = o;
    }
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

static bool sequence_at(const stg_pickle_walker *w, const stg_pv *t, stg_pv_kind kind, uint32_t i,
                        stg_pv *out)
{
    if (t->kind != kind || t->n == STG_PV_UNTRACKED || i >= t->n || t->a >= w->npool ||
        t->n > w->npool - t->a) {
        return false;
    }
    *out = w->pool[t->a + i];
    return true;
}

bool stg_pickle_tuple_at(const stg_pickle_walker *w, const stg_pv *t, uint32_t i, stg_pv *out)
{
    return sequence_at(w, t, STG_PV_TUPLE, i, out);
}

bool stg_pickle_list_at(const stg_pickle_walker *w, const stg_pv *l, uint32_t i, stg_pv *out)
{
    return sequence_at(w, l, STG_PV_LIST, i, out);
}

bool stg_pickle_list_current(const stg_pickle_walker *w, const stg_pv *l)
{
    bool stale_copy = (l->flags & STG_PV_F_COPIED) != 0 && w->memoized_list_changes > 0;
    bool changed_elsewhere = (l->flags & STG_PV_F_MEMOIZED) != 0 && w->copied_list_changes > 0;
    return l->kind == STG_PV_LIST && l->n != STG_PV_UNTRACKED && !stale_copy && !changed_elsewhere;
}

bool stg_pickle_dict_current(const stg_pickle_walker *w, const stg_pv *d)
{
    bool stale_copy = (d->flags & STG_PV_F_COPIED) != 0 && w->memoized_dict_changes > 0;
    bool changed_elsewhere = (d->flags & STG_PV_F_MEMOIZED) != 0 && w->copied_dict_changes > 0;
    return d->kind == STG_PV_DICT && !stale_copy && !changed_elsewhere;
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
        w->need_end = n > UINT64_MAX - c->pos ? UINT64_MAX : c->pos + n;
        FAIL(w, op_off, PAST_END_STRING);
    }
    if (n > w->lim.max_string && w->hooks->string_limit != NULL) {
        w->hooks->string_limit(w->hooks->ctx, op_off, n);
    }
    stg_pv v = pv_string(kind, STG_ENC_RAW, c->pos, n);
    if (check_utf8 && n <= w->lim.max_string &&
        !stg_utf8_valid(c->base + c->pos, (size_t)n, true, NULL)) {
        FAIL(w, op_off, "a BINUNICODE argument is not valid UTF-8");
    }
    (void)stg_cur_skip(c, (size_t)n); /* n <= avail: checked above */
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

static void copy_hook(stg_pickle_walker *w, const stg_pv *v, uint64_t off)
{
    if (v->kind == STG_PV_GLOBAL && w->hooks->copy_global != NULL) {
        w->hooks->copy_global(w->hooks->ctx, v, off);
    }
}

static void mutate_hook(stg_pickle_walker *w, uint8_t op, const stg_pv *target, uint64_t off)
{
    if (target->kind == STG_PV_GLOBAL && w->hooks->mutate_global != NULL) {
        w->hooks->mutate_global(w->hooks->ctx, op, target, off);
    }
}

static stg_pv call_result(stg_pickle_walker *w, uint8_t op, const stg_pv *callable,
                          const stg_pv *args)
{
    stg_pv r = pv_make(STG_PV_CALL);
    r.n = callable->kind == STG_PV_GLOBAL ? callable->n : 0;
    r.flags = (uint16_t)(callable->flags & STG_PV_F_UNRESOLVED);
    if (op == OP_NEWOBJ || op == OP_NEWOBJ_EX) {
        r.flags |= STG_PV_F_NO_INIT;
    }
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
    if (!walk_line(w, c, &m, &ml) || !walk_line(w, c, &nm, &nl)) {
        FAIL(w, off, PAST_END_LINES);
    }
    if (!stg_utf8_valid(m, ml, false, NULL) || !stg_utf8_valid(nm, nl, false, NULL)) {
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
    return STG_PW_OK;
}

#define CHECK(expr)                     \
    do {                                \
        stg_pickle_status st_ = (expr); \
        if (st_ != STG_PW_OK) {         \
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
    return STG_PW_OK;
}

/* ---------------------------------------------------------------- opcode handlers
 *
 * One handler per opcode family, as CPython's _pickle.c has one load_* function per opcode.
 * Each gets the walker, the cursor just past the opcode byte, the opcode (for handlers shared by
 * several opcodes) and the opcode's offset, and returns STG_PW_OK to go on, STG_PW_STOP when the
 * outermost pickle ended, or the error status (err_* set). */
typedef stg_pickle_status (*stg_pickle_op_fn)(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                              uint64_t op_off);

/* Stack and mark opcodes: MARK, STOP, POP, POP_MARK, DUP. */

static stg_pickle_status load_mark(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    (void)c;
    (void)op;
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
    return STG_PW_OK;
}

static stg_pickle_status load_stop(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    (void)op;
    stg_pv v;
    NEED(pop(w, &v), UNDERFLOW);
    if (w->frame_end != 0 && c->pos < w->frame_end && w->hooks->frame_divergence != NULL) {
        /* The pure-Python reader drops the rest of the frame; _pickle does not. */
        w->hooks->frame_divergence(w->hooks->ctx, op_off);
    }
    if (w->level == 0) {
        w->result = v;
        return STG_PW_STOP;
    }
    /* End of an inline pickle: back to the enclosing one. */
    w->sp = w->levels[w->level].stack_base;
    w->nmarks = w->levels[w->level].marks_base;
    w->level--;
    refence(w);
    return STG_PW_OK;
}

static stg_pickle_status load_pop(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    (void)c;
    (void)op;
    if (w->nmarks > w->levels[w->level].marks_base && w->marks[w->nmarks - 1] == w->sp) {
        w->nmarks--; /* POP of a mark on top, as _pickle does */
        refence(w);
        return STG_PW_OK;
    }
    stg_pv v;
    NEED(pop(w, &v), UNDERFLOW);
    return STG_PW_OK;
}

static stg_pickle_status load_pop_mark(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                       uint64_t op_off)
{
    (void)c;
    (void)op;
    uint32_t k;
    NEED(marker(w, &k), NOMARK);
    w->sp = k;
    return STG_PW_OK;
}

static stg_pickle_status load_dup(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    (void)c;
    (void)op;
    NEED(w->sp > fence(w), UNDERFLOW);
    w->stack[w->sp - 1].flags |= STG_PV_F_MEMOIZED | STG_PV_F_COPIED;
    stg_pv v = w->stack[w->sp - 1];
    CHECK(push(w, &v, op_off));
    copy_hook(w, &v, op_off);
    return STG_PW_OK;
}

/* Constants: FLOAT, INT, LONG (text lines), BININT*, LONG1/LONG4, BINFLOAT, NONE, booleans. */

static stg_pickle_status load_number_line(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                          uint64_t op_off)
{
    const uint8_t *p;
    size_t n;
    NEED(walk_line(w, c, &p, &n), TRUNC);
    stg_pv v = pv_make(STG_PV_FLOAT);
    if (op == OP_INT && n == 2 && p[0] == '0' && (p[1] == '0' || p[1] == '1')) {
        v.kind = STG_PV_BOOL; /* protocol 0 writes True / False as INT 01 / 00 */
        v.a = p[1] == '1';
    } else if (op == OP_FLOAT) {
        NEED(float_line(p, n), "a FLOAT argument is not a number");
    } else {
        if (op == OP_LONG && n > 0 && p[n - 1] == 'L') {
            n--;
        }
        NEED(int_line(p, n, &v), "an INT/LONG argument is not a number");
    }
    return push(w, &v, op_off);
}

static stg_pickle_status load_binint(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                     uint64_t op_off)
{
    size_t width = op_info[op].width;
    const uint8_t *p;
    NEED(stg_cur_take(c, width, &p) == STG_OK, TRUNC);
    stg_pv v = pv_make(STG_PV_INT);
    if (width == 4) {
        v.a = (uint64_t)(int64_t)(int32_t)stg_le32(p);
    } else {
        v.a = width == 2 ? stg_le16(p) : p[0];
    }
    return push(w, &v, op_off);
}

static stg_pickle_status load_long_bin(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                       uint64_t op_off)
{
    const uint8_t *p;
    uint64_t u64;
    if (op_info[op].width == 1) { /* LONG1 */
        NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
        u64 = p[0];
    } else { /* LONG4: a signed 4-byte count */
        NEED(stg_cur_take(c, op_info[op].width, &p) == STG_OK, TRUNC);
        int32_t s32 = (int32_t)stg_le32(p);
        NEED(s32 >= 0, "a LONG4 byte count is negative");
        u64 = (uint64_t)s32;
    }
    NEED(u64 <= stg_cur_avail(c), TRUNC);
    NEED(stg_cur_take(c, (size_t)u64, &p) == STG_OK, TRUNC);
    stg_pv v = pv_make(u64 <= 8 ? STG_PV_INT : STG_PV_BIGINT);
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
    return push(w, &v, op_off);
}

static stg_pickle_status load_binfloat(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                       uint64_t op_off)
{
    (void)op;
    NEED(stg_cur_skip(c, 8) == STG_OK, TRUNC);
    stg_pv v = pv_make(STG_PV_FLOAT);
    return push(w, &v, op_off);
}

static stg_pickle_status load_none(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    (void)c;
    (void)op;
    stg_pv v = pv_make(STG_PV_NONE);
    return push(w, &v, op_off);
}

static stg_pickle_status load_bool(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    (void)c;
    stg_pv v = pv_make(STG_PV_BOOL);
    v.a = op == OP_NEWTRUE;
    return push(w, &v, op_off);
}

/* The text line argument of PERSID, STRING and UNICODE: its offset and bytes (newline
 * excluded). */
typedef struct stg_text_arg {
    uint64_t at;
    const uint8_t *p;
    size_t n;
} stg_text_arg;

static stg_pickle_status read_text_arg(stg_pickle_walker *w, stg_cursor *c, uint64_t op_off,
                                       stg_text_arg *t)
{
    t->at = c->pos;
    NEED(walk_line(w, c, &t->p, &t->n), TRUNC);
    return STG_PW_OK;
}

/* Persistent ids: PERSID (a text line), BINPERSID (a stack value). */

static const char NO_PERSISTENT_LOAD[] =
    "a persistent id, and the reader sets no persistent_load (it raises UnpicklingError)";

static stg_pickle_status persistent_result(stg_pickle_walker *w, const stg_pv *pid, uint64_t op_off)
{
    if (w->hooks->persid != NULL) {
        w->hooks->persid(w->hooks->ctx, w, pid, op_off);
    }
    stg_pv v = pv_make(STG_PV_PERSISTENT);
    return push(w, &v, op_off);
}

static stg_pickle_status load_persid(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                     uint64_t op_off)
{
    (void)op;
    /* The C unpickler raises before it reads the line, so no byte after the opcode matters. */
    NEED(!w->no_persistent_load, NO_PERSISTENT_LOAD);
    stg_text_arg t;
    CHECK(read_text_arg(w, c, op_off, &t));
    for (size_t i = 0; i < t.n; i++) {
        NEED(t.p[i] < 0x80, "a PERSID argument is not ASCII");
    }
    stg_pv pid = pv_string(STG_PV_STR, STG_ENC_RAW, t.at, t.n);
    return persistent_result(w, &pid, op_off);
}

static stg_pickle_status load_binpersid(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                        uint64_t op_off)
{
    (void)c;
    (void)op;
    NEED(!w->no_persistent_load, NO_PERSISTENT_LOAD);
    stg_pv pid;
    NEED(pop(w, &pid), UNDERFLOW);
    return persistent_result(w, &pid, op_off);
}

/* Strings and bytes: STRING, UNICODE (text lines), BINSTRING, the SHORT_* forms, the 4-byte
 * and 8-byte counted forms. */

/* Pushes the text argument of STRING/UNICODE: n encoded bytes at offset `at` (one over
 * max_string is reported). */
static stg_pickle_status push_text_arg(stg_pickle_walker *w, stg_pv_enc enc, uint64_t at,
                                       uint64_t n, uint64_t op_off)
{
    if (n > w->lim.max_string && w->hooks->string_limit != NULL) {
        w->hooks->string_limit(w->hooks->ctx, op_off, n);
    }
    stg_pv v = pv_string(STG_PV_STR, enc, at, n);
    return push(w, &v, op_off);
}

static stg_pickle_status load_string(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                     uint64_t op_off)
{
    (void)op;
    stg_text_arg t;
    CHECK(read_text_arg(w, c, op_off, &t));
    NEED(t.n >= 2 && t.p[0] == t.p[t.n - 1] && (t.p[0] == '\'' || t.p[0] == '"'),
         "the STRING opcode argument must be quoted");
    size_t dl;
    NEED(decode_escaped(t.p + 1, t.n - 2, NULL, &dl), "a STRING argument has a bad escape");
    return push_text_arg(w, STG_ENC_ESCAPED, t.at + 1, t.n - 2, op_off);
}

static stg_pickle_status load_unicode(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                      uint64_t op_off)
{
    (void)op;
    stg_text_arg t;
    CHECK(read_text_arg(w, c, op_off, &t));
    NEED(decode_rawuni(t.p, t.n, NULL, NULL), "a UNICODE argument has a bad \\u escape");
    return push_text_arg(w, STG_ENC_RAWUNI, t.at, t.n, op_off);
}

static stg_pickle_status load_binstring(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                        uint64_t op_off)
{
    (void)op;
    const uint8_t *p;
    NEED(stg_cur_take(c, 4, &p) == STG_OK, TRUNC);
    int32_t s32 = (int32_t)stg_le32(p);
    NEED(s32 >= 0, "a BINSTRING byte count is negative");
    return push_string(w, c, STG_PV_STR, (uint64_t)s32, false, op_off);
}

static stg_pickle_status load_short_binstring(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                              uint64_t op_off)
{
    const uint8_t *p;
    NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
    return push_string(w, c, op == OP_SHORT_BINBYTES ? STG_PV_BYTES : STG_PV_STR, p[0],
                       op == OP_SHORT_BINUNICODE, op_off);
}

static stg_pickle_status load_binstring4(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                         uint64_t op_off)
{
    const uint8_t *p;
    NEED(stg_cur_take(c, 4, &p) == STG_OK, TRUNC);
    return push_string(w, c, op == OP_BINBYTES ? STG_PV_BYTES : STG_PV_STR, stg_le32(p),
                       op == OP_BINUNICODE, op_off);
}

static stg_pickle_status load_binstring8(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                         uint64_t op_off)
{
    const uint8_t *p;
    NEED(stg_cur_take(c, 8, &p) == STG_OK, TRUNC);
    uint64_t u64 = stg_le64(p);
    NEED(u64 <= STG_SSIZE_MAX, "a byte count exceeds the largest Python size");
    return push_string(w, c, op == OP_BINUNICODE8 ? STG_PV_STR : STG_PV_BYTES, u64,
                       op == OP_BINUNICODE8, op_off);
}

/* Containers: tuples, lists, dicts, sets and the opcodes that fill them. */

static stg_pickle_status load_empty_tuple(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                          uint64_t op_off)
{
    (void)c;
    (void)op;
    stg_pv v = make_container(w, STG_PV_TUPLE, NULL, 0, STG_POOL_TUPLE_MAX);
    return push(w, &v, op_off);
}

static stg_pickle_status load_tuple_n(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                      uint64_t op_off)
{
    (void)c;
    uint32_t cnt = (uint32_t)(op - OP_TUPLE1 + 1);
    NEED(w->sp >= fence(w) + cnt, UNDERFLOW);
    w->sp -= cnt;
    stg_pv v = make_container(w, STG_PV_TUPLE, &w->stack[w->sp], cnt, STG_POOL_TUPLE_MAX);
    return push(w, &v, op_off);
}

/* TUPLE, LIST, DICT, FROZENSET: the values above the innermost mark. */
static stg_pickle_status load_marked_container(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                               uint64_t op_off)
{
    (void)c;
    uint32_t k;
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
    stg_pv v = make_container(w, kind, cnt > 0 ? &w->stack[k] : NULL, cnt,
                              kind == STG_PV_TUPLE  ? STG_POOL_TUPLE_MAX
                              : kind == STG_PV_DICT ? STG_POOL_DICT_MAX * 2
                              : kind == STG_PV_LIST ? STG_POOL_TUPLE_MAX
                                                    : 0);
    return push(w, &v, op_off);
}

static stg_pickle_status load_empty_container(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                              uint64_t op_off)
{
    (void)c;
    stg_pv v = make_container(w,
                              op == OP_EMPTY_LIST   ? STG_PV_LIST
                              : op == OP_EMPTY_DICT ? STG_PV_DICT
                                                    : STG_PV_SET,
                              NULL, 0, STG_POOL_DICT_MAX);
    return push(w, &v, op_off);
}

static stg_pickle_status load_append(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                     uint64_t op_off)
{
    (void)c;
    NEED(w->sp >= fence(w) + 2, UNDERFLOW);
    stg_pv v = w->stack[--w->sp];
    mutate_hook(w, op, &w->stack[w->sp - 1], op_off);
    if (w->stack[w->sp - 1].kind == STG_PV_LIST) {
        list_extend(w, &w->stack[w->sp - 1], &v, 1);
        if (w->hooks->append != NULL) {
            w->hooks->append(w->hooks->ctx, w, &v);
        }
    }
    return STG_PW_OK;
}

/* APPENDS, SETITEMS, ADDITEMS: the values above the innermost mark go into the value below it. */
static stg_pickle_status load_marked_add(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                         uint64_t op_off)
{
    (void)c;
    uint32_t k;
    NEED(marker(w, &k), NOMARK);
    NEED(k > fence(w) && k <= w->sp, UNDERFLOW);
    uint32_t cnt = w->sp - k;
    if (cnt == 0) {
        return STG_PW_OK; /* nothing is added: _pickle returns before touching the target */
    }
    stg_pv *target = &w->stack[k - 1];
    mutate_hook(w, op, target, op_off);
    if (op == OP_SETITEMS) {
        NEED(cnt % 2 == 0, "odd number of items for SETITEMS");
        if (target->kind == STG_PV_DICT) {
            dict_extend(w, target, &w->stack[k], cnt / 2);
        } else if (target->kind == STG_PV_LIST) {
            list_untrack(w, target);
        }
    } else if (op == OP_APPENDS && target->kind == STG_PV_LIST) {
        list_extend(w, target, &w->stack[k], cnt);
        for (uint32_t i = 0; i < cnt && w->hooks->append != NULL; i++) {
            w->hooks->append(w->hooks->ctx, w, &w->stack[k + i]);
        }
    }
    w->sp = k;
    return STG_PW_OK;
}

static stg_pickle_status load_setitem(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                      uint64_t op_off)
{
    (void)c;
    NEED(w->sp >= fence(w) + 3, UNDERFLOW);
    w->sp -= 2;
    mutate_hook(w, op, &w->stack[w->sp - 1], op_off);
    if (w->stack[w->sp - 1].kind == STG_PV_DICT) {
        dict_extend(w, &w->stack[w->sp - 1], &w->stack[w->sp], 1);
    } else if (w->stack[w->sp - 1].kind == STG_PV_LIST) {
        list_untrack(w, &w->stack[w->sp - 1]);
    }
    return STG_PW_OK;
}

/* Memo: GET, BINGET, LONG_BINGET; PUT, BINPUT, LONG_BINPUT, MEMOIZE. */

/* The index argument of GET/BINGET/LONG_BINGET and PUT/BINPUT/LONG_BINPUT: a decimal line,
 * one byte or a little-endian uint32. */
static stg_pickle_status read_memo_index(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                         uint64_t op_off, uint64_t *index)
{
    const uint8_t *p;
    if (op == OP_GET || op == OP_PUT) {
        size_t n;
        bool neg;
        NEED(walk_line(w, c, &p, &n), TRUNC);
        NEED(parse_dec(p, n, index, &neg) && !neg,
             op == OP_GET ? "a GET index is not a memo index" : "a PUT index is not a memo index");
    } else if (op_info[op].width == 1) { /* BINGET, BINPUT */
        NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
        *index = p[0];
    } else { /* LONG_BINGET, LONG_BINPUT */
        NEED(stg_cur_take(c, op_info[op].width, &p) == STG_OK, TRUNC);
        *index = stg_le32(p);
    }
    return STG_PW_OK;
}

static stg_pickle_status load_get(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    uint64_t index;
    CHECK(read_memo_index(w, c, op, op_off, &index));
    const stg_pv *got = memo_get(w, index);
    NEED(got != NULL, "the memo has no value at this index");
    stg_pv v = *got;
    v.flags |= STG_PV_F_COPIED;
    CHECK(push(w, &v, op_off));
    copy_hook(w, &v, op_off);
    return STG_PW_OK;
}

static stg_pickle_status load_put(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    uint64_t index;
    if (op == OP_MEMOIZE) {
        index = w->levels[w->level].memo_len; /* the next index of this level */
    } else {
        CHECK(read_memo_index(w, c, op, op_off, &index));
    }
    NEED(w->sp > fence(w), UNDERFLOW);
    memo_sparse(w, index, op_off);
    w->stack[w->sp - 1].flags |= STG_PV_F_MEMOIZED;
    return memo_put(w, index, &w->stack[w->sp - 1], op_off);
}

/* Globals and calls: GLOBAL, STACK_GLOBAL, EXT1/2/4; REDUCE, NEWOBJ, NEWOBJ_EX, INST, OBJ;
 * BUILD. */

/* Reports the call and pushes its result. */
static stg_pickle_status call_push(stg_pickle_walker *w, uint8_t op, const stg_pv *callable,
                                   const stg_pv *args, uint64_t op_off)
{
    call_hook(w, op, callable, args, op_off);
    stg_pv r = call_result(w, op, callable, args);
    return push(w, &r, op_off);
}

static stg_pickle_status load_global(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                     uint64_t op_off)
{
    (void)op;
    stg_pv v;
    CHECK(read_global_lines(w, c, op_off, &v));
    return push(w, &v, op_off);
}

static stg_pickle_status load_stack_global(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                           uint64_t op_off)
{
    (void)c;
    (void)op;
    stg_pv x, y;
    NEED(pop(w, &y), UNDERFLOW); /* name */
    NEED(pop(w, &x), UNDERFLOW); /* module */
    stg_pv v = pv_make(STG_PV_GLOBAL);
    v.a = op_off;
    /* Names longer than STG_PICKLE_NAME_MAX are never on a list; not decoding them keeps a
     * memo-repeated huge operand from costing its length each time. */
    if (x.kind == STG_PV_STR && y.kind == STG_PV_STR && x.n <= STG_PICKLE_NAME_MAX &&
        y.n <= STG_PICKLE_NAME_MAX && ((x.flags | y.flags) & STG_PV_F_HUGE) == 0) {
        const uint8_t *mb, *nb;
        size_t ml, nl;
        NEED(decode_into(w, &x, &w->scratch2, &w->scratch2_bytes, &mb, &ml) &&
                 decode_into(w, &y, &w->scratch, &w->scratch_bytes, &nb, &nl),
             "a STACK_GLOBAL operand cannot be decoded");
        v.n = call_global_hook(w, mb, ml, nb, nl, op_off);
    } else {
        v.flags = STG_PV_F_UNRESOLVED;
        if (w->hooks->unresolved != NULL) {
            w->hooks->unresolved(w->hooks->ctx, op_off,
                                 "STACK_GLOBAL operands are not known strings of at most "
                                 "1024 bytes");
        }
    }
    return push(w, &v, op_off);
}

static stg_pickle_status load_ext(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    size_t width = op_info[op].width;
    const uint8_t *p;
    NEED(stg_cur_take(c, width, &p) == STG_OK, TRUNC);
    int64_t code = width == 1 ? p[0] : width == 2 ? stg_le16(p) : (int32_t)stg_le32(p);
    NEED(code > 0, "an EXT code is not positive");
    if (w->hooks->unresolved != NULL) {
        w->hooks->unresolved(w->hooks->ctx, op_off,
                             "EXT1/EXT2/EXT4 name a global through the copyreg extension "
                             "registry");
    }
    stg_pv v = pv_make(STG_PV_GLOBAL);
    v.flags = STG_PV_F_UNRESOLVED;
    v.a = op_off;
    return push(w, &v, op_off);
}

/* REDUCE (callable, args) and NEWOBJ (class, args). */
static stg_pickle_status load_reduce(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                     uint64_t op_off)
{
    (void)c;
    stg_pv callable, args;
    NEED(pop(w, &args), UNDERFLOW);
    NEED(pop(w, &callable), UNDERFLOW);
    return call_push(w, op, &callable, &args, op_off);
}

static stg_pickle_status load_newobj_ex(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                        uint64_t op_off)
{
    (void)c;
    stg_pv cls, args, kwargs;
    NEED(pop(w, &kwargs), UNDERFLOW);
    NEED(pop(w, &args), UNDERFLOW);
    NEED(pop(w, &cls), UNDERFLOW);
    return call_push(w, op, &cls, &args, op_off);
}

/* INST: a class named by two lines, called with the values above the innermost mark. */
static stg_pickle_status load_inst(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    uint32_t k;
    stg_pv cls;
    NEED(marker(w, &k), NOMARK);
    CHECK(read_global_lines(w, c, op_off, &cls));
    stg_pv args = make_container(w, STG_PV_TUPLE, w->sp > k ? &w->stack[k] : NULL, w->sp - k,
                                 STG_POOL_TUPLE_MAX);
    w->sp = k;
    return call_push(w, op, &cls, &args, op_off);
}

/* OBJ: the first value above the innermost mark called with the others. */
static stg_pickle_status load_obj(stg_pickle_walker *w, stg_cursor *c, uint8_t op, uint64_t op_off)
{
    (void)c;
    uint32_t k;
    NEED(marker(w, &k), NOMARK);
    NEED(w->sp > k, UNDERFLOW);
    stg_pv cls = w->stack[k];
    stg_pv args = make_container(w, STG_PV_TUPLE, &w->stack[k + 1], w->sp - k - 1,
                                 STG_POOL_TUPLE_MAX);
    w->sp = k;
    return call_push(w, op, &cls, &args, op_off);
}

static stg_pickle_status load_build(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                    uint64_t op_off)
{
    NEED(w->sp >= fence(w) + 2, UNDERFLOW);
    stg_pv state = w->stack[--w->sp];
    stg_pv *target = &w->stack[w->sp - 1];
    mutate_hook(w, op, target, op_off);
    if (w->hooks->build == NULL) {
        return STG_PW_OK;
    }
    uint64_t skip = 0;
    stg_pickle_action act = w->hooks->build(w->hooks->ctx, w, target, &state, c->pos, &skip);
    if (act == STG_PICKLE_CONTINUE) {
        return STG_PW_OK;
    }
    if (act == STG_PICKLE_ABANDON) {
        FAIL(w, op_off, STG_PICKLE_MSG_ABANDONED);
    }
    if (w->frame_end != 0 && c->pos != w->frame_end) {
        /* The payload is read from the file, past any frame: the readers would not agree
         * where it is. */
        if (w->hooks->frame_divergence != NULL) {
            w->hooks->frame_divergence(w->hooks->ctx, op_off);
        }
        return STG_PW_OK;
    }
    w->frame_end = 0;
    *target = pv_make(STG_PV_OTHER);
    if (act == STG_PICKLE_SKIP) {
        NEED(skip <= stg_cur_avail(c), PAST_END_INLINE);
        (void)stg_cur_skip(c, (size_t)skip); /* cannot fail: skip bytes are there */
        return STG_PW_OK;
    }
    return start_level(w, op_off);
}

/* Protocol and framing: PROTO, FRAME. */

static stg_pickle_status load_proto(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                    uint64_t op_off)
{
    (void)op;
    const uint8_t *p;
    NEED(stg_cur_take(c, 1, &p) == STG_OK, TRUNC);
    NEED(p[0] <= STG_PICKLE_HIGHEST_PROTOCOL, "unsupported pickle protocol");
    w->proto = p[0];
    return STG_PW_OK;
}

static stg_pickle_status load_frame(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                    uint64_t op_off)
{
    (void)op;
    const uint8_t *p;
    NEED(stg_cur_take(c, 8, &p) == STG_OK, TRUNC);
    uint64_t u64 = stg_le64(p);
    NEED(u64 <= STG_SSIZE_MAX, "a FRAME length exceeds the largest Python size");
    if (u64 > stg_cur_avail(c)) {
        w->need_end = c->pos + u64; /* u64 <= 2^63 - 1: no overflow */
        FAIL(w, op_off, PAST_END_FRAME);
    }
    if (w->frame_end != 0 && w->hooks->frame_divergence != NULL) {
        w->hooks->frame_divergence(w->hooks->ctx, op_off); /* op_off < frame_end */
    }
    /* The new frame ends past the cursor (or there is none), so the walk's end-of-frame check
     * after this opcode does not fire for it. */
    w->frame_end = u64 == 0 ? 0 : c->pos + u64;
    return STG_PW_OK;
}

/* Out-of-band buffers (protocol 5): NEXT_BUFFER, READONLY_BUFFER. */

static stg_pickle_status load_next_buffer(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                          uint64_t op_off)
{
    (void)c;
    (void)op;
    stg_pv v = pv_make(STG_PV_OTHER);
    return push(w, &v, op_off);
}

static stg_pickle_status load_readonly_buffer(stg_pickle_walker *w, stg_cursor *c, uint8_t op,
                                              uint64_t op_off)
{
    (void)c;
    (void)op;
    NEED(w->sp > fence(w), UNDERFLOW);
    return STG_PW_OK;
}

/* The dispatch table: one entry per opcode of protocols 0-5, NULL for bytes that are none. */
static const stg_pickle_op_fn op_handlers[256] = {
    [OP_MARK] = load_mark,
    [OP_STOP] = load_stop,
    [OP_POP] = load_pop,
    [OP_POP_MARK] = load_pop_mark,
    [OP_DUP] = load_dup,
    [OP_FLOAT] = load_number_line,
    [OP_INT] = load_number_line,
    [OP_LONG] = load_number_line,
    [OP_BININT] = load_binint,
    [OP_BININT1] = load_binint,
    [OP_BININT2] = load_binint,
    [OP_LONG1] = load_long_bin,
    [OP_LONG4] = load_long_bin,
    [OP_BINFLOAT] = load_binfloat,
    [OP_NONE] = load_none,
    [OP_NEWTRUE] = load_bool,
    [OP_NEWFALSE] = load_bool,
    [OP_PERSID] = load_persid,
    [OP_BINPERSID] = load_binpersid,
    [OP_STRING] = load_string,
    [OP_UNICODE] = load_unicode,
    [OP_BINSTRING] = load_binstring,
    [OP_SHORT_BINSTRING] = load_short_binstring,
    [OP_SHORT_BINBYTES] = load_short_binstring,
    [OP_SHORT_BINUNICODE] = load_short_binstring,
    [OP_BINUNICODE] = load_binstring4,
    [OP_BINBYTES] = load_binstring4,
    [OP_BINUNICODE8] = load_binstring8,
    [OP_BINBYTES8] = load_binstring8,
    [OP_BYTEARRAY8] = load_binstring8,
    [OP_EMPTY_TUPLE] = load_empty_tuple,
    [OP_TUPLE1] = load_tuple_n,
    [OP_TUPLE2] = load_tuple_n,
    [OP_TUPLE3] = load_tuple_n,
    [OP_TUPLE] = load_marked_container,
    [OP_LIST] = load_marked_container,
    [OP_DICT] = load_marked_container,
    [OP_FROZENSET] = load_marked_container,
    [OP_EMPTY_LIST] = load_empty_container,
    [OP_EMPTY_DICT] = load_empty_container,
    [OP_EMPTY_SET] = load_empty_container,
    [OP_APPEND] = load_append,
    [OP_APPENDS] = load_marked_add,
    [OP_SETITEMS] = load_marked_add,
    [OP_ADDITEMS] = load_marked_add,
    [OP_SETITEM] = load_setitem,
    [OP_GET] = load_get,
    [OP_BINGET] = load_get,
    [OP_LONG_BINGET] = load_get,
    [OP_PUT] = load_put,
    [OP_BINPUT] = load_put,
    [OP_LONG_BINPUT] = load_put,
    [OP_MEMOIZE] = load_put,
    [OP_GLOBAL] = load_global,
    [OP_STACK_GLOBAL] = load_stack_global,
    [OP_EXT1] = load_ext,
    [OP_EXT2] = load_ext,
    [OP_EXT4] = load_ext,
    [OP_REDUCE] = load_reduce,
    [OP_NEWOBJ] = load_reduce,
    [OP_NEWOBJ_EX] = load_newobj_ex,
    [OP_INST] = load_inst,
    [OP_OBJ] = load_obj,
    [OP_BUILD] = load_build,
    [OP_PROTO] = load_proto,
    [OP_FRAME] = load_frame,
    [OP_NEXT_BUFFER] = load_next_buffer,
    [OP_READONLY_BUFFER] = load_readonly_buffer,
};

/* ---------------------------------------------------------------- the walk */

/* Resets the per-walk state (buffers are kept for reuse). */
static void walk_reset(stg_pickle_walker *w, const uint8_t *buf, size_t len)
{
    w->buf = buf;
    w->len = len;
    w->need_end = 0;
    w->open_line = UINT64_MAX;
    w->pool_full = false;
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
    w->memoized_dict_changes = 0;
    w->copied_dict_changes = 0;
    w->memoized_list_changes = 0;
    w->copied_list_changes = 0;
    w->result = pv_make(STG_PV_NONE);
    if (w->next_id == 0 || w->next_id > UINT32_MAX - STG_PICKLE_ID_HEADROOM) {
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
}

stg_pickle_status stg_pickle_walk(stg_pickle_walker *w, const uint8_t *buf, size_t len,
                                  size_t start, size_t *end)
{
    walk_reset(w, buf, len);
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
        stg_pickle_op_fn load = op_handlers[op];
        if (load == NULL) {
            FAIL(w, op_off, "an unknown opcode");
        }
        stg_pickle_status st = load(w, c, op, op_off);
        if (__builtin_expect(st != STG_PW_OK, 0)) {
            if (st == STG_PW_STOP) {
                *end = c->pos;
            }
            return st;
        }
        /* Invariant at every opcode start: frame_end == 0 or op_off < frame_end (only FRAME sets
         * a frame end, and it lies past the FRAME's argument). */
        if (w->frame_end != 0 && c->pos >= w->frame_end) {
            if (c->pos > w->frame_end && w->hooks->frame_divergence != NULL) {
                w->hooks->frame_divergence(w->hooks->ctx, op_off);
            }
            w->frame_end = 0;
        }
    }
}

uint64_t stg_pickle_open_line(const stg_pickle_walker *w, stg_pickle_status st)
{
    return st == STG_PW_MALFORMED && stg_pickle_ran_out(w, st) ? w->open_line : UINT64_MAX;
}

bool stg_pickle_ran_out_of(const stg_pickle_walker *w, stg_pickle_status st, uint64_t total)
{
    return stg_pickle_ran_out(w, st) && !(w->need_end > total);
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
           m == PAST_END_FRAME || m == PAST_END_ARG || m == PAST_END_LINES;
}
