/* Small helpers shared by the bench_*.c programs: a monotonic clock, best/median of a series of
 * timings, and the process's peak resident set size. Header-only so each benchmark stays one
 * executable built from one .c file. */
#ifndef STG_BENCH_BENCHUTIL_H
#define STG_BENCH_BENCHUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parser/sort.h"

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench_cmp_double(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* CPU time of the whole process (user + system): unlike wall time, it barely moves when other
 * processes compete for the cores, so it is reported next to wall time on a shared machine. */
static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sorts t[0..n) in place; returns the median (mean of the middle two for even n). */
static inline double bench_median(double *t, size_t n)
{
    stg_sort(t, n, sizeof t[0], bench_cmp_double, NULL);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2.0;
}

/* A "VmHWM:" or "VmRSS:" value from /proc/self/status, in KiB; 0 when unavailable. */
static inline uint64_t bench_status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;
    size_t flen = strlen(field);
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, flen) == 0) {
            kib = strtoull(line + flen, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}

/* How many timed runs: at least min_runs, and more until about min_seconds were spent (as
 * estimated from the warm-up run), never more than max_runs. */
static inline size_t bench_run_count(double warmup_seconds, size_t min_runs, size_t max_runs,
                                     double min_seconds)
{
    size_t runs = min_runs;
    if (warmup_seconds > 0.0 && warmup_seconds * (double)runs < min_seconds) {
        double want = min_seconds / warmup_seconds;
        runs = want > (double)max_runs ? max_runs : (size_t)want;
        if (runs < min_runs)
            runs = min_runs;
    }
    return runs;
}

/* A growing byte buffer for the benchmarks that build their inputs in memory; exits on
 * allocation failure (a benchmark has nothing to fall back to). */
typedef struct bench_buf {
    uint8_t *p;
    size_t len, cap;
} bench_buf;

static inline void bench_put(bench_buf *b, const void *s, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 4096;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL) {
            fprintf(stderr, "bench: out of memory\n");
            exit(2);
        }
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static inline void bench_puts(bench_buf *b, const char *s)
{
    bench_put(b, s, strlen(s));
}

/* v as `bytes` little-endian bytes. */
static inline void bench_put_le(bench_buf *b, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++) {
        t[i] = (uint8_t)(v >> (8 * i));
    }
    bench_put(b, t, (size_t)bytes);
}

#endif
