/* File identities with a bounded worst case (see idmap.h). */
#include "idmap.h"

#include <string.h>

#include "../parser/hash.h"
#include "../parser/mem.h"

void stg_idmap_init(stg_idmap *m, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->seed = seed;
    m->overflow_max = STG_IDMAP_OVERFLOW;
}

void stg_idmap_free(stg_idmap *m)
{
    stg_mem_free(m->slots);
    stg_mem_free(m->overflow);
    uint64_t seed = m->seed;
    size_t overflow_max = m->overflow_max;
    memset(m, 0, sizeof *m);
    m->seed = seed;
    m->overflow_max = overflow_max;
}

static size_t home(const stg_idmap *m, uint64_t dev, uint64_t ino, size_t cap)
{
    return (size_t)stg_hash_u64(m->seed, dev, ino) & (cap - 1);
}

/* A free slot for (dev, ino) within the probe ceiling of its home in slots[0..cap), or SIZE_MAX. */
static size_t free_slot(stg_idmap *m, const stg_idmap_slot *slots, size_t cap, uint64_t dev,
                        uint64_t ino)
{
    size_t i = home(m, dev, ino, cap);
    for (unsigned k = 0; k < STG_HASH_PROBE_CEILING && k < cap; k++, i = (i + 1) & (cap - 1)) {
        m->probes++;
        if (!slots[i].used) {
            return i;
        }
    }
    return SIZE_MAX;
}

static stg_idmap_result overflow_add(stg_idmap *m, const stg_idmap_slot *s)
{
    if (m->overflow == NULL) {
        m->overflow = stg_mem_calloc(m->overflow_max > 0 ? m->overflow_max : 1,
                                     sizeof *m->overflow);
        if (m->overflow == NULL) {
            return STG_IDMAP_NOMEM;
        }
    }
    if (m->overflow_count >= m->overflow_max) {
        return STG_IDMAP_FULL;
    }
    m->overflow[m->overflow_count++] = *s;
    return STG_IDMAP_OK;
}

bool stg_idmap_find(stg_idmap *m, uint64_t dev, uint64_t ino, size_t *value)
{
    if (m->cap > 0) {
        size_t i = home(m, dev, ino, m->cap);
        for (unsigned k = 0; k < STG_HASH_PROBE_CEILING && k < m->cap;
             k++, i = (i + 1) & (m->cap - 1)) {
            const stg_idmap_slot *s = &m->slots[i];
            m->probes++;
            if (!s->used) {
                break; /* no key is placed past a free slot of its probe sequence */
            }
            if (s->dev == dev && s->ino == ino) {
                *value = s->value;
                return true;
            }
        }
    }
    for (size_t i = 0; i < m->overflow_count; i++) {
        m->probes++;
        if (m->overflow[i].dev == dev && m->overflow[i].ino == ino) {
            *value = m->overflow[i].value;
            return true;
        }
    }
    return false;
}

/* Doubles the table; keys that find no slot within the ceiling in the new one go to the
 * overflow list (which they fit: it only refuses past STG_IDMAP_OVERFLOW, and then the old
 * table is kept). */
static stg_idmap_result grow(stg_idmap *m)
{
    size_t ncap = m->cap == 0 ? 64 : m->cap * 2;
    stg_idmap_slot *ns = stg_mem_calloc(ncap, sizeof *ns);
    if (ns == NULL) {
        return STG_IDMAP_NOMEM;
    }
    size_t overflow_before = m->overflow_count;
    for (size_t i = 0; i < m->cap; i++) {
        const stg_idmap_slot *s = &m->slots[i];
        if (!s->used) {
            continue;
        }
        size_t j = free_slot(m, ns, ncap, s->dev, s->ino);
        stg_idmap_result r = STG_IDMAP_OK;
        if (j != SIZE_MAX) {
            ns[j] = *s;
        } else {
            r = overflow_add(m, s);
        }
        if (r != STG_IDMAP_OK) {
            m->overflow_count = overflow_before; /* undo: the old table still holds them */
            stg_mem_free(ns);
            return r;
        }
    }
    stg_mem_free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return STG_IDMAP_OK;
}

stg_idmap_result stg_idmap_put(stg_idmap *m, uint64_t dev, uint64_t ino, size_t value)
{
    if (2 * (m->count + 1) > m->cap) {
        stg_idmap_result r = grow(m);
        if (r != STG_IDMAP_OK) {
            return r;
        }
    }
    stg_idmap_slot s = {dev, ino, value, true};
    size_t i = free_slot(m, m->slots, m->cap, dev, ino);
    if (i == SIZE_MAX) {
        stg_idmap_result r = overflow_add(m, &s);
        if (r == STG_IDMAP_OK) {
            m->count++;
        }
        return r;
    }
    m->slots[i] = s;
    m->count++;
    return STG_IDMAP_OK;
}
