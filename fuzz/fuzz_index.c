/* Target: stg_index_parse + stg_index_check_shards (validator/index.c) and the scanner's entry
 * stg_index_scan_file (loader/model.c) over model.safetensors.index.json bytes. */
/* Needs: loader */
/* Seeds: corpus/index/. Dict: fuzz/index.dict. Byte 0 = flags (bit 0: compat, bit 1: small
 * limits); the rest is the index JSON. A fixed synthetic model is created once in a private
 * temporary folder (removed at exit): s1.safetensors holding a, b; s2.safetensors holding c;
 * bad.safetensors (trailing bytes). Properties checked (abort on violation):
 *  - every kept entry names a shard in range; a shard is flagged unsafe exactly when its name
 *    is not a plain file name, and then an index_shard_path_unsafe finding exists;
 *  - ix.ok is false exactly when a json_* (other than a repeated key), index_invalid or
 *    limit_exceeded finding was added;
 *  - the pure check against the synthetic tables reports only index_tensor_* and total size
 *    codes; index_tensor_missing offsets point at a weight_map key;
 *  - the scanner entry, run on the real folder, never reports a shard finding for an unsafe
 *    name (it is never opened) and the same bytes give the same findings twice. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/model.h"
#include "validator/index.h"
#include "validator/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char model_dir[256];
static char index_path[320];

static void write_file(const char *name, const void *buf, size_t len)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", model_dir, name);
    FILE *f = fopen(p, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        abort();
    }
}

static void remove_model(void)
{
    const char *names[] = {"s1.safetensors", "s2.safetensors", "bad.safetensors"};
    for (size_t i = 0; i < 3; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", model_dir, names[i]);
        unlink(p);
    }
    rmdir(model_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *base = getenv("TMPDIR");
    snprintf(model_dir, sizeof model_dir, "%s/stg-fuzz-index.XXXXXX",
             base != NULL && strlen(base) < 150 ? base : "/tmp");
    if (mkdtemp(model_dir) == NULL) {
        abort();
    }
    snprintf(index_path, sizeof index_path, "%s/model.safetensors.index.json", model_dir);
    /* headers padded to a multiple of 8 */
    static const char s1[] = "\x70\0\0\0\0\0\0\0"
                             "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                             "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]}}       "
                             "abb";
    static const char s2[] = "\x38\0\0\0\0\0\0\0"
                             "{\"c\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}   "
                             "cccc";
    static const char bad[] = "\x08\0\0\0\0\0\0\0{}      xyz";
    write_file("s1.safetensors", s1, sizeof s1 - 1);
    write_file("s2.safetensors", s2, sizeof s2 - 1);
    write_file("bad.safetensors", bad, sizeof bad - 1);
    atexit(remove_model);
    return 0;
}

static const stg_index_shard_tensor S1[] = {{"a", 1, 10, 2}, {"b", 1, 60, 1}};
static const stg_index_shard_tensor S2[] = {{"c", 1, 10, 4}};

static bool has_code(const stg_report *r, stg_code c)
{
    return stg_report_has(r, c);
}

static bool same_findings(const stg_report *a, const stg_report *b)
{
    if (stg_report_count(a) != stg_report_count(b)) {
        return false;
    }
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *x = stg_report_at(a, i), *y = stg_report_at(b, i);
        if (x->code != y->code || x->offset != y->offset || x->severity != y->severity) {
            return false;
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    if (model_dir[0] == '\0') {
        LLVMFuzzerInitialize(NULL, NULL);
    }
    const uint8_t *json = data + 1;
    size_t len = size - 1;
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = (data[0] & 1) ? STG_PROFILE_COMPAT : STG_PROFILE_STRICT;
    if (data[0] & 2) {
        lim.max_tensors = 8;
        lim.max_json_depth = 6;
        lim.max_name_len = 16;
        lim.max_memory = 1u << 16;
    }
    stg_report *r = stg_report_new(&lim);
    stg_index ix;
    stg_index_init(&ix);
    bool ok = stg_index_parse(json, len, &lim, r, &ix);
    bool structural = has_code(r, STG_JSON_SYNTAX) || has_code(r, STG_JSON_INVALID_UTF8) ||
                      has_code(r, STG_JSON_TOO_DEEP) || has_code(r, STG_JSON_NUMBER_OVERFLOW) ||
                      has_code(r, STG_INDEX_INVALID) || has_code(r, STG_LIMIT_EXCEEDED);
    if (ok == structural) {
        abort();
    }
    if (ok) {
        stg_index_shard_table *t = calloc(ix.shard_count + 1, sizeof *t);
        if (t == NULL) {
            abort();
        }
        for (size_t i = 0; i < ix.shard_count; i++) {
            const stg_index_shard *sh = &ix.shards[i];
            bool safe = stg_index_shard_name_safe(sh->name, sh->name_len);
            if (safe == sh->unsafe) {
                abort();
            }
            if (sh->name_len == 14 && memcmp(sh->name, "s1.safetensors", 14) == 0) {
                t[i] = (stg_index_shard_table){true, S1, 2};
            } else if (sh->name_len == 14 && memcmp(sh->name, "s2.safetensors", 14) == 0) {
                t[i] = (stg_index_shard_table){true, S2, 1};
            }
        }
        if (ix.shard_count > 0 && !has_code(r, STG_INDEX_SHARD_PATH_UNSAFE)) {
            for (size_t i = 0; i < ix.shard_count; i++) {
                if (ix.shards[i].unsafe) {
                    abort();
                }
            }
        }
        for (size_t i = 0; i < ix.entry_count; i++) {
            if (!ix.entries[i].dropped && ix.entries[i].shard >= ix.shard_count) {
                abort();
            }
        }
        stg_report *c = stg_report_new(&lim);
        stg_index_check_shards(&ix, t, &lim, c);
        stg_report_finish(c);
        for (size_t i = 0; i < stg_report_count(c); i++) {
            const stg_finding *f = stg_report_at(c, i);
            switch (f->code) {
            case STG_INDEX_TENSOR_MISSING:
                if (!f->has_offset || f->offset >= len || json[f->offset] != '"') {
                    abort();
                }
                break;
            case STG_INDEX_TENSOR_UNLISTED:
            case STG_INDEX_TENSOR_DUPLICATE:
            case STG_INDEX_TOTAL_SIZE_MISMATCH:
            case STG_FINDINGS_TRUNCATED: break;
            default: abort();
            }
        }
        stg_report_free(c);
        free(t);
    }
    stg_index_release(&ix);
    stg_report_free(r);

    /* The scanner entry on the real folder, twice. */
    stg_scan_options opt;
    memset(&opt, 0, sizeof opt);
    opt.limits = lim;
    stg_report *a = stg_report_new(&lim);
    stg_report *b = stg_report_new(&lim);
    stg_index_scan_file(index_path, json, len, &opt, a);
    stg_index_scan_file(index_path, json, len, &opt, b);
    stg_report_finish(a);
    stg_report_finish(b);
    if (!same_findings(a, b)) {
        abort();
    }
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *f = stg_report_at(a, i);
        if (f->member != NULL && !stg_index_shard_name_safe(f->member, strlen(f->member))) {
            abort(); /* a finding about a file that must never have been opened */
        }
    }
    stg_report_free(a);
    stg_report_free(b);
    return 0;
}
