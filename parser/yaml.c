/* The YAML subset reader (see yaml.h). Block structure is read line by line with an explicit
 * stack of open collections (their indentation), flow collections with a stack of their own;
 * every read of the input goes through peek(), which answers 0 past the end (a byte the
 * character check below has already refused inside the input, so 0 only ever means "end").
 * Where YAML and this reader could differ (line folding, type-free scalars, the characters
 * YAML 1.1 reads as breaks), the input is refused rather than read another way: the
 * differential test (tests/remotecode/script_yaml_differential.sh) holds the reader to
 * PyYAML's composer on everything it accepts. */
#include "yaml.h"

#include <string.h>

#include "text.h"
#include "util.h"

#define NO_INDENT (-1)

typedef struct yaml_frame {
    uint8_t kind;     /* STG_YAML_MAP or STG_YAML_SEQ */
    bool same_indent; /* a sequence at its key's indentation (`key:\n- a`) */
    long indent;      /* column of its keys or dashes */
    size_t node;      /* its node */
} yaml_frame;

typedef struct yaml_anchor {
    const uint8_t *name;
    size_t len;
    size_t node;
} yaml_anchor;

typedef struct flow_frame {
    uint8_t kind;
    uint8_t state; /* 0: an entry (or the close) is due; 1: ',' or the close is due; maps:
                      2: a key was read, ':' (or ',' / '}') is due; 3: its value is due */
    size_t node;
    size_t key_at; /* state 2: where the key began */
} flow_frame;

typedef struct yaml_reader {
    const uint8_t *buf;
    size_t len, pos; /* pos: start of the line to read next */
    stg_arena *arena;
    stg_yaml_doc *doc;
    size_t max_nodes;
    yaml_frame stack[STG_YAML_DEPTH_CEILING];
    uint32_t depth, max_depth;
    bool pending;        /* a key or dash whose value has not come yet */
    bool pending_in_map; /* ... a key (a sequence may follow at its indentation) */
    long pending_indent; /* the indentation of that key's mapping or dash's sequence */
    size_t pending_offset;
    /* anchors: a name is defined once (PyYAML's composer refuses a second); an alias copies the anchored
     * node's subtree, so aliases cost nodes and the node limit bounds any expansion */
    yaml_anchor anchors[STG_YAML_ANCHORS_CEILING];
    size_t anchor_count, alias_count;
    const uint8_t *anchor_next; /* an anchor read, for the next node made */
    size_t anchor_next_len;
    const flow_frame *flow_open; /* the open flow collections (read_flow), flow_depth of them */
    const uint32_t *flow_depth;
    bool root_done; /* the root node is complete (a scalar) or was opened */
    bool root_scalar;
    bool failed;
} yaml_reader;

static uint8_t peek(const yaml_reader *r, size_t i)
{
    return i < r->len ? r->buf[i] : 0;
}

static bool fail(yaml_reader *r, stg_yaml_status st, size_t at, const char *what)
{
    if (!r->failed) {
        r->failed = true;
        r->doc->status = st;
        r->doc->error_offset = at < r->len ? at : r->len;
        r->doc->error_what = what;
    }
    return false;
}

static bool is_break_or_end(uint8_t c)
{
    return c == 0 || c == '\n' || c == '\r';
}

/* Blanks are spaces: PyYAML refuses a tab wherever a token or separation is due ("found
 * character '\t' that cannot start any token"), so a tab outside quotes and block scalars is
 * refused here (as unsupported: a YAML 1.2 reader takes some of them). */
static bool is_blank(uint8_t c)
{
    return c == ' ';
}

static bool is_ws_or_end(uint8_t c)
{
    return is_blank(c) || is_break_or_end(c);
}

static bool is_flow_indicator(uint8_t c)
{
    return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

/* End of the line at i: the '\n' (or '\r' of "\r\n"), or len. */
static size_t line_end(const yaml_reader *r, size_t i)
{
    const uint8_t *nl = i < r->len ? memchr(r->buf + i, '\n', r->len - i) : NULL;
    size_t e = nl != NULL ? (size_t)(nl - r->buf) : r->len;
    return e > i && peek(r, e - 1) == '\r' ? e - 1 : e;
}

/* Start of the next line after the line ending at e. */
static size_t next_line(const yaml_reader *r, size_t e)
{
    if (peek(r, e) == '\r') {
        e++;
    }
    return e < r->len ? e + 1 : r->len;
}

/* true when only blanks and a comment are left in [i, e). */
static bool rest_is_empty(const yaml_reader *r, size_t i, size_t e)
{
    while (i < e && is_blank(peek(r, i))) {
        i++;
    }
    return i >= e || peek(r, i) == '#';
}

/* ------------------------------------------------------------------------ characters */

/* The characters PyYAML's reader refuses (non-printable) or reads otherwise than this reader
 * (extra line breaks, a BOM inside): checked over the whole input first. */
static bool check_characters(yaml_reader *r, size_t from)
{
    for (size_t i = from; i < r->len;) {
        uint8_t c = r->buf[i];
        if (c < 0x80u) {
            if (c == '\r' && peek(r, i + 1) != '\n') {
                return fail(r, STG_YAML_E_UNSUPPORTED, i, "a carriage return alone");
            }
            if ((c < 0x20u && c != '\t' && c != '\n' && c != '\r') || c == 0x7Fu) {
                return fail(r, STG_YAML_E_SYNTAX, i, "a control character");
            }
            i++;
            continue;
        }
        size_t n = stg_utf8_seq(r->buf + i, r->len - i, false);
        if (n == 0) {
            return fail(r, STG_YAML_E_SYNTAX, i, "invalid UTF-8");
        }
        uint32_t cp = n == 2 ? ((uint32_t)(c & 0x1Fu) << 6) | (r->buf[i + 1] & 0x3Fu)
                      : n == 3
                          ? ((uint32_t)(c & 0x0Fu) << 12) |
                                ((uint32_t)(r->buf[i + 1] & 0x3Fu) << 6) | (r->buf[i + 2] & 0x3Fu)
                          : 0x10000u;
        if (cp == 0x85u || cp == 0x2028u || cp == 0x2029u || cp == 0xFEFFu) {
            return fail(r, STG_YAML_E_UNSUPPORTED, i, "a character YAML 1.1 reads as a break");
        }
        if ((cp >= 0x80u && cp <= 0x9Fu) || cp == 0xFFFEu || cp == 0xFFFFu) {
            return fail(r, STG_YAML_E_SYNTAX, i, "a non-printable character");
        }
        i += n;
    }
    return true;
}

/* ----------------------------------------------------------------------------- nodes */

static size_t add_node(yaml_reader *r, stg_yaml_kind kind, stg_yaml_style style, size_t offset)
{
    stg_yaml_doc *d = r->doc;
    if (d->count >= r->max_nodes) {
        fail(r, STG_YAML_E_NODES, offset, "more nodes than the limit");
        return SIZE_MAX;
    }
    size_t need = (d->count + 1) * sizeof *d->nodes;
    void *nodes = d->nodes;
    if (need > r->doc->nodes_cap_bytes &&
        stg_arena_grow_buffer(r->arena, &nodes, &r->doc->nodes_cap_bytes, need) != 0) {
        fail(r, STG_YAML_E_MEMORY, offset, "memory");
        return SIZE_MAX;
    }
    d->nodes = nodes;
    stg_yaml_node *n = &d->nodes[d->count];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->style = (uint8_t)style;
    n->offset = offset;
    n->end = (uint32_t)(d->count + 1);
    if (r->anchor_next != NULL) {
        if (r->anchor_count >= STG_YAML_ANCHORS_CEILING) {
            fail(r, STG_YAML_E_NODES, offset, "more anchors than the limit");
            return SIZE_MAX;
        }
        for (size_t k = 0; k < r->anchor_count; k++) {
            if (r->anchors[k].len == r->anchor_next_len &&
                memcmp(r->anchors[k].name, r->anchor_next, r->anchor_next_len) == 0) {
                fail(r, STG_YAML_E_SYNTAX, offset, "an anchor defined twice"); /* PyYAML's */
                return SIZE_MAX;
            }
        }
        yaml_anchor *a = &r->anchors[r->anchor_count++];
        a->name = r->anchor_next;
        a->len = r->anchor_next_len;
        a->node = d->count;
        r->anchor_next = NULL;
    }
    return d->count++;
}

static bool add_scalar(yaml_reader *r, stg_yaml_style style, size_t offset, const uint8_t *s,
                       size_t n)
{
    size_t i = add_node(r, STG_YAML_SCALAR, style, offset);
    if (i == SIZE_MAX) {
        return false;
    }
    r->doc->nodes[i].str = s;
    r->doc->nodes[i].str_len = n;
    return true;
}

static void close_node(yaml_reader *r, size_t node)
{
    r->doc->nodes[node].end = (uint32_t)r->doc->count;
}

static bool push_frame(yaml_reader *r, stg_yaml_kind kind, long indent, size_t offset,
                       bool same_indent)
{
    if (r->depth >= r->max_depth) {
        return fail(r, STG_YAML_E_DEPTH, offset, "nesting deeper than the limit");
    }
    size_t node = add_node(r, kind, STG_YAML_PLAIN, offset);
    if (node == SIZE_MAX) {
        return false;
    }
    yaml_frame *f = &r->stack[r->depth++];
    f->kind = (uint8_t)kind;
    f->indent = indent;
    f->node = node;
    f->same_indent = same_indent;
    r->root_done = true;
    return true;
}

static void pop_frame(yaml_reader *r)
{
    close_node(r, r->stack[--r->depth].node);
}

/* ---------------------------------------------------------------------- quoted scalars */

static int hex_value(uint8_t c)
{
    if (c >= '0' && c <= '9') {
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

/* The one-letter escapes of YAML 1.1 double-quoted scalars (PyYAML's ESCAPE_REPLACEMENTS). */
static bool simple_escape(uint8_t c, uint32_t *cp)
{
    static const char from[] = "0abt\tnvfre \"\\/N_LP";
    static const uint32_t to[] = {0,  7,  8,   9,    9,   10,    11,    12,      13,
                                  27, 32, '"', '\\', '/', 0x85u, 0xA0u, 0x2028u, 0x2029u};
    const char *hit = memchr(from, c, sizeof from - 1);
    if (c == 0 || hit == NULL) {
        return false;
    }
    *cp = to[hit - from];
    return true;
}

/* One escape after the backslash at i: its code point and length; false with the reader
 * failed when it is none. */
static bool read_escape(yaml_reader *r, size_t i, size_t e, uint32_t *cp, size_t *used)
{
    uint8_t c = peek(r, i + 1);
    if (i + 1 >= e) {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "a double-quoted scalar over several lines");
    }
    if (simple_escape(c, cp)) {
        *used = 2;
        return true;
    }
    size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    if (digits == 0) {
        return fail(r, STG_YAML_E_SYNTAX, i, "an unknown escape");
    }
    uint32_t v = 0;
    for (size_t k = 0; k < digits; k++) {
        int h = i + 2 + k < e ? hex_value(peek(r, i + 2 + k)) : -1;
        if (h < 0) {
            return fail(r, STG_YAML_E_SYNTAX, i, "an escape without its hex digits");
        }
        v = (v << 4) | (uint32_t)h;
    }
    if ((v >= 0xD800u && v <= 0xDFFFu) || v > 0x10FFFFu) {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "an escape of a surrogate or no code point");
    }
    *cp = v;
    *used = 2 + digits;
    return true;
}

/* A quoted scalar starting at i (the quote), closed before e (the line's end). Adds the node;
 * *after: the byte after the closing quote. */
static bool read_quoted(yaml_reader *r, size_t i, size_t e, size_t *after)
{
    uint8_t q = peek(r, i);
    uint8_t *dst = stg_arena_alloc(r->arena, e - i + 1, 1); /* never longer than the input */
    if (dst == NULL) {
        return fail(r, STG_YAML_E_MEMORY, i, "memory");
    }
    size_t n = 0;
    for (size_t k = i + 1;;) {
        if (k >= e) {
            return fail(r, e < r->len ? STG_YAML_E_UNSUPPORTED : STG_YAML_E_SYNTAX, i,
                        "a quoted scalar not closed on its line");
        }
        uint8_t c = peek(r, k);
        if (c == q) {
            if (q == '\'' && peek(r, k + 1) == '\'' && k + 1 < e) {
                dst[n++] = '\'';
                k += 2;
                continue;
            }
            *after = k + 1;
            return add_scalar(r, q == '"' ? STG_YAML_DOUBLE : STG_YAML_SINGLE, i, dst, n);
        }
        if (q == '"' && c == '\\') {
            uint32_t cp;
            size_t used;
            if (!read_escape(r, k, e, &cp, &used)) {
                return false;
            }
            n += stg_utf8_put(dst + n, cp); /* at most 4 bytes for at least 2 of input */
            k += used;
            continue;
        }
        dst[n++] = c;
        k++;
    }
}

/* ----------------------------------------------------------------------- plain scalars */

/* Whether a plain scalar may start at i (PyYAML's check_plain). */
static bool plain_may_start(const yaml_reader *r, size_t i, bool flow)
{
    uint8_t c = peek(r, i), next = peek(r, i + 1);
    if (c == '-' || c == '?' || c == ':') {
        return !is_ws_or_end(next) && !(flow && is_flow_indicator(next));
    }
    static const char indicators[] = ",[]{}#&*!|>'\"%@`";
    return !is_ws_or_end(c) && memchr(indicators, c, sizeof indicators - 1) == NULL;
}

/* Why a scalar cannot start at i (called when plain_may_start said no). */
static bool refuse_start(yaml_reader *r, size_t i)
{
    uint8_t c = peek(r, i);
    if (c == '&' || c == '*') {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "an anchor or alias");
    }
    if (c == '!') {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "a tag");
    }
    if (c == '?') {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "a complex key");
    }
    return fail(r, STG_YAML_E_SYNTAX, i, "a character that starts no value here");
}

/* The end of a plain scalar in block context starting at i on a line ending at e: before " #"
 * or ": " (a key's colon), trailing blanks dropped. *colon: where a ": " (or ':' at the end)
 * stopped it, else SIZE_MAX. */
static size_t plain_end(const yaml_reader *r, size_t i, size_t e, size_t *colon)
{
    *colon = SIZE_MAX;
    size_t k = i, last = i;
    for (; k < e; k++) {
        uint8_t c = peek(r, k);
        if (c == '#' && k > i && is_blank(peek(r, k - 1))) {
            break;
        }
        if (c == ':' && (k + 1 >= e || is_blank(peek(r, k + 1)))) {
            *colon = k;
            break;
        }
        if (c == '\t') {
            *colon = SIZE_MAX - 1; /* the caller refuses it */
            return k;
        }
        if (!is_blank(c)) {
            last = k + 1;
        }
    }
    return last;
}

/* ------------------------------------------------------------------- anchors, aliases */

static bool is_anchor_char(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

/* The end of an anchor or alias name starting at i (PyYAML: letters, digits, '-', '_'), or
 * SIZE_MAX when it is empty or not followed by what may follow one. */
static size_t anchor_name_end(const yaml_reader *r, size_t i)
{
    size_t k = i;
    while (is_anchor_char(peek(r, k))) {
        k++;
    }
    uint8_t c = peek(r, k);
    bool stop = is_ws_or_end(c) || c == '\t' || c == '?' || c == ':' || c == ',' || c == ']' ||
                c == '}' || c == '%' || c == '@' || c == '`';
    return k > i && stop ? k : SIZE_MAX;
}

/* `&name` at i: kept for the next node made. *after: the byte after the name. */
static bool read_anchor(yaml_reader *r, size_t i, size_t *after)
{
    size_t k = anchor_name_end(r, i + 1);
    if (k == SIZE_MAX) {
        return fail(r, STG_YAML_E_SYNTAX, i, "an anchor name");
    }
    if (r->anchor_next != NULL) {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "two anchors on one node");
    }
    r->anchor_next = r->buf + i + 1;
    r->anchor_next_len = k - i - 1;
    *after = k;
    return true;
}

/* Whether node is a collection still open (an alias to it would be recursive). */
static bool node_open(const yaml_reader *r, size_t node)
{
    for (uint32_t d = 0; d < r->depth; d++) {
        if (r->stack[d].node == node) {
            return true;
        }
    }
    for (uint32_t d = 0; r->flow_depth != NULL && d < *r->flow_depth; d++) {
        if (r->flow_open[d].node == node) {
            return true;
        }
    }
    return false;
}

/* `*name` at i: a copy of the anchored node's subtree (what a composer hands a constructor
 * for it). *after: the byte after the name. */
static bool read_alias(yaml_reader *r, size_t i, size_t *after)
{
    size_t k = anchor_name_end(r, i + 1);
    if (k == SIZE_MAX) {
        return fail(r, STG_YAML_E_SYNTAX, i, "an alias name");
    }
    if (r->anchor_next != NULL) {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "an anchor on an alias");
    }
    size_t n = k - i - 1, a = r->anchor_count;
    while (a > 0 && !(r->anchors[a - 1].len == n &&
                      memcmp(r->anchors[a - 1].name, r->buf + i + 1, n) == 0)) {
        a--;
    }
    if (a == 0) {
        return fail(r, STG_YAML_E_SYNTAX, i, "an alias of no anchor");
    }
    if (++r->alias_count > STG_YAML_ALIASES_CEILING) {
        return fail(r, STG_YAML_E_NODES, i, "more aliases than the limit");
    }
    size_t src = r->anchors[a - 1].node;
    if (node_open(r, src)) {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "a recursive alias");
    }
    stg_yaml_doc *d = r->doc;
    size_t count = d->nodes[src].end - src;
    if (count > r->max_nodes - d->count) {
        return fail(r, STG_YAML_E_NODES, i, "more nodes than the limit");
    }
    size_t need = (d->count + count) * sizeof *d->nodes;
    void *nodes = d->nodes;
    if (need > r->doc->nodes_cap_bytes &&
        stg_arena_grow_buffer(r->arena, &nodes, &r->doc->nodes_cap_bytes, need) != 0) {
        return fail(r, STG_YAML_E_MEMORY, i, "memory");
    }
    d->nodes = nodes;
    memcpy(d->nodes + d->count, d->nodes + src, count * sizeof *d->nodes);
    for (size_t j = 0; j < count; j++) {
        d->nodes[d->count + j].end += (uint32_t)(d->count - src);
    }
    d->nodes[d->count].offset = i;
    d->count += count;
    *after = k;
    return true;
}

/* -------------------------------------------------------------------------------- flow */

/* Skips blanks, line breaks and comments inside a flow collection. */
static size_t flow_skip(yaml_reader *r, size_t i)
{
    for (;;) {
        uint8_t c = peek(r, i);
        if (is_blank(c) || c == '\n' || c == '\r') {
            i++;
        } else if (c == '#' && i > 0 && is_ws_or_end(peek(r, i - 1))) {
            i = line_end(r, i);
        } else {
            return i;
        }
    }
}

/* A plain scalar inside a flow collection at i: ends at a flow indicator, at ": " or ':' before
 * one, at " #", or at the line's end (a scalar that goes on past it is refused). */
static bool flow_plain(yaml_reader *r, size_t i, size_t *after)
{
    size_t e = line_end(r, i), k = i, last = i;
    for (; k < e; k++) {
        uint8_t c = peek(r, k), next = peek(r, k + 1);
        if (is_flow_indicator(c) || (c == '#' && k > i && is_blank(peek(r, k - 1)))) {
            break;
        }
        if (c == ':' && (is_ws_or_end(next) || is_flow_indicator(next))) {
            break;
        }
        if (c == ':' || c == '\t' || c == '?') { /* PyYAML ends a flow's plain scalar at '?' */
            return fail(r, STG_YAML_E_UNSUPPORTED, k, "a ':', '?' or tab inside a plain scalar");
        }
        if (!is_blank(c)) {
            last = k + 1;
        }
    }
    size_t j = flow_skip(r, k);
    uint8_t c = peek(r, j);
    if (k == e && j < r->len && !is_flow_indicator(c) && c != ':') {
        return fail(r, STG_YAML_E_UNSUPPORTED, j, "a plain scalar over several lines");
    }
    *after = k;
    return add_scalar(r, STG_YAML_PLAIN, i, r->buf + i, last - i);
}

/* One scalar or the opening of a nested collection, at i, inside a flow. */
static bool flow_value(yaml_reader *r, flow_frame *st, uint32_t *depth, size_t i, size_t *after)
{
    if (peek(r, i) == '&') {
        if (!read_anchor(r, i, &i)) {
            return false;
        }
        i = flow_skip(r, i);
    }
    if (peek(r, i) == '*') {
        return read_alias(r, i, after);
    }
    uint8_t c = peek(r, i);
    if (c == '[' || c == '{') {
        if (r->depth + *depth >= r->max_depth) {
            return fail(r, STG_YAML_E_DEPTH, i, "nesting deeper than the limit");
        }
        size_t node = add_node(r, c == '[' ? STG_YAML_SEQ : STG_YAML_MAP, STG_YAML_FLOW, i);
        if (node == SIZE_MAX) {
            return false;
        }
        st[*depth].kind = c == '[' ? STG_YAML_SEQ : STG_YAML_MAP;
        st[*depth].state = 0;
        st[*depth].node = node;
        ++*depth;
        *after = i + 1;
        return true;
    }
    if (c == '"' || c == '\'') {
        return read_quoted(r, i, line_end(r, i), after);
    }
    if (!plain_may_start(r, i, true)) {
        return refuse_start(r, i);
    }
    return flow_plain(r, i, after);
}

/* One step of the flow at i (after blanks): a separator, a close, an entry. */
static bool flow_step(yaml_reader *r, flow_frame *st, uint32_t *depth, size_t *i)
{
    flow_frame *top = &st[*depth - 1];
    uint8_t c = peek(r, *i);
    bool seq = top->kind == STG_YAML_SEQ;
    uint8_t close = seq ? ']' : '}';
    if (c == 0) {
        return fail(r, STG_YAML_E_SYNTAX, *i, "a flow collection not closed");
    }
    if (top->state == 3 && (c == close || c == ',')) { /* {a: } : an empty value */
        top->state = 1;
        return add_scalar(r, STG_YAML_PLAIN, *i, r->buf + *i, 0);
    }
    if (c == close) {
        if (top->state == 2) { /* {a} : a key without a value */
            if (!add_scalar(r, STG_YAML_PLAIN, *i, r->buf + *i, 0)) {
                return false;
            }
        }
        close_node(r, top->node);
        --*depth; /* the parent's state was set when this collection began */
        ++*i;
        return true;
    }
    if (c == ',' && (top->state == 1 || top->state == 2)) {
        if (top->state == 2 && !add_scalar(r, STG_YAML_PLAIN, *i, r->buf + *i, 0)) {
            return false;
        }
        top->state = 0;
        ++*i;
        return true;
    }
    if (c == ':' && !seq && top->state == 2) {
        /* an implicit key is one line of at most 1024 bytes (PyYAML's simple keys) */
        if (memchr(r->buf + top->key_at, '\n', *i - top->key_at) != NULL ||
            *i - top->key_at > STG_YAML_KEY_MAX) {
            return fail(r, STG_YAML_E_UNSUPPORTED, *i, "a flow key over several lines");
        }
        top->state = 3;
        ++*i;
        return true;
    }
    if (c == ':' && seq && top->state == 1) {
        return fail(r, STG_YAML_E_UNSUPPORTED, *i, "a mapping inside a flow sequence");
    }
    if (top->state == 1 || top->state == 2 || c == ',' || c == ']' || c == '}') {
        return fail(r, STG_YAML_E_SYNTAX, *i, "a flow collection out of order");
    }
    if (!seq && top->state == 0 && (c == ':' || c == '[' || c == '{')) {
        return fail(r, STG_YAML_E_UNSUPPORTED, *i, "an empty or collection key in a flow");
    }
    uint8_t next_state = seq ? 1 : top->state == 0 ? 2 : 1;
    top->state = next_state;
    top->key_at = *i;
    return flow_value(r, st, depth, *i, i);
}

/* A flow collection starting at i ('[' or '{'), over as many lines as it takes. Afterwards the
 * rest of its last line must be empty; r->pos is set to the next line. */
static bool read_flow(yaml_reader *r, size_t i)
{
    flow_frame st[STG_YAML_DEPTH_CEILING];
    uint32_t depth = 0;
    r->flow_open = st;
    r->flow_depth = &depth;
    if (!flow_value(r, st, &depth, i, &i)) {
        return false;
    }
    while (depth > 0) {
        i = flow_skip(r, i);
        size_t ls = i;
        while (ls > 0 && peek(r, ls - 1) != '\n') {
            ls--;
        }
        if (ls == i && (r->len - i >= 3) &&
            (memcmp(r->buf + i, "---", 3) == 0 || memcmp(r->buf + i, "...", 3) == 0)) {
            return fail(r, STG_YAML_E_UNSUPPORTED, i, "a document marker inside a flow");
        }
        if (!flow_step(r, st, &depth, &i)) {
            return false;
        }
    }
    r->flow_open = NULL;
    r->flow_depth = NULL;
    size_t e = line_end(r, i);
    if (!rest_is_empty(r, i, e)) {
        size_t j = i;
        while (j < e && is_blank(peek(r, j))) {
            j++;
        }
        return fail(r, peek(r, j) == ':' ? STG_YAML_E_UNSUPPORTED : STG_YAML_E_SYNTAX, j,
                    "something after a flow collection");
    }
    r->pos = next_line(r, e);
    return true;
}

/* ----------------------------------------------------------------------- block scalars */

/* Counts leading spaces of the line at i. */
static size_t spaces_at(const yaml_reader *r, size_t i)
{
    size_t n = 0;
    while (peek(r, i + n) == ' ') {
        n++;
    }
    return n;
}

/* The header of a block scalar at i ('|' or '>'): chomping ('-', '+' or 0 for clip). */
static bool block_header(yaml_reader *r, size_t i, size_t e, uint8_t *chomp)
{
    *chomp = 0;
    size_t k = i + 1;
    for (; k < e && !is_blank(peek(r, k)); k++) {
        uint8_t c = peek(r, k);
        if ((c == '-' || c == '+') && *chomp == 0) {
            *chomp = c;
        } else if (c >= '1' && c <= '9') {
            return fail(r, STG_YAML_E_UNSUPPORTED, k, "a block scalar's indentation digit");
        } else {
            return fail(r, STG_YAML_E_SYNTAX, k, "a block scalar header");
        }
    }
    if (!rest_is_empty(r, k, e)) {
        return fail(r, STG_YAML_E_SYNTAX, k, "text after a block scalar header");
    }
    return true;
}

/* The content indentation of a block scalar whose first content line may be at i: the first
 * line with a non-space; *refuse set when an all-space line before it is longer. */
static size_t block_indent(const yaml_reader *r, size_t i, bool *refuse)
{
    size_t longest = 0;
    *refuse = false;
    for (; i < r->len;) {
        size_t n = spaces_at(r, i), e = line_end(r, i);
        if (i + n < e) {
            *refuse = longest > n;
            return n;
        }
        longest = n > longest ? n : longest;
        i = next_line(r, e);
    }
    return 0;
}

/* Appends one content line of a block scalar to dst (literal: as is; folded: joined). */
static void block_line(uint8_t *dst, size_t *n, const uint8_t *s, size_t k, bool folded,
                       size_t *breaks, bool *started)
{
    if (*started) {
        if (folded && *breaks == 1) {
            dst[(*n)++] = ' ';
        } else {
            size_t b = folded ? *breaks - 1 : *breaks;
            for (size_t j = 0; j < b; j++) {
                dst[(*n)++] = '\n';
            }
        }
    } else {
        for (size_t j = 0; j < *breaks; j++) {
            dst[(*n)++] = '\n'; /* leading empty lines are kept */
        }
    }
    memcpy(dst + *n, s, k);
    *n += k;
    *breaks = 0;
    *started = true;
}

/* A block scalar at i (the '|' or '>') whose parent is at indentation parent. */
static bool read_block_scalar(yaml_reader *r, size_t i, long parent)
{
    size_t e = line_end(r, i);
    uint8_t chomp;
    if (!block_header(r, i, e, &chomp)) {
        return false;
    }
    bool folded = peek(r, i) == '>', refuse;
    size_t at = next_line(r, e);
    size_t indent = block_indent(r, at, &refuse);
    long min = parent + 1 < 1 ? 1 : parent + 1;
    uint8_t *dst = stg_arena_alloc(r->arena, r->len - at + 2, 1);
    if (dst == NULL) {
        return fail(r, STG_YAML_E_MEMORY, i, "memory");
    }
    size_t n = 0, breaks = 0;
    bool started = false, last_broke = false;
    if (refuse || (long)indent < min) {
        if (refuse && (long)indent >= min) {
            return fail(r, STG_YAML_E_UNSUPPORTED, at, "a block scalar's leading blank lines");
        }
        indent = SIZE_MAX; /* no content line: an empty scalar */
    }
    while (at < r->len) {
        size_t s = spaces_at(r, at), le = line_end(r, at);
        if (at + s >= le) { /* an empty line (spaces only) */
            if (indent != SIZE_MAX && s > indent) {
                return fail(r, STG_YAML_E_UNSUPPORTED, at, "a blank line with extra spaces");
            }
            breaks++;
            at = next_line(r, le);
            continue;
        }
        if (indent == SIZE_MAX || s < indent) {
            break;
        }
        if (folded && is_blank(peek(r, at + indent))) {
            return fail(r, STG_YAML_E_UNSUPPORTED, at, "a more-indented line of a folded scalar");
        }
        block_line(dst, &n, r->buf + at + indent, le - at - indent, folded, &breaks, &started);
        breaks = 1;
        last_broke = le < r->len;
        at = next_line(r, le);
        if (!last_broke) {
            breaks = 0;
        }
    }
    /* breaks now counts the line break after the last content line plus the empty lines */
    size_t keep = chomp == '-' ? 0 : chomp == '+' ? breaks : (started && breaks > 0 ? 1 : 0);
    if (!started && chomp != '+') {
        keep = 0;
    }
    for (size_t j = 0; j < keep; j++) {
        dst[n++] = '\n';
    }
    r->pos = at;
    return add_scalar(r, folded ? STG_YAML_FOLDED : STG_YAML_LITERAL, i, dst, n);
}

/* ------------------------------------------------------------------------------ blocks */

#define TAB_IN_PLAIN (SIZE_MAX - 1)

static bool is_seq_entry(const yaml_reader *r, size_t i)
{
    return peek(r, i) == '-' && is_ws_or_end(peek(r, i + 1)) && peek(r, i + 1) != '\t';
}

/* The closing quote of a quoted scalar at i on the line ending at e, or SIZE_MAX. */
static size_t quote_close(const yaml_reader *r, size_t i, size_t e)
{
    uint8_t q = peek(r, i);
    for (size_t k = i + 1; k < e; k++) {
        uint8_t c = peek(r, k);
        if (q == '"' && c == '\\') {
            k++;
        } else if (c == q) {
            if (q == '\'' && k + 1 < e && peek(r, k + 1) == '\'') {
                k++;
                continue;
            }
            return k;
        }
    }
    return SIZE_MAX;
}

/* Whether a simple key starts at i: *colon gets its ':' (followed by a space or the end). */
static bool key_at(const yaml_reader *r, size_t i, size_t e, size_t *colon)
{
    uint8_t c = peek(r, i);
    if (c == '"' || c == '\'') {
        size_t q = quote_close(r, i, e);
        if (q == SIZE_MAX) {
            return false;
        }
        size_t k = q + 1;
        while (k < e && is_blank(peek(r, k))) {
            k++;
        }
        *colon = k;
        return peek(r, k) == ':' && k < e && (k + 1 >= e || is_blank(peek(r, k + 1)));
    }
    if (!plain_may_start(r, i, false)) {
        return false;
    }
    (void)plain_end(r, i, e, colon);
    return *colon != SIZE_MAX && *colon != TAB_IN_PLAIN;
}

/* A value on the rest of a line at i (a scalar, a flow collection, a block scalar) whose
 * parent collection is at indentation parent. Sets r->pos past what it read. */
static bool value_inline(yaml_reader *r, size_t i, size_t e, long parent)
{
    uint8_t c = peek(r, i);
    if (c == '[' || c == '{') {
        return read_flow(r, i);
    }
    if (c == '|' || c == '>') {
        return read_block_scalar(r, i, parent);
    }
    if (c == '"' || c == '\'') {
        size_t after;
        if (!read_quoted(r, i, e, &after)) {
            return false;
        }
        if (!rest_is_empty(r, after, e)) {
            return fail(r, STG_YAML_E_SYNTAX, after, "something after a quoted scalar");
        }
        r->pos = next_line(r, e);
        return true;
    }
    if (c == '*') {
        size_t after;
        if (!read_alias(r, i, &after)) {
            return false;
        }
        if (!rest_is_empty(r, after, e)) {
            return fail(r, STG_YAML_E_SYNTAX, after, "something after an alias");
        }
        r->pos = next_line(r, e);
        return true;
    }
    if (is_seq_entry(r, i)) {
        return fail(r, STG_YAML_E_SYNTAX, i, "a sequence entry where a value is due");
    }
    if (!plain_may_start(r, i, false)) {
        return refuse_start(r, i);
    }
    size_t colon, end = plain_end(r, i, e, &colon);
    if (colon == TAB_IN_PLAIN) {
        return fail(r, STG_YAML_E_UNSUPPORTED, end, "a tab outside quotes");
    }
    if (colon != SIZE_MAX) {
        return fail(r, STG_YAML_E_SYNTAX, colon, "a mapping value where none is allowed");
    }
    r->pos = next_line(r, e);
    return add_scalar(r, STG_YAML_PLAIN, i, r->buf + i, end - i);
}

/* Skips blanks at *j, then an anchor (`key: &a`, `- &a`) and the blanks after it. */
static bool anchor_here(yaml_reader *r, size_t *j, size_t e)
{
    while (*j < e && is_blank(peek(r, *j))) {
        ++*j;
    }
    if (peek(r, *j) != '&') {
        return true;
    }
    if (!read_anchor(r, *j, j)) {
        return false;
    }
    while (*j < e && is_blank(peek(r, *j))) {
        ++*j;
    }
    return true;
}

static void set_pending(yaml_reader *r, bool in_map, long indent, size_t at)
{
    r->pending = true;
    r->pending_in_map = in_map;
    r->pending_indent = indent;
    r->pending_offset = at;
}

/* One `key: value` of the mapping frame f, the key at i. */
static bool map_pair(yaml_reader *r, const yaml_frame *f, size_t i, size_t e)
{
    size_t colon;
    if (!key_at(r, i, e, &colon)) {
        if (peek(r, i) == '?' && is_ws_or_end(peek(r, i + 1))) {
            return fail(r, STG_YAML_E_UNSUPPORTED, i, "a complex key");
        }
        return fail(r, STG_YAML_E_SYNTAX, i, "a line that is no key: value in a mapping");
    }
    if (colon - i > STG_YAML_KEY_MAX) {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "a key longer than 1024 bytes");
    }
    if (peek(r, i) == '"' || peek(r, i) == '\'') {
        size_t after;
        if (!read_quoted(r, i, e, &after)) {
            return false;
        }
    } else {
        size_t c2, end = plain_end(r, i, e, &c2);
        if (!add_scalar(r, STG_YAML_PLAIN, i, r->buf + i, end - i)) {
            return false;
        }
    }
    size_t j = colon + 1;
    if (!anchor_here(r, &j, e)) {
        return false;
    }
    if (rest_is_empty(r, j, e) && peek(r, j) != '\t') {
        set_pending(r, true, f->indent, j);
        r->pos = next_line(r, e);
        return true;
    }
    return value_inline(r, j, e, f->indent);
}

static bool start_at(yaml_reader *r, long col, size_t i, size_t e, bool same_indent);

/* One `- item` of the sequence frame f, the dash at i. */
static bool seq_item(yaml_reader *r, const yaml_frame *f, size_t i, size_t e)
{
    size_t j = i + 1, colon;
    if (!anchor_here(r, &j, e)) {
        return false;
    }
    if (r->anchor_next != NULL && key_at(r, j, e, &colon)) {
        return fail(r, STG_YAML_E_UNSUPPORTED, j, "an anchor before a key");
    }
    if (rest_is_empty(r, j, e) && peek(r, j) != '\t') {
        set_pending(r, false, f->indent, j);
        r->pos = next_line(r, e);
        return true;
    }
    if (peek(r, j) == '\t') {
        return fail(r, STG_YAML_E_UNSUPPORTED, j, "a tab outside quotes");
    }
    return start_at(r, (long)(j - i) + f->indent, j, e, false);
}

/* A node starting at column col (byte i) of a line ending at e: a block sequence or mapping
 * opened there, or a value. */
static bool start_at(yaml_reader *r, long col, size_t i, size_t e, bool same_indent)
{
    size_t colon;
    if (is_seq_entry(r, i)) {
        if (!push_frame(r, STG_YAML_SEQ, col, i, same_indent)) {
            return false;
        }
        return seq_item(r, &r->stack[r->depth - 1], i, e);
    }
    if (key_at(r, i, e, &colon)) {
        if (!push_frame(r, STG_YAML_MAP, col, i, false)) {
            return false;
        }
        return map_pair(r, &r->stack[r->depth - 1], i, e);
    }
    long parent = r->depth > 0 ? r->stack[r->depth - 1].indent : NO_INDENT;
    if (r->depth == 0) {
        r->root_done = true;
        r->root_scalar = true;
    }
    return value_inline(r, i, e, parent);
}

/* The empty value of a key or dash whose line had nothing after it. */
static bool flush_pending(yaml_reader *r)
{
    r->pending = false;
    return add_scalar(r, STG_YAML_PLAIN, r->pending_offset, r->buf + r->pending_offset, 0);
}

/* One line with content at column ind (byte i), ending at e. */
static bool block_line_at(yaml_reader *r, long ind, size_t i, size_t e)
{
    if (r->pending) {
        bool seq_here = ind == r->pending_indent && r->pending_in_map && is_seq_entry(r, i);
        if (ind > r->pending_indent || seq_here) {
            r->pending = false;
            return start_at(r, ind, i, e, seq_here);
        }
        if (!flush_pending(r)) {
            return false;
        }
    }
    while (r->depth > 0) {
        const yaml_frame *top = &r->stack[r->depth - 1];
        bool leave_seq = top->kind == STG_YAML_SEQ && top->same_indent && top->indent == ind &&
                         !is_seq_entry(r, i);
        if (top->indent <= ind && !leave_seq) {
            break;
        }
        pop_frame(r);
    }
    if (r->depth == 0) {
        if (r->root_done) {
            return fail(r, r->root_scalar ? STG_YAML_E_UNSUPPORTED : STG_YAML_E_SYNTAX, i,
                        "content after the document's root node");
        }
        return start_at(r, ind, i, e, false);
    }
    const yaml_frame *top = &r->stack[r->depth - 1];
    if (top->indent != ind) {
        size_t colon;
        bool structure = is_seq_entry(r, i) || key_at(r, i, e, &colon);
        return fail(r, structure ? STG_YAML_E_SYNTAX : STG_YAML_E_UNSUPPORTED, i,
                    structure ? "bad indentation" : "a scalar continued on the next line");
    }
    if (top->kind == STG_YAML_SEQ) {
        if (!is_seq_entry(r, i)) {
            return fail(r, STG_YAML_E_SYNTAX, i, "a line that is no entry in a sequence");
        }
        return seq_item(r, top, i, e);
    }
    if (is_seq_entry(r, i)) {
        return fail(r, STG_YAML_E_SYNTAX, i, "a sequence entry where a key is due");
    }
    return map_pair(r, top, i, e);
}

/* `---` or `...` at column 0 (followed by a space or the end). */
static bool marker_at(const yaml_reader *r, size_t i, const char *m)
{
    return r->len - i >= 3 && memcmp(r->buf + i, m, 3) == 0 && is_ws_or_end(peek(r, i + 3));
}

/* A line at column 0 that is a document marker or directive; false with *handled unset
 * otherwise. */
static bool document_line(yaml_reader *r, size_t i, size_t e, bool *seen_start, bool *ended,
                          bool *handled)
{
    *handled = true;
    if (*ended) {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "content after the document end");
    }
    if (peek(r, i) == '%') {
        return fail(r, STG_YAML_E_UNSUPPORTED, i, "a directive");
    }
    if (marker_at(r, i, "---")) {
        if (*seen_start || r->root_done || r->pending) {
            return fail(r, STG_YAML_E_UNSUPPORTED, i, "several documents");
        }
        *seen_start = true;
        if (!rest_is_empty(r, i + 3, e)) {
            return fail(r, STG_YAML_E_UNSUPPORTED, i + 3, "a value on the document marker");
        }
        return true;
    }
    if (marker_at(r, i, "...")) {
        if (!rest_is_empty(r, i + 3, e)) {
            return fail(r, STG_YAML_E_UNSUPPORTED, i + 3, "text after the document end");
        }
        *ended = true;
        return true;
    }
    *handled = false;
    return true;
}

static bool read_lines(yaml_reader *r)
{
    bool seen_start = false, ended = false;
    while (r->pos < r->len && !r->failed) {
        size_t ls = r->pos, e = line_end(r, ls), ind = spaces_at(r, ls), i = ls + ind;
        if (i >= e || peek(r, i) == '#') {
            r->pos = next_line(r, e);
            continue;
        }
        if (peek(r, i) == '\t') { /* PyYAML refuses a tab even on a line of blanks */
            return fail(r, STG_YAML_E_UNSUPPORTED, i, "a tab in indentation");
        }
        if (ind == 0) {
            bool handled;
            if (!document_line(r, i, e, &seen_start, &ended, &handled)) {
                return false;
            }
            if (handled) {
                r->pos = next_line(r, e);
                continue;
            }
        } else if (ended) {
            return fail(r, STG_YAML_E_UNSUPPORTED, i, "content after the document end");
        }
        if (!block_line_at(r, (long)ind, i, e)) {
            return false;
        }
    }
    return !r->failed;
}

stg_yaml_status stg_yaml_parse(const uint8_t *buf, size_t len, uint32_t max_depth, size_t max_nodes,
                               stg_arena *arena, stg_yaml_doc *doc)
{
    memset(doc, 0, sizeof *doc);
    yaml_reader *r = stg_arena_alloc(arena, sizeof *r, 16);
    if (r == NULL) {
        doc->status = STG_YAML_E_MEMORY;
        doc->error_what = "memory";
        return doc->status;
    }
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->arena = arena;
    r->doc = doc;
    r->max_depth = max_depth == 0                       ? 1
                   : max_depth > STG_YAML_DEPTH_CEILING ? STG_YAML_DEPTH_CEILING
                                                        : max_depth;
    r->max_nodes = max_nodes == 0 || max_nodes > STG_YAML_NODES_CEILING ? STG_YAML_NODES_CEILING
                                                                        : max_nodes;
    size_t from = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* a BOM first */
    r->pos = from;
    if (check_characters(r, from) && read_lines(r) && (!r->pending || flush_pending(r))) {
        while (r->depth > 0) {
            pop_frame(r);
        }
    }
    return doc->status;
}

void stg_yaml_release(stg_yaml_doc *doc, stg_arena *arena)
{
    void *nodes = doc->nodes;
    stg_arena_free_buffer(arena, &nodes, &doc->nodes_cap_bytes);
    doc->nodes = NULL;
    doc->count = 0;
}

bool stg_yaml_scalar_is(const stg_yaml_doc *doc, size_t i, const char *s)
{
    if (i >= doc->count) {
        return false;
    }
    size_t n = strlen(s);
    const stg_yaml_node *node = &doc->nodes[i];
    return node->kind == STG_YAML_SCALAR && node->str_len == n &&
           (n == 0 || memcmp(node->str, s, n) == 0);
}
