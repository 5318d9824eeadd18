/* TensorFlow SavedModel rules (validator/savedmodel.c) over wire data built byte by byte in
 * TensorFlow's schema (SavedModel.meta_graphs = 2, MetaGraphDef.graph_def = 2, GraphDef.node =
 * 1 and library = 2, FunctionDefLibrary.function = 1, FunctionDef.signature = 1 (OpDef.name =
 * 1) and node_def = 3, NodeDef.op = 2; tf_keras SavedMetadata.nodes = 1, SavedObject.metadata =
 * 5): each tf_* code with a trigger (offset, both profiles) and a near miss, the labels by
 * name, and keras_metadata.pb judged by the Keras config rules. python3-protobuf written files
 * are checked by script_savedmodel.sh. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "codetest.h"
#include "testutil.h"

#define C STG_SEV_CRITICAL
#define E STG_SEV_ERROR
#define W STG_SEV_WARNING
#define NONE TU_NONE

static void varint(tu_buf *b, uint64_t v)
{
    do {
        uint8_t x = (uint8_t)(v & 0x7f);
        v >>= 7;
        x |= v != 0 ? 0x80 : 0;
        tu_buf_put(b, &x, 1);
    } while (v != 0);
}

/* A length-delimited field; returns the offset of its payload in b. */
static size_t field(tu_buf *b, uint32_t number, const void *p, size_t n)
{
    varint(b, (uint64_t)number << 3 | 2);
    varint(b, n);
    size_t at = b->n;
    tu_buf_put(b, p, n);
    return at;
}

static tu_buf node(const char *op)
{
    tu_buf n = {NULL, 0, 0};
    field(&n, 1, "n", 1);
    field(&n, 2, op, strlen(op));
    return n;
}

/* SavedModel { meta_graphs { graph_def { node {op: graph_op}; library { function {
 * signature {name: "f"}; node_def {op: fn_op} } } } } }; *graph_node / *fn_node: where those
 * NodeDefs' payloads start in the file. */
static tu_buf model(const char *graph_op, const char *fn_op, size_t *graph_node, size_t *fn_node)
{
    tu_buf gn = node(graph_op), fnn = node(fn_op);
    tu_buf sig = {NULL, 0, 0}, fn = {NULL, 0, 0}, lib = {NULL, 0, 0}, g = {NULL, 0, 0};
    tu_buf mg = {NULL, 0, 0}, sm = {NULL, 0, 0};
    field(&sig, 1, "f", 1);
    field(&fn, 1, sig.p, sig.n);
    size_t fn_at = field(&fn, 3, fnn.p, fnn.n);
    size_t lib_at = field(&lib, 1, fn.p, fn.n);
    size_t g_node = field(&g, 1, gn.p, gn.n);
    size_t g_lib = field(&g, 2, lib.p, lib.n);
    size_t mg_at = field(&mg, 2, g.p, g.n);
    varint(&sm, 1 << 3); /* saved_model_schema_version = 1 */
    varint(&sm, 1);
    size_t sm_at = field(&sm, 2, mg.p, mg.n);
    *graph_node = sm_at + mg_at + g_node;
    *fn_node = sm_at + mg_at + g_lib + lib_at + fn_at;
    free(gn.p), free(fnn.p), free(sig.p), free(fn.p), free(lib.p), free(g.p), free(mg.p);
    return sm;
}

static stg_report *run_named(const tu_buf *b, const char *name, stg_profile p)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    opt.limits.profile = p;
    stg_report *r = NULL;
    ck_assert_int_eq(
        stg_scan_buffer(b->p != NULL ? b->p : (const uint8_t *)"", b->n, name, &opt, &r), STG_OK);
    return r;
}

static stg_report *run_sm(const tu_buf *b, stg_profile p)
{
    return run_named(b, "export/saved_model.pb", p);
}

static stg_report *run_meta(const tu_buf *b, stg_profile p)
{
    return run_named(b, "export/keras_metadata.pb", p);
}

START_TEST(test_ops)
{
    size_t g, f;
    tu_buf b = model("ReadFile", "Relu", &g, &f);
    tu_expect(run_sm, &b, STG_TF_OP_UNSAFE, C, C, g);
    stg_report *r = run_sm(&b, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TF_SAVEDMODEL);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(b.p);
    /* in a function of the library, named in the message */
    b = model("Const", "WriteFile", &g, &f);
    tu_expect(run_sm, &b, STG_TF_OP_UNSAFE, C, C, f);
    r = run_sm(&b, STG_PROFILE_STRICT);
    const stg_finding *fd = stg_report_at(r, (size_t)tu_find(r, STG_TF_OP_UNSAFE));
    ck_assert_ptr_nonnull(strstr(fd->message, "in function f"));
    stg_report_free(r);
    free(b.p);
    /* PyFunc-like ops are a warning */
    b = model("Const", "EagerPyFunc", &g, &f);
    tu_expect(run_sm, &b, STG_TF_PYFUNC, W, W, f);
    tu_expect(run_sm, &b, STG_TF_OP_UNSAFE, NONE, NONE, STG_NO_OFFSET);
    free(b.p);
    b = model("PyFunc", "Relu", &g, &f);
    tu_expect(run_sm, &b, STG_TF_PYFUNC, W, W, g);
    free(b.p);
    /* near misses: the saver's ops, names that only start like a listed one */
    b = model("SaveV2", "RestoreV2", &g, &f);
    tu_expect_clean(run_sm, &b);
    free(b.p);
    b = model("ReadFileX", "PyFuncX", &g, &f);
    tu_expect_clean(run_sm, &b);
    free(b.p);
    /* the same bytes under another name are no SavedModel */
    b = model("ReadFile", "Relu", &g, &f);
    r = run_named(&b, "model.bin", STG_PROFILE_STRICT);
    ck_assert_int_ne(stg_report_format(r), STG_FMT_TF_SAVEDMODEL);
    ck_assert(tu_find(r, STG_TF_OP_UNSAFE) < 0);
    stg_report_free(r);
    free(b.p);
}
END_TEST

/* NodeDef { name, op: Const, attr { key: "value", value { tensor { dtype: DT_STRING (7),
 * string_val: path } } } } */
static tu_buf const_node(const char *name, const char *path)
{
    tu_buf t = {NULL, 0, 0}, v = {NULL, 0, 0}, e = {NULL, 0, 0}, n = {NULL, 0, 0};
    varint(&t, 1 << 3);
    varint(&t, 7);
    field(&t, 8, path, strlen(path));
    field(&v, 8, t.p, t.n);
    field(&e, 1, "value", 5);
    field(&e, 2, v.p, v.n);
    field(&n, 1, name, strlen(name));
    field(&n, 2, "Const", 5);
    field(&n, 5, e.p, e.n);
    free(t.p), free(v.p), free(e.p);
    return n;
}

/* A graph { Const p = path; <op>(p:0) } as a SavedModel; *op_at: the op's NodeDef. */
static tu_buf graph_const_into(const char *path, const char *op, size_t *op_at)
{
    tu_buf c = const_node("p", path), o = {NULL, 0, 0}, g = {NULL, 0, 0}, mg = {NULL, 0, 0};
    tu_buf sm = {NULL, 0, 0};
    field(&o, 1, "r", 1);
    field(&o, 2, op, strlen(op));
    field(&o, 3, "p:0", 3);
    field(&o, 3, "^init", 5);
    field(&g, 1, c.p, c.n);
    size_t o_at = field(&g, 1, o.p, o.n);
    size_t g_at = field(&mg, 2, g.p, g.n);
    size_t mg_at = field(&sm, 2, mg.p, mg.n);
    *op_at = mg_at + g_at + o_at;
    free(c.p), free(o.p), free(g.p), free(mg.p);
    return sm;
}

START_TEST(test_const_paths)
{
    size_t at;
    const char *escaping[] = {"/etc/passwd", "..\\..\\x", "a/../../b", "gs://bucket/ckpt", "C:\\w"};
    for (size_t i = 0; i < sizeof escaping / sizeof escaping[0]; i++) {
        tu_buf b = graph_const_into(escaping[i], "RestoreV2", &at);
        tu_expect(run_sm, &b, STG_TF_OP_UNSAFE, C, C, at);
        free(b.p);
    }
    /* near misses: TF1's save/Const "model" (the loader feeds its own path), a ".." inside a
     * name, an escaping path into an op that is no saver's */
    const char *fine[] = {"model", "variables/variables", "a..b/c"};
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        tu_buf b = graph_const_into(fine[i], "SaveV2", &at);
        tu_expect_clean(run_sm, &b);
        free(b.p);
    }
    tu_buf b = graph_const_into("/etc/passwd", "Identity", &at);
    tu_expect_clean(run_sm, &b);
    free(b.p);
}
END_TEST

START_TEST(test_malformed)
{
    size_t g, f;
    tu_buf b = model("Relu", "Relu", &g, &f);
    /* cut inside the graph: a length past its end */
    tu_buf cut = {NULL, 0, 0};
    tu_buf_put(&cut, b.p, g + 2);
    tu_expect(run_sm, &cut, STG_TF_SAVEDMODEL_MALFORMED, E, E, STG_NO_OFFSET);
    free(cut.p);
    /* meta_graphs (field 2) as a varint */
    tu_buf wire = {NULL, 0, 0};
    varint(&wire, 2 << 3 | 0);
    varint(&wire, 5);
    tu_expect(run_sm, &wire, STG_TF_SAVEDMODEL_MALFORMED, E, E, 0);
    free(wire.p);
    /* no meta graph at all */
    tu_buf empty = {NULL, 0, 0};
    tu_expect(run_sm, &empty, STG_TF_SAVEDMODEL_MALFORMED, E, E, 0);
    /* near miss */
    tu_expect(run_sm, &b, STG_TF_SAVEDMODEL_MALFORMED, NONE, NONE, STG_NO_OFFSET);
    free(b.p);
}
END_TEST

START_TEST(test_keras_metadata)
{
    static const char lambda[] =
        "{\"name\": \"lambda\", \"class_name\": \"Lambda\", \"config\": {\"function\": "
        "[\"4wE=\\n\", null, null], \"function_type\": \"lambda\"}}";
    static const char dense[] =
        "{\"name\": \"dense\", \"class_name\": \"Dense\", \"config\": {\"units\": 2}}";
    tu_buf obj = {NULL, 0, 0}, md = {NULL, 0, 0};
    varint(&obj, 2 << 3);
    varint(&obj, 1);
    field(&obj, 4, "_tf_keras_layer", 15);
    size_t meta_at = field(&obj, 5, lambda, sizeof lambda - 1);
    size_t obj_at = field(&md, 1, obj.p, obj.n);
    uint64_t want = obj_at + meta_at + (uint64_t)(strstr(lambda, "{\"function\"") - lambda);
    tu_expect(run_meta, &md, STG_KERAS_LAMBDA, C, C, want);
    stg_report *r = run_meta(&md, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS);
    stg_report_free(r);
    free(obj.p);
    free(md.p);
    /* near miss: a Dense layer's metadata */
    obj = (tu_buf){NULL, 0, 0};
    md = (tu_buf){NULL, 0, 0};
    field(&obj, 5, dense, sizeof dense - 1);
    field(&md, 1, obj.p, obj.n);
    tu_expect_clean(run_meta, &md);
    free(obj.p);
    free(md.p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("savedmodel");
    TCase *tc = tcase_create("savedmodel");
    tcase_add_test(tc, test_ops);
    tcase_add_test(tc, test_const_paths);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_keras_metadata);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
