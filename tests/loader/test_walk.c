/* The tree walk (loader/walk.c) on real trees in a temporary directory: argument checks, many
 * files and hard links (each distinct file read once, whatever -j is), hidden files, deep
 * nesting, a trailing slash, glob matching on the base name, links to folders already walked,
 * a link given as the argument, links to specials, sockets and devices, the root-prefix trap,
 * over-long arguments, a Hugging Face blob no snapshot links to, and progress calls. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "loader/scan.h"
#include "testutil.h"

#define MAX_RECORDS 256

typedef struct rec {
    char path[1024];
    char blob[1024];
    char sha[65];
    stg_verdict verdict;
    char findings[512];
    char message[256]; /* the first finding's message */
} rec;

typedef struct collected {
    rec r[MAX_RECORDS];
    size_t count;
} collected;

static void collect(void *user, const stg_report *r)
{
    collected *c = user;
    ck_assert_uint_lt(c->count, MAX_RECORDS);
    rec *x = &c->r[c->count++];
    snprintf(x->path, sizeof x->path, "%s", stg_report_path(r));
    snprintf(x->blob, sizeof x->blob, "%s", stg_report_blob(r) != NULL ? stg_report_blob(r) : "");
    snprintf(x->sha, sizeof x->sha, "%s", stg_report_sha256(r) != NULL ? stg_report_sha256(r) : "");
    x->verdict = stg_report_verdict(r);
    snprintf(x->findings, sizeof x->findings, "%s", tu_describe(r));
    snprintf(x->message, sizeof x->message, "%s",
             stg_report_count(r) > 0 ? stg_report_at(r, 0)->message : "");
}

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

/* dir + "/" + rel, in one of a few rotating static buffers. */
static const char *at(const char *rel)
{
    static char p[8][4096];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, rel);
    return p[k];
}

static void put(const char *rel, const char *content)
{
    ck_assert_int_eq(tu_write_file(at(rel), content, strlen(content)), 0);
}

static const rec *find_rec(const collected *c, const char *suffix)
{
    size_t sl = strlen(suffix);
    for (size_t i = 0; i < c->count; i++) {
        size_t pl = strlen(c->r[i].path);
        if (pl >= sl && strcmp(c->r[i].path + pl - sl, suffix) == 0) {
            return &c->r[i];
        }
    }
    return NULL;
}

/* The record that must be there (the test fails here when it is not). */
static const rec *must_rec(const collected *c, const char *suffix)
{
    const rec *r = find_rec(c, suffix);
    ck_assert_msg(r != NULL, "no record ends with %s", suffix);
    return r;
}

static stg_status walk1(const char *path, const stg_walk_options *wo, collected *c,
                        stg_walk_result *res)
{
    const char *paths[] = {path};
    memset(c, 0, sizeof *c);
    return stg_walk(paths, 1, wo, collect, NULL, c, res);
}

static collected col; /* large: kept off the stack */

START_TEST(test_bad_arguments)
{
    put("a.txt", "abc");
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    ck_assert_uint_eq(wo.threads, 1);
    ck_assert_uint_eq(wo.progress_ms, 250);
    ck_assert(wo.scan.digest);
    const char *paths[] = {at("a.txt")};
    memset(&col, 0, sizeof col);
    ck_assert_int_eq(stg_walk(NULL, 1, &wo, collect, NULL, &col, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_walk(paths, 1, NULL, collect, NULL, &col, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_walk(paths, 1, &wo, NULL, NULL, &col, NULL), STG_E_BAD_ARG);
    wo.threads = STG_WALK_MAX_THREADS + 1;
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &col, NULL), STG_E_BAD_ARG);
    /* the maximum itself is fine (capped by the number of files) */
    wo.threads = STG_WALK_MAX_THREADS;
    stg_walk_result res;
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_uint_eq(res.files, 1);
    ck_assert_uint_eq(res.bytes, 3);
    wo.threads = 1;
    /* an expected digest that is not 64 hex digits */
    wo.scan.expected_sha256 = "123";
    memset(&col, 0, sizeof col);
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &col, NULL), STG_E_BAD_ARG);
    wo.scan.expected_sha256 = NULL;
    /* a NULL path among valid ones: nothing is handed out */
    const char *with_null[] = {at("a.txt"), NULL};
    ck_assert_int_eq(stg_walk(with_null, 2, &wo, collect, NULL, &col, NULL), STG_E_BAD_ARG);
    ck_assert_uint_eq(col.count, 0);
}
END_TEST

/* 100 files, a file with 40 hard links and a hidden file: sorted by bytes, every distinct file
 * read once, hard links share one result; the same records with 0 (= 1) and 3 threads. */
START_TEST(test_many_files_and_hard_links)
{
    ck_assert_int_eq(mkdir(at("t"), 0700), 0);
    char rel[64], body[64];
    for (int i = 0; i < 100; i++) {
        snprintf(rel, sizeof rel, "t/f%03d.txt", i);
        snprintf(body, sizeof body, "file number %d", i);
        put(rel, body);
    }
    put("t/target.bin", "hard linked");
    for (int i = 0; i < 40; i++) {
        snprintf(rel, sizeof rel, "t/h%02d.bin", i);
        ck_assert_int_eq(link(at("t/target.bin"), at(rel)), 0);
    }
    put("t/.hidden.safetensors", "abc");
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    static collected first;
    for (unsigned threads = 0; threads <= 3; threads += 3) {
        wo.threads = threads;
        stg_walk_result res;
        ck_assert_int_eq(walk1(at("t"), &wo, &col, &res), STG_OK);
        ck_assert_uint_eq(col.count, 142);
        ck_assert_uint_eq(res.files, 142);
        ck_assert_uint_eq(res.distinct_scanned, 102); /* 100 + target + hidden */
        ck_assert_uint_eq(res.bytes, 10 * 13 + 90 * 14 + 11 + 3);
        for (size_t i = 1; i < col.count; i++) {
            ck_assert_msg(strcmp(col.r[i - 1].path, col.r[i].path) < 0, "%s before %s",
                          col.r[i - 1].path, col.r[i].path);
        }
        /* ".hidden..." sorts first; a name claiming safetensors on 3 bytes is invalid */
        ck_assert_str_eq(col.r[0].path, at("t/.hidden.safetensors"));
        ck_assert_int_eq(col.r[0].verdict, STG_VERDICT_INVALID);
        const rec *t = find_rec(&col, "/target.bin");
        ck_assert_ptr_nonnull(t);
        for (int i = 0; i < 40; i++) {
            snprintf(rel, sizeof rel, "/h%02d.bin", i);
            const rec *h = find_rec(&col, rel);
            ck_assert_ptr_nonnull(h);
            ck_assert_str_eq(h->sha, t->sha);
            ck_assert_str_eq(h->findings, t->findings);
            ck_assert_str_eq(h->blob, ""); /* a hard link is not a symbolic link */
        }
        const rec *f7 = find_rec(&col, "/f007.txt");
        ck_assert_ptr_nonnull(f7);
        stg_report *rb = NULL;
        ck_assert_int_eq(stg_scan_buffer("file number 7", 13, NULL, NULL, &rb), STG_OK);
        ck_assert_str_eq(f7->sha, stg_report_sha256(rb));
        stg_report_free(rb);
        if (threads == 0) {
            first = col;
        } else {
            for (size_t i = 0; i < col.count; i++) {
                ck_assert_str_eq(col.r[i].path, first.r[i].path);
                ck_assert_str_eq(col.r[i].findings, first.r[i].findings);
                ck_assert_str_eq(col.r[i].sha, first.r[i].sha);
            }
        }
    }
}
END_TEST

/* A trailing slash joins without doubling it; 20 nested folders are walked to the bottom. */
/* One file under many names (symbolic links, hard links, links into other folders): each record
 * is judged under its own name, as a scan of that path alone judges it (issue: a junk
 * model.safetensors next to a link named `a` came out format_unknown under both names). */
START_TEST(test_links_judged_by_own_name)
{
    static const char junk[] = "\x01\x02\x03 not a model \xff\xfe";
    ck_assert_int_eq(mkdir(at("t"), 0700), 0);
    ck_assert_int_eq(mkdir(at("t/one"), 0700), 0);
    ck_assert_int_eq(mkdir(at("t/two"), 0700), 0);
    ck_assert_int_eq(tu_write_file(at("t/model.safetensors"), junk, sizeof junk - 1), 0);
    ck_assert_int_eq(symlink("model.safetensors", at("t/a")), 0);
    ck_assert_int_eq(symlink("model.safetensors", at("t/b.bin")), 0);
    ck_assert_int_eq(link(at("t/model.safetensors"), at("t/c")), 0);
    ck_assert_int_eq(link(at("t/model.safetensors"), at("t/d.onnx")), 0);
    ck_assert_int_eq(link(at("t/model.safetensors"), at("t/e.safetensors")), 0);
    /* One index hard linked into two folders: only one of them holds its shard. */
    size_t st_len;
    static const char header[] = "{\"w\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}";
    size_t pad = (8 - (sizeof header - 1) % 8) % 8; /* the data starts 8-aligned */
    uint8_t *shard = tu_st_file(header, pad, "xxxxxxxx", 8, &st_len);
    ck_assert_ptr_nonnull(shard);
    ck_assert_int_eq(tu_write_file(at("t/one/s.safetensors"), shard, st_len), 0);
    free(shard);
    put("t/one/m.safetensors.index.json",
        "{\"metadata\":{},\"weight_map\":{\"w\":\"s.safetensors\"}}");
    ck_assert_int_eq(
        link(at("t/one/m.safetensors.index.json"), at("t/two/m.safetensors.index.json")), 0);
    ck_assert_int_eq(
        symlink("../one/m.safetensors.index.json", at("t/two/n.safetensors.index.json")), 0);
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    for (unsigned threads = 1; threads <= 3; threads += 2) {
        wo.threads = threads;
        stg_walk_result res;
        ck_assert_int_eq(walk1(at("t"), &wo, &col, &res), STG_OK);
        ck_assert_uint_eq(col.count, 10);
        /* shared where the names say the same: model/e.safetensors, a/c, and the two indexes
         * in folder two; the rest each once */
        ck_assert_uint_eq(res.distinct_scanned, 7);
        for (size_t i = 0; i < col.count; i++) {
            stg_report *alone = NULL;
            ck_assert_int_eq(stg_scan_path(col.r[i].path, NULL, &alone), STG_OK);
            ck_assert_msg(col.r[i].verdict == stg_report_verdict(alone),
                          "%s: %s in the walk, %s alone", col.r[i].path,
                          stg_verdict_name(col.r[i].verdict),
                          stg_verdict_name(stg_report_verdict(alone)));
            ck_assert_str_eq(col.r[i].findings, tu_describe(alone));
            stg_report_free(alone);
        }
    }
    ck_assert_int_eq(must_rec(&col, "/t/model.safetensors")->verdict, STG_VERDICT_INVALID);
    ck_assert_int_eq(must_rec(&col, "/t/e.safetensors")->verdict, STG_VERDICT_INVALID);
    ck_assert_int_eq(must_rec(&col, "/t/b.bin")->verdict, STG_VERDICT_INVALID);
    ck_assert_ptr_nonnull(strstr(must_rec(&col, "/t/b.bin")->findings, "format_mismatch"));
    /* judged by its own name: ONNX rules on bytes that are no ModelProto */
    ck_assert_ptr_nonnull(strstr(must_rec(&col, "/t/d.onnx")->findings, "onnx_malformed"));
    ck_assert_int_eq(must_rec(&col, "/t/a")->verdict, STG_VERDICT_WARN);
    const rec *one = must_rec(&col, "/t/one/m.safetensors.index.json");
    ck_assert_msg(one->verdict == STG_VERDICT_OK, "%s", one->findings);
    const rec *two = must_rec(&col, "/t/two/m.safetensors.index.json");
    ck_assert_int_eq(two->verdict, STG_VERDICT_INVALID);
    ck_assert_ptr_nonnull(strstr(two->findings, "index_shard_missing"));
    ck_assert_ptr_nonnull(
        strstr(must_rec(&col, "/t/two/n.safetensors.index.json")->findings, "index_shard_missing"));
}
END_TEST

START_TEST(test_trailing_slash_and_depth)
{
    char rel[4096] = "deep";
    ck_assert_int_eq(mkdir(at(rel), 0700), 0);
    for (int i = 0; i < 20; i++) {
        size_t n = strlen(rel);
        snprintf(rel + n, sizeof rel - n, "/d%d", i);
        ck_assert_int_eq(mkdir(at(rel), 0700), 0);
    }
    size_t n = strlen(rel);
    snprintf(rel + n, sizeof rel - n, "/bottom.txt");
    put(rel, "abc");
    put("deep/top.txt", "abc");
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    char arg[4096];
    snprintf(arg, sizeof arg, "%s/deep/", dir);
    stg_walk_result res;
    ck_assert_int_eq(walk1(arg, &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 2);
    /* "d0/..." sorts before "top.txt" */
    ck_assert_str_eq(col.r[0].path, at(rel));
    ck_assert_str_eq(col.r[1].path, at("deep/top.txt"));
    ck_assert_uint_eq(res.distinct_scanned, 2);
    /* exclude by a pattern on the relative path of a deep folder: not descended */
    const char *exc[] = {"d0/d1/d2"};
    wo.exclude = exc;
    wo.exclude_count = 1;
    ck_assert_int_eq(walk1(arg, &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_str_eq(col.r[0].path, at("deep/top.txt"));
}
END_TEST

/* Globs match the relative path or the base name; a path given as an argument is never
 * filtered. */
START_TEST(test_globs_on_base_name)
{
    ck_assert_int_eq(mkdir(at("g"), 0700), 0);
    ck_assert_int_eq(mkdir(at("g/sub"), 0700), 0);
    put("g/sub/keep.bin", "abc");
    put("g/sub/drop.bin", "abc");
    put("g/drop.bin", "abc");
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    /* "drop.bin" has no wildcard: it matches "sub/drop.bin" only by its base name */
    const char *exc[] = {"drop.bin"};
    wo.exclude = exc;
    wo.exclude_count = 1;
    ck_assert_int_eq(walk1(at("g"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_str_eq(col.r[0].path, at("g/sub/keep.bin"));
    /* include by base name likewise */
    wo.exclude_count = 0;
    const char *inc[] = {"keep.bin"};
    wo.include = inc;
    wo.include_count = 1;
    ck_assert_int_eq(walk1(at("g"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_str_eq(col.r[0].path, at("g/sub/keep.bin"));
    /* an argument is scanned even when the globs would skip it */
    ck_assert_int_eq(walk1(at("g/drop.bin"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_str_eq(col.r[0].path, at("g/drop.bin"));
    wo.include_count = 0;
    wo.exclude_count = 1;
    ck_assert_int_eq(walk1(at("g/drop.bin"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    /* a link excluded by name is neither followed nor reported, even a dangling one */
    ck_assert_int_eq(symlink("nowhere", at("g/sub/drop.bin.lnk")), 0);
    const char *exc2[] = {"*.lnk"};
    wo.exclude = exc2;
    ck_assert_int_eq(walk1(at("g"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 3);
    ck_assert_ptr_null(find_rec(&col, ".lnk"));
}
END_TEST

/* Links to folders: one already walked (a sibling) is skipped; a real folder reached first
 * through a link is walked under the link's path and skipped when met itself. */
START_TEST(test_links_to_walked_folders)
{
    ck_assert_int_eq(mkdir(at("r"), 0700), 0);
    ck_assert_int_eq(mkdir(at("r/a"), 0700), 0);
    put("r/a/x.txt", "abc");
    ck_assert_int_eq(symlink("a", at("r/b")), 0);
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    stg_walk_result res;
    ck_assert_int_eq(walk1(at("r"), &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 2);
    ck_assert_str_eq(col.r[0].path, at("r/a/x.txt"));
    ck_assert_str_eq(col.r[1].path, at("r/b"));
    ck_assert_str_eq(col.r[1].findings, "symlink_skipped@-1(warning);");
    ck_assert_int_eq(col.r[1].verdict, STG_VERDICT_WARN);
    ck_assert_str_eq(col.r[1].message,
                     "the link leads to a directory already walked: not followed");

    /* "0" sorts before "a": the link is walked first, the real folder is then skipped */
    ck_assert_int_eq(symlink("a", at("r/0")), 0);
    ck_assert_int_eq(walk1(at("r"), &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 3);
    ck_assert_str_eq(col.r[0].path, at("r/0/x.txt"));
    ck_assert_str_eq(col.r[0].findings, ""); /* text */
    ck_assert_str_eq(col.r[1].path, at("r/a"));
    ck_assert_str_eq(col.r[1].findings, "symlink_skipped@-1(warning);");
    ck_assert_str_eq(col.r[1].message, "the directory was already walked through a link: skipped");
    ck_assert_str_eq(col.r[2].path, at("r/b"));
    ck_assert_uint_eq(res.distinct_scanned, 1);
}
END_TEST

/* An argument that is a link to a file: followed, `blob` is the resolved target. */
START_TEST(test_argument_link_to_file)
{
    put("real.bin", "abc");
    ck_assert_int_eq(symlink("real.bin", at("alias.bin")), 0);
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    ck_assert_int_eq(walk1(at("alias.bin"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_str_eq(col.r[0].path, at("alias.bin"));
    char real[4096];
    ck_assert_ptr_nonnull(realpath(at("real.bin"), real));
    ck_assert_str_eq(col.r[0].blob, real);
    ck_assert_str_eq(col.r[0].sha,
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

/* Specials: a link (inside the root) to a FIFO, a socket, a device argument. Never opened. */
START_TEST(test_specials)
{
    ck_assert_int_eq(mkdir(at("s"), 0700), 0);
    ck_assert_int_eq(mkfifo(at("s/fifo"), 0600), 0);
    ck_assert_int_eq(symlink("fifo", at("s/to-fifo")), 0);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    ck_assert_uint_lt(strlen(at("s/sock")), sizeof sa.sun_path);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", at("s/sock"));
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    stg_walk_result res;
    ck_assert_int_eq(walk1(at("s"), &wo, &col, &res), STG_OK);
    close(fd);
    ck_assert_uint_eq(col.count, 3);
    ck_assert_str_eq(col.r[0].path, at("s/fifo"));
    ck_assert_str_eq(col.r[1].path, at("s/sock"));
    ck_assert_str_eq(col.r[2].path, at("s/to-fifo"));
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(col.r[i].findings, "not_regular_file@-1(warning);");
        ck_assert_int_eq(col.r[i].verdict, STG_VERDICT_WARN);
        ck_assert_str_eq(col.r[i].sha, "");
    }
    ck_assert_str_eq(col.r[2].message, "the link leads to a FIFO, device or socket: not opened");
    ck_assert_uint_eq(res.distinct_scanned, 0);
    ck_assert_uint_eq(res.bytes, 0);
    /* a device, a FIFO and a link to one given as the argument: not read, so verdict error */
    const char *args[] = {"/dev/null", at("s/fifo"), at("s/to-fifo")};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(walk1(args[i], &wo, &col, &res), STG_OK);
        ck_assert_uint_eq(col.count, 1);
        ck_assert_str_eq(col.r[0].findings, "not_regular_file@-1(error);");
        ck_assert_int_eq(col.r[0].verdict, STG_VERDICT_ERROR);
    }
}
END_TEST

/* The root is a path prefix only at a '/': "<dir>/root" does not contain "<dir>/rootx/f". */
START_TEST(test_root_prefix_trap)
{
    ck_assert_int_eq(mkdir(at("root"), 0700), 0);
    ck_assert_int_eq(mkdir(at("rootx"), 0700), 0);
    put("rootx/f.bin", "abc");
    put("root/in.bin", "abc");
    ck_assert_int_eq(symlink("../rootx/f.bin", at("root/trap.bin")), 0);
    ck_assert_int_eq(symlink("in.bin", at("root/ok.bin")), 0);
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    ck_assert_int_eq(walk1(at("root"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 3);
    ck_assert_str_eq(col.r[0].path, at("root/in.bin"));
    ck_assert_str_eq(col.r[1].path, at("root/ok.bin"));
    ck_assert_str_eq(col.r[1].blob, at("root/in.bin"));
    ck_assert_str_eq(col.r[2].path, at("root/trap.bin"));
    ck_assert_str_eq(col.r[2].findings, "symlink_skipped@-1(warning);");
    ck_assert_str_eq(col.r[2].message, "the link leads outside the scan root: not followed");
}
END_TEST

/* An argument of PATH_MAX bytes or more is io_error without a lookup; a long one that fits is
 * looked up (and is missing). */
START_TEST(test_long_argument)
{
    static char longp[5000];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    ck_assert_int_eq(walk1(longp, &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_str_eq(col.r[0].findings, "io_error@-1(error);");
    ck_assert_int_eq(col.r[0].verdict, STG_VERDICT_ERROR);
    ck_assert_str_eq(col.r[0].message, "the path is too long");
    /* near miss: under PATH_MAX, the lookup itself fails */
    longp[PATH_MAX - 1] = '\0';
    ck_assert_int_eq(walk1(longp, &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 1);
    ck_assert_str_eq(col.r[0].findings, "io_error@-1(error);");
    ck_assert(strncmp(col.r[0].message, "the path could not be read: ", 28) == 0);
}
END_TEST

/* In a Hugging Face repo folder, a blob no snapshot links to is reported under its own path
 * and checked against its name; one that a link reaches is reported only under the link. */
START_TEST(test_hf_unlinked_blob)
{
    static const char ABC[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    static const char ZERO[] = "0000000000000000000000000000000000000000000000000000000000000000";
    ck_assert_int_eq(mkdir(at("models--org--name"), 0700), 0);
    ck_assert_int_eq(mkdir(at("models--org--name/blobs"), 0700), 0);
    char rel[256];
    snprintf(rel, sizeof rel, "models--org--name/blobs/%s", ABC);
    put(rel, "abc");
    snprintf(rel, sizeof rel, "models--org--name/blobs/%s", ZERO);
    put(rel, "not zero");
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    ck_assert_int_eq(walk1(at("models--org--name"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 2);
    ck_assert(strstr(col.r[0].path, ZERO) != NULL);
    ck_assert_str_eq(col.r[0].findings, "digest_mismatch@-1(error);"); /* text, wrong digest */
    ck_assert_str_eq(col.r[0].blob, "");
    ck_assert(strstr(col.r[1].path, ABC) != NULL);
    ck_assert_str_eq(col.r[1].findings, "");
    ck_assert_int_eq(col.r[1].verdict, STG_VERDICT_OK);
    ck_assert_str_eq(col.r[1].sha, ABC);
    /* now a snapshot links to the good blob: it disappears under its own path */
    ck_assert_int_eq(mkdir(at("models--org--name/snapshots"), 0700), 0);
    ck_assert_int_eq(mkdir(at("models--org--name/snapshots/main"), 0700), 0);
    snprintf(rel, sizeof rel, "../../blobs/%s", ABC);
    ck_assert_int_eq(symlink(rel, at("models--org--name/snapshots/main/f.bin")), 0);
    ck_assert_int_eq(walk1(at("models--org--name"), &wo, &col, NULL), STG_OK);
    ck_assert_uint_eq(col.count, 2);
    ck_assert(strstr(col.r[0].path, ZERO) != NULL);
    ck_assert_str_eq(col.r[1].path, at("models--org--name/snapshots/main/f.bin"));
    snprintf(rel, sizeof rel, "models--org--name/blobs/%s", ABC);
    ck_assert_str_eq(col.r[1].blob, at(rel));
}
END_TEST

/* A hub root (a folder of repo folders) is a cache too: blobs named by SHA-256 or by Git blob id
 * are reported once, under their snapshot links, and checked; .no_exist and .locks are skipped
 * and counted, as is .git anywhere unless scan_git; a path named as the argument is walked. */
START_TEST(test_hf_hub_root_and_skips)
{
    /* git hash-object of "abc": sha1("blob 3\0abc") */
    static const char ABC_GIT[] = "f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f";
    static const char BAD_GIT[] = "0123456789012345678901234567890123456789";
    static const char ABC[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const char *dirs[] = {"hub",
                          "hub/models--o--n",
                          "hub/models--o--n/blobs",
                          "hub/models--o--n/snapshots",
                          "hub/models--o--n/snapshots/c1",
                          "hub/models--o--n/.no_exist",
                          "hub/models--o--n/.no_exist/c1",
                          "hub/datasets--o--d",
                          "hub/datasets--o--d/blobs",
                          "hub/datasets--o--d/snapshots",
                          "hub/datasets--o--d/snapshots/c1",
                          "hub/.locks",
                          "hub/.locks/models--o--n",
                          "hub/tools",
                          "hub/tools/.git"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        ck_assert_int_eq(mkdir(at(dirs[i]), 0700), 0);
    }
    char rel[256], target[256];
    snprintf(rel, sizeof rel, "hub/models--o--n/blobs/%s", ABC_GIT);
    put(rel, "abc");
    snprintf(rel, sizeof rel, "hub/models--o--n/blobs/%s", ABC);
    put(rel, "abc");
    snprintf(rel, sizeof rel, "hub/datasets--o--d/blobs/%s", BAD_GIT);
    put(rel, "abc");
    snprintf(target, sizeof target, "../../blobs/%s", ABC_GIT);
    ck_assert_int_eq(symlink(target, at("hub/models--o--n/snapshots/c1/README.md")), 0);
    snprintf(target, sizeof target, "../../blobs/%s", ABC);
    ck_assert_int_eq(symlink(target, at("hub/models--o--n/snapshots/c1/notes.txt")), 0);
    snprintf(target, sizeof target, "../../blobs/%s", BAD_GIT);
    ck_assert_int_eq(symlink(target, at("hub/datasets--o--d/snapshots/c1/data.txt")), 0);
    put("hub/models--o--n/.no_exist/c1/adapter_config.json", "");
    snprintf(rel, sizeof rel, "hub/.locks/models--o--n/%s.lock", ABC);
    put(rel, "");
    put("hub/tools/.git/HEAD", "\x01not text");
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    stg_walk_result res;
    ck_assert_int_eq(walk1(at("hub"), &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 3);
    ck_assert_str_eq(col.r[0].path, at("hub/datasets--o--d/snapshots/c1/data.txt"));
    ck_assert_str_eq(col.r[0].findings, "digest_mismatch@-1(error);");
    ck_assert_ptr_nonnull(strstr(col.r[0].message, "Git blob id"));
    ck_assert_str_eq(col.r[1].path, at("hub/models--o--n/snapshots/c1/README.md"));
    ck_assert_int_eq(col.r[1].verdict, STG_VERDICT_OK);
    ck_assert_str_eq(col.r[2].path, at("hub/models--o--n/snapshots/c1/notes.txt"));
    ck_assert_int_eq(col.r[2].verdict, STG_VERDICT_OK);
    ck_assert_uint_eq(res.skipped_git, 1);
    ck_assert_uint_eq(res.skipped_no_exist, 1);
    ck_assert_uint_eq(res.skipped_locks, 1);
    /* near misses: scan_git walks .git; a .no_exist outside a repo folder is walked; the
     * unlinked blob of a folder above the hub is still reported once */
    wo.scan_git = true;
    put("hub/tools/.no_exist", "plain");
    ck_assert_int_eq(walk1(at("hub"), &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 5);
    ck_assert_uint_eq(res.skipped_git, 0);
    ck_assert_ptr_nonnull(find_rec(&col, "/hub/tools/.git/HEAD"));
    ck_assert_ptr_nonnull(find_rec(&col, "/hub/tools/.no_exist"));
    ck_assert_int_eq(unlink(at("hub/models--o--n/snapshots/c1/notes.txt")), 0);
    ck_assert_int_eq(walk1(dir, &wo, &col, &res), STG_OK);
    snprintf(rel, sizeof rel, "/hub/models--o--n/blobs/%s", ABC);
    const rec *blob = find_rec(&col, rel);
    ck_assert_ptr_nonnull(blob);
    ck_assert_int_eq(blob->verdict, STG_VERDICT_OK); /* name and content agree */
    snprintf(rel, sizeof rel, "/hub/models--o--n/blobs/%s", ABC_GIT);
    ck_assert_ptr_null(find_rec(&col, rel)); /* linked: shown as README.md only */
    /* a .git named on the command line is walked */
    wo.scan_git = false;
    ck_assert_int_eq(walk1(at("hub/tools/.git"), &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(col.count, 1);
}
END_TEST

typedef struct progress_log {
    size_t calls, calls_before_first;
    uint64_t last_done, total, max_bytes;
    bool monotonic;
} progress_log;

typedef struct both {
    collected *c;
    progress_log *p;
} both;

static void collect_both(void *user, const stg_report *r)
{
    collect(((both *)user)->c, r);
}

static void on_progress(void *user, const stg_walk_progress *p)
{
    progress_log *l = ((both *)user)->p;
    if (p->files_done < l->last_done) {
        l->monotonic = false;
    }
    if (p->files_done == 0) {
        l->calls_before_first++;
    }
    l->calls++;
    l->last_done = p->files_done;
    l->total = p->files_total;
    if (p->bytes_done > l->max_bytes) {
        l->max_bytes = p->bytes_done;
    }
}

/* Progress: after every record, and every progress_ms while a scan is still running (a 16 MiB
 * file takes well over 1 ms to digest). */
START_TEST(test_progress_calls)
{
    ck_assert_int_eq(mkdir(at("p"), 0700), 0);
    size_t big = 16u << 20;
    char *b = calloc(1, big);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(tu_write_file(at("p/a-big.bin"), b, big), 0);
    free(b);
    put("p/b.txt", "abc");
    put("p/c.txt", "abcd");
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    wo.progress_ms = 1;
    progress_log log = {0, 0, 0, 0, 0, true};
    both u = {&col, &log};
    memset(&col, 0, sizeof col);
    const char *paths[] = {at("p")};
    stg_walk_result res;
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect_both, on_progress, &u, &res), STG_OK);
    ck_assert_uint_eq(col.count, 3);
    ck_assert(log.monotonic);
    ck_assert_uint_eq(log.total, 3);
    ck_assert_uint_eq(log.last_done, 3);
    ck_assert_uint_ge(log.calls, 4); /* one per record, plus at least one while waiting */
    ck_assert_uint_ge(log.calls_before_first, 1);
    ck_assert_uint_le(log.max_bytes, big + 7);
    ck_assert_uint_eq(res.bytes, big + 7);
    /* no progress callback: waits time out silently */
    ck_assert_int_eq(walk1(at("p"), &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(res.files, 3);
    ck_assert_uint_eq(res.bytes, big + 7);
    /* progress_ms 0 means the default period; no callback is fine too */
    wo.progress_ms = 0;
    memset(&col, 0, sizeof col);
    memset(&log, 0, sizeof log);
    log.monotonic = true;
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect_both, on_progress, &u, &res), STG_OK);
    ck_assert_uint_eq(log.last_done, 3);
    ck_assert_int_eq(walk1(at("p"), &wo, &col, &res), STG_OK);
    ck_assert_uint_eq(res.files, 3);
}
END_TEST

static Suite *walk_suite(void)
{
    Suite *s = suite_create("walk");
    TCase *tc = tcase_create("walk");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_many_files_and_hard_links);
    tcase_add_test(tc, test_links_judged_by_own_name);
    tcase_add_test(tc, test_trailing_slash_and_depth);
    tcase_add_test(tc, test_globs_on_base_name);
    tcase_add_test(tc, test_links_to_walked_folders);
    tcase_add_test(tc, test_argument_link_to_file);
    tcase_add_test(tc, test_specials);
    tcase_add_test(tc, test_root_prefix_trap);
    tcase_add_test(tc, test_long_argument);
    tcase_add_test(tc, test_hf_unlinked_blob);
    tcase_add_test(tc, test_hf_hub_root_and_skips);
    tcase_add_test(tc, test_progress_calls);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(walk_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
