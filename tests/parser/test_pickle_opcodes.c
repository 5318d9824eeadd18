/* The pickle walker (parser/pickle) opcode by opcode: how each argument is decoded (integers,
 * strings and escapes as CPython reads them), every truncated argument and malformed form at
 * the opcode's offset with its message, FRAME edge cases, inline pickle levels and memo ids,
 * the memory budget, hooks that are NULL, accessors given values that are not the walk's, and a
 * 4 GiB argument that is flagged huge instead of decoded. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "parser/pickle.h"
#include "testutil.h"
#include "validator/pickle_scan.h"

#define B(lit) (const uint8_t *)(lit), (sizeof(lit) - 1)

static const char TRUNC[] = "the argument runs past the end of the data";
static const char STRTRUNC[] = "a string or bytes argument runs past the end of the data";

/* ---------------------------------------------------------------- recording hooks */

#define REC_MAX 16

typedef struct rec {
    unsigned globals, calls, persids, appends, unresolved, mutations, builds, strings;
    unsigned frames;
    uint64_t frame_off[REC_MAX], unresolved_off[REC_MAX], string_off[REC_MAX];
    uint64_t string_len[REC_MAX];
    char global[REC_MAX][64];
    /* first argument of the last call, as the accessors give it */
    stg_pv arg0;
    bool have_arg0;
    char arg0_bytes[64];
    size_t arg0_len;
    bool arg0_decoded;
    /* BUILD: what to ask for, and what dict_get found in the state */
    stg_pickle_action build_action;
    uint64_t build_skip;
    bool dict_a_found;
    int64_t dict_a;
} rec;

static uint32_t rec_global(void *ctx, const uint8_t *m, size_t ml, const uint8_t *n, size_t nl,
                           uint64_t off)
{
    rec *r = ctx;
    (void)off;
    if (r->globals < REC_MAX) {
        snprintf(r->global[r->globals], sizeof r->global[0], "%.*s.%.*s", (int)ml, (const char *)m,
                 (int)nl, (const char *)n);
    }
    r->globals++;
    return 0;
}

static void rec_call(void *ctx, stg_pickle_walker *w, uint8_t op, const stg_pv *c, const stg_pv *a,
                     uint64_t off)
{
    rec *r = ctx;
    (void)op, (void)c, (void)off;
    r->calls++;
    r->have_arg0 = stg_pickle_tuple_at(w, a, 0, &r->arg0);
    const uint8_t *p;
    size_t n;
    r->arg0_decoded = r->have_arg0 && stg_pickle_bytes(w, &r->arg0, &p, &n) &&
                      n <= sizeof r->arg0_bytes;
    if (r->arg0_decoded) {
        memcpy(r->arg0_bytes, p, n);
        r->arg0_len = n;
    }
}

static void rec_persid(void *ctx, stg_pickle_walker *w, const stg_pv *pid, uint64_t off)
{
    (void)w, (void)pid, (void)off;
    ((rec *)ctx)->persids++;
}

static void rec_append(void *ctx, stg_pickle_walker *w, const stg_pv *item)
{
    (void)w, (void)item;
    ((rec *)ctx)->appends++;
}

static void rec_unresolved(void *ctx, uint64_t off, const char *why)
{
    rec *r = ctx;
    (void)why;
    if (r->unresolved < REC_MAX) {
        r->unresolved_off[r->unresolved] = off;
    }
    r->unresolved++;
}

static void rec_mutate(void *ctx, uint8_t op, const stg_pv *t, uint64_t off)
{
    (void)op, (void)t, (void)off;
    ((rec *)ctx)->mutations++;
}

static void rec_frame(void *ctx, uint64_t off)
{
    rec *r = ctx;
    if (r->frames < REC_MAX) {
        r->frame_off[r->frames] = off;
    }
    r->frames++;
}

static void rec_string(void *ctx, uint64_t off, uint64_t len)
{
    rec *r = ctx;
    if (r->strings < REC_MAX) {
        r->string_off[r->strings] = off;
        r->string_len[r->strings] = len;
    }
    r->strings++;
}

static stg_pickle_action rec_build(void *ctx, stg_pickle_walker *w, const stg_pv *target,
                                   const stg_pv *state, uint64_t after, uint64_t *skip)
{
    rec *r = ctx;
    stg_pv a;
    (void)target, (void)after;
    r->builds++;
    r->dict_a_found = stg_pickle_dict_get(w, state, "a", &a) && stg_pickle_int(&a, &r->dict_a);
    *skip = r->build_skip;
    return r->build_action;
}

static stg_pickle_hooks all_hooks(rec *r)
{
    stg_pickle_hooks h = {0};
    h.ctx = r;
    h.global = rec_global;
    h.unresolved = rec_unresolved;
    h.call = rec_call;
    h.mutate_global = rec_mutate;
    h.build = rec_build;
    h.persid = rec_persid;
    h.append = rec_append;
    h.frame_divergence = rec_frame;
    h.string_limit = rec_string;
    return h;
}

static const stg_pickle_limits small_limits = {1000, 1000, 1 << 20, 4, 0};

/* One walk with every hook; the walker's error fields are copied to *err_w when asked. */
static stg_pickle_status walk_lim(const uint8_t *buf, size_t len, rec *r, size_t *end,
                                  const stg_pickle_limits *pl, stg_pickle_walker *err_w)
{
    stg_pickle_action act = r->build_action;
    uint64_t skip = r->build_skip;
    memset(r, 0, sizeof *r);
    r->build_action = act;
    r->build_skip = skip;
    stg_pickle_hooks h = all_hooks(r);
    stg_pickle_walker w;
    stg_pickle_init(&w, pl, &h);
    *end = 0;
    stg_pickle_status st = stg_pickle_walk(&w, buf, len, 0, end);
    if (err_w != NULL) {
        memset(err_w, 0, sizeof *err_w);
        err_w->err_offset = w.err_offset;
        err_w->err_msg = w.err_msg;
        err_w->err_limit = w.err_limit;
        err_w->err_value = w.err_value;
    }
    stg_pickle_free(&w);
    return st;
}

static stg_pickle_status walk(const uint8_t *buf, size_t len, rec *r, size_t *end)
{
    return walk_lim(buf, len, r, end, &small_limits, NULL);
}

/* ---------------------------------------------------------------- opcode names */

static const struct {
    uint8_t op;
    const char *name;
} names[] = {
    {'(', "MARK"},
    {'.', "STOP"},
    {'0', "POP"},
    {'1', "POP_MARK"},
    {'2', "DUP"},
    {'F', "FLOAT"},
    {'I', "INT"},
    {'J', "BININT"},
    {'K', "BININT1"},
    {'L', "LONG"},
    {'M', "BININT2"},
    {'N', "NONE"},
    {'P', "PERSID"},
    {'Q', "BINPERSID"},
    {'R', "REDUCE"},
    {'S', "STRING"},
    {'T', "BINSTRING"},
    {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"},
    {'X', "BINUNICODE"},
    {'a', "APPEND"},
    {'b', "BUILD"},
    {'c', "GLOBAL"},
    {'d', "DICT"},
    {'}', "EMPTY_DICT"},
    {'e', "APPENDS"},
    {'g', "GET"},
    {'h', "BINGET"},
    {'i', "INST"},
    {'j', "LONG_BINGET"},
    {'l', "LIST"},
    {']', "EMPTY_LIST"},
    {'o', "OBJ"},
    {'p', "PUT"},
    {'q', "BINPUT"},
    {'r', "LONG_BINPUT"},
    {'s', "SETITEM"},
    {'t', "TUPLE"},
    {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"},
    {'G', "BINFLOAT"},
    {0x80, "PROTO"},
    {0x81, "NEWOBJ"},
    {0x82, "EXT1"},
    {0x83, "EXT2"},
    {0x84, "EXT4"},
    {0x85, "TUPLE1"},
    {0x86, "TUPLE2"},
    {0x87, "TUPLE3"},
    {0x88, "NEWTRUE"},
    {0x89, "NEWFALSE"},
    {0x8a, "LONG1"},
    {0x8b, "LONG4"},
    {'B', "BINBYTES"},
    {'C', "SHORT_BINBYTES"},
    {0x8c, "SHORT_BINUNICODE"},
    {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"},
    {0x8f, "EMPTY_SET"},
    {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},
    {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"},
    {0x94, "MEMOIZE"},
    {0x95, "FRAME"},
    {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
};

/* Every opcode of protocols 0-5 has its pickletools name; every other byte is "?" and the
 * walker refuses it as an unknown opcode (the name table and the walker agree). */
START_TEST(opcode_names_match_the_walker)
{
    ck_assert_uint_eq(sizeof names / sizeof names[0], 68);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ck_assert_str_eq(stg_pickle_opcode_name(names[i].op), names[i].name);
    }
    unsigned unknown = 0;
    for (unsigned b = 0; b < 256; b++) {
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            known |= names[i].op == b;
        }
        uint8_t buf[2] = {(uint8_t)b, '.'};
        rec r;
        memset(&r, 0, sizeof r);
        size_t end;
        stg_pickle_walker e;
        stg_pickle_status st = walk_lim(buf, 2, &r, &end, &small_limits, &e);
        bool refused = st == STG_PW_MALFORMED && e.err_offset == 0 &&
                       strcmp(e.err_msg, "an unknown opcode") == 0;
        ck_assert_msg(refused == !known, "byte 0x%02x: known %d, refused %d", b, known, refused);
        if (!known) {
            ck_assert_str_eq(stg_pickle_opcode_name((uint8_t)b), "?");
            unknown++;
        }
    }
    ck_assert_uint_eq(unknown, 256 - 68);
}
END_TEST

/* ---------------------------------------------------------------- malformed forms */

static const struct {
    const char *name;
    const char *bytes;
    size_t len;
    uint64_t offset;
    const char *msg;
} bad[] = {
    {"FLOAT no newline", "F1.5", 4, 0, TRUNC},
    {"INT no newline", "I12", 3, 0, TRUNC},
    {"LONG no newline", "L12", 3, 0, TRUNC},
    {"BININT 3 of 4", "J\x01\x02\x03", 4, 0, TRUNC},
    {"BININT1 none", "K", 1, 0, TRUNC},
    {"BININT2 1 of 2", "M\x01", 2, 0, TRUNC},
    {"LONG1 no length", "\x8a", 1, 0, TRUNC},
    {"LONG1 short", "\x8a\x02\x01", 3, 0, TRUNC},
    {"LONG4 3 of 4", "\x8b\x01\x00\x00", 4, 0, TRUNC},
    {"LONG4 short", "\x8b\x05\x00\x00\x00\x01", 6, 0, TRUNC},
    {"BINFLOAT 1 of 8", "NG\x00", 3, 1, TRUNC},
    {"PERSID no newline", "Pabc", 4, 0, TRUNC},
    {"STRING no newline", "S'abc'", 6, 0, TRUNC},
    {"UNICODE no newline", "Vabc", 4, 0, TRUNC},
    {"BINSTRING 2 of 4", "T\x01\x00", 3, 0, TRUNC},
    {"BINSTRING short",
     "T\x05\x00\x00\x00"
     "ab",
     7, 0, STRTRUNC},
    {"SHORT_BINSTRING no length", "U", 1, 0, TRUNC},
    {"SHORT_BINSTRING short",
     "U\x05"
     "ab",
     4, 0, STRTRUNC},
    {"SHORT_BINBYTES short",
     "NC\x03"
     "a",
     4, 1, STRTRUNC},
    {"SHORT_BINUNICODE no length", "\x8c", 1, 0, TRUNC},
    {"BINUNICODE 3 of 4", "X\x01\x00\x00", 4, 0, TRUNC},
    {"BINBYTES 1 of 4", "B\x01", 2, 0, TRUNC},
    {"BINBYTES short",
     "B\x03\x00\x00\x00"
     "a",
     6, 0, STRTRUNC},
    {"BINUNICODE8 7 of 8", "\x8d\x01\x00\x00\x00\x00\x00\x00", 8, 0, TRUNC},
    {"BYTEARRAY8 short",
     "\x96\x09\x00\x00\x00\x00\x00\x00\x00"
     "ab",
     11, 0, STRTRUNC},
    {"BINBYTES8 over SSIZE_MAX", "\x8e\x00\x00\x00\x00\x00\x00\x00\x80", 9, 0,
     "a byte count exceeds the largest Python size"},
    {"GET no newline", "g1", 2, 0, TRUNC},
    {"BINGET none", "h", 1, 0, TRUNC},
    {"LONG_BINGET 3 of 4", "j\x00\x00\x00", 4, 0, TRUNC},
    {"PUT no newline", "Np1", 3, 1, TRUNC},
    {"BINPUT none", "Nq", 2, 1, TRUNC},
    {"LONG_BINPUT 2 of 4", "Nr\x00\x00", 4, 1, TRUNC},
    {"PUT on an empty stack", "p1\n.", 4, 0,
     "the stack has no value there (underflow or below a MARK)"},
    {"MEMOIZE above a MARK only", "N(\x94.", 4, 2,
     "the stack has no value there (underflow or below a MARK)"},
    {"GET of a missing index", "Np1\ng2\n.", 8, 4, "the memo has no value at this index"},
    {"LONG_BINGET of a missing index", "Nr\x00\x00\x00\x10j\x00\x00\x00\x11.", 12, 6,
     "the memo has no value at this index"},
    {"PUT index with a sign", "Np+\n.", 5, 1, "a PUT index is not a memo index"},
    {"GLOBAL one and a half lines", "cos\nsys", 7, 0,
     "a GLOBAL/INST argument is not two complete lines"},
    {"INST one line", "(ios\n", 5, 1, "a GLOBAL/INST argument is not two complete lines"},
    {"INST name not UTF-8", "(ios\nsy\xc0\xafstem\n.", 15, 1,
     "a GLOBAL/INST module or name is not valid UTF-8"},
    {"GLOBAL encoded surrogate", "cos\n\xed\xa0\x80\n.", 9, 0,
     "a GLOBAL/INST module or name is not valid UTF-8"},
    {"EXT1 none", "\x82", 1, 0, TRUNC},
    {"EXT2 1 of 2", "\x83\x01", 2, 0, TRUNC},
    {"EXT4 3 of 4", "\x84\x01\x00\x00", 4, 0, TRUNC},
    {"EXT2 code 0", "\x83\x00\x00.", 4, 0, "an EXT code is not positive"},
    {"EXT4 negative", "\x84\xff\xff\xff\xff.", 6, 0, "an EXT code is not positive"},
    {"PROTO none", "\x80", 1, 0, TRUNC},
    {"FRAME 4 of 8", "\x95\x01\x00\x00\x00", 5, 0, TRUNC},
    {"FRAME over SSIZE_MAX", "\x95\x00\x00\x00\x00\x00\x00\x00\x80N.", 11, 0,
     "a FRAME length exceeds the largest Python size"},
    {"FRAME past the end", "\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00N.", 13, 2,
     "a FRAME runs past the end of the data"},
    {"FLOAT empty", "F\n.", 3, 0, "a FLOAT argument is not a number"},
    {"FLOAT with a bang", "F1e5!\n.", 7, 0, "a FLOAT argument is not a number"},
    {"INT double underscore", "I1__0\n.", 7, 0, "an INT/LONG argument is not a number"},
    {"INT leading underscore", "I_1\n.", 5, 0, "an INT/LONG argument is not a number"},
    {"INT trailing underscore", "I1_\n.", 5, 0, "an INT/LONG argument is not a number"},
    {"INT no digits", "I\n.", 3, 0, "an INT/LONG argument is not a number"},
    {"INT hex prefix only", "I0x\n.", 5, 0, "an INT/LONG argument is not a number"},
    {"INT inner space", "I12 3\n.", 7, 0, "an INT/LONG argument is not a number"},
    {"LONG binary digit 2", "L0b12L\n.", 8, 0, "an INT/LONG argument is not a number"},
    {"GET with a space inside", "Np1\ng1 1\n.", 10, 4, "a GET index is not a memo index"},
    {"STRING single char", "S'\n.", 4, 0, "the STRING opcode argument must be quoted"},
    {"STRING bad \\x digit", "S'\\xg0'\n.", 9, 0, "a STRING argument has a bad escape"},
    {"UNICODE bad hex", "V\\u00g0\n.", 9, 0, "a UNICODE argument has a bad \\u escape"},
    {"UNICODE \\U short", "V\\U0001\n.", 9, 0, "a UNICODE argument has a bad \\u escape"},
    {"UNICODE bad hex after text", "Vab\xe9\\u00g0\n.", 12, 0,
     "a UNICODE argument has a bad \\u escape"},
    {"BINUNICODE8 bad UTF-8", "\x8d\x01\x00\x00\x00\x00\x00\x00\x00\xff.", 11, 0,
     "a BINUNICODE argument is not valid UTF-8"},
    {"SHORT_BINUNICODE 4-byte over U+10FFFF", "\x8c\x04\xf4\x90\x80\x80.", 7, 0,
     "a BINUNICODE argument is not valid UTF-8"},
    {"SHORT_BINUNICODE 3-byte overlong", "\x8c\x03\xe0\x80\x80.", 6, 0,
     "a BINUNICODE argument is not valid UTF-8"},
    {"SHORT_BINUNICODE cut sequence", "\x8c\x02\xe2\x82.", 5, 0,
     "a BINUNICODE argument is not valid UTF-8"},
    {"SHORT_BINUNICODE lone continuation", "\x8c\x01\x80.", 4, 0,
     "a BINUNICODE argument is not valid UTF-8"},
    {"BINPERSID underflow", "Q.", 2, 0, "the stack has no value there (underflow or below a MARK)"},
    {"DUP underflow", "(2.", 3, 1, "the stack has no value there (underflow or below a MARK)"},
    {"POP_MARK without MARK", "N1.", 3, 1, "the opcode needs a MARK that is not there"},
    {"FROZENSET without MARK", "\x91.", 2, 0, "the opcode needs a MARK that is not there"},
    {"ADDITEMS without MARK", "\x8f\x90.", 3, 1, "the opcode needs a MARK that is not there"},
    {"OBJ without MARK", "No.", 3, 1, "the opcode needs a MARK that is not there"},
    {"NEWOBJ_EX underflow", "NN\x92.", 4, 2,
     "the stack has no value there (underflow or below a MARK)"},
    {"NEWOBJ below a MARK", "N(N\x81.", 5, 3,
     "the stack has no value there (underflow or below a MARK)"},
    {"APPEND underflow", "]a.", 3, 1, "the stack has no value there (underflow or below a MARK)"},
    {"SETITEM underflow", "}Ns.", 4, 2, "the stack has no value there (underflow or below a MARK)"},
    {"READONLY_BUFFER underflow", "\x98.", 2, 0,
     "the stack has no value there (underflow or below a MARK)"},
    {"SETITEMS odd", "}(NNNu.", 7, 5, "odd number of items for SETITEMS"},
    {"STOP inside the data", "N", 1, 1, "the data ends before a STOP opcode"},
};

START_TEST(malformed_forms)
{
    rec r;
    memset(&r, 0, sizeof r);
    size_t end;
    stg_pickle_walker e;
    stg_pickle_status st = walk_lim((const uint8_t *)bad[_i].bytes, bad[_i].len, &r, &end,
                                    &small_limits, &e);
    ck_assert_msg(st == STG_PW_MALFORMED, "%s: status %d", bad[_i].name, (int)st);
    ck_assert_msg(e.err_offset == bad[_i].offset, "%s: offset %llu, want %llu", bad[_i].name,
                  (unsigned long long)e.err_offset, (unsigned long long)bad[_i].offset);
    ck_assert_msg(strcmp(e.err_msg, bad[_i].msg) == 0, "%s: \"%s\"", bad[_i].name, e.err_msg);
}
END_TEST

/* ---------------------------------------------------------------- decoding */

/* cm\nf\n, the argument opcode(s), TUPLE1, REDUCE, STOP: the call hook sees the value. */
static void call_with(const char *arg, size_t arg_len, rec *r)
{
    uint8_t buf[256];
    ck_assert_uint_lt(arg_len, sizeof buf - 16);
    memcpy(buf, "cm\nf\n", 5);
    memcpy(buf + 5, arg, arg_len);
    memcpy(buf + 5 + arg_len, "\x85R.", 3);
    size_t end;
    stg_pickle_status st = walk(buf, arg_len + 8, r, &end);
    ck_assert_msg(st == STG_PW_STOP, "%.*s: status %d", (int)arg_len, arg, (int)st);
    ck_assert_uint_eq(end, arg_len + 8);
    ck_assert_uint_eq(r->calls, 1);
    ck_assert(r->have_arg0);
}

static const struct {
    const char *arg;
    size_t len;
    stg_pv_kind kind;
    int64_t value; /* for INT and BOOL */
} ints[] = {
    {"I01\n", 4, STG_PV_BOOL, 1},
    {"I00\n", 4, STG_PV_BOOL, 0},
    {"I-5\n", 4, STG_PV_INT, -5},
    {"I \t12 \r\n", 8, STG_PV_INT, 12},
    {"I1_000\n", 7, STG_PV_INT, 1000},
    {"I+7\n", 4, STG_PV_INT, 7},
    {"I12\0junk\n", 9, STG_PV_INT, 12}, /* the text ends at the first NUL */
    {"I007\n", 5, STG_PV_INT, 7},
    {"I9223372036854775807\n", 21, STG_PV_INT, INT64_MAX},
    {"I9223372036854775808\n", 21, STG_PV_BIGINT, 0},
    {"I0x1F\n", 6, STG_PV_BIGINT, 0},
    {"I0X_1f\n", 7, STG_PV_BIGINT, 0},
    {"I0o17\n", 6, STG_PV_BIGINT, 0},
    {"I-0b101\n", 8, STG_PV_BIGINT, 0},
    {"L12L\n", 5, STG_PV_INT, 12},
    {"L-3\n", 4, STG_PV_INT, -3},
    {"J\xff\xff\xff\xff", 5, STG_PV_INT, -1},
    {"M\xff\xff", 3, STG_PV_INT, 65535},
    {"K\xff", 2, STG_PV_INT, 255},
    {"\x8a\x00", 2, STG_PV_INT, 0},
    {"\x8a\x01\xff", 3, STG_PV_INT, -1},
    {"\x8a\x02\x00\x80", 4, STG_PV_INT, -32768},
    {"\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f", 10, STG_PV_INT, INT64_MAX},
    {"\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01", 11, STG_PV_BIGINT, 0},
    {"\x8b\x02\x00\x00\x00\x01\x01", 7, STG_PV_INT, 257},
    {"\x88", 1, STG_PV_BOOL, 1},
    {"\x89", 1, STG_PV_BOOL, 0},
    {"F-1.5e3\n", 8, STG_PV_FLOAT, 0},
    {"Fnan\n", 5, STG_PV_FLOAT, 0},
    {"G\x3f\xf8\x00\x00\x00\x00\x00\x00", 9, STG_PV_FLOAT, 0},
    {"N", 1, STG_PV_NONE, 0},
};

START_TEST(numbers_decode_as_cpython_reads_them)
{
    rec r;
    memset(&r, 0, sizeof r);
    call_with(ints[_i].arg, ints[_i].len, &r);
    ck_assert_msg(r.arg0.kind == ints[_i].kind, "%zu: kind %d, want %d", (size_t)_i,
                  (int)r.arg0.kind, (int)ints[_i].kind);
    int64_t v = 0;
    bool is_int = stg_pickle_int(&r.arg0, &v);
    ck_assert(is_int == (ints[_i].kind == STG_PV_INT || ints[_i].kind == STG_PV_BOOL));
    if (is_int) {
        ck_assert_msg(v == ints[_i].value, "%zu: %lld, want %lld", (size_t)_i, (long long)v,
                      (long long)ints[_i].value);
    }
}
END_TEST

static const struct {
    const char *arg;
    size_t len;
    stg_pv_kind kind;
    const char *decoded;
    size_t dlen;
} strs[] = {
    {"S'a\\x41\\101\\n\\q'\n", 17, STG_PV_STR, "aAA\n\\q", 6},
    {"S\"x\\\"y\"\n", 8, STG_PV_STR, "x\"y", 3},
    {"S'\\777\\0\\12'\n", 13, STG_PV_STR, "\xff\x00\n", 3},
    {"S'\\b\\f\\t\\r\\v\\a\\''\n", 18, STG_PV_STR, "\b\f\t\r\v\a'", 7},
    {"V\\u00e9\n", 8, STG_PV_STR, "\xc3\xa9", 2},
    {"V\\\\u0041\n", 9, STG_PV_STR, "\\\\u0041", 7},
    {"V\\\\\\u0041\n", 10, STG_PV_STR, "\\\\A", 3},
    {"V\\U0001F600\n", 12, STG_PV_STR, "\xf0\x9f\x98\x80", 4},
    {"V\\u20ac\n", 8, STG_PV_STR, "\xe2\x82\xac", 3},
    {"V\xe9\n", 3, STG_PV_STR, "\xc3\xa9", 2},
    {"Vab\xe9\\u0041cd\n", 13, STG_PV_STR,
     "ab\xc3\xa9"
     "Acd",
     7},
    {"V\\x\n", 4, STG_PV_STR, "\\x", 2},
    {"X\x02\x00\x00\x00\xc3\xa9", 7, STG_PV_STR, "\xc3\xa9", 2},
    {"U\x03"
     "abc",
     5, STG_PV_STR, "abc", 3},
    {"T\x01\x00\x00\x00z", 6, STG_PV_STR, "z", 1},
    {"C\x02"
     "ab",
     4, STG_PV_BYTES, "ab", 2},
    {"\x8c\x04\xf0\x9f\x98\x80", 6, STG_PV_STR, "\xf0\x9f\x98\x80", 4},
    {"\x8e\x01\x00\x00\x00\x00\x00\x00\x00q", 10, STG_PV_BYTES, "q", 1},
    {"\x96\x00\x00\x00\x00\x00\x00\x00\x00", 9, STG_PV_BYTES, "", 0},
    {"Pid\n", 4, STG_PV_PERSISTENT, NULL, 0},
};

START_TEST(strings_decode_as_cpython_reads_them)
{
    rec r;
    memset(&r, 0, sizeof r);
    call_with(strs[_i].arg, strs[_i].len, &r);
    ck_assert_msg(r.arg0.kind == strs[_i].kind, "%zu: kind %d", (size_t)_i, (int)r.arg0.kind);
    if (strs[_i].decoded == NULL) {
        ck_assert(!r.arg0_decoded);
        return;
    }
    ck_assert_msg(r.arg0_decoded, "%zu: not decoded", (size_t)_i);
    ck_assert_msg(r.arg0_len == strs[_i].dlen &&
                      memcmp(r.arg0_bytes, strs[_i].decoded, strs[_i].dlen) == 0,
                  "%zu: decoded to %zu bytes \"%.*s\"", (size_t)_i, r.arg0_len, (int)r.arg0_len,
                  r.arg0_bytes);
}
END_TEST

/* ---------------------------------------------------------------- FRAME */

START_TEST(frame_edges)
{
    rec r;
    memset(&r, 0, sizeof r);
    size_t end;
    /* A frame holding exactly "N.": nothing to report. */
    ck_assert_int_eq(walk(B("\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00N."), &r, &end),
                     STG_PW_STOP);
    ck_assert_uint_eq(end, 13);
    ck_assert_uint_eq(r.frames, 0);
    /* An empty frame is no frame. */
    ck_assert_int_eq(walk(B("\x95\x00\x00\x00\x00\x00\x00\x00\x00N."), &r, &end), STG_PW_STOP);
    ck_assert_uint_eq(r.frames, 0);
    /* STOP before the frame ends: the Python reader drops the rest, _pickle does not. */
    ck_assert_int_eq(walk(B("\x95\x03\x00\x00\x00\x00\x00\x00\x00N.N"), &r, &end), STG_PW_STOP);
    ck_assert_uint_eq(end, 11);
    ck_assert_uint_eq(r.frames, 1);
    ck_assert_uint_eq(r.frame_off[0], 10);
    /* An argument straddling the frame end, reported at its opcode. */
    ck_assert_int_eq(walk(B("\x95\x02\x00\x00\x00\x00\x00\x00\x00NK\x05."), &r, &end), STG_PW_STOP);
    ck_assert_uint_eq(r.frames, 1);
    ck_assert_uint_eq(r.frame_off[0], 10);
    /* A FRAME opening before the previous one ended. */
    ck_assert_int_eq(walk(B("\x95\x0b\x00\x00\x00\x00\x00\x00\x00N"
                            "\x95\x01\x00\x00\x00\x00\x00\x00\x00."),
                          &r, &end),
                     STG_PW_STOP);
    ck_assert_uint_eq(r.frames, 1);
    ck_assert_uint_eq(r.frame_off[0], 10);
    /* A FRAME right after the previous one ended is fine. */
    ck_assert_int_eq(walk(B("\x95\x01\x00\x00\x00\x00\x00\x00\x00N"
                            "\x95\x01\x00\x00\x00\x00\x00\x00\x00."),
                          &r, &end),
                     STG_PW_STOP);
    ck_assert_uint_eq(r.frames, 0);
}
END_TEST

/* BUILD asking to skip inline bytes: done at a frame end or outside frames; inside a frame (the
 * payload would be read past it) it is a divergence and nothing is skipped. */
START_TEST(build_skip_and_frames)
{
    rec r;
    memset(&r, 0, sizeof r);
    size_t end;
    r.build_action = STG_PICKLE_SKIP;
    r.build_skip = 3;
    /* Outside a frame: "xyz" is skipped. */
    ck_assert_int_eq(walk(B("NNbxyz."), &r, &end), STG_PW_STOP);
    ck_assert_uint_eq(end, 7);
    ck_assert_uint_eq(r.builds, 1);
    /* At the frame end: skipped, and the frame is over. */
    ck_assert_int_eq(walk(B("\x95\x03\x00\x00\x00\x00\x00\x00\x00NNbxyz."), &r, &end), STG_PW_STOP);
    ck_assert_uint_eq(end, 16);
    ck_assert_uint_eq(r.frames, 0);
    /* Inside a frame: reported at BUILD, and "N." after it is walked, not skipped. */
    ck_assert_int_eq(walk(B("\x95\x05\x00\x00\x00\x00\x00\x00\x00NNbN."), &r, &end), STG_PW_STOP);
    ck_assert_uint_eq(end, 14);
    ck_assert_uint_eq(r.frames, 1);
    ck_assert_uint_eq(r.frame_off[0], 11);
    /* Skipping past the end. */
    r.build_skip = 10;
    stg_pickle_walker e;
    ck_assert_int_eq(walk_lim(B("NNbxyz."), &r, &end, &small_limits, &e), STG_PW_MALFORMED);
    ck_assert_str_eq(e.err_msg, "an inline array runs past the end");
    ck_assert_uint_eq(e.err_offset, 2);
    /* A build hook without a frame hook: the divergence is simply not reported. */
    stg_pickle_hooks h = {0};
    h.ctx = &r;
    h.build = rec_build;
    r.build_skip = 3;
    stg_pickle_walker w;
    stg_pickle_init(&w, &small_limits, &h);
    ck_assert_int_eq(stg_pickle_walk(&w, B("\x95\x05\x00\x00\x00\x00\x00\x00\x00NNbN."), 0, &end),
                     STG_PW_STOP);
    ck_assert_uint_eq(end, 14);
    stg_pickle_free(&w);
}
END_TEST

/* ---------------------------------------------------------------- hooks may be NULL */

/* Every hook-raising opcode at once: globals, calls, BUILD and SETITEM on a global, appends,
 * persistent ids, EXT, an unresolved STACK_GLOBAL, strings over max_string, frame divergence. */
static const uint8_t busy[] = "\x80\x04"
                              "\x95\x02\x00\x00\x00\x00\x00\x00\x00"
                              "NK\x01\x86" /* K's argument is past the frame: at 12 */
                              "0"
                              "\x95\x0a\x00\x00\x00\x00\x00\x00\x00"
                              "N\x95\x01\x00\x00\x00\x00\x00\x00\x00" /* a frame in a frame: 26 */
                              "0"
                              "cos\nsystem\n"
                              "}b"
                              "cos\nsystem\n"
                              "NNs0"
                              "]N"
                              "a(NNe0"
                              "Pid\n0NQ0"
                              "\x82\x01"
                              "0"
                              "K\x01K\x02\x93"
                              "0"
                              "C\x05"
                              "abcde0"
                              "S'abcde'\n0"
                              "Vabcde\n0"
                              "cm\nf\n)R0"
                              "\x95\x03\x00\x00\x00\x00\x00\x00\x00N.N";

START_TEST(null_and_empty_hooks)
{
    const size_t len = sizeof busy - 1;
    stg_pickle_limits pl = small_limits;
    pl.max_string = 4;
    /* With every hook: the events are there. */
    rec r;
    memset(&r, 0, sizeof r);
    size_t end = 0;
    ck_assert_int_eq(walk_lim(busy, len, &r, &end, &pl, NULL), STG_PW_STOP);
    ck_assert_uint_eq(end, len - 1);
    ck_assert_uint_eq(r.globals, 3);
    ck_assert_uint_eq(r.mutations, 2);
    ck_assert_uint_eq(r.appends, 3);
    ck_assert_uint_eq(r.persids, 2);
    ck_assert_uint_eq(r.unresolved, 2);
    ck_assert_uint_eq(r.strings, 3);
    ck_assert_uint_eq(r.frames, 3);
    ck_assert_uint_eq(r.frame_off[0], 12);
    ck_assert_uint_eq(r.frame_off[1], 26);
    ck_assert_uint_eq(r.frame_off[2], len - 2);
    ck_assert_uint_eq(r.calls, 1);
    /* NULL hooks, then a hooks struct with every function NULL: the same walk. */
    stg_pickle_hooks none = {0};
    for (int pass = 0; pass < 2; pass++) {
        stg_pickle_walker w;
        stg_pickle_init(&w, &pl, pass == 0 ? NULL : &none);
        end = 0;
        ck_assert_int_eq(stg_pickle_walk(&w, busy, len, 0, &end), STG_PW_STOP);
        ck_assert_uint_eq(end, len - 1);
        stg_pickle_free(&w);
    }
}
END_TEST

/* ---------------------------------------------------------------- levels, ids, walks */

/* Inline pickles nest at most 7 deep (the level table), whatever max_inline says. */
static size_t nested_inline(uint8_t *buf, unsigned depth)
{
    size_t n = 0;
    for (unsigned i = 0; i < depth; i++) {
        memcpy(buf + n, "NNb", 3);
        n += 3;
    }
    buf[n++] = 'N';
    for (unsigned i = 0; i <= depth; i++) {
        buf[n++] = '.';
    }
    return n;
}

START_TEST(inline_levels_capped_at_seven)
{
    uint8_t buf[64];
    rec r;
    memset(&r, 0, sizeof r);
    size_t end;
    stg_pickle_walker e;
    stg_pickle_limits pl = small_limits;
    pl.max_inline = 100;
    r.build_action = STG_PICKLE_INLINE;
    size_t n = nested_inline(buf, 7);
    ck_assert_int_eq(walk_lim(buf, n, &r, &end, &pl, NULL), STG_PW_STOP);
    ck_assert_uint_eq(end, n);
    ck_assert_uint_eq(r.builds, 7);
    n = nested_inline(buf, 8);
    ck_assert_int_eq(walk_lim(buf, n, &r, &end, &pl, &e), STG_PW_LIMIT);
    ck_assert_str_eq(e.err_limit, "max_nesting");
    ck_assert_uint_eq(e.err_value, 7);
    ck_assert_uint_eq(e.err_offset, 23);
    /* max_inline below the cap is the limit. */
    pl.max_inline = 2;
    n = nested_inline(buf, 2);
    ck_assert_int_eq(walk_lim(buf, n, &r, &end, &pl, NULL), STG_PW_STOP);
    n = nested_inline(buf, 3);
    ck_assert_int_eq(walk_lim(buf, n, &r, &end, &pl, &e), STG_PW_LIMIT);
    ck_assert_uint_eq(e.err_value, 2);
    ck_assert_uint_eq(e.err_offset, 8);
}
END_TEST

/* "N", then k times an inline pickle "N." started by BUILD, then STOP. */
static size_t sequential_inline(uint8_t *buf, unsigned k)
{
    size_t n = 0;
    buf[n++] = 'N';
    for (unsigned i = 0; i < k; i++) {
        memcpy(buf + n, "NbN.", 4);
        n += 4;
    }
    buf[n++] = '.';
    return n;
}

/* Memo entries carry the id of their level instance; ids only grow within a walk, so when they
 * run out the walk stops (limit) instead of wrapping onto stale entries, and a walk that starts
 * near the end forgets every slot and starts again at 1. */
START_TEST(level_ids_never_wrap)
{
    uint8_t buf[600];
    rec r;
    memset(&r, 0, sizeof r);
    r.build_action = STG_PICKLE_INLINE;
    stg_pickle_hooks h = all_hooks(&r);
    stg_pickle_walker w;
    stg_pickle_init(&w, &small_limits, &h);
    size_t end;
    /* First walk: a dense memo entry 0 and a hashed one at 0x10000000, both with id 1. */
    ck_assert_int_eq(stg_pickle_walk(&w, B("N\x94r\x00\x00\x00\x10."), 0, &end), STG_PW_STOP);
    ck_assert_uint_eq(w.next_id, 2);
    /* Ids about to run out: everything is forgotten, ids restart at 1, and the old entries (id
     * 1 as well) are not seen. */
    w.next_id = UINT32_MAX - 10;
    ck_assert_int_eq(stg_pickle_walk(&w, B("h\x00."), 0, &end), STG_PW_MALFORMED);
    ck_assert_str_eq(w.err_msg, "the memo has no value at this index");
    ck_assert_uint_eq(w.next_id, 2);
    w.next_id = UINT32_MAX - 10;
    ck_assert_int_eq(stg_pickle_walk(&w, B("j\x00\x00\x00\x10."), 0, &end), STG_PW_MALFORMED);
    /* 63 inline pickles fit between UINT32_MAX - 64 and UINT32_MAX; the 64th does not. */
    size_t n = sequential_inline(buf, 63);
    w.next_id = UINT32_MAX - 64;
    ck_assert_int_eq(stg_pickle_walk(&w, buf, n, 0, &end), STG_PW_STOP);
    ck_assert_uint_eq(end, n);
    n = sequential_inline(buf, 64);
    w.next_id = UINT32_MAX - 64;
    ck_assert_int_eq(stg_pickle_walk(&w, buf, n, 0, &end), STG_PW_LIMIT);
    ck_assert_str_eq(w.err_limit, "max_pickle_memo");
    ck_assert_uint_eq(w.err_offset, 1 + 4 * 63 + 1);
    /* One id later the walk starts over at 1 and all 64 fit. */
    w.next_id = UINT32_MAX - 63;
    ck_assert_int_eq(stg_pickle_walk(&w, buf, n, 0, &end), STG_PW_STOP);
    stg_pickle_free(&w);
}
END_TEST

/* A start offset past the data is "no data" at the end; at the end, no STOP. */
START_TEST(start_offsets)
{
    stg_pickle_walker w;
    stg_pickle_init(&w, &small_limits, NULL);
    size_t end = 99;
    ck_assert_int_eq(stg_pickle_walk(&w, B("N.N."), 2, &end), STG_PW_STOP);
    ck_assert_uint_eq(end, 4);
    ck_assert_int_eq(stg_pickle_walk(&w, B("N."), 3, &end), STG_PW_MALFORMED);
    ck_assert_str_eq(w.err_msg, "no data");
    ck_assert_uint_eq(w.err_offset, 2);
    ck_assert_int_eq(stg_pickle_walk(&w, B("N."), 2, &end), STG_PW_MALFORMED);
    ck_assert_str_eq(w.err_msg, "the data ends before a STOP opcode");
    ck_assert_uint_eq(w.err_offset, 2);
    stg_pickle_free(&w);
}
END_TEST

/* The memo hash grows and rehashes; entries of an inline level and of the level around it with
 * the same index stay apart, and a second walk on the same walker sees none of the first. */
START_TEST(memo_hash_levels_and_walks)
{
    enum { KEYS = 200 };
    size_t cap = 16 + 2 * (4 + KEYS * 5) + 64, n = 0;
    uint8_t *b = malloc(cap);
    ck_assert_ptr_nonnull(b);
    for (int level = 0; level < 2; level++) {
        if (level == 1) {
            memcpy(b + n, "NNb", 3); /* starts the inline level */
            n += 3;
        }
        memcpy(b + n, level == 0 ? "\x8c\x02L0" : "\x8c\x02L1", 4);
        n += 4;
        for (uint32_t k = 0; k < KEYS; k++) {
            uint32_t key = 0x40000000u + k * 7919u; /* sparse: the hash, never the dense array */
            b[n++] = 'r';
            b[n++] = (uint8_t)key;
            b[n++] = (uint8_t)(key >> 8);
            b[n++] = (uint8_t)(key >> 16);
            b[n++] = (uint8_t)(key >> 24);
        }
        b[n++] = '0';
    }
    /* Inner level: GET two keys -> STACK_GLOBAL L1.L1; end it. Outer: the same -> L0.L0. */
    static const uint8_t get[] = "j\x00\x00\x00\x40j\xef\x1e\x00\x40\x93"
                                 "0";
    memcpy(b + n, get, sizeof get - 1);
    n += sizeof get - 1;
    memcpy(b + n, "N.", 2);
    n += 2;
    memcpy(b + n, get, sizeof get - 1);
    n += sizeof get - 1;
    b[n++] = '.';
    ck_assert_uint_le(n, cap);
    rec r;
    memset(&r, 0, sizeof r);
    r.build_action = STG_PICKLE_INLINE;
    stg_pickle_hooks h = all_hooks(&r);
    stg_pickle_limits pl = small_limits;
    stg_pickle_walker w;
    stg_pickle_init(&w, &pl, &h);
    for (int pass = 0; pass < 2; pass++) {
        size_t end = 0;
        r.globals = 0;
        ck_assert_int_eq(stg_pickle_walk(&w, b, n, 0, &end), STG_PW_STOP);
        ck_assert_uint_eq(end, n);
        ck_assert_uint_eq(r.globals, 2);
        ck_assert_str_eq(r.global[0], "L1.L1");
        ck_assert_str_eq(r.global[1], "L0.L0");
        ck_assert_uint_ge(w.memo_cap, 2 * KEYS * 2);
    }
    /* The memo limit counts distinct entries of both levels. */
    stg_pickle_free(&w);
    pl.max_memo = 2 * KEYS - 1;
    stg_pickle_init(&w, &pl, &h);
    size_t end = 0;
    ck_assert_int_eq(stg_pickle_walk(&w, b, n, 0, &end), STG_PW_LIMIT);
    ck_assert_str_eq(w.err_limit, "max_pickle_memo");
    ck_assert_uint_eq(w.err_offset, 4 + KEYS * 5 + 1 + 3 + 4 + (KEYS - 1) * 5);
    stg_pickle_free(&w);
    free(b);
}
END_TEST

/* ---------------------------------------------------------------- memory budget */

/* A refusal of the walker's own budget is the max_memory limit (not "out of memory"), at the
 * opcode that needed the memory. */
START_TEST(budget_refusals_are_limits)
{
    static const struct {
        const char *bytes;
        size_t len;
        size_t cap;
        uint64_t offset;
    } cases[] = {
        {"N.", 2, 0, 0},             /* the first stack block */
        {"N(.", 3, 4096, 1},         /* the mark stack */
        {"N\x94.", 3, 4096, 1},      /* the memo: no room for the dense array nor the hash */
        {"NNNNNN\x94.", 8, 4096, 6}, /* ditto, later */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_pickle_walker w;
        stg_pickle_init(&w, &small_limits, NULL);
        w.arena.cap = cases[i].cap;
        size_t end;
        ck_assert_int_eq(
            stg_pickle_walk(&w, (const uint8_t *)cases[i].bytes, cases[i].len, 0, &end),
            STG_PW_LIMIT);
        ck_assert_str_eq(w.err_limit, "max_memory");
        ck_assert_uint_eq(w.err_value, cases[i].cap);
        ck_assert_msg(w.err_offset == cases[i].offset, "case %zu: offset %llu", i,
                      (unsigned long long)w.err_offset);
        stg_pickle_free(&w);
    }
}
END_TEST

/* The buffer that decodes escaped STACK_GLOBAL operands is charged to the same budget: when it
 * is refused the operands count as undecodable (the walk fails closed). */
START_TEST(budget_refusal_while_decoding)
{
    stg_pickle_walker w;
    stg_pickle_init(&w, &small_limits, NULL);
    w.arena.cap = 4096; /* the stack's first block takes it all */
    size_t end;
    ck_assert_int_eq(stg_pickle_walk(&w, B("S'o\\x73'\nS'system'\n\x93."), 0, &end),
                     STG_PW_MALFORMED);
    ck_assert_str_eq(w.err_msg, "a STACK_GLOBAL operand cannot be decoded");
    ck_assert_uint_eq(w.err_offset, 19);
    stg_pickle_free(&w);
    /* Raw operands need no buffer. */
    stg_pickle_init(&w, &small_limits, NULL);
    w.arena.cap = 4096;
    ck_assert_int_eq(stg_pickle_walk(&w, B("U\x02osU\x06system\x93."), 0, &end), STG_PW_STOP);
    stg_pickle_free(&w);
}
END_TEST

/* The pool that keeps container elements holds max_stack values: a dict whose pairs no longer
 * fit is untracked (dict_get finds nothing), never half-kept. */
static bool dict_a_after_pool(uint32_t max_stack, int64_t *a)
{
    /* target, {a: 1, b: 2}, a 3-tuple dropped, then d[c] = 3, BUILD(target, d). */
    static const uint8_t pk[] = "N}U\x01"
                                "aK\x01sU\x01"
                                "bK\x02sNNN\x87"
                                "0U\x01"
                                "cK\x03sb.";
    rec r;
    memset(&r, 0, sizeof r);
    size_t end;
    stg_pickle_limits pl = small_limits;
    pl.max_stack = max_stack;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(walk_lim(pk, sizeof pk - 1, &r, &end, &pl, NULL), STG_PW_STOP);
    ck_assert_uint_eq(r.builds, 1);
    *a = r.dict_a;
    return r.dict_a_found;
}

START_TEST(pool_full_untracks_dicts)
{
    int64_t a = 0;
    ck_assert(dict_a_after_pool(13, &a)); /* 4 pairs moved + 2 new = 13 values */
    ck_assert_int_eq(a, 1);
    ck_assert(!dict_a_after_pool(12, &a)); /* the new pair does not fit */
    ck_assert(!dict_a_after_pool(10, &a)); /* the moved pairs do not fit */
    /* Keys that are not strings are skipped by dict_get. */
    rec r;
    memset(&r, 0, sizeof r);
    size_t end;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(walk(B("N}K\x01K\x02sU\x0flongkeylongkeyxK\x04sU\x01"
                            "aK\x03sb."),
                          &r, &end),
                     STG_PW_STOP);
    ck_assert(r.dict_a_found);
    ck_assert_int_eq(r.dict_a, 3);
}
END_TEST

/* The walker's whole memory is its arena, and its peak stays within stg_pickle_memory_bound
 * (the formula docs/pickle.md states) on inputs that drive each term to its worst: the value
 * stack, the mark stack, the element pool, the dense memo (charged to the arena like the rest),
 * the memo hash under a flood of sparse indexes, and the buffers that decode protocol 0 strings.
 * Each input also reaches most of its own term, so a term left out of the account (or out of the
 * formula) fails here. */
static void on_persid_decode(void *ctx, stg_pickle_walker *w, const stg_pv *pid, uint64_t off)
{
    (void)off;
    const uint8_t *b;
    size_t n;
    *(size_t *)ctx = stg_pickle_bytes(w, pid, &b, &n) ? n : 0;
}

#define MB_S 4096u /* max_stack */
#define MB_M 4096u /* max_memo */

static uint8_t *mb_fill(size_t *len, const char *head, uint8_t op, size_t times, const char *tail)
{
    size_t hl = strlen(head), tl = strlen(tail);
    *len = hl + times + tl;
    uint8_t *b = malloc(*len);
    ck_assert_ptr_nonnull(b);
    memcpy(b, head, hl);
    memset(b + hl, op, times);
    memcpy(b + hl + times, tail, tl);
    return b;
}

/* A flood of LONG_BINPUT with distinct sparse indexes: n of them, then STOP. */
static uint8_t *mb_sparse(size_t *len, size_t n)
{
    *len = 1 + 5 * n + 1;
    uint8_t *b = malloc(*len);
    ck_assert_ptr_nonnull(b);
    b[0] = 'N';
    for (size_t i = 0; i < n; i++) {
        uint32_t key = 0x40000000u + (uint32_t)i * 7919u;
        b[1 + 5 * i] = 'r';
        for (int k = 0; k < 4; k++) {
            b[2 + 5 * i + (size_t)k] = (uint8_t)(key >> (8 * k));
        }
    }
    b[*len - 1] = '.';
    return b;
}

typedef struct mb_case {
    const char *what;
    uint8_t *buf;
    size_t len;
    stg_pickle_status want;
    uint64_t reaches; /* the peak is at least this */
} mb_case;

/* Two protocol 0 STRING operands of `n` escaped bytes each, then STACK_GLOBAL and STOP. */
static uint8_t *mb_names(size_t *len, size_t n)
{
    *len = 2 * (n + 4) + 2;
    uint8_t *b = malloc(*len);
    ck_assert_ptr_nonnull(b);
    size_t o = 0;
    for (int k = 0; k < 2; k++) {
        b[o++] = 'S';
        b[o++] = '\'';
        memset(b + o, 'a', n);
        o += n;
        b[o++] = '\'';
        b[o++] = '\n';
    }
    b[o++] = 0x93;
    b[o++] = '.';
    return b;
}

START_TEST(memory_peak_within_bound)
{
    const stg_pickle_limits pl = {MB_S, MB_M, 1 << 20, 4, 0};
    mb_case cases[10];
    size_t nc = 0, len;
    uint8_t *b;
    /* max_stack values: 16 bytes each, grown by doubling */
    b = mb_fill(&len, "", 'N', MB_S, ".");
    cases[nc++] = (mb_case){"stack", b, len, STG_PW_STOP, 16u * MB_S};
    /* max_stack marks, 4 bytes each */
    b = mb_fill(&len, "", '(', MB_S, "N.");
    cases[nc++] = (mb_case){"marks", b, len, STG_PW_STOP, 4u * MB_S};
    /* TUPLE1 of TUPLE1 ...: each tuple keeps its element in the pool, up to max_stack values */
    b = mb_fill(&len, "N", 0x85, MB_S + 100, ".");
    cases[nc++] = (mb_case){"pool", b, len, STG_PW_STOP, 16u * MB_S};
    /* MEMOIZE 1300 times: all in the dense array (it covers len / 4 + 1024 indexes), allocated
     * last */
    b = mb_fill(&len, "N", 0x94, 1300, ".");
    cases[nc++] = (mb_case){"dense memo", b, len, STG_PW_STOP, 24u * (1302 / 4 + 1024)};
    /* MEMOIZE max_memo times: the dense array, then the hash for the rest */
    b = mb_fill(&len, "N", 0x94, MB_M, ".");
    cases[nc++] = (mb_case){"dense and hash memo", b, len, STG_PW_STOP,
                            24u * ((MB_M + 2) / 4 + 1024)};
    /* max_memo sparse indexes and one more: the limit, after the hash's last growth */
    b = mb_sparse(&len, MB_M + 1);
    cases[nc++] = (mb_case){"memo hash", b, len, STG_PW_LIMIT, 96u * MB_M};
    /* a protocol 0 UNICODE line decoded by a hook: 2 bytes per input byte */
    b = mb_fill(&len, "V", 0xe9, 20000, "\nQ.");
    cases[nc++] = (mb_case){"decoded string", b, len, STG_PW_STOP, 2u * 20000};
    /* escaped STACK_GLOBAL operands of the longest length decoded, each in its own buffer */
    b = mb_names(&len, 1024);
    cases[nc++] = (mb_case){"decoded names", b, len, STG_PW_STOP, 2 * 4096};
    size_t decoded = 0;
    stg_pickle_hooks h = {0};
    h.ctx = &decoded;
    h.persid = on_persid_decode;
    size_t longest = 0;
    stg_pickle_walker w;
    for (size_t i = 0; i < nc; i++) {
        longest = cases[i].len > longest ? cases[i].len : longest;
        stg_pickle_init(&w, &pl, &h);
        size_t end;
        stg_pickle_status st = stg_pickle_walk(&w, cases[i].buf, cases[i].len, 0, &end);
        ck_assert_msg(st == cases[i].want, "%s: status %d (%s)", cases[i].what, (int)st,
                      w.err_msg != NULL ? w.err_msg : "-");
        uint64_t bound = stg_pickle_memory_bound(&pl, cases[i].len);
        ck_assert_msg(w.arena.peak <= bound, "%s: peak %zu > bound %llu", cases[i].what,
                      w.arena.peak, (unsigned long long)bound);
        ck_assert_msg(w.arena.peak >= cases[i].reaches, "%s: peak %zu < %llu", cases[i].what,
                      w.arena.peak, (unsigned long long)cases[i].reaches);
        ck_assert_uint_le(w.arena.peak, w.arena.cap);
        stg_pickle_free(&w);
        ck_assert_uint_eq(w.arena.reserved, 0); /* every byte was given back */
    }
    ck_assert_uint_eq(decoded, 2u * 20000); /* the hook did decode the string */
    /* One walker over all of them in turn (buffers are reused): the bound of the longest. */
    stg_pickle_init(&w, &pl, &h);
    for (size_t i = 0; i < nc; i++) {
        size_t end;
        ck_assert_int_eq(stg_pickle_walk(&w, cases[i].buf, cases[i].len, 0, &end), cases[i].want);
    }
    ck_assert_uint_le(w.arena.peak, stg_pickle_memory_bound(&pl, longest));
    stg_pickle_free(&w);
    for (size_t i = 0; i < nc; i++) {
        free(cases[i].buf);
    }
}
END_TEST

/* A max_pickle_string of "no limit" does not wrap the budget: escaped operands still decode. */
START_TEST(unlimited_string_budget)
{
    stg_pickle_limits pl = small_limits;
    pl.max_string = UINT64_MAX;
    rec r;
    memset(&r, 0, sizeof r);
    stg_pickle_hooks h = all_hooks(&r);
    stg_pickle_walker w;
    stg_pickle_init(&w, &pl, &h);
    ck_assert_uint_ge(w.arena.cap, UINT64_MAX / 8 > SIZE_MAX ? SIZE_MAX : UINT64_MAX / 8);
    size_t end;
    ck_assert_int_eq(stg_pickle_walk(&w, B("S'o\\x73'\nV\\u0073ystem\n\x93."), 0, &end),
                     STG_PW_STOP);
    ck_assert_uint_eq(r.globals, 1);
    ck_assert_str_eq(r.global[0], "os.system");
    ck_assert_uint_eq(r.strings, 0);
    stg_pickle_free(&w);
}
END_TEST

/* ---------------------------------------------------------------- accessors */

/* Accessors refuse values that do not describe this walk's data (a hook keeping a value across
 * walks, or a made-up one). */
START_TEST(accessors_refuse_foreign_values)
{
    rec r;
    memset(&r, 0, sizeof r);
    stg_pickle_hooks h = all_hooks(&r);
    stg_pickle_walker w;
    stg_pickle_init(&w, &small_limits, &h);
    static const uint8_t pk[] = "cm\nf\n(U\x01xK\x05t\x85R.";
    size_t end;
    ck_assert_int_eq(stg_pickle_walk(&w, pk, sizeof pk - 1, 0, &end), STG_PW_STOP);
    ck_assert_uint_gt(w.npool, 0);
    stg_pv v, out;
    const uint8_t *p;
    size_t n;
    int64_t i64;
    memset(&v, 0, sizeof v);
    v.kind = STG_PV_STR;
    v.a = sizeof pk; /* past the data */
    ck_assert(!stg_pickle_bytes(&w, &v, &p, &n));
    v.a = 2;
    v.n = (uint32_t)sizeof pk; /* runs past the data */
    ck_assert(!stg_pickle_bytes(&w, &v, &p, &n));
    v.n = 1;
    ck_assert(stg_pickle_bytes(&w, &v, &p, &n));
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(p[0], '\n');
    v.flags = STG_PV_F_HUGE;
    ck_assert(!stg_pickle_bytes(&w, &v, &p, &n));
    v.kind = STG_PV_INT;
    ck_assert(!stg_pickle_bytes(&w, &v, &p, &n));
    v.kind = STG_PV_FLOAT;
    ck_assert(!stg_pickle_int(&v, &i64));
    memset(&v, 0, sizeof v);
    v.kind = STG_PV_TUPLE;
    v.n = STG_PV_UNTRACKED;
    ck_assert(!stg_pickle_tuple_at(&w, &v, 0, &out));
    v.n = 1;
    v.a = w.npool; /* at the pool's end */
    ck_assert(!stg_pickle_tuple_at(&w, &v, 0, &out));
    v.a = w.npool - 1;
    v.n = 3; /* runs past it */
    ck_assert(!stg_pickle_tuple_at(&w, &v, 0, &out));
    v.kind = STG_PV_CALL;
    v.a = STG_PV_NO_POOL;
    ck_assert(!stg_pickle_call_args(&w, &v, &out));
    v.kind = STG_PV_LIST;
    v.a = 0;
    ck_assert(!stg_pickle_call_args(&w, &v, &out));
    v.kind = STG_PV_DICT;
    v.n = 1;
    v.a = w.npool;
    ck_assert(!stg_pickle_dict_get(&w, &v, "x", &out));
    v.a = w.npool - 1;
    ck_assert(!stg_pickle_dict_get(&w, &v, "x", &out));
    /* The call's real argument: ("x", 5) kept in the pool. */
    ck_assert(r.have_arg0);
    ck_assert_int_eq(r.arg0.kind, STG_PV_TUPLE);
    ck_assert(stg_pickle_tuple_at(&w, &r.arg0, 1, &out));
    ck_assert(stg_pickle_int(&out, &i64));
    ck_assert_int_eq(i64, 5);
    ck_assert(!stg_pickle_tuple_at(&w, &r.arg0, 2, &out));
    stg_pickle_free(&w);
}
END_TEST

/* ---------------------------------------------------------------- 4 GiB arguments */

/* A BINUNICODE8 of 4 GiB + 1 bytes: over max_string (reported, not validated), flagged huge,
 * never decoded; as a STACK_GLOBAL operand it is unresolved. Only the first and last pages of
 * the mapping are touched. */
START_TEST(huge_argument_is_flagged_not_read)
{
    if (sizeof(size_t) < 8) {
        return; /* 32-bit hosts cannot map it */
    }
    const uint64_t big = ((uint64_t)1 << 32) + 1;
    static const uint8_t tail[] = "\x8c\x01x\x93.";
    size_t len = 2 + 9 + (size_t)big + sizeof tail - 1;
    uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        return; /* no address space for it here: nothing to test */
    }
    memcpy(m, "\x80\x04\x8d", 3);
    for (int i = 0; i < 8; i++) {
        m[3 + i] = (uint8_t)(big >> (8 * i));
    }
    memcpy(m + len - (sizeof tail - 1), tail, sizeof tail - 1);
    rec r;
    memset(&r, 0, sizeof r);
    stg_pickle_hooks h = all_hooks(&r);
    stg_pickle_limits pl = {1000, 1000, (uint64_t)256 << 20, 4, 0};
    stg_pickle_walker w;
    stg_pickle_init(&w, &pl, &h);
    size_t end = 0;
    ck_assert_int_eq(stg_pickle_walk(&w, m, len, 0, &end), STG_PW_STOP);
    ck_assert_uint_eq(end, len);
    ck_assert_uint_eq(r.strings, 1);
    ck_assert_uint_eq(r.string_off[0], 2);
    ck_assert_uint_eq(r.string_len[0], big);
    ck_assert_uint_eq(r.unresolved, 1);
    ck_assert_uint_eq(r.unresolved_off[0], len - 2);
    ck_assert_uint_eq(r.globals, 0);
    stg_pickle_free(&w);
    /* Sniffing reads the same two ends. */
    end = 0;
    ck_assert(stg_pickle_sniff(m, len, &end, NULL));
    ck_assert_uint_eq(end, len);
    munmap(m, len);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pickle_opcodes");
    TCase *tc = tcase_create("opcodes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, opcode_names_match_the_walker);
    tcase_add_loop_test(tc, malformed_forms, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_loop_test(tc, numbers_decode_as_cpython_reads_them, 0,
                        (int)(sizeof ints / sizeof ints[0]));
    tcase_add_loop_test(tc, strings_decode_as_cpython_reads_them, 0,
                        (int)(sizeof strs / sizeof strs[0]));
    tcase_add_test(tc, frame_edges);
    tcase_add_test(tc, build_skip_and_frames);
    tcase_add_test(tc, null_and_empty_hooks);
    tcase_add_test(tc, inline_levels_capped_at_seven);
    tcase_add_test(tc, level_ids_never_wrap);
    tcase_add_test(tc, start_offsets);
    tcase_add_test(tc, memo_hash_levels_and_walks);
    tcase_add_test(tc, budget_refusals_are_limits);
    tcase_add_test(tc, budget_refusal_while_decoding);
    tcase_add_test(tc, pool_full_untracks_dicts);
    tcase_add_test(tc, unlimited_string_budget);
    tcase_add_test(tc, memory_peak_within_bound);
    tcase_add_test(tc, accessors_refuse_foreign_values);
    tcase_add_test(tc, huge_argument_is_flagged_not_read);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
