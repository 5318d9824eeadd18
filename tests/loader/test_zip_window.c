/* Windowed reading of zip archives (loader/zip_window.c): a zip file is held as its directory,
 * local headers, member heads and the members the rules read as bytes, and its report is the
 * one the whole file gives. Every zip of corpus/ and tests/data/, and archives built here to
 * reach each rule of zip_window.c, are scanned both ways (threshold 0: windows; threshold
 * UINT64_MAX: the whole file) and the reports compared in full: verdict, format, size, digest,
 * every finding field and every global. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "loader/window.h"
#include "testutil.h"
#include "zipbuild.h"

/* ------------------------------------------------------------------ report text */

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        while (cap < t->len + n + 1) {
            cap *= 2;
        }
        t->p = realloc(t->p, cap);
        ck_assert_ptr_nonnull(t->p);
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void puts_opt(text *t, const char *s, size_t n)
{
    if (s == NULL) {
        put(t, "(null)", 6);
    } else {
        put(t, s, n);
    }
    put(t, "|", 1);
}

/* label, then v in decimal */
static void putf(text *t, const char *label, unsigned long long v)
{
    char b[32];
    int n = snprintf(b, sizeof b, "%llu", v);
    put(t, label, strlen(label));
    put(t, b, (size_t)n);
}

/* Everything a report says except its path, as one string. */
static char *render(const stg_report *r)
{
    text t = {0};
    putf(&t, "verdict ", (unsigned long long)stg_report_verdict(r));
    put(&t, " ", 1);
    putf(&t, "format ", (unsigned long long)stg_report_format(r));
    put(&t, " ", 1);
    putf(&t, "size ", (unsigned long long)stg_report_size(r));
    put(&t, " ", 1);
    putf(&t, "truncated ", (unsigned long long)stg_report_truncated(r));
    put(&t, "\n", 1);
    const char *sha = stg_report_sha256(r);
    puts_opt(&t, sha, sha != NULL ? strlen(sha) : 0);
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        putf(&t, "\n", (unsigned long long)f->code);
        put(&t, " ", 1);
        putf(&t, "", (unsigned long long)f->severity);
        put(&t, " ", 1);
        putf(&t, "", (unsigned long long)f->has_offset);
        put(&t, "@", 1);
        putf(&t, "", (unsigned long long)f->offset);
        put(&t, " ", 1);
        putf(&t, "", (unsigned long long)f->has_member_offset);
        put(&t, "@", 1);
        putf(&t, "", (unsigned long long)f->member_offset);
        put(&t, " ", 1);
        puts_opt(&t, f->message, f->message != NULL ? strlen(f->message) : 0);
        puts_opt(&t, f->member, f->member != NULL ? strlen(f->member) : 0);
        puts_opt(&t, f->limit, f->limit != NULL ? strlen(f->limit) : 0);
        puts_opt(&t, f->tensor, f->tensor_len);
        puts_opt(&t, f->module, f->module_len);
        puts_opt(&t, f->name, f->name_len);
    }
    for (size_t i = 0; i < stg_report_global_count(r); i++) {
        const stg_global *g = stg_report_global_at(r, i);
        putf(&t, "\nglobal ", (unsigned long long)g->offset);
        put(&t, " ", 1);
        putf(&t, "", (unsigned long long)g->klass);
        put(&t, " ", 1);
        puts_opt(&t, g->module, g->module_len);
        puts_opt(&t, g->name, g->name_len);
        puts_opt(&t, g->member, g->member != NULL ? strlen(g->member) : 0);
    }
    return t.p;
}

static char *scan_text(const char *path, uint64_t threshold)
{
    stg_image_set_zip_threshold(threshold);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(path, NULL, &r), STG_OK);
    char *s = render(r);
    stg_report_free(r);
    stg_image_set_zip_threshold(STG_IMAGE_ZIP_THRESHOLD);
    return s;
}

/* What the windows hold of the file at path: *done as stg_image_fill_zip says, *held bytes. */
static void windows_of(const char *path, bool *done, uint64_t *held, uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    struct stat st;
    ck_assert_int_eq(fstat(fileno(f), &st), 0);
    stg_image img;
    int err = 0;
    stg_image_set_zip_threshold(0);
    ck_assert_int_eq(stg_image_open(&img, fileno(f), (uint64_t)st.st_size, (uint64_t)1 << 32, &err),
                     STG_OK);
    ck_assert_int_eq(stg_image_fill_zip(&img, done, &err), STG_OK);
    stg_image_set_zip_threshold(STG_IMAGE_ZIP_THRESHOLD);
    *held = img.held;
    *size = (uint64_t)st.st_size;
    stg_image_close(&img);
    fclose(f);
}

/* Scans path both ways and asserts the same report; true when the windows were used. */
static bool same_both_ways(const char *path)
{
    char *whole = scan_text(path, UINT64_MAX);
    char *windowed = scan_text(path, 0);
    ck_assert_msg(strcmp(whole, windowed) == 0, "%s: whole file\n%s\nwindows\n%s", path, whole,
                  windowed);
    free(whole);
    free(windowed);
    bool done = false;
    uint64_t held = 0, size = 0;
    windows_of(path, &done, &held, &size);
    return done;
}

/* ------------------------------------------------------------------ corpus */

static size_t corpus_zips, corpus_windowed;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < 4) {
        return 0;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    unsigned char sig[4];
    bool zip = fread(sig, 1, 4, f) == 4 && memcmp(sig, "PK\x03\x04", 4) == 0;
    fclose(f);
    if (zip) {
        corpus_zips++;
        corpus_windowed += same_both_ways(path) ? 1 : 0;
    }
    return 0;
}

START_TEST(test_corpus_same_both_ways)
{
    corpus_zips = corpus_windowed = 0;
    ck_assert_int_eq(nftw(tu_src("corpus"), visit, 16, FTW_PHYS), 0);
    ck_assert_int_eq(nftw(tu_src("tests/data"), visit, 16, FTW_PHYS), 0);
    fprintf(stderr, "zip_window: %zu zips, %zu through windows\n", corpus_zips, corpus_windowed);
    /* corpus/ holds dozens of zips (torch saves, attacks); most open and go through windows */
    ck_assert_uint_ge(corpus_zips, 20);
    ck_assert_uint_ge(corpus_windowed, corpus_zips / 2);
}
END_TEST

/* ------------------------------------------------------------------ built archives */

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

static char *write_tmp(const char *name, const uint8_t *bytes, size_t len)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", dir, name);
    ck_assert_int_eq(tu_write_file(p, bytes, len), 0);
    return p;
}

/* A benign pickle: PROTO 2, EMPTY_DICT, STOP. */
static const uint8_t benign_pickle[] = {0x80, 0x02, '}', '.'};
/* GLOBAL os system, a string, TUPLE1, REDUCE, STOP: an import a loader runs. */
static const uint8_t evil_pickle[] = "cos\nsystem\n(S'id'\ntR.";

/* Storage-like bytes: no format at offset 0 (a float pattern). */
static uint8_t *storage(size_t n)
{
    uint8_t *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < n; i++) {
        s[i] = (uint8_t)(0x3f ^ (i * 13u));
    }
    s[0] = 0x11; /* no opcode, no magic */
    return s;
}

static uint8_t *deflated(uint8_t *in, size_t n, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)n);
    uint8_t *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    z.next_in = in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

#define BIG ((size_t)3 << 20)

/* A torch-like save: a pickle and one big storage. The storage is left out of the windows. */
START_TEST(test_torch_like_storage_left_out)
{
    uint8_t *s = storage(BIG);
    zb_entry e[3] = {zb_file("archive/data.pkl", benign_pickle, sizeof benign_pickle),
                     zb_file("archive/version", "3\n", 2), zb_file("archive/data/0", s, BIG)};
    size_t len;
    uint8_t *z = zb_build(e, 3, NULL, &len, NULL);
    char *p = write_tmp("model.pt", z, len);
    ck_assert(same_both_ways(p));
    bool done;
    uint64_t held, size;
    windows_of(p, &done, &held, &size);
    ck_assert(done);
    /* directory, headers, the pickle and the storage's head: a few pages and the tail */
    ck_assert_uint_lt(held, (uint64_t)256 << 10);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
    /* pickle_file only, as info: the pickle names no global off the built-in allowlist */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_PICKLE_FILE);
    stg_report_free(r);
    free(p);
    free(z);
    free(s);
}
END_TEST

/* Each member below must be read whole for the rules to see it; the reports stay equal and
 * the payloads are found. */
/* Writes the archive, asserts the same report both ways (through the windows) and an unsafe
 * verdict; the report (*path: the file). */
static stg_report *unsafe_both_ways(const char *name, const uint8_t *z, size_t len, char **path)
{
    *path = write_tmp(name, z, len);
    ck_assert(same_both_ways(*path));
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(*path, NULL, &r), STG_OK);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    return r;
}

START_TEST(test_members_read_whole)
{
    uint8_t *s = storage(BIG);
    /* a pickle at the start of a "storage" member (no .pkl name): sniffed, read, unsafe */
    uint8_t *evil_storage = storage(BIG);
    memcpy(evil_storage, evil_pickle, sizeof evil_pickle - 1);
    /* a pickle whose first opcode (BINBYTES) runs past 4 KiB, then breaks off (no STOP, no
     * import: plain data for a member): the head is doubled until the walk settles */
    uint8_t *long_pickle = storage(BIG);
    long_pickle[0] = 0x80;
    long_pickle[1] = 3;
    long_pickle[2] = 'B';
    uint32_t blen = 20000;
    tu_store_le(long_pickle + 3, blen, 4);
    long_pickle[7 + blen] = 0xff;
    /* a nested zip as a member */
    zb_entry inner[2] = {zb_file("x.pkl", evil_pickle, sizeof evil_pickle - 1),
                         zb_file("pad", s, BIG / 2)};
    size_t inner_len;
    uint8_t *inner_zip = zb_build(inner, 2, NULL, &inner_len, NULL);
    /* safetensors by content, with whitespace past the first page before '{' */
    uint8_t *st = storage(BIG);
    tu_store_le(st, 20000, 8);
    memset(st + 8, ' ', 9000);
    st[8 + 9000] = '{';
    /* a deflated pickle */
    size_t dlen;
    uint8_t *def = deflated(evil_storage, BIG, &dlen);
    zb_entry e[7] = {zb_file("archive/data.pkl", benign_pickle, sizeof benign_pickle),
                     zb_file("archive/data/0", evil_storage, BIG),
                     zb_file("archive/data/1", long_pickle, BIG),
                     zb_file("archive/data/2", inner_zip, inner_len),
                     zb_file("archive/data/3", st, BIG),
                     zb_file("archive/data/4", def, dlen),
                     zb_file("archive/data/5", s, BIG)};
    e[5].method = 8;
    e[5].uncomp_size = BIG;
    size_t len;
    uint8_t *z = zb_build(e, 7, NULL, &len, NULL);
    char *p = NULL;
    stg_report *r = unsafe_both_ways("model.pt", z, len, &p);
    /* os.system from data/0, x.pkl in data/2 and the inflated data/4 */
    size_t system = 0;
    for (size_t i = 0; i < stg_report_global_count(r); i++) {
        const stg_global *g = stg_report_global_at(r, i);
        system += g->name_len == 6 && memcmp(g->name, "system", 6) == 0;
    }
    ck_assert_uint_ge(system, 3);
    stg_report_free(r);
    bool done;
    uint64_t held, size;
    windows_of(p, &done, &held, &size);
    ck_assert(done);
    /* all but data/5 and data/1 (data/1's walk settles within its first 32 KiB; the last
     * 68 KiB of the file, where the end records are searched, are held too) */
    ck_assert_uint_lt(held, size - 2 * BIG + (160u << 10));
    ck_assert_uint_gt(held, (uint64_t)2 * BIG + BIG / 2); /* data/0, data/2, data/3 */
    free(p);
    free(z);
    free(s);
    free(evil_storage);
    free(long_pickle);
    free(inner_zip);
    free(st);
    free(def);
}
END_TEST

/* bzip2 and LZMA members (zip methods 12 and 14, which numpy.load's zipfile reads) are read
 * whole through the windows, as deflated ones: the pickle inside is found both ways. The LZMA
 * member is the lzma-alone fixture as zipfile writes it (docs/containers.md). */
START_TEST(test_bzip2_lzma_members_read_whole)
{
    size_t bl, al;
    uint8_t *bz = tu_read_file(tu_src("tests/data/containers/evil.pkl.bz2"), &bl);
    uint8_t *alone = tu_read_file(tu_src("tests/data/containers/evil.pkl.lzma"), &al);
    ck_assert(bz != NULL && alone != NULL && al > 13);
    uint8_t *zl = malloc(al - 4);
    ck_assert_ptr_nonnull(zl);
    memcpy(zl, "\x09\x14\x05\x00", 4);
    memcpy(zl + 4, alone, 5);
    memcpy(zl + 9, alone + 13, al - 13);
    uint8_t *s = storage(BIG);
    /* the bzip2 member: the stream 1000 times (~80 KB; streams are followed as bz2.BZ2File
     * does), more than the window around a local header holds */
    enum { REPEAT = 1000 };
    uint8_t *bzs = malloc(bl * REPEAT);
    ck_assert_ptr_nonnull(bzs);
    for (size_t k = 0; k < REPEAT; k++) {
        memcpy(bzs + k * bl, bz, bl);
    }
    /* between two big stored members: neither the head nor the tail the windows hold */
    zb_entry e[4] = {zb_file("pad.npy", s, BIG), zb_file("b.npy", bzs, bl * REPEAT),
                     zb_file("l.npy", zl, al - 4), zb_file("pad2.npy", s, BIG)};
    e[1].method = 12;
    e[2].method = 14;
    e[1].uncomp_size = 31 * REPEAT; /* both fixtures hold one 31-byte pickle */
    e[2].uncomp_size = 31;
    size_t len;
    uint8_t *z = zb_build(e, 4, NULL, &len, NULL);
    char *p = NULL;
    stg_report *r = unsafe_both_ways("model.npz", z, len, &p);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNSCANNABLE), -1);
    stg_report_free(r);
    free(p);
    free(z);
    free(s);
    free(zl);
    free(alone);
    free(bzs);
    free(bz);
}
END_TEST

/* Headers that disagree (another name, method and sizes in the local header), ZIP64 records,
 * overlapping entries, a member with a tar header: the same reports both ways. */
START_TEST(test_odd_archives_same_both_ways)
{
    uint8_t *s = storage(BIG);
    uint8_t *tarish = storage(BIG);
    memset(tarish, 0, 512);
    strcpy((char *)tarish, "a.pkl");
    memcpy(tarish + 100, "0000644", 7);
    memcpy(tarish + 108, "0000000", 7);
    memcpy(tarish + 116, "0000000", 7);
    snprintf((char *)tarish + 124, 12, "%011o", 4u);
    memcpy(tarish + 136, "00000000000", 11);
    tarish[156] = '0';
    memset(tarish + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < 512; i++) {
        sum += tarish[i];
    }
    snprintf((char *)tarish + 148, 8, "%06o", sum);
    memcpy(tarish + 512, benign_pickle, sizeof benign_pickle);

    zb_entry e[4] = {zb_file("archive/data.pkl", evil_pickle, sizeof evil_pickle - 1),
                     zb_file("archive/data/0", s, BIG), zb_file("archive/data/1", tarish, BIG),
                     zb_file("archive/data/2", s, BIG)};
    e[1].local_name = "archive/data/0.pkl"; /* a loader trusting the local name unpickles it */
    e[2].local_csize_set = true;
    e[2].local_csize = 100;
    e[3].share_local_with = 1;
    for (int zip64 = 0; zip64 < 2; zip64++) {
        zb_opts o = {0};
        o.zip64 = zip64 != 0;
        o.comment = "a comment";
        size_t len;
        uint8_t *z = zb_build(e, 4, &o, &len, NULL);
        char *p = write_tmp(zip64 ? "odd64.zip" : "odd.zip", z, len);
        ck_assert(same_both_ways(p));
        free(p);
        free(z);
    }
    /* truncated files: the directory is gone, or a member runs past the end */
    size_t len;
    uint8_t *z = zb_build(e, 2, NULL, &len, NULL);
    for (size_t cut = 1; cut <= 3; cut++) {
        char *p = write_tmp("cut.zip", z, len - cut * (len / 4));
        (void)same_both_ways(p);
        free(p);
    }
    free(z);
    free(s);
    free(tarish);
}
END_TEST

/* A limit below what the windows need: the whole file's verdict (limit_exceeded). */
START_TEST(test_cap_falls_back_to_whole)
{
    uint8_t *s = storage(BIG);
    zb_entry e[2] = {zb_file("archive/data.pkl", benign_pickle, sizeof benign_pickle),
                     zb_file("archive/data/0.pkl", s, BIG)};
    size_t len;
    uint8_t *z = zb_build(e, 2, NULL, &len, NULL);
    char *p = write_tmp("model.pt", z, len);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.limits.max_inflate_bytes = BIG / 2;
    for (int pass = 0; pass < 2; pass++) {
        stg_image_set_zip_threshold(pass == 0 ? 0 : UINT64_MAX);
        stg_report *r = NULL;
        ck_assert_int_eq(stg_scan_path(p, &opt, &r), STG_OK);
        ck_assert_int_ge(tu_find(r, STG_LIMIT_EXCEEDED), 0);
        stg_report_free(r);
    }
    stg_image_set_zip_threshold(STG_IMAGE_ZIP_THRESHOLD);
    free(p);
    free(z);
    free(s);
}
END_TEST

/* Pages copied out of file order (a zip's end first), then the rest: what the hash saw while
 * copying plus the rest hashed from memory is the file's digest. */
START_TEST(test_whole_image_digest)
{
    size_t member_len = (size_t)512 << 10; /* past the end-record search window */
    uint8_t *member = malloc(member_len);
    ck_assert_ptr_nonnull(member);
    for (size_t i = 0; i < member_len; i++) {
        member[i] = (uint8_t)(i * 7u + (i >> 8));
    }
    zb_entry ents[2] = {zb_file("a/data.pkl", "\x80\x02K\x01.", 5),
                        zb_file("a/data/0", member, member_len)};
    zb_opts zo = {0};
    size_t len;
    uint8_t *z = zb_build(ents, 2, &zo, &len, NULL);
    char *tmp = tu_tempdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/w.zip", tmp);
    ck_assert_int_eq(tu_write_file(path, z, len), 0);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    stg_image img;
    int err = 0;
    ck_assert_int_eq(stg_image_open(&img, fileno(f), len, (uint64_t)1 << 32, &err), STG_OK);
    ck_assert_int_eq(stg_sha256_new(&img.hash), STG_OK);
    stg_image_set_zip_threshold(0);
    bool done = false;
    ck_assert_int_eq(stg_image_fill_zip(&img, &done, &err), STG_OK);
    stg_image_set_zip_threshold(STG_IMAGE_ZIP_THRESHOLD);
    uint8_t got[32], want[32];
    ck_assert_int_eq(stg_image_fill_all(&img, &err), STG_OK);
    ck_assert(stg_image_whole(&img));
    ck_assert_uint_lt(img.hashed, len); /* the end came first: not all of it hashed in order */
    ck_assert_int_eq(stg_image_digest(&img, got), STG_OK);
    ck_assert_int_eq(stg_sha256_buffer(z, len, want), STG_OK);
    ck_assert_mem_eq(got, want, 32);
    stg_image_close(&img);
    /* an image held in part has no digest of its own (the caller reads the file) */
    ck_assert_int_eq(stg_image_open(&img, fileno(f), len, (uint64_t)1 << 32, &err), STG_OK);
    ck_assert_int_eq(stg_sha256_new(&img.hash), STG_OK);
    ck_assert_int_eq(stg_image_fill_prefix(&img, 100, &err), STG_OK);
    ck_assert_uint_eq(img.hashed, 100);
    ck_assert_int_eq(stg_image_digest(&img, got), STG_E_CRYPTO);
    stg_image_close(&img);
    fclose(f);
    free(z);
    free(member);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

static Suite *zip_window_suite(void)
{
    Suite *s = suite_create("zip_window");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_corpus_same_both_ways);
    tcase_add_test(tc, test_torch_like_storage_left_out);
    tcase_add_test(tc, test_members_read_whole);
    tcase_add_test(tc, test_bzip2_lzma_members_read_whole);
    tcase_add_test(tc, test_whole_image_digest);
    tcase_add_test(tc, test_odd_archives_same_both_ways);
    tcase_add_test(tc, test_cap_falls_back_to_whole);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(zip_window_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
