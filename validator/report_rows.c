/* The rows of a report (validator/report.h): what the rules met, kept for the summary door
 * (loader/summary_open.c, stg_summary_open). Bounded by STG_SUMMARY_ENTRIES_MAX per report; a
 * histogram row (a layer class, an op) is looked up among the kept ones, so the cost per row is
 * at most that many comparisons. */
#include <string.h>

#include "../parser/mem.h"
#include "report.h"

static bool histogram(stg_summary_kind k)
{
    return k == STG_SUMMARY_KERAS_LAYER || k == STG_SUMMARY_TF_OP;
}

static bool same_text(const char *a, size_t a_len, const char *b, size_t b_len)
{
    return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

static bool same_member(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void free_row(stg_report_row *row)
{
    stg_mem_free((void *)(uintptr_t)row->name);
    stg_mem_free((void *)(uintptr_t)row->value);
    stg_mem_free((void *)(uintptr_t)row->member);
}

/* Copies what row points at into kept; false when memory failed (nothing left allocated). */
static bool copy_row(stg_report_row *kept, const stg_report_row *row)
{
    *kept = *row;
    kept->name = stg_mem_strndup(row->name != NULL ? row->name : "", row->name_len);
    kept->value = stg_mem_strndup(row->value != NULL ? row->value : "", row->value_len);
    kept->member = row->member != NULL ? stg_mem_strndup(row->member, strlen(row->member)) : NULL;
    if (kept->name == NULL || kept->value == NULL ||
        (row->member != NULL && kept->member == NULL)) {
        free_row(kept);
        return false;
    }
    return true;
}

void stg_report_add_row(stg_report *r, const stg_report_row *row)
{
    if (histogram(row->kind)) {
        for (size_t i = 0; i < r->row_count; i++) {
            stg_report_row *k = &r->rows[i];
            if (k->kind == row->kind && same_text(k->name, k->name_len, row->name, row->name_len) &&
                same_member(k->member, row->member)) {
                k->count += row->count;
                return;
            }
        }
    }
    if (r->row_count >= STG_SUMMARY_ENTRIES_MAX) {
        r->rows_dropped++;
        return;
    }
    if (r->row_count == r->row_cap) {
        size_t ncap = r->row_cap == 0 ? 8 : 2 * r->row_cap;
        if (ncap > STG_SUMMARY_ENTRIES_MAX) {
            ncap = STG_SUMMARY_ENTRIES_MAX;
        }
        stg_report_row *nr = stg_mem_realloc(r->rows, ncap * sizeof *nr);
        if (nr == NULL) {
            stg_report_oom(r);
            return;
        }
        r->rows = nr;
        r->row_cap = ncap;
    }
    if (!copy_row(&r->rows[r->row_count], row)) {
        stg_report_oom(r);
        return;
    }
    r->row_count++;
}

void stg_report_rows_free(stg_report_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free_row(&rows[i]);
    }
    stg_mem_free(rows);
}

void stg_report_drop_rows(stg_report *r)
{
    stg_report_rows_free(r->rows, r->row_count);
    r->rows = NULL;
    r->row_count = r->row_cap = 0;
}

stg_verdict stg_verdict_of_severity(bool any, stg_severity worst)
{
    if (!any) {
        return STG_VERDICT_OK;
    }
    switch (worst) {
    case STG_SEV_CRITICAL: return STG_VERDICT_UNSAFE;
    case STG_SEV_ERROR: return STG_VERDICT_INVALID;
    case STG_SEV_WARNING: return STG_VERDICT_WARN;
    case STG_SEV_INFO: return STG_VERDICT_OK;
    }
    return STG_VERDICT_ERROR;
}
