/* Sharded models (internal API of loader/model.c): model.safetensors.index.json plus its shards.
 * The pure index rules live in validator/index.[ch]; this layer opens the shards (inside the
 * index's folder only) and feeds their tensor tables to those rules. The public side is
 * stg_model_* in include/stguard/stguard.h. */
#ifndef STG_LOADER_MODEL_H
#define STG_LOADER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../validator/report.h"
#include "stguard/stguard.h"

/* Entry for the directory scanner (loader/scan.c): index_path names a file whose name ends in
 * ".safetensors.index.json" and whose bytes the scanner has already read into buf[0..len).
 * Adds to r: the JSON / index_* findings of the index itself, then, for every shard the index
 * names, the shard's own safetensors findings with `member` set to the shard's file name (offsets
 * inside that shard). Shards are looked up in the folder of index_path only; unsafe shard names
 * are never opened. Sets r's format to STG_FMT_SAFETENSORS_INDEX; leaves size, sha256 and
 * stg_report_finish to the caller. opt may be NULL (defaults). Never fails: problems are
 * findings (io_error when a shard exists but cannot be read). */
void stg_index_scan_file(const char *index_path, const uint8_t *buf, size_t len,
                         const stg_scan_options *opt, stg_report *r);

#endif
