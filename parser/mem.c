#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* mremap, malloc_usable_size */
#endif
#include "mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>
#endif

/* Large blocks (STG_MEM_MAP_MIN and up) are mapped here, not taken from malloc, unless
 * STG_MEM_NO_MAPS (mem.h). A big header's buffers (key records, duplicate set, tensor table:
 * tens of MB at 900,000 tensors) were fresh pages on every call, because glibc maps such blocks
 * anew each time or trims them off its heap, and faulting them in 4 KiB at a time cost about as
 * much as parsing. Each is now its own mapping at a 2 MiB boundary with huge-page advice; it
 * grows by moving its pages (mremap), not by copying them; and when freed it is kept for the
 * next call (up to STG_MEM_KEEP_BYTES in all): even huge fresh pages must be zeroed by the
 * kernel. A fixed table of mappings tells stg_mem_free and stg_mem_realloc which pointers are
 * mappings; when it is full, or the system refuses a mapping, malloc serves instead. */
#ifndef STG_MEM_NO_MAPS
#define HUGE_PAGE ((size_t)2 << 20)

/* Every live or kept mapping, in one table (linear search: it is small, and only pointers at a
 * 2 MiB boundary are looked up). A kept mapping was freed and waits for reuse. */
typedef struct map_slot {
    uintptr_t addr; /* 0: free slot */
    size_t len;     /* mapped bytes, a multiple of the page size */
    bool kept;
    uint64_t freed; /* kept: when it was freed (kept_clock), so the oldest goes first */
} map_slot;
static map_slot map_table[STG_MEM_MAP_SLOTS];
static size_t kept_bytes; /* sum of the kept mappings' lengths, <= STG_MEM_KEEP_BYTES */
static uint64_t kept_clock;
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t map_fork_once = PTHREAD_ONCE_INIT;

/* A fork while another thread holds the lock must not leave the child's copy locked for ever:
 * the lock is taken around fork and released on both sides, as glibc's malloc does with its own. */
static void map_lock_before_fork(void)
{
    pthread_mutex_lock(&map_lock);
}

static void map_lock_after_fork(void)
{
    pthread_mutex_unlock(&map_lock);
}

static void map_fork_register(void)
{
    (void)pthread_atfork(map_lock_before_fork, map_lock_after_fork, map_lock_after_fork);
}

static void map_lock_take(void)
{
    (void)pthread_once(&map_fork_once, map_fork_register);
    pthread_mutex_lock(&map_lock);
}

static size_t page_round(size_t n)
{
    return (n + 4095u) & ~(size_t)4095u;
}

/* The slot of live mapping p, or NULL; under map_lock. */
static map_slot *live_slot(uintptr_t p)
{
    for (unsigned i = 0; i < STG_MEM_MAP_SLOTS; i++) {
        if (map_table[i].addr == p && !map_table[i].kept) {
            return &map_table[i];
        }
    }
    return NULL;
}

/* The kept mapping freed longest ago, or NULL; under map_lock. */
static map_slot *oldest_kept(void)
{
    map_slot *oldest = NULL;
    for (unsigned i = 0; i < STG_MEM_MAP_SLOTS; i++) {
        map_slot *k = &map_table[i];
        if (k->addr != 0 && k->kept && (oldest == NULL || k->freed < oldest->freed)) {
            oldest = k;
        }
    }
    return oldest;
}

/* The mapped length of p, or 0 when p is not a live mapping. */
static size_t map_len(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (p == NULL || (a & (HUGE_PAGE - 1)) != 0) {
        return 0; /* mappings start at 2 MiB boundaries; malloc's blocks almost never do */
    }
    map_lock_take();
    const map_slot *m = live_slot(a);
    size_t len = m == NULL ? 0 : m->len;
    pthread_mutex_unlock(&map_lock);
    return len;
}

/* Takes the smallest kept mapping of at least len bytes (its old contents stay: the caller
 * zeroes when it must), or NULL. */
static void *take_kept(size_t len)
{
    map_lock_take();
    map_slot *best = NULL;
    for (unsigned i = 0; i < STG_MEM_MAP_SLOTS; i++) {
        map_slot *m = &map_table[i];
        if (m->addr != 0 && m->kept && m->len >= len && (best == NULL || m->len < best->len)) {
            best = m;
        }
    }
    void *p = NULL;
    if (best != NULL) {
        best->kept = false;
        kept_bytes -= best->len;
        p = (void *)best->addr;
    }
    pthread_mutex_unlock(&map_lock);
    return p;
}

/* A new mapping of len bytes (page multiple) at a 2 MiB boundary, recorded in the table; NULL
 * when the system refuses or every slot holds a live mapping (the caller then uses malloc). */
static void *map_fresh(size_t len)
{
    if (len > SIZE_MAX - HUGE_PAGE) {
        return NULL;
    }
    uint8_t *base = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        return NULL;
    }
    uint8_t *at = (uint8_t *)(((uintptr_t)base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (at > base) {
        (void)munmap(base, (size_t)(at - base));
    }
    if (at + len < base + len + HUGE_PAGE) {
        (void)munmap(at + len, (size_t)(base + len + HUGE_PAGE - (at + len)));
    }
    (void)madvise(at, len, MADV_HUGEPAGE);
    /* a free slot, else the slot of the oldest kept mapping (unmapped for it) */
    map_slot *slot = NULL, old = {0, 0, false, 0};
    map_lock_take();
    for (unsigned i = 0; i < STG_MEM_MAP_SLOTS && slot == NULL; i++) {
        if (map_table[i].addr == 0) {
            slot = &map_table[i];
        }
    }
    if (slot == NULL) {
        slot = oldest_kept();
    }
    if (slot != NULL) {
        if (slot->addr != 0) {
            old = *slot;
            kept_bytes -= old.len;
        }
        *slot = (map_slot){(uintptr_t)at, len, false, 0};
    }
    pthread_mutex_unlock(&map_lock);
    if (old.addr != 0) {
        (void)munmap((void *)old.addr, old.len);
    }
    if (slot == NULL) { /* every slot holds a live mapping */
        (void)munmap(at, len);
        return NULL;
    }
    return at;
}

/* A mapping of at least n bytes: a kept one when one is large enough, else a fresh one. */
static void *map_new(size_t n, bool zero)
{
    size_t len = page_round(n);
    if (len < n) {
        return NULL;
    }
    void *p = take_kept(len);
    if (p != NULL) {
        if (zero) {
            memset(p, 0, n);
        }
        return p;
    }
    return map_fresh(len); /* fresh pages are zero */
}

/* Frees live mapping p of len bytes: kept for reuse, the oldest kept mappings unmapped as far
 * as the kept ones would pass STG_MEM_KEEP_BYTES (what a process used last is what it is likely
 * to ask for again); a mapping larger than the ceiling is unmapped at once. Kept pages are not
 * handed back lazily (MADV_FREE): a page written again after that advice costs about what a
 * fresh one does, and the reuse is the point. */
static void map_free(void *p, size_t len)
{
    enum { EVICT_BATCH = 16 };
    bool done = false;
    while (!done) {
        map_slot evicted[EVICT_BATCH];
        unsigned n_evicted = 0;
        bool unmap = false;
        map_lock_take();
        map_slot *m = live_slot((uintptr_t)p);
        if (m == NULL || len > STG_MEM_KEEP_BYTES) {
            unmap = m != NULL;
            if (m != NULL) {
                m->addr = 0;
            }
            done = true; /* nothing more to do but the unmap */
        } else {
            while (len > STG_MEM_KEEP_BYTES - kept_bytes && n_evicted < EVICT_BATCH) {
                map_slot *oldest = oldest_kept();
                if (oldest == NULL) {
                    break; /* not reached: kept_bytes > 0 means one is kept */
                }
                evicted[n_evicted++] = *oldest;
                kept_bytes -= oldest->len;
                *oldest = (map_slot){0, 0, false, 0};
            }
            if (len <= STG_MEM_KEEP_BYTES - kept_bytes) {
                m->kept = true;
                m->freed = ++kept_clock;
                kept_bytes += len;
                done = true;
            } /* else: more to evict than one batch, another round */
        }
        pthread_mutex_unlock(&map_lock);
        for (unsigned i = 0; i < n_evicted; i++) {
            (void)munmap((void *)evicted[i].addr, evicted[i].len);
        }
        if (unmap) {
            (void)munmap(p, len);
        }
    }
}

/* Grows live mapping p (len bytes) to hold n > len bytes: in place when the address space after
 * it is free, else by moving its pages to the start of a new mapping. NULL when both fail (p is
 * unchanged). */
static void *map_grow(void *p, size_t len, size_t n)
{
    size_t want = page_round(n);
    if (want < n) {
        return NULL;
    }
    if (mremap(p, len, want, 0) != MAP_FAILED) {
        (void)madvise(p, want, MADV_HUGEPAGE);
        map_lock_take();
        map_slot *m = live_slot((uintptr_t)p);
        if (m != NULL) {
            m->len = want;
        }
        pthread_mutex_unlock(&map_lock);
        return p;
    }
    uint8_t *q = map_fresh(want);
    if (q == NULL) {
        return NULL;
    }
    /* p leaves the table before its pages move: once they have, another thread may be given a
     * new mapping at p, and clearing p's slot then could clear that thread's. */
    map_lock_take();
    map_slot *m = live_slot((uintptr_t)p);
    if (m != NULL) {
        m->addr = 0;
    }
    pthread_mutex_unlock(&map_lock);
    if (mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, q) == MAP_FAILED) {
        memcpy(q, p, len);
        (void)munmap(p, len);
    }
    return q;
}
#endif

#ifdef STG_ALLOC_TESTING
static unsigned long alloc_count; /* test builds only: see mem.h */
static unsigned long alloc_fail_from;

void stg_mem_test_reset(unsigned long fail_from)
{
    alloc_count = 0;
    alloc_fail_from = fail_from;
}

unsigned long stg_mem_test_count(void)
{
    return alloc_count;
}

static int alloc_should_fail(void)
{
    alloc_count++;
    return alloc_fail_from != 0 && alloc_count >= alloc_fail_from;
}
#else
static int alloc_should_fail(void)
{
    return 0;
}
#endif

void *stg_mem_alloc(size_t n)
{
    if (alloc_should_fail()) {
        return NULL;
    }
#ifndef STG_MEM_NO_MAPS
    if (n >= STG_MEM_MAP_MIN) {
        void *m = map_new(n, false);
        if (m != NULL) {
            return m;
        }
    }
#endif
    return malloc(n == 0 ? 1 : n);
}

void *stg_mem_calloc(size_t count, size_t size)
{
    if (alloc_should_fail()) {
        return NULL;
    }
#ifndef STG_MEM_NO_MAPS
    if (size != 0 && count <= SIZE_MAX / size && count * size >= STG_MEM_MAP_MIN) {
        void *m = map_new(count * size, true);
        if (m != NULL) {
            return m;
        }
    }
#endif
    return calloc(count == 0 ? 1 : count, size == 0 ? 1 : size);
}

void *stg_mem_realloc(void *p, size_t n)
{
    if (alloc_should_fail()) {
        return NULL;
    }
#ifndef STG_MEM_NO_MAPS
    if (p == NULL && n >= STG_MEM_MAP_MIN) {
        void *m = map_new(n, false);
        if (m != NULL) {
            return m;
        }
    }
    size_t len = map_len(p);
    if (len > 0) {
        if (n <= len) {
            return p; /* mappings do not shrink: they are freed whole soon after */
        }
        void *q = map_grow(p, len, n);
        if (q == NULL && (q = malloc(n)) != NULL) {
            memcpy(q, p, len);
            map_free(p, len);
        }
        return q;
    }
    if (p != NULL && n >= STG_MEM_MAP_MIN) {
        size_t have = malloc_usable_size(p); /* at least what was asked for */
        void *q = map_new(n, false);
        if (q != NULL) {
            memcpy(q, p, have < n ? have : n);
            free(p);
            return q;
        }
    }
#endif
    return realloc(p, n == 0 ? 1 : n);
}

void stg_mem_free(void *p)
{
#ifndef STG_MEM_NO_MAPS
    size_t len = map_len(p);
    if (len > 0) {
        map_free(p, len);
        return;
    }
#endif
    free(p);
}

char *stg_mem_strndup(const char *s, size_t n)
{
    if (n == (size_t)-1) {
        return NULL;
    }
    char *d = stg_mem_alloc(n + 1);
    if (d == NULL) {
        return NULL;
    }
    if (n > 0) {
        memcpy(d, s, n);
    }
    d[n] = '\0';
    return d;
}

void stg_mem_advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p == NULL || n < STG_MEM_HUGE_MIN) {
        return;
    }
    const size_t page = (size_t)2 << 20;
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t end = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
    if (end > start) {
        (void)madvise((void *)start, (size_t)(end - start), MADV_HUGEPAGE);
    }
#else
    (void)p;
    (void)n;
#endif
}

bool stg_mem_maps(size_t *live, size_t *kept, size_t *kept_total)
{
    size_t nl = 0, nk = 0, bytes = 0;
    bool on = false;
#ifndef STG_MEM_NO_MAPS
    on = true;
    map_lock_take();
    for (unsigned i = 0; i < STG_MEM_MAP_SLOTS; i++) {
        if (map_table[i].addr != 0) {
            nl += map_table[i].kept ? 0 : 1;
            nk += map_table[i].kept ? 1 : 0;
        }
    }
    bytes = kept_bytes;
    pthread_mutex_unlock(&map_lock);
#endif
    if (live != NULL) {
        *live = nl;
    }
    if (kept != NULL) {
        *kept = nk;
    }
    if (kept_total != NULL) {
        *kept_total = bytes;
    }
    return on;
}

void stg_mem_release_kept(void)
{
#ifndef STG_MEM_NO_MAPS
    for (;;) {
        void *p = NULL;
        size_t len = 0;
        map_lock_take();
        for (unsigned i = 0; i < STG_MEM_MAP_SLOTS && p == NULL; i++) {
            if (map_table[i].addr != 0 && map_table[i].kept) {
                p = (void *)map_table[i].addr;
                len = map_table[i].len;
                map_table[i] = (map_slot){0, 0, false, 0};
                kept_bytes -= len;
            }
        }
        pthread_mutex_unlock(&map_lock);
        if (p == NULL) {
            return;
        }
        (void)munmap(p, len);
    }
#endif
}
