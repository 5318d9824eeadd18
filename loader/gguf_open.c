/* The GGUF door of the public API (stg_gguf_open, stguard.h; docs/gguf.md, "Inspecting"): a
 * GGUF file validated by stg_gguf_check before anything of it is exposed, then read-only
 * accessors over the parsed header for `stguard inspect` and library users.
 *
 * The file is read into an image (loader/window.h), never through a file mapping: only the
 * header is copied (a prefix of 1 MiB, grown fourfold while the parse needs bytes past it, up to
 * max_header_len and at most the file), the data section reads as zeros, which no GGUF rule
 * reads (the layout rules compare tensor ranges with the file's size, not with its bytes).
 * Names, keys and string values point into that image: they stay valid until stg_gguf_close.
 * The descriptor stays open for stg_gguf_read_tensor, which reads validated ranges only, with
 * pread, between two checks that the file is still the one validated (loader/mmap.h). */
#include <string.h>

#include "../parser/cursor.h"
#include "../parser/gguf.h"
#include "../parser/mem.h"
#include "../parser/util.h"
#include "../validator/gguf.h"
#include "../validator/limits.h"
#include "../validator/report.h"
#include "door.h"
#include "gguf_open.h"
#include "seed.h"
#include "stguard/stguard.h"
#include "window.h"

#define GGUF_FIRST_PREFIX ((size_t)1 << 20)

struct stg_gguf {
    stg_door_file src; /* descriptor, path and identity for tensor reads (loader/door.h) */
    stg_image img;
    bool img_open;
    stg_gguf_file file;
    stg_gguf_result res;
    uint64_t params;
};

static void gguf_free(stg_gguf *g)
{
    if (g == NULL) {
        return;
    }
    stg_gguf_file_release(&g->file);
    stg_door_file_close(&g->src);
    if (g->img_open) {
        stg_image_close(&g->img);
    }
    stg_mem_free(g);
}

static void report_errno(stg_report *r, const char *what, int err)
{
    stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "%s failed (errno %d)", what, err);
}

stg_status stg_image_fill_gguf(stg_image *img, const stg_limits *lim, int *err)
{
    size_t size = img->size;
    size_t want = size < GGUF_FIRST_PREFIX ? size : GGUF_FIRST_PREFIX;
    uint64_t ceiling = lim->max_header_len < (uint64_t)size ? lim->max_header_len : size;
    if (ceiling < want) {
        ceiling = want;
    }
    for (;;) {
        stg_status st = stg_image_fill_prefix(img, want, err);
        if (st != STG_OK || want >= ceiling) {
            return st;
        }
        stg_gguf_limits gl;
        stg_gguf_limits_from(lim, size, 0, &gl);
        stg_gguf_file probe;
        stg_gguf_file_init(&probe, gl.max_memory);
        bool whole = stg_gguf_parse(img->bytes, want, &gl, &probe);
        stg_gguf_error why = probe.fail.code;
        stg_gguf_file_release(&probe);
        if (why == STG_GGUF_E_MEMORY) {
            return STG_E_NOMEM; /* where the header ends is not known: fail closed */
        }
        /* A parse of the prefix that ends short of bytes (or finds a count that cannot fit in
         * it) may read on in the whole file: grow. Anything else is decided by the prefix. */
        bool short_of_bytes = why == STG_GGUF_E_TRUNCATED || why == STG_GGUF_E_STRING ||
                              why == STG_GGUF_E_COUNT || why == STG_GGUF_E_ARRAY ||
                              why == STG_GGUF_E_SHORT;
        if (whole || !short_of_bytes) {
            return STG_OK;
        }
        uint64_t next = (uint64_t)want * 4;
        want = (size_t)(next < ceiling ? next : ceiling);
    }
}

/* Sum of the tensors' element counts (saturating), once the file is known valid. */
static uint64_t parameter_count(const stg_gguf_file *f)
{
    uint64_t total = 0;
    for (size_t i = 0; i < f->ntensors; i++) {
        uint64_t elements = 0, bytes = 0;
        if (stg_gguf_tensor_size(&f->tensors[i], &elements, &bytes) == STG_GGUF_SIZE_OK &&
            stg_add_u64(total, elements, &total)) {
            return UINT64_MAX;
        }
    }
    return total;
}

static stg_status open_into(const char *path, const stg_limits *lim, stg_report *r, stg_gguf *g)
{
    stg_status opened = stg_door_file_open(&g->src, path, r);
    if (opened != STG_OK) {
        return opened;
    }
    int err = 0;
    uint64_t cap = lim->max_header_len > GGUF_FIRST_PREFIX ? lim->max_header_len
                                                           : GGUF_FIRST_PREFIX;
    stg_status s = stg_image_open(&g->img, g->src.fd, g->src.size, cap, &err);
    if (s != STG_OK) {
        report_errno(r, "image", err);
        stg_door_file_close_fd(&g->src);
        return STG_E_IO;
    }
    g->img_open = true;
    s = stg_image_fill_gguf(&g->img, lim, &err);
    g->img.fd = -1; /* everything the rules read is in the image now; src.fd is kept for tensor
                       reads, checked against what was validated */
    if (s == STG_FILE_CHANGED) {
        stg_report_add(r, STG_FILE_CHANGED_CODE, STG_NO_OFFSET,
                       "the file shrank while it was read");
        return STG_FILE_CHANGED;
    }
    if (s == STG_E_NOMEM) {
        return STG_E_NOMEM;
    }
    if (s != STG_OK) {
        report_errno(r, "read", err);
        return STG_E_IO;
    }
    static const uint8_t empty[1] = {0};
    const uint8_t *bytes = g->img.bytes != NULL ? g->img.bytes : empty;
    if (stg_gguf_check(bytes, g->img.size, lim, stg_scan_seed(), r, &g->file, &g->res) != STG_OK) {
        return STG_E_BAD_ARG;
    }
    g->params = parameter_count(&g->file);
    if (!stg_door_file_unchanged(&g->src)) {
        stg_report_add(r, STG_FILE_CHANGED_CODE, STG_NO_OFFSET,
                       "the file changed while its header was read");
        return STG_FILE_CHANGED;
    }
    return STG_OK;
}

stg_status stg_gguf_open(const char *path, const stg_limits *lim, stg_gguf **out, stg_report **rep)
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
    stg_gguf *g = stg_mem_calloc(1, sizeof *g);
    if (g == NULL) {
        stg_report_free(r);
        return STG_E_NOMEM;
    }
    stg_gguf_file_init(&g->file, 0);
    stg_door_file_init(&g->src);
    stg_report_set_path(r, path);
    stg_status s = open_into(path, lim, r, g);
    s = stg_open_end(r, s, STG_FMT_GGUF, (uint64_t)g->img.size); /* after open_into: its size */
    if (s == STG_OK && !g->res.layout_ok) {
        s = STG_E_INVALID;
    }
    if (s != STG_OK) {
        gguf_free(g);
        g = NULL;
    }
    *out = g;
    stg_report_hand_out(r, rep);
    return s;
}

void stg_gguf_close(stg_gguf *g)
{
    gguf_free(g);
}

uint32_t stg_gguf_version(const stg_gguf *g)
{
    return g != NULL ? g->file.version : 0;
}

uint32_t stg_gguf_alignment(const stg_gguf *g)
{
    return g != NULL ? g->res.alignment : 0;
}

uint64_t stg_gguf_data_start(const stg_gguf *g)
{
    return g != NULL ? g->res.data_start : 0;
}

uint64_t stg_gguf_parameter_count(const stg_gguf *g)
{
    return g != NULL ? g->params : 0;
}

size_t stg_gguf_metadata_count(const stg_gguf *g)
{
    return g != NULL ? g->file.nkv : 0;
}

size_t stg_gguf_tensor_count(const stg_gguf *g)
{
    return g != NULL ? g->file.ntensors : 0;
}

/* A scalar value of a fixed-size type, read through the cursor. */
static void read_scalar(const uint8_t *base, size_t len, const stg_gguf_kv *kv, stg_gguf_entry *out)
{
    stg_cursor c = stg_cur_make(base, len);
    if (stg_cur_seek(&c, (size_t)kv->value_offset) != STG_OK) {
        return;
    }
    uint8_t b8 = 0;
    uint16_t b16 = 0;
    uint32_t b32 = 0;
    uint64_t b64 = 0;
    switch (kv->type) {
    case STG_GGUF_UINT8:
    case STG_GGUF_BOOL:
        (void)stg_cur_u8(&c, &b8);
        out->u64 = b8;
        out->i64 = (int64_t)b8;
        break;
    case STG_GGUF_INT8:
        (void)stg_cur_u8(&c, &b8);
        out->i64 = (int8_t)b8;
        out->u64 = (uint64_t)out->i64;
        break;
    case STG_GGUF_UINT16:
        (void)stg_cur_le16(&c, &b16);
        out->u64 = b16;
        out->i64 = (int64_t)b16;
        break;
    case STG_GGUF_INT16:
        (void)stg_cur_le16(&c, &b16);
        out->i64 = (int16_t)b16;
        out->u64 = (uint64_t)out->i64;
        break;
    case STG_GGUF_UINT32:
        (void)stg_cur_le32(&c, &b32);
        out->u64 = b32;
        out->i64 = (int64_t)b32;
        break;
    case STG_GGUF_INT32:
        (void)stg_cur_le32(&c, &b32);
        out->i64 = (int32_t)b32;
        out->u64 = (uint64_t)out->i64;
        break;
    case STG_GGUF_FLOAT32: {
        float f;
        (void)stg_cur_le32(&c, &b32);
        memcpy(&f, &b32, sizeof f);
        out->f64 = (double)f;
        break;
    }
    case STG_GGUF_UINT64:
    case STG_GGUF_INT64:
        (void)stg_cur_le64(&c, &b64);
        out->u64 = b64;
        out->i64 = (int64_t)b64;
        break;
    case STG_GGUF_FLOAT64:
        (void)stg_cur_le64(&c, &b64);
        memcpy(&out->f64, &b64, sizeof out->f64);
        break;
    default: break;
    }
}

stg_status stg_gguf_metadata_at(const stg_gguf *g, size_t i, stg_gguf_entry *out)
{
    if (g == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= g->file.nkv) {
        return STG_E_RANGE;
    }
    const stg_gguf_kv *kv = &g->file.kvs[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->key = (const char *)kv->key;
    out->key_len = kv->key_len;
    out->type = kv->type;
    out->elem_type = kv->elem_type;
    out->count = kv->count;
    if (kv->type == STG_GGUF_STRING) {
        out->str = (const char *)g->img.bytes + kv->value_offset;
        out->str_len = (size_t)kv->value_len;
    } else if (kv->type != STG_GGUF_ARRAY) {
        read_scalar(g->img.bytes, g->img.size, kv, out);
    }
    return STG_OK;
}

stg_status stg_gguf_tensor_at(const stg_gguf *g, size_t i, stg_gguf_tensor_info *out)
{
    if (g == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= g->file.ntensors) {
        return STG_E_RANGE;
    }
    const stg_gguf_tensor *t = &g->file.tensors[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->name = (const char *)t->name;
    out->name_len = t->name_len;
    out->ggml_type = t->type;
    const stg_ggml_type_info *ti = stg_ggml_type(t->type);
    out->type_name = ti != NULL ? ti->name : NULL;
    out->n_dims = t->n_dims;
    for (uint32_t d = 0; d < STG_GGUF_MAX_DIMS; d++) {
        out->dims[d] = t->ne[d];
    }
    uint64_t elements = 0, bytes = 0;
    (void)stg_gguf_tensor_size(t, &elements, &bytes); /* checked when the file was opened */
    out->elements = elements;
    out->begin = g->res.data_start + t->data_offset;
    out->end = out->begin + bytes;
    return STG_OK;
}

stg_status stg_gguf_read_tensor(const stg_gguf *g, size_t i, uint64_t offset, void *dst, size_t len)
{
    stg_gguf_tensor_info t;
    stg_status st = stg_gguf_tensor_at(g, i, &t);
    if (st != STG_OK) {
        return st;
    }
    uint64_t size = t.end - t.begin; /* inside the file: proven when it was opened */
    if (offset > size || (uint64_t)len > size - offset) {
        return STG_E_RANGE;
    }
    if (len > 0 && dst == NULL) {
        return STG_E_BAD_ARG;
    }
    return stg_door_file_pread(&g->src, t.begin + offset, dst, len);
}
