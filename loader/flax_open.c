/* The Flax door of the public API (stg_flax_open, stguard.h; docs/flax.md): a checkpoint
 * validated by the Flax rules of a scan (stg_flax_check) before anything of it is exposed, then
 * its array leaves (path, dtype name, shape) for `stguard inspect` and library users.
 *
 * The file is read whole into an image (stg_door_read_whole, loader/door.h), up to max_inflate_bytes as a scan
 * reads it; dtype names point into that image. Leaf paths are copied (a path joins the keys of
 * every map above the leaf), all of them under one memory cap. */
#include <string.h>

#include "../parser/mem.h"
#include "../validator/flax.h"
#include "../validator/limits.h"
#include "../validator/report.h"
#include "door.h"
#include "stguard/stguard.h"
#include "window.h"

typedef struct flax_param {
    char *name;
    size_t name_len;
    const char *dtype;
    size_t dtype_len;
    uint32_t rank;
    uint64_t shape[STG_FLAX_MAX_RANK];
    uint64_t offset, nbytes;
    int8_t ext;
} flax_param;

struct stg_flax {
    stg_image img;
    bool img_open;
    flax_param *params;
    size_t n, cap;
    uint64_t used, budget; /* bytes of the table and its names, and their cap */
    bool over;             /* the cap refused a leaf */
    bool oom;
};

static void flax_free(stg_flax *f)
{
    if (f == NULL) {
        return;
    }
    for (size_t i = 0; i < f->n; i++) {
        stg_mem_free(f->params[i].name);
    }
    stg_mem_free(f->params);
    if (f->img_open) {
        stg_image_close(&f->img);
    }
    stg_mem_free(f);
}

/* The visitor of stg_flax_check: one row per leaf, while the cap allows. */
static void keep_leaf(void *arg, const stg_flax_leaf *leaf)
{
    stg_flax *f = arg;
    uint64_t need = sizeof(flax_param) + leaf->path_len + 1;
    if (f->over || f->oom || f->used + need > f->budget) {
        f->over = !f->oom;
        return;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap == 0 ? 64 : 2 * f->cap;
        flax_param *p = stg_mem_realloc(f->params, cap * sizeof *p);
        if (p == NULL) {
            f->oom = true;
            return;
        }
        f->params = p;
        f->cap = cap;
    }
    flax_param *p = &f->params[f->n];
    p->name = stg_mem_strndup(leaf->path, leaf->path_len);
    if (p->name == NULL) {
        f->oom = true;
        return;
    }
    p->name_len = leaf->path_len;
    p->dtype = leaf->dtype;
    p->dtype_len = leaf->dtype_len;
    p->rank = leaf->rank;
    memcpy(p->shape, leaf->shape, sizeof p->shape);
    p->offset = leaf->offset;
    p->nbytes = leaf->nbytes;
    p->ext = leaf->ext;
    f->used += need;
    f->n++;
}

static stg_status open_into(const char *path, const stg_limits *lim, stg_report *r, stg_flax *f)
{
    stg_status s = stg_door_read_whole(path, lim, r, &f->img, &f->img_open);
    if (s != STG_OK) {
        return s;
    }
    static const uint8_t empty[1] = {0};
    const uint8_t *bytes = f->img.bytes != NULL ? f->img.bytes : empty;
    uint64_t mem = lim->max_memory != 0 ? lim->max_memory
                                        : ((uint64_t)8 << 20) + 4 * (uint64_t)f->img.size;
    f->budget = mem;
    s = stg_flax_check(bytes, f->img.size, lim, r, keep_leaf, f);
    if (s == STG_OK && f->oom) {
        s = STG_E_NOMEM;
    }
    if (s == STG_OK && f->over) {
        stg_report_limit(r, STG_NO_OFFSET, "max_memory", mem);
        s = STG_E_INVALID;
    }
    return s;
}

stg_status stg_flax_open(const char *path, const stg_limits *lim, stg_flax **out, stg_report **rep)
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
    stg_flax *f = stg_mem_calloc(1, sizeof *f);
    if (f == NULL) {
        stg_report_free(r);
        return STG_E_NOMEM;
    }
    stg_report_set_path(r, path);
    stg_status s = open_into(path, lim, r, f);
    s = stg_open_end(r, s, STG_FMT_FLAX_MSGPACK, (uint64_t)f->img.size);
    if (s != STG_OK) {
        flax_free(f);
        f = NULL;
    }
    *out = f;
    stg_report_hand_out(r, rep);
    return s;
}

void stg_flax_close(stg_flax *f)
{
    flax_free(f);
}

size_t stg_flax_param_count(const stg_flax *f)
{
    return f != NULL ? f->n : 0;
}

stg_status stg_flax_param_at(const stg_flax *f, size_t i, stg_flax_param_info *out)
{
    if (f == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= f->n) {
        return STG_E_RANGE;
    }
    const flax_param *p = &f->params[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->rank = p->rank;
    out->name = p->name;
    out->name_len = p->name_len;
    out->dtype = p->dtype;
    out->dtype_len = p->dtype_len;
    memcpy(out->shape, p->shape, sizeof out->shape);
    out->offset = p->offset;
    out->nbytes = p->nbytes;
    out->ext = p->ext;
    return STG_OK;
}
