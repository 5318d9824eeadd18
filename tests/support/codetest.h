/* Finding-code assertions shared by the format tests that build their inputs byte by byte
 * (header-only: it uses Check). A runner turns a buffer into a finished report under a profile;
 * tu_expect asserts a code's presence, severity and offset in both profiles. */
#ifndef STG_CODETEST_H
#define STG_CODETEST_H

#include <check.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/report.h"

#define TU_NONE ((stg_severity)-1) /* no finding of the code in that profile */

typedef stg_report *(*tu_runner)(const tu_buf *b, stg_profile p);

/* The code is there with the severity of each profile (TU_NONE: absent) and, when off is not
 * STG_NO_OFFSET, at that offset. */
static inline void tu_expect(tu_runner run, const tu_buf *b, stg_code code, stg_severity strict_sev,
                             stg_severity compat_sev, uint64_t off)
{
    for (int p = 0; p < 2; p++) {
        stg_report *r = run(b, (stg_profile)p);
        long at = tu_find(r, code);
        stg_severity want = p == 0 ? strict_sev : compat_sev;
        const char *prof = p ? "compat" : "strict";
        if (want == TU_NONE) {
            ck_assert_msg(at < 0, "%s: unexpected %s in %s", prof, stg_code_name(code),
                          tu_describe(r));
        } else {
            ck_assert_msg(at >= 0, "%s: no %s in %s", prof, stg_code_name(code), tu_describe(r));
            const stg_finding *f = stg_report_at(r, (size_t)at);
            ck_assert_msg(f->severity == want, "%s: %s is %s", prof, stg_code_name(code),
                          stg_severity_name(f->severity));
            if (off != STG_NO_OFFSET) {
                ck_assert_msg(f->has_offset && f->offset == off, "%s at %llu, want %llu",
                              stg_code_name(code), (unsigned long long)f->offset,
                              (unsigned long long)off);
            }
            ck_assert_ptr_nonnull(f->message);
        }
        stg_report_free(r);
    }
}

/* No finding at all in either profile. */
static inline void tu_expect_clean(tu_runner run, const tu_buf *b)
{
    for (int p = 0; p < 2; p++) {
        stg_report *r = run(b, (stg_profile)p);
        ck_assert_msg(stg_report_count(r) == 0, "%s: %s", p ? "compat" : "strict", tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
        stg_report_free(r);
    }
}

#endif
