/* Text primitives every reader shares: UTF-8 validation (RFC 3629, as Python's decoder reads
 * it) and hex digits. One implementation each, so the JSON parser, the pickle walker, the .npy
 * header reader, content sniffing and the digest parser cannot disagree on what is valid. */
#ifndef STG_PARSER_TEXT_H
#define STG_PARSER_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the valid UTF-8 sequence at s[0..n) (n >= 1), or 0 when it is invalid: a
 * lone continuation byte, C0/C1 or F5..FF, an overlong form, a code point above U+10FFFF, a
 * sequence cut short by n, or an encoded surrogate (U+D800..DFFF) unless surrogatepass (what
 * CPython's "surrogatepass" error handler accepts). Inline: it is the JSON string loop's. */
static inline size_t stg_utf8_seq(const uint8_t *s, size_t n, bool surrogatepass)
{
    uint8_t c = s[0];
    if (c < 0x80u) {
        return 1;
    }
    if (c < 0xC2u) {
        return 0; /* continuation byte, or C0/C1 (always overlong) */
    }
    if (c < 0xE0u) {
        return (n >= 2 && (s[1] & 0xC0u) == 0x80u) ? 2 : 0;
    }
    if (c < 0xF0u) {
        if (n < 3) {
            return 0;
        }
        uint8_t lo = c == 0xE0u ? 0xA0u : 0x80u;                   /* E0 80..9F would be overlong */
        uint8_t hi = c == 0xEDu && !surrogatepass ? 0x9Fu : 0xBFu; /* ED A0..BF: surrogates */
        return (s[1] >= lo && s[1] <= hi && (s[2] & 0xC0u) == 0x80u) ? 3 : 0;
    }
    if (c < 0xF5u) {
        if (n < 4) {
            return 0;
        }
        uint8_t lo = c == 0xF0u ? 0x90u : 0x80u; /* F0 80..8F would be overlong */
        uint8_t hi = c == 0xF4u ? 0x8Fu : 0xBFu; /* F4 90.. would pass U+10FFFF */
        return (s[1] >= lo && s[1] <= hi && (s[2] & 0xC0u) == 0x80u && (s[3] & 0xC0u) == 0x80u) ? 4
                                                                                                : 0;
    }
    return 0;
}

/* true when s[0..n) is valid UTF-8 as stg_utf8_seq reads it (s may be NULL when n is 0). When
 * false and bad is not NULL, *bad is the offset of the first invalid sequence's first byte. */
bool stg_utf8_valid(const uint8_t *s, size_t n, bool surrogatepass, size_t *bad);

/* Value (0..15) of a hex digit in either case, -1 for any other byte. */
static inline int stg_hex_digit(uint8_t c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (uint8_t)(c | 0x20u);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes exactly 2 * n hex digits (either case) at hex into out[0..n). false on an invalid
 * digit (out is then partly written). The caller checks the length: an odd count of digits is
 * never a whole number of bytes. */
bool stg_hex_decode(const char *hex, uint8_t *out, size_t n);

/* Writes in[0..n) as 2 * n lowercase hex digits and a NUL into out (2 * n + 1 bytes). */
void stg_hex_encode(const uint8_t *in, size_t n, char *out);

#endif
