/* Target: stg_coreml_blob_check_buffer (a weight.bin's blob storage chain),
 * stg_coreml_manifest_names (Manifest.json) and stg_coreml_model_check (model.mlmodel), in
 * validator/coreml.c with parser/milblob.c. Seeds: corpus/coreml/. Dict: fuzz/coreml.dict.
 * Properties checked (abort on failure):
 *   - each check gives the same findings twice; every finding's offset lies inside the input
 *     (or at its end);
 *   - the blob walk reports at most one finding, and none means that every record it walked
 *     lies inside the buffer: a clean walk of a header counting n blobs never ends before
 *     64 + 64 n bytes;
 *   - a report with an error is never ok. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "validator/coreml.h"
#include "validator/report.h"

typedef void (*check_fn)(const uint8_t *buf, size_t len, stg_report *r);

static void manifest_check(const uint8_t *buf, size_t len, stg_report *r)
{
    static const char *const paths[] = {"com.apple.CoreML/weights"};
    if (stg_coreml_manifest_names(buf, len, paths, 1)) {
        stg_report_add(r, STG_FORMAT_UNKNOWN, STG_NO_OFFSET, "named"); /* a mark to compare */
    }
}

static stg_report *run(check_fn fn, const uint8_t *buf, size_t len)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    if (r == NULL) {
        return NULL;
    }
    fn(buf, len, r);
    stg_report_finish(r);
    return r;
}

static void same(check_fn fn, const uint8_t *buf, size_t len, size_t max_findings)
{
    stg_report *a = run(fn, buf, len), *b = run(fn, buf, len);
    if (a == NULL || b == NULL) {
        stg_report_free(a);
        stg_report_free(b);
        return;
    }
    size_t n = stg_report_count(a);
    if (n != stg_report_count(b) || n > max_findings) {
        abort();
    }
    bool error = false;
    for (size_t i = 0; i < n; i++) {
        const stg_finding *fa = stg_report_at(a, i), *fb = stg_report_at(b, i);
        if (fa->code != fb->code || fa->offset != fb->offset ||
            (fa->has_offset && fa->offset > len)) {
            abort();
        }
        error = error || fa->severity >= STG_SEV_ERROR;
    }
    if (error && stg_report_verdict(a) == STG_VERDICT_OK) {
        abort();
    }
    if (fn == stg_coreml_blob_check_buffer && n == 0 && len >= 4) {
        uint64_t count = (uint64_t)buf[0] | (uint64_t)buf[1] << 8 | (uint64_t)buf[2] << 16 |
                         (uint64_t)buf[3] << 24;
        if (len < 64 + 64 * count) {
            abort(); /* each record it accepted lies inside, one after the other */
        }
    }
    stg_report_free(a);
    stg_report_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    same(stg_coreml_blob_check_buffer, data, size, 1);
    same(manifest_check, data, size, 1);
    same(stg_coreml_model_check, data, size, 1);
    return 0;
}
