/* The mmap loader: open read-only, validate with the same core as stg_validate_buffer, map, and
 * only then hand out tensors, each a range the layout stage proved to lie inside the file.
 *
 * Validation runs the stages of stg_st_validate over a private copy of the header read with
 * pread (the layout stage needs only the size), so names and metadata never point into the
 * mapping; the polyglot checks run over an image copied with pread (loader/window.h). Nothing
 * during open, lookups or metadata reads through the mapping, so a file truncated by another
 * process meanwhile gives file_changed or io_error, never a signal. stg_file_read_tensor copies
 * with pread and checks size, modification time and identity before and after, so a file that
 * shrank or was replaced gives STG_FILE_CHANGED; stg_file_tensor_data is the raw view the
 * caller opts into (documented in stguard.h: a concurrent truncation raises SIGBUS there). */
#include "mmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../parser/mem.h"
#include "../dispatch/check.h"
#include "../dispatch/safetensors.h"
#include "../parser/sort.h"
#include "../validator/limits.h"
#include "open_file.h"
#include "seed.h"
#include "window.h"

static void report_io(stg_report *r, const char *what, int err)
{
    stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "%s failed (errno %d)", what, err);
}

static void file_changed(stg_report *r)
{
    stg_report_add(r, STG_FILE_CHANGED_CODE, STG_NO_OFFSET,
                   "the file changed size or identity while it was validated");
}

/* Reads exactly len bytes at off; false when the file ended first (it shrank: *err = 0) or a
 * read failed (*err = its errno). */
static bool pread_full(int fd, uint8_t *dst, size_t len, uint64_t off, int *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t got = pread(fd, dst + done, len - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            *err = got < 0 ? errno : 0;
            return false;
        }
        done += (size_t)got;
    }
    return true;
}

static int cmp_name_bytes(const stg_tensor *a, const stg_tensor *b)
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
    const stg_tensor *t = ctx;
    return cmp_name_bytes(&t[a], &t[b]);
}

static bool build_name_index(stg_file *f)
{
    size_t n = f->h.tensor_count;
    f->by_name = stg_mem_alloc((n == 0 ? 1 : n) * sizeof *f->by_name);
    if (f->by_name == NULL) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        f->by_name[i] = i;
    }
    stg_sort_index(f->by_name, n, name_index_cmp, f->h.pub); /* heapsort: no allocation */
    return true;
}

static void file_free(stg_file *f);

/* The header could not be read whole: io_error for a failed read, file_changed when the file
 * ended before its validated size. Frees f. */
static stg_status header_unread(stg_file *f, stg_report *r, int err)
{
    if (err != 0) {
        report_io(r, "pread", err);
    } else {
        file_changed(r);
    }
    file_free(f);
    return err != 0 ? STG_E_IO : STG_FILE_CHANGED;
}

static void file_free(stg_file *f)
{
    if (f == NULL) {
        return;
    }
    if (f->map != NULL) {
        munmap((void *)(uintptr_t)f->map, (size_t)f->src.size);
    }
    stg_door_file_close(&f->src);
    stg_st_header_release(&f->h);
    stg_mem_free(f->by_name);
    stg_mem_free(f->hdr);
    stg_mem_free(f);
}

/* stg_file_open as a door of the safetensors pipeline. */
typedef struct file_door {
    stg_file *f;
    stg_report *r;
    const stg_limits *lim;
    stg_status status; /* why the door stopped the pipeline */
    int err;
    bool io_what_mmap; /* the image could not be opened: reported as "mmap" */
    bool image_open;
    stg_image img;
} file_door;

static const uint8_t *door_header(stg_st_door *d, uint64_t n)
{
    file_door *fd = d->state;
    /* framing guarantees 8 + n <= size and n <= SIZE_MAX - 8 */
    fd->f->hdr = stg_mem_alloc((size_t)n);
    if (fd->f->hdr == NULL) {
        fd->status = STG_E_NOMEM;
        return NULL;
    }
    if (!pread_full(fd->f->src.fd, fd->f->hdr, (size_t)n, 8, &fd->err)) {
        fd->status = STG_E_IO;
        return NULL;
    }
    return fd->f->hdr;
}

static const uint8_t *door_image(stg_st_door *d, size_t *len, bool *stop)
{
    file_door *fd = d->state;
    const stg_limits *lim = fd->lim;
    *len = 0;
    *stop = false;
    uint64_t cap = lim->max_inflate_bytes < STG_INFLATE_BYTES_CEILING ? lim->max_inflate_bytes
                                                                      : STG_INFLATE_BYTES_CEILING;
    if (stg_image_open(&fd->img, fd->f->src.fd, fd->f->src.size, cap, &fd->err) != STG_OK) {
        fd->status = STG_E_IO;
        fd->io_what_mmap = true;
        *stop = true;
        return NULL;
    }
    fd->image_open = true;
    bool safetensors = false;
    stg_status filled = stg_image_fill_safetensors(&fd->img, true, &safetensors, &fd->err);
    if (filled == STG_E_LIMIT) {
        stg_finding *lf = stg_report_add(
            fd->r, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
            "the polyglot checks need more than max_inflate_bytes (%llu) of the file",
            (unsigned long long)cap);
        stg_report_set_limit(fd->r, lf, "max_inflate_bytes");
        return NULL;
    }
    if (filled != STG_OK) {
        fd->status = filled == STG_E_NOMEM ? STG_E_NOMEM : STG_E_IO;
        if (filled != STG_E_IO) {
            fd->err = 0;
        }
        *stop = true;
        return NULL;
    }
    *len = fd->f->src.size > 0 ? fd->img.size : 0;
    return fd->img.bytes;
}

stg_status stg_file_open_report(const char *path, const stg_limits *lim, stg_report *r,
                                stg_file **out)
{
    *out = NULL;
    stg_file *f = stg_mem_calloc(1, sizeof *f);
    if (f == NULL) {
        return STG_E_NOMEM;
    }
    stg_door_file_init(&f->src);
    stg_st_header_init(&f->h);
    f->h.want_public = true; /* stg_file_tensor_at hands out stg_tensor views */
    stg_status opened = stg_door_file_open(&f->src, path, r);
    if (opened != STG_OK) {
        file_free(f);
        return opened;
    }
    /* The safetensors pipeline (dispatch/safetensors.h) with this file as its door: the header
     * is a private copy read with pread, so names and metadata live in our memory, never in
     * the mapping, and a file truncated later cannot fault a lookup; the polyglot checks read
     * the first bytes, the last 64 KiB and, when an archive may be appended, the whole file
     * through an image copied with pread (loader/window.h), never through the mapping. */
    uint8_t first[8];
    size_t avail = f->src.size < 8 ? (size_t)f->src.size : 8;
    int err = 0;
    if (!pread_full(f->src.fd, first, avail, 0, &err)) {
        return header_unread(f, r, err);
    }
    file_door fd = {.f = f, .r = r, .lim = lim, .status = STG_OK};
    stg_st_door door = {first, avail,      f->src.size, door_header, false,
                        false, door_image, NULL,        &fd};
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, lim, r);
    ctx.hash_seed = stg_scan_seed();
    bool done = stg_st_pipeline(&door, &ctx, &f->h);
    if (fd.image_open) {
        stg_image_close(&fd.img);
    }
    if (!done) {
        if (fd.status == STG_E_NOMEM) {
            file_free(f);
            return STG_E_NOMEM;
        }
        if (fd.status == STG_E_IO && fd.io_what_mmap) {
            report_io(r, "mmap", fd.err);
            file_free(f);
            return STG_E_IO;
        }
        return header_unread(f, r, fd.err);
    }
    if (f->src.size > 0) {
        /* Mapped only for stg_file_tensor_data, the one raw view (stguard.h): nothing here
         * reads through it. */
        void *m = mmap(NULL, (size_t)f->src.size, PROT_READ, MAP_PRIVATE, f->src.fd, 0);
        if (m == MAP_FAILED) {
            report_io(r, "mmap", errno);
            file_free(f);
            return STG_E_IO;
        }
        f->map = m;
    }
    if (!stg_file_unchanged(f)) {
        file_changed(r);
        file_free(f);
        return STG_FILE_CHANGED;
    }
    if (f->h.schema_ok && !build_name_index(f)) {
        stg_report_oom(r);
        file_free(f);
        return STG_E_NOMEM;
    }
    *out = f;
    return STG_OK;
}

bool stg_file_unchanged(const stg_file *f)
{
    return stg_door_file_unchanged(&f->src);
}

stg_status stg_file_open(const char *path, const stg_limits *lim, stg_file **out, stg_report **rep)
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
    stg_file *f = NULL;
    stg_status s = stg_file_open_report(path, lim, r, &f);
    if (s == STG_E_NOMEM) {
        stg_report_oom(r); /* the report is incomplete: its verdict must say error */
    }
    stg_report_set_format(r, STG_FMT_SAFETENSORS);
    if (f != NULL) {
        stg_report_set_size(r, f->src.size);
    }
    stg_report_finish(r);
    if (s == STG_OK && stg_report_verdict(r) >= STG_VERDICT_INVALID) {
        file_free(f);
        f = NULL;
        s = STG_E_INVALID;
    }
    *out = f;
    stg_report_hand_out(r, rep);
    return s;
}

void stg_file_close(stg_file *f)
{
    file_free(f);
}

size_t stg_file_tensor_count(const stg_file *f)
{
    return f == NULL || !f->h.schema_ok ? 0 : f->h.tensor_count;
}

const stg_tensor *stg_file_tensor_at(const stg_file *f, size_t i)
{
    if (f == NULL || !f->h.schema_ok || i >= f->h.tensor_count) {
        return NULL;
    }
    return &f->h.pub[i];
}

const stg_tensor *stg_file_tensor_find(const stg_file *f, const char *name, size_t name_len)
{
    if (f == NULL || !f->h.schema_ok || (name == NULL && name_len != 0)) {
        return NULL;
    }
    stg_tensor key;
    memset(&key, 0, sizeof key);
    key.name = name;
    key.name_len = name_len;
    size_t lo = 0, hi = f->h.tensor_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_name_bytes(&f->h.pub[f->by_name[mid]], &key);
        if (c == 0) {
            return &f->h.pub[f->by_name[mid]];
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* The tensor t as one of f's own entries, or NULL when it belongs to something else. */
static const stg_tensor *own_tensor(const stg_file *f, const stg_tensor *t)
{
    if (f == NULL || t == NULL || !f->h.schema_ok || f->h.tensor_count == 0) {
        return NULL;
    }
    uintptr_t base = (uintptr_t)f->h.pub;
    uintptr_t p = (uintptr_t)t;
    uintptr_t span = (uintptr_t)(f->h.tensor_count * sizeof(stg_tensor));
    if (p < base || p - base >= span || (p - base) % sizeof(stg_tensor) != 0) {
        return NULL;
    }
    return &f->h.pub[(p - base) / sizeof(stg_tensor)];
}

stg_status stg_file_read_tensor_range(const stg_file *f, const stg_tensor *t, uint64_t offset,
                                      void *dst, size_t len)
{
    if (own_tensor(f, t) == NULL) {
        return STG_E_BAD_ARG;
    }
    uint64_t size = t->end - t->begin; /* begin <= end <= data length: proven by layout */
    if (offset > size || (uint64_t)len > size - offset) {
        return STG_E_RANGE;
    }
    if (len > 0 && dst == NULL) {
        return STG_E_BAD_ARG;
    }
    return stg_door_file_pread(&f->src, f->h.data_start + t->begin + offset, dst, len);
}

stg_status stg_file_read_tensor(const stg_file *f, const stg_tensor *t, void *dst, size_t dst_len)
{
    if (own_tensor(f, t) == NULL) {
        return STG_E_BAD_ARG;
    }
    uint64_t size = t->end - t->begin;
    if ((uint64_t)dst_len < size) {
        return STG_E_RANGE;
    }
    return stg_file_read_tensor_range(f, t, 0, dst, (size_t)size);
}

const void *stg_file_tensor_data(const stg_file *f, const stg_tensor *t)
{
    /* A file with tensors has a parsed header, so it is not empty and is mapped. */
    if (own_tensor(f, t) == NULL) {
        return NULL;
    }
    return f->map + f->h.data_start + t->begin;
}

uint64_t stg_file_header_length(const stg_file *f)
{
    return f == NULL ? 0 : f->h.header_len;
}

uint64_t stg_file_data_start(const stg_file *f)
{
    return f == NULL ? 0 : f->h.data_start;
}

size_t stg_file_metadata_count(const stg_file *f)
{
    return f == NULL || !f->h.schema_ok ? 0 : f->h.metadata_count;
}

stg_status stg_file_metadata_at(const stg_file *f, size_t i, const char **key, size_t *key_len,
                                const char **value, size_t *value_len)
{
    if (f == NULL || key == NULL || key_len == NULL || value == NULL || value_len == NULL) {
        return STG_E_BAD_ARG;
    }
    if (!f->h.schema_ok || i >= f->h.metadata_count) {
        return STG_E_RANGE;
    }
    const stg_st_meta *m = &f->h.metadata[i];
    *key = m->key;
    *key_len = m->key_len;
    *value = m->value;
    *value_len = m->value_len;
    return STG_OK;
}
