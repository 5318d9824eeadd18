/* Owned images of files: see window.h for what is copied and why. */
#include "window.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../parser/mem.h"
#include "../parser/util.h"
#include "../parser/zip.h"
#include "../validator/pickle_scan.h"
#include "../dispatch/sniff.h"

/* Bytes copied past the header, so a pickle walk from offset 0 usually settles at once. */
#define PREFIX_SLACK ((uint64_t)64 * 1024)

stg_status stg_image_open(stg_image *img, int fd, uint64_t size, uint64_t cap, int *err)
{
    memset(img, 0, sizeof *img);
    img->fd = fd;
    img->cap = cap;
    if (size > SIZE_MAX) {
        *err = EFBIG;
        return STG_E_IO;
    }
    img->size = (size_t)size;
    img->tail = img->size;
    if (size == 0) {
        return STG_OK;
    }
    /* A small file's image comes from the heap, zeroed: a mapping per file costs a munmap whose
     * TLB shootdown every other scanning thread pays (a tree of small files scanned with -j2
     * spent most of its time in the kernel). */
    if (img->size <= STG_IMAGE_HEAP_MAX) {
        img->bytes = stg_mem_calloc(1, img->size);
        if (img->bytes == NULL) {
            *err = ENOMEM;
            return STG_E_IO;
        }
        img->heap = true;
        return STG_OK;
    }
    /* MAP_NORESERVE: only the pages copied into are ever committed. */
    void *m = mmap(NULL, img->size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        *err = errno;
        return STG_E_IO;
    }
    img->bytes = m;
    return STG_OK;
}

void stg_image_close(stg_image *img)
{
    stg_sha256_free(img->hash);
    stg_mem_free(img->pages);
    if (img->heap) {
        stg_mem_free(img->bytes);
    } else if (img->bytes != NULL) {
        munmap(img->bytes, img->size);
    }
    memset(img, 0, sizeof *img);
    img->fd = -1;
}

bool stg_image_whole(const stg_image *img)
{
    if (img->pages != NULL) {
        return img->held >= img->size;
    }
    return img->prefix >= img->tail;
}

/* Copies [from, to) of the file into the image. */
static stg_status copy_range(stg_image *img, size_t from, size_t to, int *err)
{
    if (to <= from) {
        return STG_OK;
    }
    if (img->held + (to - from) > img->cap) {
        return STG_E_LIMIT;
    }
    /* Large ranges in huge pages where the kernel gives them (only the 2 MiB pages wholly
     * inside the range: nothing past it becomes resident): one fault per 2 MiB instead of 512. */
    stg_mem_advise_huge(img->bytes + from, to - from);
    size_t done = from;
    while (done < to) {
        size_t want = to - done;
        if (want > ((size_t)16 << 20)) {
            want = (size_t)16 << 20; /* progress moves every 16 MiB */
        }
        if (img->cancel != NULL && *img->cancel != 0) {
            *err = ECANCELED;
            return STG_E_IO;
        }
        ssize_t n = pread(img->fd, img->bytes + done, want, (off_t)done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            *err = errno;
            return STG_E_IO;
        }
        if (n == 0) {
            return STG_FILE_CHANGED; /* it ended before the size fstat gave */
        }
        if (img->hash != NULL && !img->hash_failed && done == img->hashed) {
            if (stg_sha256_update(img->hash, img->bytes + done, (size_t)n) == STG_OK) {
                img->hashed += (size_t)n;
            } else {
                img->hash_failed = true;
            }
        }
        done += (size_t)n;
        if (img->progress != NULL) {
            __atomic_fetch_add(img->progress, (uint64_t)n, __ATOMIC_RELAXED);
        }
    }
    img->held += to - from;
    return STG_OK;
}

stg_status stg_image_digest(stg_image *img, uint8_t out[32])
{
    if (img->hash == NULL || img->hash_failed || !stg_image_whole(img)) {
        return STG_E_CRYPTO;
    }
    if (img->hashed < img->size &&
        stg_sha256_update(img->hash, img->bytes + img->hashed, img->size - img->hashed) != STG_OK) {
        return STG_E_CRYPTO;
    }
    img->hashed = img->size;
    stg_status st = stg_sha256_final(img->hash, out);
    stg_sha256_free(img->hash);
    img->hash = NULL;
    return st;
}

/* Extends the copied prefix to [0, want), skipping what the tail already holds. */
static stg_status grow_prefix(stg_image *img, size_t want, int *err)
{
    if (want > img->size) {
        want = img->size;
    }
    if (want <= img->prefix) {
        return STG_OK;
    }
    size_t stop = want < img->tail ? want : img->tail;
    stg_status st = copy_range(img, img->prefix, stop, err);
    if (st != STG_OK) {
        return st;
    }
    img->prefix = want >= img->tail ? img->size : want;
    if (img->prefix >= img->tail) {
        img->prefix = img->size;
        img->tail = img->size; /* one copied range */
    }
    return STG_OK;
}

stg_status stg_image_fill_prefix(stg_image *img, size_t n, int *err)
{
    return grow_prefix(img, n, err);
}

stg_status stg_image_fill_all(stg_image *img, int *err)
{
    return grow_prefix(img, img->size, err);
}

/* A zip end-record signature anywhere in p[0, n): glibc's memmem is vectorised (this runs
 * over the last 65,557 bytes of every safetensors file); elsewhere the plain byte loop, with
 * the same answer. */
static bool has_eocd_signature(const uint8_t *p, size_t n)
{
    static const uint8_t sig[4] = {'P', 'K', 5, 6};
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return n >= 4 && memmem(p, n, sig, sizeof sig) != NULL;
#else
    for (size_t i = 0; n >= 4 && i <= n - 4; i++) {
        if (p[i] == 'P' && memcmp(p + i, sig, 4) == 0) {
            return true;
        }
    }
    return false;
#endif
}

/* The bytes read past the copied prefix without being held: UNHELD_CHUNK at a time, from at up
 * to the copied tail. *got: how many were read (at least 1 when STG_OK). */
enum { UNHELD_CHUNK = 1 << 20 };
static stg_status read_unheld(const stg_image *img, size_t at, uint8_t *buf, size_t *got, int *err)
{
    size_t want = img->tail - at < UNHELD_CHUNK ? img->tail - at : UNHELD_CHUNK;
    for (;;) {
        ssize_t n = pread(img->fd, buf, want, (off_t)at);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            *err = n < 0 ? errno : 0;
            return n < 0 ? STG_E_IO : STG_FILE_CHANGED;
        }
        *got = (size_t)n;
        return STG_OK;
    }
}

/* Bytes at [at, at + n) read without being held count for progress and, in file order, the
 * hash, as copied bytes do (so they are not read again for either). */
static void count_unheld(stg_image *img, const uint8_t *buf, size_t at, size_t n)
{
    if (img->hash != NULL && !img->hash_failed && img->hashed == at && n > 0) {
        if (stg_sha256_update(img->hash, buf, n) == STG_OK) {
            img->hashed += n;
        } else {
            img->hash_failed = true;
        }
    }
    if (img->progress != NULL) {
        __atomic_fetch_add(img->progress, (uint64_t)n, __ATOMIC_RELAXED);
    }
}

/* Moves the prefix past the zero bytes that follow it in the file (up to the first other byte
 * or the copied tail), reading them through a small buffer: the image already holds zeros
 * there, so nothing is copied or held. */
static stg_status pass_zero_run(stg_image *img, int *err)
{
    uint8_t *buf = stg_mem_alloc(UNHELD_CHUNK);
    if (buf == NULL) {
        return STG_E_NOMEM;
    }
    stg_status st = STG_OK;
    size_t at = img->prefix, n = 0;
    while (at < img->tail && (st = read_unheld(img, at, buf, &n, err)) == STG_OK) {
        /* zero prefix of what was read: buf[0] == 0 and each byte equals the next */
        size_t zeros = 0;
        if (buf[0] == 0) {
            zeros = n;
            if (n > 1 && memcmp(buf, buf + 1, n - 1) != 0) {
                zeros = 1;
                while (buf[zeros] == 0) {
                    zeros++;
                }
            }
        }
        count_unheld(img, buf, at, zeros);
        at += zeros;
        if (zeros < n) {
            break;
        }
    }
    stg_mem_free(buf);
    if (st == STG_OK) {
        img->prefix = at;
        if (at >= img->tail) {
            img->prefix = img->size;
            img->tail = img->size;
        }
    }
    return st;
}

/* Whether a '\n' lies in the file after the copied prefix: the bytes up to the copied tail
 * are read through a small buffer and not held (counted as pass_zero_run counts them), the
 * tail is in the image. */
static stg_status newline_after_prefix(stg_image *img, bool *found, int *err)
{
    *found = img->tail < img->size && memchr(img->bytes + img->tail, '\n', img->size - img->tail);
    if (*found || img->prefix >= img->tail) {
        return STG_OK;
    }
    uint8_t *buf = stg_mem_alloc(UNHELD_CHUNK);
    if (buf == NULL) {
        return STG_E_NOMEM;
    }
    stg_status st = STG_OK;
    size_t at = img->prefix, n = 0;
    while (!*found && at < img->tail && (st = read_unheld(img, at, buf, &n, err)) == STG_OK) {
        count_unheld(img, buf, at, n);
        *found = memchr(buf, '\n', n) != NULL;
        at += n;
    }
    stg_mem_free(buf);
    return st;
}

stg_status stg_image_fill_safetensors(stg_image *img, bool name_says_safetensors,
                                      bool *is_safetensors, int *err)
{
    *is_safetensors = false;
    if (img->size == 0) {
        *is_safetensors = name_says_safetensors;
        return STG_OK;
    }
    stg_status st = grow_prefix(img, 8, err);
    if (st != STG_OK) {
        return st;
    }
    /* The header length as framing reads it, cut at the file's end (content that is no
     * safetensors is read whole anyway). */
    uint64_t n = img->size >= 8 ? stg_le64(img->bytes) : 0;
    if (img->size >= 8 && n > (uint64_t)img->size - 8) {
        n = (uint64_t)img->size - 8;
    }
    st = grow_prefix(img, (size_t)(8 + n + PREFIX_SLACK), err);
    if (st != STG_OK) {
        return st;
    }
    /* stg_sniff_is_safetensors reads at most the first 8 + n bytes: all copied. */
    *is_safetensors = name_says_safetensors || stg_sniff_is_safetensors(img->bytes, img->size);
    if (!*is_safetensors) {
        return STG_OK;
    }
    size_t tail = img->size > STG_ZIP_EOCD_SEARCH ? img->size - STG_ZIP_EOCD_SEARCH : 0;
    if (tail < img->tail && tail > img->prefix) {
        st = copy_range(img, tail, img->tail, err);
        if (st != STG_OK) {
            return st;
        }
        img->tail = tail;
    } else if (tail <= img->prefix) {
        return stg_image_fill_all(img, err);
    }
    if (has_eocd_signature(img->bytes + img->tail, img->size - img->tail)) {
        return stg_image_fill_all(img, err);
    }
    /* The polyglot pickle check walks from offset 0 over the whole buffer as a file's first
     * pickle (stg_pickle_sniff_file): grow the prefix until a walk of it settles (its outcome
     * then is the whole file's, stg_pickle_ran_out_of). The walk gets past the length's bytes
     * 4 to 7 (zero: a header is under 2^32 bytes, and a zero byte is no opcode) only inside an
     * argument: a counted one, whose end is known (past the file's end, the walk is settled),
     * or a text line, which runs to the next '\n'. Zero bytes end no line and are no opcode,
     * so a run of them after the prefix is passed over, read but never held (the image reads
     * as zeros there): only the bytes copied grow, by doubling. A walk that ran out in a text
     * line is settled when no '\n' follows anywhere in the file (tensors of ones hold none):
     * the walk of the whole file fails on that line too, so nothing more is copied. */
    size_t copied = img->prefix;
    for (;;) {
        bool ran_out = false, oom = false;
        size_t stop_end = 0;
        uint64_t open_line = UINT64_MAX;
        (void)stg_pickle_sniff_file(img->bytes, img->prefix, img->size, &stop_end, &ran_out,
                                    &open_line, &oom);
        if (oom) {
            return STG_E_NOMEM;
        }
        if (!ran_out || stg_image_whole(img)) {
            return STG_OK;
        }
        if (open_line != UINT64_MAX) {
            bool newline = true;
            st = newline_after_prefix(img, &newline, err);
            if (st != STG_OK || !newline) {
                return st;
            }
        }
        st = pass_zero_run(img, err);
        if (st != STG_OK || stg_image_whole(img)) {
            return st;
        }
        size_t next = copied > img->size - img->prefix ? img->size : img->prefix + copied;
        copied *= 2;
        st = grow_prefix(img, next, err);
        if (st != STG_OK) {
            return st;
        }
    }
}

/* ------------------------------------------------------------------ paged mode */

stg_status stg_image_pages_begin(stg_image *img)
{
    uint64_t pages = (img->size + STG_IMAGE_PAGE - 1) / STG_IMAGE_PAGE;
    img->pages = stg_mem_calloc((size_t)(pages / 8 + 1), 1);
    if (img->pages == NULL) {
        return STG_E_NOMEM;
    }
    /* What the prefix holds stays held: its whole pages (a part page is copied again). */
    uint64_t whole = img->prefix >= img->size ? pages : img->prefix / STG_IMAGE_PAGE;
    for (uint64_t k = 0; k < whole; k++) {
        img->pages[k / 8] |= (uint8_t)(1u << (k % 8));
    }
    img->held = whole * STG_IMAGE_PAGE < img->size ? whole * STG_IMAGE_PAGE : img->size;
    img->prefix = 0;
    img->tail = img->size;
    return STG_OK;
}

void stg_image_pages_end(stg_image *img)
{
    /* The held pages from byte 0 on become the prefix; the others are copied again. */
    uint64_t pages = (img->size + STG_IMAGE_PAGE - 1) / STG_IMAGE_PAGE, k = 0;
    while (img->pages != NULL && k < pages && (img->pages[k / 8] & (1u << (k % 8))) != 0) {
        k++;
    }
    stg_mem_free(img->pages);
    img->pages = NULL;
    img->prefix = k == pages ? img->size : (size_t)(k * STG_IMAGE_PAGE);
    img->held = img->prefix;
    img->tail = img->size;
}

static bool page_held(const stg_image *img, uint64_t page)
{
    return (img->pages[page / 8] & (1u << (page % 8))) != 0;
}

bool stg_image_holds(const stg_image *img, uint64_t off, uint64_t len)
{
    if (img->pages == NULL) {
        return off >= img->size || (off + len <= img->prefix) || off >= img->tail;
    }
    if (len == 0 || off >= img->size) {
        return true;
    }
    uint64_t end = len > img->size - off ? img->size : off + len;
    for (uint64_t p = off / STG_IMAGE_PAGE; p <= (end - 1) / STG_IMAGE_PAGE; p++) {
        if (!page_held(img, p)) {
            return false;
        }
    }
    return true;
}

stg_status stg_image_copy_span(stg_image *img, uint64_t from, uint64_t to, int *err)
{
    if (to > img->size) {
        to = img->size;
    }
    if (from >= to) {
        return STG_OK;
    }
    uint64_t last = (to - 1) / STG_IMAGE_PAGE;
    for (uint64_t p = from / STG_IMAGE_PAGE; p <= last;) {
        if (page_held(img, p)) {
            p++;
            continue;
        }
        uint64_t q = p; /* a run of pages not copied yet: one copy */
        while (q + 1 <= last && !page_held(img, q + 1)) {
            q++;
        }
        uint64_t a = p * STG_IMAGE_PAGE, b = (q + 1) * STG_IMAGE_PAGE;
        stg_status st = copy_range(img, (size_t)a, (size_t)(b < img->size ? b : img->size), err);
        if (st != STG_OK) {
            return st;
        }
        for (uint64_t k = p; k <= q; k++) {
            img->pages[k / 8] |= (uint8_t)(1u << (k % 8));
        }
        p = q + 1;
    }
    return STG_OK;
}
