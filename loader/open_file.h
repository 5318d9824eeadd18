/* One way to open a file whose path came from file contents or a tree walk (an ONNX model's
 * external-data location, a joblib side file, an index's shard, a walked entry): O_NONBLOCK,
 * so a FIFO put there opens at once instead of waiting for a writer (it would hang the scan
 * for good, and SIGTERM would not end the wait), then fstat of the descriptor before a single
 * byte is read, so a FIFO, socket, device or directory is refused by what was opened, not by
 * what the path named a moment earlier. The flag is cleared once the descriptor is known to be
 * a regular file (reads of a regular file ignore it; clearing keeps that true on file systems
 * that do not). */
#ifndef STG_LOADER_OPEN_FILE_H
#define STG_LOADER_OPEN_FILE_H

#include <sys/stat.h>

#include "../validator/report.h"

typedef enum stg_open_result {
    STG_OPENED = 0,       /* *fd is a regular file, *st its fstat, O_NONBLOCK cleared */
    STG_OPEN_FAILED,      /* open, fstat or fcntl failed: *err is errno; nothing left open */
    STG_OPEN_NOT_REGULAR, /* a FIFO, socket, device or directory: *st says which; closed */
} stg_open_result;

/* Opens path read-only (O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags, e.g. O_NOFOLLOW). */
stg_open_result stg_open_file(const char *path, int extra_flags, int *fd, struct stat *st,
                              int *err);

/* Adds `code` (error, no offset) with "what: <strerror(err)>" as message: an open, stat or
 * read that failed. */
void stg_scan_add_errno(stg_report *r, stg_code code, const char *what, int err);

/* "FIFO", "socket", "character device", "block device", "directory", "symbolic link" or
 * "special file", for messages. */
const char *stg_file_kind(mode_t mode);

#endif
