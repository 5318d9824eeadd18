/* dispatch/sniff: every format by content, the safetensors rule with its near misses, and the
 * few name hints docs/containers.md allows. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "dispatch/check.h"
#include "dispatch/formats.h"
#include "dispatch/sniff.h"
#include "sniffname.h"
#include "zipbuild.h"

#define B(s) (const uint8_t *)(s), sizeof(s) - 1

static const char EVIL[] = "\x80\x02"
                           "cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.";
static const char LEGACY[] = "\x80\x02\x8a\nl\xfc\x9c"
                             "F\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.";

static uint8_t *fixture(const char *name, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/data/containers/%s", name);
    uint8_t *p = tu_read_file(tu_src(rel), len);
    ck_assert_msg(p != NULL, "fixture %s", name);
    return p;
}

START_TEST(test_safetensors_rule)
{
    ck_assert(stg_sniff_is_safetensors(B("\x02\0\0\0\0\0\0\0{}")));
    ck_assert(stg_sniff_is_safetensors(B("\x04\0\0\0\0\0\0\0 \n{}")));
    /* A header running past the end is still safetensors (a cut-off download is
     * header_truncated, not unknown): only the bytes present are looked at. */
    ck_assert(stg_sniff_is_safetensors(B("\x03\0\0\0\0\0\0\0{}")));
    ck_assert(stg_sniff_is_safetensors(B("\x02\0\0\0\0\0\0\0{")));
    ck_assert(stg_sniff_is_safetensors(B("\x00\xe1\xf5\x05\0\0\0\0{"))); /* n = 100,000,000 */
    /* near misses: n < 2, n over the reference's cap, first non-space byte not '{', too short,
     * all space */
    ck_assert(!stg_sniff_is_safetensors(B("\x01\0\0\0\0\0\0\0{}")));
    ck_assert(!stg_sniff_is_safetensors(B("\x01\xe1\xf5\x05\0\0\0\0{}"))); /* 100,000,001 */
    ck_assert(!stg_sniff_is_safetensors(B("\x02\0\0\0\0\0\0\0[]")));
    ck_assert(!stg_sniff_is_safetensors(B("\x02\0\0\0\0\0\0\0")));
    ck_assert(!stg_sniff_is_safetensors(B("\x02\0\0\0\0\0\0\0  ")));
    ck_assert(!stg_sniff_is_safetensors(B("\xff\xff\xff\xff\xff\xff\xff\xff{}")));
    ck_assert_int_eq(stg_sniff(B("\x02\0\0\0\0\0\0\0{}"), NULL), STG_FMT_SAFETENSORS);
}
END_TEST

START_TEST(test_name_hints)
{
    /* A .safetensors name is validated as safetensors whatever it holds. */
    ck_assert_int_eq(stg_sniff(B("garbage"), "m.safetensors"), STG_FMT_SAFETENSORS);
    ck_assert_int_eq(stg_sniff(B("garbage"), "dir/M.SafeTensors"), STG_FMT_SAFETENSORS);
    ck_assert_int_eq(stg_sniff(B("{}"), "model.safetensors.index.json"), STG_FMT_SAFETENSORS_INDEX);
    ck_assert_int_eq(stg_sniff(B("\x08\x07\x12\x04"), "model.onnx"), STG_FMT_ONNX);
    /* Content beats the other names. */
    ck_assert_int_eq(stg_sniff(B(EVIL), "model.onnx"), STG_FMT_PICKLE);
    ck_assert_int_eq(stg_sniff(B(EVIL), "model.safetensors.json"), STG_FMT_PICKLE);
    ck_assert_int_eq(stg_sniff(B("\x02\0\0\0\0\0\0\0{}"), "model.bin"), STG_FMT_SAFETENSORS);
    ck_assert_int_eq(stg_sniff(B("plain text"), "readme.txt"), STG_FMT_TEXT);
    ck_assert_int_eq(stg_sniff(B("plain text"), NULL), STG_FMT_TEXT);
    ck_assert_int_eq(stg_sniff(B("plain text"), "model.pt"), STG_FMT_UNKNOWN); /* mismatch */

    stg_name_hint h = stg_name_hint_of("a/b/model.PTH");
    ck_assert(stg_name_hint_claims_pickle(&h));
    ck_assert_ptr_null(stg_name_hint_decides(&h));
    static const char *const claims[] = {"x.bin",    "x.pt",     "x.pth", "x.ckpt", "x.pkl",
                                         "x.pickle", "x.joblib", "x.npy", "x.npz"};
    for (size_t i = 0; i < sizeof claims / sizeof claims[0]; i++) {
        h = stg_name_hint_of(claims[i]);
        ck_assert_msg(stg_name_hint_claims_pickle(&h), "%s", claims[i]);
    }
    static const char *const no_claims[] = {"x.bin.txt", "x.safetensors", NULL};
    for (size_t i = 0; i < sizeof no_claims / sizeof no_claims[0]; i++) {
        h = stg_name_hint_of(no_claims[i]);
        ck_assert(!stg_name_hint_claims_pickle(&h));
    }
    h = stg_name_hint_of("x.joblib");
    ck_assert_int_eq(stg_name_hint_pickle_label(&h, STG_FMT_PICKLE), STG_FMT_JOBLIB);
}
END_TEST

START_TEST(test_pickles)
{
    ck_assert_int_eq(stg_sniff(B(EVIL), NULL), STG_FMT_PICKLE);
    ck_assert_int_eq(stg_sniff(B(EVIL), "model.joblib"), STG_FMT_JOBLIB);
    /* Protocols 0 and 1 have no PROTO opcode: found by walking to STOP. */
    ck_assert_int_eq(stg_sniff(B("(lp0\nI1\na."), NULL), STG_FMT_PICKLE);
    ck_assert_int_eq(stg_sniff(B("cos\nsystem\n(S'id'\ntR."), NULL), STG_FMT_PICKLE);
    ck_assert_int_eq(stg_sniff(B("]q\x00K\x01a."), NULL), STG_FMT_PICKLE);
    /* A broken stream that starts with PROTO is still a pickle to a loader. */
    ck_assert_int_eq(stg_sniff(B("\x80\x04\x95"), NULL), STG_FMT_PICKLE);
    /* Near misses: text that does not reach STOP (then it is text), an unknown protocol. */
    ck_assert_int_eq(stg_sniff(B("(lp0\nI1\na"), NULL), STG_FMT_TEXT);
    ck_assert_str_eq(tu_sniffed(B("\x80\x07K\x01.")), "unknown");
    ck_assert_int_eq(stg_sniff(B(LEGACY), NULL), STG_FMT_TORCH_LEGACY);
}
END_TEST

START_TEST(test_archives)
{
    size_t len;
    uint8_t *p = fixture("torch-benign.pt", &len);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TORCH_ZIP);
    free(p);
    /* Any top folder name; a pickle member found by content whatever its name. */
    zb_entry e[2] = {zb_file("whatever/version", "3\n", 2),
                     zb_file("whatever/blob", EVIL, sizeof EVIL - 1)};
    p = zb_build(e, 2, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TORCH_ZIP);
    free(p);
    zb_entry n[2] = {zb_file("a.npy", "\x93NUMPY", 6), zb_file("b.npy", "\x93NUMPY", 6)};
    p = zb_build(n, 2, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_NUMPY_ZIP);
    free(p);
    zb_entry t[2] = {zb_file("a.npy", "\x93NUMPY", 6), zb_file("notes.txt", "hi", 2)};
    p = zb_build(t, 2, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_ZIP);
    free(p);
    p = fixture("torch01-evil.tar", &len);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TORCH_TAR);
    free(p);
    p = fixture("plain-evil.tar", &len);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TAR);
    free(p);
}
END_TEST

START_TEST(test_magic_numbers)
{
    static const struct {
        const char *file;
        stg_format want;
        const char *kind;
    } files[] = {
        {"evil.pkl.gz", STG_FMT_GZIP, "gzip"},  {"evil.pkl.zlib", STG_FMT_ZLIB, "zlib"},
        {"evil.pkl.bz2", STG_FMT_BZ2, "bzip2"}, {"evil.pkl.xz", STG_FMT_XZ, "xz"},
        {"evil.pkl.lzma", STG_FMT_XZ, "lzma"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t len;
        uint8_t *p = fixture(files[i].file, &len);
        ck_assert_msg(stg_sniff(p, len, NULL) == files[i].want, "%s", files[i].file);
        ck_assert_str_eq(tu_sniffed(p, len), files[i].kind);
        free(p);
    }
    ck_assert_int_eq(stg_sniff(B("GGUF\x03\0\0\0"), NULL), STG_FMT_GGUF);
    ck_assert_int_eq(stg_sniff(B("\x93NUMPY\x01\x00"), NULL), STG_FMT_NUMPY);
    ck_assert_str_eq(tu_sniffed(B("\x28\xb5\x2f\xfd\0\0")), "zstd-compressed");
    ck_assert_str_eq(tu_sniffed(B("\x04\x22\x4d\x18\0\0")), "lz4-compressed");
    ck_assert_int_eq(stg_sniff(B("\x28\xb5\x2f\xfd\0\0"), NULL), STG_FMT_UNKNOWN);
    ck_assert_int_eq(stg_sniff(B("\x04\x22\x4d\x18\0\0"), NULL), STG_FMT_UNKNOWN);
    /* Near misses. */
    ck_assert_int_eq(stg_sniff(B("GGUX\x03\0\0\0"), NULL), STG_FMT_UNKNOWN);
    ck_assert_int_eq(stg_sniff(B("\x93NUMPX\x01\x00"), NULL), STG_FMT_UNKNOWN);
    ck_assert_str_eq(tu_sniffed(B("\x1f\x8b\x07\0\0\0\0\0\0\0")), "unknown");
    ck_assert_str_eq(tu_sniffed(B("BZh0rest")), "unknown");
    /* lzma-alone with an odd dictionary size is not taken for one. */
    ck_assert_str_eq(tu_sniffed(B("\x5d\x00\x00\x81\x00\xff\xff\xff\xff\xff\xff\xff\xff")),
                     "unknown");
    ck_assert_str_eq(tu_sniffed(B("x\x9c")), "zlib");
    ck_assert_str_eq(tu_sniffed(B("x\x9d")), "unknown"); /* check bits wrong */
}
END_TEST

/* A ustar member header + data (padded to 512), appended to *buf. */
static void tar_member(uint8_t **buf, size_t *len, const char *name, const char *data)
{
    size_t dl = strlen(data), padded = (dl + 511) / 512 * 512;
    *buf = realloc(*buf, *len + 512 + padded);
    ck_assert_ptr_nonnull(*buf);
    uint8_t *h = *buf + *len;
    memset(h, 0, 512 + padded);
    memcpy(h, name, strlen(name));
    memcpy(h + 100, "0000644", 7);
    snprintf((char *)h + 124, 12, "%011o", (unsigned)dl);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    unsigned sum = 0;
    for (size_t i = 0; i < 512; i++) {
        sum += (i >= 148 && i < 156) ? ' ' : h[i];
    }
    snprintf((char *)h + 148, 8, "%06o", sum);
    memcpy(h + 512, data, dl);
    *len += 512 + padded;
}

/* Archive labels decided from the directory alone: names without folders, long names (only
 * their tails are compared), directories that do not parse. */
#define S(s) (s), sizeof(s) - 1

#define LFS_OID "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393"
#define LFS_HEAD "version https://git-lfs.github.com/spec/v1\n"

/* Scans buf as a file named name and returns its report (the caller frees it). */
static stg_report *scan_named(const char *buf, size_t len, const char *name)
{
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(buf, len, name, NULL, &r), STG_OK);
    return r;
}

/* Text, JSON and Git LFS pointers: their rules and near misses, and the verdicts they get. */
START_TEST(test_text_json_lfs)
{
    ck_assert(stg_sniff_is_text(B("")));
    ck_assert(stg_sniff_is_text(B("# README\n\tindent\r\n\x1b[1mbold\x1b[0m\f\v")));
    ck_assert(stg_sniff_is_text(B("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n")));
    ck_assert(!stg_sniff_is_text(B("a\0b")));
    ck_assert(!stg_sniff_is_text(B("a\x01")));
    ck_assert(!stg_sniff_is_text(B("a\x7f")));
    ck_assert(!stg_sniff_is_text(B("\xc0\xaf")));         /* overlong */
    ck_assert(!stg_sniff_is_text(B("\xed\xa0\x80")));     /* surrogate */
    ck_assert(!stg_sniff_is_text(B("\xf4\x90\x80\x80"))); /* past U+10FFFF */
    ck_assert(!stg_sniff_is_text(B("ab\xe2\x82")));       /* cut off */

    ck_assert(stg_sniff_is_json(B(" {\"a\": [1, 2.5, null]}\n"), 127, 0));
    ck_assert(stg_sniff_is_json(B("[]"), 127, 0));
    ck_assert(!stg_sniff_is_json(B("{\"a\": 1} x"), 127, 0));
    ck_assert(!stg_sniff_is_json(B("{\"a\": }"), 127, 0));
    ck_assert(!stg_sniff_is_json(B("\"a string\""), 127, 0));       /* a scalar is not a document */
    ck_assert(!stg_sniff_is_json(B("[[[]]]"), 2, 0));               /* deeper than allowed */
    ck_assert(!stg_sniff_is_json(B("[1,2,3,4,5,6,7,8]"), 127, 16)); /* past the memory cap */

    static const char ptr[] = LFS_HEAD "oid sha256:" LFS_OID "\nsize 12345\n";
    stg_lfs_pointer p;
    memset(&p, 0, sizeof p);
    ck_assert(stg_sniff_lfs_pointer(B(ptr), &p));
    ck_assert_str_eq(p.oid, LFS_OID);
    ck_assert_uint_eq(p.size, 12345);
    ck_assert(stg_sniff_lfs_pointer(
        B("version https://hawser.github.com/spec/v1\noid sha256:" LFS_OID "\nsize 1\n"), &p));
    ck_assert(stg_sniff_lfs_pointer(
        B(LFS_HEAD "ext-0-foo sha256:00\noid sha256:" LFS_OID "\nsize 7\n"), &p));
    /* near misses: another version, an oid that is not 64 lower-case hex, no size, a size
     * that is not digits, no final LF, two oids, a line without a key */
    ck_assert(!stg_sniff_lfs_pointer(
        B("version https://git-lfs.github.com/spec/v2\noid sha256:" LFS_OID "\nsize 1\n"), &p));
    ck_assert(!stg_sniff_lfs_pointer(B(LFS_HEAD "oid sha256:" LFS_OID "0\nsize 1\n"), &p));
    ck_assert(!stg_sniff_lfs_pointer(
        B(LFS_HEAD "oid sha256:4D7A214614AB2935C943F9E0FF69D22EADBB8F32B1258DAAA5E2CA24D17E2393\n"
                   "size 1\n"),
        &p));
    ck_assert(!stg_sniff_lfs_pointer(B(LFS_HEAD "oid sha256:" LFS_OID "\n"), &p));
    ck_assert(!stg_sniff_lfs_pointer(B(LFS_HEAD "oid sha256:" LFS_OID "\nsize 1x\n"), &p));
    ck_assert(!stg_sniff_lfs_pointer(B(LFS_HEAD "oid sha256:" LFS_OID "\nsize 1"), &p));
    ck_assert(!stg_sniff_lfs_pointer(
        B(LFS_HEAD "oid sha256:" LFS_OID "\noid sha256:" LFS_OID "\nsize 1\n"), &p));
    ck_assert(
        !stg_sniff_lfs_pointer(B(LFS_HEAD "oid sha256:" LFS_OID "\nsize 1\nFree text\n"), &p));

    /* Verdicts: text and JSON no model name claims are ok without findings; a pointer fails
     * whatever its name (model.safetensors would otherwise be header errors); text under a
     * model's name is still judged by that name; binary content still warns. */
    static const struct {
        const char *buf;
        size_t len;
        const char *name;
        stg_format format;
        stg_verdict verdict;
        stg_code code; /* the first finding's, or 0 */
    } rows[] = {
        {S("# Model card\n\nA model.\n"), "README.md", STG_FMT_TEXT, STG_VERDICT_OK, 0},
        {S("*.safetensors filter=lfs diff=lfs merge=lfs -text\n"), ".gitattributes", STG_FMT_TEXT,
         STG_VERDICT_OK, 0},
        {S("{\"architectures\": [\"BertModel\"], \"hidden_size\": 768}\n"), "config.json",
         STG_FMT_JSON, STG_VERDICT_OK, 0},
        {S("{\"broken\": \n"), "config.json", STG_FMT_TEXT, STG_VERDICT_OK, 0},
        {S(ptr), "model.safetensors", STG_FMT_GIT_LFS_POINTER, STG_VERDICT_INVALID,
         STG_LFS_POINTER},
        {S(ptr), "pytorch_model.bin", STG_FMT_GIT_LFS_POINTER, STG_VERDICT_INVALID,
         STG_LFS_POINTER},
        {S(ptr), NULL, STG_FMT_GIT_LFS_POINTER, STG_VERDICT_INVALID, STG_LFS_POINTER},
        {S("just words\n"), "weights.bin", STG_FMT_UNKNOWN, STG_VERDICT_INVALID,
         STG_FORMAT_MISMATCH},
        /* .gguf claims GGUF as the pickle suffixes claim a pickle; the near miss is .txt */
        {S("just words\n"), "model.gguf", STG_FMT_UNKNOWN, STG_VERDICT_INVALID,
         STG_FORMAT_MISMATCH},
        {S("just words\n"), "model.gguf.txt", STG_FMT_TEXT, STG_VERDICT_OK, 0},
        {S("{\"a\": 1}"), "model.safetensors", STG_FMT_SAFETENSORS, STG_VERDICT_INVALID, 0},
        {S("\x01\x02\x03\xff"), "image.png", STG_FMT_UNKNOWN, STG_VERDICT_WARN, STG_FORMAT_UNKNOWN},
        {S("version https://git-lfs.github.com/spec/v1\noid sha256:" LFS_OID "\n"),
         "model.safetensors", STG_FMT_SAFETENSORS, STG_VERDICT_INVALID, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        stg_report *r = scan_named(rows[i].buf, rows[i].len, rows[i].name);
        ck_assert_msg(stg_report_format(r) == rows[i].format, "row %zu: %s", i,
                      stg_format_name(stg_report_format(r)));
        ck_assert_msg(stg_report_verdict(r) == rows[i].verdict, "row %zu: %s %s", i,
                      stg_verdict_name(stg_report_verdict(r)), tu_describe(r));
        if (rows[i].code != 0) {
            ck_assert_int_eq(stg_report_at(r, 0)->code, rows[i].code);
        } else if (rows[i].verdict == STG_VERDICT_OK) {
            ck_assert_uint_eq(stg_report_count(r), 0);
        }
        ck_assert_int_eq(stg_sniff((const uint8_t *)rows[i].buf, rows[i].len, rows[i].name),
                         rows[i].format);
        stg_report_free(r);
    }
    /* a protocol-0 pickle is ASCII text, yet stays a pickle: the pickle rules come first */
    stg_report *r = scan_named(S("cos\nsystem\n(S'id'\ntR."), NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PICKLE);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
}
END_TEST

START_TEST(test_archive_labels)
{
    size_t len = 0;
    uint8_t *p = NULL;
    /* the PyTorch 0.1 layout at the top level (no folder in the names) */
    tar_member(&p, &len, "pickle", "x");
    tar_member(&p, &len, "storages", "y");
    ck_assert_str_eq(tu_sniffed(p, len), "tar");
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TORCH_TAR);
    free(p);
    /* one of the two only: a plain tar */
    p = NULL;
    len = 0;
    tar_member(&p, &len, "dir/pickle", "x");
    tar_member(&p, &len, "dir/storage", "y");
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TAR);
    free(p);

    /* Names longer than the 63-byte tail the labeller keeps: the suffix still decides. */
    char longname[200];
    memset(longname, 'd', sizeof longname);
    memcpy(longname + 150, "/", 1);
    strcpy(longname + 190, "data.pkl");
    zb_entry e[1] = {zb_file(longname, "not a pickle", 12)};
    p = zb_build(e, 1, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TORCH_ZIP);
    free(p);
    strcpy(longname + 190, "a.npy");
    zb_entry n[1] = {zb_file(longname, "\x93NUMPY", 6)};
    p = zb_build(n, 1, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_NUMPY_ZIP);
    free(p);
    /* a folder named *.npy does not make its member an array */
    strcpy(longname + 180, ".npy/x.bin");
    zb_entry m[1] = {zb_file(longname, "\x93NUMPY", 6)};
    p = zb_build(m, 1, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_ZIP);
    free(p);

    /* The labeller does not inflate: a member marked deflated is not looked into. */
    zb_entry d[1] = {zb_file("blob", EVIL, sizeof EVIL - 1)};
    d[0].method = 8;
    p = zb_build(d, 1, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_ZIP);
    d[0].method = 0; /* stored: the same bytes are found to be a pickle */
    free(p);
    p = zb_build(d, 1, NULL, &len, NULL);
    ck_assert_int_eq(stg_sniff(p, len, NULL), STG_FMT_TORCH_ZIP);
    free(p);
    /* A zip magic whose directory cannot be read is labelled zip (the scan then reports it). */
    ck_assert_int_eq(stg_sniff(B("PK\x03\x04 not really an archive"), NULL), STG_FMT_ZIP);
    /* An empty archive (end record only): zip, not numpy-zip. */
    static const char empty[] = "PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    ck_assert_int_eq(stg_sniff((const uint8_t *)empty, sizeof empty - 1, NULL), STG_FMT_ZIP);
    /* a NULL name has no suffix */
    ck_assert(!stg_name_hint_has_suffix(NULL, ".npy"));
    ck_assert(stg_name_hint_has_suffix("A.NPY", ".npy"));
}
END_TEST

static Suite *sniff_suite(void)
{
    Suite *s = suite_create("sniff");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_safetensors_rule);
    tcase_add_test(tc, test_name_hints);
    tcase_add_test(tc, test_pickles);
    tcase_add_test(tc, test_archives);
    tcase_add_test(tc, test_magic_numbers);
    tcase_add_test(tc, test_archive_labels);
    tcase_add_test(tc, test_text_json_lfs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sniff_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
