/* parser/cursor.h: the bounds-checked cursor every parser reads through; a sub-cursor's window
 * and seeking inside it. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "parser/cursor.h"
#include "testutil.h"

START_TEST(test_cursor_window)
{
    static const uint8_t buf[16] = {0};
    stg_cursor c = stg_cur_make(buf, sizeof buf);
    ck_assert_int_eq(stg_cur_skip(&c, 4), STG_OK);
    stg_cursor sub;
    ck_assert_int_eq(stg_cur_sub(&c, 8, &sub), STG_OK);
    ck_assert_uint_eq(sub.begin, 4);
    ck_assert_uint_eq(sub.pos, 4);
    ck_assert_int_eq(stg_cur_seek(&sub, 3), STG_E_TRUNCATED);  /* before its window */
    ck_assert_int_eq(stg_cur_seek(&sub, 13), STG_E_TRUNCATED); /* past it */
    ck_assert_int_eq(stg_cur_seek(&sub, 12), STG_OK);          /* its end */
    ck_assert_int_eq(stg_cur_seek(&sub, 4), STG_OK);           /* its start */
    ck_assert_int_eq(stg_cur_seek(&c, 0), STG_OK);             /* the parent's window is all */
}
END_TEST

static Suite *cursor_suite(void)
{
    Suite *s = suite_create("cursor");
    TCase *tc = tcase_create("cursor");
    tcase_add_test(tc, test_cursor_window);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(cursor_suite());
}
