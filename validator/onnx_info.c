/* The inspect view of an ONNX model (see onnx_info.h). Field numbers are onnx.proto's; a field
 * whose wire type is not the declared one is skipped, as protobuf skips it (and as
 * validator/onnx.c does). Nothing recurses: the main graph's messages are at most five deep
 * (ModelProto, GraphProto, ValueInfoProto, TypeProto, its tensor type, TensorShapeProto, a
 * dimension), each walked once by its own loop. */
#include "onnx_info.h"

#include <string.h>

#include "../parser/hash.h"
#include "../parser/map.h"
#include "../parser/protobuf.h"
#include "../parser/sort.h"
#include "../parser/util.h"
#include "onnx.h"

enum {
    M_IR_VERSION = 1,
    M_PRODUCER = 2,
    M_PRODUCER_VERSION = 3,
    M_DOMAIN = 4,
    M_MODEL_VERSION = 5,
    M_GRAPH = 7,
    M_METADATA = 14,
    M_FUNCTIONS = 25,
    F_NAME = 1,
    F_DOMAIN = 10,
    G_NODE = 1,
    G_NAME = 2,
    G_INITIALIZER = 5,
    G_INPUT = 11,
    G_OUTPUT = 12,
    N_OP_TYPE = 4,
    N_DOMAIN = 7,
    T_DIMS = 1,
    T_DATA_TYPE = 2,
    T_STRING_DATA = 6,
    T_NAME = 8,
    T_EXTERNAL_DATA = 13,
    T_DATA_LOCATION = 14,
    V_NAME = 1,
    V_TYPE = 2,
    TY_TENSOR = 1,
    TY_SPARSE_TENSOR = 8,
    TT_ELEM_TYPE = 1,
    TT_SHAPE = 2,
    SH_DIM = 1,
    D_VALUE = 1,
    D_PARAM = 2
};

typedef struct op_slot {
    uint64_t hash; /* first, as parser/map.h requires */
    uint32_t index;
} op_slot;

typedef struct reader {
    stg_onnx_info *info;
    stg_map ops;
    stg_status status; /* the first failure; STG_OK while reading on */
    uint64_t at;
} reader;

static const char *const type_names[] = {
    "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
    "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
    "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
    "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
    "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0"};

/* Bits per element of each type (0: none, STRING: variable). */
static const uint8_t type_bits[] = {0,  32, 8,   8,  16, 16, 32, 64, 0, 8, 16, 64, 32,
                                    64, 64, 128, 16, 8,  8,  8,  8,  4, 4, 4,  8};

const char *stg_onnx_type_name(int32_t t)
{
    return t >= 0 && (size_t)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : NULL;
}

/* Next field of c; false at the end or on malformed data (then r->status says so). */
static bool next(reader *r, stg_cursor *c, stg_pb_field *f)
{
    stg_parse_detail d = {.what = NULL};
    stg_parse_status s = stg_pb_next(c, f, &d);
    if (s == STG_PARSE_OK) {
        return r->status == STG_OK;
    }
    if (s != STG_PARSE_END && r->status == STG_OK) {
        r->status = STG_E_INVALID;
        r->at = d.offset;
    }
    return false;
}

static const uint8_t *payload(const stg_pb_field *f, size_t *n)
{
    *n = f->sub.end - f->sub.pos;
    return f->sub.base + f->sub.pos;
}

/* Room for one more element of size bytes in *buf (count used): NULL when memory is refused. */
static void *grow(reader *r, void **buf, size_t *cap_bytes, size_t count, size_t size)
{
    if (r->status != STG_OK) {
        return NULL;
    }
    if (stg_arena_grow_buffer(&r->info->arena, buf, cap_bytes, (count + 1) * size) != 0) {
        r->status = STG_E_LIMIT_MEMORY;
        return NULL;
    }
    return (uint8_t *)*buf + count * size;
}

static bool push_tdim(reader *r, int64_t v)
{
    stg_onnx_info *in = r->info;
    int64_t *d = grow(r, (void **)&in->tdims, &in->tdims_cap, in->ntdims, sizeof *d);
    if (d == NULL) {
        return false;
    }
    *d = v;
    in->ntdims++;
    return true;
}

/* ------------------------------------------------------------------------------ tensors */

/* A StringStringEntryProto: false when it lacks its key or value. */
static bool read_kv(reader *r, stg_cursor c, stg_onnx_kv *kv)
{
    memset(kv, 0, sizeof *kv);
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.wire == STG_PB_LEN && f.number == 1) {
            kv->key = payload(&f, &kv->key_len);
        } else if (f.wire == STG_PB_LEN && f.number == 2) {
            kv->value = payload(&f, &kv->value_len);
        }
    }
    return kv->key != NULL && kv->value != NULL;
}

static void read_entry(reader *r, stg_cursor c, stg_onnx_init_rec *t)
{
    stg_onnx_kv kv;
    if (!read_kv(r, c, &kv)) {
        return;
    }
    const uint8_t *k = kv.key, *v = kv.value;
    size_t kn = kv.key_len, vn = kv.value_len;
    /* a key given twice: the last one counts (stg_onnx_check let only decimal numbers by) */
    if (kn == 8 && memcmp(k, "location", 8) == 0) {
        t->location = v;
        t->location_len = vn;
    } else if (kn == 6 && memcmp(k, "offset", 6) == 0) {
        (void)stg_onnx_decimal(v, vn, &t->offset);
    } else if (kn == 6 && memcmp(k, "length", 6) == 0) {
        t->has_length = stg_onnx_decimal(v, vn, &t->length);
    }
}

/* elements and bytes from the dims and the type (saturating at UINT64_MAX: not computable). */
static void sizes(const stg_onnx_info *in, stg_onnx_init_rec *t)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->rank; i++) {
        int64_t d = in->tdims[t->dims_at + i];
        if (d < 0 || stg_mul_u64(n, (uint64_t)d, &n)) {
            n = UINT64_MAX;
            break;
        }
    }
    t->elements = n;
    t->bytes = UINT64_MAX;
    if (t->data_type == 8) {
        t->bytes = t->string_bytes;
    } else if (t->data_type > 0 && (size_t)t->data_type < sizeof type_bits && n != UINT64_MAX) {
        uint64_t bits = 0;
        if (!stg_mul_u64(n, type_bits[t->data_type], &bits)) {
            t->bytes = bits / 8 + (bits % 8 != 0);
        }
    }
}

static void read_tensor(reader *r, stg_cursor c)
{
    stg_onnx_info *in = r->info;
    stg_onnx_init_rec t;
    memset(&t, 0, sizeof t);
    t.dims_at = in->ntdims;
    int32_t location = 0;
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.number == T_DIMS && f.wire == STG_PB_VARINT) {
            t.rank += push_tdim(r, stg_pb_int64(f.value));
        } else if (f.number == T_DIMS && f.wire == STG_PB_LEN) { /* packed */
            stg_cursor p = f.sub;
            uint64_t v = 0;
            while (stg_cur_avail(&p) > 0 && r->status == STG_OK) {
                if (stg_pb_varint(&p, &v) != STG_PARSE_OK) {
                    r->status = STG_E_INVALID;
                    r->at = f.offset;
                    break;
                }
                t.rank += push_tdim(r, stg_pb_int64(v));
            }
        } else if (f.number == T_DATA_TYPE && f.wire == STG_PB_VARINT) {
            t.data_type = stg_pb_int32(f.value);
        } else if (f.number == T_NAME && f.wire == STG_PB_LEN) {
            t.name = payload(&f, &t.name_len);
        } else if (f.number == T_STRING_DATA && f.wire == STG_PB_LEN) {
            if (stg_add_u64(t.string_bytes, f.value, &t.string_bytes)) {
                t.string_bytes = UINT64_MAX;
            }
        } else if (f.number == T_EXTERNAL_DATA && f.wire == STG_PB_LEN) {
            read_entry(r, f.sub, &t);
        } else if (f.number == T_DATA_LOCATION && f.wire == STG_PB_VARINT) {
            location = stg_onnx_data_location(f.value, location);
        }
    }
    if (r->status != STG_OK) {
        return;
    }
    t.external = location == 1;
    if (!t.external) {
        t.location = NULL;
        t.location_len = 0;
        t.offset = t.length = 0;
        t.has_length = false;
    }
    sizes(in, &t);
    stg_onnx_init_rec *slot = grow(r, (void **)&in->inits, &in->inits_cap, in->ninits, sizeof t);
    if (slot == NULL) {
        return;
    }
    *slot = t;
    in->ninits++;
    if (stg_add_u64(in->parameters, t.elements, &in->parameters)) {
        in->parameters = UINT64_MAX;
    }
    if (stg_add_u64(in->tensor_bytes, t.bytes, &in->tensor_bytes)) {
        in->tensor_bytes = UINT64_MAX;
    }
    in->external += t.external;
}

/* ------------------------------------------------------------------------ value infos */

static void read_shape(reader *r, stg_cursor c, stg_onnx_value_rec *v)
{
    stg_onnx_info *in = r->info;
    v->has_shape = true;
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.number != SH_DIM || f.wire != STG_PB_LEN) {
            continue;
        }
        stg_onnx_dim d = {-1, NULL, 0};
        stg_cursor dc = f.sub;
        stg_pb_field g;
        while (next(r, &dc, &g)) {
            if (g.number == D_VALUE && g.wire == STG_PB_VARINT) {
                d.value = stg_pb_int64(g.value);
                d.param = NULL;
                d.param_len = 0;
            } else if (g.number == D_PARAM && g.wire == STG_PB_LEN) {
                d.param = (const char *)payload(&g, &d.param_len);
                d.value = -1; /* a oneof: the last one given counts */
            }
        }
        stg_onnx_dim *slot = grow(r, (void **)&in->vdims, &in->vdims_cap, in->nvdims, sizeof d);
        if (slot == NULL) {
            return;
        }
        *slot = d;
        in->nvdims++;
        v->rank++;
    }
}

static void read_tensor_type(reader *r, stg_cursor c, stg_onnx_value_rec *v)
{
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.number == TT_ELEM_TYPE && f.wire == STG_PB_VARINT) {
            v->elem_type = stg_pb_int32(f.value);
        } else if (f.number == TT_SHAPE && f.wire == STG_PB_LEN) {
            v->rank = 0; /* a repeated shape field: protobuf merges; the dims are kept */
            v->dims_at = r->info->nvdims;
            read_shape(r, f.sub, v);
        }
    }
}

static void read_value(reader *r, stg_cursor c, bool output)
{
    stg_onnx_info *in = r->info;
    stg_onnx_value_rec v;
    memset(&v, 0, sizeof v);
    v.dims_at = in->nvdims;
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.number == V_NAME && f.wire == STG_PB_LEN) {
            v.name = payload(&f, &v.name_len);
        } else if (f.number == V_TYPE && f.wire == STG_PB_LEN) {
            stg_cursor tc = f.sub;
            stg_pb_field g;
            while (next(r, &tc, &g)) {
                if ((g.number == TY_TENSOR || g.number == TY_SPARSE_TENSOR) &&
                    g.wire == STG_PB_LEN) {
                    read_tensor_type(r, g.sub, &v);
                }
            }
        }
    }
    stg_onnx_value_rec **arr = output ? &in->outputs : &in->inputs;
    size_t *n = output ? &in->noutputs : &in->ninputs;
    size_t *cap = output ? &in->outputs_cap : &in->inputs_cap;
    stg_onnx_value_rec *slot = grow(r, (void **)arr, cap, *n, sizeof v);
    if (slot != NULL) {
        *slot = v;
        (*n)++;
    }
}

/* ------------------------------------------------------------------------------- nodes */

static bool op_same(const void *slot, const void *key, void *ctx)
{
    const stg_onnx_info *in = ctx;
    const stg_onnx_op_rec *a = &in->ops[((const op_slot *)slot)->index], *b = key;
    return a->domain_len == b->domain_len && a->op_len == b->op_len &&
           (a->domain_len == 0 || memcmp(a->domain, b->domain, a->domain_len) == 0) &&
           (a->op_len == 0 || memcmp(a->op, b->op, a->op_len) == 0);
}

static bool is_custom(const uint8_t *d, size_t n)
{
    static const char *const standard[] = {"ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training"};
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < sizeof standard / sizeof standard[0]; i++) {
        if (n == strlen(standard[i]) && memcmp(d, standard[i], n) == 0) {
            return false;
        }
    }
    return true;
}

static void read_node(reader *r, stg_cursor c, uint64_t offset)
{
    stg_onnx_info *in = r->info;
    stg_onnx_op_rec key;
    memset(&key, 0, sizeof key);
    key.domain = key.op = (const uint8_t *)"";
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.number == N_OP_TYPE && f.wire == STG_PB_LEN) {
            key.op = payload(&f, &key.op_len);
        } else if (f.number == N_DOMAIN && f.wire == STG_PB_LEN) {
            key.domain = payload(&f, &key.domain_len);
        }
    }
    if (r->status != STG_OK) {
        return;
    }
    if (key.domain_len == 7 && memcmp(key.domain, "ai.onnx", 7) == 0) {
        key.domain_len = 0; /* one domain, shown as "" */
    }
    in->nodes++;
    uint64_t h = stg_map_hash(&r->ops, key.domain, key.domain_len, key.op, key.op_len);
    stg_map_status ms = stg_map_reserve(&r->ops);
    void *slot = NULL;
    if (ms == STG_MAP_OK) {
        ms = stg_map_find(&r->ops, h, op_same, &key, in, &slot);
    }
    if (ms == STG_MAP_FOUND) {
        in->ops[((op_slot *)slot)->index].count++;
        return;
    }
    if (ms != STG_MAP_ABSENT) {
        r->status = ms == STG_MAP_NOMEM ? STG_E_LIMIT_MEMORY : STG_E_LIMIT;
        r->at = offset;
        return;
    }
    stg_onnx_op_rec *rec = grow(r, (void **)&in->ops, &in->ops_cap, in->nops, sizeof key);
    if (rec == NULL) {
        return;
    }
    key.count = 1;
    key.custom = is_custom(key.domain, key.domain_len);
    *rec = key;
    stg_map_claim(&r->ops, slot, h);
    ((op_slot *)slot)->index = (uint32_t)in->nops++;
}

/* A FunctionProto: its (domain, name), kept to tell local functions from native custom ops. */
static void read_function(reader *r, stg_cursor c)
{
    stg_onnx_info *in = r->info;
    stg_onnx_op_rec fn;
    memset(&fn, 0, sizeof fn);
    fn.domain = fn.op = (const uint8_t *)"";
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.number == F_NAME && f.wire == STG_PB_LEN) {
            fn.op = payload(&f, &fn.op_len);
        } else if (f.number == F_DOMAIN && f.wire == STG_PB_LEN) {
            fn.domain = payload(&f, &fn.domain_len);
        }
    }
    if (fn.domain_len == 7 && memcmp(fn.domain, "ai.onnx", 7) == 0) {
        fn.domain_len = 0; /* as the nodes' */
    }
    stg_onnx_op_rec *slot = grow(r, (void **)&in->funcs, &in->funcs_cap, in->nfuncs, sizeof fn);
    if (slot != NULL) {
        *slot = fn;
        in->nfuncs++;
    }
}

/* Marks the ops a local function defines: the functions go into the op map under their own
 * indexes past the ops (a lookup of each op then finds its function, if any). */
static void mark_local(reader *r)
{
    stg_onnx_info *in = r->info;
    for (size_t i = 0; i < in->nfuncs && r->status == STG_OK; i++) {
        const stg_onnx_op_rec *fn = &in->funcs[i];
        uint64_t h = stg_map_hash(&r->ops, fn->domain, fn->domain_len, fn->op, fn->op_len);
        void *slot = NULL;
        stg_map_status ms = stg_map_find(&r->ops, h, op_same, fn, in, &slot);
        if (ms == STG_MAP_FOUND) {
            in->ops[((op_slot *)slot)->index].local = true;
        } else if (ms != STG_MAP_ABSENT) {
            r->status = ms == STG_MAP_NOMEM ? STG_E_LIMIT_MEMORY : STG_E_LIMIT;
        }
    }
}

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n > 0 ? memcmp(a, b, n) : 0;
    return c != 0 ? c : (an > bn) - (an < bn);
}

static int op_order(const void *x, const void *y, void *ctx)
{
    (void)ctx;
    const stg_onnx_op_rec *a = x, *b = y;
    if (a->count != b->count) {
        return a->count > b->count ? -1 : 1;
    }
    int c = bytes_cmp(a->domain, a->domain_len, b->domain, b->domain_len);
    return c != 0 ? c : bytes_cmp(a->op, a->op_len, b->op, b->op_len);
}

/* ------------------------------------------------------------------------------- model */

static void read_graph(reader *r, stg_cursor c)
{
    stg_onnx_info *in = r->info;
    stg_pb_field f;
    while (next(r, &c, &f)) {
        if (f.wire != STG_PB_LEN) {
            continue;
        }
        switch (f.number) {
        case G_NODE: read_node(r, f.sub, f.offset); break;
        case G_NAME: in->graph_name = payload(&f, &in->graph_name_len); break;
        case G_INITIALIZER: read_tensor(r, f.sub); break;
        case G_INPUT: read_value(r, f.sub, false); break;
        case G_OUTPUT: read_value(r, f.sub, true); break;
        default: break;
        }
    }
}

void stg_onnx_info_init(stg_onnx_info *info)
{
    memset(info, 0, sizeof *info);
}

void stg_onnx_info_release(stg_onnx_info *info)
{
    void **bufs[] = {(void **)&info->inputs, (void **)&info->outputs, (void **)&info->inits,
                     (void **)&info->ops,    (void **)&info->tdims,   (void **)&info->vdims,
                     (void **)&info->meta,   (void **)&info->funcs};
    size_t *caps[] = {&info->inputs_cap, &info->outputs_cap, &info->inits_cap, &info->ops_cap,
                      &info->tdims_cap,  &info->vdims_cap,   &info->meta_cap,  &info->funcs_cap};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        stg_arena_free_buffer(&info->arena, bufs[i], caps[i]);
    }
    stg_arena_release(&info->arena);
    memset(info, 0, sizeof *info);
}

stg_status stg_onnx_info_read(const uint8_t *buf, size_t len, const stg_limits *lim, uint64_t seed,
                              stg_onnx_info *info, uint64_t *at)
{
    if ((buf == NULL && len != 0) || lim == NULL || info == NULL || at == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_onnx_info_init(info);
    uint64_t mem = lim->max_memory != 0 ? lim->max_memory : ((uint64_t)8 << 20) + 4 * (uint64_t)len;
    stg_arena_init(&info->arena, mem > SIZE_MAX ? SIZE_MAX : (size_t)mem);
    reader r;
    memset(&r, 0, sizeof r);
    r.info = info;
    stg_map_init(&r.ops, sizeof(op_slot), seed != 0 ? seed : STG_HASH_SEED_DEFAULT,
                 (uint32_t)1 << 30);
    static const uint8_t empty[1] = {0};
    stg_cursor c = stg_cur_make(buf != NULL ? buf : empty, len);
    stg_pb_field f;
    while (next(&r, &c, &f)) {
        if (f.wire == STG_PB_VARINT && f.number == M_IR_VERSION) {
            info->ir_version = stg_pb_int64(f.value);
        } else if (f.wire == STG_PB_VARINT && f.number == M_MODEL_VERSION) {
            info->model_version = stg_pb_int64(f.value);
        } else if (f.wire == STG_PB_LEN && f.number == M_PRODUCER) {
            info->producer = payload(&f, &info->producer_len);
        } else if (f.wire == STG_PB_LEN && f.number == M_PRODUCER_VERSION) {
            info->producer_version = payload(&f, &info->producer_version_len);
        } else if (f.wire == STG_PB_LEN && f.number == M_DOMAIN) {
            info->domain = payload(&f, &info->domain_len);
        } else if (f.wire == STG_PB_LEN && f.number == M_METADATA) {
            stg_onnx_kv kv;
            bool whole = read_kv(&r, f.sub, &kv);
            stg_onnx_kv *slot = grow(&r, (void **)&info->meta, &info->meta_cap, info->nmeta,
                                     sizeof kv);
            if (slot != NULL) {
                if (!whole) { /* protobuf's defaults: an absent string is empty */
                    kv.key = kv.key != NULL ? kv.key : (const uint8_t *)"";
                    kv.value = kv.value != NULL ? kv.value : (const uint8_t *)"";
                }
                *slot = kv;
                info->nmeta++;
            }
        } else if (f.wire == STG_PB_LEN && f.number == M_GRAPH) {
            read_graph(&r, f.sub); /* a repeated graph field: protobuf merges the two */
        } else if (f.wire == STG_PB_LEN && f.number == M_FUNCTIONS) {
            read_function(&r, f.sub);
        }
    }
    if (r.status == STG_OK) {
        mark_local(&r);
    }
    stg_map_free(&r.ops);
    *at = r.at;
    if (r.status != STG_OK) {
        return r.status;
    }
    stg_sort(info->ops, info->nops, sizeof *info->ops, op_order, NULL);
    return STG_OK;
}
