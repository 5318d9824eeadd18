/* JSON Lines output (docs/cli.md): one {"type":"file"} record per file, then one
 * {"type":"summary"}; and the {"type":"inspect"} object. Every string is escaped byte by byte:
 * control characters as \u00XX, invalid UTF-8 replaced by U+FFFD, so any output line parses. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = cli_utf8_decode(p + i, len - i, &cp);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

bool cli_json_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    bool replaced = false;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = cli_utf8_decode(p + i, len - i, &cp);
        if (n == 0) {
            fputs("\xEF\xBF\xBD", out); /* U+FFFD */
            replaced = true;
            i++;
            continue;
        }
        unsigned char c = p[i];
        if (n == 1 && (c < 0x20 || c == 0x7F)) {
            fprintf(out, "\\u%04x", c);
        } else if (n == 1 && (c == '"' || c == '\\')) {
            fputc('\\', out);
            fputc(c, out);
        } else {
            fwrite(p + i, 1, n, out);
        }
        i += n;
    }
    fputc('"', out);
    return replaced;
}

static void json_cstr(FILE *out, const char *s)
{
    if (s == NULL) {
        fputs("null", out);
    } else {
        cli_json_string(out, s, strlen(s));
    }
}

static void json_hex(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        fprintf(out, "%02x", *p);
    }
    fputc('"', out);
}

/* "key":"value" plus "key_hex" when value is not valid UTF-8. */
static void json_path_field(FILE *out, const char *key, const char *value)
{
    fprintf(out, "\"%s\":", key);
    json_cstr(out, value);
    if (value != NULL && !cli_utf8_valid(value, strlen(value))) {
        fprintf(out, ",\"%s_hex\":", key);
        json_hex(out, value);
    }
}

void cli_json_record(FILE *out, const stg_report *r, const char *path)
{
    /* the library writes the record (stg_report_to_json): one definition for the CLI and for
     * library users */
    char stackbuf[4096];
    size_t n = 0;
    if (stg_report_to_json(r, path, stackbuf, sizeof stackbuf, &n) != STG_OK) {
        return;
    }
    char *json = stackbuf;
    if (n >= sizeof stackbuf) {
        json = malloc(n + 1);
        if (json == NULL || stg_report_to_json(r, path, json, n + 1, &n) != STG_OK) {
            free(json);
            fprintf(stderr, "stguard: out of memory writing the record of %s\n",
                    path != NULL ? path : "-");
            return;
        }
    }
    fwrite(json, 1, n, out);
    fputc('\n', out);
    if (json != stackbuf) {
        free(json);
    }
}

void cli_json_summary(FILE *out, const cli_summary *s)
{
    fprintf(out,
            "{\"type\":\"summary\",\"schema\":%d,\"files\":%" PRIu64 ",\"ok\":%" PRIu64
            ",\"warn\":%" PRIu64 ",\"invalid\":%" PRIu64 ",\"unsafe\":%" PRIu64
            ",\"error\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":%.3f,\"skipped_git\":%" PRIu64
            ",\"skipped_no_exist\":%" PRIu64 ",\"skipped_locks\":%" PRIu64
            ",\"skipped_incomplete\":%" PRIu64 ",\"tool_version\":",
            CLI_JSON_SCHEMA, s->files, s->verdicts[STG_VERDICT_OK], s->verdicts[STG_VERDICT_WARN],
            s->verdicts[STG_VERDICT_INVALID], s->verdicts[STG_VERDICT_UNSAFE],
            s->verdicts[STG_VERDICT_ERROR], s->bytes, s->seconds, s->skipped_git,
            s->skipped_no_exist, s->skipped_locks, s->skipped_incomplete);
    json_cstr(out, stg_version());
    fputs(",\"policy_version\":", out);
    json_cstr(out, stg_policy_version());
    fprintf(out, ",\"interrupted\":%s}\n", s->interrupted_signal != 0 ? "true" : "false");
}

void cli_json_inspect(FILE *out, const cli_inspect *in)
{
    fprintf(out, "{\"type\":\"inspect\",\"schema\":%d,", CLI_JSON_SCHEMA);
    json_path_field(out, "path", in->path);
    if (!in->model) {
        fprintf(out, ",\"header_length\":%" PRIu64 ",\"data_start\":%" PRIu64, in->header_length,
                in->data_start);
    } else {
        fputs(",\"shards\":[", out);
        for (size_t i = 0; i < in->shard_count; i++) {
            if (i > 0) {
                fputc(',', out);
            }
            json_cstr(out, in->shards[i]);
        }
        fputc(']', out);
    }
    uint64_t params = 0, bytes = 0;
    for (size_t i = 0; i < in->tensor_count; i++) {
        params += cli_tensor_params(in->tensors[i].tensor);
        bytes += in->tensors[i].tensor->end - in->tensors[i].tensor->begin;
    }
    fprintf(out, ",\"parameters\":%" PRIu64 ",\"tensor_bytes\":%" PRIu64, params, bytes);
    fputs(",\"metadata\":{", out);
    for (size_t i = 0; i < in->metadata_count; i++) {
        if (i > 0) {
            fputc(',', out);
        }
        cli_json_string(out, in->meta_keys[i], in->meta_key_lens[i]);
        fputc(':', out);
        cli_json_string(out, in->meta_values[i], in->meta_value_lens[i]);
    }
    fputs("},\"tensors\":[", out);
    for (size_t i = 0; i < in->tensor_count; i++) {
        const stg_tensor *t = in->tensors[i].tensor;
        if (i > 0) {
            fputc(',', out);
        }
        fputs("{\"name\":", out);
        cli_json_string(out, t->name, t->name_len);
        fputs(",\"dtype\":", out);
        json_cstr(out, stg_dtype_name(t->dtype));
        fputs(",\"shape\":[", out);
        for (uint32_t d = 0; d < t->rank; d++) {
            fprintf(out, "%s%" PRIu64, d > 0 ? "," : "", t->shape[d]);
        }
        fprintf(out, "],\"parameters\":%" PRIu64 ",\"begin\":%" PRIu64 ",\"end\":%" PRIu64,
                cli_tensor_params(t), t->begin, t->end);
        if (in->model) {
            fprintf(out, ",\"shard\":%u", in->tensors[i].shard);
        }
        if (in->tensors[i].has_sha256) {
            fprintf(out, ",\"sha256\":\"%s\"", in->tensors[i].sha256);
        }
        fputc('}', out);
    }
    fputs("]}\n", out);
}

/* A GGUF metadata value: strings as strings, numbers and bools as themselves (a float that is
 * not finite as a string: JSON has no NaN), arrays summarised as their element type and count
 * (a tokenizer vocabulary is a count, not 128k strings). */
const char *cli_gguf_type_name(uint32_t type)
{
    static const char *const types[] = {"u8",   "i8",  "u16", "i16", "u32", "i32", "f32",
                                        "bool", "str", "arr", "u64", "i64", "f64"};
    return type < sizeof types / sizeof types[0] ? types[type] : "?";
}

static void json_gguf_value(FILE *out, const stg_gguf_entry *e)
{
    switch (e->type) {
    case 8: cli_json_string(out, e->str, e->str_len); return;
    case 9:
        fprintf(out, "{\"array\":\"%s\",\"count\":%" PRIu64 "}", cli_gguf_type_name(e->elem_type),
                e->count);
        return;
    case 7: fputs(e->u64 != 0 ? "true" : "false", out); return;
    case 6:
    case 12:
        if (e->f64 == e->f64 && e->f64 - e->f64 == 0) {
            fprintf(out, "%.17g", e->f64);
        } else {
            fprintf(out, "\"%s\"", e->f64 != e->f64 ? "nan" : e->f64 > 0 ? "inf" : "-inf");
        }
        return;
    case 1:
    case 3:
    case 5:
    case 11: fprintf(out, "%" PRId64, e->i64); return;
    default: fprintf(out, "%" PRIu64, e->u64); return;
    }
}

void cli_json_inspect_gguf(FILE *out, const char *path, const stg_gguf *g,
                           const stg_summary *templates)
{
    fprintf(out, "{\"type\":\"inspect\",\"schema\":%d,", CLI_JSON_SCHEMA);
    json_path_field(out, "path", path);
    fprintf(out,
            ",\"format\":\"gguf\",\"version\":%u,\"alignment\":%u,\"data_start\":%" PRIu64
            ",\"parameters\":%" PRIu64,
            stg_gguf_version(g), stg_gguf_alignment(g), stg_gguf_data_start(g),
            stg_gguf_parameter_count(g));
    uint64_t bytes = 0;
    size_t nt = stg_gguf_tensor_count(g);
    stg_gguf_tensor_info t;
    for (size_t i = 0; i < nt; i++) {
        if (stg_gguf_tensor_at(g, i, &t) == STG_OK) {
            bytes += t.end - t.begin;
        }
    }
    fprintf(out, ",\"tensor_bytes\":%" PRIu64 ",\"metadata\":{", bytes);
    stg_gguf_entry e;
    for (size_t i = 0; i < stg_gguf_metadata_count(g); i++) {
        if (stg_gguf_metadata_at(g, i, &e) != STG_OK) {
            continue;
        }
        if (i > 0) {
            fputc(',', out);
        }
        cli_json_string(out, e.key, e.key_len);
        fputc(':', out);
        json_gguf_value(out, &e);
    }
    fputs("},\"tensors\":[", out);
    for (size_t i = 0; i < nt; i++) {
        if (stg_gguf_tensor_at(g, i, &t) != STG_OK) {
            continue;
        }
        if (i > 0) {
            fputc(',', out);
        }
        fputs("{\"name\":", out);
        cli_json_string(out, t.name, t.name_len);
        fputs(",\"dtype\":", out);
        json_cstr(out, t.type_name != NULL ? t.type_name : "?");
        fputs(",\"shape\":[", out);
        for (uint32_t d = 0; d < t.n_dims; d++) {
            fprintf(out, "%s%" PRIu64, d > 0 ? "," : "", t.dims[d]);
        }
        fprintf(out, "],\"parameters\":%" PRIu64 ",\"begin\":%" PRIu64 ",\"end\":%" PRIu64 "}",
                t.elements, t.begin, t.end);
    }
    fputc(']', out);
    if (templates != NULL) {
        cli_json_summary_contents(out, templates);
    }
    fputs("}\n", out);
}

/* ------------------------------------------------------------------------------ ONNX */

/* A string of the model, or null when the model has none (s NULL). */
static void json_bytes(FILE *out, const char *s, size_t len)
{
    if (s == NULL) {
        fputs("null", out);
    } else {
        cli_json_string(out, s, len);
    }
}

/* A count or size, or null when the library says it is not computable (UINT64_MAX). */
static void json_known(FILE *out, uint64_t v)
{
    if (v == UINT64_MAX) {
        fputs("null", out);
    } else {
        fprintf(out, "%" PRIu64, v);
    }
}

/* The inputs or outputs: name, element type, shape (a static dimension as a number, a symbolic
 * one as its name, an unknown one as null; no shape at all: null). */
static void json_onnx_values(FILE *out, const stg_onnx *m, bool outputs)
{
    size_t n = outputs ? stg_onnx_output_count(m) : stg_onnx_input_count(m);
    stg_onnx_value_info v;
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if ((outputs ? stg_onnx_output_at(m, i, &v) : stg_onnx_input_at(m, i, &v)) != STG_OK) {
            continue;
        }
        fputs(i > 0 ? ",{\"name\":" : "{\"name\":", out);
        cli_json_string(out, v.name != NULL ? v.name : "", v.name_len);
        fputs(",\"elem_type\":", out);
        json_cstr(out, v.type_name);
        fputs(",\"shape\":", out);
        if (!v.has_shape) {
            fputs("null}", out);
            continue;
        }
        fputc('[', out);
        for (uint32_t d = 0; d < v.rank; d++) {
            if (d > 0) {
                fputc(',', out);
            }
            if (v.dims[d].value >= 0) {
                fprintf(out, "%" PRId64, v.dims[d].value);
            } else {
                json_bytes(out, v.dims[d].param, v.dims[d].param_len);
            }
        }
        fputs("]}", out);
    }
    fputc(']', out);
}

static void json_onnx_tensor(FILE *out, const stg_onnx_tensor_info *t)
{
    fputs("{\"name\":", out);
    cli_json_string(out, t->name != NULL ? t->name : "", t->name_len);
    fputs(",\"dtype\":", out);
    json_cstr(out, t->type_name);
    fputs(",\"shape\":[", out);
    for (uint32_t d = 0; d < t->rank; d++) {
        fprintf(out, "%s%" PRId64, d > 0 ? "," : "", t->dims[d]);
    }
    fputs("],\"parameters\":", out);
    json_known(out, t->elements);
    fputs(",\"bytes\":", out);
    json_known(out, t->bytes);
    if (!t->external) {
        fputs(",\"stored\":\"inline\"}", out);
        return;
    }
    fputs(",\"stored\":\"external\",\"location\":", out);
    json_bytes(out, t->location, t->location_len);
    fprintf(out, ",\"offset\":%" PRIu64 ",\"length\":", t->offset);
    json_known(out, t->has_length ? t->length : UINT64_MAX);
    fputc('}', out);
}

void cli_json_inspect_onnx(FILE *out, const char *path, const stg_onnx *m)
{
    stg_onnx_model_info mi;
    if (stg_onnx_describe(m, &mi) != STG_OK) {
        return;
    }
    fprintf(out, "{\"type\":\"inspect\",\"schema\":%d,", CLI_JSON_SCHEMA);
    json_path_field(out, "path", path);
    fprintf(out, ",\"format\":\"onnx\",\"ir_version\":%" PRId64 ",\"model_version\":%" PRId64,
            mi.ir_version, mi.model_version);
    fputs(",\"producer_name\":", out);
    json_bytes(out, mi.producer_name, mi.producer_name_len);
    fputs(",\"producer_version\":", out);
    json_bytes(out, mi.producer_version, mi.producer_version_len);
    fputs(",\"domain\":", out);
    json_bytes(out, mi.domain, mi.domain_len);
    fputs(",\"graph_name\":", out);
    json_bytes(out, mi.graph_name, mi.graph_name_len);
    fputs(",\"metadata\":{", out);
    for (size_t i = 0; i < stg_onnx_metadata_count(m); i++) {
        const char *k, *v;
        size_t kn, vn;
        if (stg_onnx_metadata_at(m, i, &k, &kn, &v, &vn) == STG_OK) {
            fputs(i > 0 ? "," : "", out);
            cli_json_string(out, k, kn);
            fputc(':', out);
            cli_json_string(out, v, vn);
        }
    }
    fputs("},\"opset_import\":[", out);
    stg_onnx_opset_info o;
    for (size_t i = 0; i < stg_onnx_opset_count(m); i++) {
        if (stg_onnx_opset_at(m, i, &o) == STG_OK) {
            fputs(i > 0 ? ",{\"domain\":" : "{\"domain\":", out);
            cli_json_string(out, o.domain != NULL ? o.domain : "", o.domain_len);
            fprintf(out, ",\"version\":%" PRId64 "}", o.version);
        }
    }
    fputs("],\"inputs\":", out);
    json_onnx_values(out, m, false);
    fputs(",\"outputs\":", out);
    json_onnx_values(out, m, true);
    fprintf(out, ",\"nodes\":%" PRIu64 ",\"op_types\":[", mi.node_count);
    stg_onnx_op_info op;
    for (size_t i = 0; i < stg_onnx_op_count(m); i++) {
        if (stg_onnx_op_at(m, i, &op) == STG_OK) {
            fputs(i > 0 ? ",{\"domain\":" : "{\"domain\":", out);
            cli_json_string(out, op.domain, op.domain_len);
            fputs(",\"op_type\":", out);
            cli_json_string(out, op.op_type, op.op_type_len);
            fprintf(out, ",\"count\":%" PRIu64 ",\"custom\":%s,\"local_function\":%s}", op.count,
                    op.custom ? "true" : "false", op.local_function ? "true" : "false");
        }
    }
    fputs("],\"parameters\":", out);
    json_known(out, mi.parameters);
    fputs(",\"tensor_bytes\":", out);
    json_known(out, mi.tensor_bytes);
    fprintf(out, ",\"external_tensors\":%" PRIu64 ",\"tensors\":[", mi.external_count);
    stg_onnx_tensor_info t;
    for (size_t i = 0; i < stg_onnx_initializer_count(m); i++) {
        if (stg_onnx_initializer_at(m, i, &t) == STG_OK) {
            fputs(i > 0 ? "," : "", out);
            json_onnx_tensor(out, &t);
        }
    }
    fputs("]}\n", out);
}

/* ------------------------------------------------------------------------------ Flax */

static uint64_t flax_elements(const stg_flax_param_info *p)
{
    uint64_t n = 1;
    for (uint32_t d = 0; d < p->rank && d < 32; d++) {
        n *= p->shape[d]; /* validated: the count times the element size fits 63 bits */
    }
    return n;
}

void cli_json_inspect_flax(FILE *out, const char *path, const stg_flax *f)
{
    uint64_t params = 0, bytes = 0;
    stg_flax_param_info p;
    for (size_t i = 0; i < stg_flax_param_count(f); i++) {
        if (stg_flax_param_at(f, i, &p) == STG_OK) {
            params += flax_elements(&p);
            bytes += p.nbytes;
        }
    }
    fprintf(out, "{\"type\":\"inspect\",\"schema\":%d,", CLI_JSON_SCHEMA);
    json_path_field(out, "path", path);
    fprintf(out,
            ",\"format\":\"flax-msgpack\",\"parameters\":%" PRIu64 ",\"tensor_bytes\":%" PRIu64
            ",\"tensors\":[",
            params, bytes);
    for (size_t i = 0; i < stg_flax_param_count(f); i++) {
        if (stg_flax_param_at(f, i, &p) != STG_OK) {
            continue;
        }
        fputs(i > 0 ? ",{\"name\":" : "{\"name\":", out);
        cli_json_string(out, p.name, (size_t)p.name_len);
        fputs(",\"dtype\":", out);
        cli_json_string(out, p.dtype, (size_t)p.dtype_len);
        fputs(",\"shape\":[", out);
        for (uint32_t d = 0; d < p.rank && d < 32; d++) {
            fprintf(out, "%s%" PRIu64, d > 0 ? "," : "", p.shape[d]);
        }
        fprintf(out,
                "],\"parameters\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"offset\":%" PRIu64
                ",\"scalar\":%s}",
                flax_elements(&p), p.nbytes, p.offset, p.ext == 3 ? "true" : "false");
    }
    fputs("]}\n", out);
}

void cli_json_summary_contents(FILE *out, const stg_summary *s)
{
    fputs(",\"contents\":[", out);
    stg_summary_entry e;
    bool first = true;
    for (size_t i = 0; i < stg_summary_count(s); i++) {
        if (stg_summary_at(s, i, &e) != STG_OK) {
            continue;
        }
        fprintf(out, "%s{\"kind\":\"%s\",\"name\":", first ? "" : ",",
                stg_summary_kind_name((stg_summary_kind)e.kind));
        first = false;
        cli_json_string(out, e.name, (size_t)e.name_len);
        fputs(",\"value\":", out);
        cli_json_string(out, e.value, (size_t)e.value_len);
        fprintf(out, ",\"count\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"member\":", e.count,
                e.offset);
        if (e.member != NULL) {
            cli_json_string(out, e.member, strlen(e.member));
        } else {
            fputs("null", out);
        }
        if (e.kind == STG_SUMMARY_CHAT_TEMPLATE) {
            fprintf(out, ",\"verdict\":\"%s\"", stg_verdict_name((stg_verdict)e.verdict));
        }
        if (e.kind == STG_SUMMARY_AUTO_MAP) {
            fprintf(out, ",\"state\":\"%s\"", stg_summary_state_name((stg_summary_state)e.state));
        }
        fputc('}', out);
    }
    fprintf(out, "],\"contents_dropped\":%" PRIu64, stg_summary_dropped(s));
}

void cli_json_inspect_summary(FILE *out, const char *path, const stg_report *rep,
                              const stg_summary *s)
{
    fprintf(out, "{\"type\":\"inspect\",\"schema\":%d,", CLI_JSON_SCHEMA);
    json_path_field(out, "path", path);
    fprintf(out, ",\"format\":\"%s\",\"verdict\":\"%s\"", stg_format_name(stg_report_format(rep)),
            stg_verdict_name(stg_report_verdict(rep)));
    cli_json_summary_contents(out, s);
    fputs("}\n", out);
}
