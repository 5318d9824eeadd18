/* The Flax door (loader/flax_open.c: stg_flax_open and its accessors): a valid checkpoint's
 * leaves in file order with their names, dtypes, shapes, sizes and offsets; an invalid one
 * refused with its report; the memory cap on the leaf table; NULL arguments and ranges. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"

/* {"params": {"k": f32 (2, 3), "s": int8 scalar ()}} as flax's writer packs it. */
static const uint8_t good[] = {
    0x81, 0xa6, 'p',  'a',  'r',  'a', 'm', 's', 0x82, 0xa1, 'k',  0xc7, 0x26, 0x01,
    0x93, 0x92, 0x02, 0x03, 0xa7, 'f', 'l', 'o', 'a',  't',  '3',  '2',  0xc4, 0x18,
    0,    0,    0,    0,    0,    0,   0,   0,   0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0,    0,   0,   0,   0,    0,    0xa1, 's',  0xc7, 0x0a,
    0x03, 0x93, 0x90, 0xa4, 'i',  'n', 't', '8', 0xc4, 0x01, 0x07,
};

static char *write_temp(const char *dir, const char *name, const void *buf, size_t len)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s/%s", dir, name);
    ck_assert_int_eq(tu_write_file(path, buf, len), 0);
    return path;
}

START_TEST(test_open_leaves)
{
    char *dir = tu_tempdir();
    char *path = write_temp(dir, "flax_model.msgpack", good, sizeof good);
    stg_flax *f = NULL;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_flax_open(path, NULL, &f, &rep), STG_OK);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(stg_report_verdict(rep), STG_VERDICT_OK);
    ck_assert_int_eq(stg_report_format(rep), STG_FMT_FLAX_MSGPACK);
    ck_assert_uint_eq(stg_flax_param_count(f), 2);
    stg_flax_param_info p;
    ck_assert_int_eq(stg_flax_param_at(f, 0, &p), STG_OK);
    ck_assert_uint_eq(p.struct_version, STG_STRUCT_VERSION);
    ck_assert_str_eq(p.name, "params/k");
    ck_assert_uint_eq(p.name_len, 8);
    ck_assert_uint_eq(p.dtype_len, 7);
    ck_assert(memcmp(p.dtype, "float32", 7) == 0);
    ck_assert_uint_eq(p.rank, 2);
    ck_assert_uint_eq(p.shape[0], 2);
    ck_assert_uint_eq(p.shape[1], 3);
    ck_assert_uint_eq(p.nbytes, 24);
    ck_assert_uint_eq(p.offset, 11);
    ck_assert_int_eq(p.ext, 1);
    ck_assert_int_eq(stg_flax_param_at(f, 1, &p), STG_OK);
    ck_assert_str_eq(p.name, "params/s");
    ck_assert_uint_eq(p.rank, 0);
    ck_assert_int_eq(p.ext, 3);
    ck_assert_uint_eq(p.nbytes, 1);
    ck_assert_int_eq(stg_flax_param_at(f, 2, &p), STG_E_RANGE);
    ck_assert_int_eq(stg_flax_param_at(NULL, 0, &p), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_flax_param_at(f, 0, NULL), STG_E_BAD_ARG);
    ck_assert_uint_eq(stg_flax_param_count(NULL), 0);
    stg_flax_close(f);
    stg_flax_close(NULL);
    stg_report_free(rep);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A buffer one byte short: refused (STG_E_INVALID) with the report saying why; a memory cap
 * below the leaf table: refused with limit_exceeded max_memory. */
START_TEST(test_open_refused)
{
    char *dir = tu_tempdir();
    char *path = write_temp(dir, "bad.msgpack", good, sizeof good - 1);
    stg_flax *f = (stg_flax *)1;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_flax_open(path, NULL, &f, &rep), STG_E_INVALID);
    ck_assert_ptr_null(f);
    ck_assert_int_ge(tu_find(rep, STG_FLAX_MALFORMED), 0);
    stg_report_free(rep);
    free(path);
    path = write_temp(dir, "flax_model.msgpack", good, sizeof good);
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_memory = 64; /* less than one leaf's row */
    ck_assert_int_eq(stg_flax_open(path, &lim, &f, &rep), STG_E_INVALID);
    ck_assert_ptr_null(f);
    long i = tu_find(rep, STG_LIMIT_EXCEEDED);
    ck_assert_int_ge(i, 0);
    ck_assert_str_eq(stg_report_at(rep, (size_t)i)->limit, "max_memory");
    stg_report_free(rep);
    ck_assert_int_eq(stg_flax_open(path, NULL, NULL, &rep), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_flax_open(NULL, NULL, &f, &rep), STG_E_BAD_ARG);
    free(path);
    /* a missing file */
    path = write_temp(dir, "x", "", 0);
    remove(path);
    ck_assert_int_ne(stg_flax_open(path, NULL, &f, &rep), STG_OK);
    ck_assert_ptr_null(f);
    stg_report_free(rep);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("flax_open");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_open_leaves);
    tcase_add_test(tc, test_open_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
