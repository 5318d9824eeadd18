/* Path containment (see within.h). */
#include "within.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

bool stg_path_inside(const char *path, const char *root_real)
{
    size_t n = strlen(root_real);
    if (strcmp(root_real, "/") == 0) {
        return path[0] == '/';
    }
    return strncmp(path, root_real, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

stg_within stg_path_within_realpath(const char *root, const char *path)
{
    char rr[PATH_MAX], rp[PATH_MAX];
    if (realpath(root, rr) == NULL) {
        return STG_WITHIN_ROOT_ERROR;
    }
    if (realpath(path, rp) == NULL) {
        return STG_WITHIN_PATH_ERROR;
    }
    return stg_path_inside(rp, rr) ? STG_WITHIN_YES : STG_WITHIN_NO;
}

/* path spelled below root: the rest after root and its slashes ("." for root itself), or NULL
 * when path does not start with root's components. */
static const char *below(const char *root, const char *path)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') {
        n--;
    }
    if (n == 1 && root[0] == '/') {
        n = 0; /* every absolute path is spelled below "/" */
        if (path[0] != '/') {
            return NULL;
        }
    } else if (n == 0 || strncmp(path, root, n) != 0 || (path[n] != '/' && path[n] != '\0')) {
        return NULL;
    }
    const char *rest = path + n;
    while (*rest == '/') {
        rest++;
    }
    return *rest == '\0' ? "." : rest;
}

/* The kernel's answer; *why is the errno of a refusal (EXDEV, ELOOP, EAGAIN) or an error. */
static stg_within kernel_check(const char *root, const char *path, int *why)
{
    *why = 0;
#if defined(__linux__) && defined(SYS_openat2) && defined(RESOLVE_BENEATH)
    const char *rest = below(root, path);
    if (rest == NULL) {
        return STG_WITHIN_UNSUPPORTED;
    }
    int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return STG_WITHIN_UNSUPPORTED; /* e.g. a root that is a file: realpath() decides */
    }
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, dir, rest, &how, sizeof how);
    int err = errno;
    close(dir);
    if (fd >= 0) {
        close((int)fd);
        return STG_WITHIN_YES;
    }
    *why = err;
    switch (err) {
    case EXDEV:  /* a step would leave the root (or an absolute link) */
    case ELOOP:  /* a magic link, or too many links */
    case EAGAIN: /* a `..` raced with a rename: the kernel could not be sure */
        return STG_WITHIN_NO;
    case ENOSYS:
    case EPERM: /* a seccomp filter that refuses the call */
    case EINVAL:
    case E2BIG: return STG_WITHIN_UNSUPPORTED;
    default: return STG_WITHIN_PATH_ERROR;
    }
#else
    (void)root;
    (void)path;
    (void)below;
    return STG_WITHIN_UNSUPPORTED;
#endif
}

stg_within stg_path_within_kernel(const char *root, const char *path)
{
    int why;
    stg_within k = kernel_check(root, path, &why);
    if (why != 0) {
        errno = why;
    }
    return k;
}

stg_within stg_path_within(const char *root, const char *path)
{
    int why;
    stg_within k = kernel_check(root, path, &why);
    if (k == STG_WITHIN_YES || k == STG_WITHIN_ROOT_ERROR || k == STG_WITHIN_PATH_ERROR) {
        if (why != 0) {
            errno = why;
        }
        return k;
    }
    /* Refused by the kernel, or no kernel answer: the real paths decide, so an absolute link
     * that lands inside the root is inside as it always was. A path the kernel refused for a
     * magic link that realpath() still resolves (it reads the link as text) is never inside. */
    stg_within r = stg_path_within_realpath(root, path);
    if (k == STG_WITHIN_NO && why == ELOOP && r == STG_WITHIN_YES) {
        return STG_WITHIN_NO;
    }
    return r;
}
