/* The bounded cursor: the only way parser code reads untrusted bytes. `base` stays at the start
 * of the whole file or buffer, so `pos` is already the absolute offset a finding reports. A
 * cursor reads the window [begin, end) of it: a sub-cursor's window is the bytes it was given,
 * so it can neither read past them nor seek back before them.
 * Invariant: begin <= pos <= end. Every read compares with what is left, never pos + n > end. */
#ifndef STG_PARSER_CURSOR_H
#define STG_PARSER_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"
#include "util.h"

typedef struct stg_cursor {
    const uint8_t *base;
    size_t begin, pos, end;
} stg_cursor;

static inline stg_cursor stg_cur_make(const uint8_t *base, size_t len)
{
    stg_cursor c = {base, 0, 0, len};
    return c;
}

static inline size_t stg_cur_avail(const stg_cursor *c)
{
    return c->end - c->pos;
}

static inline stg_status stg_cur_take(stg_cursor *c, size_t n, const uint8_t **out)
{
    if (n > stg_cur_avail(c)) {
        return STG_E_TRUNCATED;
    }
    *out = c->base + c->pos;
    c->pos += n;
    return STG_OK;
}

static inline stg_status stg_cur_skip(stg_cursor *c, size_t n)
{
    if (n > stg_cur_avail(c)) {
        return STG_E_TRUNCATED;
    }
    c->pos += n;
    return STG_OK;
}

/* Peeks at n bytes without moving. */
static inline stg_status stg_cur_peek(const stg_cursor *c, size_t n, const uint8_t **out)
{
    if (n > stg_cur_avail(c)) {
        return STG_E_TRUNCATED;
    }
    *out = c->base + c->pos;
    return STG_OK;
}

static inline stg_status stg_cur_u8(stg_cursor *c, uint8_t *out)
{
    const uint8_t *p;
    stg_status s = stg_cur_take(c, 1, &p);
    if (s == STG_OK) {
        *out = p[0];
    }
    return s;
}

static inline stg_status stg_cur_le16(stg_cursor *c, uint16_t *out)
{
    const uint8_t *p;
    stg_status s = stg_cur_take(c, 2, &p);
    if (s == STG_OK) {
        *out = stg_le16(p);
    }
    return s;
}

static inline stg_status stg_cur_le32(stg_cursor *c, uint32_t *out)
{
    const uint8_t *p;
    stg_status s = stg_cur_take(c, 4, &p);
    if (s == STG_OK) {
        *out = stg_le32(p);
    }
    return s;
}

static inline stg_status stg_cur_le64(stg_cursor *c, uint64_t *out)
{
    const uint8_t *p;
    stg_status s = stg_cur_take(c, 8, &p);
    if (s == STG_OK) {
        *out = stg_le64(p);
    }
    return s;
}

/* Child cursor over the next n bytes (same base, so offsets stay absolute); the parent moves
 * past them. */
static inline stg_status stg_cur_sub(stg_cursor *c, size_t n, stg_cursor *child)
{
    if (n > stg_cur_avail(c)) {
        return STG_E_TRUNCATED;
    }
    child->base = c->base;
    child->begin = c->pos;
    child->pos = c->pos;
    child->end = c->pos + n;
    c->pos += n;
    return STG_OK;
}

/* Moves to an absolute position inside the window [begin, end]. */
static inline stg_status stg_cur_seek(stg_cursor *c, size_t pos)
{
    if (pos < c->begin || pos > c->end) {
        return STG_E_TRUNCATED;
    }
    c->pos = pos;
    return STG_OK;
}

#endif
