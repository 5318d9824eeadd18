/* Per-scan secret for the hash tables whose keys the input chooses (parser/hash.h). */
#ifndef STG_LOADER_SEED_H
#define STG_LOADER_SEED_H

#include <stdint.h>

/* A fresh nonzero seed from getrandom(2); when the OS has none to give (an old kernel, a
 * seccomp filter), one mixed from the clock and addresses: worse, but the probe ceiling still
 * bounds what a flood can cost. The environment variable STGUARD_HASH_SEED (a nonzero
 * integer) fixes it instead, for tests that build colliding keys against a known seed. */
uint64_t stg_scan_seed(void);

#endif
