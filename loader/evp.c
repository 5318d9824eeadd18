/* libcrypto loaded on first use (see evp.h). */
#include "evp.h"

#include <pthread.h>

#include "../parser/dl.h"

static struct {
    EVP_MD_CTX *(*md_ctx_new)(void);
    void (*md_ctx_free)(EVP_MD_CTX *);
    int (*digest_init_ex)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
    int (*digest_update)(EVP_MD_CTX *, const void *, size_t);
    int (*digest_final_ex)(EVP_MD_CTX *, unsigned char *, unsigned int *);
    const EVP_MD *(*sha256)(void);
    const EVP_MD *(*sha1)(void);
} fns;
static bool loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

#define SYM(lib, name, field) stg_dl_sym((lib), (name), &fns.field, sizeof fns.field)

static void load(void)
{
    static const char *const names[] = {STG_LIBCRYPTO_SONAME, NULL};
    void *lib = stg_dl_open_first(names);
    if (lib == NULL) {
        return;
    }
    loaded = SYM(lib, "EVP_MD_CTX_new", md_ctx_new) && SYM(lib, "EVP_MD_CTX_free", md_ctx_free) &&
             SYM(lib, "EVP_DigestInit_ex", digest_init_ex) &&
             SYM(lib, "EVP_DigestUpdate", digest_update) &&
             SYM(lib, "EVP_DigestFinal_ex", digest_final_ex) && SYM(lib, "EVP_sha256", sha256) &&
             SYM(lib, "EVP_sha1", sha1);
}

bool stg_evp_available(void)
{
    return pthread_once(&load_once, load) == 0 && loaded;
}

EVP_MD_CTX *stg_evp_md_ctx_new(void)
{
    return fns.md_ctx_new();
}

void stg_evp_md_ctx_free(EVP_MD_CTX *ctx)
{
    if (ctx != NULL) {
        fns.md_ctx_free(ctx);
    }
}

int stg_evp_digest_init_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl)
{
    return fns.digest_init_ex(ctx, type, impl);
}

int stg_evp_digest_update(EVP_MD_CTX *ctx, const void *d, size_t n)
{
    return fns.digest_update(ctx, d, n);
}

int stg_evp_digest_final_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *n)
{
    return fns.digest_final_ex(ctx, md, n);
}

const EVP_MD *stg_evp_sha256(void)
{
    return fns.sha256();
}

const EVP_MD *stg_evp_sha1(void)
{
    return fns.sha1();
}
