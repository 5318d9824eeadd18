/* Every heap allocation of the library goes through these four functions, so a test build can
 * fail the Nth allocation (STG_ALLOC_TESTING) and prove each failure path is clean. */
#ifndef STG_PARSER_MEM_H
#define STG_PARSER_MEM_H

#include <stddef.h>

void *stg_mem_alloc(size_t n);
void *stg_mem_calloc(size_t count, size_t size);
void *stg_mem_realloc(void *p, size_t n);
void stg_mem_free(void *p);
/* Copies s[0..n) into a new NUL-terminated buffer; NULL when allocation fails. */
char *stg_mem_strndup(const char *s, size_t n);

#ifdef STG_ALLOC_TESTING
/* Test builds only: allocation number `n` (1-based, counted from the last reset) and every one
 * after it fails while fail_from != 0. Not thread-safe by design: tests are single-threaded. */
void stg_mem_test_reset(unsigned long fail_from);
unsigned long stg_mem_test_count(void);
#endif

#endif
