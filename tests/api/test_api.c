/* The C API traps a new user hit (issue 24, item 4): stg_tensor.name is NUL-terminated (it
 * pointed into the header, so printf("%s") showed the rest of it) on every door that hands out
 * tensors (stg_file_open, the stream); stg_status_message says what a status means; and
 * stg_report_to_json gives the CLI's JSON Lines file record from C, snprintf-style. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stguard/stguard.h"
#include "testutil.h"

/* Two tensors whose names touch the rest of the header, and one holding NUL (\u0000). */
#define HDR                                                                  \
    "{\"ab\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"       \
    "\"c\\u0000d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}," \
    "\"efg\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]}}"

/* compat: a name holding NUL is a warning there (strict rejects it) */
static const stg_limits *compat(void)
{
    static stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = STG_PROFILE_COMPAT;
    return &lim;
}

static void check_names(const stg_tensor *a, const stg_tensor *cd, const stg_tensor *efg)
{
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(cd);
    ck_assert_ptr_nonnull(efg);
    ck_assert_uint_eq(a->name_len, 2);
    ck_assert_str_eq(a->name, "ab"); /* compares up to the NUL: the header's '"' was next */
    ck_assert_uint_eq(efg->name_len, 3);
    ck_assert_str_eq(efg->name, "efg");
    ck_assert_uint_eq(cd->name_len, 3);
    ck_assert_mem_eq(cd->name, "c\0d", 4); /* the embedded NUL, then the terminating one */
}

START_TEST(test_tensor_names_nul_terminated_file)
{
    size_t pad = (8 - (strlen(HDR) % 8)) % 8, len;
    uint8_t *st = tu_st_file(HDR, pad, "xyz", 3, &len);
    char *dir = tu_tempdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    ck_assert_int_eq(tu_write_file(path, st, len), 0);
    stg_file *f = NULL;
    ck_assert_int_eq(stg_file_open(path, compat(), &f, NULL), STG_OK);
    check_names(stg_file_tensor_find(f, "ab", 2), stg_file_tensor_find(f, "c\0d", 3),
                stg_file_tensor_find(f, "efg", 3));
    stg_file_close(f);
    free(st);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(test_tensor_names_nul_terminated_stream)
{
    size_t pad = (8 - (strlen(HDR) % 8)) % 8, len;
    uint8_t *st = tu_st_file(HDR, pad, "xyz", 3, &len);
    stg_stream *s = NULL;
    ck_assert_int_eq(stg_stream_new(compat(), NULL, &s), STG_OK);
    ck_assert_int_eq(stg_stream_feed(s, st, len), STG_OK);
    stg_report *r = NULL;
    ck_assert_int_eq(stg_stream_finish(s, &r), STG_OK);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    ck_assert_uint_eq(stg_stream_tensor_count(s), 3);
    check_names(stg_stream_tensor_at(s, 0), stg_stream_tensor_at(s, 1), stg_stream_tensor_at(s, 2));
    stg_report_free(r);
    stg_stream_free(s);
    free(st);
}
END_TEST

START_TEST(test_status_message)
{
    static const stg_status all[] = {STG_OK,
                                     STG_E_TRUNCATED,
                                     STG_E_HEADER_LEN,
                                     STG_E_JSON_SYNTAX,
                                     STG_E_JSON_DUP_KEY,
                                     STG_E_INT_OVERFLOW,
                                     STG_E_OFFSET_RANGE,
                                     STG_E_UTF8,
                                     STG_E_INVALID,
                                     STG_E_LIMIT_DEPTH,
                                     STG_E_LIMIT_MEMORY,
                                     STG_E_LIMIT_TENSORS,
                                     STG_E_LIMIT,
                                     STG_E_BAD_ARG,
                                     STG_E_INCOMPLETE,
                                     STG_E_STATE,
                                     STG_E_NOT_FOUND,
                                     STG_E_RANGE,
                                     STG_E_STRUCT_VERSION,
                                     STG_E_IO,
                                     STG_E_CRYPTO,
                                     STG_E_NOMEM,
                                     STG_FILE_CHANGED};
    const char *unknown = stg_status_message((stg_status)77);
    ck_assert_ptr_nonnull(unknown);
    ck_assert_ptr_nonnull(strstr(unknown, "unknown"));
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *m = stg_status_message(all[i]);
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(strncmp(m, "STG_", 4) != 0 && strcmp(m, unknown) != 0, "%s: %s",
                      stg_status_name(all[i]), m);
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(m, stg_status_message(all[j]));
        }
    }
    ck_assert_ptr_nonnull(strstr(stg_status_message(STG_E_IO), "I/O"));
}
END_TEST

/* A protocol 2 pickle calling os.system: findings with a module and a name, and a global. */
static const uint8_t os_system[] = "\x80\x02\x63os\nsystem\nX\x02\x00\x00\x00id\x85R.";

START_TEST(test_report_to_json)
{
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(os_system, sizeof os_system - 1, "model.pkl", NULL, &r),
                     STG_OK);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    size_t n = 0;
    ck_assert_int_eq(stg_report_to_json(r, "dir/\xff.pkl", NULL, 0, &n), STG_OK);
    char *json = malloc(n + 1);
    size_t again = 0;
    ck_assert_int_eq(stg_report_to_json(r, "dir/\xff.pkl", json, n + 1, &again), STG_OK);
    ck_assert_uint_eq(again, n);
    ck_assert_uint_eq(strlen(json), n);
    static const char start[] = "{\"type\":\"file\",\"schema\":1,\"path\":\"dir/\xEF\xBF\xBD.pkl\","
                                "\"path_hex\":\"6469722fff2e706b6c\",\"blob\":null,";
    ck_assert_msg(strncmp(json, start, sizeof start - 1) == 0, "%s", json);
    ck_assert_ptr_nonnull(strstr(json, "\"verdict\":\"unsafe\""));
    ck_assert_ptr_nonnull(
        strstr(json, "\"module\":\"os\",\"name\":\"system\",\"global\":\"os.system\""));
    ck_assert_ptr_nonnull(strstr(json, "\"globals\":[{\"module\":\"os\",\"name\":\"system\","));
    ck_assert_int_eq(json[n - 1], '}');
    /* a short buffer gets a NUL-terminated prefix of the same bytes, and the same length */
    char small[16];
    ck_assert_int_eq(stg_report_to_json(r, "dir/\xff.pkl", small, sizeof small, &again), STG_OK);
    ck_assert_uint_eq(again, n);
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
    ck_assert_int_eq(memcmp(small, json, sizeof small - 1), 0);
    /* NULL path: the report's own, or "-" for a buffer */
    ck_assert_int_eq(stg_report_to_json(r, NULL, json, n + 1, &again), STG_OK);
    ck_assert_ptr_nonnull(strstr(json, "\"path\":\"-\",\"blob\":null"));
    ck_assert_int_eq(stg_report_to_json(NULL, NULL, NULL, 0, &again), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_report_to_json(r, NULL, NULL, 4, &again), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_report_to_json(r, NULL, NULL, 0, NULL), STG_E_BAD_ARG);
    free(json);
    stg_report_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_tensor_names_nul_terminated_file);
    tcase_add_test(tc, test_tensor_names_nul_terminated_stream);
    tcase_add_test(tc, test_status_message);
    tcase_add_test(tc, test_report_to_json);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
