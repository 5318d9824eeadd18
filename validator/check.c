/* One buffer, one report: sniff the format by content (names only as docs/containers.md's
 * hints) and run the rules of that format. Containers hand their members back to
 * stg_check_member_ex, which scans them one level deeper (max_nesting) into a report of their
 * own and merges it with `member` set, so every finding inside an archive says where it is.
 *
 * Format labels decided here (docs/containers.md):
 *  - joblib: a pickle whose name ends .joblib, or which imports a global from
 *    joblib.numpy_pickle* (every joblib file with arrays does); a gzip/zlib stream whose content
 *    is joblib is labelled joblib too (that is how joblib's compress= writes files); other
 *    compressed streams keep the compression's label (gzip, zlib).
 *  - pickle_file (warning, no offset) is added once per top-level file that is pickle-based:
 *    pickle, joblib, torch-legacy, torch-zip, torch-tar, an object-dtype .npy, or any archive or
 *    compressed stream in which a pickle was scanned. */
#include "check.h"

#include <string.h>

#include "../parser/mem.h"
#include "../parser/util.h"
#include "../parser/zip.h"
#include "containers.h"
#include "index.h"
#include "pickle_policy.h"
#include "pickle_scan.h"
#include "polyglot.h"
#include "safetensors.h"
#include "sniff.h"

/* Hook for `*.safetensors.index.json` (docs/containers.md): the index's own rules. Shards are
 * files, so a buffer check cannot open them; loader/model.c checks them against the map. */
static void check_safetensors_index(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    stg_index ix;
    stg_index_init(&ix);
    (void)stg_index_parse(buf, len, ctx->lim, ctx->report, &ix);
    stg_index_release(&ix);
}

static void check_safetensors(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    stg_st_validate(buf, len, ctx->lim, ctx->report, NULL);
    stg_polyglot_check_safetensors(buf, len, ctx);
}

/* Pickle rules over the whole buffer; the label is joblib per the rule above. */
static stg_format check_pickle(const uint8_t *buf, size_t len, stg_pickle_flavor flavor,
                               const stg_name_hint *hint, stg_check_ctx *ctx)
{
    size_t globals_before = ctx->report->global_count;
    stg_check_pickles(buf, len, 0, flavor, ctx);
    bool joblib = hint->joblib;
    for (size_t i = globals_before; i < ctx->report->global_count && !joblib; i++) {
        const char *m = ctx->report->globals[i].module;
        joblib = m != NULL && strncmp(m, "joblib.numpy_pickle", 19) == 0;
    }
    return joblib ? STG_FMT_JOBLIB : STG_FMT_PICKLE;
}

/* The generic fallback for content no rule recognised but that a loader may still unpickle (a
 * stream without STOP still runs every opcode before the missing one): walk it as pickles into
 * a scratch report. true (and the findings merged) when it imports any global. */
static bool fallback_pickle_scan(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    stg_report *scratch = stg_report_new(ctx->lim);
    if (scratch == NULL) {
        ctx->report->out_of_memory = true;
        return false;
    }
    stg_check_ctx inner = *ctx;
    inner.report = scratch;
    stg_check_pickles(buf, len, 0, STG_PICKLE_RAW, &inner);
    /* A limit the walk hit leaves the content undecided: a loader has no such limit, so the
     * limit is reported (fails closed) rather than the content called unknown. */
    bool found = scratch->global_count > 0 ||
                 stg_report_has(scratch, STG_PICKLE_GLOBAL_UNRESOLVED) ||
                 stg_report_has(scratch, STG_LIMIT_EXCEEDED);
    if (found) {
        stg_report_merge(ctx->report, scratch, NULL, STG_NO_OFFSET);
    }
    stg_report_free(scratch);
    return found;
}

static void add_unscannable(stg_check_ctx *ctx, const char *what)
{
    stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, 0,
                   "%s data cannot be opened by stguard: not scanned", what);
}

/* Runs the rules for one payload. top_level: a whole file as a loader reads it (the buffer
 * handed to stg_check_buffer, or a decompressed stream): unknown content is reported and walked
 * as pickles; false: an archive member, whose unrecognised bytes are plain data (tensor
 * storage). Only a member's full pickle walk to STOP makes it a pickle: a PROTO-like first byte
 * in tensor data is not enough. */
static stg_member_result dispatch(const uint8_t *buf, size_t len, const char *name_hint,
                                  bool top_level, stg_member_mode mode, stg_check_ctx *ctx)
{
    stg_report *r = ctx->report;
    stg_name_hint hint = stg_name_hint_of(name_hint);
    stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
    if (mode == STG_MEMBER_PICKLE || mode == STG_MEMBER_PICKLES) {
        stg_check_pickles(buf, len, 0,
                          mode == STG_MEMBER_PICKLE ? STG_PICKLE_MEMBER : STG_PICKLE_RAW, ctx);
        res.format = STG_FMT_PICKLE;
        res.pickle_based = true;
        return res;
    }
    if (mode == STG_MEMBER_TORCH01_STORAGES || mode == STG_MEMBER_TORCH01_TENSORS) {
        stg_containers_scan_torch01(buf, len, mode == STG_MEMBER_TORCH01_TENSORS, ctx);
        res.format = STG_FMT_PICKLE;
        res.pickle_based = true;
        return res;
    }
    if (hint.safetensors_index) {
        check_safetensors_index(buf, len, ctx);
        res.format = STG_FMT_SAFETENSORS_INDEX;
        return res;
    }
    if (hint.safetensors) {
        check_safetensors(buf, len, ctx);
        res.format = STG_FMT_SAFETENSORS;
        return res;
    }
    stg_sniff_kind kind = stg_sniff_kind_of(buf, len, &ctx->report->out_of_memory);
    switch (kind) {
    case STG_SNIFF_SAFETENSORS:
        check_safetensors(buf, len, ctx);
        res.format = STG_FMT_SAFETENSORS;
        return res;
    case STG_SNIFF_TORCH_LEGACY:
        stg_check_pickles(buf, len, 0, STG_PICKLE_TORCH_LEGACY, ctx);
        stg_polyglot_check_pickle(buf, len, ctx);
        res.format = STG_FMT_TORCH_LEGACY;
        res.pickle_based = true;
        return res;
    case STG_SNIFF_PICKLE: {
        if (!top_level && !stg_pickle_sniff_acts(buf, len, &ctx->report->out_of_memory)) {
            break;
        }
        res.format = check_pickle(buf, len, top_level ? STG_PICKLE_RAW : STG_PICKLE_MEMBER, &hint,
                                  ctx);
        stg_polyglot_check_pickle(buf, len, ctx);
        res.pickle_based = true;
        return res;
    }
    case STG_SNIFF_ZIP:
        /* Every reading a loader's zip reader takes; no usable directory fails closed. */
        (void)stg_containers_scan_zip_readers(buf, len, true, ctx, &res, &res.format);
        if (top_level) {
            stg_polyglot_check_zip_tar(buf, len, ctx, &res); /* torch.load's reading */
        }
        return res;
    case STG_SNIFF_NPY:
        res.format = STG_FMT_NUMPY;
        res.pickle_based = stg_check_npy(buf, len, 0, ctx);
        if (top_level) {
            stg_polyglot_check_tar(buf, len, ".npy", ctx);
        }
        return res;
    case STG_SNIFF_TAR: res.format = stg_containers_scan_tar(buf, len, ctx, &res); return res;
    case STG_SNIFF_GZIP:
    case STG_SNIFF_ZLIB:
    case STG_SNIFF_BZ2:
    case STG_SNIFF_XZ:
    case STG_SNIFF_LZMA: {
        /* joblib's compress= writes these (zlib, gzip, bz2, xz, lzma); its reader, like
         * Python's, decompresses the whole stream and unpickles the result. */
        bool recognised = true;
        stg_inflate_format fmt = kind == STG_SNIFF_GZIP   ? STG_INFLATE_GZIP
                                 : kind == STG_SNIFF_BZ2  ? STG_INFLATE_BZIP2
                                 : kind == STG_SNIFF_ZLIB ? STG_INFLATE_ZLIB
                                                          : STG_INFLATE_LZMA;
        const char *label = kind == STG_SNIFF_GZIP   ? "gzip"
                            : kind == STG_SNIFF_BZ2  ? "bzip2"
                            : kind == STG_SNIFF_ZLIB ? "zlib"
                            : kind == STG_SNIFF_XZ   ? "xz"
                                                     : "lzma";
        stg_member_result inner = stg_containers_scan_compressed(buf, len, fmt, label, ctx,
                                                                 &recognised);
        if (!recognised) {
            break; /* a zlib-looking header over something else: treat as unknown below */
        }
        res.pickle_based = inner.pickle_based;
        res.inflated = inner.inflated;
        stg_format own = kind == STG_SNIFF_GZIP   ? STG_FMT_GZIP
                         : kind == STG_SNIFF_BZ2  ? STG_FMT_BZ2
                         : kind == STG_SNIFF_ZLIB ? STG_FMT_ZLIB
                                                  : STG_FMT_XZ;
        res.format = inner.format == STG_FMT_JOBLIB || (hint.joblib && inner.pickle_based)
                         ? STG_FMT_JOBLIB
                         : own;
        return res;
    }
    case STG_SNIFF_JOBLIB_ZF: {
        stg_member_result inner = stg_containers_scan_zfile(buf, len, ctx);
        res.pickle_based = inner.pickle_based;
        res.inflated = inner.inflated;
        res.format = STG_FMT_JOBLIB;
        return res;
    }
    case STG_SNIFF_ZSTD: add_unscannable(ctx, "zstd-compressed"); return res;
    case STG_SNIFF_LZ4: add_unscannable(ctx, "lz4-compressed"); return res;
    case STG_SNIFF_GGUF:
        stg_report_add(r, STG_FORMAT_NOT_VALIDATED, STG_NO_OFFSET,
                       "GGUF is recognised but not validated");
        if (top_level) {
            stg_polyglot_check_tar(buf, len, "GGUF", ctx);
        }
        res.format = STG_FMT_GGUF;
        return res;
    case STG_SNIFF_UNKNOWN: break;
    }

    if (!top_level) {
        return res; /* plain member data (tensor storage, text files) */
    }
    /* Content at offset 0 is no known format. An archive may still sit at the end (bytes
     * prepended to a zip): Python's zipfile opens it, so it is scanned as a zip. */
    if (stg_containers_scan_zip_readers(buf, len, false, ctx, &res, &res.format)) {
        return res;
    }
    if (fallback_pickle_scan(buf, len, ctx)) {
        res.format = hint.joblib ? STG_FMT_JOBLIB : STG_FMT_PICKLE;
        res.pickle_based = true;
        return res;
    }
    if (name_hint == NULL && mode == STG_MEMBER_STREAM) {
        stg_report_add(r, STG_FORMAT_UNKNOWN, STG_NO_OFFSET,
                       "the decompressed content matches no known format");
        return res;
    }
    if (hint.onnx) {
        stg_report_add(r, STG_FORMAT_NOT_VALIDATED, STG_NO_OFFSET,
                       "ONNX is recognised by its name but not validated");
        res.format = STG_FMT_ONNX;
        return res;
    }
    if (hint.claims_pickle) {
        stg_report_add(r, STG_FORMAT_MISMATCH, STG_NO_OFFSET,
                       "the name claims a pickle-based model format but the content is no "
                       "known format");
        return res;
    }
    /* Text that no rule above claimed, not even as a pickle (a protocol-0 pickle is ASCII):
     * README, configs, code, tokenizer files. Nothing loads it as a model: no finding. */
    if (stg_sniff_is_text(buf, len)) {
        res.format = stg_sniff_is_json(buf, len, ctx->lim->max_json_depth, ctx->lim->max_memory)
                         ? STG_FMT_JSON
                         : STG_FMT_TEXT;
        return res;
    }
    stg_report_add(r, STG_FORMAT_UNKNOWN, STG_NO_OFFSET, "the content matches no known format");
    return res;
}

void stg_limits_clamp(stg_limits *lim)
{
    if (lim->max_nesting > STG_NESTING_CEILING) {
        lim->max_nesting = STG_NESTING_CEILING;
    }
    if (lim->max_findings > STG_FINDINGS_CEILING) {
        lim->max_findings = STG_FINDINGS_CEILING;
    }
    if (lim->max_pickle_stack > STG_PICKLE_STACK_CEILING) {
        lim->max_pickle_stack = STG_PICKLE_STACK_CEILING;
    }
    if (lim->max_pickle_memo > STG_PICKLE_MEMO_CEILING) {
        lim->max_pickle_memo = STG_PICKLE_MEMO_CEILING;
    }
    if (lim->max_pickle_string > STG_PICKLE_STRING_CEILING) {
        lim->max_pickle_string = STG_PICKLE_STRING_CEILING;
    }
    if (lim->max_inflate_bytes > STG_INFLATE_BYTES_CEILING) {
        lim->max_inflate_bytes = STG_INFLATE_BYTES_CEILING;
    }
    if (lim->max_inflate_ratio > STG_INFLATE_RATIO_CEILING) {
        lim->max_inflate_ratio = STG_INFLATE_RATIO_CEILING;
    }
}

/* true when every global the file's pickles name is on the built-in allowlist (docs/policy.md:
 * what torch.load(weights_only=True) accepts, nothing that can call, import or read attributes
 * from the data), so loading the file runs no code: then pickle_file is info. A global only the
 * caller allowed, a benign, dangerous, unknown or unresolved one, a nested loader, or a limit
 * that stopped the walk (globals past it are not all listed) keeps the warning. */
static bool pickle_weights_only(const stg_report *r)
{
    static const stg_code keep[] = {STG_PICKLE_GLOBAL_BENIGN,  STG_PICKLE_GLOBAL_DANGEROUS,
                                    STG_PICKLE_GLOBAL_UNKNOWN, STG_PICKLE_GLOBAL_UNRESOLVED,
                                    STG_PICKLE_NESTED,         STG_PICKLE_BUILD_ON_GLOBAL,
                                    STG_LIMIT_EXCEEDED,        STG_FINDINGS_TRUNCATED};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        if (stg_report_has(r, keep[i])) {
            return false;
        }
    }
    for (size_t i = 0; i < r->global_count; i++) {
        const stg_global *g = &r->globals[i];
        stg_policy_verdict v = stg_policy_classify(NULL, g->module, g->module_len, g->name,
                                                   g->name_len);
        if (v.klass != STG_GLOBAL_ALLOWED) {
            return false;
        }
    }
    return !r->out_of_memory;
}

void stg_check_buffer(const uint8_t *buf, size_t len, const char *name_hint, stg_check_ctx *ctx)
{
    /* A Git LFS pointer stands for content that is not here (a clone without `git lfs pull`):
     * whatever its name promises was not checked, so it is said first and fails the file. */
    stg_lfs_pointer ptr;
    if (stg_sniff_lfs_pointer(buf, len, &ptr)) {
        stg_report_add(ctx->report, STG_LFS_POINTER, 0,
                       "a Git LFS pointer (oid sha256:%s, size %llu), not the content it stands "
                       "for: fetch it (git lfs pull) and scan again",
                       ptr.oid, (unsigned long long)ptr.size);
        stg_report_set_format(ctx->report, STG_FMT_GIT_LFS_POINTER);
        stg_report_set_size(ctx->report, (uint64_t)len);
        return;
    }
    /* Every scan of content starts here: the limits it runs under are brought to the ceilings
     * once, and members inherit them. */
    stg_limits clamped = *ctx->lim;
    stg_limits_clamp(&clamped);
    const stg_limits *caller_lim = ctx->lim;
    ctx->lim = &clamped;
    /* top_level with the caller's name: the mode only matters for forced pickles and streams. */
    stg_member_result res = dispatch(buf, len, name_hint, true, STG_MEMBER_ARCHIVE, ctx);
    ctx->lim = caller_lim;
    if (res.pickle_based) {
        if (pickle_weights_only(ctx->report)) {
            /* the context decides: a file whose globals are all allowlisted runs no code */
            stg_report_add_sev(ctx->report, STG_PICKLE_FILE, STG_SEV_INFO, STG_NO_OFFSET,
                               "pickle-based file whose globals are all on the built-in "
                               "allowlist (weights only): loading it runs no code");
        } else {
            stg_report_add(ctx->report, STG_PICKLE_FILE, STG_NO_OFFSET,
                           "pickle-based file: loading it can run code in principle");
        }
    }
    stg_report_set_format(ctx->report, res.format);
    stg_report_set_size(ctx->report, (uint64_t)len);
}

/* "outer!inner" for a member of a member, so nested findings keep their whole path. A path
 * longer than STG_MEMBER_PATH_MAX keeps "..." and its last bytes: with at most
 * STG_NESTING_CEILING levels alive at once, the paths of one scan then hold at most
 * STG_NESTING_CEILING x STG_MEMBER_PATH_MAX bytes, not a sum that grows with the square of the
 * depth. */
char *stg_check_member_path(const stg_check_ctx *ctx, const char *member)
{
    const char *outer = ctx->member;
    size_t b = strlen(member);
    if (outer == NULL && b <= STG_MEMBER_PATH_MAX) {
        return stg_mem_strndup(member, b);
    }
    size_t a = outer != NULL ? strlen(outer) : 0;
    size_t full = outer != NULL ? a + 1 + b : b;
    size_t keep = full <= STG_MEMBER_PATH_MAX ? full : STG_MEMBER_PATH_MAX - 3;
    size_t skip = full - keep; /* bytes of "outer!member" left out at its start */
    char *p = stg_mem_alloc((full == keep ? keep : keep + 3) + 1);
    if (p == NULL) {
        return NULL;
    }
    char *w = p;
    if (skip > 0) {
        memcpy(w, "...", 3);
        w += 3;
    }
    if (outer != NULL && skip < a) {
        memcpy(w, outer + skip, a - skip);
        w += a - skip;
    }
    size_t sep_at = outer != NULL ? a : 0; /* index of '!' in the full path */
    if (outer != NULL && skip <= sep_at) {
        *w++ = '!';
    }
    size_t member_from = outer != NULL ? a + 1 : 0;
    size_t from = skip > member_from ? skip - member_from : 0;
    memcpy(w, member + from, b - from);
    w[b - from] = '\0';
    return p;
}

stg_member_result stg_check_member_ex(const uint8_t *buf, size_t len, const char *member,
                                      uint64_t member_offset, stg_member_mode mode,
                                      uint64_t inflate_budget, stg_check_ctx *ctx)
{
    stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
    char *path = stg_check_member_path(ctx, member);
    if (path == NULL) {
        ctx->report->out_of_memory = true;
        return res;
    }
    /* member_offset of a nested member is relative to the enclosing member's bytes; the
     * outermost one is a file offset. */
    uint32_t max_nesting = ctx->lim->max_nesting < STG_NESTING_CEILING ? ctx->lim->max_nesting
                                                                       : STG_NESTING_CEILING;
    if (ctx->depth + 1 > max_nesting) {
        stg_finding *f = stg_report_add(ctx->report, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
                                        "nesting deeper than max_nesting (%u): not scanned",
                                        (unsigned)max_nesting);
        stg_report_set_limit(ctx->report, f, "max_nesting");
        stg_report_set_member(ctx->report, f, path, member_offset);
        stg_mem_free(path);
        return res;
    }
    stg_report *sub = stg_report_new(ctx->lim);
    if (sub == NULL) {
        ctx->report->out_of_memory = true;
        stg_mem_free(path);
        return res;
    }
    /* The member's subtree may inflate what its container has left (containers.h). */
    stg_limits sub_lim = *ctx->lim;
    stg_limits_clamp(&sub_lim); /* members reached without stg_check_buffer (polyglot scans) */
    if (inflate_budget < sub_lim.max_inflate_bytes) {
        sub_lim.max_inflate_bytes = inflate_budget;
    }
    stg_check_ctx inner = *ctx;
    inner.lim = &sub_lim;
    inner.report = sub;
    inner.depth = ctx->depth + 1;
    inner.member = path;
    inner.member_offset = member_offset;
    bool stream = mode == STG_MEMBER_STREAM;
    res = dispatch(buf, len, stream ? NULL : member, stream, mode, &inner);
    stg_report_merge(ctx->report, sub, path, member_offset);
    stg_report_free(sub);
    stg_mem_free(path);
    return res;
}

void stg_check_member(const uint8_t *buf, size_t len, const char *member, uint64_t member_offset,
                      stg_check_ctx *ctx)
{
    /* Bytes handed over by the pickle scanner (nested loaders) get what this context has. */
    (void)stg_check_member_ex(buf, len, member, member_offset, STG_MEMBER_ARCHIVE,
                              ctx->lim->max_inflate_bytes, ctx);
}
