/* Capped inflate over zlib (see inflate.h). The output grows geometrically through stg_mem;
 * before each growth the caps are checked, so memory never passes max_out. */
#include "inflate.h"

#include <string.h>

#include "mem.h"

void stg_inflate_free(stg_inflate_out *out)
{
    stg_mem_free(out->data);
    memset(out, 0, sizeof *out);
}

#ifndef STG_WITH_ZLIB

bool stg_inflate_available(void)
{
    return false;
}

stg_inflate_result stg_inflate(const uint8_t *in, size_t in_len, stg_inflate_format fmt,
                               uint64_t max_out, uint32_t max_ratio, stg_inflate_out *out)
{
    (void)in;
    (void)in_len;
    (void)fmt;
    (void)max_out;
    (void)max_ratio;
    memset(out, 0, sizeof *out);
    return STG_INFLATE_UNAVAILABLE;
}

#else

#include <zlib.h>

bool stg_inflate_available(void)
{
    return true;
}

/* zlib's own state and window go through stg_mem like every other allocation of the library,
 * so a test build can fail them too. */
static voidpf zlib_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return stg_mem_calloc(items, size);
}

static void zlib_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    stg_mem_free(p);
}

/* zlib counts in uInt: feed and drain at most this much per call. */
#define CHUNK_MAX ((size_t)1 << 30)

static bool over_ratio(size_t produced, size_t in_len, uint32_t max_ratio)
{
    if (max_ratio == 0 || produced <= STG_INFLATE_RATIO_FLOOR) {
        return false;
    }
    /* produced > in_len x max_ratio, by division so the product cannot overflow: for integers,
     * p > q x r  <=>  (p - 1) / r >= q (p >= 1 here). */
    return (uint64_t)(produced - 1) / max_ratio >= (uint64_t)in_len;
}

/* Makes room for at least one more byte, up to max_out. */
static stg_inflate_result grow(stg_inflate_out *out, size_t *cap, uint64_t max_out)
{
    if ((uint64_t)out->len >= max_out) {
        return STG_INFLATE_TOO_BIG;
    }
    size_t want = *cap < 4096 ? 4096 : *cap * 2;
    if (want < *cap || (uint64_t)want > max_out) {
        want = (size_t)max_out;
    }
    uint8_t *p = stg_mem_realloc(out->data, want);
    if (p == NULL) {
        return STG_INFLATE_NOMEM;
    }
    out->data = p;
    *cap = want;
    return STG_INFLATE_OK;
}

stg_inflate_result stg_inflate(const uint8_t *in, size_t in_len, stg_inflate_format fmt,
                               uint64_t max_out, uint32_t max_ratio, stg_inflate_out *out)
{
    memset(out, 0, sizeof *out);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    zs.zalloc = zlib_alloc;
    zs.zfree = zlib_free;
    int wbits = fmt == STG_INFLATE_RAW ? -15 : fmt == STG_INFLATE_GZIP ? 15 + 16 : 15;
    if (inflateInit2(&zs, wbits) != Z_OK) {
        return STG_INFLATE_NOMEM;
    }
    size_t cap = 0, pos = 0;
    stg_inflate_result res = STG_INFLATE_OK;
    for (;;) {
        if (out->len == cap) {
            res = grow(out, &cap, max_out);
            if (res != STG_INFLATE_OK) {
                break;
            }
        }
        size_t in_chunk = in_len - pos < CHUNK_MAX ? in_len - pos : CHUNK_MAX;
        size_t out_chunk = cap - out->len < CHUNK_MAX ? cap - out->len : CHUNK_MAX;
        /* zlib's interface is not const-correct; it never writes through next_in. */
        zs.next_in = (Bytef *)(uintptr_t)(in + pos);
        zs.avail_in = (uInt)in_chunk;
        zs.next_out = out->data + out->len;
        zs.avail_out = (uInt)out_chunk;
        int rc = inflate(&zs, Z_NO_FLUSH);
        pos += in_chunk - zs.avail_in;
        out->len += out_chunk - zs.avail_out;
        if (over_ratio(out->len, in_len, max_ratio)) {
            res = STG_INFLATE_RATIO;
            break;
        }
        if (rc == Z_STREAM_END) {
            /* Python's gzip reads concatenated members; a zlib or raw stream ends here. */
            if (fmt == STG_INFLATE_GZIP && in_len - pos >= 2 && in[pos] == 0x1f &&
                in[pos + 1] == 0x8b) {
                /* Cannot fail: it only checks that zs was initialised, which it was. */
                (void)inflateReset(&zs);
                continue;
            }
            break;
        }
        if (rc == Z_OK || rc == Z_BUF_ERROR) {
            /* (out_chunk > 0 always: the buffer was grown past out->len above) */
            if (in_chunk - zs.avail_in == 0 && out_chunk - zs.avail_out == 0 && pos < in_len) {
                res = STG_INFLATE_CORRUPT; /* no progress: never loop forever */
                break;
            }
            if (zs.avail_out == 0 || pos < in_len) {
                continue;
            }
            res = STG_INFLATE_TRUNCATED;
            break;
        }
        res = rc == Z_MEM_ERROR ? STG_INFLATE_NOMEM : STG_INFLATE_CORRUPT;
        break;
    }
    out->consumed = pos;
    out->error_offset = pos;
    inflateEnd(&zs);
    return res;
}

#endif
