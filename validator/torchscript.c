/* TorchScript's resolution of pickle globals (validator/torchscript.h). Read from torch's C++
 * sources (pytorch/pytorch at 02c99a2957a963d6e72cd0ce993dd72500c8e664):
 * - torch/csrc/jit/serialization/unpickler.cpp, Unpickler::readGlobal: module
 *   "torch.jit._pickle" is served by the unpickler itself for build_tensor_from_id,
 *   restore_type_tag, build_intlist, build_tensorlist, build_doublelist and build_boollist
 *   (anything else: "Unknown pickler class id"); a module outside its fixed branches goes to the
 *   type resolver, and without one the load fails ("Unpickler found unknown type").
 * - torch/csrc/jit/serialization/import.cpp (ScriptModuleDeserializer): the resolver of
 *   torch.jit.load is the archive's SourceImporter, whose source loader is
 *   findSourceInArchiveFromQualifier over the "code/" prefix;
 *   torch/csrc/jit/serialization/import_export_helpers.cpp (at
 *   0c678301357ded1cde76167cbab8b71866aea98e, lines 16-32): a class's qualifier (its dotted
 *   module) names the record "code/" + qualifier with '.' turned into '/' + ".py"; no such
 *   record, no source, and the load fails ("Unknown type name", as torch 1.13 says for these
 *   archives: tests/torchscript/script_libtorch.sh). No Python module is imported on this
 *   route. */
#include "torchscript.h"

#include <string.h>

#include "../parser/sort.h"

static const char *const builtins[] = {
    "build_tensor_from_id", "restore_type_tag", "build_intlist",
    "build_tensorlist",     "build_doublelist", "build_boollist",
};

static int source_cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n > 0 ? memcmp(a, b, n) : 0;
    if (c != 0) {
        return c;
    }
    return al < bl ? -1 : al > bl ? 1 : 0;
}

static int source_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const stg_ts_source *x = a, *y = b;
    return source_cmp_bytes(x->name, x->len, y->name, y->len);
}

void stg_torchscript_sort(stg_torchscript *ts)
{
    stg_sort(ts->sources, ts->count, sizeof ts->sources[0], source_cmp, NULL);
}

static bool has_source(const stg_torchscript *ts, const char *path, size_t len)
{
    size_t lo = 0, hi = ts->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = source_cmp_bytes(ts->sources[mid].name, ts->sources[mid].len, path, len);
        if (c == 0) {
            return true;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return false;
}

static bool ends_with(const char *s, size_t n, const char *tail)
{
    size_t t = strlen(tail);
    return n >= t && memcmp(s + n - t, tail, t) == 0;
}

bool stg_torchscript_reads(const char *member_name)
{
    size_t cut = strnlen(member_name, STG_TS_SOURCE_NAME_MAX);
    const char *slash = memchr(member_name, '/', cut);
    const char *rest = slash != NULL ? slash + 1 : member_name;
    size_t n = cut - (size_t)(rest - member_name);
    static const char *const whole[] = {"data.pkl", "constants.pkl", "bytecode.pkl"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        if (strlen(whole[i]) == n && memcmp(rest, whole[i], n) == 0) {
            return true;
        }
    }
    return n > 5 && memcmp(rest, "code/", 5) == 0 && ends_with(rest, n, ".debug_pkl");
}

/* A dotted name whose parts are all non-empty and hold no '/' nor NUL (a record path made of it
 * names the file the qualifier says, nothing above or beside code/). */
static bool clean_dotted(const char *s, size_t n, bool dots_allowed)
{
    if (n == 0 || s[0] == '.' || s[n - 1] == '.') {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' || s[i] == '\0' || s[i] == '\\' || (s[i] == '.' && !dots_allowed) ||
            (s[i] == '.' && s[i + 1] == '.')) {
            return false;
        }
    }
    return true;
}

stg_ts_global stg_torchscript_classify(const stg_torchscript *ts, const char *module,
                                       size_t module_len, const char *name, size_t name_len,
                                       char *source, size_t *source_len)
{
    static const char jit_pickle[] = "torch.jit._pickle";
    if (module_len == sizeof jit_pickle - 1 && memcmp(module, jit_pickle, module_len) == 0) {
        for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
            if (strlen(builtins[i]) == name_len && memcmp(builtins[i], name, name_len) == 0) {
                return STG_TS_BUILTIN;
            }
        }
        return STG_TS_OTHER; /* the C++ unpickler refuses it: the policy's hard block stands */
    }
    static const char root[] = "__torch__";
    static const char bound[] = "__torch__.torch.classes";
    size_t rl = sizeof root - 1, bl = sizeof bound - 1;
    bool rooted = module_len >= rl && memcmp(module, root, rl) == 0 &&
                  (module_len == rl || module[rl] == '.');
    /* __torch__.torch.classes.*: C++ classes registered in the process (torchbind), not from
     * code/: not modelled, the policy judges them. */
    bool bound_class = module_len >= bl && memcmp(module, bound, bl) == 0 &&
                       (module_len == bl || module[bl] == '.');
    if (!rooted || bound_class || !clean_dotted(module, module_len, true) ||
        !clean_dotted(name, name_len, false) || module_len + 3 > STG_TS_SOURCE_NAME_MAX) {
        return STG_TS_OTHER;
    }
    char path[STG_TS_SOURCE_NAME_MAX + 1];
    for (size_t i = 0; i < module_len; i++) {
        path[i] = module[i] == '.' ? '/' : module[i];
    }
    memcpy(path + module_len, ".py", 3);
    size_t len = module_len + 3;
    path[len] = '\0';
    if (source != NULL) {
        memcpy(source, path, len + 1);
        *source_len = len;
    }
    return ts != NULL && has_source(ts, path, len) ? STG_TS_CLASS : STG_TS_CLASS_UNDEFINED;
}
