/* What `stguard inspect` and the ONNX door (loader/onnx_open.c) show of a model (internal API;
 * docs/onnx.md, "Inspecting"): the ModelProto's header fields, metadata_props, and its main graph's nodes (an
 * op-type histogram), inputs and outputs (types and shapes) and initializers (types, dims,
 * sizes, where the data is). One pass over the wire data, each message walked once, tables in
 * one arena under max_memory. Pure: no I/O. Meant for a model stg_onnx_check passed. */
#ifndef STG_VALIDATOR_ONNX_INFO_H
#define STG_VALIDATOR_ONNX_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/arena.h"
#include "stguard/stguard.h"

typedef struct stg_onnx_value_rec {
    const uint8_t *name;
    size_t name_len;
    int32_t elem_type;
    bool has_shape;
    uint32_t rank;
    size_t dims_at; /* first of its rank dimensions in stg_onnx_info.vdims */
} stg_onnx_value_rec;

typedef struct stg_onnx_init_rec {
    const uint8_t *name;
    size_t name_len;
    int32_t data_type;
    uint32_t rank;
    size_t dims_at; /* first of its dims in stg_onnx_info.tdims */
    uint64_t elements, bytes, string_bytes;
    bool external, has_length;
    const uint8_t *location;
    size_t location_len;
    uint64_t offset, length;
} stg_onnx_init_rec;

typedef struct stg_onnx_op_rec {
    const uint8_t *domain, *op;
    size_t domain_len, op_len;
    uint64_t count;
    bool custom;
    bool local; /* a function of the model has this domain and name */
} stg_onnx_op_rec;

typedef struct stg_onnx_kv {
    const uint8_t *key, *value;
    size_t key_len, value_len;
} stg_onnx_kv;

typedef struct stg_onnx_info {
    stg_arena arena;
    int64_t ir_version, model_version;
    const uint8_t *producer, *producer_version, *domain, *graph_name;
    size_t producer_len, producer_version_len, domain_len, graph_name_len;
    uint64_t nodes, parameters, tensor_bytes, external;
    stg_onnx_value_rec *inputs, *outputs;
    size_t ninputs, noutputs, inputs_cap, outputs_cap;
    stg_onnx_init_rec *inits;
    size_t ninits, inits_cap;
    stg_onnx_op_rec *ops; /* most frequent first once read */
    size_t nops, ops_cap;
    int64_t *tdims;
    size_t ntdims, tdims_cap;
    stg_onnx_dim *vdims; /* param points into the model's bytes */
    size_t nvdims, vdims_cap;
    stg_onnx_kv *meta; /* ModelProto.metadata_props, in file order */
    size_t nmeta, meta_cap;
    stg_onnx_op_rec *funcs; /* ModelProto.functions: (domain, name), count unused */
    size_t nfuncs, funcs_cap;
} stg_onnx_info;

void stg_onnx_info_init(stg_onnx_info *info);
void stg_onnx_info_release(stg_onnx_info *info);

/**
 * Reads buf[0..len) (a ModelProto) into info (released first, release it after).
 * @param lim   max_memory caps the tables (0: 8 MiB + 4 x len).
 * @param seed  keys the op table (0: STG_HASH_SEED_DEFAULT).
 * @param at    on STG_E_INVALID: the offset of the field that could not be read.
 * @return STG_OK; STG_E_INVALID when wire data the walk reads (inside the messages
 *         stg_onnx_check does not enter: value infos, types, shapes) is malformed;
 *         STG_E_LIMIT_MEMORY when max_memory refused a table; STG_E_LIMIT when the op table hit
 *         its probe ceiling (STG_HASH_PROBE_CEILING); STG_E_BAD_ARG.
 */
stg_status stg_onnx_info_read(const uint8_t *buf, size_t len, const stg_limits *lim, uint64_t seed,
                              stg_onnx_info *info, uint64_t *at);

/* onnx's name of a TensorProto.DataType ("FLOAT", ...), NULL for a value onnx does not define. */
const char *stg_onnx_type_name(int32_t t);

#endif
