/* Glue between the pickle walker (parser/pickle) and the policy (pickle_policy): every global
 * becomes a `globals` entry and, unless allowed, a finding; calls of nested loaders get their
 * bytes scanned; the framing of legacy torch files, joblib arrays and .npy files decides which
 * bytes after a STOP are data (skipped by their declared sizes) and which must be walked. */
#include "pickle_scan.h"

#include <stdio.h>
#include <string.h>

#include "../parser/cursor.h"
#include "../parser/hash.h"
#include "../parser/map.h"
#include "../parser/mem.h"
#include "../parser/npy.h"
#include "../parser/npy_reduce.h"
#include "../parser/pickle.h"
#include "../parser/torch.h"
#include "pickle_policy.h"
#include "torchscript.h"

/* Tag bits the walker keeps on global values (set from exact pairs, never from prefixes). */
#define TAG_NESTED_LOADER 0x01u
#define TAG_CODECS_ENCODE 0x02u
#define TAG_JOBLIB_WRAPPER 0x04u
#define TAG_NUMPY_DTYPE 0x08u
#define TAG_TORCH_STORAGE 0x10u
#define TAG_JOBLIB_SIDE 0x20u      /* NDArrayWrapper and ZNDArrayWrapper: name a side file */
#define TAG_JOBLIB_ZSIDE 0x40u     /* ZNDArrayWrapper: the side file is a ZF stream */
#define TAG_GETATTR 0x80u          /* builtins.getattr: judged by its calls (Python 3.11 enums) */
#define TAG_REVIEWED_ENUM 0x10000u /* an enum class on the reviewed list (docs/policy.md) */
#define TAG_RECONSTRUCTOR 0x20000u /* copyreg._reconstructor: how protocols 0 and 1 build objects */
#define TAG_BUILTIN_OBJECT 0x40000u
#define TAG_NUMPY_SCALAR 0x80000u /* numpy.core.multiarray.scalar(dtype, bytes): numpy scalars */
#define TAG_ELSIZE_SHIFT 8        /* element size of a torch storage class, bits 8..15 */

/* Resync attempts after bytes that do not parse (a later pickle may hide behind junk). */
#define STG_PICKLE_RESYNC_MAX 16
/* Distinct globals remembered per scan (each is reported once, at its first offset); past
 * this, globals are still classified and reported as findings but no longer listed. */
#define STG_SEEN_MAX 65536u
/* Distinct nested-loader payloads scanned per scan; a payload repeated through the memo is
 * scanned once. Longest storage key looked at (torch keys are short decimal strings). */
#define STG_NESTED_MAX 256u
#define STG_KEY_MAX 4096u

static const struct {
    const char *module, *name;
    uint32_t tag;
} special[] = {
    {"pickle", "loads", TAG_NESTED_LOADER},
    {"pickle", "load", TAG_NESTED_LOADER},
    {"pickle", "_loads", TAG_NESTED_LOADER},
    {"pickle", "_load", TAG_NESTED_LOADER},
    {"_pickle", "loads", TAG_NESTED_LOADER},
    {"_pickle", "load", TAG_NESTED_LOADER},
    {"cPickle", "loads", TAG_NESTED_LOADER},
    {"dill", "loads", TAG_NESTED_LOADER},
    {"cloudpickle", "loads", TAG_NESTED_LOADER},
    {"torch", "load", TAG_NESTED_LOADER},
    {"torch.serialization", "load", TAG_NESTED_LOADER},
    {"torch.storage", "_load_from_bytes", TAG_NESTED_LOADER},
    {"numpy", "load", TAG_NESTED_LOADER},
    {"numpy.lib.npyio", "load", TAG_NESTED_LOADER},
    {"joblib", "load", TAG_NESTED_LOADER},
    {"joblib.numpy_pickle", "load", TAG_NESTED_LOADER},
    {"marshal", "loads", TAG_NESTED_LOADER},
    {"_codecs", "encode", TAG_CODECS_ENCODE},
    {"codecs", "encode", TAG_CODECS_ENCODE},
    {"joblib.numpy_pickle", "NumpyArrayWrapper", TAG_JOBLIB_WRAPPER},
    {"joblib.numpy_pickle", "NDArrayWrapper", TAG_JOBLIB_SIDE},
    {"joblib.numpy_pickle_compat", "NDArrayWrapper", TAG_JOBLIB_SIDE},
    {"joblib.numpy_pickle", "ZNDArrayWrapper", TAG_JOBLIB_SIDE | TAG_JOBLIB_ZSIDE},
    {"joblib.numpy_pickle_compat", "ZNDArrayWrapper", TAG_JOBLIB_SIDE | TAG_JOBLIB_ZSIDE},
    {"numpy", "dtype", TAG_NUMPY_DTYPE},
    {"numpy.core.multiarray", "scalar", TAG_NUMPY_SCALAR},
    {"numpy._core.multiarray", "scalar", TAG_NUMPY_SCALAR},
    {"copyreg", "_reconstructor", TAG_RECONSTRUCTOR},
    {"copy_reg", "_reconstructor", TAG_RECONSTRUCTOR},
    {"builtins", "object", TAG_BUILTIN_OBJECT},
    {"__builtin__", "object", TAG_BUILTIN_OBJECT},
    {"builtins", "getattr", TAG_GETATTR},
    {"__builtin__", "getattr", TAG_GETATTR},
    /* the reviewed enum classes of a Trainer's training_args.bin (pickle_policy.c) */
    {"transformers.training_args", "OptimizerNames", TAG_REVIEWED_ENUM},
    {"transformers.trainer_utils", "IntervalStrategy", TAG_REVIEWED_ENUM},
    {"transformers.trainer_utils", "EvaluationStrategy", TAG_REVIEWED_ENUM},
    {"transformers.trainer_utils", "SaveStrategy", TAG_REVIEWED_ENUM},
    {"transformers.trainer_utils", "HubStrategy", TAG_REVIEWED_ENUM},
    {"transformers.trainer_utils", "SchedulerType", TAG_REVIEWED_ENUM},
    {"transformers.trainer_utils", "FSDPOption", TAG_REVIEWED_ENUM},
    {"transformers.debug_utils", "DebugOption", TAG_REVIEWED_ENUM},
};

static const struct {
    const char *name;
    uint32_t elsize;
} storage_sizes[] = {
    {"ByteStorage", 1},     {"CharStorage", 1},         {"BoolStorage", 1},
    {"QUInt8Storage", 1},   {"QInt8Storage", 1},        {"QUInt4x2Storage", 1},
    {"QUInt2x4Storage", 1}, {"UntypedStorage", 1},      {"ShortStorage", 2},
    {"HalfStorage", 2},     {"BFloat16Storage", 2},     {"IntStorage", 4},
    {"FloatStorage", 4},    {"QInt32Storage", 4},       {"LongStorage", 8},
    {"DoubleStorage", 8},   {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16},
};

static bool eq(const uint8_t *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static uint32_t special_tag(const uint8_t *m, size_t ml, const uint8_t *n, size_t nl)
{
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        if (eq(m, ml, special[i].module) && eq(n, nl, special[i].name)) {
            return special[i].tag;
        }
    }
    if (eq(m, ml, "torch") || eq(m, ml, "torch.cuda") || eq(m, ml, "torch.storage")) {
        for (size_t i = 0; i < sizeof storage_sizes / sizeof storage_sizes[0]; i++) {
            if (eq(n, nl, storage_sizes[i].name)) {
                return TAG_TORCH_STORAGE | (storage_sizes[i].elsize << TAG_ELSIZE_SHIFT);
            }
        }
    }
    return 0;
}

/* One distinct global seen in this scan. */
struct seen_global {
    uint64_t hash;
    size_t at; /* offset of module bytes in names; name follows */
    size_t ml, nl;
    uint32_t tag;
};

/* Legacy torch: a storage key and its element size. */
struct storage_key {
    uint64_t hash;
    size_t at, len; /* bytes in keybuf */
    uint32_t elsize;
    bool used;
};

typedef struct stg_pscan {
    stg_check_ctx *ctx; /* NULL: sniffing, nothing reported */
    const uint8_t *buf;
    size_t len;
    uint64_t base;
    stg_pickle_flavor flavor;
    /* The route (docs/pickle.md, "Routes"): joblib_route: joblib.load's NumpyUnpickler reads
     * these bytes, so the array after a NumpyArrayWrapper's BUILD is data; pickle_reading: the
     * second reading of such a file, as pickle.load reads it (one pickle, those arrays walked
     * as opcodes). first_skip: offset of the first byte the joblib reading did not walk. */
    bool joblib_route, pickle_reading, abandoned;
    uint64_t first_skip;
    uint64_t last_wrapper; /* id (argument pool index) of the last wrapper built, + 1 */
    unsigned pickle_index; /* 0-based index of the pickle being walked */
    bool failed_alloc;
    /* distinct globals: a map of struct seen_global, strings in `names` */
    stg_map seen;
    char *names;
    size_t names_len, names_cap;
    /* legacy torch: storages from the data pickle's persistent ids, keys in file order */
    stg_map skeys; /* of struct storage_key */
    size_t *order; /* slots of skeys named by the key list, in order (SIZE_MAX: none) */
    size_t order_count, order_cap;
    char *keybuf;
    size_t keybuf_len, keybuf_cap;
    stg_pickle_walker *w;
    /* nested payloads already scanned: (offset, length) of their source values */
    uint64_t nested_seen[STG_NESTED_MAX][2];
    uint32_t nested_count;
    /* numpy.dtype objects given a state by BUILD in the current pickle, by the pool index of
     * their constructor arguments (memo copies share it): the state's element size (-1: none
     * or not understood) and whether its flags (state[7]) set NPY_ITEM_HASOBJECT or could not
     * be read */
    struct dtype_state {
        uint64_t args;
        int64_t elsize;
        bool flags_known, object_flag;
        uint8_t byteorder;      /* state[1] when a one-character str, else 0 */
        uint64_t pool_at_build; /* the walker's pool size after its (last) BUILD */
    } dtypes[64];
    uint32_t dtype_count;
    /* builtins.getattr / __builtin__.getattr, hard-blocked, judged only after the walk: benign
     * when every stack copy of it (GLOBAL, GET, DUP) was the callable of a REDUCE whose
     * arguments are (reviewed enum class, 'MEMBER_NAME'), Python 3.11's enum pickling */
    struct deferred_getattr {
        bool used;
        uint64_t off;       /* first GLOBAL (absolute) */
        const char *reason; /* the policy's */
    } getattr_def[2];       /* [0] builtins, [1] __builtin__ */
    uint64_t getattr_copies, getattr_enum_calls;
    bool getattr_other; /* a call of getattr of any other shape */
    bool acted;         /* a global (or an unresolvable one) was reached: a reader imports it */
    bool globals_capped;
    uint64_t seed; /* keys the tables' hash (the check context's, or the default) */
    /* A key found no slot within the probe ceiling (keys crafted against a known seed):
     * seen_capped in the globals-seen table, which is harmless (that global is then reported
     * at each occurrence instead of once: more findings, never fewer); skeys_capped in the
     * storage-key table, which fails closed: skip_storages reports limit_exceeded
     * (hash_probe_ceiling) and frames no storage. */
    bool seen_capped, skeys_capped;
} stg_pscan;

/* Both tables (parser/map.h): keyed by the scan's seed; past the probe ceiling a key is neither
 * found nor added (what that costs: seen_capped, skeys_capped), never unbounded work. */
static void tables_init(stg_pscan *s)
{
    stg_map_init(&s->seen, sizeof(struct seen_global), s->seed, STG_SEEN_MAX * 2);
    stg_map_init(&s->skeys, sizeof(struct storage_key), s->seed, 1u << 30);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return true;
    }
    size_t ncap = *cap == 0 ? 64 : *cap;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) {
            return false;
        }
        ncap *= 2;
    }
    void *np = stg_mem_realloc(*p, ncap * elem);
    if (np == NULL) {
        return false;
    }
    *p = np;
    *cap = ncap;
    return true;
}

/* ---------------------------------------------------------------- reporting */

static void set_member(stg_pscan *s, stg_finding *f)
{
    stg_ctx_set_member(s->ctx, f);
}

/* report_malformed and report_limit: only run() and the hooks of a scan with a ctx call them. */
static void report_malformed(stg_pscan *s, uint64_t off, const char *what, const char *why)
{
    stg_finding *f = stg_report_add(s->ctx->report, STG_PICKLE_MALFORMED, s->base + off, "%s: %s",
                                    what, why);
    set_member(s, f);
}

static void report_limit(stg_pscan *s, uint64_t off, const char *limit, uint64_t value)
{
    stg_finding *f = stg_report_add(s->ctx->report, STG_LIMIT_EXCEEDED, s->base + off,
                                    "the pickle walk hit the limit %s (%llu)", limit,
                                    (unsigned long long)value);
    stg_report_set_limit(s->ctx->report, f, limit);
    set_member(s, f);
}

struct name_key {
    const uint8_t *m, *n;
    size_t ml, nl;
};

static bool same_global(const void *slot, const void *key, void *ctx)
{
    const stg_pscan *s = ctx;
    const struct seen_global *g = slot;
    const struct name_key *k = key;
    return g->ml == k->ml && g->nl == k->nl &&
           (k->ml + k->nl == 0 || (memcmp(s->names + g->at, k->m, k->ml) == 0 &&
                                   memcmp(s->names + g->at + k->ml, k->n, k->nl) == 0));
}

/* Looks module.name up among the globals already seen; adds it when new. *fresh says which.
 * NULL (fresh) when the table is full or the key finds no slot: every occurrence is reported
 * then. */
static struct seen_global *seen_lookup(stg_pscan *s, const uint8_t *m, size_t ml, const uint8_t *n,
                                       size_t nl, bool *fresh)
{
    *fresh = true;
    uint64_t dropped = s->seen.dropped;
    stg_map_status st = stg_map_reserve(&s->seen);
    s->seen_capped |= s->seen.dropped != dropped;
    if (st == STG_MAP_FULL) {
        return NULL; /* past the cap every occurrence is reported */
    }
    if (st == STG_MAP_NOMEM) {
        s->failed_alloc = true;
        return NULL;
    }
    uint64_t h = stg_map_hash(&s->seen, m, ml, n, nl);
    struct name_key key = {m, n, ml, nl};
    void *slot;
    st = stg_map_find(&s->seen, h, same_global, &key, s, &slot);
    if (st == STG_MAP_CEILING) {
        s->seen_capped = true; /* harmless: reported as fresh (seen_capped) */
        return NULL;
    }
    if (st == STG_MAP_FOUND) {
        *fresh = false;
        return slot;
    }
    if (!grow((void **)&s->names, &s->names_cap, s->names_len + ml + nl, 1)) {
        s->failed_alloc = true;
        return NULL;
    }
    struct seen_global *g = slot;
    stg_map_claim(&s->seen, g, h);
    g->at = s->names_len;
    g->ml = ml;
    g->nl = nl;
    g->tag = 0;
    if (ml > 0) {
        memcpy(s->names + s->names_len, m, ml);
    }
    if (nl > 0) {
        memcpy(s->names + s->names_len + ml, n, nl);
    }
    s->names_len += ml + nl;
    return g;
}

/* ---------------------------------------------------------------- getattr on enum classes */

/* Python 3.11 pickles an enum member as REDUCE(builtins.getattr, (EnumClass, 'NAME')). That one
 * shape is benign for the reviewed enum classes (docs/policy.md): getattr on a class with a name
 * of capitals, digits and '_' (no leading '_', so no dunder or sunder, and no method of Enum,
 * str or type, which are lower case) returns a member or raises AttributeError. Every other use
 * of getattr keeps it dangerous: the decision waits for the end of the walk. */
static void getattr_defer(stg_pscan *s, bool py2, uint64_t off, const char *reason)
{
    struct deferred_getattr *d = &s->getattr_def[py2 ? 1 : 0];
    s->getattr_copies++;
    if (!d->used) {
        d->used = true;
        d->off = s->base + off;
        d->reason = reason;
    }
}

static void on_copy_global(void *vctx, const stg_pv *v, uint64_t off)
{
    stg_pscan *s = vctx;
    (void)off;
    s->getattr_copies += (v->n & TAG_GETATTR) != 0 ? 1 : 0;
}

static bool member_name(const uint8_t *p, size_t n)
{
    if (n == 0 || n > 256 || p[0] < 'A' || p[0] > 'Z') {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        bool ok = (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_';
        if (!ok) {
            return false;
        }
    }
    return true;
}

static void getattr_call(stg_pscan *s, stg_pickle_walker *w, uint8_t op, const stg_pv *args)
{
    stg_pv cls, name;
    const uint8_t *p;
    size_t n;
    bool enum_member = op == 'R' && args->kind == STG_PV_TUPLE && args->n == 2 &&
                       stg_pickle_tuple_at(w, args, 0, &cls) && cls.kind == STG_PV_GLOBAL &&
                       (cls.flags & STG_PV_F_UNRESOLVED) == 0 && (cls.n & TAG_REVIEWED_ENUM) != 0 &&
                       stg_pickle_tuple_at(w, args, 1, &name) && name.kind == STG_PV_STR &&
                       (name.flags & STG_PV_F_HUGE) == 0 && name.n <= 256 &&
                       stg_pickle_bytes(w, &name, &p, &n) && member_name(p, n);
    if (enum_member) {
        s->getattr_enum_calls++;
    } else {
        s->getattr_other = true;
    }
}

/* After the walk: the deferred getattr globals become globals entries and findings. */
static void getattr_finish(stg_pscan *s)
{
    bool benign = !s->getattr_other && s->getattr_copies == s->getattr_enum_calls;
    stg_report *r = s->ctx->report;
    for (int i = 0; i < 2; i++) {
        const struct deferred_getattr *d = &s->getattr_def[i];
        if (!d->used) {
            continue;
        }
        const char *m = i == 0 ? "builtins" : "__builtin__";
        stg_report_add_global(r, m, strlen(m), "getattr", 7, d->off, stg_ctx_member_path(s->ctx),
                              benign ? STG_GLOBAL_BENIGN : STG_GLOBAL_DANGEROUS);
        stg_finding *f;
        if (benign) {
            f = stg_report_add(r, STG_PICKLE_GLOBAL_BENIGN, d->off,
                               "getattr only looks up members of reviewed enum classes by name "
                               "(Python 3.11 enum pickling): only a full unpickler loads it");
        } else {
            f = stg_report_add(r, STG_PICKLE_GLOBAL_DANGEROUS, d->off, "a dangerous global (%s)",
                               d->reason);
        }
        stg_report_set_global(r, f, m, strlen(m), "getattr", 7);
        set_member(s, f);
    }
}

/* A global of a TorchScript archive's own pickle, as TorchScript's C++ unpickler resolves it
 * (validator/torchscript.h): a helper it builds itself or a class from the archive's code/ is
 * no Python import (torchscript_builtin, torchscript_class: info; listed as allowed), a
 * __torch__ class without its source is torchscript_class_undefined. true when it was judged
 * so; false leaves it to the policy. A caller's denylist still wins. */
static bool torchscript_global(stg_pscan *s, const uint8_t *m, size_t ml, const uint8_t *n,
                               size_t nl, uint64_t off, bool listed, stg_policy_verdict v)
{
    const stg_torchscript *ts = s->ctx->torchscript;
    if (ts == NULL || s->ctx->depth != ts->member_depth || s->ctx->member == NULL ||
        !stg_torchscript_reads(s->ctx->member->name) ||
        strcmp(v.reason, "caller's denylist") == 0) {
        return false;
    }
    char source[STG_TS_SOURCE_NAME_MAX + 1];
    size_t source_len = 0;
    stg_ts_global k = stg_torchscript_classify(ts, (const char *)m, ml, (const char *)n, nl, source,
                                               &source_len);
    if (k == STG_TS_OTHER) {
        return false;
    }
    stg_report *r = s->ctx->report;
    bool bad = k == STG_TS_CLASS_UNDEFINED;
    if (listed) {
        stg_report_add_global(r, (const char *)m, ml, (const char *)n, nl, s->base + off,
                              stg_ctx_member_path(s->ctx),
                              bad ? STG_GLOBAL_DANGEROUS : STG_GLOBAL_ALLOWED);
    }
    stg_finding *f;
    if (k == STG_TS_BUILTIN) {
        f = stg_report_add(r, STG_TORCHSCRIPT_BUILTIN, s->base + off,
                           "a helper TorchScript's unpickler builds itself (a typed list, a "
                           "tensor by index or a type tag): no Python import");
    } else if (!bad) {
        f = stg_report_add(r, STG_TORCHSCRIPT_CLASS, s->base + off,
                           "a class TorchScript defines from the archive's code/%.*s: no Python "
                           "import",
                           (int)source_len, source);
    } else {
        f = stg_report_add(r, STG_TORCHSCRIPT_CLASS_UNDEFINED, s->base + off,
                           "a TorchScript class whose source code/%.*s the archive does not hold: "
                           "torch.jit.load cannot define it, and no TorchScript writer leaves it "
                           "out",
                           (int)source_len, source);
    }
    if (f != NULL) {
        stg_report_set_global(r, f, (const char *)m, ml, (const char *)n, nl);
        set_member(s, f);
    }
    return true;
}

static uint32_t on_global(void *vctx, const uint8_t *m, size_t ml, const uint8_t *n, size_t nl,
                          uint64_t off)
{
    ((stg_pscan *)vctx)->acted = true; /* find_class is called: the import happens */
    stg_pscan *s = vctx;
    bool fresh = true;
    struct seen_global *g = seen_lookup(s, m, ml, n, nl, &fresh);
    if (!fresh) {
        s->getattr_copies += (g->tag & TAG_GETATTR) != 0 ? 1 : 0;
        return g->tag;
    }
    uint32_t tag = special_tag(m, ml, n, nl);
    if (g != NULL) {
        g->tag = tag;
    }
    if (s->ctx == NULL) {
        return tag;
    }
    stg_policy_verdict v = stg_policy_classify(s->ctx->policy, (const char *)m, ml, (const char *)n,
                                               nl);
    if (torchscript_global(s, m, ml, n, nl, off, g != NULL, v)) {
        return tag;
    }
    if ((tag & TAG_GETATTR) != 0 && v.klass == STG_GLOBAL_DANGEROUS) {
        getattr_defer(s, m[0] == '_', off, v.reason);
        return tag;
    }
    stg_report *r = s->ctx->report;
    if (g != NULL) {
        stg_report_add_global(r, (const char *)m, ml, (const char *)n, nl, s->base + off,
                              stg_ctx_member_path(s->ctx), v.klass);
    } else if (!s->globals_capped && !s->failed_alloc) {
        s->globals_capped = true;
        stg_finding *lf = stg_report_add(r, STG_LIMIT_EXCEEDED, s->base + off,
                                         "more than %u distinct globals: later ones are "
                                         "classified and reported but not listed",
                                         STG_SEEN_MAX);
        stg_report_set_limit(r, lf, "max_findings");
        set_member(s, lf);
    }
    stg_finding *f = NULL;
    switch (v.klass) {
    case STG_GLOBAL_ALLOWED: break;
    case STG_GLOBAL_BENIGN:
        f = stg_report_add(r, STG_PICKLE_GLOBAL_BENIGN, s->base + off,
                           "a reviewed framework class (%s): only a full unpickler loads it",
                           v.reason);
        break;
    case STG_GLOBAL_DANGEROUS:
        f = stg_report_add(r, STG_PICKLE_GLOBAL_DANGEROUS, s->base + off, "a dangerous global (%s)",
                           v.reason);
        break;
    case STG_GLOBAL_UNKNOWN:
        f = stg_report_add(r, STG_PICKLE_GLOBAL_UNKNOWN, s->base + off,
                           "a global on no allowlist (%s): default deny", v.reason);
        break;
    }
    if (f != NULL) {
        stg_report_set_global(r, f, (const char *)m, ml, (const char *)n, nl);
        set_member(s, f);
    }
    return tag;
}

static void on_unresolved(void *vctx, uint64_t off, const char *why)
{
    stg_pscan *s = vctx;
    if (s->ctx == NULL) {
        return;
    }
    stg_finding *f = stg_report_add(s->ctx->report, STG_PICKLE_GLOBAL_UNRESOLVED, s->base + off,
                                    "a global that cannot be resolved statically: %s", why);
    set_member(s, f);
}

static void on_mutate(void *vctx, uint8_t op, const stg_pv *target, uint64_t off)
{
    stg_pscan *s = vctx;
    (void)target;
    if (s->ctx == NULL) {
        return;
    }
    stg_finding *f = stg_report_add(s->ctx->report, STG_PICKLE_BUILD_ON_GLOBAL, s->base + off,
                                    "%s changes a module, function or class obtained from a "
                                    "global (the global at offset %llu)",
                                    stg_pickle_opcode_name(op),
                                    (unsigned long long)(s->base + target->a));
    set_member(s, f);
}

static void on_frame(void *vctx, uint64_t off)
{
    stg_pscan *s = vctx;
    if (s->ctx == NULL) {
        return;
    }
    stg_finding *f = stg_report_add(s->ctx->report, STG_PICKLE_FRAME_DIVERGENCE, s->base + off,
                                    "an opcode crosses a FRAME boundary: the C and Python "
                                    "unpicklers would read different opcodes");
    set_member(s, f);
}

static void on_string_limit(void *vctx, uint64_t off, uint64_t length)
{
    stg_pscan *s = vctx;
    (void)length;
    if (s->ctx != NULL) {
        report_limit(s, off, "max_pickle_string", s->w->lim.max_string); /* the limit in force */
    }
}

static void on_memo_sparse(void *vctx, uint64_t off, uint64_t index)
{
    stg_pscan *s = vctx;
    if (s->ctx == NULL) {
        return;
    }
    stg_finding *f = stg_report_add(
        s->ctx->report, STG_PICKLE_MEMO_SPARSE, s->base + off,
        "memo index %llu: no pickler writes it, and the C unpickler (pickle.load, torch.load) "
        "allocates 16 bytes per index up to it while the Python one (joblib) does not",
        (unsigned long long)index);
    set_member(s, f);
}

/* Bytes of a nested loader's argument: a str/bytes literal, _codecs.encode(str, ...) as
 * protocol 2 writes bytes, or one wrapping call such as io.BytesIO(b"..."). Text is passed as
 * its UTF-8 bytes except for _codecs.encode, which the pickler uses with latin-1. *copy owns
 * the result when decoding was needed. */
static bool nested_bytes(stg_pickle_walker *w, const stg_pv *args, const uint8_t **out, size_t *len,
                         uint8_t **copy)
{
    stg_pv a0;
    *copy = NULL;
    if (!stg_pickle_tuple_at(w, args, 0, &a0)) {
        return false;
    }
    if (a0.kind == STG_PV_STR || a0.kind == STG_PV_BYTES) {
        return stg_pickle_bytes(w, &a0, out, len);
    }
    if (a0.kind != STG_PV_CALL) {
        return false;
    }
    stg_pv inner_args, s0;
    if (!stg_pickle_call_args(w, &a0, &inner_args) ||
        !stg_pickle_tuple_at(w, &inner_args, 0, &s0)) {
        return false;
    }
    const uint8_t *p;
    size_t n;
    if (!stg_pickle_bytes(w, &s0, &p, &n)) {
        return false;
    }
    if ((a0.n & TAG_CODECS_ENCODE) == 0 || s0.kind != STG_PV_STR) {
        *out = p;
        *len = n;
        return true;
    }
    /* latin-1 of the UTF-8 text: code points above 255 make encode() fail. */
    uint8_t *c = stg_mem_alloc(n == 0 ? 1 : n);
    if (c == NULL) {
        return false;
    }
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) {
            c[o++] = p[i++];
        } else if ((p[i] & 0xE0) == 0xC0 && i + 1 < n && p[i] <= 0xC3) {
            c[o++] = (uint8_t)(((p[i] & 0x03u) << 6) | (p[i + 1] & 0x3Fu));
            i += 2;
        } else {
            stg_mem_free(c);
            return false;
        }
    }
    *copy = c;
    *out = c;
    *len = o;
    return true;
}

static void on_call(void *vctx, stg_pickle_walker *w, uint8_t op, const stg_pv *callable,
                    const stg_pv *args, uint64_t off)
{
    stg_pscan *s = vctx;
    if (s->ctx != NULL && callable->kind == STG_PV_GLOBAL && (callable->n & TAG_GETATTR) != 0) {
        getattr_call(s, w, op, args);
        return;
    }
    if (s->ctx == NULL || callable->kind != STG_PV_GLOBAL ||
        (callable->n & TAG_NESTED_LOADER) == 0) {
        return;
    }
    /* The same payload (the same input bytes, reached again through the memo) is decoded and
     * scanned once; past STG_NESTED_MAX distinct payloads the rest are flagged, not scanned. */
    bool repeat = false;
    stg_pv a0;
    if (stg_pickle_tuple_at(w, args, 0, &a0)) {
        uint64_t key0 = a0.kind == STG_PV_CALL ? a0.a | (1ull << 63) : a0.a, key1 = a0.n;
        for (uint32_t i = 0; i < s->nested_count && !repeat; i++) {
            repeat = s->nested_seen[i][0] == key0 && s->nested_seen[i][1] == key1;
        }
        if (!repeat && s->nested_count < STG_NESTED_MAX) {
            s->nested_seen[s->nested_count][0] = key0;
            s->nested_seen[s->nested_count][1] = key1;
            s->nested_count++;
        } else {
            repeat = true;
        }
    }
    const uint8_t *p = NULL;
    size_t n = 0;
    uint8_t *copy = NULL;
    bool have = !repeat && nested_bytes(w, args, &p, &n, &copy);
    bool scan_it = have;
    stg_finding *f;
    if (have) {
        f = stg_report_add(s->ctx->report, STG_PICKLE_NESTED, s->base + off,
                           "%s calls a nested loader; the %zu bytes it is given are scanned as "
                           "member nested@%llu",
                           stg_pickle_opcode_name(op), n, (unsigned long long)(s->base + off));
    } else if (repeat) {
        f = stg_report_add(s->ctx->report, STG_PICKLE_NESTED, s->base + off,
                           "%s calls a nested loader on a payload already scanned (or past %u "
                           "payloads)",
                           stg_pickle_opcode_name(op), STG_NESTED_MAX);
    } else {
        f = stg_report_add(s->ctx->report, STG_PICKLE_NESTED, s->base + off,
                           "%s calls a nested loader on an argument that is not a literal",
                           stg_pickle_opcode_name(op));
    }
    set_member(s, f);
    if (scan_it) {
        char member[48];
        snprintf(member, sizeof member, "nested@%llu", (unsigned long long)(s->base + off));
        /* Bytes handed over to a nested loader get what this context has. */
        (void)stg_ctx_scan(s->ctx, p, n, member, s->base + off, STG_MEMBER_ARCHIVE,
                           s->ctx->lim->max_inflate_bytes);
    }
    stg_mem_free(copy);
}

/* NPY_ITEM_HASOBJECT (also NPY_ITEM_REFCOUNT) in a dtype's flags. */
#define NPY_ITEM_HASOBJECT 0x01

/* BUILD(numpy.dtype(...), state): the element size (state[5]) and flags (state[7]; a version 4
 * state, of datetime types, has their metadata after them) that numpy's __setstate__ reads;
 * wrapper_dtype says when numpy uses them. */
static void record_dtype_state(stg_pscan *s, stg_pickle_walker *w, const stg_pv *dtype,
                               const stg_pv *state)
{
    stg_pv el, fl;
    int64_t elsize = -1, flags = 0;
    bool tuple = state->kind == STG_PV_TUPLE && state->n != STG_PV_UNTRACKED;
    if (!tuple || state->n < 6 || !stg_pickle_tuple_at(w, state, 5, &el) ||
        !stg_pickle_int(&el, &elsize)) {
        elsize = -1;
    }
    /* flags that cannot be read leave the dtype not understood */
    bool flags_known = tuple && (state->n == 8 || state->n == 9) && /* 9: datetime metadata */
                       stg_pickle_tuple_at(w, state, 7, &fl) && fl.kind == STG_PV_INT &&
                       stg_pickle_int(&fl, &flags);
    struct dtype_state *d = NULL;
    for (uint32_t i = 0; i < s->dtype_count && d == NULL; i++) {
        d = s->dtypes[i].args == dtype->a ? &s->dtypes[i] : NULL;
    }
    if (d == NULL) {
        if (s->dtype_count == sizeof s->dtypes / sizeof s->dtypes[0]) {
            /* Table full: forget the oldest. A forgotten dtype is only "not understood"
             * later (pickle_skip_unresolved). */
            memmove(&s->dtypes[0], &s->dtypes[1], sizeof s->dtypes - sizeof s->dtypes[0]);
            s->dtype_count--;
        }
        d = &s->dtypes[s->dtype_count++];
        memset(d, 0, sizeof *d);
        d->args = dtype->a;
    }
    d->elsize = elsize;
    d->flags_known = flags_known;
    d->object_flag = flags_known && (flags & NPY_ITEM_HASOBJECT) != 0;
    stg_pv order;
    const uint8_t *op;
    size_t ol;
    d->byteorder = tuple && stg_pickle_tuple_at(w, state, 1, &order) && order.kind == STG_PV_STR &&
                           stg_pickle_bytes(w, &order, &op, &ol) && ol == 1
                       ? op[0]
                       : 0;
    d->pool_at_build = w->npool;
}

static const struct dtype_state *dtype_state_of(const stg_pscan *s, const stg_pv *dtype)
{
    for (uint32_t i = 0; i < s->dtype_count; i++) {
        if (s->dtypes[i].args == dtype->a) {
            return &s->dtypes[i];
        }
    }
    return NULL;
}

/* joblib < 0.10: BUILD of an NDArrayWrapper (ZNDArrayWrapper) makes joblib's unpickler call
 * its read(), which opens os.path.join(dirname(joblib file), self.filename) with
 * np.load(allow_pickle=True) (a ZF stream of raw array bytes). self.filename is what the
 * instance holds after BUILD: the slot state's "filename" (set last), else the dict state's,
 * else the constructor's first argument (REDUCE/INST/OBJ run __init__; for NEWOBJ taking it
 * only fails closed). The name is recorded for loader/ (joblib_side.c), which resolves and
 * scans the file; names that leave the folder are joblib_side_file_escape here, and a name
 * the walk cannot know is joblib_side_file_unresolved. */
static bool side_name_of(stg_pickle_walker *w, const stg_pv *target, const stg_pv *state,
                         stg_pv *name, bool *known)
{
    stg_pv dict = *state, slots, args;
    bool pair = state->kind == STG_PV_TUPLE && state->n == 2;
    *known = true;
    if (pair) {
        if (!stg_pickle_tuple_at(w, state, 0, &dict) || !stg_pickle_tuple_at(w, state, 1, &slots)) {
            *known = false;
            return false;
        }
        if (slots.kind == STG_PV_DICT && slots.n == STG_PV_UNTRACKED) {
            *known = false;
            return false;
        }
        if (slots.kind == STG_PV_DICT && stg_pickle_dict_get(w, &slots, "filename", name)) {
            return true;
        }
    }
    if (dict.kind == STG_PV_DICT && dict.n != STG_PV_UNTRACKED) {
        if (stg_pickle_dict_get(w, &dict, "filename", name)) {
            return true;
        }
    } else if (dict.kind != STG_PV_NONE) {
        *known = false; /* a state the walk did not keep (or that setstate would refuse) */
        return false;
    }
    if (!stg_pickle_call_args(w, target, &args) || args.kind != STG_PV_TUPLE ||
        args.n == STG_PV_UNTRACKED) {
        *known = false; /* arguments the walk did not keep */
        return false;
    }
    /* no filename at all: read() raises AttributeError, nothing is opened */
    return stg_pickle_tuple_at(w, &args, 0, name);
}

/* true when joblib would open a path outside the joblib file's folder for this name: absolute,
 * empty, a ".." component, or a NUL (os.path refuses it: the load fails, but the name is
 * not one of the folder's files either). */
static bool side_name_escapes(const uint8_t *p, size_t n)
{
    if (n == 0 || p[0] == '/' || memchr(p, '\0', n) != NULL) {
        return true;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && p[j] != '/') {
            j++;
        }
        if (j - i == 2 && p[i] == '.' && p[i + 1] == '.') {
            return true;
        }
        i = j + 1;
    }
    return false;
}

static void record_side_file(stg_pscan *s, stg_pickle_walker *w, const stg_pv *target,
                             const stg_pv *state, uint64_t after)
{
    /* Only joblib.load calls read(): on the file itself or on the stream it decompresses. A
     * pickle inside an archive member, a nested payload or a side file is read by a plain
     * unpickler (torch.load, pickle.loads, np.load), which opens no side file. */
    const stg_member_link *m = s->ctx->member;
    if (m != NULL && (m->up != NULL || strcmp(m->name, "(decompressed)") != 0)) {
        return;
    }
    stg_report *r = s->ctx->report;
    stg_pv name;
    bool known;
    const uint8_t *p;
    size_t n;
    bool z = (target->n & TAG_JOBLIB_ZSIDE) != 0;
    if (!side_name_of(w, target, state, &name, &known)) {
        if (!known) {
            stg_finding *f = stg_report_add(
                r, STG_JOBLIB_SIDE_FILE_UNRESOLVED, s->base + after - 1,
                "a joblib %s's state cannot be read statically: the side file joblib.load "
                "would open is unknown, not scanned",
                z ? "ZNDArrayWrapper" : "NDArrayWrapper");
            set_member(s, f);
        }
        return;
    }
    if ((name.kind != STG_PV_STR && name.kind != STG_PV_BYTES) ||
        (name.flags & STG_PV_F_HUGE) != 0 || !stg_pickle_bytes(w, &name, &p, &n)) {
        if (name.kind == STG_PV_STR || name.kind == STG_PV_BYTES) {
            stg_finding *f = stg_report_add(r, STG_JOBLIB_SIDE_FILE_UNRESOLVED, s->base + name.a,
                                            "a joblib side file name that cannot be decoded: not "
                                            "scanned");
            set_member(s, f);
        }
        return; /* not a path: os.path.join raises, nothing is opened */
    }
    uint64_t at = s->base + name.a;
    if (side_name_escapes(p, n)) {
        stg_finding *f = stg_report_add(
            r, STG_JOBLIB_SIDE_FILE_ESCAPE, at,
            "a joblib side file named outside the joblib file's folder (absolute, empty, '..' or "
            "NUL): joblib.load would open it with np.load(allow_pickle=True); not opened");
        set_member(s, f);
        return;
    }
    if (!stg_report_add_side_file(r, p, n, at, stg_ctx_member_path(s->ctx), z)) {
        stg_finding *f = stg_report_add(r, STG_LIMIT_EXCEEDED, at,
                                        "more than %u joblib side files named: later ones are "
                                        "not scanned",
                                        STG_SIDE_FILES_CEILING);
        stg_report_set_limit(r, f, "joblib_side_files");
        set_member(s, f);
    }
}

/* ---------------------------------------------------------------- joblib arrays */

/* The attributes of a NumpyArrayWrapper that joblib's NumpyArrayWrapper.read_array reads
 * (joblib/numpy_pickle.py) once BUILD set its state: present or not, and their values. */
struct wrapper_attrs {
    bool have_dtype, have_shape, have_align;
    stg_pv dtype, shape, align;
};

static void skip_unresolved(stg_pscan *s, uint64_t off, const char *why)
{
    s->abandoned = true;
    if (s->ctx == NULL) {
        return;
    }
    if (s->w != NULL && s->w->pool_full) {
        /* The state may be one the walker would read had it room to hold it (a dump of
         * millions of small tuples ahead of its arrays): a limit, which raising lifts. */
        stg_finding *lf = stg_report_add(
            s->ctx->report, STG_LIMIT_EXCEEDED, s->base + off,
            "the walker's value pool (max_pickle_stack elements) was full before this "
            "NumpyArrayWrapper's BUILD, so its state is not held and the array joblib.load "
            "reads after it cannot be framed: not walked further (raise max_pickle_stack)");
        stg_report_set_limit(s->ctx->report, lf, "max_pickle_stack");
        set_member(s, lf);
        return;
    }
    stg_finding *f = stg_report_add(s->ctx->report, STG_PICKLE_SKIP_UNRESOLVED, s->base + off,
                                    "joblib.load reads an array after this NumpyArrayWrapper's "
                                    "BUILD, but %s: where it goes on reading opcodes is unknown",
                                    why);
    set_member(s, f);
}

/* Python's truth value for the values the walker can tell (pickle.py load_build: `if state:`);
 * *known false for anything else. */
static bool pv_truthy(const stg_pv *v, bool *known)
{
    *known = true;
    switch ((stg_pv_kind)v->kind) {
    case STG_PV_NONE: return false;
    case STG_PV_BOOL:
    case STG_PV_INT: return v->a != 0;
    case STG_PV_STR:
    case STG_PV_BYTES: return v->n != 0;
    case STG_PV_TUPLE:
    case STG_PV_DICT:
        if (v->n == STG_PV_UNTRACKED) {
            *known = false;
            return true;
        }
        return v->n != 0;
    case STG_PV_BIGINT:
    case STG_PV_FLOAT:
    case STG_PV_LIST:
    case STG_PV_SET:
    case STG_PV_GLOBAL:
    case STG_PV_CALL:
    case STG_PV_PERSISTENT:
    case STG_PV_OTHER: break;
    }
    *known = false;
    return true;
}

/* Sets the attributes a state dict (or slot-state dict) gives: for the one the walk holds
 * exactly (tracked, no other copy changed behind it), each str key sets its attribute, the
 * last one winning. false: the state is not understood. */
static bool wrapper_apply(stg_pickle_walker *w, const stg_pv *d, struct wrapper_attrs *a)
{
    bool known;
    if (!pv_truthy(d, &known) && known) {
        return true; /* `if state:` is false: nothing is set */
    }
    if (d->kind != STG_PV_DICT || d->n == STG_PV_UNTRACKED || !stg_pickle_dict_current(w, d)) {
        return false;
    }
    stg_pv v;
    if (stg_pickle_dict_get(w, d, "dtype", &v)) {
        a->have_dtype = true;
        a->dtype = v;
    }
    if (stg_pickle_dict_get(w, d, "shape", &v)) {
        a->have_shape = true;
        a->shape = v;
    }
    if (stg_pickle_dict_get(w, d, "numpy_array_alignment_bytes", &v)) {
        a->have_align = true;
        a->align = v;
    }
    return true;
}

/* What the wrapper object holds before BUILD: nothing when made by NEWOBJ (cls.__new__) or
 * by copyreg._reconstructor(cls, object, None) (protocols 0 and 1); what __init__ stores when
 * made by REDUCE, INST or OBJ: (subclass, shape, order, dtype[, allow_mmap[, alignment=16]]).
 * *wrapper false: the BUILD target is no wrapper. Returns false when it is not understood. */
static bool wrapper_origin(stg_pickle_walker *w, const stg_pv *target, bool *wrapper,
                           struct wrapper_attrs *a)
{
    stg_pv args, cls, base, st;
    memset(a, 0, sizeof *a);
    *wrapper = (target->n & TAG_JOBLIB_WRAPPER) != 0;
    bool got_args = stg_pickle_call_args(w, target, &args) && args.kind == STG_PV_TUPLE &&
                    args.n != STG_PV_UNTRACKED;
    if ((target->n & TAG_RECONSTRUCTOR) != 0) {
        if (!got_args || args.n != 3 || !stg_pickle_tuple_at(w, &args, 0, &cls)) {
            *wrapper = true; /* cannot tell which class: it may be one */
            return false;
        }
        *wrapper = cls.kind == STG_PV_GLOBAL && (cls.n & TAG_JOBLIB_WRAPPER) != 0;
        return !*wrapper || (stg_pickle_tuple_at(w, &args, 1, &base) &&
                             base.kind == STG_PV_GLOBAL && (base.n & TAG_BUILTIN_OBJECT) != 0 &&
                             stg_pickle_tuple_at(w, &args, 2, &st) && st.kind == STG_PV_NONE);
    }
    if (!*wrapper || (target->flags & STG_PV_F_NO_INIT) != 0) {
        return true;
    }
    if (!got_args || args.n < 4 || args.n > 6) {
        return false;
    }
    a->have_dtype = a->have_shape = a->have_align = true;
    (void)stg_pickle_tuple_at(w, &args, 1, &a->shape);
    (void)stg_pickle_tuple_at(w, &args, 3, &a->dtype);
    a->align = (stg_pv){.kind = STG_PV_INT, .a = 16}; /* NUMPY_ARRAY_ALIGNMENT_BYTES */
    if (args.n == 6) {
        (void)stg_pickle_tuple_at(w, &args, 5, &a->align);
    }
    return true;
}

/* The dtype's item size and whether it holds objects (dtype.hasobject), as numpy 1.24 has them
 * after numpy.dtype(typestr, align, copy) and the BUILD state's __setstate__ (the oracle:
 * tests/differential/gen_joblib_routes.py). Without copy, a fixed type and an unsized flexible one ('S0')
 * are numpy's shared instances, and __setstate__ leaves them as they are; every other dtype
 * takes the state's flags (NPY_ITEM_HASOBJECT decides hasobject, whatever the type: an 'O8'
 * state with flags 0 holds no objects) and, for a flexible type, its element size (one that
 * differs from the type string's is not understood here). */
static bool wrapper_dtype(const stg_pscan *s, stg_pickle_walker *w, const stg_pv *dtype,
                          uint64_t *itemsize, bool *object)
{
    stg_pv dargs, typestr, copy = {.kind = STG_PV_BOOL};
    const uint8_t *tp;
    size_t tl;
    int64_t copy_v = 0;
    if (dtype->kind != STG_PV_CALL || (dtype->n & TAG_NUMPY_DTYPE) == 0 ||
        (dtype->flags & STG_PV_F_UNRESOLVED) != 0 || !stg_pickle_call_args(w, dtype, &dargs) ||
        dargs.kind != STG_PV_TUPLE || dargs.n == STG_PV_UNTRACKED || dargs.n > 3 ||
        !stg_pickle_tuple_at(w, &dargs, 0, &typestr) || typestr.kind != STG_PV_STR ||
        typestr.n > 32 || !stg_pickle_bytes(w, &typestr, &tp, &tl)) {
        return false;
    }
    if (dargs.n == 3 && (!stg_pickle_tuple_at(w, &dargs, 2, &copy) ||
                         (copy.kind != STG_PV_BOOL && copy.kind != STG_PV_INT))) {
        return false;
    }
    (void)stg_pickle_int(&copy, &copy_v);
    stg_npy_dtype dt = {0};
    unsigned unit = 0;
    bool fixed = stg_npy_reduce_fixed(tp, tl, itemsize, object) && !*object;
    if (!fixed) { /* and object types: their size ('O4' is 8 bytes) is the dtype reading's */
        if (!stg_npy_typestr(tp, tl, &dt, &unit)) {
            return false;
        }
        *itemsize = dt.itemsize;
        *object = dt.has_object;
        fixed = unit == 0;
    }
    const struct dtype_state *ds = dtype_state_of(s, dtype);
    bool shared = copy_v == 0 && (fixed || *itemsize == 0);
    if (ds == NULL || shared) {
        return fixed || ds != NULL || !dt.unnamed_void; /* a void without its state: fields? */
    }
    if (!ds->flags_known) {
        return false; /* numpy's __setstate__ would refuse it, or it is no version 3/4 state */
    }
    /* an object type whose state clears the flag: numpy makes an object array of raw bytes
     * (forged object pointers); never understood */
    bool forged = *object && !ds->object_flag;
    *object = ds->object_flag;
    return !forged && (fixed || (ds->elsize >= 0 && (uint64_t)ds->elsize == *itemsize));
}

/* A shape entry numpy pickled as numpy.core.multiarray.scalar(dtype, bytes) (numpy.int64(3)):
 * read_array's numpy.int64(x) is the integer the bytes hold in the dtype's byte order. Only an
 * integer reduce string ('i1'-'i8', 'u1'-'u8') built as numpy writes it is understood: with
 * copy and a version 3 state (its byte order '<' or '>'; any for one byte) whose last BUILD
 * came before the scalar was made (numpy reads the dtype then: a BUILD after it, through the
 * memo, changes what the walk would read but not the scalar), given exactly itemsize bytes. A
 * dtype numpy leaves native (no state, or its shared instance) is the loading machine's order:
 * not known here. */
static bool numpy_scalar_dim(const stg_pscan *s, stg_pickle_walker *w, const stg_pv *dim,
                             int64_t *out)
{
    stg_pv args, dtype, data, dargs, typestr, copy;
    const uint8_t *tp, *bp;
    size_t tl, bl;
    uint64_t size, value = 0;
    bool object;
    int64_t copy_v = 0;
    if (dim->kind != STG_PV_CALL || (dim->n & TAG_NUMPY_SCALAR) == 0 ||
        (dim->flags & (STG_PV_F_UNRESOLVED | STG_PV_F_NO_INIT)) != 0 || dim->a == STG_PV_NO_POOL ||
        !stg_pickle_call_args(w, dim, &args) || args.kind != STG_PV_TUPLE || args.n != 2 ||
        !stg_pickle_tuple_at(w, &args, 0, &dtype) || !stg_pickle_tuple_at(w, &args, 1, &data) ||
        data.kind != STG_PV_BYTES || (data.flags & STG_PV_F_HUGE) != 0 ||
        dtype.kind != STG_PV_CALL || (dtype.n & TAG_NUMPY_DTYPE) == 0 ||
        (dtype.flags & STG_PV_F_UNRESOLVED) != 0 || !stg_pickle_call_args(w, &dtype, &dargs) ||
        dargs.kind != STG_PV_TUPLE || dargs.n == STG_PV_UNTRACKED || dargs.n != 3 ||
        !stg_pickle_tuple_at(w, &dargs, 0, &typestr) || typestr.kind != STG_PV_STR ||
        !stg_pickle_bytes(w, &typestr, &tp, &tl) || tl < 2 || (tp[0] != 'i' && tp[0] != 'u') ||
        !stg_npy_reduce_fixed(tp, tl, &size, &object) || object || size > 8 ||
        !stg_pickle_tuple_at(w, &dargs, 2, &copy) || !stg_pickle_int(&copy, &copy_v) ||
        !stg_pickle_bytes(w, &data, &bp, &bl) || bl != size) {
        return false;
    }
    /* without copy, numpy's shared instance ignores the state */
    const struct dtype_state *ds = copy_v != 0 ? dtype_state_of(s, &dtype) : NULL;
    if (ds != NULL && (ds->pool_at_build > dim->a || !ds->flags_known || ds->object_flag)) {
        return false;
    }
    if (size > 1 && (ds == NULL || (ds->byteorder != '<' && ds->byteorder != '>'))) {
        return false;
    }
    bool big = size > 1 && ds->byteorder == '>';
    for (size_t i = 0; i < size; i++) {
        value |= (uint64_t)bp[big ? size - 1 - i : i] << (8 * i);
    }
    if (tp[0] == 'i' && size < 8 && (value >> (8 * size - 1)) != 0) {
        value |= ~(uint64_t)0 << (8 * size); /* sign extension */
    }
    if (tp[0] == 'u' && value > (uint64_t)INT64_MAX) {
        return false; /* numpy.int64 of a uint64 past its range */
    }
    *out = (int64_t)value;
    return true;
}

/* Element count as read_array computes it: the product of numpy.int64 of each dimension (1
 * for none). Understood: a tracked tuple, or a list the walk holds exactly (its content as
 * APPEND(S) built it, no other copy changed: numpy takes a list as a shape too), of
 * non-negative ints (Python ints and bools, numpy integer scalars read by numpy_scalar_dim);
 * not more than 16 dimensions, or an overflow. */
static bool wrapper_count(const stg_pscan *s, stg_pickle_walker *w, const stg_pv *shape,
                          uint64_t *count)
{
    stg_pv dim;
    int64_t d;
    bool list = shape->kind == STG_PV_LIST && stg_pickle_list_current(w, shape);
    if ((shape->kind != STG_PV_TUPLE && !list) || shape->n == STG_PV_UNTRACKED) {
        return false;
    }
    *count = 1;
    for (uint32_t i = 0; i < shape->n; i++) {
        if (list ? !stg_pickle_list_at(w, shape, i, &dim)
                 : !stg_pickle_tuple_at(w, shape, i, &dim)) {
            return false;
        }
        bool python_int = (dim.kind == STG_PV_INT || dim.kind == STG_PV_BOOL) &&
                          stg_pickle_int(&dim, &d);
        if ((!python_int && !numpy_scalar_dim(s, w, &dim, &d)) || d < 0 ||
            stg_mul_u64(*count, (uint64_t)d, count)) {
            return false;
        }
    }
    return *count <= (uint64_t)INT64_MAX;
}

/* BUILD of a NumpyArrayWrapper on joblib's route: the attributes after BUILD (pickle.py's
 * load_build: a dict state, or (dict, slot dict), applied in that order) decide the array
 * joblib reads right after the opcode (read_array): a pickle when dtype.hasobject, else an
 * optional padding-length byte plus padding (numpy_array_alignment_bytes not None), then
 * count x itemsize bytes. Anything not understood ends the walk with pickle_skip_unresolved. */
static stg_pickle_action wrapper_build(stg_pscan *s, stg_pickle_walker *w, const stg_pv *target,
                                       const stg_pv *state, uint64_t after, uint64_t *skip)
{
    struct wrapper_attrs a;
    bool wrapper, origin_known = wrapper_origin(w, target, &wrapper, &a);
    if (!wrapper) {
        return STG_PICKLE_CONTINUE;
    }
    uint64_t at = after - 1; /* the BUILD opcode */
    if (!origin_known) {
        skip_unresolved(s, at, "the wrapper's constructor arguments cannot be read");
        return STG_PICKLE_ABANDON;
    }
    if (target->a == STG_PV_NO_POOL || target->a < s->last_wrapper) {
        skip_unresolved(s, at, "this wrapper may have been built before (its attributes merge)");
        return STG_PICKLE_ABANDON;
    }
    s->last_wrapper = target->a + 1;
    stg_pv dict = *state, slots = {.kind = STG_PV_NONE};
    if (state->kind == STG_PV_TUPLE && state->n == 2) {
        (void)stg_pickle_tuple_at(w, state, 0, &dict);
        (void)stg_pickle_tuple_at(w, state, 1, &slots);
    } else if (state->kind == STG_PV_TUPLE && state->n == STG_PV_UNTRACKED) {
        skip_unresolved(s, at, "its state is a tuple the walk does not keep");
        return STG_PICKLE_ABANDON;
    }
    if (!wrapper_apply(w, &dict, &a) || !wrapper_apply(w, &slots, &a)) {
        skip_unresolved(s, at, "its state is not a dict the walk holds exactly");
        return STG_PICKLE_ABANDON;
    }
    uint64_t itemsize = 0, count = 0, bytes;
    bool object = false;
    if (!a.have_dtype || !wrapper_dtype(s, w, &a.dtype, &itemsize, &object)) {
        skip_unresolved(s, at, "its dtype is not one numpy's dtype() reading here understands");
        return STG_PICKLE_ABANDON;
    }
    if (!a.have_shape || !wrapper_count(s, w, &a.shape, &count)) {
        skip_unresolved(s, at, "its shape is not a tuple or list of ints the walk holds");
        return STG_PICKLE_ABANDON;
    }
    if (object) {
        return STG_PICKLE_INLINE; /* read_array: if dtype.hasobject: pickle.load */
    }
    if (stg_mul_u64(count, itemsize, &bytes)) {
        skip_unresolved(s, at, "its byte count passes 2^64");
        return STG_PICKLE_ABANDON;
    }
    if (a.have_align && a.align.kind != STG_PV_NONE) {
        if (after >= s->len) {
            *skip = UINT64_MAX; /* the walker reports the truncation */
            return STG_PICKLE_SKIP;
        }
        bytes += 1u + (uint64_t)s->buf[after]; /* < 2^64: bytes <= len of a buffer */
    }
    *skip = bytes;
    return STG_PICKLE_SKIP;
}

/* BUILD hook: dtype states and joblib side files are recorded on every route; the array after
 * a NumpyArrayWrapper is data only on joblib's route (s->joblib_route), where joblib's
 * NumpyUnpickler.load_build reads it. Everywhere else (torch.load, pickle.load, numpy.load of
 * an object array, joblib's ZF reader) the BUILD only sets attributes and the bytes after it
 * are opcodes: they are walked. */
static stg_pickle_action on_build(void *vctx, stg_pickle_walker *w, const stg_pv *target,
                                  const stg_pv *state, uint64_t after, uint64_t *skip)
{
    stg_pscan *s = vctx;
    if (target->kind != STG_PV_CALL) {
        return STG_PICKLE_CONTINUE;
    }
    if ((target->n & TAG_NUMPY_DTYPE) != 0) {
        record_dtype_state(s, w, target, state);
        return STG_PICKLE_CONTINUE;
    }
    if ((target->n & TAG_JOBLIB_SIDE) != 0) {
        if (s->ctx != NULL && !s->pickle_reading) {
            record_side_file(s, w, target, state, after);
        }
        return STG_PICKLE_CONTINUE;
    }
    /* An inline level is the plain pickle.load read_array makes of an object array: no
     * NumpyUnpickler reads arrays there. */
    if (!s->joblib_route || w->level > 0 ||
        (target->n & (TAG_JOBLIB_WRAPPER | TAG_RECONSTRUCTOR)) == 0) {
        return STG_PICKLE_CONTINUE;
    }
    stg_pickle_action act = wrapper_build(s, w, target, state, after, skip);
    if (act != STG_PICKLE_CONTINUE && after - 1 < s->first_skip) {
        s->first_skip = after - 1;
    }
    return act;
}

/* ---------------------------------------------------------------- legacy torch storages */

static bool same_skey(const void *slot, const void *key, void *ctx)
{
    const stg_pscan *s = ctx;
    const struct storage_key *e = slot;
    const struct name_key *k = key;
    return e->len == k->ml && (k->ml == 0 || memcmp(s->keybuf + e->at, k->m, k->ml) == 0);
}

/* A storage key's entry; with add, created when new. NULL when absent, or when the key finds
 * no slot within the probe ceiling (skeys_capped: then no storage is framed). */
static struct storage_key *skey_find(stg_pscan *s, const uint8_t *k, size_t kl, bool add)
{
    if (add) {
        uint64_t dropped = s->skeys.dropped;
        stg_map_status st = stg_map_reserve(&s->skeys);
        s->skeys_capped |= s->skeys.dropped != dropped;
        if (st == STG_MAP_NOMEM) {
            s->failed_alloc = true;
        }
        if (st != STG_MAP_OK) {
            return NULL;
        }
    }
    uint64_t h = stg_map_hash(&s->skeys, k, kl, NULL, 0);
    struct name_key key = {k, NULL, kl, 0};
    void *slot;
    stg_map_status st = stg_map_find(&s->skeys, h, same_skey, &key, s, &slot);
    if (st == STG_MAP_CEILING) {
        s->skeys_capped = true; /* fails closed in skip_storages */
        return NULL;
    }
    if (st == STG_MAP_FOUND) {
        return slot;
    }
    if (slot == NULL) {
        return NULL; /* an empty table */
    }
    if (!add || !grow((void **)&s->keybuf, &s->keybuf_cap, s->keybuf_len + kl + 1, 1)) {
        return NULL;
    }
    struct storage_key *e = slot;
    stg_map_claim(&s->skeys, e, h);
    e->at = s->keybuf_len;
    e->len = kl;
    e->elsize = 0;
    if (kl > 0) {
        memcpy(s->keybuf + s->keybuf_len, k, kl);
    }
    s->keybuf_len += kl;
    return e;
}

/* Persistent ids of the data pickle: ('storage', StorageClass, key, location, numel, ...). */
static void on_persid(void *vctx, stg_pickle_walker *w, const stg_pv *pid, uint64_t off)
{
    stg_pscan *s = vctx;
    (void)off;
    if (s->flavor != STG_PICKLE_TORCH_LEGACY || s->pickle_index != 3) {
        return;
    }
    stg_pv tag, cls, key;
    const uint8_t *p;
    size_t n;
    if (!stg_pickle_tuple_at(w, pid, 0, &tag) || tag.n > 16 || !stg_pickle_bytes(w, &tag, &p, &n) ||
        !eq(p, n, "storage") || !stg_pickle_tuple_at(w, pid, 1, &cls) ||
        !stg_pickle_tuple_at(w, pid, 2, &key) || key.n > STG_KEY_MAX ||
        !stg_pickle_bytes(w, &key, &p, &n)) {
        return;
    }
    struct storage_key *e = skey_find(s, p, n, true);
    if (e != NULL && cls.kind == STG_PV_GLOBAL && (cls.n & TAG_TORCH_STORAGE) != 0) {
        e->elsize = (cls.n >> TAG_ELSIZE_SHIFT) & 0xFFu;
    }
}

/* Items of the storage-key list pickle, in order. */
static void on_append(void *vctx, stg_pickle_walker *w, const stg_pv *item)
{
    stg_pscan *s = vctx;
    const uint8_t *p;
    size_t n;
    if (s->flavor != STG_PICKLE_TORCH_LEGACY || s->pickle_index != 4) {
        return;
    }
    if (item->n > STG_KEY_MAX || !stg_pickle_bytes(w, item, &p, &n)) {
        n = SIZE_MAX; /* not a (short) string: remembered as a key no storage has */
        p = NULL;
    }
    struct storage_key *e = p != NULL ? skey_find(s, p, n, false) : NULL;
    if (!grow((void **)&s->order, &s->order_cap, s->order_count + 1, sizeof(size_t))) {
        s->failed_alloc = true;
        return;
    }
    /* slot numbers stay valid: the data pickle (which adds keys) was walked before this one */
    s->order[s->order_count++] = e != NULL ? (size_t)((uint8_t *)e - s->skeys.slots) / sizeof *e
                                           : SIZE_MAX;
}

/* Skips the storages that follow the key list: each an 8-byte element count then count x
 * element size bytes (torch's _write_file with save_size). */
static bool skip_storages(stg_pscan *s, size_t *pos)
{
    if (s->skeys_capped) {
        /* A key was dropped: the list cannot be matched to the declarations. */
        stg_finding *f = stg_report_add(
            s->ctx->report, STG_LIMIT_EXCEEDED, s->base + *pos,
            "legacy torch storage: the storage-key table found no slot within the probe "
            "ceiling (%u) for a key (keys crafted to collide): the storages are not framed",
            (unsigned)STG_HASH_PROBE_CEILING);
        stg_report_set_limit(s->ctx->report, f, "hash_probe_ceiling");
        set_member(s, f);
        return false;
    }
    stg_cursor c = stg_cur_make(s->buf, s->len);
    (void)stg_cur_seek(&c, *pos); /* cannot fail: *pos is where a walk ended, <= len */
    for (size_t i = 0; i < s->order_count; i++) {
        size_t rec = c.pos;
        struct storage_key *e = s->order[i] == SIZE_MAX
                                    ? NULL
                                    : (struct storage_key *)(void *)s->skeys.slots + s->order[i];
        if (e == NULL || e->elsize == 0) {
            report_malformed(s, rec, "legacy torch storage",
                             "the key list names a storage the data pickle did not declare");
            return false;
        }
        uint64_t bytes;
        if (stg_torch_storage_record(&c, e->elsize, &bytes) != STG_OK) {
            report_malformed(s, rec, "legacy torch storage",
                             "a storage runs past the end of the file");
            return false;
        }
        if (e->used) {
            report_malformed(s, rec, "legacy torch storage", "a storage key is listed twice");
            return false;
        }
        e->used = true;
        (void)stg_cur_skip(&c, (size_t)bytes); /* fits: the record said so */
    }
    *pos = c.pos;
    return true;
}

/* ---------------------------------------------------------------- driver */

static void limits_from(const stg_limits *lim, stg_pickle_limits *pl)
{
    stg_limits def;
    if (lim == NULL) {
        stg_limits_default(&def);
        lim = &def;
    }
    pl->max_stack = lim->max_pickle_stack;
    pl->max_memo = lim->max_pickle_memo;
    pl->max_string = lim->max_pickle_string;
    pl->max_inline = lim->max_nesting;
}

static const stg_pickle_hooks scan_hooks = {
    .ctx = NULL, /* set per scan: hooks are copied */
    .global = on_global,
    .unresolved = on_unresolved,
    .call = on_call,
    .mutate_global = on_mutate,
    .build = on_build,
    .persid = on_persid,
    .append = on_append,
    .frame_divergence = on_frame,
    .string_limit = on_string_limit,
    .memo_sparse = on_memo_sparse,
    .copy_global = on_copy_global,
};

static void pscan_free(stg_pscan *s)
{
    stg_map_free(&s->seen);
    stg_mem_free(s->names);
    stg_map_free(&s->skeys);
    stg_mem_free(s->order);
    stg_mem_free(s->keybuf);
}

/* Next offset after `from` where a protocol 2+ pickle could start (PROTO 2..5). */
static size_t resync_point(const uint8_t *buf, size_t len, size_t from)
{
    for (size_t i = from; i + 1 < len; i++) {
        const uint8_t *p = memchr(buf + i, 0x80, len - 1 - i);
        if (p == NULL) {
            return len;
        }
        i = (size_t)(p - buf);
        if (buf[i + 1] >= 2 && buf[i + 1] <= 5) {
            return i;
        }
    }
    return len;
}

/* Walks every pickle of buf; returns true when all of it was accounted for. *first_stop gets
 * the end of the first pickle (0 when it did not reach STOP). */
static bool run(stg_pscan *s, const stg_limits *lim, size_t *first_stop)
{
    stg_pickle_limits pl;
    limits_from(lim, &pl);
    pl.hash_seed = s->seed;
    stg_pickle_hooks hooks = scan_hooks;
    hooks.ctx = s;
    stg_pickle_walker w;
    stg_pickle_init(&w, &pl, &hooks);
    s->w = &w;
    *first_stop = 0;
    size_t pos = 0;
    bool clean = true, resyncing = false;
    unsigned resyncs = 0;
    if (s->len == 0) {
        report_malformed(s, 0, "pickle", "no data");
        clean = false;
    }
    while (pos < s->len) {
        size_t end = 0;
        s->dtype_count = 0; /* pool indexes start again with every walk */
        s->last_wrapper = 0;
        stg_pickle_status st = stg_pickle_walk(&w, s->buf, s->len, pos, &end);
        if (s->pickle_reading) {
            /* pickle.load reads one pickle; where it fails it raises, having run what came
             * before (which this reading reported) */
            clean = st == STG_PW_STOP;
            if (st == STG_PW_LIMIT) {
                report_limit(s, w.err_offset, w.err_limit, w.err_value);
            }
            s->failed_alloc |= st == STG_PW_NOMEM;
            break;
        }
        if (st == STG_PW_STOP) {
            if (s->pickle_index == 0 && !resyncing) {
                *first_stop = end;
            }
            resyncing = false;
            pos = end;
            if (s->flavor == STG_PICKLE_TORCH_LEGACY && s->pickle_index == 4 &&
                !skip_storages(s, &pos)) {
                clean = false;
                break;
            }
            s->pickle_index++;
            continue;
        }
        clean = false;
        if (st == STG_PW_LIMIT) {
            report_limit(s, w.err_offset, w.err_limit, w.err_value);
            break;
        }
        if (st == STG_PW_NOMEM) {
            s->failed_alloc = true;
            break;
        }
        if (s->abandoned) {
            break; /* pickle_skip_unresolved said why: the loader's next byte is unknown */
        }
        if (!resyncing) {
            char where[64];
            snprintf(where, sizeof where, "%s at offset %llu",
                     s->pickle_index == 0 ? "pickle" : "bytes after a STOP",
                     (unsigned long long)(s->base + pos));
            report_malformed(s, w.err_offset, where, w.err_msg);
        }
        /* A later pickle may follow the junk: look for one, a bounded number of times. */
        if (++resyncs > STG_PICKLE_RESYNC_MAX) {
            break;
        }
        resyncing = true;
        pos = resync_point(s->buf, s->len, pos + 1);
    }
    stg_pickle_free(&w);
    s->w = NULL;
    return clean && !s->failed_alloc;
}

/* joblib.load's NumpyUnpickler reads a whole file, or the stream joblib decompresses from it
 * (not the old ZF format, whose ZipNumpyUnpickler reads no NumpyArrayWrapper array); a pickle
 * inside an archive member, a nested payload, a side file or .npy object data is read by a
 * plain unpickler. */
static bool joblib_reads(const stg_check_ctx *ctx, stg_pickle_flavor flavor)
{
    const stg_member_link *m = ctx->member;
    return flavor == STG_PICKLE_RAW && !ctx->joblib_compat &&
           (m == NULL || (m->up == NULL && strcmp(m->name, "(decompressed)") == 0));
}

/* What pickle_load_reading adds: its findings from `from` on, but not its failure (the loader
 * raising) nor one the joblib reading already made at the same offset (looked for while the
 * report is small, so the check stays linear). */
struct reading_merge {
    uint64_t from;
    const stg_report *main;
};

static bool pickle_reading_keeps(const stg_finding *f, void *arg)
{
    const struct reading_merge *m = arg;
    if (f->code == STG_PICKLE_MALFORMED || f->code == STG_PICKLE_FRAME_DIVERGENCE ||
        f->code == STG_PICKLE_MEMO_SPARSE || (f->has_offset && f->offset < m->from)) {
        return false;
    }
    for (size_t i = 0; i < m->main->count && m->main->count <= 4096; i++) {
        const stg_finding *g = &m->main->findings[i];
        if (g->code == f->code && g->has_offset == f->has_offset && g->offset == f->offset) {
            return false;
        }
    }
    return true;
}

static bool pickle_reading_keeps_global(const stg_global *g, void *arg)
{
    const struct reading_merge *m = arg;
    if (g->offset < m->from) {
        return false;
    }
    for (size_t i = 0; i < m->main->global_count && m->main->global_count <= 4096; i++) {
        const stg_global *h = &m->main->globals[i];
        if (h->offset == g->offset && h->module_len == g->module_len &&
            h->name_len == g->name_len && memcmp(h->module, g->module, g->module_len) == 0 &&
            memcmp(h->name, g->name, g->name_len) == 0) {
            return false;
        }
    }
    return true;
}

/* The same bytes as pickle.load (or torch.load, or numpy.load without the .npy magic) reads
 * them: one pickle, every byte after a NumpyArrayWrapper's BUILD an opcode. Up to the first
 * array both readings walk the same opcodes; past it, what this one finds is added (its
 * failure is that loader raising: not a finding). */
static void pickle_load_reading(const uint8_t *buf, size_t len, uint64_t base, uint64_t from,
                                stg_check_ctx *ctx)
{
    stg_report *scratch = stg_report_new(ctx->lim);
    if (scratch == NULL) {
        stg_report_oom(ctx->report);
        return;
    }
    stg_check_ctx inner = *ctx;
    inner.report = scratch;
    stg_pscan s;
    memset(&s, 0, sizeof s);
    s.ctx = &inner;
    s.seed = ctx->hash_seed != 0 ? ctx->hash_seed : STG_HASH_SEED_DEFAULT;
    tables_init(&s);
    s.buf = buf;
    s.len = len;
    s.base = base;
    s.flavor = STG_PICKLE_RAW;
    s.pickle_reading = true;
    s.first_skip = UINT64_MAX;
    size_t first_stop;
    (void)run(&s, ctx->lim, &first_stop);
    getattr_finish(&s);
    if (s.failed_alloc) {
        stg_report_oom(scratch);
    }
    struct reading_merge m = {base + from, ctx->report};
    stg_report_merge_if(ctx->report, scratch, NULL, STG_NO_OFFSET, pickle_reading_keeps,
                        pickle_reading_keeps_global, &m);
    pscan_free(&s);
    stg_report_free(scratch);
}

void stg_check_pickles(const uint8_t *buf, size_t len, uint64_t base_offset,
                       stg_pickle_flavor flavor, stg_check_ctx *ctx)
{
    stg_pscan s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.joblib_route = joblib_reads(ctx, flavor);
    s.first_skip = UINT64_MAX;
    s.seed = ctx->hash_seed != 0 ? ctx->hash_seed : STG_HASH_SEED_DEFAULT;
    tables_init(&s);
    s.buf = buf;
    s.len = buf == NULL ? 0 : len;
    s.base = base_offset;
    s.flavor = flavor;
    size_t first_stop;
    (void)run(&s, ctx->lim, &first_stop);
    getattr_finish(&s);
    if (s.failed_alloc) {
        stg_report_oom(ctx->report);
    }
    uint64_t from = s.first_skip;
    pscan_free(&s);
    if (from != UINT64_MAX) {
        pickle_load_reading(buf, len, base_offset, from, ctx);
    }
}

bool stg_pickle_sniff(const uint8_t *buf, size_t len, size_t *stop_end, bool *out_of_memory)
{
    return stg_pickle_sniff_window(buf, len, stop_end, NULL, out_of_memory);
}

/* How the reader the sniff stands for takes persistent ids. */
typedef enum { SNIFF_ANY_READER, SNIFF_FILE_START } sniff_reader;

static bool sniff_walk(const uint8_t *buf, size_t len, sniff_reader reader, uint64_t total,
                       size_t *stop_end, bool *ran_out, uint64_t *open_line, bool *out_of_memory,
                       bool *acted, bool *undecided);

bool stg_pickle_sniff_window(const uint8_t *buf, size_t len, size_t *stop_end, bool *ran_out,
                             bool *out_of_memory)
{
    bool acted, undecided;
    return sniff_walk(buf, len, SNIFF_ANY_READER, UINT64_MAX, stop_end, ran_out, NULL,
                      out_of_memory, &acted, &undecided);
}

bool stg_pickle_sniff_file(const uint8_t *buf, size_t len, uint64_t file_size, size_t *stop_end,
                           bool *ran_out, uint64_t *open_line, bool *out_of_memory)
{
    bool acted, undecided;
    return sniff_walk(buf, len, SNIFF_FILE_START, file_size, stop_end, ran_out, open_line,
                      out_of_memory, &acted, &undecided);
}

bool stg_pickle_sniff_acts(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    bool acted = false, undecided = false;
    bool ok = sniff_walk(buf, len, SNIFF_ANY_READER, UINT64_MAX, NULL, NULL, NULL, out_of_memory,
                         &acted, &undecided);
    return ok || acted;
}

bool stg_pickle_sniff_imports(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    bool acted = false, undecided = false;
    (void)sniff_walk(buf, len, SNIFF_ANY_READER, UINT64_MAX, NULL, NULL, NULL, out_of_memory,
                     &acted, &undecided);
    return acted || undecided;
}

/* A scan without a context (nothing is reported) and its walker, default limits. */
static void quiet_walk_init(stg_pscan *s, stg_pickle_walker *w, stg_pickle_hooks *hooks,
                            const uint8_t *buf, size_t len, stg_pickle_flavor flavor)
{
    memset(s, 0, sizeof *s);
    s->buf = buf;
    s->len = len;
    s->flavor = flavor;
    s->first_skip = UINT64_MAX;
    s->seed = STG_HASH_SEED_DEFAULT; /* no context: the probe ceiling bounds a flood */
    tables_init(s);
    stg_pickle_limits pl;
    limits_from(NULL, &pl);
    pl.hash_seed = s->seed;
    *hooks = scan_hooks;
    hooks->ctx = s;
    stg_pickle_init(w, &pl, hooks);
    s->w = w;
}

/* The sniffing walk; *acted: it reached a named global (an import) before it ended, however it
 * ended. An unresolvable one (EXT1 is two bytes: tensor data holds it by chance) does not
 * count: without STOP only a real name makes random bytes a pickle. *undecided: a limit cut
 * the walk short (the answer is then true). */
static bool sniff_walk(const uint8_t *buf, size_t len, sniff_reader reader, uint64_t total,
                       size_t *stop_end, bool *ran_out, uint64_t *open_line, bool *out_of_memory,
                       bool *acted, bool *undecided)
{
    *acted = false;
    *undecided = false;
    if (ran_out != NULL) {
        *ran_out = false;
    }
    if (buf == NULL || len == 0) {
        if (ran_out != NULL) {
            *ran_out = true;
        }
        return false;
    }
    stg_pscan s;
    stg_pickle_hooks hooks;
    stg_pickle_walker w;
    quiet_walk_init(&s, &w, &hooks, buf, len, STG_PICKLE_RAW);
    s.joblib_route = true; /* a whole file's sniff: joblib.load may be its reader */
    w.no_persistent_load = reader == SNIFF_FILE_START;
    size_t end = 0;
    stg_pickle_status res = stg_pickle_walk(&w, buf, len, 0, &end);
    bool ok = res == STG_PW_STOP;
    if (ran_out != NULL) {
        *ran_out = stg_pickle_ran_out_of(&w, res, total);
    }
    if (open_line != NULL) {
        *open_line = stg_pickle_open_line(&w, res);
    }
    if (res == STG_PW_LIMIT) {
        /* Undecided: a limit cut the walk short where a loader, which has none, goes on. It
         * stays a possible pickle through its end, and its scan names the limit (fails
         * closed) instead of calling the file unknown. */
        ok = true;
        end = len;
        *undecided = true;
    }
    if (!ok && (res == STG_PW_NOMEM || s.failed_alloc) && out_of_memory != NULL) {
        *out_of_memory = true;
    }
    stg_pickle_free(&w);
    pscan_free(&s);
    *acted = s.acted;
    if (ok && stop_end != NULL) {
        *stop_end = end;
    }
    return ok;
}

/* ---------------------------------------------------------------- PyTorch 0.1 storages */

/* Walks one pickle from buf[0] (no findings) and reads what its STOP returns: the storage
 * count, or a storage's (key, location, storage_type) tuple, whose class gives the element
 * size as torch._utils._element_size(storage_type.dtype) does (the classes' table above). */
static bool torch01_result(const uint8_t *buf, size_t len, uint64_t *count, uint32_t *elsize)
{
    stg_pscan s;
    stg_pickle_hooks hooks;
    stg_pickle_walker w;
    quiet_walk_init(&s, &w, &hooks, buf, len, STG_PICKLE_MEMBER);
    size_t end;
    bool ok = stg_pickle_walk(&w, buf, len, 0, &end) == STG_PW_STOP;
    int64_t n;
    stg_pv cls;
    if (ok && count != NULL) {
        ok = (w.result.kind == STG_PV_INT || w.result.kind == STG_PV_BOOL) &&
             stg_pickle_int(&w.result, &n) && n >= 0;
        *count = ok ? (uint64_t)n : 0;
    } else if (ok) {
        ok = w.result.kind == STG_PV_TUPLE && w.result.n == 3 &&
             stg_pickle_tuple_at(&w, &w.result, 2, &cls) && cls.kind == STG_PV_GLOBAL &&
             (cls.flags & STG_PV_F_UNRESOLVED) == 0 && (cls.n & TAG_TORCH_STORAGE) != 0;
        *elsize = ok ? (cls.n >> TAG_ELSIZE_SHIFT) & 0xFFu : 0;
    }
    stg_pickle_free(&w);
    pscan_free(&s);
    return ok;
}

bool stg_pickle_torch01_count(const uint8_t *buf, size_t len, uint64_t *count)
{
    return torch01_result(buf, len, count, NULL);
}

bool stg_pickle_torch01_elsize(const uint8_t *buf, size_t len, uint32_t *elsize)
{
    return torch01_result(buf, len, NULL, elsize);
}

/* ---------------------------------------------------------------- .npy */

static void npy_finding(stg_check_ctx *ctx, stg_code code, uint64_t off, const char *why,
                        const char *limit)
{
    stg_finding *f = stg_report_add_sev(ctx->report, code, STG_SEV_ERROR, off,
                                        "numpy .npy header: %s", why);
    if (f != NULL && limit != NULL) {
        stg_report_set_limit(ctx->report, f, limit);
    }
    stg_ctx_set_member(ctx, f);
}

bool stg_check_npy(const uint8_t *buf, size_t len, uint64_t base_offset, stg_check_ctx *ctx)
{
    stg_limits def;
    const stg_limits *lim = ctx->lim;
    if (lim == NULL) {
        stg_limits_default(&def);
        lim = &def;
    }
    stg_npy_limits nl = {lim->max_header_len, lim->max_json_depth, lim->max_metadata_entries};
    size_t cap = stg_npy_nodes_needed(buf, len, &nl);
    stg_pylit_node *nodes = NULL;
    stg_npy_dtype *scratch = NULL;
    if (cap > 0) {
        nodes = stg_mem_calloc(cap, sizeof *nodes);
        scratch = stg_mem_calloc(cap, sizeof *scratch);
        if (nodes == NULL || scratch == NULL) {
            stg_mem_free(nodes);
            stg_mem_free(scratch);
            stg_report_oom(ctx->report);
            return false;
        }
    }
    stg_npy_header h;
    stg_npy_error err;
    stg_parse_status st = stg_npy_read(buf, len, &nl, nodes, scratch, cap, &h, &err);
    stg_mem_free(nodes);
    stg_mem_free(scratch);
    if (st != STG_PARSE_OK) {
        bool limit = err.limit != NULL;
        npy_finding(ctx, limit ? STG_LIMIT_EXCEEDED : STG_CONTAINER_MALFORMED,
                    base_offset + err.offset, err.what, err.limit);
        return false;
    }
    size_t data = h.data_offset;
    if (h.dtype.has_object) {
        /* numpy.load pickle.load-s the data of any dtype holding objects, whatever its shape. */
        stg_check_pickles(buf + data, len - data, base_offset + data, STG_PICKLE_PLAIN, ctx);
        return true;
    }
    uint64_t need = 0;
    if (h.count_known && stg_mul_u64(h.count, h.dtype.itemsize, &need)) {
        need = UINT64_MAX; /* more bytes than any data holds */
    }
    if (!h.count_known) {
        npy_finding(ctx, STG_CONTAINER_MALFORMED, base_offset + h.dict_offset,
                    "a shape dimension is negative or the element count passes 2^64", NULL);
    } else if (need != len - data) {
        npy_finding(ctx, STG_CONTAINER_MALFORMED, base_offset + data,
                    need > len - data ? "the array data is shorter than the header says"
                                      : "bytes follow the array data",
                    NULL);
    }
    return false;
}
