/* SipHash-1-3 (Aumasson and Bernstein), one compression round per word and three at the end:
 * the variant hash tables use (Rust's std, CPython's str hash), keyed by a 64-bit seed. */
#include "hash.h"

#include "util.h"

typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
    uint64_t word;  /* bytes not yet compressed, little-endian */
    unsigned fill;  /* how many */
    uint64_t total; /* bytes absorbed, the last byte of the final word */
} sip_state;

static inline uint64_t rotl(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

static inline void sip_round(sip_state *s)
{
    s->v0 += s->v1;
    s->v1 = rotl(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl(s->v2, 32);
}

static void sip_init(sip_state *s, uint64_t seed)
{
    /* The 128-bit key is the seed and its complement rotated: one secret word is enough here. */
    uint64_t k0 = seed, k1 = rotl(~seed, 29);
    s->v0 = k0 ^ 0x736f6d6570736575ull;
    s->v1 = k1 ^ 0x646f72616e646f6dull;
    s->v2 = k0 ^ 0x6c7967656e657261ull;
    s->v3 = k1 ^ 0x7465646279746573ull;
    s->word = 0;
    s->fill = 0;
    s->total = 0;
}

static inline void sip_word(sip_state *s, uint64_t m)
{
    s->v3 ^= m;
    sip_round(s);
    s->v0 ^= m;
}

static void sip_bytes(sip_state *s, const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n && s->fill != 0) {
        s->word |= (uint64_t)p[i++] << (8 * s->fill);
        s->fill = (s->fill + 1) & 7u;
        if (s->fill == 0) {
            sip_word(s, s->word);
            s->word = 0;
        }
    }
    for (; n - i >= 8; i += 8) {
        sip_word(s, stg_le64(p + i));
    }
    for (; i < n; i++) {
        s->word |= (uint64_t)p[i] << (8 * s->fill);
        s->fill++;
    }
    s->total += n;
}

static uint64_t sip_final(sip_state *s)
{
    sip_word(s, s->word | (s->total << 56));
    s->v2 ^= 0xff;
    sip_round(s);
    sip_round(s);
    sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t stg_hash_bytes(uint64_t seed, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    sip_state s;
    sip_init(&s, seed);
    sip_word(&s, (uint64_t)an);
    if (an > 0) {
        sip_bytes(&s, a, an);
    }
    if (bn > 0) {
        sip_bytes(&s, b, bn);
    }
    return sip_final(&s);
}

uint64_t stg_hash_u64(uint64_t seed, uint64_t x, uint64_t y)
{
    sip_state s;
    sip_init(&s, seed);
    sip_word(&s, x);
    sip_word(&s, y);
    s.total = 16;
    return sip_final(&s);
}
