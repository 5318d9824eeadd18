/* File identities met by the tree walk (loader-internal): (device, inode) -> a value. The keys
 * come from the file system, which an attacker who can create files (or mount an image, a FUSE
 * file system) partly chooses, so the table has a bounded worst case. It is the library's one
 * map (parser/map.h) with an overflow list: slots are found by SipHash under the walk's secret
 * seed (loader/seed.h), a key is placed at most STG_HASH_PROBE_CEILING slots from its home, and
 * the few keys that find no slot there (none, in practice, under a secret seed) go to an
 * overflow list of at most STG_IDMAP_OVERFLOW entries, searched in full. Every lookup therefore
 * costs at most STG_HASH_PROBE_CEILING + STG_IDMAP_OVERFLOW comparisons, and the map stays exact:
 * a key put is always found. Past the overflow list a put is refused (STG_IDMAP_FULL) and the
 * walk fails closed for that path. */
#ifndef STG_LOADER_IDMAP_H
#define STG_LOADER_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/map.h"

#define STG_IDMAP_OVERFLOW 4096u

typedef struct stg_idmap {
    stg_map map; /* of struct stg_idmap_slot (idmap.c); map.overflow_max is STG_IDMAP_OVERFLOW
                  * (tests lower it, before the first put); map.probes counts the slots and
                  * overflow entries looked at over the map's life (tests) */
} stg_idmap;

typedef enum stg_idmap_result {
    STG_IDMAP_OK = 0,
    STG_IDMAP_NOMEM,
    STG_IDMAP_FULL
} stg_idmap_result;

void stg_idmap_init(stg_idmap *m, uint64_t seed);
void stg_idmap_free(stg_idmap *m);
/* true (and *value set) when (dev, ino) is in the map. */
bool stg_idmap_find(stg_idmap *m, uint64_t dev, uint64_t ino, size_t *value);
/* Adds (dev, ino) -> value; the key must not be in the map yet (the walk looks it up first). */
stg_idmap_result stg_idmap_put(stg_idmap *m, uint64_t dev, uint64_t ino, size_t value);

#endif
