/* SHA-256, and the SHA-1 of Git blob ids, through OpenSSL's EVP interface. This file pair,
 * loader/evp.[ch] (libcrypto loaded on first use) and loader/sigcrypto.[ch] (the signature
 * checks' public-key calls, loaded the same way) are the only ones that include OpenSSL. */
#ifndef STG_LOADER_DIGEST_H
#define STG_LOADER_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/text.h" /* stg_hex_encode */
#include "stguard/stguard.h"

typedef struct stg_sha256 stg_sha256;

stg_status stg_sha256_new(stg_sha256 **out);
stg_status stg_sha256_update(stg_sha256 *h, const void *data, size_t len);
/* Writes the digest and resets h so it can hash a new message. */
stg_status stg_sha256_final(stg_sha256 *h, uint8_t out[32]);
void stg_sha256_free(stg_sha256 *h);
/* One-shot digest of a buffer. */
stg_status stg_sha256_buffer(const void *data, size_t len, uint8_t out[32]);
/* Parses 64 hex digits (either case, nothing else); false when it is not exactly that. */
bool stg_sha256_parse_hex(const char *hex, uint8_t out[32]);

/* Git's id of a blob: SHA-1 of "blob <size>\0" followed by the content. A Hugging Face cache
 * names the blobs of files kept outside Git LFS (config, README, an index) so. */
typedef struct stg_git_blob_id stg_git_blob_id;

/* A hasher for content of exactly `size` bytes (the header is hashed here). */
stg_status stg_git_blob_id_new(uint64_t size, stg_git_blob_id **out);
stg_status stg_git_blob_id_update(stg_git_blob_id *h, const void *data, size_t len);
stg_status stg_git_blob_id_final(stg_git_blob_id *h, uint8_t out[20]);
void stg_git_blob_id_free(stg_git_blob_id *h);
/* One-shot id of a buffer. */
stg_status stg_git_blob_id_buffer(const void *data, size_t len, uint8_t out[20]);
/* Parses 40 hex digits (either case, nothing else); false when it is not exactly that. */
bool stg_sha1_parse_hex(const char *hex, uint8_t out[20]);

#endif
