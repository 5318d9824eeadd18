/* Zip reader: end records, central directory, local headers (see zip.h). Every read goes
 * through the bounded cursor; every sum of file-derived numbers is checked. */
#include "zip.h"

#include <string.h>

#include "cursor.h"
#include "sort.h"
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

/* Windowed reading: true (and err set to STG_ZIPR_NEED) when [offset, offset + n) is not held.
 * Ranges past the buffer are the cursor's business (they fail as truncated): cut to it. */
static bool missing(const stg_zip *z, uint64_t offset, uint64_t n, stg_zip_error *err)
{
    if (z->have == NULL || offset >= z->len || n == 0) {
        return false;
    }
    if (n > z->len - offset) {
        n = z->len - offset;
    }
    if (z->have(z->have_ctx, offset, n)) {
        return false;
    }
    err->offset = offset;
    err->len = n;
    err->what = "bytes not read in yet";
    return true;
}

static bool sig_at(const uint8_t *buf, size_t len, uint64_t pos, uint32_t sig)
{
    stg_cursor c = stg_cur_make(buf, len);
    uint32_t v;
    return pos <= len && stg_cur_seek(&c, (size_t)pos) == STG_OK &&
           stg_cur_le32(&c, &v) == STG_OK && v == sig;
}

/* The comment length field of an end record: the last 2 bytes of the buffer. */
static uint16_t last_le16(const uint8_t *buf, size_t len)
{
    stg_cursor c = stg_cur_make(buf, len);
    uint16_t v = 0;
    if (len >= 2) {
        (void)stg_cur_seek(&c, len - 2);
        (void)stg_cur_le16(&c, &v);
    }
    return v;
}

/* The highest position in [lowest, top) where an end record signature starts, or UINT64_MAX.
 * Both readers search up to 65 KiB backwards for it in every file they are asked about (for a
 * small safetensors file that search was most of its validation), so candidates come from
 * memrchr, vectorised in glibc; elsewhere the plain backwards byte loop, with the same result. */
static uint64_t last_eocd_sig(const uint8_t *buf, size_t len, uint64_t lowest, uint64_t top)
{
    uint64_t hi = top;
    while (hi > lowest) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
        const uint8_t *p = memrchr(buf + lowest, 0x50, (size_t)(hi - lowest));
        if (p == NULL) {
            return UINT64_MAX;
        }
        uint64_t pos = (uint64_t)(p - buf);
#else
        uint64_t pos = hi - 1;
        if (buf[pos] != 0x50) {
            hi = pos;
            continue;
        }
#endif
        if (sig_at(buf, len, pos, SIG_EOCD)) {
            return pos;
        }
        hi = pos;
    }
    return UINT64_MAX;
}

static stg_zip_result not_found(stg_zip_error *err)
{
    err->offset = 0;
    err->what = NULL;
    return STG_ZIPR_NOT_FOUND;
}

/* Fills z from the directory a reader settled on. */
static void set_reading(stg_zip *z, uint64_t eocd, uint64_t cd_start, uint64_t cd_size,
                        uint64_t entries, bool zip64)
{
    z->eocd_offset = eocd;
    z->cd_start = cd_start;
    z->cd_size = cd_size;
    z->entry_count = entries;
    z->zip64 = zip64;
    z->next_pos = cd_start;
    z->next_index = 0;
}

/* Python's zipfile (_EndRecData, _EndRecData64, _RealGetContents). The end record is the one
 * that fills exactly the last 22 bytes with an empty comment, else the last signature in the
 * last 65,558 bytes, usable or not. A ZIP64 locator right before it sends zipfile to the 56
 * bytes right before the locator (never to the offset the locator declares); without a ZIP64
 * record there it keeps the classic fields. The directory is the cd_size bytes right before
 * the record(s); the declared offset only says how many bytes were prepended ("concat"), and
 * the entry count is never read. */
static stg_zip_result open_zipfile(stg_zip *z, stg_zip_error *err)
{
    const uint8_t *buf = z->buf;
    size_t len = z->len;
    uint64_t pos = (uint64_t)len - EOCD_LEN;
    if (!sig_at(buf, len, pos, SIG_EOCD) || last_le16(buf, len) != 0) {
        uint64_t lowest = len > STG_ZIP_ZIPFILE_SEARCH ? len - STG_ZIP_ZIPFILE_SEARCH : 0;
        pos = last_eocd_sig(buf, len, lowest, (uint64_t)len - 3);
        if (pos == UINT64_MAX) {
            return not_found(err);
        }
        if (len - pos < EOCD_LEN) {
            return fail(err, STG_ZIPR_MALFORMED, pos,
                        "the last end record signature has fewer than 22 bytes after it");
        }
    }
    const uint8_t *eocd = buf + pos;
    uint64_t entries = stg_le16(eocd + 10), cd_size = stg_le32(eocd + 12),
             cd_offset = stg_le32(eocd + 16);
    uint64_t cd_end = pos; /* where the directory ends */
    bool zip64 = false;
    uint64_t below = pos >= LOCATOR64_LEN + EOCD64_LEN ? pos - LOCATOR64_LEN - EOCD64_LEN : 0;
    if (missing(z, below, pos - below, err)) {
        return STG_ZIPR_NEED;
    }
    if (pos >= LOCATOR64_LEN && sig_at(buf, len, pos - LOCATOR64_LEN, SIG_LOCATOR64)) {
        const uint8_t *loc = buf + pos - LOCATOR64_LEN;
        if (stg_le32(loc + 4) != 0 || stg_le32(loc + 16) > 1) {
            return fail(err, STG_ZIPR_MALFORMED, pos - LOCATOR64_LEN,
                        "ZIP64 locator names several disks");
        }
        if (pos < LOCATOR64_LEN + EOCD64_LEN) {
            return fail(err, STG_ZIPR_MALFORMED, pos - LOCATOR64_LEN,
                        "ZIP64 locator too close to the file start");
        }
        uint64_t rec = pos - LOCATOR64_LEN - EOCD64_LEN;
        if (sig_at(buf, len, rec, SIG_EOCD64)) {
            const uint8_t *r64 = buf + rec;
            entries = stg_le64(r64 + 32);
            cd_size = stg_le64(r64 + 40);
            cd_offset = stg_le64(r64 + 48);
            cd_end = rec;
            zip64 = true;
        }
    }
    if (cd_size > cd_end) {
        return fail(err, STG_ZIPR_MALFORMED, pos,
                    "the central directory would start before the file");
    }
    uint64_t cd_start = cd_end - cd_size;
    set_reading(z, pos, cd_start, cd_size, entries, zip64);
    if (cd_offset <= cd_start) {
        z->base = cd_start - cd_offset;
    } else {
        z->base_below = cd_offset - cd_start;
    }
    return STG_ZIPR_OK;
}

/* miniz (mz_zip_reader_locate_header_sig, mz_zip_reader_read_central_dir), as torch's
 * PyTorchStreamReader uses it. The end record is the last signature with at least 22 bytes
 * after it in the last STG_ZIP_MINIZ_SEARCH bytes. A ZIP64 locator right before it is followed
 * to the offset it declares; without a ZIP64 record there the classic fields are kept. The
 * directory is at its declared offset, absolute (no correction for prepended bytes), and holds
 * the declared number of entries. */
static stg_zip_result open_miniz(stg_zip *z, stg_zip_error *err)
{
    const uint8_t *buf = z->buf;
    size_t len = z->len;
    uint64_t lowest = 0;
    if (len > 4096) {
        uint64_t blocks = (len - 4096) / 4093; /* blocks after the first, none before byte 0 */
        lowest = len - 4096 - 4093 * (blocks < 16 ? blocks : 16);
    }
    uint64_t pos = last_eocd_sig(buf, len, lowest, (uint64_t)len - EOCD_LEN + 1);
    if (pos == UINT64_MAX) {
        return not_found(err);
    }
    const uint8_t *eocd = buf + pos;
    uint64_t entries = stg_le16(eocd + 10), on_disk = stg_le16(eocd + 8),
             this_disk = stg_le16(eocd + 4), cd_disk = stg_le16(eocd + 6),
             cd_size = stg_le32(eocd + 12), cd_offset = stg_le32(eocd + 16);
    bool zip64 = false;
    if (pos >= LOCATOR64_LEN + EOCD64_LEN && missing(z, pos - LOCATOR64_LEN, LOCATOR64_LEN, err)) {
        return STG_ZIPR_NEED;
    }
    if (pos >= LOCATOR64_LEN + EOCD64_LEN && sig_at(buf, len, pos - LOCATOR64_LEN, SIG_LOCATOR64)) {
        const uint8_t *loc = buf + pos - LOCATOR64_LEN;
        uint64_t rec = stg_le64(loc + 8);
        if (rec > len - EOCD64_LEN) {
            return fail(err, STG_ZIPR_MALFORMED, pos - LOCATOR64_LEN,
                        "ZIP64 locator points past the file");
        }
        if (missing(z, rec, EOCD64_LEN, err)) {
            return STG_ZIPR_NEED;
        }
        if (sig_at(buf, len, rec, SIG_EOCD64)) {
            const uint8_t *r64 = buf + rec;
            if (stg_le64(r64 + 4) < EOCD64_LEN - 12 || stg_le32(loc + 16) != 1 ||
                stg_le64(r64 + 32) > UINT32_MAX || stg_le64(r64 + 24) > UINT32_MAX ||
                stg_le64(r64 + 40) > UINT32_MAX) {
                return fail(err, STG_ZIPR_MALFORMED, rec,
                            "ZIP64 end record with sizes, counts or disks out of range");
            }
            entries = stg_le64(r64 + 32);
            on_disk = stg_le64(r64 + 24);
            cd_size = stg_le64(r64 + 40);
            this_disk = stg_le32(r64 + 16);
            cd_disk = stg_le32(r64 + 20);
            cd_offset = stg_le64(r64 + 48);
            zip64 = true;
        }
    }
    if (entries != on_disk || ((this_disk | cd_disk) != 0 && (this_disk != 1 || cd_disk != 1))) {
        return fail(err, STG_ZIPR_MALFORMED, pos, "end record spans several disks");
    }
    /* miniz multiplies in 32 bits, but a count that wraps there fails its walk instead. */
    if (cd_size < entries * CENTRAL_LEN || cd_offset > len || len - cd_offset < cd_size) {
        return fail(err, STG_ZIPR_MALFORMED, pos,
                    "the declared central directory does not fit its entries or the file");
    }
    set_reading(z, pos, cd_offset, cd_size, entries, zip64);
    z->miniz_disk = (uint32_t)this_disk;
    return STG_ZIPR_OK;
}

static stg_zip_result read_central(stg_zip *z, stg_zip_entry *e, stg_zip_error *err);

/* Each reader parses every central header before it lets a member be read, and refuses the
 * whole archive when one is broken: the same walk, on a copy, at open. */
static stg_zip_result check_directory(const stg_zip *zin, stg_zip_error *err)
{
    stg_zip z = *zin;
    stg_zip_entry e;
    for (;;) {
        stg_zip_result zr = read_central(&z, &e, err);
        if (zr == STG_ZIPR_END) {
            return STG_ZIPR_OK;
        }
        if (zr == STG_ZIPR_MALFORMED) {
            return zr;
        }
    }
}

stg_zip_result stg_zip_open_windowed(stg_zip *z, const uint8_t *buf, size_t len,
                                     stg_zip_reader reader, stg_zip_have_fn have, void *have_ctx,
                                     stg_zip_error *err)
{
    memset(z, 0, sizeof *z);
    z->buf = buf;
    z->len = len;
    z->reader = reader;
    z->have = have;
    z->have_ctx = have_ctx;
    if (len < EOCD_LEN) {
        return not_found(err);
    }
    /* Both end-record searches stay inside the last STG_ZIP_WINDOW_TAIL bytes (zip.h). */
    uint64_t tail = len > STG_ZIP_WINDOW_TAIL ? len - STG_ZIP_WINDOW_TAIL : 0;
    if (missing(z, tail, len - tail, err)) {
        return STG_ZIPR_NEED;
    }
    stg_zip_result zr = reader == STG_ZIP_READER_MINIZ ? open_miniz(z, err) : open_zipfile(z, err);
    if (zr != STG_ZIPR_OK) {
        return zr;
    }
    if (missing(z, z->cd_start, z->cd_size, err)) {
        return STG_ZIPR_NEED;
    }
    return check_directory(z, err);
}

stg_zip_result stg_zip_open_as(stg_zip *z, const uint8_t *buf, size_t len, stg_zip_reader reader,
                               stg_zip_error *err)
{
    return stg_zip_open_windowed(z, buf, len, reader, NULL, NULL, err);
}

stg_zip_result stg_zip_open(stg_zip *z, const uint8_t *buf, size_t len, stg_zip_error *err)
{
    return stg_zip_open_as(z, buf, len, STG_ZIP_READER_ZIPFILE, err);
}

bool stg_zip_same_reading(const stg_zip *a, const stg_zip *b)
{
    if (a->cd_start != b->cd_start || a->base != b->base || a->base_below != b->base_below) {
        return false;
    }
    /* Same directory, same offsets: the same reading only if both walk the same headers to the
     * same end (zipfile stops at the directory's size, miniz at its count: one stopping
     * earlier reads other entries). */
    stg_zip x = *a, y = *b;
    stg_zip_entry ex, ey;
    stg_zip_error err;
    for (;;) {
        stg_zip_result rx = read_central(&x, &ex, &err);
        stg_zip_result ry = read_central(&y, &ey, &err);
        if (rx != ry) {
            return false;
        }
        if (rx == STG_ZIPR_END || rx == STG_ZIPR_MALFORMED) {
            return true;
        }
        if (ex.cd_offset != ey.cd_offset || ex.local_offset != ey.local_offset ||
            ex.comp_size != ey.comp_size) {
            return false;
        }
    }
}

const char *stg_zip_reader_name(stg_zip_reader reader)
{
    return reader == STG_ZIP_READER_MINIZ ? "miniz" : "zipfile";
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
    if (missing(z, e->local_offset, LOCAL_LEN, err)) {
        return STG_ZIPR_NEED;
    }
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
    if (missing(z, e->local_offset + LOCAL_LEN, (uint64_t)name_len + extra_len, err)) {
        return STG_ZIPR_NEED;
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

/* The extra fields of a central header as the reader walks them. zipfile refuses the archive
 * when a field runs past the extra area and ignores 1 to 3 bytes left over; miniz (which looks
 * only when a size or offset is a ZIP64 placeholder) refuses leftovers too, and stops at the
 * first ZIP64 field. */
static bool extra_chain_ok(stg_cursor ex, bool miniz)
{
    while (stg_cur_avail(&ex) >= 4) {
        uint16_t id = 0, size = 0;
        (void)stg_cur_le16(&ex, &id);
        (void)stg_cur_le16(&ex, &size);
        if (stg_cur_skip(&ex, size) != STG_OK) {
            return false;
        }
        if (miniz && id == 1) {
            return true;
        }
    }
    return !miniz || stg_cur_avail(&ex) == 0;
}

/* Whether the extra fields hold a ZIP64 field (id 1) before the chain breaks. */
static bool has_zip64_field(stg_cursor ex)
{
    while (stg_cur_avail(&ex) >= 4) {
        uint16_t id = 0, size = 0;
        (void)stg_cur_le16(&ex, &id);
        (void)stg_cur_le16(&ex, &size);
        if (stg_cur_skip(&ex, size) != STG_OK) {
            return false;
        }
        if (id == 1) {
            return true;
        }
    }
    return false;
}

/* Parses the central header at z->next_pos the way z->reader does at open: STG_ZIPR_END after
 * the last entry the reader reads (zipfile: the directory's size is used up; miniz: the
 * declared count is reached), STG_ZIPR_MALFORMED when the reader refuses the whole archive,
 * STG_ZIPR_ENTRY_BAD when only this entry is unusable. Fills the central fields of e and its
 * absolute local header offset. */
static stg_zip_result read_central(stg_zip *z, stg_zip_entry *e, stg_zip_error *err)
{
    memset(e, 0, sizeof *e);
    e->local_offset = UINT64_MAX; /* not a position until the central entry gives one */
    bool miniz = z->reader == STG_ZIP_READER_MINIZ;
    uint64_t cd_end = z->cd_start + z->cd_size; /* <= len: checked at open */
    if (miniz ? z->next_index >= z->entry_count : z->next_pos >= cd_end) {
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
     * 24), name, extra and comment lengths (28, 30, 32), disk (34), attributes, offset (42) */
    uint32_t sig = stg_le32(h), crc = stg_le32(h + 16), csize32 = stg_le32(h + 20),
             usize32 = stg_le32(h + 24), offset32 = stg_le32(h + 42);
    uint16_t flags = stg_le16(h + 8), method = stg_le16(h + 10), name_len = stg_le16(h + 28),
             extra_len = stg_le16(h + 30), comment_len = stg_le16(h + 32), disk = stg_le16(h + 34);
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
    bool placeholder = csize32 == UINT32_MAX || usize32 == UINT32_MAX || offset32 == UINT32_MAX;
    if (miniz) {
        /* mz_zip_reader_read_central_dir's checks; it reads method and time as one 32-bit
         * field, so a stored entry with a nonzero time escapes the size comparison. */
        bool sizes_bad = csize32 != UINT32_MAX && usize32 != UINT32_MAX &&
                         ((stg_le32(h + 10) == 0 && usize32 != csize32) ||
                          (usize32 != 0 && csize32 == 0));
        if (sizes_bad || disk == UINT16_MAX || (disk != z->miniz_disk && disk != 1) ||
            (csize32 != UINT32_MAX && (uint64_t)offset32 + LOCAL_LEN + csize32 > z->len) ||
            (flags & 0x2000u) != 0 ||
            (placeholder && !z->miniz_zip64_seen && !extra_chain_ok(extra, true))) {
            return fail(err, STG_ZIPR_MALFORMED, here,
                        "central directory entry with impossible sizes, another disk, a masked "
                        "header or data past the end");
        }
        /* once one entry has a ZIP64 field, miniz stops looking at the others' extra fields */
        z->miniz_zip64_seen = z->miniz_zip64_seen || (placeholder && has_zip64_field(extra));
    } else if (h[6] > 63 || !extra_chain_ok(extra, false)) {
        return fail(err, STG_ZIPR_MALFORMED, here,
                    "central directory entry needs a version over 6.3 or has a broken extra field");
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
    if (z->base_below > 0) {
        if (rel_offset < z->base_below) {
            return fail(err, STG_ZIPR_ENTRY_BAD, here,
                        "local header offset lies before the start of the file");
        }
        e->local_offset = rel_offset - z->base_below;
    } else if (stg_add_u64(z->base, rel_offset, &e->local_offset)) {
        /* past any buffer, so nobody takes the wrapped sum for a position */
        e->local_offset = UINT64_MAX;
        return fail(err, STG_ZIPR_ENTRY_BAD, here, "local header offset overflows");
    }
    return STG_ZIPR_OK;
}

stg_zip_result stg_zip_next(stg_zip *z, stg_zip_entry *e, stg_zip_error *err)
{
    stg_zip before = *z;
    stg_zip_result zr = read_central(z, e, err);
    if (zr == STG_ZIPR_END) {
        /* What the reader ignores, stguard reports: the other reader stops elsewhere. */
        if (z->reader == STG_ZIP_READER_MINIZ && z->next_pos != z->cd_start + z->cd_size) {
            return fail(err, STG_ZIPR_MALFORMED, z->next_pos,
                        "central directory holds more than the declared entries");
        }
        if (z->reader == STG_ZIP_READER_ZIPFILE && z->next_index != z->entry_count) {
            return fail(err, STG_ZIPR_MALFORMED, z->eocd_offset,
                        "the end record's entry count differs from the entries in the central "
                        "directory");
        }
        return STG_ZIPR_END;
    }
    if (zr != STG_ZIPR_OK) {
        return zr;
    }
    stg_zip_result lr = read_local(z, e, err);
    if (lr == STG_ZIPR_NEED) {
        *z = before; /* called again once the bytes are in */
    }
    return lr;
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

/* Order by (begin, end). */
static int range_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const stg_zip_range *a = pa, *b = pb;
    if (a->begin != b->begin) {
        return a->begin < b->begin ? -1 : 1;
    }
    return a->end < b->end ? -1 : (a->end > b->end ? 1 : 0);
}

size_t stg_zip_sort_overlaps(stg_zip_range *v, size_t n, size_t *first_overlap)
{
    stg_sort(v, n, sizeof *v, range_cmp, NULL);
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

bool stg_zip_method_format(uint16_t method, stg_inflate_format *fmt)
{
    switch (method) {
    case 8: *fmt = STG_INFLATE_RAW; return true;
    case 12: *fmt = STG_INFLATE_BZIP2; return true;
    case 14: *fmt = STG_INFLATE_ZIP_LZMA; return true;
    default: return false;
    }
}
