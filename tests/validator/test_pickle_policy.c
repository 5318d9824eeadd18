/* The pickle policy: the order of decision of docs/policy.md (hard-block, allowlist,
 * benign, denylist with dotted prefixes and components, dunders, private modules, unknown), the
 * caller's allow and deny entries, and the policy file format of docs/policy.md. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "dispatch/check.h"
#include "validator/pickle_policy.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

static stg_policy_verdict classify(const stg_policy *p, const char *m, const char *n)
{
    return stg_policy_classify(p, m, strlen(m), n, strlen(n));
}

static const struct {
    const char *module, *name;
    stg_global_class klass;
    bool hard;
} table[] = {
    /* allowlist: exact pairs */
    {"collections", "OrderedDict", STG_GLOBAL_ALLOWED, false},
    {"torch._utils", "_rebuild_tensor_v2", STG_GLOBAL_ALLOWED, false},
    {"torch._utils", "_rebuild_parameter", STG_GLOBAL_ALLOWED, false},
    {"torch", "BFloat16Storage", STG_GLOBAL_ALLOWED, false},
    {"torch.cuda", "FloatStorage", STG_GLOBAL_ALLOWED, false},
    {"torch", "bfloat16", STG_GLOBAL_ALLOWED, false},
    {"torch.nn.parameter", "Parameter", STG_GLOBAL_ALLOWED, false},
    {"numpy.core.multiarray", "_reconstruct", STG_GLOBAL_ALLOWED, false},
    {"numpy._core.multiarray", "scalar", STG_GLOBAL_ALLOWED, false},
    {"numpy", "dtype", STG_GLOBAL_ALLOWED, false},
    {"_codecs", "encode", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "set", STG_GLOBAL_ALLOWED, false},
    {"builtins", "bytearray", STG_GLOBAL_ALLOWED, false},
    {"joblib.numpy_pickle", "NumpyArrayWrapper", STG_GLOBAL_ALLOWED, false},
    {"joblib.numpy_pickle_compat", "NDArrayWrapper", STG_GLOBAL_ALLOWED, false},
    /* plain builtin types, both spellings, and the Python 2 names _compat_pickle maps */
    {"builtins", "range", STG_GLOBAL_ALLOWED, false},
    {"builtins", "dict", STG_GLOBAL_ALLOWED, false},
    {"builtins", "bool", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "tuple", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "xrange", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "unicode", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "long", STG_GLOBAL_ALLOWED, false},
    {"numpy.matrixlib.defmatrix", "matrix", STG_GLOBAL_ALLOWED, false},
    {"joblib.numpy_pickle", "NDArrayWrapper", STG_GLOBAL_ALLOWED, false},
    {"joblib.numpy_pickle_compat", "ZNDArrayWrapper", STG_GLOBAL_ALLOWED, false},
    {"joblib.numpy_pickle", "ZipNumpyUnpickler", STG_GLOBAL_DANGEROUS, false},
    /* harmless builtin functions and constants (docs/policy.md), both spellings */
    {"builtins", "len", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "len", STG_GLOBAL_ALLOWED, false},
    {"builtins", "abs", STG_GLOBAL_ALLOWED, false},
    {"builtins", "divmod", STG_GLOBAL_ALLOWED, false},
    {"builtins", "hash", STG_GLOBAL_ALLOWED, false},
    {"builtins", "repr", STG_GLOBAL_ALLOWED, false},
    {"builtins", "ascii", STG_GLOBAL_ALLOWED, false},
    {"builtins", "chr", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "unichr", STG_GLOBAL_ALLOWED, false},
    {"builtins", "ord", STG_GLOBAL_ALLOWED, false},
    {"builtins", "bin", STG_GLOBAL_ALLOWED, false},
    {"builtins", "oct", STG_GLOBAL_ALLOWED, false},
    {"builtins", "hex", STG_GLOBAL_ALLOWED, false},
    {"builtins", "isinstance", STG_GLOBAL_ALLOWED, false},
    {"builtins", "issubclass", STG_GLOBAL_ALLOWED, false},
    {"builtins", "callable", STG_GLOBAL_ALLOWED, false},
    {"builtins", "zip", STG_GLOBAL_ALLOWED, false},
    {"builtins", "enumerate", STG_GLOBAL_ALLOWED, false},
    {"builtins", "reversed", STG_GLOBAL_ALLOWED, false},
    {"builtins", "Ellipsis", STG_GLOBAL_ALLOWED, false},
    {"__builtin__", "NotImplemented", STG_GLOBAL_ALLOWED, false},
    /* near misses: builtins left out (docs/policy.md says why for each) */
    {"builtins", "pow", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "round", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "format", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "sum", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "max", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "sorted", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "iter", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "next", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "filter", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "print", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "hasattr", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "dir", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "id", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "memoryview", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "super", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "property", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "__build_class__", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "exit", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "license", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "anext", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "getattr", STG_GLOBAL_DANGEROUS, true},
    {"builtins", "vars", STG_GLOBAL_DANGEROUS, true},
    {"builtins", "help", STG_GLOBAL_DANGEROUS, true},
    {"builtins", "len.__self__", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "Len", STG_GLOBAL_DANGEROUS, false},
    /* near misses: builtins that call, import or reach attributes stay blocked */
    {"builtins", "object", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "type", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "map", STG_GLOBAL_DANGEROUS, false},
    {"builtins", "xrange", STG_GLOBAL_DANGEROUS, false},
    {"__builtin__", "apply", STG_GLOBAL_DANGEROUS, false},
    {"__builtin__", "reduce", STG_GLOBAL_DANGEROUS, true},
    {"__builtin__", "intern", STG_GLOBAL_DANGEROUS, true},
    {"numpy.matrixlib.defmatrix", "asmatrix", STG_GLOBAL_UNKNOWN, false},
    {"numpy.matrixlib", "matrix", STG_GLOBAL_UNKNOWN, false},
    {"numpy", "matrix", STG_GLOBAL_ALLOWED, false},
    {"numpy", "asmatrix", STG_GLOBAL_UNKNOWN, false},
    /* torch.qscheme constants of quantized tensors */
    {"torch", "per_tensor_affine", STG_GLOBAL_ALLOWED, false},
    {"torch", "per_channel_affine", STG_GLOBAL_ALLOWED, false},
    {"torch", "per_tensor_symmetric", STG_GLOBAL_ALLOWED, false},
    {"torch", "per_channel_symmetric", STG_GLOBAL_ALLOWED, false},
    {"torch", "per_channel_affine_float_qparams", STG_GLOBAL_ALLOWED, false},
    {"torch", "quantize_per_tensor", STG_GLOBAL_UNKNOWN, false},
    {"torch", "qscheme", STG_GLOBAL_UNKNOWN, false},
    /* benign */
    {"torch.nn.modules.rnn", "LSTM", STG_GLOBAL_BENIGN, false},
    {"torch.nn.modules.transformer", "TransformerEncoderLayer", STG_GLOBAL_BENIGN, false},
    {"torch.nn.modules.activation", "MultiheadAttention", STG_GLOBAL_BENIGN, false},
    {"torch.nn.modules.linear", "NonDynamicallyQuantizableLinear", STG_GLOBAL_BENIGN, false},
    {"torch.nn.modules.loss", "CrossEntropyLoss", STG_GLOBAL_BENIGN, false},
    {"torch.nn.functional", "relu", STG_GLOBAL_BENIGN, false},
    {"transformers.training_args", "TrainingArguments", STG_GLOBAL_BENIGN, false},
    {"transformers.trainer_utils", "IntervalStrategy", STG_GLOBAL_BENIGN, false},
    {"transformers.debug_utils", "DebugOption", STG_GLOBAL_BENIGN, false},
    /* near misses: Lazy modules pickle hook handles, other names are on no list */
    {"torch.nn.modules.linear", "LazyLinear", STG_GLOBAL_UNKNOWN, false},
    {"torch.utils.hooks", "RemovableHandle", STG_GLOBAL_UNKNOWN, false},
    {"torch.nn.modules.rnn", "LSTMX", STG_GLOBAL_UNKNOWN, false},
    {"torch.nn.functional", "conv2d", STG_GLOBAL_UNKNOWN, false},
    {"transformers.training_args", "default_logdir", STG_GLOBAL_UNKNOWN, false},
    {"transformers.trainer_utils", "set_seed", STG_GLOBAL_UNKNOWN, false},
    {"transformers", "TrainingArguments", STG_GLOBAL_UNKNOWN, false},
    {"torch.nn.modules.linear", "Linear", STG_GLOBAL_BENIGN, false},
    {"torch.nn.modules.container", "Sequential", STG_GLOBAL_BENIGN, false},
    {"argparse", "Namespace", STG_GLOBAL_BENIGN, false},
    /* hard-block, also through dotted names */
    {"os", "system", STG_GLOBAL_DANGEROUS, true},
    {"posix", "system", STG_GLOBAL_DANGEROUS, true},
    {"subprocess", "check_output", STG_GLOBAL_DANGEROUS, true},
    {"builtins", "getattr", STG_GLOBAL_DANGEROUS, true},
    {"builtins", "eval", STG_GLOBAL_DANGEROUS, true},
    {"torch", "load", STG_GLOBAL_DANGEROUS, true},
    {"torch.storage", "_load_from_bytes", STG_GLOBAL_DANGEROUS, true},
    {"numpy", "load", STG_GLOBAL_DANGEROUS, true},
    {"joblib", "load", STG_GLOBAL_DANGEROUS, true},
    {"torch", "serialization.os.system", STG_GLOBAL_DANGEROUS, true},
    {"torch", "serialization.pickle.loads", STG_GLOBAL_DANGEROUS, true},
    {"numpy", "__builtins__", STG_GLOBAL_DANGEROUS, true},
    /* denylist: every dotted prefix and component */
    {"asyncio.unix_events", "_UnixSubprocessTransport", STG_GLOBAL_DANGEROUS, false},
    {"torch.hub", "load_state_dict_from_url", STG_GLOBAL_DANGEROUS, true},
    {"torch.utils.collect_env", "run", STG_GLOBAL_DANGEROUS, false},
    {"numpy.testing._private.utils", "runstring", STG_GLOBAL_DANGEROUS, false},
    {"io", "FileIO", STG_GLOBAL_DANGEROUS, false},
    {"mypkg", "shutil.rmtree", STG_GLOBAL_DANGEROUS, false},
    {"copyreg", "_reconstructor", STG_GLOBAL_DANGEROUS, false},
    /* dunder components */
    {"torch", "Tensor.__class__", STG_GLOBAL_DANGEROUS, false},
    {"collections", "OrderedDict.__init_subclass__", STG_GLOBAL_DANGEROUS, false},
    {"mypkg", "f.__globals__", STG_GLOBAL_DANGEROUS, false},
    /* private modules */
    {"_posixsubprocess", "fork_exec", STG_GLOBAL_DANGEROUS, true},
    {"_private", "thing", STG_GLOBAL_DANGEROUS, false},
    {"_codecs", "decode", STG_GLOBAL_DANGEROUS, false},
    /* unknown */
    {"__main__", "Model", STG_GLOBAL_UNKNOWN, false},
    {"mypkg.models", "Net", STG_GLOBAL_UNKNOWN, false},
    {"torch", "nn.Module", STG_GLOBAL_UNKNOWN, false},
    {"torch._utils", "_rebuild_tensor_v3", STG_GLOBAL_UNKNOWN, false},
    {"collections", "OrderedDic", STG_GLOBAL_UNKNOWN, false},
    {"collections", "OrderedDictX", STG_GLOBAL_UNKNOWN, false},
    {"osx", "system", STG_GLOBAL_UNKNOWN, false},
    {"", "", STG_GLOBAL_UNKNOWN, false},
    {"a.", ".b", STG_GLOBAL_UNKNOWN, false},
};

START_TEST(builtin_classes)
{
    stg_policy_verdict v = classify(NULL, table[_i].module, table[_i].name);
    ck_assert_msg(v.klass == table[_i].klass, "%s.%s: %s (%s)", table[_i].module, table[_i].name,
                  stg_global_class_name(v.klass), v.reason);
    ck_assert_msg(v.hard_block == table[_i].hard, "%s.%s: hard_block %d", table[_i].module,
                  table[_i].name, v.hard_block);
}
END_TEST

START_TEST(version_string)
{
    ck_assert_str_eq(stg_policy_version(), "2026.12.2");
    ck_assert_str_eq(stg_policy_version(), STG_POLICY_VERSION);
}
END_TEST

/* Names with NUL bytes or too many components are never allowed by accident. */
START_TEST(odd_names)
{
    stg_policy_verdict v = stg_policy_classify(NULL, "collections\0x", 13, "OrderedDict", 11);
    ck_assert_int_eq(v.klass, STG_GLOBAL_UNKNOWN);
    char many[400];
    size_t n = 0;
    for (int i = 0; i < 100; i++) {
        many[n++] = 'a';
        many[n++] = '.';
    }
    memcpy(many + n, "os.system", 9);
    n += 9;
    v = stg_policy_classify(NULL, many, n, "x", 1);
    ck_assert_int_ge(v.klass, STG_GLOBAL_DANGEROUS);
    char longname[5000];
    memset(longname, 'a', sizeof longname);
    v = stg_policy_classify(NULL, longname, sizeof longname, "x", 1);
    ck_assert_int_eq(v.klass, STG_GLOBAL_UNKNOWN);
}
END_TEST

START_TEST(caller_allow_and_deny)
{
    stg_policy *p = NULL;
    ck_assert_int_eq(stg_policy_new(&p), STG_OK);
    ck_assert_int_eq(stg_policy_allow_spec(p, "mypkg.models:Net"), STG_OK);
    ck_assert_int_eq(classify(p, "mypkg.models", "Net").klass, STG_GLOBAL_ALLOWED);
    ck_assert_int_eq(classify(p, "mypkg.models", "Net2").klass, STG_GLOBAL_UNKNOWN);
    ck_assert_int_eq(classify(NULL, "mypkg.models", "Net").klass, STG_GLOBAL_UNKNOWN);
    /* Allowing what the denylist names is possible (exact pair), the hard-block list is not. */
    ck_assert_int_eq(stg_policy_allow_spec(p, "copyreg:_reconstructor"), STG_OK);
    ck_assert_int_eq(classify(p, "copyreg", "_reconstructor").klass, STG_GLOBAL_ALLOWED);
    ck_assert_int_eq(stg_policy_allow_spec(p, "os:system"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, "torch", "serialization.os.system"),
                     STG_E_BAD_ARG);
    ck_assert_int_eq(classify(p, "os", "system").klass, STG_GLOBAL_DANGEROUS);
    /* Bad specs. */
    ck_assert_int_eq(stg_policy_allow_spec(p, "nocolon"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_allow_spec(p, ":x"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_allow_spec(p, "m:"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_allow_spec(p, "m m:x"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, "mod", NULL), STG_E_BAD_ARG);
    /* Deny: whole module (with submodules) or one attribute. */
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, "evilpkg", NULL), STG_OK);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, "otherpkg", "danger"), STG_OK);
    stg_policy_verdict v = classify(p, "evilpkg.sub", "f");
    ck_assert_int_eq(v.klass, STG_GLOBAL_DANGEROUS);
    ck_assert_str_eq(v.reason, "caller's denylist");
    ck_assert_int_eq(classify(p, "otherpkg", "danger").klass, STG_GLOBAL_DANGEROUS);
    ck_assert_int_eq(classify(p, "otherpkg", "safe").klass, STG_GLOBAL_UNKNOWN);
    ck_assert_int_eq(classify(p, "evilpkgs", "f").klass, STG_GLOBAL_UNKNOWN);
    stg_policy_free(p);
    stg_policy_free(NULL);
    ck_assert_int_eq(stg_policy_new(NULL), STG_E_BAD_ARG);
}
END_TEST

static stg_status load(stg_policy *p, const char *text, uint64_t *line)
{
    return stg_policy_load(p, text, strlen(text), line);
}

START_TEST(policy_file_format)
{
    stg_policy *p = NULL;
    uint64_t line = 99;
    ck_assert_int_eq(stg_policy_new(&p), STG_OK);
    ck_assert_int_eq(load(p,
                          "stguard-policy 1\r\n"
                          "# reviewed 2026-11\n"
                          "\n"
                          "allow mypkg.models Net   # our model class\n"
                          "  deny\tbadpkg\n"
                          "deny otherpkg danger\n",
                          &line),
                     STG_OK);
    ck_assert_uint_eq(line, 0);
    ck_assert_int_eq(classify(p, "mypkg.models", "Net").klass, STG_GLOBAL_ALLOWED);
    ck_assert_int_eq(classify(p, "badpkg.x", "y").klass, STG_GLOBAL_DANGEROUS);
    ck_assert_int_eq(classify(p, "otherpkg", "danger").klass, STG_GLOBAL_DANGEROUS);
    stg_policy_free(p);

    static const struct {
        const char *text;
        uint64_t line;
    } bad[] = {
        {"", 1},
        {"allow a b\n", 1},
        {"stguard-policy 2\n", 1},
        {"stguard-policy 1 extra\n", 1},
        {"stguard-policy 1\nallow a\n", 2},
        {"stguard-policy 1\n# ok\nallow a b c\n", 3},
        {"stguard-policy 1\ndeny\n", 2},
        {"stguard-policy 1\ndeny a b c\n", 2},
        {"stguard-policy 1\npermit a b\n", 2},
        {"stguard-policy 1\n\n\nallow os system\n", 4},
        {"stguard-policy 1\nallow a:b c\n", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(stg_policy_new(&p), STG_OK);
        line = 0;
        ck_assert_msg(load(p, bad[i].text, &line) == STG_E_INVALID, "case %zu", i);
        ck_assert_msg(line == bad[i].line, "case %zu: line %llu, want %llu", i,
                      (unsigned long long)line, (unsigned long long)bad[i].line);
        stg_policy_free(p);
    }
    /* A NUL byte inside a line. */
    ck_assert_int_eq(stg_policy_new(&p), STG_OK);
    ck_assert_int_eq(stg_policy_load(p, "stguard-policy 1\nallow a\0 b\n", 27, &line),
                     STG_E_INVALID);
    ck_assert_uint_eq(line, 2);
    /* No trailing newline is fine. */
    ck_assert_int_eq(load(p, "stguard-policy 1\nallow m n", &line), STG_OK);
    ck_assert_int_eq(classify(p, "m", "n").klass, STG_GLOBAL_ALLOWED);
    stg_policy_free(p);
}
END_TEST

/* The scanner uses the caller's policy: an allowed class makes the file clean. */
START_TEST(scanner_uses_policy)
{
    static const uint8_t pk[] = "cmypkg.models\nNet\n)R.";
    stg_limits lim;
    stg_limits_default(&lim);
    stg_policy *p = NULL;
    ck_assert_int_eq(stg_policy_new(&p), STG_OK);
    for (int with = 0; with < 2; with++) {
        stg_report *r = stg_report_new(&lim);
        stg_check_ctx ctx;
        stg_check_ctx_init(&ctx, &lim, r);
        ctx.policy = with ? p : NULL;
        stg_check_pickles(pk, sizeof pk - 1, 0, STG_PICKLE_RAW, &ctx);
        stg_report_finish(r);
        if (with) {
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
            ck_assert_int_eq(stg_report_global_at(r, 0)->klass, STG_GLOBAL_ALLOWED);
        } else {
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
            ck_assert(tu_find(r, STG_PICKLE_GLOBAL_UNKNOWN) == 0);
            ck_assert_int_eq(stg_report_global_at(r, 0)->klass, STG_GLOBAL_UNKNOWN);
        }
        stg_report_free(r);
        ck_assert_int_eq(stg_policy_allow_spec(p, "mypkg.models:Net"), STG_OK);
    }
    stg_policy_free(p);
}
END_TEST

/* pickle.dumps of an object whose __reduce__ is (len, ([1, 2, 3],)), protocol 2 (Python 3
 * writes __builtin__ there): the whole file is ok, weights-only; the same call of pow (left out:
 * pow(2, 1 << 40) runs for hours) stays unsafe. */
START_TEST(harmless_builtin_call_is_ok)
{
    static const uint8_t len_pk[] = "\x80\x02"
                                    "c__builtin__\nlen\nq\x00]q\x01(K\x01K\x02K\x03"
                                    "e\x85q\x02Rq\x03.";
    static const uint8_t pow_pk[] = "\x80\x02"
                                    "c__builtin__\npow\nq\x00K\x02K\n\x86q\x01Rq\x02.";
    stg_limits lim;
    stg_limits_default(&lim);
    for (int k = 0; k < 2; k++) {
        stg_report *r = stg_report_new(&lim);
        stg_check_ctx ctx;
        stg_check_ctx_init(&ctx, &lim, r);
        if (k == 0) {
            stg_check_buffer(len_pk, sizeof len_pk - 1, "len.pkl", &ctx);
        } else {
            stg_check_buffer(pow_pk, sizeof pow_pk - 1, "pow.pkl", &ctx);
        }
        stg_report_finish(r);
        stg_verdict want = k == 0 ? STG_VERDICT_OK : STG_VERDICT_UNSAFE;
        ck_assert_msg(stg_report_verdict(r) == want, "%d: %s", k, tu_describe(r));
        ck_assert_int_eq(stg_report_global_at(r, 0)->klass,
                         k == 0 ? STG_GLOBAL_ALLOWED : STG_GLOBAL_DANGEROUS);
        stg_report_free(r);
    }
}
END_TEST

/* A benign class is a warning (listed as benign), never ok and never unsafe. */
START_TEST(benign_is_warning)
{
    static const uint8_t pk[] = "ctorch.nn.modules.linear\nLinear\n)\x81.";
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, &lim, r);
    stg_check_pickles(pk, sizeof pk - 1, 0, STG_PICKLE_RAW, &ctx);
    stg_report_finish(r);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    long i = tu_find(r, STG_PICKLE_GLOBAL_BENIGN);
    ck_assert(i >= 0);
    ck_assert_uint_eq(stg_report_at(r, (size_t)i)->offset, 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)i)->name, "Linear");
    stg_report_free(r);
}
END_TEST

/* What stg_policy_add, _allow_spec and _load refuse, and entries at the length limits. */
START_TEST(policy_entry_limits)
{
    stg_policy *p = NULL;
    ck_assert_int_eq(stg_policy_new(&p), STG_OK);
    ck_assert_int_eq(stg_policy_add(NULL, STG_POLICY_ALLOW, "m", "n"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, NULL, "n"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, (stg_policy_list)7, "m", "n"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_allow_spec(NULL, "m:n"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_allow_spec(p, NULL), STG_E_BAD_ARG);
    /* Words: no DEL, '#', ':' or spaces. */
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, "m\x7f", "n"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, "m#", NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_allow_spec(p, "a:b:c"), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, "m", "n x"), STG_E_BAD_ARG);
    /* A word is at most 2048 bytes, and an allowed pair at most 4096 with its dot. */
    static char w2049[2050], w2048[2049], w2047[2048];
    memset(w2049, 'a', 2049);
    memset(w2048, 'b', 2048);
    memset(w2047, 'c', 2047);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, w2049, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, w2048, w2048), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, w2048, w2047), STG_OK);
    ck_assert_int_eq(stg_policy_classify(p, w2048, 2048, w2047, 2047).klass, STG_GLOBAL_ALLOWED);
    /* More than 64 dotted components cannot be checked, so they cannot be allowed. */
    char dotted[200];
    size_t n = 0;
    for (int i = 0; i < 64; i++) {
        dotted[n++] = 'd';
        dotted[n++] = '.';
    }
    dotted[n++] = 'd';
    dotted[n] = '\0';
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, dotted, "x"), STG_E_BAD_ARG);
    /* A deny pair too long to join matches nothing, and the entries after it still apply. */
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, w2048, w2048), STG_OK);
    ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, "later", NULL), STG_OK);
    stg_policy_verdict v = classify(p, "later.x", "y");
    ck_assert_int_eq(v.klass, STG_GLOBAL_DANGEROUS);
    ck_assert_str_eq(v.reason, "caller's denylist");
    /* Many entries (the lists grow). */
    for (int i = 0; i < 40; i++) {
        char m[16];
        snprintf(m, sizeof m, "pkg%d", i);
        ck_assert_int_eq(stg_policy_add(p, STG_POLICY_ALLOW, m, "Net"), STG_OK);
        ck_assert_int_eq(stg_policy_add(p, STG_POLICY_DENY, m, "Bad"), STG_OK);
    }
    for (int i = 0; i < 40; i++) {
        char m[16];
        snprintf(m, sizeof m, "pkg%d", i);
        ck_assert_int_eq(classify(p, m, "Net").klass, STG_GLOBAL_ALLOWED);
        ck_assert_int_eq(classify(p, m, "Bad").klass, STG_GLOBAL_DANGEROUS);
        ck_assert_int_eq(classify(p, m, "Other").klass, STG_GLOBAL_UNKNOWN);
    }
    stg_policy_free(p);
    /* A module and name of 4096 bytes with the dot are too long to check: unknown. */
    static char m4000[4000];
    memset(m4000, 'm', sizeof m4000);
    v = stg_policy_classify(NULL, m4000, sizeof m4000, w2048, 96);
    ck_assert_int_eq(v.klass, STG_GLOBAL_UNKNOWN);
    ck_assert_str_eq(v.reason, "name too long or too deeply dotted");
    v = stg_policy_classify(NULL, m4000, sizeof m4000, w2048, 95);
    ck_assert_str_eq(v.reason, "on no list");
    /* Private and dunder-looking modules. */
    v = classify(NULL, "__foo_", "bar");
    ck_assert_int_eq(v.klass, STG_GLOBAL_DANGEROUS);
    ck_assert_str_eq(v.reason, "private module");
    v = classify(NULL, "_a__", "bar");
    ck_assert_str_eq(v.reason, "private module");
    v = classify(NULL, "__foo__", "bar");
    ck_assert_int_eq(v.klass, STG_GLOBAL_UNKNOWN);
    ck_assert_str_eq(v.reason, "on no list");
}
END_TEST

/* stg_policy_load's arguments and its header line. */
START_TEST(policy_load_arguments)
{
    stg_policy *p = NULL;
    uint64_t line = 7;
    ck_assert_int_eq(stg_policy_load(NULL, "stguard-policy 1\n", 17, &line), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_policy_new(&p), STG_OK);
    ck_assert_int_eq(stg_policy_load(p, NULL, 5, &line), STG_E_BAD_ARG);
    /* No bytes at all: the header line is missing. */
    ck_assert_int_eq(stg_policy_load(p, NULL, 0, &line), STG_E_INVALID);
    ck_assert_uint_eq(line, 1);
    ck_assert_int_eq(load(p, "stguard-policy\n", &line), STG_E_INVALID);
    ck_assert_uint_eq(line, 1);
    ck_assert_int_eq(load(p, "# comment first\nstguard-policy 1\n", &line), STG_E_INVALID);
    ck_assert_uint_eq(line, 1);
    /* err_line may be NULL, on success and on error. */
    ck_assert_int_eq(load(p, "stguard-policy 1\ndeny evil\n", NULL), STG_OK);
    ck_assert_int_eq(classify(p, "evil", "x").klass, STG_GLOBAL_DANGEROUS);
    ck_assert_int_eq(load(p, "stguard-policy 1\nallow os system\n", NULL), STG_E_INVALID);
    ck_assert_int_eq(classify(p, "os", "system").klass, STG_GLOBAL_DANGEROUS);
    stg_policy_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pickle_policy");
    TCase *tc = tcase_create("policy");
    tcase_add_loop_test(tc, builtin_classes, 0, (int)(sizeof table / sizeof table[0]));
    tcase_add_test(tc, version_string);
    tcase_add_test(tc, odd_names);
    tcase_add_test(tc, caller_allow_and_deny);
    tcase_add_test(tc, policy_file_format);
    tcase_add_test(tc, scanner_uses_policy);
    tcase_add_test(tc, benign_is_warning);
    tcase_add_test(tc, harmless_builtin_call_is_ok);
    tcase_add_test(tc, policy_entry_limits);
    tcase_add_test(tc, policy_load_arguments);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
