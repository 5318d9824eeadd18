/* UTF-8 validation with an ASCII fast path, and the hex codec (see text.h). */
#include "text.h"

#include <string.h>

bool stg_utf8_valid(const uint8_t *s, size_t n, bool surrogatepass, size_t *bad)
{
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 8 bytes at a time. */
        while (n - i >= 8) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            if ((x & 0x8080808080808080ull) != 0) {
                break;
            }
            i += 8;
        }
        if (i >= n) {
            break;
        }
        size_t k = stg_utf8_seq(s + i, n - i, surrogatepass);
        if (k == 0) {
            if (bad != NULL) {
                *bad = i;
            }
            return false;
        }
        i += k;
    }
    return true;
}

bool stg_hex_decode(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = stg_hex_digit((uint8_t)hex[2 * i]);
        int lo = hi < 0 ? -1 : stg_hex_digit((uint8_t)hex[2 * i + 1]);
        if (lo < 0) {
            return false;
        }
        out[i] = (uint8_t)(hi * 16 + lo);
    }
    return true;
}

void stg_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}
