/* Scanning paths and trees (internal API of loader/scan.c; the public side is stg_scan_buffer,
 * stg_scan_path and stg_scan_options_default in include/stguard/stguard.h).
 *
 * The tree walk is what stg_scan_tree (the public door, in walk.c; the CLI's `scan` command runs
 * it) and the internal stg_walk below share: it turns command-line paths into records
 * (one per file, in a deterministic order), scans every distinct file once on worker threads and
 * hands the records back in that order. It decides nothing about output: records and progress go
 * to callbacks. Rules (docs/containers.md, documented for users in docs/cli.md):
 *   - a directory is walked recursively, entries sorted by their bytes (strcmp), depth first;
 *   - "-" is standard input (at most once);
 *   - each argument has a root: the folder `.../models--ORG--NAME` (or datasets--, spaces--)
 *     when the argument lies in a
 *     Hugging Face cache, else the argument itself. Symbolic links met during the walk are
 *     followed only when their resolved target lies inside the root's real path; a link outside,
 *     a link to a directory on the current path (cycle) or to a directory already walked is a
 *     symlink_skipped record; a dangling link is an io_error record;
 *   - without opt->scan.root, a folder's root is also its files' scan root: joblib side files,
 *     ONNX external data and index shards must resolve inside it (Hugging Face snapshot links
 *     lead into the repo folder's blobs/); a file named alone keeps its own folder as the limit;
 *   - FIFOs, devices and sockets are not_regular_file records and are never opened;
 *   - every distinct file (device, inode) is read once per name class: paths sharing it (Hugging
 *     Face snapshot links to one blob, hard links) share one result when their names say the
 *     same to the format rules (stg_name_hint_of; for an index also the same folder), else each
 *     is judged under its own name, so a path's verdict never depends on its siblings. In a Hugging
 *     Face root, a blob that some walked link points at is reported only under the link's path,
 *     with `blob` set; a file in a `blobs` folder whose name is 64 hex digits is checked against
 *     its SHA-256, one whose name is 40 hex digits against its Git blob id (digest_mismatch);
 *   - a hub root (a folder holding `models--*`, `datasets--*` or `spaces--*` folders) or any folder
 *     above one is a cache too: a blob in `<repo>/blobs` that a walked link leads to is reported
 *     only under the link's path;
 *   - folders met inside a tree that hold nothing to check are skipped and counted in the
 *     result, never records: `.git` (unless scan_git), a repo folder's `.no_exist` (empty
 *     markers huggingface_hub writes for files the Hub lacks) and `.locks` in a repo folder or
 *     hub root. A path named as an argument is never skipped;
 *   - in a Hugging Face cache, a partial download `blobs/<etag>.incomplete` that no walked link
 *     leads to is not read and counted (skipped_incomplete): huggingface_hub renames it to
 *     `blobs/<etag>` when it is complete and only then links a snapshot path to it, so nothing
 *     loads it. One a link leads to is scanned under the link's path like any blob;
 *   - include/exclude globs (fnmatch, no flags) are matched against the path relative to the
 *     argument and against the base name; an excluded directory is not descended; paths given
 *     on the command line are never filtered. */
#ifndef STG_LOADER_SCAN_H
#define STG_LOADER_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../validator/report.h"
#include "stguard/stguard.h"
#include "open_file.h" /* stg_scan_add_errno */
#include "path.h"      /* stg_path_base, stg_path_dir */
#include "within.h"    /* stg_path_inside */

typedef struct stg_walk_options {
    stg_scan_options scan;      /* limits, policy, digest; expected_sha256: one file only */
    const char *const *include; /* globs; a file is scanned when one matches (none: all) */
    size_t include_count;
    const char *const *exclude; /* globs; a match skips the file or directory */
    size_t exclude_count;
    unsigned threads;       /* worker threads, 1..STG_WALK_MAX_THREADS (0 means 1) */
    int stdin_fd;           /* read for the argument "-" (normally 0) */
    const char *stdin_name; /* shown instead of "-" and used as its name hint; NULL */
    uint32_t progress_ms;   /* period of progress calls while waiting (0: 250 ms) */
    /* When not NULL and *cancel becomes non-zero (e.g. from a signal handler), the walk hands
     * out no more records, stops the reads in progress (between two chunks of at most 16 MiB:
     * those files get no record) and returns STG_OK with result->interrupted set. Checked at
     * least every progress period. */
    const volatile int *cancel;
    /* A file to leave out of the walk (the CLI's own output file, so that
     * `stguard scan . > out.sarif` does not scan out.sarif): skip_set with its device and inode.
     * Such a file gets no record; result->skipped_self counts it. */
    bool skip_set;
    uint64_t skip_dev, skip_ino;
    /* Shard shard_index of shard_count (0 <= index < count; count 0: no sharding): only the
     * records whose path falls in this shard (FNV-1a of the path bytes, modulo count) are
     * handed out and scanned, so count walks with indexes 0..count-1 over the same paths cover
     * every record exactly once, on any machine. */
    uint32_t shard_index, shard_count;
    bool scan_git;     /* walk `.git` folders too (default false: skipped and counted) */
    bool follow_links; /* follow links inside the root (default true); false: symlink_skipped */
    bool hf_cache;     /* the Hugging Face rules above (default true); false: a plain tree */
} stg_walk_options;

#define STG_WALK_MAX_THREADS 256

typedef struct stg_walk_progress {
    uint64_t files_done;  /* records handed out so far */
    uint64_t files_total; /* records the walk found */
    uint64_t bytes_done;  /* bytes scanned so far (each distinct file once) */
    uint64_t bytes_total; /* sizes of the regular files the walk will read, as found */
    double seconds;       /* since the walk started */
    const char *current;  /* path of the record being waited for (valid during the call), or
                             NULL */
} stg_walk_progress;

typedef struct stg_walk_result {
    uint64_t files;            /* records handed out */
    uint64_t bytes;            /* bytes read and scanned, each distinct file once */
    uint64_t distinct_scanned; /* distinct files (and stdin) read */
    uint64_t records_total;    /* records the walk found (files handed out when not interrupted) */
    uint64_t skipped_self;     /* files left out because they are opt->skip_dev/skip_ino */
    bool interrupted;          /* *opt->cancel stopped the walk before every record was out */
    uint64_t skipped_git;      /* `.git` folders not walked */
    uint64_t skipped_no_exist; /* Hugging Face `.no_exist` folders not walked */
    uint64_t skipped_locks;    /* Hugging Face `.locks` folders not walked */
    uint64_t skipped_incomplete; /* Hugging Face `blobs/<etag>.incomplete` files not read */
} stg_walk_result;

/* Called once per record, in walk order, from the calling thread. r has its path (and blob)
 * set; it stays valid only during the call. */
typedef void (*stg_walk_record_fn)(void *user, const stg_report *r);
/* Called from the calling thread after each record and periodically while waiting. */
typedef void (*stg_walk_progress_fn)(void *user, const stg_walk_progress *p);

void stg_walk_options_default(stg_walk_options *out);

/* Walks and scans paths[0..count). Problems with a path (missing, unreadable, a link outside
 * the root) are records, not failures.
 * @return STG_OK; STG_E_BAD_ARG for misuse (no paths, "-" twice, expected_sha256 with other
 *         than exactly one scanned file, include/exclude/threads out of range: then no record
 *         was handed out); STG_E_NOMEM; STG_E_CRYPTO when OpenSSL fails while standard
 *         input is scanned (its bytes cannot be read again). */
stg_status stg_walk(const char *const *paths, size_t count, const stg_walk_options *opt,
                    stg_walk_record_fn on_record, stg_walk_progress_fn on_progress, void *user,
                    stg_walk_result *result);

/* Scans the content read from fd until end of file (standard input, a pipe). A Git LFS pointer
 * is lfs_pointer (format git-lfs-pointer) whatever the name hint, as a file is. Other content
 * that is safetensors (by the name hint or by its first bytes) goes through the streaming
 * validator,
 * so memory stays bounded whatever its size; other content is buffered up to the memory limit
 * (max_memory, or 2 x max_header_len + 8 MiB when 0) and scanned as a buffer; past that it is
 * limit_exceeded (limit max_memory) while the rest is still read for size and digest.
 * display becomes the report's path; name_hint may be NULL. A read error is io_error. */
stg_status stg_scan_fd(int fd, const char *display, const char *name_hint,
                       const stg_scan_options *opt, stg_report **out);
/* The same, stopped by a walk's cancel (NULL: never): once *cancel is set the reads stop (an idle
 * pipe is polled every 250 ms), *cut becomes true and *out stays NULL (half an input is no
 * verdict); the call still returns STG_OK. */
stg_status stg_scan_fd_cancellable(int fd, const char *display, const char *name_hint,
                                   const stg_scan_options *opt, const volatile int *cancel,
                                   bool *cut, stg_report **out);

/* true when name (a base name) is a Hugging Face blob name: 64 hex digits (a Git LFS file, named
 * by its SHA-256) or 40 (a file kept in Git, named by its Git blob id, the SHA-1 of
 * "blob <size>\0" + content). */
bool stg_scan_is_blob_name(const char *name);

/* ---- shared by scan.c and walk.c (loader-internal) ---- */

/* true when path's last component is a blob name (40 or 64 hex) inside a folder named `blobs`. */
bool stg_path_is_blob(const char *path);
/* true when path is a Hugging Face partial download: a blob name + ".incomplete" inside a folder
 * named `blobs` (huggingface_hub downloads into `blobs/<etag>.incomplete` and renames it to
 * `blobs/<etag>` when it is complete; only then does a snapshot link lead to it). */
bool stg_path_is_incomplete_blob(const char *path);
/* A finished report holding one finding without offset; NULL when memory ran out. */
stg_report *stg_scan_fixed_report(const stg_limits *lim, stg_code code, stg_severity sev,
                                  const char *message);
/* Scans one regular file into r (not finished): open_path is opened (without following a final
 * link when nofollow), checked with fstat before and after, read or mapped, digested; hint is the
 * name hint and, for `*.safetensors.index.json`, the path next to which shards are looked up;
 * blob_hex (or NULL) is the digest a blob's name promises. *bytes gets the size read. progress
 * (or NULL) gets the bytes read added as they are read (atomically: another thread may show it).
 * cancel (or NULL): once *cancel is non-zero the reads stop between two chunks (16 MiB at most)
 * and the call returns false: r is then no verdict, to be dropped; true otherwise. */
bool stg_scan_file_into(const char *open_path, const char *hint, bool nofollow,
                        const char *blob_hex, const stg_scan_options *opt, stg_report *r,
                        uint64_t *bytes, uint64_t *progress, const volatile int *cancel);
/* A joblib side file (stg_side_scan_fn): stg_scan_file_into of the resolved path, opened
 * without following links, with no name hint. */
void stg_scan_side_file(const char *resolved, const stg_scan_options *opt, stg_report *sub);

#endif
