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

void stg_map_set_overflow(stg_map *m, uint32_t n)
{
    m->overflow_max = n;
}

void stg_map_free(stg_map *m)
{
    stg_mem_free(m->slots);
    stg_mem_free(m->overflow);
    m->slots = NULL;
    m->overflow = NULL;
    m->cap = 0;
    m->count = 0;
    m->overflow_count = 0;
}

uint64_t stg_map_hash(const stg_map *m, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return stg_hash_bytes(m->seed, a, an, b, bn) | 1u;
}

uint64_t stg_map_hash_u64(const stg_map *m, uint64_t x, uint64_t y)
{
    return stg_hash_u64(m->seed, x, y) | 1u;
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

/* The overflow list's next free slot; NULL when it is full or has none (or *nomem). */
static uint8_t *overflow_slot(stg_map *m, bool *nomem)
{
    *nomem = false;
    if (m->overflow_count >= m->overflow_max) {
        return NULL;
    }
    if (m->overflow == NULL) {
        m->overflow = stg_mem_calloc(m->overflow_max, m->slot_size);
        if (m->overflow == NULL) {
            *nomem = true;
            return NULL;
        }
    }
    uint8_t *o = m->overflow + (size_t)m->overflow_count * m->slot_size;
    memset(o, 0, m->slot_size); /* a grow that failed may have written it */
    return o;
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
    uint32_t overflow_before = m->overflow_count;
    for (uint32_t i = 0; i < m->cap; i++) {
        const uint8_t *s = m->slots + (size_t)i * m->slot_size;
        uint64_t h = slot_hash(s);
        if (h == 0) {
            continue;
        }
        uint8_t *d = probe(m, ns, ncap, h, NULL, NULL, NULL);
        if (d == NULL) { /* only keys chosen against a known seed get here */
            bool nomem;
            d = overflow_slot(m, &nomem);
            if (nomem) {
                m->overflow_count = overflow_before;
                stg_mem_free(ns);
                return STG_MAP_NOMEM;
            }
            if (d == NULL && m->overflow_max > 0) {
                /* an exact map loses no key: the old table is kept */
                m->overflow_count = overflow_before;
                stg_mem_free(ns);
                return STG_MAP_FULL;
            }
            if (d == NULL) {
                m->dropped++;
                continue;
            }
            m->overflow_count++;
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
    m->claim_overflow = false;
    uint8_t *s = m->cap == 0 ? NULL : probe(m, m->slots, m->cap, h, same, key, ctx);
    if (s != NULL && slot_hash(s) != 0) {
        *slot = s;
        return STG_MAP_FOUND;
    }
    for (uint32_t i = 0; same != NULL && i < m->overflow_count; i++) {
        m->probes++;
        uint8_t *o = m->overflow + (size_t)i * m->slot_size;
        if (slot_hash(o) == h && same != NULL && same(o, key, ctx)) {
            *slot = o;
            return STG_MAP_FOUND;
        }
    }
    if (s != NULL || m->cap == 0) {
        *slot = s;
        return STG_MAP_ABSENT;
    }
    bool nomem;
    *slot = overflow_slot(m, &nomem);
    if (nomem) {
        return STG_MAP_NOMEM;
    }
    m->claim_overflow = *slot != NULL;
    return *slot != NULL ? STG_MAP_ABSENT : STG_MAP_CEILING;
}

void stg_map_claim(stg_map *m, void *slot, uint64_t h)
{
    memcpy(slot, &h, sizeof h);
    m->count++;
    if (m->claim_overflow) {
        m->overflow_count++;
        m->claim_overflow = false;
    }
}
