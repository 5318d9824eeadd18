/* Keyed hashing for tables whose keys the input chooses (pickle memo indexes, global names,
 * storage keys). An unkeyed hash lets a file pick keys that share one slot and turn every
 * lookup into a scan of the table; SipHash-1-3 under a per-scan secret seed leaves such keys
 * to chance, and STG_HASH_PROBE_CEILING bounds the cost of one lookup even when the seed is
 * known (the fixed default of pure calls): a table whose probe would exceed it stops taking
 * keys and its owner fails closed or degrades as its comment says. parser/ does no I/O: the
 * seed comes in from the caller (loader/ reads it from the OS). */
#ifndef STG_PARSER_HASH_H
#define STG_PARSER_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Seed of pure calls that were given none (any value is as good; known keys can then collide,
 * and the probe ceiling is what bounds them). */
#define STG_HASH_SEED_DEFAULT 0x243F6A8885A308D3ull

/* Longest probe sequence a table walks, a hard ceiling. With a load factor of at most 1/2 and
 * keys spread at random, a run this long has a probability below 1e-20 per insert. */
#define STG_HASH_PROBE_CEILING 256u

/* SipHash-1-3 of the bytes a[0..an) then b[0..bn) (either may be NULL when its length is 0),
 * with an's length mixed in so ("ab", "c") and ("a", "bc") differ. */
uint64_t stg_hash_bytes(uint64_t seed, const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/* SipHash-1-3 of two 64-bit words. */
uint64_t stg_hash_u64(uint64_t seed, uint64_t x, uint64_t y);

#endif
