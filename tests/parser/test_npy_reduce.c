/* parser/npy_reduce.h: numpy.dtype reduce strings ("f8", "U5"...) as numpy reads them: fixed
 * and flexible kinds, sizes numpy has and has not, and counts at the C int edge. The
 * differential test against numpy itself is tests/differential/npy_reduce_differential.py. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "parser/npy_reduce.h"
#include "testutil.h"

#define B(lit) (const uint8_t *)(lit), sizeof(lit) - 1

START_TEST(test_npy_reduce_strings)
{
    uint64_t size = 0;
    bool object = false;
    ck_assert(stg_npy_reduce_fixed(B("f8"), &size, &object));
    ck_assert_uint_eq(size, 8);
    ck_assert(!object);
    ck_assert(stg_npy_reduce_fixed(B("c16"), &size, &object));
    ck_assert_uint_eq(size, 16);
    ck_assert(stg_npy_reduce_fixed(B("O8"), &size, &object));
    ck_assert(object);
    ck_assert(!stg_npy_reduce_fixed(B("f3"), &size, &object)); /* no such size */
    ck_assert(!stg_npy_reduce_fixed(B("S8"), &size, &object)); /* flexible */
    ck_assert(!stg_npy_reduce_fixed(B("\0"
                                      "8"),
                                    &size, &object)); /* a NUL is no kind */
    ck_assert(!stg_npy_reduce_fixed(B("f"), &size, &object));
    ck_assert(stg_npy_reduce_fixed(B("c32"), &size, &object)); /* numpy's complex256 */
    ck_assert_uint_eq(size, 32);
    ck_assert(!stg_npy_reduce_fixed(B("i16"), &size, &object)); /* numpy has no int128 */
    ck_assert(!stg_npy_reduce_fixed(B("c4"), &size, &object));
    uint8_t kind = 0;
    uint64_t count = 0;
    ck_assert(stg_npy_reduce_flexible(B("U5"), &kind, &count));
    ck_assert_int_eq(kind, 'U');
    ck_assert_uint_eq(count, 5);
    ck_assert(!stg_npy_reduce_flexible(B("U5x"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("f5"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("V123456789012"), &kind, &count)); /* 13 bytes */
    /* numpy keeps the item size in a C int: a larger one wraps there, so none is agreed on */
    ck_assert(stg_npy_reduce_flexible(B("S2147483647"), &kind, &count));
    ck_assert_uint_eq(count, 2147483647u);
    ck_assert(!stg_npy_reduce_flexible(B("S2147483648"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("S4294967297"), &kind, &count)); /* numpy: 1 byte */
    ck_assert(stg_npy_reduce_flexible(B("U536870911"), &kind, &count));
    ck_assert(!stg_npy_reduce_flexible(B("U536870912"), &kind, &count)); /* x 4 wraps */
    ck_assert(!stg_npy_reduce_flexible(B("S+5"), &kind, &count)); /* numpy's strtol takes it */
}
END_TEST

static Suite *npy_reduce_suite(void)
{
    Suite *s = suite_create("npy_reduce");
    TCase *tc = tcase_create("npy_reduce");
    tcase_add_test(tc, test_npy_reduce_strings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(npy_reduce_suite());
}
