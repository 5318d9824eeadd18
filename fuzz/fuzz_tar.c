/* Target: parser/tar (stg_tar_next, stg_tar_list_build, stg_tar_list_find, stg_tar_list_resolve,
 * stg_tar_opens, stg_tar_normpath) against a reference model of CPython 3.11's tarfile written
 * here, independently of the parser: a direct transcription of TarFile.next(),
 * TarInfo.fromtarfile()/frombuf()/_proc_member() (recursive, as in Python, with a simulated file
 * position), nti(), _apply_pax_info() over a real insertion-ordered dict, _getmember() and
 * _find_link_target() with a component-list normpath.
 * Property: the parser and the model agree on whether the archive opens, on every member (name,
 * link name, type, offsets, size, sparse) and on how listing ends; where the model says tarfile
 * raises or stguard refuses (negative sizes, long chains, names over 4096 bytes, pax numbers it
 * does not model, data past the end), the parser says malformed. They agree on getmember() for
 * the four torch names and on every member's link resolution. Any disagreement aborts.
 * Seeds: corpus/tar/. Dict: fuzz/tar.dict. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/tar.h"

#define BLOCK 512
#define REF_MEMBERS 256 /* the model gives up (no check) past this many members */
#define REF_DICT 256
#define REF_DEPTH 64 /* extended headers before a member, as the parser's cap */
#define NAME_CAP 4096

typedef struct bytes {
    const uint8_t *p;
    size_t n;
} bytes;

typedef struct dict {
    bytes key[REF_DICT], val[REF_DICT];
    size_t n;
    bool overflow;
} dict;

typedef enum outcome {
    REF_OK,
    REF_NONE,      /* next() returned None: the list ends */
    REF_READERROR, /* tarfile raises a TarError */
    REF_REFUSE     /* tarfile raises something else, or stguard refuses by policy */
} outcome;

typedef enum hdr_err { H_OK, H_EMPTY, H_TRUNC, H_EOF, H_INVALID, H_REFUSE } hdr_err;

typedef struct info {
    bytes name, link;
    uint8_t namebuf[256 + 2];
    uint8_t type;
    int64_t size;
    bool size_huge;
    uint64_t offset, offset_data;
    bool sparse;
    bool refuse;
} info;

typedef struct ref {
    const uint8_t *buf;
    size_t len;
    uint64_t tell;  /* the simulated file position */
    int64_t offset; /* TarFile.offset */
    dict global;
    info members[REF_MEMBERS];
    size_t count;
} ref;

/* ------------------------------------------------------------------------- helpers */

static bool is_ws(uint8_t c)
{
    return c == 32 || (c >= 9 && c <= 13) || (c >= 28 && c <= 31);
}

/* int(text, base) on ASCII: returns false on ValueError. */
static bool py_int_text(const uint8_t *p, size_t n, int base, int64_t *v, bool *huge)
{
    while (n > 0 && is_ws(*p)) {
        p++;
        n--;
    }
    while (n > 0 && is_ws(p[n - 1])) {
        n--;
    }
    size_t i = 0;
    int sign = 1;
    if (i < n && (p[i] == '-' || p[i] == '+')) {
        sign = p[i] == '-' ? -1 : 1;
        i++;
    }
    bool prefix = false;
    if (base == 8 && i + 1 < n && p[i] == '0' && (p[i + 1] | 0x20) == 'o') {
        i += 2;
        prefix = true;
    }
    /* digits, each optionally preceded by one underscore (not the very first, unless after a
     * prefix) */
    int ndigits = 0;
    unsigned __int128 acc = 0;
    while (i < n) {
        if (p[i] == '_') {
            if (ndigits == 0 && !prefix) {
                return false;
            }
            i++;
            if (i == n) {
                return false;
            }
        }
        int d = p[i] - '0';
        if (d < 0 || d >= base) {
            return false;
        }
        if (acc < ((unsigned __int128)1 << 100)) {
            acc = acc * (unsigned)base + (unsigned)d;
        }
        ndigits++;
        i++;
        prefix = false;
    }
    if (ndigits == 0) {
        return false;
    }
    *huge = acc >= ((unsigned __int128)1 << 56);
    *v = *huge ? 0 : sign * (int64_t)acc;
    return true;
}

/* tarfile.nti */
static bool ref_nti(const uint8_t *s, size_t n, int64_t *v, bool *huge)
{
    *huge = false;
    if (s[0] == 0x80 || s[0] == 0xff) {
        __int128 acc = 0;
        for (size_t i = 1; i < n; i++) {
            acc = acc * 256 + s[i];
        }
        if (s[0] == 0xff) {
            __int128 full = 1;
            for (size_t i = 1; i < n; i++) {
                full *= 256;
            }
            acc -= full;
        }
        __int128 lim = (__int128)1 << 56;
        *huge = acc >= lim || acc < -lim;
        *v = *huge ? 0 : (int64_t)acc;
        return true;
    }
    size_t len = 0;
    while (len < n && s[len] != 0) {
        if (s[len] >= 0x80) {
            return false;
        }
        len++;
    }
    size_t a = 0, b = len;
    while (a < b && is_ws(s[a])) {
        a++;
    }
    while (b > a && is_ws(s[b - 1])) {
        b--;
    }
    if (a == b) {
        *v = 0;
        return true;
    }
    return py_int_text(s + a, b - a, 8, v, huge);
}

/* TarInfo._block with Python's floor division */
static int64_t ref_block(int64_t count)
{
    int64_t q = count / BLOCK, r = count % BLOCK;
    if (r < 0) {
        q -= 1;
        r += BLOCK;
    }
    if (r != 0) {
        q += 1;
    }
    return q * BLOCK;
}

static bytes ref_nts(const uint8_t *p, size_t n)
{
    bytes b = {p, 0};
    while (b.n < n && p[b.n] != 0) {
        b.n++;
    }
    return b;
}

/* fileobj.read(n) at the simulated position: n < 0 reads everything. */
static bytes ref_read(ref *r, int64_t n)
{
    bytes b = {r->buf + (r->tell < r->len ? r->tell : r->len), 0};
    size_t left = r->tell < r->len ? r->len - (size_t)r->tell : 0;
    b.n = n < 0 || (uint64_t)n > left ? left : (size_t)n;
    r->tell += b.n;
    return b;
}

static bool is_reg(uint8_t t)
{
    return t == '0' || t == 0 || t == '7' || t == 'S';
}

static bool supported(uint8_t t)
{
    return is_reg(t) || t == '1' || t == '2' || t == '3' || t == '4' || t == '5' || t == '6' ||
           t == 'L' || t == 'K';
}

static bool skips_data(uint8_t t)
{
    return is_reg(t) || !supported(t);
}

static bool eq(bytes a, const char *s)
{
    size_t n = strlen(s);
    return a.n == n && memcmp(a.p, s, n) == 0;
}

static void dict_set(dict *d, bytes k, bytes v)
{
    for (size_t i = 0; i < d->n; i++) {
        if (d->key[i].n == k.n && memcmp(d->key[i].p, k.p, k.n) == 0) {
            d->val[i] = v;
            return;
        }
    }
    if (d->n == REF_DICT) {
        d->overflow = true;
        return;
    }
    d->key[d->n] = k;
    d->val[d->n] = v;
    d->n++;
}

static const bytes *dict_get(const dict *d, const char *k)
{
    for (size_t i = 0; i < d->n; i++) {
        if (eq(d->key[i], k)) {
            return &d->val[i];
        }
    }
    return NULL;
}

static void rstrip_slash(bytes *b)
{
    while (b->n > 0 && b->p[b->n - 1] == '/') {
        b->n--;
    }
}

/* int(value) on a pax value, with stguard's policy: non-ASCII or > 4300 characters refused. */
static int pax_number(bytes v, int64_t *out)
{
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] >= 0x80) {
            return -1;
        }
    }
    if (v.n > 4300) {
        return -1;
    }
    bool huge = false;
    if (!py_int_text(v.p, v.n, 10, out, &huge)) {
        return 0;
    }
    return huge ? -1 : 1;
}

static void apply_pax(const dict *d, info *m)
{
    for (size_t i = 0; i < d->n; i++) {
        bytes k = d->key[i], v = d->val[i];
        int64_t n = 0;
        int got;
        if (eq(k, "GNU.sparse.name")) {
            m->name = v;
        } else if (eq(k, "GNU.sparse.size") || eq(k, "GNU.sparse.realsize")) {
            got = pax_number(v, &n);
            if (got != 1) {
                m->refuse = true; /* ValueError escapes tarfile */
            }
            m->size = n;
        } else if (eq(k, "path")) {
            rstrip_slash(&v);
            m->name = v;
        } else if (eq(k, "linkpath")) {
            m->link = v;
        } else if (eq(k, "size")) {
            got = pax_number(v, &n);
            if (got < 0) {
                m->refuse = true;
            }
            m->size = got == 1 ? n : 0;
        }
    }
}

/* ------------------------------------------------------------------- frombuf etc. */

static hdr_err frombuf(ref *r, bytes buf, info *m, uint8_t *prefix_out, size_t *prefix_n)
{
    if (buf.n == 0) {
        return H_EMPTY;
    }
    if (buf.n != BLOCK) {
        return H_TRUNC;
    }
    size_t zeros = 0;
    for (size_t i = 0; i < BLOCK; i++) {
        zeros += buf.p[i] == 0;
    }
    if (zeros == BLOCK) {
        return H_EOF;
    }
    int64_t chk, v;
    bool huge;
    if (!ref_nti(buf.p + 148, 8, &chk, &huge)) {
        return H_INVALID;
    }
    int64_t u = 256, s = 256;
    for (size_t i = 0; i < BLOCK; i++) {
        if (i < 148 || i >= 156) {
            u += buf.p[i];
            s += (int8_t)buf.p[i];
        }
    }
    if (huge || (chk != u && chk != s)) {
        return H_INVALID;
    }
    memset(m, 0, sizeof *m);
    m->name = ref_nts(buf.p, 100);
    static const size_t at[] = {100, 108, 116, 124, 136, 329, 337};
    static const size_t len[] = {8, 8, 8, 12, 12, 8, 8};
    for (size_t i = 0; i < 7; i++) {
        if (!ref_nti(buf.p + at[i], len[i], &v, &huge)) {
            return H_INVALID;
        }
        if (at[i] == 124) {
            m->size = v;
            m->size_huge = huge;
        }
    }
    m->type = buf.p[156];
    m->link = ref_nts(buf.p + 157, 100);
    bytes prefix = ref_nts(buf.p + 345, 155);
    if (m->type == 0 && m->name.n > 0 && m->name.p[m->name.n - 1] == '/') {
        m->type = '5';
    }
    if (m->type == 'S') {
        for (size_t i = 0; i < 4; i++) {
            if (!ref_nti(buf.p + 386 + 24 * i, 12, &v, &huge) ||
                !ref_nti(buf.p + 398 + 24 * i, 12, &v, &huge)) {
                return H_INVALID;
            }
        }
        if (!ref_nti(buf.p + 483, 12, &v, &huge)) {
            return H_INVALID;
        }
    }
    if (m->type == '5') {
        rstrip_slash(&m->name);
    }
    memcpy(prefix_out, prefix.p, prefix.n);
    *prefix_n = prefix.n;
    (void)r;
    return H_OK;
}

/* A pax header's records into d (tarfile's _proc_pax): every record is parsed first, so an
 * invalid one raises before anything is stored. */
static hdr_err parse_pax(bytes data, dict *d)
{
    /* parse every record first: an invalid one raises before anything is stored */
    bytes keys[REF_DICT], vals[REF_DICT];
    size_t nrec = 0, pos = 0;
    while (pos < data.n && data.p[pos] != 0) {
        size_t k = 0;
        while (pos + k < data.n && k <= 20 && data.p[pos + k] >= '0' && data.p[pos + k] <= '9') {
            k++;
        }
        if (k == 0 || k > 20 || pos + k >= data.n || data.p[pos + k] != ' ') {
            return H_INVALID;
        }
        uint64_t length = 0;
        for (size_t i = 0; i < k; i++) {
            length = length > 1000000000000ull ? length : length * 10 + (data.p[pos + i] - '0');
        }
        if (length < 5 || length > data.n - pos) {
            return H_INVALID;
        }
        size_t last = pos + (size_t)length - 1;
        size_t kv = pos + k + 1;
        if (kv > last) {
            return H_INVALID;
        }
        size_t eqpos = kv;
        while (eqpos < last && data.p[eqpos] != '=') {
            eqpos++;
        }
        if (eqpos == last || eqpos == kv || data.p[last] != '\n') {
            return H_INVALID;
        }
        if (nrec < REF_DICT) {
            keys[nrec].p = data.p + kv;
            keys[nrec].n = eqpos - kv;
            vals[nrec].p = data.p + eqpos + 1;
            vals[nrec].n = last - eqpos - 1;
            nrec++;
        } else {
            d->overflow = true;
        }
        pos += (size_t)length;
    }
    for (size_t i = 0; i < nrec; i++) {
        dict_set(d, keys[i], vals[i]);
    }
    return H_OK;
}

/* What an extended header of type t (data, records d) says of the member next after it. */
static void apply_extension(ref *r, const info *m, uint8_t t, const dict *d, bytes data, info *next)
{
    if (t == 'L') {
        next->name = ref_nts(data.p, data.n);
        if (next->type == '5' && next->name.n > 0 && next->name.p[next->name.n - 1] == '/') {
            next->name.n--;
        }
        next->offset = m->offset;
    } else if (t == 'K') {
        next->link = ref_nts(data.p, data.n);
        if (next->type == '5' && next->name.n > 0 && next->name.p[next->name.n - 1] == '/') {
            next->name.n--;
        }
        next->offset = m->offset;
    } else {
        const bytes *maj = dict_get(d, "GNU.sparse.major");
        const bytes *min = dict_get(d, "GNU.sparse.minor");
        if (dict_get(d, "GNU.sparse.map") != NULL || dict_get(d, "GNU.sparse.size") != NULL ||
            (maj != NULL && eq(*maj, "1") && min != NULL && eq(*min, "0"))) {
            next->sparse = true;
        }
        if (t != 'g') {
            apply_pax(d, next);
            next->offset = m->offset;
            if (dict_get(d, "size") != NULL) {
                r->offset = (int64_t)next->offset_data +
                            (skips_data(next->type) ? ref_block(next->size) : 0);
            }
        }
    }
}

/* An old GNU sparse member ('S'): its extension blocks are read past, its size is the
 * original size. */
static hdr_err old_gnu_sparse(ref *r, info *m, bytes raw, bool *refuse)
{
    bool ext = raw.p[482] != 0;
    int64_t origsize, v;
    bool huge;
    (void)ref_nti(raw.p + 483, 12, &origsize, &huge);
    if (huge) {
        *refuse = true;
    }
    while (ext) {
        bytes blk = ref_read(r, BLOCK);
        if (blk.n < BLOCK) {
            *refuse = true;
            return H_REFUSE;
        }
        for (size_t i = 0; i < 42; i++) {
            if (!ref_nti(blk.p + 12 * i, 12, &v, &huge)) {
                return H_INVALID;
            }
        }
        ext = blk.p[504] != 0;
    }
    m->sparse = true;
    m->offset_data = r->tell;
    if (m->size_huge) {
        r->offset = INT64_MAX;
    } else {
        r->offset = (int64_t)m->offset_data + ref_block(m->size);
    }
    m->size = origsize;
    m->size_huge = false;
    return H_OK;
}

/* Returns H_OK with *m set, or the header error; *subsequent tells errors from nested headers
 * (SubsequentHeaderError) apart. depth counts extended headers already taken. */
static hdr_err fromtarfile(ref *r, info *m, int depth, bool *subsequent, bool *refuse)
{
    uint8_t prefix[160];
    size_t prefix_n = 0;
    uint64_t here = r->tell;
    bytes raw = ref_read(r, BLOCK);
    hdr_err e = frombuf(r, raw, m, prefix, &prefix_n);
    if (e != H_OK) {
        return e;
    }
    m->offset = here;
    uint8_t t = m->type;
    if (prefix_n > 0 && t != 'L' && t != 'K' && t != 'S') {
        size_t n = m->name.n;
        memmove(m->namebuf + prefix_n + 1, m->name.p, n);
        memcpy(m->namebuf, prefix, prefix_n);
        m->namebuf[prefix_n] = '/';
        m->name.p = m->namebuf;
        m->name.n = prefix_n + 1 + n;
    }
    if (t == 'L' || t == 'K' || t == 'x' || t == 'X' || t == 'g') {
        if (depth == REF_DEPTH) {
            *refuse = true;
            return H_REFUSE;
        }
        bytes data = ref_read(r, m->size_huge ? -1 : ref_block(m->size));
        dict local;
        local.n = 0;
        local.overflow = false; /* 'L' and 'K' have no records */
        dict *d = &local;
        if (t == 'x' || t == 'X' || t == 'g') {
            if (t == 'g') {
                d = &r->global;
            } else {
                local = r->global;
            }
            hdr_err pe = parse_pax(data, d);
            if (pe != H_OK) {
                return pe;
            }
        }
        info next;
        bool sub = false;
        hdr_err ne = fromtarfile(r, &next, depth + 1, &sub, refuse);
        if (ne != H_OK) {
            *subsequent = true;
            return ne;
        }
        if (d->overflow || r->global.overflow) {
            *refuse = true;
        }
        apply_extension(r, m, t, d, data, &next);
        /* names pointing into m's buffer move with the struct copy */
        if (next.name.p >= next.namebuf && next.name.p < next.namebuf + sizeof next.namebuf) {
            size_t off = (size_t)(next.name.p - next.namebuf);
            *m = next;
            m->name.p = m->namebuf + off;
        } else {
            *m = next;
        }
        return H_OK;
    }
    if (t == 'S') {
        return old_gnu_sparse(r, m, raw, refuse);
    }
    m->offset_data = r->tell;
    if (m->size_huge && skips_data(t)) {
        r->offset = m->size < 0 ? -1 : INT64_MAX;
    } else {
        r->offset = (int64_t)m->offset_data + (skips_data(t) ? ref_block(m->size) : 0);
    }
    m->size_huge = m->size_huge && skips_data(t);
    apply_pax(&r->global, m);
    if (m->type == '5') {
        rstrip_slash(&m->name);
    }
    return H_OK;
}

/* TarFile.next(): REF_OK with r->members[r->count - 1] the new member. *parsed: a header chain
 * was read to its member (tarfile.open returns once the first one is). */
static outcome ref_next(ref *r, bool first, bool *parsed)
{
    *parsed = false;
    if (!first && r->offset != (int64_t)r->tell) {
        if (r->offset <= 0 || (uint64_t)r->offset > r->len) {
            return REF_READERROR; /* seek(offset - 1); read(1) finds nothing */
        }
        r->tell = (uint64_t)r->offset;
    }
    uint64_t start = r->tell;
    info m;
    bool subsequent = false, refuse = false;
    hdr_err e = fromtarfile(r, &m, 0, &subsequent, &refuse);
    if (refuse || e == H_REFUSE) {
        *parsed = true;
        return REF_REFUSE;
    }
    if (e != H_OK) {
        if (subsequent) {
            return REF_READERROR;
        }
        if (e == H_EOF || start != 0) {
            return REF_NONE;
        }
        return REF_READERROR;
    }
    *parsed = true;
    if (m.refuse || (skips_data(m.type) && (m.size < 0 || m.size_huge))) {
        return REF_REFUSE;
    }
    if (r->offset < (int64_t)m.offset_data) {
        return REF_REFUSE; /* tarfile would step back and loop */
    }
    if (skips_data(m.type) && (uint64_t)m.size > r->len - m.offset_data) {
        return REF_REFUSE; /* extractfile() would raise part-way */
    }
    if ((uint64_t)r->offset > r->len) {
        return REF_READERROR;
    }
    if (m.name.n > NAME_CAP || m.link.n > NAME_CAP) {
        return REF_REFUSE;
    }
    if (r->count == REF_MEMBERS) {
        return REF_REFUSE;
    }
    info *slot = &r->members[r->count++];
    *slot = m;
    if (m.name.p >= m.namebuf && m.name.p < m.namebuf + sizeof m.namebuf) {
        slot->name.p = slot->namebuf + (m.name.p - m.namebuf);
    }
    return REF_OK;
}

/* ----------------------------------------------------------------- names and links */

/* os.path.normpath with an explicit list of components. */
static size_t ref_normpath(const uint8_t *p, size_t n, uint8_t *out)
{
    if (n == 0) {
        out[0] = '.';
        return 1;
    }
    int slashes = 0;
    if (p[0] == '/') {
        slashes = (n >= 2 && p[1] == '/' && !(n >= 3 && p[2] == '/')) ? 2 : 1;
    }
    enum { MAXC = 2 * NAME_CAP + 8 };
    static size_t cs[MAXC], cl[MAXC];
    size_t nc = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] != '/') {
            j++;
        }
        size_t l = j - i;
        bool dot = l == 1 && p[i] == '.';
        bool dotdot = l == 2 && p[i] == '.' && p[i + 1] == '.';
        if (l > 0 && !dot) {
            bool top_dotdot = nc > 0 && cl[nc - 1] == 2 && p[cs[nc - 1]] == '.' &&
                              p[cs[nc - 1] + 1] == '.';
            if (!dotdot || (slashes == 0 && nc == 0) || top_dotdot) {
                cs[nc] = i;
                cl[nc] = l;
                nc++;
            } else if (nc > 0) {
                nc--;
            }
        }
        i = j + 1;
    }
    size_t o = 0;
    for (int s = 0; s < slashes; s++) {
        out[o++] = '/';
    }
    for (size_t c = 0; c < nc; c++) {
        if (c > 0) {
            out[o++] = '/';
        }
        memcpy(out + o, p + cs[c], cl[c]);
        o += cl[c];
    }
    if (o == 0) {
        out[o++] = '.';
    }
    return o;
}

static uint8_t want_buf[2 * NAME_CAP + 8], have_buf[2 * NAME_CAP + 8], join_buf[2 * NAME_CAP + 8];

/* "data" index, or -1 none, -2 missing, -3 loop */
static long ref_resolve(const ref *r, size_t i, int depth)
{
    const info *m = &r->members[i];
    if (skips_data(m->type)) {
        return (long)i;
    }
    if (m->type != '1' && m->type != '2') {
        return -1;
    }
    if (depth == STG_TAR_LINK_HOPS) {
        return -3;
    }
    size_t jn = 0, limit = i;
    if (m->type == '2') {
        limit = r->count;
        /* os.path.dirname */
        size_t d = m->name.n;
        while (d > 0 && m->name.p[d - 1] != '/') {
            d--;
        }
        bool all = true;
        for (size_t k = 0; k < d; k++) {
            all = all && m->name.p[k] == '/';
        }
        if (!all) {
            while (d > 0 && m->name.p[d - 1] == '/') {
                d--;
            }
        }
        memcpy(join_buf, m->name.p, d);
        jn = d;
        if (d > 0 && m->link.n > 0) {
            join_buf[jn++] = '/';
        }
    }
    memcpy(join_buf + jn, m->link.p, m->link.n);
    jn += m->link.n;
    size_t wn = ref_normpath(join_buf, jn, want_buf);
    for (size_t k = limit; k-- > 0;) {
        size_t hn = ref_normpath(r->members[k].name.p, r->members[k].name.n, have_buf);
        if (hn == wn && memcmp(have_buf, want_buf, wn) == 0) {
            return ref_resolve(r, k, depth + 1);
        }
    }
    return -2;
}

/* ---------------------------------------------------------------------- the check */

static ref model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ref *r = &model;
    memset(r, 0, offsetof(ref, members));
    r->buf = data;
    r->len = size;
    r->count = 0;
    outcome last = REF_OK, first_outcome = REF_OK;
    bool first_parsed = false;
    for (bool first = true; last == REF_OK; first = false) {
        bool parsed = false;
        last = ref_next(r, first, &parsed);
        if (first) {
            first_outcome = last;
            first_parsed = parsed;
        }
    }
    bool opened = first_outcome != REF_READERROR || first_parsed;
    if (r->count == REF_MEMBERS) {
        return 0; /* the model's table is full: nothing to compare */
    }
    stg_tar_list l;
    if (!stg_tar_list_build(&l, data, size)) {
        abort();
    }
    bool parser_malformed = l.end == STG_PARSE_MALFORMED;
    bool model_malformed = last == REF_READERROR || last == REF_REFUSE;
    if (parser_malformed != model_malformed || l.count != r->count) {
        abort();
    }
    if (l.opened != opened || stg_tar_opens(data, size) != (opened && first_outcome != REF_NONE)) {
        abort();
    }
    for (size_t i = 0; i < l.count; i++) {
        const stg_tar_member *pm = &l.m[i];
        const info *rm = &r->members[i];
        if (pm->name_len != rm->name.n ||
            memcmp(stg_tar_member_name(&l, i), rm->name.p, rm->name.n) != 0 ||
            pm->link_len != rm->link.n ||
            memcmp(stg_tar_member_link(&l, i), rm->link.p, rm->link.n) != 0 ||
            (uint8_t)pm->type != rm->type || pm->header_offset != rm->offset ||
            pm->sparse != rm->sparse ||
            (!rm->sparse && (pm->data_offset != rm->offset_data || pm->size != rm->size))) {
            abort();
        }
    }
    if (!parser_malformed) {
        for (size_t i = 0; i < l.count; i++) {
            size_t target = 0;
            unsigned hops = 0;
            bool sym = false;
            stg_tar_resolve_result pr = stg_tar_list_resolve(&l, i, &target, &hops, &sym);
            long want = ref_resolve(r, i, 0);
            long got = pr == STG_TARRES_DATA      ? (long)target
                       : pr == STG_TARRES_NO_DATA ? -1
                       : pr == STG_TARRES_MISSING ? -2
                       : pr == STG_TARRES_LOOP    ? -3
                                                  : -4;
            if (got != want) {
                abort();
            }
        }
        static const char *const names[] = {"sys_info", "pickle", "storages", "tensors"};
        for (size_t k = 0; k < 4; k++) {
            size_t n = strlen(names[k]);
            size_t got = stg_tar_list_find(&l, names[k], n);
            size_t want = STG_TAR_NONE;
            for (size_t i = r->count; i-- > 0;) {
                if (r->members[i].name.n == n && memcmp(r->members[i].name.p, names[k], n) == 0) {
                    want = i;
                    break;
                }
            }
            if (got != want) {
                abort();
            }
        }
    }
    stg_tar_list_free(&l);
    return 0;
}
