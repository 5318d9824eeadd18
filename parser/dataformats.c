/* Data file framing (see dataformats.h).
 *
 * Sorted table (TensorFlow's tensorflow/core/lib/io/format.cc and table.cc, LevelDB's layout):
 * the footer is the last 48 bytes: the metaindex block handle, the index block handle (each a
 * varint64 offset and a varint64 size), zero padding to 40 bytes, the 8-byte magic. A block of
 * n bytes at its handle's offset is followed by a 5-byte trailer; it ends with a fixed32 count of
 * restart points preceded by that many fixed32 offsets; its entries (varint32 shared, non-shared
 * and value lengths, the key's new bytes, the value) fill the bytes before them. The index
 * block's values are the data blocks' handles.
 *
 * Parquet (the format's README): "PAR1", the column chunks, the footer (Thrift FileMetaData),
 * its 4-byte little-endian length, "PAR1".
 *
 * Arrow IPC (format/File.fbs, format/Message.fbs; the columnar format's "IPC Streaming Format"
 * and "IPC File Format"): a stream is messages, each a 0xFFFFFFFF continuation, an int32
 * metadata length, a flatbuffer Message (0 version:short, 1 header_type:ubyte, 2 header,
 * 3 bodyLength:long) padded to 8, then its body; a 0 length ends it (older writers omit the
 * continuation). A file is "ARROW1", 2 bytes of padding, a stream, the flatbuffer Footer
 * (0 version, 1 schema, 2 dictionaries:[Block], 3 recordBatches:[Block]; Block is the struct
 * offset:long, metaDataLength:int, 4 bytes of padding, bodyLength:long), its int32 length and
 * "ARROW1". */
#include "dataformats.h"

#include <string.h>

#include "cursor.h"
#include "flatbuffer.h"
#include "protobuf.h"

enum {
    ARROW_BLOCK_LEN = 24,
    ARROW_MAX_METADATA_VERSION = 4, /* V1 .. V5 */
    ARROW_MAX_HEADER_TYPE = 5       /* Schema, DictionaryBatch, RecordBatch, Tensor, SparseTensor */
};

/* ------------------------------------------------------------------------ sorted table */

bool stg_sstable_sniff(const uint8_t *buf, size_t len)
{
    stg_cursor c = stg_cur_make(buf, len);
    uint64_t magic = 0;
    return len >= STG_SSTABLE_FOOTER_LEN && stg_cur_seek(&c, len - 8) == STG_OK &&
           stg_cur_le64(&c, &magic) == STG_OK && magic == STG_SSTABLE_MAGIC;
}

/* A block handle's two varints. */
static stg_parse_status read_handle(stg_cursor *c, uint64_t *offset, uint64_t *size,
                                    stg_parse_detail *d)
{
    size_t at = c->pos;
    if (stg_pb_varint(c, offset) != STG_PARSE_OK || stg_pb_varint(c, size) != STG_PARSE_OK) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0, "a block handle's varint is cut");
    }
    return STG_PARSE_OK;
}

/* The block a handle names, with its trailer, inside data_end (the footer's start). */
static stg_parse_status block_inside(uint64_t offset, uint64_t size, size_t data_end, size_t at,
                                     stg_parse_detail *d)
{
    uint64_t end = 0;
    if (stg_add_u64(offset, size, &end) || stg_add_u64(end, STG_SSTABLE_BLOCK_TRAILER, &end) ||
        end > data_end) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0,
                              "a block handle names bytes past the table's data");
    }
    return STG_PARSE_OK;
}

/* The index block's entries: each value is a data block's handle, inside the data. */
static stg_parse_status index_entries(const uint8_t *buf, uint64_t off, uint64_t size,
                                      size_t data_end, stg_sstable_info *info, stg_parse_detail *d)
{
    stg_cursor c = stg_cur_make(buf, (size_t)(off + size));
    uint32_t restarts = 0;
    if (size < 4 || stg_cur_seek(&c, (size_t)(off + size - 4)) != STG_OK ||
        stg_cur_le32(&c, &restarts) != STG_OK || restarts > (size - 4) / 4) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, off, 0,
                              "the index block's restart array does not fit the block");
    }
    size_t entries_end = (size_t)(off + size - 4 - 4 * (uint64_t)restarts);
    stg_cursor e = stg_cur_make(buf, entries_end);
    (void)stg_cur_seek(&e, (size_t)off);
    while (stg_cur_avail(&e) > 0) {
        size_t at = e.pos;
        uint64_t shared = 0, unshared = 0, vlen = 0, boff = 0, bsize = 0;
        stg_cursor value;
        if (info->data_blocks >= STG_SSTABLE_ENTRIES_CEILING) {
            return stg_parse_fail(d, STG_PARSE_LIMIT, at, 0,
                                  "index block entries past the ceiling");
        }
        if (stg_pb_varint(&e, &shared) != STG_PARSE_OK ||
            stg_pb_varint(&e, &unshared) != STG_PARSE_OK ||
            stg_pb_varint(&e, &vlen) != STG_PARSE_OK || unshared > stg_cur_avail(&e) ||
            stg_cur_skip(&e, (size_t)unshared) != STG_OK || vlen > stg_cur_avail(&e) ||
            stg_cur_sub(&e, (size_t)vlen, &value) != STG_OK) {
            return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0,
                                  "an index block entry's lengths run past the block");
        }
        STG_FORWARD_IF_ERROR(read_handle(&value, &boff, &bsize, d));
        STG_FORWARD_IF_ERROR(block_inside(boff, bsize, data_end, at, d));
        info->data_blocks++;
    }
    return STG_PARSE_OK;
}

stg_parse_status stg_sstable_check(const uint8_t *buf, size_t len, stg_sstable_info *info,
                                   stg_parse_detail *d)
{
    memset(info, 0, sizeof *info);
    if (!stg_sstable_sniff(buf, len)) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, len, 0, "no table magic at the file's end");
    }
    size_t footer = len - STG_SSTABLE_FOOTER_LEN;
    stg_cursor c = stg_cur_make(buf, len - 8);
    (void)stg_cur_seek(&c, footer);
    STG_FORWARD_IF_ERROR(read_handle(&c, &info->meta_offset, &info->meta_size, d));
    STG_FORWARD_IF_ERROR(block_inside(info->meta_offset, info->meta_size, footer, footer, d));
    STG_FORWARD_IF_ERROR(read_handle(&c, &info->index_offset, &info->index_size, d));
    STG_FORWARD_IF_ERROR(block_inside(info->index_offset, info->index_size, footer, footer, d));
    return index_entries(buf, info->index_offset, info->index_size, footer, info, d);
}

/* ---------------------------------------------------------------------------- Parquet */

bool stg_parquet_sniff(const uint8_t *buf, size_t len)
{
    return len >= 4 && memcmp(buf, STG_PARQUET_MAGIC, 4) == 0;
}

stg_parse_status stg_parquet_check(const uint8_t *buf, size_t len, uint32_t *footer_len,
                                   stg_parse_detail *d)
{
    *footer_len = 0;
    if (len < 12 || memcmp(buf, STG_PARQUET_MAGIC, 4) != 0) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, 0, 0, "no PAR1 magic at the file's start");
    }
    if (memcmp(buf + len - 4, STG_PARQUET_MAGIC, 4) != 0) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, len - 4, 0,
                              "no PAR1 magic at the file's end (a cut or encrypted-footer file)");
    }
    stg_cursor c = stg_cur_make(buf, len);
    (void)stg_cur_seek(&c, len - 8);
    (void)stg_cur_le32(&c, footer_len);
    if (*footer_len == 0 || *footer_len > len - 12) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, len - 8, 0,
                              "the footer length is zero or larger than the file");
    }
    return STG_PARSE_OK;
}

/* ------------------------------------------------------------------------------ Arrow */

/* The Message flatbuffer of len bytes at buf: its body length. */
static stg_parse_status arrow_message(const uint8_t *buf, size_t len, size_t at, uint64_t *body_len,
                                      stg_parse_detail *d)
{
    stg_fb fb;
    stg_fb_table msg;
    uint64_t version = 0, type = 0;
    stg_fb_init(&fb, buf, len, stg_fb_visit_budget(len));
    if (stg_fb_root(&fb, &msg) != STG_PARSE_OK ||
        stg_fb_scalar(&fb, &msg, 0, 2, 0, &version) != STG_PARSE_OK ||
        stg_fb_scalar(&fb, &msg, 1, 1, 0, &type) != STG_PARSE_OK ||
        stg_fb_scalar(&fb, &msg, 3, 8, 0, body_len) != STG_PARSE_OK) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, at + (size_t)fb.detail.offset, 0,
                              fb.detail.what != NULL ? fb.detail.what : "a malformed message");
    }
    if (version > ARROW_MAX_METADATA_VERSION || type == 0 || type > ARROW_MAX_HEADER_TYPE) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0,
                              "a message of an unknown metadata version or header type");
    }
    return STG_PARSE_OK;
}

/* One message of the stream at c's position: *end true at the end-of-stream marker. */
static stg_parse_status arrow_next(const uint8_t *buf, stg_cursor *c, bool *end,
                                   stg_parse_detail *d)
{
    size_t at = c->pos;
    uint32_t word = 0, mlen = 0;
    uint64_t body = 0;
    *end = false;
    if (stg_cur_le32(c, &word) != STG_OK ||
        (word == STG_ARROW_CONTINUATION && stg_cur_le32(c, &mlen) != STG_OK)) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0, "a message's length is cut");
    }
    mlen = word == STG_ARROW_CONTINUATION ? mlen : word;
    if (mlen == 0) {
        *end = true;
        return STG_PARSE_OK;
    }
    size_t meta = c->pos;
    if (mlen > stg_cur_avail(c)) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0,
                              "a message's metadata runs past the file's end");
    }
    STG_FORWARD_IF_ERROR(arrow_message(buf + meta, mlen, meta, &body, d));
    if (stg_cur_skip(c, mlen) != STG_OK || body > stg_cur_avail(c) ||
        stg_cur_skip(c, (size_t)body) != STG_OK) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0,
                              "a message's body runs past the file's end");
    }
    return STG_PARSE_OK;
}

static stg_parse_status arrow_stream(const uint8_t *buf, size_t len, uint32_t *messages,
                                     stg_parse_detail *d)
{
    stg_cursor c = stg_cur_make(buf, len);
    bool end = false;
    while (!end && stg_cur_avail(&c) > 0) { /* every message takes at least 4 bytes */
        STG_FORWARD_IF_ERROR(arrow_next(buf, &c, &end, d));
        *messages += end ? 0 : 1;
    }
    return STG_PARSE_OK;
}

static stg_parse_status arrow_blocks(stg_fb *fb, const stg_fb_vec *v, size_t data_end,
                                     size_t footer, uint32_t *messages, stg_parse_detail *d)
{
    for (uint32_t i = 0; i < v->count; i++) {
        uint64_t off = 0, meta = 0, body = 0, end = 0;
        if (stg_fb_vec_struct_field(fb, v, i, 0, 8, &off) != STG_PARSE_OK ||
            stg_fb_vec_struct_field(fb, v, i, 8, 4, &meta) != STG_PARSE_OK ||
            stg_fb_vec_struct_field(fb, v, i, 16, 8, &body) != STG_PARSE_OK) {
            return stg_parse_fail(d, STG_PARSE_MALFORMED, footer + (size_t)fb->detail.offset, 0,
                                  fb->detail.what);
        }
        if (off < 8 || stg_add_u64(off, meta, &end) || stg_add_u64(end, body, &end) ||
            end > data_end) {
            return stg_parse_fail(d, STG_PARSE_MALFORMED, footer + v->data + ARROW_BLOCK_LEN * i, 0,
                                  "a footer block names bytes outside the file's messages");
        }
        (*messages)++;
    }
    return STG_PARSE_OK;
}

static stg_parse_status arrow_file(const uint8_t *buf, size_t len, uint32_t *messages,
                                   stg_parse_detail *d)
{
    if (len < 18 || memcmp(buf + len - 6, STG_ARROW_MAGIC, 6) != 0) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, len >= 6 ? len - 6 : 0, 0,
                              "no ARROW1 magic at the file's end");
    }
    stg_cursor c = stg_cur_make(buf, len);
    uint32_t flen = 0;
    (void)stg_cur_seek(&c, len - 10);
    (void)stg_cur_le32(&c, &flen);
    if (flen == 0 || flen > len - 18) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, len - 10, 0,
                              "the footer length is zero or larger than the file");
    }
    size_t footer = len - 10 - flen;
    stg_fb fb;
    stg_fb_table root;
    stg_fb_vec dicts, batches;
    stg_fb_init(&fb, buf + footer, flen, stg_fb_visit_budget(flen));
    if (stg_fb_root(&fb, &root) != STG_PARSE_OK ||
        stg_fb_vector(&fb, &root, 2, ARROW_BLOCK_LEN, &dicts) != STG_PARSE_OK ||
        stg_fb_vector(&fb, &root, 3, ARROW_BLOCK_LEN, &batches) != STG_PARSE_OK) {
        return stg_parse_fail(d, STG_PARSE_MALFORMED, footer + (size_t)fb.detail.offset, 0,
                              fb.detail.what);
    }
    STG_FORWARD_IF_ERROR(arrow_blocks(&fb, &dicts, footer, footer, messages, d));
    return arrow_blocks(&fb, &batches, footer, footer, messages, d);
}

bool stg_arrow_sniff(const uint8_t *buf, size_t len)
{
    if (len >= 8 && memcmp(buf, STG_ARROW_MAGIC, 6) == 0) {
        return true;
    }
    stg_cursor c = stg_cur_make(buf, len);
    uint32_t word = 0, mlen = 0;
    uint64_t body = 0;
    if (stg_cur_le32(&c, &word) != STG_OK || word != STG_ARROW_CONTINUATION ||
        stg_cur_le32(&c, &mlen) != STG_OK || mlen < 8 || mlen > stg_cur_avail(&c)) {
        return false;
    }
    return arrow_message(buf + 8, mlen, 8, &body, NULL) == STG_PARSE_OK;
}

stg_parse_status stg_arrow_check(const uint8_t *buf, size_t len, uint32_t *messages,
                                 stg_parse_detail *d)
{
    *messages = 0;
    if (len >= 8 && memcmp(buf, STG_ARROW_MAGIC, 6) == 0) {
        return arrow_file(buf, len, messages, d);
    }
    return arrow_stream(buf, len, messages, d);
}
