/* Helpers for the safetensors validator tests (header-only, included by the tests/<layer>/test_*.c
 * that exercise validator/header.c, layout.c and validate.c). */
#ifndef STG_STTEST_H
#define STG_STTEST_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/safetensors.h"

#define ST_ERR STG_SEV_ERROR
#define ST_WARN STG_SEV_WARNING

/* A file: 8-byte length, header + pad spaces, data_len zero bytes. */
static inline uint8_t *st_file(const char *hdr, size_t pad, size_t data_len, size_t *len)
{
    return tu_st_file(hdr, pad, NULL, data_len, len);
}

static inline stg_limits st_limits(stg_profile p)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = p;
    return lim;
}

static inline stg_report *st_run_lim(const void *buf, size_t len, const stg_limits *lim)
{
    stg_report *r = NULL;
    ck_assert_int_eq(stg_validate_buffer(buf, len, lim, &r), STG_OK);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Validates header + pad + data under a profile with default limits. */
static inline stg_report *st_run(const char *hdr, size_t pad, size_t data_len, stg_profile p)
{
    size_t len;
    uint8_t *b = st_file(hdr, pad, data_len, &len);
    stg_limits lim = st_limits(p);
    stg_report *r = st_run_lim(b, len, &lim);
    free(b);
    return r;
}

static inline const stg_finding *st_find(const stg_report *r, stg_code code)
{
    long i = tu_find(r, code);
    return i < 0 ? NULL : stg_report_at(r, (size_t)i);
}

/* File offset of the first occurrence of `needle` inside the header (8 + position). */
static inline uint64_t st_at(const char *hdr, const char *needle)
{
    const char *p = strstr(hdr, needle);
    ck_assert_msg(p != NULL, "marker %s not in header", needle);
    return 8u + (uint64_t)(p - hdr);
}

/* Asserts a finding with this code, severity and offset exists (any position). */
static inline void st_expect(const stg_report *r, stg_code code, stg_severity sev, uint64_t off)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->code == code && f->severity == sev && f->has_offset && f->offset == off) {
            return;
        }
    }
    ck_abort_msg("expected %s(%s)@%llu, got: %s", stg_code_name(code), stg_severity_name(sev),
                 (unsigned long long)off, tu_describe(r));
}

static inline void st_expect_verdict(const stg_report *r, stg_verdict v)
{
    ck_assert_msg(stg_report_verdict(r) == v, "verdict %s, want %s; findings: %s",
                  stg_verdict_name(stg_report_verdict(r)), stg_verdict_name(v), tu_describe(r));
}

/* Verdict of a finding set made only of this severity (and maybe warnings). */
static inline stg_verdict st_verdict_of(stg_severity s)
{
    return s == STG_SEV_ERROR ? STG_VERDICT_INVALID : STG_VERDICT_WARN;
}

/* Runs both profiles and checks code, severities and offset, and the verdicts they imply. */
static inline void st_check_both(const char *hdr, size_t data_len, stg_code code,
                                 stg_severity strict_sev, stg_severity compat_sev, uint64_t off)
{
    stg_report *r = st_run(hdr, 0, data_len, STG_PROFILE_STRICT);
    st_expect(r, code, strict_sev, off);
    if (strict_sev == STG_SEV_ERROR) {
        st_expect_verdict(r, STG_VERDICT_INVALID);
    }
    stg_report_free(r);
    r = st_run(hdr, 0, data_len, STG_PROFILE_COMPAT);
    st_expect(r, code, compat_sev, off);
    if (compat_sev == STG_SEV_ERROR) {
        st_expect_verdict(r, STG_VERDICT_INVALID);
    }
    stg_report_free(r);
}

/* Near miss: no finding with `code` and a verdict of ok or warn in both profiles. */
static inline void st_check_clean(const char *hdr, size_t data_len, stg_code code)
{
    for (int p = 0; p < 2; p++) {
        stg_report *r = st_run(hdr, 0, data_len, (stg_profile)p);
        ck_assert_msg(tu_find(r, code) < 0, "%s: unexpected %s: %s", p ? "compat" : "strict",
                      stg_code_name(code), tu_describe(r));
        ck_assert_msg(stg_report_verdict(r) <= STG_VERDICT_WARN, "%s: verdict %s: %s",
                      p ? "compat" : "strict", stg_verdict_name(stg_report_verdict(r)),
                      tu_describe(r));
        stg_report_free(r);
    }
}

#endif
