/* parser/util.h: checked u64 arithmetic at the edges (N and N + 1 past UINT64_MAX) and explicit
 * little-/big-endian decoding, which must not depend on the host's byte order or alignment. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "parser/util.h"

START_TEST(test_add_u64)
{
    uint64_t r = 0;
    ck_assert(!stg_add_u64(0, 0, &r));
    ck_assert_uint_eq(r, 0);
    ck_assert(!stg_add_u64(UINT64_MAX - 5, 5, &r));
    ck_assert_uint_eq(r, UINT64_MAX);
    ck_assert(stg_add_u64(UINT64_MAX - 5, 6, &r));
    ck_assert(stg_add_u64(UINT64_MAX, UINT64_MAX, &r));
    ck_assert(!stg_add_u64(1ull << 63, (1ull << 63) - 1, &r));
    ck_assert_uint_eq(r, UINT64_MAX);
}
END_TEST

START_TEST(test_mul_u64)
{
    uint64_t r = 0;
    ck_assert(!stg_mul_u64(UINT64_MAX, 1, &r));
    ck_assert_uint_eq(r, UINT64_MAX);
    ck_assert(!stg_mul_u64(UINT64_MAX, 0, &r));
    ck_assert_uint_eq(r, 0);
    ck_assert(!stg_mul_u64(4294967295ull, 4294967297ull, &r)); /* (2^32-1)(2^32+1) = 2^64-1 */
    ck_assert_uint_eq(r, UINT64_MAX);
    ck_assert(stg_mul_u64(4294967296ull, 4294967296ull, &r)); /* 2^64 */
    ck_assert(stg_mul_u64(UINT64_MAX / 3 + 1, 3, &r));
    ck_assert(!stg_mul_u64(UINT64_MAX / 3, 3, &r));
    ck_assert_uint_eq(r, UINT64_MAX);
}
END_TEST

START_TEST(test_decode)
{
    /* one spare byte in front so the multi-byte reads are unaligned */
    static const uint8_t b[] = {0xAA, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88, 0xFF};
    ck_assert_uint_eq(stg_le16(b + 1), 0x0201u);
    ck_assert_uint_eq(stg_le16(b + 8), 0xFF88u);
    ck_assert_uint_eq(stg_le32(b + 1), 0x04030201u);
    ck_assert_uint_eq(stg_le32(b + 6), 0xFF880706u);
    ck_assert_uint_eq(stg_le64(b + 1), 0x8807060504030201ull);
    ck_assert_uint_eq(stg_le64(b + 2), 0xFF88070605040302ull);
    ck_assert_uint_eq(stg_be32(b + 1), 0x01020304u);
    ck_assert_uint_eq(stg_be32(b + 6), 0x060788FFu);
    static const uint8_t ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    ck_assert_uint_eq(stg_le64(ones), UINT64_MAX);
    ck_assert_uint_eq(stg_le16(ones), 0xFFFFu);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("util");
    tcase_add_test(tc, test_add_u64);
    tcase_add_test(tc, test_mul_u64);
    tcase_add_test(tc, test_decode);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
