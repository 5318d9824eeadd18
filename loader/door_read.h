/* Reading a file whole for a door (stg_onnx_open, stg_flax_open): the bytes a scan of the same
 * file reads (up to max_inflate_bytes), into an image (loader/window.h, never a file mapping). */
#ifndef STG_LOADER_DOOR_READ_H
#define STG_LOADER_DOOR_READ_H

#include <stdbool.h>

#include "stguard/stguard.h"
#include "window.h"

/* Opens path (a regular file only, without blocking) and copies it whole into *img (*img_open
 * set once the image exists: the caller closes it). Findings for what went wrong go to r:
 * STG_E_INVALID past max_inflate_bytes (limit_exceeded), STG_FILE_CHANGED when the file shrank,
 * STG_E_NOMEM, STG_E_IO (io_error, or what stg_open_regular reported). */
stg_status stg_door_read_whole(const char *path, const stg_limits *lim, stg_report *r,
                               stg_image *img, bool *img_open);

#endif
