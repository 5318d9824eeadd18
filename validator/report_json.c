/* A report as the JSON Lines file record of `stguard scan --format json` (docs/cli.md,
 * docs/cli.schema.json): stg_report_to_json. The CLI writes its records through this function,
 * so a library user gets the same bytes. Written snprintf-style into the caller's buffer: no
 * allocation. Every string is escaped byte by byte: control characters as \u00XX, `"` and `\`
 * with a backslash, invalid UTF-8 replaced by U+FFFD (one per invalid byte), so any record
 * parses whatever the file named. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../parser/text.h"
#include "stguard/stguard.h"

/* The output: bytes go to buf while they fit (one byte kept for the NUL); len counts all. */
typedef struct json_sink {
    char *buf;
    size_t cap;
    size_t len;
} json_sink;

static void put(json_sink *s, const char *p, size_t n)
{
    if (s->len < s->cap) {
        size_t room = s->cap - 1 - s->len;
        memcpy(s->buf + s->len, p, n < room ? n : room);
    }
    s->len += n;
}

static void put_str(json_sink *s, const char *p)
{
    put(s, p, strlen(p));
}

static void put_u64(json_sink *s, uint64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof num, "%" PRIu64, v);
    put(s, num, (size_t)n);
}

/* The escaped characters of p[0..n), without the quotes. */
static void put_json_chars(json_sink *s, const char *p, size_t n)
{
    const uint8_t *u = (const uint8_t *)p;
    for (size_t i = 0; i < n;) {
        size_t k = stg_utf8_seq(u + i, n - i, false);
        if (k == 0) {
            put(s, "\xEF\xBF\xBD", 3); /* U+FFFD */
            i++;
            continue;
        }
        if (k == 1 && (u[i] < 0x20 || u[i] == 0x7F)) {
            char esc[8];
            (void)snprintf(esc, sizeof esc, "\\u%04x", u[i]);
            put(s, esc, 6);
        } else if (k == 1 && (u[i] == '"' || u[i] == '\\')) {
            put(s, "\\", 1);
            put(s, p + i, 1);
        } else {
            put(s, p + i, k);
        }
        i += k;
    }
}

/* A JSON string literal of p[0..n). */
static void put_json_string(json_sink *s, const char *p, size_t n)
{
    put(s, "\"", 1);
    put_json_chars(s, p, n);
    put(s, "\"", 1);
}

/* A NUL-terminated string literal, or null. */
static void put_json_cstr(json_sink *s, const char *p)
{
    if (p == NULL) {
        put_str(s, "null");
    } else {
        put_json_string(s, p, strlen(p));
    }
}

/* "key":"value", plus "key_hex" (the bytes in hex) when value is not valid UTF-8. */
static void put_path_field(json_sink *s, const char *key, const char *value)
{
    put(s, "\"", 1);
    put_str(s, key);
    put(s, "\":", 2);
    put_json_cstr(s, value);
    if (value == NULL || stg_utf8_valid((const uint8_t *)value, strlen(value), false, NULL)) {
        return;
    }
    put(s, ",\"", 2);
    put_str(s, key);
    put(s, "_hex\":\"", 7);
    for (const uint8_t *p = (const uint8_t *)value; *p != '\0'; p++) {
        char hex[3];
        (void)snprintf(hex, sizeof hex, "%02x", *p);
        put(s, hex, 2);
    }
    put(s, "\"", 1);
}

static void put_finding(json_sink *s, const stg_finding *f)
{
    put_str(s, "{\"code\":\"");
    put_str(s, stg_code_name(f->code));
    put_str(s, "\",\"severity\":\"");
    put_str(s, stg_severity_name(f->severity));
    put_str(s, "\",\"offset\":");
    if (f->has_offset) {
        put_u64(s, f->offset);
    } else {
        put_str(s, "null");
    }
    put_str(s, ",\"message\":");
    put_json_cstr(s, f->message);
    if (f->tensor != NULL) {
        put_str(s, ",\"tensor\":");
        put_json_string(s, f->tensor, f->tensor_len);
    }
    if (f->module != NULL && f->name != NULL) {
        /* the exact bytes (an embedded NUL is \u0000), so display and policy agree; "global"
         * is module "." name as one string (the '.' ends any UTF-8 sequence, so escaping the
         * parts is escaping the whole) */
        put_str(s, ",\"module\":");
        put_json_string(s, f->module, f->module_len);
        put_str(s, ",\"name\":");
        put_json_string(s, f->name, f->name_len);
        put_str(s, ",\"global\":\"");
        put_json_chars(s, f->module, f->module_len);
        put(s, ".", 1);
        put_json_chars(s, f->name, f->name_len);
        put(s, "\"", 1);
    }
    if (f->member != NULL) {
        put_str(s, ",\"member\":");
        put_json_cstr(s, f->member);
        if (f->has_member_offset) {
            put_str(s, ",\"member_offset\":");
            put_u64(s, f->member_offset);
        }
    }
    if (f->limit != NULL) {
        put_str(s, ",\"limit\":");
        put_json_cstr(s, f->limit);
    }
    put(s, "}", 1);
}

static void put_global(json_sink *s, const stg_global *g)
{
    put_str(s, "{\"module\":");
    put_json_string(s, g->module, g->module_len);
    put_str(s, ",\"name\":");
    put_json_string(s, g->name, g->name_len);
    put_str(s, ",\"offset\":");
    put_u64(s, g->offset);
    put_str(s, ",\"member\":");
    put_json_cstr(s, g->member);
    put_str(s, ",\"class\":\"");
    put_str(s, stg_global_class_name(g->klass));
    put_str(s, "\"}");
}

stg_status stg_report_to_json(const stg_report *r, const char *path, char *buf, size_t cap,
                              size_t *needed)
{
    if (r == NULL || needed == NULL || (buf == NULL && cap > 0)) {
        return STG_E_BAD_ARG;
    }
    json_sink s = {buf, cap, 0};
    if (path == NULL) {
        path = stg_report_path(r) != NULL ? stg_report_path(r) : "-";
    }
    put_str(&s, "{\"type\":\"file\",\"schema\":");
    put_u64(&s, STG_REPORT_JSON_SCHEMA);
    put(&s, ",", 1);
    put_path_field(&s, "path", path);
    put(&s, ",", 1);
    put_path_field(&s, "blob", stg_report_blob(r));
    put_str(&s, ",\"format\":\"");
    put_str(&s, stg_format_name(stg_report_format(r)));
    put_str(&s, "\",\"size\":");
    put_u64(&s, stg_report_size(r));
    put_str(&s, ",\"sha256\":");
    put_json_cstr(&s, stg_report_sha256(r));
    put_str(&s, ",\"verdict\":\"");
    put_str(&s, stg_verdict_name(stg_report_verdict(r)));
    put_str(&s, "\",\"findings\":[");
    for (size_t i = 0; i < stg_report_count(r); i++) {
        if (i > 0) {
            put(&s, ",", 1);
        }
        put_finding(&s, stg_report_at(r, i));
    }
    put_str(&s, "],\"globals\":[");
    for (size_t i = 0; i < stg_report_global_count(r); i++) {
        if (i > 0) {
            put(&s, ",", 1);
        }
        put_global(&s, stg_report_global_at(r, i));
    }
    put_str(&s, "]}");
    if (cap > 0) {
        buf[s.len < cap ? s.len : cap - 1] = '\0';
    }
    *needed = s.len;
    return STG_OK;
}
