/* Rules of the data files a model repository holds (internal API; docs/data-formats.md):
 * parser/dataformats.h's framing -> findings. A TensorFlow variables.index whose footer or
 * block handles leave the file is tf_index_malformed; a Parquet or Arrow file whose footer or
 * messages do is dataset_malformed; a limit is limit_exceeded. A sound file adds nothing: these
 * are data, which their loaders read without running code. Pure: no I/O. */
#ifndef STG_VALIDATOR_DATAFORMATS_H
#define STG_VALIDATOR_DATAFORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

void stg_check_tf_index(const uint8_t *buf, size_t len, stg_report *r);
void stg_check_parquet(const uint8_t *buf, size_t len, stg_report *r);
void stg_check_arrow(const uint8_t *buf, size_t len, stg_report *r);

#endif
