/* Hash flooding: every table keyed by bytes the input chooses keeps a bounded worst case.
 * Keys crafted to share one slot under the old unkeyed hashes (multiplicative for the memo,
 * FNV-1a low bits for the globals seen) cost about what sequential keys cost; keys crafted
 * against a known seed stop at the probe ceiling (the walker's memo, the globals seen and the
 * generic map of parser/map.h). Plus the sparse memo index finding. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parser/hash.h"
#include "parser/map.h"
#include "parser/pickle.h"
#include "testutil.h"
#include "dispatch/check.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf;

static void put(buf *b, const void *s, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* ------------------------------------------------------------------------------------------ */
/* memo */

#define OLD_MUL 0x9E3779B97F4A7C15ull

static uint64_t inverse_odd(uint64_t a)
{
    uint64_t x = a; /* Newton: each step doubles the correct low bits */
    for (int i = 0; i < 6; i++) {
        x *= 2 - a * x;
    }
    return x;
}

/* A protocol 2 pickle: NONE, then PUT key for each key (decimal, any size), then STOP. */
static buf memo_pickle(const uint64_t *keys, size_t n)
{
    buf b = {0};
    put(&b, "\x80\x02N", 3);
    char line[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(line, sizeof line, "p%llu\n", (unsigned long long)keys[i]);
        puts_(&b, line);
    }
    put(&b, ".", 1);
    return b;
}

static stg_pickle_status walk_memo(const uint64_t *keys, size_t n, uint64_t seed, uint64_t *probes,
                                   const char **limit)
{
    buf b = memo_pickle(keys, n);
    stg_pickle_limits pl = {1000, 1000000, 1 << 20, 4, seed};
    stg_pickle_walker w;
    stg_pickle_init(&w, &pl, NULL);
    size_t end = 0;
    stg_pickle_status st = stg_pickle_walk(&w, b.p, b.len, 0, &end);
    *probes = w.memo_probes;
    *limit = w.err_limit;
    stg_pickle_free(&w);
    free(b.p);
    return st;
}

START_TEST(test_memo_flood_old_hash)
{
    /* The attack: indexes whose old hash (key ^ id << 32) * M has one top half, so
     * they shared a slot at every table size (80k of them took 56 s). Level id 1: the first
     * walk's. */
    const size_t n = 20000;
    uint64_t *flood = malloc(n * sizeof *flood), *seq = malloc(n * sizeof *seq);
    ck_assert_ptr_nonnull(flood);
    ck_assert_ptr_nonnull(seq);
    uint64_t inv = inverse_odd(OLD_MUL);
    ck_assert_uint_eq(inv * OLD_MUL, 1);
    size_t made = 0;
    for (uint64_t i = 1; made < n; i++) {
        uint64_t key = ((((uint64_t)0x5bd1e995u << 32) | i) * inv) ^ ((uint64_t)1 << 32);
        if (key <= (uint64_t)INT64_MAX) {
            ck_assert_uint_eq((((key ^ ((uint64_t)1 << 32)) * OLD_MUL) >> 32), 0x5bd1e995u);
            flood[made++] = key;
        }
    }
    for (size_t i = 0; i < n; i++) {
        seq[i] = ((uint64_t)1 << 40) + i * 7; /* sparse too: both go to the hash */
    }
    uint64_t p_flood = 0, p_seq = 0;
    const char *limit = NULL;
    ck_assert_int_eq(walk_memo(seq, n, 0x1234567u, &p_seq, &limit), STG_PW_STOP);
    ck_assert_int_eq(walk_memo(flood, n, 0x1234567u, &p_flood, &limit), STG_PW_STOP);
    ck_assert_uint_ge(p_seq, n - 1); /* every PUT but the first looked a slot up */
    /* unseeded linear probing: ~n^2/2 = 2e8 probes; keyed: about the sequential count */
    ck_assert_msg(p_flood < 3 * p_seq, "flood %llu probes, sequential %llu",
                  (unsigned long long)p_flood, (unsigned long long)p_seq);
    /* the default seed too (pure calls) */
    ck_assert_int_eq(walk_memo(flood, n, 0, &p_flood, &limit), STG_PW_STOP);
    ck_assert_msg(p_flood < 3 * p_seq, "default seed: flood %llu probes",
                  (unsigned long long)p_flood);
    free(flood);
    free(seq);
}
END_TEST

START_TEST(test_memo_flood_known_seed)
{
    /* Keys chosen against the default seed, all landing in slot 0 of every table up to 4096
     * slots: the insert that would probe past the ceiling stops the walk with that limit, so
     * the work stays under ceiling x keys. The near miss: as many keys spread at random. */
    const size_t n = 2000;
    uint64_t *keys = malloc(n * sizeof *keys);
    ck_assert_ptr_nonnull(keys);
    size_t made = 0;
    for (uint64_t k = (uint64_t)1 << 40; made < n; k++) {
        if ((stg_hash_u64(STG_HASH_SEED_DEFAULT, k, 1) & 4095u) == 0) {
            keys[made++] = k;
        }
    }
    uint64_t probes = 0;
    const char *limit = NULL;
    ck_assert_int_eq(walk_memo(keys, n, 0, &probes, &limit), STG_PW_LIMIT);
    ck_assert_str_eq(limit, "hash_probe_ceiling");
    ck_assert_uint_le(probes, (uint64_t)STG_HASH_PROBE_CEILING * STG_HASH_PROBE_CEILING * 4);
    /* another seed: the same keys are ordinary */
    ck_assert_int_eq(walk_memo(keys, n, 0x9e3779b9u, &probes, &limit), STG_PW_STOP);
    ck_assert_uint_lt(probes, 8 * n);
    free(keys);
}
END_TEST

START_TEST(test_memo_sparse)
{
    /* LONG_BINPUT 2^32 - 1 and PUT 2^40: reported once per pickle, at the first; the walk
     * reaches STOP. Near misses: 2^24 - 1 (under the floor), and an index under the length of
     * a pickle that long. */
    static const uint8_t huge[] = "\x80\x02Nr\xff\xff\xff\xffNp1099511627776\n.";
    stg_report *r = tu_scan_pickles(huge, sizeof huge - 1, STG_PICKLE_RAW, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_MEMO_SPARSE), 1);
    const stg_finding *f = stg_report_at(r, (size_t)tu_find(r, STG_PICKLE_MEMO_SPARSE));
    ck_assert_uint_eq(f->offset, 3);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_MALFORMED), 0);
    stg_report_free(r);

    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = STG_PROFILE_COMPAT;
    r = tu_scan_pickles(huge, sizeof huge - 1, STG_PICKLE_RAW, &lim);
    f = stg_report_at(r, (size_t)tu_find(r, STG_PICKLE_MEMO_SPARSE));
    ck_assert_int_eq(f->severity, STG_SEV_WARNING);
    stg_report_free(r);

    static const uint8_t floor_miss[] = "\x80\x02Np16777215\n.";
    r = tu_scan_pickles(floor_miss, sizeof floor_miss - 1, STG_PICKLE_RAW, NULL);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_MEMO_SPARSE), 0);
    stg_report_free(r);
    static const uint8_t floor_hit[] = "\x80\x02Np16777216\n.";
    r = tu_scan_pickles(floor_hit, sizeof floor_hit - 1, STG_PICKLE_RAW, NULL);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_MEMO_SPARSE), 1);
    stg_report_free(r);

    /* 2^24 + 1 in a pickle longer than that: as many entries could be real. NONE, the PUT,
     * then NONE POP pairs to the length. */
    size_t pairs = (size_t)1 << 23;
    size_t len = 13 + 2 * pairs + 1;
    uint8_t *big = malloc(len);
    ck_assert_ptr_nonnull(big);
    memcpy(big, "\x80\x02Np16777217\n", 13);
    for (size_t i = 0; i < pairs; i++) {
        big[13 + 2 * i] = 'N';
        big[14 + 2 * i] = '0';
    }
    big[len - 1] = '.';
    ck_assert_uint_gt(len, 16777217);
    r = tu_scan_pickles(big, len, STG_PICKLE_RAW, NULL);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_MEMO_SPARSE), 0);
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_MALFORMED), 0);
    stg_report_free(r);
    free(big);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* globals seen */

#define FNV_PRIME ((uint64_t)0x100000001b3ull)

static uint64_t fnv_step(uint64_t h, uint8_t b)
{
    return (h ^ b) * FNV_PRIME;
}

/* GLOBAL lines "mod\nNAME\n" for n distinct names; crafted: the old table's hash (FNV-1a of
 * module, 0xff, name) has 16 zero low bits, so all of them shared slot 0 of the 65536-slot
 * table; else names from a counter. */
static buf globals_pickle(size_t n, bool crafted)
{
    buf b = {0};
    put(&b, "\x80\x02", 2);
    uint64_t base = 0xcbf29ce484222325ull;
    for (const char *m = "mod"; *m != '\0'; m++) {
        base = fnv_step(base, (uint8_t)*m);
    }
    base = fnv_step(base, 0xff);
    size_t made = 0;
    for (uint64_t ctr = 0; made < n; ctr++) {
        char name[16];
        int k = snprintf(name, sizeof name, "g%08llx", (unsigned long long)ctr);
        if (crafted) {
            /* Two trailing bytes b1 b2 with ((((h ^ b1) * P) ^ b2) * P) & 0xffff == 0:
             * b2 sets the low byte, so b1 must make the high byte of (h ^ b1) * P right. */
            uint64_t h = base;
            for (int i = 0; i < k; i++) {
                h = fnv_step(h, (uint8_t)name[i]);
            }
            uint64_t need = 0; /* (s1 ^ b2) * P == 0 mod 2^16  =>  s1 ^ b2 == 0 mod 2^16 */
            int b1 = -1;
            for (int c = 0x21; c < 0x7f && b1 < 0; c++) {
                uint64_t s1 = (h ^ (uint64_t)(unsigned)c) * FNV_PRIME;
                if (((s1 ^ need) & 0xff00u) == 0) {
                    b1 = c;
                }
            }
            if (b1 < 0) {
                continue;
            }
            uint64_t s1 = (h ^ (uint64_t)(unsigned)b1) * FNV_PRIME;
            int b2 = (int)(s1 & 0xffu);
            if (b2 < 0x21 || b2 > 0x7e) {
                continue; /* printable ASCII only: a name every reader takes as it is */
            }
            name[k++] = (char)b1;
            name[k++] = (char)b2;
            ck_assert_uint_eq(fnv_step(fnv_step(h, (uint8_t)b1), (uint8_t)b2) & 0xffffu, 0);
        }
        put(&b, "cmod\n", 5);
        put(&b, name, (size_t)k);
        put(&b, "\n0", 2); /* GLOBAL, then POP */
        made++;
    }
    put(&b, "N.", 2);
    return b;
}

static double scan_seconds(const buf *b, uint64_t seed, size_t *globals)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    ctx.hash_seed = seed;
    clock_t t0 = clock();
    stg_check_pickles(b->p, b->len, 0, STG_PICKLE_RAW, &ctx);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    stg_report_finish(r);
    *globals = stg_report_global_count(r);
    stg_report_free(r);
    return secs;
}

START_TEST(test_globals_flood)
{
    const size_t n = 30000;
    buf flood = globals_pickle(n, true), seq = globals_pickle(n, false);
    size_t g_flood = 0, g_seq = 0;
    double t_seq = scan_seconds(&seq, 0x51ed270b27d9a3c5ull, &g_seq);
    double t_flood = scan_seconds(&flood, 0x51ed270b27d9a3c5ull, &g_flood);
    ck_assert_uint_eq(g_seq, n); /* each distinct global listed once */
    ck_assert_uint_eq(g_flood, n);
    /* unkeyed: n^2/2 = 4.5e8 probes (seconds); keyed: about the sequential time */
    ck_assert_msg(t_flood < 3 * t_seq + 0.05, "flood %.3f s, sequential %.3f s", t_flood, t_seq);
    free(flood.p);
    free(seq.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* the generic map (parser/map.h) */

typedef struct map_slot {
    uint64_t hash;
    char key[24];
    size_t len;
} map_slot;

static bool map_same(const void *sp, const void *kp, void *ctx)
{
    const map_slot *e = sp;
    (void)ctx;
    return e->len == strlen(kp) && memcmp(e->key, kp, e->len) == 0;
}

/* find-or-add of a NUL-terminated key */
static stg_map_status map_put(stg_map *m, const char *s)
{
    stg_map_status st = stg_map_reserve(m);
    if (st != STG_MAP_OK) {
        return st;
    }
    size_t len = strlen(s);
    uint64_t h = stg_map_hash(m, (const uint8_t *)s, len, NULL, 0);
    void *sp;
    st = stg_map_find(m, h, map_same, s, NULL, &sp);
    if (st == STG_MAP_ABSENT) {
        map_slot *e = sp;
        stg_map_claim(m, e, h);
        memcpy(e->key, s, len);
        e->len = len;
    }
    return st;
}

START_TEST(test_map_flood_known_seed)
{
    enum { N = 1500 };
    static char keys[N][24];
    const uint64_t known = STG_HASH_SEED_DEFAULT;
    tu_map_colliding_keys(known, keys, N);
    stg_map m;
    stg_map_init(&m, sizeof(map_slot), known, 4096);
    size_t added = 0, capped = 0;
    for (size_t i = 0; i < N; i++) {
        stg_map_status st = map_put(&m, keys[i]);
        ck_assert(st == STG_MAP_ABSENT || st == STG_MAP_CEILING);
        added += st == STG_MAP_ABSENT;
        capped += st == STG_MAP_CEILING;
    }
    /* one run of colliding keys holds exactly the ceiling; the rest is refused, not scanned:
     * without the ceiling this is N^2 / 2 = 1.1e6 probes, with it at most N x ceiling */
    ck_assert_uint_eq(added, STG_HASH_PROBE_CEILING);
    ck_assert_uint_eq(capped, N - STG_HASH_PROBE_CEILING);
    ck_assert_uint_le(m.probes, (uint64_t)(N + 6 * 256) * STG_HASH_PROBE_CEILING);
    uint64_t known_probes = m.probes;
    stg_map_free(&m);
    /* the same keys under a secret seed: short probes, every key added */
    stg_map_init(&m, sizeof(map_slot), 0x51ed270b27d9a3c5ull, 4096);
    for (size_t i = 0; i < N; i++) {
        ck_assert_int_eq(map_put(&m, keys[i]), STG_MAP_ABSENT);
    }
    ck_assert_msg(m.probes < 8 * N, "secret seed: %llu probes for %d keys",
                  (unsigned long long)m.probes, N);
    ck_assert_uint_gt(known_probes, 20 * m.probes); /* the flood was real under the known seed */
    stg_map_free(&m);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* storage keys of a legacy torch file */

/* A legacy torch file whose data pickle declares n FloatStorages with the given keys, the key
 * list naming them in order, then n empty storage records. */
static buf legacy_file(char (*keys)[16], size_t n)
{
    buf b = {0};
    put(&b, "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
    put(&b, "\x80\x02M\xe9\x03.", 6);
    puts_(&b, "\x80\x02}.");
    puts_(&b, "\x80\x02(");
    for (size_t i = 0; i < n; i++) {
        uint8_t kl = (uint8_t)strlen(keys[i]);
        put(&b, "(U\x07storagectorch\nFloatStorage\nU", 31);
        put(&b, &kl, 1);
        put(&b, keys[i], kl);
        put(&b,
            "U\x03"
            "cpuK\x01tQ",
            9);
    }
    puts_(&b, "l.");
    puts_(&b, "\x80\x02](");
    for (size_t i = 0; i < n; i++) {
        uint8_t kl = (uint8_t)strlen(keys[i]);
        put(&b, "U", 1);
        put(&b, &kl, 1);
        put(&b, keys[i], kl);
    }
    puts_(&b, "e.");
    static const uint8_t zero[8] = {0};
    for (size_t i = 0; i < n; i++) {
        put(&b, zero, 8);
    }
    return b;
}

static stg_report *scan_legacy(const buf *b, uint64_t seed)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    ctx.hash_seed = seed;
    stg_check_pickles(b->p, b->len, 0, STG_PICKLE_TORCH_LEGACY, &ctx);
    stg_report_finish(r);
    return r;
}

START_TEST(test_storage_keys_flood_fails_closed)
{
    /* 400 keys sharing one home slot of every storage-key table up to 1,024 slots under a known
     * seed: the 257th finds no slot within the probe ceiling. The scan must not go on as if the
     * key list named undeclared storages: limit_exceeded, limit hash_probe_ceiling. */
    const uint64_t seed = 0x51ed270b27d9a3c5ull;
    enum { N = 400 };
    static char keys[N][16];
    size_t made = 0;
    for (unsigned ctr = 0; made < N; ctr++) {
        char k[16];
        int kl = snprintf(k, sizeof k, "%u", ctr);
        if ((stg_hash_bytes(seed, (const uint8_t *)k, (size_t)kl, NULL, 0) & 1022u) == 0) {
            memcpy(keys[made++], k, (size_t)kl + 1);
        }
    }
    buf b = legacy_file(keys, N);
    stg_report *r = scan_legacy(&b, seed);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_msg(at >= 0, "%s", tu_describe(r));
    const stg_finding *f = stg_report_at(r, (size_t)at);
    ck_assert_str_eq(f->limit, "hash_probe_ceiling");
    ck_assert_ptr_nonnull(strstr(f->message, "storage-key table"));
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_MALFORMED), 0);
    ck_assert_int_ge(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
    /* near miss: the same keys under another seed are framed, no finding but the file's */
    r = scan_legacy(&b, seed ^ 0xabcdefu);
    ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) < 0 && tu_find(r, STG_PICKLE_MALFORMED) < 0, "%s",
                  tu_describe(r));
    stg_report_free(r);
    free(b.p);
}
END_TEST

static Suite *hash_flood_suite(void)
{
    Suite *s = suite_create("hash_flood");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_memo_flood_old_hash);
    tcase_add_test(tc, test_memo_flood_known_seed);
    tcase_add_test(tc, test_memo_sparse);
    tcase_add_test(tc, test_globals_flood);
    tcase_add_test(tc, test_map_flood_known_seed);
    tcase_add_test(tc, test_storage_keys_flood_fails_closed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(hash_flood_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
