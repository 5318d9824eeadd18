/* Core ML rules (validator/coreml.h). */
#include "coreml.h"

#include <string.h>

#include "../parser/arena.h"
#include "../parser/json.h"
#include "../parser/protobuf.h"

static bool is(const stg_json_event *ev, const char *s)
{
    size_t n = strlen(s);
    return !ev->has_escapes && ev->str_len == n && memcmp(ev->str, s, n) == 0;
}

bool stg_coreml_manifest_names(const uint8_t *buf, size_t len, const char *const *paths, size_t n)
{
    stg_arena arena; /* the parser's own bound for this input and depth */
    uint64_t bound = stg_json_memory_bound(len, STG_COREML_MANIFEST_DEPTH);
    stg_arena_init(&arena, bound < SIZE_MAX ? (size_t)bound : SIZE_MAX);
    stg_json_parser p;
    stg_json_init(&p, buf, len, STG_COREML_MANIFEST_DEPTH, &arena);
    stg_json_event ev;
    bool in_items = false, path_key = false, named = false;
    for (stg_json_type t; (t = stg_json_next(&p, &ev)) != STG_JSON_END && t != STG_JSON_ERROR;) {
        if (t == STG_JSON_KEY && ev.depth == 1) {
            in_items = is(&ev, "itemInfoEntries");
        }
        if (t == STG_JSON_STRING && path_key && in_items && ev.depth == 3) {
            for (size_t i = 0; i < n; i++) {
                named = named || is(&ev, paths[i]);
            }
        }
        path_key = t == STG_JSON_KEY && ev.depth == 3 && is(&ev, "path");
    }
    bool ok = p.error == STG_JSON_E_NONE && stg_json_rest_is_ws(buf, len, p.pos);
    stg_json_release(&p);
    stg_arena_release(&arena);
    return ok && named;
}

void stg_coreml_model_check(const uint8_t *buf, size_t len, stg_report *r)
{
    stg_cursor c = stg_cur_make(buf, len);
    stg_pb_field f;
    bool first = true;
    for (;;) {
        stg_parse_detail d;
        stg_parse_status st = stg_pb_next(&c, &f, &d);
        if (st == STG_PARSE_END && !first) {
            return;
        }
        if (st != STG_PARSE_OK) {
            stg_report_add(r, STG_COREML_MODEL_MALFORMED, st == STG_PARSE_END ? 0 : d.offset,
                           "the Core ML model's protobuf wire data cannot be read to its end");
            return;
        }
        if (first && (f.number != 1 || f.wire != STG_PB_VARINT || f.value == 0)) {
            stg_report_add(r, STG_COREML_MODEL_MALFORMED, f.offset,
                           "a Core ML model starts with specificationVersion (field 1, at "
                           "least 1); this one does not");
            return;
        }
        first = false;
    }
}

static void blob_invalid(stg_report *r, uint64_t at, const char *what)
{
    stg_report_add(r, STG_COREML_BLOB_INVALID, at,
                   "the Core ML weights file %s: Core ML's blob storage reader refuses it", what);
}

void stg_coreml_blob_check(stg_coreml_read_fn read_record, void *arg, uint64_t size, stg_report *r)
{
    uint8_t rec[STG_MILBLOB_RECORD];
    stg_milblob_header h;
    if (size < STG_MILBLOB_RECORD || !read_record(arg, 0, rec) ||
        !stg_milblob_read_header(rec, sizeof rec, &h)) {
        blob_invalid(r, 0, "is shorter than its 64-byte header");
        return;
    }
    if (h.version != STG_MILBLOB_VERSION) {
        blob_invalid(r, 4, "has a storage version other than 2");
        return;
    }
    uint64_t at = STG_MILBLOB_RECORD;
    for (uint32_t i = 0; i < h.count; i++) {
        stg_milblob_meta m;
        uint64_t end, next;
        if (at > size || size - at < STG_MILBLOB_RECORD || !read_record(arg, at, rec) ||
            !stg_milblob_read_meta(rec, sizeof rec, &m)) {
            /* the record would start at `at`, past the end: the finding is at the end */
            blob_invalid(r, at < size ? at : size,
                         "ends before a metadata record its header counts");
            return;
        }
        if (m.sentinel != STG_MILBLOB_SENTINEL) {
            blob_invalid(r, at, "has a metadata record without the sentinel 0xDEADBEEF");
            return;
        }
        if (stg_add_u64(m.offset, m.size, &end) || end > size || !stg_milblob_next(&m, &next)) {
            blob_invalid(r, at + 16, "has a blob whose data runs past its end");
            return;
        }
        if (next < at + STG_MILBLOB_RECORD) {
            blob_invalid(r, at + 16, "has a blob whose data ends before its metadata record");
            return; /* the reader's chain would not move forward */
        }
        at = next;
    }
}

typedef struct blob_buffer {
    const uint8_t *buf;
    size_t len;
} blob_buffer;

static bool buffer_record(void *arg, uint64_t at, uint8_t rec[STG_MILBLOB_RECORD])
{
    const blob_buffer *b = arg;
    stg_cursor c = stg_cur_make(b->buf, b->len);
    const uint8_t *p;
    if (at > b->len || stg_cur_seek(&c, (size_t)at) != STG_OK ||
        stg_cur_take(&c, STG_MILBLOB_RECORD, &p) != STG_OK) {
        return false;
    }
    memcpy(rec, p, STG_MILBLOB_RECORD);
    return true;
}

void stg_coreml_blob_check_buffer(const uint8_t *buf, size_t len, stg_report *r)
{
    blob_buffer b = {buf, len};
    stg_coreml_blob_check(buffer_record, &b, len, r);
}
