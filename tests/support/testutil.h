/* Helpers shared by the Check runners (test code may read the environment; the library never). */
#ifndef STG_TESTUTIL_H
#define STG_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"
#include "parser/inflate.h"
#include "validator/pickle_scan.h"

/* Builds a safetensors file: 8-byte LE length of `header` (plus `pad` spaces), header, data.
 * Returns a malloc'd buffer; *len gets its size. */
uint8_t *tu_st_file(const char *header, size_t pad, const void *data, size_t data_len, size_t *len);

/* Index of the first finding with `code` in r, or -1. */
long tu_find(const stg_report *r, stg_code code);
/* Number of findings with `code`. */
size_t tu_count(const stg_report *r, stg_code code);

/* Validates the bytes with default limits and the given profile; returns the report. */
stg_report *tu_validate(const void *buf, size_t len, stg_profile profile);
stg_report *tu_validate_header(const char *header, const void *data, size_t data_len,
                               stg_profile profile);

/* Scans buf[0..len) as pickles of `flavor` (stg_check_pickles) with lim, or the defaults when
 * lim is NULL; returns the finished report (NULL when it cannot be made). */
stg_report *tu_scan_pickles(const uint8_t *buf, size_t len, stg_pickle_flavor flavor,
                            const stg_limits *lim);
/* Reads a whole file into a malloc'd buffer (NULL on error). */
uint8_t *tu_read_file(const char *path, size_t *len);
/* Writes len bytes to path; 0 on success. */
int tu_write_file(const char *path, const void *buf, size_t len);
/* A fresh temporary directory (mkdtemp under $TMPDIR or /tmp); caller frees the string. */
char *tu_tempdir(void);
/* rm -rf of a temporary directory made by tu_tempdir. */
void tu_rmtree(const char *dir);
/* $STG_SOURCE_DIR joined with rel (static buffer). */
const char *tu_src(const char *rel);
/* Writes the checksum of the 512-byte tar header h (the field counted as spaces, then six octal
 * digits, NUL, space: what tarfile writes). */
void tu_tar_checksum(uint8_t *h);
/* Renders all findings as "code@offset;" into a static buffer, for assertion messages. */
const char *tu_describe(const stg_report *r);
/* n distinct NUL-terminated keys (at most 23 bytes) whose parser/map.h hash under `seed` has
 * low 12 bits 0..1 (bit 0 is always set): one home slot in every map of up to 4096 slots. */
void tu_map_colliding_keys(uint64_t seed, char (*out)[24], size_t n);
/* Runs suite s (CK_NORMAL), frees the runner; EXIT_SUCCESS when no test failed: a runner's main. */
struct Suite;
int tu_run_suite(struct Suite *s);

/* A growable byte buffer for tests that write binary formats (GGUF, protobuf); aborts the test
 * when memory runs out. Free p with free(). */
typedef struct tu_buf {
    uint8_t *p;
    size_t n, cap;
} tu_buf;
void tu_buf_put(tu_buf *b, const void *d, size_t n);

/* File formats fix their byte order, the test host does not: fixtures store integers and floats
 * through these, never by copying a host value. tu_store_le writes the low n bytes of v (n <= 8)
 * little-endian; tu_store_f32_le writes v's IEEE-754 bits little-endian. */
void tu_store_le(uint8_t *dst, uint64_t v, size_t n);
void tu_store_f32_le(uint8_t *dst, float v);

/* The code whose stable name is the first n bytes of name, or 0. */
stg_code tu_code_by_name(const char *name, size_t n);

/* Whether this build decompresses fmt. A build configured with its codec
 * (STG_WITH_ZLIB, _LZMA, _BZIP2) whose library cannot be loaded fails the calling test: the
 * subject is missing, and that must not pass as a skip. A build configured without it returns
 * false once the library has said so (the caller then checks the refusal, or has nothing to
 * test). tu_inflate_built() is the zlib formats'. */
bool tu_inflate_format_built(stg_inflate_format fmt);
bool tu_inflate_built(void);

#endif
