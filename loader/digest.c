#include "digest.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../parser/mem.h"
#include "evp.h"

struct stg_sha256 {
    EVP_MD_CTX *ctx;
};

/* One EVP context for md, ready to hash; the struct holding it is allocated by the caller. */
static stg_status md_start(const EVP_MD *(*md_fn)(void), EVP_MD_CTX **ctx)
{
    *ctx = NULL;
    if (!stg_evp_available()) {
        return STG_E_CRYPTO; /* libcrypto cannot be loaded */
    }
    const EVP_MD *md = md_fn();
    *ctx = stg_evp_md_ctx_new();
    if (*ctx == NULL || stg_evp_digest_init_ex(*ctx, md, NULL) != 1) {
        stg_evp_md_ctx_free(*ctx);
        *ctx = NULL;
        return STG_E_CRYPTO;
    }
    return STG_OK;
}

static stg_status md_update(EVP_MD_CTX *ctx, const void *data, size_t len)
{
    if (len == 0) {
        return STG_OK;
    }
    return stg_evp_digest_update(ctx, data, len) == 1 ? STG_OK : STG_E_CRYPTO;
}

stg_status stg_sha256_new(stg_sha256 **out)
{
    *out = NULL;
    stg_sha256 *h = stg_mem_alloc(sizeof *h);
    if (h == NULL) {
        return STG_E_NOMEM;
    }
    if (md_start(stg_evp_sha256, &h->ctx) != STG_OK) {
        stg_mem_free(h);
        return STG_E_CRYPTO;
    }
    *out = h;
    return STG_OK;
}

stg_status stg_sha256_update(stg_sha256 *h, const void *data, size_t len)
{
    return md_update(h->ctx, data, len);
}

stg_status stg_sha256_final(stg_sha256 *h, uint8_t out[32])
{
    unsigned int n = 0;
    if (stg_evp_digest_final_ex(h->ctx, out, &n) != 1 || n != 32) {
        return STG_E_CRYPTO;
    }
    return stg_evp_digest_init_ex(h->ctx, stg_evp_sha256(), NULL) == 1 ? STG_OK : STG_E_CRYPTO;
}

void stg_sha256_free(stg_sha256 *h)
{
    if (h != NULL) {
        stg_evp_md_ctx_free(h->ctx);
        stg_mem_free(h);
    }
}

stg_status stg_sha256_buffer(const void *data, size_t len, uint8_t out[32])
{
    stg_sha256 *h;
    stg_status s = stg_sha256_new(&h);
    if (s != STG_OK) {
        return s;
    }
    s = stg_sha256_update(h, data, len);
    if (s == STG_OK) {
        s = stg_sha256_final(h, out);
    }
    stg_sha256_free(h);
    return s;
}

/* Exactly n bytes' worth of hex digits (2n of them, then the end of the string): the decode
 * stops at the first non-digit, so a shorter string is never read past its NUL. */
static bool parse_hex_n(const char *hex, uint8_t *out, size_t n)
{
    return stg_hex_decode(hex, out, n) && hex[2 * n] == '\0';
}

bool stg_sha256_parse_hex(const char *hex, uint8_t out[32])
{
    return hex != NULL && parse_hex_n(hex, out, 32);
}

bool stg_sha1_parse_hex(const char *hex, uint8_t out[20])
{
    return hex != NULL && parse_hex_n(hex, out, 20);
}

struct stg_git_blob_id {
    EVP_MD_CTX *ctx;
};

stg_status stg_git_blob_id_new(uint64_t size, stg_git_blob_id **out)
{
    *out = NULL;
    stg_git_blob_id *h = stg_mem_alloc(sizeof *h);
    if (h == NULL) {
        return STG_E_NOMEM;
    }
    char header[32];
    int n = snprintf(header, sizeof header, "blob %" PRIu64, size);
    /* the header's NUL is part of what Git hashes */
    if (md_start(stg_evp_sha1, &h->ctx) != STG_OK ||
        md_update(h->ctx, header, (size_t)n + 1) != STG_OK) {
        stg_evp_md_ctx_free(h->ctx);
        stg_mem_free(h);
        return STG_E_CRYPTO;
    }
    *out = h;
    return STG_OK;
}

stg_status stg_git_blob_id_update(stg_git_blob_id *h, const void *data, size_t len)
{
    return md_update(h->ctx, data, len);
}

stg_status stg_git_blob_id_final(stg_git_blob_id *h, uint8_t out[20])
{
    unsigned int n = 0;
    return stg_evp_digest_final_ex(h->ctx, out, &n) == 1 && n == 20 ? STG_OK : STG_E_CRYPTO;
}

void stg_git_blob_id_free(stg_git_blob_id *h)
{
    if (h != NULL) {
        stg_evp_md_ctx_free(h->ctx);
        stg_mem_free(h);
    }
}

stg_status stg_git_blob_id_buffer(const void *data, size_t len, uint8_t out[20])
{
    stg_git_blob_id *h;
    stg_status s = stg_git_blob_id_new((uint64_t)len, &h);
    if (s != STG_OK) {
        return s;
    }
    s = stg_git_blob_id_update(h, data, len);
    if (s == STG_OK) {
        s = stg_git_blob_id_final(h, out);
    }
    stg_git_blob_id_free(h);
    return s;
}

/* ------------------------------------------------------------------------------ public */

stg_status stg_sha256_hex(const void *buf, size_t len, char out[65])
{
    if (out == NULL || (buf == NULL && len > 0)) {
        return STG_E_BAD_ARG;
    }
    uint8_t d[32];
    stg_status st = stg_sha256_buffer(len > 0 ? buf : "", len, d);
    if (st != STG_OK) {
        return st;
    }
    stg_hex_encode(d, 32, out);
    return STG_OK;
}

bool stg_sha256_hex_normalize(const char *hex, char out[65])
{
    uint8_t d[32];
    if (!stg_sha256_parse_hex(hex, d)) {
        return false;
    }
    if (out != NULL) {
        stg_hex_encode(d, 32, out);
    }
    return true;
}
