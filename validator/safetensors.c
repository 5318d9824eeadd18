/* The three safetensors stages in their order (see safetensors.h): the one composition every
 * door runs (dispatch/safetensors.c adds the polyglot checks). */
#include "safetensors.h"

bool stg_st_stages(stg_st_door *d, const stg_limits *lim, stg_report *r, stg_st_header *h)
{
    uint64_t n = 0;
    size_t avail = d->first_len < 8 ? d->first_len : 8;
    if (d->frame_failed ||
        stg_st_check_frame(d->first, avail, d->total, lim, r, &n) != STG_ST_FRAME_OK) {
        return true;
    }
    /* framing guarantees 8 + n <= total */
    bool schema_ok;
    if (d->parsed) {
        schema_ok = h->schema_ok;
    } else {
        const uint8_t *hdr = d->header(d, n);
        if (hdr == NULL) {
            return false;
        }
        schema_ok = stg_st_parse_header(hdr, n, lim, r, h);
    }
    if (schema_ok) {
        stg_st_check_layout(h, d->total - 8u - n, lim, r);
    }
    return true;
}

static const uint8_t *buffer_header(stg_st_door *d, uint64_t n)
{
    (void)n;
    return d->first + 8; /* a whole buffer: `first` is all of it */
}

void stg_st_validate(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r,
                     stg_st_header *h)
{
    stg_st_header local;
    stg_st_header *hh = h;
    if (hh == NULL) {
        stg_st_header_init(&local);
        hh = &local;
    }
    stg_st_door d = {buf, len, (uint64_t)len, buffer_header, false, false, NULL, NULL, NULL};
    (void)stg_st_stages(&d, lim, r, hh);
    if (h == NULL) {
        stg_st_header_release(&local);
    }
}
