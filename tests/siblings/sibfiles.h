/* File and scan helpers shared by the Check runners of tests/siblings/. */
#ifndef STG_TESTS_SIBFILES_H
#define STG_TESTS_SIBFILES_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"

static inline char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static inline void write_in(const char *dir, const char *name, const void *d, size_t n)
{
    char *p = path_in(dir, name);
    ck_assert_int_eq(tu_write_file(p, d, n), 0);
    free(p);
}

/* n bytes of raw float data that no format claims (no magic, not text, no pickle opcode that
 * imports). */
static inline void write_data(const char *dir, const char *name, size_t n)
{
    uint8_t *d = malloc(n);
    ck_assert_ptr_nonnull(d);
    for (size_t i = 0; i < n; i++) {
        d[i] = (uint8_t)(i % 4 == 3 ? 0x3f : 0x11 * (i % 7));
    }
    write_in(dir, name, d, n);
    free(d);
}

static inline stg_report *scan_file(const char *dir, const char *name)
{
    char *p = path_in(dir, name);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(p, NULL, &r), STG_OK);
    free(p);
    return r;
}

static inline void expect_data_ok(stg_report *r, stg_format label)
{
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_OK, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_format(r), label);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_report_free(r);
}

static inline void expect_kept(stg_report *r, stg_code code)
{
    ck_assert_int_eq(stg_report_format(r), STG_FMT_UNKNOWN);
    ck_assert_msg(tu_find(r, code) >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    stg_report_free(r);
}

typedef struct tree_seen {
    size_t records, ok;
    char paths[16][256];
    stg_verdict verdicts[16];
    stg_format formats[16];
} tree_seen;

static inline void on_record(void *user, const stg_tree_record *rec)
{
    const stg_report *r = rec->report;
    tree_seen *s = user;
    if (s->records < 16) {
        snprintf(s->paths[s->records], sizeof s->paths[0], "%s", stg_report_path(r));
        s->verdicts[s->records] = stg_report_verdict(r);
        s->formats[s->records] = stg_report_format(r);
    }
    s->ok += stg_report_verdict(r) == STG_VERDICT_OK;
    s->records++;
}

static inline void scan_tree(const char *dir, unsigned threads, tree_seen *seen)
{
    stg_tree_options o;
    ck_assert_int_eq(stg_tree_options_init(&o, STG_STRUCT_VERSION), STG_OK);
    o.threads = threads;
    memset(seen, 0, sizeof *seen);
    const char *paths[] = {dir};
    ck_assert_int_eq(stg_scan_tree(paths, 1, &o, on_record, seen, NULL), STG_OK);
}

#endif
