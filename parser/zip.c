/* Zip reader: end records, central directory, local headers (see zip.h). Every read goes
 * through the bounded cursor; every sum of file-derived numbers is checked. */
#include "zip.h"

#include <string.h>

#include "cursor.h"
#include "util.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u

#define EOCD_LEN 22u
#define LOCATOR64_LEN 20u
#define EOCD64_LEN 56u
#define CENTRAL_LEN 46u
#define LOCAL_LEN 30u

#define FLAG_DATA_DESCRIPTOR 0x8u

static stg_zip_result fail(stg_zip_error *err, stg_zip_result res, uint64_t offset,
                           const char *what)
{
    err->offset = offset;
    err->what = what;
    return res;
}

static bool sig_at(const uint8_t *buf, size_t len, uint64_t pos, uint32_t sig)
{
    return pos <= len && len - pos >= 4 && stg_le32(buf + pos) == sig;
}

/* Reads the ZIP64 end record the locator before the classic end record points to. The record
 * is looked for at its declared offset, and else right before the locator (archives with bytes
 * prepended). Returns the record's absolute position or UINT64_MAX. */
static uint64_t find_eocd64(const uint8_t *buf, size_t len, uint64_t locator_pos)
{
    uint64_t declared = stg_le64(buf + locator_pos + 8);
    if (declared <= len && len - declared >= EOCD64_LEN && sig_at(buf, len, declared, SIG_EOCD64)) {
        return declared;
    }
    if (locator_pos >= EOCD64_LEN && sig_at(buf, len, locator_pos - EOCD64_LEN, SIG_EOCD64)) {
        return locator_pos - EOCD64_LEN;
    }
    return UINT64_MAX;
}

/* Tries the end record at pos (the caller found its signature there, with its 22 bytes inside
 * the buffer). Returns STG_ZIPR_OK and fills z, or NOT_FOUND when this candidate does not
 * describe a central directory inside the buffer. */
static stg_zip_result try_eocd(stg_zip *z, const uint8_t *buf, size_t len, uint64_t pos)
{
    stg_cursor c = stg_cur_make(buf, len);
    const uint8_t *eocd;
    (void)stg_cur_seek(&c, (size_t)pos); /* pos <= len - 22 */
    if (stg_cur_take(&c, EOCD_LEN, &eocd) != STG_OK) {
        return STG_ZIPR_NOT_FOUND;
    }
    /* signature, disk numbers (4), entries on this disk (8), entries (10), size, offset */
    uint64_t entries = stg_le16(eocd + 10), cd_size = stg_le32(eocd + 12),
             cd_offset = stg_le32(eocd + 16);
    uint64_t cd_end = pos; /* where the central directory must end */
    bool zip64 = false;
    if (pos >= LOCATOR64_LEN && sig_at(buf, len, pos - LOCATOR64_LEN, SIG_LOCATOR64)) {
        uint64_t rec = find_eocd64(buf, len, pos - LOCATOR64_LEN);
        if (rec == UINT64_MAX) {
            return STG_ZIPR_NOT_FOUND;
        }
        /* find_eocd64 checked that the whole record lies inside the buffer */
        stg_cursor r = stg_cur_make(buf, len);
        const uint8_t *r64;
        (void)stg_cur_seek(&r, (size_t)rec);
        if (stg_cur_take(&r, EOCD64_LEN, &r64) != STG_OK) {
            return STG_ZIPR_NOT_FOUND;
        }
        /* sig, size, versions, disk numbers (24), entries on this disk (32), entries, size,
         * offset */
        entries = stg_le64(r64 + 32);
        cd_size = stg_le64(r64 + 40);
        cd_offset = stg_le64(r64 + 48);
        cd_end = rec;
        zip64 = true;
    }
    /* Python's rule: the central directory sits right before the end record(s); whatever the
     * declared offset says beyond that is bytes prepended to the archive. */
    if (cd_size > cd_end || cd_end - cd_size < cd_offset) {
        return STG_ZIPR_NOT_FOUND;
    }
    uint64_t cd_start = cd_end - cd_size;
    if (entries > cd_size / CENTRAL_LEN) {
        return STG_ZIPR_NOT_FOUND;
    }
    if (entries > 0 && !sig_at(buf, len, cd_start, SIG_CENTRAL)) {
        return STG_ZIPR_NOT_FOUND;
    }
    memset(z, 0, sizeof *z);
    z->buf = buf;
    z->len = len;
    z->eocd_offset = pos;
    z->cd_start = cd_start;
    z->cd_size = cd_size;
    z->entry_count = entries;
    z->base = cd_start - cd_offset;
    z->zip64 = zip64;
    z->next_pos = cd_start;
    z->next_index = 0;
    return STG_ZIPR_OK;
}

stg_zip_result stg_zip_open(stg_zip *z, const uint8_t *buf, size_t len, stg_zip_error *err)
{
    memset(z, 0, sizeof *z);
    err->offset = 0;
    err->what = NULL;
    if (len < EOCD_LEN) {
        return STG_ZIPR_NOT_FOUND;
    }
    uint64_t lowest = len > STG_ZIP_EOCD_SEARCH ? (uint64_t)len - STG_ZIP_EOCD_SEARCH : 0;
    bool saw_signature = false;
    uint64_t first_sig = 0;
    /* From the end backwards: the last end record that parses wins, as in Python. */
    for (uint64_t pos = (uint64_t)len - EOCD_LEN + 1; pos-- > lowest;) {
        if (buf[pos] != 0x50 || !sig_at(buf, len, pos, SIG_EOCD)) {
            continue;
        }
        if (!saw_signature) {
            saw_signature = true;
            first_sig = pos;
        }
        if (try_eocd(z, buf, len, pos) == STG_ZIPR_OK) {
            return STG_ZIPR_OK;
        }
    }
    if (saw_signature) {
        /* An end record that leads nowhere: a broken archive, not "no archive". Callers that
         * only probe (polyglot search) treat this as not found. */
        return fail(err, STG_ZIPR_MALFORMED, first_sig,
                    "end of central directory record points outside the file");
    }
    return STG_ZIPR_NOT_FOUND;
}

/* Walks the extra fields ex covers for the ZIP64 field (id 1) and replaces the 0xFFFFFFFF
 * placeholders in the order the specification gives. need_* say which are placeholders. */
static bool apply_zip64_extra(stg_cursor ex, bool need_usize, bool need_csize, bool need_offset,
                              uint64_t *usize, uint64_t *csize, uint64_t *offset)
{
    while (stg_cur_avail(&ex) >= 4) {
        uint16_t id = 0, size = 0;
        stg_cursor field;
        (void)stg_cur_le16(&ex, &id); /* 4 bytes are available: these cannot fail */
        (void)stg_cur_le16(&ex, &size);
        if (stg_cur_sub(&ex, size, &field) != STG_OK) {
            return false;
        }
        if (id != 1) {
            continue;
        }
        if (need_usize && stg_cur_le64(&field, usize) != STG_OK) {
            return false;
        }
        if (need_csize && stg_cur_le64(&field, csize) != STG_OK) {
            return false;
        }
        if (need_offset && stg_cur_le64(&field, offset) != STG_OK) {
            return false;
        }
        return true;
    }
    return !need_usize && !need_csize && !need_offset;
}

/* Local header of e: fills the local_* fields, data range and mismatch bits. */
static stg_zip_result read_local(const stg_zip *z, stg_zip_entry *e, stg_zip_error *err)
{
    stg_cursor c = stg_cur_make(z->buf, z->len);
    if (e->local_offset >= z->cd_start) {
        return fail(err, STG_ZIPR_ENTRY_BAD, e->cd_offset,
                    "local header offset lies outside the archive");
    }
    (void)stg_cur_seek(&c, (size_t)e->local_offset); /* < cd_start <= len */
    const uint8_t *h;
    if (stg_cur_take(&c, LOCAL_LEN, &h) != STG_OK) {
        return fail(err, STG_ZIPR_ENTRY_BAD, e->local_offset, "local header truncated");
    }
    /* signature, version (4), flags (6), method (8), time, date, crc (14), sizes (18, 22),
     * name and extra lengths (26, 28) */
    uint32_t sig = stg_le32(h), csize32 = stg_le32(h + 18), usize32 = stg_le32(h + 22);
    uint16_t flags = stg_le16(h + 6), method = stg_le16(h + 8), name_len = stg_le16(h + 26),
             extra_len = stg_le16(h + 28);
    if (sig != SIG_LOCAL) {
        return fail(err, STG_ZIPR_ENTRY_BAD, e->local_offset, "local header signature missing");
    }
    const uint8_t *name;
    stg_cursor extra;
    if (stg_cur_take(&c, name_len, &name) != STG_OK) {
        return fail(err, STG_ZIPR_ENTRY_BAD, e->local_offset, "local header name truncated");
    }
    if (stg_cur_sub(&c, extra_len, &extra) != STG_OK) {
        return fail(err, STG_ZIPR_ENTRY_BAD, e->local_offset, "local header extra truncated");
    }
    e->local_name = name;
    e->local_name_len = name_len;
    e->local_flags = flags;
    e->local_method = method;
    e->data_offset = c.pos;
    uint64_t lcsize = csize32, lusize = usize32, unused = 0;
    bool z64 = csize32 == UINT32_MAX || usize32 == UINT32_MAX;
    if (z64 && !apply_zip64_extra(extra, true, true, false, &lusize, &lcsize, &unused)) {
        return fail(err, STG_ZIPR_ENTRY_BAD, e->local_offset, "local header lacks its ZIP64 sizes");
    }
    e->local_sizes_known = !((flags & FLAG_DATA_DESCRIPTOR) != 0 && lcsize == 0 && lusize == 0);
    e->local_comp_size = lcsize;
    e->local_uncomp_size = lusize;

    if (name_len != e->name_len || memcmp(name, e->name, name_len) != 0) {
        e->mismatch |= STG_ZIP_MISMATCH_NAME;
    }
    if (method != e->method) {
        e->mismatch |= STG_ZIP_MISMATCH_METHOD;
    }
    if (flags != e->flags) {
        e->mismatch |= STG_ZIP_MISMATCH_FLAGS;
    }
    if (e->local_sizes_known && (lcsize != e->comp_size || lusize != e->uncomp_size)) {
        e->mismatch |= STG_ZIP_MISMATCH_SIZES;
    }
    /* The data the central directory describes must lie before the central directory. */
    if (e->comp_size > z->cd_start || e->data_offset > z->cd_start - e->comp_size) {
        return fail(err, STG_ZIPR_ENTRY_BAD, e->local_offset,
                    "member data runs past the start of the central directory");
    }
    e->data_len = e->comp_size;
    return STG_ZIPR_OK;
}

stg_zip_result stg_zip_next(stg_zip *z, stg_zip_entry *e, stg_zip_error *err)
{
    memset(e, 0, sizeof *e);
    e->local_offset = UINT64_MAX; /* not a position until the central entry gives one */
    uint64_t cd_end = z->cd_start + z->cd_size; /* <= eocd offset <= len: checked at open */
    if (z->next_index >= z->entry_count) {
        if (z->next_pos != cd_end) {
            return fail(err, STG_ZIPR_MALFORMED, z->next_pos,
                        "central directory holds more than the declared entries");
        }
        return STG_ZIPR_END;
    }
    stg_cursor c = stg_cur_make(z->buf, (size_t)cd_end);
    uint64_t here = z->next_pos;
    (void)stg_cur_seek(&c, (size_t)here); /* next_pos <= cd_end: it only moves inside it */
    const uint8_t *h;
    if (stg_cur_take(&c, CENTRAL_LEN, &h) != STG_OK) {
        return fail(err, STG_ZIPR_MALFORMED, here, "central directory entry truncated");
    }
    /* signature, versions (4, 6), flags (8), method (10), time, date, crc (16), sizes (20,
     * 24), name, extra and comment lengths (28, 30, 32), disk, attributes, offset (42) */
    uint32_t sig = stg_le32(h), crc = stg_le32(h + 16), csize32 = stg_le32(h + 20),
             usize32 = stg_le32(h + 24), offset32 = stg_le32(h + 42);
    uint16_t flags = stg_le16(h + 8), method = stg_le16(h + 10), name_len = stg_le16(h + 28),
             extra_len = stg_le16(h + 30), comment_len = stg_le16(h + 32);
    if (sig != SIG_CENTRAL) {
        return fail(err, STG_ZIPR_MALFORMED, here, "central directory entry signature missing");
    }
    const uint8_t *name;
    if (stg_cur_take(&c, name_len, &name) != STG_OK) {
        return fail(err, STG_ZIPR_MALFORMED, here, "central directory name truncated");
    }
    stg_cursor extra;
    if (stg_cur_sub(&c, extra_len, &extra) != STG_OK || stg_cur_skip(&c, comment_len) != STG_OK) {
        return fail(err, STG_ZIPR_MALFORMED, here, "central directory entry truncated");
    }
    z->next_pos = c.pos;
    e->index = z->next_index++;
    e->cd_offset = here;
    e->name = name;
    e->name_len = name_len;
    e->flags = flags;
    e->method = method;
    e->crc32 = crc;
    uint64_t usize = usize32, csize = csize32, rel_offset = offset32;
    if (!apply_zip64_extra(extra, usize32 == UINT32_MAX, csize32 == UINT32_MAX,
                           offset32 == UINT32_MAX, &usize, &csize, &rel_offset)) {
        return fail(err, STG_ZIPR_ENTRY_BAD, here, "ZIP64 extra field missing or truncated");
    }
    e->comp_size = csize;
    e->uncomp_size = usize;
    if (stg_add_u64(z->base, rel_offset, &e->local_offset)) {
        /* past any buffer, so nobody takes the wrapped sum for a position */
        e->local_offset = UINT64_MAX;
        return fail(err, STG_ZIPR_ENTRY_BAD, here, "local header offset overflows");
    }
    return read_local(z, e, err);
}

uint64_t stg_zip_first_byte(const stg_zip *zin)
{
    stg_zip z = *zin;
    uint64_t first = z.cd_start;
    stg_zip_entry e;
    stg_zip_error err;
    for (;;) {
        stg_zip_result zr = stg_zip_next(&z, &e, &err);
        if (zr == STG_ZIPR_END || zr == STG_ZIPR_MALFORMED) {
            break;
        }
        if (e.local_offset < first) {
            first = e.local_offset;
        }
    }
    return first;
}

stg_zip_result stg_zip_local_next(const uint8_t *buf, size_t len, uint64_t *pos, stg_zip_entry *e,
                                  stg_zip_error *err)
{
    memset(e, 0, sizeof *e);
    if (!sig_at(buf, len, *pos, SIG_LOCAL)) {
        return STG_ZIPR_END;
    }
    /* A directory that ends at the buffer's end lets read_local check ranges against it. */
    stg_zip z;
    memset(&z, 0, sizeof z);
    z.buf = buf;
    z.len = len;
    z.cd_start = len;
    e->local_offset = *pos;
    e->cd_offset = *pos;
    /* Take the local header's own fields as the "central" ones, then read it. */
    stg_cursor c = stg_cur_make(buf, len);
    uint16_t flags, method, name_len;
    if (stg_cur_seek(&c, (size_t)*pos + 6) != STG_OK || stg_cur_le16(&c, &flags) != STG_OK ||
        stg_cur_le16(&c, &method) != STG_OK || stg_cur_skip(&c, 16) != STG_OK ||
        stg_cur_le16(&c, &name_len) != STG_OK || stg_cur_skip(&c, 2) != STG_OK ||
        stg_cur_peek(&c, name_len, &e->name) != STG_OK) {
        return fail(err, STG_ZIPR_ENTRY_BAD, *pos, "local header truncated");
    }
    e->name_len = name_len;
    e->flags = flags;
    e->method = method;
    /* Sizes come from read_local (ZIP64 resolved); zero here so its range check passes. */
    e->comp_size = 0;
    e->uncomp_size = 0;
    stg_zip_result zr = read_local(&z, e, err);
    if (zr != STG_ZIPR_OK) {
        return zr;
    }
    if (!e->local_sizes_known) {
        return fail(err, STG_ZIPR_ENTRY_BAD, *pos,
                    "local header defers its sizes to a data descriptor");
    }
    e->comp_size = e->local_comp_size;
    e->uncomp_size = e->local_uncomp_size;
    e->mismatch = 0;
    if (e->comp_size > len || e->data_offset > len - e->comp_size) {
        return fail(err, STG_ZIPR_ENTRY_BAD, *pos, "member data runs past the end of the file");
    }
    e->data_len = e->comp_size;
    *pos = e->data_offset + e->data_len;
    return STG_ZIPR_OK;
}

/* In-place heapsort by (begin, end): no recursion, no allocation. */
static bool range_less(const stg_zip_range *a, const stg_zip_range *b)
{
    return a->begin < b->begin || (a->begin == b->begin && a->end < b->end);
}

static void sift_down(stg_zip_range *v, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) {
            return;
        }
        if (child + 1 < n && range_less(&v[child], &v[child + 1])) {
            child++;
        }
        if (!range_less(&v[root], &v[child])) {
            return;
        }
        stg_zip_range t = v[root];
        v[root] = v[child];
        v[child] = t;
        root = child;
    }
}

size_t stg_zip_sort_overlaps(stg_zip_range *v, size_t n, size_t *first_overlap)
{
    for (size_t i = n / 2; i-- > 0;) {
        sift_down(v, i, n);
    }
    for (size_t end = n; end-- > 1;) {
        stg_zip_range t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
    size_t overlaps = 0;
    uint64_t reach = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i].begin == v[i].end) {
            continue;
        }
        if (any && v[i].begin < reach) {
            if (overlaps == 0) {
                *first_overlap = i;
            }
            overlaps++;
        }
        if (!any || v[i].end > reach) {
            reach = v[i].end;
        }
        any = true;
    }
    return overlaps;
}
