/* Sharded models: the index rules (validator/index.c) plus the shards, each opened and validated
 * by the mmap loader. Shard names are plain file names (the index stage rejects anything else),
 * so every shard is looked up in the index's own folder; unsafe names are never opened.
 *
 * In a report, the index's own findings carry offsets in the index file; every shard's findings
 * are merged with `member` = the shard's file name (their offsets are inside that shard), and so
 * are index_tensor_unlisted and index_tensor_duplicate, which point at the tensor's key in the
 * shard. index_tensor_missing and index_total_size_mismatch point into the index. */
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../parser/mem.h"
#include "../parser/sort.h"
#include "../validator/index.h"
#include "../validator/limits.h"
#include "mmap.h"
#include "open_file.h"
#include "path.h"
#include "within.h"

#define STG_INDEX_FILE_NAME "model.safetensors.index.json"

struct stg_model {
    stg_index ix;
    stg_file **files;         /* per shard; NULL when not opened */
    const stg_tensor **table; /* every tensor: shard by shard, data order inside each */
    size_t count;
    size_t *by_name; /* indices into table sorted by name bytes */
};

static stg_finding *shard_finding(stg_report *r, const char *shard, stg_code code, uint64_t off,
                                  const char *msg)
{
    stg_finding *f = stg_report_add(r, code, off, "%s", msg);
    stg_report_set_member(r, f, shard, STG_NO_OFFSET);
    return f;
}

static void model_release(stg_model *m)
{
    if (m->files != NULL) {
        for (size_t i = 0; i < m->ix.shard_count; i++) {
            stg_file_close(m->files[i]);
        }
    }
    stg_mem_free(m->files);
    stg_mem_free(m->table);
    stg_mem_free(m->by_name);
    stg_index_release(&m->ix);
    m->files = NULL;
    m->table = NULL;
    m->by_name = NULL;
    m->count = 0;
}

/* Opens every safe shard of m->ix (in dir) and checks the map against their tables. root: when
 * not NULL, a shard whose real path leaves it (a link) is symlink_skipped. keep_fds: stg_model
 * keeps descriptors for pread; a scan closes them at once (mappings stay valid). */
static void load_shards(stg_model *m, const char *dir, const char *root, const stg_limits *lim,
                        stg_report *r, bool keep_fds)
{
    size_t ns = m->ix.shard_count;
    m->files = stg_mem_calloc(ns == 0 ? 1 : ns, sizeof *m->files);
    stg_index_shard_table *tables = stg_mem_calloc(ns == 0 ? 1 : ns, sizeof *tables);
    stg_index_shard_tensor **owned = stg_mem_calloc(ns == 0 ? 1 : ns, sizeof *owned);
    if (m->files == NULL || tables == NULL || owned == NULL) {
        stg_report_oom(r);
        stg_mem_free(tables);
        stg_mem_free(owned);
        return;
    }
    for (size_t i = 0; i < ns; i++) {
        const stg_index_shard *sh = &m->ix.shards[i];
        if (sh->unsafe) {
            continue;
        }
        char *path = stg_path_join(dir, sh->name);
        if (path == NULL) {
            stg_report_oom(r);
            break;
        }
        struct stat st;
        if (stat(path, &st) != 0) {
            int err = errno;
            if (err == ENOENT || err == ENOTDIR) {
                stg_finding *f = stg_report_add(r, STG_INDEX_SHARD_MISSING, sh->offset,
                                                "a shard named by the index does not exist");
                stg_report_set_member(r, f, sh->name, STG_NO_OFFSET);
            } else {
                stg_finding *f = stg_report_add(r, STG_IO_ERROR, sh->offset,
                                                "a shard could not be examined (errno %d)", err);
                stg_report_set_member(r, f, sh->name, STG_NO_OFFSET);
            }
            stg_mem_free(path);
            continue;
        }
        stg_within in = root != NULL ? stg_path_within(root, path) : STG_WITHIN_YES;
        if (in == STG_WITHIN_ROOT_ERROR || in == STG_WITHIN_PATH_ERROR) {
            /* The shard exists but its place cannot be established: it was not read, which
             * is an error, not a link to skip with a warning. */
            stg_finding *f = stg_report_add(r, STG_IO_ERROR, sh->offset,
                                            "a shard's path could not be resolved (errno %d)",
                                            errno);
            stg_report_set_member(r, f, sh->name, STG_NO_OFFSET);
            stg_mem_free(path);
            continue;
        }
        if (in != STG_WITHIN_YES) {
            shard_finding(r, sh->name, STG_SYMLINK_SKIPPED, sh->offset,
                          "a shard resolves outside the scan root: not opened");
            stg_mem_free(path);
            continue;
        }
        stg_report *sub = stg_report_new(lim);
        if (sub == NULL) {
            stg_report_oom(r);
            stg_mem_free(path);
            break;
        }
        stg_file *f = NULL;
        stg_status s = stg_file_open_report(path, lim, sub, &f);
        stg_mem_free(path);
        stg_report_merge(r, sub, sh->name, STG_NO_OFFSET);
        stg_report_free(sub);
        if (s == STG_E_NOMEM) {
            stg_report_oom(r);
        }
        if (f == NULL) {
            continue;
        }
        f->shard = (uint32_t)i;
        if (!keep_fds) {
            stg_door_file_close_fd(&f->src);
        }
        m->files[i] = f;
        if (!f->h.schema_ok) {
            continue;
        }
        size_t nt = f->h.tensor_count;
        owned[i] = stg_mem_alloc((nt == 0 ? 1 : nt) * sizeof *owned[i]);
        if (owned[i] == NULL) {
            stg_report_oom(r);
            continue;
        }
        for (size_t k = 0; k < nt; k++) {
            stg_tensor *t = &f->h.pub[k];
            t->shard = (uint32_t)i;
            owned[i][k].name = t->name;
            owned[i][k].name_len = t->name_len;
            owned[i][k].name_offset = stg_st_name_offset(&f->h.tensors[k]);
            owned[i][k].byte_size = t->end - t->begin;
        }
        tables[i].available = true;
        tables[i].tensors = owned[i];
        tables[i].count = nt;
    }
    stg_index_check_shards(&m->ix, tables, lim, r);
    for (size_t i = 0; i < ns; i++) {
        stg_mem_free(owned[i]);
    }
    stg_mem_free(owned);
    stg_mem_free(tables);
}

void stg_index_scan_file(const char *index_path, const uint8_t *buf, size_t len,
                         const stg_scan_options *opt, stg_report *r)
{
    stg_scan_options def;
    if (opt == NULL) {
        memset(&def, 0, sizeof def); /* limits by default, no root: as documented in model.h */
        stg_limits_default(&def.limits);
        opt = &def;
    }
    stg_report_set_format(r, STG_FMT_SAFETENSORS_INDEX);
    stg_model m;
    memset(&m, 0, sizeof m);
    stg_index_init(&m.ix);
    if (stg_index_parse(buf, len, &opt->limits, r, &m.ix)) {
        char *dir = stg_path_dir(index_path);
        if (dir == NULL) {
            stg_report_oom(r);
        } else {
            load_shards(&m, dir, opt->root, &opt->limits, r, false);
            stg_mem_free(dir);
        }
    }
    model_release(&m);
}

/* ------------------------------------------------------------------------------------------ */
/* stg_model_*                                                                                  */

static int cmp_tensor_names(const stg_tensor *a, const stg_tensor *b)
{
    size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
    int c = n > 0 ? memcmp(a->name, b->name, n) : 0;
    if (c != 0) {
        return c;
    }
    return a->name_len < b->name_len ? -1 : (a->name_len > b->name_len ? 1 : 0);
}

static int name_index_cmp(size_t a, size_t b, void *ctx)
{
    const stg_tensor *const *t = ctx;
    return cmp_tensor_names(t[a], t[b]);
}

static bool build_table(stg_model *m)
{
    size_t total = 0;
    for (size_t i = 0; i < m->ix.shard_count; i++) {
        if (m->files[i] != NULL) {
            total += m->files[i]->h.tensor_count;
        }
    }
    m->table = stg_mem_alloc((total == 0 ? 1 : total) * sizeof *m->table);
    m->by_name = stg_mem_alloc((total == 0 ? 1 : total) * sizeof *m->by_name);
    if (m->table == NULL || m->by_name == NULL) {
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < m->ix.shard_count; i++) {
        const stg_file *f = m->files[i];
        for (size_t t = 0; f != NULL && t < f->h.tensor_count; t++) {
            m->table[k] = &f->h.pub[t];
            m->by_name[k] = k;
            k++;
        }
    }
    m->count = total;
    stg_sort_index(m->by_name, total, name_index_cmp, m->table);
    return true;
}

/* Reads the whole index file (at most cap bytes) into a new buffer. */
static stg_status read_index(const char *path, uint64_t cap, uint8_t **out, size_t *out_len,
                             stg_report *r)
{
    *out = NULL;
    *out_len = 0;
    int fd = -1, oerr = 0;
    struct stat st;
    stg_open_result o = stg_open_file(path, 0, &fd, &st, &oerr);
    if (o == STG_OPEN_FAILED) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "the index could not be opened (errno %d)",
                       oerr);
        return STG_E_IO;
    }
    if (o == STG_OPEN_NOT_REGULAR) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET,
                       "the index is a %s, not a readable regular file", stg_file_kind(st.st_mode));
        return STG_E_IO;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > cap || (uint64_t)st.st_size > SIZE_MAX - 1) {
        stg_report_limit(r, STG_NO_OFFSET, "max_header_len", cap);
        close(fd);
        return STG_E_LIMIT;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = stg_mem_alloc(size + 1);
    if (buf == NULL) {
        close(fd);
        return STG_E_NOMEM;
    }
    size_t have = 0;
    int err = 0;
    while (have < size) {
        ssize_t got = read(fd, buf + have, size - have);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            err = got < 0 ? errno : 0;
            break;
        }
        have += (size_t)got;
    }
    close(fd);
    if (err != 0) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "the index could not be read (errno %d)",
                       err);
        stg_mem_free(buf);
        return STG_E_IO;
    }
    if (have != size) {
        stg_report_add(r, STG_FILE_CHANGED_CODE, STG_NO_OFFSET,
                       "the index changed size while it was read");
        stg_mem_free(buf);
        return STG_FILE_CHANGED;
    }
    *out = buf;
    *out_len = size;
    return STG_OK;
}

stg_status stg_model_open(const char *dir_or_index, const stg_limits *lim, stg_model **out,
                          stg_report **rep)
{
    if (out != NULL) {
        *out = NULL;
    }
    stg_limits def;
    stg_report *r = NULL;
    stg_status begun = stg_open_begin(dir_or_index, out != NULL, rep, &lim, &def, &r);
    if (begun != STG_OK) {
        return begun;
    }
    stg_model *m = stg_mem_calloc(1, sizeof *m);
    if (m == NULL) {
        stg_report_free(r);
        stg_mem_free(m);
        return STG_E_NOMEM;
    }
    stg_index_init(&m->ix);
    char *index_path = NULL;
    struct stat st;
    if (stat(dir_or_index, &st) == 0 && S_ISDIR(st.st_mode)) {
        index_path = stg_path_join(dir_or_index, STG_INDEX_FILE_NAME);
    } else {
        index_path = stg_mem_strndup(dir_or_index, strlen(dir_or_index));
    }
    char *dir = index_path != NULL ? stg_path_dir(index_path) : NULL;
    stg_status s = STG_E_NOMEM;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (dir != NULL) {
        stg_report_set_path(r, index_path);
        s = read_index(index_path, lim->max_header_len, &buf, &len, r);
    }
    stg_report_set_format(r, STG_FMT_SAFETENSORS_INDEX);
    if (s == STG_OK) {
        stg_report_set_size(r, (uint64_t)len);
        if (stg_index_parse(buf, len, lim, r, &m->ix)) {
            load_shards(m, dir, NULL, lim, r, true);
        }
    }
    stg_mem_free(buf);
    stg_mem_free(dir);
    stg_mem_free(index_path);
    stg_report_finish(r);
    if (s == STG_OK && stg_report_verdict(r) >= STG_VERDICT_INVALID) {
        s = STG_E_INVALID;
    }
    if (s == STG_OK && !build_table(m)) {
        s = STG_E_NOMEM;
    }
    if (s == STG_E_NOMEM) {
        stg_report_oom(r); /* the report is incomplete: its verdict must say error */
    }
    if (s != STG_OK) {
        model_release(m);
        stg_mem_free(m);
        m = NULL;
    }
    *out = m;
    if (rep != NULL) {
        *rep = r;
    } else {
        stg_report_free(r);
    }
    return s;
}

size_t stg_model_tensor_count(const stg_model *m)
{
    return m == NULL ? 0 : m->count;
}

const stg_tensor *stg_model_tensor_at(const stg_model *m, size_t i)
{
    return m == NULL || i >= m->count ? NULL : m->table[i];
}

const stg_tensor *stg_model_tensor_find(const stg_model *m, const char *name, size_t name_len)
{
    if (m == NULL || (name == NULL && name_len != 0)) {
        return NULL;
    }
    stg_tensor key;
    memset(&key, 0, sizeof key);
    key.name = name;
    key.name_len = name_len;
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_tensor_names(m->table[m->by_name[mid]], &key);
        if (c == 0) {
            return m->table[m->by_name[mid]];
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

stg_status stg_model_read_tensor(const stg_model *m, const stg_tensor *t, void *dst, size_t dst_len)
{
    if (m == NULL || t == NULL || t->shard >= m->ix.shard_count || m->files[t->shard] == NULL) {
        return STG_E_BAD_ARG;
    }
    return stg_file_read_tensor(m->files[t->shard], t, dst, dst_len);
}

stg_status stg_model_read_tensor_range(const stg_model *m, const stg_tensor *t, uint64_t offset,
                                       void *dst, size_t len)
{
    if (m == NULL || t == NULL || t->shard >= m->ix.shard_count || m->files[t->shard] == NULL) {
        return STG_E_BAD_ARG;
    }
    return stg_file_read_tensor_range(m->files[t->shard], t, offset, dst, len);
}

size_t stg_model_shard_count(const stg_model *m)
{
    return m == NULL ? 0 : m->ix.shard_count;
}

const char *stg_model_shard_name(const stg_model *m, size_t i)
{
    return m == NULL || i >= m->ix.shard_count ? NULL : m->ix.shards[i].name;
}

void stg_model_close(stg_model *m)
{
    if (m != NULL) {
        model_release(m);
        stg_mem_free(m);
    }
}
