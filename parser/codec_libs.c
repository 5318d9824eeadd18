/* Decompression libraries loaded on first use (see codec_libs.h). */
#include "codec_libs.h"

#if defined(STG_WITH_ZLIB) || defined(STG_WITH_LZMA) || defined(STG_WITH_BZIP2)

#include <pthread.h>
#include <stdbool.h>

#include "dl.h"

#define SYM(lib, name, calls, field) stg_dl_sym((lib), (name), &(calls).field, sizeof(calls).field)

#endif

#ifdef STG_WITH_ZLIB
static stg_zlib_calls zlib_calls;
static bool zlib_loaded;
static pthread_once_t zlib_once = PTHREAD_ONCE_INIT;

static void load_zlib(void)
{
    static const char *const names[] = {"libz.so.1", NULL};
    void *lib = stg_dl_open_first(names);
    zlib_loaded = SYM(lib, "inflateInit2_", zlib_calls, inflate_init2) &&
                  SYM(lib, "inflate", zlib_calls, inflate) &&
                  SYM(lib, "inflateEnd", zlib_calls, inflate_end);
}

const stg_zlib_calls *stg_zlib(void)
{
    return pthread_once(&zlib_once, load_zlib) == 0 && zlib_loaded ? &zlib_calls : NULL;
}
#endif

#ifdef STG_WITH_LZMA
static stg_lzma_calls lzma_calls;
static bool lzma_loaded;
static pthread_once_t lzma_once = PTHREAD_ONCE_INIT;

static void load_lzma(void)
{
    static const char *const names[] = {"liblzma.so.5", NULL};
    void *lib = stg_dl_open_first(names);
    lzma_loaded = SYM(lib, "lzma_auto_decoder", lzma_calls, auto_decoder) &&
                  SYM(lib, "lzma_code", lzma_calls, code) &&
                  SYM(lib, "lzma_end", lzma_calls, end) &&
                  SYM(lib, "lzma_raw_decoder", lzma_calls, raw_decoder);
}

const stg_lzma_calls *stg_lzma(void)
{
    return pthread_once(&lzma_once, load_lzma) == 0 && lzma_loaded ? &lzma_calls : NULL;
}
#endif

#ifdef STG_WITH_BZIP2
static stg_bz2_calls bz2_calls;
static bool bz2_loaded;
static pthread_once_t bz2_once = PTHREAD_ONCE_INIT;

static void load_bz2(void)
{
    /* Debian and Fedora name it libbz2.so.1.0 and libbz2.so.1; both are the same ABI. */
    static const char *const names[] = {"libbz2.so.1.0", "libbz2.so.1", NULL};
    void *lib = stg_dl_open_first(names);
    bz2_loaded = SYM(lib, "BZ2_bzDecompressInit", bz2_calls, decompress_init) &&
                 SYM(lib, "BZ2_bzDecompress", bz2_calls, decompress) &&
                 SYM(lib, "BZ2_bzDecompressEnd", bz2_calls, decompress_end);
}

const stg_bz2_calls *stg_bz2(void)
{
    return pthread_once(&bz2_once, load_bz2) == 0 && bz2_loaded ? &bz2_calls : NULL;
}
#endif

#if !defined(STG_WITH_ZLIB) && !defined(STG_WITH_LZMA) && !defined(STG_WITH_BZIP2)
typedef int stg_codec_libs_none; /* a build without any: ISO C wants a declaration here */
#endif
