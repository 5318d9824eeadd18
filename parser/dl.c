/* Run-time library loading (see dl.h). */
#include "dl.h"

#include <dlfcn.h>
#include <string.h>

void *stg_dl_open_first(const char *const *sonames)
{
    for (; *sonames != NULL; sonames++) {
        void *lib = dlopen(*sonames, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (lib != NULL) {
            return lib;
        }
    }
    return NULL;
}

bool stg_dl_sym(void *lib, const char *name, void *fn_ptr, size_t fn_size)
{
    void *p = lib != NULL ? dlsym(lib, name) : NULL;
    if (p == NULL || fn_size != sizeof p) {
        return false;
    }
    memcpy(fn_ptr, &p, sizeof p);
    return true;
}
