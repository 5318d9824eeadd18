/* The ONNX door of the public API (stg_onnx_open, stguard.h; docs/onnx.md, "Inspecting"): a
 * model validated by the ONNX rules of a scan (stg_onnx_check, then its external-data files in
 * the model's folder) before anything of it is exposed, then read-only accessors over the inspect
 * view (validator/onnx_info.h) for `stguard inspect` and library users.
 *
 * The file is read whole into an image (loader/window.h, never a file mapping), up to
 * max_inflate_bytes as a scan reads it; names and strings point into that image and stay valid
 * until stg_onnx_close. The external-data files are examined (size, kind, where they resolve),
 * never read. */
#include <errno.h>
#include <string.h>

#include "../parser/hash.h"
#include "../parser/mem.h"
#include "../validator/limits.h"
#include "../validator/onnx.h"
#include "../validator/onnx_info.h"
#include "../validator/report.h"
#include "door.h"
#include "onnx_external.h"
#include "path.h"
#include "seed.h"
#include "stguard/stguard.h"
#include "window.h"

struct stg_onnx {
    stg_image img;
    bool img_open;
    stg_onnx_model model; /* the rules' view: opset imports, external-data entries */
    stg_onnx_info info;
};

static void onnx_free(stg_onnx *m)
{
    if (m == NULL) {
        return;
    }
    stg_onnx_model_release(&m->model);
    stg_onnx_info_release(&m->info);
    if (m->img_open) {
        stg_image_close(&m->img);
    }
    stg_mem_free(m);
}

/* Reads the file into m->img; findings for what went wrong. */
static stg_status read_file(const char *path, const stg_limits *lim, stg_report *r, stg_onnx *m)
{
    stg_door_file src;
    stg_status opened = stg_door_file_open(&src, path, r);
    if (opened != STG_OK) {
        return opened;
    }
    int err = 0;
    uint64_t size = src.size;
    uint64_t cap = lim->max_inflate_bytes < STG_INFLATE_BYTES_CEILING ? lim->max_inflate_bytes
                                                                      : STG_INFLATE_BYTES_CEILING;
    stg_status s = stg_image_open(&m->img, src.fd, size, cap, &err);
    if (s == STG_OK) {
        m->img_open = true;
        s = stg_image_fill_all(&m->img, &err);
    }
    stg_door_file_close(&src); /* the whole file is in the image: no more reads */
    if (s == STG_E_LIMIT) {
        stg_finding *f = stg_report_add(r, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
                                        "the file (%llu bytes) needs more memory than "
                                        "max_inflate_bytes (%llu): not read",
                                        (unsigned long long)size, (unsigned long long)cap);
        stg_report_set_limit(r, f, "max_inflate_bytes");
        return STG_E_INVALID;
    }
    if (s == STG_FILE_CHANGED) {
        stg_report_add(r, STG_FILE_CHANGED_CODE, STG_NO_OFFSET,
                       "the file shrank while it was read");
        return STG_FILE_CHANGED;
    }
    if (s == STG_E_NOMEM || err == ENOMEM) {
        return STG_E_NOMEM;
    }
    if (s != STG_OK) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "the file could not be read (errno %d)",
                       err);
        return STG_E_IO;
    }
    return STG_OK;
}

static stg_status open_into(const char *path, const stg_limits *lim, stg_report *r, stg_onnx *m)
{
    stg_status s = read_file(path, lim, r, m);
    if (s != STG_OK) {
        return s;
    }
    static const uint8_t empty[1] = {0};
    const uint8_t *bytes = m->img.bytes != NULL ? m->img.bytes : empty;
    size_t len = m->img.size;
    uint64_t seed = stg_scan_seed();
    if (stg_onnx_check(bytes, len, lim, seed, r, &m->model) != STG_OK) {
        return STG_E_BAD_ARG;
    }
    if (m->model.next > 0) {
        char *dir = stg_path_dir(path);
        if (dir == NULL) {
            return STG_E_NOMEM;
        }
        stg_onnx_check_external_files(dir, NULL, m->model.ext, m->model.next, r);
        stg_mem_free(dir);
    }
    if (!m->model.wire_ok) {
        return STG_E_INVALID; /* the report says why; nothing more is read */
    }
    uint64_t at = 0;
    s = stg_onnx_info_read(bytes, len, lim, seed, &m->info, &at);
    if (s == STG_E_INVALID) {
        stg_report_add(r, STG_ONNX_MALFORMED, at,
                       "the model's protobuf data is malformed inside a graph input or output");
        return STG_E_INVALID;
    }
    if (s == STG_E_LIMIT_MEMORY || s == STG_E_LIMIT) {
        bool mem = s == STG_E_LIMIT_MEMORY;
        stg_report_limit(r, at, mem ? "max_memory" : "hash_probe_ceiling",
                         mem ? (uint64_t)m->info.arena.cap : STG_HASH_PROBE_CEILING);
        return STG_E_INVALID;
    }
    return s;
}

stg_status stg_onnx_open(const char *path, const stg_limits *lim, stg_onnx **out, stg_report **rep)
{
    if (out != NULL) {
        *out = NULL;
    }
    stg_limits def;
    stg_report *r = NULL;
    stg_status begun = stg_open_begin(path, out != NULL, rep, &lim, &def, &r);
    if (begun != STG_OK) {
        return begun;
    }
    stg_onnx *m = stg_mem_calloc(1, sizeof *m);
    if (m == NULL) {
        stg_report_free(r);
        return STG_E_NOMEM;
    }
    stg_onnx_model_init(&m->model);
    stg_onnx_info_init(&m->info);
    stg_report_set_path(r, path);
    stg_status s = open_into(path, lim, r, m);
    s = stg_open_end(r, s, STG_FMT_ONNX, (uint64_t)m->img.size); /* after open_into: its size */
    if (s != STG_OK) {
        onnx_free(m);
        m = NULL;
    }
    *out = m;
    stg_report_hand_out(r, rep);
    return s;
}

void stg_onnx_close(stg_onnx *m)
{
    onnx_free(m);
}

stg_status stg_onnx_describe(const stg_onnx *m, stg_onnx_model_info *out)
{
    if (m == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    const stg_onnx_info *in = &m->info;
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->ir_version = in->ir_version;
    out->model_version = in->model_version;
    out->producer_name = (const char *)in->producer;
    out->producer_name_len = in->producer_len;
    out->producer_version = (const char *)in->producer_version;
    out->producer_version_len = in->producer_version_len;
    out->domain = (const char *)in->domain;
    out->domain_len = in->domain_len;
    out->graph_name = (const char *)in->graph_name;
    out->graph_name_len = in->graph_name_len;
    out->node_count = in->nodes;
    out->initializer_count = in->ninits;
    out->parameters = in->parameters;
    out->tensor_bytes = in->tensor_bytes;
    out->external_count = in->external;
    return STG_OK;
}

size_t stg_onnx_metadata_count(const stg_onnx *m)
{
    return m != NULL ? m->info.nmeta : 0;
}

stg_status stg_onnx_metadata_at(const stg_onnx *m, size_t i, const char **key, size_t *key_len,
                                const char **value, size_t *value_len)
{
    if (m == NULL || key == NULL || key_len == NULL || value == NULL || value_len == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= m->info.nmeta) {
        return STG_E_RANGE;
    }
    const stg_onnx_kv *kv = &m->info.meta[i];
    *key = (const char *)kv->key;
    *key_len = kv->key_len;
    *value = (const char *)kv->value;
    *value_len = kv->value_len;
    return STG_OK;
}

size_t stg_onnx_opset_count(const stg_onnx *m)
{
    return m != NULL ? m->model.nopsets : 0;
}

stg_status stg_onnx_opset_at(const stg_onnx *m, size_t i, stg_onnx_opset_info *out)
{
    if (m == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= m->model.nopsets) {
        return STG_E_RANGE;
    }
    const stg_onnx_opset *o = &m->model.opsets[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->domain = (const char *)o->domain;
    out->domain_len = o->domain_len;
    out->version = o->version;
    return STG_OK;
}

static stg_status value_at(const stg_onnx *m, bool output, size_t i, stg_onnx_value_info *out)
{
    if (m == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    size_t n = output ? m->info.noutputs : m->info.ninputs;
    if (i >= n) {
        return STG_E_RANGE;
    }
    const stg_onnx_value_rec *v = output ? &m->info.outputs[i] : &m->info.inputs[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->name = (const char *)v->name;
    out->name_len = v->name_len;
    out->elem_type = v->elem_type;
    const char *tn = stg_onnx_type_name(v->elem_type);
    out->type_name = tn != NULL ? tn : "?";
    out->has_shape = v->has_shape;
    out->rank = v->rank;
    out->dims = v->rank > 0 ? &m->info.vdims[v->dims_at] : NULL;
    return STG_OK;
}

size_t stg_onnx_input_count(const stg_onnx *m)
{
    return m != NULL ? m->info.ninputs : 0;
}

stg_status stg_onnx_input_at(const stg_onnx *m, size_t i, stg_onnx_value_info *out)
{
    return value_at(m, false, i, out);
}

size_t stg_onnx_output_count(const stg_onnx *m)
{
    return m != NULL ? m->info.noutputs : 0;
}

stg_status stg_onnx_output_at(const stg_onnx *m, size_t i, stg_onnx_value_info *out)
{
    return value_at(m, true, i, out);
}

size_t stg_onnx_op_count(const stg_onnx *m)
{
    return m != NULL ? m->info.nops : 0;
}

stg_status stg_onnx_op_at(const stg_onnx *m, size_t i, stg_onnx_op_info *out)
{
    if (m == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= m->info.nops) {
        return STG_E_RANGE;
    }
    const stg_onnx_op_rec *o = &m->info.ops[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->custom = o->custom;
    out->domain = (const char *)o->domain;
    out->domain_len = o->domain_len;
    out->op_type = (const char *)o->op;
    out->op_type_len = o->op_len;
    out->count = o->count;
    out->local_function = o->local;
    return STG_OK;
}

size_t stg_onnx_initializer_count(const stg_onnx *m)
{
    return m != NULL ? m->info.ninits : 0;
}

stg_status stg_onnx_initializer_at(const stg_onnx *m, size_t i, stg_onnx_tensor_info *out)
{
    if (m == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= m->info.ninits) {
        return STG_E_RANGE;
    }
    const stg_onnx_init_rec *t = &m->info.inits[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->name = (const char *)t->name;
    out->name_len = t->name_len;
    out->data_type = t->data_type;
    const char *tn = stg_onnx_type_name(t->data_type);
    out->type_name = tn != NULL ? tn : "?";
    out->rank = t->rank;
    out->dims = t->rank > 0 ? &m->info.tdims[t->dims_at] : NULL;
    out->elements = t->elements;
    out->bytes = t->bytes;
    out->external = t->external;
    out->location = (const char *)t->location;
    out->location_len = t->location_len;
    out->offset = t->offset;
    out->length = t->length;
    out->has_length = t->has_length;
    return STG_OK;
}
