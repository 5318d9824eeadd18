/* A bounded HDF5 reader (see hdf5.h). Layouts follow the HDF5 File Format Specification,
 * version 3.0: superblock (section II.A), object headers (IV.A.1), the attribute, datatype,
 * dataspace, continuation and attribute info messages (IV.A.2), the global heap (III.E).
 *
 * Addresses are relative to the base address. HDF5's library takes the superblock's own offset
 * as the base whenever the two differ (a user block before the superblock), and so does this
 * reader. Checksums of version 2 structures are not verified: HDF5 refuses a file whose
 * checksum does not match, so a mismatch can only make a file fail to load. */
#include "hdf5.h"

#include <string.h>

#include "cursor.h"
#include "util.h"

typedef struct reader {
    const uint8_t *buf;
    size_t len;
    stg_hdf5_file *f;
    void (*on_attr)(void *arg, const stg_hdf5_attr *a);
    void *arg;
    uint64_t dense_heap, dense_names; /* the attribute info message's addresses */
    /* the structure that points where the walk goes (the attribute or attribute info message
     * being read): a failure whose place lies outside the file is reported there */
    uint64_t ref;
    uint64_t dense_info_at; /* the attribute info message that found dense storage */
} reader;

/* Records the first failure; later ones keep it. */
static stg_hdf5_result fail(reader *r, stg_hdf5_result res, uint64_t offset, const char *what)
{
    if (r->f->result == STG_HDF5R_OK) {
        r->f->result = res;
        r->f->fail_offset = offset <= r->len ? offset : r->ref;
        r->f->fail_what = what;
    }
    return res;
}

static bool failed(const reader *r)
{
    return r->f->result != STG_HDF5R_OK;
}

/* A little-endian field of 1, 2, 4 or 8 bytes. */
static bool read_le(stg_cursor *c, unsigned width, uint64_t *v)
{
    uint8_t b8;
    uint16_t b16;
    uint32_t b32;
    switch (width) {
    case 1:
        if (stg_cur_u8(c, &b8) != STG_OK) {
            return false;
        }
        *v = b8;
        return true;
    case 2:
        if (stg_cur_le16(c, &b16) != STG_OK) {
            return false;
        }
        *v = b16;
        return true;
    case 4:
        if (stg_cur_le32(c, &b32) != STG_OK) {
            return false;
        }
        *v = b32;
        return true;
    case 8: return stg_cur_le64(c, v) == STG_OK;
    default: return false;
    }
}

/* The "undefined address" of a width: all bits set. */
static bool undefined_address(uint64_t a, unsigned width)
{
    return width >= 8 ? a == UINT64_MAX : a == (((uint64_t)1 << (8 * width)) - 1);
}

/* An address made absolute; false when it wraps or lies at or past the end of the buffer. */
static bool absolute(const reader *r, uint64_t addr, uint64_t *out)
{
    return !stg_add_u64(r->f->base, addr, out) && *out < r->len;
}

bool stg_hdf5_find_superblock(const uint8_t *buf, size_t len, uint64_t *at)
{
    for (uint64_t off = 0; off <= STG_HDF5_SUPERBLOCK_SEARCH_MAX; off = off == 0 ? 512 : off * 2) {
        if (off > len || len - off < STG_HDF5_MAGIC_LEN) {
            return false;
        }
        if (memcmp(buf + off, STG_HDF5_MAGIC, STG_HDF5_MAGIC_LEN) == 0) {
            *at = off;
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------------------- superblock */

/* Versions 0 and 1: sizes, then the addresses and the root group's symbol table entry. */
static stg_hdf5_result superblock_v01(reader *r, stg_cursor *c, uint8_t version, uint64_t *base,
                                      uint64_t *eof, uint64_t *root)
{
    stg_hdf5_file *f = r->f;
    const uint8_t *p;
    /* free-space, root symbol table and shared header versions, reserved bytes, sizes */
    if (stg_cur_take(c, 7, &p) != STG_OK) {
        return fail(r, STG_HDF5R_MALFORMED, c->pos, "the superblock is cut short");
    }
    f->offset_size = p[4];
    f->length_size = p[5];
    size_t skip = 2 + 2 + 4 + (version == 1 ? 4u : 0u); /* K values, flags, v1's indexed K */
    uint64_t freespace, driver, name_offset;
    unsigned o = f->offset_size;
    if (o != 2 && o != 4 && o != 8) {
        return fail(r, STG_HDF5R_UNSUPPORTED, c->pos, "the superblock's size of offsets");
    }
    if (stg_cur_skip(c, skip) != STG_OK || !read_le(c, o, base) || !read_le(c, o, &freespace) ||
        !read_le(c, o, eof) || !read_le(c, o, &driver) || !read_le(c, o, &name_offset) ||
        !read_le(c, o, root)) {
        return fail(r, STG_HDF5R_MALFORMED, c->pos, "the superblock is cut short");
    }
    return STG_HDF5R_OK;
}

static stg_hdf5_result read_superblock(reader *r, uint64_t at)
{
    stg_hdf5_file *f = r->f;
    stg_cursor c = stg_cur_make(r->buf, r->len);
    uint8_t version;
    if (stg_cur_seek(&c, (size_t)at + STG_HDF5_MAGIC_LEN) != STG_OK ||
        stg_cur_u8(&c, &version) != STG_OK) {
        return fail(r, STG_HDF5R_MALFORMED, at, "the superblock is cut short");
    }
    f->superblock_offset = at;
    f->superblock_version = version;
    uint64_t base = 0, eof = 0, root = 0, ext = 0;
    if (version <= 1) {
        if (superblock_v01(r, &c, version, &base, &eof, &root) != STG_HDF5R_OK) {
            return f->result;
        }
    } else if (version <= 3) {
        const uint8_t *p;
        if (stg_cur_take(&c, 3, &p) != STG_OK) {
            return fail(r, STG_HDF5R_MALFORMED, c.pos, "the superblock is cut short");
        }
        f->offset_size = p[0];
        f->length_size = p[1];
        unsigned o = f->offset_size;
        if (o != 2 && o != 4 && o != 8) {
            return fail(r, STG_HDF5R_UNSUPPORTED, c.pos, "the superblock's size of offsets");
        }
        if (!read_le(&c, o, &base) || !read_le(&c, o, &ext) || !read_le(&c, o, &eof) ||
            !read_le(&c, o, &root) || stg_cur_skip(&c, 4) != STG_OK) {
            return fail(r, STG_HDF5R_MALFORMED, c.pos, "the superblock is cut short");
        }
    } else {
        return fail(r, STG_HDF5R_UNSUPPORTED, at + 8, "the superblock version is not 0 to 3");
    }
    if (f->length_size != 2 && f->length_size != 4 && f->length_size != 8) {
        return fail(r, STG_HDF5R_UNSUPPORTED, at, "the superblock's size of lengths");
    }
    (void)base; /* HDF5 takes the superblock's offset as the base when they differ */
    f->base = at;
    /* HDF5 compares the stored end of file with the whole file's size (a user block
     * included): H5F__super_read's truncation check */
    f->eof = eof;
    if (f->eof > r->len) {
        return fail(r, STG_HDF5R_MALFORMED, at,
                    "the file is shorter than the end-of-file address its superblock declares "
                    "(HDF5 refuses a truncated file)");
    }
    if (undefined_address(root, f->offset_size) || !absolute(r, root, &f->root_header)) {
        return fail(r, STG_HDF5R_MALFORMED, at,
                    "the root group's object header address lies "
                    "outside the file");
    }
    return STG_HDF5R_OK;
}

/* --------------------------------------------------------------------------- global heap */

/* The bytes of object `index` of the global heap collection at addr, length bytes of it. */
static bool heap_object(reader *r, uint64_t addr, uint32_t index, uint64_t length, stg_hdf5_attr *a)
{
    stg_hdf5_file *f = r->f;
    unsigned L = f->length_size;
    uint64_t at, size;
    stg_cursor c = stg_cur_make(r->buf, r->len);
    const uint8_t *sig;
    if (!absolute(r, addr, &at) || stg_cur_seek(&c, (size_t)at) != STG_OK ||
        stg_cur_take(&c, 8, &sig) != STG_OK || memcmp(sig, "GCOL", 4) != 0 || sig[4] != 1 ||
        !read_le(&c, L, &size) || size < 8 + (uint64_t)L || size - 8 - L > stg_cur_avail(&c)) {
        fail(r, STG_HDF5R_MALFORMED, at,
             "a variable-length string's global heap collection "
             "cannot be read");
        return false;
    }
    stg_cursor objs;
    (void)stg_cur_sub(&c, (size_t)(size - 8 - L), &objs);
    for (uint32_t n = 0; n < STG_HDF5_MAX_HEAP_OBJECTS && stg_cur_avail(&objs) >= 8 + L; n++) {
        uint64_t obj_at = objs.pos, idx, osize, padded;
        const uint8_t *data;
        if (!read_le(&objs, 2, &idx) || stg_cur_skip(&objs, 6) != STG_OK ||
            !read_le(&objs, L, &osize)) {
            break;
        }
        if (idx == 0) {
            break; /* free space: the collection's last object */
        }
        if (stg_add_u64(osize, 7, &padded) || (padded & ~(uint64_t)7) > stg_cur_avail(&objs)) {
            fail(r, STG_HDF5R_MALFORMED, obj_at, "a global heap object runs past its collection");
            return false;
        }
        (void)stg_cur_take(&objs, (size_t)(padded & ~(uint64_t)7), &data);
        if (idx == index) {
            if (length > osize) {
                fail(r, STG_HDF5R_MALFORMED, obj_at,
                     "a variable-length string is longer than its "
                     "global heap object");
                return false;
            }
            a->value = data;
            a->value_len = (size_t)length;
            a->value_offset = obj_at + 8 + L;
            return true;
        }
    }
    fail(r, STG_HDF5R_MALFORMED, at, "a variable-length string's global heap object is missing");
    return false;
}

/* ----------------------------------------------------------------------------- attributes */

/* The number of elements of a dataspace message; false when it cannot be read. */
static bool dataspace_elements(reader *r, stg_cursor *c, uint64_t *count)
{
    uint8_t version, rank, flags, type = 1;
    if (stg_cur_u8(c, &version) != STG_OK || stg_cur_u8(c, &rank) != STG_OK ||
        stg_cur_u8(c, &flags) != STG_OK || (version != 1 && version != 2) || rank > 32) {
        return false;
    }
    if (version == 1 ? stg_cur_skip(c, 5) != STG_OK : stg_cur_u8(c, &type) != STG_OK) {
        return false;
    }
    *count = type == 2 ? 0 : 1; /* scalar: one element; null: none */
    for (uint8_t i = 0; i < rank; i++) {
        uint64_t d;
        if (!read_le(c, r->f->length_size, &d) || stg_mul_u64(*count, d, count)) {
            return false;
        }
    }
    return type <= 2;
}

/* The value of a one-element string attribute: fixed (class 3) or variable-length (class 9,
 * a string: heap length, collection address, object index). */
static bool string_value(reader *r, const uint8_t *dt, size_t dt_len, stg_cursor *data,
                         stg_hdf5_attr *a)
{
    uint32_t size = (uint32_t)dt[4] | (uint32_t)dt[5] << 8 | (uint32_t)dt[6] << 16 |
                    (uint32_t)dt[7] << 24;
    (void)dt_len;
    const uint8_t *p;
    if (a->type_class == 3) {
        if (stg_cur_take(data, size, &p) != STG_OK) {
            return false;
        }
        unsigned pad = dt[1] & 0x0f; /* 0 null-terminated, 1 null-padded, 2 space-padded */
        size_t n = size;
        const uint8_t *nul = pad != 2 ? memchr(p, 0, n) : NULL;
        n = nul != NULL ? (size_t)(nul - p) : n;
        while (pad == 2 && n > 0 && p[n - 1] == ' ') {
            n--;
        }
        a->value = p;
        a->value_len = n;
        a->value_offset = (uint64_t)(p - r->buf);
        a->is_string = true;
        return true;
    }
    uint64_t length, addr, index;
    if ((dt[1] & 0x0f) != 1) {
        return true; /* a variable-length sequence, not a string */
    }
    if (!read_le(data, 4, &length) || !read_le(data, r->f->offset_size, &addr) ||
        !read_le(data, 4, &index)) {
        return false;
    }
    a->vlen = true;
    if (length == 0) {
        a->value = r->buf;
        a->value_len = 0;
        a->is_string = true;
        return true;
    }
    a->is_string = heap_object(r, addr, (uint32_t)index, length, a);
    return true;
}

/* An attribute message (versions 1-3; IV.A.2.m). */
static void attribute_message(reader *r, stg_cursor *c)
{
    uint64_t at = c->pos;
    r->ref = at;
    uint8_t version, flags;
    uint16_t name_size, dt_size, ds_size;
    if (stg_cur_u8(c, &version) != STG_OK || stg_cur_u8(c, &flags) != STG_OK ||
        stg_cur_le16(c, &name_size) != STG_OK || stg_cur_le16(c, &dt_size) != STG_OK ||
        stg_cur_le16(c, &ds_size) != STG_OK || (version == 3 && stg_cur_skip(c, 1) != STG_OK)) {
        fail(r, STG_HDF5R_MALFORMED, at, "an attribute message is cut short");
        return;
    }
    if (version < 1 || version > 3) {
        fail(r, STG_HDF5R_UNSUPPORTED, at, "an attribute message version is not 1 to 3");
        return;
    }
    if (version > 1 && (flags & 0x03) != 0) {
        fail(r, STG_HDF5R_UNSUPPORTED, at, "an attribute's datatype or dataspace is shared");
        return;
    }
    size_t align = version == 1 ? 7u : 0u; /* version 1 pads each part to 8 bytes */
    size_t sizes[3] = {name_size, dt_size, ds_size};
    const uint8_t *part[3];
    for (int i = 0; i < 3; i++) {
        size_t padded = (sizes[i] + align) & ~align;
        if (stg_cur_peek(c, padded, &part[i]) != STG_OK || stg_cur_skip(c, padded) != STG_OK) {
            fail(r, STG_HDF5R_MALFORMED, at,
                 "an attribute's name, datatype or dataspace runs past "
                 "its message");
            return;
        }
    }
    if (name_size == 0 || dt_size < 8) {
        fail(r, STG_HDF5R_MALFORMED, at, "an attribute has no name or a datatype under 8 bytes");
        return;
    }
    stg_hdf5_attr a;
    memset(&a, 0, sizeof a);
    a.name = part[0];
    a.name_len = part[0][name_size - 1] == 0 ? name_size - 1u : name_size;
    a.offset = at;
    a.type_class = part[1][0] & 0x0f;
    stg_cursor ds = {r->buf, (size_t)(part[2] - r->buf), (size_t)(part[2] - r->buf),
                     (size_t)(part[2] - r->buf) + ds_size};
    uint64_t count = 0;
    if (!dataspace_elements(r, &ds, &count)) {
        fail(r, STG_HDF5R_MALFORMED, at, "an attribute's dataspace cannot be read");
        return;
    }
    if (count == 1 && (a.type_class == 3 || a.type_class == 9) &&
        !string_value(r, part[1], dt_size, c, &a)) {
        fail(r, STG_HDF5R_MALFORMED, at, "an attribute's string value runs past its message");
        return;
    }
    if (failed(r)) {
        return;
    }
    r->f->attributes++;
    r->on_attr(r->arg, &a);
}

/* ----------------------------------------------------------------------- object headers */

typedef struct block {
    uint64_t start, len;
} block;

/* One header message; a continuation adds a block to the queue. */
static void message(reader *r, unsigned type, unsigned flags, stg_cursor *data, block *queue,
                    size_t *queued)
{
    stg_hdf5_file *f = r->f;
    if ((flags & 0x02) != 0 && (type == 0x0C || type == 0x10 || type == 0x15)) {
        fail(r, STG_HDF5R_UNSUPPORTED, data->begin,
             "a root header message is stored in the "
             "shared message table");
        return;
    }
    if (type == 0x0C) {
        attribute_message(r, data);
    } else if (type == 0x10) {
        uint64_t addr, len, at;
        if (!read_le(data, f->offset_size, &addr) || !read_le(data, f->length_size, &len)) {
            fail(r, STG_HDF5R_MALFORMED, data->begin, "a continuation message is cut short");
            return;
        }
        if (!absolute(r, addr, &at) || len > r->len - at) {
            fail(r, STG_HDF5R_MALFORMED, data->begin, "a continuation block lies outside the file");
            return;
        }
        if (*queued >= STG_HDF5_MAX_CONTINUATIONS) {
            fail(r, STG_HDF5R_MALFORMED, data->begin,
                 "the root object header has more than 256 "
                 "continuation blocks");
            return;
        }
        queue[(*queued)++] = (block){at, len};
    } else if (type == 0x15) {
        r->ref = data->begin;
        uint8_t version, info_flags;
        uint64_t heap, names;
        if (stg_cur_u8(data, &version) != STG_OK || stg_cur_u8(data, &info_flags) != STG_OK ||
            ((info_flags & 1) != 0 && stg_cur_skip(data, 2) != STG_OK) ||
            !read_le(data, f->offset_size, &heap) || !read_le(data, f->offset_size, &names)) {
            fail(r, STG_HDF5R_MALFORMED, data->begin, "an attribute info message is cut short");
            return;
        }
        if (!undefined_address(heap, f->offset_size)) {
            f->dense_attributes = true;
            r->dense_info_at = data->begin;
            r->dense_heap = heap;
            r->dense_names = names;
        }
    }
}

/* The messages of one block: version 1 (8-byte prefixes, 8-aligned) or version 2 (type,
 * size, flags, creation order when the header tracks it). */
static void block_messages(reader *r, stg_cursor *c, unsigned version, bool crt_order, block *queue,
                           size_t *queued)
{
    size_t prefix = version == 1 ? 8u : (crt_order ? 6u : 4u);
    while (!failed(r) && stg_cur_avail(c) >= prefix) {
        uint64_t at = c->pos, type = 0, size = 0, flags = 0;
        (void)read_le(c, version == 1 ? 2u : 1u, &type);
        (void)read_le(c, 2, &size);
        (void)read_le(c, 1, &flags);
        (void)stg_cur_skip(c, version == 1 ? 3u : prefix - 4);
        stg_cursor data;
        if (stg_cur_sub(c, (size_t)size, &data) != STG_OK) {
            fail(r, STG_HDF5R_MALFORMED, at, "a header message runs past its block");
            return;
        }
        if (++r->f->messages > STG_HDF5_MAX_MESSAGES) {
            fail(r, STG_HDF5R_MALFORMED, at,
                 "the root object header has more than 65,536 "
                 "messages");
            return;
        }
        message(r, (unsigned)type, (unsigned)flags, &data, queue, queued);
    }
}

/* Version 2's prefix ("OHDR", version, flags, times, attribute phase values, chunk 0 size). */
static bool header_v2_prefix(stg_cursor *c, bool *crt_order, uint64_t *chunk0)
{
    const uint8_t *p;
    if (stg_cur_take(c, 6, &p) != STG_OK || p[4] != 2) {
        return false;
    }
    uint8_t flags = p[5];
    *crt_order = (flags & 0x04) != 0;
    size_t skip = ((flags & 0x20) != 0 ? 16u : 0u) + ((flags & 0x10) != 0 ? 4u : 0u);
    return stg_cur_skip(c, skip) == STG_OK && read_le(c, 1u << (flags & 3), chunk0);
}

static void read_header(reader *r, uint64_t at)
{
    stg_cursor c = stg_cur_make(r->buf, r->len);
    block queue[STG_HDF5_MAX_CONTINUATIONS];
    size_t queued = 0;
    (void)stg_cur_seek(&c, (size_t)at);
    const uint8_t *p;
    bool v2 = stg_cur_peek(&c, 4, &p) == STG_OK && memcmp(p, "OHDR", 4) == 0;
    bool crt_order = false;
    stg_cursor first;
    if (v2) {
        uint64_t chunk0;
        if (!header_v2_prefix(&c, &crt_order, &chunk0) || chunk0 > stg_cur_avail(&c)) {
            fail(r, STG_HDF5R_MALFORMED, at,
                 "the root group's version 2 object header cannot be "
                 "read");
            return;
        }
        (void)stg_cur_sub(&c, (size_t)chunk0, &first);
    } else {
        uint8_t version;
        uint32_t size;
        if (stg_cur_u8(&c, &version) != STG_OK || stg_cur_skip(&c, 7) != STG_OK ||
            stg_cur_le32(&c, &size) != STG_OK || stg_cur_skip(&c, 4) != STG_OK) {
            fail(r, STG_HDF5R_MALFORMED, at, "the root group's object header is cut short");
            return;
        }
        if (version != 1) {
            fail(r, STG_HDF5R_MALFORMED, at,
                 "the root group's object header is neither version "
                 "1 nor OHDR");
            return;
        }
        if (stg_cur_sub(&c, size, &first) != STG_OK) {
            fail(r, STG_HDF5R_MALFORMED, at, "the root group's object header runs past the file");
            return;
        }
    }
    r->f->root_header_version = v2 ? 2 : 1;
    block_messages(r, &first, v2 ? 2 : 1, crt_order, queue, &queued);
    for (size_t i = 0; i < queued && !failed(r); i++) {
        stg_cursor b = {r->buf, (size_t)queue[i].start, (size_t)queue[i].start,
                        (size_t)(queue[i].start + queue[i].len)};
        if (v2) { /* "OCHK", the messages, a checksum */
            if (stg_cur_take(&b, 4, &p) != STG_OK || memcmp(p, "OCHK", 4) != 0 ||
                b.end - b.pos < 4) {
                fail(r, STG_HDF5R_MALFORMED, queue[i].start,
                     "a continuation block has no OCHK "
                     "signature");
                return;
            }
            b.end -= 4;
        }
        block_messages(r, &b, v2 ? 2 : 1, crt_order, queue, &queued);
    }
}

/* -------------------------------------------------------------- dense attribute storage */

/* A little-endian field of any width from 1 to 8 bytes (heap IDs and block offsets). */
static bool read_var(stg_cursor *c, unsigned width, uint64_t *v)
{
    const uint8_t *p;
    if (width == 0 || width > 8 || stg_cur_take(c, width, &p) != STG_OK) {
        return false;
    }
    *v = 0;
    for (unsigned i = width; i-- > 0;) {
        *v = *v << 8 | p[i];
    }
    return true;
}

static unsigned log2_floor(uint64_t v)
{
    unsigned n = 0;
    while (v >>= 1) {
        n++;
    }
    return n;
}

/* A fractal heap's header (III.G, "FRHP"): what locating a managed object needs. */
typedef struct fheap {
    uint64_t addr;
    uint16_t id_len, width, rows;
    uint8_t flags;
    uint64_t start_block, max_direct, root;
    unsigned off_bytes, len_bytes, max_direct_rows;
} fheap;

static bool power_of_two(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

static stg_hdf5_result read_fheap(reader *r, uint64_t addr, fheap *h)
{
    unsigned O = r->f->offset_size, L = r->f->length_size;
    stg_cursor c = stg_cur_make(r->buf, r->len);
    const uint8_t *p;
    uint16_t filters, heap_bits, start_rows;
    uint32_t max_managed;
    uint64_t root;
    memset(h, 0, sizeof *h);
    if (!absolute(r, addr, &h->addr) || stg_cur_seek(&c, (size_t)h->addr) != STG_OK ||
        stg_cur_take(&c, 5, &p) != STG_OK || memcmp(p, "FRHP", 4) != 0 || p[4] != 0 ||
        stg_cur_le16(&c, &h->id_len) != STG_OK || stg_cur_le16(&c, &filters) != STG_OK ||
        stg_cur_u8(&c, &h->flags) != STG_OK || stg_cur_le32(&c, &max_managed) != STG_OK ||
        stg_cur_skip(&c, 10u * L + 2u * O) != STG_OK || stg_cur_le16(&c, &h->width) != STG_OK ||
        !read_le(&c, L, &h->start_block) || !read_le(&c, L, &h->max_direct) ||
        stg_cur_le16(&c, &heap_bits) != STG_OK || stg_cur_le16(&c, &start_rows) != STG_OK ||
        !read_le(&c, O, &root) || stg_cur_le16(&c, &h->rows) != STG_OK) {
        return fail(r, STG_HDF5R_MALFORMED, h->addr,
                    "the attribute fractal heap's header "
                    "cannot be read");
    }
    if (filters != 0) {
        return fail(r, STG_HDF5R_UNSUPPORTED, h->addr, "the attribute fractal heap is filtered");
    }
    if (h->width == 0 || !power_of_two(h->start_block) || !power_of_two(h->max_direct) ||
        h->max_direct < h->start_block || heap_bits == 0 || heap_bits > 64 || max_managed == 0 ||
        h->rows > 64 || !absolute(r, root, &h->root)) {
        return fail(r, STG_HDF5R_MALFORMED, h->addr,
                    "the attribute fractal heap's header holds "
                    "impossible sizes");
    }
    h->off_bytes = (heap_bits + 7u) / 8u;
    unsigned dir_bytes = (log2_floor(h->max_direct) + 7u) / 8u;
    unsigned man_bytes = log2_floor(max_managed) / 8u + 1u;
    h->len_bytes = dir_bytes < man_bytes ? dir_bytes : man_bytes;
    h->max_direct_rows = log2_floor(h->max_direct) - log2_floor(h->start_block) + 2u;
    return STG_HDF5R_OK;
}

/* The object at heap offset off (len bytes) inside the direct block at abs_addr, which starts
 * at heap offset block_off and spans size bytes (its header included). */
static bool in_direct(reader *r, const fheap *h, uint64_t abs_addr, uint64_t block_off,
                      uint64_t size, uint64_t off, uint64_t len, stg_cursor *obj)
{
    stg_cursor c = stg_cur_make(r->buf, r->len);
    const uint8_t *p;
    uint64_t heap_addr, stored_off;
    if (size > r->len - abs_addr || stg_cur_seek(&c, (size_t)abs_addr) != STG_OK ||
        stg_cur_take(&c, 5, &p) != STG_OK || memcmp(p, "FHDB", 4) != 0 || p[4] != 0 ||
        !read_le(&c, r->f->offset_size, &heap_addr) || !read_var(&c, h->off_bytes, &stored_off) ||
        stored_off != block_off) {
        fail(r, STG_HDF5R_MALFORMED, abs_addr,
             "an attribute fractal heap direct block cannot "
             "be read");
        return false;
    }
    uint64_t header = 5u + r->f->offset_size + h->off_bytes + ((h->flags & 2) != 0 ? 4u : 0u);
    uint64_t rel = off - block_off;
    if (rel < header || len > size - rel) {
        fail(r, STG_HDF5R_MALFORMED, abs_addr, "a dense attribute lies outside its heap block");
        return false;
    }
    *obj = (stg_cursor){r->buf, (size_t)(abs_addr + rel), (size_t)(abs_addr + rel),
                        (size_t)(abs_addr + rel + len)};
    return true;
}

/* The managed object at heap offset off: the root direct block, or a direct block of the root
 * indirect block (a nested indirect block is not read). */
static bool heap_locate(reader *r, const fheap *h, uint64_t off, uint64_t len, stg_cursor *obj)
{
    if (h->rows == 0) {
        return in_direct(r, h, h->root, 0, h->start_block, off, len, obj);
    }
    stg_cursor c = stg_cur_make(r->buf, r->len);
    const uint8_t *p;
    uint64_t heap_addr, block_off;
    if (stg_cur_seek(&c, (size_t)h->root) != STG_OK || stg_cur_take(&c, 5, &p) != STG_OK ||
        memcmp(p, "FHIB", 4) != 0 || p[4] != 0 || !read_le(&c, r->f->offset_size, &heap_addr) ||
        !read_var(&c, h->off_bytes, &block_off)) {
        fail(r, STG_HDF5R_MALFORMED, h->root,
             "the attribute fractal heap's root indirect block "
             "cannot be read");
        return false;
    }
    uint64_t at = 0;
    for (unsigned row = 0; row < h->rows; row++) {
        uint64_t size = row < 2 ? h->start_block : h->start_block << (row - 1);
        for (unsigned col = 0; col < h->width; col++) {
            if (row >= h->max_direct_rows) {
                fail(r, STG_HDF5R_UNSUPPORTED, h->root,
                     "the attribute fractal heap has nested "
                     "indirect blocks");
                return false;
            }
            uint64_t child, abs_child;
            if (!read_le(&c, r->f->offset_size, &child)) {
                fail(r, STG_HDF5R_MALFORMED, h->root, "the root indirect block is cut short");
                return false;
            }
            if (off >= at && off - at < size) {
                if (undefined_address(child, r->f->offset_size) ||
                    !absolute(r, child, &abs_child)) {
                    fail(r, STG_HDF5R_MALFORMED, h->root,
                         "a dense attribute's heap block is "
                         "missing");
                    return false;
                }
                return in_direct(r, h, abs_child, at, size, off, len, obj);
            }
            at += size;
        }
    }
    fail(r, STG_HDF5R_MALFORMED, h->root, "a dense attribute's heap offset lies past the heap");
    return false;
}

/* One record of the name index (type 8: heap ID, flags, creation order, name hash). */
static void name_record(reader *r, const fheap *h, const uint8_t *rec, uint64_t rec_at)
{
    stg_cursor id = {r->buf, (size_t)(rec - r->buf), (size_t)(rec - r->buf),
                     (size_t)(rec - r->buf) + h->id_len};
    r->ref = rec_at;
    uint8_t kind = 0;
    uint64_t off, len;
    if (stg_cur_u8(&id, &kind) != STG_OK) {
        fail(r, STG_HDF5R_MALFORMED, rec_at, "a dense attribute's heap id is empty");
        return;
    }
    if ((kind & 0xC0) != 0 || ((kind >> 4) & 3) != 0) {
        fail(r, STG_HDF5R_UNSUPPORTED, rec_at, "a dense attribute is a huge or tiny heap object");
        return;
    }
    if (!read_var(&id, h->off_bytes, &off) || !read_var(&id, h->len_bytes, &len)) {
        fail(r, STG_HDF5R_MALFORMED, rec_at, "a dense attribute's heap ID is cut short");
        return;
    }
    stg_cursor obj;
    if (heap_locate(r, h, off, len, &obj)) {
        attribute_message(r, &obj);
    }
}

/* The records of one B-tree node (leaf "BTLF" or internal "BTIN"); an internal node's child
 * pointers follow its records. */
static bool tree_node(reader *r, uint64_t addr, const char *sig, uint32_t nrec, uint16_t rec_size,
                      stg_cursor *after, const fheap *h)
{
    uint64_t at;
    stg_cursor c = stg_cur_make(r->buf, r->len);
    const uint8_t *p;
    if (!absolute(r, addr, &at) || stg_cur_seek(&c, (size_t)at) != STG_OK ||
        stg_cur_take(&c, 6, &p) != STG_OK || memcmp(p, sig, 4) != 0 || p[4] != 0 || p[5] != 8) {
        fail(r, STG_HDF5R_MALFORMED, at, "an attribute name index node cannot be read");
        return false;
    }
    for (uint32_t i = 0; i < nrec && !failed(r); i++) {
        uint64_t rec_at = c.pos;
        if (stg_cur_take(&c, rec_size, &p) != STG_OK) {
            fail(r, STG_HDF5R_MALFORMED, rec_at, "an attribute name index node is cut short");
            return false;
        }
        name_record(r, h, p, rec_at);
    }
    *after = c;
    return !failed(r);
}

/* The name index (a version 2 B-tree, "BTHD", type 8) of depth 0 or 1, each record's attribute
 * read from the fractal heap. */
static void read_dense(reader *r)
{
    fheap h;
    r->ref = r->dense_info_at;
    if (read_fheap(r, r->dense_heap, &h) != STG_HDF5R_OK) {
        return;
    }
    unsigned O = r->f->offset_size;
    uint64_t at, root, total;
    uint32_t node_size;
    uint16_t rec_size, depth, root_nrec;
    stg_cursor c = stg_cur_make(r->buf, r->len);
    const uint8_t *p;
    if (!absolute(r, r->dense_names, &at) || stg_cur_seek(&c, (size_t)at) != STG_OK ||
        stg_cur_take(&c, 6, &p) != STG_OK || memcmp(p, "BTHD", 4) != 0 || p[4] != 0 || p[5] != 8 ||
        stg_cur_le32(&c, &node_size) != STG_OK || stg_cur_le16(&c, &rec_size) != STG_OK ||
        stg_cur_le16(&c, &depth) != STG_OK || stg_cur_skip(&c, 2) != STG_OK ||
        !read_le(&c, O, &root) || stg_cur_le16(&c, &root_nrec) != STG_OK ||
        !read_le(&c, r->f->length_size, &total)) {
        fail(r, STG_HDF5R_MALFORMED, at, "the attribute name index header cannot be read");
        return;
    }
    if (rec_size < h.id_len || rec_size == 0 || node_size < 10u + rec_size) {
        fail(r, STG_HDF5R_MALFORMED, at, "the attribute name index holds impossible sizes");
        return;
    }
    if (depth > 1) {
        fail(r, STG_HDF5R_UNSUPPORTED, at, "the attribute name index is deeper than one level");
        return;
    }
    stg_cursor after;
    if (!tree_node(r, root, depth == 0 ? "BTLF" : "BTIN", root_nrec, rec_size, &after, &h) ||
        depth == 0) {
        return;
    }
    /* children: an address and a record count as wide as a leaf's most records need */
    unsigned count_bytes = log2_floor((node_size - 10u) / rec_size) / 8u + 1u;
    for (uint32_t i = 0; i <= root_nrec && !failed(r); i++) {
        uint64_t child, nrec;
        if (!read_le(&after, O, &child) || !read_var(&after, count_bytes, &nrec) ||
            nrec > (node_size - 10u) / rec_size) {
            fail(r, STG_HDF5R_MALFORMED, at, "an attribute name index child pointer is wrong");
            return;
        }
        stg_cursor ignored;
        (void)tree_node(r, child, "BTLF", (uint32_t)nrec, rec_size, &ignored, &h);
    }
}

stg_hdf5_result stg_hdf5_read_root(const uint8_t *buf, size_t len, stg_hdf5_file *f,
                                   void (*on_attr)(void *arg, const stg_hdf5_attr *a), void *arg)
{
    memset(f, 0, sizeof *f);
    reader r = {buf, len, f, on_attr, arg, 0, 0, 0, 0};
    uint64_t at;
    if (buf == NULL || !stg_hdf5_find_superblock(buf, len, &at)) {
        return fail(&r, STG_HDF5R_MALFORMED, 0, "no HDF5 superblock signature");
    }
    if (read_superblock(&r, at) != STG_HDF5R_OK) {
        return f->result;
    }
    read_header(&r, f->root_header);
    if (!failed(&r) && f->dense_attributes) {
        read_dense(&r);
    }
    return f->result;
}
