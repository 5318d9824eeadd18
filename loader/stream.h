/* Stream internals exposed to tests and benchmarks (the API is stg_stream_* in stguard.h). */
#ifndef STG_LOADER_STREAM_H
#define STG_LOADER_STREAM_H

#include <stddef.h>

#include "stguard/stguard.h"

/* Rolling tail window: a zip end record (22 bytes) plus the largest comment. */
#define STG_STREAM_TAIL ((size_t)65557)

/* Bytes the stream holds or held at most so far: its struct, the header buffer, the header
 * arena's peak, the tail window and the per-tensor digest slots. Never counts data bytes,
 * because none are kept. */
size_t stg_stream_memory_peak(const stg_stream *s);

#endif
