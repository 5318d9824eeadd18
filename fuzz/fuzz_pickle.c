/* Target: stg_check_pickles / stg_check_npy / stg_pickle_sniff, stg_pickle_sniff_acts,
 * stg_pickle_sniff_imports and stg_pickle_sniff_file (validator/pickle_scan.c over
 * parser/pickle.c). Seeds: corpus/pickle/. Dict: fuzz/pickle.dict.
 *
 * Input: 4 configuration bytes, then the bytes scanned.
 *   byte 0: flavor (bits 0-1: raw, torch legacy, member, .npy), max_nesting (bits 4-6, 0..4)
 *   byte 1: max_pickle_stack = 4 + 64 * b;  byte 2: max_pickle_memo = 1 + 16 * b
 *   byte 3: max_pickle_string = 256 * (b + 1)
 * Properties checked (abort on failure):
 *   - the same bytes give the same findings (code, severity, offset) and globals, twice;
 *   - a buffer the sniffer says is no complete pickle never scans ok or warn (raw flavor);
 *   - bytes the member sniff takes (an import, or a limit) are taken by the file sniff too;
 *   - the first-pickle sniff takes a subset of the file sniff's, and its settled window walk
 *     answers for the whole buffer;
 *   - a dangerous or unknown global always makes the verdict unsafe;
 *   - every finding outside a nested member has an offset inside the buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "parser/torch.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

static stg_report *run(const uint8_t *buf, size_t len, unsigned flavor, const stg_limits *lim)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return NULL;
    }
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, lim, r);
    if (flavor == 3) {
        stg_check_npy(buf, len, 0, &ctx);
    } else {
        stg_check_pickles(buf, len, 0, (stg_pickle_flavor)flavor, &ctx);
    }
    stg_report_finish(r);
    return r;
}

static void same(const stg_report *a, const stg_report *b)
{
    if (stg_report_count(a) != stg_report_count(b) ||
        stg_report_global_count(a) != stg_report_global_count(b) ||
        stg_report_verdict(a) != stg_report_verdict(b)) {
        abort();
    }
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *x = stg_report_at(a, i), *y = stg_report_at(b, i);
        if (x->code != y->code || x->severity != y->severity || x->offset != y->offset ||
            x->has_offset != y->has_offset) {
            abort();
        }
    }
    for (size_t i = 0; i < stg_report_global_count(a); i++) {
        const stg_global *x = stg_report_global_at(a, i), *y = stg_report_global_at(b, i);
        if (x->klass != y->klass || x->offset != y->offset || strcmp(x->module, y->module) != 0 ||
            strcmp(x->name, y->name) != 0) {
            abort();
        }
    }
}

/* The first-pickle sniff (no persistent_load): what it takes the any-reader sniff takes too,
 * ending at the same STOP; and a walk of the first half that settles (not ran_out) gives the
 * whole buffer's answer, which loader/window.c relies on to stop copying. */
static void first_pickle_properties(const uint8_t *buf, size_t len)
{
    size_t end_file = 0, end_any = 0, end_half = 0;
    bool ran_out = false, oom = false;
    bool file = stg_pickle_sniff_file(buf, len, len, &end_file, NULL, NULL, &oom);
    bool any = stg_pickle_sniff(buf, len, &end_any, &oom);
    if (oom) {
        return;
    }
    if (file && (!any || end_file != end_any)) {
        abort();
    }
    bool half = stg_pickle_sniff_file(buf, len / 2, len, &end_half, &ran_out, NULL, &oom);
    if (!oom && !ran_out && (half != file || (half && end_half != end_file))) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) {
        return 0;
    }
    stg_limits lim;
    stg_limits_default(&lim);
    unsigned flavor = data[0] & 3u;
    lim.max_nesting = ((unsigned)data[0] >> 4 & 7u) % 5u;
    lim.max_pickle_stack = 4u + 64u * data[1];
    lim.max_pickle_memo = 1u + 16u * data[2];
    lim.max_pickle_string = 256u * ((uint64_t)data[3] + 1u);
    lim.max_findings = 64;
    const uint8_t *buf = data + 4;
    size_t len = size - 4;

    stg_report *a = run(buf, len, flavor, &lim);
    stg_report *b = run(buf, len, flavor, &lim);
    if (a == NULL || b == NULL) {
        stg_report_free(a);
        stg_report_free(b);
        return 0;
    }
    same(a, b);
    stg_verdict v = stg_report_verdict(a);
    if (flavor == 0 && !stg_pickle_sniff(buf, len, NULL, NULL) &&
        (v == STG_VERDICT_OK || v == STG_VERDICT_WARN)) {
        abort();
    }
    for (size_t i = 0; i < stg_report_global_count(a); i++) {
        stg_global_class k = stg_report_global_at(a, i)->klass;
        if ((k == STG_GLOBAL_DANGEROUS || k == STG_GLOBAL_UNKNOWN) && v != STG_VERDICT_UNSAFE &&
            v != STG_VERDICT_ERROR) {
            abort();
        }
    }
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *f = stg_report_at(a, i);
        if (f->member == NULL && f->has_offset && f->offset > len) {
            abort();
        }
    }
    if (stg_pickle_sniff_imports(buf, len, NULL) && !stg_pickle_sniff_acts(buf, len, NULL)) {
        abort();
    }
    first_pickle_properties(buf, len);
    (void)stg_torch_legacy_magic(buf, len);
    stg_report_free(a);
    stg_report_free(b);
    return 0;
}
