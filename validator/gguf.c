/* GGUF rules over parser/gguf.h's structure (docs/gguf.md has the table). Three passes:
 *   1. why the parse stopped, if it did (the bytes after that are not interpreted);
 *   2. every metadata record and tensor info that was read: keys, types, general.alignment,
 *      names, duplicates, shapes, ggml types and byte sizes;
 *   3. layout, when the whole header was read and every size is known: each tensor's offset is
 *      where ggml's loader requires it (the previous tensor's end rounded up to the alignment,
 *      in file order, the first at 0), which also makes the ranges disjoint; the data section
 *      starts at the aligned end of the tensor infos; its ranges lie inside the file, and what
 *      follows the last tensor's padded end is trailing.
 * Severities: strict = the specification plus ggml's own refusals; compat = what ggml's loader
 * accepts, except where accepting is the loader's bug (a crash, an abort, a wrapped product). */
#include "gguf.h"

#include <stdarg.h>
#include <string.h>

#include "../parser/cursor.h"
#include "../parser/hash.h"
#include "../parser/util.h"

void stg_gguf_limits_from(const stg_limits *lim, size_t len, uint64_t hash_seed,
                          stg_gguf_limits *out)
{
    memset(out, 0, sizeof *out);
    out->max_tensors = lim->max_tensors;
    out->max_kv = lim->max_metadata_entries;
    out->max_key_len = STG_GGUF_MAX_STRING; /* the spec's 65,535 is a finding, not a stop */
    out->max_string_len = STG_GGUF_MAX_STRING;
    out->max_array_elems = STG_GGUF_MAX_ARRAY;
    out->max_array_depth = STG_GGUF_MAX_ARRAY_DEPTH;
    out->max_header_len = lim->max_header_len;
    uint64_t mem = lim->max_memory;
    if (mem == 0) {
        uint64_t n = (uint64_t)len < lim->max_header_len ? (uint64_t)len : lim->max_header_len;
        mem = ((uint64_t)8 << 20) + 8 * n; /* n <= 4 GiB: no wrap */
    }
    out->max_memory = mem > SIZE_MAX ? SIZE_MAX : (size_t)mem;
    out->hash_seed = hash_seed != 0 ? hash_seed : STG_HASH_SEED_DEFAULT;
}

typedef struct gguf_ctx {
    const stg_limits *lim;
    stg_report *r;
    const stg_gguf_file *f;
    bool errors;
} gguf_ctx;

/* A finding with its code's severity (validator/codes.def); errors are counted for layout_ok. */
__attribute__((format(printf, 4, 5))) static stg_finding *add(gguf_ctx *c, stg_code code,
                                                              uint64_t offset, const char *fmt, ...)
{
    if (stg_code_severity(code, c->lim->profile) >= STG_SEV_ERROR) {
        c->errors = true;
    }
    va_list ap;
    va_start(ap, fmt);
    stg_finding *f = stg_report_addv(c->r, code, offset, fmt, ap);
    va_end(ap);
    return f;
}

/* A finding whose severity its context decides (docs/gguf.md: where the readings differ, and
 * where ggml's loader would crash). */
__attribute__((format(printf, 5, 6))) static stg_finding *add_sev(gguf_ctx *c, stg_code code,
                                                                  stg_severity s, uint64_t offset,
                                                                  const char *fmt, ...)
{
    if (s >= STG_SEV_ERROR) {
        c->errors = true;
    }
    va_list ap;
    va_start(ap, fmt);
    stg_finding *f = stg_report_addv_sev(c->r, code, s, offset, fmt, ap);
    va_end(ap);
    return f;
}

static void on_tensor(gguf_ctx *c, stg_finding *fd, const stg_gguf_tensor *t)
{
    if (t != NULL && t->name != NULL) {
        stg_report_set_tensor(c->r, fd, (const char *)t->name, t->name_len);
    }
}

/* ---------------------------------------------------------------- pass 1 */

static void report_fail(gguf_ctx *c, size_t len)
{
    const stg_gguf_fail *x = &c->f->fail;
    /* The record being read when the parse stopped sits just past the ones counted; its
     * name is set once it was read. */
    const stg_gguf_tensor *t = NULL;
    if (x->tensor != STG_GGUF_NONE && x->tensor == c->f->ntensors && c->f->tensors != NULL &&
        c->f->tensors_cap_bytes / sizeof *t > c->f->ntensors) {
        t = &c->f->tensors[x->tensor];
    }
    unsigned long long v = (unsigned long long)x->value;
    c->errors = true; /* nothing after this point can be read: an error in both */
    switch (x->code) {
    case STG_GGUF_OK: return;
    case STG_GGUF_E_MAGIC:
        add(c, STG_GGUF_HEADER_INVALID, 0, "the file does not start with the GGUF magic");
        return;
    case STG_GGUF_E_SHORT:
        add(c, STG_GGUF_HEADER_INVALID, x->offset,
            "the file has %llu bytes: the GGUF header needs 24", v);
        return;
    case STG_GGUF_E_VERSION:
        if (v != 0 && (v & 0xFFFFu) == 0) {
            add(c, STG_GGUF_HEADER_INVALID, x->offset,
                "GGUF version %llu reads byte-swapped: a big-endian file, which "
                "little-endian loaders misread",
                v);
        } else {
            add(c, STG_GGUF_HEADER_INVALID, x->offset, "GGUF version %llu is not 2 or 3", v);
        }
        return;
    case STG_GGUF_E_VERSION_1:
        add(c, STG_GGUF_VERSION_OBSOLETE, x->offset,
            "GGUF version 1 (32-bit counts) is obsolete: current loaders refuse it");
        return;
    case STG_GGUF_E_COUNT:
        add(c, STG_GGUF_COUNT_INVALID, x->offset,
            "the %s count %llu cannot fit in the %llu bytes after the header",
            x->offset == 8 ? "tensor" : "metadata", v,
            (unsigned long long)(len > 24 ? len - 24 : 0));
        return;
    case STG_GGUF_E_TRUNCATED:
        on_tensor(c,
                  add(c, STG_GGUF_TRUNCATED, x->offset,
                      "a %llu-byte field runs past the end of the file", v),
                  t);
        return;
    case STG_GGUF_E_STRING:
        on_tensor(c,
                  add(c, STG_GGUF_STRING_INVALID, x->offset,
                      "a string of %llu bytes runs past the end of the file", v),
                  t);
        return;
    case STG_GGUF_E_VALUE_TYPE:
        add(c, STG_GGUF_VALUE_TYPE_INVALID, x->offset,
            "value type %llu is not a GGUF type (0 to 12)", v);
        return;
    case STG_GGUF_E_ARRAY:
        add(c, STG_GGUF_ARRAY_INVALID, x->offset,
            "an array of %llu elements cannot fit in the bytes left", v);
        return;
    case STG_GGUF_E_NDIMS:
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_SHAPE_INVALID, x->offset,
                      "the tensor has %llu dimensions: GGUF allows at most 4", v),
                  t);
        return;
    case STG_GGUF_E_LIMIT: stg_report_limit(c->r, x->offset, x->limit, x->value); return;
    case STG_GGUF_E_MEMORY:
        stg_report_limit(c->r, x->offset, "max_memory", (uint64_t)c->f->arena.cap);
        if (c->f->arena.out_of_memory) {
            stg_report_oom(c->r);
        }
        return;
    }
}

/* ---------------------------------------------------------------- pass 2: metadata */

/* Well-known keys and the value type loaders read them as (docs/gguf.md). `fails`: a real
 * loader aborts or reads out of bounds on any other type, so another type is an error in both
 * profiles; `alt` (NO_ALT: none) is one other element type the newest loader accepts (an error
 * in strict, a warning in compat). */
#define NO_ALT UINT32_MAX
static const struct known_key {
    const char *key;
    uint32_t type; /* STG_GGUF_ARRAY: an array of elem */
    uint32_t elem; /* element type of an array */
    bool fails;
    uint32_t alt;
    const char *why; /* what a loader does with another type (fails only) */
} known_keys[] = {
    /* ggml (src/gguf.cpp, gguf_init_from_reader): before v0.20.0 (c2cdd2b2) gguf_get_val_u32
     * asserted on the type (an abort); from v0.20.0 the file is refused */
    {"general.alignment", STG_GGUF_UINT32, STG_GGUF_UINT32, true, NO_ALT,
     "ggml before v0.20.0 aborts on it, later versions refuse the file"},
    {"general.architecture", STG_GGUF_STRING, STG_GGUF_STRING, false, NO_ALT, NULL},
    {"general.name", STG_GGUF_STRING, STG_GGUF_STRING, false, NO_ALT, NULL},
    {"general.quantization_version", STG_GGUF_UINT32, STG_GGUF_UINT32, false, NO_ALT, NULL},
    {"general.file_type", STG_GGUF_UINT32, STG_GGUF_UINT32, false, NO_ALT, NULL},
    {"tokenizer.ggml.model", STG_GGUF_STRING, STG_GGUF_STRING, false, NO_ALT, NULL},
    /* llama.cpp's vocabulary loader (src/llama-vocab.cpp, llama_vocab::impl::load): releases
     * before its type checks cast scores to float * and token_type to int * and index them by
     * token id (elements narrower than 4 bytes: reads past the array), and read tokens and
     * merges with gguf_get_arr_str, which asserts a string array (abort); newer releases throw
     * on these types and take i32 scores as well as f32 */
    {"tokenizer.ggml.tokens", STG_GGUF_ARRAY, STG_GGUF_STRING, true, NO_ALT,
     "llama.cpp's vocabulary loader aborts on it (gguf_get_arr_str asserts a string array)"},
    {"tokenizer.ggml.scores", STG_GGUF_ARRAY, STG_GGUF_FLOAT32, true, STG_GGUF_INT32,
     "llama.cpp's vocabulary loader reads it as 4-byte floats by token id: past the array, or "
     "an abort on strings"},
    {"tokenizer.ggml.token_type", STG_GGUF_ARRAY, STG_GGUF_INT32, true, NO_ALT,
     "llama.cpp's vocabulary loader reads it as 4-byte ints by token id: past the array, or an "
     "abort on strings"},
    {"tokenizer.ggml.merges", STG_GGUF_ARRAY, STG_GGUF_STRING, true, NO_ALT,
     "llama.cpp's vocabulary loader aborts on it (gguf_get_arr_str asserts a string array)"},
};

static bool ascii_only(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= 0x80u) {
            return false;
        }
    }
    return true;
}

static void check_key(gguf_ctx *c, const stg_gguf_kv *kv)
{
    if (kv->key_len == 0) {
        /* ggml's metadata record asserts a non-empty key: the loader aborts */
        add_sev(c, STG_GGUF_KEY_INVALID, STG_SEV_ERROR, kv->offset, "a metadata key is empty");
    } else if (!kv->key_utf8 || kv->key_nul) {
        add(c, STG_GGUF_KEY_INVALID, kv->offset, "a metadata key of %llu bytes is %s",
            (unsigned long long)kv->key_len, kv->key_nul ? "cut by a NUL byte" : "not valid UTF-8");
    } else if (kv->key_len > STG_GGUF_MAX_KEY_LEN) {
        add(c, STG_GGUF_KEY_INVALID, kv->offset,
            "a metadata key has %llu bytes: the spec allows %u", (unsigned long long)kv->key_len,
            STG_GGUF_MAX_KEY_LEN);
    } else if (c->lim->profile == STG_PROFILE_STRICT && !ascii_only(kv->key, kv->key_len)) {
        add_sev(c, STG_GGUF_KEY_INVALID, STG_SEV_WARNING, kv->offset,
                "a metadata key is not ASCII, as the spec requires");
    }
    if (kv->dup_of != STG_GGUF_NONE) {
        const stg_gguf_kv *first = &c->f->kvs[kv->dup_of];
        if (first->key_len == kv->key_len && memcmp(first->key, kv->key, kv->key_len) == 0) {
            add(c, STG_GGUF_KEY_DUPLICATE, kv->offset,
                "the metadata key at byte %llu is given again", (unsigned long long)first->offset);
        } else {
            /* ggml's own duplicate check compares whole strings and lets it through, then
             * gguf_find_key (strcmp) returns the first: one key shadows the other */
            add(c, STG_GGUF_KEY_DUPLICATE, kv->offset,
                "the metadata key equals the one at byte %llu up to a NUL byte: ggml compares "
                "keys as C strings, so the first of the two is the one loaders read",
                (unsigned long long)first->offset);
        }
    }
}

static void check_value(gguf_ctx *c, const stg_gguf_kv *kv)
{
    if (kv->depth > 1) {
        /* The spec allows arrays of arrays; ggml's loader refuses them and no writer emits
         * them: a file that holds one loads nowhere. */
        add(c, STG_GGUF_VALUE_TYPE_INVALID, kv->type_offset,
            "an array holds arrays (%u levels): ggml's loader refuses nested arrays", kv->depth);
    }
    if (kv->bad_bool != UINT64_MAX) {
        /* the spec gives a bool the values 0 and 1 only; ggml reads any nonzero byte as true,
         * a reader that compares with 1 reads false: the readings differ */
        add_sev(c, STG_GGUF_VALUE_TYPE_INVALID, STG_SEV_ERROR, kv->bad_bool,
                "a bool value is neither 0 nor 1, the only values the GGUF specification gives "
                "a bool");
    }
    if (kv->bad_utf8 != UINT64_MAX && c->lim->profile == STG_PROFILE_STRICT) {
        add_sev(c, STG_GGUF_STRING_INVALID, STG_SEV_WARNING, kv->bad_utf8,
                "a string value is not valid UTF-8, as the spec requires");
    }
}

static bool type_matches(const stg_gguf_kv *kv, const struct known_key *k)
{
    if (kv->type != k->type) {
        return false;
    }
    return k->type != STG_GGUF_ARRAY || (kv->elem_type == k->elem && kv->depth == 1);
}

static void describe_type(const stg_gguf_kv *kv, const char **outer, const char **inner)
{
    *outer = stg_gguf_type_name(kv->type);
    *inner = kv->type == STG_GGUF_ARRAY ? stg_gguf_type_name(kv->elem_type) : "";
    if (*inner == NULL) {
        *inner = "?";
    }
}

static void check_known_keys(gguf_ctx *c)
{
    for (size_t k = 0; k < sizeof known_keys / sizeof known_keys[0]; k++) {
        const struct known_key *kk = &known_keys[k];
        uint32_t i = stg_gguf_find_key(c->f, kk->key);
        if (i == STG_GGUF_NONE || type_matches(&c->f->kvs[i], kk)) {
            continue;
        }
        const stg_gguf_kv *kv = &c->f->kvs[i];
        const char *outer, *inner;
        describe_type(kv, &outer, &inner);
        bool alt = kk->alt != NO_ALT && kv->type == STG_GGUF_ARRAY && kv->depth == 1 &&
                   kv->elem_type == kk->alt;
        stg_severity s = alt         ? stg_sev(c->lim, STG_SEV_ERROR, STG_SEV_WARNING)
                         : kk->fails ? STG_SEV_ERROR
                                     : STG_SEV_WARNING;
        add_sev(c, STG_GGUF_METADATA_TYPE_MISMATCH, s, kv->type_offset,
                "%s is of type %s%s%s, not %s%s%s%s%s%s", kk->key, outer, *inner ? " of " : "",
                inner, stg_gguf_type_name(kk->type), kk->type == STG_GGUF_ARRAY ? " of " : "",
                kk->type == STG_GGUF_ARRAY ? stg_gguf_type_name(kk->elem) : "",
                alt ? " (newer llama.cpp reads it, older ones take its bits as floats)" : "",
                kk->fails && !alt ? ": " : "", kk->fails && !alt ? kk->why : "");
    }
    /* The vocabulary's per-token arrays are indexed by token id. */
    uint32_t tok = stg_gguf_find_key(c->f, "tokenizer.ggml.tokens");
    const char *per_token[] = {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"};
    for (size_t k = 0; tok != STG_GGUF_NONE && k < 2; k++) {
        uint32_t i = stg_gguf_find_key(c->f, per_token[k]);
        if (i == STG_GGUF_NONE || c->f->kvs[i].type != STG_GGUF_ARRAY ||
            c->f->kvs[tok].type != STG_GGUF_ARRAY || c->f->kvs[i].count == c->f->kvs[tok].count) {
            continue;
        }
        add_sev(c, STG_GGUF_METADATA_TYPE_MISMATCH, STG_SEV_ERROR, c->f->kvs[i].value_offset,
                "%s has %llu entries but tokenizer.ggml.tokens has %llu: a loader that "
                "indexes it by token id reads past its end",
                per_token[k], (unsigned long long)c->f->kvs[i].count,
                (unsigned long long)c->f->kvs[tok].count);
    }
}

/* The alignment in force: 32 when absent; 0 when invalid (then layout is not checked). */
static uint32_t check_alignment(gguf_ctx *c, const uint8_t *buf)
{
    uint32_t i = stg_gguf_find_key(c->f, "general.alignment");
    if (i == STG_GGUF_NONE) {
        return STG_GGUF_DEFAULT_ALIGNMENT;
    }
    const stg_gguf_kv *kv = &c->f->kvs[i];
    if (kv->type != STG_GGUF_UINT32) {
        return 0; /* check_known_keys reported it */
    }
    /* the parser put the 4 value bytes inside buf: read them through a cursor over them */
    stg_cursor v = stg_cur_make(buf, (size_t)(kv->value_offset + kv->value_len));
    uint32_t a = 0;
    if (stg_cur_seek(&v, (size_t)kv->value_offset) != STG_OK || stg_cur_le32(&v, &a) != STG_OK) {
        return 0;
    }
    if (a == 0 || (a & (a - 1)) != 0) {
        add(c, STG_GGUF_ALIGNMENT_INVALID, kv->value_offset,
            "general.alignment is %u, not a power of two", a);
        return 0;
    }
    /* no upper bound: ggml (gguf_init_from_reader, v0.20.x) takes any power of two, and the
     * padding it implies is checked against the file like any other */
    if (a < 8) {
        /* the spec asks for a multiple of 8; ggml accepts any power of two */
        add_sev(c, STG_GGUF_ALIGNMENT_INVALID, stg_sev(c->lim, STG_SEV_ERROR, STG_SEV_WARNING),
                kv->value_offset, "general.alignment is %u, not a multiple of 8", a);
    }
    return a;
}

/* ---------------------------------------------------------------- pass 2: tensors */

/* Checks one tensor info; true when its byte size is known (*bytes). */
static bool check_tensor(gguf_ctx *c, const stg_gguf_tensor *t, uint64_t *bytes)
{
    if (t->name_len > STG_GGUF_MAX_TENSOR_NAME) {
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_NAME_INVALID, t->offset,
                      "the tensor name has %llu bytes: ggml accepts at most %u",
                      (unsigned long long)t->name_len, STG_GGUF_MAX_TENSOR_NAME),
                  t);
    } else if (t->name_nul) {
        /* ggml copies the name as a C string: it loads under a shorter name */
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_NAME_INVALID, t->offset,
                      "the tensor name holds a NUL byte: loaders cut it there"),
                  t);
    } else if (!t->name_utf8) {
        on_tensor(c,
                  add_sev(c, STG_GGUF_TENSOR_NAME_INVALID,
                          stg_sev(c->lim, STG_SEV_ERROR, STG_SEV_WARNING), t->offset,
                          "the tensor name is not valid UTF-8"),
                  t);
    } else if (t->name_len == 0) {
        on_tensor(c,
                  add_sev(c, STG_GGUF_TENSOR_NAME_INVALID,
                          stg_sev(c->lim, STG_SEV_ERROR, STG_SEV_WARNING), t->offset,
                          "the tensor name is empty"),
                  t);
    }
    if (t->dup_of != STG_GGUF_NONE) {
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_DUPLICATE, t->offset,
                      "the tensor info at byte %llu has the same name",
                      (unsigned long long)c->f->tensors[t->dup_of].offset),
                  t);
    }
    /* ggml's element-count guard divides by dimensions 2 to 4: before v0.20.0 (commit
     * c2cdd2b2, August 2026; llama.cpp and every runtime that vendors an older ggml) a 0 there
     * is a division by zero (SIGFPE) in the loader; from v0.20.0 the guard skips tensors of no
     * elements. Those loaders are deployed, so it stays an error. A 0 first dimension every
     * version accepts (an empty tensor). */
    for (uint32_t i = 0; i < t->n_dims; i++) {
        if (t->ne[i] != 0) {
            continue;
        }
        stg_severity s = i == 0 ? stg_sev(c->lim, STG_SEV_WARNING, STG_SEV_INFO) : STG_SEV_ERROR;
        on_tensor(c,
                  add_sev(c, STG_GGUF_TENSOR_SHAPE_INVALID, s, t->dims_offset + 8u * i,
                          "dimension %u of the tensor is 0%s", i + 1,
                          i == 0 ? ""
                                 : ": ggml before v0.20.0 divides by it (SIGFPE; later "
                                   "versions accept it)"),
                  t);
        break;
    }
    uint64_t elements = 0;
    const stg_ggml_type_info *ti = stg_ggml_type(t->type);
    switch (stg_gguf_tensor_size(t, &elements, bytes)) {
    case STG_GGUF_SIZE_OK: return true;
    case STG_GGUF_SIZE_NEGATIVE:
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_SHAPE_INVALID, t->dims_offset,
                      "a dimension is 2^63 or more (negative to ggml)"),
                  t);
        return false;
    case STG_GGUF_SIZE_OVERFLOW:
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_SHAPE_INVALID, t->dims_offset,
                      "the product of the dimensions (%llu x %llu x %llu x %llu) "
                      "overflows 64 bits",
                      (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                      (unsigned long long)t->ne[2], (unsigned long long)t->ne[3]),
                  t);
        return false;
    case STG_GGUF_SIZE_TYPE:
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_TYPE_INVALID, t->type_offset,
                      "ggml type %u is unknown or was removed", (unsigned)t->type),
                  t);
        return false;
    case STG_GGUF_SIZE_BLOCK:
        on_tensor(c,
                  add(c, STG_GGUF_TENSOR_TYPE_INVALID, t->dims_offset,
                      "a row of %llu elements is not a whole number of %s blocks "
                      "(%u elements each)",
                      (unsigned long long)t->ne[0], ti != NULL ? ti->name : "?",
                      ti != NULL ? ti->block : 0u),
                  t);
        return false;
    }
    return false;
}

/* ---------------------------------------------------------------- pass 3 */

/* Without tensors ggml reads no padding (its data section starts right after the metadata),
 * but writers pad the metadata all the same: gguf-py to general.alignment, ggml's writer
 * (gguf_write_out in src/gguf.cpp) to its context's alignment, which stays 32 when the key is
 * merely set. Up to the larger padded end the bytes are the writer's, not trailing data. */
static void check_no_tensor_tail(gguf_ctx *c, uint64_t start, uint32_t align, uint64_t data_len)
{
    if (align < STG_GGUF_DEFAULT_ALIGNMENT) {
        align = STG_GGUF_DEFAULT_ALIGNMENT;
    }
    uint64_t padded = 0;
    uint64_t pad_len = stg_gguf_pad(start, align, &padded) ? padded - start : UINT64_MAX;
    if (data_len > pad_len) {
        add_sev(c, STG_DATA_TRAILING, stg_sev(c->lim, STG_SEV_ERROR, STG_SEV_WARNING),
                start + pad_len, "%llu byte(s) follow the metadata and its padding",
                (unsigned long long)(data_len - pad_len));
    }
}

static void check_layout(gguf_ctx *c, const uint64_t *sizes, uint32_t align, size_t len,
                         stg_gguf_result *res)
{
    const stg_gguf_file *f = c->f;
    uint64_t start = f->infos_end;
    if (f->ntensors > 0 && !stg_gguf_pad(start, align, &start)) {
        start = UINT64_MAX;
    }
    if (start > (uint64_t)len) {
        add(c, STG_GGUF_TRUNCATED, f->infos_end,
            "the data section would start at byte %llu, past the end of the file "
            "(%llu bytes)",
            (unsigned long long)start, (unsigned long long)len);
        return;
    }
    uint64_t data_len = (uint64_t)len - start;
    res->data_start = start;
    res->data_len = data_len;
    uint64_t expected = 0; /* where the next tensor must begin */
    uint64_t last_end = 0;
    bool in_range = true;
    for (size_t i = 0; i < f->ntensors; i++) {
        const stg_gguf_tensor *t = &f->tensors[i];
        uint64_t off = t->data_offset;
        if (off % align != 0) {
            on_tensor(c,
                      add_sev(c, STG_TENSOR_MISALIGNED, STG_SEV_ERROR, t->data_field_offset,
                              "the tensor's offset %llu is not a multiple of the "
                              "alignment %u",
                              (unsigned long long)off, align),
                      t);
        } else if (off > expected) {
            /* start + expected <= start + data_len when expected <= data_len */
            add(c, STG_DATA_GAP, expected <= data_len ? start + expected : t->data_field_offset,
                "data bytes [%llu, %llu) are covered by no tensor", (unsigned long long)expected,
                (unsigned long long)off);
        } else if (off < expected) {
            on_tensor(c,
                      add(c, STG_OFFSETS_OVERLAP, t->data_field_offset,
                          "the tensor's range begins at %llu, inside the bytes of "
                          "the tensors before it (which end at %llu)",
                          (unsigned long long)off, (unsigned long long)last_end),
                      t);
        }
        uint64_t end = 0;
        if (stg_add_u64(off, sizes[i], &end) || end > data_len) {
            in_range = false;
            on_tensor(c,
                      add(c, STG_OFFSETS_OUT_OF_RANGE, t->data_field_offset,
                          "the tensor's %llu bytes at offset %llu end past the data "
                          "section (%llu bytes)",
                          (unsigned long long)sizes[i], (unsigned long long)off,
                          (unsigned long long)data_len),
                      t);
            /* follow-on checks would only repeat this */
            return;
        }
        last_end = end;
        if (!stg_gguf_pad(end, align, &expected)) {
            expected = UINT64_MAX;
        }
    }
    if (!in_range) {
        return;
    }
    if (f->ntensors == 0) {
        check_no_tensor_tail(c, start, align, data_len);
        return;
    }
    /* expected: the padded end of the last tensor, relative to the data section */
    if (data_len > expected) {
        add_sev(c, STG_DATA_TRAILING, stg_sev(c->lim, STG_SEV_ERROR, STG_SEV_WARNING),
                start + expected, "%llu byte(s) follow the last tensor's data",
                (unsigned long long)(data_len - expected));
    } else if (data_len < expected) {
        /* the last tensor is whole but its padding is cut: a loader that reads the padded
         * data section (ggml without mmap) fails, mmap loaders do not */
        add_sev(c, STG_GGUF_TRUNCATED, stg_sev(c->lim, STG_SEV_WARNING, STG_SEV_INFO),
                start + last_end, "the file ends %llu byte(s) short of the last tensor's padding",
                (unsigned long long)(expected - data_len));
    }
}

/* ---------------------------------------------------------------- entry */

stg_status stg_gguf_check(const uint8_t *buf, size_t len, const stg_limits *lim, uint64_t hash_seed,
                          stg_report *r, stg_gguf_file *f, stg_gguf_result *res)
{
    if ((buf == NULL && len != 0) || lim == NULL || r == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_gguf_result local_res;
    if (res == NULL) {
        res = &local_res;
    }
    memset(res, 0, sizeof *res);
    res->alignment = STG_GGUF_DEFAULT_ALIGNMENT;
    stg_gguf_limits gl;
    stg_gguf_limits_from(lim, len, hash_seed, &gl);
    stg_gguf_file local;
    stg_gguf_file *ff = f != NULL ? f : &local;
    stg_gguf_file_init(ff, gl.max_memory);
    static const uint8_t empty[1] = {0};
    bool whole = stg_gguf_parse(buf != NULL ? buf : empty, len, &gl, ff);

    gguf_ctx c = {lim, r, ff, false};
    if (!whole) {
        report_fail(&c, len);
    }
    for (size_t i = 0; i < ff->nkv; i++) {
        check_key(&c, &ff->kvs[i]);
        check_value(&c, &ff->kvs[i]);
    }
    check_known_keys(&c);
    uint32_t align = check_alignment(&c, buf);
    if (align != 0) {
        res->alignment = align;
    }
    /* sizes of the tensors read: scratch from the arena */
    uint64_t *sizes = NULL;
    if (ff->ntensors > 0) {
        sizes = stg_arena_alloc(&ff->arena, ff->ntensors * sizeof *sizes, sizeof *sizes);
        if (sizes == NULL) {
            stg_report_limit(r, ff->tensors[0].offset, "max_memory", (uint64_t)ff->arena.cap);
            if (ff->arena.out_of_memory) {
                stg_report_oom(r);
            }
            c.errors = true;
        }
    }
    bool sizes_ok = true;
    for (size_t i = 0; i < ff->ntensors; i++) {
        uint64_t b = 0;
        bool known = check_tensor(&c, &ff->tensors[i], &b);
        sizes_ok = sizes_ok && known;
        if (sizes != NULL) {
            sizes[i] = b;
        }
    }
    if (whole && sizes_ok && sizes != NULL && align != 0) {
        check_layout(&c, sizes, align, len, res);
    } else if (whole && ff->ntensors == 0 && align != 0) {
        check_layout(&c, NULL, align, len, res);
    }
    res->layout_ok = !c.errors;
    if (f == NULL) {
        stg_gguf_file_release(&local);
    }
    return STG_OK;
}
