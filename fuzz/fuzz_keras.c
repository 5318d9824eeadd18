/* Target: stg_keras_check_config and stg_keras_sniff_config (validator/keras.c over
 * parser/json.c). Seeds: corpus/keras/. Dict: fuzz/keras.dict.
 * Properties checked (abort on failure):
 *   - the same bytes give the same findings twice (count, codes, offsets) and the same summary;
 *   - every finding's offset lies inside the input (or at its end), shifted by the base given;
 *   - a config whose top level is a model (class_name and config) is one the sniff accepts;
 *   - the verdict is never ok when the walk reported keras_config_malformed or a limit;
 *   - a small memory cap never turns a file into a wrong success. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "validator/keras.h"
#include "validator/report.h"

static void CHECK(bool holds)
{
    if (!holds) {
        abort();
    }
}

static stg_report *run(const uint8_t *data, size_t size, uint64_t base, const stg_limits *lim,
                       stg_keras_summary *sum)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return NULL;
    }
    stg_status st = stg_keras_check_config(data, size, base, lim, r, sum);
    CHECK(st == STG_OK || st == STG_E_NOMEM);
    stg_report_finish(r);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_keras_summary sa, sb;
    stg_report *a = run(data, size, 0, &lim, &sa);
    stg_report *b = run(data, size, 1000, &lim, &sb);
    if (a == NULL || b == NULL) {
        stg_report_free(a);
        stg_report_free(b);
        return 0;
    }
    CHECK(stg_report_count(a) == stg_report_count(b));
    CHECK(sa.objects == sb.objects && sa.layers == sb.layers && sa.top_is_model == sb.top_is_model);
    CHECK(strcmp(sa.top_class, sb.top_class) == 0);
    bool failing = false;
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *fa = stg_report_at(a, i), *fb = stg_report_at(b, i);
        CHECK(fa->code == fb->code);
        CHECK(!fa->has_offset || (fa->offset <= size && fb->offset == fa->offset + 1000));
        failing = failing || fa->code == STG_KERAS_CONFIG_MALFORMED ||
                  fa->code == STG_LIMIT_EXCEEDED;
    }
    CHECK(!failing || stg_report_verdict(a) != STG_VERDICT_OK);
    if (sa.top_is_model && stg_report_count(a) == 0) {
        CHECK(stg_keras_sniff_config(data, size));
    }
    stg_report_free(a);
    stg_report_free(b);
    lim.max_memory = 2048 + (size & 0x3FFF); /* the cap refuses somewhere in the walk */
    stg_report *c = run(data, size, 0, &lim, &sb);
    if (c != NULL) {
        CHECK(stg_report_verdict(c) != STG_VERDICT_OK || stg_report_count(c) == 0 ||
              !stg_report_has(c, STG_LIMIT_EXCEEDED));
        stg_report_free(c);
    }
    return 0;
}
