/* GGUF reader (see gguf.h for the contract). Worst cases, all linear in the input:
 *   - the header counts are checked against the bytes left (13 bytes at least per metadata
 *     record, 24 per tensor info) before the first record is read, and records are appended to
 *     buffers that grow geometrically with what was read, so memory is at most
 *     (records read) x (record size) x 2 plus the duplicate tables;
 *   - an array's count is checked against the bytes left before its elements are walked (its
 *     element size, 8 bytes per string, 12 per nested array), and the walk is a loop over an
 *     explicit stack of at most STG_GGUF_DEPTH_CEILING levels: every step consumes bytes;
 *   - duplicate keys and names: one keyed hash per record into parser/map.h's map (load factor
 *     at most 1/2, no probe past STG_HASH_PROBE_CEILING: past it the parse stops with that
 *     limit, failing closed). The map's memory comes from parser/mem.h, at most 16 bytes a slot
 *     and 4 slots a record. */
#include "gguf.h"

#include <string.h>

#include "cursor.h"
#include "hash.h"
#include "map.h"
#include "text.h"
#include "util.h"

/* ---------------------------------------------------------------- tables */

uint32_t stg_gguf_type_size(uint32_t type)
{
    switch (type) {
    case STG_GGUF_UINT8:
    case STG_GGUF_INT8:
    case STG_GGUF_BOOL: return 1;
    case STG_GGUF_UINT16:
    case STG_GGUF_INT16: return 2;
    case STG_GGUF_UINT32:
    case STG_GGUF_INT32:
    case STG_GGUF_FLOAT32: return 4;
    case STG_GGUF_UINT64:
    case STG_GGUF_INT64:
    case STG_GGUF_FLOAT64: return 8;
    default: return 0;
    }
}

const char *stg_gguf_type_name(uint32_t type)
{
    static const char *const names[STG_GGUF_TYPE_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"};
    return type < STG_GGUF_TYPE_COUNT ? names[type] : NULL;
}

/* Block sizes and bytes per block of ggml's type traits; removed ids have no name. QK_K is 256
 * elements; the K, IQ and TQ types use it. */
static const stg_ggml_type_info ggml_types[STG_GGML_TYPE_COUNT] = {
    [0] = {"F32", 1, 4},         [1] = {"F16", 1, 2},         [2] = {"Q4_0", 32, 18},
    [3] = {"Q4_1", 32, 20},      [6] = {"Q5_0", 32, 22},      [7] = {"Q5_1", 32, 24},
    [8] = {"Q8_0", 32, 34},      [9] = {"Q8_1", 32, 36},      [10] = {"Q2_K", 256, 84},
    [11] = {"Q3_K", 256, 110},   [12] = {"Q4_K", 256, 144},   [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210},   [15] = {"Q8_K", 256, 292},   [16] = {"IQ2_XXS", 256, 66},
    [17] = {"IQ2_XS", 256, 74},  [18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
    [20] = {"IQ4_NL", 32, 18},   [21] = {"IQ3_S", 256, 110},  [22] = {"IQ2_S", 256, 82},
    [23] = {"IQ4_XS", 256, 136}, [24] = {"I8", 1, 1},         [25] = {"I16", 1, 2},
    [26] = {"I32", 1, 4},        [27] = {"I64", 1, 8},        [28] = {"F64", 1, 8},
    [29] = {"IQ1_M", 256, 56},   [30] = {"BF16", 1, 2},       [34] = {"TQ1_0", 256, 54},
    [35] = {"TQ2_0", 256, 66},   [39] = {"MXFP4", 32, 17},    [40] = {"NVFP4", 64, 36},
    [41] = {"Q1_0", 128, 18},    [42] = {"Q2_0", 64, 18},
};

const stg_ggml_type_info *stg_ggml_type(uint32_t id)
{
    if (id >= STG_GGML_TYPE_COUNT || ggml_types[id].name == NULL) {
        return NULL;
    }
    return &ggml_types[id];
}

bool stg_gguf_pad(uint64_t x, uint64_t align, uint64_t *out)
{
    uint64_t r = x & (align - 1);
    if (r == 0) {
        *out = x;
        return true;
    }
    return !stg_add_u64(x, align - r, out);
}

stg_gguf_size stg_gguf_tensor_size(const stg_gguf_tensor *t, uint64_t *elements, uint64_t *bytes)
{
    for (uint32_t i = 0; i < STG_GGUF_MAX_DIMS; i++) {
        if (t->ne[i] > (uint64_t)INT64_MAX) {
            return STG_GGUF_SIZE_NEGATIVE;
        }
    }
    uint64_t n = 1;
    for (uint32_t i = 0; i < STG_GGUF_MAX_DIMS; i++) {
        if (stg_mul_u64(n, t->ne[i], &n)) {
            return STG_GGUF_SIZE_OVERFLOW;
        }
    }
    if (n > (uint64_t)INT64_MAX) {
        return STG_GGUF_SIZE_OVERFLOW;
    }
    *elements = n;
    const stg_ggml_type_info *ti = stg_ggml_type(t->type);
    if (ti == NULL) {
        return STG_GGUF_SIZE_TYPE;
    }
    if (t->ne[0] % ti->block != 0) {
        return STG_GGUF_SIZE_BLOCK;
    }
    uint64_t b = 0;
    if (stg_mul_u64(t->ne[0] / ti->block, ti->bytes, &b)) {
        return STG_GGUF_SIZE_OVERFLOW;
    }
    for (uint32_t i = 1; i < STG_GGUF_MAX_DIMS; i++) {
        if (stg_mul_u64(b, t->ne[i], &b)) {
            return STG_GGUF_SIZE_OVERFLOW;
        }
    }
    *bytes = b;
    return STG_GGUF_SIZE_OK;
}

/* ---------------------------------------------------------------- text */

/* UTF-8 as parser/text.h reads it (RFC 3629, no surrogates): keys, names and string values. */
static bool utf8_ok(const uint8_t *s, size_t n)
{
    return stg_utf8_valid(s, n, false, NULL);
}

/* ---------------------------------------------------------------- reading */

typedef struct gguf_reader {
    stg_cursor c;
    const stg_gguf_limits *lim;
    stg_gguf_file *f;
    uint32_t kv, tensor; /* record being read, for fail */
} gguf_reader;

static bool fail(gguf_reader *r, stg_gguf_error code, uint64_t offset, uint64_t value)
{
    stg_gguf_fail *x = &r->f->fail;
    x->code = code;
    x->offset = offset;
    x->value = value;
    x->kv = r->kv;
    x->tensor = r->tensor;
    return false;
}

static bool fail_limit(gguf_reader *r, const char *limit, uint64_t offset, uint64_t value)
{
    r->f->fail.limit = limit;
    return fail(r, STG_GGUF_E_LIMIT, offset, value);
}

static bool rd32(gguf_reader *r, uint32_t *out)
{
    uint64_t at = r->c.pos;
    return stg_cur_le32(&r->c, out) == STG_OK || fail(r, STG_GGUF_E_TRUNCATED, at, 4);
}

static bool rd64(gguf_reader *r, uint64_t *out)
{
    uint64_t at = r->c.pos;
    return stg_cur_le64(&r->c, out) == STG_OK || fail(r, STG_GGUF_E_TRUNCATED, at, 8);
}

/* A length-prefixed string: the length against `max` (a limit named `limit`) and against the
 * bytes left. */
static bool rd_string(gguf_reader *r, uint64_t max, const char *limit, const uint8_t **s, size_t *n)
{
    uint64_t at = r->c.pos;
    uint64_t len = 0;
    if (!rd64(r, &len)) {
        return false;
    }
    if (len > stg_cur_avail(&r->c)) {
        return fail(r, STG_GGUF_E_STRING, at, len);
    }
    if (len > max) {
        return fail_limit(r, limit, at, len);
    }
    /* len <= avail, so it fits size_t */
    (void)stg_cur_take(&r->c, (size_t)len, s);
    *n = (size_t)len;
    return true;
}

/* The smallest encoding of one element of `type`: what a count is checked against. */
static uint64_t min_elem_size(uint32_t type)
{
    if (type == STG_GGUF_STRING) {
        return 8;
    }
    if (type == STG_GGUF_ARRAY) {
        return 12;
    }
    return stg_gguf_type_size(type);
}

/* An array header's element type and count, checked before anything walks its elements. */
static bool check_array(gguf_reader *r, uint32_t etype, uint64_t count, uint64_t type_at,
                        uint64_t count_at)
{
    if (etype >= STG_GGUF_TYPE_COUNT) {
        return fail(r, STG_GGUF_E_VALUE_TYPE, type_at, etype);
    }
    uint64_t need = 0;
    if (stg_mul_u64(count, min_elem_size(etype), &need) || need > stg_cur_avail(&r->c)) {
        return fail(r, STG_GGUF_E_ARRAY, count_at, count);
    }
    if (count > r->lim->max_array_elems) {
        return fail_limit(r, "max_gguf_array", count_at, count);
    }
    return true;
}

/* Records in kv the offset of the first of the next n bool bytes (all present) that is
 * neither 0 nor 1, the only values the specification gives a bool. */
static void note_bad_bool(const gguf_reader *r, stg_gguf_kv *kv, size_t n)
{
    if (kv->bad_bool != UINT64_MAX) {
        return;
    }
    stg_cursor b = r->c;
    for (size_t i = 0; i < n; i++) {
        uint8_t v = 0;
        (void)stg_cur_u8(&b, &v);
        if (v > 1) {
            kv->bad_bool = r->c.pos + i;
            return;
        }
    }
}

typedef struct array_level {
    uint32_t etype;
    uint64_t left;
} array_level;

/* Walks an array value whose element type and count were just read (no recursion). */
static bool walk_array(gguf_reader *r, stg_gguf_kv *kv, uint64_t type_at, uint64_t count_at)
{
    array_level st[STG_GGUF_DEPTH_CEILING];
    uint32_t max_depth = r->lim->max_array_depth;
    if (max_depth == 0) {
        max_depth = 1;
    }
    if (max_depth > STG_GGUF_DEPTH_CEILING) {
        max_depth = STG_GGUF_DEPTH_CEILING;
    }
    if (!check_array(r, kv->elem_type, kv->count, type_at, count_at)) {
        return false;
    }
    st[0].etype = kv->elem_type;
    st[0].left = kv->count;
    uint32_t sp = 1;
    kv->depth = 1;
    while (sp > 0) {
        array_level *t = &st[sp - 1];
        if (t->left == 0) {
            sp--;
            continue;
        }
        if (t->etype == STG_GGUF_STRING) {
            const uint8_t *s = NULL;
            size_t n = 0;
            uint64_t at = r->c.pos;
            if (!rd_string(r, r->lim->max_string_len, "max_gguf_string", &s, &n)) {
                return false;
            }
            if (kv->bad_utf8 == UINT64_MAX && !utf8_ok(s, n)) {
                kv->bad_utf8 = at;
            }
            t->left--;
        } else if (t->etype == STG_GGUF_ARRAY) {
            t->left--;
            uint32_t etype = 0;
            uint64_t count = 0;
            uint64_t tat = r->c.pos;
            if (!rd32(r, &etype)) {
                return false;
            }
            uint64_t cat = r->c.pos;
            if (!rd64(r, &count) || !check_array(r, etype, count, tat, cat)) {
                return false;
            }
            if (sp == max_depth) {
                return fail_limit(r, "max_gguf_array_depth", tat, (uint64_t)sp + 1);
            }
            st[sp].etype = etype;
            st[sp].left = count;
            sp++;
            if (sp > kv->depth) {
                kv->depth = sp;
            }
        } else {
            /* fixed size: left x size <= avail was checked when the level was pushed */
            size_t n = (size_t)(t->left * stg_gguf_type_size(t->etype));
            if (t->etype == STG_GGUF_BOOL) {
                note_bad_bool(r, kv, n);
            }
            (void)stg_cur_skip(&r->c, n);
            t->left = 0;
        }
    }
    return true;
}

static bool read_kv(gguf_reader *r, stg_gguf_kv *kv)
{
    memset(kv, 0, sizeof *kv);
    kv->offset = r->c.pos;
    kv->bad_utf8 = UINT64_MAX;
    kv->bad_bool = UINT64_MAX;
    kv->dup_of = STG_GGUF_NONE;
    kv->count = 1;
    if (!rd_string(r, r->lim->max_key_len, "max_gguf_key", &kv->key, &kv->key_len)) {
        return false;
    }
    kv->key_utf8 = utf8_ok(kv->key, kv->key_len);
    kv->key_nul = kv->key_len > 0 && memchr(kv->key, 0, kv->key_len) != NULL;
    kv->type_offset = r->c.pos;
    if (!rd32(r, &kv->type)) {
        return false;
    }
    kv->elem_type = kv->type;
    if (kv->type == STG_GGUF_ARRAY) {
        uint64_t tat = r->c.pos;
        if (!rd32(r, &kv->elem_type)) {
            return false;
        }
        uint64_t cat = r->c.pos;
        if (!rd64(r, &kv->count)) {
            return false;
        }
        kv->value_offset = r->c.pos;
        if (!walk_array(r, kv, tat, cat)) {
            return false;
        }
    } else if (kv->type == STG_GGUF_STRING) {
        const uint8_t *s = NULL;
        size_t n = 0;
        uint64_t at = r->c.pos;
        if (!rd_string(r, r->lim->max_string_len, "max_gguf_string", &s, &n)) {
            return false;
        }
        kv->value_offset = at + 8;
        if (!utf8_ok(s, n)) {
            kv->bad_utf8 = at;
        }
    } else {
        uint32_t size = stg_gguf_type_size(kv->type);
        if (size == 0) {
            return fail(r, STG_GGUF_E_VALUE_TYPE, kv->type_offset, kv->type);
        }
        kv->value_offset = r->c.pos;
        if (kv->type == STG_GGUF_BOOL && stg_cur_avail(&r->c) >= size) {
            note_bad_bool(r, kv, size);
        }
        if (stg_cur_skip(&r->c, size) != STG_OK) {
            return fail(r, STG_GGUF_E_TRUNCATED, kv->value_offset, size);
        }
    }
    kv->value_len = r->c.pos - kv->value_offset;
    return true;
}

static bool read_tensor(gguf_reader *r, stg_gguf_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->offset = r->c.pos;
    t->dup_of = STG_GGUF_NONE;
    if (!rd_string(r, r->lim->max_string_len, "max_gguf_string", &t->name, &t->name_len)) {
        return false;
    }
    t->name_utf8 = utf8_ok(t->name, t->name_len);
    t->name_nul = t->name_len > 0 && memchr(t->name, 0, t->name_len) != NULL;
    uint64_t at = r->c.pos;
    if (!rd32(r, &t->n_dims)) {
        return false;
    }
    if (t->n_dims > STG_GGUF_MAX_DIMS) {
        return fail(r, STG_GGUF_E_NDIMS, at, t->n_dims);
    }
    t->dims_offset = r->c.pos;
    for (uint32_t i = 0; i < STG_GGUF_MAX_DIMS; i++) {
        t->ne[i] = 1;
        if (i < t->n_dims && !rd64(r, &t->ne[i])) {
            return false;
        }
    }
    t->type_offset = r->c.pos;
    if (!rd32(r, &t->type)) {
        return false;
    }
    t->data_field_offset = r->c.pos;
    return rd64(r, &t->data_offset);
}

/* Appends one zeroed record slot to a growable buffer; NULL when the budget refuses. */
static void *append(gguf_reader *r, void **buf, size_t *cap_bytes, size_t count, size_t size)
{
    /* count < 2^63 / size: counts are bounded by the bytes of the input */
    size_t need = (count + 1) * size;
    if (stg_arena_grow_buffer(&r->f->arena, buf, cap_bytes, need) != 0) {
        fail(r, STG_GGUF_E_MEMORY, r->c.pos, (uint64_t)need);
        return NULL;
    }
    return (uint8_t *)*buf + count * size;
}

/* ---------------------------------------------------------------- duplicates */

/* Marks dup_of for records whose bytes equal an earlier record's. rec(i) gives the bytes. */
typedef struct dup_view {
    const uint8_t *(*bytes)(const void *base, size_t i, size_t *n, uint64_t **hash,
                            uint32_t **dup_of);
    const void *base;
    size_t count;
} dup_view;

static const uint8_t *kv_bytes(const void *base, size_t i, size_t *n, uint64_t **hash,
                               uint32_t **dup_of)
{
    stg_gguf_kv *kv = (stg_gguf_kv *)(uintptr_t)base + i;
    *n = stg_gguf_key_cstr_len(kv); /* ggml compares keys as C strings */
    *hash = &kv->hash;
    *dup_of = &kv->dup_of;
    return kv->key;
}

static const uint8_t *tensor_bytes(const void *base, size_t i, size_t *n, uint64_t **hash,
                                   uint32_t **dup_of)
{
    stg_gguf_tensor *t = (stg_gguf_tensor *)(uintptr_t)base + i;
    *n = t->name_len;
    *hash = &t->hash;
    *dup_of = &t->dup_of;
    return t->name;
}

/* One entry of the duplicate map: the record that first had these bytes. */
typedef struct dup_slot {
    uint64_t hash; /* first, as parser/map.h requires */
    uint32_t index;
} dup_slot;

typedef struct dup_key {
    const dup_view *v;
    const uint8_t *s;
    size_t n;
} dup_key;

static bool dup_same(const void *slot, const void *key, void *ctx)
{
    (void)ctx;
    const dup_slot *d = slot;
    const dup_key *k = key;
    size_t m = 0;
    uint64_t *h = NULL;
    uint32_t *dup = NULL;
    const uint8_t *o = k->v->bytes(k->v->base, d->index, &m, &h, &dup);
    return m == k->n && (m == 0 || memcmp(o, k->s, m) == 0);
}

static bool mark_duplicates(gguf_reader *r, const dup_view *v)
{
    if (v->count < 2) {
        return true;
    }
    if (v->count > ((size_t)1 << 29)) {
        return fail_limit(r, "max_tensors", 8, (uint64_t)v->count);
    }
    uint32_t max_slots = 64;
    while (max_slots < 2 * v->count) {
        max_slots *= 2;
    }
    stg_map map;
    stg_map_init(&map, sizeof(dup_slot), r->lim->hash_seed, max_slots);
    bool ok = true;
    for (size_t i = 0; ok && i < v->count; i++) {
        dup_key key = {v, NULL, 0};
        uint64_t *h = NULL;
        uint32_t *dup = NULL;
        key.s = v->bytes(v->base, i, &key.n, &h, &dup);
        *h = stg_map_hash(&map, key.s, key.n, NULL, 0);
        void *slot = NULL;
        stg_map_status st = stg_map_reserve(&map);
        if (st == STG_MAP_OK) {
            st = stg_map_find(&map, *h, dup_same, &key, NULL, &slot);
        }
        switch (st) {
        case STG_MAP_FOUND: *dup = ((const dup_slot *)slot)->index; break;
        case STG_MAP_ABSENT:
            stg_map_claim(&map, slot, *h);
            ((dup_slot *)slot)->index = (uint32_t)i;
            break;
        case STG_MAP_NOMEM: ok = fail(r, STG_GGUF_E_MEMORY, r->c.pos, (uint64_t)max_slots); break;
        case STG_MAP_OK:
        case STG_MAP_CEILING:
        case STG_MAP_FULL:
            ok = fail_limit(r, "hash_probe_ceiling", r->c.pos, STG_HASH_PROBE_CEILING);
            break;
        }
    }
    stg_map_free(&map);
    return ok;
}

/* ---------------------------------------------------------------- entry */

void stg_gguf_file_init(stg_gguf_file *f, size_t max_memory)
{
    memset(f, 0, sizeof *f);
    stg_arena_init(&f->arena, max_memory);
    f->fail.kv = STG_GGUF_NONE;
    f->fail.tensor = STG_GGUF_NONE;
}

void stg_gguf_file_release(stg_gguf_file *f)
{
    void *p = f->kvs;
    stg_arena_free_buffer(&f->arena, &p, &f->kvs_cap_bytes);
    p = f->tensors;
    stg_arena_free_buffer(&f->arena, &p, &f->tensors_cap_bytes);
    f->kvs = NULL;
    f->tensors = NULL;
    f->nkv = 0;
    f->ntensors = 0;
    stg_arena_release(&f->arena);
}

static bool read_header(gguf_reader *r)
{
    stg_gguf_file *f = r->f;
    size_t len = r->c.end;
    size_t m = len < 4 ? len : 4;
    if (memcmp(r->c.base, STG_GGUF_MAGIC, m) != 0) {
        return fail(r, STG_GGUF_E_MAGIC, 0, 0);
    }
    if (len < 8) {
        return fail(r, STG_GGUF_E_SHORT, len < 4 ? 0 : 4, (uint64_t)len);
    }
    r->c.pos = 4;
    (void)stg_cur_le32(&r->c, &f->version);
    if (f->version == 1) {
        return fail(r, STG_GGUF_E_VERSION_1, 4, 1);
    }
    if (f->version == 0 || (f->version & 0xFFFFu) == 0 || f->version > 3) {
        return fail(r, STG_GGUF_E_VERSION, 4, f->version);
    }
    if (len < STG_GGUF_HEADER_SIZE) {
        return fail(r, STG_GGUF_E_SHORT, len < 16 ? 8 : 16, (uint64_t)len);
    }
    (void)stg_cur_le64(&r->c, &f->tensor_count);
    (void)stg_cur_le64(&r->c, &f->kv_count);
    if (f->tensor_count > (uint64_t)INT64_MAX) {
        return fail(r, STG_GGUF_E_COUNT, 8, f->tensor_count);
    }
    if (f->kv_count > (uint64_t)INT64_MAX) {
        return fail(r, STG_GGUF_E_COUNT, 16, f->kv_count);
    }
    /* The smallest records: a key length, a type and a u8 (13 bytes); a name length, n_dims of
     * 0, a type and an offset (24 bytes). Counts that cannot fit stop here, before any memory. */
    uint64_t avail = stg_cur_avail(&r->c), kv_min = 0, t_min = 0, need = 0;
    bool kv_wrap = stg_mul_u64(f->kv_count, 13, &kv_min);
    bool t_wrap = stg_mul_u64(f->tensor_count, 24, &t_min);
    if (t_wrap || t_min > avail) {
        return fail(r, STG_GGUF_E_COUNT, 8, f->tensor_count);
    }
    if (kv_wrap || kv_min > avail || stg_add_u64(kv_min, t_min, &need) || need > avail) {
        return fail(r, STG_GGUF_E_COUNT, 16, f->kv_count);
    }
    if (f->tensor_count > r->lim->max_tensors) {
        return fail_limit(r, "max_tensors", 8, f->tensor_count);
    }
    if (f->kv_count > r->lim->max_kv) {
        return fail_limit(r, "max_metadata_entries", 16, f->kv_count);
    }
    return true;
}

bool stg_gguf_parse(const uint8_t *buf, size_t len, const stg_gguf_limits *lim, stg_gguf_file *f)
{
    gguf_reader r;
    r.c = stg_cur_make(buf, len);
    r.lim = lim;
    r.f = f;
    r.kv = STG_GGUF_NONE;
    r.tensor = STG_GGUF_NONE;
    f->fail.code = STG_GGUF_OK;
    if (!read_header(&r)) {
        return false;
    }
    for (uint64_t i = 0; i < f->kv_count; i++) {
        r.kv = (uint32_t)i; /* i < kv_count <= bytes / 13 < 2^32 for any input held in memory */
        stg_gguf_kv *kv = append(&r, (void **)&f->kvs, &f->kvs_cap_bytes, f->nkv, sizeof *kv);
        if (kv == NULL || !read_kv(&r, kv)) {
            break;
        }
        f->nkv++;
        if (r.c.pos > lim->max_header_len) {
            fail_limit(&r, "max_header_len", kv->offset, (uint64_t)r.c.pos);
            break;
        }
    }
    r.kv = STG_GGUF_NONE;
    for (uint64_t i = 0; f->fail.code == STG_GGUF_OK && i < f->tensor_count; i++) {
        r.tensor = (uint32_t)i;
        stg_gguf_tensor *t = append(&r, (void **)&f->tensors, &f->tensors_cap_bytes, f->ntensors,
                                    sizeof *t);
        if (t == NULL || !read_tensor(&r, t)) {
            break;
        }
        f->ntensors++;
        if (r.c.pos > lim->max_header_len) {
            fail_limit(&r, "max_header_len", t->offset, (uint64_t)r.c.pos);
            break;
        }
    }
    r.tensor = STG_GGUF_NONE;
    bool ok = f->fail.code == STG_GGUF_OK;
    if (ok) {
        f->infos_end = r.c.pos;
    }
    /* Marks for what was read, even after a failure (the findings name them); the first
     * failure is the one reported. */
    stg_gguf_fail first = f->fail;
    dup_view kvv = {kv_bytes, f->kvs, f->nkv};
    dup_view tv = {tensor_bytes, f->tensors, f->ntensors};
    bool marked = mark_duplicates(&r, &kvv) && mark_duplicates(&r, &tv);
    if (!ok) {
        f->fail = first;
    }
    return ok && marked;
}

size_t stg_gguf_key_cstr_len(const stg_gguf_kv *kv)
{
    const uint8_t *nul = kv->key_len > 0 ? memchr(kv->key, 0, kv->key_len) : NULL;
    return nul != NULL ? (size_t)(nul - kv->key) : kv->key_len;
}

uint32_t stg_gguf_find_key(const stg_gguf_file *f, const char *key)
{
    size_t n = strlen(key);
    for (size_t i = 0; i < f->nkv; i++) {
        const stg_gguf_kv *kv = &f->kvs[i];
        if (stg_gguf_key_cstr_len(kv) == n && memcmp(kv->key, key, n) == 0) {
            return (uint32_t)i;
        }
    }
    return STG_GGUF_NONE;
}
