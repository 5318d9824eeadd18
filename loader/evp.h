/* OpenSSL's EVP digest calls, through libcrypto loaded on first use (loader/evp.c): a process
 * that never asks for a digest (`stguard scan --no-digest`, stg_validate_buffer) never maps
 * libcrypto nor pays its symbol relocations at start-up, about half of a small file's scan as
 * a process. Only loader/digest.c calls these, and only after stg_evp_available() said yes.
 * Separate functions (not pointers) so that tests can wrap them at link time. */
#ifndef STG_LOADER_EVP_H
#define STG_LOADER_EVP_H

#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <stdbool.h>
#include <stddef.h>

/* The soname of the libcrypto the library was built against (also loader/sigcrypto.c's). */
#define STG_STR2(x) #x
#define STG_STR(x) STG_STR2(x)
#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
#define STG_LIBCRYPTO_SONAME "libcrypto.so." STG_STR(OPENSSL_VERSION_MAJOR)
#else
#define STG_LIBCRYPTO_SONAME "libcrypto.so.1.1"
#endif

/* Loads libcrypto once per process (thread-safe); false when it cannot be loaded or lacks one
 * of the calls below (digests then fail with STG_E_CRYPTO, as an OpenSSL failure does). */
bool stg_evp_available(void);

EVP_MD_CTX *stg_evp_md_ctx_new(void);
void stg_evp_md_ctx_free(EVP_MD_CTX *ctx);
int stg_evp_digest_init_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl);
int stg_evp_digest_update(EVP_MD_CTX *ctx, const void *d, size_t n);
int stg_evp_digest_final_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *n);
const EVP_MD *stg_evp_sha256(void);
const EVP_MD *stg_evp_sha1(void);

#endif
