/* Chat-template rules (see template.h; the table of rules is docs/templates.md).
 *
 * The walk follows jinja2's parser (parser.py: statements, then expressions by precedence:
 * conditional, or, and, not, comparison, + -, ~, * / // %, **, unary, primary with postfix
 * subscripts and calls, then filters and tests), so a template it accepts is one jinja2
 * compiles. On the way each expression gets an abstract value, what the template could make
 * it hold:
 *   DATA  what the caller passes (messages, tools, the loop object) and items, attributes and
 *         method results of it: not chosen by the template's author;
 *   NUM   numbers and booleans;
 *   const up to VALUE_CONSTS strings the template spells out (literals, their concatenations);
 *   BUILT anything else: text made by a filter or an object's str() (`|string`, `|format`,
 *         `|join`, `|reverse` of a literal, a block `set`, a macro's output ...), whose bytes
 *         a template can pick apart to spell a name no literal holds.
 * A name position (a subscript, `|attr`, the attribute argument of map/selectattr/sort...)
 * whose value is BUILT, or a const starting with `_`, is unsafe: jinja2's getattr/getitem
 * then reach Python internals (`__class__`, `__globals__` ...), which is how every published
 * sandbox-escape gadget starts. Variables are one table for the whole template
 * (flow-insensitive): a name's value joins every value assigned to it anywhere (set, for,
 * with, macro parameters from every call), computed again until nothing changes (at most
 * MAX_PASSES walks; a table still changing then is treated as BUILT). Findings are added by
 * the last walk only. */
#include "template.h"

#include <string.h>

#include "../parser/arena.h"
#include "../parser/jinja.h"
#include "../parser/json.h"
#include "../parser/map.h"
#include "../parser/mem.h"
#include "../parser/text.h"

#define VALUE_CONSTS 8 /* strings one value may hold before it is BUILT */
#define CONST_MAX 256u /* bytes of one const; a longer string is BUILT */
#define CONST_POOL_MAX (1u << 20)
#define MAX_VARS 8192u         /* slots of the variable table (a power of two) */
#define MAX_CONST_SLOTS 65536u /* slots of the const table */
#define MAX_EXPR_DEPTH 96u     /* nested expressions (jinja2 recurses; so does Python) */
#define MAX_BLOCKS 128u        /* nested block tags */
#define MAX_PASSES 12u
#define WIDEN_AFTER 2u   /* a value still growing is summarised: `ns.x = ns.x ~ 'a'` */
#define MAX_FINDINGS 16u /* per template: past this the rest is counted in one line */

/* K_COLL: a list, tuple or dict the template wrote; its consts and kinds are its members' */
enum { K_DATA = 1, K_NUM = 2, K_BUILT = 4, K_COLL = 8 };

/* More literal strings than VALUE_CONSTS (a dict of category names): kept as what the
 * rules ask of them, whether one starts with '_', has a '.'-part that does, or holds a '_'. */
enum { M_SET = 1, M_US_START = 2, M_US_PART = 4, M_US_ANY = 8 };

typedef struct tval {
    uint8_t kind;
    uint8_t n;                /* consts held */
    uint8_t many;             /* M_* flags: more consts than listed */
    uint32_t c[VALUE_CONSTS]; /* const ids: offsets into the pool */
} tval;

/* The names a template binds, in three spaces: variables, namespace attributes (`ns.x`, one
 * entry per attribute name whatever the namespace) and macros (their parameters). */
enum { SPACE_VAR = 0, SPACE_NS = 1, SPACE_MACRO = 2 };

typedef struct var_slot {
    uint64_t hash;
    const uint8_t *name;
    size_t name_len;
    uint8_t space;
    size_t first, count; /* SPACE_MACRO: its parameters' NAME tokens, in walk.params */
    uint8_t changes;     /* walks in which the value grew (widened past WIDEN_AFTER) */
    tval v;
} var_slot;

typedef struct const_slot {
    uint64_t hash;
    uint32_t id; /* pool offset of [len byte][bytes] */
} const_slot;

typedef struct walk {
    const stg_template_src *src;
    const uint8_t *s;
    const stg_jinja_tok *t;
    size_t nt, i;
    stg_report *r;
    bool reporting, failed, changed, vars_full;
    unsigned depth, findings, dropped;
    stg_map vars, consts;
    uint8_t *pool;
    size_t pool_len;
    size_t *params; /* NAME token indexes of every macro's parameters */
    size_t nparams, params_cap;
} walk;

/* ---------------------------------------------------------------- findings */

static uint64_t at_file(const walk *w, size_t tok)
{
    size_t off = tok < w->nt ? w->t[tok].offset : w->src->len;
    return w->src->map != NULL ? w->src->map(w->src->map_arg, off) : w->src->base + off;
}

/* Bytes that are safe to show in a message (an identifier-like name), else a placeholder. */
static const char *shown(const uint8_t *p, size_t n, char *buf, size_t cap)
{
    if (n == 0 || n >= cap) {
        return "(a long or empty name)";
    }
    for (size_t k = 0; k < n; k++) {
        uint8_t c = p[k];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        if (!ok) {
            return "(a name with other characters)";
        }
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static void unsafe(walk *w, size_t tok, const char *what, const uint8_t *name, size_t name_len)
{
    if (!w->reporting) {
        return;
    }
    if (w->findings >= MAX_FINDINGS) {
        w->dropped++;
        return;
    }
    w->findings++;
    char buf[48];
    const char *n = name != NULL ? shown(name, name_len, buf, sizeof buf) : "";
    stg_report_add(w->r, STG_TEMPLATE_UNSAFE, at_file(w, tok),
                   "the %s chat template %s%s%s: rendered by a plain jinja2 Environment it "
                   "reaches Python internals (a sandbox escape)",
                   w->src->where, what, name != NULL ? " " : "", n);
}

static void malformed(walk *w, size_t tok, const char *why)
{
    if (!w->failed && w->reporting) {
        stg_report_add(w->r, STG_TEMPLATE_MALFORMED, at_file(w, tok),
                       "the %s chat template does not parse as Jinja2 (%s): jinja2 refuses "
                       "to compile it",
                       w->src->where, why);
    }
    w->failed = true;
}

/* ---------------------------------------------------------------- tokens */

static const stg_jinja_tok *cur(const walk *w)
{
    return &w->t[w->i < w->nt ? w->i : w->nt - 1];
}

static bool is_op(const walk *w, uint8_t op)
{
    const stg_jinja_tok *t = cur(w);
    return t->type == STG_JT_OP && t->op == op;
}

static bool tok_is_name(const walk *w, size_t k, const char *word)
{
    const stg_jinja_tok *t = &w->t[k < w->nt ? k : w->nt - 1];
    size_t n = strlen(word);
    return t->type == STG_JT_NAME && t->len == n && memcmp(w->s + t->offset, word, n) == 0;
}

static bool is_name(const walk *w, const char *word)
{
    return tok_is_name(w, w->i, word);
}

static void advance(walk *w)
{
    if (w->i + 1 < w->nt) {
        w->i++;
    }
}

static bool expect_op(walk *w, uint8_t op, const char *why)
{
    if (!is_op(w, op)) {
        malformed(w, w->i, why);
        return false;
    }
    advance(w);
    return true;
}

static bool at_tag_end(const walk *w)
{
    uint8_t ty = cur(w)->type;
    return ty == STG_JT_BLOCK_END || ty == STG_JT_VAR_END || ty == STG_JT_EOF;
}

/* ---------------------------------------------------------------- values */

static tval v_kind(uint8_t kind)
{
    tval v = {kind, 0, 0, {0}};
    return v;
}

static const uint8_t *const_bytes(const walk *w, uint32_t id, size_t *n)
{
    *n = w->pool[id];
    return w->pool + id + 1;
}

typedef struct const_key {
    const uint8_t *p;
    size_t n;
    const uint8_t *pool;
} const_key;

static bool const_same(const void *slot, const void *key, void *ctx)
{
    const const_slot *cs = slot;
    const const_key *k = key;
    (void)ctx;
    return k->pool[cs->id] == k->n && memcmp(k->pool + cs->id + 1, k->p, k->n) == 0;
}

/* A value holding the one string p[0..n): interned (one id per distinct string); BUILT when
 * the string is too long or the pool is full (a name position then fails closed). */
static tval v_const(walk *w, const uint8_t *p, size_t n)
{
    if (n >= CONST_MAX || w->pool_len + 1 + n > CONST_POOL_MAX) {
        return v_kind(K_BUILT);
    }
    stg_map_status room = stg_map_reserve(&w->consts);
    if (room != STG_MAP_OK) {
        w->r->out_of_memory = w->r->out_of_memory || room == STG_MAP_NOMEM;
        return v_kind(K_BUILT);
    }
    uint64_t h = stg_map_hash(&w->consts, p, n, NULL, 0);
    const_key k = {p, n, w->pool};
    void *slot = NULL;
    stg_map_status st = stg_map_find(&w->consts, h, const_same, &k, NULL, &slot);
    tval v = {0, 1, 0, {0}};
    if (st == STG_MAP_FOUND) {
        v.c[0] = ((const_slot *)slot)->id;
        return v;
    }
    if (st != STG_MAP_ABSENT) {
        return v_kind(K_BUILT);
    }
    /* the pool grows in steps; its size stays within CONST_POOL_MAX */
    uint8_t *grown = stg_mem_realloc(w->pool, w->pool_len + 1 + n);
    if (grown == NULL) {
        stg_report_oom(w->r);
        return v_kind(K_BUILT);
    }
    w->pool = grown;
    uint32_t id = (uint32_t)w->pool_len;
    w->pool[id] = (uint8_t)n;
    memcpy(w->pool + id + 1, p, n);
    w->pool_len += 1 + n;
    stg_map_claim(&w->consts, slot, h);
    ((const_slot *)slot)->id = id;
    v.c[0] = id;
    return v;
}

/* Text or objects the template made (as opposed to the caller's data and numbers). */
static bool has_text(const tval *v)
{
    return v->n > 0 || v->many != 0 || (v->kind & (K_BUILT | K_COLL)) != 0;
}

/* What the rules ask of one const (the M_* flags). */
/* An attribute name jinja2's sandbox refuses (is_internal_attribute in jinja2/sandbox.py):
 * anything starting with '_', and the names of generators, coroutines, frames, tracebacks and
 * code objects that lead to a frame's globals without an underscore
 * (`(()|select).gi_frame.f_globals`), and type.mro. */
static bool internal_name(const uint8_t *p, size_t n)
{
    static const char *const names[] = {
        "gi_frame",   "gi_code",  "gi_yieldfrom", "cr_frame", "cr_code", "cr_await",
        "ag_frame",   "ag_code",  "ag_await",     "tb_frame", "tb_next", "f_globals",
        "f_builtins", "f_locals", "f_back",       "f_code",   "mro",     NULL};
    if (n > 0 && p[0] == '_') {
        return true;
    }
    if (n >= 3 && memcmp(p, "co_", 3) == 0) {
        return true;
    }
    for (size_t k = 0; names[k] != NULL; k++) {
        if (strlen(names[k]) == n && memcmp(p, names[k], n) == 0) {
            return true;
        }
    }
    return false;
}

/* What the rules ask of one const (the M_* flags). */
static uint8_t const_summary(const walk *w, uint32_t id)
{
    size_t n;
    const uint8_t *p = const_bytes(w, id, &n);
    uint8_t f = M_SET;
    if (memchr(p, '_', n) != NULL) {
        f |= M_US_ANY;
    }
    if (internal_name(p, n)) {
        f |= M_US_START | M_US_PART;
    }
    for (size_t s = 0; s < n;) {
        size_t e = s;
        while (e < n && p[e] != '.') {
            e++;
        }
        if (e > s && internal_name(p + s, e - s)) {
            f |= M_US_PART;
        }
        s = e + 1;
    }
    return f;
}

static tval join_in(const walk *w, tval a, const tval *b)
{
    a.kind |= b->kind;
    a.many |= b->many;
    if (a.many != 0) {
        /* summarised already: new consts are summarised too (listing them again would make
         * a value that never settles) */
        for (size_t k = 0; k < a.n; k++) {
            a.many |= const_summary(w, a.c[k]);
        }
        for (size_t k = 0; k < b->n; k++) {
            a.many |= const_summary(w, b->c[k]);
        }
        a.n = 0;
    }
    for (size_t k = 0; k < b->n && a.many == 0 && (a.kind & K_BUILT) == 0; k++) {
        bool seen = false;
        for (size_t j = 0; j < a.n; j++) {
            seen = seen || a.c[j] == b->c[k];
        }
        if (seen) {
            continue;
        }
        if (a.n < VALUE_CONSTS) {
            a.c[a.n++] = b->c[k];
            continue;
        }
        /* past the listed ones: every const is summarised */
        for (size_t j = 0; j < a.n; j++) {
            a.many |= const_summary(w, a.c[j]);
        }
        for (size_t j = k; j < b->n; j++) {
            a.many |= const_summary(w, b->c[j]);
        }
        a.n = 0;
        break;
    }
    if (a.kind & K_BUILT) {
        a.n = 0;
        a.many = 0;
    }
    return a;
}

static bool same_value(const tval *a, const tval *b)
{
    if (a->kind != b->kind || a->n != b->n || a->many != b->many) {
        return false;
    }
    for (size_t k = 0; k < a->n; k++) {
        bool seen = false;
        for (size_t j = 0; j < b->n; j++) {
            seen = seen || a->c[k] == b->c[j];
        }
        if (!seen) {
            return false;
        }
    }
    return true;
}

static bool const_has_underscore(const walk *w, uint32_t id)
{
    size_t n;
    const uint8_t *p = const_bytes(w, id, &n);
    return n > 0 && memchr(p, '_', n) != NULL;
}

/* a ~ b (and a + b on strings): literals concatenate; a literal joined with the caller's
 * data is data unless the literal holds an underscore (it could then spell the start of a
 * dunder name around a piece of data); anything built stays built. stringify: `~`, which
 * calls str() on both sides (str() of an object is text the template did not write). */
static tval concat(walk *w, const tval *a, const tval *b, bool stringify)
{
    if (((a->kind | b->kind) & (K_BUILT | K_COLL)) || a->many || b->many) {
        return v_kind(K_BUILT);
    }
    tval out = {0, 0, 0, {0}};
    bool data = (a->kind | b->kind) & (K_DATA | K_NUM);
    if (data && stringify) {
        return v_kind(K_BUILT);
    }
    for (size_t x = 0; x < a->n; x++) {
        for (size_t y = 0; y < b->n; y++) {
            size_t na, nb;
            const uint8_t *pa = const_bytes(w, a->c[x], &na);
            const uint8_t *pb = const_bytes(w, b->c[y], &nb);
            uint8_t buf[2 * CONST_MAX];
            memcpy(buf, pa, na);
            memcpy(buf + na, pb, nb);
            tval one = v_const(w, buf, na + nb);
            out = join_in(w, out, &one);
        }
    }
    if (data) {
        const tval *sides[2] = {a, b};
        for (size_t s = 0; s < 2; s++) {
            for (size_t k = 0; k < sides[s]->n; k++) {
                if (const_has_underscore(w, sides[s]->c[k])) {
                    return v_kind(K_BUILT);
                }
            }
        }
        out.kind |= K_DATA;
    }
    return out;
}

/* An attribute of v: of the caller's data, data; of a literal container, its members (jinja2
 * falls back to the item); of a literal string, a method of str (data to the rules: every way
 * to turn it into text, `~`, `|string`, makes built text); of anything else the template
 * made, built. */
static tval attr_of(const tval *v)
{
    if ((v->kind & K_COLL) != 0) {
        tval m = *v; /* a literal container's members */
        m.kind &= (uint8_t)~K_COLL;
        return m;
    }
    return (v->kind & K_BUILT) != 0 ? v_kind(K_BUILT) : v_kind(K_DATA);
}

/* An item of v (a subscript, an iteration): as attr_of, except that the items of literal
 * strings are their characters (`'type'[0]`, `{% for c in 'ab' %}`), kept as literals. */
static tval member_of(walk *w, const tval *v)
{
    if ((v->kind & (K_COLL | K_BUILT)) != 0 || (v->n == 0 && v->many == 0)) {
        return attr_of(v);
    }
    tval out = v_kind((uint8_t)(v->kind & (K_DATA | K_NUM)));
    if (v->many != 0) {
        out.many = (v->many & M_US_ANY) ? (uint8_t)(M_SET | M_US_START | M_US_PART | M_US_ANY)
                                        : (uint8_t)M_SET;
    }
    for (size_t k = 0; k < v->n; k++) {
        size_t n;
        uint8_t chars[CONST_MAX];
        /* copied first: interning a character may move the pool */
        const uint8_t *p = const_bytes(w, v->c[k], &n);
        memcpy(chars, p, n);
        for (size_t i = 0; i < n; i++) {
            tval one = v_const(w, &chars[i], 1);
            out = join_in(w, out, &one);
        }
    }
    return out;
}

/* ---------------------------------------------------------------- variables */

typedef struct var_key {
    const uint8_t *name;
    size_t len;
    uint8_t space;
} var_key;

static bool var_same(const void *slot, const void *key, void *ctx)
{
    const var_slot *vs = slot;
    const var_key *k = key;
    (void)ctx;
    return vs->space == k->space && vs->name_len == k->len &&
           memcmp(vs->name, k->name, k->len) == 0;
}

static var_slot *var_find(walk *w, const uint8_t *name, size_t len, uint8_t space, bool create)
{
    var_key k = {name, len, space};
    uint64_t h = stg_map_hash(&w->vars, name, len, &space, 1);
    stg_map_status room = create ? stg_map_reserve(&w->vars) : STG_MAP_OK;
    if (room != STG_MAP_OK) {
        w->vars_full = true; /* every name read is then built: fails closed */
        w->r->out_of_memory = w->r->out_of_memory || room == STG_MAP_NOMEM;
        return NULL;
    }
    void *slot = NULL;
    stg_map_status st = stg_map_find(&w->vars, h, var_same, &k, NULL, &slot);
    if (st == STG_MAP_FOUND) {
        return slot;
    }
    if (!create) {
        return NULL;
    }
    if (st != STG_MAP_ABSENT) {
        w->vars_full = true;
        return NULL;
    }
    stg_map_claim(&w->vars, slot, h);
    var_slot *vs = slot;
    vs->name = name;
    vs->name_len = len;
    vs->space = space;
    vs->first = vs->count = 0;
    vs->changes = 0;
    vs->v = v_kind(K_DATA);
    w->changed = true;
    return vs;
}

static void var_assign_name(walk *w, const uint8_t *name, size_t len, bool ns, const tval *v)
{
    var_slot *vs = var_find(w, name, len, ns ? SPACE_NS : SPACE_VAR, true);
    if (vs == NULL) {
        return;
    }
    tval joined = join_in(w, vs->v, v);
    if (!same_value(&joined, &vs->v)) {
        if (++vs->changes > WIDEN_AFTER && joined.n > 0) {
            for (size_t k = 0; k < joined.n; k++) {
                joined.many |= const_summary(w, joined.c[k]);
            }
            joined.n = 0;
        }
        vs->v = joined;
        w->changed = true;
    }
}

static void var_assign(walk *w, size_t tok, bool ns, const tval *v)
{
    const stg_jinja_tok *t = &w->t[tok];
    var_assign_name(w, w->s + t->offset, t->len, ns, v);
}

/* A name read: what the caller passes under it (data) or anything assigned to it. */
static tval var_load(walk *w, size_t tok, bool ns)
{
    if (w->vars_full) {
        return v_kind(K_BUILT);
    }
    const stg_jinja_tok *t = &w->t[tok];
    var_slot *vs = var_find(w, w->s + t->offset, t->len, ns ? SPACE_NS : SPACE_VAR, false);
    return vs != NULL ? vs->v : v_kind(K_DATA);
}

/* ---------------------------------------------------------------- name positions */

static bool bytes_are(const uint8_t *p, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(p, word, n) == 0;
}

/* A name looked up: a subscript or |attr (whole) or an attribute path of the filters that
 * take one (dotted: jinja2 splits it on '.' and looks each part up). */
static void check_name(walk *w, size_t tok, const tval *v, bool dotted)
{
    if (v->kind & K_BUILT) {
        unsafe(w, tok,
               "looks up a name made of computed text (a filter's output, str() of an object, a "
               "block set or a macro's output), which can spell any attribute",
               NULL, 0);
        return;
    }
    if (v->many & (dotted ? M_US_PART : M_US_START)) {
        unsafe(w, tok, "looks up a name starting with an underscore (one of many literals)", NULL,
               0);
        return;
    }
    for (size_t k = 0; k < v->n; k++) {
        size_t n;
        const uint8_t *p = const_bytes(w, v->c[k], &n);
        for (size_t s = 0; s < n;) {
            size_t e = s;
            while (e < n && (!dotted || p[e] != '.')) {
                e++;
            }
            if (e > s && internal_name(p + s, e - s)) {
                unsafe(w, tok, "looks up the internal name", p + s, e - s);
                return;
            }
            s = e + 1;
        }
    }
}

/* str.format / format_map on a string the template holds: a replacement field with `.` or
 * `[` reads attributes or items of the arguments ('{0.__class__}'). */
static void check_format_receiver(walk *w, size_t tok, const tval *recv)
{
    if ((recv->kind & K_BUILT) || recv->many) {
        unsafe(w, tok, "calls str.format on computed text", NULL, 0);
        return;
    }
    for (size_t k = 0; k < recv->n; k++) {
        size_t n;
        const uint8_t *p = const_bytes(w, recv->c[k], &n);
        for (size_t s = 0; s < n; s++) {
            if (p[s] != '{' || (s + 1 < n && p[s + 1] == '{')) {
                s += p[s] == '{' ? 1 : 0;
                continue;
            }
            for (size_t e = s + 1; e < n && p[e] != '}' && p[e] != '!' && p[e] != ':'; e++) {
                if (p[e] == '.' || p[e] == '[') {
                    unsafe(w, tok, "calls str.format with a field that reads attributes or items",
                           NULL, 0);
                    return;
                }
            }
        }
    }
}

/* ---------------------------------------------------------------- expressions */

static tval expr(walk *w);
static tval expr_or(walk *w);
static bool deeper(walk *w);
static tval unary(walk *w, bool with_filter);
static tval primary(walk *w);
static tval postfix(walk *w, tval v, size_t name_tok);

#define MAX_ARGS 8u
typedef struct call_args {
    tval pos[MAX_ARGS];
    size_t npos; /* positional arguments stored (more are only joined into `rest`) */
    size_t pos_tok[MAX_ARGS];
    size_t kw_tok[MAX_ARGS]; /* NAME token of each keyword argument */
    tval kw[MAX_ARGS];
    size_t nkw;
    tval rest; /* every argument joined, stored or not */
} call_args;

/* `(` args `)` as jinja2's parse_call_args reads them (positional, name=value, *a, **k). */
static void parse_args(walk *w, call_args *a)
{
    memset(a, 0, sizeof *a);
    advance(w); /* ( */
    bool first = true;
    while (!w->failed && !is_op(w, ')')) {
        if (!first && !expect_op(w, ',', "expected ',' or ')' in a call")) {
            return;
        }
        first = false;
        if (is_op(w, ')')) {
            break;
        }
        if (is_op(w, '*') || is_op(w, STG_JOP_POW)) {
            advance(w);
            tval v = expr(w);
            a->rest = join_in(w, a->rest, &v);
            continue;
        }
        size_t at = w->i;
        if (cur(w)->type == STG_JT_NAME && w->i + 1 < w->nt && w->t[w->i + 1].type == STG_JT_OP &&
            w->t[w->i + 1].op == '=') {
            w->i += 2;
            tval v = expr(w);
            if (a->nkw < MAX_ARGS) {
                a->kw_tok[a->nkw] = at;
                a->kw[a->nkw++] = v;
            }
            a->rest = join_in(w, a->rest, &v);
            continue;
        }
        tval v = expr(w);
        if (a->npos < MAX_ARGS) {
            a->pos_tok[a->npos] = at;
            a->pos[a->npos++] = v;
        }
        a->rest = join_in(w, a->rest, &v);
    }
    (void)expect_op(w, ')', "expected ')'");
}

static const tval *kwarg(const walk *w, const call_args *a, const char *name, size_t *tok)
{
    for (size_t k = 0; k < a->nkw; k++) {
        if (tok_is_name(w, a->kw_tok[k], name)) {
            *tok = a->kw_tok[k];
            return &a->kw[k];
        }
    }
    return NULL;
}

static bool name_in(const uint8_t *p, size_t n, const char *const *list)
{
    for (size_t k = 0; list[k] != NULL; k++) {
        if (bytes_are(p, n, list[k])) {
            return true;
        }
    }
    return false;
}

/* Filters whose output is the caller's data when their input is (items, subsets, orders). */
static const char *const keep_filters[] = {
    "select", "reject", "selectattr", "rejectattr", "map",   "first",   "last",  "list",
    "sort",   "unique", "reverse",    "batch",      "slice", "groupby", "items", "dictsort",
    "random", "tojson", "min",        "max",        "attr",  "default", "d",     NULL};
/* Filters whose output is a number or a boolean. */
static const char *const num_filters[] = {"length", "count", "int",       "float",
                                          "abs",    "round", "wordcount", NULL};
/* Every other filter (string, join, format, replace, lower, trim, escape ...) makes text:
 * str() of its input and arguments, reshaped. */

/* The attribute arguments of the filters that look attributes up (jinja2's make_attrgetter):
 * the positional index of `attribute`, or -1 when only the keyword names it. */
static int attribute_position(const uint8_t *p, size_t n)
{
    static const struct {
        const char *name;
        int pos;
    } table[] = {{"selectattr", 0}, {"rejectattr", 0}, {"groupby", 0},  {"sum", 0},
                 {"sort", 2},       {"unique", 1},     {"min", 1},      {"max", 1},
                 {"join", 1},       {"map", -1},       {"dictsort", -1}};
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        if (bytes_are(p, n, table[k].name)) {
            return table[k].pos;
        }
    }
    return -2; /* looks nothing up */
}

/* map(name, ...): the filter it applies is a name too. */
static tval map_filter(walk *w, const call_args *a, tval out)
{
    if (a->npos == 0) {
        return out;
    }
    const tval *f = &a->pos[0];
    if ((f->kind & K_BUILT) || f->many) {
        unsafe(w, a->pos_tok[0], "applies a filter chosen by computed text (map)", NULL, 0);
        return v_kind(K_BUILT);
    }
    for (size_t k = 0; k < f->n; k++) {
        size_t n;
        const uint8_t *p = const_bytes(w, f->c[k], &n);
        if (bytes_are(p, n, "attr") && a->npos > 1) {
            check_name(w, a->pos_tok[1], &a->pos[1], false);
        }
        if (!name_in(p, n, keep_filters) && !name_in(p, n, num_filters)) {
            out = v_kind(K_BUILT); /* map('string') and the like make text */
        }
    }
    return out;
}

/* `|` name[.name] [(args)] applied to subject. */
static tval filter(walk *w, const tval *subject)
{
    advance(w); /* | */
    if (cur(w)->type != STG_JT_NAME) {
        malformed(w, w->i, "expected a filter name");
        return v_kind(K_BUILT);
    }
    size_t name_tok = w->i;
    const uint8_t *fname = w->s + cur(w)->offset;
    size_t flen = cur(w)->len;
    advance(w);
    while (is_op(w, '.') && w->i + 1 < w->nt && w->t[w->i + 1].type == STG_JT_NAME) {
        w->i += 2; /* a dotted filter name: no such filter in jinja2, it fails at compile */
        flen = 0;
    }
    call_args a;
    memset(&a, 0, sizeof a);
    if (is_op(w, '(')) {
        parse_args(w, &a);
    }
    size_t kw_at = 0;
    const tval *attribute = kwarg(w, &a, "attribute", &kw_at);
    if (attribute != NULL) {
        check_name(w, kw_at, attribute, true);
    }
    int pos = attribute_position(fname, flen);
    if (pos >= 0 && (size_t)pos < a.npos) {
        check_name(w, a.pos_tok[pos], &a.pos[pos], true);
    }
    if (bytes_are(fname, flen, "attr")) {
        if (a.npos > 0) {
            check_name(w, a.pos_tok[0], &a.pos[0], false);
        } else {
            malformed(w, name_tok, "attr needs a name");
        }
    }
    if (name_in(fname, flen, num_filters)) {
        return v_kind(K_NUM);
    }
    static const char *const reshaping[] = {"map",     "attr",   "default", "d",
                                            "reverse", "tojson", NULL};
    if ((subject->kind & K_BUILT) == 0 && has_text(subject) && name_in(fname, flen, keep_filters) &&
        !name_in(fname, flen, reshaping)) {
        /* a subset, an order or one member of a literal container or of a literal string's
         * characters (`'ab'|first`); a string's items() and the like fail in jinja2 */
        static const char *const one[] = {"first", "last", "random", "min", "max", NULL};
        tval m = member_of(w, subject);
        if (!name_in(fname, flen, one)) {
            m.kind |= K_COLL;
        }
        return m;
    }
    if (has_text(subject) || !name_in(fname, flen, keep_filters)) {
        return v_kind(K_BUILT);
    }
    tval out = v_kind(K_DATA);
    if (bytes_are(fname, flen, "default") || bytes_are(fname, flen, "d")) {
        out = join_in(w, out, &a.rest); /* the default is the output when the input is undefined */
    } else if (bytes_are(fname, flen, "map")) {
        out = map_filter(w, &a, out);
    }
    return out;
}

/* `is` [not] name [(args) | one argument]: a boolean. */
static tval test(walk *w)
{
    advance(w); /* is */
    if (is_name(w, "not")) {
        advance(w);
    }
    if (cur(w)->type != STG_JT_NAME) {
        malformed(w, w->i, "expected a test name");
        return v_kind(K_NUM);
    }
    advance(w);
    while (is_op(w, '.') && w->i + 1 < w->nt && w->t[w->i + 1].type == STG_JT_NAME) {
        w->i += 2;
    }
    uint8_t ty = cur(w)->type;
    if (is_op(w, '(')) {
        call_args a;
        parse_args(w, &a);
    } else if ((ty == STG_JT_NAME || ty == STG_JT_STRING || ty == STG_JT_INTEGER ||
                ty == STG_JT_FLOAT || is_op(w, '[') || is_op(w, '{')) &&
               !is_name(w, "else") && !is_name(w, "or") && !is_name(w, "and")) {
        if (is_name(w, "is")) {
            malformed(w, w->i, "tests cannot be chained with is");
            return v_kind(K_NUM);
        }
        size_t at = w->i;
        (void)postfix(w, primary(w), cur(w)->type == STG_JT_NAME ? at : SIZE_MAX);
    }
    return v_kind(K_NUM);
}

static tval filter_expr(walk *w, tval v)
{
    while (!w->failed) {
        if (is_op(w, '|')) {
            v = filter(w, &v);
        } else if (is_name(w, "is")) {
            v = test(w);
        } else if (is_op(w, '(')) {
            call_args a;
            parse_args(w, &a);
            v = v_kind(K_BUILT);
        } else {
            break;
        }
    }
    return v;
}

/* `[` subscript `]` of v: items (name positions) and slices. */
static tval subscript(walk *w, const tval *v)
{
    size_t open = w->i;
    advance(w); /* [ */
    bool slice = false, tuple = false, first = true;
    tval key = v_kind(0);
    size_t key_tok = open;
    while (!w->failed && !is_op(w, ']')) {
        if (!first) {
            if (!expect_op(w, ',', "expected ',' or ']' in a subscript")) {
                break;
            }
            tuple = true;
            if (is_op(w, ']')) {
                break;
            }
        }
        first = false;
        key_tok = w->i;
        if (!is_op(w, ':')) {
            key = expr(w);
        }
        if (is_op(w, ':')) {
            slice = true;
            for (int part = 0; part < 2 && is_op(w, ':'); part++) {
                advance(w);
                if (!is_op(w, ':') && !is_op(w, ']') && !is_op(w, ',')) {
                    (void)expr(w);
                }
            }
        }
    }
    if (first && !w->failed) {
        malformed(w, w->i, "an empty subscript");
    }
    (void)expect_op(w, ']', "expected ']'");
    if (!slice && !tuple) {
        check_name(w, key_tok, &key, false);
    }
    return member_of(w, v);
}

typedef struct callee {
    size_t name_tok; /* a plain name called: its token; SIZE_MAX otherwise */
    bool method;     /* an attribute of `recv` called */
    tval recv;
} callee;

/* A call's arguments flow into the macro's parameters (a name's value is every value it is
 * given anywhere). */
static void bind_macro(walk *w, const var_slot *m, const call_args *a)
{
    for (size_t k = 0; k < a->npos && k < m->count; k++) {
        var_assign(w, w->params[m->first + k], false, &a->pos[k]);
    }
    /* arguments past the parameters are the macro's varargs and kwargs (tuple and dict: a
     * literal container of them), and every keyword also binds its parameter */
    for (size_t k = m->count; k < a->npos; k++) {
        tval extra = a->pos[k];
        extra.kind |= K_COLL;
        var_assign_name(w, (const uint8_t *)"varargs", 7, false, &extra);
    }
    for (size_t k = 0; k < a->nkw; k++) {
        var_assign(w, a->kw_tok[k], false, &a->kw[k]);
        tval extra = a->kw[k];
        extra.kind |= K_COLL;
        var_assign_name(w, (const uint8_t *)"kwargs", 6, false, &extra);
    }
    if (a->npos > MAX_ARGS - 1 || a->nkw > MAX_ARGS - 1) {
        /* arguments past those stored: joined, the values of both */
        tval rest = a->rest;
        rest.kind |= K_COLL;
        var_assign_name(w, (const uint8_t *)"varargs", 7, false, &rest);
        var_assign_name(w, (const uint8_t *)"kwargs", 6, false, &rest);
    }
}

static tval call(walk *w, const callee *c)
{
    call_args a;
    parse_args(w, &a);
    if (c->method) {
        /* a method of the caller's data: its result is data, or what the template passed in
         * (x.get('k', '__class__')); of a string or object the template made: built */
        if ((c->recv.kind & (K_COLL | K_BUILT)) == K_COLL) {
            /* d.items(), d.keys(): the container's members again; d.get(k, default) may
             * return what it is given */
            return join_in(w, c->recv, &a.rest);
        }
        if (has_text(&c->recv)) {
            return v_kind(K_BUILT);
        }
        tval out = v_kind(K_DATA);
        return join_in(w, out, &a.rest);
    }
    if (c->name_tok == SIZE_MAX) {
        return v_kind(K_BUILT);
    }
    const stg_jinja_tok *t = &w->t[c->name_tok];
    const uint8_t *p = w->s + t->offset;
    var_slot *m = var_find(w, p, t->len, SPACE_MACRO, false);
    if (m != NULL) {
        bind_macro(w, m, &a);
        return v_kind(K_BUILT);
    }
    if (bytes_are(p, t->len, "range")) {
        return v_kind(K_NUM);
    }
    if (bytes_are(p, t->len, "namespace")) {
        for (size_t k = 0; k < a.nkw; k++) {
            var_assign(w, a.kw_tok[k], true, &a.kw[k]);
        }
        return v_kind(K_DATA);
    }
    if (bytes_are(p, t->len, "raise_exception")) {
        return v_kind(K_DATA);
    }
    /* dict(k=...) spells names as keywords; other functions return what they are given */
    return v_kind(K_BUILT);
}

/* Subscripts, attributes and calls after a primary. name_tok: the primary was this plain
 * name (its attributes may be namespace attributes the template set). */
static tval postfix(walk *w, tval v, size_t name_tok)
{
    callee c = {name_tok, false, v_kind(0)};
    while (!w->failed) {
        if (is_op(w, '.')) {
            advance(w);
            const stg_jinja_tok *t = cur(w);
            if (t->type == STG_JT_NAME) {
                if (bytes_are(w->s + t->offset, t->len, "format") ||
                    bytes_are(w->s + t->offset, t->len, "format_map")) {
                    check_format_receiver(w, w->i, &v);
                }
                tval recv = v;
                v = attr_of(&v);
                if (c.name_tok != SIZE_MAX && !c.method) {
                    tval ns = var_load(w, w->i, true);
                    v = join_in(w, v, &ns);
                }
                c = (callee){SIZE_MAX, true, recv};
                advance(w);
            } else if (t->type == STG_JT_INTEGER) {
                v = attr_of(&v);
                c = (callee){SIZE_MAX, false, v_kind(0)};
                advance(w);
            } else {
                malformed(w, w->i, "expected a name or a number after '.'");
            }
        } else if (is_op(w, '[')) {
            v = subscript(w, &v);
            c = (callee){SIZE_MAX, false, v_kind(0)};
        } else if (is_op(w, '(')) {
            v = call(w, &c);
            c = (callee){SIZE_MAX, false, v_kind(0)};
        } else {
            break;
        }
    }
    return v;
}

/* The globals whose functions' __globals__ reach Python's modules, and the objects of web
 * frameworks' template contexts that published gadgets start from. */
static const char *const gadget_globals[] = {"lipsum", "cycler",  "joiner",  "self",
                                             "config", "request", "url_for", "get_flashed_messages",
                                             NULL};

static tval string_literal(walk *w)
{
    uint8_t buf[CONST_MAX];
    size_t n = 0;
    bool exact = true;
    while (cur(w)->type == STG_JT_STRING) {
        /* adjacent literals are one string in jinja2 ('__cla' 'ss__') */
        bool e = true;
        n += stg_jinja_string_value(w->s, cur(w), buf + n, sizeof buf - n, &e);
        exact = exact && e;
        advance(w);
    }
    return exact ? v_const(w, buf, n) : v_kind(K_BUILT);
}

/* `[...]`, `{k: v}`: a container the template made. */
static tval container(walk *w, uint8_t close, bool dict)
{
    advance(w);
    bool first = true;
    tval members = v_kind(K_COLL);
    while (!w->failed && !is_op(w, close)) {
        if (!first && !expect_op(w, ',', "expected ',' in a list or dict")) {
            break;
        }
        first = false;
        if (is_op(w, close)) {
            break;
        }
        tval item = expr(w);
        members = join_in(w, members, &item);
        if (dict && expect_op(w, ':', "expected ':' in a dict")) {
            item = expr(w);
            members = join_in(w, members, &item);
        }
    }
    (void)expect_op(w, close, "a list or dict is not closed");
    return members;
}

static tval tuple(walk *w, bool condexpr, const char *end_word, bool explicit_parens);

static tval primary(walk *w)
{
    const stg_jinja_tok *t = cur(w);
    if (t->type == STG_JT_NAME) {
        const uint8_t *p = w->s + t->offset;
        static const char *const consts[] = {"true",  "false", "none", "True",
                                             "False", "None",  NULL};
        if (name_in(p, t->len, consts)) {
            advance(w);
            return v_kind(K_NUM);
        }
        if (name_in(p, t->len, gadget_globals)) {
            unsafe(w, w->i, "uses the global", p, t->len);
        }
        tval v = var_load(w, w->i, false);
        advance(w);
        return v;
    }
    if (t->type == STG_JT_STRING) {
        return string_literal(w);
    }
    if (t->type == STG_JT_INTEGER || t->type == STG_JT_FLOAT) {
        advance(w);
        return v_kind(K_NUM);
    }
    if (is_op(w, '(')) {
        advance(w);
        if (is_op(w, ')')) {
            advance(w);
            return v_kind(K_COLL); /* () */
        }
        tval v = tuple(w, true, NULL, true);
        (void)expect_op(w, ')', "expected ')'");
        return v;
    }
    if (is_op(w, '[')) {
        return container(w, ']', false);
    }
    if (is_op(w, '{')) {
        return container(w, '}', true);
    }
    malformed(w, w->i, "expected an expression");
    return v_kind(K_BUILT);
}

static tval unary(walk *w, bool with_filter)
{
    tval v;
    if (is_op(w, '-') || is_op(w, '+')) {
        advance(w);
        if (deeper(w)) {
            (void)unary(w, false);
        }
        w->depth--;
        v = postfix(w, v_kind(K_NUM), SIZE_MAX);
    } else {
        size_t at = w->i;
        bool plain_name = cur(w)->type == STG_JT_NAME;
        v = primary(w);
        v = postfix(w, v, plain_name ? at : SIZE_MAX);
    }
    return with_filter ? filter_expr(w, v) : v;
}

static tval power(walk *w)
{
    tval v = unary(w, true);
    while (!w->failed && is_op(w, STG_JOP_POW)) {
        advance(w);
        (void)unary(w, true);
        v = v_kind(K_NUM);
    }
    return v;
}

/* * / // %: '%' formats a string ('%c%c' % (95, 95) is "__") and '*' repeats one. */
static tval math2(walk *w)
{
    tval v = power(w);
    while (!w->failed &&
           (is_op(w, '*') || is_op(w, '/') || is_op(w, STG_JOP_FLOORDIV) || is_op(w, '%'))) {
        bool text_op = is_op(w, '*') || is_op(w, '%');
        advance(w);
        tval b = power(w);
        if (text_op && (has_text(&v) || has_text(&b))) {
            v = v_kind(K_BUILT);
        } else {
            v = text_op ? join_in(w, v, &b) : v_kind(K_NUM);
        }
    }
    return v;
}

static tval concat_level(walk *w)
{
    tval v = math2(w);
    while (!w->failed && is_op(w, '~')) {
        advance(w);
        tval b = math2(w);
        v = concat(w, &v, &b, true);
    }
    return v;
}

static tval math1(walk *w)
{
    tval v = concat_level(w);
    while (!w->failed && (is_op(w, '+') || is_op(w, '-'))) {
        bool plus = is_op(w, '+');
        advance(w);
        tval b = concat_level(w);
        if (!plus) {
            v = v_kind(K_NUM);
        } else if (has_text(&v) || has_text(&b)) {
            v = concat(w, &v, &b, false);
        } else {
            v = join_in(w, v, &b);
        }
    }
    return v;
}

static bool compare_op(walk *w)
{
    if (is_op(w, STG_JOP_EQ) || is_op(w, STG_JOP_NE) || is_op(w, '<') || is_op(w, '>') ||
        is_op(w, STG_JOP_LE) || is_op(w, STG_JOP_GE) || is_name(w, "in")) {
        advance(w);
        return true;
    }
    if (is_name(w, "not") && tok_is_name(w, w->i + 1, "in")) {
        w->i += 2;
        return true;
    }
    return false;
}

static tval compare(walk *w)
{
    tval v = math1(w);
    while (!w->failed && compare_op(w)) {
        (void)math1(w);
        v = v_kind(K_NUM);
    }
    return v;
}

/* One level deeper in an expression: false (and the limit reported once) past
 * MAX_EXPR_DEPTH, which bounds every recursion of the walk (jinja2's parser recurses too). */
static bool deeper(walk *w)
{
    if (++w->depth <= MAX_EXPR_DEPTH) {
        return true;
    }
    if (!w->failed && w->reporting) {
        stg_report_limit(w->r, at_file(w, w->i), "chat template expression nesting",
                         MAX_EXPR_DEPTH);
    }
    w->failed = true;
    return false;
}

static tval not_level(walk *w)
{
    if (is_name(w, "not")) {
        advance(w);
        if (deeper(w)) {
            (void)not_level(w);
        }
        w->depth--;
        return v_kind(K_NUM);
    }
    return compare(w);
}

static tval and_level(walk *w)
{
    tval v = not_level(w);
    while (!w->failed && is_name(w, "and")) {
        advance(w);
        tval b = not_level(w);
        v = join_in(w, v, &b);
    }
    return v;
}

static tval expr_or(walk *w)
{
    if (!deeper(w)) {
        w->depth--;
        return v_kind(K_BUILT);
    }
    tval v = and_level(w);
    while (!w->failed && is_name(w, "or")) {
        advance(w);
        tval b = and_level(w);
        v = join_in(w, v, &b);
    }
    w->depth--;
    return v;
}

/* a if b else c (jinja2's parse_condexpr; a missing else is undefined: data) */
static tval expr(walk *w)
{
    tval v = expr_or(w);
    while (!w->failed && is_name(w, "if")) {
        advance(w);
        (void)expr_or(w);
        tval other = v_kind(K_DATA);
        if (is_name(w, "else")) {
            advance(w);
            other = expr(w);
        }
        v = join_in(w, v, &other);
    }
    return v;
}

static bool tuple_ends(const walk *w, const char *end_word)
{
    return at_tag_end(w) || is_op(w, ')') || (end_word != NULL && is_name(w, end_word));
}

/* a, b, ... (jinja2's parse_tuple): one expression is itself; several are a tuple. */
static tval tuple(walk *w, bool condexpr, const char *end_word, bool explicit_parens)
{
    tval v = v_kind(0), all = v_kind(K_COLL);
    size_t items = 0;
    bool comma = false;
    while (!w->failed) {
        if (items > 0 && !expect_op(w, ',', "expected ','")) {
            break;
        }
        if (items > 0 && tuple_ends(w, end_word)) {
            break;
        }
        v = condexpr ? expr(w) : expr_or(w);
        all = join_in(w, all, &v);
        items++;
        if (!is_op(w, ',')) {
            break;
        }
        comma = true;
    }
    if (items == 0 && !explicit_parens) {
        malformed(w, w->i, "expected an expression");
    }
    return comma ? all : v;
}

/* ---------------------------------------------------------------- statements */

typedef enum block_kind {
    B_FOR = 1,
    B_IF,
    B_SET,
    B_MACRO,
    B_CALL,
    B_FILTER,
    B_WITH,
    B_BLOCK,
    B_AUTOESCAPE,
    B_GENERATION
} block_kind;

static const struct {
    const char *open, *close;
    block_kind kind;
} blocks[] = {{"for", "endfor", B_FOR},
              {"if", "endif", B_IF},
              {"set", "endset", B_SET},
              {"macro", "endmacro", B_MACRO},
              {"call", "endcall", B_CALL},
              {"filter", "endfilter", B_FILTER},
              {"with", "endwith", B_WITH},
              {"block", "endblock", B_BLOCK},
              {"autoescape", "endautoescape", B_AUTOESCAPE},
              {"generation", "endgeneration", B_GENERATION}};

typedef struct block_stack {
    uint8_t kind[MAX_BLOCKS];
    bool seen_else[MAX_BLOCKS];
    size_t depth;
} block_stack;

#define MAX_TARGETS 16u

typedef struct targets {
    size_t tok[MAX_TARGETS];
    bool ns[MAX_TARGETS];
    size_t n;
    bool several;
} targets;

/* Assignment targets: names, `ns.attr` (set), tuples of them with optional parentheses. */
static void parse_targets(walk *w, targets *tg, bool allow_ns, const char *end_word)
{
    memset(tg, 0, sizeof *tg);
    while (!w->failed) {
        if (is_op(w, '(') || is_op(w, ')')) {
            advance(w);
            continue;
        }
        if (cur(w)->type != STG_JT_NAME || (end_word != NULL && is_name(w, end_word))) {
            break;
        }
        size_t at = w->i;
        bool ns = false;
        advance(w);
        if (allow_ns && is_op(w, '.') && w->i + 1 < w->nt && w->t[w->i + 1].type == STG_JT_NAME) {
            at = w->i + 1;
            ns = true;
            w->i += 2;
        }
        if (tg->n < MAX_TARGETS) {
            tg->tok[tg->n] = at;
            tg->ns[tg->n++] = ns;
        }
        if (!is_op(w, ',')) {
            break;
        }
        tg->several = true;
        advance(w);
    }
    while (is_op(w, ')')) {
        advance(w);
    }
    if (tg->n == 0) {
        malformed(w, w->i, "expected a name to assign");
    }
}

static void assign(walk *w, const targets *tg, const tval *v)
{
    tval each = tg->several ? member_of(w, v) : *v;
    for (size_t k = 0; k < tg->n; k++) {
        var_assign(w, tg->tok[k], tg->ns[k], &each);
    }
}

/* {% macro name(a, b=default) %}: the parameter names, kept for the calls that bind them. */
static void macro_signature(walk *w, var_slot *m, bool record)
{
    if (!is_op(w, '(')) {
        malformed(w, w->i, "expected '(' after the macro name");
        return;
    }
    advance(w);
    size_t first = w->nparams, count = 0;
    while (!w->failed && !is_op(w, ')')) {
        if (count > 0 && !expect_op(w, ',', "expected ',' in the macro's parameters")) {
            return;
        }
        if (cur(w)->type != STG_JT_NAME) {
            malformed(w, w->i, "expected a parameter name");
            return;
        }
        size_t at = w->i;
        if (record && w->nparams == w->params_cap) {
            size_t cap = w->params_cap == 0 ? 64 : w->params_cap * 2;
            size_t *p = cap <= STG_JINJA_MAX_TOKENS ? stg_mem_realloc(w->params, cap * sizeof *p)
                                                    : NULL;
            if (p == NULL) {
                stg_report_oom(w->r);
                w->failed = true;
                return;
            }
            w->params = p;
            w->params_cap = cap;
        }
        if (record) {
            w->params[w->nparams++] = at;
        }
        count++;
        advance(w);
        if (is_op(w, '=')) {
            advance(w);
            tval d = expr(w);
            var_assign(w, at, false, &d);
        }
    }
    (void)expect_op(w, ')', "expected ')'");
    if (record && m != NULL) {
        m->first = first;
        m->count = count;
    }
}

static void push_block(walk *w, block_stack *st, block_kind kind)
{
    if (st->depth >= MAX_BLOCKS) {
        if (!w->failed && w->reporting) {
            stg_report_limit(w->r, at_file(w, w->i), "chat template block nesting", MAX_BLOCKS);
        }
        w->failed = true;
        return;
    }
    st->kind[st->depth] = (uint8_t)kind;
    st->seen_else[st->depth++] = false;
}

static void loader_tag(walk *w, size_t tok)
{
    if (w->reporting && w->findings < MAX_FINDINGS) {
        w->findings++;
        stg_report_add(w->r, STG_TEMPLATE_LOADER, at_file(w, tok),
                       "the %s chat template loads another template (extends, include or "
                       "import): what it runs depends on the renderer's template loader",
                       w->src->where);
    }
    while (!at_tag_end(w)) {
        advance(w);
    }
}

static void stmt_for(walk *w, block_stack *st)
{
    targets tg;
    parse_targets(w, &tg, false, "in");
    if (!is_name(w, "in")) {
        malformed(w, w->i, "expected 'in' in a for loop");
        return;
    }
    advance(w);
    tval iter = tuple(w, false, "recursive", false);
    if (is_name(w, "if")) {
        advance(w);
        (void)expr(w);
    }
    if (is_name(w, "recursive")) {
        advance(w);
    }
    /* each item of what it iterates: data of data, built of anything the template made */
    targets one = tg;
    one.several = false;
    tval item = member_of(w, &iter);
    if (tg.several) {
        /* unpacked items: pairs of a literal dict's items() are its members too */
        item = (iter.kind & K_COLL) != 0 ? item : member_of(w, &item);
    }
    assign(w, &one, &item);
    push_block(w, st, B_FOR);
}

static void stmt_set(walk *w, block_stack *st)
{
    targets tg;
    parse_targets(w, &tg, true, NULL);
    if (is_op(w, '=')) {
        advance(w);
        tval v = tuple(w, true, NULL, false);
        assign(w, &tg, &v);
        return;
    }
    /* {% set x %}...{% endset %}: x is the rendered body, text the template wrote */
    tval body = v_kind(K_BUILT);
    while (!w->failed && is_op(w, '|')) {
        body = filter(w, &body);
    }
    tval built = v_kind(K_BUILT);
    assign(w, &tg, &built);
    push_block(w, st, B_SET);
}

static void stmt_macro(walk *w, block_stack *st)
{
    if (cur(w)->type != STG_JT_NAME) {
        malformed(w, w->i, "expected a macro name");
        return;
    }
    size_t at = w->i;
    var_slot *m = var_find(w, w->s + cur(w)->offset, cur(w)->len, SPACE_MACRO, true);
    /* the first walk records the parameters; later walks find them recorded */
    bool record = m != NULL && m->count == 0 && m->first == 0;
    advance(w);
    macro_signature(w, m, record);
    tval built = v_kind(K_BUILT);
    var_assign(w, at, false, &built);
    push_block(w, st, B_MACRO);
}

static void stmt_with(walk *w, block_stack *st)
{
    bool first = true;
    while (!w->failed && !at_tag_end(w)) {
        if (!first && !expect_op(w, ',', "expected ',' in with")) {
            return;
        }
        first = false;
        targets tg;
        parse_targets(w, &tg, false, NULL);
        if (!expect_op(w, '=', "expected '=' in with")) {
            return;
        }
        tval v = expr(w);
        assign(w, &tg, &v);
    }
    push_block(w, st, B_WITH);
}

static void stmt_call(walk *w, block_stack *st)
{
    if (is_op(w, '(')) {
        macro_signature(w, NULL, false);
    }
    (void)expr(w);
    push_block(w, st, B_CALL);
}

static void stmt_filter(walk *w, block_stack *st)
{
    tval body = v_kind(K_BUILT);
    if (cur(w)->type != STG_JT_NAME) {
        malformed(w, w->i, "expected a filter name");
        return;
    }
    /* the first filter's name is not preceded by '|': step back onto a virtual one */
    w->i--;
    body = filter(w, &body);
    while (!w->failed && is_op(w, '|')) {
        body = filter(w, &body);
    }
    push_block(w, st, B_FILTER);
}

/* `{% end... %}`, `{% else %}`, `{% elif %}`: true when the word was one of them. */
static bool stmt_end(walk *w, block_stack *st)
{
    bool is_else = is_name(w, "else"), is_elif = is_name(w, "elif");
    if (is_else || is_elif) {
        size_t top = st->depth;
        bool ok = top > 0 && !st->seen_else[top - 1] &&
                  (st->kind[top - 1] == B_IF || (is_else && st->kind[top - 1] == B_FOR));
        if (!ok) {
            malformed(w, w->i, is_else ? "else outside if or for" : "elif outside if");
            return true;
        }
        st->seen_else[top - 1] = is_else;
        advance(w);
        if (is_elif) {
            (void)expr(w);
        }
        return true;
    }
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
        if (!is_name(w, blocks[k].close)) {
            continue;
        }
        if (st->depth == 0 || st->kind[st->depth - 1] != blocks[k].kind) {
            malformed(w, w->i, "an end tag that closes no open block of its kind");
            return true;
        }
        st->depth--;
        advance(w);
        if (blocks[k].kind == B_BLOCK && cur(w)->type == STG_JT_NAME) {
            advance(w);
        }
        return true;
    }
    return false;
}

static void statement(walk *w, block_stack *st)
{
    if (cur(w)->type != STG_JT_NAME) {
        malformed(w, w->i, "a block tag must start with a name");
        return;
    }
    size_t at = w->i;
    if (stmt_end(w, st)) {
        return;
    }
    advance(w);
    if (tok_is_name(w, at, "for")) {
        stmt_for(w, st);
    } else if (tok_is_name(w, at, "if")) {
        (void)expr(w);
        push_block(w, st, B_IF);
    } else if (tok_is_name(w, at, "set")) {
        stmt_set(w, st);
    } else if (tok_is_name(w, at, "macro")) {
        stmt_macro(w, st);
    } else if (tok_is_name(w, at, "call")) {
        stmt_call(w, st);
    } else if (tok_is_name(w, at, "filter")) {
        stmt_filter(w, st);
    } else if (tok_is_name(w, at, "with")) {
        stmt_with(w, st);
    } else if (tok_is_name(w, at, "block")) {
        if (cur(w)->type != STG_JT_NAME) {
            malformed(w, w->i, "expected a block name");
            return;
        }
        while (cur(w)->type == STG_JT_NAME) {
            advance(w); /* the name, then scoped / required */
        }
        push_block(w, st, B_BLOCK);
    } else if (tok_is_name(w, at, "autoescape")) {
        (void)expr(w);
        push_block(w, st, B_AUTOESCAPE);
    } else if (tok_is_name(w, at, "generation")) {
        push_block(w, st, B_GENERATION); /* transformers' AssistantTracker tag */
    } else if (tok_is_name(w, at, "break") || tok_is_name(w, at, "continue")) {
        /* jinja2.ext.loopcontrols, which transformers enables */
    } else if (tok_is_name(w, at, "extends") || tok_is_name(w, at, "include") ||
               tok_is_name(w, at, "import") || tok_is_name(w, at, "from")) {
        loader_tag(w, at);
    } else {
        malformed(w, at,
                  "an unknown block tag (jinja2 with transformers' extensions has none "
                  "of that name)");
        return;
    }
    if (!w->failed && cur(w)->type != STG_JT_BLOCK_END) {
        malformed(w, w->i, "expected the end of the block tag");
    }
}

/* One walk over the tokens: every tag parsed, every value computed. */
static void walk_tokens(walk *w)
{
    block_stack st;
    st.depth = 0;
    w->i = 0;
    w->failed = false;
    w->depth = 0;
    while (!w->failed) {
        const stg_jinja_tok *t = cur(w);
        if (t->type == STG_JT_EOF) {
            break;
        }
        if (t->type == STG_JT_VAR_BEGIN) {
            advance(w);
            (void)tuple(w, true, NULL, false);
            if (!w->failed && cur(w)->type != STG_JT_VAR_END) {
                malformed(w, w->i, "expected the end of the print tag");
            }
        } else if (t->type == STG_JT_BLOCK_BEGIN) {
            advance(w);
            statement(w, &st);
        }
        advance(w);
    }
    if (!w->failed && st.depth > 0) {
        malformed(w, w->nt - 1, "a block tag is never closed");
    }
}

/* Rules that need no grammar: an attribute with an internal name (internal_name: jinja2's
 * sandbox refuses every one: they are Python's internals), and any name starting with "__". */
static void lexical_rules(walk *w)
{
    for (size_t k = 0; k < w->nt; k++) {
        const stg_jinja_tok *t = &w->t[k];
        if (t->type != STG_JT_NAME) {
            continue;
        }
        const stg_jinja_tok *prev = k > 0 ? &w->t[k - 1] : NULL;
        if (prev != NULL && prev->type == STG_JT_OP && prev->op == '.' &&
            internal_name(w->s + t->offset, t->len)) {
            unsafe(w, k, "reads the attribute", w->s + t->offset, t->len);
        } else if (t->len >= 2 && w->s[t->offset] == '_' && w->s[t->offset + 1] == '_') {
            unsafe(w, k, "uses the name", w->s + t->offset, t->len);
        }
    }
}

static void report_lex_error(walk *w, const stg_jinja_lex *lx)
{
    uint64_t at = w->src->map != NULL ? w->src->map(w->src->map_arg, lx->error_offset)
                                      : w->src->base + lx->error_offset;
    if (lx->error == STG_JINJA_E_MEMORY) {
        stg_report_oom(w->r);
    } else if (lx->error == STG_JINJA_E_LIMIT) {
        uint64_t value = strcmp(lx->limit, "chat template tokens") == 0 ? STG_JINJA_MAX_TOKENS
                         : strcmp(lx->limit, "chat template bracket depth") == 0
                             ? STG_JINJA_MAX_BRACKETS
                             : STG_JINJA_MAX_BYTES;
        stg_report_limit(w->r, at, lx->limit, value);
    } else {
        stg_report_add(w->r, STG_TEMPLATE_MALFORMED, at,
                       "the %s chat template does not lex as Jinja2 (%s): jinja2 refuses to "
                       "compile it",
                       w->src->where, lx->why);
    }
}

static void report_found(const stg_template_src *src, stg_report *r)
{
    char buf[48];
    const char *name = src->name != NULL ? shown(src->name, src->name_len, buf, sizeof buf)
                                         : "default";
    stg_report_add(r, STG_TEMPLATE_FOUND, src->map != NULL ? src->map(src->map_arg, 0) : src->base,
                   "a %s chat template (%s) of %zu bytes", src->where, name, src->len);
}

static void check_template(const stg_template_src *src, uint64_t hash_seed, stg_report *r)
{
    walk w;
    memset(&w, 0, sizeof w);
    w.src = src;
    w.s = src->text;
    w.r = r;
    stg_jinja_lex lx;
    if (!stg_jinja_lex_run(&lx, src->text, src->len)) {
        report_lex_error(&w, &lx);
        stg_jinja_lex_release(&lx);
        return;
    }
    w.t = lx.toks;
    w.nt = lx.count;
    uint64_t seed = hash_seed != 0 ? hash_seed : STG_HASH_SEED_DEFAULT;
    stg_map_init(&w.vars, sizeof(var_slot), seed, MAX_VARS);
    stg_map_init(&w.consts, sizeof(const_slot), seed, MAX_CONST_SLOTS);
    /* walk until the variable table holds still; then once more, reporting */
    unsigned pass = 0;
    do {
        w.changed = false;
        walk_tokens(&w);
    } while (w.changed && !w.failed && ++pass < MAX_PASSES);
    if (w.changed && !w.failed) {
        w.vars_full = true; /* not settled: every name read is taken as built (fails closed) */
    }
    w.reporting = true;
    walk_tokens(&w);
    lexical_rules(&w);
    if (w.dropped > 0) {
        stg_report_add(r, STG_TEMPLATE_UNSAFE, at_file(&w, 0),
                       "the %s chat template has %u more unsafe constructs", src->where, w.dropped);
    }
    stg_map_free(&w.vars);
    stg_map_free(&w.consts);
    stg_mem_free(w.pool);
    stg_mem_free(w.params);
    stg_jinja_lex_release(&lx);
}

/* The template's own verdict for `inspect` (a summary row): the worst of the findings its check
 * added after chat_template_found; findings only counted (past max_findings) may be anything,
 * so then the report's worst so far stands for them. */
static stg_verdict template_verdict(const stg_report *r, size_t from, uint64_t truncated_before)
{
    bool any = false;
    stg_severity worst = STG_SEV_INFO;
    for (size_t i = from; i < r->count; i++) {
        if (r->findings[i].code != STG_TEMPLATE_FOUND &&
            (!any || r->findings[i].severity > worst)) {
            worst = r->findings[i].severity;
            any = true;
        }
    }
    if (r->truncated > truncated_before && (!any || r->worst > worst)) {
        worst = r->worst;
        any = true;
    }
    return stg_verdict_of_severity(any, worst);
}

void stg_template_check(const stg_template_src *src, uint64_t hash_seed, stg_report *r)
{
    report_found(src, r);
    size_t from = r->count;
    uint64_t truncated = r->truncated;
    check_template(src, hash_seed, r);
    static const char unnamed[] = "default";
    stg_report_row row = {.kind = STG_SUMMARY_CHAT_TEMPLATE,
                          .name = src->name != NULL ? (const char *)src->name : unnamed,
                          .name_len = src->name != NULL ? src->name_len : sizeof unnamed - 1,
                          .value = src->where,
                          .value_len = strlen(src->where),
                          .count = src->len,
                          .offset = src->map != NULL ? src->map(src->map_arg, 0) : src->base,
                          .verdict = template_verdict(r, from, truncated)};
    stg_report_add_row(r, &row);
}

/* ---------------------------------------------------------------- JSON containers */

/* A JSON string's raw content (between its quotes) and where it starts in the file: maps an
 * offset of the decoded text back to the byte of the file that spells it. */
typedef struct json_string_map {
    const uint8_t *raw;
    size_t raw_len;
    uint64_t file_offset;
} json_string_map;

static uint64_t json_raw_offset(const void *arg, size_t decoded)
{
    const json_string_map *m = arg;
    size_t i = 0, d = 0;
    while (i < m->raw_len && d < decoded) {
        if (m->raw[i] != '\\' || i + 1 >= m->raw_len) {
            i++;
            d++;
            continue;
        }
        if (m->raw[i + 1] != 'u' || i + 6 > m->raw_len) {
            i += 2;
            d++;
            continue;
        }
        unsigned cp = 0;
        for (size_t k = 2; k < 6; k++) {
            int h = stg_hex_digit(m->raw[i + k]);
            cp = cp * 16 + (unsigned)(h < 0 ? 0 : h);
        }
        if (cp >= 0xd800 && cp < 0xdc00 && i + 12 <= m->raw_len) {
            i += 12; /* a surrogate pair: four bytes of UTF-8 */
            d += 4;
        } else {
            i += 6;
            d += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
        }
    }
    return m->file_offset + i;
}

typedef struct json_walk {
    stg_json_parser p;
    const uint8_t *buf;
    uint64_t seed;
    stg_report *r;
    size_t found;
} json_walk;

static bool key_is(const stg_json_event *ev, const char *word)
{
    return !ev->has_escapes && bytes_are(ev->str, ev->str_len, word);
}

/* Decodes a STRING event and checks it as a template named name (NULL: the default). */
static void check_json_string(json_walk *j, const stg_json_event *ev, const uint8_t *name,
                              size_t name_len)
{
    uint8_t *text = stg_mem_alloc(ev->str_len + 1);
    if (text == NULL) {
        stg_report_oom(j->r);
        return;
    }
    size_t n = stg_json_decode(ev->str, ev->str_len, text);
    json_string_map m = {ev->str, ev->str_len, (uint64_t)ev->offset + 1};
    stg_template_src src = {text, n, 0, json_raw_offset, &m, "JSON chat_template", name, name_len};
    stg_template_check(&src, j->seed, j->r);
    j->found++;
    stg_mem_free(text);
}

static void field_invalid(json_walk *j, const stg_json_event *ev, const char *what)
{
    stg_report_add(j->r, STG_TEMPLATE_FIELD_INVALID, ev->offset,
                   "chat_template %s: transformers cannot read it as a template", what);
}

/* One {"name": ..., "template": ...} entry of a chat_template list (its OBJECT_BEGIN read). */
static void check_named(json_walk *j, const stg_json_event *begin)
{
    stg_json_event ev, tpl_ev;
    bool has_name = false, has_tpl = false;
    uint8_t name[64];
    size_t name_len = 0;
    for (;;) {
        stg_json_type ty = stg_json_next(&j->p, &ev);
        if (ty == STG_JSON_OBJECT_END || ty == STG_JSON_ERROR || ty == STG_JSON_END) {
            break;
        }
        if (ty != STG_JSON_KEY) {
            continue;
        }
        bool is_name_key = key_is(&ev, "name"), is_tpl_key = key_is(&ev, "template");
        ty = stg_json_next(&j->p, &ev);
        if (ty == STG_JSON_OBJECT_BEGIN || ty == STG_JSON_ARRAY_BEGIN) {
            (void)stg_json_skip(&j->p, &ev, NULL, NULL);
        } else if (ty == STG_JSON_STRING && is_name_key && ev.str_len < sizeof name) {
            name_len = stg_json_decode(ev.str, ev.str_len, name);
            has_name = true;
        } else if (ty == STG_JSON_STRING && is_tpl_key) {
            tpl_ev = ev;
            has_tpl = true;
            /* checked once the entry's name is known (it may follow the template) */
        }
    }
    if (!has_tpl || !has_name) {
        field_invalid(j, begin, "lists an entry without a string name and template");
    }
    if (has_tpl) {
        check_json_string(j, &tpl_ev, has_name ? name : NULL, name_len);
    }
}

static void check_chat_template_value(json_walk *j)
{
    stg_json_event ev;
    stg_json_type ty = stg_json_next(&j->p, &ev);
    if (ty == STG_JSON_STRING) {
        check_json_string(j, &ev, NULL, 0);
    } else if (ty == STG_JSON_ARRAY_BEGIN) {
        for (;;) {
            stg_json_event item;
            stg_json_type it = stg_json_next(&j->p, &item);
            if (it == STG_JSON_ARRAY_END || it == STG_JSON_ERROR || it == STG_JSON_END) {
                break;
            }
            if (it == STG_JSON_OBJECT_BEGIN) {
                check_named(j, &item);
            } else {
                if (it == STG_JSON_ARRAY_BEGIN) {
                    (void)stg_json_skip(&j->p, &item, NULL, NULL);
                }
                field_invalid(j, &item, "lists an entry that is not an object");
            }
        }
    } else if (ty == STG_JSON_OBJECT_BEGIN) {
        (void)stg_json_skip(&j->p, &ev, NULL, NULL);
        field_invalid(j, &ev, "is an object, neither a string nor a list");
    } else if (ty != STG_JSON_NULL && ty != STG_JSON_ERROR && ty != STG_JSON_END) {
        field_invalid(j, &ev, "is neither a string nor a list");
    }
}

size_t stg_template_check_json(const uint8_t *buf, size_t len, const stg_limits *lim,
                               uint64_t hash_seed, stg_report *r)
{
    json_walk j;
    memset(&j, 0, sizeof j);
    j.buf = buf;
    j.seed = hash_seed;
    j.r = r;
    /* at most what the parser can use on this input (its documented bound), so that a document
     * the dispatcher's JSON sniff accepted is read to its end here as well */
    uint64_t cap = stg_json_memory_bound((uint64_t)len, lim->max_json_depth);
    if (lim->max_memory != 0 && lim->max_memory < cap) {
        cap = lim->max_memory;
    }
    stg_arena arena;
    stg_arena_init(&arena, cap > SIZE_MAX ? SIZE_MAX : (size_t)cap);
    stg_json_init(&j.p, buf, len, lim->max_json_depth, &arena);
    stg_json_event ev;
    if (stg_json_next(&j.p, &ev) == STG_JSON_OBJECT_BEGIN) {
        for (;;) {
            stg_json_type ty = stg_json_next(&j.p, &ev);
            if (ty != STG_JSON_KEY) {
                if (ty == STG_JSON_OBJECT_END || ty == STG_JSON_ERROR || ty == STG_JSON_END) {
                    break;
                }
                continue; /* a duplicate key's event */
            }
            if (key_is(&ev, "chat_template")) {
                check_chat_template_value(&j);
                continue;
            }
            ty = stg_json_next(&j.p, &ev);
            if (ty == STG_JSON_OBJECT_BEGIN || ty == STG_JSON_ARRAY_BEGIN) {
                (void)stg_json_skip(&j.p, &ev, NULL, NULL);
            }
        }
    }
    if (j.p.error == STG_JSON_E_MEMORY || j.p.error == STG_JSON_E_DEPTH) {
        /* the document was taken for JSON under the same limits; a template after the point
         * the walk stopped would go unchecked: fail closed */
        stg_report_limit(r, j.p.error_offset,
                         j.p.error == STG_JSON_E_MEMORY ? "max_memory" : "max_json_depth",
                         j.p.error == STG_JSON_E_MEMORY ? cap : lim->max_json_depth);
    }
    stg_json_release(&j.p);
    stg_arena_release(&arena);
    return j.found;
}
