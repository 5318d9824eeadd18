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
    if (z.entry_count == 0) {
        return;
    }
    /* entry_count <= cd_size / 46 <= buffer length / 46: checked when the zip was opened. */
    stg_zip_range *ranges = stg_mem_alloc((size_t)z.entry_count * sizeof *ranges);
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
        /* each OK entry has its own index below entry_count, so n < entry_count here */
        if (zr == STG_ZIPR_OK) {
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

/* Decompresses buf (which starts at file offset base) and scans the result. */
static stg_member_result scan_stream(const uint8_t *buf, size_t len, uint64_t base,
                                     stg_inflate_format fmt, const char *label,
                                     bool report_trailing, stg_check_ctx *ctx, bool *recognised)
{
    stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
    const stg_limits *lim = ctx->lim;
    stg_inflate_out out;
    stg_inflate_result ir = stg_inflate(buf, len, fmt, lim->max_inflate_bytes,
                                        lim->max_inflate_ratio, &out);
    *recognised = true;
    switch (ir) {
    case STG_INFLATE_OK:
        if (out.consumed < len && report_trailing) {
            stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, STG_SEV_ERROR,
                           base + (uint64_t)out.consumed, "%zu bytes follow the %s stream",
                           len - out.consumed, label);
        }
        break;
    case STG_INFLATE_TOO_BIG:
    case STG_INFLATE_RATIO:
        stg_report_add(ctx->report, STG_ZIP_BOMB, STG_SEV_ERROR, base,
                       "%s stream inflates past the %s cap: the rest is not scanned", label,
                       ir == STG_INFLATE_RATIO ? "ratio" : "size");
        break;
    case STG_INFLATE_CORRUPT:
    case STG_INFLATE_TRUNCATED:
        if (fmt == STG_INFLATE_ZLIB && base == 0 && out.len == 0) {
            /* Two header bytes matched by chance: not a zlib stream at all. */
            *recognised = false;
            stg_inflate_free(&out);
            return res;
        }
        stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, STG_SEV_ERROR,
                       base + (uint64_t)out.error_offset, "%s stream %s", label,
                       ir == STG_INFLATE_CORRUPT ? "invalid" : "truncated");
        break;
    case STG_INFLATE_NOMEM:
        ctx->report->out_of_memory = true;
        stg_inflate_free(&out);
        return res;
    case STG_INFLATE_UNAVAILABLE:
        stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, STG_SEV_ERROR, base,
                       "%s stream, but this build cannot decompress it: not scanned", label);
        return res;
    }
    uint64_t budget = lim->max_inflate_bytes - out.len;
    res = stg_check_member_ex(out.data != NULL ? out.data : (const uint8_t *)"", out.len,
                              "(decompressed)", 0, STG_MEMBER_STREAM, budget, ctx);
    res.inflated = out.len + (res.inflated <= budget ? res.inflated : budget);
    stg_inflate_free(&out);
    return res;
}

stg_member_result stg_containers_scan_compressed(const uint8_t *buf, size_t len,
                                                 stg_inflate_format fmt, const char *label,
                                                 stg_check_ctx *ctx, bool *recognised)
{
    /* Python's lzma and bz2 readers ignore what follows the last stream; gzip's is reported
     * (a gzip reader reads on and fails there, after what came before was unpickled). */
    bool trailing = fmt != STG_INFLATE_LZMA && fmt != STG_INFLATE_BZIP2;
    return scan_stream(buf, len, 0, fmt, label, trailing, ctx, recognised);
}

/* ------------------------------------------------------------------- joblib ZF files */

stg_member_result stg_containers_scan_zfile(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    uint64_t declared = 0;
    size_t at = 0;
    bool recognised = true;
    if (!stg_sniff_zfile_header(buf, len, &declared, &at)) {
        stg_member_result none = {STG_FMT_UNKNOWN, false, 0};
        return none;
    }
    /* zlib.decompress ignores bytes after the stream. The declared length is only asserted
     * after inflating (skipped under python -O): whatever it says, the content is scanned. */
    stg_member_result res = scan_stream(buf + at, len - at, at, STG_INFLATE_ZLIB, "joblib ZF",
                                        false, ctx, &recognised);
    res.format = STG_FMT_JOBLIB;
    return res;
}
