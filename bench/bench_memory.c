/* Memory bound on minimal-entry headers (SECURITY.md, docs/performance.md): for each of the four
 * adversarial shapes (tests/support/minimal_header.h) at each size given (MB of header, up to
 * the 100,000,000-byte max_header_len), validates the file in compat on the buffer path
 * (stg_st_validate: the arena's high-water mark) and on the stream path (64 KiB chunks:
 * stg_stream_memory_peak, every buffer the stream holds), and prints one table row: peaks
 * against the documented budget 16 x header + 8 MiB, seconds, and whether a limit was hit. Exit
 * status 1 when a limit is hit or a peak passes the bound (the stream's bound adds the header
 * bytes it holds, its two 65,557-byte windows and 64 KiB, as tests/validator/test_memory_bound.c).
 * max_metadata_entries (a count, 1,000,000 by default) is raised to its maximum so that the
 * memory of headers past a million metadata entries is measured rather than refused.
 * Usage: bench_memory [MB...] (default 1 10 100). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchutil.h"
#include "loader/stream.h"
#include "tests/support/minimal_header.h"
#include "validator/report.h"
#include "validator/safetensors.h"

static bool has_limit(const stg_report *r)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        if (stg_report_at(r, i)->code == STG_LIMIT_EXCEEDED) {
            return true;
        }
    }
    return false;
}

static uint8_t *st_file(const char *hdr, size_t n, size_t *len)
{
    *len = 8 + n;
    uint8_t *f = malloc(*len);
    if (f == NULL) {
        abort();
    }
    for (int i = 0; i < 8; i++) {
        f[i] = (uint8_t)((uint64_t)n >> (8 * i));
    }
    memcpy(f + 8, hdr, n);
    return f;
}

static double mib(uint64_t v)
{
    return (double)v / (1024.0 * 1024.0);
}

int main(int argc, char **argv)
{
    static const double defaults[] = {1, 10, 100};
    size_t sizes = argc > 1 ? (size_t)(argc - 1) : 3;
    int bad = 0;
    printf(
        "| shape | header MB | entries | budget MiB | buffer arena peak MiB (x header) | buffer s "
        "| stream peak MiB (bound) | stream s | limit hit |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int shape = 0; shape < MH_SHAPES; shape++) {
        for (size_t k = 0; k < sizes; k++) {
            double mb = argc > 1 ? atof(argv[k + 1]) : defaults[k];
            size_t max_len = (size_t)(mb * 1e6);
            if (max_len > 100000000u) {
                max_len = 100000000u;
            }
            size_t entries = 0;
            char *hdr = mh_build(shape, SIZE_MAX, max_len, &entries);
            size_t n = strlen(hdr), len;
            uint8_t *file = st_file(hdr, n, &len);
            free(hdr);
            stg_limits lim;
            stg_limits_default(&lim);
            lim.profile = STG_PROFILE_COMPAT;
            /* a count limit, not memory: 1,000,000 stops shapes 0 and 2 from about 6 MB on */
            lim.max_metadata_entries = UINT32_MAX;
            uint64_t budget = stg_st_memory_budget(&lim, n);

            stg_report *r = stg_report_new(&lim);
            stg_st_header h;
            stg_st_header_init(&h);
            double t0 = bench_now();
            stg_st_validate(file, len, &lim, r, &h);
            double buffer_s = bench_now() - t0;
            size_t arena_peak = h.arena.peak;
            bool limit = has_limit(r);
            stg_st_header_release(&h);
            stg_report_free(r);

            stg_stream *s = NULL;
            if (stg_stream_new(&lim, NULL, &s) != STG_OK) {
                return 2;
            }
            t0 = bench_now();
            for (size_t at = 0; at < len; at += 65536) {
                (void)stg_stream_feed(s, file + at, len - at < 65536 ? len - at : 65536);
            }
            r = NULL;
            stg_status fin = stg_stream_finish(s, &r);
            double stream_s = bench_now() - t0;
            size_t stream_peak = stg_stream_memory_peak(s);
            limit = limit || fin != STG_OK || has_limit(r);
            uint64_t stream_bound = 2 * ((uint64_t)n + 8) + budget + 2 * 65557 + 64 * 1024;
            stg_report_free(r);
            stg_stream_free(s);
            free(file);

            bool over = arena_peak > budget || stream_peak > stream_bound;
            bad |= over || limit;
            printf("| %s | %.1f | %zu | %.1f | %.1f (%.2f) | %.2f | %.1f (%.1f) | %.2f | %s%s |\n",
                   mh_shape_name(shape), (double)n / 1e6, entries, mib(budget), mib(arena_peak),
                   (double)arena_peak / (double)n, buffer_s, mib(stream_peak), mib(stream_bound),
                   stream_s, limit ? "yes" : "no", over ? " OVER" : "");
            fflush(stdout);
        }
    }
    printf("peak RSS of the process: %.1f MiB\n", (double)bench_status_kib("VmHWM:") / 1024.0);
    return bad ? 1 : 0;
}
