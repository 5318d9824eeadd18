/* Inputs of the converter: the bytes of a torch zip, a legacy torch file, a .npy or a .npz are
 * framed here, their pickles evaluated (eval.h) and every storage bound to its bytes in the
 * buffer. The buffer must outlive the result. Refusals are findings of `rep`. */
#ifndef STG_CONVERT_INPUT_H
#define STG_CONVERT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../validator/report.h"
#include "eval.h"

/* Reads buf[0..len): on true, *root is the checkpoint's top value (every tensor's storage has
 * data set, data_len >= numel x elsize). On false, rep has the refusal (an error finding). */
bool stg_cv_read_input(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root,
                       stg_report *rep);

/* Adds e->err to rep as a finding (with the global's names when it names one). */
void stg_cv_report_error(const stg_cv_eval *e, stg_report *rep, uint64_t base);

#endif
