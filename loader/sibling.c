/* Sibling data files labelled by the models that name them (loader/sibling.h). */
#include "sibling.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../dispatch/formats.h"
#include "../dispatch/names.h"
#include "../parser/mem.h"
#include "../parser/sort.h"
#include "../parser/util.h"
#include "../validator/coreml.h"
#include "../validator/onnx.h"
#include "../validator/openvino.h"
#include "open_file.h"
#include "path.h"
#include "seed.h"
#include "within.h"

/* One range a model reads from the data file. */
typedef struct sibling_range {
    uint64_t offset, length;
    bool to_end; /* no length: the data runs to the end of the file */
    char *tensor;
    size_t tensor_len;
} sibling_range;

/* What the models beside the file say of it. */
typedef struct sibling_claims {
    dev_t dev;
    ino_t ino;
    stg_format label; /* STG_FMT_UNKNOWN: no model names the file */
    const char *model_kind;
    sibling_range *ranges;
    size_t count, cap;
    bool nomem;
} sibling_claims;

static void claims_free(sibling_claims *c)
{
    for (size_t i = 0; i < c->count; i++) {
        stg_mem_free(c->ranges[i].tensor);
    }
    stg_mem_free(c->ranges);
}

/* false when the range could not be kept (memory, or past the ceiling: then the file is not
 * relabelled, it keeps its findings). */
static bool claims_add(sibling_claims *c, uint64_t offset, uint64_t length, bool to_end,
                       const uint8_t *tensor, size_t tensor_len)
{
    if (c->count == STG_SIBLING_RANGES_CEILING) {
        return false;
    }
    if (c->count == c->cap) {
        size_t ncap = c->cap == 0 ? 16 : c->cap * 2;
        sibling_range *n = stg_mem_realloc(c->ranges, ncap * sizeof *n);
        if (n == NULL) {
            c->nomem = true;
            return false;
        }
        c->ranges = n;
        c->cap = ncap;
    }
    sibling_range *r = &c->ranges[c->count];
    r->offset = offset;
    r->length = length;
    r->to_end = to_end;
    r->tensor = NULL;
    r->tensor_len = 0;
    if (tensor != NULL && tensor_len > 0) {
        r->tensor = stg_mem_strndup((const char *)tensor, tensor_len);
        if (r->tensor == NULL) {
            c->nomem = true;
            return false;
        }
        r->tensor_len = tensor_len;
    }
    c->count++;
    return true;
}

/* The findings a sibling step may replace: the file matched no format, nothing else was seen. */
static bool eligible(const stg_report *r)
{
    if (r->count == 0 || r->truncated != 0 || r->scan_error || r->out_of_memory ||
        r->global_count != 0 || r->side_count != 0 || r->format != STG_FMT_UNKNOWN) {
        return false;
    }
    for (size_t i = 0; i < r->count; i++) {
        const stg_finding *f = &r->findings[i];
        if ((f->code != STG_FORMAT_UNKNOWN && f->code != STG_FORMAT_MISMATCH) ||
            f->member != NULL) {
            return false;
        }
    }
    return true;
}

/* path resolves inside root and is the file of the claims (links followed, as a loader
 * opening the name does). */
static bool names_the_file(const char *root, const char *path, const sibling_claims *c)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == c->dev &&
           st.st_ino == c->ino && stg_path_within(root, path) == STG_WITHIN_YES;
}

/* Reads the whole regular file at path (inside root, at most cap bytes) into *out
 * (stg_mem_free). false when it is none of that or cannot be read. */
static bool read_model(const char *root, const char *path, uint64_t cap, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (stg_path_within(root, path) != STG_WITHIN_YES) {
        return false;
    }
    int fd = -1, err = 0;
    struct stat st;
    if (stg_open_file(path, 0, &fd, &st, &err) != STG_OPENED) {
        return false;
    }
    uint64_t size = (uint64_t)st.st_size;
    uint8_t *buf = size <= cap ? stg_mem_alloc(size + 1) : NULL;
    size_t done = 0;
    while (buf != NULL && done < size) {
        ssize_t n = pread(fd, buf + done, (size_t)(size - done), (off_t)done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        done += (size_t)n;
    }
    close(fd);
    if (buf == NULL || done != size) {
        stg_mem_free(buf);
        return false;
    }
    *out = buf;
    *len = (size_t)size;
    return true;
}

/* Calls visit(arg, e, path) for each entry of the ONNX model at model_path whose location
 * passed the path rules, path being the location joined to dir. A model that does not read as
 * ONNX to its end visits nothing. false when memory failed. */
typedef void (*onnx_entry_fn)(void *arg, const stg_onnx_external *e, const char *path);

static bool onnx_entries(const char *dir, const char *root, const char *model_path,
                         const stg_scan_options *opt, onnx_entry_fn visit, void *arg)
{
    uint8_t *buf;
    size_t len;
    if (!read_model(root, model_path, STG_SIBLING_ONNX_MODEL_BYTES_CEILING, &buf, &len)) {
        return true;
    }
    bool ok = true;
    stg_report *scratch = stg_report_new(&opt->limits);
    stg_onnx_model m;
    stg_onnx_model_init(&m);
    if (scratch == NULL) {
        ok = false;
    } else if (stg_onnx_check(buf, len, &opt->limits, stg_scan_seed(), scratch, &m) == STG_OK &&
               m.wire_ok) {
        for (size_t i = 0; i < m.next && ok; i++) {
            const stg_onnx_external *e = &m.ext[i];
            if (!e->safe) {
                continue;
            }
            char *loc = stg_mem_strndup((const char *)e->location, e->location_len);
            char *path = loc != NULL ? stg_path_join(dir, loc) : NULL;
            ok = path != NULL;
            if (ok) {
                visit(arg, e, path);
            }
            stg_mem_free(path);
            stg_mem_free(loc);
        }
    }
    stg_onnx_model_release(&m);
    stg_report_free(scratch);
    stg_mem_free(buf);
    return ok;
}

typedef struct claim_visit {
    const char *root;
    sibling_claims *c;
} claim_visit;

/* An entry that resolves to the file (inside root) is a range of it. */
static void claim_entry(void *arg, const stg_onnx_external *e, const char *path)
{
    claim_visit *v = arg;
    if (v->c->nomem || !names_the_file(v->root, path, v->c)) {
        return;
    }
    v->c->label = STG_FMT_ONNX_EXTERNAL_DATA;
    v->c->model_kind = "an ONNX model";
    if (!claims_add(v->c, e->data_offset, e->data_length, !e->has_length, e->tensor,
                    e->tensor_len)) {
        v->c->nomem = true; /* not relabelled: fails closed to the old findings */
    }
}

/* The external-data entries of the ONNX model at model_path that resolve to the file: added
 * to c. */
static void onnx_model_claims(const char *dir, const char *root, const char *model_path,
                              const stg_scan_options *opt, sibling_claims *c)
{
    claim_visit v = {root, c};
    if (!onnx_entries(dir, root, model_path, opt, claim_entry, &v)) {
        c->nomem = true;
    }
}

/* The files (device, inode) a model's entries resolve to, links followed, whatever the root:
 * a superset of what it names under any root, to skip models that cannot name a file. */
#define STG_SIBLING_MODEL_IDS_CEILING 4096u

typedef struct model_ids {
    bool built;    /* the set was computed */
    bool overflow; /* more than the ceiling: the model may name any file */
    size_t n;
    uint64_t (*ids)[2];
} model_ids;

static void id_entry(void *arg, const stg_onnx_external *e, const char *path)
{
    (void)e;
    model_ids *m = arg;
    struct stat st;
    if (m->overflow || stat(path, &st) != 0) {
        return;
    }
    uint64_t dev = (uint64_t)st.st_dev, ino = (uint64_t)st.st_ino;
    for (size_t i = 0; i < m->n; i++) {
        if (m->ids[i][0] == dev && m->ids[i][1] == ino) {
            return;
        }
    }
    if (m->n == STG_SIBLING_MODEL_IDS_CEILING) {
        m->overflow = true;
        return;
    }
    m->ids[m->n][0] = dev;
    m->ids[m->n][1] = ino;
    m->n++;
}

/* The model's set; false when memory failed (then the model is read for every file). */
static bool build_ids(const char *dir, const char *root, const char *model_path,
                      const stg_scan_options *opt, model_ids *m)
{
    memset(m, 0, sizeof *m);
    m->ids = stg_mem_alloc(STG_SIBLING_MODEL_IDS_CEILING * sizeof *m->ids);
    if (m->ids == NULL || !onnx_entries(dir, root, model_path, opt, id_entry, m)) {
        stg_mem_free(m->ids);
        m->ids = NULL;
        return false;
    }
    m->built = true;
    return true;
}

static bool ids_may_name(const model_ids *m, const sibling_claims *c)
{
    if (!m->built || m->overflow) {
        return true;
    }
    for (size_t i = 0; i < m->n; i++) {
        if (m->ids[i][0] == (uint64_t)c->dev && m->ids[i][1] == (uint64_t)c->ino) {
            return true;
        }
    }
    return false;
}

static int cmp_names(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The ONNX models (by the format table's names) in dir, sorted, into names[0..*n); false when
 * the folder cannot be listed or holds more entries or models than the ceilings. */
static bool list_onnx_models(const char *dir, char **names, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        return false;
    }
    bool ok = true;
    size_t entries = 0;
    for (struct dirent *de; ok && (de = readdir(d)) != NULL;) {
        if (++entries > STG_SIBLING_DIR_ENTRIES_CEILING) {
            ok = false;
            break;
        }
        const stg_format_entry *e = stg_format_claimed(de->d_name);
        if (e == NULL || e->label != STG_FMT_ONNX) {
            continue;
        }
        if (*n == STG_SIBLING_MODELS_CEILING) {
            ok = false;
            break;
        }
        names[*n] = stg_mem_strndup(de->d_name, strlen(de->d_name));
        ok = names[*n] != NULL;
        *n += ok ? 1 : 0;
    }
    closedir(d);
    if (ok) {
        stg_sort(names, *n, sizeof names[0], cmp_names, NULL);
    }
    return ok;
}

/* ------------------------------------------------------------------------------ cache */

typedef struct cached_dir {
    dev_t dev;
    ino_t ino;
    bool ok; /* the listing ended within the ceilings */
    size_t n;
    char *names[STG_SIBLING_MODELS_CEILING];
    model_ids models[STG_SIBLING_MODELS_CEILING]; /* built on first use */
} cached_dir;

struct stg_sibling_cache {
    pthread_mutex_t lock;
    cached_dir *dirs;
    size_t count, cap;
};

stg_sibling_cache *stg_sibling_cache_new(void)
{
    stg_sibling_cache *c = stg_mem_calloc(1, sizeof *c);
    if (c != NULL && pthread_mutex_init(&c->lock, NULL) != 0) {
        stg_mem_free(c);
        c = NULL;
    }
    return c;
}

void stg_sibling_cache_free(stg_sibling_cache *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t i = 0; i < c->count; i++) {
        for (size_t k = 0; k < c->dirs[i].n; k++) {
            stg_mem_free(c->dirs[i].names[k]);
            stg_mem_free(c->dirs[i].models[k].ids);
        }
    }
    stg_mem_free(c->dirs);
    pthread_mutex_destroy(&c->lock);
    stg_mem_free(c);
}

/* Copies names[0..n) into out (false and nothing kept when memory fails). */
static bool copy_names(char *const *names, size_t n, char **out)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = stg_mem_strndup(names[i], strlen(names[i]));
        if (out[i] == NULL) {
            for (size_t k = 0; k < i; k++) {
                stg_mem_free(out[k]);
            }
            return false;
        }
    }
    return true;
}

/* Under c->lock: the folder's entry, or NULL. */
static cached_dir *cache_find(stg_sibling_cache *c, const struct stat *ds)
{
    for (size_t i = 0; i < c->count; i++) {
        if (c->dirs[i].dev == ds->st_dev && c->dirs[i].ino == ds->st_ino) {
            return &c->dirs[i];
        }
    }
    return NULL;
}

/* The folder's listing from the cache: true with names (copies) and *ok when it is there. */
static bool cache_get(stg_sibling_cache *c, const struct stat *ds, char **names, size_t *n,
                      bool *ok)
{
    bool hit = false;
    pthread_mutex_lock(&c->lock);
    const cached_dir *d = cache_find(c, ds);
    if (d != NULL && copy_names(d->names, d->n, names)) {
        *n = d->n;
        *ok = d->ok;
        hit = true;
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

/* Keeps a listing (when there is room and it is not there yet; memory failing keeps none). */
static void cache_put(stg_sibling_cache *c, const struct stat *ds, char *const *names, size_t n,
                      bool ok)
{
    pthread_mutex_lock(&c->lock);
    if (cache_find(c, ds) == NULL && c->count < STG_SIBLING_CACHE_DIRS) {
        if (c->count == c->cap) {
            size_t ncap = c->cap == 0 ? 16 : c->cap * 2;
            cached_dir *nd = stg_mem_realloc(c->dirs, ncap * sizeof *nd);
            if (nd != NULL) {
                c->dirs = nd;
                c->cap = ncap;
            }
        }
        cached_dir *d = c->count < c->cap ? &c->dirs[c->count] : NULL;
        if (d != NULL && copy_names(names, n, d->names)) {
            memset(d->models, 0, sizeof d->models);
            d->dev = ds->st_dev;
            d->ino = ds->st_ino;
            d->ok = ok;
            d->n = n;
            c->count++;
        }
    }
    pthread_mutex_unlock(&c->lock);
}

/* Whether model i of the folder may name the file: 1 yes or maybe, 0 no, -1 not known yet. */
static int cache_may_name(stg_sibling_cache *cache, const struct stat *ds, size_t i,
                          const sibling_claims *c)
{
    pthread_mutex_lock(&cache->lock);
    const cached_dir *d = cache_find(cache, ds);
    int may = d == NULL || i >= d->n ? 1
              : !d->models[i].built  ? -1
                                     : ids_may_name(&d->models[i], c);
    pthread_mutex_unlock(&cache->lock);
    return may;
}

/* Keeps model i's set (moved into the cache; freed when another thread kept one first). */
static void cache_keep_ids(stg_sibling_cache *cache, const struct stat *ds, size_t i, model_ids *m)
{
    pthread_mutex_lock(&cache->lock);
    cached_dir *d = cache_find(cache, ds);
    if (d != NULL && i < d->n && !d->models[i].built) {
        d->models[i] = *m;
        m->ids = NULL;
    }
    pthread_mutex_unlock(&cache->lock);
    stg_mem_free(m->ids);
}

/* The folder's ONNX models, from the cache or listed (and then kept); *keyed: ds is the
 * folder's identity and the cache holds (or tried to hold) its listing. */
static bool onnx_models(const char *dir, stg_sibling_cache *cache, char **names, size_t *n,
                        struct stat *dsp, bool *keyedp)
{
    struct stat ds = {0};
    bool ok = false;
    *n = 0;
    bool keyed = cache != NULL && stat(dir, &ds) == 0;
    *keyedp = keyed;
    if (keyed) {
        *dsp = ds;
    }
    if (keyed && cache_get(cache, &ds, names, n, &ok)) {
        return ok;
    }
    ok = list_onnx_models(dir, names, n);
    if (keyed) {
        cache_put(cache, &ds, names, *n, ok);
    }
    return ok;
}

/* ONNX models in the file's folder whose external data is the file. false: the folder could
 * not be searched to the end (the file keeps its findings). */
/* Whether model i of the folder (at model) can name the file: asked of the walk's cache, whose
 * set for the model is built the first time (one read of each model per walk); without a
 * cache, always. */
static bool model_may_name(const char *dir, const char *root, const char *model,
                           const stg_scan_options *opt, stg_sibling_cache *cache,
                           const struct stat *ds, size_t i, const sibling_claims *c)
{
    if (cache == NULL) {
        return true;
    }
    int may = cache_may_name(cache, ds, i, c);
    if (may >= 0) {
        return may == 1;
    }
    model_ids m;
    if (!build_ids(dir, root, model, opt, &m)) {
        return true;
    }
    bool named = ids_may_name(&m, c);
    cache_keep_ids(cache, ds, i, &m);
    return named;
}

static bool onnx_claims(const char *dir, const char *root, const stg_scan_options *opt,
                        stg_sibling_cache *cache, sibling_claims *c)
{
    char *names[STG_SIBLING_MODELS_CEILING];
    size_t n = 0;
    struct stat ds = {0};
    bool keyed = false;
    bool ok = onnx_models(dir, cache, names, &n, &ds, &keyed);
    uint64_t total = 0;
    for (size_t i = 0; ok && i < n; i++) {
        char *model = stg_path_join(dir, names[i]);
        struct stat st;
        if (model == NULL) {
            c->nomem = true;
        } else if (stat(model, &st) == 0 && S_ISREG(st.st_mode) &&
                   (uint64_t)st.st_size <= STG_SIBLING_ONNX_MODEL_BYTES_CEILING) {
            total += (uint64_t)st.st_size; /* at most 32 x 64 MiB: no wrap */
        }
        ok = model != NULL && total <= STG_SIBLING_ONNX_READ_CEILING;
        stg_mem_free(model);
    }
    for (size_t i = 0; i < n; i++) {
        char *model = ok ? stg_path_join(dir, names[i]) : NULL;
        if (ok && model == NULL) {
            c->nomem = true;
        } else if (model != NULL &&
                   model_may_name(dir, root, model, opt, keyed ? cache : NULL, &ds, i, c)) {
            onnx_model_claims(dir, root, model, opt, c);
        }
        stg_mem_free(model);
        stg_mem_free(names[i]);
    }
    return ok && !c->nomem;
}

/* ------------------------------------------------------------------------------ OpenVINO */

/* The weights path OpenVINO's frontend derives from a model path: up to its last '.', then the
 * weights suffix (frontend.cpp, load_impl). */
static char *openvino_weights_path(const char *model_path)
{
    size_t n = strlen(model_path), stem = n;
    for (size_t i = n; i > 0; i--) {
        if (model_path[i - 1] == '.') {
            stem = i - 1;
            break;
        }
    }
    const char *suffix = stg_openvino_weights_suffix();
    size_t k = strlen(suffix);
    char *p = stg_mem_alloc(stem + k + 1);
    if (p != NULL) {
        memcpy(p, model_path, stem);
        memcpy(p + stem, suffix, k + 1);
    }
    return p;
}

static void weights_missing(stg_report *r, const stg_openvino_ir *ir, const char *why)
{
    stg_report_add(r, STG_OPENVINO_WEIGHTS_MISSING, ir->consts[0].offset,
                   "the IR reads %llu constants from its weights file, which %s",
                   (unsigned long long)ir->nconsts, why);
}

void stg_openvino_check_weights(const char *xml_path, const char *root, const stg_openvino_ir *ir,
                                stg_report *r)
{
    r->neighbours = true;
    if (ir->nconsts == 0) {
        return; /* nothing is read from the weights: OpenVINO does not need the file */
    }
    char *dir = stg_path_dir(xml_path);
    char *bin = openvino_weights_path(xml_path);
    struct stat st;
    int fd = -1, err = 0;
    if (dir == NULL || bin == NULL) {
        stg_report_oom(r);
    } else if (stat(bin, &st) != 0) {
        weights_missing(r, ir, "does not exist");
    } else if (stg_path_within(root != NULL ? root : dir, bin) != STG_WITHIN_YES) {
        weights_missing(r, ir, "resolves outside the model's folder (through a link): not opened");
    } else if (stg_open_file(bin, 0, &fd, &st, &err) != STG_OPENED) {
        weights_missing(r, ir, "is not a regular file that opens");
    } else {
        close(fd);
        uint64_t size = (uint64_t)st.st_size;
        for (size_t i = 0; i < ir->nconsts; i++) {
            const stg_openvino_const *k = &ir->consts[i];
            uint64_t end; /* offset + size was checked by the validator */
            if (!stg_add_u64(k->data_offset, k->data_size, &end) && end <= size) {
                continue;
            }
            stg_finding *f = stg_report_add(
                r, STG_OPENVINO_WEIGHTS_MISSING, k->offset,
                "a constant reads %llu bytes at offset %llu of the weights file, which has %llu",
                (unsigned long long)k->data_size, (unsigned long long)k->data_offset,
                (unsigned long long)size);
            if (k->name != NULL) {
                stg_report_set_tensor(r, f, k->name, k->name_len);
            }
        }
    }
    stg_mem_free(bin);
    stg_mem_free(dir);
}

/* The OpenVINO IR whose weights the data file at path is: `X.xml` for `X.bin` (the name the
 * IR conventionally has; OpenVINO derives the weights from the model's path). */
static void openvino_claims(const char *path, const char *root, const stg_limits *lim,
                            sibling_claims *c)
{
    const char *suffix = stg_openvino_weights_suffix();
    size_t n = strlen(path), k = strlen(suffix);
    if (n <= k || memcmp(path + n - k, suffix, k) != 0) {
        return;
    }
    char *xml = stg_mem_alloc(n - k + 5);
    char *back = NULL;
    if (xml == NULL) {
        c->nomem = true;
        return;
    }
    memcpy(xml, path, n - k);
    memcpy(xml + n - k, ".xml", 5);
    uint8_t *buf = NULL;
    size_t len = 0;
    stg_openvino_ir ir;
    stg_openvino_ir_init(&ir);
    stg_report *scratch = NULL;
    if (read_model(root, xml, STG_SIBLING_MODEL_BYTES_CEILING, &buf, &len) &&
        stg_openvino_sniff(buf, len) && (scratch = stg_report_new(lim)) != NULL &&
        stg_openvino_check(buf, len, scratch, &ir) == STG_OK && ir.complete &&
        (back = openvino_weights_path(xml)) != NULL && names_the_file(root, back, c)) {
        c->label = STG_FMT_OPENVINO_WEIGHTS;
        c->model_kind = "an OpenVINO IR";
        for (size_t i = 0; i < ir.nconsts && !c->nomem; i++) {
            const stg_openvino_const *q = &ir.consts[i];
            if (!claims_add(c, q->data_offset, q->data_size, false, (const uint8_t *)q->name,
                            q->name_len)) {
                c->nomem = true;
            }
        }
    }
    stg_report_free(scratch);
    stg_openvino_ir_release(&ir);
    stg_mem_free(back);
    stg_mem_free(buf);
    stg_mem_free(xml);
}

/* ------------------------------------------------------------------------------ Core ML */

/* Where coremltools puts a package's weights (coremltools/models/utils.py and
 * libmodelpackage: X.mlpackage/Data/com.apple.CoreML/weights/weight.bin), and the paths a
 * Manifest.json item names it by (relative to Data/: the weights folder, or the file). */
static const char coreml_weights_tail[] = "/Data/com.apple.CoreML/weights/weight.bin";
static const char *const coreml_item_paths[] = {"com.apple.CoreML/weights",
                                                "com.apple.CoreML/weights/weight.bin"};

/* Whether a Core ML file read whole names the weights. */
typedef bool (*coreml_names_fn)(const uint8_t *buf, size_t len);

/* The file `name` of the model folder (path's first `folder` bytes: the package, or the
 * .mlmodelc) names the weights at path. Without a scan root the model folder is the limit: the
 * model and its weights are one unit, and neither may lead out of it through a link. */
static void coreml_model_claims(const char *path, size_t folder, const char *name,
                                coreml_names_fn names, const char *kind, const char *scan_root,
                                sibling_claims *c)
{
    size_t name_size = strlen(name) + 1;
    char *file = stg_mem_alloc(folder + name_size);
    if (file == NULL) {
        c->nomem = true;
        return;
    }
    memcpy(file, path, folder);
    memcpy(file + folder, name, name_size);
    char *own = scan_root == NULL ? stg_mem_strndup(path, folder) : NULL;
    const char *root = scan_root != NULL ? scan_root : own;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (root == NULL) {
        c->nomem = true;
    } else if (read_model(root, file, STG_SIBLING_MODEL_BYTES_CEILING, &buf, &len) &&
               names(buf, len) && names_the_file(root, path, c)) {
        c->label = STG_FMT_COREML_WEIGHTS;
        c->model_kind = kind;
    }
    stg_mem_free(own);
    stg_mem_free(buf);
    stg_mem_free(file);
}

static bool manifest_names_weights(const uint8_t *buf, size_t len)
{
    return stg_coreml_manifest_names(buf, len, coreml_item_paths,
                                     sizeof coreml_item_paths / sizeof coreml_item_paths[0]);
}

/* The package's Manifest.json (the package folder four levels up) names the file at path. */
static void coreml_claims(const char *path, const char *scan_root, sibling_claims *c)
{
    size_t n = strlen(path), k = sizeof coreml_weights_tail - 1;
    if (n > k && memcmp(path + n - k, coreml_weights_tail, k) == 0) {
        coreml_model_claims(path, n - k, "/Manifest.json", manifest_names_weights,
                            "a Core ML package", scan_root, c);
    }
}

/* A compiled model (X.mlmodelc/: what Core ML compiles a package or .mlmodel into, and what
 * WhisperKit's repos ship) has no manifest: its MIL program X.mlmodelc/model.mil names the
 * weights in each constant it reads from them, BLOBFILE(path = string("@model_path/weights/
 * weight.bin"), offset = ...) (or tensor<string, []>(...)), @model_path being the .mlmodelc
 * folder. */
static const char coremlc_weights_tail[] = ".mlmodelc/weights/weight.bin";

static bool mil_names_weights(const uint8_t *buf, size_t len)
{
    static const char blobfile[] = "\"@model_path/weights/weight.bin\"";
    return memmem(buf, len, blobfile, sizeof blobfile - 1) != NULL;
}

/* model.mil beside the weights folder names the file at path. */
static void coremlc_claims(const char *path, const char *scan_root, sibling_claims *c)
{
    static const char weights_in_folder[] = "/weights/weight.bin";
    size_t n = strlen(path), tail = sizeof coremlc_weights_tail - 1;
    if (n > tail && memcmp(path + n - tail, coremlc_weights_tail, tail) == 0) {
        coreml_model_claims(path, n - (sizeof weights_in_folder - 1), "/model.mil",
                            mil_names_weights, "a compiled Core ML model", scan_root, c);
    }
}

/* Reads the 64-byte record at `at` of the weights file (the chain walk's reader). */
static bool pread_record(void *arg, uint64_t at, uint8_t rec[STG_MILBLOB_RECORD])
{
    int fd = *(const int *)arg;
    return pread(fd, rec, STG_MILBLOB_RECORD, (off_t)at) == (ssize_t)STG_MILBLOB_RECORD;
}

/* The blob storage chain of the file at path (validator/coreml.h), read record by record. */
static void check_blob_storage(const char *path, uint64_t size, stg_report *r)
{
    int fd = -1, err = 0;
    struct stat st;
    if (stg_open_file(path, 0, &fd, &st, &err) != STG_OPENED) {
        stg_scan_add_errno(r, STG_IO_ERROR, "the Core ML weights file could not be reopened", err);
        return;
    }
    stg_coreml_blob_check(pread_record, &fd, size, r);
    close(fd);
}

/* Relabels r as the data the claims describe and checks every range against its size. */
static void apply_claims(stg_report *r, const sibling_claims *c)
{
    stg_report_drop_code(r, STG_FORMAT_MISMATCH);
    stg_report_drop_code(r, STG_FORMAT_UNKNOWN);
    stg_report_set_format(r, c->label);
    uint64_t size = r->size;
    for (size_t i = 0; i < c->count; i++) {
        const sibling_range *g = &c->ranges[i];
        uint64_t end = g->offset;
        bool wraps = !g->to_end && stg_add_u64(g->offset, g->length, &end);
        if (!wraps && end <= size) {
            continue;
        }
        stg_finding *f =
            g->to_end
                ? stg_report_add(r, STG_SIBLING_RANGE_OUTSIDE, g->offset,
                                 "%s beside the file reads it from offset %llu, past its end "
                                 "(%llu bytes)",
                                 c->model_kind, (unsigned long long)g->offset,
                                 (unsigned long long)size)
                : stg_report_add(r, STG_SIBLING_RANGE_OUTSIDE, g->offset,
                                 "%s beside the file reads %llu bytes at offset %llu of it, past "
                                 "its end (%llu bytes)",
                                 c->model_kind, (unsigned long long)g->length,
                                 (unsigned long long)g->offset, (unsigned long long)size);
        if (g->tensor != NULL) {
            stg_report_set_tensor(r, f, g->tensor, g->tensor_len);
        }
    }
}

void stg_sibling_scan(const char *path, const stg_scan_options *opt, stg_sibling_cache *cache,
                      stg_report *r)
{
    if (!eligible(r)) {
        return;
    }
    r->neighbours = true; /* the same bytes in another folder may be no model's data */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        return;
    }
    char *dir = stg_path_dir(path);
    if (dir == NULL) {
        stg_report_oom(r);
        return;
    }
    const char *root = opt->root != NULL ? opt->root : dir;
    sibling_claims c;
    memset(&c, 0, sizeof c);
    c.dev = st.st_dev;
    c.ino = st.st_ino;
    bool searched = onnx_claims(dir, root, opt, cache, &c);
    if (searched && c.label == STG_FMT_UNKNOWN) {
        openvino_claims(path, root, &opt->limits, &c);
    }
    if (searched && c.label == STG_FMT_UNKNOWN) {
        coreml_claims(path, opt->root, &c);
    }
    if (searched && c.label == STG_FMT_UNKNOWN && !c.nomem) {
        coremlc_claims(path, opt->root, &c);
    }
    if (searched && !c.nomem && c.label != STG_FMT_UNKNOWN) {
        apply_claims(r, &c);
        if (c.label == STG_FMT_COREML_WEIGHTS) {
            check_blob_storage(path, r->size, r);
        }
    }
    claims_free(&c);
    stg_mem_free(dir);
}
