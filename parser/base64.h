/* Base64 (RFC 4648 section 4, the standard alphabet) as Python's base64.b64encode and
 * protobuf's JSON writer produce it: padded to a multiple of four characters, no line breaks.
 * The decoder is strict where Python's base64.b64decode is lenient: it refuses any byte outside
 * the alphabet (whitespace, the URL-safe '-' and '_'), missing or extra padding, and padding
 * whose unused bits are not zero (a second spelling of the same bytes). */
#ifndef STG_PARSER_BASE64_H
#define STG_PARSER_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a decode of n characters can produce at most (n / 4 * 3). */
static inline size_t stg_base64_decoded_max(size_t n)
{
    return n / 4u * 3u;
}

/* Decodes in[0..n) into out (at least stg_base64_decoded_max(n) bytes). true with *out_len set
 * when it is canonical base64; false with *bad set to the offset of the first character that
 * is not (n itself when the length is not a multiple of four). */
bool stg_base64_decode(const uint8_t *in, size_t n, uint8_t *out, size_t *out_len, size_t *bad);

/* Characters stg_base64_encode writes for n bytes (padded), without a NUL. */
static inline size_t stg_base64_encoded_len(size_t n)
{
    return (n + 2u) / 3u * 4u;
}

/* Writes in[0..n) as padded standard base64 into out (stg_base64_encoded_len(n) bytes, no NUL). */
void stg_base64_encode(const uint8_t *in, size_t n, char *out);

#endif
