/* Allocation failure: every allocation site of each public entry point fails in turn.
 *
 * Linked with stguard_alloctest (STG_ALLOC_TESTING): stg_mem_test_reset(n) makes allocation n and
 * every later one fail. For n = 1, 2, ... each entry point runs until an iteration completes
 * without reaching allocation n. Each time the call must fail cleanly: an error status with no
 * object handed out, or a report whose verdict is `error`, or exactly the outcome of the run
 * without failures (a failure that was absorbed without changing the answer). Never a crash,
 * never a different non-error answer. Under the asan preset (CK_FORK=no) LeakSanitizer checks
 * at exit that every failure path released what it held.
 *
 * Every entry point is an ordinary reference: one that disappears from the library is a link
 * error, never a test that passes without running. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/inflate.h"
#include "parser/mem.h"
#include "stguard/stguard.h"
#include "testutil.h"

/* Upper bound on allocations one call may make on these small inputs: a loop that reaches it
 * means the failure injection never stops the call, which is itself a bug. */
#define MAX_ALLOCATIONS 100000UL

/* What one call produced, comparable across runs. */
typedef struct outcome {
    stg_status status;
    int has_report;
    stg_verdict verdict;
    char findings[2048]; /* tu_describe() of the report, or the tensor count for stg_file */
} outcome;

typedef struct input {
    const char *what;
    const uint8_t *bytes;
    size_t len;
    const char *name_hint;
    const char *path; /* for the path-based entry points */
} input;

typedef void (*entry_fn)(const input *in, outcome *out);

static void take_report(outcome *out, stg_status st, stg_report *rep)
{
    out->status = st;
    out->has_report = rep != NULL;
    if (rep != NULL) {
        out->verdict = stg_report_verdict(rep);
        snprintf(out->findings, sizeof out->findings, "%s", tu_describe(rep));
        stg_report_free(rep);
    }
}

/* ------------------------------------------------------------------------ entry points */

static void run_validate(const input *in, outcome *out)
{
    stg_report *rep = NULL;
    stg_status st = stg_validate_buffer(in->bytes, in->len, NULL, &rep);
    take_report(out, st, rep);
}

static void run_scan_buffer(const input *in, outcome *out)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *rep = NULL;
    stg_status st = stg_scan_buffer(in->bytes, in->len, in->name_hint, &opt, &rep);
    take_report(out, st, rep);
}

/* A policy built through the API (each step may fail), then used for a scan. */
static void run_policy_scan(const input *in, outcome *out)
{
    stg_policy *p = NULL;
    stg_status st = stg_policy_new(&p);
    if (st == STG_OK) {
        st = stg_policy_allow_spec(p, "collections:OrderedDict");
    }
    if (st == STG_OK) {
        st = stg_policy_add(p, STG_POLICY_DENY, "mypackage.evil", NULL);
    }
    if (st == STG_OK) {
        st = stg_policy_add(p, STG_POLICY_ALLOW, "mypackage.layers", "Dense");
    }
    if (st != STG_OK) {
        out->status = st;
        stg_policy_free(p);
        return;
    }
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.policy = p;
    stg_report *rep = NULL;
    st = stg_scan_buffer(in->bytes, in->len, in->name_hint, &opt, &rep);
    take_report(out, st, rep);
    stg_policy_free(p);
}

/* The input fed in chunks of 7 bytes, so buffering paths run as well; feeding stops at the first
 * error status. */
static void run_stream(const input *in, outcome *out)
{
    stg_stream_options sopt;
    stg_stream_options_default(&sopt);
    stg_stream *s = NULL;
    stg_status st = stg_stream_new(NULL, &sopt, &s);
    if (st != STG_OK) {
        out->status = st;
        ck_assert_msg(s == NULL, "stg_stream_new failed (%s) but handed out a stream",
                      stg_status_name(st));
        return;
    }
    for (size_t pos = 0; pos < in->len && st == STG_OK; pos += 7) {
        size_t n = in->len - pos < 7 ? in->len - pos : 7;
        st = stg_stream_feed(s, in->bytes + pos, n);
    }
    /* A feed error (STG_E_INVALID once the header is rejected, STG_E_NOMEM, ...) ends the input;
     * finish still hands out the report, and that is what is compared. */
    stg_report *rep = NULL;
    st = stg_stream_finish(s, &rep);
    take_report(out, st, rep);
    stg_stream_free(s);
}

/* The report of an open call plus the tensor count of what it handed out (never a handle with a
 * failed status). */
static void take_open(outcome *out, const char *call, stg_status st, stg_report *rep,
                      const void *handle, size_t tensors)
{
    take_report(out, st, rep);
    ck_assert_msg(st == STG_OK || handle == NULL, "%s failed (%s) but handed out a file", call,
                  stg_status_name(st));
    size_t used = strlen(out->findings);
    snprintf(out->findings + used, sizeof out->findings - used, " tensors=%zu", tensors);
}

static void run_file_open(const input *in, outcome *out)
{
    stg_file *f = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_file_open(in->path, NULL, &f, &rep);
    take_open(out, "stg_file_open", st, rep, f, f != NULL ? stg_file_tensor_count(f) : 0);
    if (f != NULL) {
        stg_file_close(f);
    }
}

static void run_gguf_open(const input *in, outcome *out)
{
    stg_gguf *g = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_gguf_open(in->path, NULL, &g, &rep);
    take_open(out, "stg_gguf_open", st, rep, g, stg_gguf_tensor_count(g));
    stg_gguf_close(g);
}

static void run_onnx_open(const input *in, outcome *out)
{
    stg_onnx *m = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_onnx_open(in->path, NULL, &m, &rep);
    take_open(out, "stg_onnx_open", st, rep, m, stg_onnx_initializer_count(m));
    stg_onnx_close(m);
}

static void run_flax_open(const input *in, outcome *out)
{
    stg_flax *f = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_flax_open(in->path, NULL, &f, &rep);
    take_open(out, "stg_flax_open", st, rep, f, stg_flax_param_count(f));
    stg_flax_close(f);
}

/* A signature check (in->path: an upstream vector's folder; in->name_hint: its public key):
 * verified is verdict ok, not verified invalid with the codes as findings, a finding refused for
 * memory (dropped) error. A failing allocation may never make a check verified. */
static void run_signature(const input *in, outcome *out)
{
    stg_signature_options o;
    stg_signature_options_default(&o);
    o.public_key = in->name_hint;
    stg_signature *s = NULL;
    stg_status st = stg_signature_open(in->path, NULL, &o, &s);
    st = st == STG_OK ? stg_signature_hash_model(s) : st;
    st = st == STG_OK ? stg_signature_finish(s) : st;
    out->status = st;
    out->has_report = s != NULL && st == STG_OK;
    if (out->has_report) {
        out->verdict = stg_signature_verified(s)               ? STG_VERDICT_OK
                       : stg_signature_findings_dropped(s) > 0 ? STG_VERDICT_ERROR
                                                               : STG_VERDICT_INVALID;
        size_t o2 = 0;
        for (size_t i = 0; i < stg_signature_finding_count(s) && o2 < 1900; i++) {
            o2 += (size_t)snprintf(out->findings + o2, sizeof out->findings - o2, "%s ",
                                   stg_code_name(stg_signature_finding_at(s, i)->code));
        }
    }
    stg_signature_free(s);
}

static void run_scan_path(const input *in, outcome *out)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *rep = NULL;
    stg_status st = stg_scan_path(in->path, &opt, &rep);
    take_report(out, st, rep);
}

/* ------------------------------------------------------------------------ the loop */

static void sweep(const char *entry, entry_fn fn, const input *in)
{
    outcome base;
    memset(&base, 0, sizeof base);
    stg_mem_test_reset(0);
    fn(in, &base);
    unsigned long base_count = stg_mem_test_count();
    ck_assert_msg(base_count > 0, "%s(%s) made no allocation: nothing to test", entry, in->what);

    unsigned long fail_from;
    for (fail_from = 1; fail_from < MAX_ALLOCATIONS; fail_from++) {
        outcome got;
        memset(&got, 0, sizeof got);
        stg_mem_test_reset(fail_from);
        fn(in, &got);
        unsigned long made = stg_mem_test_count();
        stg_mem_test_reset(0);
        if (made < fail_from) {
            break; /* the call finished before reaching the failing allocation */
        }
        int clean_error = got.status != STG_OK &&
                          (!got.has_report || got.verdict == STG_VERDICT_ERROR);
        int error_report = got.status == STG_OK && got.has_report &&
                           got.verdict == STG_VERDICT_ERROR;
        int unchanged = got.status == base.status && got.has_report == base.has_report &&
                        got.verdict == base.verdict && strcmp(got.findings, base.findings) == 0;
        ck_assert_msg(clean_error || error_report || unchanged,
                      "%s(%s), allocation %lu of %lu failing: status %s, verdict %s, findings %s "
                      "(without failures: verdict %s, findings %s)",
                      entry, in->what, fail_from, base_count, stg_status_name(got.status),
                      got.has_report ? stg_verdict_name(got.verdict) : "-", got.findings,
                      stg_verdict_name(base.verdict), base.findings);
    }
    ck_assert_msg(fail_from < MAX_ALLOCATIONS, "%s(%s): failure injection never ended the loop",
                  entry, in->what);
    printf("alloc: %-16s %-28s %4lu allocation sites failed in turn (%s, verdict %s)\n", entry,
           in->what, fail_from - 1, stg_status_name(base.status),
           base.has_report ? stg_verdict_name(base.verdict) : "-");
}

/* ------------------------------------------------------------------------ inputs */

static uint8_t *st_file(const char *header, const void *data, size_t data_len, size_t *len)
{
    size_t n = strlen(header);
    size_t pad = (8 - (8 + n) % 8) % 8; /* keep the data section 8-aligned: no padding warning */
    return tu_st_file(header, pad, data, data_len, len);
}

static const char *const VALID_HEADER =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
    "\"b\":{\"dtype\":\"U8\",\"shape\":[2,4],\"data_offsets\":[8,16]}}";
static const char *const INVALID_HEADER = /* overlap, unknown dtype, duplicate key */
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
    "\"b\":{\"dtype\":\"X9\",\"shape\":[1],\"data_offsets\":[4,8]},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
static const uint8_t DATA16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* pickle protocol 2: os.system("id") through REDUCE, and an empty dict. */
static const uint8_t PICKLE_EVIL[] =
    "\200\002cos\nsystem\nq\000X\002\000\000\000idq\001\205q\002Rq\003.";
static const uint8_t PICKLE_BENIGN[] = "\200\002}q\000.";

typedef struct inputs {
    uint8_t *valid, *invalid;
    size_t valid_len, invalid_len;
    uint8_t zero_len[16];
    input list[5];
    size_t count;
} inputs;

static void make_inputs(inputs *in)
{
    memset(in, 0, sizeof *in);
    in->valid = st_file(VALID_HEADER, DATA16, sizeof DATA16, &in->valid_len);
    in->invalid = st_file(INVALID_HEADER, DATA16, 8, &in->invalid_len);
    ck_assert_ptr_nonnull(in->valid);
    ck_assert_ptr_nonnull(in->invalid);
    in->list[0] = (input){"valid safetensors", in->valid, in->valid_len, "m.safetensors", NULL};
    in->list[1] = (input){"invalid safetensors", in->invalid, in->invalid_len, "m.safetensors",
                          NULL};
    in->list[2] = (input){"zero header length", in->zero_len, sizeof in->zero_len, NULL, NULL};
    in->list[3] = (input){"pickle os.system", PICKLE_EVIL, sizeof PICKLE_EVIL - 1, "model.pkl",
                          NULL};
    in->list[4] = (input){"pickle empty dict", PICKLE_BENIGN, sizeof PICKLE_BENIGN - 1, "model.pkl",
                          NULL};
    in->count = 5;
}

static void free_inputs(inputs *in)
{
    free(in->valid);
    free(in->invalid);
}

/* ------------------------------------------------------------------------ tests */

START_TEST(validate_buffer_fails_cleanly)
{
    inputs in;
    make_inputs(&in);
    for (size_t i = 0; i < 3; i++) { /* the safetensors inputs */
        sweep("validate_buffer", run_validate, &in.list[i]);
    }
    free_inputs(&in);
}
END_TEST

START_TEST(scan_buffer_fails_cleanly)
{
    inputs in;
    make_inputs(&in);
    for (size_t i = 0; i < in.count; i++) {
        sweep("scan_buffer", run_scan_buffer, &in.list[i]);
    }
    free_inputs(&in);
}
END_TEST

START_TEST(policy_fails_cleanly)
{
    inputs in;
    make_inputs(&in);
    sweep("policy+scan", run_policy_scan, &in.list[3]);
    sweep("policy+scan", run_policy_scan, &in.list[0]);
    free_inputs(&in);
}
END_TEST

START_TEST(stream_fails_cleanly)
{
    inputs in;
    make_inputs(&in);
    for (size_t i = 0; i < 3; i++) {
        sweep("stream", run_stream, &in.list[i]);
    }
    free_inputs(&in);
}
END_TEST

/* Containers and compressed pickles from corpus/ (zip with deflated members, npz, tar, gzip,
 * zlib, joblib, a pickle/safetensors/zip polyglot, .npy with objects): the inflate, tar and
 * member-dispatch allocation sites, swept through stg_scan_buffer. corpus/scan/ files start with
 * fuzz_scan's three option bytes, skipped here. */
static const struct {
    const char *rel;
    size_t skip;
    const char *name_hint;
    stg_verdict verdict; /* without failures */
} CONTAINER_FILES[] = {
    {"corpus/zip/torch-deflated.pt", 0, "pytorch_model.bin", STG_VERDICT_UNSAFE},
    {"corpus/zip/npz-deflated.npz", 0, "arrays.npz", STG_VERDICT_OK},
    {"corpus/scan/torch01-evil.tar", 3, "model.pt", STG_VERDICT_UNSAFE},
    {"corpus/scan/evil.pkl.gz", 3, "model.pkl.gz", STG_VERDICT_UNSAFE},
    {"corpus/scan/evil.pkl.zlib", 3, NULL, STG_VERDICT_UNSAFE},
    {"corpus/scan/joblib-zlib.joblib", 3, "model.joblib", STG_VERDICT_OK},
    {"corpus/scan/polyglot-st-zip", 3, "model.safetensors", STG_VERDICT_UNSAFE},
    {"corpus/scan/pickle-then-zip", 3, NULL, STG_VERDICT_UNSAFE},
    {"corpus/scan/npy-object", 3, "a.npy", STG_VERDICT_UNSAFE},
    /* JSON Lines: each line parsed in an arena (a refusal fails closed, not a bad line) */
    {"corpus/flatbuffer/ok_rows.jsonl", 0, "rows.jsonl", STG_VERDICT_OK},
};

START_TEST(containers_fail_cleanly)
{
    for (size_t i = 0; i < sizeof CONTAINER_FILES / sizeof CONTAINER_FILES[0]; i++) {
        size_t len = 0;
        uint8_t *bytes = tu_read_file(tu_src(CONTAINER_FILES[i].rel), &len);
        ck_assert_msg(bytes != NULL, "cannot read %s", CONTAINER_FILES[i].rel);
        ck_assert_uint_gt(len, CONTAINER_FILES[i].skip);
        input in = {CONTAINER_FILES[i].rel, bytes + CONTAINER_FILES[i].skip,
                    len - CONTAINER_FILES[i].skip, CONTAINER_FILES[i].name_hint, NULL};
        outcome base;
        memset(&base, 0, sizeof base);
        run_scan_buffer(&in, &base);
        /* without zlib, deflated members are format_unscannable (error): only the sweep */
        ck_assert_msg(!stg_inflate_available() ||
                          (base.status == STG_OK && base.verdict == CONTAINER_FILES[i].verdict),
                      "%s: status %s, verdict %s, findings %s", in.what,
                      stg_status_name(base.status), stg_verdict_name(base.verdict), base.findings);
        sweep("scan_buffer", run_scan_buffer, &in);
        free(bytes);
    }
}
END_TEST

/* 3,000 tensors: the header's table, name copies and sort index outgrow the arena's first
 * blocks, so the allocations made while the tables grow fail too. */
START_TEST(large_table_fails_cleanly)
{
    enum { TENSORS = 3000 };
    size_t cap = 64 + (size_t)TENSORS * 80;
    char *header = malloc(cap);
    ck_assert_ptr_nonnull(header);
    size_t n = (size_t)snprintf(header, cap, "{\"__metadata__\":{\"k\":\"v\"}");
    for (int i = 0; i < TENSORS; i++) {
        n += (size_t)snprintf(
            header + n, cap - n,
            ",\"t%05d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%d,%d]}", TENSORS - 1 - i,
            i, i + 1); /* names in reverse data order */
    }
    n += (size_t)snprintf(header + n, cap - n, "}");
    ck_assert_uint_lt(n, cap);
    uint8_t *data = calloc(TENSORS, 1);
    ck_assert_ptr_nonnull(data);
    size_t len = 0;
    uint8_t *file = st_file(header, data, TENSORS, &len);
    ck_assert_ptr_nonnull(file);
    input in = {"3,000 tensors", file, len, "m.safetensors", NULL};
    sweep("validate_buffer", run_validate, &in);
    sweep("stream", run_stream, &in);
    free(file);
    free(data);
    free(header);
}
END_TEST

/* Three files in a fresh temporary directory for the path-based entry points. */
typedef struct temp_files {
    inputs in;
    char *dir;
    char valid[4096], invalid[4096], pickle[4096];
    input files[3];
} temp_files;

static void make_temp_files(temp_files *t)
{
    make_inputs(&t->in);
    t->dir = tu_tempdir();
    ck_assert_ptr_nonnull(t->dir);
    snprintf(t->valid, sizeof t->valid, "%s/valid.safetensors", t->dir);
    snprintf(t->invalid, sizeof t->invalid, "%s/invalid.safetensors", t->dir);
    snprintf(t->pickle, sizeof t->pickle, "%s/model.pkl", t->dir);
    ck_assert_int_eq(tu_write_file(t->valid, t->in.valid, t->in.valid_len), 0);
    ck_assert_int_eq(tu_write_file(t->invalid, t->in.invalid, t->in.invalid_len), 0);
    ck_assert_int_eq(tu_write_file(t->pickle, PICKLE_EVIL, sizeof PICKLE_EVIL - 1), 0);
    t->files[0] = (input){"valid.safetensors", NULL, 0, NULL, t->valid};
    t->files[1] = (input){"invalid.safetensors", NULL, 0, NULL, t->invalid};
    t->files[2] = (input){"model.pkl", NULL, 0, NULL, t->pickle};
}

static void free_temp_files(temp_files *t)
{
    tu_rmtree(t->dir);
    free(t->dir);
    free_inputs(&t->in);
}

START_TEST(file_open_fails_cleanly)
{
    temp_files t;
    make_temp_files(&t);
    sweep("file_open", run_file_open, &t.files[0]);
    sweep("file_open", run_file_open, &t.files[1]);
    free_temp_files(&t);
}
END_TEST

/* The GGUF door and a path scan of GGUF files (a valid one with a vocabulary, a lying one). */
START_TEST(gguf_open_fails_cleanly)
{
    static const char *const files[] = {"tests/data/gguf/ok-vocab.gguf",
                                        "tests/data/gguf/bad-gguf_tensor_shape_invalid-wrap.gguf"};
    for (size_t i = 0; i < 2; i++) {
        input in = {files[i], NULL, 0, NULL, tu_src(files[i])};
        sweep("gguf_open", run_gguf_open, &in);
        sweep("scan_path", run_scan_path, &in);
    }
}
END_TEST

/* The ONNX door and a path scan of ONNX models (external data, an op histogram, metadata; an
 * escaping location). */
START_TEST(onnx_open_fails_cleanly)
{
    static const char *const files[] = {
        "tests/data/onnx/ok-inspect/model.onnx",
        "tests/data/onnx/bad-onnx_external_path_unsafe-dotdot/model.onnx"};
    for (size_t i = 0; i < 2; i++) {
        input in = {files[i], NULL, 0, NULL, tu_src(files[i])};
        sweep("onnx_open", run_onnx_open, &in);
        sweep("scan_path", run_scan_path, &in);
    }
}
END_TEST

/* The Flax door and a path scan of Flax checkpoints (a valid one, one with a size mismatch). */
START_TEST(flax_open_fails_cleanly)
{
    static const char *const files[] = {"tests/data/flax/ok-train_state.msgpack",
                                        "tests/data/flax/bad-flax_size_mismatch.msgpack"};
    for (size_t i = 0; i < 2; i++) {
        input in = {files[i], NULL, 0, NULL, tu_src(files[i])};
        sweep("flax_open", run_flax_open, &in);
        sweep("scan_path", run_scan_path, &in);
    }
}
END_TEST

START_TEST(signature_fails_cleanly)
{
    static const char *const models[] = {"tests/signing/upstream/v1.1.0-elliptic-key",
                                         "tests/signing/upstream/v1.0.1-elliptic-key"};
    char *key = strdup(tu_src("tests/signing/upstream/keys/signing-key-pub.pem"));
    for (size_t i = 0; i < 2; i++) {
        input in = {models[i], NULL, 0, key, tu_src(models[i])};
        sweep("signature", run_signature, &in);
    }
    free(key);
}
END_TEST

START_TEST(scan_path_fails_cleanly)
{
    temp_files t;
    make_temp_files(&t);
    for (size_t i = 0; i < 3; i++) {
        sweep("scan_path", run_scan_path, &t.files[i]);
    }
    free_temp_files(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("every allocation fails in turn");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, validate_buffer_fails_cleanly);
    tcase_add_test(tc, scan_buffer_fails_cleanly);
    tcase_add_test(tc, policy_fails_cleanly);
    tcase_add_test(tc, stream_fails_cleanly);
    tcase_add_test(tc, file_open_fails_cleanly);
    tcase_add_test(tc, scan_path_fails_cleanly);
    tcase_add_test(tc, gguf_open_fails_cleanly);
    tcase_add_test(tc, onnx_open_fails_cleanly);
    tcase_add_test(tc, flax_open_fails_cleanly);
    tcase_add_test(tc, signature_fails_cleanly);
    tcase_add_test(tc, containers_fail_cleanly);
    tcase_add_test(tc, large_table_fails_cleanly);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
