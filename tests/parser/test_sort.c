/* parser/sort.h: the one sort of the library. Every case is checked against an independent
 * insertion sort (the expected output), on inputs that are the usual quicksort worst cases
 * (sorted, reversed, all equal, organ pipe, median-of-3 killer), random ones and the edges
 * n = 0, 1, 2; the comparison count must stay within the O(n log n) worst case. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/sort.h"
#include "testutil.h"

typedef struct counter {
    uint64_t calls;
} counter;

static int cmp_u32(const void *a, const void *b, void *ctx)
{
    uint32_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    if (ctx != NULL) {
        ((counter *)ctx)->calls++;
    }
    return x < y ? -1 : (x > y ? 1 : 0);
}

static uint64_t rng_state;

static uint32_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

enum shape { RANDOM, SORTED, REVERSED, EQUAL, FEW, ORGAN, KILLER, SHAPES };

static void fill(uint32_t *v, size_t n, enum shape s)
{
    for (size_t i = 0; i < n; i++) {
        switch (s) {
        case RANDOM: v[i] = rng_next(); break;
        case SORTED: v[i] = (uint32_t)i; break;
        case REVERSED: v[i] = (uint32_t)(n - i); break;
        case EQUAL: v[i] = 7; break;
        case FEW: v[i] = rng_next() % 3; break;
        case ORGAN: v[i] = (uint32_t)(i < n / 2 ? i : n - i); break;
        case KILLER: /* Musser's median-of-3 killer sequence */
            if (i < n / 2) {
                v[i] = (uint32_t)(i % 2 == 0 ? i + 1 : n / 2 + i + (n / 2 % 2 == 0 ? 0 : 1));
            } else {
                v[i] = (uint32_t)(2 * (i - n / 2 + 1));
            }
            break;
        case SHAPES: break;
        }
    }
}

static void insertion_sort(uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) {
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
}

static unsigned log2_ceil(size_t n)
{
    unsigned b = 0;
    while (((size_t)1 << b) < n) {
        b++;
    }
    return b;
}

static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 100, 1000, 4097};

START_TEST(test_shapes)
{
    rng_state = UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)(unsigned)_i;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint32_t *v = malloc((n + 1) * sizeof *v);
        uint32_t *want = malloc((n + 1) * sizeof *want);
        ck_assert_ptr_nonnull(v);
        ck_assert_ptr_nonnull(want);
        fill(v, n, (enum shape)_i);
        v[n] = 0xDEADBEEFu; /* sentinel: the sort stays inside base[0..n) */
        memcpy(want, v, n * sizeof *v);
        insertion_sort(want, n);
        counter c = {0};
        stg_sort(v, n, sizeof *v, cmp_u32, &c);
        ck_assert_msg(memcmp(v, want, n * sizeof *v) == 0, "shape %d n %zu: wrong order", _i, n);
        ck_assert_uint_eq(v[n], 0xDEADBEEFu);
        /* heapsort: at most 2 comparisons per level per sift, n / 2 + n sifts */
        uint64_t bound = 2ull * (n + n / 2) * (log2_ceil(n) + 1);
        ck_assert_msg(c.calls <= bound, "shape %d n %zu: %llu comparisons > %llu", _i, n,
                      (unsigned long long)c.calls, (unsigned long long)bound);
        free(v);
        free(want);
    }
}
END_TEST

START_TEST(test_empty_and_null)
{
    counter c = {0};
    stg_sort(NULL, 0, 4, cmp_u32, &c);
    stg_sort(NULL, 1, 4, cmp_u32, &c);
    ck_assert_uint_eq(c.calls, 0);
    uint32_t two[2] = {9, 3};
    stg_sort(two, 2, sizeof two[0], cmp_u32, &c);
    ck_assert_uint_eq(two[0], 3);
    ck_assert_uint_eq(two[1], 9);
    ck_assert_uint_le(c.calls, 3);
    uint32_t one[1] = {5};
    stg_sort(one, 1, sizeof one[0], cmp_u32, NULL);
    ck_assert_uint_eq(one[0], 5);
}
END_TEST

/* Odd element sizes move whole elements (the swap is by bytes). */
typedef struct rec {
    uint16_t key;
    char tag[17];
} rec;

static int cmp_rec(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const rec *x = a, *y = b;
    return x->key < y->key ? -1 : (x->key > y->key ? 1 : 0);
}

START_TEST(test_records_move_whole)
{
    rec v[50];
    for (size_t i = 0; i < 50; i++) {
        memset(&v[i], 0, sizeof v[i]);
        v[i].key = (uint16_t)((i * 37u) % 50u);
        memset(v[i].tag, 'a' + (int)(v[i].key % 26u), sizeof v[i].tag - 1);
    }
    stg_sort(v, 50, sizeof v[0], cmp_rec, NULL);
    for (size_t i = 0; i < 50; i++) {
        ck_assert_uint_eq(v[i].key, i);
        ck_assert_int_eq(v[i].tag[0], 'a' + (int)(i % 26u));
        ck_assert_int_eq(v[i].tag[15], 'a' + (int)(i % 26u));
    }
}
END_TEST

/* Index sorts with a tie-break by index give a stable order of records with equal keys. */
static int cmp_by_key_then_index(size_t a, size_t b, void *ctx)
{
    const uint32_t *keys = ctx;
    if (keys[a] != keys[b]) {
        return keys[a] < keys[b] ? -1 : 1;
    }
    return a < b ? -1 : (a > b ? 1 : 0);
}

START_TEST(test_index_stable_tiebreak)
{
    enum { N = 300 };
    uint32_t keys[N];
    size_t idx[N];
    uint32_t idx32[N];
    rng_state = 12345;
    for (size_t i = 0; i < N; i++) {
        keys[i] = rng_next() % 5;
        idx[i] = i;
        idx32[i] = (uint32_t)i;
    }
    stg_sort_index(idx, N, cmp_by_key_then_index, keys);
    stg_sort_index32(idx32, N, cmp_by_key_then_index, keys);
    for (size_t i = 1; i < N; i++) {
        ck_assert_uint_le(keys[idx[i - 1]], keys[idx[i]]);
        if (keys[idx[i - 1]] == keys[idx[i]]) {
            ck_assert_uint_lt(idx[i - 1], idx[i]); /* equal keys keep input order */
        }
        ck_assert_uint_eq(idx32[i], idx[i]);
    }
    ck_assert_uint_eq(idx32[0], idx[0]);
}
END_TEST

/* An element larger than the swap buffer is refused (left as it is), never overrun. */
START_TEST(test_oversized_element_refused)
{
    static uint8_t big[2][STG_SORT_MAX_ELEM + 1];
    big[0][0] = 2;
    big[1][0] = 1;
    counter c = {0};
    stg_sort(big, 2, sizeof big[0], cmp_u32, &c);
    ck_assert_uint_eq(c.calls, 0);
    ck_assert_uint_eq(big[0][0], 2);
}
END_TEST

static Suite *sort_suite(void)
{
    Suite *s = suite_create("sort");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_shapes, 0, SHAPES);
    tcase_add_test(tc, test_empty_and_null);
    tcase_add_test(tc, test_records_move_whole);
    tcase_add_test(tc, test_index_stable_tiebreak);
    tcase_add_test(tc, test_oversized_element_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(sort_suite());
}
