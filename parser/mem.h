/* Every heap allocation of the library goes through these four functions, so a test build can
 * fail the Nth allocation (STG_ALLOC_TESTING) and prove each failure path is clean. */
#ifndef STG_PARSER_MEM_H
#define STG_PARSER_MEM_H

#include <stdbool.h>
#include <stddef.h>

void *stg_mem_alloc(size_t n);
void *stg_mem_calloc(size_t count, size_t size);
void *stg_mem_realloc(void *p, size_t n);
void stg_mem_free(void *p);
/* Copies s[0..n) into a new NUL-terminated buffer; NULL when allocation fails. */
char *stg_mem_strndup(const char *s, size_t n);

/* Buffers of at least this many bytes are worth backing with huge pages. */
#define STG_MEM_HUGE_MIN ((size_t)4 << 20)
/* On Linux (outside sanitizer builds) blocks of at least this many bytes are mapped by
 * parser/mem.c itself, at a 2 MiB boundary with huge-page advice, instead of coming from malloc;
 * the four functions above hide the difference. glibc maps blocks from its own threshold (128 KiB
 * by default) up fresh on every call, and trims its heap; these mappings are kept for reuse. */
#define STG_MEM_MAP_MIN ((size_t)128 << 10)
/* Mappings live or kept at once (a kept one makes room for a new one; beyond live ones:
 * malloc), and the bytes of freed mappings kept for reuse by later calls, process-wide (as much
 * as glibc's malloc may keep at the top of its heap by its own rules; the oldest go first). */
#define STG_MEM_MAP_SLOTS 256u
/* Defined in ASan and MSan builds (gcc says so by __SANITIZE_ADDRESS__, clang by __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define STG_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define STG_SANITIZED 1
#endif
#endif
/* Defined where blocks are never mapped: off Linux, and in sanitizer builds (ASan and MSan must
 * see every block to guard it). */
#if !defined(__linux__) || defined(STG_SANITIZED)
#define STG_MEM_NO_MAPS 1
#endif
#define STG_MEM_KEEP_BYTES ((size_t)64 << 20)
/* Whether this build maps large blocks; the number of live and of kept mappings and the bytes
 * kept (any pointer may be NULL). */
bool stg_mem_maps(size_t *live, size_t *kept, size_t *kept_total);
/* Unmaps every kept mapping now. */
void stg_mem_release_kept(void);
/* Advice for a large buffer from these functions that is about to be written front to back: on
 * Linux, transparent huge pages over its whole 2 MiB pages, so that first touches fault 2 MiB at a
 * time instead of 4 KiB (first-touch faults are the largest cost of big headers). Does nothing
 * below STG_MEM_HUGE_MIN or elsewhere; only advice: failure changes nothing. This file is the one
 * place in parser/ and validator/ that calls the OS for memory (allocation and this advice). */
void stg_mem_advise_huge(void *p, size_t n);

#ifdef STG_ALLOC_TESTING
/* Test builds only: allocation number `n` (1-based, counted from the last reset) and every one
 * after it fails while fail_from != 0. Not thread-safe by design: tests are single-threaded. */
void stg_mem_test_reset(unsigned long fail_from);
unsigned long stg_mem_test_count(void);
#endif

#endif
