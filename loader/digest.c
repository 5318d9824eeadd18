#include "digest.h"

#include <openssl/evp.h>
#include <string.h>

#include "../parser/mem.h"

struct stg_sha256 {
    EVP_MD_CTX *ctx;
};

stg_status stg_sha256_new(stg_sha256 **out)
{
    *out = NULL;
    stg_sha256 *h = stg_mem_alloc(sizeof *h);
    if (h == NULL) {
        return STG_E_NOMEM;
    }
    h->ctx = EVP_MD_CTX_new();
    if (h->ctx == NULL || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(h->ctx);
        stg_mem_free(h);
        return STG_E_CRYPTO;
    }
    *out = h;
    return STG_OK;
}

stg_status stg_sha256_update(stg_sha256 *h, const void *data, size_t len)
{
    if (len == 0) {
        return STG_OK;
    }
    return EVP_DigestUpdate(h->ctx, data, len) == 1 ? STG_OK : STG_E_CRYPTO;
}

stg_status stg_sha256_final(stg_sha256 *h, uint8_t out[32])
{
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(h->ctx, out, &n) != 1 || n != 32) {
        return STG_E_CRYPTO;
    }
    return EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) == 1 ? STG_OK : STG_E_CRYPTO;
}

void stg_sha256_free(stg_sha256 *h)
{
    if (h != NULL) {
        EVP_MD_CTX_free(h->ctx);
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

void stg_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

bool stg_sha256_parse_hex(const char *hex, uint8_t out[32])
{
    if (hex == NULL || strlen(hex) != 64) {
        return false;
    }
    for (size_t i = 0; i < 32; i++) {
        int hi = hex_value(hex[2 * i]);
        int lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return false;
        }
        out[i] = (uint8_t)((hi << 4) | lo);
    }
    return true;
}
