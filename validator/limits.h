/* Caller-filled public structs at the library's entry points (docs/abi.md, "Caller-filled
 * structs"): every entry point that takes one passes it through the check here before reading
 * anything else of it, and works on the copy it returns. */
#ifndef STG_VALIDATOR_LIMITS_H
#define STG_VALIDATOR_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* true for a struct_version this library knows: 1 .. STG_STRUCT_VERSION (0 means the struct was
 * not initialised; a larger one comes from a newer header). */
static inline bool stg_struct_version_known(uint32_t v)
{
    return v >= 1u && v <= STG_STRUCT_VERSION;
}

/* Copies the fields of *in its struct_version knows into *out and gives every newer field its
 * default; reserved space is not read. STG_E_STRUCT_VERSION (and *out the defaults) for an
 * unknown version. */
stg_status stg_limits_accept(const stg_limits *in, stg_limits *out);

/* The start the open calls share (stg_file_open, stg_model_open, stg_gguf_open), in their order
 * (the caller has cleared its *out when out is not NULL): *rep cleared when rep is not NULL;
 * STG_E_BAD_ARG without out (have_out false) or path; STG_E_STRUCT_VERSION for limits of an
 * unknown version; STG_E_NOMEM when the report cannot be made; else STG_OK, *lim pointing at
 * *def (the caller's limits as accepted, or the defaults for NULL) and *r a new report. */
static inline stg_status stg_open_begin(const char *path, bool have_out, stg_report **rep,
                                        const stg_limits **lim, stg_limits *def, stg_report **r)
{
    if (rep != NULL) {
        *rep = NULL;
    }
    if (!have_out || path == NULL) {
        return STG_E_BAD_ARG;
    }
    if (*lim == NULL) {
        stg_limits_default(def);
    } else if (stg_limits_accept(*lim, def) != STG_OK) {
        return STG_E_STRUCT_VERSION;
    }
    *lim = def;
    *r = stg_report_new(def);
    return *r != NULL ? STG_OK : STG_E_NOMEM;
}

/* The end the GGUF and ONNX doors share: a run refused memory (s STG_E_NOMEM) leaves the report
 * incomplete (its verdict says error); the format and size are set and the report finished; a
 * door that got this far (s STG_OK) refuses the file (STG_E_INVALID) when the verdict is
 * invalid or worse. Returns the door's status. */
static inline stg_status stg_open_end(stg_report *r, stg_status s, stg_format format, uint64_t size)
{
    if (s == STG_E_NOMEM) {
        stg_report_oom(r);
    }
    stg_report_set_format(r, format);
    stg_report_set_size(r, size);
    stg_report_finish(r);
    return s == STG_OK && stg_report_verdict(r) >= STG_VERDICT_INVALID ? STG_E_INVALID : s;
}

#endif
