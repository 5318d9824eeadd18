/* Our own zip reader (no library: the reader must see what loaders see, and disagreements
 * between a local header and the central directory are findings, not errors to hide).
 *
 * The loaders do not agree on which central directory a file has, so stg_zip_open_as reads
 * it the way one given reader does (stg_zip_reader): which end record it takes, whether it
 * follows a ZIP64 locator, where it places the directory and whether it corrects offsets for
 * bytes prepended to the archive (`base`). It never falls back to an earlier end record when
 * the last one is unusable: neither reader does. stg_zip_next then yields one central-directory
 * entry at a time, cross-checked against its local header. Every offset is absolute in the
 * buffer and every range it yields lies inside it. Nothing here allocates. */
#ifndef STG_PARSER_ZIP_H
#define STG_PARSER_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inflate.h"

/* The signatures a zip starts with: a local header, or the end record of an empty archive. */
#define STG_ZIP_LOCAL_MAGIC "PK\x03\x04"
#define STG_ZIP_END_MAGIC "PK\x05\x06"

#define STG_ZIP_EOCD_SEARCH 65557u /* 22-byte end record + 65,535-byte comment */

/* How far from the end each reader looks for the end record's signature. zipfile reads the
 * last 65,536 + 22 bytes. miniz reads 4 KiB blocks backwards, each starting 4,093 bytes before
 * the previous one, and gives up after the block that reaches 65,535 + 22 bytes from the end
 * (the 17th: 4,096 + 16 x 4,093 bytes); a block that would start before byte 0 is a failed
 * read, so in a file of more than 4 KiB its window ends at the lowest block start that is not
 * negative (stg_zip_open_as). */
#define STG_ZIP_ZIPFILE_SEARCH 65558u
#define STG_ZIP_MINIZ_SEARCH 69584u

/* The readers a loader uses (docs/containers.md, "Which central directory"). */
typedef enum stg_zip_reader {
    STG_ZIP_READER_ZIPFILE = 0, /* Python's zipfile: numpy.load (.npz), joblib, custom loaders */
    STG_ZIP_READER_MINIZ = 1    /* torch.load / torch.jit.load (PyTorchStreamReader, miniz) */
} stg_zip_reader;
#define STG_ZIP_READERS 2

/* Bits of stg_zip_entry.mismatch: what the local header says differently. */
#define STG_ZIP_MISMATCH_NAME 0x1u
#define STG_ZIP_MISMATCH_SIZES 0x2u
#define STG_ZIP_MISMATCH_METHOD 0x4u
#define STG_ZIP_MISMATCH_FLAGS 0x8u

/* General-purpose flag bits that mean "encrypted" or "patched data" (reported, ignored). */
#define STG_ZIP_FLAGS_ENCRYPTED 0x61u

typedef enum stg_zip_result {
    STG_ZIPR_OK = 0,    /* an entry was produced */
    STG_ZIPR_END,       /* no more entries */
    STG_ZIPR_NOT_FOUND, /* no end record that parses (not a zip) */
    STG_ZIPR_ENTRY_BAD, /* this entry's local header or data range is unusable; the central
                              fields of *e are valid; iteration may go on */
    STG_ZIPR_MALFORMED, /* the central directory is broken: stop */
    STG_ZIPR_NEED       /* windowed reading only (stg_zip_open_windowed): the bytes
                           [err.offset, err.offset + err.len) must be read in first; the reader's
                           state is what it was before the call, so the call is made again */
} stg_zip_result;

typedef struct stg_zip_error {
    uint64_t offset;  /* absolute offset of the structure concerned */
    const char *what; /* constant text */
    uint64_t len;     /* STG_ZIPR_NEED: how many bytes from offset */
} stg_zip_error;

/* Windowed reading: true when the caller holds buf[offset, offset + len) (the rest of buf may
 * be anything; it is never read). */
typedef bool (*stg_zip_have_fn)(void *ctx, uint64_t offset, uint64_t len);

typedef struct stg_zip {
    const uint8_t *buf;
    size_t len;
    stg_zip_reader reader;
    uint64_t eocd_offset; /* the classic end record */
    uint64_t cd_start;    /* absolute */
    uint64_t cd_size;
    uint64_t entry_count; /* as declared (miniz reads this many; zipfile reads cd_size bytes) */
    uint64_t base;        /* bytes before the archive (offsets in it are relative to base) */
    uint64_t base_below;  /* zipfile only: the declared directory offset lies this far past
                           * where the directory is; every local offset moves back by it */
    bool zip64;
    uint32_t miniz_disk;   /* miniz only: the end record's disk number its entries must match */
    bool miniz_zip64_seen; /* miniz only: an entry had a ZIP64 field (later ones go unchecked) */
    uint64_t next_pos;     /* iteration state: next central header */
    uint64_t next_index;
    stg_zip_have_fn have; /* NULL: every byte of buf is there */
    void *have_ctx;
} stg_zip;

/* The codec of a zip compression method that stguard reads (parser/inflate.h): 8 deflate (every
 * reader); 12 bzip2 and 14 LZMA, which Python's zipfile (so numpy.load) reads through
 * bz2.BZ2Decompressor (one stream) and its _LZMADecompressor, and miniz (so torch.load) refuses.
 * false for 0 (stored) and for every other method. */
bool stg_zip_method_format(uint16_t method, stg_inflate_format *fmt);

typedef struct stg_zip_entry {
    uint64_t index;
    uint64_t cd_offset;  /* absolute offset of the central header */
    const uint8_t *name; /* central name bytes (not NUL-terminated, inside the buffer) */
    size_t name_len;
    uint16_t flags, method;
    uint32_t crc32;
    uint64_t comp_size, uncomp_size;
    uint64_t local_offset; /* absolute offset of the local header; UINT64_MAX when the central
                            * entry failed before giving one */
    /* From the local header (valid when stg_zip_next returned STG_ZIPR_OK): */
    const uint8_t *local_name;
    size_t local_name_len;
    uint16_t local_flags, local_method;
    bool local_sizes_known; /* false: data-descriptor flag with zero sizes in the header */
    uint64_t local_comp_size, local_uncomp_size;
    uint64_t data_offset; /* absolute offset of the member's (compressed) bytes */
    uint64_t data_len;    /* comp_size: data_offset + data_len <= buffer length */
    unsigned mismatch;    /* STG_ZIP_MISMATCH_* */
} stg_zip_entry;

/* Opens buf the way `reader` does: its end record (the last signature in its search window),
 * its ZIP64 rules, its directory placement, and the checks it makes on every central header
 * before it lets anything be read (a reader that refuses the archive loads nothing from it).
 * STG_ZIPR_NOT_FOUND when the reader finds no end record signature it could use;
 * STG_ZIPR_MALFORMED (err set: where, and what the reader does) when it finds one but refuses
 * the archive. */
stg_zip_result stg_zip_open_as(stg_zip *z, const uint8_t *buf, size_t len, stg_zip_reader reader,
                               stg_zip_error *err);

/* stg_zip_open_as for a caller that holds only parts of buf (loader/zip_window.c): before any
 * read of bytes outside the last STG_ZIP_WINDOW_TAIL bytes (which must be held) it asks have(),
 * and a missing range is STG_ZIPR_NEED (from stg_zip_next too, with the iteration state left as
 * it was before that call). Read the range in and call again: the readings then are those
 * stg_zip_open_as gives on the whole buffer, since the same bytes are read in the same order. */
#define STG_ZIP_WINDOW_TAIL (STG_ZIP_MINIZ_SEARCH + 76u)
stg_zip_result stg_zip_open_windowed(stg_zip *z, const uint8_t *buf, size_t len,
                                     stg_zip_reader reader, stg_zip_have_fn have, void *have_ctx,
                                     stg_zip_error *err);

/* stg_zip_open_as with Python's zipfile rules (the reader that opens the most files: it
 * corrects for prepended bytes). */
stg_zip_result stg_zip_open(stg_zip *z, const uint8_t *buf, size_t len, stg_zip_error *err);

/* Whether a and b, opened from the same buffer, read the same entries from the same places
 * (same directory bytes, same local header offsets). */
bool stg_zip_same_reading(const stg_zip *a, const stg_zip *b);

/* Name of a reader as the loaders using it are known ("zipfile", "miniz"). */
const char *stg_zip_reader_name(stg_zip_reader reader);

/* Next entry. On STG_ZIPR_ENTRY_BAD and STG_ZIPR_MALFORMED, err says what and where. */
stg_zip_result stg_zip_next(stg_zip *z, stg_zip_entry *e, stg_zip_error *err);

/* The archive's first byte, as polyglot_zip reports it: its lowest real local header offset,
 * or its central directory when no entry gives one. Walks a copy of *z (iteration state kept). */
uint64_t stg_zip_first_byte(const stg_zip *z);

/* Recovery walk for an archive whose central directory is unusable: reads the local header at
 * *pos (the central fields of *e are filled from it) and moves *pos past its data.
 * STG_ZIPR_END when no local header signature is at *pos; STG_ZIPR_ENTRY_BAD (err set) when the
 * header is truncated or its size is unknown (data descriptor) or runs past the end. Only a
 * fallback: loaders read the central directory, so what this finds is scanned, never trusted. */
stg_zip_result stg_zip_local_next(const uint8_t *buf, size_t len, uint64_t *pos, stg_zip_entry *e,
                                  stg_zip_error *err);

/* A byte range [begin, end) an entry occupies (local header through data), for overlap checks. */
typedef struct stg_zip_range {
    uint64_t begin, end;
    uint64_t index;
} stg_zip_range;

/* Sorts v by begin (in place, no recursion, no allocation) and returns the number of ranges
 * that start before the previous one ended; *first_overlap gets the sorted position of the
 * first such range (when any). Empty ranges never overlap. */
size_t stg_zip_sort_overlaps(stg_zip_range *v, size_t n, size_t *first_overlap);

#endif
