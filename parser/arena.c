#include "arena.h"

#include "mem.h"

struct stg_arena_block {
    stg_arena_block *prev;
    size_t size; /* usable bytes after this header */
    size_t used; /* used <= size */
};

#define STG_ARENA_HDR ((sizeof(stg_arena_block) + 15u) & ~(size_t)15u)
_Static_assert(STG_ARENA_HDR == STG_ARENA_BLOCK_OVERHEAD, "arena.h documents the block overhead");

void stg_arena_init(stg_arena *a, size_t cap)
{
    a->head = NULL;
    a->cap = cap;
    a->reserved = 0;
    a->peak = 0;
    a->failed = 0;
    a->out_of_memory = 0;
}

static void *block_take(stg_arena_block *b, size_t n, size_t align)
{
    uintptr_t start = (uintptr_t)((uint8_t *)b + STG_ARENA_HDR);
    uintptr_t cur = start + b->used;
    size_t pad = (size_t)((align - (cur & (align - 1))) & (align - 1));
    size_t left = b->size - b->used;
    if (pad > left || n > left - pad) {
        return NULL;
    }
    b->used += pad + n;
    return (void *)(cur + pad);
}

void *stg_arena_alloc(stg_arena *a, size_t n, size_t align)
{
    if (align == 0 || (align & (align - 1)) != 0 || align > 64) {
        a->failed = 1;
        return NULL;
    }
    if (a->head != NULL) {
        void *p = block_take(a->head, n, align);
        if (p != NULL) {
            return p;
        }
    }
    /* New block: at least the request plus alignment slack, doubling the last block size. */
    size_t want = STG_ARENA_MIN_BLOCK;
    if (a->head != NULL && a->head->size <= ((size_t)-1) / 2) {
        want = a->head->size * 2;
    }
    if (n > ((size_t)-1) - STG_ARENA_HDR - align) {
        a->failed = 1;
        return NULL;
    }
    size_t need = n + align;
    if (want < need) {
        want = need;
    }
    size_t room = a->cap - a->reserved; /* reserved <= cap holds */
    if (room < STG_ARENA_HDR + need) {
        a->failed = 1;
        return NULL;
    }
    if (want > room - STG_ARENA_HDR) {
        want = room - STG_ARENA_HDR;
    }
    stg_arena_block *b = stg_mem_alloc(STG_ARENA_HDR + want);
    if (b == NULL) {
        a->failed = 1;
        a->out_of_memory = 1;
        return NULL;
    }
    b->prev = a->head;
    b->size = want;
    b->used = 0;
    a->head = b;
    a->reserved += STG_ARENA_HDR + want;
    if (a->reserved > a->peak) {
        a->peak = a->reserved;
    }
    return block_take(b, n, align);
}

int stg_arena_grow_buffer(stg_arena *a, void **buf, size_t *cap_bytes, size_t need)
{
    if (need <= *cap_bytes) {
        return 0;
    }
    size_t want = *cap_bytes < STG_ARENA_MIN_BUFFER ? STG_ARENA_MIN_BUFFER : *cap_bytes;
    while (want < need) {
        if (want > ((size_t)-1) / 2) {
            want = need;
            break;
        }
        want *= 2;
    }
    size_t room = a->cap - (a->reserved - *cap_bytes); /* budget if the old buffer is returned */
    if (need > room) {
        a->failed = 1;
        return -1;
    }
    if (want > room) {
        want = room;
    }
    void *nb = stg_mem_realloc(*buf, want);
    if (nb == NULL) {
        a->failed = 1;
        a->out_of_memory = 1;
        return -1;
    }
    a->reserved = a->reserved - *cap_bytes + want;
    if (a->reserved > a->peak) {
        a->peak = a->reserved;
    }
    *buf = nb;
    *cap_bytes = want;
    return 0;
}

int stg_arena_zero_buffer(stg_arena *a, void **buf, size_t *cap_bytes, size_t count, size_t size)
{
    if (*buf != NULL || (size != 0 && count > ((size_t)-1) / size)) {
        a->failed = 1;
        return -1;
    }
    size_t n = count * size;
    if (n > a->cap - a->reserved) { /* reserved <= cap holds */
        a->failed = 1;
        return -1;
    }
    void *nb = stg_mem_calloc(count, size);
    if (nb == NULL) {
        a->failed = 1;
        a->out_of_memory = 1;
        return -1;
    }
    a->reserved += n;
    if (a->reserved > a->peak) {
        a->peak = a->reserved;
    }
    *buf = nb;
    *cap_bytes = n;
    return 0;
}

void stg_arena_free_buffer(stg_arena *a, void **buf, size_t *cap_bytes)
{
    stg_mem_free(*buf);
    a->reserved -= *cap_bytes;
    *buf = NULL;
    *cap_bytes = 0;
}

void stg_arena_release(stg_arena *a)
{
    stg_arena_block *b = a->head;
    while (b != NULL) {
        stg_arena_block *prev = b->prev;
        stg_mem_free(b);
        b = prev;
    }
    a->head = NULL;
    a->reserved = 0;
}
