/* Format sniffing: content decides, names only hint (docs/containers.md). Every rule reads
 * through explicit length checks; nothing here allocates. */
#include "sniff.h"

#include <string.h>

#include "../parser/cursor.h"
#include "../parser/json.h"
#include "../parser/mem.h"
#include "../parser/text.h"

static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    if (k > n) {
        return false;
    }
    const char *tail = s + (n - k);
    for (size_t i = 0; i < k; i++) {
        char a = tail[i];
        if (a >= 'A' && a <= 'Z') {
            a = (char)(a - 'A' + 'a');
        }
        if (a != suffix[i]) {
            return false;
        }
    }
    return true;
}

bool stg_name_hint_has_suffix(const char *name, const char *suffix)
{
    return name != NULL && ends_with_ci(name, strlen(name), suffix);
}

/* The reference's header cap: a larger length is not sniffed as safetensors by content. */
#define STG_SNIFF_MAX_HEADER_LEN 100000000u

static bool is_json_ws(uint8_t b)
{
    return b == ' ' || b == '\t' || b == '\r' || b == '\n';
}

bool stg_sniff_is_safetensors(const uint8_t *buf, size_t len)
{
    stg_cursor c = stg_cur_make(buf, len);
    uint64_t n;
    if (len < 9 || stg_cur_le64(&c, &n) != STG_OK) {
        return false;
    }
    /* A header may run past the end (a cut-off download is then header_truncated, not
     * unknown): only the bytes present are looked at. The length must still be plausible, so
     * pickles, zips and text (whose first 8 bytes make a huge n) never match. */
    if (n < 2 || n > STG_SNIFF_MAX_HEADER_LEN) {
        return false;
    }
    uint64_t present = n < (uint64_t)(len - 8) ? n : (uint64_t)(len - 8);
    for (uint64_t i = 0; i < present; i++) {
        uint8_t b = buf[8 + i];
        if (!is_json_ws(b)) {
            return b == '{';
        }
    }
    return false;
}

bool stg_sniff_has_prefix(const uint8_t *buf, size_t len, const char *magic, size_t k)
{
    return len >= k && memcmp(buf, magic, k) == 0;
}

/* RFC 1950 header: deflate, window <= 32 KiB, check bits, no preset dictionary. */
bool stg_sniff_is_zlib(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    (void)out_of_memory;
    return len >= 2 && (buf[0] & 0x0f) == 8 && (buf[0] >> 4) <= 7 &&
           ((unsigned)buf[0] * 256u + buf[1]) % 31u == 0 && (buf[1] & 0x20) == 0;
}

/* .lzma ("alone") has no magic: the default properties byte, a dictionary size that writers
 * use (2^n or 3 x 2^n, at least 4 KiB) and a plausible uncompressed size (or "unknown"). */
bool stg_sniff_is_lzma_alone(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    (void)out_of_memory;
    stg_cursor c = stg_cur_make(buf, len);
    uint8_t props;
    uint32_t dict;
    uint64_t usize;
    if (len < 13 || stg_cur_u8(&c, &props) != STG_OK || props != 0x5d ||
        stg_cur_le32(&c, &dict) != STG_OK || stg_cur_le64(&c, &usize) != STG_OK) {
        return false;
    }
    uint32_t odd = dict;
    while (odd > 0 && (odd & 1u) == 0) {
        odd >>= 1;
    }
    return dict >= 4096 && (odd == 1 || odd == 3) &&
           (usize == UINT64_MAX || usize < ((uint64_t)1 << 40));
}

static bool zf_space(uint8_t ch)
{
    return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

/* int(field, 16) as Python reads the bytes: surrounding whitespace, an optional sign, an
 * optional 0x prefix, hex digits with single underscores between them (also right after the
 * prefix). Only a value >= 0 is accepted: joblib's zlib.decompress refuses a negative size. */
bool stg_sniff_zfile_header(const uint8_t *buf, size_t len, uint64_t *declared, size_t *data_at)
{
    if (len < STG_SNIFF_ZFILE_HEADER || buf[0] != 'Z' || buf[1] != 'F') {
        return false;
    }
    const uint8_t *f = buf + 2;
    size_t b = 0, e = STG_SNIFF_ZFILE_HEADER - 2;
    while (b < e && zf_space(f[b])) {
        b++;
    }
    while (e > b && zf_space(f[e - 1])) {
        e--;
    }
    bool neg = false;
    if (b < e && (f[b] == '+' || f[b] == '-')) {
        neg = f[b] == '-';
        b++;
    }
    bool prefix = e - b >= 2 && f[b] == '0' && (f[b + 1] | 0x20) == 'x';
    if (prefix) {
        b += 2;
    }
    uint64_t v = 0;
    size_t digits = 0;
    bool underscore_ok = prefix; /* "0x_1f" is a valid literal, "_1f" is not */
    for (size_t i = b; i < e; i++) {
        if (f[i] == '_' && underscore_ok && i + 1 < e) {
            underscore_ok = false;
            continue;
        }
        int h = stg_hex_digit(f[i]);
        if (h < 0 || v > (UINT64_MAX >> 4)) {
            return false; /* (17 hex digits do not fit the field anyway) */
        }
        v = v << 4 | (uint64_t)h;
        digits++;
        underscore_ok = true;
    }
    if (digits == 0 || (neg && v != 0)) {
        return false;
    }
    *declared = v;
    /* joblib <= 0.8.4 wrote one more space; a zlib stream never starts with one. */
    *data_at = len > STG_SNIFF_ZFILE_HEADER && buf[STG_SNIFF_ZFILE_HEADER] == ' '
                   ? STG_SNIFF_ZFILE_HEADER + 1
                   : STG_SNIFF_ZFILE_HEADER;
    return true;
}

/* gzip: magic, deflate, no reserved flag bits (three bytes: tensor data rarely matches). */
bool stg_sniff_is_gzip(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    (void)out_of_memory;
    return len >= 10 && buf[0] == 0x1f && buf[1] == 0x8b && buf[2] == 8 && (buf[3] & 0xe0) == 0;
}

bool stg_sniff_is_bzip2(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    (void)out_of_memory;
    return len >= 4 && stg_sniff_has_prefix(buf, len, "BZh", 3) && buf[3] >= '1' && buf[3] <= '9';
}

bool stg_sniff_is_xz(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    (void)out_of_memory;
    return stg_sniff_has_prefix(buf, len,
                                "\xfd"
                                "7zXZ\x00",
                                6);
}

bool stg_sniff_is_zstd(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    (void)out_of_memory;
    return stg_sniff_has_prefix(buf, len, "\x28\xb5\x2f\xfd", 4);
}

bool stg_sniff_is_lz4(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    (void)out_of_memory;
    return stg_sniff_has_prefix(buf, len, "\x04\x22\x4d\x18", 4) ||
           stg_sniff_has_prefix(buf, len, "\x02\x21\x4c\x18", 4);
}

/* ------------------------------------------------------------------------------ text */

bool stg_sniff_is_text(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len;) {
        uint8_t b = buf[i];
        if (b < 0x20 && b != '\t' && b != '\n' && b != '\v' && b != '\f' && b != '\r' &&
            b != 0x1b) {
            return false;
        }
        if (b == 0x7f) {
            return false;
        }
        size_t n = stg_utf8_seq(buf + i, len - i, false); /* RFC 3629 */
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

bool stg_sniff_json_document(const uint8_t *buf, size_t len, uint32_t max_depth,
                             uint64_t max_memory, bool *out_of_memory)
{
    size_t first = 0;
    while (first < len && is_json_ws(buf[first])) {
        first++;
    }
    if (first == len || (buf[first] != '{' && buf[first] != '[')) {
        return false;
    }
    uint64_t cap = max_memory != 0 ? max_memory : STG_SNIFF_JSON_MEMORY;
    uint64_t bound = stg_json_memory_bound((uint64_t)len, max_depth);
    bool bounded = bound <= cap; /* the cap then holds any document of len bytes */
    if (bound < cap) {
        cap = bound;
    }
    stg_arena arena;
    stg_arena_init(&arena, cap > SIZE_MAX ? SIZE_MAX : (size_t)cap);
    stg_json_parser p;
    stg_json_init(&p, buf, len, max_depth, &arena);
    stg_json_event ev;
    stg_json_type t;
    do {
        t = stg_json_next(&p, &ev);
    } while (t != STG_JSON_END && t != STG_JSON_ERROR);
    bool ok = t == STG_JSON_END && stg_json_rest_is_ws(buf, len, ev.offset);
    if (t == STG_JSON_ERROR && p.error == STG_JSON_E_MEMORY && bounded && out_of_memory != NULL) {
        *out_of_memory = true; /* memory was refused, not a cap reached */
    }
    stg_json_release(&p);
    stg_arena_release(&arena);
    return ok;
}

bool stg_sniff_is_json(const uint8_t *buf, size_t len, uint32_t max_depth, uint64_t max_memory)
{
    return stg_sniff_json_document(buf, len, max_depth, max_memory, NULL);
}

/* The value of line `key value` at buf[*pos..len) when its key is `key`; advances past the LF.
 * NULL (and *pos unchanged) when the line is not that key or has no LF. */
static const uint8_t *lfs_line(const uint8_t *buf, size_t len, size_t *pos, const char *key,
                               size_t *value_len)
{
    size_t k = strlen(key), at = *pos;
    if (len - at < k + 1 || memcmp(buf + at, key, k) != 0 || buf[at + k] != ' ') {
        return NULL;
    }
    const uint8_t *value = buf + at + k + 1;
    const uint8_t *nl = memchr(value, '\n', len - (at + k + 1));
    if (nl == NULL) {
        return NULL;
    }
    *value_len = (size_t)(nl - value);
    *pos = (size_t)(nl - buf) + 1;
    return value;
}

bool stg_sniff_lfs_pointer(const uint8_t *buf, size_t len, stg_lfs_pointer *out)
{
    static const char *const versions[] = {"https://git-lfs.github.com/spec/v1",
                                           "https://hawser.github.com/spec/v1"};
    if (len > STG_LFS_POINTER_MAX || !stg_sniff_is_text(buf, len)) {
        return false;
    }
    size_t pos = 0, n;
    const uint8_t *v = lfs_line(buf, len, &pos, "version", &n);
    bool known = false;
    for (size_t i = 0; v != NULL && i < sizeof versions / sizeof versions[0]; i++) {
        known = known || (n == strlen(versions[i]) && memcmp(v, versions[i], n) == 0);
    }
    if (!known) {
        return false;
    }
    bool have_oid = false, have_size = false;
    while (pos < len) {
        size_t line_start = pos;
        if ((v = lfs_line(buf, len, &pos, "oid", &n)) != NULL) {
            if (have_oid || n != 7 + 64 || memcmp(v, "sha256:", 7) != 0) {
                return false;
            }
            for (size_t i = 0; i < 64; i++) {
                uint8_t c = v[7 + i];
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                    return false;
                }
                out->oid[i] = (char)c;
            }
            out->oid[64] = '\0';
            have_oid = true;
        } else if ((v = lfs_line(buf, len, &pos, "size", &n)) != NULL) {
            uint64_t size = 0;
            if (have_size || n == 0 || n > 19) {
                return false;
            }
            for (size_t i = 0; i < n; i++) {
                if (v[i] < '0' || v[i] > '9') {
                    return false;
                }
                size = size * 10 + (uint64_t)(v[i] - '0');
            }
            out->size = size;
            have_size = true;
        } else {
            /* Other keys (extensions) are `key value` lines too: a key of [a-z0-9.-]. */
            const uint8_t *nl = memchr(buf + line_start, '\n', len - line_start);
            const uint8_t *sp = memchr(buf + line_start, ' ', len - line_start);
            if (nl == NULL || sp == NULL || sp > nl || sp == buf + line_start) {
                return false;
            }
            for (const uint8_t *c = buf + line_start; c < sp; c++) {
                if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
                      *c == '-')) {
                    return false;
                }
            }
            pos = (size_t)(nl - buf) + 1;
        }
    }
    return have_oid && have_size;
}
