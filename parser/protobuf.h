/* A bounded walker over protobuf wire data (no schema, no protobuf library): one call reads one
 * field (tag, then its varint, fixed 32/64-bit value or length-delimited payload) through the
 * cursor. Length-delimited payloads come back as a sub-cursor over exactly their bytes, so a
 * caller walks nested messages by walking that cursor (an explicit stack in the caller; nothing
 * here recurses). Groups (wire types 3 and 4, deprecated, which ONNX never writes) are skipped
 * as protobuf's own parser skips unknown groups, nesting at most STG_PB_GROUP_CEILING deep.
 *
 * What is malformed here is what protobuf's parser refuses: a varint of more than 10 bytes or
 * cut short, field number 0, wire types 6 and 7, a length past the end of the enclosing
 * message, an end-group without its start. */
#ifndef STG_PARSER_PROTOBUF_H
#define STG_PARSER_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cursor.h"
#include "status.h"

#define STG_PB_GROUP_CEILING 64u
#define STG_PB_FIELD_MAX 536870911u /* 2^29 - 1 */

typedef enum stg_pb_wire {
    STG_PB_VARINT = 0,
    STG_PB_I64 = 1,
    STG_PB_LEN = 2,
    STG_PB_SGROUP = 3,
    STG_PB_EGROUP = 4,
    STG_PB_I32 = 5
} stg_pb_wire;

/* Why wire data is malformed: the `reason` of a STG_PARSE_MALFORMED detail (parser/status.h). */
typedef enum stg_pb_error {
    STG_PB_E_NONE = 0,
    STG_PB_E_VARINT,    /* a varint longer than 10 bytes or cut by the end */
    STG_PB_E_TRUNCATED, /* a fixed value or a payload runs past the end */
    STG_PB_E_WIRE,      /* wire type 6 or 7, or an end-group without its start */
    STG_PB_E_FIELD,     /* field number 0 (or above 2^29 - 1) */
    STG_PB_E_GROUP      /* groups nested past STG_PB_GROUP_CEILING, or never closed */
} stg_pb_error;

typedef struct stg_pb_field {
    uint32_t number;
    stg_pb_wire wire;
    uint64_t offset; /* absolute offset of the tag */
    uint64_t value;  /* VARINT, I64, I32: the value; LEN: the payload length */
    stg_cursor sub;  /* LEN: the payload (same base, absolute offsets) */
} stg_pb_field;

/* Reads one varint (at most 10 bytes; bits past 64 are dropped as protobuf drops them). */
stg_parse_status stg_pb_varint(stg_cursor *c, uint64_t *out);

/* A varint field's value as protobuf gives it to its declared type (the wire carries 64 bits
 * whatever the type; a reader keeps what its type holds):
 *   int32, enum: the low 32 bits as two's complement (2^32 + 1 is 1; a negative int32 is
 *                written as a 10-byte sign-extended varint, 0xFFFFFFFF00000001 is 1 too);
 *   int64:       all 64 bits as two's complement;  uint64: all 64 bits;
 *   bool:        any nonzero value is true.
 * A proto2 enum (ONNX's schema is proto2) is closed as well: a value its enum does not name
 * goes to the unknown fields and leaves the field as it was; the caller checks the range. */
static inline int32_t stg_pb_int32(uint64_t v)
{
    uint32_t low = (uint32_t)v;
    return low <= (uint32_t)INT32_MAX ? (int32_t)low : -(int32_t)(~low) - 1;
}

static inline int64_t stg_pb_int64(uint64_t v)
{
    return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

static inline bool stg_pb_bool(uint64_t v)
{
    return v != 0;
}

/* Reads the next field of the message c covers: STG_PARSE_OK, STG_PARSE_END (the cursor is at its
 * end: no more fields) or STG_PARSE_MALFORMED, with *d (when not NULL): the offset of the tag
 * whose field is malformed, the stg_pb_error as reason and a text for findings ("a varint of
 * more than 10 bytes", ...); c is then left where it was. */
stg_parse_status stg_pb_next(stg_cursor *c, stg_pb_field *f, stg_parse_detail *d);

#endif
