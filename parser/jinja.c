/* Jinja2 lexer (see jinja.h). The states and their order follow jinja2's lexer.py: in the
 * root state the text up to the next `{{`, `{%` or `{#` is data; inside a tag, whitespace is
 * skipped and the end of the tag is tried first (only when no bracket is open), then a float,
 * an integer, a name, a string and an operator, the longest operator first. */
#include "jinja.h"

#include <string.h>

#include "mem.h"

typedef struct lexer {
    stg_jinja_lex *lx;
    const uint8_t *s;
    size_t len, pos;
    uint8_t brackets[STG_JINJA_MAX_BRACKETS];
    size_t depth;
} lexer;

static bool fail(lexer *L, stg_jinja_error e, size_t at, const char *why)
{
    L->lx->error = e;
    L->lx->error_offset = at;
    L->lx->why = why;
    return false;
}

static bool limit(lexer *L, size_t at, const char *name)
{
    L->lx->limit = name;
    return fail(L, STG_JINJA_E_LIMIT, at, "a limit of the template reader was reached");
}

static bool push(lexer *L, stg_jinja_tok_type type, size_t at, size_t n, uint8_t op)
{
    stg_jinja_lex *lx = L->lx;
    if (lx->count >= STG_JINJA_MAX_TOKENS) {
        return limit(L, at, "chat template tokens");
    }
    if (lx->count == lx->cap) {
        size_t cap = lx->cap == 0 ? 256 : lx->cap * 2;
        stg_jinja_tok *t = stg_mem_realloc(lx->toks, cap * sizeof *t);
        if (t == NULL) {
            return fail(L, STG_JINJA_E_MEMORY, at, "out of memory");
        }
        lx->toks = t;
        lx->cap = cap;
    }
    /* at and n are below STG_JINJA_MAX_BYTES (checked on entry): they fit 32 bits */
    lx->toks[lx->count++] = (stg_jinja_tok){(uint32_t)at, (uint32_t)n, (uint8_t)type, op};
    return true;
}

static bool starts(const lexer *L, size_t at, const char *lit)
{
    size_t n = strlen(lit);
    return n <= L->len - at && memcmp(L->s + at, lit, n) == 0;
}

static bool is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* Python identifiers: ASCII letters, digits, underscore, and (approximately) any non-ASCII
 * character, which str.isidentifier accepts for letters of every script. */
static bool is_name_char(uint8_t c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80 ||
           (!first && is_digit(c));
}

/* The offset of the next `{{`, `{%` or `{#` from `from`, len when none. */
static size_t next_tag(const lexer *L, size_t from)
{
    for (size_t i = from; i + 1 < L->len; i++) {
        if (L->s[i] == '{' && (L->s[i + 1] == '{' || L->s[i + 1] == '%' || L->s[i + 1] == '#')) {
            return i;
        }
    }
    return L->len;
}

/* After `{%` at `at`: true with *end set past `%}` when the tag is `{% raw %}` (marks and
 * whitespace allowed), as jinja2's raw_begin rule reads it. */
static bool raw_tag(const lexer *L, size_t at, const char *word, size_t *end)
{
    size_t i = at + 2;
    if (i < L->len && (L->s[i] == '-' || L->s[i] == '+')) {
        i++;
    }
    while (i < L->len && is_space(L->s[i])) {
        i++;
    }
    size_t n = strlen(word);
    if (!starts(L, i, word) || (i + n < L->len && is_name_char(L->s[i + n], false))) {
        return false;
    }
    i += n;
    while (i < L->len && is_space(L->s[i])) {
        i++;
    }
    if (i < L->len && (L->s[i] == '-' || L->s[i] == '+')) {
        i++;
    }
    if (!starts(L, i, "%}")) {
        return false;
    }
    *end = i + 2;
    return true;
}

/* `{% raw %}` at `at`: its content up to `{% endraw %}` is data. */
static bool lex_raw(lexer *L, size_t at, size_t body)
{
    for (size_t i = body; (i = next_tag(L, i)) < L->len; i++) {
        size_t end;
        if (L->s[i + 1] == '%' && raw_tag(L, i, "endraw", &end)) {
            if (i > body && !push(L, STG_JT_DATA, body, i - body, 0)) {
                return false;
            }
            L->pos = end;
            return true;
        }
    }
    return fail(L, STG_JINJA_E_SYNTAX, at, "a raw block is never closed ({% endraw %})");
}

static bool lex_comment(lexer *L, size_t at)
{
    for (size_t i = at + 2; i + 1 < L->len; i++) {
        if (L->s[i] == '#' && L->s[i + 1] == '}') {
            L->pos = i + 2;
            return true;
        }
    }
    return fail(L, STG_JINJA_E_SYNTAX, at, "a comment is never closed (#})");
}

static size_t digits(const lexer *L, size_t i)
{
    /* (\d+_)*\d+ */
    size_t start = i;
    while (i < L->len && (is_digit(L->s[i]) || (L->s[i] == '_' && i > start && i + 1 < L->len &&
                                                is_digit(L->s[i + 1])))) {
        i++;
    }
    return i;
}

/* A number at L->pos (a digit is there). A float needs a fraction or an exponent and, as in
 * jinja2, is not read right after a `.` (`a.0.1` is two subscripts). */
/* 0x / 0o / 0b integers (jinja2's integer_re, case-insensitive, '_' between digits): the
 * index past the literal, or `at` when there is no such prefix. */
static size_t prefixed_integer(const lexer *L, size_t at)
{
    if (L->s[at] != '0' || at + 2 >= L->len) {
        return at;
    }
    uint8_t base = (uint8_t)(L->s[at + 1] | 0x20);
    if (base != 'x' && base != 'o' && base != 'b') {
        return at;
    }
    size_t i = at + 2;
    for (; i < L->len; i++) {
        uint8_t c = (uint8_t)(L->s[i] | 0x20);
        bool digit = base == 'x'   ? (is_digit(L->s[i]) || (c >= 'a' && c <= 'f'))
                     : base == 'o' ? (L->s[i] >= '0' && L->s[i] <= '7')
                                   : (L->s[i] == '0' || L->s[i] == '1');
        if (!digit && !(L->s[i] == '_' && i + 1 < L->len)) {
            break;
        }
    }
    return i > at + 2 ? i : at;
}

static bool lex_number(lexer *L)
{
    size_t at = L->pos, i = prefixed_integer(L, at);
    if (i > at) {
        L->pos = i;
        return push(L, STG_JT_INTEGER, at, i - at, 0);
    }
    i = digits(L, at);
    bool after_dot = L->lx->count > 0 && L->lx->toks[L->lx->count - 1].type == STG_JT_OP &&
                     L->lx->toks[L->lx->count - 1].op == '.';
    bool is_float = false;
    if (!after_dot && i + 1 < L->len && L->s[i] == '.' && is_digit(L->s[i + 1])) {
        i = digits(L, i + 1);
        is_float = true;
    }
    if (!after_dot && i < L->len && (L->s[i] == 'e' || L->s[i] == 'E')) {
        size_t j = i + 1;
        if (j < L->len && (L->s[j] == '+' || L->s[j] == '-')) {
            j++;
        }
        if (j < L->len && is_digit(L->s[j])) {
            i = digits(L, j);
            is_float = true;
        }
    }
    L->pos = i;
    return push(L, is_float ? STG_JT_FLOAT : STG_JT_INTEGER, at, i - at, 0);
}

static bool lex_string(lexer *L)
{
    size_t at = L->pos;
    uint8_t q = L->s[at];
    for (size_t i = at + 1; i < L->len; i++) {
        if (L->s[i] == '\\') {
            i++;
        } else if (L->s[i] == q) {
            L->pos = i + 1;
            return push(L, STG_JT_STRING, at, i + 1 - at, 0);
        }
    }
    return fail(L, STG_JINJA_E_SYNTAX, at, "a string is never closed");
}

static bool lex_operator(lexer *L)
{
    static const struct {
        char text[3];
        uint8_t op;
    } two[] = {{"//", STG_JOP_FLOORDIV}, {"**", STG_JOP_POW}, {"==", STG_JOP_EQ},
               {"!=", STG_JOP_NE},       {">=", STG_JOP_GE},  {"<=", STG_JOP_LE}};
    size_t at = L->pos;
    for (size_t k = 0; k < sizeof two / sizeof two[0]; k++) {
        if (starts(L, at, two[k].text)) {
            L->pos = at + 2;
            return push(L, STG_JT_OP, at, 2, two[k].op);
        }
    }
    uint8_t c = L->s[at];
    if (memchr("+-/*%~[](){}><=.:|,;", c, 21) == NULL || c == 0) {
        return fail(L, STG_JINJA_E_SYNTAX, at, "a character no Jinja token starts with");
    }
    if (c == '(' || c == '[' || c == '{') {
        if (L->depth >= STG_JINJA_MAX_BRACKETS) {
            return limit(L, at, "chat template bracket depth");
        }
        L->brackets[L->depth++] = c;
    } else if (c == ')' || c == ']' || c == '}') {
        uint8_t want = c == ')' ? '(' : c == ']' ? '[' : '{';
        if (L->depth == 0 || L->brackets[L->depth - 1] != want) {
            return fail(L, STG_JINJA_E_BRACKET, at,
                        "a closing bracket that matches no opening one");
        }
        L->depth--;
    }
    L->pos = at + 1;
    return push(L, STG_JT_OP, at, 1, c);
}

/* The end of the tag at L->pos (`-`/`+` mark allowed before it), only with no open bracket. */
static bool tag_ends(const lexer *L, char closer, size_t *n)
{
    size_t i = L->pos;
    if (L->depth != 0) {
        return false;
    }
    if (i < L->len && (L->s[i] == '-' || L->s[i] == '+')) {
        i++;
    }
    if (i + 1 < L->len && L->s[i] == closer && L->s[i + 1] == '}') {
        *n = i + 2 - L->pos;
        return true;
    }
    return false;
}

/* The inside of a `{{ }}` or `{% %}` tag opened at `at`, up to and including its end. */
static bool lex_tag(lexer *L, size_t at, bool block)
{
    L->depth = 0;
    while (L->pos < L->len) {
        uint8_t c = L->s[L->pos];
        size_t n;
        if (is_space(c)) {
            L->pos++;
        } else if (tag_ends(L, block ? '%' : '}', &n)) {
            if (!push(L, block ? STG_JT_BLOCK_END : STG_JT_VAR_END, L->pos, n, 0)) {
                return false;
            }
            L->pos += n;
            return true;
        } else if (is_digit(c)) {
            if (!lex_number(L)) {
                return false;
            }
        } else if (is_name_char(c, true)) {
            size_t s = L->pos;
            while (L->pos < L->len && is_name_char(L->s[L->pos], false)) {
                L->pos++;
            }
            if (!push(L, STG_JT_NAME, s, L->pos - s, 0)) {
                return false;
            }
        } else if (c == '\'' || c == '"') {
            if (!lex_string(L)) {
                return false;
            }
        } else if (!lex_operator(L)) {
            return false;
        }
    }
    return fail(L, STG_JINJA_E_SYNTAX, at, "a tag is never closed");
}

static bool lex_all(lexer *L)
{
    while (L->pos < L->len) {
        size_t at = next_tag(L, L->pos);
        if (at > L->pos && !push(L, STG_JT_DATA, L->pos, at - L->pos, 0)) {
            return false;
        }
        if (at >= L->len) {
            break;
        }
        uint8_t kind = L->s[at + 1];
        size_t raw_end;
        bool ok;
        if (kind == '#') {
            ok = lex_comment(L, at);
        } else if (kind == '%' && raw_tag(L, at, "raw", &raw_end)) {
            ok = lex_raw(L, at, raw_end);
        } else {
            size_t n = at + 2 < L->len && (L->s[at + 2] == '-' || L->s[at + 2] == '+') ? 3 : 2;
            ok = push(L, kind == '%' ? STG_JT_BLOCK_BEGIN : STG_JT_VAR_BEGIN, at, n, 0);
            L->pos = at + n;
            ok = ok && lex_tag(L, at, kind == '%');
        }
        if (!ok) {
            return false;
        }
    }
    return push(L, STG_JT_EOF, L->len, 0, 0);
}

bool stg_jinja_lex_run(stg_jinja_lex *lx, const uint8_t *text, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lexer L = {.lx = lx, .s = text, .len = len};
    if (len > STG_JINJA_MAX_BYTES) {
        return limit(&L, 0, "chat template bytes");
    }
    return lex_all(&L);
}

void stg_jinja_lex_release(stg_jinja_lex *lx)
{
    stg_mem_free(lx->toks);
    lx->toks = NULL;
    lx->count = lx->cap = 0;
}

/* ---------------------------------------------------------------- string values */

static int hex_value(uint8_t c)
{
    if (is_digit(c)) {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

typedef struct out_buf {
    uint8_t *dst;
    size_t cap, n;
    bool exact;
} out_buf;

static void put(out_buf *o, uint8_t c)
{
    if (o->n < o->cap) {
        o->dst[o->n++] = c;
    } else {
        o->exact = false;
    }
}

static void put_code_point(out_buf *o, uint32_t cp)
{
    if (cp < 0x80) {
        put(o, (uint8_t)cp);
    } else if (cp < 0x800) {
        put(o, (uint8_t)(0xc0 | (cp >> 6)));
        put(o, (uint8_t)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        put(o, (uint8_t)(0xe0 | (cp >> 12)));
        put(o, (uint8_t)(0x80 | ((cp >> 6) & 0x3f)));
        put(o, (uint8_t)(0x80 | (cp & 0x3f)));
    } else {
        put(o, (uint8_t)(0xf0 | (cp >> 18)));
        put(o, (uint8_t)(0x80 | ((cp >> 12) & 0x3f)));
        put(o, (uint8_t)(0x80 | ((cp >> 6) & 0x3f)));
        put(o, (uint8_t)(0x80 | (cp & 0x3f)));
    }
}

/* A \x, \u or \U escape of `n` hex digits at s[i..): the code point, or -1 (Python refuses
 * the literal: jinja2 then fails to compile the template). */
static long hex_escape(const uint8_t *s, size_t end, size_t i, size_t n)
{
    if (n > end - i) {
        return -1;
    }
    long v = 0;
    for (size_t k = 0; k < n; k++) {
        int h = hex_value(s[i + k]);
        if (h < 0) {
            return -1;
        }
        v = v * 16 + h;
    }
    return v <= 0x10ffff ? v : -1;
}

/* One escape whose backslash is at s[i - 1]; returns the index past it. */
static size_t decode_escape(const uint8_t *s, size_t end, size_t i, out_buf *o)
{
    static const char simple_in[] = "\\'\"abfnrtv";
    static const char simple_out[] = "\\'\"\a\b\f\n\r\t\v";
    uint8_t e = s[i];
    const char *hit = memchr(simple_in, e, sizeof simple_in - 1);
    if (hit != NULL) {
        put(o, (uint8_t)simple_out[hit - simple_in]);
        return i + 1;
    }
    if (e == '\n') {
        return i + 1; /* a backslash-newline is a line continuation */
    }
    if (e >= '0' && e <= '7') {
        uint32_t v = 0;
        size_t k = i;
        while (k < end && k < i + 3 && s[k] >= '0' && s[k] <= '7') {
            v = v * 8 + (uint32_t)(s[k++] - '0');
        }
        put_code_point(o, v);
        return k;
    }
    size_t width = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (width != 0) {
        long cp = hex_escape(s, end, i + 1, width);
        if (cp < 0) {
            o->exact = false;
            return i + 1;
        }
        put_code_point(o, (uint32_t)cp);
        return i + 1 + width;
    }
    if (e == 'N') {
        o->exact = false; /* \N{LOW LINE} is "_": a name table stguard does not carry */
        return i + 1;
    }
    put(o, '\\'); /* an unknown escape stays as it is */
    return i;
}

size_t stg_jinja_string_value(const uint8_t *text, const stg_jinja_tok *t, uint8_t *dst, size_t cap,
                              bool *exact)
{
    out_buf o = {dst, cap, 0, true};
    size_t end = (size_t)t->offset + t->len - 1; /* the closing quote */
    for (size_t i = (size_t)t->offset + 1; i < end;) {
        uint8_t c = text[i];
        if (c == '\\' && i + 1 < end) {
            i = decode_escape(text, end, i + 1, &o);
        } else if (c == '\r') {
            /* jinja2 normalises \r\n and \r to \n inside strings */
            put(&o, '\n');
            i += i + 1 < end && text[i + 1] == '\n' ? 2 : 1;
        } else {
            put(&o, c);
            i++;
        }
    }
    *exact = o.exact;
    return o.n;
}
