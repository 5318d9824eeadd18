/* dispatch/polyglot: safetensors carrying a zip (polyglot_zip), safetensors whose first bytes
 * are a pickle (polyglot_pickle), a pickle followed by a zip (bypass class 17); strict scans the
 * payload, compat only reports it. Offsets and members asserted; near misses for each. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "dispatch/check.h"
#include "dispatch/polyglot.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"
#include "zipbuild.h"

#define B(s) (const uint8_t *)(s), sizeof(s) - 1

static const char EVIL[] = "\x80\x02"
                           "cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.";

/* 8-aligned header with one U8 tensor of 8 bytes. */
static const char HEADER[] = "{\"t\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}   ";

static stg_report *check_profile(const void *buf, size_t len, const char *name, stg_profile p)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = p;
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_buffer(buf, len, name, &ctx);
    stg_report_finish(r);
    return r;
}

static const stg_finding *first(const stg_report *r, stg_code code)
{
    long i = tu_find(r, code);
    ck_assert_msg(i >= 0, "no %s in %s", stg_code_name(code), tu_describe(r));
    return stg_report_at(r, (size_t)i);
}

/* safetensors file + a zip appended after its data section */
static uint8_t *st_with_zip(size_t *len, size_t *zip_at, uint64_t *local)
{
    size_t st_len;
    uint8_t *st = tu_st_file(HEADER, 0, "ABCDEFGH", 8, &st_len);
    zb_entry e = zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1);
    size_t z_len;
    uint64_t offs[1];
    uint8_t *z = zb_build(&e, 1, NULL, &z_len, offs);
    uint8_t *all = malloc(st_len + z_len);
    memcpy(all, st, st_len);
    memcpy(all + st_len, z, z_len);
    *len = st_len + z_len;
    *zip_at = st_len;
    *local = offs[0];
    free(st);
    free(z);
    return all;
}

START_TEST(test_plain_safetensors_is_no_polyglot)
{
    size_t len;
    uint8_t *st = tu_st_file(HEADER, 0, "ABCDEFGH", 8, &len);
    stg_report *r = check_profile(st, len, "m.safetensors", STG_PROFILE_STRICT);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    free(st);
    /* near miss: an end-record signature in tensor data that leads nowhere */
    uint8_t data[32];
    memset(data, 0, sizeof data);
    memcpy(data + 4, "PK\x05\x06", 4);
    static const char h32[] = "{\"t\":{\"dtype\":\"U8\",\"shape\":[32],\"data_offsets\":[0,32]}}";
    st = tu_st_file(h32, (8 - (sizeof h32 - 1) % 8) % 8, data, sizeof data, &len);
    r = check_profile(st, len, NULL, STG_PROFILE_STRICT);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_ZIP), -1);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    free(st);
}
END_TEST

START_TEST(test_polyglot_zip_strict)
{
    size_t len, zip_at;
    uint64_t local;
    uint8_t *p = st_with_zip(&len, &zip_at, &local);
    stg_report *r = check_profile(p, len, "model.safetensors", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
    const stg_finding *f = first(r, STG_POLYGLOT_ZIP);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, zip_at);
    /* strict scans the archive's members */
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "archive/data.pkl");
    ck_assert_uint_eq(f->member_offset, zip_at + local);
    ck_assert_uint_eq(f->offset, 2);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(p);
}
END_TEST

START_TEST(test_polyglot_zip_compat)
{
    size_t len, zip_at;
    uint64_t local;
    uint8_t *p = st_with_zip(&len, &zip_at, &local);
    stg_report *r = check_profile(p, len, NULL, STG_PROFILE_COMPAT);
    const stg_finding *f = first(r, STG_POLYGLOT_ZIP);
    ck_assert_int_eq(f->severity, STG_SEV_WARNING);
    ck_assert_uint_eq(f->offset, zip_at);
    /* compat scans no payload */
    ck_assert_int_eq(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS), -1);
    ck_assert_uint_eq(stg_report_global_count(r), 0);
    stg_report_free(r);
    free(p);
}
END_TEST

START_TEST(test_polyglot_pickle)
{
    /* Header length 0x2e4e: its first two bytes are NONE and STOP, so a pickle reader starting at
     * offset 0 returns None. The header itself is valid JSON padded with spaces. */
    size_t n = 0x2e4e;
    char *header = malloc(n + 1);
    memset(header, ' ', n);
    static const char obj[] = "{\"__metadata__\":{\"k\":\"v\"}}";
    memcpy(header, obj, sizeof obj - 1);
    header[n] = '\0';
    size_t len;
    uint8_t *st = tu_st_file(header, 0, NULL, 0, &len);
    ck_assert_uint_eq(st[0], 'N');
    ck_assert_uint_eq(st[1], '.');
    for (int strict = 0; strict <= 1; strict++) {
        stg_report *r = check_profile(st, len, NULL,
                                      strict ? STG_PROFILE_STRICT : STG_PROFILE_COMPAT);
        const stg_finding *f = first(r, STG_POLYGLOT_PICKLE);
        ck_assert_int_eq(f->severity, strict ? STG_SEV_ERROR : STG_SEV_WARNING);
        ck_assert_uint_eq(f->offset, 0);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
        stg_report_free(r);
    }
    free(st);
    /* near miss: 0x2e50 starts with PERSID, which needs a newline that never comes */
    n = 0x2e50;
    header = realloc(header, n + 1);
    memset(header, ' ', n);
    memcpy(header, obj, sizeof obj - 1);
    header[n] = '\0';
    st = tu_st_file(header, 0, NULL, 0, &len);
    stg_report *r = check_profile(st, len, NULL, STG_PROFILE_STRICT);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_PICKLE), -1);
    stg_report_free(r);
    free(st);
    free(header);
}
END_TEST

START_TEST(test_pickle_then_zip)
{
    /* Bypass class 17: a loader reads the pickle at offset 0; zip tools read the archive at the
     * end. Both are scanned (in both profiles) and the archive is reported. */
    static const char BENIGN[] = "\x80\x02"
                                 "ccollections\nOrderedDict\nq\x00)Rq\x01.";
    zb_entry e = zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1);
    size_t z_len;
    uint64_t offs[1];
    uint8_t *z = zb_build(&e, 1, NULL, &z_len, offs);
    size_t len = sizeof BENIGN - 1 + z_len;
    uint8_t *p = malloc(len);
    memcpy(p, BENIGN, sizeof BENIGN - 1);
    memcpy(p + sizeof BENIGN - 1, z, z_len);
    for (int strict = 0; strict <= 1; strict++) {
        stg_report *r = check_profile(p, len, "model.pt",
                                      strict ? STG_PROFILE_STRICT : STG_PROFILE_COMPAT);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_PICKLE);
        const stg_finding *f = first(r, STG_POLYGLOT_ZIP);
        ck_assert_uint_eq(f->offset, sizeof BENIGN - 1);
        ck_assert_int_eq(f->severity, strict ? STG_SEV_ERROR : STG_SEV_WARNING);
        f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
        ck_assert_str_eq(f->member, "archive/data.pkl");
        ck_assert_uint_eq(f->member_offset, sizeof BENIGN - 1);
        stg_report_free(r);
    }
    /* near miss: the pickle alone */
    stg_report *r = check_profile(BENIGN, sizeof BENIGN - 1, NULL, STG_PROFILE_STRICT);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_ZIP), -1);
    stg_report_free(r);
    free(p);
    free(z);
}
END_TEST

START_TEST(test_legacy_then_zip)
{
    /* A legacy torch file (magic, protocol, sys_info, object, storage keys) with an archive
     * appended: routed as torch-legacy, the archive reported and scanned. */
    static const char legacy[] = "\x80\x02\x8a\nl\xfc\x9c"
                                 "F\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.\x80\x02}q\x00."
                                 "\x80\x02}q\x00.\x80\x02]q\x00.";
    zb_entry e = zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1);
    size_t z_len;
    uint8_t *z = zb_build(&e, 1, NULL, &z_len, NULL);
    size_t len = sizeof legacy - 1 + z_len;
    uint8_t *p = malloc(len);
    memcpy(p, legacy, sizeof legacy - 1);
    memcpy(p + sizeof legacy - 1, z, z_len);
    stg_report *r = check_profile(p, len, "old.pt", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_LEGACY);
    ck_assert_uint_eq(first(r, STG_POLYGLOT_ZIP)->offset, sizeof legacy - 1);
    ck_assert_str_eq(first(r, STG_PICKLE_GLOBAL_DANGEROUS)->member, "archive/data.pkl");
    stg_report_free(r);
    /* near miss: the legacy file alone */
    r = check_profile(legacy, sizeof legacy - 1, "old.pt", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_LEGACY);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_ZIP), -1);
    stg_report_free(r);
    free(p);
    free(z);
}
END_TEST

START_TEST(test_direct_call)
{
    /* The entry point stg_validate_buffer uses: findings land in the given report. */
    size_t len, zip_at;
    uint64_t local;
    uint8_t *p = st_with_zip(&len, &zip_at, &local);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_polyglot_check_safetensors(p, len, &ctx);
    stg_report_finish(r);
    ck_assert_uint_eq(tu_count(r, STG_POLYGLOT_ZIP), 1);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_PICKLE), -1);
    stg_report_free(r);
    free(p);
}
END_TEST

START_TEST(test_zip_offset_overflow_not_first_byte)
{
    /* Regression: an entry whose ZIP64 local-header offset wraps when the bytes before the
     * archive are added (here to 2) was taken for the archive's first byte, so polyglot_zip
     * pointed into the safetensors header. The first byte is the lowest real local header;
     * the broken entry is zip_malformed at its central header. */
    size_t st_len;
    uint8_t *st = tu_st_file(HEADER, 0, "ABCDEFGH", 8, &st_len);
    zb_entry e[2] = {zb_file("a.txt", "hello", 5), zb_file("b.pkl", EVIL, sizeof EVIL - 1)};
    zb_opts o = {.zip64 = true};
    size_t z_len;
    uint64_t offs[2];
    uint8_t *z = zb_build(e, 2, &o, &z_len, offs);
    size_t len = st_len + z_len;
    uint8_t *p = malloc(len);
    memcpy(p, st, st_len);
    memcpy(p + st_len, z, z_len);
    /* entry 0's central header: right after the second entry's data */
    size_t cd0 = st_len + (size_t)offs[1] + 30 + 5 + 20 + (sizeof EVIL - 1);
    ck_assert(memcmp(p + cd0, "PK\x01\x02", 4) == 0);
    uint64_t wrap = UINT64_MAX - (uint64_t)st_len + 3; /* st_len + wrap = 2^64 + 2 */
    for (int i = 0; i < 8; i++) {
        p[cd0 + 46 + 5 + 4 + 16 + (size_t)i] = (uint8_t)(wrap >> (8 * i));
    }
    stg_report *r = check_profile(p, len, "model.safetensors", STG_PROFILE_STRICT);
    const stg_finding *f = first(r, STG_POLYGLOT_ZIP);
    ck_assert_uint_eq(f->offset, st_len + offs[1]);
    f = first(r, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, cd0);
    ck_assert_str_eq(f->member, "a.txt");
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "b.pkl");
    stg_report_free(r);
    free(p);
    free(z);
    free(st);
}
END_TEST

START_TEST(test_zip64_placeholder_without_extra_not_first_byte)
{
    /* Regression: a central header whose offset field is the ZIP64 placeholder but which has
     * no ZIP64 extra field gives no local header offset; it was read as 0, so polyglot_zip
     * pointed at the file's first byte. It must point at the lowest real local header. */
    size_t st_len;
    uint8_t *st = tu_st_file(HEADER, 0, "ABCDEFGH", 8, &st_len);
    zb_entry e[2] = {zb_file("a.txt", "hello", 5), zb_file("b.txt", "world", 5)};
    size_t z_len;
    uint64_t offs[2];
    uint8_t *z = zb_build(e, 2, NULL, &z_len, offs);
    size_t len = st_len + z_len;
    uint8_t *p = malloc(len);
    memcpy(p, st, st_len);
    memcpy(p + st_len, z, z_len);
    /* entry 0's central header: right after the second entry's data (no extra fields) */
    size_t cd0 = st_len + (size_t)offs[1] + 30 + 5 + 5;
    ck_assert(memcmp(p + cd0, "PK\x01\x02", 4) == 0);
    memset(p + cd0 + 42, 0xff, 4);
    stg_report *r = check_profile(p, len, "model.safetensors", STG_PROFILE_STRICT);
    const stg_finding *f = first(r, STG_POLYGLOT_ZIP);
    ck_assert_uint_eq(f->offset, st_len + offs[1]);
    f = first(r, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, cd0);
    stg_report_free(r);
    free(p);
    free(z);
    free(st);
}
END_TEST

/* A tar whose first header's name field starts with `magic` (a zip end record, "PK\5\6", whose
 * comment runs to the end of the buffer): one empty member, then the end blocks. */
static uint8_t *zip_end_tar(const char *magic, size_t *len)
{
    *len = 3 * 512;
    uint8_t *b = calloc(1, *len);
    ck_assert_ptr_nonnull(b);
    memcpy(b, magic, 4);
    b[20] = (uint8_t)((*len - 22) & 0xff);
    b[21] = (uint8_t)((*len - 22) >> 8);
    memcpy(b + 100,
           "0000644\0"
           "0001750\0"
           "0001750\0"
           "00000000000\0"
           "14000000000\0",
           44);
    b[156] = '0';
    memcpy(b + 257,
           "ustar\0"
           "00",
           8);
    tu_tar_checksum(b);
    return b;
}

START_TEST(test_zip_end_record_that_is_a_tar)
{
    size_t len;
    uint8_t *b = zip_end_tar("PK\5\6", &len);
    stg_report *r = check_profile(b, len, NULL, STG_PROFILE_STRICT);
    const stg_finding *f = first(r, STG_POLYGLOT_TAR);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->offset, 0);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    stg_report_free(r);
    r = check_profile(b, len, NULL, STG_PROFILE_COMPAT);
    f = first(r, STG_POLYGLOT_TAR);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, STG_SEV_WARNING);
    stg_report_free(r);
    free(b);
    /* near miss: a local header at byte 0 sends torch.load to its zip reader, never to tarfile */
    b = zip_end_tar("PK\3\4", &len);
    r = check_profile(b, len, NULL, STG_PROFILE_STRICT);
    ck_assert_int_lt(tu_find(r, STG_POLYGLOT_TAR), 0);
    stg_report_free(r);
    free(b);
}
END_TEST

/* A sparse safetensors file: one U8 tensor over data_len zero bytes, the header padded with
 * spaces until its length's low byte is low_byte; `extra` (when not NULL) is written at
 * data offset extra_at. Returns the path (in dir; free it). */
static char *sparse_safetensors(const char *dir, uint8_t low_byte, uint64_t data_len,
                                const char *extra, uint64_t extra_at)
{
    char json[160];
    int jl = snprintf(json, sizeof json,
                      "{\"w\":{\"dtype\":\"U8\",\"shape\":[%llu],\"data_offsets\":[0,%llu]}}",
                      (unsigned long long)data_len, (unsigned long long)data_len);
    size_t n = (size_t)jl;
    while ((n & 0xff) != low_byte) {
        n++;
    }
    uint8_t *head = malloc(8 + n);
    ck_assert_ptr_nonnull(head);
    for (int i = 0; i < 8; i++) {
        head[i] = (uint8_t)((uint64_t)n >> (8 * i));
    }
    memset(head + 8, ' ', n);
    memcpy(head + 8, json, (size_t)jl);
    char *path = malloc(strlen(dir) + 32);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s/sparse.safetensors", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(head, 1, 8 + n, f), 8 + n);
    if (extra != NULL) {
        ck_assert_int_eq(fseeko(f, (off_t)(8 + n + extra_at), SEEK_SET), 0);
        ck_assert_uint_eq(fwrite(extra, 1, strlen(extra), f), strlen(extra));
    }
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(truncate(path, (off_t)(8 + n + data_len)), 0);
    free(head);
    return path;
}

/* Scans path with at most cap bytes held (max_inflate_bytes bounds the image: more would be
 * limit_exceeded). */
static stg_report *scan_capped(const char *path, uint64_t cap, bool digest)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = digest;
    opt.limits.max_inflate_bytes = cap;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(path, &opt, &r), STG_OK);
    return r;
}

/* Issue 24: a 3 GiB file whose header length's low byte is 0x50 (PERSID) and whose data is
 * zeros was copied whole by the pickle probe (limit_exceeded past max_inflate_bytes). The
 * readers of a file's first pickle set no persistent_load: the probe settles at byte 0, so the
 * file is ok with 1 MiB held (the header plus the two 64 KiB windows). */
START_TEST(test_persid_first_byte_sparse_file_ok)
{
    char *dir = tu_tempdir();
    char *path = sparse_safetensors(dir, 0x50, (uint64_t)3 << 30, NULL, 0);
    stg_report *r = scan_capped(path, (uint64_t)1 << 20, false);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    ck_assert_uint_eq(stg_report_size(r), ((uint64_t)3 << 30) + 8 + 0x50);
    stg_report_free(r);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The same with 0x56 (UNICODE, a text line that zero bytes do not end): the zeros are read
 * through a small buffer, never held. Under 1 MiB held the 64 MiB file still passes (warn: the
 * header length 0x56 is not a multiple of 8), and its digest (the zeros passed over are hashed
 * as they are read) is the file's. */
START_TEST(test_text_line_over_zero_data_held_bounded)
{
    char *dir = tu_tempdir();
    char *path = sparse_safetensors(dir, 0x56, (uint64_t)64 << 20, NULL, 0);
    stg_report *r = scan_capped(path, (uint64_t)1 << 20, true);
    size_t len;
    uint8_t *buf = tu_read_file(path, &len);
    char want[65];
    ck_assert_int_eq(stg_sha256_hex(buf, len, want), STG_OK);
    free(buf);
    ck_assert_ptr_nonnull(stg_report_sha256(r));
    ck_assert_str_eq(stg_report_sha256(r), want);
    ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) == -1, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_HEADER_NOT_PADDED);
    stg_report_free(r);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Scans path capped at cap bytes held, and its bytes as a buffer: no limit is hit, a polyglot
 * pickle is found in both exactly when polyglot, and verdicts and digests agree. */
static void file_scan_as_buffer_scan(const char *path, uint64_t cap, bool polyglot)
{
    stg_report *r = scan_capped(path, cap, true);
    ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) == -1, "%s", tu_describe(r));
    ck_assert_msg((tu_find(r, STG_POLYGLOT_PICKLE) >= 0) == polyglot, "%s", tu_describe(r));
    size_t len;
    uint8_t *buf = tu_read_file(path, &len);
    stg_report *b = NULL;
    ck_assert_int_eq(stg_scan_buffer(buf, len, "sparse.safetensors", NULL, &b), STG_OK);
    ck_assert_msg((tu_find(b, STG_POLYGLOT_PICKLE) >= 0) == polyglot, "%s", tu_describe(b));
    ck_assert_int_eq(stg_report_verdict(b), stg_report_verdict(r));
    ck_assert_ptr_nonnull(stg_report_sha256(r));
    ck_assert_str_eq(stg_report_sha256(b), stg_report_sha256(r));
    stg_report_free(b);
    free(buf);
    stg_report_free(r);
}

/* Near miss: the line ends after 32 MiB of zeros and a STOP follows: pickle.load returns the
 * string, so it is a polyglot pickle, found by the file scan (zeros passed over, 1 MiB held)
 * as by the buffer scan over the same bytes; with PERSID first (0x50) no reader runs it. */
START_TEST(test_text_line_ends_after_zero_run)
{
    char *dir = tu_tempdir();
    uint64_t data_len = ((uint64_t)32 << 20) + (1u << 20);
    for (int persid = 0; persid <= 1; persid++) {
        char *path = sparse_safetensors(dir, persid ? 0x50 : 0x56, data_len, "\n.",
                                        (uint64_t)32 << 20);
        file_scan_as_buffer_scan(path, (uint64_t)1 << 20, !persid);
        free(path);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Fills the data of a sparse_safetensors file (after its 8 + header_len bytes) with byte v. */
static void fill_data(const char *path, uint64_t data_len, uint8_t v)
{
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    uint8_t head[8];
    ck_assert_uint_eq(fread(head, 1, 8, f), 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) {
        n = (n << 8) | head[i];
    }
    ck_assert_int_eq(fseeko(f, (off_t)(8 + n), SEEK_SET), 0);
    static uint8_t chunk[1 << 16];
    memset(chunk, v, sizeof chunk);
    for (uint64_t done = 0; done < data_len;) {
        size_t k = data_len - done < sizeof chunk ? (size_t)(data_len - done) : sizeof chunk;
        ck_assert_uint_eq(fwrite(chunk, 1, k, f), k);
        done += k;
    }
    ck_assert_int_eq(fclose(f), 0);
}

/* 0x56 (UNICODE) first and data without a '\n' that is not zeros (tensors of ones: 0x3f800000
 * holds none): no reader ends that line, so the walk of the whole file fails on it. The probe
 * looks for a '\n' through a small buffer and, finding none, holds nothing more: 24 MiB pass
 * under 1 MiB held, digest exact. Near miss: a '\n' and STOP at 20 MiB make it a polyglot
 * pickle, found as the buffer scan finds it (with room to hold the line). */
START_TEST(test_text_line_over_newline_free_data)
{
    char *dir = tu_tempdir();
    uint64_t data_len = (uint64_t)24 << 20;
    for (int newline = 0; newline <= 1; newline++) {
        char *path = sparse_safetensors(dir, 0x56, data_len, NULL, 0);
        fill_data(path, data_len, 0x3f);
        if (newline) {
            FILE *f = fopen(path, "r+b");
            ck_assert_ptr_nonnull(f);
            ck_assert_int_eq(fseeko(f, (off_t)(8 + 0x56 + ((uint64_t)20 << 20)), SEEK_SET), 0);
            ck_assert_uint_eq(fwrite("\n.", 1, 2, f), 2);
            ck_assert_int_eq(fclose(f), 0);
        }
        file_scan_as_buffer_scan(path, newline ? (uint64_t)64 << 20 : (uint64_t)1 << 20, newline);
        free(path);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The probe of loader/window.c stops copying once a walk of the prefix settles: every cut of a
 * pickle that runs to STOP at its end must say the walk ran out, wherever the cut falls (a
 * GLOBAL cut between or inside its two lines was taken as settled, so a GLOBAL straddling a
 * window's end hid the rest of a polyglot pickle). PERSID and BINPERSID settle at once: a
 * file's first pickle has no persistent_load. */
START_TEST(test_sniff_file_cut_anywhere_runs_out)
{
#define PK(lit)                                 \
    {                                           \
        (const uint8_t *)(lit), sizeof(lit) - 1 \
    }
    static const struct {
        const uint8_t *b;
        size_t len;
    } pickles[] = {
        PK("\x80\x02"
           "cos\nsystem\nX\x02\x00\x00\x00id\x85R."),
        PK("(ios\nsystem\nS'id'\np0\n."),
        PK("Vheader\x00\x00zeros\n(lp0\nI1\naF2.5\na."),
    };
#undef PK
    for (size_t p = 0; p < sizeof pickles / sizeof pickles[0]; p++) {
        const uint8_t *b = pickles[p].b;
        size_t len = pickles[p].len, end = 0;
        bool ran_out = true, oom = false;
        ck_assert_msg(stg_pickle_sniff_file(b, len, len, &end, &ran_out, NULL, &oom), "pickle %zu",
                      p);
        ck_assert_uint_eq(end, len);
        ck_assert(!ran_out);
        for (size_t k = 1; k < len; k++) {
            ck_assert_msg(!stg_pickle_sniff_file(b, k, len, &end, &ran_out, NULL, &oom) && ran_out,
                          "pickle %zu cut at %zu did not run out", p, k);
        }
    }
    static const char persid[] = "P0\n.", binpersid[] = "Vx\nQ.";
    bool ran_out = true, oom = false;
    size_t end = 0;
    ck_assert(stg_pickle_sniff((const uint8_t *)persid, 4, &end, &oom)); /* any reader */
    ck_assert(!stg_pickle_sniff_file((const uint8_t *)persid, 4, 4, &end, &ran_out, NULL, &oom));
    ck_assert(!ran_out);
    ck_assert(!stg_pickle_sniff_file((const uint8_t *)persid, 1, 4, &end, &ran_out, NULL, &oom));
    ck_assert(!ran_out); /* settled at byte 0: nothing after PERSID is read */
    ck_assert(stg_pickle_sniff((const uint8_t *)binpersid, 5, &end, &oom));
    ck_assert(!stg_pickle_sniff_file((const uint8_t *)binpersid, 5, 5, &end, &ran_out, NULL, &oom));
    ck_assert(!ran_out);
}
END_TEST

/* A counted argument (FRAME, BINUNICODE, ...) ending past the file's end settles the walk: no
 * longer prefix can hold it (a safetensors length starting 0x95 is a FRAME whose 8-byte length
 * takes the header's '{': 0x7b << 56 bytes). One ending inside the file does not. */
START_TEST(test_sniff_file_counted_past_file_end_settles)
{
    static const uint8_t frame[16] = {0x95, 0x50, 0,   0,   0,   0,   0,   0,
                                      '{',  '"',  'a', '"', ':', ' ', ' ', ' '};
    static const uint8_t binuni[16] = {'X', 100, 0,   0,   0,   'a', 'b', 'c',
                                       'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'};
    bool ran_out = false, oom = false;
    size_t end = 0;
    ck_assert(!stg_pickle_sniff_file(frame, 16, (uint64_t)6 << 30, &end, &ran_out, NULL, &oom));
    ck_assert(!ran_out);
    ck_assert(!stg_pickle_sniff_file(binuni, 16, 104, &end, &ran_out, NULL, &oom));
    ck_assert(!ran_out); /* 5 + 100 bytes needed, 104 in the file */
    ck_assert(!stg_pickle_sniff_file(binuni, 16, 105, &end, &ran_out, NULL, &oom));
    ck_assert(ran_out); /* near miss: the string may end inside the file */
    ck_assert(!stg_pickle_sniff_window(binuni, 16, &end, &ran_out, &oom));
    ck_assert(ran_out); /* the file's size unknown */
}
END_TEST

static Suite *polyglot_suite(void)
{
    Suite *s = suite_create("polyglot");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_plain_safetensors_is_no_polyglot);
    tcase_add_test(tc, test_polyglot_zip_strict);
    tcase_add_test(tc, test_polyglot_zip_compat);
    tcase_add_test(tc, test_polyglot_pickle);
    tcase_add_test(tc, test_pickle_then_zip);
    tcase_add_test(tc, test_legacy_then_zip);
    tcase_add_test(tc, test_direct_call);
    tcase_add_test(tc, test_zip_offset_overflow_not_first_byte);
    tcase_add_test(tc, test_zip64_placeholder_without_extra_not_first_byte);
    tcase_add_test(tc, test_zip_end_record_that_is_a_tar);
    tcase_add_test(tc, test_persid_first_byte_sparse_file_ok);
    tcase_add_test(tc, test_text_line_over_newline_free_data);
    tcase_add_test(tc, test_text_line_over_zero_data_held_bounded);
    tcase_add_test(tc, test_text_line_ends_after_zero_run);
    tcase_add_test(tc, test_sniff_file_cut_anywhere_runs_out);
    tcase_add_test(tc, test_sniff_file_counted_past_file_end_settles);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(polyglot_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
