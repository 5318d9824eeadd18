/* Legacy GGML files and tokenizer files (parser/ggml_legacy.c, validator/tokenizer.c, their
 * format table entries): ggml_legacy for each magic with its version (and near misses that are
 * no legacy file), tokenizer_malformed for each of SentencePiece, tiktoken, vocab.txt and
 * merges.txt with a near miss each, and recognition by name: quiet (ok, no finding) for files
 * of the form their readers take, whatever the bytes under another name. Real writers' output
 * (sentencepiece's trainer) is checked by script_tokenizers.sh. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "parser/ggml_legacy.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/ctx.h"
#include "validator/report.h"

static stg_report *check(const void *buf, size_t len, const char *name)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_buffer(buf, len, name, &ctx);
    stg_report_finish(r);
    return r;
}

#define B(s) s, sizeof s - 1

/* The file is quiet: ok, no finding, this label. */
static void assert_quiet(const void *buf, size_t len, const char *name, stg_format label)
{
    stg_report *r = check(buf, len, name);
    ck_assert_msg(stg_report_count(r) == 0 && stg_report_verdict(r) == STG_VERDICT_OK, "%s: %s",
                  name, tu_describe(r));
    ck_assert_int_eq(stg_report_format(r), label);
    stg_report_free(r);
}

/* The file's first finding is tokenizer_malformed at offset, the verdict not ok. */
static void assert_malformed(const void *buf, size_t len, const char *name, uint64_t offset)
{
    stg_report *r = check(buf, len, name);
    long i = tu_find(r, STG_TOKENIZER_MALFORMED);
    ck_assert_msg(i == 0, "%s: %s", name, tu_describe(r));
    const stg_finding *f = stg_report_at(r, 0);
    ck_assert_msg(f->offset == offset, "%s: at %llu", name, (unsigned long long)f->offset);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
}

/* ---------------------------------------------------------------------------- legacy GGML */

START_TEST(test_ggml_legacy)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *kind;
    } rows[] = {
        {"lmgg\x00\x7d\0\0\x00\x02\0\0", 12, "ggml, unversioned"},
        {"fmgg\x01\0\0\0\x00\x7d\0\0", 12, "ggmf, version 1"},
        {"tjgg\x03\0\0\0\x00\x7d\0\0", 12, "ggjt, version 3"},
        {"tjgg\x09\0\0\0\x00\x7d\0\0", 12, "never written"},
        {"algg\x01\0\0\0", 8, "ggla, version 1"},
        {"tjgg", 4, "cut off"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        /* a .bin name, as llama.cpp's files had: the magic decides, never format_mismatch */
        stg_report *r = check(rows[i].bytes, rows[i].len, "ggml-model-q4_0.bin");
        ck_assert_msg(tu_find(r, STG_GGML_LEGACY) == 0 && stg_report_count(r) == 1, "%zu: %s", i,
                      tu_describe(r));
        const stg_finding *f = stg_report_at(r, 0);
        ck_assert_uint_eq(f->offset, 0);
        ck_assert_int_eq(f->severity, STG_SEV_WARNING);
        ck_assert_ptr_nonnull(strstr(f->message, rows[i].kind));
        ck_assert_int_eq(stg_report_format(r), STG_FMT_GGML_LEGACY);
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
        stg_report_free(r);
    }
    /* near misses: the magic in big-endian order (not what llama.cpp wrote), one byte off */
    static const char *const not_ggml[] = {"ggjt\x03\0\0\0", "tjgh\x03\0\0\0"};
    for (size_t i = 0; i < 2; i++) {
        stg_report *r = check(not_ggml[i], 8, "model.dat");
        ck_assert_int_eq(tu_find(r, STG_GGML_LEGACY), -1);
        ck_assert_int_ne(stg_report_format(r), STG_FMT_GGML_LEGACY);
        stg_report_free(r);
    }
    stg_ggml_legacy g;
    ck_assert(stg_ggml_legacy_read((const uint8_t *)"fmgg\x02\0\0\0", 8, &g));
    ck_assert(g.has_version && g.version == 2 && !g.known);
    ck_assert(!stg_ggml_legacy_read((const uint8_t *)"fmg", 3, &g));
}
END_TEST

/* -------------------------------------------------------------------------- SentencePiece */

/* A ModelProto of pieces (text, type), built as protobuf writes it. */
static size_t spm(uint8_t *out, const char *const *texts, const int *types, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        size_t tl = strlen(texts[i]);
        out[o++] = 0x0a; /* field 1, LEN */
        out[o++] = (uint8_t)(2 + tl + 5 + 2);
        out[o++] = 0x0a; /* piece */
        out[o++] = (uint8_t)tl;
        memcpy(out + o, texts[i], tl);
        o += tl;
        out[o++] = 0x15; /* score, I32 */
        memset(out + o, 0, 4);
        o += 4;
        out[o++] = 0x18; /* type */
        out[o++] = (uint8_t)types[i];
    }
    out[o++] = 0x12; /* trainer_spec: an empty message */
    out[o++] = 0x00;
    return o;
}

START_TEST(test_sentencepiece)
{
    uint8_t b[256];
    static const char *const texts[] = {"<unk>", "<s>", "a", "b"};
    static const int types[] = {2, 3, 1, 1};
    size_t n = spm(b, texts, types, 4);
    assert_quiet(b, n, "tokenizer.model", STG_FMT_SENTENCEPIECE);
    assert_quiet(b, n, "spiece.model", STG_FMT_SENTENCEPIECE);
    assert_quiet(b, n, "target.spm", STG_FMT_SENTENCEPIECE);
    assert_quiet(b, n, "spm.model", STG_FMT_SENTENCEPIECE);          /* microsoft/deberta-v3-base */
    assert_quiet(b, n, "tokenizer.model.v3", STG_FMT_SENTENCEPIECE); /* Mistral-7B v0.3 */
    assert_quiet(b, n, "tokenizer.model.v7m1", STG_FMT_SENTENCEPIECE); /* Pixtral-Large */
    /* a piece twice (at the second piece's tag), no UNKNOWN, two UNKNOWN, an empty piece */
    static const char *const dup[] = {"<unk>", "a", "a"};
    static const int dup_t[] = {2, 1, 1};
    n = spm(b, dup, dup_t, 3);
    assert_malformed(b, n, "tokenizer.model", 16 + 12); /* "<unk>" takes 16 bytes, "a" 12 */
    /* near miss: one text as a CONTROL and as a NORMAL piece (the processor's two maps), a
     * type its enum does not name (the field keeps NORMAL) */
    static const char *const both[] = {"<unk>", "<s>", "<s>", "b"};
    static const int both_t[] = {2, 3, 1, 9};
    n = spm(b, both, both_t, 4);
    assert_quiet(b, n, "tokenizer.model", STG_FMT_SENTENCEPIECE);
    static const int no_unk[] = {1, 3, 1, 1};
    n = spm(b, texts, no_unk, 4);
    assert_malformed(b, n, "tokenizer.model", 0);
    static const int two_unk[] = {2, 2, 1, 1};
    n = spm(b, texts, two_unk, 4);
    assert_malformed(b, n, "tokenizer.model", 0);
    static const char *const empty[] = {"<unk>", ""};
    n = spm(b, empty, types, 2);
    assert_malformed(b, n, "tokenizer.model", 16);
    /* wire data protobuf refuses: a length past the end, wire type 7 */
    n = spm(b, texts, types, 4);
    b[1] = 0x7f;
    assert_malformed(b, n, "tokenizer.model", 0);
    assert_malformed(B("\x0f\x01"), "tokenizer.model", 0);
    /* inside the trainer spec (field 2): a varint cut by its message's end */
    n = spm(b, texts, types, 4);
    b[n - 1] = 0x01; /* the empty trainer_spec now holds one byte: a tag without its value */
    b[n++] = 0x08;
    assert_malformed(b, n, "tokenizer.model", n - 1);
    /* near misses of the name: the same bytes as model.dat or tokenizer.model.v9 are no
     * tokenizer */
    n = spm(b, texts, types, 4);
    stg_report *r = check(b, n, "model.dat");
    ck_assert_int_ne(stg_report_format(r), STG_FMT_SENTENCEPIECE);
    stg_report_free(r);
    r = check(b, n, "tokenizer.model.v9");
    ck_assert_int_ne(stg_report_format(r), STG_FMT_SENTENCEPIECE);
    stg_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------------------- tiktoken */

START_TEST(test_tiktoken)
{
    assert_quiet(B("IQ== 0\nIg== 1\r\nIw== 2\n\n  JA==   3\n"), "cl100k_base.tiktoken",
                 STG_FMT_TIKTOKEN);
    static const struct {
        const char *text;
        size_t len;
        uint64_t at;
    } bad[] = {
        {"IQ== 0\nIg==\n", 12, 7},            /* no rank */
        {"IQ== 0\nIg== 1 2\n", 16, 7},        /* three fields */
        {"IQ== 0\nI*== 1\n", 14, 7},          /* not base64 */
        {"IQ== 0\nIQ= 1\n", 13, 7},           /* not whole quads */
        {"IQ== 0\nIg== x1\n", 15, 7},         /* rank not decimal */
        {"IQ== 0\nIg== 4294967296\n", 23, 7}, /* rank past uint32 */
        {"IQ== 1\nIg== 1\n", 14, 7},          /* a rank twice */
        {"\n\n", 2, 0},                       /* no token */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_malformed(bad[i].text, bad[i].len, "o200k_base.tiktoken", bad[i].at);
    }
    /* Llama 3's original/tokenizer.model is a tiktoken file: read as one under the
     * SentencePiece name (a ModelProto never starts with a base64 character) */
    assert_quiet(B("IQ== 0\nIg== 1\nIw== 2\n"), "original/tokenizer.model", STG_FMT_TIKTOKEN);
    assert_malformed(B("IQ== 0\nIg== 0\n"), "tokenizer.model", 7);
    /* near miss: text that is no tiktoken line start stays a SentencePiece model, refused */
    assert_malformed(B("\nIQ== 0\n"), "tokenizer.model", 0);
    /* a protocol-0 pickle under the name (it starts with `c`) is read as the pickle it is */
    stg_report *r = check(B("cos\nsystem\n(S'id'\ntR."), "tokenizer.model");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
}
END_TEST

/* -------------------------------------------------------------------- vocab.txt, merges.txt */

START_TEST(test_vocab_and_merges)
{
    assert_quiet(B("[PAD]\n[unused0]\n[CLS]\n##s\n\xc3\xa9t\xc3\xa9\n"), "vocab.txt", STG_FMT_TEXT);
    assert_malformed(B("[PAD]\n\xff\xfe\n"), "vocab.txt", 6);
    assert_malformed("", 0, "vocab.txt", 0);
    assert_quiet(B("#version: 0.2\n\xc4\xa0 t\nh e\n# #\n"), "merges.txt", STG_FMT_TEXT);
    assert_quiet(B("\xc4\xa0 t\r\nh e"), "merges.txt", STG_FMT_TEXT);
    assert_malformed(B("#version: 0.2\nh e\nthe\n"), "merges.txt", 18);
    assert_malformed(B("#version: 0.2\nh e \n"), "merges.txt", 14);
    assert_malformed(B("h e\n\nt h\n"), "merges.txt", 4);
    assert_malformed(B("h \xc0\n"), "merges.txt", 2);
    /* a protocol-0 pickle named vocab.txt is read as the pickle it is, not as text */
    stg_report *r = check(B("cos\nsystem\n(S'id'\ntR."), "vocab.txt");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tokenizers");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_ggml_legacy);
    tcase_add_test(tc, test_sentencepiece);
    tcase_add_test(tc, test_tiktoken);
    tcase_add_test(tc, test_vocab_and_merges);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
