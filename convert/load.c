/* stg_cv_load_buffer (load.h): the scan, then the evaluation, as stg_convert_buffer runs them. */
#include "load.h"

#include <string.h>

#include "../validator/limits.h"
#include "../validator/report.h"
#include "input.h"

/* Findings that mean loading the file runs code, whatever severity the profile or a caller's
 * policy gave them (torchscript_program is a warning: torch.load hands such an archive to
 * torch.jit.load). The converter turns only plain data into tensors; a file whose loader would
 * run something is never presented as its weights. */
static const stg_code code_runs[] = {
    STG_TORCHSCRIPT_PROGRAM,      STG_PICKLE_GLOBAL_BENIGN,    STG_PICKLE_GLOBAL_DANGEROUS,
    STG_PICKLE_GLOBAL_UNKNOWN,    STG_PICKLE_GLOBAL_UNRESOLVED, STG_PICKLE_NESTED,
    STG_PICKLE_BUILD_ON_GLOBAL,   STG_PICKLE_FRAME_DIVERGENCE,
};

/* true (and an error finding in rep) when the scan has a finding of code_runs. */
bool stg_cv_refuse_code_runs(const stg_report *scan, stg_report *rep)
{
    for (size_t i = 0; i < sizeof code_runs / sizeof code_runs[0]; i++) {
        if (stg_report_has(scan, code_runs[i])) {
            (void)stg_report_add(rep, STG_CONVERT_UNSUPPORTED, STG_NO_OFFSET,
                                 "the scan found that loading the file runs code (%s): not "
                                 "converted",
                                 stg_code_name(code_runs[i]));
            return true;
        }
    }
    return false;
}

stg_status stg_cv_load_buffer(const uint8_t *buf, size_t len, const char *name_hint,
                              const stg_scan_options *opt, stg_cv_eval *ev, stg_cv **root,
                              stg_report **rep)
{
    memset(ev, 0, sizeof *ev);
    *root = NULL;
    *rep = NULL;
    if (buf == NULL && len > 0) {
        return STG_E_BAD_ARG;
    }
    stg_scan_options so;
    stg_scan_options_default(&so);
    if (opt != NULL) {
        if (!stg_struct_version_known(opt->struct_version)) {
            return STG_E_STRUCT_VERSION;
        }
        so = *opt;
        stg_status st = stg_limits_accept(&opt->limits, &so.limits);
        if (st != STG_OK) {
            return st;
        }
    }
    so.digest = false;
    static const uint8_t empty[1] = {0};
    const uint8_t *in = buf != NULL ? buf : empty;
    stg_report *r = stg_report_new(&so.limits);
    if (r == NULL) {
        return STG_E_NOMEM;
    }
    *rep = r;
    stg_report *scan = NULL;
    stg_status st = stg_scan_buffer(in, len, name_hint, &so, &scan);
    if (st == STG_OK) {
        stg_report_merge(r, scan, NULL, 0);
        stg_report_set_format(r, stg_report_format(scan));
        if (stg_report_verdict(scan) > STG_VERDICT_WARN || stg_cv_refuse_code_runs(scan, r)) {
            st = STG_E_INVALID; /* the scan's findings say why */
        }
    }
    stg_report_free(scan);
    if (st == STG_OK) {
        stg_cv_limits cl;
        stg_cv_limits_from(&so.limits, &cl);
        stg_cv_init(ev, &cl);
        if (!stg_cv_read_input(in, len, ev, root, r)) {
            *root = NULL;
            st = STG_E_INVALID;
        }
    }
    stg_report_finish(r);
    return st;
}
