/* Caller-filled public structs at the library's entry points (docs/abi.md, "Caller-filled
 * structs"): every entry point that takes one passes it through the check here before reading
 * anything else of it, and works on the copy it returns. */
#ifndef STG_VALIDATOR_LIMITS_H
#define STG_VALIDATOR_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "stguard/stguard.h"

/* true for a struct_version this library knows: 1 .. STG_STRUCT_VERSION (0 means the struct was
 * not initialised; a larger one comes from a newer header). */
static inline bool stg_struct_version_known(uint32_t v)
{
    return v >= 1u && v <= STG_STRUCT_VERSION;
}

/* Copies the fields of *in its struct_version knows into *out and gives every newer field its
 * default; reserved space is not read. STG_E_STRUCT_VERSION (and *out the defaults) for an
 * unknown version. */
stg_status stg_limits_accept(const stg_limits *in, stg_limits *out);

#endif
