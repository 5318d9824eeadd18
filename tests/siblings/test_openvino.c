/* OpenVINO IR (docs/openvino.md): the bounded XML parser (parser/xml.c), the IR rules
 * (validator/openvino.c), the IR's weights file checked from the XML's side and labelled from
 * the .bin's side (loader/sibling.c). Each code gets a trigger and a near miss: xml_malformed,
 * openvino_const_invalid, openvino_weights_missing, openvino_version_unsupported and
 * sibling_range_outside for a .bin. The IR text is what OpenVINO's serializer writes (IR 11:
 * tab-indented, `<data element_type= shape= offset= size= />` on Const layers). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parser/xml.h"
#include "sibfiles.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/openvino.h"
#include "validator/report.h"

/* ------------------------------------------------------------------------------------------ */
/* The XML parser */

/* Parses s to the end; returns the error (STG_XML_E_NONE when DONE), *events the events. */
static stg_xml_error parse_all(const char *s, size_t *events, size_t *error_at)
{
    stg_xml x;
    stg_xml_init(&x, (const uint8_t *)s, strlen(s));
    stg_xml_event ev;
    *events = 0;
    for (size_t guard = 0; guard < 100000; guard++) {
        stg_xml_kind k = stg_xml_next(&x, &ev);
        if (k == STG_XML_DONE) {
            return STG_XML_E_NONE;
        }
        if (k == STG_XML_ERROR) {
            *error_at = x.error_offset;
            return x.error;
        }
        (*events)++;
    }
    ck_abort_msg("the parser did not end");
    return STG_XML_E_SYNTAX;
}

START_TEST(test_xml_well_formed)
{
    static const struct {
        const char *xml;
        size_t events;
    } ok[] = {
        {"<a/>", 2},
        {"\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- c --><a x='1' y = \"&lt;&#65;&#x42;\">t&amp;"
         "<![CDATA[<not a tag>]]><b/><?pi x?></a>\n<!-- after -->\n",
         4},
        {"<net name=\"n\" version=\"11\">\n\t<layers>\n\t\t<layer id=\"0\" type=\"Const\">\n"
         "\t\t\t<data element_type=\"f16\" shape=\"64, 3, 7, 7\" offset=\"0\" size=\"18816\" />"
         "\n\t\t</layer>\n\t</layers>\n</net>\n",
         8},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t n, at = 0;
        ck_assert_msg(parse_all(ok[i].xml, &n, &at) == STG_XML_E_NONE, "case %zu at %zu", i, at);
        ck_assert_uint_eq(n, ok[i].events);
    }
}
END_TEST

START_TEST(test_xml_refused)
{
    static const struct {
        const char *xml;
        stg_xml_error e;
        size_t at;
    } bad[] = {
        {"<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", STG_XML_E_DTD, 0},
        {"<a>&x;</a>", STG_XML_E_ENTITY, 3},
        {"<a b=\"&#0;\"/>", STG_XML_E_ENTITY, 0},
        {"<a b=\"&#x110000;\"/>", STG_XML_E_ENTITY, 0},
        {"<a b=\"1<2\"/>", STG_XML_E_SYNTAX, 0},
        {"<a b=1/>", STG_XML_E_SYNTAX, 0},
        {"<a b=\"1\"c=\"2\"/>", STG_XML_E_SYNTAX, 0},
        {"<a><b></a>", STG_XML_E_UNBALANCED, 6},
        {"<a><b>", STG_XML_E_UNBALANCED, 6},
        {"</a>", STG_XML_E_UNBALANCED, 0},
        {"<a/><b/>", STG_XML_E_OUTSIDE, 4},
        {"<a/>text", STG_XML_E_OUTSIDE, 4},
        {"  ", STG_XML_E_OUTSIDE, 0},
        {"<![CDATA[x]]><a/>", STG_XML_E_OUTSIDE, 0},
        {"<a><!-- never closed </a>", STG_XML_E_SYNTAX, 3},
        {"<a><!x></a>", STG_XML_E_SYNTAX, 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n, at = SIZE_MAX;
        stg_xml_error e = parse_all(bad[i].xml, &n, &at);
        ck_assert_msg(e == bad[i].e && at == bad[i].at, "case %zu: error %d at %zu", i, (int)e, at);
    }
}
END_TEST

/* The limits: nesting and attributes, at the ceiling (near miss) and one past it. */
START_TEST(test_xml_limits)
{
    for (unsigned extra = 0; extra <= 1; extra++) {
        unsigned depth = STG_XML_DEPTH_CEILING + extra;
        tu_buf b = {0};
        for (unsigned i = 0; i < depth; i++) {
            tu_buf_put(&b, "<e>", 3);
        }
        for (unsigned i = 0; i < depth; i++) {
            tu_buf_put(&b, "</e>", 4);
        }
        tu_buf_put(&b, "", 1);
        size_t n, at = 0;
        stg_xml_error e = parse_all((const char *)b.p, &n, &at);
        ck_assert_int_eq(e, extra ? STG_XML_E_DEPTH : STG_XML_E_NONE);
        free(b.p);
        b = (tu_buf){0};
        tu_buf_put(&b, "<e", 2);
        char attr[32];
        for (unsigned i = 0; i < STG_XML_ATTRS_CEILING + extra; i++) {
            int k = snprintf(attr, sizeof attr, " a%u='%u'", i, i);
            tu_buf_put(&b, attr, (size_t)k);
        }
        tu_buf_put(&b, "/>", 3);
        e = parse_all((const char *)b.p, &n, &at);
        ck_assert_int_eq(e, extra ? STG_XML_E_ATTRS : STG_XML_E_NONE);
        free(b.p);
    }
}
END_TEST

START_TEST(test_xml_attr_decode)
{
    const char *s = "<a first='x&amp;y' n=\"&#233;&#x1F600;\" first='second'/>";
    stg_xml x;
    stg_xml_init(&x, (const uint8_t *)s, strlen(s));
    stg_xml_event ev;
    ck_assert_int_eq(stg_xml_next(&x, &ev), STG_XML_START);
    stg_xml_span v;
    size_t at;
    uint8_t out[16];
    ck_assert(stg_xml_attr((const uint8_t *)s, ev.attrs, "first", &v, &at));
    ck_assert_uint_eq(at, 3); /* the first of two, as pugixml's attribute() */
    ck_assert_uint_eq(stg_xml_decode((const uint8_t *)s, v, out, sizeof out), 3);
    ck_assert(memcmp(out, "x&y", 3) == 0);
    ck_assert(stg_xml_attr((const uint8_t *)s, ev.attrs, "n", &v, &at));
    ck_assert_uint_eq(stg_xml_decode((const uint8_t *)s, v, out, sizeof out), 6);
    ck_assert(memcmp(out, "\xC3\xA9\xF0\x9F\x98\x80", 6) == 0);
    ck_assert_uint_eq(stg_xml_decode((const uint8_t *)s, v, out, 5), SIZE_MAX);
    ck_assert(!stg_xml_attr((const uint8_t *)s, ev.attrs, "firs", &v, &at));
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* IR text */

/* One Const layer's <data> attributes (each NULL: absent), and its layer type. */
typedef struct const_spec {
    const char *element_type, *shape, *offset, *size;
    const char *type; /* NULL: "Const" */
} const_spec;

/* An IR 11 as the serializer writes it: a Parameter, the constants, a Result; extra (may be
 * NULL) is put inside <net> after <edges>. */
static char *ir_text(const char *version, const const_spec *c, size_t n, const char *extra)
{
    tu_buf b = {0};
    char line[512];
    int k = snprintf(line, sizeof line,
                     "<?xml version=\"1.0\"?>\n<net name=\"Model0\" version=\"%s\">\n\t<layers>\n"
                     "\t\t<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">\n"
                     "\t\t\t<data shape=\"1,64\" element_type=\"f32\" />\n\t\t</layer>\n",
                     version);
    tu_buf_put(&b, line, (size_t)k);
    for (size_t i = 0; i < n; i++) {
        k = snprintf(
            line, sizeof line,
            "\t\t<layer id=\"%zu\" name=\"c%zu\" type=\"%s\" version=\"opset1\">\n\t\t\t<data",
            i + 1, i, c[i].type != NULL ? c[i].type : "Const");
        tu_buf_put(&b, line, (size_t)k);
        const char *names[4] = {"element_type", "shape", "offset", "size"};
        const char *vals[4] = {c[i].element_type, c[i].shape, c[i].offset, c[i].size};
        for (int a = 0; a < 4; a++) {
            if (vals[a] != NULL) {
                k = snprintf(line, sizeof line, " %s=\"%s\"", names[a], vals[a]);
                tu_buf_put(&b, line, (size_t)k);
            }
        }
        const char *end = " />\n\t\t</layer>\n";
        tu_buf_put(&b, end, strlen(end));
    }
    const char *tail = "\t\t<layer id=\"99\" name=\"y\" type=\"Result\" version=\"opset1\" />\n"
                       "\t</layers>\n\t<edges />\n";
    tu_buf_put(&b, tail, strlen(tail));
    if (extra != NULL) {
        tu_buf_put(&b, extra, strlen(extra));
    }
    tu_buf_put(&b, "</net>\n", 8);
    return (char *)b.p;
}

static stg_report *check_ir(const char *xml, stg_openvino_ir *ir)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(stg_openvino_check((const uint8_t *)xml, strlen(xml), r, ir), STG_OK);
    stg_report_finish(r);
    return r;
}

/* Near misses of every code: a clean IR of each element type form the reader accepts. */
START_TEST(test_ir_clean)
{
    const const_spec c[] = {
        {"f32", "64,64", "0", "16384", NULL},
        {"i64", "4", "16384", "32", NULL},
        {"f16", "64, 3, 7, 7", "16416", "18816", NULL},
        {"u4", "3", "35232", "2", NULL},
        {"FP32", "", "35234", "4", NULL},
        {"string", "2", "35238", "40", NULL},
        {"u1", "9", "35278", "8", NULL}, /* more than the 2 bytes needed: read */
    };
    for (int v = 10; v <= 11; v++) {
        char ver[4];
        snprintf(ver, sizeof ver, "%d", v);
        char *xml = ir_text(ver, c, sizeof c / sizeof c[0],
                            "\t<rt_info>\n\t\t<Runtime_version value=\"2024.4.0-16579-c3152d32c9c-"
                            "releases/2024/4\" />\n\t\t<conversion_parameters>\n\t\t\t<framework "
                            "value=\"pytorch\" />\n\t\t\t<is_python_object value=\"True\" />"
                            "\n\t\t</conversion_parameters>\n\t\t<x value=\"&quot;q&quot;\" />\n"
                            "\t</rt_info>\n");
        stg_openvino_ir ir;
        stg_openvino_ir_init(&ir);
        stg_report *r = check_ir(xml, &ir);
        ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
        ck_assert(ir.complete);
        ck_assert_uint_eq(ir.nconsts, sizeof c / sizeof c[0]);
        ck_assert_uint_eq(ir.consts[2].data_offset, 16416);
        ck_assert_uint_eq(ir.consts[2].data_size, 18816);
        ck_assert_str_eq(ir.consts[2].name, "c2");
        ck_assert(stg_openvino_sniff((const uint8_t *)xml, strlen(xml)));
        stg_openvino_ir_release(&ir);
        stg_report_free(r);
        free(xml);
    }
}
END_TEST

START_TEST(test_ir_const_invalid)
{
    static const const_spec bad[] = {
        {"f32", "4", NULL, "16", NULL},
        {"f32", "4", "-1", "16", NULL},
        {"f32", "4", "0", "1x", NULL},
        {"f32", "4", "0", "9223372036854775808", NULL},
        {"f33", "4", "0", "16", NULL},
        {NULL, "4", "0", "16", NULL},
        {"dynamic", "4", "0", "16", NULL},
        {"f32", "2,-3", "0", "16", NULL},
        {"f32", "2,,3", "0", "16", NULL},
        {"f32", NULL, "0", "16", NULL},
        {"f32", "4", "0", "15", NULL},
        {"u4", "3", "0", "1", NULL},
        {"f32", "4294967296,4294967296", "0", "16", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *xml = ir_text("11", &bad[i], 1, NULL);
        stg_openvino_ir ir;
        stg_openvino_ir_init(&ir);
        stg_report *r = check_ir(xml, &ir);
        ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_OPENVINO_CONST_INVALID) == 0,
                      "case %zu: %s", i, tu_describe(r));
        const stg_finding *f = stg_report_at(r, 0);
        const char *data = strstr(strstr(xml, "name=\"c0\""), "<data");
        ck_assert_uint_eq(f->offset, (uint64_t)(data - xml));
        ck_assert_uint_eq(f->tensor_len, 2);
        ck_assert_uint_eq(ir.nconsts, 0);
        stg_openvino_ir_release(&ir);
        stg_report_free(r);
        free(xml);
    }
    /* a Const layer without <data>; a <data> with an inline value reads no weights */
    const char *no_data = "<net version=\"11\"><layers><layer name=\"k\" type=\"Const\"></layer>"
                          "<layer type=\"Const\"><data value=\"abc\"/></layer></layers></net>";
    stg_openvino_ir ir;
    stg_openvino_ir_init(&ir);
    stg_report *r = check_ir(no_data, &ir);
    ck_assert_msg(stg_report_count(r) == 1 && stg_report_at(r, 0)->offset == 26, "%s",
                  tu_describe(r));
    ck_assert_uint_eq(ir.nconsts, 0);
    stg_openvino_ir_release(&ir);
    stg_report_free(r);
    /* a layer of another type, or a <layer> outside <layers>, is no constant */
    const const_spec other = {"f32", "4", "0", "1", "Convert"};
    char *xml = ir_text("11", &other, 1,
                        "\t<rt_info><layer type=\"Const\"><data size=\"x\"/></layer></rt_info>\n");
    r = check_ir(xml, NULL);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_report_free(r);
    free(xml);
}
END_TEST

START_TEST(test_ir_version_and_xml)
{
    const const_spec c = {"f32", "4", "0", "16", NULL};
    const char *versions[] = {"7", "12", "", "x"};
    for (size_t i = 0; i < 4; i++) {
        char *xml = ir_text(versions[i], &c, 1, NULL);
        stg_report *r = check_ir(xml, NULL);
        ck_assert_msg(stg_report_count(r) == 1 &&
                          tu_find(r, STG_OPENVINO_VERSION_UNSUPPORTED) == 0 &&
                          stg_report_at(r, 0)->offset == 22,
                      "%s: %s", versions[i], tu_describe(r));
        stg_report_free(r);
        free(xml);
    }
    /* xml_malformed: its offset; what was read before it is still judged */
    char *xml = ir_text("11", &c, 1, "\t<edges></edge>\n");
    stg_openvino_ir ir;
    stg_openvino_ir_init(&ir);
    stg_report *r = check_ir(xml, &ir);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_XML_MALFORMED) == 0, "%s",
                  tu_describe(r));
    ck_assert_uint_eq(stg_report_at(r, 0)->offset, (uint64_t)(strstr(xml, "</edge>") - xml));
    ck_assert(!ir.complete);
    stg_openvino_ir_release(&ir);
    stg_report_free(r);
    free(xml);
    /* the sniff: the root, case-insensitively, after a prolog; not another root */
    const char *yes[] = {"<NET version=\"11\"/>", "<!-- x -->\n<?xml version=\"1.0\"?>\n<net>"};
    const char *no[] = {"<network/>", "<html><net/></html>", "net", "<!DOCTYPE net><net/>"};
    for (size_t i = 0; i < 2; i++) {
        ck_assert(stg_openvino_sniff((const uint8_t *)yes[i], strlen(yes[i])));
        ck_assert(!stg_openvino_sniff((const uint8_t *)no[i], strlen(no[i])));
        ck_assert(!stg_openvino_sniff((const uint8_t *)no[i + 2], strlen(no[i + 2])));
    }
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The files: the IR and its weights */

static void write_ir(const char *dir, const char *name, const const_spec *c, size_t n)
{
    char *xml = ir_text("11", c, n, NULL);
    write_in(dir, name, xml, strlen(xml));
    free(xml);
}

START_TEST(test_ir_files)
{
    char *dir = tu_tempdir();
    const const_spec c[] = {{"f32", "4", "0", "16", NULL}, {"i64", "2", "16", "16", NULL}};
    write_ir(dir, "openvino_model.xml", c, 2);
    write_data(dir, "openvino_model.bin", 32);
    expect_data_ok(scan_file(dir, "openvino_model.xml"), STG_FMT_OPENVINO_IR);
    expect_data_ok(scan_file(dir, "openvino_model.bin"), STG_FMT_OPENVINO_WEIGHTS);
    /* openvino_weights_missing: a short .bin (one constant past it), then none at all */
    write_data(dir, "openvino_model.bin", 24);
    stg_report *r = scan_file(dir, "openvino_model.xml");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_OPENVINO_IR);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_OPENVINO_WEIGHTS_MISSING) == 0, "%s",
                  tu_describe(r));
    ck_assert_uint_eq(stg_report_at(r, 0)->tensor_len, 2);
    stg_report_free(r);
    /* ... and the .bin's own record: sibling_range_outside at the range's start */
    r = scan_file(dir, "openvino_model.bin");
    ck_assert_int_eq(stg_report_format(r), STG_FMT_OPENVINO_WEIGHTS);
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_SIBLING_RANGE_OUTSIDE) == 0 &&
                      stg_report_at(r, 0)->offset == 16,
                  "%s", tu_describe(r));
    stg_report_free(r);
    char *bin = path_in(dir, "openvino_model.bin");
    ck_assert_int_eq(unlink(bin), 0);
    r = scan_file(dir, "openvino_model.xml");
    ck_assert_msg(stg_report_count(r) == 1 && tu_find(r, STG_OPENVINO_WEIGHTS_MISSING) == 0, "%s",
                  tu_describe(r));
    stg_report_free(r);
    /* near misses: an IR without constants needs no .bin; a .bin beside another stem is not
     * the IR's; a .bin under an XML that is no IR keeps its finding */
    write_ir(dir, "openvino_model.xml", NULL, 0);
    expect_data_ok(scan_file(dir, "openvino_model.xml"), STG_FMT_OPENVINO_IR);
    write_ir(dir, "a.xml", c, 2);
    write_data(dir, "b.bin", 32);
    expect_kept(scan_file(dir, "b.bin"), STG_FORMAT_MISMATCH);
    write_in(dir, "b.xml", "<network/>", 10);
    expect_kept(scan_file(dir, "b.bin"), STG_FORMAT_MISMATCH);
    free(bin);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A sentence-transformers-shaped repo: openvino/ holds two IRs and their weights, beside
 * an ONNX model with external data; the walk is ok on one and four threads. */
START_TEST(test_ir_tree)
{
    char *dir = tu_tempdir();
    char *ov = path_in(dir, "openvino");
    ck_assert_int_eq(mkdir(ov, 0700), 0);
    write_in(dir, "modules.json", "[]\n", 3);
    const const_spec c[] = {{"f32", "4", "0", "16", NULL}, {"f16", "8", "16", "16", NULL}};
    write_ir(ov, "openvino_model.xml", c, 2);
    write_data(ov, "openvino_model.bin", 32);
    write_ir(ov, "openvino_model_qint8_quantized.xml", c, 1);
    write_data(ov, "openvino_model_qint8_quantized.bin", 16);
    for (unsigned threads = 1; threads <= 4; threads += 3) {
        tree_seen s;
        scan_tree(dir, threads, &s);
        ck_assert_uint_eq(s.records, 5);
        ck_assert_uint_eq(s.ok, 5);
    }
    free(ov);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *openvino_suite(void);
Suite *openvino_suite(void)
{
    Suite *s = suite_create("openvino");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_xml_well_formed);
    tcase_add_test(tc, test_xml_refused);
    tcase_add_test(tc, test_xml_limits);
    tcase_add_test(tc, test_xml_attr_decode);
    tcase_add_test(tc, test_ir_clean);
    tcase_add_test(tc, test_ir_const_invalid);
    tcase_add_test(tc, test_ir_version_and_xml);
    tcase_add_test(tc, test_ir_files);
    tcase_add_test(tc, test_ir_tree);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(openvino_suite());
}
