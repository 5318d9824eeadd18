/* The safetensors pipeline (see safetensors.h). */
#include "safetensors.h"

#include "polyglot.h"

bool stg_st_pipeline(stg_st_door *d, stg_check_ctx *ctx, stg_st_header *h)
{
    stg_st_header local;
    stg_st_header *hh = h;
    if (hh == NULL) {
        stg_st_header_init(&local);
        hh = &local;
    }
    if (hh->hash_seed == 0) {
        hh->hash_seed = ctx->hash_seed;
    }
    bool go_on = stg_st_stages(d, ctx->lim, ctx->report, hh);
    if (go_on && d->image != NULL) {
        size_t len = 0;
        bool stop = false;
        const uint8_t *bytes = d->image(d, &len, &stop);
        go_on = !stop;
        if (go_on && bytes != NULL && len > 0) {
            stg_polyglot_check_safetensors(bytes, len, ctx);
        }
    } else if (go_on && d->polyglot != NULL) {
        go_on = d->polyglot(d, ctx);
    }
    if (h == NULL) {
        stg_st_header_release(&local);
    }
    return go_on;
}

static const uint8_t *buffer_header(stg_st_door *d, uint64_t n)
{
    (void)n;
    return d->first + 8; /* a whole buffer: `first` is all of it */
}

static const uint8_t *buffer_image(stg_st_door *d, size_t *len, bool *stop)
{
    *stop = false;
    *len = (size_t)d->total;
    return d->first;
}

void stg_st_scan(const uint8_t *buf, size_t len, stg_check_ctx *ctx, stg_st_header *h)
{
    stg_st_door d = {buf,   len,          (uint64_t)len, buffer_header, false,
                     false, buffer_image, NULL,          NULL};
    (void)stg_st_pipeline(&d, ctx, h);
}
