/* The bounded XML pull parser (parser/xml.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem: a search bounded by lengths */
#endif
#include "xml.h"

#include <string.h>

/* ------------------------------------------------------------------------------ bytes */

static bool at_end(const stg_cursor *c)
{
    return stg_cur_avail(c) == 0;
}

/* The next byte, 0 at the end (callers test at_end where a NUL would matter). */
static uint8_t peek(const stg_cursor *c)
{
    const uint8_t *p;
    return stg_cur_peek(c, 1, &p) == STG_OK ? p[0] : 0;
}

static bool peek_is(const stg_cursor *c, const char *s)
{
    size_t n = strlen(s);
    const uint8_t *p;
    return stg_cur_peek(c, n, &p) == STG_OK && memcmp(p, s, n) == 0;
}

/* Moves past the next occurrence of s; false (at the end) when there is none. */
static bool skip_past(stg_cursor *c, const char *s)
{
    size_t n = strlen(s);
    const uint8_t *p;
    (void)stg_cur_peek(c, 0, &p);
    const uint8_t *hit = memmem(p, stg_cur_avail(c), s, n);
    if (hit == NULL) {
        (void)stg_cur_seek(c, c->end);
        return false;
    }
    return stg_cur_skip(c, (size_t)(hit - p) + n) == STG_OK;
}

static bool is_ws(uint8_t b)
{
    return b == ' ' || b == '\t' || b == '\n' || b == '\r';
}

static void skip_ws(stg_cursor *c)
{
    while (!at_end(c) && is_ws(peek(c))) {
        (void)stg_cur_skip(c, 1);
    }
}

/* XML's NameStartChar / NameChar, ASCII part; every byte of a multi-byte UTF-8 sequence is
 * taken as a name character (the parser does not judge Unicode classes). */
static bool name_start(uint8_t b)
{
    return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || b == '_' || b == ':' || b >= 0x80;
}

static bool name_char(uint8_t b)
{
    return name_start(b) || (b >= '0' && b <= '9') || b == '-' || b == '.';
}

static bool read_name(stg_cursor *c, stg_xml_span *out)
{
    out->off = c->pos;
    if (at_end(c) || !name_start(peek(c))) {
        return false;
    }
    while (!at_end(c) && name_char(peek(c))) {
        (void)stg_cur_skip(c, 1);
    }
    out->len = c->pos - out->off;
    return true;
}

/* ------------------------------------------------------------------------------ references */

static const char *const predefined[][2] = {
    {"lt;", "<"}, {"gt;", ">"}, {"amp;", "&"}, {"quot;", "\""}, {"apos;", "'"}};

/* A character XML allows: #x9, #xA, #xD, #x20-#xD7FF, #xE000-#xFFFD, #x10000-#x10FFFF. */
static bool xml_char(uint32_t v)
{
    return v == 0x9 || v == 0xA || v == 0xD || (v >= 0x20 && v <= 0xD7FF) ||
           (v >= 0xE000 && v <= 0xFFFD) || (v >= 0x10000 && v <= 0x10FFFF);
}

/* At '&': moves past the reference and gives its character in *cp. false: no reference the
 * subset reads (a named entity other than the five predefined ones, a character XML does not
 * allow, no ';'). */
static bool read_ref(stg_cursor *c, uint32_t *cp)
{
    (void)stg_cur_skip(c, 1);
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++) {
        if (peek_is(c, predefined[i][0])) {
            (void)stg_cur_skip(c, strlen(predefined[i][0]));
            *cp = (uint8_t)predefined[i][1][0];
            return true;
        }
    }
    if (peek(c) != '#') {
        return false;
    }
    (void)stg_cur_skip(c, 1);
    bool hex = peek(c) == 'x';
    if (hex) {
        (void)stg_cur_skip(c, 1);
    }
    uint32_t v = 0;
    size_t digits = 0;
    for (; !at_end(c) && peek(c) != ';'; digits++) {
        uint8_t b = peek(c);
        uint32_t d;
        if (b >= '0' && b <= '9') {
            d = (uint32_t)(b - '0');
        } else if (hex && ((b | 0x20) >= 'a' && (b | 0x20) <= 'f')) {
            d = (uint32_t)((b | 0x20) - 'a' + 10);
        } else {
            return false;
        }
        if (v > 0x10FFFF) {
            return false; /* keeps v from wrapping; the range test below refuses it */
        }
        v = v * (hex ? 16u : 10u) + d;
        (void)stg_cur_skip(c, 1);
    }
    if (digits == 0 || at_end(c) || !xml_char(v)) {
        return false;
    }
    (void)stg_cur_skip(c, 1); /* ';' */
    *cp = v;
    return true;
}

/* Character data up to '<' (or the end): every reference checked. Outside the root element
 * only white space is content. */
static stg_xml_error skip_text(stg_cursor *c, bool inside)
{
    while (!at_end(c) && peek(c) != '<') {
        uint8_t b = peek(c);
        uint32_t cp;
        if (!inside && !is_ws(b)) {
            return STG_XML_E_OUTSIDE;
        }
        if (b == '&') {
            size_t amp = c->pos;
            if (!read_ref(c, &cp)) {
                (void)stg_cur_seek(c, amp); /* the error is the reference's */
                return STG_XML_E_ENTITY;
            }
            continue;
        }
        (void)stg_cur_skip(c, 1);
    }
    return STG_XML_E_NONE;
}

/* ------------------------------------------------------------------------------ tags */

/* A quoted attribute value: no '<', references checked. */
static stg_xml_error read_value(stg_cursor *c)
{
    uint8_t q = peek(c);
    if (q != '"' && q != '\'') {
        return STG_XML_E_SYNTAX;
    }
    (void)stg_cur_skip(c, 1);
    while (!at_end(c) && peek(c) != q) {
        uint32_t cp;
        if (peek(c) == '<') {
            return STG_XML_E_SYNTAX;
        }
        if (peek(c) == '&') {
            if (!read_ref(c, &cp)) {
                return STG_XML_E_ENTITY;
            }
            continue;
        }
        (void)stg_cur_skip(c, 1);
    }
    if (at_end(c)) {
        return STG_XML_E_SYNTAX;
    }
    (void)stg_cur_skip(c, 1);
    return STG_XML_E_NONE;
}

/* After a start tag's name: attributes up to '>' or "/>" (moved past). */
static stg_xml_error read_attrs(stg_cursor *c, stg_xml_span *attrs, bool *self_closing)
{
    attrs->off = c->pos;
    for (uint32_t n = 0;; n++) {
        size_t before = c->pos;
        skip_ws(c);
        if (peek_is(c, "/>") || peek_is(c, ">")) {
            attrs->len = c->pos - attrs->off;
            *self_closing = peek(c) == '/';
            (void)stg_cur_skip(c, *self_closing ? 2 : 1);
            return STG_XML_E_NONE;
        }
        stg_xml_span name;
        if (c->pos == before || !read_name(c, &name)) {
            return STG_XML_E_SYNTAX; /* attributes are separated by white space */
        }
        if (n == STG_XML_ATTRS_CEILING) {
            return STG_XML_E_ATTRS;
        }
        skip_ws(c);
        if (peek(c) != '=') {
            return STG_XML_E_SYNTAX;
        }
        (void)stg_cur_skip(c, 1);
        skip_ws(c);
        stg_xml_error e = read_value(c);
        if (e != STG_XML_E_NONE) {
            return e;
        }
    }
}

static stg_xml_kind fail(stg_xml *x, stg_xml_error e, size_t at)
{
    x->error = e;
    x->error_offset = at;
    return STG_XML_ERROR;
}

/* "<!" and "<?" markup: comments, processing instructions, CDATA (inside the root only), no
 * DTD. *done: it was such markup (skipped). */
static stg_xml_error skip_markup(stg_xml *x, bool *done)
{
    stg_cursor *c = &x->c;
    *done = true;
    if (peek_is(c, "<?")) {
        return skip_past(c, "?>") ? STG_XML_E_NONE : STG_XML_E_SYNTAX;
    }
    if (peek_is(c, "<!--")) {
        (void)stg_cur_skip(c, 4);
        return skip_past(c, "-->") ? STG_XML_E_NONE : STG_XML_E_SYNTAX;
    }
    if (peek_is(c, "<![CDATA[")) {
        if (x->depth == 0) {
            return STG_XML_E_OUTSIDE;
        }
        return skip_past(c, "]]>") ? STG_XML_E_NONE : STG_XML_E_SYNTAX;
    }
    if (peek_is(c, "<!DOCTYPE")) {
        return STG_XML_E_DTD;
    }
    if (peek_is(c, "<!")) {
        return STG_XML_E_SYNTAX;
    }
    *done = false;
    return STG_XML_E_NONE;
}

static bool spans_equal(const uint8_t *base, stg_xml_span a, stg_xml_span b)
{
    stg_cursor ca = {base, a.off, a.off, a.off + a.len};
    stg_cursor cb = {base, b.off, b.off, b.off + b.len};
    const uint8_t *p, *q;
    return a.len == b.len && stg_cur_peek(&ca, a.len, &p) == STG_OK &&
           stg_cur_peek(&cb, b.len, &q) == STG_OK && memcmp(p, q, a.len) == 0;
}

static stg_xml_kind end_tag(stg_xml *x, stg_xml_event *ev)
{
    stg_cursor *c = &x->c;
    size_t at = c->pos;
    (void)stg_cur_skip(c, 2);
    stg_xml_span name;
    if (!read_name(c, &name)) {
        return fail(x, STG_XML_E_SYNTAX, at);
    }
    skip_ws(c);
    if (peek(c) != '>' || at_end(c)) {
        return fail(x, STG_XML_E_SYNTAX, at);
    }
    (void)stg_cur_skip(c, 1);
    if (x->depth == 0 || !spans_equal(c->base, x->open[x->depth - 1], name)) {
        return fail(x, STG_XML_E_UNBALANCED, at);
    }
    ev->kind = STG_XML_END;
    ev->offset = at;
    ev->name = name;
    ev->depth = x->depth--;
    x->root_done = x->depth == 0;
    return STG_XML_END;
}

static stg_xml_kind start_tag(stg_xml *x, stg_xml_event *ev)
{
    stg_cursor *c = &x->c;
    size_t at = c->pos;
    if (x->root_done) {
        return fail(x, STG_XML_E_OUTSIDE, at);
    }
    (void)stg_cur_skip(c, 1);
    stg_xml_span name, attrs;
    bool self_closing = false;
    if (!read_name(c, &name)) {
        return fail(x, STG_XML_E_SYNTAX, at);
    }
    stg_xml_error e = read_attrs(c, &attrs, &self_closing);
    if (e != STG_XML_E_NONE) {
        return fail(x, e, at);
    }
    if (x->depth == STG_XML_DEPTH_CEILING) {
        return fail(x, STG_XML_E_DEPTH, at);
    }
    x->open[x->depth++] = name;
    x->pending_end = self_closing;
    ev->kind = STG_XML_START;
    ev->offset = at;
    ev->name = name;
    ev->attrs = attrs;
    ev->depth = x->depth;
    return STG_XML_START;
}

/* ------------------------------------------------------------------------------ events */

void stg_xml_init(stg_xml *x, const uint8_t *buf, size_t len)
{
    memset(x, 0, sizeof *x);
    x->c = stg_cur_make(buf, len);
    if (peek_is(&x->c, "\xEF\xBB\xBF")) {
        (void)stg_cur_skip(&x->c, 3);
    }
}

stg_xml_kind stg_xml_next(stg_xml *x, stg_xml_event *ev)
{
    memset(ev, 0, sizeof *ev);
    if (x->error != STG_XML_E_NONE) {
        ev->offset = x->error_offset;
        return STG_XML_ERROR;
    }
    if (x->pending_end) {
        x->pending_end = false;
        ev->kind = STG_XML_END;
        ev->offset = x->c.pos;
        ev->name = x->open[x->depth - 1];
        ev->depth = x->depth--;
        x->root_done = x->depth == 0;
        return STG_XML_END;
    }
    stg_cursor *c = &x->c;
    for (;;) {
        size_t at = c->pos;
        stg_xml_error e = skip_text(c, x->depth > 0);
        if (e != STG_XML_E_NONE) {
            return fail(x, e, c->pos);
        }
        if (at_end(c)) {
            if (x->depth > 0) {
                return fail(x, STG_XML_E_UNBALANCED, c->pos);
            }
            if (!x->root_done) {
                return fail(x, STG_XML_E_OUTSIDE, at);
            }
            ev->kind = STG_XML_DONE;
            ev->offset = c->pos;
            return STG_XML_DONE;
        }
        bool skipped;
        at = c->pos;
        e = skip_markup(x, &skipped);
        if (e != STG_XML_E_NONE) {
            return fail(x, e, at);
        }
        if (!skipped) {
            return peek_is(c, "</") ? end_tag(x, ev) : start_tag(x, ev);
        }
    }
}

/* ------------------------------------------------------------------------------ attributes */

bool stg_xml_span_is(const uint8_t *base, stg_xml_span sp, const char *s, bool fold)
{
    size_t n = strlen(s);
    const uint8_t *p;
    stg_cursor c = {base, sp.off, sp.off, sp.off + sp.len};
    if (sp.len != n || stg_cur_peek(&c, n, &p) != STG_OK) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t a = p[i], b = (uint8_t)s[i];
        if (fold && a >= 'A' && a <= 'Z') {
            a = (uint8_t)(a | 0x20);
        }
        if (a != b) {
            return false;
        }
    }
    return true;
}

bool stg_xml_attr(const uint8_t *base, stg_xml_span attrs, const char *name, stg_xml_span *value,
                  size_t *at)
{
    /* attrs was checked by read_attrs: name S? = S? quoted value, repeated */
    stg_cursor c = {base, attrs.off, attrs.off, attrs.off + attrs.len};
    for (;;) {
        skip_ws(&c);
        stg_xml_span n;
        if (at_end(&c) || !read_name(&c, &n)) {
            return false;
        }
        skip_ws(&c);
        (void)stg_cur_skip(&c, 1); /* '=' */
        skip_ws(&c);
        uint8_t q = peek(&c);
        (void)stg_cur_skip(&c, 1);
        stg_xml_span v = {c.pos, 0};
        const uint8_t *p;
        (void)stg_cur_peek(&c, 0, &p);
        const uint8_t *close = memchr(p, q, stg_cur_avail(&c));
        v.len = close != NULL ? (size_t)(close - p) : stg_cur_avail(&c);
        (void)stg_cur_skip(&c, v.len + (close != NULL ? 1 : 0));
        if (stg_xml_span_is(base, n, name, false)) {
            *value = v;
            *at = n.off;
            return true;
        }
    }
}

/* Appends the UTF-8 form of cp to out[*n..cap); false when it does not fit. */
static bool put_utf8(uint8_t *out, size_t cap, size_t *n, uint32_t cp)
{
    uint8_t u[4];
    size_t k;
    if (cp < 0x80) {
        u[0] = (uint8_t)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (uint8_t)(0xC0 | cp >> 6);
        u[1] = (uint8_t)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xE0 | cp >> 12);
        u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (uint8_t)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        u[0] = (uint8_t)(0xF0 | cp >> 18);
        u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (uint8_t)(0x80 | (cp & 0x3F));
        k = 4;
    }
    if (cap - *n < k) {
        return false;
    }
    memcpy(out + *n, u, k);
    *n += k;
    return true;
}

size_t stg_xml_decode(const uint8_t *base, stg_xml_span raw, uint8_t *out, size_t cap)
{
    stg_cursor c = {base, raw.off, raw.off, raw.off + raw.len};
    size_t n = 0;
    while (!at_end(&c)) {
        uint32_t cp;
        uint8_t b = peek(&c);
        if (b == '&') {
            if (!read_ref(&c, &cp)) {
                return SIZE_MAX; /* never for a checked value */
            }
        } else {
            cp = b; /* a byte as it is (UTF-8 sequences pass through) */
            (void)stg_cur_skip(&c, 1);
            if (n == cap) {
                return SIZE_MAX;
            }
            out[n++] = b;
            continue;
        }
        if (!put_utf8(out, cap, &n, cp)) {
            return SIZE_MAX;
        }
    }
    return n;
}
