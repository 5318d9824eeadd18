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

/* The unit whose bytes are reversed (the element, or each float32 half of a complex64; 1 for
 * bytes and the packed sub-byte types, which have no byte order), or 0 when the arguments are
 * wrong: not a dtype, no buffer, or a length that is not whole elements. */
static size_t swap_unit(stg_dtype d, const void *buf, size_t len)
{
    uint32_t bits = stg_dtype_bits(d);
    if (bits == 0 || (buf == NULL && len > 0)) {
        return 0;
    }
    if (bits < 16) {
        return 1; /* a length in bytes is whole for these: packing is the caller's business */
    }
    if (len % (bits / 8) != 0) {
        return 0;
    }
    return d == STG_DTYPE_C64 ? 4 : bits / 8;
}

static void reverse_units(uint8_t *b, size_t len, size_t unit)
{
    for (size_t at = 0; at < len; at += unit) {
        for (size_t i = at, j = at + unit - 1; i < j; i++, j--) {
            uint8_t t = b[i];
            b[i] = b[j];
            b[j] = t;
        }
    }
}

stg_status stg_dtype_swap(stg_dtype d, void *buf, size_t len)
{
    size_t unit = swap_unit(d, buf, len);
    if (unit == 0) {
        return STG_E_BAD_ARG;
    }
    if (unit > 1) {
        reverse_units(buf, len, unit);
    }
    return STG_OK;
}

stg_status stg_dtype_to_host(stg_dtype d, void *buf, size_t len)
{
    /* The host's order, asked at run time (compilers fold it): no macro to trust or forget. */
    const uint16_t probe = 1;
    uint8_t low;
    memcpy(&low, &probe, 1);
    if (low == 1) {
        return swap_unit(d, buf, len) != 0 ? STG_OK : STG_E_BAD_ARG; /* little-endian host */
    }
    return stg_dtype_swap(d, buf, len);
}
