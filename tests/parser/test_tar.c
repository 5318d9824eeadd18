/* parser/tar against CPython 3.11's tarfile rules, one rule per test with a trigger and a near
 * miss: which headers frombuf() accepts (checksum unsigned or signed, no magic, every number
 * field through nti()), first header versus later ones (does not open / ends the list), unknown
 * type flags as regular files, links resolved as _find_link_target(), the last member of a name,
 * pax records (path, size, GNU.sparse.name, globals, framing), GNU long names and links, V7
 * directories and ustar prefixes, sizes that tarfile reads but stguard refuses, os.path.normpath.
 * Then through the dispatcher: what torch.load reads (by name, through links), tar_link_external,
 * container_malformed at its offset, and polyglot_tar. tests/differential/script_tar_differential.sh checks
 * the same reader against the real tarfile on generated archives. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/tar.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "dispatch/check.h"
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

static stg_parse_status rd_next(rd *r)
{
    stg_parse_detail d = {.offset = 12345};
    stg_parse_status s = stg_tar_next(&r->t, r->e, &d);
    r->err = d.offset;
    r->why = d.what;
    return s;
}

static void rd_free(rd *r)
{
    free(r->e);
    free(r);
}

/* -------------------------------------------------------------------- header rules */

/* A pax header carrying records (text already framed). */
static size_t tb_pax(tb *t, char type, const char *records)
{
    return tb_add(t, "././@PaxHeader", type, records, strlen(records));
}

static stg_tar_list *list_of(const tb *t)
{
    stg_tar_list *l = calloc(1, sizeof *l);
    ck_assert(stg_tar_list_build(l, t->p, t->len));
    return l;
}

static void list_free(stg_tar_list *l)
{
    stg_tar_list_free(l);
    free(l);
}

START_TEST(test_header_checksum_and_magic)
{
    uint8_t h[BLK];
    hdr_make(h, "a", 1, '0', 1);
    hdr_sum(h);
    ck_assert(stg_tar_header_ok(h, BLK));
    ck_assert(!stg_tar_header_ok(h, BLK - 1)); /* not a whole block */
    /* no magic at all (a V7 header): tarfile does not look at the magic */
    memset(h + 257, 0, 8);
    hdr_sum(h);
    ck_assert(stg_tar_header_ok(h, BLK));
    /* a checksum off by one: near miss */
    h[153] = (uint8_t)(h[153] == '7' ? '6' : h[153] + 1);
    ck_assert(!stg_tar_header_ok(h, BLK));
    /* bytes with the high bit set: a checksum of the signed sum is accepted too */
    hdr_make(h, "a", 1, '0', 1);
    memset(h + 265, 0xf0, 32);
    memset(h + 148, ' ', 8);
    int sum = 0;
    for (size_t i = 0; i < BLK; i++) {
        sum += (int)(int8_t)h[i];
    }
    char s[9];
    snprintf(s, sizeof s, "%06o", (unsigned)sum);
    memcpy(h + 148, s, 6);
    h[154] = 0;
    ck_assert(stg_tar_header_ok(h, BLK));
    h[265] = 0xf1; /* neither sum now */
    ck_assert(!stg_tar_header_ok(h, BLK));
    /* a base-256 checksum field (0x80, then big-endian) */
    hdr_make(h, "a", 1, '0', 1);
    memset(h + 148, ' ', 8);
    unsigned usum = 0;
    for (size_t i = 0; i < BLK; i++) {
        usum += h[i];
    }
    memset(h + 148, 0, 8);
    h[148] = 0x80;
    h[154] = (uint8_t)(usum >> 8);
    h[155] = (uint8_t)usum;
    ck_assert(stg_tar_header_ok(h, BLK));
    /* a block of zeros is the end, not a header */
    memset(h, 0, BLK);
    ck_assert(!stg_tar_header_ok(h, BLK));
}
END_TEST

static const struct {
    unsigned at, n;
    const char *text;
    bool ok;
} number_fields[] = {
    {100, 8, "0o644", true},     /* int(s, 8) takes the 0o prefix */
    {100, 8, "0o_6_4", true},    /* and single underscores */
    {100, 8, " +17 ", true},     /* a sign, spaces around */
    {100, 8, "\t17\v", true},    /* any Python whitespace */
    {100, 8, "-17", true},       /* negative: a number all the same */
    {100, 8, "", true},          /* empty: 0 */
    {100, 8, "9", false},        /* not octal */
    {100, 8, "1__7", false},     /* two underscores */
    {100, 8, "17_", false},      /* trailing underscore */
    {100, 8, "0x17", false},     /* no hex */
    {100, 8, "+", false},        /* a sign alone */
    {108, 8, "\xc3\xa9", false}, /* uid: not ASCII */
    {116, 8, "1 7", false},      /* gid: a space inside */
    {136, 12, "z", false},       /* mtime */
    {329, 8, "zz", false},       /* devmajor */
    {337, 8, "8", false},        /* devminor */
};

START_TEST(test_number_fields)
{
    /* Every number field goes through nti(): one that int(s, 8) rejects makes the header
     * invalid; the forms it accepts are fine. */
    uint8_t h[BLK];
    hdr_make(h, "a", 0, '0', 1);
    memset(h + number_fields[_i].at, 0, number_fields[_i].n);
    memcpy(h + number_fields[_i].at, number_fields[_i].text, strlen(number_fields[_i].text));
    hdr_sum(h);
    ck_assert_int_eq(stg_tar_header_ok(h, BLK), number_fields[_i].ok);
    /* a base-256 field (0x80 first) is always a number */
    memset(h + number_fields[_i].at, 0, number_fields[_i].n);
    h[number_fields[_i].at] = 0x80;
    h[number_fields[_i].at + number_fields[_i].n - 1] = 7;
    hdr_sum(h);
    ck_assert(stg_tar_header_ok(h, BLK));
    /* any other byte with the high bit first is not ASCII: invalid */
    h[number_fields[_i].at] = 0x81;
    hdr_sum(h);
    ck_assert(!stg_tar_header_ok(h, BLK));
}
END_TEST

START_TEST(test_first_header_versus_later)
{
    /* A bad first header: tarfile does not open the file (malformed, started false). The same
     * header after a good member ends the list; the reader says where. */
    tb t = {0};
    uint8_t h[BLK];
    hdr_make(h, "pickle", 1, '0', 1);
    hdr_sum(h);
    h[150] ^= 1;
    tb_put(&t, h, BLK);
    tb_zero(&t, BLK);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(r->err, 0);
    ck_assert_str_eq(r->why, "tar header checksum invalid");
    ck_assert(!r->t.started);
    ck_assert(!stg_tar_opens(t.p, t.len));
    rd_free(r);
    free(t.p);
    memset(&t, 0, sizeof t);
    tb_add(&t, "a", '0', "1", 1);
    size_t bad_at = t.len;
    tb_put(&t, h, BLK);
    tb_zero(&t, BLK);
    tb_end(&t);
    ck_assert(stg_tar_opens(t.p, t.len));
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_END);
    ck_assert_uint_eq(r->t.stop_offset, bad_at);
    ck_assert_str_eq(r->t.stop_why, "tar header checksum invalid");
    rd_free(r);
    /* a truncated header after the first: the end too, and said so */
    t.len = bad_at + 100;
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_END);
    ck_assert_str_eq(r->t.stop_why, "tar header truncated");
    rd_free(r);
    /* exactly at the end: a clean end (near miss) */
    t.len = bad_at;
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_END);
    ck_assert_ptr_null(r->t.stop_why);
    rd_free(r);
    free(t.p);
    /* zeros first: tarfile opens an empty archive; stg_tar_opens says no (nothing to read) */
    memset(&t, 0, sizeof t);
    tb_end(&t);
    tb_add(&t, "pickle", '0', EVIL, sizeof EVIL - 1);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_END);
    ck_assert_ptr_null(r->t.stop_why);
    ck_assert(!stg_tar_opens(t.p, t.len));
    rd_free(r);
    /* nothing at all, or less than a block: not a tar */
    ck_assert(!stg_tar_opens(t.p, 0));
    ck_assert(!stg_tar_opens(t.p + 2 * BLK, 300));
    free(t.p);
}
END_TEST

START_TEST(test_unknown_types_are_regular)
{
    /* An unknown type flag: tarfile skips its data as a regular file's and extractfile() reads
     * it; a directory's size is not skipped (its "data" is read as the next header). */
    tb t = {0};
    size_t a_at = tb_add(&t, "pickle", 'A', EVIL, sizeof EVIL - 1);
    size_t b_at = tb_add(&t, "b", '0', "1", 1);
    tb_end(&t);
    stg_tar_list *l = list_of(&t);
    ck_assert_uint_eq(l->count, 2);
    ck_assert_int_eq(l->m[0].type, 'A');
    ck_assert_uint_eq(l->m[0].header_offset, a_at);
    ck_assert_uint_eq(l->m[0].data_offset, a_at + BLK);
    ck_assert_uint_eq(l->m[1].header_offset, b_at);
    ck_assert(stg_tar_type_has_data('A') && stg_tar_type_has_data('\x80'));
    ck_assert(!stg_tar_type_has_data('5') && !stg_tar_type_has_data('2'));
    size_t target = 0;
    unsigned hops = 0;
    bool sym = false;
    ck_assert_int_eq(stg_tar_list_resolve(l, 0, &target, &hops, &sym), STG_TARRES_DATA);
    ck_assert_uint_eq(target, 0);
    list_free(l);
    free(t.p);
    memset(&t, 0, sizeof t);
    uint8_t h[BLK];
    hdr_make(h, "d", BLK, '5', 1);
    tb_add_hdr(&t, h, NULL, 0);
    size_t in_at = tb_add(&t, "inside", '0', "1", 1);
    tb_end(&t);
    l = list_of(&t);
    ck_assert_uint_eq(l->count, 2);
    ck_assert_uint_eq(l->m[1].header_offset, in_at);
    ck_assert_uint_eq(in_at, BLK);
    ck_assert_int_eq(stg_tar_list_resolve(l, 0, &target, &hops, &sym), STG_TARRES_NO_DATA);
    list_free(l);
    free(t.p);
}
END_TEST

START_TEST(test_links_resolved)
{
    static const struct {
        const char *name, *link;
        char type;
    } ms[] = {
        {"d/x", NULL, '0'},      {"hard", "./d//x", '1'}, {"d/rel", "x", '2'},
        {"early", "later", '1'}, {"later", NULL, '0'},    {"loop", "loop", '2'},
        {"dir", NULL, '5'},      {"todir", "dir/", '2'},  {"tolater", "later", '2'},
    };
    tb t = {0};
    for (size_t i = 0; i < 9; i++) {
        uint8_t h[BLK];
        bool data = ms[i].type == '0';
        hdr_make(h, ms[i].name, data ? sizeof EVIL - 1 : 0, ms[i].type, 1);
        if (ms[i].link != NULL) {
            memcpy(h + 157, ms[i].link, strlen(ms[i].link));
        }
        tb_add_hdr(&t, h, data ? EVIL : NULL, data ? sizeof EVIL - 1 : 0);
    }
    tb_end(&t);
    stg_tar_list *l = list_of(&t);
    ck_assert_uint_eq(l->count, 9);
    size_t target = 99;
    unsigned hops = 0;
    bool sym = false;
    /* hard link: earlier members, names normalised */
    ck_assert_int_eq(stg_tar_list_resolve(l, 1, &target, &hops, &sym), STG_TARRES_DATA);
    ck_assert_uint_eq(target, 0);
    ck_assert(!sym);
    ck_assert_uint_eq(hops, 1);
    /* symbolic: relative to the link's directory */
    ck_assert_int_eq(stg_tar_list_resolve(l, 2, &target, &hops, &sym), STG_TARRES_DATA);
    ck_assert_uint_eq(target, 0);
    ck_assert(sym);
    /* a hard link to a later member: KeyError (near miss of the symbolic one below) */
    ck_assert_int_eq(stg_tar_list_resolve(l, 3, &target, &hops, &sym), STG_TARRES_MISSING);
    ck_assert_int_eq(stg_tar_list_resolve(l, 8, &target, &hops, &sym), STG_TARRES_DATA);
    ck_assert_uint_eq(target, 4);
    /* a link to itself never ends */
    ck_assert_int_eq(stg_tar_list_resolve(l, 5, &target, &hops, &sym), STG_TARRES_LOOP);
    ck_assert_uint_eq(hops, STG_TAR_LINK_HOPS);
    /* to a directory: no data */
    ck_assert_int_eq(stg_tar_list_resolve(l, 7, &target, &hops, &sym), STG_TARRES_NO_DATA);
    list_free(l);
    free(t.p);
}
END_TEST

START_TEST(test_last_member_of_a_name)
{
    tb t = {0};
    tb_add(&t, "pickle", '0', "first", 5);
    size_t last = tb_add(&t, "pickle", '0', EVIL, sizeof EVIL - 1);
    tb_add(&t, "pickle/", '5', NULL, 0); /* a directory: "pickle" once its '/' is stripped */
    tb_add(&t, "storages", '0', "s", 1);
    tb_end(&t);
    stg_tar_list *l = list_of(&t);
    ck_assert_uint_eq(l->count, 4);
    ck_assert_str_eq(stg_tar_member_name(l, 2), "pickle");
    ck_assert_uint_eq(stg_tar_list_find(l, "pickle", 6), 2);
    ck_assert_uint_eq(stg_tar_list_find(l, "storages", 8), 3);
    ck_assert_uint_eq(stg_tar_list_find(l, "tensors", 7), STG_TAR_NONE);
    ck_assert_uint_eq(l->m[1].header_offset, last);
    list_free(l);
    free(t.p);
}
END_TEST

START_TEST(test_pax_records)
{
    /* path (trailing '/' stripped), offset = the pax header's, data after the member header */
    tb t = {0};
    size_t x_at = tb_pax(&t, 'x', "18 path=pickle///\n");
    size_t m_at = tb_add(&t, "other", '0', EVIL, sizeof EVIL - 1);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_str_eq(r->e->name, "pickle");
    ck_assert_uint_eq(r->e->header_offset, x_at);
    ck_assert_uint_eq(r->e->data_offset, m_at + BLK);
    rd_free(r);
    free(t.p);
    /* records apply in dict order: path first inserted, so GNU.sparse.name (later) wins even
     * though path is set again after it */
    memset(&t, 0, sizeof t);
    tb_pax(&t, 'x', "10 path=a\n26 GNU.sparse.name=pickle\n10 path=b\n");
    tb_add(&t, "x", '0', "1", 1);
    tb_end(&t);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_str_eq(r->e->name, "pickle");
    rd_free(r);
    free(t.p);
    /* size: larger than the header's, the next header moves; junk is 0 */
    memset(&t, 0, sizeof t);
    tb_pax(&t, 'x', "13 size=1030\n");
    size_t p_at = tb_add(&t, "pickle", '0', EVIL, sizeof EVIL - 1);
    tb_add(&t, "hidden", '0', EVIL, sizeof EVIL - 1);
    tb_end(&t);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(r->e->size, 1030);
    ck_assert_uint_eq(r->e->next_offset, p_at + BLK + 3 * BLK);
    rd_free(r);
    memcpy(t.p + BLK + 8, "12ab", 4);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(r->e->size, 0);
    ck_assert_uint_eq(r->e->next_offset, p_at + BLK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_END); /* EVIL's bytes are no header: the end */
    ck_assert_str_eq(r->t.stop_why, "tar header checksum invalid");
    rd_free(r);
    free(t.p);
    /* a global path renames every later member */
    memset(&t, 0, sizeof t);
    tb_pax(&t, 'g', "15 path=pickle\n");
    tb_add(&t, "a", '0', "1", 1);
    tb_add(&t, "b", '0', "2", 1);
    tb_end(&t);
    stg_tar_list *l = list_of(&t);
    ck_assert_uint_eq(l->count, 2);
    ck_assert_str_eq(stg_tar_member_name(l, 0), "pickle");
    ck_assert_str_eq(stg_tar_member_name(l, 1), "pickle");
    list_free(l);
    free(t.p);
    /* linkpath */
    memset(&t, 0, sizeof t);
    tb_pax(&t, 'x', "15 linkpath=ab\n");
    tb_add(&t, "pickle", '2', NULL, 0);
    tb_end(&t);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_str_eq(r->e->linkname, "ab");
    rd_free(r);
    free(t.p);
}
END_TEST

static const struct {
    const char *records;
    size_t n;
} bad_pax[] = {
    {"99 path=pickle\n", 15}, /* longer than the data */
    {"15 path=pickleX", 15},  /* no newline */
    {"4 a\n", 4},             /* shorter than "5 x=\n" */
    {"14 pathpickle\n", 14},  /* no '=' */
    {"7 =abc\n", 7},          /* empty keyword */
    {"x5 a=b\n", 7},          /* no length */
};

START_TEST(test_pax_framing)
{
    /* A record tarfile rejects: in the first header the file does not open; after a member the
     * list ends there. A NUL where a record would start ends the records (near miss). */
    tb t = {0};
    size_t x_at = tb_add(&t, "././@PaxHeader", 'x', bad_pax[_i].records, bad_pax[_i].n);
    tb_add(&t, "pickle", '0', EVIL, sizeof EVIL - 1);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(r->err, x_at + BLK);
    ck_assert_str_eq(r->why, "pax extended header invalid");
    ck_assert(!stg_tar_opens(t.p, t.len));
    rd_free(r);
    free(t.p);
    memset(&t, 0, sizeof t);
    tb_add(&t, "a", '0', "1", 1);
    x_at = tb_add(&t, "././@PaxHeader", 'x', bad_pax[_i].records, bad_pax[_i].n);
    tb_add(&t, "pickle", '0', EVIL, sizeof EVIL - 1);
    tb_end(&t);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_END);
    ck_assert_uint_eq(r->t.stop_offset, x_at + BLK);
    rd_free(r);
    free(t.p);
    memset(&t, 0, sizeof t);
    tb_add(&t, "././@PaxHeader", 'x', "15 path=pickle\n\0junk", 20);
    tb_add(&t, "x", '0', "1", 1);
    tb_end(&t);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_str_eq(r->e->name, "pickle");
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_gnu_long_names)
{
    /* 'L' names the member (offset: the 'L' header's); the outer one wins over an inner pax
     * path; 'K' sets the link name; a directory loses one trailing '/' only. */
    tb t = {0};
    size_t l_at = tb_add(&t, "././@LongLink", 'L', "pickle\0", 7);
    tb_pax(&t, 'x', "14 path=other\n");
    size_t m_at = tb_add(&t, "x", '0', EVIL, sizeof EVIL - 1);
    tb_add(&t, "././@LongLink", 'K', "target\0", 7);
    tb_add(&t, "lnk", '2', NULL, 0);
    tb_add(&t, "././@LongLink", 'L', "dd//\0", 5);
    tb_add(&t, "x", '5', NULL, 0);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_str_eq(r->e->name, "pickle");
    ck_assert_uint_eq(r->e->header_offset, l_at);
    ck_assert_uint_eq(r->e->data_offset, m_at + BLK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_str_eq(r->e->name, "lnk");
    ck_assert_str_eq(r->e->linkname, "target");
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_str_eq(r->e->name, "dd/");
    ck_assert_int_eq(rd_next(r), STG_PARSE_END);
    rd_free(r);
    free(t.p);
    /* an 'L' with no member after it: ReadError even after the first member */
    memset(&t, 0, sizeof t);
    tb_add(&t, "a", '0', "1", 1);
    tb_add(&t, "././@LongLink", 'L', "pickle\0", 7);
    size_t z_at = t.len;
    tb_end(&t);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(r->err, z_at);
    ck_assert_str_eq(r->why, "tar extended header without a member");
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_v7_and_prefix)
{
    /* V7: NUL type and a name ending in '/' is a directory (slashes stripped); the prefix is
     * joined whatever the magic (GNU or none), but not for GNU types. */
    tb t = {0};
    uint8_t h[BLK];
    hdr_make(h, "d//", 0, '\0', 0);
    memset(h + 257, 0, 8);
    tb_add_hdr(&t, h, NULL, 0);
    hdr_make(h, "pickle", 1, '0', 1);
    memcpy(h + 345, "p", 1);
    tb_add_hdr(&t, h, "1", 1);
    hdr_make(h, "n", 1, '0', 0);
    memset(h + 257, 0, 8);
    memcpy(h + 345, "v7", 2);
    tb_add_hdr(&t, h, "1", 1);
    tb_end(&t);
    stg_tar_list *l = list_of(&t);
    ck_assert_uint_eq(l->count, 3);
    ck_assert_int_eq(l->m[0].type, '5');
    ck_assert_str_eq(stg_tar_member_name(l, 0), "d");
    ck_assert_str_eq(stg_tar_member_name(l, 1), "p/pickle");
    ck_assert_str_eq(stg_tar_member_name(l, 2), "v7/n");
    ck_assert_uint_eq(stg_tar_list_find(l, "pickle", 6), STG_TAR_NONE);
    list_free(l);
    free(t.p);
}
END_TEST

START_TEST(test_sizes)
{
    /* base-256 size; octal with a prefix; a negative size is refused (tarfile would step back);
     * data past the end (missing padding included) is ReadError for tarfile. */
    tb t = {0};
    uint8_t h[BLK];
    hdr_make(h, "pickle", 0, '0', 1);
    memset(h + 124, 0, 12);
    h[124] = 0x80;
    h[135] = (uint8_t)(sizeof EVIL - 1);
    tb_add_hdr(&t, h, EVIL, sizeof EVIL - 1);
    hdr_make(h, "b", 0, '0', 1);
    memset(h + 124, 0, 12);
    memcpy(h + 124, "0o1_6", 5);
    tb_add_hdr(&t, h, "0123456789abcdef", 16);
    tb_end(&t);
    stg_tar_list *l = list_of(&t);
    ck_assert_uint_eq(l->count, 2);
    ck_assert_int_eq(l->m[0].size, (int64_t)(sizeof EVIL - 1));
    ck_assert_int_eq(l->m[1].size, 14);
    list_free(l);
    free(t.p);
    memset(&t, 0, sizeof t);
    hdr_make(h, "pickle", 0, '0', 1);
    memset(h + 124, 0, 12);
    memcpy(h + 124, "-7", 2);
    tb_add_hdr(&t, h, NULL, 0);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(r->err, 0);
    ck_assert_str_eq(r->why, "tar member size negative");
    ck_assert(stg_tar_opens(t.p, t.len)); /* tarfile opens it: stguard routes it as a tar */
    rd_free(r);
    /* negative for a directory: no data, nothing to refuse (near miss) */
    t.p[156] = '5';
    hdr_sum(t.p);
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    rd_free(r);
    free(t.p);
    memset(&t, 0, sizeof t);
    tb_add(&t, "pickle", '0', EVIL, sizeof EVIL - 1);
    t.len = BLK + sizeof EVIL - 1; /* the padding is missing */
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(r->err, 0);
    ck_assert_str_eq(r->why, "tar member data runs past the end");
    ck_assert(r->t.started);
    rd_free(r);
    t.len = 2 * BLK; /* padded: fine */
    r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_OK);
    ck_assert_int_eq(rd_next(r), STG_PARSE_END);
    rd_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_chain_cap)
{
    /* More extended headers in a row than STG_TAR_CHAIN_MAX: refused at the one past it. */
    tb t = {0};
    size_t at = 0;
    for (unsigned i = 0; i <= STG_TAR_CHAIN_MAX; i++) {
        at = tb_pax(&t, 'x', "11 mtime=1\n");
    }
    tb_add(&t, "pickle", '0', "1", 1);
    tb_end(&t);
    rd *r = rd_new(&t);
    ck_assert_int_eq(rd_next(r), STG_PARSE_MALFORMED);
    ck_assert_uint_eq(r->err, at);
    rd_free(r);
    /* one fewer: read (near miss) */
    rd *r2 = rd_new(&t);
    ck_assert_int_eq(stg_cur_seek(&r2->t.cur, 2 * BLK), STG_OK);
    ck_assert_int_eq(rd_next(r2), STG_PARSE_OK);
    ck_assert_str_eq(r2->e->name, "pickle");
    rd_free(r2);
    free(t.p);
}
END_TEST

static const struct {
    const char *in, *out;
} normpaths[] = {
    {"", "."},        {"a/./b", "a/b"},       {"a//b/", "a/b"},       {"a/../b", "b"},
    {"../a", "../a"}, {"/../a", "/a"},        {"//a", "//a"},         {"///a", "/a"},
    {"a/..", "."},    {"../../x", "../../x"}, {"a/b/../../..", ".."}, {"./", "."},
};

START_TEST(test_normpath)
{
    char out[64];
    const char *in = normpaths[_i].in;
    size_t n = stg_tar_normpath(in, strlen(in), out);
    out[n] = '\0';
    ck_assert_str_eq(out, normpaths[_i].out);
}
END_TEST

/* ------------------------------------------------------------- through the dispatcher */

static stg_report *check(const void *buf, size_t len, const char *name)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
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
    /* What extractfile() hands out is scanned: regular files ('0', NUL, '7') and unknown types
     * ('A', 'Z'); a directory, a symbolic link and a FIFO have no data of their own. */
    tb t = {0};
    tb_add(&t, "dir/", '5', NULL, 0);
    size_t c_at = tb_add(&t, "dir/contig.bin", '7', EVIL, sizeof EVIL - 1);
    size_t n_at = tb_add(&t, "dir/old.bin", '\0', EVIL, sizeof EVIL - 1);
    size_t u_at = tb_add(&t, "dir/unknown.bin", 'A', EVIL, sizeof EVIL - 1);
    tb_add(&t, "dir/link.pkl", '2', NULL, 0);
    uint8_t h[BLK];
    hdr_make(h, "dir/fifo.pkl", 0, '6', 1);
    tb_add_hdr(&t, h, NULL, 0);
    tb_end(&t);
    stg_report *r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TAR);
    ck_assert_msg(tu_count(r, STG_PICKLE_GLOBAL_DANGEROUS) == 3, "%s", tu_describe(r));
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "dir/contig.bin");
    ck_assert_uint_eq(f->member_offset, c_at);
    f = nth(r, STG_PICKLE_GLOBAL_DANGEROUS, 1);
    ck_assert_str_eq(f->member, "dir/old.bin");
    ck_assert_uint_eq(f->member_offset, n_at);
    f = nth(r, STG_PICKLE_GLOBAL_DANGEROUS, 2);
    ck_assert_str_eq(f->member, "dir/unknown.bin");
    ck_assert_uint_eq(f->member_offset, u_at);
    ck_assert_int_eq(tu_find(r, STG_CONTAINER_MALFORMED), -1);
    stg_report_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_torch_reads_by_name_through_links)
{
    /* torch's extractfile('pickle') on a symbolic link reads the target: scanned as the pickle
     * (member "pickle", offset of the target's header). The last 'storages' is the one read. */
    static const char BENIGN[] = "cfoo\nbar\n."; /* an unknown global: a finding to look at */
    tb t = {0};
    tb_add(&t, "storages", '0', EVIL, sizeof EVIL - 1);
    size_t s_at = tb_add(&t, "storages", 'Q', "\x80\x02K\x00.", 5);
    size_t x_at = tb_add(&t, "x.bin", '0', BENIGN, sizeof BENIGN - 1);
    uint8_t h[BLK];
    hdr_make(h, "pickle", 0, '2', 1);
    memcpy(h + 157, "x.bin", 5);
    tb_add_hdr(&t, h, NULL, 0);
    tb_end(&t);
    stg_report *r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_TAR);
    /* the first storages is no longer what torch reads: sniffed as a plain member */
    const stg_finding *f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "storages");
    ck_assert_uint_eq(f->member_offset, 0);
    ck_assert_int_eq(tu_find(r, STG_TAR_LINK_EXTERNAL), -1);
    bool pickle_seen = false;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *g = stg_report_at(r, i);
        if (g->member != NULL && strcmp(g->member, "pickle") == 0) {
            ck_assert_uint_eq(g->member_offset, x_at);
            pickle_seen = true;
        }
        ck_assert(g->member == NULL || g->member_offset != s_at ||
                  strcmp(g->member, "storages") == 0);
    }
    ck_assert_msg(pickle_seen, "%s", tu_describe(r));
    stg_report_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_tar_link_external)
{
    /* torch extract()s 'storages' and opens the file it wrote: a symbolic link there reads a
     * host file. tar_link_external at the link's header. A hard link inside the archive is read
     * from the archive (near miss); one with an absolute or ".." target is external too. */
    static const char *const targets[] = {"a", "/etc/x", "../../x"};
    static const char types[] = {'2', '1', '1'};
    for (int k = -1; k < 3; k++) {
        tb t = {0};
        tb_add(&t, "a", '0', "\x80\x02K\x00.", 5);
        uint8_t h[BLK];
        hdr_make(h, "storages", 0, k < 0 ? '1' : types[k], 1);
        memcpy(h + 157, k < 0 ? "a" : targets[k], strlen(k < 0 ? "a" : targets[k]));
        size_t l_at = tb_add_hdr(&t, h, NULL, 0);
        tb_add(&t, "pickle", '0', "\x80\x02K\x00.", 5);
        tb_end(&t);
        stg_report *r = check(t.p, t.len, NULL);
        if (k < 0) {
            ck_assert_msg(tu_find(r, STG_TAR_LINK_EXTERNAL) == -1, "%s", tu_describe(r));
            ck_assert_int_eq(stg_report_format(r), STG_FMT_TORCH_TAR);
        } else {
            const stg_finding *f = first(r, STG_TAR_LINK_EXTERNAL);
            ck_assert_int_eq(f->severity, STG_SEV_ERROR);
            ck_assert_uint_eq(f->offset, l_at);
            ck_assert_str_eq(f->member, "storages");
        }
        stg_report_free(r);
        free(t.p);
    }
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
    /* Where tarfile stops listing at a bad header, container_malformed at it; members before it
     * are still scanned. Where tarfile raises (an 'L' with nothing after it), the same. */
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
    /* a size field that is no number, after the first member */
    memset(&t, 0, sizeof t);
    tb_add(&t, "first.bin", '0', "ok", 2);
    uint8_t h[BLK];
    hdr_make(h, "second", 0, '0', 1);
    memcpy(h + 124, "0000000000z", 11);
    size_t s_at = tb_add_hdr(&t, h, NULL, 0);
    tb_end(&t);
    r = check(t.p, t.len, NULL);
    f = first(r, STG_CONTAINER_MALFORMED);
    ck_assert_uint_eq(f->offset, s_at);
    stg_report_free(r);
    free(t.p);
    /* a clean archive: none (near miss) */
    memset(&t, 0, sizeof t);
    tb_add(&t, "first.bin", '0', "ok", 2);
    tb_end(&t);
    r = check(t.p, t.len, NULL);
    ck_assert_int_eq(tu_find(r, STG_CONTAINER_MALFORMED), -1);
    stg_report_free(r);
    free(t.p);
}
END_TEST

/* A GGUF file whose first block is also a tar header (type 'x': its pax record names the member
 * "storages"); the pickle member follows. */
static tb gguf_tar(bool valid_checksum)
{
    tb t = {0};
    uint8_t h[BLK];
    hdr_make(h, "GGUF\x03", 0, 'x', 1);
    static const char rec[] = "17 path=storages\n";
    char sz[13];
    snprintf(sz, sizeof sz, "%011o", (unsigned)(sizeof rec - 1));
    memcpy(h + 124, sz, 11);
    tb_add_hdr(&t, h, rec, sizeof rec - 1);
    if (!valid_checksum) {
        t.p[150] ^= 1;
    }
    tb_add(&t, "s", '0', EVIL, sizeof EVIL - 1);
    tb_end(&t);
    return t;
}

static stg_report *check_profile(const tb *t, stg_profile profile)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = profile;
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_buffer(t->p, t->len, NULL, &ctx);
    stg_report_finish(r);
    return r;
}

START_TEST(test_polyglot_tar)
{
    /* strict: polyglot_tar error at 0 and the members torch reads are scanned */
    tb t = gguf_tar(true);
    stg_report *r = check_profile(&t, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_GGUF);
    const stg_finding *f = first(r, STG_POLYGLOT_TAR);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, 0);
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_str_eq(f->member, "storages");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    /* compat: a warning, no payload scanned */
    r = check_profile(&t, STG_PROFILE_COMPAT);
    f = first(r, STG_POLYGLOT_TAR);
    ck_assert_int_eq(f->severity, STG_SEV_WARNING);
    ck_assert_int_eq(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS), -1);
    stg_report_free(r);
    free(t.p);
    /* near miss: the checksum does not match, tarfile refuses it, no polyglot */
    t = gguf_tar(false);
    r = check_profile(&t, STG_PROFILE_STRICT);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_TAR), -1);
    stg_report_free(r);
    free(t.p);
}
END_TEST

START_TEST(test_tar_that_is_a_pickle)
{
    /* A pickle in the first header's name field runs to STOP: pickle.load runs it while torch
     * reads the tar. polyglot_pickle at 0 and its global reported; a plain name: neither. */
    tb t = {0};
    tb_add(&t, "cos\nsystem\n(S'id'\ntR.", '0', "x", 1);
    tb_end(&t);
    stg_report *r = check(t.p, t.len, NULL);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TAR);
    const stg_finding *f = first(r, STG_POLYGLOT_PICKLE);
    ck_assert_int_eq(f->severity, STG_SEV_ERROR);
    ck_assert_uint_eq(f->offset, 0);
    f = first(r, STG_PICKLE_GLOBAL_DANGEROUS);
    ck_assert_ptr_null(f->member);
    stg_report_free(r);
    free(t.p);
    memset(&t, 0, sizeof t);
    tb_add(&t, "storages", '0', "x", 1);
    tb_end(&t);
    r = check(t.p, t.len, NULL);
    ck_assert_int_eq(tu_find(r, STG_POLYGLOT_PICKLE), -1);
    ck_assert_int_eq(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS), -1);
    stg_report_free(r);
    free(t.p);
}
END_TEST

static Suite *tar_suite(void)
{
    Suite *s = suite_create("tar");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, test_header_checksum_and_magic);
    tcase_add_loop_test(tc, test_number_fields, 0,
                        (int)(sizeof number_fields / sizeof number_fields[0]));
    tcase_add_test(tc, test_first_header_versus_later);
    tcase_add_test(tc, test_unknown_types_are_regular);
    tcase_add_test(tc, test_links_resolved);
    tcase_add_test(tc, test_last_member_of_a_name);
    tcase_add_test(tc, test_pax_records);
    tcase_add_loop_test(tc, test_pax_framing, 0, (int)(sizeof bad_pax / sizeof bad_pax[0]));
    tcase_add_test(tc, test_gnu_long_names);
    tcase_add_test(tc, test_v7_and_prefix);
    tcase_add_test(tc, test_sizes);
    tcase_add_test(tc, test_chain_cap);
    tcase_add_loop_test(tc, test_normpath, 0, (int)(sizeof normpaths / sizeof normpaths[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("dispatcher");
    tcase_add_test(tc, test_entry_types_scanned);
    tcase_add_test(tc, test_torch_reads_by_name_through_links);
    tcase_add_test(tc, test_tar_link_external);
    tcase_add_test(tc, test_torch01_storage_record_cut);
    tcase_add_test(tc, test_container_malformed_offsets);
    tcase_add_test(tc, test_polyglot_tar);
    tcase_add_test(tc, test_tar_that_is_a_pickle);
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
