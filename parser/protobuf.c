/* Protobuf wire walker (see protobuf.h). Each call consumes at least one byte or fails, so a
 * message of n bytes takes at most n calls; a skipped group is walked in one loop with a depth
 * counter. */
#include "protobuf.h"

stg_pb_status stg_pb_varint(stg_cursor *c, uint64_t *out)
{
    uint64_t v = 0;
    size_t start = c->pos;
    for (unsigned i = 0; i < 10; i++) {
        uint8_t b = 0;
        if (stg_cur_u8(c, &b) != STG_OK) {
            c->pos = start;
            return STG_PB_E_VARINT;
        }
        if (i < 9) {
            v |= (uint64_t)(b & 0x7Fu) << (7u * i);
        } else {
            v |= (uint64_t)(b & 1u) << 63; /* the 10th byte carries bit 63; the rest drop */
        }
        if ((b & 0x80u) == 0) {
            *out = v;
            return STG_PB_OK;
        }
    }
    c->pos = start;
    return STG_PB_E_VARINT;
}

/* Reads a tag: field number and wire type. */
static stg_pb_status read_tag(stg_cursor *c, uint32_t *number, uint32_t *wire)
{
    uint64_t tag = 0;
    stg_pb_status s = stg_pb_varint(c, &tag);
    if (s != STG_PB_OK) {
        return s;
    }
    *wire = (uint32_t)(tag & 7u);
    uint64_t n = tag >> 3;
    if (n == 0 || n > STG_PB_FIELD_MAX) {
        return STG_PB_E_FIELD;
    }
    *number = (uint32_t)n;
    return STG_PB_OK;
}

/* Skips the value of a field whose tag was read (not a group start); LEN fills sub. */
static stg_pb_status read_value(stg_cursor *c, uint32_t wire, uint64_t *value, stg_cursor *sub)
{
    switch (wire) {
    case STG_PB_VARINT: return stg_pb_varint(c, value);
    case STG_PB_I64: return stg_cur_le64(c, value) == STG_OK ? STG_PB_OK : STG_PB_E_TRUNCATED;
    case STG_PB_I32: {
        uint32_t v = 0;
        if (stg_cur_le32(c, &v) != STG_OK) {
            return STG_PB_E_TRUNCATED;
        }
        *value = v;
        return STG_PB_OK;
    }
    case STG_PB_LEN: {
        uint64_t n = 0;
        stg_pb_status s = stg_pb_varint(c, &n);
        if (s != STG_PB_OK) {
            return s;
        }
        if (n > stg_cur_avail(c)) {
            return STG_PB_E_TRUNCATED;
        }
        *value = n;
        (void)stg_cur_sub(c, (size_t)n, sub);
        return STG_PB_OK;
    }
    default: return STG_PB_E_WIRE;
    }
}

/* Skips a group whose start tag (field `number`) was read, up to its matching end. */
static stg_pb_status skip_group(stg_cursor *c, uint32_t number, uint64_t group_at, uint64_t *err_at)
{
    uint32_t open[STG_PB_GROUP_CEILING];
    uint32_t depth = 1;
    open[0] = number;
    while (depth > 0) {
        if (stg_cur_avail(c) == 0) {
            *err_at = group_at; /* never closed: the group's start tag */
            return STG_PB_E_GROUP;
        }
        *err_at = c->pos;
        uint32_t n = 0, wire = 0;
        stg_pb_status s = read_tag(c, &n, &wire);
        if (s != STG_PB_OK) {
            return s;
        }
        if (wire == STG_PB_SGROUP) {
            if (depth == STG_PB_GROUP_CEILING) {
                return STG_PB_E_GROUP;
            }
            open[depth++] = n;
            continue;
        }
        if (wire == STG_PB_EGROUP) {
            if (open[depth - 1] != n) {
                return STG_PB_E_WIRE;
            }
            depth--;
            continue;
        }
        uint64_t v = 0;
        stg_cursor sub;
        s = read_value(c, wire, &v, &sub);
        if (s != STG_PB_OK) {
            return s;
        }
    }
    return STG_PB_OK;
}

stg_pb_status stg_pb_next(stg_cursor *c, stg_pb_field *f, uint64_t *err_at)
{
    for (;;) {
        size_t start = c->pos;
        if (stg_cur_avail(c) == 0) {
            return STG_PB_END;
        }
        *err_at = start;
        uint32_t wire = 0;
        stg_pb_status s = read_tag(c, &f->number, &wire);
        if (s == STG_PB_OK && wire == STG_PB_SGROUP) {
            s = skip_group(c, f->number, start, err_at);
            if (s == STG_PB_OK) {
                continue; /* an unknown group: nothing to report */
            }
        } else if (s == STG_PB_OK) {
            f->wire = (stg_pb_wire)wire;
            f->offset = start;
            f->value = 0;
            f->sub.base = c->base;
            f->sub.pos = f->sub.end = c->pos;
            s = read_value(c, wire, &f->value, &f->sub);
            if (s == STG_PB_OK) {
                return STG_PB_OK;
            }
        }
        c->pos = start;
        return s;
    }
}

const char *stg_pb_status_text(stg_pb_status s)
{
    switch (s) {
    case STG_PB_OK: return "no error";
    case STG_PB_END: return "the end of the message";
    case STG_PB_E_VARINT: return "a varint of more than 10 bytes or cut by the end";
    case STG_PB_E_TRUNCATED: return "a value or payload that runs past the end of its message";
    case STG_PB_E_WIRE: return "an invalid wire type or a stray end-group";
    case STG_PB_E_FIELD: return "field number 0";
    case STG_PB_E_GROUP: return "a group nested too deep or never closed";
    }
    return "malformed wire data";
}
