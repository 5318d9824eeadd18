/* The summary door (stg_summary_open, loader/summary_open.c): what the rules of a scan met in a
 * code-bearing file, on real files: a Keras 3 zip with a Lambda (the entries carry the member),
 * a legacy Keras HDF5 file, a SavedModel's op histogram (merged counts, most frequent first),
 * chat templates with their own verdicts and lengths, auto_map entries present / absent / in
 * another repo, the entry ceiling, a file that cannot be read, and bad arguments. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"

static char *dir;

static void setup(void)
{
    dir = tu_tempdir();
    ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
}

static const char *in_dir(const char *name)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static const char *write_text(const char *name, const char *text)
{
    const char *p = in_dir(name);
    ck_assert_int_eq(tu_write_file(p, text, strlen(text)), 0);
    return p;
}

/* Opens path (must succeed) and checks the report's verdict. */
static stg_summary *open_ok(const char *path, stg_verdict verdict)
{
    stg_summary *s = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_summary_open(path, NULL, &s, &rep);
    ck_assert_msg(st == STG_OK, "%s: %s", path, stg_status_name(st));
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(rep);
    ck_assert_msg(stg_report_verdict(rep) == verdict, "%s: verdict %s: %s", path,
                  stg_verdict_name(stg_report_verdict(rep)), tu_describe(rep));
    stg_report_free(rep);
    return s;
}

/* The index of the entry of this kind and name (-1: none); *e filled. */
static long find(const stg_summary *s, stg_summary_kind kind, const char *name,
                 stg_summary_entry *e)
{
    for (size_t i = 0; i < stg_summary_count(s); i++) {
        ck_assert_int_eq(stg_summary_at(s, i, e), STG_OK);
        ck_assert_uint_eq(e->struct_version, STG_STRUCT_VERSION);
        ck_assert_uint_eq(e->reserved[0] | e->reserved[1] | e->reserved[2] | e->reserved[3], 0);
        if (e->kind == (uint32_t)kind && e->name_len == strlen(name) &&
            memcmp(e->name, name, e->name_len) == 0) {
            return (long)i;
        }
    }
    return -1;
}

static size_t count_kind(const stg_summary *s, stg_summary_kind kind)
{
    size_t n = 0;
    stg_summary_entry e;
    for (size_t i = 0; i < stg_summary_count(s); i++) {
        ck_assert_int_eq(stg_summary_at(s, i, &e), STG_OK);
        n += e.kind == (uint32_t)kind;
    }
    return n;
}

START_TEST(test_keras_zip)
{
    /* corpus/keras/lambda.keras: a Keras 3 zip whose config.json is a Sequential with a Lambda */
    stg_summary *s = open_ok(tu_src("corpus/keras/lambda.keras"), STG_VERDICT_UNSAFE);
    stg_summary_entry e;
    ck_assert_int_eq(find(s, STG_SUMMARY_KERAS_MODEL, "Sequential", &e), 0);
    ck_assert_ptr_nonnull(e.member);
    ck_assert_str_eq(e.member, "config.json");
    ck_assert_uint_ge(e.count, 2);
    ck_assert_int_ge(find(s, STG_SUMMARY_KERAS_LAYER, "Lambda", &e), 1);
    ck_assert_uint_eq(e.count, 1);
    ck_assert_str_eq(e.member, "config.json");
    ck_assert_uint_eq(e.value_len, 0);
    ck_assert_str_eq(e.value, "");
    stg_summary_close(s);
}
END_TEST

START_TEST(test_keras_hdf5_and_json)
{
    stg_summary *s = open_ok(tu_src("corpus/hdf5/ok-k2-vlen-earliest.h5"), STG_VERDICT_OK);
    stg_summary_entry e;
    ck_assert_int_ge(find(s, STG_SUMMARY_KERAS_MODEL, "Sequential", &e), 0);
    ck_assert_ptr_null(e.member);
    ck_assert_int_ge(find(s, STG_SUMMARY_KERAS_LAYER, "Dense", &e), 0);
    stg_summary_close(s);
    /* three Dense and one Dropout: one row per class, counts merged, most frequent first */
    static const char text[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": ["
        "{\"class_name\": \"Dropout\", \"config\": {\"rate\": 0.5}},"
        "{\"class_name\": \"Dense\", \"config\": {\"units\": 2}},"
        "{\"class_name\": \"Dense\", \"config\": {\"units\": 3}},"
        "{\"class_name\": \"Dense\", \"config\": {\"units\": 4}}]}}";
    s = open_ok(write_text("config.json", text), STG_VERDICT_OK);
    ck_assert_uint_eq(count_kind(s, STG_SUMMARY_KERAS_LAYER), 2);
    ck_assert_int_eq(find(s, STG_SUMMARY_KERAS_MODEL, "Sequential", &e), 0);
    ck_assert_uint_eq(e.count, 5);
    ck_assert_uint_eq(e.offset, 0);
    ck_assert_int_eq(find(s, STG_SUMMARY_KERAS_LAYER, "Dense", &e), 1);
    ck_assert_uint_eq(e.count, 3);
    ck_assert_int_eq(find(s, STG_SUMMARY_KERAS_LAYER, "Dropout", &e), 2);
    ck_assert_uint_eq(e.count, 1);
    /* the Dropout object's own opening brace */
    ck_assert_uint_eq(e.offset, (uint64_t)(strstr(text, "{\"class_name\": \"Dropout") - text));
    stg_summary_close(s);
}
END_TEST

START_TEST(test_savedmodel_ops)
{
    size_t len = 0;
    uint8_t *pb = tu_read_file(tu_src("corpus/savedmodel/bad-tf_op_unsafe-graph.saved_model.pb"),
                               &len);
    ck_assert_ptr_nonnull(pb);
    const char *p = in_dir("saved_model.pb");
    ck_assert_int_eq(tu_write_file(p, pb, len), 0);
    free(pb);
    stg_summary *s = open_ok(p, STG_VERDICT_UNSAFE);
    stg_summary_entry e;
    ck_assert_int_ge(find(s, STG_SUMMARY_TF_OP, "WriteFile", &e), 0);
    ck_assert_uint_eq(e.count, 1);
    ck_assert_uint_gt(e.offset, 0);
    ck_assert_int_ge(find(s, STG_SUMMARY_TF_OP, "MatchingFiles", &e), 0);
    /* most frequent first, then by name */
    uint64_t prev_count = UINT64_MAX, nodes = 0;
    for (size_t i = 0; i < stg_summary_count(s); i++) {
        ck_assert_int_eq(stg_summary_at(s, i, &e), STG_OK);
        ck_assert_uint_eq(e.kind, STG_SUMMARY_TF_OP);
        ck_assert_uint_le(e.count, prev_count);
        prev_count = e.count;
        nodes += e.count;
    }
    ck_assert_uint_ge(nodes, stg_summary_count(s));
    stg_summary_close(s);
}
END_TEST

START_TEST(test_chat_templates)
{
    static const char benign[] = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
    char json[1024];
    snprintf(json, sizeof json,
             "{\"chat_template\": [{\"name\": \"default\", \"template\": \"%s\"},"
             " {\"name\": \"tool_use\", \"template\": \"{{ cycler.__init__.__globals__ }}\"}]}",
             benign);
    const char *p = write_text("tokenizer_config.json", json);
    stg_summary *s = open_ok(p, STG_VERDICT_UNSAFE);
    ck_assert_uint_eq(count_kind(s, STG_SUMMARY_CHAT_TEMPLATE), 2);
    stg_summary_entry e;
    ck_assert_int_eq(find(s, STG_SUMMARY_CHAT_TEMPLATE, "default", &e), 0);
    ck_assert_uint_eq(e.verdict, STG_VERDICT_OK);
    ck_assert_uint_eq(e.count, strlen(benign));
    ck_assert_uint_eq(e.offset, (uint64_t)(strstr(json, "{% for") - json));
    ck_assert_int_eq(find(s, STG_SUMMARY_CHAT_TEMPLATE, "tool_use", &e), 1);
    ck_assert_uint_eq(e.verdict, STG_VERDICT_UNSAFE);
    ck_assert_uint_eq(e.count, strlen("{{ cycler.__init__.__globals__ }}"));
    ck_assert_ptr_nonnull(strstr(e.value, "chat_template")); /* where: "JSON chat_template" */
    stg_summary_close(s);
    /* a .jinja file: one unnamed template, its length the file's */
    p = write_text("chat_template.jinja", benign);
    s = open_ok(p, STG_VERDICT_OK);
    ck_assert_int_eq(find(s, STG_SUMMARY_CHAT_TEMPLATE, "default", &e), 0);
    ck_assert_uint_eq(e.count, strlen(benign));
    ck_assert_uint_eq(e.verdict, STG_VERDICT_OK);
    stg_summary_close(s);
}
END_TEST

START_TEST(test_auto_map)
{
    char cfg[4096];
    snprintf(
        cfg, sizeof cfg, "%s",
        write_text(
            "config.json",
            "{\"model_type\": \"x\", \"auto_map\": {\"AutoConfig\": \"configuration_x.XConfig\","
            " \"AutoModel\": \"modeling_x.XModel\","
            " \"AutoModelForCausalLM\": \"someone/other--modeling_y.YModel\"}}"));
    write_text("configuration_x.py", "class XConfig: pass\n");
    stg_summary *s = open_ok(cfg, STG_VERDICT_WARN);
    ck_assert_uint_eq(count_kind(s, STG_SUMMARY_AUTO_MAP), 3);
    stg_summary_entry e;
    ck_assert_int_ge(find(s, STG_SUMMARY_AUTO_MAP, "AutoConfig", &e), 0);
    ck_assert_str_eq(e.value, "configuration_x.XConfig");
    ck_assert_uint_eq(e.state, STG_SUMMARY_STATE_PRESENT);
    ck_assert_int_ge(find(s, STG_SUMMARY_AUTO_MAP, "AutoModel", &e), 0);
    ck_assert_str_eq(e.value, "modeling_x.XModel");
    ck_assert_uint_eq(e.state, STG_SUMMARY_STATE_ABSENT);
    ck_assert_int_ge(find(s, STG_SUMMARY_AUTO_MAP, "AutoModelForCausalLM", &e), 0);
    ck_assert_str_eq(e.value, "someone/other--modeling_y.YModel");
    ck_assert_uint_eq(e.state, STG_SUMMARY_STATE_OTHER_REPO);
    ck_assert_uint_eq(stg_summary_dropped(s), 0);
    stg_summary_close(s);
    /* a config without auto_map: no entries (inspect then says what the file is) */
    s = open_ok(write_text("config.json", "{\"model_type\": \"bert\"}"), STG_VERDICT_OK);
    ck_assert_uint_eq(stg_summary_count(s), 0);
    stg_summary_close(s);
}
END_TEST

START_TEST(test_ceiling)
{
    /* STG_SUMMARY_ENTRIES_MAX + 40 distinct layer classes and the model: the rest counted */
    size_t n = STG_SUMMARY_ENTRIES_MAX + 40, cap = 64 + 48 * n, len = 0;
    char *j = malloc(cap);
    ck_assert_ptr_nonnull(j);
    len += (size_t)snprintf(j + len, cap - len,
                            "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [");
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(j + len, cap - len, "%s{\"class_name\": \"L%zu\", \"config\": {}}",
                                i > 0 ? "," : "", i);
    }
    len += (size_t)snprintf(j + len, cap - len, "]}}");
    ck_assert_uint_lt(len, cap);
    stg_summary *s = open_ok(write_text("config.json", j), STG_VERDICT_OK);
    free(j);
    ck_assert_uint_eq(stg_summary_count(s), STG_SUMMARY_ENTRIES_MAX);
    ck_assert_uint_eq(stg_summary_dropped(s), n + 1 - STG_SUMMARY_ENTRIES_MAX);
    stg_summary_close(s);
}
END_TEST

START_TEST(test_refusals_and_bad_args)
{
    stg_summary *s = (stg_summary *)1;
    stg_report *rep = (stg_report *)1;
    ck_assert_int_eq(stg_summary_open(NULL, NULL, &s, &rep), STG_E_BAD_ARG);
    ck_assert_ptr_null(s);
    ck_assert_ptr_null(rep);
    ck_assert_int_eq(stg_summary_open(in_dir("x"), NULL, NULL, NULL), STG_E_BAD_ARG);
    stg_limits lim;
    stg_limits_default(&lim);
    lim.struct_version = 0;
    ck_assert_int_eq(stg_summary_open(in_dir("x"), &lim, &s, NULL), STG_E_STRUCT_VERSION);
    /* a file that is not there: the scan cannot conclude, no summary, the report says why */
    ck_assert_int_eq(stg_summary_open(in_dir("missing.keras"), NULL, &s, &rep), STG_E_INVALID);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(rep);
    ck_assert_int_ge(tu_find(rep, STG_IO_ERROR), 0);
    stg_report_free(rep);
    s = open_ok(write_text("chat_template.jinja", "{{ x }}"), STG_VERDICT_OK);
    stg_summary_entry e;
    ck_assert_int_eq(stg_summary_at(s, stg_summary_count(s), &e), STG_E_RANGE);
    ck_assert_int_eq(stg_summary_at(s, 0, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_summary_at(NULL, 0, &e), STG_E_BAD_ARG);
    ck_assert_uint_eq(stg_summary_count(NULL), 0);
    ck_assert_uint_eq(stg_summary_dropped(NULL), 0);
    stg_summary_close(s);
    stg_summary_close(NULL);
    ck_assert_str_eq(stg_summary_kind_name(STG_SUMMARY_AUTO_MAP), "auto-map");
    ck_assert_ptr_null(stg_summary_kind_name((stg_summary_kind)5));
    ck_assert_str_eq(stg_summary_state_name(STG_SUMMARY_STATE_OTHER_REPO), "other-repo");
    ck_assert_ptr_null(stg_summary_state_name((stg_summary_state)5));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("door");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_keras_zip);
    tcase_add_test(tc, test_keras_hdf5_and_json);
    tcase_add_test(tc, test_savedmodel_ops);
    tcase_add_test(tc, test_chat_templates);
    tcase_add_test(tc, test_auto_map);
    tcase_add_test(tc, test_ceiling);
    tcase_add_test(tc, test_refusals_and_bad_args);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
