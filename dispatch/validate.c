/* The public stg_validate_buffer: the safetensors pipeline (safetensors.h) over one buffer. */
#include "../validator/limits.h"
#include "check.h"
#include "safetensors.h"

stg_status stg_validate_buffer(const void *buf, size_t len, const stg_limits *lim, stg_report **out)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = NULL;
    if (buf == NULL && len != 0) {
        return STG_E_BAD_ARG;
    }
    stg_limits def;
    if (lim == NULL) {
        stg_limits_default(&def);
    } else if (stg_limits_accept(lim, &def) != STG_OK) {
        return STG_E_STRUCT_VERSION;
    }
    stg_limits_clamp(&def); /* the polyglot scan of an appended archive recurses */
    lim = &def;
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return STG_E_NOMEM;
    }
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, lim, r);
    stg_st_scan(buf, len, &ctx, NULL);
    stg_report_set_format(r, STG_FMT_SAFETENSORS);
    stg_report_set_size(r, (uint64_t)len);
    stg_report_finish(r);
    *out = r;
    return STG_OK;
}
