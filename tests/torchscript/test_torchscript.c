/* TorchScript archives judged as TorchScript's C++ loader resolves their pickles
 * (validator/torchscript.h, docs/containers.md "TorchScript"): the archives libtorch writes
 * (tests/data/torchscript/libtorch, tests/torchscript/gen_libtorch.cpp: tch-rs's save, C++
 * torch::save, Module::save) and torch.jit.save's are warnings (torchscript_program) with their
 * classes and helpers info; each variant (tests/data/torchscript/variants, gen_variants.py)
 * changes one thing and is unsafe; the resolution itself is checked name by name. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "zipbuild.h"
#include "dispatch/check.h"
#include "validator/report.h"
#include "validator/torchscript.h"

/* The dispatcher's report on buf under the default limits and the given policy (NULL: built-in). */
static stg_report *check_policy(const uint8_t *buf, size_t len, const char *name,
                                const stg_policy *policy)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    ctx.policy = policy;
    stg_check_buffer(buf, len, name, &ctx);
    stg_report_finish(r);
    return r;
}

static stg_report *check_file(const char *rel, const char *name)
{
    size_t len = 0;
    uint8_t *buf = tu_read_file(tu_src(rel), &len);
    ck_assert_msg(buf != NULL, "fixture %s", rel);
    stg_report *r = check_policy(buf, len, name, NULL);
    free(buf);
    return r;
}

/* The member path and global of the first finding of code (both must be there). */
static const stg_finding *first(const stg_report *r, stg_code code)
{
    long i = tu_find(r, code);
    ck_assert_msg(i >= 0, "no %s in: %s", stg_code_name(code), tu_describe(r));
    return &r->findings[i];
}

START_TEST(test_real_archives)
{
    static const struct {
        const char *rel;
        size_t classes, builtins; /* torchscript_class, torchscript_builtin findings */
    } cases[] = {
        {"tests/data/torchscript/libtorch/rust_model.ot", 1, 1},
        {"tests/data/torchscript/libtorch/tensor.pt", 1, 1},
        {"tests/data/torchscript/libtorch/module.pt", 1, 2},
        {"tests/data/torchscript/scripted.pt", 2, 2},
        {"tests/data/torchscript/scripted.ptl", 2, 2},
        {"tests/data/torchscript/mangled.pt", 6, 6}, /* ___torch_mangle_N classes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stg_report *r = check_file(cases[i].rel, strrchr(cases[i].rel, '/') + 1);
        const char *what = tu_describe(r);
        ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_WARN, "%s: %s", cases[i].rel, what);
        ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_PROGRAM), 1);
        ck_assert_msg(tu_count(r, STG_TORCHSCRIPT_CLASS) == cases[i].classes, "%s: %s",
                      cases[i].rel, what);
        ck_assert_msg(tu_count(r, STG_TORCHSCRIPT_BUILTIN) == cases[i].builtins, "%s: %s",
                      cases[i].rel, what);
        ck_assert_uint_eq(tu_count(r, STG_PICKLE_GLOBAL_DANGEROUS), 0);
        ck_assert_uint_eq(tu_count(r, STG_PICKLE_GLOBAL_UNKNOWN), 0);
        ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_CLASS_UNDEFINED), 0);
        const stg_finding *f = first(r, STG_TORCHSCRIPT_CLASS);
        ck_assert_int_eq(f->severity, STG_SEV_INFO);
        ck_assert_ptr_nonnull(f->member);
        ck_assert_msg(strstr(f->member, "/data.pkl") != NULL, "%s", f->member);
        stg_report_free(r);
    }
    /* tch's save: the class is the archive's __torch__.Module, defined in code/__torch__.py */
    stg_report *r = check_file("tests/data/torchscript/libtorch/rust_model.ot", "rust_model.ot");
    const stg_finding *f = first(r, STG_TORCHSCRIPT_CLASS);
    ck_assert_str_eq(f->module, "__torch__");
    ck_assert_str_eq(f->name, "Module");
    ck_assert_ptr_nonnull(strstr(f->message, "code/__torch__.py"));
    f = first(r, STG_TORCHSCRIPT_BUILTIN);
    ck_assert_str_eq(f->name, "build_intlist");
    ck_assert_ptr_nonnull(strstr(f->member, ".debug_pkl"));
    stg_report_free(r);
}
END_TEST

/* Each variant: the code it must carry and the global that carries it. */
START_TEST(test_variants_unsafe)
{
    static const struct {
        const char *file;
        stg_code code;
        const char *module, *name;
    } cases[] = {
        {"undefined-class.ot", STG_TORCHSCRIPT_CLASS_UNDEFINED, "__torch__.evil", "Module"},
        {"payload-global.ot", STG_PICKLE_GLOBAL_DANGEROUS, "os", "system"},
        {"jit-other.ot", STG_PICKLE_GLOBAL_DANGEROUS, "torch.jit._pickle", "build_evil"},
        {"no-constants.ot", STG_PICKLE_GLOBAL_DANGEROUS, "torch.jit._pickle", "build_intlist"},
        {"no-constants.ot", STG_PICKLE_GLOBAL_UNKNOWN, "__torch__", "Module"},
        {"extra-pickle.ot", STG_PICKLE_GLOBAL_UNKNOWN, "__torch__", "Module"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/data/torchscript/variants/%s", cases[i].file);
        stg_report *r = check_file(rel, cases[i].file);
        ck_assert_msg(stg_report_verdict(r) == STG_VERDICT_UNSAFE, "%s: %s", rel, tu_describe(r));
        const stg_finding *f = first(r, cases[i].code);
        ck_assert_int_eq(f->severity, STG_SEV_CRITICAL);
        ck_assert_str_eq(f->module, cases[i].module);
        ck_assert_str_eq(f->name, cases[i].name);
        stg_report_free(r);
    }
    /* no constants.pkl: torch.load's Python route, so no TorchScript resolution at all */
    stg_report *r = check_file("tests/data/torchscript/variants/no-constants.ot", "x.ot");
    ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_CLASS), 0);
    ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_BUILTIN), 0);
    stg_report_free(r);
    /* the extra pickle is Python's, the archive's own data.pkl still TorchScript's */
    r = check_file("tests/data/torchscript/variants/extra-pickle.ot", "x.ot");
    ck_assert_ptr_nonnull(strstr(first(r, STG_PICKLE_GLOBAL_UNKNOWN)->member, "extra/state.pkl"));
    ck_assert_ptr_nonnull(strstr(first(r, STG_TORCHSCRIPT_CLASS)->member, "/data.pkl"));
    stg_report_free(r);
}
END_TEST

/* torch::pickle_save's zip has no constants.pkl: torch.load unpickles it in Python, where
 * torch.jit._pickle is a Python import (the hard block stands). */
START_TEST(test_pickle_save_python_route)
{
    stg_report *r = check_file("tests/data/torchscript/libtorch/pickle_save.pt", "pickle_save.pt");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_BUILTIN), 0);
    ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_PROGRAM), 0);
    ck_assert_str_eq(first(r, STG_PICKLE_GLOBAL_DANGEROUS)->name, "build_intlist");
    stg_report_free(r);
}
END_TEST

static stg_report *check_buf(const uint8_t *buf, size_t len)
{
    return check_policy(buf, len, "model.pt", NULL);
}

static const char module_pickle[] = "c__torch__\nModule\n.";

/* A TorchScript archive made by hand: data.pkl names __torch__.Module; with_source: its
 * code/__torch__.py is there; extra (may be NULL, extra_len bytes): one more member a/extra.bin. */
static uint8_t *ts_zip(bool with_source, const void *extra, size_t extra_len, size_t *len)
{
    zb_entry e[4];
    size_t n = 0;
    e[n++] = zb_file("a/data.pkl", module_pickle, sizeof module_pickle - 1);
    e[n++] = zb_file("a/constants.pkl", ").", 2);
    if (with_source) {
        e[n++] = zb_file("a/code/__torch__.py", "class Module(Module):\n", 22);
    }
    if (extra != NULL) {
        e[n++] = zb_file("a/extra.bin", extra, extra_len);
    }
    uint8_t *z = zb_build(e, n, NULL, len, NULL);
    ck_assert_ptr_nonnull(z);
    return z;
}

/* The route is scoped: the archive's own pickle resolves from its code/; a zip without
 * constants.pkl nested in it, and a tar in it, are not TorchScript's (their pickles' globals are
 * Python's), while a TorchScript archive nested in a member is its own. */
START_TEST(test_route_scope)
{
    size_t len = 0;
    uint8_t *z = ts_zip(true, NULL, 0, &len);
    stg_report *r = check_buf(z, len);
    ck_assert_msg(tu_count(r, STG_TORCHSCRIPT_CLASS) == 1, "%s", tu_describe(r));
    stg_report_free(r);
    /* near miss: the source record absent */
    size_t len2 = 0;
    uint8_t *z2 = ts_zip(false, NULL, 0, &len2);
    r = check_buf(z2, len2);
    ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_CLASS_UNDEFINED), 1);
    ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_CLASS), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(z2);
    /* a plain zip (no constants.pkl) with the same data.pkl, inside the TorchScript archive */
    zb_entry pe[2] = {zb_file("b/data.pkl", module_pickle, sizeof module_pickle - 1),
                      zb_file("b/code/__torch__.py", "x", 1)};
    size_t plen = 0;
    uint8_t *plain = zb_build(pe, 2, NULL, &plen, NULL);
    ck_assert_ptr_nonnull(plain);
    uint8_t *outer = ts_zip(true, plain, plen, &len2);
    r = check_buf(outer, len2);
    ck_assert_msg(tu_count(r, STG_TORCHSCRIPT_CLASS) == 1, "%s", tu_describe(r));
    ck_assert_msg(tu_count(r, STG_PICKLE_GLOBAL_UNKNOWN) == 1, "%s", tu_describe(r));
    ck_assert_ptr_nonnull(strstr(first(r, STG_PICKLE_GLOBAL_UNKNOWN)->member, "b/data.pkl"));
    stg_report_free(r);
    free(outer);
    /* the TorchScript archive itself as a member: resolved from its own code/ */
    outer = ts_zip(true, z, len, &len2);
    r = check_buf(outer, len2);
    ck_assert_msg(tu_count(r, STG_TORCHSCRIPT_CLASS) == 2, "%s", tu_describe(r));
    ck_assert_uint_eq(tu_count(r, STG_PICKLE_GLOBAL_UNKNOWN), 0);
    stg_report_free(r);
    free(outer);
    free(plain);
    free(z);
}
END_TEST

/* The bytes a local header alone describes (sizes differing from the central entry's) are what
 * a streaming reader would read, not torch's reader: their globals keep the policy. */
START_TEST(test_local_reading)
{
    static const char data[] = "c__torch__\nModule\n.).";
    zb_entry e[3] = {zb_file("a/data.pkl", data, sizeof data - 1),
                     zb_file("a/constants.pkl", ").", 2),
                     zb_file("a/code/__torch__.py", "class Module(Module):\n", 22)};
    e[0].local_csize_set = true;
    e[0].local_csize = (uint32_t)(sizeof module_pickle - 1); /* the first pickle only */
    size_t len = 0;
    uint8_t *z = zb_build(e, 3, NULL, &len, NULL);
    ck_assert_ptr_nonnull(z);
    stg_report *r = check_buf(z, len);
    ck_assert_msg(tu_count(r, STG_ZIP_HEADER_MISMATCH) == 1, "%s", tu_describe(r));
    ck_assert_msg(tu_count(r, STG_TORCHSCRIPT_CLASS) == 1, "%s", tu_describe(r));
    ck_assert_msg(tu_count(r, STG_PICKLE_GLOBAL_UNKNOWN) == 1, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(z);
}
END_TEST

/* A caller who denies __torch__ (--policy) keeps it denied on the TorchScript route too. */
START_TEST(test_caller_deny_wins)
{
    size_t len = 0;
    uint8_t *buf = tu_read_file(tu_src("tests/data/torchscript/libtorch/rust_model.ot"), &len);
    ck_assert_ptr_nonnull(buf);
    stg_policy *p = NULL;
    ck_assert_int_eq(stg_policy_new(&p), STG_OK);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, "__torch__", NULL), STG_OK);
    stg_report *r = check_policy(buf, len, "rust_model.ot", p);
    ck_assert_msg(tu_count(r, STG_TORCHSCRIPT_CLASS) == 0, "%s", tu_describe(r));
    ck_assert_str_eq(first(r, STG_PICKLE_GLOBAL_DANGEROUS)->module, "__torch__");
    ck_assert_uint_eq(tu_count(r, STG_TORCHSCRIPT_BUILTIN), 1); /* not denied: still built */
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    stg_policy_free(p);
    free(buf);
}
END_TEST

static stg_ts_global classify(const stg_torchscript *ts, const char *m, const char *n, char *src)
{
    size_t len = 0;
    return stg_torchscript_classify(ts, m, strlen(m), n, strlen(n), src, &len);
}

START_TEST(test_classify)
{
    stg_ts_source sources[] = {{"__torch__.py", 12}, {"__torch__/a/b.py", 16}};
    stg_torchscript ts = {sources, 2, 1};
    stg_torchscript_sort(&ts);
    char src[STG_TS_SOURCE_NAME_MAX + 1];
    ck_assert_int_eq(classify(&ts, "__torch__", "Module", src), STG_TS_CLASS);
    ck_assert_str_eq(src, "__torch__.py");
    ck_assert_int_eq(classify(&ts, "__torch__.a.b", "C", src), STG_TS_CLASS);
    ck_assert_str_eq(src, "__torch__/a/b.py");
    /* near misses: a source not held, a name climbing out of code/, another root */
    ck_assert_int_eq(classify(&ts, "__torch__.a", "b", src), STG_TS_CLASS_UNDEFINED);
    ck_assert_str_eq(src, "__torch__/a.py");
    ck_assert_int_eq(classify(&ts, "__torch__.a..b", "C", src), STG_TS_OTHER);
    ck_assert_int_eq(classify(&ts, "__torch__/a", "C", src), STG_TS_OTHER);
    ck_assert_int_eq(classify(&ts, "__torch__", "a.C", src), STG_TS_OTHER);
    ck_assert_int_eq(classify(&ts, "__torch__x", "C", src), STG_TS_OTHER);
    ck_assert_int_eq(classify(&ts, "os", "system", src), STG_TS_OTHER);
    ck_assert_int_eq(classify(&ts, "__torch__.torch.classes.quantized", "X", src), STG_TS_OTHER);
    /* the helpers the C++ unpickler builds, and one it refuses */
    static const char *const helpers[] = {"build_intlist",        "build_tensorlist",
                                          "build_doublelist",     "build_boollist",
                                          "build_tensor_from_id", "restore_type_tag"};
    for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++) {
        ck_assert_int_eq(classify(&ts, "torch.jit._pickle", helpers[i], src), STG_TS_BUILTIN);
    }
    ck_assert_int_eq(classify(&ts, "torch.jit._pickle", "build_evil", src), STG_TS_OTHER);
    ck_assert_int_eq(classify(&ts, "torch.jit", "load", src), STG_TS_OTHER);
    ck_assert_int_eq(classify(&ts, "torch.jit._picklex", "build_intlist", src), STG_TS_OTHER);
}
END_TEST

START_TEST(test_reads)
{
    ck_assert(stg_torchscript_reads("archive/data.pkl"));
    ck_assert(stg_torchscript_reads("archive/constants.pkl"));
    ck_assert(stg_torchscript_reads("archive/bytecode.pkl"));
    ck_assert(stg_torchscript_reads("archive/code/__torch__.py.debug_pkl"));
    ck_assert(stg_torchscript_reads("data.pkl"));
    ck_assert(!stg_torchscript_reads("archive/extra/state.pkl"));
    ck_assert(!stg_torchscript_reads("archive/x/data.pkl"));
    ck_assert(!stg_torchscript_reads("archive/data.pkl.bak"));
    ck_assert(!stg_torchscript_reads("archive/code/"));
    ck_assert(!stg_torchscript_reads("archive/notcode/a.debug_pkl"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("torchscript");
    TCase *tc = tcase_create("torchscript");
    tcase_add_test(tc, test_real_archives);
    tcase_add_test(tc, test_variants_unsafe);
    tcase_add_test(tc, test_pickle_save_python_route);
    tcase_add_test(tc, test_route_scope);
    tcase_add_test(tc, test_local_reading);
    tcase_add_test(tc, test_caller_deny_wins);
    tcase_add_test(tc, test_classify);
    tcase_add_test(tc, test_reads);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
