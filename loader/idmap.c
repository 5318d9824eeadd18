/* File identities on the library's one map (see idmap.h). */
#include "idmap.h"

#include <string.h>

typedef struct stg_idmap_slot {
    uint64_t hash; /* parser/map.h: first */
    uint64_t dev, ino;
    size_t value;
} stg_idmap_slot;

typedef struct id_key {
    uint64_t dev, ino;
} id_key;

static bool same_id(const void *slot, const void *key, void *ctx)
{
    const stg_idmap_slot *s = slot;
    const id_key *k = key;
    (void)ctx;
    return s->dev == k->dev && s->ino == k->ino;
}

void stg_idmap_init(stg_idmap *m, uint64_t seed)
{
    /* 2^30 slots: more than a walk can hold in memory, so only memory bounds the table */
    stg_map_init(&m->map, sizeof(stg_idmap_slot), seed, 1u << 30);
    stg_map_set_overflow(&m->map, STG_IDMAP_OVERFLOW);
}

void stg_idmap_free(stg_idmap *m)
{
    uint64_t seed = m->map.seed;
    uint32_t overflow_max = m->map.overflow_max;
    stg_map_free(&m->map);
    stg_map_init(&m->map, sizeof(stg_idmap_slot), seed, 1u << 30);
    stg_map_set_overflow(&m->map, overflow_max);
}

bool stg_idmap_find(stg_idmap *m, uint64_t dev, uint64_t ino, size_t *value)
{
    id_key k = {dev, ino};
    void *slot;
    if (stg_map_find(&m->map, stg_map_hash_u64(&m->map, dev, ino), same_id, &k, NULL, &slot) !=
        STG_MAP_FOUND) {
        return false;
    }
    *value = ((const stg_idmap_slot *)slot)->value;
    return true;
}

stg_idmap_result stg_idmap_put(stg_idmap *m, uint64_t dev, uint64_t ino, size_t value)
{
    stg_map_status st = stg_map_reserve(&m->map);
    if (st != STG_MAP_OK) {
        return st == STG_MAP_NOMEM ? STG_IDMAP_NOMEM : STG_IDMAP_FULL;
    }
    uint64_t h = stg_map_hash_u64(&m->map, dev, ino);
    void *slot;
    st = stg_map_find(&m->map, h, NULL, NULL, NULL, &slot); /* the key is not in the map */
    if (st == STG_MAP_NOMEM) {
        return STG_IDMAP_NOMEM;
    }
    if (st != STG_MAP_ABSENT || slot == NULL) {
        return STG_IDMAP_FULL; /* CEILING: no slot and a full overflow list */
    }
    stg_idmap_slot *s = slot;
    stg_map_claim(&m->map, s, h);
    s->dev = dev;
    s->ino = ino;
    s->value = value;
    return STG_IDMAP_OK;
}
