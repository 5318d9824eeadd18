/* The glue between the pickle walker and the report (validator/pickle_scan): the bytes given to
 * nested loaders (literals, _codecs.encode with latin-1, wrapping calls, what is not a literal,
 * the payload cap), joblib inline arrays (which bytes are skipped and which are walked because
 * their size is not understood), legacy torch storages skipped by their declared sizes, .npy
 * headers, and the cap on distinct globals. Hand-made pickles; offsets are asserted. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "dispatch/check.h"
#include "parser/torch.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

/* ---------------------------------------------------------------- a byte builder */

typedef struct pbuf {
    uint8_t *b;
    size_t n, cap;
} pbuf;

static void put(pbuf *p, const void *s, size_t n)
{
    if (p->n + n > p->cap) {
        size_t ncap = p->cap == 0 ? 256 : p->cap;
        while (ncap < p->n + n) {
            ncap *= 2;
        }
        p->b = realloc(p->b, ncap);
        ck_assert_ptr_nonnull(p->b);
        p->cap = ncap;
    }
    memcpy(p->b + p->n, s, n);
    p->n += n;
}

#define PUT(p, lit) put((p), (lit), sizeof(lit) - 1)

static void put_le(pbuf *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) {
        uint8_t b = (uint8_t)(v >> (8 * i));
        put(p, &b, 1);
    }
}

/* BINUNICODE of a C string. */
static void put_str(pbuf *p, const char *s)
{
    PUT(p, "X");
    put_le(p, strlen(s), 4);
    put(p, s, strlen(s));
}

/* ---------------------------------------------------------------- scanning */

static stg_report *scan_lim(const uint8_t *buf, size_t len, stg_pickle_flavor flavor,
                            const stg_limits *lim)
{
    stg_report *r = tu_scan_pickles(buf, len, flavor, lim);
    ck_assert_ptr_nonnull(r);
    return r;
}

static stg_report *scan(const uint8_t *buf, size_t len, stg_pickle_flavor flavor)
{
    return scan_lim(buf, len, flavor, NULL);
}

static const stg_finding *expect_code(const stg_report *r, stg_code code, stg_severity sev,
                                      uint64_t offset)
{
    long i = tu_find(r, code);
    ck_assert_msg(i >= 0, "no %s in %s", stg_code_name(code), tu_describe(r));
    const stg_finding *f = stg_report_at(r, (size_t)i);
    ck_assert_msg(f->has_offset && f->offset == offset, "%s at %llu, want %llu (%s)",
                  stg_code_name(code), (unsigned long long)f->offset, (unsigned long long)offset,
                  tu_describe(r));
    ck_assert_int_eq(f->severity, sev);
    return f;
}

/* The dangerous os.<name> finding whose member is `member` (NULL: outside any member). */
static const stg_finding *find_os(const stg_report *r, const char *member)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->code == STG_PICKLE_GLOBAL_DANGEROUS && f->module != NULL &&
            strcmp(f->module, "os") == 0 &&
            (member == NULL ? f->member == NULL
                            : f->member != NULL && strcmp(f->member, member) == 0)) {
            return f;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- nested loaders */

#define PAYLOAD "cos\nsystem\n."

/* pickle.loads(ARG) where ARG is `arg` (bytes that push one value), called with REDUCE. */
static stg_report *loads_of(const char *arg, size_t arg_len, size_t *reduce_at)
{
    pbuf p = {0};
    PUT(&p, "\x80\x02"
            "cpickle\nloads\n");
    put(&p, arg, arg_len);
    PUT(&p, "\x85");
    *reduce_at = p.n;
    PUT(&p, "R.");
    stg_report *r = scan(p.b, p.n, STG_PICKLE_RAW);
    free(p.b);
    return r;
}

static void expect_nested(const stg_report *r, uint64_t at, const char *msg_start)
{
    const stg_finding *f = expect_code(r, STG_PICKLE_NESTED, STG_SEV_CRITICAL, at);
    ck_assert_msg(strncmp(f->message, msg_start, strlen(msg_start)) == 0, "message: %s",
                  f->message);
}

START_TEST(nested_arguments_that_are_not_literals)
{
    static const struct {
        const char *arg;
        size_t len;
    } cases[] = {
        /* io.BytesIO called with None instead of an argument tuple */
        {"cio\nBytesIO\nNR", 14},
        /* io.BytesIO(1) */
        {"cio\nBytesIO\nK\x01\x85R", 16},
        /* _codecs.encode("\u20ac", "latin1"): no latin-1 form */
        {"c_codecs\nencode\nX\x03\x00\x00\x00\xe2\x82\xacU\x06latin1\x86R", 34},
        /* _codecs.encode of a protocol 0 STRING holding a cut UTF-8 sequence */
        {"c_codecs\nencode\nS'\xc3'\nU\x06latin1\x86R", 31},
        /* _codecs.encode("\u0100", "latin1"): a two-byte form above U+00FF */
        {"c_codecs\nencode\nX\x02\x00\x00\x00\xc4\x80U\x06latin1\x86R", 33},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t at;
        stg_report *r = loads_of(cases[i].arg, cases[i].len, &at);
        expect_nested(r, at, "REDUCE calls a nested loader on an argument that is not a literal");
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
    }
}
END_TEST

START_TEST(nested_literals_are_scanned)
{
    size_t at;
    char member[32];
    /* _codecs.encode(bytes, ...) passes the bytes through. */
    stg_report *r = loads_of("c_codecs\nencode\nC\x0c" PAYLOAD "U\x06latin1\x86R", 40, &at);
    expect_nested(r, at, "REDUCE calls a nested loader; the 12 bytes it is given are scanned");
    snprintf(member, sizeof member, "nested@%zu", at);
    const stg_finding *f = find_os(r, member);
    ck_assert_msg(f != NULL, "%s", tu_describe(r));
    ck_assert_uint_eq(f->offset, 0);
    stg_report_free(r);
    /* Text given to _codecs.encode is latin-1: U+00E9 becomes the byte 0xE9, so the payload
     * SHORT_BINSTRING 1 byte, POP, GLOBAL os.system arrives intact. */
    r = loads_of("c_codecs\nencode\nX\x11\x00\x00\x00U\x01\xc3\xa9"
                 "0" PAYLOAD "U\x06latin1\x86R",
                 48, &at);
    expect_nested(r, at, "REDUCE calls a nested loader; the 16 bytes it is given are scanned");
    snprintf(member, sizeof member, "nested@%zu", at);
    f = find_os(r, member);
    ck_assert_msg(f != NULL, "%s", tu_describe(r));
    ck_assert_uint_eq(f->offset, 4);
    stg_report_free(r);
    /* An empty text: zero bytes, scanned (and found to be no pickle). */
    r = loads_of("c_codecs\nencode\nX\x00\x00\x00\x00U\x06latin1\x86R", 31, &at);
    expect_nested(r, at, "REDUCE calls a nested loader; the 0 bytes it is given are scanned");
    stg_report_free(r);
}
END_TEST

/* Every call opcode names itself in the finding. */
START_TEST(nested_call_opcodes)
{
    static const struct {
        const char *bytes;
        size_t len;
        uint64_t at;
        const char *msg;
    } cases[] = {
        {"(cpickle\nloads\nC\x0c" PAYLOAD "o.", 31, 29, "OBJ calls a nested loader; the 12"},
        {"(C\x0c" PAYLOAD "ipickle\nloads\n.", 30, 15, "INST calls a nested loader; the 12"},
        {"\x80\x04"
         "cpickle\nloads\nC\x0c" PAYLOAD "\x85}\x92.",
         34, 32, "NEWOBJ_EX calls a nested loader; the 12"},
        {"\x80\x02"
         "cpickle\nloads\nC\x0c" PAYLOAD "\x85\x81.",
         33, 31, "NEWOBJ calls a nested loader; the 12"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_report *r = scan((const uint8_t *)cases[i].bytes, cases[i].len, STG_PICKLE_RAW);
        expect_nested(r, cases[i].at, cases[i].msg);
        char member[32];
        snprintf(member, sizeof member, "nested@%llu", (unsigned long long)cases[i].at);
        ck_assert_msg(find_os(r, member) != NULL, "case %zu: %s", i, tu_describe(r));
        stg_report_free(r);
    }
}
END_TEST

/* 256 distinct payloads are scanned; the 257th is flagged and not scanned. */
START_TEST(nested_payload_cap)
{
    pbuf p = {0};
    PUT(&p, "\x80\x02"
            "cpickle\nloads\nq\x00");
    uint64_t last = 0;
    for (int i = 0; i < 257; i++) {
        PUT(&p, "h\x00"
                "C\x0c" PAYLOAD "\x85");
        last = p.n;
        PUT(&p, "R0");
    }
    PUT(&p, "N.");
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_findings = 10000;
    stg_report *r = scan_lim(p.b, p.n, STG_PICKLE_RAW, &lim);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_NESTED), 257);
    size_t inner = 0;
    const stg_finding *lastf = NULL;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        inner += f->code == STG_PICKLE_GLOBAL_DANGEROUS && f->member != NULL;
        if (f->code == STG_PICKLE_NESTED && f->offset == last) {
            lastf = f;
        }
    }
    ck_assert_uint_eq(inner, 256);
    ck_assert_ptr_nonnull(lastf);
    ck_assert_str_eq(lastf->message, "REDUCE calls a nested loader on a payload already scanned "
                                     "(or past 256 payloads)");
    stg_report_free(r);
    free(p.b);
}
END_TEST

/* ---------------------------------------------------------------- joblib inline arrays */

/* (State strings are C strings: no NUL bytes in them.) NumpyArrayWrapper BUILD with state {dtype: numpy.dtype(typestr, False, True) [BUILD with
 * dtype_state], shape: <shape bytes>, [numpy_array_alignment_bytes: 16]}, then data, then STOP.
 * *data_at gets the offset of the data. */
static void joblib(pbuf *p, const char *typestr, const char *dtype_state, const char *shape,
                   size_t shape_len, int align, const void *data, size_t data_len, size_t *data_at)
{
    PUT(p, "\x80\x02"
           "cjoblib.numpy_pickle\nNumpyArrayWrapper\n)\x81}(U\x05"
           "dtypecnumpy\ndtype\n");
    put_str(p, typestr);
    PUT(p, "\x89\x88\x87R");
    if (dtype_state != NULL) {
        put(p, dtype_state, strlen(dtype_state));
        PUT(p, "b");
    }
    PUT(p, "U\x05shape");
    put(p, shape, shape_len);
    if (align != 0) { /* 1: 16 bytes, 2: None (no padding) */
        PUT(p, "U\x1bnumpy_array_alignment_bytes");
        if (align == 1) {
            PUT(p, "K\x10");
        } else {
            PUT(p, "N");
        }
    }
    PUT(p, "ub");
    *data_at = p->n;
    put(p, data, data_len);
    PUT(p, ".");
}

#define SHAPE(lit) (lit), (sizeof(lit) - 1)
#define DATA(lit) (lit), (sizeof(lit) - 1)

/* A numpy integer scalar as numpy pickles it: numpy.core.multiarray.scalar(dtype, bytes), the
 * dtype numpy.dtype(TYPESTR, False, COPY) with (when ORDER is not empty) the version 3 state
 * numpy writes, of that byte order. */
#define NP_SCALAR(typestr, copy, order, bytes)                                               \
    "cnumpy.core.multiarray\nscalar\ncnumpy\ndtype\nU\x02" typestr "\x89" copy "\x87R" order \
    "C" bytes "\x86R"
#define NP_STATE(o) "(K\x03U\x01" o "NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb"
#define NP_I8_2_LE NP_SCALAR("i8", "\x88", NP_STATE("<"), "\x08\x02\x00\x00\x00\x00\x00\x00\x00")

/* Arrays whose size is understood: joblib's reading skips the data (no finding there), but
 * pickle.load reads the same file and runs those bytes as opcodes: the payload is found at
 * its offset by that second reading. The same array of benign bytes is clean. */
START_TEST(joblib_arrays_skipped)
{
    static const struct {
        const char *typestr, *state, *shape;
        size_t shape_len;
        int align;
        const char *data;
        size_t data_len;
    } cases[] = {
        {"c16", NULL, SHAPE("K\x01\x85"), false, DATA("cos\nsystem\n0NNNN")},
        {"U3", NULL, SHAPE("K\x01\x85"), false, DATA("cos\nsystem\n0")},
        {"S4", NULL, SHAPE("K\x02\x85"), false, DATA("cos\nsy\n0")},
        {"f8", NULL, SHAPE("K\x01\x85"), true, DATA("\x03NNNcos\nsy\n0")},
        {"V8", "(K\x03U\x01|NNNK\x08K\x01K\x10t", SHAPE("K\x01\x85"), false, DATA("cos\nsy\n0")},

        {"m8", NULL, SHAPE("(K\x01K\x01t"), false, DATA("cos\nsy\n0")},
        {"f8", NULL, SHAPE("K\x01\x85"), 2, DATA("cos\nsy\n0")},
        /* numpy-scalar dimensions, each 2: little-endian, big-endian, one byte, beside an int */
        {"S4", NULL, SHAPE(NP_I8_2_LE "\x85"), false, DATA("cos\nsy\n0")},
        {"S4", NULL,
         SHAPE(
             NP_SCALAR("i8", "\x88", NP_STATE(">"), "\x08\x00\x00\x00\x00\x00\x00\x00\x02") "\x85"),
         false, DATA("cos\nsy\n0")},
        {"S2", NULL, SHAPE("K\x02" NP_SCALAR("u1", "\x89", "", "\x01\x02") "\x86"), false,
         DATA("cos\nsy\n0")},
        {"u1", NULL, SHAPE(NP_SCALAR("i2", "\x88", NP_STATE("<"), "\x02\x08\x00") "\x85"), false,
         DATA("cos\nsy\n0")},
        /* list shapes: APPENDS on a memoized list, APPEND, LIST; a copy from the memo of a
         * list unchanged since */
        {"S4", NULL,
         SHAPE("]q\x01(K\x01K\x02"
               "e"),
         false, DATA("cos\nsy\n0")},
        {"S2", NULL,
         SHAPE("]K\x02"
               "aK\x02"
               "a"),
         false, DATA("cos\nsy\n0")},
        {"S8", NULL, SHAPE("(K\x01l"), false, DATA("cos\nsy\n0")},
        {"S8", NULL,
         SHAPE("(K\x01lq\x01"
               "0h\x01"),
         false, DATA("cos\nsy\n0")},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pbuf p = {0};
        size_t at;
        joblib(&p, cases[i].typestr, cases[i].state, cases[i].shape, cases[i].shape_len,
               cases[i].align, cases[i].data, cases[i].data_len, &at);
        stg_report *r = scan(p.b, p.n, STG_PICKLE_RAW);
        const stg_finding *f = find_os(r, NULL);
        /* with alignment, pickle.load fails at the padding-length byte (no opcode) first */
        bool reached = cases[i].align != 1;
        ck_assert_msg((f != NULL && f->offset == at) == reached &&
                          stg_report_verdict(r) == (reached ? STG_VERDICT_UNSAFE : STG_VERDICT_OK),
                      "case %zu: %s", i, tu_describe(r));
        ck_assert_int_lt(tu_find(r, STG_PICKLE_SKIP_UNRESOLVED), 0);
        ck_assert_int_lt(tu_find(r, STG_PICKLE_MALFORMED), 0);
        stg_report_free(r);
        /* benign bytes (the padding-length byte kept): 0x00 is no opcode, pickle.load fails */
        memset(p.b + at + (cases[i].align == 1 ? 1 : 0), 0,
               cases[i].data_len - (cases[i].align == 1 ? 1 : 0));
        r = scan(p.b, p.n, STG_PICKLE_RAW);
        ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "case %zu: %s", i, tu_describe(r));
        stg_report_free(r);
        free(p.b);
    }
}
END_TEST

/* Arrays whose size is not understood: joblib's reading ends with pickle_skip_unresolved at
 * the BUILD (where joblib goes on is unknown), and pickle.load's reading finds the global
 * hidden in the bytes at its offset. */
START_TEST(joblib_arrays_not_understood_are_walked)
{
    static const char longtype[] = "f0123456789012345678901234567890123";
    static const struct {
        const char *typestr, *state, *shape;
        size_t shape_len;
        int align;
    } cases[] = {
        /* a void type without a state may carry fields */
        {"V8", NULL, SHAPE("K\x01\x85"), false},
        /* a type string longer than any numpy writes */
        {longtype, NULL, SHAPE("K\x01\x85"), false},
        /* not a type numpy's reduce writes */
        {"x8", NULL, SHAPE("K\x01\x85"), false},
        {"f3", NULL, SHAPE("K\x01\x85"), false},
        {"S1234567890123", NULL, SHAPE("K\x01\x85"), false},
        {"Sx", NULL, SHAPE("K\x01\x85"), false},
        {"S-1", NULL, SHAPE("K\x01\x85"), false},
        /* a shape of 17 dimensions is not kept */
        {"f8", NULL,
         SHAPE("(K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K"
               "\x01t"),
         false},
        /* a negative, a non-integer dimension; a shape that is not a tuple */
        {"f8", NULL, SHAPE("J\xff\xff\xff\xff\x85"), false},
        {"f8", NULL, SHAPE("N\x85"), false},
        {"f8", NULL, SHAPE("K\x01"), false},
        /* element count, then byte count, then the alignment padding overflow 64 bits */
        {"f8", NULL, SHAPE("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x8a\x01\x08\x86"), false},
        {"f8", NULL, SHAPE("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x20\x85"), false},
        {"b1", NULL, SHAPE("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7fK\x02\x86"), true},
        /* numpy-scalar dimensions not read: the dtype is native (no state, or numpy's shared
         * instance: copy false), its state's order is '=' (the loading machine's), more or
         * fewer bytes than the item size, the bytes as a str, a float type, a negative
         * value, a uint64 past int64 */
        {"f8", NULL,
         SHAPE(NP_SCALAR("i8", "\x88", "", "\x08\x02\x00\x00\x00\x00\x00\x00\x00") "\x85"), false},
        {"f8", NULL,
         SHAPE(
             NP_SCALAR("i8", "\x89", NP_STATE("<"), "\x08\x02\x00\x00\x00\x00\x00\x00\x00") "\x85"),
         false},
        {"f8", NULL,
         SHAPE(
             NP_SCALAR("i8", "\x88", NP_STATE("="), "\x08\x02\x00\x00\x00\x00\x00\x00\x00") "\x85"),
         false},
        {"f8", NULL,
         SHAPE(NP_SCALAR("i8", "\x88", NP_STATE("<"),
                         "\x09\x02\x00\x00\x00\x00\x00\x00\x00\x00") "\x85"),
         false},
        {"f8", NULL, SHAPE(NP_SCALAR("i2", "\x88", NP_STATE("<"), "\x01\x02") "\x85"), false},
        {"f8", NULL,
         SHAPE("cnumpy.core."
               "multiarray\nscalar\ncnumpy\ndtype\nU\x02u1\x89\x89\x87RU\x01\x02\x86R\x85"),
         false},
        {"f8", NULL, SHAPE(NP_SCALAR("f2", "\x88", NP_STATE("<"), "\x02\x00\x40") "\x85"), false},
        {"f8", NULL, SHAPE(NP_SCALAR("i1", "\x89", "", "\x01\xff") "\x85"), false},
        {"f8", NULL,
         SHAPE(
             NP_SCALAR("u8", "\x88", NP_STATE("<"), "\x08\x00\x00\x00\x00\x00\x00\x00\x80") "\x85"),
         false},
        /* a one-byte type whose state (used: copy) sets the object flag */
        {"f8", NULL,
         SHAPE(NP_SCALAR("u1", "\x88", "(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x01tb",
                         "\x01\x02") "\x85"),
         false},
        /* lists not held exactly: changed after its memo copy (the shape) was taken, changed
         * through the memo copy (conservative: the walk cannot tell the copies apart), an
         * element set by SETITEM, 17 items */
        {"f8", NULL,
         SHAPE("]q\x01K\x01"
               "a0h\x01"),
         false},
        {"f8", NULL,
         SHAPE("]q\x01"
               "0h\x01K\x01"
               "a"),
         false},
        {"f8", NULL,
         SHAPE("]K\x05"
               "aK\x00K\x01s"),
         false},
        {"f8", NULL,
         SHAPE("](K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K\x01K"
               "\x01"
               "e"),
         false},
        /* the dtype (memo 1) built again, big-endian, after the scalar was made of it */
        {"f8", NULL,
         SHAPE("cnumpy.core.multiarray\nscalar\ncnumpy\ndtype\nU\x02i8\x89\x88\x87Rq\x01" NP_STATE(
             "<") "C\x08\x02\x00\x00\x00\x00\x00\x00\x00\x86Rh\x01" NP_STATE(">") "0\x85"),
         false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pbuf p = {0};
        size_t at;
        joblib(&p, cases[i].typestr, cases[i].state, cases[i].shape, cases[i].shape_len,
               cases[i].align, DATA("cos\nsystem\n0"), &at);
        stg_report *r = scan(p.b, p.n, STG_PICKLE_RAW);
        const stg_finding *f = find_os(r, NULL);
        ck_assert_msg(f != NULL && f->offset == at, "case %zu: want os.system at %zu: %s", i, at,
                      tu_describe(r));
        expect_code(r, STG_PICKLE_SKIP_UNRESOLVED, STG_SEV_CRITICAL, at - 1);
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
        free(p.b);
    }
}
END_TEST

/* One scan of p on a route: flavor, the member the pickle sits in (NULL: the file itself) and
 * whether it is what joblib's ZF reader decompressed. */
static stg_report *scan_route(const pbuf *p, stg_pickle_flavor flavor, const char *member, bool zf)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_member_link link = {NULL, member, NULL};
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    ctx.depth = member != NULL ? 1 : 0;
    ctx.member = member != NULL ? &link : NULL;
    ctx.joblib_compat = zf;
    stg_check_pickles(p->b, p->n, 0, flavor, &ctx);
    stg_report_finish(r);
    free(link.path);
    return r;
}

/* The array after a NumpyArrayWrapper's BUILD is data only where joblib's NumpyUnpickler
 * reads the pickle: the file itself and the stream joblib decompresses from it. On every other
 * route (an archive member such as torch's data.pkl, a legacy torch file, a nested payload,
 * .npy object data, joblib's ZF reader) the same bytes are opcodes: the payload right after
 * the BUILD is found by the main walk at its offset, and benign array bytes there are walked
 * too (0x00 is no opcode: pickle_malformed). */
START_TEST(joblib_array_skip_by_route)
{
    static const struct {
        stg_pickle_flavor flavor;
        const char *member;
        bool zf, skipped;
    } routes[] = {
        {STG_PICKLE_RAW, NULL, false, true},
        {STG_PICKLE_RAW, "(decompressed)", false, true},
        {STG_PICKLE_RAW, "(decompressed)", true, false},
        {STG_PICKLE_RAW, "nested@4", false, false},
        {STG_PICKLE_MEMBER, "archive/data.pkl", false, false},
        {STG_PICKLE_MEMBER, NULL, false, false},
        {STG_PICKLE_TORCH_LEGACY, NULL, false, false},
        {STG_PICKLE_PLAIN, NULL, false, false},
    };
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        pbuf p = {0};
        size_t at;
        joblib(&p, "u1", NULL, SHAPE("K\x0b\x85"), false, DATA("cos\nsystem\n"), &at);
        stg_report *r = scan_route(&p, routes[i].flavor, routes[i].member, routes[i].zf);
        const stg_finding *f = find_os(r, routes[i].member);
        ck_assert_msg(f != NULL && f->offset == at, "route %zu: %s", i, tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        stg_report_free(r);
        memset(p.b + at, 0, 11);
        r = scan_route(&p, routes[i].flavor, routes[i].member, routes[i].zf);
        if (routes[i].skipped) {
            ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "route %zu: %s", i,
                          tu_describe(r));
        } else {
            ck_assert_msg(tu_find(r, STG_PICKLE_MALFORMED) >= 0, "route %zu: %s", i,
                          tu_describe(r));
            ck_assert_int_ge(stg_report_verdict(r), STG_VERDICT_INVALID);
        }
        stg_report_free(r);
        free(p.b);
    }
}
END_TEST

/* The wrapper's state as pickle.py's load_build applies it: a (dict, slot dict) pair (the
 * slot dict last), and not a dict another copy changed behind the walk's back. */
START_TEST(joblib_wrapper_states)
{
    static const char head[] = "\x80\x02"
                               "cjoblib.numpy_pickle\nNumpyArrayWrapper\n)\x81";
    static const char u1[] = "cnumpy\ndtype\nU\x02u1\x89\x88\x87R";
    static const struct {
        const char *pre, *post; /* the state around the dtype */
        size_t array;
        bool understood;
    } cases[] = {
        /* (dict, None): 4 bytes; (dict, slots) with the slot shape winning: 9 bytes */
        {"(}(U\x05"
         "dtype",
         "U\x05shapeK\x04\x85uNt", 4, true},
        {"(}(U\x05"
         "dtype",
         "U\x05shapeK\x01\x85u}U\x05shapeK\x09\x85st", 9, true},
        /* a state under a bytes key sets no attribute: no dtype */
        {"}(C\x05"
         "dtype",
         "U\x05shapeK\x04\x85u", 4, false},
        /* memoized, changed on the stack, BUILD given the memo's (stale) copy */
        {"}q\x07(U\x05"
         "dtype",
         "U\x05shapeK\x01\x85uU\x05shapeK\x08\x85s0h\x07", 8, false},
        /* the same without the stale copy: the stack's dict is exact */
        {"}q\x07(U\x05"
         "dtype",
         "U\x05shapeK\x01\x85uU\x05shapeK\x08\x85s", 8, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pbuf p = {0};
        PUT(&p, head);
        put(&p, cases[i].pre, strlen(cases[i].pre));
        PUT(&p, u1);
        put(&p, cases[i].post, strlen(cases[i].post));
        PUT(&p, "b");
        size_t at = p.n;
        for (size_t k = 0; k < cases[i].array; k++) {
            PUT(&p, "\x00");
        }
        PUT(&p, "0N.");
        stg_report *r = scan(p.b, p.n, STG_PICKLE_RAW);
        if (cases[i].understood) {
            ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "case %zu: %s", i,
                          tu_describe(r));
        } else {
            expect_code(r, STG_PICKLE_SKIP_UNRESOLVED, STG_SEV_CRITICAL, at - 1);
        }
        stg_report_free(r);
        free(p.b);
    }
}
END_TEST

/* Alignment padding announced but the data ends at the BUILD: the walk reports it. */
START_TEST(joblib_padding_past_the_end)
{
    pbuf p = {0};
    size_t at;
    joblib(&p, "f8", NULL, SHAPE("K\x01\x85"), true, "", 0, &at);
    stg_report *r = scan(p.b, p.n - 1, STG_PICKLE_RAW); /* without the STOP */
    const stg_finding *f = expect_code(r, STG_PICKLE_MALFORMED, STG_SEV_ERROR, at - 1);
    ck_assert_ptr_nonnull(strstr(f->message, "an inline array runs past the end"));
    stg_report_free(r);
    free(p.b);
}
END_TEST

/* joblib 0.10+ object arrays: the inline pickle is a fresh pickle.load with its own memo
 * (NumpyArrayWrapper.read_array). Its BINPUT 0 must not overwrite the enclosing pickle's entry
 * 0, which the outer stream reads afterwards (Debian's joblib_0.10.0_pickle_*.pkl); and an entry
 * only the inline pickle stored is not visible outside it. */
static stg_report *joblib_object_then(const char *after, size_t after_len)
{
    pbuf p = {0};
    PUT(&p, "\x80\x02]q\x00(cjoblib.numpy_pickle\nNumpyArrayWrapper\nq\x01)\x81}(U\x05"
            "dtypecnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87RU\x05shapeK\x01\x85ub");
    PUT(&p, "\x80\x02]q\x00K\x07\x61q\x05."); /* the inline pickle: [7], memo 0 and 5 */
    put(&p, after, after_len);
    stg_report *r = scan(p.b, p.n, STG_PICKLE_RAW);
    free(p.b);
    return r;
}

START_TEST(joblib_inline_pickle_memo_is_its_own)
{
    static const char reads_outer[] = "h\x00"
                                      "0h\x01"
                                      "0e.";
    stg_report *r = joblib_object_then(reads_outer, sizeof reads_outer - 1);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_WARN ||
                      stg_report_verdict(r) == STG_VERDICT_OK,
                  "%s", tu_describe(r));
    ck_assert_int_lt(tu_find(r, STG_PICKLE_MALFORMED), 0);
    stg_report_free(r);
    static const char reads_inner[] = "h\x05"
                                      "0e.";
    r = joblib_object_then(reads_inner, sizeof reads_inner - 1);
    const stg_finding *f = expect_code(r, STG_PICKLE_MALFORMED, STG_SEV_ERROR, 105);
    ck_assert_ptr_nonnull(strstr(f->message, "the memo has no value at this index"));
    stg_report_free(r);
}
END_TEST

/* The dtype states of one pickle: the last BUILD on a dtype wins, and the table keeps the 64
 * most recent dtypes (an older one is then not understood, which fails closed). */
static stg_report *dtype_table(unsigned others, const char *second_state, bool benign,
                               size_t *data_at)
{
    pbuf p = {0};
    PUT(&p, "\x80\x02"
            "cnumpy\ndtype\nq\x00U\x02V8\x89\x88\x87Rq\x01(K\x03U\x01|NNNK\x08K\x01K\x10tb0");
    for (unsigned i = 0; i < others; i++) {
        PUT(&p, "h\x00U\x02"
                "f4\x89\x88\x87R(K\x03U\x01<NNNK\x04K\x01K\x10tb0");
    }
    if (second_state != NULL) {
        PUT(&p, "h\x01");
        put(&p, second_state, strlen(second_state));
        PUT(&p, "b0");
    }
    PUT(&p, "cjoblib.numpy_pickle\nNumpyArrayWrapper\n)\x81}(U\x05"
            "dtypeh\x01U\x05shapeK\x01\x85ub");
    *data_at = p.n;
    PUT(&p, "cos\nsy\n0.");
    if (benign) {
        memset(p.b + *data_at, 0, 8);
    }
    stg_report *r = scan(p.b, p.n, STG_PICKLE_RAW);
    free(p.b);
    return r;
}

START_TEST(joblib_dtype_states)
{
    size_t at;
    stg_report *r = dtype_table(63, NULL, true, &at);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    r = dtype_table(64, NULL, true, &at);
    expect_code(r, STG_PICKLE_SKIP_UNRESOLVED, STG_SEV_CRITICAL, at - 1);
    stg_report_free(r);
    r = dtype_table(64, NULL, false, &at);
    const stg_finding *f = find_os(r, NULL);
    ck_assert_msg(f != NULL && f->offset == at, "%s", tu_describe(r));
    stg_report_free(r);
    /* A second BUILD on the same dtype (through the memo) with 4 bytes: the last state wins,
     * and an element size other than the type string's (V8) is not understood. */
    r = dtype_table(1, "(K\x03U\x01|NNNK\x04K\x01K\x10t", true, &at);
    expect_code(r, STG_PICKLE_SKIP_UNRESOLVED, STG_SEV_CRITICAL, at - 1);
    stg_report_free(r);
    /* The same state with NPY_ITEM_HASOBJECT in its flags (state[7]): numpy's dtype.hasobject
     * is then true and joblib pickle.load-s the array bytes, so they are walked as a pickle
     * and its os.system is found (near miss: flags 0x10 above). */
    pbuf p = {0};
    joblib(&p, "V8", "(K\x03U\x01|NNNK\x08K\x01K\x01t", SHAPE("K\x01\x85"), false,
           DATA("cos\nsystem\n(S'x'\ntR."), &at);
    r = scan(p.b, p.n, STG_PICKLE_RAW);
    f = find_os(r, NULL);
    ck_assert_msg(f != NULL && f->offset == at, "%s", tu_describe(r));
    stg_report_free(r);
    free(p.b);
    /* ... or a state that is not understood (element size not an integer). */
    r = dtype_table(1, "(K\x03U\x01|NNNNK\x01K\x10t", false, &at);
    f = find_os(r, NULL);
    ck_assert_msg(f != NULL && f->offset == at, "%s", tu_describe(r));
    stg_report_free(r);
}
END_TEST

/* ---------------------------------------------------------------- legacy torch storages */

typedef struct storage {
    const char *key; /* NULL: a 5000-byte key */
    const char *cls; /* GLOBAL line pair of the storage class */
    uint64_t count;  /* declared element count */
} storage;

/* A legacy torch file: magic, protocol, sys_info, data pickle with one persistent id per storage
 * of `decl`, the key list `keys`, then one record per key (8-byte count, count x 4 bytes).
 * *storages_at gets the offset of the first record. */
static void legacy(pbuf *p, const storage *decl, size_t ndecl, const storage *keys, size_t nkeys,
                   size_t *storages_at)
{
    static char longkey[5001];
    memset(longkey, 'k', 5000);
    PUT(p, "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.");
    PUT(p, "\x80\x02M\xe9\x03.");
    PUT(p, "\x80\x02}.");
    PUT(p, "\x80\x02(");
    for (size_t i = 0; i < ndecl; i++) {
        PUT(p, "(U\x07storagec");
        put(p, decl[i].cls, strlen(decl[i].cls));
        put_str(p, decl[i].key != NULL ? decl[i].key : longkey);
        PUT(p, "U\x03"
               "cpuK\x01tQ");
    }
    PUT(p, "l.");
    PUT(p, "\x80\x02](");
    for (size_t i = 0; i < nkeys; i++) {
        put_str(p, keys[i].key != NULL ? keys[i].key : longkey);
    }
    PUT(p, "e.");
    *storages_at = p->n;
    for (size_t i = 0; i < nkeys; i++) {
        put_le(p, keys[i].count, 8);
        for (uint64_t k = 0; k < keys[i].count; k++) {
            PUT(p, "\x00\x00\x80\x3f");
        }
    }
}

#define FLOAT_STORAGE "torch\nFloatStorage\n"

START_TEST(legacy_many_storages)
{
    enum { N = 200 };
    static char names[N][8];
    storage st[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "%d", 1000 + i);
        st[i].key = names[i];
        st[i].cls = FLOAT_STORAGE;
        st[i].count = (uint64_t)(i % 3);
    }
    st[7].key = ""; /* an empty key is a key */
    pbuf p = {0};
    size_t at;
    legacy(&p, st, N, st, N, &at);
    size_t end = p.n;
    PUT(&p, PAYLOAD); /* a pickle after the storages is scanned */
    stg_report *r = scan(p.b, p.n, STG_PICKLE_TORCH_LEGACY);
    ck_assert_msg(tu_find(r, STG_PICKLE_MALFORMED) < 0, "%s", tu_describe(r));
    const stg_finding *f = find_os(r, NULL);
    ck_assert_msg(f != NULL && f->offset == end, "%s", tu_describe(r));
    stg_report_free(r);
    free(p.b);
}
END_TEST

START_TEST(legacy_bad_storage_lists)
{
    const storage a = {"0", FLOAT_STORAGE, 2}, b = {"1", FLOAT_STORAGE, 1};
    const storage not_storage = {"0", "collections\nOrderedDict\n", 2};
    const storage long_key = {NULL, FLOAT_STORAGE, 1};
    pbuf p = {0};
    size_t at;
    /* A key listed twice: the second record. */
    storage twice[] = {a, b, a};
    legacy(&p, twice, 2, twice, 3, &at);
    stg_report *r = scan(p.b, p.n, STG_PICKLE_TORCH_LEGACY);
    const stg_finding *f = expect_code(r, STG_PICKLE_MALFORMED, STG_SEV_ERROR, at + 8 + 8 + 8 + 4);
    ck_assert_ptr_nonnull(strstr(f->message, "a storage key is listed twice"));
    stg_report_free(r);
    free(p.b);
    /* A persistent id whose class is no storage class: its key has no element size. */
    p = (pbuf){0};
    legacy(&p, &not_storage, 1, &not_storage, 1, &at);
    r = scan(p.b, p.n, STG_PICKLE_TORCH_LEGACY);
    f = expect_code(r, STG_PICKLE_MALFORMED, STG_SEV_ERROR, at);
    ck_assert_ptr_nonnull(strstr(f->message, "did not declare"));
    stg_report_free(r);
    free(p.b);
    /* Keys longer than any torch writes are not looked at: the list names an unknown one. */
    p = (pbuf){0};
    legacy(&p, &long_key, 1, &long_key, 1, &at);
    r = scan(p.b, p.n, STG_PICKLE_TORCH_LEGACY);
    f = expect_code(r, STG_PICKLE_MALFORMED, STG_SEV_ERROR, at);
    ck_assert_ptr_nonnull(strstr(f->message, "did not declare"));
    stg_report_free(r);
    free(p.b);
    /* A key list naming a key the data pickle never declared. */
    p = (pbuf){0};
    legacy(&p, &a, 1, &b, 1, &at);
    r = scan(p.b, p.n, STG_PICKLE_TORCH_LEGACY);
    expect_code(r, STG_PICKLE_MALFORMED, STG_SEV_ERROR, at);
    stg_report_free(r);
    free(p.b);
}
END_TEST

/* ---------------------------------------------------------------- distinct globals */

/* 65,536 distinct globals are listed; past that each is still classified and reported, and one
 * limit_exceeded (max_findings), at the first global not listed, says the list stopped. */
START_TEST(distinct_globals_cap)
{
    enum { CAP = 65536 };
    pbuf p = {0};
    size_t last = 0;
    for (unsigned i = 0; i <= CAP + 1; i++) {
        char g[32];
        int n = snprintf(g, sizeof g, "cm\n%u\n0", i);
        if (i == CAP) {
            last = p.n;
        }
        put(&p, g, (size_t)n);
    }
    PUT(&p, "N.");
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_findings = 2 * CAP;
    stg_report *r = scan_lim(p.b, p.n, STG_PICKLE_RAW, &lim);
    ck_assert_uint_eq(stg_report_global_count(r), CAP);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_GLOBAL_UNKNOWN), CAP + 2);
    const stg_finding *f = expect_code(r, STG_LIMIT_EXCEEDED, STG_SEV_ERROR, last);
    ck_assert_str_eq(f->limit, "max_findings");
    ck_assert_uint_eq(tu_count(r, STG_LIMIT_EXCEEDED), 1);
    stg_report_free(r);
    free(p.b);
}
END_TEST

/* ---------------------------------------------------------------- NULL and .npy */

START_TEST(no_data)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_pickles(NULL, 10, 500, STG_PICKLE_RAW, &ctx);
    stg_report_finish(r);
    const stg_finding *f = expect_code(r, STG_PICKLE_MALFORMED, STG_SEV_ERROR, 500);
    ck_assert_ptr_nonnull(strstr(f->message, "no data"));
    stg_report_free(r);
    r = stg_report_new(&lim);
    ctx.report = r;
    stg_check_npy(NULL, 10, 500, &ctx);
    stg_report_finish(r);
    expect_code(r, STG_CONTAINER_MALFORMED, STG_SEV_ERROR, 500);
    stg_report_free(r);
    ck_assert(!stg_torch_legacy_magic(NULL, 10));
    ck_assert(!stg_pickle_sniff(NULL, 10, NULL, NULL));
}
END_TEST

static stg_report *npy(const char *header, size_t data_len)
{
    pbuf p = {0};
    PUT(&p, "\x93NUMPY\x01\x00");
    put_le(&p, strlen(header), 2);
    put(&p, header, strlen(header));
    for (size_t i = 0; i < data_len; i++) {
        PUT(&p, "\x00");
    }
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_npy(p.b, p.n, 0, &ctx);
    stg_report_finish(r);
    free(p.b);
    return r;
}

START_TEST(npy_headers)
{
    static const struct {
        const char *header;
        uint64_t offset;
        const char *why;
    } bad[] = {
        {"{'fortran_order': False, 'shape': (1,), }", 10,
         "the header lacks one of descr, fortran_order, shape"},
        {"{'descr': '<f8', 'fortran_order': False, }", 10,
         "the header lacks one of descr, fortran_order, shape"},
        {"{'descr': '<f8', 'shape': (1,), }", 10,
         "the header lacks one of descr, fortran_order, shape"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 10,
         "a shape dimension is negative or the element count passes 2^64"},
        {"{'descr': [('a', '<f8')]], 'fortran_order': False, 'shape': (1,), }", 10 + 24,
         "unexpected byte in the literal"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stg_report *r = npy(bad[i].header, 8);
        const stg_finding *f = expect_code(r, STG_CONTAINER_MALFORMED, STG_SEV_ERROR,
                                           bad[i].offset);
        char want[160];
        snprintf(want, sizeof want, "numpy .npy header: %s", bad[i].why);
        ck_assert_str_eq(f->message, want);
        stg_report_free(r);
    }
    /* Sizes: U counts 4 bytes a character; a structured type is the sum of its fields. */
    stg_report *r = npy("{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }", 24);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    r = npy("{'descr': [('a', '<f8'), ('b', '|S3')], 'fortran_order': False, 'shape': (3,), }", 33);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    r = npy("{'descr': [('a', '<f8'), ('b', '|S3')], 'fortran_order': False, 'shape': (3,), }", 32);
    expect_code(r, STG_CONTAINER_MALFORMED, STG_SEV_ERROR, 10 + 80);
    stg_report_free(r);
    /* More bytes than 64 bits can count: the data is shorter than the header says. */
    static const char huge[] =
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }";
    r = npy(huge, 8);
    const stg_finding *f = expect_code(r, STG_CONTAINER_MALFORMED, STG_SEV_ERROR,
                                       10 + sizeof huge - 1);
    ck_assert_str_eq(f->message,
                     "numpy .npy header: the array data is shorter than the header says");
    stg_report_free(r);
    /* Inside a member, past max_findings: the first is kept with its member, the next counted. */
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_findings = 1;
    r = stg_report_new(&lim);
    static char member_path[] = "arch/x.npy";
    stg_member_link link = {NULL, member_path, member_path};
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    ctx.depth = 1;
    ctx.member = &link;
    ctx.member_offset = 40;
    stg_check_npy((const uint8_t *)"\x93NUMPX", 6, 0, &ctx);
    stg_check_npy((const uint8_t *)"\x93NUMPX", 6, 0, &ctx);
    stg_report_finish(r);
    ck_assert_uint_eq(tu_count(r, STG_CONTAINER_MALFORMED), 1);
    const stg_finding *m = stg_report_at(r, (size_t)tu_find(r, STG_CONTAINER_MALFORMED));
    ck_assert_str_eq(m->member, "arch/x.npy");
    ck_assert_uint_eq(m->member_offset, 40);
    ck_assert_uint_ge(stg_report_truncated(r), 1);
    stg_report_free(r);
}
END_TEST

/* ---------------------------------------------------------------- joblib side files */

/* GLOBAL cls, built by NEWOBJ without arguments or (reduce) by REDUCE with ('args.npy',), then
 * BUILD with the state bytes `state` (pushing one value). */
static stg_report *wrapper(const char *cls, bool reduce, const char *state, size_t state_len)
{
    pbuf p = {0};
    PUT(&p, "\x80\x02");
    put(&p, "c", 1);
    put(&p, cls, strlen(cls));
    if (reduce) {
        put_str(&p, "args.npy");
        PUT(&p, "\x85R");
    } else {
        PUT(&p, ")\x81");
    }
    put(&p, state, state_len);
    PUT(&p, "b.");
    stg_report *r = scan(p.b, p.n, STG_PICKLE_RAW);
    free(p.b);
    return r;
}

/* A dict state {'filename': name} (BINUNICODE); the name's bytes start 20 bytes in. */
static size_t dict_state(char *out, const char *name, size_t n)
{
    size_t k = 0;
    memcpy(out + k, "}(X\x08\0\0\0filenameX", 16);
    k += 16;
    out[k++] = (char)n;
    out[k++] = 0;
    out[k++] = 0;
    out[k++] = 0;
    memcpy(out + k, name, n);
    k += n;
    out[k++] = 'u';
    return k;
}

#define NDW "joblib.numpy_pickle\nNDArrayWrapper\n"
/* offset of the first state byte: PROTO (2) + "c" + class line + ")\x81" (2) */
#define STATE_AT(cls) (3 + sizeof(cls) - 1 + 2)

START_TEST(joblib_side_files)
{
    static const struct {
        const char *name;
        size_t len;
        bool escapes;
    } names[] = {
        {"a.npy", 5, false},   {"sub/a..b.npy", 12, false},
        {"..npy", 5, false},   {"/etc/x.npy", 10, true},
        {"../x.npy", 8, true}, {"sub/../../x", 11, true},
        {"", 0, true},         {"a\0b.npy", 7, true},
        {"sub/..", 6, true},
    };
    char st[64];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = dict_state(st, names[i].name, names[i].len);
        stg_report *r = wrapper(NDW, false, st, n);
        uint64_t at = STATE_AT(NDW) + 20;
        if (names[i].escapes) {
            expect_code(r, STG_JOBLIB_SIDE_FILE_ESCAPE, STG_SEV_ERROR, at);
            ck_assert_uint_eq(r->side_count, 0);
        } else {
            ck_assert_msg(tu_find(r, STG_JOBLIB_SIDE_FILE_ESCAPE) < 0, "%s", names[i].name);
            ck_assert_uint_eq(r->side_count, 1);
            ck_assert_uint_eq(r->sides[0].name_len, names[i].len);
            ck_assert(memcmp(r->sides[0].name, names[i].name, names[i].len) == 0);
            ck_assert_uint_eq(r->sides[0].offset, at);
            ck_assert(!r->sides[0].zfile);
            ck_assert_ptr_null(r->sides[0].member);
        }
        stg_report_free(r);
    }
    /* Inside an archive member no loader calls read(): not recorded; inside a decompressed
     * stream (joblib.load decompresses) it is, with its member */
    {
        size_t sn = dict_state(st, "a.npy", 5);
        pbuf p = {0};
        PUT(&p, "\x80\x02"
                "c" NDW ")\x81");
        put(&p, st, sn);
        PUT(&p, "b.");
        static const char *const members[] = {"arch/x.pkl", "(decompressed)", "nested@4"};
        for (size_t m = 0; m < 3; m++) {
            stg_limits lim;
            stg_limits_default(&lim);
            stg_report *mr = stg_report_new(&lim);
            stg_member_link link = {NULL, members[m], NULL};
            stg_check_ctx ctx;
            stg_check_ctx_init(&ctx, &lim, mr);
            ctx.depth = 1;
            ctx.member = &link;
            stg_check_pickles(p.b, p.n, 0, STG_PICKLE_RAW, &ctx);
            ck_assert_uint_eq(mr->side_count, (m == 1 ? 1u : 0u));
            if (m == 1) {
                ck_assert_str_eq(mr->sides[0].member, "(decompressed)");
            }
            stg_report_free(mr);
            free(link.path);
        }
        free(p.b);
    }
    /* ZNDArrayWrapper, from either module: a ZF side file */
    size_t n = dict_state(st, "z.npy.z", 7);
    stg_report *r = wrapper("joblib.numpy_pickle_compat\nZNDArrayWrapper\n", false, st, n);
    ck_assert_uint_eq(r->side_count, 1);
    ck_assert(r->sides[0].zfile);
    stg_report_free(r);
    /* A NumpyArrayWrapper (joblib >= 0.10) names no side file: near miss */
    r = wrapper("joblib.numpy_pickle\nNumpyArrayWrapper\n", false, st, n);
    ck_assert_uint_eq(r->side_count, 0);
    stg_report_free(r);
    /* (dict, slots) state: the slot state is applied last and wins */
    char pair[64];
    size_t k = 0;
    pair[k++] = '}';
    k += dict_state(pair + k, "s.npy", 5);
    pair[k++] = '\x86';
    r = wrapper(NDW, false, pair, k);
    ck_assert_uint_eq(r->side_count, 1);
    ck_assert_str_eq(r->sides[0].name, "s.npy");
    stg_report_free(r);
    /* REDUCE runs __init__(filename, ...): an empty state keeps the argument */
    r = wrapper(NDW, true, "}", 1);
    ck_assert_uint_eq(r->side_count, 1);
    ck_assert_str_eq(r->sides[0].name, "args.npy");
    stg_report_free(r);
    /* NEWOBJ without arguments, no filename in the state: read() raises, nothing is opened */
    r = wrapper(NDW, false, "}", 1);
    ck_assert_uint_eq(r->side_count, 0);
    ck_assert_int_lt(tu_find(r, STG_JOBLIB_SIDE_FILE_UNRESOLVED), 0);
    stg_report_free(r);
    /* a state the walk cannot read (a global): the name is unknown */
    r = wrapper(NDW, false, "cnumpy\nndarray\n", 15);
    expect_code(r, STG_JOBLIB_SIDE_FILE_UNRESOLVED, STG_SEV_ERROR, STATE_AT(NDW) + 15);
    ck_assert_uint_eq(r->side_count, 0);
    stg_report_free(r);
}
END_TEST

/* ---------------------------------------------------------------- getattr on enum classes */

#define GA "cbuiltins\ngetattr\n"
#define IS "ctransformers.trainer_utils\nIntervalStrategy\n"
#define NO "X\x02\0\0\0NO"

/* The class getattr ended up with, and whether a dangerous finding names it. */
static stg_global_class getattr_class(const char *pk, size_t n, bool *dangerous)
{
    stg_report *r = scan((const uint8_t *)pk, n, STG_PICKLE_RAW);
    stg_global_class k = STG_GLOBAL_ALLOWED;
    bool found = false;
    for (size_t i = 0; i < stg_report_global_count(r); i++) {
        const stg_global *g = stg_report_global_at(r, i);
        if (strcmp(g->name, "getattr") == 0) {
            k = g->klass;
            found = true;
        }
    }
    ck_assert_msg(found, "no getattr global: %s", tu_describe(r));
    *dangerous = false;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        *dangerous = *dangerous || (f->code == STG_PICKLE_GLOBAL_DANGEROUS && f->name != NULL &&
                                    strcmp(f->name, "getattr") == 0);
    }
    stg_report_free(r);
    return k;
}

START_TEST(getattr_enum_members)
{
    static const struct {
        const char *what, *pk;
        size_t len;
        bool benign;
    } cases[] = {
#define C(what, lit, benign) {what, lit, sizeof(lit) - 1, benign}
        C("member by name", "\x80\x02" GA IS NO "\x86R.", true),
        C("py2 module",
          "\x80\x02"
          "c__builtin__\ngetattr\n" IS NO "\x86R.",
          true),
        C("memo reuse",
          "\x80\x02" GA "q\x00" IS NO "\x86R"
          "h\x00" IS "X\x05\0\0\0EPOCH\x86R\x86.",
          true),
        C("stack global",
          "\x80\x04\x8c\x08"
          "builtins\x8c\x07getattr\x93\x8c\x1atransformers.trainer_utils"
          "\x8c\x10IntervalStrategy\x93\x8c\x02NO\x86R.",
          true),
        C("digits and _", "\x80\x02" GA IS "X\x06\0\0\0EVERY2\x86R.", true),
        /* near misses: stay dangerous */
        C("not an enum",
          "\x80\x02" GA "ctransformers.training_args\nTrainingArguments\n" NO "\x86R.", false),
        C("unreviewed class", "\x80\x02" GA "cenum\nEnum\n" NO "\x86R.", false),
        C("dunder", "\x80\x02" GA IS "X\x09\0\0\0__class__\x86R.", false),
        C("sunder", "\x80\x02" GA IS "X\x09\0\0\0_missing_\x86R.", false),
        C("method", "\x80\x02" GA IS "X\x03\0\0\0mro\x86R.", false),
        C("leading _", "\x80\x02" GA IS "X\x03\0\0\0_NO\x86R.", false),
        C("empty", "\x80\x02" GA IS "X\0\0\0\0\x86R.", false),
        C("bytes name", "\x80\x03" GA IS "C\x02NO\x86R.", false),
        C("default", "\x80\x02" GA IS NO "N\x87R.", false),
        C("a copy not called",
          "\x80\x02" GA "q\x00" IS NO "\x86R"
          "h\x00\x86.",
          false),
        C("dup not called", "\x80\x02" GA "2" IS NO "\x86R\x86.", false),
        C("newobj", "\x80\x02" GA IS NO "\x86\x81.", false),
        C("never called", "\x80\x02" GA ".", false),
#undef C
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool dangerous;
        stg_global_class k = getattr_class(cases[i].pk, cases[i].len, &dangerous);
        ck_assert_msg(k == (cases[i].benign ? STG_GLOBAL_BENIGN : STG_GLOBAL_DANGEROUS) &&
                          dangerous == !cases[i].benign,
                      "%s: class %d, dangerous %d", cases[i].what, (int)k, (int)dangerous);
    }
    /* the dangerous finding stays at the first getattr */
    static const char mro[] = "\x80\x02" GA IS "X\x03\0\0\0mro\x86R.";
    stg_report *r = scan((const uint8_t *)mro, sizeof mro - 1, STG_PICKLE_RAW);
    expect_code(r, STG_PICKLE_GLOBAL_DANGEROUS, STG_SEV_CRITICAL, 2);
    stg_report_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pickle_scan");
    TCase *tc = tcase_create("scan");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, nested_arguments_that_are_not_literals);
    tcase_add_test(tc, nested_literals_are_scanned);
    tcase_add_test(tc, nested_call_opcodes);
    tcase_add_test(tc, nested_payload_cap);
    tcase_add_test(tc, joblib_arrays_skipped);
    tcase_add_test(tc, joblib_arrays_not_understood_are_walked);
    tcase_add_test(tc, joblib_padding_past_the_end);
    tcase_add_test(tc, joblib_dtype_states);
    tcase_add_test(tc, joblib_array_skip_by_route);
    tcase_add_test(tc, joblib_wrapper_states);
    tcase_add_test(tc, joblib_inline_pickle_memo_is_its_own);
    tcase_add_test(tc, legacy_many_storages);
    tcase_add_test(tc, legacy_bad_storage_lists);
    tcase_add_test(tc, distinct_globals_cap);
    tcase_add_test(tc, no_data);
    tcase_add_test(tc, npy_headers);
    tcase_add_test(tc, joblib_side_files);
    tcase_add_test(tc, getattr_enum_members);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
