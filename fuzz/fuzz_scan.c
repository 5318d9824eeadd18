/* Target: stg_check_buffer (sniff + dispatch over every format: safetensors, pickles, zip, tar,
 * gzip/zlib/bz2/xz/lzma/joblib ZF streams, npy, GGUF, ONNX by name, polyglots) on arbitrary
 * bytes. The first three input bytes pick the profile, small limits and a name hint; the rest
 * is the file. Properties: no crash, no leak; the same bytes give the same findings (code,
 * severity, offset, member) and format; the verdict is never ok (or warn) when an error or
 * critical finding exists, and is unsafe exactly when a critical one does; its JSON record (stg_report_to_json) parses whole. Seeds:
 * corpus/scan/ (remote-code seeds: a third byte of 0xE0 and above). The rows the summary door
 * hands out (Keras layers, SavedModel ops, chat templates, auto_map entries) are compared too:
 * that door parses nothing itself, so this harness is its fuzzing. Dict: fuzz/scan.dict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "fuzz/compare.h"
#include "parser/arena.h"
#include "parser/json.h"
#include "validator/report.h"

static const char *const names[] = {
    NULL,
    "model.safetensors",
    "pytorch_model.bin",
    "model.pt",
    "x.pkl",
    "a.joblib",
    "arrays.npz",
    "a.npy",
    "model.onnx",
    "notes.txt",
    "m.safetensors.index.json",
    "model.ckpt",
    "w.pth",
    "data.pickle",
    "x.gguf",
    "blob",
};

/* Names of the code-bearing text formats (docs/remote-code.md, docs/yaml.md), picked by a
 * third byte of 0xE0 and above so the seeds above keep their names. */
static const char *const code_names[] = {
    "config.json", "tokenizer_config.json", "modeling_x.py", "model_config.yaml",
    "model.nemo",  "model.skops",           "schema.json",   "train.yml",
};

static stg_report *run(const uint8_t *data, size_t size, const stg_limits *lim, const char *name)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return NULL;
    }
    stg_check_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.lim = lim;
    ctx.report = r;
    stg_check_buffer(data, size, name, &ctx);
    stg_report_finish(r);
    return r;
}

/* The report's JSON record (stg_report_to_json): as long as said, one JSON value the project's
 * strict parser reads to its end, whatever names the file carried; a short buffer gets its
 * prefix. */
static void check_json_record(const stg_report *r, const char *name)
{
    size_t n = 0, again = 0;
    if (stg_report_to_json(r, name, NULL, 0, &n) != STG_OK) {
        abort();
    }
    char *json = malloc(n + 1);
    if (json == NULL) {
        return;
    }
    if (stg_report_to_json(r, name, json, n + 1, &again) != STG_OK || again != n ||
        strlen(json) != n) {
        abort();
    }
    char small[8];
    if (stg_report_to_json(r, name, small, sizeof small, &again) != STG_OK || again != n ||
        strncmp(small, json, sizeof small - 1) != 0) {
        abort();
    }
    stg_arena arena;
    stg_arena_init(&arena, (size_t)64 << 20);
    stg_json_parser p;
    stg_json_init(&p, (const uint8_t *)json, n, 64, &arena);
    stg_json_event ev;
    stg_json_type t;
    do {
        t = stg_json_next(&p, &ev);
    } while (t != STG_JSON_END && t != STG_JSON_ERROR);
    if (t != STG_JSON_END || ev.offset != n) {
        abort();
    }
    stg_json_release(&p);
    stg_arena_release(&arena);
    free(json);
}

/* The summary door's rows (validator/report.h): the same for the same bytes, within the
 * ceiling, every string as long as said (the door hands them out). */
static bool same_rows(const stg_report *a, const stg_report *b)
{
    if (a->row_count != b->row_count || a->rows_dropped != b->rows_dropped ||
        a->row_count > STG_SUMMARY_ENTRIES_MAX) {
        return false;
    }
    for (size_t i = 0; i < a->row_count; i++) {
        const stg_report_row *x = &a->rows[i], *y = &b->rows[i];
        if (x->kind != y->kind || x->count != y->count || x->offset != y->offset ||
            x->verdict != y->verdict || x->state != y->state || x->name_len != y->name_len ||
            x->value_len != y->value_len || x->name[x->name_len] != '\0' ||
            x->value[x->value_len] != '\0' || memcmp(x->name, y->name, x->name_len) != 0 ||
            memcmp(x->value, y->value, x->value_len) != 0) {
            return false;
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) {
        return 0;
    }
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = (data[0] & 1) ? STG_PROFILE_COMPAT : STG_PROFILE_STRICT;
    lim.max_nesting = (uint32_t)((data[0] >> 1) & 3) + 1;
    lim.max_findings = (uint32_t)(data[1] & 15) + 1;
    lim.max_inflate_bytes = (uint64_t)1 << (10 + (data[1] >> 4) % 12); /* 1 KiB .. 2 MiB */
    lim.max_inflate_ratio = (data[0] & 8) ? 1000 : 0;
    lim.max_pickle_stack = 4096;
    lim.max_pickle_memo = 4096;
    lim.max_pickle_string = 1 << 20;
    lim.max_header_len = 1 << 20;
    const char *name =
        data[2] >= 0xE0 ? code_names[(data[2] - 0xE0) % (sizeof code_names / sizeof code_names[0])]
                        : names[data[2] % (sizeof names / sizeof names[0])];
    data += 3;
    size -= 3;

    stg_report *a = run(data, size, &lim, name);
    stg_report *b = run(data, size, &lim, name);
    if (a == NULL || b == NULL) {
        stg_report_free(a);
        stg_report_free(b);
        return 0;
    }
    if (!stg_fuzz_same_report(a, b,
                              STG_FUZZ_CMP_FORMAT | STG_FUZZ_CMP_GLOBALS |
                                  STG_FUZZ_CMP_MEMBER_OFFSET | STG_FUZZ_CMP_LIMIT)) {
        abort();
    }
    if (!same_rows(a, b)) {
        abort();
    }
    bool failing = false, critical = false;
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *x = stg_report_at(a, i);
        failing = failing || x->severity >= STG_SEV_ERROR;
        critical = critical || x->severity == STG_SEV_CRITICAL;
    }
    stg_verdict v = stg_report_verdict(a);
    if (stg_report_truncated(a) == 0 && !a->out_of_memory) {
        if (failing && v < STG_VERDICT_INVALID) {
            abort();
        }
        if (critical != (v == STG_VERDICT_UNSAFE)) {
            abort();
        }
    }
    if (stg_report_count(a) == 0 && v != STG_VERDICT_OK) {
        abort();
    }
    check_json_record(a, name);
    stg_report_free(a);
    stg_report_free(b);
    return 0;
}
