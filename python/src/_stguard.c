/* stguard._stguard: the CPython extension over libstguard's public API (include/stguard/stguard.h).
 * It converts arguments and results and releases the GIL while C runs; the pure-Python layer
 * (stguard/__init__.py) builds the immutable Report objects, the exceptions that carry them and
 * the safetensors-like loading surface. Nothing here parses model bytes.
 *
 * Thread safety: a Policy is built once and never changed afterwards (the Python layer offers no
 * mutator), so scans on several threads may share it; a File or Model serialises its reads with
 * nothing but the library's own guarantees (pread on a read-only descriptor), and close() waits
 * for no one: it is refused while a read on another thread holds the object (busy counter). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <stguard/stguard.h>

/* The converter's evaluator, for load_pickle: linked from the same static library, so its
 * internal structures are this build's (convert/load.h). */
#include "convert/load.h"

static PyObject *stguard_error;      /* StguardError(Exception): .status is the status name */
static PyObject *file_changed_error; /* FileChangedError(StguardError) */

/* --------------------------------------------------------------------------- errors */

/* Raises the exception that status s maps to and returns NULL. */
static PyObject *raise_status(stg_status s, const char *what)
{
    const char *name = stg_status_name(s);
    PyObject *type = stguard_error;
    switch (s) {
    case STG_E_NOMEM: return PyErr_NoMemory();
    case STG_E_BAD_ARG:
        PyErr_Format(PyExc_ValueError, "%s: invalid argument (%s)", what, name);
        return NULL;
    case STG_E_RANGE:
        PyErr_Format(PyExc_IndexError, "%s: out of range (%s)", what, name);
        return NULL;
    case STG_FILE_CHANGED: type = file_changed_error; break;
    default: break;
    }
    PyObject *exc = PyObject_CallFunction(type, "s", what);
    if (exc != NULL) {
        PyObject *st = PyUnicode_FromString(name);
        if (st != NULL) {
            PyObject_SetAttrString(exc, "status", st);
            Py_DECREF(st);
        }
        PyErr_SetObject(type, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

/* Bytes the library owns, possibly not UTF-8 or holding NUL: str with surrogateescape, so the
 * exact bytes survive a round trip (os.fsencode-style). */
static PyObject *text(const char *s, size_t len)
{
    if (s == NULL) {
        Py_RETURN_NONE;
    }
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)len, "surrogateescape");
}

static PyObject *ctext(const char *s)
{
    return text(s, s == NULL ? 0 : strlen(s));
}

/* --------------------------------------------------------------------------- limits */

typedef struct limit_field {
    const char *name;
    size_t offset;
    size_t size; /* 4 or 8 */
} limit_field;

#define LIMIT_FIELD(f)                                            \
    {                                                             \
#f, offsetof(stg_limits, f), sizeof(((stg_limits *)0)->f) \
    }
static const limit_field limit_fields[] = {
    LIMIT_FIELD(max_header_len),    LIMIT_FIELD(max_tensors),
    LIMIT_FIELD(max_rank),          LIMIT_FIELD(max_json_depth),
    LIMIT_FIELD(max_name_len),      LIMIT_FIELD(max_metadata_entries),
    LIMIT_FIELD(max_memory),        LIMIT_FIELD(max_findings),
    LIMIT_FIELD(max_pickle_stack),  LIMIT_FIELD(max_pickle_memo),
    LIMIT_FIELD(max_pickle_string), LIMIT_FIELD(max_nesting),
    LIMIT_FIELD(max_inflate_bytes), LIMIT_FIELD(max_inflate_ratio),
};
#undef LIMIT_FIELD

/* limit_defaults() -> {name: int}: the documented defaults, field by field. */
static PyObject *py_limit_defaults(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    stg_limits lim;
    stg_limits_default(&lim);
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof limit_fields / sizeof limit_fields[0]; i++) {
        const limit_field *f = &limit_fields[i];
        const unsigned char *p = (const unsigned char *)&lim + f->offset;
        uint64_t v;
        if (f->size == 8) {
            memcpy(&v, p, 8);
        } else {
            uint32_t v32;
            memcpy(&v32, p, 4);
            v = v32;
        }
        PyObject *o = PyLong_FromUnsignedLongLong(v);
        if (o == NULL || PyDict_SetItemString(d, f->name, o) < 0) {
            Py_XDECREF(o);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(o);
    }
    return d;
}

/* Fills *lim from a dict {name: str} (values already strings, profile included) through
 * stg_limits_set, the same parser the CLI's --limit uses. */
static int limits_from(PyObject *spec, stg_limits *lim)
{
    stg_limits_default(lim);
    if (spec == NULL || spec == Py_None) {
        return 0;
    }
    if (!PyDict_Check(spec)) {
        PyErr_SetString(PyExc_TypeError, "limits must be a dict of name -> str");
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(spec, &pos, &k, &v)) {
        const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        const char *value = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (name == NULL || value == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "limit names and values must be str");
            }
            return -1;
        }
        stg_status s = stg_limits_set(lim, name, value);
        if (s == STG_E_NOT_FOUND) {
            PyErr_Format(PyExc_ValueError, "unknown limit %R", k);
            return -1;
        }
        if (s != STG_OK) {
            PyErr_Format(PyExc_ValueError, "bad value %R for limit %R (or above its ceiling)", v,
                         k);
            return -1;
        }
    }
    return 0;
}

/* --------------------------------------------------------------------------- policy */

typedef struct policy_object {
    PyObject_HEAD stg_policy *p;
} policy_object;

static PyTypeObject policy_type;

static int policy_init(policy_object *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "", kwlist)) {
        return -1;
    }
    if (self->p != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a policy is initialised once");
        return -1;
    }
    stg_status s = stg_policy_new(&self->p);
    if (s != STG_OK) {
        raise_status(s, "stg_policy_new");
        return -1;
    }
    return 0;
}

static void policy_dealloc(policy_object *self)
{
    stg_policy_free(self->p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int policy_ready(policy_object *self)
{
    if (self->p == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "policy not initialised");
        return -1;
    }
    return 0;
}

/* _add(list, module, name_or_None): list 0 = allow, 1 = deny. */
static PyObject *policy_add(policy_object *self, PyObject *args)
{
    int list;
    const char *module, *name = NULL;
    if (!PyArg_ParseTuple(args, "isz", &list, &module, &name) || policy_ready(self) < 0) {
        return NULL;
    }
    if (list != STG_POLICY_ALLOW && list != STG_POLICY_DENY) {
        PyErr_SetString(PyExc_ValueError, "list must be 0 (allow) or 1 (deny)");
        return NULL;
    }
    stg_status s = stg_policy_add(self->p, (stg_policy_list)list, module, name);
    if (s != STG_OK) {
        return raise_status(s, "policy entry refused (the hard-block list cannot be allowed)");
    }
    Py_RETURN_NONE;
}

static PyObject *policy_allow_spec(policy_object *self, PyObject *args)
{
    const char *spec;
    if (!PyArg_ParseTuple(args, "s", &spec) || policy_ready(self) < 0) {
        return NULL;
    }
    stg_status s = stg_policy_allow_spec(self->p, spec);
    if (s != STG_OK) {
        return raise_status(s, "MODULE:NAME refused (malformed, or on the hard-block list)");
    }
    Py_RETURN_NONE;
}

static PyObject *policy_load(policy_object *self, PyObject *args)
{
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b)) {
        return NULL;
    }
    if (policy_ready(self) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    uint64_t line = 0;
    stg_status s = stg_policy_load(self->p, b.buf, (size_t)b.len, &line);
    PyBuffer_Release(&b);
    if (s != STG_OK) {
        PyErr_Format(PyExc_ValueError, "policy file rejected at line %llu (%s)",
                     (unsigned long long)line, stg_status_name(s));
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef policy_methods[] = {
    {"_add", (PyCFunction)policy_add, METH_VARARGS, "add (list, module, name or None)"},
    {"_allow_spec", (PyCFunction)policy_allow_spec, METH_VARARGS, "allow MODULE:NAME"},
    {"_load", (PyCFunction)policy_load, METH_VARARGS, "load a policy file's bytes"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject policy_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "stguard._stguard.Policy",
    .tp_basicsize = sizeof(policy_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)policy_init,
    .tp_dealloc = (destructor)policy_dealloc,
    .tp_methods = policy_methods,
    .tp_doc = "The C policy: built once by stguard.Policy, read-only afterwards.",
};

/* --------------------------------------------------------------------------- reports */

static PyObject *finding_tuple(const stg_finding *f)
{
    PyObject *offset = f->has_offset ? PyLong_FromUnsignedLongLong(f->offset) : Py_NewRef(Py_None);
    PyObject *member_offset = f->has_member_offset ? PyLong_FromUnsignedLongLong(f->member_offset)
                                                   : Py_NewRef(Py_None);
    PyObject *t = NULL;
    if (offset != NULL && member_offset != NULL) {
        /* code, severity, offset, message, tensor, module, name, member, member_offset, limit */
        t = Py_BuildValue("(ssONNNNNON)", stg_code_name(f->code), stg_severity_name(f->severity),
                          offset, ctext(f->message), text(f->tensor, f->tensor_len),
                          text(f->module, f->module_len), text(f->name, f->name_len),
                          ctext(f->member), member_offset, ctext(f->limit));
    }
    Py_XDECREF(offset);
    Py_XDECREF(member_offset);
    return t;
}

static PyObject *global_tuple(const stg_global *g)
{
    return Py_BuildValue("(NNKNs)", text(g->module, g->module_len), text(g->name, g->name_len),
                         (unsigned long long)g->offset, ctext(g->member),
                         stg_global_class_name(g->klass));
}

/* The report as a plain tuple; the Python layer wraps it in immutable objects:
 * (path, blob, format, size, sha256, verdict, findings, globals, truncated). */
static PyObject *report_tuple(const stg_report *r)
{
    size_t nf = stg_report_count(r), ng = stg_report_global_count(r);
    PyObject *findings = PyTuple_New((Py_ssize_t)nf);
    PyObject *globals = findings == NULL ? NULL : PyTuple_New((Py_ssize_t)ng);
    if (globals == NULL) {
        Py_XDECREF(findings);
        return NULL;
    }
    for (size_t i = 0; i < nf; i++) {
        PyObject *t = finding_tuple(stg_report_at(r, i));
        if (t == NULL) {
            Py_DECREF(findings);
            Py_DECREF(globals);
            return NULL;
        }
        PyTuple_SET_ITEM(findings, (Py_ssize_t)i, t);
    }
    for (size_t i = 0; i < ng; i++) {
        PyObject *t = global_tuple(stg_report_global_at(r, i));
        if (t == NULL) {
            Py_DECREF(findings);
            Py_DECREF(globals);
            return NULL;
        }
        PyTuple_SET_ITEM(globals, (Py_ssize_t)i, t);
    }
    return Py_BuildValue("(NNsKNsNNK)", ctext(stg_report_path(r)), ctext(stg_report_blob(r)),
                         stg_format_name(stg_report_format(r)),
                         (unsigned long long)stg_report_size(r), ctext(stg_report_sha256(r)),
                         stg_verdict_name(stg_report_verdict(r)), findings, globals,
                         (unsigned long long)stg_report_truncated(r));
}

/* Consumes r. */
static PyObject *report_result(stg_report *r)
{
    PyObject *t = report_tuple(r);
    stg_report_free(r);
    return t;
}

/* --------------------------------------------------------------------------- scanning */

/* limits (dict or None), policy (Policy or None), digest (bool), expected_sha256 (str or None) */
static int scan_options_from(PyObject *limits, PyObject *policy, int digest, const char *expected,
                             stg_scan_options *opt)
{
    stg_scan_options_default(opt);
    if (limits_from(limits, &opt->limits) < 0) {
        return -1;
    }
    if (policy != NULL && policy != Py_None) {
        if (!PyObject_TypeCheck(policy, &policy_type)) {
            PyErr_SetString(PyExc_TypeError, "policy must be a stguard.Policy");
            return -1;
        }
        if (policy_ready((policy_object *)policy) < 0) {
            return -1;
        }
        opt->policy = ((policy_object *)policy)->p;
    }
    opt->digest = digest != 0;
    opt->expected_sha256 = expected;
    return 0;
}

/* scan_path(path, limits, policy, digest, expected_sha256, root) -> report tuple */
static PyObject *py_scan_path(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path = NULL, *root = NULL, *limits, *policy;
    int digest;
    const char *expected;
    if (!PyArg_ParseTuple(args, "O&OOpzO", PyUnicode_FSConverter, &path, &limits, &policy, &digest,
                          &expected, &root)) {
        return NULL;
    }
    PyObject *root_bytes = NULL;
    if (root != Py_None && !PyUnicode_FSConverter(root, &root_bytes)) {
        Py_DECREF(path);
        return NULL;
    }
    stg_scan_options opt;
    if (scan_options_from(limits, policy, digest, expected, &opt) < 0) {
        Py_DECREF(path);
        Py_XDECREF(root_bytes);
        return NULL;
    }
    opt.root = root_bytes != NULL ? PyBytes_AS_STRING(root_bytes) : NULL;
    Py_INCREF(policy); /* kept alive while the GIL is released */
    stg_report *r = NULL;
    stg_status s;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS s = stg_scan_path(p, &opt, &r);
    Py_END_ALLOW_THREADS Py_DECREF(policy);
    Py_DECREF(path);
    Py_XDECREF(root_bytes);
    if (s != STG_OK) {
        stg_report_free(r);
        return raise_status(s, "stg_scan_path");
    }
    return report_result(r);
}

/* scan_buffer(buffer, name_hint, limits, policy, digest, expected_sha256) -> report tuple.
 * Zero-copy: the buffer (bytes, bytearray, memoryview, mmap) is read in place while the GIL is
 * released; the buffer export keeps it from being resized meanwhile. */
static PyObject *py_scan_buffer(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b;
    const char *hint, *expected;
    PyObject *limits, *policy;
    int digest;
    if (!PyArg_ParseTuple(args, "y*zOOpz", &b, &hint, &limits, &policy, &digest, &expected)) {
        return NULL;
    }
    stg_scan_options opt;
    if (scan_options_from(limits, policy, digest, expected, &opt) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    Py_INCREF(policy);
    stg_report *r = NULL;
    stg_status s;
    Py_BEGIN_ALLOW_THREADS s = stg_scan_buffer(b.buf, (size_t)b.len, hint, &opt, &r);
    Py_END_ALLOW_THREADS Py_DECREF(policy);
    PyBuffer_Release(&b);
    if (s != STG_OK) {
        stg_report_free(r);
        return raise_status(s, "stg_scan_buffer");
    }
    return report_result(r);
}

/* --------------------------------------------------------------------------- tree scans */

typedef struct tree_ctx {
    PyObject *callback; /* callback(report_tuple, kind) -> bool: False stops the scan */
    volatile int cancel;
    PyObject *exc_type, *exc_value, *exc_tb; /* the callback's exception, re-raised at the end */
} tree_ctx;

static const char *tree_kind_name(stg_tree_kind k)
{
    switch (k) {
    case STG_TREE_FILE: return "file";
    case STG_TREE_LINK: return "link";
    case STG_TREE_STDIN: return "stdin";
    case STG_TREE_NOT_READ: return "not_read";
    }
    return "unknown";
}

/* Called by stg_scan_tree on the thread that called it, which released the GIL. */
static void tree_on_record(void *user, const stg_tree_record *rec)
{
    tree_ctx *t = user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (t->exc_type == NULL && !t->cancel) {
        PyObject *raw = report_tuple(rec->report);
        PyObject *res = raw == NULL ? NULL
                                    : PyObject_CallFunction(t->callback, "Ns", raw,
                                                            tree_kind_name(rec->kind));
        int go_on = res == NULL ? -1 : PyObject_IsTrue(res);
        Py_XDECREF(res);
        if (go_on < 0) {
            PyErr_Fetch(&t->exc_type, &t->exc_value, &t->exc_tb);
            if (t->exc_type == NULL) {
                t->exc_type = Py_NewRef(PyExc_SystemError);
            }
        }
        if (go_on <= 0) {
            t->cancel = 1;
        }
    }
    PyGILState_Release(g);
}

/* A list of str/bytes/PathLike -> NULL-free array of C strings kept alive by *keep (a list). */
static const char **path_array(PyObject *seq, const char *what, PyObject *keep, size_t *count)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    const char **out = PyMem_Calloc((size_t)n + 1, sizeof *out);
    if (out == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = NULL;
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(fast, i), &b) ||
            PyList_Append(keep, b) < 0) {
            Py_XDECREF(b);
            Py_DECREF(fast);
            PyMem_Free(out);
            return NULL;
        }
        out[i] = PyBytes_AS_STRING(b);
        Py_DECREF(b);
    }
    Py_DECREF(fast);
    *count = (size_t)n;
    return out;
}

static PyObject *tree_summary_dict(const stg_tree_summary *s)
{
    return Py_BuildValue(
        "{s:O,s:K,s:K,s:{s:K,s:K,s:K,s:K,s:K},s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "interrupted",
        s->interrupted ? Py_True : Py_False, "records", (unsigned long long)s->records,
        "records_total", (unsigned long long)s->records_total, "verdicts", "ok",
        (unsigned long long)s->verdicts[STG_VERDICT_OK], "warn",
        (unsigned long long)s->verdicts[STG_VERDICT_WARN], "invalid",
        (unsigned long long)s->verdicts[STG_VERDICT_INVALID], "unsafe",
        (unsigned long long)s->verdicts[STG_VERDICT_UNSAFE], "error",
        (unsigned long long)s->verdicts[STG_VERDICT_ERROR], "bytes", (unsigned long long)s->bytes,
        "files_read", (unsigned long long)s->files_read, "skipped_self",
        (unsigned long long)s->skipped_self, "skipped_git", (unsigned long long)s->skipped_git,
        "skipped_no_exist", (unsigned long long)s->skipped_no_exist, "skipped_locks",
        (unsigned long long)s->skipped_locks, "skipped_incomplete",
        (unsigned long long)s->skipped_incomplete);
}

/* scan_tree(paths, include, exclude, follow_links, hf_cache, scan_git, threads, shard_index,
 *           shard_count, limits, policy, digest, callback) -> summary dict */
static PyObject *py_scan_tree(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *paths, *include, *exclude, *limits, *policy, *callback;
    int follow_links, hf_cache, scan_git, digest;
    unsigned int threads, shard_index, shard_count;
    if (!PyArg_ParseTuple(args, "OOOpppIIIOOpO", &paths, &include, &exclude, &follow_links,
                          &hf_cache, &scan_git, &threads, &shard_index, &shard_count, &limits,
                          &policy, &digest, &callback)) {
        return NULL;
    }
    if (!PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError, "callback must be callable");
        return NULL;
    }
    stg_tree_options opt;
    stg_tree_options_default(&opt);
    if (scan_options_from(limits, policy, digest, NULL, &opt.scan) < 0) {
        return NULL;
    }
    PyObject *keep = PyList_New(0);
    if (keep == NULL) {
        return NULL;
    }
    size_t npaths = 0, ninc = 0, nexc = 0;
    const char **cpaths = path_array(paths, "paths must be a sequence", keep, &npaths);
    const char **cinc = cpaths == NULL ? NULL : path_array(include, "include", keep, &ninc);
    const char **cexc = cinc == NULL ? NULL : path_array(exclude, "exclude", keep, &nexc);
    PyObject *result = NULL;
    if (cexc != NULL) {
        opt.include = cinc;
        opt.include_count = ninc;
        opt.exclude = cexc;
        opt.exclude_count = nexc;
        opt.follow_links = follow_links != 0;
        opt.hf_cache = hf_cache != 0;
        opt.scan_git = scan_git != 0;
        opt.threads = threads;
        opt.shard_index = shard_index;
        opt.shard_count = shard_count;
        tree_ctx t = {.callback = callback};
        opt.cancel = (const volatile int *)&t.cancel;
        stg_tree_summary sum;
        memset(&sum, 0, sizeof sum);
        stg_status s;
        Py_INCREF(policy);
        Py_INCREF(callback);
        Py_BEGIN_ALLOW_THREADS s = stg_scan_tree(cpaths, npaths, &opt, tree_on_record, &t, &sum);
        Py_END_ALLOW_THREADS Py_DECREF(callback);
        Py_DECREF(policy);
        if (t.exc_type != NULL) {
            PyErr_Restore(t.exc_type, t.exc_value, t.exc_tb);
        } else if (s != STG_OK) {
            raise_status(s,
                         "stg_scan_tree (no paths, \"-\" twice, or a bad thread or shard count)");
        } else {
            result = tree_summary_dict(&sum);
        }
    }
    PyMem_Free(cpaths);
    PyMem_Free(cinc);
    PyMem_Free(cexc);
    Py_DECREF(keep);
    return result;
}

/* --------------------------------------------------------------------------- tensors */

static PyObject *tensor_tuple(const stg_tensor *t, size_t index)
{
    PyObject *shape = PyTuple_New((Py_ssize_t)t->rank);
    if (shape == NULL) {
        return NULL;
    }
    for (uint32_t i = 0; i < t->rank; i++) {
        PyObject *d = PyLong_FromUnsignedLongLong(t->shape[i]);
        if (d == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        PyTuple_SET_ITEM(shape, i, d);
    }
    /* index, name, dtype, shape, begin, end, shard */
    return Py_BuildValue("(nNsNKKI)", (Py_ssize_t)index, text(t->name, t->name_len),
                         stg_dtype_name(t->dtype), shape, (unsigned long long)t->begin,
                         (unsigned long long)t->end, (unsigned int)t->shard);
}

/* A File or a Model: the same Python type over either handle. */
typedef struct handle_object {
    PyObject_HEAD stg_file *file;
    stg_model *model;
    Py_ssize_t busy; /* reads running with the GIL released */
} handle_object;

static PyTypeObject handle_type;

static void handle_release(handle_object *h)
{
    stg_file_close(h->file);
    stg_model_close(h->model);
    h->file = NULL;
    h->model = NULL;
}

static void handle_dealloc(handle_object *self)
{
    handle_release(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int handle_open(const handle_object *h)
{
    if (h->file == NULL && h->model == NULL) {
        PyErr_SetString(PyExc_ValueError, "the file is closed");
        return -1;
    }
    return 0;
}

static size_t handle_count(const handle_object *h)
{
    return h->file != NULL ? stg_file_tensor_count(h->file) : stg_model_tensor_count(h->model);
}

static const stg_tensor *handle_at(const handle_object *h, size_t i)
{
    return h->file != NULL ? stg_file_tensor_at(h->file, i) : stg_model_tensor_at(h->model, i);
}

/* tensors() -> tuple of (index, name, dtype, shape, begin, end, shard) in data order */
static PyObject *handle_tensors(handle_object *self, PyObject *noargs)
{
    (void)noargs;
    if (handle_open(self) < 0) {
        return NULL;
    }
    size_t n = handle_count(self);
    PyObject *out = PyTuple_New((Py_ssize_t)n);
    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        PyObject *t = tensor_tuple(handle_at(self, i), i);
        if (t == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    return out;
}

/* metadata() -> tuple of (key, value); () for a model */
static PyObject *handle_metadata(handle_object *self, PyObject *noargs)
{
    (void)noargs;
    if (handle_open(self) < 0) {
        return NULL;
    }
    size_t n = self->file != NULL ? stg_file_metadata_count(self->file) : 0;
    PyObject *out = PyTuple_New((Py_ssize_t)n);
    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *k, *v;
        size_t kl, vl;
        stg_status s = stg_file_metadata_at(self->file, i, &k, &kl, &v, &vl);
        PyObject *t = s == STG_OK ? Py_BuildValue("(NN)", text(k, kl), text(v, vl))
                                  : raise_status(s, "stg_file_metadata_at");
        if (t == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    return out;
}

/* read(index, offset=0, length=None) -> bytearray of the tensor's bytes [offset, offset+length),
 * copied with pread (the safe path: a file changed meanwhile raises FileChangedError). */
static PyObject *handle_read(handle_object *self, PyObject *args)
{
    Py_ssize_t index;
    unsigned long long offset = 0;
    PyObject *length_obj = Py_None;
    if (!PyArg_ParseTuple(args, "n|KO", &index, &offset, &length_obj) || handle_open(self) < 0) {
        return NULL;
    }
    if (index < 0 || (size_t)index >= handle_count(self)) {
        PyErr_SetString(PyExc_IndexError, "tensor index out of range");
        return NULL;
    }
    const stg_tensor *t = handle_at(self, (size_t)index);
    uint64_t size = t->end - t->begin;
    uint64_t length;
    if (length_obj == Py_None) {
        length = offset <= size ? size - offset : 0;
    } else {
        length = PyLong_AsUnsignedLongLong(length_obj);
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    if (offset > size || length > size - offset || length > (uint64_t)PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_IndexError, "byte range outside the tensor");
        return NULL;
    }
    PyObject *out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)length);
    if (out == NULL) {
        return NULL;
    }
    char *dst = PyByteArray_AS_STRING(out);
    stg_status s;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS s = self->file != NULL
                                   ? stg_file_read_tensor_range(self->file, t, offset, dst,
                                                                (size_t)length)
                                   : stg_model_read_tensor_range(self->model, t, offset, dst,
                                                                 (size_t)length);
    Py_END_ALLOW_THREADS self->busy--;
    if (s != STG_OK) {
        Py_DECREF(out);
        return raise_status(s, "reading tensor bytes");
    }
    return out;
}

static PyObject *handle_close(handle_object *self, PyObject *noargs)
{
    (void)noargs;
    if (self->busy > 0) {
        PyErr_SetString(PyExc_RuntimeError, "close() while a read is running on another thread");
        return NULL;
    }
    handle_release(self);
    Py_RETURN_NONE;
}

/* shards() -> tuple of shard file names (a model), () for a file */
static PyObject *handle_shards(handle_object *self, PyObject *noargs)
{
    (void)noargs;
    if (handle_open(self) < 0) {
        return NULL;
    }
    size_t n = self->model != NULL ? stg_model_shard_count(self->model) : 0;
    PyObject *out = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; out != NULL && i < n; i++) {
        PyObject *s = ctext(stg_model_shard_name(self->model, i));
        if (s == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, s);
    }
    return out;
}

static PyMethodDef handle_methods[] = {
    {"tensors", (PyCFunction)handle_tensors, METH_NOARGS, "validated tensors in data order"},
    {"metadata", (PyCFunction)handle_metadata, METH_NOARGS, "__metadata__ entries"},
    {"read", (PyCFunction)handle_read, METH_VARARGS, "copy a tensor's bytes (pread)"},
    {"shards", (PyCFunction)handle_shards, METH_NOARGS, "shard file names of a model"},
    {"close", (PyCFunction)handle_close, METH_NOARGS, "release the file"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject handle_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "stguard._stguard.Handle",
    .tp_basicsize = sizeof(handle_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)handle_dealloc,
    .tp_methods = handle_methods,
    .tp_doc = "A validated safetensors file or sharded model (see stguard.safe_open).",
};

/* open_file(path, limits) -> (Handle or None, report tuple): None when the file is invalid. */
static PyObject *open_common(PyObject *args, bool model)
{
    PyObject *path = NULL, *limits;
    if (!PyArg_ParseTuple(args, "O&O", PyUnicode_FSConverter, &path, &limits)) {
        return NULL;
    }
    stg_limits lim;
    if (limits_from(limits, &lim) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    stg_file *f = NULL;
    stg_model *m = NULL;
    stg_report *r = NULL;
    stg_status s;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS s = model ? stg_model_open(p, &lim, &m, &r)
                                     : stg_file_open(p, &lim, &f, &r);
    Py_END_ALLOW_THREADS Py_DECREF(path);
    if (s != STG_OK && s != STG_E_INVALID && r == NULL) {
        return raise_status(s, model ? "stg_model_open" : "stg_file_open");
    }
    PyObject *rep = r != NULL ? report_result(r) : Py_NewRef(Py_None);
    if (rep == NULL) {
        stg_file_close(f);
        stg_model_close(m);
        return NULL;
    }
    PyObject *h = Py_None;
    if (f != NULL || m != NULL) {
        handle_object *o = PyObject_New(handle_object, &handle_type);
        if (o == NULL) {
            stg_file_close(f);
            stg_model_close(m);
            Py_DECREF(rep);
            return NULL;
        }
        o->file = f;
        o->model = m;
        o->busy = 0;
        h = (PyObject *)o;
    } else {
        Py_INCREF(h);
    }
    return Py_BuildValue("(NNs)", h, rep, stg_status_name(s));
}

static PyObject *py_open_file(PyObject *self, PyObject *args)
{
    (void)self;
    return open_common(args, false);
}

static PyObject *py_open_model(PyObject *self, PyObject *args)
{
    (void)self;
    return open_common(args, true);
}

/* validate_buffer(buffer, limits) -> (report tuple, tensors tuple, data start): safetensors
 * bytes validated in place (stg_stream, one chunk; the GIL released), and the validated tensor
 * table (empty when the header is invalid) with the data section's start, for stguard.load and
 * for save's check of its own output. */
static PyObject *py_validate_buffer(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b;
    PyObject *limits;
    if (!PyArg_ParseTuple(args, "y*O", &b, &limits)) {
        return NULL;
    }
    stg_limits lim;
    stg_stream_options so;
    stg_stream_options_default(&so);
    so.digest = false;
    stg_stream *st = NULL;
    stg_status s = limits_from(limits, &lim) < 0 ? STG_E_BAD_ARG : stg_stream_new(&lim, &so, &st);
    if (s != STG_OK) {
        PyBuffer_Release(&b);
        return PyErr_Occurred() ? NULL : raise_status(s, "stg_stream_new");
    }
    stg_report *r = NULL;
    Py_BEGIN_ALLOW_THREADS s = stg_stream_feed(st, b.buf, (size_t)b.len);
    if (s == STG_OK || s == STG_E_INVALID) { /* a bad header: finish has the report */
        s = stg_stream_finish(st, &r);
    }
    Py_END_ALLOW_THREADS uint64_t header_len = 0;
    if (b.len >= 8) {
        const unsigned char *p = b.buf;
        for (int i = 7; i >= 0; i--) {
            header_len = header_len << 8 | p[i];
        }
    }
    PyBuffer_Release(&b);
    PyObject *result = NULL;
    if (r == NULL) { /* an invalid input still has its report (STG_E_INVALID) */
        raise_status(s, "stg_stream_finish");
    } else {
        size_t n = stg_stream_tensor_count(st);
        PyObject *tensors = PyTuple_New((Py_ssize_t)n);
        for (size_t i = 0; tensors != NULL && i < n; i++) {
            PyObject *t = tensor_tuple(stg_stream_tensor_at(st, i), i);
            if (t == NULL) {
                Py_CLEAR(tensors);
                break;
            }
            PyTuple_SET_ITEM(tensors, (Py_ssize_t)i, t);
        }
        PyObject *rep = report_result(r);
        if (tensors != NULL && rep != NULL) {
            result = Py_BuildValue("(NNK)", rep, tensors, (unsigned long long)(8 + header_len));
        } else {
            Py_XDECREF(tensors);
            Py_XDECREF(rep);
        }
    }
    stg_stream_free(st);
    return result;
}

/* --------------------------------------------------------------------------- load_pickle */

/* Deeper nesting than this is refused rather than walked (the walk recurses). */
#define STG_PY_VALUE_DEPTH 200

typedef struct value_walk {
    PyObject *make_storage; /* make_storage(bytearray, dtype name, big_endian) */
    PyObject *make_tensor;  /* make_tensor(storage, offset, shape, stride, requires_grad,
                             * parameter) */
    PyObject *seen;         /* {address of a stg_cv or stg_cv_storage: the object made for it} */
} value_walk;

static PyObject *value_of(value_walk *w, const stg_cv *v, unsigned depth);

static PyObject *u64_tuple(const uint64_t *p, uint32_t n)
{
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (uint32_t i = 0; t != NULL && i < n; i++) {
        PyObject *d = PyLong_FromUnsignedLongLong(p[i]);
        if (d == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, d);
    }
    return t;
}

/* The object for a storage, made once (its bytes copied out of the input, so the result
 * outlives it): a storage of the persistent-id table or a .npy member's own. Its bytes were
 * checked by the evaluator: at least numel x elsize of them, numel x elsize not overflowing. */
static PyObject *storage_of(value_walk *w, const stg_cv_storage *s)
{
    PyObject *key = PyLong_FromVoidPtr((void *)s);
    PyObject *o = key == NULL ? NULL : PyDict_GetItemWithError(w->seen, key);
    if (o != NULL || key == NULL || PyErr_Occurred()) {
        Py_XDECREF(key);
        Py_XINCREF(o);
        return o;
    }
    uint64_t n = s->numel * s->elsize;
    PyObject *bytes = n > (uint64_t)PY_SSIZE_T_MAX
                          ? PyErr_NoMemory()
                          : PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (bytes != NULL) {
        char *dst = PyByteArray_AS_STRING(bytes);
        Py_BEGIN_ALLOW_THREADS memcpy(dst, s->data, (size_t)n);
        Py_END_ALLOW_THREADS o = PyObject_CallFunction(w->make_storage, "OsO", bytes,
                                                       stg_dtype_name(s->dtype),
                                                       s->big_endian ? Py_True : Py_False);
        Py_DECREF(bytes);
    }
    if (o != NULL && PyDict_SetItem(w->seen, key, o) < 0) {
        Py_CLEAR(o);
    }
    Py_DECREF(key);
    return o;
}

/* true when every element of the view lies inside its storage's numel elements: the evaluator
 * checks this (docs/convert.md, "Check tensors"); checked again here because numpy's as_strided
 * would read outside the buffer without a word. */
static bool view_inside(const stg_cv_tensor *t)
{
    uint64_t last = t->storage_offset;
    for (uint32_t i = 0; i < t->rank; i++) {
        if (t->shape[i] == 0) {
            return true; /* no element */
        }
        uint64_t step;
        if (__builtin_mul_overflow(t->shape[i] - 1, t->stride[i], &step) ||
            __builtin_add_overflow(last, step, &last)) {
            return false;
        }
    }
    return last < t->storage->numel;
}

static PyObject *tensor_of(value_walk *w, const stg_cv_tensor *t)
{
    if (!view_inside(t)) {
        PyErr_SetString(PyExc_ValueError, "a tensor view reaches outside its storage");
        return NULL;
    }
    PyObject *st = storage_of(w, t->storage);
    if (st == NULL) {
        return NULL;
    }
    PyObject *o = PyObject_CallFunction(
        w->make_tensor, "OKNNOO", st, (unsigned long long)t->storage_offset,
        u64_tuple(t->shape, t->rank), u64_tuple(t->stride, t->rank),
        t->requires_grad ? Py_True : Py_False, t->parameter ? Py_True : Py_False);
    Py_DECREF(st);
    return o;
}

/* Items of a tuple, list or dict into a new tuple (for tuples) or into an existing container
 * already registered in w->seen (lists and dicts may hold themselves through the memo). */
static int fill_container(value_walk *w, const stg_cv *v, PyObject *into, unsigned depth)
{
    uint32_t n = v->kind == STG_CV_DICT ? 2 * v->n : v->n;
    for (uint32_t i = 0; i < n; i += v->kind == STG_CV_DICT ? 2 : 1) {
        PyObject *a = value_of(w, v->u.items[i], depth + 1);
        if (a == NULL) {
            return -1;
        }
        int rc;
        if (v->kind == STG_CV_DICT) {
            PyObject *b = value_of(w, v->u.items[i + 1], depth + 1);
            rc = b == NULL ? -1 : PyObject_SetItem(into, a, b);
            Py_XDECREF(b);
            Py_DECREF(a);
        } else if (v->kind == STG_CV_LIST) {
            rc = PyList_Append(into, a);
            Py_DECREF(a);
        } else {
            PyTuple_SET_ITEM(into, (Py_ssize_t)i, a);
            rc = 0;
        }
        if (rc < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *container_of(value_walk *w, const stg_cv *v, PyObject *key, unsigned depth)
{
    PyObject *o;
    if (v->kind == STG_CV_TUPLE) {
        o = PyTuple_New((Py_ssize_t)v->n);
        if (o != NULL && fill_container(w, v, o, depth) < 0) {
            Py_CLEAR(o);
        }
        return o;
    }
    if (v->kind == STG_CV_LIST) {
        o = PyList_New(0);
    } else if (v->ordered) {
        PyObject *collections = PyImport_ImportModule("collections");
        o = collections == NULL ? NULL : PyObject_CallMethod(collections, "OrderedDict", NULL);
        Py_XDECREF(collections);
    } else {
        o = PyDict_New();
    }
    if (o == NULL || PyDict_SetItem(w->seen, key, o) < 0 || fill_container(w, v, o, depth) < 0) {
        Py_XDECREF(o);
        return NULL;
    }
    return o;
}

static PyObject *value_of(value_walk *w, const stg_cv *v, unsigned depth)
{
    if (depth > STG_PY_VALUE_DEPTH) {
        PyErr_Format(PyExc_ValueError, "the checkpoint nests values deeper than %d levels",
                     STG_PY_VALUE_DEPTH);
        return NULL;
    }
    PyObject *key = PyLong_FromVoidPtr((void *)v);
    if (key == NULL) {
        return NULL;
    }
    PyObject *o = PyDict_GetItemWithError(w->seen, key);
    if (o != NULL || PyErr_Occurred()) {
        Py_DECREF(key);
        Py_XINCREF(o);
        return o;
    }
    switch ((stg_cv_kind)v->kind) {
    case STG_CV_NONE: o = Py_NewRef(Py_None); break;
    case STG_CV_BOOL: o = PyBool_FromLong(v->u.i != 0); break;
    case STG_CV_INT: o = PyLong_FromLongLong(v->u.i); break;
    case STG_CV_FLOAT: o = PyFloat_FromDouble(v->u.f); break;
    case STG_CV_STR: /* as pickle decodes BINUNICODE */
        o = PyUnicode_DecodeUTF8((const char *)v->u.s.p, (Py_ssize_t)v->u.s.len, "surrogatepass");
        break;
    case STG_CV_BYTES:
        o = PyBytes_FromStringAndSize((const char *)v->u.s.p, (Py_ssize_t)v->u.s.len);
        break;
    case STG_CV_TUPLE:
    case STG_CV_LIST:
    case STG_CV_DICT: o = container_of(w, v, key, depth); break;
    case STG_CV_TENSOR: o = tensor_of(w, v->u.t); break;
    case STG_CV_GLOBAL:
    case STG_CV_STORAGE:
        PyErr_SetString(PyExc_ValueError, "the checkpoint holds a bare class or storage as a "
                                          "value, which load_pickle does not hand out");
        break;
    }
    if (o != NULL && v->kind != STG_CV_LIST && v->kind != STG_CV_DICT &&
        PyDict_SetItem(w->seen, key, o) < 0) {
        Py_CLEAR(o);
    }
    Py_DECREF(key);
    return o;
}

/* load_pickle(buffer, name_hint, limits, policy, make_storage, make_tensor)
 *   -> (report tuple, value or None): the checkpoint's top value rebuilt from the restricted
 * evaluator's values (None when the scan or the evaluator refused it: the report says why). */
static PyObject *py_load_pickle(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b;
    const char *hint;
    PyObject *limits, *policy, *make_storage, *make_tensor;
    if (!PyArg_ParseTuple(args, "y*zOOOO", &b, &hint, &limits, &policy, &make_storage,
                          &make_tensor)) {
        return NULL;
    }
    stg_scan_options opt;
    if (scan_options_from(limits, policy, 0, NULL, &opt) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    stg_cv_eval ev;
    stg_cv *root = NULL;
    stg_report *r = NULL;
    stg_status s;
    Py_INCREF(policy);
    Py_BEGIN_ALLOW_THREADS s = stg_cv_load_buffer(b.buf, (size_t)b.len, hint, &opt, &ev, &root, &r);
    Py_END_ALLOW_THREADS Py_DECREF(policy);
    PyObject *result = NULL;
    if (r == NULL) {
        raise_status(s, "load_pickle");
    } else {
        PyObject *value = NULL;
        if (s == STG_OK) {
            value_walk w = {make_storage, make_tensor, PyDict_New()};
            if (w.seen != NULL) {
                value = value_of(&w, root, 0);
            }
            Py_XDECREF(w.seen);
        } else if (s == STG_E_INVALID) {
            value = Py_NewRef(Py_None);
        } else {
            raise_status(s, "load_pickle");
        }
        PyObject *rep = report_result(r);
        if (value != NULL && rep != NULL) {
            result = Py_BuildValue("(NN)", rep, value);
        } else {
            Py_XDECREF(value);
            Py_XDECREF(rep);
        }
    }
    stg_cv_free(&ev);
    PyBuffer_Release(&b);
    return result;
}

/* --------------------------------------------------------------------------- module */

static PyObject *py_versions(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return Py_BuildValue("(ss)", stg_version(), stg_policy_version());
}

static PyMethodDef module_methods[] = {
    {"scan_path", py_scan_path, METH_VARARGS, "scan one file"},
    {"scan_buffer", py_scan_buffer, METH_VARARGS, "scan a buffer in place"},
    {"scan_tree", py_scan_tree, METH_VARARGS, "walk and scan paths as stguard scan does"},
    {"open_file", py_open_file, METH_VARARGS, "validate and open a safetensors file"},
    {"open_model", py_open_model, METH_VARARGS, "validate and open a sharded model"},
    {"validate_buffer", py_validate_buffer, METH_VARARGS, "validate safetensors bytes in place"},
    {"load_pickle", py_load_pickle, METH_VARARGS, "evaluate a weights-only checkpoint"},
    {"limit_defaults", py_limit_defaults, METH_NOARGS, "the documented limit defaults"},
    {"versions", py_versions, METH_NOARGS, "(library version, policy version)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "stguard._stguard",
    "libstguard bindings (use the stguard package)",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__stguard(void);

PyMODINIT_FUNC PyInit__stguard(void)
{
    if (PyType_Ready(&policy_type) < 0 || PyType_Ready(&handle_type) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) {
        return NULL;
    }
    stguard_error = PyErr_NewExceptionWithDoc(
        "stguard.StguardError", "A libstguard call failed; .status is the status name.",
        PyExc_Exception, NULL);
    file_changed_error = stguard_error == NULL
                             ? NULL
                             : PyErr_NewExceptionWithDoc(
                                   "stguard.FileChangedError",
                                   "The file shrank or was replaced after it was validated.",
                                   stguard_error, NULL);
    if (file_changed_error == NULL || PyModule_AddObjectRef(m, "StguardError", stguard_error) < 0 ||
        PyModule_AddObjectRef(m, "FileChangedError", file_changed_error) < 0 ||
        PyModule_AddObjectRef(m, "Policy", (PyObject *)&policy_type) < 0 ||
        PyModule_AddObjectRef(m, "Handle", (PyObject *)&handle_type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
