/* Test and bench helper (header-only): the adversarial safetensors headers of minimal entries
 * that the reference accepts (issue 11), used by tests/validator/test_memory_bound.c and
 * bench/bench_memory.c. Four shapes:
 *   0 empty duplicate metadata pairs  {"__metadata__":{"":"","":"",...}}
 *   1 array-form duplicate tensors    {"a":["U8",[0],[0,0]],"a":[...],...}
 *   2 distinct metadata keys          {"__metadata__":{"0":"","1":"",...}}
 *   3 duplicate keys in an ignored object of a tensor entry {"t":{...,"x":{"a":0,"a":0,...}}} */
#ifndef STG_TEST_MINIMAL_HEADER_H
#define STG_TEST_MINIMAL_HEADER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MH_SHAPES 4

typedef struct mh_buf {
    char *s;
    size_t len, cap;
} mh_buf;

static inline void mh_put(mh_buf *b, const char *text, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (b->s == NULL) {
            abort();
        }
    }
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static inline const char *mh_shape_name(int shape)
{
    static const char *const names[MH_SHAPES] = {"empty metadata pairs", "array-form duplicates",
                                                 "distinct metadata keys",
                                                 "duplicate keys, ignored object"};
    return names[shape];
}

/* The header (NUL-terminated, malloc'd) of shape with count entries, or fewer when the next
 * entry would make it longer than max_len bytes (0: no length cap); *entries gets the count. */
static inline char *mh_build(int shape, size_t count, size_t max_len, size_t *entries)
{
    static const char *const open[] = {
        "{\"__metadata__\":{", "{", "{\"__metadata__\":{",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0],\"x\":{"};
    static const char *const close[] = {"}}", "}", "}}", "}}}"};
    mh_buf b = {0};
    mh_put(&b, open[shape], strlen(open[shape]));
    size_t tail = strlen(close[shape]), i = 0;
    char entry[40];
    for (; i < count; i++) {
        int n = 0;
        switch (shape) {
        case 0: n = snprintf(entry, sizeof entry, "%s\"\":\"\"", i > 0 ? "," : ""); break;
        case 1:
            n = snprintf(entry, sizeof entry, "%s\"a\":[\"U8\",[0],[0,0]]", i > 0 ? "," : "");
            break;
        case 2: n = snprintf(entry, sizeof entry, "%s\"%zx\":\"\"", i > 0 ? "," : "", i); break;
        default: n = snprintf(entry, sizeof entry, "%s\"a\":0", i > 0 ? "," : ""); break;
        }
        if (max_len != 0 && b.len + (size_t)n + tail > max_len) {
            break;
        }
        mh_put(&b, entry, (size_t)n);
    }
    mh_put(&b, close[shape], tail);
    if (entries != NULL) {
        *entries = i;
    }
    return b.s;
}

#endif
