/* numpy.dtype reduce strings (see npy_reduce.h). */
#include "npy_reduce.h"

#include <string.h>

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

bool stg_npy_reduce_fixed(const uint8_t *p, size_t n, uint64_t *size, bool *object)
{
    static const uint8_t fixed_kinds[] = {'b', 'i', 'u', 'f', 'c', 'M', 'm'};
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
    if (memchr(fixed_kinds, kind, sizeof fixed_kinds) == NULL || n < 2 || n > 4 ||
        !all_digits(&c, &v)) {
        return false;
    }
    if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16) {
        return false;
    }
    *size = v;
    return true;
}

bool stg_npy_reduce_flexible(const uint8_t *p, size_t n, uint8_t *kind, uint64_t *count)
{
    stg_cursor c = stg_cur_make(p, n);
    if (n < 2 || n > 12 || stg_cur_u8(&c, kind) != STG_OK ||
        (*kind != 'S' && *kind != 'U' && *kind != 'V')) {
        return false;
    }
    return all_digits(&c, count);
}
