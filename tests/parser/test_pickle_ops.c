/* parser/pickle_ops.def, the one pickle opcode table: every byte against CPython's pickletools
 * (name, what follows the byte and its width, protocol), then the walker (parser/pickle.c) and
 * the converter's evaluator (convert/eval.c) reading each argument at exactly the table's width:
 * one byte short is a truncated argument at the opcode, the full width is not. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/eval.h"
#include "parser/pickle.h"
#include "testutil.h"

/* pickletools' ArgumentDescriptor.n: a fixed size >= 0, or how the size is found. */
enum {
    PT_NO_ARG = -9, /* the opcode has no argument (ours, not pickletools') */
    PT_UP_TO_NEWLINE = -1,
    PT_TAKEN_FROM_ARGUMENT1 = -2,
    PT_TAKEN_FROM_ARGUMENT4 = -3,
    PT_TAKEN_FROM_ARGUMENT4U = -4,
    PT_TAKEN_FROM_ARGUMENT8U = -5
};

typedef struct pt_row {
    int present;
    char name[32];
    int n;
    int proto;
} pt_row;

/* pickletools' table, one row per opcode byte; the count read. Debian's python3 is what the
 * suite's oracles run on (tools/setup-debian.sh): without it this test fails. */
static size_t read_pickletools(pt_row rows[256])
{
    static const char cmd[] =
        "/usr/bin/python3 -c 'import pickletools\n"
        "for o in pickletools.opcodes:\n"
        "    print(ord(o.code), o.name, -9 if o.arg is None else o.arg.n, o.proto)'";
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run /usr/bin/python3");
    memset(rows, 0, 256 * sizeof rows[0]);
    size_t count = 0;
    unsigned byte;
    char name[32];
    int n, proto;
    while (fscanf(p, "%u %31s %d %d", &byte, name, &n, &proto) == 4) {
        ck_assert_uint_lt(byte, 256);
        ck_assert_msg(!rows[byte].present, "byte 0x%02x twice", byte);
        rows[byte].present = 1;
        memcpy(rows[byte].name, name, sizeof name);
        rows[byte].n = n;
        rows[byte].proto = proto;
        count++;
    }
    ck_assert_int_eq(pclose(p), 0);
    return count;
}

/* What pickletools' n says of our (arg, width). */
static int pt_n_of(const stg_pickle_opinfo *info)
{
    switch (info->arg) {
    case STG_PICKLE_ARG_NONE: return PT_NO_ARG;
    case STG_PICKLE_ARG_FIXED: return info->width;
    case STG_PICKLE_ARG_LINE: return PT_UP_TO_NEWLINE;
    case STG_PICKLE_ARG_LEN:
        return info->width == 1   ? PT_TAKEN_FROM_ARGUMENT1
               : info->width == 4 ? PT_TAKEN_FROM_ARGUMENT4U
               : info->width == 8 ? PT_TAKEN_FROM_ARGUMENT8U
                                  : -100;
    case STG_PICKLE_ARG_SLEN: return info->width == 4 ? PT_TAKEN_FROM_ARGUMENT4 : -100;
    }
    return -100;
}

START_TEST(test_table_is_pickletools)
{
    pt_row rows[256];
    size_t count = read_pickletools(rows);
    ck_assert_uint_ge(count, 68); /* protocols 0-5 */
    size_t ours = 0;
    for (unsigned b = 0; b < 256; b++) {
        const stg_pickle_opinfo *info = stg_pickle_opinfo_of((uint8_t)b);
        ck_assert_msg((info != NULL) == (rows[b].present != 0), "byte 0x%02x: ours %d, CPython %d",
                      b, info != NULL, rows[b].present);
        if (info == NULL) {
            ck_assert_str_eq(stg_pickle_opcode_name((uint8_t)b), "?");
            continue;
        }
        ours++;
        ck_assert_str_eq(info->name, rows[b].name);
        ck_assert_str_eq(stg_pickle_opcode_name((uint8_t)b), rows[b].name);
        ck_assert_msg(pt_n_of(info) == rows[b].n, "%s: argument %d/%u is pickletools' n %d",
                      info->name, (int)info->arg, info->width, rows[b].n);
        ck_assert_msg(info->proto == rows[b].proto, "%s: protocol %u, CPython %d", info->name,
                      info->proto, rows[b].proto);
    }
    ck_assert_uint_eq(ours, count);
}
END_TEST

/* "N" (a value to work on), then op and n zero bytes of its argument. */
static size_t with_arg(uint8_t *buf, uint8_t op, size_t n)
{
    buf[0] = 'N';
    buf[1] = op;
    memset(buf + 2, 0, n);
    return 2 + n;
}

static const stg_pickle_limits walk_limits = {1000, 1000, 1 << 20, 4, 0};

/* The walker's message and offset for buf. */
static const char *walk_error(const uint8_t *buf, size_t len, uint64_t *offset)
{
    stg_pickle_walker w;
    stg_pickle_init(&w, &walk_limits, NULL);
    size_t end = 0;
    stg_pickle_status st = stg_pickle_walk(&w, buf, len, 0, &end);
    ck_assert_int_ne(st, STG_PW_STOP); /* nothing here ends in STOP */
    const char *msg = w.err_msg;
    *offset = w.err_offset;
    stg_pickle_free(&w);
    return msg != NULL ? msg : "";
}

START_TEST(test_walker_reads_the_table_width)
{
    static const char truncated[] = "the argument runs past the end of the data";
    unsigned checked = 0;
    for (unsigned b = 0; b < 256; b++) {
        const stg_pickle_opinfo *info = stg_pickle_opinfo_of((uint8_t)b);
        if (info == NULL || info->width == 0) {
            continue;
        }
        uint8_t buf[16];
        uint64_t off;
        size_t len = with_arg(buf, (uint8_t)b, info->width - 1u);
        const char *msg = walk_error(buf, len, &off);
        ck_assert_msg(strcmp(msg, truncated) == 0 && off == 1, "%s short: %s at %llu", info->name,
                      msg, (unsigned long long)off);
        len = with_arg(buf, (uint8_t)b, info->width);
        msg = walk_error(buf, len, &off);
        ck_assert_msg(strcmp(msg, truncated) != 0 || off != 1, "%s whole: %s at %llu", info->name,
                      msg, (unsigned long long)off);
        checked++;
    }
    ck_assert_uint_eq(checked, 24); /* 13 FIXED, 11 LEN/SLEN */
}
END_TEST

/* The converter's message for buf. */
static const char *eval_error(const uint8_t *buf, size_t len, uint64_t *offset)
{
    stg_cv_limits lim;
    stg_cv_limits_from(NULL, &lim);
    stg_cv_eval ev;
    stg_cv_init(&ev, &lim);
    stg_cv *root = NULL;
    size_t end = 0;
    ck_assert(!stg_cv_run(&ev, buf, len, 0, &root, &end)); /* nothing here ends in STOP */
    const char *msg = ev.err.what != NULL ? ev.err.what : "";
    *offset = ev.err.offset;
    stg_cv_free(&ev);
    return msg;
}

/* Every FIXED opcode the converter reads: one byte short it says so at the opcode (PROTO: no
 * known protocol), the whole width it reads on. */
START_TEST(test_converter_reads_the_table_width)
{
    static const uint8_t fixed_ops[] = {0x80, 0x95, 'J', 'K', 'M', 'q', 'r', 'h', 'j'};
    for (size_t i = 0; i < sizeof fixed_ops; i++) {
        const stg_pickle_opinfo *info = stg_pickle_opinfo_of(fixed_ops[i]);
        ck_assert_ptr_nonnull(info);
        ck_assert_int_eq(info->arg, STG_PICKLE_ARG_FIXED);
        char want[64];
        snprintf(want, sizeof want, "%s runs past the end", info->name);
        if (fixed_ops[i] == 0x80) {
            snprintf(want, sizeof want, "PROTO without a known protocol");
        }
        uint8_t buf[16];
        uint64_t off;
        size_t len = with_arg(buf, fixed_ops[i], info->width - 1u);
        const char *msg = eval_error(buf, len, &off);
        ck_assert_msg(strcmp(msg, want) == 0 && off == 1, "%s short: %s at %llu", info->name, msg,
                      (unsigned long long)off);
        len = with_arg(buf, fixed_ops[i], info->width);
        msg = eval_error(buf, len, &off);
        ck_assert_msg(strcmp(msg, want) != 0, "%s whole: %s", info->name, msg);
    }
}
END_TEST

static Suite *pickle_ops_suite(void)
{
    Suite *s = suite_create("pickle_ops");
    TCase *tc = tcase_create("pickle_ops");
    tcase_add_test(tc, test_table_is_pickletools);
    tcase_add_test(tc, test_walker_reads_the_table_width);
    tcase_add_test(tc, test_converter_reads_the_table_width);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(pickle_ops_suite());
}
