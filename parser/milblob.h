/* Core ML's blob storage file (`weights/weight.bin` of an .mlpackage): the 64-byte records of
 * coremltools' MILBlob storage format (mlmodel/src/MILBlob/Blob/StorageFormat.hpp @
 * f391218c2714481cd2e964b18492a490fed23a79), decoded little-endian through the cursor:
 *   storage_header: u32 count, u32 version (2), seven reserved u64;
 *   blob_metadata:  u32 sentinel (0xDEADBEEF), u32 data type, u64 size in bytes, u64 offset of
 *                   the data, u64 padding in bits, four reserved u64.
 * The first metadata record follows the header (offset 64); the next one is at the end of the
 * previous record's data, rounded up to 64 (StorageReader.cpp, GetAllOffsets). */
#ifndef STG_PARSER_MILBLOB_H
#define STG_PARSER_MILBLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STG_MILBLOB_RECORD 64u
#define STG_MILBLOB_ALIGNMENT 64u
#define STG_MILBLOB_SENTINEL 0xDEADBEEFu
#define STG_MILBLOB_VERSION 2u

typedef struct stg_milblob_header {
    uint32_t count, version;
} stg_milblob_header;

typedef struct stg_milblob_meta {
    uint32_t sentinel, dtype;
    uint64_t size, offset, padding_bits;
} stg_milblob_meta;

/* Decode one 64-byte record from rec[0..len); false when len < 64. */
bool stg_milblob_read_header(const uint8_t *rec, size_t len, stg_milblob_header *h);
bool stg_milblob_read_meta(const uint8_t *rec, size_t len, stg_milblob_meta *m);

/* Where the metadata record after m lies: m's data end rounded up to STG_MILBLOB_ALIGNMENT;
 * false when it wraps. */
bool stg_milblob_next(const stg_milblob_meta *m, uint64_t *next);

#endif
