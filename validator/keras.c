/* Keras model config rules (see keras.h; docs/keras.md gives each rule's source in Keras'
 * own loaders).
 *
 * The walk keeps one frame per open JSON container (the parser's depth bounds them); an object's
 * frame collects the members Keras' deserializer reads (class_name, module, registered_name,
 * config when it is a function's name, function_type) whatever their order, and the object is
 * judged when it closes. A repeated key keeps its last value, as Python's json.loads does. */
#include "keras.h"

#include <string.h>

#include "../parser/arena.h"
#include "../parser/hdf5.h"
#include "../parser/json.h"
#include "../parser/mem.h"

#define FIELD_MAX 128 /* decoded bytes kept of a string member; longer ones are marked cut */

typedef enum field_id {
    F_NONE = -1,
    F_CLASS = 0,
    F_MODULE,
    F_REGISTERED,
    F_CONFIG,
    F_FUNCTION_TYPE,
    F_COUNT
} field_id;

typedef struct field {
    char text[FIELD_MAX + 1];
    size_t len;
    bool present; /* the member is there and its value a string */
    bool cut;     /* the string was longer than FIELD_MAX (or held a NUL) */
} field;

typedef struct frame {
    uint64_t offset; /* the container's opening bracket */
    bool object;
    bool layers_list; /* an array under a `layers` key */
    bool in_layers;   /* an object directly inside such an array */
    field_id pending; /* the member whose value comes next */
    bool pending_layers;
    field f[F_COUNT];
} frame;

typedef struct walk {
    const stg_limits *lim;
    stg_report *r;
    uint64_t base;
    unsigned unit; /* bytes per code unit of the file's encoding: 1, 2 (UTF-16), 4 (UTF-32) */
    stg_keras_summary *sum;
    frame *frames;
    bool model; /* a model config (its layers are rows); else per-object metadata */
    bool model_row;
    stg_report_row model_row_data; /* its strings point into frames[0] until recorded */
} walk;

/* ------------------------------------------------------------------------------ tables */

/* Keras' packages: serialization_lib._retrieve_class_or_fn imports a module only when its first
 * component is one of keras, keras_hub, keras_cv, keras_nlp; tf_keras is Keras 2's own. */
static const char *const keras_roots[] = {"keras", "keras_hub", "keras_cv", "keras_nlp",
                                          "tf_keras"};

/* serialization_lib.NON_MODELING_APIS: Keras refuses these during deserialization (they read,
 * write or fetch files, or turn safe mode off); judged by their last component under any Keras
 * module, since Keras before the list existed resolved every spelling of them. */
static const char *const non_modeling_names[] = {
    "clear_session",
    "enable_unsafe_deserialization",
    "load_model",
    "model_from_json",
    "save_model",
    "image_dataset_from_directory",
    "load_img",
    "save_img",
    "text_dataset_from_directory",
    "deserialize_keras_object",
    "load_weights",
    "register_keras_serializable",
    "save_weights",
    "serialize_keras_object",
    "audio_dataset_from_directory",
    "get_file",
};

/* Python's builtins module (lower-case names: the functions and base types) less the pure
 * computations below: under module "builtins", Keras before 3.9 took any of them. */
static const char *const python_builtins[] = {
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
};
static const char *const harmless_builtins[] = {
    "abs",      "all",    "any",       "ascii", "bin",    "bool",      "bytes", "chr",   "complex",
    "dict",     "divmod", "enumerate", "float", "format", "frozenset", "hash",  "hex",   "int",
    "len",      "list",   "max",       "min",   "oct",    "ord",       "pow",   "range", "repr",
    "reversed", "round",  "set",       "slice", "sorted", "str",       "sum",   "tuple", "zip",
};

/* Modules whose import or attributes reach the file system, processes, the network or other
 * loaders: unsafe even under a registered custom name (a registration is the loading program's
 * to make, and a name in the file can claim one). */
static const char *const denied_roots[] = {
    "os",         "posix",     "nt",       "posixpath",   "ntpath",
    "subprocess", "sys",       "shutil",   "importlib",   "runpy",
    "pickle",     "_pickle",   "marshal",  "code",        "codeop",
    "ctypes",     "socket",    "pty",      "webbrowser",  "multiprocessing",
    "io",         "_io",       "pathlib",  "tempfile",    "urllib",
    "http",       "requests",  "dill",     "cloudpickle", "joblib",
    "operator",   "functools", "types",    "inspect",     "gc",
    "threading",  "_thread",   "signal",   "platform",    "sysconfig",
    "site",       "pdb",       "timeit",   "asyncio",     "zipimport",
    "pkgutil",    "glob",      "builtins", "__builtin__", "numpy",
    "torch",      "commands",  "popen2",   "fileinput",   "ftplib",
};

static bool in_list(const char *const *list, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0) {
            return true;
        }
    }
    return false;
}

#define IN(list, s, len) in_list(list, sizeof list / sizeof list[0], s, len)

static bool field_is(const field *f, const char *s)
{
    return f->present && !f->cut && f->len == strlen(s) && memcmp(f->text, s, f->len) == 0;
}

/* ----------------------------------------------------------------------------- judging */

/* The first component of a dotted module name. */
static size_t root_len(const field *m)
{
    const char *dot = memchr(m->text, '.', m->len);
    return dot != NULL ? (size_t)(dot - m->text) : m->len;
}

/* A registration name as register_keras_serializable writes it: "package>Name". */
static bool is_registered(const field *reg)
{
    return reg->present && memchr(reg->text, '>', reg->len) != NULL;
}

/* A name from the file as a message shows it: printable ASCII, anything else as '?'. */
static void printable(const field *f, char *out)
{
    for (size_t i = 0; i < f->len; i++) {
        unsigned char c = (unsigned char)f->text[i];
        out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[f->len] = '\0';
}

static void finding(walk *w, stg_code code, const frame *fr, const char *what, const field *a,
                    const field *b)
{
    char pa[FIELD_MAX + 1] = "", pb[FIELD_MAX + 1] = "";
    if (a != NULL) {
        printable(a, pa);
    }
    if (b != NULL) {
        printable(b, pb);
    }
    stg_report_add(w->r, code, w->base + fr->offset * w->unit, "%s%s%s%s%s%s%s", what,
                   a != NULL ? " \"" : "", pa, a != NULL && a->cut ? "...\"" : (a ? "\"" : ""),
                   b != NULL ? " (attribute \"" : "", pb, b != NULL ? "\")" : "");
}

/* A layer's class for `inspect` (the summary door): one histogram row per class_name. */
static void layer_row(walk *w, const frame *fr)
{
    const field *cls = &fr->f[F_CLASS];
    stg_report_row row = {.kind = STG_SUMMARY_KERAS_LAYER,
                          .name = cls->text,
                          .name_len = cls->len,
                          .count = 1,
                          .offset = w->base + fr->offset * w->unit};
    stg_report_add_row(w->r, &row);
}

/* module "builtins": Keras looks a function's name up in its own built-in modules first
 * (activations, losses, ...); a Python builtin it then reaches is unsafe unless pure. */
static void judge_builtins(walk *w, const frame *fr, const field *name)
{
    if (name->cut ||
        (IN(python_builtins, name->text, name->len) &&
         !IN(harmless_builtins, name->text, name->len)) ||
        (name->len > 2 && memcmp(name->text, "__", 2) == 0)) {
        finding(w, STG_KERAS_MODULE_UNSAFE, fr,
                "a Keras config names a Python builtin that Keras before 3.9 takes from module "
                "builtins:",
                name, NULL);
    } else if (memchr(name->text, '>', name->len) != NULL) {
        finding(w, STG_KERAS_CUSTOM_OBJECT, fr,
                "a Keras config names the registered custom function", name, NULL);
    }
}

static void judge_module(walk *w, const frame *fr)
{
    const field *mod = &fr->f[F_MODULE], *cls = &fr->f[F_CLASS], *reg = &fr->f[F_REGISTERED];
    bool function = field_is(cls, "function");
    /* a function's name is its config; a class's, its class_name */
    const field *name = function && fr->f[F_CONFIG].present ? &fr->f[F_CONFIG] : cls;
    size_t root = root_len(mod);
    if (field_is(mod, "builtins")) {
        judge_builtins(w, fr, name);
        return;
    }
    if (!mod->cut && IN(keras_roots, mod->text, root)) {
        const char *dot = memchr(name->text, '.', name->len);
        size_t at = 0;
        while (dot != NULL) { /* the last component of a dotted name */
            at = (size_t)(dot - name->text) + 1;
            dot = memchr(name->text + at, '.', name->len - at);
        }
        if (name->present && IN(non_modeling_names, name->text + at, name->len - at)) {
            finding(w, STG_KERAS_MODULE_UNSAFE, fr,
                    "a Keras config names a non-modeling Keras API (it reads, writes or fetches "
                    "files, or turns safe mode off; Keras' NON_MODELING_APIS): module",
                    mod, name);
        }
        return;
    }
    if (!mod->cut && root == 10 && memcmp(mod->text, "tensorflow", 10) == 0 && !function) {
        return; /* a TensorFlow class (a TypeSpec): Keras builds it through its own methods */
    }
    if (field_is(mod, "__main__")) {
        finding(w, STG_KERAS_CUSTOM_OBJECT, fr,
                "a Keras config names an object of the saving program's __main__ (the loading "
                "program must define it):",
                name->present ? name : NULL, NULL);
        return;
    }
    if (!mod->cut && !IN(denied_roots, mod->text, root) && is_registered(reg)) {
        finding(w, STG_KERAS_CUSTOM_OBJECT, fr,
                "a Keras config names a registered custom object (the loading program must "
                "register it; Keras before 3.9 imports its module otherwise):",
                reg, NULL);
        return;
    }
    finding(w, STG_KERAS_MODULE_UNSAFE, fr,
            "a Keras config names a module outside Keras (Keras before 3.9 imports it and takes "
            "the attribute to build the model): module",
            mod, name->present ? name : NULL);
}

static void judge_object(walk *w, const frame *fr)
{
    const field *cls = &fr->f[F_CLASS];
    if (field_is(cls, "__lambda__")) {
        finding(w, STG_KERAS_LAMBDA, fr,
                "a Python lambda stored as marshalled bytecode (class_name __lambda__): Keras' "
                "func_load unmarshals and runs it when the model is built",
                NULL, NULL);
    }
    if (field_is(&fr->f[F_FUNCTION_TYPE], "lambda")) {
        finding(w, STG_KERAS_LAMBDA, fr,
                "a legacy Lambda layer config with function_type lambda: its function is "
                "marshalled bytecode that Keras' func_load unmarshals and runs",
                NULL, NULL);
    }
    if (fr->f[F_MODULE].present) {
        judge_module(w, fr);
    } else if (is_registered(&fr->f[F_REGISTERED])) {
        finding(w, STG_KERAS_CUSTOM_OBJECT, fr,
                "a Keras config names a registered custom object (the loading program must "
                "register it):",
                &fr->f[F_REGISTERED], NULL);
    }
    if (cls->present) {
        w->sum->objects++;
        w->sum->layers += fr->in_layers ? 1 : 0;
        if (fr->in_layers) {
            layer_row(w, fr);
        }
    }
}

/* ----------------------------------------------------------------------------- walking */

static field_id field_named(const uint8_t *k, size_t n)
{
    static const char *const names[F_COUNT] = {"class_name", "module", "registered_name", "config",
                                               "function_type"};
    for (int i = 0; i < F_COUNT; i++) {
        if (strlen(names[i]) == n && memcmp(names[i], k, n) == 0) {
            return (field_id)i;
        }
    }
    return F_NONE;
}

/* The member a KEY event names, its escapes decoded ("cl\u0061ss_name" is class_name to
 * json.loads); *layers: the key is "layers". */
static field_id field_of(const stg_json_event *ev, bool *layers)
{
    uint8_t tmp[96];
    *layers = false;
    if (ev->str_len > sizeof tmp) {
        return F_NONE; /* no member name Keras reads is that long, even escaped */
    }
    size_t n = ev->has_escapes ? stg_json_decode(ev->str, ev->str_len, tmp) : ev->str_len;
    const uint8_t *k = ev->has_escapes ? tmp : ev->str;
    *layers = n == 6 && memcmp(k, "layers", 6) == 0;
    return field_named(k, n);
}

/* Decodes a string event into f (cut past FIELD_MAX; a NUL makes it cut too, since no module
 * or class name holds one). */
static void take_string(field *f, const stg_json_event *ev)
{
    uint8_t tmp[FIELD_MAX * 6 + 8];
    f->present = true;
    f->cut = ev->str_len > sizeof tmp;
    size_t n = f->cut ? 0 : stg_json_decode(ev->str, ev->str_len, tmp);
    if (n > FIELD_MAX || memchr(tmp, 0, n) != NULL) {
        f->cut = true;
    }
    f->len = f->cut ? (n < FIELD_MAX ? n : FIELD_MAX) : n;
    memcpy(f->text, tmp, f->len);
    f->text[f->len] = '\0';
}

static void frame_open(walk *w, uint32_t d, const stg_json_event *ev, bool object)
{
    frame *fr = &w->frames[d];
    frame *up = d > 0 ? &w->frames[d - 1] : NULL;
    memset(fr, 0, sizeof *fr);
    fr->offset = ev->offset;
    fr->object = object;
    fr->pending = F_NONE;
    fr->layers_list = !object && up != NULL && up->object && up->pending_layers;
    fr->in_layers = object && up != NULL && !up->object && up->layers_list;
}

/* A value of the member the parent object expects (or an array element). */
static void value_seen(walk *w, uint32_t d, const stg_json_event *ev)
{
    if (d == 0) {
        return;
    }
    frame *up = &w->frames[d - 1];
    if (!up->object) {
        return;
    }
    if (up->pending != F_NONE) {
        field *f = &up->f[up->pending];
        if (ev->type == STG_JSON_STRING) {
            take_string(f, ev);
        } else {
            f->present = false; /* a later non-string value replaces an earlier string */
        }
    }
    up->pending = F_NONE;
    up->pending_layers = false;
}

static void top_summary(walk *w, const frame *fr, bool has_config)
{
    const field *cls = &fr->f[F_CLASS];
    w->sum->top_is_model = cls->present && has_config;
    size_t n = cls->len < sizeof w->sum->top_class - 1 ? cls->len : sizeof w->sum->top_class - 1;
    memcpy(w->sum->top_class, cls->text, n);
    w->sum->top_class[n] = '\0';
    if (!cls->present) {
        return;
    }
    if (!w->model) {
        layer_row(w, fr); /* keras_metadata.pb: each object's metadata names its class */
        return;
    }
    stg_report_row row = {.kind = STG_SUMMARY_KERAS_MODEL,
                          .name = cls->text,
                          .name_len = cls->len,
                          .count = 0, /* the object count is known at the end of the walk */
                          .offset = w->base + fr->offset * w->unit};
    w->model_row = true;
    w->model_row_data = row;
}

/* Runs the parser to the end; false when it stopped on an error (reported). */
static bool walk_events(walk *w, stg_json_parser *p)
{
    stg_json_event ev;
    bool top_config = false;
    for (;;) {
        stg_json_type t = stg_json_next(p, &ev);
        uint32_t d = ev.depth;
        switch (t) {
        case STG_JSON_OBJECT_BEGIN:
        case STG_JSON_ARRAY_BEGIN:
            top_config = top_config || (d == 1 && w->frames[0].pending == F_CONFIG);
            frame_open(w, d, &ev, t == STG_JSON_OBJECT_BEGIN); /* reads the parent's key */
            value_seen(w, d, &ev);
            break;
        case STG_JSON_OBJECT_END:
            judge_object(w, &w->frames[d]);
            if (d == 0) {
                top_summary(w, &w->frames[0], top_config || w->frames[0].f[F_CONFIG].present);
            }
            break;
        case STG_JSON_KEY: {
            frame *fr = &w->frames[d - 1];
            fr->pending = field_of(&ev, &fr->pending_layers);
            break;
        }
        case STG_JSON_STRING:
        case STG_JSON_NUMBER:
        case STG_JSON_TRUE:
        case STG_JSON_FALSE:
        case STG_JSON_NULL:
            top_config = top_config || (d == 1 && w->frames[0].pending == F_CONFIG);
            value_seen(w, d, &ev);
            break;
        case STG_JSON_ARRAY_END:
        case STG_JSON_DUPLICATE:
        case STG_JSON_NONE: break;
        case STG_JSON_END:
            if (!stg_json_rest_is_ws(p->buf, p->len, ev.offset)) {
                stg_report_add(w->r, STG_KERAS_CONFIG_MALFORMED, w->base + ev.offset * w->unit,
                               "bytes follow the Keras config's JSON value (json.loads refuses "
                               "extra data)");
            }
            return true;
        case STG_JSON_ERROR: {
            if (p->error == STG_JSON_E_MEMORY) {
                stg_report_limit(w->r, w->base + p->error_offset * w->unit, "max_memory",
                                 w->lim->max_memory);
            } else {
                stg_report_add(
                    w->r, STG_KERAS_CONFIG_MALFORMED, w->base + p->error_offset * w->unit,
                    "the Keras config is not JSON json.loads takes (%s): not judged past "
                    "this point",
                    p->error == STG_JSON_E_DEPTH ? "nested past max_json_depth" : "invalid JSON");
            }
            return false;
        }
        }
    }
}

/* need_model: the top level must be a model (class_name and config); training_config's is
 * not. */
/* ----------------------------------------------------------------------------- encodings */

/* The encoding json.loads gives bytes (json.detect_encoding): a UTF-32 or UTF-16 BOM, a UTF-8
 * BOM, else NUL patterns in the first four bytes; *unit is the code unit's size, *big_endian
 * its order, *bom the bytes of the BOM. */
static void detect_encoding(const uint8_t *b, size_t len, unsigned *unit, bool *big_endian,
                            size_t *bom)
{
    *unit = 1;
    *big_endian = false;
    *bom = 0;
    if (len >= 4 && ((b[0] == 0 && b[1] == 0 && b[2] == 0xFE && b[3] == 0xFF) ||
                     (b[0] == 0xFF && b[1] == 0xFE && b[2] == 0 && b[3] == 0))) {
        *unit = 4, *big_endian = b[0] == 0, *bom = 4;
    } else if (len >= 2 && ((b[0] == 0xFE && b[1] == 0xFF) || (b[0] == 0xFF && b[1] == 0xFE))) {
        *unit = 2, *big_endian = b[0] == 0xFE, *bom = 2;
    } else if (len >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) {
        *bom = 3;
    } else if (len >= 4 && b[0] == 0) {
        *unit = b[1] != 0 ? 2 : 4, *big_endian = true;
    } else if (len >= 4 && b[1] == 0) {
        *unit = b[2] != 0 || b[3] != 0 ? 2 : 4;
    }
}

/* The file's code units as bytes: ASCII kept, anything else '?' (every JSON token Keras' rules
 * read is ASCII; a non-ASCII letter in a name then matches no Keras namespace). NULL without
 * memory; *out_len its length. */
static uint8_t *project_ascii(const uint8_t *b, size_t len, unsigned unit, bool big_endian,
                              size_t *out_len)
{
    size_t n = len / unit;
    uint8_t *out = stg_mem_alloc(n > 0 ? n : 1);
    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;
        for (unsigned k = 0; k < unit; k++) {
            unsigned byte = big_endian ? k : unit - 1 - k;
            v = v << 8 | b[i * unit + byte];
        }
        out[i] = v < 0x80 ? (uint8_t)v : (uint8_t)'?';
    }
    *out_len = n;
    return out;
}

static stg_status walk_json(const uint8_t *buf, size_t len, uint64_t base, unsigned unit,
                            const stg_limits *lim, stg_report *r, stg_keras_summary *summary,
                            bool need_model)
{
    stg_keras_summary scratch;
    walk w = {lim,  r,          base,  unit, summary != NULL ? summary : &scratch,
              NULL, need_model, false, {0}};
    memset(w.sum, 0, sizeof *w.sum);
    uint32_t depth = lim->max_json_depth == 0 ? 1 : lim->max_json_depth;
    depth = depth > STG_JSON_DEPTH_CEILING ? STG_JSON_DEPTH_CEILING : depth;
    /* the frames: at most STG_JSON_DEPTH_CEILING + 2 of them, outside the parser's budget */
    w.frames = stg_mem_calloc((size_t)depth + 2, sizeof(frame));
    if (w.frames == NULL) {
        return STG_E_NOMEM;
    }
    uint64_t cap = stg_json_memory_bound(len, depth);
    if (lim->max_memory != 0 && lim->max_memory < cap) {
        cap = lim->max_memory;
    }
    stg_arena arena;
    stg_arena_init(&arena, cap > SIZE_MAX ? SIZE_MAX : (size_t)cap);
    stg_json_parser p;
    stg_json_init(&p, buf, len, depth, &arena);
    if (walk_events(&w, &p) && need_model && !w.sum->top_is_model) {
        stg_report_add(r, STG_KERAS_CONFIG_MALFORMED, base,
                       "the Keras config's top level is not an object with a string class_name "
                       "and a config: Keras cannot build a model from it");
    }
    if (w.model_row) {
        w.model_row_data.count = w.sum->objects;
        stg_report_add_row(r, &w.model_row_data);
    }
    stg_json_release(&p);
    stg_arena_release(&arena);
    stg_mem_free(w.frames);
    return STG_OK;
}

/* json.loads of bytes decodes UTF-8 (a BOM allowed), UTF-16 and UTF-32: a config in any of
 * them is judged (offsets in the file's bytes). */
static stg_status check_json(const uint8_t *buf, size_t len, uint64_t base, const stg_limits *lim,
                             stg_report *r, stg_keras_summary *summary, bool need_model)
{
    if ((buf == NULL && len > 0) || lim == NULL || r == NULL) {
        return STG_E_BAD_ARG;
    }
    unsigned unit;
    bool big_endian;
    size_t bom;
    detect_encoding(buf, len, &unit, &big_endian, &bom);
    if (unit == 1) {
        return walk_json(buf + bom, len - bom, base + bom, 1, lim, r, summary, need_model);
    }
    size_t n;
    uint8_t *ascii = project_ascii(buf + bom, len - bom, unit, big_endian, &n);
    if (ascii == NULL) {
        return STG_E_NOMEM;
    }
    stg_status st = walk_json(ascii, n, base + bom, unit, lim, r, summary, need_model);
    stg_mem_free(ascii);
    return st;
}

stg_status stg_keras_check_config(const uint8_t *buf, size_t len, uint64_t base,
                                  const stg_limits *lim, stg_report *r, stg_keras_summary *summary)
{
    return check_json(buf, len, base, lim, r, summary, true);
}

stg_status stg_keras_check_json(const uint8_t *buf, size_t len, uint64_t base,
                                const stg_limits *lim, stg_report *r)
{
    return check_json(buf, len, base, lim, r, NULL, false);
}

/* ---------------------------------------------------------------------------------- HDF5 */

typedef struct hdf5_walk {
    const stg_limits *lim;
    stg_report *r;
    stg_keras_hdf5 *out;
    stg_status status;
} hdf5_walk;

static bool attr_named(const stg_hdf5_attr *a, const char *name)
{
    return a->name_len == strlen(name) && memcmp(a->name, name, a->name_len) == 0;
}

static void copy_attr(const stg_hdf5_attr *a, char *dst, size_t cap)
{
    size_t n = 0;
    for (; a->is_string && n < a->value_len && n + 1 < cap; n++) {
        unsigned char c = a->value[n];
        dst[n] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    dst[n] = '\0';
}

/* legacy_h5_format.load_model_from_hdf5 reads model_config (and, to compile, training_config)
 * from the root attributes, decodes bytes as UTF-8 and json-decodes them. */
static void on_root_attr(void *arg, const stg_hdf5_attr *a)
{
    hdf5_walk *w = arg;
    bool model = attr_named(a, "model_config");
    if (attr_named(a, "keras_version")) {
        copy_attr(a, w->out->keras_version, sizeof w->out->keras_version);
    } else if (attr_named(a, "backend")) {
        copy_attr(a, w->out->backend, sizeof w->out->backend);
    }
    if (!model && !attr_named(a, "training_config")) {
        return;
    }
    w->out->model_config = w->out->model_config || model;
    if (!a->is_string) {
        stg_report_add(w->r, STG_KERAS_CONFIG_MALFORMED, a->offset,
                       "the root attribute %s is not a string: Keras cannot decode it",
                       model ? "model_config" : "training_config");
        return;
    }
    stg_keras_summary scratch;
    stg_status st = check_json(a->value, a->value_len, a->value_offset, w->lim, w->r,
                               model ? &w->out->summary : &scratch, model);
    w->status = w->status == STG_OK ? st : w->status;
}

stg_status stg_keras_check_hdf5(const uint8_t *buf, size_t len, const stg_limits *lim,
                                stg_report *r, stg_keras_hdf5 *out)
{
    if ((buf == NULL && len > 0) || lim == NULL || r == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_keras_hdf5 scratch;
    hdf5_walk w = {lim, r, out != NULL ? out : &scratch, STG_OK};
    memset(w.out, 0, sizeof *w.out);
    stg_hdf5_file f;
    stg_hdf5_result res = stg_hdf5_read_root(buf, len, &f, on_root_attr, &w);
    if (res != STG_HDF5R_OK) {
        stg_report_add(r, res == STG_HDF5R_MALFORMED ? STG_HDF5_MALFORMED : STG_HDF5_UNSUPPORTED,
                       f.fail_offset, "%s%s", f.fail_what,
                       res == STG_HDF5R_MALFORMED
                           ? ""
                           : ": the root attributes (a Keras model_config) cannot be judged");
    }
    return w.status;
}

/* The top level's keys of JSON text in UTF-8: class_name and config both there. */
static bool sniff_keys(const uint8_t *buf, size_t len)
{
    size_t first = 0;
    while (first < len &&
           (buf[first] == ' ' || buf[first] == '\t' || buf[first] == '\n' || buf[first] == '\r')) {
        first++;
    }
    if (first == len || buf[first] != '{') {
        return false;
    }
    uint64_t cap = stg_json_memory_bound(len, 127);
    cap = cap < STG_KERAS_SNIFF_MEMORY ? cap : STG_KERAS_SNIFF_MEMORY;
    stg_arena arena;
    stg_arena_init(&arena, (size_t)cap);
    stg_json_parser p;
    stg_json_init(&p, buf, len, 127, &arena);
    stg_json_event ev;
    bool class_name = false, config = false;
    for (stg_json_type t; !(class_name && config);) {
        t = stg_json_next(&p, &ev);
        if (t == STG_JSON_END || t == STG_JSON_ERROR) {
            break;
        }
        if (t == STG_JSON_KEY && ev.depth == 1) {
            bool layers;
            field_id f = field_of(&ev, &layers);
            class_name = class_name || f == F_CLASS;
            config = config || f == F_CONFIG;
        } else if ((t == STG_JSON_OBJECT_BEGIN || t == STG_JSON_ARRAY_BEGIN) && ev.depth >= 1 &&
                   stg_json_skip(&p, &ev, NULL, NULL) == STG_JSON_ERROR) {
            break;
        }
    }
    stg_json_release(&p);
    stg_arena_release(&arena);
    return class_name && config;
}

bool stg_keras_sniff_config(const uint8_t *buf, size_t len)
{
    unsigned unit;
    bool big_endian;
    size_t bom;
    detect_encoding(buf, len, &unit, &big_endian, &bom);
    if (unit == 1) {
        return sniff_keys(buf + bom, len - bom);
    }
    /* the first code unit that is not JSON whitespace must open an object, before anything is
     * copied (binary data with leading NULs reads as UTF-32 here) */
    for (size_t at = bom;; at += unit) {
        if (len - at < unit) {
            return false;
        }
        uint32_t v = 0;
        for (unsigned k = 0; k < unit; k++) {
            v = v << 8 | buf[at + (big_endian ? k : unit - 1 - k)];
        }
        if (v == '{') {
            break;
        }
        if (v != ' ' && v != '\t' && v != '\n' && v != '\r') {
            return false;
        }
    }
    size_t n;
    if (len / unit > STG_KERAS_SNIFF_MEMORY) {
        return false;
    }
    uint8_t *ascii = project_ascii(buf + bom, len - bom, unit, big_endian, &n);
    bool yes = ascii != NULL && sniff_keys(ascii, n);
    stg_mem_free(ascii);
    return yes;
}
