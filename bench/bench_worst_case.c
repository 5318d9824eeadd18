/* Worst-case throughput: every adversarial header and pickle shape an uploader controls, timed
 * in the same run as a realistic input of the same size, against a floor (issue 31).
 *
 *   bench_worst_case [--sizes MB,MB...] [--pickle-mb MB] [--dir DIR] [--ref BIN] [--seconds S]
 *                    [--only NAME] [--torch-pkl FILE] [--no-floor] [--check-verdicts] [--keep]
 *
 * Header shapes (safetensors files of about each of --sizes MB of header, default 10,100;
 * 100 MB means the reference's cap of 100,000,000 bytes) are written to DIR (default .) as
 * files whose data section is a sparse hole, mapped, and validated with stg_validate_buffer in
 * the compat and the strict profile; pickle shapes (--pickle-mb, default 10) are generated in
 * memory and scanned with stg_scan_buffer (sniff, opcode walk, policy; no digest). Times are
 * process CPU time: one warm-up call, then calls until --seconds (default 1) were spent, best
 * of them; a call slower than --seconds is measured once. With --ref (bench/reference/build.sh's
 * stg-reference-bench) each header file is also timed by the reference's read_metadata, in its
 * own process, refusals included.
 *
 * Floors (printed per row; exit status 1 when one is missed, unless --no-floor): a header
 * shape validates at >= 0.25 x the realistic header of the same size in the same profile, and
 * in no more CPU time than the reference takes (when --ref is given); a pickle shape scans at
 * >= 100 MB/s and >= 0.25 x the realistic pickle (a torch-like data.pkl generated here, or
 * --torch-pkl: the data.pkl member of a real torch.save, bench/gen_pickle.py --pickle).
 *
 * --keep: the header files stay in DIR (worst-NN-SIZE.safetensors, NN the row), for a test
 * that runs the CLI over them (tests/cli/script_worst_case_seed.sh).
 *
 * --check-verdicts: every shape's verdict is compared with the one recorded below (exit 1 on a
 * difference): what tests/CMakeLists.txt runs at a tiny size, so the generators keep making the
 * shapes they claim to. Not a timed test: the floors are for bench/run_worst_case.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench/benchutil.h"
#include "parser/hash.h"
#include "parser/json.h"
#include "stguard/stguard.h"

typedef bench_buf buf;

static void putc_n(buf *b, char c, size_t n)
{
    char chunk[4096];
    memset(chunk, c, sizeof chunk);
    for (size_t left = n; left > 0;) {
        size_t k = left < sizeof chunk ? left : sizeof chunk;
        bench_put(b, chunk, k);
        left -= k;
    }
}

/* ------------------------------------------------------------------------ header shapes */

/* One U8 tensor of one byte: the entry most shapes hang their attack on. */
#define ONE_TENSOR "\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]"

/* Each generator appends a header body (no length prefix, no padding) of about `target` bytes
 * to h and returns the data section's length. */
typedef uint64_t (*header_gen)(buf *h, size_t target);

/* A Llama-like checkpoint: nine tensors a layer, BF16 projections of a 512-wide model, F32
 * norms, contiguous offsets, `__metadata__` first (as bench/gen_header.py, in process). */
static uint64_t gen_realistic(buf *h, size_t target)
{
    static const struct {
        const char *part, *dtype;
        unsigned rows, cols, elem;
    } parts[] = {
        {"self_attn.q_proj.weight", "BF16", 512, 512, 2},
        {"self_attn.k_proj.weight", "BF16", 512, 512, 2},
        {"self_attn.v_proj.weight", "BF16", 512, 512, 2},
        {"self_attn.o_proj.weight", "BF16", 512, 512, 2},
        {"mlp.gate_proj.weight", "BF16", 1376, 512, 2},
        {"mlp.up_proj.weight", "BF16", 1376, 512, 2},
        {"mlp.down_proj.weight", "BF16", 512, 1376, 2},
        {"input_layernorm.weight", "F32", 512, 0, 4},
        {"post_attention_layernorm.weight", "F32", 512, 0, 4},
    };
    char entry[256];
    uint64_t off = 0;
    bench_puts(h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (size_t layer = 0; h->len + 2 * sizeof entry < target; layer++) {
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
            uint64_t n = (uint64_t)parts[k].rows * (parts[k].cols ? parts[k].cols : 1);
            uint64_t end = off + n * parts[k].elem;
            char shape[32];
            if (parts[k].cols) {
                snprintf(shape, sizeof shape, "%u,%u", parts[k].rows, parts[k].cols);
            } else {
                snprintf(shape, sizeof shape, "%u", parts[k].rows);
            }
            snprintf(entry, sizeof entry,
                     ",\"model.layers.%zu.%s\":{\"dtype\":\"%s\",\"shape\":[%s],"
                     "\"data_offsets\":[%llu,%llu]}",
                     layer, parts[k].part, parts[k].dtype, shape, (unsigned long long)off,
                     (unsigned long long)end);
            bench_puts(h, entry);
            off = end;
        }
    }
    bench_puts(h, "}");
    return off;
}

/* A tensor entry with an ignored field `x` whose value is `unit` repeated. */
static uint64_t ignored_object_of(buf *h, size_t target, const char *open, const char *unit,
                                  const char *last, const char *close)
{
    bench_puts(h, "{" ONE_TENSOR ",\"x\":");
    bench_puts(h, open);
    size_t n = strlen(unit), tail = strlen(last) + strlen(close) + 8;
    while (h->len + n + tail < target) {
        bench_put(h, unit, n);
    }
    bench_puts(h, last);
    bench_puts(h, close);
    bench_puts(h, "}}");
    return 1;
}

static uint64_t gen_dup_ignored(buf *h, size_t target)
{
    return ignored_object_of(h, target, "{", "\"\":0,", "\"\":0", "}");
}

/* Two keys taking turns: no member is a copy of the one before it, so every key is recorded
 * and the duplicate check's hash set finds the repeats (the skip's shortcut does not apply). */
static uint64_t gen_dup_alternating_ignored(buf *h, size_t target)
{
    return ignored_object_of(h, target, "{", "\"a\":0,\"b\":0,", "\"a\":0", "}");
}

static uint64_t gen_dup_long_ignored(buf *h, size_t target)
{
    char unit[1100];
    memset(unit, 'k', sizeof unit);
    unit[0] = '"';
    memcpy(unit + 1001, "\":0,", 5);
    return ignored_object_of(h, target, "{", unit, "\"\":0", "}");
}

static uint64_t gen_distinct_ignored(buf *h, size_t target)
{
    bench_puts(h, "{" ONE_TENSOR ",\"x\":{\"\":0");
    char unit[32];
    for (size_t i = 0; h->len + sizeof unit + 8 < target; i++) {
        snprintf(unit, sizeof unit, ",\"%zx\":0", i);
        bench_puts(h, unit);
    }
    bench_puts(h, "}}}");
    return 1;
}

static uint64_t gen_nesting(buf *h, size_t target)
{
    /* the top object, the entry and `x` take three of the 127 levels */
    char unit[2 * 124 + 2];
    memset(unit, '[', 124);
    memset(unit + 124, ']', 124);
    unit[248] = ',';
    unit[249] = '\0';
    return ignored_object_of(h, target, "[", unit, "0", "]");
}

static uint64_t gen_empty_objects(buf *h, size_t target)
{
    return ignored_object_of(h, target, "[", "{},", "{}", "]");
}

/* 700 significant digits each, in the range of a double (as the reference's serde_json needs:
 * an integer of 700 digits overflows it, and both refuse that at its first digits). */
static uint64_t gen_long_numbers(buf *h, size_t target)
{
    char unit[703];
    memset(unit, '7', 701);
    unit[0] = '1';
    unit[1] = '.';
    unit[701] = ',';
    unit[702] = '\0';
    return ignored_object_of(h, target, "[", unit, "0", "]");
}

static uint64_t gen_dup_tensors(buf *h, size_t target)
{
    const char *unit = ONE_TENSOR "},";
    size_t n = strlen(unit);
    bench_puts(h, "{");
    while (h->len + 2 * n < target) {
        bench_put(h, unit, n);
    }
    bench_puts(h, ONE_TENSOR "}}");
    return 1;
}

/* `__metadata__` holding `unit` repeated, then the one tensor. */
static uint64_t metadata_of(buf *h, size_t target, const char *open, const char *unit,
                            const char *last)
{
    size_t n = strlen(unit), tail = strlen(ONE_TENSOR) + strlen(last) + 16;
    bench_puts(h, "{\"__metadata__\":{");
    bench_puts(h, open);
    while (h->len + n + tail < target) {
        bench_put(h, unit, n);
    }
    bench_puts(h, last);
    bench_puts(h, "}," ONE_TENSOR "}}");
    return 1;
}

static uint64_t gen_dup_metadata(buf *h, size_t target)
{
    return metadata_of(h, target, "", "\"k\":\"v\",", "\"k\":\"v\"");
}

static uint64_t gen_distinct_metadata(buf *h, size_t target)
{
    size_t tail = strlen(ONE_TENSOR) + 32;
    char unit[32];
    bench_puts(h, "{\"__metadata__\":{\"\":\"\"");
    for (size_t i = 0; h->len + sizeof unit + tail < target; i++) {
        snprintf(unit, sizeof unit, ",\"%zx\":\"\"", i);
        bench_puts(h, unit);
    }
    bench_puts(h, "}," ONE_TENSOR "}}");
    return 1;
}

static uint64_t gen_u_escapes(buf *h, size_t target)
{
    return metadata_of(h, target, "\"k\":\"", "\\u00e9\\ud83d\\ude00", "\"");
}

/* Tensors of one byte each named prefix + counter: ascending (shared prefix) or descending
 * (reverse order: each name sorts before the one written before it). */
#define NAMED_FORM "%s\"%s%08zu\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%zu,%zu]}"

static uint64_t named_tensors(buf *h, size_t target, int descending)
{
    char prefix[201], entry[400];
    memset(prefix, 'p', 200);
    prefix[200] = '\0';
    size_t n = 0;
    /* how many fit (the counter's width is the same in both orders) */
    for (size_t used = 2; n < 99999999; n++) {
        size_t len = (size_t)snprintf(NULL, 0, NAMED_FORM, n ? "," : "", prefix, n, n, n + 1);
        if (used + len > target) {
            break;
        }
        used += len;
    }
    bench_puts(h, "{");
    for (size_t i = 0; i < n; i++) {
        size_t id = descending ? n - 1 - i : i;
        snprintf(entry, sizeof entry, NAMED_FORM, i ? "," : "", prefix, id, i, i + 1);
        bench_puts(h, entry);
    }
    bench_puts(h, "}");
    return n;
}

static uint64_t gen_shared_prefix(buf *h, size_t target)
{
    return named_tensors(h, target, 0);
}

static uint64_t gen_last_byte_reverse(buf *h, size_t target)
{
    return named_tensors(h, target, 1);
}

/* 400 keys of one 64-bit JSON key hash under a known seed (8 letters, then the word that
 * brings parser/json.c's state back to a fixed one, written as \u00XX escapes), then copies of
 * one key: the hash set gives up on the flood and the fallback sort gets every copy. Crafted
 * against the default seed, the one stg_validate_buffer uses, they collide; against any other
 * (the doors draw theirs from the OS), they are distinct keys of random hashes. */
static uint64_t hash_word(const stg_json_hash_key *k, uint64_t h, uint64_t w)
{
    __extension__ typedef unsigned __int128 wide;
    wide m = (wide)(h ^ w) * k->mul;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

static uint64_t flood_then_dups(buf *h, size_t target, uint64_t seed)
{
    const uint64_t target_w1 = 0x4141414141414141ull;
    stg_json_hash_key k;
    stg_json_hash_key_init(&k, seed);
    uint64_t goal = hash_word(&k, k.start, target_w1) ^ 0x2121746567726174ull;
    bench_puts(h, "{" ONE_TENSOR ",\"x\":{\"\":0");
    for (uint64_t ctr = 1, made = 0; made < 400; ctr++) {
        uint64_t w1 = 0, c = ctr;
        for (int i = 0; i < 8; i++, c /= 26) {
            w1 |= (uint64_t)('a' + c % 26) << (8 * i);
        }
        uint64_t w2 = goal ^ hash_word(&k, k.start, w1);
        if ((w2 & 0x8080808080808080ull) != 0) {
            continue;
        }
        char key[80];
        int at = snprintf(key, sizeof key, ",\"");
        for (int i = 0; i < 8; i++) {
            key[at++] = (char)(w1 >> (8 * i));
        }
        for (int i = 0; i < 8; i++) {
            at += snprintf(key + at, sizeof key - (size_t)at, "\\u%04x",
                           (unsigned)(w2 >> (8 * i)) & 0xFFu);
        }
        snprintf(key + at, sizeof key - (size_t)at, "\":0");
        bench_puts(h, key);
        made++;
    }
    while (h->len + 16 < target) {
        bench_put(h, ",\"\":0", 5);
    }
    bench_puts(h, "}}}");
    return 1;
}

static uint64_t gen_flood_then_dups(buf *h, size_t target)
{
    return flood_then_dups(h, target, STG_HASH_SEED_DEFAULT);
}

/* The same keys crafted against a seed that is not the one used: what a file sent to a door
 * gets, the door's seed being a secret. */
static uint64_t gen_flood_other_seed(buf *h, size_t target)
{
    return flood_then_dups(h, target, STG_HASH_SEED_DEFAULT ^ 0x5a5a5a5a5a5a5a5aull);
}

/* A tiny header padded with spaces to the size (trailing whitespace is allowed). */
static uint64_t gen_whitespace(buf *h, size_t target)
{
    bench_puts(h, "{" ONE_TENSOR "}}");
    if (h->len < target) {
        putc_n(h, ' ', target - h->len);
    }
    return 1;
}

typedef struct header_shape {
    const char *name;
    header_gen gen;
    /* expected verdicts (--check-verdicts) below the count limits: past about 8 MB the
     * metadata shapes reach max_metadata_entries (1,000,000) and stop there as invalid */
    const char *compat, *strict;
    int held_out; /* not named in the issue: a check on the floor's generality */
} header_shape;

static const header_shape header_shapes[] = {
    {"dup keys, ignored field", gen_dup_ignored, "warn", "invalid", 0},
    {"dup keys, tensor entries", gen_dup_tensors, "warn", "invalid", 0},
    {"dup keys, __metadata__", gen_dup_metadata, "warn", "invalid", 0},
    {"distinct tiny metadata", gen_distinct_metadata, "ok", "ok", 0},
    {"max nesting, ignored value", gen_nesting, "warn", "invalid", 0},
    {"\\u escapes (metadata value)", gen_u_escapes, "ok", "ok", 0},
    {"700-digit numbers, ignored", gen_long_numbers, "warn", "invalid", 0},
    {"200-byte shared prefix", gen_shared_prefix, "ok", "ok", 0},
    {"last byte differs, reverse", gen_last_byte_reverse, "ok", "ok", 0},
    {"dup 1000-byte keys, ignored", gen_dup_long_ignored, "warn", "invalid", 1},
    {"distinct keys, ignored field", gen_distinct_ignored, "warn", "invalid", 1},
    {"empty objects, ignored array", gen_empty_objects, "warn", "invalid", 1},
    {"whitespace padding", gen_whitespace, "ok", "ok", 1},
    {"400 colliding keys, then dup keys", gen_flood_then_dups, "warn", "invalid", 1},
    {"two keys taking turns, ignored field", gen_dup_alternating_ignored, "warn", "invalid", 1},
    {"400 keys crafted for another seed, then dup keys", gen_flood_other_seed, "warn", "invalid",
     1},
};
#define HEADER_SHAPES (sizeof header_shapes / sizeof header_shapes[0])

/* ------------------------------------------------------------------------ pickle shapes */

typedef void (*pickle_gen)(buf *b, size_t target);

/* `head`, then `unit` while the total stays under target (at most `max` times), then `tail`. */
static void repeat_unit(buf *b, size_t target, const char *head, size_t head_len, const char *unit,
                        size_t unit_len, size_t max, const char *tail, size_t tail_len)
{
    bench_put(b, head, head_len);
    for (size_t i = 0; i < max && b->len + unit_len + tail_len <= target; i++) {
        bench_put(b, unit, unit_len);
    }
    bench_put(b, tail, tail_len);
}

static void gen_mark_pop_mark(buf *b, size_t target)
{
    repeat_unit(b, target, "\x80\x02", 2, "(1", 2, SIZE_MAX, "N.", 2);
}

/* MARK x depth then TUPLE x depth: one tuple nested `depth` deep (empty at the bottom), popped,
 * again; depth is the mark stack's limit (max_pickle_stack, 1,000,000) less a margin. */
static void gen_nested_tuples(buf *b, size_t target)
{
    size_t depth = target / 10 < 999000 ? target / 10 : 999000;
    bench_put(b, "\x80\x02", 2);
    while (b->len + 2 * depth + 3 <= target) {
        putc_n(b, '(', depth);
        putc_n(b, 't', depth);
        bench_put(b, "0", 1);
    }
    bench_put(b, "N.", 2);
}

/* TUPLE1 around an empty tuple, over and over: nesting with no marks (held out). */
static void gen_tuple1_nesting(buf *b, size_t target)
{
    repeat_unit(b, target, "\x80\x02)", 3, "\x85", 1, SIZE_MAX, "0N.", 3);
}

/* Short strings, each MEMOIZEd and popped: the memo's limit (max_pickle_memo) is 1,000,000. */
static void gen_memo_strings(buf *b, size_t target)
{
    repeat_unit(b, target, "\x80\x04", 2,
                "\x8c\x06"
                "abcdef\x94"
                "0",
                10, 999000, "N.", 2);
}

static void gen_dup_pop(buf *b, size_t target)
{
    repeat_unit(b, target, "\x80\x02N", 3, "20", 2, SIZE_MAX, ".", 1);
}

static void gen_huge_binbytes(buf *b, size_t target)
{
    size_t n = target > 16 ? target - 16 : 1;
    bench_put(b,
              "\x80\x03"
              "B",
              3);
    bench_put_le(b, n, 4);
    putc_n(b, 'b', n);
    bench_put(b, "0N.", 3);
}

static void gen_stack_globals(buf *b, size_t target)
{
    static const char unit[] = "\x8c\x0b"
                               "collections\x8c\x0b"
                               "OrderedDict\x93"
                               "0";
    repeat_unit(b, target, "\x80\x04", 2, unit, sizeof unit - 1, SIZE_MAX, "N.", 2);
}

/* Protocol 0: one STRING line of the whole size. */
static void gen_long_string_line(buf *b, size_t target)
{
    bench_put(b, "S'", 2);
    putc_n(b, 'a', target > 8 ? target - 8 : 1);
    bench_put(b, "'\n0N.", 5);
}

/* Protocol 0: one UNICODE line of the whole size (raw-unicode-escape, held out). */
static void gen_long_unicode_line(buf *b, size_t target)
{
    bench_put(b, "V", 1);
    putc_n(b, 'u', target > 8 ? target - 8 : 1);
    bench_put(b, "\n0N.", 4);
}

/* A torch.save() data.pkl as torch 1.13 writes it (protocol 2): an OrderedDict of
 * _rebuild_tensor_v2 calls with persistent storage ids, the globals memoized once and fetched
 * with BINGET after that, SETITEMS in batches of 1,000, the _metadata BUILD at the end. */
static void put_memo_op(buf *b, char small, char large, size_t idx)
{
    if (idx < 256) {
        uint8_t op[2] = {(uint8_t)small, (uint8_t)idx};
        bench_put(b, op, 2);
    } else {
        bench_put(b, &large, 1);
        bench_put_le(b, idx, 4);
    }
}

static void put_binunicode(buf *b, const char *s, size_t *memo)
{
    bench_put(b, "X", 1);
    bench_put_le(b, strlen(s), 4);
    bench_puts(b, s);
    put_memo_op(b, 'q', 'r', (*memo)++);
}

static void put_int(buf *b, unsigned v)
{
    uint8_t op[3] = {'K', (uint8_t)v, 0};
    if (v < 256) {
        bench_put(b, op, 2);
    } else {
        op[0] = 'M';
        op[2] = (uint8_t)(v >> 8);
        bench_put(b, op, 3);
    }
}

static void gen_torch_like(buf *b, size_t target)
{
    size_t memo = 0, rebuild = 0, storage_cls = 0, storage_str = 0, cpu = 0, odict = 0;
    char name[96], key[24];
    bench_put(b,
              "\x80\x02"
              "ccollections\nOrderedDict\n",
              27);
    odict = memo;
    put_memo_op(b, 'q', 'r', memo++);
    bench_put(b, ")R", 2);
    put_memo_op(b, 'q', 'r', memo++);
    for (size_t i = 0; b->len + 400 < target; i++) {
        if (i % 1000 == 0) {
            bench_put(b, i ? "u(" : "(", i ? 2 : 1);
        }
        snprintf(name, sizeof name, "model.layers.%zu.self_attn.q_proj.weight", i);
        put_binunicode(b, name, &memo);
        if (i == 0) {
            bench_put(b, "ctorch._utils\n_rebuild_tensor_v2\n", 33);
            rebuild = memo;
            put_memo_op(b, 'q', 'r', memo++);
        } else {
            put_memo_op(b, 'h', 'j', rebuild);
        }
        bench_put(b, "((", 2);
        if (i == 0) {
            put_binunicode(b, "storage", &memo);
            storage_str = memo - 1;
            bench_put(b, "ctorch\nBFloat16Storage\n", 23);
            storage_cls = memo;
            put_memo_op(b, 'q', 'r', memo++);
        } else {
            put_memo_op(b, 'h', 'j', storage_str);
            put_memo_op(b, 'h', 'j', storage_cls);
        }
        snprintf(key, sizeof key, "%zu", i);
        put_binunicode(b, key, &memo);
        if (i == 0) {
            put_binunicode(b, "cpu", &memo);
            cpu = memo - 1;
        } else {
            put_memo_op(b, 'h', 'j', cpu);
        }
        put_int(b, 64);
        bench_put(b, "t", 1);
        put_memo_op(b, 'q', 'r', memo++);
        bench_put(b, "QK\x00", 3);
        bench_put(b, "K\x08K\x08\x86", 5);
        put_memo_op(b, 'q', 'r', memo++);
        bench_put(b, "K\x08K\x01\x86", 5);
        put_memo_op(b, 'q', 'r', memo++);
        bench_put(b, "\x89", 1);
        put_memo_op(b, 'h', 'j', odict);
        bench_put(b, ")R", 2);
        put_memo_op(b, 'q', 'r', memo++);
        bench_put(b, "t", 1);
        put_memo_op(b, 'q', 'r', memo++);
        bench_put(b, "R", 1);
        put_memo_op(b, 'q', 'r', memo++);
    }
    bench_put(b, "u}", 2);
    put_memo_op(b, 'q', 'r', memo++);
    bench_put(b, "X\x09\x00\x00\x00_metadata", 14);
    put_memo_op(b, 'q', 'r', memo++);
    put_memo_op(b, 'h', 'j', odict);
    bench_put(b, ")R", 2);
    put_memo_op(b, 'q', 'r', memo++);
    bench_put(b, "sb.", 3);
}

typedef struct pickle_shape {
    const char *name;
    pickle_gen gen;
    const char *verdict; /* expected (--check-verdicts) */
    int held_out;
} pickle_shape;

static const pickle_shape pickle_shapes[] = {
    {"MARK/POP_MARK runs", gen_mark_pop_mark, "ok", 0},
    {"nested tuples, mark stack limit", gen_nested_tuples, "ok", 0},
    {"memoized tiny strings", gen_memo_strings, "ok", 0},
    {"DUP/POP runs", gen_dup_pop, "ok", 0},
    {"one huge BINBYTES", gen_huge_binbytes, "ok", 0},
    {"STACK_GLOBAL, allowed name", gen_stack_globals, "ok", 0},
    {"protocol 0, one STRING line", gen_long_string_line, "ok", 0},
    {"TUPLE1 nesting", gen_tuple1_nesting, "ok", 1},
    {"protocol 0, one UNICODE line", gen_long_unicode_line, "ok", 1},
};
#define PICKLE_SHAPES (sizeof pickle_shapes / sizeof pickle_shapes[0])

/* ------------------------------------------------------------------------------ timing */

/* Whether a described result ("warn:json_duplicate_key") has the verdict `want`. */
static int verdict_is(const char *got, const char *want)
{
    size_t n = strlen(want);
    return strncmp(got, want, n) == 0 && (got[n] == '\0' || got[n] == ':');
}

typedef struct options {
    double sizes[8];
    size_t nsizes;
    double pickle_mb, seconds;
    const char *dir, *ref, *only, *torch_pkl;
    int floor, check_verdicts, keep;
} options;

typedef struct measure {
    double cpu_best; /* seconds */
    char verdict[64];
} measure;

/* The verdict, and the first finding's code when there is one ("warn:json_duplicate_key"). */
static void describe(const stg_report *rep, char *out, size_t cap)
{
    const char *v = stg_verdict_name(stg_report_verdict(rep));
    if (stg_report_count(rep) > 0) {
        snprintf(out, cap, "%s:%s", v, stg_code_name(stg_report_at(rep, 0)->code));
    } else {
        snprintf(out, cap, "%s", v);
    }
}

/* What one call costs: the warm-up alone when it took longer than `seconds`, else the best of
 * the calls that follow it until `seconds` were spent (at least two). */
typedef int (*call_fn)(const void *ctx, stg_report **rep);

static measure time_calls(call_fn call, const void *ctx, double seconds)
{
    measure m = {0};
    stg_report *rep = NULL;
    double c0 = bench_cpu_now();
    if (call(ctx, &rep) != 0) {
        fprintf(stderr, "bench_worst_case: the call failed\n");
        exit(2);
    }
    double first = bench_cpu_now() - c0;
    describe(rep, m.verdict, sizeof m.verdict);
    stg_report_free(rep);
    m.cpu_best = first;
    if (first >= seconds) {
        return m;
    }
    double spent = 0, best = 1e300;
    for (int runs = 0; runs < 2 || (spent < seconds && runs < 1000); runs++) {
        rep = NULL;
        c0 = bench_cpu_now();
        if (call(ctx, &rep) != 0) {
            exit(2);
        }
        double t = bench_cpu_now() - c0;
        char again[64];
        describe(rep, again, sizeof again);
        stg_report_free(rep);
        if (strcmp(again, m.verdict) != 0) {
            fprintf(stderr, "bench_worst_case: a second call gave %s, not %s\n", again, m.verdict);
            exit(2);
        }
        spent += t;
        best = t < best ? t : best;
    }
    m.cpu_best = best;
    return m;
}

typedef struct header_call {
    const uint8_t *p;
    size_t len;
    stg_limits lim;
} header_call;

static int call_validate(const void *ctx, stg_report **rep)
{
    const header_call *c = ctx;
    return stg_validate_buffer(c->p, c->len, &c->lim, rep) == STG_OK ? 0 : -1;
}

typedef struct pickle_call {
    const buf *b;
    stg_scan_options opt;
} pickle_call;

static int call_scan(const void *ctx, stg_report **rep)
{
    const pickle_call *c = ctx;
    return stg_scan_buffer(c->b->p, c->b->len, "data.pkl", &c->opt, rep) == STG_OK ? 0 : -1;
}

/* The reference's read_metadata on the file, in its own process: CPU seconds, best of its runs
 * (bench/reference/src/main.rs); < 0 when it could not be run. */
static double reference_seconds(const options *o, const char *path, char *result, size_t cap)
{
    char cmd[8400], line[512];
    snprintf(cmd, sizeof cmd, "'%s' metadata '%s' --seconds %.3f", o->ref, path, o->seconds);
    FILE *f = popen(cmd, "r");
    double s = -1;
    snprintf(result, cap, "-");
    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, "cpu_best_s=");
        char *res = strstr(line, "result=");
        if (at) {
            s = strtod(at + 11, NULL);
        }
        if (res) {
            snprintf(result, cap, "%.*s", (int)strcspn(res + 7, " \n"), res + 7);
        }
    }
    pclose(f);
    return s;
}

/* ------------------------------------------------------------------------ header rows */

/* Writes the shape as DIR/worst-<index>-<size>.safetensors (data section a sparse hole) and
 * maps it; returns the mapping's length, 0 on failure. */
static size_t write_header_file(const options *o, header_gen gen, size_t target, size_t index,
                                char *path, size_t cap, const uint8_t **map)
{
    buf h = {0};
    uint64_t data_len = gen(&h, target);
    while (h.len % 8 != 0) {
        bench_puts(&h, " ");
    }
    buf f = {0};
    bench_put_le(&f, h.len, 8);
    bench_put(&f, h.p, h.len);
    free(h.p);
    snprintf(path, cap, "%s/worst-%02zu-%zu.safetensors", o->dir, index, target);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    size_t total = f.len + (size_t)data_len;
    if (fd < 0 || write(fd, f.p, f.len) != (ssize_t)f.len || ftruncate(fd, (off_t)total) != 0) {
        fprintf(stderr, "bench_worst_case: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    free(f.p);
    *map = mmap(NULL, total, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (*map == MAP_FAILED) {
        fprintf(stderr, "bench_worst_case: mmap %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return total;
}

typedef struct header_rate {
    double compat, strict; /* MB/s of header */
} header_rate;

static int header_row(const options *o, const header_shape *s, size_t index, size_t target,
                      const header_rate *realistic, header_rate *out)
{
    char path[4096];
    const uint8_t *map = NULL;
    size_t total = write_header_file(o, s->gen, target, index, path, sizeof path, &map);
    double mb = 0;
    for (int b = 7; b >= 0; b--) {
        mb = mb * 256 + map[b];
    }
    mb /= 1e6;
    header_call c = {map, total, {0}};
    stg_limits_default(&c.lim);
    stg_limits_set(&c.lim, "profile", "compat");
    measure mc = time_calls(call_validate, &c, o->seconds);
    stg_limits_set(&c.lim, "profile", "strict");
    measure ms = time_calls(call_validate, &c, o->seconds);
    char ref_result[64] = "-";
    double ref = o->ref ? reference_seconds(o, path, ref_result, sizeof ref_result) : -1;
    munmap((void *)(uintptr_t)map, total);
    if (!o->keep) {
        unlink(path);
    }
    out->compat = mb / mc.cpu_best;
    out->strict = mb / ms.cpu_best;
    double rc = realistic ? out->compat / realistic->compat : 1.0;
    double rs = realistic ? out->strict / realistic->strict : 1.0;
    double slowest = mc.cpu_best > ms.cpu_best ? mc.cpu_best : ms.cpu_best;
    int below = (realistic && (rc < 0.25 || rs < 0.25)) || (ref > 0 && slowest > ref);
    char refcol[112] = "-", refx[24] = "-";
    if (ref > 0) {
        snprintf(refcol, sizeof refcol, "%.1f (%s)", mb / ref, ref_result);
        snprintf(refx, sizeof refx, "%.1fx", ref / slowest);
    }
    int verdict_bad = o->check_verdicts &&
                      (!verdict_is(mc.verdict, s->compat) || !verdict_is(ms.verdict, s->strict));
    printf("| %s%s | %.2f | %.0f | %.2fx | %.0f | %.2fx | %s | %s | %s | %s | %s |\n", s->name,
           s->held_out ? " (held out)" : "", mb, out->compat, rc, out->strict, rs, refcol, refx,
           mc.verdict, ms.verdict, below ? "BELOW" : "ok");
    if (verdict_bad) {
        fprintf(stderr, "bench_worst_case: %s: verdicts %s / %s, expected %s / %s\n", s->name,
                mc.verdict, ms.verdict, s->compat, s->strict);
    }
    fflush(stdout);
    return (o->floor && below) || verdict_bad;
}

static int header_table(const options *o)
{
    int bad = 0;
    printf("| header shape | MB | compat MB/s | x realistic | strict MB/s | x realistic | "
           "reference MB/s (result) | reference / stguard | compat verdict | strict verdict | "
           "floor |\n|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
    for (size_t k = 0; k < o->nsizes; k++) {
        size_t target = o->sizes[k] >= 100 ? 100000000 - 8 : (size_t)(o->sizes[k] * 1e6);
        static const header_shape realistic = {"realistic (Llama-like)", gen_realistic, "ok", "ok",
                                               0};
        header_rate base, got;
        bad |= header_row(o, &realistic, 99, target, NULL, &base);
        for (size_t i = 0; i < HEADER_SHAPES; i++) {
            if (o->only && strstr(header_shapes[i].name, o->only) == NULL) {
                continue;
            }
            bad |= header_row(o, &header_shapes[i], i, target, &base, &got);
        }
    }
    return bad;
}

/* ------------------------------------------------------------------------ pickle rows */

static double pickle_row(const options *o, const char *name, int held_out, const buf *b,
                         const char *expect, double realistic, int *bad)
{
    pickle_call c = {b, {0}};
    stg_scan_options_default(&c.opt);
    c.opt.digest = false;
    measure m = time_calls(call_scan, &c, o->seconds);
    double rate = (double)b->len / 1e6 / m.cpu_best;
    double x = realistic > 0 ? rate / realistic : 1.0;
    int below = realistic > 0 && (rate < 100 || x < 0.25);
    int verdict_bad = o->check_verdicts && expect && !verdict_is(m.verdict, expect);
    printf("| %s%s | %.2f | %.0f | %.2fx | %s | %s |\n", name, held_out ? " (held out)" : "",
           (double)b->len / 1e6, rate, x, m.verdict, below ? "BELOW" : "ok");
    if (verdict_bad) {
        fprintf(stderr, "bench_worst_case: %s: verdict %s, expected %s\n", name, m.verdict, expect);
    }
    fflush(stdout);
    *bad |= (o->floor && below) || verdict_bad;
    return rate;
}

static int pickle_table(const options *o)
{
    int bad = 0;
    size_t target = (size_t)(o->pickle_mb * 1e6);
    buf real = {0};
    const char *real_name = "realistic (torch-like data.pkl, generated)";
    if (o->torch_pkl) {
        FILE *f = fopen(o->torch_pkl, "rb");
        uint8_t chunk[65536];
        size_t got;
        while (f && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
            bench_put(&real, chunk, got);
        }
        if (f == NULL || real.len == 0) {
            fprintf(stderr, "bench_worst_case: %s: cannot read\n", o->torch_pkl);
            exit(2);
        }
        fclose(f);
        real_name = "realistic (torch.save data.pkl)";
    } else {
        gen_torch_like(&real, target);
    }
    printf("\n| pickle shape | MB | MB/s | x realistic | verdict | floor |\n"
           "|---|---:|---:|---:|---|---|\n");
    double base = pickle_row(o, real_name, 0, &real, "ok", 0, &bad);
    free(real.p);
    for (size_t i = 0; i < PICKLE_SHAPES; i++) {
        if (o->only && strstr(pickle_shapes[i].name, o->only) == NULL) {
            continue;
        }
        buf b = {0};
        pickle_shapes[i].gen(&b, target);
        pickle_row(o, pickle_shapes[i].name, pickle_shapes[i].held_out, &b,
                   pickle_shapes[i].verdict, base, &bad);
        free(b.p);
    }
    return bad;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_worst_case [--sizes MB,MB...] [--pickle-mb MB] [--dir DIR] "
                    "[--ref BIN] [--seconds S] [--only NAME] [--torch-pkl FILE] [--no-floor] "
                    "[--check-verdicts] [--no-header] [--no-pickle] [--keep]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    options o = {{10, 100}, 2, 10, 1.0, ".", NULL, NULL, NULL, 1, 0, 0};
    int headers = 1, pickles = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--sizes") == 0 && v) {
            o.nsizes = 0;
            for (char *s = argv[++i]; *s && o.nsizes < 8; s += *s == ',') {
                o.sizes[o.nsizes++] = strtod(s, &s);
            }
        } else if (strcmp(a, "--pickle-mb") == 0 && v) {
            o.pickle_mb = strtod(argv[++i], NULL);
        } else if (strcmp(a, "--seconds") == 0 && v) {
            o.seconds = strtod(argv[++i], NULL);
        } else if (strcmp(a, "--dir") == 0 && v) {
            o.dir = argv[++i];
        } else if (strcmp(a, "--ref") == 0 && v) {
            o.ref = argv[++i];
        } else if (strcmp(a, "--only") == 0 && v) {
            o.only = argv[++i];
        } else if (strcmp(a, "--torch-pkl") == 0 && v) {
            o.torch_pkl = argv[++i];
        } else if (strcmp(a, "--no-floor") == 0) {
            o.floor = 0;
        } else if (strcmp(a, "--keep") == 0) {
            o.keep = 1;
        } else if (strcmp(a, "--check-verdicts") == 0) {
            o.check_verdicts = 1;
        } else if (strcmp(a, "--no-header") == 0) {
            headers = 0;
        } else if (strcmp(a, "--no-pickle") == 0) {
            pickles = 0;
        } else {
            usage();
        }
    }
    int bad = 0;
    if (headers) {
        bad |= header_table(&o);
    }
    if (pickles) {
        bad |= pickle_table(&o);
    }
    return bad ? 1 : 0;
}
