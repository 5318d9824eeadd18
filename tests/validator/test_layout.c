/* Stage 3 (tensor table against the data section): range, overlap, coverage and alignment codes
 * with their offsets (data_offsets token, or the first data byte concerned), near misses, and
 * the deterministic sort. */
#include <stdio.h>

#include "sttest.h"

#define E STG_SEV_ERROR
#define W STG_SEV_WARNING

/* "name":{"dtype":DT,"shape":[SH],"data_offsets":[B,E]} */
/* The name of record i (stg_st_name) and its length. */
static const char *rec_name(const stg_st_header *h, size_t i, size_t *len)
{
    const char *name;
    size_t l;
    stg_st_name(h, &h->tensors[i], &name, &l);
    if (len != NULL) {
        *len = l;
    }
    return name;
}

static char *entry(char *p, const char *name, const char *dt, const char *shape,
                   unsigned long long b, unsigned long long e)
{
    return p + sprintf(p, "\"%s\":{\"dtype\":\"%s\",\"shape\":[%s],\"data_offsets\":[%llu,%llu]}",
                       name, dt, shape, b, e);
}

/* Stages 1-3 over a file of hdr and data_len data bytes, keeping the table in *h (released by
 * the caller, with the report and *file). */
static stg_report *staged(const char *hdr, uint64_t data_len, stg_profile profile, stg_st_header *h,
                          uint8_t **file)
{
    size_t len;
    *file = st_file(hdr, 0, data_len, &len);
    stg_limits lim = st_limits(profile);
    stg_report *r = stg_report_new(&lim);
    stg_st_header_init(h);
    stg_st_validate(*file, len, &lim, r, h);
    stg_report_finish(r);
    return r;
}

START_TEST(test_out_of_range)
{
    const char *h = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
    st_check_both(h, 3, STG_OFFSETS_OUT_OF_RANGE, E, E, st_at(h, "[0,4]"));
    st_check_clean(h, 4, STG_OFFSETS_OUT_OF_RANGE);
    /* a zero-size tensor past the end is out of range too (the reference: InvalidOffset) */
    const char *z = "{\"c\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                    "\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[5,5]}}";
    st_check_both(z, 1, STG_OFFSETS_OUT_OF_RANGE, E, E, st_at(z, "[5,5]"));
    const char *zok = "{\"c\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[1,1]}}";
    st_check_clean(zok, 1, STG_OFFSETS_OUT_OF_RANGE);
    /* offsets near 2^64 whose sum the reference computes unchecked */
    const char *big = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2305843009213693951],"
                      "\"data_offsets\":[16140901064495857664,18446744073709551615]}}";
    st_check_both(big, 0, STG_OFFSETS_OUT_OF_RANGE, E, E, st_at(big, "[1614"));
}
END_TEST

START_TEST(test_overlap)
{
    const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                    "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[1,3]}}";
    st_check_both(h, 3, STG_OFFSETS_OVERLAP, E, E, st_at(h, "[1,3]"));
    stg_report *r = st_run(h, 0, 3, STG_PROFILE_STRICT);
    const stg_finding *f = st_find(r, STG_OFFSETS_OVERLAP);
    ck_assert_uint_eq(f->tensor_len, 1);
    ck_assert_int_eq(f->tensor[0], 'b');
    stg_report_free(r);
    /* exact alias of a non-empty range */
    const char *alias = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                        "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}";
    st_check_both(alias, 2, STG_OFFSETS_OVERLAP, E, E, st_at(alias, "[0,2]}}"));
    /* a zero-size tensor pointing inside another's bytes (the reference refuses it) */
    const char *inside = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                         "\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]}}";
    st_check_both(inside, 4, STG_OFFSETS_OVERLAP, E, E, st_at(inside, "[2,2]"));
    /* near misses: zero-size tensors at boundaries, several at one offset */
    const char *ok = "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[3,0,5],\"data_offsets\":[0,0]},"
                     "\"c\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                     "\"d\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,4]},"
                     "\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,4]}}";
    st_check_clean(ok, 4, STG_OFFSETS_OVERLAP);
}
END_TEST

START_TEST(test_gap)
{
    const char *first = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}";
    size_t n = strlen(first);
    st_check_both(first, 2, STG_DATA_GAP, E, E, 8 + n); /* data byte 0 */
    const char *hole = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                       "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]}}";
    st_check_both(hole, 3, STG_DATA_GAP, E, E, 8 + strlen(hole) + 1);
    const char *ok = "{\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
                     "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    st_check_clean(ok, 2, STG_DATA_GAP);
}
END_TEST

START_TEST(test_trailing)
{
    const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    st_check_both(h, 2, STG_DATA_TRAILING, E, E, 8 + strlen(h) + 1);
    st_check_clean(h, 1, STG_DATA_TRAILING);
    /* no tensors at all: every data byte trails */
    st_check_both("{}", 1, STG_DATA_TRAILING, E, E, 10);
    st_check_both("{\"__metadata__\":{\"k\":\"v\"}}", 3, STG_DATA_TRAILING, E, E, 8 + 26);
    st_check_clean("{}", 0, STG_DATA_TRAILING);
}
END_TEST

START_TEST(test_header_not_padded)
{
    /* "{}" + 5 spaces: data starts at 15 */
    size_t len;
    uint8_t *b = st_file("{}", 5, 0, &len);
    for (int p = 0; p < 2; p++) {
        stg_limits lim = st_limits((stg_profile)p);
        stg_report *r = st_run_lim(b, len, &lim);
        st_expect(r, STG_HEADER_NOT_PADDED, W, 15);
        st_expect_verdict(r, STG_VERDICT_WARN);
        stg_report_free(r);
    }
    free(b);
    b = st_file("{}", 6, 0, &len);
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    stg_report *r = st_run_lim(b, len, &lim);
    ck_assert_int_eq(tu_find(r, STG_HEADER_NOT_PADDED), -1);
    st_expect_verdict(r, STG_VERDICT_OK);
    stg_report_free(r);
    free(b);
}
END_TEST

START_TEST(test_tensor_misaligned)
{
    const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                    "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}";
    st_check_both(h, 6, STG_TENSOR_MISALIGNED, W, W, st_at(h, "[2,6]"));
    const char *ok = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                     "\"c\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[8,9]},"
                     "\"z\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[9,9]}}";
    st_check_clean(ok, 9, STG_TENSOR_MISALIGNED);
}
END_TEST

/* Layout checks are skipped when the schema failed (they depend on a valid table). */
START_TEST(test_layout_skipped_after_schema_error)
{
    const char *h = "{\"a\":{\"dtype\":\"Q8\",\"shape\":[1],\"data_offsets\":[5,6]}}";
    stg_report *r = st_run(h, 0, 0, STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_DTYPE_UNKNOWN);
    stg_report_free(r);
}
END_TEST

/* (begin, end, name) order whatever the JSON order, for a large reversed table too. */
START_TEST(test_sorted_table)
{
    enum { N = 20000 };
    char *hdr = malloc((size_t)N * 96 + 64);
    char *p = hdr;
    *p++ = '{';
    /* reversed: t19999 at [0,2] ... t0 at the end; plus zero-size ties at 0 named z, y */
    for (int i = N - 1; i >= 0; i--) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        p = entry(p, name, "BF16", "1", (unsigned long long)(N - 1 - i) * 2,
                  (unsigned long long)(N - i) * 2);
        *p++ = ',';
    }
    p = entry(p, "z", "F32", "0", 0, 0);
    *p++ = ',';
    p = entry(p, "y", "F32", "0", 0, 0);
    *p++ = '}';
    *p = '\0';
    size_t len;
    uint8_t *b = st_file(hdr, 0, (size_t)N * 2, &len);
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    stg_report *r = stg_report_new(&lim);
    stg_st_header h;
    stg_st_header_init(&h);
    stg_st_validate(b, len, &lim, r, &h);
    stg_report_finish(r);
    ck_assert_msg(stg_report_verdict(r) <= STG_VERDICT_WARN, "%s", tu_describe(r));
    ck_assert(h.layout_ok);
    ck_assert_uint_eq(h.tensor_count, N + 2);
    ck_assert_int_eq(rec_name(&h, 0, NULL)[0], 'y');
    ck_assert_int_eq(rec_name(&h, 1, NULL)[0], 'z');
    for (size_t i = 2; i < h.tensor_count; i++) {
        ck_assert_uint_eq(h.tensors[i].begin, (i - 2) * 2);
        ck_assert_uint_eq(h.tensors[i].end - h.tensors[i].begin, 2);
    }
    ck_assert_uint_eq(h.tensors[h.tensor_count - 1].end, (uint64_t)N * 2);
    stg_st_header_release(&h);
    stg_report_free(r);
    free(b);
    free(hdr);
}
END_TEST

START_TEST(test_many_overlaps_bounded_findings)
{
    /* 1000 aliases of one range: every one is reported (up to max_findings), invalid */
    enum { N = 1000 };
    char *hdr = malloc((size_t)N * 80 + 8);
    char *p = hdr;
    *p++ = '{';
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        p = entry(p, name, "F32", "2,2", 0, 16);
        *p++ = i + 1 < N ? ',' : '}';
    }
    *p = '\0';
    stg_report *r = st_run(hdr, 0, 16, STG_PROFILE_COMPAT);
    st_expect_verdict(r, STG_VERDICT_INVALID);
    ck_assert_uint_eq(tu_count(r, STG_OFFSETS_OVERLAP), N - 1);
    stg_report_free(r);
    free(hdr);
}
END_TEST

/* Stage 2 notes when records come in strictly increasing (begin, end) (the writers' order), so
 * stage 3 skips its order check; a tie or a step back leaves the check (and the sort) to it. */
START_TEST(test_data_order_noted)
{
    for (int variant = 0; variant < 3; variant++) {
        char hdr[1024];
        char *p = hdr;
        *p++ = '{';
        p = entry(p, "a", "U8", "2", 0, 2);
        *p++ = ',';
        p = entry(p, "b", "U8", "2", 2, 4);
        *p++ = ',';
        if (variant == 0) { /* ordered */
            p = entry(p, "z", "U8", "0", 4, 4);
        } else if (variant == 1) { /* a tie on (begin, end), names out of order */
            p = entry(p, "z", "U8", "0", 4, 4);
            *p++ = ',';
            p = entry(p, "y", "U8", "0", 4, 4);
        } else { /* a step back */
            p = entry(p, "z", "U8", "0", 4, 4);
            *p++ = ',';
            p = entry(p, "c", "U8", "0", 0, 0);
        }
        *p++ = '}';
        *p = '\0';
        uint8_t *b;
        stg_st_header h;
        stg_report *r = staged(hdr, 4, STG_PROFILE_STRICT, &h, &b);
        ck_assert_msg(h.data_order == (variant == 0), "variant %d", variant);
        if (variant == 1) {
            ck_assert(h.layout_ok);
            ck_assert_int_eq(rec_name(&h, 2, NULL)[0], 'y');
            ck_assert_int_eq(rec_name(&h, 3, NULL)[0], 'z');
        } else if (variant == 2) {
            /* c (zero-size at 0) is sorted first, before a, and overlaps nothing */
            ck_assert_int_eq(rec_name(&h, 0, NULL)[0], 'c');
            ck_assert_msg(h.layout_ok, "%s", tu_describe(r));
        } else {
            ck_assert(h.layout_ok);
        }
        stg_st_header_release(&h);
        stg_report_free(r);
        free(b);
    }
}
END_TEST

/* Ties on (begin, end) are broken by the name bytes, a name that is a prefix first: the empty
 * name (strict: only a warning's worth in compat) sorts before every other. */
START_TEST(test_sort_ties_by_name)
{
    char hdr[1024];
    char *p = hdr;
    *p++ = '{';
    p = entry(p, "b", "U8", "1", 0, 1);
    *p++ = ',';
    p = entry(p, "ab", "F32", "0", 0, 0);
    *p++ = ',';
    p = entry(p, "a", "F32", "0", 0, 0);
    *p++ = ',';
    p = entry(p, "", "U8", "0", 0, 0);
    *p++ = '}';
    *p = '\0';
    uint8_t *b;
    stg_st_header h;
    stg_report *r = staged(hdr, 1, STG_PROFILE_COMPAT, &h, &b);
    ck_assert(h.layout_ok);
    ck_assert_uint_eq(h.tensor_count, 4);
    static const char *const order[] = {"", "a", "ab", "b"};
    for (size_t i = 0; i < 4; i++) {
        size_t nl;
        const char *name = rec_name(&h, i, &nl);
        ck_assert_uint_eq(nl, strlen(order[i]));
        ck_assert_int_eq(memcmp(name, order[i], strlen(order[i])), 0);
    }
    /* compat: the empty name is a warning, the layout is fine */
    st_expect_verdict(r, STG_VERDICT_WARN);
    ck_assert_uint_eq(tu_count(r, STG_TENSOR_NAME_INVALID), 1);
    stg_st_header_release(&h);
    stg_report_free(r);
    free(b);
}
END_TEST

/* The overlap message names the tensor whose bytes were claimed first. */
START_TEST(test_overlap_names_owner)
{
    const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                    "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]}}";
    stg_report *r = st_run(h, 0, 4, STG_PROFILE_STRICT);
    const stg_finding *f = st_find(r, STG_OFFSETS_OVERLAP);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->offset, st_at(h, "[2,4]"));
    char want[160];
    snprintf(want, sizeof want,
             "the tensor's range [2, 4) overlaps the tensor whose data_offsets are at byte %llu",
             (unsigned long long)st_at(h, "[0,4]"));
    ck_assert_str_eq(f->message, want);
    stg_report_free(r);
}
END_TEST

/* Stage 3 called directly: it needs a table that passed stage 2, and its sort index is charged
 * to the same memory budget. */
static const char direct_names[] = "\"c\" \"a\" \"b\"";

/* A record of direct_names' key at key_pos, its data_offsets token at file offset `at`. */
static stg_st_tensor make_tensor(uint32_t key_pos, uint64_t begin, uint64_t end, uint64_t at)
{
    stg_st_tensor t;
    memset(&t, 0, sizeof t);
    t.key_pos = key_pos;
    t.info = (uint32_t)STG_DTYPE_U8 | (uint32_t)(at - 8 - key_pos) << STG_ST_DELTA_SHIFT;
    t.begin = begin;
    t.end = end;
    return t;
}

START_TEST(test_layout_direct)
{
    stg_limits lim = st_limits(STG_PROFILE_STRICT);
    stg_st_tensor table[3] = {make_tensor(0, 2, 3, 300), make_tensor(4, 0, 1, 100),
                              make_tensor(8, 1, 2, 200)};
    stg_st_header h;
    stg_st_header_init(&h);
    h.hdr = (const uint8_t *)direct_names;
    h.header_len = strlen(direct_names);
    h.tensors = table;
    h.tensor_count = 3;
    h.data_start = 64;
    ck_assert_uint_eq(stg_st_offsets_offset(&h, &table[0]), 300);

    /* schema not ok: nothing is checked, nothing reported */
    stg_report *r = stg_report_new(&lim);
    h.schema_ok = false;
    h.layout_ok = true;
    stg_st_check_layout(&h, 1, &lim, r);
    ck_assert(!h.layout_ok);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_report_free(r);

    /* the index for sorting 3 records does not fit a budget of 3 bytes */
    h.schema_ok = true;
    stg_arena_init(&h.arena, 3);
    r = stg_report_new(&lim);
    stg_st_check_layout(&h, 3, &lim, r);
    stg_report_finish(r);
    ck_assert(!h.layout_ok);
    ck_assert_uint_eq(stg_report_count(r), 1);
    const stg_finding *f = stg_report_at(r, 0);
    ck_assert_int_eq(f->code, STG_LIMIT_EXCEEDED);
    ck_assert_str_eq(f->limit, "max_memory");
    ck_assert_uint_eq(f->offset, 64); /* the data section start */
    ck_assert_str_eq(f->message, "the configured limit max_memory (3) was exceeded");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID); /* the budget, not the system */
    ck_assert_int_eq(rec_name(&h, 0, NULL)[0], 'c');              /* left as it was */
    stg_report_free(r);

    /* with room for it: sorted, and a clean layout */
    stg_arena_init(&h.arena, 1u << 20);
    r = stg_report_new(&lim);
    stg_st_check_layout(&h, 3, &lim, r);
    stg_report_finish(r);
    ck_assert(h.layout_ok);
    ck_assert_uint_eq(stg_report_count(r), 0);
    size_t nl;
    ck_assert_int_eq(rec_name(&h, 0, &nl)[0], 'a');
    ck_assert_uint_eq(nl, 1);
    ck_assert_int_eq(rec_name(&h, 1, NULL)[0], 'b');
    ck_assert_int_eq(rec_name(&h, 2, NULL)[0], 'c');
    stg_report_free(r);
    stg_arena_release(&h.arena); /* the table is the test's, not the arena's */
}
END_TEST

static Suite *layout_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_out_of_range);
    tcase_add_test(tc, test_overlap);
    tcase_add_test(tc, test_gap);
    tcase_add_test(tc, test_trailing);
    tcase_add_test(tc, test_header_not_padded);
    tcase_add_test(tc, test_tensor_misaligned);
    tcase_add_test(tc, test_layout_skipped_after_schema_error);
    tcase_add_test(tc, test_sorted_table);
    tcase_add_test(tc, test_many_overlaps_bounded_findings);
    tcase_add_test(tc, test_data_order_noted);
    tcase_add_test(tc, test_sort_ties_by_name);
    tcase_add_test(tc, test_overlap_names_owner);
    tcase_add_test(tc, test_layout_direct);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(layout_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
