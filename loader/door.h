/* The opening every file door shares (stg_file_open, stg_gguf_open, stg_onnx_open; the public
 * stg_door enum names which door `inspect` takes, this is what each of them does first): open
 * the path read-only without waiting on a FIFO, fstat the descriptor, refuse anything but a
 * regular file whose size fits the address space, and keep the identity (device, inode, size,
 * modification time, the path as opened) so that every later read can check it still reads the
 * file that was validated. How much of the file a door then reads is its own (a header, the
 * whole file, the safetensors windows). */
#ifndef STG_LOADER_DOOR_H
#define STG_LOADER_DOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "../validator/report.h"
#include "stguard/stguard.h"

typedef struct stg_door_file {
    int fd;     /* -1 when closed */
    char *path; /* as opened: used to notice that the path was replaced */
    dev_t dev;  /* identity when opened */
    ino_t ino;
    uint64_t size;         /* size when opened (and validated) */
    struct timespec mtime; /* modification time when opened */
} stg_door_file;

/* An unopened file (fd -1, no path): safe to close. */
void stg_door_file_init(stg_door_file *df);

/* Opens path for a door: STG_OK with df filled; STG_E_IO with io_error or not_regular_file added
 * to r (nothing left open); STG_E_NOMEM when the path could not be copied. */
stg_status stg_door_file_open(stg_door_file *df, const char *path, stg_report *r);

/* Closes the descriptor (when open) and frees the path; df is then unopened. */
void stg_door_file_close(stg_door_file *df);

/* Closes only the descriptor: the identity stays for messages, no more reads. */
void stg_door_file_close_fd(stg_door_file *df);

/* true when df's file still has the size, modification time and identity it had when it was
 * opened (fstat of the descriptor plus stat of the path). */
bool stg_door_file_unchanged(const stg_door_file *df);

/* Copies len bytes at file offset start (a range the caller validated) with pread, between two
 * stg_door_file_unchanged checks: STG_OK, STG_FILE_CHANGED (changed, replaced or shrunk),
 * STG_E_IO. */
stg_status stg_door_file_pread(const stg_door_file *df, uint64_t start, void *dst, size_t len);

#endif
