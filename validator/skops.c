/* skops schema rules (see skops.h). How skops audits (skops-dev/skops 50d3165): skops.io.load
 * and get_untrusted_types (skops/io/_persist.py, lines 197-237) read schema.json, build the
 * node tree from each state's "__loader__" (skops/io/_audit.py, get_tree) and collect every
 * node whose type, "__module__" + "." + "__class__" (check_type), is not in that loader's
 * trusted defaults (Node._get_trusted, get_unsafe_set). The defaults per loader: DictNode dict
 * and collections.OrderedDict, ListNode list, SetNode set, TupleNode tuple, SliceNode slice,
 * BytesNode bytes, BytearrayNode bytearray, JsonNode always safe, TypeNode the primitive,
 * container and numpy dtype types (skops/io/_general.py); NdArrayNode numpy.ndarray and the
 * dtypes, MaskedArrayNode, RandomStateNode and RandomGeneratorNode their numpy class
 * (_numpy.py); ObjectNode the estimators sklearn.utils.all_estimators() lists
 * (_trusted_types.py), here every sklearn class (the list depends on the installed sklearn);
 * TreeNode sklearn's Tree, LossNode sklearn's loss classes (_sklearn.py); FunctionNode,
 * MethodNode, PartialNode, ReduceNode, OperatorFuncNode, DTypeNode and any other loader trust
 * nothing by default here (FunctionNode's numpy/scipy ufunc list is not reproduced: stricter). */
#include "skops.h"

#include <string.h>

#include "../parser/arena.h"
#include "../parser/json.h"
#include "../parser/util.h"
#include "pickle_policy.h"

#define SKOPS_MIN_BUDGET ((uint64_t)1024 * 1024)

typedef struct skops_trust {
    const char *loader;
    const char *type; /* exact type, or a prefix when it ends with '.' */
} skops_trust;

static const skops_trust trusted_types[] = {
    {"DictNode", "builtins.dict"},
    {"DictNode", "collections.OrderedDict"},
    {"DefaultDictNode", "collections.defaultdict"},
    {"ListNode", "builtins.list"},
    {"SetNode", "builtins.set"},
    {"TupleNode", "builtins.tuple"},
    {"SliceNode", "builtins.slice"},
    {"BytesNode", "builtins.bytes"},
    {"BytearrayNode", "builtins.bytearray"},
    {"TypeNode", "builtins.int"},
    {"TypeNode", "builtins.float"},
    {"TypeNode", "builtins.str"},
    {"TypeNode", "builtins.bool"},
    {"TypeNode", "builtins.list"},
    {"TypeNode", "builtins.set"},
    {"TypeNode", "builtins.map"},
    {"TypeNode", "builtins.tuple"},
    {"NdArrayNode", "numpy.ndarray"},
    {"MaskedArrayNode", "numpy.ma.core.MaskedArray"},
    {"RandomStateNode", "numpy.random.mtrand.RandomState"},
    {"RandomGeneratorNode", "numpy.random._generator.Generator"},
    {"ObjectNode", "sklearn."},
    {"TreeNode", "sklearn.tree._tree.Tree"},
    {"LossNode", "sklearn._loss."},
};

/* numpy's scalar types (NUMPY_DTYPE_TYPE_NAMES), trusted for TypeNode and NdArrayNode */
static const char *const numpy_dtypes[] = {
    "bool_",  "int8",   "int16",    "int32",     "int64",      "uint8",     "uint16",
    "uint32", "uint64", "float16",  "float32",   "float64",    "complex64", "complex128",
    "str_",   "bytes_", "longlong", "ulonglong", "longdouble", "intc",      "uintc",
};

static bool type_is(const char *want, const char *module, size_t ml, const char *name, size_t nl)
{
    size_t w = strlen(want);
    bool prefix = w > 0 && want[w - 1] == '.';
    if (prefix) {
        return ml + 1 >= w && memcmp(module, want, w - 1 < ml ? w - 1 : ml) == 0 &&
               (ml == w - 1 || module[w - 1] == '.');
    }
    return ml + 1 + nl == w && memcmp(want, module, ml) == 0 && want[ml] == '.' &&
           memcmp(want + ml + 1, name, nl) == 0;
}

bool stg_skops_trusted(const char *loader, const char *module, size_t ml, const char *name,
                       size_t nl)
{
    if (strcmp(loader, "JsonNode") == 0) {
        return true; /* skops: "JsonNode is always considered safe" */
    }
    for (size_t i = 0; i < sizeof trusted_types / sizeof trusted_types[0]; i++) {
        if (strcmp(trusted_types[i].loader, loader) == 0 &&
            type_is(trusted_types[i].type, module, ml, name, nl)) {
            return true;
        }
    }
    if (strcmp(loader, "TypeNode") == 0 || strcmp(loader, "NdArrayNode") == 0) {
        for (size_t i = 0; i < sizeof numpy_dtypes / sizeof numpy_dtypes[0]; i++) {
            if (ml == 5 && memcmp(module, "numpy", 5) == 0 && strlen(numpy_dtypes[i]) == nl &&
                memcmp(numpy_dtypes[i], name, nl) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* One open JSON object: what its state says of itself. */
typedef struct skops_state {
    size_t offset;
    char *cls, *module, *loader;
    size_t cls_len, module_len;
    bool protocol;
} skops_state;

typedef struct skops_walk {
    stg_json_parser json;
    stg_arena arena;
    stg_check_ctx *ctx;
    skops_state *states;
    uint32_t depth;
    bool stop, ended, schema;
    size_t end;
} skops_walk;

static char *copy_string(skops_walk *w, const stg_json_event *ev, size_t *n)
{
    char *s = stg_json_string_copy(&w->arena, ev, n);
    w->stop = w->stop || s == NULL;
    return s;
}

static void judge_state(skops_walk *w, const skops_state *s)
{
    stg_report *r = w->ctx->report;
    if (s->loader == NULL) {
        return; /* a plain JSON object inside a state (its "content") */
    }
    if (s->cls == NULL || s->module == NULL) {
        stg_report_add(r, STG_SKOPS_MALFORMED, (uint64_t)s->offset,
                       "a skops state with a __loader__ but no __class__ or __module__: skops "
                       "cannot audit it");
        return;
    }
    if (stg_skops_trusted(s->loader, s->module, s->module_len, s->cls, s->cls_len)) {
        return;
    }
    stg_policy_verdict v = stg_policy_classify(w->ctx->policy, s->module, s->module_len, s->cls,
                                               s->cls_len);
    stg_finding *f;
    if (v.klass == STG_GLOBAL_DANGEROUS) {
        f = stg_report_add(r, STG_SKOPS_TYPE_DANGEROUS, (uint64_t)s->offset,
                           "a skops node whose type is on the deny list (%s): loading it with "
                           "trusted= set imports and calls it",
                           v.reason);
    } else {
        f = stg_report_add(r, STG_SKOPS_TYPE_UNTRUSTED, (uint64_t)s->offset,
                           "a skops node whose type skops does not trust by default: "
                           "skops.io.load refuses it unless the caller lists it in trusted=");
    }
    stg_report_set_global(r, f, s->module, s->module_len, s->cls, s->cls_len);
}

/* The value after a key of the innermost state: a string for its own type fields. */
static void take_field(skops_walk *w, const char *key, size_t n, const stg_json_event *ev)
{
    skops_state *s = &w->states[w->depth - 1];
    if (w->depth == 1 && n == 8 && memcmp(key, "protocol", 8) == 0) {
        s->protocol = true;
    }
    if (ev->type != STG_JSON_STRING) {
        return;
    }
    size_t len;
    if (n == 9 && memcmp(key, "__class__", 9) == 0) {
        s->cls = copy_string(w, ev, &s->cls_len);
    } else if (n == 10 && memcmp(key, "__module__", 10) == 0) {
        s->module = copy_string(w, ev, &s->module_len);
    } else if (n == 10 && memcmp(key, "__loader__", 10) == 0) {
        s->loader = copy_string(w, ev, &len);
    }
}

static bool next_event(skops_walk *w, stg_json_event *ev)
{
    if (w->stop) {
        return false;
    }
    stg_json_type t = stg_json_next(&w->json, ev);
    if (t == STG_JSON_END) {
        w->ended = true;
        w->end = ev->offset;
    }
    w->stop = t == STG_JSON_ERROR || t == STG_JSON_END;
    return !w->stop;
}

static void walk_states(skops_walk *w)
{
    stg_json_event ev;
    char *key = NULL;
    size_t key_len = 0;
    while (next_event(w, &ev)) {
        if (ev.type == STG_JSON_OBJECT_BEGIN) {
            skops_state *s = &w->states[w->depth++];
            memset(s, 0, sizeof *s);
            s->offset = ev.offset;
        } else if (ev.type == STG_JSON_OBJECT_END) {
            skops_state *s = &w->states[--w->depth];
            if (w->depth == 0) {
                w->schema = s->protocol && s->loader != NULL;
                if (!w->schema) {
                    return;
                }
            }
            judge_state(w, s);
        } else if (ev.type == STG_JSON_KEY) {
            key = copy_string(w, &ev, &key_len);
            if (key == NULL || !next_event(w, &ev)) {
                return;
            }
            take_field(w, key, key_len, &ev);
            if (ev.type == STG_JSON_OBJECT_BEGIN) {
                skops_state *s = &w->states[w->depth++];
                memset(s, 0, sizeof *s);
                s->offset = ev.offset;
            }
        }
    }
}

bool stg_skops_check(const uint8_t *buf, size_t len, stg_check_ctx *ctx, bool *is_schema)
{
    *is_schema = false;
    skops_walk w;
    memset(&w, 0, sizeof w);
    w.ctx = ctx;
    uint64_t budget;
    if (ctx->lim->max_memory != 0) {
        budget = ctx->lim->max_memory;
    } else if (stg_mul_u64((uint64_t)len, 3, &budget) ||
               stg_add_u64(budget, SKOPS_MIN_BUDGET, &budget)) {
        budget = UINT64_MAX;
    }
    stg_arena_init(&w.arena, budget > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)budget);
    uint32_t depth = ctx->lim->max_json_depth == 0 ? 1 : ctx->lim->max_json_depth;
    depth = depth > STG_JSON_DEPTH_CEILING ? STG_JSON_DEPTH_CEILING : depth;
    w.states = stg_arena_alloc(&w.arena, ((size_t)depth + 1) * sizeof *w.states, 8);
    stg_report *scratch = w.states != NULL ? stg_report_new(ctx->lim) : NULL;
    if (scratch == NULL) {
        stg_report_oom(ctx->report);
        stg_arena_release(&w.arena);
        return true;
    }
    stg_report *into = ctx->report;
    ctx->report = scratch;
    stg_json_init(&w.json, buf, len, depth, &w.arena);
    walk_states(&w);
    ctx->report = into;
    bool limit = w.json.error == STG_JSON_E_DEPTH || w.json.error == STG_JSON_E_MEMORY ||
                 w.arena.failed;
    bool is_json = (w.json.error == STG_JSON_E_NONE || limit) &&
                   (!w.ended || stg_json_rest_is_ws(buf, len, w.end));
    if (limit) {
        stg_report_limit(into, (uint64_t)w.json.error_offset,
                         w.json.error == STG_JSON_E_DEPTH ? "max_json_depth" : "max_memory",
                         w.json.error == STG_JSON_E_DEPTH ? depth : (uint64_t)w.arena.cap);
    } else if (is_json && w.schema) {
        *is_schema = true;
        stg_report_merge(into, scratch, NULL, STG_NO_OFFSET);
    }
    stg_report_free(scratch);
    stg_json_release(&w.json);
    stg_arena_release(&w.arena);
    return is_json;
}
