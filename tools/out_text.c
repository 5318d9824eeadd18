/* Text output: what a person reads at a glance. Nothing from a file reaches the terminal raw:
 * names and paths are escaped (control bytes, invalid UTF-8, bidirectional overrides). */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "cli.h"

/* Length of the valid UTF-8 sequence at s[0..len) and its code point; 0 when invalid. */
size_t cli_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        n = 2, v = c & 0x1Fu, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, v = c & 0x0Fu, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        return 0;
    }
    *cp = v;
    return n;
}

/* Characters that reorder or hide text on a terminal. */
static bool is_format_char(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

void cli_text_escape(FILE *out, const char *s, size_t len, bool quoted)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        uint32_t cp = 0;
        size_t n = cli_utf8_decode(p + i, len - i, &cp);
        if (n == 0) {
            fprintf(out, "\\x%02x", p[i]);
            i++;
            continue;
        }
        if (n == 1) {
            unsigned char c = p[i];
            if (c < 0x20 || c == 0x7F) {
                fprintf(out, "\\x%02x", c);
            } else if (quoted && (c == '"' || c == '\\')) {
                fprintf(out, "\\%c", c);
            } else {
                fputc(c, out);
            }
        } else if (is_format_char(cp)) {
            fprintf(out, "\\u{%04" PRIX32 "}", cp);
        } else {
            fwrite(p + i, 1, n, out);
        }
        i += n;
    }
}

static void upper(FILE *out, const char *s)
{
    for (; *s != '\0'; s++) {
        fputc(toupper((unsigned char)*s), out);
    }
}

void cli_text_record(FILE *out, const stg_report *r, const char *path)
{
    if (path == NULL) {
        path = stg_report_path(r) != NULL ? stg_report_path(r) : "-";
    }
    cli_text_escape(out, path, strlen(path), false);
    fputs(": ", out);
    upper(out, stg_verdict_name(stg_report_verdict(r)));
    fprintf(out, " (%s)\n", stg_format_name(stg_report_format(r)));
    const char *blob = stg_report_blob(r);
    if (blob != NULL) {
        fputs("  -> ", out);
        cli_text_escape(out, blob, strlen(blob), false);
        fputc('\n', out);
    }
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        fprintf(out, "  %s", stg_code_name(f->code));
        if (f->has_offset) {
            fprintf(out, " @%" PRIu64, f->offset);
        }
        fputs(": ", out);
        cli_text_escape(out, f->message, strlen(f->message), false);
        if (f->tensor != NULL) {
            fputs(" [tensor \"", out);
            cli_text_escape(out, f->tensor, f->tensor_len, true);
            fputs("\"]", out);
        }
        if (f->module != NULL && f->name != NULL) {
            fputs(" [global ", out);
            cli_text_escape(out, f->module, f->module_len, false);
            fputc('.', out);
            cli_text_escape(out, f->name, f->name_len, false);
            fputc(']', out);
        }
        if (f->member != NULL) {
            fputs(" [member \"", out);
            cli_text_escape(out, f->member, strlen(f->member), true);
            fputc('"', out);
            if (f->has_member_offset) {
                fprintf(out, " @%" PRIu64, f->member_offset);
            }
            fputc(']', out);
        }
        if (f->limit != NULL) {
            fprintf(out, " [limit %s]", f->limit);
        }
        fputc('\n', out);
    }
    size_t globals = stg_report_global_count(r);
    if (globals > 0) {
        size_t by_class[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < globals; i++) {
            const stg_global *g = stg_report_global_at(r, i);
            if ((unsigned)g->klass < 4) {
                by_class[g->klass]++;
            }
        }
        fprintf(out, "  globals: %zu allowed, %zu benign, %zu dangerous, %zu unknown\n",
                by_class[STG_GLOBAL_ALLOWED], by_class[STG_GLOBAL_BENIGN],
                by_class[STG_GLOBAL_DANGEROUS], by_class[STG_GLOBAL_UNKNOWN]);
    }
}

void cli_text_summary(FILE *out, const cli_summary *s)
{
    fprintf(out,
            "%" PRIu64 " file%s: %" PRIu64 " ok, %" PRIu64 " warn, %" PRIu64 " invalid, %" PRIu64
            " unsafe, %" PRIu64 " error; %" PRIu64 " bytes in %.2f s\n",
            s->files, s->files == 1 ? "" : "s", s->verdicts[STG_VERDICT_OK],
            s->verdicts[STG_VERDICT_WARN], s->verdicts[STG_VERDICT_INVALID],
            s->verdicts[STG_VERDICT_UNSAFE], s->verdicts[STG_VERDICT_ERROR], s->bytes, s->seconds);
    if (s->skipped_git + s->skipped_no_exist + s->skipped_locks > 0) {
        fprintf(out,
                "skipped folders: %" PRIu64 " .git, %" PRIu64 " .no_exist, %" PRIu64
                " .locks (nothing in them to check)\n",
                s->skipped_git, s->skipped_no_exist, s->skipped_locks);
    }
    if (s->skipped_incomplete > 0) {
        fprintf(out,
                "skipped files: %" PRIu64 " partial download%s (blobs/*.incomplete, linked from "
                "no snapshot)\n",
                s->skipped_incomplete, s->skipped_incomplete == 1 ? "" : "s");
    }
    if (s->interrupted_signal != 0) {
        fprintf(out, "interrupted by %s: the files after these were not scanned\n",
                s->interrupted_signal == 15 ? "SIGTERM" : "SIGINT");
    }
}

uint64_t cli_tensor_params(const stg_tensor *t)
{
    uint64_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) {
        n *= t->shape[d]; /* validated: the count times the element size fits 64 bits */
    }
    return n;
}

/* 1234567 -> "1,234,567" (for people; JSON has plain numbers). */
static const char *grouped(uint64_t v, char buf[32])
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) {
            buf[o++] = ',';
        }
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

static int shape_text(const stg_tensor *t, char *buf, size_t cap)
{
    size_t o = 0;
    buf[o++] = '[';
    for (uint32_t d = 0; d < t->rank && o + 24 < cap; d++) {
        o += (size_t)snprintf(buf + o, cap - o, "%s%" PRIu64, d > 0 ? ", " : "", t->shape[d]);
    }
    if (o + 5 >= cap) {
        o = cap - 5;
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = ']';
    buf[o] = '\0';
    return (int)o;
}

void cli_text_inspect(FILE *out, const cli_inspect *in)
{
    char g1[32], g2[32];
    cli_text_escape(out, in->path, strlen(in->path), false);
    fputc('\n', out);
    if (in->model) {
        fprintf(out, "  sharded model: %zu shard%s\n", in->shard_count,
                in->shard_count == 1 ? "" : "s");
        for (size_t i = 0; i < in->shard_count; i++) {
            fprintf(out, "    %zu: ", i);
            cli_text_escape(out, in->shards[i], strlen(in->shards[i]), false);
            fputc('\n', out);
        }
    } else {
        fprintf(out, "  header length: %" PRIu64 " bytes\n", in->header_length);
        fprintf(out, "  data start:    %" PRIu64 "\n", in->data_start);
        fprintf(out, "  metadata:      %zu entr%s\n", in->metadata_count,
                in->metadata_count == 1 ? "y" : "ies");
        for (size_t i = 0; i < in->metadata_count; i++) {
            fputs("    \"", out);
            cli_text_escape(out, in->meta_keys[i], in->meta_key_lens[i], true);
            fputs("\": \"", out);
            cli_text_escape(out, in->meta_values[i], in->meta_value_lens[i], true);
            fputs("\"\n", out);
        }
    }
    /* totals, overall and per dtype (in the dtype table's order) */
    uint64_t params = 0, bytes = 0, dt_params[32] = {0}, dt_bytes[32] = {0}, dt_count[32] = {0};
    size_t name_w = 4, shape_w = 5;
    for (size_t i = 0; i < in->tensor_count; i++) {
        const stg_tensor *t = in->tensors[i].tensor;
        uint64_t p = cli_tensor_params(t);
        params += p;
        bytes += t->end - t->begin;
        unsigned d = (unsigned)t->dtype < 32 ? (unsigned)t->dtype : 31;
        dt_params[d] += p;
        dt_bytes[d] += t->end - t->begin;
        dt_count[d]++;
        size_t nw = t->name_len > 48 ? 48 : t->name_len;
        name_w = nw > name_w ? nw : name_w;
        char sb[64];
        size_t sw = (size_t)shape_text(t, sb, sizeof sb);
        shape_w = sw > shape_w ? sw : shape_w;
    }
    fprintf(out, "  tensors:       %zu, %s parameters, %s bytes\n", in->tensor_count,
            grouped(params, g1), grouped(bytes, g2));
    for (unsigned d = 0; d < 32; d++) {
        if (dt_count[d] > 0) {
            const char *dn = stg_dtype_name((stg_dtype)d);
            fprintf(out, "    %-11s %6" PRIu64 " tensor%s %15s parameters %15s bytes\n",
                    dn != NULL ? dn : "?", dt_count[d], dt_count[d] == 1 ? " " : "s",
                    grouped(dt_params[d], g1), grouped(dt_bytes[d], g2));
        }
    }
    if (in->tensor_count == 0) {
        return;
    }
    fprintf(out, "\n  %-*s  %-11s  %-*s  %16s  %s\n", (int)name_w, "name", "dtype", (int)shape_w,
            "shape", "parameters", in->model ? "shard: byte range" : "byte range");
    for (size_t i = 0; i < in->tensor_count; i++) {
        const stg_tensor *t = in->tensors[i].tensor;
        fputs("  ", out);
        /* names are escaped, so their width on screen may differ: long ones are cut */
        size_t shown = t->name_len > 48 ? 45 : t->name_len;
        cli_text_escape(out, t->name, shown, false);
        if (shown < t->name_len) {
            fputs("...", out);
        }
        for (size_t k = shown < t->name_len ? 48 : shown; k < name_w; k++) {
            fputc(' ', out);
        }
        char sb[64];
        shape_text(t, sb, sizeof sb);
        const char *dn = stg_dtype_name(t->dtype);
        fprintf(out, "  %-11s  %-*s  %16s  ", dn != NULL ? dn : "?", (int)shape_w, sb,
                grouped(cli_tensor_params(t), g1));
        if (in->model) {
            fprintf(out, "%u: ", t->shard);
        }
        fprintf(out, "[%" PRIu64 ", %" PRIu64 ")", t->begin, t->end);
        if (in->tensors[i].has_sha256) {
            fprintf(out, " sha256 %s", in->tensors[i].sha256);
        }
        fputc('\n', out);
    }
}

static void text_gguf_value(FILE *out, const stg_gguf_entry *e)
{
    switch (e->type) {
    case 8:
        fputc('"', out);
        cli_text_escape(out, e->str, e->str_len > 200 ? 200 : e->str_len, true);
        fputs(e->str_len > 200 ? "...\"" : "\"", out);
        return;
    case 9: {
        char g[32];
        fprintf(out, "[%s x %s]", cli_gguf_type_name(e->elem_type), grouped(e->count, g));
        return;
    }
    case 7: fputs(e->u64 != 0 ? "true" : "false", out); return;
    case 6:
    case 12: fprintf(out, "%g", e->f64); return;
    case 1:
    case 3:
    case 5:
    case 11: fprintf(out, "%" PRId64, e->i64); return;
    default: fprintf(out, "%" PRIu64, e->u64); return;
    }
}

void cli_text_inspect_gguf(FILE *out, const char *path, const stg_gguf *g)
{
    char g1[32], g2[32];
    cli_text_escape(out, path, strlen(path), false);
    fputc('\n', out);
    fprintf(out, "  GGUF version:  %u\n", stg_gguf_version(g));
    fprintf(out, "  alignment:     %u\n", stg_gguf_alignment(g));
    fprintf(out, "  data start:    %" PRIu64 "\n", stg_gguf_data_start(g));
    size_t nm = stg_gguf_metadata_count(g), nt = stg_gguf_tensor_count(g);
    fprintf(out, "  metadata:      %zu entr%s\n", nm, nm == 1 ? "y" : "ies");
    stg_gguf_entry e;
    for (size_t i = 0; i < nm; i++) {
        if (stg_gguf_metadata_at(g, i, &e) != STG_OK) {
            continue;
        }
        fputs("    ", out);
        cli_text_escape(out, e.key, e.key_len, false);
        fprintf(out, " (%s): ", cli_gguf_type_name(e.type));
        text_gguf_value(out, &e);
        fputc('\n', out);
    }
    uint64_t bytes = 0;
    size_t name_w = 4;
    stg_gguf_tensor_info t;
    for (size_t i = 0; i < nt; i++) {
        if (stg_gguf_tensor_at(g, i, &t) == STG_OK) {
            bytes += t.end - t.begin;
            size_t nw = t.name_len > 48 ? 48 : t.name_len;
            name_w = nw > name_w ? nw : name_w;
        }
    }
    fprintf(out, "  tensors:       %zu, %s parameters, %s bytes\n", nt,
            grouped(stg_gguf_parameter_count(g), g1), grouped(bytes, g2));
    if (nt == 0) {
        return;
    }
    fprintf(out, "\n  %-*s  %-8s  %-28s  %16s  %s\n", (int)name_w, "name", "type", "shape",
            "parameters", "byte range");
    for (size_t i = 0; i < nt; i++) {
        if (stg_gguf_tensor_at(g, i, &t) != STG_OK) {
            continue;
        }
        fputs("  ", out);
        size_t shown = t.name_len > 48 ? 45 : t.name_len;
        cli_text_escape(out, t.name, shown, false);
        if (shown < t.name_len) {
            fputs("...", out);
        }
        for (size_t k = shown < t.name_len ? 48 : shown; k < name_w; k++) {
            fputc(' ', out);
        }
        char sb[96];
        size_t at = 0;
        sb[at++] = '[';
        for (uint32_t d = 0; d < t.n_dims && at < sizeof sb - 24; d++) {
            at += (size_t)snprintf(sb + at, sizeof sb - at, "%s%" PRIu64, d > 0 ? ", " : "",
                                   t.dims[d]);
        }
        snprintf(sb + at, sizeof sb - at, "]");
        fprintf(out, "  %-8s  %-28s  %16s  [%" PRIu64 ", %" PRIu64 ")\n",
                t.type_name != NULL ? t.type_name : "?", sb, grouped(t.elements, g1), t.begin,
                t.end);
    }
}
