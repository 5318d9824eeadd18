/* Tar reader (see tar.h). Reads headers through the cursor; numbers are octal text or GNU
 * base-256, each checked against overflow. */
#include "tar.h"

#include <string.h>

#include "cursor.h"
#include "util.h"

#define OFF_NAME 0u
#define OFF_SIZE 124u
#define OFF_CHKSUM 148u
#define OFF_TYPE 156u
#define OFF_MAGIC 257u
#define OFF_PREFIX 345u

/* Octal text (leading spaces/NULs, then digits, then space/NUL) or base-256 (high bit set).
 * n is a field width: 8 (checksum) or 12 (size). */
static bool parse_number(const uint8_t *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if ((p[0] & 0x80) != 0) {
        if ((p[0] & 0x40) != 0) {
            return false; /* negative */
        }
        v = p[0] & 0x3f;
        for (size_t i = 1; i < n; i++) {
            if (v > (UINT64_MAX >> 8)) {
                return false;
            }
            v = (v << 8) | p[i];
        }
        *out = v;
        return true;
    }
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == 0)) {
        i++;
    }
    bool digits = false;
    /* At most 12 octal digits: 36 bits, so v cannot overflow. */
    for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
        v = (v << 3) | (uint64_t)(p[i] - '0');
        digits = true;
    }
    for (; i < n; i++) {
        if (p[i] != ' ' && p[i] != 0) {
            return false;
        }
    }
    *out = digits ? v : 0;
    return true;
}

bool stg_tar_header_ok(const uint8_t *block, size_t avail)
{
    if (avail < STG_TAR_BLOCK || memcmp(block + OFF_MAGIC, "ustar", 5) != 0) {
        return false;
    }
    uint64_t stored;
    if (!parse_number(block + OFF_CHKSUM, 8, &stored)) {
        return false;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < STG_TAR_BLOCK; i++) {
        sum += (i >= OFF_CHKSUM && i < OFF_CHKSUM + 8) ? (uint64_t)' ' : block[i];
    }
    return sum == stored;
}

void stg_tar_init(stg_tar *t, const uint8_t *buf, size_t len)
{
    t->buf = buf;
    t->len = len;
    t->pos = 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0) {
            return false;
        }
    }
    return true;
}

/* Copies text (cut at the first NUL) into the entry's name; false when it does not fit. */
static bool set_name(stg_tar_entry *e, const uint8_t *p, size_t n)
{
    const uint8_t *nul = memchr(p, 0, n);
    if (nul != NULL) {
        n = (size_t)(nul - p);
    }
    if (n > STG_TAR_NAME_MAX) {
        return false;
    }
    memcpy(e->name, p, n);
    e->name[n] = '\0';
    e->name_len = n;
    return true;
}

/* Finds "path=" in pax records "LEN key=value\n"; false on a malformed record. */
static bool pax_path(const uint8_t *p, size_t n, stg_tar_entry *e, bool *found)
{
    size_t pos = 0;
    while (pos < n) {
        uint64_t rec_len = 0;
        size_t i = pos;
        while (i < n && p[i] >= '0' && p[i] <= '9') {
            if (rec_len > 1000000000u) {
                return false;
            }
            rec_len = rec_len * 10 + (uint64_t)(p[i] - '0');
            i++;
        }
        if (i >= n || p[i] != ' ' || rec_len == 0 || rec_len > n - pos ||
            p[pos + rec_len - 1] != '\n') {
            return false;
        }
        size_t kv = i + 1, end = pos + (size_t)rec_len - 1;
        if (end - kv >= 5 && memcmp(p + kv, "path=", 5) == 0) {
            if (!set_name(e, p + kv + 5, end - kv - 5)) {
                return false;
            }
            *found = true;
        }
        pos += (size_t)rec_len;
    }
    return true;
}

static stg_tar_result bad(uint64_t *err_offset, const char **why, uint64_t at, const char *what)
{
    *err_offset = at;
    *why = what;
    return STG_TARR_MALFORMED;
}

stg_tar_result stg_tar_next(stg_tar *t, stg_tar_entry *e, uint64_t *err_offset, const char **why)
{
    bool have_long_name = false;
    e->name[0] = '\0';
    e->name_len = 0;
    e->type = 0;
    e->header_offset = e->data_offset = e->size = 0;
    for (;;) {
        stg_cursor c = stg_cur_make(t->buf, t->len);
        const uint8_t *h;
        uint64_t here = t->pos;
        if (stg_cur_seek(&c, (size_t)here) != STG_OK) {
            return bad(err_offset, why, here, "tar position past the end");
        }
        size_t left = stg_cur_avail(&c);
        if (left == 0) {
            return have_long_name ? bad(err_offset, why, here, "long name without a member")
                                  : STG_TARR_END;
        }
        if (stg_cur_take(&c, STG_TAR_BLOCK, &h) != STG_OK) {
            if (all_zero(t->buf + here, left)) {
                return STG_TARR_END;
            }
            return bad(err_offset, why, here, "tar header truncated");
        }
        if (all_zero(h, STG_TAR_BLOCK)) {
            return STG_TARR_END;
        }
        if (!stg_tar_header_ok(h, STG_TAR_BLOCK)) {
            return bad(err_offset, why, here, "tar header checksum or magic invalid");
        }
        uint64_t size;
        if (!parse_number(h + OFF_SIZE, 12, &size)) {
            return bad(err_offset, why, here + OFF_SIZE, "tar size field invalid");
        }
        uint64_t data = c.pos;
        if (size > stg_cur_avail(&c)) {
            return bad(err_offset, why, here, "tar member data runs past the end");
        }
        /* Data is padded to whole blocks; the padding of the last member may be missing. */
        uint64_t padded = (size + (STG_TAR_BLOCK - 1)) / STG_TAR_BLOCK * STG_TAR_BLOCK;
        uint64_t avail = stg_cur_avail(&c);
        t->pos = data + (padded <= avail ? padded : avail);
        char type = (char)h[OFF_TYPE];
        if (type == 'L') {
            if (!set_name(e, t->buf + data, (size_t)size)) {
                return bad(err_offset, why, here, "tar long name too long");
            }
            have_long_name = true;
            continue;
        }
        if (type == 'x') {
            bool found = false;
            if (!pax_path(t->buf + data, (size_t)size, e, &found)) {
                return bad(err_offset, why, data, "pax extended header invalid");
            }
            have_long_name = have_long_name || found;
            continue;
        }
        if (type == 'g' || type == 'K') {
            continue;
        }
        if (!have_long_name) {
            /* ustar: prefix "/" name; GNU headers keep other fields in the prefix area. */
            char joined[155 + 1 + 100];
            size_t n = 0;
            const uint8_t *nul;
            if (memcmp(h + OFF_MAGIC, "ustar\0", 6) == 0 && h[OFF_PREFIX] != 0) {
                nul = memchr(h + OFF_PREFIX, 0, 155);
                size_t plen = nul != NULL ? (size_t)(nul - (h + OFF_PREFIX)) : 155;
                memcpy(joined, h + OFF_PREFIX, plen);
                n = plen;
                joined[n++] = '/';
            }
            nul = memchr(h + OFF_NAME, 0, 100);
            size_t nlen = nul != NULL ? (size_t)(nul - (h + OFF_NAME)) : 100;
            memcpy(joined + n, h + OFF_NAME, nlen);
            n += nlen;
            (void)set_name(e, (const uint8_t *)joined, n);
        }
        e->type = type;
        e->header_offset = here;
        e->data_offset = data;
        e->size = size;
        return STG_TARR_OK;
    }
}
