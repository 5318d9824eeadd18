/* loader/within.h: path containment, the security check behind "links are followed only inside
 * the scan root". Each case runs through both ways (the kernel's openat2 RESOLVE_BENEATH and the
 * real-path comparison, forced one at a time) and through stg_path_within, which combines them:
 * links that escape (relative and absolute), `..`, an absolute link that lands inside, prefix
 * confusion (/root/a vs /root/ab), magic links, dangling links and roots that do not resolve. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/within.h"
#include "testutil.h"

static char *tmp;
static char root[4096], outside[4096];

static const char *at(const char *rel)
{
    static char buf[8][4096];
    static unsigned k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", tmp, rel);
    return b;
}

static void setup(void)
{
    tmp = tu_tempdir();
    ck_assert_ptr_nonnull(tmp);
    snprintf(root, sizeof root, "%s/root", tmp);
    snprintf(outside, sizeof outside, "%s/outside", tmp);
    ck_assert_int_eq(mkdir(root, 0700), 0);
    ck_assert_int_eq(mkdir(outside, 0700), 0);
    ck_assert_int_eq(mkdir(at("root/a"), 0700), 0);
    ck_assert_int_eq(mkdir(at("root/ab"), 0700), 0);
    ck_assert_int_eq(tu_write_file(at("root/a/f"), "x", 1), 0);
    ck_assert_int_eq(tu_write_file(at("root/ab/f"), "x", 1), 0);
    ck_assert_int_eq(tu_write_file(at("outside/f"), "x", 1), 0);
    ck_assert_int_eq(symlink("a/f", at("root/rel_in")), 0);
    ck_assert_int_eq(symlink("../outside", at("root/esc")), 0);
    ck_assert_int_eq(symlink(at("outside/f"), at("root/abs_out")), 0);
    ck_assert_int_eq(symlink(at("root/a/f"), at("root/abs_in")), 0);
    ck_assert_int_eq(symlink("../ab/f", at("root/a/to_ab")), 0);
    ck_assert_int_eq(symlink("..", at("root/a/up")), 0);
    ck_assert_int_eq(symlink("nowhere", at("root/dangling")), 0);
}

static void teardown(void)
{
    tu_rmtree(tmp);
    free(tmp);
}

/* which: 0 stg_path_within, 1 kernel, 2 realpath */
static stg_within run(int which, const char *r, const char *p)
{
    switch (which) {
    case 0: return stg_path_within(r, p);
    case 1: return stg_path_within_kernel(r, p);
    default: return stg_path_within_realpath(r, p);
    }
}

static bool kernel_available(void)
{
    return stg_path_within_kernel(root, at("root/a/f")) != STG_WITHIN_UNSUPPORTED;
}

/* root (NULL: the fixture's root), path, and the answer of each way. K_REFUSE: the kernel says
 * NO where the real paths say YES (an absolute link that lands inside). */
static const struct wcase {
    const char *name;
    const char *root; /* relative to tmp; NULL: "root" */
    const char *path; /* relative to tmp */
    stg_within want_auto, want_kernel, want_real;
} cases[] = {
    {"file inside", NULL, "root/a/f", STG_WITHIN_YES, STG_WITHIN_YES, STG_WITHIN_YES},
    {"the root itself", NULL, "root", STG_WITHIN_YES, STG_WITHIN_YES, STG_WITHIN_YES},
    {"root with a trailing slash", "root/", "root/a/f", STG_WITHIN_YES, STG_WITHIN_YES,
     STG_WITHIN_YES},
    {"dot-dot that comes back", NULL, "root/a/../a/f", STG_WITHIN_YES, STG_WITHIN_YES,
     STG_WITHIN_YES},
    {"dot-dot out of the root", NULL, "root/../outside/f", STG_WITHIN_NO, STG_WITHIN_NO,
     STG_WITHIN_NO},
    {"dot-dot past the root from below", NULL, "root/a/../../outside/f", STG_WITHIN_NO,
     STG_WITHIN_NO, STG_WITHIN_NO},
    {"relative link inside", NULL, "root/rel_in", STG_WITHIN_YES, STG_WITHIN_YES, STG_WITHIN_YES},
    {"relative link out", NULL, "root/esc/f", STG_WITHIN_NO, STG_WITHIN_NO, STG_WITHIN_NO},
    {"absolute link out", NULL, "root/abs_out", STG_WITHIN_NO, STG_WITHIN_NO, STG_WITHIN_NO},
    {"absolute link that lands inside", NULL, "root/abs_in", STG_WITHIN_YES, STG_WITHIN_NO,
     STG_WITHIN_YES},
    {"link to the parent, still inside", NULL, "root/a/up/ab/f", STG_WITHIN_YES, STG_WITHIN_YES,
     STG_WITHIN_YES},
    {"prefix confusion: /root/a vs /root/ab", "root/a", "root/ab/f", STG_WITHIN_NO,
     STG_WITHIN_UNSUPPORTED, STG_WITHIN_NO},
    {"prefix confusion through a link", "root/a", "root/a/to_ab", STG_WITHIN_NO, STG_WITHIN_NO,
     STG_WITHIN_NO},
    {"dangling link", NULL, "root/dangling", STG_WITHIN_PATH_ERROR, STG_WITHIN_PATH_ERROR,
     STG_WITHIN_PATH_ERROR},
    {"missing file", NULL, "root/a/none", STG_WITHIN_PATH_ERROR, STG_WITHIN_PATH_ERROR,
     STG_WITHIN_PATH_ERROR},
    {"root that does not exist", "nope", "nope/f", STG_WITHIN_ROOT_ERROR, STG_WITHIN_UNSUPPORTED,
     STG_WITHIN_ROOT_ERROR},
    {"root that is a file", "root/a/f", "root/a/f", STG_WITHIN_YES, STG_WITHIN_UNSUPPORTED,
     STG_WITHIN_YES},
    {"path not spelled below the root", NULL, "outside/f", STG_WITHIN_NO, STG_WITHIN_UNSUPPORTED,
     STG_WITHIN_NO},
};

START_TEST(test_cases)
{
    const struct wcase *c = &cases[_i];
    const char *r = c->root != NULL ? at(c->root) : root;
    const char *p = at(c->path);
    bool kernel = kernel_available();
    for (int which = 0; which < 3; which++) {
        if (which == 1 && !kernel) {
            continue; /* no openat2 here: the fallback is what runs, checked as which == 2 */
        }
        stg_within want = which == 0 ? c->want_auto : which == 1 ? c->want_kernel : c->want_real;
        if (which == 0 && !kernel) {
            want = c->want_real;
        }
        stg_within got = run(which, r, p);
        ck_assert_msg(got == want, "%s (way %d): got %d, want %d", c->name, which, got, want);
    }
}
END_TEST

START_TEST(test_slash_root_contains_everything)
{
    for (int which = 0; which < 3; which++) {
        stg_within got = run(which, "/", at("root/a/f"));
        if (which == 1 && got == STG_WITHIN_UNSUPPORTED) {
            continue;
        }
        ck_assert_msg(got == STG_WITHIN_YES, "way %d: %d", which, got);
    }
    /* an absolute link: the kernel refuses every one below RESOLVE_BENEATH, the real paths
     * (and so the combined check) find it inside "/" */
    ck_assert_int_eq(stg_path_within("/", at("root/abs_out")), STG_WITHIN_YES);
    ck_assert_int_eq(stg_path_within_realpath("/", at("root/abs_out")), STG_WITHIN_YES);
}
END_TEST

/* A magic link (/proc/self/root) is refused by the kernel way even though realpath() reads it
 * as text; the combined check never calls it inside, whichever way runs. */
START_TEST(test_magic_link)
{
#ifdef __linux__
    ck_assert_msg(access("/proc/self/root", F_OK) == 0, "no /proc: the magic link is missing");
#else
    if (access("/proc/self/root", F_OK) != 0) {
        return; /* no procfs magic links on this system: nothing to refuse */
    }
#endif
    if (kernel_available()) {
        errno = 0;
        ck_assert_int_eq(stg_path_within_kernel("/proc/self", "/proc/self/root/tmp"),
                         STG_WITHIN_NO);
        ck_assert_int_eq(errno, ELOOP);
    }
    ck_assert_int_eq(stg_path_within("/proc/self", "/proc/self/root/tmp"), STG_WITHIN_NO);
    /* a root through /proc/self/root: the link is in the root's own name, not below it */
    char r[4200];
    snprintf(r, sizeof r, "/proc/self/root%s", root);
    ck_assert_int_eq(stg_path_within(r, at("root/a/f")), STG_WITHIN_YES);
}
END_TEST

START_TEST(test_inside_strings)
{
    ck_assert(stg_path_inside("/a/b", "/a"));
    ck_assert(stg_path_inside("/a", "/a"));
    ck_assert(!stg_path_inside("/ab", "/a"));
    ck_assert(!stg_path_inside("/a", "/a/b"));
    ck_assert(stg_path_inside("/anything", "/"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("within");
    TCase *tc = tcase_create("within");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_cases, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_slash_root_contains_everything);
    tcase_add_test(tc, test_magic_link);
    tcase_add_test(tc, test_inside_strings);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
