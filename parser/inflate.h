/* Decompression with caps on the output: raw deflate, zlib and gzip through zlib, xz and
 * lzma-alone through liblzma, bzip2 through libbz2; the only place those libraries are included.
 * A format whose library the build lacks (STG_WITH_ZLIB, STG_WITH_LZMA, STG_WITH_BZIP2) returns
 * STG_INFLATE_UNAVAILABLE and callers report the data as unscannable (fail closed). */
#ifndef STG_PARSER_INFLATE_H
#define STG_PARSER_INFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum stg_inflate_format {
    STG_INFLATE_RAW = 0,  /* zip method 8 */
    STG_INFLATE_ZLIB = 1, /* RFC 1950 (joblib compress='zlib') */
    STG_INFLATE_GZIP = 2, /* RFC 1952, concatenated members followed like Python's gzip */
    /* xz or lzma-alone (joblib compress='xz' / 'lzma'), read like Python's lzma.LZMAFile:
     * each stream's format is detected, concatenated streams are followed, bytes after the last
     * stream that do not start another one are ignored. */
    STG_INFLATE_LZMA = 3,
    STG_INFLATE_BZIP2 = 4, /* joblib compress='bz2'; streams followed like Python's bz2.BZ2File */
    /* zip method 14, read like Python's zipfile (_LZMADecompressor): a 4-byte header (version,
     * then the properties' size, which must be 5), the 5 LZMA1 properties (lc/lp/pb, dictionary
     * size), then one raw LZMA1 stream; nothing after its end marker is read. A dictionary past
     * STG_INFLATE_LZMA_MEMLIMIT is STG_INFLATE_TOO_BIG. */
    STG_INFLATE_ZIP_LZMA = 5
} stg_inflate_format;

typedef enum stg_inflate_result {
    STG_INFLATE_OK = 0,
    STG_INFLATE_TOO_BIG,   /* output would pass max_out */
    STG_INFLATE_RATIO,     /* output / input passed max_ratio */
    STG_INFLATE_CORRUPT,   /* invalid stream */
    STG_INFLATE_TRUNCATED, /* input ended before the stream did */
    STG_INFLATE_NOMEM,
    STG_INFLATE_UNAVAILABLE /* built without the format's library */
} stg_inflate_result;

/* Output below this size is never judged by the ratio: small, highly compressible payloads
 * (zero-filled arrays) are normal, and bombs need size to hurt. */
#define STG_INFLATE_RATIO_FLOOR (1u << 20)

typedef struct stg_inflate_out {
    uint8_t *data;       /* stg_mem_alloc'd; release with stg_inflate_free (NULL when empty) */
    size_t len;          /* bytes produced (also on failure: what was produced before it) */
    size_t consumed;     /* input bytes the stream(s) used; < in_len means trailing bytes */
    size_t error_offset; /* input position where a failure was seen */
} stg_inflate_out;

/* The most memory liblzma may use for one stream's decoder (mostly the dictionary its header
 * declares, allocated whole): 4 x what xz's highest preset (-9, 64 MiB dictionary) needs. A
 * stream that needs more is STG_INFLATE_TOO_BIG. libbz2's decoder needs at most ~3.7 MiB. */
#define STG_INFLATE_LZMA_MEMLIMIT ((uint64_t)256 << 20)

/* Inflates in[0..in_len). max_out: the output cap (max_inflate_bytes); max_ratio: output may
 * not exceed max_ratio x in_len once past STG_INFLATE_RATIO_FLOOR (0: no ratio cap). Memory:
 * the output buffer, at most max_out bytes (+ geometric slack below it), plus the decoder's
 * state (zlib ~44 KiB, libbz2 <= 3.7 MiB, liblzma <= STG_INFLATE_LZMA_MEMLIMIT), all of it
 * allocated through parser/mem.h. */
stg_inflate_result stg_inflate(const uint8_t *in, size_t in_len, stg_inflate_format fmt,
                               uint64_t max_out, uint32_t max_ratio, stg_inflate_out *out);

void stg_inflate_free(stg_inflate_out *out);

/* true when this build can inflate zlib/gzip/raw deflate. */
bool stg_inflate_available(void);

/* true when this build can decompress fmt. */
bool stg_inflate_format_available(stg_inflate_format fmt);

#endif
