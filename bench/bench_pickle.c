/* Pickle scan throughput: times stg_scan_buffer (sniff + opcode walk + policy, no digest) over
 * one file held in memory.
 *
 *   bench_pickle FILE [--name HINT] [--min-runs N] [--max-runs N] [--seconds S]
 *
 * Meant for a raw pickle stream such as the data.pkl member of a torch.save() archive
 * (bench/gen_pickle.py --pickle); MB/s counts all bytes of FILE. HINT is the name the bytes
 * carry for sniffing (default: FILE's base name). One warm-up run, then timed runs (at least
 * --min-runs, more until about --seconds were spent); best and median are reported.
 *
 * Output: one line of key=value pairs on stdout (bench/run_pickle.sh parses it), including the
 * verdict, the format found and the number of globals and findings, so a run that stopped early
 * (a malformed verdict on a benign file) is visible next to its speed. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchutil.h"
#include "stguard/stguard.h"

static void usage(void)
{
    fprintf(stderr, "usage: bench_pickle FILE [--name HINT] [--min-runs N] [--max-runs N] "
                    "[--seconds S]\n");
    exit(2);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, used = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (used == cap) {
            size_t ncap = cap ? cap * 2 : 1u << 20;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + used, 1, cap - used, f);
        used += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *len = used;
    return buf;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *hint = NULL;
    size_t min_runs = 5, max_runs = 500;
    double min_seconds = 2.0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            hint = argv[++i];
        } else if (strcmp(argv[i], "--min-runs") == 0 && i + 1 < argc) {
            min_runs = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--max-runs") == 0 && i + 1 < argc) {
            max_runs = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            min_seconds = strtod(argv[++i], NULL);
        } else if (argv[i][0] == '-' || path) {
            usage();
        } else {
            path = argv[i];
        }
    }
    if (!path || min_runs < 1 || max_runs < min_runs)
        usage();
    if (!hint) {
        const char *slash = strrchr(path, '/');
        hint = slash ? slash + 1 : path;
    }

    size_t len = 0;
    uint8_t *buf = read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "bench_pickle: %s: %s\n", path, strerror(errno));
        return 2;
    }
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;

    stg_report *rep = NULL;
    double t0 = bench_now();
    if (stg_scan_buffer(buf, len, hint, &opt, &rep) != STG_OK) {
        fprintf(stderr, "bench_pickle: stg_scan_buffer failed\n");
        return 2;
    }
    double warmup = bench_now() - t0;
    stg_verdict verdict = stg_report_verdict(rep);
    stg_format format = stg_report_format(rep);
    size_t findings = stg_report_count(rep), globals = stg_report_global_count(rep);
    for (size_t i = 0; i < findings && i < 5; i++) {
        const stg_finding *f = stg_report_at(rep, i);
        fprintf(stderr, "  %s (%s): %s\n", stg_code_name(f->code), stg_severity_name(f->severity),
                f->message);
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
        stg_status s = stg_scan_buffer(buf, len, hint, &opt, &rep);
        times[r] = bench_now() - t0;
        cpu[r] = bench_cpu_now() - c0;
        if (s != STG_OK || stg_report_verdict(rep) != verdict) {
            fprintf(stderr, "bench_pickle: run %zu gave a different result\n", r);
            return 2;
        }
        stg_report_free(rep);
    }
    double median = bench_median(times, runs);
    double best = times[0];
    double cpu_median = bench_median(cpu, runs);
    double cpu_best = cpu[0];
    double mb = (double)len / 1e6;
    printf("file=%s bytes=%zu runs=%zu best_s=%.6f median_s=%.6f best_MBps=%.1f "
           "median_MBps=%.1f cpu_best_MBps=%.1f cpu_median_MBps=%.1f hwm_kib=%llu format=%s "
           "verdict=%s findings=%zu globals=%zu\n",
           path, len, runs, best, median, mb / best, mb / median, mb / cpu_best, mb / cpu_median,
           (unsigned long long)bench_status_kib("VmHWM:"), stg_format_name(format),
           stg_verdict_name(verdict), findings, globals);
    free(times);
    free(cpu);
    free(buf);
    return 0;
}
