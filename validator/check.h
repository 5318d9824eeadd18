/* One buffer in, one report out (pure: no I/O). Sniffs the format by content (names only as the
 * hints of docs/containers.md) and dispatches to the right rules. Containers call back into
 * stg_check_member for their members, depth-capped by max_nesting. */
#ifndef STG_VALIDATOR_CHECK_H
#define STG_VALIDATOR_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

typedef struct stg_check_ctx {
    const stg_limits *lim;
    const stg_policy *policy; /* NULL: built-in lists */
    stg_report *report;       /* findings go here */
    uint32_t depth;           /* containers/pickles entered so far */
    const char *member;       /* set while inside an archive member (findings carry it) */
    uint64_t member_offset;   /* file offset of that member's local header */
    uint64_t hash_seed;       /* keys the hash tables of input-chosen keys (parser/hash.h):
                                 loader/ draws it from the OS per scan; 0: a fixed default */
} stg_check_ctx;

/* Brings every limit of *lim down to its hard ceiling (STG_*_CEILING in stguard.h): a struct
 * filled by hand cannot raise what a scan may spend past them. */
void stg_limits_clamp(stg_limits *lim);

/* Format of buf by content; name_hint may be NULL. */
stg_format stg_sniff(const uint8_t *buf, size_t len, const char *name_hint);

/* Sniff + dispatch the whole buffer; sets the report's format and size. */
void stg_check_buffer(const uint8_t *buf, size_t len, const char *name_hint, stg_check_ctx *ctx);

/* A payload found inside something else (archive member, decompressed stream, bytes handed to a
 * nested loader): scanned with depth + 1, its findings carrying `member`. */
void stg_check_member(const uint8_t *buf, size_t len, const char *member, uint64_t member_offset,
                      stg_check_ctx *ctx);

#endif
