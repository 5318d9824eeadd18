/* parser/inflate on streams built here byte by byte (stored deflate blocks, zlib and gzip
 * wrappers with their checksums computed in the test) and on the zeros fixtures: empty and
 * truncated input, corrupt blocks and wrappers and where they are seen, preset dictionaries,
 * the size cap at, below and above 4,096 bytes and at 0, the ratio cap and its floor,
 * concatenated gzip members and what may follow them, bytes after a raw or zlib stream; xz,
 * lzma-alone and bzip2 streams Python wrote: concatenation, trailing bytes, truncation,
 * damage, the caps and liblzma's dictionary limit. */
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
        if (!tu_inflate_built()) {          \
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

/* ------------------------------------------------------------------- xz, lzma-alone, bzip2 */

/* Streams Python's lzma and bz2 modules wrote (MSG below); built without liblzma or libbz2,
 * the call must say unavailable (fail closed). */
#define MSG "stguard: a pickle would be here\n"

/* lzma.compress(MSG, FORMAT_XZ, preset=3) */
static const uint8_t xz_msg[] = {
    0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46, 0x02, 0x00, 0x21,
    0x01, 0x14, 0x00, 0x00, 0x00, 0xff, 0xe7, 0xec, 0x09, 0x01, 0x00, 0x1f, 0x73, 0x74, 0x67,
    0x75, 0x61, 0x72, 0x64, 0x3a, 0x20, 0x61, 0x20, 0x70, 0x69, 0x63, 0x6b, 0x6c, 0x65, 0x20,
    0x77, 0x6f, 0x75, 0x6c, 0x64, 0x20, 0x62, 0x65, 0x20, 0x68, 0x65, 0x72, 0x65, 0x0a, 0x00,
    0x32, 0x55, 0x09, 0x43, 0xf0, 0x28, 0xe9, 0x84, 0x00, 0x01, 0x38, 0x20, 0x18, 0x29, 0x77,
    0x0c, 0x1f, 0xb6, 0xf3, 0x7d, 0x01, 0x00, 0x00, 0x00, 0x00, 0x04, 0x59, 0x5a,
};

/* lzma.compress(MSG, FORMAT_ALONE, preset=3) */
static const uint8_t alone_msg[] = {
    0x5d, 0x00, 0x00, 0x40, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00,
    0x39, 0x9d, 0x09, 0x13, 0x1e, 0x11, 0x84, 0xfe, 0x65, 0xc9, 0x0d, 0xfe, 0x9d, 0xec,
    0x01, 0x6c, 0x9c, 0x13, 0xe7, 0x2f, 0x60, 0x83, 0x98, 0x74, 0xc3, 0x78, 0x0b, 0xc6,
    0x65, 0x6c, 0x1d, 0x9f, 0xf2, 0x0d, 0xed, 0x4c, 0xff, 0xff, 0xc1, 0x1f, 0x80, 0x00,
};

/* bz2.compress(MSG, 3) */
static const uint8_t bz2_msg[] = {
    0x42, 0x5a, 0x68, 0x33, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0xc5, 0x12, 0x40, 0xd3, 0x00,
    0x00, 0x0d, 0xd9, 0x80, 0x00, 0x10, 0x40, 0x00, 0x00, 0x10, 0x3e, 0xec, 0xde, 0x80, 0x20,
    0x00, 0x22, 0x99, 0x18, 0x81, 0x93, 0x4c, 0x85, 0x30, 0x9a, 0x68, 0x0d, 0x31, 0x12, 0xc8,
    0x24, 0x02, 0x50, 0x1b, 0x57, 0xa6, 0x85, 0x60, 0xfc, 0xd9, 0x79, 0x26, 0x67, 0x98, 0x93,
    0xf8, 0xbb, 0x92, 0x29, 0xc2, 0x84, 0x86, 0x28, 0x92, 0x06, 0x98,
};

/* lzma.compress(bytes(2 MiB), FORMAT_XZ, preset=0) */
static const uint8_t xz_zeros[] = {
    0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46, 0x02, 0x00, 0x21, 0x01,
    0x0c, 0x00, 0x00, 0x00, 0x8f, 0x98, 0x41, 0x9c, 0xff, 0xff, 0x11, 0x01, 0x6c, 0x5d, 0x00, 0x00,
    0x6f, 0xfd, 0xff, 0xff, 0xa3, 0xb7, 0xff, 0x47, 0x3e, 0x48, 0x15, 0x72, 0x39, 0x61, 0x51, 0xb8,
    0x92, 0x28, 0xe6, 0xa3, 0x86, 0x07, 0xf9, 0xee, 0xe4, 0x1e, 0x82, 0xd3, 0x2f, 0xc5, 0x3a, 0x3c,
    0x01, 0x4b, 0xb1, 0x7e, 0xc9, 0x8a, 0x8a, 0x4d, 0x2f, 0xa3, 0x0d, 0xd9, 0x7f, 0xa6, 0xe3, 0x8c,
    0x23, 0x11, 0x53, 0xe0, 0x59, 0x18, 0xc5, 0x75, 0x8a, 0xe2, 0x77, 0xf8, 0xb6, 0x94, 0x7f, 0x0c,
    0x6a, 0xc0, 0xde, 0x74, 0x49, 0x64, 0xe2, 0xe9, 0x5c, 0x53, 0xb2, 0x04, 0xd8, 0xf7, 0x44, 0x0c,
    0xab, 0x5f, 0x0d, 0x6d, 0x46, 0xe9, 0xe5, 0xc3, 0x76, 0x88, 0xb7, 0x96, 0x57, 0xac, 0xb6, 0x4d,
    0xe1, 0x69, 0x1d, 0x6f, 0xfb, 0x4b, 0x88, 0x10, 0x6c, 0x42, 0xcb, 0x88, 0x3f, 0x5c, 0x00, 0x8f,
    0xd0, 0x4e, 0xaf, 0x26, 0x28, 0x94, 0x71, 0x1f, 0x3d, 0x8f, 0x24, 0xe1, 0x70, 0x9e, 0xa7, 0x23,
    0x5f, 0xec, 0x28, 0xcb, 0x85, 0xd1, 0x95, 0x98, 0x8a, 0x7e, 0x2a, 0x91, 0xf2, 0x27, 0x75, 0xf7,
    0x19, 0xc0, 0x06, 0x98, 0x4d, 0x98, 0xfd, 0xd8, 0xaf, 0xd5, 0x90, 0x0f, 0xc4, 0x25, 0x53, 0xf8,
    0xf5, 0x91, 0x36, 0x31, 0x05, 0xa5, 0xb0, 0xee, 0x6f, 0xc1, 0x70, 0x4d, 0x47, 0x0c, 0xd1, 0x91,
    0x11, 0xaa, 0xad, 0x60, 0x1d, 0xba, 0xce, 0xb1, 0x27, 0x18, 0x5c, 0x59, 0x86, 0xe9, 0x66, 0x52,
    0x58, 0xbe, 0xe9, 0x76, 0xac, 0x59, 0xe4, 0xe5, 0x5b, 0x05, 0x08, 0xf9, 0xc7, 0xda, 0xad, 0xfc,
    0xfb, 0x52, 0x2b, 0x74, 0xcd, 0x1e, 0x5b, 0x20, 0x42, 0xf9, 0xdd, 0x53, 0x3d, 0xf8, 0x29, 0x64,
    0x09, 0x3b, 0x80, 0xcb, 0x2a, 0x6c, 0xdf, 0xb5, 0x3b, 0xf0, 0xc4, 0xbd, 0x2e, 0x5f, 0xaa, 0x0f,
    0x3e, 0x4b, 0x66, 0x42, 0x90, 0x13, 0x0e, 0xff, 0x10, 0x93, 0xf8, 0x71, 0x78, 0x59, 0xf8, 0x0b,
    0xcd, 0xff, 0x95, 0x28, 0x46, 0x0f, 0xa9, 0xfc, 0x7c, 0xde, 0xfb, 0x9a, 0x30, 0x2e, 0x56, 0xc0,
    0x8f, 0x85, 0xf3, 0x83, 0x81, 0xc0, 0x65, 0xc4, 0x25, 0x53, 0xf8, 0xf5, 0x91, 0x36, 0x31, 0x05,
    0xa5, 0xb0, 0xee, 0x6f, 0xc1, 0x70, 0x4d, 0x47, 0x0c, 0xd1, 0x91, 0x11, 0xaa, 0xad, 0x60, 0x1d,
    0xba, 0xce, 0xb1, 0x27, 0x18, 0x5c, 0x59, 0x86, 0xe9, 0x66, 0x52, 0x58, 0xbe, 0xe9, 0x76, 0xac,
    0x59, 0xe4, 0xe5, 0x5b, 0x05, 0x08, 0xf9, 0xc7, 0xda, 0xad, 0xfc, 0xfb, 0x52, 0x2b, 0x74, 0xcd,
    0x1e, 0x5b, 0x20, 0x42, 0xf9, 0xdd, 0x53, 0x3d, 0xf8, 0x29, 0x64, 0x09, 0x3b, 0x80, 0xcb, 0x2a,
    0x6c, 0xdf, 0xb5, 0x3b, 0xf0, 0xc4, 0xbc, 0x48, 0x27, 0xe6, 0x58, 0x80, 0x00, 0xed, 0x00, 0x05,
    0x00, 0x1c, 0xa6, 0x24, 0xf1, 0x00, 0x00, 0x00, 0xb6, 0x53, 0x5a, 0x66, 0x86, 0x91, 0xfe, 0x1d,
    0x00, 0x01, 0x93, 0x03, 0x80, 0x80, 0x80, 0x01, 0x86, 0xcf, 0xef, 0x5f, 0xb1, 0xc4, 0x67, 0xfb,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x04, 0x59, 0x5a,
};

/* bz2.compress(bytes(2 MiB), 9) */
static const uint8_t bz2_zeros[] = {
    0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x7e, 0xe1, 0x91, 0xb1, 0x00, 0x10,
    0x10, 0x60, 0x00, 0xc0, 0x00, 0x00, 0x04, 0x00, 0x08, 0x20, 0x00, 0x30, 0xcc, 0x05, 0x29, 0xa6,
    0x04, 0x03, 0x62, 0x08, 0x07, 0x8b, 0xb9, 0x22, 0x9c, 0x28, 0x48, 0x3f, 0x70, 0xc8, 0xd8, 0x80,
};

/* One compressed vector and the library that opens it. */
typedef struct vector {
    stg_inflate_format fmt;
    const uint8_t *p;
    size_t n;
} vector;

static bool need_format(stg_inflate_format fmt, const uint8_t *p, size_t n)
{
    if (tu_inflate_format_built(fmt)) {
        return true;
    }
    stg_inflate_out out;
    ck_assert_int_eq(stg_inflate(p, n, fmt, 1 << 20, 0, &out), STG_INFLATE_UNAVAILABLE);
    ck_assert_ptr_null(out.data);
    return false;
}

/* Two copies of one stream, then the stream followed by bytes that start no stream. */
static void check_concatenation(stg_inflate_format fmt, const uint8_t *one, size_t n)
{
    uint8_t two[512];
    ck_assert_uint_le(2 * n + 8, sizeof two);
    memcpy(two, one, n);
    memcpy(two + n, one, n);
    stg_inflate_out out;
    ck_assert_int_eq(stg_inflate(two, 2 * n, fmt, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 2 * (sizeof MSG - 1));
    ck_assert(memcmp(out.data + sizeof MSG - 1, MSG, sizeof MSG - 1) == 0);
    ck_assert_uint_eq(out.consumed, 2 * n);
    stg_inflate_free(&out);
    memcpy(two + n, "trailing", 8); /* Python's readers ignore this */
    ck_assert_int_eq(stg_inflate(two, n + 8, fmt, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, sizeof MSG - 1);
    ck_assert_uint_eq(out.consumed, n);
    stg_inflate_free(&out);
}

/* Whether a library whose file name holds needle is mapped into this process. */
static bool library_mapped(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    bool found = false;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, needle) != NULL) {
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* zlib, liblzma and libbz2 are loaded when a stream of theirs is first decompressed
 * (parser/codec_libs.h), not at start-up; this test runs first, so nothing has decompressed
 * before it. Near miss: each first use loads its library only, and decompresses right. */
START_TEST(test_libraries_loaded_on_first_use)
{
    static const struct {
        stg_inflate_format fmt;
        const char *lib;
        const uint8_t *p;
        size_t n;
    } uses[] = {{STG_INFLATE_LZMA, "/liblzma.so", xz_msg, sizeof xz_msg},
                {STG_INFLATE_BZIP2, "/libbz2.so", bz2_msg, sizeof bz2_msg}};
    ck_assert_msg(!library_mapped("/libz.so"), "zlib is mapped before any stream");
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
        ck_assert_msg(!library_mapped(uses[i].lib), "%s mapped before any stream", uses[i].lib);
    }
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
        if (!need_format(uses[i].fmt, uses[i].p, uses[i].n)) {
            continue; /* a build without it: never loaded */
        }
        ck_assert(library_mapped(uses[i].lib));
        stg_inflate_out out;
        ck_assert_int_eq(stg_inflate(uses[i].p, uses[i].n, uses[i].fmt, 1 << 20, 0, &out),
                         STG_INFLATE_OK);
        ck_assert(memcmp(out.data, MSG, sizeof MSG - 1) == 0);
        stg_inflate_free(&out);
    }
    ck_assert(!library_mapped("/libz.so"));
    if (stg_inflate_available()) {
        ck_assert(library_mapped("/libz.so"));
    }
}
END_TEST

START_TEST(test_lzma_and_bzip2_streams)
{
    static const vector cases[] = {
        {STG_INFLATE_LZMA, xz_msg, sizeof xz_msg},
        {STG_INFLATE_LZMA, alone_msg, sizeof alone_msg},
        {STG_INFLATE_BZIP2, bz2_msg, sizeof bz2_msg},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!need_format(cases[i].fmt, cases[i].p, cases[i].n)) {
            continue;
        }
        stg_inflate_out out;
        ck_assert_int_eq(stg_inflate(cases[i].p, cases[i].n, cases[i].fmt, 1 << 20, 0, &out),
                         STG_INFLATE_OK);
        ck_assert_uint_eq(out.len, sizeof MSG - 1);
        ck_assert(memcmp(out.data, MSG, sizeof MSG - 1) == 0);
        ck_assert_uint_eq(out.consumed, cases[i].n);
        stg_inflate_free(&out);
        check_concatenation(cases[i].fmt, cases[i].p, cases[i].n);
        /* Cut short: truncated, with what came before kept. */
        ck_assert_int_eq(stg_inflate(cases[i].p, cases[i].n - 12, cases[i].fmt, 1 << 20, 0, &out),
                         STG_INFLATE_TRUNCATED);
        stg_inflate_free(&out);
        /* A damaged byte in the compressed data: corrupt, never a silent success. */
        uint8_t bad[128];
        memcpy(bad, cases[i].p, cases[i].n);
        bad[cases[i].n / 2] ^= 0x55;
        stg_inflate_result ir = stg_inflate(bad, cases[i].n, cases[i].fmt, 1 << 20, 0, &out);
        ck_assert_msg(ir == STG_INFLATE_CORRUPT || ir == STG_INFLATE_TRUNCATED, "case %zu: %d", i,
                      ir);
        stg_inflate_free(&out);
        /* Not a stream of this format at all. */
        ck_assert_int_eq(stg_inflate((const uint8_t *)"plain text, no stream", 21, cases[i].fmt,
                                     1 << 20, 0, &out),
                         STG_INFLATE_CORRUPT);
        stg_inflate_free(&out);
    }
    /* A gzip stream is not read as xz or bzip2 by mistake. */
    sb g = {0};
    sb_gzip(&g, "gzip text");
    stg_inflate_out out;
    if (tu_inflate_format_built(STG_INFLATE_LZMA)) {
        ck_assert_int_eq(stg_inflate(g.p, g.len, STG_INFLATE_LZMA, 1 << 20, 0, &out),
                         STG_INFLATE_CORRUPT);
        stg_inflate_free(&out);
    }
    if (tu_inflate_format_built(STG_INFLATE_BZIP2)) {
        ck_assert_int_eq(stg_inflate(g.p, g.len, STG_INFLATE_BZIP2, 1 << 20, 0, &out),
                         STG_INFLATE_CORRUPT);
        stg_inflate_free(&out);
    }
}
END_TEST

/* The size and ratio caps hold for liblzma and libbz2 as for zlib: 2 MiB of zeros in a few
 * hundred bytes. */
START_TEST(test_lzma_and_bzip2_caps)
{
    static const vector cases[] = {
        {STG_INFLATE_LZMA, xz_zeros, sizeof xz_zeros},
        {STG_INFLATE_BZIP2, bz2_zeros, sizeof bz2_zeros},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!need_format(cases[i].fmt, cases[i].p, cases[i].n)) {
            continue;
        }
        stg_inflate_out out;
        ck_assert_int_eq(stg_inflate(cases[i].p, cases[i].n, cases[i].fmt, 2u << 20, 0, &out),
                         STG_INFLATE_OK);
        ck_assert_uint_eq(out.len, 2u << 20);
        stg_inflate_free(&out);
        ck_assert_int_eq(stg_inflate(cases[i].p, cases[i].n, cases[i].fmt, (2u << 20) - 1, 0, &out),
                         STG_INFLATE_TOO_BIG);
        ck_assert_uint_le(out.len, (2u << 20) - 1);
        stg_inflate_free(&out);
        ck_assert_int_eq(stg_inflate(cases[i].p, cases[i].n, cases[i].fmt, 4096, 0, &out),
                         STG_INFLATE_TOO_BIG);
        ck_assert_uint_le(out.len, 4096);
        stg_inflate_free(&out);
        /* ratio: past the floor, 2 MiB from n bytes is far more than 100 x n */
        ck_assert_int_eq(stg_inflate(cases[i].p, cases[i].n, cases[i].fmt, 4u << 20, 100, &out),
                         STG_INFLATE_RATIO);
        ck_assert_uint_gt(out.len, STG_INFLATE_RATIO_FLOOR);
        stg_inflate_free(&out);
        ck_assert_int_eq(stg_inflate(cases[i].p, cases[i].n, cases[i].fmt, 4u << 20, 100000, &out),
                         STG_INFLATE_OK);
        stg_inflate_free(&out);
    }
}
END_TEST

/* An lzma-alone header declares the dictionary the decoder allocates whole: one past
 * STG_INFLATE_LZMA_MEMLIMIT is refused (too big) before any allocation, 64 MiB is fine. */
START_TEST(test_lzma_dictionary_limit)
{
    if (!need_format(STG_INFLATE_LZMA, alone_msg, sizeof alone_msg)) {
        return;
    }
    uint8_t p[sizeof alone_msg];
    memcpy(p, alone_msg, sizeof p);
    stg_inflate_out out;
    tu_store_le(p + 1, 1u << 30, 4); /* the header's dictionary size is little-endian */
    ck_assert_int_eq(stg_inflate(p, sizeof p, STG_INFLATE_LZMA, 1 << 20, 0, &out),
                     STG_INFLATE_TOO_BIG);
    ck_assert_uint_eq(out.len, 0);
    stg_inflate_free(&out);
    tu_store_le(p + 1, 1u << 26, 4);
    ck_assert_int_eq(stg_inflate(p, sizeof p, STG_INFLATE_LZMA, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, sizeof MSG - 1);
    stg_inflate_free(&out);
}
END_TEST

/* Zip method 14 as zipfile writes it (version 9.20, properties size 5, the properties, the raw
 * LZMA1 stream: an lzma-alone file without its 8-byte size): read as zipfile reads it; the
 * header's properties size must be 5, lc + lp at most 4, the dictionary within
 * STG_INFLATE_LZMA_MEMLIMIT; bytes after the end marker are not read. */
START_TEST(test_zip_lzma_member)
{
    if (!need_format(STG_INFLATE_ZIP_LZMA, alone_msg, sizeof alone_msg)) {
        return;
    }
    uint8_t m[sizeof alone_msg + 8];
    size_t n = sizeof alone_msg - 4; /* 4 + 5 + (sizeof alone_msg - 13) */
    memcpy(m, "\x09\x14\x05\x00", 4);
    memcpy(m + 4, alone_msg, 5);
    memcpy(m + 9, alone_msg + 13, sizeof alone_msg - 13);
    memcpy(m + n, "trailing", 8);
    stg_inflate_out out;
    for (int trail = 0; trail < 2; trail++) {
        ck_assert_int_eq(
            stg_inflate(m, n + (trail ? 8u : 0u), STG_INFLATE_ZIP_LZMA, 1 << 20, 0, &out),
            STG_INFLATE_OK);
        ck_assert_uint_eq(out.len, sizeof MSG - 1);
        ck_assert(memcmp(out.data, MSG, sizeof MSG - 1) == 0);
        ck_assert_uint_eq(out.consumed, n);
        stg_inflate_free(&out);
    }
    static const struct {
        size_t at;
        uint8_t byte;
        size_t len;
        stg_inflate_result want;
    } bad[] = {
        {2, 4, 0, STG_INFLATE_CORRUPT},    /* properties size 4 */
        {3, 1, 0, STG_INFLATE_CORRUPT},    /* properties size 261 */
        {4, 225, 0, STG_INFLATE_CORRUPT},  /* past (4 * 5 + 4) * 9 + 8 */
        {4, 13, 0, STG_INFLATE_CORRUPT},   /* lc 4, lp 1: lc + lp > 4 */
        {8, 0x40, 0, STG_INFLATE_TOO_BIG}, /* a 1 GiB dictionary */
        {8, 0x04, 0, STG_INFLATE_OK},      /* 64 MiB: fine */
        {0, 0, 8, STG_INFLATE_TRUNCATED},  /* the header cut short */
        {0, 0, 20, STG_INFLATE_TRUNCATED}, /* the stream cut short */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t c[sizeof m];
        memcpy(c, m, n);
        if (bad[i].len == 0) {
            c[bad[i].at] = bad[i].byte;
        }
        stg_inflate_result ir = stg_inflate(c, bad[i].len != 0 ? bad[i].len : n,
                                            STG_INFLATE_ZIP_LZMA, 1 << 20, 0, &out);
        ck_assert_msg(ir == bad[i].want, "case %zu: %d", i, ir);
        stg_inflate_free(&out);
    }
}
END_TEST

static Suite *inflate_suite(void)
{
    Suite *s = suite_create("inflate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_libraries_loaded_on_first_use);
    tcase_add_test(tc, test_stored_streams_all_formats);
    tcase_add_test(tc, test_empty_and_truncated);
    tcase_add_test(tc, test_corrupt_and_where);
    tcase_add_test(tc, test_gzip_members_and_trailers);
    tcase_add_test(tc, test_size_cap_small);
    tcase_add_test(tc, test_size_cap_growth);
    tcase_add_test(tc, test_ratio_floor);
    tcase_add_test(tc, test_pending_output_without_input);
    tcase_add_test(tc, test_lzma_and_bzip2_streams);
    tcase_add_test(tc, test_lzma_and_bzip2_caps);
    tcase_add_test(tc, test_lzma_dictionary_limit);
    tcase_add_test(tc, test_zip_lzma_member);
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
