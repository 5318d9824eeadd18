/* Target: the tokenizer file rules (validator/tokenizer.c: SentencePiece over parser/protobuf.c,
 * tiktoken, vocab.txt, merges.txt) and the legacy GGML reader (parser/ggml_legacy.c), each run
 * on the same bytes. Seeds: corpus/tokenizer/.
 * Properties checked (abort on failure):
 *   - every check runs (STG_OK; STG_E_NOMEM only with the memory it was refused) and gives the
 *     same findings twice;
 *   - every finding's offset lies inside the buffer (or at its end);
 *   - a report with an error finding is not ok;
 *   - a legacy GGML magic is only found at a buffer that starts with it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/ggml_legacy.h"
#include "validator/report.h"
#include "validator/tokenizer.h"

static size_t run(int which, const uint8_t *data, size_t size, const stg_limits *lim,
                  uint64_t *last_offset)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return 0;
    }
    stg_status st = which == 0   ? stg_spm_check(data, size, lim, r)
                    : which == 1 ? stg_tiktoken_check(data, size, r)
                    : which == 2 ? stg_vocab_check(data, size, r)
                                 : stg_merges_check(data, size, r);
    if (st != STG_OK && !(st == STG_E_NOMEM && r->out_of_memory)) {
        abort();
    }
    stg_report_finish(r);
    size_t n = stg_report_count(r);
    *last_offset = 0;
    bool errors = false;
    for (size_t i = 0; i < n; i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->has_offset && f->offset > size) {
            abort();
        }
        *last_offset = f->has_offset ? f->offset : 0;
        errors = errors || f->severity >= STG_SEV_ERROR;
    }
    if (errors && stg_report_verdict(r) == STG_VERDICT_OK) {
        abort();
    }
    stg_report_free(r);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_limits lim;
    stg_limits_default(&lim);
    lim.max_metadata_entries = 1 + (size & 0x3F); /* the piece table's cap */
    for (int which = 0; which < 4; which++) {
        uint64_t a = 0, b = 0;
        if (run(which, data, size, &lim, &a) != run(which, data, size, &lim, &b) || a != b) {
            abort();
        }
    }
    stg_ggml_legacy g;
    if (stg_ggml_legacy_read(data, size, &g) &&
        (size < STG_GGML_MAGIC_LEN || g.kind == NULL || memcmp(data + 2, "gg", 2) != 0)) {
        abort();
    }
    return 0;
}
