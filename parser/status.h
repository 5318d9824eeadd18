/* The one status convention of parser/ (docs/design.md, "Parser status"): a parser function
 * returns a stg_parse_status and, when it is not OK or END, says where and why in a
 * stg_parse_detail. The status says what the caller does next (go on, stop listing, report
 * malformed input, report a limit, fail closed for memory); the detail says what a finding's
 * offset and message are. A parser's finer reason, when a caller or a test needs one, is the
 * detail's `reason` (its own small enum, e.g. stg_pb_error), never a second status enum.
 *
 * Internal only: the public stg_status of include/stguard/stguard.h is unchanged (the ABI);
 * validators turn parse statuses into findings and public statuses. */
#ifndef STG_PARSER_STATUS_H
#define STG_PARSER_STATUS_H

#include <stdint.h>

typedef enum stg_parse_status {
    STG_PARSE_OK = 0,        /* done: a value, field, member or entry was produced */
    STG_PARSE_END = 1,       /* a listing has no more items (not an error) */
    STG_PARSE_MALFORMED = 2, /* the bytes are not the format, or the reader refuses them */
    STG_PARSE_LIMIT = 3,     /* a limit or ceiling was reached: detail.what names it */
    STG_PARSE_NOMEM = 4      /* memory was refused (the arena's cap or the system) */
} stg_parse_status;

typedef struct stg_parse_detail {
    uint64_t offset;   /* absolute offset of the byte or structure concerned */
    const char *what;  /* constant text (never input bytes), NULL when none */
    const char *limit; /* LIMIT: the stg_limits field reached, NULL for a ceiling */
    int reason;        /* the parser's finer reason (its own enum), 0 when none */
} stg_parse_detail;

/* Fills d (when not NULL; no limit named) and returns status: the way a parser fails. */
static inline stg_parse_status stg_parse_fail(stg_parse_detail *d, stg_parse_status status,
                                              uint64_t offset, int reason, const char *what)
{
    if (d != NULL) {
        d->offset = offset;
        d->what = what;
        d->limit = NULL;
        d->reason = reason;
    }
    return status;
}

/* Returns from the calling function with expr's status when it is not STG_PARSE_OK (END and
 * every error alike), as zstd's FORWARD_IF_ERROR does; the callee filled the detail already. */
#define STG_FORWARD_IF_ERROR(expr)                     \
    do {                                               \
        stg_parse_status stg_forward_status_ = (expr); \
        if (stg_forward_status_ != STG_PARSE_OK) {     \
            return stg_forward_status_;                \
        }                                              \
    } while (0)

#endif
