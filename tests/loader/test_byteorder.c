/* Byte order of the tensor bytes the library hands out (docs/loaders.md, "Byte order"): they are
 * file order (little-endian), and stg_dtype_to_host turns them into host order. The same
 * assertions hold on a little-endian host (where the call only checks its arguments) and on a
 * big-endian one (the s390x preset under qemu, where it swaps): values are compared as host
 * values, never as bytes. stg_dtype_swap, the swap itself, is checked byte for byte on any host.
 * The example files are tools/make_examples.py's (corpus/examples/model.safetensors: linear.weight
 * 0.5 -1 2 0.25 1.5 -0.75, linear.bias 0.1 0.2; sharded/: layer0.weight 1 2, layer1.weight 3 4). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"
#include "validator/dtype.h"

START_TEST(test_swap_reverses_each_element)
{
    static const uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const struct {
        stg_dtype d;
        uint8_t want[8];
    } cases[] = {
        {STG_DTYPE_I16, {2, 1, 4, 3, 6, 5, 8, 7}},  {STG_DTYPE_BF16, {2, 1, 4, 3, 6, 5, 8, 7}},
        {STG_DTYPE_F16, {2, 1, 4, 3, 6, 5, 8, 7}},  {STG_DTYPE_F32, {4, 3, 2, 1, 8, 7, 6, 5}},
        {STG_DTYPE_U32, {4, 3, 2, 1, 8, 7, 6, 5}},  {STG_DTYPE_C64, {4, 3, 2, 1, 8, 7, 6, 5}},
        {STG_DTYPE_F64, {8, 7, 6, 5, 4, 3, 2, 1}},  {STG_DTYPE_I64, {8, 7, 6, 5, 4, 3, 2, 1}},
        {STG_DTYPE_U8, {1, 2, 3, 4, 5, 6, 7, 8}},   {STG_DTYPE_F8_E4M3, {1, 2, 3, 4, 5, 6, 7, 8}},
        {STG_DTYPE_BOOL, {1, 2, 3, 4, 5, 6, 7, 8}}, {STG_DTYPE_F4, {1, 2, 3, 4, 5, 6, 7, 8}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t b[8];
        memcpy(b, in, 8);
        ck_assert_int_eq(stg_dtype_swap(cases[i].d, b, 8), STG_OK);
        ck_assert_msg(memcmp(b, cases[i].want, 8) == 0, "%s", stg_dtype_name(cases[i].d));
        ck_assert_int_eq(stg_dtype_swap(cases[i].d, b, 8), STG_OK); /* twice: unchanged */
        ck_assert_msg(memcmp(b, in, 8) == 0, "%s twice", stg_dtype_name(cases[i].d));
    }
}
END_TEST

/* Little-endian encodings of known values become those values as the host reads them. */
START_TEST(test_to_host_gives_host_values)
{
    uint8_t b[16];
    tu_store_le(b, 0xfffe, 2); /* I16 -2 */
    tu_store_le(b + 2, 0x3c00, 2);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_I16, b, 4), STG_OK);
    int16_t i16[2];
    memcpy(i16, b, 4);
    ck_assert_int_eq(i16[0], -2);
    ck_assert_int_eq(i16[1], 0x3c00); /* F16 1.0 and BF16 bits take the same path as I16 */

    tu_store_le(b, 0xdeadbeefu, 4);
    tu_store_le(b + 4, 7, 4);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_U32, b, 8), STG_OK);
    uint32_t u32[2];
    memcpy(u32, b, 8);
    ck_assert_uint_eq(u32[0], 0xdeadbeefu);
    ck_assert_uint_eq(u32[1], 7);

    static const float f[4] = {0.5f, -1.0f, 3.0e38f, 1.0e-40f}; /* the last one subnormal */
    for (int i = 0; i < 4; i++) {
        tu_store_f32_le(b + 4 * i, f[i]);
    }
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_F32, b, 16), STG_OK);
    float got[4];
    memcpy(got, b, 16);
    ck_assert_int_eq(memcmp(got, f, 16), 0);

    /* complex64 (1.5, -2.25): two float32 halves, real first */
    tu_store_f32_le(b, 1.5f);
    tu_store_f32_le(b + 4, -2.25f);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_C64, b, 8), STG_OK);
    memcpy(got, b, 8);
    ck_assert(got[0] == 1.5f && got[1] == -2.25f);

    double d = -1234.5625, dgot;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    tu_store_le(b, bits, 8);
    tu_store_le(b + 8, (uint64_t)INT64_MIN, 8);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_F64, b, 8), STG_OK);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_I64, b + 8, 8), STG_OK);
    memcpy(&dgot, b, 8);
    ck_assert(dgot == d);
    int64_t i64;
    memcpy(&i64, b + 8, 8);
    ck_assert(i64 == INT64_MIN);
}
END_TEST

START_TEST(test_to_host_arguments)
{
    uint8_t b[4] = {1, 2, 3, 4};
    /* wrong on every host alike */
    ck_assert_int_eq(stg_dtype_to_host((stg_dtype)STG_DTYPE_COUNT, b, 4), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_F32, NULL, 4), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_F32, b, 3), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_C64, b, 4), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_dtype_swap(STG_DTYPE_F32, b, 3), STG_E_BAD_ARG);
    static const uint8_t same[4] = {1, 2, 3, 4};
    ck_assert_int_eq(memcmp(b, same, 4), 0); /* a refused call touches nothing */
    /* near misses: empty, whole elements, any length of bytes or packed types */
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_F32, NULL, 0), STG_OK);
    uint8_t whole[4] = {1, 2, 3, 4}; /* swapped on a big-endian host, so not b */
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_F32, whole, 4), STG_OK);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_U8, b, 3), STG_OK);
    ck_assert_int_eq(stg_dtype_to_host(STG_DTYPE_F6_E2M3, b, 3), STG_OK);
    ck_assert_int_eq(memcmp(b, same, 3), 0); /* bytes have no order to change */
}
END_TEST

static void assert_floats(const void *host, const float *want, size_t n, const char *what)
{
    float v[8];
    ck_assert_uint_le(n, 8);
    memcpy(v, host, n * 4);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(v[i] == want[i], "%s[%zu]: %g, want %g", what, i, (double)v[i],
                      (double)want[i]);
    }
}

/* A real file through each door that hands out bytes: the copying read, the mmap view. */
START_TEST(test_file_tensor_values)
{
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open(tu_src("corpus/examples/model.safetensors"), NULL, &f, NULL),
                     STG_OK);
    static const float weight[6] = {0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.75f};
    static const float bias[2] = {0.1f, 0.2f};
    const stg_tensor *w = stg_file_tensor_find(f, "linear.weight", 13);
    const stg_tensor *b = stg_file_tensor_find(f, "linear.bias", 11);
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(w->dtype, STG_DTYPE_F32);
    uint8_t buf[24];
    ck_assert_int_eq(stg_file_read_tensor(f, w, buf, sizeof buf), STG_OK);
    /* file order: the first value's little-endian bytes, whatever the host */
    uint8_t le[4];
    tu_store_f32_le(le, 0.5f);
    ck_assert_int_eq(memcmp(buf, le, 4), 0);
    ck_assert_int_eq(stg_dtype_to_host(w->dtype, buf, sizeof buf), STG_OK);
    assert_floats(buf, weight, 6, "read weight");
    /* the zero-copy view is file order too: copy it, then turn it */
    memcpy(buf, stg_file_tensor_data(f, b), 8);
    ck_assert_int_eq(stg_dtype_to_host(b->dtype, buf, 8), STG_OK);
    assert_floats(buf, bias, 2, "view bias");
    stg_file_close(f);
}
END_TEST

START_TEST(test_model_tensor_values)
{
    stg_model *m = NULL;
    ck_assert_int_eq(stg_model_open(tu_src("corpus/examples/sharded"), NULL, &m, NULL), STG_OK);
    static const float want[2][2] = {{1.0f, 2.0f}, {3.0f, 4.0f}};
    static const char *const names[2] = {"layer0.weight", "layer1.weight"};
    for (int i = 0; i < 2; i++) {
        const stg_tensor *t = stg_model_tensor_find(m, names[i], strlen(names[i]));
        ck_assert_ptr_nonnull(t);
        uint8_t buf[8];
        ck_assert_int_eq(stg_model_read_tensor(m, t, buf, sizeof buf), STG_OK);
        ck_assert_int_eq(stg_dtype_to_host(t->dtype, buf, sizeof buf), STG_OK);
        assert_floats(buf, want[i], 2, names[i]);
    }
    stg_model_close(m);
}
END_TEST

static Suite *byteorder_suite(void)
{
    Suite *s = suite_create("byteorder");
    TCase *tc = tcase_create("byteorder");
    tcase_add_test(tc, test_swap_reverses_each_element);
    tcase_add_test(tc, test_to_host_gives_host_values);
    tcase_add_test(tc, test_to_host_arguments);
    tcase_add_test(tc, test_file_tensor_values);
    tcase_add_test(tc, test_model_tensor_values);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(byteorder_suite());
}
