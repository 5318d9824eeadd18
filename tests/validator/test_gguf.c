/* GGUF reader and rules (parser/gguf.c, validator/gguf.c): for every gguf_* code and every
 * layout code GGUF reuses, an input that triggers it (severity in both profiles, byte offset)
 * and a near miss that does not; the ggml type table; the limits; the 2^32 x 2^32 x 16 wrap;
 * and the fixtures tests/fixtures/gen_gguf.py writes (tests/data/gguf: ok-* must be clean in both
 * profiles, bad-<code>-* must carry <code>). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parser/gguf.h"
#include "parser/hash.h"
#include "stguard/stguard.h"
#include "codetest.h"
#include "testutil.h"
#include "validator/gguf.h"
#include "validator/report.h"

#define E STG_SEV_ERROR
#define W STG_SEV_WARNING
#define I STG_SEV_INFO
#define NONE TU_NONE

/* ------------------------------------------------------------------------------------------ */
/* A GGUF writer for the tests (the layout of the spec; no library). */

typedef tu_buf gb;
#define put tu_buf_put

static void u32(gb *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}

static void u64(gb *b, uint64_t v)
{
    u32(b, (uint32_t)v);
    u32(b, (uint32_t)(v >> 32));
}

static void strn(gb *b, const char *s, size_t n)
{
    u64(b, n);
    put(b, s, n);
}

static void str(gb *b, const char *s)
{
    strn(b, s, strlen(s));
}

static gb head(uint32_t version, uint64_t nt, uint64_t nkv)
{
    gb b = {NULL, 0, 0};
    put(&b, "GGUF", 4);
    u32(&b, version);
    u64(&b, nt);
    u64(&b, nkv);
    return b;
}

static void kv_u32(gb *b, const char *key, uint32_t v)
{
    str(b, key);
    u32(b, STG_GGUF_UINT32);
    u32(b, v);
}

static void kv_str(gb *b, const char *key, const char *v)
{
    str(b, key);
    u32(b, STG_GGUF_STRING);
    str(b, v);
}

static void tinfo(gb *b, const char *name, uint32_t nd, const uint64_t *ne, uint32_t type,
                  uint64_t off)
{
    str(b, name);
    u32(b, nd);
    for (uint32_t i = 0; i < nd; i++) {
        u64(b, ne[i]);
    }
    u32(b, type);
    u64(b, off);
}

static void pad(gb *b, size_t align)
{
    static const uint8_t z[64] = {0};
    while (b->n % align != 0) {
        size_t k = align - b->n % align;
        put(b, z, k < sizeof z ? k : sizeof z);
    }
}

static void zeros(gb *b, size_t n)
{
    static const uint8_t z[256] = {0};
    while (n > 0) {
        size_t k = n < sizeof z ? n : sizeof z;
        put(b, z, k);
        n -= k;
    }
}

/* One F32 tensor "w" of 8 elements (32 bytes) at offset 0, with `nkv` metadata written by the
 * caller between head and tinfo: this is the shape of most near misses. */
static gb one_tensor_file(void)
{
    gb b = head(3, 1, 1);
    kv_str(&b, "general.architecture", "llama");
    uint64_t ne[1] = {8};
    tinfo(&b, "w", 1, ne, 0, 0);
    pad(&b, 32);
    zeros(&b, 32);
    return b;
}

/* ------------------------------------------------------------------------------------------ */
/* Running the check. */

static stg_report *run_lim(const gb *b, const stg_limits *lim)
{
    stg_report *r = stg_report_new(lim);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(stg_gguf_check(b->p, b->n, lim, 0, r, NULL, NULL), STG_OK);
    stg_report_finish(r);
    return r;
}

static stg_report *run(const gb *b, stg_profile p)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = p;
    return run_lim(b, &lim);
}

#define expect(b, ...) tu_expect(run, b, __VA_ARGS__)
#define expect_clean(b) tu_expect_clean(run, b)
#define expect_none(b, code) tu_expect(run, b, code, NONE, NONE, STG_NO_OFFSET)

/* The code is there with the severity of each profile (NONE: absent) and, when off is not
 * STG_NO_OFFSET, at that offset. */

/* No finding at all in either profile. */

static void expect_verdict(const gb *b, stg_verdict strict_v, stg_verdict compat_v)
{
    for (int p = 0; p < 2; p++) {
        stg_report *r = run(b, (stg_profile)p);
        ck_assert_msg(stg_report_verdict(r) == (p ? compat_v : strict_v), "%s: %s",
                      p ? "compat" : "strict", tu_describe(r));
        stg_report_free(r);
    }
}

static void set_u32(gb *b, size_t at, uint32_t v)
{
    b->p[at] = (uint8_t)v;
    b->p[at + 1] = (uint8_t)(v >> 8);
    b->p[at + 2] = (uint8_t)(v >> 16);
    b->p[at + 3] = (uint8_t)(v >> 24);
}

static void set_u64(gb *b, size_t at, uint64_t v)
{
    set_u32(b, at, (uint32_t)v);
    set_u32(b, at + 4, (uint32_t)(v >> 32));
}

/* ------------------------------------------------------------------------------------------ */
/* Header */

START_TEST(test_valid_minimal)
{
    gb b = one_tensor_file();
    expect_clean(&b);
    set_u32(&b, 4, 2); /* version 2 has the same layout */
    expect_clean(&b);
    free(b.p);
    gb z = head(3, 0, 0); /* no tensors, no metadata: a 24-byte file */
    expect_clean(&z);
    free(z.p);
}
END_TEST

START_TEST(test_header_invalid)
{
    gb b = one_tensor_file();
    b.p[3] = 'X';
    expect(&b, STG_GGUF_HEADER_INVALID, E, E, 0);
    b.p[3] = 'F';
    set_u32(&b, 4, 0);
    expect(&b, STG_GGUF_HEADER_INVALID, E, E, 4);
    set_u32(&b, 4, 4);
    expect(&b, STG_GGUF_HEADER_INVALID, E, E, 4);
    set_u32(&b, 4, 0x03000000u); /* version 3 written big-endian */
    expect(&b, STG_GGUF_HEADER_INVALID, E, E, 4);
    set_u32(&b, 4, 3);
    expect_none(&b, STG_GGUF_HEADER_INVALID);
    gb s = head(3, 0, 0);
    s.n = 20; /* the kv count is cut */
    expect(&s, STG_GGUF_HEADER_INVALID, E, E, 16);
    s.n = 6;
    expect(&s, STG_GGUF_HEADER_INVALID, E, E, 4);
    free(s.p);
    free(b.p);
}
END_TEST

START_TEST(test_version_obsolete)
{
    gb b = head(1, 0, 0);
    expect(&b, STG_GGUF_VERSION_OBSOLETE, E, E, 4);
    expect_none(&b, STG_GGUF_HEADER_INVALID);
    set_u32(&b, 4, 2);
    expect_none(&b, STG_GGUF_VERSION_OBSOLETE);
    free(b.p);
}
END_TEST

START_TEST(test_count_invalid)
{
    gb b = one_tensor_file();
    set_u64(&b, 8, (uint64_t)1 << 40);
    expect(&b, STG_GGUF_COUNT_INVALID, E, E, 8);
    set_u64(&b, 8, 1);
    set_u64(&b, 16, UINT64_MAX); /* negative as ggml's int64 */
    expect(&b, STG_GGUF_COUNT_INVALID, E, E, 16);
    set_u64(&b, 16, 1000); /* 13 bytes at least per record: 13,000 > what is left */
    expect(&b, STG_GGUF_COUNT_INVALID, E, E, 16);
    set_u64(&b, 16, 1);
    expect_none(&b, STG_GGUF_COUNT_INVALID);
    free(b.p);
    /* exactly as many minimal records as the bytes hold is not a count error */
    gb m = head(3, 0, 2);
    str(&m, "a");
    u32(&m, STG_GGUF_UINT8);
    put(&m, "\1", 1);
    str(&m, "b");
    u32(&m, STG_GGUF_UINT8);
    put(&m, "\1", 1);
    expect_clean(&m);
    free(m.p);
}
END_TEST

START_TEST(test_truncated)
{
    gb b = head(3, 0, 1);
    str(&b, "general.file_type");
    u32(&b, STG_GGUF_UINT32);
    size_t value_at = b.n;
    put(&b, "\1\0", 2); /* two of the u32's four bytes */
    /* the count check lets one 13-byte record through: the record itself is cut */
    expect(&b, STG_GGUF_TRUNCATED, E, E, value_at);
    put(&b, "\0\0", 2);
    expect_none(&b, STG_GGUF_TRUNCATED);
    free(b.p);
    /* tensor infos end, but the data section's padding and data are missing */
    gb d = head(3, 1, 0);
    uint64_t ne[1] = {8};
    tinfo(&d, "w", 1, ne, 0, 0);
    size_t infos_end = d.n;
    expect(&d, STG_GGUF_TRUNCATED, E, E, infos_end);
    /* the last tensor is whole but its padding is cut: strict warning, compat note */
    pad(&d, 32);
    zeros(&d, 30);
    expect(&d, STG_OFFSETS_OUT_OF_RANGE, E, E, STG_NO_OFFSET);
    zeros(&d, 2);
    expect_clean(&d);
    free(d.p);
    gb q = head(3, 1, 0);
    uint64_t ne3[1] = {3};
    tinfo(&q, "w", 1, ne3, 0, 0);
    pad(&q, 32);
    size_t data_at = q.n;
    zeros(&q, 12); /* 12 bytes of data, padded end 32 */
    expect(&q, STG_GGUF_TRUNCATED, W, I, data_at + 12);
    expect_verdict(&q, STG_VERDICT_WARN, STG_VERDICT_OK);
    zeros(&q, 20);
    expect_clean(&q);
    free(q.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Metadata */

START_TEST(test_string_invalid)
{
    gb b = head(3, 0, 1);
    size_t key_at = b.n;
    u64(&b, (uint64_t)1 << 40); /* a key length far past the end */
    put(&b, "general.nam_", 12);
    u32(&b, STG_GGUF_UINT8);
    put(&b, "\0", 1);
    expect(&b, STG_GGUF_STRING_INVALID, E, E, key_at);
    set_u64(&b, key_at, 12);
    expect_clean(&b);
    free(b.p);
    /* a value that is not UTF-8: strict warning, nothing in compat (ggml takes bytes) */
    gb v = head(3, 0, 1);
    str(&v, "general.name");
    u32(&v, STG_GGUF_STRING);
    size_t val_at = v.n;
    strn(&v, "a\xff", 2);
    expect(&v, STG_GGUF_STRING_INVALID, W, NONE, val_at);
    v.p[val_at + 9] = 'b';
    expect_clean(&v);
    free(v.p);
    /* inside an array of strings */
    gb a = head(3, 0, 1);
    str(&a, "tokenizer.ggml.merges");
    u32(&a, STG_GGUF_ARRAY);
    u32(&a, STG_GGUF_STRING);
    u64(&a, 2);
    str(&a, "a b");
    size_t bad_at = a.n;
    strn(&a, "\xc0\xaf", 2); /* an overlong '/' */
    expect(&a, STG_GGUF_STRING_INVALID, W, NONE, bad_at);
    free(a.p);
}
END_TEST

START_TEST(test_key_invalid)
{
    gb b = head(3, 0, 1);
    size_t at = b.n;
    str(&b, "");
    u32(&b, STG_GGUF_UINT8);
    put(&b, "\0", 1);
    expect(&b, STG_GGUF_KEY_INVALID, E, E, at); /* ggml aborts on an empty key */
    free(b.p);
    gb u = head(3, 0, 1);
    strn(&u, "gen\xff", 4);
    u32(&u, STG_GGUF_UINT8);
    put(&u, "\0", 1);
    expect(&u, STG_GGUF_KEY_INVALID, E, W, at);
    u.p[at + 8 + 3] = '\0';
    expect(&u, STG_GGUF_KEY_INVALID, E, W, at);
    u.p[at + 8 + 3] = 'e';
    expect_clean(&u);
    free(u.p);
    gb n = head(3, 0, 1);
    strn(&n, "g\xc3\xa9n", 4); /* UTF-8 but not ASCII: the spec's rule */
    u32(&n, STG_GGUF_UINT8);
    put(&n, "\0", 1);
    expect(&n, STG_GGUF_KEY_INVALID, W, NONE, at);
    free(n.p);
    /* 65,536 bytes: one past the spec's maximum; 65,535 is fine */
    char *k = malloc(65536);
    memset(k, 'k', 65536);
    gb l = head(3, 0, 1);
    strn(&l, k, 65536);
    u32(&l, STG_GGUF_UINT8);
    put(&l, "\0", 1);
    expect(&l, STG_GGUF_KEY_INVALID, E, W, at);
    free(l.p);
    gb l2 = head(3, 0, 1);
    strn(&l2, k, 65535);
    u32(&l2, STG_GGUF_UINT8);
    put(&l2, "\0", 1);
    expect_clean(&l2);
    free(l2.p);
    free(k);
}
END_TEST

START_TEST(test_key_duplicate)
{
    gb b = head(3, 0, 3);
    kv_u32(&b, "a.b", 1);
    kv_u32(&b, "a.c", 1);
    size_t at = b.n;
    kv_str(&b, "a.b", "again");
    expect(&b, STG_GGUF_KEY_DUPLICATE, E, E, at);
    b.p[at + 8 + 2] = 'd';
    expect_clean(&b);
    free(b.p);
}
END_TEST

START_TEST(test_value_type_invalid)
{
    gb b = head(3, 0, 1);
    str(&b, "x");
    size_t at = b.n;
    u32(&b, 13);
    u32(&b, 0);
    expect(&b, STG_GGUF_VALUE_TYPE_INVALID, E, E, at);
    set_u32(&b, at, STG_GGUF_UINT32);
    expect_clean(&b);
    free(b.p);
    /* an array of arrays: the spec allows it, ggml refuses it */
    gb n = head(3, 0, 1);
    str(&n, "x");
    size_t nat = n.n;
    u32(&n, STG_GGUF_ARRAY);
    u32(&n, STG_GGUF_ARRAY);
    u64(&n, 1);
    u32(&n, STG_GGUF_UINT8);
    u64(&n, 2);
    put(&n, "\1\2", 2);
    expect(&n, STG_GGUF_VALUE_TYPE_INVALID, E, E, nat);
    set_u32(&n, nat + 4, STG_GGUF_UINT8); /* now an array of 1 u8 followed by junk */
    free(n.p);
    gb a = head(3, 0, 1);
    str(&a, "x");
    u32(&a, STG_GGUF_ARRAY);
    size_t eat = a.n;
    u32(&a, 99); /* unknown element type */
    u64(&a, 1);
    put(&a, "\1", 1);
    expect(&a, STG_GGUF_VALUE_TYPE_INVALID, E, E, eat);
    set_u32(&a, eat, STG_GGUF_UINT8);
    expect_clean(&a);
    free(a.p);
}
END_TEST

START_TEST(test_array_invalid)
{
    gb b = head(3, 0, 1);
    str(&b, "x");
    u32(&b, STG_GGUF_ARRAY);
    u32(&b, STG_GGUF_UINT64);
    size_t at = b.n;
    u64(&b, (uint64_t)1 << 61); /* x 8 wraps to 0 unchecked */
    u64(&b, 7);
    expect(&b, STG_GGUF_ARRAY_INVALID, E, E, at);
    set_u64(&b, at, 1);
    expect_clean(&b);
    set_u64(&b, at, 2); /* one element too many for the 8 bytes */
    expect(&b, STG_GGUF_ARRAY_INVALID, E, E, at);
    free(b.p);
    /* strings: 8 bytes at least each */
    gb s = head(3, 0, 1);
    str(&s, "x");
    u32(&s, STG_GGUF_ARRAY);
    u32(&s, STG_GGUF_STRING);
    size_t sat = s.n;
    u64(&s, 3);
    str(&s, "");
    str(&s, "");
    expect(&s, STG_GGUF_ARRAY_INVALID, E, E, sat);
    set_u64(&s, sat, 2);
    expect_clean(&s);
    free(s.p);
}
END_TEST

START_TEST(test_metadata_type_mismatch)
{
    gb b = head(3, 0, 1);
    str(&b, "general.alignment");
    size_t at = b.n;
    u32(&b, STG_GGUF_STRING);
    str(&b, "32");
    expect(&b, STG_GGUF_METADATA_TYPE_MISMATCH, E, E, at); /* ggml asserts: the loader aborts */
    free(b.p);
    gb a = head(3, 0, 1);
    str(&a, "general.architecture");
    size_t aat = a.n;
    u32(&a, STG_GGUF_UINT32);
    u32(&a, 7);
    expect(&a, STG_GGUF_METADATA_TYPE_MISMATCH, W, W, aat);
    free(a.p);
    gb ok = head(3, 0, 2);
    kv_u32(&ok, "general.alignment", 32);
    kv_str(&ok, "general.architecture", "llama");
    expect_clean(&ok);
    free(ok.p);
    /* the vocabulary's scores shorter than its tokens */
    gb v = head(3, 0, 2);
    str(&v, "tokenizer.ggml.tokens");
    u32(&v, STG_GGUF_ARRAY);
    u32(&v, STG_GGUF_STRING);
    u64(&v, 3);
    str(&v, "a");
    str(&v, "b");
    str(&v, "c");
    str(&v, "tokenizer.ggml.scores");
    u32(&v, STG_GGUF_ARRAY);
    u32(&v, STG_GGUF_FLOAT32);
    size_t cat = v.n;
    u64(&v, 2);
    size_t vat = v.n;
    zeros(&v, 8);
    expect(&v, STG_GGUF_METADATA_TYPE_MISMATCH, E, E, vat);
    set_u64(&v, cat, 3);
    zeros(&v, 4);
    expect_clean(&v);
    free(v.p);
}
END_TEST

/* Issue 23 item 3: the vocabulary arrays with every element type and the right count. A type
 * llama.cpp's vocabulary loader casts without checking (older releases: past the array, or an
 * abort in gguf_get_arr_str) is an error in both profiles; i32 scores, which newer releases
 * take, an error in strict and a warning in compat; the declared type is clean. */
static void vocab_elem(gb *b, uint32_t etype, uint32_t i)
{
    static const uint32_t size[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (etype == STG_GGUF_STRING) {
        char t[8];
        snprintf(t, sizeof t, "t%u", i);
        str(b, t);
    } else if (etype == STG_GGUF_ARRAY) {
        u32(b, STG_GGUF_UINT8);
        u64(b, 0);
    } else {
        zeros(b, size[etype]);
    }
}

static gb vocab(const char *key, uint32_t etype)
{
    bool tokens = strcmp(key, "tokenizer.ggml.tokens") == 0;
    gb b = head(3, 0, tokens ? 1 : 2);
    if (!tokens) {
        str(&b, "tokenizer.ggml.tokens");
        u32(&b, STG_GGUF_ARRAY);
        u32(&b, STG_GGUF_STRING);
        u64(&b, 3);
        for (uint32_t i = 0; i < 3; i++) {
            vocab_elem(&b, STG_GGUF_STRING, i);
        }
    }
    str(&b, key);
    u32(&b, STG_GGUF_ARRAY);
    u32(&b, etype);
    u64(&b, 3);
    for (uint32_t i = 0; i < 3; i++) {
        vocab_elem(&b, etype, i);
    }
    return b;
}

START_TEST(test_vocabulary_types)
{
    static const struct {
        const char *key;
        uint32_t want, alt;
    } keys[] = {
        {"tokenizer.ggml.scores", STG_GGUF_FLOAT32, STG_GGUF_INT32},
        {"tokenizer.ggml.token_type", STG_GGUF_INT32, UINT32_MAX},
        {"tokenizer.ggml.tokens", STG_GGUF_STRING, UINT32_MAX},
        {"tokenizer.ggml.merges", STG_GGUF_STRING, UINT32_MAX},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        for (uint32_t e = 0; e < STG_GGUF_TYPE_COUNT; e++) {
            gb b = vocab(keys[k].key, e);
            if (e == keys[k].want) {
                expect_clean(&b);
            } else if (e == STG_GGUF_ARRAY) {
                /* arrays of arrays: refused before the key's type is looked at */
                expect(&b, STG_GGUF_VALUE_TYPE_INVALID, E, E, STG_NO_OFFSET);
            } else {
                stg_severity c = e == keys[k].alt ? W : E;
                expect(&b, STG_GGUF_METADATA_TYPE_MISMATCH, E, c, STG_NO_OFFSET);
            }
            free(b.p);
        }
    }
}
END_TEST

/* Issue 23 item 4: keys equal up to a NUL. ggml's duplicate check compares whole strings, its
 * gguf_find_key compares C strings and returns the first: the shadow wins. Invalid in both. */
START_TEST(test_key_nul_shadow)
{
    static const struct {
        const char *key;
        size_t n;
    } shadows[] = {
        {"general.alignment\0", 18},
        {"general.architecture\0", 21},
        {"tokenizer.ggml.scores\0x", 23},
    };
    for (size_t i = 0; i < sizeof shadows / sizeof shadows[0]; i++) {
        const char *real = shadows[i].key;
        gb b = head(3, 0, 2);
        strn(&b, shadows[i].key, shadows[i].n);
        u32(&b, STG_GGUF_UINT32);
        u32(&b, 64);
        size_t at = b.n;
        str(&b, real);
        u32(&b, STG_GGUF_UINT32);
        u32(&b, 32);
        expect(&b, STG_GGUF_KEY_DUPLICATE, E, E, at);
        free(b.p);
        /* near miss: the NUL key alone shadows nothing (a key_invalid, not a duplicate) */
        gb n = head(3, 0, 1);
        strn(&n, shadows[i].key, shadows[i].n);
        u32(&n, STG_GGUF_UINT32);
        u32(&n, 32);
        expect_none(&n, STG_GGUF_KEY_DUPLICATE);
        expect(&n, STG_GGUF_KEY_INVALID, E, W, 24);
        free(n.p);
    }
    /* two shadows of one key: "a\0x" and "a\0y" are both "a" to ggml */
    gb t = head(3, 0, 2);
    strn(&t, "a\0x", 3);
    u32(&t, STG_GGUF_UINT8);
    zeros(&t, 1);
    size_t at = t.n;
    strn(&t, "a\0y", 3);
    u32(&t, STG_GGUF_UINT8);
    zeros(&t, 1);
    expect(&t, STG_GGUF_KEY_DUPLICATE, E, E, at);
    free(t.p);
    /* the alignment ggml uses is the shadow's: stguard reports the same data start */
    gb d = head(3, 1, 2);
    strn(&d, "general.alignment\0", 18);
    u32(&d, STG_GGUF_UINT32);
    u32(&d, 64);
    kv_u32(&d, "general.alignment", 32);
    uint64_t ne[1] = {8};
    tinfo(&d, "w", 1, ne, 0, 0);
    size_t infos_end = d.n;
    pad(&d, 64);
    zeros(&d, 32);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_gguf_result res;
    ck_assert_int_eq(stg_gguf_check(d.p, d.n, &lim, 0, r, NULL, &res), STG_OK);
    ck_assert_uint_eq(res.alignment, 64);
    ck_assert_uint_eq(res.data_start, (infos_end + 63) / 64 * 64);
    stg_report_free(r);
    free(d.p);
}
END_TEST

/* Issue 24 item 9: the specification gives a bool the values 0 and 1 only. */
START_TEST(test_bool_value)
{
    for (uint32_t v = 0; v<256; v += v> 4 ? 50u : 1u) {
        gb b = head(3, 0, 1);
        str(&b, "tokenizer.ggml.add_bos_token");
        u32(&b, STG_GGUF_BOOL);
        size_t at = b.n;
        uint8_t x = (uint8_t)v;
        put(&b, &x, 1);
        if (v <= 1) {
            expect_clean(&b);
        } else {
            expect(&b, STG_GGUF_VALUE_TYPE_INVALID, E, E, at);
        }
        free(b.p);
    }
    /* in an array: the offset of the first bad element; near miss 1, 0, 1, 0 */
    static const char *const elems[] = {"\1\0\2\3", "\1\0\1\0"};
    for (size_t i = 0; i < 2; i++) {
        gb a = head(3, 0, 1);
        str(&a, "flags");
        u32(&a, STG_GGUF_ARRAY);
        u32(&a, STG_GGUF_BOOL);
        u64(&a, 4);
        size_t at = a.n;
        put(&a, elems[i], 4);
        if (i == 0) {
            expect(&a, STG_GGUF_VALUE_TYPE_INVALID, E, E, at + 2);
        } else {
            expect_clean(&a);
        }
        free(a.p);
    }
}
END_TEST

START_TEST(test_alignment_invalid)
{
    static const struct {
        uint32_t a;
        stg_severity s, c;
    } cases[] = {{0, E, E}, {48, E, E}, {((uint32_t)1 << 21) + 8, E, E}, {4, E, W}, {1, E, W}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb b = head(3, 0, 1);
        str(&b, "general.alignment");
        u32(&b, STG_GGUF_UINT32);
        size_t at = b.n;
        u32(&b, cases[i].a);
        expect(&b, STG_GGUF_ALIGNMENT_INVALID, cases[i].s, cases[i].c, at);
        free(b.p);
    }
    uint32_t good[] = {8, 16, 64, 4096, (uint32_t)1 << 20};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        gb b = head(3, 1, 1);
        kv_u32(&b, "general.alignment", good[i]);
        uint64_t ne[1] = {4};
        tinfo(&b, "w", 1, ne, 0, 0);
        pad(&b, good[i]);
        zeros(&b, 16);
        pad(&b, good[i]);
        expect_clean(&b);
        free(b.p);
    }
    /* no upper bound (it was 1 MiB): ggml takes any power of two (issue 23 item 5) */
    uint32_t big[] = {(uint32_t)1 << 21, (uint32_t)1 << 31};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        gb b = head(3, 0, 1);
        kv_u32(&b, "general.alignment", big[i]);
        expect_clean(&b);
        free(b.p);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Tensor infos */

static gb named(const char *name, size_t n)
{
    gb b = head(3, 1, 0);
    strn(&b, name, n);
    u32(&b, 1);
    u64(&b, 8);
    u32(&b, 0);
    u64(&b, 0);
    pad(&b, 32);
    zeros(&b, 32);
    return b;
}

START_TEST(test_tensor_name_invalid)
{
    char n64[64];
    memset(n64, 'n', sizeof n64);
    gb l = named(n64, 64);
    expect(&l, STG_GGUF_TENSOR_NAME_INVALID, E, E, 24);
    free(l.p);
    gb ok = named(n64, 63);
    expect_clean(&ok);
    free(ok.p);
    gb z = named("a\0b", 3);
    expect(&z, STG_GGUF_TENSOR_NAME_INVALID, E, E, 24);
    free(z.p);
    gb u = named("a\xff", 2);
    expect(&u, STG_GGUF_TENSOR_NAME_INVALID, E, W, 24);
    free(u.p);
    gb e = named("", 0);
    expect(&e, STG_GGUF_TENSOR_NAME_INVALID, E, W, 24);
    free(e.p);
    gb fine = named("blk.0.attn_q.weight", 19);
    expect_clean(&fine);
    free(fine.p);
}
END_TEST

START_TEST(test_tensor_duplicate)
{
    gb b = head(3, 2, 0);
    uint64_t ne[1] = {8};
    tinfo(&b, "w", 1, ne, 0, 0);
    size_t at = b.n;
    tinfo(&b, "w", 1, ne, 0, 32);
    pad(&b, 32);
    zeros(&b, 64);
    expect(&b, STG_GGUF_TENSOR_DUPLICATE, E, E, at);
    b.p[at + 8] = 'v';
    expect_clean(&b);
    free(b.p);
}
END_TEST

static gb shaped(uint32_t nd, const uint64_t *ne, uint32_t type, size_t data)
{
    gb b = head(3, 1, 0);
    tinfo(&b, "t", nd, ne, type, 0);
    pad(&b, 32);
    zeros(&b, data);
    pad(&b, 32);
    return b;
}

START_TEST(test_tensor_shape_invalid)
{
    /* dims offset: 24 + 8 + 1 (name) + 4 (n_dims) = 37 */
    uint64_t five[5] = {1, 1, 1, 1, 1};
    gb b = shaped(5, five, 0, 4);
    expect(&b, STG_GGUF_TENSOR_SHAPE_INVALID, E, E, 33);
    free(b.p);
    gb four = shaped(4, five, 0, 4);
    expect_clean(&four);
    free(four.p);
    /* the wrap ggml's loader once let through: 2^32 x 2^32 x 16 elements is 0 modulo 2^64 */
    uint64_t wrap[3] = {(uint64_t)1 << 32, (uint64_t)1 << 32, 16};
    gb w = shaped(3, wrap, 0, 0);
    expect(&w, STG_GGUF_TENSOR_SHAPE_INVALID, E, E, 37);
    expect_verdict(&w, STG_VERDICT_INVALID, STG_VERDICT_INVALID);
    free(w.p);
    uint64_t neg[2] = {(uint64_t)1 << 63, 1};
    gb n = shaped(2, neg, 24, 0);
    expect(&n, STG_GGUF_TENSOR_SHAPE_INVALID, E, E, 37);
    free(n.p);
    uint64_t zero2[2] = {4, 0};
    gb z = shaped(2, zero2, 0, 0);
    expect(&z, STG_GGUF_TENSOR_SHAPE_INVALID, E, E, 45);
    free(z.p);
    uint64_t zero1[2] = {0, 4};
    gb z1 = shaped(2, zero1, 0, 0);
    expect(&z1, STG_GGUF_TENSOR_SHAPE_INVALID, W, I, 37);
    expect_verdict(&z1, STG_VERDICT_WARN, STG_VERDICT_OK);
    free(z1.p);
    uint64_t big[2] = {(uint64_t)1 << 31, (uint64_t)1 << 31}; /* 2^62 elements: fits, but no file */
    gb bg = shaped(2, big, 24, 0);
    expect_none(&bg, STG_GGUF_TENSOR_SHAPE_INVALID);
    expect(&bg, STG_OFFSETS_OUT_OF_RANGE, E, E, STG_NO_OFFSET);
    free(bg.p);
}
END_TEST

START_TEST(test_tensor_type_invalid)
{
    uint64_t ne[1] = {64};
    uint32_t bad[] = {4, 5, 31, 32, 33, 36, 37, 38, STG_GGML_TYPE_COUNT, 0x80000000u};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gb b = shaped(1, ne, bad[i], 256);
        expect(&b, STG_GGUF_TENSOR_TYPE_INVALID, E, E, 45); /* 37 + 8: the type field */
        free(b.p);
    }
    /* Q4_0: 32 elements per 18-byte block; 33 is no whole number of blocks */
    uint64_t ne33[1] = {33};
    gb q = shaped(1, ne33, 2, 36);
    expect(&q, STG_GGUF_TENSOR_TYPE_INVALID, E, E, 37);
    free(q.p);
    gb ok = shaped(1, ne, 2, 36);
    expect_clean(&ok);
    free(ok.p);
}
END_TEST

/* Every type of the table: a tensor of two blocks is valid with exactly that many bytes. */
START_TEST(test_every_ggml_type)
{
    size_t seen = 0;
    for (uint32_t id = 0; id < STG_GGML_TYPE_COUNT; id++) {
        const stg_ggml_type_info *ti = stg_ggml_type(id);
        if (ti == NULL) {
            continue;
        }
        seen++;
        uint64_t ne[2] = {2u * ti->block, 3};
        gb b = shaped(2, ne, id, 6u * ti->bytes);
        expect_clean(&b);
        free(b.p);
        gb s = shaped(2, ne, id, 6u * ti->bytes);
        s.n = 96 + 6u * ti->bytes - 1; /* data at 96 (infos end at 65), one byte short */
        expect(&s, STG_OFFSETS_OUT_OF_RANGE, E, E, STG_NO_OFFSET);
        free(s.p);
    }
    ck_assert_uint_eq(seen, 35); /* 43 ids, 8 removed */
    ck_assert_ptr_null(stg_ggml_type(4));
    ck_assert_str_eq(stg_ggml_type(12)->name, "Q4_K");
    ck_assert_uint_eq(stg_ggml_type(14)->bytes, 210);
    ck_assert_uint_eq(stg_ggml_type(39)->block, 32);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Layout */

static gb two_tensors(uint64_t off_b, size_t data)
{
    gb b = head(3, 2, 0);
    uint64_t ne[1] = {3}; /* 12 bytes, padded to 32 */
    tinfo(&b, "a", 1, ne, 0, 0);
    tinfo(&b, "b", 1, ne, 0, off_b);
    pad(&b, 32);
    zeros(&b, data);
    return b;
}

/* offset field of tensor "b": 24 + (8+1+4+8+4+8) + (8+1+4+8+4) */
#define B_OFF_FIELD (24u + 33u + 25u)

START_TEST(test_layout)
{
    gb ok = two_tensors(32, 64);
    expect_clean(&ok);
    free(ok.p);
    gb mis = two_tensors(16, 64);
    expect(&mis, STG_TENSOR_MISALIGNED, E, E, B_OFF_FIELD);
    free(mis.p);
    gb gap = two_tensors(64, 96);
    expect(&gap, STG_DATA_GAP, E, E, 96 + 32); /* data at 96: bytes [32, 64) */
    free(gap.p);
    gb ov = two_tensors(0, 64);
    expect(&ov, STG_OFFSETS_OVERLAP, E, E, B_OFF_FIELD);
    free(ov.p);
    gb out = two_tensors(32, 40);
    expect(&out, STG_OFFSETS_OUT_OF_RANGE, E, E, B_OFF_FIELD);
    free(out.p);
    gb tr = two_tensors(32, 65);
    expect(&tr, STG_DATA_TRAILING, E, W, STG_NO_OFFSET);
    free(tr.p);
    /* no tensors: ggml's writer (gguf_write_out) pads the metadata to the alignment even so
     * (issue 23 item 5: its output was called data_trailing); past that padding is trailing */
    gb z = head(3, 0, 0);
    zeros(&z, 8);
    expect_clean(&z);
    zeros(&z, 1);
    expect(&z, STG_DATA_TRAILING, E, W, 32);
    free(z.p);
    gb z2 = head(3, 0, 0);
    zeros(&z2, 3); /* cut inside the padding: ggml reads no padding without tensors */
    expect_clean(&z2);
    free(z2.p);
    /* ggml's writer pads to 32 even when general.alignment says 8 (the key does not set its
     * context's alignment): 32 is allowed for any smaller alignment */
    gb z8 = head(3, 0, 1);
    kv_u32(&z8, "general.alignment", 8);
    pad(&z8, 32);
    expect_clean(&z8);
    zeros(&z8, 1);
    expect(&z8, STG_DATA_TRAILING, E, W, STG_NO_OFFSET);
    free(z8.p);
    gb z3 = head(3, 0, 1);
    kv_u32(&z3, "general.alignment", 64);
    pad(&z3, 64);
    expect_clean(&z3);
    zeros(&z3, 64);
    expect(&z3, STG_DATA_TRAILING, E, W, 64);
    free(z3.p);
    /* the data section starts at the aligned end of the infos: data placed unaligned */
    gb u = head(3, 1, 0);
    uint64_t ne[1] = {8};
    tinfo(&u, "w", 1, ne, 0, 0);
    zeros(&u, 32); /* no padding before the data */
    expect(&u, STG_OFFSETS_OUT_OF_RANGE, E, E, STG_NO_OFFSET);
    free(u.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Limits */

START_TEST(test_limits)
{
    gb b = two_tensors(32, 64);
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_tensors = 1;
    stg_report *r = run_lim(&b, &lim);
    const stg_finding *f = stg_report_at(r, (size_t)tu_find(r, STG_LIMIT_EXCEEDED));
    ck_assert_str_eq(f->limit, "max_tensors");
    ck_assert_uint_eq(f->offset, 8);
    stg_report_free(r);
    lim.max_tensors = 2;
    r = run_lim(&b, &lim);
    ck_assert_int_lt(tu_find(r, STG_LIMIT_EXCEEDED), 0);
    stg_report_free(r);
    lim.max_memory = 4096; /* too small for the record buffers */
    r = run_lim(&b, &lim);
    ck_assert_int_ge(tu_find(r, STG_LIMIT_EXCEEDED), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    free(b.p);
    /* metadata count past max_metadata_entries */
    gb m = head(3, 0, 2);
    kv_u32(&m, "a", 1);
    kv_u32(&m, "b", 1);
    stg_limits_default(&lim);
    lim.max_metadata_entries = 1;
    r = run_lim(&m, &lim);
    f = stg_report_at(r, (size_t)tu_find(r, STG_LIMIT_EXCEEDED));
    ck_assert_str_eq(f->limit, "max_metadata_entries");
    stg_report_free(r);
    free(m.p);
    /* nesting past the depth table: 9 levels of arrays */
    gb d = head(3, 0, 1);
    str(&d, "x");
    u32(&d, STG_GGUF_ARRAY);
    for (int i = 0; i < 8; i++) {
        u32(&d, STG_GGUF_ARRAY);
        u64(&d, 1);
    }
    u32(&d, STG_GGUF_UINT8);
    u64(&d, 0);
    stg_limits_default(&lim);
    r = run_lim(&d, &lim);
    f = stg_report_at(r, (size_t)tu_find(r, STG_LIMIT_EXCEEDED));
    ck_assert_str_eq(f->limit, "max_gguf_array_depth");
    stg_report_free(r);
    free(d.p);
}
END_TEST

/* Many distinct names stay linear (hash table), and a duplicate far apart is found. */
static gb many(int n, bool dup_last, size_t *last_at)
{
    gb b = head(3, (uint64_t)n, 0);
    char name[32];
    for (int i = 0; i < n; i++) {
        int k = snprintf(name, sizeof name, "blk.%d.w", dup_last && i == n - 1 ? 0 : i);
        *last_at = b.n;
        strn(&b, name, (size_t)k);
        u32(&b, 1);
        u64(&b, 8);
        u32(&b, 0);
        u64(&b, (uint64_t)i * 32u);
    }
    pad(&b, 32);
    zeros(&b, (size_t)n * 32u);
    return b;
}

START_TEST(test_many_tensors)
{
    size_t last = 0;
    gb b = many(20000, false, &last);
    expect_clean(&b);
    free(b.p);
    gb d = many(20000, true, &last);
    expect(&d, STG_GGUF_TENSOR_DUPLICATE, E, E, last);
    free(d.p);
}
END_TEST

/* Tensor names chosen to collide under the known default seed: the duplicate check stops at
 * the probe ceiling and fails closed (limit_exceeded hash_probe_ceiling), in bounded time; the
 * same names under a secret seed are a clean file. */
START_TEST(test_name_flood)
{
    enum { N = 1500 };
    static char names[N][24];
    tu_map_colliding_keys(STG_HASH_SEED_DEFAULT, names, N);
    gb b = head(3, N, 0);
    for (int i = 0; i < N; i++) {
        uint64_t ne[1] = {8};
        tinfo(&b, names[i], 1, ne, 0, (uint64_t)i * 32u);
    }
    pad(&b, 32);
    zeros(&b, (size_t)N * 32u);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_int_eq(stg_gguf_check(b.p, b.n, &lim, 0, r, NULL, NULL), STG_OK);
    stg_report_finish(r);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "hash_probe_ceiling");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    r = stg_report_new(&lim);
    ck_assert_int_eq(stg_gguf_check(b.p, b.n, &lim, 0x51ed270b27d9a3c5ull, r, NULL, NULL), STG_OK);
    stg_report_finish(r);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    free(b.p);
}
END_TEST

/* Every memory cap from almost nothing up: either the answer of the uncapped run, or
 * limit_exceeded (max_memory) and a verdict that is not ok. Never a different success. */
START_TEST(test_memory_caps)
{
    size_t last = 0;
    gb b = many(3000, false, &last);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *full = run_lim(&b, &lim);
    ck_assert_int_eq(stg_report_verdict(full), STG_VERDICT_OK);
    for (uint64_t cap = 1; cap < ((uint64_t)1 << 20); cap = cap * 3 / 2 + 1024) {
        lim.max_memory = cap;
        stg_report *r = run_lim(&b, &lim);
        if (stg_report_verdict(r) != STG_VERDICT_OK) {
            long at = tu_find(r, STG_LIMIT_EXCEEDED);
            ck_assert_msg(at >= 0, "cap %llu: %s", (unsigned long long)cap, tu_describe(r));
            ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_memory");
        } else {
            ck_assert_uint_eq(stg_report_count(r), stg_report_count(full));
        }
        stg_report_free(r);
    }
    stg_report_free(full);
    free(b.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Fixtures from tests/fixtures/gen_gguf.py */

START_TEST(test_fixtures)
{
    const char *dir = tu_src("tests/data/gguf");
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no %s", dir);
    struct dirent *e;
    size_t ok = 0, bad = 0;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        size_t nl = strlen(n);
        if (nl < 6 || strcmp(n + nl - 5, ".gguf") != 0) {
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        size_t len = 0;
        uint8_t *buf = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(buf);
        gb b = {buf, len, len};
        if (strncmp(n, "ok-", 3) == 0) {
            expect_clean(&b);
            ok++;
        } else if (strncmp(n, "bad-", 4) == 0) {
            /* bad-<code>[-<what>].gguf: the code's name runs to the next '-' or '.' */
            stg_code want = tu_code_by_name(n + 4, strcspn(n + 4, "-."));
            ck_assert_msg(want != 0, "%s: names no code", n);
            stg_report *r = run(&b, STG_PROFILE_STRICT);
            ck_assert_msg(tu_find(r, want) >= 0, "%s: %s", n, tu_describe(r));
            ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
            stg_report_free(r);
            bad++;
        }
        free(buf);
    }
    closedir(d);
    ck_assert_uint_ge(ok, 40);
    ck_assert_uint_ge(bad, 15);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The public door: stg_gguf_open and its accessors (loader/gguf_open.c). */

static stg_status open_bytes(const gb *b, stg_gguf **g, stg_report **rep)
{
    char *tmp = tu_tempdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/m.gguf", tmp);
    ck_assert_int_eq(tu_write_file(path, b->p, b->n), 0);
    stg_status st = stg_gguf_open(path, NULL, g, rep);
    tu_rmtree(tmp); /* the handle holds its own copy of the header */
    free(tmp);
    return st;
}

/* stg_door_of: the GGUF magic opens the GGUF door whatever the name; a .gguf name over other
 * bytes does not (the magic decides); an index name, an .onnx name; a FIFO-free missing path. */
START_TEST(test_door_of)
{
    char *tmp = tu_tempdir();
    char path[4096];
    static const struct {
        const char *name, *bytes;
        size_t n;
        stg_door want;
    } cases[] = {
        {"m.bin", "GGUF\x03\0\0\0", 8, STG_DOOR_GGUF},
        {"m.gguf", "GGUX\x03\0\0\0", 8, STG_DOOR_SAFETENSORS},
        {"model.safetensors.index.json", "{}", 2, STG_DOOR_MODEL},
        {"m.onnx", "\x08\x07", 2, STG_DOOR_ONNX},
        {"m.safetensors", "\x02\0\0\0\0\0\0\0{}", 10, STG_DOOR_SAFETENSORS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, cases[i].name);
        ck_assert_int_eq(tu_write_file(path, cases[i].bytes, cases[i].n), 0);
        stg_door d = STG_DOOR_MODEL;
        ck_assert_int_eq(stg_door_of(path, &d), STG_OK);
        ck_assert_msg(d == cases[i].want, "%s: %d", cases[i].name, (int)d);
    }
    stg_door d = STG_DOOR_GGUF;
    snprintf(path, sizeof path, "%s/missing.onnx", tmp);
    ck_assert_int_eq(stg_door_of(path, &d), STG_E_IO);
    ck_assert_int_eq(d, STG_DOOR_ONNX); /* what its name alone says */
    ck_assert_int_eq(stg_door_of(NULL, &d), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_door_of(path, NULL), STG_E_BAD_ARG);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(test_open_accessors)
{
    /* metadata of three kinds, a vocabulary array, two tensors of two types */
    gb b = head(3, 2, 4);
    kv_str(&b, "general.architecture", "llama");
    kv_u32(&b, "llama.context_length", 4096);
    str(&b, "general.alignment");
    u32(&b, STG_GGUF_UINT32);
    u32(&b, 64);
    str(&b, "tokenizer.ggml.tokens");
    u32(&b, STG_GGUF_ARRAY);
    u32(&b, STG_GGUF_STRING);
    u64(&b, 3);
    str(&b, "a");
    str(&b, "b");
    str(&b, "c");
    uint64_t ne_w[2] = {32, 2}, ne_b[1] = {8};
    tinfo(&b, "w", 2, ne_w, 8, 0); /* Q8_0: 2 rows of one 34-byte block */
    tinfo(&b, "b", 1, ne_b, 0, 128);
    pad(&b, 64);
    size_t data = b.n;
    zeros(&b, 128 + 64); /* b's 32 bytes, padded to the alignment */
    stg_gguf *g = NULL;
    stg_report *rep = NULL;
    ck_assert_int_eq(open_bytes(&b, &g, &rep), STG_OK);
    ck_assert_ptr_nonnull(g);
    ck_assert_msg(stg_report_verdict(rep) == STG_VERDICT_OK, "%s", tu_describe(rep));
    ck_assert_uint_eq(stg_gguf_version(g), 3);
    ck_assert_uint_eq(stg_gguf_alignment(g), 64);
    ck_assert_uint_eq(stg_gguf_data_start(g), data);
    ck_assert_uint_eq(stg_gguf_parameter_count(g), 64 + 8);
    ck_assert_uint_eq(stg_gguf_metadata_count(g), 4);
    stg_gguf_entry e;
    ck_assert_int_eq(stg_gguf_metadata_at(g, 0, &e), STG_OK);
    ck_assert_uint_eq(e.struct_version, STG_STRUCT_VERSION);
    ck_assert_uint_eq(e.type, STG_GGUF_STRING);
    ck_assert_uint_eq(e.str_len, 5);
    ck_assert_int_eq(memcmp(e.str, "llama", 5), 0);
    ck_assert_int_eq(stg_gguf_metadata_at(g, 1, &e), STG_OK);
    ck_assert_uint_eq(e.u64, 4096);
    ck_assert_int_eq(stg_gguf_metadata_at(g, 3, &e), STG_OK);
    ck_assert_uint_eq(e.type, STG_GGUF_ARRAY);
    ck_assert_uint_eq(e.elem_type, STG_GGUF_STRING);
    ck_assert_uint_eq(e.count, 3);
    ck_assert_int_eq(stg_gguf_metadata_at(g, 4, &e), STG_E_RANGE);
    ck_assert_uint_eq(stg_gguf_tensor_count(g), 2);
    stg_gguf_tensor_info t;
    ck_assert_int_eq(stg_gguf_tensor_at(g, 0, &t), STG_OK);
    ck_assert_str_eq(t.type_name, "Q8_0");
    ck_assert_uint_eq(t.n_dims, 2);
    ck_assert_uint_eq(t.dims[1], 2);
    ck_assert_uint_eq(t.elements, 64);
    ck_assert_uint_eq(t.begin, data);
    ck_assert_uint_eq(t.end, data + 68);
    ck_assert_int_eq(stg_gguf_tensor_at(g, 1, &t), STG_OK);
    ck_assert_uint_eq(t.begin, data + 128);
    ck_assert_uint_eq(t.end, data + 160);
    ck_assert_int_eq(stg_gguf_tensor_at(g, 2, &t), STG_E_RANGE);
    stg_gguf_close(g);
    stg_report_free(rep);
    /* near miss: the same file cut inside the last tensor is refused, nothing exposed */
    b.n = data + 159;
    ck_assert_int_eq(open_bytes(&b, &g, &rep), STG_E_INVALID);
    ck_assert_ptr_null(g);
    ck_assert_int_ge(tu_find(rep, STG_OFFSETS_OUT_OF_RANGE), 0);
    stg_report_free(rep);
    free(b.p);
    /* arguments */
    ck_assert_int_eq(stg_gguf_open(NULL, NULL, &g, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_gguf_open("x", NULL, NULL, NULL), STG_E_BAD_ARG);
    ck_assert_uint_eq(stg_gguf_tensor_count(NULL), 0);
    ck_assert_int_eq(stg_gguf_tensor_at(NULL, 0, &t), STG_E_BAD_ARG);
    stg_gguf_close(NULL);
}
END_TEST

/* stg_gguf_read_tensor: the bytes of a validated range, nothing outside it, and a file that
 * changed after it was opened is STG_FILE_CHANGED. */
START_TEST(test_read_tensor)
{
    gb b = head(3, 2, 1);
    kv_str(&b, "general.architecture", "llama");
    uint64_t ne[1] = {4};
    tinfo(&b, "a", 1, ne, 0, 0);
    tinfo(&b, "b", 1, ne, 0, 32);
    pad(&b, 32);
    for (int i = 0; i < 64; i++) {
        uint8_t v = (uint8_t)(i + 1);
        put(&b, &v, 1);
    }
    char *tmp = tu_tempdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/m.gguf", tmp);
    ck_assert_int_eq(tu_write_file(path, b.p, b.n), 0);
    stg_gguf *g = NULL;
    ck_assert_int_eq(stg_gguf_open(path, NULL, &g, NULL), STG_OK);
    uint8_t got[16];
    ck_assert_int_eq(stg_gguf_read_tensor(g, 1, 0, got, 16), STG_OK);
    ck_assert_uint_eq(got[0], 33);
    ck_assert_uint_eq(got[15], 48);
    ck_assert_int_eq(stg_gguf_read_tensor(g, 0, 4, got, 12), STG_OK);
    ck_assert_uint_eq(got[0], 5);
    /* near misses: one byte past the tensor, a tensor that is not there */
    ck_assert_int_eq(stg_gguf_read_tensor(g, 0, 4, got, 13), STG_E_RANGE);
    ck_assert_int_eq(stg_gguf_read_tensor(g, 2, 0, got, 1), STG_E_RANGE);
    ck_assert_int_eq(stg_gguf_read_tensor(g, 0, 0, NULL, 1), STG_E_BAD_ARG);
    /* the file grows after it was validated */
    ck_assert_int_eq(truncate(path, (off_t)b.n + 1), 0);
    ck_assert_int_eq(stg_gguf_read_tensor(g, 1, 0, got, 16), STG_FILE_CHANGED);
    stg_gguf_close(g);
    tu_rmtree(tmp);
    free(tmp);
    free(b.p);
}
END_TEST

/* A header past the first 1 MiB the door copies (a 200k-token vocabulary): the prefix grows until
 * the parse is whole, so the verdict is the one of a scan of the whole file. */
START_TEST(test_open_large_header)
{
    gb b = head(3, 1, 1);
    str(&b, "tokenizer.ggml.tokens");
    u32(&b, STG_GGUF_ARRAY);
    u32(&b, STG_GGUF_STRING);
    u64(&b, 200000);
    for (int i = 0; i < 200000; i++) {
        char tok[16];
        snprintf(tok, sizeof tok, "tok%06d", i);
        str(&b, tok);
    }
    uint64_t ne[1] = {8};
    tinfo(&b, "w", 1, ne, 0, 0);
    pad(&b, 32);
    size_t data = b.n;
    ck_assert_uint_gt(data, (size_t)3 << 20);
    zeros(&b, 32);
    stg_gguf *g = NULL;
    stg_report *rep = NULL;
    ck_assert_int_eq(open_bytes(&b, &g, &rep), STG_OK);
    ck_assert_uint_eq(stg_gguf_data_start(g), data);
    stg_gguf_entry e;
    ck_assert_int_eq(stg_gguf_metadata_at(g, 0, &e), STG_OK);
    ck_assert_uint_eq(e.count, 200000);
    stg_gguf_close(g);
    stg_report_free(rep);
    /* near miss: a tensor info lying past the end, 3 MiB in */
    b.n = data - 8;
    ck_assert_int_eq(open_bytes(&b, &g, &rep), STG_E_INVALID);
    ck_assert_ptr_null(g);
    ck_assert_int_ge(tu_find(rep, STG_GGUF_TRUNCATED), 0);
    stg_report_free(rep);
    free(b.p);
}
END_TEST

/* A GGUF file larger than max_inflate_bytes (a sparse 8 GiB tensor): a path scan holds only
 * its header, so it is scanned (ok), as stg_gguf_open opens it; the same header with a tensor
 * past the end of the file is invalid by path too. */
START_TEST(test_scan_large_file)
{
    for (int lie = 0; lie < 2; lie++) {
        gb b = head(3, 1, 1);
        kv_str(&b, "general.architecture", "llama");
        uint64_t ne[2] = {1u << 16, 1u << 15}; /* 2^31 F32 elements: 8 GiB */
        tinfo(&b, "w", 2, ne, 0, 0);
        pad(&b, 32);
        uint64_t end = b.n + ((uint64_t)8 << 30) - (lie ? 4096 : 0);
        char *tmp = tu_tempdir();
        char path[4096];
        snprintf(path, sizeof path, "%s/big.gguf", tmp);
        ck_assert_int_eq(tu_write_file(path, b.p, b.n), 0);
        ck_assert_int_eq(truncate(path, (off_t)end), 0);
        stg_scan_options opt;
        stg_scan_options_default(&opt);
        opt.digest = false;
        opt.limits.max_inflate_bytes = (uint64_t)1 << 30; /* far less than the file */
        stg_report *r = NULL;
        ck_assert_int_eq(stg_scan_path(path, &opt, &r), STG_OK);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_GGUF);
        if (lie) {
            ck_assert_int_ge(tu_find(r, STG_OFFSETS_OUT_OF_RANGE), 0);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
        } else {
            ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
            stg_gguf *g = NULL;
            ck_assert_int_eq(stg_gguf_open(path, NULL, &g, NULL), STG_OK);
            ck_assert_uint_eq(stg_gguf_parameter_count(g), (uint64_t)1 << 31);
            stg_gguf_close(g);
        }
        stg_report_free(r);
        tu_rmtree(tmp);
        free(tmp);
        free(b.p);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gguf");
    TCase *tc = tcase_create("gguf");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_valid_minimal);
    tcase_add_test(tc, test_open_accessors);
    tcase_add_test(tc, test_open_large_header);
    tcase_add_test(tc, test_read_tensor);
    tcase_add_test(tc, test_scan_large_file);
    tcase_add_test(tc, test_header_invalid);
    tcase_add_test(tc, test_version_obsolete);
    tcase_add_test(tc, test_count_invalid);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_string_invalid);
    tcase_add_test(tc, test_key_invalid);
    tcase_add_test(tc, test_key_duplicate);
    tcase_add_test(tc, test_value_type_invalid);
    tcase_add_test(tc, test_array_invalid);
    tcase_add_test(tc, test_metadata_type_mismatch);
    tcase_add_test(tc, test_vocabulary_types);
    tcase_add_test(tc, test_key_nul_shadow);
    tcase_add_test(tc, test_bool_value);
    tcase_add_test(tc, test_alignment_invalid);
    tcase_add_test(tc, test_tensor_name_invalid);
    tcase_add_test(tc, test_tensor_duplicate);
    tcase_add_test(tc, test_tensor_shape_invalid);
    tcase_add_test(tc, test_tensor_type_invalid);
    tcase_add_test(tc, test_every_ggml_type);
    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_many_tensors);
    tcase_add_test(tc, test_memory_caps);
    tcase_add_test(tc, test_name_flood);
    tcase_add_test(tc, test_fixtures);
    tcase_add_test(tc, test_door_of);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
