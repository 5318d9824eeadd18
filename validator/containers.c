/* Archives and compressed streams (see containers.h). Two passes over a zip: the first checks
 * the directory as a whole (entries overlapping each other), the second cross-checks and scans
 * each entry. Inflated bytes are capped per member (max_inflate_bytes, max_inflate_ratio) and
 * per archive in total (max_inflate_bytes), so overlapping entries cannot multiply the work. */
#include "containers.h"

#include <string.h>

#include "../parser/inflate.h"
#include "../parser/mem.h"
#include "../parser/tar.h"
#include "../parser/util.h"
#include "pickle_scan.h"
#include "sniff.h"

/* Adds a finding about one entry: offset = member_offset = the entry's header offset. */
static void entry_finding(stg_check_ctx *ctx, stg_code code, stg_severity sev, uint64_t offset,
                          const char *member_path, const char *message)
{
    stg_finding *f = stg_report_add(ctx->report, code, sev, offset, "%s", message);
    stg_report_set_member(ctx->report, f, member_path, offset);
}

static bool pickle_name(const char *name)
{
    return stg_name_hint_has_suffix(name, ".pkl") || stg_name_hint_has_suffix(name, ".pickle");
}

/* Pass 1: every entry's [local header, end of data) range; overlapping ones are zip_malformed
 * (they let one compressed run inflate many times, and two readers see different members). */
static void check_overlaps(const stg_zip *zin, stg_check_ctx *ctx)
{
    stg_zip z = *zin;
    /* Every central header takes at least 46 bytes: zipfile's reading (which ignores the count)
     * yields at most cd_size / 46 entries, miniz's its count, which its open checked against
     * cd_size / 46; cd_size <= buffer length. */
    size_t cap = (size_t)(z.cd_size / 46);
    if (cap == 0) {
        return;
    }
    stg_zip_range *ranges = stg_mem_alloc(cap * sizeof *ranges);
    if (ranges == NULL) {
        ctx->report->out_of_memory = true;
        return;
    }
    size_t n = 0;
    stg_zip_entry e;
    stg_zip_error err;
    for (;;) {
        stg_zip_result zr = stg_zip_next(&z, &e, &err);
        if (zr == STG_ZIPR_END || zr == STG_ZIPR_MALFORMED) {
            break;
        }
        if (zr == STG_ZIPR_OK && n < cap) {
            ranges[n].begin = e.local_offset;
            ranges[n].end = e.data_offset + e.data_len;
            ranges[n].index = e.index;
            n++;
        }
    }
    size_t first = 0;
    size_t overlaps = stg_zip_sort_overlaps(ranges, n, &first);
    if (overlaps > 0) {
        stg_report_add(ctx->report, STG_ZIP_MALFORMED, STG_SEV_ERROR, ranges[first].begin,
                       "%zu zip entries overlap an earlier entry's bytes", overlaps);
    }
    stg_mem_free(ranges);
}

typedef struct zip_scan {
    stg_check_ctx *ctx;
    uint64_t inflated_total; /* over the whole archive */
    bool budget_spent;
    bool any_pickle;
    bool all_npy;
} zip_scan;

/* One reading of an entry's data (the central directory's method and sizes, or the local
 * header's when they differ). */
static void scan_entry_data(zip_scan *zs, const stg_zip *z, const stg_zip_entry *e,
                            const char *name, const char *path, uint16_t method, uint64_t comp_size,
                            uint64_t uncomp_size, bool force_pickle)
{
    stg_check_ctx *ctx = zs->ctx;
    const stg_limits *lim = ctx->lim;
    if (comp_size > z->len || e->data_offset > z->len - comp_size) {
        entry_finding(ctx, STG_ZIP_MALFORMED, STG_SEV_ERROR, e->local_offset, path,
                      "member data runs past the end of the file");
        return;
    }
    const uint8_t *data = z->buf + e->data_offset;
    size_t data_len = (size_t)comp_size;
    stg_inflate_out out;
    memset(&out, 0, sizeof out);
    if (method == 8) {
        if (zs->budget_spent) {
            return; /* zip_bomb already reported for this archive */
        }
        uint64_t left = lim->max_inflate_bytes - zs->inflated_total;
        stg_inflate_result ir = stg_inflate(data, data_len, STG_INFLATE_RAW, left,
                                            lim->max_inflate_ratio, &out);
        zs->inflated_total += out.len;
        switch (ir) {
        case STG_INFLATE_OK:
            if ((uint64_t)out.len != uncomp_size) {
                entry_finding(ctx, STG_ZIP_MALFORMED, STG_SEV_ERROR, e->local_offset, path,
                              "inflated size differs from the declared size");
            }
            break;
        case STG_INFLATE_TOO_BIG:
        case STG_INFLATE_RATIO:
            entry_finding(ctx, STG_ZIP_BOMB, STG_SEV_ERROR, e->local_offset, path,
                          ir == STG_INFLATE_RATIO
                              ? "member inflates past the ratio cap: the rest is not scanned"
                              : "member inflates past the size cap: the rest is not scanned");
            if (zs->inflated_total >= lim->max_inflate_bytes) {
                zs->budget_spent = true;
            }
            break;
        case STG_INFLATE_CORRUPT:
        case STG_INFLATE_TRUNCATED:
            entry_finding(ctx, STG_ZIP_MALFORMED, STG_SEV_ERROR, e->local_offset, path,
                          ir == STG_INFLATE_CORRUPT ? "invalid deflate data in member"
                                                    : "deflate data of member truncated");
            break;
        case STG_INFLATE_NOMEM:
            ctx->report->out_of_memory = true;
            stg_inflate_free(&out);
            return;
        case STG_INFLATE_UNAVAILABLE:
            entry_finding(ctx, STG_FORMAT_UNSCANNABLE, STG_SEV_ERROR, e->local_offset, path,
                          "deflated member, but this build has no zlib: not scanned");
            return;
        }
        data = out.data;
        data_len = out.len;
    } else if (method != 0) {
        stg_finding *f = stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, STG_SEV_ERROR,
                                        e->local_offset,
                                        "zip compression method %u cannot be opened: not "
                                        "scanned",
                                        (unsigned)method);
        stg_report_set_member(ctx->report, f, path, e->local_offset);
        return;
    }
    /* What was produced is scanned even after a failure: a truncated pickle still shows the
     * globals a loader would import before it fails. data is NULL only when nothing was
     * produced (a cap of 0 left). */
    uint64_t budget = lim->max_inflate_bytes - zs->inflated_total;
    stg_member_result mr = stg_check_member_ex(
        data != NULL ? data : (const uint8_t *)"", data_len, name, e->local_offset,
        force_pickle ? STG_MEMBER_PICKLE : STG_MEMBER_ARCHIVE, budget, ctx);
    zs->any_pickle = zs->any_pickle || mr.pickle_based;
    zs->inflated_total += mr.inflated <= budget ? mr.inflated : budget;
    stg_inflate_free(&out);
}

static void scan_entry(zip_scan *zs, const stg_zip *z, const stg_zip_entry *e)
{
    stg_check_ctx *ctx = zs->ctx;
    char *name = stg_mem_strndup((const char *)e->name, e->name_len);
    char *local = stg_mem_strndup((const char *)e->local_name, e->local_name_len);
    char *path = name != NULL ? stg_check_member_path(ctx, name) : NULL;
    if (name == NULL || local == NULL || path == NULL) {
        ctx->report->out_of_memory = true;
        goto done;
    }
    zs->all_npy = zs->all_npy && stg_name_hint_has_suffix(name, ".npy");
    unsigned flags = (unsigned)e->flags | (unsigned)e->local_flags;
    if ((flags & STG_ZIP_FLAGS_ENCRYPTED) != 0) {
        stg_finding *f = stg_report_add(ctx->report, STG_ZIP_ENCRYPTED_FLAG, STG_SEV_WARNING,
                                        e->local_offset,
                                        "general-purpose flags 0x%04x (encrypted/patched) "
                                        "ignored: the data is read as it is",
                                        flags & STG_ZIP_FLAGS_ENCRYPTED);
        stg_report_set_member(ctx->report, f, path, e->local_offset);
    }
    if (e->mismatch != 0) {
        stg_finding *f = stg_report_add(
            ctx->report, STG_ZIP_HEADER_MISMATCH, STG_SEV_ERROR, e->local_offset,
            "local header and central directory disagree on:%s%s%s%s",
            (e->mismatch & STG_ZIP_MISMATCH_NAME) != 0 ? " name" : "",
            (e->mismatch & STG_ZIP_MISMATCH_SIZES) != 0 ? " sizes" : "",
            (e->mismatch & STG_ZIP_MISMATCH_METHOD) != 0 ? " method" : "",
            (e->mismatch & STG_ZIP_MISMATCH_FLAGS) != 0 ? " flags" : "");
        stg_report_set_member(ctx->report, f, path, e->local_offset);
    }
    /* A name either header gives that says pickle makes the member a pickle for us: whichever
     * header a loader trusts, it will unpickle these bytes. */
    bool force_pickle = pickle_name(name) || pickle_name(local);
    scan_entry_data(zs, z, e, name, path, e->method, e->comp_size, e->uncomp_size, force_pickle);
    bool other_reading = (e->mismatch & STG_ZIP_MISMATCH_METHOD) != 0 ||
                         ((e->mismatch & STG_ZIP_MISMATCH_SIZES) != 0 &&
                          e->local_comp_size != e->comp_size);
    if (other_reading && e->local_sizes_known) {
        /* Streaming readers trust the local header: scan its reading too, under its name. */
        char *lpath = stg_check_member_path(ctx, local);
        if (lpath == NULL) {
            ctx->report->out_of_memory = true;
            goto done;
        }
        scan_entry_data(zs, z, e, local, lpath, e->local_method, e->local_comp_size,
                        e->local_uncomp_size, force_pickle);
        stg_mem_free(lpath);
    }
done:
    stg_mem_free(name);
    stg_mem_free(local);
    stg_mem_free(path);
}

stg_format stg_containers_scan_zip(const stg_zip *zin, stg_check_ctx *ctx, stg_member_result *res)
{
    check_overlaps(zin, ctx);
    stg_zip z = *zin;
    zip_scan zs;
    memset(&zs, 0, sizeof zs);
    zs.ctx = ctx;
    zs.all_npy = z.entry_count > 0;
    stg_zip_entry e;
    stg_zip_error err;
    for (;;) {
        stg_zip_result zr = stg_zip_next(&z, &e, &err);
        if (zr == STG_ZIPR_END) {
            break;
        }
        if (zr == STG_ZIPR_MALFORMED) {
            stg_report_add(ctx->report, STG_ZIP_MALFORMED, STG_SEV_ERROR, err.offset, "%s",
                           err.what);
            break;
        }
        if (zr == STG_ZIPR_ENTRY_BAD) {
            char *name = stg_mem_strndup((const char *)e.name, e.name_len);
            char *path = name != NULL ? stg_check_member_path(ctx, name) : NULL;
            if (path == NULL) {
                ctx->report->out_of_memory = true;
            }
            stg_finding *f = stg_report_add(ctx->report, STG_ZIP_MALFORMED, STG_SEV_ERROR,
                                            err.offset, "%s", err.what);
            stg_report_set_member(ctx->report, f, path, err.offset);
            stg_mem_free(name);
            stg_mem_free(path);
            zs.all_npy = false;
            continue;
        }
        scan_entry(&zs, &z, &e);
    }
    res->inflated += zs.inflated_total;
    if (zs.any_pickle) {
        res->pickle_based = true;
        return STG_FMT_TORCH_ZIP;
    }
    return zs.all_npy ? STG_FMT_NUMPY_ZIP : STG_FMT_ZIP;
}

stg_format stg_containers_scan_zip_local(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                                         stg_member_result *res)
{
    stg_zip z;
    memset(&z, 0, sizeof z);
    z.buf = buf;
    z.len = len;
    z.cd_start = len;
    zip_scan zs;
    memset(&zs, 0, sizeof zs);
    zs.ctx = ctx;
    uint64_t pos = 0;
    stg_zip_entry e;
    stg_zip_error err;
    for (;;) {
        stg_zip_result zr = stg_zip_local_next(buf, len, &pos, &e, &err);
        if (zr == STG_ZIPR_OK) {
            scan_entry(&zs, &z, &e);
            continue;
        }
        if (zr == STG_ZIPR_ENTRY_BAD) {
            stg_report_add(ctx->report, STG_ZIP_MALFORMED, STG_SEV_ERROR, err.offset,
                           "local header walk stopped: %s", err.what);
        }
        break;
    }
    res->inflated += zs.inflated_total;
    if (zs.any_pickle) {
        res->pickle_based = true;
        return STG_FMT_TORCH_ZIP;
    }
    return STG_FMT_ZIP;
}

/* The loaders known to use each reader, for messages. */
static const char *reader_users(stg_zip_reader reader)
{
    return reader == STG_ZIP_READER_MINIZ ? "torch.load" : "numpy.load";
}

/* Which label wins when two readings are scanned: the one that needs the most care. */
static stg_format merge_zip_format(stg_format a, stg_format b)
{
    if (a == STG_FMT_TORCH_ZIP || b == STG_FMT_TORCH_ZIP) {
        return STG_FMT_TORCH_ZIP;
    }
    return a == STG_FMT_NUMPY_ZIP && b == STG_FMT_NUMPY_ZIP ? STG_FMT_NUMPY_ZIP : STG_FMT_ZIP;
}

bool stg_containers_scan_zip_readers(const uint8_t *buf, size_t len, bool starts_as_zip,
                                     stg_check_ctx *ctx, stg_member_result *res, stg_format *format)
{
    stg_zip z[STG_ZIP_READERS];
    stg_zip_error err[STG_ZIP_READERS];
    stg_zip_result zr[STG_ZIP_READERS];
    for (int r = 0; r < STG_ZIP_READERS; r++) {
        zr[r] = stg_zip_open_as(&z[r], buf, len, (stg_zip_reader)r, &err[r]);
    }
    bool opened[STG_ZIP_READERS] = {zr[0] == STG_ZIPR_OK, zr[1] == STG_ZIPR_OK};
    if (!opened[0] && !opened[1]) {
        if (!starts_as_zip) {
            return false;
        }
        /* Starts like a zip but no loader can open it: fails closed, and the local headers are
         * walked so a payload in them is still reported. */
        bool any = false;
        for (int r = 0; r < STG_ZIP_READERS; r++) {
            if (zr[r] == STG_ZIPR_MALFORMED) {
                stg_report_add(ctx->report, STG_ZIP_MALFORMED, STG_SEV_ERROR, err[r].offset,
                               "%s (%s) refuses the archive: %s",
                               stg_zip_reader_name((stg_zip_reader)r),
                               reader_users((stg_zip_reader)r), err[r].what);
                any = true;
            }
        }
        if (!any) {
            stg_report_add(ctx->report, STG_ZIP_MALFORMED, STG_SEV_ERROR, 0,
                           "zip local header but no end of central directory");
        }
        *format = stg_containers_scan_zip_local(buf, len, ctx, res);
        return true;
    }
    if (opened[0] && opened[1] && stg_zip_same_reading(&z[0], &z[1])) {
        *format = stg_containers_scan_zip(&z[0], ctx, res);
        return true;
    }
    if (opened[0] && opened[1]) {
        const stg_zip *zf = &z[STG_ZIP_READER_ZIPFILE], *mz = &z[STG_ZIP_READER_MINIZ];
        stg_report_add(ctx->report, STG_ZIP_AMBIGUOUS, STG_SEV_ERROR, mz->cd_start,
                       "torch.load (miniz) reads %llu entries from the central directory at "
                       "%llu, zipfile (numpy.load) %llu entries from %llu (%llu bytes "
                       "prepended): both readings scanned",
                       (unsigned long long)mz->entry_count, (unsigned long long)mz->cd_start,
                       (unsigned long long)zf->entry_count, (unsigned long long)zf->cd_start,
                       (unsigned long long)zf->base);
        stg_format a = stg_containers_scan_zip(zf, ctx, res);
        *format = merge_zip_format(a, stg_containers_scan_zip(mz, ctx, res));
        return true;
    }
    int good = opened[0] ? 0 : 1, bad = 1 - good;
    /* A reader that refuses a file that does not start as a zip is no loader's route to it
     * (torch.load and numpy.load take the zip route only for PK at byte 0): only the reading
     * that opens matters then. */
    if (starts_as_zip) {
        const char *why = zr[bad] == STG_ZIPR_MALFORMED ? err[bad].what
                                                        : "it finds no end record it can use";
        stg_report_add(ctx->report, STG_ZIP_MALFORMED, STG_SEV_ERROR,
                       zr[bad] == STG_ZIPR_MALFORMED ? err[bad].offset : z[good].eocd_offset,
                       "%s (%s) refuses the archive: %s; %s (%s) reads the directory at %llu: "
                       "scanned",
                       stg_zip_reader_name((stg_zip_reader)bad), reader_users((stg_zip_reader)bad),
                       why, stg_zip_reader_name((stg_zip_reader)good),
                       reader_users((stg_zip_reader)good), (unsigned long long)z[good].cd_start);
    }
    *format = stg_containers_scan_zip(&z[good], ctx, res);
    return true;
}

/* ---------------------------------------------------------------------------------- tar */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static bool is_torch_tar_member(const char *name)
{
    const char *b = base_name(name);
    return strcmp(b, "sys_info") == 0 || strcmp(b, "pickle") == 0 || strcmp(b, "storages") == 0 ||
           strcmp(b, "tensors") == 0;
}

static bool is_regular(char type)
{
    return type == '0' || type == '\0' || type == '7';
}

stg_format stg_containers_scan_tar(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                                   stg_member_result *res)
{
    /* Pass 1: the PyTorch 0.1 layout has members named pickle and storages (its loader reads
     * sys_info, storages, tensors and pickle by name). */
    stg_tar t;
    stg_tar_entry *e = stg_mem_alloc(sizeof *e);
    if (e == NULL) {
        ctx->report->out_of_memory = true;
        return STG_FMT_TAR;
    }
    uint64_t err_offset = 0;
    const char *why = NULL;
    bool has_pickle = false, has_storages = false;
    stg_tar_init(&t, buf, len);
    while (stg_tar_next(&t, e, &err_offset, &why) == STG_TARR_OK) {
        const char *b = base_name(e->name);
        has_pickle = has_pickle || (is_regular(e->type) && strcmp(b, "pickle") == 0);
        has_storages = has_storages || (is_regular(e->type) && strcmp(b, "storages") == 0);
    }
    bool torch = has_pickle && has_storages;
    bool any_pickle = false;
    uint64_t inflated = 0, limit = ctx->lim->max_inflate_bytes;
    stg_tar_init(&t, buf, len);
    for (;;) {
        stg_tar_result tr = stg_tar_next(&t, e, &err_offset, &why);
        if (tr == STG_TARR_END) {
            break;
        }
        if (tr == STG_TARR_MALFORMED) {
            stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, STG_SEV_ERROR, err_offset, "%s",
                           why);
            break;
        }
        if (!is_regular(e->type)) {
            continue;
        }
        stg_member_mode mode = STG_MEMBER_ARCHIVE;
        if (torch && is_torch_tar_member(e->name)) {
            const char *b = base_name(e->name);
            mode = strcmp(b, "storages") == 0  ? STG_MEMBER_TORCH01_STORAGES
                   : strcmp(b, "tensors") == 0 ? STG_MEMBER_TORCH01_TENSORS
                                               : STG_MEMBER_PICKLE;
        }
        stg_member_result mr = stg_check_member_ex(buf + e->data_offset, (size_t)e->size, e->name,
                                                   e->header_offset, mode, limit - inflated, ctx);
        any_pickle = any_pickle || mr.pickle_based;
        inflated += mr.inflated <= limit - inflated ? mr.inflated : limit - inflated;
    }
    stg_mem_free(e);
    if (any_pickle) {
        res->pickle_based = true;
    }
    res->inflated += inflated;
    return torch ? STG_FMT_TORCH_TAR : STG_FMT_TAR;
}

/* Element sizes a 0.1 storage can have, most common first: the record's length is
 * count x size, and the right size is the one after which the next pickle (or the end) follows. */
static const uint64_t torch01_elem_sizes[] = {4, 8, 2, 1, 16};

void stg_containers_scan_torch01(const uint8_t *buf, size_t len, bool tensors, stg_check_ctx *ctx)
{
    size_t pos = 0;
    bool first = true;
    while (pos < len) {
        size_t stop_end = 0;
        if (!stg_pickle_sniff(buf + pos, len - pos, &stop_end, &ctx->report->out_of_memory) ||
            stop_end == 0) {
            break;
        }
        stg_check_pickles(buf + pos, stop_end, pos, STG_PICKLE_MEMBER, ctx);
        pos += stop_end;
        if (first) {
            first = false; /* the count */
            continue;
        }
        size_t left = len - pos;
        if (tensors) {
            if (left < 8) {
                break;
            }
            uint32_t ndim = stg_le32(buf + pos);
            uint64_t skip = 8 + 16 * (uint64_t)ndim + 8;
            if (ndim > 64 || skip > left) {
                break;
            }
            pos += (size_t)skip;
            continue;
        }
        if (left < 8) {
            break;
        }
        uint64_t count = stg_le64(buf + pos);
        size_t data = pos + 8;
        bool framed = false;
        for (size_t i = 0; i < sizeof torch01_elem_sizes / sizeof torch01_elem_sizes[0]; i++) {
            uint64_t bytes;
            size_t unused;
            if (stg_mul_u64(count, torch01_elem_sizes[i], &bytes) || bytes > len - data) {
                continue;
            }
            size_t next = data + (size_t)bytes;
            if (next == len ||
                stg_pickle_sniff(buf + next, len - next, &unused, &ctx->report->out_of_memory)) {
                pos = next;
                framed = true;
                break;
            }
        }
        if (!framed) {
            break;
        }
    }
    if (pos < len) {
        /* Not framed as the format says: walk the rest as pickles, so nothing goes unseen. */
        stg_check_pickles(buf + pos, len - pos, pos, STG_PICKLE_RAW, ctx);
    }
}

/* ------------------------------------------------------------------- compressed streams */

stg_member_result stg_containers_scan_compressed(const uint8_t *buf, size_t len, bool gzip,
                                                 stg_check_ctx *ctx, bool *recognised)
{
    stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
    const stg_limits *lim = ctx->lim;
    const char *label = gzip ? "gzip" : "zlib";
    stg_inflate_out out;
    stg_inflate_result ir = stg_inflate(buf, len, gzip ? STG_INFLATE_GZIP : STG_INFLATE_ZLIB,
                                        lim->max_inflate_bytes, lim->max_inflate_ratio, &out);
    *recognised = true;
    switch (ir) {
    case STG_INFLATE_OK:
        if (out.consumed < len) {
            stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, STG_SEV_ERROR,
                           (uint64_t)out.consumed, "%zu bytes follow the %s stream",
                           len - out.consumed, label);
        }
        break;
    case STG_INFLATE_TOO_BIG:
    case STG_INFLATE_RATIO:
        stg_report_add(ctx->report, STG_ZIP_BOMB, STG_SEV_ERROR, 0,
                       "%s stream inflates past the %s cap: the rest is not scanned", label,
                       ir == STG_INFLATE_RATIO ? "ratio" : "size");
        break;
    case STG_INFLATE_CORRUPT:
    case STG_INFLATE_TRUNCATED:
        if (!gzip && out.len == 0) {
            /* Two header bytes matched by chance: not a zlib stream at all. */
            *recognised = false;
            stg_inflate_free(&out);
            return res;
        }
        stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, STG_SEV_ERROR,
                       (uint64_t)out.error_offset, "%s stream %s", label,
                       ir == STG_INFLATE_CORRUPT ? "invalid" : "truncated");
        break;
    case STG_INFLATE_NOMEM:
        ctx->report->out_of_memory = true;
        stg_inflate_free(&out);
        return res;
    case STG_INFLATE_UNAVAILABLE:
        stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, STG_SEV_ERROR, 0,
                       "%s stream, but this build has no zlib: not scanned", label);
        return res;
    }
    uint64_t budget = lim->max_inflate_bytes - out.len;
    res = stg_check_member_ex(out.data != NULL ? out.data : (const uint8_t *)"", out.len,
                              "(decompressed)", 0, STG_MEMBER_STREAM, budget, ctx);
    res.inflated = out.len + (res.inflated <= budget ? res.inflated : budget);
    stg_inflate_free(&out);
    return res;
}
