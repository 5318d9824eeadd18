/* Buffers, paths and standard input: read or map each file, digest it, hand its bytes to
 * dispatch/check (or to the index scanner for `*.safetensors.index.json`), and turn every
 * problem with the file itself into a finding (io_error, file_changed, not_regular_file,
 * symlink_skipped, digest_mismatch). The tree walk is walk.c; its rules are in scan.h. */
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../parser/mem.h"
#include "../parser/util.h"
#include "../dispatch/check.h"
#include "../dispatch/formats.h"
#include "../dispatch/sniff.h"
#include "../validator/limits.h"
#include "digest.h"
#include "gguf_open.h"
#include "joblib_side.h"
#include "sibling.h"
#include "model.h"
#include "onnx_external.h"
#include "open_file.h"
#include "path.h"
#include "seed.h"
#include "window.h"
#include "within.h"

/* Standard input is read in chunks of this size. */
#define READ_CHUNK ((size_t)1 << 16)

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(stg_scan_options) == 360, "stg_scan_options layout is part of the ABI");
#endif

stg_status stg_scan_options_init(stg_scan_options *out, uint32_t struct_version)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    memset(out, 0, sizeof *out);
    out->struct_version = struct_version;
    stg_status st = stg_limits_init(&out->limits, struct_version);
    out->policy = NULL;
    out->digest = true;
    out->expected_sha256 = NULL;
    out->root = NULL;
    return st;
}

/* ------------------------------------------------------------------------------ helpers */

bool stg_scan_is_blob_name(const char *name)
{
    size_t i = 0;
    for (; name[i] != '\0'; i++) {
        char c = name[i];
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (!hex || i >= 64) {
            return false;
        }
    }
    return i == 64 || i == 40;
}

/* true when the folder holding base (the last component of path, not its first) is `blobs`. */
static bool in_blobs_folder(const char *path, const char *base)
{
    const char *end = base - 1; /* the slash before base */
    const char *start = end;
    while (start > path && start[-1] != '/') {
        start--;
    }
    return (size_t)(end - start) == 5 && memcmp(start, "blobs", 5) == 0;
}

/* true when path's last component is a blob name (40 or 64 hex) inside a folder named `blobs`. */
bool stg_path_is_blob(const char *path)
{
    const char *base = stg_path_base(path);
    return base != path && stg_scan_is_blob_name(base) && in_blobs_folder(path, base);
}

bool stg_path_is_incomplete_blob(const char *path)
{
    static const char suffix[] = ".incomplete";
    const char *base = stg_path_base(path);
    size_t n = strlen(base), k = sizeof suffix - 1;
    char name[65];
    if (base == path || n <= k || n - k >= sizeof name || strcmp(base + n - k, suffix) != 0) {
        return false;
    }
    memcpy(name, base, n - k);
    name[n - k] = '\0';
    return stg_scan_is_blob_name(name) && in_blobs_folder(path, base);
}

/* Adds a finding about the file itself (no offset); errno text is a value, never a format. */
stg_report *stg_scan_fixed_report(const stg_limits *lim, stg_code code, stg_severity sev,
                                  const char *message)
{
    stg_report *r = stg_report_new(lim);
    if (r != NULL) {
        stg_report_add_sev(r, code, sev, STG_NO_OFFSET, "%s", message);
        stg_report_finish(r);
    }
    return r;
}

/* Memory cap for buffering content of unknown size: max_memory, else 2 x max_header_len +
 * 8 MiB (saturating). */
static uint64_t buffer_cap(const stg_limits *lim)
{
    if (lim->max_memory != 0) {
        return lim->max_memory;
    }
    uint64_t twice, cap;
    if (stg_mul_u64(lim->max_header_len, 2, &twice) ||
        stg_add_u64(twice, (uint64_t)8 << 20, &cap)) {
        return UINT64_MAX;
    }
    return cap;
}

/* ------------------------------------------------------------------------------ content */

/* Where a model on disk is (ONNX, OpenVINO IR): its path (as walked or given) and the scan
 * root. */
typedef struct onnx_place {
    const char *path;
    const char *root;
} onnx_place;

/* The dispatcher's hook for a top-level ONNX model read from a file: its external-data files
 * are resolved in the model's folder and must stay inside opt->root, or inside that folder
 * when no root is set (as joblib side files are). */
static void onnx_external_files(void *arg, const stg_onnx_external *ext, size_t n, stg_report *r)
{
    const onnx_place *place = arg;
    r->neighbours = r->neighbours || n > 0;
    char *dir = stg_path_dir(place->path);
    if (dir == NULL) {
        stg_report_oom(r);
        return;
    }
    stg_onnx_check_external_files(dir, place->root, ext, n, r);
    stg_mem_free(dir);
}

/* The dispatcher's hook for a file named beside a top-level file read from disk (a module an
 * auto_map names): looked up in the file's folder, confined to opt->root (or that folder) as
 * ONNX external data is; a link out of it, or anything but a regular file, is not present. */
static stg_beside file_beside(void *arg, const char *name, stg_report *r)
{
    const onnx_place *place = arg;
    r->neighbours = true;
    char *dir = stg_path_dir(place->path);
    char *path = dir != NULL ? stg_path_join(dir, name) : NULL;
    stg_beside found = STG_BESIDE_UNKNOWN;
    struct stat st;
    if (path == NULL) {
        stg_report_oom(r);
    } else if (stat(path, &st) != 0) {
        found = errno == ENOENT || errno == ENOTDIR ? STG_BESIDE_ABSENT : STG_BESIDE_UNKNOWN;
    } else if (stg_path_within(place->root != NULL ? place->root : dir, path) == STG_WITHIN_YES) {
        found = S_ISREG(st.st_mode) ? STG_BESIDE_PRESENT : STG_BESIDE_ABSENT;
    }
    stg_mem_free(path);
    stg_mem_free(dir);
    return found;
}

/* The dispatcher's hook for a top-level OpenVINO IR read from a file: its weights file beside
 * it (loader/sibling.h), inside opt->root or the IR's folder. */
static void openvino_weights_file(void *arg, const stg_openvino_ir *ir, stg_report *r)
{
    const onnx_place *place = arg;
    stg_openvino_check_weights(place->path, place->root, ir, r);
}

/* Runs the format rules over buf. index_path: the file's path when it is an index on disk (its
 * shards are then looked up next to it); NULL for buffers and streams. */
static void check_content(const uint8_t *buf, size_t len, const char *name_hint,
                          const char *index_path, const stg_scan_options *opt, stg_report *r)
{
    const stg_format_entry *named = index_path != NULL ? stg_format_by_name(index_path) : NULL;
    if (named != NULL && named->neighbours) {
        stg_index_scan_file(index_path, buf, len, opt, r);
        r->neighbours = true;
        stg_report_set_size(r, (uint64_t)len);
        return;
    }
    stg_check_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.lim = &opt->limits;
    ctx.hash_seed = stg_scan_seed();
    ctx.policy = opt->policy;
    ctx.report = r;
    onnx_place place = {index_path, opt->root};
    if (index_path != NULL) {
        ctx.onnx_external = onnx_external_files;
        ctx.onnx_external_arg = &place;
        ctx.openvino_weights = openvino_weights_file;
        ctx.openvino_weights_arg = &place;
        ctx.beside = file_beside;
    }
    stg_check_buffer(buf, len, name_hint, &ctx);
}

/* Records the digest and compares it with what was expected (the option, a blob's name). */
static void apply_digest(stg_report *r, const uint8_t digest[32], const char *expected_hex,
                         const char *blob_hex)
{
    stg_report_set_sha256(r, digest);
    uint8_t want[32];
    if (expected_hex != NULL && stg_sha256_parse_hex(expected_hex, want) &&
        memcmp(want, digest, 32) != 0) {
        stg_report_add(r, STG_DIGEST_MISMATCH, STG_NO_OFFSET,
                       "SHA-256 %s differs from the expected digest", stg_report_sha256(r));
    }
    if (blob_hex != NULL && stg_sha256_parse_hex(blob_hex, want) && memcmp(want, digest, 32) != 0) {
        stg_report_add(r, STG_DIGEST_MISMATCH, STG_NO_OFFSET,
                       "SHA-256 %s of the blob differs from the digest its name gives",
                       stg_report_sha256(r));
    }
}

/* Compares the Git blob id of the content (computed here from data when not NULL, else given in
 * id) with the 40 hex digits of a blob's name. */
static void check_git_blob(stg_report *r, const uint8_t *data, size_t len, uint8_t id[20],
                           const char *blob_hex)
{
    uint8_t want[20];
    if (data != NULL && stg_git_blob_id_buffer(data, len, id) != STG_OK) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "the Git blob id could not be computed");
        return;
    }
    if (stg_sha1_parse_hex(blob_hex, want) && memcmp(want, id, 20) != 0) {
        char hex[41];
        stg_hex_encode(id, 20, hex);
        stg_report_add(r, STG_DIGEST_MISMATCH, STG_NO_OFFSET,
                       "Git blob id (SHA-1) %s of the blob differs from the id its name gives",
                       hex);
    }
}

static bool want_digest(const stg_scan_options *opt, const char *blob_hex)
{
    return opt->digest || opt->expected_sha256 != NULL || blob_hex != NULL;
}

/* Whole-buffer scan shared by stg_scan_buffer and the buffered branch of stg_scan_fd. digest:
 * precomputed, or NULL to compute it here when wanted. */
static void scan_bytes(const uint8_t *buf, size_t len, const char *name_hint,
                       const char *index_path, const char *blob_hex, const uint8_t *digest,
                       const stg_scan_options *opt, stg_report *r)
{
    check_content(buf, len, name_hint, index_path, opt, r);
    if (!want_digest(opt, blob_hex)) {
        return;
    }
    uint8_t computed[32];
    if (digest == NULL) {
        if (stg_sha256_buffer(buf, len, computed) != STG_OK) {
            stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET,
                           "the SHA-256 digest could not be computed");
            return;
        }
        digest = computed;
    }
    apply_digest(r, digest, opt->expected_sha256, blob_hex);
}

/* Argument checks every scan entry shares: NULL options mean the defaults; the caller's are
 * checked (struct versions, docs/abi.md) and copied; the scan uses *def either way. A
 * malformed expected digest is the caller's error, not a finding. */
static stg_status scan_prepare(const stg_scan_options **opt, stg_scan_options *def)
{
    const stg_scan_options *in = *opt;
    stg_scan_options_default(def);
    *opt = def;
    if (in != NULL) {
        if (!stg_struct_version_known(in->struct_version)) {
            return STG_E_STRUCT_VERSION;
        }
        stg_status st = stg_limits_accept(&in->limits, &def->limits);
        if (st != STG_OK) {
            return st;
        }
        /* Every option is in struct version 1 (reserved space is not read). */
        def->policy = in->policy;
        def->digest = in->digest;
        def->expected_sha256 = in->expected_sha256;
        def->root = in->root;
    }
    uint8_t parsed[32];
    if ((*opt)->expected_sha256 != NULL && !stg_sha256_parse_hex((*opt)->expected_sha256, parsed)) {
        return STG_E_BAD_ARG;
    }
    return STG_OK;
}

stg_status stg_scan_buffer(const void *buf, size_t len, const char *name_hint,
                           const stg_scan_options *opt, stg_report **out)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = NULL;
    if (buf == NULL && len > 0) {
        return STG_E_BAD_ARG;
    }
    stg_scan_options def;
    stg_status prep = scan_prepare(&opt, &def);
    if (prep != STG_OK) {
        return prep;
    }
    stg_report *r = stg_report_new(&opt->limits);
    if (r == NULL) {
        return STG_E_NOMEM;
    }
    static const uint8_t empty[1] = {0};
    scan_bytes(len > 0 ? buf : empty, len, name_hint, NULL, NULL, NULL, opt, r);
    stg_joblib_side_unresolved(r);
    stg_report_finish(r);
    *out = r;
    return STG_OK;
}

/* ------------------------------------------------------------------------------ one file */

/* a and b are two fstat results of one open descriptor, so device and inode are the same by
 * construction: what can differ is the size and the modification time. */
static bool same_content_stamp(const struct stat *a, const struct stat *b)
{
    return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void add_changed(stg_report *r)
{
    stg_report_add(r, STG_FILE_CHANGED_CODE, STG_NO_OFFSET,
                   "the file changed size or identity while it was scanned");
}

/* SHA-256 of the first size bytes of fd, read with pread in chunks; with git (not NULL) also the
 * Git blob id of those bytes, from the same reads. */
static bool digest_fd(int fd, uint64_t size, uint8_t out[32], uint8_t *git, bool *short_read,
                      int *err, uint64_t *progress, const volatile int *cancel)
{
    *short_read = false;
    stg_sha256 *h = NULL;
    stg_git_blob_id *g = NULL;
    uint8_t *chunk = stg_mem_alloc(READ_CHUNK * 16);
    if (chunk == NULL || stg_sha256_new(&h) != STG_OK ||
        (git != NULL && stg_git_blob_id_new(size, &g) != STG_OK)) {
        stg_sha256_free(h);
        stg_mem_free(chunk);
        *err = ENOMEM;
        return false;
    }
    bool ok = true;
    for (uint64_t done = 0; ok && done < size;) {
        uint64_t left = size - done;
        size_t want = left < READ_CHUNK * 16 ? (size_t)left : READ_CHUNK * 16;
        if (cancel != NULL && *cancel != 0) {
            *err = ECANCELED;
            ok = false;
            break;
        }
        ssize_t n = pread(fd, chunk, want, (off_t)done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            *short_read = n == 0;
            *err = n < 0 ? errno : 0;
            ok = false;
            break;
        }
        if (progress != NULL) {
            __atomic_fetch_add(progress, (uint64_t)n, __ATOMIC_RELAXED);
        }
        ok = stg_sha256_update(h, chunk, (size_t)n) == STG_OK &&
             (g == NULL || stg_git_blob_id_update(g, chunk, (size_t)n) == STG_OK);
        if (!ok) {
            *err = EIO;
        }
        done += (uint64_t)n;
    }
    if (ok && (stg_sha256_final(h, out) != STG_OK ||
               (g != NULL && stg_git_blob_id_final(g, git) != STG_OK))) {
        *err = EIO;
        ok = false;
    }
    stg_sha256_free(h);
    stg_git_blob_id_free(g);
    stg_mem_free(chunk);
    return ok;
}

/* Fills img as the format table's read plan for the file says (stg_format_entry.read_plan): a
 * name that decides a format reads it by that plan (safetensors in windows, an index whole);
 * else a zip at the end is held in windows, a magic whose entry reads a bounded head (GGUF,
 * never safetensors by content) its head, safetensors by content in windows, anything else
 * whole, up to max_inflate_bytes. *safetensors: held as safetensors windows. */
static stg_status fill_by_plan(stg_image *img, const char *hint, const stg_limits *lim,
                               bool *safetensors, int *err)
{
    const stg_format_entry *named = stg_format_by_name(hint);
    stg_status st = STG_OK;
    bool windows_by_name = named != NULL && named->read_plan == STG_READ_WINDOWS;
    if (named == NULL) {
        bool zip = false;
        st = stg_image_fill_zip(img, &zip, err);
        if (st != STG_OK || zip) {
            return st;
        }
        st = stg_image_fill_prefix(img, stg_format_magic_max(), err);
        const stg_format_entry *head = st == STG_OK ? stg_format_by_magic(img->bytes, img->prefix)
                                                    : NULL;
        if (head != NULL && head->read_plan == STG_READ_HEAD) {
            return stg_image_fill_gguf(img, lim, err);
        }
    }
    if (st == STG_OK && (named == NULL || windows_by_name)) {
        st = stg_image_fill_safetensors(img, windows_by_name, safetensors, err);
    }
    if (st == STG_OK && !*safetensors) {
        st = stg_image_fill_all(img, err);
    }
    return st;
}

/* Reports why the image could not be filled. */
static void report_fill_failure(stg_report *r, stg_status st, int err, uint64_t size, uint64_t cap)
{
    if (st == STG_FILE_CHANGED) {
        add_changed(r);
    } else if (st == STG_E_LIMIT) {
        stg_finding *f = stg_report_add(
            r, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
            "the file (%llu bytes) needs more memory than max_inflate_bytes (%llu): not scanned",
            (unsigned long long)size, (unsigned long long)cap);
        stg_report_set_limit(r, f, "max_inflate_bytes");
        stg_report_set_size(r, size);
    } else if (st == STG_E_NOMEM || err == ENOMEM) {
        stg_report_oom(r);
    } else {
        stg_scan_add_errno(r, STG_IO_ERROR, "the file could not be read", err);
    }
}

/* Scans one regular file into r (not finished). open_path is opened (without following a final
 * link when nofollow); hint is the name used as a format hint; index_path as in check_content;
 * *bytes gets the size read. false: *cancel stopped the read (r is then not a verdict). */
bool stg_scan_file_into(const char *open_path, const char *hint, bool nofollow,
                        const char *blob_hex, const stg_scan_options *opt, stg_report *r,
                        uint64_t *bytes, uint64_t *progress, const volatile int *cancel)
{
    struct stat before, opened, after;
    *bytes = 0;
    int rc = nofollow ? lstat(open_path, &before) : stat(open_path, &before);
    if (rc != 0) {
        stg_scan_add_errno(r, STG_IO_ERROR, "the file could not be read", errno);
        return true;
    }
    if (S_ISDIR(before.st_mode)) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "the path is a directory, not a file");
        return true;
    }
    if (!S_ISREG(before.st_mode)) {
        /* FIFOs, devices and sockets: never opened (opening a FIFO could block). */
        stg_report_add(r, STG_NOT_REGULAR_FILE, STG_NO_OFFSET,
                       "not a regular file (FIFO, device, socket or link): not opened");
        return true;
    }
    /* O_NONBLOCK (loader/open_file.h): if the path was swapped for a FIFO since lstat, open
     * does not wait, and the descriptor is refused before any read. */
    int fd = -1, oerr = 0;
    switch (stg_open_file(open_path, nofollow ? O_NOFOLLOW : 0, &fd, &opened, &oerr)) {
    case STG_OPENED: break;
    case STG_OPEN_FAILED:
        if (oerr == ELOOP && nofollow) {
            add_changed(r);
        } else {
            stg_scan_add_errno(r, STG_IO_ERROR, "the file could not be opened", oerr);
        }
        return true;
    case STG_OPEN_NOT_REGULAR:
        stg_report_add(r, STG_NOT_REGULAR_FILE, STG_NO_OFFSET,
                       "not a regular file once opened (a %s): not read",
                       stg_file_kind(opened.st_mode));
        return true;
    }
    if (opened.st_dev != before.st_dev || opened.st_ino != before.st_ino) {
        add_changed(r);
        close(fd);
        return true;
    }
    uint64_t size = (uint64_t)opened.st_size;
    if (size > SIZE_MAX || opened.st_size < 0) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET,
                       "the file is too large to be read on this host");
        close(fd);
        return true;
    }
    /* The file is read into an image (loader/window.h): safetensors in windows (header,
     * tail), zip archives in windows too (directory, local headers, the members the rules read
     * as bytes: loader/zip_window.c); everything else whole, up to max_inflate_bytes. Nothing
     * reads through a file mapping, so a file truncated meanwhile is file_changed, never
     * SIGBUS. */
    stg_image img;
    int err = 0;
    uint64_t cap = opt->limits.max_inflate_bytes < STG_INFLATE_BYTES_CEILING
                       ? opt->limits.max_inflate_bytes
                       : STG_INFLATE_BYTES_CEILING;
    if (stg_image_open(&img, fd, size, cap, &err) != STG_OK) {
        stg_scan_add_errno(r, STG_IO_ERROR, "the file's image could not be mapped", err);
        close(fd);
        return true;
    }
    img.progress = progress;
    img.cancel = cancel;
    /* Bytes read in file order are hashed as they arrive; an image that ends up whole has its
     * digest then (no second pass), one held in part is digested with pread below. */
    if (want_digest(opt, blob_hex) && stg_sha256_new(&img.hash) != STG_OK) {
        img.hash = NULL; /* digested from the bytes afterwards, which reports a failure */
    }
    bool safetensors = false;
    stg_status st = fill_by_plan(&img, hint, &opt->limits, &safetensors, &err);
    /* An image held in part is digested with pread (the page cache serves both); a whole one
     * from the bytes that were checked, hashed while they were copied. */
    uint8_t digest[32], git_id[20];
    const uint8_t *precomputed = NULL;
    /* A 40-hex blob name is a Git blob id (scan.h): checked from the same bytes. */
    bool git_blob = blob_hex != NULL && strlen(blob_hex) == 40;
    bool whole = stg_image_whole(&img);
    if (st == STG_OK && !whole && want_digest(opt, blob_hex)) {
        bool short_read = false;
        if (!digest_fd(fd, size, digest, git_blob ? git_id : NULL, &short_read, &err, progress,
                       cancel)) {
            st = short_read ? STG_FILE_CHANGED : STG_E_IO;
        }
        precomputed = digest;
    } else if (st == STG_OK && whole && img.hash != NULL &&
               stg_image_digest(&img, digest) == STG_OK) {
        precomputed = digest;
    }
    if (st == STG_E_IO && err == ECANCELED) {
        stg_image_close(&img);
        close(fd);
        return false;
    }
    if (st != STG_OK) {
        report_fill_failure(r, st, err, size, cap);
        stg_image_close(&img);
        close(fd);
        return true;
    }
    static const uint8_t empty[1] = {0};
    scan_bytes(img.bytes != NULL ? img.bytes : empty, img.size, hint, hint, blob_hex, precomputed,
               opt, r);
    if (git_blob) {
        check_git_blob(r, whole ? (img.bytes != NULL ? img.bytes : empty) : NULL, img.size, git_id,
                       blob_hex);
    }
    *bytes = size;
    if (fstat(fd, &after) != 0 || !same_content_stamp(&opened, &after)) {
        add_changed(r);
    } else if (!nofollow && stat(open_path, &after) == 0 &&
               (after.st_dev != opened.st_dev || after.st_ino != opened.st_ino)) {
        add_changed(r); /* the name now leads to another file */
    } else if (nofollow && lstat(open_path, &after) == 0 &&
               (after.st_dev != opened.st_dev || after.st_ino != opened.st_ino)) {
        add_changed(r);
    }
    stg_image_close(&img);
    close(fd);
    return true;
}

void stg_scan_side_file(const char *resolved, const stg_scan_options *opt, stg_report *sub)
{
    uint64_t bytes = 0;
    /* The resolved path has no links left: opened without following any, so a link put there
     * after the containment check is file_changed, not followed. */
    stg_scan_file_into(resolved, NULL, true, NULL, opt, sub, &bytes, NULL, NULL);
}

stg_status stg_scan_path(const char *path, const stg_scan_options *opt, stg_report **out)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = NULL;
    if (path == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_scan_options def;
    stg_status prep = scan_prepare(&opt, &def);
    if (prep != STG_OK) {
        return prep;
    }
    stg_report *r = stg_report_new(&opt->limits);
    if (r == NULL) {
        return STG_E_NOMEM;
    }
    stg_report_set_path(r, path);
    char resolved[PATH_MAX];
    bool have_real = realpath(path, resolved) != NULL;
    int real_err = errno;
    struct stat lst;
    bool is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (is_link && !have_real) {
        stg_scan_add_errno(r, STG_IO_ERROR, "the link's target could not be resolved", real_err);
        stg_report_finish(r);
        *out = r;
        return STG_OK;
    }
    if (opt->root != NULL && !have_real) {
        /* Containment cannot be checked: fail closed rather than read a path that may lead
         * outside the root through a linked folder. */
        stg_scan_add_errno(r, STG_IO_ERROR, "the path could not be resolved against the scan root",
                           real_err);
        stg_report_finish(r);
        *out = r;
        return STG_OK;
    }
    if (opt->root != NULL) {
        stg_within in = stg_path_within(opt->root, path);
        if (in == STG_WITHIN_ROOT_ERROR || in == STG_WITHIN_PATH_ERROR) {
            stg_scan_add_errno(r, STG_IO_ERROR,
                               in == STG_WITHIN_ROOT_ERROR
                                   ? "the scan root could not be resolved"
                                   : "the path could not be resolved against the scan root",
                               errno);
            stg_report_finish(r);
            *out = r;
            return STG_OK;
        }
        if (in != STG_WITHIN_YES) {
            stg_report_add(r, STG_SYMLINK_SKIPPED, STG_NO_OFFSET,
                           "the path leads outside the scan root: not followed");
            stg_report_finish(r);
            *out = r;
            return STG_OK;
        }
    }
    if (is_link) {
        stg_report_set_blob(r, resolved);
    }
    const char *blob_hex = NULL;
    if (have_real && stg_path_is_blob(resolved)) {
        blob_hex = stg_path_base(resolved);
    }
    uint64_t bytes;
    stg_scan_file_into(path, path, false, blob_hex, opt, r, &bytes, NULL, NULL);
    stg_joblib_side_scan(path, opt, stg_scan_side_file, r);
    stg_sibling_scan(path, opt, NULL, r);
    stg_report_finish(r);
    *out = r;
    return STG_OK;
}

/* ------------------------------------------------------------------------------ a stream */

/* read(2) that a walk's cancel stops: with cancel, the input is polled every 250 ms until it has
 * bytes, so an idle pipe does not keep an interrupted walk waiting (the signal may have gone to
 * another thread); -1 with errno ECANCELED once *cancel is set. EINTR is retried. */
static ssize_t read_cancellable(int fd, void *buf, size_t len, const volatile int *cancel)
{
    for (;;) {
        if (cancel != NULL && *cancel != 0) {
            errno = ECANCELED;
            return -1;
        }
        if (cancel != NULL) {
            struct pollfd p = {fd, POLLIN, 0};
            int ready = poll(&p, 1, 250);
            if (ready == 0 || (ready < 0 && errno == EINTR)) {
                continue;
            }
        }
        ssize_t n = read(fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return n;
    }
}

/* Reads up to len bytes (fewer only at end of input). */
static ssize_t read_full(int fd, uint8_t *buf, size_t len, const volatile int *cancel)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = read_cancellable(fd, buf + done, len - done, cancel);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (n == 0) {
            break;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* The streaming validator keeps taking bytes after it found the content invalid (for the size
 * and digest): only these statuses mean it cannot go on. */
static bool stream_broken(stg_status st)
{
    return st != STG_OK && st != STG_E_INVALID;
}

/* Safetensors on a stream: the name hint says so, or the first chunk is safetensors by content
 * (stg_sniff_is_safetensors, which looks only at the header bytes present, so what it says of
 * the first chunk it says of the whole input). The streaming validator gives the answer
 * stg_validate_buffer gives on the whole input, in memory bounded by the header. */
static stg_status scan_fd_stream(int fd, const uint8_t *first, size_t first_len,
                                 const stg_scan_options *opt, stg_report **out, int *read_err,
                                 const volatile int *cancel)
{
    stg_stream_options so;
    stg_stream_options_default(&so);
    so.digest = want_digest(opt, NULL);
    so.expected_sha256 = opt->expected_sha256;
    stg_stream *s = NULL;
    stg_status st = stg_stream_new(&opt->limits, &so, &s);
    if (st != STG_OK) {
        return st;
    }
    st = stg_stream_feed(s, first, first_len);
    uint8_t *chunk = stg_mem_alloc(READ_CHUNK);
    if (chunk == NULL) {
        st = STG_E_NOMEM;
    }
    while (!stream_broken(st)) {
        ssize_t n = read_cancellable(fd, chunk, READ_CHUNK, cancel);
        if (n < 0) {
            *read_err = errno;
            break;
        }
        if (n == 0) {
            break;
        }
        st = stg_stream_feed(s, chunk, (size_t)n);
    }
    stg_mem_free(chunk);
    if (stream_broken(st)) {
        stg_stream_free(s);
        return st;
    }
    /* stg_stream_finish hands out a report (format safetensors) exactly when it returns OK. */
    stg_report *r = NULL;
    stg_status fin = stg_stream_finish(s, &r);
    stg_stream_free(s);
    if (fin != STG_OK) {
        return fin;
    }
    *out = r;
    return STG_OK;
}

/* Content that is not safetensors: buffered up to the cap, digested as it arrives. */
static stg_status scan_fd_buffered(int fd, uint8_t *first, size_t first_len, const char *name_hint,
                                   const stg_scan_options *opt, stg_report **out, int *read_err,
                                   const volatile int *cancel)
{
    uint64_t cap = buffer_cap(&opt->limits);
    stg_sha256 *h = NULL;
    if (stg_sha256_new(&h) != STG_OK) {
        stg_mem_free(first); /* ours from here on, as on every other path */
        return STG_E_CRYPTO;
    }
    uint8_t *buf = first;
    size_t len = first_len, alloc = first_len;
    uint64_t total = first_len;
    bool over = total > cap;
    stg_status st = stg_sha256_update(h, first, first_len);
    uint8_t *chunk = stg_mem_alloc(READ_CHUNK);
    if (chunk == NULL) {
        st = STG_E_NOMEM;
    }
    while (st == STG_OK) {
        ssize_t n = read_cancellable(fd, chunk, READ_CHUNK, cancel);
        if (n < 0) {
            *read_err = errno;
            break;
        }
        if (n == 0) {
            break;
        }
        size_t got = (size_t)n;
        st = stg_sha256_update(h, chunk, got);
        total += got;
        if (over || total > cap) {
            over = true; /* keep reading for the size and digest, keep nothing */
            continue;
        }
        if (len + got > alloc) {
            size_t want = alloc < READ_CHUNK ? 2 * READ_CHUNK : alloc * 2;
            if (want > cap) {
                want = (size_t)cap;
            }
            /* want >= len + got: doubling covers a chunk (got <= READ_CHUNK <= 2 x alloc or
             * 2 x READ_CHUNK), and cap >= total = len + got since nothing went over. */
            uint8_t *grown = stg_mem_realloc(buf, want);
            if (grown == NULL) {
                st = STG_E_NOMEM;
                break;
            }
            buf = grown;
            alloc = want;
        }
        memcpy(buf + len, chunk, got);
        len += got;
    }
    stg_mem_free(chunk);
    uint8_t digest[32];
    if (st == STG_OK) {
        st = stg_sha256_final(h, digest);
    }
    stg_sha256_free(h);
    if (st != STG_OK) {
        stg_mem_free(buf);
        return st;
    }
    stg_report *r = stg_report_new(&opt->limits);
    if (r == NULL) {
        stg_mem_free(buf);
        return STG_E_NOMEM;
    }
    if (over) {
        stg_report_limit(r, cap, "max_memory", cap);
        stg_report_set_format(r, stg_sniff(buf, len, name_hint));
        stg_report_set_size(r, total);
        if (want_digest(opt, NULL)) {
            apply_digest(r, digest, opt->expected_sha256, NULL);
        }
    } else {
        scan_bytes(buf, len, name_hint, NULL, NULL, digest, opt, r);
        stg_joblib_side_unresolved(r);
    }
    stg_mem_free(buf);
    *out = r;
    return STG_OK;
}

stg_status stg_scan_fd(int fd, const char *display, const char *name_hint,
                       const stg_scan_options *opt, stg_report **out)
{
    return stg_scan_fd_cancellable(fd, display, name_hint, opt, NULL, NULL, out);
}

stg_status stg_scan_fd_cancellable(int fd, const char *display, const char *name_hint,
                                   const stg_scan_options *opt, const volatile int *cancel,
                                   bool *cut, stg_report **out)
{
    if (cut != NULL) {
        *cut = false;
    }
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = NULL;
    stg_scan_options def;
    stg_status prep = scan_prepare(&opt, &def);
    if (prep != STG_OK) {
        return prep;
    }
    /* A first chunk decides the route; it is handed on, never read twice. */
    uint8_t *first = stg_mem_alloc(READ_CHUNK);
    if (first == NULL) {
        return STG_E_NOMEM;
    }
    int read_err = 0;
    ssize_t got = read_full(fd, first, READ_CHUNK, cancel);
    if (got < 0) {
        read_err = errno;
        got = 0;
    }
    size_t first_len = (size_t)got;
    stg_report *r = NULL;
    stg_status st;
    const stg_format_entry *named = stg_format_by_name(name_hint);
    bool by_name = named != NULL && named->streams;
    /* A Git LFS pointer (at most STG_LFS_POINTER_MAX bytes, so the first chunk holds all of it)
     * is recognised whatever the name says, as stg_check_buffer does for a file: it goes the
     * buffered way, never to the safetensors stream. */
    stg_lfs_pointer ptr;
    bool pointer = read_err == 0 && stg_sniff_lfs_pointer(first, first_len, &ptr);
    if (read_err == 0 && !pointer && (by_name || stg_sniff_is_safetensors(first, first_len))) {
        st = scan_fd_stream(fd, first, first_len, opt, &r, &read_err, cancel);
        stg_mem_free(first);
    } else if (read_err == 0) {
        st = scan_fd_buffered(fd, first, first_len, name_hint, opt, &r, &read_err, cancel);
    } else {
        stg_mem_free(first);
        r = stg_report_new(&opt->limits);
        st = r != NULL ? STG_OK : STG_E_NOMEM;
    }
    if (st != STG_OK) {
        return st;
    }
    if (read_err == ECANCELED && cut != NULL) {
        stg_report_free(r); /* half an input is no verdict */
        *cut = true;
        return STG_OK;
    }
    if (read_err != 0) {
        stg_scan_add_errno(r, STG_IO_ERROR, "the input could not be read", read_err);
    }
    stg_report_set_path(r, display);
    stg_report_finish(r);
    *out = r;
    return STG_OK;
}
