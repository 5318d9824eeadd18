/* Protobuf wire walker (see protobuf.h). Each call consumes at least one byte or fails, so a
 * message of n bytes takes at most n calls; a skipped group is walked in one loop with a depth
 * counter. Failures go through pb_fail (parser/status.h: STG_PARSE_MALFORMED, the offset of the
 * tag being read, the stg_pb_error as the reason and its text). */
#include "protobuf.h"

static const char *pb_error_text(stg_pb_error e)
{
    switch (e) {
    case STG_PB_E_NONE: return "no error";
    case STG_PB_E_VARINT: return "a varint of more than 10 bytes or cut by the end";
    case STG_PB_E_TRUNCATED: return "a value or payload that runs past the end of its message";
    case STG_PB_E_WIRE: return "an invalid wire type or a stray end-group";
    case STG_PB_E_FIELD: return "field number 0";
    case STG_PB_E_GROUP: return "a group nested too deep or never closed";
    }
    return "malformed wire data";
}

static stg_parse_status pb_fail(stg_parse_detail *d, uint64_t at, stg_pb_error e)
{
    return stg_parse_fail(d, STG_PARSE_MALFORMED, at, (int)e, pb_error_text(e));
}

stg_parse_status stg_pb_varint(stg_cursor *c, uint64_t *out)
{
    uint64_t v = 0;
    size_t start = c->pos;
    for (unsigned i = 0; i < 10; i++) {
        uint8_t b = 0;
        if (stg_cur_u8(c, &b) != STG_OK) {
            c->pos = start;
            return STG_PARSE_MALFORMED;
        }
        if (i < 9) {
            v |= (uint64_t)(b & 0x7Fu) << (7u * i);
        } else {
            v |= (uint64_t)(b & 1u) << 63; /* the 10th byte carries bit 63; the rest drop */
        }
        if ((b & 0x80u) == 0) {
            *out = v;
            return STG_PARSE_OK;
        }
    }
    c->pos = start;
    return STG_PARSE_MALFORMED;
}

/* stg_pb_varint with the detail of a failure (at: the tag being read). */
static stg_parse_status read_varint(stg_cursor *c, uint64_t *out, uint64_t at, stg_parse_detail *d)
{
    if (stg_pb_varint(c, out) != STG_PARSE_OK) {
        return pb_fail(d, at, STG_PB_E_VARINT);
    }
    return STG_PARSE_OK;
}

/* Reads a tag: field number and wire type. */
static stg_parse_status read_tag(stg_cursor *c, uint32_t *number, uint32_t *wire, uint64_t at,
                                 stg_parse_detail *d)
{
    uint64_t tag = 0;
    STG_FORWARD_IF_ERROR(read_varint(c, &tag, at, d));
    *wire = (uint32_t)(tag & 7u);
    uint64_t n = tag >> 3;
    if (n == 0 || n > STG_PB_FIELD_MAX) {
        return pb_fail(d, at, STG_PB_E_FIELD);
    }
    *number = (uint32_t)n;
    return STG_PARSE_OK;
}

/* Skips the value of a field whose tag was read (not a group start); LEN fills sub. */
static stg_parse_status read_value(stg_cursor *c, uint32_t wire, uint64_t *value, stg_cursor *sub,
                                   uint64_t at, stg_parse_detail *d)
{
    switch (wire) {
    case STG_PB_VARINT: return read_varint(c, value, at, d);
    case STG_PB_I64:
        return stg_cur_le64(c, value) == STG_OK ? STG_PARSE_OK : pb_fail(d, at, STG_PB_E_TRUNCATED);
    case STG_PB_I32: {
        uint32_t v = 0;
        if (stg_cur_le32(c, &v) != STG_OK) {
            return pb_fail(d, at, STG_PB_E_TRUNCATED);
        }
        *value = v;
        return STG_PARSE_OK;
    }
    case STG_PB_LEN: {
        uint64_t n = 0;
        STG_FORWARD_IF_ERROR(read_varint(c, &n, at, d));
        if (n > stg_cur_avail(c)) {
            return pb_fail(d, at, STG_PB_E_TRUNCATED);
        }
        *value = n;
        (void)stg_cur_sub(c, (size_t)n, sub);
        return STG_PARSE_OK;
    }
    default: return pb_fail(d, at, STG_PB_E_WIRE);
    }
}

/* Skips a group whose start tag (field `number`, at group_at) was read, up to its matching
 * end; a failure is reported at the tag being read. */
static stg_parse_status skip_group(stg_cursor *c, uint32_t number, uint64_t group_at,
                                   stg_parse_detail *d)
{
    uint32_t open[STG_PB_GROUP_CEILING];
    uint32_t depth = 1;
    open[0] = number;
    while (depth > 0) {
        if (stg_cur_avail(c) == 0) {
            return pb_fail(d, group_at, STG_PB_E_GROUP); /* never closed: the group's start */
        }
        uint64_t at = c->pos;
        uint32_t n = 0, wire = 0;
        STG_FORWARD_IF_ERROR(read_tag(c, &n, &wire, at, d));
        if (wire == STG_PB_SGROUP) {
            if (depth == STG_PB_GROUP_CEILING) {
                return pb_fail(d, at, STG_PB_E_GROUP);
            }
            open[depth++] = n;
            continue;
        }
        if (wire == STG_PB_EGROUP) {
            if (open[depth - 1] != n) {
                return pb_fail(d, at, STG_PB_E_WIRE);
            }
            depth--;
            continue;
        }
        uint64_t v = 0;
        stg_cursor sub;
        STG_FORWARD_IF_ERROR(read_value(c, wire, &v, &sub, at, d));
    }
    return STG_PARSE_OK;
}

stg_parse_status stg_pb_next(stg_cursor *c, stg_pb_field *f, stg_parse_detail *d)
{
    for (;;) {
        size_t start = c->pos;
        if (stg_cur_avail(c) == 0) {
            return STG_PARSE_END;
        }
        uint32_t wire = 0;
        stg_parse_status s = read_tag(c, &f->number, &wire, start, d);
        if (s == STG_PARSE_OK && wire == STG_PB_SGROUP) {
            s = skip_group(c, f->number, start, d);
            if (s == STG_PARSE_OK) {
                continue; /* an unknown group: nothing to report */
            }
        } else if (s == STG_PARSE_OK) {
            f->wire = (stg_pb_wire)wire;
            f->offset = start;
            f->value = 0;
            f->sub.base = c->base;
            f->sub.pos = f->sub.end = c->pos;
            s = read_value(c, wire, &f->value, &f->sub, start, d);
            if (s == STG_PARSE_OK) {
                return STG_PARSE_OK;
            }
        }
        c->pos = start;
        return s;
    }
}
