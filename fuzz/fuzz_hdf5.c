/* Target: stg_hdf5_read_root (parser/hdf5.c) and stg_keras_check_hdf5 (validator/keras.c).
 * Seeds: corpus/hdf5/. Dict: fuzz/hdf5.dict.
 * Properties checked (abort on failure):
 *   - the same bytes read the same way twice (result, failure offset, attribute count, the
 *     attributes' names and values);
 *   - every attribute name and value the reader returns lies inside the buffer, a failure's
 *     offset inside it (or at its end), and an OK read's declared end of file within it;
 *   - the Keras rules over the same bytes are never ok when the reader failed (fails closed),
 *     and name hdf5_malformed or hdf5_unsupported then. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/hdf5.h"
#include "validator/keras.h"
#include "validator/report.h"

typedef struct seen {
    const uint8_t *data;
    size_t size;
    uint64_t digest; /* of the names and values, in order */
    uint32_t count;
} seen;

static void CHECK(bool holds)
{
    if (!holds) {
        abort();
    }
}

static void inside(const seen *s, const uint8_t *p, size_t n)
{
    CHECK(n == 0 || (p >= s->data && (size_t)(p - s->data) <= s->size &&
                     n <= s->size - (size_t)(p - s->data)));
}

static void on_attr(void *arg, const stg_hdf5_attr *a)
{
    seen *s = arg;
    inside(s, a->name, a->name_len);
    if (a->is_string) {
        inside(s, a->value, a->value_len);
        CHECK(a->value_len == 0 || a->value_offset == (uint64_t)(a->value - s->data));
    }
    for (size_t i = 0; i < a->name_len; i++) {
        s->digest = s->digest * 131 + a->name[i];
    }
    for (size_t i = 0; a->is_string && i < a->value_len; i++) {
        s->digest = s->digest * 137 + a->value[i];
    }
    s->count++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    seen a = {data, size, 0, 0}, b = {data, size, 0, 0};
    stg_hdf5_file fa, fb;
    stg_hdf5_result ra = stg_hdf5_read_root(data, size, &fa, on_attr, &a);
    stg_hdf5_result rb = stg_hdf5_read_root(data, size, &fb, on_attr, &b);
    CHECK(ra == rb && fa.fail_offset == fb.fail_offset && a.count == b.count &&
          a.digest == b.digest && fa.attributes == a.count);
    CHECK(ra == STG_HDF5R_OK ? fa.eof <= size : fa.fail_offset <= size && fa.fail_what != NULL);
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    if (r == NULL) {
        return 0;
    }
    stg_status st = stg_keras_check_hdf5(data, size, &lim, r, NULL);
    CHECK(st == STG_OK || st == STG_E_NOMEM);
    stg_report_finish(r);
    if (ra != STG_HDF5R_OK) {
        CHECK(stg_report_verdict(r) != STG_VERDICT_OK);
        CHECK(stg_report_has(r, ra == STG_HDF5R_MALFORMED ? STG_HDF5_MALFORMED
                                                          : STG_HDF5_UNSUPPORTED));
    }
    stg_report_free(r);
    return 0;
}
