/* Pull parser for RFC 8259 JSON with strict UTF-8 (see json.h for the contract and
 * docs/json.md for the design, the error offsets and the memory formula).
 *
 * Reads: the parser keeps its own bounded reader (buf, len, pos) instead of a stg_cursor because
 * it is the hot loop of every validation; the discipline is the cursor's: every read is preceded
 * by a comparison with what is left (`i < n`, `n - i >= 8`), never `i + k > n`. */
#include "json.h"

#include <string.h>

#include "hash.h"
#include "mem.h"
#include "sort.h"
#include "text.h"
#include "util.h"

/* 8 bytes per key (inputs are at most STG_JSON_MAX_LEN bytes, so positions fit 32 bits): at
 * a million keys in one object this is the largest buffer after the input itself. */
struct stg_json_key {
    /* While its object has at most SMALL_OBJECT_KEYS keys: the raw body length << 1 | has
     * escapes (pairwise checks need no hash), or SMALL_LONG (odd: compared in full) for a body
     * too long for that. From the key after that on, every record of the object holds the top
     * 32 bits of stg_json_key_hash of the decoded key (record_hash). */
    uint32_t hash;
    uint32_t offset; /* the key's opening quote; its end is found again when needed */
};

struct stg_json_dup {
    uint32_t offset;      /* the repeat's opening quote */
    uint32_t prev_offset; /* the occurrence before it */
};

/* Bytes ahead of each compact object whose cache line is asked for early (a hint only). */
#define PREFETCH_AHEAD 1024u
/* The small form of a body of 2^31 bytes or more. */
#define SMALL_LONG UINT32_MAX

/* Objects with up to this many keys are checked pairwise, without sorting. */
#define SMALL_OBJECT_KEYS 8u
/* Objects up to this many keys are sorted by insertion sort (in-place radix above). */
#define INSERTION_SORT_KEYS 32u

enum parse_state {
    ST_VALUE = 0, /* the top-level value must come (values after ':' or ',' are read in the
                      same call as their separator) */
    ST_ARR_FIRST, /* just after '[': a value or ']' */
    ST_OBJ_FIRST, /* just after '{': a key or '}' */
    ST_OBJ_COLON, /* after a key: ':' */
    ST_AFTER      /* after a member or element: ',' or the closing bracket */
};

#define HOT static inline __attribute__((always_inline))
#define COLD static __attribute__((noinline, cold))

static const uint8_t json_ws[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1};

/* ------------------------------------------------------------------------------------------ */
/* events and errors */

static inline void ev_set(stg_json_event *ev, stg_json_type type, size_t offset, size_t len,
                          uint32_t depth)
{
    /* Fields that do not apply to `type` read as 0 / NULL / false. Assigned one by one rather
     * than by memset, so the compiler drops the stores a caller overwrites right after. */
    ev->type = type;
    ev->offset = offset;
    ev->len = len;
    ev->depth = depth;
    ev->str = NULL;
    ev->str_len = 0;
    ev->has_escapes = false;
    ev->is_uint = false;
    ev->uint_overflow = false;
    ev->uint_value = 0;
    ev->prev_offset = 0;
}

static void set_error(stg_json_parser *p, stg_json_error error, size_t offset)
{
    if (p->error == STG_JSON_E_NONE) {
        p->error = error;
        p->error_offset = offset;
    }
    p->slow = 1;
}

COLD stg_json_type fail(stg_json_parser *p, stg_json_event *ev, stg_json_error error, size_t offset)
{
    set_error(p, error, offset);
    ev_set(ev, STG_JSON_ERROR, p->error_offset, 0, p->depth);
    return STG_JSON_ERROR;
}

/* ------------------------------------------------------------------------------------------ */
/* UTF-8 and strings */

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* High bit set in each byte of w (little-endian lanes) that is '"', '\\', < 0x20 or >= 0x80.
 * Borrows can flag a byte above a true hit, never below one, so the lowest flag is exact. */
static inline uint64_t string_special(uint64_t w)
{
    uint64_t q = w ^ (ONES * (uint64_t)'"');
    uint64_t s = w ^ (ONES * (uint64_t)'\\');
    uint64_t m = ((q - ONES) & ~q) | ((s - ONES) & ~s) | ((w - ONES * 0x20u) & ~w) | w;
    return m & HIGHS;
}

/* Value + 1 of each hex digit byte; 0 for every other byte. */
static const uint8_t hex_value1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Four hex digits at b[at..]: 1 with *cp set, 0 when a digit is not hex, -1 when cut short. */
HOT int hex4(const uint8_t *b, size_t at, size_t n, uint32_t *cp)
{
    if (at < n && n - at >= 4) { /* all four there: one table lookup each, one test */
        /* a non-hex byte's 0 - 1 sets every high bit */
        uint32_t d0 = hex_value1[b[at]] - 1u, d1 = hex_value1[b[at + 1]] - 1u;
        uint32_t d2 = hex_value1[b[at + 2]] - 1u, d3 = hex_value1[b[at + 3]] - 1u;
        if (((d0 | d1 | d2 | d3) & ~0xFu) == 0) {
            *cp = (d0 << 12) | (d1 << 8) | (d2 << 4) | d3;
            return 1;
        }
    }
    uint32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
        if (at >= n || n - at <= k) {
            return -1;
        }
        int h = stg_hex_digit(b[at + k]);
        if (h < 0) {
            return 0;
        }
        v = (v << 4) | (uint32_t)h;
    }
    *cp = v;
    return 1;
}

/* Validates the escape whose backslash is b[i]; *adv gets its raw length. Errors point at the
 * backslash, or at the end of the input when it is cut short. */
static int scan_escape(stg_json_parser *p, size_t i, size_t *adv)
{
    const uint8_t *b = p->buf;
    size_t n = p->len;
    if (n - i < 2) {
        set_error(p, STG_JSON_E_SYNTAX, n);
        return -1;
    }
    switch (b[i + 1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': *adv = 2; return 0;
    case 'u': break;
    default: set_error(p, STG_JSON_E_SYNTAX, i); return -1;
    }
    uint32_t cp = 0;
    int h = hex4(b, i + 2, n, &cp);
    if (h <= 0) {
        set_error(p, STG_JSON_E_SYNTAX, h < 0 ? n : i);
        return -1;
    }
    if (cp >= 0xDC00u && cp <= 0xDFFFu) {
        set_error(p, STG_JSON_E_UTF8, i); /* a low surrogate with no high one before it */
        return -1;
    }
    if (cp < 0xD800u || cp > 0xDBFFu) {
        *adv = 6;
        return 0;
    }
    /* A high surrogate: a \u low surrogate must follow at once. */
    size_t j = i + 6;
    if (j >= n) {
        set_error(p, STG_JSON_E_SYNTAX, n);
        return -1;
    }
    if (b[j] != '\\') {
        set_error(p, STG_JSON_E_UTF8, i);
        return -1;
    }
    if (n - j < 2) {
        set_error(p, STG_JSON_E_SYNTAX, n);
        return -1;
    }
    if (b[j + 1] != 'u') {
        set_error(p, STG_JSON_E_UTF8, i);
        return -1;
    }
    uint32_t lo = 0;
    h = hex4(b, j + 2, n, &lo);
    if (h <= 0) {
        set_error(p, STG_JSON_E_SYNTAX, h < 0 ? n : j);
        return -1;
    }
    if (lo < 0xDC00u || lo > 0xDFFFu) {
        set_error(p, STG_JSON_E_UTF8, i);
        return -1;
    }
    *adv = 12;
    return 0;
}

/* The rest of a string from b[i] on, once the fast scan met an escape, a control byte, a
 * non-ASCII byte or the end of the input. */
COLD int scan_string_slow(stg_json_parser *p, size_t i, size_t *end, bool *has_escapes)
{
    const uint8_t *b = p->buf;
    size_t n = p->len;
    bool esc = false;
    for (;;) {
        while (n - i >= 8) {
            uint64_t m = string_special(stg_le64(b + i));
            if (m == 0) {
                i += 8;
                continue;
            }
            i += (size_t)__builtin_ctzll(m) >> 3;
            break;
        }
        if (i >= n) {
            set_error(p, STG_JSON_E_SYNTAX, n);
            return -1;
        }
        uint8_t c = b[i];
        if (c == '"') {
            *end = i;
            *has_escapes = esc;
            return 0;
        }
        if (c == '\\') {
            size_t adv = 0;
            if (scan_escape(p, i, &adv) != 0) {
                return -1;
            }
            esc = true;
            i += adv;
        } else if (c < 0x20u) {
            set_error(p, STG_JSON_E_SYNTAX, i);
            return -1;
        } else if (c >= 0x80u) {
            size_t l = stg_utf8_seq(b + i, n - i, false);
            if (l == 0) {
                set_error(p, STG_JSON_E_UTF8, i);
                return -1;
            }
            i += l;
        } else {
            i++;
        }
    }
}

/* Scans the string whose opening quote is b[start]. On success *end is the closing quote.
 * Plain ASCII runs go 8 bytes at a time; anything else goes to the slow path. */
HOT int scan_string(stg_json_parser *p, size_t start, size_t *end, bool *has_escapes)
{
    const uint8_t *b = p->buf;
    size_t n = p->len;
    size_t i = start + 1;
    while (n - i >= 8) {
        uint64_t m = string_special(stg_le64(b + i));
        if (m != 0) {
            i += (size_t)__builtin_ctzll(m) >> 3;
            if (b[i] == '"') {
                *end = i;
                *has_escapes = false;
                return 0;
            }
            break;
        }
        i += 8;
    }
    return scan_string_slow(p, i, end, has_escapes);
}

/* The closing quote of an already validated string starting at b[start]. */
static size_t string_end(const uint8_t *b, size_t n, size_t start, bool *has_escapes)
{
    size_t i = start + 1;
    bool esc = false;
    while (i < n) {
        while (n - i >= 8) {
            uint64_t w = stg_le64(b + i);
            uint64_t q = w ^ (ONES * (uint64_t)'"');
            uint64_t s = w ^ (ONES * (uint64_t)'\\');
            uint64_t m = (((q - ONES) & ~q) | ((s - ONES) & ~s)) & HIGHS;
            if (m == 0) {
                i += 8;
                continue;
            }
            i += (size_t)__builtin_ctzll(m) >> 3;
            break;
        }
        if (i >= n) {
            break;
        }
        if (b[i] == '"') {
            break;
        }
        if (b[i] == '\\') {
            esc = true;
            i += (n - i >= 2) ? 2 : 1; /* \uXXXX: the hex digits are neither quote nor backslash */
        } else {
            i++;
        }
    }
    *has_escapes = esc;
    return i < n ? i : n;
}

/* Decodes one escape at s[i] (a backslash) into out; *adv gets the raw length consumed. Input
 * that the parser would have rejected is copied through byte by byte, never read past n. */
static size_t decode_escape(const uint8_t *s, size_t i, size_t n, uint8_t out[4], size_t *adv)
{
    if (n - i < 2) {
        out[0] = s[i];
        *adv = 1;
        return 1;
    }
    uint8_t c = s[i + 1];
    *adv = 2;
    switch (c) {
    case '"':
    case '\\':
    case '/': out[0] = c; return 1;
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'u': break;
    default:
        out[0] = s[i];
        *adv = 1;
        return 1;
    }
    uint32_t cp = 0;
    if (hex4(s, i + 2, n, &cp) != 1) {
        out[0] = s[i];
        *adv = 1;
        return 1;
    }
    *adv = 6;
    if (cp >= 0xD800u && cp <= 0xDBFFu) {
        uint32_t lo = 0;
        size_t j = i + 6;
        if (j < n && n - j >= 2 && s[j] == '\\' && s[j + 1] == 'u' && hex4(s, j + 2, n, &lo) == 1 &&
            lo >= 0xDC00u && lo <= 0xDFFFu) {
            cp = 0x10000u + ((cp - 0xD800u) << 10) + (lo - 0xDC00u);
            *adv = 12;
        }
    }
    return stg_utf8_put(out, cp);
}

char *stg_json_string_copy(stg_arena *a, const stg_json_event *ev, size_t *n)
{
    uint8_t *dst = stg_arena_alloc(a, ev->str_len + 1, 1);
    if (dst == NULL) {
        return NULL;
    }
    *n = ev->has_escapes ? stg_json_decode(ev->str, ev->str_len, dst) : ev->str_len;
    if (!ev->has_escapes && *n > 0) {
        memcpy(dst, ev->str, *n);
    }
    dst[*n] = 0;
    return (char *)dst;
}

size_t stg_json_decode(const uint8_t *raw, size_t raw_len, uint8_t *dst)
{
    size_t i = 0, o = 0;
    while (i < raw_len) {
        const uint8_t *bs = memchr(raw + i, '\\', raw_len - i);
        size_t plain = bs == NULL ? raw_len - i : (size_t)(bs - (raw + i));
        if (plain > 0) {
            memmove(dst + o, raw + i, plain);
            o += plain;
            i += plain;
        }
        if (bs == NULL) {
            break;
        }
        uint8_t tmp[4];
        size_t adv = 0;
        size_t got = decode_escape(raw, i, raw_len, tmp, &adv);
        memcpy(dst + o, tmp, got);
        o += got;
        i += adv;
    }
    return o;
}

/* Decoded bytes of a raw string body, one at a time. */
typedef struct decoded_iter {
    const uint8_t *s;
    size_t i, n;
    uint8_t pend[4];
    size_t pend_len, pend_pos;
} decoded_iter;

static int decoded_next(decoded_iter *it)
{
    if (it->pend_pos < it->pend_len) {
        return it->pend[it->pend_pos++];
    }
    if (it->i >= it->n) {
        return -1;
    }
    uint8_t c = it->s[it->i];
    if (c != '\\') {
        it->i++;
        return c;
    }
    size_t adv = 0;
    it->pend_len = decode_escape(it->s, it->i, it->n, it->pend, &adv);
    it->pend_pos = 1;
    it->i += adv;
    return it->pend[0];
}

/* ------------------------------------------------------------------------------------------ */
/* key hashing and comparison */

/* One step per 8-byte word: the state and the word, multiplied by the parser's secret odd
 * multiplier into 128 bits, the halves folded (the mix of wyhash and of Go's runtime map hash).
 * The starting state and the multiplier come from the parse's seed (stg_json_set_seed): a
 * file cannot be built to make keys collide without it, whereas a public hash lets it choose
 * thousands of keys of one hash (the sort of find_duplicates still bounds them, at O(k log k),
 * but at a twentieth of the rate of distinct keys). Not a cryptographic hash: the seed is one
 * secret per scan, not a key to protect. */
__extension__ typedef unsigned __int128 hash_wide;

static inline uint64_t hash_step(const stg_json_hash_key *k, uint64_t h, uint64_t word)
{
    hash_wide m = (hash_wide)(h ^ word) * k->mul;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

static inline uint64_t hash_final(uint64_t h, uint64_t len)
{
    h ^= len;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
}

void stg_json_hash_key_init(stg_json_hash_key *k, uint64_t seed)
{
    /* two words of SipHash under the seed: neither shows the seed nor the other */
    k->start = stg_hash_u64(seed, 0x6a736f6e5f6b6579ull, 0);
    k->mul = stg_hash_u64(seed, 0x6a736f6e5f6b6579ull, 1) | 1u;
}

uint64_t stg_json_key_hash(const stg_json_hash_key *k, const uint8_t *decoded, size_t len)
{
    uint64_t h = k->start;
    size_t i = 0;
    while (len - i >= 8) {
        h = hash_step(k, h, stg_le64(decoded + i));
        i += 8;
    }
    if (i < len) {
        uint64_t tail = 0;
        for (size_t j = 0; i + j < len; j++) {
            tail |= (uint64_t)decoded[i + j] << (8 * j);
        }
        h = hash_step(k, h, tail);
    }
    return hash_final(h, (uint64_t)len);
}

/* stg_json_key_hash of b[start..start+len), which lies inside b[0..n): the tail word is read
 * whole (and masked) when the buffer has 8 bytes left there, as it has for every key but the
 * last bytes of the input. */
static inline uint64_t hash_body(const stg_json_hash_key *k, const uint8_t *b, size_t n,
                                 size_t start, size_t len)
{
    uint64_t h = k->start;
    const uint8_t *s = b + start;
    size_t i = 0;
    while (len - i >= 8) {
        h = hash_step(k, h, stg_le64(s + i));
        i += 8;
    }
    size_t rest = len - i;
    if (rest > 0) {
        uint64_t tail = 0;
        if (n - (start + i) >= 8) {
            tail = stg_le64(s + i) & (((uint64_t)1 << (8 * rest)) - 1);
        } else {
            for (size_t j = 0; j < rest; j++) {
                tail |= (uint64_t)s[i + j] << (8 * j);
            }
        }
        h = hash_step(k, h, tail);
    }
    return hash_final(h, (uint64_t)len);
}

/* The same hash, over the decoded form of a raw body with escapes. */
static uint64_t hash_escaped(const stg_json_hash_key *k, const uint8_t *raw, size_t raw_len)
{
    decoded_iter it = {raw, 0, raw_len, {0}, 0, 0};
    uint64_t h = k->start, word = 0;
    uint64_t total = 0;
    unsigned fill = 0;
    int c;
    while ((c = decoded_next(&it)) >= 0) {
        word |= (uint64_t)(unsigned)c << (8 * fill);
        total++;
        if (++fill == 8) {
            h = hash_step(k, h, word);
            word = 0;
            fill = 0;
        }
    }
    if (fill > 0) {
        h = hash_step(k, h, word);
    }
    return hash_final(h, total);
}

/* Orders two keys of the buffer by their decoded bytes. Raw bytes equal up to and including
 * a's closing quote mean equal keys: b's quote there closes b too, since the bytes before it
 * are a's (repeated keys, the usual equal pair, cost one scan and one memcmp). */
static int key_compare(const uint8_t *b, size_t n, size_t off_a, size_t off_b)
{
    bool esc_a = false, esc_b = false;
    size_t end_a = string_end(b, n, off_a, &esc_a);
    if (off_a == off_b || (end_a < n && n - off_b > end_a - off_a &&
                           memcmp(b + off_a, b + off_b, end_a - off_a + 1) == 0)) {
        return 0;
    }
    size_t end_b = string_end(b, n, off_b, &esc_b);
    size_t len_a = end_a - off_a - 1, len_b = end_b - off_b - 1;
    if (!esc_a && !esc_b) {
        size_t common = len_a < len_b ? len_a : len_b;
        int c = memcmp(b + off_a + 1, b + off_b + 1, common);
        if (c != 0) {
            return c;
        }
        return len_a < len_b ? -1 : (len_a > len_b ? 1 : 0);
    }
    decoded_iter ia = {b + off_a + 1, 0, len_a, {0}, 0, 0};
    decoded_iter ib = {b + off_b + 1, 0, len_b, {0}, 0, 0};
    for (;;) {
        int ca = decoded_next(&ia);
        int cb = decoded_next(&ib);
        if (ca != cb) {
            return ca < cb ? -1 : 1;
        }
        if (ca < 0) {
            return 0;
        }
    }
}

/* Total order used when hashes collide: hash, then decoded bytes, then position. */
static int record_compare(const stg_json_parser *p, const stg_json_key *a, const stg_json_key *b)
{
    if (a->hash != b->hash) {
        return a->hash < b->hash ? -1 : 1;
    }
    if (a->offset == b->offset) {
        return 0;
    }
    int c = key_compare(p->buf, p->len, a->offset, b->offset);
    if (c != 0) {
        return c;
    }
    return a->offset < b->offset ? -1 : 1;
}

static bool records_equal(const stg_json_parser *p, const stg_json_key *a, const stg_json_key *b)
{
    return a->hash == b->hash && key_compare(p->buf, p->len, a->offset, b->offset) == 0;
}

/* Equality of two records still in the small (length) form. */
static inline bool small_records_equal(const stg_json_parser *p, const stg_json_key *a,
                                       const stg_json_key *b)
{
    if (((a->hash | b->hash) & 1u) == 0) {
        if (a->hash != b->hash) {
            return false; /* different raw lengths */
        }
        size_t len = (size_t)(a->hash >> 1u);
        size_t n = p->len;
        size_t oa = a->offset + 1, ob = b->offset + 1;
        if (len > 0 && n - oa >= 8 && n - ob >= 8) {
            /* first word at once: most distinct keys differ there */
            uint64_t diff = stg_le64(p->buf + oa) ^ stg_le64(p->buf + ob);
            if (len < 8) {
                diff &= ((uint64_t)1 << (8 * len)) - 1;
            }
            if (diff != 0) {
                return false;
            }
            if (len <= 8) {
                return true;
            }
        }
        return memcmp(p->buf + oa, p->buf + ob, len) == 0;
    }
    return key_compare(p->buf, p->len, a->offset, b->offset) == 0;
}

/* The record of the key at b[offset] (opening quote), body length len, in hashed form: the
 * hash's top 32 bits (sort_key takes its top bits, the set its low ones). */
static uint32_t record_hash(const stg_json_parser *p, size_t offset, size_t len, bool esc)
{
    if (esc) {
        return (uint32_t)(hash_escaped(&p->hash_key, p->buf + offset + 1, len) >> 32);
    }
    return (uint32_t)(hash_body(&p->hash_key, p->buf, p->len, offset + 1, len) >> 32);
}

/* ------------------------------------------------------------------------------------------ */
/* the duplicate check at object close */

/* Full order of records (hash, then key bytes, then offset), for stg_sort. */
static int record_sort_cmp(const void *a, const void *b, void *ctx)
{
    return record_compare(ctx, a, b);
}

/* Objects are sorted by the top SORT_KEY_BITS bits of the hash only: that groups equal hashes
 * (and, for realistic key counts, little else), and runs that share those bits are then checked
 * pairwise or heap-sorted by the full order. Fewer bits mean fewer radix passes. */
#define SORT_KEY_BITS 16u
static inline uint32_t sort_key(uint32_t hash)
{
    return hash >> (32u - SORT_KEY_BITS);
}

/* Stable insertion sort by sort_key (small objects only: k <= 32). */
static void insertion_sort_records(stg_json_key *r, size_t count)
{
    for (size_t i = 1; i < count; i++) {
        stg_json_key t = r[i];
        uint32_t key = sort_key(t.hash);
        size_t j = i;
        while (j > 0 && sort_key(r[j - 1].hash) > key) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = t;
    }
}

static int ensure_tmp(stg_json_parser *p, size_t count)
{
    void *buf = p->sort_tmp;
    if (stg_arena_grow_buffer(p->arena, &buf, &p->sort_tmp_cap_bytes,
                              count * sizeof(stg_json_key)) != 0) {
        return -1;
    }
    p->sort_tmp = buf;
    return 0;
}

/* Which 32-bit value of a record a radix pass orders by. */
typedef enum rec_field { FIELD_SORT_KEY, FIELD_HASH, FIELD_OFFSET } rec_field;

static inline uint32_t field_value(const stg_json_key *k, rec_field f)
{
    return f == FIELD_OFFSET ? k->offset : (f == FIELD_HASH ? k->hash : sort_key(k->hash));
}

/* One in-place (American flag) radix pass on the byte at `shift` of a record's field: afterwards
 * r is grouped by that byte in increasing order; bucket_end[d] is where byte value d's group
 * ends. No scratch memory: the permutation follows cycles within r. */
static void flag_sort_pass(stg_json_key *r, size_t count, unsigned shift, rec_field f,
                           size_t bucket_end[256])
{
    size_t cnt[256], next[256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < count; i++) {
        cnt[(field_value(&r[i], f) >> shift) & 0xFFu]++;
    }
    size_t sum = 0;
    for (unsigned d = 0; d < 256; d++) {
        next[d] = sum;
        sum += cnt[d];
        bucket_end[d] = sum;
    }
    for (unsigned d = 0; d < 256; d++) {
        while (next[d] < bucket_end[d]) {
            stg_json_key v = r[next[d]];
            unsigned dv = (unsigned)(field_value(&v, f) >> shift) & 0xFFu;
            while (dv != d) {
                stg_json_key t = r[next[dv]];
                r[next[dv]++] = v;
                v = t;
                dv = (unsigned)(field_value(&v, f) >> shift) & 0xFFu;
            }
            r[next[d]++] = v;
        }
    }
}

/* Buckets up to this size are cheaper to insertion-sort than to give a 256-way pass. */
#define BUCKET_INSERTION_KEYS 96u

/* Groups r by sort_key in increasing order, in place: insertion sort for small counts, else a
 * flag-sort pass on the high byte and, inside each large bucket, one on the low byte. */
static void sort_records(stg_json_key *r, size_t count)
{
    if (count <= INSERTION_SORT_KEYS) {
        insertion_sort_records(r, count);
        return;
    }
    size_t high_end[256];
    flag_sort_pass(r, count, 8, FIELD_SORT_KEY, high_end);
    size_t start = 0;
    for (unsigned d = 0; d < 256; d++) {
        size_t len = high_end[d] - start;
        if (len > BUCKET_INSERTION_KEYS) {
            size_t low_end[256];
            flag_sort_pass(r + start, len, 0, FIELD_SORT_KEY, low_end);
        } else {
            insertion_sort_records(r + start, len);
        }
        start = high_end[d];
    }
}

/* Insertion sort of a small group by a field (its higher bytes, if any, are equal). */
static void insertion_sort_field(stg_json_key *r, size_t count, rec_field f)
{
    for (size_t i = 1; i < count; i++) {
        stg_json_key t = r[i];
        uint32_t key = field_value(&t, f);
        size_t j = i;
        while (j > 0 && field_value(&r[j - 1], f) > key) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = t;
    }
}

/* A segment of records waiting on an explicit sort stack, with its level (a byte's shift, or
 * the depth left). */
typedef struct sort_segment {
    size_t lo, n;
    unsigned level;
} sort_segment;

static inline void push_segment(sort_segment *st, size_t *sp, size_t lo, size_t n, unsigned level)
{
    st[*sp].lo = lo;
    st[*sp].n = n;
    st[*sp].level = level;
    (*sp)++;
}

/* Sorts r by a field's bytes from `top_shift` down to the lowest (the bytes above are equal),
 * in place: MSD flag-sort passes, depth first on an explicit stack (at most 255 siblings wait
 * at each of the four levels), insertion sort for small buckets. O(count) per byte. */
static void radix_sort_field(stg_json_key *r, size_t count, rec_field f, unsigned top_shift)
{
    sort_segment st[4 * 256 + 1];
    size_t sp = 0;
    push_segment(st, &sp, 0, count, top_shift);
    while (sp > 0) {
        sp--;
        size_t lo = st[sp].lo, n = st[sp].n;
        unsigned shift = st[sp].level;
        if (n <= INSERTION_SORT_KEYS) {
            insertion_sort_field(r + lo, n, f);
            continue;
        }
        size_t end[256];
        flag_sort_pass(r + lo, n, shift, f, end);
        if (shift == 0) {
            continue;
        }
        size_t from = 0;
        for (unsigned d = 0; d < 256; d++) {
            if (end[d] - from > 1) {
                push_segment(st, &sp, lo + from, end[d] - from, shift - 8);
            }
            from = end[d];
        }
    }
}

/* Segments this small, or past the depth bound, go to the heap sort by the full order. */
#define QUICK_SMALL_KEYS 16u

static void swap_records(stg_json_key *a, stg_json_key *b)
{
    stg_json_key t = *a;
    *a = *b;
    *b = t;
}

/* The median of three records by key bytes. */
static size_t median_of_three(const stg_json_parser *p, const stg_json_key *r, size_t a, size_t b,
                              size_t c)
{
    const uint8_t *buf = p->buf;
    size_t n = p->len;
    if (key_compare(buf, n, r[a].offset, r[b].offset) > 0) {
        size_t t = a;
        a = b;
        b = t;
    }
    if (key_compare(buf, n, r[b].offset, r[c].offset) <= 0) {
        return b;
    }
    return key_compare(buf, n, r[a].offset, r[c].offset) > 0 ? a : c;
}

/* Sorts records of one hash into the full order (key bytes, then position) the heap sort
 * gives, in O(count x log(distinct keys)) comparisons when nothing is crafted against the
 * pivots: three-way partitions by key bytes (Dijkstra's), each run of equal keys put in
 * position order by radix passes on the offset (a million copies of one key cost one
 * partition pass and four radix passes, not a million log comparisons). A segment that is
 * small, or still unsorted at depth 2 log2(count), gets the heap sort: O(k log k) whatever
 * the keys. The stack holds at most one waiting sibling per level. */
static void sort_equal_hash(stg_json_parser *p, stg_json_key *r, size_t count)
{
    sort_segment st[2 * 64 + 2];
    unsigned depth = 2;
    for (size_t c = count; c > 1; c >>= 1) {
        depth += 2;
    }
    size_t sp = 0;
    push_segment(st, &sp, 0, count, depth);
    while (sp > 0) {
        sp--;
        size_t lo = st[sp].lo, n = st[sp].n;
        unsigned d = st[sp].level;
        if (n <= QUICK_SMALL_KEYS || d == 0) {
            stg_sort(r + lo, n, sizeof *r, record_sort_cmp, (void *)p); /* flood-proof */
            continue;
        }
        size_t m = median_of_three(p, r, lo, lo + n / 2, lo + n - 1);
        uint32_t pivot = r[m].offset; /* the key's bytes stay where they are */
        size_t lt = lo, i = lo, gt = lo + n;
        while (i < gt) {
            int c = key_compare(p->buf, p->len, r[i].offset, pivot);
            if (c < 0) {
                swap_records(&r[lt++], &r[i++]);
            } else if (c > 0) {
                swap_records(&r[i], &r[--gt]);
            } else {
                i++;
            }
        }
        radix_sort_field(r + lt, gt - lt, FIELD_OFFSET, 24);
        if (lt > lo) {
            push_segment(st, &sp, lo, lt - lo, d - 1);
        }
        if (lo + n > gt) {
            push_segment(st, &sp, gt, lo + n - gt, d - 1);
        }
    }
}

/* A run of records sharing sort_key into the full order (hash, key bytes, position): radix
 * passes on the hash's two low bytes, then each group of one hash by sort_equal_hash. */
static void sort_run(stg_json_parser *p, stg_json_key *r, size_t count)
{
    radix_sort_field(r, count, FIELD_HASH, 8);
    size_t s = 0;
    while (s < count) {
        size_t e = s + 1;
        while (e < count && r[e].hash == r[s].hash) {
            e++;
        }
        if (e - s > 1) {
            sort_equal_hash(p, r + s, e - s);
        }
        s = e;
    }
}

/* Puts duplicates in position order (the sort found them by hash): as key records whose
 * offset is the repeat's, by radix passes, and back (both are two 32-bit words). */
_Static_assert(sizeof(stg_json_key) == sizeof(stg_json_dup), "both are two 32-bit words");
static void sort_dups_by_offset(stg_json_dup *out, size_t ndup)
{
    for (size_t i = 0; i < ndup; i++) {
        stg_json_key k = {out[i].prev_offset, out[i].offset};
        memcpy(&out[i], &k, sizeof k);
    }
    stg_json_key *r = (stg_json_key *)(void *)out;
    radix_sort_field(r, ndup, FIELD_OFFSET, 24);
    for (size_t i = 0; i < ndup; i++) {
        stg_json_dup d = {r[i].offset, r[i].hash};
        memcpy(&r[i], &d, sizeof d);
    }
}

/* Appends one duplicate to the pending list (in sort_tmp, sized for the object's `count` keys
 * when the first one is found: there are fewer duplicates than keys). */
static int push_dup(stg_json_parser *p, size_t count, size_t *ndup, uint32_t offset, uint32_t prev)
{
    if (*ndup == 0 && ensure_tmp(p, count) != 0) {
        return -1;
    }
    stg_json_dup *out = (stg_json_dup *)(void *)p->sort_tmp;
    out[*ndup].offset = offset;
    out[*ndup].prev_offset = prev;
    (*ndup)++;
    return 0;
}

static void insertion_sort_by_offset(stg_json_key *r, size_t count)
{
    for (size_t i = 1; i < count; i++) {
        stg_json_key t = r[i];
        size_t j = i;
        while (j > 0 && r[j - 1].offset > t.offset) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = t;
    }
}

/* Pairwise over a run in position order: each key against the latest earlier equal one.
 * `count` is the object's key count (for sizing the pending list). */
static int dups_pairwise(stg_json_parser *p, const stg_json_key *r, size_t run, bool small,
                         size_t count, size_t *ndup)
{
    for (size_t j = 1; j < run; j++) {
        for (size_t i = j; i-- > 0;) {
            if (small ? small_records_equal(p, &r[i], &r[j]) : records_equal(p, &r[i], &r[j])) {
                if (push_dup(p, count, ndup, r[j].offset, r[i].offset) != 0) {
                    return -1;
                }
                break;
            }
        }
    }
    return 0;
}

/* Probe ceilings of the hash-set pass below: one insert, and all of them together (per key). */
#define SET_PROBE_CEILING 256u
#define SET_PROBES_PER_KEY 16u
/* Keys ahead whose set slot is asked for early (large sets do not fit any cache). */
#define SET_PREFETCH_KEYS 16u

/* A record found to repeat an earlier key during the set pass below holds that key's previous
 * occurrence in place of its hash (it is a stg_json_dup in waiting); a bit of `repeat` says so.
 * Puts the hashes back (the sort needs them) when the pass gives up. */
static void restore_repeat_hashes(const stg_json_parser *p, stg_json_key *r, size_t count,
                                  const uint32_t *repeat)
{
    for (size_t i = 0; i < count; i++) {
        if ((repeat[i / 32] >> (i % 32)) & 1u) {
            bool esc = false;
            size_t end = string_end(p->buf, p->len, r[i].offset, &esc);
            r[i].hash = record_hash(p, r[i].offset, end - r[i].offset - 1, esc);
        }
    }
}

/* Moves the repeats, in position order, to the front of r as stg_json_dup entries (each
 * written at or before the record it is read from); returns how many. */
static size_t compact_repeats(stg_json_key *r, size_t count, const uint32_t *repeat)
{
    size_t w = 0;
    for (size_t i = 0; i < count; i++) {
        if ((repeat[i / 32] >> (i % 32)) & 1u) {
            stg_json_dup d = {r[i].offset, r[i].hash};
            memcpy((uint8_t *)(void *)r + w * sizeof d, &d, sizeof d);
            w++;
        }
    }
    return w;
}

/* The duplicate check for objects of more than SMALL_OBJECT_KEYS keys (whose records already
 * hold their hashes): one pass in position order over an open-addressing set of the distinct
 * keys seen so far (linear probing, load <= 3/5 of the object's key count, 32-bit slots holding
 * index + 1 in the low `bits` bits and hash bits above them as a tag, so most probes never
 * read a record), in the object's scratch buffer. A key equal to one in the set is a repeat of
 * its latest occurrence, which the slot then names instead: a million copies of one key cost
 * one probe each, as distinct keys do. On success returns true with *ndup repeats left at the
 * front of r as stg_json_dup entries in position order (each against the latest earlier equal
 * key: what the sort below finds). Any doubt returns false with r as it was and leaves the
 * answer to the sort, which finds and orders every duplicate exactly: a probe sequence past
 * SET_PROBE_CEILING or all probes past SET_PROBES_PER_KEY per key (distinct keys crafted to
 * collide: the sort's cost is O(k log k) whatever the hashes), or no room in the budget for
 * the set (the budget's failure flags are restored: the sort needs no memory). */
static bool dups_by_set(stg_json_parser *p, stg_json_key *r, size_t count, size_t *ndup)
{
    unsigned bits = 1; /* index bits: index + 1 <= count < 2^bits */
    while (bits < 31 && ((size_t)1 << bits) <= count) {
        bits++;
    }
    if (((size_t)1 << bits) <= count) {
        return false; /* more keys than 32-bit slots can index */
    }
    /* load 3/5: a million keys take 6.7 MB (the largest buffer at that size after the key
     * records) and the repeat bits 0.125 MB; slots are picked from the hash's high bits by
     * multiplication, not a mask */
    size_t slots = count + count * 2 / 3 + 1, words = (count + 31) / 32;
    int failed = p->arena->failed, oom = p->arena->out_of_memory;
    void *buf = p->sort_tmp;
    if (stg_arena_grow_buffer(p->arena, &buf, &p->sort_tmp_cap_bytes,
                              (slots + words) * sizeof(uint32_t)) != 0) {
        p->arena->failed = failed;
        p->arena->out_of_memory = oom;
        return false;
    }
    p->sort_tmp = buf;
    uint32_t *set = buf, *repeat = set + slots;
    memset(set, 0, (slots + words) * sizeof(uint32_t));
    const uint32_t mask = (uint32_t)(((size_t)1 << bits) - 1);
    const uint64_t range = (uint64_t)slots;
    size_t budget = count * SET_PROBES_PER_KEY, found = 0;
    for (size_t i = 0; i < count; i++) {
        if (count - i > SET_PREFETCH_KEYS) { /* the slot of a key further on: a hint only */
            __builtin_prefetch(&set[((uint64_t)r[i + SET_PREFETCH_KEYS].hash * range) >> 32]);
        }
        uint32_t h = r[i].hash;
        /* the tag: the hash's low bits above the index bits (its high bits pick the slot) */
        uint32_t tag = h << bits;
        size_t at = (size_t)(((uint64_t)h * range) >> 32);
        unsigned probes = 0;
        for (;;) {
            uint32_t v = set[at];
            if (v == 0) {
                set[at] = tag | (uint32_t)(i + 1);
                break;
            }
            if ((v & ~mask) == tag) {
                size_t j = (v & mask) - 1;
                bool j_repeats = (repeat[j / 32] >> (j % 32)) & 1u; /* its hash is gone */
                if ((j_repeats || r[j].hash == h) &&
                    key_compare(p->buf, p->len, r[j].offset, r[i].offset) == 0) {
                    r[i].hash = r[j].offset; /* the previous occurrence */
                    repeat[i / 32] |= 1u << (i % 32);
                    set[at] = tag | (uint32_t)(i + 1);
                    found++;
                    break;
                }
            }
            if (++probes >= SET_PROBE_CEILING || budget == 0) {
                restore_repeat_hashes(p, r, i, repeat);
                return false;
            }
            budget--;
            at = at + 1 == slots ? 0 : at + 1;
        }
    }
    *ndup = found == 0 ? 0 : compact_repeats(r, count, repeat);
    return true;
}

/* Finds the repeated keys among the `count` keys of the object closing now. On return the
 * pending duplicates (sorted by position) are in p->pending / p->pending_count. Objects of more
 * than SMALL_OBJECT_KEYS keys first go through the hash set (in the scratch buffer, about 6.8
 * bytes per key; the duplicates it finds are left in the key stack); only when it gives up are
 * they sorted, in place in the key stack, and the scratch buffer then holds the duplicates
 * found. */
static int find_duplicates(stg_json_parser *p, size_t base, size_t count)
{
    stg_json_key *r = p->keys + base;
    size_t ndup = 0;
    p->pending_count = 0;
    p->pending_next = 0;
    if (count <= SMALL_OBJECT_KEYS) {
        bool any = false;
        for (size_t j = 1; j < count && !any; j++) {
            for (size_t i = 0; i < j; i++) {
                if (small_records_equal(p, &r[i], &r[j])) {
                    any = true;
                    break;
                }
            }
        }
        if (!any) {
            return 0;
        }
        if (dups_pairwise(p, r, count, true, count, &ndup) != 0) {
            return -1;
        }
        p->pending = (stg_json_dup *)(void *)p->sort_tmp;
        p->pending_count = ndup;
        return 0;
    }
    if (dups_by_set(p, r, count, &ndup)) {
        p->pending = (stg_json_dup *)(void *)r; /* in the key stack, freed after them */
        p->pending_count = ndup;
        return 0;
    }
    sort_records(r, count);
    size_t s = 0;
    while (s < count) {
        uint32_t h = sort_key(r[s].hash);
        size_t e = s + 1;
        while (e < count && sort_key(r[e].hash) == h) {
            e++;
        }
        size_t run = e - s;
        if (run <= SMALL_OBJECT_KEYS) {
            if (run > 1) {
                insertion_sort_by_offset(r + s, run);
                if (dups_pairwise(p, r + s, run, false, count, &ndup) != 0) {
                    return -1;
                }
            }
        } else {
            sort_run(p, r + s, run);
            for (size_t j = s + 1; j < e; j++) {
                if (records_equal(p, &r[j - 1], &r[j]) &&
                    push_dup(p, count, &ndup, r[j].offset, r[j - 1].offset) != 0) {
                    return -1;
                }
            }
        }
        s = e;
    }
    if (ndup == 0) {
        return 0;
    }
    stg_json_dup *out = (stg_json_dup *)(void *)p->sort_tmp;
    bool ordered = true;
    for (size_t i = 1; i < ndup && ordered; i++) {
        ordered = out[i - 1].offset < out[i].offset;
    }
    if (!ordered) {
        sort_dups_by_offset(out, ndup);
    }
    p->pending = out;
    p->pending_count = ndup;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the parser */

void stg_json_init(stg_json_parser *p, const uint8_t *buf, size_t len, uint32_t max_depth,
                   stg_arena *arena)
{
    memset(p, 0, sizeof *p);
    p->buf = buf;
    p->len = buf == NULL ? 0 : len;
    p->arena = arena;
    stg_json_hash_key_init(&p->hash_key, STG_HASH_SEED_DEFAULT);
    if (p->len > STG_JSON_MAX_LEN) {
        set_error(p, STG_JSON_E_MEMORY, 0); /* key records hold 32-bit positions */
        return;
    }
    if (max_depth == 0) {
        max_depth = 1;
    }
    if (max_depth > STG_JSON_DEPTH_CEILING) {
        max_depth = STG_JSON_DEPTH_CEILING;
    }
    p->max_depth = max_depth;
    size_t levels = (size_t)max_depth + 1;
    p->key_base = stg_arena_alloc(arena, levels * sizeof(size_t), sizeof(size_t));
    p->kind = p->key_base == NULL ? NULL : stg_arena_alloc(arena, levels, 1);
    p->state = p->kind == NULL ? NULL : stg_arena_alloc(arena, levels, 1);
    if (p->state == NULL) {
        set_error(p, STG_JSON_E_MEMORY, 0);
        return;
    }
    p->kind[0] = 0;
    p->state[0] = ST_VALUE;
    p->key_base[0] = 0;
}

/* A value ended at level d (a scalar, or the container just closed). */
HOT void value_done(stg_json_parser *p, uint32_t d)
{
    if (d == 0) {
        p->finished = 1;
        p->slow = 1;
    } else {
        p->state[d] = ST_AFTER;
    }
}

static stg_json_type duplicate_event(stg_json_parser *p, stg_json_event *ev, uint32_t offset,
                                     uint32_t prev_offset)
{
    bool esc = false;
    size_t end = string_end(p->buf, p->len, offset, &esc);
    ev_set(ev, STG_JSON_DUPLICATE, offset, end + 1 - offset, p->depth);
    ev->str = p->buf + offset + 1;
    ev->str_len = end - offset - 1;
    ev->has_escapes = esc;
    ev->prev_offset = prev_offset;
    return STG_JSON_DUPLICATE;
}

COLD stg_json_type emit_pending(stg_json_parser *p, stg_json_event *ev)
{
    if (p->elide_emit) {
        p->elide_emit = false;
        return duplicate_event(p, ev, p->elide_offset, p->elide_prev);
    }
    if (p->pending_next < p->pending_count) {
        const stg_json_dup *dup = &p->pending[p->pending_next++];
        return duplicate_event(p, ev, dup->offset, dup->prev_offset);
    }
    uint32_t d = p->depth;
    p->elide_close = false;
    p->pending_count = 0;
    p->pending_next = 0;
    p->pending = NULL;
    p->slow = 0; /* value_done sets it again when this was the top-level object */
    p->keys_count = p->key_base[d];
    p->depth = d - 1;
    value_done(p, d - 1);
    ev_set(ev, STG_JSON_OBJECT_END, p->close_offset, 1, d - 1);
    return STG_JSON_OBJECT_END;
}

static stg_json_type close_object(stg_json_parser *p, stg_json_event *ev, size_t at)
{
    uint32_t d = p->depth;
    size_t base = p->key_base[d];
    size_t count = p->keys_count - base;
    p->pos = at + 1;
    if (count >= 2) {
        if (find_duplicates(p, base, count) != 0) {
            return fail(p, ev, STG_JSON_E_MEMORY, at);
        }
    }
    if (p->elide_depth == d) {
        /* the first elided repeat is handed out when it comes before every other one */
        p->elide_emit = p->pending_count == 0 || p->elide_offset < p->pending[0].offset;
        p->elide_uncounted += p->elide_count - (p->elide_emit ? 1u : 0u);
        p->elide_depth = 0;
        p->elide_count = 0;
    }
    if (p->pending_count > 0 || p->elide_emit) {
        p->close_offset = at;
        p->slow = 1;
        p->elide_close = true;
        return emit_pending(p, ev);
    }
    p->keys_count = base;
    p->depth = d - 1;
    value_done(p, d - 1);
    ev_set(ev, STG_JSON_OBJECT_END, at, 1, d - 1);
    return STG_JSON_OBJECT_END;
}

static const uint64_t pow10_table[9] = {1u,      10u,      100u,      1000u,     10000u,
                                        100000u, 1000000u, 10000000u, 100000000u};

/* Value of 8 decimal digits (byte values 0..9, the first digit in the lowest byte). Shifting a
 * shorter run up first gives it leading zeros. */
static inline uint64_t eight_digits(uint64_t x)
{
    x = (x * 10u) + (x >> 8); /* pairs */
    x = (((x & 0x000000FF000000FFull) * (100u + (1000000ull << 32))) +
         (((x >> 16) & 0x000000FF000000FFull) * (1u + (10000ull << 32)))) >>
        32;
    return x & 0xFFFFFFFFu;
}

/* 2^1024 - 2^970, the midpoint between DBL_MAX and 2^1024: the smallest magnitude that
 * rounds to infinity (a tie goes to the even neighbour, 2^1024). 309 digits. */
static const char f64_overflow_digits[] =
    "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797"
    "75872070963302864166928879109465555478519404026306574886715058206819089020007083836762738548"
    "45817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711"
    "559699508093042880177904174497792";

/* Where the parts of a number are: integer digits, fraction digits, exponent digits. */
typedef struct number_parts {
    size_t int_start, int_end, frac_start, frac_end, exp_start, exp_end;
    bool exp_neg;
} number_parts;

/* Digit k of the significand (integer digits then fraction digits). */
static inline uint8_t sig_digit(const uint8_t *b, const number_parts *np, size_t k)
{
    size_t int_len = np->int_end - np->int_start;
    return k < int_len ? b[np->int_start + k] : b[np->frac_start + (k - int_len)];
}

/* true when the number's magnitude rounds to infinity as an f64. Linear in the number's
 * length; only numbers with an exponent or 309+ integer digits get here. */
static bool beyond_f64(const uint8_t *b, const number_parts *np)
{
    size_t int_len = np->int_end - np->int_start;
    size_t sig_len = int_len + (np->frac_end - np->frac_start);
    size_t lead = 0;
    while (lead < sig_len && sig_digit(b, np, lead) == '0') {
        lead++;
    }
    if (lead == sig_len) {
        return false; /* zero, whatever the exponent */
    }
    int64_t exp = 0;
    for (size_t i = np->exp_start; i < np->exp_end; i++) {
        if (exp < ((int64_t)1 << 40)) { /* saturates: far past any decision */
            exp = exp * 10 + (b[i] - '0');
        }
    }
    if (np->exp_neg) {
        exp = -exp;
    }
    /* The leading digit stands for 10^x. */
    int64_t x = (int64_t)int_len - 1 - (int64_t)lead + exp;
    if (x != 308) {
        return x > 308;
    }
    size_t t_len = sizeof f64_overflow_digits - 1;
    for (size_t k = 0; k < t_len; k++) {
        uint8_t d = lead + k < sig_len ? sig_digit(b, np, lead + k) : (uint8_t)'0';
        if (d != (uint8_t)f64_overflow_digits[k]) {
            return d > (uint8_t)f64_overflow_digits[k];
        }
    }
    return true; /* equal to the midpoint, or above it */
}

HOT stg_json_type parse_number(stg_json_parser *p, stg_json_event *ev, size_t start)
{
    const uint8_t *b = p->buf;
    size_t n = p->len;
    size_t i = start;
    bool plain = true;
    if (b[i] == '-') {
        plain = false;
        i++;
    }
    if (i >= n) {
        return fail(p, ev, STG_JSON_E_SYNTAX, n);
    }
    if (b[i] < '0' || b[i] > '9') {
        return fail(p, ev, STG_JSON_E_SYNTAX, i);
    }
    uint64_t v = 0;
    bool overflow = false;
    number_parts np = {i, i, i, i, i, i, false};
    if (b[i] == '0') {
        i++;
        if (i < n && b[i] >= '0' && b[i] <= '9') {
            return fail(p, ev, STG_JSON_E_SYNTAX, i); /* leading zero */
        }
    } else {
        /* Up to 19 digits cannot overflow; a longer run is redone checked per digit
         * (v * 10 + d must stay <= 2^64 - 1). Digits go 8 at a time while 8 bytes are left. */
        size_t first = i;
        for (;;) {
            if (n - i < 8) {
                unsigned dgt;
                while (i < n && (dgt = (unsigned)b[i] - '0') < 10u) {
                    v = v * 10u + dgt;
                    i++;
                }
                break;
            }
            uint64_t x = stg_le64(b + i) ^ (ONES * 0x30u);
            uint64_t nondigit = ((x + ONES * 0x76u) | x) & HIGHS;
            unsigned k = nondigit == 0 ? 8u : (unsigned)__builtin_ctzll(nondigit) >> 3;
            if (k == 0) {
                break;
            }
            v = v * pow10_table[k] + eight_digits(x << (8 * (8 - k)));
            i += k;
            if (k < 8 || i - first > 19) {
                break;
            }
        }
        if (i - first > 19) {
            unsigned dgt;
            while (i < n && (dgt = (unsigned)b[i] - '0') < 10u) {
                i++;
            }
            v = 0;
            for (size_t k = first; k < i; k++) {
                dgt = (unsigned)b[k] - '0';
                if (v > 1844674407370955161ull || (v == 1844674407370955161ull && dgt > 5)) {
                    overflow = true;
                    break;
                }
                v = v * 10u + dgt;
            }
        }
    }
    np.int_end = i;
    np.frac_start = np.frac_end = i;
    if (i < n && b[i] == '.') {
        plain = false;
        i++;
        if (i >= n) {
            return fail(p, ev, STG_JSON_E_SYNTAX, n);
        }
        if (b[i] < '0' || b[i] > '9') {
            return fail(p, ev, STG_JSON_E_SYNTAX, i);
        }
        np.frac_start = i;
        while (i < n && b[i] >= '0' && b[i] <= '9') {
            i++;
        }
        np.frac_end = i;
    }
    bool has_exp = false;
    if (i < n && (b[i] == 'e' || b[i] == 'E')) {
        plain = false;
        i++;
        if (i < n && (b[i] == '+' || b[i] == '-')) {
            np.exp_neg = b[i] == '-';
            i++;
        }
        if (i >= n) {
            return fail(p, ev, STG_JSON_E_SYNTAX, n);
        }
        if (b[i] < '0' || b[i] > '9') {
            return fail(p, ev, STG_JSON_E_SYNTAX, i);
        }
        np.exp_start = i;
        while (i < n && b[i] >= '0' && b[i] <= '9') {
            i++;
        }
        np.exp_end = i;
        has_exp = true;
    }
    if (p->reject_f64_overflow && (has_exp || np.int_end - np.int_start > 308) &&
        beyond_f64(b, &np)) {
        return fail(p, ev, STG_JSON_E_RANGE, start);
    }
    uint32_t d = p->depth;
    ev_set(ev, STG_JSON_NUMBER, start, i - start, d);
    if (plain) {
        ev->is_uint = true;
        ev->uint_overflow = overflow;
        ev->uint_value = overflow ? 0 : v;
    }
    p->pos = i;
    value_done(p, d);
    return STG_JSON_NUMBER;
}

static stg_json_type parse_literal(stg_json_parser *p, stg_json_event *ev, size_t start)
{
    static const char *const words[3] = {"true", "false", "null"};
    static const size_t lens[3] = {4, 5, 4};
    static const stg_json_type types[3] = {STG_JSON_TRUE, STG_JSON_FALSE, STG_JSON_NULL};
    const uint8_t *b = p->buf;
    size_t n = p->len;
    unsigned w = b[start] == 't' ? 0u : (b[start] == 'f' ? 1u : 2u);
    for (size_t k = 1; k < lens[w]; k++) {
        if (n - start <= k) {
            return fail(p, ev, STG_JSON_E_SYNTAX, n);
        }
        if (b[start + k] != (uint8_t)words[w][k]) {
            return fail(p, ev, STG_JSON_E_SYNTAX, start + k);
        }
    }
    uint32_t d = p->depth;
    ev_set(ev, types[w], start, lens[w], d);
    p->pos = start + lens[w];
    value_done(p, d);
    return types[w];
}

/* A byte that starts no JSON token: invalid UTF-8 is reported as such, anything else (even a
 * well-formed multi-byte character) is a syntax error. */
COLD stg_json_type unexpected(stg_json_parser *p, stg_json_event *ev, size_t at)
{
    if (at >= p->len) {
        return fail(p, ev, STG_JSON_E_SYNTAX, p->len);
    }
    if (p->buf[at] >= 0x80u && stg_utf8_seq(p->buf + at, p->len - at, false) == 0) {
        return fail(p, ev, STG_JSON_E_UTF8, at);
    }
    return fail(p, ev, STG_JSON_E_SYNTAX, at);
}

HOT stg_json_type parse_value(stg_json_parser *p, stg_json_event *ev, size_t i)
{
    const uint8_t *b = p->buf;
    uint32_t d = p->depth;
    uint8_t c = b[i];
    switch (c) {
    case '{':
    case '[':
        if (d >= p->max_depth) {
            return fail(p, ev, STG_JSON_E_DEPTH, i);
        }
        p->depth = d + 1;
        p->kind[d + 1] = c;
        p->state[d + 1] = c == '{' ? ST_OBJ_FIRST : ST_ARR_FIRST;
        p->key_base[d + 1] = p->keys_count;
        p->pos = i + 1;
        ev_set(ev, c == '{' ? STG_JSON_OBJECT_BEGIN : STG_JSON_ARRAY_BEGIN, i, 1, d);
        return ev->type;
    case '"': {
        size_t end = 0;
        bool esc = false;
        if (scan_string(p, i, &end, &esc) != 0) {
            return fail(p, ev, p->error, p->error_offset);
        }
        ev_set(ev, STG_JSON_STRING, i, end + 1 - i, d);
        ev->str = b + i + 1;
        ev->str_len = end - i - 1;
        ev->has_escapes = esc;
        p->pos = end + 1;
        value_done(p, d);
        return STG_JSON_STRING;
    }
    case 't':
    case 'f':
    case 'n': return parse_literal(p, ev, i);
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': return parse_number(p, ev, i);
    default: return unexpected(p, ev, i);
    }
}

/* Inside stg_json_skip: true when the key at b[i] (body of body bytes) has the very bytes of
 * the last key recorded for its object, and so repeats it (a string's end depends only on its
 * bytes), and is counted as an elided repeat instead of recorded (parser fields, json.h).
 * Other repeats, and those at a second object level while one is being elided, are recorded
 * and found at the close as ever. */
static bool elide_repeat(stg_json_parser *p, size_t i, size_t body)
{
    uint32_t d = p->depth;
    if (p->keys_count <= p->key_base[d] || (p->elide_depth != 0 && p->elide_depth != d)) {
        return false;
    }
    size_t last = p->keys[p->keys_count - 1].offset;
    /* the length, then the last byte (where counters differ), then all of it */
    if (p->buf[last + body + 1] != '"' || p->buf[last + body] != p->buf[i + body] ||
        memcmp(p->buf + last, p->buf + i, body + 2) != 0) {
        return false;
    }
    if (p->elide_count++ == 0) {
        p->elide_depth = d;
        p->elide_offset = (uint32_t)i;
        p->elide_prev = (uint32_t)last;
    }
    return true;
}

HOT stg_json_type parse_key(stg_json_parser *p, stg_json_event *ev, size_t i)
{
    const uint8_t *b = p->buf;
    size_t end = 0;
    bool esc = false;
    if (scan_string(p, i, &end, &esc) != 0) {
        return fail(p, ev, p->error, p->error_offset);
    }
    size_t body = end - i - 1;
    if (p->skipping && elide_repeat(p, i, body)) {
        p->state[p->depth] = ST_OBJ_COLON;
        p->pos = end + 1;
        ev_set(ev, STG_JSON_KEY, i, end + 1 - i, p->depth);
        ev->str = b + i + 1;
        ev->str_len = body;
        ev->has_escapes = esc;
        return STG_JSON_KEY;
    }
    if (p->keys_count >= p->keys_cap_bytes / sizeof(stg_json_key)) {
        void *kb = p->keys;
        if (p->keys_count >= ((size_t)-1) / sizeof(stg_json_key) - 1 ||
            stg_arena_grow_buffer(p->arena, &kb, &p->keys_cap_bytes,
                                  (p->keys_count + 1) * sizeof(stg_json_key)) != 0) {
            return fail(p, ev, STG_JSON_E_MEMORY, i);
        }
        p->keys = kb; /* large ones are huge-page mappings (parser/mem.c) */
    }
    uint32_t d = p->depth;
    size_t base = p->key_base[d];
    size_t have = p->keys_count - base;
    stg_json_key *k = &p->keys[p->keys_count++];
    k->offset = (uint32_t)i; /* i < len <= STG_JSON_MAX_LEN */
    if (have < SMALL_OBJECT_KEYS) {
        k->hash = body < ((size_t)1 << 31) ? ((uint32_t)body << 1) | (esc ? 1u : 0u) : SMALL_LONG;
    } else {
        if (have == SMALL_OBJECT_KEYS) {
            /* the object outgrew the pairwise check: its first keys get their hashes now */
            for (size_t r = base; r < base + SMALL_OBJECT_KEYS; r++) {
                stg_json_key *o = &p->keys[r];
                bool oe = (o->hash & 1u) != 0;
                size_t ol = (size_t)(o->hash >> 1u);
                if (o->hash == SMALL_LONG) {
                    ol = string_end(p->buf, p->len, o->offset, &oe) - o->offset - 1;
                }
                o->hash = record_hash(p, o->offset, ol, oe);
            }
        }
        k->hash = record_hash(p, i, body, esc);
    }
    p->state[d] = ST_OBJ_COLON;
    p->pos = end + 1;
    ev_set(ev, STG_JSON_KEY, i, end + 1 - i, d);
    ev->str = b + i + 1;
    ev->str_len = body;
    ev->has_escapes = esc;
    return STG_JSON_KEY;
}

/* END, ERROR and pending duplicates. */
COLD stg_json_type next_slow(stg_json_parser *p, stg_json_event *ev)
{
    if (p->error != STG_JSON_E_NONE) {
        ev_set(ev, STG_JSON_ERROR, p->error_offset, 0, p->depth);
        return STG_JSON_ERROR;
    }
    if (p->pending_count > 0 || p->elide_close) {
        return emit_pending(p, ev);
    }
    ev_set(ev, STG_JSON_END, p->pos, 0, 0);
    return STG_JSON_END;
}

HOT size_t skip_ws(const uint8_t *b, size_t n, size_t i)
{
    while (i < n && b[i] <= ' ' && json_ws[b[i]]) {
        i++;
    }
    return i;
}

HOT stg_json_type close_array(stg_json_parser *p, stg_json_event *ev, size_t at)
{
    uint32_t d = p->depth;
    p->pos = at + 1;
    p->depth = d - 1;
    value_done(p, d - 1);
    ev_set(ev, STG_JSON_ARRAY_END, at, 1, d - 1);
    return STG_JSON_ARRAY_END;
}

void stg_json_set_seed(stg_json_parser *p, uint64_t seed)
{
    stg_json_hash_key_init(&p->hash_key, seed != 0 ? seed : STG_HASH_SEED_DEFAULT);
}

stg_json_type stg_json_next(stg_json_parser *p, stg_json_event *ev)
{
    if (p->slow) {
        return next_slow(p, ev);
    }
    const uint8_t *b = p->buf;
    size_t n = p->len;
    size_t i = skip_ws(b, n, p->pos);
    if (i >= n) {
        return fail(p, ev, STG_JSON_E_SYNTAX, n);
    }
    uint32_t d = p->depth;
    uint8_t c = b[i];
    bool want_key;
    /* Separators are consumed here, so each call ends with exactly one event. Tested in order
     * of frequency (a switch compiles to an indirect jump that predicts worse). */
    uint8_t st = p->state[d];
    if (st == ST_OBJ_COLON) {
        if (c != ':') {
            return unexpected(p, ev, i);
        }
        i = skip_ws(b, n, i + 1);
        if (i >= n) {
            return fail(p, ev, STG_JSON_E_SYNTAX, n);
        }
        want_key = false;
    } else if (st == ST_AFTER) {
        if (c == ',') {
            i = skip_ws(b, n, i + 1);
            if (i >= n) {
                return fail(p, ev, STG_JSON_E_SYNTAX, n);
            }
            want_key = p->kind[d] == '{';
        } else if (c == '}' && p->kind[d] == '{') {
            return close_object(p, ev, i);
        } else if (c == ']' && p->kind[d] == '[') {
            return close_array(p, ev, i);
        } else {
            return unexpected(p, ev, i);
        }
    } else if (st == ST_OBJ_FIRST) {
        if (c == '}') {
            return close_object(p, ev, i);
        }
        want_key = true;
    } else if (st == ST_ARR_FIRST) {
        if (c == ']') {
            return close_array(p, ev, i);
        }
        want_key = false;
    } else {
        want_key = false; /* ST_VALUE: the top-level value */
    }
    if (want_key) {
        if (b[i] != '"') {
            return unexpected(p, ev, i);
        }
        return parse_key(p, ev, i);
    }
    return parse_value(p, ev, i);
}

/* A plain unsigned integer of at most 19 digits at b[*at] (no sign, fraction, exponent or
 * leading zero): true with *value set and *at past it. False for anything else, including
 * longer digit runs: those may overflow, and the event path decides. */
HOT bool short_uint(const uint8_t *b, size_t n, size_t *at, uint64_t *value)
{
    size_t i = *at;
    if (i >= n || b[i] < '0' || b[i] > '9') {
        return false;
    }
    uint64_t v = 0;
    if (b[i] == '0') {
        i++;
    } else {
        size_t first = i;
        for (;;) {
            if (n - i < 8) {
                unsigned dgt;
                while (i < n && (dgt = (unsigned)b[i] - '0') < 10u && i - first < 20) {
                    v = v * 10u + dgt;
                    i++;
                }
                break;
            }
            uint64_t x = stg_le64(b + i) ^ (ONES * 0x30u);
            uint64_t nondigit = ((x + ONES * 0x76u) | x) & HIGHS;
            unsigned k = nondigit == 0 ? 8u : (unsigned)__builtin_ctzll(nondigit) >> 3;
            if (k == 0) {
                break;
            }
            if (i - first + k > 19) {
                return false;
            }
            v = v * pow10_table[k] + eight_digits(x << (8 * (8 - k)));
            i += k;
            if (k < 8) {
                break;
            }
        }
        if (i - first > 19) {
            return false;
        }
    }
    /* a digit after a leading zero, a fraction or an exponent: not plain */
    if (i < n && ((b[i] >= '0' && b[i] <= '9') || b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
        return false;
    }
    *at = i;
    *value = v;
    return true;
}

/* Plain unsigned integers separated by ',' from b[*at] (just past an array's '[' and, with ws,
 * its whitespace) up to the array's ']': at most max stored in out; *at is left on the ']'.
 * Without ws, any whitespace is a failure (the compact form has none). */
HOT bool uints_to_bracket(const uint8_t *b, size_t n, size_t *at, uint64_t *out, size_t max,
                          size_t *count, bool ws)
{
    size_t i = *at, k = 0;
    if (i >= n) {
        return false;
    }
    if (b[i] != ']') {
        for (;;) {
            uint64_t v;
            if (k >= max || !short_uint(b, n, &i, &v)) {
                return false;
            }
            out[k++] = v;
            if (ws) {
                i = skip_ws(b, n, i);
            }
            if (i >= n) {
                return false;
            }
            if (b[i] == ']') {
                break;
            }
            if (b[i] != ',') {
                return false;
            }
            i = ws ? skip_ws(b, n, i + 1) : i + 1;
        }
    }
    *at = i;
    *count = k;
    return true;
}

bool stg_json_uint_array(stg_json_parser *p, uint64_t *out, size_t max, size_t *count)
{
    if (p->slow) {
        return false;
    }
    uint32_t d = p->depth;
    if (d == 0 || p->kind[d] != '[' || p->state[d] != ST_ARR_FIRST) {
        return false;
    }
    const uint8_t *b = p->buf;
    size_t n = p->len;
    size_t i = skip_ws(b, n, p->pos);
    size_t k = 0;
    if (!uints_to_bracket(b, n, &i, out, max, &k, true)) {
        return false;
    }
    /* what close_array does for the ']' at i */
    p->pos = i + 1;
    p->depth = d - 1;
    value_done(p, d - 1);
    *count = k;
    return true;
}

static bool glue_put(uint8_t *g, size_t *len, const char *s)
{
    size_t l = strlen(s);
    if (*len + l > STG_JSON_COMPACT_GLUE) {
        return false;
    }
    memcpy(g + *len, s, l);
    *len += l;
    return true;
}

static bool compact_key_ok(const char *k)
{
    size_t l = strlen(k);
    if (l == 0 || l > 31) {
        return false;
    }
    for (size_t i = 0; i < l; i++) {
        uint8_t c = (uint8_t)k[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            return false;
        }
    }
    return true;
}

bool stg_json_compact_form_init(stg_json_compact_form *f, const char *k0, const char *k1,
                                const char *k2)
{
    memset(f, 0, sizeof *f);
    if (!compact_key_ok(k0) || !compact_key_ok(k1) || !compact_key_ok(k2) || strcmp(k0, k1) == 0 ||
        strcmp(k0, k2) == 0 || strcmp(k1, k2) == 0) {
        return false;
    }
    /* sizes fit: 31-byte keys and at most 5 bytes of punctuation each */
    return glue_put(f->glue[0], &f->glue_len[0], "\"") &&
           glue_put(f->glue[0], &f->glue_len[0], k0) &&
           glue_put(f->glue[0], &f->glue_len[0], "\":\"") &&
           glue_put(f->glue[1], &f->glue_len[1], "\",\"") &&
           glue_put(f->glue[1], &f->glue_len[1], k1) &&
           glue_put(f->glue[1], &f->glue_len[1], "\":[") &&
           glue_put(f->glue[2], &f->glue_len[2], "],\"") &&
           glue_put(f->glue[2], &f->glue_len[2], k2) &&
           glue_put(f->glue[2], &f->glue_len[2], "\":[");
}

/* b[i..i+len) equals g[0..len) (len <= STG_JSON_COMPACT_GLUE; the caller checked n - i). */
HOT bool glue_at(const uint8_t *b, size_t i, const uint8_t *g, size_t len)
{
    size_t k = 0;
    for (; len - k >= 8; k += 8) {
        if (stg_le64(b + i + k) != stg_le64(g + k)) {
            return false;
        }
    }
    for (; k < len; k++) {
        if (b[i + k] != g[k]) {
            return false;
        }
    }
    return true;
}

bool stg_json_compact_object(stg_json_parser *p, const stg_json_compact_form *f, uint64_t *a,
                             size_t max_a, uint64_t *b, size_t max_b, stg_json_compact *out)
{
    if (p->slow) {
        return false;
    }
    uint32_t d = p->depth;
    if (d == 0 || d >= p->max_depth || p->kind[d] != '{' || p->state[d] != ST_OBJ_FIRST) {
        return false;
    }
    const uint8_t *buf = p->buf;
    size_t n = p->len;
    size_t i = p->pos;
    if (n - i > PREFETCH_AHEAD) {
        __builtin_prefetch(buf + i + PREFETCH_AHEAD);
    }
    if (n - i < f->glue_len[0] || !glue_at(buf, i, f->glue[0], f->glue_len[0])) {
        return false;
    }
    i += f->glue_len[0];
    size_t str = i;
    for (;;) { /* printable ASCII up to the closing quote, 8 bytes at a time */
        if (n - i < 8) {
            while (i < n && buf[i] >= 0x20 && buf[i] < 0x80 && buf[i] != '"' && buf[i] != '\\') {
                i++;
            }
            break;
        }
        /* layer-check: 8 bytes are left (the n - i < 8 test above), as in scan_string */
        uint64_t m = string_special(stg_le64(buf + i));
        if (m != 0) {
            i += (size_t)__builtin_ctzll(m) >> 3;
            break;
        }
        i += 8;
    }
    if (i >= n || buf[i] != '"') {
        return false;
    }
    size_t str_len = i - str;
    if (n - i < f->glue_len[1] || !glue_at(buf, i, f->glue[1], f->glue_len[1])) {
        return false;
    }
    size_t arr0 = i + f->glue_len[1] - 1;
    i += f->glue_len[1];
    size_t count0, count1;
    if (!uints_to_bracket(buf, n, &i, a, max_a, &count0, false)) {
        return false;
    }
    if (n - i < f->glue_len[2] || !glue_at(buf, i, f->glue[2], f->glue_len[2])) {
        return false;
    }
    size_t arr1 = i + f->glue_len[2] - 1;
    i += f->glue_len[2];
    if (!uints_to_bracket(buf, n, &i, b, max_b, &count1, false)) {
        return false;
    }
    if (n - i < 2 || buf[i + 1] != '}') {
        return false;
    }
    out->str_offset = str - 1;
    out->str = buf + str;
    out->str_len = str_len;
    out->arr_offset[0] = arr0;
    out->arr_offset[1] = arr1;
    out->count[0] = count0;
    out->count[1] = count1;
    /* what close_object does for a '}' at i + 1 of an object without duplicates */
    p->pos = i + 2;
    p->keys_count = p->key_base[d];
    p->depth = d - 1;
    value_done(p, d - 1);
    return true;
}

/* Inside stg_json_skip, right after a member `"K":v` with a scalar v (from b[key] to p->pos):
 * the copies of that member's bytes that follow it, each after one ',' and itself followed by
 * ',' or '}', are taken at once. Each would be read exactly as the member was (the same bytes
 * in the same state; a scalar's token ends at the ',' or '}' after it), and its key, the
 * object's last key again, is a repeat elide_repeat would count: so it is counted here, and
 * the parser moves past the copies, as if it had read them. */
static void skip_member_copies(stg_json_parser *p, size_t key, size_t key_len)
{
    uint32_t d = p->depth;
    if (p->slow || d == 0 || p->kind[d] != '{' || p->state[d] != ST_AFTER ||
        (p->elide_depth != 0 && p->elide_depth != d)) {
        return;
    }
    const uint8_t *b = p->buf;
    size_t unit = p->pos - key, i = p->pos, n = p->len;
    size_t copies = 0;
    /* the byte before the key's closing quote first: where keys that differ mostly do */
    while (n - i > unit + 1 && b[i] == ',' && b[i + key_len - 1] == b[key + key_len - 2] &&
           (b[i + 1 + unit] == ',' || b[i + 1 + unit] == '}') &&
           memcmp(b + i + 1, b + key, unit) == 0) {
        if (p->elide_count == 0 && copies == 0) {
            p->elide_depth = d;
            p->elide_offset = (uint32_t)(i + 1);
            p->elide_prev = (uint32_t)key;
        }
        copies++;
        i += 1 + unit;
    }
    p->elide_count += copies;
    p->pos = i;
}

/* stg_json_skip's walk: events up to the end at `depth`, duplicates counted. */
static stg_json_type skip_events(stg_json_parser *p, uint32_t depth, size_t *dup_count,
                                 stg_json_event *first_dup)
{
    size_t seen = 0;
    /* The last KEY event's offset, raw length and level (0: none yet). A scalar at that level
     * right after it is its member's value (skip_member_copies checks the level is an object:
     * an array's scalar may share the level of a closed object's key). */
    size_t key = 0, key_len = 0;
    uint32_t key_at = 0;
    stg_json_event ev;
    for (;;) {
        size_t waiting = p->pending_count - p->pending_next;
        if (seen > 0 && waiting > 0) {
            /* only counted: taken at once, without an event (and a scan of its key) each */
            seen += waiting;
            if (dup_count != NULL) {
                *dup_count += waiting;
            }
            p->pending_next = p->pending_count;
        }
        stg_json_type t = stg_json_next(p, &ev);
        switch (t) {
        case STG_JSON_ERROR:
        case STG_JSON_END: /* cannot happen before the matching end; treated as an error */
            return STG_JSON_ERROR;
        case STG_JSON_DUPLICATE:
            if (seen == 0 && first_dup != NULL) {
                *first_dup = ev;
            }
            seen++;
            if (dup_count != NULL) {
                (*dup_count)++;
            }
            break;
        case STG_JSON_OBJECT_END:
        case STG_JSON_ARRAY_END:
            if (ev.depth == depth) {
                return t;
            }
            break;
        case STG_JSON_KEY:
            key = ev.offset;
            key_len = ev.len;
            key_at = ev.depth;
            break;
        case STG_JSON_STRING:
        case STG_JSON_NUMBER:
        case STG_JSON_TRUE:
        case STG_JSON_FALSE:
        case STG_JSON_NULL:
            /* a copy's key would end at p->pos + key_len: a cheap first test */
            if (ev.depth == key_at && p->len - p->pos > key_len && p->buf[p->pos] == ',' &&
                p->buf[p->pos + key_len - 1] == p->buf[key + key_len - 2]) {
                skip_member_copies(p, key, key_len);
            }
            break;
        case STG_JSON_NONE:
        case STG_JSON_OBJECT_BEGIN:
        case STG_JSON_ARRAY_BEGIN: break;
        }
    }
}

stg_json_type stg_json_skip(stg_json_parser *p, const stg_json_event *begin, size_t *dup_count,
                            stg_json_event *first_dup)
{
    if (begin->type != STG_JSON_OBJECT_BEGIN && begin->type != STG_JSON_ARRAY_BEGIN) {
        return begin->type;
    }
    p->skipping = true;
    stg_json_type last = skip_events(p, begin->depth, dup_count, first_dup);
    p->skipping = false;
    if (dup_count != NULL) {
        *dup_count += p->elide_uncounted;
    }
    p->elide_uncounted = 0;
    return last;
}

bool stg_json_rest_is_ws(const uint8_t *buf, size_t len, size_t from)
{
    for (size_t i = from; i < len; i++) {
        if (!json_ws[buf[i]]) {
            return false;
        }
    }
    return true;
}

void stg_json_release(stg_json_parser *p)
{
    if (p->arena == NULL) {
        return;
    }
    void *kb = p->keys;
    if (kb != NULL) {
        stg_arena_free_buffer(p->arena, &kb, &p->keys_cap_bytes);
    }
    void *tb = p->sort_tmp;
    if (tb != NULL) {
        stg_arena_free_buffer(p->arena, &tb, &p->sort_tmp_cap_bytes);
    }
    p->keys = NULL;
    p->sort_tmp = NULL;
    p->pending = NULL;
    p->pending_count = 0;
    p->keys_count = 0;
    /* The parser cannot go on without its key stack: later calls report an error. */
    if (!p->finished) {
        set_error(p, STG_JSON_E_MEMORY, p->pos);
    }
}

/* Saturating helpers for the bound (documented in docs/json.md). */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return stg_add_u64(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return stg_mul_u64(a, b, &r) ? UINT64_MAX : r;
}

uint64_t stg_json_memory_bound(uint64_t len, uint32_t max_depth)
{
    uint64_t depth = max_depth == 0 ? 1 : max_depth;
    if (depth > STG_JSON_DEPTH_CEILING) {
        depth = STG_JSON_DEPTH_CEILING;
    }
    /* Fixed arrays: key_base (size_t), kind and state (1 byte) per level, plus alignment, in the
     * arena's first block (64 KiB minimum) behind its header (under 64 bytes). */
    uint64_t fixed = (depth + 1) * (sizeof(size_t) + 2) + 2 * sizeof(size_t);
    uint64_t block = fixed > 65536 ? fixed : 65536;
    uint64_t total = sat_add(64, block);
    /* Key records: only the keys of open objects are on the stack. Each takes the byte before it
     * ('{' or ','), its two quotes, a colon and the first byte of its value: 5 bytes, except the
     * last one (3: its colon and value may be missing) and one byte shared per open object (its
     * '{' is both its parent key's value and its first key's separator). So at most
     * (len + depth + 2) / 5 keys are open at once. */
    uint64_t keys = sat_add(len, depth + 2) / 5 + 1;
    uint64_t per_buffer = sat_mul(sat_mul(keys, sizeof(stg_json_key)), 2);
    if (per_buffer < 4096) {
        per_buffer = 4096;
    }
    return sat_add(total, sat_mul(per_buffer, 2));
}
