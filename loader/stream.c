/* Streaming validation (push API). The stream runs the same three stages as stg_st_validate,
 * in the same order, so its findings are the ones stg_validate_buffer gives for the whole input
 * however it was split:
 *   - stage 1 runs as soon as 8 bytes are in, with the total unknown (cap and n = 0 only), and
 *     again at finish with the total (file_too_small, header_truncated);
 *   - stage 2 runs the moment the 8 + n header bytes are in (only they are buffered);
 *   - stage 3 (ranges, gaps, trailing bytes) runs at finish, when the data length is known.
 * Data bytes are never kept: they pass through the SHA-256 of the whole stream, the per-tensor
 * digests when asked for, a window of the first STG_STREAM_TAIL bytes (a pickle at offset 0)
 * and a rolling window of the last STG_STREAM_TAIL bytes (where a zip end-of-central-directory
 * record of an appended archive would be). Polyglot checks: see stream_polyglot.
 *
 * Memory: the header bytes received (a buffer of at most twice them, or 64 KiB; never the
 * length the first 8 bytes claim before those bytes arrive) + the header's arena (capped by stg_st_memory_budget, as in the
 * buffer path) + the head and tail windows (2 x 65,557) + per-tensor digest slots (48 bytes
 * per tensor) + a constant; see docs/loaders.md. */
#include <stdlib.h>
#include <string.h>

#include "../parser/mem.h"
#include "../parser/sort.h"
#include "../parser/zip.h"
#include "../dispatch/check.h"
#include "../validator/pickle_scan.h"
#include "../dispatch/polyglot.h"
#include "../dispatch/safetensors.h"
#include "../validator/limits.h"
#include "../validator/report.h"
#include "../validator/safetensors.h"
#include "digest.h"
#include "seed.h"
#include "stream.h"

/* First size of the header buffer (it grows with the bytes that arrive). */
#define HDR_FIRST_CAP ((size_t)64 * 1024)

typedef enum stream_state {
    ST_FRAME = 0,  /* collecting the 8 length bytes */
    ST_HEADER,     /* collecting the n header bytes */
    ST_DATA,       /* header parsed: data bytes pass through */
    ST_DONE_EARLY, /* framing failed: the rest only goes through the digest and the window */
    ST_FINISHED
} stream_state;

struct stg_stream {
    stg_limits lim;
    bool digest;
    bool tensor_digests;
    bool has_expected;
    uint8_t expected[32];
    bool expected_bad; /* expected_sha256 was not 64 hex digits */
    stream_state state;
    bool broken; /* memory or crypto failed: finish reports STG_E_NOMEM/CRYPTO */
    stg_status broken_status;
    uint64_t total; /* bytes fed so far */
    uint8_t first[8];
    size_t first_have;
    uint64_t header_len;
    uint8_t *hdr; /* the 8 + n header bytes received so far */
    size_t hdr_have;
    size_t hdr_cap; /* grows with the bytes received, never past 8 + n */
    stg_report *report;
    stg_st_header h;
    bool header_parsed;
    bool header_failed; /* findings so far already make the stream invalid */
    stg_sha256 *whole;
    uint8_t *head; /* the first STG_STREAM_TAIL bytes (pickle at offset 0) */
    size_t head_have;
    uint8_t *tail;   /* ring of the last STG_STREAM_TAIL bytes */
    size_t tail_pos; /* next write position in the ring */
    /* per-tensor digests, in data order (contiguous layouts only) */
    stg_sha256 *tdig;
    uint64_t (*ranges)[2]; /* (begin, end) of every tensor, sorted */
    uint8_t (*tsha)[32];   /* digest of ranges[k] */
    size_t tnext;          /* next tensor (in order) not finished yet */
    bool tplan_ok;         /* ranges are contiguous from 0: one tensor at a time */
    bool tdone;            /* digests of every tensor were completed */
    bool table_ok;         /* after finish: the table may be exposed */
};

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(stg_stream_options) == 80, "stg_stream_options layout is part of the ABI");
#endif

stg_status stg_stream_options_init(stg_stream_options *out, uint32_t struct_version)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    memset(out, 0, sizeof *out);
    out->struct_version = struct_version;
    out->digest = true;
    out->tensor_digests = false;
    out->expected_sha256 = NULL;
    return stg_struct_version_known(struct_version) ? STG_OK : STG_E_STRUCT_VERSION;
}

/* Called only while the stream is not broken yet (every caller runs behind a !broken check),
 * so the first failure's status is the one kept. */
static void stream_break(stg_stream *s, stg_status st)
{
    s->broken = true;
    s->broken_status = st;
}

stg_status stg_stream_new(const stg_limits *lim, const stg_stream_options *opt, stg_stream **out)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = NULL;
    /* Caller structs first (docs/abi.md): refused before anything is allocated. */
    stg_limits l;
    if (lim != NULL) {
        stg_status st = stg_limits_accept(lim, &l);
        if (st != STG_OK) {
            return st;
        }
    } else {
        stg_limits_default(&l);
    }
    stg_stream_options o;
    stg_stream_options_default(&o);
    if (opt != NULL) {
        if (!stg_struct_version_known(opt->struct_version)) {
            return STG_E_STRUCT_VERSION;
        }
        /* Every option is in struct version 1 (reserved space is not read). */
        o.digest = opt->digest;
        o.tensor_digests = opt->tensor_digests;
        o.expected_sha256 = opt->expected_sha256;
    }
    stg_stream *s = stg_mem_calloc(1, sizeof *s);
    if (s == NULL) {
        return STG_E_NOMEM;
    }
    s->lim = l;
    stg_limits_clamp(&s->lim);
    s->digest = o.digest;
    s->tensor_digests = o.tensor_digests;
    if (o.expected_sha256 != NULL) {
        s->has_expected = true;
        s->expected_bad = !stg_sha256_parse_hex(o.expected_sha256, s->expected);
    }
    stg_st_header_init(&s->h);
    s->h.want_public = true;          /* stg_stream_tensor_at hands out stg_tensor views */
    s->h.hash_seed = stg_scan_seed(); /* the header is parsed as it arrives, before finish */
    s->state = ST_FRAME;
    s->report = stg_report_new(&s->lim);
    s->tail = stg_mem_alloc(STG_STREAM_TAIL);
    s->head = stg_mem_alloc(STG_STREAM_TAIL);
    if (s->report == NULL || s->tail == NULL || s->head == NULL) {
        stg_stream_free(s);
        return STG_E_NOMEM;
    }
    if (s->digest || s->has_expected) {
        stg_status st = stg_sha256_new(&s->whole);
        if (st != STG_OK) {
            stg_stream_free(s);
            return st;
        }
    }
    *out = s;
    return STG_OK;
}

void stg_stream_free(stg_stream *s)
{
    if (s == NULL) {
        return;
    }
    stg_report_free(s->report);
    stg_st_header_release(&s->h);
    stg_mem_free(s->hdr);
    stg_mem_free(s->tail);
    stg_mem_free(s->head);
    stg_mem_free(s->ranges);
    stg_mem_free(s->tsha);
    stg_sha256_free(s->whole);
    stg_sha256_free(s->tdig);
    stg_mem_free(s);
}

/* Keeps the last STG_STREAM_TAIL bytes of everything fed. */
static void tail_push(stg_stream *s, const uint8_t *p, size_t len)
{
    if (len >= STG_STREAM_TAIL) {
        memcpy(s->tail, p + (len - STG_STREAM_TAIL), STG_STREAM_TAIL);
        s->tail_pos = 0;
        return;
    }
    size_t first = STG_STREAM_TAIL - s->tail_pos;
    if (first > len) {
        first = len;
    }
    memcpy(s->tail + s->tail_pos, p, first);
    if (len > first) {
        memcpy(s->tail, p + first, len - first);
    }
    s->tail_pos = (s->tail_pos + len) % STG_STREAM_TAIL;
}

static int range_index_cmp(size_t ia, size_t ib, void *ctx)
{
    const stg_st_tensor *t = ctx;
    const stg_st_tensor *a = &t[ia], *b = &t[ib];
    if (a->begin != b->begin) {
        return a->begin < b->begin ? -1 : 1;
    }
    return a->end < b->end ? -1 : (a->end > b->end ? 1 : 0);
}

/* Plans per-tensor digests: only for tables whose ranges are contiguous from 0 (every valid
 * layout is), so one digest context is active at a time whatever the header says. */
static void plan_tensor_digests(stg_stream *s)
{
    size_t n = s->h.tensor_count;
    size_t *order = stg_mem_alloc((n == 0 ? 1 : n) * sizeof *order);
    s->ranges = stg_mem_alloc((n == 0 ? 1 : n) * sizeof *s->ranges);
    s->tsha = stg_mem_alloc((n == 0 ? 1 : n) * sizeof *s->tsha);
    if (order == NULL || s->ranges == NULL || s->tsha == NULL) {
        stg_mem_free(order);
        stream_break(s, STG_E_NOMEM);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
    }
    stg_sort_index(order, n, range_index_cmp, s->h.tensors);
    /* Copies, not indices: the layout stage later sorts h.tensors in place. */
    for (size_t k = 0; k < n; k++) {
        s->ranges[k][0] = s->h.tensors[order[k]].begin;
        s->ranges[k][1] = s->h.tensors[order[k]].end;
    }
    stg_mem_free(order);
    uint64_t covered = 0;
    for (size_t k = 0; k < n; k++) {
        if (s->ranges[k][0] != covered) {
            return; /* a gap or an overlap: the layout stage will reject it; no digests */
        }
        covered = s->ranges[k][1];
    }
    if (stg_sha256_new(&s->tdig) != STG_OK) {
        stream_break(s, STG_E_CRYPTO);
        return;
    }
    s->tplan_ok = true;
}

/* Finishes every tensor (in data order) whose end is at or before data position `pos`. */
static void tensor_close_upto(stg_stream *s, uint64_t pos)
{
    while (s->tnext < s->h.tensor_count) {
        if (s->ranges[s->tnext][1] > pos) {
            return;
        }
        if (stg_sha256_final(s->tdig, s->tsha[s->tnext]) != STG_OK) {
            stream_break(s, STG_E_CRYPTO);
            return;
        }
        s->tnext++;
    }
}

/* Data bytes p[0..len) at data-section position dpos. */
static void tensor_feed(stg_stream *s, uint64_t dpos, const uint8_t *p, size_t len)
{
    tensor_close_upto(s, dpos);
    while (len > 0 && s->tnext < s->h.tensor_count && !s->broken) {
        /* contiguous plan: begin <= dpos < end here */
        uint64_t left = s->ranges[s->tnext][1] - dpos;
        size_t take = left < (uint64_t)len ? (size_t)left : len;
        if (stg_sha256_update(s->tdig, p, take) != STG_OK) {
            stream_break(s, STG_E_CRYPTO);
            return;
        }
        p += take;
        len -= take;
        dpos += take;
        tensor_close_upto(s, dpos);
    }
}

static void header_complete(stg_stream *s)
{
    bool ok = stg_st_parse_header(s->hdr + 8, s->header_len, &s->lim, s->report, &s->h);
    s->header_parsed = true;
    /* s->hdr stays: names without escapes point into it (and the table outlives finish). */
    s->state = ST_DATA;
    if (!ok) {
        s->header_failed = true;
        return;
    }
    if (s->tensor_digests) {
        plan_tensor_digests(s);
        if (s->tplan_ok) {
            tensor_close_upto(s, 0); /* zero-size tensors at 0 */
        }
    }
}

/* Grows the header buffer to hold want bytes (want <= 8 + n): doubling, so copying stays linear
 * and the buffer is at most twice what arrived (or HDR_FIRST_CAP). */
static bool hdr_reserve(stg_stream *s, size_t want)
{
    if (want <= s->hdr_cap) {
        return true;
    }
    size_t full = (size_t)s->header_len + 8;
    size_t cap = s->hdr_cap;
    while (cap < want) {
        cap = cap > full / 2 ? full : cap * 2;
    }
    uint8_t *grown = stg_mem_realloc(s->hdr, cap);
    if (grown == NULL) {
        return false;
    }
    s->hdr = grown;
    s->hdr_cap = cap;
    return true;
}

stg_status stg_stream_feed(stg_stream *s, const void *chunk, size_t len)
{
    if (s == NULL || (chunk == NULL && len != 0)) {
        return STG_E_BAD_ARG;
    }
    if (s->state == ST_FINISHED) {
        return STG_E_STATE;
    }
    if (s->broken) {
        return s->broken_status;
    }
    if (len == 0) {
        return s->header_failed ? STG_E_INVALID : STG_OK;
    }
    const uint8_t *p = chunk;
    if ((uint64_t)len > UINT64_MAX - s->total) {
        return STG_E_RANGE;
    }
    if (s->whole != NULL && stg_sha256_update(s->whole, p, len) != STG_OK) {
        stream_break(s, STG_E_CRYPTO);
        return s->broken_status;
    }
    tail_push(s, p, len);
    if (s->head_have < STG_STREAM_TAIL) {
        size_t take = STG_STREAM_TAIL - s->head_have < len ? STG_STREAM_TAIL - s->head_have : len;
        memcpy(s->head + s->head_have, p, take);
        s->head_have += take;
    }
    uint64_t at = s->total; /* stream offset of p[0] */
    s->total += len;
    while (len > 0 && !s->broken) {
        switch (s->state) {
        case ST_FRAME: {
            size_t take = 8 - s->first_have;
            if (take > len) {
                take = len;
            }
            memcpy(s->first + s->first_have, p, take);
            s->first_have += take;
            p += take;
            len -= take;
            at += take;
            if (s->first_have < 8) {
                break;
            }
            uint64_t n = 0;
            stg_st_frame fr = stg_st_check_frame(s->first, 8, STG_ST_TOTAL_UNKNOWN, &s->lim,
                                                 s->report, &n);
            if (fr != STG_ST_FRAME_OK) {
                s->state = ST_DONE_EARLY;
                s->header_failed = true;
                break;
            }
            /* n <= max_header_len (at most 4 GiB - 1) and n <= SIZE_MAX - 8: checked by framing */
            s->header_len = n;
            /* The buffer follows the bytes that arrive, not the length they claim: a client
             * that sends 8 bytes and stalls holds HDR_FIRST_CAP, not n. */
            s->hdr_cap = (size_t)n + 8 < HDR_FIRST_CAP ? (size_t)n + 8 : HDR_FIRST_CAP;
            s->hdr = stg_mem_alloc(s->hdr_cap);
            if (s->hdr == NULL) {
                stream_break(s, STG_E_NOMEM);
                break;
            }
            memcpy(s->hdr, s->first, 8);
            s->hdr_have = 8;
            s->state = ST_HEADER;
            break;
        }
        case ST_HEADER: {
            size_t need = (size_t)s->header_len + 8 - s->hdr_have;
            size_t take = need < len ? need : len;
            if (!hdr_reserve(s, s->hdr_have + take)) {
                stream_break(s, STG_E_NOMEM);
                break;
            }
            memcpy(s->hdr + s->hdr_have, p, take);
            s->hdr_have += take;
            p += take;
            len -= take;
            at += take;
            if (s->hdr_have == (size_t)s->header_len + 8) {
                header_complete(s);
            }
            break;
        }
        case ST_DATA:
            if (s->tplan_ok) {
                tensor_feed(s, at - (s->header_len + 8), p, len);
            }
            len = 0;
            break;
        case ST_DONE_EARLY:
        case ST_FINISHED: len = 0; break;
        }
    }
    if (s->broken) {
        return s->broken_status;
    }
    return s->header_failed ? STG_E_INVALID : STG_OK;
}

/* Polyglot checks, as stg_validate_buffer runs them after the safetensors stages. A stream of
 * at most STG_STREAM_TAIL bytes is whole in the tail window, so the very same check runs on it.
 * A longer one keeps only its first and last STG_STREAM_TAIL bytes (and the header):
 *  - a pickle at offset 0 is followed over the longer of the header and the head window;
 *  - a zip is looked for in the tail window alone; it is reported, never scanned (the message
 *    says so), where the buffer path in strict also scans its members.
 * Returns false when memory failed. */
static bool stream_polyglot(stg_st_door *d, stg_check_ctx *ctx)
{
    stg_stream *s = d->state;
    stg_report *r = ctx->report;
    if (s->total <= (uint64_t)STG_STREAM_TAIL) {
        /* head holds every byte */
        if (s->total > 0) {
            stg_polyglot_check_safetensors(s->head, (size_t)s->total, ctx);
        }
        return true;
    }
    const uint8_t *prefix = s->head;
    size_t prefix_len = s->head_have;
    if (s->hdr != NULL && s->hdr_have > prefix_len) {
        prefix = s->hdr;
        prefix_len = s->hdr_have;
    }
    size_t stop_end = 0;
    bool oom = false;
    bool pickle = stg_pickle_sniff(prefix, prefix_len, &stop_end, &oom);
    if (oom) {
        stg_report_oom(r);
    }
    if (pickle) {
        stg_report_add(r, STG_POLYGLOT_PICKLE, 0,
                       "the first %zu bytes are also a pickle that runs to STOP", stop_end);
        if (s->lim.profile == STG_PROFILE_STRICT) {
            stg_check_pickles(prefix, stop_end, 0, STG_PICKLE_RAW, ctx);
        }
    }
    uint8_t *win = stg_mem_alloc(STG_STREAM_TAIL);
    if (win == NULL) {
        return false;
    }
    /* oldest byte first: the ring's write position is its oldest byte once it is full */
    memcpy(win, s->tail + s->tail_pos, STG_STREAM_TAIL - s->tail_pos);
    memcpy(win + (STG_STREAM_TAIL - s->tail_pos), s->tail, s->tail_pos);
    uint64_t base = s->total - STG_STREAM_TAIL;
    stg_zip z;
    stg_zip_error err;
    if (stg_zip_open(&z, win, STG_STREAM_TAIL, &err) == STG_ZIPR_OK) {
        stg_report_add(r, STG_POLYGLOT_ZIP, base + stg_zip_first_byte(&z),
                       "a zip archive (%llu entries) ends this safetensors stream: zip readers "
                       "see it; a stream keeps only its last %zu bytes and could not scan it",
                       (unsigned long long)z.entry_count, STG_STREAM_TAIL);
    }
    stg_mem_free(win);
    return true;
}

stg_status stg_stream_finish(stg_stream *s, stg_report **out)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (s == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (s->state == ST_FINISHED) {
        return STG_E_STATE;
    }
    if (s->broken) {
        s->state = ST_FINISHED;
        return s->broken_status;
    }
    stg_report *r = s->report;
    /* The safetensors pipeline with the stream as its door (dispatch/safetensors.h): framing
     * with the total (too few bytes: file_too_small; a header that never completed:
     * header_truncated), the header as parsed when it arrived, the layout, then the polyglot
     * checks over the windows the stream kept. */
    stg_st_door door = {.first = s->first,
                        .first_len = s->state == ST_FRAME ? s->first_have : 8,
                        .total = s->total,
                        .parsed = true,
                        .frame_failed = s->state == ST_DONE_EARLY,
                        .polyglot = stream_polyglot,
                        .state = s};
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &s->lim, r);
    ctx.hash_seed = stg_scan_seed();
    if (!stg_st_pipeline(&door, &ctx, &s->h)) {
        s->state = ST_FINISHED;
        return STG_E_NOMEM;
    }
    s->table_ok = s->header_parsed && s->h.schema_ok && s->h.layout_ok;
    if (s->tplan_ok && s->table_ok) {
        tensor_close_upto(s, s->total - 8 - s->header_len);
        s->tdone = s->tnext == s->h.tensor_count;
    }
    if (s->whole != NULL) {
        uint8_t d[32];
        if (stg_sha256_final(s->whole, d) != STG_OK) {
            s->state = ST_FINISHED;
            return STG_E_CRYPTO;
        }
        if (s->digest) {
            stg_report_set_sha256(r, d);
        }
        if (s->has_expected && (s->expected_bad || memcmp(d, s->expected, 32) != 0)) {
            stg_report_add(r, STG_DIGEST_MISMATCH, STG_NO_OFFSET,
                           s->expected_bad ? "the expected SHA-256 is not 64 hex digits"
                                           : "the content does not match the expected SHA-256");
        }
    }
    stg_report_set_format(r, STG_FMT_SAFETENSORS);
    stg_report_set_size(r, s->total);
    stg_report_finish(r);
    s->report = NULL;
    s->state = ST_FINISHED;
    *out = r;
    return STG_OK;
}

size_t stg_stream_tensor_count(const stg_stream *s)
{
    return s == NULL || s->state != ST_FINISHED || !s->table_ok ? 0 : s->h.tensor_count;
}

const stg_tensor *stg_stream_tensor_at(const stg_stream *s, size_t i)
{
    if (i >= stg_stream_tensor_count(s)) {
        return NULL;
    }
    return &s->h.pub[i];
}

stg_status stg_stream_tensor_sha256(const stg_stream *s, size_t i, uint8_t out[32])
{
    if (s == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (s->state != ST_FINISHED) {
        return STG_E_STATE;
    }
    if (i >= stg_stream_tensor_count(s)) {
        return STG_E_RANGE;
    }
    if (!s->tdone) {
        return STG_E_STATE; /* tensor_digests was off */
    }
    /* The layout stage sorted h.tensors by (begin, end) as `ranges` is; in a valid layout
     * non-empty ranges are distinct, so the sorted positions agree except among zero-size
     * tensors sharing an offset, whose digests are all the digest of nothing. ranges holds
     * every tensor's (begin, end), so the first entry not below t's is t's own: lo < count. */
    const stg_tensor *t = &s->h.pub[i];
    size_t lo = 0, hi = s->h.tensor_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint64_t *m = s->ranges[mid];
        if (m[0] < t->begin || (m[0] == t->begin && m[1] < t->end)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    memcpy(out, s->tsha[lo], 32);
    return STG_OK;
}

size_t stg_stream_memory_peak(const stg_stream *s)
{
    if (s == NULL) {
        return 0;
    }
    size_t n = sizeof *s + 2 * STG_STREAM_TAIL + s->h.arena.peak + s->h.pub_arena.peak;
    if (s->hdr != NULL) {
        n += s->hdr_cap;
    }
    if (s->ranges != NULL) {
        n += s->h.tensor_count * (sizeof *s->ranges + sizeof *s->tsha);
    }
    return n;
}
