/* dispatch/check + containers: every container format, the bypass classes about containers
 * (research/pickle-scanners.md 2-6, 14-18), and each finding code the dispatcher owns, with a
 * triggering input and a near miss, offsets and members asserted. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/inflate.h"
#include "parser/util.h"
#include "testutil.h"
#include "dispatch/check.h"
#include "validator/report.h"
#include "zipbuild.h"

#define B(s) (const uint8_t *)(s), sizeof(s) - 1

static const char EVIL[] = "\x80\x02"
                           "cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.";
static const char BENIGN[] = "\x80\x02"
                             "ccollections\nOrderedDict\nq\x00)Rq\x01.";
static const char EVIL0[] = "cos\nsystem\n(S'id'\ntR.";

static uint8_t *fixture(const char *name, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/data/containers/%s", name);
    uint8_t *p = tu_read_file(tu_src(rel), len);
    ck_assert_msg(p != NULL, "fixture %s", name);
    return p;
}

static stg_report *check_with(const void *buf, size_t len, const char *name, const stg_limits *lim)
{
    stg_report *r = stg_report_new(lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, lim, r);
    stg_check_buffer(buf, len, name, &ctx);
    stg_report_finish(r);
    return r;
}

static stg_report *check(const void *buf, size_t len, const char *name)
{
    stg_limits lim;
    stg_limits_default(&lim);
    return check_with(buf, len, name, &lim);
}

static const stg_finding *first(const stg_report *r, stg_code code)
{
    long i = tu_find(r, code);
    ck_assert_msg(i >= 0, "no %s in %s", stg_code_name(code), tu_describe(r));
    return stg_report_at(r, (size_t)i);
}

static void assert_member(const stg_finding *f, const char *member, uint64_t member_offset)
{
    ck_assert_ptr_nonnull(f->member);
    ck_assert_str_eq(f->member, member);
    ck_assert(f->has_member_offset);
    ck_assert_uint_eq(f->member_offset, member_offset);
}

/* ------------------------------------------------------------------ unknown / mismatch / ... */

START_TEST(test_format_unknown)
{
    stg_report *r = check(B("just some\x01"
                            "bytes\n"),
                          "notes.dat");
    const stg_finding *f = first(r, STG_FORMAT_UNKNOWN);
    ck_assert_int_eq(f->severity, STG_SEV_WARNING);
    ck_assert(!f->has_offset);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_UNKNOWN);
    ck_assert_uint_eq(stg_report_size(r), 16);
    stg_report_free(r);
    /* near miss: the same without the control byte is text, which is ok */
    r = check(B("just some text\n"), "notes.txt");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TEXT);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    /* near miss: a minimal safetensors file is known */
    r = check(B("\x20\0\0\0\0\0\0\0{\"__metadata__\":{\"k\":\"vvvvvvv\"}}"), NULL);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNKNOWN), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
}
END_TEST

START_TEST(test_format_mismatch)
{
    stg_report *r = check(B("just some text\n"), "pytorch_model.bin");
    const stg_finding *f = first(r, STG_FORMAT_MISMATCH);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNKNOWN), -1);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    /* near miss: the same name on a real pickle is a pickle, not a mismatch */
    r = check(B(BENIGN), "pytorch_model.bin");
    ck_assert_int_eq(tu_find(r, STG_FORMAT_MISMATCH), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PICKLE);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_FILE), 1);
    stg_report_free(r);
}
END_TEST

/* tests/data/torchscript (tests/fixtures/gen_torchscript.py): torch.jit.save of a scripted module and
 * its lite-interpreter save hold a program (torchscript_program, naming its members; their
 * pickles are scanned as before), torch.save of its state_dict and a zip of names close to the
 * TorchScript ones do not. */
START_TEST(test_torchscript_program)
{
    static const struct {
        const char *file;
        bool program;
        const char *names[3]; /* what the message must name */
    } cases[] = {
        {"scripted.pt", true, {"scripted/code/ (4 members)", "scripted/constants.pkl", NULL}},
        {"scripted.ptl", true, {"scripted/code/", "scripted/bytecode.pkl", NULL}},
        {"plain.pt", false, {NULL}},
        {"names.zip", false, {NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/data/torchscript/%s", cases[i].file);
        size_t len = 0;
        uint8_t *buf = tu_read_file(tu_src(rel), &len);
        ck_assert_msg(buf != NULL, "fixture %s", rel);
        for (int p = 0; p < 2; p++) {
            stg_limits lim;
            stg_limits_default(&lim);
            lim.profile = (stg_profile)p;
            stg_report *r = check_with(buf, len, cases[i].file, &lim);
            ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
            if (!cases[i].program) {
                ck_assert_msg(tu_find(r, STG_TORCHSCRIPT_PROGRAM) < 0, "%s: %s", cases[i].file,
                              tu_describe(r));
                stg_report_free(r);
                continue;
            }
            const stg_finding *f = first(r, STG_TORCHSCRIPT_PROGRAM);
            ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_PROGRAM), 1);
            ck_assert_int_eq(f->severity, STG_SEV_WARNING);
            ck_assert_uint_lt(f->offset, len);
            for (size_t k = 0; cases[i].names[k] != NULL; k++) {
                ck_assert_msg(strstr(f->message, cases[i].names[k]) != NULL, "%s: %s", rel,
                              f->message);
            }
            /* the pickles are scanned as for any torch zip: never ok */
            first(r, STG_PICKLE_FILE);
            ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
            stg_report_free(r);
        }
        free(buf);
    }
}
END_TEST

START_TEST(test_gguf_onnx_validated)
{
    /* The table's GGUF and ONNX entries run their checks: no format_not_validated. A valid
     * empty GGUF (version 3, no tensors, no metadata) is ok. */
    stg_report *r = check(B("GGUF\x03\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"), "model.gguf");
    ck_assert_int_eq(tu_find(r, STG_FORMAT_NOT_VALIDATED), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_GGUF);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    /* a header cut short is the GGUF rules' finding */
    r = check(B("GGUF\x03\0\0\0\0\0\0\0\0\0\0\0"), "model.gguf");
    ck_assert_int_eq(tu_find(r, STG_FORMAT_NOT_VALIDATED), -1);
    first(r, STG_GGUF_HEADER_INVALID);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    /* ONNX by name: ir_version 7, then a producer_name field cut short -> onnx_malformed */
    r = check(B("\x08\x07\x12\x07pytorch"), "model.onnx");
    ck_assert_int_eq(tu_find(r, STG_FORMAT_NOT_VALIDATED), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
    ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    /* near misses: no magic, no name */
    r = check(B("GGUX\x03\0\0\0"), NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_UNKNOWN);
    first(r, STG_FORMAT_UNKNOWN);
    stg_report_free(r);
    r = check(B("\x08\x07\x12\x07pytorch"), "model.onnx.txt");
    ck_assert_int_ne(stg_report_format(r), STG_FMT_ONNX);
    stg_report_free(r);
}
END_TEST

/* Zip methods 12 (bzip2) and 14 (LZMA), which Python's zipfile and so numpy.load read: the
 * member is decompressed with the caps of deflated ones and scanned (the pickle inside an evil
 * member is found); a broken stream is zip_malformed, the size cap zip_bomb. The LZMA member is
 * made from the lzma-alone fixture as zipfile writes one: version 9.20, properties size 5, the
 * 5 property bytes, then the raw stream (an lzma-alone file's bytes after its 13-byte header). */
START_TEST(test_zip_bzip2_lzma_member)
{
    static const struct {
        uint16_t method;
        const char *fixture;
        stg_inflate_format fmt;
    } cases[] = {{12, "evil.pkl.bz2", STG_INFLATE_BZIP2}, {14, "evil.pkl.lzma", STG_INFLATE_LZMA}};
    if (!stg_inflate_format_available(cases[_i].fmt)) {
        return; /* a build without the library: test_format_unscannable covers it */
    }
    size_t bl;
    uint8_t *raw = fixture(cases[_i].fixture, &bl);
    stg_inflate_out out;
    ck_assert_int_eq(stg_inflate(raw, bl, cases[_i].fmt, 1u << 20, 0, &out), STG_INFLATE_OK);
    uint8_t *member = raw;
    if (cases[_i].method == 14) {
        ck_assert_uint_ge(bl, 14);
        member = malloc(bl - 4); /* 4 + 5 + (bl - 13) */
        ck_assert_ptr_nonnull(member);
        memcpy(member, "\x09\x14\x05\x00", 4);
        memcpy(member + 4, raw, 5);
        memcpy(member + 9, raw + 13, bl - 13);
        bl -= 4;
    }
    zb_entry e = zb_file("evil.npy", member, bl);
    e.method = cases[_i].method;
    e.uncomp_size = out.len;
    size_t len;
    uint64_t offs[1];
    uint8_t *z = zb_build(&e, 1, NULL, &len, offs);
    stg_report *r = check(z, len, "model.npz");
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNSCANNABLE), -1);
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    assert_member(f, "evil.npy", offs[0]);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(z);
    /* near miss: the same stream cut short is malformed, not unscannable */
    e.len = bl / 2;
    z = zb_build(&e, 1, NULL, &len, offs);
    r = check(z, len, "model.npz");
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNSCANNABLE), -1);
    f = first(r, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, offs[0]);
    stg_report_free(r);
    free(z);
    /* the size cap of deflated members holds: exactly the output passes, one byte less not */
    stg_limits lim;
    stg_limits_default(&lim);
    e.len = bl;
    z = zb_build(&e, 1, NULL, &len, offs);
    for (int less = 0; less < 2; less++) {
        lim.max_inflate_bytes = out.len - (size_t)less;
        r = check_with(z, len, "model.npz", &lim);
        ck_assert_int_eq(tu_find(r, STG_ZIP_BOMB) >= 0, less == 1);
        if (less == 1) {
            ck_assert_str_eq(first(r, STG_ZIP_BOMB)->limit, "max_inflate_bytes");
        }
        stg_report_free(r);
    }
    free(z);
    stg_inflate_free(&out);
    if (member != raw) {
        free(member);
    }
    free(raw);
}
END_TEST

START_TEST(test_format_unscannable)
{
    /* bzip2, xz and lzma-alone are opened when the build has libbz2 and liblzma (then the
     * pickle inside is found), else they are unscannable at offset 0. */
    static const char *const files[] = {"evil.pkl.bz2", "evil.pkl.xz", "evil.pkl.lzma"};
    static const stg_format want[] = {STG_FMT_BZ2, STG_FMT_XZ, STG_FMT_XZ};
    static const stg_inflate_format lib[] = {STG_INFLATE_BZIP2, STG_INFLATE_LZMA, STG_INFLATE_LZMA};
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        uint8_t *p = fixture(files[i], &len);
        stg_report *r = check(p, len, NULL);
        ck_assert_int_eq(stg_report_format(r), want[i]);
        if (stg_inflate_format_available(lib[i])) {
            ck_assert_int_eq(tu_find(r, STG_FORMAT_UNSCANNABLE), -1);
            const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
            ck_assert_str_eq(f->member, "(decompressed)");
            ck_assert_uint_eq(f->offset, 2);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        } else {
            const stg_finding *f = first(r, STG_FORMAT_UNSCANNABLE);
            ck_assert_int_eq(f->severity, STG_SEV_ERROR);
            ck_assert(f->has_offset);
            ck_assert_uint_eq(f->offset, 0);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
        }
        stg_report_free(r);
        free(p);
    }
    stg_report *r = check(B("\x28\xb5\x2f\xfd\x24\x00\x00"), NULL);
    first(r, STG_FORMAT_UNSCANNABLE);
    stg_report_free(r);
    r = check(B("\x04\x22\x4d\x18\x64\x40\xa7"), NULL);
    first(r, STG_FORMAT_UNSCANNABLE);
    stg_report_free(r);
    /* A zip member compressed with a method we cannot open (93 = Zstandard). */
    zb_entry e = zb_file("archive/data.pkl", "\x28\xb5\x2f\xfd\x24\x00\x00", 7);
    e.method = 93;
    size_t len;
    uint64_t offs[1];
    uint8_t *z = zb_build(&e, 1, NULL, &len, offs);
    r = check(z, len, "model.pt");
    const stg_finding *f = first(r, STG_FORMAT_UNSCANNABLE);
    ck_assert_uint_eq(f->offset, offs[0]);
    assert_member(f, "archive/data.pkl", offs[0]);
    stg_report_free(r);
    free(z);
    /* near miss: gzip is opened and scanned (when this build has zlib) */
    if (!tu_inflate_built()) {
        return;
    }
    uint8_t *g = fixture("evil.pkl.gz", &len);
    r = check(g, len, NULL);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNSCANNABLE), -1);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    stg_report_free(r);
    free(g);
}
END_TEST

/* Tensor storage whose first bytes happen to look like a zlib or gzip header (random weights
 * do, about once in a few thousand members) is plain data: no loader decompresses a member,
 * so a stream that does not decode there is no finding. The same bytes as a whole file are a
 * broken stream (container_malformed), and a member that does decode is still scanned. */
START_TEST(test_member_compressed_by_chance)
{
    if (!tu_inflate_built()) {
        return;
    }
    /* zlib header, a stored block of 5 bytes, then a block of the reserved type 3 */
    static const uint8_t junk[] = {0x78, 0x01, 0x00, 0x05, 0x00, 0xfa, 0xff, 'h',
                                   'e',  'l',  'l',  'o',  0x07, 0x99, 0x42, 0x17};
    zb_entry e[2] = {zb_file("archive/data.pkl", BENIGN, sizeof BENIGN - 1),
                     zb_file("archive/data/0", junk, sizeof junk)};
    size_t len;
    uint64_t offs[2];
    uint8_t *z = zb_build(e, 2, NULL, &len, offs);
    stg_report *r = check(z, len, "model.pt");
    ck_assert_int_eq(tu_find(r, STG_CONTAINER_MALFORMED), -1);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNKNOWN), -1);
    ck_assert_int_le(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_report_free(r);
    free(z);
    /* near miss: the same bytes as a whole file are a zlib stream that breaks */
    r = check(junk, sizeof junk, NULL);
    ck_assert_int_ge(tu_find(r, STG_CONTAINER_MALFORMED), 0);
    stg_report_free(r);
}
END_TEST

/* A member whose bytes call something and then break off (no STOP) still ran the call in any
 * unpickler: it is scanned as a pickle. Near miss: text in a member is plain data. */
START_TEST(test_member_pickle_without_stop)
{
    static const char nostop[] = "cos\nsystem\n(S'true'\ntR(junk";
    static const char text[] = "certifi==2024.2.2\nclass Config:\n";
    for (int i = 0; i < 2; i++) {
        const char *d = i == 0 ? nostop : text;
        size_t dl = i == 0 ? sizeof nostop - 1 : sizeof text - 1;
        zb_entry e[2] = {zb_file("archive/data.pkl", BENIGN, sizeof BENIGN - 1),
                         zb_file("archive/extra", d, dl)};
        size_t len;
        uint64_t offs[2];
        uint8_t *z = zb_build(e, 2, NULL, &len, offs);
        stg_report *r = check(z, len, "model.pt");
        if (i == 0) {
            const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
            assert_member(f, "archive/extra", offs[1]);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        } else {
            ck_assert_int_le(stg_report_verdict(r), STG_VERDICT_WARN);
            ck_assert_int_eq(tu_find(r, STG_PICKLE_GLOBAL_UNKNOWN), -1);
        }
        stg_report_free(r);
        free(z);
    }
}
END_TEST

/* Tensor data that starts, by chance, with a short pickle that imports nothing: ")2." (EMPTY_TUPLE,
 * DUP, STOP), an EXT1 or EXT2 code before STOP, PROTO 2 then ")." (each seen in random float bytes of
 * real torch.save archives, about one member in 4,000). torch.load reads data/N as raw bytes and
 * an import-free pickle runs nothing: no pickle_malformed, no unresolved global, the archive
 * stays warn. Near miss: a member whose pickle imports os.system and stops cleanly is unsafe. */
START_TEST(test_member_chance_pickle_is_data)
{
    static const char empty_tuple[] = ")2.\xbd\x5c\x1c\x63\xbe";
    static const char ext1[] = "\x82\x47.\x4b\x9b\x13\x96\xbd\x03\x9b\x6a\xc1\x8b";
    static const char ext2[] = "\x83\x6b\x42.\x7f\xd4\xc5\xff";
    static const char proto[] = "\x80\x02).\xff\xfe";
    static const char imports[] = "\x80\x02"
                                  "cos\nsystem\nq\x00)R.\xff";
    const char *member[] = {empty_tuple, ext1, ext2, proto, imports};
    size_t member_len[] = {sizeof empty_tuple - 1, sizeof ext1 - 1, sizeof ext2 - 1,
                           sizeof proto - 1, sizeof imports - 1};
    for (size_t i = 0; i < sizeof member / sizeof member[0]; i++) {
        zb_entry e[3] = {zb_file("archive/data.pkl", BENIGN, sizeof BENIGN - 1),
                         zb_file("archive/data/0", member[i], member_len[i]),
                         zb_file("archive/version", "3\n", 2)};
        size_t len;
        uint64_t offs[3];
        uint8_t *z = zb_build(e, 3, NULL, &len, offs);
        stg_report *r = check(z, len, "model.pt");
        if (member[i] == imports) {
            assert_member(first(r, STG_PICKLE_GLOBAL_DANGEROUS), "archive/data/0", offs[1]);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        } else {
            ck_assert_int_eq(tu_find(r, STG_PICKLE_MALFORMED), -1);
            ck_assert_int_eq(tu_find(r, STG_PICKLE_GLOBAL_UNRESOLVED), -1);
            ck_assert_int_le(stg_report_verdict(r), STG_VERDICT_WARN);
        }
        stg_report_free(r);
        free(z);
    }
}
END_TEST

/* A Flax checkpoint (msgpack) of two top-level keys starts 0x82 0xa6 "params": EXT1 with code
 * 166 to a pickle reader, which then breaks. An EXT code names a global by number, resolvable
 * only through a registry the program filled: under a name that claims no pickle the file is
 * unknown content (warn), not an unsafe pickle. Near miss: the same bytes named model.pkl or
 * pytorch_model.bin, which a loader unpickles, are unsafe. */
START_TEST(test_ext_code_without_pickle_name)
{
    static const char flax[] = "\x82\xa6params\x81\xa7"
                               "Dense_0\x82\xa6kernel\xc4\x04\0\0\x80?\xa4"
                               "bias\xc4\x04\0\0\0\0\xab"
                               "batch_stats\x80";
    static const char *const names[] = {"flax_model.msgpack", NULL, "model.pkl",
                                        "pytorch_model.bin"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        stg_report *r = check(flax, sizeof flax - 1, names[i]);
        if (i < 2) {
            ck_assert_int_eq(tu_find(r, STG_PICKLE_GLOBAL_UNRESOLVED), -1);
            ck_assert_int_ge(tu_find(r, STG_FORMAT_UNKNOWN), 0);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
        } else {
            ck_assert_uint_eq(first(r, STG_PICKLE_GLOBAL_UNRESOLVED)->offset, 0);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        }
        stg_report_free(r);
    }
}
END_TEST

/* ------------------------------------------------------------------------------- zip codes */

START_TEST(test_zip_malformed)
{
    /* A local header at offset 0 but no directory: fails closed (bypass class 6). */
    stg_report *r = check(B("PK\x03\x04\x14\0\0\0\0\0garbage garbage garbage"), "model.pt");
    const stg_finding *f = first(r, STG_ZIP_MALFORMED);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    /* The central directory cut off: the local headers are walked and still scanned. */
    {
        zb_entry c[2] = {zb_file("archive/version", "3\n", 2),
                         zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1)};
        size_t clen;
        uint64_t coffs[2];
        uint8_t *cz = zb_build(c, 2, NULL, &clen, coffs);
        size_t cut = (size_t)coffs[1] + 30 + 16 + sizeof EVIL - 1; /* end of the last data */
        r = check(cz, cut, "model.pt");
        f = first(r, STG_ZIP_MALFORMED);
        ck_assert_uint_eq(f->offset, 0);
        f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
        assert_member(f, "archive/data.pkl", coffs[1]);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
        free(cz);
    }
    /* Overlapping entries: the second central entry reuses the first's local header. */
    zb_entry e[3] = {zb_file("archive/data.pkl", BENIGN, sizeof BENIGN - 1),
                     zb_file("archive/version", "3\n", 2),
                     zb_file("archive/again.pkl", BENIGN, sizeof BENIGN - 1)};
    e[2].share_local_with = 0;
    size_t len;
    uint64_t offs[3];
    uint8_t *z = zb_build(e, 3, NULL, &len, offs);
    r = check(z, len, NULL);
    f = first(r, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, offs[0]);
    /* the again.pkl name differs from the shared local header's: reported too */
    first(r, STG_ZIP_HEADER_MISMATCH);
    stg_report_free(r);
    free(z);
    /* A local header offset past the directory: miniz refuses the whole archive (its data
     * would end past the file), zipfile opens it and that entry is malformed, with its name. */
    zb_entry g[2] = {zb_file("a.txt", "hello", 5),
                     zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1)};
    z = zb_build(g, 2, NULL, &len, offs);
    size_t cd = (size_t)(z[len - 22 + 16] | (z[len - 22 + 17] << 8));
    z[cd + 42] = 0xf0;
    r = check(z, len, NULL);
    ck_assert_uint_eq(tu_count(r, STG_ZIP_MALFORMED), 2);
    f = first(r, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, cd);
    ck_assert_ptr_nonnull(strstr(f->message, "miniz (torch.load) refuses the archive"));
    f = stg_report_at(r, (size_t)tu_find(r, STG_ZIP_MALFORMED) + 1);
    ck_assert_int_eq(f->code, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, cd);
    assert_member(f, "a.txt", cd);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS); /* the other entry is still scanned */
    stg_report_free(r);
    free(z);
    /* near miss: a well-formed torch zip */
    z = fixture("torch-benign.pt", &len);
    r = check(z, len, NULL);
    ck_assert_int_eq(tu_find(r, STG_ZIP_MALFORMED), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
    /* pickle_file only, as info: every global is on the built-in allowlist */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_FILE), 1);
    ck_assert_int_eq(first(r, STG_PICKLE_FILE)->severity, STG_SEV_INFO);
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_zip_header_mismatch_both_names)
{
    /* Bypass class 3: the central directory says "archive/version", the local header says
     * "archive/data.pkl"; the evil pickle is scanned and the mismatch reported. */
    zb_entry e[1] = {zb_file("archive/version", EVIL, sizeof EVIL - 1)};
    e[0].local_name = "archive/data.pkl";
    size_t len;
    uint64_t offs[1];
    uint8_t *z = zb_build(e, 1, NULL, &len, offs);
    stg_report *r = check(z, len, "model.pt");
    const stg_finding *f = first(r, STG_ZIP_HEADER_MISMATCH);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, offs[0]);
    assert_member(f, "archive/version", offs[0]);
    ck_assert_ptr_nonnull(strstr(f->message, "name"));
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->module, "os");
    ck_assert_str_eq(f->name, "system");
    ck_assert_uint_eq(f->offset, 2);
    assert_member(f, "archive/version", offs[0]);
    stg_report_free(r);
    free(z);
    /* Sizes differ: the local header's shorter reading is scanned too, under its name. */
    zb_entry s = zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1);
    s.local_csize_set = true;
    s.local_csize = 13; /* PROTO + the GLOBAL: a truncated pickle */
    z = zb_build(&s, 1, NULL, &len, offs);
    r = check(z, len, NULL);
    f = first(r, STG_ZIP_HEADER_MISMATCH);
    ck_assert_ptr_nonnull(strstr(f->message, "sizes"));
    ck_assert_uint_ge(tu_count(r, STG_PICKLE_GLOBAL_DANGEROUS), 2);
    first(r, STG_PICKLE_MALFORMED);
    stg_report_free(r);
    free(z);
    /* near miss: identical headers */
    zb_entry ok = zb_file("archive/data.pkl", BENIGN, sizeof BENIGN - 1);
    z = zb_build(&ok, 1, NULL, &len, NULL);
    r = check(z, len, NULL);
    ck_assert_int_eq(tu_find(r, STG_ZIP_HEADER_MISMATCH), -1);
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_zip_encrypted_flag)
{
    /* Bypass class 4: flag bits 0x1/0x20/0x40 are reported and ignored; the data is read. */
    static const uint16_t bits[] = {0x1, 0x20, 0x40};
    for (size_t i = 0; i < 3; i++) {
        zb_entry e = zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1);
        e.flags = bits[i];
        size_t len;
        uint64_t offs[1];
        uint8_t *z = zb_build(&e, 1, NULL, &len, offs);
        stg_report *r = check(z, len, NULL);
        const stg_finding *f = first(r, STG_ZIP_ENCRYPTED_FLAG);
        ck_assert_int_eq(f->severity, STG_SEV_WARNING);
        ck_assert_uint_eq(f->offset, offs[0]);
        assert_member(f, "archive/data.pkl", offs[0]);
        first(r, STG_PICKLE_GLOBAL_DANGEROUS);
        stg_report_free(r);
        free(z);
    }
    /* near miss: data-descriptor and UTF-8 bits are not encryption */
    zb_entry e = zb_file("archive/data.pkl", BENIGN, sizeof BENIGN - 1);
    e.flags = 0x808;
    size_t len;
    uint8_t *z = zb_build(&e, 1, NULL, &len, NULL);
    stg_report *r = check(z, len, NULL);
    ck_assert_int_eq(tu_find(r, STG_ZIP_ENCRYPTED_FLAG), -1);
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_zip_bomb)
{
    if (!tu_inflate_built()) {
        return;
    }
    size_t dlen;
    uint8_t *deflated = fixture("zeros-2m.deflate", &dlen);
    zb_entry e[2] = {zb_file("archive/data/0", deflated, dlen),
                     zb_file("archive/data.pkl", BENIGN, sizeof BENIGN - 1)};
    e[0].method = 8;
    e[0].uncomp_size = 2u << 20;
    size_t len;
    uint64_t offs[2];
    uint8_t *z = zb_build(e, 2, NULL, &len, offs);
    stg_limits lim;
    stg_limits_default(&lim);
    /* ~1023:1 is over the default 1000:1 ratio cap */
    stg_report *r = check_with(z, len, NULL, &lim);
    const stg_finding *f = first(r, STG_ZIP_BOMB);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, offs[0]);
    assert_member(f, "archive/data/0", offs[0]);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    /* near miss: ratio cap 1100 */
    lim.max_inflate_ratio = 1100;
    r = check_with(z, len, NULL, &lim);
    ck_assert_int_eq(tu_find(r, STG_ZIP_BOMB), -1);
    ck_assert_int_eq(tu_find(r, STG_ZIP_MALFORMED), -1);
    stg_report_free(r);
    /* size cap at exactly the size passes, one byte less is a bomb */
    lim.max_inflate_ratio = 0;
    lim.max_inflate_bytes = 2u << 20;
    r = check_with(z, len, NULL, &lim);
    ck_assert_int_eq(tu_find(r, STG_ZIP_BOMB), -1);
    stg_report_free(r);
    lim.max_inflate_bytes = (2u << 20) - 1;
    r = check_with(z, len, NULL, &lim);
    first(r, STG_ZIP_BOMB);
    stg_report_free(r);
    free(z);
    /* Overlapping entries cannot multiply inflation past the archive-wide budget. */
    zb_entry many[40];
    for (int i = 0; i < 40; i++) {
        many[i] = e[0];
        many[i].share_local_with = i == 0 ? -1 : 0;
    }
    stg_limits_default(&lim);
    lim.max_inflate_ratio = 0;
    lim.max_inflate_bytes = 16u << 20; /* 8 readings fit, the 9th does not */
    z = zb_build(many, 40, NULL, &len, NULL);
    r = check_with(z, len, NULL, &lim);
    ck_assert_uint_eq(tu_count(r, STG_ZIP_BOMB), 1);
    first(r, STG_ZIP_MALFORMED);
    stg_report_free(r);
    free(z);
    /* Nested archives share one budget: four stored inner zips, each inflating 2 MiB, under a
     * 5 MiB budget for the whole check: the third and fourth hit it. */
    {
        size_t in_len;
        uint8_t *inner = zb_build(&e[0], 1, NULL, &in_len, NULL);
        zb_entry outer[4] = {zb_file("b0.zip", inner, in_len), zb_file("b1.zip", inner, in_len),
                             zb_file("b2.zip", inner, in_len), zb_file("b3.zip", inner, in_len)};
        z = zb_build(outer, 4, NULL, &len, NULL);
        stg_limits_default(&lim);
        lim.max_inflate_ratio = 0;
        lim.max_inflate_bytes = 5u << 20;
        r = check_with(z, len, NULL, &lim);
        ck_assert_uint_eq(tu_count(r, STG_ZIP_BOMB), 2);
        f = first(r, STG_ZIP_BOMB);
        ck_assert_str_eq(f->member, "b2.zip!archive/data/0");
        stg_report_free(r);
        lim.max_inflate_bytes = 8u << 20; /* near miss: exactly enough */
        r = check_with(z, len, NULL, &lim);
        ck_assert_int_eq(tu_find(r, STG_ZIP_BOMB), -1);
        stg_report_free(r);
        free(z);
        free(inner);
    }
    /* gzip stream bomb at offset 0 */
    uint8_t *g = fixture("zeros-2m.gz", &len);
    stg_limits_default(&lim);
    r = check_with(g, len, NULL, &lim);
    f = first(r, STG_ZIP_BOMB);
    ck_assert_uint_eq(f->offset, 0);
    ck_assert_ptr_null(f->member);
    stg_report_free(r);
    lim.max_inflate_ratio = 2000;
    r = check_with(g, len, NULL, &lim);
    ck_assert_int_eq(tu_find(r, STG_ZIP_BOMB), -1);
    stg_report_free(r);
    free(g);
    free(deflated);
}
END_TEST

START_TEST(test_container_malformed)
{
    size_t len;
    uint8_t *t = fixture("torch01-benign.tar", &len);
    stg_report *r = check(t, len, NULL);
    ck_assert_int_eq(tu_find(r, STG_CONTAINER_MALFORMED), -1); /* near miss */
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_TAR);
    stg_report_free(r);
    /* Second member's header checksum broken: malformed at that header. */
    size_t second = 0;
    for (size_t off = 512; off + 512 <= len; off += 512) {
        if (memcmp(t + off + 257, "ustar", 5) == 0 && memcmp(t + off, "pickle", 6) == 0) {
            second = off;
            break;
        }
    }
    ck_assert_uint_gt(second, 0);
    t[second + 100] ^= 1;
    r = check(t, len, NULL);
    const stg_finding *f = first(r, STG_CONTAINER_MALFORMED);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, second);
    stg_report_free(r);
    free(t);
    /* Truncated gzip stream; bytes after a zlib stream. */
    if (tu_inflate_built()) {
        uint8_t *g = fixture("evil.pkl.gz", &len);
        r = check(g, len - 10, NULL);
        first(r, STG_CONTAINER_MALFORMED);
        stg_report_free(r);
        free(g);
        uint8_t *zl = fixture("evil.pkl.zlib", &len);
        uint8_t *more = malloc(len + 4);
        memcpy(more, zl, len);
        memcpy(more + len, "JUNK", 4);
        r = check(more, len + 4, NULL);
        f = first(r, STG_CONTAINER_MALFORMED);
        ck_assert_uint_eq(f->offset, len);
        first(r, STG_PICKLE_GLOBAL_DANGEROUS);
        stg_report_free(r);
        r = check(zl, len, NULL);
        ck_assert_int_eq(tu_find(r, STG_CONTAINER_MALFORMED), -1);
        stg_report_free(r);
        free(more);
        free(zl);
    }
}
END_TEST

/* ----------------------------------------------------------------------- bypass classes */

START_TEST(test_bypass_unusual_member_name)
{
    /* Class 2: the pickle member is picked by content, whatever its name or folder. */
    zb_entry e[3] = {zb_file("x/version", "3\n", 2), zb_file("x/weights", EVIL, sizeof EVIL - 1),
                     zb_file("x/constants.pkl", BENIGN, sizeof BENIGN - 1)};
    size_t len;
    uint64_t offs[3];
    uint8_t *z = zb_build(e, 3, NULL, &len, offs);
    stg_report *r = check(z, len, "model.pt");
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    assert_member(f, "x/weights", offs[1]);
    ck_assert_uint_eq(f->offset, 2);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
    /* once per file, however many pickle members it has */
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_FILE), 1);
    ck_assert_uint_eq(stg_report_global_count(r), 2);
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_zip64_and_prepended)
{
    /* A ZIP64 archive (placeholders, extra fields, end records) is read like any other. */
    zb_entry e = zb_file("big/data.pkl", EVIL, sizeof EVIL - 1);
    zb_opts o = {.zip64 = true};
    size_t len;
    uint64_t offs[1];
    uint8_t *z = zb_build(&e, 1, &o, &len, offs);
    stg_report *r = check(z, len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
    assert_member(first(r, STG_PICKLE_GLOBAL_DANGEROUS), "big/data.pkl", offs[0]);
    ck_assert_int_eq(tu_find(r, STG_ZIP_MALFORMED), -1);
    stg_report_free(r);
    free(z);
    /* Bytes prepended to an archive: nothing known at offset 0, but zip tools open it. */
    static const char junk[] = "#!/bin/sh\nexit 0\n";
    zb_opts p = {.prefix = junk, .prefix_len = sizeof junk - 1};
    z = zb_build(&e, 1, &p, &len, offs);
    r = check(z, len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
    assert_member(first(r, STG_PICKLE_GLOBAL_DANGEROUS), "big/data.pkl", sizeof junk - 1);
    ck_assert_int_eq(tu_find(r, STG_FORMAT_UNKNOWN), -1);
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_bypass_bad_crc)
{
    /* Class 5: the CRC is never required (this one is wrong on purpose). */
    zb_entry e = zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1);
    e.crc = 0xdeadbeef;
    size_t len;
    uint8_t *z = zb_build(&e, 1, NULL, &len, NULL);
    stg_report *r = check(z, len, NULL);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_bypass_raw_pickle_named_bin)
{
    /* Class 6: a raw pickle named like a torch zip is sniffed by content. */
    stg_report *r = check(B(EVIL), "pytorch_model.bin");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PICKLE);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    /* A protocol-0 pickle without STOP still runs its REDUCE in a loader: generic fallback. */
    r = check(B("cos\nsystem\n(S'id'\ntR"), "model.pt");
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    r = check(B("cos\nsystem\n(S'id'\ntR"), NULL);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    stg_report_free(r);
}
END_TEST

START_TEST(test_bypass_stacked_and_legacy)
{
    /* Class 14: the payload is in a later pickle. */
    uint8_t buf[256];
    memcpy(buf, BENIGN, sizeof BENIGN - 1);
    memcpy(buf + sizeof BENIGN - 1, EVIL, sizeof EVIL - 1);
    stg_report *r = check(buf, sizeof BENIGN - 1 + sizeof EVIL - 1, "model.pkl");
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_uint_eq(f->offset, sizeof BENIGN - 1 + 2);
    ck_assert_ptr_null(f->member);
    stg_report_free(r);
    /* Class 15: a legacy-looking file with a wrong magic number is still scanned through. */
    static const char bad_magic[] = "\x80\x02\x8a\nl\xfc\x9c"
                                    "F\xf9 j\xa8P\x18.";
    memcpy(buf, bad_magic, sizeof bad_magic - 1);
    memcpy(buf + sizeof bad_magic - 1, EVIL0, sizeof EVIL0 - 1);
    r = check(buf, sizeof bad_magic - 1 + sizeof EVIL0 - 1, "model.pt");
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_uint_eq(f->offset, sizeof bad_magic - 1);
    stg_report_free(r);
}
END_TEST

START_TEST(test_bypass_torch_tar)
{
    /* Class 16: the PyTorch 0.1 tar layout. */
    size_t len;
    uint8_t *t = fixture("torch01-evil.tar", &len);
    stg_report *r = check(t, len, "old.pt");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_TAR);
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "pickle");
    ck_assert_uint_eq(f->offset, 2);
    ck_assert(f->has_member_offset);
    ck_assert_uint_eq(f->member_offset % 512, 0);
    ck_assert(memcmp(t + f->member_offset, "pickle", 6) == 0);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_FILE), 1);
    stg_report_free(r);
    free(t);
    t = fixture("plain-evil.tar", &len);
    r = check(t, len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TAR);
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "dir/model.bin");
    stg_report_free(r);
    free(t);
}
END_TEST

START_TEST(test_torch01_records)
{
    /* Storages and tensors members framed as torch 0.1 wrote them: the raw records between the
     * pickles are skipped by their sizes, so a real file is not malformed... */
    size_t len;
    uint8_t *t = fixture("torch01-framed.tar", &len);
    stg_report *r = check(t, len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_TAR);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r)); /* allowed */
    ck_assert_uint_eq(stg_report_global_count(r), 5); /* 2 sys_info/pickle, 2 storages, 1 tensor */
    stg_report_free(r);
    /* ...and a record whose element count runs past the member is reported, and the rest is
     * walked as pickles: never skipped. */
    size_t storages = 0;
    for (size_t off = 0; off + 512 <= len; off += 512) {
        if (memcmp(t + off, "storages", 9) == 0 && memcmp(t + off + 257, "ustar", 5) == 0) {
            storages = off + 512;
        }
    }
    ck_assert_uint_gt(storages, 0);
    static const char args_end[] = "\x87q\x03.";
    uint8_t *count = memmem(t + storages, 200, args_end, 4);
    ck_assert_ptr_nonnull(count);
    count[4 + 3] = 0x01; /* element count 4 -> 4 + 2^24 */
    r = check(t, len, NULL);
    const stg_finding *f = first(r, STG_PICKLE_MALFORMED);
    ck_assert_str_eq(f->member, "storages");
    stg_report_free(r);
    free(t);
    /* The payload in the second storage's argument pickle is found at its offset. */
    t = fixture("torch01-framed-evil.tar", &len);
    r = check(t, len, NULL);
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "storages");
    ck_assert_uint_eq(f->offset, 5 + 46 + 24 + 2);
    /* that pickle returns no (key, location, storage class): the element size torch would
     * use is unknown, so framing stops there with a finding, never a guess */
    f = first(r, STG_TORCH01_STORAGE_UNRESOLVED);
    ck_assert_str_eq(f->member, "storages");
    ck_assert_uint_eq(f->offset, 5 + 46 + 24);
    ck_assert_int_eq(f->severity, STG_SEV_CRITICAL);
    stg_report_free(r);
    free(t);
    /* A storage class of no known element size (torch's own classes: torch._utils.
     * _element_size of their dtype) is unresolved too; the real class above is framed. */
    t = fixture("torch01-framed.tar", &len);
    uint8_t *cls = memmem(t + storages, len - storages, "FloatStorage", 12);
    ck_assert_ptr_nonnull(cls);
    cls[11] = '2';
    r = check(t, len, NULL);
    f = first(r, STG_TORCH01_STORAGE_UNRESOLVED);
    ck_assert_str_eq(f->member, "storages");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(t);
}
END_TEST

START_TEST(test_bypass_compressed)
{
    /* Class 18: zlib and gzip pickles are inflated and scanned; joblib's label. */
    if (!tu_inflate_built()) {
        return;
    }
    static const struct {
        const char *file;
        stg_format fmt;
    } cases[] = {{"evil.pkl.gz", STG_FMT_GZIP}, {"evil.pkl.zlib", STG_FMT_ZLIB}};
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        uint8_t *p = fixture(cases[i].file, &len);
        stg_report *r = check(p, len, NULL);
        ck_assert_int_eq(stg_report_format(r), cases[i].fmt);
        const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
        ck_assert_str_eq(f->member, "(decompressed)");
        ck_assert_uint_eq(f->offset, 2);
        ck_assert_uint_eq(tu_count(r, STG_PICKLE_FILE), 1);
        stg_report_free(r);
        free(p);
    }
    size_t len;
    uint8_t *p = fixture("joblib-zlib.joblib", &len);
    stg_report *r = check(p, len, NULL); /* joblib by its globals, without the name */
    ck_assert_int_eq(stg_report_format(r), STG_FMT_JOBLIB);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK); /* pickle_file info: allowed */
    ck_assert_uint_eq(stg_report_global_count(r), 1);
    ck_assert_str_eq(stg_report_global_at(r, 0)->module, "joblib.numpy_pickle");
    stg_report_free(r);
    free(p);
    /* raw joblib-style pickle: labelled by name or by its globals */
    r = check(B(BENIGN), "model.joblib");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_JOBLIB);
    stg_report_free(r);
}
END_TEST

/* ----------------------------------------------------------------------- joblib ZF files */

/* "ZF" + field (19 bytes, as given, space-padded) + extra + the zlib stream of EVIL. */
static uint8_t *zfile(const char *field, const char *extra, size_t cut, size_t *len)
{
    size_t zlen;
    uint8_t *z = fixture("evil.pkl.zlib", &zlen);
    size_t el = strlen(extra);
    uint8_t *p = malloc(21 + el + zlen);
    ck_assert_ptr_nonnull(p);
    memcpy(p, "ZF", 2);
    memset(p + 2, ' ', 19);
    memcpy(p + 2, field, strlen(field) < 19 ? strlen(field) : 19);
    memcpy(p + 21, extra, el);
    memcpy(p + 21 + el, z, zlen);
    *len = 21 + el + zlen - cut;
    free(z);
    return p;
}

START_TEST(test_joblib_zfile)
{
    if (!tu_inflate_built()) {
        return;
    }
    /* What joblib < 0.10 wrote ('0x%x' left-justified), 0.8.4's extra space, and other
     * spellings Python's int(field, 16) accepts. */
    static const struct {
        const char *field, *extra;
    } ok[] = {{"0x1e", ""},   {"0x1e", " "}, {"1e", ""},       {"  0X1E", ""},
              {"0x_1_e", ""}, {"+0x1e", ""}, {"\t0x1e\r", ""}, {"0x7fffffffffffffff", ""},
              {"0", ""},      {"-0", ""}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t len;
        uint8_t *p = zfile(ok[i].field, ok[i].extra, 0, &len);
        stg_report *r = check(p, len, NULL);
        ck_assert_msg(stg_report_format(r) == STG_FMT_JOBLIB, "case %zu: %s", i, tu_describe(r));
        const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
        ck_assert_str_eq(f->member, "(decompressed)");
        ck_assert_uint_eq(f->offset, 2);
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
        free(p);
    }
    /* near misses: fields int(x, 16) refuses (joblib fails before reading anything) are not
     * ZF; the bytes are then no known format */
    static const char *const bad[] = {
        "0x",       "_1e",
        "1e_",      "1__e",
        "0x1g",     "-0x1e",
        "",         "0x1 e",
        "0x1e\x01", "0x10000000000000000" /* 2^64: zlib.decompress overflows */};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len;
        uint8_t *p = zfile(bad[i], "", 0, &len);
        stg_report *r = check(p, len, NULL);
        ck_assert_msg(stg_report_format(r) != STG_FMT_JOBLIB, "case %zu: %s", i, tu_describe(r));
        stg_report_free(r);
        free(p);
    }
    /* a NUL in the field: Python refuses it too */
    size_t len;
    uint8_t *p = zfile("0x1e", "", 0, &len);
    p[6] = 0;
    stg_report *r = check(p, len, NULL);
    ck_assert_int_ne(stg_report_format(r), STG_FMT_JOBLIB);
    stg_report_free(r);
    free(p);
    /* a truncated stream: what was inflated is still scanned, the damage has its offset */
    p = zfile("0x1e", "", 4, &len);
    r = check(p, len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_JOBLIB);
    const stg_finding *f = first(r, STG_CONTAINER_MALFORMED);
    ck_assert_uint_ge(f->offset, 21);
    ck_assert_uint_le(f->offset, len);
    stg_report_free(r);
    free(p);
    /* shorter than the header: not ZF */
    r = check(B("ZF0x1e"), NULL);
    ck_assert_int_ne(stg_report_format(r), STG_FMT_JOBLIB);
    stg_report_free(r);
}
END_TEST

START_TEST(test_deflate_fails_closed_without_zlib)
{
    /* With zlib the deflated member is scanned; a build without it says unscannable. */
    size_t len;
    uint8_t *z = fixture("torch-deflated-evil.pt", &len);
    stg_report *r = check(z, len, NULL);
    if (tu_inflate_built()) {
        first(r, STG_PICKLE_GLOBAL_DANGEROUS);
        ck_assert_int_eq(tu_find(r, STG_FORMAT_UNSCANNABLE), -1);
    } else {
        const stg_finding *f = first(r, STG_FORMAT_UNSCANNABLE);
        ck_assert_str_eq(f->member, "archive/data.pkl");
        ck_assert_uint_eq(f->offset, 0);
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    }
    stg_report_free(r);
    free(z);
    uint8_t *g = fixture("evil.pkl.gz", &len);
    r = check(g, len, NULL);
    if (tu_inflate_built()) {
        ck_assert_int_eq(tu_find(r, STG_FORMAT_UNSCANNABLE), -1);
    } else {
        const stg_finding *f = first(r, STG_FORMAT_UNSCANNABLE);
        ck_assert_uint_eq(f->offset, 0);
    }
    ck_assert_int_ge(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    free(g);
}
END_TEST

START_TEST(test_safetensors_index_by_name)
{
    static const char ix[] = "{\"metadata\":{\"total_size\":8},"
                             "\"weight_map\":{\"a\":\"model-00001-of-00001.safetensors\"}}";
    stg_report *r = check(B(ix), "model.safetensors.index.json");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS_INDEX);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    r = check(B("{\"weight_map\":[]}"), "model.safetensors.index.json");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_SAFETENSORS_INDEX);
    first(r, STG_INDEX_INVALID);
    stg_report_free(r);
    /* near miss: the same JSON under another name is just a JSON document */
    r = check(B(ix), "config.json");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_JSON);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------ nesting and labels */

START_TEST(test_nesting_limit)
{
    zb_entry inner_e = zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1);
    size_t inner_len;
    uint8_t *inner = zb_build(&inner_e, 1, NULL, &inner_len, NULL);
    zb_entry outer_e = zb_file("inner.zip", inner, inner_len);
    size_t len;
    uint64_t offs[1];
    uint8_t *outer = zb_build(&outer_e, 1, NULL, &len, offs);
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_nesting = 2;
    stg_report *r = check_with(outer, len, NULL, &lim);
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "inner.zip!archive/data.pkl");
    ck_assert_uint_eq(f->offset, 2);
    ck_assert_int_eq(tu_find(r, STG_LIMIT_EXCEEDED), -1);
    stg_report_free(r);
    lim.max_nesting = 1;
    r = check_with(outer, len, NULL, &lim);
    f = first(r, STG_LIMIT_EXCEEDED);
    ck_assert_str_eq(f->limit, "max_nesting");
    ck_assert_str_eq(f->member, "inner.zip!archive/data.pkl");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    free(outer);
    free(inner);
}
END_TEST

START_TEST(test_numpy_zip_and_npy)
{
    static const char npy[] = "\x93NUMPY\x01\x00\x76\x00"
                              "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
                              "                                                            \n"
                              "\x00\x00\x80\x3f";
    zb_entry e[2] = {zb_file("a.npy", npy, sizeof npy - 1), zb_file("b.npy", npy, sizeof npy - 1)};
    size_t len;
    uint8_t *z = zb_build(e, 2, NULL, &len, NULL);
    stg_report *r = check(z, len, "arrays.npz");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_NUMPY_ZIP);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    r = check(B(npy), "a.npy");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_NUMPY);
    ck_assert_int_eq(tu_find(r, STG_PICKLE_FILE), -1);
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_pickle_suffix_forces_pickle)
{
    /* A member named *.pickle is unpickled by whoever trusts its name: it is walked as a pickle
     * whatever its bytes look like (so junk there is pickle_malformed in that member). */
    static const char junk[] = "this is not a pickle";
    zb_entry e = zb_file("weights/data.pickle", junk, sizeof junk - 1);
    size_t len;
    uint64_t offs[1];
    uint8_t *z = zb_build(&e, 1, NULL, &len, offs);
    stg_report *r = check(z, len, NULL);
    const stg_finding *f = first(r, STG_PICKLE_MALFORMED);
    assert_member(f, "weights/data.pickle", offs[0]);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
    stg_report_free(r);
    free(z);
    /* near miss: the same bytes under a name that claims nothing are plain data */
    e.name = "weights/data.pickles";
    z = zb_build(&e, 1, NULL, &len, offs);
    r = check(z, len, NULL);
    ck_assert_int_eq(tu_find(r, STG_PICKLE_MALFORMED), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_ZIP);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    free(z);
}
END_TEST

START_TEST(test_inflate_budget_zero)
{
    /* max_inflate_bytes = 0: nothing may be inflated. A deflated zip member and a gzip stream
     * are zip_bomb (size cap) at the member's header / offset 0; nothing is produced, and the
     * empty result is what gets scanned (no other finding). */
    if (!tu_inflate_built()) {
        return;
    }
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_inflate_bytes = 0;
    static const uint8_t stored_hi[] = {0x01, 0x02, 0x00, 0xfd, 0xff, 'h', 'i'};
    zb_entry e[2] = {zb_file("a.txt", "plain", 5), zb_file("b.bin", stored_hi, sizeof stored_hi)};
    e[1].method = 8;
    e[1].uncomp_size = 2;
    size_t len;
    uint64_t offs[2];
    uint8_t *z = zb_build(e, 2, NULL, &len, offs);
    stg_report *r = check_with(z, len, NULL, &lim);
    const stg_finding *f = first(r, STG_ZIP_BOMB);
    assert_member(f, "b.bin", offs[1]);
    ck_assert_str_eq(f->message, "member inflates past the size cap: the rest is not scanned");
    ck_assert_uint_eq(tu_count(r, STG_ZIP_BOMB), 1);
    ck_assert_int_eq(tu_find(r, STG_ZIP_MALFORMED), -1);
    stg_report_free(r);
    /* near miss: a budget of 2 bytes inflates it */
    lim.max_inflate_bytes = 2;
    r = check_with(z, len, NULL, &lim);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    free(z);
    size_t glen;
    uint8_t *g = fixture("evil.pkl.gz", &glen);
    lim.max_inflate_bytes = 0;
    r = check_with(g, glen, NULL, &lim);
    f = first(r, STG_ZIP_BOMB);
    ck_assert_uint_eq(f->offset, 0);
    ck_assert_ptr_null(f->member);
    ck_assert_int_eq(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS), -1);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_GZIP);
    stg_report_free(r);
    free(g);
}
END_TEST

/* ------------------------------------------------------------------ zip reader models */

START_TEST(test_zip_ambiguous)
{
    /* Two ZIP64 end records: torch.load's miniz follows the locator to one directory,
     * Python's zipfile takes the record before the locator and reads another (a copy whose
     * first name differs). zip_ambiguous at miniz's directory, and both are scanned: the
     * renamed entry's header mismatch comes from zipfile's reading only. (The payload cases
     * against the real loaders: script_zip_attacks.sh.) */
    zb_entry e[2] = {zb_file("archive/version", "3\n", 2),
                     zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1)};
    zb_opts o = {.zip64 = true};
    size_t len, len2;
    uint64_t offs[2], second_cd;
    uint8_t *one = zb_build(e, 2, &o, &len, offs);
    uint8_t *two = zb_two_zip64_directories(one, len, 'A', &len2, &second_cd);
    uint64_t miniz_cd = stg_le64(one + len - 98 + 48);
    stg_report *r = check(two, len2, "model.pt");
    const stg_finding *f = first(r, STG_ZIP_AMBIGUOUS);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, miniz_cd);
    f = first(r, STG_ZIP_HEADER_MISMATCH);
    assert_member(f, "Archive/version", offs[0]);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_GLOBAL_DANGEROUS), 2); /* once per reading */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    /* near miss: one ZIP64 record, both readers agree: one reading, no error */
    r = check(one, len, "model.pt");
    ck_assert_int_eq(tu_find(r, STG_ZIP_AMBIGUOUS), -1);
    ck_assert_int_eq(tu_find(r, STG_ZIP_MALFORMED), -1);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_GLOBAL_DANGEROUS), 1);
    stg_report_free(r);
    free(two);
    free(one);
}
END_TEST

START_TEST(test_zip_one_reader_refuses)
{
    /* The last end record declares more entries than its directory holds: miniz refuses the
     * archive (zip_malformed at the end record, saying what zipfile does), zipfile ignores
     * the count and its reading is scanned: the payload is found. stguard used to fall back
     * to an earlier end record here. */
    zb_entry e[2] = {zb_file("archive/version", "3\n", 2),
                     zb_file("archive/data.pkl", EVIL, sizeof EVIL - 1)};
    size_t len;
    uint64_t offs[2];
    uint8_t *z = zb_build(e, 2, NULL, &len, offs);
    z[len - 22 + 8] = 9;
    z[len - 22 + 10] = 9;
    stg_report *r = check(z, len, "model.pt");
    const stg_finding *f = first(r, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, len - 22);
    ck_assert_ptr_nonnull(strstr(f->message, "miniz (torch.load) refuses the archive"));
    ck_assert_ptr_nonnull(strstr(f->message, "zipfile (numpy.load) reads the directory"));
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_int_eq(tu_find(r, STG_ZIP_AMBIGUOUS), -1);
    stg_report_free(r);
    /* Fewer entries declared than the directory holds: zipfile reads both (its reading has
     * more entries than the count), miniz only the first. */
    z[len - 22 + 8] = 1;
    z[len - 22 + 10] = 1;
    r = check(z, len, "model.pt");
    first(r, STG_ZIP_AMBIGUOUS);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    stg_report_free(r);
    /* Neither reader opens it (the directory size points before the file): each refusal is
     * reported, and the local headers are still walked. */
    z[len - 22 + 8] = 2;
    z[len - 22 + 10] = 2;
    z[len - 22 + 15] = 0x7f; /* directory size ~2 GiB */
    r = check(z, len, "model.pt");
    ck_assert_uint_eq(tu_count(r, STG_ZIP_MALFORMED), 2);
    f = first(r, STG_ZIP_MALFORMED);
    ck_assert_uint_eq(f->offset, len - 22);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    stg_report_free(r);
    /* Bytes prepended to a file that does not start as a zip: miniz cannot open it, but no
     * loader routes such a file to miniz; only the zipfile reading is scanned, no error for
     * the refusal. */
    zb_opts o = {.prefix = "not a zip, just a prefix", .prefix_len = 24};
    uint8_t *pre = zb_build(e, 2, &o, &len, offs);
    r = check(pre, len, NULL);
    ck_assert_int_eq(tu_find(r, STG_ZIP_MALFORMED), -1);
    first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    stg_report_free(r);
    free(pre);
    free(z);
}
END_TEST

static Suite *containers_suite(void)
{
    Suite *s = suite_create("containers");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_format_unknown);
    tcase_add_test(tc, test_member_compressed_by_chance);
    tcase_add_test(tc, test_member_pickle_without_stop);
    tcase_add_test(tc, test_member_chance_pickle_is_data);
    tcase_add_test(tc, test_ext_code_without_pickle_name);
    tcase_add_test(tc, test_format_mismatch);
    tcase_add_test(tc, test_gguf_onnx_validated);
    tcase_add_test(tc, test_torchscript_program);
    tcase_add_test(tc, test_format_unscannable);
    tcase_add_loop_test(tc, test_zip_bzip2_lzma_member, 0, 2);
    tcase_add_test(tc, test_zip_malformed);
    tcase_add_test(tc, test_zip_header_mismatch_both_names);
    tcase_add_test(tc, test_zip_encrypted_flag);
    tcase_add_test(tc, test_zip_bomb);
    tcase_add_test(tc, test_container_malformed);
    tcase_add_test(tc, test_bypass_unusual_member_name);
    tcase_add_test(tc, test_zip64_and_prepended);
    tcase_add_test(tc, test_bypass_bad_crc);
    tcase_add_test(tc, test_bypass_raw_pickle_named_bin);
    tcase_add_test(tc, test_bypass_stacked_and_legacy);
    tcase_add_test(tc, test_bypass_torch_tar);
    tcase_add_test(tc, test_torch01_records);
    tcase_add_test(tc, test_bypass_compressed);
    tcase_add_test(tc, test_joblib_zfile);
    tcase_add_test(tc, test_deflate_fails_closed_without_zlib);
    tcase_add_test(tc, test_safetensors_index_by_name);
    tcase_add_test(tc, test_nesting_limit);
    tcase_add_test(tc, test_numpy_zip_and_npy);
    tcase_add_test(tc, test_pickle_suffix_forces_pickle);
    tcase_add_test(tc, test_inflate_budget_zero);
    tcase_add_test(tc, test_zip_ambiguous);
    tcase_add_test(tc, test_zip_one_reader_refuses);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(containers_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
