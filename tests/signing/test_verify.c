/* The signature check (loader/verify.c, loader/sigcrypto.c, validator/signature.c) through the
 * public API: model_signing's own release vectors (tests/signing/upstream, verified as upstream's
 * scripts/tests/test-verify-v*.sh verify them), the ignore and name rules, and the files given
 * one by one as a scan gives them. Fixtures made by tests/signing/gen_signing.py are checked by
 * tests/signing/script_verify.sh. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/signature.h"

static char *up(const char *rel)
{
    char buf[512];
    snprintf(buf, sizeof buf, "tests/signing/upstream/%s", rel);
    return strdup(tu_src(buf));
}

/* Verifies an upstream vector; returns the check (caller frees). */
static stg_signature *check_vector(const char *model_rel, const char *sig_rel, bool key,
                                   const char *ignore_rel)
{
    stg_signature_options o;
    stg_signature_options_default(&o);
    char *trust = up(key ? "keys/signing-key-pub.pem" : "keys/ca-cert.pem");
    char *ign = ignore_rel != NULL ? up(ignore_rel) : NULL;
    const char *chain[1] = {trust};
    const char *ignores[1] = {ign};
    if (key) {
        o.public_key = trust;
    } else {
        o.certificate_chain = chain;
        o.certificate_chain_count = 1;
    }
    if (ign != NULL) {
        o.ignore_paths = ignores;
        o.ignore_path_count = 1;
    }
    char *model = up(model_rel), *sig = up(sig_rel);
    stg_signature *s = NULL;
    ck_assert_int_eq(stg_signature_open(model, sig, &o, &s), STG_OK);
    ck_assert_int_eq(stg_signature_hash_model(s), STG_OK);
    ck_assert_int_eq(stg_signature_finish(s), STG_OK);
    free(trust);
    free(ign);
    free(model);
    free(sig);
    return s;
}

static const char *describe(const stg_signature *s)
{
    static char buf[2048];
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < stg_signature_finding_count(s) && o < sizeof buf - 200; i++) {
        const stg_signature_finding *f = stg_signature_finding_at(s, i);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "[%s %s: %s] ", stg_code_name(f->code),
                              f->file != NULL ? f->file : "-", f->message);
    }
    return buf;
}

static size_t count_code(const stg_signature *s, stg_code code)
{
    size_t n = 0;
    for (size_t i = 0; i < stg_signature_finding_count(s); i++) {
        n += stg_signature_finding_at(s, i)->code == code;
    }
    return n;
}

START_TEST(test_upstream_verified)
{
    static const struct {
        const char *model, *sig;
        bool key;
        const char *ignore;
        uint64_t files;
    } cases[] = {
        {"v0.3.1-elliptic-key/signme-1", "v0.3.1-elliptic-key/model.sig", true, NULL, 1},
        {"v1.0.0-elliptic-key/signme-1", "v1.0.0-elliptic-key/model.sig", true, NULL, 1},
        {"v1.0.1-elliptic-key", "v1.0.1-elliptic-key/model.sig", true,
         "v1.0.1-elliptic-key/ignore-me", 2},
        {"v1.1.0-elliptic-key", "v1.1.0-elliptic-key/model.sig", true, NULL, 2},
        {"v0.3.1-certificate", "v0.3.1-certificate/model.sig", false, NULL, 2},
        {"v1.0.0-certificate", "v1.0.0-certificate/model.sig", false, NULL, 2},
        {"v1.0.1-certificate", "v1.0.1-certificate/model.sig", false,
         "v1.0.1-certificate/ignore-me", 2},
        {"v1.1.0-certificate", "v1.1.0-certificate/model.sig", false, NULL, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_signature *s = check_vector(cases[i].model, cases[i].sig, cases[i].key,
                                        cases[i].ignore);
        ck_assert_msg(stg_signature_verified(s), "%s: %s", cases[i].model, describe(s));
        ck_assert_uint_eq(stg_signature_file_count(s), cases[i].files);
        ck_assert_int_eq(stg_signature_method_of(s), cases[i].key
                                                         ? STG_SIGNATURE_METHOD_KEY
                                                         : STG_SIGNATURE_METHOD_CERTIFICATE);
        ck_assert(stg_signature_signer(s) != NULL);
        if (cases[i].key) {
            /* the key method's signer is the hint's form: sha256 of the PEM */
            ck_assert_str_eq(
                stg_signature_signer(s),
                "sha256:e8450dec4eb99dae995da9af1bc2cc9f76ed669ee2e744f57abba763df3e3f8e");
        }
        stg_signature_free(s);
    }
}
END_TEST

START_TEST(test_upstream_not_verified)
{
    /* without the command line's ignore path, ignore-me is a file the 1.0.1 signature lacks */
    stg_signature *s = check_vector("v1.0.1-elliptic-key", "v1.0.1-elliptic-key/model.sig", true,
                                    NULL);
    ck_assert(!stg_signature_verified(s));
    ck_assert_uint_eq(count_code(s, STG_SIGNED_FILE_EXTRA), 1);
    ck_assert_str_eq(stg_signature_finding_at(s, 0)->file, "ignore-me");
    stg_signature_free(s);
    /* v0.2's signature verifies (its PAE form), its v0.1 predicate is not verified */
    s = check_vector("v0.2.0-certificate", "v0.2.0-certificate/model.sig", false, NULL);
    ck_assert(!stg_signature_verified(s));
    ck_assert_msg(stg_signature_finding_count(s) == 1 &&
                      count_code(s, STG_SIGNATURE_UNSUPPORTED) == 1,
                  "%s", describe(s));
    stg_signature_free(s);
    /* keyless: unsupported, whatever the trust material */
    s = check_vector("v1.1.0-sigstore", "v1.1.0-sigstore/model.sig", true, NULL);
    ck_assert(!stg_signature_verified(s));
    ck_assert_int_eq(stg_signature_method_of(s), STG_SIGNATURE_METHOD_KEYLESS);
    ck_assert_msg(count_code(s, STG_SIGNATURE_UNSUPPORTED) == 1, "%s", describe(s));
    stg_signature_free(s);
    /* a key bundle checked with a chain, and the other way round */
    s = check_vector("v1.1.0-elliptic-key", "v1.1.0-elliptic-key/model.sig", false, NULL);
    ck_assert(!stg_signature_verified(s));
    ck_assert_uint_eq(count_code(s, STG_SIGNATURE_UNTRUSTED), 1);
    stg_signature_free(s);
    s = check_vector("v1.1.0-certificate", "v1.1.0-certificate/model.sig", true, NULL);
    ck_assert_uint_eq(count_code(s, STG_SIGNATURE_UNTRUSTED), 1);
    stg_signature_free(s);
}
END_TEST

/* The ignore rule: a path-component prefix from the model root, normalised like PurePosixPath. */
START_TEST(test_ignores)
{
    stg_sig_ignores ig;
    memset(&ig, 0, sizeof ig);
    const char *entries[] = {".git", "./logs/", "a//b", "../up", "/abs", "model.sig"};
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        ck_assert(stg_sig_ignores_add(&ig, (const uint8_t *)entries[i], strlen(entries[i])));
    }
    for (int sealed = 0; sealed < 2; sealed++) {
        if (sealed) {
            stg_sig_ignores_seal(&ig);
        }
        ck_assert(stg_sig_ignored(&ig, ".git", 4));
        ck_assert(stg_sig_ignored(&ig, ".git/HEAD", 9));
        ck_assert(!stg_sig_ignored(&ig, "sub/.git/HEAD", 13)); /* the root's only */
        ck_assert(!stg_sig_ignored(&ig, ".gitx", 5));
        ck_assert(stg_sig_ignored(&ig, "logs/x/y", 8));
        ck_assert(stg_sig_ignored(&ig, "a/b/c", 5));
        ck_assert(!stg_sig_ignored(&ig, "a", 1));
        ck_assert(!stg_sig_ignored(&ig, "model.sig2", 10));
        ck_assert(stg_sig_ignored(&ig, "model.sig", 9));
        ck_assert(!stg_sig_ignored(&ig, "abs", 3)); /* "/abs" names nothing inside */
        ck_assert(!stg_sig_ignored(&ig, "up", 2));
    }
    ck_assert_uint_eq(ig.count, 4);
    ck_assert(!ig.covers_all);
    ck_assert(stg_sig_ignores_add(&ig, (const uint8_t *)"./", 2));
    ck_assert(ig.covers_all && stg_sig_ignored(&ig, "anything", 8));
    stg_sig_ignores_free(&ig);
}
END_TEST

START_TEST(test_names_canonical)
{
    static const struct {
        const char *name;
        bool ok;
    } cases[] = {
        {".", true},     {"a", true},     {"a/b.json", true}, {"", false},      {"/a", false},
        {"a/", false},   {"a//b", false}, {"./a", false},     {"a/./b", false}, {"../a", false},
        {"a/..", false}, {"..", false},   {"...", true},      {".a/.b", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_msg(stg_sig_name_canonical((const uint8_t *)cases[i].name,
                                             strlen(cases[i].name)) == cases[i].ok,
                      "%s", cases[i].name);
    }
    ck_assert(!stg_sig_name_canonical((const uint8_t *)"a\0b", 3));
}
END_TEST

/* The file table: extra, modified, missing, a repeat, a name that is not canonical. */
START_TEST(test_manifest)
{
    stg_sig_resource res[4];
    memset(res, 0, sizeof res);
    const char *names[] = {"b", "a/x", "b", "a//y"};
    for (int i = 0; i < 4; i++) {
        res[i].name = (const uint8_t *)names[i];
        res[i].name_len = strlen(names[i]);
        res[i].digest[0] = (uint8_t)i;
        res[i].offset = (size_t)(10 * i);
    }
    stg_sig_statement st;
    memset(&st, 0, sizeof st);
    st.resources = res;
    st.resource_count = 4;
    stg_sig_findings f;
    memset(&f, 0, sizeof f);
    stg_sig_manifest m;
    ck_assert_int_eq(stg_sig_manifest_init(&m, &st, &f), STG_OK);
    ck_assert_uint_eq(f.count, 2); /* a//y not canonical (offset 30), b twice (the repeat: 20) */
    ck_assert_int_eq(f.items[0].code, STG_SIGNATURE_STATEMENT_INVALID);
    ck_assert_uint_eq(f.items[0].offset, 30);
    ck_assert_uint_eq(f.items[1].offset, 20);
    ck_assert_str_eq(f.items[1].file, "b");
    uint8_t d[32] = {0};
    d[0] = 1;
    stg_sig_manifest_file(&m, "a/x", 3, d, &f); /* same digest: nothing */
    ck_assert_uint_eq(f.count, 2);
    stg_sig_manifest_file(&m, "b", 1, d, &f); /* first b has digest 0 */
    ck_assert_int_eq(f.items[2].code, STG_SIGNED_FILE_MODIFIED);
    stg_sig_manifest_file(&m, "c", 1, d, &f);
    ck_assert_int_eq(f.items[3].code, STG_SIGNED_FILE_EXTRA);
    ck_assert_str_eq(f.items[3].file, "c");
    stg_sig_manifest_finish(&m, &f);
    ck_assert_uint_eq(f.count, 5); /* a//y missing; b once */
    ck_assert_int_eq(f.items[4].code, STG_SIGNED_FILE_MISSING);
    ck_assert_str_eq(f.items[4].file, "a//y");
    stg_sig_manifest_free(&m);
    stg_sig_findings_free(&f);
}
END_TEST

static char *copy_vector(const char *name)
{
    char *dir = tu_tempdir();
    char cmd[1024];
    char *src = up(name);
    snprintf(cmd, sizeof cmd, "cp -r '%s/.' '%s/'", src, dir);
    ck_assert_int_eq(system(cmd), 0);
    free(src);
    return dir;
}

static stg_signature *open_key(const char *dir, stg_signature_options *o)
{
    char *key = up("keys/signing-key-pub.pem");
    o->public_key = key;
    stg_signature *s = NULL;
    ck_assert_int_eq(stg_signature_open(dir, NULL, o, &s), STG_OK);
    free(key);
    o->public_key = NULL;
    return s;
}

/* Files given one by one (the scan's way), the limits, and each code's trigger. */
START_TEST(test_add_file_api)
{
    char *dir = copy_vector("v1.1.0-elliptic-key");
    stg_signature_options o;
    stg_signature_options_default(&o);
    stg_signature *s = open_key(dir, &o);
    ck_assert(stg_signature_ignores(s, "ignore-me") && stg_signature_ignores(s, "model.sig"));
    ck_assert(!stg_signature_ignores(s, "signme-1"));
    const char *d1 = "bc9a717db6064a32cbe9eae6fc40651dd6d36ef1757183f590eff2b1765d7ebc";
    const char *d2 = "32DCB1F8E1AE52D5963E56A6BA06AB58B424C15ED2A6B70D2FECA1D089370028";
    ck_assert_int_eq(stg_signature_add_file(s, "signme-1", STG_SIGNATURE_ENTRY_FILE, d1), STG_OK);
    ck_assert_int_eq(stg_signature_add_file(s, "./x", STG_SIGNATURE_ENTRY_FILE, d1), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_signature_add_file(s, "x", STG_SIGNATURE_ENTRY_FILE, "zz"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_signature_add_file(s, "ignore-me", STG_SIGNATURE_ENTRY_UNHASHED, NULL),
                     STG_OK); /* ignored: not counted */
    ck_assert_int_eq(stg_signature_add_file(s, "signme-2", STG_SIGNATURE_ENTRY_FILE, d2), STG_OK);
    ck_assert_int_eq(stg_signature_finish(s), STG_OK);
    ck_assert_msg(stg_signature_verified(s), "%s", describe(s));
    ck_assert_uint_eq(stg_signature_file_count(s), 2);
    ck_assert_int_eq(stg_signature_add_file(s, "y", STG_SIGNATURE_ENTRY_FILE, d1), STG_E_STATE);
    stg_signature_free(s);
    /* a link given as such is not hashed unless links are allowed */
    s = open_key(dir, &o);
    ck_assert_int_eq(stg_signature_add_file(s, "signme-1", STG_SIGNATURE_ENTRY_LINK, d1), STG_OK);
    ck_assert_int_eq(stg_signature_add_file(s, "signme-2", STG_SIGNATURE_ENTRY_FILE, d2), STG_OK);
    stg_signature_finish(s);
    ck_assert_uint_eq(count_code(s, STG_SIGNED_FILE_UNVERIFIABLE), 1);
    ck_assert_uint_eq(count_code(s, STG_SIGNED_FILE_MISSING), 0);
    stg_signature_free(s);
    o.allow_symlinks = true;
    s = open_key(dir, &o);
    ck_assert_int_eq(stg_signature_add_file(s, "signme-1", STG_SIGNATURE_ENTRY_LINK, d1), STG_OK);
    ck_assert_int_eq(stg_signature_add_file(s, "signme-2", STG_SIGNATURE_ENTRY_FILE, d2), STG_OK);
    stg_signature_finish(s);
    ck_assert(stg_signature_verified(s));
    stg_signature_free(s);
    o.allow_symlinks = false;
    /* max_files: 2 files at 2 verify, at 1 the check is incomplete */
    for (uint64_t max = 1; max <= 2; max++) {
        o.max_files = max;
        s = open_key(dir, &o);
        ck_assert_int_eq(stg_signature_hash_model(s), STG_OK);
        stg_signature_finish(s);
        ck_assert_msg(stg_signature_verified(s) == (max == 2), "%s", describe(s));
        ck_assert((count_code(s, STG_SIGNATURE_INCOMPLETE) > 0) == (max == 1));
        stg_signature_free(s);
    }
    o.max_files = 0;
    /* a FIFO in the model: unverifiable, never opened */
    char path[1024];
    snprintf(path, sizeof path, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    s = open_key(dir, &o);
    ck_assert_int_eq(stg_signature_hash_model(s), STG_OK);
    stg_signature_finish(s);
    ck_assert_uint_eq(count_code(s, STG_SIGNED_FILE_UNVERIFIABLE), 1);
    ck_assert_str_eq(stg_signature_finding_at(s, 0)->file, "fifo");
    stg_signature_free(s);
    unlink(path);
    /* a bundle that is not one: signature_malformed with its offset; the model is not read */
    snprintf(path, sizeof path, "%s/model.sig", dir);
    ck_assert_int_eq(tu_write_file(path, "{\"mediaType\": 5}", 16), 0);
    s = open_key(dir, &o);
    ck_assert_int_eq(stg_signature_method_of(s), STG_SIGNATURE_METHOD_UNKNOWN);
    ck_assert_uint_eq(stg_signature_finding_count(s), 1);
    ck_assert_int_eq(stg_signature_finding_at(s, 0)->code, STG_SIGNATURE_MALFORMED);
    ck_assert_uint_eq(stg_signature_finding_at(s, 0)->offset, 14); /* the 5 */
    stg_signature_hash_model(s);
    stg_signature_finish(s);
    ck_assert(!stg_signature_verified(s));
    stg_signature_free(s);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(test_bad_arguments)
{
    stg_signature_options o;
    stg_signature_options_default(&o);
    stg_signature *s = (stg_signature *)1;
    char *dir = up("v1.1.0-elliptic-key");
    ck_assert_int_eq(stg_signature_open(dir, NULL, &o, &s), STG_E_BAD_ARG); /* no trust */
    ck_assert(s == NULL);
    ck_assert_int_eq(stg_signature_open(NULL, NULL, &o, &s), STG_E_BAD_ARG);
    o.public_key = "/nonexistent.pem";
    ck_assert_int_eq(stg_signature_open(dir, NULL, &o, &s), STG_E_IO);
    const char *chain[1] = {"x"};
    o.certificate_chain = chain;
    o.certificate_chain_count = 1;
    ck_assert_int_eq(stg_signature_open(dir, NULL, &o, &s), STG_E_BAD_ARG); /* two methods */
    o.certificate_chain_count = 0;
    char *key = up("keys/signing-key-pub.pem");
    o.public_key = key;
    ck_assert_int_eq(stg_signature_open(dir, "/nonexistent.sig", &o, &s), STG_E_IO);
    ck_assert_int_eq(stg_signature_open("/nonexistent", NULL, &o, &s), STG_E_IO);
    char *ca = up("keys/ca-cert.pem");
    o.public_key = ca; /* a certificate, no public key PEM */
    ck_assert_int_eq(stg_signature_open(dir, NULL, &o, &s), STG_E_BAD_ARG);
    o.struct_version = 99;
    ck_assert_int_eq(stg_signature_open(dir, NULL, &o, &s), STG_E_STRUCT_VERSION);
    ck_assert_int_eq(stg_signature_options_init(&o, 99), STG_E_STRUCT_VERSION);
    ck_assert_int_eq(stg_signature_options_init(NULL, STG_STRUCT_VERSION), STG_E_BAD_ARG);
    ck_assert_str_eq(stg_signature_method_name(STG_SIGNATURE_METHOD_KEYLESS), "sigstore");
    ck_assert(!stg_signature_verified(NULL));
    stg_signature_free(NULL);
    free(ca);
    free(key);
    free(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_upstream_verified);
    tcase_add_test(tc, test_upstream_not_verified);
    tcase_add_test(tc, test_ignores);
    tcase_add_test(tc, test_names_canonical);
    tcase_add_test(tc, test_manifest);
    tcase_add_test(tc, test_add_file_api);
    tcase_add_test(tc, test_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
