/* One open-addressing hash map for every table whose keys the input chooses (pickle globals
 * seen, legacy torch storage keys, ...). It stays fast under chosen keys: slots are found by a
 * keyed SipHash (parser/hash.h) under the caller's seed, and no probe walks past
 * STG_HASH_PROBE_CEILING slots, a hard ceiling whose outcome is defined: a lookup or insert
 * that would pass it returns STG_MAP_CEILING (the key is neither found nor added), and a grow
 * that cannot place an old entry within it drops that entry and counts it in `dropped`. The
 * owner decides what either means (fail closed, or degrade as its comment says). A map that must
 * stay exact (every key put is found) sets an overflow list (stg_map_set_overflow): keys that
 * find no slot within the ceiling go there, searched in full, so a lookup costs at most
 * STG_HASH_PROBE_CEILING + overflow_max comparisons, and only past that list is a key refused
 * (CEILING), or a grow (FULL, the table kept as it was): such a map never drops an entry.
 *
 * Slots are the caller's struct, of slot_size bytes, whose first member is the uint64_t hash
 * (0 marks an empty slot; stg_map_hash never returns 0). Keys live wherever the caller keeps
 * them; `same` compares a slot with a key. The load factor stays at most 1/2, the table starts
 * at 64 slots and doubles; memory comes from parser/mem.h. */
#ifndef STG_PARSER_MAP_H
#define STG_PARSER_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"

typedef struct stg_map {
    uint8_t *slots;     /* cap slots of slot_size bytes */
    size_t slot_size;   /* >= sizeof(uint64_t), the hash first */
    uint32_t cap;       /* 0 or a power of two */
    uint32_t count;     /* entries claimed; one a grow dropped still counts, so that growth
                         * keeps its pace under a flood */
    uint32_t max_slots; /* the table never grows past this many slots (a power of two) */
    uint64_t seed;      /* keys stg_map_hash */
    uint64_t probes;    /* slots looked at by every call (complexity tests, profiling) */
    uint64_t dropped;   /* entries grows could not place within the ceiling nor the overflow */
    uint8_t *overflow;  /* overflow_max slots once one is needed */
    uint32_t overflow_count, overflow_max;
    bool claim_overflow; /* the last ABSENT slot is in the overflow list */
} stg_map;

typedef enum stg_map_status {
    STG_MAP_OK = 0,      /* stg_map_reserve: room for one more entry */
    STG_MAP_FOUND = 1,   /* *slot is the entry `same` accepted */
    STG_MAP_ABSENT = 2,  /* *slot is the empty slot the key would take (NULL: empty table) */
    STG_MAP_CEILING = 3, /* no match and no empty slot within STG_HASH_PROBE_CEILING probes */
    STG_MAP_FULL = 4,    /* stg_map_reserve: max_slots reached, or (overflow list set) a grow
                          * would have to drop an entry */
    STG_MAP_NOMEM = 5,   /* the allocator refused (the map is as it was) */
} stg_map_status;

/* true when the slot (its hash already equal to the key's) holds the key. */
typedef bool (*stg_map_same)(const void *slot, const void *key, void *ctx);

/* An empty map (no memory until the first reserve). max_slots: a power of two, at most 2^30. */
void stg_map_init(stg_map *m, size_t slot_size, uint64_t seed, uint32_t max_slots);
void stg_map_free(stg_map *m);

/* Keeps up to n entries that find no slot within the probe ceiling in a list searched in full
 * (0, the default: none, such keys are CEILING). Set before the first entry. */
void stg_map_set_overflow(stg_map *m, uint32_t n);

/* The key's hash: SipHash-1-3 of a[0..an) then b[0..bn) under the map's seed, never 0. */
uint64_t stg_map_hash(const stg_map *m, const uint8_t *a, size_t an, const uint8_t *b, size_t bn);
/* The same for a key of two 64-bit words (a file identity, an index and a level, ...). */
uint64_t stg_map_hash_u64(const stg_map *m, uint64_t x, uint64_t y);

/* Makes room for one more entry (grows to keep the load factor at most 1/2). Call it before a
 * find whose ABSENT slot will be claimed: a grow moves every slot. */
stg_map_status stg_map_reserve(stg_map *m);

/* Looks the key (hash h) up: FOUND, ABSENT (the slot to claim, in the table or the overflow
 * list), CEILING (no room within the ceiling nor in the overflow list) or NOMEM (the overflow
 * list could not be allocated). With same == NULL no slot matches and the overflow list is not
 * searched: the caller knows the key is not in the map (an insert after a failed lookup). */
stg_map_status stg_map_find(stg_map *m, uint64_t h, stg_map_same same, const void *key, void *ctx,
                            void **slot);

/* Turns the empty slot an ABSENT find returned into an entry with hash h; the caller fills the
 * rest. Only right after that find, with no reserve in between. */
void stg_map_claim(stg_map *m, void *slot, uint64_t h);

#endif
