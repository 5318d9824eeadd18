/* Windowed reading of zip archives (window.h, stg_image_fill_zip).
 *
 * A torch.save file is a zip of stored members, most of them tensor storages
 * (`<archive>/data/<key>`) of up to many GiB. The rules (dispatch/check.c, containers.c) read
 * the end records, the central directory, every local header, and of each member's data only
 * what its dispatch reads: all of a deflated member (it is inflated), all of a member whose name
 * says pickle or safetensors, all of one whose content sniffs as something scanned (a pickle
 * that imports or reaches STOP, an archive, a compressed stream, npy, safetensors...), and for
 * plain data (a storage) only the first bytes the sniffers look at. This file runs the same
 * zip reader (parser/zip.h, stg_zip_open_windowed) over an image that starts empty, copies in
 * every range the reader asks for, and then copies each member's data as the dispatch will read
 * it. stg_check_buffer over the image then reads only copied bytes, so its report is the one
 * the whole file gives (tests/loader/test_zip_window.c compares the two on every zip of corpus/).
 *
 * A stored member is left out (only its head copied) when its head proves the dispatch reads
 * nothing past it and finds nothing in it:
 *  - it cannot be safetensors by content (stg_sniff_is_safetensors): the first header byte
 *    that is not whitespace is in the head and is not '{', or the length field rules it out;
 *  - its first block is no tar header (stg_tar_header_ok is what every tar route needs);
 *  - a pickle walk from its first byte settles inside the head (stg_pickle_sniff_window: not
 *    ran_out), so every pickle sniff of the whole member gives the head's answer;
 *  - the sniffed kind of the head is then that of the whole member (every other sniff rule
 *    looks at fewer than 32 bytes), and it is unknown, or a pickle that neither reaches STOP
 *    nor imports (plain data for a member, check.c).
 * An undecided head is doubled up to HEAD_MAX, then the member is copied whole. Anything else
 * (a member that must be read) is copied whole. What the image holds is thus: the directory,
 * the local headers, a head per stored member, and every member read as bytes, all under cap
 * (max_inflate_bytes) as the whole file is. */
#include <string.h>

#include "../parser/mem.h"
#include "../parser/tar.h"
#include "../parser/util.h"
#include "../parser/zip.h"
#include "../validator/pickle_scan.h"
#include "../dispatch/formats.h"
#include "../dispatch/sniff.h"
#include "window.h"

#define HEAD_MIN ((uint64_t)4096)
#define HEAD_MAX ((uint64_t)1 << 20)
/* stg_sniff_is_safetensors' largest header length (dispatch/sniff.c). */
#define SNIFF_MAX_HEADER_LEN 100000000u

static uint64_t zip_threshold = STG_IMAGE_ZIP_THRESHOLD;

void stg_image_set_zip_threshold(uint64_t bytes)
{
    __atomic_store_n(&zip_threshold, bytes, __ATOMIC_RELAXED);
}

static bool json_ws(uint8_t b)
{
    return b == ' ' || b == '\t' || b == '\r' || b == '\n';
}

typedef enum head_verdict { HEAD_PLAIN, HEAD_READ_ALL, HEAD_UNDECIDED } head_verdict;

/* Whether stg_sniff_is_safetensors over n_total bytes whose first w are h is decided by h: 1
 * true, 0 false, -1 undecided. */
static int safetensors_by_head(const uint8_t *h, size_t w, uint64_t n_total)
{
    if (n_total < 9 || w < 9) {
        return n_total < 9 ? 0 : -1;
    }
    uint64_t n = stg_le64(h);
    if (n < 2 || n > SNIFF_MAX_HEADER_LEN) {
        return 0;
    }
    uint64_t present = n < n_total - 8 ? n : n_total - 8;
    uint64_t stop = present < (uint64_t)w - 8 ? 8 + present : (uint64_t)w;
    for (uint64_t i = 8; i < stop; i++) {
        if (!json_ws(h[i])) {
            return h[i] == '{' ? 1 : 0;
        }
    }
    return present > (uint64_t)w - 8 ? -1 : 0;
}

/* The rules above for a stored member of len bytes whose first w (< len) are h. */
static head_verdict judge_head(const uint8_t *h, size_t w, uint64_t len)
{
    int st = safetensors_by_head(h, w, len);
    if (st != 0) {
        return st > 0 ? HEAD_READ_ALL : HEAD_UNDECIDED;
    }
    if (stg_tar_header_ok(h, w)) {
        return HEAD_READ_ALL;
    }
    bool oom = false, ran_out = false;
    size_t stop_end = 0;
    (void)stg_pickle_sniff_window(h, w, &stop_end, &ran_out, &oom);
    if (oom) {
        return HEAD_READ_ALL;
    }
    if (ran_out) {
        return HEAD_UNDECIDED;
    }
    const stg_format_entry *kind = stg_format_sniff(h, w, &oom);
    if (!oom && kind == NULL) {
        return HEAD_PLAIN;
    }
    if (!oom && kind != NULL && kind->pickle && !stg_pickle_sniff_acts(h, w, &oom) && !oom) {
        return HEAD_PLAIN;
    }
    return HEAD_READ_ALL;
}

static bool pickle_name(const char *name)
{
    return stg_member_name_holds(name) == STG_FMT_PICKLE;
}

/* Copies what the dispatch reads of one reading of an entry's data (containers.c,
 * scan_entry_data): name is the name that reading is scanned under. */
static stg_status fetch_data(stg_image *img, const stg_zip_entry *e, const char *name,
                             uint16_t method, uint64_t csize, bool force_pickle, int *err)
{
    if (csize > img->size || e->data_offset > img->size - csize || csize == 0) {
        return STG_OK; /* zip_malformed, nothing read */
    }
    uint64_t from = e->data_offset, to = from + csize;
    if (method != 0) {
        /* deflate, bzip2 and LZMA are decompressed whole; other methods are format_unscannable,
         * never read */
        stg_inflate_format fmt;
        return stg_zip_method_format(method, &fmt) ? stg_image_copy_span(img, from, to, err)
                                                   : STG_OK;
    }
    /* a member whose name decides its format is read whole, as its rules read it */
    if (force_pickle || stg_format_by_name(name) != NULL) {
        return stg_image_copy_span(img, from, to, err);
    }
    for (uint64_t w = HEAD_MIN; w < csize && w <= HEAD_MAX; w *= 2) {
        stg_status st = stg_image_copy_span(img, from, from + w, err);
        if (st != STG_OK) {
            return st;
        }
        head_verdict v = judge_head(img->bytes + from, (size_t)w, csize);
        if (v == HEAD_PLAIN) {
            return STG_OK;
        }
        if (v == HEAD_READ_ALL) {
            break;
        }
    }
    return stg_image_copy_span(img, from, to, err);
}

/* Both readings scan_entry makes of an entry. */
static stg_status fetch_entry(stg_image *img, const stg_zip_entry *e, int *err)
{
    char *name = stg_mem_strndup((const char *)e->name, e->name_len);
    char *local = stg_mem_strndup((const char *)e->local_name, e->local_name_len);
    stg_status st = STG_E_NOMEM;
    if (name != NULL && local != NULL) {
        bool force_pickle = pickle_name(name) || pickle_name(local);
        st = fetch_data(img, e, name, e->method, e->comp_size, force_pickle, err);
        bool other_reading = (e->mismatch & STG_ZIP_MISMATCH_METHOD) != 0 ||
                             ((e->mismatch & STG_ZIP_MISMATCH_SIZES) != 0 &&
                              e->local_comp_size != e->comp_size);
        if (st == STG_OK && other_reading && e->local_sizes_known) {
            st = fetch_data(img, e, local, e->local_method, e->local_comp_size, force_pickle, err);
        }
    }
    stg_mem_free(name);
    stg_mem_free(local);
    return st;
}

static bool holds(void *ctx, uint64_t offset, uint64_t len)
{
    return stg_image_holds(ctx, offset, len);
}

/* One reader's reading: opened and walked with every range it asks for copied in. *opened is
 * set when the reader opens the archive. */
static stg_status fetch_reading(stg_image *img, stg_zip_reader reader, bool *opened, int *err)
{
    stg_zip z;
    stg_zip_error zerr;
    stg_zip_result zr;
    stg_status st = STG_OK;
    /* Each STG_ZIPR_NEED names a range not held yet, so every round copies something new. */
    while ((zr = stg_zip_open_windowed(&z, img->bytes, img->size, reader, holds, img, &zerr)) ==
           STG_ZIPR_NEED) {
        st = stg_image_copy_span(img, zerr.offset, zerr.offset + zerr.len, err);
        if (st != STG_OK) {
            return st;
        }
    }
    *opened = zr == STG_ZIPR_OK;
    if (!*opened) {
        return STG_OK;
    }
    stg_zip_entry e;
    for (;;) {
        zr = stg_zip_next(&z, &e, &zerr);
        if (zr == STG_ZIPR_NEED) {
            st = stg_image_copy_span(img, zerr.offset, zerr.offset + zerr.len, err);
        } else if (zr == STG_ZIPR_OK) {
            st = fetch_entry(img, &e, err);
        } else if (zr != STG_ZIPR_ENTRY_BAD) {
            return STG_OK; /* end, or a directory the rules stop at too */
        }
        if (st != STG_OK) {
            return st;
        }
    }
}

/* The top-level route is the zip one (check.c, dispatch): a local header at byte 0 (so no Git
 * LFS pointer, which is text) and no safetensors by content. */
static bool zip_route(const stg_image *img)
{
    size_t w = img->size < STG_IMAGE_PAGE ? img->size : (size_t)STG_IMAGE_PAGE;
    return img->size >= 4 && memcmp(img->bytes, STG_ZIP_LOCAL_MAGIC, 4) == 0 &&
           safetensors_by_head(img->bytes, w, img->size) == 0;
}

stg_status stg_image_fill_zip(stg_image *img, bool *done, int *err)
{
    *done = false;
    uint64_t threshold = __atomic_load_n(&zip_threshold, __ATOMIC_RELAXED);
    if (img->size <= threshold || img->size < 4 || img->pages != NULL) {
        return STG_OK;
    }
    /* The first page decides; it stays in the prefix for the other fills when it is no zip. */
    stg_status st = stg_image_fill_prefix(img, (size_t)STG_IMAGE_PAGE, err);
    if (st != STG_OK || !zip_route(img)) {
        return st;
    }
    st = stg_image_pages_begin(img);
    if (st != STG_OK) {
        return st;
    }
    uint64_t tail = img->size > STG_ZIP_WINDOW_TAIL ? img->size - STG_ZIP_WINDOW_TAIL : 0;
    if (st == STG_OK) {
        st = stg_image_copy_span(img, tail, img->size, err);
    }
    bool any = false;
    for (int r = 0; st == STG_OK && r < STG_ZIP_READERS; r++) {
        bool opened = false;
        st = fetch_reading(img, (stg_zip_reader)r, &opened, err);
        any = any || opened;
    }
    if (st == STG_E_LIMIT || (st == STG_OK && !any)) {
        /* More than cap in windows, or no directory (the local header walk reads every byte):
         * the whole file, as before. */
        stg_image_pages_end(img);
        return STG_OK;
    }
    if (st != STG_OK) {
        return st;
    }
    *done = true;
    return STG_OK;
}
