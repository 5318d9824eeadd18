#include "dtype.h"

#include <string.h>

static const struct {
    const char *name;
    uint32_t bits;
} dtype_table[STG_DTYPE_COUNT] = {
    {"BOOL", 8},        {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
    {"I32", 32},        {"U32", 32},    {"F32", 32},    {"C64", 64},    {"F64", 64},
    {"I64", 64},        {"U64", 64},
};

const char *stg_dtype_name(stg_dtype d)
{
    unsigned i = (unsigned)d;
    return i < STG_DTYPE_COUNT ? dtype_table[i].name : NULL;
}

uint32_t stg_dtype_bits(stg_dtype d)
{
    unsigned i = (unsigned)d;
    return i < STG_DTYPE_COUNT ? dtype_table[i].bits : 0;
}

bool stg_dtype_lookup(const uint8_t *name, size_t len, stg_dtype *out)
{
    for (unsigned i = 0; i < STG_DTYPE_COUNT; i++) {
        const char *n = dtype_table[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            *out = (stg_dtype)i;
            return true;
        }
    }
    return false;
}
