/* One capped allocation budget per validation. Blocks come from stg_mem_alloc and grow
 * geometrically, but the sum of block sizes never exceeds `cap`: that sum is the parser's whole
 * memory. Nothing is freed individually; stg_arena_release frees everything at once.
 * Marks let a caller pop a stack-like region (e.g. the keys of a closed JSON object). */
#ifndef STG_PARSER_ARENA_H
#define STG_PARSER_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct stg_arena_block stg_arena_block;

/* The first block holds at least this many usable bytes (when the budget allows); each new
 * block doubles the previous one, clamped to what is left of the budget. */
#define STG_ARENA_MIN_BLOCK ((size_t)64 * 1024)
/* Budget bytes each block's bookkeeping takes besides its usable bytes (a pointer and two
 * sizes, rounded up to 16 so that usable bytes start 16-aligned). */
#define STG_ARENA_BLOCK_OVERHEAD ((sizeof(void *) + 2 * sizeof(size_t) + 15u) & ~(size_t)15u)

/* A buffer from stg_arena_grow_buffer holds at least this many bytes; it doubles from there. */
#define STG_ARENA_MIN_BUFFER ((size_t)4096)

typedef struct stg_arena {
    stg_arena_block *head; /* current block; older blocks linked behind it */
    size_t cap;            /* hard budget for the sum of block sizes */
    size_t reserved;       /* sum of block sizes now allocated */
    size_t peak;           /* highest `reserved` seen: what tests compare with the formula */
    int failed;            /* an allocation was refused (over cap or out of memory) */
    int out_of_memory;     /* ... and it was the system allocator, not the cap */
} stg_arena;

void stg_arena_init(stg_arena *a, size_t cap);
/* NULL when the budget or the system refuses; then a->failed is set. align: power of two. */
void *stg_arena_alloc(stg_arena *a, size_t n, size_t align);
/* A growable buffer outside the blocks (e.g. a stack that shrinks again) charged to the same
 * budget: grows *buf to hold at least `need` bytes (geometric), updating *cap_bytes.
 * Returns 0 on success, -1 (a->failed set) when the budget or the system refuses. */
int stg_arena_grow_buffer(stg_arena *a, void **buf, size_t *cap_bytes, size_t need);
/* A zeroed buffer of count x size bytes outside the blocks, charged to the same budget: it comes
 * zeroed from the system allocator (large ones as fresh pages, so parts never touched cost no
 * memory). *buf must be NULL. Returns 0 (*buf, *cap_bytes set), or -1 (a->failed set; also
 * a->out_of_memory when the system refused) when the budget or the system refuses. */
int stg_arena_zero_buffer(stg_arena *a, void **buf, size_t *cap_bytes, size_t count, size_t size);
/* Frees a buffer from stg_arena_grow_buffer or stg_arena_zero_buffer and returns its bytes to
 * the budget. */
void stg_arena_free_buffer(stg_arena *a, void **buf, size_t *cap_bytes);
void stg_arena_release(stg_arena *a);

#endif
