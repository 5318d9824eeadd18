/* The three safetensors stages over one whole buffer, and the public stg_validate_buffer (the
 * stages, then the polyglot checks of validator/polyglot.h). */
#include <string.h>

#include "check.h"
#include "limits.h"
#include "polyglot.h"
#include "safetensors.h"

void stg_st_validate(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r,
                     stg_st_header *h)
{
    stg_st_header local;
    stg_st_header *hh = h;
    if (hh == NULL) {
        stg_st_header_init(&local);
        hh = &local;
    }
    uint64_t n = 0;
    size_t avail = len < 8 ? len : 8;
    if (stg_st_check_frame(buf, avail, (uint64_t)len, lim, r, &n) == STG_ST_FRAME_OK) {
        /* framing guarantees 8 + n <= len */
        if (stg_st_parse_header(buf + 8, n, lim, r, hh)) {
            stg_st_check_layout(hh, (uint64_t)len - 8u - n, lim, r);
        }
    }
    if (h == NULL) {
        stg_st_header_release(&local);
    }
}

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
    stg_st_validate(buf, len, lim, r, NULL);
    if (len > 0) {
        /* what else the same bytes are to other loaders (validator/polyglot.h) */
        stg_check_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.lim = lim;
        ctx.report = r;
        stg_polyglot_check_safetensors(buf, len, &ctx);
    }
    stg_report_set_format(r, STG_FMT_SAFETENSORS);
    stg_report_set_size(r, (uint64_t)len);
    stg_report_finish(r);
    *out = r;
    return STG_OK;
}
