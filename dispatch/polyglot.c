/* Polyglot checks (see polyglot.h). */
#include "polyglot.h"

#include "../parser/tar.h"
#include "../parser/zip.h"
#include "containers.h"
#include "../validator/pickle_scan.h"

/* Reports an archive found besides the primary format; scans its members when asked. */
static void report_zip(const stg_zip *z, bool scan, const char *primary, stg_check_ctx *ctx)
{
    stg_report_add(ctx->report, STG_POLYGLOT_ZIP, stg_zip_first_byte(z),
                   "a zip archive (%llu entries) ends this %s file: zip readers see it%s",
                   (unsigned long long)z->entry_count, primary,
                   scan ? "; its members were scanned" : "");
    if (scan) {
        stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
        stg_archive_facts facts; /* no label: the primary format keeps its own */
        stg_containers_scan_zip(z, ctx, &res, &facts);
    }
}

void stg_polyglot_check_tar(const uint8_t *buf, size_t len, const char *primary, stg_check_ctx *ctx)
{
    if (!stg_tar_opens(buf, len)) {
        return;
    }
    const stg_limits *lim = ctx->lim;
    bool strict = lim->profile == STG_PROFILE_STRICT;
    stg_report_add(ctx->report, STG_POLYGLOT_TAR, 0,
                   "the first 512 bytes are also a tar header tarfile accepts: torch.load reads "
                   "this %s file as a tar archive%s",
                   primary, strict ? "; its members were scanned" : "");
    if (strict) {
        stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
        stg_archive_facts facts; /* no label: the primary format keeps its own */
        stg_containers_scan_tar(buf, len, ctx, &res, &facts);
    }
}

void stg_polyglot_check_zip_tar(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                                stg_member_result *res)
{
    if (len < 4 || buf[0] != 'P' || buf[1] != 'K' || buf[2] != 5 || buf[3] != 6 ||
        !stg_tar_opens(buf, len)) {
        return;
    }
    stg_report_add(ctx->report, STG_POLYGLOT_TAR, 0,
                   "the file starts with a zip end record (numpy.load and zipfile read a zip) "
                   "that is also a tar header tarfile accepts: torch.load, which takes the zip "
                   "route only for PK\\3\\4, reads a tar archive; its members were scanned");
    stg_member_result tar = {STG_FMT_UNKNOWN, false, 0};
    stg_archive_facts facts; /* no label: the file keeps its zip label */
    stg_containers_scan_tar(buf, len, ctx, &tar, &facts);
    res->pickle_based = res->pickle_based || tar.pickle_based;
    res->inflated += tar.inflated;
}

void stg_polyglot_check_safetensors(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    const stg_limits *lim = ctx->lim;
    bool strict = lim->profile == STG_PROFILE_STRICT;
    size_t stop_end = 0;
    bool oom = false;
    bool pickle = stg_pickle_sniff_file(buf, len, len, &stop_end, NULL, NULL, &oom);
    if (oom) {
        stg_report_oom(ctx->report);
    }
    if (pickle) {
        stg_report_add(ctx->report, STG_POLYGLOT_PICKLE, 0,
                       "the first %zu bytes are also a pickle that runs to STOP", stop_end);
        if (strict) {
            stg_check_pickles(buf, stop_end, 0, STG_PICKLE_RAW, ctx);
        }
    }
    stg_zip z;
    stg_zip_error err;
    if (stg_zip_open(&z, buf, len, &err) == STG_ZIPR_OK && z.entry_count > 0) {
        report_zip(&z, strict, "safetensors", ctx);
    }
    stg_polyglot_check_tar(buf, len, "safetensors", ctx);
}

void stg_polyglot_check_pickle(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    stg_zip z;
    stg_zip_error err;
    if (stg_zip_open(&z, buf, len, &err) == STG_ZIPR_OK && z.entry_count > 0) {
        report_zip(&z, true, "pickle", ctx);
    }
}
