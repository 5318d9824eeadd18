/* TensorFlow SavedModel rules (see savedmodel.h; docs/keras.md gives the sources).
 *
 * The schema's path to the ops is fixed (tensorflow/core/protobuf/saved_model.proto,
 * meta_graph.proto; tensorflow/core/framework/graph.proto, function.proto, node_def.proto):
 *   SavedModel    { MetaGraphDef meta_graphs = 2; }
 *   MetaGraphDef  { GraphDef graph_def = 2; }
 *   GraphDef      { NodeDef node = 1; FunctionDefLibrary library = 2; }
 *   FunctionDefLibrary { FunctionDef function = 1; }
 *   FunctionDef   { OpDef signature = 1 (name = 1); NodeDef node_def = 3; }
 *   NodeDef       { string name = 1; string op = 2; }
 * so the walk is a fixed set of nested loops (no recursion, no stack keyed by the input); every
 * other field is skipped by the walker, which still refuses what protobuf's parser refuses. */
#include "savedmodel.h"

#include <string.h>

#include "../parser/cursor.h"
#include "../parser/mem.h"
#include "../parser/protobuf.h"
#include "keras.h"

/* Ops that read, list or write files, or map them (TensorFlow's op registry:
 * tensorflow/core/ops/io_ops.cc for ReadFile, WriteFile, MatchingFiles, Save, SaveSlices,
 * Restore, RestoreSlice and the readers; dataset_ops.cc and experimental_dataset_ops.cc for
 * the file datasets; summary_ops.cc for the summary file writer; array_ops.cc ImmutableConst).
 * SaveV2, RestoreV2 and MergeV2Checkpoints are not here: every SavedModel's saver has them,
 * fed the checkpoint path by the loader. */
static const char *const file_ops[] = {
    "ReadFile",
    "WriteFile",
    "MatchingFiles",
    "Save",
    "SaveSlices",
    "Restore",
    "RestoreSlice",
    "WholeFileReader",
    "WholeFileReaderV2",
    "TextLineReader",
    "TextLineReaderV2",
    "FixedLengthRecordReader",
    "FixedLengthRecordReaderV2",
    "TFRecordReader",
    "TFRecordReaderV2",
    "LMDBReader",
    "TFRecordDataset",
    "TFRecordDatasetV2",
    "TextLineDataset",
    "FixedLengthRecordDataset",
    "FixedLengthRecordDatasetV2",
    "DatasetToTFRecord",
    "ExperimentalDatasetToTFRecord",
    "SaveDataset",
    "SaveDatasetV2",
    "LoadDataset",
    "SnapshotDataset",
    "SnapshotDatasetV2",
    "CreateSummaryFileWriter",
    "ImmutableConst",
    "PrintV2",
};

/* tensorflow/core/ops/script_ops.cc: they call a Python function registered in the loading
 * process by a token; the function's code is not in the file. */
static const char *const py_ops[] = {"PyFunc", "PyFuncStateless", "EagerPyFunc"};

typedef struct tf_walk {
    const stg_limits *lim;
    stg_report *r;
    stg_tf_summary *sum;
    bool failed;
} tf_walk;

static bool listed(const char *const *list, size_t n, const uint8_t *s, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0) {
            return true;
        }
    }
    return false;
}

/* The next field; false at the end or on an error (reported once). */
static bool next(tf_walk *w, stg_cursor *c, stg_pb_field *f)
{
    if (w->failed) {
        return false;
    }
    stg_parse_detail d;
    stg_parse_status s = stg_pb_next(c, f, &d);
    if (s == STG_PARSE_OK) {
        return true;
    }
    if (s != STG_PARSE_END) {
        stg_report_add(w->r, STG_TF_SAVEDMODEL_MALFORMED, d.offset,
                       "the SavedModel's protobuf wire data is refused (%s): not judged past "
                       "this point",
                       d.what);
        w->failed = true;
    }
    return false;
}

/* A field of the schema's path with another wire type: protobuf refuses the message. */
static bool is_len(tf_walk *w, const stg_pb_field *f)
{
    if (f->wire == STG_PB_LEN) {
        return true;
    }
    stg_report_add(w->r, STG_TF_SAVEDMODEL_MALFORMED, f->offset,
                   "field %u of a SavedModel message has wire type %u, not a length-delimited "
                   "message: TensorFlow refuses the file",
                   (unsigned)f->number, (unsigned)f->wire);
    w->failed = true;
    return false;
}

static void printable(const uint8_t *s, size_t n, char *out, size_t cap)
{
    size_t k = n < cap - 1 ? n : cap - 1;
    for (size_t i = 0; i < k; i++) {
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
    }
    out[k] = '\0';
}

/* The saver's ops, and the ops that build its paths: reported when a direct input is a Const
 * whose string value leaves the model's folder (the loader feeds its own path otherwise). */
static const char *const saver_ops[] = {"SaveV2",     "RestoreV2",       "MergeV2Checkpoints",
                                        "StringJoin", "ShardedFilename", "ShardedFilespec"};

/* Const nodes of one graph or function whose string value leaves the model's folder. */
#define STG_TF_CONST_PATHS_MAX 256u
typedef struct const_paths {
    struct {
        const uint8_t *name;
        size_t len;
    } node[STG_TF_CONST_PATHS_MAX];
    size_t n;
    bool full;
} const_paths;

static void span(const stg_pb_field *f, const uint8_t **p, size_t *n)
{
    *p = f->sub.base + f->sub.begin;
    *n = f->sub.end - f->sub.begin;
}

/* Absolute (/, \, a drive letter), a URL (://), or a .. component. */
static bool path_escapes(const uint8_t *s, size_t n)
{
    if (n > 0 && (s[0] == '/' || s[0] == '\\')) {
        return true;
    }
    if (n >= 2 && s[1] == ':' && ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z')) {
        return true;
    }
    for (size_t i = 0; i + 1 < n; i++) {
        bool starts = i == 0 || s[i - 1] == '/' || s[i - 1] == '\\';
        bool ends = i + 2 == n || s[i + 2] == '/' || s[i + 2] == '\\';
        if ((s[i] == '.' && s[i + 1] == '.' && starts && ends) ||
            (i + 2 < n && s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/')) {
            return true;
        }
    }
    return false;
}

/* A NodeDef's string tensor values (attr (5) -> AttrValue (2) -> tensor (8) -> string_val (8))
 * hold a path that leaves the model. */
static bool const_escapes(tf_walk *w, stg_cursor c)
{
    stg_pb_field f, e, v, t;
    while (next(w, &c, &f)) {
        if (f.number != 5 || f.wire != STG_PB_LEN) {
            continue;
        }
        stg_cursor entry = f.sub;
        while (next(w, &entry, &e)) {
            if (e.number != 2 || e.wire != STG_PB_LEN) {
                continue;
            }
            stg_cursor value = e.sub;
            while (next(w, &value, &v)) {
                if (v.number != 8 || v.wire != STG_PB_LEN) {
                    continue;
                }
                stg_cursor tensor = v.sub;
                while (next(w, &tensor, &t)) {
                    const uint8_t *p;
                    size_t n;
                    span(&t, &p, &n);
                    if (t.number == 8 && t.wire == STG_PB_LEN && path_escapes(p, n)) {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

/* One NodeDef: its op judged (the last op field wins, as protobuf merges a repeated scalar);
 * a Const holding a path that leaves the model is remembered in cp. */
static void node(tf_walk *w, stg_cursor c, const char *function, const_paths *cp)
{
    stg_pb_field f;
    const uint8_t *op = NULL, *nm = NULL;
    size_t op_len = 0, nm_len = 0;
    uint64_t at = c.begin;
    stg_cursor whole = c;
    while (next(w, &c, &f)) {
        if (f.number == 2 && is_len(w, &f)) {
            span(&f, &op, &op_len);
        } else if (f.number == 1 && is_len(w, &f)) {
            span(&f, &nm, &nm_len);
        }
    }
    if (w->failed || op == NULL) {
        return;
    }
    w->sum->nodes++;
    stg_report_row row = {.kind = STG_SUMMARY_TF_OP,
                          .name = (const char *)op,
                          .name_len = op_len,
                          .count = 1,
                          .offset = at};
    stg_report_add_row(w->r, &row); /* the op histogram of `inspect` */
    if (op_len == 5 && memcmp(op, "Const", 5) == 0 && nm != NULL && const_escapes(w, whole)) {
        if (cp->n < STG_TF_CONST_PATHS_MAX) {
            cp->node[cp->n].name = nm;
            cp->node[cp->n++].len = nm_len;
        } else if (!cp->full) {
            cp->full = true;
            stg_report_limit(w->r, at, "STG_TF_CONST_PATHS_MAX", STG_TF_CONST_PATHS_MAX);
        }
    }
    char name[80], fn[80];
    printable(op, op_len, name, sizeof name);
    printable((const uint8_t *)function, function != NULL ? strlen(function) : 0, fn, sizeof fn);
    const char *where = function != NULL ? " in function " : " in the graph";
    if (listed(file_ops, sizeof file_ops / sizeof file_ops[0], op, op_len)) {
        stg_report_add(w->r, STG_TF_OP_UNSAFE, at,
                       "a TensorFlow op that reads, lists or writes files (%s)%s%s: running the "
                       "model's functions runs it with whatever paths the graph computes",
                       name, where, fn);
    } else if (listed(py_ops, sizeof py_ops / sizeof py_ops[0], op, op_len)) {
        stg_report_add(w->r, STG_TF_PYFUNC, at,
                       "an op %s%s%s: it calls a Python function registered in the loading "
                       "process (its code is not in the file), and fails where none is",
                       name, where, fn);
    }
}

/* A saver op whose direct input (NodeDef.input, 3: "name", "name:0", "name:output:0",
 * "^name") is one of the Consts in cp. */
static void saver_inputs(tf_walk *w, stg_cursor c, const const_paths *cp)
{
    stg_pb_field f;
    const uint8_t *op = NULL;
    size_t op_len = 0;
    uint64_t at = c.begin;
    stg_cursor scan = c;
    while (next(w, &scan, &f)) {
        if (f.number == 2 && f.wire == STG_PB_LEN) {
            span(&f, &op, &op_len);
        }
    }
    if (op == NULL || !listed(saver_ops, sizeof saver_ops / sizeof saver_ops[0], op, op_len)) {
        return;
    }
    while (next(w, &c, &f)) {
        const uint8_t *in;
        size_t n;
        if (f.number != 3 || f.wire != STG_PB_LEN) {
            continue;
        }
        span(&f, &in, &n);
        if (n > 0 && in[0] == '^') {
            in++, n--;
        }
        const uint8_t *colon = memchr(in, ':', n);
        n = colon != NULL ? (size_t)(colon - in) : n;
        for (size_t i = 0; i < cp->n; i++) {
            if (cp->node[i].len == n && memcmp(cp->node[i].name, in, n) == 0) {
                char name[80];
                printable(op, op_len, name, sizeof name);
                stg_report_add(w->r, STG_TF_OP_UNSAFE, at,
                               "a %s op takes a constant path that leaves the model's folder "
                               "(absolute, a URL or with ..): the checkpoint it reads or "
                               "writes is not the model's",
                               name);
                return;
            }
        }
    }
}

/* The NodeDefs (field `number`) of a graph or a function: each op judged, then the saver ops
 * fed by a Const path that leaves the model. */
static void nodes(tf_walk *w, stg_cursor c, uint32_t number, const char *function)
{
    const_paths *cp = stg_mem_calloc(1, sizeof *cp);
    if (cp == NULL) {
        stg_report_oom(w->r);
        return;
    }
    stg_cursor first = c;
    stg_pb_field f;
    while (next(w, &first, &f)) {
        if (f.number == number && is_len(w, &f)) {
            node(w, f.sub, function, cp);
        }
    }
    while (cp->n > 0 && next(w, &c, &f)) {
        if (f.number == number && f.wire == STG_PB_LEN) {
            saver_inputs(w, f.sub, cp);
        }
    }
    stg_mem_free(cp);
}

/* A FunctionDef: the signature's name for messages, then every node_def. */
static void function(tf_walk *w, stg_cursor c)
{
    char fname[72] = "?";
    stg_cursor scan = c;
    stg_pb_field f, g;
    while (next(w, &scan, &f)) {
        if (f.number == 1 && is_len(w, &f)) {
            stg_cursor sig = f.sub;
            while (next(w, &sig, &g)) {
                if (g.number == 1 && is_len(w, &g)) {
                    printable(g.sub.base + g.sub.begin, g.sub.end - g.sub.begin, fname,
                              sizeof fname);
                }
            }
        }
    }
    w->sum->functions++;
    nodes(w, c, 3, fname);
}

static void graph(tf_walk *w, stg_cursor c)
{
    stg_pb_field f, g;
    nodes(w, c, 1, NULL);
    while (next(w, &c, &f)) {
        if (f.number == 2 && is_len(w, &f)) {
            stg_cursor lib = f.sub;
            while (next(w, &lib, &g)) {
                if (g.number == 1 && is_len(w, &g)) {
                    function(w, g.sub);
                }
            }
        }
    }
}

stg_status stg_tf_check_savedmodel(const uint8_t *buf, size_t len, const stg_limits *lim,
                                   stg_report *r, stg_tf_summary *summary)
{
    if ((buf == NULL && len > 0) || lim == NULL || r == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_tf_summary scratch;
    tf_walk w = {lim, r, summary != NULL ? summary : &scratch, false};
    memset(w.sum, 0, sizeof *w.sum);
    stg_cursor c = stg_cur_make(buf, len);
    stg_pb_field f, g;
    while (next(&w, &c, &f)) {
        if (f.number != 2 || !is_len(&w, &f)) {
            continue;
        }
        w.sum->meta_graphs++;
        stg_cursor mg = f.sub;
        while (next(&w, &mg, &g)) {
            if (g.number == 2 && is_len(&w, &g)) {
                graph(&w, g.sub);
            }
        }
    }
    if (!w.failed && w.sum->meta_graphs == 0) {
        stg_report_add(r, STG_TF_SAVEDMODEL_MALFORMED, 0,
                       "the SavedModel holds no meta graph: TensorFlow cannot load it");
    }
    return STG_OK;
}

stg_status stg_tf_check_keras_metadata(const uint8_t *buf, size_t len, const stg_limits *lim,
                                       stg_report *r)
{
    if ((buf == NULL && len > 0) || lim == NULL || r == NULL) {
        return STG_E_BAD_ARG;
    }
    stg_tf_summary scratch;
    tf_walk w = {lim, r, &scratch, false};
    stg_cursor c = stg_cur_make(buf, len);
    stg_pb_field f, g;
    stg_status st = STG_OK;
    while (next(&w, &c, &f)) {
        if (f.number != 1 || !is_len(&w, &f)) {
            continue;
        }
        stg_cursor obj = f.sub;
        while (next(&w, &obj, &g)) {
            if (g.number == 5 && is_len(&w, &g) && st == STG_OK) {
                st = stg_keras_check_json(g.sub.base + g.sub.begin, g.sub.end - g.sub.begin,
                                          g.sub.begin, lim, r);
            }
        }
    }
    return st;
}
