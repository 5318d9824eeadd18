/* The shared opening of the file doors (see door.h). */
#include "door.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../parser/mem.h"
#include "../validator/limits.h"
#include "open_file.h"

void stg_door_file_init(stg_door_file *df)
{
    memset(df, 0, sizeof *df);
    df->fd = -1;
}

static void report_io(stg_report *r, const char *what, int err)
{
    stg_report_add(r, STG_IO_ERROR, STG_NO_OFFSET, "%s failed (errno %d)", what, err);
}

stg_status stg_door_file_open(stg_door_file *df, const char *path, stg_report *r)
{
    stg_door_file_init(df);
    struct stat st;
    int fd = -1, err = 0;
    switch (stg_open_file(path, 0, &fd, &st, &err)) {
    case STG_OPENED: break;
    case STG_OPEN_FAILED: report_io(r, "open", err); return STG_E_IO;
    case STG_OPEN_NOT_REGULAR:
        stg_report_add(r, STG_NOT_REGULAR_FILE, STG_NO_OFFSET, "a %s, not a regular file: not read",
                       stg_file_kind(st.st_mode));
        return STG_E_IO;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        report_io(r, "mapping (file too large for the address space)", EFBIG);
        close(fd);
        return STG_E_IO;
    }
    df->path = stg_mem_strndup(path, strlen(path));
    if (df->path == NULL) {
        close(fd);
        return STG_E_NOMEM;
    }
    df->fd = fd;
    df->dev = st.st_dev;
    df->ino = st.st_ino;
    df->size = (uint64_t)st.st_size;
    df->mtime = st.st_mtim;
    return STG_OK;
}

void stg_door_file_close_fd(stg_door_file *df)
{
    if (df->fd >= 0) {
        close(df->fd);
        df->fd = -1;
    }
}

void stg_door_file_close(stg_door_file *df)
{
    stg_door_file_close_fd(df);
    stg_mem_free(df->path);
    df->path = NULL;
}

bool stg_door_file_unchanged(const stg_door_file *df)
{
    struct stat st;
    if (fstat(df->fd, &st) != 0 || (uint64_t)st.st_size != df->size ||
        st.st_mtim.tv_sec != df->mtime.tv_sec || st.st_mtim.tv_nsec != df->mtime.tv_nsec) {
        return false;
    }
    /* The descriptor keeps the old inode alive: a path renamed over or deleted is "replaced". */
    if (stat(df->path, &st) != 0 || st.st_dev != df->dev || st.st_ino != df->ino) {
        return false;
    }
    return true;
}

stg_status stg_door_file_pread(const stg_door_file *df, uint64_t start, void *dst, size_t len)
{
    if (!stg_door_file_unchanged(df)) {
        return STG_FILE_CHANGED;
    }
    uint8_t *out = dst;
    uint64_t done = 0;
    while (done < len) {
        uint64_t want = len - done;
        size_t chunk = want > (uint64_t)(1u << 30) ? (size_t)1 << 30 : (size_t)want;
        ssize_t got = pread(df->fd, out + done, chunk, (off_t)(start + done));
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return STG_E_IO;
        }
        if (got == 0) {
            return STG_FILE_CHANGED; /* end of file before the validated end: it shrank */
        }
        done += (uint64_t)got;
    }
    return stg_door_file_unchanged(df) ? STG_OK : STG_FILE_CHANGED;
}

stg_status stg_door_read_whole(const char *path, const stg_limits *lim, stg_report *r,
                               stg_image *img, bool *img_open)
{
    stg_door_file src;
    stg_status opened = stg_door_file_open(&src, path, r);
    if (opened != STG_OK) {
        return opened;
    }
    int err = 0;
    uint64_t size = src.size;
    uint64_t cap = lim->max_inflate_bytes < STG_INFLATE_BYTES_CEILING ? lim->max_inflate_bytes
                                                                      : STG_INFLATE_BYTES_CEILING;
    stg_status s = stg_image_open(img, src.fd, size, cap, &err);
    if (s == STG_OK) {
        *img_open = true;
        s = stg_image_fill_all(img, &err);
    }
    stg_door_file_close(&src); /* the whole file is in the image: no more reads */
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
