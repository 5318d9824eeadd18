/* The converter's restricted pickle evaluator (eval.h). One handler per opcode family, a loop
 * with an explicit stack, and every value from one capped arena. */
#include "eval.h"

#include <string.h>

#include "../parser/cursor.h"
#include "../parser/hash.h"
#include "../parser/mem.h"
#include "../parser/pickle.h"
#include "../parser/text.h"
#include "../parser/util.h"

/* The opcodes by name, from the walker's table (parser/pickle_ops.def). */
enum {
#define STG_PICKLE_OP(name, byte, arg, width, proto) OP_##name = (byte),
#include "../parser/pickle_ops.def"
#undef STG_PICKLE_OP
};

/* Elements of one container; dicts count pairs. 16 M: more than any real state_dict. */
#define STG_CV_ITEMS_DEFAULT (16u << 20)
#define STG_CV_STORAGES_DEFAULT (1u << 20)

struct memo_slot {
    uint64_t hash;
    uint64_t index;
    stg_cv *v;
};

struct skey_slot {
    uint64_t hash;
    uint32_t index; /* into storages */
};

void stg_cv_limits_from(const stg_limits *lim, stg_cv_limits *out)
{
    stg_limits def;
    if (lim == NULL) {
        stg_limits_default(&def);
        lim = &def;
    }
    out->max_stack = lim->max_pickle_stack;
    out->max_memo = lim->max_pickle_memo;
    out->max_items = STG_CV_ITEMS_DEFAULT;
    out->max_storages = STG_CV_STORAGES_DEFAULT;
    out->max_rank = lim->max_rank < STG_CV_RANK_MAX ? lim->max_rank : STG_CV_RANK_MAX;
    /* The pickle's values: a few hundred bytes per tensor at most; 1 GiB covers millions. */
    out->max_memory = (uint64_t)1 << 30;
    out->hash_seed = STG_HASH_SEED_DEFAULT;
    out->max_inflate_bytes = lim->max_inflate_bytes;
    out->max_inflate_ratio = lim->max_inflate_ratio;
}

void stg_cv_init(stg_cv_eval *e, const stg_cv_limits *lim)
{
    memset(e, 0, sizeof *e);
    e->lim = *lim;
    stg_arena_init(&e->arena, (size_t)lim->max_memory);
    uint32_t memo_slots = 1u << 30;
    stg_map_init(&e->memo, sizeof(struct memo_slot), lim->hash_seed, memo_slots);
    stg_map_init(&e->skeys, sizeof(struct skey_slot), lim->hash_seed ^ 0x5bd1e995u, memo_slots);
    /* exact maps: a key with no slot within the probe ceiling goes to a short list */
    stg_map_set_overflow(&e->memo, 64);
    stg_map_set_overflow(&e->skeys, 64);
}

/* A buffer of stg_arena_grow_buffer back to the system. */
static void drop(stg_cv_eval *e, void **buf, uint32_t cap, size_t elsize)
{
    size_t bytes = (size_t)cap * elsize;
    stg_arena_free_buffer(&e->arena, buf, &bytes);
}

void stg_cv_free(stg_cv_eval *e)
{
    drop(e, (void **)&e->stack, e->stack_cap, sizeof *e->stack);
    drop(e, (void **)&e->marks, e->marks_cap, sizeof *e->marks);
    drop(e, (void **)&e->storages, e->storages_cap, sizeof *e->storages);
    for (uint32_t i = 0; i < e->nowned; i++) {
        stg_mem_free(e->owned[i]);
    }
    drop(e, (void **)&e->owned, e->owned_cap, sizeof *e->owned);
    stg_map_free(&e->memo);
    stg_map_free(&e->skeys);
    stg_arena_release(&e->arena);
    memset(e, 0, sizeof *e);
}

bool stg_cv_keep(stg_cv_eval *e, void *p)
{
    if (e->nowned == e->owned_cap) {
        size_t bytes = (size_t)e->owned_cap * sizeof *e->owned;
        if (stg_arena_grow_buffer(&e->arena, (void **)&e->owned, &bytes,
                                  ((size_t)e->owned_cap + 1) * sizeof *e->owned) != 0) {
            stg_mem_free(p);
            return false;
        }
        e->owned_cap = (uint32_t)(bytes / sizeof *e->owned);
    }
    e->owned[e->nowned++] = p;
    return true;
}

/* ---------------------------------------------------------------- errors and memory */

typedef struct run {
    stg_cv_eval *e;
    stg_cursor c;
    uint64_t op_at;
    uint32_t memo_next; /* MEMOIZE's index: entries so far */
} run;

static bool fail(run *r, stg_code code, const char *what)
{
    if (r->e->err.what == NULL) {
        r->e->err.code = code;
        r->e->err.offset = r->op_at;
        r->e->err.what = what;
    }
    return false;
}

static bool malformed(run *r, const char *what)
{
    return fail(r, STG_PICKLE_MALFORMED, what);
}

static bool unsupported(run *r, const char *what)
{
    return fail(r, STG_CONVERT_UNSUPPORTED, what);
}

static bool limit(run *r, const char *name)
{
    if (r->e->err.what == NULL) {
        r->e->err.limit = name;
    }
    return fail(r, STG_LIMIT_EXCEEDED, "a limit of the converter was hit");
}

static bool nomem(run *r)
{
    return r->e->arena.out_of_memory ? fail(r, STG_LIMIT_EXCEEDED, "the system refused memory")
                                     : limit(r, "max_memory");
}

static void *alloc(run *r, size_t n)
{
    void *p = stg_arena_alloc(&r->e->arena, n, 8);
    if (p == NULL) {
        (void)nomem(r);
    }
    return p;
}

static stg_cv *new_value(run *r, stg_cv_kind kind)
{
    stg_cv *v = alloc(r, sizeof *v);
    if (v != NULL) {
        memset(v, 0, sizeof *v);
        v->kind = (uint8_t)kind;
        v->offset = r->op_at;
    }
    return v;
}

/* Room for `need` items in a LIST/DICT/TUPLE value (dicts: 2 per pair). Old arrays stay in the
 * arena: doubling keeps the waste below the live size. */
static bool reserve_items(run *r, stg_cv *v, uint64_t need)
{
    uint64_t per = v->kind == STG_CV_DICT ? 2 : 1;
    if (need > r->e->lim.max_items) {
        return limit(r, "max_container_items");
    }
    if (need * per <= v->cap) {
        return true;
    }
    uint64_t cap = v->cap < 8 ? 8 : (uint64_t)v->cap * 2;
    while (cap < need * per) {
        cap *= 2;
    }
    stg_cv **items = alloc(r, (size_t)cap * sizeof *items);
    if (items == NULL) {
        return false;
    }
    if (v->cap > 0) {
        memcpy(items, v->u.items, (size_t)(v->n * per) * sizeof *items);
    }
    v->u.items = items;
    v->cap = (uint32_t)cap;
    return true;
}

/* ---------------------------------------------------------------- stack and marks */

/* One more entry for a full array of *cap entries outside the blocks (charged to the arena). */
static bool grow(run *r, void **arr, uint32_t *cap, size_t elsize)
{
    size_t bytes = (size_t)*cap * elsize;
    if (stg_arena_grow_buffer(&r->e->arena, arr, &bytes, ((size_t)*cap + 1) * elsize) != 0) {
        return nomem(r);
    }
    *cap = (uint32_t)(bytes / elsize);
    return true;
}

static bool push(run *r, stg_cv *v)
{
    stg_cv_eval *e = r->e;
    if (v == NULL) {
        return false;
    }
    if ((uint64_t)e->sp + e->nmarks >= e->lim.max_stack) {
        return limit(r, "max_pickle_stack");
    }
    if (e->sp == e->stack_cap && !grow(r, (void **)&e->stack, &e->stack_cap, sizeof *e->stack)) {
        return false;
    }
    e->stack[e->sp++] = v;
    return true;
}

/* Lowest stack index an opcode may pop: above the innermost mark. */
static uint32_t fence(const stg_cv_eval *e)
{
    return e->nmarks > 0 ? e->marks[e->nmarks - 1] : 0;
}

static stg_cv *pop(run *r)
{
    if (r->e->sp <= fence(r->e)) {
        (void)malformed(r, "an opcode pops from an empty stack (or across a MARK)");
        return NULL;
    }
    return r->e->stack[--r->e->sp];
}

static stg_cv *top(run *r)
{
    if (r->e->sp <= fence(r->e)) {
        (void)malformed(r, "an opcode needs a value on an empty stack (or across a MARK)");
        return NULL;
    }
    return r->e->stack[r->e->sp - 1];
}

static bool push_mark(run *r)
{
    stg_cv_eval *e = r->e;
    if ((uint64_t)e->sp + e->nmarks >= e->lim.max_stack) {
        return limit(r, "max_pickle_stack");
    }
    if (e->nmarks == e->marks_cap &&
        !grow(r, (void **)&e->marks, &e->marks_cap, sizeof *e->marks)) {
        return false;
    }
    e->marks[e->nmarks++] = e->sp;
    return true;
}

/* Pops the innermost mark: *from is where the values above it start. */
static bool pop_mark(run *r, uint32_t *from)
{
    if (r->e->nmarks == 0) {
        return malformed(r, "an opcode needs a MARK and there is none");
    }
    *from = r->e->marks[--r->e->nmarks];
    return true;
}

/* ---------------------------------------------------------------- memo */

static bool same_index(const void *slot, const void *key, void *ctx)
{
    (void)ctx;
    return ((const struct memo_slot *)slot)->index == *(const uint64_t *)key;
}

static bool memo_put(run *r, uint64_t index, stg_cv *v)
{
    stg_cv_eval *e = r->e;
    if (v == NULL) {
        return false;
    }
    uint64_t h = stg_map_hash_u64(&e->memo, index, 0);
    void *slot;
    stg_map_status st = stg_map_find(&e->memo, h, same_index, &index, NULL, &slot);
    if (st == STG_MAP_FOUND) {
        ((struct memo_slot *)slot)->v = v;
        return true;
    }
    if (e->memo.count >= e->lim.max_memo) {
        return limit(r, "max_pickle_memo");
    }
    st = stg_map_reserve(&e->memo);
    if (st == STG_MAP_NOMEM) {
        return fail(r, STG_LIMIT_EXCEEDED, "the system refused memory");
    }
    if (st != STG_MAP_OK) {
        return limit(r, "hash_probe_ceiling");
    }
    st = stg_map_find(&e->memo, h, NULL, &index, NULL, &slot);
    if (st != STG_MAP_ABSENT || slot == NULL) {
        return limit(r, "hash_probe_ceiling");
    }
    stg_map_claim(&e->memo, slot, h);
    ((struct memo_slot *)slot)->index = index;
    ((struct memo_slot *)slot)->v = v;
    r->memo_next++;
    return true;
}

static bool memo_get(run *r, uint64_t index)
{
    stg_cv_eval *e = r->e;
    uint64_t h = stg_map_hash_u64(&e->memo, index, 0);
    void *slot;
    if (stg_map_find(&e->memo, h, same_index, &index, NULL, &slot) != STG_MAP_FOUND) {
        return malformed(r, "a GET of a memo index that was never PUT");
    }
    return push(r, ((struct memo_slot *)slot)->v);
}

/* ---------------------------------------------------------------- globals */

static const struct storage_type {
    const char *name;
    int dtype; /* stg_dtype, or -1: a torch storage safetensors cannot represent */
} storage_types[] = {
    {"DoubleStorage", STG_DTYPE_F64},
    {"FloatStorage", STG_DTYPE_F32},
    {"HalfStorage", STG_DTYPE_F16},
    {"BFloat16Storage", STG_DTYPE_BF16},
    {"LongStorage", STG_DTYPE_I64},
    {"IntStorage", STG_DTYPE_I32},
    {"ShortStorage", STG_DTYPE_I16},
    {"CharStorage", STG_DTYPE_I8},
    {"ByteStorage", STG_DTYPE_U8},
    {"BoolStorage", STG_DTYPE_BOOL},
    {"ComplexFloatStorage", STG_DTYPE_C64},
    {"UInt16Storage", STG_DTYPE_U16},
    {"UInt32Storage", STG_DTYPE_U32},
    {"UInt64Storage", STG_DTYPE_U64},
    {"Float8_e4m3fnStorage", STG_DTYPE_F8_E4M3},
    {"Float8_e5m2Storage", STG_DTYPE_F8_E5M2},
    {"Float8_e4m3fnuzStorage", STG_DTYPE_F8_E4M3FNUZ},
    {"Float8_e5m2fnuzStorage", STG_DTYPE_F8_E5M2FNUZ},
    {"ComplexDoubleStorage", -1},
    {"ComplexHalfStorage", -1},
    {"QInt8Storage", -1},
    {"QUInt8Storage", -1},
    {"QInt32Storage", -1},
    {"QUInt4x2Storage", -1},
    {"QUInt2x4Storage", -1},
};

static bool eqn(const uint8_t *p, size_t n, const char *s)
{
    size_t sl = strlen(s);
    return n == sl && memcmp(p, s, n) == 0;
}

static bool global(run *r, const uint8_t *m, size_t ml, const uint8_t *n, size_t nl)
{
    stg_cv *v = new_value(r, STG_CV_GLOBAL);
    if (v == NULL) {
        return false;
    }
    if (eqn(m, ml, "collections") && eqn(n, nl, "OrderedDict")) {
        v->global = STG_CVG_ORDERED_DICT;
    } else if (eqn(m, ml, "torch._utils") && eqn(n, nl, "_rebuild_tensor_v2")) {
        v->global = STG_CVG_REBUILD_V2;
    } else if (eqn(m, ml, "torch._utils") && eqn(n, nl, "_rebuild_tensor")) {
        v->global = STG_CVG_REBUILD;
    } else if (eqn(m, ml, "torch._utils") && eqn(n, nl, "_rebuild_parameter")) {
        v->global = STG_CVG_REBUILD_PARAM;
    } else if (eqn(m, ml, "torch._utils") && eqn(n, nl, "_rebuild_parameter_with_state")) {
        v->global = STG_CVG_REBUILD_PARAM_STATE;
    } else if (eqn(m, ml, "torch") && eqn(n, nl, "device")) {
        v->global = STG_CVG_DEVICE;
    } else if ((eqn(m, ml, "torch.storage") || eqn(m, ml, "torch")) &&
               eqn(n, nl, "UntypedStorage")) {
        v->global = STG_CVG_UNTYPED_STORAGE;
        v->dtype = STG_DTYPE_U8;
    } else if (eqn(m, ml, "torch")) {
        for (size_t i = 0; i < sizeof storage_types / sizeof storage_types[0]; i++) {
            if (eqn(n, nl, storage_types[i].name)) {
                if (storage_types[i].dtype < 0) {
                    break; /* named below as unsupported */
                }
                v->global = STG_CVG_STORAGE_TYPE;
                v->dtype = (uint8_t)storage_types[i].dtype;
            }
        }
    }
    if (v->global == 0) {
        stg_cv_error *err = &r->e->err;
        if (err->what == NULL) {
            err->module = m;
            err->module_len = ml;
            err->name = n;
            err->name_len = nl;
        }
        return unsupported(r, "the global is not one the converter rebuilds");
    }
    return push(r, v);
}

/* GLOBAL: "module\nname\n" (protocol 0 text lines, used by protocol 2 too). */
static bool op_global(run *r)
{
    const uint8_t *p[2];
    size_t n[2];
    for (int k = 0; k < 2; k++) {
        const uint8_t *start = r->c.base + r->c.pos;
        const void *nl = memchr(start, '\n', stg_cur_avail(&r->c));
        if (nl == NULL) {
            return malformed(r, "a GLOBAL line has no end");
        }
        p[k] = start;
        n[k] = (size_t)((const uint8_t *)nl - start);
        r->c.pos += n[k] + 1;
    }
    return global(r, p[0], n[0], p[1], n[1]);
}

static bool op_stack_global(run *r)
{
    stg_cv *name = pop(r);
    stg_cv *module = name != NULL ? pop(r) : NULL;
    if (module == NULL) {
        return false;
    }
    if (module->kind != STG_CV_STR || name->kind != STG_CV_STR) {
        return unsupported(r, "STACK_GLOBAL of values that are not strings");
    }
    return global(r, module->u.s.p, module->u.s.len, name->u.s.p, name->u.s.len);
}

/* ---------------------------------------------------------------- scalars and strings */

static bool push_int(run *r, int64_t x)
{
    stg_cv *v = new_value(r, STG_CV_INT);
    if (v != NULL) {
        v->u.i = x;
    }
    return push(r, v);
}

/* INT and LONG (protocols 0 and 1: torch.save(pickle_protocol=1) writes INT for False):
 * a text line. "00" and "01" on INT are False and True (pickle's load_int); otherwise only a
 * plain decimal is read ('-', then digits without a leading zero; LONG's 'L' suffix): what
 * CPython's strtol and int(s, 0) agree on. Octal, hex, spaces and underscores are refused. */
static bool op_text_int(run *r, bool is_long)
{
    const uint8_t *start = r->c.base + r->c.pos;
    const uint8_t *nl = memchr(start, '\n', stg_cur_avail(&r->c));
    if (nl == NULL) {
        return malformed(r, "an INT or LONG line has no end");
    }
    size_t n = (size_t)(nl - start);
    r->c.pos += n + 1;
    if (!is_long && n == 2 && start[0] == '0' && (start[1] == '0' || start[1] == '1')) {
        stg_cv *v = new_value(r, STG_CV_BOOL);
        if (v != NULL) {
            v->u.i = start[1] == '1';
        }
        return push(r, v);
    }
    if (is_long && n > 0 && start[n - 1] == 'L') {
        n--;
    }
    size_t i = n > 0 && start[0] == '-' ? 1 : 0;
    if (i == n || (start[i] == '0' && n - i > 1)) {
        return unsupported(r, "an INT or LONG that is not a plain decimal");
    }
    uint64_t v = 0;
    bool big = false;
    for (; i < n; i++) {
        if (start[i] < '0' || start[i] > '9') {
            return unsupported(r, "an INT or LONG that is not a plain decimal");
        }
        big = big || v > (UINT64_MAX - 9) / 10;
        v = v * 10 + (uint64_t)(start[i] - '0');
    }
    bool neg = start[0] == '-';
    if (big || v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) {
        if (!is_long) {
            return unsupported(r, "an INT past 64 bits");
        }
        /* as LONG1 past 8 bytes (the legacy magic number): a big integer, never a size */
        stg_cv *b = new_value(r, STG_CV_BYTES);
        if (b != NULL) {
            b->u.s.p = start;
            b->u.s.len = n;
            b->ordered = true;
        }
        return push(r, b);
    }
    return push_int(r, neg ? (int64_t)(0 - v) : (int64_t)v);
}

static bool op_long1(run *r)
{
    uint8_t n;
    const uint8_t *p;
    if (stg_cur_u8(&r->c, &n) != STG_OK || stg_cur_take(&r->c, n, &p) != STG_OK) {
        return malformed(r, "LONG1 runs past the end");
    }
    if (n > 8) {
        /* e.g. the legacy magic number: kept as bytes, never usable as a size */
        stg_cv *v = new_value(r, STG_CV_BYTES);
        if (v != NULL) {
            v->u.s.p = p;
            v->u.s.len = n;
            v->ordered = true; /* marks a big integer, not bytes */
        }
        return push(r, v);
    }
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i++) {
        x |= (uint64_t)p[i] << (8 * i);
    }
    if (n > 0 && n < 8 && (p[n - 1] & 0x80u) != 0) {
        x |= ~(uint64_t)0 << (8 * n); /* sign extension */
    }
    return push_int(r, (int64_t)x);
}

static bool op_binfloat(run *r)
{
    const uint8_t *p;
    if (stg_cur_take(&r->c, 8, &p) != STG_OK) {
        return malformed(r, "BINFLOAT runs past the end");
    }
    uint64_t bits = ((uint64_t)stg_be32(p) << 32) | stg_be32(p + 4);
    double d;
    memcpy(&d, &bits, sizeof d);
    stg_cv *v = new_value(r, STG_CV_FLOAT);
    if (v != NULL) {
        v->u.f = d;
    }
    return push(r, v);
}

/* A string or bytes argument of `width` length bytes (1, 4, 8). */
static bool op_string(run *r, unsigned width, stg_cv_kind kind, bool text)
{
    uint64_t n = 0;
    const uint8_t *p;
    if (stg_cur_take(&r->c, width, &p) != STG_OK) {
        return malformed(r, "a string length runs past the end");
    }
    for (unsigned i = 0; i < width; i++) {
        n |= (uint64_t)p[i] << (8 * i);
    }
    if (n > stg_cur_avail(&r->c)) {
        return malformed(r, "a string runs past the end");
    }
    (void)stg_cur_take(&r->c, (size_t)n, &p);
    if (text && !stg_utf8_valid(p, (size_t)n, true, NULL)) {
        return malformed(r, "a text string is not UTF-8 (the unpickler fails on it)");
    }
    stg_cv *v = new_value(r, kind);
    if (v != NULL) {
        v->u.s.p = p;
        v->u.s.len = (size_t)n;
    }
    return push(r, v);
}

/* ---------------------------------------------------------------- containers */

/* A tuple of the stack values from index `from` up (popped). */
static bool make_tuple(run *r, uint32_t from)
{
    stg_cv_eval *e = r->e;
    uint32_t count = e->sp - from;
    stg_cv *t = new_value(r, STG_CV_TUPLE);
    if (t == NULL || !reserve_items(r, t, count)) {
        return false;
    }
    if (count > 0) {
        memcpy(t->u.items, e->stack + from, count * sizeof *t->u.items);
    }
    t->n = count;
    e->sp = from;
    return push(r, t);
}

static bool op_tuple_n(run *r, uint32_t count)
{
    if (r->e->sp - fence(r->e) < count) {
        return malformed(r, "TUPLE1/2/3 with too few values on the stack");
    }
    return make_tuple(r, r->e->sp - count);
}

static bool op_mark_collect(run *r, uint8_t op)
{
    uint32_t from;
    if (!pop_mark(r, &from)) {
        return false;
    }
    if (op == OP_TUPLE) {
        return make_tuple(r, from);
    }
    stg_cv_eval *e = r->e;
    stg_cv *target = from > fence(e) ? e->stack[from - 1] : NULL;
    if (target == NULL) {
        return malformed(r, "APPENDS/SETITEMS with nothing below the MARK");
    }
    uint32_t count = e->sp - from;
    if (op == OP_APPENDS) {
        if (target->kind != STG_CV_LIST) {
            return unsupported(r, "APPENDS to a value that is not a list");
        }
        if (!reserve_items(r, target, (uint64_t)target->n + count)) {
            return false;
        }
        memcpy(target->u.items + target->n, e->stack + from, count * sizeof *target->u.items);
        target->n += count;
    } else { /* SETITEMS */
        if (target->kind != STG_CV_DICT) {
            return unsupported(r, "SETITEMS on a value that is not a dict");
        }
        if (count % 2 != 0) {
            return malformed(r, "SETITEMS with an odd number of values");
        }
        if (!reserve_items(r, target, (uint64_t)target->n + count / 2)) {
            return false;
        }
        memcpy(target->u.items + 2 * (size_t)target->n, e->stack + from,
               count * sizeof *target->u.items);
        target->n += count / 2;
    }
    e->sp = from;
    return true;
}

static bool op_append(run *r)
{
    stg_cv *item = pop(r);
    stg_cv *list = item != NULL ? top(r) : NULL;
    if (list == NULL) {
        return false;
    }
    if (list->kind != STG_CV_LIST) {
        return unsupported(r, "APPEND to a value that is not a list");
    }
    if (!reserve_items(r, list, (uint64_t)list->n + 1)) {
        return false;
    }
    list->u.items[list->n++] = item;
    return true;
}

static bool op_setitem(run *r)
{
    stg_cv *value = pop(r);
    stg_cv *key = value != NULL ? pop(r) : NULL;
    stg_cv *d = key != NULL ? top(r) : NULL;
    if (d == NULL) {
        return false;
    }
    if (d->kind != STG_CV_DICT) {
        return unsupported(r, "SETITEM on a value that is not a dict");
    }
    if (!reserve_items(r, d, (uint64_t)d->n + 1)) {
        return false;
    }
    d->u.items[2 * (size_t)d->n] = key;
    d->u.items[2 * (size_t)d->n + 1] = value;
    d->n++;
    return true;
}

/* ---------------------------------------------------------------- torch reconstruction */

static bool same_skey(const void *slot, const void *key, void *ctx)
{
    const stg_cv_eval *e = ctx;
    const stg_cv *k = key;
    const stg_cv_storage *s = e->storages[((const struct skey_slot *)slot)->index];
    return s->key_len == k->u.s.len && memcmp(s->key, k->u.s.p, k->u.s.len) == 0;
}

stg_cv_storage *stg_cv_find_storage(stg_cv_eval *e, const uint8_t *key, size_t len)
{
    stg_cv k;
    memset(&k, 0, sizeof k);
    k.kind = STG_CV_STR;
    k.u.s.p = key;
    k.u.s.len = len;
    uint64_t h = stg_map_hash(&e->skeys, key, len, NULL, 0);
    void *slot;
    if (stg_map_find(&e->skeys, h, same_skey, &k, e, &slot) != STG_MAP_FOUND) {
        return NULL;
    }
    return e->storages[((struct skey_slot *)slot)->index];
}

/* ('storage', StorageType, key, location, numel[, view_metadata]) -> the key's storage. */
static bool op_persid(run *r)
{
    stg_cv_eval *e = r->e;
    stg_cv *pid = pop(r);
    if (pid == NULL) {
        return false;
    }
    if (pid->kind != STG_CV_TUPLE || pid->n < 5 || pid->n > 6 ||
        !stg_cv_is_str(pid->u.items[0], "storage")) {
        return unsupported(r, "a persistent id that is not ('storage', type, key, location, "
                              "numel)");
    }
    stg_cv *type = pid->u.items[1], *key = pid->u.items[2], *loc = pid->u.items[3],
           *numel = pid->u.items[4];
    if (type->kind != STG_CV_GLOBAL ||
        (type->global != STG_CVG_STORAGE_TYPE && type->global != STG_CVG_UNTYPED_STORAGE)) {
        return unsupported(r, "a persistent id whose storage type is not a torch storage type");
    }
    if (type->global == STG_CVG_UNTYPED_STORAGE && e->legacy) {
        return unsupported(r, "an UntypedStorage persistent id in a legacy torch file (torch.load "
                              "fails on it: the class has no dtype)");
    }
    if (key->kind != STG_CV_STR || loc->kind != STG_CV_STR || numel->kind != STG_CV_INT ||
        numel->u.i < 0 || (pid->n == 6 && pid->u.items[5]->kind != STG_CV_NONE)) {
        return unsupported(r, "a persistent id with a key, location or size of the wrong type "
                              "(or a storage view)");
    }
    stg_dtype dt = (stg_dtype)type->dtype;
    uint64_t h = stg_map_hash(&e->skeys, key->u.s.p, key->u.s.len, NULL, 0);
    void *slot;
    stg_map_status st = stg_map_find(&e->skeys, h, same_skey, key, e, &slot);
    stg_cv_storage *s;
    if (st == STG_MAP_FOUND) {
        s = e->storages[((struct skey_slot *)slot)->index];
        if (s->dtype != dt || s->numel != (uint64_t)numel->u.i) {
            return fail(r, STG_CONVERT_TENSOR_INVALID,
                        "one storage key is declared with two dtypes or sizes");
        }
    } else {
        if (e->nstorages >= e->lim.max_storages) {
            return limit(r, "max_storages");
        }
        if (stg_map_reserve(&e->skeys) != STG_MAP_OK ||
            stg_map_find(&e->skeys, h, NULL, key, e, &slot) != STG_MAP_ABSENT || slot == NULL) {
            return limit(r, "hash_probe_ceiling");
        }
        if (e->nstorages == e->storages_cap &&
            !grow(r, (void **)&e->storages, &e->storages_cap, sizeof *e->storages)) {
            return false;
        }
        s = alloc(r, sizeof *s);
        if (s == NULL) {
            return false;
        }
        memset(s, 0, sizeof *s);
        s->key = key->u.s.p;
        s->key_len = key->u.s.len;
        s->dtype = dt;
        s->elsize = stg_dtype_bits(dt) / 8;
        s->numel = (uint64_t)numel->u.i;
        s->index = e->nstorages;
        s->offset = r->op_at;
        e->storages[e->nstorages++] = s;
        stg_map_claim(&e->skeys, slot, h);
        ((struct skey_slot *)slot)->index = s->index;
    }
    stg_cv *v = new_value(r, STG_CV_STORAGE);
    if (v != NULL) {
        v->u.st = s;
    }
    return push(r, v);
}

/* A tuple of non-negative ints into a new array of n entries. */
static bool int_tuple(run *r, const stg_cv *t, uint64_t **out, uint32_t *n)
{
    if (t->kind != STG_CV_TUPLE) {
        return fail(r, STG_CONVERT_TENSOR_INVALID, "a tensor's size or stride is not a tuple");
    }
    if (t->n > r->e->lim.max_rank) {
        return limit(r, "max_rank");
    }
    uint64_t *a = alloc(r, (t->n > 0 ? t->n : 1) * sizeof *a);
    if (a == NULL) {
        return false;
    }
    for (uint32_t i = 0; i < t->n; i++) {
        const stg_cv *x = t->u.items[i];
        if (x->kind != STG_CV_INT || x->u.i < 0) {
            return fail(r, STG_CONVERT_TENSOR_INVALID,
                        "a tensor's size or stride holds a value that is not a non-negative int");
        }
        a[i] = (uint64_t)x->u.i;
    }
    *out = a;
    *n = t->n;
    return true;
}

static bool empty_or_none(const stg_cv *v)
{
    return v->kind == STG_CV_NONE ||
           ((v->kind == STG_CV_DICT || v->kind == STG_CV_TUPLE || v->kind == STG_CV_LIST) &&
            v->n == 0);
}

/* _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks
 * [, metadata]) and _rebuild_tensor(storage, storage_offset, size, stride). */
static bool rebuild_tensor(run *r, const stg_cv *args, bool v2)
{
    if (args->n < 4 || (v2 && (args->n < 6 || args->n > 7)) || (!v2 && args->n != 4)) {
        return unsupported(r, "a tensor rebuild call with an argument count torch does not write");
    }
    stg_cv **a = args->u.items;
    if (a[0]->kind != STG_CV_STORAGE || a[1]->kind != STG_CV_INT || a[1]->u.i < 0) {
        return fail(r, STG_CONVERT_TENSOR_INVALID,
                    "a tensor rebuild call without a storage and a non-negative offset");
    }
    if (v2 && (a[4]->kind != STG_CV_BOOL || a[5]->kind != STG_CV_DICT ||
               (args->n == 7 && !empty_or_none(a[6])))) {
        return unsupported(r, "a tensor rebuild call with tensor metadata or hooks of the wrong "
                              "type");
    }
    stg_cv_tensor *t = alloc(r, sizeof *t);
    if (t == NULL) {
        return false;
    }
    memset(t, 0, sizeof *t);
    uint32_t nstride = 0;
    if (!int_tuple(r, a[2], &t->shape, &t->rank) || !int_tuple(r, a[3], &t->stride, &nstride)) {
        return false;
    }
    if (nstride != t->rank) {
        return fail(r, STG_CONVERT_TENSOR_INVALID, "a tensor's size and stride differ in length");
    }
    t->storage = a[0]->u.st;
    t->storage_offset = (uint64_t)a[1]->u.i;
    t->offset = r->op_at;
    t->requires_grad = v2 && a[4]->u.i != 0;
    /* The view's element range must lie inside the storage (checked arithmetic). */
    uint64_t count = 1, last = t->storage_offset;
    for (uint32_t i = 0; i < t->rank; i++) {
        uint64_t step;
        if (stg_mul_u64(count, t->shape[i], &count)) {
            return fail(r, STG_CONVERT_TENSOR_INVALID, "a tensor's element count overflows");
        }
        if (t->shape[i] > 0 &&
            (stg_mul_u64(t->shape[i] - 1, t->stride[i], &step) || stg_add_u64(last, step, &last))) {
            return fail(r, STG_CONVERT_TENSOR_INVALID, "a tensor's element range overflows");
        }
    }
    uint64_t bytes;
    if (stg_mul_u64(count, t->storage->elsize, &bytes)) {
        return fail(r, STG_CONVERT_TENSOR_INVALID, "a tensor's byte size overflows");
    }
    if (count > 0 && last >= t->storage->numel) {
        return fail(r, STG_CONVERT_TENSOR_INVALID,
                    "a tensor view reaches past the end of its storage");
    }
    stg_cv *v = new_value(r, STG_CV_TENSOR);
    if (v != NULL) {
        v->u.t = t;
    }
    return push(r, v);
}

/* _rebuild_parameter(tensor, requires_grad, hooks): torch.nn.Parameter(tensor, requires_grad),
 * a new object over the same data (the tensor itself, referenced elsewhere, stays as it is). */
static stg_cv *parameter_of(run *r, const stg_cv *tensor, bool requires_grad)
{
    stg_cv_tensor *t = alloc(r, sizeof *t);
    stg_cv *v = t != NULL ? new_value(r, STG_CV_TENSOR) : NULL;
    if (v != NULL) {
        *t = *tensor->u.t;
        t->parameter = true;
        t->requires_grad = requires_grad;
        v->u.t = t;
    }
    return v;
}

static bool op_reduce(run *r)
{
    stg_cv *args = pop(r);
    stg_cv *callable = args != NULL ? pop(r) : NULL;
    if (callable == NULL) {
        return false;
    }
    if (callable->kind != STG_CV_GLOBAL || callable->global == STG_CVG_STORAGE_TYPE ||
        callable->global == STG_CVG_UNTYPED_STORAGE) {
        return unsupported(r, "REDUCE of a value that is not a reconstruction call");
    }
    if (args->kind != STG_CV_TUPLE) {
        return unsupported(r, "REDUCE with arguments that are not a tuple");
    }
    stg_cv **a = args->u.items;
    switch ((stg_cv_global)callable->global) {
    case STG_CVG_ORDERED_DICT: {
        if (args->n != 0) {
            return unsupported(r, "OrderedDict called with arguments");
        }
        stg_cv *d = new_value(r, STG_CV_DICT);
        if (d != NULL) {
            d->ordered = true;
        }
        return push(r, d);
    }
    case STG_CVG_REBUILD_V2: return rebuild_tensor(r, args, true);
    case STG_CVG_REBUILD: return rebuild_tensor(r, args, false);
    case STG_CVG_REBUILD_PARAM:
    case STG_CVG_REBUILD_PARAM_STATE: {
        bool with_state = callable->global == STG_CVG_REBUILD_PARAM_STATE;
        if (args->n != (with_state ? 4u : 3u) || a[0]->kind != STG_CV_TENSOR ||
            a[1]->kind != STG_CV_BOOL || a[2]->kind != STG_CV_DICT ||
            (with_state && !empty_or_none(a[3]))) {
            return unsupported(r, "a parameter rebuild call with arguments (or state) torch "
                                  "does not write for a plain parameter");
        }
        return push(r, parameter_of(r, a[0], a[1]->u.i != 0));
    }
    case STG_CVG_DEVICE:
        if (args->n < 1 || args->n > 2 || a[0]->kind != STG_CV_STR ||
            (args->n == 2 && a[1]->kind != STG_CV_INT)) {
            return unsupported(r, "torch.device called with arguments other than (type[, index])");
        }
        return push(r, a[0]);
    case STG_CVG_STORAGE_TYPE:
    case STG_CVG_UNTYPED_STORAGE: break;
    }
    return unsupported(r, "REDUCE of a value that is not a reconstruction call");
}

static bool op_build(run *r)
{
    stg_cv *state = pop(r);
    stg_cv *target = state != NULL ? top(r) : NULL;
    if (target == NULL) {
        return false;
    }
    /* torch.save's state_dict: BUILD sets OrderedDict._metadata (module versions), which a
     * safetensors file has no place for: ignored. Anything else is refused. */
    if (target->kind == STG_CV_DICT && target->ordered && state->kind == STG_CV_DICT) {
        return true;
    }
    if (target->kind == STG_CV_TENSOR) {
        return unsupported(r, "BUILD with state on a tensor");
    }
    return unsupported(r, "BUILD on a value the converter does not rebuild");
}

/* ---------------------------------------------------------------- the loop */

/* The FIXED argument of op, its width from pickle_ops.def, little-endian; false when the input
 * ends first. */
static bool fixed_arg(run *r, uint8_t op, uint64_t *v)
{
    const stg_pickle_opinfo *info = stg_pickle_opinfo_of(op);
    const uint8_t *p;
    if (info == NULL || info->arg != STG_PICKLE_ARG_FIXED ||
        stg_cur_take(&r->c, info->width, &p) != STG_OK) {
        return false;
    }
    *v = 0;
    for (size_t i = info->width; i-- > 0;) { /* little-endian */
        *v = *v << 8 | p[i];
    }
    return true;
}

/* The width of op's FIXED argument or of its LEN/SLEN length (pickle_ops.def). */
static unsigned arg_width(uint8_t op)
{
    const stg_pickle_opinfo *info = stg_pickle_opinfo_of(op);
    return info != NULL ? info->width : 0;
}

static bool step(run *r, uint8_t op, bool *stop)
{
    uint64_t arg;
    switch (op) {
    case OP_PROTO:
        if (!fixed_arg(r, op, &arg) || arg > 5) {
            return malformed(r, "PROTO without a known protocol");
        }
        return true;
    case OP_FRAME: /* framing only; frames do not change what the opcodes mean */
        return fixed_arg(r, op, &arg) || malformed(r, "FRAME runs past the end");
    case OP_STOP: *stop = true; return true;
    case OP_MARK: return push_mark(r);
    case OP_POP: return pop(r) != NULL;
    case OP_POP_MARK: {
        uint32_t from;
        if (!pop_mark(r, &from)) {
            return false;
        }
        r->e->sp = from;
        return true;
    }
    case OP_DUP: {
        stg_cv *v = top(r);
        return v != NULL && push(r, v);
    }
    case OP_NONE: return push(r, new_value(r, STG_CV_NONE));
    case OP_NEWTRUE:
    case OP_NEWFALSE: {
        stg_cv *v = new_value(r, STG_CV_BOOL);
        if (v != NULL) {
            v->u.i = op == OP_NEWTRUE;
        }
        return push(r, v);
    }
    case OP_BININT:
        if (!fixed_arg(r, op, &arg)) {
            return malformed(r, "BININT runs past the end");
        }
        return push_int(r, (int64_t)(int32_t)(uint32_t)arg);
    case OP_BININT1:
        if (!fixed_arg(r, op, &arg)) {
            return malformed(r, "BININT1 runs past the end");
        }
        return push_int(r, (int64_t)arg);
    case OP_BININT2:
        if (!fixed_arg(r, op, &arg)) {
            return malformed(r, "BININT2 runs past the end");
        }
        return push_int(r, (int64_t)arg);
    case OP_LONG1: return op_long1(r);
    case OP_INT: return op_text_int(r, false);
    case OP_LONG: return op_text_int(r, true);
    case OP_BINFLOAT: return op_binfloat(r);
    case OP_BINUNICODE: return op_string(r, arg_width(op), STG_CV_STR, true);
    case OP_SHORT_BINUNICODE: return op_string(r, arg_width(op), STG_CV_STR, true);
    case OP_BINUNICODE8: return op_string(r, arg_width(op), STG_CV_STR, true);
    case OP_BINSTRING: /* py2 str, decoded as torch.load does (encoding='utf-8') */
        return op_string(r, arg_width(op), STG_CV_STR, true);
    case OP_SHORT_BINSTRING: return op_string(r, arg_width(op), STG_CV_STR, true);
    case OP_BINBYTES: return op_string(r, arg_width(op), STG_CV_BYTES, false);
    case OP_SHORT_BINBYTES: return op_string(r, arg_width(op), STG_CV_BYTES, false);
    case OP_BINBYTES8: return op_string(r, arg_width(op), STG_CV_BYTES, false);
    case OP_EMPTY_TUPLE: return make_tuple(r, r->e->sp);
    case OP_TUPLE1: return op_tuple_n(r, 1);
    case OP_TUPLE2: return op_tuple_n(r, 2);
    case OP_TUPLE3: return op_tuple_n(r, 3);
    case OP_TUPLE:
    case OP_APPENDS:
    case OP_SETITEMS: return op_mark_collect(r, op);
    case OP_EMPTY_LIST: return push(r, new_value(r, STG_CV_LIST));
    case OP_EMPTY_DICT: return push(r, new_value(r, STG_CV_DICT));
    case OP_APPEND: return op_append(r);
    case OP_SETITEM: return op_setitem(r);
    case OP_BINPUT:
        if (!fixed_arg(r, op, &arg)) {
            return malformed(r, "BINPUT runs past the end");
        }
        return memo_put(r, arg, top(r));
    case OP_LONG_BINPUT:
        if (!fixed_arg(r, op, &arg)) {
            return malformed(r, "LONG_BINPUT runs past the end");
        }
        return memo_put(r, arg, top(r));
    case OP_MEMOIZE: return memo_put(r, r->memo_next, top(r));
    case OP_BINGET:
        if (!fixed_arg(r, op, &arg)) {
            return malformed(r, "BINGET runs past the end");
        }
        return memo_get(r, arg);
    case OP_LONG_BINGET:
        if (!fixed_arg(r, op, &arg)) {
            return malformed(r, "LONG_BINGET runs past the end");
        }
        return memo_get(r, arg);
    case OP_GLOBAL: return op_global(r);
    case OP_STACK_GLOBAL: return op_stack_global(r);
    case OP_REDUCE: return op_reduce(r);
    case OP_BUILD: return op_build(r);
    case OP_BINPERSID: return op_persid(r);
    default:
        return unsupported(r, "an opcode the converter does not read (it reads what torch.save "
                              "writes under pickle protocols 1 to 5, checked with torch 1.13)");
    }
}

bool stg_cv_run(stg_cv_eval *e, const uint8_t *buf, size_t len, size_t start, stg_cv **root,
                size_t *end)
{
    run r = {e, stg_cur_make(buf, len), start, 0};
    (void)stg_cur_seek(&r.c, start <= len ? start : len);
    memset(&e->err, 0, sizeof e->err);
    e->sp = 0;
    e->nmarks = 0;
    stg_map_free(&e->memo);
    stg_map_init(&e->memo, sizeof(struct memo_slot), e->lim.hash_seed, 1u << 30);
    stg_map_set_overflow(&e->memo, 64);
    bool stop = false;
    while (!stop) {
        uint8_t op;
        r.op_at = r.c.pos;
        if (stg_cur_u8(&r.c, &op) != STG_OK) {
            return malformed(&r, "the pickle ends before its STOP");
        }
        if (!step(&r, op, &stop)) {
            return false;
        }
    }
    if (e->nmarks != 0 || e->sp != 1) {
        r.op_at = r.c.pos - 1;
        return malformed(&r, "STOP with marks or more than one value on the stack");
    }
    *root = e->stack[0];
    *end = r.c.pos;
    return true;
}

stg_cv *stg_cv_dict_get(const stg_cv *d, const char *key)
{
    if (d == NULL || d->kind != STG_CV_DICT) {
        return NULL;
    }
    stg_cv *found = NULL;
    for (uint32_t i = 0; i < d->n; i++) { /* the last one wins, as in a Python dict */
        if (stg_cv_is_str(d->u.items[2 * (size_t)i], key)) {
            found = d->u.items[2 * (size_t)i + 1];
        }
    }
    return found;
}

bool stg_cv_is_str(const stg_cv *v, const char *s)
{
    return v != NULL && v->kind == STG_CV_STR && eqn(v->u.s.p, v->u.s.len, s);
}
