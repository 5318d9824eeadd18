/* The converter's plan and writer (write.h). */
#include "write.h"

#include <stdio.h>
#include <string.h>

#include "../parser/mem.h"
#include "../parser/sort.h"
#include "../parser/text.h"
#include "../parser/util.h"

/* The copy buffer: the only memory that scales with nothing in the input. */
#define STG_CV_COPY_BUFFER ((size_t)1 << 20)

static bool refuse(stg_report *rep, stg_code code, uint64_t offset, const uint8_t *name,
                   size_t name_len, const char *what)
{
    stg_finding *f = stg_report_add(rep, code, offset, "%s: not converted", what);
    if (name != NULL) {
        stg_report_set_tensor(rep, f, (const char *)name, name_len);
    }
    return false;
}

/* ---------------------------------------------------------------- ordering */

static int cmp_name(const stg_cv_entry *a, const stg_cv_entry *b)
{
    size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
    int c = n > 0 ? memcmp(a->name, b->name, n) : 0;
    if (c != 0) {
        return c;
    }
    return a->name_len < b->name_len ? -1 : a->name_len > b->name_len ? 1 : 0;
}

/* Data order: larger elements first (alignment), then name. */
static int cmp_data(size_t a, size_t b, void *ctx)
{
    const stg_cv_entry *e = ctx;
    uint32_t ba = e[a].t->storage->elsize, bb = e[b].t->storage->elsize;
    if (ba != bb) {
        return ba > bb ? -1 : 1;
    }
    return cmp_name(&e[a], &e[b]);
}

static int cmp_names_only(size_t a, size_t b, void *ctx)
{
    const stg_cv_entry *e = ctx;
    int c = cmp_name(&e[a], &e[b]);
    return c != 0 ? c : (a < b ? -1 : a > b);
}

static int u64cmp(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

/* Exact aliases sort next to each other; the smallest name first. */
static int cmp_alias(size_t a, size_t b, void *ctx)
{
    const stg_cv_entry *e = ctx;
    const stg_cv_tensor *x = e[a].t, *y = e[b].t;
    int c = u64cmp(x->storage->index, y->storage->index);
    c = c != 0 ? c : u64cmp(x->storage_offset, y->storage_offset);
    c = c != 0 ? c : u64cmp(x->rank, y->rank);
    for (uint32_t i = 0; c == 0 && i < x->rank; i++) {
        c = u64cmp(x->shape[i], y->shape[i]);
        c = c != 0 ? c : u64cmp(x->stride[i], y->stride[i]);
    }
    return c != 0 ? c : cmp_names_only(a, b, ctx);
}

static bool same_view(const stg_cv_tensor *x, const stg_cv_tensor *y)
{
    if (x->storage != y->storage || x->storage_offset != y->storage_offset || x->rank != y->rank) {
        return false;
    }
    for (uint32_t i = 0; i < x->rank; i++) {
        if (x->shape[i] != y->shape[i] || x->stride[i] != y->stride[i]) {
            return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- header JSON */

typedef struct jbuf {
    uint8_t *p;
    size_t len, cap, max;
    bool failed;
} jbuf;

static void jput(jbuf *b, const void *s, size_t n)
{
    if (b->failed) {
        return;
    }
    if (n > b->max - b->len) {
        b->failed = true;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap < 4096 ? 4096 : b->cap;
        while (cap < b->len + n) {
            cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
        }
        uint8_t *q = stg_mem_realloc(b->p, cap);
        if (q == NULL) {
            b->failed = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void jstr(jbuf *b, const char *s)
{
    jput(b, s, strlen(s));
}

static void jnum(jbuf *b, uint64_t v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    jput(b, t, (size_t)n);
}

/* A JSON string as serde_json writes it: ", \ and control bytes escaped, the rest raw. */
static void jquote(jbuf *b, const uint8_t *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    jput(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            continue;
        }
        jput(b, s + run, i - run);
        run = i + 1;
        char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
        size_t el = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            el = 6;
            break;
        }
        jput(b, esc, el);
    }
    jput(b, s + run, n - run);
    jput(b, "\"", 1);
}

static bool build_header(stg_cv_plan *p, const stg_cv_select *sel, stg_report *rep)
{
    jbuf b = {NULL, 0, 0, 0, false};
    b.max = sel->max_header_len > SIZE_MAX - 16 ? SIZE_MAX - 16 : (size_t)sel->max_header_len + 8;
    uint8_t zero[8] = {0};
    jput(&b, zero, 8);
    jstr(&b, "{\"__metadata__\":{\"format\":\"pt\"");
    /* dropped aliases: name -> kept name, in the checkpoint's order */
    for (size_t i = 0; i < p->count; i++) {
        const stg_cv_entry *e = &p->entries[i];
        if (e->alias_of != NULL) {
            jput(&b, ",", 1);
            jquote(&b, e->name, e->name_len);
            jput(&b, ":", 1);
            jquote(&b, e->alias_of->name, e->alias_of->name_len);
        }
    }
    jput(&b, "}", 1);
    for (size_t k = 0; k < p->written; k++) {
        const stg_cv_entry *e = &p->entries[p->order[k]];
        jput(&b, ",", 1);
        jquote(&b, e->name, e->name_len);
        jstr(&b, ":{\"dtype\":\"");
        jstr(&b, stg_dtype_name(e->t->storage->dtype));
        jstr(&b, "\",\"shape\":[");
        for (uint32_t i = 0; i < e->t->rank; i++) {
            if (i > 0) {
                jput(&b, ",", 1);
            }
            jnum(&b, e->t->shape[i]);
        }
        jstr(&b, "],\"data_offsets\":[");
        jnum(&b, e->begin);
        jput(&b, ",", 1);
        jnum(&b, e->begin + e->nbytes);
        jstr(&b, "]}");
    }
    jput(&b, "}", 1);
    while (!b.failed && (b.len - 8) % 8 != 0) {
        jput(&b, " ", 1);
    }
    if (b.failed) {
        stg_mem_free(b.p);
        stg_finding *f = stg_report_add(rep, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
                                        "the output's header would pass max_header_len (or "
                                        "memory ran out): not converted");
        stg_report_set_limit(rep, f, "max_header_len");
        return false;
    }
    uint64_t n = b.len - 8;
    for (int i = 0; i < 8; i++) {
        b.p[i] = (uint8_t)(n >> (8 * i));
    }
    p->header = b.p;
    p->header_len = b.len;
    return true;
}

/* ---------------------------------------------------------------- the plan */

/* Frees the plan and passes r on: `return drop_plan(p, refuse(...))` reports (reading the
 * plan's names) before the plan goes. */
static bool drop_plan(stg_cv_plan *p, bool r)
{
    stg_cv_plan_free(p);
    return r;
}

bool stg_cv_plan_build(const stg_cv *root, const stg_cv_select *sel, stg_cv_plan *p,
                       stg_report *rep)
{
    memset(p, 0, sizeof *p);
    const stg_cv *m = root;
    if (sel->select != NULL) {
        m = stg_cv_dict_get(root, sel->select);
        if (m == NULL) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, root->offset, NULL, 0,
                          "the --select key is not a key of the checkpoint's top-level dict");
        }
    }
    if (m->kind != STG_CV_DICT) {
        return refuse(rep, STG_CONVERT_UNSUPPORTED, m->offset, NULL, 0,
                      "the selected value is not a dict of names to tensors");
    }
    p->entries = stg_mem_calloc(m->n > 0 ? m->n : 1, sizeof *p->entries);
    p->order = stg_mem_calloc(m->n > 0 ? m->n : 1, sizeof *p->order);
    if (p->entries == NULL || p->order == NULL) {
        return drop_plan(p,
                         refuse(rep, STG_LIMIT_EXCEEDED, STG_NO_OFFSET, NULL, 0, "memory ran out"));
    }
    bool leaf_refused = false;
    for (uint32_t i = 0; i < m->n; i++) {
        const stg_cv *k = m->u.items[2 * (size_t)i], *v = m->u.items[2 * (size_t)i + 1];
        bool named = k->kind == STG_CV_STR;
        if (!named || v->kind != STG_CV_TENSOR) {
            stg_finding *f = stg_report_add(rep, STG_CONVERT_LEAF_SKIPPED, v->offset,
                                            "%s: left out of the output",
                                            named ? "not a tensor" : "a key that is not text");
            if (named) {
                stg_report_set_tensor(rep, f, (const char *)k->u.s.p, k->u.s.len);
            }
            leaf_refused |= sel->strict_leaves;
            continue;
        }
        if (!stg_utf8_valid(k->u.s.p, k->u.s.len, false, NULL) ||
            (k->u.s.len == 12 && memcmp(k->u.s.p, "__metadata__", 12) == 0)) {
            return drop_plan(
                p, refuse(rep, STG_CONVERT_UNSUPPORTED, k->offset, NULL, 0,
                          "a tensor name safetensors cannot hold (not UTF-8, or __metadata__)"));
        }
        stg_cv_entry *e = &p->entries[p->count++];
        e->name = k->u.s.p;
        e->name_len = k->u.s.len;
        e->t = v->u.t;
        uint64_t count = 1;
        for (uint32_t d = 0; d < e->t->rank; d++) {
            count *= e->t->shape[d]; /* checked by the evaluator */
        }
        e->nbytes = count * e->t->storage->elsize;
    }
    if (leaf_refused) {
        return drop_plan(p,
                         refuse(rep, STG_CONVERT_UNSUPPORTED, m->offset, NULL, 0,
                                "--strict-leaves: the mapping holds values that are not tensors"));
    }
    if (p->count == 0) {
        return drop_plan(
            p, refuse(rep, STG_CONVERT_UNSUPPORTED, m->offset, NULL, 0,
                      "no tensor to convert (a checkpoint dict? --select state_dict, model, ...)"));
    }
    /* names: once each */
    for (size_t i = 0; i < p->count; i++) {
        p->order[i] = i;
    }
    stg_sort_index(p->order, p->count, cmp_names_only, p->entries);
    for (size_t i = 1; i < p->count; i++) {
        const stg_cv_entry *a = &p->entries[p->order[i - 1]], *b = &p->entries[p->order[i]];
        if (cmp_name(a, b) == 0) {
            return drop_plan(p, refuse(rep, STG_CONVERT_UNSUPPORTED, STG_NO_OFFSET, b->name,
                                       b->name_len, "a tensor name appears twice"));
        }
    }
    if (sel->drop_aliases) {
        for (size_t i = 0; i < p->count; i++) {
            p->order[i] = i;
        }
        stg_sort_index(p->order, p->count, cmp_alias, p->entries);
        const stg_cv_entry *kept = NULL;
        for (size_t i = 0; i < p->count; i++) {
            stg_cv_entry *e = &p->entries[p->order[i]];
            /* "format" names the metadata's own key: never dropped into it */
            bool is_format = e->name_len == 6 && memcmp(e->name, "format", 6) == 0;
            if (kept != NULL && same_view(kept->t, e->t) && !is_format) {
                e->alias_of = kept;
                stg_finding *f = stg_report_add(rep, STG_CONVERT_ALIAS_DROPPED, e->t->offset,
                                                "an exact alias of another tensor: left out "
                                                "and named in __metadata__");
                stg_report_set_tensor(rep, f, (const char *)e->name, e->name_len);
            } else {
                kept = e;
            }
        }
    }
    p->written = 0;
    for (size_t i = 0; i < p->count; i++) {
        if (p->entries[i].alias_of == NULL) {
            p->order[p->written++] = i;
        }
    }
    stg_sort_index(p->order, p->written, cmp_data, p->entries);
    uint64_t at = 0;
    for (size_t k = 0; k < p->written; k++) {
        stg_cv_entry *e = &p->entries[p->order[k]];
        e->begin = at;
        if (stg_add_u64(at, e->nbytes, &at)) {
            return drop_plan(p, refuse(rep, STG_CONVERT_TENSOR_INVALID, e->t->offset, e->name,
                                       e->name_len, "the output's data size overflows"));
        }
    }
    p->data_len = at;
    if (!build_header(p, sel, rep)) {
        stg_cv_plan_free(p);
        return false;
    }
    return true;
}

void stg_cv_plan_free(stg_cv_plan *p)
{
    stg_mem_free(p->entries);
    stg_mem_free(p->order);
    stg_mem_free(p->header);
    memset(p, 0, sizeof *p);
}

/* ---------------------------------------------------------------- data */

typedef struct out {
    const stg_cv_sink *sink;
    uint8_t *buf;
    size_t used;
    stg_status st;
} out;

static void flush(out *o)
{
    if (o->st == STG_OK && o->used > 0) {
        o->st = o->sink->write(o->sink->ctx, o->buf, o->used);
    }
    o->used = 0;
}

/* Appends n elements of elsize bytes from src, byte-swapped when swap (complex: each half). */
static void emit(out *o, const uint8_t *src, uint64_t n, uint32_t elsize, uint32_t swap_unit)
{
    uint64_t bytes = n * elsize;
    while (bytes > 0 && o->st == STG_OK) {
        size_t room = STG_CV_COPY_BUFFER - o->used;
        size_t take = bytes < room ? (size_t)bytes : room;
        take -= take % elsize;
        if (take == 0) {
            flush(o);
            continue;
        }
        uint8_t *dst = o->buf + o->used;
        if (swap_unit <= 1) {
            memcpy(dst, src, take);
        } else {
            for (size_t i = 0; i < take; i += swap_unit) {
                for (uint32_t j = 0; j < swap_unit; j++) {
                    dst[i + j] = src[i + swap_unit - 1 - j];
                }
            }
        }
        o->used += take;
        src += take;
        bytes -= take;
    }
}

static void write_tensor(out *o, const stg_cv_tensor *t)
{
    const stg_cv_storage *s = t->storage;
    uint32_t es = s->elsize;
    uint32_t unit = s->big_endian ? (s->dtype == STG_DTYPE_C64 ? 4u : es) : 1u;
    uint64_t count = 1, expect = 1, last = t->storage_offset;
    bool contiguous = true;
    for (uint32_t i = t->rank; i-- > 0;) {
        count *= t->shape[i];
        if (t->shape[i] != 1 && t->stride[i] != expect) {
            contiguous = false;
        }
        expect *= t->shape[i];
        if (t->shape[i] > 0) {
            last += (t->shape[i] - 1) * t->stride[i];
        }
    }
    if (count == 0) {
        return;
    }
    const uint8_t *base = s->data;
    if (contiguous || t->rank == 0) {
        emit(o, base + t->storage_offset * es, count, es, unit);
    } else {
        /* row-major walk: an index per dimension but the last, whose run is copied at once
         * when its stride is 1 */
        uint64_t idx[STG_CV_RANK_MAX];
        uint32_t outer = t->rank - 1;
        uint64_t inner = t->shape[outer], istride = t->stride[outer];
        memset(idx, 0, sizeof idx);
        for (;;) {
            uint64_t at = t->storage_offset;
            for (uint32_t i = 0; i < outer; i++) {
                at += idx[i] * t->stride[i];
            }
            if (istride == 1) {
                emit(o, base + at * es, inner, es, unit);
            } else {
                for (uint64_t j = 0; j < inner && o->st == STG_OK; j++) {
                    emit(o, base + (at + j * istride) * es, 1, es, unit);
                }
            }
            if (o->st != STG_OK) {
                return;
            }
            uint32_t d = outer;
            bool done = true;
            while (d > 0) {
                d--;
                if (++idx[d] < t->shape[d]) {
                    done = false;
                    break;
                }
                idx[d] = 0;
            }
            if (done) {
                break;
            }
        }
    }
    if (o->sink->release != NULL) {
        o->sink->release(o->sink->ctx, base + t->storage_offset * es,
                         (size_t)((last - t->storage_offset + 1) * es));
    }
}

stg_status stg_cv_plan_write(const stg_cv_plan *p, const stg_cv_sink *sink)
{
    out o = {sink, stg_mem_alloc(STG_CV_COPY_BUFFER), 0, STG_OK};
    if (o.buf == NULL) {
        return STG_E_NOMEM;
    }
    o.st = sink->write(sink->ctx, p->header, p->header_len);
    for (size_t k = 0; k < p->written && o.st == STG_OK; k++) {
        write_tensor(&o, p->entries[p->order[k]].t);
    }
    flush(&o);
    stg_mem_free(o.buf);
    return o.st;
}
