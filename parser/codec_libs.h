/* zlib, liblzma and libbz2, each loaded on first use (dlopen once per process, bound at once):
 * a process that never decompresses (a scan of safetensors files, stg_validate_buffer) never
 * maps them nor pays their relocations and constructors at start-up, about a tenth of a small
 * file's scan as a process (docs/performance.md). Only parser/inflate.c calls these, and only
 * through a table it got from one of the getters. Loading a library reads no input. */
#ifndef STG_PARSER_CODEC_LIBS_H
#define STG_PARSER_CODEC_LIBS_H

#ifdef STG_WITH_ZLIB
#include <zlib.h>
typedef struct stg_zlib_calls {
    int (*inflate_init2)(z_streamp, int, const char *, int); /* inflateInit2_ */
    int (*inflate)(z_streamp, int);
    int (*inflate_end)(z_streamp);
} stg_zlib_calls;
/* NULL when libz.so.1 cannot be loaded or lacks one of the calls. */
const stg_zlib_calls *stg_zlib(void);
#endif

#ifdef STG_WITH_LZMA
#include <lzma.h>
typedef struct stg_lzma_calls {
    lzma_ret (*auto_decoder)(lzma_stream *, uint64_t, uint32_t);
    lzma_ret (*code)(lzma_stream *, lzma_action);
    void (*end)(lzma_stream *);
    lzma_ret (*raw_decoder)(lzma_stream *, const lzma_filter *);
} stg_lzma_calls;
const stg_lzma_calls *stg_lzma(void);
#endif

#ifdef STG_WITH_BZIP2
#include <bzlib.h>
typedef struct stg_bz2_calls {
    int (*decompress_init)(bz_stream *, int, int);
    int (*decompress)(bz_stream *);
    int (*decompress_end)(bz_stream *);
} stg_bz2_calls;
const stg_bz2_calls *stg_bz2(void);
#endif

#endif
