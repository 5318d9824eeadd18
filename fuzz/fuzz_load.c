/* Target: stg_cv_load_buffer (convert/load.c: the scan and the restricted evaluation whose
 * values the Python package's load_pickle turns into objects). Seeds: corpus/load/ (torch.save
 * zip and legacy files, .npy, .npz, parameters, self-referencing and nested values). Dict:
 * fuzz/load.dict.
 * Needs: loader (the scan before the evaluation)
 *
 * Input: the bytes loaded, with small limits (pickle stack and memo 4096) so that runs stay
 * fast. Properties checked (abort on failure):
 *   - STG_OK exactly when a root value is set, and a report is set for STG_OK and STG_E_INVALID;
 *   - a refusal (STG_E_INVALID) carries at least one error finding;
 *   - STG_OK only when the scan's verdict on the same bytes is at worst warn;
 *   - every value reachable from the root (walked as the Python walk does, bounded) has a known
 *     kind, every container's items are set, and every tensor is a view inside its storage's
 *     numel elements, over a storage whose bytes are there (numel x elsize of them): what
 *     numpy's as_strided in load_pickle trusts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert/load.h"
#include "stguard/stguard.h"
#include "compare.h"

#define WALK_MAX 4096u

static void check_tensor(const stg_cv_tensor *t)
{
    const stg_cv_storage *s = t->storage;
    if (s == NULL || s->data == NULL || s->elsize == 0 || t->rank > STG_CV_RANK_MAX) {
        abort();
    }
    if (s->numel > s->data_len / s->elsize) {
        abort(); /* fewer bytes than numel x elsize */
    }
    uint64_t last = t->storage_offset;
    for (uint32_t i = 0; i < t->rank; i++) {
        if (t->shape[i] == 0) {
            return;
        }
        uint64_t step;
        if (__builtin_mul_overflow(t->shape[i] - 1, t->stride[i], &step) ||
            __builtin_add_overflow(last, step, &last)) {
            abort();
        }
    }
    if (last >= s->numel) {
        abort();
    }
    /* touch the first and last element's bytes: ASan sees a read outside the storage */
    volatile uint8_t sink = s->data[t->storage_offset * s->elsize];
    sink = s->data[last * s->elsize + s->elsize - 1];
    (void)sink;
}

static void walk(const stg_cv *root)
{
    const stg_cv *stack[WALK_MAX];
    size_t sp = 0, visits = 0;
    stack[sp++] = root;
    while (sp > 0 && visits++ < 4 * WALK_MAX) {
        const stg_cv *v = stack[--sp];
        if (v == NULL) {
            abort();
        }
        switch ((stg_cv_kind)v->kind) {
        case STG_CV_NONE:
        case STG_CV_BOOL:
        case STG_CV_INT:
        case STG_CV_FLOAT:
        case STG_CV_STR:
        case STG_CV_BYTES:
        case STG_CV_GLOBAL:
        case STG_CV_STORAGE: break;
        case STG_CV_TENSOR: check_tensor(v->u.t); break;
        case STG_CV_TUPLE:
        case STG_CV_LIST:
        case STG_CV_DICT: {
            uint64_t n = v->kind == STG_CV_DICT ? 2 * (uint64_t)v->n : v->n;
            for (uint64_t i = 0; i < n && sp < WALK_MAX; i++) {
                stack[sp++] = v->u.items[i];
            }
            break;
        }
        default: abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_scan_options o;
    stg_scan_options_default(&o);
    o.limits.max_pickle_stack = 4096;
    o.limits.max_pickle_memo = 4096;
    stg_cv_eval ev;
    stg_cv *root = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_cv_load_buffer(data, size, NULL, &o, &ev, &root, &rep);
    if ((st == STG_OK) != (root != NULL) ||
        ((st == STG_OK || st == STG_E_INVALID) && rep == NULL)) {
        abort();
    }
    if (st == STG_E_INVALID && !stg_fuzz_refusal_explained(rep)) {
        abort();
    }
    if (st == STG_OK) {
        stg_report *s = NULL;
        o.digest = false;
        if (stg_scan_buffer(data, size, NULL, &o, &s) != STG_OK ||
            stg_report_verdict(s) > STG_VERDICT_WARN) {
            abort();
        }
        stg_report_free(s);
        walk(root);
    }
    stg_cv_free(&ev);
    stg_report_free(rep);
    return 0;
}
