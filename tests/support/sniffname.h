/* The name of what the format table's ordered sniffs take bytes for (the filter's name for a
 * compressed stream), "unknown" when no entry does: what the tests compare. */
#ifndef STG_TESTS_SNIFFNAME_H
#define STG_TESTS_SNIFFNAME_H

#include "dispatch/formats.h"

static inline const char *tu_sniffed(const uint8_t *buf, size_t len)
{
    const stg_format_entry *e = stg_format_sniff(buf, len, NULL);
    const stg_filter_entry *f = stg_filter_sniff(buf, len);
    if (e == NULL) {
        return "unknown";
    }
    return strcmp(e->name, "compressed stream") == 0 && f != NULL ? f->name : e->name;
}

#endif
