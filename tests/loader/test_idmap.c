/* The tree walk's identity table (loader/idmap.h) under flooding: (device, inode) keys crafted
 * to share one home slot under a known seed. The map stays exact (every key put is found), one
 * operation never looks at more than STG_HASH_PROBE_CEILING + STG_IDMAP_OVERFLOW entries, the
 * same keys under another seed cost what sequential keys cost, and past the overflow list a
 * put is refused (STG_IDMAP_FULL: the walk fails closed for that directory). */
#include <check.h>
#include <stdlib.h>

#include "loader/idmap.h"
#include "parser/hash.h"

#define KNOWN_SEED 0x0123456789ABCDEFull

/* n inode numbers whose hash under seed has its low `bits` bits zero: one home slot in every
 * table of up to 2^bits slots. */
static uint64_t *crafted(uint64_t seed, size_t n, unsigned bits)
{
    uint64_t *k = malloc(n * sizeof *k);
    ck_assert_ptr_nonnull(k);
    uint64_t mask = ((uint64_t)1 << bits) - 1, ino = 1;
    for (size_t i = 0; i < n; ino++) {
        if ((stg_hash_u64(seed, 7, ino) & mask) == 0) {
            k[i++] = ino;
        }
    }
    return k;
}

/* Probes per operation of putting then finding keys[0..n) (device 7) under seed; *worst: the
 * most one find looked at. */
static double cost(uint64_t seed, const uint64_t *keys, size_t n, uint64_t *worst)
{
    stg_idmap m;
    stg_idmap_init(&m, seed);
    *worst = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(stg_idmap_put(&m, 7, keys[i], i), STG_IDMAP_OK);
    }
    /* puts: amortized (a growth re-places every key); finds: each one on its own */
    ck_assert_uint_le(m.map.probes, (uint64_t)3 * n * (STG_HASH_PROBE_CEILING + 1));
    for (size_t i = 0; i < n; i++) {
        size_t v = SIZE_MAX;
        uint64_t before = m.map.probes;
        ck_assert(stg_idmap_find(&m, 7, keys[i], &v));
        ck_assert_uint_eq(v, i);
        if (m.map.probes - before > *worst) {
            *worst = m.map.probes - before;
        }
    }
    size_t v;
    ck_assert(!stg_idmap_find(&m, 8, keys[0], &v)); /* another device: another file */
    double per_op = (double)m.map.probes / (double)(2 * n);
    stg_idmap_free(&m);
    return per_op;
}

START_TEST(test_idmap_flood_bounded_and_exact)
{
    size_t n = 2000;
    uint64_t *keys = crafted(KNOWN_SEED, n, 12);
    uint64_t *seq = malloc(n * sizeof *seq);
    ck_assert_ptr_nonnull(seq);
    for (size_t i = 0; i < n; i++) {
        seq[i] = i + 1;
    }
    uint64_t worst_flood, worst_seq, worst_other;
    double flood = cost(KNOWN_SEED, keys, n, &worst_flood);
    double sequential = cost(KNOWN_SEED, seq, n, &worst_seq);
    double other_seed = cost(KNOWN_SEED ^ 0x5555, keys, n, &worst_other);
    /* crafted against the seed: a find is bounded (table probe ceiling + overflow list),
     * however many keys collide */
    ck_assert_uint_le(worst_flood, STG_HASH_PROBE_CEILING + STG_IDMAP_OVERFLOW);
    ck_assert_double_gt(flood, 10 * sequential); /* the keys do collide under that seed */
    /* the same keys under another seed (a walk's secret one): as cheap as sequential keys */
    ck_assert_double_lt(other_seed, 4 * sequential + 2);
    ck_assert_uint_lt(worst_other, 64);
    ck_assert_uint_lt(worst_seq, 64);
    free(keys);
    free(seq);
}
END_TEST

/* More colliding keys than the probe ceiling and the overflow list hold: refused, not lost. */
START_TEST(test_idmap_full_refuses)
{
    /* An overflow list of 256 (the walk's is STG_IDMAP_OVERFLOW) keeps the crafting cheap. One
     * home in tables of up to 1,024 slots, two in the 2,048 the map grows to: at most two full
     * probe runs and the overflow list take keys. */
    const size_t overflow = 256;
    size_t fit = STG_HASH_PROBE_CEILING + overflow;
    size_t n = fit + STG_HASH_PROBE_CEILING + 100;
    uint64_t *keys = crafted(KNOWN_SEED, n, 10);
    stg_idmap m;
    stg_idmap_init(&m, KNOWN_SEED);
    ck_assert_uint_eq(m.map.overflow_max, STG_IDMAP_OVERFLOW);
    m.map.overflow_max = (uint32_t)overflow;
    size_t ok = 0, full = 0;
    for (size_t i = 0; i < n; i++) {
        stg_idmap_result r = stg_idmap_put(&m, 7, keys[i], i);
        ck_assert(r == STG_IDMAP_OK || r == STG_IDMAP_FULL);
        if (r == STG_IDMAP_OK) {
            ok++;
        } else {
            full++;
        }
    }
    ck_assert_uint_ge(ok, fit);
    ck_assert_uint_le(ok, fit + STG_HASH_PROBE_CEILING);
    ck_assert_uint_ge(full, 100);
    /* every key that was taken is found; the refused ones are not */
    size_t found = 0, v;
    for (size_t i = 0; i < n; i++) {
        found += stg_idmap_find(&m, 7, keys[i], &v) ? 1 : 0;
    }
    ck_assert_uint_eq(found, ok);
    stg_idmap_free(&m);
    /* near miss: as many sequential keys all fit */
    stg_idmap_init(&m, KNOWN_SEED);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(stg_idmap_put(&m, 7, i + 1, i), STG_IDMAP_OK);
    }
    ck_assert_uint_eq(m.map.overflow_count, 0);
    stg_idmap_free(&m);
    free(keys);
}
END_TEST

static Suite *idmap_suite(void)
{
    Suite *s = suite_create("idmap");
    TCase *tc = tcase_create("flood");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_idmap_flood_bounded_and_exact);
    tcase_add_test(tc, test_idmap_full_refuses);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(idmap_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
