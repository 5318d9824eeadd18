/* The dtype table: exact, case-sensitive names and bits per element, in the reference's order. */
#ifndef STG_VALIDATOR_DTYPE_H
#define STG_VALIDATOR_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"

#define STG_DTYPE_COUNT 22

/* Looks up a decoded dtype name; false when it is not in the table. */
bool stg_dtype_lookup(const uint8_t *name, size_t len, stg_dtype *out);

/* Reverses the bytes of every element of d in buf[0..len) whatever the host (complex64: each
 * float32 half), which turns little-endian values into big-endian ones and back: what
 * stg_dtype_to_host does on a big-endian host. Same arguments and results as stg_dtype_to_host. */
stg_status stg_dtype_swap(stg_dtype d, void *buf, size_t len);

#endif
