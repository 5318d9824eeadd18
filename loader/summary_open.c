/* The summary door of the public API (stg_summary_open, stguard.h; docs/abi.md): what the rules
 * of a scan met in a code-bearing file (Keras layers, SavedModel ops, chat templates, auto_map
 * entries), for `stguard inspect` of every format without a door of its own.
 *
 * No reader of its own: the file is scanned exactly as stg_scan_path scans it, and the rows the
 * validators recorded in the report (validator/report.h, stg_report_add_row) are taken out of
 * it. So nothing here parses input, and what inspect shows is what the verdict was made from. */
#include <stdlib.h>
#include <string.h>

#include "../parser/mem.h"
#include "../validator/limits.h"
#include "../validator/report.h"
#include "stguard/stguard.h"

/* Entries kind by kind; a histogram's (layer classes, ops) most frequent first, then by name
 * bytewise; the others in the order the rules met them (ties broken by that order: stable). */
typedef struct ranked {
    stg_report_row row;
    size_t met;
} ranked;

static int cmp_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->row.kind != b->row.kind) {
        return a->row.kind < b->row.kind ? -1 : 1;
    }
    bool hist = a->row.kind == STG_SUMMARY_KERAS_LAYER || a->row.kind == STG_SUMMARY_TF_OP;
    if (hist && a->row.count != b->row.count) {
        return a->row.count > b->row.count ? -1 : 1;
    }
    if (hist) {
        size_t n = a->row.name_len < b->row.name_len ? a->row.name_len : b->row.name_len;
        int c = n > 0 ? memcmp(a->row.name, b->row.name, n) : 0;
        if (c != 0 || a->row.name_len != b->row.name_len) {
            return c != 0 ? c : (a->row.name_len < b->row.name_len ? -1 : 1);
        }
    }
    return a->met < b->met ? -1 : (a->met > b->met ? 1 : 0);
}

/* Puts rows in that order; false when the scratch table cannot be had (memory). */
static bool rank_rows(stg_report_row *rows, size_t n)
{
    if (n < 2) {
        return true;
    }
    ranked *t = stg_mem_calloc(n, sizeof *t);
    if (t == NULL) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        t[i].row = rows[i];
        t[i].met = i;
    }
    qsort(t, n, sizeof *t, cmp_ranked);
    for (size_t i = 0; i < n; i++) {
        rows[i] = t[i].row;
    }
    stg_mem_free(t);
    return true;
}

struct stg_summary {
    stg_report_row *rows;
    size_t n;
    uint64_t dropped;
};

stg_status stg_summary_open(const char *path, const stg_limits *lim, stg_summary **out,
                            stg_report **rep)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (rep != NULL) {
        *rep = NULL;
    }
    if (out == NULL || path == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_scan_options so;
    stg_scan_options_default(&so);
    if (lim != NULL && stg_limits_accept(lim, &so.limits) != STG_OK) {
        return STG_E_STRUCT_VERSION;
    }
    so.digest = false; /* what a file holds does not need its digest */
    stg_summary *s = stg_mem_calloc(1, sizeof *s);
    if (s == NULL) {
        return STG_E_NOMEM;
    }
    stg_report *r = NULL;
    stg_status st = stg_scan_path(path, &so, &r);
    if (st != STG_OK || r == NULL) {
        stg_mem_free(s);
        return st != STG_OK ? st : STG_E_NOMEM;
    }
    if (!rank_rows(r->rows, r->row_count)) {
        stg_report_oom(r);
    }
    if (r->out_of_memory) {
        st = STG_E_NOMEM; /* rows may be missing: show none rather than part */
    } else if (stg_report_verdict(r) == STG_VERDICT_ERROR) {
        st = STG_E_INVALID;
    }
    if (st != STG_OK) {
        stg_mem_free(s);
        stg_report_hand_out(r, rep);
        return st;
    }
    s->rows = r->rows;
    s->n = r->row_count;
    s->dropped = r->rows_dropped;
    r->rows = NULL;
    r->row_count = r->row_cap = 0;
    *out = s;
    stg_report_hand_out(r, rep);
    return STG_OK;
}

size_t stg_summary_count(const stg_summary *s)
{
    return s != NULL ? s->n : 0;
}

uint64_t stg_summary_dropped(const stg_summary *s)
{
    return s != NULL ? s->dropped : 0;
}

stg_status stg_summary_at(const stg_summary *s, size_t i, stg_summary_entry *out)
{
    if (s == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    if (i >= s->n) {
        return STG_E_RANGE;
    }
    const stg_report_row *row = &s->rows[i];
    memset(out, 0, sizeof *out);
    out->struct_version = STG_STRUCT_VERSION;
    out->kind = (uint32_t)row->kind;
    out->name = row->name;
    out->name_len = row->name_len;
    out->value = row->value;
    out->value_len = row->value_len;
    out->member = row->member;
    out->count = row->count;
    out->offset = row->offset;
    out->verdict = (uint32_t)row->verdict;
    out->state = (uint32_t)row->state;
    return STG_OK;
}

const char *stg_summary_kind_name(stg_summary_kind k)
{
    static const char *const names[] = {"keras-model", "keras-layer", "tf-op", "chat-template",
                                        "auto-map"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : NULL;
}

const char *stg_summary_state_name(stg_summary_state st)
{
    static const char *const names[] = {"", "unknown", "present", "absent", "other-repo"};
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : NULL;
}

void stg_summary_close(stg_summary *s)
{
    if (s == NULL) {
        return;
    }
    stg_report_rows_free(s->rows, s->n);
    stg_mem_free(s);
}
