/* Signature cryptography through libcrypto loaded on first use (see sigcrypto.h). */
#include "sigcrypto.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../parser/base64.h"
#include "../parser/dl.h"
#include "digest.h"
#include "evp.h" /* STG_LIBCRYPTO_SONAME */

static struct {
    BIO *(*bio_new_mem_buf)(const void *, int);
    int (*bio_free)(BIO *);
    EVP_PKEY *(*pem_read_bio_pubkey)(BIO *, EVP_PKEY **, pem_password_cb *, void *);
    X509 *(*pem_read_bio_x509)(BIO *, X509 **, pem_password_cb *, void *);
    void (*pkey_free)(EVP_PKEY *);
    int (*pkey_up_ref)(EVP_PKEY *);
    int (*pkey_base_id)(const EVP_PKEY *);
    int (*pkey_group_name)(const EVP_PKEY *, char *, size_t, size_t *);
    int (*i2d_pubkey)(const EVP_PKEY *, unsigned char **);
    void (*openssl_free)(void *, const char *, int);
    EVP_MD_CTX *(*md_ctx_new)(void);
    void (*md_ctx_free)(EVP_MD_CTX *);
    int (*verify_init)(EVP_MD_CTX *, EVP_PKEY_CTX **, const EVP_MD *, ENGINE *, EVP_PKEY *);
    int (*verify)(EVP_MD_CTX *, const unsigned char *, size_t, const unsigned char *, size_t);
    const EVP_MD *(*sha256)(void);
    const EVP_MD *(*sha384)(void);
    const EVP_MD *(*sha512)(void);
    X509 *(*d2i_x509)(X509 **, const unsigned char **, long);
    void (*x509_free)(X509 *);
    X509_STORE *(*store_new)(void);
    void (*store_free)(X509_STORE *);
    int (*store_add_cert)(X509_STORE *, X509 *);
    X509_STORE_CTX *(*ctx_new)(void);
    void (*ctx_free)(X509_STORE_CTX *);
    int (*ctx_init)(X509_STORE_CTX *, X509_STORE *, X509 *, STACK_OF(X509) *);
    void (*ctx_set_time)(X509_STORE_CTX *, unsigned long, time_t);
    int (*verify_cert)(X509_STORE_CTX *);
    int (*ctx_get_error)(const X509_STORE_CTX *);
    const char *(*error_string)(long);
    const ASN1_TIME *(*not_before)(const X509 *);
    int (*asn1_time_to_tm)(const ASN1_TIME *, struct tm *);
    uint32_t (*key_usage)(X509 *);
    uint32_t (*ext_key_usage)(X509 *);
    EVP_PKEY *(*get_pubkey)(X509 *);
    OPENSSL_STACK *(*sk_new_null)(void);
    int (*sk_push)(OPENSSL_STACK *, const void *);
    void (*sk_free)(OPENSSL_STACK *);
    X509_NAME *(*subject_name)(const X509 *);
    char *(*name_oneline)(const X509_NAME *, char *, int);
    void (*err_clear)(void);
} fn;
static bool loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

#define SYM(lib, name, field) stg_dl_sym((lib), (name), &fn.field, sizeof fn.field)

static bool load_keys(void *lib)
{
    return SYM(lib, "BIO_new_mem_buf", bio_new_mem_buf) && SYM(lib, "BIO_free", bio_free) &&
           SYM(lib, "PEM_read_bio_PUBKEY", pem_read_bio_pubkey) &&
           SYM(lib, "PEM_read_bio_X509", pem_read_bio_x509) &&
           SYM(lib, "EVP_PKEY_free", pkey_free) && SYM(lib, "EVP_PKEY_up_ref", pkey_up_ref) &&
           SYM(lib, "EVP_PKEY_get_base_id", pkey_base_id) &&
           SYM(lib, "EVP_PKEY_get_group_name", pkey_group_name) &&
           SYM(lib, "i2d_PUBKEY", i2d_pubkey) && SYM(lib, "CRYPTO_free", openssl_free) &&
           SYM(lib, "EVP_MD_CTX_new", md_ctx_new) && SYM(lib, "EVP_MD_CTX_free", md_ctx_free) &&
           SYM(lib, "EVP_DigestVerifyInit", verify_init) && SYM(lib, "EVP_DigestVerify", verify) &&
           SYM(lib, "EVP_sha256", sha256) && SYM(lib, "EVP_sha384", sha384) &&
           SYM(lib, "EVP_sha512", sha512) && SYM(lib, "ERR_clear_error", err_clear);
}

static bool load_x509(void *lib)
{
    return SYM(lib, "d2i_X509", d2i_x509) && SYM(lib, "X509_free", x509_free) &&
           SYM(lib, "X509_STORE_new", store_new) && SYM(lib, "X509_STORE_free", store_free) &&
           SYM(lib, "X509_STORE_add_cert", store_add_cert) &&
           SYM(lib, "X509_STORE_CTX_new", ctx_new) && SYM(lib, "X509_STORE_CTX_free", ctx_free) &&
           SYM(lib, "X509_STORE_CTX_init", ctx_init) &&
           SYM(lib, "X509_STORE_CTX_set_time", ctx_set_time) &&
           SYM(lib, "X509_verify_cert", verify_cert) &&
           SYM(lib, "X509_STORE_CTX_get_error", ctx_get_error) &&
           SYM(lib, "X509_verify_cert_error_string", error_string) &&
           SYM(lib, "X509_get0_notBefore", not_before) &&
           SYM(lib, "ASN1_TIME_to_tm", asn1_time_to_tm) &&
           SYM(lib, "X509_get_key_usage", key_usage) &&
           SYM(lib, "X509_get_extended_key_usage", ext_key_usage) &&
           SYM(lib, "X509_get0_pubkey", get_pubkey) &&
           SYM(lib, "OPENSSL_sk_new_null", sk_new_null) && SYM(lib, "OPENSSL_sk_push", sk_push) &&
           SYM(lib, "OPENSSL_sk_free", sk_free) &&
           SYM(lib, "X509_get_subject_name", subject_name) &&
           SYM(lib, "X509_NAME_oneline", name_oneline);
}

static void load(void)
{
    static const char *const names[] = {STG_LIBCRYPTO_SONAME, NULL};
    void *lib = stg_dl_open_first(names);
    loaded = lib != NULL && load_keys(lib) && load_x509(lib);
}

bool stg_sigc_available(void)
{
    return pthread_once(&load_once, load) == 0 && loaded;
}

stg_status stg_sigc_key_from_pem(const uint8_t *pem, size_t len, EVP_PKEY **out)
{
    *out = NULL;
    if (!stg_sigc_available()) {
        return STG_E_CRYPTO;
    }
    if (len > (size_t)INT32_MAX) {
        return STG_E_BAD_ARG;
    }
    BIO *bio = fn.bio_new_mem_buf(pem, (int)len);
    if (bio == NULL) {
        return STG_E_CRYPTO;
    }
    *out = fn.pem_read_bio_pubkey(bio, NULL, NULL, NULL);
    fn.bio_free(bio);
    fn.err_clear();
    return *out != NULL ? STG_OK : STG_E_BAD_ARG;
}

void stg_sigc_key_free(EVP_PKEY *key)
{
    if (key != NULL) {
        fn.pkey_free(key);
    }
}

unsigned stg_sigc_ec_bits(const EVP_PKEY *key)
{
    char group[64];
    size_t n = 0;
    if (fn.pkey_base_id(key) != EVP_PKEY_EC ||
        fn.pkey_group_name(key, group, sizeof group, &n) != 1) {
        fn.err_clear();
        return 0;
    }
    /* OpenSSL names the NIST curves prime256v1, secp384r1 and secp521r1. */
    if (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0) {
        return 256;
    }
    if (strcmp(group, "secp384r1") == 0 || strcmp(group, "P-384") == 0) {
        return 384;
    }
    return strcmp(group, "secp521r1") == 0 || strcmp(group, "P-521") == 0 ? 521 : 0;
}

stg_status stg_sigc_key_pem_sha256(const EVP_PKEY *key, char hex[65])
{
    unsigned char *der = NULL;
    int n = fn.i2d_pubkey(key, &der);
    if (n <= 0 || n > 8192) {
        fn.openssl_free(der, __FILE__, __LINE__);
        return STG_E_CRYPTO;
    }
    static const char head[] = "-----BEGIN PUBLIC KEY-----\n",
                      tail[] = "-----END PUBLIC KEY-----\n";
    char b64[11000], pem[12200];
    size_t blen = stg_base64_encoded_len((size_t)n), plen = 0;
    stg_base64_encode(der, (size_t)n, b64);
    fn.openssl_free(der, __FILE__, __LINE__);
    memcpy(pem, head, sizeof head - 1);
    plen = sizeof head - 1;
    for (size_t i = 0; i < blen; i += 64) {
        size_t line = blen - i < 64 ? blen - i : 64;
        memcpy(pem + plen, b64 + i, line);
        plen += line;
        pem[plen++] = '\n';
    }
    memcpy(pem + plen, tail, sizeof tail - 1);
    plen += sizeof tail - 1;
    return stg_sha256_hex(pem, plen, hex);
}

stg_status stg_sigc_ecdsa_verify(const EVP_PKEY *key, unsigned md_bits, const uint8_t *sig,
                                 size_t sig_len, const uint8_t *msg, size_t msg_len, bool *valid)
{
    *valid = false;
    const EVP_MD *md = md_bits == 512 ? fn.sha512() : md_bits == 384 ? fn.sha384() : fn.sha256();
    EVP_MD_CTX *ctx = fn.md_ctx_new();
    if (ctx == NULL) {
        return STG_E_CRYPTO;
    }
    /* EVP_DigestVerifyInit takes a non-const key but only references it. */
    stg_status st = STG_E_CRYPTO;
    if (fn.verify_init(ctx, NULL, md, NULL, (EVP_PKEY *)(uintptr_t)key) == 1) {
        /* 1: valid; 0: does not verify; < 0: not a signature (malformed DER): also invalid */
        *valid = fn.verify(ctx, sig, sig_len, msg, msg_len) == 1;
        st = STG_OK;
    }
    fn.md_ctx_free(ctx);
    fn.err_clear();
    return st;
}

/* Every certificate of a PEM text into store; the count added. */
static size_t add_roots(X509_STORE *store, const uint8_t *pem, size_t len)
{
    if (len > (size_t)INT32_MAX) {
        return 0;
    }
    BIO *bio = fn.bio_new_mem_buf(pem, (int)len);
    size_t added = 0;
    for (X509 *x = NULL; bio != NULL && added < 4096 &&
                         (x = fn.pem_read_bio_x509(bio, NULL, NULL, NULL)) != NULL;) {
        added += fn.store_add_cert(store, x) == 1;
        fn.x509_free(x); /* the store holds its own reference */
    }
    if (bio != NULL) {
        fn.bio_free(bio);
    }
    fn.err_clear();
    return added;
}

static X509 *parse_der(const uint8_t *der, size_t len)
{
    const unsigned char *p = der;
    X509 *x = len <= (size_t)INT32_MAX ? fn.d2i_x509(NULL, &p, (long)len) : NULL;
    /* trailing bytes after the certificate are not a certificate */
    if (x != NULL && p != der + len) {
        fn.x509_free(x);
        x = NULL;
    }
    fn.err_clear();
    return x;
}

/* model_signing's rule: KeyUsage digitalSignature, else ExtendedKeyUsage codeSigning. */
static bool leaf_may_sign(X509 *leaf)
{
    uint32_t ku = fn.key_usage(leaf), eku = fn.ext_key_usage(leaf);
    return (ku != UINT32_MAX && (ku & KU_DIGITAL_SIGNATURE) != 0) ||
           (eku != UINT32_MAX && (eku & XKU_CODE_SIGN) != 0);
}

/* Verifies leaf against store, with intermediates, at the leaf's notBefore. */
static stg_status chain_at_not_before(X509_STORE *store, X509 *leaf, OPENSSL_STACK *mid,
                                      stg_sigc_chain *out)
{
    struct tm tm;
    if (fn.asn1_time_to_tm(fn.not_before(leaf), &tm) != 1) {
        out->why = "the leaf's notBefore is not a time";
        return STG_OK;
    }
    X509_STORE_CTX *ctx = fn.ctx_new();
    if (ctx == NULL) {
        return STG_E_CRYPTO;
    }
    stg_status st = STG_E_CRYPTO;
    if (fn.ctx_init(ctx, store, leaf, (STACK_OF(X509) *)mid) == 1) {
        fn.ctx_set_time(ctx, 0, timegm(&tm));
        out->trusted = fn.verify_cert(ctx) == 1;
        if (!out->trusted) {
            out->why = fn.error_string(fn.ctx_get_error(ctx));
        }
        st = STG_OK;
    }
    fn.ctx_free(ctx);
    fn.err_clear();
    return st;
}

static stg_status verify_parsed(X509 *const *x, size_t n, const uint8_t *roots, size_t roots_len,
                                stg_sigc_chain *out)
{
    X509_STORE *store = fn.store_new();
    OPENSSL_STACK *mid = fn.sk_new_null();
    stg_status st = STG_E_CRYPTO;
    if (store != NULL && mid != NULL) {
        st = STG_OK;
        for (size_t i = 1; i < n && st == STG_OK; i++) {
            st = fn.sk_push(mid, x[i]) > 0 ? STG_OK : STG_E_CRYPTO;
        }
        if (st == STG_OK && add_roots(store, roots, roots_len) == 0) {
            out->why = "the trusted certificates hold no certificate";
            st = STG_E_BAD_ARG;
        }
        if (st == STG_OK) {
            st = chain_at_not_before(store, x[0], mid, out);
        }
    }
    if (mid != NULL) {
        fn.sk_free(mid);
    }
    if (store != NULL) {
        fn.store_free(store);
    }
    return st;
}

stg_status stg_sigc_verify_chain(const uint8_t *const *certs, const size_t *cert_lens, size_t n,
                                 const uint8_t *roots, size_t roots_len, stg_sigc_chain *out)
{
    memset(out, 0, sizeof *out);
    if (!stg_sigc_available()) {
        return STG_E_CRYPTO;
    }
    X509 *x[16] = {NULL};
    if (n == 0 || n > 16) {
        out->why = "no certificate, or more than 16";
        return STG_E_BAD_ARG;
    }
    stg_status st = STG_OK;
    for (size_t i = 0; i < n && st == STG_OK; i++) {
        x[i] = parse_der(certs[i], cert_lens[i]);
        if (x[i] == NULL) {
            out->why = "a certificate of the bundle is not DER X.509";
            st = STG_E_INVALID;
        }
    }
    if (st == STG_OK) {
        st = verify_parsed(x, n, roots, roots_len, out);
    }
    if (st == STG_OK) {
        out->may_sign = leaf_may_sign(x[0]);
        if (fn.name_oneline(fn.subject_name(x[0]), out->subject, (int)sizeof out->subject) ==
            NULL) {
            out->subject[0] = 0;
        }
        EVP_PKEY *k = fn.get_pubkey(x[0]);
        /* get0: the certificate's own reference; keep the key past the certificate's life */
        if (k != NULL && fn.pkey_up_ref(k) == 1) {
            out->leaf_key = k;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (x[i] != NULL) {
            fn.x509_free(x[i]);
        }
    }
    return st;
}
