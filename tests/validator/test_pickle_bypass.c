/* One test per bypass class of the pickle-scanner research (docs/pickle.md lists them): each
 * hand-made malicious pickle must come out unsafe with the right code at the right offset.
 * Classes about containers (2-5, 16-18) are the container rules' tests; here the pickle side
 * of 6 and 17 is covered. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "dispatch/check.h"
#include "validator/pickle_scan.h"
#include "validator/report.h"

#define B(lit) (const uint8_t *)(lit), (sizeof(lit) - 1)

static stg_report *scan_flavor(const uint8_t *buf, size_t len, stg_pickle_flavor flavor)
{
    stg_report *r = tu_scan_pickles(buf, len, flavor, NULL);
    ck_assert_ptr_nonnull(r);
    return r;
}

static stg_report *scan(const uint8_t *buf, size_t len)
{
    return scan_flavor(buf, len, STG_PICKLE_RAW);
}

/* The finding with `code` for module.name, or NULL. */
static const stg_finding *find_global(const stg_report *r, stg_code code, const char *module,
                                      const char *name)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->code == code && f->module != NULL && strcmp(f->module, module) == 0 &&
            strcmp(f->name, name) == 0) {
            return f;
        }
    }
    return NULL;
}

static void expect_global(const uint8_t *buf, size_t len, stg_code code, const char *module,
                          const char *name, uint64_t offset)
{
    stg_report *r = scan(buf, len);
    const stg_finding *f = find_global(r, code, module, name);
    ck_assert_msg(f != NULL, "%s.%s: no %s in %s", module, name, stg_code_name(code),
                  tu_describe(r));
    ck_assert_msg(f->has_offset && f->offset == offset, "%s.%s at %llu, want %llu", module, name,
                  (unsigned long long)f->offset, (unsigned long long)offset);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
}

static void expect_code(const stg_report *r, stg_code code, uint64_t offset)
{
    long i = tu_find(r, code);
    ck_assert_msg(i >= 0, "no %s in %s", stg_code_name(code), tu_describe(r));
    const stg_finding *f = stg_report_at(r, (size_t)i);
    ck_assert_msg(f->has_offset && f->offset == offset, "%s at %llu, want %llu",
                  stg_code_name(code), (unsigned long long)f->offset, (unsigned long long)offset);
}

/* 1. Callables missing from denylists: default deny labels them unknown or dangerous. */
START_TEST(class01_default_deny)
{
    static const struct {
        const char *pickle;
        size_t len;
        stg_code code;
        const char *module, *name;
    } cases[] = {
        {"cpip\nmain\n.", 11, STG_PICKLE_GLOBAL_DANGEROUS, "pip", "main"},
        {"ctorch.utils.collect_env\nrun\n.", 30, STG_PICKLE_GLOBAL_DANGEROUS,
         "torch.utils.collect_env", "run"},
        {"cnumpy.testing._private.utils\nrunstring\n.", 41, STG_PICKLE_GLOBAL_DANGEROUS,
         "numpy.testing._private.utils", "runstring"},
        {"cuuid\n_get_command_stdout\n.", 27, STG_PICKLE_GLOBAL_DANGEROUS, "uuid",
         "_get_command_stdout"},
        {"cimaplib\nIMAP4_stream\n.", 23, STG_PICKLE_GLOBAL_DANGEROUS, "imaplib", "IMAP4_stream"},
        {"ccProfile\nrun\n.", 15, STG_PICKLE_GLOBAL_DANGEROUS, "cProfile", "run"},
        {"ctimeit\ntimeit\n.", 16, STG_PICKLE_GLOBAL_DANGEROUS, "timeit", "timeit"},
        {"cctypes\nCDLL\n.", 14, STG_PICKLE_GLOBAL_DANGEROUS, "ctypes", "CDLL"},
        {"clogging\nFileHandler\n.", 22, STG_PICKLE_GLOBAL_DANGEROUS, "logging", "FileHandler"},
        {"c_io\nFileIO\n.", 13, STG_PICKLE_GLOBAL_DANGEROUS, "_io", "FileIO"},
        {"cmypkg.gadgets\nrun_anything\n.", 29, STG_PICKLE_GLOBAL_UNKNOWN, "mypkg.gadgets",
         "run_anything"},
        {"c__main__\nModel\n.", 17, STG_PICKLE_GLOBAL_UNKNOWN, "__main__", "Model"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_uint_eq(strlen(cases[i].pickle), cases[i].len);
        expect_global((const uint8_t *)cases[i].pickle, cases[i].len, cases[i].code,
                      cases[i].module, cases[i].name, 0);
    }
}
END_TEST

/* 6. A raw pickle whatever its name: sniffing finds it by content. */
START_TEST(class06_raw_pickle_sniffed)
{
    size_t end = 0;
    ck_assert(stg_pickle_sniff(B("\x80\x02"
                                 "cposix\nsystem\nq\x00.trailing"),
                               &end, NULL));
    ck_assert_uint_eq(end, 19);
    ck_assert(!stg_pickle_sniff(B("PK\x03\x04"), &end, NULL));
    expect_global(B("\x80\x02"
                    "cposix\nsystem\nq\x00."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "posix", "system", 2);
}
END_TEST

/* 7. A blocked parent module with an unblocked submodule. */
START_TEST(class07_submodule_of_denied_module)
{
    expect_global(B("casyncio.unix_events\n_UnixSubprocessTransport\n."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "asyncio.unix_events", "_UnixSubprocessTransport",
                  0);
    expect_global(B("cos.path\njoin\n."), STG_PICKLE_GLOBAL_DANGEROUS, "os.path", "join", 0);
}
END_TEST

/* 8. STACK_GLOBAL operands from the memo with decoys in between. */
START_TEST(class08_memo_decoys)
{
    /* 'posix' MEMOIZE POP 'builtins' MEMOIZE POP 'system' MEMOIZE POP; decoy strings pushed
     * right before STACK_GLOBAL; the real operands come from BINGET 0 and BINGET 2. */
    expect_global(B("\x80\x04"
                    "\x8c\x05posix\x94"
                    "0"
                    "\x8c\x08"
                    "builtins\x94"
                    "0"
                    "\x8c\x06system\x94"
                    "0"
                    "\x8c\x0b"
                    "collections\x8c\x0bOrderedDict"
                    "00"
                    "h\x00h\x02\x93"
                    "\x8c\x02id\x85R."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "posix", "system", 65);
    /* PUT after DUP, MEMOIZE after POP of a mark, GET by text index with underscores. */
    expect_global(B("\x80\x02"
                    "X\x02\x00\x00\x00os2p1_0\n0"
                    "(0X\x06\x00\x00\x00system\x94"
                    "g10\nh\x01\x93."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "os", "system", 36);
}
END_TEST

/* 9. STACK_GLOBAL fed by protocol 0/1 string opcodes. */
START_TEST(class09_old_string_opcodes)
{
    expect_global(B("\x80\x04S'os'\nS\"system\"\n\x93."), STG_PICKLE_GLOBAL_DANGEROUS, "os",
                  "system", 18);
    expect_global(B("\x80\x04U\x02osT\x06\x00\x00\x00system\x93."), STG_PICKLE_GLOBAL_DANGEROUS,
                  "os", "system", 17);
    /* Escapes decode before the policy sees the name: '\x6fs' is "os". */
    expect_global(B("\x80\x04S'\\x6fs'\nS'sys\\164em'\n\x93."), STG_PICKLE_GLOBAL_DANGEROUS, "os",
                  "system", 24);
    expect_global(B("\x80\x04V\\u006fs\nVsystem\n\x93."), STG_PICKLE_GLOBAL_DANGEROUS, "os",
                  "system", 19);
}
END_TEST

/* 10. BUILD or SETITEM on a class obtained from a global (attribute overwrite). */
START_TEST(class10_build_on_global)
{
    /* OrderedDict is allowed, but BUILD on the class itself sets class attributes. */
    stg_report *r = scan(B("ccollections\nOrderedDict\n}S'__reduce__'\nNsb."));
    expect_code(r, STG_PICKLE_BUILD_ON_GLOBAL, 42);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    r = scan(B("ccollections\nOrderedDict\nS'k'\nNs."));
    expect_code(r, STG_PICKLE_BUILD_ON_GLOBAL, 31);
    stg_report_free(r);
    /* BUILD on the call's result (an instance) is ordinary. */
    r = scan(B("ccollections\nOrderedDict\n)R}b."));
    ck_assert_int_eq(tu_find(r, STG_PICKLE_BUILD_ON_GLOBAL), -1);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
}
END_TEST

/* 11. Dotted names and dunder components in protocol 4 names. */
START_TEST(class11_dotted_and_dunder_names)
{
    expect_global(B("\x80\x04\x8c\x05torch\x8c\x17serialization.os.system\x93."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "torch", "serialization.os.system", 34);
    expect_global(B("\x80\x04\x8c\x05numpy\x8c\x0c__builtins__\x93."), STG_PICKLE_GLOBAL_DANGEROUS,
                  "numpy", "__builtins__", 23);
    expect_global(B("\x80\x04\x8c\x05torch\x8c\x10Tensor.__class__\x93."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "torch", "Tensor.__class__", 27);
    expect_global(B("ctorch._utils\n_rebuild_tensor_v2.__globals__\n."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "torch._utils", "_rebuild_tensor_v2.__globals__", 0);
    /* Allowed pairs are exact: a prefix of an allowed name is not allowed. */
    expect_global(B("ctorch\nnn.Module\n."), STG_PICKLE_GLOBAL_UNKNOWN, "torch", "nn.Module", 0);
}
END_TEST

/* 12. Universal resolvers. */
START_TEST(class12_universal_resolvers)
{
    static const char *const pairs[][2] = {
        {"pkgutil", "resolve_name"}, {"pydoc", "locate"},          {"importlib", "import_module"},
        {"builtins", "__import__"},  {"builtins", "getattr"},      {"operator", "attrgetter"},
        {"operator", "itemgetter"},  {"operator", "methodcaller"}, {"functools", "partial"},
        {"types", "FunctionType"},   {"marshal", "loads"},         {"copyreg", "_reconstructor"},
        {"__builtin__", "eval"},     {"builtins", "exec"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char buf[128];
        int n = snprintf(buf, sizeof buf, "c%s\n%s\n.", pairs[i][0], pairs[i][1]);
        expect_global((const uint8_t *)buf, (size_t)n, STG_PICKLE_GLOBAL_DANGEROUS, pairs[i][0],
                      pairs[i][1], 0);
    }
}
END_TEST

/* 13. Nested pickles: flagged, and the embedded bytes scanned. */
START_TEST(class13_nested_loader)
{
    /* _pickle.loads(b"cos\nsystem\n(S'id'\ntR.") (21 bytes); REDUCE at 40 */
    stg_report *r = scan(B("c_pickle\nloads\n(C\x15"
                           "cos\nsystem\n(S'id'\ntR."
                           "tR."));
    expect_code(r, STG_PICKLE_NESTED, 40);
    const stg_finding *f = find_global(r, STG_PICKLE_GLOBAL_DANGEROUS, "os", "system");
    ck_assert_msg(f != NULL, "%s", tu_describe(r));
    ck_assert_ptr_nonnull(f->member);
    ck_assert_str_eq(f->member, "nested@40");
    ck_assert_uint_eq(f->offset, 0);
    stg_report_free(r);
    /* Protocol 2 bytes: torch.storage._load_from_bytes(_codecs.encode(text, 'latin1')). */
    r = scan(B("\x80\x02"
               "ctorch.storage\n_load_from_bytes\nq\x00"
               "c_codecs\nencode\nq\x01X\x0f\x00\x00\x00"
               "cposix\nsystem\n."
               "X\x06\x00\x00\x00latin1\x86R\x85R."));
    f = find_global(r, STG_PICKLE_GLOBAL_DANGEROUS, "posix", "system");
    ck_assert_msg(f != NULL, "%s", tu_describe(r));
    ck_assert(tu_find(r, STG_PICKLE_NESTED) >= 0);
    stg_report_free(r);
    /* Non-literal argument: still flagged. */
    r = scan(B("cnumpy\nload\nN\x85R."));
    ck_assert(tu_find(r, STG_PICKLE_NESTED) >= 0);
    stg_report_free(r);
}
END_TEST

/* 14. A payload in a later pickle, also behind junk. */
START_TEST(class14_later_pickle)
{
    expect_global(B("\x80\x02N.\x80\x02N.\x80\x02"
                    "cos\nsystem\n."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "os", "system", 10);
    stg_report *r = scan(B("\x80\x02N.\xff\xfe\xfd\x80\x02"
                           "cos\nsystem\n."));
    expect_code(r, STG_PICKLE_MALFORMED, 4);
    ck_assert_ptr_nonnull(find_global(r, STG_PICKLE_GLOBAL_DANGEROUS, "os", "system"));
    stg_report_free(r);
}
END_TEST

/* 15. A legacy torch file whose magic number is wrong: every stream is still scanned. */
START_TEST(class15_legacy_wrong_magic)
{
    stg_report *r = scan_flavor(B("\x80\x02K\x01.\x80\x02M\xe9\x03.\x80\x02}.\x80\x02"
                                  "csubprocess\nPopen\n.\x80\x02].extra"),
                                STG_PICKLE_TORCH_LEGACY);
    ck_assert_ptr_nonnull(find_global(r, STG_PICKLE_GLOBAL_DANGEROUS, "subprocess", "Popen"));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
}
END_TEST

/* 17. Pickle/zip polyglot: the pickle at offset 0 is scanned; the zip behind it is junk to a
 * pickle reader (the container rules scan it as a zip). */
START_TEST(class17_polyglot_pickle_side)
{
    stg_report *r = scan(B("cos\nsystem\n.PK\x03\x04\x14\x00\x00\x00"));
    ck_assert_ptr_nonnull(find_global(r, STG_PICKLE_GLOBAL_DANGEROUS, "os", "system"));
    expect_code(r, STG_PICKLE_MALFORMED, 12);
    stg_report_free(r);
}
END_TEST

/* 19. An argument straddling a FRAME end. */
START_TEST(class19_frame_divergence)
{
    /* FRAME of 5 bytes: SHORT_BINUNICODE 'os' (4 bytes) then a SHORT_BINUNICODE whose
     * argument runs past the frame. */
    stg_report *r = scan(B("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00"
                           "\x8c\x02os\x8c\x06system\x93."));
    expect_code(r, STG_PICKLE_FRAME_DIVERGENCE, 15);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    /* A FRAME inside a frame. */
    r = scan(B("\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00"
               "\x95\x01\x00\x00\x00\x00\x00\x00\x00N."));
    expect_code(r, STG_PICKLE_FRAME_DIVERGENCE, 11);
    stg_report_free(r);
    /* STOP with bytes left in the frame: the pure-Python reader skips them. */
    r = scan(B("\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00N.N"));
    expect_code(r, STG_PICKLE_FRAME_DIVERGENCE, 12);
    stg_report_free(r);
    /* Near miss: frames as the pickler writes them. */
    r = scan(B("\x80\x04\x95\x0c\x00\x00\x00\x00\x00\x00\x00"
               "\x8c\x02ok\x94\x8c\x03yes\x94\x86\x94."));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
}
END_TEST

/* 20. Call results discarded; INST and OBJ calls. */
START_TEST(class20_discarded_calls)
{
    expect_global(B("(cos\nsystem\nS'id'\no0N."), STG_PICKLE_GLOBAL_DANGEROUS, "os", "system", 1);
    expect_global(B("(S'id'\nios\nsystem\n0N."), STG_PICKLE_GLOBAL_DANGEROUS, "os", "system", 7);
    expect_global(B("\x80\x02"
                    "cposix\nsystem\n"
                    "X\x02\x00\x00\x00id\x85\x81"
                    "0N."),
                  STG_PICKLE_GLOBAL_DANGEROUS, "posix", "system", 2);
}
END_TEST

/* 21. Private modules. */
START_TEST(class21_private_modules)
{
    expect_global(B("c_posixsubprocess\nfork_exec\n."), STG_PICKLE_GLOBAL_DANGEROUS,
                  "_posixsubprocess", "fork_exec", 0);
    expect_global(B("c_interpreters\nrun_string\n."), STG_PICKLE_GLOBAL_DANGEROUS, "_interpreters",
                  "run_string", 0);
    expect_global(B("c_winapi\nCreateProcess\n."), STG_PICKLE_GLOBAL_DANGEROUS, "_winapi",
                  "CreateProcess", 0);
    expect_global(B("c_someprivate\nthing\n."), STG_PICKLE_GLOBAL_DANGEROUS, "_someprivate",
                  "thing", 0);
    /* Near miss: the exact allowed pair. */
    stg_report *r = scan(B("c_codecs\nencode\n."));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    ck_assert_uint_eq(stg_report_global_count(r), 1);
    ck_assert_int_eq(stg_report_global_at(r, 0)->klass, STG_GLOBAL_ALLOWED);
    stg_report_free(r);
}
END_TEST

/* 22. EXT1/EXT2/EXT4 and STACK_GLOBAL with non-string operands. */
START_TEST(class22_unresolvable)
{
    stg_report *r = scan(B("\x80\x02\x82\x01)R."));
    expect_code(r, STG_PICKLE_GLOBAL_UNRESOLVED, 2);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    r = scan(B("\x80\x02\x83\x01\x02N."));
    expect_code(r, STG_PICKLE_GLOBAL_UNRESOLVED, 2);
    stg_report_free(r);
    r = scan(B("\x80\x02\x84\x01\x00\x00\x00N."));
    expect_code(r, STG_PICKLE_GLOBAL_UNRESOLVED, 2);
    stg_report_free(r);
    /* Operands computed by a call are not known strings. */
    r = scan(B("\x80\x04\x8c\x02os\x8c\x03str)R\x93."));
    ck_assert(tu_find(r, STG_PICKLE_GLOBAL_UNRESOLVED) >= 0);
    stg_report_free(r);
    r = scan(B("\x80\x04K\x01K\x02\x93."));
    expect_code(r, STG_PICKLE_GLOBAL_UNRESOLVED, 6);
    stg_report_free(r);
}
END_TEST

/* 23. Garbage and truncation never come out clean. */
START_TEST(class23_never_clean_on_failure)
{
    static const char *const bad[] = {
        "",
        "\x80",
        "\x80\x02",
        "cos\nsys",
        "\x80\x02X\xff\xff\xff\x7f",
        "(((((",
        "\x80\x09N.",
        "N",
        "0.",
        "\xff",
        "\x80\x02\x95\xff\xff\xff\xff\xff\xff\xff\x7fN.",
    };
    static const size_t lens[] = {0, 1, 2, 7, 7, 5, 4, 1, 2, 1, 13};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stg_report *r = scan((const uint8_t *)bad[i], lens[i]);
        ck_assert_msg(stg_report_verdict(r) >= STG_VERDICT_INVALID, "case %zu: %s", i,
                      tu_describe(r));
        ck_assert_msg(tu_find(r, STG_PICKLE_MALFORMED) >= 0, "case %zu: %s", i, tu_describe(r));
        stg_report_free(r);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pickle_bypass");
    TCase *tc = tcase_create("bypass");
    tcase_add_test(tc, class01_default_deny);
    tcase_add_test(tc, class06_raw_pickle_sniffed);
    tcase_add_test(tc, class07_submodule_of_denied_module);
    tcase_add_test(tc, class08_memo_decoys);
    tcase_add_test(tc, class09_old_string_opcodes);
    tcase_add_test(tc, class10_build_on_global);
    tcase_add_test(tc, class11_dotted_and_dunder_names);
    tcase_add_test(tc, class12_universal_resolvers);
    tcase_add_test(tc, class13_nested_loader);
    tcase_add_test(tc, class14_later_pickle);
    tcase_add_test(tc, class15_legacy_wrong_magic);
    tcase_add_test(tc, class17_polyglot_pickle_side);
    tcase_add_test(tc, class19_frame_divergence);
    tcase_add_test(tc, class20_discarded_calls);
    tcase_add_test(tc, class21_private_modules);
    tcase_add_test(tc, class22_unresolvable);
    tcase_add_test(tc, class23_never_clean_on_failure);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
