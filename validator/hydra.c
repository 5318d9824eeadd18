/* hydra _target_ rules (see hydra.h). How a target runs: hydra's instantiate
 * (hydra/_internal/instantiate/_instantiate2.py, _resolve_target) hands the string to _locate
 * (hydra/_internal/utils.py), which imports the first dotted part and then walks the rest with
 * getattr, importing submodules as it goes; the result is called with the mapping's other keys
 * (and `_args_`), or bound with functools.partial when `_partial_` is true. So a target names
 * any callable reachable from an importable module: `os.system`, and also an attribute path
 * through a module an allowed package imported (`nemo.collections.asr.models.os.system`).
 *
 * The allowed namespaces are NeMo's ALLOWED_TARGET_PREFIXES (nemo/core/classes/common.py,
 * NVIDIA/NeMo 8cfedd7, lines 61-76), which its safe_instantiate checks before calling hydra,
 * widened to the PyTorch and Lightning namespaces and the packages NeMo's own configs name;
 * inside them stguard refuses a path with a component that is a well-known module or a dunder
 * name (the getattr walk above), or one that loads pickles, code or native libraries
 * (torch.load, torch.hub, torch.jit, torch.ops, restore_from, load_from_checkpoint, ...). */
#include "hydra.h"

#include <string.h>

#include "../parser/arena.h"
#include "../parser/util.h"
#include "../parser/yaml.h"

#define HYDRA_MIN_BUDGET ((uint64_t)1024 * 1024)

static const char *const allowed_prefixes[] = {
    /* NeMo's ALLOWED_TARGET_PREFIXES */
    "nemo.collections.",
    "nemo.core.",
    "nemo.utils.",
    "nemo.lightning.",
    "tests.collections.",
    "torch.nn.",
    "torch.optim.",
    "torch.utils.data.",
    "lightning.pytorch.callbacks.",
    "lightning.pytorch.loggers.",
    "lightning.pytorch.strategies.",
    "lightning.pytorch.accelerators.",
    "omegaconf.",
    "megatron.",
    /* the PyTorch and Lightning namespaces as a whole, and the metric and text-normalization
     * packages NeMo's own configs name (examples/audio, examples/tts): with the component
     * rules below, which refuse their loaders */
    "torch.",
    "lightning.",
    "pytorch_lightning.",
    "lightning_fabric.",
    "torchmetrics.",
    "nemo_text_processing.",
};

/* Components that reach a module an allowed package imported, or a builtin that runs code. */
static const char *const module_components[] = {
    "os",       "sys",     "subprocess", "builtins", "importlib", "shutil",   "pickle",
    "socket",   "ctypes",  "runpy",      "pty",      "posix",     "nt",       "marshal",
    "code",     "codeop",  "eval",       "exec",     "compile",   "system",   "popen",
    "getattr",  "setattr", "open",       "globals",  "pathlib",   "tempfile", "urllib",
    "requests", "dill",    "joblib",     "hydra",    "inspect",   "io",       "multiprocessing",
};

/* Components that load pickles, code or native libraries (torch.load, NeMo's restore_from,
 * Lightning's load_from_checkpoint, transformers' from_pretrained, torch.save's writes) ... */
static const char *const loader_components[] = {
    "load",         "restore_from",         "load_from_checkpoint",     "from_pretrained",
    "load_library", "import_class_by_path", "load_state_dict_from_url", "save",
};

/* ... and the torch modules that do nothing else (torch.hub fetches and runs code, torch.jit
 * and torch.package load programs and pickles, torch.ops and torch.classes load native
 * libraries, cpp_extension compiles and loads them). */
static const char *const loader_modules[] = {
    "torch.hub.",
    "torch.jit.",
    "torch.package.",
    "torch.serialization.",
    "torch.ops.",
    "torch.classes.",
    "torch.utils.cpp_extension.",
    "torch.utils.model_zoo.",
    "torch._C._import",
};

static bool component_is(const char *c, size_t n, const char *const *set, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (strlen(set[i]) == n && memcmp(set[i], c, n) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether hydra's _locate can resolve t at all: dotted parts, each a Python identifier
 * (ASCII letters, digits, '_', or non-ASCII bytes, which identifiers may hold; not starting
 * with a digit). Anything else makes _locate raise before it imports or calls anything
 * ("invalid dotstring", a failed import_module). */
bool stg_hydra_target_locatable(const char *t, size_t n)
{
    bool start = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '.') {
            if (start) {
                return false; /* an empty part */
            }
            start = true;
            continue;
        }
        bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
        if (!alpha && !(c >= '0' && c <= '9' && !start)) {
            return false;
        }
        start = false;
    }
    /* one part: import_module(name) and a call of the module object, which raises */
    return n > 0 && !start && memchr(t, '.', n) != NULL;
}

const char *stg_hydra_target_refusal(const char *t, size_t n)
{
    bool allowed = false;
    for (size_t i = 0; i < sizeof allowed_prefixes / sizeof allowed_prefixes[0]; i++) {
        size_t p = strlen(allowed_prefixes[i]);
        allowed = allowed || (n > p && memcmp(t, allowed_prefixes[i], p) == 0);
    }
    if (!allowed) {
        return "outside the namespaces NeMo's safe_instantiate allows";
    }
    for (size_t i = 0; i < sizeof loader_modules / sizeof loader_modules[0]; i++) {
        size_t p = strlen(loader_modules[i]);
        if (n >= p && memcmp(t, loader_modules[i], p) == 0) {
            return "naming a loader of pickles or code inside an allowed namespace";
        }
    }
    for (size_t at = 0; at <= n;) {
        const char *dot = at < n ? memchr(t + at, '.', n - at) : NULL;
        size_t end = dot != NULL ? (size_t)(dot - t) : n;
        const char *c = t + at;
        size_t cn = end - at;
        if (cn == 0 || memchr(c, '\0', cn) != NULL) {
            return "with an empty or NUL component";
        }
        if ((cn >= 2 && c[0] == '_' && c[1] == '_') ||
            component_is(c, cn, module_components,
                         sizeof module_components / sizeof module_components[0])) {
            return "reaching a module or builtin through an allowed package's attributes";
        }
        if (component_is(c, cn, loader_components,
                         sizeof loader_components / sizeof loader_components[0])) {
            return "naming a loader of pickles or code inside an allowed namespace";
        }
        at = end + 1;
    }
    return NULL;
}

typedef struct hydra_walk {
    const stg_yaml_doc *doc;
    stg_check_ctx *ctx;
} hydra_walk;

/* The value node of key `name` in mapping m, or doc->count. */
static size_t map_value(const stg_yaml_doc *d, size_t m, const char *name)
{
    for (size_t k = stg_yaml_first_child(d, m); k < d->count;) {
        size_t v = stg_yaml_next_child(d, m, k);
        if (v >= d->count) {
            break;
        }
        if (stg_yaml_scalar_is(d, k, name)) {
            return v;
        }
        k = stg_yaml_next_child(d, m, v);
    }
    return d->count;
}

static void judge_target(hydra_walk *w, size_t m, size_t v, bool nemo_target)
{
    const stg_yaml_doc *d = w->doc;
    const stg_yaml_node *n = &d->nodes[v];
    stg_report *r = w->ctx->report;
    const char *key = nemo_target ? "NeMo's top-level target" : "a hydra _target_";
    if (n->kind != STG_YAML_SCALAR ||
        (n->str_len >= 2 && memchr(n->str, '$', n->str_len) != NULL)) {
        stg_report_add(r, STG_HYDRA_TARGET_UNRESOLVED, (uint64_t)n->offset,
                       "%s that is no plain class path (an interpolation or a collection): "
                       "what it resolves to is not judged",
                       key);
        return;
    }
    const char *t = (const char *)n->str;
    const char *why = stg_hydra_target_refusal(t, n->str_len);
    if (why == NULL || !stg_hydra_target_locatable(t, n->str_len)) {
        return; /* allowed, or nothing hydra can import: instantiate raises */
    }
    size_t partial = map_value(d, m, "_partial_"), args = map_value(d, m, "_args_");
    bool is_partial = partial < d->count && (stg_yaml_scalar_is(d, partial, "true") ||
                                             stg_yaml_scalar_is(d, partial, "True"));
    const char *how = nemo_target       ? "NeMo imports the class and builds the model with it"
                      : is_partial      ? "instantiate imports it and binds it (_partial_: true) "
                                          "for the code that calls it"
                      : args < d->count ? "instantiate imports it and calls it with _args_"
                                        : "instantiate imports it and calls it";
    stg_finding *f = stg_report_add(r, STG_HYDRA_TARGET_UNSAFE, (uint64_t)n->offset, "%s %s: %s",
                                    key, why, how);
    const char *dot = NULL;
    for (size_t i = n->str_len; i > 0 && dot == NULL; i--) {
        dot = t[i - 1] == '.' ? t + i - 1 : NULL;
    }
    size_t mod_len = dot != NULL ? (size_t)(dot - t) : 0;
    size_t name_at = dot != NULL ? mod_len + 1 : 0;
    stg_report_set_global(r, f, t, mod_len, t + name_at, n->str_len - name_at);
}

static void walk_targets(hydra_walk *w)
{
    const stg_yaml_doc *d = w->doc;
    for (size_t m = 0; m < d->count; m++) {
        if (d->nodes[m].kind != STG_YAML_MAP) {
            continue;
        }
        for (size_t k = stg_yaml_first_child(d, m); k < d->count;) {
            size_t v = stg_yaml_next_child(d, m, k);
            if (v >= d->count) {
                break;
            }
            if (stg_yaml_scalar_is(d, k, "_target_")) {
                judge_target(w, m, v, false);
            } else if (m == 0 && stg_yaml_scalar_is(d, k, "target")) {
                judge_target(w, m, v, true);
            }
            k = stg_yaml_next_child(d, m, v);
        }
    }
}

static void report_refusal(stg_check_ctx *ctx, const stg_yaml_doc *doc, const stg_arena *a,
                           size_t max_nodes)
{
    stg_report *r = ctx->report;
    uint64_t off = (uint64_t)doc->error_offset;
    switch (doc->status) {
    case STG_YAML_E_SYNTAX:
        stg_report_add(r, STG_YAML_MALFORMED, off, "the YAML does not parse: %s", doc->error_what);
        break;
    case STG_YAML_E_UNSUPPORTED:
        stg_report_add(r, STG_YAML_UNSUPPORTED, off,
                       "YAML outside the subset stguard reads (%s): its hydra targets are not "
                       "judged",
                       doc->error_what);
        break;
    case STG_YAML_E_DEPTH:
        stg_report_limit(r, off, "max_json_depth", ctx->lim->max_json_depth);
        break;
    case STG_YAML_E_NODES: stg_report_limit(r, off, "yaml nodes", (uint64_t)max_nodes); break;
    case STG_YAML_E_MEMORY:
        stg_report_limit(r, off, "max_memory", (uint64_t)a->cap);
        r->out_of_memory = r->out_of_memory || a->out_of_memory;
        break;
    case STG_YAML_OK: break;
    }
}

void stg_hydra_check(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    /* every node but an alias's copies takes at least one byte of input */
    uint64_t nodes = (uint64_t)len * 4 + 4096;
    size_t max_nodes = nodes > STG_YAML_NODES_CEILING ? STG_YAML_NODES_CEILING : (size_t)nodes;
    uint64_t budget;
    if (ctx->lim->max_memory != 0) {
        budget = ctx->lim->max_memory;
    } else if (stg_mul_u64((uint64_t)max_nodes, 2 * sizeof(stg_yaml_node), &budget) ||
               stg_add_u64(budget, (uint64_t)len * 2 + HYDRA_MIN_BUDGET, &budget)) {
        budget = UINT64_MAX;
    }
    stg_arena arena;
    stg_arena_init(&arena, budget > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)budget);
    stg_yaml_doc doc;
    if (stg_yaml_parse(buf, len, ctx->lim->max_json_depth, max_nodes, &arena, &doc) ==
        STG_YAML_OK) {
        hydra_walk w = {&doc, ctx};
        walk_targets(&w);
    } else {
        report_refusal(ctx, &doc, &arena, max_nodes);
    }
    stg_yaml_release(&doc, &arena);
    stg_arena_release(&arena);
}
