/* Archives and compressed streams (see containers.h). Two passes over a zip: the first checks
 * the directory as a whole (entries overlapping each other), the second cross-checks and scans
 * each entry. Inflated bytes are capped per member (max_inflate_bytes, max_inflate_ratio) and
 * per archive in total (max_inflate_bytes), so overlapping entries cannot multiply the work. */
#include "containers.h"

#include <stdio.h>
#include <string.h>

#include "../parser/inflate.h"
#include "../parser/mem.h"
#include "../parser/tar.h"
#include "../parser/torch.h"
#include "../parser/cursor.h"
#include "../parser/util.h"
#include "../validator/pickle_scan.h"
#include "../validator/torchscript.h"
#include "names.h"
#include "sniff.h"

/* Adds a finding about one entry: offset = member_offset = the entry's header offset. */
static void entry_finding(stg_check_ctx *ctx, stg_code code, uint64_t offset,
                          const char *member_path, const char *message)
{
    stg_finding *f = stg_report_add(ctx->report, code, offset, "%s", message);
    stg_report_set_member(ctx->report, f, member_path, offset);
}

static bool pickle_name(const char *name)
{
    return stg_member_name_holds(name) == STG_FMT_PICKLE;
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
        stg_report_oom(ctx->report);
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
        stg_report_add(ctx->report, STG_ZIP_MALFORMED, ranges[first].begin,
                       "%zu zip entries overlap an earlier entry's bytes", overlaps);
    }
    stg_mem_free(ranges);
}

/* The members that make a torch zip a TorchScript archive (torch.jit.load reads them, under
 * the archive's top folder): the program's source (`code/`), its constants, and the mobile
 * interpreter's bytecode. */
typedef enum ts_part { TS_NONE = -1, TS_CODE = 0, TS_CONSTANTS, TS_BYTECODE, TS_PARTS } ts_part;

typedef struct ts_seen {
    uint64_t offset; /* the first such member's local header */
    uint32_t count[TS_PARTS];
    char first[TS_PARTS][72]; /* the first name of each part (cut to fit) */
} ts_seen;

typedef struct zip_scan {
    stg_check_ctx *ctx;
    uint64_t inflated_total; /* over the whole archive */
    bool budget_spent;
    bool any_pickle;
    bool all_npy;
    bool keras; /* the root config.json was scanned as a Keras config */
    ts_seen ts;
} zip_scan;

/* Which TorchScript part the entry `name` is: what follows its first folder (torch's reader
 * strips the archive's top folder; a name without one is taken as it is) is `code/...`,
 * `constants.pkl` or `bytecode.pkl`. *at: where that part's name starts in name. */
static ts_part torchscript_part(const char *name, size_t *at)
{
    const char *slash = memchr(name, '/', strlen(name));
    const char *names[2] = {name, slash != NULL ? slash + 1 : NULL};
    for (size_t i = 0; i < 2; i++) {
        const char *rest = names[i];
        if (rest == NULL) {
            continue;
        }
        *at = (size_t)(rest - name);
        if (strncmp(rest, "code/", 5) == 0 && rest[5] != '\0') {
            return TS_CODE;
        }
        if (strcmp(rest, "constants.pkl") == 0) {
            return TS_CONSTANTS;
        }
        if (strcmp(rest, "bytecode.pkl") == 0) {
            return TS_BYTECODE;
        }
    }
    return TS_NONE;
}

/* torch's reader lists a record under the first 511 bytes of its name (miniz's
 * mz_zip_reader_get_filename into a buffer of MZ_ZIP_MAX_ARCHIVE_FILENAME_SIZE, 512, in
 * PyTorchStreamReader::getAllRecords): `<folder>/constants.pkl` followed by more bytes is
 * `constants.pkl` to torch.load when the cut falls after it. */
#define STG_TORCH_RECORD_NAME_MAX 511

static void torchscript_note(ts_seen *ts, const char *full_name, uint64_t offset)
{
    char name[STG_TORCH_RECORD_NAME_MAX + 1];
    size_t cut = strnlen(full_name, STG_TORCH_RECORD_NAME_MAX);
    memcpy(name, full_name, cut);
    name[cut] = '\0';
    size_t at = 0;
    ts_part part = torchscript_part(name, &at);
    if (part == TS_NONE) {
        return;
    }
    bool first = ts->count[TS_CODE] + ts->count[TS_CONSTANTS] + ts->count[TS_BYTECODE] == 0;
    if (first || offset < ts->offset) {
        ts->offset = offset;
    }
    if (ts->count[part]++ == 0) {
        /* for code, the folder: the archive's name and "code/" */
        size_t n = part == TS_CODE ? at + 5 : strlen(name);
        size_t cap = sizeof ts->first[part] - 1;
        memcpy(ts->first[part], name, n < cap ? n : cap);
        ts->first[part][n < cap ? n : cap] = '\0';
    }
}

/* torchscript_program (docs/findings.md): once per archive reading, naming the members. */
static void torchscript_report(const ts_seen *ts, stg_check_ctx *ctx)
{
    if (ts->count[TS_CODE] + ts->count[TS_CONSTANTS] + ts->count[TS_BYTECODE] == 0) {
        return;
    }
    char code[112] = "";
    if (ts->count[TS_CODE] > 0) {
        /* the code folder, and how many members it holds */
        (void)snprintf(code, sizeof code, "%s (%u members)", ts->first[TS_CODE],
                       (unsigned)ts->count[TS_CODE]);
    }
    const char *parts[3] = {code, ts->first[TS_CONSTANTS], ts->first[TS_BYTECODE]};
    char list[3 * 112 + 8] = "";
    size_t at = 0;
    for (size_t i = 0; i < 3; i++) {
        if (parts[i][0] != '\0') {
            int w = snprintf(list + at, sizeof list - at, "%s%s", at > 0 ? ", " : "", parts[i]);
            at += w > 0 && (size_t)w < sizeof list - at ? (size_t)w : 0;
        }
    }
    stg_report_add(ctx->report, STG_TORCHSCRIPT_PROGRAM, ts->offset,
                   "a TorchScript program (%s): torch.jit.load compiles it and runs its "
                   "methods, whose torch ops can read and write files; its code is not analysed",
                   list);
}

/* One reading of an entry's data (the central directory's method and sizes, or the local
 * header's when they differ). */
static void scan_entry_data(zip_scan *zs, const stg_zip *z, const stg_zip_entry *e,
                            const char *name, const char *path, uint16_t method, uint64_t comp_size,
                            uint64_t uncomp_size, bool force_pickle)
{
    stg_check_ctx *ctx = zs->ctx;
    const stg_limits *lim = ctx->lim;
    if (comp_size > z->len || e->data_offset > z->len - comp_size) {
        entry_finding(ctx, STG_ZIP_MALFORMED, e->local_offset, path,
                      "member data runs past the end of the file");
        return;
    }
    const uint8_t *data = z->buf + e->data_offset;
    size_t data_len = (size_t)comp_size;
    stg_inflate_out out;
    memset(&out, 0, sizeof out);
    stg_inflate_format fmt;
    if (method != 0 && stg_zip_method_format(method, &fmt)) {
        if (zs->budget_spent) {
            return; /* zip_bomb already reported for this archive */
        }
        uint64_t left = lim->max_inflate_bytes - zs->inflated_total;
        stg_inflate_result ir = stg_inflate(data, data_len, fmt, left, lim->max_inflate_ratio,
                                            &out);
        zs->inflated_total += out.len;
        switch (ir) {
        case STG_INFLATE_OK:
            if ((uint64_t)out.len != uncomp_size) {
                entry_finding(ctx, STG_ZIP_MALFORMED, e->local_offset, path,
                              "inflated size differs from the declared size");
            }
            break;
        case STG_INFLATE_TOO_BIG:
        case STG_INFLATE_RATIO: {
            stg_finding *f = stg_report_add(
                ctx->report, STG_ZIP_BOMB, e->local_offset, "%s",
                ir == STG_INFLATE_RATIO
                    ? "member inflates past the ratio cap: the rest is not scanned"
                    : "member inflates past the size cap: the rest is not scanned");
            stg_report_set_member(ctx->report, f, path, e->local_offset);
            stg_report_set_limit(ctx->report, f,
                                 ir == STG_INFLATE_RATIO ? "max_inflate_ratio"
                                                         : "max_inflate_bytes");
        }
            if (zs->inflated_total >= lim->max_inflate_bytes) {
                zs->budget_spent = true;
            }
            break;
        case STG_INFLATE_CORRUPT:
        case STG_INFLATE_TRUNCATED:
            entry_finding(ctx, STG_ZIP_MALFORMED, e->local_offset, path,
                          ir == STG_INFLATE_CORRUPT ? "invalid compressed data in member"
                                                    : "compressed data of member truncated");
            break;
        case STG_INFLATE_NOMEM:
            stg_report_oom(ctx->report);
            stg_inflate_free(&out);
            return;
        case STG_INFLATE_UNAVAILABLE:
            entry_finding(
                ctx, STG_FORMAT_UNSCANNABLE, e->local_offset, path,
                "compressed member, but its library (zlib, libbz2, liblzma) is not available "
                "(not built in or not loadable): not scanned");
            return;
        }
        data = out.data;
        data_len = out.len;
    } else if (method != 0) {
        stg_finding *f = stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, e->local_offset,
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
    stg_member_result mr = stg_ctx_scan(
        ctx, data != NULL ? data : (const uint8_t *)"", data_len, name, e->local_offset,
        force_pickle ? STG_MEMBER_PICKLE : STG_MEMBER_ARCHIVE, budget);
    zs->any_pickle = zs->any_pickle || mr.pickle_based;
    /* Keras' saving_lib reads the member config.json at the archive's root */
    zs->keras = zs->keras ||
                (mr.format == STG_FMT_KERAS && strcmp(name, STG_CONFIG_JSON_NAME) == 0);
    zs->inflated_total += mr.inflated <= budget ? mr.inflated : budget;
    stg_inflate_free(&out);
}

static void scan_entry(zip_scan *zs, const stg_zip *z, const stg_zip_entry *e)
{
    stg_check_ctx *ctx = zs->ctx;
    char *name = stg_mem_strndup((const char *)e->name, e->name_len);
    char *local = stg_mem_strndup((const char *)e->local_name, e->local_name_len);
    char *path = name != NULL ? stg_ctx_entry_path(ctx, name) : NULL;
    if (name == NULL || local == NULL || path == NULL) {
        stg_report_oom(ctx->report);
        goto done;
    }
    zs->all_npy = zs->all_npy && stg_member_name_holds(name) == STG_FMT_NUMPY;
    torchscript_note(&zs->ts, name, e->local_offset);
    unsigned flags = (unsigned)e->flags | (unsigned)e->local_flags;
    if ((flags & STG_ZIP_FLAGS_ENCRYPTED) != 0) {
        stg_finding *f = stg_report_add(ctx->report, STG_ZIP_ENCRYPTED_FLAG, e->local_offset,
                                        "general-purpose flags 0x%04x (encrypted/patched) "
                                        "ignored: the data is read as it is",
                                        flags & STG_ZIP_FLAGS_ENCRYPTED);
        stg_report_set_member(ctx->report, f, path, e->local_offset);
    }
    if (e->mismatch != 0) {
        stg_finding *f = stg_report_add(
            ctx->report, STG_ZIP_HEADER_MISMATCH, e->local_offset,
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
        char *lpath = stg_ctx_entry_path(ctx, local);
        if (lpath == NULL) {
            stg_report_oom(ctx->report);
            goto done;
        }
        /* torch's reader reads the central entry's bytes: TorchScript's resolution is not
         * the streaming readers' */
        const stg_torchscript *ts = ctx->torchscript;
        ctx->torchscript = NULL;
        scan_entry_data(zs, z, e, local, lpath, e->local_method, e->local_comp_size,
                        e->local_uncomp_size, force_pickle);
        ctx->torchscript = ts;
        stg_mem_free(lpath);
    }
done:
    stg_mem_free(name);
    stg_mem_free(local);
    stg_mem_free(path);
}

/* The record name torch's reader lists for a central name (its first 511 bytes, up to a NUL),
 * and what follows the archive's first folder in it: the name TorchScript looks records up by. */
static size_t torch_record_rest(const stg_zip_entry *e, size_t *at)
{
    const char *name = (const char *)e->name;
    size_t cut = e->name_len < STG_TORCH_RECORD_NAME_MAX ? e->name_len : STG_TORCH_RECORD_NAME_MAX;
    const char *nul = memchr(name, '\0', cut);
    if (nul != NULL) {
        cut = (size_t)(nul - name);
    }
    const char *slash = memchr(name, '/', cut);
    *at = slash != NULL ? (size_t)(slash - name) + 1 : 0;
    return cut - *at;
}

/* When torch's reader takes the zip for a TorchScript archive (a `constants.pkl` record:
 * torch.load's _is_torchscript_zip, and torch.jit.load reads it first), lists its code/ sources
 * into ts (their names point into the zip's bytes) and returns true. A directory that breaks
 * off ends the list: the scan that follows reports it. false with nothing allocated otherwise,
 * and when memory fails (reported: the globals then stay judged as Python's). */
static bool torchscript_sources(const stg_zip *zin, stg_check_ctx *ctx, stg_torchscript *ts)
{
    memset(ts, 0, sizeof *ts);
    stg_zip z = *zin;
    stg_zip_entry e;
    stg_zip_error err;
    bool constants = false;
    size_t cap = 0;
    while (stg_zip_next(&z, &e, &err) == STG_ZIPR_OK) {
        size_t at = 0;
        size_t n = torch_record_rest(&e, &at);
        const char *rest = (const char *)e.name + at;
        constants = constants || (n == 13 && memcmp(rest, "constants.pkl", 13) == 0);
        if (n <= 5 + 3 || memcmp(rest, "code/", 5) != 0 ||
            memcmp(rest + n - 3, STG_PYTHON_SUFFIX, 3) != 0) {
            continue;
        }
        if (ts->count == cap) {
            /* at most one per central header, each of 46 bytes or more: bounded by the file */
            size_t next = cap == 0 ? 16 : cap * 2;
            stg_ts_source *grown = stg_mem_realloc(ts->sources, next * sizeof *grown);
            if (grown == NULL) {
                stg_report_oom(ctx->report);
                stg_mem_free(ts->sources);
                memset(ts, 0, sizeof *ts);
                return false;
            }
            ts->sources = grown;
            cap = next;
        }
        ts->sources[ts->count].name = rest + 5;
        ts->sources[ts->count].len = n - 5;
        ts->count++;
    }
    if (!constants) {
        stg_mem_free(ts->sources);
        memset(ts, 0, sizeof *ts);
        return false;
    }
    stg_torchscript_sort(ts);
    ts->member_depth = ctx->depth + 1;
    return true;
}

static void scan_zip_reading(const stg_zip *zin, bool torch_reads, stg_check_ctx *ctx,
                             stg_member_result *res, stg_archive_facts *facts);
static void scan_zip_entries(const stg_zip *zin, stg_check_ctx *ctx, stg_member_result *res,
                             stg_archive_facts *facts);

void stg_containers_scan_zip(const stg_zip *zin, stg_check_ctx *ctx, stg_member_result *res,
                             stg_archive_facts *facts)
{
    scan_zip_reading(zin, zin->reader == STG_ZIP_READER_MINIZ, ctx, res, facts);
}

/* torch_reads: torch's reader (miniz) reads these entries, so the TorchScript route is open. A
 * TorchScript archive's own pickles are judged by TorchScript's resolution; a zip nested in a
 * member sets its own (or none) for its members. */
static void scan_zip_reading(const stg_zip *zin, bool torch_reads, stg_check_ctx *ctx,
                             stg_member_result *res, stg_archive_facts *facts)
{
    const stg_torchscript *outer_ts = ctx->torchscript;
    stg_torchscript ts;
    bool ts_route = torch_reads && torchscript_sources(zin, ctx, &ts);
    ctx->torchscript = ts_route ? &ts : NULL;
    scan_zip_entries(zin, ctx, res, facts);
    ctx->torchscript = outer_ts;
    if (ts_route) {
        stg_mem_free(ts.sources);
    }
}

static void scan_zip_entries(const stg_zip *zin, stg_check_ctx *ctx, stg_member_result *res,
                             stg_archive_facts *facts)
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
            stg_report_add(ctx->report, STG_ZIP_MALFORMED, err.offset, "%s", err.what);
            break;
        }
        if (zr == STG_ZIPR_ENTRY_BAD) {
            char *name = stg_mem_strndup((const char *)e.name, e.name_len);
            char *path = name != NULL ? stg_ctx_entry_path(ctx, name) : NULL;
            if (path == NULL) {
                stg_report_oom(ctx->report);
            }
            stg_finding *f = stg_report_add(ctx->report, STG_ZIP_MALFORMED, err.offset, "%s",
                                            err.what);
            stg_report_set_member(ctx->report, f, path, err.offset);
            stg_mem_free(name);
            stg_mem_free(path);
            zs.all_npy = false;
            continue;
        }
        scan_entry(&zs, &z, &e);
    }
    torchscript_report(&zs.ts, ctx);
    res->inflated += zs.inflated_total;
    res->pickle_based = res->pickle_based || zs.any_pickle;
    facts->pickle = zs.any_pickle;
    facts->all_npy = zs.all_npy;
    facts->keras = zs.keras;
}

void stg_containers_scan_zip_local(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                                   stg_member_result *res, stg_archive_facts *facts)
{
    stg_zip z;
    memset(&z, 0, sizeof z);
    z.buf = buf;
    z.len = len;
    z.cd_start = len;
    zip_scan zs;
    memset(&zs, 0, sizeof zs);
    zs.ctx = ctx;
    /* no directory: torch's reader opens none of it, so no TorchScript route */
    const stg_torchscript *outer_ts = ctx->torchscript;
    ctx->torchscript = NULL;
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
            stg_report_add(ctx->report, STG_ZIP_MALFORMED, err.offset,
                           "local header walk stopped: %s", err.what);
        }
        break;
    }
    ctx->torchscript = outer_ts;
    torchscript_report(&zs.ts, ctx);
    res->inflated += zs.inflated_total;
    res->pickle_based = res->pickle_based || zs.any_pickle;
    facts->pickle = zs.any_pickle;
    facts->all_npy = false;
    facts->keras = zs.keras;
}

/* The loaders known to use each reader, for messages. */
static const char *reader_users(stg_zip_reader reader)
{
    return reader == STG_ZIP_READER_MINIZ ? "torch.load" : "numpy.load";
}

bool stg_containers_scan_zip_readers(const uint8_t *buf, size_t len, bool starts_as_zip,
                                     stg_check_ctx *ctx, stg_member_result *res,
                                     stg_archive_facts *facts)
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
                stg_report_add(ctx->report, STG_ZIP_MALFORMED, err[r].offset,
                               "%s (%s) refuses the archive: %s",
                               stg_zip_reader_name((stg_zip_reader)r),
                               reader_users((stg_zip_reader)r), err[r].what);
                any = true;
            }
        }
        if (!any) {
            stg_report_add(ctx->report, STG_ZIP_MALFORMED, 0,
                           "zip local header but no end of central directory");
        }
        stg_containers_scan_zip_local(buf, len, ctx, res, facts);
        return true;
    }
    if (opened[0] && opened[1] && stg_zip_same_reading(&z[0], &z[1])) {
        scan_zip_reading(&z[0], true, ctx, res, facts); /* miniz's reading too */
        return true;
    }
    if (opened[0] && opened[1]) {
        const stg_zip *zf = &z[STG_ZIP_READER_ZIPFILE], *mz = &z[STG_ZIP_READER_MINIZ];
        stg_report_add(ctx->report, STG_ZIP_AMBIGUOUS, mz->cd_start,
                       "torch.load (miniz) reads %llu entries from the central directory at "
                       "%llu, zipfile (numpy.load) %llu entries from %llu (%llu bytes "
                       "prepended): both readings scanned",
                       (unsigned long long)mz->entry_count, (unsigned long long)mz->cd_start,
                       (unsigned long long)zf->entry_count, (unsigned long long)zf->cd_start,
                       (unsigned long long)zf->base);
        /* both readings scanned: a pickle in either, every member a .npy in both */
        stg_archive_facts a = {false, false, false, false}, b = {false, false, false, false};
        stg_containers_scan_zip(zf, ctx, res, &a);
        stg_containers_scan_zip(mz, ctx, res, &b);
        facts->pickle = a.pickle || b.pickle;
        facts->all_npy = a.all_npy && b.all_npy;
        facts->keras = a.keras || b.keras;
        return true;
    }
    int good = opened[0] ? 0 : 1, bad = 1 - good;
    /* A reader that refuses a file that does not start as a zip is no loader's route to it
     * (torch.load and numpy.load take the zip route only for PK at byte 0): only the reading
     * that opens matters then. */
    if (starts_as_zip) {
        const char *why = zr[bad] == STG_ZIPR_MALFORMED ? err[bad].what
                                                        : "it finds no end record it can use";
        stg_report_add(ctx->report, STG_ZIP_MALFORMED,
                       zr[bad] == STG_ZIPR_MALFORMED ? err[bad].offset : z[good].eocd_offset,
                       "%s (%s) refuses the archive: %s; %s (%s) reads the directory at %llu: "
                       "scanned",
                       stg_zip_reader_name((stg_zip_reader)bad), reader_users((stg_zip_reader)bad),
                       why, stg_zip_reader_name((stg_zip_reader)good),
                       reader_users((stg_zip_reader)good), (unsigned long long)z[good].cd_start);
    }
    stg_containers_scan_zip(&z[good], ctx, res, facts);
    return true;
}

/* ---------------------------------------------------------------------------------- tar */

/* What torch.load's legacy_load() reads from a tar, in its order: tar.extract('storages'),
 * tar.extract('tensors'), tar.extractfile('pickle'); sys_info was read by older versions. */
static const struct {
    const char *name;
    stg_member_mode mode;
    bool extracted; /* extract() writes a file and reopens it; extractfile() reads in place */
} torch_tar_names[] = {
    {"storages", STG_MEMBER_TORCH01_STORAGES, true},
    {"tensors", STG_MEMBER_TORCH01_TENSORS, true},
    {"pickle", STG_MEMBER_PICKLE, false},
    {"sys_info", STG_MEMBER_PICKLE, false},
};

enum { TORCH_TAR_NAMES = sizeof torch_tar_names / sizeof torch_tar_names[0] };

/* A hard link's target path joined to extract()'s directory can name a file of the host: an
 * absolute path or one that climbs out with "..". */
static bool link_leaves_dir(const char *link, size_t n)
{
    if (n > 0 && link[0] == '/') {
        return true;
    }
    char *norm = stg_mem_alloc(n + 2);
    if (norm == NULL) {
        return true; /* fails closed */
    }
    size_t m = stg_tar_normpath(link, n, norm);
    bool up = m >= 2 && norm[0] == '.' && norm[1] == '.' && (m == 2 || norm[2] == '/');
    stg_mem_free(norm);
    return up;
}

typedef struct tar_scan {
    stg_check_ctx *ctx;
    const uint8_t *buf;
    uint64_t inflated, limit;
    bool any_pickle;
} tar_scan;

static void tar_scan_member(tar_scan *ts, const stg_tar_list *l, size_t i, const char *as,
                            stg_member_mode mode)
{
    const stg_tar_member *m = &l->m[i];
    if (m->sparse) {
        char *path = stg_ctx_entry_path(ts->ctx, as);
        if (path == NULL) {
            stg_report_oom(ts->ctx->report);
        }
        entry_finding(ts->ctx, STG_FORMAT_UNSCANNABLE, m->header_offset, path,
                      "sparse tar member: tarfile assembles its bytes from a map stguard does "
                      "not read, so it is not scanned");
        stg_mem_free(path);
        return;
    }
    uint64_t left = ts->limit - ts->inflated;
    stg_member_result mr = stg_ctx_scan(ts->ctx, ts->buf + m->data_offset, (size_t)m->size, as,
                                        m->header_offset, mode, left);
    ts->any_pickle = ts->any_pickle || mr.pickle_based;
    ts->inflated += mr.inflated <= left ? mr.inflated : left;
}

void stg_containers_scan_tar(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                             stg_member_result *res, stg_archive_facts *facts)
{
    facts->torch_tar = false;
    stg_tar_list l;
    if (!stg_tar_list_build(&l, buf, len)) {
        stg_report_oom(ctx->report);
        stg_tar_list_free(&l);
        return;
    }
    size_t stop_end = 0;
    bool oom = false;
    bool pickle_at_0 = stg_pickle_sniff(buf, len, &stop_end, &oom);
    if (oom) {
        stg_report_oom(ctx->report);
    }
    if (l.end == STG_PARSE_MALFORMED) {
        stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, l.err.offset, "%s", l.err.what);
        /* tarfile raised while listing: torch.load catches the TarError and unpickles the file
         * from byte 0 instead, so the header bytes are a pickle to it. */
        if (pickle_at_0) {
            stg_check_pickles(buf, len, 0, STG_PICKLE_RAW, ctx);
        }
    } else if (pickle_at_0) {
        /* A header whose first bytes run to STOP (a pickle fits in the name field): torch reads
         * the tar, pickle.load and joblib.load run the pickle. Both readings are scanned. */
        stg_report_add(ctx->report, STG_POLYGLOT_PICKLE, 0,
                       "the first %zu bytes of this tar are also a pickle that runs to STOP",
                       stop_end);
        stg_check_pickles(buf, stop_end, 0, STG_PICKLE_RAW, ctx);
    }
    if (l.end == STG_PARSE_END && l.stop_why != NULL) {
        stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, l.stop_offset,
                       "%s: tarfile stops listing members here, other tar readers skip to the "
                       "next header",
                       l.stop_why);
    }
    tar_scan ts = {ctx, buf, 0, ctx->lim->max_inflate_bytes, false};
    /* bit k of read_as[i]: member i is what torch reads for torch_tar_names[k] */
    uint8_t *read_as = l.count > 0 ? stg_mem_calloc(l.count, 1) : NULL;
    if (l.count > 0 && read_as == NULL) {
        stg_report_oom(ctx->report);
        stg_tar_list_free(&l);
        return;
    }
    bool found[TORCH_TAR_NAMES] = {false};
    for (size_t k = 0; k < TORCH_TAR_NAMES; k++) {
        const char *name = torch_tar_names[k].name;
        size_t at = stg_tar_list_find(&l, name, strlen(name));
        if (at == STG_TAR_NONE) {
            continue;
        }
        size_t target = 0;
        unsigned hops = 0;
        bool through_symlink = false;
        stg_tar_resolve_result rr = stg_tar_list_resolve(&l, at, &target, &hops, &through_symlink);
        if (rr == STG_TARRES_NOMEM) {
            stg_report_oom(ctx->report);
            break;
        }
        const stg_tar_member *m = &l.m[at];
        if (torch_tar_names[k].extracted && hops > 0 &&
            (through_symlink || link_leaves_dir(stg_tar_member_link(&l, at), m->link_len))) {
            stg_finding *f = stg_report_add(
                ctx->report, STG_TAR_LINK_EXTERNAL, m->header_offset,
                "torch extracts '%s' as a %s link to '%s' and opens it: the bytes it unpickles "
                "come from the host's filesystem, not from the archive",
                name, m->type == '2' || through_symlink ? "symbolic" : "hard",
                stg_tar_member_link(&l, at));
            char *path = stg_ctx_entry_path(ctx, name);
            if (path == NULL) {
                stg_report_oom(ctx->report);
            }
            stg_report_set_member(ctx->report, f, path, m->header_offset);
            stg_mem_free(path);
        }
        if (rr == STG_TARRES_DATA) {
            found[k] = true;
            read_as[target] |= (uint8_t)(1u << k);
        }
    }
    for (size_t i = 0; i < l.count && read_as != NULL; i++) {
        for (size_t k = 0; k < TORCH_TAR_NAMES; k++) {
            if ((read_as[i] & (1u << k)) != 0) {
                tar_scan_member(&ts, &l, i, torch_tar_names[k].name, torch_tar_names[k].mode);
            }
        }
        if (read_as[i] == 0 && stg_tar_type_has_data(l.m[i].type)) {
            /* Members no loader reads by name are sniffed like any archive member. */
            tar_scan_member(&ts, &l, i, stg_tar_member_name(&l, i), STG_MEMBER_ARCHIVE);
        }
    }
    stg_mem_free(read_as);
    stg_tar_list_free(&l);
    if (ts.any_pickle) {
        res->pickle_based = true;
    }
    res->inflated += ts.inflated;
    facts->torch_tar = found[0] && found[2];
}

/* The storage record after a 0.1 `storages` argument pickle (buf[pick..c->pos)): an 8-byte
 * element count, then count x the element size of the storage class the pickle names, which is
 * what torch reads (legacy_load: _new_with_file(f, _element_size(storage_type.dtype))). A class
 * of no known size is torch01_storage_unresolved: torch reads bytes there whose extent stguard
 * does not know, never a guess. false (c unchanged): not framed. */
static bool skip_torch01_storage(stg_cursor *c, size_t pick, stg_check_ctx *ctx)
{
    uint32_t elsize;
    if (!stg_pickle_torch01_elsize(c->base + pick, c->pos - pick, &elsize)) {
        stg_finding *f = stg_report_add(ctx->report, STG_TORCH01_STORAGE_UNRESOLVED, pick,
                                        "a PyTorch 0.1 storage whose argument pickle names no "
                                        "storage class of known element size: torch reads its "
                                        "bytes, then unpickles what follows");
        stg_ctx_set_member(ctx, f);
        return false;
    }
    stg_cursor t = *c;
    uint64_t bytes;
    if (stg_torch_storage_record(&t, elsize, &bytes) != STG_OK) {
        stg_finding *f = stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, c->pos,
                                        "a PyTorch 0.1 storage runs past the end of the member");
        stg_ctx_set_member(ctx, f);
        return false;
    }
    (void)stg_cur_skip(&t, (size_t)bytes); /* fits: the record said so */
    *c = t;
    return true;
}

/* torch's legacy_load reads `storages` as: a count pickle, that many (argument pickle, storage
 * record) pairs, one storage-views pickle; `tensors` as a count pickle, then per tensor an
 * argument pickle and its record. What follows is walked as pickles, so nothing goes unseen. */
void stg_containers_scan_torch01(const uint8_t *buf, size_t len, bool tensors, stg_check_ctx *ctx)
{
    stg_cursor c = stg_cur_make(buf, len);
    uint64_t index = 0, storages = UINT64_MAX;
    while (stg_cur_avail(&c) > 0) {
        size_t stop_end = 0, pos = c.pos;
        bool oom = false;
        bool pickle = stg_pickle_sniff(buf + pos, stg_cur_avail(&c), &stop_end, &oom);
        if (oom) {
            stg_report_oom(ctx->report);
        }
        if (!pickle || stop_end == 0) {
            break;
        }
        stg_check_pickles(buf + pos, stop_end, pos, STG_PICKLE_MEMBER, ctx);
        (void)stg_cur_skip(&c, stop_end); /* the pickle ended inside what is left */
        if (index++ == 0) {
            if (!tensors && !stg_pickle_torch01_count(buf + pos, stop_end, &storages)) {
                storages = 0; /* torch's range() raises: it reads no storage */
            }
            continue;
        }
        if (!tensors && index - 1 > storages) {
            break; /* the storage-views pickle: torch reads nothing after it */
        }
        if (tensors ? !stg_torch01_tensor_record(&c) : !skip_torch01_storage(&c, pos, ctx)) {
            break;
        }
    }
    if (stg_cur_avail(&c) > 0) {
        /* Not framed as the format says: walk the rest as pickles, so nothing goes unseen. */
        stg_check_pickles(buf + c.pos, stg_cur_avail(&c), c.pos, STG_PICKLE_RAW, ctx);
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
            stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, base + (uint64_t)out.consumed,
                           "%zu bytes follow the %s stream", len - out.consumed, label);
        }
        break;
    case STG_INFLATE_TOO_BIG:
    case STG_INFLATE_RATIO: {
        stg_finding *f = stg_report_add(ctx->report, STG_ZIP_BOMB, base,
                                        "%s stream inflates past the %s cap: the rest is not "
                                        "scanned",
                                        label, ir == STG_INFLATE_RATIO ? "ratio" : "size");
        stg_report_set_limit(ctx->report, f,
                             ir == STG_INFLATE_RATIO ? "max_inflate_ratio" : "max_inflate_bytes");
    } break;
    case STG_INFLATE_CORRUPT:
    case STG_INFLATE_TRUNCATED:
        if ((fmt == STG_INFLATE_ZLIB && base == 0 && out.len == 0) || ctx->depth > 0) {
            /* Two header bytes matched by chance: not a zlib stream at all. Inside an archive
             * member (tensor storage of random-looking bytes matches a zlib, gzip or lzma
             * header about once in a few thousand members) a stream that does not decode is
             * plain data: no loader decompresses a member's bytes itself, so it would be a
             * false alarm; a stream that does decode is still scanned. */
            *recognised = false;
            stg_inflate_free(&out);
            return res;
        }
        stg_report_add(ctx->report, STG_CONTAINER_MALFORMED, base + (uint64_t)out.error_offset,
                       "%s stream %s", label, ir == STG_INFLATE_CORRUPT ? "invalid" : "truncated");
        break;
    case STG_INFLATE_NOMEM:
        stg_report_oom(ctx->report);
        stg_inflate_free(&out);
        return res;
    case STG_INFLATE_UNAVAILABLE:
        stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, base,
                       "%s stream, but its library is not available (not built in or not "
                       "loadable): not scanned",
                       label);
        return res;
    }
    uint64_t budget = lim->max_inflate_bytes - out.len;
    res = stg_ctx_scan(ctx, out.data != NULL ? out.data : (const uint8_t *)"", out.len,
                       "(decompressed)", 0, STG_MEMBER_STREAM, budget);
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
    bool compat = ctx->joblib_compat;
    ctx->joblib_compat = true; /* read by joblib's ZipNumpyUnpickler (route: docs/pickle.md) */
    stg_member_result res = scan_stream(buf + at, len - at, at, STG_INFLATE_ZLIB, "joblib ZF",
                                        false, ctx, &recognised);
    ctx->joblib_compat = compat;
    res.format = STG_FMT_JOBLIB;
    return res;
}
