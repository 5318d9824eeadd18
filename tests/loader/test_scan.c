/* loader/scan through the C API: stg_scan_buffer and stg_scan_path (report fields, digest,
 * expected digest, io_error, not_regular_file, symlink_skipped, blob digests, mapped and read
 * files), stg_scan_fd (stream and buffered routes, the max_memory cap) and the tree walk
 * (order, scan-once, Hugging Face layout, threads). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader/scan.h"
#include "testutil.h"

/* SHA-256 of "abc" (FIPS 180-2 test vector). */
static const char ABC_SHA256[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static const char VALID_HEADER[] =
    "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";

/* A valid safetensors file with an 8-byte aligned data section. */
static uint8_t *valid_file(size_t *len)
{
    size_t pad = (8 - (8 + strlen(VALID_HEADER)) % 8) % 8;
    return tu_st_file(VALID_HEADER, pad, "\0\0\x80?\0\0\0@", 8, len);
}

static const char *base_name_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s != NULL ? s + 1 : p;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

START_TEST(test_buffer_fields_and_digest)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    ck_assert(opt.digest);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer("abc", 3, NULL, &opt, &r), STG_OK);
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    ck_assert_uint_eq(stg_report_size(r), 3);
    /* three letters are text: recognised, no finding */
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TEXT);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    ck_assert_ptr_null(stg_report_path(r));
    stg_report_free(r);
    ck_assert_int_eq(stg_scan_buffer("a\x01c", 3, NULL, &opt, &r), STG_OK);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_UNKNOWN);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNKNOWN), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_report_free(r);

    size_t len;
    uint8_t *b = valid_file(&len);
    ck_assert_int_eq(stg_scan_buffer(b, len, "model.safetensors", &opt, &r), STG_OK);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
    ck_assert_uint_eq(stg_report_size(r), len);
    ck_assert_uint_eq(strlen(stg_report_sha256(r)), 64);
    stg_report_free(r);

    /* --no-digest: no sha256 */
    opt.digest = false;
    ck_assert_int_eq(stg_scan_buffer(b, len, NULL, &opt, &r), STG_OK);
    ck_assert_ptr_null(stg_report_sha256(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    free(b);

    /* NULL options mean the defaults */
    ck_assert_int_eq(stg_scan_buffer("abc", 3, NULL, NULL, &r), STG_OK);
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    stg_report_free(r);
}
END_TEST

START_TEST(test_buffer_expected_digest)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *r = NULL;
    /* match, in upper case: no finding beyond the format's */
    char upper[65];
    for (int i = 0; i < 65; i++) {
        upper[i] = (char)((ABC_SHA256[i] >= 'a' && ABC_SHA256[i] <= 'f') ? ABC_SHA256[i] - 32
                                                                         : ABC_SHA256[i]);
    }
    opt.expected_sha256 = upper;
    ck_assert_int_eq(stg_scan_buffer("abc", 3, NULL, &opt, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_DIGEST_MISMATCH), -1);
    stg_report_free(r);

    /* mismatch: digest_mismatch (error, no offset); the digest is still reported */
    opt.expected_sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
    ck_assert_int_eq(stg_scan_buffer("abc", 3, NULL, &opt, &r), STG_OK);
    long i = tu_find(r, STG_DIGEST_MISMATCH);
    ck_assert_int_ge(i, 0);
    ck_assert_int_eq(stg_report_at(r, (size_t)i)->severity, STG_SEV_ERROR);
    ck_assert(!stg_report_at(r, (size_t)i)->has_offset);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    stg_report_free(r);

    /* an expected digest is checked even with digest off */
    opt.digest = false;
    ck_assert_int_eq(stg_scan_buffer("abc", 3, NULL, &opt, &r), STG_OK);
    ck_assert_int_ge(tu_find(r, STG_DIGEST_MISMATCH), 0);
    stg_report_free(r);

    /* not 64 hex digits: misuse */
    opt.expected_sha256 = "abc";
    r = (stg_report *)1;
    ck_assert_int_eq(stg_scan_buffer("abc", 3, NULL, &opt, &r), STG_E_BAD_ARG);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(stg_scan_buffer(NULL, 1, NULL, NULL, &r), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_scan_buffer("a", 1, NULL, NULL, NULL), STG_E_BAD_ARG);
    /* the empty buffer is a buffer */
    ck_assert_int_eq(stg_scan_buffer(NULL, 0, NULL, NULL, &r), STG_OK);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TEXT); /* empty: nothing to load */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    ck_assert_str_eq(stg_report_sha256(r),
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    stg_report_free(r);
}
END_TEST

/* A valid file of one U8 tensor of data_len bytes (malloc'd, *len bytes). */
static uint8_t *one_tensor_file(size_t data_len, size_t *len)
{
    char header[128];
    snprintf(header, sizeof header,
             "{\"w\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}", data_len,
             data_len);
    size_t pad = (8 - (8 + strlen(header)) % 8) % 8;
    return tu_st_file(header, pad, NULL, data_len, len);
}

static void check_file_of_size(size_t data_len)
{
    char *dir = tu_tempdir();
    char *p = path_in(dir, "big.safetensors");
    size_t len;
    uint8_t *b = one_tensor_file(data_len, &len);
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    stg_report *r = NULL, *rb = NULL;
    ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_path(r), p);
    ck_assert_ptr_null(stg_report_blob(r));
    ck_assert_uint_eq(stg_report_size(r), len);
    ck_assert_int_eq(stg_scan_buffer(b, len, NULL, NULL, &rb), STG_OK);
    ck_assert_str_eq(stg_report_sha256(r), stg_report_sha256(rb));
    stg_report_free(r);
    stg_report_free(rb);
    free(b);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(test_path_read_and_mapped)
{
    check_file_of_size(16);         /* read with pread */
    check_file_of_size(200 * 1024); /* mapped */
}
END_TEST

/* A file held whole is hashed while it is copied (ranges in file order) and the rest from
 * memory: the digest is the buffer's, whatever the order the image was filled in. */
static void check_digest_of(const char *name, const uint8_t *b, size_t len)
{
    char *dir = tu_tempdir();
    char *p = path_in(dir, name);
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    stg_report *r = NULL, *rb = NULL;
    ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
    ck_assert_int_eq(stg_scan_buffer(b, len, name, NULL, &rb), STG_OK);
    ck_assert_ptr_nonnull(stg_report_sha256(r));
    ck_assert_msg(strcmp(stg_report_sha256(r), stg_report_sha256(rb)) == 0, "%s (%zu bytes)", name,
                  len);
    ck_assert_int_eq(stg_report_verdict(r), stg_report_verdict(rb));
    stg_report_free(r);
    stg_report_free(rb);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(test_path_digest_while_copied)
{
    size_t big = ((size_t)16 << 20) + 3; /* more than one 16 MiB copy */
    uint8_t *b = malloc(big);
    ck_assert_ptr_nonnull(b);
    for (size_t i = 0; i < big; i++) {
        b[i] = (uint8_t)(i * 131u + (i >> 9));
    }
    check_digest_of("empty.bin", b, 0);
    check_digest_of("one.bin", b, 1);
    check_digest_of("big.bin", b, big);
    free(b);
    /* small safetensors files: header window, then the tail, then the rest */
    for (size_t data_len = 8; data_len <= 300000; data_len *= 7) {
        size_t len;
        uint8_t *st = one_tensor_file(data_len, &len);
        check_digest_of("w.safetensors", st, len);
        check_digest_of("w.bin", st, len);
        free(st);
    }
    static const uint8_t pickle[] = "\x80\x02}q\x00X\x01\x00\x00\x00aK\x01s.";
    check_digest_of("p.pkl", pickle, sizeof pickle - 1);
}
END_TEST

START_TEST(test_path_io_error_and_special)
{
    char *dir = tu_tempdir();
    stg_report *r = NULL;
    /* missing: io_error, verdict error, still STG_OK with a report */
    char *missing = path_in(dir, "missing.safetensors");
    ck_assert_int_eq(stg_scan_path(missing, NULL, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_IO_ERROR), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    ck_assert_str_eq(stg_report_path(r), missing);
    stg_report_free(r);

    /* a dangling link: io_error */
    char *dangling = path_in(dir, "dangling");
    ck_assert_int_eq(symlink(missing, dangling), 0);
    ck_assert_int_eq(stg_scan_path(dangling, NULL, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_IO_ERROR), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    stg_report_free(r);

    /* a FIFO: not_regular_file warning, never opened (opening it would block this test) */
    char *fifo = path_in(dir, "pipe.safetensors");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(stg_scan_path(fifo, NULL, &r), STG_OK);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_NOT_REGULAR_FILE);
    ck_assert_int_eq(stg_report_at(r, 0)->severity, STG_SEV_WARNING);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    ck_assert_ptr_null(stg_report_sha256(r));
    stg_report_free(r);

    /* a device: the same */
    ck_assert_int_eq(stg_scan_path("/dev/null", NULL, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_NOT_REGULAR_FILE), 0);
    stg_report_free(r);

    /* a directory is not a file */
    ck_assert_int_eq(stg_scan_path(dir, NULL, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_IO_ERROR), 0);
    stg_report_free(r);

    ck_assert_int_eq(stg_scan_path(NULL, NULL, &r), STG_E_BAD_ARG);
    free(missing);
    free(dangling);
    free(fifo);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(test_path_root_and_blob)
{
    char *dir = tu_tempdir();
    char *inner = path_in(dir, "root");
    ck_assert_int_eq(mkdir(inner, 0700), 0);
    char *outside = path_in(dir, "outside.bin");
    ck_assert_int_eq(tu_write_file(outside, "abc", 3), 0);
    char *link = path_in(inner, "link.bin");
    ck_assert_int_eq(symlink(outside, link), 0);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *r = NULL;
    /* without a root, a link named by the caller is followed; blob is its target */
    ck_assert_int_eq(stg_scan_path(link, &opt, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_SYMLINK_SKIPPED), -1);
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    ck_assert_ptr_nonnull(stg_report_blob(r));
    ck_assert(strstr(stg_report_blob(r), "outside.bin") != NULL);
    stg_report_free(r);
    /* with the root, it leads outside: symlink_skipped, not read */
    opt.root = inner;
    ck_assert_int_eq(stg_scan_path(link, &opt, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_SYMLINK_SKIPPED), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    ck_assert_ptr_null(stg_report_sha256(r));
    stg_report_free(r);
    opt.root = NULL;

    /* a blob named by its digest: checked; wrong content -> digest_mismatch */
    char *blobs = path_in(dir, "blobs");
    ck_assert_int_eq(mkdir(blobs, 0700), 0);
    char *good = path_in(blobs, ABC_SHA256);
    ck_assert_int_eq(tu_write_file(good, "abc", 3), 0);
    opt.digest = false; /* the name still asks for the check */
    ck_assert_int_eq(stg_scan_path(good, &opt, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_DIGEST_MISMATCH), -1);
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    stg_report_free(r);
    ck_assert_int_eq(tu_write_file(good, "abd", 3), 0);
    ck_assert_int_eq(stg_scan_path(good, &opt, &r), STG_OK);
    ck_assert_int_ge(tu_find(r, STG_DIGEST_MISMATCH), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    /* the same name outside a `blobs` folder is not a blob */
    char *plain = path_in(inner, ABC_SHA256);
    ck_assert_int_eq(tu_write_file(plain, "abd", 3), 0);
    ck_assert_int_eq(stg_scan_path(plain, &opt, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_DIGEST_MISMATCH), -1);
    stg_report_free(r);

    ck_assert(stg_scan_is_blob_name(ABC_SHA256));
    ck_assert(!stg_scan_is_blob_name("ba7816bf"));
    ck_assert(!stg_scan_is_blob_name(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015adab"));
    ck_assert(
        !stg_scan_is_blob_name("ga7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    free(inner);
    free(outside);
    free(link);
    free(blobs);
    free(good);
    free(plain);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* file_changed: a child keeps appending to the file while it is scanned, so its size differs
 * between the fstat before and the one after (the digest alone reads 8 MiB, plenty of time);
 * the near miss is the same file left alone. */
START_TEST(test_path_file_changed)
{
    char *dir = tu_tempdir();
    char *p = path_in(dir, "growing.safetensors");
    size_t data_len = 8u << 20;
    char header[128];
    snprintf(header, sizeof header,
             "{\"w\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}", data_len,
             data_len);
    size_t pad = (8 - (8 + strlen(header)) % 8) % 8;
    size_t len;
    uint8_t *b = tu_st_file(header, pad, NULL, data_len, &len);
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    free(b);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_FILE_CHANGED_CODE), -1);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);

    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(p, O_WRONLY | O_APPEND);
        for (int i = 0; i < 200000 && fd >= 0; i++) {
            if (write(fd, "x", 1) != 1) {
                break;
            }
            usleep(50);
        }
        _exit(0);
    }
    bool seen = false;
    for (int attempt = 0; attempt < 50 && !seen; attempt++) {
        ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
        long i = tu_find(r, STG_FILE_CHANGED_CODE);
        if (i >= 0) {
            seen = true;
            ck_assert_int_eq(stg_report_at(r, (size_t)i)->severity, STG_SEV_ERROR);
            ck_assert(!stg_report_at(r, (size_t)i)->has_offset);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
        }
        stg_report_free(r);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(seen, "a file growing during the scan was never reported as file_changed");
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Runs stg_scan_fd over bytes written to a pipe by a child process. */
static stg_report *scan_piped(const uint8_t *b, size_t len, const char *hint,
                              const stg_scan_options *opt)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        size_t done = 0;
        while (done < len) {
            ssize_t n = write(fds[1], b + done, len - done > 4096 ? 4096 : len - done);
            if (n <= 0) {
                _exit(1);
            }
            done += (size_t)n;
        }
        _exit(0);
    }
    close(fds[1]);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_fd(fds[0], hint != NULL ? hint : "-", hint, opt, &r), STG_OK);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return r;
}

START_TEST(test_fd_routes)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    size_t len;
    uint8_t *b = valid_file(&len);
    /* safetensors content: streamed, same verdict as the buffer */
    stg_report *r = scan_piped(b, len, NULL, &opt);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
    ck_assert_str_eq(stg_report_path(r), "-");
    stg_report *rb = NULL;
    ck_assert_int_eq(stg_scan_buffer(b, len, NULL, &opt, &rb), STG_OK);
    ck_assert_str_eq(stg_report_sha256(r), stg_report_sha256(rb));
    stg_report_free(r);
    stg_report_free(rb);

    /* other content is buffered and scanned as a buffer, with the name hint */
    r = scan_piped((const uint8_t *)"abc", 3, "upload.bin", &opt);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_MISMATCH), 0);
    ck_assert_str_eq(stg_report_path(r), "upload.bin");
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    stg_report_free(r);

    /* over max_memory: limit_exceeded at the cap, size and digest of everything read */
    size_t big = 300 * 1024;
    uint8_t *junk = malloc(big);
    memset(junk, 0x01, big); /* binary: no format claims it */
    opt.limits.max_memory = 100 * 1024;
    r = scan_piped(junk, big, NULL, &opt);
    long i = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_int_ge(i, 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)i)->limit, "max_memory");
    ck_assert_uint_eq(stg_report_at(r, (size_t)i)->offset, 100 * 1024);
    ck_assert_uint_eq(stg_report_size(r), big);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    ck_assert_int_eq(stg_scan_buffer(junk, big, NULL, NULL, &rb), STG_OK);
    ck_assert_str_eq(stg_report_sha256(r), stg_report_sha256(rb));
    stg_report_free(rb);
    stg_report_free(r);
    /* at the cap exactly: scanned, no limit finding */
    r = scan_piped(junk, 100 * 1024, NULL, &opt);
    ck_assert_int_eq(tu_find(r, STG_LIMIT_EXCEEDED), -1);
    ck_assert_int_ge(tu_find(r, STG_FORMAT_UNKNOWN), 0);
    stg_report_free(r);
    free(junk);
    free(b);

    /* a read error (a directory's descriptor: EISDIR) is io_error, verdict error */
    char *dir = tu_tempdir();
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(dfd, 0);
    ck_assert_int_eq(stg_scan_fd(dfd, "upload", NULL, &opt, &r), STG_OK);
    ck_assert_int_ge(tu_find(r, STG_IO_ERROR), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    ck_assert_str_eq(stg_report_path(r), "upload");
    stg_report_free(r);
    close(dfd);
    tu_rmtree(dir);
    free(dir);
    /* an expected digest that is not hex: misuse */
    opt.expected_sha256 = "xyz";
    ck_assert_int_eq(stg_scan_fd(0, "-", NULL, &opt, &r), STG_E_BAD_ARG);
}
END_TEST

/* A Git LFS pointer on standard input is lfs_pointer, as the same bytes in a file are, also when
 * the name hint says safetensors (which would otherwise send it to the safetensors stream). */
START_TEST(test_fd_lfs_pointer)
{
    static const char ptr[] =
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 12345\n";
    static const char *const hints[] = {NULL, "model.safetensors", "pytorch_model.bin"};
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    char *dir = tu_tempdir();
    char path[4096];
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        stg_report *r = scan_piped((const uint8_t *)ptr, sizeof ptr - 1, hints[i], &opt);
        ck_assert_msg(tu_find(r, STG_LFS_POINTER) == 0, "%s: %s",
                      hints[i] != NULL ? hints[i] : "(none)", tu_describe(r));
        ck_assert_uint_eq(stg_report_count(r), 1);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_GIT_LFS_POINTER);
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
        ck_assert_uint_eq(stg_report_size(r), sizeof ptr - 1);
        /* the same bytes as a file under the same name: the same finding and message */
        snprintf(path, sizeof path, "%s/%s", dir, hints[i] != NULL ? hints[i] : "pointer");
        ck_assert_int_eq(tu_write_file(path, ptr, sizeof ptr - 1), 0);
        stg_report *rf = NULL;
        ck_assert_int_eq(stg_scan_path(path, &opt, &rf), STG_OK);
        ck_assert_int_eq(stg_report_format(rf), STG_FMT_GIT_LFS_POINTER);
        ck_assert_uint_eq(stg_report_count(rf), 1);
        ck_assert_str_eq(stg_report_at(rf, 0)->message, stg_report_at(r, 0)->message);
        ck_assert_str_eq(stg_report_sha256(rf), stg_report_sha256(r));
        stg_report_free(rf);
        stg_report_free(r);
    }
    /* near miss: one byte short of a pointer (no size line) on a safetensors name is streamed
     * as safetensors and invalid there, not lfs_pointer */
    static const char partial[] =
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n";
    stg_report *r = scan_piped((const uint8_t *)partial, sizeof partial - 1, "model.safetensors",
                               &opt);
    ck_assert_int_eq(tu_find(r, STG_LFS_POINTER), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

typedef struct collected {
    char lines[64][512];
    size_t count;
} collected;

static void collect(void *user, const stg_report *r)
{
    collected *c = user;
    if (c->count < 64) {
        snprintf(c->lines[c->count++], 512, "%s|%s|%s|%s", stg_report_path(r),
                 stg_report_blob(r) != NULL ? stg_report_blob(r) : "",
                 stg_verdict_name(stg_report_verdict(r)), tu_describe(r));
    }
}

START_TEST(test_walk_order_threads_and_hf)
{
    char *dir = tu_tempdir();
    char cmd[8192];
    size_t len;
    uint8_t *b = valid_file(&len);
    /* models--o--n/{blobs/<digest>, snapshots/{a,b}/m.safetensors -> blob}, plus plain files */
    snprintf(cmd, sizeof cmd, "%s/models--o--n", dir);
    char *hf = strdup(cmd);
    char *blobs = path_in(hf, "blobs");
    char *snaps = path_in(hf, "snapshots");
    ck_assert_int_eq(mkdir(hf, 0700), 0);
    ck_assert_int_eq(mkdir(blobs, 0700), 0);
    ck_assert_int_eq(mkdir(snaps, 0700), 0);
    stg_report *rb = NULL;
    ck_assert_int_eq(stg_scan_buffer(b, len, NULL, NULL, &rb), STG_OK);
    char *blob = path_in(blobs, stg_report_sha256(rb));
    stg_report_free(rb);
    ck_assert_int_eq(tu_write_file(blob, b, len), 0);
    const char *snap_names[] = {"b", "a"};
    for (int i = 0; i < 2; i++) {
        char *s = path_in(snaps, snap_names[i]);
        ck_assert_int_eq(mkdir(s, 0700), 0);
        char *l = path_in(s, "m.safetensors");
        char target[256];
        snprintf(target, sizeof target, "../../blobs/%s", base_name_of(blob));
        ck_assert_int_eq(symlink(target, l), 0);
        free(s);
        free(l);
    }
    char *z = path_in(hf, "zz.txt");
    ck_assert_int_eq(tu_write_file(z, "abc", 3), 0);

    stg_walk_options wo;
    stg_walk_options_default(&wo);
    const char *paths[] = {hf};
    collected one, four;
    memset(&one, 0, sizeof one);
    memset(&four, 0, sizeof four);
    stg_walk_result res;
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &one, &res), STG_OK);
    /* the blob only under its two snapshot paths (sorted: a before b), then zz.txt */
    ck_assert_uint_eq(one.count, 3);
    ck_assert_uint_eq(res.files, 3);
    ck_assert_msg(strstr(one.lines[0], "/snapshots/a/m.safetensors|") != NULL, "%s", one.lines[0]);
    ck_assert(strstr(one.lines[0], "/blobs/") != NULL);
    ck_assert(strstr(one.lines[1], "/snapshots/b/m.safetensors|") != NULL);
    ck_assert(strstr(one.lines[2], "/zz.txt||ok|") != NULL); /* text */
    /* scanned once: bytes = blob + zz.txt */
    ck_assert_uint_eq(res.bytes, len + 3);
    ck_assert_uint_eq(res.distinct_scanned, 2);

    wo.threads = 4;
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &four, &res), STG_OK);
    ck_assert_uint_eq(four.count, one.count);
    for (size_t i = 0; i < one.count; i++) {
        ck_assert_str_eq(four.lines[i], one.lines[i]);
    }

    /* misuse: no paths, "-" twice, an expected digest over several files */
    const char *two_stdin[] = {"-", "-"};
    ck_assert_int_eq(stg_walk(paths, 0, &wo, collect, NULL, &one, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_walk(two_stdin, 2, &wo, collect, NULL, &one, NULL), STG_E_BAD_ARG);
    wo.scan.expected_sha256 = ABC_SHA256;
    memset(&one, 0, sizeof one);
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &one, NULL), STG_E_BAD_ARG);
    ck_assert_uint_eq(one.count, 0);
    const char *single[] = {z};
    ck_assert_int_eq(stg_walk(single, 1, &wo, collect, NULL, &one, NULL), STG_OK);
    ck_assert_uint_eq(one.count, 1);
    ck_assert(strstr(one.lines[0], "digest_mismatch") == NULL);

    free(b);
    free(hf);
    free(blobs);
    free(snaps);
    free(blob);
    free(z);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static bool has_line(const collected *c, const char *needle)
{
    for (size_t i = 0; i < c->count; i++) {
        if (strstr(c->lines[i], needle) != NULL) {
            return true;
        }
    }
    return false;
}

START_TEST(test_walk_links_specials_and_filters)
{
    char *dir = tu_tempdir();
    char *root = path_in(dir, "root");
    char *sub = path_in(root, "sub");
    char *outside = path_in(dir, "outside.txt");
    ck_assert_int_eq(mkdir(root, 0700), 0);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_int_eq(tu_write_file(outside, "abc", 3), 0);
    size_t len;
    uint8_t *b = valid_file(&len);
    char *a = path_in(root, "a.safetensors");
    ck_assert_int_eq(tu_write_file(a, b, len), 0);
    char *fifo = path_in(sub, "f.safetensors");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    char *l_out = path_in(root, "out.txt");
    ck_assert_int_eq(symlink(outside, l_out), 0);
    char *l_in = path_in(sub, "in.safetensors");
    ck_assert_int_eq(symlink("../a.safetensors", l_in), 0);
    char *l_cycle = path_in(sub, "up");
    ck_assert_int_eq(symlink("..", l_cycle), 0);
    char *l_dangling = path_in(root, "gone.bin");
    ck_assert_int_eq(symlink("nowhere", l_dangling), 0);

    stg_walk_options wo;
    stg_walk_options_default(&wo);
    const char *paths[] = {root};
    collected c;
    memset(&c, 0, sizeof c);
    stg_walk_result res;
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &c, &res), STG_OK);
    /* sorted: a.safetensors, gone.bin, out.txt, sub/f.safetensors, sub/in.safetensors, sub/up */
    ck_assert_uint_eq(c.count, 6);
    ck_assert_msg(strstr(c.lines[0], "/a.safetensors||ok|") != NULL, "%s", c.lines[0]);
    ck_assert_msg(strstr(c.lines[1], "/gone.bin||error|io_error") != NULL, "%s", c.lines[1]);
    ck_assert_msg(strstr(c.lines[2], "/out.txt||warn|symlink_skipped") != NULL, "%s", c.lines[2]);
    ck_assert_msg(strstr(c.lines[3], "/sub/f.safetensors||warn|not_regular_file") != NULL, "%s",
                  c.lines[3]);
    ck_assert_msg(strstr(c.lines[4], "/sub/in.safetensors|") != NULL &&
                      strstr(c.lines[4], "/a.safetensors|ok|") != NULL,
                  "%s", c.lines[4]);
    ck_assert_msg(strstr(c.lines[5], "/sub/up||warn|symlink_skipped") != NULL, "%s", c.lines[5]);
    ck_assert_uint_eq(res.bytes, len); /* a.safetensors once, through two paths */
    ck_assert_uint_eq(res.distinct_scanned, 1);

    /* include: files whose relative path or base name match; directories still walked */
    const char *inc[] = {"*.safetensors"};
    wo.include = inc;
    wo.include_count = 1;
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &c, NULL), STG_OK);
    ck_assert(!has_line(&c, "gone.bin") && !has_line(&c, "out.txt"));
    ck_assert(has_line(&c, "/sub/in.safetensors|") && has_line(&c, "/a.safetensors||"));
    /* exclude a directory by name: not walked */
    const char *exc[] = {"sub"};
    wo.include_count = 0;
    wo.exclude = exc;
    wo.exclude_count = 1;
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &c, NULL), STG_OK);
    ck_assert_uint_eq(c.count, 3);
    ck_assert(!has_line(&c, "/sub/"));
    /* a relative-path pattern */
    const char *exc2[] = {"sub/f*"};
    wo.exclude = exc2;
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &c, NULL), STG_OK);
    ck_assert_uint_eq(c.count, 5);
    ck_assert(!has_line(&c, "/sub/f.safetensors"));

    free(b);
    free(root);
    free(sub);
    free(outside);
    free(a);
    free(fifo);
    free(l_out);
    free(l_in);
    free(l_cycle);
    free(l_dangling);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Standard input gives the answer the same bytes give as a buffer, whichever route the first
 * bytes choose: buffered (not safetensors by its first chunk) or streamed (safetensors by its
 * first chunk, or by the name hint). */
typedef struct fd_case {
    const char *what;
    uint8_t *bytes;
    size_t len;
    const char *hint;
} fd_case;

static fd_case make_case(const char *what, const void *bytes, size_t len, const char *hint)
{
    fd_case c = {what, malloc(len > 0 ? len : 1), len, hint};
    if (len > 0) {
        memcpy(c.bytes, bytes, len);
    }
    return c;
}

/* 8-byte little-endian n, then body (body_len bytes), then fill bytes up to total. */
static fd_case framed_case(const char *what, uint64_t n, const char *body, size_t total, char fill)
{
    fd_case c = {what, malloc(total), total, NULL};
    for (int i = 0; i < 8; i++) {
        c.bytes[i] = (uint8_t)(n >> (8 * i));
    }
    size_t bl = strlen(body);
    memcpy(c.bytes + 8, body, bl);
    memset(c.bytes + 8 + bl, fill, total - 8 - bl);
    return c;
}

START_TEST(test_fd_same_answer_as_buffer)
{
    fd_case cases[16];
    size_t n = 0;
    cases[n++] = make_case("empty", "", 0, NULL);
    cases[n++] = make_case("length 1", "\x01\0\0\0\0\0\0\0{}", 10, NULL);
    cases[n++] = make_case("only whitespace after the length", "\x10\0\0\0\0\0\0\0 \t", 10, NULL);
    cases[n++] = make_case("leading whitespace", "\x0b\0\0\0\0\0\0\0 \t\r\n{\"a\":\"b\"}", 19,
                           NULL);
    cases[n++] = make_case("invalid JSON", "\x04\0\0\0\0\0\0\0{x}}0123", 16, NULL);
    cases[n++] = make_case("length overflows u64 + 8", "\xfc\xff\xff\xff\xff\xff\xff\xff{}", 10,
                           NULL);
    cases[n++] = make_case("length over the buffering cap", "\0\0\0\x40\0\0\0\0{}", 10, NULL);
    cases[n++] = make_case("brace after the claimed header", "\x02\0\0\0\0\0\0\0  {}", 12, NULL);
    cases[n++] = make_case("named safetensors, too small", "abc", 3, "upload.safetensors");
    cases[n++] = make_case("named safetensors, not safetensors", "PK\x05\x06 and more bytes", 20,
                           "m.safetensors");
    /* a header of 100,000 bytes claimed, the input ends at 80,000: header_truncated */
    cases[n++] = framed_case("header past the end", 100000, "{\"a\":", 80000, ' ');
    /* a header of 70,000 bytes that arrives whole (after the first 64 KiB chunk), then data */
    {
        const char *h = "{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}";
        fd_case c = framed_case("long header, whole", 70000, h, 8 + 70000 + 4, ' ');
        c.bytes[8 + 70000 - 1] = '}';
        memcpy(c.bytes + 8 + 70000, "DATA", 4);
        cases[n++] = c;
        fd_case bad = framed_case("long header, trailing data", 70000, h, 8 + 70000 + 6, ' ');
        bad.bytes[8 + 70000 - 1] = '}';
        memcpy(bad.bytes + 8 + 70000, "DATAXY", 6);
        cases[n++] = bad;
    }
    /* the first chunk (64 KiB) is all whitespace, the brace comes later: buffered, then
     * safetensors by content as a whole */
    cases[n++] = framed_case("whitespace past the first chunk", 100000, "", 70000, ' ');
    cases[n - 1].bytes[70000 - 1] = '{';
    /* 300 KiB that is no format: buffered in growing steps under the default cap */
    cases[n++] = framed_case("300 KiB of text", 0x2020202020202020u, "", 300 * 1024, 'x');
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    for (size_t i = 0; i < n; i++) {
        stg_report *rf = scan_piped(cases[i].bytes, cases[i].len, cases[i].hint, &opt);
        stg_report *rb = NULL;
        ck_assert_int_eq(stg_scan_buffer(cases[i].bytes, cases[i].len, cases[i].hint, &opt, &rb),
                         STG_OK);
        char want[4096];
        snprintf(want, sizeof want, "%s", tu_describe(rb));
        ck_assert_msg(strcmp(tu_describe(rf), want) == 0, "%s: stdin %s, buffer %s", cases[i].what,
                      tu_describe(rf), want);
        ck_assert_int_eq(stg_report_verdict(rf), stg_report_verdict(rb));
        ck_assert_msg(stg_report_format(rf) == stg_report_format(rb), "%s: format %d vs %d",
                      cases[i].what, (int)stg_report_format(rf), (int)stg_report_format(rb));
        ck_assert_uint_eq(stg_report_size(rf), cases[i].len);
        ck_assert_str_eq(stg_report_sha256(rf), stg_report_sha256(rb));
        stg_report_free(rf);
        stg_report_free(rb);
        free(cases[i].bytes);
    }
}
END_TEST

/* The buffering cap 2 x max_header_len + 8 MiB saturates: a max_header_len whose double
 * overflows u64 means no cap, never a cap wrapped down to 8 MiB. */
START_TEST(test_fd_cap_saturates)
{
    size_t big = (9u << 20) + 1;
    uint8_t *junk = malloc(big);
    memset(junk, 0x01, big); /* binary: no format claims it */
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    /* 2 x max_header_len overflows; then 2 x max_header_len + 8 MiB does */
    const uint64_t huge[] = {(UINT64_MAX / 2) + 1, UINT64_MAX / 2};
    stg_report *r = NULL;
    for (int i = 0; i < 2; i++) {
        opt.limits.max_header_len = huge[i];
        r = scan_piped(junk, big, NULL, &opt);
        ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) < 0, "%s", tu_describe(r));
        ck_assert_int_ge(tu_find(r, STG_FORMAT_UNKNOWN), 0);
        stg_report_free(r);
    }
    /* near miss: max_header_len 512 KiB gives a cap of 9 MiB, one byte short */
    opt.limits.max_header_len = 512 * 1024;
    r = scan_piped(junk, big, NULL, &opt);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset, 9u << 20);
    stg_report_free(r);
    r = scan_piped(junk, big - 1, NULL, &opt); /* at the cap */
    ck_assert_int_lt(tu_find(r, STG_LIMIT_EXCEEDED), 0);
    stg_report_free(r);
    /* over the cap with the digest off: no sha256, the size still counted */
    opt.digest = false;
    r = scan_piped(junk, big, NULL, &opt);
    ck_assert_int_ge(tu_find(r, STG_LIMIT_EXCEEDED), 0);
    ck_assert_ptr_null(stg_report_sha256(r));
    ck_assert_uint_eq(stg_report_size(r), big);
    stg_report_free(r);
    free(junk);
    ck_assert_int_eq(stg_scan_fd(0, "-", NULL, NULL, NULL), STG_E_BAD_ARG);

    /* A header running past the end of the input is header_truncated on stdin as in a buffer,
     * whatever the buffering cap: safetensors content is streamed, nothing is kept. */
    const uint64_t caps[] = {1024, 100 * 1024, 0};
    fd_case c = framed_case("header past the end", 1000000, "{\"a\":", 150 * 1024, ' ');
    for (int i = 0; i < 3; i++) {
        stg_scan_options_default(&opt);
        opt.limits.max_memory = caps[i];
        r = scan_piped(c.bytes, c.len, NULL, &opt);
        ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_HEADER_TRUNCATED) == 0, "%s",
                      tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
        ck_assert_uint_eq(stg_report_size(r), c.len);
        stg_report_free(r);
    }
    free(c.bytes);
}
END_TEST

/* stg_scan_path's arguments and scan root: "/" holds everything; a root that does not resolve is
 * io_error; a sibling whose name extends the root's is outside; a missing path under a root is
 * io_error (nothing to resolve against the root). A mapped file with the digest off has none. */
START_TEST(test_path_roots_and_arguments)
{
    char *dir = tu_tempdir();
    char *root = path_in(dir, "root");
    char *rootx = path_in(dir, "rootx");
    ck_assert_int_eq(mkdir(root, 0700), 0);
    ck_assert_int_eq(mkdir(rootx, 0700), 0);
    char *in = path_in(root, "in.bin");
    char *out = path_in(rootx, "out.bin");
    ck_assert_int_eq(tu_write_file(in, "abc", 3), 0);
    ck_assert_int_eq(tu_write_file(out, "abc", 3), 0);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(in, &opt, NULL), STG_E_BAD_ARG);
    opt.expected_sha256 = "not hex";
    r = (stg_report *)1;
    ck_assert_int_eq(stg_scan_path(in, &opt, &r), STG_E_BAD_ARG);
    ck_assert_ptr_null(r);
    opt.expected_sha256 = NULL;

    opt.root = "/";
    ck_assert_int_eq(stg_scan_path(in, &opt, &r), STG_OK);
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    ck_assert_int_lt(tu_find(r, STG_SYMLINK_SKIPPED), 0);
    stg_report_free(r);

    opt.root = root;
    ck_assert_int_eq(stg_scan_path(out, &opt, &r), STG_OK);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_SYMLINK_SKIPPED) == 0, "%s",
                  tu_describe(r));
    ck_assert_ptr_null(stg_report_sha256(r));
    stg_report_free(r);
    ck_assert_int_eq(stg_scan_path(in, &opt, &r), STG_OK);
    ck_assert_int_lt(tu_find(r, STG_SYMLINK_SKIPPED), 0);
    ck_assert_str_eq(stg_report_sha256(r), ABC_SHA256);
    stg_report_free(r);

    char *missing = path_in(root, "missing.bin");
    ck_assert_int_eq(stg_scan_path(missing, &opt, &r), STG_OK);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_IO_ERROR) == 0, "%s", tu_describe(r));
    /* with a root, a path that cannot be resolved is refused before any open (fail closed) */
    ck_assert(strstr(stg_report_at(r, 0)->message,
                     "the path could not be resolved against the scan root") != NULL);
    ck_assert_msg(strstr(stg_report_at(r, 0)->message, strerror(ENOENT)) != NULL, "%s",
                  stg_report_at(r, 0)->message);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    stg_report_free(r);
    opt.root = NULL; /* without one, the open says why */
    ck_assert_int_eq(stg_scan_path(missing, &opt, &r), STG_OK);
    ck_assert(strstr(stg_report_at(r, 0)->message, "the file could not be read") != NULL);
    stg_report_free(r);
    opt.root = root;

    char *noroot = path_in(dir, "no-such-root");
    opt.root = noroot;
    ck_assert_int_eq(stg_scan_path(in, &opt, &r), STG_OK);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_IO_ERROR) == 0, "%s", tu_describe(r));
    ck_assert(strstr(stg_report_at(r, 0)->message, "the scan root could not be resolved") != NULL);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    stg_report_free(r);
    opt.root = NULL;

    /* an empty file: read without a mapping, digest of nothing, file_too_small as a buffer */
    char *empty = path_in(dir, "empty.safetensors");
    ck_assert_int_eq(tu_write_file(empty, "", 0), 0);
    ck_assert_int_eq(stg_scan_path(empty, NULL, &r), STG_OK);
    ck_assert_uint_eq(stg_report_size(r), 0);
    ck_assert_str_eq(stg_report_sha256(r),
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    stg_report *re = NULL;
    ck_assert_int_eq(stg_scan_buffer("", 0, empty, NULL, &re), STG_OK);
    char want_empty[256];
    snprintf(want_empty, sizeof want_empty, "%s", tu_describe(re));
    ck_assert_str_eq(tu_describe(r), want_empty);
    ck_assert_int_ge(tu_find(r, STG_FILE_TOO_SMALL), 0);
    stg_report_free(re);
    stg_report_free(r);
    free(empty);

    /* a mapped file (over 64 KiB) with the digest off */
    size_t big = 100 * 1024;
    char *bigp = path_in(dir, "big.bin");
    uint8_t *junk = malloc(big);
    memset(junk, 'x', big);
    ck_assert_int_eq(tu_write_file(bigp, junk, big), 0);
    opt.digest = false;
    ck_assert_int_eq(stg_scan_path(bigp, &opt, &r), STG_OK);
    ck_assert_ptr_null(stg_report_sha256(r));
    ck_assert_uint_eq(stg_report_size(r), big);
    stg_report *rb = NULL;
    ck_assert_int_eq(stg_scan_buffer(junk, big, "big.bin", &opt, &rb), STG_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s", tu_describe(rb));
    ck_assert_str_eq(tu_describe(r), want);
    ck_assert_ptr_null(stg_report_sha256(rb));
    stg_report_free(rb);
    stg_report_free(r);
    free(junk);
    free(bigp);
    free(noroot);
    free(missing);
    free(in);
    free(out);
    free(root);
    free(rootx);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A blob is a 64-hex name (either case) directly inside a folder named exactly `blobs`. */
START_TEST(test_blob_paths)
{
    char p[256];
    snprintf(p, sizeof p, "blobs/%s", ABC_SHA256);
    ck_assert(stg_path_is_blob(p));
    snprintf(p, sizeof p, "/c/models--a--b/blobs/%s", ABC_SHA256);
    ck_assert(stg_path_is_blob(p));
    char upper[65];
    for (int i = 0; i < 65; i++) {
        upper[i] = (char)((ABC_SHA256[i] >= 'a' && ABC_SHA256[i] <= 'f') ? ABC_SHA256[i] - 32
                                                                         : ABC_SHA256[i]);
    }
    ck_assert(stg_scan_is_blob_name(upper));
    snprintf(p, sizeof p, "x/blobs/%s", upper);
    ck_assert(stg_path_is_blob(p));
    ck_assert(!stg_path_is_blob(ABC_SHA256)); /* no folder */
    snprintf(p, sizeof p, "xlobs/%s", ABC_SHA256);
    ck_assert(!stg_path_is_blob(p));
    snprintf(p, sizeof p, "ablobs/%s", ABC_SHA256);
    ck_assert(!stg_path_is_blob(p));
    snprintf(p, sizeof p, "blobs/x%s", ABC_SHA256 + 1);
    ck_assert(!stg_path_is_blob(p));
    ck_assert_str_eq(stg_path_base("a/b/c"), "c");
    ck_assert_str_eq(stg_path_base("c"), "c");
    ck_assert(stg_path_inside("/a/b", "/a"));
    ck_assert(stg_path_inside("/a", "/a"));
    ck_assert(!stg_path_inside("/ab", "/a"));
    ck_assert(stg_path_inside("/anything", "/"));
}
END_TEST

/* A file rewritten in place (same size, new modification time) or replaced by a rename while it
 * is scanned is file_changed, through stg_scan_path (following links) and through the walk (not
 * following a final link). A child process keeps changing it; the scans retry until one
 * overlaps a change. */
static bool scan_sees_change(const char *p, bool via_walk)
{
    stg_report *r = NULL;
    bool seen = false;
    if (!via_walk) {
        ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
        seen = tu_find(r, STG_FILE_CHANGED_CODE) >= 0;
        if (seen) {
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
        }
        stg_report_free(r);
        return seen;
    }
    collected c;
    memset(&c, 0, sizeof c);
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    const char *paths[] = {p};
    ck_assert_int_eq(stg_walk(paths, 1, &wo, collect, NULL, &c, NULL), STG_OK);
    ck_assert_uint_eq(c.count, 1);
    return strstr(c.lines[0], "file_changed") != NULL;
}

START_TEST(test_path_rewritten_or_replaced)
{
    char *dir = tu_tempdir();
    char *p = path_in(dir, "model.safetensors");
    char *tmp = path_in(dir, "next.tmp");
    size_t data_len = 8u << 20;
    char header[128];
    snprintf(header, sizeof header,
             "{\"w\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}", data_len,
             data_len);
    size_t pad = (8 - (8 + strlen(header)) % 8) % 8;
    size_t len;
    uint8_t *b = tu_st_file(header, pad, NULL, data_len, &len);
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    for (int mode = 0; mode < 2; mode++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            for (int i = 0; i < 200000; i++) {
                if (mode == 0) { /* the same byte, in place: only the mtime moves */
                    int fd = open(p, O_WRONLY);
                    if (fd < 0 || pwrite(fd, "\0", 1, (off_t)(len - 1)) != 1) {
                        _exit(1);
                    }
                    close(fd);
                } else if (tu_write_file(tmp, b, len) != 0 || rename(tmp, p) != 0) {
                    _exit(1);
                }
                usleep(mode == 0 ? 50 : 500);
            }
            _exit(0);
        }
        bool seen_path = false, seen_walk = false;
        for (int attempt = 0; attempt < 100 && !(seen_path && seen_walk); attempt++) {
            seen_path = seen_path || scan_sees_change(p, false);
            seen_walk = seen_walk || scan_sees_change(p, true);
        }
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        ck_assert_msg(seen_path && seen_walk, "mode %d: path %d, walk %d", mode, seen_path,
                      seen_walk);
    }
    /* near miss: left alone, the same file is ok */
    ck_assert_int_eq(tu_write_file(p, b, len), 0);
    ck_assert(!scan_sees_change(p, false));
    ck_assert(!scan_sees_change(p, true));
    free(b);
    free(p);
    free(tmp);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A buffer has no folder: side files an NDArrayWrapper names are unresolved (error), at the
 * name's offset with the name as member; the same pickle naming none has no such finding. */
START_TEST(test_buffer_joblib_side_unresolved)
{
    static const char pk[] = "\x80\x02"
                             "cjoblib.numpy_pickle\nNDArrayWrapper\n)\x81"
                             "}(X\x08\0\0\0filenameX\x05\0\0\0a.npyub.";
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(pk, sizeof pk - 1, NULL, &opt, &r), STG_OK);
    const stg_finding *f = NULL;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        if (stg_report_at(r, i)->code == STG_JOBLIB_SIDE_FILE_UNRESOLVED) {
            f = stg_report_at(r, i);
        }
    }
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, 2 + 36 + 2 + 20);
    ck_assert_str_eq(f->member, "a.npy");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    static const char other[] = "\x80\x02"
                                "cjoblib.numpy_pickle\nNumpyArrayWrapper\n)\x81"
                                "}(X\x08\0\0\0filenameX\x05\0\0\0a.npyub.";
    ck_assert_int_eq(stg_scan_buffer(other, sizeof other - 1, NULL, &opt, &r), STG_OK);
    for (size_t i = 0; i < stg_report_count(r); i++) {
        ck_assert_int_ne(stg_report_at(r, i)->code, STG_JOBLIB_SIDE_FILE_UNRESOLVED);
    }
    stg_report_free(r);
}
END_TEST

static Suite *scan_suite(void)
{
    Suite *s = suite_create("scan");
    TCase *tc = tcase_create("scan");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_buffer_fields_and_digest);
    tcase_add_test(tc, test_buffer_expected_digest);
    tcase_add_test(tc, test_path_read_and_mapped);
    tcase_add_test(tc, test_path_digest_while_copied);
    tcase_add_test(tc, test_path_io_error_and_special);
    tcase_add_test(tc, test_path_root_and_blob);
    tcase_add_test(tc, test_path_file_changed);
    tcase_add_test(tc, test_fd_routes);
    tcase_add_test(tc, test_fd_lfs_pointer);
    tcase_add_test(tc, test_walk_order_threads_and_hf);
    tcase_add_test(tc, test_walk_links_specials_and_filters);
    tcase_add_test(tc, test_fd_same_answer_as_buffer);
    tcase_add_test(tc, test_fd_cap_saturates);
    tcase_add_test(tc, test_path_roots_and_arguments);
    tcase_add_test(tc, test_blob_paths);
    tcase_add_test(tc, test_path_rewritten_or_replaced);
    tcase_add_test(tc, test_buffer_joblib_side_unresolved);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(scan_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
