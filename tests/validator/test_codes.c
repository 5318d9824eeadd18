/* The code table (validator/codes.def) through the public API, and docs/findings.md against it:
 * - every code in use has a name, a one-sentence description and a default severity per
 *   profile; numbers not in use have none (and fail closed: error);
 * - every row of docs/findings.md's code tables (`| code | severity | meaning |`) names a code
 *   in use, once, with the table's severities ("error", or "error / warning" for strict /
 *   compat, then any explanation), and every code in use has a row;
 * - the checker itself finds a wrong severity, a missing, a repeated and an unknown row. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"

START_TEST(test_table)
{
    size_t in_use = 0;
    for (int n = 1; n <= STG_CODE_MAX; n++) {
        stg_code c = (stg_code)n;
        const char *name = stg_code_name(c);
        const char *desc = stg_code_description(c);
        if (name == NULL) {
            ck_assert_msg(desc == NULL, "code %d: a description but no name", n);
            ck_assert_int_eq(stg_code_severity(c, STG_PROFILE_STRICT), STG_SEV_ERROR);
            ck_assert_int_eq(stg_code_severity(c, STG_PROFILE_COMPAT), STG_SEV_ERROR);
            continue;
        }
        in_use++;
        ck_assert_msg(desc != NULL, "%s: no description", name);
        size_t dl = strlen(desc);
        ck_assert_msg(dl > 10 && dl < 200 && desc[dl - 1] == '.' && strchr(desc, '\n') == NULL,
                      "%s: the description is not one sentence: %s", name, desc);
        stg_severity s = stg_code_severity(c, STG_PROFILE_STRICT);
        stg_severity k = stg_code_severity(c, STG_PROFILE_COMPAT);
        ck_assert_int_le(s, STG_SEV_CRITICAL);
        ck_assert_int_le(k, STG_SEV_CRITICAL);
        /* compat only ever relaxes strict */
        ck_assert_msg(k <= s, "%s: compat is more severe than strict", name);
        /* a profile value outside the enum is strict */
        ck_assert_int_eq(stg_code_severity(c, (stg_profile)7), s);
    }
    ck_assert_uint_ge(in_use, 65);
    ck_assert_ptr_null(stg_code_description((stg_code)0));
    ck_assert_ptr_null(stg_code_description((stg_code)(STG_CODE_MAX + 1)));
    ck_assert_int_eq(stg_code_severity((stg_code)-1, STG_PROFILE_COMPAT), STG_SEV_ERROR);
    ck_assert_str_eq(stg_code_description(STG_HEADER_LENGTH_INVALID), "The header length is 0.");
    ck_assert_int_eq(stg_code_severity(STG_PICKLE_GLOBAL_DANGEROUS, STG_PROFILE_COMPAT),
                     STG_SEV_CRITICAL);
    ck_assert_int_eq(stg_code_severity(STG_POLYGLOT_ZIP, STG_PROFILE_STRICT), STG_SEV_ERROR);
    ck_assert_int_eq(stg_code_severity(STG_POLYGLOT_ZIP, STG_PROFILE_COMPAT), STG_SEV_WARNING);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* docs/findings.md */

static int severity_word(const char *s, size_t n, stg_severity *out)
{
    static const char *const words[] = {"info", "warning", "error", "critical"};
    for (int i = 0; i < 4; i++) {
        if (strlen(words[i]) == n && memcmp(s, words[i], n) == 0) {
            *out = (stg_severity)i;
            return 0;
        }
    }
    return -1;
}

static size_t word_len(const char *s)
{
    size_t n = 0;
    while (s[n] >= 'a' && s[n] <= 'z') {
        n++;
    }
    return n;
}

/* Checks one severity cell ("error", "error / warning (why)") against the table. */
static int check_severity(const char *cell, stg_code c, const char *name, char *why, size_t wl)
{
    stg_severity strict, compat;
    size_t n = word_len(cell);
    if (severity_word(cell, n, &strict) != 0) {
        snprintf(why, wl, "%s: severity cell does not start with a severity", name);
        return 1;
    }
    compat = strict;
    if (strncmp(cell + n, " / ", 3) == 0) {
        const char *second = cell + n + 3;
        if (severity_word(second, word_len(second), &compat) != 0) {
            snprintf(why, wl, "%s: no compat severity after '/'", name);
            return 1;
        }
    }
    if (strict != stg_code_severity(c, STG_PROFILE_STRICT) ||
        compat != stg_code_severity(c, STG_PROFILE_COMPAT)) {
        snprintf(why, wl, "%s: docs/findings.md says %s / %s, the table %s / %s", name,
                 stg_severity_name(strict), stg_severity_name(compat),
                 stg_severity_name(stg_code_severity(c, STG_PROFILE_STRICT)),
                 stg_severity_name(stg_code_severity(c, STG_PROFILE_COMPAT)));
        return 1;
    }
    return 0;
}

static stg_code code_named(const char *name, size_t n)
{
    for (int i = 1; i <= STG_CODE_MAX; i++) {
        const char *cn = stg_code_name((stg_code)i);
        if (cn != NULL && strlen(cn) == n && memcmp(cn, name, n) == 0) {
            return (stg_code)i;
        }
    }
    return (stg_code)0;
}

/* Number of problems of doc (NUL-terminated) against the table; the last one in why. */
static int check_doc(char *doc, char *why, size_t wl)
{
    int problems = 0;
    int rows[STG_CODE_MAX + 1] = {0};
    bool in_table = false;
    why[0] = '\0';
    for (char *line = strtok(doc, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strncmp(line, "| code | severity |", 19) == 0) {
            in_table = true;
            continue;
        }
        if (line[0] != '|') {
            in_table = false;
            continue;
        }
        if (!in_table || strncmp(line, "|---", 4) == 0) {
            continue;
        }
        /* | `name` | severity | meaning | */
        char *name = strchr(line, '`');
        char *end = name != NULL ? strchr(name + 1, '`') : NULL;
        char *cell = end != NULL ? strstr(end, "| ") : NULL;
        if (cell == NULL) {
            snprintf(why, wl, "a code table row without `code` | severity: %.40s", line);
            problems++;
            continue;
        }
        *end = '\0';
        stg_code c = code_named(name + 1, strlen(name + 1));
        if (c == 0) {
            snprintf(why, wl, "%s: not a code in use", name + 1);
            problems++;
            continue;
        }
        if (rows[c]++ > 0) {
            snprintf(why, wl, "%s: listed twice", name + 1);
            problems++;
            continue;
        }
        problems += check_severity(cell + 2, c, name + 1, why, wl);
    }
    for (int i = 1; i <= STG_CODE_MAX; i++) {
        if (stg_code_name((stg_code)i) != NULL && rows[i] == 0) {
            snprintf(why, wl, "%s: no row in docs/findings.md", stg_code_name((stg_code)i));
            problems++;
        }
    }
    return problems;
}

static char *read_doc(void)
{
    size_t len = 0;
    uint8_t *buf = tu_read_file(tu_src("docs/findings.md"), &len);
    ck_assert_ptr_nonnull(buf);
    char *doc = malloc(len + 1);
    ck_assert_ptr_nonnull(doc);
    memcpy(doc, buf, len);
    doc[len] = '\0';
    free(buf);
    return doc;
}

START_TEST(test_findings_md)
{
    char *doc = read_doc();
    char why[256];
    int problems = check_doc(doc, why, sizeof why);
    ck_assert_msg(problems == 0, "%d problem(s) in docs/findings.md, e.g. %s", problems, why);
    free(doc);
}
END_TEST

/* Edits the real document: replaces the first `from` by `to` (NULL: the whole line of `from` is
 * removed; "DUP": the line is repeated) and returns the problems found. */
static int check_edited(const char *from, const char *to, char *why, size_t wl)
{
    char *doc = read_doc();
    char *at = strstr(doc, from);
    ck_assert_ptr_nonnull(at);
    size_t dl = strlen(doc);
    char *ed = malloc(2 * dl + 64);
    ck_assert_ptr_nonnull(ed);
    char *line = at;
    while (line > doc && line[-1] != '\n') {
        line--;
    }
    char *eol = strchr(at, '\n');
    ck_assert_ptr_nonnull(eol);
    if (to == NULL) {
        snprintf(ed, 2 * dl + 64, "%.*s%s", (int)(line - doc), doc, eol + 1);
    } else if (strcmp(to, "DUP") == 0) {
        snprintf(ed, 2 * dl + 64, "%.*s%s", (int)(eol + 1 - doc), doc, line);
    } else {
        snprintf(ed, 2 * dl + 64, "%.*s%s%s", (int)(at - doc), doc, to, at + strlen(from));
    }
    int problems = check_doc(ed, why, wl);
    free(ed);
    free(doc);
    return problems;
}

START_TEST(test_findings_md_checker)
{
    char why[256];
    ck_assert_int_eq(check_edited("| `file_too_small` | error |", "| `file_too_small` | warning |",
                                  why, sizeof why),
                     1);
    ck_assert_ptr_nonnull(strstr(why, "file_too_small: docs/findings.md says warning / warning"));
    /* strict / compat: a compat severity that differs from the table */
    ck_assert_int_eq(check_edited("| `polyglot_zip` | error / warning |",
                                  "| `polyglot_zip` | error / error |", why, sizeof why),
                     1);
    ck_assert_ptr_nonnull(strstr(why, "polyglot_zip"));
    ck_assert_int_eq(check_edited("| `polyglot_zip` | error / warning |",
                                  "| `polyglot_zip` | error |", why, sizeof why),
                     1);
    ck_assert_int_eq(check_edited("| `zip_bomb` |", NULL, why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(why, "zip_bomb: no row"));
    ck_assert_int_eq(check_edited("| `zip_bomb` |", "DUP", why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(why, "zip_bomb: listed twice"));
    ck_assert_int_eq(check_edited("| `zip_bomb` |", "| `zip_bombs` |", why, sizeof why), 2);
    ck_assert_int_eq(
        check_edited("| `io_error` | error |", "| `io_error` | bad |", why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(why, "does not start with a severity"));
}
END_TEST

static Suite *codes_suite(void)
{
    Suite *s = suite_create("codes");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_findings_md);
    tcase_add_test(tc, test_findings_md_checker);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(codes_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
