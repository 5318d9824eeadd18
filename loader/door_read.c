/* The whole-file read of the doors that validate a file held whole (the ONNX and Flax doors):
 * see door_read.h. */
#include "door_read.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../validator/limits.h"
#include "../validator/report.h"
#include "mmap.h"

stg_status stg_door_read_whole(const char *path, const stg_limits *lim, stg_report *r,
                               stg_image *img, bool *img_open)
{
    struct stat st;
    int fd = stg_open_regular(path, r, &st);
    if (fd < 0) {
        return STG_E_IO;
    }
    int err = 0;
    uint64_t size = (uint64_t)st.st_size;
    uint64_t cap = lim->max_inflate_bytes < STG_INFLATE_BYTES_CEILING ? lim->max_inflate_bytes
                                                                      : STG_INFLATE_BYTES_CEILING;
    stg_status s = stg_image_open(img, fd, size, cap, &err);
    if (s == STG_OK) {
        *img_open = true;
        s = stg_image_fill_all(img, &err);
    }
    close(fd);
    if (s == STG_E_LIMIT) {
        stg_finding *f = stg_report_add(r, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
                                        "the file (%llu bytes) needs more memory than "
                                        "max_inflate_bytes (%llu): not read",
                                        (unsigned long long)size, (unsigned long long)cap);
        stg_report_set_limit(r, f, "max_inflate_bytes");
        return STG_E_INVALID;
    }
    if (s == STG_FILE_CHANGED) {
        stg_report_add(r, STG_FILE_CHANGED_CODE, STG_NO_OFFSET,
                       "the file shrank while it was read");
        return STG_FILE_CHANGED;
    }
    if (s == STG_E_NOMEM || err == ENOMEM) {
        return STG_E_NOMEM;
    }
    if (s != STG_OK) {
        stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "the file could not be read (errno %d)",
                       err);
        return STG_E_IO;
    }
    return STG_OK;
}
