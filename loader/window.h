/* Owned images of files (loader-internal, shared by loader/scan.c and loader/mmap.c).
 *
 * A file that another process can truncate must never be read through a file mapping: a page
 * past the new end raises SIGBUS. An image is an anonymous private mapping of the file's size
 * whose pages are ours; the parts the validators will read are copied into it with pread, so a
 * file that shrinks, grows or is replaced meanwhile gives a short read (file_changed) or a read
 * error (io_error), never a signal. Parts never copied read as zeros and cost no memory.
 *
 * What is copied:
 *  - stg_image_fill_all: the whole file (every format but safetensors needs all of its bytes);
 *  - stg_image_fill_safetensors: what the safetensors rules and their polyglot checks read
 *    (dispatch/polyglot.h): the first 8 + n bytes (length and header) plus 64 KiB, and the
 *    last 65,557 bytes (where a zip end record may sit). Then the prefix grows while a
 *    pickle walk from offset 0 could still read past it (stg_pickle_sniff_file): a run of
 *    zero bytes after it is read through a small buffer and passed over (the image holds
 *    zeros there already), other bytes are copied, doubling what is copied; and the
 *    whole file is copied when the last 65,557 bytes hold a zip end-record signature (an
 *    appended archive's directory and members may be anywhere). A benign safetensors file is
 *    thus held as its header plus about 129 KiB, whatever its size.
 *  - stg_image_fill_zip (loader/zip_window.c): a file that starts as a zip is copied in pages
 *    (STG_IMAGE_PAGE bytes, a bitmap says which): its end records, central directories and
 *    local headers, and of each member the bytes the in-memory rules would read. See
 *    zip_window.c for which members are copied whole and why the rest are not.
 * Either way at most `cap` bytes are copied (the caller passes max_inflate_bytes: a file is
 * held like an inflated member); needing more is STG_E_LIMIT, never a partial image. */
#ifndef STG_LOADER_WINDOW_H
#define STG_LOADER_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "digest.h"
#include "stguard/stguard.h"

typedef struct stg_image {
    uint8_t *bytes; /* size bytes (NULL when size is 0) */
    size_t size;
    uint64_t held; /* bytes copied in so far (each byte once) */
    size_t prefix; /* [0, prefix) is copied */
    size_t tail;   /* [tail, size) is copied (tail == size: nothing) */
    uint64_t cap;
    int fd;
    uint64_t *progress;         /* not NULL: bytes copied are added to it as they come (atomically),
                           for a progress display; set after stg_image_open */
    const volatile int *cancel; /* not NULL: once *cancel is non-zero a read stops between two
                                   chunks with STG_E_IO and ECANCELED (an interrupted walk) */
    uint8_t *pages;   /* paged mode (stg_image_pages_begin): bit i set when page i is copied;
                           prefix and tail are then unused */
    stg_sha256 *hash; /* not NULL: bytes copied in file order from offset 0 are hashed as
                           they come, so a whole image's digest costs no second pass and the
                           progress count moves while it is computed; owned by the image */
    size_t hashed;    /* [0, hashed) went through hash */
    bool heap;        /* bytes come from stg_mem (a small file), not a private mapping */
    bool hash_failed; /* an update failed: stg_image_digest says so */
} stg_image;

#define STG_IMAGE_PAGE ((uint64_t)4096)
/* Images of at most this many bytes live on the heap (zeroed like a fresh mapping). */
#define STG_IMAGE_HEAP_MAX ((size_t)64 * 1024)

/* Maps an image of size bytes for fd. STG_OK, or STG_E_IO with *err when the address space
 * refuses it (reported as io_error, like the file mapping it replaces). */
stg_status stg_image_open(stg_image *img, int fd, uint64_t size, uint64_t cap, int *err);
void stg_image_close(stg_image *img);

/* SHA-256 of a whole image (stg_image_whole): the part hash did not see while copying (ranges
 * copied out of file order) is hashed from memory, then the hash is finished. STG_E_CRYPTO when
 * no hash was set or an update failed: the caller digests the bytes itself. */
stg_status stg_image_digest(stg_image *img, uint8_t out[32]);

/* Results of the fills: STG_OK; STG_FILE_CHANGED when the file ended before size (it shrank);
 * STG_E_IO with *err set; STG_E_LIMIT when more than cap bytes would be needed; STG_E_NOMEM. */
stg_status stg_image_fill_all(stg_image *img, int *err);
/* Copies [0, n) (cut at the file's end) into the prefix. */
stg_status stg_image_fill_prefix(stg_image *img, size_t n, int *err);
/* name_says_safetensors: the name hint routes the file to the safetensors rules whatever its
 * content (stg_name_hint_of). *is_safetensors is set when the rules that will run are the
 * safetensors ones (the name says so, or the content sniffs so); when it is false the caller
 * needs the whole file (stg_image_fill_all). */
stg_status stg_image_fill_safetensors(stg_image *img, bool name_says_safetensors,
                                      bool *is_safetensors, int *err);
/* true when every byte of the file is in the image. */
bool stg_image_whole(const stg_image *img);

/* Paged mode: starts it on an image of which at most a prefix was copied (its whole pages stay
 * held; STG_E_NOMEM when the bitmap cannot be had); stg_image_pages_end leaves it: the held pages from byte 0 on are the
 * prefix, the rest counts as not copied, so stg_image_fill_all copies (again) what is left. */
stg_status stg_image_pages_begin(stg_image *img);
void stg_image_pages_end(stg_image *img);
/* Copies the pages that [from, to) touches (cut at the file's end) and are not copied yet.
 * Results as for the fills. */
stg_status stg_image_copy_span(stg_image *img, uint64_t from, uint64_t to, int *err);
/* true when every byte of [off, off + len) is copied (paged mode). */
bool stg_image_holds(const stg_image *img, uint64_t off, uint64_t len);

/* A file that starts as a zip (a local header at byte 0, and no safetensors by content) is
 * copied in paged mode as zip_window.c says: *done is set then, and the image holds every
 * byte the rules read (stg_check_buffer over it gives the same report as over the whole file).
 * *done stays false, and nothing is held, for every other file, for a zip that no reader
 * opens, for files of at most stg_image_zip_threshold bytes, and when the windows would need
 * more than cap bytes (the caller then copies the whole file, which is the limit's verdict
 * either way). */
stg_status stg_image_fill_zip(stg_image *img, bool *done, int *err);
/* Zips of at most this many bytes are copied whole (default STG_IMAGE_ZIP_THRESHOLD, 0: every
 * zip goes through the windows). Tests raise it to UINT64_MAX to scan the same archive whole
 * and compare (tests/loader/test_zip_window.c); process-wide. */
#define STG_IMAGE_ZIP_THRESHOLD ((uint64_t)0)
void stg_image_set_zip_threshold(uint64_t bytes);

#endif
