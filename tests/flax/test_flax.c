/* Flax msgpack (parser/msgpack.c, validator/flax.c, the format table's Flax entry): for every
 * flax_* code an input that triggers it (severity, byte offset) and a near miss that does not;
 * the reader's limits (depth, counts, lengths past the end); recognition by name and by
 * content (and what is not recognised); the leaves the visitor hands out; and the fixtures
 * tests/flax/gen_flax.py writes as flax's writer does (via script_flax_fixtures.sh). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "parser/msgpack.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/ctx.h"
#include "validator/flax.h"
#include "validator/report.h"
#include "zipbuild.h"

/* ------------------------------------------------------------------------------------------ */
/* A msgpack writer for the tests (the spec's forms; no library). */

typedef tu_buf mb;
#define put tu_buf_put

static void byte(mb *b, uint8_t v)
{
    put(b, &v, 1);
}

static void be(mb *b, uint64_t v, size_t n)
{
    for (size_t k = n; k-- > 0;) {
        byte(b, (uint8_t)(v >> (8 * k)));
    }
}

static void map(mb *b, size_t n)
{
    if (n < 16) {
        byte(b, (uint8_t)(0x80 | n));
    } else {
        byte(b, 0xde);
        be(b, n, 2);
    }
}

static void arr(mb *b, size_t n)
{
    byte(b, (uint8_t)(0x90 | n)); /* n < 16 in these tests */
}

static void strn(mb *b, const char *s, size_t n)
{
    if (n < 32) {
        byte(b, (uint8_t)(0xa0 | n));
    } else {
        byte(b, 0xd9);
        byte(b, (uint8_t)n);
    }
    put(b, s, n);
}

static void str(mb *b, const char *s)
{
    strn(b, s, strlen(s));
}

static void bin(mb *b, const void *d, size_t n)
{
    byte(b, 0xc6); /* bin 32, as msgpack-python writes large buffers */
    be(b, n, 4);
    put(b, d, n);
}

static void ext(mb *b, int8_t type, const mb *payload)
{
    byte(b, 0xc9); /* ext 32 */
    be(b, payload->n, 4);
    byte(b, (uint8_t)type);
    put(b, payload->p, payload->n);
}

static void mp_uint(mb *b, uint64_t v)
{
    if (v < 128) {
        byte(b, (uint8_t)v);
    } else {
        byte(b, 0xcf);
        be(b, v, 8);
    }
}

/* An ndarray payload (shape, dtype name, buffer of nbytes zero bytes) as _ndarray_to_bytes. */
static mb nd_payload(const uint64_t *shape, size_t rank, const char *dtype, size_t nbytes)
{
    mb p = {NULL, 0, 0};
    arr(&p, 3);
    arr(&p, rank);
    for (size_t k = 0; k < rank; k++) {
        mp_uint(&p, shape[k]);
    }
    str(&p, dtype);
    uint8_t *zero = calloc(1, nbytes + 1);
    bin(&p, zero, nbytes);
    free(zero);
    return p;
}

/* {"params": {"w": ext(type, payload)}} */
static mb tree_with(int8_t type, const mb *payload)
{
    mb b = {NULL, 0, 0};
    map(&b, 1);
    str(&b, "params");
    map(&b, 1);
    str(&b, "w");
    ext(&b, type, payload);
    return b;
}

/* The offset of the ext value in tree_with's output: 0x81, "params" (7), 0x81, "w" (2). */
#define W_OFFSET 11u

static mb array_tree(const uint64_t *shape, size_t rank, const char *dtype, size_t nbytes)
{
    mb p = nd_payload(shape, rank, dtype, nbytes);
    mb b = tree_with(1, &p);
    free(p.p);
    return b;
}

/* ------------------------------------------------------------------------------------------ */

static stg_report *check_named(const mb *b, const char *name, stg_profile profile)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = profile;
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_buffer(b->p, b->n, name, &ctx);
    stg_report_finish(r);
    return r;
}

static stg_report *check(const mb *b)
{
    return check_named(b, "flax_model.msgpack", STG_PROFILE_STRICT);
}

static const stg_finding *first(const stg_report *r, stg_code code)
{
    long i = tu_find(r, code);
    ck_assert_msg(i >= 0, "no %s in %s", stg_code_name(code), tu_describe(r));
    return stg_report_at(r, (size_t)i);
}

static void assert_ok(const mb *b)
{
    stg_report *r = check(b);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_format(r), STG_FMT_FLAX_MSGPACK);
    stg_report_free(r);
}

/* The file has code (severity sev) at offset, and that is its first finding. */
static void assert_code(const mb *b, stg_code code, stg_severity sev, uint64_t offset)
{
    stg_report *r = check(b);
    const stg_finding *f = first(r, code);
    ck_assert_msg(f->offset == offset, "%s at %llu, not %llu", stg_code_name(code),
                  (unsigned long long)f->offset, (unsigned long long)offset);
    ck_assert_int_eq(f->severity, sev);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_FLAX_MSGPACK);
    stg_report_free(r);
}

#define E STG_SEV_ERROR
#define W STG_SEV_WARNING

/* ------------------------------------------------------------------------------ the codes */

START_TEST(test_array_ok_and_size_mismatch)
{
    uint64_t shape[2] = {4, 4};
    mb b = array_tree(shape, 2, "float32", 64);
    assert_ok(&b); /* near miss: 4 x 4 x 4 bytes */
    free(b.p);
    b = array_tree(shape, 2, "float32", 60);
    /* the buffer's bin header: ext 32 (6 bytes), the list, the shape, the dtype name */
    assert_code(&b, STG_FLAX_SIZE_MISMATCH, E, W_OFFSET + 6 + 1 + 3 + 8);
    free(b.p);
    /* an empty array is read too: (0, 4) with no bytes is fine, one byte is not */
    uint64_t empty[2] = {0, 4};
    b = array_tree(empty, 2, "float32", 0);
    assert_ok(&b);
    free(b.p);
    b = array_tree(empty, 2, "float32", 1);
    assert_code(&b, STG_FLAX_SIZE_MISMATCH, E, W_OFFSET + 6 + 1 + 3 + 8);
    free(b.p);
}
END_TEST

/* The product overflows, or passes what numpy allocates even with a zero dimension. */
START_TEST(test_size_overflow)
{
    uint64_t wrap[3] = {(uint64_t)1 << 32, (uint64_t)1 << 32, 16};
    mb b = array_tree(wrap, 3, "float32", 0);
    assert_code(&b, STG_FLAX_SIZE_MISMATCH, E, W_OFFSET);
    free(b.p);
    uint64_t big_empty[2] = {0, (uint64_t)1 << 62};
    b = array_tree(big_empty, 2, "float32", 0);
    assert_code(&b, STG_FLAX_SIZE_MISMATCH, E, W_OFFSET);
    free(b.p);
    uint64_t fits_empty[2] = {0, (uint64_t)1 << 60}; /* x 4 = 2^62: numpy takes it */
    b = array_tree(fits_empty, 2, "float32", 0);
    assert_ok(&b);
    free(b.p);
}
END_TEST

START_TEST(test_dtype_unknown)
{
    static const char *const bad[] = {"object", "float8_e4m3fn", "f4", ">f4", "float"};
    uint64_t shape[1] = {2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mb b = array_tree(shape, 1, bad[i], 8);
        assert_code(&b, STG_FLAX_DTYPE_UNKNOWN, E, W_OFFSET + 6 + 1 + 2);
        stg_report *r = check_named(&b, "flax_model.msgpack", STG_PROFILE_COMPAT);
        ck_assert_int_eq(first(r, STG_FLAX_DTYPE_UNKNOWN)->severity, W);
        stg_report_free(r);
        free(b.p);
    }
    static const struct {
        const char *name;
        size_t size;
    } good[] = {{"bfloat16", 2}, {"bool", 1}, {"complex128", 16}, {"uint64", 8}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        mb b = array_tree(shape, 1, good[i].name, 2 * good[i].size);
        assert_ok(&b);
        free(b.p);
    }
}
END_TEST

START_TEST(test_array_invalid)
{
    /* near miss: a numpy scalar (ext 3) of shape () */
    mb p = nd_payload(NULL, 0, "int32", 4);
    mb b = tree_with(3, &p);
    assert_ok(&b);
    free(b.p);
    free(p.p);
    /* a payload of two elements, a negative dimension, a shape that is a number, one extra
     * byte after the list, a rank of 33 */
    mb bad[5];
    for (size_t i = 0; i < 5; i++) {
        bad[i] = (mb){NULL, 0, 0};
    }
    arr(&bad[0], 2);
    arr(&bad[0], 0);
    str(&bad[0], "int8");
    arr(&bad[1], 3);
    arr(&bad[1], 1);
    byte(&bad[1], 0xff); /* -1 */
    str(&bad[1], "int8");
    bin(&bad[1], "", 0);
    arr(&bad[2], 3);
    mp_uint(&bad[2], 2);
    str(&bad[2], "int8");
    bin(&bad[2], "\0\0", 2);
    uint64_t one[1] = {1};
    bad[3] = nd_payload(one, 1, "int8", 1);
    byte(&bad[3], 0xc0);
    arr(&bad[4], 3);
    byte(&bad[4], 0xdc); /* array 16 of 33 ones */
    be(&bad[4], 33, 2);
    for (int k = 0; k < 33; k++) {
        mp_uint(&bad[4], 1);
    }
    str(&bad[4], "int8");
    bin(&bad[4], "\0", 1);
    for (size_t i = 0; i < 5; i++) {
        b = tree_with(1, &bad[i]);
        assert_code(&b, STG_FLAX_ARRAY_INVALID, E, W_OFFSET);
        free(b.p);
        free(bad[i].p);
    }
    /* complex: (re, im) is fine, a lone number is not */
    mb c = {NULL, 0, 0};
    arr(&c, 2);
    byte(&c, 0xcb);
    be(&c, 0x3fe0000000000000u, 8); /* 0.5 */
    byte(&c, 0xff);
    b = tree_with(2, &c);
    assert_ok(&b);
    free(b.p);
    free(c.p);
    c = (mb){NULL, 0, 0};
    mp_uint(&c, 1);
    b = tree_with(2, &c);
    assert_code(&b, STG_FLAX_ARRAY_INVALID, E, W_OFFSET);
    free(b.p);
    free(c.p);
}
END_TEST

START_TEST(test_ext_unknown)
{
    mb p = {NULL, 0, 0};
    put(&p, "\0\0\0\0", 4);
    mb b = tree_with(5, &p);
    assert_code(&b, STG_FLAX_EXT_UNKNOWN, W, W_OFFSET);
    free(b.p);
    b = tree_with(-1, &p); /* msgpack's timestamp: no Flax writer writes one */
    assert_code(&b, STG_FLAX_EXT_UNKNOWN, W, W_OFFSET);
    free(b.p);
    free(p.p);
}
END_TEST

START_TEST(test_malformed)
{
    /* the reserved byte, a str cut short, a count larger than the bytes left */
    static const struct {
        const char *bytes;
        size_t len;
        uint64_t at;
    } rows[] = {
        {"\x81\xa1w\xc1", 4, 3},
        {"\x81\xa1w\xa5"
         "abc",
         7, 3},
        {"\x81\xa1w\xdc\xff\xff\x01\x02", 8, 3},
        {"\x81\xa1w\xc6\x7f\xff\xff\xff", 8, 3},
        {"", 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        mb b = {NULL, 0, 0};
        put(&b, rows[i].bytes, rows[i].len);
        assert_code(&b, STG_FLAX_MALFORMED, E, rows[i].at);
        free(b.p);
    }
    /* near miss of the first: nil */
    mb b = {NULL, 0, 0};
    put(&b, "\x81\xa1w\xc0", 4);
    assert_ok(&b);
    free(b.p);
    /* a str value that is not UTF-8 (offset: the bad byte), a surrogate */
    b = (mb){NULL, 0, 0};
    put(&b,
        "\x81\xa1w\xa3"
        "a\xff"
        "b",
        7);
    assert_code(&b, STG_FLAX_MALFORMED, E, 5);
    free(b.p);
    b = (mb){NULL, 0, 0};
    put(&b, "\x81\xa1w\xa3\xed\xa0\x80", 7);
    assert_code(&b, STG_FLAX_MALFORMED, E, 4);
    free(b.p);
    /* a key that is a list; near miss: an int key (strict_map_key=False takes it) */
    b = (mb){NULL, 0, 0};
    put(&b, "\x82\xa1w\x01\x91\x01\x02", 7);
    assert_code(&b, STG_FLAX_MALFORMED, E, 4);
    free(b.p);
    b = (mb){NULL, 0, 0};
    put(&b, "\x82\xa1w\x01\x07\x02", 6);
    assert_ok(&b);
    free(b.p);
}
END_TEST

START_TEST(test_trailing)
{
    mb b = {NULL, 0, 0};
    put(&b, "\x81\xa1w\x01\x00", 5);
    assert_code(&b, STG_FLAX_TRAILING, E, 4);
    b.n = 4; /* near miss */
    assert_ok(&b);
    free(b.p);
}
END_TEST

START_TEST(test_key_duplicate)
{
    mb b = {NULL, 0, 0};
    put(&b, "\x83\xa1w\x01\xa1v\x02\xa1w\x03", 10);
    assert_code(&b, STG_FLAX_KEY_DUPLICATE, W, 7);
    stg_report *r = check(&b);
    const stg_finding *f = first(r, STG_FLAX_KEY_DUPLICATE);
    ck_assert_str_eq(f->tensor, "w");
    stg_report_free(r);
    free(b.p);
    /* near misses: the same key in two maps, a str and a bin of the same bytes */
    b = (mb){NULL, 0, 0};
    put(&b,
        "\x82\xa1"
        "a\x81\xa1w\x01\xa1"
        "b\x81\xa1w\x02",
        13);
    assert_ok(&b);
    free(b.p);
    b = (mb){NULL, 0, 0};
    put(&b, "\x82\xa1w\x01\xc4\x01w\x02", 8);
    assert_ok(&b);
    free(b.p);
    /* nested: the inner map's duplicate carries its path */
    b = (mb){NULL, 0, 0};
    put(&b, "\x81\xa1p\x82\xa1k\x01\xa1k\x02", 10);
    r = check(&b);
    ck_assert_str_eq(first(r, STG_FLAX_KEY_DUPLICATE)->tensor, "p/k");
    ck_assert_uint_eq(first(r, STG_FLAX_KEY_DUPLICATE)->offset, 7);
    stg_report_free(r);
    free(b.p);
}
END_TEST

/* A chunked leaf ({"__msgpack_chunked_array__": True, "shape": {...}, "chunks": {...}}) must
 * join as msgpack_restore joins it: near miss, shape (2, 3) from chunks of 4 and 2 elements;
 * triggers: 5 elements, a 2-D chunk, a shape key "01", no chunks, an empty chunks map. */
static mb chunked(const char *k1, uint64_t d1, size_t n0, size_t n1, bool two_d, bool with_chunks)
{
    mb b = {NULL, 0, 0};
    map(&b, 1);
    str(&b, "w");
    map(&b, with_chunks ? 3 : 2);
    str(&b, "__msgpack_chunked_array__");
    byte(&b, 0xc3);
    str(&b, "shape");
    map(&b, 2);
    str(&b, "0");
    mp_uint(&b, 2);
    str(&b, k1);
    mp_uint(&b, d1);
    if (with_chunks) {
        str(&b, "chunks");
        map(&b, n1 > 0 ? 2 : (n0 > 0 ? 1 : 0));
        size_t ns[2] = {n0, n1};
        for (size_t i = 0; i < 2 && ns[i] > 0; i++) {
            str(&b, i == 0 ? "0" : "1");
            uint64_t s1[1] = {ns[i]}, s2[2] = {1, ns[i]};
            mb p = two_d && i == 1 ? nd_payload(s2, 2, "int8", ns[i])
                                   : nd_payload(s1, 1, "int8", ns[i]);
            ext(&b, 1, &p);
            free(p.p);
        }
    }
    return b;
}

START_TEST(test_chunked)
{
    mb b = chunked("1", 3, 4, 2, false, true);
    assert_ok(&b);
    free(b.p);
    /* offset of the marked map: 0x81, "w" (2) */
    b = chunked("1", 3, 4, 1, false, true);
    assert_code(&b, STG_FLAX_ARRAY_INVALID, E, 3);
    free(b.p);
    b = chunked("1", 3, 4, 2, true, true);
    assert_code(&b, STG_FLAX_ARRAY_INVALID, E, 3);
    free(b.p);
    b = chunked("01", 3, 4, 2, false, true);
    assert_code(&b, STG_FLAX_ARRAY_INVALID, E, 3);
    free(b.p);
    b = chunked("1", 3, 0, 0, false, false);
    assert_code(&b, STG_FLAX_ARRAY_INVALID, E, 3);
    free(b.p);
    b = chunked("1", 0, 0, 0, false, true); /* shape (2, 0) but no chunk to join */
    assert_code(&b, STG_FLAX_ARRAY_INVALID, E, 3);
    free(b.p);
    /* near miss: "shape" and "chunks" keys without the marker are plain maps */
    b = chunked("01", 3, 4, 1, false, true);
    ck_assert_int_eq(b.p[5], '_');
    b.p[5] = 'X'; /* "X_msgpack_chunked_array__": no marker */
    assert_ok(&b);
    free(b.p);
}
END_TEST

/* ------------------------------------------------------------------------------ the limits */

/* n nested one-element lists around a nil, under one key. */
static mb nested(size_t n)
{
    mb b = {NULL, 0, 0};
    put(&b, "\x81\xa1w", 3);
    for (size_t i = 0; i < n; i++) {
        byte(&b, 0x91);
    }
    byte(&b, 0xc0);
    return b;
}

START_TEST(test_depth_limit)
{
    /* the top map is one level: 126 lists under it are 127 open containers */
    mb b = nested(126);
    assert_ok(&b);
    free(b.p);
    b = nested(127);
    stg_report *r = check(&b);
    const stg_finding *f = first(r, STG_LIMIT_EXCEEDED);
    ck_assert_str_eq(f->limit, "max_json_depth");
    ck_assert_uint_eq(f->offset, 3 + 126);
    ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    free(b.p);
    /* past msgpack's own stack whatever the limit says */
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_json_depth = 4096;
    b = nested(2000);
    r = stg_report_new(&lim);
    ck_assert_int_eq(stg_flax_check(b.p, b.n, &lim, r, NULL, NULL), STG_OK);
    ck_assert_uint_eq(first(r, STG_LIMIT_EXCEEDED)->offset, 3 + STG_MP_DEPTH_CEILING - 1);
    stg_report_free(r);
    free(b.p);
}
END_TEST

START_TEST(test_count_limit)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_tensors = 3;
    mb b = {NULL, 0, 0};
    put(&b, "\x81\xa1w\x94\x01\x02\x03\x04", 8);
    stg_report *r = stg_report_new(&lim);
    ck_assert_int_eq(stg_flax_check(b.p, b.n, &lim, r, NULL, NULL), STG_OK);
    ck_assert_str_eq(first(r, STG_LIMIT_EXCEEDED)->limit, "max_tensors");
    stg_report_free(r);
    b.p[3] = 0x93; /* near miss: three elements */
    b.n = 7;
    r = stg_report_new(&lim);
    ck_assert_int_eq(stg_flax_check(b.p, b.n, &lim, r, NULL, NULL), STG_OK);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_report_free(r);
    free(b.p);
}
END_TEST

/* Every type of the spec reads; the values are what the bytes say. */
START_TEST(test_reader_types)
{
    static const uint8_t doc[] = {
        0x9f, /* a list of 15 */
        0x7f, 0xe0, 0xcc, 0xff, 0xcd, 0x01, 0x00, 0xd0, 0x80, 0xd3, 0x80, 0,    0,    0,
        0,    0,    0,    0,    0xca, 0x3f, 0x80, 0,    0,    0xc2, 0xc3, 0xc0, 0xd9, 0x01,
        'x',  0xc4, 0x00, 0xd4, 0x03, 0x07, 0xd8, 0x01, 0,    0,    0,    0,    0,    0,
        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0xc7, 0x00, 0x80,
    };
    stg_mp_limits lim = {8, 100, 100};
    stg_mp_reader *rd = malloc(sizeof *rd);
    stg_mp_init(rd, stg_cur_make(doc, sizeof doc), &lim);
    stg_mp_item it;
    ck_assert_int_eq(stg_mp_next(rd, &it), STG_MP_OK);
    ck_assert_int_eq(it.kind, STG_MP_ARRAY);
    ck_assert_uint_eq(it.count, 15);
    static const stg_mp_kind kinds[] = {STG_MP_UINT, STG_MP_INT, STG_MP_UINT,  STG_MP_UINT,
                                        STG_MP_INT,  STG_MP_INT, STG_MP_FLOAT, STG_MP_BOOL,
                                        STG_MP_BOOL, STG_MP_NIL, STG_MP_STR,   STG_MP_BIN,
                                        STG_MP_EXT,  STG_MP_EXT, STG_MP_EXT,   STG_MP_CLOSE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        ck_assert_int_eq(stg_mp_next(rd, &it), STG_MP_OK);
        ck_assert_msg(it.kind == kinds[i], "item %zu: kind %d", i, (int)it.kind);
        if (i == 1) {
            ck_assert_int_eq(it.i, -32);
        } else if (i == 3) {
            ck_assert_uint_eq(it.u, 256);
        } else if (i == 5) {
            ck_assert(it.i == INT64_MIN);
        } else if (i == 6) {
            ck_assert(it.f == 1.0);
        } else if (i == 12) {
            ck_assert_int_eq(it.ext_type, 3);
            ck_assert_uint_eq(it.len, 1);
        } else if (i == 13) {
            ck_assert_uint_eq(it.len, 16);
        } else if (i == 14) {
            ck_assert_int_eq(it.ext_type, -128);
            ck_assert_uint_eq(it.len, 0);
        }
    }
    ck_assert_int_eq(stg_mp_next(rd, &it), STG_MP_DONE);
    ck_assert_uint_eq(rd->cur.pos, sizeof doc);
    /* every cut of the document is an error, never DONE */
    for (size_t cut = 0; cut < sizeof doc; cut++) {
        stg_mp_init(rd, stg_cur_make(doc, cut), &lim);
        stg_mp_status st;
        while ((st = stg_mp_next(rd, &it)) == STG_MP_OK) {
        }
        ck_assert_msg(st != STG_MP_DONE, "cut at %zu read as whole", cut);
        ck_assert_uint_le(rd->err_at, cut);
    }
    free(rd);
}
END_TEST

/* ---------------------------------------------------------------------------- recognition */

START_TEST(test_recognition)
{
    uint64_t shape[1] = {2};
    mb b = array_tree(shape, 1, "float32", 8);
    /* by content, whatever the name (no name, a name of another format that only claims) */
    static const char *const names[] = {NULL, "checkpoint_10", "weights.data"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        stg_report *r = check_named(&b, names[i], STG_PROFILE_STRICT);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_FLAX_MSGPACK);
        ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
        stg_report_free(r);
    }
    ck_assert(stg_flax_sniff(b.p, b.n, NULL));
    /* near misses: the same bytes with one more (trailing), an empty map, a top list, an int
     * key, a key that is not UTF-8: unknown content without the name, Flax findings with it */
    static const struct {
        const char *bytes;
        size_t len;
    } not_flax[] = {
        {"\x81\xa1w\x01\x00", 5}, {"\x80", 1},      {"\x91\x01", 2}, {"\x81\x01\x01", 3},
        {"\x81\xa1\xff\x01", 4},  {"\x81\xa1w", 3},
    };
    for (size_t i = 0; i < sizeof not_flax / sizeof not_flax[0]; i++) {
        ck_assert_msg(!stg_flax_sniff((const uint8_t *)not_flax[i].bytes, not_flax[i].len, NULL),
                      "row %zu", i);
        mb nb = {NULL, 0, 0};
        put(&nb, not_flax[i].bytes, not_flax[i].len);
        stg_report *r = check_named(&nb, NULL, STG_PROFILE_STRICT);
        ck_assert_int_ne(stg_report_format(r), STG_FMT_FLAX_MSGPACK);
        stg_report_free(r);
        r = check_named(&nb, "x.msgpack", STG_PROFILE_STRICT);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_FLAX_MSGPACK);
        stg_report_free(r);
        free(nb.p);
    }
    /* the name decides: a pickle named .msgpack is read by the Flax rules, and refused */
    mb pk = {NULL, 0, 0};
    put(&pk, "\x80\x02K\x01.", 5);
    stg_report *r = check_named(&pk, "flax_model.msgpack", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_FLAX_MSGPACK);
    ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    free(pk.p);
    free(b.p);
}
END_TEST

/* Inside an archive: a member named .msgpack is read by the Flax rules (its findings carry the
 * member path); a member of another name with the same bytes is tensor data, left alone. */
START_TEST(test_archive_member)
{
    uint64_t shape[1] = {2};
    mb good = array_tree(shape, 1, "float32", 8);
    mb bad = array_tree(shape, 1, "float32", 7);
    zb_entry e[3] = {zb_file("repo/flax_model.msgpack", bad.p, bad.n),
                     zb_file("repo/data/0", bad.p, bad.n),
                     zb_file("repo/ok.msgpack", good.p, good.n)};
    size_t zlen;
    uint8_t *z = zb_build(e, 3, NULL, &zlen, NULL);
    mb zip = {z, zlen, zlen};
    stg_report *r = check_named(&zip, "bundle.zip", STG_PROFILE_STRICT);
    ck_assert_uint_eq(tu_count(r, STG_FLAX_SIZE_MISMATCH), 1);
    ck_assert_str_eq(first(r, STG_FLAX_SIZE_MISMATCH)->member, "repo/flax_model.msgpack");
    stg_report_free(r);
    free(z);
    free(good.p);
    free(bad.p);
}
END_TEST

/* ------------------------------------------------------------------------------ the leaves */

typedef struct seen {
    char paths[8][64];
    char dtypes[8][16];
    uint32_t rank[8];
    uint64_t dim0[8];
    size_t n;
} seen;

static void on_leaf(void *arg, const stg_flax_leaf *leaf)
{
    seen *s = arg;
    ck_assert_uint_lt(s->n, 8);
    snprintf(s->paths[s->n], sizeof s->paths[0], "%.*s", (int)leaf->path_len, leaf->path);
    snprintf(s->dtypes[s->n], sizeof s->dtypes[0], "%.*s", (int)leaf->dtype_len, leaf->dtype);
    s->rank[s->n] = leaf->rank;
    s->dim0[s->n] = leaf->rank > 0 ? leaf->shape[0] : 0;
    s->n++;
}

START_TEST(test_leaves)
{
    /* {"params": {"Dense_0": {"kernel": f32 (3, 2)}, "layers": [i8 (5,), int 7]}} */
    mb b = {NULL, 0, 0};
    map(&b, 1);
    str(&b, "params");
    map(&b, 2);
    str(&b, "Dense_0");
    map(&b, 1);
    str(&b, "kernel");
    uint64_t s32[2] = {3, 2};
    mb p = nd_payload(s32, 2, "float32", 24);
    ext(&b, 1, &p);
    free(p.p);
    str(&b, "layers");
    arr(&b, 2);
    uint64_t s5[1] = {5};
    p = nd_payload(s5, 1, "int8", 5);
    ext(&b, 1, &p);
    free(p.p);
    mp_uint(&b, 7);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    seen s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(stg_flax_check(b.p, b.n, &lim, r, on_leaf, &s), STG_OK);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_str_eq(s.paths[0], "params/Dense_0/kernel");
    ck_assert_str_eq(s.dtypes[0], "float32");
    ck_assert_uint_eq(s.rank[0], 2);
    ck_assert_uint_eq(s.dim0[0], 3);
    ck_assert_str_eq(s.paths[1], "params/layers/0");
    ck_assert_str_eq(s.dtypes[1], "int8");
    ck_assert_uint_eq(s.dim0[1], 5);
    stg_report_free(r);
    free(b.p);
}
END_TEST

/* tests/data/flax (tests/flax/gen_flax.py --data): ok-* clean in both profiles, bad-<code>-*
 * carrying <code>. */
START_TEST(test_data_fixtures)
{
    static const struct {
        const char *file;
        stg_code code;
    } rows[] = {{"tests/data/flax/ok-train_state.msgpack", (stg_code)0},
                {"tests/data/flax/bad-flax_size_mismatch.msgpack", STG_FLAX_SIZE_MISMATCH}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t len;
        uint8_t *buf = tu_read_file(tu_src(rows[i].file), &len);
        ck_assert_ptr_nonnull(buf);
        mb b = {buf, len, len};
        for (int p = 0; p < 2; p++) {
            stg_report *r = check_named(&b, rows[i].file, (stg_profile)p);
            if (rows[i].code == 0) {
                ck_assert_msg(stg_report_count(r) == 0, "%s: %s", rows[i].file, tu_describe(r));
            } else {
                ck_assert_int_ge(tu_find(r, rows[i].code), 0);
            }
            stg_report_free(r);
        }
        free(buf);
    }
}
END_TEST

/* NULL arguments, and the dtype table. */
START_TEST(test_bad_args)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_int_eq(stg_flax_check(NULL, 1, &lim, r, NULL, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_flax_check((const uint8_t *)"", 0, NULL, r, NULL, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_flax_dtype_size((const uint8_t *)"float3", 6), 0);
    ck_assert_int_eq(stg_flax_dtype_size((const uint8_t *)"float32", 7), 4);
    stg_report_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("flax");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_array_ok_and_size_mismatch);
    tcase_add_test(tc, test_size_overflow);
    tcase_add_test(tc, test_dtype_unknown);
    tcase_add_test(tc, test_array_invalid);
    tcase_add_test(tc, test_ext_unknown);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_trailing);
    tcase_add_test(tc, test_key_duplicate);
    tcase_add_test(tc, test_chunked);
    tcase_add_test(tc, test_depth_limit);
    tcase_add_test(tc, test_count_limit);
    tcase_add_test(tc, test_reader_types);
    tcase_add_test(tc, test_recognition);
    tcase_add_test(tc, test_archive_member);
    tcase_add_test(tc, test_leaves);
    tcase_add_test(tc, test_data_fixtures);
    tcase_add_test(tc, test_bad_args);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
