/* Byte framing of the legacy torch formats (bytes -> structure; the rules are in
 * validator/pickle_scan.c and dispatch/containers.c):
 *  - the legacy (torch < 1.6, _legacy_save) file: magic pickle, protocol, sys_info, data
 *    pickles, the storage key list, then per storage an 8-byte element count and its bytes;
 *  - PyTorch 0.1 tar members `storages` and `tensors` (legacy_load of a tar): pickles with raw
 *    records between them. */
#ifndef STG_PARSER_TORCH_H
#define STG_PARSER_TORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cursor.h"

/* true when buf starts like a legacy torch file: the magic number 0x1950a86a20f9469cfc6c
 * pickled on its own (LONG1 after PROTO 2..5, in a FRAME for protocol 4+, or a protocol 0/1
 * LONG line). */
bool stg_torch_legacy_magic(const uint8_t *buf, size_t len);

/* One storage record of a legacy file or of a 0.1 `storages` member: the element count (LE
 * u64) at the cursor. On success the cursor is past the count and *bytes = count x elsize is
 * known to fit what is left; STG_E_TRUNCATED when the count is cut off, STG_E_INT_OVERFLOW
 * when the bytes run past the end (or the product wraps). */
stg_status stg_torch_storage_record(stg_cursor *c, uint64_t elsize, uint64_t *bytes);

/* The raw record after a tensor's argument pickle in a 0.1 `tensors` member: ndim (LE i32), 4
 * pad bytes, ndim sizes, ndim strides and the storage offset (8 bytes each). The cursor moves
 * past it; false (cursor unchanged) when it is cut off or ndim > STG_TORCH01_MAX_NDIM. */
#define STG_TORCH01_MAX_NDIM 64u
bool stg_torch01_tensor_record(stg_cursor *c);

#endif
