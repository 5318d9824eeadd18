/* The capped arena (parser/arena.c) and the allocation wrappers under it (parser/mem.c):
 * alignment, the cap at exactly N bytes and at N + 1 (block bookkeeping included), block growth
 * and clamping to what is left, requests too big to represent, growable buffers charged to the
 * same budget, the peak the memory formula is checked against, release; and the wrappers'
 * handling of zero sizes and of a length that cannot be NUL-terminated. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/arena.h"
#include "parser/mem.h"

#define OVH STG_ARENA_BLOCK_OVERHEAD

START_TEST(test_init)
{
    stg_arena a;
    memset(&a, 0x5A, sizeof a);
    stg_arena_init(&a, 12345);
    ck_assert_ptr_null(a.head);
    ck_assert_uint_eq(a.cap, 12345);
    ck_assert_uint_eq(a.reserved, 0);
    ck_assert_uint_eq(a.peak, 0);
    ck_assert_int_eq(a.failed, 0);
    ck_assert_int_eq(a.out_of_memory, 0);
    stg_arena_release(&a); /* nothing to free */
    ck_assert_uint_eq(a.reserved, 0);
}
END_TEST

START_TEST(test_alignment)
{
    stg_arena a;
    stg_arena_init(&a, 1u << 20);
    for (size_t align = 1; align <= 64; align *= 2) {
        /* an odd-sized allocation first, so the next one needs padding */
        ck_assert_ptr_nonnull(stg_arena_alloc(&a, 3, 1));
        uint8_t *p = stg_arena_alloc(&a, 10, align);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % align, 0);
        memset(p, 0xEE, 10); /* the bytes are usable (ASan checks the bounds) */
    }
    ck_assert_int_eq(a.failed, 0);
    ck_assert_uint_eq(a.reserved, OVH + STG_ARENA_MIN_BLOCK); /* all in the first block */
    stg_arena_release(&a);
}
END_TEST

START_TEST(test_bad_alignment)
{
    static const size_t bad[] = {0, 3, 6, 48, 128, 256};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stg_arena a;
        stg_arena_init(&a, 1u << 20);
        ck_assert_ptr_null(stg_arena_alloc(&a, 8, bad[i]));
        ck_assert_int_eq(a.failed, 1);
        ck_assert_int_eq(a.out_of_memory, 0); /* refused, not the system's failure */
        ck_assert_uint_eq(a.reserved, 0);
        stg_arena_release(&a);
    }
}
END_TEST

/* A first allocation of n bytes at `align` needs n + align usable bytes plus the bookkeeping:
 * a cap of exactly that is enough, one byte less is not. */
START_TEST(test_cap_exact)
{
    static const struct {
        size_t n, align;
    } rows[] = {{1, 1}, {100, 8}, {4096, 16}, {STG_ARENA_MIN_BLOCK, 64}, {0, 1}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t n = rows[i].n, align = rows[i].align;
        size_t cap = OVH + n + align;
        stg_arena a;
        stg_arena_init(&a, cap);
        void *p = stg_arena_alloc(&a, n, align);
        ck_assert_msg(p != NULL, "n=%zu align=%zu at cap %zu", n, align, cap);
        ck_assert_int_eq(a.failed, 0);
        ck_assert_uint_eq(a.reserved, cap); /* the block was clamped to the budget */
        ck_assert_uint_eq(a.peak, cap);
        stg_arena_release(&a);

        stg_arena_init(&a, cap - 1);
        ck_assert_ptr_null(stg_arena_alloc(&a, n, align));
        ck_assert_int_eq(a.failed, 1);
        ck_assert_int_eq(a.out_of_memory, 0);
        ck_assert_uint_eq(a.reserved, 0);
        stg_arena_release(&a);
    }
}
END_TEST

START_TEST(test_cap_zero)
{
    stg_arena a;
    stg_arena_init(&a, 0);
    ck_assert_ptr_null(stg_arena_alloc(&a, 0, 1));
    ck_assert_int_eq(a.failed, 1);
    stg_arena_init(&a, OVH); /* bookkeeping only: no room for even one byte */
    ck_assert_ptr_null(stg_arena_alloc(&a, 0, 1));
    ck_assert_uint_eq(a.reserved, 0);
}
END_TEST

START_TEST(test_block_tail_and_padding)
{
    /* A block of 6 usable bytes (clamped to the cap). After 5 bytes, one is left: a 4-aligned
     * request needs 3 bytes of padding there, and no second block fits the budget. */
    stg_arena a;
    stg_arena_init(&a, OVH + 6);
    uint8_t *p = stg_arena_alloc(&a, 5, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(a.reserved, OVH + 6);
    ck_assert_ptr_null(stg_arena_alloc(&a, 0, 4));
    ck_assert_int_eq(a.failed, 1);
    /* The one byte left is still handed out to a request that needs no padding. */
    a.failed = 0;
    uint8_t *q = stg_arena_alloc(&a, 1, 1);
    ck_assert_ptr_eq(q, p + 5);
    ck_assert_ptr_null(stg_arena_alloc(&a, 1, 1));
    ck_assert_uint_eq(a.reserved, OVH + 6);
    stg_arena_release(&a);
}
END_TEST

START_TEST(test_blocks_double_and_clamp)
{
    /* Budget for a 64 KiB block, then 100 KiB more: the second block would be 128 KiB but is
     * clamped to what the budget has left. */
    size_t second = 100 * 1024;
    size_t cap = 2 * OVH + STG_ARENA_MIN_BLOCK + second;
    stg_arena a;
    stg_arena_init(&a, cap);
    ck_assert_ptr_nonnull(stg_arena_alloc(&a, STG_ARENA_MIN_BLOCK - 1, 1));
    ck_assert_uint_eq(a.reserved, OVH + STG_ARENA_MIN_BLOCK);
    ck_assert_ptr_nonnull(stg_arena_alloc(&a, 2, 1)); /* does not fit: a new block */
    ck_assert_uint_eq(a.reserved, cap);
    /* everything in the second block can be used, then nothing more */
    ck_assert_ptr_nonnull(stg_arena_alloc(&a, second - 2, 1));
    ck_assert_ptr_null(stg_arena_alloc(&a, 1, 1));
    ck_assert_int_eq(a.failed, 1);
    ck_assert_uint_eq(a.peak, cap);
    stg_arena_release(&a);
    ck_assert_uint_eq(a.reserved, 0);
    ck_assert_uint_eq(a.peak, cap); /* the peak survives release */

    /* With room to spare, the second block is twice the first. */
    stg_arena_init(&a, 1u << 24);
    ck_assert_ptr_nonnull(stg_arena_alloc(&a, STG_ARENA_MIN_BLOCK, 1));
    ck_assert_uint_eq(a.reserved, OVH + STG_ARENA_MIN_BLOCK + 1); /* n + align */
    ck_assert_ptr_nonnull(stg_arena_alloc(&a, 8, 8));
    ck_assert_uint_eq(a.reserved, 2 * OVH + 3 * (STG_ARENA_MIN_BLOCK + 1));
    stg_arena_release(&a);
}
END_TEST

START_TEST(test_large_request)
{
    /* A request bigger than the doubling: the block is sized for it (n + align). */
    stg_arena a;
    stg_arena_init(&a, 1u << 24);
    uint8_t *p = stg_arena_alloc(&a, 1000000, 16);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(a.reserved, OVH + 1000000 + 16);
    p[999999] = 1;
    stg_arena_release(&a);

    /* Sizes that cannot be represented with the bookkeeping are refused before any
     * arithmetic can wrap; the arena stays usable. */
    stg_arena_init(&a, SIZE_MAX);
    ck_assert_ptr_null(stg_arena_alloc(&a, SIZE_MAX, 8));
    ck_assert_int_eq(a.failed, 1);
    ck_assert_int_eq(a.out_of_memory, 0);
    ck_assert_ptr_null(stg_arena_alloc(&a, SIZE_MAX - OVH - 7, 8));
    ck_assert_uint_eq(a.reserved, 0);
    ck_assert_ptr_nonnull(stg_arena_alloc(&a, 8, 8));
    stg_arena_release(&a);
}
END_TEST

START_TEST(test_grow_buffer)
{
    stg_arena a;
    stg_arena_init(&a, 20000);
    void *buf = NULL;
    size_t cap = 0;
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &cap, 10), 0);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(cap, 4096); /* the smallest size */
    ck_assert_uint_eq(a.reserved, 4096);
    memset(buf, 1, cap);
    /* Already big enough: nothing changes. */
    void *before = buf;
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &cap, 4096), 0);
    ck_assert_ptr_eq(buf, before);
    ck_assert_uint_eq(cap, 4096);
    /* Doubling, contents kept. */
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &cap, 5000), 0);
    ck_assert_uint_eq(cap, 8192);
    ck_assert_uint_eq(((uint8_t *)buf)[4095], 1);
    ck_assert_uint_eq(a.reserved, 8192);
    /* The next doubling (16384) fits; the one after (32768) is clamped to the budget. */
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &cap, 16000), 0);
    ck_assert_uint_eq(cap, 16384);
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &cap, 17000), 0);
    ck_assert_uint_eq(cap, 20000);
    ck_assert_uint_eq(a.reserved, 20000);
    ck_assert_uint_eq(a.peak, 20000);
    /* N + 1 past the budget: refused, buffer kept as it was. */
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &cap, 20001), -1);
    ck_assert_int_eq(a.failed, 1);
    ck_assert_int_eq(a.out_of_memory, 0);
    ck_assert_uint_eq(cap, 20000);
    ck_assert_uint_eq(((uint8_t *)buf)[4095], 1);
    /* Sizes near SIZE_MAX stop doubling instead of wrapping, and are refused by the budget. */
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &cap, SIZE_MAX - 1), -1);
    ck_assert_uint_eq(cap, 20000);
    stg_arena_free_buffer(&a, &buf, &cap);
    ck_assert_ptr_null(buf);
    ck_assert_uint_eq(cap, 0);
    ck_assert_uint_eq(a.reserved, 0);
    ck_assert_uint_eq(a.peak, 20000);
    stg_arena_release(&a);
}
END_TEST

/* A zeroed buffer is charged exactly (no doubling), raises the peak, and is refused at the
 * budget's N + 1 and on a count x size that wraps. */
START_TEST(test_zero_buffer)
{
    stg_arena a;
    stg_arena_init(&a, 10000);
    void *buf = NULL, *other = NULL;
    size_t cap = 0, ocap = 0;
    ck_assert_int_eq(stg_arena_zero_buffer(&a, &buf, &cap, 100, 24), 0);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(cap, 2400);
    ck_assert_uint_eq(a.reserved, 2400);
    ck_assert_uint_eq(a.peak, 2400);
    for (size_t i = 0; i < cap; i++) {
        ck_assert_uint_eq(((uint8_t *)buf)[i], 0);
    }
    /* Exactly what is left fits; one byte more does not. */
    ck_assert_int_eq(stg_arena_zero_buffer(&a, &other, &ocap, 7601, 1), -1);
    ck_assert_int_eq(a.failed, 1);
    ck_assert_int_eq(a.out_of_memory, 0);
    ck_assert_ptr_null(other);
    ck_assert_int_eq(stg_arena_zero_buffer(&a, &other, &ocap, 7600, 1), 0);
    ck_assert_uint_eq(a.reserved, 10000);
    ck_assert_uint_eq(a.peak, 10000);
    stg_arena_free_buffer(&a, &other, &ocap);
    /* A buffer already held, and a product that wraps, are refused. */
    ck_assert_int_eq(stg_arena_zero_buffer(&a, &buf, &cap, 1, 1), -1);
    ck_assert_uint_eq(cap, 2400);
    ck_assert_int_eq(stg_arena_zero_buffer(&a, &other, &ocap, SIZE_MAX / 2, 3), -1);
    stg_arena_free_buffer(&a, &buf, &cap);
    ck_assert_uint_eq(a.reserved, 0);
    ck_assert_uint_eq(a.peak, 10000);
    stg_arena_release(&a);
}
END_TEST

START_TEST(test_grow_buffer_shares_budget)
{
    /* Blocks and buffers draw on one budget: what a buffer holds is not there for blocks, and
     * comes back when it is freed. */
    size_t cap = 4096 + OVH + 100 + 1;
    stg_arena a;
    stg_arena_init(&a, cap);
    void *buf = NULL;
    size_t bcap = 0;
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &bcap, 1), 0);
    ck_assert_ptr_nonnull(stg_arena_alloc(&a, 100, 1)); /* a block of what is left: 101 */
    ck_assert_uint_eq(a.reserved, cap);
    ck_assert_ptr_null(stg_arena_alloc(&a, 2, 1));
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &bcap, 4097), -1);
    stg_arena_free_buffer(&a, &buf, &bcap);
    ck_assert_uint_eq(a.reserved, OVH + 101);
    a.failed = 0;
    ck_assert_int_eq(stg_arena_grow_buffer(&a, &buf, &bcap, 4096), 0);
    stg_arena_free_buffer(&a, &buf, &bcap);
    stg_arena_release(&a);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* parser/mem.c */

START_TEST(test_mem_zero_sizes)
{
    /* Zero sizes still give a distinct, freeable allocation (never NULL for "nothing"). */
    void *a = stg_mem_alloc(0);
    void *b = stg_mem_alloc(0);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    uint8_t *c = stg_mem_calloc(0, 16);
    uint8_t *d = stg_mem_calloc(16, 0);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(d);
    for (int i = 0; i < 16; i++) {
        ck_assert_uint_eq(c[i], 0); /* a zero count is one element of `size` bytes */
    }
    ck_assert_uint_eq(d[0], 0);
    /* realloc to 0 keeps a valid allocation (C leaves realloc(p, 0) implementation-defined). */
    void *e = stg_mem_realloc(a, 0);
    ck_assert_ptr_nonnull(e);
    void *f = stg_mem_realloc(NULL, 0);
    ck_assert_ptr_nonnull(f);
    uint8_t *g = stg_mem_realloc(NULL, 3);
    ck_assert_ptr_nonnull(g);
    memcpy(g, "abc", 3);
    g = stg_mem_realloc(g, 4096);
    ck_assert_int_eq(memcmp(g, "abc", 3), 0);
    stg_mem_free(e);
    stg_mem_free(f);
    stg_mem_free(g);
    stg_mem_free(b);
    stg_mem_free(c);
    stg_mem_free(d);
    stg_mem_free(NULL);
}
END_TEST

START_TEST(test_mem_strndup)
{
    char *s = stg_mem_strndup("abcdef", 3);
    ck_assert_str_eq(s, "abc");
    stg_mem_free(s);
    s = stg_mem_strndup("", 0);
    ck_assert_str_eq(s, "");
    stg_mem_free(s);
    s = stg_mem_strndup(NULL, 0); /* nothing to copy: the source is not read */
    ck_assert_str_eq(s, "");
    stg_mem_free(s);
    static const char nul[] = {'a', '\0', 'b'};
    s = stg_mem_strndup(nul, 3); /* embedded NUL copied: n bytes, then a terminator */
    ck_assert_int_eq(memcmp(s, nul, 3), 0);
    ck_assert_int_eq(s[3], '\0');
    stg_mem_free(s);
    /* n + 1 would wrap: refused rather than allocating 0 bytes and writing past them. */
    ck_assert_ptr_null(stg_mem_strndup("x", SIZE_MAX));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arena");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, test_init);
    tcase_add_test(tc, test_alignment);
    tcase_add_test(tc, test_bad_alignment);
    tcase_add_test(tc, test_cap_exact);
    tcase_add_test(tc, test_cap_zero);
    tcase_add_test(tc, test_block_tail_and_padding);
    tcase_add_test(tc, test_blocks_double_and_clamp);
    tcase_add_test(tc, test_large_request);
    tcase_add_test(tc, test_grow_buffer);
    tcase_add_test(tc, test_grow_buffer_shares_budget);
    tcase_add_test(tc, test_zero_buffer);
    tcase_add_test(tc, test_mem_zero_sizes);
    tcase_add_test(tc, test_mem_strndup);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
