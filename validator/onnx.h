/* ONNX rules (internal API; docs/onnx.md): the protobuf wire data of a ModelProto walked with
 * parser/protobuf.h (no schema compiler, no protobuf library), down every GraphProto (the main
 * graph, subgraphs in node attributes, training graphs) and FunctionProto. Pure: no I/O. The
 * external-data files themselves are checked by loader/onnx_external.c, which takes the list
 * this walk extracts. */
#ifndef STG_VALIDATOR_ONNX_H
#define STG_VALIDATOR_ONNX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/arena.h"
#include "report.h"
#include "stguard/stguard.h"

/* Message nesting protobuf's own parser accepts (its default recursion limit). */
#define STG_ONNX_DEPTH_CEILING 100u

/* One tensor whose data lives in another file (TensorProto.data_location = EXTERNAL). Pointers
 * are into the model's bytes. */
typedef struct stg_onnx_external {
    uint64_t offset; /* of the external_data entry that holds "location" (or of the tensor) */
    const uint8_t *location;
    size_t location_len;
    uint64_t data_offset;  /* "offset", 0 when absent */
    uint64_t data_length;  /* "length" */
    bool has_length;       /* absent: the data runs to the end of the file */
    bool safe;             /* the location passed the pure rules: a relative path inside */
    const uint8_t *tensor; /* TensorProto.name */
    size_t tensor_len;
} stg_onnx_external;

/* One entry of ModelProto.opset_import. */
typedef struct stg_onnx_opset {
    uint64_t offset;
    const uint8_t *domain;
    size_t domain_len;
    int64_t version;
} stg_onnx_opset;

typedef struct stg_onnx_model {
    stg_arena arena;
    bool wire_ok; /* the whole ModelProto was readable */
    bool has_ir_version;
    int64_t ir_version;
    stg_onnx_external *ext;
    size_t next;
    stg_onnx_opset *opsets;
    size_t nopsets;
    size_t ext_cap_bytes, opsets_cap_bytes;
} stg_onnx_model;

void stg_onnx_model_init(stg_onnx_model *m);
void stg_onnx_model_release(stg_onnx_model *m);

/* Recognition by content (docs/onnx.md, "Recognition"): true when buf[0..len) walks as a
 * ModelProto: well-formed wire data to its end in which every field has a ModelProto field
 * number with the wire type onnx.proto declares (1 ir_version and 5 model_version varints; 2-4
 * and 6 strings; 7 graph, 8 opset_import, 14 metadata_props, 20 training_info, 25 functions and
 * 26 configuration messages; no group), with ir_version present (1 to STG_ONNX_SNIFF_IR_MAX)
 * and a graph or an opset import; one level down, every opset import walks as an
 * OperatorSetIdProto (1 domain, 2 version) and the graph as a GraphProto (its fields 1, 2, 5,
 * 10-16, all length-delimited). Each byte is read at most twice; nothing is allocated. */
#define STG_ONNX_SNIFF_IR_MAX 0xFFFFu
bool stg_onnx_sniff(const uint8_t *buf, size_t len);

/* An external-data offset or length: decimal digits only, no sign, at most 20, checked (ONNX
 * writes them so). */
bool stg_onnx_decimal(const uint8_t *s, size_t n, uint64_t *out);

/* TensorProto.data_location after a varint of wire_value: the low 32 bits (an enum is an
 * int32 to protobuf, so 2^32 + 1 is EXTERNAL), and, the enum being closed (proto2), a value
 * it does not name (0 DEFAULT, 1 EXTERNAL) leaves `before` as it was. */
int32_t stg_onnx_data_location(uint64_t wire_value, int32_t before);

/* true when loc[0..n) is a location an external-data reader may open: not empty, relative (no
 * leading '/' or '\\', no drive letter), no NUL, no ".." component ('/' and '\\' both
 * separate components, as on Windows). */
bool stg_onnx_location_safe(const uint8_t *loc, size_t n);

/**
 * Validates buf[0..len) as an ONNX ModelProto, adding findings to r.
 * @param lim        limits and profile; never NULL (max_memory caps the walk's tables).
 * @param hash_seed  keys the domain tables (0: STG_HASH_SEED_DEFAULT).
 * @param m          receives opset imports and external-data entries (release it with
 *                   stg_onnx_model_release); NULL: released here.
 * @return STG_OK when the check ran, STG_E_BAD_ARG for NULL arguments.
 */
stg_status stg_onnx_check(const uint8_t *buf, size_t len, const stg_limits *lim, uint64_t hash_seed,
                          stg_report *r, stg_onnx_model *m);

#endif
