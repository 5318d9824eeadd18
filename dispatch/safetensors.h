/* The one safetensors pipeline (internal): the stages frame, header, layout
 * (stg_st_stages, validator/safetensors.h), then the polyglot checks (polyglot.h), for every door: stg_validate_buffer,
 * the dispatcher, stg_file_open (loader/mmap.c), the stream's finish (loader/stream.c) and the
 * fuzz harnesses. A door says only how its bytes arrive (stg_st_door); the stages, their order
 * and which stage is skipped after which failure are decided once. */
#ifndef STG_DISPATCH_SAFETENSORS_H
#define STG_DISPATCH_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../validator/ctx.h"
#include "../validator/safetensors.h"

/* Runs the pipeline into ctx->report, filling h (initialised by the caller; may be NULL for a
 * whole-buffer door, then a table of its own is used and released). false when a door
 * callback stopped it or memory failed in the door's polyglot checks. */
bool stg_st_pipeline(stg_st_door *d, stg_check_ctx *ctx, stg_st_header *h);

/* The pipeline over one whole buffer (the door of stg_validate_buffer, the dispatcher and the
 * fuzz harnesses). */
void stg_st_scan(const uint8_t *buf, size_t len, stg_check_ctx *ctx, stg_st_header *h);

#endif
