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

static Suite *suite(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_upstream_verified);
    tcase_add_test(tc, test_upstream_not_verified);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
