/* The push API (loader/stream.c): for every way of splitting an input, the stream's findings
 * (code, severity, offset, tensor) and verdict equal stg_validate_buffer's on the whole input;
 * streams that end early or carry extra bytes; the whole-stream and per-tensor SHA-256 against
 * stg_sha256_buffer; expected_sha256; call-order errors; the memory bound with a large data
 * section. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/digest.h"
#include "loader/stream.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "zipbuild.h"

#define U8(b, e) "{\"dtype\":\"U8\",\"shape\":[" #e "-" #b "],\"data_offsets\":[" #b "," #e "]}"

/* Headers used by the differential tests, each with the data length it is paired with. */
static const struct scase {
    const char *name;
    const char *hdr; /* NULL: raw bytes below */
    size_t pad;
    size_t data;
    const char *raw; /* for framing cases */
    size_t raw_len;
} cases[] = {
    {"valid_one", "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 0, 4, NULL, 0},
    {"valid_padded", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 6, 8, NULL,
     0},
    {"two_tensors",
     "{\"__metadata__\":{\"k\":\"v\"},\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[2,5]}"
     ","
     "\"a\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[0,2]}}",
     0, 5, NULL, 0},
    {"zero_size",
     "{\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},"
     "\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}",
     0, 2, NULL, 0},
    {"trailing", "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 0, 5, NULL, 0},
    {"short_data", "{\"a\":{\"dtype\":\"U8\",\"shape\":[9],\"data_offsets\":[0,9]}}", 0, 3, NULL,
     0},
    {"gap", "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[1,3]}}", 0, 3, NULL, 0},
    {"overlap",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
     "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[1,3]}}",
     0, 3, NULL, 0},
    {"misaligned",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[1,5]}}",
     0, 5, NULL, 0},
    {"size_mismatch", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 0, 4,
     NULL, 0},
    {"dup_key",
     "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
     "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
     0, 1, NULL, 0},
    {"bad_json", "{\"a\":}", 0, 0, NULL, 0},
    {"leading_ws", " {}", 0, 0, NULL, 0},
    {"trailing_ws_header", "{}", 3, 0, NULL, 0},
    {"bad_dtype", "{\"a\":{\"dtype\":\"u8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 0, 1, NULL, 0},
    {"empty", NULL, 0, 0, "", 0},
    {"seven", NULL, 0, 0, "\x02\0\0\0\0\0\0", 7},
    {"len_zero", NULL, 0, 0, "\0\0\0\0\0\0\0\0{}", 10},
    {"too_large", NULL, 0, 0, "\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10},
    {"hdr_truncated", NULL, 0, 0, "\x40\0\0\0\0\0\0\0{\"a\":", 13},
    {"just_length", NULL, 0, 0, "\x02\0\0\0\0\0\0\0", 8},
};

#define NCASES (sizeof cases / sizeof cases[0])

static uint8_t *case_bytes(size_t i, size_t *len)
{
    if (cases[i].hdr == NULL) {
        uint8_t *b = malloc(cases[i].raw_len + 1);
        memcpy(b, cases[i].raw, cases[i].raw_len);
        *len = cases[i].raw_len;
        return b;
    }
    uint8_t data[64];
    for (size_t k = 0; k < sizeof data; k++) {
        data[k] = (uint8_t)(k * 7 + 1);
    }
    return tu_st_file(cases[i].hdr, cases[i].pad, data, cases[i].data, len);
}

/* Asserts that two reports agree on every finding field a stream must reproduce. */
static void assert_same(const stg_report *want, const stg_report *got, const char *what)
{
    char w[8192];
    snprintf(w, sizeof w, "%s", tu_describe(want));
    ck_assert_msg(stg_report_count(want) == stg_report_count(got), "%s: buffer %s stream %s", what,
                  w, tu_describe(got));
    for (size_t i = 0; i < stg_report_count(want); i++) {
        const stg_finding *a = stg_report_at(want, i), *b = stg_report_at(got, i);
        ck_assert_msg(a->code == b->code && a->severity == b->severity &&
                          a->has_offset == b->has_offset && a->offset == b->offset,
                      "%s: finding %zu differs: buffer %s stream %s", what, i, w, tu_describe(got));
        ck_assert_msg((a->tensor == NULL) == (b->tensor == NULL) &&
                          (a->tensor == NULL || (a->tensor_len == b->tensor_len &&
                                                 memcmp(a->tensor, b->tensor, a->tensor_len) == 0)),
                      "%s: tensor of finding %zu differs", what, i);
        ck_assert_str_eq(a->message, b->message);
    }
    ck_assert_int_eq(stg_report_verdict(want), stg_report_verdict(got));
    ck_assert_uint_eq(stg_report_truncated(want), stg_report_truncated(got));
}

/* Feeds buf split at the given cut points (sorted, each <= len), with empty feeds between. */
static stg_report *stream_with_cuts(const uint8_t *buf, size_t len, const size_t *cuts, size_t n,
                                    const stg_limits *lim, stg_stream **keep)
{
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(lim, NULL, &s), STG_OK);
    size_t prev = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t cut = i < n ? cuts[i] : len;
        stg_status st = stg_stream_feed(s, buf + prev, cut - prev);
        ck_assert(st == STG_OK || st == STG_E_INVALID);
        ck_assert(stg_stream_feed(s, buf + cut, 0) == st || cut - prev == 0);
        prev = cut;
    }
    stg_report *r = NULL;
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    if (keep != NULL) {
        *keep = s;
    } else {
        stg_stream_free(s);
    }
    return r;
}

/* Every single split point and byte-by-byte, in both profiles. */
START_TEST(test_every_split)
{
    size_t len;
    uint8_t *buf = case_bytes((size_t)_i, &len);
    for (int prof = 0; prof < 2; prof++) {
        stg_limits lim;
        stg_limits_default(&lim);
        lim.profile = prof == 0 ? STG_PROFILE_STRICT : STG_PROFILE_COMPAT;
        stg_report *want = NULL;
        ck_assert_int_eq(stg_validate_buffer(buf, len, &lim, &want), STG_OK);
        for (size_t cut = 0; cut <= len; cut++) {
            char what[128];
            snprintf(what, sizeof what, "%s/%s cut %zu", cases[_i].name,
                     prof == 0 ? "strict" : "compat", cut);
            stg_report *got = stream_with_cuts(buf, len, &cut, 1, &lim, NULL);
            assert_same(want, got, what);
            stg_report_free(got);
        }
        size_t *cuts = malloc((len + 1) * sizeof *cuts);
        for (size_t k = 0; k < len; k++) {
            cuts[k] = k;
        }
        stg_report *got = stream_with_cuts(buf, len, cuts, len, &lim, NULL);
        assert_same(want, got, cases[_i].name);
        stg_report_free(got);
        free(cuts);
        stg_report_free(want);
    }
    free(buf);
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A bigger file (300 tensors, ~1 MiB of data) under random splits; digests checked too. */
START_TEST(test_random_splits_and_digests)
{
    const size_t nt = 300, each = 3500;
    size_t cap = nt * 96 + 64, hl = 0;
    char *hdr = malloc(cap);
    hl += (size_t)snprintf(hdr + hl, cap - hl, "{");
    for (size_t i = 0; i < nt; i++) {
        hl += (size_t)snprintf(
            hdr + hl, cap - hl,
            "%s\"t%03zu\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}",
            i == 0 ? "" : ",", (i * 7) % nt, each, ((i * 7) % nt) * each,
            ((i * 7) % nt + 1) * each);
    }
    hl += (size_t)snprintf(hdr + hl, cap - hl, "}");
    size_t dlen = nt * each;
    uint8_t *data = malloc(dlen);
    for (size_t i = 0; i < dlen; i++) {
        data[i] = (uint8_t)rng();
    }
    size_t len;
    uint8_t *buf = tu_st_file(hdr, 0, data, dlen, &len);
    stg_report *want = NULL;
    ck_assert_int_eq(stg_validate_buffer(buf, len, NULL, &want), STG_OK);
    ck_assert_int_eq(stg_report_verdict(want), STG_VERDICT_WARN); /* header not padded */
    uint8_t whole[32];
    char whole_hex[65];
    ck_assert_int_eq(stg_sha256_buffer(buf, len, whole), STG_OK);
    stg_hex_encode(whole, 32, whole_hex);
    for (int round = 0; round < 40; round++) {
        size_t ncuts = (size_t)(rng() % 20);
        size_t cuts[20];
        for (size_t k = 0; k < ncuts; k++) {
            cuts[k] = (size_t)(rng() % (len + 1));
        }
        for (size_t a = 1; a < ncuts; a++) { /* insertion sort */
            for (size_t b = a; b > 0 && cuts[b - 1] > cuts[b]; b--) {
                size_t t = cuts[b];
                cuts[b] = cuts[b - 1];
                cuts[b - 1] = t;
            }
        }
        stg_stream *s = NULL;
        stg_stream_options opt;
        stg_stream_options_default(&opt);
        opt.tensor_digests = true;
        opt.expected_sha256 = whole_hex;
        ck_assert_int_eq(stg_stream_new(NULL, &opt, &s), STG_OK);
        size_t prev = 0;
        for (size_t k = 0; k <= ncuts; k++) {
            size_t cut = k < ncuts ? cuts[k] : len;
            ck_assert_int_eq(stg_stream_feed(s, buf + prev, cut - prev), STG_OK);
            prev = cut;
        }
        stg_report *got = NULL;
        ck_assert_int_eq(stg_stream_finish(s, &got), STG_OK);
        assert_same(want, got, "random split");
        ck_assert_str_eq(stg_report_sha256(got), whole_hex);
        ck_assert_uint_eq(stg_report_size(got), len);
        ck_assert_uint_eq(stg_stream_tensor_count(s), nt);
        for (size_t i = 0; i < nt; i++) {
            const stg_tensor *t = stg_stream_tensor_at(s, i);
            ck_assert_uint_eq(t->begin, i * each); /* data order */
            uint8_t got_d[32], want_d[32];
            ck_assert_int_eq(stg_stream_tensor_sha256(s, i, got_d), STG_OK);
            ck_assert_int_eq(stg_sha256_buffer(data + t->begin, t->end - t->begin, want_d), STG_OK);
            ck_assert_mem_eq(got_d, want_d, 32);
        }
        ck_assert_int_eq(stg_stream_tensor_sha256(s, nt, whole), STG_E_RANGE);
        stg_report_free(got);
        stg_stream_free(s);
    }
    stg_report_free(want);
    free(buf);
    free(data);
    free(hdr);
}
END_TEST

/* Zero-size tensors get the digest of nothing; tensor digests off -> STG_E_STATE. */
START_TEST(test_zero_size_digests)
{
    size_t len;
    uint8_t *buf = tu_st_file("{\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]},"
                              "\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                              "\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}",
                              0, "xy", 2, &len);
    stg_stream_options opt;
    stg_stream_options_default(&opt);
    opt.tensor_digests = true;
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(NULL, &opt, &s), STG_OK);
    for (size_t i = 0; i < len; i++) {
        ck_assert_int_eq(stg_stream_feed(s, buf + i, 1), STG_OK);
    }
    stg_report *r = NULL;
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_uint_eq(stg_stream_tensor_count(s), 3);
    uint8_t empty[32], xy[32], d[32];
    stg_sha256_buffer("", 0, empty);
    stg_sha256_buffer("xy", 2, xy);
    for (size_t i = 0; i < 3; i++) {
        const stg_tensor *t = stg_stream_tensor_at(s, i);
        ck_assert_int_eq(stg_stream_tensor_sha256(s, i, d), STG_OK);
        ck_assert_mem_eq(d, t->end > t->begin ? xy : empty, 32);
    }
    stg_report_free(r);
    stg_stream_free(s);

    ck_assert_int_eq(stg_stream_new(NULL, NULL, &s), STG_OK);
    ck_assert_int_eq(stg_stream_feed(s, buf, len), STG_OK);
    ck_assert_int_eq(stg_stream_tensor_sha256(s, 0, d), STG_E_STATE); /* not finished */
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_int_eq(stg_stream_tensor_sha256(s, 0, d), STG_E_STATE); /* digests were off */
    ck_assert_ptr_nonnull(stg_report_sha256(r));                      /* on by default */
    stg_report_free(r);
    stg_stream_free(s);
    free(buf);
}
END_TEST

/* Ends early (header_truncated, offsets_out_of_range) and carries extra bytes (data_trailing):
 * same codes and offsets as the whole-buffer path; the table is not exposed. */
START_TEST(test_early_end_and_extra)
{
    size_t len;
    uint8_t *buf = tu_st_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 0,
                              "abcdEXTRA", 9, &len);
    size_t ends[] = {len, len - 5, len - 7, 20, 8, 3};
    stg_code expect[] = {STG_DATA_TRAILING,    STG_CODE_MAX,         STG_OFFSETS_OUT_OF_RANGE,
                         STG_HEADER_TRUNCATED, STG_HEADER_TRUNCATED, STG_FILE_TOO_SMALL};
    for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) {
        stg_report *want = tu_validate(buf, ends[k], STG_PROFILE_STRICT);
        stg_stream *s = NULL;
        stg_report *got = stream_with_cuts(buf, ends[k], NULL, 0, NULL, &s);
        assert_same(want, got, "early/extra");
        if (expect[k] == STG_CODE_MAX) {
            ck_assert_int_le(stg_report_verdict(got), STG_VERDICT_WARN); /* not padded */
            ck_assert_uint_eq(stg_stream_tensor_count(s), 1);
        } else {
            long at = tu_find(got, expect[k]);
            ck_assert_msg(at >= 0, "end %zu: %s", ends[k], tu_describe(got));
            ck_assert_uint_eq(stg_stream_tensor_count(s), 0);
            ck_assert_ptr_null(stg_stream_tensor_at(s, 0));
        }
        if (expect[k] == STG_DATA_TRAILING) {
            /* the first trailing byte: 8 + n + 4 */
            ck_assert_uint_eq(stg_report_at(got, (size_t)tu_find(got, STG_DATA_TRAILING))->offset,
                              len - 5);
        }
        stg_report_free(want);
        stg_report_free(got);
        stg_stream_free(s);
    }
    free(buf);
}
END_TEST

START_TEST(test_expected_digest)
{
    size_t len;
    uint8_t *buf = tu_st_file("{}", 6, NULL, 0, &len);
    uint8_t d[32];
    char hex[65];
    stg_sha256_buffer(buf, len, d);
    stg_hex_encode(d, 32, hex);
    for (int variant = 0; variant < 4; variant++) {
        char exp[80];
        snprintf(exp, sizeof exp, "%s", hex);
        if (variant == 1) {
            exp[63] = exp[63] == '0' ? '1' : '0'; /* one digit off */
        } else if (variant == 2) {
            for (char *p = exp; *p; p++) {
                *p = (char)(*p >= 'a' ? *p - 32 : *p); /* upper case still matches */
            }
        } else if (variant == 3) {
            exp[10] = 'g'; /* not hex */
        }
        stg_stream_options opt;
        stg_stream_options_default(&opt);
        opt.digest = false;
        opt.expected_sha256 = exp;
        stg_stream *s = NULL;
        ck_assert_int_eq(stg_stream_new(NULL, &opt, &s), STG_OK);
        ck_assert_int_eq(stg_stream_feed(s, buf, len), STG_OK);
        stg_report *r = NULL;
        ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
        bool mismatch = variant == 1 || variant == 3;
        ck_assert_int_eq(tu_find(r, STG_DIGEST_MISMATCH) >= 0, mismatch);
        ck_assert_int_eq(stg_report_verdict(r), mismatch ? STG_VERDICT_INVALID : STG_VERDICT_OK);
        if (mismatch) {
            ck_assert(!stg_report_at(r, (size_t)tu_find(r, STG_DIGEST_MISMATCH))->has_offset);
        }
        ck_assert_ptr_null(stg_report_sha256(r)); /* digest option off */
        stg_report_free(r);
        stg_stream_free(s);
    }
    free(buf);
}
END_TEST

START_TEST(test_call_order)
{
    stg_stream *s = NULL;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_stream_new(NULL, NULL, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_stream_new(NULL, NULL, &s), STG_OK);
    ck_assert_int_eq(stg_stream_feed(s, NULL, 1), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_stream_feed(s, NULL, 0), STG_OK);
    ck_assert_int_eq(stg_stream_feed(s, "\xff\xff\xff\xff\xff\xff\xff\xff", 8), STG_E_INVALID);
    ck_assert_int_eq(stg_stream_finish(s, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_int_eq(tu_find(r, STG_HEADER_TOO_LARGE), 0);
    ck_assert_int_eq(stg_stream_feed(s, "x", 1), STG_E_STATE);
    stg_report *r2 = NULL;
    ck_assert_int_eq(stg_stream_finish(s, &r2), STG_E_STATE);
    ck_assert_ptr_null(r2);
    ck_assert_uint_eq(stg_stream_tensor_count(s), 0);
    stg_report_free(r);
    stg_stream_free(s);
    stg_stream_free(NULL);
}
END_TEST

/* Memory stays at header + table + constant while 96 MiB of data pass through. */
START_TEST(test_memory_bound)
{
    const size_t nt = 3000;
    const uint64_t each = 32 * 1024;
    size_t cap = nt * 100 + 64, hl = 0;
    char *hdr = malloc(cap);
    hl += (size_t)snprintf(hdr + hl, cap - hl, "{");
    for (size_t i = 0; i < nt; i++) {
        hl += (size_t)snprintf(hdr + hl, cap - hl,
                               "%s\"layer.%zu.weight\":{\"dtype\":\"F32\",\"shape\":[%llu],"
                               "\"data_offsets\":[%llu,%llu]}",
                               i == 0 ? "" : ",", i, (unsigned long long)(each / 4),
                               (unsigned long long)(i * each),
                               (unsigned long long)((i + 1) * each));
    }
    hl += (size_t)snprintf(hdr + hl, cap - hl, "}");
    size_t pad = (8 - (hl % 8)) % 8;
    size_t head_len;
    uint8_t *head = tu_st_file(hdr, pad, NULL, 0, &head_len);
    stg_stream_options opt;
    stg_stream_options_default(&opt);
    opt.tensor_digests = true;
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(NULL, &opt, &s), STG_OK);
    ck_assert_int_eq(stg_stream_feed(s, head, head_len), STG_OK);
    size_t after_header = stg_stream_memory_peak(s);
    static uint8_t chunk[1 << 20];
    uint64_t total = nt * each;
    for (uint64_t done = 0; done < total; done += sizeof chunk) {
        size_t n = total - done < sizeof chunk ? (size_t)(total - done) : sizeof chunk;
        ck_assert_int_eq(stg_stream_feed(s, chunk, n), STG_OK);
    }
    stg_report *r = NULL;
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    size_t peak = stg_stream_memory_peak(s);
    uint64_t n = head_len - 8;
    /* docs/loaders.md: at most 2 x header + 8 MiB, whatever the data size */
    ck_assert_msg(peak <= 2 * n + 8 * 1024 * 1024, "peak %zu for a header of %llu", peak,
                  (unsigned long long)n);
    ck_assert_uint_le(peak - after_header, 4096); /* data bytes were never kept */
    ck_assert_uint_eq(stg_stream_tensor_count(s), nt);
    stg_report_free(r);
    stg_stream_free(s);
    free(head);
    free(hdr);
}
END_TEST

/* Limits reach the stream: max_findings truncation is identical too. */
START_TEST(test_limits_identical)
{
    char hdr[4096];
    size_t hl = 0;
    hl += (size_t)snprintf(hdr, sizeof hdr, "{");
    for (int i = 0; i < 30; i++) {
        hl += (size_t)snprintf(hdr + hl, sizeof hdr - hl,
                               "%s\"t%d\":{\"dtype\":\"X\",\"shape\":[1],\"data_offsets\":[0,1]}",
                               i == 0 ? "" : ",", i);
    }
    snprintf(hdr + hl, sizeof hdr - hl, "}");
    size_t len;
    uint8_t *buf = tu_st_file(hdr, 0, NULL, 1, &len);
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_findings = 5;
    stg_report *want = NULL;
    ck_assert_int_eq(stg_validate_buffer(buf, len, &lim, &want), STG_OK);
    ck_assert_uint_gt(stg_report_truncated(want), 0);
    size_t cut = 50;
    stg_report *got = stream_with_cuts(buf, len, &cut, 1, &lim, NULL);
    assert_same(want, got, "max_findings");
    stg_report_free(want);
    stg_report_free(got);
    lim.max_header_len = 10;
    ck_assert_int_eq(stg_validate_buffer(buf, len, &lim, &want), STG_OK);
    got = stream_with_cuts(buf, len, &cut, 1, &lim, NULL);
    assert_same(want, got, "max_header_len");
    ck_assert_int_eq(tu_find(got, STG_HEADER_TOO_LARGE), 0);
    stg_report_free(want);
    stg_report_free(got);
    free(buf);
}
END_TEST

/* A stored zip with one member "a.txt" ("hello"), as Python's zipfile writes it. */
static const char ZIP[] =
    "\x50\x4b\x03\x04\x14\x00\x00\x00\x00\x00\xbd\xab\x7d\x5d\x86\xa6\x10\x36\x05\x00\x00\x00"
    "\x05\x00\x00\x00\x05\x00\x00\x00\x61\x2e\x74\x78\x74\x68\x65\x6c\x6c\x6f\x50\x4b\x01\x02"
    "\x14\x03\x14\x00\x00\x00\x00\x00\xbd\xab\x7d\x5d\x86\xa6\x10\x36\x05\x00\x00\x00\x05\x00"
    "\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00\x61\x2e"
    "\x74\x78\x74\x50\x4b\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00\x33\x00\x00\x00\x28\x00\x00"
    "\x00\x00\x00";
#define ZIP_LEN (sizeof ZIP - 1)

/* A safetensors file whose data section holds `data` bytes (one U8 tensor), then `extra`. */
static uint8_t *st_with_tail(size_t data, const void *extra, size_t extra_len, size_t *len)
{
    char hdr[128];
    snprintf(hdr, sizeof hdr, "{\"a\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}",
             data, data);
    size_t hl = strlen(hdr), pad = (8 - hl % 8) % 8;
    uint8_t *body = calloc(1, data + extra_len + 1);
    memcpy(body + data, extra, extra_len);
    uint8_t *b = tu_st_file(hdr, pad, body, data + extra_len, len);
    free(body);
    return b;
}

/* Up to 65,557 bytes the stream has every byte: polyglot findings (and, in strict, the
 * archive's members) are exactly the buffer's, whatever the split. */
START_TEST(test_polyglot_small_exact)
{
    size_t len;
    uint8_t *buf = st_with_tail(100, ZIP, ZIP_LEN, &len);
    for (int prof = 0; prof < 2; prof++) {
        stg_limits lim;
        stg_limits_default(&lim);
        lim.profile = prof == 0 ? STG_PROFILE_STRICT : STG_PROFILE_COMPAT;
        stg_report *want = NULL;
        ck_assert_int_eq(stg_validate_buffer(buf, len, &lim, &want), STG_OK);
        long z = tu_find(want, STG_POLYGLOT_ZIP);
        ck_assert_msg(z >= 0, "%s", tu_describe(want));
        ck_assert_uint_eq(stg_report_at(want, (size_t)z)->offset, len - ZIP_LEN);
        for (size_t cut = 0; cut <= len; cut += 7) {
            stg_report *got = stream_with_cuts(buf, len, &cut, 1, &lim, NULL);
            assert_same(want, got, "polyglot zip");
            stg_report_free(got);
        }
        stg_report_free(want);
    }
    free(buf);
    /* "N." at offset 0 is a pickle (None, STOP): the length field is 0x2e4e */
    size_t n = 0x2e4e;
    char *hdr = malloc(n + 1);
    memset(hdr, ' ', n);
    memcpy(hdr, "{}", 2);
    hdr[n] = '\0';
    buf = tu_st_file(hdr, 0, NULL, 0, &len);
    ck_assert_mem_eq(buf, "N.", 2);
    stg_report *want = tu_validate(buf, len, STG_PROFILE_STRICT);
    long pk = tu_find(want, STG_POLYGLOT_PICKLE);
    ck_assert_msg(pk >= 0, "%s", tu_describe(want));
    size_t cut = 5000;
    stg_report *got = stream_with_cuts(buf, len, &cut, 1, NULL, NULL);
    assert_same(want, got, "polyglot pickle");
    stg_report_free(got);
    stg_report_free(want);
    free(buf);
    free(hdr);
}
END_TEST

/* Beyond 65,557 bytes (docs/loaders.md): a pickle in the header and an archive in the tail
 * window are still found, at the same offsets; in strict the buffer path also scans the
 * archive's members, the stream cannot and says so. */
START_TEST(test_polyglot_large_documented)
{
    size_t len;
    uint8_t *buf = st_with_tail(200000, ZIP, ZIP_LEN, &len);
    stg_report *want = tu_validate(buf, len, STG_PROFILE_STRICT);
    size_t cut = 100000;
    stg_report *got = stream_with_cuts(buf, len, &cut, 1, NULL, NULL);
    long zw = tu_find(want, STG_POLYGLOT_ZIP), zg = tu_find(got, STG_POLYGLOT_ZIP);
    ck_assert_msg(zw >= 0 && zg >= 0, "%s", tu_describe(got));
    ck_assert_uint_eq(stg_report_at(got, (size_t)zg)->offset, len - ZIP_LEN);
    ck_assert_uint_eq(stg_report_at(want, (size_t)zw)->offset, len - ZIP_LEN);
    ck_assert_ptr_nonnull(strstr(stg_report_at(got, (size_t)zg)->message, "could not scan"));
    ck_assert_int_eq(stg_report_verdict(got), stg_report_verdict(want));
    /* every non-member finding of the buffer is in the stream, same code and offset */
    for (size_t i = 0; i < stg_report_count(want); i++) {
        const stg_finding *f = stg_report_at(want, i);
        if (f->member != NULL) {
            continue;
        }
        bool found = false;
        for (size_t j = 0; j < stg_report_count(got) && !found; j++) {
            const stg_finding *g = stg_report_at(got, j);
            found = g->code == f->code && g->offset == f->offset;
        }
        ck_assert_msg(found, "missing %s in %s", stg_code_name(f->code), tu_describe(got));
    }
    stg_report_free(want);
    stg_report_free(got);
    free(buf);
    /* the same archive placed before the tail window: not found by the stream (documented) */
    uint8_t *tail = calloc(1, ZIP_LEN + 70000);
    memcpy(tail, ZIP, ZIP_LEN);
    buf = st_with_tail(1000, tail, ZIP_LEN + 70000, &len);
    got = stream_with_cuts(buf, len, NULL, 0, NULL, NULL);
    ck_assert_int_lt(tu_find(got, STG_POLYGLOT_ZIP), 0);
    ck_assert_int_ge(tu_find(got, STG_DATA_TRAILING), 0);
    stg_report_free(got);
    free(buf);
    free(tail);
}
END_TEST

/* Every entry point's argument errors, and the accessors before finish and out of range. */
START_TEST(test_argument_edges)
{
    uint8_t d[32];
    stg_report *r = (stg_report *)d; /* must be reset to NULL */
    ck_assert_int_eq(stg_stream_feed(NULL, "x", 1), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_stream_feed(NULL, NULL, 0), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_stream_finish(NULL, &r), STG_E_BAD_ARG);
    ck_assert_ptr_null(r);
    ck_assert_uint_eq(stg_stream_tensor_count(NULL), 0);
    ck_assert_ptr_null(stg_stream_tensor_at(NULL, 0));
    ck_assert_int_eq(stg_stream_tensor_sha256(NULL, 0, d), STG_E_BAD_ARG);
    ck_assert_uint_eq(stg_stream_memory_peak(NULL), 0);
    stg_stream_options o;
    stg_stream_options_default(&o);
    o.tensor_digests = true;
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(NULL, &o, &s), STG_OK);
    size_t len;
    uint8_t *buf = case_bytes(0, &len); /* valid_one: one tensor of 4 bytes */
    ck_assert_int_eq(stg_stream_feed(s, buf, len), STG_OK);
    /* the table is not exposed before finish */
    ck_assert_uint_eq(stg_stream_tensor_count(s), 0);
    ck_assert_ptr_null(stg_stream_tensor_at(s, 0));
    ck_assert_int_eq(stg_stream_tensor_sha256(s, 0, d), STG_E_STATE);
    ck_assert_int_eq(stg_stream_tensor_sha256(s, 0, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_uint_eq(stg_stream_tensor_count(s), 1);
    ck_assert_ptr_nonnull(stg_stream_tensor_at(s, 0));
    ck_assert_ptr_null(stg_stream_tensor_at(s, 1));
    ck_assert_int_eq(stg_stream_tensor_sha256(s, 0, d), STG_OK);
    uint8_t want[32];
    ck_assert_int_eq(stg_sha256_buffer(buf + len - 4, 4, want), STG_OK);
    ck_assert(memcmp(d, want, 32) == 0);
    ck_assert_int_eq(stg_stream_tensor_sha256(s, 1, d), STG_E_RANGE);
    stg_report_free(r);
    stg_stream_free(s);
    free(buf);
}
END_TEST

/* Without the whole-stream digest: no sha256 in the report; an expected digest still
 * computes and compares one. */
START_TEST(test_digest_off)
{
    size_t len;
    uint8_t *buf = case_bytes(0, &len);
    uint8_t sum[32];
    char hex[65];
    ck_assert_int_eq(stg_sha256_buffer(buf, len, sum), STG_OK);
    stg_hex_encode(sum, 32, hex);
    for (int k = 0; k < 3; k++) {
        stg_stream_options o;
        stg_stream_options_default(&o);
        o.digest = false;
        o.expected_sha256 = k == 0 ? NULL : k == 1 ? hex : "00";
        stg_stream *s = NULL;
        ck_assert_int_eq(stg_stream_new(NULL, &o, &s), STG_OK);
        ck_assert_int_eq(stg_stream_feed(s, buf, len), STG_OK);
        stg_report *r = NULL;
        ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
        ck_assert_ptr_null(stg_report_sha256(r));
        if (k < 2) {
            ck_assert_msg(tu_find(r, STG_DIGEST_MISMATCH) < 0, "%d: %s", k, tu_describe(r));
        } else {
            long i = tu_find(r, STG_DIGEST_MISMATCH);
            ck_assert_int_ge(i, 0);
            ck_assert_str_eq(stg_report_at(r, (size_t)i)->message,
                             "the expected SHA-256 is not 64 hex digits");
        }
        stg_report_free(r);
        stg_stream_free(s);
    }
    free(buf);
}
END_TEST

/* Framing fails inside a chunk that carries more bytes: the rest of the chunk (and of the
 * stream, even past the windows) only passes through; the findings are the buffer's. */
START_TEST(test_framing_failure_mid_chunk)
{
    static const size_t sizes[] = {20, 70000};
    for (size_t k = 0; k < 2; k++) {
        size_t len = sizes[k];
        uint8_t *buf = calloc(1, len); /* header length 0 */
        stg_report *want = tu_validate(buf, len, STG_PROFILE_STRICT);
        stg_stream *s = NULL;
        ck_assert_int_eq(stg_stream_new(NULL, NULL, &s), STG_OK);
        ck_assert_int_eq(stg_stream_feed(s, buf, len), STG_E_INVALID);
        ck_assert_int_eq(stg_stream_feed(s, buf, 3), STG_E_INVALID);
        ck_assert_int_eq(stg_stream_feed(s, buf, 0), STG_E_INVALID);
        size_t peak = stg_stream_memory_peak(s); /* no header buffer, no digest slots */
        ck_assert_uint_ge(peak, 2 * STG_STREAM_TAIL);
        ck_assert_uint_lt(peak, 2 * STG_STREAM_TAIL + 4096);
        stg_report *got = NULL;
        ck_assert_int_eq(stg_stream_finish(s, &got), STG_OK);
        ck_assert_str_eq(tu_describe(got), tu_describe(want));
        ck_assert_int_eq(tu_find(got, STG_HEADER_LENGTH_INVALID), 0);
        ck_assert_uint_eq(stg_report_size(got), len + 3);
        stg_report_free(got);
        stg_report_free(want);
        stg_stream_free(s);
        free(buf);
    }
}
END_TEST

/* A pickle at offset 0 of a stream longer than the windows: found in the head window (header
 * shorter than it) or in the header buffer (header longer), as the buffer path finds it. */
START_TEST(test_polyglot_pickle_long_stream)
{
    static const size_t hlens[] = {0x2e4e, 0x12e4e};
    static const char obj[] = "{\"__metadata__\":{\"k\":\"v\"}}";
    for (size_t k = 0; k < 2; k++) {
        size_t n = hlens[k];
        char *header = malloc(n + 1);
        memset(header, ' ', n);
        memcpy(header, obj, sizeof obj - 1);
        header[n] = '\0';
        size_t data = 70000, len;
        uint8_t *zeros = calloc(1, data);
        uint8_t *buf = tu_st_file(header, 0, zeros, data, &len);
        ck_assert_uint_eq(buf[0], 'N');
        ck_assert_uint_eq(buf[1], '.');
        ck_assert_uint_gt(len, STG_STREAM_TAIL);
        for (int prof = 0; prof < 2; prof++) {
            stg_limits lim;
            stg_limits_default(&lim);
            lim.profile = prof == 0 ? STG_PROFILE_STRICT : STG_PROFILE_COMPAT;
            stg_report *want = tu_validate(buf, len, lim.profile);
            size_t cuts[2] = {5, 40000};
            stg_report *got = stream_with_cuts(buf, len, cuts, 2, &lim, NULL);
            long i = tu_find(got, STG_POLYGLOT_PICKLE);
            ck_assert_msg(i >= 0, "%s", tu_describe(got));
            const stg_finding *f = stg_report_at(got, (size_t)i);
            ck_assert_uint_eq(f->offset, 0);
            ck_assert_int_eq(f->severity, prof == 0 ? STG_SEV_ERROR : STG_SEV_WARNING);
            ck_assert_str_eq(tu_describe(got), tu_describe(want));
            stg_report_free(got);
            stg_report_free(want);
        }
        free(buf);
        free(zeros);
        free(header);
    }
}
END_TEST

/* An archive in the tail window of a long stream: polyglot_zip at its lowest local header,
 * whatever order the directory lists entries in, and never at an entry whose offset wraps. */
START_TEST(test_polyglot_zip_first_byte_long_stream)
{
    zb_entry e[3] = {zb_file("a.txt", "aaaa", 4), zb_file("b.txt", "bbbb", 4),
                     zb_file("c.txt", "cccc", 4)};
    size_t z_len;
    uint64_t offs[3];
    zb_opts o = {.zip64 = true};
    uint8_t *z = zb_build(e, 3, &o, &z_len, offs);
    size_t len;
    uint8_t *buf = st_with_tail(70000, z, z_len, &len);
    size_t zip_at = len - z_len;
    /* central headers follow the last entry's data; each is 46 + 5 + 28 bytes */
    size_t cd = zip_at + (size_t)offs[2] + 30 + 5 + 20 + 4;
    ck_assert(memcmp(buf + cd, "PK\x01\x02", 4) == 0);
    /* entry 0 (the lowest) gets an offset that wraps when added to the archive's base */
    uint64_t wrap = UINT64_MAX - (uint64_t)zip_at + 3;
    for (int i = 0; i < 8; i++) {
        buf[cd + 46 + 5 + 4 + 16 + (size_t)i] = (uint8_t)(wrap >> (8 * i));
    }
    stg_report *got = stream_with_cuts(buf, len, NULL, 0, NULL, NULL);
    long i = tu_find(got, STG_POLYGLOT_ZIP);
    ck_assert_msg(i >= 0, "%s", tu_describe(got));
    ck_assert_uint_eq(stg_report_at(got, (size_t)i)->offset, zip_at + offs[1]);
    stg_report *want = tu_validate(buf, len, STG_PROFILE_STRICT);
    i = tu_find(want, STG_POLYGLOT_ZIP);
    ck_assert_uint_eq(stg_report_at(want, (size_t)i)->offset, zip_at + offs[1]);
    stg_report_free(want);
    stg_report_free(got);
    /* a broken second central header: zipfile refuses the whole archive (it parses every
     * central header when it opens), so no zip reader sees it; the bytes stay trailing data */
    size_t cd1 = cd + 46 + 5 + 28;
    ck_assert(memcmp(buf + cd1, "PK\x01\x02", 4) == 0);
    buf[cd1 + 3] = 0x07;
    got = stream_with_cuts(buf, len, NULL, 0, NULL, NULL);
    ck_assert_msg(tu_find(got, STG_POLYGLOT_ZIP) < 0, "%s", tu_describe(got));
    ck_assert_msg(tu_find(got, STG_DATA_TRAILING) >= 0, "%s", tu_describe(got));
    stg_report_free(got);
    free(buf);
    free(z);
}
END_TEST

/* Memory follows the bytes that arrived, not the length the first 8 claim: a client that
 * announces a 100 MB header and stalls holds a constant; one that sends 1 MB of it holds about
 * twice that; the whole header still validates as before. */
START_TEST(test_header_buffer_follows_bytes)
{
    const uint64_t n = 100000000;
    uint8_t first[8];
    for (int i = 0; i < 8; i++) {
        first[i] = (uint8_t)(n >> (8 * i));
    }
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(NULL, NULL, &s), STG_OK);
    ck_assert_int_eq(stg_stream_feed(s, first, 8), STG_OK);
    size_t stalled = stg_stream_memory_peak(s);
    ck_assert_msg(stalled < 512 * 1024, "8 bytes in hold %zu bytes", stalled);
    /* 1 MB of header: '{' then spaces (whitespace is valid JSON padding) */
    static uint8_t chunk[1 << 16];
    memset(chunk, ' ', sizeof chunk);
    chunk[0] = '{';
    ck_assert_int_eq(stg_stream_feed(s, chunk, sizeof chunk), STG_OK);
    chunk[0] = ' ';
    for (int i = 1; i < 16; i++) {
        ck_assert_int_eq(stg_stream_feed(s, chunk, sizeof chunk), STG_OK);
    }
    size_t sent = 16 * sizeof chunk;
    size_t held = stg_stream_memory_peak(s);
    ck_assert_msg(held <= 2 * sent + stalled, "%zu bytes in hold %zu", sent, held);
    ck_assert_uint_gt(held, sent); /* the header bytes themselves are kept */
    stg_stream_free(s);
    /* near miss: a small header is held whole and validates */
    size_t len;
    uint8_t *file = tu_st_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 3,
                               "xy", 2, &len);
    ck_assert_int_eq(stg_stream_new(NULL, NULL, &s), STG_OK);
    for (size_t i = 0; i < len; i++) {
        ck_assert_int_le(stg_stream_feed(s, file + i, 1), STG_E_INVALID);
    }
    stg_report *r = NULL;
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    stg_stream_free(s);
    free(file);
}
END_TEST

static Suite *stream_suite(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_every_split, 0, (int)NCASES);
    tcase_add_test(tc, test_random_splits_and_digests);
    tcase_add_test(tc, test_zero_size_digests);
    tcase_add_test(tc, test_early_end_and_extra);
    tcase_add_test(tc, test_expected_digest);
    tcase_add_test(tc, test_call_order);
    tcase_add_test(tc, test_memory_bound);
    tcase_add_test(tc, test_limits_identical);
    tcase_add_test(tc, test_polyglot_small_exact);
    tcase_add_test(tc, test_polyglot_large_documented);
    tcase_add_test(tc, test_argument_edges);
    tcase_add_test(tc, test_digest_off);
    tcase_add_test(tc, test_framing_failure_mid_chunk);
    tcase_add_test(tc, test_polyglot_pickle_long_stream);
    tcase_add_test(tc, test_polyglot_zip_first_byte_long_stream);
    tcase_add_test(tc, test_header_buffer_follows_bytes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(stream_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
