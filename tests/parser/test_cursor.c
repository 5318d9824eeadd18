/* parser/cursor.h: the bounds-checked cursor every parser reads through; a sub-cursor's window
 * and seeking inside it; the invariant check of the sanitizer and fuzz builds (a corrupted
 * cursor stops the process at its next operation, whichever it is) and its absence elsewhere. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------ the invariant check */

/* The cursors cover the first 16 bytes; the rest keeps the reads of a broken cursor in a build
 * without the check inside the array. */
static const uint8_t bytes[64] = {0};
enum { COVERED = 16 };

/* The cursor every operation below runs on, broken one of three ways. */
static stg_cursor corrupted(int how)
{
    stg_cursor c = stg_cur_make(bytes, COVERED);
    switch (how) {
    case 0: c.pos = c.end + 1; break;                    /* past its end */
    case 1: c.begin = 8, c.pos = 4; break;               /* before its window */
    default: c.base = NULL, c.pos = 0, c.end = 4; break; /* bytes without a base */
    }
    return c;
}

enum { N_CORRUPTIONS = 3, N_OPS = 10 };

/* Runs operation op on c (each reads nothing: a zero-length take where there is a length). */
static void run_op(int op, stg_cursor *c)
{
    const uint8_t *p;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    stg_cursor child;
    switch (op) {
    case 0: (void)stg_cur_avail(c); break;
    case 1: (void)stg_cur_take(c, 0, &p); break;
    case 2: (void)stg_cur_skip(c, 0); break;
    case 3: (void)stg_cur_peek(c, 0, &p); break;
    case 4: (void)stg_cur_u8(c, &u8); break;
    case 5: (void)stg_cur_le16(c, &u16); break;
    case 6: (void)stg_cur_le32(c, &u32); break;
    case 7: (void)stg_cur_le64(c, &u64); break;
    case 8: (void)stg_cur_sub(c, 0, &child); break;
    default: (void)stg_cur_seek(c, c->pos); break;
    }
}

/* How a child process that runs op on a cursor broken `how` ends: its signal, or 0 when it
 * returned. */
static int signal_of_op(int how, int op)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        stg_cursor c = corrupted(how);
        run_op(op, &c);
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
        return WTERMSIG(status);
    }
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    return 0;
}

/* Edge cursors that hold the invariant never trip it: the empty one without a base, pos at
 * begin and at end, a sub-cursor of nothing at the end. */
START_TEST(test_valid_edges_pass)
{
    for (int op = 0; op < N_OPS; op++) {
        stg_cursor none = stg_cur_make(NULL, 0);
        if (op != 1 && op != 3) { /* a pointer into no bytes (NULL + 0) is no pointer */
            run_op(op, &none);
        }
        stg_cursor full = stg_cur_make(bytes, COVERED);
        ck_assert_int_eq(stg_cur_seek(&full, COVERED), STG_OK);
        run_op(op, &full);
        stg_cursor window = stg_cur_make(bytes, COVERED);
        ck_assert_int_eq(stg_cur_skip(&window, 4), STG_OK);
        stg_cursor sub;
        ck_assert_int_eq(stg_cur_sub(&window, 4, &sub), STG_OK);
        run_op(op, &sub);
    }
}
END_TEST

#ifdef STG_CURSOR_CHECKS
/* Sanitizer and fuzz builds: every operation on every kind of broken cursor aborts. */
START_TEST(test_corrupted_cursor_trips_the_check)
{
    for (int how = 0; how < N_CORRUPTIONS; how++) {
        for (int op = 0; op < N_OPS; op++) {
            ck_assert_msg(signal_of_op(how, op) == SIGABRT, "corruption %d, operation %d", how, op);
        }
    }
}
END_TEST
#else
/* Other builds compile the check out: a broken cursor goes unnoticed (what the sanitizer and
 * fuzz builds are for), so no operation may stop on it here. Operations 4-7 read a byte or more:
 * not through a missing base. */
START_TEST(test_check_compiled_out)
{
    for (int how = 0; how < N_CORRUPTIONS; how++) {
        for (int op = 0; op < N_OPS; op++) {
            if (how == 2 && op >= 4 && op <= 7) {
                continue;
            }
            ck_assert_msg(signal_of_op(how, op) == 0, "corruption %d, operation %d", how, op);
        }
    }
}
END_TEST
#endif

static Suite *cursor_suite(void)
{
    Suite *s = suite_create("cursor");
    TCase *tc = tcase_create("cursor");
    tcase_add_test(tc, test_cursor_window);
    tcase_add_test(tc, test_valid_edges_pass);
#ifdef STG_CURSOR_CHECKS
    tcase_add_test(tc, test_corrupted_cursor_trips_the_check);
#else
    tcase_add_test(tc, test_check_compiled_out);
#endif
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(cursor_suite());
}
