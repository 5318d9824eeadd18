/* parser/zip, parser/inflate and parser/tar on hand-built archives: what each entry yields
 * (names, offsets, data ranges), the cross-check bits, ZIP64, the bounded end-record search,
 * prepended bytes, overlaps, truncation; inflate caps; tar headers, long names, checksums. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/inflate.h"
#include "parser/tar.h"
#include "parser/util.h"
#include "parser/zip.h"
#include "testutil.h"
#include "zipbuild.h"

static const char DATA_A[] = "hello, world";
static const char DATA_B[] = "\x80\x02K\x01.";

static uint8_t *two_entries(size_t *len, uint64_t offs[2], const zb_opts *o)
{
    zb_entry e[2] = {zb_file("a.txt", DATA_A, sizeof DATA_A - 1),
                     zb_file("dir/b.pkl", DATA_B, sizeof DATA_B - 1)};
    return zb_build(e, 2, o, len, offs);
}

START_TEST(test_stored_entries)
{
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    stg_zip z;
    stg_zip_error err;
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(z.entry_count, 2);
    ck_assert_uint_eq(z.base, 0);
    ck_assert_uint_eq(z.eocd_offset, len - 22);
    ck_assert(!z.zip64);
    stg_zip_entry e;
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(e.name_len, 5);
    ck_assert(memcmp(e.name, "a.txt", 5) == 0);
    ck_assert_uint_eq(e.local_offset, offs[0]);
    ck_assert_uint_eq(e.data_offset, 30 + 5);
    ck_assert_uint_eq(e.data_len, sizeof DATA_A - 1);
    ck_assert(memcmp(buf + e.data_offset, DATA_A, e.data_len) == 0);
    ck_assert_uint_eq(e.mismatch, 0);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(e.index, 1);
    ck_assert_uint_eq(e.local_offset, offs[1]);
    ck_assert(memcmp(buf + e.data_offset, DATA_B, e.data_len) == 0);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_END);
    free(buf);
}
END_TEST

START_TEST(test_comment_and_search_window)
{
    /* zipfile looks for the end record in the last 65,558 bytes: 65,536 bytes after the record
     * are found, one more is not a zip (miniz's window is wider: test_reader_windows). */
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    for (size_t extra = 65536; extra <= 65537; extra++) {
        uint8_t *big = calloc(1, len + extra);
        memcpy(big, buf, len);
        stg_zip z;
        stg_zip_error err;
        stg_zip_result want = extra == 65536 ? STG_ZIPR_OK : STG_ZIPR_NOT_FOUND;
        ck_assert_int_eq(stg_zip_open(&z, big, len + extra, &err), want);
        free(big);
    }
    zb_opts o = {.comment = "a comment"};
    uint8_t *withc = two_entries(&len, offs, &o);
    stg_zip z;
    stg_zip_error err;
    ck_assert_int_eq(stg_zip_open(&z, withc, len, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(z.eocd_offset, len - 22 - 9);
    free(withc);
    free(buf);
}
END_TEST

START_TEST(test_prepended_bytes)
{
    static const char junk[] = "0123456789abcdef";
    zb_opts o = {.prefix = junk, .prefix_len = 16};
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, &o);
    stg_zip z;
    stg_zip_error err;
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(z.base, 16);
    stg_zip_entry e;
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(e.local_offset, 16);
    ck_assert_uint_eq(offs[0], 16);
    ck_assert(memcmp(buf + e.data_offset, DATA_A, e.data_len) == 0);
    free(buf);
}
END_TEST

START_TEST(test_zip64)
{
    for (int prefixed = 0; prefixed <= 1; prefixed++) {
        zb_opts o = {.zip64 = true, .prefix = "XYZ", .prefix_len = prefixed ? 3 : 0};
        size_t len;
        uint64_t offs[2];
        uint8_t *buf = two_entries(&len, offs, &o);
        stg_zip z;
        stg_zip_error err;
        ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
        ck_assert(z.zip64);
        ck_assert_uint_eq(z.entry_count, 2);
        stg_zip_entry e;
        ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
        ck_assert_uint_eq(e.comp_size, sizeof DATA_A - 1);
        ck_assert_uint_eq(e.uncomp_size, sizeof DATA_A - 1);
        ck_assert_uint_eq(e.local_offset, offs[0]);
        ck_assert(e.local_sizes_known);
        ck_assert_uint_eq(e.local_comp_size, sizeof DATA_A - 1);
        ck_assert_uint_eq(e.mismatch, 0);
        ck_assert(memcmp(buf + e.data_offset, DATA_A, e.data_len) == 0);
        ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
        ck_assert_uint_eq(e.local_offset, offs[1]);
        ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_END);
        free(buf);
    }
}
END_TEST

START_TEST(test_mismatch_bits)
{
    zb_entry e[1] = {zb_file("archive/data.pkl", DATA_B, sizeof DATA_B - 1)};
    for (int k = 0; k < 5; k++) {
        zb_entry x = e[0];
        unsigned want = 0;
        switch (k) {
        case 0: break; /* near miss: identical headers */
        case 1:
            x.local_name = "archive/other.bin";
            want = STG_ZIP_MISMATCH_NAME;
            break;
        case 2:
            x.local_method_set = true;
            x.local_method = 8;
            want = STG_ZIP_MISMATCH_METHOD;
            break;
        case 3:
            x.local_flags_set = true;
            x.local_flags = 1;
            want = STG_ZIP_MISMATCH_FLAGS;
            break;
        case 4:
            x.local_csize_set = true;
            x.local_csize = 2;
            want = STG_ZIP_MISMATCH_SIZES;
            break;
        }
        size_t len;
        uint8_t *buf = zb_build(&x, 1, NULL, &len, NULL);
        stg_zip z;
        stg_zip_error err;
        stg_zip_entry ent;
        ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
        ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
        ck_assert_msg(ent.mismatch == want, "case %d: %u", k, ent.mismatch);
        free(buf);
    }
}
END_TEST

START_TEST(test_data_descriptor_sizes_not_compared)
{
    /* Bit 3: sizes follow the data; a local header with zero sizes is not a mismatch. */
    zb_entry x = zb_file("a", DATA_A, sizeof DATA_A - 1);
    x.flags = 8;
    x.local_csize_set = true;
    x.local_csize = 0;
    x.uncomp_size = 0;
    size_t len;
    uint8_t *buf = zb_build(&x, 1, NULL, &len, NULL);
    /* uncompressed size in the local header is written from len: zero it by hand. */
    buf[22] = buf[23] = buf[24] = buf[25] = 0;
    stg_zip z;
    stg_zip_error err;
    stg_zip_entry ent;
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert(!ent.local_sizes_known);
    ck_assert_uint_eq(ent.mismatch, 0);
    ck_assert_uint_eq(ent.data_len, sizeof DATA_A - 1);
    free(buf);
}
END_TEST

START_TEST(test_overlaps)
{
    zb_entry e[3] = {zb_file("a", DATA_A, sizeof DATA_A - 1), zb_file("b", DATA_B, 5),
                     zb_file("c", DATA_A, sizeof DATA_A - 1)};
    e[2].share_local_with = 0; /* c's central entry points at a's local header */
    size_t len;
    uint64_t offs[3];
    uint8_t *buf = zb_build(e, 3, NULL, &len, offs);
    stg_zip z;
    stg_zip_error err;
    stg_zip_entry ent;
    stg_zip_range r[3];
    size_t n = 0;
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    while (stg_zip_next(&z, &ent, &err) != STG_ZIPR_END) {
        r[n].begin = ent.local_offset;
        r[n].end = ent.data_offset + ent.data_len;
        r[n].index = ent.index;
        n++;
    }
    ck_assert_uint_eq(n, 3);
    size_t first = 99;
    ck_assert_uint_eq(stg_zip_sort_overlaps(r, n, &first), 1);
    ck_assert_uint_eq(r[first].begin, offs[0]);
    /* Near miss: disjoint ranges. */
    stg_zip_range ok[3] = {{10, 20, 0}, {0, 10, 1}, {20, 20, 2}};
    ck_assert_uint_eq(stg_zip_sort_overlaps(ok, 3, &first), 0);
    ck_assert_uint_eq(ok[0].begin, 0);
    free(buf);
}
END_TEST

START_TEST(test_broken_structures)
{
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    stg_zip z;
    stg_zip_error err;
    stg_zip_entry ent;
    /* Cut anywhere before the end record: the record is gone, so not found. */
    for (size_t cut = 0; cut < len; cut++) {
        stg_zip_result zr = stg_zip_open(&z, buf, cut, &err);
        ck_assert_msg(zr == STG_ZIPR_NOT_FOUND || zr == STG_ZIPR_MALFORMED, "cut %zu", cut);
    }
    /* A local header offset past the central directory start: that entry is bad, the next one
     * is still read. */
    uint8_t *bad = malloc(len);
    memcpy(bad, buf, len);
    size_t cd = (size_t)stg_le32(bad + len - 22 + 16);
    bad[cd + 42] = 0xf0; /* first central entry's local offset -> 0x...f0 */
    ck_assert_int_eq(stg_zip_open(&z, bad, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_ENTRY_BAD);
    ck_assert_uint_eq(err.offset, cd);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(ent.local_offset, offs[1]);
    /* Local header signature destroyed. */
    memcpy(bad, buf, len);
    bad[offs[1]] = 'X';
    ck_assert_int_eq(stg_zip_open(&z, bad, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_ENTRY_BAD);
    ck_assert_uint_eq(err.offset, offs[1]);
    /* Compressed size running into the central directory. */
    memcpy(bad, buf, len);
    bad[cd + 20] = 0x7f;
    ck_assert_int_eq(stg_zip_open(&z, bad, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_ENTRY_BAD);
    ck_assert_uint_eq(err.offset, offs[0]);
    /* Declared entry count larger than the directory can hold (46 bytes each): miniz refuses
     * the archive; zipfile never reads the count, so both entries are read and the count is
     * reported after them. */
    memcpy(bad, buf, len);
    bad[len - 22 + 8] = 3;
    bad[len - 22 + 10] = 3;
    ck_assert_int_eq(stg_zip_open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, len - 22);
    ck_assert_int_eq(stg_zip_open(&z, bad, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, len - 22);
    /* Fewer declared than present: miniz reads one entry and reports the second as left over;
     * zipfile reads both, then reports the count. */
    memcpy(bad, buf, len);
    bad[len - 22 + 8] = 1;
    bad[len - 22 + 10] = 1;
    ck_assert_int_eq(stg_zip_open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cd + 46 + 5);
    ck_assert_int_eq(stg_zip_open(&z, bad, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, len - 22);
    /* A central directory size one byte short: zipfile looks for the directory one byte late
     * and finds no central header there; miniz finds the second entry cut short. Both refuse
     * the archive. */
    zb_opts o = {.truncate_cd_size = true};
    free(bad);
    bad = two_entries(&len, offs, &o);
    ck_assert_int_eq(stg_zip_open(&z, bad, len, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cd + 1);
    ck_assert_int_eq(stg_zip_open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cd + 46 + 5);
    free(bad);
    free(buf);
}
END_TEST

START_TEST(test_local_walk)
{
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    uint64_t pos = 0;
    stg_zip_entry e;
    stg_zip_error err;
    ck_assert_int_eq(stg_zip_local_next(buf, len, &pos, &e, &err), STG_ZIPR_OK);
    ck_assert(memcmp(e.name, "a.txt", 5) == 0);
    ck_assert_uint_eq(e.data_len, sizeof DATA_A - 1);
    ck_assert_uint_eq(pos, offs[1]);
    ck_assert_int_eq(stg_zip_local_next(buf, len, &pos, &e, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(e.local_offset, offs[1]);
    ck_assert(memcmp(buf + e.data_offset, DATA_B, e.data_len) == 0);
    /* the central directory follows: no local header there */
    ck_assert_int_eq(stg_zip_local_next(buf, len, &pos, &e, &err), STG_ZIPR_END);
    /* data cut short: bad entry at its header */
    pos = offs[1];
    ck_assert_int_eq(stg_zip_local_next(buf, (size_t)offs[1] + 40, &pos, &e, &err),
                     STG_ZIPR_ENTRY_BAD);
    ck_assert_uint_eq(err.offset, offs[1]);
    /* ZIP64 local sizes are resolved */
    zb_opts o = {.zip64 = true};
    free(buf);
    buf = two_entries(&len, offs, &o);
    pos = 0;
    ck_assert_int_eq(stg_zip_local_next(buf, len, &pos, &e, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(e.data_len, sizeof DATA_A - 1);
    ck_assert_uint_eq(pos, offs[1]);
    free(buf);
}
END_TEST

START_TEST(test_empty_archive)
{
    size_t len;
    uint8_t *buf = zb_build(NULL, 0, NULL, &len, NULL);
    ck_assert_uint_eq(len, 22);
    stg_zip z;
    stg_zip_error err;
    stg_zip_entry ent;
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &ent, &err), STG_ZIPR_END);
    free(buf);
}
END_TEST

/* ------------------------------------------------------------------------------ inflate */

/* Position of entry k's central header (walks the directory). */
static uint64_t central_of(const uint8_t *buf, size_t len, uint64_t k)
{
    stg_zip z;
    stg_zip_error err;
    stg_zip_entry e;
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    for (;;) {
        stg_zip_result zr = stg_zip_next(&z, &e, &err);
        ck_assert(zr == STG_ZIPR_OK || zr == STG_ZIPR_ENTRY_BAD);
        if (e.index == k) {
            return e.cd_offset;
        }
    }
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

START_TEST(test_zip64_offset_overflow)
{
    /* Three bytes before the archive (base 3) and a ZIP64 local-header offset of 2^64 - 1: the
     * sum wraps. The entry is bad at its central header, its local_offset is UINT64_MAX (never
     * the wrapped 2), and the next entry is read as usual. */
    zb_opts o = {.zip64 = true, .prefix = "XYZ", .prefix_len = 3};
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, &o);
    uint64_t cd0 = central_of(buf, len, 0);
    /* central header (46) + name "a.txt" (5) + extra id and size (4) + usize, csize (16) */
    put_le64(buf + cd0 + 46 + 5 + 4 + 16, UINT64_MAX);
    stg_zip z;
    stg_zip_error err;
    stg_zip_entry e;
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(z.base, 3);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_ENTRY_BAD);
    ck_assert_uint_eq(err.offset, cd0);
    ck_assert_str_eq(err.what, "local header offset overflows");
    ck_assert_uint_eq(e.local_offset, UINT64_MAX);
    ck_assert_uint_eq(e.name_len, 5);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(e.local_offset, offs[1]);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_END);
    /* near miss: 2^64 - 4 + 3 = 2^64 - 1 does not wrap; it lies outside the archive */
    put_le64(buf + cd0 + 46 + 5 + 4 + 16, UINT64_MAX - 3);
    ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_ENTRY_BAD);
    ck_assert_str_eq(err.what, "local header offset lies outside the archive");
    ck_assert_uint_eq(e.local_offset, UINT64_MAX);
    free(buf);
}
END_TEST

START_TEST(test_zip64_placeholder_without_extra)
{
    /* A central header with only its compressed size as the 0xFFFFFFFF placeholder and no
     * ZIP64 extra field: bad entry at that header; the uncompressed-size or the local-header
     * offset placeholder alone likewise. */
    static const size_t field[3] = {20, 24, 42};
    for (int which = 0; which < 3; which++) {
        size_t len;
        uint64_t offs[2];
        uint8_t *buf = two_entries(&len, offs, NULL);
        uint64_t cd1 = central_of(buf, len, 1);
        put_le32(buf + cd1 + field[which], UINT32_MAX);
        stg_zip z;
        stg_zip_error err;
        stg_zip_entry e;
        ck_assert_int_eq(stg_zip_open(&z, buf, len, &err), STG_ZIPR_OK);
        ck_assert_uint_eq(stg_zip_first_byte(&z), offs[0]); /* from the start, state kept */
        ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
        ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_ENTRY_BAD);
        ck_assert_uint_eq(err.offset, cd1);
        ck_assert_str_eq(err.what, "ZIP64 extra field missing or truncated");
        ck_assert_uint_eq(e.local_offset, UINT64_MAX); /* no position: never the first byte */
        ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_END);
        free(buf);
    }
}
END_TEST

START_TEST(test_local_walk_positions)
{
    /* The walk's position is the caller's: past the end, at the end, or where fewer than four
     * bytes are left, there is no local header. */
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    stg_zip_entry e;
    stg_zip_error err;
    uint64_t pos = len + 5;
    ck_assert_int_eq(stg_zip_local_next(buf, len, &pos, &e, &err), STG_ZIPR_END);
    ck_assert_uint_eq(pos, len + 5);
    pos = len;
    ck_assert_int_eq(stg_zip_local_next(buf, len, &pos, &e, &err), STG_ZIPR_END);
    pos = len - 3;
    ck_assert_int_eq(stg_zip_local_next(buf, len, &pos, &e, &err), STG_ZIPR_END);
    /* a signature with the header cut after 20 bytes: bad entry there */
    pos = offs[1];
    ck_assert_int_eq(stg_zip_local_next(buf, (size_t)offs[1] + 20, &pos, &e, &err),
                     STG_ZIPR_ENTRY_BAD);
    ck_assert_uint_eq(err.offset, offs[1]);
    ck_assert_str_eq(err.what, "local header truncated");
    free(buf);
}
END_TEST

static uint8_t *fixture(const char *name, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/data/containers/%s", name);
    uint8_t *p = tu_read_file(tu_src(rel), len);
    ck_assert_msg(p != NULL, "fixture %s", name);
    return p;
}

START_TEST(test_inflate_caps)
{
    if (!tu_inflate_built()) {
        return;
    }
    size_t len;
    uint8_t *raw = fixture("zeros-2m.deflate", &len);
    stg_inflate_out out;
    /* Ratio ~1023:1 over the 1 MiB floor: caught at 1000, passes at 1100. */
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, 1ull << 32, 1000, &out),
                     STG_INFLATE_RATIO);
    ck_assert_uint_le(out.len, (size_t)len * 1000 + 65536);
    stg_inflate_free(&out);
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, 1ull << 32, 1100, &out),
                     STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 2u << 20);
    ck_assert_uint_eq(out.consumed, len);
    ck_assert_uint_eq(out.data[12345], 0);
    stg_inflate_free(&out);
    /* Size cap: exactly the size passes, one byte less does not. */
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, 2u << 20, 0, &out), STG_INFLATE_OK);
    stg_inflate_free(&out);
    ck_assert_int_eq(stg_inflate(raw, len, STG_INFLATE_RAW, (2u << 20) - 1, 0, &out),
                     STG_INFLATE_TOO_BIG);
    ck_assert_uint_eq(out.len, (2u << 20) - 1);
    stg_inflate_free(&out);
    /* Truncated stream; corrupt stream. */
    ck_assert_int_eq(stg_inflate(raw, len / 2, STG_INFLATE_RAW, 1ull << 32, 0, &out),
                     STG_INFLATE_TRUNCATED);
    stg_inflate_free(&out);
    static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff};
    ck_assert_int_eq(stg_inflate(junk, sizeof junk, STG_INFLATE_RAW, 1 << 20, 0, &out),
                     STG_INFLATE_CORRUPT);
    stg_inflate_free(&out);
    free(raw);
}
END_TEST

START_TEST(test_inflate_zlib_gzip)
{
    if (!tu_inflate_built()) {
        return;
    }
    size_t len;
    uint8_t *z = fixture("zeros-2m.zlib", &len);
    stg_inflate_out out;
    ck_assert_int_eq(stg_inflate(z, len, STG_INFLATE_ZLIB, 1ull << 32, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 2u << 20);
    stg_inflate_free(&out);
    free(z);
    uint8_t *g = fixture("evil.pkl.gz", &len);
    /* Two concatenated gzip members inflate to both payloads, as Python's gzip reads them. */
    uint8_t *two = malloc(2 * len + 3);
    memcpy(two, g, len);
    memcpy(two + len, g, len);
    ck_assert_int_eq(stg_inflate(two, 2 * len, STG_INFLATE_GZIP, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.len, 2 * 31);
    ck_assert_uint_eq(out.consumed, 2 * len);
    ck_assert(memcmp(out.data,
                     "\x80\x02"
                     "cos\nsystem",
                     12) == 0);
    stg_inflate_free(&out);
    /* Trailing bytes are left unconsumed for the caller to report. */
    memcpy(two + len, "XYZ", 3);
    ck_assert_int_eq(stg_inflate(two, len + 3, STG_INFLATE_GZIP, 1 << 20, 0, &out), STG_INFLATE_OK);
    ck_assert_uint_eq(out.consumed, len);
    stg_inflate_free(&out);
    free(two);
    free(g);
}
END_TEST

/* ---------------------------------------------------------------------------------- tar */

START_TEST(test_tar_members)
{
    size_t len;
    uint8_t *t = fixture("torch01-evil.tar", &len);
    static const char *const want[] = {"sys_info", "pickle", "storages", "tensors"};
    stg_tar tar;
    stg_tar_entry *e = malloc(sizeof *e);
    stg_parse_detail err;
    stg_tar_init(&tar, t, len);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_OK);
        ck_assert_str_eq(e->name, want[i]);
        ck_assert_uint_eq(e->data_offset % 512, 0);
        ck_assert_uint_le(e->data_offset + (uint64_t)e->size, len);
        /* pax writes an extended header before some members: data follows the last header. */
        ck_assert_uint_ge(e->data_offset, e->header_offset + 512);
        ck_assert(stg_tar_header_ok(t + e->header_offset, 512));
    }
    ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_END);
    /* The pickle member's bytes are the pickle. */
    stg_tar_init(&tar, t, len);
    (void)stg_tar_next(&tar, e, &err);
    (void)stg_tar_next(&tar, e, &err);
    ck_assert_int_eq(e->size, 31);
    ck_assert(memcmp(t + e->data_offset,
                     "\x80\x02"
                     "cos\nsystem",
                     12) == 0);
    /* A flipped byte in a later header breaks its checksum: tarfile's list ends there, and the
     * reader says where it stopped. */
    uint64_t hdr = e->header_offset;
    t[hdr + 1] ^= 0x20;
    stg_tar_init(&tar, t, len);
    ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_OK);
    ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_END);
    ck_assert_uint_eq(tar.stop_offset, hdr);
    ck_assert_str_eq(tar.stop_why, "tar header checksum invalid");
    /* Truncated inside the first member's header. */
    stg_tar_init(&tar, t, 300);
    ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(err.offset, 0);
    free(e);
    free(t);
}
END_TEST

START_TEST(test_tar_long_name_and_size_past_end)
{
    size_t len;
    uint8_t *t = fixture("longname-evil.tar", &len);
    stg_tar tar;
    stg_tar_entry *e = malloc(sizeof *e);
    stg_parse_detail err;
    stg_tar_init(&tar, t, len);
    ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_OK);
    ck_assert_uint_eq(e->name_len, 2 + 150 + 12);
    ck_assert(strncmp(e->name + e->name_len - 12, "/payload.pkl", 12) == 0);
    ck_assert_int_eq(e->size, 31);
    ck_assert(stg_tar_header_ok(t + e->header_offset, 512));
    /* A size larger than what follows: malformed at the header. */
    uint64_t hdr = e->header_offset;
    ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_END);
    uint8_t *cut = malloc(hdr + 1024 + 100);
    memcpy(cut, t, hdr + 1024 + 100);
    /* hdr is the pax header's offset (TarInfo.offset); the member's own header follows its
     * records at hdr + 1024. */
    stg_tar_init(&tar, cut, hdr + 1024 + 20);
    ck_assert_int_eq(stg_tar_next(&tar, e, &err), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(err.offset, hdr + 1024);
    free(cut);
    free(e);
    free(t);
}
END_TEST

/* ------------------------------------------------------------- reader models (zip.h) */

static stg_zip_result open_as(stg_zip *z, const uint8_t *buf, size_t len, stg_zip_reader r,
                              stg_zip_error *err)
{
    return stg_zip_open_as(z, buf, len, r, err);
}

START_TEST(test_reader_comment_signature)
{
    /* A comment whose last bytes hold an end record signature with fewer than 22 bytes after
     * it: zipfile takes that last signature and refuses the file; miniz skips it (it needs 22
     * bytes) and reads the real record. */
    size_t len;
    uint64_t offs[2];
    zb_opts o = {.comment = "comment PK\x05\x06 tail"};
    uint8_t *buf = two_entries(&len, offs, &o);
    size_t eocd = len - 22 - strlen(o.comment), sig = eocd + 22 + 8;
    stg_zip z;
    stg_zip_error err;
    ck_assert_int_eq(open_as(&z, buf, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, sig);
    ck_assert_int_eq(open_as(&z, buf, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(z.eocd_offset, eocd);
    free(buf);
    /* near miss: the same comment without the signature; both read the real record */
    zb_opts plain = {.comment = "comment PK\x05\x07 tail"};
    buf = two_entries(&len, offs, &plain);
    for (int r = 0; r < STG_ZIP_READERS; r++) {
        ck_assert_int_eq(open_as(&z, buf, len, (stg_zip_reader)r, &err), STG_ZIPR_OK);
        ck_assert_uint_eq(z.eocd_offset, eocd);
    }
    free(buf);
}
END_TEST

START_TEST(test_reader_windows)
{
    /* miniz's 4 KiB blocks backwards never start before byte 0: with 4,075 bytes appended to
     * this archive the block that would hold its end record would start at -3,780, a failed
     * read, so miniz finds nothing; with 4,074 it is found. zipfile finds both. */
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    size_t eocd = len - 22;
    for (size_t extra = 4074; extra <= 4075; extra++) {
        size_t n = len + extra;
        uint8_t *big = calloc(1, n);
        memcpy(big, buf, len);
        ck_assert_uint_eq(n - 4096, extra == 4074 ? eocd : eocd + 1);
        stg_zip z;
        stg_zip_error err;
        ck_assert_int_eq(open_as(&z, big, n, STG_ZIP_READER_MINIZ, &err),
                         extra == 4074 ? STG_ZIPR_OK : STG_ZIPR_NOT_FOUND);
        ck_assert_int_eq(open_as(&z, big, n, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
        ck_assert_uint_eq(z.eocd_offset, eocd);
        free(big);
    }
    free(buf);
}
END_TEST

START_TEST(test_reader_prepended)
{
    /* Bytes before an archive written without knowing of them: zipfile moves every offset by
     * them (base); miniz reads the directory at the declared offset, absolute, finds no
     * central header there and refuses the archive. */
    static const char prefix[] = "0123456789";
    zb_opts o = {.prefix = prefix, .prefix_len = 10};
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, &o);
    stg_zip z, m;
    stg_zip_error err;
    ck_assert_int_eq(open_as(&z, buf, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(z.base, 10);
    uint64_t declared = stg_le32(buf + len - 22 + 16);
    ck_assert_int_eq(open_as(&m, buf, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, declared);
    free(buf);
    /* near miss: no prefix; both read the same directory, the same way */
    buf = two_entries(&len, offs, NULL);
    ck_assert_int_eq(open_as(&z, buf, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    ck_assert_int_eq(open_as(&m, buf, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(m.cd_start, z.cd_start);
    ck_assert(stg_zip_same_reading(&z, &m));
    free(buf);
}
END_TEST

START_TEST(test_reader_offset_past_directory)
{
    /* A declared directory offset 7 bytes past the real one: zipfile moves every local offset
     * back by 7 (base_below), so an entry declared at 7 is read at 0, and one declared below 7
     * would lie before the file. */
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    size_t cd = (size_t)stg_le32(buf + len - 22 + 16);
    buf[len - 22 + 16] = (uint8_t)(cd + 7);
    buf[cd + 42] = 7; /* first entry: local header declared at 7 */
    stg_zip z;
    stg_zip_error err;
    stg_zip_entry e;
    ck_assert_int_eq(open_as(&z, buf, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(z.cd_start, cd);
    ck_assert_uint_eq(z.base_below, 7);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
    ck_assert_uint_eq(e.local_offset, 0);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_ENTRY_BAD); /* declared at offs[1] */
    ck_assert_uint_eq(err.offset, offs[1] - 7);
    buf[cd + 46 + 5 + 42] = 3; /* second entry declared at 3: before the file */
    ck_assert_int_eq(open_as(&z, buf, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_ENTRY_BAD);
    ck_assert_uint_eq(err.offset, cd + 46 + 5);
    ck_assert_uint_eq(e.local_offset, UINT64_MAX);
    /* miniz looks for the directory at the declared offset: no central header there */
    ck_assert_int_eq(open_as(&z, buf, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cd + 7);
    free(buf);
}
END_TEST

START_TEST(test_reader_zip64_records)
{
    /* Two ZIP64 records: miniz follows the locator to the first, zipfile takes the one right
     * before the locator. Different directories: not the same reading. */
    zb_entry ents[2] = {zb_file("a.txt", DATA_A, sizeof DATA_A - 1),
                        zb_file("dir/b.pkl", DATA_B, sizeof DATA_B - 1)};
    zb_opts o = {.zip64 = true};
    size_t len, len2;
    uint64_t offs[2], second_cd;
    uint8_t *one = zb_build(ents, 2, &o, &len, offs);
    uint8_t *two = zb_two_zip64_directories(one, len, 'A', &len2, &second_cd);
    uint64_t first_cd = stg_le64(one + len - 98 + 48);
    stg_zip z, m;
    stg_zip_error err;
    ck_assert_int_eq(open_as(&z, two, len2, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    ck_assert_int_eq(open_as(&m, two, len2, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    ck_assert(z.zip64 && m.zip64);
    ck_assert_uint_eq(z.cd_start, second_cd);
    ck_assert_uint_eq(m.cd_start, first_cd);
    ck_assert(!stg_zip_same_reading(&z, &m));
    stg_zip_entry e;
    ck_assert_int_eq(stg_zip_next(&z, &e, &err), STG_ZIPR_OK);
    ck_assert(e.name[0] == 'A' && (e.mismatch & STG_ZIP_MISMATCH_NAME) != 0);
    /* near miss: one record; both take it */
    ck_assert_int_eq(open_as(&z, one, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    ck_assert_int_eq(open_as(&m, one, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    ck_assert(stg_zip_same_reading(&z, &m));
    /* The locator pointing past the file: miniz refuses at the locator; zipfile never reads
     * the locator's offset. Pointing inside the file at no record: miniz keeps the classic
     * fields (placeholders here: the directory does not fit, refused at the end record). */
    size_t loc = len - 22 - 20;
    uint8_t *bad = malloc(len);
    memcpy(bad, one, len);
    bad[loc + 8 + 7] = 0x01;
    ck_assert_int_eq(open_as(&m, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, loc);
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    memcpy(bad, one, len);
    memset(bad + loc + 8, 0, 8); /* -> byte 0, a local header */
    ck_assert_int_eq(open_as(&m, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, len - 22);
    /* zipfile refuses a locator that names several disks; miniz wants exactly one */
    memcpy(bad, one, len);
    bad[loc + 16] = 2;
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, loc);
    ck_assert_int_eq(open_as(&m, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    free(bad);
    free(two);
    free(one);
}
END_TEST

START_TEST(test_reader_central_checks)
{
    /* What each reader refuses in a central header at open. */
    size_t len;
    uint64_t offs[2];
    uint8_t *buf = two_entries(&len, offs, NULL);
    size_t cd = (size_t)stg_le32(buf + len - 22 + 16), cd1 = cd + 46 + 5;
    uint8_t *bad = malloc(len);
    stg_zip z;
    stg_zip_error err;
    /* zipfile: version needed over 6.3 (63 passes) */
    memcpy(bad, buf, len);
    bad[cd1 + 6] = 64;
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cd1);
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    bad[cd1 + 6] = 63;
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    /* miniz: a stored entry whose sizes differ, when method and time read as one 32-bit
     * field are zero; a nonzero time lets it through */
    memcpy(bad, buf, len);
    bad[cd1 + 24] = (uint8_t)(bad[cd1 + 24] + 1); /* uncompressed size */
    bad[cd1 + 12] = 0;
    bad[cd1 + 13] = 0;
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cd1);
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    bad[cd1 + 12] = 1;
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    /* miniz: another disk number (1 passes, as miniz allows) */
    memcpy(bad, buf, len);
    bad[cd + 34] = 2;
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cd);
    bad[cd + 34] = 1;
    ck_assert_int_eq(open_as(&z, bad, len, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    free(bad);
    free(buf);
    zb_entry ents[1] = {zb_file("x", "abc", 3)};
    uint8_t *one = zb_build(ents, 1, NULL, &len, offs);
    size_t cdx = (size_t)stg_le32(one + len - 22 + 16);
    /* zipfile: an extra field running past the extra area. Insert a 4-byte extra field that
     * declares 255 bytes of data into the one central header (directory size + 4). */
    bad = malloc(len + 4);
    memcpy(bad, one, cdx + 46 + 1);
    static const uint8_t extra[4] = {0x99, 0x99, 0xff, 0x00}; /* id 0x9999, size 255 */
    memcpy(bad + cdx + 46 + 1, extra, 4);
    memcpy(bad + cdx + 46 + 1 + 4, one + cdx + 46 + 1, len - (cdx + 46 + 1));
    bad[cdx + 30] = 4;
    size_t e2 = len + 4 - 22;
    bad[e2 + 12] = (uint8_t)(bad[e2 + 12] + 4);
    ck_assert_int_eq(open_as(&z, bad, len + 4, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_MALFORMED);
    ck_assert_uint_eq(err.offset, cdx);
    /* miniz looks at extra fields only when a size or offset is a ZIP64 placeholder */
    ck_assert_int_eq(open_as(&z, bad, len + 4, STG_ZIP_READER_MINIZ, &err), STG_ZIPR_OK);
    /* near miss: a well-formed extra field (size 0) */
    bad[cdx + 46 + 1 + 2] = 0;
    ck_assert_int_eq(open_as(&z, bad, len + 4, STG_ZIP_READER_ZIPFILE, &err), STG_ZIPR_OK);
    free(bad);
    free(one);
}
END_TEST

START_TEST(test_reader_names)
{
    ck_assert_str_eq(stg_zip_reader_name(STG_ZIP_READER_ZIPFILE), "zipfile");
    ck_assert_str_eq(stg_zip_reader_name(STG_ZIP_READER_MINIZ), "miniz");
}
END_TEST

static Suite *zip_suite(void)
{
    Suite *s = suite_create("zip");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_stored_entries);
    tcase_add_test(tc, test_comment_and_search_window);
    tcase_add_test(tc, test_prepended_bytes);
    tcase_add_test(tc, test_zip64);
    tcase_add_test(tc, test_mismatch_bits);
    tcase_add_test(tc, test_data_descriptor_sizes_not_compared);
    tcase_add_test(tc, test_overlaps);
    tcase_add_test(tc, test_broken_structures);
    tcase_add_test(tc, test_local_walk);
    tcase_add_test(tc, test_empty_archive);
    tcase_add_test(tc, test_zip64_offset_overflow);
    tcase_add_test(tc, test_zip64_placeholder_without_extra);
    tcase_add_test(tc, test_local_walk_positions);
    tcase_add_test(tc, test_inflate_caps);
    tcase_add_test(tc, test_inflate_zlib_gzip);
    tcase_add_test(tc, test_tar_members);
    tcase_add_test(tc, test_tar_long_name_and_size_past_end);
    tcase_add_test(tc, test_reader_comment_signature);
    tcase_add_test(tc, test_reader_windows);
    tcase_add_test(tc, test_reader_prepended);
    tcase_add_test(tc, test_reader_offset_past_directory);
    tcase_add_test(tc, test_reader_zip64_records);
    tcase_add_test(tc, test_reader_central_checks);
    tcase_add_test(tc, test_reader_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(zip_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
