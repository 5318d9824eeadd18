/* The public-key cryptography of signature checks (loader/verify.c), through libcrypto loaded on
 * first use as loader/evp.c loads it for digests: EC public keys from PEM, ECDSA over a message,
 * and an X.509 chain to the caller's roots at a given time, with the key usage model_signing asks
 * of a signing certificate. Nothing here reads a model file or decides a finding: each call says
 * yes, no (with a constant reason), or that OpenSSL itself failed (STG_E_CRYPTO). */
#ifndef STG_LOADER_SIGCRYPTO_H
#define STG_LOADER_SIGCRYPTO_H

#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"

/* Loads libcrypto's verification calls once per process; false when they are not there. */
bool stg_sigc_available(void);

/* The first "PUBLIC KEY" of a PEM text; STG_E_BAD_ARG when there is none. */
stg_status stg_sigc_key_from_pem(const uint8_t *pem, size_t len, EVP_PKEY **out);
void stg_sigc_key_free(EVP_PKEY *key);

/* 256, 384 or 521 for an EC key on P-256, P-384 or P-521; 0 for anything else. */
unsigned stg_sigc_ec_bits(const EVP_PKEY *key);

/* Lower-case hex SHA-256 of the key's SubjectPublicKeyInfo written as PEM (64-column base64 lines,
 * "-----BEGIN PUBLIC KEY-----" framing, a final newline): what model_signing records as
 * publicKey.hint. */
stg_status stg_sigc_key_pem_sha256(const EVP_PKEY *key, char hex[65]);

/* ECDSA (a DER signature) over msg with SHA-256, SHA-384 or SHA-512 (md_bits 256, 384, 512):
 * *valid says whether it verifies. */
stg_status stg_sigc_ecdsa_verify(const EVP_PKEY *key, unsigned md_bits, const uint8_t *sig,
                                 size_t sig_len, const uint8_t *msg, size_t msg_len, bool *valid);

typedef struct stg_sigc_chain {
    bool trusted;       /* the leaf chains to a root, checked at the leaf's notBefore */
    bool may_sign;      /* keyUsage digitalSignature, or extendedKeyUsage codeSigning */
    const char *why;    /* when not trusted: OpenSSL's reason (a static string) */
    EVP_PKEY *leaf_key; /* the leaf's key (free with stg_sigc_key_free), when it parsed */
    char subject[256];  /* the leaf's subject, one line */
} stg_sigc_chain;

/* certs[0] is the leaf (DER), certs[1..n) untrusted intermediates; roots is a PEM text of every
 * trusted certificate. STG_E_INVALID when a certificate of certs does not parse as DER (whole),
 * STG_E_BAD_ARG when roots holds no certificate (out->why says so). */
stg_status stg_sigc_verify_chain(const uint8_t *const *certs, const size_t *cert_lens, size_t n,
                                 const uint8_t *roots, size_t roots_len, stg_sigc_chain *out);

#endif
