/* The shared opening of the file doors (see door.h). */
#include "door.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../parser/mem.h"
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
