/* Sibling data files (loader/sibling.c, docs/siblings.md): a raw data file that a model beside
 * it names is labelled as that model's data and validated against it, through the single-path
 * scan and the tree walk; a file no model names (or a name that only looks alike) keeps the
 * findings it had. sibling_range_outside: a trigger and a near miss. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/sibling.h"
#include "stguard/stguard.h"
#include "sibfiles.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* ONNX models written field by field (onnx.proto: ModelProto 1 ir_version, 7 graph, 8
 * opset_import; GraphProto 1 node, 2 name, 5 initializer; TensorProto 1 dims, 2 data_type,
 * 8 name, 13 external_data, 14 data_location; StringStringEntryProto 1 key, 2 value). */

static void put_varint(tu_buf *b, uint64_t v)
{
    for (;;) {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        byte = (uint8_t)(byte | (v != 0 ? 0x80 : 0));
        tu_buf_put(b, &byte, 1);
        if (v == 0) {
            return;
        }
    }
}

static void put_len(tu_buf *b, uint32_t field, const void *d, size_t n)
{
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, n);
    tu_buf_put(b, d, n);
}

static void put_str(tu_buf *b, uint32_t field, const char *s)
{
    put_len(b, field, s, strlen(s));
}

static void put_uint(tu_buf *b, uint32_t field, uint64_t v)
{
    put_varint(b, (uint64_t)field << 3);
    put_varint(b, v);
}

/* One external tensor: name, location, "offset" and "length" (NULL: absent). */
typedef struct ext_spec {
    const char *name, *location, *offset, *length;
} ext_spec;

static void put_kv(tu_buf *t, const char *k, const char *v)
{
    tu_buf e = {0};
    put_str(&e, 1, k);
    put_str(&e, 2, v);
    put_len(t, 13, e.p, e.n);
    free(e.p);
}

/* A model of one Identity node whose initializers are specs[0..n), all external. */
static tu_buf onnx_model(const ext_spec *specs, size_t n)
{
    tu_buf g = {0}, nd = {0};
    put_str(&nd, 1, "x");
    put_str(&nd, 2, "y");
    put_str(&nd, 4, "Identity");
    put_len(&g, 1, nd.p, nd.n);
    free(nd.p);
    put_str(&g, 2, "g");
    for (size_t i = 0; i < n; i++) {
        tu_buf t = {0};
        put_uint(&t, 1, 4);
        put_uint(&t, 2, 1); /* FLOAT */
        put_str(&t, 8, specs[i].name);
        put_kv(&t, "location", specs[i].location);
        if (specs[i].offset != NULL) {
            put_kv(&t, "offset", specs[i].offset);
        }
        if (specs[i].length != NULL) {
            put_kv(&t, "length", specs[i].length);
        }
        put_uint(&t, 14, 1); /* EXTERNAL */
        put_len(&g, 5, t.p, t.n);
        free(t.p);
    }
    tu_buf m = {0}, o = {0};
    put_uint(&m, 1, 8);
    put_len(&m, 7, g.p, g.n);
    put_str(&o, 1, "");
    put_uint(&o, 2, 13);
    put_len(&m, 8, o.p, o.n);
    free(g.p);
    free(o.p);
    return m;
}

/* ------------------------------------------------------------------------------------------ */
/* Files */

static void write_model(const char *dir, const char *name, const ext_spec *specs, size_t n)
{
    tu_buf m = onnx_model(specs, n);
    write_in(dir, name, m.p, m.n);
    free(m.p);
}

/* ------------------------------------------------------------------------------------------ */
/* The labels and the code */

START_TEST(test_names_pinned)
{
    static const struct {
        stg_format f;
        int number;
        const char *name;
    } formats[] = {
        {STG_FMT_ONNX_EXTERNAL_DATA, 33, "onnx-external-data"},
        {STG_FMT_OPENVINO_IR, 34, "openvino-ir"},
        {STG_FMT_OPENVINO_WEIGHTS, 35, "openvino-weights"},
        {STG_FMT_COREML_MODEL, 36, "coreml-model"},
        {STG_FMT_COREML_WEIGHTS, 37, "coreml-weights"},
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        ck_assert_int_eq((int)formats[i].f, formats[i].number);
        ck_assert_str_eq(stg_format_name(formats[i].f), formats[i].name);
    }
    ck_assert_int_eq(STG_SIBLING_RANGE_OUTSIDE, 180);
    ck_assert_str_eq(stg_code_name(STG_SIBLING_RANGE_OUTSIDE), "sibling_range_outside");
    ck_assert_int_eq(stg_code_severity(STG_SIBLING_RANGE_OUTSIDE, STG_PROFILE_STRICT),
                     STG_SEV_ERROR);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* ONNX external data */

/* weights.bin (a .bin claims a pickle) and model.onnx_data (no name rule) named by model.onnx:
 * onnx-external-data, ok; the model itself is ok too. */
START_TEST(test_onnx_data_labelled)
{
    char *dir = tu_tempdir();
    const ext_spec specs[] = {{"w", "weights.bin", "0", "64"},
                              {"b", "weights.bin", "64", "16"},
                              {"v", "model.onnx_data", NULL, NULL}};
    write_model(dir, "model.onnx", specs, 3);
    write_data(dir, "weights.bin", 80);
    write_data(dir, "model.onnx_data", 40);
    expect_data_ok(scan_file(dir, "weights.bin"), STG_FMT_ONNX_EXTERNAL_DATA);
    expect_data_ok(scan_file(dir, "model.onnx_data"), STG_FMT_ONNX_EXTERNAL_DATA);
    expect_data_ok(scan_file(dir, "model.onnx"), STG_FMT_ONNX);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Near misses: no model beside the file, a model naming another file, a file with the same
 * bytes under another name, a model in another folder: the findings stay what they were. */
START_TEST(test_onnx_data_not_named)
{
    char *dir = tu_tempdir();
    write_data(dir, "weights.bin", 80);
    write_data(dir, "model.onnx_data", 80);
    expect_kept(scan_file(dir, "weights.bin"), STG_FORMAT_MISMATCH);
    expect_kept(scan_file(dir, "model.onnx_data"), STG_FORMAT_UNKNOWN);
    const ext_spec other[] = {{"w", "other.bin", "0", "64"}};
    write_model(dir, "model.onnx", other, 1);
    write_data(dir, "other.bin", 80);
    expect_kept(scan_file(dir, "weights.bin"), STG_FORMAT_MISMATCH);
    expect_data_ok(scan_file(dir, "other.bin"), STG_FMT_ONNX_EXTERNAL_DATA);
    /* the model one folder up names sub/weights.bin: the walk looks in the file's own folder */
    char *sub = path_in(dir, "sub");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    write_data(sub, "weights.bin", 80);
    const ext_spec below[] = {{"w", "sub/weights.bin", "0", "64"}};
    write_model(dir, "up.onnx", below, 1);
    expect_kept(scan_file(sub, "weights.bin"), STG_FORMAT_MISMATCH);
    free(sub);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* sibling_range_outside: a tensor past the end (offset + length, an offset alone past the
 * end); near miss: a range ending exactly at the end. An entry whose offset + length wraps is
 * the model's own onnx_malformed and names nothing here: alone, it leaves the file as it was. */
START_TEST(test_onnx_range_outside)
{
    char *dir = tu_tempdir();
    const ext_spec specs[] = {{"fits", "weights.bin", "16", "64"},
                              {"past", "weights.bin", "48", "64"},
                              {"tail", "weights.bin", "81", NULL},
                              {"wrap", "weights.bin", "8", "18446744073709551615"}};
    write_model(dir, "model.onnx", specs, 4);
    write_data(dir, "weights.bin", 80);
    stg_report *r = scan_file(dir, "weights.bin");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_ONNX_EXTERNAL_DATA);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    ck_assert_msg(stg_report_count(r) == 2 && tu_count(r, STG_SIBLING_RANGE_OUTSIDE) == 2, "%s",
                  tu_describe(r));
    const uint64_t offsets[] = {48, 81};
    const char *tensors[] = {"past", "tail"};
    for (size_t i = 0; i < 2; i++) {
        const stg_finding *f = stg_report_at(r, i);
        ck_assert_int_eq(f->code, STG_SIBLING_RANGE_OUTSIDE);
        ck_assert(f->has_offset);
        ck_assert_uint_eq(f->offset, offsets[i]);
        ck_assert_uint_eq(f->tensor_len, strlen(tensors[i]));
        ck_assert(memcmp(f->tensor, tensors[i], f->tensor_len) == 0);
    }
    stg_report_free(r);
    /* near miss: the same model with only the range that ends at the file's end */
    const ext_spec exact[] = {{"fits", "weights.bin", "16", "64"},
                              {"all", "weights.bin", NULL, NULL}};
    write_model(dir, "model.onnx", exact, 2);
    expect_data_ok(scan_file(dir, "weights.bin"), STG_FMT_ONNX_EXTERNAL_DATA);
    write_model(dir, "model.onnx", &specs[3], 1);
    expect_kept(scan_file(dir, "weights.bin"), STG_FORMAT_MISMATCH);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The model names the file by identity, after the path resolution a runtime does: a hard link
 * under another name is the same file, a copy is not, a link that leads out of the folder is
 * never followed. */
START_TEST(test_onnx_identity)
{
    char *dir = tu_tempdir();
    char *outside = tu_tempdir();
    const ext_spec specs[] = {{"w", "a.bin", "0", "64"}, {"x", "out.bin", "0", "64"}};
    write_model(dir, "model.onnx", specs, 2);
    write_data(dir, "a.bin", 80);
    char *a = path_in(dir, "a.bin"), *b = path_in(dir, "b.bin"), *c = path_in(dir, "c.bin");
    ck_assert_int_eq(link(a, b), 0);
    write_data(dir, "c.bin", 80);
    expect_data_ok(scan_file(dir, "b.bin"), STG_FMT_ONNX_EXTERNAL_DATA);
    expect_kept(scan_file(dir, "c.bin"), STG_FORMAT_MISMATCH);
    /* out.bin is a link to a file outside: the model's location leaves the folder */
    write_data(outside, "target.bin", 80);
    char *target = path_in(outside, "target.bin"), *out = path_in(dir, "out.bin");
    ck_assert_int_eq(symlink(target, out), 0);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_path(target, NULL, &r), STG_OK);
    expect_kept(r, STG_FORMAT_MISMATCH);
    free(a);
    free(b);
    free(c);
    free(target);
    free(out);
    tu_rmtree(outside);
    tu_rmtree(dir);
    free(outside);
    free(dir);
}
END_TEST

/* Only a file whose scan found nothing but an unknown format is relabelled: a pickle under the
 * name keeps its findings and label, a text file stays text. */
START_TEST(test_onnx_only_unknown_content)
{
    char *dir = tu_tempdir();
    const ext_spec specs[] = {{"w", "weights.bin", NULL, NULL}, {"t", "notes.txt", NULL, NULL}};
    write_model(dir, "model.onnx", specs, 2);
    static const uint8_t pickle[] = "\x80\x02"
                                    "cos\nsystem\n"
                                    "X\x02\x00\x00\x00id\x85R.";
    write_in(dir, "weights.bin", pickle, sizeof pickle - 1);
    write_in(dir, "notes.txt", "plain text\n", 11);
    stg_report *r = scan_file(dir, "weights.bin");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_PICKLE);
    stg_report_free(r);
    r = scan_file(dir, "notes.txt");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_TEXT);
    stg_report_free(r);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A folder with more ONNX models than the ceiling is not searched: the result never depends on
 * which models readdir gives first. */
START_TEST(test_onnx_models_ceiling)
{
    char *dir = tu_tempdir();
    const ext_spec specs[] = {{"w", "weights.bin", NULL, NULL}};
    char name[32];
    for (unsigned i = 0; i <= STG_SIBLING_MODELS_CEILING; i++) {
        snprintf(name, sizeof name, "m%02u.onnx", i);
        write_model(dir, name, specs, 1);
    }
    write_data(dir, "weights.bin", 80);
    expect_kept(scan_file(dir, "weights.bin"), STG_FORMAT_MISMATCH);
    snprintf(name, sizeof name, "%s/m00.onnx", dir);
    ck_assert_int_eq(unlink(name), 0);
    expect_data_ok(scan_file(dir, "weights.bin"), STG_FMT_ONNX_EXTERNAL_DATA);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* What one data file makes the step read is bounded: ONNX models over 64 MiB are left out
 * (near miss: a 65 MiB one beside the model that names the file changes nothing), and a folder
 * whose models add up to more than 256 MiB is not searched (sparse files: nothing is read). */
START_TEST(test_onnx_read_ceiling)
{
    char *dir = tu_tempdir();
    const ext_spec specs[] = {{"w", "weights.bin", NULL, NULL}};
    write_model(dir, "model.onnx", specs, 1);
    write_data(dir, "weights.bin", 80);
    char *big = path_in(dir, "big.onnx");
    ck_assert_int_eq(tu_write_file(big, "", 0), 0);
    ck_assert_int_eq(truncate(big, (off_t)STG_SIBLING_ONNX_MODEL_BYTES_CEILING + 1), 0);
    expect_data_ok(scan_file(dir, "weights.bin"), STG_FMT_ONNX_EXTERNAL_DATA);
    char name[32];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "part%d.onnx", i);
        char *p = path_in(dir, name);
        ck_assert_int_eq(tu_write_file(p, "", 0), 0);
        ck_assert_int_eq(truncate(p, (off_t)60 << 20), 0);
        free(p);
    }
    expect_kept(scan_file(dir, "weights.bin"), STG_FORMAT_MISMATCH);
    free(big);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Folder scans */

/* A repo-shaped folder: the walk meets weights.bin before model.onnx (sorted), on one thread
 * and on four, and every file is ok. The same bytes hard-linked into a folder with no model
 * keep their finding there (the result depends on the neighbours: never shared). */
START_TEST(test_tree_repo)
{
    char *dir = tu_tempdir();
    char *onnx = path_in(dir, "onnx"), *other = path_in(dir, "other");
    ck_assert_int_eq(mkdir(onnx, 0700), 0);
    ck_assert_int_eq(mkdir(other, 0700), 0);
    write_in(dir, "config.json", "{\"model_type\": \"bert\"}\n", 23);
    write_in(dir, "README.md", "# a model\n", 10);
    const ext_spec specs[] = {{"w", "a_weights.bin", "0", "64"},
                              {"v", "model.onnx_data", "0", "8"}};
    write_model(onnx, "model.onnx", specs, 2);
    write_data(onnx, "a_weights.bin", 64);
    write_data(onnx, "model.onnx_data", 8);
    char *src = path_in(onnx, "a_weights.bin"), *dst = path_in(other, "a_weights.bin");
    ck_assert_int_eq(link(src, dst), 0);
    for (unsigned threads = 1; threads <= 4; threads += 3) {
        tree_seen s;
        scan_tree(dir, threads, &s);
        ck_assert_uint_eq(s.records, 6);
        ck_assert_uint_eq(s.ok, 5);
        for (size_t i = 0; i < s.records; i++) {
            bool in_other = strstr(s.paths[i], "/other/") != NULL;
            bool data = strstr(s.paths[i], "/onnx/a_weights.bin") != NULL ||
                        strstr(s.paths[i], "model.onnx_data") != NULL;
            if (in_other) {
                ck_assert_int_eq(s.verdicts[i], STG_VERDICT_INVALID);
                ck_assert_int_eq(s.formats[i], STG_FMT_UNKNOWN);
            } else if (data) {
                ck_assert_int_eq(s.verdicts[i], STG_VERDICT_OK);
                ck_assert_int_eq(s.formats[i], STG_FMT_ONNX_EXTERNAL_DATA);
            }
        }
    }
    free(src);
    free(dst);
    free(onnx);
    free(other);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The walk lists a folder once (its cache): many files of no format beside a model that names
 * three of them; on four threads the three are its data and the others keep their finding. */
START_TEST(test_tree_cache)
{
    char *dir = tu_tempdir();
    char name[32];
    for (int i = 0; i < 60; i++) {
        snprintf(name, sizeof name, "t%02d.dat", i);
        write_data(dir, name, 32);
    }
    const ext_spec specs[] = {
        {"a", "t07.dat", "0", "32"}, {"b", "t31.dat", "0", "32"}, {"c", "t59.dat", "0", "16"}};
    write_model(dir, "model.onnx", specs, 3);
    for (unsigned threads = 1; threads <= 4; threads += 3) {
        tree_seen s;
        scan_tree(dir, threads, &s);
        ck_assert_uint_eq(s.records, 61);
        ck_assert_uint_eq(s.ok, 4);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *siblings_suite(void);
Suite *siblings_suite(void)
{
    Suite *s = suite_create("siblings");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_names_pinned);
    tcase_add_test(tc, test_onnx_data_labelled);
    tcase_add_test(tc, test_onnx_data_not_named);
    tcase_add_test(tc, test_onnx_range_outside);
    tcase_add_test(tc, test_onnx_identity);
    tcase_add_test(tc, test_onnx_only_unknown_content);
    tcase_add_test(tc, test_onnx_models_ceiling);
    tcase_add_test(tc, test_onnx_read_ceiling);
    tcase_add_test(tc, test_tree_repo);
    tcase_add_test(tc, test_tree_cache);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(siblings_suite());
}
