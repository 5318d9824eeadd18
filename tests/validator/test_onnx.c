/* ONNX: the protobuf wire walker (parser/protobuf.c), the model rules (validator/onnx.c) and the
 * external-data files (loader/onnx_external.c). For every onnx_* code an input that triggers it
 * and a near miss; hand-built wire data for the malformed classes and the limits; and the
 * models tests/fixtures/gen_onnx.py writes with python3-onnx (tests/data/onnx/<case>/model.onnx: ok-*
 * clean, bad-<code>-* carrying <code>), including onnx.save_model's external data and
 * traversal variants, and a link out of the model's folder made at run time. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "dispatch/check.h"
#include "dispatch/formats.h"
#include "loader/onnx_external.h"
#include "loader/open_file.h"
#include "parser/protobuf.h"
#include "stguard/stguard.h"
#include "codetest.h"
#include "testutil.h"
#include "validator/onnx.h"
#include "validator/report.h"
#include "zipbuild.h"

#define E STG_SEV_ERROR
#define W STG_SEV_WARNING
#define C STG_SEV_CRITICAL
#define NONE TU_NONE

/* ------------------------------------------------------------------------------------------ */
/* Protobuf writing */

typedef tu_buf pb;

static void varint(pb *b, uint64_t v)
{
    uint8_t x[10];
    size_t n = 0;
    do {
        x[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v != 0) {
            x[n] |= 0x80;
        }
        n++;
    } while (v != 0);
    tu_buf_put(b, x, n);
}

static void tag(pb *b, uint32_t field, uint32_t wire)
{
    varint(b, ((uint64_t)field << 3) | wire);
}

static void vfield(pb *b, uint32_t field, uint64_t v)
{
    tag(b, field, 0);
    varint(b, v);
}

static void bytes_field(pb *b, uint32_t field, const void *d, size_t n)
{
    tag(b, field, 2);
    varint(b, n);
    tu_buf_put(b, d, n);
}

static void sfield(pb *b, uint32_t field, const char *s)
{
    bytes_field(b, field, s, strlen(s));
}

/* Moves sub into b as a length-delimited field (sub is freed). */
static void msg(pb *b, uint32_t field, pb *sub)
{
    bytes_field(b, field, sub->p, sub->n);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}

static pb opset(const char *domain, uint64_t version)
{
    pb o = {0};
    sfield(&o, 1, domain);
    vfield(&o, 2, version);
    return o;
}

static pb node(const char *op, const char *domain)
{
    pb n = {0};
    sfield(&n, 1, "x");
    sfield(&n, 2, "y");
    sfield(&n, 4, op);
    if (domain != NULL) {
        sfield(&n, 7, domain);
    }
    return n;
}

static pb entry(const char *k, const char *v)
{
    pb e = {0};
    sfield(&e, 1, k);
    sfield(&e, 2, v);
    return e;
}

/* An initializer "w" whose data is external at loc (NULL: no location entry). */
static pb ext_tensor(const char *loc, const char *off, const char *len, uint64_t location)
{
    pb t = {0};
    vfield(&t, 1, 4);
    vfield(&t, 2, 1);
    sfield(&t, 8, "w");
    const char *keys[3] = {"location", "offset", "length"};
    const char *vals[3] = {loc, off, len};
    for (int i = 0; i < 3; i++) {
        if (vals[i] != NULL) {
            pb e = entry(keys[i], vals[i]);
            msg(&t, 13, &e);
        }
    }
    vfield(&t, 14, location);
    return t;
}

/* A model: ir_version 8, opset "" 13, a graph with one node (op, domain) and, when tensor is
 * not NULL, that initializer. */
static pb model_with(pb *graph_extra, const char *op, const char *domain, pb *tensor)
{
    pb g = {0};
    pb n = node(op, domain);
    msg(&g, 1, &n);
    sfield(&g, 2, "g");
    if (tensor != NULL) {
        msg(&g, 5, tensor);
    }
    if (graph_extra != NULL) {
        tu_buf_put(&g, graph_extra->p, graph_extra->n);
        free(graph_extra->p);
    }
    pb m = {0};
    vfield(&m, 1, 8);
    sfield(&m, 2, "stguard-test");
    msg(&m, 7, &g);
    pb o = opset("", 13);
    msg(&m, 8, &o);
    return m;
}

/* ------------------------------------------------------------------------------------------ */
/* Running */

static stg_report *run_model(const pb *b, stg_profile p, stg_onnx_model *m)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = p;
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(stg_onnx_check(b->p, b->n, &lim, 0, r, m), STG_OK);
    return r;
}

static stg_report *run(const pb *b, stg_profile p)
{
    stg_report *r = run_model(b, p, NULL);
    stg_report_finish(r);
    return r;
}

#define expect(b, ...) tu_expect(run, b, __VA_ARGS__)
#define expect_clean(b) tu_expect_clean(run, b)
#define expect_none(b, code) tu_expect(run, b, code, NONE, NONE, STG_NO_OFFSET)

/* ------------------------------------------------------------------------------------------ */
/* The wire walker */

START_TEST(test_pb_walker)
{
    pb b = {0};
    vfield(&b, 1, 300);
    sfield(&b, 2, "ab");
    tag(&b, 3, 5);
    tu_buf_put(&b, "\1\0\0\0", 4);
    tag(&b, 4, 1);
    tu_buf_put(&b, "\2\0\0\0\0\0\0\0", 8);
    stg_cursor c = stg_cur_make(b.p, b.n);
    stg_pb_field f;
    stg_parse_detail d = {.what = NULL};
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_OK);
    ck_assert_uint_eq(f.number, 1);
    ck_assert_uint_eq(f.value, 300);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_OK);
    ck_assert_uint_eq(f.wire, STG_PB_LEN);
    ck_assert_uint_eq(f.sub.end - f.sub.pos, 2);
    ck_assert_uint_eq(f.offset, 3);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_OK);
    ck_assert_uint_eq(f.value, 1);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_OK);
    ck_assert_uint_eq(f.value, 2);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_END);
    free(b.p);
    /* a 10-byte varint is the longest; 11 bytes is malformed */
    uint8_t v10[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    c = stg_cur_make(v10, sizeof v10);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_OK);
    ck_assert_uint_eq(f.value, UINT64_MAX);
    uint8_t v11[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    c = stg_cur_make(v11, sizeof v11);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_MALFORMED);
    ck_assert_int_eq(d.reason, STG_PB_E_VARINT);
    ck_assert_uint_eq(d.offset, 0);
    ck_assert_uint_eq(c.pos, 0);
    /* groups: skipped when closed, nested */
    uint8_t grp[] = {0x0b, 0x13, 0x18, 0x01, 0x14, 0x0c, 0x20, 0x05}; /* 1{2{3:1}} 4:5 */
    c = stg_cur_make(grp, sizeof grp);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_OK);
    ck_assert_uint_eq(f.number, 4);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_END);
    uint8_t open_grp[] = {0x0b, 0x18, 0x01};
    c = stg_cur_make(open_grp, sizeof open_grp);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_MALFORMED);
    ck_assert_int_eq(d.reason, STG_PB_E_GROUP);
    uint8_t wrong_end[] = {0x0b, 0x14};
    c = stg_cur_make(wrong_end, sizeof wrong_end);
    ck_assert_int_eq(stg_pb_next(&c, &f, &d), STG_PARSE_MALFORMED);
    ck_assert_int_eq(d.reason, STG_PB_E_WIRE);
}
END_TEST

START_TEST(test_malformed)
{
    pb ok = model_with(NULL, "Relu", NULL, NULL);
    expect_clean(&ok);
    /* the graph's length one past the end */
    pb cut = {0};
    tu_buf_put(&cut, ok.p, ok.n - 1);
    expect(&cut, STG_ONNX_MALFORMED, E, E, STG_NO_OFFSET);
    free(cut.p);
    static const struct {
        const char *what;
        const char *bytes;
        size_t n;
        uint64_t at;
    } cases[] = {
        {"field 0", "\x08\x08\x00\x01", 4, 2},
        {"wire 7", "\x08\x08\x0f", 3, 2},
        {"wire 6", "\x08\x08\x0e", 3, 2},
        {"stray end group", "\x08\x08\x0c", 3, 2},
        {"varint cut", "\x08\x80", 2, 0},
        {"length past end",
         "\x12\x05"
         "ab",
         4, 0},
        {"fixed64 cut", "\x09\x01\x02", 3, 0},
        {"unclosed group", "\x08\x08\x0b\x08\x01", 5, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pb b = {0};
        tu_buf_put(&b, cases[i].bytes, cases[i].n);
        expect(&b, STG_ONNX_MALFORMED, E, E, cases[i].at);
        free(b.p);
    }
    /* malformed inside a node (depth 3) */
    pb bad_node = {0};
    pb n = {0};
    tu_buf_put(&n,
               "\x22\x09"
               "Add",
               5); /* op_type's length past the node */
    msg(&bad_node, 1, &n);
    pb m = {0};
    msg(&m, 7, &bad_node);
    expect(&m, STG_ONNX_MALFORMED, E, E, 4);
    free(m.p);
    /* an unknown field of every wire type and a closed group: clean */
    pb extra = {0};
    vfield(&extra, 900, 1);
    tag(&extra, 901, 1);
    tu_buf_put(&extra, "12345678", 8);
    tag(&extra, 902, 5);
    tu_buf_put(&extra, "1234", 4);
    tag(&extra, 903, 3);
    vfield(&extra, 1, 1);
    tag(&extra, 903, 4);
    pb m2 = model_with(&extra, "Relu", NULL, NULL);
    expect_clean(&m2);
    free(m2.p);
    free(ok.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* External data: the pure rules */

START_TEST(test_location_rules)
{
    static const struct {
        const char *loc;
        size_t n;
        bool safe;
    } cases[] = {
        {"w.bin", 5, true},          {"data/w.bin", 10, true},
        {"./w.bin", 7, true},        {"..w", 3, true},
        {"a..b/c", 6, true},         {"w..", 3, true},
        {"../w.bin", 8, false},      {"a/../../w", 9, false},
        {"a/..", 4, false},          {"/etc/passwd", 11, false},
        {"\\\\srv\\x", 7, false},    {"..\\w", 4, false},
        {"C:\\w.bin", 8, false},     {"c:w", 3, false},
        {"w\0.bin", 6, false},       {"", 0, false},
        {"a\\..\\..\\b", 10, false}, {"1:x", 3, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_msg(stg_onnx_location_safe((const uint8_t *)cases[i].loc, cases[i].n) ==
                          cases[i].safe,
                      "%zu: %s", i, cases[i].loc);
    }
}
END_TEST

START_TEST(test_external_path_unsafe)
{
    pb t = ext_tensor("../../etc/passwd", "0", "16", 1);
    pb m = model_with(NULL, "Relu", NULL, &t);
    expect(&m, STG_ONNX_EXTERNAL_PATH_UNSAFE, C, C, STG_NO_OFFSET);
    stg_report *r = run(&m, STG_PROFILE_STRICT);
    const stg_finding *f = stg_report_at(r, (size_t)tu_find(r, STG_ONNX_EXTERNAL_PATH_UNSAFE));
    ck_assert_str_eq(f->member, "../../etc/passwd");
    ck_assert_uint_eq(f->tensor_len, 1);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(m.p);
    /* near miss: the same entries but data_location DEFAULT: readers never open them */
    pb t2 = ext_tensor("../../etc/passwd", "0", "16", 0);
    pb m2 = model_with(NULL, "Relu", NULL, &t2);
    expect_clean(&m2);
    free(m2.p);
    pb t3 = ext_tensor("weights/w.bin", "0", "16", 1);
    pb m3 = model_with(NULL, "Relu", NULL, &t3);
    expect_clean(&m3);
    stg_onnx_model om;
    r = run_model(&m3, STG_PROFILE_STRICT, &om);
    ck_assert_uint_eq(om.next, 1);
    ck_assert_uint_eq(om.ext[0].location_len, 13);
    ck_assert(om.ext[0].safe);
    ck_assert(om.ext[0].has_length);
    ck_assert_uint_eq(om.ext[0].data_length, 16);
    ck_assert_uint_eq(om.nopsets, 1);
    ck_assert_int_eq(om.opsets[0].version, 13);
    stg_onnx_model_release(&om);
    stg_report_free(r);
    free(m3.p);
}
END_TEST

/* Issue 23 item 2: data_location read as protobuf reads an enum: the low 32 bits of the varint
 * (2^32 + 1 and 0xFFFFFFFF00000001 are EXTERNAL, which onnx.load follows), and a value the
 * closed proto2 enum does not name leaves the field as it was (so 1 then 5 is EXTERNAL, 5 alone
 * is DEFAULT). Both used to read the whole 64 bits and call the traversal clean. */
START_TEST(test_data_location_widths)
{
    static const struct {
        uint64_t first, second; /* second 0 with `twice` false: one field */
        bool twice, external;
    } cases[] = {
        {((uint64_t)1 << 32) + 1, 0, false, true},
        {0xFFFFFFFF00000001u, 0, false, true},
        {0x7FFFFFFF00000001u, 0, false, true},      /* low 32 bits 1, high bits mixed */
        {1, 5, true, true},                         /* 5: unknown, EXTERNAL stays */
        {1, ((uint64_t)1 << 32) + 2, true, true},   /* 2 after truncation: unknown */
        {1, (uint64_t)1 << 32, true, false},        /* 0 after truncation: DEFAULT */
        {((uint64_t)1 << 32) + 2, 0, false, false}, /* near misses: never EXTERNAL */
        {(uint64_t)1 << 32, 0, false, false},
        {0xFFFFFFFFFFFFFFFFu, 0, false, false}, /* -1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pb t = ext_tensor("../outside/secret.bin", "0", "16", cases[i].first);
        if (cases[i].twice) {
            vfield(&t, 14, cases[i].second);
        }
        pb m = model_with(NULL, "Relu", NULL, &t);
        stg_report *r = run(&m, STG_PROFILE_COMPAT);
        bool unsafe = tu_find(r, STG_ONNX_EXTERNAL_PATH_UNSAFE) >= 0;
        ck_assert_msg(unsafe == cases[i].external, "case %zu: %s", i, tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r),
                         cases[i].external ? STG_VERDICT_UNSAFE : STG_VERDICT_OK);
        stg_report_free(r);
        free(m.p);
    }
    /* the other widths protobuf gives: int32 keeps the low 32 bits, int64 all 64 */
    ck_assert_int_eq(stg_pb_int32(((uint64_t)1 << 32) + 7), 7);
    ck_assert_int_eq(stg_pb_int32(0xFFFFFFFFFFFFFFFFu), -1);
    ck_assert_int_eq(stg_pb_int32(0x80000000u), INT32_MIN);
    ck_assert(stg_pb_int64(0xFFFFFFFFFFFFFFFEu) == -2);
    ck_assert(stg_pb_int64(0x8000000000000000u) == INT64_MIN);
    ck_assert(stg_pb_bool(2) && stg_pb_bool((uint64_t)1 << 40) && !stg_pb_bool(0));
}
END_TEST

START_TEST(test_external_malformed)
{
    const char *bad[][2] = {{"12abc", "16"},
                            {"0", "-1"},
                            {"18446744073709551615", "1"},
                            {"", "1"},
                            {"0", "99999999999999999999"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pb t = ext_tensor("w.bin", bad[i][0], bad[i][1], 1);
        pb m = model_with(NULL, "Relu", NULL, &t);
        expect(&m, STG_ONNX_MALFORMED, E, E, STG_NO_OFFSET);
        free(m.p);
    }
    pb t = ext_tensor(NULL, "0", "16", 1); /* external, but no location */
    pb m = model_with(NULL, "Relu", NULL, &t);
    expect(&m, STG_ONNX_MALFORMED, E, E, STG_NO_OFFSET);
    free(m.p);
    pb ok = ext_tensor("w.bin", "18446744073709551614", "1", 1);
    pb mok = model_with(NULL, "Relu", NULL, &ok);
    expect_clean(&mok);
    free(mok.p);
    pb nol = ext_tensor("w.bin", NULL, NULL, 1); /* offset and length are optional */
    pb mnol = model_with(NULL, "Relu", NULL, &nol);
    expect_clean(&mnol);
    free(mnol.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Domains and opsets */

START_TEST(test_custom_domain)
{
    pb extra = {0};
    pb n2 = node("Other", "com.example");
    msg(&extra, 1, &n2);
    pb m = model_with(&extra, "Secret", "com.example", NULL);
    pb o = opset("com.example", 1);
    msg(&m, 8, &o);
    expect(&m, STG_ONNX_CUSTOM_DOMAIN, W, W, STG_NO_OFFSET);
    stg_report *r = run(&m, STG_PROFILE_STRICT);
    ck_assert_uint_eq(tu_count(r, STG_ONNX_CUSTOM_DOMAIN), 1); /* once per domain */
    const stg_finding *f = stg_report_at(r, (size_t)tu_find(r, STG_ONNX_CUSTOM_DOMAIN));
    ck_assert_uint_eq(f->module_len, 11);
    ck_assert_int_eq(memcmp(f->module, "com.example", 11), 0);
    ck_assert_uint_eq(f->name_len, 6);
    ck_assert_ptr_nonnull(strstr(f->message, "\"com.example\""));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_report_free(r);
    free(m.p);
    /* the message names the domain with the bytes a terminal could misread replaced */
    pb q = model_with(NULL, "Op", "com.\n\"x\x1b", NULL);
    pb qo = opset("com.\n\"x\x1b", 1);
    msg(&q, 8, &qo);
    r = run(&q, STG_PROFILE_STRICT);
    f = stg_report_at(r, (size_t)tu_find(r, STG_ONNX_CUSTOM_DOMAIN));
    ck_assert_msg(strstr(f->message, "\"com.??x?\"") != NULL, "%s", f->message);
    ck_assert_uint_eq(f->module_len, 8);
    stg_report_free(r);
    free(q.p);
    /* the standard domains are no custom domain */
    const char *std[] = {"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training"};
    for (size_t i = 0; i < 4; i++) {
        pb s = model_with(NULL, "Relu", std[i], NULL);
        if (i >= 2) {
            pb oi = opset(std[i], 1);
            msg(&s, 8, &oi);
        }
        expect_clean(&s);
        free(s.p);
    }
    /* a custom-domain op that is a local function: no native code */
    pb fn = {0};
    sfield(&fn, 1, "Secret");
    pb fnode = node("Relu", NULL);
    msg(&fn, 7, &fnode);
    pb fo = opset("", 13);
    msg(&fn, 9, &fo);
    sfield(&fn, 10, "com.example");
    pb lm = model_with(NULL, "Secret", "com.example", NULL);
    pb lo = opset("com.example", 1);
    msg(&lm, 8, &lo);
    msg(&lm, 25, &fn);
    expect_clean(&lm);
    free(lm.p);
    /* a node in a subgraph (If's then_branch) is found too */
    pb sub = {0};
    pb sn = node("Evil", "org.evil");
    msg(&sub, 1, &sn);
    pb attr = {0};
    sfield(&attr, 1, "then_branch");
    vfield(&attr, 20, 5);
    msg(&attr, 6, &sub);
    pb ifn = node("If", NULL);
    msg(&ifn, 5, &attr);
    pb g = {0};
    msg(&g, 1, &ifn);
    pb sm = {0};
    msg(&sm, 7, &g);
    pb so = opset("", 13);
    msg(&sm, 8, &so);
    pb so2 = opset("org.evil", 1);
    msg(&sm, 8, &so2);
    expect(&sm, STG_ONNX_CUSTOM_DOMAIN, W, W, STG_NO_OFFSET);
    free(sm.p);
}
END_TEST

START_TEST(test_opset_invalid)
{
    /* no opset import at all */
    pb g = {0};
    pb n = node("Relu", NULL);
    msg(&g, 1, &n);
    pb m = {0};
    vfield(&m, 1, 8);
    msg(&m, 7, &g);
    expect(&m, STG_ONNX_OPSET_INVALID, E, W, STG_NO_OFFSET);
    free(m.p);
    /* version 0 */
    pb z = model_with(NULL, "Relu", NULL, NULL);
    size_t at = z.n;
    pb o = opset("ai.onnx.ml", 0);
    msg(&z, 8, &o);
    expect(&z, STG_ONNX_OPSET_INVALID, E, W, at);
    free(z.p);
    /* "" and "ai.onnx" are one domain: imported twice */
    pb d = model_with(NULL, "Relu", NULL, NULL);
    size_t dat = d.n;
    pb od = opset("ai.onnx", 13);
    msg(&d, 8, &od);
    expect(&d, STG_ONNX_OPSET_INVALID, E, W, dat);
    free(d.p);
    /* a node of a domain no import names */
    pb u = model_with(NULL, "Normalizer", "ai.onnx.ml", NULL);
    expect(&u, STG_ONNX_OPSET_INVALID, E, W, STG_NO_OFFSET);
    free(u.p);
    /* near miss: the import is there */
    pb ok = model_with(NULL, "Normalizer", "ai.onnx.ml", NULL);
    pb ook = opset("ai.onnx.ml", 3);
    msg(&ok, 8, &ook);
    expect_clean(&ok);
    free(ok.p);
}
END_TEST

/* Subgraphs nested through attributes: 3 frames a level (graph, node, attribute). */
static pb nested(int levels)
{
    pb g = {0};
    pb n0 = node("Relu", NULL);
    msg(&g, 1, &n0);
    for (int i = 0; i < levels; i++) {
        pb attr = {0};
        sfield(&attr, 1, "body");
        msg(&attr, 6, &g);
        pb n = node("Loop", NULL);
        msg(&n, 5, &attr);
        g = (pb){0};
        msg(&g, 1, &n);
    }
    pb m = {0};
    msg(&m, 7, &g);
    pb o = opset("", 13);
    msg(&m, 8, &o);
    return m;
}

/* Messages that name no file but that protobuf parses (graph inputs and outputs, value infos,
 * their types and shapes, metadata entries, annotations, attribute types): broken wire data in
 * them is onnx_malformed, well-formed data (nested types included) is clean. */
static pb value_info(const char *name, pb *type)
{
    pb v = {0};
    sfield(&v, 1, name);
    if (type != NULL) {
        msg(&v, 2, type);
    }
    return v;
}

/* A TypeProto: a tensor of FLOAT with shape [n, "batch"], wrapped `seq` times in sequences. */
static pb tensor_type(int seq)
{
    pb dim1 = {0}, dim2 = {0}, shape = {0}, tt = {0}, t = {0};
    vfield(&dim1, 1, 4);
    sfield(&dim2, 2, "batch");
    msg(&shape, 1, &dim1);
    msg(&shape, 1, &dim2);
    vfield(&tt, 1, 1);
    msg(&tt, 2, &shape);
    msg(&t, 1, &tt);
    for (int i = 0; i < seq; i++) {
        pb sq = {0}, outer = {0};
        msg(&sq, 1, &t);
        msg(&outer, 4, &sq);
        t = outer;
    }
    return t;
}

START_TEST(test_wire_only_messages)
{
    /* near misses: well-formed inputs, outputs, value infos, metadata, a nested sequence type */
    pb extra = {0};
    pb ty = tensor_type(3);
    pb vi = value_info("x", &ty);
    msg(&extra, 11, &vi);
    ty = tensor_type(0);
    vi = value_info("y", &ty);
    msg(&extra, 12, &vi);
    vi = value_info("t", NULL);
    msg(&extra, 13, &vi);
    pb ok = model_with(&extra, "Relu", NULL, NULL);
    pb meta = entry("author", "me");
    msg(&ok, 14, &meta);
    expect_clean(&ok);
    free(ok.p);
    /* a graph input whose type's tensor type runs past its message */
    pb cut = {0};
    tag(&cut, 1, 2);
    varint(&cut, 9);
    tu_buf_put(&cut, "\x08", 1);
    vi = value_info("x", &cut);
    pb bad_extra = {0};
    msg(&bad_extra, 11, &vi);
    pb bad = model_with(&bad_extra, "Relu", NULL, NULL);
    stg_report *r = run(&bad, STG_PROFILE_COMPAT);
    ck_assert_msg(tu_find(r, STG_ONNX_MALFORMED) >= 0, "%s", tu_describe(r));
    stg_report_free(r);
    free(bad.p);
    /* a metadata entry with a varint of 11 bytes */
    pb m2 = model_with(NULL, "Relu", NULL, NULL);
    pb e = {0};
    tag(&e, 1, 0);
    tu_buf_put(&e, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    msg(&m2, 14, &e);
    r = run(&m2, STG_PROFILE_STRICT);
    ck_assert_msg(tu_find(r, STG_ONNX_MALFORMED) >= 0, "%s", tu_describe(r));
    stg_report_free(r);
    free(m2.p);
    /* the wrong wire type makes a field unknown, skipped as protobuf skips it: clean */
    pb unk = {0};
    vfield(&unk, 11, 5);
    pb m3 = model_with(&unk, "Relu", NULL, NULL);
    expect_clean(&m3);
    free(m3.p);
    /* sequences nested past protobuf's depth: limit_exceeded max_onnx_depth */
    ty = tensor_type(60);
    vi = value_info("x", &ty);
    pb deep_extra = {0};
    msg(&deep_extra, 11, &vi);
    pb deep = model_with(&deep_extra, "Relu", NULL, NULL);
    r = run(&deep, STG_PROFILE_STRICT);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_onnx_depth");
    stg_report_free(r);
    free(deep.p);
}
END_TEST

START_TEST(test_depth)
{
    pb ok = nested(30); /* 1 + 3 x 30 + 2 = 93 frames */
    expect_clean(&ok);
    free(ok.p);
    pb deep = nested(40);
    stg_report *r = run(&deep, STG_PROFILE_STRICT);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_onnx_depth");
    stg_report_free(r);
    free(deep.p);
    /* many custom domains, each once: the tables stay linear */
    pb g = {0};
    char d[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(d, sizeof d, "com.x%d", i);
        pb n = node("Op", d);
        msg(&g, 1, &n);
    }
    pb m = {0};
    msg(&m, 7, &g);
    pb o = opset("", 13);
    msg(&m, 8, &o);
    r = run(&m, STG_PROFILE_COMPAT);
    /* 20,000 domains, each reported (custom, and not imported): past max_findings, counted */
    ck_assert_uint_gt(tu_count(r, STG_ONNX_CUSTOM_DOMAIN), 400);
    ck_assert_uint_gt(stg_report_truncated(r), 30000);
    stg_report_free(r);
    free(m.p);
}
END_TEST

/* Every memory cap from almost nothing up: the uncapped answer, or limit_exceeded and a
 * verdict that is not ok. */
START_TEST(test_memory_caps)
{
    pb g = {0};
    char d[32];
    for (int i = 0; i < 300; i++) {
        snprintf(d, sizeof d, "com.x%d", i % 7);
        pb n = node("Op", d);
        msg(&g, 1, &n);
        pb t = ext_tensor("w.bin", "0", "4", 1);
        msg(&g, 5, &t);
    }
    pb m = {0};
    msg(&m, 7, &g);
    for (int i = 0; i < 7; i++) {
        snprintf(d, sizeof d, "com.x%d", i);
        pb o = opset(d, 1);
        msg(&m, 8, &o);
    }
    pb o = opset("", 13);
    msg(&m, 8, &o);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *full = stg_report_new(&lim);
    ck_assert_int_eq(stg_onnx_check(m.p, m.n, &lim, 0, full, NULL), STG_OK);
    stg_report_finish(full);
    ck_assert_uint_eq(tu_count(full, STG_ONNX_CUSTOM_DOMAIN), 7);
    for (uint64_t cap = 1; cap < ((uint64_t)1 << 20); cap = cap * 3 / 2 + 1024) {
        lim.max_memory = cap;
        stg_report *r = stg_report_new(&lim);
        ck_assert_int_eq(stg_onnx_check(m.p, m.n, &lim, 0, r, NULL), STG_OK);
        stg_report_finish(r);
        if (tu_find(r, STG_LIMIT_EXCEEDED) >= 0) {
            ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
        } else {
            ck_assert_uint_eq(stg_report_count(r), stg_report_count(full));
        }
        stg_report_free(r);
    }
    stg_report_free(full);
    free(m.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Files: the fixtures, then links */

static stg_report *check_file(const char *dir, const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    size_t len = 0;
    uint8_t *buf = tu_read_file(path, &len);
    ck_assert_msg(buf != NULL, "%s", path);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_onnx_model m;
    ck_assert_int_eq(stg_onnx_check(buf, len, &lim, 0, r, &m), STG_OK);
    stg_onnx_check_external_files(dir, root, m.ext, m.next, r);
    stg_onnx_model_release(&m);
    stg_report_finish(r);
    free(buf);
    return r;
}

START_TEST(test_fixtures)
{
    const char *top = tu_src("tests/data/onnx");
    DIR *d = opendir(top);
    ck_assert_msg(d != NULL, "no %s", top);
    struct dirent *e;
    size_t ok = 0, bad = 0;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", top, n);
        if (strncmp(n, "ok-", 3) == 0) {
            stg_report *r = check_file(dir, NULL);
            ck_assert_msg(stg_report_count(r) == 0, "%s: %s", n, tu_describe(r));
            stg_report_free(r);
            ok++;
        } else if (strncmp(n, "bad-", 4) == 0) {
            stg_code want = tu_code_by_name(n + 4, strcspn(n + 4, "-"));
            ck_assert_msg(want != 0, "%s: names no code", n);
            stg_report *r = check_file(dir, NULL);
            ck_assert_msg(tu_find(r, want) >= 0, "%s: %s", n, tu_describe(r));
            ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
            stg_report_free(r);
            bad++;
        }
    }
    closedir(d);
    ck_assert_uint_ge(ok, 6);
    ck_assert_uint_ge(bad, 11);
}
END_TEST

START_TEST(test_external_links)
{
    char *tmp = tu_tempdir();
    char model_dir[2048], path[4096], target[4096];
    snprintf(model_dir, sizeof model_dir, "%s/model", tmp);
    ck_assert_int_eq(mkdir(model_dir, 0700), 0);
    /* the model names w.bin; w.bin is a link to a file outside the model's folder */
    snprintf(target, sizeof target, "%s/outside.bin", tmp);
    ck_assert_int_eq(tu_write_file(target, "0123456789abcdef", 16), 0);
    snprintf(path, sizeof path, "%s/w.bin", model_dir);
    ck_assert_int_eq(symlink("../outside.bin", path), 0);
    pb t = ext_tensor("w.bin", "0", "16", 1);
    pb m = model_with(NULL, "Relu", NULL, &t);
    snprintf(path, sizeof path, "%s/model.onnx", model_dir);
    ck_assert_int_eq(tu_write_file(path, m.p, m.n), 0);
    free(m.p);
    stg_report *r = check_file(model_dir, NULL);
    long at = tu_find(r, STG_ONNX_EXTERNAL_PATH_UNSAFE);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->member, "w.bin");
    stg_report_free(r);
    /* near miss: a root that holds both (a Hugging Face cache links snapshots to blobs) */
    r = check_file(model_dir, tmp);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    /* a link inside the folder is fine; a link to a folder is not a regular file */
    snprintf(path, sizeof path, "%s/w.bin", model_dir);
    ck_assert_int_eq(unlink(path), 0);
    snprintf(target, sizeof target, "%s/real.bin", model_dir);
    ck_assert_int_eq(tu_write_file(target, "0123456789abcdef", 16), 0);
    ck_assert_int_eq(symlink("real.bin", path), 0);
    r = check_file(model_dir, NULL);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    r = check_file(model_dir, NULL);
    at = tu_find(r, STG_NOT_REGULAR_FILE);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_at(r, (size_t)at)->severity, E);
    stg_report_free(r);
    /* one byte short of offset + length */
    ck_assert_int_eq(rmdir(path), 0);
    ck_assert_int_eq(tu_write_file(path, "0123456789abcde", 15), 0);
    r = check_file(model_dir, NULL);
    at = tu_find(r, STG_ONNX_EXTERNAL_MISSING);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_at(r, (size_t)at)->severity, E);
    stg_report_free(r);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The public scans route ONNX through the table: a path scan examines the external files next
 * to the model (and stays inside opt->root), a buffer scan checks only the locations' form. */
static stg_report *scan_case(const char *name, bool by_path, const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/model.onnx", tu_src("tests/data/onnx"), name);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    opt.root = root;
    stg_report *r = NULL;
    if (by_path) {
        ck_assert_int_eq(stg_scan_path(path, &opt, &r), STG_OK);
    } else {
        size_t len = 0;
        uint8_t *buf = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(stg_scan_buffer(buf, len, "model.onnx", &opt, &r), STG_OK);
        free(buf);
    }
    ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
    return r;
}

/* Issue 23 item 1: an external-data location naming a FIFO, a socket, a directory, a device
 * (through a link, with a root that holds it) or a link loop. Each is a finding, at once: the
 * FIFO used to be opened without O_NONBLOCK and hung the scan for good (SIGALRM ends the test
 * if it comes back). stg_scan_path is the route `stguard scan` takes. */
static int make_socket(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    ck_assert_uint_lt(strlen(path), sizeof sa.sun_path);
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int rc = fd >= 0 ? bind(fd, (const struct sockaddr *)&sa, sizeof sa) : -1;
    if (fd >= 0) {
        close(fd);
    }
    return rc;
}

static stg_report *scan_model_in(const char *dir, const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.root = root;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(path, &opt, &r), STG_OK);
    return r;
}

START_TEST(test_external_not_regular)
{
    char *tmp = tu_tempdir();
    char dir[2048], path[4096];
    snprintf(dir, sizeof dir, "%s/m", tmp);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    pb t = ext_tensor("w.bin", "0", "16", 1);
    pb m = model_with(NULL, "Relu", NULL, &t);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    ck_assert_int_eq(tu_write_file(path, m.p, m.n), 0);
    free(m.p);
    snprintf(path, sizeof path, "%s/w.bin", dir);
    alarm(20);
    static const char *const kinds[] = {"fifo", "socket", "dir", "device", "loop"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const char *root = NULL;
        stg_code want = STG_NOT_REGULAR_FILE;
        int made = 0;
        if (strcmp(kinds[k], "fifo") == 0) {
            made = mkfifo(path, 0600);
        } else if (strcmp(kinds[k], "socket") == 0) {
            made = make_socket(path);
        } else if (strcmp(kinds[k], "dir") == 0) {
            made = mkdir(path, 0700);
        } else if (strcmp(kinds[k], "device") == 0) {
            made = symlink("/dev/zero", path);
            root = "/"; /* inside the root: the link is followed and the device refused */
        } else {
            made = symlink("w.bin", path);
            want = STG_IO_ERROR; /* ELOOP: nothing to open */
        }
        ck_assert_msg(made == 0, "%s", kinds[k]);
        stg_report *r = scan_model_in(dir, root);
        long at = tu_find(r, want);
        ck_assert_msg(at >= 0, "%s: %s", kinds[k], tu_describe(r));
        /* never passed: invalid, or error for the loop (io_error: nothing could be read) */
        stg_verdict v = stg_report_verdict(r);
        ck_assert_msg(v == (want == STG_IO_ERROR ? STG_VERDICT_ERROR : STG_VERDICT_INVALID),
                      "%s: %s", kinds[k], tu_describe(r));
        ck_assert_str_eq(stg_report_at(r, (size_t)at)->member, "w.bin");
        stg_report_free(r);
        if (strcmp(kinds[k], "device") == 0) {
            /* near miss of the root: without one the link leaves the folder */
            r = scan_model_in(dir, NULL);
            ck_assert_msg(tu_find(r, STG_ONNX_EXTERNAL_PATH_UNSAFE) >= 0, "%s", tu_describe(r));
            ck_assert_int_lt(tu_find(r, STG_NOT_REGULAR_FILE), 0);
            stg_report_free(r);
        }
        ck_assert_int_eq(strcmp(kinds[k], "dir") == 0 ? rmdir(path) : unlink(path), 0);
    }
    /* the open itself, as a race would reach it (the path checked, then swapped for a FIFO):
     * it returns at once and refuses the descriptor */
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    int fd = -1, err = 0;
    struct stat st;
    ck_assert_int_eq(stg_open_file(path, O_NOFOLLOW, &fd, &st, &err), STG_OPEN_NOT_REGULAR);
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert_int_eq(fd, -1);
    ck_assert_int_eq(unlink(path), 0);
    /* near miss: a regular file of the size the entry names */
    ck_assert_int_eq(tu_write_file(path, "0123456789abcdef", 16), 0);
    ck_assert_int_eq(stg_open_file(path, O_NOFOLLOW, &fd, &st, &err), STG_OPENED);
    ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* cleared once known regular */
    close(fd);
    stg_report *r = scan_model_in(dir, NULL);
    ck_assert_msg(tu_find(r, STG_NOT_REGULAR_FILE) < 0 && tu_find(r, STG_IO_ERROR) < 0, "%s",
                  tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    alarm(0);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(test_scan_entries)
{
    stg_report *r = scan_case("ok-external", true, NULL);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    /* the data file is absent: only a path scan can tell */
    r = scan_case("bad-onnx_external_missing-absent", true, NULL);
    ck_assert_msg(tu_find(r, STG_ONNX_EXTERNAL_MISSING) >= 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    r = scan_case("bad-onnx_external_missing-absent", false, NULL);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    /* `..` is caught by its form in both */
    for (int by_path = 0; by_path < 2; by_path++) {
        r = scan_case("bad-onnx_external_path_unsafe-dotdot", by_path, NULL);
        ck_assert_msg(tu_find(r, STG_ONNX_EXTERNAL_PATH_UNSAFE) >= 0, "%s", tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
    }
    /* the root given to the scan is the one the files must stay in: the model's own folder
     * as root is the near miss of a root that does not hold the data */
    char root[4096];
    snprintf(root, sizeof root, "%s/ok-external", tu_src("tests/data/onnx"));
    r = scan_case("ok-external", true, root);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Recognition by content (stg_onnx_sniff, the format table's last resort) */

/* The next entry of d that is not "." or "..", NULL at the end. */
static const char *next_name(DIR *d)
{
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] != '.') {
            return de->d_name;
        }
    }
    return NULL;
}

/* dir/name's bytes (the test fails when it cannot be read). */
static uint8_t *read_in(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%.2000s/%.255s", dir, name);
    uint8_t *buf = tu_read_file(path, len);
    ck_assert_msg(buf != NULL, "%s", path);
    return buf;
}

static bool sniffs(const pb *b)
{
    return stg_onnx_sniff(b->p, b->n);
}

START_TEST(test_sniff)
{
    pb m = model_with(NULL, "Relu", NULL, NULL);
    ck_assert(sniffs(&m));
    /* truncated: every cut inside the last field (the opset import) */
    for (size_t cut = 1; cut < 6; cut++) {
        ck_assert_msg(!stg_onnx_sniff(m.p, m.n - cut), "cut %zu", cut);
    }
    free(m.p);
    /* ir_version with an opset import alone, or with a graph alone, is enough */
    pb a = {0};
    vfield(&a, 1, 7);
    pb o = opset("", 13);
    msg(&a, 8, &o);
    ck_assert(sniffs(&a));
    free(a.p);
    /* near misses */
    pb b = {0}; /* no ir_version */
    o = opset("", 13);
    msg(&b, 8, &o);
    ck_assert(!sniffs(&b));
    free(b.p);
    pb c = {0}; /* ir_version alone */
    vfield(&c, 1, 8);
    ck_assert(!sniffs(&c));
    free(c.p);
    for (uint64_t ir = 0; ir <= 0x10000; ir += 0x10000) { /* ir_version 0 and past the bound */
        pb d = {0};
        vfield(&d, 1, ir);
        o = opset("", 13);
        msg(&d, 8, &o);
        ck_assert(!sniffs(&d));
        free(d.p);
    }
    pb e = {0}; /* field 7 with the wrong wire type (a varint, then a fixed64, then a group) */
    vfield(&e, 1, 8);
    vfield(&e, 7, 3);
    ck_assert(!sniffs(&e));
    free(e.p);
    pb e2 = {0};
    vfield(&e2, 1, 8);
    tag(&e2, 7, 1);
    tu_buf_put(&e2, "\0\0\0\0\0\0\0\0", 8);
    ck_assert(!sniffs(&e2));
    free(e2.p);
    pb e3 = {0};
    vfield(&e3, 1, 8);
    tag(&e3, 7, 3);
    tag(&e3, 7, 4);
    o = opset("", 13);
    msg(&e3, 8, &o);
    ck_assert(!sniffs(&e3));
    free(e3.p);
    pb f = {0}; /* a field ModelProto does not declare (9) */
    vfield(&f, 1, 8);
    o = opset("", 13);
    msg(&f, 8, &o);
    sfield(&f, 9, "x");
    ck_assert(!sniffs(&f));
    free(f.p);
    pb g = {0}; /* an opset import that is no OperatorSetIdProto */
    vfield(&g, 1, 8);
    sfield(&g, 8, "x");
    ck_assert(!sniffs(&g));
    free(g.p);
    pb h = {0}; /* a graph that is no GraphProto (field 3, reserved) */
    vfield(&h, 1, 8);
    pb gr = {0};
    vfield(&gr, 3, 1);
    msg(&h, 7, &gr);
    ck_assert(!sniffs(&h));
    free(h.p);
    /* an onnx TensorProto alone (dims, data_type, name, raw_data) */
    pb t = ext_tensor("w.bin", "0", "16", 0);
    ck_assert(!sniffs(&t));
    free(t.p);
    /* random bytes: a fixed-seed generator, lengths 1 to 512 */
    uint64_t x = 0x9E3779B97F4A7C15u;
    uint8_t rnd[512];
    for (size_t trial = 0; trial < 20000; trial++) {
        size_t n = 1 + trial % sizeof rnd;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            rnd[i] = (uint8_t)x;
        }
        ck_assert_msg(!stg_onnx_sniff(rnd, n), "trial %zu", trial);
    }
    ck_assert(!stg_onnx_sniff(NULL, 0));
    /* the fixtures python3-onnx wrote: every one but the truncated model */
    const char *top = tu_src("tests/data/onnx");
    DIR *dir = opendir(top);
    ck_assert_ptr_nonnull(dir);
    const char *n;
    size_t seen = 0;
    while ((n = next_name(dir)) != NULL) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%.255s", top, n);
        size_t len = 0;
        uint8_t *buf = read_in(sub, "model.onnx", &len);
        bool truncated = strstr(n, "truncated") != NULL;
        ck_assert_msg(stg_onnx_sniff(buf, len) == !truncated, "%s", n);
        free(buf);
        seen++;
    }
    closedir(dir);
    ck_assert_uint_ge(seen, 17);
}
END_TEST

/* Copies tests/data/onnx/<name>/ into dir, the model renamed to `as`. */
static void copy_case(const char *name, const char *dir, const char *as)
{
    char from[2048], to[8192];
    snprintf(from, sizeof from, "%s/%s", tu_src("tests/data/onnx"), name);
    DIR *d = opendir(from);
    ck_assert_ptr_nonnull(d);
    ck_assert(mkdir(dir, 0700) == 0);
    const char *n;
    while ((n = next_name(d)) != NULL) {
        size_t len = 0;
        uint8_t *buf = read_in(from, n, &len);
        bool model = strcmp(n, "model.onnx") == 0;
        snprintf(to, sizeof to, "%s/%s", dir, model ? as : n);
        ck_assert_int_eq(tu_write_file(to, buf, len), 0);
        free(buf);
    }
    closedir(d);
}

static stg_report *scan_renamed(const char *tmp, const char *name, const char *as)
{
    char dir[2048], path[4096];
    snprintf(dir, sizeof dir, "%.1000s/%.500s-%.100s", tmp, name, as);
    copy_case(name, dir, as);
    snprintf(path, sizeof path, "%s/%s", dir, as);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(path, &opt, &r), STG_OK);
    return r;
}

/* A model of any name gets the ONNX rules, external files included; what does not walk as a
 * ModelProto keeps the label it had (unknown, format_mismatch for a name claiming a pickle). */
START_TEST(test_renamed)
{
    char *tmp = tu_tempdir();
    static const char *const names[] = {"model.bin", "noext"};
    for (size_t i = 0; i < 2; i++) {
        const char *as = names[i];
        stg_report *r = scan_renamed(tmp, "ok-external", as);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
        ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
        stg_report_free(r);
        r = scan_renamed(tmp, "bad-onnx_external_path_unsafe-dotdot", as);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
        ck_assert_msg(tu_find(r, STG_ONNX_EXTERNAL_PATH_UNSAFE) >= 0, "%s", tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
        r = scan_renamed(tmp, "bad-onnx_external_missing-absent", as);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
        ck_assert_msg(tu_find(r, STG_ONNX_EXTERNAL_MISSING) >= 0, "%s", tu_describe(r));
        stg_report_free(r);
        r = scan_renamed(tmp, "bad-onnx_custom_domain", as);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
        ck_assert_msg(tu_find(r, STG_ONNX_CUSTOM_DOMAIN) >= 0, "%s", tu_describe(r));
        stg_report_free(r);
        /* near miss: the truncated model is not claimed */
        r = scan_renamed(tmp, "bad-onnx_malformed-truncated", as);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_UNKNOWN);
        ck_assert_int_lt(tu_find(r, STG_ONNX_MALFORMED), 0);
        ck_assert_int_ge(tu_find(r, i == 0 ? STG_FORMAT_MISMATCH : STG_FORMAT_UNKNOWN), 0);
        stg_report_free(r);
    }
    /* named .onnx, the truncated model is ONNX and malformed, as before */
    stg_report *r = scan_renamed(tmp, "bad-onnx_malformed-truncated", "x.onnx");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
    ck_assert_int_ge(tu_find(r, STG_ONNX_MALFORMED), 0);
    stg_report_free(r);
    tu_rmtree(tmp);
    free(tmp);
    /* buffers: no name at all; the quick label agrees */
    pb m = model_with(NULL, "Relu", NULL, NULL);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    ck_assert_int_eq(stg_scan_buffer(m.p, m.n, NULL, &opt, &r), STG_OK);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    ck_assert_int_eq(stg_sniff(m.p, m.n, NULL), STG_FMT_ONNX);
    /* the table's ordered sniffs (archive members, zip head windows) never say ONNX */
    ck_assert_ptr_null(stg_format_sniff(m.p, m.n, NULL));
    ck_assert_ptr_eq(stg_format_last_resort(m.p, m.n, NULL), stg_name_hint_of("m.onnx").entry);
    ck_assert_int_eq(stg_sniff(m.p, m.n - 1, NULL), STG_FMT_UNKNOWN);
    ck_assert_int_eq(stg_sniff(m.p, m.n - 1, "m.onnx"), STG_FMT_ONNX);
    free(m.p);
    /* text is never ONNX: JSON and a README keep their labels */
    static const char json[] = "{\"ir_version\": 8, \"graph\": {}}";
    ck_assert_int_eq(stg_scan_buffer(json, sizeof json - 1, "model.bin", &opt, &r), STG_OK);
    ck_assert_int_ne(stg_report_format(r), STG_FMT_ONNX);
    stg_report_free(r);
    static const char readme[] = "# model card\n\nir_version 8, graph g, opset 13\n";
    ck_assert_int_eq(stg_scan_buffer(readme, sizeof readme - 1, NULL, &opt, &r), STG_OK);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TEXT);
    stg_report_free(r);
}
END_TEST

/* An ONNX model whose last field (doc_string) holds a zip, its end record at the end of the
 * file: Python's zipfile opens the archive, onnxruntime the model. Both readings are checked. */
START_TEST(test_zip_polyglot)
{
    size_t zn = 0;
    zb_entry e = zb_file("readme.txt", "hello", 5);
    uint8_t *zip = zb_build(&e, 1, NULL, &zn, NULL);
    ck_assert_ptr_nonnull(zip);
    pb t = ext_tensor("../../etc/passwd", "0", "16", 1);
    pb m = model_with(NULL, "Relu", NULL, &t);
    bytes_field(&m, 6, zip, zn);
    free(zip);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    static const char *const names[] = {"model.onnx", "model.bin", NULL};
    for (size_t i = 0; i < 3; i++) {
        stg_report *r = NULL;
        ck_assert_int_eq(stg_scan_buffer(m.p, m.n, names[i], &opt, &r), STG_OK);
        ck_assert_int_eq(stg_report_format(r), STG_FMT_ZIP);
        ck_assert_msg(tu_find(r, STG_ONNX_EXTERNAL_PATH_UNSAFE) >= 0, "%s: %s", names[i],
                      tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
    }
    /* near miss: the zip alone gets no ONNX rule */
    stg_report *r = NULL;
    zip = zb_build(&e, 1, NULL, &zn, NULL);
    ck_assert_int_eq(stg_scan_buffer(zip, zn, "model.bin", &opt, &r), STG_OK);
    ck_assert_int_lt(tu_find(r, STG_ONNX_OPSET_INVALID), 0);
    ck_assert_int_lt(tu_find(r, STG_ONNX_MALFORMED), 0);
    stg_report_free(r);
    free(zip);
    free(m.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The public door (stg_onnx_open) and its accessors */

static char *case_path(const char *name, const char *file)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", tu_src("tests/data/onnx"), name, file);
    return path;
}

static bool bytes_is(const char *s, size_t n, const char *want)
{
    return s != NULL && n == strlen(want) && memcmp(s, want, n) == 0;
}

START_TEST(test_door)
{
    stg_onnx *m = NULL;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_onnx_open(case_path("ok-inspect", "model.onnx"), NULL, &m, &rep), STG_OK);
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(stg_report_verdict(rep) == STG_VERDICT_OK, "%s", tu_describe(rep));
    ck_assert_int_eq(stg_report_format(rep), STG_FMT_ONNX);
    stg_report_free(rep);
    stg_onnx_model_info mi;
    memset(&mi, 0xff, sizeof mi);
    ck_assert_int_eq(stg_onnx_describe(m, &mi), STG_OK);
    ck_assert_uint_eq(mi.struct_version, STG_STRUCT_VERSION);
    ck_assert_int_eq(mi.ir_version, 8);
    ck_assert_int_eq(mi.model_version, 3);
    ck_assert(bytes_is(mi.producer_name, mi.producer_name_len, "stguard-test"));
    ck_assert(bytes_is(mi.producer_version, mi.producer_version_len, "1.0"));
    ck_assert(bytes_is(mi.domain, mi.domain_len, "org.example"));
    ck_assert(bytes_is(mi.graph_name, mi.graph_name_len, "inspect-graph"));
    ck_assert_uint_eq(mi.node_count, 4);
    ck_assert_uint_eq(mi.initializer_count, 3);
    ck_assert_uint_eq(mi.parameters, 256 + 4 + 6);
    ck_assert_uint_eq(mi.tensor_bytes, 1024 + 32 + 12);
    ck_assert_uint_eq(mi.external_count, 1);
    ck_assert_uint_eq(mi.reserved[0], 0);
    /* metadata_props */
    ck_assert_uint_eq(stg_onnx_metadata_count(m), 2);
    const char *k, *v;
    size_t kn, vn;
    ck_assert_int_eq(stg_onnx_metadata_at(m, 1, &k, &kn, &v, &vn), STG_OK);
    ck_assert(bytes_is(k, kn, "license") && bytes_is(v, vn, "MIT"));
    ck_assert_int_eq(stg_onnx_metadata_at(m, 2, &k, &kn, &v, &vn), STG_E_RANGE);
    /* opset imports */
    stg_onnx_opset_info o;
    ck_assert_uint_eq(stg_onnx_opset_count(m), 1);
    ck_assert_int_eq(stg_onnx_opset_at(m, 0, &o), STG_OK);
    ck_assert(o.domain_len == 0 && o.version == 13);
    ck_assert_int_eq(stg_onnx_opset_at(m, 1, &o), STG_E_RANGE);
    /* inputs: a symbolic, a static and an unknown dimension */
    stg_onnx_value_info vi;
    ck_assert_uint_eq(stg_onnx_input_count(m), 1);
    ck_assert_uint_eq(stg_onnx_output_count(m), 1);
    ck_assert_int_eq(stg_onnx_input_at(m, 0, &vi), STG_OK);
    ck_assert(bytes_is(vi.name, vi.name_len, "x"));
    ck_assert_int_eq(vi.elem_type, 1);
    ck_assert_str_eq(vi.type_name, "FLOAT");
    ck_assert_uint_eq(vi.has_shape, 1);
    ck_assert_uint_eq(vi.rank, 3);
    ck_assert(vi.dims[0].value == -1 && bytes_is(vi.dims[0].param, vi.dims[0].param_len, "batch"));
    ck_assert(vi.dims[1].value == 4 && vi.dims[1].param == NULL);
    ck_assert(vi.dims[2].value == -1 && vi.dims[2].param == NULL);
    ck_assert_int_eq(stg_onnx_output_at(m, 0, &vi), STG_OK);
    ck_assert(bytes_is(vi.name, vi.name_len, "y"));
    ck_assert_int_eq(stg_onnx_output_at(m, 1, &vi), STG_E_RANGE);
    ck_assert_int_eq(stg_onnx_input_at(m, 1, &vi), STG_E_RANGE);
    /* the op histogram, most frequent first */
    stg_onnx_op_info op;
    ck_assert_uint_eq(stg_onnx_op_count(m), 2);
    ck_assert_int_eq(stg_onnx_op_at(m, 0, &op), STG_OK);
    ck_assert(bytes_is(op.op_type, op.op_type_len, "Relu") && op.count == 3 && !op.custom);
    ck_assert_int_eq(stg_onnx_op_at(m, 1, &op), STG_OK);
    ck_assert(bytes_is(op.op_type, op.op_type_len, "Add") && op.count == 1);
    ck_assert_int_eq(stg_onnx_op_at(m, 2, &op), STG_E_RANGE);
    /* initializers: one external, two inline */
    stg_onnx_tensor_info t;
    ck_assert_uint_eq(stg_onnx_initializer_count(m), 3);
    ck_assert_int_eq(stg_onnx_initializer_at(m, 0, &t), STG_OK);
    ck_assert(bytes_is(t.name, t.name_len, "big"));
    ck_assert_str_eq(t.type_name, "FLOAT");
    ck_assert(t.rank == 2 && t.dims[0] == 16 && t.dims[1] == 16);
    ck_assert(t.elements == 256 && t.bytes == 1024);
    ck_assert_uint_eq(t.external, 1);
    ck_assert(bytes_is(t.location, t.location_len, "inspect.data"));
    ck_assert(t.offset == 0 && t.has_length && t.length == 1024);
    ck_assert_int_eq(stg_onnx_initializer_at(m, 2, &t), STG_OK);
    ck_assert(bytes_is(t.name, t.name_len, "half"));
    ck_assert(t.data_type == 10 && t.elements == 6 && t.bytes == 12 && t.external == 0);
    ck_assert(t.location == NULL);
    ck_assert_int_eq(stg_onnx_initializer_at(m, 3, &t), STG_E_RANGE);
    /* NULL arguments */
    ck_assert_int_eq(stg_onnx_describe(NULL, &mi), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_onnx_describe(m, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_onnx_initializer_at(m, 0, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_onnx_metadata_at(m, 0, NULL, &kn, &v, &vn), STG_E_BAD_ARG);
    ck_assert_uint_eq(stg_onnx_op_count(NULL), 0);
    ck_assert_uint_eq(stg_onnx_initializer_count(NULL), 0);
    stg_onnx_close(m);
    stg_onnx_close(NULL);
    ck_assert_int_eq(stg_onnx_open(NULL, NULL, &m, &rep), STG_E_BAD_ARG);
    /* a custom domain is flagged; a warning does not refuse the model */
    ck_assert_int_eq(
        stg_onnx_open(case_path("bad-onnx_custom_domain", "model.onnx"), NULL, &m, &rep), STG_OK);
    ck_assert_int_ge(tu_find(rep, STG_ONNX_CUSTOM_DOMAIN), 0);
    ck_assert_int_eq(stg_onnx_op_at(m, 0, &op), STG_OK);
    ck_assert(bytes_is(op.domain, op.domain_len, "com.example.ops") && op.custom == 1);
    ck_assert_uint_eq(op.local_function, 0);
    stg_onnx_close(m);
    stg_report_free(rep);
    /* near miss: a custom-domain op the model defines as a function */
    ck_assert_int_eq(stg_onnx_open(case_path("ok-function", "model.onnx"), NULL, &m, &rep), STG_OK);
    ck_assert_int_eq(stg_onnx_op_at(m, 0, &op), STG_OK);
    ck_assert(bytes_is(op.domain, op.domain_len, "local.fns") && op.custom == 1);
    ck_assert_uint_eq(op.local_function, 1);
    stg_onnx_close(m);
    stg_report_free(rep);
}
END_TEST

/* The door validates first: an invalid model is refused with its report, nothing exposed. */
static void expect_refused(const char *path, const stg_limits *lim, stg_code code)
{
    stg_onnx *m = (stg_onnx *)1;
    stg_report *rep = NULL;
    ck_assert_int_eq(stg_onnx_open(path, lim, &m, &rep), STG_E_INVALID);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(rep);
    ck_assert_msg(tu_find(rep, code) >= 0, "%s: %s", path, tu_describe(rep));
    ck_assert_int_ge(stg_report_verdict(rep), STG_VERDICT_INVALID);
    stg_report_free(rep);
}

START_TEST(test_door_refuses)
{
    expect_refused(case_path("bad-onnx_external_path_unsafe-dotdot", "model.onnx"), NULL,
                   STG_ONNX_EXTERNAL_PATH_UNSAFE);
    expect_refused(case_path("bad-onnx_external_missing-short", "model.onnx"), NULL,
                   STG_ONNX_EXTERNAL_MISSING);
    expect_refused(case_path("bad-onnx_malformed-truncated", "model.onnx"), NULL,
                   STG_ONNX_MALFORMED);
    expect_refused(case_path("bad-onnx_opset_invalid-none", "model.onnx"), NULL,
                   STG_ONNX_OPSET_INVALID);
    /* the data file is not the model's: a copy of the model alone misses it */
    char *tmp = tu_tempdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/renamed.bin", tmp);
    size_t len = 0;
    uint8_t *buf = tu_read_file(case_path("ok-inspect", "model.onnx"), &len);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(tu_write_file(path, buf, len), 0);
    expect_refused(path, NULL, STG_ONNX_EXTERNAL_MISSING);
    free(buf);
    /* a lying model: wire data inside a graph input (which the rules do not enter) is cut */
    pb vi = {0};
    sfield(&vi, 1, "x");
    tag(&vi, 2, 2);
    varint(&vi, 3); /* a TypeProto of 3 bytes ... */
    tag(&vi, 1, 2);
    varint(&vi, 9); /* ... holding a tensor type of 9 */
    tu_buf_put(&vi, "\x08", 1);
    pb extra = {0};
    msg(&extra, 11, &vi);
    pb lie = model_with(&extra, "Relu", NULL, NULL);
    snprintf(path, sizeof path, "%s/lie.onnx", tmp);
    ck_assert_int_eq(tu_write_file(path, lie.p, lie.n), 0);
    free(lie.p);
    expect_refused(path, NULL, STG_ONNX_MALFORMED);
    /* memory: the tables under max_memory (a model of 3 initializers, a 64-byte budget) */
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_memory = 64;
    expect_refused(case_path("ok-inspect", "model.onnx"), &lim, STG_LIMIT_EXCEEDED);
    /* near miss: the same model with the default budget opens (test_door) */
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("onnx");
    TCase *tc = tcase_create("onnx");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_pb_walker);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_location_rules);
    tcase_add_test(tc, test_external_path_unsafe);
    tcase_add_test(tc, test_data_location_widths);
    tcase_add_test(tc, test_external_malformed);
    tcase_add_test(tc, test_custom_domain);
    tcase_add_test(tc, test_opset_invalid);
    tcase_add_test(tc, test_depth);
    tcase_add_test(tc, test_wire_only_messages);
    tcase_add_test(tc, test_memory_caps);
    tcase_add_test(tc, test_fixtures);
    tcase_add_test(tc, test_external_links);
    tcase_add_test(tc, test_external_not_regular);
    tcase_add_test(tc, test_scan_entries);
    tcase_add_test(tc, test_sniff);
    tcase_add_test(tc, test_renamed);
    tcase_add_test(tc, test_zip_polyglot);
    tcase_add_test(tc, test_door);
    tcase_add_test(tc, test_door_refuses);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
