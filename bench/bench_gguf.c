/* GGUF header validation throughput: times stg_gguf_check (validator/gguf.h) over one GGUF
 * file, the rules a scan and stg_gguf_open run.
 *
 *   bench_gguf FILE [SECONDS] [strict|compat]     (default: 2 s, strict)
 *
 * The file is mapped, not read, so a sparse multi-GB data section (bench/gen_gguf_header.py)
 * costs nothing; the header pages (up to the data section) are touched once before anything is
 * measured. One warm-up run (which must give no finding), then timed runs (at least 5, more until
 * about SECONDS were spent, at most 200). MB/s counts HEADER bytes (0 to the data section, 10^6
 * bytes per MB): the data section is never read by the rules. Wall-clock and process CPU time,
 * best and median, as bench_header does for safetensors.
 *
 * Output: one line of key=value pairs on stdout. Exit status 1 when the file does not validate
 * cleanly. */
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
#include "validator/gguf.h"
#include "validator/report.h"

/* One check into a fresh report; the result and the finding count. */
static double run_once(const uint8_t *buf, size_t len, const stg_limits *lim, size_t *findings,
                       stg_gguf_result *res, double *cpu)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        exit(2);
    }
    double c0 = bench_cpu_now(), t0 = bench_now();
    if (stg_gguf_check(buf, len, lim, 0, r, NULL, res) != STG_OK) {
        exit(2);
    }
    double t = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    *findings = stg_report_count(r);
    for (size_t i = 0; i < *findings && i < 10; i++) {
        const stg_finding *f = stg_report_at(r, i);
        fprintf(stderr, "  %s at %llu: %s\n", stg_code_name(f->code), (unsigned long long)f->offset,
                f->message);
    }
    stg_report_free(r);
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_gguf FILE [SECONDS] [strict|compat]\n");
        return 2;
    }
    const char *path = argv[1];
    size_t min_runs = 5, max_runs = 200;
    double min_seconds = argc > 2 ? strtod(argv[2], NULL) : 2.0;
    stg_limits lim;
    stg_limits_default(&lim);
    if (argc > 3 && stg_limits_set(&lim, "profile", argv[3]) != STG_OK) {
        fprintf(stderr, "bench_gguf: profile %s\n", argv[3]);
        return 2;
    }
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 24) {
        fprintf(stderr, "bench_gguf: %s: %s\n", path, fd < 0 ? strerror(errno) : "too short");
        return 2;
    }
    size_t len = (size_t)st.st_size;
    const uint8_t *buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (buf == MAP_FAILED) {
        fprintf(stderr, "bench_gguf: mmap %s: %s\n", path, strerror(errno));
        return 2;
    }
    close(fd);
    size_t findings = 0;
    stg_gguf_result res;
    double cpu = 0;
    /* warm-up: finds the data section, whose start is the header's size */
    double warmup = run_once(buf, len, &lim, &findings, &res, &cpu);
    if (findings != 0 || !res.layout_ok) {
        fprintf(stderr, "bench_gguf: %s: %zu finding(s)\n", path, findings);
        return 1;
    }
    size_t header = (size_t)res.data_start;
    volatile uint8_t sink = 0;
    for (size_t off = 0; off < header; off += 4096)
        sink = (uint8_t)(sink ^ buf[off]);
    (void)sink;
    warmup = run_once(buf, len, &lim, &findings, &res, &cpu);
    size_t runs = bench_run_count(warmup, min_runs, max_runs, min_seconds);
    double *times = calloc(runs, sizeof *times), *cpus = calloc(runs, sizeof *cpus);
    if (!times || !cpus)
        return 2;
    for (size_t r = 0; r < runs; r++)
        times[r] = run_once(buf, len, &lim, &findings, &res, &cpus[r]);
    double best = times[0], cbest = cpus[0];
    for (size_t r = 1; r < runs; r++) {
        best = times[r] < best ? times[r] : best;
        cbest = cpus[r] < cbest ? cpus[r] : cbest;
    }
    double med = bench_median(times, runs), cmed = bench_median(cpus, runs);
    stg_report *r = stg_report_new(&lim);
    stg_gguf_file f;
    stg_gguf_file_init(&f, 0);
    (void)stg_gguf_check(buf, len, &lim, 0, r, &f, NULL);
    size_t tensors = f.ntensors, kvs = f.nkv;
    stg_gguf_file_release(&f);
    stg_report_free(r);
    printf("file=%s header_bytes=%zu tensors=%zu metadata=%zu runs=%zu best_s=%.6f median_s=%.6f "
           "cpu_best_s=%.6f cpu_median_s=%.6f mb_s_best=%.1f mb_s_median=%.1f mb_s_cpu=%.1f "
           "tensors_s=%.0f hwm_kib=%llu\n",
           path, header, tensors, kvs, runs, best, med, cbest, cmed, (double)header / best / 1e6,
           (double)header / med / 1e6, (double)header / cbest / 1e6, (double)tensors / best,
           (unsigned long long)bench_status_kib("VmHWM:"));
    free(times);
    free(cpus);
    return 0;
}
