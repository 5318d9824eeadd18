/* The dispatcher: one buffer, one report. The table of formats (formats.c) says what the bytes
 * are and which rules run; payloads found inside (archive members, decompressed streams, bytes
 * handed to nested loaders) come back through ctx->scan (validator/ctx.h), which scans them
 * one level deeper (the one depth guard: max_nesting, at most STG_NESTING_CEILING) into a
 * report of their own and merges it with the member path set, so every finding inside an
 * archive says where it is.
 *
 * pickle_file (warning, no offset) is added once per top-level file that is pickle-based:
 * pickle, joblib, torch-legacy, torch-zip, torch-tar, an object-dtype .npy, or any archive or
 * compressed stream in which a pickle was scanned. */
#include "check.h"

#include <string.h>

#include "../parser/mem.h"
#include "../validator/pickle_policy.h"
#include "../validator/pickle_scan.h"
#include "../validator/template.h"
#include "containers.h"
#include "formats.h"
#include "sniff.h"

/* The generic fallback for content no rule recognised but that a loader may still unpickle (a
 * stream without STOP still runs every opcode before the missing one): walk it as pickles into
 * a scratch report. true (and the findings merged) when it imports a named global. An EXT code
 * (a global by number, which no reader resolves without a registry the program filled) counts
 * only under a name that claims a pickle: two bytes such as 0x82 0xa6 are how msgpack starts a
 * two-key map ({"params", "batch_stats"}: a Flax checkpoint), and such a file is no pickle. */
static bool fallback_pickle_scan(const uint8_t *buf, size_t len, bool claims_pickle,
                                 stg_check_ctx *ctx)
{
    stg_report *scratch = stg_report_new(ctx->lim);
    if (scratch == NULL) {
        stg_report_oom(ctx->report);
        return false;
    }
    stg_check_ctx inner = *ctx;
    inner.report = scratch;
    stg_check_pickles(buf, len, 0, STG_PICKLE_RAW, &inner);
    /* A limit the walk hit leaves the content undecided: a loader has no such limit, so the
     * limit is reported (fails closed) rather than the content called unknown. */
    bool found = scratch->global_count > 0 ||
                 (claims_pickle && stg_report_has(scratch, STG_PICKLE_GLOBAL_UNRESOLVED)) ||
                 stg_report_has(scratch, STG_LIMIT_EXCEEDED);
    if (found) {
        stg_report_merge(ctx->report, scratch, NULL, STG_NO_OFFSET);
    }
    stg_report_free(scratch);
    return found;
}

/* The payloads whose mode says how to read them, whatever they look like. */
static bool scan_forced(const uint8_t *buf, size_t len, stg_member_mode mode, stg_check_ctx *ctx,
                        stg_member_result *res)
{
    switch (mode) {
    case STG_MEMBER_PICKLE:
    case STG_MEMBER_PICKLES:
        stg_check_pickles(buf, len, 0,
                          mode == STG_MEMBER_PICKLE ? STG_PICKLE_MEMBER : STG_PICKLE_RAW, ctx);
        break;
    case STG_MEMBER_TORCH01_STORAGES:
    case STG_MEMBER_TORCH01_TENSORS:
        stg_containers_scan_torch01(buf, len, mode == STG_MEMBER_TORCH01_TENSORS, ctx);
        break;
    case STG_MEMBER_ARCHIVE:
    case STG_MEMBER_STREAM: return false;
    }
    res->format = STG_FMT_PICKLE;
    res->pickle_based = true;
    return true;
}

/* Top-level content at offset 0 that no entry claimed: an archive at its end, a pickle stream a
 * loader would still run, ONNX (by name or content), what its name claims, text; else
 * format_unknown. */
static stg_member_result scan_unknown(const uint8_t *buf, size_t len, const stg_dispatch_args *a,
                                      stg_check_ctx *ctx)
{
    stg_report *r = ctx->report;
    stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
    /* An archive may still sit at the end (bytes prepended to a zip): Python's zipfile opens
     * it, so it is scanned as a zip. */
    stg_archive_facts facts = {false, false, false, false};
    if (stg_containers_scan_zip_readers(buf, len, false, ctx, &res, &facts)) {
        res.format = stg_format_zip_label(&facts);
        /* An ONNX model (by name or content) whose last bytes are a zip: onnxruntime reads the
         * model, zipfile the archive; both readings are checked, the label stays the zip's. */
        const stg_format_entry *onnx = stg_format_last_resort(buf, len, a->name_hint);
        if (onnx != NULL) {
            stg_member_result ignored = {STG_FMT_UNKNOWN, false, 0};
            (void)onnx->scan(onnx, buf, len, a, ctx, &ignored);
        }
        return res;
    }
    if (fallback_pickle_scan(buf, len, stg_name_hint_claims_pickle(&a->hint), ctx)) {
        res.format = stg_name_hint_pickle_label(&a->hint, STG_FMT_PICKLE);
        res.pickle_based = true;
        return res;
    }
    if (a->name_hint == NULL && a->mode == STG_MEMBER_STREAM) {
        stg_report_add(r, STG_FORMAT_UNKNOWN, STG_NO_OFFSET,
                       "the decompressed content matches no known format");
        return res;
    }
    /* ONNX (no magic): by its name, or by bytes that walk as a ModelProto */
    const stg_format_entry *last = stg_format_last_resort(buf, len, a->name_hint);
    if (last != NULL) {
        (void)last->scan(last, buf, len, a, ctx, &res);
        return res;
    }
    if (stg_name_hint_claims_pickle(&a->hint)) {
        stg_report_add(r, STG_FORMAT_MISMATCH, STG_NO_OFFSET,
                       "the name claims a pickle-based model format but the content is no "
                       "known format");
        return res;
    }
    /* A name the format table lists as claiming its format (.gguf) claims it as the pickle
     * suffixes do; a name that decides a text format (config.json, .py, .yaml) whose scan
     * turned the bytes down claims nothing: they are judged as unnamed bytes. */
    const stg_format_entry *claimed = a->hint.rule != NULL && a->hint.rule->power == STG_NAME_CLAIMS
                                          ? a->hint.entry
                                          : NULL;
    if (claimed != NULL) {
        stg_report_add(r, STG_FORMAT_MISMATCH, STG_NO_OFFSET,
                       "the name claims a %s file but the content is no known format",
                       claimed->name);
        return res;
    }
    /* Text that no rule above claimed, not even as a pickle (a protocol-0 pickle is ASCII):
     * README, configs, code, tokenizer files. Nothing loads it as a model: no finding. */
    if (stg_sniff_is_text(buf, len)) {
        res.format = stg_sniff_is_json(buf, len, ctx->lim->max_json_depth, ctx->lim->max_memory)
                         ? STG_FMT_JSON
                         : STG_FMT_TEXT;
        /* tokenizer_config.json (and processor / chat_template.json) carry chat templates
         * that transformers and llama.cpp's converters render: each is checked */
        if (res.format == STG_FMT_JSON) {
            (void)stg_template_check_json(buf, len, ctx->lim, ctx->hash_seed, r);
        }
        return res;
    }
    stg_report_add(r, STG_FORMAT_UNKNOWN, STG_NO_OFFSET, "the content matches no known format");
    return res;
}

/* Runs the rules for one payload. top_level: a whole file as a loader reads it (the buffer
 * handed to stg_check_buffer, or a decompressed stream): unknown content is reported and walked
 * as pickles; false: an archive member, whose unrecognised bytes are plain data (tensor
 * storage). */
static stg_member_result dispatch(const uint8_t *buf, size_t len, const char *name_hint,
                                  bool top_level, stg_member_mode mode, stg_check_ctx *ctx)
{
    stg_dispatch_args a = {stg_name_hint_of(name_hint), name_hint, top_level, mode};
    stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
    if (scan_forced(buf, len, mode, ctx, &res)) {
        return res;
    }
    const stg_format_entry *e = stg_name_hint_decides(&a.hint);
    if (e != NULL && e->scan(e, buf, len, &a, ctx, &res)) {
        return res;
    }
    /* No name decided, or the format the name decides turned the bytes down (a config.json or
     * .py that is no text): the content decides, as for any other bytes. */
    const stg_format_entry *named = e;
    bool oom = false;
    e = stg_format_sniff(buf, len, &oom);
    if (oom) {
        stg_report_oom(ctx->report);
    }
    if (e != NULL && e != named && e->scan(e, buf, len, &a, ctx, &res)) {
        return res;
    }
    if (!top_level) {
        return res; /* plain member data (tensor storage, text files) */
    }
    return scan_unknown(buf, len, &a, ctx);
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

static stg_member_result scan_member(stg_check_ctx *ctx, const stg_payload *p);

void stg_check_ctx_init(stg_check_ctx *ctx, const stg_limits *lim, stg_report *report)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->lim = lim;
    ctx->report = report;
    ctx->scan = scan_member;
}

/* true when every global the file's pickles name is on the built-in allowlist (docs/policy.md:
 * what torch.load(weights_only=True) accepts, nothing that can call, import or read attributes
 * from the data), so loading the file runs no code: then pickle_file is info. A global only the
 * caller allowed, a benign, dangerous, unknown or unresolved one, a nested loader, or a limit
 * that stopped the walk (globals past it are not all listed), or bytes a loader reads whose
 * extent is unknown (so not every byte it executes was walked) keeps the warning. */
static bool pickle_weights_only(const stg_report *r)
{
    static const stg_code keep[] = {STG_PICKLE_GLOBAL_BENIGN,   STG_PICKLE_GLOBAL_DANGEROUS,
                                    STG_PICKLE_GLOBAL_UNKNOWN,  STG_PICKLE_GLOBAL_UNRESOLVED,
                                    STG_PICKLE_NESTED,          STG_PICKLE_BUILD_ON_GLOBAL,
                                    STG_LIMIT_EXCEEDED,         STG_FINDINGS_TRUNCATED,
                                    STG_PICKLE_SKIP_UNRESOLVED, STG_TORCH01_STORAGE_UNRESOLVED};
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
    ctx->scan = scan_member;
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

stg_format stg_sniff(const uint8_t *buf, size_t len, const char *name_hint)
{
    return stg_format_quick_label(buf, len, name_hint);
}

/* The one depth guard: a payload past min(max_nesting, STG_NESTING_CEILING) levels is reported
 * (limit_exceeded, with its member path) and not scanned. */
static bool depth_allows(stg_check_ctx *ctx, stg_member_link *link, uint64_t member_offset)
{
    uint32_t max_nesting = ctx->lim->max_nesting < STG_NESTING_CEILING ? ctx->lim->max_nesting
                                                                       : STG_NESTING_CEILING;
    if (ctx->depth + 1 <= max_nesting) {
        return true;
    }
    stg_finding *f = stg_report_add(ctx->report, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
                                    "nesting deeper than max_nesting (%u): not scanned",
                                    (unsigned)max_nesting);
    stg_report_set_limit(ctx->report, f, "max_nesting");
    link->path = stg_member_path_render(link->up, link->name);
    if (link->path == NULL) {
        stg_report_oom(ctx->report);
    }
    stg_report_set_member(ctx->report, f, link->path, member_offset);
    return false;
}

/* ctx->scan: a payload one level deeper, into a report of its own merged with its path. */
static stg_member_result scan_member(stg_check_ctx *ctx, const stg_payload *p)
{
    stg_member_result res = {STG_FMT_UNKNOWN, false, 0};
    /* offset of a nested member is relative to the enclosing member's bytes; the outermost
     * one is a file offset. */
    stg_member_link link = {ctx->member, p->name, NULL};
    stg_report *sub = NULL;
    if (!depth_allows(ctx, &link, p->offset)) {
        goto done;
    }
    sub = stg_report_new(ctx->lim);
    if (sub == NULL) {
        stg_report_oom(ctx->report);
        goto done;
    }
    /* The member's subtree may inflate what its container has left (containers.h). */
    stg_limits sub_lim = *ctx->lim;
    stg_limits_clamp(&sub_lim); /* members reached without stg_check_buffer (polyglot scans) */
    if (p->inflate_budget < sub_lim.max_inflate_bytes) {
        sub_lim.max_inflate_bytes = p->inflate_budget;
    }
    stg_check_ctx inner = *ctx;
    inner.lim = &sub_lim;
    inner.report = sub;
    inner.depth = ctx->depth + 1;
    inner.member = &link;
    inner.member_offset = p->offset;
    bool stream = p->mode == STG_MEMBER_STREAM;
    res = dispatch(p->buf, p->len, stream ? NULL : p->name, stream, p->mode, &inner);
    /* The path is rendered only when something inside the member is reported. */
    const char *path = sub->count > 0 || sub->global_count > 0 || sub->truncated > 0
                           ? stg_ctx_member_path(&inner)
                           : NULL;
    stg_report_merge(ctx->report, sub, path, p->offset);
done:
    stg_report_free(sub);
    stg_mem_free(link.path);
    return res;
}
