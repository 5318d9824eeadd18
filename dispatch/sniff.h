/* Content tests the format table uses (internal; the table in formats.c says which test
 * recognises which format, and which wins). Content decides; a name is used only as the
 * hints of docs/containers.md. */
#ifndef STG_DISPATCH_SNIFF_H
#define STG_DISPATCH_SNIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"

/* joblib's old compressed format (joblib < 0.10, numpy_pickle_compat.read_zfile): "ZF", the
 * decompressed length in hex padded with spaces to STG_SNIFF_ZFILE_HEADER bytes, an optional
 * extra space (joblib <= 0.8.4 on Python 2), then one zlib stream. joblib.load reads every file
 * starting with "ZF" this way. true when buf starts with a header joblib accepts
 * (int(field, 16) >= 0); *declared and *data_at (where the zlib stream starts) are then set. */
#define STG_SNIFF_ZFILE_HEADER 21
bool stg_sniff_zfile_header(const uint8_t *buf, size_t len, uint64_t *declared, size_t *data_at);

/* true when name ends with suffix (ASCII case-insensitive; suffix in lower case). */
bool stg_name_hint_has_suffix(const char *name, const char *suffix);

/* Safetensors by content: at least 10 bytes; n = LE u64 of the first 8 bytes with 2 <= n and
 * n <= len - 8; the first header byte that is not JSON whitespace (space, tab, CR, LF) is '{'.
 * Leading whitespace is accepted here so that compat's rule (a warning) can be applied by the
 * validator rather than turning such a file into "unknown". */
bool stg_sniff_is_safetensors(const uint8_t *buf, size_t len);

/* Magic-byte checks of the table's entries (out_of_memory unused: they allocate nothing). */
bool stg_sniff_has_prefix(const uint8_t *buf, size_t len, const char *magic, size_t k);
bool stg_sniff_is_gzip(const uint8_t *buf, size_t len, bool *out_of_memory);
bool stg_sniff_is_bzip2(const uint8_t *buf, size_t len, bool *out_of_memory);
bool stg_sniff_is_xz(const uint8_t *buf, size_t len, bool *out_of_memory);
/* .lzma ("alone") has no magic: the default properties byte, a dictionary size that writers
 * use (2^n or 3 x 2^n, at least 4 KiB) and a plausible uncompressed size (or "unknown"). */
bool stg_sniff_is_lzma_alone(const uint8_t *buf, size_t len, bool *out_of_memory);
bool stg_sniff_is_zstd(const uint8_t *buf, size_t len, bool *out_of_memory);
bool stg_sniff_is_lz4(const uint8_t *buf, size_t len, bool *out_of_memory);
/* RFC 1950 header: deflate, window <= 32 KiB, check bits, no preset dictionary. */
bool stg_sniff_is_zlib(const uint8_t *buf, size_t len, bool *out_of_memory);

/* The common files of a model repository that are no model, recognised only for content that
 * every model rule above left unclaimed (docs/findings.md, "Text, JSON and Git LFS pointers"). */

/* A Git LFS pointer file (spec v1): at most STG_LFS_POINTER_MAX bytes of `key value` lines,
 * the first `version https://git-lfs.github.com/spec/v1` (or the older hawser URL), with an
 * `oid sha256:<64 hex>` line and a `size <digits>` line. */
#define STG_LFS_POINTER_MAX 1024u
typedef struct stg_lfs_pointer {
    char oid[65];  /* lower-case hex SHA-256 of the content the pointer stands for */
    uint64_t size; /* its size in bytes */
} stg_lfs_pointer;
bool stg_sniff_lfs_pointer(const uint8_t *buf, size_t len, stg_lfs_pointer *out);

/* Text: valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF) without NUL,
 * DEL or C0 control characters other than tab, LF, VT, FF, CR and ESC. An empty buffer is text. */
bool stg_sniff_is_text(const uint8_t *buf, size_t len);

/* JSON: text whose first non-whitespace byte is `{` or `[` and that parses as one RFC 8259
 * value followed only by whitespace, nesting at most max_depth, in at most max_memory bytes of
 * parser memory (0: STG_SNIFF_JSON_MEMORY); past either limit it is not called JSON (it is
 * then text, which has the same verdict). */
#define STG_SNIFF_JSON_MEMORY ((uint64_t)64 << 20)
bool stg_sniff_is_json(const uint8_t *buf, size_t len, uint32_t max_depth, uint64_t max_memory);
/* The same, and *out_of_memory (when not NULL) set when the parser was refused memory (the
 * answer is then unsure: the caller fails closed). */
bool stg_sniff_json_document(const uint8_t *buf, size_t len, uint32_t max_depth,
                             uint64_t max_memory, bool *out_of_memory);

#endif
