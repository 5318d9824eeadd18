/* JSON documents as trees (see json_tree.h). */
#include "json_tree.h"

#include <string.h>

#define STG_JT_STACK 64u /* open containers tracked; max_depth is clamped to it */

typedef struct jt_build {
    stg_jt *t;
    size_t max_nodes;
    uint32_t open[STG_JT_STACK], last[STG_JT_STACK]; /* open containers, their last child */
    uint32_t depth;
    const uint8_t *key; /* the member name waiting for its value */
    size_t key_len, key_offset;
} jt_build;

/* A decoded copy of a string token's content in the arena (or the raw bytes when they hold no
 * escape). false when the arena refuses. */
static bool jt_decode(stg_arena *a, const stg_json_event *ev, const uint8_t **out, size_t *len)
{
    if (!ev->has_escapes) {
        *out = ev->str;
        *len = ev->str_len;
        return true;
    }
    uint8_t *dst = stg_arena_alloc(a, ev->str_len + 1u, 1);
    if (dst == NULL) {
        return false;
    }
    *len = stg_json_decode(ev->str, ev->str_len, dst);
    *out = dst;
    return true;
}

/* Appends a node for ev under the innermost open container. */
static stg_jt_status jt_add(jt_build *b, const stg_json_event *ev, uint32_t *index)
{
    stg_jt *t = b->t;
    if (t->count >= b->max_nodes) {
        return STG_JT_NODES;
    }
    if (stg_arena_grow_buffer(t->arena, (void **)&t->nodes, &t->cap_bytes,
                              (t->count + 1u) * sizeof(stg_jt_node)) != 0) {
        return STG_JT_MEMORY;
    }
    uint32_t i = (uint32_t)t->count++;
    stg_jt_node *n = &t->nodes[i];
    memset(n, 0, sizeof *n);
    n->type = ev->type;
    n->offset = ev->offset;
    n->first_child = n->next_sibling = STG_JT_NONE;
    n->key = b->key;
    n->key_len = b->key_len;
    n->key_offset = b->key_offset;
    b->key = NULL;
    b->key_len = b->key_offset = 0;
    if (ev->type == STG_JSON_STRING && !jt_decode(t->arena, ev, &n->str, &n->str_len)) {
        return STG_JT_MEMORY;
    }
    n->is_uint = ev->type == STG_JSON_NUMBER && ev->is_uint && !ev->uint_overflow;
    n->uint_value = n->is_uint ? ev->uint_value : 0;
    if (b->depth > 0) {
        stg_jt_node *parent = &t->nodes[b->open[b->depth - 1u]];
        if (parent->first_child == STG_JT_NONE) {
            parent->first_child = i;
        } else {
            t->nodes[b->last[b->depth - 1u]].next_sibling = i;
        }
        b->last[b->depth - 1u] = i;
        parent->child_count++;
    }
    *index = i;
    return STG_JT_OK;
}

/* One event into the tree; *done once the top-level value is complete. */
static stg_jt_status jt_event(jt_build *b, const stg_json_event *ev, uint32_t max_depth, bool *done)
{
    uint32_t index = 0;
    stg_jt_status st = STG_JT_OK;
    switch (ev->type) {
    case STG_JSON_KEY:
        if (!jt_decode(b->t->arena, ev, &b->key, &b->key_len)) {
            return STG_JT_MEMORY;
        }
        b->key_offset = ev->offset;
        return STG_JT_OK;
    case STG_JSON_OBJECT_BEGIN:
    case STG_JSON_ARRAY_BEGIN:
        if (b->depth >= max_depth) {
            return STG_JT_DEPTH;
        }
        st = jt_add(b, ev, &index);
        if (st == STG_JT_OK) {
            b->open[b->depth++] = index;
        }
        return st;
    case STG_JSON_OBJECT_END:
    case STG_JSON_ARRAY_END:
        b->depth--;
        *done = b->depth == 0;
        return STG_JT_OK;
    case STG_JSON_STRING:
    case STG_JSON_NUMBER:
    case STG_JSON_TRUE:
    case STG_JSON_FALSE:
    case STG_JSON_NULL:
        st = jt_add(b, ev, &index);
        *done = b->depth == 0;
        return st;
    case STG_JSON_DUPLICATE: return STG_JT_DUPLICATE;
    case STG_JSON_END: *done = true; return STG_JT_OK;
    case STG_JSON_NONE:
    case STG_JSON_ERROR: break;
    }
    return STG_JT_SYNTAX;
}

static stg_jt_status jt_run(stg_json_parser *p, jt_build *b, uint32_t max_depth, size_t *err)
{
    for (;;) {
        stg_json_event ev;
        stg_json_type ty = stg_json_next(p, &ev);
        if (ty == STG_JSON_ERROR) {
            *err = p->error_offset;
            if (p->error == STG_JSON_E_DEPTH) {
                return STG_JT_DEPTH;
            }
            return p->error == STG_JSON_E_MEMORY ? STG_JT_MEMORY : STG_JT_SYNTAX;
        }
        if (ty == STG_JSON_END) {
            *err = ev.offset;
            return STG_JT_OK;
        }
        bool done = false;
        stg_jt_status st = jt_event(b, &ev, max_depth, &done);
        if (st != STG_JT_OK) {
            *err = ev.offset;
            return st;
        }
    }
}

stg_jt_status stg_jt_parse(const uint8_t *buf, size_t len, uint32_t max_depth, size_t max_nodes,
                           stg_arena *arena, stg_jt *out, size_t *err_offset)
{
    memset(out, 0, sizeof *out);
    out->arena = arena;
    if (max_depth == 0 || max_depth > STG_JT_STACK) {
        max_depth = STG_JT_STACK;
    }
    if (max_nodes > STG_JT_NODES_CEILING) {
        max_nodes = STG_JT_NODES_CEILING;
    }
    jt_build b = {.t = out, .max_nodes = max_nodes};
    stg_json_parser p;
    /* The JSON parser's own depth limit is one more, so that ours reports the bracket. */
    stg_json_init(&p, buf, len, max_depth + 1u, arena);
    size_t end = 0;
    stg_jt_status st = jt_run(&p, &b, max_depth, &end);
    stg_json_release(&p);
    if (st == STG_JT_OK && !stg_json_rest_is_ws(buf, len, end)) {
        st = STG_JT_TRAILING;
        while (end < len &&
               (buf[end] == ' ' || buf[end] == '\t' || buf[end] == '\n' || buf[end] == '\r')) {
            end++;
        }
    }
    if (st != STG_JT_OK) {
        stg_jt_release(out);
        *err_offset = end;
        return st;
    }
    *err_offset = 0;
    return STG_JT_OK;
}

const stg_jt_node *stg_jt_at(const stg_jt *t, uint32_t i)
{
    return i == STG_JT_NONE || i >= t->count ? NULL : &t->nodes[i];
}

const stg_jt_node *stg_jt_member(const stg_jt *t, const stg_jt_node *obj, const char *key)
{
    if (obj == NULL || obj->type != STG_JSON_OBJECT_BEGIN) {
        return NULL;
    }
    size_t klen = strlen(key);
    for (const stg_jt_node *c = stg_jt_at(t, obj->first_child); c != NULL;
         c = stg_jt_at(t, c->next_sibling)) {
        if (c->key_len == klen && memcmp(c->key, key, klen) == 0) {
            return c;
        }
    }
    return NULL;
}

bool stg_jt_str_is(const stg_jt_node *n, const char *s)
{
    size_t len = strlen(s);
    return n != NULL && n->type == STG_JSON_STRING && n->str_len == len &&
           (len == 0 || memcmp(n->str, s, len) == 0);
}

void stg_jt_release(stg_jt *t)
{
    if (t->nodes != NULL) {
        stg_arena_free_buffer(t->arena, (void **)&t->nodes, &t->cap_bytes);
    }
    t->count = 0;
}
