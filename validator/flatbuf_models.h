/* TFLite and ExecuTorch rules (internal API; docs/flatbuffers.md): both are FlatBuffers binaries
 * walked with parser/flatbuffer.h along their schemas (TFLite's schema.fbs, ExecuTorch's
 * program.fbs: the fields read are cited in validator/flatbuf_models.c). Structure that leaves
 * the file is flatbuffer_malformed, an index naming no entry flatbuffer_index_invalid, a data
 * range past the file flatbuffer_data_range; custom and Flex operators, ExecuTorch operators of
 * no core namespace and delegates are warnings naming them. Pure: no I/O. */
#ifndef STG_VALIDATOR_FLATBUF_MODELS_H
#define STG_VALIDATOR_FLATBUF_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* The file identifiers (bytes 4-7 of the file, after the root offset). */
#define STG_TFLITE_IDENTIFIER "TFL3"
#define STG_EXECUTORCH_IDENTIFIER_PREFIX "ET"
/* ExecuTorch's optional extended header, at byte 8. */
#define STG_EXECUTORCH_HEADER_MAGIC "eh00"

/* What a walk saw (for tests and inspect). */
typedef struct stg_fb_model_info {
    uint32_t version;
    uint32_t subgraphs; /* TFLite subgraphs, ExecuTorch execution plans */
    uint32_t operator_codes;
    uint32_t tensors; /* TFLite tensors, ExecuTorch values */
    uint32_t operators;
    uint32_t buffers; /* TFLite buffers, ExecuTorch constant buffers + segments */
    uint32_t custom_ops;
    uint32_t delegates;
    bool complete; /* the walk reached its end */
} stg_fb_model_info;

/* true when buf has TFLite's identifier at bytes 4-7 and a root offset inside the file. */
bool stg_tflite_sniff(const uint8_t *buf, size_t len);
/* true when buf has an ExecuTorch identifier ("ET" and two digits) at bytes 4-7 and a root
 * offset inside the file. */
bool stg_executorch_sniff(const uint8_t *buf, size_t len);

/* Validate buf[0..len) as a TFLite model / an ExecuTorch program, adding findings to r. info
 * may be NULL. STG_OK when the check ran, STG_E_BAD_ARG for NULL arguments. */
stg_status stg_tflite_check(const uint8_t *buf, size_t len, stg_report *r, stg_fb_model_info *info);
stg_status stg_executorch_check(const uint8_t *buf, size_t len, stg_report *r,
                                stg_fb_model_info *info);

#endif
