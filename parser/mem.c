#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
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
    return malloc(n == 0 ? 1 : n);
}

void *stg_mem_calloc(size_t count, size_t size)
{
    if (alloc_should_fail()) {
        return NULL;
    }
    return calloc(count == 0 ? 1 : count, size == 0 ? 1 : size);
}

void *stg_mem_realloc(void *p, size_t n)
{
    if (alloc_should_fail()) {
        return NULL;
    }
    return realloc(p, n == 0 ? 1 : n);
}

void stg_mem_free(void *p)
{
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
