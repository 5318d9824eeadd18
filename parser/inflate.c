/* Capped decompression over zlib, liblzma and libbz2 (see inflate.h). The output grows
 * geometrically through stg_mem; before each growth the caps are checked, so memory never passes
 * max_out. Each library's own state goes through stg_mem too, so a test build can fail it. */
#include "inflate.h"

#include <string.h>

#include "codec_libs.h"
#include "cursor.h"
#include "mem.h"

void stg_inflate_free(stg_inflate_out *out)
{
    stg_mem_free(out->data);
    memset(out, 0, sizeof *out);
}

bool stg_inflate_format_available(stg_inflate_format fmt)
{
    /* Built with the library and able to load it (codec_libs.h: loaded on this first ask). */
    switch (fmt) {
    case STG_INFLATE_RAW:
    case STG_INFLATE_ZLIB:
    case STG_INFLATE_GZIP:
#ifdef STG_WITH_ZLIB
        return stg_zlib() != NULL;
#else
        return false;
#endif
    case STG_INFLATE_LZMA:
    case STG_INFLATE_ZIP_LZMA:
#ifdef STG_WITH_LZMA
        return stg_lzma() != NULL;
#else
        return false;
#endif
    case STG_INFLATE_BZIP2:
#ifdef STG_WITH_BZIP2
        return stg_bz2() != NULL;
#else
        return false;
#endif
    }
    return false;
}

bool stg_inflate_available(void)
{
    return stg_inflate_format_available(STG_INFLATE_ZLIB);
}

/* The libraries count in 32-bit units: feed and drain at most this much per call. */
#define CHUNK_MAX ((size_t)1 << 30)

#if defined(STG_WITH_ZLIB) || defined(STG_WITH_LZMA) || defined(STG_WITH_BZIP2)
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

static size_t chunk(size_t n)
{
    return n < CHUNK_MAX ? n : CHUNK_MAX;
}
#endif

/* ---------------------------------------------------------------- the decoders
 * One interface over the three libraries, so the caps, the output growth and the stream
 * concatenation rules live in one loop (run, below). */

#if defined(STG_WITH_ZLIB) || defined(STG_WITH_LZMA) || defined(STG_WITH_BZIP2)

typedef enum step_kind {
    STEP_MORE = 0, /* progress (or none): call again */
    STEP_END,      /* the current stream ended */
    STEP_FAIL      /* *err says why */
} step_kind;

typedef struct decoder {
    stg_inflate_format fmt;
    bool open;
#ifdef STG_WITH_ZLIB
    z_stream zs;
#endif
#ifdef STG_WITH_LZMA
    lzma_stream ls;
    lzma_allocator lalloc;
    lzma_options_lzma lzma1; /* STG_INFLATE_ZIP_LZMA: the member's properties */
#endif
    const uint8_t *props; /* STG_INFLATE_ZIP_LZMA: its 5 property bytes */
#ifdef STG_WITH_BZIP2
    bz_stream bs;
#endif
} decoder;

#ifdef STG_WITH_ZLIB
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
#endif

#ifdef STG_WITH_LZMA
/* Not zeroed: liblzma clears what it needs itself, and a dictionary it never fills must cost
 * no page faults. */
static void *lzma_mem_alloc(void *opaque, size_t nmemb, size_t size)
{
    (void)opaque;
    return size != 0 && nmemb > SIZE_MAX / size ? NULL : stg_mem_alloc(nmemb * size);
}

static void lzma_mem_free(void *opaque, void *p)
{
    (void)opaque;
    stg_mem_free(p);
}

static stg_inflate_result lzma_status(lzma_ret rc)
{
    /* (if/else, not a switch: the enum grows between liblzma versions) */
    if (rc == LZMA_MEM_ERROR) {
        return STG_INFLATE_NOMEM;
    }
    if (rc == LZMA_MEMLIMIT_ERROR) {
        return STG_INFLATE_TOO_BIG;
    }
    return rc == LZMA_BUF_ERROR ? STG_INFLATE_TRUNCATED : STG_INFLATE_CORRUPT;
}
#endif

#ifdef STG_WITH_BZIP2
/* Not zeroed either: a stream allocates its block-size tables (up to 3.6 MiB) when its header
 * is read, and a file of many empty streams must not pay for clearing them each time. */
static void *bz_alloc(void *opaque, int items, int size)
{
    (void)opaque;
    if (items < 0 || size < 0 || (size != 0 && (size_t)items > SIZE_MAX / (size_t)size)) {
        return NULL;
    }
    return stg_mem_alloc((size_t)items * (size_t)size);
}

static void bz_free(void *opaque, void *p)
{
    (void)opaque;
    stg_mem_free(p);
}
#endif

#ifdef STG_WITH_LZMA
/* A raw LZMA1 decoder over the member's properties, as liblzma's lzma_properties_decode reads
 * them for zipfile: one byte (pb * 5 + lp) * 9 + lc, then the dictionary size (little-endian).
 * liblzma itself refuses lc + lp > 4. A raw decoder has no memory limit: the dictionary it would
 * allocate is capped here as the xz and lzma-alone decoders are. */
static lzma_ret zip_lzma_begin(decoder *d)
{
    uint8_t b = d->props[0];
    uint32_t dict = (uint32_t)d->props[1] | (uint32_t)d->props[2] << 8 |
                    (uint32_t)d->props[3] << 16 | (uint32_t)d->props[4] << 24;
    if (b > (4 * 5 + 4) * 9 + 8) {
        return LZMA_OPTIONS_ERROR;
    }
    if (dict > STG_INFLATE_LZMA_MEMLIMIT) {
        return LZMA_MEMLIMIT_ERROR;
    }
    memset(&d->lzma1, 0, sizeof d->lzma1);
    d->lzma1.dict_size = dict;
    d->lzma1.pb = b / 45u;
    d->lzma1.lp = b % 45u / 9u;
    d->lzma1.lc = b % 9u;
    const lzma_filter filters[2] = {{LZMA_FILTER_LZMA1, &d->lzma1}, {LZMA_VLI_UNKNOWN, NULL}};
    return stg_lzma()->raw_decoder(&d->ls, filters);
}
#endif

/* Starts one stream. */
static stg_inflate_result dec_begin(decoder *d)
{
    d->open = false;
    switch (d->fmt) {
    case STG_INFLATE_RAW:
    case STG_INFLATE_ZLIB:
    case STG_INFLATE_GZIP: {
#ifdef STG_WITH_ZLIB
        memset(&d->zs, 0, sizeof d->zs);
        d->zs.zalloc = zlib_alloc;
        d->zs.zfree = zlib_free;
        int wbits = d->fmt == STG_INFLATE_RAW ? -15 : d->fmt == STG_INFLATE_GZIP ? 15 + 16 : 15;
        if (stg_zlib()->inflate_init2(&d->zs, wbits, ZLIB_VERSION, (int)sizeof d->zs) != Z_OK) {
            return STG_INFLATE_NOMEM;
        }
        d->open = true;
        return STG_INFLATE_OK;
#else
        break;
#endif
    }
    case STG_INFLATE_LZMA:
    case STG_INFLATE_ZIP_LZMA: {
#ifdef STG_WITH_LZMA
        lzma_stream init = LZMA_STREAM_INIT;
        d->ls = init;
        d->lalloc.alloc = lzma_mem_alloc;
        d->lalloc.free = lzma_mem_free;
        d->lalloc.opaque = NULL;
        d->ls.allocator = &d->lalloc;
        lzma_ret rc;
        if (d->fmt == STG_INFLATE_ZIP_LZMA) {
            rc = zip_lzma_begin(d);
        } else {
            /* Auto-detects xz and lzma-alone per stream, as Python's FORMAT_AUTO does. */
            rc = stg_lzma()->auto_decoder(&d->ls, STG_INFLATE_LZMA_MEMLIMIT, 0);
        }
        if (rc != LZMA_OK) {
            return lzma_status(rc);
        }
        d->open = true;
        return STG_INFLATE_OK;
#else
        break;
#endif
    }
    case STG_INFLATE_BZIP2: {
#ifdef STG_WITH_BZIP2
        memset(&d->bs, 0, sizeof d->bs);
        d->bs.bzalloc = bz_alloc;
        d->bs.bzfree = bz_free;
        int rc = stg_bz2()->decompress_init(&d->bs, 0, 0);
        if (rc != BZ_OK) {
            return rc == BZ_MEM_ERROR ? STG_INFLATE_NOMEM : STG_INFLATE_CORRUPT;
        }
        d->open = true;
        return STG_INFLATE_OK;
#else
        break;
#endif
    }
    }
    return STG_INFLATE_UNAVAILABLE;
}

static void dec_end(decoder *d)
{
    if (!d->open) {
        return;
    }
    d->open = false;
    switch (d->fmt) {
    case STG_INFLATE_RAW:
    case STG_INFLATE_ZLIB:
    case STG_INFLATE_GZIP:
#ifdef STG_WITH_ZLIB
        stg_zlib()->inflate_end(&d->zs);
#endif
        break;
    case STG_INFLATE_LZMA:
    case STG_INFLATE_ZIP_LZMA:
#ifdef STG_WITH_LZMA
        stg_lzma()->end(&d->ls);
#endif
        break;
    case STG_INFLATE_BZIP2:
#ifdef STG_WITH_BZIP2
        (void)stg_bz2()->decompress_end(&d->bs);
#endif
        break;
    }
}

/* Feeds in[0..in_n) (the last of the input when finish) into out[0..out_n); *used and *made
 * say how much was taken and produced. Both sizes are at most CHUNK_MAX. */
static step_kind dec_step(decoder *d, const uint8_t *in, size_t in_n, uint8_t *out, size_t out_n,
                          bool finish, size_t *used, size_t *made, stg_inflate_result *err)
{
    (void)finish;
    *err = STG_INFLATE_CORRUPT;
    switch (d->fmt) {
    case STG_INFLATE_RAW:
    case STG_INFLATE_ZLIB:
    case STG_INFLATE_GZIP: {
#ifdef STG_WITH_ZLIB
        /* zlib's interface is not const-correct; it never writes through next_in. */
        d->zs.next_in = (Bytef *)(uintptr_t)in;
        d->zs.avail_in = (uInt)in_n;
        d->zs.next_out = out;
        d->zs.avail_out = (uInt)out_n;
        int rc = stg_zlib()->inflate(&d->zs, Z_NO_FLUSH);
        *used = in_n - d->zs.avail_in;
        *made = out_n - d->zs.avail_out;
        if (rc == Z_STREAM_END) {
            return STEP_END;
        }
        if (rc == Z_OK || rc == Z_BUF_ERROR) {
            return STEP_MORE;
        }
        *err = rc == Z_MEM_ERROR ? STG_INFLATE_NOMEM : STG_INFLATE_CORRUPT;
#endif
        return STEP_FAIL;
    }
    case STG_INFLATE_LZMA:
    case STG_INFLATE_ZIP_LZMA: {
#ifdef STG_WITH_LZMA
        d->ls.next_in = in;
        d->ls.avail_in = in_n;
        d->ls.next_out = out;
        d->ls.avail_out = out_n;
        lzma_ret rc = stg_lzma()->code(&d->ls, finish ? LZMA_FINISH : LZMA_RUN);
        *used = in_n - d->ls.avail_in;
        *made = out_n - d->ls.avail_out;
        if (rc == LZMA_STREAM_END) {
            return STEP_END;
        }
        if (rc == LZMA_OK) {
            return STEP_MORE;
        }
        *err = lzma_status(rc);
#endif
        return STEP_FAIL;
    }
    case STG_INFLATE_BZIP2: {
#ifdef STG_WITH_BZIP2
        /* libbz2's interface is not const-correct either. */
        d->bs.next_in = (char *)(uintptr_t)in;
        d->bs.avail_in = (unsigned)in_n;
        d->bs.next_out = (char *)out;
        d->bs.avail_out = (unsigned)out_n;
        int rc = stg_bz2()->decompress(&d->bs);
        *used = in_n - d->bs.avail_in;
        *made = out_n - d->bs.avail_out;
        if (rc == BZ_STREAM_END) {
            return STEP_END;
        }
        if (rc == BZ_OK) {
            return STEP_MORE;
        }
        *err = rc == BZ_MEM_ERROR ? STG_INFLATE_NOMEM : STG_INFLATE_CORRUPT;
#endif
        return STEP_FAIL;
    }
    }
    return STEP_FAIL;
}

/* Whether the bytes after a stream start another one, as Python's readers decide: gzip only on
 * the magic; xz/lzma and bzip2 whenever bytes are left (run ignores them if they then fail); a
 * zlib or raw stream never continues. */
static bool next_stream(stg_inflate_format fmt, const uint8_t *rest, size_t n)
{
    switch (fmt) {
    case STG_INFLATE_GZIP: return n >= 2 && rest[0] == 0x1f && rest[1] == 0x8b;
    case STG_INFLATE_LZMA:
    case STG_INFLATE_BZIP2: return n > 0;
    case STG_INFLATE_RAW:
    case STG_INFLATE_ZLIB:
    case STG_INFLATE_ZIP_LZMA: return false;
    }
    return false;
}

static stg_inflate_result run(const uint8_t *in, size_t in_len, stg_inflate_format fmt,
                              const uint8_t *props, uint64_t max_out, uint32_t max_ratio,
                              stg_inflate_out *out)
{
    decoder d;
    memset(&d, 0, sizeof d);
    d.fmt = fmt;
    d.props = props;
    stg_inflate_result res = dec_begin(&d);
    stg_cursor c = stg_cur_make(in, in_len); /* c.pos: the next byte the decoder gets */
    size_t cap = 0, stream_start = 0, stream_out = 0;
    const uint8_t *next_in = in;
    while (res == STG_INFLATE_OK) {
        if (out->len == cap) {
            res = grow(out, &cap, max_out);
            if (res != STG_INFLATE_OK) {
                break;
            }
        }
        size_t in_chunk = chunk(stg_cur_avail(&c)), out_chunk = chunk(cap - out->len);
        size_t used = 0, made = 0;
        (void)stg_cur_peek(&c, in_chunk, &next_in); /* in_chunk <= what is left */
        step_kind k = dec_step(&d, next_in, in_chunk, out->data + out->len, out_chunk,
                               in_chunk == stg_cur_avail(&c), &used, &made, &res);
        (void)stg_cur_skip(&c, used); /* the decoder used at most in_chunk */
        out->len += made;
        if (over_ratio(out->len, in_len, max_ratio)) {
            res = STG_INFLATE_RATIO;
            break;
        }
        if (k == STEP_END) {
            res = STG_INFLATE_OK;
            (void)stg_cur_peek(&c, stg_cur_avail(&c), &next_in);
            if (!next_stream(fmt, next_in, stg_cur_avail(&c))) {
                break;
            }
            dec_end(&d);
            res = dec_begin(&d);
            stream_start = c.pos;
            stream_out = out->len;
            continue;
        }
        if (k == STEP_MORE) {
            res = STG_INFLATE_OK;
            /* (out_chunk > 0 always: the buffer was grown past out->len above) */
            if (used == 0 && made == 0 && stg_cur_avail(&c) > 0) {
                res = STG_INFLATE_CORRUPT; /* no progress: never loop forever */
            } else if (made == out_chunk || stg_cur_avail(&c) > 0) {
                continue;
            } else {
                res = STG_INFLATE_TRUNCATED;
            }
        }
        /* Python's lzma and bz2 readers ignore bytes after a stream that do not decode as the
         * start of another one. */
        if ((fmt == STG_INFLATE_LZMA || fmt == STG_INFLATE_BZIP2) && stream_start > 0 &&
            out->len == stream_out &&
            (res == STG_INFLATE_CORRUPT || res == STG_INFLATE_TRUNCATED)) {
            (void)stg_cur_seek(&c, stream_start); /* a position c has passed */
            res = STG_INFLATE_OK;
        }
        break;
    }
    out->consumed = c.pos;
    out->error_offset = c.pos;
    dec_end(&d);
    return res;
}
#endif

stg_inflate_result stg_inflate(const uint8_t *in, size_t in_len, stg_inflate_format fmt,
                               uint64_t max_out, uint32_t max_ratio, stg_inflate_out *out)
{
    memset(out, 0, sizeof *out);
    if (!stg_inflate_format_available(fmt)) {
        return STG_INFLATE_UNAVAILABLE;
    }
#if defined(STG_WITH_ZLIB) || defined(STG_WITH_LZMA) || defined(STG_WITH_BZIP2)
    if (fmt == STG_INFLATE_ZIP_LZMA) {
        /* version (2 bytes, not checked: zipfile does not), properties size, properties */
        enum { HEAD = 4 + 5 };
        if (in_len < HEAD || in[2] != 5 || in[3] != 0) {
            out->error_offset = in_len < 4 ? in_len : 2;
            return in_len < HEAD ? STG_INFLATE_TRUNCATED : STG_INFLATE_CORRUPT;
        }
        stg_inflate_result r = run(in + HEAD, in_len - HEAD, fmt, in + 4, max_out, max_ratio, out);
        out->consumed += HEAD;
        out->error_offset += HEAD;
        return r;
    }
    return run(in, in_len, fmt, NULL, max_out, max_ratio, out);
#else
    (void)in;
    (void)in_len;
    (void)max_out;
    (void)max_ratio;
    return STG_INFLATE_UNAVAILABLE;
#endif
}
