/* Non-blocking, regular-only opens (see open_file.h). */
#include "open_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

stg_open_result stg_open_file(const char *path, int extra_flags, int *fd, struct stat *st, int *err)
{
    *fd = -1;
    *err = 0;
    int d = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags);
    if (d < 0) {
        *err = errno;
        return STG_OPEN_FAILED;
    }
    if (fstat(d, st) != 0) {
        *err = errno;
        close(d);
        return STG_OPEN_FAILED;
    }
    if (!S_ISREG(st->st_mode)) {
        close(d);
        return STG_OPEN_NOT_REGULAR;
    }
    int flags = fcntl(d, F_GETFL);
    if (flags < 0 || fcntl(d, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        *err = errno;
        close(d);
        return STG_OPEN_FAILED;
    }
    *fd = d;
    return STG_OPENED;
}

const char *stg_file_kind(mode_t mode)
{
    if (S_ISFIFO(mode)) {
        return "FIFO";
    }
    if (S_ISSOCK(mode)) {
        return "socket";
    }
    if (S_ISCHR(mode)) {
        return "character device";
    }
    if (S_ISBLK(mode)) {
        return "block device";
    }
    if (S_ISDIR(mode)) {
        return "directory";
    }
    if (S_ISLNK(mode)) {
        return "symbolic link";
    }
    return "special file";
}

void stg_scan_add_errno(stg_report *r, stg_code code, const char *what, int err)
{
    char buf[128];
    const char *text = strerror_r(err, buf, sizeof buf);
    stg_report_add_sev(r, code, STG_SEV_ERROR, STG_NO_OFFSET, "%s: %s", what, text);
}
