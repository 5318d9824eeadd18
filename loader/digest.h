/* SHA-256 through OpenSSL's EVP interface. This is the only file pair that includes OpenSSL. */
#ifndef STG_LOADER_DIGEST_H
#define STG_LOADER_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"

typedef struct stg_sha256 stg_sha256;

stg_status stg_sha256_new(stg_sha256 **out);
stg_status stg_sha256_update(stg_sha256 *h, const void *data, size_t len);
/* Writes the digest and resets h so it can hash a new message. */
stg_status stg_sha256_final(stg_sha256 *h, uint8_t out[32]);
void stg_sha256_free(stg_sha256 *h);
/* One-shot digest of a buffer. */
stg_status stg_sha256_buffer(const void *data, size_t len, uint8_t out[32]);
/* Lower-case hex of n bytes into out (2n + 1 bytes, NUL-terminated). */
void stg_hex_encode(const uint8_t *in, size_t n, char *out);
/* Parses 64 hex digits (either case, nothing else); false when it is not exactly that. */
bool stg_sha256_parse_hex(const char *hex, uint8_t out[32]);

#endif
