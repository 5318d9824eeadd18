/* Polyglots (docs/findings.md and docs/containers.md): bytes that one loader reads as safetensors (or as a
 * pickle) and another as something else. Routing follows the loaders: offset 0 decides the
 * primary format; what is found besides it is reported and, where the design says, scanned. */
#ifndef STG_DISPATCH_POLYGLOT_H
#define STG_DISPATCH_POLYGLOT_H

#include <stddef.h>
#include <stdint.h>

#include "../validator/ctx.h"

/* An archive without entries (an end record alone, e.g. "PK\5\6" and 18 zero bytes inside tensor
 * data) carries no payload and is not reported.
 *
 * For a buffer whose primary format is safetensors (stg_validate_buffer and stg_check_buffer
 * call it after the safetensors rules):
 *  - a zip end-of-central-directory in the last 65,557 bytes that parses: polyglot_zip (strict
 *    error / compat warning) at the archive's first byte; in strict the archive's members are
 *    scanned and their findings added; compat scans no payload;
 *  - bytes at offset 0 that a pickle reader follows to STOP: polyglot_pickle at 0 (strict error /
 *    compat warning); in strict that pickle's globals are reported as for any pickle;
 *  - a first block tarfile would open: polyglot_tar (stg_polyglot_check_tar). */
/* For a buffer whose primary format (safetensors, .npy, GGUF) is decided by its first bytes but
 * that torch.load, which tries tarfile before anything but zip, would open as a tar:
 * polyglot_tar at 0 (strict error / compat warning); in strict the tar's members are scanned as
 * torch would read them. Called for safetensors by stg_polyglot_check_safetensors. */
void stg_polyglot_check_tar(const uint8_t *buf, size_t len, const char *primary,
                            stg_check_ctx *ctx);

void stg_polyglot_check_safetensors(const uint8_t *buf, size_t len, stg_check_ctx *ctx);

/* For a buffer that starts with a zip end record ("PK\5\6": numpy.load's magic check and Python's
 * zipfile take it as a zip, an empty one when its comment covers the rest) rather than a local
 * header: torch.load's _is_zipfile wants "PK\3\4" at byte 0, so torch takes its legacy route,
 * which opens the bytes with tarfile first. When the first block is a tar header tarfile
 * accepts: polyglot_tar at 0 (strict error / compat warning) and the tar's members scanned in
 * both profiles (that is what torch.load reads); res->pickle_based is set when a pickle was. */
void stg_polyglot_check_zip_tar(const uint8_t *buf, size_t len, stg_check_ctx *ctx,
                                stg_member_result *res);

/* For a buffer whose primary format is a pickle (or legacy torch): a zip found at its end is
 * reported as polyglot_zip (strict error / compat warning) and its members scanned in both
 * profiles (a scanner must see what zip-routing tools would load). */
void stg_polyglot_check_pickle(const uint8_t *buf, size_t len, stg_check_ctx *ctx);

#endif
