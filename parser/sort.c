/* Heapsort (Williams 1964, Floyd's heap construction): build a max-heap bottom up, then move
 * the root to the end n - 1 times. Every sift is at most log2(n) levels, so the worst case is
 * about 2 n log2(n) comparisons, and no input is slower than any other. */
#include "sort.h"

#include <stdbool.h>
#include <string.h>

/* The element operations the heap needs, over a typed array or raw bytes. */
typedef struct heap {
    uint8_t *base;
    size_t size;
    stg_sort_cmp cmp;
    void *ctx;
} heap;

static inline int heap_cmp(const heap *h, size_t i, size_t j)
{
    return h->cmp(h->base + i * h->size, h->base + j * h->size, h->ctx);
}

static inline void heap_swap(const heap *h, size_t i, size_t j)
{
    uint8_t tmp[STG_SORT_MAX_ELEM];
    uint8_t *a = h->base + i * h->size, *b = h->base + j * h->size;
    memcpy(tmp, a, h->size);
    memcpy(a, b, h->size);
    memcpy(b, tmp, h->size);
}

static void sift_down(const heap *h, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) {
            return;
        }
        if (child + 1 < n && heap_cmp(h, child, child + 1) < 0) {
            child++;
        }
        if (heap_cmp(h, root, child) >= 0) {
            return;
        }
        heap_swap(h, root, child);
        root = child;
    }
}

void stg_sort(void *base, size_t n, size_t size, stg_sort_cmp cmp, void *ctx)
{
    if (n < 2 || size == 0 || size > STG_SORT_MAX_ELEM) {
        return;
    }
    heap h = {base, size, cmp, ctx};
    for (size_t i = n / 2; i-- > 0;) {
        sift_down(&h, i, n);
    }
    for (size_t end = n - 1; end > 0; end--) {
        heap_swap(&h, 0, end);
        sift_down(&h, 0, end);
    }
}

/* Index sorts: the callback compares the indexes the elements hold (size_t or uint32_t). */
typedef struct index_ctx {
    stg_sort_index_cmp cmp;
    void *ctx;
    bool narrow;
} index_ctx;

static size_t index_at(const void *p, bool narrow)
{
    if (narrow) {
        uint32_t x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    size_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

static int cmp_index(const void *a, const void *b, void *ctx)
{
    const index_ctx *ic = ctx;
    return ic->cmp(index_at(a, ic->narrow), index_at(b, ic->narrow), ic->ctx);
}

void stg_sort_index(size_t *idx, size_t n, stg_sort_index_cmp cmp, void *ctx)
{
    index_ctx ic = {cmp, ctx, false};
    stg_sort(idx, n, sizeof *idx, cmp_index, &ic);
}

void stg_sort_index32(uint32_t *idx, size_t n, stg_sort_index_cmp cmp, void *ctx)
{
    index_ctx ic = {cmp, ctx, true};
    stg_sort(idx, n, sizeof *idx, cmp_index, &ic);
}
