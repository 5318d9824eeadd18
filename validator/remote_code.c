/* auto_map rules (see remote_code.h). How transformers reads a reference (its
 * dynamic_module_utils.py, get_class_from_dynamic_module): when the reference holds "--" it is
 * split there into a repo id and the rest (`repo_id, class_reference =
 * class_reference.split("--")`), else the repo is the one being loaded; the rest is split at
 * "." into exactly a module and a class (`module_file, class_name = class_reference.split(".")`),
 * and `module_file + ".py"` is fetched from that repo, imported and run. Tokenizers hold a list
 * [slow, fast] of such references, either may be null (custom_object_save writes the pair). */
#include "remote_code.h"

#include <string.h>

#include "../parser/arena.h"
#include "../parser/json.h"
#include "../parser/mem.h"
#include "../parser/util.h"

#define REMOTE_CODE_MIN_BUDGET ((uint64_t)1024 * 1024)
#define AUTO_CLASS_NAME_MAX 64u /* an auto class name longer than this is not named in messages */

typedef struct auto_map_walk {
    stg_json_parser json;
    stg_arena arena;
    stg_check_ctx *ctx;
    stg_report *outer; /* the caller's report (ctx->report is a scratch one during the walk) */
    const uint8_t *buf;
    size_t refs;
    size_t end; /* offset just past the top-level value, once its END event came */
    bool stop, ended;
} auto_map_walk;

static size_t walk_budget(const stg_limits *lim, size_t len)
{
    uint64_t b;
    if (lim->max_memory != 0) {
        b = lim->max_memory;
    } else if (stg_mul_u64((uint64_t)len, 2, &b) || stg_add_u64(b, REMOTE_CODE_MIN_BUDGET, &b)) {
        b = UINT64_MAX;
    }
    return b > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

/* The decoded bytes of a STRING or KEY event (arena copy, NUL-terminated); NULL when memory
 * fails (reported, the walk stops). */
static char *decoded(auto_map_walk *w, const stg_json_event *ev, size_t *n)
{
    char *s = stg_json_string_copy(&w->arena, ev, n);
    if (s == NULL) {
        stg_report_limit(w->ctx->report, (uint64_t)ev->offset, "max_memory",
                         (uint64_t)w->arena.cap);
        w->ctx->report->out_of_memory = w->ctx->report->out_of_memory || w->arena.out_of_memory;
        w->stop = true;
    }
    return s;
}

/* An auto class name (AutoModelForCausalLM) is a value a message may carry: ASCII letters,
 * digits and '_', short. Anything else is named "an entry". */
static const char *safe_auto_class(const char *key, size_t n)
{
    if (key == NULL || n == 0 || n > AUTO_CLASS_NAME_MAX) {
        return "an entry";
    }
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_')) {
            return "an entry";
        }
    }
    return key;
}

static const uint8_t *find_bytes(const uint8_t *s, size_t n, const char *pat, size_t m)
{
    for (size_t i = 0; m <= n && i <= n - m; i++) {
        if (memcmp(s + i, pat, m) == 0) {
            return s + i;
        }
    }
    return NULL;
}

static size_t count_bytes(const uint8_t *s, size_t n, const char *pat, size_t m)
{
    size_t count = 0;
    for (const uint8_t *at; (at = find_bytes(s, n, pat, m)) != NULL; count++) {
        n -= (size_t)(at - s) + m;
        s = at + m;
    }
    return count;
}

/* A module name that is one plain file name of the folder (no separator, no dot, no NUL), so
 * `<module>.py` can be looked up beside the config. */
static bool plain_module(const char *m, size_t n)
{
    if (n == 0 || n > 200) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (m[i] == '/' || m[i] == '\\' || m[i] == '.' || m[i] == '\0') {
            return false;
        }
    }
    return true;
}

static const char *beside_text(stg_beside b)
{
    switch (b) {
    case STG_BESIDE_PRESENT: return "present beside this config";
    case STG_BESIDE_ABSENT: return "not beside this config (the loader fetches it)";
    case STG_BESIDE_UNKNOWN: break;
    }
    return "not looked up (no folder)";
}

/* Whether <module>.py lies beside the config: only for a top-level file on disk. */
static stg_beside look_beside(auto_map_walk *w, const char *module, size_t n)
{
    stg_check_ctx *ctx = w->ctx;
    if (ctx->beside == NULL || ctx->depth != 0 || ctx->member != NULL || !plain_module(module, n)) {
        return STG_BESIDE_UNKNOWN;
    }
    char *file = stg_mem_alloc(n + 4);
    if (file == NULL) {
        stg_report_oom(ctx->report);
        return STG_BESIDE_UNKNOWN;
    }
    memcpy(file, module, n);
    memcpy(file + n, ".py", 4);
    stg_beside b = ctx->beside(ctx->onnx_external_arg, file, w->outer);
    stg_mem_free(file);
    return b;
}

/* One reference (a string of the auto_map, or of a tokenizer's pair). */
static void judge_ref(auto_map_walk *w, const char *key, size_t key_len, const stg_json_event *ev)
{
    if (++w->refs > STG_AUTO_MAP_REFS_CEILING) {
        stg_report_limit(w->ctx->report, (uint64_t)ev->offset, "auto_map references",
                         STG_AUTO_MAP_REFS_CEILING);
        w->stop = true;
        return;
    }
    size_t n;
    char *ref = decoded(w, ev, &n);
    if (ref == NULL) {
        return;
    }
    stg_report *r = w->ctx->report;
    const char *what = safe_auto_class(key, key_len);
    uint64_t off = (uint64_t)ev->offset;
    size_t dashes = count_bytes((const uint8_t *)ref, n, "--", 2);
    const uint8_t *sep = find_bytes((const uint8_t *)ref, n, "--", 2);
    size_t rest_at = sep != NULL ? (size_t)(sep - (const uint8_t *)ref) + 2 : 0;
    const char *rest = ref + rest_at;
    size_t rest_len = n - rest_at;
    const uint8_t *dot = find_bytes((const uint8_t *)rest, rest_len, ".", 1);
    size_t dots = count_bytes((const uint8_t *)rest, rest_len, ".", 1);
    size_t mod_len = dot != NULL ? (size_t)(dot - (const uint8_t *)rest) : 0;
    if (dashes > 1 || dots != 1 || mod_len == 0 || mod_len + 1 == rest_len ||
        (sep != NULL && rest_at == 2)) {
        stg_finding *f = stg_report_add(r, STG_REMOTE_CODE_INVALID, off,
                                        "auto_map %s is not a reference of the form "
                                        "[repo--]module.Class: transformers refuses it",
                                        what);
        stg_report_set_global(r, f, ref, n, "", 0);
        return;
    }
    stg_finding *f;
    stg_report_row row = {.kind = STG_SUMMARY_AUTO_MAP,
                          .name = key,
                          .name_len = key != NULL ? key_len : 0,
                          .value = ref,
                          .value_len = n,
                          .count = 1,
                          .offset = off,
                          .state = STG_SUMMARY_STATE_OTHER_REPO};
    if (sep != NULL) {
        f = stg_report_add(r, STG_REMOTE_CODE_CROSS_REPO, off,
                           "auto_map %s names code in another Hub repository (the id before "
                           "\"--\"): trust_remote_code=True fetches that module and runs it",
                           what);
        /* the global reads repo--module.Class, the reference as written */
        stg_report_set_global(r, f, ref, rest_at + mod_len, rest + mod_len + 1,
                              rest_len - mod_len - 1);
    } else {
        stg_beside b = look_beside(w, rest, mod_len);
        row.state = b == STG_BESIDE_PRESENT  ? STG_SUMMARY_STATE_PRESENT
                    : b == STG_BESIDE_ABSENT ? STG_SUMMARY_STATE_ABSENT
                                             : STG_SUMMARY_STATE_UNKNOWN;
        f = stg_report_add(r, STG_REMOTE_CODE, off,
                           "auto_map %s: trust_remote_code=True imports the module named here "
                           "(its .py file) and runs it; that file is %s",
                           what, beside_text(b));
        stg_report_set_global(r, f, rest, mod_len, rest + mod_len + 1, rest_len - mod_len - 1);
    }
    stg_report_add_row(r, &row); /* the auto_map entries of `inspect` */
}

static bool next_event(auto_map_walk *w, stg_json_event *ev)
{
    if (w->stop) {
        return false;
    }
    stg_json_type t = stg_json_next(&w->json, ev);
    if (t == STG_JSON_ERROR) {
        w->stop = true;
        return false;
    }
    if (t == STG_JSON_END) {
        w->ended = true;
        w->end = ev->offset;
        w->stop = true;
        return false;
    }
    return true;
}

/* A value of the auto_map that is not a reference string nor a list of them (or null). */
static void judge_other(auto_map_walk *w, const char *key, size_t key_len, const stg_json_event *ev)
{
    stg_report_add(w->ctx->report, STG_REMOTE_CODE_INVALID, (uint64_t)ev->offset,
                   "auto_map %s is neither a reference string nor a list of them",
                   safe_auto_class(key, key_len));
    if (ev->type == STG_JSON_OBJECT_BEGIN || ev->type == STG_JSON_ARRAY_BEGIN) {
        if (stg_json_skip(&w->json, ev, NULL, NULL) == STG_JSON_ERROR) {
            w->stop = true;
        }
    }
}

/* A tokenizer's [slow, fast] list: each string a reference, null allowed. */
static void judge_list(auto_map_walk *w, const char *key, size_t key_len)
{
    stg_json_event ev;
    while (next_event(w, &ev) && ev.type != STG_JSON_ARRAY_END) {
        if (ev.type == STG_JSON_STRING) {
            judge_ref(w, key, key_len, &ev);
        } else if (ev.type != STG_JSON_NULL) {
            judge_other(w, key, key_len, &ev);
        }
    }
}

/* After the auto_map's OBJECT_BEGIN: every member up to its end. */
static void judge_auto_map(auto_map_walk *w)
{
    stg_json_event ev;
    while (next_event(w, &ev) && ev.type != STG_JSON_OBJECT_END) {
        if (ev.type != STG_JSON_KEY) {
            continue; /* DUPLICATE: each repeat's value is judged where it stands */
        }
        size_t key_len;
        char *key = decoded(w, &ev, &key_len);
        if (key == NULL || !next_event(w, &ev)) {
            return;
        }
        if (ev.type == STG_JSON_STRING) {
            judge_ref(w, key, key_len, &ev);
        } else if (ev.type == STG_JSON_ARRAY_BEGIN) {
            judge_list(w, key, key_len);
        } else if (ev.type != STG_JSON_NULL) {
            judge_other(w, key, key_len, &ev);
        }
    }
}

/* The walk stopped on a parse error: a limit leaves the config undecided (reported); other
 * errors mean the bytes are no JSON (false). */
static bool json_failed(auto_map_walk *w)
{
    stg_json_parser *p = &w->json;
    uint64_t off = (uint64_t)p->error_offset;
    if (p->error == STG_JSON_E_DEPTH) {
        stg_report_limit(w->ctx->report, off, "max_json_depth", w->ctx->lim->max_json_depth);
        return true;
    }
    if (p->error == STG_JSON_E_MEMORY) {
        stg_report_limit(w->ctx->report, off, "max_memory", (uint64_t)w->arena.cap);
        w->ctx->report->out_of_memory = w->ctx->report->out_of_memory || w->arena.out_of_memory;
        return true;
    }
    return false;
}

bool stg_remote_code_check(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    auto_map_walk w;
    memset(&w, 0, sizeof w);
    w.ctx = ctx;
    w.outer = ctx->report;
    w.buf = buf;
    stg_arena_init(&w.arena, walk_budget(ctx->lim, len));
    stg_json_init(&w.json, buf, len, ctx->lim->max_json_depth, &w.arena);
    /* findings go to a scratch report: bytes that turn out to be no JSON report nothing */
    stg_report *scratch = stg_report_new(ctx->lim);
    stg_report *into = ctx->report;
    if (scratch == NULL) {
        stg_report_oom(ctx->report);
        stg_arena_release(&w.arena);
        return true;
    }
    ctx->report = scratch;
    stg_json_event ev;
    while (next_event(&w, &ev)) {
        if (ev.type == STG_JSON_KEY && ev.depth == 1) {
            size_t n;
            char *key = decoded(&w, &ev, &n);
            if (key == NULL || !next_event(&w, &ev)) {
                break;
            }
            if (n == 8 && memcmp(key, "auto_map", 8) == 0) {
                if (ev.type == STG_JSON_OBJECT_BEGIN) {
                    judge_auto_map(&w);
                    continue;
                }
                judge_other(&w, NULL, 0, &ev);
            } else if (ev.type == STG_JSON_OBJECT_BEGIN || ev.type == STG_JSON_ARRAY_BEGIN) {
                w.stop = stg_json_skip(&w.json, &ev, NULL, NULL) == STG_JSON_ERROR;
            }
        }
    }
    bool is_json = w.json.error == STG_JSON_E_NONE || json_failed(&w);
    if (is_json && w.ended && !stg_json_rest_is_ws(buf, len, w.end)) {
        is_json = false; /* bytes after the value: Python's json.loads refuses it */
    }
    ctx->report = into;
    if (is_json) {
        stg_report_merge(into, scratch, NULL, STG_NO_OFFSET);
    }
    stg_report_free(scratch);
    stg_json_release(&w.json);
    stg_arena_release(&w.arena);
    return is_json;
}
