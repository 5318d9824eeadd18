/* auto_map rules (validator/remote_code.c, docs/remote-code.md) through the public API: every
 * remote_code* code with a trigger and a near miss, the four config names, tokenizer pairs with
 * null, cross-repo references, whether the module file lies beside the config on disk (and the
 * report's neighbours flag), bytes under a config name that are no JSON, .py labels and limits.
 *
 * The reference grammar follows transformers' get_class_from_dynamic_module
 * (src/transformers/dynamic_module_utils.py): `if "--" in class_reference: repo_id,
 * class_reference = class_reference.split("--")`, then `module_file, class_name =
 * class_reference.split(".")`, and `module_file + ".py"` is fetched and imported. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/remote_code.h"
#include "validator/report.h"

static stg_report *scan_named(const char *text, const char *name, stg_profile profile)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.limits.profile = profile;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(text, strlen(text), name, &opt, &r), STG_OK);
    return r;
}

static const stg_finding *nth_of(const stg_report *r, stg_code code, size_t nth)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->code == code && nth-- == 0) {
            return f;
        }
    }
    return NULL;
}

static void assert_global(const stg_finding *f, const char *module, const char *name)
{
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->module_len, strlen(module));
    ck_assert(memcmp(f->module, module, f->module_len) == 0);
    ck_assert_uint_eq(f->name_len, strlen(name));
    ck_assert(memcmp(f->name, name, f->name_len) == 0);
}

START_TEST(test_remote_code_trigger_and_near_miss)
{
    static const char *const names[] = {"config.json", "tokenizer_config.json",
                                        "preprocessor_config.json", "processor_config.json"};
    const char *cfg = "{\"model_type\":\"x\",\"auto_map\":{\"AutoModel\":\"modeling_x.XModel\"}}";
    for (size_t i = 0; i < 4; i++) {
        for (int p = 0; p < 2; p++) {
            stg_report *r = scan_named(cfg, names[i], (stg_profile)p);
            const stg_finding *f = nth_of(r, STG_REMOTE_CODE, 0);
            ck_assert_msg(f != NULL, "%s: %s", names[i], tu_describe(r));
            ck_assert_int_eq(f->severity, STG_SEV_WARNING);
            ck_assert(f->has_offset);
            ck_assert_uint_eq(f->offset, (uint64_t)(strstr(cfg, "\"modeling") - cfg));
            assert_global(f, "modeling_x", "XModel");
            ck_assert_ptr_nonnull(strstr(f->message, "not looked up"));
            ck_assert_int_eq(stg_report_format(r), STG_FMT_JSON);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
            stg_report_free(r);
        }
    }
    /* near misses: auto_map nested below the top level (transformers reads config.auto_map),
     * a key that only looks like it, the same text under a name no rule reads */
    static const char *const misses[] = {
        "{\"text_config\":{\"auto_map\":{\"AutoModel\":\"modeling_x.XModel\"}}}",
        "{\"auto_maps\":{\"AutoModel\":\"modeling_x.XModel\"}}",
        "{\"note\":\"auto_map modeling_x.XModel\"}",
    };
    for (size_t i = 0; i < 3; i++) {
        stg_report *r = scan_named(misses[i], "config.json", STG_PROFILE_STRICT);
        ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
        stg_report_free(r);
    }
    stg_report *r = scan_named(cfg, "notes.json", STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_report_free(r);
}
END_TEST

/* An escaped key is the same key to Python's json module. */
START_TEST(test_escaped_key_and_duplicates)
{
    const char *cfg = "{\"auto\\u005fmap\":{\"AutoModel\":\"m.A\"},\"auto_map\":{\"AutoModel\":"
                      "\"n.B\"}}";
    stg_report *r = scan_named(cfg, "config.json", STG_PROFILE_STRICT);
    assert_global(nth_of(r, STG_REMOTE_CODE, 0), "m", "A");
    assert_global(nth_of(r, STG_REMOTE_CODE, 1), "n", "B");
    stg_report_free(r);
}
END_TEST

START_TEST(test_tokenizer_pair)
{
    const char *cfg = "{\"auto_map\":{\"AutoTokenizer\":[\"tokenization_x.XTokenizer\","
                      "\"tokenization_x_fast.XTokenizerFast\"],\"AutoProcessor\":[null,"
                      "\"processing_x.XProcessor\"]}}";
    stg_report *r = scan_named(cfg, "tokenizer_config.json", STG_PROFILE_STRICT);
    ck_assert_uint_eq(tu_count(r, STG_REMOTE_CODE), 3);
    assert_global(nth_of(r, STG_REMOTE_CODE, 0), "tokenization_x", "XTokenizer");
    assert_global(nth_of(r, STG_REMOTE_CODE, 1), "tokenization_x_fast", "XTokenizerFast");
    assert_global(nth_of(r, STG_REMOTE_CODE, 2), "processing_x", "XProcessor");
    ck_assert_int_eq(tu_find(r, STG_REMOTE_CODE_INVALID), -1);
    stg_report_free(r);
    /* [null, null]: nothing to import, nothing reported */
    r = scan_named("{\"auto_map\":{\"AutoTokenizer\":[null,null]}}", "tokenizer_config.json",
                   STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_report_free(r);
}
END_TEST

START_TEST(test_cross_repo)
{
    const char *cfg = "{\"auto_map\":{\"AutoModel\":\"other/repo--modeling_x.XModel\"}}";
    for (int p = 0; p < 2; p++) {
        stg_report *r = scan_named(cfg, "config.json", (stg_profile)p);
        const stg_finding *f = nth_of(r, STG_REMOTE_CODE_CROSS_REPO, 0);
        ck_assert_msg(f != NULL, "%s", tu_describe(r));
        ck_assert_int_eq(f->severity, STG_SEV_WARNING);
        ck_assert_uint_eq(f->offset, (uint64_t)(strstr(cfg, "\"other") - cfg));
        assert_global(f, "other/repo--modeling_x", "XModel");
        ck_assert_int_eq(tu_find(r, STG_REMOTE_CODE), -1);
        stg_report_free(r);
    }
    /* near miss: a single dash is part of the module name, not a repo separator */
    stg_report *r = scan_named("{\"auto_map\":{\"AutoModel\":\"modeling-x.XModel\"}}",
                               "config.json", STG_PROFILE_STRICT);
    ck_assert_int_eq(tu_find(r, STG_REMOTE_CODE_CROSS_REPO), -1);
    assert_global(nth_of(r, STG_REMOTE_CODE, 0), "modeling-x", "XModel");
    stg_report_free(r);
}
END_TEST

START_TEST(test_invalid)
{
    /* what split(".") or split("--") refuses, and values that are no reference */
    static const char *const bad[] = {
        "{\"auto_map\":{\"AutoModel\":\"a.b.c\"}}",
        "{\"auto_map\":{\"AutoModel\":\"nodot\"}}",
        "{\"auto_map\":{\"AutoModel\":\"a--b--c.D\"}}",
        "{\"auto_map\":{\"AutoModel\":\".X\"}}",
        "{\"auto_map\":{\"AutoModel\":\"m.\"}}",
        "{\"auto_map\":{\"AutoModel\":\"--m.X\"}}",
        "{\"auto_map\":{\"AutoModel\":42}}",
        "{\"auto_map\":{\"AutoModel\":{\"x\":\"m.X\"}}}",
        "{\"auto_map\":{\"AutoTokenizer\":[\"m.X\",7]}}",
        "{\"auto_map\":[\"m.X\"]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int p = 0; p < 2; p++) {
            stg_report *r = scan_named(bad[i], "config.json", (stg_profile)p);
            const stg_finding *f = nth_of(r, STG_REMOTE_CODE_INVALID, 0);
            ck_assert_msg(f != NULL, "%s: %s", bad[i], tu_describe(r));
            ck_assert_int_eq(f->severity, STG_SEV_WARNING);
            ck_assert(f->has_offset);
            stg_report_free(r);
        }
    }
    /* near miss */
    stg_report *r = scan_named("{\"auto_map\":{\"AutoModel\":\"m.X\"}}", "config.json",
                               STG_PROFILE_STRICT);
    ck_assert_int_eq(tu_find(r, STG_REMOTE_CODE_INVALID), -1);
    stg_report_free(r);
}
END_TEST

/* Bytes under a config name that are no JSON: the content decides, as without the name. */
START_TEST(test_not_json)
{
    stg_report *r = scan_named("auto_map: modeling_x.XModel\n", "config.json", STG_PROFILE_STRICT);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TEXT);
    stg_report_free(r);
    r = scan_named("{\"auto_map\":{\"AutoModel\":\"m.X\"}} trailing", "config.json",
                   STG_PROFILE_STRICT);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    /* a pickle named config.json is still a pickle */
    static const uint8_t pkl[] = "\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94"
                                 "\x8c\x06system\x94\x93\x94.";
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    ck_assert_int_eq(stg_scan_buffer(pkl, sizeof pkl - 1, "config.json", &opt, &r), STG_OK);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PICKLE);
    ck_assert_int_ge(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS), 0);
    stg_report_free(r);
}
END_TEST

START_TEST(test_python_label)
{
    stg_report *r = scan_named("import os\nprint(os.getcwd())\n", "modeling_x.py",
                               STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PYTHON_CODE);
    ck_assert_str_eq(stg_format_name(STG_FMT_PYTHON_CODE), "python_code");
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    /* near miss: binary bytes named .py are not Python source */
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    ck_assert_int_eq(stg_scan_buffer("\x01\x02\x03", 3, "x.py", &opt, &r), STG_OK);
    ck_assert_int_ne(stg_report_format(r), STG_FMT_PYTHON_CODE);
    stg_report_free(r);
}
END_TEST

static char *join(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* On disk the module file is looked up beside the config, and the report says its result
 * depends on neighbours. */
START_TEST(test_beside_on_disk)
{
    char *dir = tu_tempdir();
    char *cfg = join(dir, "config.json");
    char *mod = join(dir, "modeling_x.py");
    const char *text = "{\"auto_map\":{\"AutoModel\":\"modeling_x.XModel\",\"AutoConfig\":"
                       "\"configuration_x.XConfig\"}}";
    ck_assert_int_eq(tu_write_file(cfg, text, strlen(text)), 0);
    ck_assert_int_eq(tu_write_file(mod, "import os\n", 10), 0);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(cfg, &opt, &r), STG_OK);
    const stg_finding *present = nth_of(r, STG_REMOTE_CODE, 0);
    const stg_finding *absent = nth_of(r, STG_REMOTE_CODE, 1);
    assert_global(present, "modeling_x", "XModel");
    ck_assert_ptr_nonnull(strstr(present->message, "present beside"));
    assert_global(absent, "configuration_x", "XConfig");
    ck_assert_ptr_nonnull(strstr(absent->message, "not beside"));
    ck_assert(r->neighbours);
    stg_report_free(r);
    /* a folder of that name is no module file */
    unlink(mod);
    char *as_dir = join(dir, "modeling_x.py");
    ck_assert_int_eq(mkdir(as_dir, 0700), 0);
    ck_assert_int_eq(stg_scan_path(cfg, &opt, &r), STG_OK);
    const stg_finding *as_folder = nth_of(r, STG_REMOTE_CODE, 0);
    ck_assert_ptr_nonnull(as_folder);
    ck_assert_ptr_nonnull(strstr(as_folder->message, "not beside"));
    stg_report_free(r);
    rmdir(as_dir);
    /* near miss: a config without auto_map looks at nothing beside it */
    const char *plain = "{\"model_type\":\"bert\"}";
    ck_assert_int_eq(tu_write_file(cfg, plain, strlen(plain)), 0);
    ck_assert_int_eq(stg_scan_path(cfg, &opt, &r), STG_OK);
    ck_assert_uint_eq(stg_report_count(r), 0);
    ck_assert(!r->neighbours);
    stg_report_free(r);
    tu_rmtree(dir);
    free(as_dir);
    free(cfg);
    free(mod);
    free(dir);
}
END_TEST

START_TEST(test_refs_limit)
{
    size_t n = STG_AUTO_MAP_REFS_CEILING + 8;
    size_t cap = n * 24 + 64, at = 0;
    char *text = malloc(cap);
    at += (size_t)sprintf(text + at, "{\"auto_map\":{");
    for (size_t i = 0; i < n; i++) {
        at += (size_t)sprintf(text + at, "%s\"K%zu\":\"m.X\"", i ? "," : "", i);
    }
    sprintf(text + at, "}}");
    stg_report *r = scan_named(text, "config.json", STG_PROFILE_STRICT);
    ck_assert_int_ge(tu_find(r, STG_LIMIT_EXCEEDED), 0);
    ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("remote_code");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_remote_code_trigger_and_near_miss);
    tcase_add_test(tc, test_escaped_key_and_duplicates);
    tcase_add_test(tc, test_tokenizer_pair);
    tcase_add_test(tc, test_cross_repo);
    tcase_add_test(tc, test_invalid);
    tcase_add_test(tc, test_not_json);
    tcase_add_test(tc, test_python_label);
    tcase_add_test(tc, test_beside_on_disk);
    tcase_add_test(tc, test_refs_limit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
