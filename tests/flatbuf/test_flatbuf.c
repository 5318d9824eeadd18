/* The bounded FlatBuffers walker (parser/flatbuffer.c) on hand-made buffers: every offset kind
 * that can leave the buffer, misalignment, strings without NUL, the visit budget against shared
 * offsets, the depth ceiling, sticky failures; then the TFLite/ExecuTorch identifiers and the
 * data formats through the dispatcher (names, precedence against pickles, text datasets). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "parser/dataformats.h"
#include "parser/flatbuffer.h"
#include "testutil.h"
#include "validator/flatbuf_models.h"
#include "validator/report.h"

/* root 16; "TFL3"; a vtable at 8 (size 6, table size 8, field 0 at 4); the table at 16 with
 * field 0 = 42. */
static void minimal(uint8_t b[24])
{
    memset(b, 0, 24);
    tu_store_le(b, 16, 4);
    memcpy(b + 4, "TFL3", 4);
    tu_store_le(b + 8, 6, 2);
    tu_store_le(b + 10, 8, 2);
    tu_store_le(b + 12, 4, 2);
    tu_store_le(b + 16, 8, 4); /* soffset: 16 - 8 */
    tu_store_le(b + 20, 42, 4);
}

static stg_parse_status root_of(const uint8_t *b, size_t len, stg_fb *fb, stg_fb_table *t)
{
    stg_fb_init(fb, b, len, stg_fb_visit_budget(len));
    return stg_fb_root(fb, t);
}

START_TEST(test_minimal_table)
{
    uint8_t b[24];
    minimal(b);
    stg_fb fb;
    stg_fb_table t;
    uint64_t v = 0, absent = 0;
    ck_assert_int_eq(root_of(b, sizeof b, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_scalar(&fb, &t, 0, 4, 7, &v), STG_PARSE_OK);
    ck_assert_uint_eq(v, 42);
    ck_assert_int_eq(stg_fb_scalar(&fb, &t, 5, 4, 7, &absent), STG_PARSE_OK);
    ck_assert_uint_eq(absent, 7); /* past the vtable: the default */
    ck_assert(stg_tflite_sniff(b, sizeof b));
    ck_assert(!stg_executorch_sniff(b, sizeof b));
}
END_TEST

/* Each corruption is refused at the offset of the structure concerned. */
START_TEST(test_offsets_leave_the_buffer)
{
    static const struct {
        size_t at, width;
        uint64_t value;
        uint64_t fail_at;
    } cases[] = {
        {0, 4, 24, 0},           /* root at the end */
        {0, 4, 18, 18},          /* root misaligned */
        {16, 4, 0x7fff0000, 16}, /* vtable far before the file */
        {8, 2, 7, 8},            /* odd vtable size */
        {8, 2, 0x7ff0, 8},       /* vtable past the end */
        {12, 2, 22, 12},         /* field 0 runs past the end */
        {12, 2, 2, 18},          /* field 0 at 2: misaligned for 4 bytes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t b[24];
        minimal(b);
        tu_store_le(b + cases[i].at, cases[i].value, cases[i].width);
        stg_fb fb;
        stg_fb_table t;
        uint64_t v = 0;
        stg_parse_status st = root_of(b, sizeof b, &fb, &t);
        if (st == STG_PARSE_OK) {
            st = stg_fb_scalar(&fb, &t, 0, 4, 0, &v);
        }
        ck_assert_msg(st == STG_PARSE_MALFORMED, "case %zu: %d", i, (int)st);
        ck_assert_msg(fb.detail.offset == cases[i].fail_at, "case %zu at %llu", i,
                      (unsigned long long)fb.detail.offset);
        ck_assert_ptr_nonnull(fb.detail.what);
        /* sticky: a later read returns the first failure, its offset unchanged */
        ck_assert_int_eq(stg_fb_scalar(&fb, &t, 1, 4, 0, &v), STG_PARSE_MALFORMED);
        ck_assert_uint_eq(fb.detail.offset, cases[i].fail_at);
    }
}
END_TEST

/* A table whose field 0 references a string "abc" (with its NUL: read; without it at the end of
 * the buffer: refused), and a vector whose count runs past the end. */
START_TEST(test_strings_and_vectors)
{
    uint8_t b[32];
    minimal(b);
    memset(b + 24, 0, 8);
    tu_store_le(b + 20, 4, 4); /* field 0: a reference to 24 */
    tu_store_le(b + 24, 3, 4);
    memcpy(b + 28, "abc", 4); /* with its NUL */
    stg_fb fb;
    stg_fb_table t;
    stg_fb_str s;
    stg_fb_vec v;
    bool present = false;
    ck_assert_int_eq(root_of(b, 32, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_string(&fb, &t, 0, &s, &present), STG_PARSE_OK);
    ck_assert(present);
    ck_assert_uint_eq(s.len, 3);
    ck_assert_int_eq(memcmp(s.bytes, "abc", 3), 0);
    b[31] = 'd'; /* no NUL inside the buffer */
    ck_assert_int_eq(root_of(b, 32, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_string(&fb, &t, 0, &s, &present), STG_PARSE_MALFORMED);
    tu_store_le(b + 24, 1, 4); /* "a" then 'b' where the NUL must be */
    ck_assert_int_eq(root_of(b, 32, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_string(&fb, &t, 0, &s, &present), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(fb.detail.offset, 29);
    tu_store_le(b + 24, 2, 4); /* two u32 elements need 8 bytes; 4 are left */
    ck_assert_int_eq(root_of(b, 32, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_vector(&fb, &t, 0, 4, &v), STG_PARSE_MALFORMED);
    tu_store_le(b + 24, 1, 4); /* one is fine */
    ck_assert_int_eq(root_of(b, 32, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_vector(&fb, &t, 0, 4, &v), STG_PARSE_OK);
    ck_assert_uint_eq(v.count, 1);
    tu_store_le(b + 20, 0, 4); /* a reference of 0 points at itself */
    ck_assert_int_eq(root_of(b, 32, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_vector(&fb, &t, 0, 4, &v), STG_PARSE_MALFORMED);
}
END_TEST

/* A vector of 1000 references to one table: reading them all needs 2000 visits; a budget of
 * 100 stops the walk with LIMIT (a DAG of shared offsets costs visits, never time); a budget
 * large enough reads them all. */
START_TEST(test_shared_offsets_cost_visits)
{
    enum { N = 1000 };
    size_t len = 24 + 4 + 4 * N;
    uint8_t *b = calloc(1, len);
    ck_assert_ptr_nonnull(b);
    minimal(b);
    tu_store_le(b + 20, 4, 4); /* field 0 -> vector at 24 */
    tu_store_le(b + 24, N, 4);
    for (size_t i = 0; i < N; i++) {
        size_t at = 28 + 4 * i;
        tu_store_le(b + at, 16 + len - at, 4); /* placeholder, replaced below */
    }
    /* every element points at one table placed at the end: reuse the root's vtable */
    b = realloc(b, len + 8);
    ck_assert_ptr_nonnull(b);
    size_t tail = len;
    tu_store_le(b + tail, (uint64_t)(tail - 8), 4);
    tu_store_le(b + tail + 4, 1, 4);
    for (size_t i = 0; i < N; i++) {
        size_t at = 28 + 4 * i;
        tu_store_le(b + at, tail - at, 4);
    }
    len += 8;
    for (int pass = 0; pass < 2; pass++) {
        stg_fb fb;
        stg_fb_table t, e;
        stg_fb_vec v;
        stg_fb_init(&fb, b, len, pass == 0 ? 100 : 4 * N);
        ck_assert_int_eq(stg_fb_root(&fb, &t), STG_PARSE_OK);
        ck_assert_int_eq(stg_fb_vector(&fb, &t, 0, 4, &v), STG_PARSE_OK);
        stg_parse_status st = STG_PARSE_OK;
        for (uint32_t i = 0; i < v.count && st == STG_PARSE_OK; i++) {
            st = stg_fb_vec_table(&fb, &v, i, &e);
        }
        ck_assert_int_eq(st, pass == 0 ? STG_PARSE_LIMIT : STG_PARSE_OK);
    }
    ck_assert_uint_le(stg_fb_visit_budget(SIZE_MAX), STG_FB_VISITS_CEILING);
    free(b);
}
END_TEST

/* A chain of tables, each field 0 referencing the next: past the depth ceiling the walk stops. */
START_TEST(test_depth_ceiling)
{
    enum { N = STG_FB_DEPTH_CEILING + 8 };
    size_t len = 16 + 8 * (size_t)N;
    uint8_t *b = calloc(1, len);
    ck_assert_ptr_nonnull(b);
    minimal(b);
    for (size_t i = 0; i < N; i++) {
        size_t pos = 16 + 8 * i;
        tu_store_le(b + pos, pos - 8, 4);
        tu_store_le(b + pos + 4, i + 1 < N ? 4 : 0, 4);
    }
    stg_fb fb;
    stg_fb_table t;
    bool present = true;
    ck_assert_int_eq(root_of(b, len, &fb, &t), STG_PARSE_OK);
    stg_parse_status st = STG_PARSE_OK;
    unsigned levels = 0;
    while (st == STG_PARSE_OK && levels < N - 1) {
        st = stg_fb_table_field(&fb, &t, 0, &t, &present);
        levels += st == STG_PARSE_OK;
    }
    ck_assert_int_eq(st, STG_PARSE_LIMIT);
    ck_assert_uint_eq(levels, STG_FB_DEPTH_CEILING);
    free(b);
}
END_TEST

/* A union whose type is set but whose value is absent is refused; type 0 (NONE) is not. */
START_TEST(test_union_without_value)
{
    uint8_t b[24];
    minimal(b);
    tu_store_le(b + 8, 8, 2); /* vtable: fields 0 (type, at 4) and 1 (value, absent) */
    tu_store_le(b + 12, 4, 2);
    tu_store_le(b + 14, 0, 2);
    tu_store_le(b + 16, 8, 4);
    stg_fb fb;
    stg_fb_table t, v;
    uint8_t type = 9;
    tu_store_le(b + 20, 0, 4);
    ck_assert_int_eq(root_of(b, 24, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_union(&fb, &t, 0, &type, &v), STG_PARSE_OK);
    ck_assert_uint_eq(type, 0);
    tu_store_le(b + 20, 3, 4);
    ck_assert_int_eq(root_of(b, 24, &fb, &t), STG_PARSE_OK);
    ck_assert_int_eq(stg_fb_union(&fb, &t, 0, &type, &v), STG_PARSE_MALFORMED);
}
END_TEST

/* ------------------------------------------------------------------------ dispatcher */

/* The offset of the first finding of code, -1 when there is none. */
static long long offset_of(const stg_report *r, stg_code code)
{
    long i = tu_find(r, code);
    return i < 0 ? -1 : (long long)stg_report_at(r, (size_t)i)->offset;
}

static stg_report *scan_named(const void *buf, size_t len, const char *name)
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

/* The identifier decides whatever the name; a .tflite name over other bytes is a mismatch; an
 * ExecuTorch identifier needs its two digits. */
START_TEST(test_identifiers_and_names)
{
    uint8_t b[24];
    minimal(b);
    stg_report *r = scan_named(b, sizeof b, "weights.bin");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TFLITE);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    memcpy(b + 4, "ET12", 4);
    r = scan_named(b, sizeof b, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_EXECUTORCH);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    memcpy(b + 4, "ETab", 4); /* near miss: no digits */
    ck_assert(!stg_executorch_sniff(b, sizeof b));
    r = scan_named(b, sizeof b, "model.pte");
    ck_assert_int_ne(stg_report_format(r), STG_FMT_EXECUTORCH);
    ck_assert(tu_find(r, STG_FORMAT_MISMATCH) >= 0);
    stg_report_free(r);
}
END_TEST

/* An ExecuTorch extended header shorter than 24 bytes is malformed; 24 is fine. */
START_TEST(test_executorch_header)
{
    uint8_t b[48];
    memset(b, 0, sizeof b);
    tu_store_le(b, 40, 4);
    memcpy(b + 4, "ET12", 4);
    memcpy(b + 8, "eh00", 4);
    tu_store_le(b + 12, 24, 4);
    tu_store_le(b + 16, 48, 8); /* program size */
    tu_store_le(b + 32, 6, 2);  /* vtable at 32: size 6, table size 8, field 0 at 4 */
    tu_store_le(b + 34, 8, 2);
    tu_store_le(b + 36, 4, 2);
    tu_store_le(b + 40, 8, 4); /* the Program at 40 */
    tu_store_le(b + 44, 0, 4); /* version 0 */
    stg_report *r = scan_named(b, sizeof b, "model.pte");
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    stg_report_free(r);
    tu_store_le(b + 12, 8, 4);
    r = scan_named(b, sizeof b, "model.pte");
    ck_assert(offset_of(r, STG_FLATBUFFER_MALFORMED) == 8);
    stg_report_free(r);
}
END_TEST

/* A pickle with a table footer appended stays a pickle (the table's magic is at the end and is
 * asked after the pickle entry); the footer alone under its name is a table. */
START_TEST(test_table_magic_never_hides_a_pickle)
{
    static const char evil[] = "cos\nsystem\n(S'id'\ntR.";
    uint8_t b[sizeof evil - 1 + STG_SSTABLE_FOOTER_LEN];
    memcpy(b, evil, sizeof evil - 1);
    uint8_t *footer = b + sizeof evil - 1;
    memset(footer, 0, STG_SSTABLE_FOOTER_LEN);
    tu_store_le(footer + 40, STG_SSTABLE_MAGIC, 8);
    ck_assert(stg_sstable_sniff(b, sizeof b));
    stg_report *r = scan_named(b, sizeof b, "variables.index");
    ck_assert_int_ne(stg_report_format(r), STG_FMT_TF_VARIABLES_INDEX);
    ck_assert(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS) >= 0);
    stg_report_free(r);
}
END_TEST

/* CSV/JSONL: text is a quiet dataset; binary under .csv goes back to the unknown-content route
 * (format_mismatch); a JSONL line that is no JSON is a warning, blank lines are not. */
START_TEST(test_text_datasets)
{
    static const char csv[] = "a,b\n1,2\n";
    static const char jsonl[] = "{\"a\": 1}\n\n[2]\n";
    static const char badjsonl[] = "{\"a\": 1}\n{\"a\": \n";
    static const uint8_t binary[] = {0x00, 0x01, 0xff, 0x10};
    stg_report *r = scan_named(csv, sizeof csv - 1, "train.csv");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_DATASET_TEXT);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    r = scan_named(jsonl, sizeof jsonl - 1, "train.jsonl");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    r = scan_named(badjsonl, sizeof badjsonl - 1, "train.jsonl");
    ck_assert_int_eq(offset_of(r, STG_DATASET_TEXT_INVALID), 9);
    stg_report_free(r);
    r = scan_named(badjsonl, sizeof badjsonl - 1, "train.csv"); /* no JSON rule for CSV */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    /* a name that decides a text format claims nothing for bytes that are no text: they are
     * judged as unnamed content (dispatch/check.c), here format_unknown */
    r = scan_named(binary, sizeof binary, "train.csv");
    ck_assert(tu_find(r, STG_FORMAT_UNKNOWN) >= 0);
    ck_assert(tu_find(r, STG_FORMAT_MISMATCH) < 0);
    stg_report_free(r);
    /* a protocol-0 pickle is text: under .csv it is still the pickle pickle.load would run */
    static const char evil[] = "cos\nsystem\n(S'id'\ntR.";
    r = scan_named(evil, sizeof evil - 1, "train.csv");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PICKLE);
    ck_assert(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS) >= 0);
    stg_report_free(r);
    static const char city[] = "city,name\nParis,1\n"; /* near miss: 'c' starts no import */
    r = scan_named(city, sizeof city - 1, "train.csv");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_DATASET_TEXT);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
}
END_TEST

/* Parquet: both magics and a footer length inside the file; a cut file is malformed. */
START_TEST(test_parquet_framing)
{
    uint8_t b[32];
    memset(b, 0, sizeof b);
    memcpy(b, "PAR1", 4);
    tu_store_le(b + 24, 8, 4);
    memcpy(b + 28, "PAR1", 4);
    stg_report *r = scan_named(b, sizeof b, "data.parquet");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PARQUET);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    tu_store_le(b + 24, 21, 4); /* 21 + 12 > 32 */
    r = scan_named(b, sizeof b, "data.parquet");
    ck_assert_int_eq(offset_of(r, STG_DATASET_MALFORMED), 24);
    stg_report_free(r);
    r = scan_named(b, 30, "data.parquet"); /* the end magic cut */
    ck_assert_int_eq(offset_of(r, STG_DATASET_MALFORMED), 26);
    stg_report_free(r);
}
END_TEST

/* A variables.index footer whose handles are varints cut by the magic, or that point past the
 * data: tf_index_malformed; an empty table (empty index block) is fine. */
START_TEST(test_table_footer)
{
    uint8_t b[8 + STG_SSTABLE_FOOTER_LEN];
    memset(b, 0, sizeof b);
    /* an index block of 4 bytes (0 restarts... one restart at 0) at 0, trailer at 4..8 */
    tu_store_le(b, 0, 4);
    uint8_t *f = b + 8;
    f[0] = 0; /* metaindex: offset 0 size 0 */
    f[1] = 0;
    f[2] = 0; /* index: offset 0 size 3 -> 3 + 5 = 8 */
    f[3] = 3;
    tu_store_le(f + 40, STG_SSTABLE_MAGIC, 8);
    stg_sstable_info info;
    stg_parse_detail d;
    /* size 3 is below the 4-byte restart count */
    ck_assert_int_eq(stg_sstable_check(b, sizeof b, &info, &d), STG_PARSE_MALFORMED);
    f[3] = 4; /* 4 + 5 > 8 */
    ck_assert_int_eq(stg_sstable_check(b, sizeof b, &info, &d), STG_PARSE_MALFORMED);
    uint8_t ok[12 + STG_SSTABLE_FOOTER_LEN];
    memset(ok, 0, sizeof ok);
    uint8_t *g = ok + 12;
    g[3] = 4; /* index block: offset 0 size 4 (restart count 0), trailer 4..9 */
    tu_store_le(g + 40, STG_SSTABLE_MAGIC, 8);
    ck_assert_int_eq(stg_sstable_check(ok, sizeof ok, &info, &d), STG_PARSE_OK);
    ck_assert_uint_eq(info.data_blocks, 0);
    stg_report *r = scan_named(ok, sizeof ok, "variables.index");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TF_VARIABLES_INDEX);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    memset(g, 0x80, 40); /* varints that never end inside the footer */
    r = scan_named(ok, sizeof ok, "variables.index");
    ck_assert_int_eq(offset_of(r, STG_TF_INDEX_MALFORMED), 12);
    stg_report_free(r);
}
END_TEST

static Suite *flatbuf_suite(void)
{
    Suite *s = suite_create("flatbuf");
    TCase *tc = tcase_create("walker");
    tcase_add_test(tc, test_minimal_table);
    tcase_add_test(tc, test_offsets_leave_the_buffer);
    tcase_add_test(tc, test_strings_and_vectors);
    tcase_add_test(tc, test_shared_offsets_cost_visits);
    tcase_add_test(tc, test_depth_ceiling);
    tcase_add_test(tc, test_union_without_value);
    suite_add_tcase(s, tc);
    tc = tcase_create("dispatch");
    tcase_add_test(tc, test_identifiers_and_names);
    tcase_add_test(tc, test_executorch_header);
    tcase_add_test(tc, test_table_magic_never_hides_a_pickle);
    tcase_add_test(tc, test_text_datasets);
    tcase_add_test(tc, test_parquet_framing);
    tcase_add_test(tc, test_table_footer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(flatbuf_suite());
}
