/* Tokenizer file rules (docs/tokenizers.md). Each is what the file's reader refuses:
 *  - SentencePiece (SentencePieceProcessor::Load, C++ protobuf then the model's piece table):
 *    wire data protobuf refuses, a piece without text ("piece must not be empty"), a piece
 *    given twice ("is already defined"), no UNKNOWN piece or two ("unk is not defined" /
 *    "is already defined");
 *  - tiktoken (load_tiktoken_bpe: line.split() into a base64 token and int(rank); its Rust
 *    core wants one token per rank): a line that is not exactly two fields, a token that is not
 *    base64 with its padding, a rank that is not a decimal uint32 or not above the one before
 *    (the writer sorts by rank);
 *  - vocab.txt (transformers' load_vocab: UTF-8 lines, one token each): not UTF-8, or empty;
 *  - merges.txt (tokenizers' BPE::read_file: lines other than "#version..." split on ' ' into
 *    exactly two parts): not UTF-8, or a line that is not two non-empty tokens. */
#include "tokenizer.h"

#include <string.h>

#include "../parser/mem.h"
#include "../parser/protobuf.h"
#include "../parser/sort.h"
#include "../parser/text.h"

/* ---------------------------------------------------------------------------- SentencePiece */

typedef struct spm_piece {
    const uint8_t *text;
    size_t len;
    uint64_t offset;
    bool reserved; /* UNKNOWN, CONTROL, BYTE: kept apart from the other pieces, so a text may
                      be one of each (the processor's two maps) */
} spm_piece;

typedef struct spm_walk {
    spm_piece *pieces;
    size_t n, cap, max;
    uint64_t unknowns;
    stg_report *r;
} spm_walk;

static int piece_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const spm_piece *x = a, *y = b;
    if (x->reserved != y->reserved) {
        return x->reserved ? 1 : -1;
    }
    if (x->len != y->len) {
        return x->len < y->len ? -1 : 1;
    }
    int c = x->len > 0 ? memcmp(x->text, y->text, x->len) : 0;
    return c != 0 ? c : (x->offset < y->offset ? -1 : x->offset > y->offset);
}

static void malformed(stg_report *r, uint64_t at, const char *what)
{
    stg_report_add(r, STG_TOKENIZER_MALFORMED, at, "the tokenizer file does not read: %s", what);
}

/* The next field of c's message: false at its end, or when the wire data breaks (reported:
 * *broken is then set). */
static bool next_field(stg_cursor *c, stg_pb_field *f, stg_report *r, bool *broken)
{
    stg_parse_detail d;
    stg_parse_status s = stg_pb_next(c, f, &d);
    if (s != STG_PARSE_OK && s != STG_PARSE_END) {
        malformed(r, d.offset, d.what);
        *broken = true;
    }
    return s == STG_PARSE_OK;
}

/* One SentencePiece message: its piece text (the last occurrence wins, as in protobuf) and
 * type. false: reported. */
static bool read_piece(spm_walk *w, stg_cursor c, uint64_t at)
{
    spm_piece p = {NULL, 0, at, false};
    bool has_text = false;
    uint64_t type = 1; /* NORMAL, the proto's default */
    stg_pb_field f;
    bool broken = false;
    while (next_field(&c, &f, w->r, &broken)) {
        if (f.number == STG_SPM_PIECE_FIELD_PIECE && f.wire == STG_PB_LEN) {
            p.text = f.sub.base + f.sub.pos;
            p.len = f.sub.end - f.sub.pos;
            has_text = true;
        } else if (f.number == STG_SPM_PIECE_FIELD_TYPE && f.wire == STG_PB_VARINT) {
            /* a closed proto2 enum: a value it does not name leaves the field as it was */
            int32_t v = stg_pb_int32(f.value);
            type = v >= 1 && v <= 6 ? (uint64_t)v : type;
        }
    }
    if (broken) {
        return false;
    }
    if (!has_text || p.len == 0) {
        malformed(w->r, at, "a SentencePiece piece without text (piece must not be empty)");
        return false;
    }
    w->unknowns += type == STG_SPM_TYPE_UNKNOWN;
    p.reserved = type == STG_SPM_TYPE_UNKNOWN || type == STG_SPM_TYPE_CONTROL ||
                 type == STG_SPM_TYPE_BYTE;
    if (w->n == w->cap) {
        size_t cap = w->cap == 0 ? 256 : 2 * w->cap;
        spm_piece *np = w->n < w->max ? stg_mem_realloc(w->pieces, cap * sizeof *np) : NULL;
        if (np == NULL) {
            if (w->n >= w->max) {
                stg_report_limit(w->r, at, "max_metadata_entries", w->max);
            } else {
                stg_report_oom(w->r);
            }
            return false;
        }
        w->pieces = np;
        w->cap = cap;
    }
    w->pieces[w->n++] = p;
    return true;
}

/* The pieces' texts are distinct and exactly one is UNKNOWN. */
static void check_table(spm_walk *w)
{
    stg_sort(w->pieces, w->n, sizeof *w->pieces, piece_cmp, NULL);
    for (size_t i = 1; i < w->n; i++) {
        if (w->pieces[i].reserved == w->pieces[i - 1].reserved &&
            w->pieces[i].len == w->pieces[i - 1].len &&
            memcmp(w->pieces[i].text, w->pieces[i - 1].text, w->pieces[i].len) == 0) {
            malformed(w->r, w->pieces[i].offset, "a SentencePiece piece given twice");
            return;
        }
    }
    if (w->unknowns != 1) {
        malformed(w->r, 0,
                  w->unknowns == 0 ? "no SentencePiece piece of type UNKNOWN (unk is not defined)"
                                   : "two SentencePiece pieces of type UNKNOWN");
    }
}

/* The wire data of a message protobuf parses: its fields only (strings, bytes and numbers, as
 * TrainerSpec and NormalizerSpec hold). false: reported. */
static bool walk_plain(stg_cursor c, stg_report *r)
{
    stg_pb_field f;
    bool broken = false;
    while (next_field(&c, &f, r, &broken)) {
    }
    return !broken;
}

/* SelfTestData: its samples (field 1) are messages of plain fields. */
static bool walk_self_test(stg_cursor c, stg_report *r)
{
    stg_pb_field f;
    bool broken = false;
    while (next_field(&c, &f, r, &broken)) {
        if (f.number == 1 && f.wire == STG_PB_LEN && !walk_plain(f.sub, r)) {
            return false;
        }
    }
    return !broken;
}

stg_status stg_spm_check(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r)
{
    spm_walk w = {NULL, 0, 0, lim->max_metadata_entries, 0, r};
    stg_cursor c = stg_cur_make(buf, len);
    bool ok = true, broken = false;
    stg_pb_field f;
    while (ok && next_field(&c, &f, r, &broken)) {
        if (f.number == STG_SPM_FIELD_PIECES && f.wire == STG_PB_LEN) {
            ok = read_piece(&w, f.sub, f.offset);
        } else if (f.number >= 2 && f.number <= 5 && f.wire == STG_PB_LEN) {
            /* trainer_spec, normalizer_spec, self_test_data, denormalizer_spec */
            ok = f.number == 4 ? walk_self_test(f.sub, r) : walk_plain(f.sub, r);
        }
    }
    if (ok && !broken) {
        check_table(&w);
    }
    stg_mem_free(w.pieces);
    return r->out_of_memory ? STG_E_NOMEM : STG_OK;
}

/* -------------------------------------------------------------------------- text formats */

/* The next line of buf from *pos: [*start, *end) without its "\n" or "\r\n". false at the end. */
static bool next_line(const uint8_t *buf, size_t len, size_t *pos, size_t *start, size_t *end)
{
    if (*pos >= len) {
        return false;
    }
    *start = *pos;
    const uint8_t *nl = memchr(buf + *pos, '\n', len - *pos);
    size_t stop = nl != NULL ? (size_t)(nl - buf) : len;
    *pos = nl != NULL ? stop + 1 : len;
    *end = stop > *start && buf[stop - 1] == '\r' ? stop - 1 : stop;
    return true;
}

static bool utf8_or_report(const uint8_t *buf, size_t len, stg_report *r)
{
    size_t bad = 0;
    if (!stg_utf8_valid(buf, len, false, &bad)) {
        malformed(r, bad, "the file is not UTF-8 text");
        return false;
    }
    return true;
}

static bool is_b64(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/* base64 as base64.b64decode takes it from the alphabet alone: whole quads, '=' only as the
 * padding of the last one (one or two). */
static bool base64_ok(const uint8_t *s, size_t n)
{
    if (n == 0 || n % 4 != 0) {
        return false;
    }
    size_t pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
    for (size_t i = 0; i < n - pad; i++) {
        if (!is_b64(s[i])) {
            return false;
        }
    }
    return true;
}

static bool is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* One tiktoken line [s, e): "<base64> <rank>" with any whitespace around and between. */
static const char *tiktoken_line(const uint8_t *buf, size_t s, size_t e, uint64_t *rank)
{
    size_t field[2][2], nf = 0;
    for (size_t i = s; i < e;) {
        if (is_space(buf[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < e && !is_space(buf[j])) {
            j++;
        }
        if (nf == 2) {
            return "a line of more than a token and a rank";
        }
        field[nf][0] = i;
        field[nf][1] = j;
        nf++;
        i = j;
    }
    if (nf != 2) {
        return "a line without a token and a rank";
    }
    if (!base64_ok(buf + field[0][0], field[0][1] - field[0][0])) {
        return "a token that is not base64";
    }
    uint64_t v = 0;
    for (size_t i = field[1][0]; i < field[1][1]; i++) {
        if (buf[i] < '0' || buf[i] > '9' || (v = v * 10 + (uint64_t)(buf[i] - '0')) > UINT32_MAX) {
            return "a rank that is not a decimal number below 2^32";
        }
    }
    *rank = v;
    return NULL;
}

stg_status stg_tiktoken_check(const uint8_t *buf, size_t len, stg_report *r)
{
    size_t pos = 0, s, e;
    uint64_t prev = 0, lines = 0;
    while (next_line(buf, len, &pos, &s, &e)) {
        bool blank = true;
        for (size_t i = s; i < e && blank; i++) {
            blank = is_space(buf[i]);
        }
        if (blank) {
            continue; /* splitlines() then `if line` skips it */
        }
        uint64_t rank = 0;
        const char *why = tiktoken_line(buf, s, e, &rank);
        if (why == NULL && lines > 0 && rank <= prev) {
            why = "a rank not above the one before (one token per rank, in rank order)";
        }
        if (why != NULL) {
            malformed(r, s, why);
            return STG_OK;
        }
        prev = rank;
        lines++;
    }
    if (lines == 0) {
        malformed(r, 0, "a tiktoken file without a token");
    }
    return STG_OK;
}

stg_status stg_vocab_check(const uint8_t *buf, size_t len, stg_report *r)
{
    if (utf8_or_report(buf, len, r) && len == 0) {
        malformed(r, 0, "an empty vocabulary");
    }
    return STG_OK;
}

stg_status stg_merges_check(const uint8_t *buf, size_t len, stg_report *r)
{
    if (!utf8_or_report(buf, len, r)) {
        return STG_OK;
    }
    static const char version[] = "#version";
    size_t pos = 0, s, e;
    while (next_line(buf, len, &pos, &s, &e)) {
        if (e - s >= sizeof version - 1 && memcmp(buf + s, version, sizeof version - 1) == 0) {
            continue;
        }
        const uint8_t *sp = memchr(buf + s, ' ', e - s);
        size_t cut = sp != NULL ? (size_t)(sp - buf) : e;
        if (sp == NULL || cut == s || cut + 1 == e || memchr(sp + 1, ' ', e - cut - 1) != NULL) {
            malformed(r, s, "a merge line that is not two tokens separated by one space");
            return STG_OK;
        }
    }
    return STG_OK;
}
