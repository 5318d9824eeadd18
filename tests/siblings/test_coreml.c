/* Core ML (docs/coreml.md): an .mlpackage as coremltools lays it out (Manifest.json,
 * Data/com.apple.CoreML/model.mlmodel, Data/com.apple.CoreML/weights/weight.bin in MILBlob's
 * blob storage format, mlmodel/src/MILBlob/Blob/StorageFormat.hpp @
 * f391218c2714481cd2e964b18492a490fed23a79). The weights are labelled by the manifest that
 * names them and walked as the storage reader walks them; model.mlmodel is recognised by its
 * name and its protobuf. coreml_blob_invalid and coreml_model_malformed: triggers and near
 * misses. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sibfiles.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/coreml.h"
#include "validator/report.h"

static const char manifest[] =
    "{\n  \"fileFormatVersion\": \"1.0.0\",\n  \"itemInfoEntries\": {\n"
    "    \"A1\": {\n      \"author\": \"com.apple.CoreML\",\n      \"description\": \"CoreML Model "
    "Weights\",\n      \"name\": \"weights\",\n      \"path\": \"com.apple.CoreML/weights\"\n    "
    "},\n"
    "    \"B2\": {\n      \"author\": \"com.apple.CoreML\",\n      \"description\": \"CoreML Model "
    "Specification\",\n      \"name\": \"model.mlmodel\",\n      \"path\": "
    "\"com.apple.CoreML/model.mlmodel\"\n    }\n  },\n  \"rootModelIdentifier\": \"B2\"\n}\n";

/* Model: specificationVersion 8, a description, an mlProgram (field 502). */
static const uint8_t mlmodel[] = {0x08, 0x08, 0x12, 0x04, 0x0a, 0x02, 0x0a,
                                  0x00, 0xb2, 0x1f, 0x02, 0x08, 0x01};

/* A blob storage file: n blobs of sizes[i] bytes, each record 64-aligned after its data. */
static tu_buf blob_file(const uint64_t *sizes, size_t n)
{
    tu_buf b = {0};
    uint8_t rec[64] = {0};
    tu_store_le(rec, n, 4);
    tu_store_le(rec + 4, 2, 4);
    tu_buf_put(&b, rec, 64);
    for (size_t i = 0; i < n; i++) {
        memset(rec, 0, sizeof rec);
        tu_store_le(rec, 0xDEADBEEF, 4);
        tu_store_le(rec + 4, 1, 4); /* Float16 */
        tu_store_le(rec + 8, sizes[i], 8);
        tu_store_le(rec + 16, b.n + 64, 8);
        tu_buf_put(&b, rec, 64);
        for (uint64_t k = 0; k < sizes[i]; k++) {
            uint8_t v = (uint8_t)(k * 7 + 1);
            tu_buf_put(&b, &v, 1);
        }
        while (b.n % 64 != 0) {
            tu_buf_put(&b, "", 1);
        }
    }
    return b;
}

/* pkg/Manifest.json, pkg/Data/com.apple.CoreML/{model.mlmodel, weights/weight.bin}; returns
 * the weights folder (free it). */
static char *write_package(const char *pkg, const char *manifest_text, const tu_buf *weights)
{
    char *data = path_in(pkg, "Data"), *apple = path_in(data, "com.apple.CoreML");
    char *wdir = path_in(apple, "weights");
    ck_assert_int_eq(mkdir(pkg, 0700), 0);
    ck_assert_int_eq(mkdir(data, 0700), 0);
    ck_assert_int_eq(mkdir(apple, 0700), 0);
    ck_assert_int_eq(mkdir(wdir, 0700), 0);
    if (manifest_text != NULL) {
        write_in(pkg, "Manifest.json", manifest_text, strlen(manifest_text));
    }
    write_in(apple, "model.mlmodel", mlmodel, sizeof mlmodel);
    write_in(wdir, "weight.bin", weights->p, weights->n);
    free(data);
    free(apple);
    return wdir;
}

/* A compiled model's MIL program (model.mil as Core ML's compiler writes it for iOS 16): its
 * constant names the weights as BLOBFILE(path = "@model_path/weights/weight.bin"). */
static const char mil_text[] =
    "program(1.0)\n{\n    func main<ios16>(tensor<fp16, [1, 4]> x) {\n        tensor<fp16, "
    "[4, 8]> w = const()[name = tensor<string, []>(\"w\"), val = tensor<fp16, [4, 8]>(BLOBFILE("
    "path = tensor<string, []>(\"@model_path/weights/weight.bin\"), offset = tensor<uint64, "
    "[]>(64)))];\n    } -> (w);\n}\n";

/* model/{model.mil (when mil is not NULL), weights/weight.bin}; returns the weights folder
 * (free it). */
static char *write_compiled(const char *model, const char *mil, const tu_buf *weights)
{
    char *wdir = path_in(model, "weights");
    ck_assert_int_eq(mkdir(model, 0700), 0);
    ck_assert_int_eq(mkdir(wdir, 0700), 0);
    if (mil != NULL) {
        write_in(model, "model.mil", mil, strlen(mil));
    }
    write_in(wdir, "weight.bin", weights->p, weights->n);
    return wdir;
}

/* Removes the temporary folder and frees the three paths. */
static void drop_model(char *dir, char *model, char *wdir)
{
    free(wdir);
    free(model);
    tu_rmtree(dir);
    free(dir);
}

static stg_report *blob_report(const tu_buf *b)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    stg_coreml_blob_check_buffer(b->p, b->n, r);
    stg_report_finish(r);
    return r;
}

/* ------------------------------------------------------------------------------------------ */

START_TEST(test_package_ok)
{
    char *dir = tu_tempdir();
    char *pkg = path_in(dir, "float32_model.mlpackage");
    const uint64_t sizes[] = {40, 100, 0};
    tu_buf w = blob_file(sizes, 3);
    char *wdir = write_package(pkg, manifest, &w);
    expect_data_ok(scan_file(wdir, "weight.bin"), STG_FMT_COREML_WEIGHTS);
    char *apple = path_in(pkg, "Data/com.apple.CoreML");
    expect_data_ok(scan_file(apple, "model.mlmodel"), STG_FMT_COREML_MODEL);
    tree_seen s;
    scan_tree(dir, 2, &s);
    ck_assert_uint_eq(s.records, 3);
    ck_assert_uint_eq(s.ok, 3);
    free(apple);
    free(wdir);
    free(pkg);
    free(w.p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Near misses of the label: no manifest, a manifest naming another item, malformed JSON, the
 * same bytes outside a package: the weights keep format_mismatch. */
START_TEST(test_weights_not_named)
{
    const char *manifests[] = {
        NULL, "{\"itemInfoEntries\": {\"A\": {\"path\": \"other\"}}}",
        "{\"itemInfoEntries\": {\"A\": {\"path\": \"com.apple.CoreML/weights\"",
        "{\"path\": \"com.apple.CoreML/weights\"}"};
    const uint64_t sizes[] = {40};
    tu_buf w = blob_file(sizes, 1);
    for (size_t i = 0; i < sizeof manifests / sizeof manifests[0]; i++) {
        char *dir = tu_tempdir();
        char *pkg = path_in(dir, "m.mlpackage");
        char *wdir = write_package(pkg, manifests[i], &w);
        expect_kept(scan_file(wdir, "weight.bin"), STG_FORMAT_MISMATCH);
        free(wdir);
        free(pkg);
        tu_rmtree(dir);
        free(dir);
    }
    char *dir = tu_tempdir();
    write_in(dir, "weight.bin", w.p, w.n);
    expect_kept(scan_file(dir, "weight.bin"), STG_FORMAT_MISMATCH);
    tu_rmtree(dir);
    free(dir);
    free(w.p);
}
END_TEST

START_TEST(test_blob_invalid)
{
    const uint64_t sizes[] = {40, 100};
    tu_buf good = blob_file(sizes, 2);
    stg_report *r = blob_report(&good);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    static const struct {
        size_t at, width;
        uint64_t value;
        uint64_t finding_at;
    } cases[] = {
        {4, 4, 1, 4},                 /* version 1 (Espresso's blob_v1) */
        {64, 4, 0xDEADBEEE, 64},      /* a sentinel off by one */
        {0, 4, 3, 384},               /* a third record the file does not hold */
        {72, 8, 1000, 80},            /* data past the end */
        {80, 8, 0, 80},               /* data before its own record: no forward chain */
        {80, 8, UINT64_MAX - 16, 80}, /* offset + size wraps */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_buf b = {0};
        tu_buf_put(&b, good.p, good.n);
        tu_store_le(b.p + cases[i].at, cases[i].value, cases[i].width);
        r = blob_report(&b);
        ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_COREML_BLOB_INVALID) == 0 &&
                          stg_report_at(r, 0)->offset == cases[i].finding_at,
                      "case %zu: %s", i, tu_describe(r));
        stg_report_free(r);
        free(b.p);
    }
    /* shorter than the header */
    tu_buf tiny = {0};
    tu_buf_put(&tiny, good.p, 63);
    r = blob_report(&tiny);
    ck_assert_int_eq(tu_find(r, STG_COREML_BLOB_INVALID), 0);
    stg_report_free(r);
    free(tiny.p);
    /* through the file scan: the weights are labelled and invalid */
    char *dir = tu_tempdir();
    char *pkg = path_in(dir, "m.mlpackage");
    tu_store_le(good.p + 64, 0, 4);
    char *wdir = write_package(pkg, manifest, &good);
    r = scan_file(wdir, "weight.bin");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_COREML_WEIGHTS);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_COREML_BLOB_INVALID) == 0, "%s",
                  tu_describe(r));
    stg_report_free(r);
    free(wdir);
    free(pkg);
    tu_rmtree(dir);
    free(dir);
    free(good.p);
}
END_TEST

/* coreml_model_malformed: wire data cut short, no specificationVersion first; near misses:
 * the model above, and a pickle under the name stays a pickle. */
START_TEST(test_model_malformed)
{
    char *dir = tu_tempdir();
    static const uint8_t cut[] = {0x08, 0x08, 0x12, 0x09, 0x0a};
    static const uint8_t no_version[] = {0x12, 0x00, 0x08, 0x08};
    write_in(dir, "a.mlmodel", cut, sizeof cut);
    write_in(dir, "b.mlmodel", no_version, sizeof no_version);
    stg_report *r = scan_file(dir, "a.mlmodel");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_COREML_MODEL);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_COREML_MODEL_MALFORMED) == 0 &&
                      stg_report_at(r, 0)->offset == 2,
                  "%s", tu_describe(r));
    stg_report_free(r);
    r = scan_file(dir, "b.mlmodel");
    ck_assert_msg(stg_report_count(r) == 1 && stg_report_at(r, 0)->offset == 0, "%s",
                  tu_describe(r));
    stg_report_free(r);
    write_in(dir, "c.mlmodel", mlmodel, sizeof mlmodel);
    expect_data_ok(scan_file(dir, "c.mlmodel"), STG_FMT_COREML_MODEL);
    static const uint8_t pickle[] = "\x80\x02"
                                    "cos\nsystem\n"
                                    "X\x02\x00\x00\x00id\x85R.";
    write_in(dir, "d.mlmodel", pickle, sizeof pickle - 1);
    r = scan_file(dir, "d.mlmodel");
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A compiled model (X.mlmodelc/, WhisperKit's layout): model.mil names the weights, which are
 * labelled and walked as a package's; near misses keep format_mismatch: no model.mil, a
 * model.mil naming no BLOBFILE of them, the same folder not named .mlmodelc. */
START_TEST(test_compiled_model)
{
    const uint64_t sizes[] = {64, 8};
    tu_buf w = blob_file(sizes, 2);
    static const char *const mils[] = {mil_text, NULL,
                                       "program(1.0)\n{\n    func main<ios16>() {\n    }\n}\n"};
    for (size_t i = 0; i < sizeof mils / sizeof mils[0]; i++) {
        char *dir = tu_tempdir();
        char *model = path_in(dir, "AudioEncoder.mlmodelc");
        char *wdir = write_compiled(model, mils[i], &w);
        if (i == 0) {
            expect_data_ok(scan_file(wdir, "weight.bin"), STG_FMT_COREML_WEIGHTS);
            tree_seen s;
            scan_tree(dir, 2, &s); /* weight.bin and model.mil (text), both ok */
            ck_assert_uint_eq(s.records, 2);
            ck_assert_uint_eq(s.ok, 2);
        } else {
            expect_kept(scan_file(wdir, "weight.bin"), STG_FORMAT_MISMATCH);
        }
        drop_model(dir, model, wdir);
    }
    char *dir = tu_tempdir();
    char *model = path_in(dir, "AudioEncoder.compiled");
    char *wdir = write_compiled(model, mil_text, &w);
    expect_kept(scan_file(wdir, "weight.bin"), STG_FORMAT_MISMATCH);
    drop_model(dir, model, wdir);
    /* labelled, then refused by the storage walk: a record without its sentinel */
    dir = tu_tempdir();
    model = path_in(dir, "m.mlmodelc");
    tu_store_le(w.p + 64, 0, 4);
    wdir = write_compiled(model, mil_text, &w);
    stg_report *r = scan_file(wdir, "weight.bin");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_COREML_WEIGHTS);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_COREML_BLOB_INVALID) == 0, "%s",
                  tu_describe(r));
    stg_report_free(r);
    drop_model(dir, model, wdir);
    free(w.p);
}
END_TEST

Suite *coreml_suite(void);
Suite *coreml_suite(void)
{
    Suite *s = suite_create("coreml");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_package_ok);
    tcase_add_test(tc, test_weights_not_named);
    tcase_add_test(tc, test_compiled_model);
    tcase_add_test(tc, test_blob_invalid);
    tcase_add_test(tc, test_model_malformed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(coreml_suite());
}
