/* Target: stg_json_next (with stg_json_skip, stg_json_decode, stg_json_memory_bound).
 * Seeds: corpus/json/. Dict: fuzz/json.dict.
 *
 * The whole input is the JSON text. Its last byte also picks max_depth, and its last two bytes an
 * arena cap for a second, capped parse. Properties checked (abort() on violation):
 *  - events nest: begin/end balance, ev.depth is the number of open containers, END only when
 *    none is open, DUPLICATE only inside an object, just before its OBJECT_END;
 *  - token offsets lie inside the input, value tokens come in order, lengths stay in bounds;
 *  - is_uint implies the raw token is digits only, and uint_value is its value unless it overflows;
 *  - strings decode to valid UTF-8 no longer than the raw text, equal to it without escapes;
 *  - END/ERROR are sticky; errors point inside the input or at its end;
 *  - parsing twice gives the same events; a capped arena gives a prefix of them, then a memory
 *    error; the uncapped arena's peak stays within stg_json_memory_bound;
 *  - stg_json_skip ends at the matching end with the same outcome as plain parsing. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/arena.h"
#include "parser/json.h"

#define CHECK(c)     \
    do {             \
        if (!(c)) {  \
            abort(); \
        }            \
    } while (0)

/* Inputs above this are only parsed (corpus replay may hand us large files of other formats). */
#define FULL_CHECK_MAX ((size_t)1 << 20)

static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t c = s[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i < len) {
            return false;
        }
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += len;
    }
    return true;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ull;
}

static uint64_t event_digest(const stg_json_event *ev)
{
    uint64_t h = mix(0, (uint64_t)ev->type);
    h = mix(h, ev->offset);
    h = mix(h, ev->len);
    h = mix(h, ev->depth);
    h = mix(h, ev->str_len);
    h = mix(h, (uint64_t)ev->has_escapes | (uint64_t)ev->is_uint << 1 |
                   (uint64_t)ev->uint_overflow << 2);
    h = mix(h, ev->uint_value);
    return mix(h, ev->prev_offset);
}

typedef struct run_result {
    uint64_t *digests; /* running digest after each event (may be NULL: not kept) */
    size_t count;
    stg_json_type last;
    stg_json_error error;
    size_t error_offset;
    size_t peak;
} run_result;

/* One full parse with every per-event property checked. */
static void parse_checked(const uint8_t *data, size_t size, uint32_t max_depth, size_t cap,
                          uint64_t *digests, size_t max_events, run_result *out)
{
    stg_arena arena;
    stg_arena_init(&arena, cap);
    stg_json_parser p;
    stg_json_init(&p, data, size, max_depth, &arena);
    uint32_t open = 0;
    uint8_t kinds[STG_JSON_DEPTH_CEILING + 2];
    size_t last_value_offset = 0;
    bool in_dups = false;
    uint64_t digest = 0;
    size_t count = 0;
    stg_json_event ev;
    uint8_t *dec = size > 0 ? malloc(size) : NULL;
    CHECK(size == 0 || dec != NULL);
    uint32_t clamped = max_depth == 0 ? 1 : max_depth;
    if (clamped > STG_JSON_DEPTH_CEILING) {
        clamped = STG_JSON_DEPTH_CEILING;
    }
    for (;;) {
        stg_json_type t = stg_json_next(&p, &ev);
        CHECK(t == ev.type);
        CHECK(count < 2 * size + 4);
        digest = mix(digest, event_digest(&ev));
        if (digests != NULL && count < max_events) {
            digests[count] = digest;
        }
        count++;
        if (in_dups) {
            CHECK(t == STG_JSON_DUPLICATE || t == STG_JSON_OBJECT_END);
        }
        switch (t) {
        case STG_JSON_OBJECT_BEGIN:
        case STG_JSON_ARRAY_BEGIN:
            CHECK(ev.offset < size && ev.len == 1 && ev.depth == open);
            CHECK(data[ev.offset] == (t == STG_JSON_OBJECT_BEGIN ? '{' : '['));
            CHECK(ev.offset >= last_value_offset);
            last_value_offset = ev.offset;
            CHECK(open < clamped);
            open++;
            kinds[open] = t == STG_JSON_OBJECT_BEGIN ? '{' : '[';
            break;
        case STG_JSON_OBJECT_END:
        case STG_JSON_ARRAY_END:
            CHECK(open > 0);
            CHECK(kinds[open] == (t == STG_JSON_OBJECT_END ? '{' : '['));
            open--;
            CHECK(ev.depth == open && ev.offset < size && ev.len == 1);
            CHECK(data[ev.offset] == (t == STG_JSON_OBJECT_END ? '}' : ']'));
            CHECK(ev.offset >= last_value_offset);
            last_value_offset = ev.offset;
            in_dups = false;
            break;
        case STG_JSON_KEY:
        case STG_JSON_STRING:
            CHECK(ev.depth == open && ev.offset < size && ev.len >= 2 &&
                  ev.len <= size - ev.offset);
            CHECK(t != STG_JSON_KEY || (open > 0 && kinds[open] == '{'));
            CHECK(ev.offset >= last_value_offset);
            last_value_offset = ev.offset;
            CHECK(data[ev.offset] == '"' && data[ev.offset + ev.len - 1] == '"');
            CHECK(ev.str == data + ev.offset + 1 && ev.str_len == ev.len - 2);
            {
                size_t n = stg_json_decode(ev.str, ev.str_len, dec);
                CHECK(n <= ev.str_len);
                CHECK(utf8_valid(dec, n));
                CHECK(ev.has_escapes || (n == ev.str_len && memcmp(dec, ev.str, n) == 0));
                CHECK(ev.has_escapes == (memchr(ev.str, '\\', ev.str_len) != NULL));
            }
            break;
        case STG_JSON_NUMBER:
            CHECK(ev.depth == open && ev.offset < size && ev.len >= 1 &&
                  ev.len <= size - ev.offset);
            CHECK(ev.offset >= last_value_offset);
            last_value_offset = ev.offset;
            if (ev.is_uint) {
                uint64_t v = 0;
                bool over = false;
                for (size_t k = 0; k < ev.len; k++) {
                    uint8_t c = data[ev.offset + k];
                    CHECK(c >= '0' && c <= '9');
                    if (v > (UINT64_MAX - (uint64_t)(c - '0')) / 10) {
                        over = true;
                    } else if (!over) {
                        v = v * 10 + (uint64_t)(c - '0');
                    }
                }
                CHECK(ev.len == 1 || data[ev.offset] != '0');
                CHECK(over == ev.uint_overflow);
                CHECK(over || v == ev.uint_value);
            } else {
                CHECK(!ev.uint_overflow);
                CHECK(memchr(data + ev.offset, '-', ev.len) ||
                      memchr(data + ev.offset, '.', ev.len) ||
                      memchr(data + ev.offset, 'e', ev.len) ||
                      memchr(data + ev.offset, 'E', ev.len));
            }
            break;
        case STG_JSON_TRUE:
        case STG_JSON_FALSE:
        case STG_JSON_NULL: {
            const char *w = t == STG_JSON_TRUE ? "true" : (t == STG_JSON_FALSE ? "false" : "null");
            CHECK(ev.depth == open && ev.len == strlen(w) && ev.len <= size - ev.offset);
            CHECK(memcmp(data + ev.offset, w, ev.len) == 0);
            CHECK(ev.offset >= last_value_offset);
            last_value_offset = ev.offset;
            break;
        }
        case STG_JSON_DUPLICATE:
            CHECK(open > 0 && kinds[open] == '{' && ev.depth == open);
            CHECK(ev.prev_offset < ev.offset && ev.offset < size);
            CHECK(data[ev.offset] == '"' && data[ev.prev_offset] == '"');
            CHECK(ev.str == data + ev.offset + 1 && ev.len == ev.str_len + 2);
            in_dups = true;
            break;
        case STG_JSON_END:
            CHECK(open == 0 && ev.offset <= size && ev.offset >= last_value_offset);
            break;
        case STG_JSON_ERROR:
            CHECK(p.error != STG_JSON_E_NONE && p.error_offset <= size);
            CHECK(ev.offset == p.error_offset);
            CHECK(
                p.error != STG_JSON_E_DEPTH ||
                (open == clamped && (data[p.error_offset] == '{' || data[p.error_offset] == '[')));
            break;
        case STG_JSON_NONE: CHECK(false);
        }
        if (t == STG_JSON_END || t == STG_JSON_ERROR) {
            stg_json_event again;
            CHECK(stg_json_next(&p, &again) == t && again.offset == ev.offset);
            out->last = t;
            break;
        }
    }
    out->count = count;
    out->error = p.error;
    out->error_offset = p.error_offset;
    stg_json_release(&p);
    out->peak = arena.peak;
    stg_arena_release(&arena);
    free(dec);
}

/* The DUPLICATE events of the top-level value, walked one by one: how many, and the first. */
static size_t walk_duplicates(const uint8_t *data, size_t size, uint32_t max_depth,
                              stg_json_event *first)
{
    stg_arena arena;
    stg_arena_init(&arena, (size_t)1 << 30);
    stg_json_parser p;
    stg_json_init(&p, data, size, max_depth, &arena);
    stg_json_event ev;
    size_t n = 0;
    for (stg_json_type t = stg_json_next(&p, &ev); t != STG_JSON_END && t != STG_JSON_ERROR;
         t = stg_json_next(&p, &ev)) {
        if (t == STG_JSON_DUPLICATE && n++ == 0) {
            *first = ev;
        }
    }
    stg_json_release(&p);
    stg_arena_release(&arena);
    return n;
}

/* Skips the top-level value if it is a container: same outcome as walking it, the same count
 * of repeats and the same first one (the skip counts some repeats without recording them). */
static void check_skip(const uint8_t *data, size_t size, uint32_t max_depth, const run_result *full)
{
    stg_arena arena;
    stg_arena_init(&arena, (size_t)1 << 30);
    stg_json_parser p;
    stg_json_init(&p, data, size, max_depth, &arena);
    stg_json_event ev;
    stg_json_type t = stg_json_next(&p, &ev);
    if (t == STG_JSON_OBJECT_BEGIN || t == STG_JSON_ARRAY_BEGIN) {
        size_t dups = 0;
        stg_json_event first, want_first;
        memset(&first, 0, sizeof first);
        memset(&want_first, 0, sizeof want_first);
        stg_json_type end = stg_json_skip(&p, &ev, &dups, &first);
        if (end == STG_JSON_ERROR) {
            CHECK(full->last == STG_JSON_ERROR && p.error == full->error &&
                  p.error_offset == full->error_offset);
        } else {
            CHECK(end == (t == STG_JSON_OBJECT_BEGIN ? STG_JSON_OBJECT_END : STG_JSON_ARRAY_END));
            CHECK(stg_json_next(&p, &ev) == STG_JSON_END);
            CHECK(full->last == STG_JSON_END);
            size_t want = walk_duplicates(data, size, max_depth, &want_first);
            CHECK(dups == want);
            CHECK(want == 0 || (first.offset == want_first.offset &&
                                first.prev_offset == want_first.prev_offset));
        }
    }
    stg_json_release(&p);
    stg_arena_release(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t last = size > 0 ? data[size - 1] : 0;
    uint32_t max_depth = (last & 7u) == 0 ? 128u : 1u + (last >> 3);
    if (size > FULL_CHECK_MAX) {
        run_result r = {0};
        parse_checked(data, size, 128, (size_t)1 << 30, NULL, 0, &r);
        return 0;
    }
    size_t max_events = 2 * size + 4;
    uint64_t *digests = malloc(max_events * sizeof *digests);
    uint64_t *again = malloc(max_events * sizeof *again);
    CHECK(digests != NULL && again != NULL);

    run_result a = {0}, b = {0};
    parse_checked(data, size, max_depth, (size_t)1 << 30, digests, max_events, &a);
    CHECK(a.error != STG_JSON_E_MEMORY);
    CHECK((uint64_t)a.peak <= stg_json_memory_bound(size, max_depth));

    parse_checked(data, size, max_depth, (size_t)1 << 30, again, max_events, &b);
    CHECK(a.count == b.count && a.last == b.last && a.error == b.error &&
          a.error_offset == b.error_offset);
    CHECK(memcmp(digests, again, a.count * sizeof *digests) == 0);

    /* A cap from the last two bytes: anything from nothing to a few blocks. */
    size_t cap = size >= 2 ? ((size_t)data[size - 2] << 8 | last) * 16u : 0;
    run_result c = {0};
    parse_checked(data, size, max_depth, cap, again, max_events, &c);
    CHECK(c.peak <= cap);
    if (c.error == STG_JSON_E_MEMORY && a.error != STG_JSON_E_MEMORY) {
        /* a prefix of the uncapped stream, then the error */
        CHECK(c.count >= 1 && c.count <= a.count);
        CHECK(c.count == 1 || memcmp(digests, again, (c.count - 1) * sizeof *digests) == 0);
    } else {
        CHECK(a.count == c.count && a.last == c.last && a.error == c.error &&
              a.error_offset == c.error_offset);
        CHECK(memcmp(digests, again, a.count * sizeof *digests) == 0);
    }

    check_skip(data, size, max_depth, &a);
    free(digests);
    free(again);
    return 0;
}
