/* The GGUF door's image fill, shared with the scan (loader/scan.c): what the GGUF rules read of
 * a file is its header, never its tensor data (see gguf_open.c). */
#ifndef STG_LOADER_GGUF_OPEN_H
#define STG_LOADER_GGUF_OPEN_H

#include "stguard/stguard.h"
#include "window.h"

/* Copies into img the prefix that holds the GGUF header: 1 MiB, grown fourfold while a parse
 * of what was copied stops for want of bytes the file has, up to lim->max_header_len (and at
 * least 1 MiB) and the file's size. The rest of the image reads as zeros, which no GGUF rule
 * reads. Results as for the fills of loader/window.h. */
stg_status stg_image_fill_gguf(stg_image *img, const stg_limits *lim, int *err);

#endif
