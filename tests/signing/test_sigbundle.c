/* The signature bundle and statement readers (parser/base64.c, parser/json_tree.c,
 * parser/sigbundle.c): base64 as strict as documented, the bundles model_signing's releases
 * wrote (tests/signing/upstream) read as they are, and every malformed form with its offset. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/base64.h"
#include "parser/json_tree.h"
#include "parser/sigbundle.h"
#include "testutil.h"

START_TEST(test_base64)
{
    static const struct {
        const char *in;
        bool ok;
        const char *out;
        size_t bad;
    } cases[] = {
        {"", true, "", 0},
        {"Zg==", true, "f", 0},
        {"Zm8=", true, "fo", 0},
        {"Zm9v", true, "foo", 0},
        {"Zm9vYg==", true, "foob", 0},
        {"Zh==", false, NULL, 1},     /* unused bits set: a second spelling of "f" */
        {"Zm9=", false, NULL, 2},     /* the same for two bytes */
        {"Zg=", false, NULL, 3},      /* length not a multiple of four */
        {"Zg", false, NULL, 2},       /* padding missing */
        {"Z===", false, NULL, 1},     /* padding too long */
        {"Zg==Zg==", false, NULL, 2}, /* padding before the end */
        {"Zm 9", false, NULL, 2},     /* whitespace */
        {"-_8=", false, NULL, 0},     /* the URL-safe alphabet */
        {"+/8=", true, "\xfb\xff", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t out[16];
        size_t n = 0, bad = 99;
        bool ok = stg_base64_decode((const uint8_t *)cases[i].in, strlen(cases[i].in), out, &n,
                                    &bad);
        ck_assert_msg(ok == cases[i].ok, "%s", cases[i].in);
        if (ok) {
            ck_assert_uint_eq(n, strlen(cases[i].out));
            ck_assert(memcmp(out, cases[i].out, n) == 0);
            char enc[32];
            stg_base64_encode(out, n, enc);
            ck_assert(memcmp(enc, cases[i].in, strlen(cases[i].in)) == 0);
            ck_assert_uint_eq(stg_base64_encoded_len(n), strlen(cases[i].in));
        } else {
            ck_assert_msg(bad == cases[i].bad, "%s: bad %zu", cases[i].in, bad);
        }
    }
}
END_TEST

START_TEST(test_json_tree)
{
    stg_arena a;
    stg_arena_init(&a, 1 << 20);
    stg_jt t;
    size_t err = 0;
    const char *doc = "{\"a\": [1, \"x\\u0041\", true], \"b\": {\"c\": null}}";
    ck_assert_int_eq(stg_jt_parse((const uint8_t *)doc, strlen(doc), 8, 100, &a, &t, &err),
                     STG_JT_OK);
    const stg_jt_node *top = stg_jt_at(&t, 0);
    const stg_jt_node *arr = stg_jt_member(&t, top, "a");
    ck_assert_uint_eq(arr->child_count, 3);
    const stg_jt_node *s = stg_jt_at(&t, stg_jt_at(&t, arr->first_child)->next_sibling);
    ck_assert(stg_jt_str_is(s, "xA"));
    ck_assert(stg_jt_member(&t, top, "zz") == NULL);
    ck_assert(stg_jt_member(&t, arr, "a") == NULL);
    stg_jt_release(&t);
    static const struct {
        const char *doc;
        uint32_t depth;
        size_t nodes;
        stg_jt_status want;
        size_t offset;
    } bad[] = {
        {"{\"a\":1,\"a\":2}", 8, 100, STG_JT_DUPLICATE, 7},
        {"[[[1]]]", 2, 100, STG_JT_DEPTH, 2},
        {"[[1]]", 2, 100, STG_JT_OK, 0}, /* near miss: at the depth */
        {"[1,2,3]", 8, 3, STG_JT_NODES, 5},
        {"[1,2]", 8, 3, STG_JT_OK, 0}, /* near miss: at the count */
        {"{} x", 8, 100, STG_JT_TRAILING, 3},
        {"{\"a\":}", 8, 100, STG_JT_SYNTAX, 5},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stg_jt_status st = stg_jt_parse((const uint8_t *)bad[i].doc, strlen(bad[i].doc),
                                        bad[i].depth, bad[i].nodes, &a, &t, &err);
        ck_assert_msg(st == bad[i].want, "%s: %d", bad[i].doc, (int)st);
        if (st != STG_JT_OK) {
            ck_assert_msg(err == bad[i].offset, "%s: offset %zu", bad[i].doc, err);
        }
        stg_jt_release(&t);
    }
    stg_arena_release(&a);
}
END_TEST

static uint8_t *read_upstream(const char *name, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/signing/upstream/%s/model.sig", name);
    uint8_t *buf = tu_read_file(tu_src(rel), len);
    ck_assert_msg(buf != NULL, "%s", rel);
    return buf;
}

/* Every upstream bundle reads; the statement of each reads too, except the v0.1 predicate. */
START_TEST(test_upstream_bundles)
{
    static const struct {
        const char *name;
        stg_sig_material material;
        size_t certs;
        stg_sig_error statement;
        size_t resources;
        size_t ignores;
    } cases[] = {
        {"v0.2.0-certificate", STG_SIG_MATERIAL_CHAIN, 2, STG_SIG_UNSUPPORTED, 0, 0},
        {"v0.3.1-certificate", STG_SIG_MATERIAL_CHAIN, 2, STG_SIG_OK, 2, 0},
        {"v0.3.1-elliptic-key", STG_SIG_MATERIAL_PUBLIC_KEY, 0, STG_SIG_OK, 1, 0},
        {"v1.0.0-certificate", STG_SIG_MATERIAL_CHAIN, 2, STG_SIG_OK, 2, 0},
        {"v1.0.0-elliptic-key", STG_SIG_MATERIAL_PUBLIC_KEY, 0, STG_SIG_OK, 1, 0},
        {"v1.0.1-certificate", STG_SIG_MATERIAL_CHAIN, 2, STG_SIG_OK, 2, 0},
        {"v1.0.1-elliptic-key", STG_SIG_MATERIAL_PUBLIC_KEY, 0, STG_SIG_OK, 2, 0},
        {"v1.1.0-certificate", STG_SIG_MATERIAL_CHAIN, 2, STG_SIG_OK, 2, 6},
        {"v1.1.0-elliptic-key", STG_SIG_MATERIAL_PUBLIC_KEY, 0, STG_SIG_OK, 2, 6},
        {"v1.1.0-sigstore", STG_SIG_MATERIAL_KEYLESS, 1, STG_SIG_OK, 2, 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = 0;
        uint8_t *buf = read_upstream(cases[i].name, &len);
        stg_arena a;
        stg_arena_init(&a, 1 << 22);
        stg_sig_bundle b;
        stg_sig_problem why;
        stg_sig_error e = stg_sig_bundle_parse(buf, len, &a, &b, &why);
        ck_assert_msg(e == STG_SIG_OK, "%s: %s at %zu", cases[i].name, why.what, why.offset);
        ck_assert_int_eq(b.material, cases[i].material);
        ck_assert_uint_eq(b.cert_count, cases[i].certs);
        ck_assert_uint_eq(b.signature_count, 1);
        ck_assert(b.signature.len >= 64 && b.signature.data[0] == 0x30); /* DER SEQUENCE */
        ck_assert(b.payload_type.len == strlen(STG_SIG_PAYLOAD_TYPE));
        stg_sig_statement st;
        e = stg_sig_statement_parse(b.payload.data, b.payload.len, 1000, &a, &st, &why);
        ck_assert_msg(e == cases[i].statement, "%s: %s at %zu", cases[i].name, why.what,
                      why.offset);
        ck_assert_uint_eq(st.resource_count, cases[i].resources);
        ck_assert_uint_eq(st.ignore_count, cases[i].ignores);
        stg_arena_release(&a);
        free(buf);
    }
}
END_TEST

/* A bundle with its payload given as JSON text (base64-encoded here). */
static char *bundle_with(const char *material, const char *payload, const char *extra)
{
    size_t plen = strlen(payload);
    char *b64 = malloc(stg_base64_encoded_len(plen) + 1);
    stg_base64_encode((const uint8_t *)payload, plen, b64);
    b64[stg_base64_encoded_len(plen)] = 0;
    size_t cap = strlen(b64) + strlen(material) + strlen(extra) + 512;
    char *out = malloc(cap);
    snprintf(out, cap,
             "{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"verificationMaterial\":%s,"
             "\"dsseEnvelope\":{\"payload\":\"%s\",\"payloadType\":\"" STG_SIG_PAYLOAD_TYPE
             "\",\"signatures\":[{\"sig\":\"MEUCIQ==\",\"keyid\":\"\"}]}%s}",
             material, b64, extra);
    free(b64);
    return out;
}

#define KEY_MAT "{\"publicKey\":{\"hint\":\"ab\"},\"tlogEntries\":[]}"

START_TEST(test_bundle_malformed)
{
    static const struct {
        const char *doc;
        stg_sig_error want;
        size_t offset;
        const char *what; /* a word of the message */
    } cases[] = {
        {"", STG_SIG_MALFORMED, 0, "JSON"},
        {"[]", STG_SIG_MALFORMED, 0, "object"},
        {"{\"mediaType\":\"x\"}", STG_SIG_MALFORMED, 13, "v0.3"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"x\":1}", STG_SIG_MALFORMED, 61, "member"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\"}", STG_SIG_MALFORMED, 0,
         "verificationMaterial"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\"}",
         STG_SIG_MALFORMED, 61, "repeated"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"verificationMaterial\":" KEY_MAT
         ",\"messageSignature\":{}}",
         STG_SIG_UNSUPPORTED, 129, "messageSignature"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"verificationMaterial\":{},"
         "\"dsseEnvelope\":{}}",
         STG_SIG_MALFORMED, 84, "exactly one"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"verificationMaterial\":" KEY_MAT
         ",\"dsseEnvelope\":{\"payload\":\"e30\",\"payloadType\":\"x\",\"signatures\":[]}}",
         STG_SIG_MALFORMED, 159, "base64"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"verificationMaterial\":" KEY_MAT
         ",\"dsseEnvelope\":{\"payload\":\"e30=\",\"payloadType\":\"x\",\"signatures\":[]}}",
         STG_SIG_MALFORMED, 193, "signatures"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"verificationMaterial\":" KEY_MAT
         ",\"dsseEnvelope\":{\"payload\":\"e30=\",\"payloadType\":\"x\",\"signatures\":[{}]}}",
         STG_SIG_MALFORMED, 194, "sig"},
        {"{\"mediaType\":\"" STG_SIG_MEDIA_TYPE "\",\"verificationMaterial\":" KEY_MAT
         ",\"dsseEnvelope\":{\"payload\":\"e30=\",\"payloadType\":\"x\",\"signatures\":"
         "[{\"sig\":\"MEUCIQ==\"}]}}",
         STG_SIG_OK, 0, NULL}, /* near miss: keyid may be absent */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_arena a;
        stg_arena_init(&a, 1 << 20);
        stg_sig_bundle b;
        stg_sig_problem why;
        stg_sig_error e = stg_sig_bundle_parse((const uint8_t *)cases[i].doc, strlen(cases[i].doc),
                                               &a, &b, &why);
        ck_assert_msg(e == cases[i].want, "case %zu: %d (%s)", i, (int)e, why.what);
        if (e != STG_SIG_OK) {
            if (getenv("SHOWOFF"))
                fprintf(stderr, "case %zu: %zu [%.12s]\n", i, why.offset,
                        cases[i].doc + why.offset);
            ck_assert_msg(why.offset == cases[i].offset, "case %zu: offset %zu", i, why.offset);
            ck_assert_msg(strstr(why.what, cases[i].what) != NULL, "case %zu: %s", i, why.what);
        }
        stg_arena_release(&a);
    }
}
END_TEST

#define ST_HEAD "{\"_type\":\"" STG_SIG_STATEMENT_TYPE "\","
#define SUBJ                                               \
    "\"subject\":[{\"name\":\"m\",\"digest\":{\"sha256\":" \
    "\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"}}],"
#define PT "\"predicateType\":\"" STG_SIG_PREDICATE_TYPE "\","
#define SER \
    "\"serialization\":{\"method\":\"files\",\"hash_type\":\"sha256\",\"allow_symlinks\":false}"
#define DIG "\"digest\":\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\""

START_TEST(test_statement_malformed)
{
    static const struct {
        const char *doc;
        stg_sig_error want;
        const char *what;
    } cases[] = {
        {ST_HEAD SUBJ PT "\"predicate\":{" SER ",\"resources\":[]}}", STG_SIG_OK, NULL},
        {"{\"_type\":\"https://in-toto.io/Statement/v0.1\"}", STG_SIG_MALFORMED, "Statement v1"},
        {ST_HEAD SUBJ "\"predicateType\":\"" STG_SIG_PREDICATE_TYPE_V01 "\"}", STG_SIG_UNSUPPORTED,
         "v0.1"},
        {ST_HEAD SUBJ "\"predicateType\":\"x\"}", STG_SIG_MALFORMED, "predicateType"},
        {ST_HEAD "\"subject\":[]," PT "\"predicate\":{}}", STG_SIG_MALFORMED, "one subject"},
        {ST_HEAD "\"subject\":[{\"name\":\"m\",\"digest\":{\"sha256\":"
                 "\"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\"}}]," PT
                 "\"predicate\":{}}",
         STG_SIG_MALFORMED, "lower-case"},
        {ST_HEAD SUBJ PT "\"predicate\":{\"serialization\":{\"method\":\"shards\"}}}",
         STG_SIG_UNSUPPORTED, "shards"},
        {ST_HEAD SUBJ PT "\"predicate\":{\"serialization\":{\"method\":\"x\"}}}", STG_SIG_MALFORMED,
         "method"},
        {ST_HEAD SUBJ PT
         "\"predicate\":{\"serialization\":{\"method\":\"files\",\"hash_type\":\"blake3\"}}}",
         STG_SIG_UNSUPPORTED, "SHA-256"},
        {ST_HEAD SUBJ PT
         "\"predicate\":{\"serialization\":{\"method\":\"files\",\"hash_type\":\"sha256\"}}}",
         STG_SIG_MALFORMED, "allow_symlinks"},
        {ST_HEAD SUBJ PT "\"predicate\":{" SER ",\"resources\":[{\"name\":\"a\",\"algorithm\":"
                         "\"sha256\",\"digest\":\"00\"}]}}",
         STG_SIG_MALFORMED, "64 hex"},
        {ST_HEAD SUBJ PT "\"predicate\":{" SER ",\"resources\":[{\"name\":\"a\",\"algorithm\":"
                         "\"blake2b\"," DIG "}]}}",
         STG_SIG_UNSUPPORTED, "SHA-256"},
        {ST_HEAD SUBJ PT "\"predicate\":{" SER ",\"resources\":[{\"name\":\"a\",\"algorithm\":"
                         "\"sha256\"," DIG "},{\"name\":\"b\",\"algorithm\":\"sha256\"," DIG "}]}}",
         STG_SIG_LIMIT, "max_signature_files"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_arena a;
        stg_arena_init(&a, 1 << 20);
        stg_sig_statement st;
        stg_sig_problem why;
        stg_sig_error e = stg_sig_statement_parse((const uint8_t *)cases[i].doc,
                                                  strlen(cases[i].doc), 1, &a, &st, &why);
        ck_assert_msg(e == cases[i].want, "case %zu: %d (%s)", i, (int)e, why.what);
        if (e != STG_SIG_OK) {
            ck_assert_msg(strstr(why.what, cases[i].what) != NULL, "case %zu: %s", i, why.what);
            ck_assert(why.offset < strlen(cases[i].doc));
        }
        stg_arena_release(&a);
    }
    /* The bundle helper round-trips a statement. */
    char *doc = bundle_with(KEY_MAT, ST_HEAD SUBJ PT "\"predicate\":{" SER ",\"resources\":[]}}",
                            "");
    stg_arena a;
    stg_arena_init(&a, 1 << 20);
    stg_sig_bundle b;
    stg_sig_problem why;
    ck_assert_int_eq(stg_sig_bundle_parse((const uint8_t *)doc, strlen(doc), &a, &b, &why),
                     STG_SIG_OK);
    ck_assert(b.hint.len == 2 && memcmp(b.hint.data, "ab", 2) == 0);
    stg_arena_release(&a);
    free(doc);
}
END_TEST

/* A small arena budget turns into STG_SIG_MEMORY, never a wrong success. */
START_TEST(test_memory_budget)
{
    size_t len = 0;
    uint8_t *buf = read_upstream("v1.1.0-certificate", &len);
    size_t ok_at = 0;
    for (size_t cap = 1024; cap <= (1u << 20) && ok_at == 0; cap *= 2) {
        stg_arena a;
        stg_arena_init(&a, cap);
        stg_sig_bundle b;
        stg_sig_problem why;
        stg_sig_error e = stg_sig_bundle_parse(buf, len, &a, &b, &why);
        ck_assert_msg(e == STG_SIG_OK || e == STG_SIG_MEMORY, "cap %zu: %d", cap, (int)e);
        if (e == STG_SIG_OK) {
            ok_at = cap;
        }
        stg_arena_release(&a);
    }
    ck_assert(ok_at > 1024);
    free(buf);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sigbundle");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_base64);
    tcase_add_test(tc, test_json_tree);
    tcase_add_test(tc, test_upstream_bundles);
    tcase_add_test(tc, test_bundle_malformed);
    tcase_add_test(tc, test_statement_malformed);
    tcase_add_test(tc, test_memory_budget);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
