/* The bounded cursor: the only way parser code reads untrusted bytes. `base` stays at the start
 * of the whole file or buffer, so `pos` is already the absolute offset a finding reports. A
 * cursor reads the window [begin, end) of it: a sub-cursor's window is the bytes it was given,
 * so it can neither read past them nor seek back before them.
 * Invariant: begin <= pos <= end, and a cursor over no bytes is the only one without a base.
 * Every read compares with what is left, never pos + n > end. Sanitizer and fuzz builds
 * (STG_CURSOR_CHECKS: CMake sets it with STG_SANITIZE or STG_BUILD_FUZZERS, OSS-Fuzz's
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION implies it) check the invariant before and after
 * every operation and abort where it first breaks, as s2n-tls validates its stuffer; other
 * builds compile the checks out. */
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

#if !defined(STG_CURSOR_CHECKS) && defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
#define STG_CURSOR_CHECKS 1
#endif

#ifdef STG_CURSOR_CHECKS
#include <stdbool.h>
#include <stdlib.h>

static inline bool stg_cur_valid(const stg_cursor *c)
{
    return c != NULL && c->begin <= c->pos && c->pos <= c->end && (c->base != NULL || c->end == 0);
}

/* A broken invariant is a bug in the parser that holds the cursor, never bad input: stop there
 * (libFuzzer prints the stack of the abort; elsewhere a core dump shows it) rather than read
 * out of bounds later. */
static inline void stg_cur_check(const stg_cursor *c)
{
    if (!stg_cur_valid(c)) {
        abort();
    }
}
#define STG_CUR_CHECK(c) stg_cur_check(c)
#else
#define STG_CUR_CHECK(c) ((void)0)
#endif

static inline stg_cursor stg_cur_make(const uint8_t *base, size_t len)
{
    stg_cursor c = {base, 0, 0, len};
    STG_CUR_CHECK(&c);
    return c;
}

static inline size_t stg_cur_avail(const stg_cursor *c)
{
    STG_CUR_CHECK(c);
    return c->end - c->pos;
}

static inline stg_status stg_cur_take(stg_cursor *c, size_t n, const uint8_t **out)
{
    if (n > stg_cur_avail(c)) { /* checks c first */
        return STG_E_TRUNCATED;
    }
    *out = c->base + c->pos;
    c->pos += n;
    STG_CUR_CHECK(c);
    return STG_OK;
}

static inline stg_status stg_cur_skip(stg_cursor *c, size_t n)
{
    if (n > stg_cur_avail(c)) {
        return STG_E_TRUNCATED;
    }
    c->pos += n;
    STG_CUR_CHECK(c);
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
    STG_CUR_CHECK(c);
    STG_CUR_CHECK(child);
    return STG_OK;
}

/* Moves to an absolute position inside the window [begin, end]. */
static inline stg_status stg_cur_seek(stg_cursor *c, size_t pos)
{
    STG_CUR_CHECK(c);
    if (pos < c->begin || pos > c->end) {
        return STG_E_TRUNCATED;
    }
    c->pos = pos;
    STG_CUR_CHECK(c);
    return STG_OK;
}

#endif
