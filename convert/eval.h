/* The converter's restricted pickle evaluator. Unlike parser/pickle.c (a walker that simulates
 * without values), it builds real values for a small object model: None, bool, int, float, str,
 * bytes, tuple, list, dict (OrderedDict too), storage and tensor. It knows the semantics of
 * exactly the reconstruction calls a weights file uses (docs/convert.md) and executes nothing:
 * any other global, a call of anything but those, BUILD with state on a tensor, an opcode
 * torch.save does not write, stops the evaluation with the first refusal (stg_cv_error).
 *
 * Memory: every value, list and dict comes from one arena capped by max_memory; the stack, the
 * mark stack and the memo are capped by max_stack / max_memo (the memo is a parser/map.h map
 * keyed by index: bounded probes whatever the indexes). Strings point into the input buffer,
 * which must outlive the values. No recursion. */
#ifndef STG_CONVERT_EVAL_H
#define STG_CONVERT_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/arena.h"
#include "../parser/map.h"
#include "stguard/stguard.h"

typedef enum stg_cv_kind {
    STG_CV_NONE = 0,
    STG_CV_BOOL,
    STG_CV_INT,
    STG_CV_FLOAT,
    STG_CV_STR,
    STG_CV_BYTES,
    STG_CV_TUPLE,
    STG_CV_LIST,
    STG_CV_DICT, /* items: key, value, key, value ... (insertion order) */
    STG_CV_GLOBAL,
    STG_CV_STORAGE,
    STG_CV_TENSOR
} stg_cv_kind;

/* The globals the evaluator knows (STG_CV_GLOBAL's `global`). */
typedef enum stg_cv_global {
    STG_CVG_ORDERED_DICT = 1,    /* collections.OrderedDict */
    STG_CVG_REBUILD_V2,          /* torch._utils._rebuild_tensor_v2 */
    STG_CVG_REBUILD,             /* torch._utils._rebuild_tensor (torch < 1.0 files) */
    STG_CVG_REBUILD_PARAM,       /* torch._utils._rebuild_parameter */
    STG_CVG_REBUILD_PARAM_STATE, /* torch._utils._rebuild_parameter_with_state */
    STG_CVG_STORAGE_TYPE,        /* torch.<X>Storage: dtype in stg_cv.dtype */
    STG_CVG_DEVICE,              /* torch.device */
    /* torch.storage.UntypedStorage (or torch.UntypedStorage) in a persistent id: torch.load's
     * zip reader wraps it as TypedStorage(wrap_storage=..., dtype=torch.uint8), numel being its
     * byte count; its legacy reader fails on it (the class has no dtype). */
    STG_CVG_UNTYPED_STORAGE
} stg_cv_global;

/* Tensor rank the converter handles (max_rank is clamped to it). */
#define STG_CV_RANK_MAX 64u

typedef struct stg_cv stg_cv;

typedef struct stg_cv_storage {
    const uint8_t *key; /* into the input */
    size_t key_len;
    stg_dtype dtype;
    uint32_t elsize;
    uint64_t numel;  /* as the persistent id declares */
    uint32_t index;  /* in stg_cv_eval.storages */
    uint64_t offset; /* of the persistent id */
    /* bound by the caller (convert/source.c) before tensors are written */
    const uint8_t *data;
    uint64_t data_len;
    bool big_endian;
} stg_cv_storage;

typedef struct stg_cv_tensor {
    stg_cv_storage *storage;
    uint64_t storage_offset; /* elements */
    uint32_t rank;
    uint64_t *shape;
    uint64_t *stride; /* elements; never negative (torch.save writes none) */
    uint64_t offset;  /* of the rebuild call */
    /* as torch.load sets them (the converter writes neither; load_pickle hands them on) */
    bool requires_grad; /* _rebuild_tensor_v2's argument, or the parameter's */
    bool parameter;     /* made by _rebuild_parameter: a torch.nn.Parameter */
} stg_cv_tensor;

struct stg_cv {
    uint8_t kind;   /* stg_cv_kind */
    uint8_t global; /* stg_cv_global for GLOBAL */
    uint8_t dtype;  /* stg_dtype of a STG_CVG_STORAGE_TYPE global */
    bool ordered;   /* DICT made by OrderedDict() */
    uint32_t n;     /* TUPLE/LIST: items; DICT: pairs */
    uint32_t cap;   /* items allocated (LIST/DICT grow) */
    uint64_t offset;
    union {
        int64_t i;
        double f;
        struct {
            const uint8_t *p;
            size_t len;
        } s;
        stg_cv **items;
        stg_cv_storage *st;
        stg_cv_tensor *t;
    } u;
};

typedef struct stg_cv_limits {
    uint32_t max_stack; /* values on the stack plus marks */
    uint32_t max_memo;  /* memo entries */
    uint32_t max_items; /* elements of one tuple, list or dict (pairs) */
    uint32_t max_storages;
    uint32_t max_rank;
    uint64_t max_memory; /* the arena's budget: every value */
    uint64_t hash_seed;
    /* deflated zip members, held inflated until written: their total, and each one's ratio */
    uint64_t max_inflate_bytes;
    uint32_t max_inflate_ratio;
} stg_cv_limits;

/* Why an evaluation stopped (constant text; code is the finding's). */
typedef struct stg_cv_error {
    stg_code code;
    uint64_t offset;
    const char *what;
    const uint8_t *module, *name; /* an unknown global's names (into the input), else NULL */
    size_t module_len, name_len;
    const char *limit; /* a limit's name when one was hit */
} stg_cv_error;

typedef struct stg_cv_eval {
    stg_cv_limits lim;
    stg_arena arena;
    stg_map memo;  /* slots: hash, index, value */
    stg_map skeys; /* storage key -> index in storages */
    stg_cv_storage **storages;
    uint32_t nstorages, storages_cap;
    stg_cv **stack;
    uint32_t sp, stack_cap;
    uint32_t *marks;
    uint32_t nmarks, marks_cap;
    stg_cv_error err;
    /* Set by the caller before stg_cv_run: the pickle is a legacy torch file's, whose reader
     * refuses UntypedStorage persistent ids. */
    bool legacy;
    /* Buffers (parser/mem.h) that values and storages point into: inflated zip members. */
    void **owned;
    uint32_t nowned, owned_cap;
    uint64_t inflated; /* their bytes together */
} stg_cv_eval;

void stg_cv_limits_from(const stg_limits *lim, stg_cv_limits *out);
void stg_cv_init(stg_cv_eval *e, const stg_cv_limits *lim);
void stg_cv_free(stg_cv_eval *e);

/* Evaluates the pickle at buf[start..len) to its STOP. On success returns true, *root gets the
 * value and *end the offset after STOP; storages met in persistent ids are in e->storages
 * (one per distinct key, shared by every evaluation of this e). On false, e->err says why.
 * The memo and stack start empty on every call. */
bool stg_cv_run(stg_cv_eval *e, const uint8_t *buf, size_t len, size_t start, stg_cv **root,
                size_t *end);

/* Hands p (a parser/mem.h buffer) to e: freed by stg_cv_free. false when memory ran out
 * (p is freed then). */
bool stg_cv_keep(stg_cv_eval *e, void *p);

/* The storage with this key (NULL when no persistent id named it). */
stg_cv_storage *stg_cv_find_storage(stg_cv_eval *e, const uint8_t *key, size_t len);

/* A dict's value under a text key (NULL when absent or not a dict). */
stg_cv *stg_cv_dict_get(const stg_cv *d, const char *key);
/* true when v is a STR equal to s. */
bool stg_cv_is_str(const stg_cv *v, const char *s);

#endif
