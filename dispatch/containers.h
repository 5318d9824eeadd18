/* Archives and compressed streams as seen by the dispatcher (internal): zip (torch-zip,
 * numpy-zip), tar (PyTorch 0.1 torch-tar), gzip/zlib streams. Members go back through
 * ctx->scan (validator/ctx.h, depth-capped); findings about an entry itself (zip_header_mismatch,
 * zip_encrypted_flag, zip_bomb, zip_malformed, container_malformed) carry `member` and give as
 * offset the entry's header offset in the enclosing buffer (equal to member_offset). */
#ifndef STG_DISPATCH_CONTAINERS_H
#define STG_DISPATCH_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/inflate.h"
#include "../parser/zip.h"
#include "../validator/ctx.h"

/* What an archive scan found: the table (formats.c) labels the archive from it, by the same
 * rules for a full scan and for a quick label. */
typedef struct stg_archive_facts {
    bool pickle;    /* zip: a member was scanned as a pickle (or, quick: is named or looks so) */
    bool all_npy;   /* zip: entries, every one named *.npy */
    bool torch_tar; /* tar: torch's legacy_load finds its pickle and storages members */
    bool keras;     /* zip: the root member config.json is a Keras model config (saving_lib) */
} stg_archive_facts;

/* Inflate budget: ctx->lim->max_inflate_bytes is what the subtree being scanned may still
 * inflate in total. A container passes each member the part left after its own inflating (a
 * copy of the limits with max_inflate_bytes lowered), and adds back what the member reports in
 * `inflated`, so nested archives (42.zip) cannot multiply the work: one check inflates at most
 * max_inflate_bytes in all. */

/* Scans an opened zip: every entry cross-checked, data inflated with caps, every member whose
 * content (or name, *.pkl / *.pickle) is a pickle scanned as one. Sets facts->pickle when a
 * pickle member was found and facts->all_npy when every member is a .npy. res->pickle_based is
 * set when any member was pickle-based; res->inflated grows by what was inflated. */
void stg_containers_scan_zip(const stg_zip *z, stg_check_ctx *ctx, stg_member_result *res,
                             stg_archive_facts *facts);

/* Opens buf with each zip reader a loader uses (parser/zip.h: zipfile for numpy.load and
 * Python code, miniz for torch.load) and scans every reading one of them would load: once when
 * they agree; both, after a zip_ambiguous error, when they open different directories; the one
 * that opens, after a zip_malformed error saying what the other does, when only one opens. When
 * neither opens: with starts_as_zip (PK\3\4 or PK\5\6 at byte 0, so both loaders take the zip
 * route) zip_malformed and the local header walk below; else nothing is reported and false is
 * returned (not a zip). Returns true when it reported or scanned; *facts gets what the readings
 * found together (pickle in either, every member a .npy in both). */
bool stg_containers_scan_zip_readers(const uint8_t *buf, size_t len, bool starts_as_zip,
                                     stg_check_ctx *ctx, stg_member_result *res,
                                     stg_archive_facts *facts);

/* Fallback for a buffer that starts with a local header but has no usable central directory
 * (already reported as zip_malformed): walks the local headers from offset 0 and scans each
 * member's data the same way, so a payload is reported even where no loader would reach it
 * (research/pickle-scanners.md class 6: never clean on a parser failure). */
void stg_containers_scan_zip_local(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                                   stg_member_result *res, stg_archive_facts *facts);

/* Scans a tar archive (buf starts with a tar header). Sets facts->torch_tar for the PyTorch 0.1
 * layout. */
void stg_containers_scan_tar(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                             stg_member_result *res, stg_archive_facts *facts);

/* Decompresses a gzip, zlib, xz/lzma-alone (STG_INFLATE_LZMA) or bzip2 stream with the caps
 * and scans the result as a member named "(decompressed)". label names the compression in
 * messages ("gzip", "xz", "lzma", "bzip2"...). Returns the inner result; *recognised is false
 * when a header turned out not to start a stream at all (the caller then treats the bytes as
 * unknown). */
stg_member_result stg_containers_scan_compressed(const uint8_t *buf, size_t len,
                                                 stg_inflate_format fmt, const char *label,
                                                 stg_check_ctx *ctx, bool *recognised);

/* Scans a ZF file: its zlib stream inflated with the caps, the result scanned as a member
 * named "(decompressed)" (the main pickle, or the raw array bytes of a side "*.npy.z" file). */
stg_member_result stg_containers_scan_zfile(const uint8_t *buf, size_t len, stg_check_ctx *ctx);

/* Scans a PyTorch 0.1 `storages` or `tensors` member: every pickle with STG_PICKLE_MEMBER, the
 * raw records between them skipped by their sizes. Whatever cannot be framed that way is walked
 * as a pickle stream (fails closed: it is reported, never skipped). */
void stg_containers_scan_torch01(const uint8_t *buf, size_t len, bool tensors, stg_check_ctx *ctx);

#endif
