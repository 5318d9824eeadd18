/* Flax msgpack rules (docs/flax.md). The tree is read once with the bounded msgpack reader;
 * each rule is what flax.serialization.msgpack_restore (msgpack.unpackb with raw=False,
 * strict_map_key=False and flax's ext_hook) would refuse or read differently:
 *  - the wire data (flax_malformed), a str that is not UTF-8 (raw=False decodes every str), a
 *    key that is a container or an extension (a dict key must be hashable, and an ndarray
 *    decoded from an extension is not), bytes after the top-level value (flax_trailing:
 *    msgpack's ExtraData);
 *  - extension codes other than flax's three (flax_ext_unknown);
 *  - every array payload (codes 1 and 3): a msgpack (shape list, dtype name, buffer) of its
 *    own, read to its end (flax_array_invalid), a dtype name of the writer's table
 *    (flax_dtype_unknown), shape product x itemsize equal to the buffer's length
 *    (flax_size_mismatch); complex scalars (code 2): two numbers;
 *  - a string key given twice in one map (flax_key_duplicate: the dict keeps the last). */
#include "flax.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../parser/mem.h"
#include "../parser/msgpack.h"
#include "../parser/sort.h"
#include "../parser/text.h"
#include "../parser/util.h"

/* The names flax's writer gives (numpy's dtype.name for every dtype it accepts: no object,
 * no structured dtype) with their element sizes. bfloat16 is JAX's (flax maps the name to
 * jax.numpy.bfloat16); float128 and complex256 are x86-64's long double. */
static const struct {
    const char *name;
    uint32_t size;
} dtypes[] = {
    {"bool", 1},        {"int8", 1},        {"uint8", 1},   {"int16", 2},     {"uint16", 2},
    {"float16", 2},     {"bfloat16", 2},    {"int32", 4},   {"uint32", 4},    {"float32", 4},
    {"int64", 8},       {"uint64", 8},      {"float64", 8}, {"complex64", 8}, {"float128", 16},
    {"complex128", 16}, {"complex256", 32},
};

uint32_t stg_flax_dtype_size(const uint8_t *name, size_t len)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0) {
            return dtypes[i].size;
        }
    }
    return 0;
}

/* One string key of an open map, for the duplicate check. */
typedef struct key_rec {
    const uint8_t *bytes;
    size_t len;
    uint64_t offset;
    bool bin; /* a bin key and a str key of the same bytes are different keys */
} key_rec;

typedef struct frame {
    const uint8_t *key; /* the key under which the current value sits (path rendering) */
    size_t key_len;
    stg_mp_kind key_kind;
    uint64_t key_num;
    uint64_t index;   /* an array's next element */
    size_t keys_from; /* a map's first record in the key table */
    bool map;
    uint64_t offset, count; /* the container's type byte, its elements (pairs) */
    /* A map under the key "shape" or "chunks" (its role): each entry "i" -> a dimension, or
     * -> a 1-D array chunk; ok while every entry is; elems: their product, or their sum. */
    uint8_t role;
    bool role_ok;
    uint64_t role_elems;
    /* A map that may be a chunked array: what its "shape" and "chunks" maps held. */
    bool marker, shape_seen, shape_ok, chunks_seen, chunks_ok;
    uint64_t shape_elems, chunk_elems;
} frame;

enum { ROLE_NONE = 0, ROLE_SHAPE, ROLE_CHUNKS };

typedef struct walk {
    const uint8_t *buf;
    const stg_limits *lim;
    stg_report *r;
    stg_flax_visit visit;
    void *arg;
    stg_mp_limits mp;
    key_rec *keys;
    size_t nkeys, keys_cap;
    bool keys_full; /* the key table reached its cap: duplicates are no longer checked */
    uint64_t arrays;
    /* the last array leaf check_ext read: whether it decoded, its rank and first dimension */
    bool leaf_ok;
    uint32_t leaf_rank;
    uint64_t leaf_dim0;
    char path[STG_FLAX_PATH_MAX + 1];
    size_t path_len;
    frame frames[STG_MP_DEPTH_CEILING];
} walk;

/* ------------------------------------------------------------------------------- paths */

/* Appends bytes to the path, keeping its end when it would be too long. */
static void path_put(walk *w, const char *s, size_t n)
{
    if (n > STG_FLAX_PATH_MAX) {
        s += n - STG_FLAX_PATH_MAX;
        n = STG_FLAX_PATH_MAX;
    }
    if (w->path_len + n > STG_FLAX_PATH_MAX) {
        size_t drop = w->path_len + n - STG_FLAX_PATH_MAX;
        memmove(w->path, w->path + drop, w->path_len - drop);
        w->path_len -= drop;
    }
    memcpy(w->path + w->path_len, s, n);
    w->path_len += n;
    w->path[w->path_len] = '\0';
}

/* The keys from the root to the value at depth: '/'-joined; a number key in decimal. */
static void path_render(walk *w, uint32_t depth)
{
    w->path_len = 0;
    w->path[0] = '\0';
    for (uint32_t d = 0; d < depth; d++) {
        const frame *f = &w->frames[d];
        if (d > 0) {
            path_put(w, "/", 1);
        }
        char num[24];
        if (!f->map || f->key_kind == STG_MP_UINT) {
            int n = snprintf(num, sizeof num, "%llu", (unsigned long long)f->key_num);
            path_put(w, num, (size_t)n);
        } else if (f->key_kind == STG_MP_STR || f->key_kind == STG_MP_BIN) {
            path_put(w, (const char *)f->key, f->key_len);
        } else {
            path_put(w, "?", 1);
        }
    }
}

/* A finding about the value at depth, with its path as the tensor name. */
__attribute__((format(printf, 5, 6))) static void add_at(walk *w, stg_code code, uint32_t depth,
                                                         uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stg_finding *f = stg_report_addv(w->r, code, offset, fmt, ap);
    va_end(ap);
    path_render(w, depth);
    if (w->path_len > 0) {
        stg_report_set_tensor(w->r, f, w->path, w->path_len);
    }
}

/* ------------------------------------------------------------------------ ext payloads */

/* A cursor over exactly an extension's payload (absolute offsets stay those of the file). */
static stg_cursor payload_cursor(const walk *w, const stg_mp_item *ext)
{
    stg_cursor c = {w->buf, (size_t)ext->data_offset, (size_t)ext->data_offset,
                    (size_t)ext->data_offset + ext->len};
    return c;
}

/* The product of an array's dimensions as numpy checks it: over the nonzero dimensions (an
 * empty array too is refused when that product x itemsize passes the largest intp). */
typedef struct shape_size {
    uint64_t nonzero; /* product of the nonzero dimensions */
    bool overflow;    /* that product wrapped */
    bool empty;       /* a dimension is 0 */
} shape_size;

/* The shape list of an array payload (the reader is at its header). */
static bool read_shape(stg_mp_reader *in, stg_flax_leaf *leaf, shape_size *sz, const char **why)
{
    stg_mp_item it;
    if (stg_mp_next(in, &it) != STG_MP_OK || it.kind != STG_MP_ARRAY) {
        *why = "its shape is not a list";
        return false;
    }
    if (it.count > STG_FLAX_MAX_RANK) {
        *why = "its shape has more dimensions than numpy's 32";
        return false;
    }
    leaf->rank = (uint32_t)it.count;
    sz->nonzero = 1;
    for (uint64_t k = 0; k < it.count; k++) {
        stg_mp_item dim;
        if (stg_mp_next(in, &dim) != STG_MP_OK || dim.kind != STG_MP_UINT ||
            dim.u > (uint64_t)INT64_MAX) {
            *why = "a dimension is not a non-negative integer";
            return false;
        }
        leaf->shape[k] = dim.u;
        if (dim.u == 0) {
            sz->empty = true;
        } else {
            sz->overflow = stg_mul_u64(sz->nonzero, dim.u, &sz->nonzero) || sz->overflow;
        }
    }
    if (stg_mp_next(in, &it) != STG_MP_OK || it.kind != STG_MP_CLOSE) {
        *why = "its shape list does not end";
        return false;
    }
    return true;
}

/* An ndarray or numpy scalar payload: msgpack (shape, dtype name, buffer), read to its end as
 * _ndarray_from_bytes's msgpack.unpackb(data, raw=True) reads it. */
static void check_ndarray(walk *w, const stg_mp_item *ext, uint32_t depth)
{
    stg_flax_leaf leaf;
    memset(&leaf, 0, sizeof leaf);
    leaf.offset = ext->offset;
    leaf.ext = ext->ext_type;
    stg_cursor c = payload_cursor(w, ext);
    stg_mp_limits lim = w->mp;
    lim.max_depth = STG_FLAX_PAYLOAD_DEPTH;
    stg_mp_reader *in = stg_mem_alloc(sizeof *in);
    if (in == NULL) {
        stg_report_oom(w->r);
        return;
    }
    stg_mp_init(in, c, &lim);
    stg_mp_item it, dt, buf;
    const char *why = NULL;
    shape_size sz = {1, false, false};
    if (stg_mp_next(in, &it) != STG_MP_OK || it.kind != STG_MP_ARRAY || it.count != 3) {
        why = "it is not a msgpack list of shape, dtype name and buffer";
    } else if (!read_shape(in, &leaf, &sz, &why)) {
        /* why is set */
    } else if (stg_mp_next(in, &dt) != STG_MP_OK ||
               (dt.kind != STG_MP_STR && dt.kind != STG_MP_BIN)) {
        why = "its dtype name is not a string";
    } else if (stg_mp_next(in, &buf) != STG_MP_OK ||
               (buf.kind != STG_MP_BIN && buf.kind != STG_MP_STR)) {
        why = "its buffer is not bytes";
    } else if (stg_mp_next(in, &it) != STG_MP_OK || it.kind != STG_MP_CLOSE ||
               stg_mp_next(in, &it) != STG_MP_DONE || in->cur.pos != in->cur.end) {
        why = "its payload holds more than the one list";
    }
    stg_mem_free(in);
    if (why != NULL) {
        add_at(w, STG_FLAX_ARRAY_INVALID, depth, ext->offset,
               "a Flax array (extension %d) cannot be decoded: %s", ext->ext_type, why);
        return;
    }
    leaf.dtype = (const char *)dt.data;
    leaf.dtype_len = dt.len;
    leaf.nbytes = buf.len;
    uint32_t size = stg_flax_dtype_size(dt.data, dt.len);
    uint64_t want = 0;
    if (size == 0) {
        add_at(w, STG_FLAX_DTYPE_UNKNOWN, depth, dt.offset,
               "a Flax array's dtype name is not one numpy's writer gives (%zu bytes)", dt.len);
    } else if (sz.overflow || stg_mul_u64(sz.nonzero, size, &want) || want > (uint64_t)INT64_MAX) {
        add_at(w, STG_FLAX_SIZE_MISMATCH, depth, ext->offset,
               "a Flax array's shape product x itemsize passes 2^63 - 1 (numpy: too big)");
    } else if ((want = sz.empty ? 0 : want) != buf.len) {
        add_at(w, STG_FLAX_SIZE_MISMATCH, depth, buf.offset,
               "a Flax array's shape and dtype need %llu bytes, its buffer holds %zu",
               (unsigned long long)want, buf.len);
    } else {
        w->leaf_ok = true;
        w->leaf_rank = leaf.rank;
        w->leaf_dim0 = leaf.rank > 0 ? leaf.shape[0] : 0;
    }
    if (w->leaf_ok && w->visit != NULL) {
        path_render(w, depth);
        leaf.path = w->path;
        leaf.path_len = w->path_len;
        w->visit(w->arg, &leaf);
    }
}

/* A native complex payload: msgpack.unpackb(data) then complex(t[0], t[1]); the writer packs
 * the (real, imag) tuple of two floats. */
static void check_complex(walk *w, const stg_mp_item *ext, uint32_t depth)
{
    stg_cursor c = payload_cursor(w, ext);
    stg_mp_limits lim = w->mp;
    lim.max_depth = 1;
    stg_mp_reader *in = stg_mem_alloc(sizeof *in);
    if (in == NULL) {
        stg_report_oom(w->r);
        return;
    }
    stg_mp_init(in, c, &lim);
    stg_mp_item it;
    bool ok = stg_mp_next(in, &it) == STG_MP_OK && it.kind == STG_MP_ARRAY && it.count == 2;
    for (int k = 0; ok && k < 2; k++) {
        ok = stg_mp_next(in, &it) == STG_MP_OK &&
             (it.kind == STG_MP_FLOAT || it.kind == STG_MP_UINT || it.kind == STG_MP_INT);
    }
    ok = ok && stg_mp_next(in, &it) == STG_MP_OK && it.kind == STG_MP_CLOSE &&
         stg_mp_next(in, &it) == STG_MP_DONE && in->cur.pos == in->cur.end;
    stg_mem_free(in);
    if (!ok) {
        add_at(w, STG_FLAX_ARRAY_INVALID, depth, ext->offset,
               "a Flax complex scalar (extension 2) is not a list of two numbers");
    }
}

static void check_ext(walk *w, const stg_mp_item *it)
{
    w->leaf_ok = false;
    if (it->ext_type == STG_FLAX_EXT_NDARRAY || it->ext_type == STG_FLAX_EXT_NPSCALAR) {
        if (++w->arrays > w->lim->max_tensors) {
            if (w->arrays == w->lim->max_tensors + 1) {
                stg_report_limit(w->r, it->offset, "max_tensors", w->lim->max_tensors);
            }
            return;
        }
        check_ndarray(w, it, it->depth);
    } else if (it->ext_type == STG_FLAX_EXT_COMPLEX) {
        check_complex(w, it, it->depth);
    } else {
        add_at(w, STG_FLAX_EXT_UNKNOWN, it->depth, it->offset,
               "a msgpack extension of code %d, which Flax does not decode", it->ext_type);
    }
}

/* ---------------------------------------------------------------------- chunked arrays */

/* flax writes a leaf over 2^30 bytes as {"__msgpack_chunked_array__": True, "shape": {"0": d0,
 * ...}, "chunks": {"0": 1-D array, ...}}; msgpack_restore joins the chunks (np.concatenate,
 * then reshape to the shape) wherever a map holds the marker key. */
#define FLAX_CHUNK_MARKER "__msgpack_chunked_array__"

static bool str_is(const uint8_t *s, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(s, want, n) == 0;
}

static bool key_is(const frame *f, const char *want)
{
    return f->key_kind == STG_MP_STR && str_is(f->key, f->key_len, want);
}

/* A str key "i" for some i < n, written as str(i) writes it (the keys _dict_to_tuple reads). */
static bool index_key(const stg_mp_item *it, uint64_t n)
{
    if (it->kind != STG_MP_STR || it->len == 0 || it->len > 19 ||
        (it->len > 1 && it->data[0] == '0')) {
        return false;
    }
    uint64_t v = 0;
    for (size_t k = 0; k < it->len; k++) {
        if (it->data[k] < '0' || it->data[k] > '9') {
            return false;
        }
        v = v * 10 + (uint64_t)(it->data[k] - '0'); /* 19 digits: no wrap */
    }
    return v < n;
}

/* A container opens: under the key "shape" or "chunks" of a map, it takes that role. */
static void chunk_open(walk *w, const stg_mp_item *it, frame *f)
{
    f->offset = it->offset;
    f->count = it->count;
    if (it->depth == 0 || it->key || it->kind != STG_MP_MAP || !w->frames[it->depth - 1].map) {
        return;
    }
    const frame *up = &w->frames[it->depth - 1];
    f->role = key_is(up, "shape") ? ROLE_SHAPE : key_is(up, "chunks") ? ROLE_CHUNKS : ROLE_NONE;
    f->role_ok = true;
    f->role_elems = f->role == ROLE_SHAPE ? 1 : 0;
}

/* An item inside a map: a key of a role map must be an index, a value what the role wants; the
 * marker key marks its map; a "shape" or "chunks" value that is no map cannot be joined. */
static void chunk_entry(walk *w, const stg_mp_item *it)
{
    if (it->depth == 0 || !w->frames[it->depth - 1].map) {
        return;
    }
    frame *up = &w->frames[it->depth - 1];
    if (it->key) {
        up->role_ok = up->role_ok && (up->role == ROLE_NONE || index_key(it, up->count));
        up->marker = up->marker ||
                     (it->kind == STG_MP_STR && str_is(it->data, it->len, FLAX_CHUNK_MARKER));
        return;
    }
    if (up->role == ROLE_SHAPE) {
        up->role_ok = up->role_ok && it->kind == STG_MP_UINT &&
                      !stg_mul_u64(up->role_elems, it->u, &up->role_elems);
    } else if (up->role == ROLE_CHUNKS) {
        up->role_ok = up->role_ok && it->kind == STG_MP_EXT && w->leaf_ok && w->leaf_rank == 1 &&
                      !stg_add_u64(up->role_elems, w->leaf_dim0, &up->role_elems);
    }
    if (it->kind != STG_MP_MAP && key_is(up, "shape")) {
        up->shape_seen = true;
        up->shape_ok = false;
    } else if (it->kind != STG_MP_MAP && key_is(up, "chunks")) {
        up->chunks_seen = true;
        up->chunks_ok = false;
    }
}

/* A container at depth closes: a role map tells its parent what it held; a marked map must
 * join: both maps there and well-formed, at least one chunk, as many elements as the shape. */
static void chunk_close(walk *w, uint32_t depth)
{
    const frame *f = &w->frames[depth];
    if (depth > 0 && f->role != ROLE_NONE) {
        frame *up = &w->frames[depth - 1];
        bool ok = f->role_ok && (f->role == ROLE_SHAPE || f->count > 0);
        if (f->role == ROLE_SHAPE) {
            up->shape_seen = true;
            up->shape_ok = ok;
            up->shape_elems = f->role_elems;
        } else {
            up->chunks_seen = true;
            up->chunks_ok = ok;
            up->chunk_elems = f->role_elems;
        }
    }
    if (f->map && f->marker &&
        !(f->shape_seen && f->chunks_seen && f->shape_ok && f->chunks_ok &&
          f->shape_elems == f->chunk_elems)) {
        add_at(w, STG_FLAX_ARRAY_INVALID, depth, f->offset,
               "a chunked Flax array (" FLAX_CHUNK_MARKER ") whose shape and chunks do not join "
               "into one array");
    }
}

/* -------------------------------------------------------------------------------- keys */

static int key_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const key_rec *x = a, *y = b;
    if (x->bin != y->bin) {
        return x->bin ? 1 : -1;
    }
    if (x->len != y->len) {
        return x->len < y->len ? -1 : 1;
    }
    int c = x->len > 0 ? memcmp(x->bytes, y->bytes, x->len) : 0;
    if (c != 0) {
        return c;
    }
    return x->offset < y->offset ? -1 : x->offset > y->offset; /* the later one second */
}

/* A string key of the innermost open map, kept until that map closes. */
static void add_key(walk *w, const stg_mp_item *it)
{
    if (w->keys_full) {
        return;
    }
    if (w->nkeys == w->keys_cap) {
        size_t cap = w->keys_cap == 0 ? 64 : w->keys_cap * 2;
        if (cap > w->lim->max_metadata_entries) {
            cap = w->lim->max_metadata_entries;
        }
        if (cap <= w->nkeys) {
            w->keys_full = true; /* keys of open maps past the cap: fails closed */
            stg_report_limit(w->r, it->offset, "max_metadata_entries",
                             w->lim->max_metadata_entries);
            return;
        }
        key_rec *k = stg_mem_realloc(w->keys, cap * sizeof *k);
        if (k == NULL) {
            stg_report_oom(w->r);
            w->keys_full = true;
            return;
        }
        w->keys = k;
        w->keys_cap = cap;
    }
    key_rec *k = &w->keys[w->nkeys++];
    k->bytes = it->data;
    k->len = it->len;
    k->offset = it->offset;
    k->bin = it->kind == STG_MP_BIN;
}

/* A map closed (it is the value at depth): a key given twice is reported at its later use. */
static void close_map(walk *w, const frame *f, uint32_t depth)
{
    size_t n = w->nkeys - f->keys_from;
    if (w->keys_full || n == 0) {
        return; /* (w->keys is NULL until the first key) */
    }
    key_rec *k = w->keys + f->keys_from;
    stg_sort(k, n, sizeof *k, key_cmp, NULL);
    for (size_t i = 1; i < n; i++) {
        if (k[i].bin == k[i - 1].bin && k[i].len == k[i - 1].len &&
            (k[i].len == 0 || memcmp(k[i].bytes, k[i - 1].bytes, k[i].len) == 0)) {
            stg_finding *fd = stg_report_add(w->r, STG_FLAX_KEY_DUPLICATE, k[i].offset,
                                             "a key given twice in one map: the later value "
                                             "replaces the earlier one");
            path_render(w, depth);
            if (depth > 0) {
                path_put(w, "/", 1);
            }
            path_put(w, (const char *)k[i].bytes, k[i].len);
            stg_report_set_tensor(w->r, fd, w->path, w->path_len);
        }
    }
    w->nkeys = f->keys_from;
}

/* ------------------------------------------------------------------------------- items */

static bool is_scalar(stg_mp_kind k)
{
    return k == STG_MP_NIL || k == STG_MP_BOOL || k == STG_MP_UINT || k == STG_MP_INT ||
           k == STG_MP_FLOAT || k == STG_MP_STR || k == STG_MP_BIN;
}

/* Where the item sits in its container: the key of a map, the index of an array. */
static void place(walk *w, const stg_mp_item *it)
{
    if (it->depth == 0) {
        return;
    }
    frame *up = &w->frames[it->depth - 1];
    if (it->key) {
        up->key = it->data;
        up->key_len = it->len;
        up->key_kind = it->kind;
        up->key_num = it->u;
    } else if (!up->map) {
        up->key_num = up->index++;
    }
}

static void on_item(walk *w, const stg_mp_item *it)
{
    if (it->kind == STG_MP_CLOSE) {
        chunk_close(w, it->depth);
        if (w->frames[it->depth].map) {
            close_map(w, &w->frames[it->depth], it->depth);
        }
        return;
    }
    place(w, it);
    size_t bad;
    if (it->kind == STG_MP_STR && !stg_utf8_valid(it->data, it->len, false, &bad)) {
        add_at(w, STG_FLAX_MALFORMED, it->depth, it->data_offset + bad,
               "a msgpack str that is not UTF-8 (msgpack_restore decodes every str)");
    }
    if (it->key && !is_scalar(it->kind)) {
        add_at(w, STG_FLAX_MALFORMED, it->depth, it->offset,
               "a map key that is a msgpack %s: msgpack_restore cannot use it as a dict key",
               stg_mp_kind_name(it->kind));
    } else if (it->key && (it->kind == STG_MP_STR || it->kind == STG_MP_BIN)) {
        add_key(w, it);
    } else if (it->kind == STG_MP_EXT) {
        check_ext(w, it);
    }
    chunk_entry(w, it);
    if (it->kind == STG_MP_ARRAY || it->kind == STG_MP_MAP) {
        frame *f = &w->frames[it->depth];
        memset(f, 0, sizeof *f);
        f->map = it->kind == STG_MP_MAP;
        f->keys_from = w->nkeys;
        chunk_open(w, it, f);
    }
}

static void report_wire(walk *w, const stg_mp_reader *rd, stg_mp_status st)
{
    if (st == STG_MP_E_DEPTH) {
        stg_report_limit(w->r, rd->err_at, "max_json_depth", w->mp.max_depth);
    } else if (st == STG_MP_E_LIMIT) {
        stg_report_limit(w->r, rd->err_at, "max_tensors", w->mp.max_count);
    } else {
        stg_report_add(w->r, STG_FLAX_MALFORMED, rd->err_at, "the msgpack data cannot be read: %s",
                       stg_mp_status_text(st));
    }
}

static void limits_of(const stg_limits *lim, stg_mp_limits *mp)
{
    mp->max_depth = lim->max_json_depth < STG_MP_DEPTH_CEILING ? lim->max_json_depth
                                                               : STG_MP_DEPTH_CEILING;
    mp->max_count = lim->max_tensors;
    mp->max_len = UINT64_MAX; /* every payload lies inside the buffer */
}

stg_status stg_flax_check(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r,
                          stg_flax_visit visit, void *arg)
{
    if ((buf == NULL && len > 0) || lim == NULL || r == NULL) {
        return STG_E_BAD_ARG;
    }
    walk *w = stg_mem_calloc(1, sizeof *w);
    stg_mp_reader *rd = stg_mem_alloc(sizeof *rd);
    if (w == NULL || rd == NULL) {
        stg_mem_free(w);
        stg_mem_free(rd);
        stg_report_oom(r);
        return STG_E_NOMEM;
    }
    w->buf = buf;
    w->lim = lim;
    w->r = r;
    w->visit = visit;
    w->arg = arg;
    limits_of(lim, &w->mp);
    stg_mp_init(rd, stg_cur_make(buf, len), &w->mp);
    stg_mp_item it;
    stg_mp_status st;
    while ((st = stg_mp_next(rd, &it)) == STG_MP_OK && !r->out_of_memory) {
        on_item(w, &it);
    }
    if (st == STG_MP_DONE && rd->cur.pos < len) {
        stg_report_add(r, STG_FLAX_TRAILING, rd->cur.pos,
                       "%zu bytes follow the msgpack value (msgpack's ExtraData)",
                       len - rd->cur.pos);
    } else if (st != STG_MP_DONE && st != STG_MP_OK) {
        report_wire(w, rd, st);
    }
    stg_mem_free(w->keys);
    stg_mem_free(w);
    stg_mem_free(rd);
    return r->out_of_memory ? STG_E_NOMEM : STG_OK;
}

bool stg_flax_sniff(const uint8_t *buf, size_t len, bool *oom)
{
    if (len < 2 || !((buf[0] >= 0x81 && buf[0] <= 0x8f) || buf[0] == 0xde || buf[0] == 0xdf)) {
        return false;
    }
    stg_mp_reader *rd = stg_mem_alloc(sizeof *rd);
    if (rd == NULL) {
        if (oom != NULL) {
            *oom = true;
        }
        return false;
    }
    stg_mp_limits lim = {STG_MP_DEPTH_CEILING, UINT64_MAX, UINT64_MAX};
    stg_mp_init(rd, stg_cur_make(buf, len), &lim);
    stg_mp_item it;
    stg_mp_status st = STG_MP_OK;
    bool ok = true;
    while (ok && (st = stg_mp_next(rd, &it)) == STG_MP_OK) {
        ok = (!it.key || it.kind == STG_MP_STR) &&
             (it.kind != STG_MP_STR || stg_utf8_valid(it.data, it.len, false, NULL)) &&
             (it.depth > 0 || it.kind != STG_MP_MAP || it.count > 0);
    }
    ok = ok && st == STG_MP_DONE && rd->cur.pos == len;
    stg_mem_free(rd);
    return ok;
}
