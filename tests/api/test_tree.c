/* The public tree scan (stg_scan_tree in include/stguard/stguard.h), used as a library user
 * would: only the public header's functions and types. On trees in a temporary directory it
 * checks records in walk order with their kinds and link targets, the same records whatever
 * the thread count, each record's verdict against a scan of that path alone, the summary
 * counts (verdicts, bytes, files read, skipped .git / .no_exist / partial downloads), the
 * follow_links and hf_cache switches, cancellation from the record callback, progress calls,
 * the struct versions of the options (docs/abi.md: refused when 0 or newer, in the options and
 * in the scan options they embed; reserved space never read), the summary written whole (also
 * on misuse), and the public digest helpers. */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <stguard/stguard.h>

#include "testutil.h"

#define MAX_RECORDS 64

typedef struct rec {
    char path[512];
    char blob[512];
    stg_tree_kind kind;
    stg_verdict verdict;
    char first_code[64];
} rec;

typedef struct collected {
    rec r[MAX_RECORDS];
    size_t count;
    volatile int *cancel_after_first; /* set to 1 after the first record, when not NULL */
    size_t progress_calls;
} collected;

static void collect(void *user, const stg_tree_record *t)
{
    collected *c = user;
    ck_assert_uint_lt(c->count, MAX_RECORDS);
    ck_assert_uint_eq(t->struct_version, STG_STRUCT_VERSION);
    ck_assert_ptr_nonnull(t->report);
    ck_assert_str_eq(t->path, stg_report_path(t->report));
    rec *x = &c->r[c->count++];
    snprintf(x->path, sizeof x->path, "%s", t->path);
    snprintf(x->blob, sizeof x->blob, "%s", t->blob != NULL ? t->blob : "");
    x->kind = t->kind;
    x->verdict = stg_report_verdict(t->report);
    snprintf(x->first_code, sizeof x->first_code, "%s",
             stg_report_count(t->report) > 0 ? stg_code_name(stg_report_at(t->report, 0)->code)
                                             : "");
    if (c->cancel_after_first != NULL) {
        *c->cancel_after_first = 1;
    }
}

static void count_progress(void *user, const stg_tree_progress *p)
{
    collected *c = user;
    ck_assert_uint_eq(p->struct_version, STG_STRUCT_VERSION);
    ck_assert_uint_le(p->files_done, p->files_total);
    c->progress_calls++;
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

static void put(const char *rel, const void *bytes, size_t len)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    char *slash = strrchr(p, '/');
    for (char *q = p + strlen(dir) + 1; q <= slash; q++) {
        if (*q == '/') { /* the folders on the way */
            *q = '\0';
            mkdir(p, 0700);
            *q = '/';
        }
    }
    ck_assert_int_eq(tu_write_file(p, bytes, len), 0);
}

static void link_at(const char *target, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    ck_assert_int_eq(symlink(target, p), 0);
}

static const char *at(const char *rel)
{
    static char p[4][1024];
    static int n;
    char *b = p[n++ % 4];
    snprintf(b, sizeof p[0], "%s/%s", dir, rel);
    return b;
}

static stg_status scan(const stg_tree_options *o, collected *c, stg_tree_summary *sum)
{
    memset(c, 0, sizeof *c);
    memset(sum, 0x5A, sizeof *sum); /* written whole by the library */
    const char *paths[1] = {dir};
    return stg_scan_tree(paths, 1, o, collect, c, sum);
}

/* a.txt, b/model.safetensors and its link b/link.safetensors, c.bin (junk under a pickle name),
 * a FIFO, a .git folder */
static void plain_tree(uint64_t *st_size)
{
    static const char header[] = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    size_t len = 0;
    uint8_t *st = tu_st_file(header, (8 - (sizeof header - 1) % 8) % 8, "x", 1, &len);
    put("a.txt", "hello\n", 6);
    put("b/model.safetensors", st, len);
    free(st);
    *st_size = len;
    link_at("model.safetensors", "b/link.safetensors");
    put("c.bin", "\x01no format\x02", 11);
    put(".git/config", "[core]\n", 7);
    ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
}

START_TEST(test_tree_records_and_summary)
{
    uint64_t st_size = 0;
    plain_tree(&st_size);
    static const struct {
        const char *rel;
        stg_tree_kind kind;
        const char *blob_rel;
    } want[] = {
        {"a.txt", STG_TREE_FILE, NULL},
        {"b/link.safetensors", STG_TREE_LINK, "b/model.safetensors"},
        {"b/model.safetensors", STG_TREE_FILE, NULL},
        {"c.bin", STG_TREE_FILE, NULL},
        {"fifo", STG_TREE_NOT_READ, NULL},
    };
    size_t n = sizeof want / sizeof want[0];
    collected first;
    for (unsigned threads = 1; threads <= 4; threads += 3) {
        stg_tree_options o;
        stg_tree_options_default(&o);
        ck_assert_uint_eq(o.struct_version, STG_STRUCT_VERSION);
        ck_assert_uint_eq(o.scan.struct_version, STG_STRUCT_VERSION);
        ck_assert(o.follow_links && o.hf_cache && !o.scan_git && o.scan.digest);
        o.threads = threads;
        o.on_progress = count_progress;
        collected c;
        stg_tree_summary sum;
        ck_assert_int_eq(scan(&o, &c, &sum), STG_OK);
        ck_assert_uint_eq(c.count, n);
        for (size_t i = 0; i < n; i++) {
            ck_assert_str_eq(c.r[i].path, at(want[i].rel));
            ck_assert_int_eq(c.r[i].kind, want[i].kind);
            ck_assert_str_eq(c.r[i].blob, want[i].blob_rel != NULL ? at(want[i].blob_rel) : "");
            if (want[i].kind != STG_TREE_NOT_READ) {
                /* the same verdict as a scan of that path alone */
                stg_report *alone = NULL;
                ck_assert_int_eq(stg_scan_path(c.r[i].path, &o.scan, &alone), STG_OK);
                ck_assert_int_eq(c.r[i].verdict, stg_report_verdict(alone));
                stg_report_free(alone);
            }
        }
        ck_assert_str_eq(c.r[3].first_code, "format_mismatch");
        ck_assert_int_eq(c.r[3].verdict, STG_VERDICT_INVALID);
        ck_assert_str_eq(c.r[4].first_code, "not_regular_file");
        ck_assert_int_eq(c.r[4].verdict, STG_VERDICT_WARN);
        ck_assert_uint_eq(sum.struct_version, STG_STRUCT_VERSION);
        for (size_t k = 0; k < sizeof sum.reserved / sizeof sum.reserved[0]; k++) {
            ck_assert_uint_eq(sum.reserved[k], 0);
        }
        ck_assert_uint_eq(sum.records, n);
        ck_assert_uint_eq(sum.records_total, n);
        ck_assert_uint_eq(sum.verdicts[STG_VERDICT_OK], 3);
        ck_assert_uint_eq(sum.verdicts[STG_VERDICT_WARN], 1);
        ck_assert_uint_eq(sum.verdicts[STG_VERDICT_INVALID], 1);
        ck_assert_uint_eq(sum.verdicts[STG_VERDICT_UNSAFE] + sum.verdicts[STG_VERDICT_ERROR], 0);
        /* the link and its target share one read: a.txt, the model, c.bin */
        ck_assert_uint_eq(sum.files_read, 3);
        ck_assert_uint_eq(sum.bytes, 6 + st_size + 11);
        ck_assert_uint_eq(sum.skipped_git, 1);
        ck_assert_uint_eq(sum.skipped_no_exist + sum.skipped_locks + sum.skipped_incomplete, 0);
        ck_assert(!sum.interrupted);
        ck_assert_uint_ge(c.progress_calls, n); /* one after each record at least */
        if (threads == 1) {
            first = c;
        } else {
            ck_assert_mem_eq(first.r, c.r, n * sizeof c.r[0]);
        }
    }

    /* scan_git walks .git; follow_links off makes the link a symlink_skipped record */
    stg_tree_options o;
    stg_tree_options_default(&o);
    o.scan_git = true;
    o.follow_links = false;
    collected c;
    stg_tree_summary sum;
    ck_assert_int_eq(scan(&o, &c, &sum), STG_OK);
    ck_assert_uint_eq(c.count, n + 1);
    ck_assert_str_eq(c.r[0].path, at(".git/config"));
    ck_assert_int_eq(c.r[2].kind, STG_TREE_NOT_READ);
    ck_assert_str_eq(c.r[2].first_code, "symlink_skipped");
    ck_assert_uint_eq(sum.skipped_git, 0);
    ck_assert_uint_eq(sum.files_read, 4);
    /* the link named as the path itself is still followed */
    const char *one[1] = {at("b/link.safetensors")};
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(stg_scan_tree(one, 1, &o, collect, &c, NULL), STG_OK);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_int_eq(c.r[0].kind, STG_TREE_LINK);
}
END_TEST

START_TEST(test_tree_cancel)
{
    uint64_t st_size = 0;
    plain_tree(&st_size);
    volatile int stop = 0;
    stg_tree_options o;
    stg_tree_options_default(&o);
    o.threads = 2;
    o.cancel = &stop;
    collected c;
    stg_tree_summary sum;
    memset(&c, 0, sizeof c);
    c.cancel_after_first = &stop;
    const char *paths[1] = {dir};
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, &sum), STG_OK);
    /* the scans running when the flag was set end and are handed out, in walk order */
    static const char *const order[] = {"a.txt", "b/link.safetensors", "b/model.safetensors",
                                        "c.bin", "fifo"};
    ck_assert_uint_ge(c.count, 1);
    for (size_t i = 0; i < c.count; i++) {
        ck_assert_str_eq(c.r[i].path, at(order[i]));
    }
    ck_assert_uint_eq(sum.records, c.count);
    ck_assert_uint_eq(sum.records_total, 5);
    ck_assert(sum.interrupted == (c.count < 5));
    /* a flag already set: nothing is started, nothing handed out */
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, &sum), STG_OK);
    ck_assert_uint_eq(c.count, 0);
    ck_assert_uint_eq(sum.bytes, 0);
    ck_assert(sum.interrupted);
}
END_TEST

/* Cancelled while a file is being scanned: its read stops at once (between two chunks), the file
 * gets no record (half a read is no verdict), no later file is started. */
static volatile int progress_stop;

/* Cancels once the first file is being read (its bytes move), not before its scan began. */
static void cancel_on_progress(void *user, const stg_tree_progress *p)
{
    (void)user;
    if (p->files_done == 0 && p->bytes_done > 0) {
        progress_stop = 1;
    }
}

START_TEST(test_tree_cancel_running)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/a.big", dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    /* sparse, 4 GiB: hashing it takes seconds, so a read that does not stop shows */
    ck_assert_int_eq(ftruncate(fd, (off_t)4 << 30), 0);
    close(fd);
    put("b.txt", "hello\n", 6);
    progress_stop = 0;
    stg_tree_options o;
    stg_tree_options_default(&o);
    o.threads = 1;
    o.cancel = &progress_stop;
    o.on_progress = cancel_on_progress;
    o.progress_ms = 1;
    collected c;
    stg_tree_summary sum;
    memset(&c, 0, sizeof c);
    const char *paths[1] = {dir};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, &sum), STG_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ck_assert_uint_eq(c.count, 0);
    ck_assert_uint_eq(sum.records, 0);
    ck_assert_uint_eq(sum.records_total, 2);
    ck_assert_uint_eq(sum.files_read, 0);
    ck_assert_uint_eq(sum.bytes, 0);
    ck_assert(sum.interrupted);
    ck_assert_msg(seconds < 1.5, "the cancelled read took %.2f s", seconds);
}
END_TEST

START_TEST(test_tree_hf_cache)
{
    /* one repo folder: a blob named by its SHA-256, a snapshot link to it, a .no_exist marker and
     * a partial download */
    static const char content[] = "{\"hidden_size\": 2}\n";
    char hex[65];
    ck_assert_int_eq(stg_sha256_hex(content, sizeof content - 1, hex), STG_OK);
    char blob[256], incomplete[256], target[256];
    snprintf(blob, sizeof blob, "models--o--n/blobs/%s", hex);
    snprintf(incomplete, sizeof incomplete, "models--o--n/blobs/%064d.incomplete", 0);
    snprintf(target, sizeof target, "../../blobs/%s", hex);
    put(blob, content, sizeof content - 1);
    put(incomplete, "half", 4);
    put("models--o--n/snapshots/c0/x", "", 0);
    unlink(at("models--o--n/snapshots/c0/x"));
    link_at(target, "models--o--n/snapshots/c0/config.json");
    put("models--o--n/.no_exist/c0/model.safetensors", "", 0);

    stg_tree_options o;
    stg_tree_options_default(&o);
    collected c;
    stg_tree_summary sum;
    ck_assert_int_eq(scan(&o, &c, &sum), STG_OK);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_str_eq(c.r[0].path, at("models--o--n/snapshots/c0/config.json"));
    ck_assert_int_eq(c.r[0].kind, STG_TREE_LINK);
    ck_assert_str_eq(c.r[0].blob, at(blob));
    ck_assert_int_eq(c.r[0].verdict, STG_VERDICT_OK);
    ck_assert_uint_eq(sum.skipped_no_exist, 1);
    ck_assert_uint_eq(sum.skipped_incomplete, 1);

    /* hf_cache off: a plain tree, every file its own record, nothing skipped */
    o.hf_cache = false;
    ck_assert_int_eq(scan(&o, &c, &sum), STG_OK);
    ck_assert_uint_eq(c.count, 4);
    ck_assert_str_eq(c.r[0].path, at("models--o--n/.no_exist/c0/model.safetensors"));
    bool incomplete_first = strcmp(incomplete, blob) < 0; /* names sorted by their bytes */
    ck_assert_str_eq(c.r[incomplete_first ? 1 : 2].path, at(incomplete));
    ck_assert_str_eq(c.r[incomplete_first ? 2 : 1].path, at(blob));
    ck_assert_int_eq(c.r[incomplete_first ? 2 : 1].kind, STG_TREE_FILE);
    ck_assert_int_eq(c.r[3].kind, STG_TREE_LINK);
    ck_assert_uint_eq(sum.skipped_no_exist + sum.skipped_incomplete, 0);
}
END_TEST

START_TEST(test_tree_sizes_and_misuse)
{
    put("a.txt", "hello\n", 6);
    const char *paths[2] = {dir, "-"};
    collected c;
    stg_tree_options o;
    /* struct versions: 0 (not initialised) and a newer header's are refused before anything is
     * read, in the options and in the scan options (and limits) they embed */
    static const uint32_t bad[] = {0u, STG_STRUCT_VERSION + 1u, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&o, 0, sizeof o);
        ck_assert_int_eq(stg_tree_options_init(&o, bad[i]), STG_E_STRUCT_VERSION);
        ck_assert(o.follow_links && o.threads == 1); /* filled all the same */
        memset(&c, 0, sizeof c);
        ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, NULL), STG_E_STRUCT_VERSION);
        stg_tree_options_default(&o);
        o.scan.struct_version = bad[i];
        ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, NULL), STG_E_STRUCT_VERSION);
        stg_tree_options_default(&o);
        o.scan.limits.struct_version = bad[i];
        ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, NULL), STG_E_STRUCT_VERSION);
        ck_assert_uint_eq(c.count, 0);
    }
    ck_assert_int_eq(stg_tree_options_init(NULL, STG_STRUCT_VERSION), STG_E_BAD_ARG);
    /* reserved space is never read */
    stg_tree_options_default(&o);
    memset(o.reserved, 0xA5, sizeof o.reserved);
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, NULL), STG_OK);
    ck_assert_uint_eq(c.count, 1);
    stg_tree_options_default(&o);
    ck_assert_int_eq(stg_scan_tree(paths, 1, NULL, collect, &c, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, NULL, &c, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_scan_tree(paths, 0, &o, collect, &c, NULL), STG_E_BAD_ARG);
    o.threads = STG_TREE_MAX_THREADS + 1;
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, NULL), STG_E_BAD_ARG);
    o.threads = 1;
    o.shard_count = 2;
    o.shard_index = 2;
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, NULL), STG_E_BAD_ARG);
    o.shard_count = 0;
    o.shard_index = 0;
    o.scan.expected_sha256 = "not hex";
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, collect, &c, NULL), STG_E_BAD_ARG);
    o.scan.expected_sha256 = NULL;
    const char *twice[2] = {"-", "-"};
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(stg_scan_tree(twice, 2, &o, collect, &c, NULL), STG_E_BAD_ARG);
    ck_assert_uint_eq(c.count, 0);

    /* the summary is written whole, also when the call is refused */
    stg_tree_summary sum;
    memset(&sum, 0x5A, sizeof sum);
    ck_assert_int_eq(stg_scan_tree(paths, 0, &o, collect, &c, &sum), STG_E_BAD_ARG);
    ck_assert_uint_eq(sum.struct_version, STG_STRUCT_VERSION);
    ck_assert_uint_eq(sum.records + sum.records_total + sum.bytes, 0);
    ck_assert(!sum.interrupted);
}
END_TEST

START_TEST(test_digest_helpers)
{
    char hex[65];
    ck_assert_int_eq(stg_sha256_hex("abc", 3, hex), STG_OK);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq(stg_sha256_hex(NULL, 0, hex), STG_OK);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ck_assert_int_eq(stg_sha256_hex(NULL, 1, hex), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_sha256_hex("abc", 3, NULL), STG_E_BAD_ARG);
    char out[65];
    ck_assert(stg_sha256_hex_normalize(
        "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", out));
    ck_assert_str_eq(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert(stg_sha256_hex_normalize(out, NULL));
    ck_assert(!stg_sha256_hex_normalize("ba7816bf", out));
    ck_assert(!stg_sha256_hex_normalize(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0", out));
    ck_assert(!stg_sha256_hex_normalize(
        "ga7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", out));
    ck_assert(!stg_sha256_hex_normalize(NULL, out));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tree");
    TCase *tc = tcase_create("public");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tree_records_and_summary);
    tcase_add_test(tc, test_tree_cancel);
    tcase_add_test(tc, test_tree_cancel_running);
    tcase_add_test(tc, test_tree_hf_cache);
    tcase_add_test(tc, test_tree_sizes_and_misuse);
    tcase_add_test(tc, test_digest_helpers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
