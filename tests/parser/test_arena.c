/* The capped arena (parser/arena.c) and the allocation wrappers under it (parser/mem.c):
 * alignment, the cap at exactly N bytes and at N + 1 (block bookkeeping included), block growth
 * and clamping to what is left, requests too big to represent, growable buffers charged to the
 * same budget, the peak the memory formula is checked against, release; and the wrappers'
 * handling of zero sizes and of a length that cannot be NUL-terminated, and their large blocks:
 * mapped at 2 MiB boundaries, grown in place or moved with their contents, kept for reuse
 * (zeroed again for calloc) up to the keep ceiling, and served by malloc when the table of
 * mappings is full, and a fork while another thread allocates. The mapping tests run where the build maps (Linux outside sanitizer builds;
 * the sanitizer builds check that malloc serves every size). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdbool.h>
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

/* Fills n bytes with a pattern that depends on the position and `seed`. */
static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)(i * 131u + seed + (i >> 12));
    }
}

static bool filled(const uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != (uint8_t)(i * 131u + seed + (i >> 12))) {
            return false;
        }
    }
    return true;
}

#define MIB ((size_t)1 << 20)

#ifdef __linux__
/* mremap as parser/mem.c sees it (tests/CMakeLists.txt links the test with --wrap=mremap): each
 * call with flags in fail_mremap_flags fails (0 = in place, or MREMAP_MAYMOVE | MREMAP_FIXED). */
static int fail_mremap_flags = -1;
static unsigned mremap_failed;
/* When set, a move (MREMAP_MAYMOVE | MREMAP_FIXED) that succeeds is followed, before mremap
 * returns, by a stg_mem_alloc of race_len bytes placed at the address just vacated: what another
 * thread's allocation can do between the move and the mover's next step. */
static bool race_after_move;
static size_t race_len;
static void *race_block;
static void *mmap_place_at; /* the next mmap(NULL, ...) is placed here */

void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (addr == NULL && mmap_place_at != NULL) {
        addr = mmap_place_at;
        flags |= MAP_FIXED_NOREPLACE;
        mmap_place_at = NULL;
    }
    return __real_mmap(addr, len, prot, flags, fd, off);
}

void *__real_mremap(void *old, size_t old_len, size_t new_len, int flags, ...);
void *__wrap_mremap(void *old, size_t old_len, size_t new_len, int flags, ...);
void *__wrap_mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *to = NULL;
    if ((flags & MREMAP_FIXED) != 0) {
        va_list ap;
        va_start(ap, flags);
        to = va_arg(ap, void *);
        va_end(ap);
    }
    if (flags == fail_mremap_flags || (fail_mremap_flags > 0 && flags == 0)) {
        mremap_failed++;
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *r = __real_mremap(old, old_len, new_len, flags, to);
    if (r != MAP_FAILED && (flags & MREMAP_FIXED) != 0 && race_after_move) {
        race_after_move = false;
        mmap_place_at = old;
        race_block = stg_mem_alloc(race_len);
        mmap_place_at = NULL;
    }
    return r;
}
#endif

START_TEST(test_mem_large_blocks_mapped)
{
    stg_mem_release_kept();
    size_t live0, kept0, bytes0;
    bool maps = stg_mem_maps(&live0, &kept0, &bytes0);
#ifdef STG_MEM_NO_MAPS
    ck_assert(!maps);
#else
    ck_assert(maps);
#endif
    if (!maps) {
        ck_assert_uint_eq(live0 + kept0 + bytes0, 0);
    }
    ck_assert_uint_eq(kept0, 0);
    uint8_t *p = stg_mem_alloc(MIB + 5);
    ck_assert_ptr_nonnull(p);
    fill(p, MIB + 5, 1);
    size_t live, kept, bytes;
    stg_mem_maps(&live, &kept, &bytes);
    if (maps) {
        ck_assert_uint_eq((uintptr_t)p % (2 * MIB), 0);
        ck_assert_uint_eq(live, live0 + 1);
    }
    /* below the threshold: malloc, never a mapping */
    uint8_t *small = stg_mem_alloc(STG_MEM_MAP_MIN - 1);
    ck_assert_ptr_nonnull(small);
    stg_mem_maps(&live, NULL, NULL);
    ck_assert_uint_eq(live, maps ? live0 + 1 : 0);
    stg_mem_free(small);
    /* freed: kept, and the next request that fits gets the same pages back, as they were
     * for alloc and zeroed for calloc */
    stg_mem_free(p);
    stg_mem_maps(&live, &kept, &bytes);
    if (maps) {
        ck_assert_uint_eq(live, live0);
        ck_assert_uint_eq(kept, 1);
        ck_assert_uint_eq(bytes, MIB + 4096);
    }
    uint8_t *q = stg_mem_alloc(MIB);
    ck_assert_ptr_nonnull(q);
    if (maps) {
        ck_assert_ptr_eq(q, p);
        ck_assert(filled(q, MIB, 1));
    }
    fill(q, MIB, 2);
    stg_mem_free(q);
    uint8_t *z = stg_mem_calloc(MIB / 8, 8);
    ck_assert_ptr_nonnull(z);
    if (maps) {
        ck_assert_ptr_eq(z, p);
    }
    size_t nonzero = 0; /* one assertion: Check records each one's place through a pipe */
    for (size_t i = 0; i < MIB; i++) {
        nonzero += z[i] != 0;
    }
    ck_assert_uint_eq(nonzero, 0);
    stg_mem_free(z);
    stg_mem_release_kept();
    stg_mem_maps(&live, &kept, &bytes);
    ck_assert_uint_eq(kept + bytes, 0);
    ck_assert_uint_eq(live, live0);
}
END_TEST

START_TEST(test_mem_large_realloc)
{
    stg_mem_release_kept();
    bool maps = stg_mem_maps(NULL, NULL, NULL);
    /* from malloc to a mapping: the contents come along */
    uint8_t *p = stg_mem_alloc(1000);
    ck_assert_ptr_nonnull(p);
    fill(p, 1000, 3);
    p = stg_mem_realloc(p, 3 * MIB);
    ck_assert_ptr_nonnull(p);
    ck_assert(filled(p, 1000, 3));
    if (maps) {
        ck_assert_uint_eq((uintptr_t)p % (2 * MIB), 0);
    }
    fill(p, 3 * MIB, 4);
    /* shrinking keeps the mapping where it is */
    uint8_t *same = stg_mem_realloc(p, MIB);
    ck_assert_ptr_nonnull(same);
    if (maps) {
        ck_assert_ptr_eq(same, p);
    }
    p = same; /* holds MIB bytes now (the mapping stays 3 MiB long) */
    ck_assert(filled(p, MIB, 4));
    /* growth where the address space after it is taken: the pages move, contents intact */
    uint8_t *guard = MAP_FAILED;
    if (maps) {
        guard = mmap(p + 3 * MIB, 4096, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (guard != MAP_FAILED && guard != p + 3 * MIB) {
            munmap(guard, 4096); /* an old kernel took the address as a hint */
            guard = MAP_FAILED;
        }
    }
    uint8_t *moved = stg_mem_realloc(p, 9 * MIB);
    ck_assert_ptr_nonnull(moved);
    if (guard != MAP_FAILED) {
        ck_assert_ptr_ne(moved, p);
        ck_assert_int_eq(munmap(guard, 4096), 0);
    }
    ck_assert(filled(moved, MIB, 4));
    fill(moved, 9 * MIB, 5);
    /* growth again: contents intact */
    uint8_t *grown = stg_mem_realloc(moved, 17 * MIB);
    ck_assert_ptr_nonnull(grown);
    ck_assert(filled(grown, 9 * MIB, 5));
    memset(grown + 9 * MIB, 0x77, 8 * MIB);
    stg_mem_free(grown);
    /* growth of a fresh mapping into the free space right after it (what its 2 MiB alignment
     * left unmapped, at least a page): in place */
    stg_mem_release_kept();
    uint8_t *f = stg_mem_alloc(3 * MIB);
    ck_assert_ptr_nonnull(f);
    fill(f, 3 * MIB, 6);
    bool space_free = false;
    if (maps) {
        uint8_t *probe = mmap(f + 3 * MIB, 4096, PROT_NONE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        space_free = probe == f + 3 * MIB;
        ck_assert(space_free);
        ck_assert_int_eq(munmap(probe, 4096), 0);
    }
    uint8_t *g = stg_mem_realloc(f, 3 * MIB + 4096);
    ck_assert_ptr_nonnull(g);
    if (space_free) {
        ck_assert_ptr_eq(g, f);
    }
    ck_assert(filled(g, 3 * MIB, 6));
    g[3 * MIB + 4095] = 1;
#ifdef __linux__
    /* neither in place nor by moving pages (an older kernel refuses to move a mapping of two
     * parts): copied, contents intact; and when no mapping is left, malloc takes the copy */
    fail_mremap_flags = MREMAP_MAYMOVE | MREMAP_FIXED;
    mremap_failed = 0;
    uint8_t *copied = stg_mem_realloc(g, 5 * MIB);
    ck_assert_ptr_nonnull(copied);
    ck_assert(filled(copied, 3 * MIB, 6));
    if (maps) {
        ck_assert_uint_eq(mremap_failed, 2); /* in place, then the move */
        ck_assert_uint_eq((uintptr_t)copied % (2 * MIB), 0);
    }
    fail_mremap_flags = -1;
    g = copied;
    memset(g + 3 * MIB, 0x11, 2 * MIB);
#endif
    stg_mem_free(g);
    /* from nothing */
    uint8_t *fresh = stg_mem_realloc(NULL, 2 * MIB);
    ck_assert_ptr_nonnull(fresh);
    if (maps) {
        ck_assert_uint_eq((uintptr_t)fresh % (2 * MIB), 0);
    }
    memset(fresh, 1, 2 * MIB);
    stg_mem_free(fresh);
    stg_mem_release_kept();
}
END_TEST

START_TEST(test_mem_keep_ceiling_and_full_table)
{
    stg_mem_release_kept();
    bool maps = stg_mem_maps(NULL, NULL, NULL);
    /* more live blocks than the table has slots: every one is served (malloc past the table),
     * and freeing them all keeps no more than the ceiling */
    enum { N = STG_MEM_MAP_SLOTS + 16 };
    static uint8_t *blocks[N];
    for (size_t i = 0; i < N; i++) {
        blocks[i] = stg_mem_alloc(STG_MEM_MAP_MIN);
        ck_assert_ptr_nonnull(blocks[i]);
        memset(blocks[i], (int)i, STG_MEM_MAP_MIN);
    }
    size_t live, kept, bytes;
    stg_mem_maps(&live, &kept, &bytes);
    ck_assert_uint_le(live, STG_MEM_MAP_SLOTS);
    if (maps) {
        ck_assert_uint_ge(live, STG_MEM_MAP_SLOTS - 8); /* what other tests left live aside */
    }
    for (size_t i = 0; i < N; i++) {
        ck_assert_uint_eq(blocks[i][STG_MEM_MAP_MIN - 1], (uint8_t)i);
        stg_mem_free(blocks[i]);
    }
    /* a block bigger than the ceiling is never kept; smaller ones only up to it */
    uint8_t *big = stg_mem_alloc(STG_MEM_KEEP_BYTES + 1);
    ck_assert_ptr_nonnull(big);
    big[STG_MEM_KEEP_BYTES] = 1;
    stg_mem_free(big);
    stg_mem_maps(&live, &kept, &bytes);
    ck_assert_uint_le(bytes, STG_MEM_KEEP_BYTES);
    if (maps) {
        ck_assert_uint_eq(bytes, kept * STG_MEM_MAP_MIN); /* the big one was unmapped */
    }
    /* one that fits under the ceiling only without the oldest kept ones: they go, it stays,
     * and the next request of its size gets it back */
    size_t kept_before = kept;
    uint8_t *large = stg_mem_alloc(STG_MEM_KEEP_BYTES - 8 * STG_MEM_MAP_MIN);
    ck_assert_ptr_nonnull(large);
    large[0] = 7;
    stg_mem_free(large);
    stg_mem_maps(NULL, &kept, &bytes);
    ck_assert_uint_le(bytes, STG_MEM_KEEP_BYTES);
    if (maps) {
        ck_assert_uint_eq(bytes, STG_MEM_KEEP_BYTES); /* 8 small ones stayed beside it */
        ck_assert_uint_eq(kept, 9);
        ck_assert_uint_gt(kept_before, 9);
        uint8_t *again = stg_mem_alloc(STG_MEM_KEEP_BYTES - 8 * STG_MEM_MAP_MIN);
        ck_assert_ptr_eq(again, large);
        ck_assert_uint_eq(again[0], 7);
        stg_mem_free(again);
    }
    stg_mem_release_kept();
    stg_mem_maps(NULL, &kept, &bytes);
    ck_assert_uint_eq(kept + bytes, 0);
}
END_TEST

#ifndef STG_MEM_NO_MAPS
/* The race above, replayed in one thread: block P moves to a new mapping, and before the mover
 * takes P's slot out of the table another allocation is given a mapping at P's old address, in
 * a slot before P's. The mover must clear P's slot, not the newcomer's: else the newcomer, when
 * freed, is kept under P's length (mapped bytes it does not own). */
START_TEST(test_mem_move_race_slot)
{
    stg_mem_release_kept();
    size_t live0, kept, bytes;
    stg_mem_maps(&live0, NULL, NULL);
    void *a = stg_mem_alloc(STG_MEM_MAP_MIN), *b = stg_mem_alloc(STG_MEM_MAP_MIN);
    uint8_t *p = stg_mem_alloc(3 * MIB);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(p);
    stg_mem_free(a);
    stg_mem_free(b);
    stg_mem_release_kept(); /* two free slots before P's: the new one, then the newcomer's */
    uint8_t *guard = mmap(p + 3 * MIB, 4096, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    ck_assert_ptr_eq(guard, p + 3 * MIB); /* growth in place is impossible: P moves */
    fill(p, 3 * MIB, 8);
    race_len = STG_MEM_MAP_MIN;
    race_after_move = true;
    uint8_t *moved = stg_mem_realloc(p, 5 * MIB);
    ck_assert_int_eq(munmap(guard, 4096), 0);
    ck_assert_ptr_nonnull(moved);
    ck_assert_ptr_ne(moved, p);
    ck_assert(filled(moved, 3 * MIB, 8));
    ck_assert_ptr_eq(race_block, p); /* the newcomer sits where P was */
    stg_mem_maps(&kept, NULL, NULL);
    ck_assert_uint_eq(kept, live0 + 2); /* live: the moved block and the newcomer */
    stg_mem_free(race_block);
    stg_mem_maps(NULL, &kept, &bytes);
    ck_assert_uint_eq(kept, 1);
    ck_assert_uint_eq(bytes, STG_MEM_MAP_MIN); /* kept under its own length, not P's */
    stg_mem_free(moved);
    stg_mem_release_kept();
    stg_mem_maps(&kept, NULL, NULL);
    ck_assert_uint_eq(kept, live0);
}
END_TEST
#endif

/* Two threads grow large blocks side by side (each growth may move pages past the other's
 * mappings): every block keeps its contents, and when all are freed no mapping is left live
 * (a slot cleared for the wrong thread would leave one behind or hand out a block twice). */
static atomic_bool grow_failed;

static void *grow_churn(void *arg)
{
    unsigned tag0 = (unsigned)(uintptr_t)arg;
    for (unsigned round = 0; round < 150; round++) {
        uint8_t tag = (uint8_t)((tag0 * 97u + round) | 1u);
        size_t n = STG_MEM_MAP_MIN;
        uint8_t *p = stg_mem_alloc(n);
        if (p == NULL) {
            atomic_store(&grow_failed, true);
            return NULL;
        }
        memset(p, tag, n);
        for (int k = 0; k < 5; k++) {
            uint8_t *q = stg_mem_realloc(p, n * 2);
            if (q == NULL) {
                stg_mem_free(p);
                atomic_store(&grow_failed, true);
                return NULL;
            }
            p = q;
            for (size_t i = 0; i < n; i += 509) {
                if (p[i] != tag) {
                    atomic_store(&grow_failed, true);
                }
            }
            n *= 2;
            memset(p, tag, n);
        }
        stg_mem_free(p);
    }
    return NULL;
}

START_TEST(test_mem_threads_grow)
{
    stg_mem_release_kept();
    size_t live0, live, kept, bytes;
    stg_mem_maps(&live0, NULL, NULL);
    atomic_store(&grow_failed, false);
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, grow_churn, (void *)(i + 1)), 0);
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    }
    ck_assert(!atomic_load(&grow_failed));
    stg_mem_maps(&live, &kept, &bytes);
    ck_assert_uint_eq(live, live0);
    ck_assert_uint_le(bytes, STG_MEM_KEEP_BYTES);
    stg_mem_release_kept();
}
END_TEST

#ifndef STG_MEM_NO_MAPS
static atomic_bool churn_stop;
static atomic_bool churn_failed;

/* No ck_assert here nor in the forked child: Check's own lock, taken by every assertion, would
 * be copied held into a child forked meanwhile. */
static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&churn_stop)) {
        void *b = stg_mem_alloc(STG_MEM_MAP_MIN * 2);
        if (b == NULL) {
            atomic_store(&churn_failed, true);
            break;
        }
        stg_mem_free(b);
    }
    return NULL;
}

/* A fork while another thread allocates large blocks: the child's allocator still works (the
 * table's lock is held across fork and released on both sides). Builds without mappings have
 * no such lock (and a sanitizer's own allocator is not this test's subject). */
START_TEST(test_mem_fork_while_allocating)
{
    pthread_t t;
    atomic_store(&churn_stop, false);
    atomic_store(&churn_failed, false);
    ck_assert_int_eq(pthread_create(&t, NULL, churn, NULL), 0);
    for (int i = 0; i < 50; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10); /* a child stuck on a lock its parent's other thread held dies */
            void *b = stg_mem_alloc(3 * MIB);
            if (b == NULL) {
                _exit(2);
            }
            memset(b, 1, 3 * MIB);
            stg_mem_free(b);
            _exit(0);
        }
        ck_assert_int_gt(pid, 0);
        int status = 0;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
    }
    atomic_store(&churn_stop, true);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert(!atomic_load(&churn_failed));
}
END_TEST
#endif

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
    tcase_add_test(tc, test_mem_large_blocks_mapped);
    tcase_add_test(tc, test_mem_large_realloc);
    tcase_add_test(tc, test_mem_keep_ceiling_and_full_table);
    tcase_add_test(tc, test_mem_threads_grow);
#ifndef STG_MEM_NO_MAPS
    tcase_add_test(tc, test_mem_move_race_slot);
#endif
#ifndef STG_MEM_NO_MAPS
    tcase_add_test(tc, test_mem_fork_while_allocating);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
