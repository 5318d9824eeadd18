/* Test helper (header-only): builds small zip archives byte by byte, including the broken and
 * ambiguous ones real writers never make (names or sizes differing between local header and
 * central directory, flag bits, overlapping entries, ZIP64 records, prepended bytes). */
#ifndef STG_TEST_ZIPBUILD_H
#define STG_TEST_ZIPBUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct zb_entry {
    const char *name;
    const void *data; /* bytes stored as they are (method is only a label) */
    size_t len;
    uint16_t method;      /* central method */
    uint64_t uncomp_size; /* 0: len */
    uint16_t flags;       /* central flags */
    /* local header overrides (NULL / 0 / false: same as central) */
    const char *local_name;
    bool local_method_set;
    uint16_t local_method;
    bool local_flags_set;
    uint16_t local_flags;
    bool local_csize_set;
    uint32_t local_csize;
    int share_local_with; /* >= 0: no local header of its own, reuse entry k's (overlap) */
    uint32_t crc;         /* written as is (never checked by the reader) */
} zb_entry;

typedef struct zb_opts {
    const void *prefix; /* bytes before the archive */
    size_t prefix_len;
    bool zip64; /* placeholders + ZIP64 extra fields + EOCD64 + locator */
    const char *comment;
    bool truncate_cd_size; /* declare a central directory one byte shorter */
} zb_opts;

typedef struct zb_buf {
    uint8_t *p;
    size_t len, cap;
} zb_buf;

static inline void zb_put(zb_buf *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) {
            cap *= 2;
        }
        b->p = realloc(b->p, cap);
        if (b->p == NULL) {
            abort();
        }
        b->cap = cap;
    }
    if (n > 0) {
        memcpy(b->p + b->len, src, n);
    }
    b->len += n;
}

static inline void zb_u16(zb_buf *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    zb_put(b, x, 2);
}

static inline void zb_u32(zb_buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    zb_put(b, x, 4);
}

static inline void zb_u64(zb_buf *b, uint64_t v)
{
    zb_u32(b, (uint32_t)v);
    zb_u32(b, (uint32_t)(v >> 32));
}

/* Builds the archive; *local_offsets (if not NULL, n entries) receive each entry's local
 * header offset. Returns a malloc'd buffer. */
static inline uint8_t *zb_build(const zb_entry *ents, size_t n, const zb_opts *o, size_t *out_len,
                                uint64_t *local_offsets)
{
    zb_buf b = {0};
    zb_opts none = {0};
    if (o == NULL) {
        o = &none;
    }
    zb_put(&b, o->prefix, o->prefix_len);
    uint64_t *offs = calloc(n ? n : 1, sizeof *offs);
    for (size_t i = 0; i < n; i++) {
        const zb_entry *e = &ents[i];
        if (e->share_local_with >= 0 && (size_t)e->share_local_with < i) {
            offs[i] = offs[e->share_local_with];
            continue;
        }
        offs[i] = b.len - o->prefix_len;
        const char *lname = e->local_name ? e->local_name : e->name;
        uint64_t usize = e->uncomp_size ? e->uncomp_size : e->len;
        zb_u32(&b, 0x04034b50u);
        zb_u16(&b, o->zip64 ? 45 : 20);
        zb_u16(&b, e->local_flags_set ? e->local_flags : e->flags);
        zb_u16(&b, e->local_method_set ? e->local_method : e->method);
        zb_u16(&b, 0);
        zb_u16(&b, 0x21);
        zb_u32(&b, e->crc);
        if (o->zip64) {
            zb_u32(&b, 0xffffffffu);
            zb_u32(&b, 0xffffffffu);
        } else {
            zb_u32(&b, e->local_csize_set ? e->local_csize : (uint32_t)e->len);
            zb_u32(&b, (uint32_t)usize);
        }
        zb_u16(&b, (uint16_t)strlen(lname));
        zb_u16(&b, o->zip64 ? 20 : 0);
        zb_put(&b, lname, strlen(lname));
        if (o->zip64) {
            zb_u16(&b, 1);
            zb_u16(&b, 16);
            zb_u64(&b, usize);
            zb_u64(&b, e->len);
        }
        zb_put(&b, e->data, e->len);
    }
    uint64_t cd_start = b.len - o->prefix_len;
    for (size_t i = 0; i < n; i++) {
        const zb_entry *e = &ents[i];
        uint64_t usize = e->uncomp_size ? e->uncomp_size : e->len;
        zb_u32(&b, 0x02014b50u);
        zb_u16(&b, 0x031e);
        zb_u16(&b, o->zip64 ? 45 : 20);
        zb_u16(&b, e->flags);
        zb_u16(&b, e->method);
        zb_u16(&b, 0);
        zb_u16(&b, 0x21);
        zb_u32(&b, e->crc);
        zb_u32(&b, o->zip64 ? 0xffffffffu : (uint32_t)e->len);
        zb_u32(&b, o->zip64 ? 0xffffffffu : (uint32_t)usize);
        zb_u16(&b, (uint16_t)strlen(e->name));
        zb_u16(&b, o->zip64 ? 28 : 0);
        zb_u16(&b, 0);
        zb_u16(&b, 0);
        zb_u16(&b, 0);
        zb_u32(&b, 0);
        zb_u32(&b, o->zip64 ? 0xffffffffu : (uint32_t)offs[i]);
        zb_put(&b, e->name, strlen(e->name));
        if (o->zip64) {
            zb_u16(&b, 1);
            zb_u16(&b, 24);
            zb_u64(&b, usize);
            zb_u64(&b, e->len);
            zb_u64(&b, offs[i]);
        }
    }
    uint64_t cd_size = b.len - o->prefix_len - cd_start;
    if (o->truncate_cd_size) {
        cd_size--;
    }
    if (o->zip64) {
        uint64_t rec = b.len - o->prefix_len;
        zb_u32(&b, 0x06064b50u);
        zb_u64(&b, 44);
        zb_u16(&b, 45);
        zb_u16(&b, 45);
        zb_u32(&b, 0);
        zb_u32(&b, 0);
        zb_u64(&b, n);
        zb_u64(&b, n);
        zb_u64(&b, cd_size);
        zb_u64(&b, cd_start);
        zb_u32(&b, 0x07064b50u);
        zb_u32(&b, 0);
        zb_u64(&b, rec);
        zb_u32(&b, 1);
    }
    const char *comment = o->comment ? o->comment : "";
    zb_u32(&b, 0x06054b50u);
    zb_u16(&b, 0);
    zb_u16(&b, 0);
    zb_u16(&b, o->zip64 ? 0xffff : (uint16_t)n);
    zb_u16(&b, o->zip64 ? 0xffff : (uint16_t)n);
    zb_u32(&b, o->zip64 ? 0xffffffffu : (uint32_t)cd_size);
    zb_u32(&b, o->zip64 ? 0xffffffffu : (uint32_t)cd_start);
    zb_u16(&b, (uint16_t)strlen(comment));
    zb_put(&b, comment, strlen(comment));
    if (local_offsets != NULL) {
        for (size_t i = 0; i < n; i++) {
            local_offsets[i] = offs[i] + o->prefix_len;
        }
    }
    free(offs);
    *out_len = b.len;
    return b.p;
}

/* From a ZIP64 archive zb_build made (no comment), one with two ZIP64 end records: the
 * locator still points at the original record (miniz's reading), and a second directory, a
 * copy of the first whose first name starts with `first_name_byte`, sits with its own record
 * right before the locator (zipfile's reading). *second_cd gets the copy's offset. */
static inline uint8_t *zb_two_zip64_directories(const uint8_t *z, size_t len,
                                                uint8_t first_name_byte, size_t *out_len,
                                                uint64_t *second_cd)
{
    size_t rec = len - 22 - 20 - 56;
    uint64_t cd_size = 0, cd_start = 0;
    for (int i = 7; i >= 0; i--) {
        cd_size = (cd_size << 8) | z[rec + 40 + (size_t)i];
        cd_start = (cd_start << 8) | z[rec + 48 + (size_t)i];
    }
    if (cd_size < 47 || cd_start > len || cd_size > len - cd_start) {
        abort(); /* not an archive zb_build made: no first name to change */
    }
    zb_buf b = {0};
    zb_put(&b, z, rec + 56);
    *second_cd = b.len;
    zb_put(&b, z + cd_start, (size_t)cd_size);
    b.p[*second_cd + 46] = first_name_byte;
    size_t rec2 = b.len;
    zb_put(&b, z + rec, 56);
    for (int i = 0; i < 8; i++) {
        b.p[rec2 + 48 + (size_t)i] = (uint8_t)(*second_cd >> (8 * i));
    }
    zb_put(&b, z + rec + 56, 20 + 22); /* the locator (-> rec) and the end record */
    *out_len = b.len;
    return b.p;
}

/* An entry with defaults (share_local_with = -1). */
static inline zb_entry zb_file(const char *name, const void *data, size_t len)
{
    zb_entry e;
    memset(&e, 0, sizeof e);
    e.name = name;
    e.data = data;
    e.len = len;
    e.share_local_with = -1;
    return e;
}

#endif
