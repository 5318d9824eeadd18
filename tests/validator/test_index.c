/* Index rules (validator/index.c), pure: every json_* and index_* code the index can produce,
 * each with a near miss that must stay clean, severities in both profiles and byte offsets; the
 * shard-name rule; the map against synthetic shard tables. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/index.h"

#define E STG_SEV_ERROR
#define W STG_SEV_WARNING
#define C STG_SEV_CRITICAL

static const struct icase {
    const char *name;
    const char *json;
    size_t len; /* 0: strlen */
    stg_code code;
    stg_severity strict_sev, compat_sev;
    const char *marker; /* the finding is at this substring's first occurrence */
    const char *near;   /* must not produce the code */
    uint32_t depth;     /* max_json_depth (0: default) */
} cases[] = {
    {"syntax_truncated", "{\"weight_map\":{}", 0, STG_JSON_SYNTAX, E, E, NULL,
     "{\"weight_map\":{}}", 0},
    {"syntax_trailing", "{\"weight_map\":{}} x", 0, STG_JSON_SYNTAX, E, E, "x",
     "{\"weight_map\":{}} \n", 0},
    {"utf8", "{\"weight_map\":{\"a\xff\":\"s.safetensors\"}}", 0, STG_JSON_INVALID_UTF8, E, E,
     "\xff", "{\"weight_map\":{\"a\xc3\xa9\":\"s.safetensors\"}}", 0},
    {"too_deep", "{\"metadata\":{\"x\":[[1]]},\"weight_map\":{}}", 0, STG_JSON_TOO_DEEP, E, E, "[1",
     "{\"metadata\":{\"x\":[1]},\"weight_map\":{}}", 3},
    {"dup_tensor", "{\"weight_map\":{\"a\":\"s1\",\"a\":\"s2\"}}", 0, STG_JSON_DUPLICATE_KEY, E, W,
     ",\"a\"", "{\"weight_map\":{\"a\":\"s1\",\"b\":\"s1\"}}", 0},
    {"dup_top", "{\"weight_map\":{},\"weight_map\":{}}", 0, STG_JSON_DUPLICATE_KEY, E, W,
     ",\"weight_map\"", "{\"weight_map\":{},\"weight_maps\":{}}", 0},
    {"overflow", "{\"metadata\":{\"total_size\":18446744073709551616},\"weight_map\":{}}", 0,
     STG_JSON_NUMBER_OVERFLOW, E, E, "18446",
     "{\"metadata\":{\"total_size\":18446744073709551615},\"weight_map\":{}}", 0},
    {"not_object", "[]", 0, STG_INDEX_INVALID, E, E, "[", "{\"weight_map\":{}}", 0},
    {"map_missing", "{\"metadata\":{}}", 0, STG_INDEX_INVALID, E, E, "{",
     "{\"metadata\":{},\"weight_map\":{}}", 0},
    {"map_not_object", "{\"weight_map\":[]}", 0, STG_INDEX_INVALID, E, E, "[",
     "{\"weight_map\":{}}", 0},
    {"value_not_string", "{\"weight_map\":{\"a\":1}}", 0, STG_INDEX_INVALID, E, E, "1",
     "{\"weight_map\":{\"a\":\"1\"}}", 0},
    {"metadata_not_object", "{\"metadata\":null,\"weight_map\":{}}", 0, STG_INDEX_INVALID, E, E,
     "null", "{\"metadata\":{\"x\":null},\"weight_map\":{}}", 0},
    {"total_size_string", "{\"metadata\":{\"total_size\":\"12\"},\"weight_map\":{}}", 0,
     STG_INDEX_INVALID, E, E, "\"12\"", "{\"metadata\":{\"total_size\":12},\"weight_map\":{}}", 0},
    {"total_size_float", "{\"metadata\":{\"total_size\":1.5},\"weight_map\":{}}", 0,
     STG_INDEX_INVALID, E, E, "1.5", "{\"metadata\":{\"total\":1.5},\"weight_map\":{}}", 0},
    {"unsafe_dotdot", "{\"weight_map\":{\"a\":\"../x.safetensors\"}}", 0,
     STG_INDEX_SHARD_PATH_UNSAFE, C, C, "\"../", "{\"weight_map\":{\"a\":\"x.safetensors\"}}", 0},
    {"unsafe_abs", "{\"weight_map\":{\"a\":\"/etc/passwd\"}}", 0, STG_INDEX_SHARD_PATH_UNSAFE, C, C,
     "\"/etc", "{\"weight_map\":{\"a\":\"etc_passwd\"}}", 0},
    {"unsafe_sep", "{\"weight_map\":{\"a\":\"s\",\"b\":\"d/s\"}}", 0, STG_INDEX_SHARD_PATH_UNSAFE,
     C, C, "\"d/s", "{\"weight_map\":{\"a\":\"s\",\"b\":\"d.s\"}}", 0},
    {"unsafe_escaped_sep", "{\"weight_map\":{\"a\":\"d\\/s\"}}", 0, STG_INDEX_SHARD_PATH_UNSAFE, C,
     C, "\"d", "{\"weight_map\":{\"a\":\"d\\u002es\"}}", 0},
    {"unsafe_backslash", "{\"weight_map\":{\"a\":\"d\\\\s\"}}", 0, STG_INDEX_SHARD_PATH_UNSAFE, C,
     C, "\"d", "{\"weight_map\":{\"a\":\"d_s\"}}", 0},
    {"unsafe_nul", "{\"weight_map\":{\"a\":\"s\\u0000.x\"}}", 0, STG_INDEX_SHARD_PATH_UNSAFE, C, C,
     "\"s", "{\"weight_map\":{\"a\":\"s\\u0001.x\"}}", 0},
    {"unsafe_escaped_dotdot", "{\"weight_map\":{\"a\":\"\\u002e\\u002e\"}}", 0,
     STG_INDEX_SHARD_PATH_UNSAFE, C, C, "\"\\u", "{\"weight_map\":{\"a\":\"\\u002ex\"}}", 0},
    {"unsafe_empty", "{\"weight_map\":{\"a\":\"\"}}", 0, STG_INDEX_SHARD_PATH_UNSAFE, C, C, "\"\"",
     "{\"weight_map\":{\"a\":\"e\"}}", 0},
    {"unsafe_drive", "{\"weight_map\":{\"a\":\"C:x\"}}", 0, STG_INDEX_SHARD_PATH_UNSAFE, C, C,
     "\"C:", "{\"weight_map\":{\"a\":\"Cx:\"}}", 0},
};

#define NCASES (sizeof cases / sizeof cases[0])

static stg_report *run(const char *json, size_t len, stg_profile prof, uint32_t depth,
                       stg_index *ix)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = prof;
    if (depth != 0) {
        lim.max_json_depth = depth;
    }
    stg_report *r = stg_report_new(&lim);
    stg_index_init(ix);
    (void)stg_index_parse((const uint8_t *)json, len, &lim, r, ix);
    stg_report_finish(r);
    return r;
}

START_TEST(test_codes)
{
    const struct icase *c = &cases[_i];
    size_t len = c->len != 0 ? c->len : strlen(c->json);
    for (int p = 0; p < 2; p++) {
        stg_index ix;
        stg_report *r = run(c->json, len, p == 0 ? STG_PROFILE_STRICT : STG_PROFILE_COMPAT,
                            c->depth, &ix);
        long at = tu_find(r, c->code);
        ck_assert_msg(at >= 0, "%s: %s", c->name, tu_describe(r));
        const stg_finding *f = stg_report_at(r, (size_t)at);
        ck_assert_int_eq(f->severity, p == 0 ? c->strict_sev : c->compat_sev);
        if (c->marker != NULL) {
            const char *m = strstr(c->json, c->marker);
            ck_assert_ptr_nonnull(m);
            uint64_t want = (uint64_t)(m - c->json);
            if (c->marker[0] == ',') {
                want++; /* the key after the comma */
            }
            ck_assert(f->has_offset);
            ck_assert_msg(f->offset == want, "%s: offset %llu want %llu", c->name,
                          (unsigned long long)f->offset, (unsigned long long)want);
        } else {
            ck_assert(f->has_offset);
            ck_assert_uint_eq(f->offset, len); /* the end of a truncated document */
        }
        bool structural = c->code != STG_JSON_DUPLICATE_KEY &&
                          c->code != STG_INDEX_SHARD_PATH_UNSAFE;
        ck_assert_int_eq(ix.ok, !structural);
        stg_index_release(&ix);
        stg_report_free(r);
        r = run(c->near, strlen(c->near), p == 0 ? STG_PROFILE_STRICT : STG_PROFILE_COMPAT,
                c->depth, &ix);
        ck_assert_msg(stg_report_count(r) == 0 && ix.ok, "near miss of %s: %s", c->name,
                      tu_describe(r));
        stg_index_release(&ix);
        stg_report_free(r);
    }
}
END_TEST

START_TEST(test_table)
{
    const char *json = "{\"metadata\":{\"total_size\":42,\"format\":{\"nested\":[1,2]}},"
                       "\"other\":[true],"
                       "\"weight_map\":{\"w\\u0000\":\"b.st\",\"a\":\"a.st\",\"c\":\"b.st\","
                       "\"a\":\"c.st\"}}";
    stg_index ix;
    stg_report *r = run(json, strlen(json), STG_PROFILE_COMPAT, 0, &ix);
    ck_assert_msg(ix.ok, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN); /* the repeated "a" */
    ck_assert(ix.has_total_size);
    ck_assert_uint_eq(ix.total_size, 42);
    ck_assert_uint_eq(ix.total_size_offset, (uint64_t)(strstr(json, "42") - json));
    ck_assert_uint_eq(ix.entry_count, 4);
    ck_assert_uint_eq(ix.entries[0].tensor_len, 2);
    ck_assert_mem_eq(ix.entries[0].tensor, "w\0", 2);
    ck_assert(ix.entries[1].dropped); /* last wins */
    ck_assert(!ix.entries[3].dropped);
    /* shards in order of first appearance; the dropped entry's shard is not one */
    ck_assert_uint_eq(ix.shard_count, 2);
    ck_assert_str_eq(ix.shards[0].name, "b.st");
    ck_assert_str_eq(ix.shards[1].name, "c.st");
    ck_assert_uint_eq(ix.shards[0].offset, (uint64_t)(strstr(json, "\"b.st") - json));
    ck_assert_uint_eq(ix.entries[0].shard, 0);
    ck_assert_uint_eq(ix.entries[2].shard, 0);
    ck_assert_uint_eq(ix.entries[3].shard, 1);
    stg_index_release(&ix);
    stg_report_free(r);
}
END_TEST

START_TEST(test_name_rule)
{
    ck_assert(stg_index_shard_name_safe("model-00001-of-00002.safetensors", 32));
    ck_assert(stg_index_shard_name_safe("a.b", 3));
    ck_assert(stg_index_shard_name_safe(".hidden", 7));
    ck_assert(!stg_index_shard_name_safe("..", 2));
    ck_assert(!stg_index_shard_name_safe(".", 1));
    ck_assert(!stg_index_shard_name_safe("", 0));
    ck_assert(!stg_index_shard_name_safe("a..b", 4));
    ck_assert(!stg_index_shard_name_safe("a\0b", 3));
    ck_assert(!stg_index_shard_name_safe("z:", 2));
    ck_assert(stg_index_shard_name_safe("1:", 2));
}
END_TEST

/* The map against shard tables. */
static const char *MAPJ = "{\"metadata\":{\"total_size\":30},\"weight_map\":{"
                          "\"a\":\"s0\",\"b\":\"s0\",\"x\":\"s1\",\"gone\":\"s1\"}}";

static stg_report *check(stg_index_shard_table *t, stg_index *ix, const char *json)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_index_init(ix);
    ck_assert(stg_index_parse((const uint8_t *)json, strlen(json), &lim, r, ix));
    stg_index_check_shards(ix, t, &lim, r);
    stg_report_finish(r);
    return r;
}

START_TEST(test_shards)
{
    stg_index_shard_tensor s0[] = {{"a", 1, 100, 10}, {"b", 1, 140, 10}};
    stg_index_shard_tensor s1[] = {{"x", 1, 200, 4}, {"extra", 5, 240, 6}, {"b", 1, 280, 0}};
    stg_index_shard_table t[2] = {{true, s0, 2}, {true, s1, 3}};
    stg_index ix;
    stg_report *r = check(t, &ix, MAPJ);
    /* gone: mapped to s1 which lacks it -> missing, at its key in the index */
    long m = tu_find(r, STG_INDEX_TENSOR_MISSING);
    ck_assert_msg(m >= 0 && tu_count(r, STG_INDEX_TENSOR_MISSING) == 1, "%s", tu_describe(r));
    ck_assert_uint_eq(stg_report_at(r, (size_t)m)->offset,
                      (uint64_t)(strstr(MAPJ, "\"gone") - MAPJ));
    ck_assert_str_eq(stg_report_at(r, (size_t)m)->tensor, "gone");
    /* extra: held by s1, not listed -> unlisted at its key in the shard, member s1 */
    long u = tu_find(r, STG_INDEX_TENSOR_UNLISTED);
    ck_assert(u >= 0 && tu_count(r, STG_INDEX_TENSOR_UNLISTED) == 1);
    ck_assert_uint_eq(stg_report_at(r, (size_t)u)->offset, 240);
    ck_assert_str_eq(stg_report_at(r, (size_t)u)->member, "s1");
    /* b: in s0 and s1 -> duplicate at the later shard's key */
    long d = tu_find(r, STG_INDEX_TENSOR_DUPLICATE);
    ck_assert(d >= 0 && tu_count(r, STG_INDEX_TENSOR_DUPLICATE) == 1);
    ck_assert_uint_eq(stg_report_at(r, (size_t)d)->offset, 280);
    ck_assert_str_eq(stg_report_at(r, (size_t)d)->member, "s1");
    /* sizes: 10 + 10 + 4 + 6 + 0 = 30 = total_size -> no mismatch */
    ck_assert_int_lt(tu_find(r, STG_INDEX_TOTAL_SIZE_MISMATCH), 0);
    stg_index_release(&ix);
    stg_report_free(r);

    /* near misses: a consistent set; then a total that is off by one */
    stg_index_shard_tensor n1[] = {{"x", 1, 200, 4}, {"gone", 4, 240, 6}};
    stg_index_shard_table tn[2] = {{true, s0, 2}, {true, n1, 2}};
    r = check(tn, &ix, MAPJ);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_index_release(&ix);
    stg_report_free(r);
    stg_index_shard_tensor n2[] = {{"x", 1, 200, 4}, {"gone", 4, 240, 7}};
    stg_index_shard_table tm[2] = {{true, s0, 2}, {true, n2, 2}};
    r = check(tm, &ix, MAPJ);
    long s = tu_find(r, STG_INDEX_TOTAL_SIZE_MISMATCH);
    ck_assert_msg(s >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_at(r, (size_t)s)->severity, STG_SEV_WARNING);
    ck_assert_uint_eq(stg_report_at(r, (size_t)s)->offset, (uint64_t)(strstr(MAPJ, "30") - MAPJ));
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    stg_index_release(&ix);
    stg_report_free(r);

    /* an unavailable shard: nothing is concluded about its tensors or the total */
    stg_index_shard_table tu[2] = {{true, s0, 2}, {false, NULL, 0}};
    r = check(tu, &ix, MAPJ);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r));
    stg_index_release(&ix);
    stg_report_free(r);
}
END_TEST

/* Limits: max_tensors over the map, memory budget. */
START_TEST(test_limits)
{
    const char *json = "{\"weight_map\":{\"a\":\"s\",\"b\":\"s\",\"c\":\"s\"}}";
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_tensors = 2;
    stg_report *r = stg_report_new(&lim);
    stg_index ix;
    stg_index_init(&ix);
    ck_assert(!stg_index_parse((const uint8_t *)json, strlen(json), &lim, r, &ix));
    stg_report_finish(r);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert(at >= 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_tensors");
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset, (uint64_t)(strstr(json, "\"c") - json));
    stg_index_release(&ix);
    stg_report_free(r);
    lim.max_tensors = 3; /* at the limit: fine */
    r = stg_report_new(&lim);
    stg_index_init(&ix);
    ck_assert(stg_index_parse((const uint8_t *)json, strlen(json), &lim, r, &ix));
    stg_index_release(&ix);
    stg_report_free(r);
    lim.max_memory = 1024;
    r = stg_report_new(&lim);
    stg_index_init(&ix);
    ck_assert(!stg_index_parse((const uint8_t *)json, strlen(json), &lim, r, &ix));
    stg_report_finish(r);
    at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert(at >= 0);
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_memory");
    stg_index_release(&ix);
    stg_report_free(r);
}
END_TEST

/* Keys are compared after decoding, as json.load does: an escaped "weight_map", "metadata" or
 * "total_size" is that key; a key that only looks close, or one too long to decode to it, is
 * another (ignored) key. */
START_TEST(test_escaped_keys)
{
    const char *json = "{\"\\u006detadata\":{\"total_\\u0073ize\":5,\"\\u0061\":1},"
                       "\"weight_\\u006dap\":{\"a\":\"s\"}}";
    stg_index ix;
    stg_report *r = run(json, strlen(json), STG_PROFILE_STRICT, 0, &ix);
    ck_assert_msg(ix.ok && stg_report_count(r) == 0, "%s", tu_describe(r));
    ck_assert_uint_eq(ix.entry_count, 1);
    ck_assert(ix.has_total_size);
    ck_assert_uint_eq(ix.total_size, 5);
    ck_assert_uint_eq(ix.total_size_offset, (uint64_t)(strstr(json, "5,") - json));
    stg_index_release(&ix);
    stg_report_free(r);

    /* an escaped key of 70 raw bytes cannot decode to a 10-byte name: ignored, so the map is
     * missing; the same for an escaped "weight_mapx" */
    const char *misses[] = {
        "{\"\\u0077eight_map_________________________________________________________\":{}}",
        "{\"weight_\\u006dapx\":{}}",
    };
    for (size_t i = 0; i < 2; i++) {
        r = run(misses[i], strlen(misses[i]), STG_PROFILE_STRICT, 0, &ix);
        ck_assert(!ix.ok);
        long at = tu_find(r, STG_INDEX_INVALID);
        ck_assert_msg(at >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
        ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset, 0);
        stg_index_release(&ix);
        stg_report_free(r);
    }
}
END_TEST

/* Bytes after the index's value: json_syntax at the first byte that is not JSON whitespace. */
START_TEST(test_trailing_after_whitespace)
{
    const char *json = "{\"weight_map\":{}} \t\r\n x";
    stg_index ix;
    stg_report *r = run(json, strlen(json), STG_PROFILE_COMPAT, 0, &ix);
    ck_assert(!ix.ok);
    long at = tu_find(r, STG_JSON_SYNTAX);
    ck_assert_msg(at >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset, strlen(json) - 1);
    stg_index_release(&ix);
    stg_report_free(r);
}
END_TEST

/* max_name_len applies to tensor names (decoded), at the key's offset; at the limit it passes. */
START_TEST(test_name_limit)
{
    const char *json = "{\"weight_map\":{\"abc\":\"s\",\"ab\\u0063d\":\"s\"}}";
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_name_len = 3;
    stg_report *r = stg_report_new(&lim);
    stg_index ix;
    stg_index_init(&ix);
    ck_assert(!stg_index_parse((const uint8_t *)json, strlen(json), &lim, r, &ix));
    stg_report_finish(r);
    long at = tu_find(r, STG_LIMIT_EXCEEDED);
    ck_assert_msg(at >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_name_len");
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset,
                      (uint64_t)(strstr(json, "\"ab\\u") - json));
    stg_index_release(&ix);
    stg_report_free(r);
    lim.max_name_len = 4;
    r = stg_report_new(&lim);
    stg_index_init(&ix);
    ck_assert(stg_index_parse((const uint8_t *)json, strlen(json), &lim, r, &ix));
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_index_release(&ix);
    stg_report_free(r);
}
END_TEST

/* An index of `count` tensors with escaped names (name_pad digits); shard names repeat every
 * `shards` tensors. */
static size_t sweep_doc(char *json, size_t cap, int count, int shards, int name_pad)
{
    size_t n = (size_t)snprintf(json, cap, "{\"metadata\":{\"total_size\":7},\"weight_map\":{");
    for (int i = 0; i < count; i++) {
        n += (size_t)snprintf(json + n, cap - n, "%s\"t\\u00%02x%0*d\":\"s%d.st\"",
                              i == 0 ? "" : ",", 0x41 + i % 26, name_pad, i, i % shards);
    }
    n += (size_t)snprintf(json + n, cap - n, "}}");
    return n;
}

/* Runs stg_index_parse over json with every budget in [lo, hi) (1-byte steps below 4 KiB, then
 * `step`): each answer is the unlimited one (count entries, shards shards) or limit_exceeded
 * (max_memory) alone with the index not ok, never anything else. */
static void sweep(const char *json, size_t n, size_t count, size_t shards, size_t lo, size_t hi,
                  size_t step, size_t *failures, size_t *last_failure)
{
    stg_limits lim;
    stg_limits_default(&lim);
    for (size_t budget = lo; budget < hi; budget += budget < 4096 ? 1 : step) {
        lim.max_memory = budget;
        stg_report *r = stg_report_new(&lim);
        stg_index ix;
        stg_index_init(&ix);
        bool ok = stg_index_parse((const uint8_t *)json, n, &lim, r, &ix);
        stg_report_finish(r);
        if (ok) {
            ck_assert_msg(stg_report_count(r) == 0 && ix.entry_count == count &&
                              ix.shard_count == shards,
                          "budget %zu: %s", budget, tu_describe(r));
        } else {
            (*failures)++;
            *last_failure = budget;
            long at = tu_find(r, STG_LIMIT_EXCEEDED);
            ck_assert_msg(at >= 0 && stg_report_count(r) == 1, "budget %zu: %s", budget,
                          tu_describe(r));
            ck_assert_str_eq(stg_report_at(r, (size_t)at)->limit, "max_memory");
            ck_assert(!stg_report_at(r, (size_t)at)->has_offset ||
                      stg_report_at(r, (size_t)at)->offset <= n);
            ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_INVALID);
        }
        stg_index_release(&ix);
        stg_report_free(r);
    }
}

/* Every max_memory from 1 byte up to what the index needs: the answer is either exactly the
 * unlimited one or limit_exceeded (max_memory); past some budget it is always the unlimited
 * one. */
START_TEST(test_memory_budget_sweep)
{
    static char json[16384];
    size_t n = sweep_doc(json, sizeof json, 200, 7, 1);
    size_t failures = 0, last_failure = 0;
    sweep(json, n, 200, 7, 1, 256 * 1024, 64, &failures, &last_failure);
    ck_assert_uint_gt(failures, 0);
    ck_assert_uint_lt(last_failure, 256 * 1024 - 64);

    /* long names and a shard per tensor: the copies of the names and the shard table outgrow
     * the arena's first 64 KiB block, so a budget can run out in either */
    static char big[512 * 1024];
    n = sweep_doc(big, sizeof big, 4000, 4000, 40);
    failures = 0;
    sweep(big, n, 4000, 4000, 60 * 1024, 1024 * 1024, 1021, &failures, &last_failure);
    ck_assert_uint_gt(failures, 0);
    ck_assert_uint_lt(last_failure, 1024 * 1024 - 1021);
}
END_TEST

/* Stage 2 details: nothing is checked for an index that failed stage 1; one shard listing a
 * name twice is not index_tensor_duplicate (a tensor in two shards is); a sum of sizes that
 * overflows u64 is a total_size mismatch that says so. */
START_TEST(test_shards_edges)
{
    stg_index_shard_tensor s0[] = {{"a", 1, 100, 10}, {"b", 1, 140, 10}};
    stg_index_shard_table t1[1] = {{true, s0, 2}};
    stg_limits lim;
    stg_limits_default(&lim);
    stg_index ix;
    stg_report *r = run("[]", 2, STG_PROFILE_STRICT, 0, &ix);
    stg_report_free(r);
    r = stg_report_new(&lim);
    stg_index_check_shards(&ix, t1, &lim, r);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_index_release(&ix);
    stg_report_free(r);

    const char *json = "{\"metadata\":{\"total_size\":5},\"weight_map\":{\"a\":\"s0\"}}";
    stg_index_shard_tensor twice[] = {{"a", 1, 300, 3}, {"a", 1, 200, 2}};
    stg_index_shard_table t2[1] = {{true, twice, 2}};
    r = check(t2, &ix, json);
    ck_assert_msg(stg_report_count(r) == 0, "%s", tu_describe(r)); /* 3 + 2 = 5 */
    stg_index_release(&ix);
    stg_report_free(r);

    stg_index_shard_tensor huge[] = {{"a", 1, 300, UINT64_MAX / 2 + 1},
                                     {"a", 1, 200, UINT64_MAX / 2 + 6}};
    stg_index_shard_table t3[1] = {{true, huge, 2}};
    r = check(t3, &ix, json); /* the wrapped sum would be 5 */
    long at = tu_find(r, STG_INDEX_TOTAL_SIZE_MISMATCH);
    ck_assert_msg(at >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    ck_assert(strstr(stg_report_at(r, (size_t)at)->message, "overflowed") != NULL);
    ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset, (uint64_t)(strstr(json, "5}") - json));
    stg_index_release(&ix);
    stg_report_free(r);
}
END_TEST

/* NULL limits mean the defaults: nesting at the default max_json_depth passes, one more level
 * is json_too_deep at the bracket that goes past it. */
START_TEST(test_default_limits)
{
    stg_limits def;
    stg_limits_default(&def);
    int limit = (int)def.max_json_depth;
    ck_assert_int_lt(limit, 500);
    static char json[1024];
    for (int depth = limit; depth <= limit + 1; depth++) {
        /* the top-level object, "metadata"'s object, then depth - 2 arrays */
        size_t n = (size_t)snprintf(json, sizeof json, "{\"metadata\":{\"x\":");
        for (int i = 0; i < depth - 2; i++) {
            json[n++] = '[';
        }
        for (int i = 0; i < depth - 2; i++) {
            json[n++] = ']';
        }
        n += (size_t)snprintf(json + n, sizeof json - n, "},\"weight_map\":{}}");
        stg_report *r = stg_report_new(NULL);
        stg_index ix;
        stg_index_init(&ix);
        bool ok = stg_index_parse((const uint8_t *)json, n, NULL, r, &ix);
        stg_report_finish(r);
        if (depth == limit) {
            ck_assert_msg(ok && stg_report_count(r) == 0, "%s", tu_describe(r));
        } else {
            ck_assert(!ok);
            long at = tu_find(r, STG_JSON_TOO_DEEP);
            ck_assert_msg(at >= 0, "%s", tu_describe(r));
            ck_assert_uint_eq(stg_report_at(r, (size_t)at)->offset,
                              (uint64_t)(strchr(json, '[') - json) + (uint64_t)(depth - 3));
        }
        stg_index_release(&ix);
        stg_report_free(r);
    }
}
END_TEST

/* A tensor an earlier shard lists several times and a later shard lists once more: one
 * index_tensor_duplicate, at the later shard's key, with that shard as member. */
START_TEST(test_duplicate_over_copies)
{
    const char *json = "{\"weight_map\":{\"a\":\"s0\",\"b\":\"s1\"}}";
    stg_index_shard_tensor s0[] = {{"a", 1, 300, 1}, {"a", 1, 100, 1}, {"a", 1, 200, 1}};
    stg_index_shard_tensor s1[] = {{"b", 1, 80, 1}, {"a", 1, 50, 1}};
    stg_index_shard_table t[2] = {{true, s0, 3}, {true, s1, 2}};
    stg_index ix;
    stg_report *r = check(t, &ix, json);
    long d = tu_find(r, STG_INDEX_TENSOR_DUPLICATE);
    ck_assert_msg(d >= 0 && stg_report_count(r) == 1, "%s", tu_describe(r));
    ck_assert_uint_eq(stg_report_at(r, (size_t)d)->offset, 50);
    ck_assert_str_eq(stg_report_at(r, (size_t)d)->member, "s1");
    ck_assert_str_eq(stg_report_at(r, (size_t)d)->tensor, "a");
    stg_index_release(&ix);
    stg_report_free(r);
}
END_TEST

static Suite *index_suite(void)
{
    Suite *s = suite_create("index");
    TCase *tc = tcase_create("index");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_codes, 0, (int)NCASES);
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_name_rule);
    tcase_add_test(tc, test_shards);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_escaped_keys);
    tcase_add_test(tc, test_trailing_after_whitespace);
    tcase_add_test(tc, test_name_limit);
    tcase_add_test(tc, test_memory_budget_sweep);
    tcase_add_test(tc, test_shards_edges);
    tcase_add_test(tc, test_default_limits);
    tcase_add_test(tc, test_duplicate_over_copies);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(index_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
