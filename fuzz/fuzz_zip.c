/* Target: parser/zip (stg_zip_open, stg_zip_open_as, stg_zip_next, stg_zip_sort_overlaps,
 * stg_zip_local_next), parser/inflate on every deflated entry with small caps, and parser/tar
 * over the same bytes.
 * Properties: every name, local header and data range an entry yields lies inside the buffer;
 * two walks over the same bytes give the same entries; inflate never passes its cap; tar members
 * lie inside the buffer; and each reader model agrees with the reference model of its reader
 * below (check_readers); and windowed reading (stg_zip_open_windowed over a copy that starts
 * as zeros and gets 16-byte pages copied in on STG_ZIPR_NEED) gives each reader the same
 * results, errors and entries as the whole buffer (check_windowed). Seeds: corpus/zip/. Dict:
 * fuzz/zip.dict.
 *
 * Reference models: written here, independently of parser/zip.c, as step-by-step
 * transcriptions of the readers: Python 3.11's zipfile (_EndRecData, _EndRecData64,
 * _RealGetContents, ZipInfo._decodeExtra, with Python's unbounded signed arithmetic) and miniz
 * 2.x as torch uses it (mz_zip_reader_locate_header_sig's 4 KiB blocks, including the failed
 * read of a block that would start before byte 0; mz_zip_reader_read_central_dir's checks;
 * mz_zip_file_stat_internal's ZIP64 fields). Where both open an archive they must take the same
 * end record and directory and list the same central headers with the same local header
 * offsets. Where they differ on opening, stguard must be the stricter and say so: it refuses
 * only what the reference reads through a short read (zipfile reads a name or extra field cut
 * off by the directory's end without complaint) or an empty archive, and it opens what the
 * reference refuses only when its walk then reports an entry or the directory as broken. Any
 * other disagreement aborts. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/inflate.h"
#include "parser/tar.h"
#include "parser/zip.h"

#define MAX_ENTRIES 256
#define INFLATE_CAP (1u << 20)

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t walk_zip(const uint8_t *data, size_t size, int do_inflate)
{
    stg_zip z;
    stg_zip_error err;
    memset(&err, 0, sizeof err); /* results that set no error (END) mix in 0, not stack garbage */
    uint64_t h = (uint64_t)stg_zip_open(&z, data, size, &err);
    if (h != STG_ZIPR_OK) {
        return mix(h, err.offset);
    }
    if (z.cd_start > size || z.cd_size > size - z.cd_start || z.eocd_offset + 22 > size) {
        abort();
    }
    stg_zip_range ranges[MAX_ENTRIES];
    size_t n = 0;
    for (int i = 0; i < MAX_ENTRIES; i++) {
        stg_zip_entry e;
        stg_zip_result zr = stg_zip_next(&z, &e, &err);
        h = mix(h, (uint64_t)zr);
        if (zr == STG_ZIPR_END || zr == STG_ZIPR_MALFORMED) {
            h = mix(h, err.offset);
            break;
        }
        if (zr == STG_ZIPR_ENTRY_BAD) {
            h = mix(h, err.offset);
            continue;
        }
        /* Everything yielded lies inside the buffer. */
        if (e.name < data || e.name_len > size || e.name > data + size - e.name_len ||
            e.local_name < data || e.local_name_len > size ||
            e.local_name > data + size - e.local_name_len || e.local_offset >= size ||
            e.data_offset > size || e.data_len > size - e.data_offset ||
            e.data_offset < e.local_offset + 30 || e.data_offset + e.data_len > z.cd_start) {
            abort();
        }
        h = mix(h, e.local_offset);
        h = mix(h, e.data_offset);
        h = mix(h, e.data_len);
        h = mix(h, e.mismatch);
        if (n < MAX_ENTRIES) {
            ranges[n].begin = e.local_offset;
            ranges[n].end = e.data_offset + e.data_len;
            ranges[n].index = e.index;
            n++;
        }
        if (do_inflate && e.method == 8) {
            stg_inflate_out out;
            stg_inflate_result ir = stg_inflate(data + e.data_offset, (size_t)e.data_len,
                                                STG_INFLATE_RAW, INFLATE_CAP, 1000, &out);
            if (out.len > INFLATE_CAP || out.consumed > e.data_len) {
                abort();
            }
            h = mix(h, (uint64_t)ir);
            h = mix(h, out.len);
            stg_inflate_free(&out);
        }
    }
    size_t first = 0;
    size_t overlaps = stg_zip_sort_overlaps(ranges, n, &first);
    for (size_t i = 1; i < n; i++) {
        if (ranges[i - 1].begin > ranges[i].begin) {
            abort(); /* sorted */
        }
    }
    return mix(h, overlaps);
}

/* The recovery walk over local headers: ranges inside the buffer, always moving forward. */
static uint64_t walk_local(const uint8_t *data, size_t size)
{
    uint64_t pos = 0, h = 0;
    for (int i = 0; i < MAX_ENTRIES; i++) {
        stg_zip_entry e;
        stg_zip_error err;
        uint64_t before = pos;
        stg_zip_result zr = stg_zip_local_next(data, size, &pos, &e, &err);
        h = mix(h, (uint64_t)zr);
        if (zr != STG_ZIPR_OK) {
            break;
        }
        if (pos <= before || pos > size || e.data_offset > size ||
            e.data_len > size - e.data_offset || e.name_len > size ||
            e.name > data + size - e.name_len || e.name < data) {
            abort();
        }
        h = mix(h, pos);
    }
    return h;
}

static uint64_t walk_tar(const uint8_t *data, size_t size)
{
    stg_tar t;
    static stg_tar_entry e;
    uint64_t h = 0;
    stg_parse_detail why = {.what = NULL};
    stg_tar_init(&t, data, size);
    for (int i = 0; i < MAX_ENTRIES; i++) {
        stg_parse_status tr = stg_tar_next(&t, &e, &why);
        h = mix(h, (uint64_t)tr);
        if (tr != STG_PARSE_OK) {
            break;
        }
        /* members without data (directories, links) keep tarfile's size, which may be < 0 */
        bool has_data = stg_tar_type_has_data(e.type);
        if (e.data_offset > size || (has_data && e.size < 0) ||
            (has_data && (uint64_t)e.size > size - e.data_offset) ||
            e.name_len > STG_TAR_NAME_MAX) {
            abort();
        }
        h = mix(h, e.data_offset);
    }
    return h;
}

#define MAX_REF_ENTRIES 512

typedef struct ref_entry {
    uint64_t cd_pos;
    int64_t local; /* INT64_MIN: unknown (its ZIP64 field is missing or short) */
} ref_entry;

typedef struct ref_reading {
    bool ok;
    bool short_read; /* zipfile read a name, extra or comment short */
    uint64_t eocd, cd_start;
    size_t n;
    ref_entry e[MAX_REF_ENTRIES];
} ref_reading;

static uint32_t rd16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rd32(const uint8_t *p)
{
    return rd16(p) | rd16(p + 2) << 16;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static bool is_sig(const uint8_t *p, uint32_t sig)
{
    return rd32(p) == sig;
}

/* Python's ZIP64 extra decoding for one entry: false when zipfile raises. */
static bool py_decode_extra(const uint8_t *extra, size_t len, uint64_t *usize, uint64_t *csize,
                            uint64_t *offset)
{
    while (len >= 4) {
        uint32_t tp = rd16(extra), ln = rd16(extra + 2);
        if (ln + 4 > len) {
            return false;
        }
        if (tp == 1) {
            const uint8_t *d = extra + 4;
            size_t dl = ln;
            if (*usize == 0xFFFFFFFFu) {
                if (dl < 8) {
                    return false;
                }
                *usize = rd64(d);
                d += 8;
                dl -= 8;
            }
            if (*csize == 0xFFFFFFFFu) {
                if (dl < 8) {
                    return false;
                }
                *csize = rd64(d);
                d += 8;
                dl -= 8;
            }
            if (*offset == 0xFFFFFFFFu) {
                if (dl < 8) {
                    return false;
                }
                *offset = rd64(d);
            }
        }
        extra += ln + 4;
        len -= ln + 4;
    }
    return true;
}

static void ref_zipfile(const uint8_t *buf, size_t size, ref_reading *r)
{
    memset(r, 0, sizeof *r);
    if (size < 22) {
        return;
    }
    int64_t fsize = (int64_t)size, pos = -1;
    if (is_sig(buf + size - 22, 0x06054b50u) && buf[size - 2] == 0 && buf[size - 1] == 0) {
        pos = fsize - 22;
    } else {
        int64_t start = fsize - 65536 - 22 > 0 ? fsize - 65536 - 22 : 0;
        for (int64_t i = fsize - 4; i >= start; i--) { /* data.rfind(stringEndArchive) */
            if (is_sig(buf + i, 0x06054b50u)) {
                pos = i;
                break;
            }
        }
        if (pos < 0 || fsize - pos < 22) {
            return;
        }
    }
    const uint8_t *rec = buf + pos;
    int64_t size_cd = rd32(rec + 12), offset_cd = rd32(rec + 16);
    bool z64 = false;
    if (pos - 20 >= 0 && is_sig(buf + pos - 20, 0x07064b50u)) {
        const uint8_t *loc = buf + pos - 20;
        if (rd32(loc + 4) != 0 || rd32(loc + 16) > 1) {
            return;
        }
        if (pos - 76 < 0) {
            return; /* the second seek raises OSError: BadZipFile */
        }
        const uint8_t *r64 = buf + pos - 76;
        if (is_sig(r64, 0x06064b50u)) {
            uint64_t s = rd64(r64 + 40), o = rd64(r64 + 48);
            if (s > (uint64_t)INT64_MAX / 2 || o > (uint64_t)INT64_MAX / 2) {
                return; /* start_dir is then negative or past the file: refused either way */
            }
            size_cd = (int64_t)s;
            offset_cd = (int64_t)o;
            z64 = true;
        }
    }
    int64_t concat = pos - size_cd - offset_cd - (z64 ? 76 : 0);
    int64_t start_dir = offset_cd + concat;
    if (start_dir < 0) {
        return;
    }
    /* fp.read(size_cd) at start_dir, then parsed from a BytesIO of what was read */
    int64_t avail = fsize - start_dir < size_cd ? fsize - start_dir : size_cd;
    const uint8_t *cd = buf + start_dir;
    int64_t total = 0, at = 0;
    while (total < size_cd) {
        if (at + 46 > avail) {
            return;
        }
        const uint8_t *h = cd + at;
        if (!is_sig(h, 0x02014b50u)) {
            return;
        }
        int64_t nl = rd16(h + 28), xl = rd16(h + 30), cl = rd16(h + 32);
        int64_t name_at = at + 46;
        int64_t x_at = name_at + nl > avail ? avail : name_at + nl;
        int64_t x_end = x_at + xl > avail ? avail : x_at + xl;
        if (name_at + nl + xl + cl > avail) {
            r->short_read = true;
        }
        if (h[6] > 63) {
            return;
        }
        uint64_t usize = rd32(h + 24), csize = rd32(h + 20), off = rd32(h + 42);
        if (!py_decode_extra(cd + x_at, (size_t)(x_end - x_at), &usize, &csize, &off)) {
            return;
        }
        if (r->n < MAX_REF_ENTRIES) {
            r->e[r->n].cd_pos = (uint64_t)(start_dir + at);
            r->e[r->n].local = off > (uint64_t)INT64_MAX / 2 ? INT64_MIN : (int64_t)off + concat;
            r->n++;
        }
        total += 46 + nl + xl + cl;
        at = total;
    }
    r->ok = true;
    r->eocd = (uint64_t)pos;
    r->cd_start = (uint64_t)start_dir;
}

static void ref_miniz(const uint8_t *buf, size_t size, ref_reading *r)
{
    memset(r, 0, sizeof *r);
    int64_t fsize = (int64_t)size;
    if (fsize < 22) {
        return;
    }
    int64_t cur = fsize - 4096 > 0 ? fsize - 4096 : 0, pos = -1;
    for (;;) {
        if (cur < 0) {
            return; /* the read at a negative offset fails */
        }
        int64_t n = fsize - cur < 4096 ? fsize - cur : 4096;
        for (int64_t i = n - 4; i >= 0; i--) {
            if (is_sig(buf + cur + i, 0x06054b50u) && fsize - (cur + i) >= 22) {
                pos = cur + i;
                break;
            }
        }
        if (pos >= 0) {
            break;
        }
        if (cur == 0 || fsize - cur >= 65535 + 22) {
            return;
        }
        cur -= 4096 - 3;
    }
    const uint8_t *e = buf + pos, *loc = NULL, *r64 = NULL;
    if (pos >= 76 && is_sig(buf + pos - 20, 0x07064b50u)) {
        loc = buf + pos - 20;
        uint64_t ofs = rd64(loc + 8);
        if (ofs > (uint64_t)fsize - 56) {
            return;
        }
        if (is_sig(buf + ofs, 0x06064b50u)) {
            r64 = buf + ofs;
        }
    }
    uint64_t total = rd16(e + 10), on_disk = rd16(e + 8), this_disk = rd16(e + 4),
             cd_disk = rd16(e + 6), cd_size = rd32(e + 12), cd_ofs = rd32(e + 16);
    if (r64 != NULL) {
        if (rd64(r64 + 4) < 44 || rd32(loc + 16) != 1 || rd64(r64 + 32) > 0xFFFFFFFFu ||
            rd64(r64 + 24) > 0xFFFFFFFFu || rd64(r64 + 40) > 0xFFFFFFFFu) {
            return;
        }
        total = rd64(r64 + 32);
        on_disk = rd64(r64 + 24);
        cd_size = rd64(r64 + 40);
        this_disk = rd32(r64 + 16);
        cd_disk = rd32(r64 + 20);
        cd_ofs = rd64(r64 + 48);
    }
    if (total != on_disk || ((this_disk | cd_disk) != 0 && (this_disk != 1 || cd_disk != 1))) {
        return;
    }
    if (cd_size < (uint32_t)(total * 46u)) {
        return; /* miniz multiplies in 32 bits; a wrapped product fails the walk instead */
    }
    if (cd_ofs + cd_size > (uint64_t)fsize ||
        (total != 0 && (cd_ofs > (uint64_t)fsize || cd_size > (uint64_t)fsize - cd_ofs))) {
        return; /* the sum can wrap in miniz too; then reading the directory fails */
    }
    /* with no entries a wrapped offset is never read: no pointer is formed from it */
    const uint8_t *p = total != 0 ? buf + cd_ofs : buf;
    uint64_t left = cd_size;
    bool seen64 = false;
    for (uint64_t i = 0; i < total; i++) {
        if (left < 46 || !is_sig(p, 0x02014b50u)) {
            return;
        }
        uint64_t comp = rd32(p + 20), decomp = rd32(p + 24), lho = rd32(p + 42);
        uint32_t fl = rd16(p + 28), xl = rd16(p + 30), cl = rd16(p + 32);
        /* miniz checks that the header fits the directory last; an extra field past it is
         * read from elsewhere in the file, but the archive is refused either way */
        const uint8_t *x = p + 46 + fl;
        bool x_inside = 46 + (uint64_t)fl + xl <= (uint64_t)(buf + size - p);
        uint64_t big = comp > decomp ? comp : decomp;
        big = big > lho ? big : lho;
        if (!seen64 && xl != 0 && big == 0xFFFFFFFFu) {
            if (!x_inside) {
                return; /* the read past the file fails */
            }
            uint32_t rem = xl;
            const uint8_t *q = x;
            do {
                if (rem < 4) {
                    return;
                }
                uint32_t id = rd16(q), sz = rd16(q + 2);
                if (sz + 4 > rem) {
                    return;
                }
                if (id == 1) {
                    seen64 = true;
                    break;
                }
                q += 4 + sz;
                rem -= 4 + sz;
            } while (rem != 0);
        }
        if (comp != 0xFFFFFFFFu && decomp != 0xFFFFFFFFu &&
            ((rd32(p + 10) == 0 && decomp != comp) || (decomp != 0 && comp == 0))) {
            return;
        }
        uint32_t disk = rd16(p + 34);
        if (disk == 0xFFFF || (disk != this_disk && disk != 1)) {
            return;
        }
        if (comp != 0xFFFFFFFFu && lho + 30 + comp > (uint64_t)fsize) {
            return;
        }
        if ((rd16(p + 8) & 0x2000u) != 0) {
            return;
        }
        if (46 + (uint64_t)fl + xl + cl > left) {
            return;
        }
        /* mz_zip_file_stat_internal: the ZIP64 field fills the placeholders, in order */
        int64_t local = (int64_t)lho;
        if (big == 0xFFFFFFFFu) {
            uint64_t us = decomp, cs = comp, lo = lho;
            local = py_decode_extra(x, xl, &us, &cs, &lo) && lo <= (uint64_t)INT64_MAX ? (int64_t)lo
                                                                                       : INT64_MIN;
        }
        if (r->n < MAX_REF_ENTRIES) {
            r->e[r->n].cd_pos = (uint64_t)(p - buf);
            r->e[r->n].local = local;
            r->n++;
        }
        p += 46 + fl + xl + cl;
        left -= 46 + (uint64_t)fl + xl + cl;
    }
    r->ok = true;
    r->eocd = (uint64_t)pos;
    r->cd_start = cd_ofs;
}

static void compare(const uint8_t *buf, size_t size, stg_zip_reader reader, const ref_reading *ref)
{
    stg_zip z;
    stg_zip_error err;
    stg_zip_result zr = stg_zip_open_as(&z, buf, size, reader, &err);
    if (zr != STG_ZIPR_OK) {
        if (ref->ok && !ref->short_read && ref->n > 0) {
            abort(); /* stguard refuses what the reader reads (an empty archive reads nothing) */
        }
        return;
    }
    bool flagged = false;
    size_t i = 0;
    for (;; i++) {
        stg_zip_entry e;
        stg_zip_result nr = stg_zip_next(&z, &e, &err);
        if (nr == STG_ZIPR_END) {
            break;
        }
        if (nr == STG_ZIPR_MALFORMED) {
            flagged = true;
            break;
        }
        flagged = flagged || nr == STG_ZIPR_ENTRY_BAD;
        if (!ref->ok || i >= MAX_REF_ENTRIES) {
            continue;
        }
        if (i >= ref->n || e.cd_offset != ref->e[i].cd_pos) {
            abort(); /* another central header than the reader's */
        }
        if (e.local_offset != UINT64_MAX && ref->e[i].local != INT64_MIN &&
            (int64_t)e.local_offset != ref->e[i].local) {
            abort(); /* another local header than the reader's */
        }
        if (e.local_offset == UINT64_MAX && nr == STG_ZIPR_OK) {
            abort();
        }
    }
    if (!ref->ok) {
        /* stguard opens, without complaint, what the reader refuses. An opened archive without
         * entries carries nothing to scan, so a difference there changes no verdict; the
         * reference model's ZIP64 locator rules are known to refuse some such archives the
         * real zipfile opens empty (corpus/zip/regress-zip64-empty-*). */
        if (!flagged && i > 0) {
            abort();
        }
        return;
    }
    if (z.eocd_offset != ref->eocd || z.cd_start != ref->cd_start ||
        (i < MAX_REF_ENTRIES && i != ref->n && !flagged)) {
        abort();
    }
}

static void check_readers(const uint8_t *data, size_t size)
{
    static ref_reading ref;
    ref_zipfile(data, size, &ref);
    compare(data, size, STG_ZIP_READER_ZIPFILE, &ref);
    ref_miniz(data, size, &ref);
    compare(data, size, STG_ZIP_READER_MINIZ, &ref);
}

/* ------------------------------------------------------------------ windowed reading */

#define WPAGE 16u

typedef struct shadow {
    const uint8_t *real;
    uint8_t *copy;
    uint8_t *held; /* one byte per page */
    size_t size;
} shadow;

static bool shadow_has(void *ctx, uint64_t off, uint64_t len)
{
    const shadow *sh = ctx;
    for (uint64_t p = off / WPAGE; p <= (off + len - 1) / WPAGE; p++) {
        if (!sh->held[p]) {
            return false;
        }
    }
    return true;
}

static void shadow_copy(shadow *sh, uint64_t off, uint64_t len)
{
    if (len == 0 || off >= sh->size) {
        abort(); /* a NEED is always for bytes inside the buffer */
    }
    for (uint64_t p = off / WPAGE; p <= (off + len - 1) / WPAGE && p * WPAGE < sh->size; p++) {
        size_t a = (size_t)p * WPAGE, b = a + WPAGE < sh->size ? a + WPAGE : sh->size;
        memcpy(sh->copy + a, sh->real + a, b - a);
        sh->held[p] = 1;
    }
}

/* One reader's results over the whole buffer (sh == NULL) or through the windows. */
static uint64_t walk_reader(const uint8_t *data, size_t size, stg_zip_reader reader, shadow *sh)
{
    stg_zip z;
    stg_zip_error err;
    memset(&err, 0, sizeof err); /* results that set no error mix in 0, not stack garbage */
    stg_zip_result zr;
    const uint8_t *buf = sh != NULL ? sh->copy : data;
    unsigned rounds = 0;
    for (;;) {
        zr = sh != NULL ? stg_zip_open_windowed(&z, buf, size, reader, shadow_has, sh, &err)
                        : stg_zip_open_as(&z, buf, size, reader, &err);
        if (zr != STG_ZIPR_NEED) {
            break;
        }
        shadow_copy(sh, err.offset, err.len);
        if (++rounds > 100000) {
            abort();
        }
    }
    uint64_t h = mix((uint64_t)zr, zr == STG_ZIPR_OK ? 0 : err.offset);
    if (zr != STG_ZIPR_OK) {
        return h;
    }
    h = mix(mix(h, z.cd_start), mix(z.cd_size, z.base));
    for (int i = 0; i < MAX_ENTRIES;) {
        stg_zip_entry e;
        zr = stg_zip_next(&z, &e, &err);
        if (zr == STG_ZIPR_NEED) {
            shadow_copy(sh, err.offset, err.len);
            if (++rounds > 100000) {
                abort();
            }
            continue;
        }
        i++;
        h = mix(h, (uint64_t)zr);
        if (zr != STG_ZIPR_OK) {
            h = mix(h, err.offset);
            if (zr == STG_ZIPR_ENTRY_BAD) {
                continue;
            }
            break;
        }
        h = mix(mix(h, e.local_offset), mix(e.data_offset, e.data_len));
        h = mix(mix(h, e.mismatch), mix(e.local_comp_size, e.local_method));
        for (size_t k = 0; k < e.name_len; k++) {
            h = mix(h, e.name[k]);
        }
        for (size_t k = 0; k < e.local_name_len; k++) {
            h = mix(h, e.local_name[k]);
        }
    }
    return h;
}

static void check_windowed(const uint8_t *data, size_t size)
{
    for (int r = 0; r < STG_ZIP_READERS; r++) {
        shadow sh = {data, calloc(size + 1, 1), calloc(size / WPAGE + 2, 1), size};
        if (sh.copy == NULL || sh.held == NULL) {
            abort();
        }
        /* the caller holds the tail (zip.h) */
        size_t tail = size > STG_ZIP_WINDOW_TAIL ? size - STG_ZIP_WINDOW_TAIL : 0;
        if (size > 0) {
            shadow_copy(&sh, tail, size - tail);
        }
        uint64_t whole = walk_reader(data, size, (stg_zip_reader)r, NULL);
        if (walk_reader(data, size, (stg_zip_reader)r, &sh) != whole) {
            abort();
        }
        free(sh.copy);
        free(sh.held);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_readers(data, size);
    check_windowed(data, size);
    uint64_t first = walk_zip(data, size, 1);
    if (walk_zip(data, size, 1) != first) {
        abort(); /* same bytes, same result */
    }
    (void)walk_tar(data, size);
    if (walk_local(data, size) != walk_local(data, size)) {
        abort();
    }
    return 0;
}
