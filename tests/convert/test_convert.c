/* The converter (convert/): the restricted evaluator on hand-made pickles (values, refusals,
 * limits at limit and limit + 1, offsets), and stg_convert_buffer end to end on hand-made legacy
 * torch files: each finding code of 100-104 with one input that triggers it and a near miss,
 * row-major copies of views, and the output's exact bytes. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "convert/eval.h"
#include "convert/input.h"
#include "parser/inflate.h"
#include "testutil.h"
#include "zipbuild.h"

/* ---------------------------------------------------------------- pickle building */

static void put(tu_buf *b, const char *s)
{
    tu_buf_put(b, s, strlen(s));
}

static void put_le(tu_buf *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        tu_buf_put(b, &c, 1);
    }
}

static void p_str(tu_buf *b, const char *s)
{
    put(b, "X");
    put_le(b, strlen(s), 4);
    put(b, s);
}

#define PUTB(b, lit) tu_buf_put((b), (lit), sizeof(lit) - 1)

static void p_int(tu_buf *b, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        put(b, "J");
        put_le(b, (uint64_t)v, 4);
    } else {
        PUTB(b, "\x8a\x08"); /* LONG1 of 8 bytes */
        put_le(b, (uint64_t)v, 8);
    }
}

static void p_global(tu_buf *b, const char *m, const char *n)
{
    put(b, "c");
    put(b, m);
    put(b, "\n");
    put(b, n);
    put(b, "\n");
}

static void p_ints(tu_buf *b, const uint64_t *v, int n)
{
    put(b, "(");
    for (int i = 0; i < n; i++) {
        p_int(b, (int64_t)v[i]);
    }
    put(b, "t");
}

/* _rebuild_tensor_v2(('storage', <module>.<cls>, key, 'cpu', numel), offset, shape, stride,
 * False, OrderedDict()) */
static void p_tensor_m(tu_buf *b, const char *module, const char *cls, const char *key,
                       uint64_t numel, uint64_t off, const uint64_t *shape, const uint64_t *stride,
                       int rank)
{
    p_global(b, "torch._utils", "_rebuild_tensor_v2");
    put(b, "((");
    p_str(b, "storage");
    p_global(b, module, cls);
    p_str(b, key);
    p_str(b, "cpu");
    p_int(b, (int64_t)numel);
    put(b, "tQ");
    p_int(b, (int64_t)off);
    p_ints(b, shape, rank);
    p_ints(b, stride, rank);
    put(b, "\x89");
    p_global(b, "collections", "OrderedDict");
    put(b, ")RtR");
}

static void p_tensor(tu_buf *b, const char *cls, const char *key, uint64_t numel, uint64_t off,
                     const uint64_t *shape, const uint64_t *stride, int rank)
{
    p_tensor_m(b, "torch", cls, key, numel, off, shape, stride, rank);
}

/* A legacy torch file: magic, protocol 1001, sys_info, the data pickle, the key list, then
 * storages of 4-byte elements (count, bytes). */
static uint8_t *legacy_file(const tu_buf *data, const char *const *keys, const uint32_t *counts,
                            int nkeys, size_t *len)
{
    tu_buf b = {0};
    tu_buf_put(&b, "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
    tu_buf_put(&b, "\x80\x02M\xe9\x03.", 6);
    put(&b, "\x80\x02}(");
    p_str(&b, "protocol_version");
    put(&b, "M\xe9\x03");
    p_str(&b, "little_endian");
    put(&b, "\x88u.");
    tu_buf_put(&b, data->p, data->n);
    put(&b, "\x80\x02](");
    for (int i = 0; i < nkeys; i++) {
        p_str(&b, keys[i]);
    }
    put(&b, "e.");
    for (int i = 0; i < nkeys; i++) {
        put_le(&b, counts[i], 8);
        for (uint32_t j = 0; j < counts[i]; j++) {
            uint8_t f[4];
            tu_store_f32_le(f, (float)(i * 100 + (int)j));
            tu_buf_put(&b, f, 4);
        }
    }
    *len = b.n;
    return b.p;
}

/* ---------------------------------------------------------------- the evaluator */

static stg_cv_eval ev;

static bool eval(const tu_buf *b, stg_cv **root, const stg_cv_limits *lim)
{
    stg_cv_limits def;
    stg_cv_limits_from(NULL, &def);
    stg_cv_init(&ev, lim != NULL ? lim : &def);
    size_t end;
    return stg_cv_run(&ev, b->p, b->n, 0, root, &end);
}

START_TEST(test_eval_values)
{
    /* {'a': [1, -2, 3.5, None, True], 'b': ('x', b'yz'), 'c': <memo GET of the list>} */
    tu_buf b = {0};
    PUTB(&b, "\x80\x02}q\x00(");
    p_str(&b, "a");
    PUTB(&b, "]q\x01(K\x01J\xfe\xff\xff\xffG\x40\x0c\x00\x00\x00\x00\x00\x00N\x88"
             "e");
    p_str(&b, "b");
    p_str(&b, "x");
    put(&b, "C\x02yz\x86");
    p_str(&b, "c");
    put(&b, "h\x01u.");
    stg_cv *root;
    ck_assert_msg(eval(&b, &root, NULL), "%s", ev.err.what);
    ck_assert_int_eq(root->kind, STG_CV_DICT);
    ck_assert_uint_eq(root->n, 3);
    stg_cv *a = stg_cv_dict_get(root, "a");
    ck_assert_int_eq(a->kind, STG_CV_LIST);
    ck_assert_uint_eq(a->n, 5);
    ck_assert_int_eq(a->u.items[1]->u.i, -2);
    ck_assert(a->u.items[2]->u.f == 3.5);
    ck_assert_int_eq(a->u.items[3]->kind, STG_CV_NONE);
    ck_assert_int_eq(a->u.items[4]->kind, STG_CV_BOOL);
    stg_cv *t = stg_cv_dict_get(root, "b");
    ck_assert_int_eq(t->kind, STG_CV_TUPLE);
    ck_assert(stg_cv_is_str(t->u.items[0], "x"));
    ck_assert_int_eq(t->u.items[1]->kind, STG_CV_BYTES);
    ck_assert_ptr_eq(stg_cv_dict_get(root, "c"), a); /* the memo shares the value */
    stg_cv_free(&ev);
    free(b.p);
}
END_TEST

/* INT and LONG, the text integers of protocols 0 and 1 (torch.save(pickle_protocol=1) writes
 * "I00\n" for requires_grad=False): bools, plain decimals, a LONG past 64 bits kept as a big
 * integer; what strtol and int(s, 0) would read otherwise (octal, spaces, '+') is refused. */
static const struct {
    const char *op;
    int kind; /* -1: refused */
    int64_t value;
} text_ints[] = {
    {"I00\n", STG_CV_BOOL, 0},
    {"I01\n", STG_CV_BOOL, 1},
    {"I1\n", STG_CV_INT, 1},
    {"I0\n", STG_CV_INT, 0},
    {"I-17\n", STG_CV_INT, -17},
    {"I9223372036854775807\n", STG_CV_INT, INT64_MAX},
    {"I-9223372036854775808\n", STG_CV_INT, INT64_MIN},
    {"L5L\n", STG_CV_INT, 5},
    {"L-5\n", STG_CV_INT, -5},
    {"L119547037146038801333356L\n", STG_CV_BYTES, 0}, /* the legacy magic number */
    {"I9223372036854775808\n", -1, 0},
    {"I007\n", -1, 0}, /* strtol reads octal 7, int('007', 0) fails */
    {"I 7\n", -1, 0},
    {"I+7\n", -1, 0},
    {"I0x7\n", -1, 0},
    {"I\n", -1, 0},
    {"L01L\n", -1, 0},
    {"I-\n", -1, 0},
};

START_TEST(test_eval_text_ints)
{
    tu_buf b = {0};
    put(&b, "\x80\x01");
    put(&b, text_ints[_i].op);
    put(&b, ".");
    stg_cv *root;
    bool ok = eval(&b, &root, NULL);
    if (text_ints[_i].kind < 0) {
        ck_assert_msg(!ok, "%s read", text_ints[_i].op);
        ck_assert_int_eq(ev.err.code, STG_CONVERT_UNSUPPORTED);
        ck_assert_uint_eq(ev.err.offset, 2);
    } else {
        ck_assert_msg(ok, "%s: %s", text_ints[_i].op, ev.err.what);
        ck_assert_int_eq(root->kind, text_ints[_i].kind);
        if (root->kind != STG_CV_BYTES) {
            ck_assert_int_eq(root->u.i, text_ints[_i].value);
        }
    }
    stg_cv_free(&ev);
    free(b.p);
}
END_TEST

START_TEST(test_eval_tensor)
{
    uint64_t shape[2] = {2, 3}, stride[2] = {1, 2};
    tu_buf b = {0};
    put(&b, "\x80\x02}(");
    p_str(&b, "w");
    p_tensor(&b, "FloatStorage", "0", 6, 0, shape, stride, 2);
    put(&b, "u.");
    stg_cv *root;
    ck_assert_msg(eval(&b, &root, NULL), "%s", ev.err.what);
    stg_cv *w = stg_cv_dict_get(root, "w");
    ck_assert_int_eq(w->kind, STG_CV_TENSOR);
    ck_assert_uint_eq(w->u.t->rank, 2);
    ck_assert_uint_eq(w->u.t->stride[1], 2);
    ck_assert_int_eq(w->u.t->storage->dtype, STG_DTYPE_F32);
    ck_assert_uint_eq(ev.nstorages, 1);
    ck_assert_ptr_eq(stg_cv_find_storage(&ev, (const uint8_t *)"0", 1), w->u.t->storage);
    stg_cv_free(&ev);
    free(b.p);
}
END_TEST

/* Refusals: the code, and the offset of the opcode that refused. */
enum { R_GLOBAL, R_REDUCE_LIST, R_BUILD_TENSOR, R_TEXT_OPCODE, R_GET, R_PAST, R_OVERFLOW, R_NR };

START_TEST(test_eval_refusals)
{
    uint64_t shape[1] = {4}, stride[1] = {1}, big[1] = {UINT64_C(1) << 62}, bigs[1] = {4};
    tu_buf b = {0};
    put(&b, "\x80\x02");
    size_t at = b.n;
    stg_code want = STG_CONVERT_UNSUPPORTED;
    switch (_i) {
    case R_GLOBAL: p_global(&b, "os", "system"); break;
    case R_REDUCE_LIST:
        put(&b, "])R");
        at += 2;
        break;
    case R_BUILD_TENSOR:
        p_tensor(&b, "FloatStorage", "0", 4, 0, shape, stride, 1);
        at = b.n;
        put(&b, "}b");
        at += 1;
        break;
    case R_TEXT_OPCODE: put(&b, "F1.0\n"); break; /* FLOAT: torch.save never writes it */
    case R_GET:
        put(&b, "h\x07");
        want = STG_PICKLE_MALFORMED;
        break;
    case R_PAST: /* offset 1 + 4 elements > numel 4 */
        p_tensor(&b, "FloatStorage", "0", 4, 1, shape, stride, 1);
        at = b.n - 1;
        want = STG_CONVERT_TENSOR_INVALID;
        break;
    case R_OVERFLOW:
        p_tensor(&b, "FloatStorage", "0", 4, 0, big, bigs, 1);
        at = b.n - 1;
        want = STG_CONVERT_TENSOR_INVALID;
        break;
    default: break;
    }
    put(&b, ".");
    stg_cv *root;
    ck_assert(!eval(&b, &root, NULL));
    ck_assert_int_eq(ev.err.code, want);
    ck_assert_uint_eq(ev.err.offset, at);
    if (_i == R_GLOBAL) {
        ck_assert_uint_eq(ev.err.module_len, 2);
        ck_assert_int_eq(memcmp(ev.err.module, "os", 2), 0);
    }
    stg_cv_free(&ev);
    free(b.p);
}
END_TEST

/* A view that ends exactly at the storage's end is fine (near miss of R_PAST). */
START_TEST(test_eval_view_fits)
{
    uint64_t shape[1] = {3}, stride[1] = {1};
    tu_buf b = {0};
    put(&b, "\x80\x02");
    p_tensor(&b, "FloatStorage", "0", 4, 1, shape, stride, 1);
    put(&b, ".");
    stg_cv *root;
    ck_assert_msg(eval(&b, &root, NULL), "%s", ev.err.what);
    ck_assert_int_eq(root->kind, STG_CV_TENSOR);
    stg_cv_free(&ev);
    free(b.p);
}
END_TEST

/* max_stack at the limit and one past it: N values (no marks) need max_stack N. */
START_TEST(test_eval_stack_limit)
{
    tu_buf b = {0};
    put(&b, "\x80\x02(NNNNt.");
    stg_cv_limits lim;
    stg_cv_limits_from(NULL, &lim);
    lim.max_stack = 5; /* a mark and four values */
    stg_cv *root;
    ck_assert_msg(eval(&b, &root, &lim), "%s", ev.err.what);
    stg_cv_free(&ev);
    lim.max_stack = 4;
    ck_assert(!eval(&b, &root, &lim));
    ck_assert_int_eq(ev.err.code, STG_LIMIT_EXCEEDED);
    ck_assert_str_eq(ev.err.limit, "max_pickle_stack");
    ck_assert_uint_eq(ev.err.offset, 6);
    stg_cv_free(&ev);
    free(b.p);
}
END_TEST

START_TEST(test_eval_memo_limit)
{
    tu_buf b = {0};
    PUTB(&b, "\x80\x02Nq\x00q\x01q\x02.");
    stg_cv_limits lim;
    stg_cv_limits_from(NULL, &lim);
    lim.max_memo = 3;
    stg_cv *root;
    ck_assert_msg(eval(&b, &root, &lim), "%s", ev.err.what);
    stg_cv_free(&ev);
    lim.max_memo = 2;
    ck_assert(!eval(&b, &root, &lim));
    ck_assert_str_eq(ev.err.limit, "max_pickle_memo");
    ck_assert_uint_eq(ev.err.offset, 7);
    stg_cv_free(&ev);
    free(b.p);
}
END_TEST

/* ---------------------------------------------------------------- end to end */

static stg_status convert(const uint8_t *in, size_t len, bool drop, void **out, size_t *out_len,
                          stg_report **rep)
{
    stg_convert_options o;
    stg_convert_options_default(&o);
    o.drop_aliases = drop;
    o.sha256 = true;
    return stg_convert_buffer(in, len, &o, out, out_len, rep);
}

/* {'w': a 2x3 view of storage '0' (6 floats) transposed from 3x2} */
static uint8_t *transposed_file(size_t *len)
{
    static const char *keys[] = {"0"};
    static const uint32_t counts[] = {6};
    uint64_t shape[2] = {2, 3}, stride[2] = {1, 2};
    tu_buf d = {0};
    put(&d, "\x80\x02}(");
    p_str(&d, "w");
    p_tensor(&d, "FloatStorage", "0", 6, 0, shape, stride, 2);
    put(&d, "u.");
    uint8_t *f = legacy_file(&d, keys, counts, 1, len);
    free(d.p);
    return f;
}

START_TEST(test_buffer_transpose_bytes)
{
    size_t len, out_len;
    uint8_t *in = transposed_file(&len);
    void *out;
    stg_report *rep;
    ck_assert_int_eq(convert(in, len, false, &out, &out_len, &rep), STG_OK);
    static const char header[] = "{\"__metadata__\":{\"format\":\"pt\"},\"w\":{\"dtype\":\"F32\","
                                 "\"shape\":[2,3],\"data_offsets\":[0,24]}}";
    size_t hl = sizeof header - 1, padded = (hl + 7) / 8 * 8;
    ck_assert_uint_eq(out_len, 8 + padded + 24);
    const uint8_t *o = out;
    ck_assert_uint_eq(o[0], padded);
    ck_assert_int_eq(memcmp(o + 8, header, hl), 0);
    for (size_t i = hl; i < padded; i++) {
        ck_assert_uint_eq(o[8 + i], ' ');
    }
    /* storage 0..5, element (i, j) at i + 2j: rows [0 2 4] [1 3 5] */
    static const float rows[6] = {0, 2, 4, 1, 3, 5};
    uint8_t want[24];
    for (size_t i = 0; i < 6; i++) {
        tu_store_f32_le(want + 4 * i, rows[i]);
    }
    ck_assert_int_eq(memcmp(o + 8 + padded, want, sizeof want), 0);
    ck_assert_ptr_nonnull(stg_report_sha256(rep));
    stg_convert_free(out);
    stg_report_free(rep);
    free(in);
}
END_TEST

/* One trigger and one near miss per code. */
enum { E_UNSUPPORTED, E_TENSOR, E_LEAF, E_INPUT, E_ALIAS, E_NR };

static uint8_t *case_file(int which, bool miss, size_t *len, bool *drop)
{
    static const char *keys[] = {"0"};
    static const uint32_t counts[] = {6};
    uint64_t shape[1] = {3}, stride[1] = {1};
    tu_buf d = {0};
    *drop = false;
    if (which == E_INPUT) {
        if (!miss) {
            uint8_t *t = malloc(16);
            memcpy(t, "just some text\n", 16);
            *len = 15;
            return t;
        }
        return transposed_file(len);
    }
    put(&d, "\x80\x02}(");
    p_str(&d, "w");
    p_tensor(&d, "FloatStorage", "0", 6, 0, shape, stride, 1);
    switch (which) {
    case E_UNSUPPORTED: /* a dtype global the scan allows and the converter does not rebuild */
        p_str(&d, "dt");
        if (miss) {
            p_int(&d, 1);
        } else {
            p_global(&d, "torch", "float32");
        }
        break;
    case E_TENSOR: /* offset 4 + 3 elements: past the 6 of the storage; 3 + 3 fits */
        p_str(&d, "v");
        p_tensor(&d, "FloatStorage", "0", 6, miss ? 3 : 4, shape, stride, 1);
        break;
    case E_LEAF:
        if (!miss) {
            p_str(&d, "epoch");
            p_int(&d, 3);
        }
        break;
    case E_ALIAS: /* the same view under a second name; the near miss starts one later */
        *drop = true;
        p_str(&d, "w2");
        p_tensor(&d, "FloatStorage", "0", 6, miss ? 1 : 0, shape, stride, 1);
        break;
    default: break;
    }
    put(&d, "u.");
    uint8_t *f = legacy_file(&d, keys, counts, 1, len);
    free(d.p);
    return f;
}

START_TEST(test_buffer_codes)
{
    static const stg_code codes[E_NR] = {STG_CONVERT_UNSUPPORTED, STG_CONVERT_TENSOR_INVALID,
                                         STG_CONVERT_LEAF_SKIPPED, STG_CONVERT_INPUT_UNKNOWN,
                                         STG_CONVERT_ALIAS_DROPPED};
    for (int miss = 0; miss < 2; miss++) {
        size_t len, out_len;
        bool drop;
        uint8_t *in = case_file(_i, miss, &len, &drop);
        void *out;
        stg_report *rep;
        stg_status st = convert(in, len, drop, &out, &out_len, &rep);
        bool refuses = codes[_i] != STG_CONVERT_LEAF_SKIPPED &&
                       codes[_i] != STG_CONVERT_ALIAS_DROPPED;
        ck_assert_msg((tu_find(rep, codes[_i]) >= 0) == !miss, "case %d miss %d: %s", _i, miss,
                      tu_describe(rep));
        ck_assert_int_eq(st, (!miss && refuses) ? STG_E_INVALID : STG_OK);
        ck_assert((out == NULL) == (st != STG_OK));
        if (st == STG_OK) {
            stg_report *v = tu_validate(out, out_len, STG_PROFILE_STRICT);
            ck_assert_int_eq(stg_report_verdict(v), STG_VERDICT_OK);
            stg_report_free(v);
        }
        if (_i == E_ALIAS && !miss) {
            ck_assert_ptr_nonnull(memmem(out, out_len, "\"w2\":\"w\"", 8)); /* in __metadata__ */
        }
        stg_convert_free(out);
        stg_report_free(rep);
        free(in);
    }
}
END_TEST

/* The scan runs first: a malicious global never reaches the evaluator. */
START_TEST(test_buffer_scan_refuses)
{
    tu_buf d = {0};
    put(&d, "\x80\x02");
    p_global(&d, "os", "system");
    p_str(&d, "echo");
    put(&d, "\x85R.");
    static const char *keys[] = {"0"};
    static const uint32_t counts[] = {1};
    size_t len, out_len;
    uint8_t *in = legacy_file(&d, keys, counts, 0, &len);
    void *out;
    stg_report *rep;
    ck_assert_int_eq(convert(in, len, false, &out, &out_len, &rep), STG_E_INVALID);
    ck_assert_ptr_null(out);
    ck_assert_int_ge(tu_find(rep, STG_PICKLE_GLOBAL_DANGEROUS), 0);
    ck_assert_int_lt(tu_find(rep, STG_CONVERT_UNSUPPORTED), 0); /* the scan said no first */
    stg_report_free(rep);
    free(in);
    free(d.p);
}
END_TEST

/* A .npy of big-endian int16 in Fortran order: one tensor "array", little-endian, row-major. */
START_TEST(test_buffer_npy)
{
    tu_buf b = {0};
    static const char dict[] = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
    size_t hl = 10 + sizeof dict - 1 + 1, pad = (64 - hl % 64) % 64;
    PUTB(&b, "\x93NUMPY\x01\x00");
    put_le(&b, sizeof dict - 1 + pad + 1, 2);
    put(&b, dict);
    for (size_t i = 0; i < pad; i++) {
        put(&b, " ");
    }
    put(&b, "\n");
    /* column-major [[0 1 2] [3 4 5]]: 0 3 1 4 2 5, each big-endian */
    static const int order[6] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++) {
        uint8_t be[2] = {0, (uint8_t)order[i]};
        tu_buf_put(&b, be, 2);
    }
    size_t out_len;
    void *out;
    stg_report *rep;
    ck_assert_int_eq(convert(b.p, b.n, false, &out, &out_len, &rep), STG_OK);
    static const char header[] = "{\"__metadata__\":{\"format\":\"pt\"},\"array\":{\"dtype\":"
                                 "\"I16\",\"shape\":[2,3],\"data_offsets\":[0,12]}}";
    const uint8_t *o = out;
    size_t n = o[0];
    ck_assert_int_eq(memcmp(o + 8, header, sizeof header - 1), 0);
    uint8_t want[12]; /* 0..5 as little-endian int16 */
    for (size_t i = 0; i < 6; i++) {
        tu_store_le(want + 2 * i, i, 2);
    }
    ck_assert_uint_eq(out_len, 8 + n + 12);
    ck_assert_int_eq(memcmp(o + 8 + n, want, 12), 0);
    stg_convert_free(out);
    stg_report_free(rep);
    free(b.p);
}
END_TEST

/* corpus/regress/convert-duplicate-name (fuzz_convert): a name twice in the state_dict; the
 * refusal read the name after the plan was freed. */
START_TEST(test_regress_duplicate_name)
{
    size_t len, out_len;
    uint8_t *in = tu_read_file(tu_src("corpus/regress/convert-duplicate-name"), &len);
    ck_assert_ptr_nonnull(in);
    void *out;
    stg_report *rep;
    ck_assert_int_eq(convert(in, len, false, &out, &out_len, &rep), STG_E_INVALID);
    long i = tu_find(rep, STG_CONVERT_UNSUPPORTED);
    ck_assert_int_ge(i, 0);
    const stg_finding *f = stg_report_at(rep, (size_t)i);
    ck_assert_uint_eq(f->tensor_len, 3);
    ck_assert_int_eq(memcmp(f->tensor, "f16", 3), 0);
    stg_report_free(rep);
    free(in);
}
END_TEST

/* torch.storage.UntypedStorage in a persistent id, read as torch 1.13's zip loader reads it:
 * TypedStorage(wrap_storage=..., dtype=torch.uint8) of numel bytes, so the tensor is uint8
 * (torch.UntypedStorage is the same class). A view one byte past the byte count is refused;
 * in a legacy file (whose loader fails on the class) it is refused. */
START_TEST(test_eval_untyped_storage)
{
    static const char *const modules[2] = {"torch.storage", "torch"};
    uint64_t fits[2] = {2, 3}, past[2] = {2, 4}, stride[2] = {3, 1};
    for (int m = 0; m < 2; m++) {
        for (int c = 0; c < 3; c++) { /* 0: fits, 1: one byte past, 2: legacy */
            tu_buf b = {0};
            put(&b, "\x80\x02");
            p_tensor_m(&b, modules[m], "UntypedStorage", "0", 6, 0, c == 1 ? past : fits, stride,
                       2);
            put(&b, ".");
            stg_cv_limits def;
            stg_cv_limits_from(NULL, &def);
            stg_cv_init(&ev, &def);
            ev.legacy = c == 2;
            stg_cv *root;
            size_t end;
            bool ok = stg_cv_run(&ev, b.p, b.n, 0, &root, &end);
            ck_assert_msg(ok == (c == 0), "module %s case %d: %s", modules[m], c, ev.err.what);
            if (c == 0) {
                ck_assert_int_eq(root->kind, STG_CV_TENSOR);
                ck_assert_int_eq(root->u.t->storage->dtype, STG_DTYPE_U8);
                ck_assert_uint_eq(root->u.t->storage->elsize, 1);
                ck_assert_uint_eq(root->u.t->storage->numel, 6);
            } else {
                ck_assert_int_eq(ev.err.code,
                                 c == 1 ? STG_CONVERT_TENSOR_INVALID : STG_CONVERT_UNSUPPORTED);
            }
            stg_cv_free(&ev);
            free(b.p);
        }
    }
}
END_TEST

/* A torch zip whose one storage (2 MiB of zeros, an UntypedStorage) is deflated at ~1023:1
 * (tests/data/containers/zeros-2m.deflate). */
#define ZEROS (2u << 20)

static uint8_t *deflated_zip(size_t *len, size_t storage_len)
{
    size_t dlen;
    uint8_t *deflated = tu_read_file(tu_src("tests/data/containers/zeros-2m.deflate"), &dlen);
    ck_assert_ptr_nonnull(deflated);
    uint64_t shape[1] = {ZEROS}, stride[1] = {1};
    tu_buf d = {0};
    put(&d, "\x80\x02}(");
    p_str(&d, "w");
    p_tensor_m(&d, "torch.storage", "UntypedStorage", "0", storage_len, 0, shape, stride, 1);
    put(&d, "u.");
    zb_entry e[2] = {zb_file("archive/data.pkl", d.p, d.n),
                     zb_file("archive/data/0", deflated, dlen)};
    e[1].method = 8;
    e[1].uncomp_size = ZEROS;
    uint8_t *z = zb_build(e, 2, NULL, len, NULL);
    free(deflated);
    free(d.p);
    return z;
}

static const stg_finding *with_limit(const stg_report *r, stg_code code, const char *limit)
{
    long i = tu_find(r, code);
    ck_assert_msg(i >= 0, "no %d: %s", (int)code, tu_describe(r));
    const stg_finding *f = stg_report_at(r, (size_t)i);
    ck_assert_ptr_nonnull(f->limit);
    ck_assert_str_eq(f->limit, limit);
    return f;
}

/* The converter's own caps, without the scan in front: the ratio (a cap of 1000 against
 * ~1023:1, near miss 1100) and the inflated total (2 MiB - 1, near miss 2 MiB). */
START_TEST(test_input_inflate_caps)
{
    if (!tu_inflate_built()) {
        return;
    }
    size_t len;
    uint8_t *z = deflated_zip(&len, ZEROS);
    static const struct {
        uint32_t ratio;
        uint64_t bytes;
        const char *limit; /* NULL: converts */
    } cases[] = {{1000, (uint64_t)1 << 32, "max_inflate_ratio"},
                 {1100, (uint64_t)1 << 32, NULL},
                 {0, ZEROS - 1, "max_inflate_bytes"},
                 {0, ZEROS, NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_limits lim;
        stg_limits_default(&lim);
        lim.max_inflate_ratio = cases[i].ratio;
        lim.max_inflate_bytes = cases[i].bytes;
        stg_cv_limits cl;
        stg_cv_limits_from(&lim, &cl);
        stg_cv_init(&ev, &cl);
        stg_report *rep = stg_report_new(&lim);
        stg_cv *root = NULL;
        bool ok = stg_cv_read_input(z, len, &ev, &root, rep);
        ck_assert_msg(ok == (cases[i].limit == NULL), "case %zu: %s", i, tu_describe(rep));
        if (ok) {
            stg_cv *w = stg_cv_dict_get(root, "w");
            ck_assert_ptr_nonnull(w);
            ck_assert_uint_eq(w->u.t->storage->data_len, ZEROS);
            ck_assert_uint_eq(ev.inflated, ZEROS);
        } else {
            const stg_finding *f = with_limit(rep, STG_ZIP_BOMB, cases[i].limit);
            ck_assert(f->has_offset);
        }
        stg_report_free(rep);
        stg_cv_free(&ev);
    }
    free(z);
}
END_TEST

/* End to end: the scan names the ratio cap first (default 1000:1); with 1100:1 the deflated
 * UntypedStorage converts to a U8 tensor of 2 MiB zeros. A storage member shorter than the
 * UntypedStorage's byte count is refused; exactly as long converts. */
/* Names torch's reader (a C string in a 512-byte buffer) or zipfile (cut at a NUL) read as
 * another name are refused before anything is read: 512 bytes and a NUL are, 511 bytes is not
 * (the archive then fails later, as no torch archive or .npz). */
START_TEST(test_input_names_cut)
{
    static const struct {
        size_t len;
        bool nul;
        bool refused;
    } cases[] = {{512, false, true}, {511, false, false}, {20, true, true}, {20, false, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[600];
        memset(name, 'a', sizeof name);
        memcpy(name, "archive/", 8);
        name[cases[i].len] = '\0';
        if (cases[i].nul) {
            name[12] = '\0';
        }
        zb_entry e = zb_file("x", "x", 1);
        e.name = name;
        zb_entry ents[2] = {zb_file("archive/version", "3\n", 2), e};
        size_t len;
        uint64_t offs[2];
        uint8_t *z = cases[i].nul ? NULL : zb_build(ents, 2, NULL, &len, offs);
        if (cases[i].nul) {
            /* zb_build takes C strings: build with 'Z' and put the NUL in both headers */
            name[12] = 'Z';
            z = zb_build(ents, 2, NULL, &len, offs);
            size_t n = 0;
            for (size_t k = 0; k + 20 <= len; k++) {
                if (memcmp(z + k, name, 20) == 0) {
                    z[k + 12] = '\0';
                    n++;
                }
            }
            ck_assert_uint_eq(n, 2); /* the local and the central name */
        }
        stg_cv_limits cl;
        stg_cv_limits_from(NULL, &cl);
        stg_cv_init(&ev, &cl);
        stg_limits lim;
        stg_limits_default(&lim);
        stg_report *rep = stg_report_new(&lim);
        stg_cv *root = NULL;
        ck_assert(!stg_cv_read_input(z, len, &ev, &root, rep));
        long at = tu_find(rep, STG_CONVERT_UNSUPPORTED);
        const stg_finding *f = at >= 0 ? stg_report_at(rep, (size_t)at) : NULL;
        bool said = f != NULL && strstr(f->message, "NUL byte or passes 511") != NULL;
        ck_assert_msg(said == cases[i].refused, "case %zu: %s", i, tu_describe(rep));
        stg_report_free(rep);
        stg_cv_free(&ev);
        free(z);
    }
}
END_TEST

START_TEST(test_buffer_deflated_untyped)
{
    if (!tu_inflate_built()) {
        return;
    }
    for (int c = 0; c < 3; c++) { /* 0: default ratio, 1: 1100, 2: 1100 and one byte short */
        size_t len, out_len;
        uint8_t *z = deflated_zip(&len, c == 2 ? ZEROS + 1 : ZEROS);
        stg_convert_options o;
        stg_convert_options_default(&o);
        if (c > 0) {
            o.scan.limits.max_inflate_ratio = 1100;
        }
        void *out;
        stg_report *rep;
        stg_status st = stg_convert_buffer(z, len, &o, &out, &out_len, &rep);
        ck_assert_int_eq(st, c == 1 ? STG_OK : STG_E_INVALID);
        ck_assert((out == NULL) == (st != STG_OK));
        if (c == 0) {
            with_limit(rep, STG_ZIP_BOMB, "max_inflate_ratio");
        } else if (c == 2) {
            ck_assert_int_ge(tu_find(rep, STG_CONVERT_TENSOR_INVALID), 0);
        } else {
            static const char header[] = "{\"__metadata__\":{\"format\":\"pt\"},\"w\":{\"dtype\":"
                                         "\"U8\",\"shape\":[2097152],\"data_offsets\":[0,"
                                         "2097152]}}";
            const uint8_t *p = out;
            size_t n = p[0] | (size_t)p[1] << 8;
            ck_assert_uint_eq(out_len, 8 + n + ZEROS);
            ck_assert_int_eq(memcmp(p + 8, header, sizeof header - 1), 0);
            size_t nonzero = 0;
            for (size_t i = 0; i < ZEROS; i++) {
                nonzero += p[8 + n + i] != 0;
            }
            ck_assert_uint_eq(nonzero, 0);
        }
        stg_convert_free(out);
        stg_report_free(rep);
        free(z);
    }
}
END_TEST

START_TEST(test_buffer_bad_args)
{
    void *out = (void *)1;
    size_t n = 1;
    stg_report *rep = (stg_report *)1;
    ck_assert_int_eq(stg_convert_buffer(NULL, 3, NULL, &out, &n, &rep), STG_E_BAD_ARG);
    ck_assert_ptr_null(out);
    ck_assert_ptr_null(rep);
    stg_convert_options o;
    stg_convert_options_default(&o);
    o.struct_version = 0;
    ck_assert_int_eq(stg_convert_buffer("x", 1, &o, &out, &n, &rep), STG_E_STRUCT_VERSION);
    ck_assert_int_eq(stg_convert("a", "b", &o, &rep), STG_E_STRUCT_VERSION);
}
END_TEST

static Suite *convert_suite(void)
{
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_eval_values);
    tcase_add_test(tc, test_eval_tensor);
    tcase_add_loop_test(tc, test_eval_text_ints, 0, (int)(sizeof text_ints / sizeof text_ints[0]));
    tcase_add_loop_test(tc, test_eval_refusals, 0, R_NR);
    tcase_add_test(tc, test_eval_view_fits);
    tcase_add_test(tc, test_eval_stack_limit);
    tcase_add_test(tc, test_eval_memo_limit);
    tcase_add_test(tc, test_buffer_transpose_bytes);
    tcase_add_loop_test(tc, test_buffer_codes, 0, E_NR);
    tcase_add_test(tc, test_buffer_scan_refuses);
    tcase_add_test(tc, test_buffer_npy);
    tcase_add_test(tc, test_regress_duplicate_name);
    tcase_add_test(tc, test_eval_untyped_storage);
    tcase_add_test(tc, test_input_inflate_caps);
    tcase_add_test(tc, test_buffer_deflated_untyped);
    tcase_add_test(tc, test_input_names_cut);
    tcase_add_test(tc, test_buffer_bad_args);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(convert_suite());
}
