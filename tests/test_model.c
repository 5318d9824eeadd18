/* Sharded models (loader/model.c): the scanner's entry for index files and stg_model_*, on real
 * folders in a temporary directory: a consistent model, a missing shard (the scan goes on), an
 * unsafe name that must never be opened, a shard's own findings carried with `member`,
 * duplicate / unlisted / total size through real shards, links leaving the scan root, and
 * reads through the logical table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/model.h"
#include "stguard/stguard.h"
#include "testutil.h"

static char *dir; /* the temporary root */
static char mdir[4096];

static void setup(void)
{
    dir = tu_tempdir();
    ck_assert_ptr_nonnull(dir);
    ck_assert_uint_lt(strlen(dir), sizeof mdir - 8);
    memcpy(mdir, dir, strlen(dir));
    memcpy(mdir + strlen(dir), "/model", 7);
    ck_assert_int_eq(mkdir(mdir, 0700), 0);
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
}

static const char *in_model(const char *name)
{
    static char p[2][8192];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", mdir, name);
    return p[k];
}

static void write_shard(const char *path, const char *hdr, const char *data, size_t dlen)
{
    size_t hl = strlen(hdr), pad = (8 - hl % 8) % 8, len;
    uint8_t *b = tu_st_file(hdr, pad, data, dlen, &len);
    ck_assert_int_eq(tu_write_file(path, b, len), 0);
    free(b);
}

#define S1 "model-00001-of-00002.safetensors"
#define S2 "model-00002-of-00002.safetensors"
#define S1_HDR                                                         \
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}," \
    "\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[8,11]}}"
#define S2_HDR "{\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}"

static void write_model(const char *index_json)
{
    write_shard(in_model(S1), S1_HDR, "AAAAAAAAbbb", 11);
    write_shard(in_model(S2), S2_HDR, "CCCCCCCC", 8);
    ck_assert_int_eq(
        tu_write_file(in_model("model.safetensors.index.json"), index_json, strlen(index_json)), 0);
}

static const char *GOOD = "{\"metadata\":{\"total_size\":19},\"weight_map\":{\"a\":\"" S1
                          "\",\"b\":\"" S1 "\",\"c\":\"" S2 "\"}}";

/* The scanner's entry: the index file's bytes plus its folder. */
static stg_report *scan_index(const char *json, const char *root)
{
    stg_scan_options opt;
    memset(&opt, 0, sizeof opt);
    stg_limits_default(&opt.limits);
    opt.root = root;
    stg_report *r = stg_report_new(&opt.limits);
    stg_index_scan_file(in_model("model.safetensors.index.json"), (const uint8_t *)json,
                        strlen(json), &opt, r);
    stg_report_finish(r);
    return r;
}

START_TEST(test_consistent_model)
{
    write_model(GOOD);
    stg_report *r = scan_index(GOOD, NULL);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS_INDEX);
    stg_report_free(r);

    for (int via_index = 0; via_index < 2; via_index++) {
        stg_model *m = NULL;
        stg_report *rep = NULL;
        const char *what = via_index ? in_model("model.safetensors.index.json") : mdir;
        ck_assert_int_eq(stg_model_open(what, NULL, &m, &rep), STG_OK);
        ck_assert_int_eq(stg_report_verdict(rep), STG_VERDICT_OK);
        ck_assert_uint_eq(stg_model_shard_count(m), 2);
        ck_assert_str_eq(stg_model_shard_name(m, 0), S1);
        ck_assert_str_eq(stg_model_shard_name(m, 1), S2);
        ck_assert_ptr_null(stg_model_shard_name(m, 2));
        ck_assert_uint_eq(stg_model_tensor_count(m), 3);
        /* shard by shard, data order inside each */
        ck_assert_mem_eq(stg_model_tensor_at(m, 0)->name, "a", 1);
        ck_assert_mem_eq(stg_model_tensor_at(m, 1)->name, "b", 1);
        ck_assert_mem_eq(stg_model_tensor_at(m, 2)->name, "c", 1);
        ck_assert_ptr_null(stg_model_tensor_at(m, 3));
        const stg_tensor *c = stg_model_tensor_find(m, "c", 1);
        ck_assert_ptr_eq(c, stg_model_tensor_at(m, 2));
        ck_assert_uint_eq(c->shard, 1);
        ck_assert_ptr_null(stg_model_tensor_find(m, "d", 1));
        uint8_t buf[8];
        ck_assert_int_eq(stg_model_read_tensor(m, c, buf, sizeof buf), STG_OK);
        ck_assert_mem_eq(buf, "CCCCCCCC", 8);
        const stg_tensor *b = stg_model_tensor_find(m, "b", 1);
        ck_assert_uint_eq(b->shard, 0);
        ck_assert_int_eq(stg_model_read_tensor(m, b, buf, 3), STG_OK);
        ck_assert_mem_eq(buf, "bbb", 3);
        ck_assert_int_eq(stg_model_read_tensor(m, b, buf, 2), STG_E_RANGE);
        stg_report_free(rep);
        stg_model_close(m);
    }
    /* a shard shrinking after open is noticed on read */
    stg_model *m = NULL;
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, NULL), STG_OK);
    ck_assert_int_eq(truncate(in_model(S2), 10), 0);
    uint8_t buf[8];
    ck_assert_int_eq(stg_model_read_tensor(m, stg_model_tensor_find(m, "c", 1), buf, 8),
                     STG_FILE_CHANGED);
    ck_assert_int_eq(stg_model_read_tensor(m, stg_model_tensor_find(m, "a", 1), buf, 8), STG_OK);
    stg_model_close(m);
}
END_TEST

/* A missing shard: index_shard_missing at the value that names it; the rest is still checked. */
START_TEST(test_missing_shard)
{
    const char *json = "{\"weight_map\":{\"a\":\"" S1 "\",\"b\":\"" S1 "\",\"c\":\"" S2
                       "\",\"ghost\":\"" S1 "\",\"z\":\"model-00003.safetensors\"}}";
    write_model(json);
    stg_report *r = scan_index(json, NULL);
    long at = tu_find(r, STG_INDEX_SHARD_MISSING);
    ck_assert_msg(at >= 0 && tu_count(r, STG_INDEX_SHARD_MISSING) == 1, "%s", tu_describe(r));
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset,
                      (uint64_t)(strstr(json, "\"model-00003") - json));
    at = tu_find(r, STG_INDEX_TENSOR_MISSING);
    ck_assert(at >= 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->tensor, "ghost");
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset,
                      (uint64_t)(strstr(json, "\"ghost") - json));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    stg_model *m = (stg_model *)1;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, &rep), STG_E_INVALID);
    ck_assert_ptr_null(m);
    ck_assert_int_ge(tu_find(rep, STG_INDEX_SHARD_MISSING), 0);
    stg_report_free(rep);
}
END_TEST

/* "../x" names a real (broken) file outside the model folder: critical, and never opened, so
 * none of that file's own findings appear. */
START_TEST(test_unsafe_never_opened)
{
    char outside[4096];
    snprintf(outside, sizeof outside, "%s/outside.safetensors", dir);
    ck_assert_int_eq(tu_write_file(outside, "\x02\0\0\0\0\0\0\0{}trailing", 18), 0);
    const char *json = "{\"weight_map\":{\"a\":\"" S1 "\",\"b\":\"" S1 "\",\"c\":\"" S2
                       "\",\"x\":\"../outside.safetensors\"}}";
    write_model(json);
    stg_report *r = scan_index(json, NULL);
    long at = tu_find(r, STG_INDEX_SHARD_PATH_UNSAFE);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_at(r, (size_t)at)->severity, STG_SEV_CRITICAL);
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset,
                      (uint64_t)(strstr(json, "\"../") - json));
    ck_assert_int_lt(tu_find(r, STG_DATA_TRAILING), 0);
    ck_assert_int_lt(tu_find(r, STG_INDEX_SHARD_MISSING), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    stg_model *m = NULL;
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, NULL), STG_E_INVALID);
}
END_TEST

/* A shard's own findings come with member = its name and offsets inside it; real shards that
 * disagree with the map give duplicate / unlisted / total size. */
START_TEST(test_shard_findings_and_consistency)
{
    const char *json = "{\"metadata\":{\"total_size\":19},\"weight_map\":{\"a\":\"" S1
                       "\",\"b\":\"" S1 "\",\"c\":\"" S2 "\"}}";
    write_model(json);
    /* shard 2 now also holds "a" and an unlisted "d", and has 2 trailing bytes */
    const char *h2 = "{\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
                     "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[8,9]},"
                     "\"d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[9,10]}}";
    write_shard(in_model(S2), h2, "CCCCCCCCadXY", 12);
    stg_report *r = scan_index(json, NULL);
    long t = tu_find(r, STG_DATA_TRAILING);
    ck_assert_msg(t >= 0, "%s", tu_describe(r));
    const stg_finding *f = stg_report_at(r, (size_t)t);
    ck_assert_str_eq(f->member, S2);
    size_t hl = strlen(h2);
    hl += (8 - hl % 8) % 8;
    ck_assert_uint_eq(f->offset, 8 + hl + 10); /* inside the shard */
    long d = tu_find(r, STG_INDEX_TENSOR_DUPLICATE);
    ck_assert(d >= 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)d)->member, S2);
    ck_assert_uint_eq(stg_report_at(r, (size_t)d)->offset,
                      8 + (uint64_t)(strstr(h2, "\"a\":") - h2));
    long u = tu_find(r, STG_INDEX_TENSOR_UNLISTED);
    ck_assert(u >= 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)u)->tensor, "d");
    ck_assert_uint_eq(stg_report_at(r, (size_t)u)->offset,
                      8 + (uint64_t)(strstr(h2, "\"d\":") - h2));
    ck_assert_int_ge(tu_find(r, STG_INDEX_TOTAL_SIZE_MISMATCH), 0); /* 21 != 19 */
    stg_report_free(r);
}
END_TEST

/* A shard that is a link leaving the scan root is skipped (not opened); inside, it is followed. */
START_TEST(test_link_outside_root)
{
    write_model(GOOD);
    char target[4096];
    snprintf(target, sizeof target, "%s/real-s2.safetensors", dir);
    ck_assert_int_eq(rename(in_model(S2), target), 0);
    ck_assert_int_eq(symlink(target, in_model(S2)), 0);
    stg_report *r = scan_index(GOOD, mdir);
    long at = tu_find(r, STG_SYMLINK_SKIPPED);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->member, S2);
    ck_assert_int_lt(tu_find(r, STG_INDEX_TENSOR_MISSING), 0); /* nothing concluded about it */
    stg_report_free(r);
    r = scan_index(GOOD, dir); /* root above both: followed */
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
}
END_TEST

START_TEST(test_bad_args_and_bad_index)
{
    stg_model *m = NULL;
    ck_assert_int_eq(stg_model_open(NULL, NULL, &m, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_model_open(mdir, NULL, NULL, NULL), STG_E_BAD_ARG);
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, &rep), STG_E_IO); /* no index there */
    ck_assert_int_ge(tu_find(rep, STG_IO_ERROR), 0);
    stg_report_free(rep);
    write_model("{\"weight_map\":[]}");
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, &rep), STG_E_INVALID);
    ck_assert_int_ge(tu_find(rep, STG_INDEX_INVALID), 0);
    stg_report_free(rep);
    ck_assert_uint_eq(stg_model_tensor_count(NULL), 0);
    stg_model_close(NULL);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_consistent_model);
    tcase_add_test(tc, test_missing_shard);
    tcase_add_test(tc, test_unsafe_never_opened);
    tcase_add_test(tc, test_shard_findings_and_consistency);
    tcase_add_test(tc, test_link_outside_root);
    tcase_add_test(tc, test_bad_args_and_bad_index);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(model_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
