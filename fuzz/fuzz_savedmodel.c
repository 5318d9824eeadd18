/* Target: stg_tf_check_savedmodel and stg_tf_check_keras_metadata (validator/savedmodel.c over
 * parser/protobuf.c). Seeds: corpus/savedmodel/. Dict: fuzz/savedmodel.dict.
 * Properties checked (abort on failure):
 *   - the same bytes give the same findings twice (codes, offsets) and the same summary;
 *   - every finding's offset lies inside the input (or at its end);
 *   - a report with tf_savedmodel_malformed, or with an unsafe op, is never ok. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "validator/report.h"
#include "validator/savedmodel.h"

static void CHECK(bool holds)
{
    if (!holds) {
        abort();
    }
}

static void same_and_inside(const stg_report *a, const stg_report *b, size_t size)
{
    CHECK(stg_report_count(a) == stg_report_count(b));
    bool failing = false;
    for (size_t i = 0; i < stg_report_count(a); i++) {
        const stg_finding *fa = stg_report_at(a, i), *fb = stg_report_at(b, i);
        CHECK(fa->code == fb->code && fa->offset == fb->offset);
        CHECK(!fa->has_offset || fa->offset <= size);
        failing = failing || fa->code == STG_TF_SAVEDMODEL_MALFORMED ||
                  fa->code == STG_TF_OP_UNSAFE || fa->code == STG_KERAS_LAMBDA;
    }
    CHECK(!failing || stg_report_verdict(a) != STG_VERDICT_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r[4];
    stg_tf_summary s[2];
    for (int i = 0; i < 4; i++) {
        r[i] = stg_report_new(&lim);
        if (r[i] == NULL) {
            for (int j = 0; j < i; j++) {
                stg_report_free(r[j]);
            }
            return 0;
        }
    }
    CHECK(stg_tf_check_savedmodel(data, size, &lim, r[0], &s[0]) == STG_OK);
    CHECK(stg_tf_check_savedmodel(data, size, &lim, r[1], &s[1]) == STG_OK);
    CHECK(s[0].nodes == s[1].nodes && s[0].functions == s[1].functions &&
          s[0].meta_graphs == s[1].meta_graphs);
    stg_status m0 = stg_tf_check_keras_metadata(data, size, &lim, r[2]);
    stg_status m1 = stg_tf_check_keras_metadata(data, size, &lim, r[3]);
    CHECK(m0 == m1 && (m0 == STG_OK || m0 == STG_E_NOMEM));
    for (int i = 0; i < 4; i++) {
        stg_report_finish(r[i]);
    }
    same_and_inside(r[0], r[1], size);
    same_and_inside(r[2], r[3], size);
    for (int i = 0; i < 4; i++) {
        stg_report_free(r[i]);
    }
    return 0;
}
