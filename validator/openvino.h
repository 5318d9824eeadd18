/* OpenVINO IR rules (internal API; docs/openvino.md): the model's XML (`openvino_model.xml`)
 * read with parser/xml.h, as OpenVINO's IR frontend reads it (src/frontends/ir/src/frontend.cpp
 * and ir_deserializer.cpp). Pure: no I/O. The weights file (the XML's path with its extension
 * replaced by `.bin`) is checked by loader/sibling.c against the constants this walk extracts. */
#ifndef STG_VALIDATOR_OPENVINO_H
#define STG_VALIDATOR_OPENVINO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* Constants kept for one IR (their ranges are checked against the weights file). */
#define STG_OPENVINO_CONSTS_CEILING 1000000u
/* How far into the file the root element is looked for (a comment or declaration first). */
#define STG_OPENVINO_SNIFF_WINDOW 65536u

/* One Const layer whose value is read from the weights file. */
typedef struct stg_openvino_const {
    uint64_t offset;      /* of its <data> element in the XML */
    uint64_t data_offset; /* `offset` */
    uint64_t data_size;   /* `size` */
    char *name;           /* the layer's `name` (decoded), NULL when absent */
    size_t name_len;
} stg_openvino_const;

typedef struct stg_openvino_ir {
    bool complete; /* the whole XML read well-formed, every Const kept */
    stg_openvino_const *consts;
    size_t nconsts, cap;
} stg_openvino_ir;

void stg_openvino_ir_init(stg_openvino_ir *ir);
void stg_openvino_ir_release(stg_openvino_ir *ir);

/* Recognition by content: the text starts (after an optional byte order mark, white space,
 * the XML declaration, processing instructions and comments, within the first
 * STG_OPENVINO_SNIFF_WINDOW bytes) with a root element named `net` (ASCII case-insensitively,
 * as the frontend compares it). */
bool stg_openvino_sniff(const uint8_t *buf, size_t len);

/* The bits of one element of an OpenVINO element type name (`f32`, `FP16`, `u4`, `boolean`,
 * ...: the names element::Type's string constructor accepts, which the IR writes); 0 for
 * `string` (no fixed size) and false for a name it refuses or a type a constant cannot hold
 * (`undefined`, `dynamic`). */
bool stg_openvino_element_bits(const uint8_t *s, size_t n, uint32_t *bits);

/**
 * Validates buf[0..len) as an OpenVINO IR, adding findings: xml_malformed, openvino_version_
 * unsupported (the root's `version` is not 10 or 11, which the frontend reads),
 * openvino_const_invalid (a Const layer's <data>: offset, size, element_type, shape), and
 * limit_exceeded (STG_OPENVINO_CONSTS_CEILING). ir (may be NULL) receives the constants read
 * from the weights file.
 * @return STG_OK when the check ran; STG_E_NOMEM; STG_E_BAD_ARG for NULL arguments.
 */
stg_status stg_openvino_check(const uint8_t *buf, size_t len, stg_report *r, stg_openvino_ir *ir);

#endif
