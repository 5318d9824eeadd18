/* One sort for the whole library: an in-place heapsort with a compare callback. O(n log n)
 * comparisons whatever the input (no quicksort worst case for a file to choose), no recursion,
 * no allocation (libc qsort may allocate, and its order of equal elements is unspecified).
 *
 * It is not stable: a caller whose result depends on the order of equal keys sorts indexes and
 * breaks ties by index in its compare function. The order it leaves equal elements in is a
 * function of the input alone (the same input always gives the same output). */
#ifndef STG_PARSER_SORT_H
#define STG_PARSER_SORT_H

#include <stddef.h>
#include <stdint.h>

/* < 0, 0 or > 0 as a sorts before, with or after b; ctx is the caller's. */
typedef int (*stg_sort_cmp)(const void *a, const void *b, void *ctx);

/* Sorts base[0..n) (elements of size bytes, 1 <= size <= STG_SORT_MAX_ELEM) ascending by cmp.
 * n of 0 or 1 returns at once (base may then be NULL). */
#define STG_SORT_MAX_ELEM 256u
void stg_sort(void *base, size_t n, size_t size, stg_sort_cmp cmp, void *ctx);

/* Sorts the indexes idx[0..n) by cmp, which is given two indexes (not pointers to them): the
 * usual way to order records without moving them. */
typedef int (*stg_sort_index_cmp)(size_t a, size_t b, void *ctx);
void stg_sort_index(size_t *idx, size_t n, stg_sort_index_cmp cmp, void *ctx);
void stg_sort_index32(uint32_t *idx, size_t n, stg_sort_index_cmp cmp, void *ctx);

#endif
