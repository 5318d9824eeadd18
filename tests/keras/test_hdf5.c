/* The bounded HDF5 reader (parser/hdf5.c) and the legacy Keras rules over it
 * (validator/keras.c stg_keras_check_hdf5): files built byte by byte after the HDF5 File Format
 * Specification 3.0 (superblock version 2, a version 2 root object header; a version 0
 * superblock with a version 1 header), each hdf5_* code with a trigger (offset, both
 * profiles) and a near miss, a model_config root attribute judged by the Keras rules with its
 * offset in the file, and the labels (keras with a model_config, else hdf5). Files h5py writes
 * are checked by script_hdf5.sh. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parser/hdf5.h"
#include "stguard/stguard.h"
#include "codetest.h"
#include "testutil.h"
#include "validator/keras.h"

#define C STG_SEV_CRITICAL
#define E STG_SEV_ERROR
#define NONE TU_NONE

static void le(tu_buf *b, uint64_t v, size_t n)
{
    uint8_t x[8];
    tu_store_le(x, v, n);
    tu_buf_put(b, x, n);
}

static void set_le(tu_buf *b, size_t at, uint64_t v, size_t n)
{
    tu_store_le(b->p + at, v, n);
}

/* An attribute message, version 3: a scalar fixed-length string (null-padded). */
static void attr_v3(tu_buf *m, const char *name, const char *value)
{
    size_t nl = strlen(name) + 1, vl = strlen(value);
    le(m, 3, 1);  /* version */
    le(m, 0, 1);  /* flags */
    le(m, nl, 2); /* name size, with its NUL */
    le(m, 8, 2);  /* datatype size */
    le(m, 4, 2);  /* dataspace size */
    le(m, 0, 1);  /* name encoding: ASCII */
    tu_buf_put(m, name, nl);
    le(m, 0x13, 1); /* datatype version 1, class 3 (string) */
    le(m, 0x01, 1); /* null-padded, ASCII */
    le(m, 0, 2);
    le(m, vl, 4); /* its size */
    le(m, 2, 1);  /* dataspace version 2 */
    le(m, 0, 1);  /* rank 0 */
    le(m, 0, 1);  /* flags */
    le(m, 0, 1);  /* scalar */
    tu_buf_put(m, value, vl);
}

/* Superblock version 2 at 0 (48 bytes) and the root group's OHDR header at 48 holding the
 * attributes: the shape h5py writes with libver="latest". *value_at: where the last
 * attribute's value starts. */
static tu_buf file_v2(const char *const *names, const char *const *values, size_t n,
                      size_t *value_at)
{
    tu_buf b = {NULL, 0, 0};
    tu_buf_put(&b, STG_HDF5_MAGIC, 8);
    le(&b, 2, 1);          /* version */
    le(&b, 8, 1);          /* size of offsets */
    le(&b, 8, 1);          /* size of lengths */
    le(&b, 0, 1);          /* flags */
    le(&b, 0, 8);          /* base address */
    le(&b, UINT64_MAX, 8); /* no superblock extension */
    le(&b, 0, 8);          /* end of file: set below */
    le(&b, 48, 8);         /* root object header */
    le(&b, 0, 4);          /* checksum (not verified) */
    tu_buf_put(&b, "OHDR", 4);
    le(&b, 2, 1);    /* version */
    le(&b, 0x01, 1); /* flags: chunk 0 size in 2 bytes */
    size_t size_at = b.n;
    le(&b, 0, 2);
    size_t chunk = b.n;
    for (size_t i = 0; i < n; i++) {
        tu_buf m = {NULL, 0, 0};
        attr_v3(&m, names[i], values[i]);
        le(&b, 0x0C, 1); /* attribute message */
        le(&b, m.n, 2);
        le(&b, 0, 1);
        *value_at = b.n + m.n - strlen(values[i]);
        tu_buf_put(&b, m.p, m.n);
        free(m.p);
    }
    set_le(&b, size_at, b.n - chunk, 2);
    le(&b, 0, 4); /* checksum */
    set_le(&b, 28, b.n, 8);
    return b;
}

/* Superblock version 0 with a root symbol table entry, a version 1 object header (16-byte
 * prefix, 8-aligned messages) holding one attribute message of version 1. */
static tu_buf file_v0(const char *name, const char *value, size_t *value_at)
{
    tu_buf b = {NULL, 0, 0};
    tu_buf_put(&b, STG_HDF5_MAGIC, 8);
    le(&b, 0, 1); /* version 0 */
    le(&b, 0, 3); /* free-space, root symbol table, reserved */
    le(&b, 0, 1); /* shared header version */
    le(&b, 8, 1); /* size of offsets */
    le(&b, 8, 1); /* size of lengths */
    le(&b, 0, 1);
    le(&b, 4, 2);  /* group leaf K */
    le(&b, 16, 2); /* group internal K */
    le(&b, 0, 4);  /* consistency flags */
    le(&b, 0, 8);  /* base */
    le(&b, UINT64_MAX, 8);
    le(&b, 0, 8); /* end of file: set below (at 40) */
    le(&b, UINT64_MAX, 8);
    le(&b, 0, 8);  /* root entry: link name offset */
    le(&b, 96, 8); /* object header address */
    le(&b, 0, 4);  /* cache type */
    le(&b, 0, 4);
    tu_buf_put(&b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    ck_assert_uint_eq(b.n, 96);
    size_t nl = strlen(name) + 1, vl = strlen(value);
    size_t npad = (nl + 7) & ~(size_t)7;
    tu_buf m = {NULL, 0, 0};
    le(&m, 1, 1);
    le(&m, 0, 1);
    le(&m, nl, 2);
    le(&m, 8, 2);
    le(&m, 8, 2);
    tu_buf_put(&m, name, nl);
    tu_buf_put(&m, "\0\0\0\0\0\0\0", npad - nl);
    le(&m, 0x13, 1);
    le(&m, 0x01, 1);
    le(&m, 0, 2);
    le(&m, vl, 4);
    le(&m, 1, 1); /* dataspace version 1, rank 0 */
    le(&m, 0, 7);
    size_t value_rel = m.n;
    tu_buf_put(&m, value, vl);
    while (m.n % 8 != 0) {
        le(&m, 0, 1);
    }
    le(&b, 1, 1); /* version 1 */
    le(&b, 0, 1);
    le(&b, 1, 2);       /* one message */
    le(&b, 1, 4);       /* reference count */
    le(&b, m.n + 8, 4); /* header size */
    le(&b, 0, 4);       /* to 16 */
    le(&b, 0x0C, 2);
    le(&b, m.n, 2);
    le(&b, 0, 4);
    *value_at = b.n + value_rel;
    tu_buf_put(&b, m.p, m.n);
    free(m.p);
    set_le(&b, 40, b.n, 8);
    return b;
}

static stg_report *run_h5(const tu_buf *b, stg_profile p)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    opt.limits.profile = p;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(b->p, b->n, "model.h5", &opt, &r), STG_OK);
    return r;
}

static const char lambda_cfg[] =
    "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [{\"class_name\": \"Lambda\", "
    "\"config\": {\"function\": [\"4wE=\\n\", null, null], \"function_type\": \"lambda\"}}]}}";
static const char benign_cfg[] =
    "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [{\"class_name\": \"Dense\", "
    "\"config\": {\"units\": 2, \"activation\": \"relu\"}}]}}";

START_TEST(test_reads_model_config)
{
    const char *names[3] = {"backend", "keras_version", "model_config"};
    const char *values[3] = {"tensorflow", "2.12.0", lambda_cfg};
    size_t at;
    tu_buf b = file_v2(names, values, 3, &at);
    uint64_t rel = (uint64_t)(strstr(lambda_cfg, "{\"function\"") - lambda_cfg);
    uint64_t want = at + rel;
    tu_expect(run_h5, &b, STG_KERAS_LAMBDA, C, C, want);
    stg_report *r = run_h5(&b, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS);
    stg_report_free(r);
    stg_limits lim;
    stg_limits_default(&lim);
    r = stg_report_new(&lim);
    stg_keras_hdf5 h;
    ck_assert_int_eq(stg_keras_check_hdf5(b.p, b.n, &lim, r, &h), STG_OK);
    ck_assert(h.model_config);
    ck_assert_str_eq(h.keras_version, "2.12.0");
    ck_assert_str_eq(h.backend, "tensorflow");
    ck_assert_str_eq(h.summary.top_class, "Sequential");
    stg_report_free(r);
    free(b.p);
    /* near miss: a benign config is ok and keras */
    values[2] = benign_cfg;
    b = file_v2(names, values, 3, &at);
    tu_expect_clean(run_h5, &b);
    free(b.p);
    /* version 0 superblock, version 1 header */
    b = file_v0("model_config", lambda_cfg, &at);
    tu_expect(run_h5, &b, STG_KERAS_LAMBDA, C, C, at + rel);
    free(b.p);
    b = file_v0("model_config", benign_cfg, &at);
    tu_expect_clean(run_h5, &b);
    r = run_h5(&b, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS);
    stg_report_free(r);
    free(b.p);
    /* no model_config: an HDF5 file (weights), ok */
    b = file_v0("note", "weights only", &at);
    tu_expect_clean(run_h5, &b);
    r = run_h5(&b, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_HDF5);
    stg_report_free(r);
    free(b.p);
}
END_TEST

START_TEST(test_malformed)
{
    const char *names[1] = {"model_config"};
    const char *values[1] = {benign_cfg};
    size_t at;
    /* the declared end of file past the bytes: HDF5 refuses a truncated file */
    tu_buf b = file_v2(names, values, 1, &at);
    set_le(&b, 28, b.n + 1, 8);
    tu_expect(run_h5, &b, STG_HDF5_MALFORMED, E, E, 0);
    set_le(&b, 28, b.n, 8); /* near miss: exactly the length */
    tu_expect(run_h5, &b, STG_HDF5_MALFORMED, NONE, NONE, STG_NO_OFFSET);
    /* the root header address outside the file */
    set_le(&b, 36, b.n + 100, 8);
    tu_expect(run_h5, &b, STG_HDF5_MALFORMED, E, E, 0);
    set_le(&b, 36, 48, 8);
    /* a message size past its chunk */
    b.p[48 + 8 + 1] = 0xff;
    tu_expect(run_h5, &b, STG_HDF5_MALFORMED, E, E, 48 + 8);
    free(b.p);
    /* the root header not OHDR nor version 1 */
    b = file_v2(names, values, 1, &at);
    b.p[48] = 'X';
    tu_expect(run_h5, &b, STG_HDF5_MALFORMED, E, E, 48);
    free(b.p);
    /* an attribute whose name runs past its message */
    b = file_v2(names, values, 1, &at);
    set_le(&b, 48 + 8 + 4 + 2, 60000, 2);
    tu_expect(run_h5, &b, STG_HDF5_MALFORMED, E, E, 48 + 8 + 4);
    free(b.p);
    /* a signature with nothing after it */
    tu_buf s = {NULL, 0, 0};
    tu_buf_put(&s, STG_HDF5_MAGIC, 8);
    tu_expect(run_h5, &s, STG_HDF5_MALFORMED, E, E, 0);
    free(s.p);
}
END_TEST

START_TEST(test_unsupported)
{
    const char *names[1] = {"model_config"};
    const char *values[1] = {lambda_cfg};
    size_t at;
    tu_buf b = file_v2(names, values, 1, &at);
    b.p[8] = 4; /* superblock version 4 */
    tu_expect(run_h5, &b, STG_HDF5_UNSUPPORTED, E, E, 8);
    b.p[8] = 3; /* near miss: version 3 reads like 2 */
    tu_expect(run_h5, &b, STG_HDF5_UNSUPPORTED, NONE, NONE, STG_NO_OFFSET);
    tu_expect(run_h5, &b, STG_KERAS_LAMBDA, C, C, STG_NO_OFFSET);
    b.p[9] = 16; /* offsets of 16 bytes */
    tu_expect(run_h5, &b, STG_HDF5_UNSUPPORTED, E, E, 12);
    b.p[9] = 8;
    /* a shared attribute datatype */
    b.p[48 + 8 + 4 + 1] = 0x01;
    tu_expect(run_h5, &b, STG_HDF5_UNSUPPORTED, E, E, 48 + 8 + 4);
    free(b.p);
}
END_TEST

static void count_attr(void *arg, const stg_hdf5_attr *a)
{
    (void)a;
    (*(int *)arg)++;
}

START_TEST(test_reader_direct)
{
    const char *names[2] = {"a", "b"};
    const char *values[2] = {"x", "yy"};
    size_t at;
    tu_buf b = file_v2(names, values, 2, &at);
    stg_hdf5_file f;
    int n = 0;
    ck_assert_int_eq(stg_hdf5_read_root(b.p, b.n, &f, count_attr, &n), STG_HDF5R_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_uint_eq(f.attributes, 2);
    ck_assert_uint_eq(f.superblock_version, 2);
    ck_assert_uint_eq(f.root_header_version, 2);
    ck_assert_uint_eq(f.root_header, 48);
    /* every cut of the file fails, never reads past it (ASan), never calls it OK */
    for (size_t cut = 0; cut < b.n; cut++) {
        n = 0;
        ck_assert_int_ne(stg_hdf5_read_root(b.p, cut, &f, count_attr, &n), STG_HDF5R_OK);
    }
    /* a user block: the superblock at 512, addresses relative to it */
    tu_buf u = {NULL, 0, 0};
    for (int i = 0; i < 512; i++) {
        le(&u, 0, 1);
    }
    tu_buf_put(&u, b.p, b.n);
    uint64_t sb;
    ck_assert(stg_hdf5_find_superblock(u.p, u.n, &sb));
    ck_assert_uint_eq(sb, 512);
    n = 0;
    ck_assert_int_eq(stg_hdf5_read_root(u.p, u.n, &f, count_attr, &n), STG_HDF5R_OK);
    ck_assert_int_eq(n, 2);
    ck_assert(!stg_hdf5_find_superblock(u.p + 1, u.n - 1, &sb));
    free(u.p);
    free(b.p);
}
END_TEST

/* A user block that is a pickle: pickle.load of the file runs it, so it is scanned as one. */
START_TEST(test_user_block_pickle)
{
    const char *names[1] = {"model_config"};
    const char *values[1] = {benign_cfg};
    size_t at;
    tu_buf b = file_v2(names, values, 1, &at);
    static const uint8_t pickle[] = "\x80\x02"
                                    "cposix\nsystem\nq\x00X\x02\x00\x00\x00"
                                    "idq\x01\x85R.";
    tu_buf u = {NULL, 0, 0};
    tu_buf_put(&u, pickle, sizeof pickle - 1);
    while (u.n < 512) {
        le(&u, 0, 1);
    }
    tu_buf_put(&u, b.p, b.n);
    stg_report *r = run_h5(&u, STG_PROFILE_STRICT);
    ck_assert_msg(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS) >= 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS); /* the HDF5 part was read too */
    stg_report_free(r);
    /* near miss: a zeroed user block (h5py's) is no pickle */
    memset(u.p, 0, 512);
    r = run_h5(&u, STG_PROFILE_STRICT);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    free(u.p);
    free(b.p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hdf5");
    TCase *tc = tcase_create("hdf5");
    tcase_add_test(tc, test_reads_model_config);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_unsupported);
    tcase_add_test(tc, test_reader_direct);
    tcase_add_test(tc, test_user_block_pickle);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
