/* stg_door_of (stguard.h): which door opens a file, asked of the format table (dispatch/
 * formats.h, stg_format_door) from the file's name and first bytes, so that no client
 * compares magic bytes or name suffixes of its own. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../dispatch/formats.h"
#include "open_file.h"
#include "stguard/stguard.h"

enum { DOOR_HEAD = 16 };

stg_status stg_door_of(const char *path, stg_door *out)
{
    if (path == NULL || out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = stg_format_door(path, NULL, 0); /* by its name, if it cannot be read */
    /* O_NONBLOCK and a regular-file check (loader/open_file.h): a FIFO is never waited on. */
    int fd = -1, err = 0;
    struct stat st;
    if (stg_open_file(path, 0, &fd, &st, &err) != STG_OPENED) {
        return STG_E_IO;
    }
    uint8_t head[DOOR_HEAD];
    size_t got = 0, want = stg_format_magic_max() < DOOR_HEAD ? stg_format_magic_max() : DOOR_HEAD;
    while (got < want) {
        ssize_t n = read(fd, head + got, want - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    *out = stg_format_door(path, head, got);
    return STG_OK;
}
