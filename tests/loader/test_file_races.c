/* File races: files of every format are truncated, extended and replaced while they are
 * scanned, by another thread and by another process, with several threads scanning at once
 * (stg_scan_path, the tree walk the CLI runs, stg_file_open + stg_file_read_tensor). Every
 * outcome must be a verdict: ok, warn, invalid, unsafe, or error carrying file_changed or
 * io_error, never a signal. A signal
 * ends the test's process, which Check reports as a failure. The script script_file_races.sh
 * does the same with the CLI (-j2).
 *
 * The window tests check what loader/window.c promises: a safetensors file is held as its
 * header and tail, and a polyglot whose parts lie past those windows is still seen. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "loader/scan.h"
#include "loader/window.h"
#include "testutil.h"
#include "zipbuild.h"

/* How long each race runs (the loops are short so the test stays cheap on a shared host). */
#define RACE_MS 600

static char *dir;

typedef struct fixture {
    const char *name; /* file name in dir */
    uint8_t *bytes;
    size_t len;
    bool safetensors; /* also opened with stg_file_open */
} fixture;

enum { FIX_ST, FIX_ZIP, FIX_PICKLE, FIX_TAR, FIX_GZIP, FIX_NPY, FIX_INDEX, FIX_SHARD, FIX_COUNT };
static fixture fixtures[FIX_COUNT];

static char *path_of(const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* ------------------------------------------------------------------ fixtures */

static uint8_t *make_safetensors(size_t data_len, size_t *len)
{
    char header[160];
    snprintf(header, sizeof header,
             "{\"t\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}", data_len,
             data_len);
    uint8_t *data = malloc(data_len);
    ck_assert_ptr_nonnull(data);
    for (size_t i = 0; i < data_len; i++) {
        data[i] = (uint8_t)(i * 7u + 3u);
    }
    size_t pad = (8 - strlen(header) % 8) % 8; /* aligned data: no header_not_padded */
    uint8_t *out = tu_st_file(header, pad, data, data_len, len);
    free(data);
    return out;
}

/* Protocol 3: BINBYTES of payload bytes, then STOP (a benign pickle of one bytes object). */
static uint8_t *make_pickle(size_t payload, size_t *len)
{
    *len = 2 + 5 + payload + 1;
    uint8_t *p = malloc(*len);
    ck_assert_ptr_nonnull(p);
    p[0] = 0x80;
    p[1] = 3;
    p[2] = 'B';
    p[3] = (uint8_t)payload;
    p[4] = (uint8_t)(payload >> 8);
    p[5] = (uint8_t)(payload >> 16);
    p[6] = (uint8_t)(payload >> 24);
    memset(p + 7, 'x', payload);
    p[*len - 1] = '.';
    return p;
}

static uint8_t *make_zip(size_t slen, size_t *len)
{
    size_t plen;
    uint8_t *pk = make_pickle(100, &plen);
    uint8_t *storage = malloc(slen);
    ck_assert_ptr_nonnull(storage);
    memset(storage, 0x11, slen);
    zb_entry e[2] = {zb_file("archive/data.pkl", pk, plen),
                     zb_file("archive/data/0", storage, slen)};
    uint8_t *out = zb_build(e, 2, NULL, len, NULL);
    free(pk);
    free(storage);
    return out;
}

/* One ustar member holding a pickle. */
static uint8_t *make_tar(size_t *len)
{
    size_t plen;
    uint8_t *pk = make_pickle(300000, &plen);
    size_t body = (plen + 511) / 512 * 512;
    *len = 512 + body + 1024;
    uint8_t *t = calloc(1, *len);
    ck_assert_ptr_nonnull(t);
    strcpy((char *)t, "model.pkl");
    memcpy(t + 100, "0000644", 7);
    memcpy(t + 108, "0000000", 7);
    memcpy(t + 116, "0000000", 7);
    snprintf((char *)t + 124, 12, "%011o", (unsigned)plen);
    memcpy(t + 136, "00000000000", 11);
    t[156] = '0';
    memcpy(t + 257,
           "ustar\0"
           "00",
           8);
    memset(t + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < 512; i++) {
        sum += t[i];
    }
    snprintf((char *)t + 148, 8, "%06o", sum);
    memcpy(t + 512, pk, plen);
    free(pk);
    return t;
}

static uint8_t *make_gzip(size_t *len)
{
    size_t plen;
    uint8_t *pk = make_pickle(400000, &plen);
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)plen);
    uint8_t *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    z.next_in = pk;
    z.avail_in = (uInt)plen;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *len = z.total_out;
    deflateEnd(&z);
    free(pk);
    return out;
}

static uint8_t *make_npy(size_t *len)
{
    const char *dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (500000,), }";
    size_t hlen = strlen(dict) + 1, pad = (64 - (10 + hlen) % 64) % 64;
    size_t header = 10 + hlen + pad, data = 500000;
    *len = header + data;
    uint8_t *p = malloc(*len);
    ck_assert_ptr_nonnull(p);
    memcpy(p, "\x93NUMPY\x01\x00", 8);
    p[8] = (uint8_t)((hlen + pad) & 0xff);
    p[9] = (uint8_t)((hlen + pad) >> 8);
    memcpy(p + 10, dict, strlen(dict));
    memset(p + 10 + strlen(dict), ' ', pad);
    p[header - 1] = '\n';
    memset(p + header, 0x22, data);
    return p;
}

static void write_fixture(const fixture *f)
{
    char *p = path_of(f->name);
    ck_assert_int_eq(tu_write_file(p, f->bytes, f->len), 0);
    free(p);
}

static void setup(void)
{
    dir = tu_tempdir();
    ck_assert_ptr_nonnull(dir);
    fixture *f = fixtures;
    f[FIX_ST] = (fixture){"model.safetensors", NULL, 0, true};
    f[FIX_ST].bytes = make_safetensors(2u << 20, &f[FIX_ST].len);
    f[FIX_ZIP] = (fixture){"model.pt", NULL, 0, false};
    f[FIX_ZIP].bytes = make_zip(1u << 20, &f[FIX_ZIP].len);
    f[FIX_PICKLE] = (fixture){"model.pkl", NULL, 0, false};
    f[FIX_PICKLE].bytes = make_pickle(300000, &f[FIX_PICKLE].len);
    f[FIX_TAR] = (fixture){"model.tar", NULL, 0, false};
    f[FIX_TAR].bytes = make_tar(&f[FIX_TAR].len);
    f[FIX_GZIP] = (fixture){"model.pkl.gz", NULL, 0, false};
    f[FIX_GZIP].bytes = make_gzip(&f[FIX_GZIP].len);
    f[FIX_NPY] = (fixture){"model.npy", NULL, 0, false};
    f[FIX_NPY].bytes = make_npy(&f[FIX_NPY].len);
    f[FIX_SHARD] = (fixture){"model-00001-of-00001.safetensors", NULL, 0, true};
    f[FIX_SHARD].bytes = make_safetensors(1u << 20, &f[FIX_SHARD].len);
    const char *ix =
        "{\"metadata\":{},\"weight_map\":{\"t\":\"model-00001-of-00001.safetensors\"}}";
    f[FIX_INDEX] = (fixture){"model.safetensors.index.json", NULL, 0, false};
    f[FIX_INDEX].len = strlen(ix);
    f[FIX_INDEX].bytes = (uint8_t *)strdup(ix);
    for (int i = 0; i < FIX_COUNT; i++) {
        write_fixture(&f[i]);
    }
}

static void teardown(void)
{
    for (int i = 0; i < FIX_COUNT; i++) {
        free(fixtures[i].bytes);
        fixtures[i].bytes = NULL;
    }
    tu_rmtree(dir);
    free(dir);
    dir = NULL;
}

/* ------------------------------------------------------------------ mutations */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One round of changes to fixture f's file: truncated in place (to a third, then to nothing),
 * extended in place, rewritten, and replaced by another file renamed over it; always restored
 * to its own bytes at the end. seed varies the cut points. */
static void mutate_once(const fixture *f, unsigned seed)
{
    char *p = path_of(f->name);
    int fd = open(p, O_WRONLY);
    if (fd >= 0) {
        off_t cut = (off_t)(f->len / (2 + seed % 5));
        (void)!ftruncate(fd, cut);
        usleep(200); /* long enough for a scan to run into the cut */
        (void)!ftruncate(fd, 0);
        (void)!ftruncate(fd, (off_t)f->len);
        (void)!pwrite(fd, f->bytes, f->len, 0);
        static const uint8_t junk[4096];
        (void)!pwrite(fd, junk, sizeof junk, (off_t)f->len); /* extended */
        (void)!ftruncate(fd, (off_t)f->len);
        close(fd);
    }
    /* replaced: another fixture's bytes renamed over the path, then its own again */
    size_t n = strlen(p) + 8;
    char *tmp = malloc(n);
    ck_assert_ptr_nonnull(tmp);
    snprintf(tmp, n, "%s.new", p);
    const fixture *other = &fixtures[(seed + 1) % FIX_COUNT];
    if (tu_write_file(tmp, other->bytes, other->len) == 0) {
        (void)rename(tmp, p);
    }
    if (tu_write_file(tmp, f->bytes, f->len) == 0) {
        (void)rename(tmp, p);
    }
    free(tmp);
    free(p);
}

static atomic_bool stop_mutating;

static void *mutator_thread(void *arg)
{
    (void)arg;
    unsigned seed = 1;
    while (!atomic_load(&stop_mutating)) {
        for (int i = 0; i < FIX_COUNT && !atomic_load(&stop_mutating); i++) {
            mutate_once(&fixtures[i], seed++);
        }
    }
    return NULL;
}

/* The same mutations from a child process, until it is killed. */
static pid_t start_mutator_process(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        unsigned seed = 7;
        for (;;) {
            for (int i = 0; i < FIX_COUNT; i++) {
                mutate_once(&fixtures[i], seed++);
            }
        }
    }
    return pid;
}

static void stop_mutator_process(pid_t pid)
{
    kill(pid, SIGKILL);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}

/* ------------------------------------------------------------------ outcome checks */

/* Every outcome is a verdict; an error says which problem with the file it was. Returns a
 * message for the failure, NULL when the report is acceptable. Thread-safe (no static
 * buffers), so scanning threads call it and hand the message to the main thread. */
static const char *bad_outcome(stg_status st, const stg_report *r)
{
    if (st != STG_OK) {
        return "the scan call itself failed";
    }
    if (r == NULL) {
        return "no report";
    }
    stg_verdict v = stg_report_verdict(r);
    if (v > STG_VERDICT_ERROR) {
        return "not a verdict";
    }
    if (v == STG_VERDICT_ERROR && tu_find(r, STG_FILE_CHANGED_CODE) < 0 &&
        tu_find(r, STG_IO_ERROR) < 0) {
        return "an error verdict without file_changed or io_error";
    }
    return NULL;
}

typedef struct scanner {
    pthread_t thread;
    int kind; /* 0 stg_scan_path, 1 stg_file_open + read_tensor, 2 tree walk */
    unsigned long rounds;
    unsigned long changed; /* outcomes with file_changed or io_error */
    const char *failure;
} scanner;

static atomic_bool stop_scanning;

static void note_changed(scanner *s, const stg_report *r)
{
    if (r != NULL && (tu_find(r, STG_FILE_CHANGED_CODE) >= 0 || tu_find(r, STG_IO_ERROR) >= 0)) {
        s->changed++;
    }
}

static void scan_paths_once(scanner *s)
{
    for (int i = 0; i < FIX_COUNT && s->failure == NULL; i++) {
        char *p = path_of(fixtures[i].name);
        stg_report *r = NULL;
        stg_status st = stg_scan_path(p, NULL, &r);
        s->failure = bad_outcome(st, r);
        note_changed(s, r);
        stg_report_free(r);
        free(p);
    }
}

static void open_files_once(scanner *s)
{
    for (int i = 0; i < FIX_COUNT && s->failure == NULL; i++) {
        if (!fixtures[i].safetensors) {
            continue;
        }
        char *p = path_of(fixtures[i].name);
        stg_file *f = NULL;
        stg_report *r = NULL;
        stg_status st = stg_file_open(p, NULL, &f, &r);
        bool allowed = st == STG_OK || st == STG_E_INVALID || st == STG_E_IO ||
                       st == STG_FILE_CHANGED;
        if (!allowed) {
            s->failure = "stg_file_open returned an unexpected status";
        } else if (bad_outcome(STG_OK, r) != NULL) {
            s->failure = bad_outcome(STG_OK, r);
        } else if (st == STG_OK && (f == NULL || stg_report_verdict(r) >= STG_VERDICT_INVALID)) {
            s->failure = "stg_file_open said OK without a usable file";
        }
        note_changed(s, r);
        if (f != NULL) {
            for (size_t t = 0; t < stg_file_tensor_count(f); t++) {
                const stg_tensor *ten = stg_file_tensor_at(f, t);
                size_t n = (size_t)(ten->end - ten->begin);
                void *dst = malloc(n > 0 ? n : 1);
                ck_assert_ptr_nonnull(dst);
                stg_status rs = stg_file_read_tensor(f, ten, dst, n);
                if (rs != STG_OK && rs != STG_FILE_CHANGED && rs != STG_E_IO) {
                    s->failure = "stg_file_read_tensor returned an unexpected status";
                }
                free(dst);
            }
            stg_file_close(f);
        }
        stg_report_free(r);
        free(p);
    }
}

typedef struct walk_ctx {
    scanner *s;
    size_t records;
} walk_ctx;

static void on_record(void *user, const stg_report *r)
{
    walk_ctx *w = user;
    w->records++;
    if (w->s->failure == NULL) {
        w->s->failure = bad_outcome(STG_OK, r);
    }
    note_changed(w->s, r);
}

static void walk_once(scanner *s)
{
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    wo.threads = 2;
    const char *paths[1] = {dir};
    walk_ctx w = {s, 0};
    stg_walk_result res;
    stg_status st = stg_walk(paths, 1, &wo, on_record, NULL, &w, &res);
    if (st != STG_OK) {
        s->failure = "stg_walk failed";
    }
}

static void *scanner_thread(void *arg)
{
    scanner *s = arg;
    while (!atomic_load(&stop_scanning) && s->failure == NULL) {
        if (s->kind == 0) {
            scan_paths_once(s);
        } else if (s->kind == 1) {
            open_files_once(s);
        } else {
            walk_once(s);
        }
        s->rounds++;
    }
    return NULL;
}

/* Runs nscan scanners of the given kinds while the files change (in a thread, or in a child
 * process when by_process), for RACE_MS. */
static void race(const int *kinds, size_t nscan, bool by_process)
{
    scanner s[4];
    ck_assert_uint_le(nscan, 4);
    memset(s, 0, sizeof s);
    atomic_store(&stop_scanning, false);
    atomic_store(&stop_mutating, false);
    pthread_t mut;
    pid_t child = -1;
    if (by_process) {
        child = start_mutator_process();
    } else {
        ck_assert_int_eq(pthread_create(&mut, NULL, mutator_thread, NULL), 0);
    }
    for (size_t i = 0; i < nscan; i++) {
        s[i].kind = kinds[i];
        ck_assert_int_eq(pthread_create(&s[i].thread, NULL, scanner_thread, &s[i]), 0);
    }
    double until = now_ms() + RACE_MS;
    while (now_ms() < until) {
        usleep(10000);
    }
    atomic_store(&stop_scanning, true);
    for (size_t i = 0; i < nscan; i++) {
        pthread_join(s[i].thread, NULL);
    }
    if (by_process) {
        stop_mutator_process(child);
    } else {
        atomic_store(&stop_mutating, true);
        pthread_join(mut, NULL);
    }
    unsigned long rounds = 0, changed = 0;
    for (size_t i = 0; i < nscan; i++) {
        ck_assert_msg(s[i].failure == NULL, "scanner %zu (kind %d): %s", i, s[i].kind,
                      s[i].failure);
        rounds += s[i].rounds;
        changed += s[i].changed;
    }
    ck_assert_uint_gt(rounds, 0);
    fprintf(stderr, "race (%s, %zu scanners): %lu rounds, %lu outcomes file_changed/io_error\n",
            by_process ? "process" : "thread", nscan, rounds, changed);
    /* The files are restored: every one scans as it did before the race. */
    for (int i = 0; i < FIX_COUNT; i++) {
        write_fixture(&fixtures[i]);
    }
}

START_TEST(test_scan_path_races_thread)
{
    const int kinds[2] = {0, 0};
    race(kinds, 2, false);
}
END_TEST

START_TEST(test_scan_path_races_process)
{
    const int kinds[2] = {0, 0};
    race(kinds, 2, true);
}
END_TEST

START_TEST(test_file_open_races)
{
    const int kinds[2] = {1, 1};
    race(kinds, 2, false);
    race(kinds, 2, true);
}
END_TEST

START_TEST(test_walk_races)
{
    const int kinds[2] = {2, 0};
    race(kinds, 2, false);
    race(kinds, 2, true);
}
END_TEST

/* The outcome checker itself: a verdict error without a file problem is refused, one with
 * file_changed passes (so the races above could fail). */
START_TEST(test_outcome_checker)
{
    stg_report *ok = NULL;
    ck_assert_int_eq(stg_scan_buffer("{}", 2, "x.json", NULL, &ok), STG_OK);
    ck_assert_ptr_null(bad_outcome(STG_OK, ok));
    ck_assert_ptr_nonnull(bad_outcome(STG_E_IO, ok));
    stg_report_free(ok);
    ck_assert_ptr_nonnull(bad_outcome(STG_OK, NULL));
    /* a file that vanished: io_error, accepted */
    char *gone = path_of("gone.safetensors");
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(gone, NULL, &r), STG_OK);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    ck_assert_ptr_null(bad_outcome(STG_OK, r));
    stg_report_free(r);
    free(gone);
}
END_TEST

/* ------------------------------------------------------------------ windows */

static stg_image image_of(const char *p, int *fd, uint64_t cap)
{
    *fd = open(p, O_RDONLY);
    ck_assert_int_ge(*fd, 0);
    struct stat st;
    ck_assert_int_eq(fstat(*fd, &st), 0);
    stg_image img;
    int err = 0;
    ck_assert_int_eq(stg_image_open(&img, *fd, (uint64_t)st.st_size, cap, &err), STG_OK);
    return img;
}

/* A benign multi-MiB safetensors file is held as header + slack + tail, not whole. */
START_TEST(test_window_benign_safetensors)
{
    char *p = path_of(fixtures[FIX_ST].name);
    int fd;
    stg_image img = image_of(p, &fd, UINT64_MAX);
    bool is_st = false;
    int err = 0;
    ck_assert_int_eq(stg_image_fill_safetensors(&img, false, &is_st, &err), STG_OK);
    ck_assert(is_st);
    ck_assert(!stg_image_whole(&img));
    ck_assert_uint_lt(img.held, 200u * 1024);
    ck_assert_uint_gt(img.held, 64u * 1024);
    /* the rules and polyglot checks over the image agree with the buffer path */
    stg_report *a = NULL;
    ck_assert_int_eq(stg_validate_buffer(img.bytes, img.size, NULL, &a), STG_OK);
    ck_assert_int_eq(stg_report_verdict(a), STG_VERDICT_OK);
    stg_report_free(a);
    stg_image_close(&img);
    close(fd);
    /* a pickle is not safetensors: the caller reads it whole, and a cap below its size is a
     * limit, never a partial image */
    free(p);
    p = path_of(fixtures[FIX_PICKLE].name);
    img = image_of(p, &fd, 4096);
    stg_status st = stg_image_fill_safetensors(&img, false, &is_st, &err);
    if (st == STG_OK) {
        ck_assert(!is_st);
        st = stg_image_fill_all(&img, &err);
    }
    ck_assert_int_eq(st, STG_E_LIMIT);
    stg_image_close(&img);
    close(fd);
    free(p);
    /* through stg_scan_path: limit_exceeded max_inflate_bytes */
    p = path_of(fixtures[FIX_PICKLE].name);
    stg_scan_options so;
    stg_scan_options_default(&so);
    so.limits.max_inflate_bytes = 4096;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(p, &so, &r), STG_OK);
    ck_assert_int_ge(stg_report_verdict(r), STG_VERDICT_INVALID);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_int_ge(at, 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_inflate_bytes");
    stg_report_free(r);
    so.limits.max_inflate_bytes = fixtures[FIX_PICKLE].len; /* exactly enough */
    ck_assert_int_eq(stg_scan_path(p, &so, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_LIMIT_EXCEEDED), -1);
    stg_report_free(r);
    free(p);
}
END_TEST

/* Fills the safetensors windows of the file at p; *prefix and *whole say what was copied. */
static void fill_windows(const char *p, size_t *prefix, bool *whole)
{
    int fd;
    stg_image img = image_of(p, &fd, UINT64_MAX);
    bool is_st = false;
    int err = 0;
    ck_assert_int_eq(stg_image_fill_safetensors(&img, false, &is_st, &err), STG_OK);
    ck_assert(is_st);
    *prefix = img.prefix;
    *whole = stg_image_whole(&img);
    stg_image_close(&img);
    close(fd);
}

/* stg_scan_path and stg_file_open both report code for the file at p. */
static void expect_on_both_paths(const char *p, stg_code code)
{
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
    ck_assert_int_ge(tu_find(r, code), 0);
    stg_report_free(r);
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open(p, NULL, &f, &r), STG_E_INVALID);
    ck_assert_int_ge(tu_find(r, code), 0);
    stg_report_free(r);
}

/* A safetensors file whose first bytes are a STRING pickle whose line runs through the header
 * and 100 KB into the data to a STOP: the prefix grows until the walk settles, and
 * polyglot_pickle is reported by the file paths as by the buffer path. */
START_TEST(test_window_polyglot_pickle_past_header)
{
    /* n = 0x2753: the bytes "S'" then zeros start the file; the header is padded to n */
    const char *hdr = "{\"t\":{\"dtype\":\"U8\",\"shape\":[400000],\"data_offsets\":[0,400000]}}";
    size_t n = 0x2753, data_len = 400000;
    size_t len = 8 + n + data_len;
    uint8_t *b = calloc(1, len);
    ck_assert_ptr_nonnull(b);
    b[0] = 0x53;
    b[1] = 0x27;
    memcpy(b + 8, hdr, strlen(hdr));
    memset(b + 8 + strlen(hdr), ' ', n - strlen(hdr));
    uint8_t *data = b + 8 + n;
    memset(data, 'A', 100000);
    memcpy(data + 100000, "'\n.", 3);
    char *p = path_of("poly.safetensors");
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    stg_report *buf_r = tu_validate(b, len, STG_PROFILE_STRICT);
    ck_assert_int_ge(tu_find(buf_r, STG_POLYGLOT_PICKLE), 0);
    stg_report_free(buf_r);
    size_t prefix;
    bool whole;
    fill_windows(p, &prefix, &whole);
    ck_assert_uint_gt(prefix, 8 + n + 100003);
    ck_assert(!whole);
    expect_on_both_paths(p, STG_POLYGLOT_PICKLE);
    stg_report *r = NULL;
    /* near miss: the same file with the closing quote gone is no pickle, and nothing is held
     * past the first prefix that settles */
    data[100000] = 'A';
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_PICKLE), -1);
    ck_assert_int_le(stg_report_verdict(r), STG_VERDICT_WARN); /* header_not_padded only */
    stg_report_free(r);
    free(p);
    free(b);
}
END_TEST

/* An archive appended to a big safetensors file: its end record is in the tail window, so the
 * file is read whole and polyglot_zip is reported (strict scans the members). The near miss,
 * the same file without the archive, stays windowed (test_window_benign_safetensors). */
START_TEST(test_window_polyglot_zip)
{
    size_t zlen;
    uint8_t *z = make_zip(100000, &zlen);
    const fixture *st = &fixtures[FIX_ST];
    /* the appended archive lies inside the tensor's data (the layout covers it) */
    size_t len = st->len;
    uint8_t *b = malloc(len);
    ck_assert_ptr_nonnull(b);
    memcpy(b, st->bytes, len);
    ck_assert_uint_lt(zlen, len / 2);
    memcpy(b + len - zlen, z, zlen);
    char *p = path_of("zpoly.safetensors");
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    size_t prefix;
    bool whole;
    fill_windows(p, &prefix, &whole);
    ck_assert(whole);
    expect_on_both_paths(p, STG_POLYGLOT_ZIP);
    free(p);
    free(b);
    free(z);
}
END_TEST

static Suite *races_suite(void)
{
    Suite *s = suite_create("file_races");
    TCase *tc = tcase_create("races");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_outcome_checker);
    tcase_add_test(tc, test_window_benign_safetensors);
    tcase_add_test(tc, test_window_polyglot_pickle_past_header);
    tcase_add_test(tc, test_window_polyglot_zip);
    tcase_add_test(tc, test_scan_path_races_thread);
    tcase_add_test(tc, test_scan_path_races_process);
    tcase_add_test(tc, test_file_open_races);
    tcase_add_test(tc, test_walk_races);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(races_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
