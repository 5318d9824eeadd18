/* Complexity regression suite: scan time against input size, for each parser, on random,
 * sequential and adversarial inputs of 1x, 2x, 4x and 8x a base element count. Growth must
 * be linear or n log n: the exponent log2(t(8x) / t(1x)) / 3 is printed per row, and a row
 * above --max-exponent (default 1.3; n log n over these sizes gives about 1.1) fails.
 *
 *   bench_complexity [--scale S] [--max-exponent E] [--only PARSER]
 *
 * Inputs are generated in memory (no files): a safetensors header of n tensors, a pickle of n
 * memo PUTs and one of n GLOBALs, a stored zip and a tar of n empty members, an index of n
 * tensors. Adversarial means the keys a table or a comparison likes least: memo indexes and
 * global names that shared one slot under the old unkeyed hashes, tensor names with a long
 * common prefix, repeated member names, one shard per tensor. Times are process CPU time, the
 * best of three runs. Exit status 1 when a row grows faster than allowed. Not a ctest test:
 * bench/run_complexity.sh builds and runs it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchutil.h"
#include "stguard/stguard.h"
#include "validator/index.h"
#include "validator/report.h"

typedef bench_buf buf;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

enum kind { SEQUENTIAL = 0, RANDOM = 1, ADVERSARIAL = 2 };
static const char *const kind_names[3] = {"sequential", "random", "adversarial"};

/* A name for element i: a counter, random hex, or (adversarial) a 200-byte common prefix. */
static void element_name(char *out, size_t cap, enum kind k, size_t i)
{
    if (k == SEQUENTIAL) {
        snprintf(out, cap, "t%08zu", i);
    } else if (k == RANDOM) {
        snprintf(out, cap, "%016llx", (unsigned long long)rng());
    } else {
        char prefix[201];
        memset(prefix, 'p', 200);
        prefix[200] = '\0';
        snprintf(out, cap, "%s%08zu", prefix, i);
    }
}

/* ------------------------------------------------------------------------------ inputs */

static buf gen_header(enum kind k, size_t n)
{
    buf h = {0};
    bench_puts(&h, "{");
    char name[256], entry[512];
    for (size_t i = 0; i < n; i++) {
        element_name(name, sizeof name, k, i);
        snprintf(entry, sizeof entry,
                 "%s\"%s\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%zu,%zu]}",
                 i == 0 ? "" : ",", name, i, i + 1);
        bench_puts(&h, entry);
    }
    bench_puts(&h, "}");
    while (h.len % 8 != 0) {
        bench_puts(&h, " ");
    }
    buf f = {0};
    bench_put_le(&f, h.len, 8);
    bench_put(&f, h.p, h.len);
    for (size_t i = 0; i < n; i++) {
        bench_put(&f, "\0", 1);
    }
    free(h.p);
    return f;
}

#define OLD_MUL 0x9E3779B97F4A7C15ull

static uint64_t inverse_odd(uint64_t a)
{
    uint64_t x = a;
    for (int i = 0; i < 6; i++) {
        x *= 2 - a * x;
    }
    return x;
}

/* n PUTs: indexes 0..n-1, random 63-bit ones, or ones that shared a slot of the old memo. */
static buf gen_memo(enum kind k, size_t n)
{
    buf b = {0};
    bench_put(&b, "\x80\x02N", 3);
    uint64_t inv = inverse_odd(OLD_MUL);
    char line[40];
    uint64_t j = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = i;
        if (k == RANDOM) {
            key = rng() & (uint64_t)INT64_MAX;
        } else if (k == ADVERSARIAL) {
            do {
                key = ((((uint64_t)0x5bd1e995u << 32) | j++) * inv) ^ ((uint64_t)1 << 32);
            } while (key > (uint64_t)INT64_MAX);
        }
        snprintf(line, sizeof line, "p%llu\n", (unsigned long long)key);
        bench_puts(&b, line);
    }
    bench_put(&b, ".", 1);
    return b;
}

/* n GLOBAL + POP: distinct names; adversarial ones end in two bytes that give FNV-1a of
 * (module, 0xff, name) 16 zero low bits, the slot the old globals table shared. */
static buf gen_globals(enum kind k, size_t n)
{
    buf b = {0};
    bench_put(&b, "\x80\x02", 2);
    const uint64_t prime = 0x100000001b3ull;
    uint64_t base = 0xcbf29ce484222325ull;
    for (const char *m = "mod"; *m != '\0'; m++) {
        base = (base ^ (uint8_t)*m) * prime;
    }
    base = (base ^ 0xffu) * prime;
    char name[64];
    size_t made = 0;
    for (uint64_t ctr = 0; made < n; ctr++) {
        int len;
        if (k == RANDOM) {
            len = snprintf(name, sizeof name, "g%016llx", (unsigned long long)rng());
        } else {
            len = snprintf(name, sizeof name, "g%08llx", (unsigned long long)ctr);
        }
        if (k == ADVERSARIAL) {
            uint64_t h = base;
            for (int i = 0; i < len; i++) {
                h = (h ^ (uint8_t)name[i]) * prime;
            }
            int b1 = -1;
            for (int c = 0x21; c < 0x7f && b1 < 0; c++) {
                if ((((h ^ (uint64_t)(unsigned)c) * prime) & 0xff00u) == 0) {
                    b1 = c;
                }
            }
            if (b1 < 0) {
                continue;
            }
            int b2 = (int)(((h ^ (uint64_t)(unsigned)b1) * prime) & 0xffu);
            if (b2 < 0x21 || b2 > 0x7e) {
                continue;
            }
            name[len++] = (char)b1;
            name[len++] = (char)b2;
        }
        bench_puts(&b, "cmod\n");
        bench_put(&b, name, (size_t)len);
        bench_put(&b, "\n0", 2);
        made++;
    }
    bench_put(&b, "N.", 2);
    return b;
}

/* A stored zip of n empty members (CRC 0); adversarial: every member named the same. */
static buf gen_zip(enum kind k, size_t n)
{
    buf z = {0}, cd = {0};
    char name[256];
    for (size_t i = 0; i < n; i++) {
        if (k == ADVERSARIAL) {
            snprintf(name, sizeof name, "archive/data/same");
        } else {
            element_name(name, sizeof name, k, i);
        }
        size_t nl = strlen(name);
        uint64_t local = z.len;
        bench_put_le(&z, 0x04034b50u, 4);
        bench_put_le(&z, 20, 2);
        bench_put_le(&z, 0, 2); /* flags */
        bench_put_le(&z, 0, 2); /* stored */
        bench_put_le(&z, 0, 4); /* time, date */
        bench_put_le(&z, 0, 4); /* crc */
        bench_put_le(&z, 0, 4);
        bench_put_le(&z, 0, 4);
        bench_put_le(&z, nl, 2);
        bench_put_le(&z, 0, 2);
        bench_put(&z, name, nl);
        bench_put_le(&cd, 0x02014b50u, 4);
        bench_put_le(&cd, 20, 2);
        bench_put_le(&cd, 20, 2);
        bench_put_le(&cd, 0, 2);
        bench_put_le(&cd, 0, 2);
        bench_put_le(&cd, 0, 4);
        bench_put_le(&cd, 0, 4);
        bench_put_le(&cd, 0, 4);
        bench_put_le(&cd, 0, 4);
        bench_put_le(&cd, nl, 2);
        bench_put_le(&cd, 0, 2);
        bench_put_le(&cd, 0, 2);
        bench_put_le(&cd, 0, 2);
        bench_put_le(&cd, 0, 2);
        bench_put_le(&cd, 0, 4);
        bench_put_le(&cd, local, 4);
        bench_put(&cd, name, nl);
    }
    uint64_t cd_off = z.len;
    bench_put(&z, cd.p, cd.len);
    bench_put_le(&z, 0x06054b50u, 4);
    bench_put_le(&z, 0, 2);
    bench_put_le(&z, 0, 2);
    bench_put_le(&z, n, 2);
    bench_put_le(&z, n, 2);
    bench_put_le(&z, cd.len, 4);
    bench_put_le(&z, cd_off, 4);
    bench_put_le(&z, 0, 2);
    free(cd.p);
    return z;
}

/* A ustar archive of n empty regular members; adversarial: every member named the same. */
static buf gen_tar(enum kind k, size_t n)
{
    buf t = {0};
    char name[256];
    for (size_t i = 0; i < n; i++) {
        uint8_t h[512];
        memset(h, 0, sizeof h);
        if (k == ADVERSARIAL) {
            snprintf(name, sizeof name, "archive/data/same");
        } else if (k == SEQUENTIAL) {
            snprintf(name, sizeof name, "t%08zu", i);
        } else {
            snprintf(name, sizeof name, "%016llx", (unsigned long long)rng());
        }
        memcpy(h, name, strlen(name) < 99 ? strlen(name) : 99);
        memcpy(h + 100, "0000644", 8);
        memcpy(h + 108, "0000000", 8);
        memcpy(h + 116, "0000000", 8);
        memcpy(h + 124, "00000000000", 12);
        memcpy(h + 136, "00000000000", 12);
        memset(h + 148, ' ', 8);
        h[156] = '0';
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
        unsigned sum = 0;
        for (size_t j = 0; j < sizeof h; j++) {
            sum += h[j];
        }
        snprintf((char *)h + 148, 8, "%06o", sum);
        h[155] = ' ';
        bench_put(&t, h, sizeof h);
    }
    uint8_t zero[1024];
    memset(zero, 0, sizeof zero);
    bench_put(&t, zero, sizeof zero);
    return t;
}

/* model.safetensors.index.json of n tensors over two shards; adversarial: a shard each. */
static buf gen_index(enum kind k, size_t n)
{
    buf b = {0};
    bench_puts(&b, "{\"metadata\":{\"total_size\":0},\"weight_map\":{");
    char name[256], entry[600];
    for (size_t i = 0; i < n; i++) {
        element_name(name, sizeof name, k == ADVERSARIAL ? SEQUENTIAL : k, i);
        char shard[64];
        if (k == ADVERSARIAL) {
            snprintf(shard, sizeof shard, "model-%08zu.safetensors", i);
        } else {
            snprintf(shard, sizeof shard, "model-%05zu-of-00002.safetensors", i % 2 + 1);
        }
        snprintf(entry, sizeof entry, "%s\"%s\":\"%s\"", i == 0 ? "" : ",", name, shard);
        bench_puts(&b, entry);
    }
    bench_puts(&b, "}}");
    return b;
}

/* ------------------------------------------------------------------------------ timing */

typedef buf (*gen_fn)(enum kind, size_t);

static const struct parser {
    const char *name;
    gen_fn gen;
    const char *hint; /* NULL: the index parser */
    size_t base;      /* elements at 1x (scale 1) */
} parsers[] = {
    {"header", gen_header, "m.safetensors", 20000},
    {"pickle-memo", gen_memo, "m.pkl", 20000},
    {"pickle-globals", gen_globals, "m.pkl", 8000},
    {"zip", gen_zip, "m.zip", 5000},
    {"tar", gen_tar, "m.tar", 5000},
    {"index", gen_index, NULL, 20000},
};

static double scan_once(const struct parser *ps, const buf *in)
{
    double t0 = bench_cpu_now();
    if (ps->hint == NULL) {
        stg_limits lim;
        stg_limits_default(&lim);
        stg_report *r = stg_report_new(&lim);
        stg_index ix;
        stg_index_init(&ix);
        (void)stg_index_parse(in->p, in->len, &lim, r, &ix);
        stg_index_release(&ix);
        stg_report_free(r);
    } else {
        stg_scan_options opt;
        stg_scan_options_default(&opt);
        opt.digest = false;
        stg_report *r = NULL;
        if (stg_scan_buffer(in->p, in->len, ps->hint, &opt, &r) != STG_OK) {
            fprintf(stderr, "%s: scan failed\n", ps->name);
            exit(2);
        }
        stg_report_free(r);
    }
    return bench_cpu_now() - t0;
}

int main(int argc, char **argv)
{
    double scale = 1.0, max_exp = 1.3;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
            scale = atof(argv[++i]);
        } else if (strcmp(argv[i], "--max-exponent") == 0 && i + 1 < argc) {
            max_exp = atof(argv[++i]);
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_complexity [--scale S] [--max-exponent E] "
                            "[--only PARSER]\n");
            return 2;
        }
    }
    int failed = 0;
    printf("%-15s %-12s %9s %9s %9s %9s %9s %7s %6s\n", "parser", "input", "n(1x)", "1x ms",
           "2x ms", "4x ms", "8x ms", "8x/1x", "exp");
    for (size_t p = 0; p < sizeof parsers / sizeof parsers[0]; p++) {
        const struct parser *ps = &parsers[p];
        if (only != NULL && strcmp(only, ps->name) != 0) {
            continue;
        }
        for (int k = 0; k < 3; k++) {
            size_t n1 = (size_t)((double)ps->base * scale);
            double ms[4];
            for (int m = 0; m < 4; m++) {
                rng_state = 0x9E3779B97F4A7C15ull;
                buf in = ps->gen((enum kind)k, n1 << m);
                double best = 1e30;
                for (int run = 0; run < 3; run++) {
                    double t = scan_once(ps, &in);
                    best = t < best ? t : best;
                }
                ms[m] = best * 1000.0;
                free(in.p);
            }
            /* a floor of 1 ms keeps timer noise on tiny runs from faking a growth */
            double lo = ms[0] < 1.0 ? 1.0 : ms[0], hi = ms[3] < 1.0 ? 1.0 : ms[3];
            double exponent = log2(hi / lo) / 3.0;
            bool bad = exponent > max_exp;
            failed |= bad;
            printf("%-15s %-12s %9zu %9.2f %9.2f %9.2f %9.2f %7.2f %6.2f%s\n", ps->name,
                   kind_names[k], n1, ms[0], ms[1], ms[2], ms[3], ms[3] / ms[0], exponent,
                   bad ? "  FAIL" : "");
            fflush(stdout);
        }
    }
    return failed ? 1 : 0;
}
