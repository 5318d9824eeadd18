/* The mmap loader (loader/mmap.c): open validates before exposing anything (same findings as
 * stg_validate_buffer), tensors in data order, lookup by exact name bytes (NUL included), the
 * safe copying read and its STG_FILE_CHANGED answers (shrunk, replaced, rewritten), the raw view,
 * metadata, and files that are not regular or not there. Everything happens in a temporary
 * folder. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stguard/stguard.h"
#include "loader/mmap.h"
#include "testutil.h"

static char *dir;

static void setup(void)
{
    dir = tu_tempdir();
    ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
}

static const char *path_in(const char *name)
{
    static char p[2][4096];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

#define HDR3                                                                  \
    "{\"__metadata__\":{\"format\":\"pt\",\"k\\u0000\":\"v\"},"               \
    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"        \
    "\"a\\u0000x\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}," \
    "\"c\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[16,16]}}"

static const char DATA3[] = "AAAAAAAABBBBBBBB";

/* A NUL in a name is a strict error (control character) and a compat warning. */
static const stg_limits *compat(void)
{
    static stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = STG_PROFILE_COMPAT;
    return &lim;
}

static const char *write_st(const char *name, const char *hdr, const void *data, size_t dlen)
{
    size_t hl = strlen(hdr), pad = (8 - (hl % 8)) % 8, len;
    uint8_t *b = tu_st_file(hdr, pad, data, dlen, &len);
    const char *p = path_in(name);
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    free(b);
    return p;
}

START_TEST(test_open_valid)
{
    const char *p = write_st("m.safetensors", HDR3, DATA3, 16);
    stg_file *f = NULL;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_file_open(p, NULL, &f, &r), STG_E_INVALID); /* strict */
    ck_assert_ptr_null(f);
    ck_assert_msg(tu_find(r, STG_TENSOR_NAME_INVALID) >= 0, "%s", tu_describe(r));
    stg_report_free(r);
    ck_assert_int_eq(stg_file_open(p, compat(), &f, &r), STG_OK);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    ck_assert_uint_eq(stg_file_tensor_count(f), 3);
    /* data order */
    ck_assert_uint_eq(stg_file_tensor_at(f, 0)->name_len, 3);
    ck_assert_mem_eq(stg_file_tensor_at(f, 0)->name, "a\0x", 3);
    ck_assert_uint_eq(stg_file_tensor_at(f, 1)->begin, 8);
    ck_assert_uint_eq(stg_file_tensor_at(f, 2)->begin, 16);
    ck_assert_ptr_null(stg_file_tensor_at(f, 3));
    /* lookup by exact bytes */
    const stg_tensor *a = stg_file_tensor_find(f, "a\0x", 3);
    ck_assert_ptr_eq(a, stg_file_tensor_at(f, 0));
    ck_assert_ptr_null(stg_file_tensor_find(f, "a", 1)); /* a prefix is not the name */
    ck_assert_ptr_null(stg_file_tensor_find(f, "a\0y", 3));
    ck_assert_ptr_null(stg_file_tensor_find(f, "", 0));
    const stg_tensor *b = stg_file_tensor_find(f, "b", 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->dtype, STG_DTYPE_F32);
    ck_assert_uint_eq(b->rank, 1);
    ck_assert_uint_eq(b->shape[0], 2);
    /* safe copy and raw view agree with the file */
    uint8_t buf[16];
    memset(buf, 0, sizeof buf);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_OK);
    ck_assert_mem_eq(buf, "BBBBBBBB", 8);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, 7), STG_E_RANGE);
    /* range reads: inside the tensor only, overflow-checked */
    memset(buf, 0, sizeof buf);
    ck_assert_int_eq(stg_file_read_tensor_range(f, b, 2, buf, 4), STG_OK);
    ck_assert_mem_eq(buf, "BBBB\0", 5);
    ck_assert_int_eq(stg_file_read_tensor_range(f, b, 8, buf, 0), STG_OK);
    ck_assert_int_eq(stg_file_read_tensor_range(f, b, 9, buf, 0), STG_E_RANGE);
    ck_assert_int_eq(stg_file_read_tensor_range(f, b, 4, buf, 5), STG_E_RANGE);
    ck_assert_int_eq(stg_file_read_tensor_range(f, b, UINT64_MAX, buf, 2), STG_E_RANGE);
    ck_assert_int_eq(stg_file_read_tensor_range(f, b, 0, NULL, 1), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_read_tensor_range(f, NULL, 0, buf, 1), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_read_tensor_range(f, a, 0, buf, 8), STG_OK);
    ck_assert_mem_eq(buf, "AAAAAAAA", 8);
    ck_assert_mem_eq(stg_file_tensor_data(f, a), "AAAAAAAA", 8);
    const stg_tensor *c = stg_file_tensor_find(f, "c", 1);
    ck_assert_int_eq(stg_file_read_tensor(f, c, NULL, 0), STG_OK); /* zero-size */
    /* header facts and metadata */
    size_t hl = strlen(HDR3);
    hl += (8 - hl % 8) % 8;
    ck_assert_uint_eq(stg_file_header_length(f), hl);
    ck_assert_uint_eq(stg_file_data_start(f), 8 + hl);
    ck_assert_uint_eq(stg_file_metadata_count(f), 2);
    const char *k, *v;
    size_t kl, vl;
    ck_assert_int_eq(stg_file_metadata_at(f, 1, &k, &kl, &v, &vl), STG_OK);
    ck_assert_uint_eq(kl, 2);
    ck_assert_mem_eq(k, "k\0", 2);
    ck_assert_uint_eq(vl, 1);
    ck_assert_int_eq(stg_file_metadata_at(f, 2, &k, &kl, &v, &vl), STG_E_RANGE);
    stg_report_free(r);

    /* a tensor of another file is refused */
    stg_file *g = NULL;
    ck_assert_int_eq(stg_file_open(p, compat(), &g, NULL), STG_OK);
    ck_assert_int_eq(stg_file_read_tensor(g, b, buf, sizeof buf), STG_E_BAD_ARG);
    ck_assert_ptr_null(stg_file_tensor_data(g, b));
    stg_file_close(g);
    stg_file_close(f);
}
END_TEST

/* Invalid files: STG_E_INVALID, no handle, the report of stg_validate_buffer. */
START_TEST(test_open_invalid_same_as_buffer)
{
    static const struct {
        const char *hdr;
        size_t dlen;
        stg_code code;
    } bad[] = {
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 1,
         STG_OFFSETS_OUT_OF_RANGE},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 3, STG_DATA_TRAILING},
        {"{\"a\":{\"dtype\":\"Q8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, STG_DTYPE_UNKNOWN},
        {"{\"a\":1,\"a\":2}", 0, STG_JSON_DUPLICATE_KEY},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len;
        uint8_t *bytes = tu_st_file(bad[i].hdr, 0, "abc", bad[i].dlen, &len);
        const char *p = path_in("bad.safetensors");
        ck_assert_int_eq(tu_write_file(p, bytes, len), 0);
        stg_file *f = (stg_file *)1;
        stg_report *r = NULL;
        ck_assert_int_eq(stg_file_open(p, NULL, &f, &r), STG_E_INVALID);
        ck_assert_ptr_null(f);
        ck_assert_msg(tu_find(r, bad[i].code) >= 0, "%zu: %s", i, tu_describe(r));
        stg_report *want = tu_validate(bytes, len, STG_PROFILE_STRICT);
        char w[8192];
        snprintf(w, sizeof w, "%s", tu_describe(want));
        ck_assert_str_eq(w, tu_describe(r));
        ck_assert_uint_eq(stg_report_size(r), len);
        stg_report_free(want);
        stg_report_free(r);
        free(bytes);
    }
    /* empty file: file_too_small */
    const char *p = path_in("empty.safetensors");
    ck_assert_int_eq(tu_write_file(p, "", 0), 0);
    stg_file *f = NULL;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_file_open(p, NULL, &f, &r), STG_E_INVALID);
    ck_assert_int_eq(tu_find(r, STG_FILE_TOO_SMALL), 0);
    stg_report_free(r);
    /* rep may be NULL */
    ck_assert_int_eq(stg_file_open(p, NULL, &f, NULL), STG_E_INVALID);
    ck_assert_int_eq(stg_file_open(p, NULL, NULL, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_open(NULL, NULL, &f, NULL), STG_E_BAD_ARG);
}
END_TEST

START_TEST(test_open_missing_and_fifo)
{
    stg_file *f = NULL;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_file_open(path_in("nope"), NULL, &f, &r), STG_E_IO);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(tu_find(r, STG_IO_ERROR), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    stg_report_free(r);
    const char *fifo = path_in("fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(stg_file_open(fifo, NULL, &f, &r), STG_E_IO); /* must not block */
    ck_assert_int_eq(tu_find(r, STG_NOT_REGULAR_FILE), 0);
    stg_report_free(r);
    ck_assert_int_eq(stg_file_open(dir, NULL, &f, &r), STG_E_IO); /* a directory */
    ck_assert_int_eq(tu_find(r, STG_NOT_REGULAR_FILE), 0);
    stg_report_free(r);
}
END_TEST

/* The file shrinks after open: the safe path says STG_FILE_CHANGED (and never touches the
 * mapping, so no SIGBUS). */
START_TEST(test_truncated_after_open)
{
    const char *p = write_st("t.safetensors", HDR3, DATA3, 16);
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open(p, compat(), &f, NULL), STG_OK);
    const stg_tensor *b = stg_file_tensor_find(f, "b", 1);
    uint8_t buf[8];
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_OK);
    ck_assert_int_eq(truncate(p, 20), 0);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_FILE_CHANGED);
    ck_assert_int_eq(stg_file_read_tensor(f, stg_file_tensor_find(f, "a\0x", 3), buf, 8),
                     STG_FILE_CHANGED);
    stg_file_close(f);
}
END_TEST

/* Same size but rewritten (modification time moves), or another file renamed over the path. */
START_TEST(test_rewritten_or_replaced)
{
    const char *p = write_st("r.safetensors", HDR3, DATA3, 16);
    char keep[4096];
    snprintf(keep, sizeof keep, "%s", p);
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open(keep, compat(), &f, NULL), STG_OK);
    const stg_tensor *b = stg_file_tensor_find(f, "b", 1);
    uint8_t buf[8];
    struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, keep, ts, 0), 0);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_FILE_CHANGED);
    stg_file_close(f);

    ck_assert_int_eq(stg_file_open(keep, compat(), &f, NULL), STG_OK);
    b = stg_file_tensor_find(f, "b", 1);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_OK);
    const char *other = write_st("other.safetensors", HDR3, DATA3, 16);
    ck_assert_int_eq(rename(other, keep), 0);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_FILE_CHANGED);
    stg_file_close(f);
}
END_TEST

/* Many names: every one is found, near misses are not. */
START_TEST(test_find_many)
{
    const size_t n = 2000;
    size_t cap = n * 90 + 16, hl = 0;
    char *hdr = malloc(cap);
    hl += (size_t)snprintf(hdr, cap, "{");
    for (size_t i = 0; i < n; i++) {
        size_t t = (i * 7919) % n;
        hl += (size_t)snprintf(
            hdr + hl, cap - hl,
            "%s\"w%zu\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%zu,%zu]}",
            i == 0 ? "" : ",", t, t, t + 1);
    }
    snprintf(hdr + hl, cap - hl, "}");
    uint8_t *data = calloc(1, n);
    const char *p = write_st("many.safetensors", hdr, data, n);
    stg_file *f = NULL;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_file_open(p, NULL, &f, &r), STG_OK);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        int l = snprintf(name, sizeof name, "w%zu", i);
        const stg_tensor *t = stg_file_tensor_find(f, name, (size_t)l);
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_eq(t->begin, i);
        ck_assert_ptr_eq(stg_file_tensor_at(f, i), t);
        name[l] = 'x';
        ck_assert_ptr_null(stg_file_tensor_find(f, name, (size_t)l + 1));
    }
    stg_report_free(r);
    stg_file_close(f);
    free(data);
    free(hdr);
}
END_TEST

/* Every accessor's answer to NULL, out-of-range and foreign arguments. */
START_TEST(test_accessor_edges)
{
    const char *p = write_st("e.safetensors", HDR3, DATA3, 16);
    stg_file *f = NULL;
    stg_report *r = (stg_report *)&f; /* must be reset */
    ck_assert_int_eq(stg_file_open(p, NULL, NULL, &r), STG_E_BAD_ARG);
    ck_assert_ptr_null(r);
    f = (stg_file *)&r;
    ck_assert_int_eq(stg_file_open(NULL, NULL, &f, NULL), STG_E_BAD_ARG);
    ck_assert_ptr_null(f);
    /* no report asked for: the status alone */
    ck_assert_int_eq(stg_file_open(p, NULL, &f, NULL), STG_E_INVALID); /* strict: NUL in name */
    ck_assert_ptr_null(f);
    ck_assert_int_eq(stg_file_open(p, compat(), &f, NULL), STG_OK);
    ck_assert_ptr_nonnull(f);

    ck_assert_uint_eq(stg_file_tensor_count(NULL), 0);
    ck_assert_ptr_null(stg_file_tensor_at(NULL, 0));
    ck_assert_ptr_null(stg_file_tensor_at(f, 3));
    ck_assert_ptr_null(stg_file_tensor_find(NULL, "b", 1));
    ck_assert_ptr_null(stg_file_tensor_find(f, NULL, 1));
    /* names that sort before, between and after the three present ("a\0x", "b", "c") */
    ck_assert_ptr_null(stg_file_tensor_find(f, NULL, 0)); /* the empty name */
    ck_assert_ptr_null(stg_file_tensor_find(f, "a", 1));
    ck_assert_ptr_null(stg_file_tensor_find(f, "a\0", 2));
    ck_assert_ptr_null(stg_file_tensor_find(f, "a\0xy", 4));
    ck_assert_ptr_null(stg_file_tensor_find(f, "bb", 2));
    ck_assert_ptr_null(stg_file_tensor_find(f, "d", 1));
    ck_assert_ptr_nonnull(stg_file_tensor_find(f, "c", 1));

    const stg_tensor *b = stg_file_tensor_find(f, "b", 1);
    const stg_tensor *c = stg_file_tensor_find(f, "c", 1); /* zero-size */
    uint8_t buf[16];
    ck_assert_int_eq(stg_file_read_tensor(NULL, b, buf, sizeof buf), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_read_tensor(f, NULL, buf, sizeof buf), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_read_tensor(f, b, NULL, 8), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, 7), STG_E_RANGE);
    ck_assert_int_eq(stg_file_read_tensor(f, c, NULL, 0), STG_OK);
    /* a copy of a tensor, a pointer into the middle of one, one before the table */
    stg_tensor copy = *b;
    ck_assert_int_eq(stg_file_read_tensor(f, &copy, buf, sizeof buf), STG_E_BAD_ARG);
    const stg_tensor *inside = (const stg_tensor *)(const void *)((const char *)b + 1);
    ck_assert_int_eq(stg_file_read_tensor(f, inside, buf, sizeof buf), STG_E_BAD_ARG);
    const stg_tensor *t0 = stg_file_tensor_at(f, 0);
    const stg_tensor *before = (const stg_tensor *)(const void *)((const char *)t0 - 64);
    ck_assert_int_eq(stg_file_read_tensor(f, before, buf, sizeof buf), STG_E_BAD_ARG);
    ck_assert_ptr_null(stg_file_tensor_data(f, &copy));
    ck_assert_ptr_null(stg_file_tensor_data(NULL, b));
    const uint8_t *view = stg_file_tensor_data(f, b);
    ck_assert_ptr_nonnull(view);
    ck_assert(memcmp(view, "BBBBBBBB", 8) == 0);

    ck_assert_uint_eq(stg_file_header_length(NULL), 0);
    ck_assert_uint_eq(stg_file_data_start(NULL), 0);
    ck_assert_uint_eq(stg_file_data_start(f), 8 + stg_file_header_length(f));
    ck_assert_uint_eq(stg_file_metadata_count(NULL), 0);
    ck_assert_uint_eq(stg_file_metadata_count(f), 2);
    const char *k, *v;
    size_t kl, vl;
    ck_assert_int_eq(stg_file_metadata_at(NULL, 0, &k, &kl, &v, &vl), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_metadata_at(f, 0, NULL, &kl, &v, &vl), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_metadata_at(f, 0, &k, NULL, &v, &vl), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_metadata_at(f, 0, &k, &kl, NULL, &vl), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_metadata_at(f, 0, &k, &kl, &v, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_file_metadata_at(f, 2, &k, &kl, &v, &vl), STG_E_RANGE);
    ck_assert_int_eq(stg_file_metadata_at(f, 1, &k, &kl, &v, &vl), STG_OK);
    stg_file_close(f);
    stg_file_close(NULL);

    /* A file without tensors: nothing of another file's is its own. */
    const char *empty = write_st("empty.safetensors", "{}", NULL, 0);
    stg_file *g = NULL;
    ck_assert_int_eq(stg_file_open(empty, NULL, &g, NULL), STG_OK);
    ck_assert_uint_eq(stg_file_tensor_count(g), 0);
    ck_assert_ptr_null(stg_file_tensor_find(g, "b", 1));
    ck_assert_int_eq(stg_file_open(p, compat(), &f, NULL), STG_OK);
    b = stg_file_tensor_find(f, "b", 1);
    ck_assert_int_eq(stg_file_read_tensor(g, b, buf, sizeof buf), STG_E_BAD_ARG);
    ck_assert_ptr_null(stg_file_tensor_data(g, b));
    stg_file_close(f);
    stg_file_close(g);
}
END_TEST

/* The internal opener hands out the file whatever the findings (loader/model.c decides what to
 * expose): on a file whose header did not parse, the accessors expose nothing. */
START_TEST(test_open_report_unparsed_header)
{
    const char *p = write_st("bad.safetensors", "{\"a\":{\"dtype\":\"U8\"}}   ", "x", 1);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open_report(p, &lim, r, &f), STG_OK);
    ck_assert_ptr_nonnull(f);
    ck_assert(!f->h.schema_ok);
    ck_assert_int_ge(tu_find(r, STG_TENSOR_INFO_INVALID), 0);
    ck_assert_uint_eq(stg_file_tensor_count(f), 0);
    ck_assert_ptr_null(stg_file_tensor_at(f, 0));
    ck_assert_ptr_null(stg_file_tensor_find(f, "a", 1));
    ck_assert_uint_eq(stg_file_metadata_count(f), 0);
    const char *k, *v;
    size_t kl, vl;
    ck_assert_int_eq(stg_file_metadata_at(f, 0, &k, &kl, &v, &vl), STG_E_RANGE);
    /* no table, so no tensor is its own: not even one at the table's address */
    const stg_tensor *t = (const stg_tensor *)(const void *)f->h.tensors;
    stg_tensor any;
    memset(&any, 0, sizeof any);
    uint8_t buf[8];
    ck_assert_int_eq(stg_file_read_tensor(f, t != NULL ? t : &any, buf, sizeof buf), STG_E_BAD_ARG);
    ck_assert_ptr_null(stg_file_tensor_data(f, &any));
    ck_assert(stg_file_unchanged(f));
    stg_file_close(f);
    stg_report_free(r);
}
END_TEST

/* Identity checks of the safe path: a modification time that moves by one nanosecond only,
 * and a path that no longer exists. */
START_TEST(test_changed_nanoseconds_and_unlinked)
{
    const char *p = write_st("n.safetensors", HDR3, DATA3, 16);
    char keep[4096];
    snprintf(keep, sizeof keep, "%s", p);
    struct timespec ts[2] = {{0, UTIME_OMIT}, {1700000000, 5000}};
    ck_assert_int_eq(utimensat(AT_FDCWD, keep, ts, 0), 0);
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open(keep, compat(), &f, NULL), STG_OK);
    const stg_tensor *b = stg_file_tensor_find(f, "b", 1);
    uint8_t buf[8];
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_OK);
    ts[1].tv_nsec = 5001;
    ck_assert_int_eq(utimensat(AT_FDCWD, keep, ts, 0), 0);
    struct stat st;
    ck_assert_int_eq(stat(keep, &st), 0);
    if (st.st_mtim.tv_nsec == 5001) { /* the file system keeps nanoseconds */
        ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_FILE_CHANGED);
        ck_assert(!stg_file_unchanged(f));
    }
    stg_file_close(f);
    ck_assert_int_eq(stg_file_open(keep, compat(), &f, NULL), STG_OK);
    b = stg_file_tensor_find(f, "b", 1);
    ck_assert_int_eq(unlink(keep), 0);
    ck_assert_int_eq(stg_file_read_tensor(f, b, buf, sizeof buf), STG_FILE_CHANGED);
    /* the raw view still shows the validated bytes: the descriptor keeps the inode */
    ck_assert(memcmp(stg_file_tensor_data(f, b), "BBBBBBBB", 8) == 0);
    stg_file_close(f);
}
END_TEST

/* Files whose size says more than they hold: sysfs attributes report 4,096 bytes and give a
 * few. Fewer than 8 readable bytes is a file that changed under us (file_changed, verdict
 * error); one that holds more and cannot be mapped is io_error. Skipped where sysfs is not. */
static const char *sysfs_attr(bool short_content)
{
    static const char *const cands[] = {
        "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag",
        "/sys/kernel/mm/transparent_hugepage/use_zero_page",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/kernel/mm/transparent_hugepage/defrag",
        "/sys/kernel/profiling",
        "/sys/power/state",
    };
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        struct stat st;
        if (stat(cands[i], &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4096) {
            continue;
        }
        int fd = open(cands[i], O_RDONLY);
        if (fd < 0) {
            continue;
        }
        char b[64];
        ssize_t got = read(fd, b, sizeof b);
        close(fd);
        if (got > 0 && (short_content ? got < 8 : got >= 8)) {
            return cands[i];
        }
    }
    return NULL;
}

START_TEST(test_size_says_more_than_content)
{
    const char *p = sysfs_attr(true);
    if (p != NULL) {
        stg_file *f = NULL;
        stg_report *r = NULL;
        ck_assert_int_eq(stg_file_open(p, NULL, &f, &r), STG_FILE_CHANGED);
        ck_assert_ptr_null(f);
        ck_assert_int_eq(tu_find(r, STG_FILE_CHANGED_CODE), 0);
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
        stg_report_free(r);
    } else {
        fprintf(stderr, "test_size_says_more_than_content: no short sysfs attribute, skipped\n");
    }
    p = sysfs_attr(false);
    if (p != NULL) {
        stg_file *f = NULL;
        stg_report *r = NULL;
        stg_status st = stg_file_open(p, NULL, &f, &r);
        ck_assert_ptr_null(f);
        /* text is no header: header_too_large, then the polyglot image's pread ends before
         * the size fstat gave (file_changed), the mapping is refused, or, where sysfs maps and
         * reads whole, the file is simply invalid */
        ck_assert_int_ge(tu_find(r, STG_HEADER_TOO_LARGE), 0);
        if (st == STG_FILE_CHANGED) {
            ck_assert_int_ge(tu_find(r, STG_FILE_CHANGED_CODE), 0);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
        } else if (st == STG_E_IO) {
            ck_assert_int_ge(tu_find(r, STG_IO_ERROR), 0);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
        } else {
            ck_assert_int_eq(st, STG_E_INVALID);
        }
        stg_report_free(r);
    }
}
END_TEST

/* Truncated under the mapping: the safe path answers STG_FILE_CHANGED; the raw view is what
 * stguard.h documents, a page past the new end faults with SIGBUS (checked in a child, with
 * the default action, since the library installs no handler). */
START_TEST(test_raw_view_after_truncation)
{
    static const char hdr[] = "{\"w\":{\"dtype\":\"U8\",\"shape\":[12288],"
                              "\"data_offsets\":[0,12288]}}";
    uint8_t *data = malloc(12288);
    memset(data, 'w', 12288);
    const char *p = write_st("big.safetensors", hdr, data, 12288);
    free(data);
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open(p, NULL, &f, NULL), STG_OK);
    const stg_tensor *w = stg_file_tensor_find(f, "w", 1);
    const void *raw = stg_file_tensor_data(f, w);
    ck_assert_ptr_nonnull(raw);
    const volatile uint8_t *view = raw;
    ck_assert_uint_eq(view[12287], 'w');
    ck_assert_int_eq(truncate(p, 100), 0);
    uint8_t *buf = malloc(12288);
    ck_assert_int_eq(stg_file_read_tensor(f, w, buf, 12288), STG_FILE_CHANGED);
    ck_assert(!stg_file_unchanged(f));
    free(buf);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGBUS, SIG_DFL);
        uint8_t x = view[12287]; /* two pages past the new end of the file */
        _exit(x == 'w' ? 3 : 4);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS, "child status %d", status);
    stg_file_close(f);
}
END_TEST

static Suite *mmap_suite(void)
{
    Suite *s = suite_create("mmap");
    TCase *tc = tcase_create("mmap");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_open_valid);
    tcase_add_test(tc, test_open_invalid_same_as_buffer);
    tcase_add_test(tc, test_open_missing_and_fifo);
    tcase_add_test(tc, test_truncated_after_open);
    tcase_add_test(tc, test_rewritten_or_replaced);
    tcase_add_test(tc, test_find_many);
    tcase_add_test(tc, test_accessor_edges);
    tcase_add_test(tc, test_open_report_unparsed_header);
    tcase_add_test(tc, test_changed_nanoseconds_and_unlinked);
    tcase_add_test(tc, test_size_says_more_than_content);
    tcase_add_test(tc, test_raw_view_after_truncation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(mmap_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
