/* The one report comparison of the fuzz harnesses (header only: each harness is built on its
 * own, also by fuzz/oss-fuzz/build.sh). Two reports are the same when they have the same
 * verdict, the same truncated count and the same findings in the same order: code, severity,
 * offset and member path always; what else is compared is chosen by the harness (flags). */
#ifndef STG_FUZZ_COMPARE_H
#define STG_FUZZ_COMPARE_H

#include <stdbool.h>
#include <string.h>

#include "validator/report.h"

enum {
    STG_FUZZ_CMP_MESSAGE = 1u << 0,       /* the message text */
    STG_FUZZ_CMP_TENSOR = 1u << 1,        /* the tensor name bytes */
    STG_FUZZ_CMP_MEMBER_OFFSET = 1u << 2, /* the member's header offset */
    STG_FUZZ_CMP_LIMIT = 1u << 3,         /* the limit's name */
    STG_FUZZ_CMP_FORMAT = 1u << 4,        /* the report's format label */
    STG_FUZZ_CMP_GLOBALS = 1u << 5        /* the number of globals */
};

/* A refusal is explained: some finding of rep is an error or worse, or findings were cut. */
static inline bool stg_fuzz_refusal_explained(const stg_report *rep)
{
    for (size_t i = 0; i < stg_report_count(rep); i++) {
        if (stg_report_at(rep, i)->severity >= STG_SEV_ERROR) {
            return true;
        }
    }
    return stg_report_truncated(rep) != 0;
}

static inline bool stg_fuzz_same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static inline bool stg_fuzz_same_finding(const stg_finding *x, const stg_finding *y, unsigned what)
{
    if (x->code != y->code || x->severity != y->severity || x->has_offset != y->has_offset ||
        x->offset != y->offset || !stg_fuzz_same_str(x->member, y->member)) {
        return false;
    }
    if ((what & STG_FUZZ_CMP_MESSAGE) != 0 && !stg_fuzz_same_str(x->message, y->message)) {
        return false;
    }
    if ((what & STG_FUZZ_CMP_TENSOR) != 0 &&
        ((x->tensor == NULL) != (y->tensor == NULL) || x->tensor_len != y->tensor_len ||
         (x->tensor != NULL && memcmp(x->tensor, y->tensor, x->tensor_len) != 0))) {
        return false;
    }
    if ((what & STG_FUZZ_CMP_MEMBER_OFFSET) != 0 && x->member_offset != y->member_offset) {
        return false;
    }
    return (what & STG_FUZZ_CMP_LIMIT) == 0 || stg_fuzz_same_str(x->limit, y->limit);
}

static inline bool stg_fuzz_same_report(const stg_report *a, const stg_report *b, unsigned what)
{
    if (stg_report_count(a) != stg_report_count(b) ||
        stg_report_verdict(a) != stg_report_verdict(b) ||
        stg_report_truncated(a) != stg_report_truncated(b)) {
        return false;
    }
    if ((what & STG_FUZZ_CMP_FORMAT) != 0 && stg_report_format(a) != stg_report_format(b)) {
        return false;
    }
    if ((what & STG_FUZZ_CMP_GLOBALS) != 0 &&
        stg_report_global_count(a) != stg_report_global_count(b)) {
        return false;
    }
    for (size_t i = 0; i < stg_report_count(a); i++) {
        if (!stg_fuzz_same_finding(stg_report_at(a, i), stg_report_at(b, i), what)) {
            return false;
        }
    }
    return true;
}

#endif
