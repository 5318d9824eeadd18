/* The model signature bundle and its statement (see sigbundle.h). The field names and the
 * nesting are those model_signing writes (docs/signing.md, "The format"). */
#include "sigbundle.h"

#include <string.h>

#include "base64.h"
#include "json_tree.h"
#include "text.h"

static stg_sig_error fail(stg_sig_problem *why, stg_sig_error e, size_t offset, const char *what)
{
    why->error = e;
    why->offset = offset;
    why->what = what;
    return e;
}

static stg_sig_error tree_failure(stg_sig_problem *why, stg_jt_status st, size_t offset)
{
    switch (st) {
    case STG_JT_DUPLICATE: return fail(why, STG_SIG_MALFORMED, offset, "a member name is repeated");
    case STG_JT_DEPTH: return fail(why, STG_SIG_MALFORMED, offset, "nested deeper than the format");
    case STG_JT_NODES:
        return fail(why, STG_SIG_MALFORMED, offset, "more JSON values than the format holds");
    case STG_JT_MEMORY: return fail(why, STG_SIG_MEMORY, offset, "the memory budget is spent");
    case STG_JT_TRAILING: return fail(why, STG_SIG_MALFORMED, offset, "bytes after the JSON value");
    case STG_JT_SYNTAX:
    case STG_JT_OK: break;
    }
    return fail(why, STG_SIG_MALFORMED, offset, "not valid JSON");
}

/* Every member of obj is one of names[] (NULL-terminated). */
static stg_sig_error only_members(const stg_jt *t, const stg_jt_node *obj, const char *const *names,
                                  stg_sig_problem *why)
{
    for (const stg_jt_node *c = stg_jt_at(t, obj->first_child); c != NULL;
         c = stg_jt_at(t, c->next_sibling)) {
        bool known = false;
        for (size_t i = 0; names[i] != NULL && !known; i++) {
            known = c->key_len == strlen(names[i]) && memcmp(c->key, names[i], c->key_len) == 0;
        }
        if (!known) {
            return fail(why, STG_SIG_MALFORMED, c->key_offset, "a member the format does not have");
        }
    }
    return STG_SIG_OK;
}

/* The member `key` of obj with JSON type `type`; missing or of another type: malformed at obj
 * (missing) or at the value (wrong type). */
static stg_sig_error need(const stg_jt *t, const stg_jt_node *obj, const char *key,
                          stg_json_type type, const stg_jt_node **out, stg_sig_problem *why,
                          const char *what)
{
    const stg_jt_node *n = stg_jt_member(t, obj, key);
    *out = n;
    if (n == NULL) {
        return fail(why, STG_SIG_MALFORMED, obj->offset, what);
    }
    bool ok = n->type == type || (type == STG_JSON_TRUE && n->type == STG_JSON_FALSE);
    return ok ? STG_SIG_OK : fail(why, STG_SIG_MALFORMED, n->offset, what);
}

static void blob_of_string(const stg_jt_node *n, stg_sig_blob *b)
{
    b->data = n->str;
    b->len = n->str_len;
    b->offset = n->offset;
}

/* A base64 string member, decoded into the arena. */
static stg_sig_error need_b64(const stg_jt *t, const stg_jt_node *obj, const char *key,
                              stg_sig_blob *out, stg_sig_problem *why, const char *what)
{
    const stg_jt_node *n = NULL;
    stg_sig_error e = need(t, obj, key, STG_JSON_STRING, &n, why, what);
    if (e != STG_SIG_OK) {
        return e;
    }
    uint8_t *dst = stg_arena_alloc(t->arena, stg_base64_decoded_max(n->str_len) + 1u, 1);
    if (dst == NULL) {
        return fail(why, STG_SIG_MEMORY, n->offset, "the memory budget is spent");
    }
    size_t bad = 0;
    if (!stg_base64_decode(n->str, n->str_len, dst, &out->len, &bad)) {
        /* The string holds no escape in any base64 the format writes, so raw offsets hold. */
        return fail(why, STG_SIG_MALFORMED, n->offset + 1u + bad, "not canonical base64");
    }
    out->data = dst;
    out->offset = n->offset;
    return out->len > 0 ? STG_SIG_OK : fail(why, STG_SIG_MALFORMED, n->offset, what);
}

static const char *const envelope_members[] = {"payload", "payloadType", "signatures", NULL};
static const char *const signature_members[] = {"sig", "keyid", NULL};

static stg_sig_error parse_envelope(const stg_jt *t, const stg_jt_node *env, stg_sig_bundle *out,
                                    stg_sig_problem *why)
{
    stg_sig_error e = only_members(t, env, envelope_members, why);
    const stg_jt_node *n = NULL;
    if (e == STG_SIG_OK) {
        e = need_b64(t, env, "payload", &out->payload, why, "dsseEnvelope.payload is missing");
    }
    if (e == STG_SIG_OK) {
        e = need(t, env, "payloadType", STG_JSON_STRING, &n, why,
                 "dsseEnvelope.payloadType is missing or not a string");
    }
    if (e != STG_SIG_OK) {
        return e;
    }
    blob_of_string(n, &out->payload_type);
    const stg_jt_node *sigs = NULL;
    e = need(t, env, "signatures", STG_JSON_ARRAY_BEGIN, &sigs, why,
             "dsseEnvelope.signatures is missing or not an array");
    if (e != STG_SIG_OK) {
        return e;
    }
    if (sigs->child_count == 0 || sigs->child_count > STG_SIG_CERTS_MAX) {
        return fail(why, STG_SIG_MALFORMED, sigs->offset,
                    "dsseEnvelope.signatures is empty or long");
    }
    out->signature_count = sigs->child_count;
    for (const stg_jt_node *s = stg_jt_at(t, sigs->first_child); s != NULL;
         s = stg_jt_at(t, s->next_sibling)) {
        if (s->type != STG_JSON_OBJECT_BEGIN) {
            return fail(why, STG_SIG_MALFORMED, s->offset, "a signature is not an object");
        }
        stg_sig_blob sig = {0};
        e = only_members(t, s, signature_members, why);
        const stg_jt_node *keyid = stg_jt_member(t, s, "keyid");
        if (e == STG_SIG_OK && keyid != NULL && keyid->type != STG_JSON_STRING &&
            keyid->type != STG_JSON_NULL) {
            e = fail(why, STG_SIG_MALFORMED, keyid->offset, "a signature's keyid is not a string");
        }
        if (e == STG_SIG_OK) {
            e = need_b64(t, s, "sig", &sig, why, "a signature has no sig");
        }
        if (e != STG_SIG_OK) {
            return e;
        }
        if (s == stg_jt_at(t, sigs->first_child)) {
            out->signature = sig;
        }
    }
    return STG_SIG_OK;
}

static const char *const material_members[] = {
    "publicKey",   "x509CertificateChain",      "certificate",
    "tlogEntries", "timestampVerificationData", NULL};
static const char *const public_key_members[] = {"hint", "rawBytes", "keyDetails", NULL};
static const char *const cert_members[] = {"rawBytes", NULL};

static stg_sig_error parse_certificates(const stg_jt *t, const stg_jt_node *chain,
                                        stg_sig_bundle *out, stg_sig_problem *why)
{
    static const char *const chain_members[] = {"certificates", NULL};
    const stg_jt_node *certs = NULL;
    stg_sig_error e = only_members(t, chain, chain_members, why);
    if (e == STG_SIG_OK) {
        e = need(t, chain, "certificates", STG_JSON_ARRAY_BEGIN, &certs, why,
                 "x509CertificateChain.certificates is missing or not an array");
    }
    if (e != STG_SIG_OK) {
        return e;
    }
    if (certs->child_count == 0 || certs->child_count > STG_SIG_CERTS_MAX) {
        return fail(why, STG_SIG_MALFORMED, certs->offset, "no certificate, or more than 16");
    }
    for (const stg_jt_node *c = stg_jt_at(t, certs->first_child); c != NULL;
         c = stg_jt_at(t, c->next_sibling)) {
        if (c->type != STG_JSON_OBJECT_BEGIN) {
            return fail(why, STG_SIG_MALFORMED, c->offset, "a certificate is not an object");
        }
        e = only_members(t, c, cert_members, why);
        if (e == STG_SIG_OK) {
            e = need_b64(t, c, "rawBytes", &out->certs[out->cert_count], why,
                         "a certificate has no rawBytes");
        }
        if (e != STG_SIG_OK) {
            return e;
        }
        out->cert_count++;
    }
    return STG_SIG_OK;
}

static stg_sig_error parse_public_key(const stg_jt *t, const stg_jt_node *pk, stg_sig_bundle *out,
                                      stg_sig_problem *why)
{
    stg_sig_error e = only_members(t, pk, public_key_members, why);
    if (e != STG_SIG_OK) {
        return e;
    }
    const stg_jt_node *hint = stg_jt_member(t, pk, "hint");
    if (hint != NULL && hint->type == STG_JSON_STRING) {
        blob_of_string(hint, &out->hint);
    } else if (hint != NULL && hint->type != STG_JSON_NULL) {
        return fail(why, STG_SIG_MALFORMED, hint->offset, "publicKey.hint is not a string");
    }
    return STG_SIG_OK;
}

static stg_sig_error parse_material(const stg_jt *t, const stg_jt_node *vm, stg_sig_bundle *out,
                                    stg_sig_problem *why)
{
    stg_sig_error e = only_members(t, vm, material_members, why);
    if (e != STG_SIG_OK) {
        return e;
    }
    const stg_jt_node *pk = stg_jt_member(t, vm, "publicKey");
    const stg_jt_node *chain = stg_jt_member(t, vm, "x509CertificateChain");
    const stg_jt_node *leaf = stg_jt_member(t, vm, "certificate");
    const stg_jt_node *tlog = stg_jt_member(t, vm, "tlogEntries");
    if ((pk != NULL) + (chain != NULL) + (leaf != NULL) != 1) {
        return fail(why, STG_SIG_MALFORMED, vm->offset,
                    "not exactly one of publicKey, x509CertificateChain and certificate");
    }
    if (tlog != NULL && tlog->type != STG_JSON_ARRAY_BEGIN) {
        return fail(why, STG_SIG_MALFORMED, tlog->offset, "tlogEntries is not an array");
    }
    out->tlog_entries = tlog != NULL ? tlog->child_count : 0;
    const stg_jt_node *which = pk != NULL ? pk : chain != NULL ? chain : leaf;
    if (which->type != STG_JSON_OBJECT_BEGIN) {
        return fail(why, STG_SIG_MALFORMED, which->offset,
                    "the verification material is not an object");
    }
    if (pk != NULL) {
        out->material = STG_SIG_MATERIAL_PUBLIC_KEY;
        return parse_public_key(t, pk, out, why);
    }
    if (chain != NULL) {
        out->material = STG_SIG_MATERIAL_CHAIN;
        return parse_certificates(t, chain, out, why);
    }
    out->material = STG_SIG_MATERIAL_KEYLESS;
    e = only_members(t, leaf, cert_members, why);
    if (e == STG_SIG_OK) {
        e = need_b64(t, leaf, "rawBytes", &out->certs[0], why, "certificate has no rawBytes");
    }
    out->cert_count = e == STG_SIG_OK ? 1 : 0;
    return e;
}

static const char *const bundle_members[] = {"mediaType", "verificationMaterial", "dsseEnvelope",
                                             "messageSignature", NULL};

static stg_sig_error parse_bundle_tree(const stg_jt *t, stg_sig_bundle *out, stg_sig_problem *why)
{
    const stg_jt_node *top = stg_jt_at(t, 0);
    if (top == NULL || top->type != STG_JSON_OBJECT_BEGIN) {
        return fail(why, STG_SIG_MALFORMED, top != NULL ? top->offset : 0, "not a JSON object");
    }
    stg_sig_error e = only_members(t, top, bundle_members, why);
    const stg_jt_node *n = NULL;
    if (e == STG_SIG_OK) {
        e = need(t, top, "mediaType", STG_JSON_STRING, &n, why, "mediaType is missing");
    }
    if (e != STG_SIG_OK) {
        return e;
    }
    if (!stg_jt_str_is(n, STG_SIG_MEDIA_TYPE)) {
        return fail(why, STG_SIG_MALFORMED, n->offset, "mediaType is not a v0.3 Sigstore bundle");
    }
    const stg_jt_node *msg = stg_jt_member(t, top, "messageSignature");
    if (msg != NULL) {
        return fail(why, STG_SIG_UNSUPPORTED, msg->key_offset,
                    "a messageSignature bundle: model signatures are DSSE envelopes");
    }
    const stg_jt_node *vm = NULL, *env = NULL;
    e = need(t, top, "verificationMaterial", STG_JSON_OBJECT_BEGIN, &vm, why,
             "verificationMaterial is missing or not an object");
    if (e == STG_SIG_OK) {
        e = need(t, top, "dsseEnvelope", STG_JSON_OBJECT_BEGIN, &env, why,
                 "dsseEnvelope is missing or not an object");
    }
    if (e == STG_SIG_OK) {
        e = parse_material(t, vm, out, why);
    }
    return e == STG_SIG_OK ? parse_envelope(t, env, out, why) : e;
}

stg_sig_error stg_sig_bundle_parse(const uint8_t *buf, size_t len, stg_arena *arena,
                                   stg_sig_bundle *out, stg_sig_problem *why)
{
    memset(out, 0, sizeof *out);
    memset(why, 0, sizeof *why);
    if (len > STG_SIG_BUNDLE_MAX) {
        return fail(why, STG_SIG_MALFORMED, STG_SIG_BUNDLE_MAX, "larger than 16 MiB");
    }
    stg_jt t;
    size_t err = 0;
    /* A bundle of key or certificate signing holds a few dozen values; keyless ones a few
     * hundred. Each value takes at least one byte, so len bounds the count too. */
    stg_jt_status st = stg_jt_parse(buf, len, STG_SIG_JSON_DEPTH, 4096, arena, &t, &err);
    if (st != STG_JT_OK) {
        return tree_failure(why, st, err);
    }
    stg_sig_error e = parse_bundle_tree(&t, out, why);
    stg_jt_release(&t);
    if (e != STG_SIG_OK) {
        memset(out, 0, sizeof *out);
    }
    return e;
}

/* ------------------------------------------------------------------------------------------ */
/* The statement */

/* 64 hex digits into 32 bytes; lower_only: as the reference compares the subject's digest
 * (a string compare with its own lower-case hex). */
static bool hex32(const stg_jt_node *n, bool lower_only, uint8_t out[32])
{
    if (n == NULL || n->type != STG_JSON_STRING || n->str_len != 64) {
        return false;
    }
    for (size_t i = 0; i < 64; i++) {
        if (lower_only && n->str[i] >= 'A' && n->str[i] <= 'F') {
            return false;
        }
    }
    char tmp[64];
    memcpy(tmp, n->str, 64);
    return stg_hex_decode(tmp, out, 32);
}

static stg_sig_error parse_subject(const stg_jt *t, const stg_jt_node *top, stg_sig_statement *out,
                                   stg_sig_problem *why)
{
    const stg_jt_node *subjects = NULL, *name = NULL, *digest = NULL;
    stg_sig_error e = need(t, top, "subject", STG_JSON_ARRAY_BEGIN, &subjects, why,
                           "subject is missing or not an array");
    if (e != STG_SIG_OK) {
        return e;
    }
    const stg_jt_node *s = stg_jt_at(t, subjects->first_child);
    if (subjects->child_count != 1 || s->type != STG_JSON_OBJECT_BEGIN) {
        return fail(why, STG_SIG_MALFORMED, subjects->offset, "not exactly one subject object");
    }
    e = need(t, s, "name", STG_JSON_STRING, &name, why, "the subject has no name");
    if (e == STG_SIG_OK) {
        e = need(t, s, "digest", STG_JSON_OBJECT_BEGIN, &digest, why, "the subject has no digest");
    }
    if (e != STG_SIG_OK) {
        return e;
    }
    blob_of_string(name, &out->model_name);
    const stg_jt_node *sha = stg_jt_member(t, digest, "sha256");
    if (!hex32(sha, true, out->root)) {
        return fail(why, STG_SIG_MALFORMED, sha != NULL ? sha->offset : digest->offset,
                    "the subject's sha256 is not 64 lower-case hex digits");
    }
    out->root_offset = sha->offset;
    return STG_SIG_OK;
}

static stg_sig_error parse_ignore(const stg_jt *t, const stg_jt_node *ser, stg_sig_statement *out,
                                  stg_sig_problem *why)
{
    const stg_jt_node *ign = stg_jt_member(t, ser, "ignore_paths");
    if (ign == NULL) {
        return STG_SIG_OK;
    }
    if (ign->type != STG_JSON_ARRAY_BEGIN || ign->child_count > STG_SIG_IGNORE_MAX) {
        return fail(why, STG_SIG_MALFORMED, ign->offset, "ignore_paths is not a list of strings");
    }
    out->ignore = stg_arena_alloc(t->arena, (ign->child_count + 1u) * sizeof *out->ignore,
                                  _Alignof(stg_sig_blob));
    if (out->ignore == NULL) {
        return fail(why, STG_SIG_MEMORY, ign->offset, "the memory budget is spent");
    }
    for (const stg_jt_node *c = stg_jt_at(t, ign->first_child); c != NULL;
         c = stg_jt_at(t, c->next_sibling)) {
        if (c->type != STG_JSON_STRING) {
            return fail(why, STG_SIG_MALFORMED, c->offset, "an ignore path is not a string");
        }
        blob_of_string(c, &out->ignore[out->ignore_count++]);
    }
    return STG_SIG_OK;
}

static stg_sig_error parse_serialization(const stg_jt *t, const stg_jt_node *pred,
                                         stg_sig_statement *out, stg_sig_problem *why)
{
    const stg_jt_node *ser = NULL, *method = NULL, *hash = NULL, *links = NULL;
    stg_sig_error e = need(t, pred, "serialization", STG_JSON_OBJECT_BEGIN, &ser, why,
                           "predicate.serialization is missing or not an object");
    if (e == STG_SIG_OK) {
        e = need(t, ser, "method", STG_JSON_STRING, &method, why,
                 "serialization.method is missing");
    }
    if (e != STG_SIG_OK) {
        return e;
    }
    if (stg_jt_str_is(method, "shards")) {
        return fail(why, STG_SIG_UNSUPPORTED, method->offset, "the shards serialization");
    }
    if (!stg_jt_str_is(method, "files")) {
        return fail(why, STG_SIG_MALFORMED, method->offset, "an unknown serialization method");
    }
    e = need(t, ser, "hash_type", STG_JSON_STRING, &hash, why,
             "serialization.hash_type is missing");
    if (e != STG_SIG_OK) {
        return e;
    }
    if (!stg_jt_str_is(hash, "sha256")) {
        return fail(why, STG_SIG_UNSUPPORTED, hash->offset, "a hash other than SHA-256");
    }
    e = need(t, ser, "allow_symlinks", STG_JSON_TRUE, &links, why,
             "serialization.allow_symlinks is missing or not a boolean");
    if (e != STG_SIG_OK) {
        return e;
    }
    out->allow_symlinks = links->type == STG_JSON_TRUE;
    return parse_ignore(t, ser, out, why);
}

static stg_sig_error parse_resource(const stg_jt *t, const stg_jt_node *r, stg_sig_resource *out,
                                    stg_sig_problem *why)
{
    const stg_jt_node *name = NULL, *alg = NULL, *digest = NULL;
    if (r->type != STG_JSON_OBJECT_BEGIN) {
        return fail(why, STG_SIG_MALFORMED, r->offset, "a resource is not an object");
    }
    stg_sig_error e = need(t, r, "name", STG_JSON_STRING, &name, why, "a resource has no name");
    if (e == STG_SIG_OK) {
        e = need(t, r, "algorithm", STG_JSON_STRING, &alg, why, "a resource has no algorithm");
    }
    if (e == STG_SIG_OK) {
        e = need(t, r, "digest", STG_JSON_STRING, &digest, why, "a resource has no digest");
    }
    if (e != STG_SIG_OK) {
        return e;
    }
    if (!stg_jt_str_is(alg, "sha256")) {
        return fail(why, STG_SIG_UNSUPPORTED, alg->offset, "a resource digest other than SHA-256");
    }
    if (!hex32(digest, false, out->digest)) {
        return fail(why, STG_SIG_MALFORMED, digest->offset,
                    "a resource digest is not 64 hex digits");
    }
    out->name = name->str;
    out->name_len = name->str_len;
    out->offset = r->offset;
    return STG_SIG_OK;
}

static stg_sig_error parse_resources(const stg_jt *t, const stg_jt_node *pred, size_t max,
                                     stg_sig_statement *out, stg_sig_problem *why)
{
    const stg_jt_node *list = NULL;
    stg_sig_error e = need(t, pred, "resources", STG_JSON_ARRAY_BEGIN, &list, why,
                           "predicate.resources is missing or not an array");
    if (e != STG_SIG_OK) {
        return e;
    }
    if (list->child_count > max) {
        return fail(why, STG_SIG_LIMIT, list->offset, "more resources than max_signature_files");
    }
    out->resources = stg_arena_alloc(t->arena,
                                     ((size_t)list->child_count + 1u) * sizeof *out->resources,
                                     _Alignof(stg_sig_resource));
    if (out->resources == NULL) {
        return fail(why, STG_SIG_MEMORY, list->offset, "the memory budget is spent");
    }
    for (const stg_jt_node *r = stg_jt_at(t, list->first_child); r != NULL;
         r = stg_jt_at(t, r->next_sibling)) {
        e = parse_resource(t, r, &out->resources[out->resource_count], why);
        if (e != STG_SIG_OK) {
            return e;
        }
        out->resource_count++;
    }
    return STG_SIG_OK;
}

static stg_sig_error parse_statement_tree(const stg_jt *t, size_t max, stg_sig_statement *out,
                                          stg_sig_problem *why)
{
    const stg_jt_node *top = stg_jt_at(t, 0), *type = NULL, *ptype = NULL, *pred = NULL;
    if (top == NULL || top->type != STG_JSON_OBJECT_BEGIN) {
        return fail(why, STG_SIG_MALFORMED, top != NULL ? top->offset : 0, "not a JSON object");
    }
    stg_sig_error e = need(t, top, "_type", STG_JSON_STRING, &type, why, "_type is missing");
    if (e != STG_SIG_OK) {
        return e;
    }
    if (!stg_jt_str_is(type, STG_SIG_STATEMENT_TYPE)) {
        return fail(why, STG_SIG_MALFORMED, type->offset, "_type is not an in-toto Statement v1");
    }
    e = need(t, top, "predicateType", STG_JSON_STRING, &ptype, why, "predicateType is missing");
    if (e != STG_SIG_OK) {
        return e;
    }
    if (stg_jt_str_is(ptype, STG_SIG_PREDICATE_TYPE_V01)) {
        return fail(why, STG_SIG_UNSUPPORTED, ptype->offset,
                    "the v0.1 predicate (its subjects promise no complete file list)");
    }
    if (!stg_jt_str_is(ptype, STG_SIG_PREDICATE_TYPE)) {
        return fail(why, STG_SIG_MALFORMED, ptype->offset, "an unknown predicateType");
    }
    e = parse_subject(t, top, out, why);
    if (e == STG_SIG_OK) {
        e = need(t, top, "predicate", STG_JSON_OBJECT_BEGIN, &pred, why,
                 "predicate is missing or not an object");
    }
    if (e == STG_SIG_OK) {
        e = parse_serialization(t, pred, out, why);
    }
    return e == STG_SIG_OK ? parse_resources(t, pred, max, out, why) : e;
}

stg_sig_error stg_sig_statement_parse(const uint8_t *payload, size_t len, size_t max_resources,
                                      stg_arena *arena, stg_sig_statement *out,
                                      stg_sig_problem *why)
{
    memset(out, 0, sizeof *out);
    memset(why, 0, sizeof *why);
    if (max_resources > STG_SIG_RESOURCES_CEILING) {
        max_resources = STG_SIG_RESOURCES_CEILING;
    }
    /* Four values per resource plus the frame and the ignore list. */
    size_t max_nodes = max_resources * 4u + 64u + STG_SIG_IGNORE_MAX;
    stg_jt t;
    size_t err = 0;
    stg_jt_status st = stg_jt_parse(payload, len, STG_SIG_JSON_DEPTH, max_nodes, arena, &t, &err);
    if (st != STG_JT_OK) {
        return tree_failure(why, st, err);
    }
    stg_sig_error e = parse_statement_tree(&t, max_resources, out, why);
    stg_jt_release(&t);
    if (e != STG_SIG_OK) {
        memset(out, 0, sizeof *out);
    }
    return e;
}
