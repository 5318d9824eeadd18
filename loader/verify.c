/* Model signatures verified offline (stguard.h "Model signatures", docs/signing.md): the bundle
 * and statement read by parser/sigbundle.c, the DSSE signature and certificate chain checked with
 * loader/sigcrypto.c, the file list compared by validator/signature.c, the files hashed here
 * (stg_signature_hash_model) or taken from a scan's records (stg_signature_add_record). The order
 * of the checks and their rules follow model_signing 1.1.1 (docs/signing.md cites the lines). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../parser/arena.h"
#include "../parser/mem.h"
#include "../parser/sigbundle.h"
#include "../validator/limits.h"
#include "../validator/signature.h"
#include "digest.h"
#include "sigcrypto.h"

#define STG_SIG_DEFAULT_MAX_FILES 1000000u
#define STG_SIG_TRUST_FILE_MAX ((size_t)4 << 20) /* a key or chain PEM file */
#define STG_SIG_ARENA ((size_t)64 << 20)         /* bundle + statement of 1M files */
#define STG_SIG_WALK_DEPTH 256u

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(stg_signature_options) == 136,
               "stg_signature_options layout is part of the ABI");
#endif

struct stg_signature {
    char *model; /* as given, without trailing '/' */
    bool model_is_dir;
    int root_fd; /* the model folder (or the single file's folder), for link checks */
    stg_signature_method method;
    char *signer, *model_name;
    stg_arena arena;
    stg_sig_bundle bundle;
    stg_sig_statement st;
    bool statement_ok, finished, compare;
    bool allow_symlinks;
    uint64_t max_files, files;
    stg_sig_ignores ignores;
    stg_sig_manifest manifest;
    stg_sig_findings findings;
    uint8_t *bundle_buf; /* the signature file: blobs without escapes point into it */
    char *sig_path;      /* the signature file's path as read */
};

const char *stg_signature_method_name(stg_signature_method m)
{
    switch (m) {
    case STG_SIGNATURE_METHOD_KEY: return "key";
    case STG_SIGNATURE_METHOD_CERTIFICATE: return "certificate";
    case STG_SIGNATURE_METHOD_KEYLESS: return "sigstore";
    case STG_SIGNATURE_METHOD_UNKNOWN: break;
    }
    return "unknown";
}

stg_status stg_signature_options_init(stg_signature_options *out, uint32_t struct_version)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    memset(out, 0, sizeof *out);
    out->struct_version = struct_version;
    out->ignore_git_paths = true;
    out->max_files = STG_SIG_DEFAULT_MAX_FILES;
    return stg_struct_version_known(struct_version) ? STG_OK : STG_E_STRUCT_VERSION;
}

/* Reads a whole small file (at most max bytes) into a new buffer. */
static stg_status slurp(const char *path, size_t max, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > max) {
        if (fd >= 0) {
            close(fd);
        }
        return STG_E_IO;
    }
    size_t n = (size_t)sb.st_size, got = 0;
    uint8_t *buf = stg_mem_alloc(n + 1u);
    if (buf == NULL) {
        close(fd);
        return STG_E_NOMEM;
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        stg_mem_free(buf);
        return STG_E_IO;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return STG_OK;
}

#define NOTE(s, code, ...) stg_sig_note(&(s)->findings, (code), __VA_ARGS__)

/* ------------------------------------------------------------------------------------------ */
/* The DSSE signature */

/* Python's repr() of a bytes object: what model_signing 0.2's PAE wrote in place of the payload
 * (sign_sigstore_pb.py pae_compat). Returns the length written, or 0 when cap is too small. */
static size_t py_bytes_repr(const uint8_t *p, size_t n, char *out, size_t cap)
{
    bool has_single = memchr(p, '\'', n) != NULL, has_double = memchr(p, '"', n) != NULL;
    char quote = has_single && !has_double ? '"' : '\'';
    size_t o = 0;
    if (cap < 3) {
        return 0;
    }
    out[o++] = 'b';
    out[o++] = quote;
    for (size_t i = 0; i < n; i++) {
        char tmp[5];
        size_t k = 0;
        uint8_t c = p[i];
        if (c == quote || c == '\\') {
            tmp[k++] = '\\';
            tmp[k++] = (char)c;
        } else if (c == '\t' || c == '\n' || c == '\r') {
            tmp[k++] = '\\';
            tmp[k++] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
        } else if (c < 0x20 || c >= 0x7f) {
            k = (size_t)snprintf(tmp, sizeof tmp, "\\x%02x", c);
        } else {
            tmp[k++] = (char)c;
        }
        if (cap - o < k + 1u) {
            return 0;
        }
        memcpy(out + o, tmp, k);
        o += k;
    }
    out[o++] = quote;
    return o;
}

/* The DSSE v1 pre-authentication encoding over the payload, with the in-toto type as
 * model_signing fixes it (sign_sigstore_pb.py pae), or its 0.2 form (compat). */
static uint8_t *pae(const stg_sig_blob *payload, bool compat, size_t *len)
{
    size_t cap = 96u + (compat ? payload->len * 4u + 8u : payload->len);
    uint8_t *buf = stg_mem_alloc(cap);
    if (buf == NULL) {
        return NULL;
    }
    int h = snprintf((char *)buf, cap, "%s %zu %s %zu ", compat ? "DSSEV1" : "DSSEv1",
                     sizeof STG_SIG_PAYLOAD_TYPE - 1u, STG_SIG_PAYLOAD_TYPE, payload->len);
    size_t n = (size_t)h;
    if (!compat) {
        memcpy(buf + n, payload->data, payload->len);
        *len = n + payload->len;
        return buf;
    }
    size_t r = py_bytes_repr(payload->data, payload->len, (char *)buf + n, cap - n);
    *len = n + r;
    return buf;
}

/* ECDSA over the PAE, then over the 0.2 form as model_signing retries (sign_ec_key.py:189-205,
 * sign_certificate.py:164-185: the 0.2 certificate form was always SHA-256). */
static stg_status verify_dsse(stg_signature *s, const EVP_PKEY *key, unsigned bits, bool cert)
{
    unsigned md = bits == 521 ? 512 : bits;
    const stg_sig_blob *sig = &s->bundle.signature;
    bool valid = false;
    stg_status st = STG_E_NOMEM;
    for (int compat = 0; compat < 2 && !valid; compat++) {
        size_t n = 0;
        uint8_t *msg = pae(&s->bundle.payload, compat != 0, &n);
        if (msg == NULL) {
            return STG_E_NOMEM;
        }
        st = stg_sigc_ecdsa_verify(key, compat && cert ? 256 : md, sig->data, sig->len, msg, n,
                                   &valid);
        stg_mem_free(msg);
        if (st != STG_OK) {
            return st;
        }
    }
    if (!valid) {
        NOTE(s, STG_SIGNATURE_INVALID, true, sig->offset, NULL, 0,
             "the DSSE signature does not verify with the %s's key",
             cert ? "leaf certificate" : "given public key");
    }
    return STG_OK;
}

/* The key method (sign_ec_key.py Verifier). */
static stg_status check_key(stg_signature *s, const uint8_t *pem, size_t len)
{
    EVP_PKEY *key = NULL;
    stg_status st = stg_sigc_key_from_pem(pem, len, &key);
    if (st != STG_OK) {
        return st;
    }
    unsigned bits = stg_sigc_ec_bits(key);
    char hex[65];
    st = stg_sigc_key_pem_sha256(key, hex);
    if (st == STG_OK) {
        char who[80];
        snprintf(who, sizeof who, "sha256:%s", hex);
        s->signer = stg_mem_strndup(who, strlen(who));
        st = s->signer != NULL ? STG_OK : STG_E_NOMEM;
    }
    const stg_sig_blob *hint = &s->bundle.hint;
    if (st != STG_OK) {
        /* nothing more: OpenSSL or memory failed */
    } else if (bits == 0) {
        NOTE(s, STG_SIGNATURE_UNTRUSTED, false, 0, NULL, 0,
             "the public key is not an EC key on P-256, P-384 or P-521");
    } else if (hint->len > 0 && (hint->len != 64 || memcmp(hint->data, hex, 64) != 0)) {
        NOTE(s, STG_SIGNATURE_UNTRUSTED, true, hint->offset, NULL, 0,
             "the public key is not the one the signature names (publicKey.hint)");
    } else {
        st = verify_dsse(s, key, bits, false);
    }
    stg_sigc_key_free(key);
    return st;
}

/* The certificate method (sign_certificate.py Verifier._verify_certificates). */
static stg_status check_chain(stg_signature *s, const uint8_t *roots, size_t roots_len)
{
    const uint8_t *der[STG_SIG_CERTS_MAX];
    size_t lens[STG_SIG_CERTS_MAX];
    for (size_t i = 0; i < s->bundle.cert_count; i++) {
        der[i] = s->bundle.certs[i].data;
        lens[i] = s->bundle.certs[i].len;
    }
    stg_sigc_chain ch;
    stg_status st = stg_sigc_verify_chain(der, lens, s->bundle.cert_count, roots, roots_len, &ch);
    uint64_t at = s->bundle.certs[0].offset;
    if (st == STG_E_INVALID) {
        NOTE(s, STG_SIGNATURE_MALFORMED, true, at, NULL, 0, "%s", ch.why);
        return STG_OK;
    }
    if (st != STG_OK) {
        return st;
    }
    if (ch.subject[0] != 0) {
        s->signer = stg_mem_strndup(ch.subject, strlen(ch.subject));
    }
    unsigned bits = ch.leaf_key != NULL ? stg_sigc_ec_bits(ch.leaf_key) : 0;
    if (!ch.trusted) {
        NOTE(s, STG_SIGNATURE_UNTRUSTED, true, at, NULL, 0,
             "the leaf certificate does not chain to the trusted certificates at its notBefore "
             "time: %s",
             ch.why != NULL ? ch.why : "unknown");
    } else if (!ch.may_sign) {
        NOTE(s, STG_SIGNATURE_UNTRUSTED, true, at, NULL, 0,
             "the leaf certificate may not sign: no digitalSignature key usage and no "
             "codeSigning extended key usage");
    } else if (bits == 0) {
        NOTE(s, STG_SIGNATURE_UNTRUSTED, true, at, NULL, 0,
             "the leaf certificate's key is not an EC key on P-256, P-384 or P-521");
    } else {
        st = verify_dsse(s, ch.leaf_key, bits, true);
    }
    stg_sigc_key_free(ch.leaf_key);
    return st;
}

/* The trust material, read before the bundle so that an unreadable or empty file is the
 * caller's error whatever the bundle holds: the key file (whose first public key must parse),
 * or every chain file's certificates, all of them trust anchors (sign_certificate.py:145-158),
 * or the trusted root (only read). */
static stg_status read_trust(const stg_signature_options *opt, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (opt->public_key != NULL || opt->trusted_root != NULL) {
        const char *path = opt->public_key != NULL ? opt->public_key : opt->trusted_root;
        stg_status st = slurp(path, STG_SIG_TRUST_FILE_MAX, out, len);
        EVP_PKEY *key = NULL;
        if (st == STG_OK && opt->public_key != NULL) {
            st = stg_sigc_key_from_pem(*out, *len, &key);
            stg_sigc_key_free(key);
        }
        return st;
    }
    stg_status st = STG_OK;
    for (size_t i = 0; i < opt->certificate_chain_count && st == STG_OK; i++) {
        uint8_t *one = NULL;
        size_t n = 0;
        st = slurp(opt->certificate_chain[i], STG_SIG_TRUST_FILE_MAX, &one, &n);
        uint8_t *p = st == STG_OK ? stg_mem_realloc(*out, *len + n + 2u) : NULL;
        if (st == STG_OK && p == NULL) {
            st = STG_E_NOMEM;
        }
        if (st == STG_OK) {
            *out = p;
            memcpy(p + *len, one, n);
            *len += n;
            p[(*len)++] = '\n';
        }
        stg_mem_free(one);
    }
    return st;
}

/* Runs the method the bundle and the options agree on, with the trust file(s) read whole. */
static stg_status check_signature(stg_signature *s, const stg_signature_options *opt,
                                  const uint8_t *trust, size_t trust_len)
{
    stg_sig_material m = s->bundle.material;
    s->method = m == STG_SIG_MATERIAL_PUBLIC_KEY ? STG_SIGNATURE_METHOD_KEY
                : m == STG_SIG_MATERIAL_CHAIN    ? STG_SIGNATURE_METHOD_CERTIFICATE
                                                 : STG_SIGNATURE_METHOD_KEYLESS;
    if (m == STG_SIG_MATERIAL_KEYLESS) {
        NOTE(s, STG_SIGNATURE_UNSUPPORTED, true, s->bundle.certs[0].offset, NULL, 0,
             "keyless Sigstore signatures (a Fulcio certificate, %zu Rekor entries) are not "
             "verified offline",
             s->bundle.tlog_entries);
        return STG_OK;
    }
    bool with_key = opt->public_key != NULL, with_chain = opt->certificate_chain_count > 0;
    if ((m == STG_SIG_MATERIAL_PUBLIC_KEY && !with_key) ||
        (m == STG_SIG_MATERIAL_CHAIN && !with_chain)) {
        NOTE(s, STG_SIGNATURE_UNTRUSTED, false, 0, NULL, 0,
             "the model was signed with %s, checked with %s",
             m == STG_SIG_MATERIAL_PUBLIC_KEY ? "a key" : "a certificate",
             with_key     ? "a public key"
             : with_chain ? "a certificate chain"
                          : "a Sigstore trusted root");
        return STG_OK;
    }
    return with_key ? check_key(s, trust, trust_len) : check_chain(s, trust, trust_len);
}

/* ------------------------------------------------------------------------------------------ */
/* The statement */

static void note_problem(stg_signature *s, const stg_sig_problem *why, stg_code malformed,
                         const char *where)
{
    stg_code code = why->error == STG_SIG_UNSUPPORTED ? STG_SIGNATURE_UNSUPPORTED
                    : why->error == STG_SIG_MALFORMED ? malformed
                                                      : STG_SIGNATURE_INCOMPLETE;
    NOTE(s, code, true, why->offset, NULL, 0, "%s%s", why->what, where);
}

/* The subject's digest is SHA-256 over the listed digests in their order (signing.py:109-124). */
static stg_status check_root(stg_signature *s)
{
    stg_sha256 *h = NULL;
    stg_status st = stg_sha256_new(&h);
    for (size_t i = 0; i < s->st.resource_count && st == STG_OK; i++) {
        st = stg_sha256_update(h, s->st.resources[i].digest, 32);
    }
    uint8_t root[32];
    if (st == STG_OK) {
        st = stg_sha256_final(h, root);
    }
    stg_sha256_free(h);
    if (st == STG_OK && memcmp(root, s->st.root, 32) != 0) {
        NOTE(s, STG_SIGNATURE_STATEMENT_INVALID, true, s->st.root_offset, NULL, 0,
             "the subject's digest is not the SHA-256 of the listed digests (offset in the DSSE "
             "payload)");
    }
    return st;
}

/* model_signing's default ignores, then the signed ones (hashing.py:163-174, verifying.py:102-106). */
static bool add_ignores(stg_signature *s, const stg_signature_options *opt)
{
    static const char *const git[] = {".git", ".gitattributes", ".github", ".gitignore"};
    bool ok = true;
    for (size_t i = 0; i < 4 && opt->ignore_git_paths; i++) {
        ok = ok && stg_sig_ignores_add(&s->ignores, (const uint8_t *)git[i], strlen(git[i]));
    }
    for (size_t i = 0; i < s->st.ignore_count; i++) {
        ok = ok && stg_sig_ignores_add(&s->ignores, s->st.ignore[i].data, s->st.ignore[i].len);
    }
    return ok;
}

/* A path given on the command line (absolute or from the working folder), as a path relative to
 * the model when it lies inside it (_cli.py:159-171: resolved, then relative to the resolved
 * model); false when it does not. */
static bool inside_model(const char *model_real, const char *path, char *rel, size_t cap)
{
    char real[PATH_MAX];
    if (realpath(path, real) == NULL) {
        /* a path that does not exist (yet): its folder resolved, its name kept */
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        size_t dl = slash != NULL ? (size_t)(slash - path) : 1;
        if (dl >= sizeof dir) {
            return false;
        }
        memcpy(dir, slash != NULL ? path : ".", dl);
        dir[slash != NULL && dl == 0 ? 1 : dl] = 0;
        if (slash != NULL && dl == 0) {
            dir[0] = '/';
        }
        char rdir[PATH_MAX];
        if (realpath(dir, rdir) == NULL ||
            snprintf(real, sizeof real, "%s/%s", rdir, slash != NULL ? slash + 1 : path) >=
                (int)sizeof real) {
            return false;
        }
    }
    size_t ml = strlen(model_real);
    if (strncmp(real, model_real, ml) != 0 || (real[ml] != '/' && real[ml] != 0)) {
        return false;
    }
    snprintf(rel, cap, "%s", real[ml] == 0 ? "." : real + ml + 1);
    return true;
}

static stg_status add_cli_ignores(stg_signature *s, const stg_signature_options *opt,
                                  const char *sig_path)
{
    char model_real[PATH_MAX], rel[PATH_MAX];
    if (realpath(s->model, model_real) == NULL) {
        return STG_E_IO;
    }
    if (!s->model_is_dir) {
        /* a single-file model: paths are relative to its folder (no ignore applies inside) */
        return STG_OK;
    }
    bool ok = true;
    for (size_t i = 0; i <= opt->ignore_path_count && ok; i++) {
        const char *p = i < opt->ignore_path_count ? opt->ignore_paths[i] : sig_path;
        if (p != NULL && inside_model(model_real, p, rel, sizeof rel)) {
            ok = stg_sig_ignores_add(&s->ignores, (const uint8_t *)rel, strlen(rel));
        }
    }
    return ok ? STG_OK : STG_E_NOMEM;
}

/* Payload type, statement, root digest, the file table (signing.py:365-381, 89-126). */
static stg_status read_statement(stg_signature *s, const stg_signature_options *opt)
{
    const stg_sig_blob *pt = &s->bundle.payload_type;
    if (pt->len != sizeof STG_SIG_PAYLOAD_TYPE - 1u ||
        memcmp(pt->data, STG_SIG_PAYLOAD_TYPE, pt->len) != 0) {
        NOTE(s, STG_SIGNATURE_STATEMENT_INVALID, true, pt->offset, NULL, 0,
             "the DSSE payloadType is not application/vnd.in-toto+json");
        return STG_OK;
    }
    stg_sig_problem why;
    stg_sig_error e = stg_sig_statement_parse(s->bundle.payload.data, s->bundle.payload.len,
                                              (size_t)s->max_files, &s->arena, &s->st, &why);
    if (e != STG_SIG_OK) {
        note_problem(s, &why, STG_SIGNATURE_STATEMENT_INVALID, " (offset in the DSSE payload)");
        return STG_OK;
    }
    s->statement_ok = true;
    if (s->st.model_name.len > 0) {
        s->model_name = stg_mem_strndup((const char *)s->st.model_name.data, s->st.model_name.len);
    }
    stg_status st = check_root(s);
    if (st == STG_OK && !add_ignores(s, opt)) {
        st = STG_E_NOMEM;
    }
    if (st == STG_OK && s->ignores.covers_all) {
        NOTE(s, STG_SIGNATURE_UNSUPPORTED, false, 0, NULL, 0,
             "an ignore path of the signature covers the whole model");
    }
    if (st == STG_OK) {
        st = stg_sig_manifest_init(&s->manifest, &s->st, &s->findings);
    }
    s->compare = st == STG_OK;
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Opening */

static stg_status check_args(const char *model, const stg_signature_options *opt,
                             stg_signature **out)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = NULL;
    if (model == NULL || opt == NULL) {
        return STG_E_BAD_ARG;
    }
    if (!stg_struct_version_known(opt->struct_version)) {
        return STG_E_STRUCT_VERSION;
    }
    bool key = opt->public_key != NULL, chain = opt->certificate_chain_count > 0;
    if ((int)key + (int)chain + (int)(opt->trusted_root != NULL) != 1 ||
        (chain && opt->certificate_chain == NULL) ||
        (opt->ignore_path_count > 0 && opt->ignore_paths == NULL) ||
        opt->ignore_path_count > 4096) {
        return STG_E_BAD_ARG;
    }
    for (size_t i = 0; chain && i < opt->certificate_chain_count; i++) {
        if (opt->certificate_chain[i] == NULL) {
            return STG_E_BAD_ARG;
        }
    }
    return stg_sigc_available() ? STG_OK : STG_E_CRYPTO;
}

static stg_status new_signature(const char *model, const stg_signature_options *opt,
                                stg_signature **out)
{
    struct stat sb;
    if (stat(model, &sb) != 0 || !(S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode))) {
        return STG_E_IO;
    }
    stg_signature *s = stg_mem_calloc(1, sizeof *s);
    if (s == NULL) {
        return STG_E_NOMEM;
    }
    size_t ml = strlen(model);
    while (ml > 1 && model[ml - 1] == '/') {
        ml--;
    }
    s->model = stg_mem_strndup(model, ml);
    s->model_is_dir = S_ISDIR(sb.st_mode);
    s->root_fd = -1;
    s->allow_symlinks = opt->allow_symlinks;
    s->max_files = opt->max_files == 0 || opt->max_files > STG_SIG_RESOURCES_CEILING
                       ? STG_SIG_RESOURCES_CEILING
                       : opt->max_files;
    stg_arena_init(&s->arena, STG_SIG_ARENA);
    *out = s;
    if (s->model == NULL) {
        return STG_E_NOMEM;
    }
    if (s->model_is_dir) {
        s->root_fd = open(s->model, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    return s->model_is_dir && s->root_fd < 0 ? STG_E_IO : STG_OK;
}

/* MODEL/model.sig; for a single-file model, model.sig beside it. */
static char *default_sig_path(const stg_signature *s)
{
    size_t n = strlen(s->model) + sizeof "/model.sig";
    char *p = stg_mem_alloc(n);
    if (p == NULL) {
        return NULL;
    }
    size_t dl = strlen(s->model);
    if (!s->model_is_dir) {
        while (dl > 0 && s->model[dl - 1] != '/') {
            dl--;
        }
        dl = dl > 0 ? dl - 1 : 0;
    }
    snprintf(p, n, "%.*s%smodel.sig", (int)dl, s->model, dl > 0 || s->model[0] == '/' ? "/" : "");
    return p;
}

stg_status stg_signature_open(const char *model, const char *sig_path,
                              const stg_signature_options *opt, stg_signature **out)
{
    stg_status st = check_args(model, opt, out);
    stg_signature *s = NULL;
    st = st == STG_OK ? new_signature(model, opt, &s) : st;
    uint8_t *trust = NULL;
    size_t trust_len = 0;
    st = st == STG_OK ? read_trust(opt, &trust, &trust_len) : st;
    char *own_path = st == STG_OK && sig_path == NULL ? default_sig_path(s) : NULL;
    if (st == STG_OK && sig_path == NULL && own_path == NULL) {
        st = STG_E_NOMEM;
    }
    const char *path = sig_path != NULL ? sig_path : own_path;
    uint8_t *buf = NULL;
    size_t len = 0;
    st = st == STG_OK ? slurp(path, STG_SIG_BUNDLE_MAX, &buf, &len) : st;
    if (st == STG_OK) {
        stg_sig_problem why;
        stg_sig_error e = stg_sig_bundle_parse(buf, len, &s->arena, &s->bundle, &why);
        if (e != STG_SIG_OK) {
            note_problem(s, &why, STG_SIGNATURE_MALFORMED, "");
        } else {
            st = check_signature(s, opt, trust, trust_len);
            st = st == STG_OK ? read_statement(s, opt) : st;
        }
    }
    st = st == STG_OK ? add_cli_ignores(s, opt, path) : st;
    if (st == STG_OK) {
        stg_sig_ignores_seal(&s->ignores);
    }
    stg_mem_free(trust);
    /* the bundle's blobs point into buf or the arena: keep buf as long as the check */
    if (st != STG_OK) {
        stg_mem_free(own_path);
        stg_mem_free(buf);
        stg_signature_free(s);
        return st;
    }
    s->bundle_buf = buf;
    s->sig_path = own_path != NULL ? own_path : stg_mem_strndup(sig_path, strlen(sig_path));
    if (s->sig_path == NULL) {
        stg_signature_free(s);
        return STG_E_NOMEM;
    }
    *out = s;
    return STG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Files */

static bool counted(stg_signature *s)
{
    if (s->files >= s->max_files) {
        if (s->files++ == s->max_files) {
            NOTE(s, STG_SIGNATURE_INCOMPLETE, false, 0, NULL, 0,
                 "the model holds more than max_signature_files (%llu) entries",
                 (unsigned long long)s->max_files);
        }
        return false;
    }
    s->files++;
    return true;
}

static void unhashed(stg_signature *s, const char *rel, const char *why)
{
    if (s->compare) {
        stg_sig_manifest_seen(&s->manifest, rel, strlen(rel));
    }
    NOTE(s, STG_SIGNED_FILE_UNVERIFIABLE, false, 0, rel, strlen(rel), "%s", why);
}

/* One entry, not ignored (the callers check). */
static void add_entry(stg_signature *s, const char *rel, stg_signature_entry kind,
                      const uint8_t digest[32])
{
    if (!counted(s)) {
        return;
    }
    if (kind == STG_SIGNATURE_ENTRY_UNHASHED) {
        unhashed(s, rel,
                 "an entry that could not be hashed (a special file, unreadable, or not "
                 "read)");
    } else if (kind == STG_SIGNATURE_ENTRY_LINK && !s->allow_symlinks) {
        unhashed(s, rel, "a symbolic link (model_signing refuses links unless allowed)");
    } else if (s->compare) {
        stg_sig_manifest_file(&s->manifest, rel, strlen(rel), digest, &s->findings);
    }
}

static bool rel_ok(const char *rel)
{
    return stg_sig_name_canonical((const uint8_t *)rel, strlen(rel));
}

bool stg_signature_ignores(const stg_signature *s, const char *rel)
{
    return s != NULL && rel != NULL && stg_sig_ignored(&s->ignores, rel, strlen(rel));
}

stg_status stg_signature_add_file(stg_signature *s, const char *rel, stg_signature_entry kind,
                                  const char *sha256_hex)
{
    if (s == NULL || rel == NULL || !rel_ok(rel) ||
        (kind != STG_SIGNATURE_ENTRY_FILE && kind != STG_SIGNATURE_ENTRY_LINK &&
         kind != STG_SIGNATURE_ENTRY_UNHASHED)) {
        return STG_E_BAD_ARG;
    }
    if (s->finished) {
        return STG_E_STATE;
    }
    uint8_t d[32] = {0};
    if (kind != STG_SIGNATURE_ENTRY_UNHASHED &&
        (sha256_hex == NULL || !stg_sha256_parse_hex(sha256_hex, d))) {
        return STG_E_BAD_ARG;
    }
    if (!stg_sig_ignored(&s->ignores, rel, strlen(rel))) {
        add_entry(s, rel, kind, d);
    }
    return STG_OK;
}

/* A folder on the way to rel (from the model root) that is a link: the walk went through it. */
static bool through_link(const stg_signature *s, const char *rel)
{
    char buf[PATH_MAX];
    size_t n = strlen(rel);
    if (n >= sizeof buf || s->root_fd < 0) {
        return false;
    }
    memcpy(buf, rel, n + 1);
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != '/') {
            continue;
        }
        buf[i] = 0;
        struct stat sb;
        bool link = fstatat(s->root_fd, buf, &sb, AT_SYMLINK_NOFOLLOW) != 0 || S_ISLNK(sb.st_mode);
        buf[i] = '/';
        if (link) {
            return true;
        }
    }
    return false;
}

stg_status stg_signature_add_record(stg_signature *s, const stg_tree_record *rec)
{
    if (s == NULL || rec == NULL || rec->path == NULL || rec->kind == STG_TREE_STDIN) {
        return STG_E_BAD_ARG;
    }
    if (s->finished) {
        return STG_E_STATE;
    }
    size_t ml = strlen(s->model);
    const char *rel = NULL;
    if (!s->model_is_dir) {
        rel = strcmp(rec->path, s->model) == 0 ? "." : NULL;
    } else if (strncmp(rec->path, s->model, ml) == 0 && rec->path[ml] == '/') {
        rel = rec->path + ml + 1;
        while (rel[0] == '.' && rel[1] == '/') {
            rel += 2;
        }
    }
    if (rel == NULL || !rel_ok(rel)) {
        return STG_E_BAD_ARG;
    }
    if (stg_sig_ignored(&s->ignores, rel, strlen(rel))) {
        return STG_OK;
    }
    const char *hex = rec->report != NULL ? stg_report_sha256(rec->report) : NULL;
    uint8_t d[32] = {0};
    stg_signature_entry kind = rec->kind == STG_TREE_LINK ? STG_SIGNATURE_ENTRY_LINK
                                                          : STG_SIGNATURE_ENTRY_FILE;
    if (rec->kind == STG_TREE_NOT_READ || hex == NULL || !stg_sha256_parse_hex(hex, d)) {
        kind = STG_SIGNATURE_ENTRY_UNHASHED;
    }
    if (through_link(s, rel)) {
        if (counted(s)) {
            unhashed(s, rel, "reached through a linked folder (model_signing does not enter one)");
        }
        return STG_OK;
    }
    add_entry(s, rel, kind, d);
    return STG_OK;
}

/* SHA-256 of everything fd reads (io.py:115-130: the whole content). */
static stg_status hash_fd(int fd, uint8_t out[32])
{
    enum { CHUNK = 1 << 20 };
    uint8_t *buf = stg_mem_alloc(CHUNK);
    stg_sha256 *h = NULL;
    stg_status st = buf == NULL ? STG_E_NOMEM : stg_sha256_new(&h);
    while (st == STG_OK) {
        ssize_t r = read(fd, buf, CHUNK);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            st = STG_E_IO;
        } else if (r == 0) {
            break;
        } else {
            st = stg_sha256_update(h, buf, (size_t)r);
        }
    }
    if (st == STG_OK) {
        st = stg_sha256_final(h, out);
    }
    stg_sha256_free(h);
    stg_mem_free(buf);
    return st;
}

/* Opens name in dirfd (following a link only when `follow`) and hashes it when it is a regular
 * file. STG_E_INVALID when it is not one. */
static stg_status hash_at(int dirfd, const char *name, bool follow, uint8_t out[32])
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0) {
        return STG_E_IO;
    }
    struct stat sb;
    stg_status st = fstat(fd, &sb) != 0 ? STG_E_IO : !S_ISREG(sb.st_mode) ? STG_E_INVALID : STG_OK;
    st = st == STG_OK ? hash_fd(fd, out) : st;
    close(fd);
    return st;
}

/* One entry of the walk that is not a folder (serialization.py:24-55, file.py:112-119). */
static stg_status walk_entry(stg_signature *s, int dirfd, const char *name, const char *rel,
                             const struct stat *lsb)
{
    if (!counted(s)) {
        return STG_OK;
    }
    bool link = S_ISLNK(lsb->st_mode);
    if (link && !s->allow_symlinks) {
        unhashed(s, rel, "a symbolic link (model_signing refuses links unless allowed)");
        return STG_OK;
    }
    if (!link && !S_ISREG(lsb->st_mode)) {
        unhashed(s, rel, "a FIFO, socket or device: not a file model_signing hashes");
        return STG_OK;
    }
    uint8_t d[32];
    stg_status st = hash_at(dirfd, name, link, d);
    if (st == STG_E_NOMEM || st == STG_E_CRYPTO) {
        return st;
    }
    if (st == STG_E_INVALID) {
        unhashed(s, rel,
                 link ? "a link to a folder or special file (the reference neither "
                        "hashes nor walks a linked folder)"
                      : "not a regular file when opened");
    } else if (st != STG_OK) {
        unhashed(s, rel, link ? "a link whose target cannot be read" : "the file cannot be read");
    } else if (s->compare) {
        stg_sig_manifest_file(&s->manifest, rel, strlen(rel), d, &s->findings);
    }
    return STG_OK;
}

/* Folders still to list: each with the identity it had when its parent listed it, so that a
 * folder swapped for another (a link in a leading component) after that is not entered. */
typedef struct walk_folder_ref {
    char *rel;
    dev_t dev;
    ino_t ino;
} walk_folder_ref;

typedef struct walk_stack {
    walk_folder_ref *at;
    size_t count, cap;
} walk_stack;

static bool push(walk_stack *w, const char *rel, const struct stat *sb)
{
    if (w->count == w->cap) {
        size_t cap = w->cap == 0 ? 16 : w->cap * 2;
        walk_folder_ref *p = stg_mem_realloc(w->at, cap * sizeof *p);
        if (p == NULL) {
            return false;
        }
        w->at = p;
        w->cap = cap;
    }
    walk_folder_ref *f = &w->at[w->count];
    f->dev = sb->st_dev;
    f->ino = sb->st_ino;
    f->rel = stg_mem_strndup(rel, strlen(rel));
    return w->at[w->count++].rel != NULL;
}

/* The entries of the folder rel ("" for the root): folders pushed, the rest hashed. */
static stg_status walk_folder(stg_signature *s, const walk_folder_ref *ref, walk_stack *w,
                              uint64_t *folders)
{
    const char *rel = ref->rel;
    int dfd = openat(s->root_fd, rel[0] != 0 ? rel : ".",
                     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    struct stat now;
    if (dfd >= 0 && (fstat(dfd, &now) != 0 || now.st_dev != ref->dev || now.st_ino != ref->ino)) {
        close(dfd);
        dfd = -1; /* not the folder its parent listed: changed while walked */
    }
    DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (dir == NULL) {
        if (dfd >= 0) {
            close(dfd);
        }
        unhashed(s, rel[0] != 0 ? rel : ".", "a folder that cannot be listed");
        return STG_OK;
    }
    stg_status st = STG_OK;
    char child[PATH_MAX];
    for (struct dirent *e; st == STG_OK && (e = readdir(dir)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        if (snprintf(child, sizeof child, "%s%s%s", rel, rel[0] != 0 ? "/" : "", e->d_name) >=
            (int)sizeof child) {
            unhashed(s, rel, "a path longer than PATH_MAX inside this folder");
            continue;
        }
        struct stat lsb;
        if (stg_sig_ignored(&s->ignores, child, strlen(child))) {
            continue;
        }
        if (fstatat(dfd, e->d_name, &lsb, AT_SYMLINK_NOFOLLOW) != 0) {
            unhashed(s, child, "an entry that cannot be examined");
        } else if (S_ISDIR(lsb.st_mode)) {
            /* empty folders are not recorded (the reference lists files only) */
            if (++*folders > s->max_files) {
                NOTE(s, STG_SIGNATURE_INCOMPLETE, false, 0, NULL, 0,
                     "the model holds more folders than max_signature_files");
                st = STG_E_LIMIT;
            } else if (!push(w, child, &lsb)) {
                st = STG_E_NOMEM;
            }
        } else {
            st = walk_entry(s, dfd, e->d_name, child, &lsb);
        }
    }
    closedir(dir);
    return st == STG_E_LIMIT ? STG_OK : st;
}

stg_status stg_signature_hash_model(stg_signature *s)
{
    if (s == NULL) {
        return STG_E_BAD_ARG;
    }
    if (s->finished) {
        return STG_E_STATE;
    }
    if (!s->model_is_dir) {
        /* a single file is the resource "." (file.py:108-111: the model path itself) */
        uint8_t d[32];
        stg_status st = hash_at(AT_FDCWD, s->model, true, d);
        if (st == STG_OK) {
            add_entry(s, ".", STG_SIGNATURE_ENTRY_FILE, d);
        } else if (st != STG_E_NOMEM && st != STG_E_CRYPTO) {
            add_entry(s, ".", STG_SIGNATURE_ENTRY_UNHASHED, d);
            st = STG_OK;
        }
        return st;
    }
    walk_stack w = {0};
    uint64_t folders = 0;
    struct stat root;
    if (fstat(s->root_fd, &root) != 0) {
        return STG_E_IO;
    }
    stg_status st = push(&w, "", &root) ? STG_OK : STG_E_NOMEM;
    while (st == STG_OK && w.count > 0) {
        walk_folder_ref ref = w.at[--w.count];
        st = walk_folder(s, &ref, &w, &folders);
        stg_mem_free(ref.rel);
    }
    while (w.count > 0) {
        stg_mem_free(w.at[--w.count].rel);
    }
    stg_mem_free(w.at);
    return st;
}

stg_status stg_signature_finish(stg_signature *s)
{
    if (s == NULL) {
        return STG_E_BAD_ARG;
    }
    if (!s->finished && s->compare) {
        stg_sig_manifest_finish(&s->manifest, &s->findings);
    }
    s->finished = true;
    return STG_OK;
}

bool stg_signature_verified(const stg_signature *s)
{
    return s != NULL && s->finished && s->compare && s->statement_ok && s->findings.count == 0 &&
           s->findings.dropped == 0 && !s->findings.lost;
}

stg_signature_method stg_signature_method_of(const stg_signature *s)
{
    return s != NULL ? s->method : STG_SIGNATURE_METHOD_UNKNOWN;
}

const char *stg_signature_signer(const stg_signature *s)
{
    return s != NULL ? s->signer : NULL;
}

const char *stg_signature_file(const stg_signature *s)
{
    return s != NULL ? s->sig_path : NULL;
}

const char *stg_signature_model_name(const stg_signature *s)
{
    return s != NULL ? s->model_name : NULL;
}

uint64_t stg_signature_file_count(const stg_signature *s)
{
    return s != NULL ? s->files : 0;
}

size_t stg_signature_finding_count(const stg_signature *s)
{
    return s != NULL ? s->findings.count : 0;
}

const stg_signature_finding *stg_signature_finding_at(const stg_signature *s, size_t i)
{
    return s != NULL && i < s->findings.count ? &s->findings.items[i] : NULL;
}

uint64_t stg_signature_findings_dropped(const stg_signature *s)
{
    return s != NULL ? s->findings.dropped : 0;
}

void stg_signature_free(stg_signature *s)
{
    if (s == NULL) {
        return;
    }
    if (s->root_fd >= 0) {
        close(s->root_fd);
    }
    stg_sig_manifest_free(&s->manifest);
    stg_sig_ignores_free(&s->ignores);
    stg_sig_findings_free(&s->findings);
    stg_arena_release(&s->arena);
    stg_mem_free(s->bundle_buf);
    stg_mem_free(s->signer);
    stg_mem_free(s->model_name);
    stg_mem_free(s->sig_path);
    stg_mem_free(s->model);
    stg_mem_free(s);
}
