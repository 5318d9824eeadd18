/* Tar reader (POSIX ustar, GNU long names, pax `path` records): enough for the PyTorch 0.1
 * checkpoint format (members sys_info, pickle, storages, tensors) and for plain tar archives
 * whose members are sniffed. Every header's checksum is verified; every member's data range lies
 * inside the buffer. Nothing here allocates: names are copied into a fixed buffer. */
#ifndef STG_PARSER_TAR_H
#define STG_PARSER_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STG_TAR_BLOCK 512u
#define STG_TAR_NAME_MAX 4096u /* longer GNU/pax names are container_malformed */

typedef enum stg_tar_result {
    STG_TARR_OK = 0,   /* an entry was produced */
    STG_TARR_END,      /* end-of-archive blocks (or the end of the buffer at a block edge) */
    STG_TARR_MALFORMED /* bad checksum, bad number, data past the end: stop */
} stg_tar_result;

typedef struct stg_tar {
    const uint8_t *buf;
    size_t len;
    uint64_t pos; /* next header */
} stg_tar;

typedef struct stg_tar_entry {
    char name[STG_TAR_NAME_MAX + 1]; /* NUL-terminated (a name holding NUL is cut there) */
    size_t name_len;
    char type; /* '0' (or NUL) regular file, '5' directory, ... */
    uint64_t header_offset;
    uint64_t data_offset;
    uint64_t size; /* data_offset + size <= buffer length */
} stg_tar_entry;

/* true when block (512 bytes) is a ustar or GNU header with a valid checksum. */
bool stg_tar_header_ok(const uint8_t *block, size_t avail);

void stg_tar_init(stg_tar *t, const uint8_t *buf, size_t len);

/* Next member (long-name and pax records are folded into the member they describe). On
 * STG_TARR_MALFORMED, *err_offset and *why say where and what. */
stg_tar_result stg_tar_next(stg_tar *t, stg_tar_entry *e, uint64_t *err_offset, const char **why);

#endif
