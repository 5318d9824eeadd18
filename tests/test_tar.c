/* parser/tar on hand-built archives, header form by header form: ustar prefix + name, GNU long
 * names ('L'), pax `path` records ('x') and their malformed forms, global and long-link records
 * skipped, octal and base-256 numbers (negative, overflowing, stray characters), checksums and
 * magic, truncated blocks, missing padding, data past the end, positions past the end. Then the
 * same archives through the dispatcher: container_malformed at its offset, which entry types
 * are scanned (regular '0', NUL and '7'; directories and links are not), and what makes the
 * PyTorch 0.1 layout. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/tar.h"
#include "testutil.h"
#include "validator/check.h"
#include "validator/report.h"

#define BLK 512u

static const char EVIL[] = "\x80\x02"
                           "cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.";

/* ------------------------------------------------------------------------ tar builder */

typedef struct tb {
    uint8_t *p;
    size_t len;
} tb;

/* A header with name (at most 100 bytes, copied without NUL when it fills the field), an octal
 * size, a type and ustar ("ustar\0" "00") or GNU ("ustar  \0") magic. Checksum not yet set. */
static void hdr_make(uint8_t h[BLK], const char *name, uint64_t size, char type, int gnu)
{
    memset(h, 0, BLK);
    size_t n = strlen(name);
    memcpy(h, name, n < 100 ? n : 100);
    memcpy(h + 100, "0000644", 7);
    memcpy(h + 108, "0000000", 7);
    memcpy(h + 116, "0000000", 7);
    char sz[13];
    snprintf(sz, sizeof sz, "%011llo", (unsigned long long)size);
    memcpy(h + 124, sz, 11);
    memcpy(h + 136, "00000000000", 11);
    h[156] = (uint8_t)type;
    if (gnu) {
        memcpy(h + 257, "ustar  ", 8);
    } else {
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
    }
}

/* Writes the checksum the way tar does: six octal digits, NUL, space. */
static void hdr_sum(uint8_t h[BLK])
{
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < BLK; i++) {
        sum += h[i];
    }
    char s[8];
    snprintf(s, sizeof s, "%06o", sum);
    memcpy(h + 148, s, 6);
    h[154] = 0;
    h[155] = ' ';
}

static void tb_put(tb *t, const void *src, size_t n)
{
    t->p = realloc(t->p, t->len + n);
    ck_assert_ptr_nonnull(t->p);
    if (n > 0) {
        memcpy(t->p + t->len, src, n);
    }
    t->len += n;
}

static void tb_zero(tb *t, size_t n)
{
    t->p = realloc(t->p, t->len + n);
    ck_assert_ptr_nonnull(t->p);
    memset(t->p + t->len, 0, n);
    t->len += n;
}

/* Appends a header (checksummed here) and its data padded to whole blocks; returns the
 * header's offset. */
static size_t tb_add_hdr(tb *t, uint8_t h[BLK], const void *data, size_t n)
{
    hdr_sum(h);
    size_t at = t->len;
    tb_put(t, h, BLK);
    tb_put(t, data, n);
    tb_zero(t, (BLK - n % BLK) % BLK);
    return at;
}

static size_t tb_add(tb *t, const char *name, char type, const void *data, size_t n)
{
    uint8_t h[BLK];
    hdr_make(h, name, n, type, 1);
    return tb_add_hdr(t, h, data, n);
}

static void tb_end(tb *t)
{
    tb_zero(t, 2 * BLK);
}

/* -------------------------------------------------------------------- reader helpers */

typedef struct rd {
    stg_tar t;
    stg_tar_entry *e;
    uint64_t err;
    const char *why;
} rd;

static rd *rd_new(const tb *t)
{
    rd *r = calloc(1, sizeof *r);
    r->e = malloc(sizeof *r->e);
    stg_tar_init(&r->t, t->p, t->len);
    return r;
}

static stg_tar_result rd_next(rd *r)
{
    r->err = 12345;
    r->why = NULL;
    return stg_tar_next(&r->t, r->e, &r->err, &r->why);
}

static void rd_free(rd *r)
{
    free(r->e);
    free(r);
}

static void expect_malformed(const tb *t, uint64_t at, const char *why)
{
    rd *r = rd_new(t);
    stg_tar_result res;
    while ((res = rd_next(r)) == STG_TARR_OK) {
    }
    ck_assert_int_eq(res, STG_TARR_MALFORMED);
    ck_assert_uint_eq(r->err, at);
    ck_assert_ptr_nonnull(r->why);
    ck_assert_str_eq(r->why, why);
    rd_free(r);
}

/* -------------------------------------------------------------------- header forms */

START_TEST(test_ustar_prefix_and_full_fields)
{
    /* ustar: prefix "/" name; a 155-byte prefix and a 100-byte name fill their fields with no
     * NUL, and the joined name is both whole. */
    char prefix[156], name[101];
    memset(prefix, 'p', 155);
    prefix[155] = '\0';
    memset(name, 'n', 100);
    name[100] = '\0';
    tb t = {0};
    uint8_t h[BLK];
    hdr_make(h, name, 3, '0', 0);
    memcpy(h + 345, prefix, 155);
    size_t at = tb_add_hdr(&t, h, "abc", 3);
    /* ustar with an empty prefix: the name alone */
    hdr_make(h, "plain.bin", 2, '0', 0);
    size_t at2 = tb_add_hdr(&t, h, "xy", 2);
    /* GNU magic: the prefix area holds other fields and is never joined */
    hdr_make(h, "gnu.bin", 1, '0', 1);
    memcpy(h + 345, "atime", 5);
    tb_add_hdr(&t, h, "z", 1);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->name_len, 155 + 1 + 100);
    ck_assert(memcmp(r->e->name, prefix, 155) == 0);
    ck_assert_int_eq(r->e->name[155], '/');
    ck_assert(memcmp(r->e->name + 156, name, 100) == 0);
    ck_assert_uint_eq(r->e->header_offset, at);
    ck_assert_uint_eq(r->e->data_offset, at + BLK);
    ck_assert_uint_eq(r->e->size, 3);
    ck_assert_int_eq(r->e->type, '0');
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_str_eq(r->e->name, "plain.bin");
    ck_assert_uint_eq(r->e->header_offset, at2);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_str_eq(r->e->name, "gnu.bin");
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_gnu_long_name)
{
    /* 'L' record: its data (NUL-terminated, as GNU tar writes it) names the next member; the
     * entry's header_offset is the member's own header. */
    char longname[301];
    memset(longname, 'd', 300);
    memcpy(longname + 290, "/model.pkl", 10);
    longname[300] = '\0';
    tb t = {0};
    size_t l_at = tb_add(&t, "././@LongLink", 'L', longname, 301);
    size_t m_at = tb_add(&t, "truncated-name", '0', "DATA", 4);
    tb_end(&t);
    ck_assert_uint_eq(l_at, 0);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->name_len, 300);
    ck_assert_str_eq(r->e->name, longname);
    ck_assert_uint_eq(r->e->header_offset, m_at);
    ck_assert_uint_eq(m_at, 2 * BLK);
    ck_assert_uint_eq(r->e->data_offset, 3 * BLK);
    ck_assert(memcmp(t.p + r->e->data_offset, "DATA", 4) == 0);
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_gnu_long_name_errors)
{
    /* Longer than STG_TAR_NAME_MAX (no NUL in it): malformed at the 'L' header. */
    size_t n = STG_TAR_NAME_MAX + 1;
    char *big = malloc(n);
    memset(big, 'x', n);
    tb t = {0};
    tb_add(&t, "first", '0', "1", 1);
    size_t l_at = tb_add(&t, "././@LongLink", 'L', big, n);
    tb_add(&t, "m", '0', "2", 1);
    tb_end(&t);
    expect_malformed(&t, l_at, "tar long name too long");
    free(t.p);
    /* Exactly STG_TAR_NAME_MAX bytes fits. */
    memset(&t, 0, sizeof t);
    tb_add(&t, "././@LongLink", 'L', big, STG_TAR_NAME_MAX);
    tb_add(&t, "m", '0', "2", 1);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->name_len, STG_TAR_NAME_MAX);
    ck_assert_int_eq(r->e->name[STG_TAR_NAME_MAX], '\0');
    rd_free(r);
    free(t.p);
    /* A long name that is the last thing in the buffer names nothing: malformed where the
     * member's header should be. */
    memset(&t, 0, sizeof t);
    tb_add(&t, "././@LongLink", 'L', "orphan", 7);
    expect_malformed(&t, 2 * BLK, "long name without a member");
    free(t.p);
    free(big);
}
END_TEST

START_TEST(test_pax_path)
{
    /* pax 'x' record with a path: it names the next member. Records before and after it (and
     * one whose key is shorter than "path=") are read past. */
    static const char pax[] = "20 mtime=1700000000\n"
                              "6 a=b\n"
                              "26 path=dir/renamed.bin\xff\xff\n"
                              "12 uid=1000\n";
    tb t = {0};
    tb_add(&t, "PaxHeaders/x", 'x', pax, sizeof pax - 1);
    size_t m_at = tb_add(&t, "short", '0', "payload", 7);
    /* a pax record without a path: the member keeps its header name */
    static const char nopath[] = "12 uid=1000\n";
    tb_add(&t, "PaxHeaders/y", 'x', nopath, sizeof nopath - 1);
    tb_add(&t, "own-name", '0', "q", 1);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->name_len, 17);
    ck_assert(memcmp(r->e->name, "dir/renamed.bin\xff\xff", 17) == 0);
    ck_assert_uint_eq(r->e->header_offset, m_at);
    ck_assert_uint_eq(r->e->size, 7);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_str_eq(r->e->name, "own-name");
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    free(t.p);
    /* A GNU long name then a pax record: a pax path replaces the long name, a pax record
     * without one keeps it. */
    for (int with_path = 0; with_path <= 1; with_path++) {
        memset(&t, 0, sizeof t);
        tb_add(&t, "././@LongLink", 'L', "from/gnu/long-name.bin", 23);
        tb_add(&t, "PaxHeaders/x", 'x', with_path ? "17 path=from/pax\n" : nopath,
               with_path ? 17 : sizeof nopath - 1);
        tb_add(&t, "header-name", '0', "q", 1);
        tb_end(&t);
        r = rd_new(&t);
        ck_assert_int_eq(rd_next(r), STG_TARR_OK);
        ck_assert_str_eq(r->e->name, with_path ? "from/pax" : "from/gnu/long-name.bin");
        ck_assert_uint_eq(r->e->header_offset, 4 * BLK);
        rd_free(r);
        free(t.p);
    }
}
END_TEST

/* Each malformed pax body: the error is at the pax data (the block after its header). */
static const struct {
    const char *what;
    const char *body;
} bad_pax[] = {
    {"digits to the end", "123"},
    {"no space after the length", "12x uid=1000\n"},
    {"zero length", "0 \n"},
    {"length past the body", "99 path=a\n"},
    {"record not ending in newline", "11 path=ab!"},
    {"length with too many digits", "99999999999 path=a\n"},
    {"second record broken", "10 path=a\n5 x\n"},
};

START_TEST(test_pax_malformed)
{
    tb t = {0};
    tb_add(&t, "ok", '0', "1", 1);
    size_t x_at = tb_add(&t, "PaxHeaders/x", 'x', bad_pax[_i].body, strlen(bad_pax[_i].body));
    tb_add(&t, "m", '0', "2", 1);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_int_eq(rd_next(r), STG_TARR_MALFORMED);
    ck_assert_msg(r->err == x_at + BLK, "%s: error at %llu", bad_pax[_i].what,
                  (unsigned long long)r->err);
    ck_assert_str_eq(r->why, "pax extended header invalid");
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_pax_path_too_long)
{
    size_t n = 5 + STG_TAR_NAME_MAX + 1;
    char *body = malloc(n + 16);
    size_t k = (size_t)snprintf(body, 16, "%zu ", n + 6);
    ck_assert_uint_eq(k, 5);
    memcpy(body + k, "path=", 5);
    memset(body + k + 5, 'y', STG_TAR_NAME_MAX + 1);
    body[k + n] = '\n';
    tb t = {0};
    size_t x_at = tb_add(&t, "PaxHeaders/x", 'x', body, k + n + 1);
    tb_add(&t, "m", '0', "2", 1);
    tb_end(&t);
    expect_malformed(&t, x_at + BLK, "pax extended header invalid");
    free(t.p);
    free(body);
}
END_TEST

START_TEST(test_global_and_longlink_skipped)
{
    /* 'g' (pax global) and 'K' (GNU long link target) records describe no member. */
    tb t = {0};
    tb_add(&t, "PaxHeaders/global", 'g', "15 comment=abc\n", 15);
    tb_add(&t, "././@LongLink", 'K', "target", 7);
    size_t m_at = tb_add(&t, "link", '2', NULL, 0);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_str_eq(r->e->name, "link");
    ck_assert_int_eq(r->e->type, '2');
    ck_assert_uint_eq(r->e->header_offset, m_at);
    ck_assert_uint_eq(m_at, 4 * BLK);
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    free(t.p);
}
END_TEST

/* ------------------------------------------------------------------------- numbers */

static tb one_member_with_size(const uint8_t size_field[12], size_t data_len)
{
    tb t = {0};
    uint8_t h[BLK];
    hdr_make(h, "m", 0, '0', 1);
    memcpy(h + 124, size_field, 12);
    uint8_t *data = calloc(1, data_len + 1);
    memset(data, 'D', data_len);
    tb_add_hdr(&t, h, data, data_len);
    free(data);
    tb_end(&t);
    return t;
}

START_TEST(test_size_forms)
{
    /* Octal with leading spaces and a trailing space: 0o1750 = 1000. */
    static const uint8_t oct[12] = {' ', ' ', ' ', ' ', ' ', ' ', '1', '7', '5', '0', ' ', 0};
    tb t = one_member_with_size(oct, 1000);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->size, 1000);
    ck_assert_uint_eq(r->t.pos, BLK + 1024); /* data padded to whole blocks */
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    free(t.p);
    /* Base-256 (GNU): high bit set, the rest big-endian: 0x0203 = 515. */
    static const uint8_t b256[12] = {0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x03};
    t = one_member_with_size(b256, 515);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->size, 515);
    rd_free(r);
    free(t.p);
    /* An all-blank field is size 0. */
    static const uint8_t blank[12] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
    t = one_member_with_size(blank, 0);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->size, 0);
    rd_free(r);
    free(t.p);
}
END_TEST

static const struct {
    const char *what;
    uint8_t field[12];
} bad_sizes[] = {
    {"base-256 negative", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
    {"base-256 past 64 bits", {0x80, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"octal digit 8", {'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '8', 0}},
    {"text after the digits", {'0', '0', '0', '0', '0', '0', '0', '0', '1', ' ', 'x', 0}},
};

START_TEST(test_size_invalid)
{
    tb t = one_member_with_size(bad_sizes[_i].field, 0);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_MALFORMED);
    ck_assert_msg(r->err == 124, "%s: at %llu", bad_sizes[_i].what, (unsigned long long)r->err);
    ck_assert_str_eq(r->why, "tar size field invalid");
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_base256_at_64_bits)
{
    /* The largest base-256 value that fits 64 bits (eight 0xff bytes last) parses; it is then
     * refused as data past the end, not as a bad number. */
    static const uint8_t max64[12] = {0x80, 0,    0,    0,    0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    tb t = one_member_with_size(max64, 0);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_MALFORMED);
    ck_assert_uint_eq(r->err, 0);
    ck_assert_str_eq(r->why, "tar member data runs past the end");
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_header_ok)
{
    uint8_t h[BLK];
    hdr_make(h, "a", 1, '0', 1);
    hdr_sum(h);
    ck_assert(stg_tar_header_ok(h, BLK));
    ck_assert(!stg_tar_header_ok(h, BLK - 1)); /* not a whole block */
    /* wrong magic */
    h[257] = 'U';
    ck_assert(!stg_tar_header_ok(h, BLK));
    h[257] = 'u';
    ck_assert(stg_tar_header_ok(h, BLK));
    /* a checksum field that is not a number */
    uint8_t save = h[150];
    h[150] = 'z';
    ck_assert(!stg_tar_header_ok(h, BLK));
    h[150] = save;
    /* a checksum off by one */
    h[153] = (uint8_t)(h[153] == '7' ? '6' : h[153] + 1);
    ck_assert(!stg_tar_header_ok(h, BLK));
}
END_TEST

/* ------------------------------------------------------------------------ framing */

START_TEST(test_truncation_and_padding)
{
    /* The last member's data padding may be missing: the member is whole, then the end. */
    tb t = {0};
    tb_add(&t, "a", '0', "12345", 5);
    t.len = BLK + 5;
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_uint_eq(r->e->size, 5);
    ck_assert_uint_eq(r->t.pos, BLK + 5);
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    /* A partial block of zeros after the last member is an end, not an error... */
    tb_zero(&t, BLK - 5); /* padding */
    tb_zero(&t, 100);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_TARR_OK);
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    /* ...a partial block with anything else is a truncated header at that offset. */
    t.p[2 * BLK + 50] = 'x';
    expect_malformed(&t, 2 * BLK, "tar header truncated");
    free(t.p);
    /* Data declared past the end: malformed at the header. */
    memset(&t, 0, sizeof t);
    tb_add(&t, "a", '0', "12345", 5);
    size_t b_at = tb_add(&t, "b", '0', "67890", 5);
    t.len = b_at + BLK + 4;
    expect_malformed(&t, b_at, "tar member data runs past the end");
    free(t.p);
}
END_TEST

START_TEST(test_position_past_the_end)
{
    /* The reader's position is caller-visible state: one past the buffer is refused (at that
     * position), one exactly at the end is the end. */
    tb t = {0};
    tb_add(&t, "a", '0', "1", 1);
    rd *r = rd_new(&t);
    r->t.pos = t.len + BLK;
    ck_assert_int_eq(rd_next(r), STG_TARR_MALFORMED);
    ck_assert_uint_eq(r->err, t.len + BLK);
    ck_assert_str_eq(r->why, "tar position past the end");
    r->t.pos = t.len;
    ck_assert_int_eq(rd_next(r), STG_TARR_END);
    rd_free(r);
    free(t.p);
}
END_TEST

/* ------------------------------------------------------------- through the dispatcher */

static stg_report *check(const void *buf, size_t len, const char *name)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx = {&lim, NULL, r, 0, NULL, 0, 0};
    stg_check_buffer(buf, len, name, &ctx);
    stg_report_finish(r);
    return r;
}

/* The k-th finding (0-based) with code. */
static const stg_finding *nth(const stg_report *r, stg_code code, size_t k)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->code == code && k-- == 0) {
            return f;
        }
    }
    ck_abort_msg("no %s #%zu in %s", stg_code_name(code), k, tu_describe(r));
    return NULL;
}

static const stg_finding *first(const stg_report *r, stg_code code)
{
    return nth(r, code, 0);
}

START_TEST(test_entry_types_scanned)
{
    /* Regular files ('0', NUL, '7' contiguous) are scanned; a directory, a symbolic link and a
     * FIFO are not, whatever their names or data say. */
    tb t = {0};
    tb_add(&t, "dir/", '5', NULL, 0);
    size_t c_at = tb_add(&t, "dir/contig.bin", '7', EVIL, sizeof EVIL - 1);
    size_t n_at = tb_add(&t, "dir/old.bin", '\0', EVIL, sizeof EVIL - 1);
    tb_add(&t, "dir/link.pkl", '2', EVIL, sizeof EVIL - 1);
    tb_add(&t, "dir/fifo.pkl", '6', EVIL, sizeof EVIL - 1);
    tb_end(&t);
    stg_report *r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TAR);
    ck_assert_msg(tu_count(r, STG_PICKLE_GLOBAL_DANGEROUS) == 2, "%s", tu_describe(r));
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "dir/contig.bin");
    ck_assert_uint_eq(f->member_offset, c_at);
    f = nth(r, STG_PICKLE_GLOBAL_DANGEROUS, 1);
    ck_assert_str_eq(f->member, "dir/old.bin");
    ck_assert_uint_eq(f->member_offset, n_at);
    ck_assert_int_eq(tu_find(r, STG_CONTAINER_MALFORMED), -1);
    stg_report_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_torch_layout_needs_regular_members)
{
    /* "pickle" and "storages" as directories do not make the PyTorch 0.1 layout: a plain tar,
     * whose regular member named pickle is scanned as archive content. */
    static const char BENIGN[] = "\x80\x02"
                                 "ccollections\nOrderedDict\nq\x00)Rq\x01.";
    tb t = {0};
    tb_add(&t, "storages", '5', NULL, 0);
    tb_add(&t, "pickle", '0', BENIGN, sizeof BENIGN - 1);
    tb_end(&t);
    stg_report *r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TAR);
    stg_report_free(r);
    free(t.p);
    memset(&t, 0, sizeof t);
    tb_add(&t, "pickle", '5', NULL, 0);
    tb_add(&t, "storages", '0', "x", 1);
    tb_end(&t);
    r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TAR);
    stg_report_free(r);
    free(t.p);
    /* both regular: the layout */
    memset(&t, 0, sizeof t);
    tb_add(&t, "pickle", '0', BENIGN, sizeof BENIGN - 1);
    tb_add(&t, "storages", '0', "\x80\x02K\x00.", 5);
    tb_end(&t);
    r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_TAR);
    ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_WARN, "%s", tu_describe(r));
    stg_report_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_torch01_storage_record_cut)
{
    /* A storages member whose record after an argument pickle has fewer than the 8 bytes of an
     * element count: the rest is walked as pickles and reported at its offset. */
    static const char BENIGN[] = "\x80\x02"
                                 "ccollections\nOrderedDict\nq\x00)Rq\x01.";
    static const char storages[] = "\x80\x02K\x01." /* count: 1 */
                                   "\x80\x02X\x01\x00\x00\x00"
                                   "a."                /* its argument pickle */
                                   "\x01\x02\x03\x04"; /* 4 of 8 count bytes */
    tb t = {0};
    tb_add(&t, "pickle", '0', BENIGN, sizeof BENIGN - 1);
    size_t s_at = tb_add(&t, "storages", '0', storages, sizeof storages - 1);
    tb_end(&t);
    stg_report *r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_TAR);
    const stg_finding *f = first(r, STG_PICKLE_MALFORMED);
    ck_assert_str_eq(f->member, "storages");
    ck_assert_uint_eq(f->member_offset, s_at);
    ck_assert_uint_eq(f->offset, 5 + 9);
    stg_report_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_container_malformed_offsets)
{
    /* What the reader refuses is container_malformed at the reader's offset; members before it
     * are still scanned. */
    tb t = {0};
    size_t e_at = tb_add(&t, "first.bin", '0', EVIL, sizeof EVIL - 1);
    size_t x_at = tb_add(&t, "PaxHeaders/x", 'x', "5 x\n", 4);
    tb_add(&t, "m", '0', "2", 1);
    tb_end(&t);
    stg_report *r = check(t.p, t.len, NULL);
    const stg_finding *f = first(r, STG_CONTAINER_MALFORMED);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, x_at + BLK);
    ck_assert_ptr_null(f->member);
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "first.bin");
    ck_assert_uint_eq(f->member_offset, e_at);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(t.p);
    /* a size field that is no number */
    memset(&t, 0, sizeof t);
    tb_add(&t, "first.bin", '0', "ok", 2);
    uint8_t h[BLK];
    hdr_make(h, "second", 0, '0', 1);
    memcpy(h + 124, "0000000000z", 11);
    size_t s_at = tb_add_hdr(&t, h, NULL, 0);
    tb_end(&t);
    r = check(t.p, t.len, NULL);
    f = first(r, STG_CONTAINER_MALFORMED);
    ck_assert_uint_eq(f->offset, s_at + 124);
    stg_report_free(r);
    free(t.p);
}
END_TEST

static Suite *tar_suite(void)
{
    Suite *s = suite_create("tar");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, test_ustar_prefix_and_full_fields);
    tcase_add_test(tc, test_gnu_long_name);
    tcase_add_test(tc, test_gnu_long_name_errors);
    tcase_add_test(tc, test_pax_path);
    tcase_add_loop_test(tc, test_pax_malformed, 0, (int)(sizeof bad_pax / sizeof bad_pax[0]));
    tcase_add_test(tc, test_pax_path_too_long);
    tcase_add_test(tc, test_global_and_longlink_skipped);
    tcase_add_test(tc, test_size_forms);
    tcase_add_loop_test(tc, test_size_invalid, 0, (int)(sizeof bad_sizes / sizeof bad_sizes[0]));
    tcase_add_test(tc, test_base256_at_64_bits);
    tcase_add_test(tc, test_header_ok);
    tcase_add_test(tc, test_truncation_and_padding);
    tcase_add_test(tc, test_position_past_the_end);
    suite_add_tcase(s, tc);
    tc = tcase_create("dispatcher");
    tcase_add_test(tc, test_entry_types_scanned);
    tcase_add_test(tc, test_torch_layout_needs_regular_members);
    tcase_add_test(tc, test_torch01_storage_record_cut);
    tcase_add_test(tc, test_container_malformed_offsets);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tar_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
