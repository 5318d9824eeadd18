/* A checkpoint's values in memory, for a caller that builds its own objects from them (the
 * Python package's load_pickle, python/src/_stguard.c): the scan and the restricted evaluation
 * of stg_convert_buffer (convert.c), without the plan and the output. Nothing runs. */
#ifndef STG_CONVERT_LOAD_H
#define STG_CONVERT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval.h"
#include "stguard/stguard.h"

/* Scans buf[0..len) (name_hint as stg_scan_buffer takes it) with opt (NULL: defaults); when
 * the verdict is at worst warn, evaluates it (a torch zip or legacy file, .npy, .npz).
 * STG_OK: *root is the checkpoint's top value, its storages in ev->storages each bound to at
 * least numel x elsize bytes (inside buf or memory ev owns: buf must outlive ev); free ev with
 * stg_cv_free, also after a refusal. STG_E_INVALID: refused, *rep says why (the scan's
 * findings, or the evaluator's refusal). Other statuses: a bad argument, no memory. *rep is set
 * whenever the status is not STG_E_BAD_ARG / STG_E_STRUCT_VERSION / a bad limit. */
stg_status stg_cv_load_buffer(const uint8_t *buf, size_t len, const char *name_hint,
                              const stg_scan_options *opt, stg_cv_eval *ev, stg_cv **root,
                              stg_report **rep);

/* true, with a convert_unsupported error in rep, when the scan report has a finding that means
 * loading the file runs code, whatever severity the profile or policy gave it (a TorchScript
 * archive, a pickle global outside the weights-only allowlist, a nested loader, ...). */
bool stg_cv_refuse_code_runs(const stg_report *scan, stg_report *rep);

#endif
