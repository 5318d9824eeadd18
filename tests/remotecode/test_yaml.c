/* The YAML subset reader (parser/yaml.c) and the hydra rules (validator/hydra.c): trees of
 * the constructs read (checked node by node), what is refused and as what, the limits (depth,
 * nodes, anchors, aliases: a billion-laughs document stops at the node limit), and every
 * hydra/yaml finding code with a trigger and a near miss, severity in both profiles and the
 * byte offset, through stg_scan_buffer under a .yaml name. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/arena.h"
#include "parser/yaml.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/hydra.h"
#include "validator/report.h"

typedef struct parsed {
    stg_arena arena;
    stg_yaml_doc doc;
} parsed;

static stg_yaml_status parse(parsed *p, const char *text)
{
    stg_arena_init(&p->arena, (size_t)256 << 20);
    return stg_yaml_parse((const uint8_t *)text, strlen(text), 64, 0, &p->arena, &p->doc);
}

static void release(parsed *p)
{
    stg_yaml_release(&p->doc, &p->arena);
    stg_arena_release(&p->arena);
}

/* The tree rendered compactly: scalars as their text in <>, maps as {k=v,...}, seqs [a,b]. */
static void render(const stg_yaml_doc *d, size_t i, char *out, size_t cap)
{
    size_t n = strlen(out);
    const stg_yaml_node *node = &d->nodes[i];
    if (node->kind == STG_YAML_SCALAR) {
        snprintf(out + n, cap - n, "<%.*s>", (int)node->str_len, (const char *)node->str);
        return;
    }
    bool map = node->kind == STG_YAML_MAP;
    snprintf(out + n, cap - n, "%c", map ? '{' : '[');
    size_t k = 0;
    for (size_t c = stg_yaml_first_child(d, i); c < d->count; c = stg_yaml_next_child(d, i, c)) {
        if (k > 0) {
            n = strlen(out);
            snprintf(out + n, cap - n, "%c", map && k % 2 == 1 ? '=' : ',');
        }
        render(d, c, out, cap);
        k++;
    }
    n = strlen(out);
    snprintf(out + n, cap - n, "%c", map ? '}' : ']');
}

static void expect_tree(const char *text, const char *want)
{
    parsed p;
    ck_assert_msg(parse(&p, text) == STG_YAML_OK, "%s: status %d (%s) at %zu", text, p.doc.status,
                  p.doc.error_what, p.doc.error_offset);
    char got[2048] = "";
    if (p.doc.count > 0) {
        render(&p.doc, 0, got, sizeof got);
    }
    ck_assert_msg(strcmp(got, want) == 0, "%s: got %s, want %s", text, got, want);
    if (p.doc.count > 0) {
        ck_assert_uint_eq(p.doc.nodes[0].end, p.doc.count);
    }
    release(&p);
}

static void expect_refused(const char *text, stg_yaml_status want)
{
    parsed p;
    stg_yaml_status st = parse(&p, text);
    ck_assert_msg(st == want, "%s: status %d (%s), want %d", text, st,
                  p.doc.error_what ? p.doc.error_what : "", want);
    ck_assert_ptr_nonnull(p.doc.error_what);
    release(&p);
}

START_TEST(test_trees)
{
    expect_tree("a: 1\nb: x y # c\n", "{<a>=<1>,<b>=<x y>}");
    expect_tree("a:\n  b: 1\n  c:\n  - x\n  - y\nd: ~\n", "{<a>={<b>=<1>,<c>=[<x>,<y>]},<d>=<~>}");
    expect_tree("a:\n- b\n- c\nd: e\n", "{<a>=[<b>,<c>],<d>=<e>}");
    expect_tree("- a: 1\n  b: 2\n- - x\n  - y\n-\n  z\n", "[{<a>=<1>,<b>=<2>},[<x>,<y>],<z>]");
    expect_tree("a:\nb:\n", "{<a>=<>,<b>=<>}");
    expect_tree("k : v\nu: http://h:80/p\nw: a:b\n", "{<k>=<v>,<u>=<http://h:80/p>,<w>=<a:b>}");
    expect_tree("a: [1, [2, 3], {b: c, d: }, []]\ne: {}\n",
                "{<a>=[<1>,[<2>,<3>],{<b>=<c>,<d>=<>},[]],<e>={}}");
    expect_tree("a: [\n  1,\n  2,\n]\n", "{<a>=[<1>,<2>]}");
    expect_tree("\"q k\": 'it''s'\nd: \"\\x41\\u00e9\\t\\\"\"\n", "{<q k>=<it's>,<d>=<A\xc3\xa9"
                                                                  "\t\">}");
    expect_tree("a: |\n  one\n   two\n\n  three\nb: 1\n", "{<a>=<one\n two\n\nthree\n>,<b>=<1>}");
    expect_tree("a: >-\n  one\n  two\n\n  three\n", "{<a>=<one two\nthree>}");
    expect_tree("a: |+\n  x\n\n\nb: |-\n  y\n", "{<a>=<x\n\n\n>,<b>=<y>}");
    expect_tree("a: &d\n  x: 1\nb: *d\nc: &s v\nd: [*s, &t w, *t]\n",
                "{<a>={<x>=<1>},<b>={<x>=<1>},<c>=<v>,<d>=[<v>,<w>,<w>]}");
    expect_tree("---\n# only a comment\na: 1\n...\n", "{<a>=<1>}");
    expect_tree("\xEF\xBB\xBF"
                "a: 1\n",
                "{<a>=<1>}");
    expect_tree("a: 1\r\nb: 2\r\n", "{<a>=<1>,<b>=<2>}");
    expect_tree("plain scalar\n", "<plain scalar>");
    expect_tree("# nothing\n", "");
}
END_TEST

START_TEST(test_refusals)
{
    /* not YAML */
    expect_refused("a: [1, 2\n", STG_YAML_E_SYNTAX);
    expect_refused("a: b: c\n", STG_YAML_E_SYNTAX);
    expect_refused("a: 1\n  b: 2\n", STG_YAML_E_SYNTAX);
    expect_refused("a:\n  - x\n  y: 1\n", STG_YAML_E_SYNTAX);
    expect_refused("a: \"x\\q\"\n", STG_YAML_E_SYNTAX);
    expect_refused("a: \x01\n", STG_YAML_E_SYNTAX);
    expect_refused("a: \xC3\x28\n", STG_YAML_E_SYNTAX);
    expect_refused("a: *nowhere\n", STG_YAML_E_SYNTAX);
    expect_refused("a: &x 1\nb: &x 2\n", STG_YAML_E_SYNTAX);
    expect_refused("a: -\n", STG_YAML_E_SYNTAX);
    /* outside the subset */
    expect_refused("a: !!python/object/apply:os.system ['id']\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("? a\n: b\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: 1\n---\nb: 2\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("%YAML 1.1\n---\na: 1\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: b\n  c\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: \"b\n c\"\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a:\tb\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: |2\n  x\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: [b: c]\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: x\xC2\x85y\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: 1\rb: 2\n", STG_YAML_E_UNSUPPORTED);
    expect_refused("a: &r [1, *r]\n", STG_YAML_E_UNSUPPORTED);
}
END_TEST

START_TEST(test_limits)
{
    /* depth: one level past the limit */
    char deep[400] = "";
    for (int i = 0; i < 70; i++) {
        strcat(deep, "[");
    }
    expect_refused(deep, STG_YAML_E_DEPTH);
    parsed p;
    stg_arena_init(&p.arena, (size_t)64 << 20);
    const char *flat = "[1, 2, 3, 4, 5, 6, 7, 8]";
    ck_assert_int_eq(stg_yaml_parse((const uint8_t *)flat, strlen(flat), 8, 5, &p.arena, &p.doc),
                     STG_YAML_E_NODES);
    release(&p);
    /* a billion laughs: each level doubles; the node limit stops the copies */
    char laughs[2048];
    size_t n = (size_t)sprintf(laughs, "a: &a0 [x, x]\n");
    for (int i = 1; i < 40; i++) {
        n += (size_t)sprintf(laughs + n, "a%d: &a%d [*a%d, *a%d]\n", i, i, i - 1, i - 1);
    }
    stg_arena_init(&p.arena, (size_t)256 << 20);
    stg_yaml_status st = stg_yaml_parse((const uint8_t *)laughs, n, 64, 100000, &p.arena, &p.doc);
    ck_assert_int_eq(st, STG_YAML_E_NODES);
    ck_assert_uint_le(p.doc.count, 100000);
    release(&p);
    /* anchors past the ceiling */
    size_t cap = (STG_YAML_ANCHORS_CEILING + 2) * 24;
    char *many = malloc(cap);
    n = 0;
    for (unsigned i = 0; i <= STG_YAML_ANCHORS_CEILING; i++) {
        n += (size_t)sprintf(many + n, "k%u: &n%u v\n", i, i);
    }
    expect_refused(many, STG_YAML_E_NODES);
    free(many);
}
END_TEST

static stg_report *scan_yaml(const char *text, stg_profile profile)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.limits.profile = profile;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(text, strlen(text), "model_config.yaml", &opt, &r), STG_OK);
    return r;
}

/* code present with this severity in both profiles at offset (or absent with sev -1) */
static void expect_code(const char *text, stg_code code, int strict, int compat, long offset)
{
    for (int p = 0; p < 2; p++) {
        stg_report *r = scan_yaml(text, (stg_profile)p);
        long at = tu_find(r, code);
        int want = p == 0 ? strict : compat;
        if (want < 0) {
            ck_assert_msg(at < 0, "%s: unexpected %s: %s", text, stg_code_name(code),
                          tu_describe(r));
        } else {
            ck_assert_msg(at >= 0, "%s: no %s: %s", text, stg_code_name(code), tu_describe(r));
            const stg_finding *f = stg_report_at(r, (size_t)at);
            ck_assert_int_eq(f->severity, want);
            if (offset >= 0) {
                ck_assert_uint_eq(f->offset, (uint64_t)offset);
            }
        }
        ck_assert_int_eq(stg_report_format(r), STG_FMT_YAML);
        stg_report_free(r);
    }
}

START_TEST(test_hydra_codes)
{
    const int C = STG_SEV_CRITICAL, W = STG_SEV_WARNING, E = STG_SEV_ERROR;
    expect_code("enc:\n  _target_: os.system\n", STG_HYDRA_TARGET_UNSAFE, C, C, 17);
    expect_code("- {_target_: builtins.eval, _args_: ['1']}\n", STG_HYDRA_TARGET_UNSAFE, C, C, 13);
    expect_code("a: {_target_: \"nemo.collections.asr.models.os.system\"}\n",
                STG_HYDRA_TARGET_UNSAFE, C, C, 14);
    expect_code("target: subprocess.Popen\n", STG_HYDRA_TARGET_UNSAFE, C, C, 8);
    expect_code("a: &t os.system\nb:\n  _target_: *t\n", STG_HYDRA_TARGET_UNSAFE, C, C, -1);
    /* near misses: allowed namespaces, a nested non-NeMo `target`, a key that only looks like */
    expect_code("enc:\n  _target_: nemo.collections.asr.modules.ConformerEncoder\n"
                "opt:\n  _target_: torch.optim.AdamW\n  lr: 0.1\n",
                STG_HYDRA_TARGET_UNSAFE, -1, -1, -1);
    expect_code("a:\n  target: os.system\n_target: os.system\n", STG_HYDRA_TARGET_UNSAFE, -1, -1,
                -1);
    expect_code("a:\n  _target_: ${b.c}\n", STG_HYDRA_TARGET_UNRESOLVED, W, W, 15);
    expect_code("a:\n  _target_: [os, system]\n", STG_HYDRA_TARGET_UNRESOLVED, W, W, 15);
    expect_code("a:\n  _target_: torch.nn.Linear\n", STG_HYDRA_TARGET_UNRESOLVED, -1, -1, -1);
    expect_code("a: [1, 2\n", STG_YAML_MALFORMED, E, W, 9);
    expect_code("a: [1, 2]\n", STG_YAML_MALFORMED, -1, -1, -1);
    expect_code("a: !!python/name:os.system ''\n", STG_YAML_UNSUPPORTED, W, W, 3);
    expect_code("a: python/name:os.system\n", STG_YAML_UNSUPPORTED, -1, -1, -1);
}
END_TEST

START_TEST(test_target_refusal)
{
    static const char *const ok[] = {"nemo.collections.asr.modules.ConvASRDecoder",
                                     "torch.nn.CrossEntropyLoss",
                                     "torch.optim.AdamW",
                                     "lightning.pytorch.callbacks.ModelCheckpoint",
                                     "omegaconf.DictConfig",
                                     "megatron.core.ModelParallelConfig"};
    static const char *const bad[] = {"os.system",
                                      "torch.load",
                                      "torch.hub.load",
                                      "nemo.x",
                                      "hydra.utils.get_method",
                                      "nemo.core.classes.ModelPT.restore_from",
                                      "torch.nn.modules.module.__builtins__",
                                      "torch.nn..Linear",
                                      "nemo.collections.asr.subprocess.run",
                                      "torch.nn."};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ck_assert_msg(stg_hydra_target_refusal(ok[i], strlen(ok[i])) == NULL, "%s", ok[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(stg_hydra_target_refusal(bad[i], strlen(bad[i])) != NULL, "%s", bad[i]);
    }
    /* what hydra's _locate cannot resolve raises before anything runs: no finding */
    static const char *const unlocatable[] = {"AutoTokenizer", ".x.y", "a..b",
                                              "from a.b",      "a.1b", "a.b."};
    for (size_t i = 0; i < sizeof unlocatable / sizeof unlocatable[0]; i++) {
        ck_assert_msg(!stg_hydra_target_locatable(unlocatable[i], strlen(unlocatable[i])), "%s",
                      unlocatable[i]);
    }
    ck_assert(stg_hydra_target_locatable("os.system", 9));
    ck_assert(stg_hydra_target_locatable("a.b_1.C", 7));
    expect_code("a:\n  _target_: AutoTokenizer\n", STG_HYDRA_TARGET_UNSAFE, -1, -1, -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_trees);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_hydra_codes);
    tcase_add_test(tc, test_target_refusal);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
