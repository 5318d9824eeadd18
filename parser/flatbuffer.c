/* The bounded FlatBuffers walker (see flatbuffer.h). The layout is FlatBuffers' binary format
 * (flatbuffers' docs, "Internals"): a table starts with an soffset32 to its vtable (table
 * position minus that value); a vtable is u16 vtable size, u16 table size, then one u16 offset
 * per field (0: absent) from the table's start; a reference field holds a uoffset32 from the
 * field's own position; a vector is a u32 count then its elements; a string is a vector of
 * bytes followed by a NUL. Alignment is checked as FlatBuffers' verifier does by default
 * (tables and offsets 4, vtables 2, scalars their width), positions counted from the buffer's
 * start. A field is checked against the buffer, not against its table's size, as the verifier
 * does. */
#include "flatbuffer.h"

#include "cursor.h"

uint64_t stg_fb_visit_budget(size_t len)
{
    uint64_t budget = 4096u + (uint64_t)len;
    return budget < STG_FB_VISITS_CEILING ? budget : STG_FB_VISITS_CEILING;
}

void stg_fb_init(stg_fb *fb, const uint8_t *buf, size_t len, uint64_t max_visits)
{
    fb->buf = buf;
    fb->len = buf != NULL ? len : 0;
    fb->visits_left = max_visits < STG_FB_VISITS_CEILING ? max_visits : STG_FB_VISITS_CEILING;
    fb->status = STG_PARSE_OK;
    fb->detail = (stg_parse_detail){0, NULL, NULL, 0};
}

/* Records the first failure and returns the walker's status from then on. */
static stg_parse_status fail(stg_fb *fb, stg_parse_status st, size_t at, const char *what)
{
    if (fb->status == STG_PARSE_OK) {
        fb->status = stg_parse_fail(&fb->detail, st, (uint64_t)at, 0, what);
    }
    return fb->status;
}

static stg_parse_status visit(stg_fb *fb, size_t at)
{
    if (fb->visits_left == 0) {
        return fail(fb, STG_PARSE_LIMIT, at,
                    "the walk visited more tables and elements than the file can hold without "
                    "shared offsets");
    }
    fb->visits_left--;
    return STG_PARSE_OK;
}

/* A little-endian scalar of width bytes at pos, aligned to its width. */
static stg_parse_status load(stg_fb *fb, size_t pos, size_t width, uint64_t *out, const char *what)
{
    stg_cursor c = stg_cur_make(fb->buf, fb->len);
    if ((pos & (width - 1)) != 0 || stg_cur_seek(&c, pos) != STG_OK) {
        return fail(fb, STG_PARSE_MALFORMED, pos, what);
    }
    stg_status s;
    uint8_t b8 = 0;
    uint16_t b16 = 0;
    uint32_t b32 = 0;
    uint64_t b64 = 0;
    switch (width) {
    case 1:
        s = stg_cur_u8(&c, &b8);
        b64 = b8;
        break;
    case 2:
        s = stg_cur_le16(&c, &b16);
        b64 = b16;
        break;
    case 4:
        s = stg_cur_le32(&c, &b32);
        b64 = b32;
        break;
    default: s = stg_cur_le64(&c, &b64); break;
    }
    if (s != STG_OK) {
        return fail(fb, STG_PARSE_MALFORMED, pos, what);
    }
    *out = b64;
    return STG_PARSE_OK;
}

/* The table at pos (depth: its nesting), its vtable checked. */
static stg_parse_status table_at(stg_fb *fb, size_t pos, unsigned depth, stg_fb_table *out)
{
    STG_FORWARD_IF_ERROR(fb->status);
    if (depth > STG_FB_DEPTH_CEILING) {
        return fail(fb, STG_PARSE_LIMIT, pos, "tables nested deeper than the walker's ceiling");
    }
    STG_FORWARD_IF_ERROR(visit(fb, pos));
    uint64_t soff = 0, vt_len = 0, tbl_len = 0;
    STG_FORWARD_IF_ERROR(load(fb, pos, 4, &soff, "a table's vtable offset lies outside the file"));
    int64_t vt = (int64_t)pos - (int64_t)(int32_t)(uint32_t)soff;
    if (vt < 0 || (uint64_t)vt > fb->len) {
        return fail(fb, STG_PARSE_MALFORMED, pos, "a table's vtable lies outside the file");
    }
    STG_FORWARD_IF_ERROR(load(fb, (size_t)vt, 2, &vt_len, "a vtable lies outside the file"));
    STG_FORWARD_IF_ERROR(load(fb, (size_t)vt + 2, 2, &tbl_len, "a vtable lies outside the file"));
    if (vt_len < 4 || (vt_len & 1) != 0 || vt_len > fb->len - (size_t)vt) {
        return fail(fb, STG_PARSE_MALFORMED, (size_t)vt,
                    "a vtable's size is odd, too small or past the file's end");
    }
    /* The table's own size is not checked (the verifier reads only the vtable's): writers that
     * share vtables (the Python Builder) leave sizes that fit another table. */
    *out = (stg_fb_table){pos, (size_t)vt, (uint16_t)vt_len, (uint16_t)tbl_len, depth};
    return STG_PARSE_OK;
}

stg_parse_status stg_fb_root(stg_fb *fb, stg_fb_table *out)
{
    uint64_t root = 0;
    STG_FORWARD_IF_ERROR(load(fb, 0, 4, &root, "the file is too short for a root offset"));
    if (root < 8 || root >= fb->len) {
        return fail(fb, STG_PARSE_MALFORMED, 0, "the root table offset lies outside the file");
    }
    return table_at(fb, (size_t)root, 0, out);
}

/* The position of field id inside t, *present false when the vtable gives none. The field's
 * width bytes must lie inside the table. */
static stg_parse_status field_pos(stg_fb *fb, const stg_fb_table *t, unsigned id, size_t width,
                                  size_t *pos, bool *present)
{
    *present = false;
    STG_FORWARD_IF_ERROR(fb->status);
    size_t slot = 4 + 2 * (size_t)id;
    if (slot + 2 > t->vtable_len) {
        return STG_PARSE_OK;
    }
    uint64_t off = 0;
    STG_FORWARD_IF_ERROR(load(fb, t->vtable + slot, 2, &off, "a vtable lies outside the file"));
    if (off == 0) {
        return STG_PARSE_OK;
    }
    /* Inside the buffer, as FlatBuffers' verifier asks (VerifyField: the field's bytes in the
     * buffer, aligned), not inside the table's declared size: writers that share vtables by
     * their field offsets alone (the Python Builder) leave a table size that is too small. */
    if (off > fb->len - t->pos || width > fb->len - t->pos - (size_t)off) {
        return fail(fb, STG_PARSE_MALFORMED, t->vtable + slot,
                    "a field's offset lies outside the file");
    }
    *pos = t->pos + (size_t)off;
    *present = true;
    return STG_PARSE_OK;
}

/* The target of the uoffset at pos (forward, inside the file). */
static stg_parse_status follow(stg_fb *fb, size_t pos, size_t *target)
{
    uint64_t off = 0;
    STG_FORWARD_IF_ERROR(load(fb, pos, 4, &off, "a reference lies outside the file"));
    if (off == 0 || off >= fb->len - pos) {
        return fail(fb, STG_PARSE_MALFORMED, pos, "a reference points outside the file");
    }
    *target = pos + (size_t)off;
    return STG_PARSE_OK;
}

stg_parse_status stg_fb_scalar(stg_fb *fb, const stg_fb_table *t, unsigned id, size_t width,
                               uint64_t def, uint64_t *out)
{
    size_t pos = 0;
    bool present = false;
    *out = def;
    STG_FORWARD_IF_ERROR(field_pos(fb, t, id, width, &pos, &present));
    return present ? load(fb, pos, width, out, "a field lies outside the file") : STG_PARSE_OK;
}

stg_parse_status stg_fb_table_field(stg_fb *fb, const stg_fb_table *t, unsigned id,
                                    stg_fb_table *out, bool *present)
{
    size_t pos = 0, target = 0;
    STG_FORWARD_IF_ERROR(field_pos(fb, t, id, 4, &pos, present));
    if (!*present) {
        return STG_PARSE_OK;
    }
    STG_FORWARD_IF_ERROR(follow(fb, pos, &target));
    return table_at(fb, target, t->depth + 1, out);
}

/* The vector at pos: count, then count x elem bytes inside the file. */
static stg_parse_status vector_at(stg_fb *fb, size_t pos, size_t elem, unsigned depth,
                                  stg_fb_vec *out)
{
    uint64_t count = 0;
    STG_FORWARD_IF_ERROR(load(fb, pos, 4, &count, "a vector's length lies outside the file"));
    size_t data = pos + 4;
    if (count > (fb->len - data) / elem) {
        return fail(fb, STG_PARSE_MALFORMED, pos, "a vector runs past the file's end");
    }
    *out = (stg_fb_vec){data, (uint32_t)count, elem, depth};
    return STG_PARSE_OK;
}

stg_parse_status stg_fb_vector(stg_fb *fb, const stg_fb_table *t, unsigned id, size_t elem,
                               stg_fb_vec *out)
{
    size_t pos = 0, target = 0;
    bool present = false;
    *out = (stg_fb_vec){0, 0, elem, t->depth};
    STG_FORWARD_IF_ERROR(field_pos(fb, t, id, 4, &pos, &present));
    if (!present) {
        return STG_PARSE_OK;
    }
    STG_FORWARD_IF_ERROR(follow(fb, pos, &target));
    return vector_at(fb, target, elem, t->depth, out);
}

/* The string at pos: a byte vector and its NUL, inside the file. */
static stg_parse_status string_at(stg_fb *fb, size_t pos, stg_fb_str *out)
{
    stg_fb_vec v;
    STG_FORWARD_IF_ERROR(visit(fb, pos));
    STG_FORWARD_IF_ERROR(vector_at(fb, pos, 1, 0, &v));
    stg_cursor c = stg_cur_make(fb->buf, fb->len);
    const uint8_t *bytes = NULL;
    if (stg_cur_seek(&c, v.data) != STG_OK ||
        stg_cur_take(&c, (size_t)v.count + 1, &bytes) != STG_OK) {
        return fail(fb, STG_PARSE_MALFORMED, pos,
                    "a string's terminating NUL lies outside the file");
    }
    if (bytes[v.count] != 0) {
        return fail(fb, STG_PARSE_MALFORMED, v.data + v.count, "a string is not NUL-terminated");
    }
    *out = (stg_fb_str){bytes, v.count, pos};
    return STG_PARSE_OK;
}

stg_parse_status stg_fb_string(stg_fb *fb, const stg_fb_table *t, unsigned id, stg_fb_str *out,
                               bool *present)
{
    size_t pos = 0, target = 0;
    *out = (stg_fb_str){NULL, 0, 0};
    STG_FORWARD_IF_ERROR(field_pos(fb, t, id, 4, &pos, present));
    if (!*present) {
        return STG_PARSE_OK;
    }
    STG_FORWARD_IF_ERROR(follow(fb, pos, &target));
    return string_at(fb, target, out);
}

stg_parse_status stg_fb_union(stg_fb *fb, const stg_fb_table *t, unsigned type_id, uint8_t *type,
                              stg_fb_table *value)
{
    uint64_t ty = 0;
    bool present = false;
    *type = 0;
    STG_FORWARD_IF_ERROR(stg_fb_scalar(fb, t, type_id, 1, 0, &ty));
    if (ty == 0) {
        return STG_PARSE_OK;
    }
    STG_FORWARD_IF_ERROR(stg_fb_table_field(fb, t, type_id + 1, value, &present));
    if (!present) {
        return fail(fb, STG_PARSE_MALFORMED, t->pos, "a union names a type but holds no value");
    }
    *type = (uint8_t)ty;
    return STG_PARSE_OK;
}

stg_parse_status stg_fb_vec_table(stg_fb *fb, const stg_fb_vec *v, uint32_t i, stg_fb_table *out)
{
    size_t target = 0;
    STG_FORWARD_IF_ERROR(fb->status);
    if (i >= v->count || v->elem != 4) {
        return fail(fb, STG_PARSE_MALFORMED, v->data, "a vector element past its count");
    }
    size_t pos = v->data + 4 * (size_t)i;
    STG_FORWARD_IF_ERROR(visit(fb, pos));
    STG_FORWARD_IF_ERROR(follow(fb, pos, &target));
    return table_at(fb, target, v->depth + 1, out);
}

stg_parse_status stg_fb_vec_scalar(stg_fb *fb, const stg_fb_vec *v, uint32_t i, uint64_t *out)
{
    STG_FORWARD_IF_ERROR(fb->status);
    if (i >= v->count) {
        return fail(fb, STG_PARSE_MALFORMED, v->data, "a vector element past its count");
    }
    size_t pos = v->data + v->elem * (size_t)i;
    STG_FORWARD_IF_ERROR(visit(fb, pos));
    return load(fb, pos, v->elem, out, "a vector element lies outside the file");
}

stg_parse_status stg_fb_vec_struct_field(stg_fb *fb, const stg_fb_vec *v, uint32_t i, size_t at,
                                         size_t width, uint64_t *out)
{
    STG_FORWARD_IF_ERROR(fb->status);
    if (i >= v->count || at + width > v->elem) {
        return fail(fb, STG_PARSE_MALFORMED, v->data, "a vector element past its count");
    }
    size_t pos = v->data + v->elem * (size_t)i + at;
    STG_FORWARD_IF_ERROR(visit(fb, pos));
    return load(fb, pos, width, out, "a vector element lies outside the file");
}
