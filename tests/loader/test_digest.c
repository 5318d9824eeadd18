/* loader/digest: SHA-256 against the FIPS 180-2 vectors (empty, "abc", the 448-bit message, a
 * million 'a's fed in uneven pieces), empty updates, final resetting the context for the next
 * message, the one-shot form; hex encoding; parsing 64 hex digits in either case and refusing
 * everything else (NULL, wrong lengths, each class of non-hex character in either nibble). */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/digest.h"

static const char EMPTY_HEX[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
static const char ABC_HEX[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
static const char TWO_BLOCK_HEX[] =
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
static const char MILLION_A_HEX[] =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

static void hex_of(const uint8_t d[32], char out[65])
{
    stg_hex_encode(d, 32, out);
}

/* Whether libcrypto is mapped into this process (/proc/self/maps names every mapped file). */
static bool libcrypto_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    bool found = false;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, "/libcrypto.so") != NULL) {
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* libcrypto is loaded on the first digest, not at start-up (loader/evp.h); this test runs
 * first, so even without a fork per test nothing has hashed before it. Near miss: the first
 * digest loads it, and gives the right answer. */
START_TEST(test_libcrypto_loaded_on_first_digest)
{
    ck_assert_msg(!libcrypto_mapped(), "libcrypto is mapped before any digest was asked for");
    uint8_t out[32];
    ck_assert_int_eq(stg_sha256_buffer("abc", 3, out), STG_OK);
    char hex[65];
    stg_hex_encode(out, 32, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert(libcrypto_mapped());
}
END_TEST

START_TEST(test_vectors_incremental)
{
    stg_sha256 *h = NULL;
    ck_assert_int_eq(stg_sha256_new(&h), STG_OK);
    ck_assert_ptr_nonnull(h);
    uint8_t d[32];
    char hex[65];
    /* empty message, with an empty update in between */
    ck_assert_int_eq(stg_sha256_update(h, NULL, 0), STG_OK);
    ck_assert_int_eq(stg_sha256_final(h, d), STG_OK);
    hex_of(d, hex);
    ck_assert_str_eq(hex, EMPTY_HEX);
    /* final reset the context: "abc" in three updates */
    ck_assert_int_eq(stg_sha256_update(h, "a", 1), STG_OK);
    ck_assert_int_eq(stg_sha256_update(h, "b", 1), STG_OK);
    ck_assert_int_eq(stg_sha256_update(h, "", 0), STG_OK);
    ck_assert_int_eq(stg_sha256_update(h, "c", 1), STG_OK);
    ck_assert_int_eq(stg_sha256_final(h, d), STG_OK);
    hex_of(d, hex);
    ck_assert_str_eq(hex, ABC_HEX);
    /* a million 'a's in pieces of 1..97 bytes */
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t n = step < 1000000 - done ? step : 1000000 - done;
        ck_assert_int_eq(stg_sha256_update(h, a + done, n), STG_OK);
        done += n;
        step = step % 97 + 1;
    }
    ck_assert_int_eq(stg_sha256_final(h, d), STG_OK);
    hex_of(d, hex);
    ck_assert_str_eq(hex, MILLION_A_HEX);
    free(a);
    stg_sha256_free(h);
    stg_sha256_free(NULL);
}
END_TEST

START_TEST(test_one_shot)
{
    static const char msg[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    uint8_t d[32];
    char hex[65];
    ck_assert_int_eq(stg_sha256_buffer(msg, sizeof msg - 1, d), STG_OK);
    hex_of(d, hex);
    ck_assert_str_eq(hex, TWO_BLOCK_HEX);
    ck_assert_int_eq(stg_sha256_buffer("", 0, d), STG_OK);
    hex_of(d, hex);
    ck_assert_str_eq(hex, EMPTY_HEX);
}
END_TEST

START_TEST(test_hex_encode)
{
    static const uint8_t in[] = {0x00, 0x0f, 0xa5, 0xff};
    char out[9];
    memset(out, 'x', sizeof out);
    stg_hex_encode(in, sizeof in, out);
    ck_assert_str_eq(out, "000fa5ff");
    stg_hex_encode(in, 0, out);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_parse_hex)
{
    uint8_t d[32], want[32];
    ck_assert(stg_sha256_parse_hex(ABC_HEX, d));
    ck_assert_int_eq(stg_sha256_buffer("abc", 3, want), STG_OK);
    ck_assert(memcmp(d, want, 32) == 0);
    /* upper case and mixed case are the same digest */
    char up[65];
    for (size_t i = 0; i < 64; i++) {
        char c = ABC_HEX[i];
        up[i] = (char)(c >= 'a' && c <= 'f' && i % 3 != 0 ? c - 'a' + 'A' : c);
    }
    up[64] = '\0';
    memset(d, 0, sizeof d);
    ck_assert(stg_sha256_parse_hex(up, d));
    ck_assert(memcmp(d, want, 32) == 0);
    /* not exactly 64 digits */
    ck_assert(!stg_sha256_parse_hex(NULL, d));
    ck_assert(!stg_sha256_parse_hex("", d));
    char s[70];
    memcpy(s, ABC_HEX, 64);
    s[63] = '\0';
    ck_assert(!stg_sha256_parse_hex(s, d));
    memcpy(s, ABC_HEX, 64);
    s[64] = '0';
    s[65] = '\0';
    ck_assert(!stg_sha256_parse_hex(s, d));
    /* one bad character, in a high nibble or a low nibble, of each class around the digit
     * ranges: below '0', between '9' and 'A', between 'F' and 'a', above 'f' */
    static const char bad[] = {' ', '/', ':', '@', 'G', '`', 'g', '~'};
    for (size_t k = 0; k < sizeof bad; k++) {
        for (size_t pos = 10; pos <= 11; pos++) {
            memcpy(s, ABC_HEX, 65);
            s[pos] = bad[k];
            ck_assert_msg(!stg_sha256_parse_hex(s, d), "'%c' at %zu accepted", bad[k], pos);
        }
    }
}
END_TEST

/* Git blob ids as `git hash-object` prints them: SHA-1 of "blob <size>\0" + content, in one go
 * and in pieces; the 40-hex parser and its near misses. */
START_TEST(test_git_blob_id)
{
    static const struct {
        const char *content;
        const char *id;
    } rows[] = {
        {"", "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
        {"abc", "f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f"},
        {"hello world\n", "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint8_t id[20], want[20];
        char hex[41];
        size_t n = strlen(rows[i].content);
        ck_assert_int_eq(stg_git_blob_id_buffer(rows[i].content, n, id), STG_OK);
        stg_hex_encode(id, 20, hex);
        ck_assert_str_eq(hex, rows[i].id);
        stg_git_blob_id *h = NULL;
        ck_assert_int_eq(stg_git_blob_id_new(n, &h), STG_OK);
        for (size_t k = 0; k < n; k++) {
            ck_assert_int_eq(stg_git_blob_id_update(h, rows[i].content + k, 1), STG_OK);
        }
        ck_assert_int_eq(stg_git_blob_id_final(h, id), STG_OK);
        stg_git_blob_id_free(h);
        ck_assert(stg_sha1_parse_hex(rows[i].id, want));
        ck_assert_mem_eq(id, want, 20);
    }
    /* the size is part of the id: the same bytes announced as longer hash differently */
    uint8_t a[20], b[20];
    stg_git_blob_id *h = NULL;
    ck_assert_int_eq(stg_git_blob_id_new(4, &h), STG_OK);
    ck_assert_int_eq(stg_git_blob_id_update(h, "abc", 3), STG_OK);
    ck_assert_int_eq(stg_git_blob_id_final(h, a), STG_OK);
    stg_git_blob_id_free(h);
    ck_assert_int_eq(stg_git_blob_id_buffer("abc", 3, b), STG_OK);
    ck_assert(memcmp(a, b, 20) != 0);
    uint8_t out[20];
    ck_assert(stg_sha1_parse_hex("F2BA8F84AB5C1BCE84A7B441CB1959CFC7093B7F", out));
    ck_assert(!stg_sha1_parse_hex("f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7", out));   /* 39 */
    ck_assert(!stg_sha1_parse_hex("f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f0", out)); /* 41 */
    ck_assert(!stg_sha1_parse_hex("g2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f", out));
    ck_assert(!stg_sha1_parse_hex(NULL, out));
}
END_TEST

static Suite *digest_suite(void)
{
    Suite *s = suite_create("digest");
    TCase *tc = tcase_create("sha256");
    tcase_add_test(tc, test_libcrypto_loaded_on_first_digest); /* first: see its comment */
    tcase_add_test(tc, test_vectors_incremental);
    tcase_add_test(tc, test_one_shot);
    tcase_add_test(tc, test_hex_encode);
    tcase_add_test(tc, test_parse_hex);
    tcase_add_test(tc, test_git_blob_id);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(digest_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
