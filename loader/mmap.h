/* The mmap loader's internals shared with loader/model.c (the public side is stg_file_* in
 * include/stguard/stguard.h). */
#ifndef STG_LOADER_MMAP_H
#define STG_LOADER_MMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "../validator/report.h"
#include "../validator/safetensors.h"
#include "door.h"
#include "stguard/stguard.h"

struct stg_file {
    stg_door_file src;  /* descriptor, path, identity and size when validated (loader/door.h) */
    const uint8_t *map; /* read-only mapping of size bytes (NULL when size is 0) */
    uint8_t *hdr;       /* private copy of the n header bytes: names may point into it */
    stg_st_header h;    /* tensors sorted by (begin, end) once the layout stage ran */
    size_t *by_name;    /* indices into h.tensors sorted by name bytes (schema_ok only) */
    uint32_t shard;     /* stamped into every tensor's `shard` (stg_model) */
};

/* Opens, maps and validates path, adding findings to r (not finished). On STG_OK *out is the
 * file whatever the findings say (the caller decides what to expose; the table is usable when
 * out->h.schema_ok). On STG_E_IO, r holds io_error or not_regular_file and *out is NULL; on
 * STG_FILE_CHANGED (the file shrank or changed while it was read) r holds file_changed. */
stg_status stg_file_open_report(const char *path, const stg_limits *lim, stg_report *r,
                                stg_file **out);

/* true when f's file still has the size, modification time and identity it had when it was
 * validated (stg_door_file_unchanged of its source). */
bool stg_file_unchanged(const stg_file *f);

#endif
