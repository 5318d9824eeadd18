/* Path strings (see path.h). */
#include "path.h"

#include <stdbool.h>
#include <string.h>

#include "../parser/mem.h"

const char *stg_path_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

char *stg_path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        return stg_mem_strndup(".", 1);
    }
    if (slash == path) {
        return stg_mem_strndup("/", 1);
    }
    return stg_mem_strndup(path, (size_t)(slash - path));
}

char *stg_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    bool slash = a > 0 && dir[a - 1] != '/';
    char *p = stg_mem_alloc(a + (slash ? 1 : 0) + b + 1);
    if (p == NULL) {
        return NULL;
    }
    memcpy(p, dir, a);
    if (slash) {
        p[a++] = '/';
    }
    memcpy(p + a, name, b + 1);
    return p;
}
