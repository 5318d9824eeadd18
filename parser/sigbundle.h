/* The OpenSSF model signature file (`model.sig`): a Sigstore bundle in protobuf-JSON form whose
 * DSSE envelope carries an in-toto Statement v1 listing every file of the model with its SHA-256
 * (docs/signing.md has the format and the sources it was read from). Two readers, both on
 * parser/json_tree.h, both bytes to structure only: no cryptography here (the signature, the
 * root digest and the files are checked in loader/verify.c) and no decision beyond "this is not
 * the format" (malformed) and "this is the format, in a form not verified" (unsupported).
 * Every failure names the byte it is at: in the bundle for stg_sig_bundle_parse, in the decoded
 * payload for stg_sig_statement_parse. */
#ifndef STG_PARSER_SIGBUNDLE_H
#define STG_PARSER_SIGBUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

#define STG_SIG_BUNDLE_MAX ((size_t)16 << 20) /* a larger signature file is refused */
#define STG_SIG_CERTS_MAX 16u                 /* certificates in x509CertificateChain */
#define STG_SIG_IGNORE_MAX 4096u              /* ignore_paths entries */
#define STG_SIG_RESOURCES_CEILING ((size_t)1 << 20)
#define STG_SIG_JSON_DEPTH 16u /* the format nests 5 deep; anything deeper is not it */

#define STG_SIG_MEDIA_TYPE "application/vnd.dev.sigstore.bundle.v0.3+json"
#define STG_SIG_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define STG_SIG_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define STG_SIG_PREDICATE_TYPE "https://model_signing/signature/v1.0"
#define STG_SIG_PREDICATE_TYPE_V01 "https://model_signing/Digests/v0.1"

typedef enum stg_sig_error {
    STG_SIG_OK = 0,
    STG_SIG_MALFORMED = 1,   /* not the format: `what` says which rule, `offset` where */
    STG_SIG_UNSUPPORTED = 2, /* the format, in a variant that is not verified (shards, ...) */
    STG_SIG_MEMORY = 3,      /* the arena's budget is spent */
    STG_SIG_LIMIT = 4        /* more resources than the caller's max_resources */
} stg_sig_error;

typedef struct stg_sig_problem {
    stg_sig_error error;
    size_t offset;    /* in the bundle, or in the decoded payload for the statement */
    const char *what; /* constant text */
} stg_sig_problem;

typedef enum stg_sig_material {
    STG_SIG_MATERIAL_PUBLIC_KEY = 1, /* verificationMaterial.publicKey (the key method) */
    STG_SIG_MATERIAL_CHAIN = 2,      /* x509CertificateChain (the certificate method) */
    STG_SIG_MATERIAL_KEYLESS = 3     /* certificate: a Sigstore (Fulcio) leaf, keyless signing */
} stg_sig_material;

/* Bytes decoded from a JSON string of the bundle; offset is that string's opening quote. */
typedef struct stg_sig_blob {
    const uint8_t *data;
    size_t len;
    size_t offset;
} stg_sig_blob;

typedef struct stg_sig_bundle {
    stg_sig_material material;
    stg_sig_blob hint; /* publicKey.hint as written (hex text); len 0 when absent or empty */
    stg_sig_blob certs[STG_SIG_CERTS_MAX]; /* DER, leaf first (CHAIN: all; KEYLESS: one) */
    size_t cert_count;
    size_t tlog_entries;       /* verificationMaterial.tlogEntries items */
    stg_sig_blob payload_type; /* dsseEnvelope.payloadType (text) */
    stg_sig_blob payload;      /* dsseEnvelope.payload, decoded */
    stg_sig_blob signature;    /* dsseEnvelope.signatures[0].sig, decoded (DER ECDSA) */
    size_t signature_count;
} stg_sig_bundle;

/* Reads the bundle buf[0..len). Returns STG_SIG_OK with *out filled (its blobs point into the
 * arena or buf), else the problem in *why. */
stg_sig_error stg_sig_bundle_parse(const uint8_t *buf, size_t len, stg_arena *arena,
                                   stg_sig_bundle *out, stg_sig_problem *why);

typedef struct stg_sig_resource {
    const uint8_t *name; /* decoded UTF-8, as signed (not normalised) */
    size_t name_len;
    uint8_t digest[32];
    size_t offset; /* the resource object's '{' in the payload */
} stg_sig_resource;

typedef struct stg_sig_statement {
    stg_sig_blob model_name; /* subject[0].name */
    uint8_t root[32];        /* subject[0].digest.sha256 */
    size_t root_offset;
    bool allow_symlinks;
    stg_sig_blob *ignore; /* serialization.ignore_paths */
    size_t ignore_count;
    stg_sig_resource *resources; /* in the order listed (the root digest's order) */
    size_t resource_count;
} stg_sig_statement;

/* Reads the statement payload[0..len) (the decoded DSSE payload) with at most max_resources
 * resources (clamped to STG_SIG_RESOURCES_CEILING). The method `files` with SHA-256 is read;
 * shards, other hashes and the v0.1 predicate are STG_SIG_UNSUPPORTED. */
stg_sig_error stg_sig_statement_parse(const uint8_t *payload, size_t len, size_t max_resources,
                                      stg_arena *arena, stg_sig_statement *out,
                                      stg_sig_problem *why);

#endif
