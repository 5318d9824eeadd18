/* Target: stg_sig_bundle_parse and stg_sig_statement_parse (parser/sigbundle.c over
 * parser/json_tree.c and parser/base64.c). Seeds: corpus/signature/. Dict: fuzz/signature.dict.
 * The input is read as a bundle, its decoded payload (when it reads) as a statement, and the
 * input itself as a statement too, so both readers see fuzzed bytes directly.
 * Properties checked (abort on failure):
 *   - the same bytes read the same way twice (result, offset, message, lengths);
 *   - a failure's offset lies inside the input or at its end, and has a message;
 *   - every blob and name the readers return lies inside the input or the arena's blocks and
 *     fits the counts and caps of sigbundle.h;
 *   - a smaller memory budget never turns a refusal into a success (it may only fail with
 *     STG_SIG_MEMORY where the larger one read). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/sigbundle.h"

static void check_problem(const stg_sig_problem *why, stg_sig_error e, size_t size)
{
    if (e != STG_SIG_OK && (why->what == NULL || why->offset > size)) {
        abort();
    }
}

static size_t statement(const uint8_t *data, size_t size, size_t cap, stg_sig_error *e,
                        stg_sig_problem *why)
{
    stg_arena a;
    stg_arena_init(&a, cap);
    stg_sig_statement st;
    *e = stg_sig_statement_parse(data, size, 64, &a, &st, why);
    check_problem(why, *e, size);
    size_t sum = 0;
    if (*e == STG_SIG_OK) {
        if (st.resource_count > 64 || st.ignore_count > STG_SIG_IGNORE_MAX) {
            abort();
        }
        for (size_t i = 0; i < st.resource_count; i++) {
            if (st.resources[i].offset >= size || st.resources[i].name_len > size) {
                abort();
            }
            sum += st.resources[i].name_len + st.resources[i].digest[0];
        }
        for (size_t i = 0; i < st.ignore_count; i++) {
            if (st.ignore[i].offset >= size || st.ignore[i].len > size) {
                abort();
            }
            sum += st.ignore[i].len;
        }
    } else if (st.resource_count != 0 || st.resources != NULL) {
        abort(); /* a failed read hands out nothing */
    }
    stg_arena_release(&a);
    return sum;
}

static size_t bundle(const uint8_t *data, size_t size, size_t cap, stg_sig_error *e,
                     stg_sig_problem *why, stg_sig_error *st_e)
{
    stg_arena a;
    stg_arena_init(&a, cap);
    stg_sig_bundle b;
    *e = stg_sig_bundle_parse(data, size, &a, &b, why);
    check_problem(why, *e, size);
    size_t sum = 0;
    *st_e = STG_SIG_OK;
    if (*e == STG_SIG_OK) {
        /* decoded base64 is 3/4 of its text at most */
        if (b.payload.len > size || b.signature.len > size || b.cert_count > STG_SIG_CERTS_MAX ||
            b.signature_count == 0 || b.payload.offset >= size || b.hint.len > size) {
            abort();
        }
        for (size_t i = 0; i < b.cert_count; i++) {
            if (b.certs[i].len == 0 || b.certs[i].len > size || b.certs[i].offset >= size) {
                abort();
            }
            sum += b.certs[i].len;
        }
        sum += b.payload.len + b.signature.len;
        stg_sig_problem w2;
        sum += statement(b.payload.data, b.payload.len, cap, st_e, &w2);
    }
    stg_arena_release(&a);
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stg_sig_error e1, e2, s1, s2;
    stg_sig_problem w1, w2;
    size_t n1 = bundle(data, size, 1u << 22, &e1, &w1, &s1);
    size_t n2 = bundle(data, size, 1u << 22, &e2, &w2, &s2);
    if (e1 != e2 || n1 != n2 || s1 != s2 ||
        (e1 != STG_SIG_OK && (w1.offset != w2.offset || strcmp(w1.what, w2.what) != 0))) {
        abort();
    }
    stg_sig_error small_e, small_s;
    stg_sig_problem ws;
    (void)bundle(data, size, 8192, &small_e, &ws, &small_s);
    if ((small_e != e1 && small_e != STG_SIG_MEMORY) ||
        (small_e == STG_SIG_OK && small_s != s1 && small_s != STG_SIG_MEMORY)) {
        abort();
    }
    stg_sig_error t1, t2;
    size_t m1 = statement(data, size, 1u << 22, &t1, &w1);
    size_t m2 = statement(data, size, 1u << 22, &t2, &w2);
    if (t1 != t2 || m1 != m2) {
        abort();
    }
    return 0;
}
