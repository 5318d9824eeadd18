/* Tar reader (see tar.h). Each rule below is the one in CPython 3.11's Lib/tarfile.py named in
 * its comment (frombuf, nti, _proc_member, _proc_pax, _apply_pax_info, next, _getmember,
 * _find_link_target). Every read is bounded by the buffer length; numbers that do not fit 64
 * bits are refused rather than wrapped. */
#include "tar.h"

#include <string.h>

#include "mem.h"

#define OFF_NAME 0u
#define OFF_SIZE 124u
#define OFF_CHKSUM 148u
#define OFF_TYPE 156u
#define OFF_LINK 157u
#define OFF_PREFIX 345u

bool stg_tar_type_regular(char type)
{
    return type == '0' || type == '\0' || type == '7' || type == 'S';
}

/* tarfile's SUPPORTED_TYPES: the others are "unknown" and read as regular files. */
static bool type_supported(char type)
{
    return stg_tar_type_regular(type) || (type >= '1' && type <= '6') || type == 'L' || type == 'K';
}

bool stg_tar_type_has_data(char type)
{
    return stg_tar_type_regular(type) || !type_supported(type);
}

/* ---------------------------------------------------------------------------- numbers */

typedef struct num {
    int64_t v;
    bool huge; /* magnitude of 2^56 or more: no buffer is that long, no checksum that big */
} num;

/* Python's str.isspace() for ASCII. */
static bool py_space(uint8_t c)
{
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31);
}

/* Python's int(s, base) for base 8 or 10 over ASCII text already stripped of spaces: sign,
 * for base 8 an optional 0o prefix (one '_' may follow it), digits with single '_' between. */
static bool py_int(const uint8_t *p, size_t n, unsigned base, num *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (p[i] == '+' || p[i] == '-')) {
        neg = p[i] == '-';
        i++;
    }
    if (base == 8 && n - i >= 2 && p[i] == '0' && (p[i + 1] == 'o' || p[i + 1] == 'O')) {
        i += 2;
        if (i < n && p[i] == '_') {
            i++;
        }
    }
    uint64_t v = 0;
    bool huge = false, digits = false, after_underscore = false;
    for (; i < n; i++) {
        if (p[i] == '_' && digits && !after_underscore) {
            after_underscore = true;
            continue;
        }
        unsigned d = (unsigned)p[i] - '0';
        if (p[i] < '0' || d >= base) {
            return false;
        }
        if (v > ((uint64_t)1 << 56) / base) {
            huge = true;
        } else {
            v = v * base + d;
        }
        digits = true;
        after_underscore = false;
    }
    if (!digits || after_underscore) {
        return false;
    }
    huge = huge || v >= ((uint64_t)1 << 56);
    out->v = neg ? -(int64_t)v : (int64_t)v;
    out->huge = huge;
    return true;
}

/* Strips Python whitespace from both ends of [*p, *p + *n). */
static void py_strip(const uint8_t **p, size_t *n)
{
    while (*n > 0 && py_space((*p)[0])) {
        (*p)++;
        (*n)--;
    }
    while (*n > 0 && py_space((*p)[*n - 1])) {
        (*n)--;
    }
}

/* tarfile.nti(): base-256 when the first byte is 0x80 (positive) or 0xff (negative), else
 * int(nts(s, "ascii", "strict").strip() or "0", 8). false: InvalidHeaderError. */
static bool nti(const uint8_t *p, size_t n, num *out)
{
    out->huge = false;
    if (p[0] == 0x80 || p[0] == 0xff) {
        uint64_t v = 0;
        bool high = false; /* a bit at 2^56 or above set (0x80) / clear (0xff) */
        for (size_t i = 1; i < n; i++) {
            if (i + 7 < n && p[i] != (p[0] == 0xff ? 0xff : 0x00)) {
                high = true;
            }
            v = (v << 8) | p[i];
        }
        v &= ((uint64_t)1 << 56) - 1;
        if (p[0] == 0x80) {
            out->v = (int64_t)v;
            out->huge = high;
        } else {
            /* -(256^(n-1) - v): with the bytes above 2^56 all 0xff, that is v - 2^56. */
            out->v = (int64_t)v - ((int64_t)1 << 56);
            out->huge = high;
        }
        return true;
    }
    const uint8_t *nul = memchr(p, 0, n);
    size_t len = nul != NULL ? (size_t)(nul - p) : n;
    for (size_t i = 0; i < len; i++) {
        if (p[i] >= 0x80) {
            return false; /* not ascii: UnicodeDecodeError, a ValueError */
        }
    }
    py_strip(&p, &len);
    if (len == 0) {
        out->v = 0;
        return true;
    }
    return py_int(p, len, 8, out);
}

/* tarfile.calc_chksums(): 256 + the header's bytes outside the checksum field, unsigned and
 * signed (some old tars summed signed chars). */
static bool checksum_ok(const uint8_t *h, num stored)
{
    if (stored.huge) {
        return false;
    }
    int64_t unsigned_sum = 256, signed_sum = 256;
    for (size_t i = 0; i < STG_TAR_BLOCK; i++) {
        if (i >= OFF_CHKSUM && i < OFF_CHKSUM + 8) {
            continue;
        }
        unsigned_sum += h[i];
        signed_sum += (int8_t)h[i];
    }
    return stored.v == unsigned_sum || stored.v == signed_sum;
}

/* TarInfo._block(): count rounded up to whole blocks, negative counts towards zero as Python's
 * divmod() does (-1..-511 give 0, -512 gives -512). |count| < 2^56: no overflow. */
static int64_t block_round(int64_t count)
{
    int64_t b = STG_TAR_BLOCK;
    return count >= 0 ? (count + b - 1) / b * b : -((-count) / b) * b;
}

/* --------------------------------------------------------------------------- headers */

typedef enum hdr_status {
    HDR_OK,
    HDR_EMPTY,     /* EmptyHeaderError: nothing left */
    HDR_TRUNCATED, /* TruncatedHeaderError: less than a block left */
    HDR_EOF,       /* EOFHeaderError: a block of zeros */
    HDR_INVALID,   /* InvalidHeaderError: checksum or a number field */
    HDR_REFUSE     /* tarfile fails with an error other than a TarError: stguard refuses */
} hdr_status;

typedef struct slice {
    const uint8_t *p;
    size_t n;
} slice;

typedef struct hdr {
    const uint8_t *h;
    char type;
    num size;
    slice name, link, prefix;
    uint64_t sparse_ext_blocks; /* 'S': extension blocks that follow the header */
    num origsize;
} hdr;

static slice nts(const uint8_t *p, size_t n)
{
    const uint8_t *nul = memchr(p, 0, n);
    slice s = {p, nul != NULL ? (size_t)(nul - p) : n};
    return s;
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

/* TarInfo.frombuf() on the block at c->pos, plus the old GNU sparse extension blocks. On HDR_OK
 * c is past them (at the member's data), otherwise where the failing block starts or anywhere
 * after: the caller keeps the header's offset. */
static hdr_status read_header(stg_cursor *c, hdr *out, const char **why)
{
    if (stg_cur_avail(c) == 0) {
        return HDR_EMPTY;
    }
    const uint8_t *h;
    if (stg_cur_take(c, STG_TAR_BLOCK, &h) != STG_OK) {
        return HDR_TRUNCATED;
    }
    if (all_zero(h, STG_TAR_BLOCK)) {
        return HDR_EOF;
    }
    num chk;
    if (!nti(h + OFF_CHKSUM, 8, &chk) || !checksum_ok(h, chk)) {
        *why = "tar header checksum invalid";
        return HDR_INVALID;
    }
    /* Every number field goes through nti(): mode, uid, gid, size, mtime, devmajor, devminor. */
    static const struct {
        uint16_t at, n;
    } fields[] = {{100, 8}, {108, 8}, {116, 8}, {124, 12}, {136, 12}, {329, 8}, {337, 8}};
    num v;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!nti(h + fields[i].at, fields[i].n, &v)) {
            *why = "tar header number field invalid";
            return HDR_INVALID;
        }
    }
    memset(out, 0, sizeof *out);
    out->h = h;
    (void)nti(h + OFF_SIZE, 12, &out->size);
    out->type = (char)h[OFF_TYPE];
    out->name = nts(h + OFF_NAME, 100);
    out->link = nts(h + OFF_LINK, 100);
    out->prefix = nts(h + OFF_PREFIX, 155);
    /* Old V7 tar format: a directory is a regular file whose name ends in '/'. */
    if (out->type == '\0' && out->name.n > 0 && out->name.p[out->name.n - 1] == '/') {
        out->type = '5';
    }
    if (out->type == 'S') {
        for (size_t i = 0; i < 8; i++) {
            if (!nti(h + 386 + 12 * i, 12, &v)) {
                *why = "tar sparse map invalid";
                return HDR_INVALID;
            }
        }
        if (!nti(h + 483, 12, &out->origsize)) {
            *why = "tar sparse size invalid";
            return HDR_INVALID;
        }
        bool extended = h[482] != 0;
        while (extended) {
            const uint8_t *ext;
            if (stg_cur_take(c, STG_TAR_BLOCK, &ext) != STG_OK) {
                *why = "tar sparse extension block truncated";
                return HDR_REFUSE;
            }
            for (size_t i = 0; i < 42; i++) {
                if (!nti(ext + 12 * i, 12, &v)) {
                    *why = "tar sparse map invalid";
                    return HDR_INVALID;
                }
            }
            extended = ext[504] != 0;
            out->sparse_ext_blocks++;
        }
    }
    return HDR_OK;
}

/* ------------------------------------------------------------------------ pax records */

static const struct {
    const char *key;
    size_t n;
} pax_keys[STG_TAR_PAX_KEYS] = {
    [STG_TAR_PAX_PATH] = {"path", 4},
    [STG_TAR_PAX_LINKPATH] = {"linkpath", 8},
    [STG_TAR_PAX_SIZE] = {"size", 4},
    [STG_TAR_PAX_SPARSE_NAME] = {"GNU.sparse.name", 15},
    [STG_TAR_PAX_SPARSE_SIZE] = {"GNU.sparse.size", 15},
    [STG_TAR_PAX_SPARSE_REALSIZE] = {"GNU.sparse.realsize", 19},
    [STG_TAR_PAX_SPARSE_MAP] = {"GNU.sparse.map", 14},
    [STG_TAR_PAX_SPARSE_MAJOR] = {"GNU.sparse.major", 16},
    [STG_TAR_PAX_SPARSE_MINOR] = {"GNU.sparse.minor", 16},
};

/* _proc_pax(): records "LEN keyword=value\n" until the end of the (block-padded) data or a NUL;
 * a record that breaks the framing is InvalidHeaderError. Records are stored only when all
 * parse, as tarfile decodes them only then. Any other keyword takes a slot in tarfile's dict
 * but changes nothing listed. */
static bool pax_parse(stg_cursor data, stg_tar_pax *dict)
{
    for (int pass = 0; pass < 2; pass++) {
        stg_cursor c = data;
        const uint8_t *p; /* the record at c.pos, with n bytes left */
        while (stg_cur_peek(&c, 1, &p) == STG_OK && p[0] != 0) {
            size_t n = stg_cur_avail(&c);
            size_t k = 0;
            while (k < n && p[k] >= '0' && p[k] <= '9') {
                k++;
            }
            /* ([0-9]{1,20}) followed by a space */
            if (k == 0 || k > 20 || k >= n || p[k] != ' ') {
                return false;
            }
            uint64_t length = 0;
            for (size_t i = 0; i < k; i++) {
                length = length > (UINT64_MAX - 9) / 10 ? UINT64_MAX
                                                        : length * 10 + (uint64_t)(p[i] - '0');
            }
            if (length < 5 || length > n) {
                return false;
            }
            size_t end = (size_t)length - 1;
            size_t kv = k + 1;
            if (kv > end || p[end] != '\n') {
                return false;
            }
            const uint8_t *eq = memchr(p + kv, '=', end - kv);
            if (eq == NULL || eq == p + kv) {
                return false;
            }
            if (pass == 1) {
                size_t key_n = (size_t)(eq - (p + kv));
                for (size_t i = 0; i < STG_TAR_PAX_KEYS; i++) {
                    if (pax_keys[i].n == key_n && memcmp(p + kv, pax_keys[i].key, key_n) == 0) {
                        stg_tar_pax_value *v = &dict->v[i];
                        if (v->p == NULL) {
                            v->seq = dict->next_seq;
                        }
                        v->p = eq + 1;
                        v->len = (size_t)(p + end - (eq + 1));
                    }
                }
                dict->next_seq++;
            }
            (void)stg_cur_skip(&c, (size_t)length); /* length <= n: checked above */
        }
    }
    return true;
}

/* int(value) for a pax number: false when Python raises ValueError; *unsure when stguard does not
 * model Python's answer (non-ASCII digits or spaces, more than 4300 digits). */
static bool pax_int(const stg_tar_pax_value *v, num *out, bool *unsure)
{
    const uint8_t *p = v->p;
    size_t n = v->len;
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 0x80) {
            *unsure = true;
            return false;
        }
    }
    if (n > 4300) {
        *unsure = true;
        return false;
    }
    py_strip(&p, &n);
    return n > 0 && py_int(p, n, 10, out);
}

/* ----------------------------------------------------------------------- one member */

typedef struct link_hdr {
    char type;
    uint64_t offset;
    slice data; /* what tarfile's read(_block(size)) returned */
    stg_tar_pax dict;
} link_hdr;

typedef struct member_state {
    slice name, link;
    char type;
    int64_t size;
    bool sparse;
    uint64_t offset, data_offset, next_offset;
    bool refuse;
    const char *refuse_why;
} member_state;

static void strip_trailing_slashes(slice *s)
{
    while (s->n > 0 && s->p[s->n - 1] == '/') {
        s->n--;
    }
}

/* _apply_pax_info(): the dict's entries in insertion order. */
static void apply_pax(const stg_tar_pax *d, member_state *m)
{
    bool done[STG_TAR_PAX_KEYS] = {false};
    for (;;) {
        size_t pick = STG_TAR_PAX_KEYS;
        for (size_t i = 0; i < STG_TAR_PAX_KEYS; i++) {
            if (d->v[i].p != NULL && !done[i] &&
                (pick == STG_TAR_PAX_KEYS || d->v[i].seq < d->v[pick].seq)) {
                pick = i;
            }
        }
        if (pick == STG_TAR_PAX_KEYS) {
            return;
        }
        done[pick] = true;
        const stg_tar_pax_value *v = &d->v[pick];
        slice s = {v->p, v->len};
        num n = {0, false};
        bool unsure = false;
        switch (pick) {
        case STG_TAR_PAX_PATH:
            strip_trailing_slashes(&s);
            m->name = s;
            break;
        case STG_TAR_PAX_SPARSE_NAME: m->name = s; break;
        case STG_TAR_PAX_LINKPATH: m->link = s; break;
        case STG_TAR_PAX_SIZE:
            if (!pax_int(v, &n, &unsure)) {
                n.v = 0; /* tarfile: a size that is not a number is 0 */
                n.huge = false;
            }
            if (unsure || n.huge) {
                m->refuse = true;
                m->refuse_why = "pax size record not modelled (non-ASCII, huge or very long)";
            }
            m->size = n.v;
            break;
        case STG_TAR_PAX_SPARSE_SIZE:
        case STG_TAR_PAX_SPARSE_REALSIZE:
            if (!pax_int(v, &n, &unsure) || n.huge) {
                /* int() raises ValueError, which tarfile does not catch */
                m->refuse = true;
                m->refuse_why = "pax GNU.sparse size record invalid";
            }
            m->size = n.v;
            break;
        default: break;
        }
    }
}

static bool dict_has(const stg_tar_pax *d, size_t key)
{
    return d->v[key].p != NULL;
}

static bool dict_is(const stg_tar_pax *d, size_t key, const char *text)
{
    return d->v[key].p != NULL && d->v[key].len == strlen(text) &&
           memcmp(d->v[key].p, text, d->v[key].len) == 0;
}

/* _proc_pax(): the GNU sparse formats 0.0, 0.1 and 1.0 give the next member a sparse map. */
static void pax_sparse(const stg_tar_pax *d, member_state *m)
{
    if (dict_has(d, STG_TAR_PAX_SPARSE_MAP) || dict_has(d, STG_TAR_PAX_SPARSE_SIZE) ||
        (dict_is(d, STG_TAR_PAX_SPARSE_MAJOR, "1") && dict_is(d, STG_TAR_PAX_SPARSE_MINOR, "0"))) {
        m->sparse = true;
    }
}

void stg_tar_init(stg_tar *t, const uint8_t *buf, size_t len)
{
    memset(t, 0, sizeof *t);
    t->cur = stg_cur_make(buf, len);
}

static stg_parse_status fail(stg_tar *t, stg_parse_detail *d, uint64_t at, const char *what)
{
    t->done = true;
    return stg_parse_fail(d, STG_PARSE_MALFORMED, at, 0, what);
}

static stg_parse_status end(stg_tar *t)
{
    t->done = true;
    return STG_PARSE_END;
}

static bool copy_name(char *dst, size_t *dst_len, slice s)
{
    if (s.n > STG_TAR_NAME_MAX) {
        return false;
    }
    if (s.n > 0) {
        memcpy(dst, s.p, s.n);
    }
    dst[s.n] = '\0';
    *dst_len = s.n;
    return true;
}

/* The result of one step of TarFile.next(): `more` = go on to the next step, else `res` is what
 * stg_tar_next returns. */
typedef struct tar_step {
    bool more;
    stg_parse_status res;
} tar_step;

static tar_step step_more(void)
{
    tar_step s = {true, STG_PARSE_OK};
    return s;
}

static tar_step step_done(stg_parse_status res)
{
    tar_step s = {false, res};
    return s;
}

/* A bad or missing header at `pos` (hs is not HDR_OK) while reading the chain of `depth`
 * extended headers of the member that starts at `start`. */
static stg_parse_status header_failed(stg_tar *t, hdr_status hs, const char *hwhy, size_t depth,
                                      uint64_t start, uint64_t pos, stg_parse_detail *d)
{
    if (hs == HDR_REFUSE) {
        t->started = true;
        return fail(t, d, pos, hwhy);
    }
    if (depth > 0) {
        /* SubsequentHeaderError: ReadError whatever the position */
        return fail(t, d, pos, hs == HDR_INVALID ? hwhy : "tar extended header without a member");
    }
    if (hs == HDR_EOF || start != 0) {
        /* after the first member, a bad header ends the list */
        if (hs == HDR_INVALID || hs == HDR_TRUNCATED) {
            t->stop_why = hs == HDR_INVALID ? hwhy : "tar header truncated";
            t->stop_offset = pos;
        }
        return end(t);
    }
    return fail(t, d, pos, hs == HDR_INVALID ? hwhy : "tar header truncated");
}

/* One extended header ('L', 'K', 'x', 'X', 'g') of type ty at l->offset, the depth-th of its
 * chain, c just past its block: its data (what read(_block(size)) returns, c moves past it) and,
 * for pax, its parsed dict. */
static tar_step read_extended(stg_tar *t, const hdr *h, link_hdr *l, size_t depth, uint64_t start,
                              stg_cursor *c, stg_parse_detail *d)
{
    char ty = l->type;
    uint64_t data = c->pos;
    /* read(_block(size)): a negative or too large count reads the rest of the file, and then no
     * header follows (ReadError, once any records are parsed). */
    size_t avail = stg_cur_avail(c);
    int64_t blk = h->size.huge ? -1 : block_round(h->size.v);
    bool to_the_end = blk < 0 || (uint64_t)blk > avail;
    stg_cursor body;
    (void)stg_cur_sub(c, to_the_end ? avail : (size_t)blk, &body); /* at most avail */
    l->data.p = body.base + body.begin;
    l->data.n = stg_cur_avail(&body);
    if (ty == 'x' || ty == 'X' || ty == 'g') {
        stg_tar_pax parsed = t->glob; /* 'x' works on a copy, 'g' on the global dict */
        if (!pax_parse(body, &parsed)) {
            if (depth == 0 && start != 0) {
                t->stop_why = "pax extended header invalid";
                t->stop_offset = data;
                return step_done(end(t));
            }
            return step_done(fail(t, d, data, "pax extended header invalid"));
        }
        if (ty == 'g') {
            t->glob = parsed;
        } else {
            l->dict = parsed;
        }
    }
    if (to_the_end) {
        return step_done(fail(t, d, l->offset, "tar extended header data runs past the end"));
    }
    return step_more();
}

/* fromtarfile() from t->cur: the chain of extended headers (into chain[0..*depth)) up to the
 * member's own header, read into *h at *pos; *c ends just past that header (at its data). */
static tar_step read_chain(stg_tar *t, link_hdr *chain, size_t *depth, hdr *h, uint64_t *pos,
                           stg_cursor *c, stg_parse_detail *d)
{
    uint64_t start = t->cur.pos;
    const char *hwhy = "tar header invalid";
    for (*c = t->cur;;) {
        *pos = c->pos;
        hdr_status hs = read_header(c, h, &hwhy);
        if (hs != HDR_OK) {
            return step_done(header_failed(t, hs, hwhy, *depth, start, *pos, d));
        }
        char ty = h->type;
        if (ty != 'L' && ty != 'K' && ty != 'x' && ty != 'X' && ty != 'g') {
            return step_more();
        }
        if (*depth == STG_TAR_CHAIN_MAX) {
            t->started = true;
            return step_done(fail(t, d, *pos,
                                  "more extended tar headers in a row than "
                                  "stguard follows (64)"));
        }
        link_hdr *l = &chain[*depth];
        l->type = ty;
        l->offset = *pos;
        tar_step s = read_extended(t, h, l, *depth, start, c, d);
        if (!s.more) {
            return s;
        }
        (*depth)++;
    }
}

/* The member's own header at pos, its data (after any sparse extension blocks) at data_at:
 * _proc_sparse() or _proc_builtin(). joined holds the name when it is prefix/name. *next gets the
 * next header's offset (signed: a negative size moves it back, where tarfile would loop). */
static tar_step member_from_header(stg_tar *t, const hdr *h, uint64_t pos, uint64_t data_at,
                                   char *joined, member_state *m, int64_t *next,
                                   stg_parse_detail *d)
{
    memset(m, 0, sizeof *m);
    m->type = h->type;
    /* A size of 2^56 or more is refused below for members with data; for the others (directories,
     * links, devices) tarfile keeps it but never reads by it, so it is listed as 0 rather than as
     * the truncated low bits. */
    m->size = h->size.huge ? 0 : h->size.v;
    m->link = h->link;
    m->offset = pos;
    slice name = h->name;
    if (m->type == '5') {
        strip_trailing_slashes(&name);
    }
    if (h->prefix.n > 0 && m->type != 'L' && m->type != 'K' && m->type != 'S') {
        memcpy(joined, h->prefix.p, h->prefix.n);
        joined[h->prefix.n] = '/';
        memcpy(joined + h->prefix.n + 1, name.p, name.n);
        name.p = (const uint8_t *)joined;
        name.n = h->prefix.n + 1 + name.n;
    }
    m->name = name;
    bool has_data = stg_tar_type_has_data(m->type);
    if (has_data && h->size.huge) {
        t->started = true;
        return step_done(
            fail(t, d, pos + OFF_SIZE,
                 h->size.v < 0 ? "tar member size negative" : "tar member data runs past the end"));
    }
    if (m->type == 'S') {
        m->sparse = true;
        m->data_offset = data_at;
        *next = (int64_t)m->data_offset + block_round(h->size.v);
        if (h->origsize.huge || h->origsize.v < 0) {
            m->refuse = true;
            m->refuse_why = "tar sparse size invalid";
        }
        m->size = h->origsize.v;
    } else {
        m->data_offset = data_at;
        *next = (int64_t)m->data_offset + (has_data ? block_round(h->size.v) : 0);
        apply_pax(&t->glob, m);
        if (m->type == '5') {
            strip_trailing_slashes(&m->name);
        }
    }
    return step_more();
}

/* Unwinds the chain: the innermost extended header is applied first, the outermost last. */
static void apply_chain(stg_tar *t, link_hdr *chain, size_t depth, member_state *m, int64_t *next)
{
    while (depth > 0) {
        link_hdr *l = &chain[--depth];
        if (l->type == 'L') {
            m->name = nts(l->data.p, l->data.n);
            if (m->type == '5' && m->name.n > 0 && m->name.p[m->name.n - 1] == '/') {
                m->name.n--; /* removesuffix("/"): one slash only */
            }
            m->offset = l->offset;
        } else if (l->type == 'K') {
            m->link = nts(l->data.p, l->data.n);
            if (m->type == '5' && m->name.n > 0 && m->name.p[m->name.n - 1] == '/') {
                m->name.n--; /* _proc_gnulong() does this for 'K' too */
            }
            m->offset = l->offset;
        } else if (l->type == 'g') {
            pax_sparse(&t->glob, m);
        } else {
            pax_sparse(&l->dict, m);
            apply_pax(&l->dict, m);
            m->offset = l->offset;
            if (dict_has(&l->dict, STG_TAR_PAX_SIZE)) {
                bool data_now = stg_tar_type_has_data(m->type);
                *next = (int64_t)m->data_offset + (data_now ? block_round(m->size) : 0);
            }
        }
    }
}

/* The checks tarfile makes once the member is complete. */
static stg_parse_status member_checked(stg_tar *t, member_state *m, int64_t next,
                                       stg_parse_detail *d)
{
    t->started = true;
    if (m->refuse) {
        return fail(t, d, m->offset, m->refuse_why);
    }
    if ((stg_tar_type_has_data(m->type) && m->size < 0) || next < (int64_t)m->data_offset) {
        return fail(t, d, m->offset, "tar member size negative");
    }
    m->next_offset = (uint64_t)next;
    stg_cursor data = t->cur, next_hdr = t->cur;
    if (stg_cur_seek(&data, m->data_offset) != STG_OK ||
        (stg_tar_type_has_data(m->type) && (uint64_t)m->size > stg_cur_avail(&data))) {
        /* extractfile() would hand out a prefix of the bytes, then raise ReadError */
        return fail(t, d, m->offset, "tar member data runs past the end");
    }
    if (stg_cur_seek(&next_hdr, m->next_offset) != STG_OK) {
        /* next() seeks to the byte before the next header and finds none: ReadError */
        return fail(t, d, m->offset, "tar member data runs past the end");
    }
    if (m->name.n > STG_TAR_NAME_MAX || m->link.n > STG_TAR_NAME_MAX) {
        return fail(t, d, m->offset, "tar member name longer than stguard reads");
    }
    t->cur = next_hdr;
    return STG_PARSE_OK;
}

/* TarFile.next(): fromtarfile() at t->cur.pos, the chain of extended headers unwound as the
 * recursion in _proc_gnulong()/_proc_pax() does, then the check that the next header's
 * position is inside the file. */
stg_parse_status stg_tar_next(stg_tar *t, stg_tar_entry *e, stg_parse_detail *d)
{
    if (t->done) {
        return STG_PARSE_END;
    }
    link_hdr chain[STG_TAR_CHAIN_MAX];
    size_t depth = 0;
    uint64_t pos;
    hdr h;
    stg_cursor c;
    tar_step s = read_chain(t, chain, &depth, &h, &pos, &c, d);
    if (!s.more) {
        return s.res;
    }
    member_state m;
    int64_t next;
    char joined[155 + 1 + 100]; /* prefix '/' name */
    s = member_from_header(t, &h, pos, c.pos, joined, &m, &next, d);
    if (!s.more) {
        return s.res;
    }
    apply_chain(t, chain, depth, &m, &next);
    STG_FORWARD_IF_ERROR(member_checked(t, &m, next, d));
    if (e == NULL) {
        return STG_PARSE_OK;
    }
    (void)copy_name(e->name, &e->name_len, m.name);
    (void)copy_name(e->linkname, &e->link_len, m.link);
    e->type = m.type;
    e->sparse = m.sparse;
    e->header_offset = m.offset;
    e->data_offset = m.data_offset;
    e->size = m.size;
    e->next_offset = m.next_offset;
    return STG_PARSE_OK;
}

bool stg_tar_header_ok(const uint8_t *block, size_t avail)
{
    stg_cursor c = stg_cur_make(block, avail < STG_TAR_BLOCK ? avail : STG_TAR_BLOCK);
    hdr h;
    const char *why;
    return read_header(&c, &h, &why) == HDR_OK;
}

bool stg_tar_opens(const uint8_t *buf, size_t len)
{
    stg_tar t;
    stg_tar_init(&t, buf, len);
    stg_parse_status r = stg_tar_next(&t, NULL, NULL); /* the status is enough */
    return r == STG_PARSE_OK || (r == STG_PARSE_MALFORMED && t.started);
}

/* ----------------------------------------------------------------------- member list */

static bool pool_add(stg_tar_list *l, size_t *cap, const char *s, size_t n, size_t *at)
{
    if (l->pool_len + n + 1 > *cap) {
        size_t want = *cap < 4096 ? 4096 : *cap;
        while (want < l->pool_len + n + 1) {
            want *= 2;
        }
        char *p = stg_mem_realloc(l->pool, want);
        if (p == NULL) {
            return false;
        }
        l->pool = p;
        *cap = want;
    }
    memcpy(l->pool + l->pool_len, s, n);
    l->pool[l->pool_len + n] = '\0';
    *at = l->pool_len;
    l->pool_len += n + 1;
    return true;
}

bool stg_tar_list_build(stg_tar_list *l, const uint8_t *buf, size_t len)
{
    memset(l, 0, sizeof *l);
    stg_tar_entry *e = stg_mem_alloc(sizeof *e);
    if (e == NULL) {
        l->out_of_memory = true;
        return false;
    }
    stg_tar t;
    stg_tar_init(&t, buf, len);
    size_t cap = 0, pool_cap = 0;
    /* Names are at most the file's bytes twice over (a global pax path renames every member):
     * past that the archive is refused rather than grown without bound. */
    size_t pool_budget = len > SIZE_MAX / 4 ? SIZE_MAX / 2 : 2 * len + 65536;
    for (;;) {
        stg_parse_status r = stg_tar_next(&t, e, &l->err);
        if (r != STG_PARSE_OK) {
            l->end = r;
            l->opened = r == STG_PARSE_END ? true : t.started;
            l->stop_why = t.stop_why;
            l->stop_offset = t.stop_offset;
            break;
        }
        if (l->count == STG_TAR_MEMBERS_MAX ||
            l->pool_len + e->name_len + e->link_len + 2 > pool_budget) {
            l->end = STG_PARSE_MALFORMED;
            l->opened = true;
            (void)stg_parse_fail(&l->err, STG_PARSE_MALFORMED, e->header_offset, 0,
                                 "more tar members or member names than stguard lists");
            break;
        }
        if (l->count == cap) {
            size_t want = cap == 0 ? 16 : cap * 2;
            stg_tar_member *m = stg_mem_realloc(l->m, want * sizeof *m);
            if (m == NULL) {
                l->out_of_memory = true;
                break;
            }
            l->m = m;
            cap = want;
        }
        stg_tar_member *m = &l->m[l->count];
        memset(m, 0, sizeof *m);
        if (!pool_add(l, &pool_cap, e->name, e->name_len, &m->name_at) ||
            !pool_add(l, &pool_cap, e->linkname, e->link_len, &m->link_at)) {
            l->out_of_memory = true;
            break;
        }
        m->name_len = (uint32_t)e->name_len;
        m->link_len = (uint32_t)e->link_len;
        m->header_offset = e->header_offset;
        m->data_offset = e->data_offset;
        m->next_offset = e->next_offset;
        m->size = e->size;
        m->type = e->type;
        m->sparse = e->sparse;
        l->count++;
    }
    stg_mem_free(e);
    return !l->out_of_memory;
}

void stg_tar_list_free(stg_tar_list *l)
{
    stg_mem_free(l->m);
    stg_mem_free(l->pool);
    memset(l, 0, sizeof *l);
}

size_t stg_tar_list_find(const stg_tar_list *l, const char *name, size_t name_len)
{
    for (size_t i = l->count; i-- > 0;) {
        if (l->m[i].name_len == name_len &&
            memcmp(stg_tar_member_name(l, i), name, name_len) == 0) {
            return i;
        }
    }
    return STG_TAR_NONE;
}

size_t stg_tar_normpath(const char *p, size_t n, char *out)
{
    if (n == 0) {
        out[0] = '.';
        return 1;
    }
    size_t initial = p[0] == '/' ? 1 : 0;
    if (initial == 1 && n >= 2 && p[1] == '/' && !(n >= 3 && p[2] == '/')) {
        initial = 2;
    }
    memset(out, '/', initial);
    char *comps = out + initial;
    size_t o = 0, ncomps = 0;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && p[j] != '/') {
            j++;
        }
        const char *c = p + i;
        size_t cn = j - i;
        i = j + 1;
        if (cn == 0 || (cn == 1 && c[0] == '.')) {
            continue;
        }
        bool dotdot = cn == 2 && c[0] == '.' && c[1] == '.';
        size_t last = o;
        while (last > 0 && comps[last - 1] != '/') {
            last--;
        }
        bool last_dotdot = ncomps > 0 && o - last == 2 && comps[last] == '.' &&
                           comps[last + 1] == '.';
        if (!dotdot || (initial == 0 && ncomps == 0) || last_dotdot) {
            if (ncomps > 0) {
                comps[o++] = '/';
            }
            memcpy(comps + o, c, cn);
            o += cn;
            ncomps++;
        } else if (ncomps > 0) {
            o = last > 0 ? last - 1 : 0;
            ncomps--;
        }
    }
    size_t total = initial + o;
    if (total == 0) {
        out[0] = '.';
        return 1;
    }
    return total;
}

/* _getmember(linkname, tarinfo=limit, normalize=True): the last of members [0, limit) whose
 * normalised name is the normalised linkname. */
static size_t find_normalised(const stg_tar_list *l, const char *want, size_t want_n, size_t limit,
                              char *scratch)
{
    for (size_t i = limit; i-- > 0;) {
        size_t n = stg_tar_normpath(stg_tar_member_name(l, i), l->m[i].name_len, scratch);
        if (n == want_n && memcmp(scratch, want, n) == 0) {
            return i;
        }
    }
    return STG_TAR_NONE;
}

static stg_tar_resolve_result resolve_steps(const stg_tar_list *l, size_t member, size_t *target,
                                            unsigned *hops, bool *through_symlink, char *joined,
                                            char *want, char *scratch);

stg_tar_resolve_result stg_tar_list_resolve(const stg_tar_list *l, size_t member, size_t *target,
                                            unsigned *hops, bool *through_symlink)
{
    *hops = 0;
    *through_symlink = false;
    /* A joined name is at most a name, '/', a link name; normalising adds at most 2 bytes. */
    enum { CAP = 2 * STG_TAR_NAME_MAX + 4 };
    char *joined = stg_mem_alloc(3 * (size_t)CAP);
    if (joined == NULL) {
        return STG_TARRES_NOMEM;
    }
    char *want = joined + CAP, *scratch = want + CAP;
    stg_tar_resolve_result res = resolve_steps(l, member, target, hops, through_symlink, joined,
                                               want, scratch);
    stg_mem_free(joined);
    return res;
}

static stg_tar_resolve_result resolve_steps(const stg_tar_list *l, size_t member, size_t *target,
                                            unsigned *hops, bool *through_symlink, char *joined,
                                            char *want, char *scratch)
{
    size_t cur = member;
    for (;;) {
        const stg_tar_member *m = &l->m[cur];
        if (stg_tar_type_has_data(m->type)) {
            *target = cur;
            return STG_TARRES_DATA;
        }
        if (m->type != '1' && m->type != '2') {
            return STG_TARRES_NO_DATA;
        }
        if (*hops == STG_TAR_LINK_HOPS) {
            return STG_TARRES_LOOP;
        }
        (*hops)++;
        const char *link = stg_tar_member_link(l, cur);
        size_t jn = 0, limit = cur;
        if (m->type == '2') {
            *through_symlink = true;
            limit = l->count;
            /* "/".join(filter(None, (os.path.dirname(name), linkname))) */
            const char *name = stg_tar_member_name(l, cur);
            size_t dn = m->name_len;
            while (dn > 0 && name[dn - 1] != '/') {
                dn--;
            }
            size_t all_slashes = 0;
            while (all_slashes < dn && name[all_slashes] == '/') {
                all_slashes++;
            }
            if (all_slashes != dn) {
                while (dn > 0 && name[dn - 1] == '/') {
                    dn--;
                }
            }
            memcpy(joined, name, dn);
            jn = dn;
            if (dn > 0 && m->link_len > 0) {
                joined[jn++] = '/';
            }
        }
        memcpy(joined + jn, link, m->link_len);
        jn += m->link_len;
        size_t wn = stg_tar_normpath(joined, jn, want);
        size_t found = find_normalised(l, want, wn, limit, scratch);
        if (found == STG_TAR_NONE) {
            return STG_TARRES_MISSING;
        }
        cur = found;
    }
}
