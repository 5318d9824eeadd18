/* Safetensors stages 1 and 2: the 8-byte frame, then the JSON header -> tensor table.
 *
 * One pass over the pull parser's events builds the table in the header's arena: names point
 * into the header bytes when they have no escapes (else a decoded copy lives in the arena, so
 * they are NOT NUL-terminated and the header bytes must outlive the table), shapes are u64 arrays
 * in the arena, records grow in one arena-charged buffer. No recursion: the schema has a fixed
 * depth (top object -> entry -> field -> shape element) and anything deeper is skipped by the
 * parser, which enforces max_json_depth.
 *
 * Findings of stage 2 are first collected in a private report and merged into the caller's
 * only when the JSON turned out well-formed and no limit stopped the pass: schema findings about
 * a header whose syntax is broken would depend on an earlier failure (docs/findings.md). A
 * fatal problem (json_syntax, json_invalid_utf8, json_too_deep, limit_exceeded) is then the
 * only finding of stage 2.
 *
 * Compat follows huggingface/safetensors 0.8 (serde): a repeated tensor name keeps the last entry,
 * and checks that the reference makes only on the entries it keeps (begin <= end, element count,
 * sub-byte alignment, size) run after duplicates are resolved. */
#include <string.h>

#include "../parser/cursor.h"
#include "../parser/json.h"
#include "../parser/mem.h"
#include "../parser/util.h"
#include "dtype.h"
#include "safetensors.h"

#define ST_MIB ((uint64_t)1024 * 1024)
/* Header lengths above this are header_too_large whatever max_header_len says (table indexes and
 * token offsets are 32-bit safe below it). */
#define ST_HEADER_CEILING ((uint64_t)UINT32_MAX)
/* Longest raw key that can still decode to one of our field names (each escape is >= 1 byte). */
#define ST_SMALL_KEY 96
/* Marks a record dropped by a later entry of the same name (compat: last wins). */
#define ST_SUPERSEDED UINT32_MAX
/* Shapes up to this rank are read by the parser's fast path (stg_json_uint_array). */
#define ST_QUICK_RANK 8u
/* The shortest object-form tensor entry with its separator, in header bytes (reserve_table):
 * "":{"dtype":"U8","shape":[],"data_offsets":[0,0]}, */
#define ST_MIN_ENTRY 48u
/* dtype strings up to this length are remembered: the next equal string needs no lookup. */
#define ST_DTYPE_SEEN 16u

/* Derived budget per header byte. Realistic headers peak near 1 x n; headers of minimal entries
 * the reference accepts cost more per byte: 113,509 empty "":"" metadata pairs in 681 KB peak
 * at 15.8 x n (14.5 x n at 2.7 MB), 1.3 MB of duplicate keys in an ignored object at 10.7 x,
 * 76,046 array-form duplicate tensors at 8.9 x, 170,300 distinct metadata keys at 8.1 x
 * (test_memory_budget_minimal_entries measures them). 16 x n + 8 MiB covers them all, so a
 * header the reference accepts never ends in limit_exceeded max_memory by default. */
#define ST_BUDGET_PER_BYTE 16u

uint64_t stg_st_memory_budget(const stg_limits *lim, uint64_t n)
{
    if (lim->max_memory != 0) {
        return lim->max_memory;
    }
    uint64_t b;
    if (stg_mul_u64(n, ST_BUDGET_PER_BYTE, &b) || stg_add_u64(b, 8 * ST_MIB, &b)) {
        return UINT64_MAX;
    }
    return b;
}

void stg_st_header_init(stg_st_header *h)
{
    memset(h, 0, sizeof *h);
    stg_arena_init(&h->arena, 0);
    stg_arena_init(&h->pub_arena, SIZE_MAX); /* O(records): the records are budgeted */
}

void stg_st_header_release(stg_st_header *h)
{
    if (h->tensors != NULL) {
        void *p = h->tensors;
        stg_arena_free_buffer(&h->arena, &p, &h->tensors_cap_bytes);
    }
    if (h->metadata != NULL) {
        void *p = h->metadata;
        stg_arena_free_buffer(&h->arena, &p, &h->metadata_cap_bytes);
    }
    void *bufs[3] = {h->rare, h->shapes, h->pub};
    size_t *caps[3] = {&h->rare_cap_bytes, &h->shapes_cap_bytes, &h->pub_cap_bytes};
    for (int i = 0; i < 3; i++) {
        if (bufs[i] != NULL) {
            stg_arena_free_buffer(i == 0 ? &h->arena : &h->pub_arena, &bufs[i], caps[i]);
        }
    }
    stg_arena_release(&h->pub_arena);
    bool want_public = h->want_public;
    stg_arena_release(&h->arena);
    stg_st_header_init(h);
    h->want_public = want_public;
}

/* ------------------------------------------------------------------------------ records */

const stg_st_rare *stg_st_rare_of(const stg_st_header *h, const stg_st_tensor *t)
{
    if ((t->info & STG_ST_RARE) == 0) {
        return NULL;
    }
    size_t lo = 0, hi = h->rare_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->rare[mid].key_pos < t->key_pos) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < h->rare_count && h->rare[lo].key_pos == t->key_pos ? &h->rare[lo] : NULL;
}

void stg_st_name(const stg_st_header *h, const stg_st_tensor *t, const char **name, size_t *len)
{
    const stg_st_rare *x = stg_st_rare_of(h, t);
    if (x != NULL && x->name != NULL) {
        *name = x->name;
        *len = x->name_len;
        return;
    }
    /* no escapes: the key token's content up to its closing quote, which the parser found */
    size_t from = (size_t)t->key_pos + 1;
    const uint8_t *q = memchr(h->hdr + from, '"', (size_t)h->header_len - from);
    *name = (const char *)(h->hdr + from);
    *len = q != NULL ? (size_t)(q - (h->hdr + from)) : 0;
}

uint64_t stg_st_offsets_offset(const stg_st_header *h, const stg_st_tensor *t)
{
    uint32_t delta = t->info >> STG_ST_DELTA_SHIFT;
    if (delta == 0) {
        const stg_st_rare *x = stg_st_rare_of(h, t);
        return x != NULL ? (uint64_t)x->offsets_pos + 8u : 0;
    }
    return (uint64_t)t->key_pos + delta + 8u;
}

/* ------------------------------------------------------------------------------ stage 1 */

stg_st_frame stg_st_check_frame(const uint8_t *first, size_t avail, uint64_t total,
                                const stg_limits *lim, stg_report *r, uint64_t *header_len)
{
    /* Findings are added only together with STG_ST_FRAME_FAILED, and a caller never repeats a
     * call that failed: so calling first with STG_ST_TOTAL_UNKNOWN and again with the total
     * cannot report anything twice. */
    if (avail < 8) {
        if (total == STG_ST_TOTAL_UNKNOWN || total >= 8) {
            return STG_ST_FRAME_NEED_MORE;
        }
        stg_report_add(r, STG_FILE_TOO_SMALL, 0,
                       "the file has %llu bytes, fewer than the 8 of the header length field",
                       (unsigned long long)total);
        return STG_ST_FRAME_FAILED;
    }
    stg_cursor c = stg_cur_make(first, avail);
    uint64_t n = 0;
    (void)stg_cur_le64(&c, &n); /* avail >= 8 here */
    *header_len = n;
    uint64_t cap = lim->max_header_len < ST_HEADER_CEILING ? lim->max_header_len
                                                           : ST_HEADER_CEILING;
    if (n > cap || n > (uint64_t)(SIZE_MAX - 8)) {
        /* Checked before the file length, as the reference does. */
        stg_finding *f = stg_report_add(r, STG_HEADER_TOO_LARGE, 0,
                                        "header length %llu is over max_header_len %llu",
                                        (unsigned long long)n, (unsigned long long)cap);
        stg_report_set_limit(r, f, "max_header_len");
        return STG_ST_FRAME_FAILED;
    }
    if (n == 0) {
        stg_report_add(r, STG_HEADER_LENGTH_INVALID, 0,
                       "header length is 0: there is no JSON header");
        return STG_ST_FRAME_FAILED;
    }
    if (total != STG_ST_TOTAL_UNKNOWN && (total < 8 || n > total - 8)) {
        stg_report_add(r, STG_HEADER_TRUNCATED, 0,
                       "header length %llu runs past the end of the file (%llu bytes)",
                       (unsigned long long)n, (unsigned long long)total);
        return STG_ST_FRAME_FAILED;
    }
    return STG_ST_FRAME_OK;
}

/* ------------------------------------------------------------------------------ stage 2 */

typedef struct st_ctx {
    const uint8_t *hdr;
    size_t n;
    const stg_limits *lim;
    stg_report *out; /* the caller's report: fatal findings go here directly */
    stg_report *tmp; /* the rest: merged only when the pass ends well */
    stg_st_header *h;
    stg_json_parser p;
    bool errors;          /* an error was added to tmp */
    bool fatal;           /* the pass stopped; tmp is discarded */
    uint64_t tensor_keys; /* tensor entries seen (duplicates included) */
    uint64_t meta_entries;
    size_t meta_cap_entries;
    uint64_t *shape_buf;               /* rank scratch of the entry being read */
    uint8_t dtype_seen[ST_DTYPE_SEEN]; /* raw bytes of the last dtype string found known */
    size_t dtype_seen_len;             /* 0: none yet */
    stg_dtype dtype_seen_value;
    size_t shape_cap_bytes;
    size_t *meta_keyoff; /* header position of each metadata key (duplicate resolution) */
    size_t meta_keyoff_cap_bytes;
    stg_json_compact_form form; /* {"dtype":"..","shape":[..],"data_offsets":[..]} */
    bool form_ok;
    size_t superseded;  /* records a later entry of the same name replaced */
    size_t size_issues; /* records whose offsets, shape and dtype disagree (check_records) */
} st_ctx;

/* What one tensor entry said so far. */
typedef struct st_entry {
    const char *name;
    size_t name_len;
    size_t key_pos;   /* header position of the name token */
    size_t value_pos; /* header position of the entry value */
    bool has_dtype, has_shape, has_offsets;
    bool bad;          /* a field was present but invalid: no record */
    bool name_escaped; /* name is a decoded copy in the arena */
    stg_dtype dtype;
    const uint64_t *shape; /* the kept copy (want_public), else NULL */
    uint32_t rank;
    uint64_t count;      /* element count of the shape, folded left to right */
    bool count_overflow; /* ... which overflowed 64 bits at some step */
    size_t shape_pos;
    uint64_t begin, end;
    size_t offsets_pos;
} st_entry;

/* Every field of a fresh entry, one by one: cheaper than a memset of the struct, which
 * compilers turn into a `rep stos` that showed in profiles (once per tensor). */
static void entry_init(st_entry *e, size_t key_pos)
{
    e->name = NULL;
    e->name_len = 0;
    e->name_escaped = false;
    e->key_pos = key_pos;
    e->value_pos = 0;
    e->has_dtype = false;
    e->has_shape = false;
    e->has_offsets = false;
    e->bad = false;
    e->dtype = STG_DTYPE_BOOL; /* 0, as a memset left it; set when has_dtype */
    e->shape = NULL;
    e->rank = 0;
    e->count = 1;
    e->count_overflow = false;
    e->shape_pos = 0;
    e->begin = 0;
    e->end = 0;
    e->offsets_pos = 0;
}

static uint64_t file_off(size_t pos)
{
    return (uint64_t)pos + 8u;
}

static bool is_json_ws(uint8_t b)
{
    return b == ' ' || b == '\t' || b == '\r' || b == '\n';
}

static stg_severity strict_only(const st_ctx *c)
{
    return stg_sev(c->lim, STG_SEV_ERROR, STG_SEV_WARNING);
}

/* Adds a finding with the severity the context decides to the pending report, remembering
 * errors (validator/codes.def lists the callers). */
__attribute__((format(printf, 5, 6))) static stg_finding *note_sev(st_ctx *c, stg_code code,
                                                                   stg_severity sev, size_t pos,
                                                                   const char *fmt, ...)
{
    if (sev >= STG_SEV_ERROR) {
        c->errors = true;
    }
    va_list ap;
    va_start(ap, fmt);
    stg_finding *f = stg_report_addv_sev(c->tmp, code, sev, file_off(pos), fmt, ap);
    va_end(ap);
    return f;
}

/* The same with the code's default severity for the profile (the code table). */
#define note(c, code, pos, ...) \
    note_sev((c), (code), stg_code_severity((code), (c)->lim->profile), (pos), __VA_ARGS__)

static void note_tensor(st_ctx *c, stg_finding *f, const st_entry *e)
{
    if (e != NULL && e->name != NULL) {
        stg_report_set_tensor(c->tmp, f, e->name, e->name_len);
    }
}

/* First fatal finding wins; it goes straight to the caller's report. With the severity the
 * context decides (validator/codes.def lists the callers); fatal() below gives the table's. */
__attribute__((format(printf, 5, 6))) static stg_finding *fatal_sev(st_ctx *c, stg_code code,
                                                                    stg_severity sev, uint64_t off,
                                                                    const char *fmt, ...)
{
    if (c->fatal) {
        return NULL;
    }
    c->fatal = true;
    va_list ap;
    va_start(ap, fmt);
    stg_finding *f = stg_report_addv_sev(c->out, code, sev, off, fmt, ap);
    va_end(ap);
    return f;
}

#define fatal(c, code, off, ...) \
    fatal_sev((c), (code), stg_code_severity((code), (c)->lim->profile), (off), __VA_ARGS__)

static void fatal_limit(st_ctx *c, size_t pos, const char *limit, uint64_t value)
{
    if (c->fatal) {
        return;
    }
    c->fatal = true;
    stg_report_limit(c->out, file_off(pos), limit, value);
}

static void fatal_memory(st_ctx *c, size_t pos)
{
    if (c->fatal) {
        return;
    }
    c->fatal = true;
    stg_report_limit(c->out, file_off(pos), "max_memory", (uint64_t)c->h->arena.cap);
    if (c->h->arena.out_of_memory) {
        stg_report_oom(c->out); /* the system refused, not the budget: fail closed */
    }
}

/* The system refused memory outside the budget (the public views): fail closed. */
static void fatal_system_memory(st_ctx *c, size_t pos)
{
    if (c->fatal) {
        return;
    }
    c->fatal = true;
    stg_report_limit(c->out, file_off(pos), "max_memory", (uint64_t)c->h->arena.cap);
    stg_report_oom(c->out);
}

static void parser_failed(st_ctx *c)
{
    uint64_t off = file_off(c->p.error_offset);
    stg_finding *f;
    switch (c->p.error) {
    case STG_JSON_E_UTF8:
        fatal(c, STG_JSON_INVALID_UTF8, off,
              "the header holds invalid UTF-8 (bad sequence, overlong form or surrogate)");
        break;
    case STG_JSON_E_DEPTH:
        f = fatal(c, STG_JSON_TOO_DEEP, off, "JSON nesting goes deeper than max_json_depth %u",
                  c->lim->max_json_depth);
        stg_report_set_limit(c->out, f, "max_json_depth");
        break;
    case STG_JSON_E_MEMORY: fatal_memory(c, c->p.error_offset); break;
    case STG_JSON_E_RANGE:
        fatal(c, STG_JSON_NUMBER_OVERFLOW, off,
              "a number beyond the f64 range (the reference rejects the header: number out of "
              "range)");
        break;
    case STG_JSON_E_SYNTAX:
    case STG_JSON_E_NONE:
        fatal(c, STG_JSON_SYNTAX, off, "the header is not valid JSON (RFC 8259) from this byte on");
        break;
    }
}

/* Next event; false when the pass must stop (parser error already reported). */
static bool next(st_ctx *c, stg_json_event *ev)
{
    if (c->fatal) {
        return false;
    }
    if (stg_json_next(&c->p, ev) == STG_JSON_ERROR) {
        parser_failed(c);
        return false;
    }
    return true;
}

/* Skips the value that starts with ev (containers up to their end). Repeated keys inside an
 * ignored value are last-wins for the reference: strict error, compat warning. */
static bool skip_value(st_ctx *c, const stg_json_event *ev, const st_entry *e)
{
    if (ev->type != STG_JSON_OBJECT_BEGIN && ev->type != STG_JSON_ARRAY_BEGIN) {
        return true;
    }
    size_t dups = 0;
    stg_json_event first;
    memset(&first, 0, sizeof first);
    if (stg_json_skip(&c->p, ev, &dups, &first) == STG_JSON_ERROR) {
        parser_failed(c);
        return false;
    }
    if (dups > 0) {
        stg_finding *f = note(c, STG_JSON_DUPLICATE_KEY, first.offset,
                              "%llu key(s) repeated inside a value the reference ignores",
                              (unsigned long long)dups);
        note_tensor(c, f, e);
    }
    return true;
}

/* The raw content of the string token at pos (the parser validated it). */
static void raw_string_at(const st_ctx *c, size_t pos, const uint8_t **raw, size_t *raw_len,
                          bool *esc)
{
    size_t i = pos + 1;
    bool e = false;
    while (i < c->n && c->hdr[i] != '"') {
        if (c->hdr[i] == '\\') {
            e = true;
            i += 2;
        } else {
            i++;
        }
    }
    if (i > c->n) {
        i = c->n;
    }
    *raw = c->hdr + pos + 1;
    *raw_len = pos + 1 <= i ? i - (pos + 1) : 0;
    *esc = e;
}

/* Decoded form of a key that may be one of our field names (buf holds ST_SMALL_KEY bytes).
 * Returns false when it is too long to be one. */
static bool small_decode(const uint8_t *raw, size_t raw_len, bool esc, uint8_t *buf,
                         const uint8_t **out, size_t *out_len)
{
    if (!esc) {
        *out = raw;
        *out_len = raw_len;
        return true;
    }
    if (raw_len > ST_SMALL_KEY) {
        return false;
    }
    *out_len = stg_json_decode(raw, raw_len, buf);
    *out = buf;
    return true;
}

static bool bytes_are(const uint8_t *s, size_t len, const char *lit)
{
    size_t l = strlen(lit);
    return len == l && memcmp(s, lit, l) == 0;
}

static bool key_is(const stg_json_event *ev, const char *lit)
{
    uint8_t buf[ST_SMALL_KEY];
    const uint8_t *k;
    size_t kl;
    return small_decode(ev->str, ev->str_len, ev->has_escapes, buf, &k, &kl) &&
           bytes_are(k, kl, lit);
}

static bool key_at_is(const st_ctx *c, size_t pos, const char *lit)
{
    const uint8_t *raw;
    size_t raw_len;
    bool esc;
    uint8_t buf[ST_SMALL_KEY];
    const uint8_t *k;
    size_t kl;
    raw_string_at(c, pos, &raw, &raw_len, &esc);
    return small_decode(raw, raw_len, esc, buf, &k, &kl) && bytes_are(k, kl, lit);
}

/* A string's decoded bytes: in place when it has no escapes, else a copy in the arena. */
static bool decoded_string(st_ctx *c, const stg_json_event *ev, const char **out, size_t *len)
{
    if (!ev->has_escapes) {
        *out = (const char *)ev->str;
        *len = ev->str_len;
        return true;
    }
    /* an escaped string has at least the 2 bytes of its escape */
    uint8_t *d = stg_arena_alloc(&c->h->arena, ev->str_len, 1);
    if (d == NULL) {
        fatal_memory(c, ev->offset);
        return false;
    }
    *len = stg_json_decode(ev->str, ev->str_len, d);
    *out = (const char *)d;
    return true;
}

/* Grows an arena-charged buffer to exactly `want` bytes (the arena's own helper rounds to powers
 * of two; the table is the largest allocation, so it grows by 1.5 instead). */
static bool grow_exact(stg_arena *a, void **buf, size_t *cap_bytes, size_t want)
{
    size_t others = a->reserved - *cap_bytes;
    if (want <= *cap_bytes) {
        return true;
    }
    if (others > a->cap || want > a->cap - others) {
        a->failed = 1;
        return false;
    }
    void *nb = stg_mem_realloc(*buf, want);
    if (nb == NULL) {
        a->failed = 1;
        a->out_of_memory = 1;
        return false;
    }
    a->reserved = others + want;
    if (a->reserved > a->peak) {
        a->peak = a->reserved;
    }
    *buf = nb;
    *cap_bytes = want;
    return true;
}

static size_t grown(size_t cap, size_t need)
{
    size_t want = cap + cap / 2;
    if (want < cap || want < need) {
        want = need;
    }
    return want < 16 ? 16 : want;
}

#define ST_ONES 0x0101010101010101ull
#define ST_HIGHS 0x8080808080808080ull

/* High bit set in a byte of w that is < 0x20, 0x7f or >= 0x80 (borrows may flag more bytes
 * above a true hit, never when there is none): words without a flag hold plain printable ASCII. */
static inline uint64_t not_printable_ascii(uint64_t w)
{
    uint64_t del = w ^ (ST_ONES * 0x7fu);
    return (((w - ST_ONES * 0x20u) & ~w) | ((del - ST_ONES) & ~del) | w) & ST_HIGHS;
}

static bool control_in_name(const char *s, size_t len)
{
    const uint8_t *b = (const uint8_t *)s;
    size_t i = 0;
    /* plain ASCII words first; the byte loop below sees everything from the first other one */
    /* layer-check: bounded (a word-at-a-time scan of a name in memory; the loop condition
     * checks the 8 bytes are there) */
    while (len - i >= 8 && not_printable_ascii(stg_le64(b + i)) == 0) {
        i += 8;
    }
    for (; i < len; i++) {
        if (b[i] < 0x20 || b[i] == 0x7f) {
            return true;
        }
        if (b[i] == 0xc2 && i + 1 < len && b[i + 1] >= 0x80 && b[i + 1] <= 0x9f) {
            return true; /* C1 controls U+0080..U+009F */
        }
    }
    return false;
}

/* ---- fields of a tensor entry; each takes the first event of its value ---- */

static void dtype_unknown(st_ctx *c, st_entry *e, size_t pos)
{
    note_tensor(c,
                note(c, STG_DTYPE_UNKNOWN, pos,
                     "dtype is not one of the known names (exact, case-sensitive)"),
                e);
    e->bad = true;
}

/* A dtype given as a string: its raw content str[0..len) (esc: it has escapes), its opening
 * quote at pos. */
static void dtype_string(st_ctx *c, st_entry *e, const uint8_t *str, size_t len, bool esc,
                         size_t pos)
{
    e->has_dtype = true;
    if (!esc && len != 0 && len == c->dtype_seen_len && memcmp(str, c->dtype_seen, len) == 0) {
        e->dtype = c->dtype_seen_value; /* the same bytes as the last known dtype */
        return;
    }
    uint8_t buf[ST_SMALL_KEY];
    const uint8_t *k;
    size_t kl;
    if (small_decode(str, len, esc, buf, &k, &kl) && stg_dtype_lookup(k, kl, &e->dtype)) {
        if (!esc && len > 0 && len <= ST_DTYPE_SEEN) {
            memcpy(c->dtype_seen, str, len);
            c->dtype_seen_len = len;
            c->dtype_seen_value = e->dtype;
        }
        return;
    }
    dtype_unknown(c, e, pos);
}

static void parse_dtype(st_ctx *c, st_entry *e, stg_json_event *ev)
{
    e->has_dtype = true;
    if (ev->type == STG_JSON_STRING) {
        dtype_string(c, e, ev->str, ev->str_len, ev->has_escapes, ev->offset);
        return;
    }
    if (ev->type != STG_JSON_OBJECT_BEGIN) {
        note_tensor(c,
                    note_sev(c, STG_TENSOR_INFO_INVALID, STG_SEV_ERROR, ev->offset,
                             "dtype is not a string"),
                    e);
        e->bad = true;
        skip_value(c, ev, e);
        return;
    }
    /* Enum form {"U8": null}: serde accepts exactly one key whose value is null. */
    size_t obj_pos = ev->offset;
    size_t keys = 0;
    bool value_null = false;
    stg_dtype d = STG_DTYPE_U8;
    bool known = false;
    stg_json_event k;
    for (;;) {
        if (!next(c, &k)) {
            return;
        }
        if (k.type == STG_JSON_OBJECT_END) {
            break;
        }
        if (k.type == STG_JSON_DUPLICATE) {
            continue; /* two keys: already an error below */
        }
        if (k.type != STG_JSON_KEY) {
            fatal(c, STG_JSON_SYNTAX, file_off(k.offset), "unexpected JSON event in an object");
            return;
        }
        keys++;
        if (keys == 1) {
            uint8_t buf[ST_SMALL_KEY];
            const uint8_t *kk;
            size_t kl;
            known = small_decode(k.str, k.str_len, k.has_escapes, buf, &kk, &kl) &&
                    stg_dtype_lookup(kk, kl, &d);
        }
        stg_json_event v;
        if (!next(c, &v)) {
            return;
        }
        if (keys == 1) {
            value_null = v.type == STG_JSON_NULL;
        }
        if (!skip_value(c, &v, e)) {
            return;
        }
    }
    if (keys != 1 || !value_null) {
        note_tensor(c,
                    note_sev(c, STG_TENSOR_INFO_INVALID, STG_SEV_ERROR, obj_pos,
                             "dtype object is not the enum form: one dtype key with a null value"),
                    e);
        e->bad = true;
        return;
    }
    if (!known) {
        dtype_unknown(c, e, obj_pos);
        return;
    }
    note_tensor(c,
                note(c, STG_TENSOR_INFO_INVALID, obj_pos,
                     "dtype is given in the enum form {\"NAME\": null}, not as a string"),
                e);
    e->dtype = d;
}

/* Reads the elements of an array whose ARRAY_BEGIN was just read: unsigned integers go to the
 * scratch buffer; the first bad element is reported with `bad_code`. Past `max` elements, the
 * configured limit `limit` stops the pass, or (limit NULL) elements are only counted. Returns
 * the element count, or SIZE_MAX when the pass stopped. */
static size_t read_uint_array(st_ctx *c, st_entry *e, stg_code bad_code, const char *what,
                              uint64_t max, const char *limit, bool *bad)
{
    size_t count = 0;
    stg_json_event v;
    for (;;) {
        if (!next(c, &v)) {
            return SIZE_MAX;
        }
        if (v.type == STG_JSON_ARRAY_END) {
            return count;
        }
        if (!*bad) {
            if (v.type == STG_JSON_NUMBER && v.is_uint && v.uint_overflow) {
                note_tensor(c,
                            note(c, STG_JSON_NUMBER_OVERFLOW, v.offset,
                                 "a %s number does not fit an unsigned 64-bit integer", what),
                            e);
                *bad = true;
            } else if (v.type != STG_JSON_NUMBER || !v.is_uint) {
                note_tensor(c,
                            note_sev(c, bad_code, STG_SEV_ERROR, v.offset,
                                     "a %s element is not an unsigned integer", what),
                            e);
                *bad = true;
            } else if (count >= max) {
                if (limit != NULL) {
                    fatal_limit(c, v.offset, limit, max);
                    return SIZE_MAX;
                }
            } else {
                size_t need = (count + 1) * sizeof(uint64_t);
                if (need > c->shape_cap_bytes &&
                    stg_arena_grow_buffer(&c->h->arena, (void **)&c->shape_buf, &c->shape_cap_bytes,
                                          need) != 0) {
                    fatal_memory(c, v.offset);
                    return SIZE_MAX;
                }
                c->shape_buf[count] = v.uint_value;
            }
        }
        if (!skip_value(c, &v, e)) {
            return SIZE_MAX;
        }
        count++;
    }
}

/* Takes a shape of `rank` (<= max_rank) dimensions: its element count now, and a copy in the
 * arena only when the door wants public views (dims is scratch that the next array reuses). */
static void set_shape(st_ctx *c, st_entry *e, size_t pos, const uint64_t *dims, size_t rank)
{
    e->rank = (uint32_t)rank; /* rank <= max_rank, a uint32_t */
    e->shape = NULL;
    uint64_t count = 1;
    bool overflow = false;
    for (size_t d = 0; d < rank && !overflow; d++) {
        overflow = stg_mul_u64(count, dims[d], &count);
    }
    e->count = count;
    e->count_overflow = overflow;
    if (rank > 0 && c->h->want_public) {
        uint64_t *kept = stg_arena_alloc(&c->h->pub_arena, rank * sizeof(uint64_t), 8);
        if (kept == NULL) {
            fatal_system_memory(c, pos);
            return;
        }
        memcpy(kept, dims, rank * sizeof(uint64_t));
        e->shape = kept;
    }
}

static void parse_shape(st_ctx *c, st_entry *e, stg_json_event *ev)
{
    e->has_shape = true;
    e->shape_pos = ev->offset;
    if (ev->type != STG_JSON_ARRAY_BEGIN) {
        note_tensor(
            c, note(c, STG_SHAPE_INVALID, ev->offset, "shape is not an array of unsigned integers"),
            e);
        e->bad = true;
        skip_value(c, ev, e);
        return;
    }
    bool bad = false;
    uint64_t quick[ST_QUICK_RANK];
    size_t rank;
    size_t quick_max = c->lim->max_rank < ST_QUICK_RANK ? c->lim->max_rank : ST_QUICK_RANK;
    if (stg_json_uint_array(&c->p, quick, quick_max, &rank)) {
        /* the common shape: plain integers within max_rank, nothing to report */
        set_shape(c, e, ev->offset, quick, rank);
        return;
    }
    rank = read_uint_array(c, e, STG_SHAPE_INVALID, "shape", c->lim->max_rank, "max_rank", &bad);
    if (rank == SIZE_MAX) {
        return;
    }
    if (bad) {
        e->bad = true;
        return;
    }
    set_shape(c, e, ev->offset, c->shape_buf, rank);
}

static void parse_offsets(st_ctx *c, st_entry *e, stg_json_event *ev)
{
    e->has_offsets = true;
    e->offsets_pos = ev->offset;
    if (ev->type != STG_JSON_ARRAY_BEGIN) {
        note_tensor(c,
                    note(c, STG_OFFSETS_INVALID, ev->offset,
                         "data_offsets is not an array of two unsigned integers"),
                    e);
        e->bad = true;
        skip_value(c, ev, e);
        return;
    }
    uint64_t pair[2];
    size_t count = 0;
    bool bad = false;
    if (stg_json_uint_array(&c->p, pair, 2, &count)) {
        if (count == 2) {
            e->begin = pair[0];
            e->end = pair[1];
            return;
        }
    } else {
        count = read_uint_array(c, e, STG_OFFSETS_INVALID, "data_offsets", 2, NULL, &bad);
    }
    if (count == SIZE_MAX) {
        return;
    }
    if (bad) {
        e->bad = true;
        return;
    }
    if (count != 2) {
        note_tensor(c,
                    note(c, STG_OFFSETS_INVALID, ev->offset,
                         "data_offsets has %llu elements, not 2", (unsigned long long)count),
                    e);
        e->bad = true;
        return;
    }
    e->begin = c->shape_buf[0];
    e->end = c->shape_buf[1];
}

/* Field key just read inside an entry object (or position in the array form). */
static void parse_field(st_ctx *c, st_entry *e, int which, stg_json_event *v)
{
    switch (which) {
    case 0: parse_dtype(c, e, v); break;
    case 1: parse_shape(c, e, v); break;
    default: parse_offsets(c, e, v); break;
    }
}

static int field_index(const stg_json_event *k)
{
    if (!k->has_escapes) {
        /* the raw bytes are the key: lengths first */
        if (k->str_len == 5) {
            return memcmp(k->str, "dtype", 5) == 0 ? 0 : (memcmp(k->str, "shape", 5) == 0 ? 1 : -1);
        }
        return k->str_len == 12 && memcmp(k->str, "data_offsets", 12) == 0 ? 2 : -1;
    }
    if (key_is(k, "dtype")) {
        return 0;
    }
    if (key_is(k, "shape")) {
        return 1;
    }
    if (key_is(k, "data_offsets")) {
        return 2;
    }
    return -1;
}

/* Which size check of an entry failed, as the reference makes them: the offsets are reversed,
 * the element count times the bits overflows (folded left to right: an overflow at any step
 * counts, even if a later dimension is 0), the bits are not whole bytes, or the size is not the
 * offsets' span. */
enum { ST_SIZE_OK = 0, ST_SIZE_REVERSED, ST_SIZE_OVERFLOW, ST_SIZE_SUBBYTE, ST_SIZE_MISMATCH };

/* The entry's size check; *value: the element count (sub-byte) or the byte size (mismatch). */
static uint8_t entry_size_issue(const st_entry *e, uint64_t *value)
{
    *value = 0;
    if (e->begin > e->end) {
        return ST_SIZE_REVERSED;
    }
    uint64_t bits;
    if (e->count_overflow || stg_mul_u64(e->count, stg_dtype_bits(e->dtype), &bits)) {
        return ST_SIZE_OVERFLOW;
    }
    if (bits % 8 != 0) {
        *value = e->count;
        return ST_SIZE_SUBBYTE;
    }
    *value = bits / 8;
    return e->end - e->begin == bits / 8 ? ST_SIZE_OK : ST_SIZE_MISMATCH;
}

/* Grows one of the header's tables to hold `count` + 1 elements of `size` bytes. */
static bool table_room(st_ctx *c, void **buf, size_t *cap_bytes, size_t count, size_t size,
                       size_t pos)
{
    size_t need = (count + 1) * size;
    if (need > *cap_bytes && !grow_exact(&c->h->arena, buf, cap_bytes, grown(*cap_bytes, need))) {
        fatal_memory(c, pos);
        return false;
    }
    return true;
}

static void append_record(st_ctx *c, const st_entry *e)
{
    stg_st_header *h = c->h;
    size_t need = (h->tensor_count + 1) * sizeof(stg_st_tensor);
    void *buf = h->tensors;
    if (need > h->tensors_cap_bytes && need <= h->tensors_space_bytes) {
        /* inside the reserved space: charged as growth would charge it (reserve_table) */
        size_t want = grown(h->tensors_cap_bytes, need);
        if (want > h->tensors_space_bytes) {
            want = h->tensors_space_bytes;
        }
        stg_arena *a = &h->arena;
        size_t others = a->reserved - h->tensors_cap_bytes;
        if (others > a->cap || want > a->cap - others) {
            a->failed = 1;
            fatal_memory(c, e->key_pos);
            return;
        }
        a->reserved = others + want;
        if (a->reserved > a->peak) {
            a->peak = a->reserved;
        }
        h->tensors_cap_bytes = want;
    } else if (need > h->tensors_space_bytes) {
        if (!table_room(c, &buf, &h->tensors_cap_bytes, h->tensor_count, sizeof(stg_st_tensor),
                        e->key_pos)) {
            return;
        }
        h->tensors = buf;
        h->tensors_space_bytes = h->tensors_cap_bytes;
    }
    if (h->want_public) {
        size_t need_shapes = (h->tensor_count + 1) * sizeof(stg_st_shape);
        buf = h->shapes;
        if (need_shapes > h->shapes_cap_bytes &&
            !grow_exact(&h->pub_arena, &buf, &h->shapes_cap_bytes,
                        grown(h->shapes_cap_bytes, need_shapes))) {
            fatal_system_memory(c, e->key_pos);
            return;
        }
        h->shapes = buf;
        h->shapes[h->tensor_count].dims = e->shape;
        h->shapes[h->tensor_count].rank = e->rank;
    }
    /* Records in strictly increasing (begin, end) are in stage 3's order whatever their names;
     * ties or any step back leave the check to stage 3. Dropping superseded records later keeps
     * an ordered table ordered. */
    if (h->tensor_count > 0) {
        const stg_st_tensor *last = &h->tensors[h->tensor_count - 1];
        h->data_order = h->data_order &&
                        (last->begin < e->begin || (last->begin == e->begin && last->end < e->end));
    }
    /* Sized now, while the entry is at hand; a record that fails is reported by check_records
     * (only if no later entry of its name replaces it). Positions are below 2^32 (the header
     * ceiling). */
    uint64_t value;
    uint8_t issue = entry_size_issue(e, &value);
    size_t delta = e->offsets_pos - e->key_pos; /* the offsets come after the key */
    bool far = delta == 0 || delta > STG_ST_DELTA_MAX;
    uint32_t info = (uint32_t)e->dtype;
    if (issue != ST_SIZE_OK) {
        info |= STG_ST_SIZE_ISSUE;
        c->size_issues++;
    }
    if (issue != ST_SIZE_OK || far || e->name_escaped) {
        buf = h->rare;
        if (!table_room(c, &buf, &h->rare_cap_bytes, h->rare_count, sizeof(stg_st_rare),
                        e->key_pos)) {
            return;
        }
        h->rare = buf;
        stg_st_rare *x = &h->rare[h->rare_count++];
        x->key_pos = (uint32_t)e->key_pos;
        x->offsets_pos = (uint32_t)e->offsets_pos;
        x->shape_pos = (uint32_t)e->shape_pos;
        x->issue = issue;
        x->value = value;
        x->name = e->name_escaped ? e->name : NULL;
        x->name_len = e->name_len;
        info |= STG_ST_RARE;
    }
    if (!far) {
        info |= (uint32_t)delta << STG_ST_DELTA_SHIFT;
    }
    /* Every field written once (no memset first: the table is the largest write of the pass). */
    stg_st_tensor *t = &h->tensors[h->tensor_count++];
    t->begin = e->begin;
    t->end = e->end;
    t->key_pos = (uint32_t)e->key_pos;
    t->info = info;
}

/* An entry in the writer's compact form, read in one call (stg_json_compact_object): the same
 * fields and findings as the event path below gives for the same bytes. */
static bool parse_compact_entry(st_ctx *c, st_entry *e)
{
    uint64_t dims[ST_QUICK_RANK], offs[2];
    size_t quick_max = c->lim->max_rank < ST_QUICK_RANK ? c->lim->max_rank : ST_QUICK_RANK;
    stg_json_compact cf;
    if (!c->form_ok || !stg_json_compact_object(&c->p, &c->form, dims, quick_max, offs, 2, &cf)) {
        return false;
    }
    dtype_string(c, e, cf.str, cf.str_len, false, cf.str_offset);
    e->has_shape = true;
    e->shape_pos = cf.arr_offset[0];
    set_shape(c, e, cf.arr_offset[0], dims, cf.count[0]);
    e->has_offsets = true;
    e->offsets_pos = cf.arr_offset[1];
    if (cf.count[1] == 2) {
        e->begin = offs[0];
        e->end = offs[1];
    } else {
        note_tensor(c,
                    note(c, STG_OFFSETS_INVALID, cf.arr_offset[1],
                         "data_offsets has %llu elements, not 2", (unsigned long long)cf.count[1]),
                    e);
        e->bad = true;
    }
    return true;
}

static void parse_entry(st_ctx *c, st_entry *e)
{
    stg_json_event ev;
    if (!next(c, &ev)) {
        return;
    }
    e->value_pos = ev.offset;
    if (ev.type == STG_JSON_OBJECT_BEGIN && parse_compact_entry(c, e)) {
        if (c->fatal) {
            return;
        }
    } else if (ev.type == STG_JSON_OBJECT_BEGIN) {
        for (;;) {
            stg_json_event k;
            if (!next(c, &k)) {
                return;
            }
            if (k.type == STG_JSON_OBJECT_END) {
                break;
            }
            if (k.type == STG_JSON_DUPLICATE) {
                bool known = key_at_is(c, k.offset, "dtype") || key_at_is(c, k.offset, "shape") ||
                             key_at_is(c, k.offset, "data_offsets");
                note_tensor(c,
                            note_sev(c, STG_JSON_DUPLICATE_KEY,
                                     known ? STG_SEV_ERROR : strict_only(c), k.offset,
                                     known ? "a tensor entry repeats a field"
                                           : "a tensor entry repeats an unknown field"),
                            e);
                if (known) {
                    e->bad = true;
                }
                continue;
            }
            if (k.type != STG_JSON_KEY) {
                fatal(c, STG_JSON_SYNTAX, file_off(k.offset), "unexpected JSON event in an object");
                return;
            }
            int which = field_index(&k);
            stg_json_event v;
            if (!next(c, &v)) {
                return;
            }
            if (which < 0) {
                note_tensor(c,
                            note(c, STG_TENSOR_INFO_INVALID, k.offset,
                                 "a tensor entry has a field other than dtype, shape and "
                                 "data_offsets"),
                            e);
                if (!skip_value(c, &v, e)) {
                    return;
                }
                continue;
            }
            parse_field(c, e, which, &v);
            if (c->fatal) {
                return;
            }
        }
    } else if (ev.type == STG_JSON_ARRAY_BEGIN) {
        note_tensor(c,
                    note(c, STG_TENSOR_INFO_INVALID, ev.offset,
                         "a tensor entry is an array [dtype, shape, data_offsets], not an "
                         "object"),
                    e);
        size_t count = 0;
        for (;;) {
            stg_json_event v;
            if (!next(c, &v)) {
                return;
            }
            if (v.type == STG_JSON_ARRAY_END) {
                break;
            }
            if (count < 3) {
                parse_field(c, e, (int)count, &v);
                if (c->fatal) {
                    return;
                }
            } else if (!skip_value(c, &v, e)) {
                return;
            }
            count++;
        }
        if (count != 3) {
            note_tensor(c,
                        note_sev(c, STG_TENSOR_INFO_INVALID, STG_SEV_ERROR, ev.offset,
                                 "a tensor entry in array form has %llu elements, not 3",
                                 (unsigned long long)count),
                        e);
            e->bad = true;
            return;
        }
    } else {
        note_tensor(c,
                    note_sev(c, STG_TENSOR_INFO_INVALID, STG_SEV_ERROR, ev.offset,
                             "a tensor entry is not an object"),
                    e);
        return;
    }
    if (!e->has_dtype || !e->has_shape || !e->has_offsets) {
        note_tensor(c,
                    note_sev(c, STG_TENSOR_INFO_INVALID, STG_SEV_ERROR, e->value_pos,
                             "a tensor entry lacks %s",
                             !e->has_dtype   ? "dtype"
                             : !e->has_shape ? "shape"
                                             : "data_offsets"),
                    e);
        return;
    }
    if (!e->bad) {
        append_record(c, e);
    }
}

/* ---- __metadata__ ---- */

/* The first of keyoff[0..n) (increasing) not below `want`, searched outward from `hint`: the
 * duplicates of an object come in file order, and the earlier entry of each is most often just
 * past the last one's (a key repeated over and over), so this costs O(log distance) instead of
 * O(log n) with a mispredicted branch per step. */
static size_t meta_entry_at(const size_t *keyoff, size_t n, size_t want, size_t hint)
{
    size_t lo = 0, hi = n;
    if (hint > n) {
        hint = n;
    }
    if (hint < n && keyoff[hint] < want) { /* gallop forward */
        size_t step = 1;
        lo = hint + 1;
        while (lo + step - 1 < n && keyoff[lo + step - 1] < want) {
            lo += step;
            step *= 2;
        }
        hi = lo + step - 1 < n ? lo + step - 1 : n;
    } else { /* keyoff[hint] >= want (or hint == n): gallop backward */
        size_t step = 1;
        hi = hint;
        while (hi >= step && keyoff[hi - step] >= want) {
            hi -= step;
            step *= 2;
        }
        lo = hi >= step ? hi - step + 1 : 0;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keyoff[mid] < want) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void parse_metadata(st_ctx *c)
{
    stg_json_event ev;
    if (!next(c, &ev)) {
        return;
    }
    if (ev.type == STG_JSON_NULL) {
        note(c, STG_METADATA_INVALID, ev.offset,
             "__metadata__ is null (the reference treats it as absent)");
        return;
    }
    if (ev.type != STG_JSON_OBJECT_BEGIN) {
        note_sev(c, STG_METADATA_INVALID, STG_SEV_ERROR, ev.offset,
                 "__metadata__ is not an object of strings");
        skip_value(c, &ev, NULL);
        return;
    }
    stg_st_header *h = c->h;
    size_t hint = 0; /* where the last duplicate's earlier entry was, plus one */
    for (;;) {
        stg_json_event k;
        if (!next(c, &k)) {
            return;
        }
        if (k.type == STG_JSON_OBJECT_END) {
            return;
        }
        if (k.type == STG_JSON_DUPLICATE) {
            note(c, STG_JSON_DUPLICATE_KEY, k.offset,
                 "a key is repeated inside __metadata__ (the reference keeps the last)");
            /* Last wins: drop the earlier entry (keys are in file order). */
            size_t at = meta_entry_at(c->meta_keyoff, h->metadata_count, k.prev_offset, hint);
            if (at < h->metadata_count && c->meta_keyoff[at] == k.prev_offset) {
                h->metadata[at].key = NULL;
                hint = at + 1;
            }
            continue;
        }
        if (k.type != STG_JSON_KEY) {
            fatal(c, STG_JSON_SYNTAX, file_off(k.offset), "unexpected JSON event in an object");
            return;
        }
        c->meta_entries++;
        if (c->meta_entries > c->lim->max_metadata_entries) {
            fatal_limit(c, k.offset, "max_metadata_entries", c->lim->max_metadata_entries);
            return;
        }
        stg_json_event v;
        if (!next(c, &v)) {
            return;
        }
        if (v.type != STG_JSON_STRING) {
            note_sev(c, STG_METADATA_INVALID, STG_SEV_ERROR, v.offset,
                     "a __metadata__ value is not a string");
            if (!skip_value(c, &v, NULL)) {
                return;
            }
            continue;
        }
        stg_st_meta m;
        if (!decoded_string(c, &k, &m.key, &m.key_len) ||
            !decoded_string(c, &v, &m.value, &m.value_len)) {
            return;
        }
        size_t need = (h->metadata_count + 1) * sizeof(stg_st_meta);
        size_t need_off = (h->metadata_count + 1) * sizeof(size_t);
        if (need > h->metadata_cap_bytes) { /* grows by 1.5, not on every entry */
            void *buf = h->metadata;
            if (!grow_exact(&h->arena, &buf, &h->metadata_cap_bytes,
                            grown(h->metadata_cap_bytes, need))) {
                fatal_memory(c, k.offset);
                return;
            }
            h->metadata = buf;
        }
        if (stg_arena_grow_buffer(&h->arena, (void **)&c->meta_keyoff, &c->meta_keyoff_cap_bytes,
                                  need_off) != 0) {
            fatal_memory(c, k.offset);
            return;
        }
        c->meta_keyoff[h->metadata_count] = k.offset;
        h->metadata[h->metadata_count++] = m;
    }
}

/* ---- top level ---- */

/* The record whose key token is at header position key_pos (records are in file order). */
static stg_st_tensor *record_at(stg_st_header *h, size_t key_pos)
{
    size_t lo = 0, hi = h->tensor_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->tensors[mid].key_pos < key_pos) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < h->tensor_count && h->tensors[lo].key_pos == key_pos ? &h->tensors[lo] : NULL;
}

static void set_record_tensor(st_ctx *c, stg_finding *f, const stg_st_tensor *t)
{
    const char *name;
    size_t len;
    stg_st_name(c->h, t, &name, &len);
    stg_report_set_tensor(c->tmp, f, name, len);
}

static void top_duplicate(st_ctx *c, const stg_json_event *k)
{
    if (key_at_is(c, k->offset, "__metadata__")) {
        note_sev(c, STG_JSON_DUPLICATE_KEY, STG_SEV_ERROR, k->offset,
                 "__metadata__ appears more than once");
        return;
    }
    stg_st_tensor *prev = record_at(c->h, k->prev_offset);
    stg_st_tensor *cur = record_at(c->h, k->offset);
    stg_finding *f = note(c, STG_JSON_DUPLICATE_KEY, k->offset,
                          "a tensor name is repeated (the reference keeps the last entry)");
    if (cur != NULL) {
        set_record_tensor(c, f, cur);
    } else if (prev != NULL) {
        set_record_tensor(c, f, prev);
    }
    if (prev != NULL && (prev->info & STG_ST_SUPERSEDED) == 0) {
        prev->info |= STG_ST_SUPERSEDED;
        c->superseded++;
    }
}

static void top_key(st_ctx *c, const stg_json_event *k)
{
    if (key_is(k, "__metadata__")) {
        parse_metadata(c);
        return;
    }
    c->tensor_keys++;
    if (c->tensor_keys > c->lim->max_tensors) {
        fatal_limit(c, k->offset, "max_tensors", c->lim->max_tensors);
        return;
    }
    st_entry e;
    entry_init(&e, k->offset);
    if (!decoded_string(c, k, &e.name, &e.name_len)) {
        return;
    }
    e.name_escaped = k->has_escapes;
    if (e.name_len > c->lim->max_name_len) {
        fatal_limit(c, k->offset, "max_name_len", c->lim->max_name_len);
        return;
    }
    if (e.name_len == 0) {
        note_tensor(c, note(c, STG_TENSOR_NAME_INVALID, k->offset, "a tensor name is empty"), &e);
    } else if (control_in_name(e.name, e.name_len)) {
        note_tensor(
            c,
            note(c, STG_TENSOR_NAME_INVALID, k->offset, "a tensor name holds control characters"),
            &e);
    }
    parse_entry(c, &e);
}

/* Checks the reference makes on the entries it keeps, once duplicates are resolved. */
static void check_records(st_ctx *c)
{
    stg_st_header *h = c->h;
    size_t kept = h->tensor_count;
    if (c->superseded > 0) { /* the table is walked only when something moves */
        kept = 0;
        for (size_t i = 0; i < h->tensor_count; i++) {
            if ((h->tensors[i].info & STG_ST_SUPERSEDED) != 0) {
                continue;
            }
            if (kept != i) { /* nothing moves until the first dropped record */
                h->tensors[kept] = h->tensors[i];
                if (h->shapes != NULL) {
                    h->shapes[kept] = h->shapes[i];
                }
            }
            kept++;
        }
        h->tensor_count = kept;
    }
    for (size_t i = 0; i < kept && c->size_issues > 0; i++) {
        const stg_st_tensor *t = &h->tensors[i];
        if ((t->info & STG_ST_SIZE_ISSUE) == 0) {
            continue; /* sized by append_record */
        }
        const stg_st_rare *x = stg_st_rare_of(h, t); /* a size issue always has one */
        if (x == NULL) {
            continue;
        }
        size_t opos = x->offsets_pos;
        size_t npos = x->shape_pos;
        stg_finding *f;
        switch (x->issue) {
        case ST_SIZE_REVERSED:
            f = note(c, STG_OFFSETS_INVALID, opos, "data_offsets begin %llu is after end %llu",
                     (unsigned long long)t->begin, (unsigned long long)t->end);
            break;
        case ST_SIZE_OVERFLOW:
            f = note(c, STG_SHAPE_OVERFLOW, npos,
                     "the element count times bits per element overflows 64 bits");
            break;
        case ST_SIZE_SUBBYTE:
            f = note(c, STG_SUBBYTE_MISALIGNED, npos,
                     "%llu elements of %u bits are not a whole number of bytes",
                     (unsigned long long)x->value, stg_dtype_bits(stg_st_dtype(t)));
            break;
        default:
            f = note(c, STG_SIZE_MISMATCH, opos,
                     "data_offsets span %llu bytes but the shape and dtype need %llu",
                     (unsigned long long)(t->end - t->begin), (unsigned long long)x->value);
            break;
        }
        set_record_tensor(c, f, t);
    }
    /* Metadata entries dropped by a later key of the same name. */
    size_t mk = 0;
    for (size_t i = 0; i < h->metadata_count; i++) {
        if (h->metadata[i].key != NULL) {
            h->metadata[mk++] = h->metadata[i];
        }
    }
    h->metadata_count = mk;
}

/* Trailing bytes after the top-level object: spaces are the writer's padding; other JSON
 * whitespace the reference accepts (strict error, compat warning); anything else is an error. */
static void check_trailing(st_ctx *c, size_t from)
{
    size_t i = from;
    while (i < c->n && c->hdr[i] == ' ') {
        i++;
    }
    if (i == c->n) {
        return;
    }
    size_t first = i;
    while (i < c->n && is_json_ws(c->hdr[i])) {
        i++;
    }
    if (i == c->n) {
        note(c, STG_HEADER_TRAILING_BYTES, first,
             "JSON whitespace other than spaces follows the header object");
        return;
    }
    note_sev(c, STG_HEADER_TRAILING_BYTES, STG_SEV_ERROR, i,
             "bytes other than whitespace follow the header object");
}

static void parse_top(st_ctx *c)
{
    stg_json_event ev;
    if (!next(c, &ev)) {
        return;
    }
    if (ev.type != STG_JSON_OBJECT_BEGIN) {
        fatal_sev(c, STG_HEADER_NOT_JSON_OBJECT, STG_SEV_ERROR, file_off(ev.offset),
                  "the header is not a JSON object");
        return;
    }
    for (;;) {
        if (!next(c, &ev)) {
            return;
        }
        if (ev.type == STG_JSON_OBJECT_END) {
            break;
        }
        if (ev.type == STG_JSON_DUPLICATE) {
            top_duplicate(c, &ev);
        } else if (ev.type == STG_JSON_KEY) {
            top_key(c, &ev);
        } else {
            fatal(c, STG_JSON_SYNTAX, file_off(ev.offset), "unexpected JSON event in an object");
        }
        if (c->fatal) {
            return;
        }
    }
    /* The top-level object is complete: the parser's next event would be STG_JSON_END just
     * past its closing brace, and it reads nothing after it. */
    check_trailing(c, ev.offset + ev.len);
    check_records(c);
}

/* Reserves address space for the table: as many records as the header could hold object-form
 * entries (each takes at least ST_MIN_ENTRY bytes), so that real headers get their table in one
 * allocation instead of repeated growth. Only what records fill is ever touched (large buffers
 * come as fresh pages), and only that is charged to the budget, as growth by 1.5 would charge
 * it (append_record): the reservation changes neither the budget's peak nor where a limit
 * stops. It was once sized from a count of '{' bytes, a second pass over the whole header that
 * cost ~8% at 900,000 tensors. When the system refuses the space, the table grows instead. */
static void reserve_table(st_ctx *c)
{
    size_t entries = c->n / ST_MIN_ENTRY;
    size_t want;
    if (entries <= 1 || __builtin_mul_overflow(entries, sizeof(stg_st_tensor), &want) ||
        c->h->tensors != NULL) {
        return;
    }
    void *buf = stg_mem_alloc(want);
    if (buf != NULL) {
        c->h->tensors = buf;
        c->h->tensors_space_bytes = want;
        c->h->tensors_cap_bytes = 0;
    }
}

bool stg_st_parse_header(const uint8_t *hdr, uint64_t n, const stg_limits *lim, stg_report *r,
                         stg_st_header *h)
{
    h->schema_ok = false;
    h->layout_ok = false;
    h->data_order = true; /* until append_record sees a record out of order */
    h->header_len = n;
    h->hdr = hdr;
    h->data_start = n + 8u; /* n <= 2^32 - 1 after framing */
    if (n > ST_HEADER_CEILING) {
        stg_finding *f = stg_report_add(
            r, STG_HEADER_TOO_LARGE, 0, "header length %llu is over the ceiling %llu",
            (unsigned long long)n, (unsigned long long)ST_HEADER_CEILING);
        stg_report_set_limit(r, f, "max_header_len");
        return false;
    }
    if (h->arena.head == NULL && h->arena.reserved == 0) {
        uint64_t budget = stg_st_memory_budget(lim, n);
        stg_arena_init(&h->arena, budget > SIZE_MAX ? SIZE_MAX : (size_t)budget);
    }

    /* Leading bytes: the reference skips JSON whitespace; anything else before '{' fails. */
    size_t len = (size_t)n;
    size_t i = 0;
    while (i < len && is_json_ws(hdr[i])) {
        i++;
    }
    if (i == len || hdr[i] != '{') {
        stg_report_add_sev(r, STG_HEADER_NOT_JSON_OBJECT, STG_SEV_ERROR, file_off(i == len ? 0 : i),
                           "the header does not start with a JSON object ('{')");
        return false;
    }

    st_ctx c;
    memset(&c, 0, sizeof c);
    c.hdr = hdr;
    c.n = len;
    c.lim = lim;
    c.out = r;
    c.h = h;
    c.tmp = stg_report_new(lim);
    if (c.tmp == NULL) {
        stg_report_oom(r);
        return false;
    }
    if (i > 0) {
        note(&c, STG_HEADER_NOT_JSON_OBJECT, 0,
             "whitespace comes before the header's opening brace");
    }
    reserve_table(&c);
    c.form_ok = stg_json_compact_form_init(&c.form, "dtype", "shape", "data_offsets");
    stg_json_init(&c.p, hdr, len, lim->max_json_depth, &h->arena);
    stg_json_set_seed(&c.p, h->hash_seed);
    c.p.reject_f64_overflow = true; /* the reference's serde_json: "number out of range" */
    parse_top(&c);
    stg_json_release(&c.p);
    if (c.shape_buf != NULL) {
        void *p = c.shape_buf;
        stg_arena_free_buffer(&h->arena, &p, &c.shape_cap_bytes);
    }
    if (c.meta_keyoff != NULL) {
        void *p = c.meta_keyoff;
        stg_arena_free_buffer(&h->arena, &p, &c.meta_keyoff_cap_bytes);
    }
    if (!c.fatal && h->want_public && h->tensor_count > 0) {
        /* the views stage 3 fills, reserved now: a stream's memory stays what it was once the
         * header is in */
        void *pb = h->pub;
        size_t names = 0;
        for (size_t t = 0; t < h->tensor_count; t++) {
            const char *name;
            size_t name_len;
            stg_st_name(h, &h->tensors[t], &name, &name_len);
            names += name_len + 1;
        }
        if (stg_arena_grow_buffer(&h->pub_arena, &pb, &h->pub_cap_bytes,
                                  h->tensor_count * sizeof(stg_tensor)) != 0 ||
            (h->pub_names = stg_arena_alloc(&h->pub_arena, names, 1)) == NULL) {
            fatal_system_memory(&c, 0);
        } else {
            h->pub = pb;
        }
    }
    if (!c.fatal) {
        stg_report_merge(r, c.tmp, NULL, STG_NO_OFFSET);
    } else {
        h->tensor_count = 0;
        h->rare_count = 0;
        h->metadata_count = 0;
    }
    stg_report_free(c.tmp);
    h->schema_ok = !c.fatal && !c.errors;
    return h->schema_ok;
}
