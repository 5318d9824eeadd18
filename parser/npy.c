/* NumPy .npy header reader (see npy.h). The grammar is the part of Python's literal syntax that
 * ast.literal_eval evaluates and a .npy header can use; where literal_eval would accept more
 * (sets, floats, implicit string concatenation, triple quotes, line continuations) this reader
 * says STG_PARSE_MALFORMED, so a caller fails closed instead of guessing. */
#include "npy.h"

#include <string.h>

#include "cursor.h"
#include "text.h"

/* CPython's tokenizer refuses the 200th nested bracket ("too many nested parentheses"). */
#define PY_MAXLEVEL 200u
/* Longest dtype string or header key decoded for comparison. */
#define NPY_TYPESTR_MAX 64u
/* Field names and titles per structured level checked for duplicates (numpy refuses them);
 * past this a duplicate goes unnoticed, which only lets through a header numpy refuses. */
#define NPY_DUP_CHECK_MAX 128u

static stg_parse_status fail(stg_npy_error *err, size_t off, const char *what)
{
    return stg_parse_fail(err, STG_PARSE_MALFORMED, off, 0, what);
}

/* A limit reached at off: limit names the stg_limits field. */
static stg_parse_status limit_fail(stg_npy_error *err, size_t off, const char *what,
                                   const char *limit, int reason)
{
    (void)stg_parse_fail(err, STG_PARSE_LIMIT, off, reason, what);
    err->limit = limit;
    return STG_PARSE_LIMIT;
}

static bool is_ident(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c >= 0x80;
}

/* A digit of radix 2..16 (letters in either case): Python's int() digits. */
static bool is_digit_in(uint8_t c, unsigned radix)
{
    int v = stg_hex_digit(c);
    return v >= 0 && (unsigned)v < radix;
}

static unsigned digit_value(uint8_t c)
{
    return (unsigned)stg_hex_digit(c); /* c passed is_digit_in */
}

/* ---------------------------------------------------------------- strings */

/* Fixed-length hex escape (\xhh, \uXXXX, \UXXXXXXXX) at body[*i] (after the letter). */
static bool hex_escape(const uint8_t *b, size_t n, size_t *i, unsigned digits, uint32_t *cp)
{
    uint32_t v = 0;
    if (n - *i < digits) {
        return false;
    }
    for (unsigned d = 0; d < digits; d++) {
        if (!is_digit_in(b[*i + d], 16)) {
            return false;
        }
        v = (v << 4) | digit_value(b[*i + d]);
    }
    *i += digits;
    *cp = v;
    return true;
}

/* Walks the body of a string literal as Python's parser decodes it. With out == NULL it only
 * validates (named escapes pass); else it writes UTF-8 (bytes literals: the byte values) and
 * fails on a named escape or when cap is reached. */
static bool str_decode(const uint8_t *b, size_t n, bool raw, bool bytes, bool latin1, uint8_t *out,
                       size_t cap, size_t *out_len)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp;
        uint8_t c = b[i];
        if (c == '\\' && !raw) {
            if (++i >= n) {
                return false; /* cannot happen: the scanner never ends a body on a backslash */
            }
            c = b[i++];
            switch (c) {
            case '\n': continue;
            case '\r':
                if (i < n && b[i] == '\n') {
                    i++;
                }
                continue;
            case '\\': cp = '\\'; break;
            case '\'': cp = '\''; break;
            case '"': cp = '"'; break;
            case 'a': cp = 7; break;
            case 'b': cp = 8; break;
            case 'f': cp = 12; break;
            case 'n': cp = 10; break;
            case 'r': cp = 13; break;
            case 't': cp = 9; break;
            case 'v': cp = 11; break;
            case 'x':
                if (!hex_escape(b, n, &i, 2, &cp)) {
                    return false;
                }
                break;
            case 'u':
            case 'U':
            case 'N':
                if (bytes) { /* not escapes in bytes: the backslash stays */
                    cp = '\\';
                    i--;
                    break;
                }
                if (c == 'N') {
                    /* \N{NAME}: valid syntax, value unknown here */
                    if (i >= n || b[i] != '{') {
                        return false;
                    }
                    size_t e = i + 1;
                    while (e < n && b[e] != '}' &&
                           ((b[e] >= 'A' && b[e] <= 'Z') || (b[e] >= 'a' && b[e] <= 'z') ||
                            (b[e] >= '0' && b[e] <= '9') || b[e] == ' ' || b[e] == '-')) {
                        e++;
                    }
                    if (e >= n || b[e] != '}' || e == i + 1 || out != NULL) {
                        return false;
                    }
                    i = e + 1;
                    continue;
                }
                if (!hex_escape(b, n, &i, c == 'u' ? 4 : 8, &cp) || cp > 0x10FFFF) {
                    return false;
                }
                break;
            default:
                if (c >= '0' && c <= '7') {
                    cp = (uint32_t)(c - '0');
                    for (int d = 0; d < 2 && i < n && b[i] >= '0' && b[i] <= '7'; d++) {
                        cp = cp * 8 + (uint32_t)(b[i++] - '0');
                    }
                    if (cp > 0377) {
                        return false; /* Python warns or refuses: not read here */
                    }
                    break;
                }
                cp = '\\'; /* unknown escape: the backslash is kept (Python warns) */
                i--;
                break;
            }
        } else if (c < 0x80 || latin1 || bytes) {
            cp = c;
            i++;
            if (bytes && c >= 0x80) {
                return false; /* bytes literals are ASCII */
            }
        } else {
            /* UTF-8 text (npy 3.0, validated beforehand): copied as it is */
            size_t k = (c & 0xE0) == 0xC0 ? 2u : (c & 0xF0) == 0xE0 ? 3u : 4u;
            if (out != NULL) {
                if (cap - o < k) {
                    return false;
                }
                memcpy(out + o, b + i, k);
                o += k;
            }
            i += k;
            continue;
        }
        if (out != NULL) {
            uint8_t tmp[4];
            size_t k = 1;
            if (bytes) {
                tmp[0] = (uint8_t)cp;
            } else {
                k = stg_utf8_put(tmp, cp);
            }
            if (cap - o < k) {
                return false;
            }
            memcpy(out + o, tmp, k);
            o += k;
        }
    }
    if (out_len != NULL) {
        *out_len = o;
    }
    return true;
}

bool stg_pylit_str(const uint8_t *src, const stg_pylit_node *n, bool latin1, uint8_t *out,
                   size_t cap, size_t *out_len)
{
    if (n->kind != STG_PYLIT_STR && n->kind != STG_PYLIT_BYTES) {
        return false;
    }
    return str_decode(src + n->off, n->len, n->raw, n->kind == STG_PYLIT_BYTES, latin1, out, cap,
                      out_len);
}

/* A string literal at t[*i] (prefix letters included). */
static stg_parse_status scan_string(const uint8_t *t, size_t len, size_t *i, bool latin1,
                                    stg_pylit_node *node, stg_npy_error *err, size_t base)
{
    size_t start = *i, p = *i;
    bool raw = false, bytes = false, uni = false;
    while (p < len && p - start < 2 && t[p] != '\'' && t[p] != '"') {
        uint8_t c = (uint8_t)(t[p] | 0x20);
        if (c == 'r' && !raw && !uni) {
            raw = true;
        } else if (c == 'b' && !bytes && !uni) {
            bytes = true;
        } else if (c == 'u' && p == start) {
            uni = true;
        } else {
            return fail(err, base + start, "a name or prefix that is not a literal");
        }
        p++;
    }
    if (p >= len || (t[p] != '\'' && t[p] != '"')) {
        return fail(err, base + start, "a name that is not a literal");
    }
    uint8_t q = t[p++];
    if (len - p >= 2 && t[p] == q && t[p + 1] == q) {
        return fail(err, base + start, "triple-quoted strings are not read");
    }
    size_t body = p;
    while (p < len && t[p] != q) {
        if (t[p] == '\n' || t[p] == '\r') {
            return fail(err, base + p, "a string runs past the end of its line");
        }
        if (t[p] == '\\') {
            p++; /* the escaped byte (raw strings too: r'\'' does not end) */
            if (p < len && t[p] == '\r' && len - p >= 2 && t[p + 1] == '\n') {
                p++;
            }
        }
        p++;
    }
    if (p >= len) {
        return fail(err, base + start, "a string is not closed");
    }
    if (!str_decode(t + body, p - body, raw, bytes, latin1, NULL, 0, NULL)) {
        return fail(err, base + body, "a string holds an escape Python refuses");
    }
    node->kind = bytes ? STG_PYLIT_BYTES : STG_PYLIT_STR;
    node->raw = raw;
    node->off = base + body;
    node->len = p - body;
    *i = p + 1;
    return STG_PARSE_OK;
}

/* An int literal (optional sign, decimal, 0x/0o/0b, underscores between digits). */
static stg_parse_status scan_int(const uint8_t *t, size_t len, size_t *i, bool py2_long,
                                 stg_pylit_node *node, stg_npy_error *err, size_t base)
{
    size_t start = *i, p = *i;
    bool neg = false;
    if (t[p] == '-' || t[p] == '+') {
        neg = t[p] == '-';
        p++;
        while (p < len && (t[p] == ' ' || t[p] == '\t' || t[p] == '\f')) {
            p++;
        }
    }
    if (p >= len || t[p] < '0' || t[p] > '9') {
        return fail(err, base + start, "a sign not followed by a number");
    }
    unsigned radix = 10;
    bool leading_zero = t[p] == '0';
    if (leading_zero && len - p >= 2 && memchr("xXoObB", t[p + 1], 6) != NULL) {
        uint8_t r = (uint8_t)(t[p + 1] | 0x20);
        radix = r == 'x' ? 16 : r == 'o' ? 8 : 2;
        p += 2;
        if (p < len && t[p] == '_') {
            p++;
        }
    }
    uint64_t v = 0;
    bool big = false, any = false, nonzero = false;
    while (p < len) {
        if (t[p] == '_' && any && p + 1 < len && is_digit_in(t[p + 1], radix)) {
            p++;
            continue;
        }
        if (!is_digit_in(t[p], radix)) {
            break;
        }
        unsigned d = digit_value(t[p]);
        nonzero = nonzero || d != 0;
        if (v > (UINT64_MAX - d) / radix) {
            big = true;
        } else {
            v = v * radix + d;
        }
        any = true;
        p++;
    }
    if (!any) {
        return fail(err, base + start, "a number without digits");
    }
    if (radix == 10 && leading_zero && nonzero) {
        return fail(err, base + start, "leading zeros in a decimal number");
    }
    if (p < len && (t[p] == '.' || t[p] == 'e' || t[p] == 'E' || t[p] == 'j' || t[p] == 'J')) {
        return fail(err, base + start, "a float or complex number (not read here)");
    }
    if (p < len && is_ident(t[p])) {
        /* numpy drops a Python 2 long suffix `L` from 1.0/2.0 headers (_filter_header) */
        if (!(py2_long && t[p] == 'L' && (p + 1 >= len || !is_ident(t[p + 1])))) {
            return fail(err, base + p, "a number followed by a name");
        }
        p++;
    }
    node->kind = STG_PYLIT_INT;
    node->big = big || v > (neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX);
    node->ival = node->big ? 0 : neg && v > 0 ? -(int64_t)(v - 1) - 1 : (int64_t)v;
    node->off = base + start;
    node->len = p - start;
    *i = p;
    return STG_PARSE_OK;
}

/* Whitespace and comments between tokens. */
static void skip_space(const uint8_t *t, size_t len, size_t *i)
{
    while (*i < len) {
        uint8_t c = t[*i];
        if (c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r') {
            (*i)++;
        } else if (c == '#') {
            while (*i < len && t[*i] != '\n' && t[*i] != '\r') {
                (*i)++;
            }
        } else {
            return;
        }
    }
}

struct open_container {
    uint32_t node;
    uint8_t closer;
    bool after_comma;
};

/* The state of one stg_pylit_parse: the text, where the parse is, the open containers. */
typedef struct pylit_parser {
    const uint8_t *text;
    size_t len, base;
    bool latin1, py2_long;
    uint32_t max_depth;
    stg_pylit_node *nodes;
    size_t cap;
    stg_npy_error *err;
    struct open_container stack[PY_MAXLEVEL];
    uint32_t depth;
    size_t n, i;     /* nodes used; text offset */
    bool need_value; /* a value (or the innermost container's closer) comes next */
} pylit_parser;

static struct open_container *pl_top(pylit_parser *p)
{
    return p->depth > 0 ? &p->stack[p->depth - 1] : NULL;
}

/* What literal_eval refuses before parsing: a NUL, bytes that do not decode, an indented first
 * value. Leaves p->i at the first value. */
static stg_parse_status pl_start(pylit_parser *p)
{
    const uint8_t *text = p->text;
    size_t len = p->len;
    const uint8_t *nul = len > 0 ? memchr(text, 0, len) : NULL;
    if (nul != NULL) {
        return fail(p->err, p->base + (size_t)(nul - text),
                    "a NUL byte (Python refuses the source)");
    }
    if (!p->latin1) {
        size_t bad;
        if (!stg_utf8_valid(text, len, false, &bad)) { /* bytes.decode('utf-8') */
            return fail(p->err, p->base + bad, "the header is not valid UTF-8");
        }
    }
    /* ast.literal_eval strips leading spaces and tabs; the parser then refuses an indented
     * first token on a later line ("unexpected indent") */
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t')) {
        i++;
    }
    skip_space(text, len, &i);
    bool later_line = memchr(text, '\n', i) != NULL || memchr(text, '\r', i) != NULL;
    for (size_t b = i; later_line && b > 0 && text[b - 1] != '\n' && text[b - 1] != '\r'; b--) {
        if (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\f') {
            return fail(p->err, p->base + i, "the first value is indented (Python refuses it)");
        }
    }
    p->i = i;
    return STG_PARSE_OK;
}

/* After a value: the end of the text (outermost), ':' after a dict key, ',' or the innermost
 * container's closer (*close set). *done: the literal is complete. */
static stg_parse_status pl_after_value(pylit_parser *p, bool *close, bool *done)
{
    struct open_container *top = pl_top(p);
    if (top == NULL) {
        if (p->i != p->len) {
            return fail(p->err, p->base + p->i, "bytes after the literal");
        }
        *done = true;
        return STG_PARSE_OK;
    }
    if (p->i >= p->len) {
        return fail(p->err, p->base + p->i, "the literal is not closed");
    }
    const stg_pylit_node *tn = &p->nodes[top->node];
    uint8_t c = p->text[p->i];
    if (tn->kind == STG_PYLIT_DICT && tn->count % 2 == 1) {
        if (c != ':') {
            return fail(p->err, p->base + p->i,
                        c == ',' || c == '}' ? "a set (not read here)" : "a dict key without ':'");
        }
        p->i++;
        p->need_value = true;
        return STG_PARSE_OK;
    }
    if (c == ',') {
        top->after_comma = true;
        p->i++;
        p->need_value = true;
        return STG_PARSE_OK;
    }
    if (c != top->closer) {
        return fail(p->err, p->base + p->i, "unexpected byte in the literal");
    }
    *close = true;
    return STG_PARSE_OK;
}

/* A container opened by c at p->i: node is its (new) node; a value or its closer comes next. */
static stg_parse_status pl_open(pylit_parser *p, stg_pylit_node *node, uint8_t c)
{
    if (p->depth >= p->max_depth) {
        return limit_fail(p->err, p->base + p->i, "the header literal nests too deeply",
                          "max_json_depth", 0);
    }
    if (p->depth + 1 >= PY_MAXLEVEL) {
        return fail(p->err, p->base + p->i, "too many nested brackets for Python");
    }
    node->kind = c == '(' ? STG_PYLIT_TUPLE : c == '[' ? STG_PYLIT_LIST : STG_PYLIT_DICT;
    node->off = p->base + p->i;
    p->stack[p->depth].node = (uint32_t)p->n;
    p->stack[p->depth].closer = c == '(' ? ')' : c == '[' ? ']' : '}';
    p->stack[p->depth].after_comma = false;
    p->depth++;
    p->n++;
    p->i++;
    return STG_PARSE_OK;
}

/* A number, a string or True/False/None at p->i into node. */
static stg_parse_status pl_scalar(pylit_parser *p, stg_pylit_node *node, uint8_t c)
{
    if ((c >= '0' && c <= '9') || c == '-' || c == '+') {
        return scan_int(p->text, p->len, &p->i, p->py2_long, node, p->err, p->base);
    }
    if (c == '\'' || c == '"' || c == 'b' || c == 'B' || c == 'r' || c == 'R' || c == 'u' ||
        c == 'U') {
        return scan_string(p->text, p->len, &p->i, p->latin1, node, p->err, p->base);
    }
    static const struct {
        const char *word;
        uint8_t kind;
        int64_t v;
    } words[] = {
        {"True", STG_PYLIT_BOOL, 1}, {"False", STG_PYLIT_BOOL, 0}, {"None", STG_PYLIT_NONE, 0}};
    size_t i = p->i, len = p->len;
    stg_parse_status st = fail(p->err, p->base + i, "a name or symbol that is not a literal");
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t wl = strlen(words[w].word);
        if (len - i >= wl && memcmp(p->text + i, words[w].word, wl) == 0 &&
            (len - i == wl || !is_ident(p->text[i + wl]))) {
            node->kind = words[w].kind;
            node->ival = words[w].v;
            node->off = p->base + i;
            node->len = wl;
            p->i = i + wl;
            st = STG_PARSE_OK;
        }
    }
    return st;
}

/* Where a value is expected: a new value, or (*close) the closer of a container that may close
 * here (empty, after a comma, not after a dict key). */
static stg_parse_status pl_value(pylit_parser *p, bool *close)
{
    if (p->i >= p->len) {
        return fail(p->err, p->base + p->i, "a value is missing");
    }
    struct open_container *top = pl_top(p);
    uint8_t c = p->text[p->i];
    if (top != NULL && c == top->closer && (p->nodes[top->node].count == 0 || top->after_comma) &&
        (p->nodes[top->node].kind != STG_PYLIT_DICT || p->nodes[top->node].count % 2 == 0)) {
        *close = true;
        return STG_PARSE_OK;
    }
    if (p->n >= p->cap) {
        return limit_fail(p->err, p->base + p->i, "the header literal has too many values",
                          "max_metadata_entries", STG_NPY_E_NODES);
    }
    stg_pylit_node *node = &p->nodes[p->n];
    memset(node, 0, sizeof *node);
    if (top != NULL) {
        p->nodes[top->node].count++;
        top->after_comma = false;
    }
    if (c == '(' || c == '[' || c == '{') {
        return pl_open(p, node, c);
    }
    stg_parse_status st = pl_scalar(p, node, c);
    if (st != STG_PARSE_OK) {
        return st;
    }
    node->next = (uint32_t)(p->n + 1);
    p->n++;
    p->need_value = false;
    return STG_PARSE_OK;
}

/* Closes the innermost container at its closer (p->i). */
static void pl_close(pylit_parser *p)
{
    struct open_container *top = &p->stack[p->depth - 1];
    stg_pylit_node *tn = &p->nodes[top->node];
    if (tn->kind == STG_PYLIT_TUPLE && tn->count == 1 && !top->after_comma) {
        tn->kind = STG_PYLIT_PAREN;
    }
    tn->next = (uint32_t)p->n;
    tn->len = p->base + p->i + 1 - tn->off;
    p->i++;
    p->depth--;
    p->need_value = false;
}

stg_parse_status stg_pylit_parse(const uint8_t *text, size_t len, size_t base, bool latin1,
                                 bool py2_long, uint32_t max_depth, stg_pylit_node *nodes,
                                 size_t cap, size_t *count, stg_npy_error *err)
{
    pylit_parser p;
    p.text = text;
    p.len = len;
    p.base = base;
    p.latin1 = latin1;
    p.py2_long = py2_long;
    p.max_depth = max_depth;
    p.nodes = nodes;
    p.cap = cap;
    p.err = err;
    p.depth = 0;
    p.n = 0;
    p.i = 0;
    p.need_value = true;
    *count = 0;
    stg_parse_status st = pl_start(&p);
    while (st == STG_PARSE_OK) {
        skip_space(text, len, &p.i);
        bool close = false, done = false;
        st = p.need_value ? pl_value(&p, &close) : pl_after_value(&p, &close, &done);
        if (st != STG_PARSE_OK || done) {
            break;
        }
        if (close) {
            pl_close(&p);
        }
    }
    if (st == STG_PARSE_OK) {
        *count = p.n;
    }
    return st;
}

/* ---------------------------------------------------------------- dtypes */

static size_t resolve(const stg_pylit_node *nodes, size_t i)
{
    while (nodes[i].kind == STG_PYLIT_PAREN) {
        i++;
    }
    return i;
}

static const struct {
    const char *name;
    uint8_t size;
    bool object;
    uint8_t flex_unit;
} type_names[] = {
    {"object", 8, true, 0},        {"object_", 8, true, 0},        {"object0", 8, true, 0},
    {"bool", 1, false, 0},         {"bool_", 1, false, 0},         {"bool8", 1, false, 0},
    {"byte", 1, false, 0},         {"ubyte", 1, false, 0},         {"short", 2, false, 0},
    {"ushort", 2, false, 0},       {"intc", 4, false, 0},          {"uintc", 4, false, 0},
    {"int", 8, false, 0},          {"int_", 8, false, 0},          {"int0", 8, false, 0},
    {"uint", 8, false, 0},         {"uint0", 8, false, 0},         {"long", 8, false, 0},
    {"ulong", 8, false, 0},        {"longlong", 8, false, 0},      {"ulonglong", 8, false, 0},
    {"intp", 8, false, 0},         {"uintp", 8, false, 0},         {"int8", 1, false, 0},
    {"uint8", 1, false, 0},        {"int16", 2, false, 0},         {"uint16", 2, false, 0},
    {"int32", 4, false, 0},        {"uint32", 4, false, 0},        {"int64", 8, false, 0},
    {"uint64", 8, false, 0},       {"half", 2, false, 0},          {"single", 4, false, 0},
    {"double", 8, false, 0},       {"float", 8, false, 0},         {"float_", 8, false, 0},
    {"longdouble", 16, false, 0},  {"longfloat", 16, false, 0},    {"float16", 2, false, 0},
    {"float32", 4, false, 0},      {"float64", 8, false, 0},       {"float128", 16, false, 0},
    {"csingle", 8, false, 0},      {"singlecomplex", 8, false, 0}, {"cdouble", 16, false, 0},
    {"cfloat", 16, false, 0},      {"complex", 16, false, 0},      {"complex_", 16, false, 0},
    {"clongdouble", 32, false, 0}, {"clongfloat", 32, false, 0},   {"longcomplex", 32, false, 0},
    {"complex64", 8, false, 0},    {"complex128", 16, false, 0},   {"complex256", 32, false, 0},
    {"str", 0, false, 4},          {"str_", 0, false, 4},          {"str0", 0, false, 4},
    {"unicode", 0, false, 4},      {"unicode_", 0, false, 4},      {"bytes", 0, false, 1},
    {"bytes_", 0, false, 1},       {"bytes0", 0, false, 1},        {"string_", 0, false, 1},
    {"void", 0, false, 1},         {"void0", 0, false, 1},
};

/* Single-letter codes without a size ('d', 'L', '?'...) on x86-64 Linux. */
static const struct {
    char code;
    uint8_t size;
} letter_sizes[] = {
    {'?', 1}, {'B', 1}, {'h', 2}, {'H', 2}, {'I', 4},  {'l', 8}, {'L', 8},  {'q', 8},  {'Q', 8},
    {'p', 8}, {'P', 8}, {'e', 2}, {'d', 8}, {'g', 16}, {'F', 8}, {'D', 16}, {'G', 32},
};

/* A datetime unit in brackets: [N]unit[/N], unit one of numpy's. */
static bool datetime_unit(const uint8_t *s, size_t n)
{
    static const char *const units[] = {"Y",  "M",  "W",  "D",  "h",  "m",  "s",
                                        "ms", "us", "ns", "ps", "fs", "as", "generic"};
    if (n < 3 || s[0] != '[' || s[n - 1] != ']') {
        return false;
    }
    size_t i = 1, e = n - 1;
    while (i < e && s[i] >= '0' && s[i] <= '9') {
        i++;
    }
    size_t u = i;
    while (i < e && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) {
        i++;
    }
    bool known = false;
    for (size_t k = 0; k < sizeof units / sizeof units[0] && !known; k++) {
        known = strlen(units[k]) == i - u && memcmp(s + u, units[k], i - u) == 0;
    }
    if (!known) {
        return false;
    }
    if (i < e && s[i] == '/') {
        size_t d = ++i;
        while (i < e && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
        if (i == d) {
            return false;
        }
    }
    return i == e;
}

bool stg_npy_typestr(const uint8_t *s, size_t n, stg_npy_dtype *out, unsigned *flex_unit)
{
    memset(out, 0, sizeof *out);
    *flex_unit = 0;
    for (size_t k = 0; k < sizeof type_names / sizeof type_names[0]; k++) {
        if (strlen(type_names[k].name) == n && memcmp(s, type_names[k].name, n) == 0) {
            out->itemsize = type_names[k].size;
            out->has_object = type_names[k].object;
            *flex_unit = type_names[k].flex_unit;
            out->unnamed_void = type_names[k].name[0] == 'v';
            return true;
        }
    }
    size_t i = 0;
    if (n > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
        i = 1;
    }
    if (i >= n) {
        return false;
    }
    /* datetime64 / timedelta64 by name take a byte order and a unit */
    static const char *const dt_names[] = {"datetime64", "timedelta64"};
    for (size_t k = 0; k < 2; k++) {
        size_t l = strlen(dt_names[k]);
        if (n - i >= l && memcmp(s + i, dt_names[k], l) == 0 &&
            (n - i == l || datetime_unit(s + i + l, n - i - l))) {
            out->itemsize = 8;
            return true;
        }
    }
    uint8_t code = s[i++];
    size_t digits_at = i;
    uint64_t v = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (v > (uint64_t)INT32_MAX) {
            return false;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    bool sized = i > digits_at;
    if (code == 'M' || code == 'm') {
        /* a unit needs the size: 'M8[ms]' is a dtype, 'M[ms]' is not (numpy refuses it) */
        if ((sized && v != 8) || (i < n && (!sized || !datetime_unit(s + i, n - i)))) {
            return false;
        }
        out->itemsize = 8;
        return true;
    }
    if (i != n) {
        return false;
    }
    switch (code) {
    case 'O':
        if (sized && v != 4 && v != 8) {
            return false;
        }
        out->has_object = true;
        out->itemsize = 8;
        return true;
    case 'S':
    case 'a':
    case 'V':
    case 'U':
        if (code == 'U' && v > (uint64_t)INT32_MAX / 4) {
            return false;
        }
        if (v > (uint64_t)INT32_MAX) {
            return false;
        }
        *flex_unit = code == 'U' ? 4 : 1;
        out->itemsize = v * *flex_unit;
        out->unnamed_void = code == 'V';
        return true;
    case 'b': out->itemsize = 1; return !sized || v == 1;
    case 'i': out->itemsize = sized ? v : 4; return !sized || v == 1 || v == 2 || v == 4 || v == 8;
    case 'u': out->itemsize = v; return sized && (v == 1 || v == 2 || v == 4 || v == 8);
    case 'f': out->itemsize = sized ? v : 4; return !sized || v == 2 || v == 4 || v == 8 || v == 16;
    case 'c':
        out->itemsize = sized ? v : 1; /* 'c' alone is S1 */
        return !sized || v == 8 || v == 16 || v == 32;
    default: break;
    }
    if (sized) {
        return false;
    }
    for (size_t k = 0; k < sizeof letter_sizes / sizeof letter_sizes[0]; k++) {
        if ((uint8_t)letter_sizes[k].code == code) {
            out->itemsize = letter_sizes[k].size;
            return true;
        }
    }
    return false;
}

/* numpy.dtype((base, shape)): shape an int or a tuple of ints >= 0. A flexible base of size 0
 * takes an int as its size ('U', 5) -> U5. */
static bool apply_subarray(const stg_pylit_node *nodes, size_t shape_at, const stg_npy_dtype *base,
                           stg_npy_dtype *out)
{
    size_t s = resolve(nodes, shape_at);
    const stg_pylit_node *sn = &nodes[s];
    uint64_t prod = 1;
    *out = *base;
    out->flex_unit = 0;
    if (sn->kind == STG_PYLIT_INT) {
        if (sn->big || sn->ival < 0) {
            return false;
        }
        if (base->itemsize == 0 && base->flex_unit != 0) {
            /* a flexible type of that size: V5 stays an unnamed void, U5 and S5 do not */
            return !stg_mul_u64((uint64_t)sn->ival, base->flex_unit, &out->itemsize) &&
                   out->itemsize <= (uint64_t)INT32_MAX;
        }
        prod = (uint64_t)sn->ival;
        /* (base, 1) is base itself (a deprecated synonym); other counts make a subarray */
        out->unnamed_void = prod == 1 ? base->unnamed_void : true;
    } else if (sn->kind == STG_PYLIT_TUPLE) {
        /* (base, ()) is base itself; any other tuple makes a subarray, a numpy.void */
        out->unnamed_void = sn->count == 0 ? base->unnamed_void : true;
        size_t c = s + 1;
        for (uint32_t k = 0; k < sn->count; k++) {
            size_t d = resolve(nodes, c);
            if (nodes[d].kind != STG_PYLIT_INT || nodes[d].big || nodes[d].ival < 0 ||
                stg_mul_u64(prod, (uint64_t)nodes[d].ival, &prod)) {
                return false;
            }
            c = nodes[c].next;
        }
    } else {
        return false; /* (base, other dtype) views and the rest: not read here */
    }
    return !stg_mul_u64(base->itemsize, prod, &out->itemsize) &&
           out->itemsize <= (uint64_t)INT64_MAX;
}

/* Two string nodes with the same value (decoded when short; longer ones compare raw, which
 * can only miss a duplicate numpy would refuse, never invent one). */
static bool same_str(const uint8_t *src, const stg_pylit_node *a, const stg_pylit_node *b,
                     bool latin1)
{
    uint8_t da[NPY_TYPESTR_MAX], db[NPY_TYPESTR_MAX];
    size_t la, lb;
    if (stg_pylit_str(src, a, latin1, da, sizeof da, &la) &&
        stg_pylit_str(src, b, latin1, db, sizeof db, &lb)) {
        return la == lb && memcmp(da, db, la) == 0;
    }
    return a->len == b->len && a->raw == b->raw && memcmp(src + a->off, src + b->off, a->len) == 0;
}

/* One node as a descriptor, its children already evaluated. */
static bool eval_node(const uint8_t *src, const stg_pylit_node *nodes, size_t j, bool latin1,
                      stg_npy_dtype *sc)
{
    const stg_pylit_node *nd = &nodes[j];
    stg_npy_dtype *out = &sc[j];
    switch ((stg_pylit_kind)nd->kind) {
    case STG_PYLIT_STR: {
        uint8_t buf[NPY_TYPESTR_MAX];
        size_t bl;
        unsigned unit;
        if (!stg_pylit_str(src, nd, latin1, buf, sizeof buf, &bl) ||
            !stg_npy_typestr(buf, bl, out, &unit)) {
            return false;
        }
        out->flex_unit = (uint8_t)unit;
        return true;
    }
    case STG_PYLIT_PAREN: *out = sc[j + 1]; return out->ok;
    case STG_PYLIT_TUPLE: {
        /* (descr, shape[, ignored...]) as descr_to_dtype reads descr[0], descr[1] */
        if (nd->count < 2) {
            return false;
        }
        size_t c0 = j + 1, c1 = nodes[c0].next;
        return sc[c0].ok && apply_subarray(nodes, c1, &sc[c0], out);
    }
    case STG_PYLIT_LIST: {
        /* descr_to_dtype: fields (name, descr[, shape]); an empty name on an unnamed void is
         * padding, which counts for the size only (an object inside it is never read) */
        size_t f = j + 1, used[NPY_DUP_CHECK_MAX];
        uint32_t nused = 0;
        memset(out, 0, sizeof *out);
        for (uint32_t k = 0; k < nd->count; k++, f = nodes[f].next) {
            size_t fr = resolve(nodes, f);
            const stg_pylit_node *fn = &nodes[fr];
            if ((fn->kind != STG_PYLIT_TUPLE && fn->kind != STG_PYLIT_LIST) || fn->count < 2 ||
                fn->count > 3) {
                return false; /* fields spelled as 2-character strings, dicts...: not read */
            }
            size_t name = resolve(nodes, fr + 1), descr = nodes[fr + 1].next;
            size_t real = name, title = SIZE_MAX;
            if (nodes[name].kind == STG_PYLIT_TUPLE && nodes[name].count == 2) {
                title = resolve(nodes, name + 1);
                real = resolve(nodes, nodes[name + 1].next);
                uint8_t tk = nodes[title].kind;
                if (tk != STG_PYLIT_STR && tk != STG_PYLIT_NONE && tk != STG_PYLIT_INT &&
                    tk != STG_PYLIT_BOOL && tk != STG_PYLIT_BYTES) {
                    return false;
                }
            }
            if (nodes[real].kind != STG_PYLIT_STR || !sc[descr].ok) {
                return false; /* numpy: field names must be strings */
            }
            stg_npy_dtype field = sc[descr];
            if (fn->count == 3 && !apply_subarray(nodes, nodes[descr].next, &sc[descr], &field)) {
                return false;
            }
            uint8_t tmp[1];
            size_t tl = 1;
            bool pad = title == SIZE_MAX && field.unnamed_void &&
                       stg_pylit_str(src, &nodes[real], latin1, tmp, 0, &tl) && tl == 0;
            if (!pad) {
                out->has_object = out->has_object || field.has_object;
                size_t ids[2] = {real, title};
                for (int q = 0; q < 2; q++) {
                    if (ids[q] == SIZE_MAX || nodes[ids[q]].kind != STG_PYLIT_STR) {
                        continue;
                    }
                    for (uint32_t u = 0; u < nused; u++) {
                        if (same_str(src, &nodes[used[u]], &nodes[ids[q]], latin1)) {
                            return false; /* numpy: name already used as a name or title */
                        }
                    }
                    if (nused < NPY_DUP_CHECK_MAX) {
                        used[nused++] = ids[q];
                    }
                }
            }
            if (stg_add_u64(out->itemsize, field.itemsize, &out->itemsize) ||
                out->itemsize > (uint64_t)INT64_MAX) {
                return false;
            }
        }
        return true;
    }
    case STG_PYLIT_BYTES:
    case STG_PYLIT_INT:
    case STG_PYLIT_BOOL:
    case STG_PYLIT_NONE:
    case STG_PYLIT_DICT: break;
    }
    return false;
}

stg_parse_status stg_npy_descr(const uint8_t *src, const stg_pylit_node *nodes, size_t count,
                               size_t root, bool latin1, stg_npy_dtype *scratch, stg_npy_dtype *out,
                               stg_npy_error *err)
{
    if (root >= count) {
        return fail(err, 0, "no descriptor");
    }
    size_t end = nodes[root].next;
    for (size_t j = end; j-- > root;) {
        scratch[j].ok = false;
        scratch[j].ok = eval_node(src, nodes, j, latin1, scratch);
    }
    if (!scratch[root].ok) {
        return fail(err, nodes[root].off, "the descriptor is not a dtype this reader knows");
    }
    *out = scratch[root];
    return STG_PARSE_OK;
}

/* ---------------------------------------------------------------- header */

static stg_parse_status frame(const uint8_t *buf, size_t len, stg_npy_header *out,
                              stg_npy_error *err)
{
    static const uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    stg_cursor c = stg_cur_make(buf, buf == NULL ? 0 : len);
    const uint8_t *p;
    if (stg_cur_take(&c, 6, &p) != STG_OK || memcmp(p, magic, 6) != 0) {
        return fail(err, 0, "the magic \\x93NUMPY is missing");
    }
    if (stg_cur_u8(&c, &out->major) != STG_OK || stg_cur_u8(&c, &out->minor) != STG_OK ||
        out->major < 1 || out->major > 3 || out->minor != 0) {
        return fail(err, 6, "unsupported format version (numpy reads 1.0, 2.0 and 3.0)");
    }
    uint64_t hlen;
    if (out->major == 1) {
        uint16_t h16;
        if (stg_cur_le16(&c, &h16) != STG_OK) {
            return fail(err, 8, "the header length is truncated");
        }
        hlen = h16;
    } else {
        uint32_t h32;
        if (stg_cur_le32(&c, &h32) != STG_OK) {
            return fail(err, 8, "the header length is truncated");
        }
        hlen = h32;
    }
    out->dict_offset = c.pos;
    if (hlen > stg_cur_avail(&c)) {
        return fail(err, 8, "the header runs past the end of the data");
    }
    out->dict_len = (size_t)hlen;
    out->data_offset = c.pos + (size_t)hlen;
    return STG_PARSE_OK;
}

size_t stg_npy_nodes_needed(const uint8_t *buf, size_t len, const stg_npy_limits *lim)
{
    stg_npy_header h;
    stg_npy_error err;
    if (frame(buf, len, &h, &err) != STG_PARSE_OK) {
        return 0;
    }
    size_t need = h.dict_len + 1;
    return need > (size_t)lim->max_nodes + 1 ? (size_t)lim->max_nodes + 1 : need;
}

/* The value of key `key` in the header dict (last one wins, as in a Python dict). */
static bool dict_keys(const uint8_t *buf, const stg_pylit_node *nodes, size_t dict, bool latin1,
                      size_t at[3], stg_npy_error *err)
{
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    at[0] = at[1] = at[2] = SIZE_MAX;
    size_t c = dict + 1;
    for (uint32_t k = 0; k + 1 < nodes[dict].count; k += 2) {
        size_t kn = resolve(nodes, c), v = nodes[c].next;
        uint8_t name[16];
        size_t nl = 0;
        bool known = false;
        if (nodes[kn].kind == STG_PYLIT_STR &&
            stg_pylit_str(buf, &nodes[kn], latin1, name, sizeof name, &nl)) {
            for (size_t q = 0; q < 3 && !known; q++) {
                if (strlen(keys[q]) == nl && memcmp(name, keys[q], nl) == 0) {
                    at[q] = resolve(nodes, v);
                    known = true;
                }
            }
        }
        if (!known) {
            (void)fail(err, nodes[kn].off,
                       "the header has a key other than descr, "
                       "fortran_order and shape");
            return false;
        }
        c = nodes[v].next;
    }
    for (size_t q = 0; q < 3; q++) {
        if (at[q] == SIZE_MAX) {
            (void)fail(err, nodes[dict].off, "the header lacks one of descr, fortran_order, shape");
            return false;
        }
    }
    return true;
}

stg_parse_status stg_npy_read(const uint8_t *buf, size_t len, const stg_npy_limits *lim,
                              stg_pylit_node *nodes, stg_npy_dtype *scratch, size_t cap,
                              stg_npy_header *out, stg_npy_error *err)
{
    memset(out, 0, sizeof *out);
    stg_parse_status st = frame(buf, len, out, err);
    if (st != STG_PARSE_OK) {
        return st;
    }
    if (out->dict_len > lim->max_header_len) {
        return limit_fail(err, 8, "the .npy header is longer than the limit", "max_header_len", 0);
    }
    bool latin1 = out->major < 3;
    size_t count = 0;
    size_t node_cap = cap < (size_t)lim->max_nodes ? cap : (size_t)lim->max_nodes;
    uint32_t depth = lim->max_depth < STG_NPY_DEPTH_CEILING ? lim->max_depth
                                                            : STG_NPY_DEPTH_CEILING;
    st = stg_pylit_parse(buf + out->dict_offset, out->dict_len, out->dict_offset, latin1, latin1,
                         depth, nodes, node_cap, &count, err);
    if (st == STG_PARSE_LIMIT && err->reason == STG_NPY_E_NODES && node_cap == cap &&
        cap < (size_t)lim->max_nodes) {
        err->limit = NULL; /* the caller's array, not the limit, was too small */
        return STG_PARSE_LIMIT;
    }
    if (st != STG_PARSE_OK) {
        return st;
    }
    if (count == 0) {
        return fail(err, out->dict_offset, "the header is empty");
    }
    size_t root = resolve(nodes, 0);
    if (nodes[root].kind != STG_PYLIT_DICT) {
        return fail(err, nodes[root].off, "the header is not a dict");
    }
    size_t at[3];
    if (!dict_keys(buf, nodes, root, latin1, at, err)) {
        return STG_PARSE_MALFORMED;
    }
    out->descr_node = at[0];
    out->shape_node = at[2];
    const stg_pylit_node *shape = &nodes[at[2]], *order = &nodes[at[1]];
    if (shape->kind != STG_PYLIT_TUPLE) {
        return fail(err, shape->off, "shape is not a tuple");
    }
    out->count_known = true;
    out->count = 1;
    out->ndim = shape->count;
    size_t c = at[2] + 1;
    for (uint32_t k = 0; k < shape->count; k++, c = nodes[c].next) {
        const stg_pylit_node *d = &nodes[resolve(nodes, c)];
        if ((d->kind != STG_PYLIT_INT && d->kind != STG_PYLIT_BOOL) || d->big) {
            /* numpy multiplies the dimensions as int64: a bigger int fails there */
            return fail(err, d->off, "a shape dimension is not an int64");
        }
        if (d->ival < 0 || stg_mul_u64(out->count, (uint64_t)d->ival, &out->count)) {
            out->count_known = false;
        }
    }
    if (order->kind != STG_PYLIT_BOOL) {
        return fail(err, order->off, "fortran_order is not True or False");
    }
    out->fortran_order = order->ival != 0;
    return stg_npy_descr(buf, nodes, count, at[0], latin1, scratch, &out->dtype, err);
}
