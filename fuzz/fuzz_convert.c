/* Target: stg_convert_buffer (convert/: the restricted evaluator, the input framing, the plan
 * and the writer). Seeds: corpus/convert/ (torch.save zip and legacy files). Dict:
 * fuzz/convert.dict.
 * Needs: loader (the scan before conversion, SHA-256)
 *
 * Input: the bytes converted, with small limits (output at most 4 MiB, pickle stack 4096,
 * memo 4096) so that runs stay fast. Properties checked (abort on failure):
 *   - an output is only ever returned with STG_OK, and then it is safetensors that the strict
 *     validator finds ok, of exactly the length its header declares plus its data;
 *   - a buffer the scan calls invalid or unsafe (verdict worse than warn) is never converted;
 *   - a refusal (STG_E_INVALID) carries at least one error finding;
 *   - the same bytes convert to the same bytes twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "compare.h"

static stg_status convert(const uint8_t *data, size_t size, void **out, size_t *len,
                          stg_report **rep)
{
    stg_convert_options o;
    stg_convert_options_default(&o);
    o.max_output = (uint64_t)4 << 20;
    o.scan.limits.max_pickle_stack = 4096;
    o.scan.limits.max_pickle_memo = 4096;
    o.sha256 = true;
    return stg_convert_buffer(data, size, &o, out, len, rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *out = NULL, *again = NULL;
    size_t len = 0, len2 = 0;
    stg_report *rep = NULL, *rep2 = NULL;
    stg_status st = convert(data, size, &out, &len, &rep);
    if ((st == STG_OK) != (out != NULL)) {
        abort();
    }
    if (st == STG_E_INVALID && !stg_fuzz_refusal_explained(rep)) {
        abort();
    }
    if (st == STG_OK) {
        stg_limits lim;
        stg_limits_default(&lim);
        stg_report *v = NULL;
        if (stg_validate_buffer(out, len, &lim, &v) != STG_OK ||
            stg_report_verdict(v) != STG_VERDICT_OK) {
            abort();
        }
        stg_report_free(v);
        const uint8_t *o = out;
        uint64_t n = 0;
        for (int i = 0; i < 8; i++) {
            n |= (uint64_t)o[i] << (8 * i);
        }
        if (len < 8 || n > len - 8 || n % 8 != 0) {
            abort();
        }
        stg_scan_options so;
        stg_scan_options_default(&so);
        so.digest = false;
        stg_report *s = NULL;
        if (stg_scan_buffer(data, size, NULL, &so, &s) != STG_OK ||
            stg_report_verdict(s) > STG_VERDICT_WARN) {
            abort();
        }
        stg_report_free(s);
        if (convert(data, size, &again, &len2, &rep2) != STG_OK || len2 != len ||
            memcmp(again, out, len) != 0) {
            abort();
        }
    }
    stg_convert_free(out);
    stg_convert_free(again);
    stg_report_free(rep);
    stg_report_free(rep2);
    return 0;
}
