/* Reports (validator/report.c): the verdict each severity mix gives and how it fails closed,
 * max_findings at N and N + 1 with the findings_truncated marker, file order, messages, the
 * optional fields of a finding, globals, merging a member's report into its container's, and the
 * NULL-safe accessors of the public API. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/report.h"

static stg_report *new_report(uint32_t max_findings, stg_profile profile)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_findings = max_findings;
    lim.profile = profile;
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    return r;
}

START_TEST(test_new_defaults)
{
    stg_report *r = stg_report_new(NULL); /* NULL limits: the defaults */
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->max_findings, 1000);
    ck_assert_int_eq(r->profile, STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_uint_eq(stg_report_truncated(r), 0);
    ck_assert_uint_eq(stg_report_global_count(r), 0);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_UNKNOWN);
    ck_assert_ptr_null(stg_report_sha256(r));
    ck_assert_ptr_null(stg_report_path(r));
    ck_assert_ptr_null(stg_report_blob(r));
    stg_report_free(r);

    r = new_report(7, STG_PROFILE_COMPAT);
    ck_assert_uint_eq(r->max_findings, 7);
    ck_assert_int_eq(r->profile, STG_PROFILE_COMPAT);
    stg_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* verdict */

START_TEST(test_verdict_fails_closed)
{
    ck_assert_int_eq(stg_report_verdict(NULL), STG_VERDICT_ERROR);
    stg_report *r = new_report(10, STG_PROFILE_STRICT);
    /* Not finished: error, even with nothing found. */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    stg_report_finish(r);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    /* Memory lost while adding: error, whatever was stored. */
    r->out_of_memory = true;
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
    stg_report_free(r);
}
END_TEST

static const struct {
    const char *what;
    stg_code codes[3];
    stg_severity sevs[3];
    size_t n;
    stg_verdict want;
} verdict_cases[] = {
    {"info only", {STG_FORMAT_UNKNOWN}, {STG_SEV_INFO}, 1, STG_VERDICT_OK},
    {"warning",
     {STG_HEADER_NOT_PADDED, STG_FORMAT_UNKNOWN},
     {STG_SEV_WARNING, STG_SEV_INFO},
     2,
     STG_VERDICT_WARN},
    {"error",
     {STG_DATA_GAP, STG_HEADER_NOT_PADDED},
     {STG_SEV_ERROR, STG_SEV_WARNING},
     2,
     STG_VERDICT_INVALID},
    {"critical after error",
     {STG_DATA_GAP, STG_PICKLE_GLOBAL_UNKNOWN, STG_HEADER_NOT_PADDED},
     {STG_SEV_ERROR, STG_SEV_CRITICAL, STG_SEV_WARNING},
     3,
     STG_VERDICT_UNSAFE},
    {"io_error beats critical",
     {STG_PICKLE_GLOBAL_UNKNOWN, STG_IO_ERROR},
     {STG_SEV_CRITICAL, STG_SEV_ERROR},
     2,
     STG_VERDICT_ERROR},
    {"file_changed", {STG_FILE_CHANGED_CODE}, {STG_SEV_ERROR}, 1, STG_VERDICT_ERROR},
    /* A severity no enum value has never reads as ok: error. */
    {"bad severity", {STG_DATA_GAP}, {(stg_severity)9}, 1, STG_VERDICT_ERROR},
};

START_TEST(test_verdict_table)
{
    stg_report *r = new_report(10, STG_PROFILE_STRICT);
    for (size_t i = 0; i < verdict_cases[_i].n; i++) {
        ck_assert_ptr_nonnull(stg_report_add_sev(r, verdict_cases[_i].codes[i],
                                                 verdict_cases[_i].sevs[i], i, "finding %zu", i));
    }
    stg_report_finish(r);
    ck_assert_msg(stg_report_verdict(r) == verdict_cases[_i].want, "%s: %s", verdict_cases[_i].what,
                  stg_verdict_name(stg_report_verdict(r)));
    stg_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* max_findings */

START_TEST(test_max_findings_at_limit)
{
    stg_report *r = new_report(3, STG_PROFILE_STRICT);
    for (uint64_t i = 0; i < 3; i++) {
        ck_assert_ptr_nonnull(stg_report_add(r, STG_DATA_GAP, 10 * i, "gap"));
    }
    stg_report_finish(r);
    ck_assert_uint_eq(stg_report_count(r), 3);
    ck_assert_uint_eq(stg_report_truncated(r), 0);
    ck_assert_int_lt(tu_find(r, STG_FINDINGS_TRUNCATED), 0);
    stg_report_free(r);
}
END_TEST

START_TEST(test_max_findings_past_limit)
{
    stg_report *r = new_report(3, STG_PROFILE_STRICT);
    for (uint64_t i = 0; i < 3; i++) {
        ck_assert_ptr_nonnull(stg_report_add(r, STG_HEADER_NOT_PADDED, 100 + i, "w"));
    }
    /* N + 1: counted, not stored; its severity still decides the verdict. */
    ck_assert_ptr_null(stg_report_add(r, STG_PICKLE_GLOBAL_DANGEROUS, 5, "c"));
    ck_assert_ptr_null(stg_report_add(r, STG_DATA_GAP, 6, "e"));
    ck_assert_uint_eq(stg_report_count(r), 3);
    ck_assert_uint_eq(stg_report_truncated(r), 2);
    ck_assert(stg_report_has(r, STG_PICKLE_GLOBAL_DANGEROUS));
    stg_report_finish(r);
    /* The marker is stored past the cap, without an offset, so it sorts first. */
    ck_assert_uint_eq(stg_report_count(r), 4);
    const stg_finding *f = stg_report_at(r, 0);
    ck_assert_int_eq(f->code, STG_FINDINGS_TRUNCATED);
    ck_assert_int_eq(f->severity, STG_SEV_WARNING);
    ck_assert(!f->has_offset);
    ck_assert_str_eq(f->message, "2 more findings were counted but not stored (max_findings 3)");
    ck_assert_uint_eq(r->max_findings, 3); /* restored after the marker */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    for (size_t i = 1; i < 4; i++) {
        ck_assert_uint_eq(stg_report_at(r, i)->offset, 100 + i - 1);
    }
    stg_report_free(r);
}
END_TEST

START_TEST(test_max_findings_zero)
{
    stg_report *r = new_report(0, STG_PROFILE_STRICT);
    ck_assert_ptr_null(stg_report_add(r, STG_HEADER_NOT_PADDED, 0, "w"));
    stg_report_finish(r);
    ck_assert_uint_eq(stg_report_count(r), 1);
    ck_assert_int_eq(stg_report_at(r, 0)->code, STG_FINDINGS_TRUNCATED);
    ck_assert_str_eq(stg_report_at(r, 0)->message,
                     "1 more findings were counted but not stored (max_findings 0)");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_report_free(r);
}
END_TEST

START_TEST(test_truncated_marker_once)
{
    /* A caller that already added findings_truncated itself does not get a second one. */
    stg_report *r = new_report(1, STG_PROFILE_STRICT);
    ck_assert_ptr_nonnull(stg_report_add(r, STG_FINDINGS_TRUNCATED, STG_NO_OFFSET, "own"));
    ck_assert_ptr_null(stg_report_add(r, STG_DATA_GAP, 1, "gap"));
    stg_report_finish(r);
    ck_assert_uint_eq(tu_count(r, STG_FINDINGS_TRUNCATED), 1);
    ck_assert_str_eq(stg_report_at(r, 0)->message, "own");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
}
END_TEST

START_TEST(test_growth_past_initial_capacity)
{
    /* 40 findings with the default cap: storage grows (16, 32, 64) and keeps every one. */
    stg_report *r = new_report(1000, STG_PROFILE_STRICT);
    for (uint64_t i = 0; i < 40; i++) {
        stg_finding *f = stg_report_add(r, STG_DATA_GAP, 40 - i, "gap %llu", (unsigned long long)i);
        ck_assert_ptr_nonnull(f);
    }
    stg_report_finish(r);
    ck_assert_uint_eq(stg_report_count(r), 40);
    for (size_t i = 0; i < 40; i++) {
        char want[32];
        snprintf(want, sizeof want, "gap %zu", 39 - i);
        ck_assert_uint_eq(stg_report_at(r, i)->offset, i + 1);
        ck_assert_str_eq(stg_report_at(r, i)->message, want);
    }
    ck_assert_ptr_null(stg_report_at(r, 40));
    stg_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* order and messages */

START_TEST(test_file_order_stable)
{
    stg_report *r = new_report(100, STG_PROFILE_STRICT);
    stg_report_add(r, STG_DATA_GAP, 30, "a");
    stg_report_add(r, STG_DATA_TRAILING, 10, "b");
    stg_report_add(r, STG_FORMAT_UNKNOWN, STG_NO_OFFSET, "c");
    stg_report_add(r, STG_OFFSETS_OVERLAP, 10, "d");
    stg_report_add(r, STG_HEADER_NOT_PADDED, 0, "e");
    stg_report_add(r, STG_PICKLE_FILE, STG_NO_OFFSET, "f");
    stg_report_finish(r);
    /* no-offset first (in the order added), then by offset, ties in the order added */
    static const char *const want[] = {"c", "f", "e", "b", "d", "a"};
    ck_assert_uint_eq(stg_report_count(r), 6);
    for (size_t i = 0; i < 6; i++) {
        ck_assert_str_eq(stg_report_at(r, i)->message, want[i]);
    }
    ck_assert(!stg_report_at(r, 0)->has_offset);
    ck_assert_uint_eq(stg_report_at(r, 0)->offset, 0);
    ck_assert(stg_report_at(r, 2)->has_offset);
    stg_report_free(r);
}
END_TEST

START_TEST(test_messages)
{
    stg_report *r = new_report(10, STG_PROFILE_STRICT);
    /* Values only through conversions; a message is capped at 511 bytes. */
    char big[700];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    stg_finding *f = stg_report_add(r, STG_DATA_GAP, 1, "%s", big);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(strlen(f->message), 511);
    f = stg_report_add(r, STG_DATA_GAP, 2, "%llu bytes at %u", (unsigned long long)UINT64_MAX, 7u);
    ck_assert_str_eq(f->message, "18446744073709551615 bytes at 7");
    /* A conversion that cannot be rendered (a wide character the C locale cannot encode) still
     * stores the finding, with an empty message. */
    static const wchar_t wide[] = {0x20AC, 0};
    f = stg_report_add(r, STG_DATA_GAP, 3, "%ls", wide);
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->message, "");
    ck_assert_int_eq(f->code, STG_DATA_GAP);
    stg_report_finish(r);
    ck_assert_uint_eq(stg_report_count(r), 3);
    stg_report_free(r);
}
END_TEST

START_TEST(test_has_codes)
{
    stg_report *r = new_report(1, STG_PROFILE_STRICT);
    ck_assert(!stg_report_has(r, STG_IO_ERROR));
    stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "io");
    stg_report_add(r, STG_FILE_TOO_SMALL, 0, "small"); /* counted only */
    ck_assert(stg_report_has(r, STG_IO_ERROR));
    ck_assert(stg_report_has(r, STG_FILE_TOO_SMALL));
    ck_assert(!stg_report_has(r, STG_FILE_CHANGED_CODE));
    /* Numbers past the tracked range are counted and stored but never "had". */
    stg_report_free(r);
    r = new_report(10, STG_PROFILE_STRICT);
    /* the bitmap holds 64 x STG_SEEN_CODE_WORDS numbers: 300 is past it, and the numbers it
     * would alias if the word index wrapped are not "had" either */
    const int past = 64 * STG_SEEN_CODE_WORDS + 44;
    ck_assert_ptr_nonnull(stg_report_add_sev(r, (stg_code)past, STG_SEV_WARNING, 0, "odd"));
    ck_assert(!stg_report_has(r, (stg_code)past));
    ck_assert(!stg_report_has(r, (stg_code)(past - 128)));
    ck_assert(!stg_report_has(r, (stg_code)(past - 64)));
    stg_report_finish(r);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_report_free(r);
}
END_TEST

/* The default path takes the code table's severity for the report's profile; the _sev forms keep
 * the one given (the context-dependent sites of validator/codes.def). */
START_TEST(test_default_severity)
{
    static const stg_code codes[] = {STG_POLYGLOT_ZIP, STG_HEADER_NOT_PADDED,
                                     STG_PICKLE_GLOBAL_DANGEROUS, STG_DATA_GAP};
    for (int p = 0; p < 2; p++) {
        stg_report *r = new_report(100, (stg_profile)p);
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
            stg_finding *f = stg_report_add(r, codes[i], i, "default");
            ck_assert_ptr_nonnull(f);
            ck_assert_int_eq(f->severity, stg_code_severity(codes[i], (stg_profile)p));
        }
        stg_finding *f = stg_report_add_sev(r, STG_POLYGLOT_ZIP, STG_SEV_INFO, 9, "given");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, STG_SEV_INFO);
        stg_report_finish(r);
        /* polyglot_zip is error in strict, warning in compat: the verdict follows */
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
        ck_assert_int_eq(stg_report_at(r, 0)->severity, p == 0 ? STG_SEV_ERROR : STG_SEV_WARNING);
        stg_report_free(r);
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* optional fields */

START_TEST(test_optional_fields)
{
    stg_report *r = new_report(10, STG_PROFILE_STRICT);
    stg_finding *f = stg_report_add_sev(r, STG_TENSOR_NAME_INVALID, STG_SEV_ERROR, 8, "name");
    static const char name[] = {'a', '\0', 'b'};
    stg_report_set_tensor(r, f, name, 3);
    ck_assert_uint_eq(f->tensor_len, 3);
    ck_assert_int_eq(memcmp(f->tensor, name, 3), 0);
    ck_assert_int_eq(f->tensor[3], '\0');
    stg_report_set_tensor(r, f, "other", 5); /* first one stays */
    ck_assert_uint_eq(f->tensor_len, 3);
    ck_assert_int_eq(memcmp(f->tensor, name, 3), 0);

    stg_report_set_global(r, f, "os.pathX", 2, "systemX", 6);
    ck_assert_str_eq(f->module, "os");
    ck_assert_str_eq(f->name, "system");
    stg_report_set_global(r, f, "a", 1, "b", 1);
    ck_assert_str_eq(f->module, "os");

    stg_report_set_member(r, f, NULL, 4); /* no member: nothing */
    ck_assert_ptr_null(f->member);
    ck_assert(!f->has_member_offset);
    stg_report_set_member(r, f, "archive/data.pkl", 30);
    ck_assert_str_eq(f->member, "archive/data.pkl");
    ck_assert(f->has_member_offset);
    ck_assert_uint_eq(f->member_offset, 30);
    stg_report_set_member(r, f, "other", 1);
    ck_assert_str_eq(f->member, "archive/data.pkl");
    ck_assert_uint_eq(f->member_offset, 30);

    stg_report_set_limit(r, f, "max_rank");
    stg_report_set_limit(r, f, "max_tensors");
    ck_assert_str_eq(f->limit, "max_rank");

    /* A member without a known local header offset. */
    stg_finding *g = stg_report_add(r, STG_ZIP_MALFORMED, 0, "zip");
    stg_report_set_member(r, g, "m", STG_NO_OFFSET);
    ck_assert_str_eq(g->member, "m");
    ck_assert(!g->has_member_offset);
    ck_assert_uint_eq(g->member_offset, 0);

    /* NULL finding (a counted-only one): every setter does nothing. */
    stg_report_set_tensor(r, NULL, "t", 1);
    stg_report_set_global(r, NULL, "m", 1, "n", 1);
    stg_report_set_member(r, NULL, "m", 0);
    stg_report_set_limit(r, NULL, "max_rank");
    ck_assert(!r->out_of_memory);
    stg_report_finish(r);
    ck_assert_uint_eq(stg_report_count(r), 2);
    stg_report_free(r);
}
END_TEST

START_TEST(test_limit_shorthand)
{
    stg_report *r = new_report(10, STG_PROFILE_COMPAT);
    stg_report_limit(r, 42, "max_json_depth", 127);
    stg_report_finish(r);
    ck_assert_uint_eq(stg_report_count(r), 1);
    const stg_finding *f = stg_report_at(r, 0);
    ck_assert_int_eq(f->code, STG_LIMIT_EXCEEDED);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR); /* an error in both profiles */
    ck_assert(f->has_offset);
    ck_assert_uint_eq(f->offset, 42);
    ck_assert_str_eq(f->limit, "max_json_depth");
    ck_assert_str_eq(f->message, "the configured limit max_json_depth (127) was exceeded");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);

    /* Past max_findings the limit is counted; no field is set on a missing finding. */
    r = new_report(0, STG_PROFILE_STRICT);
    stg_report_limit(r, 1, "max_rank", 64);
    ck_assert_uint_eq(stg_report_truncated(r), 1);
    stg_report_finish(r);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    stg_report_free(r);
}
END_TEST

START_TEST(test_globals)
{
    stg_report *r = new_report(10, STG_PROFILE_STRICT);
    for (unsigned i = 0; i < 20; i++) { /* past the first growth step */
        char mod[16];
        int n = snprintf(mod, sizeof mod, "mod%u", i);
        stg_report_add_global(r, mod, (size_t)n, "Klass", 5, 100 + i,
                              i % 2 == 0 ? NULL : "archive/data.pkl", (stg_global_class)(i % 4));
    }
    ck_assert_uint_eq(stg_report_global_count(r), 20);
    const stg_global *g = stg_report_global_at(r, 3);
    ck_assert_str_eq(g->module, "mod3");
    ck_assert_str_eq(g->name, "Klass");
    ck_assert_uint_eq(g->offset, 103);
    ck_assert_str_eq(g->member, "archive/data.pkl");
    ck_assert_int_eq(g->klass, STG_GLOBAL_UNKNOWN);
    g = stg_report_global_at(r, 18);
    ck_assert_ptr_null(g->member);
    ck_assert_int_eq(g->klass, STG_GLOBAL_DANGEROUS);
    ck_assert_ptr_null(stg_report_global_at(r, 20));
    /* Globals are facts, not findings: the verdict does not change. */
    stg_report_finish(r);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
}
END_TEST

START_TEST(test_facts)
{
    stg_report *r = new_report(10, STG_PROFILE_STRICT);
    stg_report_set_format(r, STG_FMT_TORCH_ZIP);
    stg_report_set_size(r, 123456789012ull);
    uint8_t digest[32];
    for (int i = 0; i < 32; i++) {
        digest[i] = (uint8_t)(i * 17 + 1);
    }
    stg_report_set_sha256(r, digest);
    stg_report_set_path(r, "a/first");
    stg_report_set_path(r, "a/model.bin"); /* replaces */
    stg_report_set_blob(r, "blobs/abc");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_ZIP);
    ck_assert_uint_eq(stg_report_size(r), 123456789012ull);
    ck_assert_str_eq(stg_report_sha256(r),
                     "0112233445566778899aabbccddeef00112233445566778899aabbccddeeff10");
    ck_assert_str_eq(stg_report_path(r), "a/model.bin");
    ck_assert_str_eq(stg_report_blob(r), "blobs/abc");
    stg_report_set_blob(r, NULL); /* clears */
    ck_assert_ptr_null(stg_report_blob(r));
    stg_report_free(r);
}
END_TEST

START_TEST(test_null_accessors)
{
    ck_assert_uint_eq(stg_report_count(NULL), 0);
    ck_assert_ptr_null(stg_report_at(NULL, 0));
    ck_assert_uint_eq(stg_report_truncated(NULL), 0);
    ck_assert_int_eq(stg_report_format(NULL), STG_FMT_UNKNOWN);
    ck_assert_uint_eq(stg_report_size(NULL), 0);
    ck_assert_ptr_null(stg_report_sha256(NULL));
    ck_assert_ptr_null(stg_report_path(NULL));
    ck_assert_ptr_null(stg_report_blob(NULL));
    ck_assert_uint_eq(stg_report_global_count(NULL), 0);
    ck_assert_ptr_null(stg_report_global_at(NULL, 0));
    stg_report_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* merge */

START_TEST(test_merge_member)
{
    stg_report *src = new_report(10, STG_PROFILE_STRICT);
    stg_finding *f = stg_report_add(src, STG_PICKLE_GLOBAL_DANGEROUS, 40, "global os.system");
    stg_report_set_global(src, f, "os", 2, "system", 6);
    f = stg_report_add(src, STG_SIZE_MISMATCH, 12, "size");
    stg_report_set_tensor(src, f, "w", 1);
    f = stg_report_add(src, STG_LIMIT_EXCEEDED, STG_NO_OFFSET, "lim");
    stg_report_set_limit(src, f, "max_nesting");
    f = stg_report_add(src, STG_ZIP_MALFORMED, 3, "inner");
    stg_report_set_member(src, f, "inner.pkl", 77); /* keeps its own member */
    f = stg_report_add(src, STG_CONTAINER_MALFORMED, 4, "no header offset");
    stg_report_set_member(src, f, "inner.tar", STG_NO_OFFSET);
    stg_report_add_global(src, "os", 2, "system", 6, 40, NULL, STG_GLOBAL_DANGEROUS);
    stg_report_add_global(src, "torch", 5, "Size", 4, 50, "inner.pkl", STG_GLOBAL_ALLOWED);

    stg_report *dst = new_report(10, STG_PROFILE_STRICT);
    stg_report_add(dst, STG_PICKLE_FILE, STG_NO_OFFSET, "outer");
    stg_report_merge(dst, src, "archive/data.pkl", 1000);
    stg_report_free(src);
    stg_report_finish(dst);

    ck_assert_uint_eq(stg_report_count(dst), 6);
    ck_assert_int_eq(stg_report_verdict(dst), STG_VERDICT_UNSAFE);
    ck_assert(stg_report_has(dst, STG_PICKLE_GLOBAL_DANGEROUS));
    const stg_finding *d = stg_report_at(dst, (size_t)tu_find(dst, STG_PICKLE_GLOBAL_DANGEROUS));
    ck_assert_str_eq(d->message, "global os.system");
    ck_assert_str_eq(d->module, "os");
    ck_assert_str_eq(d->name, "system");
    ck_assert_str_eq(d->member, "archive/data.pkl");
    ck_assert_uint_eq(d->member_offset, 1000);
    ck_assert_uint_eq(d->offset, 40);
    d = stg_report_at(dst, (size_t)tu_find(dst, STG_SIZE_MISMATCH));
    ck_assert_uint_eq(d->tensor_len, 1);
    ck_assert_str_eq(d->tensor, "w");
    d = stg_report_at(dst, (size_t)tu_find(dst, STG_LIMIT_EXCEEDED));
    ck_assert_str_eq(d->limit, "max_nesting");
    ck_assert(!d->has_offset);
    d = stg_report_at(dst, (size_t)tu_find(dst, STG_ZIP_MALFORMED));
    ck_assert_str_eq(d->member, "inner.pkl");
    ck_assert_uint_eq(d->member_offset, 77);
    d = stg_report_at(dst, (size_t)tu_find(dst, STG_CONTAINER_MALFORMED));
    ck_assert_str_eq(d->member, "inner.tar");
    ck_assert(!d->has_member_offset);
    d = stg_report_at(dst, (size_t)tu_find(dst, STG_PICKLE_FILE));
    ck_assert_ptr_null(d->member); /* dst's own findings are untouched */

    ck_assert_uint_eq(stg_report_global_count(dst), 2);
    ck_assert_str_eq(stg_report_global_at(dst, 0)->member, "archive/data.pkl");
    ck_assert_str_eq(stg_report_global_at(dst, 1)->member, "inner.pkl");
    ck_assert_int_eq(stg_report_global_at(dst, 1)->klass, STG_GLOBAL_ALLOWED);
    stg_report_free(dst);
}
END_TEST

START_TEST(test_merge_counts_and_flags)
{
    /* No member: merged findings and globals keep none. Truncated findings of the source are
     * carried over (with their severity), as are its scan-error and out-of-memory states. */
    stg_report *src = new_report(1, STG_PROFILE_STRICT);
    stg_report_add(src, STG_HEADER_NOT_PADDED, 1, "w");
    stg_report_add(src, STG_PICKLE_GLOBAL_UNKNOWN, 2, "c"); /* counted */
    stg_report_add_global(src, "m", 1, "n", 1, 2, NULL, STG_GLOBAL_UNKNOWN);
    stg_report *dst = new_report(10, STG_PROFILE_STRICT);
    stg_report_merge(dst, src, NULL, STG_NO_OFFSET);
    ck_assert_uint_eq(stg_report_count(dst), 1);
    ck_assert_ptr_null(stg_report_at(dst, 0)->member);
    ck_assert_uint_eq(stg_report_truncated(dst), 1);
    ck_assert(stg_report_has(dst, STG_PICKLE_GLOBAL_UNKNOWN));
    ck_assert_ptr_null(stg_report_global_at(dst, 0)->member);
    ck_assert_int_eq(dst->worst, STG_SEV_CRITICAL);
    ck_assert(dst->any);
    stg_report_finish(dst);
    ck_assert_int_eq(stg_report_verdict(dst), STG_VERDICT_UNSAFE);
    ck_assert_int_eq(tu_find(dst, STG_FINDINGS_TRUNCATED), 0);
    stg_report_free(dst);
    stg_report_free(src);

    /* A milder source does not lower the destination's worst severity. */
    dst = new_report(10, STG_PROFILE_STRICT);
    stg_report_add(dst, STG_DATA_GAP, 0, "e");
    stg_report *mild = new_report(10, STG_PROFILE_STRICT);
    stg_report_add(mild, STG_FORMAT_UNKNOWN, STG_NO_OFFSET, "w");
    stg_report_merge(dst, mild, "m", 0);
    ck_assert_int_eq(dst->worst, STG_SEV_ERROR);
    stg_report_free(mild);

    /* An empty source changes nothing but the flags it carries. */
    stg_report *empty = new_report(10, STG_PROFILE_STRICT);
    stg_report_merge(dst, empty, "m", 0);
    ck_assert_int_eq(dst->worst, STG_SEV_ERROR);
    ck_assert_uint_eq(stg_report_count(dst), 2);
    empty->scan_error = true;
    empty->out_of_memory = true;
    stg_report_merge(dst, empty, "m", 0);
    ck_assert(dst->scan_error);
    ck_assert(dst->out_of_memory);
    stg_report_finish(dst);
    ck_assert_int_eq(stg_report_verdict(dst), STG_VERDICT_ERROR);
    stg_report_free(empty);
    stg_report_free(dst);

    /* A source whose findings were all counted, none stored: its severity still counts. */
    dst = new_report(10, STG_PROFILE_STRICT);
    src = new_report(0, STG_PROFILE_STRICT);
    stg_report_add(src, STG_HEADER_NOT_PADDED, 0, "w");
    stg_report_merge(dst, src, "m", 0);
    ck_assert_uint_eq(stg_report_count(dst), 0);
    ck_assert_uint_eq(stg_report_truncated(dst), 1);
    ck_assert(dst->any);
    ck_assert_int_eq(dst->worst, STG_SEV_WARNING);
    stg_report_finish(dst);
    ck_assert_int_eq(stg_report_verdict(dst), STG_VERDICT_WARN);
    stg_report_free(src);
    stg_report_free(dst);

    /* Into an empty destination: the source's worst severity, even a mild one. */
    dst = new_report(10, STG_PROFILE_STRICT);
    src = new_report(10, STG_PROFILE_STRICT);
    stg_report_add_sev(src, STG_FORMAT_UNKNOWN, STG_SEV_INFO, STG_NO_OFFSET, "i");
    stg_report_merge(dst, src, NULL, 0);
    ck_assert(dst->any);
    ck_assert_int_eq(dst->worst, STG_SEV_INFO);
    stg_report_finish(dst);
    ck_assert_int_eq(stg_report_verdict(dst), STG_VERDICT_OK);
    stg_report_free(src);
    stg_report_free(dst);
}
END_TEST

START_TEST(test_merge_into_full_report)
{
    /* Merged findings past the destination's cap are counted there. */
    stg_report *src = new_report(10, STG_PROFILE_STRICT);
    stg_report_add(src, STG_DATA_GAP, 1, "a");
    stg_report_add(src, STG_DATA_GAP, 2, "b");
    stg_report *dst = new_report(1, STG_PROFILE_STRICT);
    stg_report_merge(dst, src, "m", 0);
    ck_assert_uint_eq(stg_report_count(dst), 1);
    ck_assert_uint_eq(stg_report_truncated(dst), 1);
    stg_report_finish(dst);
    ck_assert_uint_eq(stg_report_count(dst), 2);
    ck_assert_int_eq(stg_report_at(dst, 0)->code, STG_FINDINGS_TRUNCATED);
    ck_assert_str_eq(stg_report_at(dst, 1)->member, "m");
    stg_report_free(src);
    stg_report_free(dst);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_test(tc, test_new_defaults);
    tcase_add_test(tc, test_verdict_fails_closed);
    tcase_add_loop_test(tc, test_verdict_table, 0,
                        (int)(sizeof verdict_cases / sizeof verdict_cases[0]));
    tcase_add_test(tc, test_max_findings_at_limit);
    tcase_add_test(tc, test_max_findings_past_limit);
    tcase_add_test(tc, test_max_findings_zero);
    tcase_add_test(tc, test_truncated_marker_once);
    tcase_add_test(tc, test_growth_past_initial_capacity);
    tcase_add_test(tc, test_file_order_stable);
    tcase_add_test(tc, test_messages);
    tcase_add_test(tc, test_has_codes);
    tcase_add_test(tc, test_default_severity);
    tcase_add_test(tc, test_optional_fields);
    tcase_add_test(tc, test_limit_shorthand);
    tcase_add_test(tc, test_globals);
    tcase_add_test(tc, test_facts);
    tcase_add_test(tc, test_null_accessors);
    tcase_add_test(tc, test_merge_member);
    tcase_add_test(tc, test_merge_counts_and_flags);
    tcase_add_test(tc, test_merge_into_full_report);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
