/* Loader benchmarks (docs/performance.md, "Loaders"):
 *   bench_stream gen PATH MIB [sparse|dense] [PAD]
 *                                       writes a Llama-style safetensors file of about MIB MiB:
 *                                       F16 tensors, padded header (+ PAD spaces, a multiple of
 *                                       8); data pseudo-random, or a hole (ftruncate) with sparse
 *   bench_stream stream PATH|-          reads the file (or stdin) in 1 MiB chunks through the push
 *                                       API with the whole-stream SHA-256 on; prints time,
 *                                       throughput, verdict, digest, peak RSS and the stream's own
 *                                       memory account
 *   bench_stream mmap PATH [REPEAT]     stg_file_open (validate) + stg_file_read_tensor of the
 *                                       first tensor in data order; best and median of REPEAT
 * Output: one "key=value" line per run, for the scripts bench/sha256.sh and bench/mmap.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/benchutil.h"
#include "loader/stream.h"
#include "stguard/stguard.h"

#define CHUNK ((size_t)1 << 20)

static int gen(const char *path, uint64_t mib, int sparse, size_t extra_pad)
{
    /* 32 layers x 9 tensors (names as in Llama checkpoints), sizes scaled to the target */
    static const char *const parts[] = {
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
        "self_attn.o_proj", "mlp.gate_proj",    "mlp.up_proj",
        "mlp.down_proj",    "input_layernorm",  "post_attention_layernorm"};
    const size_t layers = 32, per = 9, nt = layers * per;
    uint64_t total = mib << 20;
    uint64_t each = (total / nt) & ~(uint64_t)7; /* bytes per tensor, F16 elements */
    size_t cap = nt * 160 + 64, hl = 0;
    char *hdr = malloc(cap);
    if (hdr == NULL) {
        return 1;
    }
    hl += (size_t)snprintf(hdr + hl, cap - hl, "{\"__metadata__\":{\"format\":\"pt\"}");
    /* first in data order: a fixed 8 KiB norm vector, so "first tensor read" is the same work
     * whatever the file size */
    hl += (size_t)snprintf(hdr + hl, cap - hl,
                           ",\"model.norm.weight\":{\"dtype\":\"F16\",\"shape\":[4096],"
                           "\"data_offsets\":[0,8192]}");
    uint64_t off = 8192;
    for (size_t l = 0; l < layers; l++) {
        for (size_t p = 0; p < per; p++) {
            hl += (size_t)snprintf(
                hdr + hl, cap - hl,
                ",\"model.layers.%zu.%s.weight\":{\"dtype\":\"F16\",\"shape\":[%llu],"
                "\"data_offsets\":[%llu,%llu]}",
                l, parts[p], (unsigned long long)(each / 2), (unsigned long long)off,
                (unsigned long long)(off + each));
            off += each;
        }
    }
    hl += (size_t)snprintf(hdr + hl, cap - hl, "}");
    while (hl % 8 != 0) {
        hdr[hl++] = ' ';
    }
    for (size_t i = 0; i < extra_pad && hl + 1 < cap; i++) {
        hdr[hl++] = ' '; /* moves the length's first byte (what a pickle reader would see) */
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("open");
        return 1;
    }
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) {
        len8[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    }
    if (write(fd, len8, 8) != 8 || write(fd, hdr, hl) != (ssize_t)hl) {
        perror("write");
        return 1;
    }
    if (sparse) {
        if (ftruncate(fd, (off_t)(8 + hl + off)) != 0) {
            perror("ftruncate");
            return 1;
        }
    } else {
        uint8_t *buf = malloc(CHUNK);
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (size_t i = 0; i + 8 <= CHUNK; i += 8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            memcpy(buf + i, &x, 8);
        }
        for (uint64_t done = 0; done < off;) {
            size_t n = off - done < CHUNK ? (size_t)(off - done) : CHUNK;
            buf[done % 251] ^= (uint8_t)done; /* chunks differ */
            if (write(fd, buf, n) != (ssize_t)n) {
                perror("write");
                return 1;
            }
            done += n;
        }
        free(buf);
    }
    close(fd);
    printf("generated=%s tensors=%zu header=%zu data=%llu\n", path, nt, hl,
           (unsigned long long)off);
    free(hdr);
    return 0;
}

static int stream(const char *path)
{
    int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY);
    if (fd < 0) {
        perror("open");
        return 1;
    }
    uint8_t *buf = malloc(CHUNK);
    stg_stream *s = NULL;
    if (buf == NULL || stg_stream_new(NULL, NULL, &s) != STG_OK) {
        return 1;
    }
    double t0 = bench_now(), c0 = bench_cpu_now();
    uint64_t total = 0;
    for (;;) {
        ssize_t got = read(fd, buf, CHUNK);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        stg_status st = stg_stream_feed(s, buf, (size_t)got);
        if (st != STG_OK && st != STG_E_INVALID) {
            fprintf(stderr, "feed: %s\n", stg_status_name(st));
            return 1;
        }
        total += (uint64_t)got;
    }
    stg_report *r = NULL;
    if (stg_stream_finish(s, &r) != STG_OK) {
        return 1;
    }
    double t = bench_now() - t0, c = bench_cpu_now() - c0;
    printf("mode=stream bytes=%llu seconds=%.3f cpu=%.3f mib_s=%.0f verdict=%s sha256=%s "
           "peak_rss_kib=%llu stream_memory=%zu\n",
           (unsigned long long)total, t, c, (double)total / t / 1048576.0,
           stg_verdict_name(stg_report_verdict(r)), stg_report_sha256(r),
           (unsigned long long)bench_status_kib("VmHWM:"), stg_stream_memory_peak(s));
    stg_report_free(r);
    stg_stream_free(s);
    free(buf);
    if (fd != 0) {
        close(fd);
    }
    return 0;
}

static int mmap_bench(const char *path, int repeat)
{
    double *t = calloc((size_t)repeat, sizeof *t);
    double *to = calloc((size_t)repeat, sizeof *to);
    uint64_t first_len = 0;
    for (int i = 0; i < repeat; i++) {
        double t0 = bench_now();
        stg_file *f = NULL;
        stg_report *r = NULL;
        stg_status st = stg_file_open(path, NULL, &f, &r);
        if (st != STG_OK) {
            fprintf(stderr, "open: %s\n", stg_status_name(st));
            return 1;
        }
        to[i] = bench_now() - t0;
        const stg_tensor *first = stg_file_tensor_at(f, 0);
        size_t n = (size_t)(first->end - first->begin);
        void *dst = malloc(n);
        if (dst == NULL || stg_file_read_tensor(f, first, dst, n) != STG_OK) {
            return 1;
        }
        t[i] = bench_now() - t0;
        first_len = n;
        free(dst);
        stg_report_free(r);
        stg_file_close(f);
    }
    double best = t[0];
    for (int i = 1; i < repeat; i++) {
        best = t[i] < best ? t[i] : best;
    }
    printf("mode=mmap path=%s repeat=%d best_ms=%.3f median_ms=%.3f open_median_ms=%.3f "
           "first_tensor_bytes=%llu\n",
           path, repeat, best * 1e3, bench_median(t, (size_t)repeat) * 1e3,
           bench_median(to, (size_t)repeat) * 1e3, (unsigned long long)first_len);
    free(t);
    free(to);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "gen") == 0) {
        return gen(argv[2], strtoull(argv[3], NULL, 10),
                   argc >= 5 && strcmp(argv[4], "sparse") == 0,
                   argc >= 6 ? (size_t)strtoull(argv[5], NULL, 10) : 0);
    }
    if (argc == 3 && strcmp(argv[1], "stream") == 0) {
        return stream(argv[2]);
    }
    if (argc >= 3 && strcmp(argv[1], "mmap") == 0) {
        return mmap_bench(argv[2], argc >= 4 ? atoi(argv[3]) : 5);
    }
    fprintf(stderr, "usage: bench_stream gen PATH MIB [sparse|dense] [PAD] | stream PATH|- | "
                    "mmap PATH [N]\n");
    return 2;
}
