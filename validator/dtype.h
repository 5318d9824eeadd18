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

#endif
