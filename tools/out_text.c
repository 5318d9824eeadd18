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

void cli_text_finding_names(FILE *out, const stg_finding *f)
{
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
}

void cli_text_record(FILE *out, const stg_report *r, const char *path, bool show_blob)
{
    if (path == NULL) {
        path = stg_report_path(r) != NULL ? stg_report_path(r) : "-";
    }
    cli_text_escape(out, path, strlen(path), false);
    fputs(": ", out);
    upper(out, stg_verdict_name(stg_report_verdict(r)));
    fprintf(out, " (%s)\n", stg_format_name(stg_report_format(r)));
    const char *blob = show_blob ? stg_report_blob(r) : NULL;
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
        cli_text_finding_names(out, f);
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
    if (s->unlisted_ok > 0) {
        fprintf(out, "(%" PRIu64 " ok file%s not listed: -v lists every file)\n", s->unlisted_ok,
                s->unlisted_ok == 1 ? "" : "s");
    }
    fprintf(out,
            "%" PRIu64 " file%s: %" PRIu64 " ok, %" PRIu64 " warn, %" PRIu64 " invalid, %" PRIu64
            " unsafe, %" PRIu64 " error; %" PRIu64 " bytes in %.2f s\n",
            s->files, s->files == 1 ? "" : "s", s->verdicts[STG_VERDICT_OK],
            s->verdicts[STG_VERDICT_WARN], s->verdicts[STG_VERDICT_INVALID],
            s->verdicts[STG_VERDICT_UNSAFE], s->verdicts[STG_VERDICT_ERROR], s->bytes, s->seconds);
    if (s->skipped_git + s->skipped_no_exist + s->skipped_locks > 0) {
        fprintf(out,
                "skipped: %" PRIu64 " .git, %" PRIu64 " .no_exist, %" PRIu64
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
            fprintf(out, "    %zu: ", i + 1); /* numbered from 1, in file order */
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
            fprintf(out, "%u: ", in->tensors[i].shard + 1);
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

/* ------------------------------------------------------------------------------ ONNX */

/* `label: "string"` (or `label: -` when the model has none). */
static void text_onnx_field(FILE *out, const char *label, const char *s, size_t n)
{
    fprintf(out, "  %-18s", label);
    if (s == NULL) {
        fputs("-\n", out);
        return;
    }
    fputc('"', out);
    cli_text_escape(out, s, n > 200 ? 200 : n, true);
    fputs(n > 200 ? "...\"\n" : "\"\n", out);
}

static void text_onnx_values(FILE *out, const stg_onnx *m, bool outputs)
{
    size_t n = outputs ? stg_onnx_output_count(m) : stg_onnx_input_count(m);
    fprintf(out, "  %-18s%zu\n", outputs ? "outputs:" : "inputs:", n);
    stg_onnx_value_info v;
    for (size_t i = 0; i < n; i++) {
        if ((outputs ? stg_onnx_output_at(m, i, &v) : stg_onnx_input_at(m, i, &v)) != STG_OK) {
            continue;
        }
        fputs("    ", out);
        cli_text_escape(out, v.name != NULL ? v.name : "", v.name_len > 64 ? 64 : v.name_len,
                        false);
        fprintf(out, "  %s  ", v.type_name);
        if (!v.has_shape) {
            fputs("(no shape)\n", out);
            continue;
        }
        fputc('[', out);
        for (uint32_t d = 0; d < v.rank && d < 16; d++) {
            fputs(d > 0 ? ", " : "", out);
            if (v.dims[d].value >= 0) {
                fprintf(out, "%" PRId64, v.dims[d].value);
            } else if (v.dims[d].param != NULL) {
                cli_text_escape(out, v.dims[d].param,
                                v.dims[d].param_len > 32 ? 32 : v.dims[d].param_len, false);
            } else {
                fputc('?', out);
            }
        }
        fputs(v.rank > 16 ? ", ...]\n" : "]\n", out);
    }
}

static const char *known(uint64_t v, char buf[32])
{
    return v == UINT64_MAX ? "?" : grouped(v, buf);
}

void cli_text_inspect_onnx(FILE *out, const char *path, const stg_onnx *m)
{
    stg_onnx_model_info mi;
    if (stg_onnx_describe(m, &mi) != STG_OK) {
        return;
    }
    char g1[32], g2[32];
    cli_text_escape(out, path, strlen(path), false);
    fputc('\n', out);
    fprintf(out, "  %-18s%" PRId64 "\n", "ONNX IR version:", mi.ir_version);
    text_onnx_field(out, "producer:", mi.producer_name, mi.producer_name_len);
    text_onnx_field(out, "producer version:", mi.producer_version, mi.producer_version_len);
    text_onnx_field(out, "domain:", mi.domain, mi.domain_len);
    fprintf(out, "  %-18s%" PRId64 "\n", "model version:", mi.model_version);
    text_onnx_field(out, "graph:", mi.graph_name, mi.graph_name_len);
    size_t nm = stg_onnx_metadata_count(m);
    fprintf(out, "  %-18s%zu entr%s\n", "metadata:", nm, nm == 1 ? "y" : "ies");
    for (size_t i = 0; i < nm; i++) {
        const char *k, *v;
        size_t kn, vn;
        if (stg_onnx_metadata_at(m, i, &k, &kn, &v, &vn) == STG_OK) {
            fputs("    \"", out);
            cli_text_escape(out, k, kn > 64 ? 64 : kn, true);
            fputs("\": \"", out);
            cli_text_escape(out, v, vn > 200 ? 200 : vn, true);
            fputs(vn > 200 ? "...\"\n" : "\"\n", out);
        }
    }
    fprintf(out, "  %-18s", "opset imports:");
    stg_onnx_opset_info o;
    for (size_t i = 0; i < stg_onnx_opset_count(m); i++) {
        if (stg_onnx_opset_at(m, i, &o) == STG_OK) {
            fputs(i > 0 ? ", " : "", out);
            cli_text_escape(out, o.domain_len > 0 ? o.domain : "ai.onnx",
                            o.domain_len > 0 ? (o.domain_len > 64 ? 64 : o.domain_len) : 7, false);
            fprintf(out, " %" PRId64, o.version);
        }
    }
    fputc('\n', out);
    text_onnx_values(out, m, false);
    text_onnx_values(out, m, true);
    size_t nops = stg_onnx_op_count(m);
    fprintf(out, "  %-18s%s, %zu op type%s%s\n", "nodes:", grouped(mi.node_count, g1), nops,
            nops == 1 ? "" : "s", nops > CLI_ONNX_TOP ? " (the most frequent below)" : "");
    stg_onnx_op_info op;
    for (size_t i = 0; i < nops && i < CLI_ONNX_TOP; i++) {
        if (stg_onnx_op_at(m, i, &op) != STG_OK) {
            continue;
        }
        fprintf(out, "    %12s  ", grouped(op.count, g1));
        if (op.domain_len > 0) {
            cli_text_escape(out, op.domain, op.domain_len > 64 ? 64 : op.domain_len, false);
            fputc(':', out);
        }
        cli_text_escape(out, op.op_type, op.op_type_len > 64 ? 64 : op.op_type_len, false);
        fputs(op.local_function ? "  (a function of the model)\n"
              : op.custom       ? "  (custom domain)\n"
                                : "\n",
              out);
    }
    size_t nt = stg_onnx_initializer_count(m);
    fprintf(out, "  %-18s%zu, %s parameters, %s bytes, %" PRIu64 " external\n", "initializers:", nt,
            known(mi.parameters, g1), known(mi.tensor_bytes, g2), mi.external_count);
    if (nt == 0) {
        return;
    }
    fprintf(out, "\n  %-32s  %-10s  %-24s  %16s  %14s  %s\n", "name", "type", "shape", "parameters",
            "bytes", "stored");
    stg_onnx_tensor_info t;
    for (size_t i = 0; i < nt; i++) {
        if (stg_onnx_initializer_at(m, i, &t) != STG_OK) {
            continue;
        }
        fputs("  ", out);
        size_t shown = t.name_len > 32 ? 29 : t.name_len;
        cli_text_escape(out, t.name != NULL ? t.name : "", shown, false);
        fputs(shown < t.name_len ? "..." : "", out);
        for (size_t k = shown < t.name_len ? 32 : shown; k < 32; k++) {
            fputc(' ', out);
        }
        char sb[96];
        size_t at = 0;
        sb[at++] = '[';
        for (uint32_t d = 0; d < t.rank && at < sizeof sb - 24; d++) {
            at += (size_t)snprintf(sb + at, sizeof sb - at, "%s%" PRId64, d > 0 ? ", " : "",
                                   t.dims[d]);
        }
        snprintf(sb + at, sizeof sb - at, "]");
        fprintf(out, "  %-10s  %-24s  %16s  %14s  ", t.type_name, sb, known(t.elements, g1),
                known(t.bytes, g2));
        if (!t.external) {
            fputs("inline\n", out);
            continue;
        }
        fputs("external ", out);
        cli_text_escape(out, t.location != NULL ? t.location : "",
                        t.location_len > 64 ? 64 : t.location_len, false);
        fprintf(out, " @%" PRIu64, t.offset);
        if (t.has_length) {
            fprintf(out, " +%" PRIu64, t.length);
        }
        fputc('\n', out);
    }
}

/* ------------------------------------------------------------------------------ Flax */

void cli_text_inspect_flax(FILE *out, const char *path, const stg_flax *f)
{
    char g1[32], g2[32];
    uint64_t params = 0, bytes = 0;
    size_t n = stg_flax_param_count(f);
    stg_flax_param_info p;
    for (size_t i = 0; i < n; i++) {
        if (stg_flax_param_at(f, i, &p) == STG_OK) {
            uint64_t e = 1;
            for (uint32_t d = 0; d < p.rank && d < 32; d++) {
                e *= p.shape[d]; /* validated: fits 63 bits */
            }
            params += e;
            bytes += p.nbytes;
        }
    }
    cli_text_escape(out, path, strlen(path), false);
    fputc('\n', out);
    fprintf(out, "  %-18s%zu array%s, %s parameters, %s bytes\n", "Flax checkpoint:", n,
            n == 1 ? "" : "s", grouped(params, g1), grouped(bytes, g2));
    for (size_t i = 0; i < n; i++) {
        if (stg_flax_param_at(f, i, &p) != STG_OK) {
            continue;
        }
        fputs("    ", out);
        cli_text_escape(out, p.name, (size_t)(p.name_len > 200 ? 200 : p.name_len), true);
        fputs("  ", out);
        cli_text_escape(out, p.dtype, (size_t)(p.dtype_len > 32 ? 32 : p.dtype_len), true);
        fputs(" [", out);
        for (uint32_t d = 0; d < p.rank && d < 32; d++) {
            fprintf(out, "%s%" PRIu64, d > 0 ? ", " : "", p.shape[d]);
        }
        fputs(p.ext == 3 ? "] (scalar)\n" : "]\n", out);
    }
}

/* Rows of one kind: how many there are and their total count. */
static size_t summary_kind_rows(const stg_summary *s, stg_summary_kind kind, uint64_t *total)
{
    size_t n = 0;
    *total = 0;
    stg_summary_entry e;
    for (size_t i = 0; i < stg_summary_count(s); i++) {
        if (stg_summary_at(s, i, &e) == STG_OK && e.kind == (uint32_t)kind) {
            n++;
            *total += e.count;
        }
    }
    return n;
}

static void summary_row(FILE *out, const stg_summary_entry *e)
{
    fputs("    ", out);
    cli_text_escape(out, e->name, (size_t)(e->name_len > 120 ? 120 : e->name_len), true);
    char g[32];
    switch ((stg_summary_kind)e->kind) {
    case STG_SUMMARY_KERAS_MODEL: fprintf(out, "  %s objects", grouped(e->count, g)); break;
    case STG_SUMMARY_KERAS_LAYER:
    case STG_SUMMARY_TF_OP: fprintf(out, "  x%s", grouped(e->count, g)); break;
    case STG_SUMMARY_CHAT_TEMPLATE:
        fprintf(out, "  %s bytes  %s  (", grouped(e->count, g),
                stg_verdict_name((stg_verdict)e->verdict));
        cli_text_escape(out, e->value, (size_t)(e->value_len > 120 ? 120 : e->value_len), false);
        fputc(')', out);
        break;
    case STG_SUMMARY_AUTO_MAP: {
        const char *st = stg_summary_state_name((stg_summary_state)e->state);
        fputs("  ", out);
        cli_text_escape(out, e->value, (size_t)(e->value_len > 200 ? 200 : e->value_len), true);
        fprintf(out, "  %s", st != NULL ? st : "?");
        break;
    }
    }
    if (e->member != NULL) {
        fputs("  in ", out);
        cli_text_escape(out, e->member, strlen(e->member), false);
    }
    fputc('\n', out);
}

/* unit NULL: a list (the row count); else a histogram: total units, then its rows ("classes"). */
static void summary_kind(FILE *out, const stg_summary *s, stg_summary_kind kind, const char *title,
                         const char *unit, const char *rows)
{
    uint64_t total;
    size_t n = summary_kind_rows(s, kind, &total);
    if (n == 0) {
        return;
    }
    char g[32];
    if (unit != NULL) {
        /* unit and rows are "one|many" */
        const char *ub = strchr(unit, '|'), *rb = strchr(rows, '|');
        fprintf(out, "  %-18s%s %.*s, %zu %.*s\n", title, grouped(total, g),
                total == 1 ? (int)(ub - unit) : (int)strlen(ub + 1), total == 1 ? unit : ub + 1, n,
                n == 1 ? (int)(rb - rows) : (int)strlen(rb + 1), n == 1 ? rows : rb + 1);
    } else {
        fprintf(out, "  %-18s%zu\n", title, n);
    }
    stg_summary_entry e;
    for (size_t i = 0; i < stg_summary_count(s); i++) {
        if (stg_summary_at(s, i, &e) == STG_OK && e.kind == (uint32_t)kind) {
            summary_row(out, &e);
        }
    }
}

void cli_text_summary_templates(FILE *out, const stg_summary *s)
{
    summary_kind(out, s, STG_SUMMARY_CHAT_TEMPLATE, "chat templates:", NULL, NULL);
}

void cli_text_inspect_summary(FILE *out, const char *path, const stg_report *rep,
                              const stg_summary *s)
{
    cli_text_escape(out, path, strlen(path), false);
    fputc('\n', out);
    fprintf(out, "  %-18s%s\n", "format:", stg_format_name(stg_report_format(rep)));
    fprintf(out, "  %-18s%s\n", "verdict:", stg_verdict_name(stg_report_verdict(rep)));
    summary_kind(out, s, STG_SUMMARY_KERAS_MODEL, "Keras models:", NULL, NULL);
    summary_kind(out, s, STG_SUMMARY_KERAS_LAYER, "Keras layers:", "layer|layers", "class|classes");
    summary_kind(out, s, STG_SUMMARY_TF_OP, "TensorFlow ops:", "node|nodes", "op type|op types");
    summary_kind(out, s, STG_SUMMARY_CHAT_TEMPLATE, "chat templates:", NULL, NULL);
    summary_kind(out, s, STG_SUMMARY_AUTO_MAP, "auto_map:", NULL, NULL);
    if (stg_summary_dropped(s) > 0) {
        char g[32];
        fprintf(out, "  (%s more entries not kept)\n", grouped(stg_summary_dropped(s), g));
    }
}
