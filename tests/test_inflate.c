/* parser/inflate on streams built here byte by byte (stored deflate blocks, zlib and gzip
 * wrappers with their checksums computed in the test) and on the zeros fixtures: empty and
 * truncated input, corrupt blocks and wrappers and where they are seen, preset dictionaries,
 * the size cap at, below and above 4,096 bytes and at 0, the ratio cap and its floor,
 * concatenated gzip members and what may follow them, bytes after a raw or zlib stream. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/inflate.h"
#include "testutil.h"

/* ------------------------------------------------------------------- stream builders */

typedef struct sb {
    uint8_t p[4096];
    size_t len;
} sb;

static void sb_put(sb *b, const void *src, size_t n)
{
    ck_assert_uint_le(b->len + n, sizeof b->p);
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void sb_u8(sb *b, uint8_t v)
{
    sb_put(b, &v, 1);
}

/* One stored deflate block (final or not) holding data[0..n). */
static void sb_stored(sb *b, const void *data, size_t n, int final)
{
    sb_u8(b, final ? 0x01 : 0x00);
    sb_u8(b, (uint8_t)n);
    sb_u8(b, (uint8_t)(n >> 8));
    sb_u8(b, (uint8_t)~n);
    sb_u8(b, (uint8_t)(~n >> 8));
    sb_put(b, data, n);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) {
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
        }
    }
    return ~c;
}

static uint32_t adler32_of(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    return (b << 16) | a;
}

/* zlib: CMF 0x78, FLG 0x01 (check bits; no dictionary), stored block, Adler-32 big-endian. */
static void sb_zlib(sb *b, const char *text)
{
    size_t n = strlen(text);
    sb_u8(b, 0x78);
    sb_u8(b, 0x01);
    sb_stored(b, text, n, 1);
    uint32_t a = adler32_of((const uint8_t *)text, n);
    uint8_t be[4] = {(uint8_t)(a >> 24), (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a};
    sb_put(b, be, 4);
}

/* One gzip member: 10-byte header, stored block, CRC-32 and size little-endian. */
static void sb_gzip(sb *b, const char *text)
{
    static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    size_t n = strlen(text);
    sb_put(b, head, sizeof head);
    sb_stored(b, text, n, 1);
    uint32_t c = crc32_of((const uint8_t *)text, n);
    uint8_t tail[8] = {(uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24),
                       (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    sb_put(b, tail, sizeof tail);
}

/* Bit writer for fixed-Huffman blocks: extra bits go LSB first, Huffman codes MSB first. */
typedef struct bw {
    uint8_t p[256];
    size_t bits;
} bw;

static void bw_bits(bw *w, uint32_t v, int n)
{
    for (int i = 0; i < n; i++) {
        ck_assert_uint_lt(w->bits / 8, sizeof w->p);
        if (((v >> i) & 1u) != 0) {
            w->p[w->bits / 8] = (uint8_t)(w->p[w->bits / 8] | (1u << (w->bits % 8)));
        }
        w->bits++;
    }
}

static void bw_code(bw *w, uint32_t code, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        bw_bits(w, (code >> i) & 1u, 1);
    }
}

/* Fixed literal/length code of symbol s (RFC 1951 3.2.6). */
static void bw_sym(bw *w, unsigned s)
{
    if (s < 144) {
        bw_code(w, 0x30 + s, 8);
    } else if (s < 256) {
        bw_code(w, 0x190 + (s - 144), 9);
    } else if (s < 280) {
        bw_code(w, s - 256, 7);
    } else {
        bw_code(w, 0xc0 + (s - 280), 8);
    }
}

static uint8_t *fixture(const char *name, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/data/containers/%s", name);
    uint8_t *p = tu_read_file(tu_src(rel), len);
    ck_assert_msg(p != NULL, "fixture %s", name);
    return p;
}

#define NEED_ZLIB()                         \
    do {                                    \
        if (!stg_inflate_available()) {     \
            return; /* fail-closed build */ \
        }                                   \
    } while (0)

/* ------------------------------------------------------------------------------ tests */

START_TEST(test_stored_streams_all_formats)
{
    NEED_ZLIB();
    stg_inflate_out out;
    sb b = {0};
    sb_stored(&b, "first ", 6, 0);
    sb_stored(&b, "second", 6, 1);
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_RAW, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 12);
    ck_assert(memcmp(out.data, "first second", 12) == 0);
    ck_assert_uint_eq(out.consumed, b.len);
    stg_inflate_free(&out);
    ck_assert_ptr_null(out.data); /* free resets the struct */
    ck_assert_uint_eq(out.len, 0);
    memset(&b, 0, sizeof b);
    sb_zlib(&b, "zlib text");
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_ZLIB, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 9);
    ck_assert(memcmp(out.data, "zlib text", 9) == 0);
    ck_assert_uint_eq(out.consumed, b.len);
    stg_inflate_free(&out);
    memset(&b, 0, sizeof b);
    sb_gzip(&b, "gzip text");
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_GZIP, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 9);
    ck_assert(memcmp(out.data, "gzip text", 9) == 0);
    stg_inflate_free(&out);
    /* The wrong wrapper for the bytes: corrupt, not silently accepted. */
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_ZLIB, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    ck_assert_uint_eq(out.len, 0);
    stg_inflate_free(&out);
}
END_TEST

START_TEST(test_empty_and_truncated)
{
    NEED_ZLIB();
    stg_inflate_out out;
    /* No input at all: a stream that never started is truncated, at offset 0. */
    ck_assert_int_eq(stg_inflate((const uint8_t *)"", 0, STG_INFLATE_RAW, 1 << 20, 0, &out),
                     STG_INFLATE_TRUNCATED);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_uint_eq(out.error_offset, 0);
    stg_inflate_free(&out);
    /* Cut inside the stored data: what came before is kept, the error is at the end. */
    sb b = {0};
    sb_stored(&b, "0123456789", 10, 1);
    ck_assert_int_eq(stg_inflate(b.p, 5 + 4, STG_INFLATE_RAW, 1 << 20, 0, &out),
                     STG_INFLATE_TRUNCATED);
    ck_assert_uint_eq(out.len, 4);
    ck_assert(memcmp(out.data, "0123", 4) == 0);
    ck_assert_uint_eq(out.consumed, 9);
    ck_assert_uint_eq(out.error_offset, 9);
    stg_inflate_free(&out);
    /* A zlib stream missing its Adler-32 trailer is truncated too. */
    memset(&b, 0, sizeof b);
    sb_zlib(&b, "abc");
    ck_assert_int_eq(stg_inflate(b.p, b.len - 2, STG_INFLATE_ZLIB, 1 << 20, 0, &out),
                     STG_INFLATE_TRUNCATED);
    ck_assert_uint_eq(out.len, 3);
    stg_inflate_free(&out);
}
END_TEST

START_TEST(test_corrupt_and_where)
{
    NEED_ZLIB();
    stg_inflate_out out;
    /* A stored block whose length and its complement disagree: seen after the 5-byte block
     * header. */
    static const uint8_t bad_len[] = {0x01, 0x05, 0x00, 0x00, 0x00, 'a', 'b', 'c', 'd', 'e'};
    ck_assert_int_eq(stg_inflate(bad_len, sizeof bad_len, STG_INFLATE_RAW, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_uint_eq(out.error_offset, 5);
    stg_inflate_free(&out);
    /* Block type 3 is reserved. */
    static const uint8_t reserved[] = {0x07, 0x00};
    ck_assert_int_eq(stg_inflate(reserved, sizeof reserved, STG_INFLATE_RAW, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    ck_assert_uint_eq(out.error_offset, 1);
    stg_inflate_free(&out);
    /* A wrong Adler-32: the data came out whole, the check fails at the trailer's end. */
    sb b = {0};
    sb_zlib(&b, "checked");
    b.p[b.len - 1] ^= 1;
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_ZLIB, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    ck_assert_uint_eq(out.len, 7);
    ck_assert_uint_eq(out.error_offset, b.len);
    stg_inflate_free(&out);
    /* A zlib header asking for a preset dictionary (FDICT): nobody can supply it. */
    static const uint8_t fdict[] = {0x78, 0xbb, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00};
    ck_assert_int_eq(stg_inflate(fdict, sizeof fdict, STG_INFLATE_ZLIB, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_uint_eq(out.error_offset, 6);
    stg_inflate_free(&out);
    /* A wrong gzip CRC. */
    memset(&b, 0, sizeof b);
    sb_gzip(&b, "crc");
    b.p[b.len - 8] ^= 1;
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_GZIP, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    stg_inflate_free(&out);
}
END_TEST

START_TEST(test_gzip_members_and_trailers)
{
    NEED_ZLIB();
    stg_inflate_out out;
    /* Two members: both inflated, all consumed. */
    sb b = {0};
    sb_gzip(&b, "one ");
    size_t first = b.len;
    sb_gzip(&b, "two");
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_GZIP, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 7);
    ck_assert(memcmp(out.data, "one two", 7) == 0);
    ck_assert_uint_eq(out.consumed, b.len);
    stg_inflate_free(&out);
    /* A second member that starts like one (1f 8b) and then breaks: the whole is corrupt, the
     * first member's bytes are kept. */
    b.p[first + 2] = 7; /* compression method 7 */
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_GZIP, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    ck_assert_uint_eq(out.len, 4);
    ck_assert(memcmp(out.data, "one ", 4) == 0);
    stg_inflate_free(&out);
    /* After a member: one byte 1f, or 1f followed by anything but 8b, is trailing data left
     * unconsumed for the caller. */
    memset(&b, 0, sizeof b);
    sb_gzip(&b, "solo");
    first = b.len;
    sb_u8(&b, 0x1f);
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_GZIP, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.consumed, first);
    stg_inflate_free(&out);
    sb_u8(&b, 0x00);
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_GZIP, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.consumed, first);
    ck_assert_uint_eq(out.len, 4);
    stg_inflate_free(&out);
    /* A raw or zlib stream ends at its end: the 1f 8b rule is gzip's only. */
    memset(&b, 0, sizeof b);
    sb_zlib(&b, "z");
    first = b.len;
    sb_gzip(&b, "g");
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_ZLIB, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.consumed, first);
    ck_assert_uint_eq(out.len, 1);
    stg_inflate_free(&out);
}
END_TEST

START_TEST(test_size_cap_small)
{
    NEED_ZLIB();
    stg_inflate_out out;
    char text[200];
    memset(text, 'x', sizeof text);
    sb b = {0};
    sb_stored(&b, text, sizeof text, 1);
    /* Caps below the first 4,096-byte buffer: exactly the size passes, one less stops there. */
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_RAW, 200, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 200);
    stg_inflate_free(&out);
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_RAW, 199, 0, &out), STG_INFLATE_TOO_BIG);
    ck_assert_uint_eq(out.len, 199);
    ck_assert(memcmp(out.data, text, 199) == 0);
    stg_inflate_free(&out);
    /* A cap of 0: nothing is produced, nothing allocated. */
    ck_assert_int_eq(stg_inflate(b.p, b.len, STG_INFLATE_RAW, 0, 0, &out), STG_INFLATE_TOO_BIG);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_ptr_null(out.data);
    stg_inflate_free(&out);
    /* An empty stored block produces nothing and ends the stream. */
    static const uint8_t empty[] = {0x01, 0x00, 0x00, 0xff, 0xff};
    ck_assert_int_eq(stg_inflate(empty, sizeof empty, STG_INFLATE_RAW, 1, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_uint_eq(out.consumed, sizeof empty);
    stg_inflate_free(&out);
}
END_TEST

START_TEST(test_size_cap_growth)
{
    NEED_ZLIB();
    /* 2 MiB of zeros: the buffer grows geometrically past 4,096; a cap that is not a power of
     * two is met exactly. */
    size_t len;
    uint8_t *raw = fixture("zeros-2m.deflate", &len);
    stg_inflate_out out;
    uint64_t cap = (1u << 20) + 12345;
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, cap, 0, &out), STG_INFLATE_TOO_BIG);
    ck_assert_uint_eq(out.len, cap);
    ck_assert_uint_eq(out.data[cap - 1], 0);
    stg_inflate_free(&out);
    free(raw);
}
END_TEST

START_TEST(test_ratio_floor)
{
    NEED_ZLIB();
    size_t len;
    uint8_t *raw = fixture("zeros-2m.deflate", &len);
    stg_inflate_out out;
    /* Ratio 1 (anything compressed passes it), output capped at the 1 MiB floor: the ratio is
     * never judged, the size cap stops it. */
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, STG_INFLATE_RATIO_FLOOR, 1, &out),
                     STG_INFLATE_TOO_BIG);
    ck_assert_uint_eq(out.len, STG_INFLATE_RATIO_FLOOR);
    stg_inflate_free(&out);
    /* One byte past the floor is judged: ratio. */
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, STG_INFLATE_RATIO_FLOOR + 1, 1, &out),
                     STG_INFLATE_RATIO);
    ck_assert_uint_gt(out.len, STG_INFLATE_RATIO_FLOOR);
    stg_inflate_free(&out);
    /* The largest ratio: output 2 MiB from ~2 KiB passes 2^32 - 1 and fails at the real
     * ratio minus a margin. */
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, 1ull << 32, UINT32_MAX, &out),
                     STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 2u << 20);
    stg_inflate_free(&out);
    uint32_t real = (uint32_t)((2u << 20) / len);
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, 1ull << 32, real - 1, &out),
                     STG_INFLATE_RATIO);
    stg_inflate_free(&out);
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, 1ull << 32, real + 1, &out),
                     STG_INFLATE_OK);
    stg_inflate_free(&out);
    free(raw);
}
END_TEST

START_TEST(test_pending_output_without_input)
{
    NEED_ZLIB();
    /* A fixed-Huffman block: 'a', then 16 matches of 258 bytes at distance 1 (4,129 bytes
     * from 28), cut right after the last match (no end-of-block). The first 4,096-byte buffer
     * fills inside the last match, after the last input byte was read: the decoder then owes
     * 33 bytes it produces without reading anything. That is progress, not a stall. */
    bw w;
    memset(&w, 0, sizeof w);
    bw_bits(&w, 1, 1); /* BFINAL */
    bw_bits(&w, 1, 2); /* BTYPE 01: fixed Huffman */
    bw_sym(&w, 'a');
    for (int i = 0; i < 16; i++) {
        bw_sym(&w, 285);   /* length 258 */
        bw_code(&w, 0, 5); /* distance 1 */
    }
    size_t in_len = (w.bits + 7) / 8;
    ck_assert_uint_eq(in_len, 28);
    stg_inflate_out out;
    /* All owed bytes come out before the missing end of the stream is reported. */
    ck_assert_int_eq(stg_inflate(w.p, in_len, STG_INFLATE_RAW, 1 << 20, 0, &out),
                     STG_INFLATE_TRUNCATED);
    ck_assert_uint_eq(out.len, 1 + 16 * 258);
    ck_assert_uint_eq(out.consumed, in_len);
    for (size_t i = 0; i < out.len; i++) {
        ck_assert_uint_eq(out.data[i], 'a');
    }
    stg_inflate_free(&out);
    /* A cap 10 bytes past the first buffer: the owed bytes fill it, then the cap stops it. */
    ck_assert_int_eq(stg_inflate(w.p, in_len, STG_INFLATE_RAW, 4096 + 10, 0, &out),
                     STG_INFLATE_TOO_BIG);
    ck_assert_uint_eq(out.len, 4096 + 10);
    ck_assert_uint_eq(out.data[4096 + 9], 'a');
    stg_inflate_free(&out);
    /* With the end-of-block code the same block is a whole stream. */
    bw_sym(&w, 256);
    ck_assert_int_eq(stg_inflate(w.p, (w.bits + 7) / 8, STG_INFLATE_RAW, 1 << 20, 0, &out),
                     STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 1 + 16 * 258);
    stg_inflate_free(&out);
}
END_TEST

static Suite *inflate_suite(void)
{
    Suite *s = suite_create("inflate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_stored_streams_all_formats);
    tcase_add_test(tc, test_empty_and_truncated);
    tcase_add_test(tc, test_corrupt_and_where);
    tcase_add_test(tc, test_gzip_members_and_trailers);
    tcase_add_test(tc, test_size_cap_small);
    tcase_add_test(tc, test_size_cap_growth);
    tcase_add_test(tc, test_ratio_floor);
    tcase_add_test(tc, test_pending_output_without_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(inflate_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
