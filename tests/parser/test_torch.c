/* parser/torch.h: legacy torch framing: the magic number pickle in every protocol's spelling,
 * a storage's element count record, and the PyTorch 0.1 tensor record, each with near misses. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "parser/cursor.h"
#include "parser/torch.h"
#include "testutil.h"

#define B(lit) (const uint8_t *)(lit), sizeof(lit) - 1

START_TEST(test_torch_legacy_magic)
{
    ck_assert(
        stg_torch_legacy_magic(B("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")));
    ck_assert(stg_torch_legacy_magic(
        B("\x80\x04\x95\x0d\0\0\0\0\0\0\0\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")));
    ck_assert(stg_torch_legacy_magic(B("L119547037146038801333356L\n.")));
    /* near misses: protocol 1 with LONG1, one magic byte off, cut short */
    ck_assert(
        !stg_torch_legacy_magic(B("\x80\x01\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")));
    ck_assert(
        !stg_torch_legacy_magic(B("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x18.")));
    ck_assert(
        !stg_torch_legacy_magic(B("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")));
    ck_assert(!stg_torch_legacy_magic(NULL, 0));
}
END_TEST

START_TEST(test_torch_storage_record)
{
    /* count 3, 4-byte elements: 12 bytes follow */
    static const uint8_t rec[8 + 12 + 1] = {3};
    stg_cursor c = stg_cur_make(rec, sizeof rec);
    uint64_t bytes = 0;
    ck_assert_int_eq(stg_torch_storage_record(&c, 4, &bytes), STG_OK);
    ck_assert_uint_eq(bytes, 12);
    ck_assert_uint_eq(c.pos, 8);
    /* 8-byte elements would need 24: past the end */
    c = stg_cur_make(rec, sizeof rec);
    ck_assert_int_eq(stg_torch_storage_record(&c, 8, &bytes), STG_E_INT_OVERFLOW);
    /* a count that wraps the product */
    static const uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    c = stg_cur_make(huge, sizeof huge);
    ck_assert_int_eq(stg_torch_storage_record(&c, 2, &bytes), STG_E_INT_OVERFLOW);
    c = stg_cur_make(rec, 7);
    ck_assert_int_eq(stg_torch_storage_record(&c, 1, &bytes), STG_E_TRUNCATED);
}
END_TEST

START_TEST(test_torch01_tensor_record)
{
    /* ndim 2: 4 + 4 + 2 x 16 + 8 = 48 bytes */
    static const uint8_t rec[48] = {2};
    stg_cursor c = stg_cur_make(rec, sizeof rec);
    ck_assert(stg_torch01_tensor_record(&c));
    ck_assert_uint_eq(c.pos, 48);
    c = stg_cur_make(rec, 47); /* one byte short: unchanged */
    ck_assert(!stg_torch01_tensor_record(&c));
    ck_assert_uint_eq(c.pos, 0);
    static const uint8_t many[4 + 4 + 65 * 16 + 8] = {65}; /* ndim past the cap */
    c = stg_cur_make(many, sizeof many);
    ck_assert(!stg_torch01_tensor_record(&c));
}
END_TEST

static Suite *torch_suite(void)
{
    Suite *s = suite_create("torch");
    TCase *tc = tcase_create("torch");
    tcase_add_test(tc, test_torch_legacy_magic);
    tcase_add_test(tc, test_torch_storage_record);
    tcase_add_test(tc, test_torch01_tensor_record);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(torch_suite());
}
