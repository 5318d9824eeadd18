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
        memset(buf, 0, sizeof buf);
        ck_assert_int_eq(stg_model_read_tensor_range(m, c, 6, buf, 2), STG_OK);
        ck_assert_mem_eq(buf, "CC\0", 3);
        ck_assert_int_eq(stg_model_read_tensor_range(m, c, 6, buf, 3), STG_E_RANGE);
        ck_assert_int_eq(stg_model_read_tensor_range(NULL, c, 0, buf, 1), STG_E_BAD_ARG);
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

/* The accessors accept NULL and out-of-range arguments with the documented answers. */
START_TEST(test_accessor_arguments)
{
    ck_assert_ptr_null(stg_model_tensor_at(NULL, 0));
    ck_assert_ptr_null(stg_model_tensor_find(NULL, "a", 1));
    ck_assert_uint_eq(stg_model_shard_count(NULL), 0);
    ck_assert_ptr_null(stg_model_shard_name(NULL, 0));
    uint8_t buf[8];
    ck_assert_int_eq(stg_model_read_tensor(NULL, NULL, buf, sizeof buf), STG_E_BAD_ARG);
    write_model(GOOD);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_model *m = NULL;
    ck_assert_int_eq(stg_model_open(mdir, &lim, &m, NULL), STG_OK); /* no report wanted */
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_null(stg_model_tensor_find(m, NULL, 1));
    ck_assert_ptr_null(stg_model_tensor_find(m, NULL, 0)); /* no tensor has the empty name */
    ck_assert_int_eq(stg_model_read_tensor(m, NULL, buf, sizeof buf), STG_E_BAD_ARG);
    /* a tensor that names a shard the model does not have */
    stg_tensor forged = *stg_model_tensor_at(m, 0);
    forged.shard = 2;
    ck_assert_int_eq(stg_model_read_tensor(m, &forged, buf, sizeof buf), STG_E_BAD_ARG);
    forged.shard = 0; /* a copy is not one of the model's tensors */
    ck_assert_int_eq(stg_model_read_tensor(m, &forged, buf, sizeof buf), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_model_read_tensor(m, stg_model_tensor_at(m, 0), buf, sizeof buf), STG_OK);
    ck_assert_mem_eq(buf, "AAAAAAAA", 8);
    stg_model_close(m);
}
END_TEST

/* Lookup by name over names of different lengths, prefixes of each other, an empty name
 * (compat accepts it with a warning) and a name holding NUL, spread over two shards. */
START_TEST(test_find_by_name)
{
    const char *h1 = "{\"ba\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                     "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
                     "\"abc\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]},"
                     "\"ab\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[3,4]}}";
    const char *h2 = "{\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                     "\"\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
                     "\"z\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]},"
                     "\"a\\u0000\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[3,4]},"
                     "\"aa\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[4,5]}}";
    write_shard(in_model(S1), h1, "1234", 4);
    write_shard(in_model(S2), h2, "56789", 5);
    const char *json = "{\"weight_map\":{\"ba\":\"" S1 "\",\"a\":\"" S1 "\",\"abc\":\"" S1
                       "\",\"ab\":\"" S1 "\",\"b\":\"" S2 "\",\"\":\"" S2 "\",\"z\":\"" S2
                       "\",\"a\\u0000\":\"" S2 "\",\"aa\":\"" S2 "\"}}";
    ck_assert_int_eq(tu_write_file(in_model("model.safetensors.index.json"), json, strlen(json)),
                     0);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_model *m = NULL;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_model_open(mdir, &lim, &m, &rep), STG_E_INVALID); /* strict: "" */
    ck_assert_int_ge(tu_find(rep, STG_TENSOR_NAME_INVALID), 0);
    stg_report_free(rep);
    lim.profile = STG_PROFILE_COMPAT;
    ck_assert_int_eq(stg_model_open(mdir, &lim, &m, &rep), STG_OK);
    ck_assert_int_eq(stg_report_verdict(rep), STG_VERDICT_WARN);
    stg_report_free(rep);
    static const struct {
        const char *name;
        size_t len;
        char byte;
    } want[] = {{"ba", 2, '1'}, {"a", 1, '2'}, {"abc", 3, '3'}, {"ab", 2, '4'}, {"b", 1, '5'},
                {"", 0, '6'},   {"z", 1, '7'}, {"a\0", 2, '8'}, {"aa", 2, '9'}};
    ck_assert_uint_eq(stg_model_tensor_count(m), 9);
    for (size_t i = 0; i < 9; i++) {
        const stg_tensor *t = stg_model_tensor_find(m, want[i].name, want[i].len);
        ck_assert_msg(t != NULL, "%zu", i);
        ck_assert_uint_eq(t->name_len, want[i].len);
        ck_assert(want[i].len == 0 || memcmp(t->name, want[i].name, want[i].len) == 0);
        ck_assert_ptr_eq(stg_model_tensor_at(m, i), t); /* shard by shard, data order */
        char b = 0;
        ck_assert_int_eq(stg_model_read_tensor(m, t, &b, 1), STG_OK);
        ck_assert_int_eq(b, want[i].byte);
    }
    ck_assert_ptr_eq(stg_model_tensor_find(m, NULL, 0), stg_model_tensor_find(m, "", 0));
    const char *absent[] = {"abcd", "a\0\0", "bb", "0", "zz"};
    const size_t absent_len[] = {4, 3, 2, 1, 2};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_ptr_null(stg_model_tensor_find(m, absent[i], absent_len[i]));
    }
    stg_model_close(m);
}
END_TEST

/* An empty weight_map is a model with no tensors and no shards. */
START_TEST(test_empty_map)
{
    write_model("{\"weight_map\":{}}");
    stg_model *m = NULL;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, &rep), STG_OK);
    ck_assert_uint_eq(stg_report_count(rep), 0);
    ck_assert_uint_eq(stg_model_tensor_count(m), 0);
    ck_assert_uint_eq(stg_model_shard_count(m), 0);
    ck_assert_ptr_null(stg_model_tensor_at(m, 0));
    ck_assert_ptr_null(stg_model_tensor_find(m, "a", 1));
    ck_assert_ptr_null(stg_model_shard_name(m, 0));
    stg_report_free(rep);
    stg_model_close(m);
}
END_TEST

/* The index named without a folder is looked up, with its shards, in the working directory. */
START_TEST(test_relative_index_path)
{
    write_model(GOOD);
    char cwd[4096];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(mdir), 0);
    stg_model *m = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_model_open("model.safetensors.index.json", NULL, &m, &rep);
    stg_report *r = stg_report_new(NULL);
    stg_index_scan_file("model.safetensors.index.json", (const uint8_t *)GOOD, strlen(GOOD), NULL,
                        r);
    stg_report_finish(r);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_int_eq(st, STG_OK);
    ck_assert_str_eq(stg_report_path(rep), "model.safetensors.index.json");
    ck_assert_uint_eq(stg_report_size(rep), strlen(GOOD));
    ck_assert_uint_eq(stg_model_tensor_count(m), 3);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS_INDEX);
    stg_report_free(r);
    stg_report_free(rep);
    stg_model_close(m);
}
END_TEST

/* Shards are looked up in the index's folder: in the file system root that is "/" (not "");
 * under a path whose folder is a file there are none. */
START_TEST(test_index_in_fs_root)
{
    /* an index path whose folder is a file: its shards do not exist (ENOTDIR) */
    ck_assert_int_eq(tu_write_file(in_model("plain"), "x", 1), 0);
    stg_report *rn = stg_report_new(NULL);
    stg_index_scan_file(in_model("plain/model.safetensors.index.json"), (const uint8_t *)GOOD,
                        strlen(GOOD), NULL, rn);
    stg_report_finish(rn);
    ck_assert_msg(tu_count(rn, STG_INDEX_SHARD_MISSING) == 2 && stg_report_count(rn) == 2, "%s",
                  tu_describe(rn));
    stg_report_free(rn);
    const char *json = "{\"weight_map\":{\"a\":\"stguard-test-no-such-shard-7f3e.safetensors\"}}";
    stg_report *r = stg_report_new(NULL);
    stg_index_scan_file("/model.safetensors.index.json", (const uint8_t *)json, strlen(json), NULL,
                        r);
    stg_report_finish(r);
    long at = tu_find(r, STG_INDEX_SHARD_MISSING);
    ck_assert_msg(at >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->member,
                     "stguard-test-no-such-shard-7f3e.safetensors");
    stg_report_free(r);
}
END_TEST

/* The index itself: missing, a folder, a FIFO (never waited on), over max_header_len. */
START_TEST(test_index_file_problems)
{
    stg_model *m = (stg_model *)1;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_model_open(in_model("nope/model.safetensors.index.json"), NULL, &m, &rep),
                     STG_E_IO);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(tu_find(rep, STG_IO_ERROR), 0);
    ck_assert_int_eq(stg_report_verdict(rep), STG_VERDICT_ERROR);
    stg_report_free(rep);

    ck_assert_int_eq(mkdir(in_model("model.safetensors.index.json"), 0700), 0);
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, &rep), STG_E_IO);
    ck_assert_int_eq(tu_find(rep, STG_IO_ERROR), 0);
    stg_report_free(rep);
    ck_assert_int_eq(rmdir(in_model("model.safetensors.index.json")), 0);

    ck_assert_int_eq(mkfifo(in_model("model.safetensors.index.json"), 0600), 0);
    ck_assert_int_eq(stg_model_open(mdir, NULL, &m, &rep), STG_E_IO);
    ck_assert_int_eq(tu_find(rep, STG_IO_ERROR), 0);
    stg_report_free(rep);
    ck_assert_int_eq(unlink(in_model("model.safetensors.index.json")), 0);

    write_model(GOOD);
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_header_len = strlen(GOOD) - 1;
    ck_assert_int_eq(stg_model_open(mdir, &lim, &m, &rep), STG_E_LIMIT);
    ck_assert_ptr_null(m);
    long at = tu_find(rep, STG_LIMIT_EXCEEDED);
    ck_assert(at >= 0);
    ck_assert_str_eq(stg_report_at(rep, (size_t)at)->limit, "max_header_len");
    stg_report_free(rep);
    lim.max_header_len = strlen(GOOD); /* at the limit */
    ck_assert_int_eq(stg_model_open(mdir, &lim, &m, &rep), STG_OK);
    ck_assert_uint_eq(stg_report_count(rep), 0);
    stg_report_free(rep);
    stg_model_close(m);
}
END_TEST

/* Shards that exist but cannot be used: a link cycle and an over-long name (io_error at the
 * value naming the shard), a folder (not_regular_file) and a broken header (its own finding):
 * all carry member = the shard, and nothing is concluded about their tensors. */
START_TEST(test_unusable_shards)
{
    char longname[301];
    memset(longname, 'n', 300);
    longname[300] = '\0';
    char json[1024];
    snprintf(json, sizeof json,
             "{\"metadata\":{\"total_size\":99},\"weight_map\":{\"a\":\"" S1 "\",\"b\":\"" S1
             "\",\"c\":\"" S2 "\",\"d\":\"loop.safetensors\",\"e\":\"%s\","
             "\"f\":\"dir.safetensors\",\"g\":\"broken.safetensors\"}}",
             longname);
    write_model(json);
    ck_assert_int_eq(symlink("loop.safetensors", in_model("loop.safetensors")), 0);
    ck_assert_int_eq(mkdir(in_model("dir.safetensors"), 0700), 0);
    ck_assert_int_eq(tu_write_file(in_model("broken.safetensors"), "\x02\0\0\0\0\0\0\0{x", 10), 0);
    stg_report *r = scan_index(json, NULL);
    ck_assert_uint_eq(tu_count(r, STG_IO_ERROR), 2);
    long at = tu_find(r, STG_IO_ERROR);
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->member, "loop.safetensors");
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset,
                      (uint64_t)(strstr(json, "\"loop") - json));
    ck_assert_str_eq(stg_report_at(r, (size_t)at + 1)->member, longname);
    ck_assert_uint_eq(stg_report_at(r, (size_t)at + 1)->offset,
                      (uint64_t)(strstr(json, "\"nnn") - json));
    at = tu_find(r, STG_NOT_REGULAR_FILE);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->member, "dir.safetensors");
    at = tu_find(r, STG_JSON_SYNTAX);
    ck_assert(at >= 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->member, "broken.safetensors");
    ck_assert_int_lt(tu_find(r, STG_INDEX_TENSOR_MISSING), 0);
    ck_assert_int_lt(tu_find(r, STG_INDEX_TOTAL_SIZE_MISMATCH), 0); /* not all shards known */
    ck_assert_int_lt(tu_find(r, STG_INDEX_SHARD_MISSING), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR); /* io_error */
    stg_report_free(r);
}
END_TEST

/* The scan root: "/" contains everything; a sibling whose name extends the root's is outside;
 * a root that does not resolve lets no shard be read. */
START_TEST(test_scan_roots)
{
    write_model(GOOD);
    char sibling[8192], target[8300];
    snprintf(sibling, sizeof sibling, "%s-2", mdir);
    ck_assert_int_eq(mkdir(sibling, 0700), 0);
    snprintf(target, sizeof target, "%s/" S2, sibling);
    ck_assert_int_eq(rename(in_model(S2), target), 0);
    ck_assert_int_eq(symlink(target, in_model(S2)), 0);
    stg_report *r = scan_index(GOOD, "/");
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    r = scan_index(GOOD, mdir);
    long at = tu_find(r, STG_SYMLINK_SKIPPED);
    ck_assert_msg(at >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->member, S2);
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset,
                      (uint64_t)(strstr(GOOD, "\"" S2) - GOOD));
    stg_report_free(r);
    /* a root that is a file contains only that file */
    r = scan_index(GOOD, in_model(S1));
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_SYMLINK_SKIPPED) == 0, "%s",
                  tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, 0)->member, S2);
    stg_report_free(r);
    /* a root that does not resolve: the shards' places cannot be established, not read */
    r = scan_index(GOOD, in_model("no-such-root"));
    ck_assert_msg(tu_count(r, STG_IO_ERROR) == 2 && stg_report_count(r) == 2, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    stg_report_free(r);
    tu_rmtree(sibling);
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
    tcase_add_test(tc, test_accessor_arguments);
    tcase_add_test(tc, test_find_by_name);
    tcase_add_test(tc, test_empty_map);
    tcase_add_test(tc, test_relative_index_path);
    tcase_add_test(tc, test_index_in_fs_root);
    tcase_add_test(tc, test_index_file_problems);
    tcase_add_test(tc, test_unusable_shards);
    tcase_add_test(tc, test_scan_roots);
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
