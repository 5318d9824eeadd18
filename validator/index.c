/* model.safetensors.index.json rules (see index.h). The index is read by Python's json.load in
 * the loaders that use it, so a repeated key is last-wins there: strict reports it as an error,
 * compat as a warning, and both go on with the last occurrence. */
#include "index.h"

#include <string.h>

#include "../parser/json.h"
#include "../parser/mem.h"
#include "../parser/sort.h"
#include "../parser/util.h"

#define STG_INDEX_MIN_BUDGET ((uint64_t)8 * 1024 * 1024)

void stg_index_init(stg_index *ix)
{
    memset(ix, 0, sizeof *ix);
    stg_arena_init(&ix->arena, 0);
}

void stg_index_release(stg_index *ix)
{
    void *entries = ix->entries;
    stg_arena_free_buffer(&ix->arena, &entries, &ix->entries_cap_bytes);
    stg_arena_release(&ix->arena);
    memset(ix, 0, sizeof *ix);
    stg_arena_init(&ix->arena, 0);
}

/* Same budget rule as a safetensors header: max_memory, else 2 x input + 8 MiB. */
static size_t index_budget(const stg_limits *lim, size_t len)
{
    uint64_t b;
    if (lim->max_memory != 0) {
        b = lim->max_memory;
    } else if (stg_mul_u64((uint64_t)len, 2, &b) || stg_add_u64(b, STG_INDEX_MIN_BUDGET, &b)) {
        b = UINT64_MAX;
    }
    return b > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

bool stg_index_shard_name_safe(const char *name, size_t len)
{
    if (len == 0 || (len == 1 && name[0] == '.')) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (c == '/' || c == '\\' || c == '\0') {
            return false;
        }
        if (c == '.' && i + 1 < len && name[i + 1] == '.') {
            return false;
        }
    }
    /* "C:" names a drive (or an NTFS stream): not a plain name on Windows. */
    if (len >= 2 && name[1] == ':' &&
        ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'))) {
        return false;
    }
    return true;
}

/* A weight_map value (shard file name) waiting for build_shards. */
typedef struct index_value {
    const char *name;
    size_t name_len;
    uint64_t offset;
} index_value;

typedef struct index_parse {
    stg_json_parser json;
    index_value *values; /* parallel to ix->entries */
    size_t values_cap_bytes;
    const stg_limits *lim;
    stg_report *r;
    stg_index *ix;
    bool stop; /* a JSON error, a limit or memory: nothing more is reliable */
} index_parse;

static void report_json_error(index_parse *ps)
{
    stg_json_parser *p = &ps->json;
    uint64_t off = (uint64_t)p->error_offset;
    switch (p->error) {
    case STG_JSON_E_UTF8:
        stg_report_add(ps->r, STG_JSON_INVALID_UTF8, off, "the index is not valid UTF-8");
        break;
    case STG_JSON_E_DEPTH:
        stg_report_add(ps->r, STG_JSON_TOO_DEEP, off,
                       "the index nests deeper than max_json_depth (%u)",
                       (unsigned)ps->lim->max_json_depth);
        break;
    case STG_JSON_E_MEMORY:
        stg_report_limit(ps->r, off, "max_memory", (uint64_t)ps->ix->arena.cap);
        if (ps->ix->arena.out_of_memory) {
            stg_report_oom(ps->r); /* the system refused, not the budget: fail closed */
        }
        break;
    case STG_JSON_E_RANGE: /* not asked for: Python's json reads such numbers as inf */
    case STG_JSON_E_SYNTAX:
    case STG_JSON_E_NONE:
        stg_report_add(ps->r, STG_JSON_SYNTAX, off, "the index is not valid JSON");
        break;
    }
    ps->stop = true;
    ps->ix->ok = false;
}

static void report_memory(index_parse *ps, uint64_t off)
{
    stg_report_limit(ps->r, off, "max_memory", (uint64_t)ps->ix->arena.cap);
    if (ps->ix->arena.out_of_memory) {
        stg_report_oom(ps->r); /* the system refused, not the budget: fail closed */
    }
    ps->stop = true;
    ps->ix->ok = false;
}

/* Decoded copy of a STRING or KEY event in the arena (NUL-terminated). */
static const char *decode_copy(index_parse *ps, const stg_json_event *ev, size_t *out_len)
{
    uint8_t *dst = stg_arena_alloc(&ps->ix->arena, ev->str_len + 1, 1);
    if (dst == NULL) {
        report_memory(ps, (uint64_t)ev->offset);
        return NULL;
    }
    size_t n = ev->has_escapes ? stg_json_decode(ev->str, ev->str_len, dst) : ev->str_len;
    if (!ev->has_escapes && n > 0) {
        memcpy(dst, ev->str, n);
    }
    dst[n] = 0;
    *out_len = n;
    return (const char *)dst;
}

/* Compares a KEY event's decoded value with a literal of at most 10 bytes ("weight_map",
 * "metadata", "total_size") without allocating. Every decoded byte comes from at most 6 raw
 * ones, so a key that can decode to such a literal has at most 60 raw bytes: a longer one is
 * something else, and a shorter one decodes into tmp. */
static bool key_is(const stg_json_event *ev, const char *lit)
{
    size_t n = strlen(lit);
    if (!ev->has_escapes) {
        return ev->str_len == n && memcmp(ev->str, lit, n) == 0;
    }
    uint8_t tmp[64];
    if (ev->str_len > sizeof tmp) {
        return false;
    }
    size_t dl = stg_json_decode(ev->str, ev->str_len, tmp);
    return dl == n && memcmp(tmp, lit, n) == 0;
}

static void report_duplicate(index_parse *ps, const stg_json_event *ev)
{
    stg_report_add(ps->r, STG_JSON_DUPLICATE_KEY, (uint64_t)ev->offset,
                   "a key is repeated in one object of the index (the earlier one at %llu); "
                   "loaders keep the last",
                   (unsigned long long)ev->prev_offset);
}

/* Skips the value whose first event is ev, reporting repeated keys inside it. */
static void skip_value(index_parse *ps, const stg_json_event *ev)
{
    if (ev->type != STG_JSON_OBJECT_BEGIN && ev->type != STG_JSON_ARRAY_BEGIN) {
        return;
    }
    size_t dups = 0;
    stg_json_event first;
    memset(&first, 0, sizeof first);
    if (stg_json_skip(&ps->json, ev, &dups, &first) == STG_JSON_ERROR) {
        report_json_error(ps);
        return;
    }
    if (dups > 0) {
        stg_report_add(ps->r, STG_JSON_DUPLICATE_KEY, (uint64_t)first.offset,
                       "%zu repeated keys inside an index value (the first one here)", dups);
    }
}

static void shape_error(index_parse *ps, const stg_json_event *ev, const char *what)
{
    stg_report_add(ps->r, STG_INDEX_INVALID, (uint64_t)ev->offset,
                   "the index does not have the expected shape: %s", what);
    ps->ix->ok = false;
    skip_value(ps, ev);
}

static bool next_event(index_parse *ps, stg_json_event *ev)
{
    if (stg_json_next(&ps->json, ev) == STG_JSON_ERROR) {
        report_json_error(ps);
        return false;
    }
    return true;
}

/* Marks the entry whose key sits at key_offset as replaced (entries are in file order). */
static void drop_entry_at(stg_index *ix, size_t key_offset)
{
    size_t lo = 0, hi = ix->entry_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->entries[mid].key_offset < (uint64_t)key_offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < ix->entry_count && ix->entries[lo].key_offset == (uint64_t)key_offset) {
        ix->entries[lo].dropped = true;
    }
}

static void parse_weight_map(index_parse *ps)
{
    stg_index *ix = ps->ix;
    /* A repeated "weight_map" replaces the earlier one (last wins). */
    for (size_t i = 0; i < ix->entry_count; i++) {
        ix->entries[i].dropped = true;
    }
    stg_json_event ev;
    while (!ps->stop && next_event(ps, &ev)) {
        if (ev.type == STG_JSON_OBJECT_END) {
            return;
        }
        if (ev.type == STG_JSON_DUPLICATE) {
            report_duplicate(ps, &ev);
            drop_entry_at(ix, ev.prev_offset);
            continue;
        }
        /* ev is a KEY: a tensor name */
        stg_json_event key = ev;
        if (!next_event(ps, &ev)) {
            return;
        }
        if (ev.type != STG_JSON_STRING) {
            shape_error(ps, &ev, "a weight_map value is not a string (a shard file name)");
            continue;
        }
        if ((uint64_t)ix->entry_count >= ps->lim->max_tensors) {
            stg_report_limit(ps->r, (uint64_t)key.offset, "max_tensors", ps->lim->max_tensors);
            ps->stop = true;
            ix->ok = false;
            return;
        }
        size_t name_len = 0, shard_len = 0;
        const char *name = decode_copy(ps, &key, &name_len);
        if (name == NULL) {
            return;
        }
        if (name_len > ps->lim->max_name_len) {
            stg_report_limit(ps->r, (uint64_t)key.offset, "max_name_len", ps->lim->max_name_len);
            ps->stop = true;
            ix->ok = false;
            return;
        }
        const char *shard = decode_copy(ps, &ev, &shard_len);
        if (shard == NULL) {
            return;
        }
        size_t need = (ix->entry_count + 1) * sizeof(stg_index_entry);
        size_t need_values = (ix->entry_count + 1) * sizeof(index_value);
        void *buf = ix->entries;
        void *vbuf = ps->values;
        if (stg_arena_grow_buffer(&ix->arena, &buf, &ix->entries_cap_bytes, need) != 0) {
            report_memory(ps, (uint64_t)key.offset);
            return;
        }
        ix->entries = buf;
        if (stg_arena_grow_buffer(&ix->arena, &vbuf, &ps->values_cap_bytes, need_values) != 0) {
            report_memory(ps, (uint64_t)key.offset);
            return;
        }
        ps->values = vbuf;
        ps->values[ix->entry_count].name = shard;
        ps->values[ix->entry_count].name_len = shard_len;
        ps->values[ix->entry_count].offset = (uint64_t)ev.offset;
        stg_index_entry *e = &ix->entries[ix->entry_count++];
        e->tensor = name;
        e->tensor_len = name_len;
        e->key_offset = (uint64_t)key.offset;
        e->dropped = false;
        e->shard = UINT32_MAX; /* assigned by build_shards */
    }
}

static void parse_metadata(index_parse *ps)
{
    stg_index *ix = ps->ix;
    ix->has_total_size = false; /* a repeated "metadata" replaces the earlier one */
    stg_json_event ev;
    while (!ps->stop && next_event(ps, &ev)) {
        if (ev.type == STG_JSON_OBJECT_END) {
            return;
        }
        if (ev.type == STG_JSON_DUPLICATE) {
            report_duplicate(ps, &ev);
            continue;
        }
        bool is_total = key_is(&ev, "total_size");
        if (!next_event(ps, &ev)) {
            return;
        }
        if (!is_total) {
            skip_value(ps, &ev);
            continue;
        }
        if (ev.type == STG_JSON_NUMBER && ev.is_uint && ev.uint_overflow) {
            stg_report_add(ps->r, STG_JSON_NUMBER_OVERFLOW, (uint64_t)ev.offset,
                           "metadata.total_size does not fit an unsigned 64-bit integer");
            ix->ok = false;
            ix->has_total_size = false;
        } else if (ev.type == STG_JSON_NUMBER && ev.is_uint) {
            ix->has_total_size = true;
            ix->total_size = ev.uint_value;
            ix->total_size_offset = (uint64_t)ev.offset;
        } else {
            ix->has_total_size = false;
            shape_error(ps, &ev, "metadata.total_size is not an unsigned integer");
        }
    }
}

/* Sorting helper: a shard name with the entry it came from. */
typedef struct name_ref {
    const char *name;
    size_t len;
    size_t idx;
} name_ref;

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n > 0 ? memcmp(a, b, n) : 0;
    if (c != 0) {
        return c;
    }
    return al < bl ? -1 : (al > bl ? 1 : 0);
}

static int cmp_name_ref(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const name_ref *a = pa, *b = pb;
    int c = cmp_bytes(a->name, a->len, b->name, b->len);
    if (c != 0) {
        return c;
    }
    return a->idx < b->idx ? -1 : (a->idx > b->idx ? 1 : 0);
}

static int cmp_shard_first(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const stg_index_shard *a = pa, *b = pb;
    return a->offset < b->offset ? -1 : (a->offset > b->offset ? 1 : 0);
}

/* Distinct shard names of the kept entries, in order of first appearance; checks each name. */
static void build_shards(index_parse *ps)
{
    stg_index *ix = ps->ix;
    size_t kept = 0;
    for (size_t i = 0; i < ix->entry_count; i++) {
        kept += !ix->entries[i].dropped;
    }
    if (kept == 0) {
        return;
    }
    name_ref *refs = stg_mem_alloc(kept * sizeof *refs);
    if (refs == NULL) {
        stg_report_oom(ps->r); /* the system refused: the report fails closed */
        report_memory(ps, STG_NO_OFFSET);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < ix->entry_count; i++) {
        if (!ix->entries[i].dropped) {
            refs[k].name = ps->values[i].name;
            refs[k].len = ps->values[i].name_len;
            refs[k].idx = i;
            k++;
        }
    }
    stg_sort(refs, kept, sizeof *refs, cmp_name_ref, NULL);
    size_t distinct = 0;
    for (size_t i = 0; i < kept; i++) {
        distinct += i == 0 ||
                    cmp_bytes(refs[i - 1].name, refs[i - 1].len, refs[i].name, refs[i].len) != 0;
    }
    if (distinct > UINT32_MAX) {
        stg_mem_free(refs);
        report_memory(ps, STG_NO_OFFSET);
        return;
    }
    ix->shards = stg_arena_alloc(&ix->arena, distinct * sizeof *ix->shards, 8);
    if (ix->shards == NULL) {
        stg_mem_free(refs);
        report_memory(ps, STG_NO_OFFSET);
        return;
    }
    /* First pass: one shard per distinct name, offset = its first value (entries are in file
     * order, so the smallest idx of a run is the first appearance). */
    size_t s = 0;
    for (size_t i = 0; i < kept; i++) {
        if (i == 0 ||
            cmp_bytes(refs[i - 1].name, refs[i - 1].len, refs[i].name, refs[i].len) != 0) {
            const index_value *v = &ps->values[refs[i].idx];
            ix->shards[s].name = v->name;
            ix->shards[s].name_len = v->name_len;
            ix->shards[s].offset = v->offset;
            ix->shards[s].unsafe = false;
            s++;
        }
    }
    ix->shard_count = distinct;
    stg_sort(ix->shards, distinct, sizeof *ix->shards, cmp_shard_first, NULL);
    /* Runs of equal names in refs map to one shard; find each run's shard by its offset. */
    for (size_t i = 0; i < kept;) {
        size_t j = i;
        while (j < kept && cmp_bytes(refs[i].name, refs[i].len, refs[j].name, refs[j].len) == 0) {
            j++;
        }
        uint64_t first_offset = ps->values[refs[i].idx].offset;
        size_t lo = 0, hi = distinct;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ix->shards[mid].offset < first_offset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for (size_t m = i; m < j; m++) {
            ix->entries[refs[m].idx].shard = (uint32_t)lo;
        }
        i = j;
    }
    stg_mem_free(refs);
    for (size_t i = 0; i < distinct; i++) {
        stg_index_shard *sh = &ix->shards[i];
        if (!stg_index_shard_name_safe(sh->name, sh->name_len)) {
            sh->unsafe = true;
            stg_report_add(ps->r, STG_INDEX_SHARD_PATH_UNSAFE, sh->offset,
                           "a shard name is not a plain file name inside the model folder "
                           "(absolute, \"..\", a separator or NUL): it is not opened");
        }
    }
}

bool stg_index_parse(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r,
                     stg_index *ix)
{
    stg_limits def;
    if (lim == NULL) {
        stg_limits_default(&def);
        lim = &def;
    }
    stg_index_release(ix);
    stg_arena_init(&ix->arena, index_budget(lim, len));
    ix->ok = true;
    index_parse ps;
    memset(&ps, 0, sizeof ps);
    ps.lim = lim;
    ps.r = r;
    ps.ix = ix;
    stg_json_init(&ps.json, buf, len, lim->max_json_depth, &ix->arena);
    stg_json_event ev;
    bool have_map = false;
    if (next_event(&ps, &ev)) {
        if (ev.type != STG_JSON_OBJECT_BEGIN) {
            stg_report_add(r, STG_INDEX_INVALID, (uint64_t)ev.offset,
                           "the index does not have the expected shape: the top-level value is "
                           "not an object");
            ix->ok = false;
            ps.stop = true;
        }
    }
    while (!ps.stop && next_event(&ps, &ev)) {
        if (ev.type == STG_JSON_OBJECT_END) {
            break;
        }
        if (ev.type == STG_JSON_DUPLICATE) {
            report_duplicate(&ps, &ev);
            continue;
        }
        bool is_map = key_is(&ev, "weight_map");
        bool is_meta = !is_map && key_is(&ev, "metadata");
        if (!next_event(&ps, &ev)) {
            break;
        }
        if (is_map) {
            have_map = true;
            if (ev.type == STG_JSON_OBJECT_BEGIN) {
                parse_weight_map(&ps);
            } else {
                shape_error(&ps, &ev, "weight_map is not an object");
            }
        } else if (is_meta) {
            if (ev.type == STG_JSON_OBJECT_BEGIN) {
                parse_metadata(&ps);
            } else {
                shape_error(&ps, &ev, "metadata is not an object");
            }
        } else {
            skip_value(&ps, &ev); /* other top-level keys are ignored, as loaders do */
        }
    }
    if (!ps.stop && next_event(&ps, &ev) && ev.type == STG_JSON_END) {
        size_t end = ev.offset;
        if (!stg_json_rest_is_ws(buf, len, end)) {
            /* a byte other than JSON whitespace follows, so this stops before len */
            while (buf[end] == ' ' || buf[end] == '\t' || buf[end] == '\r' || buf[end] == '\n') {
                end++;
            }
            stg_report_add(r, STG_JSON_SYNTAX, (uint64_t)end,
                           "bytes follow the index's JSON value");
            ix->ok = false;
            ps.stop = true;
        }
    }
    if (!ps.stop && !have_map) {
        stg_report_add(r, STG_INDEX_INVALID, 0,
                       "the index does not have the expected shape: weight_map is missing");
        ix->ok = false;
    }
    if (!ps.stop) {
        build_shards(&ps);
    }
    stg_json_release(&ps.json);
    void *values = ps.values;
    stg_arena_free_buffer(&ix->arena, &values, &ps.values_cap_bytes);
    return ix->ok;
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 2: the map against the shards' tables.                                                 */

typedef struct tensor_ref {
    const char *name;
    size_t len;
    uint32_t shard;
    uint64_t offset; /* map: key offset in the index; shard: key offset in the shard */
    uint64_t byte_size;
} tensor_ref;

static int cmp_tensor_ref(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const tensor_ref *a = pa, *b = pb;
    int c = cmp_bytes(a->name, a->len, b->name, b->len);
    if (c != 0) {
        return c;
    }
    if (a->shard != b->shard) {
        return a->shard < b->shard ? -1 : 1;
    }
    return a->offset < b->offset ? -1 : (a->offset > b->offset ? 1 : 0);
}

/* First element of v[0..n) (sorted by name, shard) with this name (and shard when want_shard). */
static const tensor_ref *find_ref(const tensor_ref *v, size_t n, const char *name, size_t len,
                                  bool want_shard, uint32_t shard)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_bytes(v[mid].name, v[mid].len, name, len);
        if (c == 0 && want_shard && v[mid].shard != shard) {
            c = v[mid].shard < shard ? -1 : 1;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < n && cmp_bytes(v[lo].name, v[lo].len, name, len) == 0 &&
        (!want_shard || v[lo].shard == shard)) {
        return &v[lo];
    }
    return NULL;
}

void stg_index_check_shards(const stg_index *ix, const stg_index_shard_table *tables,
                            const stg_limits *lim, stg_report *r)
{
    (void)lim;
    if (!ix->ok) {
        return;
    }
    size_t map_n = 0, shard_n = 0;
    bool all_available = true;
    for (size_t i = 0; i < ix->entry_count; i++) {
        map_n += !ix->entries[i].dropped;
    }
    for (size_t s = 0; s < ix->shard_count; s++) {
        if (tables[s].available) {
            shard_n += tables[s].count;
        } else {
            all_available = false;
        }
    }
    tensor_ref *map = stg_mem_alloc((map_n == 0 ? 1 : map_n) * sizeof *map);
    tensor_ref *held = stg_mem_alloc((shard_n == 0 ? 1 : shard_n) * sizeof *held);
    if (map == NULL || held == NULL) {
        stg_mem_free(map);
        stg_mem_free(held);
        stg_report_oom(r);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < ix->entry_count; i++) {
        const stg_index_entry *e = &ix->entries[i];
        if (!e->dropped) {
            map[k++] = (tensor_ref){e->tensor, e->tensor_len, e->shard, e->key_offset, 0};
        }
    }
    k = 0;
    for (size_t s = 0; s < ix->shard_count; s++) {
        if (!tables[s].available) {
            continue;
        }
        for (size_t t = 0; t < tables[s].count; t++) {
            const stg_index_shard_tensor *st = &tables[s].tensors[t];
            held[k++] = (tensor_ref){st->name, st->name_len, (uint32_t)s, st->name_offset,
                                     st->byte_size};
        }
    }
    stg_sort(map, map_n, sizeof *map, cmp_tensor_ref, NULL);
    stg_sort(held, shard_n, sizeof *held, cmp_tensor_ref, NULL);

    for (size_t i = 0; i < map_n; i++) {
        const tensor_ref *m = &map[i];
        if (!tables[m->shard].available) {
            continue; /* missing, unsafe or unreadable shard: already reported */
        }
        if (find_ref(held, shard_n, m->name, m->len, true, m->shard) == NULL) {
            stg_finding *f = stg_report_add(r, STG_INDEX_TENSOR_MISSING, m->offset,
                                            "the index maps a tensor to a shard that does not "
                                            "hold it");
            stg_report_set_tensor(r, f, m->name, m->len);
        }
    }
    uint64_t sum = 0;
    bool sum_overflow = false;
    for (size_t i = 0; i < shard_n; i++) {
        const tensor_ref *h = &held[i];
        const char *shard_name = ix->shards[h->shard].name;
        if (stg_add_u64(sum, h->byte_size, &sum)) {
            sum_overflow = true;
        }
        if (i > 0 && cmp_bytes(held[i - 1].name, held[i - 1].len, h->name, h->len) == 0 &&
            held[i - 1].shard != h->shard) {
            stg_finding *f = stg_report_add(r, STG_INDEX_TENSOR_DUPLICATE, h->offset,
                                            "a tensor is held by more than one shard (also in "
                                            "an earlier shard of the index)");
            stg_report_set_tensor(r, f, h->name, h->len);
            stg_report_set_member(r, f, shard_name, STG_NO_OFFSET);
        }
        if (find_ref(map, map_n, h->name, h->len, false, 0) == NULL) {
            stg_finding *f = stg_report_add(r, STG_INDEX_TENSOR_UNLISTED, h->offset,
                                            "a shard holds a tensor the index does not list");
            stg_report_set_tensor(r, f, h->name, h->len);
            stg_report_set_member(r, f, shard_name, STG_NO_OFFSET);
        }
    }
    if (ix->has_total_size && all_available && (sum_overflow || sum != ix->total_size)) {
        stg_report_add(r, STG_INDEX_TOTAL_SIZE_MISMATCH, ix->total_size_offset,
                       "metadata.total_size (%llu) differs from the sum of the shards' tensor "
                       "sizes (%llu%s)",
                       (unsigned long long)ix->total_size, (unsigned long long)sum,
                       sum_overflow ? ", overflowed" : "");
    }
    stg_mem_free(map);
    stg_mem_free(held);
}
