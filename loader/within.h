/* Path containment: does a path, links followed, stay inside a root folder? A security check
 * (links are followed only inside the scan root, shards are opened only inside it), so it has
 * this one implementation, used by the single-path scan, the tree walk and sharded models.
 *
 * Where the kernel has openat2 (Linux 5.6+), the path is resolved below an open descriptor of
 * the root with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: the kernel itself refuses any step
 * out. A refusal (EXDEV: an absolute link or a `..` that would leave the root) is then judged by
 * the real-path comparison, because an absolute link that lands inside the root is followed (as
 * it always was); a magic link (/proc/self/fd/N, /proc/PID/root) is never inside. Without
 * openat2 (ENOSYS, or a sandbox that refuses the call) the real-path comparison decides alone:
 * realpath() of both, then a prefix test on whole components (/root/ab is not inside /root/a). */
#ifndef STG_LOADER_WITHIN_H
#define STG_LOADER_WITHIN_H

#include <stdbool.h>

typedef enum stg_within {
    STG_WITHIN_YES = 0,         /* path resolves to root or a place below it */
    STG_WITHIN_NO = 1,          /* it resolves outside (or through a magic link) */
    STG_WITHIN_ROOT_ERROR = 2,  /* the root could not be resolved (errno set) */
    STG_WITHIN_PATH_ERROR = 3,  /* the path could not be resolved (errno set) */
    STG_WITHIN_UNSUPPORTED = 4, /* stg_path_within_kernel only: no openat2 here */
} stg_within;

/* The check: openat2 where the kernel has it, the real-path comparison otherwise. root and
 * path are names as given (relative to the working folder or absolute); path need not be
 * spelled below root (then only the real-path comparison can answer). */
stg_within stg_path_within(const char *root, const char *path);

/* The two ways, for tests that force one: the kernel's (STG_WITHIN_UNSUPPORTED when openat2 is
 * missing or refused, root is no folder that opens, or path is not spelled below root; NO with
 * errno EXDEV, ELOOP or EAGAIN for a refusal) and the real-path comparison. */
stg_within stg_path_within_kernel(const char *root, const char *path);
stg_within stg_path_within_realpath(const char *root, const char *path);

/* true when path (a real path) is root_real (a real path) or lies below it, by whole
 * components: the string test both ways share. */
bool stg_path_inside(const char *path, const char *root_real);

#endif
