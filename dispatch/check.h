/* The dispatcher (internal): one buffer in, one report out (pure: no I/O). The table of formats
 * (formats.h) decides what the bytes are (content first, names only as the hints of
 * docs/containers.md) and which rules run. Payloads found inside come back through ctx->scan
 * (validator/ctx.h), which stg_check_ctx_init and stg_check_buffer install. */
#ifndef STG_DISPATCH_CHECK_H
#define STG_DISPATCH_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "../validator/ctx.h"
#include "../validator/report.h"
#include "stguard/stguard.h"

/* A context for lim and report with the dispatcher's callback installed and nothing else set
 * (no policy, depth 0, no member, the default hash seed). */
void stg_check_ctx_init(stg_check_ctx *ctx, const stg_limits *lim, stg_report *report);

/* Brings every limit of *lim down to its hard ceiling (STG_*_CEILING in stguard.h): a struct
 * filled by hand cannot raise what a scan may spend past them. */
void stg_limits_clamp(stg_limits *lim);

/* Format of buf without running any rule (the table's quick label); name_hint may be NULL. */
stg_format stg_sniff(const uint8_t *buf, size_t len, const char *name_hint);

/* Sniff + dispatch the whole buffer; sets the report's format and size (and ctx->scan). */
void stg_check_buffer(const uint8_t *buf, size_t len, const char *name_hint, stg_check_ctx *ctx);

#endif
