/* Strict base64 (see base64.h). */
#include "base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Value 0..63 of a base64 character, -1 for anything else ('=' included). */
static int b64_value(uint8_t c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    return c == '/' ? 63 : -1;
}

/* One group of four characters; `last` allows padding. Returns the bytes written (1..3) or 0
 * with *bad_at the index (0..3) of the first bad character. */
static size_t decode_group(const uint8_t *g, bool last, uint8_t *out, size_t *bad_at)
{
    int v[4];
    size_t pad = 0;
    for (size_t i = 0; i < 4; i++) {
        v[i] = b64_value(g[i]);
        if (v[i] < 0) {
            /* '=' only as the last one or two characters of the last group */
            if (!last || g[i] != '=' || i < 2 || (i == 2 && g[3] != '=')) {
                *bad_at = i;
                return 0;
            }
            v[i] = 0;
            pad++;
        }
    }
    uint32_t bits = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
                    (uint32_t)v[3];
    /* The bits a padded group leaves over must be zero: else two spellings decode alike. */
    if ((pad == 1 && (bits & 0xFFu) != 0) || (pad == 2 && (bits & 0xFFFFu) != 0)) {
        *bad_at = 3 - pad;
        return 0;
    }
    out[0] = (uint8_t)(bits >> 16);
    out[1] = (uint8_t)(bits >> 8);
    out[2] = (uint8_t)bits;
    return 3 - pad;
}

bool stg_base64_decode(const uint8_t *in, size_t n, uint8_t *out, size_t *out_len, size_t *bad)
{
    *out_len = 0;
    if (n % 4u != 0) {
        *bad = n;
        return false;
    }
    size_t written = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint8_t tmp[3];
        size_t at = 0;
        size_t got = decode_group(in + i, i + 4 == n, tmp, &at);
        if (got == 0) {
            *bad = i + at;
            return false;
        }
        for (size_t k = 0; k < got; k++) {
            out[written + k] = tmp[k];
        }
        written += got;
    }
    *out_len = written;
    return true;
}

void stg_base64_encode(const uint8_t *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        size_t left = n - i;
        uint32_t bits = (uint32_t)in[i] << 16;
        if (left > 1) {
            bits |= (uint32_t)in[i + 1] << 8;
        }
        if (left > 2) {
            bits |= in[i + 2];
        }
        out[o++] = alphabet[(bits >> 18) & 63u];
        out[o++] = alphabet[(bits >> 12) & 63u];
        out[o++] = left > 1 ? alphabet[(bits >> 6) & 63u] : '=';
        out[o++] = left > 2 ? alphabet[bits & 63u] : '=';
    }
}
