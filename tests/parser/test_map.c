/* parser/map.h: the one open-addressing map for input-chosen keys. Find/claim/grow keep every
 * entry, max_slots makes the table FULL, and a grow that cannot place an entry within STG_HASH_PROBE_CEILING drops and counts
 * it. The flood test (keys chosen against a known seed) is in test_hash_flood.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/map.h"
#include "testutil.h"

typedef struct slot {
    uint64_t hash;
    char key[24];
    size_t len;
    uint32_t value;
} slot;

typedef struct key {
    const char *s;
    size_t len;
} key;

static bool same(const void *sp, const void *kp, void *ctx)
{
    const slot *e = sp;
    const key *k = kp;
    (void)ctx;
    return e->len == k->len && memcmp(e->key, k->s, k->len) == 0;
}

/* find-or-add; the status of the find (ABSENT means it was added). */
static stg_map_status put(stg_map *m, const char *s, uint32_t value)
{
    stg_map_status st = stg_map_reserve(m);
    if (st != STG_MAP_OK) {
        return st;
    }
    key k = {s, strlen(s)};
    uint64_t h = stg_map_hash(m, (const uint8_t *)s, k.len, NULL, 0);
    void *sp;
    st = stg_map_find(m, h, same, &k, NULL, &sp);
    if (st == STG_MAP_ABSENT) {
        slot *e = sp;
        stg_map_claim(m, e, h);
        memcpy(e->key, s, k.len);
        e->len = k.len;
        e->value = value;
    }
    return st;
}

static slot *get(stg_map *m, const char *s)
{
    key k = {s, strlen(s)};
    void *sp;
    uint64_t h = stg_map_hash(m, (const uint8_t *)s, k.len, NULL, 0);
    return stg_map_find(m, h, same, &k, NULL, &sp) == STG_MAP_FOUND ? sp : NULL;
}

START_TEST(test_put_get_grow)
{
    stg_map m;
    stg_map_init(&m, sizeof(slot), 12345, 1u << 20);
    ck_assert_ptr_null(get(&m, "missing")); /* empty table: no memory, nothing found */
    ck_assert_uint_eq(m.cap, 0);
    char name[24];
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "key-%u", i);
        ck_assert_int_eq(put(&m, name, i), STG_MAP_ABSENT);
    }
    ck_assert_uint_eq(m.count, 5000);
    ck_assert_uint_ge(m.cap, 2 * m.count); /* load factor at most 1/2 */
    ck_assert_uint_eq(m.cap & (m.cap - 1), 0);
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "key-%u", i);
        slot *e = get(&m, name);
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->value, i);
        ck_assert_int_eq(put(&m, name, 0), STG_MAP_FOUND); /* no second entry */
    }
    ck_assert_uint_eq(m.count, 5000);
    ck_assert_ptr_null(get(&m, "key-5000"));
    ck_assert_uint_eq(m.dropped, 0);
    /* hashes are never 0 (0 marks an empty slot), and the seed matters */
    ck_assert_uint_ne(stg_map_hash(&m, NULL, 0, NULL, 0), 0);
    stg_map other;
    stg_map_init(&other, sizeof(slot), 54321, 64);
    ck_assert_uint_ne(stg_map_hash(&m, (const uint8_t *)"a", 1, NULL, 0),
                      stg_map_hash(&other, (const uint8_t *)"a", 1, NULL, 0));
    stg_map_free(&m);
    ck_assert_ptr_null(m.slots);
}
END_TEST

START_TEST(test_max_slots_full)
{
    stg_map m;
    stg_map_init(&m, sizeof(slot), 7, 128); /* 64 entries at most */
    char name[24];
    for (uint32_t i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "k%u", i);
        ck_assert_int_eq(put(&m, name, i), STG_MAP_ABSENT);
    }
    ck_assert_int_eq(put(&m, "one more", 0), STG_MAP_FULL);
    ck_assert_uint_eq(m.count, 64);
    ck_assert_uint_eq(m.cap, 128);
    ck_assert_ptr_nonnull(get(&m, "k63")); /* lookups still work */
    stg_map_free(&m);
}
END_TEST

/* A grow that cannot place an entry within the ceiling drops it and counts it. Entries are
 * written by hand: a full run of the ceiling's length at one home slot, then a grow into a table
 * where two such runs meet. */
START_TEST(test_grow_drops_past_ceiling)
{
    stg_map m;
    stg_map_init(&m, sizeof(slot), 1, 4096);
    /* a 2048-slot table, all hashes at home slot 0 of the 4096-slot one and of this one */
    m.cap = 2048;
    m.slots = calloc(m.cap, sizeof(slot));
    ck_assert_ptr_nonnull(m.slots);
    slot *v = (slot *)(void *)m.slots;
    for (uint32_t i = 0; i < STG_HASH_PROBE_CEILING + 10; i++) {
        v[i].hash = ((uint64_t)(i + 1) << 13) | 1u; /* low 12 bits: 1 -> slot 1 everywhere */
        v[i].value = i;
    }
    m.count = 1024; /* the next reserve grows */
    ck_assert_int_eq(stg_map_reserve(&m), STG_MAP_OK);
    ck_assert_uint_eq(m.cap, 4096);
    ck_assert_uint_eq(m.dropped, 10);
    ck_assert_uint_eq(m.count, 1024); /* dropped entries still count: growth keeps its pace */
    stg_map_free(&m);
}
END_TEST

START_TEST(test_overflow_exact)
{
    enum { N = 400, OVER = 100 };
    static char keys[N][24];
    tu_map_colliding_keys(7, keys, N);
    stg_map m;
    stg_map_init(&m, sizeof(slot), 7, 4096);
    stg_map_set_overflow(&m, OVER);
    for (size_t i = 0; i < STG_HASH_PROBE_CEILING + OVER; i++) {
        ck_assert_int_eq(put(&m, keys[i], (uint32_t)i), STG_MAP_ABSENT);
    }
    ck_assert_uint_eq(m.overflow_count, OVER);
    for (size_t i = STG_HASH_PROBE_CEILING + OVER; i < N; i++) {
        ck_assert_int_eq(put(&m, keys[i], (uint32_t)i), STG_MAP_CEILING);
    }
    uint64_t before = m.probes;
    for (size_t i = 0; i < STG_HASH_PROBE_CEILING + OVER; i++) {
        slot *e = get(&m, keys[i]);
        ck_assert_msg(e != NULL && e->value == i, "key %zu lost", i);
        ck_assert_int_eq(put(&m, keys[i], 0), STG_MAP_FOUND); /* never a second entry */
    }
    ck_assert_ptr_null(get(&m, keys[N - 1]));
    ck_assert_uint_le(m.probes - before, (uint64_t)2 * (STG_HASH_PROBE_CEILING + OVER) *
                                             (STG_HASH_PROBE_CEILING + OVER));
    /* ordinary keys still land in the table, but for those whose home slot is inside the
     * flooded run (the overflow list is full); grows keep overflow entries findable */
    char name[24];
    uint32_t placed = 0;
    for (uint32_t i = 0; i < 600; i++) {
        snprintf(name, sizeof name, "plain-%u", i);
        stg_map_status st = put(&m, name, i);
        ck_assert(st == STG_MAP_ABSENT || st == STG_MAP_CEILING);
        if (st == STG_MAP_ABSENT) {
            placed++;
            ck_assert_ptr_nonnull(get(&m, name));
        }
    }
    ck_assert_uint_ge(placed, 500);
    ck_assert_uint_ge(m.cap, 2048);
    ck_assert_ptr_nonnull(get(&m, keys[0]));
    ck_assert_ptr_nonnull(get(&m, keys[STG_HASH_PROBE_CEILING + OVER - 1]));
    ck_assert_uint_eq(m.overflow_count, OVER);
    stg_map_free(&m);
    ck_assert_ptr_null(m.overflow);
}
END_TEST

/* A grow moves entries it cannot place within the ceiling to the overflow list when it has one;
 * when the list cannot take them all, the grow is refused (FULL) and the table kept whole. */
static void fill_one_run(stg_map *m, uint32_t over)
{
    stg_map_init(m, sizeof(slot), 1, 4096);
    stg_map_set_overflow(m, over);
    m->cap = 2048;
    m->slots = calloc(m->cap, sizeof(slot));
    ck_assert_ptr_nonnull(m->slots);
    slot *v = (slot *)(void *)m->slots;
    for (uint32_t i = 0; i < STG_HASH_PROBE_CEILING + 10; i++) {
        v[i].hash = ((uint64_t)(i + 1) << 13) | 1u; /* home slot 1 in both sizes */
    }
    m->count = 1024; /* the next reserve grows */
}

START_TEST(test_grow_into_overflow)
{
    stg_map m;
    fill_one_run(&m, 16);
    ck_assert_int_eq(stg_map_reserve(&m), STG_MAP_OK);
    ck_assert_uint_eq(m.cap, 4096);
    ck_assert_uint_eq(m.overflow_count, 10);
    ck_assert_uint_eq(m.dropped, 0);
    stg_map_free(&m);
    fill_one_run(&m, 4); /* room for 4 of the 10: refused, nothing lost */
    uint8_t *before = m.slots;
    ck_assert_int_eq(stg_map_reserve(&m), STG_MAP_FULL);
    ck_assert_uint_eq(m.cap, 2048);
    ck_assert_ptr_eq(m.slots, before);
    ck_assert_uint_eq(m.overflow_count, 0);
    ck_assert_uint_eq(m.dropped, 0);
    stg_map_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("map");
    TCase *tc = tcase_create("map");
    tcase_add_test(tc, test_put_get_grow);
    tcase_add_test(tc, test_max_slots_full);
    tcase_add_test(tc, test_grow_drops_past_ceiling);
    tcase_add_test(tc, test_overflow_exact);
    tcase_add_test(tc, test_grow_into_overflow);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
