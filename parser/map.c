/* Linear probing over caller-defined slots (see map.h). */
#include "map.h"

#include <string.h>

#include "mem.h"

#define MAP_FIRST_CAP 64u

void stg_map_init(stg_map *m, size_t slot_size, uint64_t seed, uint32_t max_slots)
{
    memset(m, 0, sizeof *m);
    m->slot_size = slot_size;
    m->seed = seed;
    m->max_slots = max_slots;
}

void stg_map_free(stg_map *m)
{
    stg_mem_free(m->slots);
    m->slots = NULL;
    m->cap = 0;
    m->count = 0;
}

uint64_t stg_map_hash(const stg_map *m, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return stg_hash_bytes(m->seed, a, an, b, bn) | 1u;
}

static inline uint64_t slot_hash(const uint8_t *slot)
{
    uint64_t h;
    memcpy(&h, slot, sizeof h);
    return h;
}

/* First slot of slots[0..cap) for h: an empty one, or one whose hash is h that `same`
 * accepts; NULL past the probe ceiling. */
static uint8_t *probe(stg_map *m, uint8_t *slots, uint32_t cap, uint64_t h, stg_map_same same,
                      const void *key, void *ctx)
{
    uint32_t j = (uint32_t)h & (cap - 1);
    for (uint32_t n = 0; n < STG_HASH_PROBE_CEILING; n++, j = (j + 1) & (cap - 1)) {
        m->probes++;
        uint8_t *s = slots + (size_t)j * m->slot_size;
        uint64_t at = slot_hash(s);
        if (at == 0 || (at == h && same != NULL && same(s, key, ctx))) {
            return s;
        }
    }
    return NULL;
}

stg_map_status stg_map_reserve(stg_map *m)
{
    if (m->count + 1 <= m->cap / 2) {
        return STG_MAP_OK;
    }
    uint32_t ncap = m->cap == 0 ? MAP_FIRST_CAP : m->cap * 2;
    if (ncap > m->max_slots || ncap == 0) {
        return STG_MAP_FULL;
    }
    uint8_t *ns = stg_mem_calloc(ncap, m->slot_size);
    if (ns == NULL) {
        return STG_MAP_NOMEM;
    }
    for (uint32_t i = 0; i < m->cap; i++) {
        const uint8_t *s = m->slots + (size_t)i * m->slot_size;
        uint64_t h = slot_hash(s);
        if (h == 0) {
            continue;
        }
        uint8_t *d = probe(m, ns, ncap, h, NULL, NULL, NULL);
        if (d == NULL) {
            m->dropped++; /* only keys chosen against a known seed get here */
            continue;
        }
        memcpy(d, s, m->slot_size);
    }
    stg_mem_free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return STG_MAP_OK;
}

stg_map_status stg_map_find(stg_map *m, uint64_t h, stg_map_same same, const void *key, void *ctx,
                            void **slot)
{
    *slot = NULL;
    if (m->cap == 0) {
        return STG_MAP_ABSENT;
    }
    uint8_t *s = probe(m, m->slots, m->cap, h, same, key, ctx);
    if (s == NULL) {
        return STG_MAP_CEILING;
    }
    *slot = s;
    return slot_hash(s) != 0 ? STG_MAP_FOUND : STG_MAP_ABSENT;
}

void stg_map_claim(stg_map *m, void *slot, uint64_t h)
{
    memcpy(slot, &h, sizeof h);
    m->count++;
}
