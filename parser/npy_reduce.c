/* numpy.dtype reduce strings (see npy_reduce.h). */
#include "npy_reduce.h"

#include "cursor.h"

/* The decimal digits of the rest of c (all of them must be digits; at most 11 of them, so
 * the value cannot wrap). */
static bool all_digits(stg_cursor *c, uint64_t *v)
{
    *v = 0;
    uint8_t d;
    while (stg_cur_u8(c, &d) == STG_OK) {
        if (d < '0' || d > '9') {
            return false;
        }
        *v = *v * 10 + (uint64_t)(d - '0');
    }
    return true;
}

/* The sizes numpy 1.24 accepts after each fixed kind (x86-64: f16 is long double, c32 its
 * complex); numpy refuses the rest, so the load fails before an array byte is read. */
static bool fixed_size_known(uint8_t kind, uint64_t v)
{
    switch (kind) {
    case 'b': return v == 1;
    case 'i':
    case 'u': return v == 1 || v == 2 || v == 4 || v == 8;
    case 'f': return v == 2 || v == 4 || v == 8 || v == 16;
    case 'c': return v == 8 || v == 16 || v == 32;
    case 'M':
    case 'm': return v == 8;
    default: return false;
    }
}

bool stg_npy_reduce_fixed(const uint8_t *p, size_t n, uint64_t *size, bool *object)
{
    stg_cursor c = stg_cur_make(p, n);
    uint8_t kind;
    *object = false;
    if (stg_cur_u8(&c, &kind) != STG_OK) {
        return false;
    }
    if (kind == 'O') {
        *object = true;
        return true;
    }
    uint64_t v;
    if (n < 2 || n > 4 || !all_digits(&c, &v) || !fixed_size_known(kind, v)) {
        return false;
    }
    *size = v;
    return true;
}

bool stg_npy_reduce_flexible(const uint8_t *p, size_t n, uint8_t *kind, uint64_t *count)
{
    stg_cursor c = stg_cur_make(p, n);
    if (n < 2 || n > 12 || stg_cur_u8(&c, kind) != STG_OK ||
        (*kind != 'S' && *kind != 'U' && *kind != 'V') || !all_digits(&c, count)) {
        return false;
    }
    /* numpy stores the item size in a C int (U: 4 bytes per character): past INT32_MAX it
     * wraps, so a larger count is not a size stguard can agree on. */
    return *count <= (*kind == 'U' ? (uint64_t)INT32_MAX / 4 : (uint64_t)INT32_MAX);
}
