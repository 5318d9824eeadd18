/* The bounded MessagePack pull reader (see msgpack.h). Type bytes as the msgpack spec
 * (github.com/msgpack/msgpack, spec.md, "Formats") lays them out; all multi-byte values are
 * big-endian. */
#include "msgpack.h"

#include <string.h>

void stg_mp_init(stg_mp_reader *r, stg_cursor c, const stg_mp_limits *lim)
{
    r->cur = c;
    r->lim = *lim;
    if (r->lim.max_depth > STG_MP_DEPTH_CEILING) {
        r->lim.max_depth = STG_MP_DEPTH_CEILING;
    }
    r->depth = 0;
    r->done = false;
    r->err_at = 0;
    r->failed = STG_MP_OK;
}

/* An unsigned big-endian value of n (1, 2, 4, 8) bytes. */
static stg_status take_be(stg_cursor *c, size_t n, uint64_t *out)
{
    const uint8_t *p;
    stg_status s = stg_cur_take(c, n, &p);
    if (s != STG_OK) {
        return s;
    }
    uint64_t v = 0;
    for (size_t k = 0; k < n; k++) {
        v = (v << 8) | p[k];
    }
    *out = v;
    return STG_OK;
}

static int64_t as_signed(uint64_t v, size_t n)
{
    if (n < 8 && (v >> (8 * n - 1)) != 0) {
        v |= ~(uint64_t)0 << (8 * n); /* sign-extend */
    }
    return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

static void set_int(stg_mp_item *it, int64_t v)
{
    if (v >= 0) {
        it->kind = STG_MP_UINT;
        it->u = (uint64_t)v;
    } else {
        it->kind = STG_MP_INT;
        it->i = v;
    }
}

static double float_of(uint64_t bits, size_t n)
{
    if (n == 4) {
        float f;
        uint32_t b = (uint32_t)bits;
        memcpy(&f, &b, sizeof f);
        return (double)f;
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* A payload of len bytes (str, bin, ext data) at the cursor. */
static stg_mp_status take_payload(stg_mp_reader *r, stg_mp_item *it, uint64_t len)
{
    if (len > r->lim.max_len) {
        return STG_MP_E_LIMIT;
    }
    if (len > stg_cur_avail(&r->cur)) {
        return STG_MP_E_TRUNCATED;
    }
    it->data_offset = r->cur.pos;
    it->len = (size_t)len;
    (void)stg_cur_take(&r->cur, (size_t)len, &it->data);
    return STG_MP_OK;
}

static stg_mp_status take_ext(stg_mp_reader *r, stg_mp_item *it, uint64_t len)
{
    uint8_t t;
    if (stg_cur_u8(&r->cur, &t) != STG_OK) {
        return STG_MP_E_TRUNCATED;
    }
    it->kind = STG_MP_EXT;
    it->ext_type = (int8_t)as_signed(t, 1);
    return take_payload(r, it, len);
}

/* A container header: the count must fit in what is left, one byte an element at least. */
static stg_mp_status take_container(stg_mp_reader *r, stg_mp_item *it, stg_mp_kind kind,
                                    uint64_t count)
{
    it->kind = kind;
    it->count = count;
    uint64_t avail = stg_cur_avail(&r->cur);
    if (count > r->lim.max_count) {
        return STG_MP_E_LIMIT;
    }
    if (kind == STG_MP_MAP ? count > avail / 2 : count > avail) {
        return STG_MP_E_COUNT;
    }
    return STG_MP_OK;
}

/* Widths of the sized forms 0xc4..0xdf: the length/value bytes that follow the type byte. */
static size_t width_of(uint8_t b)
{
    static const uint8_t widths[] = {
        1, 2, 4,        /* c4-c6 bin 8/16/32: length */
        1, 2, 4,        /* c7-c9 ext 8/16/32: length */
        4, 8,           /* ca-cb float 32/64 */
        1, 2, 4, 8,     /* cc-cf uint */
        1, 2, 4, 8,     /* d0-d3 int */
        1, 2, 4, 8, 16, /* d4-d8 fixext: the payload length */
        1, 2, 4,        /* d9-db str: length */
        2, 4,           /* dc-dd array: count */
        2, 4,           /* de-df map: count */
    };
    return widths[b - 0xc4];
}

/* One value whose type byte is b (0xc4..0xdf), its width's bytes at the cursor. */
static stg_mp_status read_sized(stg_mp_reader *r, stg_mp_item *it, uint8_t b)
{
    size_t w = width_of(b);
    uint64_t v = 0;
    if (b >= 0xd4 && b <= 0xd8) {
        return take_ext(r, it, w); /* fixext: the type byte and w bytes of data */
    }
    if (take_be(&r->cur, w, &v) != STG_OK) {
        return STG_MP_E_TRUNCATED;
    }
    if (b <= 0xc6) {
        it->kind = STG_MP_BIN;
        return take_payload(r, it, v);
    }
    if (b <= 0xc9) {
        return take_ext(r, it, v);
    }
    if (b <= 0xcb) {
        it->kind = STG_MP_FLOAT;
        it->f = float_of(v, w);
    } else if (b <= 0xcf) {
        it->kind = STG_MP_UINT;
        it->u = v;
    } else if (b <= 0xd3) {
        set_int(it, as_signed(v, w));
    } else if (b <= 0xdb) {
        it->kind = STG_MP_STR;
        return take_payload(r, it, v);
    } else {
        return take_container(r, it, b <= 0xdd ? STG_MP_ARRAY : STG_MP_MAP, v);
    }
    return STG_MP_OK;
}

/* One value at the cursor (its type byte and what it holds; a container's header only). */
static stg_mp_status read_value(stg_mp_reader *r, stg_mp_item *it)
{
    uint8_t b;
    if (stg_cur_u8(&r->cur, &b) != STG_OK) {
        return STG_MP_E_TRUNCATED;
    }
    if (b <= 0x7f || b >= 0xe0) {
        set_int(it, as_signed(b, 1)); /* a positive or a negative fixint */
        return STG_MP_OK;
    }
    if (b <= 0x8f) {
        return take_container(r, it, STG_MP_MAP, b & 0x0fu);
    }
    if (b <= 0x9f) {
        return take_container(r, it, STG_MP_ARRAY, b & 0x0fu);
    }
    if (b <= 0xbf) {
        it->kind = STG_MP_STR;
        return take_payload(r, it, b & 0x1fu);
    }
    switch (b) {
    case 0xc0: it->kind = STG_MP_NIL; return STG_MP_OK;
    case 0xc1: return STG_MP_E_RESERVED;
    case 0xc2:
    case 0xc3:
        it->kind = STG_MP_BOOL;
        it->b = b == 0xc3;
        return STG_MP_OK;
    default: return read_sized(r, it, b);
    }
}

static stg_mp_status fail(stg_mp_reader *r, stg_mp_status s, uint64_t at)
{
    r->err_at = at;
    r->failed = s;
    return s;
}

stg_mp_status stg_mp_next(stg_mp_reader *r, stg_mp_item *it)
{
    memset(it, 0, sizeof *it);
    if (r->failed != STG_MP_OK) {
        return r->failed;
    }
    if (r->done) {
        return STG_MP_DONE;
    }
    it->offset = r->cur.pos;
    if (r->depth > 0 && r->stack[r->depth - 1].left == 0) {
        it->kind = STG_MP_CLOSE;
        r->depth--;
        it->depth = r->depth;
        r->done = r->depth == 0;
        return STG_MP_OK;
    }
    it->depth = r->depth;
    if (r->depth > 0) {
        stg_mp_frame *up = &r->stack[r->depth - 1];
        it->key = up->map && up->left % 2 == 0;
        up->left--;
    }
    stg_mp_status s = read_value(r, it);
    if (s != STG_MP_OK) {
        return fail(r, s, it->offset);
    }
    if (it->kind == STG_MP_ARRAY || it->kind == STG_MP_MAP) {
        if (r->depth >= r->lim.max_depth) {
            return fail(r, STG_MP_E_DEPTH, it->offset);
        }
        stg_mp_frame *f = &r->stack[r->depth++];
        f->map = it->kind == STG_MP_MAP;
        f->left = f->map ? 2 * it->count : it->count; /* count <= avail / 2: no wrap */
    } else if (r->depth == 0) {
        r->done = true;
    }
    return STG_MP_OK;
}

const char *stg_mp_status_text(stg_mp_status s)
{
    switch (s) {
    case STG_MP_OK: return "no error";
    case STG_MP_DONE: return "the value is complete";
    case STG_MP_E_TRUNCATED: return "a length, value or payload runs past the end";
    case STG_MP_E_RESERVED: return "the reserved type byte 0xc1";
    case STG_MP_E_COUNT: return "an array or map count that cannot fit in the bytes left";
    case STG_MP_E_DEPTH: return "containers nested deeper than the limit";
    case STG_MP_E_LIMIT: return "a count or a length over the limit";
    }
    return "unknown status";
}

const char *stg_mp_kind_name(stg_mp_kind k)
{
    static const char *const names[] = {"nil", "bool",  "int", "int", "float", "str",
                                        "bin", "array", "map", "ext", "end"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}
