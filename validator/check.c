/* One buffer, one report: sniff the format by content (names only as DESIGN.md section 6's
 * hints) and run the rules of that format. Containers hand their members back to
 * stg_check_member, which scans them one level deeper (max_nesting) into a report of their own
 * and merges it with `member` set, so every finding inside an archive says where it is. */
#include "check.h"

#include "../parser/mem.h"
#include "safetensors.h"
#include "sniff.h"

/* Runs the rules for one sniffed payload. top_level: a file or buffer the caller handed us
 * (name hints apply, unknown content is reported) rather than an archive member. */
static stg_format dispatch(const uint8_t *buf, size_t len, const char *name_hint, bool top_level,
                           stg_check_ctx *ctx)
{
    stg_report *r = ctx->report;
    stg_name_hint hint = stg_name_hint_of(name_hint);
    if (hint.safetensors) {
        stg_st_validate(buf, len, ctx->lim, r, NULL);
        return STG_FMT_SAFETENSORS;
    }
    stg_sniff_kind kind = stg_sniff_kind_of(buf, len);
    switch (kind) {
    case STG_SNIFF_SAFETENSORS:
        stg_st_validate(buf, len, ctx->lim, r, NULL);
        return STG_FMT_SAFETENSORS;
    case STG_SNIFF_PICKLE:
    case STG_SNIFF_TORCH_LEGACY:
    case STG_SNIFF_ZIP:
    case STG_SNIFF_NPY:
    case STG_SNIFF_TAR:
    case STG_SNIFF_GZIP:
    case STG_SNIFF_ZLIB:
    case STG_SNIFF_BZ2:
    case STG_SNIFF_XZ:
    case STG_SNIFF_LZMA:
    case STG_SNIFF_ZSTD:
    case STG_SNIFF_LZ4:
        /* Not scanned yet by this dispatcher: fail closed. */
        stg_report_add(r, STG_FORMAT_UNSCANNABLE, STG_SEV_ERROR, 0,
                       "this format is recognised but cannot be scanned");
        return stg_sniff(buf, len, NULL);
    case STG_SNIFF_GGUF:
        stg_report_add(r, STG_FORMAT_NOT_VALIDATED, STG_SEV_WARNING, STG_NO_OFFSET,
                       "GGUF is recognised but not validated");
        return STG_FMT_GGUF;
    case STG_SNIFF_UNKNOWN:
        break;
    }
    if (!top_level) {
        return STG_FMT_UNKNOWN;
    }
    if (hint.onnx) {
        stg_report_add(r, STG_FORMAT_NOT_VALIDATED, STG_SEV_WARNING, STG_NO_OFFSET,
                       "ONNX is recognised by its name but not validated");
        return STG_FMT_ONNX;
    }
    if (hint.claims_pickle) {
        stg_report_add(r, STG_FORMAT_MISMATCH, STG_SEV_ERROR, STG_NO_OFFSET,
                       "the name claims a pickle-based model format but the content is no "
                       "known format");
        return STG_FMT_UNKNOWN;
    }
    stg_report_add(r, STG_FORMAT_UNKNOWN, STG_SEV_WARNING, STG_NO_OFFSET,
                   "the content matches no known format");
    return STG_FMT_UNKNOWN;
}

void stg_check_buffer(const uint8_t *buf, size_t len, const char *name_hint, stg_check_ctx *ctx)
{
    stg_format f = dispatch(buf, len, name_hint, true, ctx);
    stg_report_set_format(ctx->report, f);
    stg_report_set_size(ctx->report, (uint64_t)len);
}

void stg_check_member(const uint8_t *buf, size_t len, const char *member, uint64_t member_offset,
                      stg_check_ctx *ctx)
{
    if (ctx->depth + 1 > ctx->lim->max_nesting) {
        stg_finding *f = stg_report_add(ctx->report, STG_LIMIT_EXCEEDED, STG_SEV_ERROR,
                                        STG_NO_OFFSET,
                                        "nesting deeper than max_nesting (%u): not scanned",
                                        (unsigned)ctx->lim->max_nesting);
        stg_report_set_limit(ctx->report, f, "max_nesting");
        stg_report_set_member(ctx->report, f, member, member_offset);
        return;
    }
    stg_report *sub = stg_report_new(ctx->lim);
    if (sub == NULL) {
        ctx->report->out_of_memory = true;
        return;
    }
    stg_check_ctx inner = *ctx;
    inner.report = sub;
    inner.depth = ctx->depth + 1;
    inner.member = member;
    inner.member_offset = member_offset;
    (void)dispatch(buf, len, member, false, &inner);
    stg_report_merge(ctx->report, sub, member, member_offset);
    stg_report_free(sub);
}
