/* ONNX rules over protobuf wire data (see onnx.h and docs/onnx.md).
 *
 * The walk is one loop over an explicit stack of messages (ModelProto, GraphProto, NodeProto,
 * AttributeProto, FunctionProto, TrainingInfoProto): a field that holds one of these pushes a
 * frame; the flat messages (TensorProto, SparseTensorProto, OperatorSetIdProto and their
 * StringStringEntryProto) are read in place. Field numbers are onnx.proto's. A field whose wire
 * type is not the one onnx.proto declares is an unknown field to protobuf's parser, and is
 * skipped here too. Wire data protobuf's parser refuses is onnx_malformed and ends the walk.
 *
 * What the walk keeps: opset imports, external-data entries, and for the end of the walk the
 * nodes of non-standard domains and the model's local functions (a node that calls a local
 * function runs no native code). The domain tables are parser/map.h maps (keyed SipHash) with a
 * bounded probe, so chosen domain names cannot make the end checks quadratic. */
#include "onnx.h"

#include <string.h>

#include "../parser/hash.h"
#include "../parser/map.h"
#include "../parser/mem.h"
#include "../parser/protobuf.h"
#include "../parser/util.h"

/* ---------------------------------------------------------------- field numbers */

enum {
    MODEL_IR_VERSION = 1,
    MODEL_GRAPH = 7,
    MODEL_OPSET_IMPORT = 8,
    MODEL_TRAINING_INFO = 20,
    MODEL_FUNCTIONS = 25,
    GRAPH_NODE = 1,
    GRAPH_INITIALIZER = 5,
    GRAPH_SPARSE_INITIALIZER = 15,
    NODE_OP_TYPE = 4,
    NODE_ATTRIBUTE = 5,
    NODE_DOMAIN = 7,
    ATTR_T = 5,
    ATTR_G = 6,
    ATTR_TENSORS = 10,
    ATTR_GRAPHS = 11,
    ATTR_SPARSE_TENSOR = 22,
    ATTR_SPARSE_TENSORS = 23,
    TENSOR_NAME = 8,
    TENSOR_EXTERNAL_DATA = 13,
    TENSOR_DATA_LOCATION = 14,
    SPARSE_VALUES = 1,
    SPARSE_INDICES = 2,
    OPSET_DOMAIN = 1,
    OPSET_VERSION = 2,
    ENTRY_KEY = 1,
    ENTRY_VALUE = 2,
    FUNCTION_NAME = 1,
    FUNCTION_NODE = 7,
    FUNCTION_OPSET_IMPORT = 9,
    FUNCTION_DOMAIN = 10,
    TRAINING_INITIALIZATION = 1,
    TRAINING_ALGORITHM = 2,
    MODEL_METADATA_PROPS = 14,
    GRAPH_INPUT = 11,
    GRAPH_OUTPUT = 12,
    GRAPH_VALUE_INFO = 13,
    GRAPH_QUANTIZATION_ANNOTATION = 14,
    ATTR_TP = 14,
    ATTR_TPS = 15,
    DATA_LOCATION_EXTERNAL = 1
};

typedef enum frame_kind {
    K_MODEL,
    K_GRAPH,
    K_NODE,
    K_ATTRIBUTE,
    K_FUNCTION,
    K_TRAINING
} frame_kind;

typedef struct frame {
    frame_kind kind;
    stg_cursor c;
    uint64_t start;
    const uint8_t *a, *b; /* node: domain, op_type; function: domain, name */
    size_t an, bn;
} frame;

/* A (domain, name) pair kept for the end checks. */
typedef struct pair {
    const uint8_t *a, *b;
    size_t an, bn;
    uint64_t offset;
} pair;

typedef struct onnx_walk {
    const stg_limits *lim;
    stg_report *r;
    stg_onnx_model *m;
    uint64_t seed;
    bool failed;  /* the walk stopped (malformed, limit or memory) */
    pair *custom; /* nodes of non-standard domains */
    size_t ncustom, custom_cap_bytes;
    pair *funcs; /* local functions */
    size_t nfuncs, funcs_cap_bytes;
    pair *fn_opsets; /* FunctionProto.opset_import domains */
    size_t nfn_opsets, fn_opsets_cap_bytes;
    bool used_default, used_ml, used_training; /* standard domains nodes use */
    uint64_t first_default, first_ml, first_training;
} onnx_walk;

/* ---------------------------------------------------------------- helpers */

static bool bytes_eq(const uint8_t *a, size_t an, const char *s)
{
    size_t n = strlen(s);
    return an == n && (n == 0 || memcmp(a, s, n) == 0);
}

/* "" and "ai.onnx" name the same domain. */
static void canonical(const uint8_t **d, size_t *n)
{
    if (bytes_eq(*d, *n, "ai.onnx")) {
        *n = 0;
    }
}

static void malformed(onnx_walk *w, uint64_t at, const char *what)
{
    if (!w->failed) {
        stg_report_add(w->r, STG_ONNX_MALFORMED, at, "the model's protobuf data is malformed: %s",
                       what);
    }
    w->failed = true;
}

static void limit(onnx_walk *w, uint64_t at, const char *name, uint64_t value)
{
    if (!w->failed) {
        stg_report_limit(w->r, at, name, value);
    }
    w->failed = true;
}

static void *append(onnx_walk *w, void **buf, size_t *cap_bytes, size_t count, size_t size,
                    uint64_t at)
{
    size_t need = (count + 1) * size; /* counts are bounded by the input's bytes */
    if (stg_arena_grow_buffer(&w->m->arena, buf, cap_bytes, need) != 0) {
        limit(w, at, "max_memory", (uint64_t)w->m->arena.cap);
        if (w->m->arena.out_of_memory) {
            stg_report_oom(w->r);
        }
        return NULL;
    }
    return (uint8_t *)*buf + count * size;
}

/* Next field, reporting malformed data. */
static bool next(onnx_walk *w, stg_cursor *c, stg_pb_field *f, bool *end)
{
    stg_parse_detail d = {.what = NULL};
    stg_parse_status s = stg_pb_next(c, f, &d);
    *end = s == STG_PARSE_END;
    if (s == STG_PARSE_OK || s == STG_PARSE_END) {
        return true;
    }
    malformed(w, d.offset, d.what);
    return false;
}

static const uint8_t *payload(const stg_pb_field *f, size_t *n)
{
    *n = f->sub.end - f->sub.pos;
    return f->sub.base + f->sub.pos;
}

bool stg_onnx_decimal(const uint8_t *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20) {
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool stg_onnx_location_safe(const uint8_t *loc, size_t n)
{
    if (n == 0 || loc[0] == '/' || loc[0] == '\\' || memchr(loc, 0, n) != NULL) {
        return false;
    }
    if (n >= 2 && loc[1] == ':' && ((loc[0] | 0x20) >= 'a' && (loc[0] | 0x20) <= 'z')) {
        return false; /* C:\..., C:foo */
    }
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && loc[j] != '/' && loc[j] != '\\') {
            j++;
        }
        if (j - i == 2 && loc[i] == '.' && loc[i + 1] == '.') {
            return false;
        }
        i = j + 1;
    }
    return true;
}

/* A NUL-terminated copy for a finding's member field (cut at a NUL: the field is a C string). */
static void set_location(stg_report *r, stg_finding *f, const uint8_t *loc, size_t n)
{
    if (f == NULL) {
        return;
    }
    const void *nul = memchr(loc, 0, n);
    size_t m = nul != NULL ? (size_t)((const uint8_t *)nul - loc) : n;
    char *s = stg_mem_strndup((const char *)loc, m);
    if (s == NULL) {
        stg_report_oom(r);
        return;
    }
    stg_report_set_member(r, f, s, STG_NO_OFFSET);
    stg_mem_free(s);
}

/* A domain name for a message: printable ASCII kept, any other byte as '?', at most 64 bytes
 * ("..." after them). The exact bytes are in the finding's module field. */
static const char *shown(char out[72], const uint8_t *s, size_t n)
{
    size_t k = 0;
    for (; k < n && k < 64; k++) {
        out[k] = s[k] >= 0x20 && s[k] < 0x7f && s[k] != '"' && s[k] != '\\' ? (char)s[k] : '?';
    }
    if (k < n) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
    return out;
}

/* ---------------------------------------------------------------- flat messages */

static bool read_entry(onnx_walk *w, stg_cursor c, const uint8_t **key, size_t *kn,
                       const uint8_t **val, size_t *vn, uint64_t *val_at)
{
    *key = *val = NULL;
    *kn = *vn = 0;
    *val_at = c.pos;
    stg_pb_field f;
    bool end = false;
    while (next(w, &c, &f, &end) && !end) {
        if (f.wire != STG_PB_LEN) {
            continue;
        }
        if (f.number == ENTRY_KEY) {
            *key = payload(&f, kn);
        } else if (f.number == ENTRY_VALUE) {
            *val = payload(&f, vn);
            *val_at = f.offset;
        }
    }
    return !w->failed;
}

int32_t stg_onnx_data_location(uint64_t wire_value, int32_t before)
{
    int32_t v = stg_pb_int32(wire_value);
    return v == 0 || v == DATA_LOCATION_EXTERNAL ? v : before;
}

static void read_tensor(onnx_walk *w, stg_cursor c, uint64_t start)
{
    const uint8_t *name = NULL, *loc = NULL, *off = NULL, *len = NULL;
    size_t name_n = 0, loc_n = 0, off_n = 0, len_n = 0;
    uint64_t loc_at = start, off_at = start, len_at = start;
    int32_t location = 0;
    bool has_loc = false, has_off = false, has_len = false;
    stg_pb_field f;
    bool end = false;
    while (next(w, &c, &f, &end) && !end) {
        if (f.number == TENSOR_NAME && f.wire == STG_PB_LEN) {
            name = payload(&f, &name_n);
        } else if (f.number == TENSOR_DATA_LOCATION && f.wire == STG_PB_VARINT) {
            location = stg_onnx_data_location(f.value, location);
        } else if (f.number == TENSOR_EXTERNAL_DATA && f.wire == STG_PB_LEN) {
            const uint8_t *k, *v;
            size_t kn, vn;
            uint64_t vat = 0;
            if (!read_entry(w, f.sub, &k, &kn, &v, &vn, &vat)) {
                return;
            }
            if (k == NULL) {
                continue;
            }
            /* a key given twice: the last one counts, as the readers' loops leave it */
            if (bytes_eq(k, kn, "location")) {
                loc = v, loc_n = vn, loc_at = f.offset, has_loc = true;
            } else if (bytes_eq(k, kn, "offset")) {
                off = v, off_n = vn, off_at = vat, has_off = true;
            } else if (bytes_eq(k, kn, "length")) {
                len = v, len_n = vn, len_at = vat, has_len = true;
            }
        }
    }
    if (w->failed || location != DATA_LOCATION_EXTERNAL) {
        return; /* readers open external data only for data_location EXTERNAL */
    }
    stg_onnx_external e;
    memset(&e, 0, sizeof e);
    e.offset = has_loc ? loc_at : start;
    e.location = loc;
    e.location_len = loc_n;
    e.tensor = name;
    e.tensor_len = name_n;
    if (!has_loc || loc_n == 0) {
        stg_finding *fd = stg_report_add(w->r, STG_ONNX_MALFORMED, e.offset,
                                         "a tensor's data is external but names no location");
        if (name != NULL) {
            stg_report_set_tensor(w->r, fd, (const char *)name, name_n);
        }
        return;
    }
    e.safe = stg_onnx_location_safe(loc, loc_n);
    if (!e.safe) {
        stg_finding *fd = stg_report_add(
            w->r, STG_ONNX_EXTERNAL_PATH_UNSAFE, e.offset,
            "an external-data location is absolute, has \"..\" or a NUL byte: a runtime would "
            "read a file outside the model's folder; it is not opened");
        if (name != NULL) {
            stg_report_set_tensor(w->r, fd, (const char *)name, name_n);
        }
        set_location(w->r, fd, loc, loc_n);
    }
    bool bad_off = has_off && !stg_onnx_decimal(off, off_n, &e.data_offset);
    bool bad_len = has_len && !stg_onnx_decimal(len, len_n, &e.data_length);
    uint64_t sum = 0;
    if (bad_off || bad_len || (has_len && stg_add_u64(e.data_offset, e.data_length, &sum))) {
        stg_finding *fd = stg_report_add(w->r, STG_ONNX_MALFORMED,
                                         bad_len && !bad_off ? len_at : off_at,
                                         "an external-data offset or length is not a decimal "
                                         "number, or their sum overflows");
        if (name != NULL) {
            stg_report_set_tensor(w->r, fd, (const char *)name, name_n);
        }
        e.safe = false; /* nothing to check the file against */
    }
    e.has_length = has_len;
    stg_onnx_external *slot = append(w, (void **)&w->m->ext, &w->m->ext_cap_bytes, w->m->next,
                                     sizeof e, start);
    if (slot != NULL) {
        *slot = e;
        w->m->next++;
    }
}

static void read_sparse(onnx_walk *w, stg_cursor c)
{
    stg_pb_field f;
    bool end = false;
    while (next(w, &c, &f, &end) && !end) {
        if ((f.number == SPARSE_VALUES || f.number == SPARSE_INDICES) && f.wire == STG_PB_LEN) {
            read_tensor(w, f.sub, f.offset);
        }
    }
}

/* OperatorSetIdProto: into the model's list (model = true) or the functions' domains. */
static void read_opset(onnx_walk *w, stg_cursor c, uint64_t start, bool model)
{
    stg_onnx_opset o;
    memset(&o, 0, sizeof o);
    o.offset = start;
    o.domain = c.base + c.pos; /* empty unless the field is there */
    uint64_t version = 0;
    stg_pb_field f;
    bool end = false;
    while (next(w, &c, &f, &end) && !end) {
        if (f.number == OPSET_DOMAIN && f.wire == STG_PB_LEN) {
            o.domain = payload(&f, &o.domain_len);
        } else if (f.number == OPSET_VERSION && f.wire == STG_PB_VARINT) {
            version = f.value;
        }
    }
    if (w->failed) {
        return;
    }
    o.version = stg_pb_int64(version);
    if (model) {
        stg_onnx_opset *slot = append(w, (void **)&w->m->opsets, &w->m->opsets_cap_bytes,
                                      w->m->nopsets, sizeof o, start);
        if (slot != NULL) {
            *slot = o;
            w->m->nopsets++;
        }
    } else {
        pair *p = append(w, (void **)&w->fn_opsets, &w->fn_opsets_cap_bytes, w->nfn_opsets,
                         sizeof *p, start);
        if (p != NULL) {
            p->a = o.domain;
            p->an = o.domain_len;
            p->b = NULL;
            p->bn = 0;
            p->offset = start;
            w->nfn_opsets++;
        }
    }
}

/* ---------------------------------------------------------------- messages read as wire data */

/* Messages that name no file and run no code but that protobuf's parser parses all the same (so
 * a runtime refuses the model when their wire data is broken): ValueInfoProto and TypeProto (its
 * tensor, sequence, map, optional and sparse tensor types, recursive), TensorShapeProto and its
 * dimensions, StringStringEntryProto, TensorAnnotation. Each is walked for well-formed wire data
 * only, down its message fields, with an explicit stack that continues the walk's depth. */
typedef enum wire_msg {
    W_NONE = 0,
    W_VALUE_INFO,
    W_TYPE,
    W_TENSOR_TYPE, /* TypeProto.Tensor and TypeProto.SparseTensor: elem_type 1, shape 2 */
    W_ELEM,        /* TypeProto.Sequence and TypeProto.Optional: elem_type 1 */
    W_MAP,         /* key_type 1, value_type 2 */
    W_SHAPE,
    W_FLAT, /* Dimension, StringStringEntryProto: no message field */
    W_ANNOTATION
} wire_msg;

/* The message a length-delimited field of `m` holds (W_NONE: bytes, a string or unknown). */
static wire_msg wire_sub(wire_msg m, uint32_t n)
{
    switch (m) {
    case W_VALUE_INFO: return n == 2 ? W_TYPE : W_NONE;
    case W_TYPE:
        return n == 1 || n == 8   ? W_TENSOR_TYPE
               : n == 4 || n == 9 ? W_ELEM
               : n == 5           ? W_MAP
                                  : W_NONE;
    case W_TENSOR_TYPE: return n == 2 ? W_SHAPE : W_NONE;
    case W_ELEM: return n == 1 ? W_TYPE : W_NONE;
    case W_MAP: return n == 2 ? W_TYPE : W_NONE;
    case W_SHAPE: return n == 1 ? W_FLAT : W_NONE;
    case W_ANNOTATION: return n == 2 ? W_FLAT : W_NONE;
    case W_NONE:
    case W_FLAT: return W_NONE;
    }
    return W_NONE;
}

static void wire_check(onnx_walk *w, const stg_pb_field *f, wire_msg kind, uint32_t depth)
{
    struct {
        stg_cursor c;
        wire_msg kind;
    } st[STG_ONNX_DEPTH_CEILING];
    if (depth >= STG_ONNX_DEPTH_CEILING) {
        limit(w, f->offset, "max_onnx_depth", STG_ONNX_DEPTH_CEILING);
        return;
    }
    uint32_t sp = 1, room = STG_ONNX_DEPTH_CEILING - depth;
    st[0].c = f->sub;
    st[0].kind = kind;
    while (sp > 0 && !w->failed) {
        stg_pb_field g;
        bool end = false;
        if (!next(w, &st[sp - 1].c, &g, &end)) {
            return;
        }
        if (end) {
            sp--;
            continue;
        }
        wire_msg sub = g.wire == STG_PB_LEN ? wire_sub(st[sp - 1].kind, g.number) : W_NONE;
        if (sub == W_NONE) {
            continue;
        }
        if (sp == room) {
            limit(w, g.offset, "max_onnx_depth", STG_ONNX_DEPTH_CEILING);
            return;
        }
        st[sp].c = g.sub;
        st[sp].kind = sub;
        sp++;
    }
}

/* ---------------------------------------------------------------- the walk */

static bool push(onnx_walk *w, frame *st, uint32_t *sp, frame_kind kind, const stg_pb_field *f)
{
    if (*sp == STG_ONNX_DEPTH_CEILING) {
        limit(w, f->offset, "max_onnx_depth", STG_ONNX_DEPTH_CEILING);
        return false;
    }
    frame *fr = &st[(*sp)++];
    memset(fr, 0, sizeof *fr);
    fr->kind = kind;
    fr->c = f->sub;
    fr->start = f->offset;
    return true;
}

/* A node ends: its domain is standard, or kept for the end checks. */
static void end_node(onnx_walk *w, const frame *fr)
{
    const uint8_t *d = fr->a != NULL ? fr->a : (const uint8_t *)"";
    size_t dn = fr->a != NULL ? fr->an : 0;
    canonical(&d, &dn);
    if (dn == 0) {
        if (!w->used_default) {
            w->first_default = fr->start;
        }
        w->used_default = true;
        return;
    }
    if (bytes_eq(d, dn, "ai.onnx.ml")) {
        if (!w->used_ml) {
            w->first_ml = fr->start;
        }
        w->used_ml = true;
        return;
    }
    if (bytes_eq(d, dn, "ai.onnx.preview.training")) {
        if (!w->used_training) {
            w->first_training = fr->start;
        }
        w->used_training = true;
        return;
    }
    pair *p = append(w, (void **)&w->custom, &w->custom_cap_bytes, w->ncustom, sizeof *p,
                     fr->start);
    if (p != NULL) {
        p->a = d;
        p->an = dn;
        p->b = fr->b != NULL ? fr->b : (const uint8_t *)"";
        p->bn = fr->b != NULL ? fr->bn : 0;
        p->offset = fr->start;
        w->ncustom++;
    }
}

static void end_function(onnx_walk *w, const frame *fr)
{
    pair *p = append(w, (void **)&w->funcs, &w->funcs_cap_bytes, w->nfuncs, sizeof *p, fr->start);
    if (p != NULL) {
        const uint8_t *d = fr->a != NULL ? fr->a : (const uint8_t *)"";
        size_t dn = fr->a != NULL ? fr->an : 0;
        canonical(&d, &dn);
        p->a = d;
        p->an = dn;
        p->b = fr->b != NULL ? fr->b : (const uint8_t *)"";
        p->bn = fr->b != NULL ? fr->bn : 0;
        p->offset = fr->start;
        w->nfuncs++;
    }
}

/* One field of the frame on top; may push. */
static void on_field(onnx_walk *w, frame *st, uint32_t *sp, const stg_pb_field *f)
{
    frame *fr = &st[*sp - 1];
    bool len = f->wire == STG_PB_LEN;
    switch (fr->kind) {
    case K_MODEL:
        if (f->number == MODEL_IR_VERSION && f->wire == STG_PB_VARINT) {
            w->m->has_ir_version = true;
            w->m->ir_version = stg_pb_int64(f->value);
        } else if (len && f->number == MODEL_GRAPH) {
            push(w, st, sp, K_GRAPH, f);
        } else if (len && f->number == MODEL_OPSET_IMPORT) {
            read_opset(w, f->sub, f->offset, true);
        } else if (len && f->number == MODEL_TRAINING_INFO) {
            push(w, st, sp, K_TRAINING, f);
        } else if (len && f->number == MODEL_FUNCTIONS) {
            push(w, st, sp, K_FUNCTION, f);
        } else if (len && f->number == MODEL_METADATA_PROPS) {
            wire_check(w, f, W_FLAT, *sp);
        }
        return;
    case K_GRAPH:
        if (len && f->number == GRAPH_NODE) {
            push(w, st, sp, K_NODE, f);
        } else if (len && f->number == GRAPH_INITIALIZER) {
            read_tensor(w, f->sub, f->offset);
        } else if (len && f->number == GRAPH_SPARSE_INITIALIZER) {
            read_sparse(w, f->sub);
        } else if (len && (f->number == GRAPH_INPUT || f->number == GRAPH_OUTPUT ||
                           f->number == GRAPH_VALUE_INFO)) {
            wire_check(w, f, W_VALUE_INFO, *sp);
        } else if (len && f->number == GRAPH_QUANTIZATION_ANNOTATION) {
            wire_check(w, f, W_ANNOTATION, *sp);
        }
        return;
    case K_NODE:
        if (len && f->number == NODE_OP_TYPE) {
            fr->b = payload(f, &fr->bn);
        } else if (len && f->number == NODE_DOMAIN) {
            fr->a = payload(f, &fr->an);
        } else if (len && f->number == NODE_ATTRIBUTE) {
            push(w, st, sp, K_ATTRIBUTE, f);
        }
        return;
    case K_ATTRIBUTE:
        if (len && (f->number == ATTR_G || f->number == ATTR_GRAPHS)) {
            push(w, st, sp, K_GRAPH, f);
        } else if (len && (f->number == ATTR_T || f->number == ATTR_TENSORS)) {
            read_tensor(w, f->sub, f->offset);
        } else if (len && (f->number == ATTR_SPARSE_TENSOR || f->number == ATTR_SPARSE_TENSORS)) {
            read_sparse(w, f->sub);
        } else if (len && (f->number == ATTR_TP || f->number == ATTR_TPS)) {
            wire_check(w, f, W_TYPE, *sp);
        }
        return;
    case K_FUNCTION:
        if (len && f->number == FUNCTION_NODE) {
            push(w, st, sp, K_NODE, f);
        } else if (len && f->number == FUNCTION_NAME) {
            fr->b = payload(f, &fr->bn);
        } else if (len && f->number == FUNCTION_DOMAIN) {
            fr->a = payload(f, &fr->an);
        } else if (len && f->number == FUNCTION_OPSET_IMPORT) {
            read_opset(w, f->sub, f->offset, false);
        }
        return;
    case K_TRAINING:
        if (len && (f->number == TRAINING_INITIALIZATION || f->number == TRAINING_ALGORITHM)) {
            push(w, st, sp, K_GRAPH, f);
        }
        return;
    }
}

static void walk(onnx_walk *w, const uint8_t *buf, size_t len)
{
    frame st[STG_ONNX_DEPTH_CEILING]; /* about 8 KiB */
    uint32_t sp = 1;
    memset(&st[0], 0, sizeof st[0]);
    st[0].kind = K_MODEL;
    st[0].c = stg_cur_make(buf, len);
    while (sp > 0 && !w->failed) {
        frame *fr = &st[sp - 1];
        stg_pb_field f;
        bool end = false;
        if (!next(w, &fr->c, &f, &end)) {
            break;
        }
        if (end) {
            if (fr->kind == K_NODE) {
                end_node(w, fr);
            } else if (fr->kind == K_FUNCTION) {
                end_function(w, fr);
            }
            sp--;
            continue;
        }
        on_field(w, st, &sp, &f);
    }
}

/* ---------------------------------------------------------------- end checks */

/* A set of pairs (indexes into an array) in parser/map.h's map, keyed by the walk's seed. */
typedef struct pair_slot {
    uint64_t hash; /* first, as parser/map.h requires */
    uint32_t index;
} pair_slot;

typedef struct pair_set {
    stg_map map;
    const pair *items;
} pair_set;

static bool pair_eq(const pair *x, const pair *y)
{
    return x->an == y->an && x->bn == y->bn && (x->an == 0 || memcmp(x->a, y->a, x->an) == 0) &&
           (x->bn == 0 || memcmp(x->b, y->b, x->bn) == 0);
}

static bool pair_same(const void *slot, const void *key, void *ctx)
{
    const pair_set *s = ctx;
    return pair_eq(&s->items[((const pair_slot *)slot)->index], key);
}

static void set_init(const onnx_walk *w, pair_set *s, const pair *items, size_t n)
{
    s->items = items;
    uint32_t max = 64;
    while (max < 2 * n && max < ((uint32_t)1 << 30)) {
        max *= 2;
    }
    stg_map_init(&s->map, sizeof(pair_slot), w->seed, max);
}

/* Finds key in s; when absent and insert_index != UINT32_MAX, inserts that item. Returns 1
 * found, 0 absent (inserted if asked), -1 at the probe ceiling (or a full table), -2 when
 * memory was refused. */
static int set_find(pair_set *s, const pair *key, uint32_t insert_index)
{
    uint64_t h = stg_map_hash(&s->map, key->a, key->an, key->b, key->bn);
    if (insert_index != UINT32_MAX) {
        stg_map_status rs = stg_map_reserve(&s->map);
        if (rs != STG_MAP_OK) {
            return rs == STG_MAP_NOMEM ? -2 : -1;
        }
    }
    void *slot = NULL;
    switch (stg_map_find(&s->map, h, pair_same, key, s, &slot)) {
    case STG_MAP_FOUND: return 1;
    case STG_MAP_ABSENT:
        if (insert_index != UINT32_MAX) {
            stg_map_claim(&s->map, slot, h);
            ((pair_slot *)slot)->index = insert_index;
        }
        return 0;
    case STG_MAP_NOMEM: return -2;
    case STG_MAP_OK:
    case STG_MAP_CEILING:
    case STG_MAP_FULL: return -1;
    }
    return -1;
}

/* A set_find that could not answer: the end checks stop, failing closed. */
static void set_fail(onnx_walk *w, int got, uint64_t at)
{
    if (got == -2) {
        stg_report_oom(w->r);
        w->failed = true;
        return;
    }
    limit(w, at, "hash_probe_ceiling", STG_HASH_PROBE_CEILING);
}

static void opset_checks(onnx_walk *w)
{
    const stg_onnx_model *m = w->m;
    if (m->nopsets == 0) {
        stg_report_add(w->r, STG_ONNX_OPSET_INVALID, STG_NO_OFFSET,
                       "the model imports no operator set (opset_import is empty)");
    }
    for (size_t i = 0; i < m->nopsets; i++) {
        const stg_onnx_opset *o = &m->opsets[i];
        if (o->version <= 0) {
            stg_report_add(w->r, STG_ONNX_OPSET_INVALID, o->offset,
                           "an opset import has version %lld: versions start at 1",
                           (long long)o->version);
        }
    }
}

/* A node of `domain` found in no import. */
static void report_unimported(onnx_walk *w, uint64_t at, const uint8_t *d, size_t dn)
{
    char buf[72];
    stg_finding *f = stg_report_add(w->r, STG_ONNX_OPSET_INVALID, at,
                                    "a node uses the domain \"%s\", for which the model imports "
                                    "no opset",
                                    shown(buf, d, dn));
    stg_report_set_global(w->r, f, (const char *)d, dn, NULL, 0);
}

static void end_checks_sets(onnx_walk *w, const pair *imp, size_t nimp, pair_set *imports,
                            pair_set *funcs, pair_set *reported);

static void end_checks(onnx_walk *w)
{
    stg_onnx_model *m = w->m;
    /* imports: model-level (duplicates reported) and functions' */
    size_t nimp = m->nopsets + w->nfn_opsets;
    pair *imp = stg_arena_alloc(&m->arena, (nimp == 0 ? 1 : nimp) * sizeof *imp, sizeof(void *));
    if (imp == NULL) {
        limit(w, STG_NO_OFFSET, "max_memory", (uint64_t)m->arena.cap);
        return;
    }
    for (size_t i = 0; i < m->nopsets; i++) {
        imp[i].a = m->opsets[i].domain;
        imp[i].an = m->opsets[i].domain_len;
        canonical(&imp[i].a, &imp[i].an);
        imp[i].b = NULL;
        imp[i].bn = 0;
        imp[i].offset = m->opsets[i].offset;
    }
    for (size_t i = 0; i < w->nfn_opsets; i++) {
        imp[m->nopsets + i] = w->fn_opsets[i];
        canonical(&imp[m->nopsets + i].a, &imp[m->nopsets + i].an);
    }
    pair_set imports, funcs, reported;
    set_init(w, &imports, imp, nimp);
    set_init(w, &funcs, w->funcs, w->nfuncs);
    set_init(w, &reported, w->custom, w->ncustom);
    end_checks_sets(w, imp, nimp, &imports, &funcs, &reported);
    stg_map_free(&imports.map);
    stg_map_free(&funcs.map);
    stg_map_free(&reported.map);
}

static void end_checks_sets(onnx_walk *w, const pair *imp, size_t nimp, pair_set *imports,
                            pair_set *funcs, pair_set *reported)
{
    const stg_onnx_model *m = w->m;
    for (size_t i = 0; i < nimp; i++) {
        int got = set_find(imports, &imp[i], (uint32_t)i);
        if (got < 0) {
            set_fail(w, got, imp[i].offset);
            return;
        }
        if (got == 1 && i < m->nopsets) {
            char buf[72];
            stg_finding *f = stg_report_add(w->r, STG_ONNX_OPSET_INVALID, imp[i].offset,
                                            "the operator set domain \"%s\" is imported twice",
                                            shown(buf, imp[i].a, imp[i].an));
            stg_report_set_global(w->r, f, (const char *)imp[i].a, imp[i].an, NULL, 0);
        }
    }
    opset_checks(w);
    for (size_t i = 0; i < w->nfuncs; i++) {
        int got = set_find(funcs, &w->funcs[i], (uint32_t)i);
        if (got < 0) {
            set_fail(w, got, w->funcs[i].offset);
            return;
        }
    }
    /* standard domains in use must be imported too */
    static const char *const std_domains[] = {"", "ai.onnx.ml", "ai.onnx.preview.training"};
    for (size_t k = 0; k < 3; k++) {
        bool used = k == 0 ? w->used_default : k == 1 ? w->used_ml : w->used_training;
        uint64_t at = k == 0 ? w->first_default : k == 1 ? w->first_ml : w->first_training;
        pair key = {(const uint8_t *)std_domains[k], NULL, strlen(std_domains[k]), 0, 0};
        if (used && set_find(imports, &key, UINT32_MAX) == 0) {
            report_unimported(w, at, key.a, key.an);
        }
    }
    for (size_t i = 0; i < w->ncustom; i++) {
        const pair *p = &w->custom[i];
        int local = set_find(funcs, p, UINT32_MAX);
        pair dom = {p->a, NULL, p->an, 0, p->offset};
        int seen = set_find(reported, &dom, UINT32_MAX);
        if (local < 0 || seen < 0) {
            set_fail(w, local < 0 ? local : seen, p->offset);
            return;
        }
        if (local == 1 || seen == 1) {
            continue; /* a call of a local function, or a domain reported already */
        }
        /* the set keys on (domain, no name): store this node's domain alone */
        const uint8_t *op = p->b;
        size_t opn = p->bn;
        w->custom[i].b = NULL;
        w->custom[i].bn = 0;
        int put = set_find(reported, &w->custom[i], (uint32_t)i);
        if (put < 0) {
            set_fail(w, put, p->offset);
            return;
        }
        char buf[72];
        stg_finding *f = stg_report_add(w->r, STG_ONNX_CUSTOM_DOMAIN, p->offset,
                                        "a node runs an operator of the custom domain \"%s\": "
                                        "runtimes load native code (a custom-op library) for it",
                                        shown(buf, dom.a, dom.an));
        stg_report_set_global(w->r, f, (const char *)dom.a, dom.an, (const char *)op, opn);
        if (set_find(imports, &dom, UINT32_MAX) == 0) {
            report_unimported(w, p->offset, dom.a, dom.an);
        }
    }
}

/* ---------------------------------------------------------------- recognition */

/* The wire type a message's field must have: STG_PB_VARINT or STG_PB_LEN, -1 for a field the
 * message does not declare. */
typedef int (*schema_fn)(uint32_t number);

static int model_schema(uint32_t n)
{
    switch (n) {
    case 1:
    case 5: return STG_PB_VARINT;
    case 2:
    case 3:
    case 4:
    case 6:
    case 7:
    case 8:
    case 14:
    case 20:
    case 25:
    case 26: return STG_PB_LEN;
    default: return -1;
    }
}

static int opset_schema(uint32_t n)
{
    return n == OPSET_DOMAIN ? STG_PB_LEN : n == OPSET_VERSION ? STG_PB_VARINT : -1;
}

static int graph_schema(uint32_t n)
{
    return n == 1 || n == 2 || n == 5 || (n >= 10 && n <= 16) ? STG_PB_LEN : -1;
}

/* Walks one message: every field well-formed and declared by schema (groups, which stg_pb_next
 * would skip, are refused by the tag check first). On a model, each field is handed to `each`. */
static bool walks_as(stg_cursor c, schema_fn schema, bool (*each)(const stg_pb_field *, void *),
                     void *arg)
{
    for (;;) {
        stg_cursor peek = c;
        uint64_t tag = 0;
        if (stg_cur_avail(&c) == 0) {
            return true;
        }
        if (stg_pb_varint(&peek, &tag) != STG_PARSE_OK || tag >> 3 > STG_PB_FIELD_MAX ||
            schema((uint32_t)(tag >> 3)) != (int)(tag & 7u)) {
            return false;
        }
        stg_pb_field f;
        if (stg_pb_next(&c, &f, NULL) != STG_PARSE_OK || (each != NULL && !each(&f, arg))) {
            return false;
        }
    }
}

typedef struct sniff_state {
    bool ir, graph, opset;
} sniff_state;

static bool sniff_field(const stg_pb_field *f, void *arg)
{
    sniff_state *s = arg;
    switch (f->number) {
    case MODEL_IR_VERSION: s->ir = f->value >= 1 && f->value <= STG_ONNX_SNIFF_IR_MAX; return s->ir;
    case MODEL_GRAPH: s->graph = true; return walks_as(f->sub, graph_schema, NULL, NULL);
    case MODEL_OPSET_IMPORT: s->opset = true; return walks_as(f->sub, opset_schema, NULL, NULL);
    default: return true;
    }
}

bool stg_onnx_sniff(const uint8_t *buf, size_t len)
{
    if (buf == NULL || len == 0) {
        return false;
    }
    sniff_state s = {false, false, false};
    return walks_as(stg_cur_make(buf, len), model_schema, sniff_field, &s) && s.ir &&
           (s.graph || s.opset);
}

/* ---------------------------------------------------------------- entry */

void stg_onnx_model_init(stg_onnx_model *m)
{
    memset(m, 0, sizeof *m);
}

void stg_onnx_model_release(stg_onnx_model *m)
{
    void *p = m->ext;
    stg_arena_free_buffer(&m->arena, &p, &m->ext_cap_bytes);
    p = m->opsets;
    stg_arena_free_buffer(&m->arena, &p, &m->opsets_cap_bytes);
    stg_arena_release(&m->arena);
    memset(m, 0, sizeof *m);
}

stg_status stg_onnx_check(const uint8_t *buf, size_t len, const stg_limits *lim, uint64_t hash_seed,
                          stg_report *r, stg_onnx_model *m)
{
    if ((buf == NULL && len != 0) || lim == NULL || r == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_onnx_model local;
    stg_onnx_model *mm = m != NULL ? m : &local;
    stg_onnx_model_init(mm);
    uint64_t mem = lim->max_memory != 0 ? lim->max_memory : ((uint64_t)8 << 20) + 4 * (uint64_t)len;
    stg_arena_init(&mm->arena, mem > SIZE_MAX ? SIZE_MAX : (size_t)mem);
    onnx_walk w;
    memset(&w, 0, sizeof w);
    w.lim = lim;
    w.r = r;
    w.m = mm;
    w.seed = hash_seed != 0 ? hash_seed : STG_HASH_SEED_DEFAULT;
    static const uint8_t empty[1] = {0};
    walk(&w, buf != NULL ? buf : empty, len);
    mm->wire_ok = !w.failed;
    if (!w.failed) {
        end_checks(&w);
    }
    void *p = w.custom;
    stg_arena_free_buffer(&mm->arena, &p, &w.custom_cap_bytes);
    p = w.funcs;
    stg_arena_free_buffer(&mm->arena, &p, &w.funcs_cap_bytes);
    p = w.fn_opsets;
    stg_arena_free_buffer(&mm->arena, &p, &w.fn_opsets_cap_bytes);
    if (m == NULL) {
        stg_onnx_model_release(&local);
    }
    return STG_OK;
}
