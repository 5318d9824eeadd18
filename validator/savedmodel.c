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
    uint64_t at = 0;
    stg_pb_status s = stg_pb_next(c, f, &at);
    if (s == STG_PB_OK) {
        return true;
    }
    if (s != STG_PB_END) {
        stg_report_add(w->r, STG_TF_SAVEDMODEL_MALFORMED, at,
                       "the SavedModel's protobuf wire data is refused (%s): not judged past "
                       "this point",
                       stg_pb_status_text(s));
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

/* One NodeDef: its op judged (the last op field wins, as protobuf merges a repeated scalar). */
static void node(tf_walk *w, stg_cursor c, const char *function)
{
    stg_pb_field f;
    const uint8_t *op = NULL;
    size_t op_len = 0;
    uint64_t at = c.begin;
    while (next(w, &c, &f)) {
        if (f.number == 2 && is_len(w, &f)) {
            op = f.sub.base + f.sub.begin;
            op_len = f.sub.end - f.sub.begin;
        }
    }
    if (w->failed || op == NULL) {
        return;
    }
    w->sum->nodes++;
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
    while (next(w, &c, &f)) {
        if (f.number == 3 && is_len(w, &f)) {
            node(w, f.sub, fname);
        }
    }
}

static void graph(tf_walk *w, stg_cursor c)
{
    stg_pb_field f, g;
    while (next(w, &c, &f)) {
        if (f.number == 1 && is_len(w, &f)) {
            node(w, f.sub, NULL);
        } else if (f.number == 2 && is_len(w, &f)) {
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
