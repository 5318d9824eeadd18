/* Header validation throughput: times stg_validate_buffer over one safetensors file.
 *
 *   bench_header FILE [--profile strict|compat] [--min-runs N] [--max-runs N] [--seconds S]
 *                     [--allow-findings]
 *
 * The file is mapped, not read, so a sparse multi-GB data section (bench/gen_header.py) costs
 * nothing; the header pages are touched once before anything is measured. One warm-up run, then
 * timed runs (at least --min-runs, more until about --seconds were spent). MB/s counts HEADER
 * bytes (the 8-byte length prefix excluded): the data section is never read by the validator.
 * Wall-clock and process CPU time are both reported (best and median): on a shared machine the
 * CPU-time figure is the one less disturbed by other processes. `first_cpu_MBps` is the warm-up
 * call alone: the first validation in a process, whose large buffers are all fresh pages (later
 * calls reuse them: parser/mem.c keeps freed large blocks).
 *
 * Memory: run one file per process. `hwm_base_kib` is the peak RSS after mapping and touching
 * the header, before any validation; `hwm_kib` the peak after all runs; their difference is what
 * validation added. `arena_peak` is the validator's own budgeted memory (stg_st_header.arena)
 * from one extra run through the internal staged API, compared with the documented budget
 * 2 x header + 8 MiB.
 *
 * Output: one line of key=value pairs on stdout (bench/run_header.sh parses it). Exit status 1
 * when the file does not validate cleanly (a benchmark over an invalid file measures an early
 * exit), unless --allow-findings. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/benchutil.h"
#include "stguard/stguard.h"
#include "validator/safetensors.h"

static void usage(void)
{
    fprintf(stderr, "usage: bench_header FILE [--profile strict|compat] [--min-runs N] "
                    "[--max-runs N] [--seconds S] [--allow-findings]\n");
    exit(2);
}

static void print_findings(const stg_report *rep)
{
    size_t n = stg_report_count(rep);
    for (size_t i = 0; i < n && i < 10; i++) {
        const stg_finding *f = stg_report_at(rep, i);
        fprintf(stderr, "  %s (%s) at %llu: %s\n", stg_code_name(f->code),
                stg_severity_name(f->severity), (unsigned long long)f->offset, f->message);
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    size_t min_runs = 5, max_runs = 200;
    double min_seconds = 2.0;
    int allow_findings = 0;
    stg_limits lim;
    stg_limits_default(&lim);

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
            if (stg_limits_set(&lim, "profile", argv[++i]) != STG_OK)
                usage();
        } else if (strcmp(argv[i], "--min-runs") == 0 && i + 1 < argc) {
            min_runs = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--max-runs") == 0 && i + 1 < argc) {
            max_runs = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            min_seconds = strtod(argv[++i], NULL);
        } else if (strcmp(argv[i], "--allow-findings") == 0) {
            allow_findings = 1;
        } else if (argv[i][0] == '-' || path) {
            usage();
        } else {
            path = argv[i];
        }
    }
    if (!path || min_runs < 1 || max_runs < min_runs)
        usage();

    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "bench_header: %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t len = (size_t)st.st_size;
    if (len < 8) {
        fprintf(stderr, "bench_header: %s: shorter than 8 bytes\n", path);
        return 2;
    }
    const uint8_t *buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (buf == MAP_FAILED) {
        fprintf(stderr, "bench_header: mmap %s: %s\n", path, strerror(errno));
        return 2;
    }
    close(fd);

    uint64_t header_len = 0;
    for (int b = 7; b >= 0; b--)
        header_len = (header_len << 8) | buf[b];
    if (header_len > len - 8) {
        fprintf(stderr, "bench_header: header length %llu past the end of the file\n",
                (unsigned long long)header_len);
        return 2;
    }
    /* Touch the header so page faults of the first read are not timed or counted as
     * validation memory. */
    volatile uint8_t sink = 0;
    for (size_t off = 0; off < 8 + (size_t)header_len; off += 4096)
        sink = (uint8_t)(sink ^ buf[off]);
    (void)sink;
    uint64_t hwm_base = bench_status_kib("VmHWM:");

    /* Warm-up; also checks that the file is clean. */
    stg_report *rep = NULL;
    double c_first = bench_cpu_now();
    double t0 = bench_now();
    if (stg_validate_buffer(buf, len, &lim, &rep) != STG_OK) {
        fprintf(stderr, "bench_header: stg_validate_buffer failed\n");
        return 2;
    }
    double warmup = bench_now() - t0;
    double cpu_first = bench_cpu_now() - c_first;
    stg_verdict verdict = stg_report_verdict(rep);
    size_t findings = stg_report_count(rep);
    if (verdict != STG_VERDICT_OK || findings != 0) {
        fprintf(stderr, "bench_header: %s: verdict %s with %zu finding(s)\n", path,
                stg_verdict_name(verdict), findings);
        print_findings(rep);
        if (!allow_findings)
            return 1;
    }
    stg_report_free(rep);

    size_t runs = bench_run_count(warmup, min_runs, max_runs, min_seconds);
    double *times = calloc(runs, sizeof *times), *cpu = calloc(runs, sizeof *cpu);
    if (!times || !cpu)
        return 2;
    for (size_t r = 0; r < runs; r++) {
        rep = NULL;
        double c0 = bench_cpu_now();
        t0 = bench_now();
        stg_status s = stg_validate_buffer(buf, len, &lim, &rep);
        times[r] = bench_now() - t0;
        cpu[r] = bench_cpu_now() - c0;
        if (s != STG_OK || stg_report_verdict(rep) != verdict) {
            fprintf(stderr, "bench_header: run %zu gave a different result\n", r);
            return 2;
        }
        stg_report_free(rep);
    }
    uint64_t hwm = bench_status_kib("VmHWM:");
    double median = bench_median(times, runs);
    double best = times[0];
    double cpu_median = bench_median(cpu, runs);
    double cpu_best = cpu[0];

    /* One more run through the staged API to read the arena's peak and the tensor count. */
    stg_st_header h;
    stg_st_header_init(&h);
    rep = stg_report_new(&lim);
    if (!rep)
        return 2;
    stg_st_validate(buf, len, &lim, rep, &h);
    size_t tensors = h.tensor_count;
    size_t arena_peak = h.arena.peak;
    stg_st_header_release(&h);
    stg_report_free(rep);
    uint64_t budget = stg_st_memory_budget(&lim, header_len);

    double mb = (double)header_len / 1e6;
    printf("file=%s profile=%s header_bytes=%llu tensors=%zu runs=%zu best_s=%.6f "
           "median_s=%.6f best_MBps=%.1f median_MBps=%.1f cpu_best_MBps=%.1f "
           "cpu_median_MBps=%.1f first_cpu_MBps=%.1f tensors_per_s=%.0f hwm_base_kib=%llu "
           "hwm_kib=%llu arena_peak=%zu "
           "budget=%llu verdict=%s findings=%zu\n",
           path, lim.profile == STG_PROFILE_COMPAT ? "compat" : "strict",
           (unsigned long long)header_len, tensors, runs, best, median, mb / best, mb / median,
           mb / cpu_best, mb / cpu_median, mb / cpu_first, (double)tensors / median,
           (unsigned long long)hwm_base, (unsigned long long)hwm, arena_peak,
           (unsigned long long)budget, stg_verdict_name(verdict), findings);
    free(times);
    free(cpu);
    munmap((void *)(uintptr_t)buf, len);
    return 0;
}
