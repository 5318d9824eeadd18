/* parser/text.h: the one UTF-8 validator (RFC 3629 as Python's decoder reads it, strict and
 * surrogatepass) and the one hex codec. Table-driven; each invalid case asserts the offset of
 * the first bad sequence. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/text.h"
#include "testutil.h"

static const struct utf8_case {
    const char *name;
    const char *in;
    size_t len;
    bool strict_ok, pass_ok; /* valid as strict, valid under surrogatepass */
    size_t bad;              /* first bad offset (strict) */
} utf8_cases[] = {
    {"empty", "", 0, true, true, 0},
    {"ascii", "hello, world 0123456789", 23, true, true, 0},
    {"two bytes", "caf\xC3\xA9", 5, true, true, 0},
    {"three bytes", "\xE2\x82\xAC", 3, true, true, 0},
    {"four bytes", "\xF0\x9F\x98\x80", 4, true, true, 0},
    {"U+10FFFF", "\xF4\x8F\xBF\xBF", 4, true, true, 0},
    {"U+0080 lowest 2-byte", "\xC2\x80", 2, true, true, 0},
    {"U+0800 lowest 3-byte", "\xE0\xA0\x80", 3, true, true, 0},
    {"U+10000 lowest 4-byte", "\xF0\x90\x80\x80", 4, true, true, 0},
    {"U+D7FF below surrogates", "\xED\x9F\xBF", 3, true, true, 0},
    {"U+E000 above surrogates", "\xEE\x80\x80", 3, true, true, 0},
    {"overlong C0 80 (NUL)", "ab\xC0\x80", 4, false, false, 2},
    {"overlong C1 BF", "\xC1\xBF", 2, false, false, 0},
    {"overlong E0 9F BF", "x\xE0\x9F\xBF", 4, false, false, 1},
    {"overlong F0 8F BF BF", "\xF0\x8F\xBF\xBF", 4, false, false, 0},
    {"surrogate D800", "ok\xED\xA0\x80", 5, false, true, 2},
    {"surrogate DFFF", "\xED\xBF\xBF", 3, false, true, 0},
    {"past U+10FFFF F4 90", "\xF4\x90\x80\x80", 4, false, false, 0},
    {"F5 lead", "\xF5\x80\x80\x80", 4, false, false, 0},
    {"FF byte", "abc\xFF", 4, false, false, 3},
    {"lone continuation", "a\x80z", 3, false, false, 1},
    {"truncated 2-byte", "abcdefghij\xC3", 11, false, false, 10},
    {"truncated 3-byte", "\xE2\x82", 2, false, false, 0},
    {"truncated 4-byte", "\xF0\x9F\x98", 3, false, false, 0},
    {"bad continuation", "\xE2\x28\xA1", 3, false, false, 0},
    {"after fast path", "0123456789abcdef\xC3\x28", 18, false, false, 16},
    {"embedded NUL is valid", "a\0b", 3, true, true, 0},
};

START_TEST(test_utf8_table)
{
    const struct utf8_case *c = &utf8_cases[_i];
    const uint8_t *in = (const uint8_t *)c->in;
    size_t bad = 999;
    bool ok = stg_utf8_valid(in, c->len, false, &bad);
    ck_assert_msg(ok == c->strict_ok, "%s: strict gave %d", c->name, ok);
    if (!ok) {
        ck_assert_msg(bad == c->bad, "%s: bad at %zu, want %zu", c->name, bad, c->bad);
    } else {
        ck_assert_uint_eq(bad, 999); /* untouched when valid */
    }
    ck_assert_msg(stg_utf8_valid(in, c->len, true, NULL) == c->pass_ok, "%s: surrogatepass",
                  c->name);
    /* The per-sequence form agrees with the whole-buffer form. */
    bool seq_ok = true;
    for (size_t i = 0; i < c->len && seq_ok;) {
        size_t k = stg_utf8_seq(in + i, c->len - i, false);
        seq_ok = k != 0;
        ck_assert_uint_le(k, 4);
        i += k;
    }
    ck_assert_msg(seq_ok == c->strict_ok, "%s: stg_utf8_seq disagrees", c->name);
}
END_TEST

/* Every 2-, 3- and 4-byte lead against every second byte: the accept set is exactly RFC 3629's. */
START_TEST(test_utf8_second_byte_ranges)
{
    for (unsigned lead = 0x80; lead <= 0xFF; lead++) {
        for (unsigned b1 = 0; b1 <= 0xFF; b1++) {
            uint8_t s[4] = {(uint8_t)lead, (uint8_t)b1, 0x80, 0x80};
            size_t want = 0;
            if (lead >= 0xC2 && lead <= 0xDF) {
                want = b1 >= 0x80 && b1 <= 0xBF ? 2 : 0;
            } else if (lead >= 0xE0 && lead <= 0xEF) {
                unsigned lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;
                want = b1 >= lo && b1 <= hi ? 3 : 0;
            } else if (lead >= 0xF0 && lead <= 0xF4) {
                unsigned lo = lead == 0xF0 ? 0x90 : 0x80, hi = lead == 0xF4 ? 0x8F : 0xBF;
                want = b1 >= lo && b1 <= hi ? 4 : 0;
            }
            ck_assert_msg(stg_utf8_seq(s, 4, false) == want, "lead %02x second %02x", lead, b1);
        }
    }
}
END_TEST

START_TEST(test_hex_digit)
{
    for (unsigned c = 0; c < 256; c++) {
        int want = -1;
        if (c >= '0' && c <= '9') {
            want = (int)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            want = (int)(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            want = (int)(c - 'A' + 10);
        }
        ck_assert_msg(stg_hex_digit((uint8_t)c) == want, "byte %u", c);
    }
}
END_TEST

START_TEST(test_hex_decode)
{
    uint8_t out[4];
    ck_assert(stg_hex_decode("00ff7fA5", out, 4));
    ck_assert_uint_eq(out[0], 0x00);
    ck_assert_uint_eq(out[1], 0xFF);
    ck_assert_uint_eq(out[2], 0x7F);
    ck_assert_uint_eq(out[3], 0xA5);
    ck_assert(stg_hex_decode("DEADbeef", out, 4)); /* mixed case */
    ck_assert_uint_eq(out[0], 0xDE);
    ck_assert_uint_eq(out[3], 0xEF);
    ck_assert(stg_hex_decode("", out, 0));
    ck_assert(!stg_hex_decode("0g", out, 1));   /* invalid low digit */
    ck_assert(!stg_hex_decode("g0", out, 1));   /* invalid high digit */
    ck_assert(!stg_hex_decode("0x12", out, 2)); /* a prefix is not a digit */
    ck_assert(!stg_hex_decode("12 4", out, 2)); /* nor is a space */
    /* odd length: the NUL after 3 digits stops the decode (the string is never read past it) */
    ck_assert(!stg_hex_decode("abc", out, 2));
    ck_assert(!stg_hex_decode("a", out, 1));
}
END_TEST

START_TEST(test_hex_encode_round_trip)
{
    uint8_t in[256], back[256];
    char hex[513];
    for (unsigned i = 0; i < 256; i++) {
        in[i] = (uint8_t)i;
    }
    stg_hex_encode(in, sizeof in, hex);
    ck_assert_uint_eq(strlen(hex), 512);
    ck_assert_str_eq(hex + 2 * 0xAB,
                     "abacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9"
                     "cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9"
                     "eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    ck_assert(stg_hex_decode(hex, back, sizeof back));
    ck_assert(memcmp(in, back, sizeof in) == 0);
    char empty[1] = {'x'};
    stg_hex_encode(in, 0, empty);
    ck_assert_int_eq(empty[0], '\0');
}
END_TEST

int main(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("text");
    tcase_add_loop_test(tc, test_utf8_table, 0, (int)(sizeof utf8_cases / sizeof utf8_cases[0]));
    tcase_add_test(tc, test_utf8_second_byte_ranges);
    tcase_add_test(tc, test_hex_digit);
    tcase_add_test(tc, test_hex_decode);
    tcase_add_test(tc, test_hex_encode_round_trip);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
