/* Tokenizer and vocabulary files a model repository ships beside its weights (internal API;
 * docs/tokenizers.md): SentencePiece models (tokenizer.model: a protobuf ModelProto), tiktoken
 * BPE files (*.tiktoken), WordPiece vocabularies (vocab.txt) and BPE merge lists (merges.txt).
 * None of them runs code when loaded; each is checked for the form its reader takes, and one
 * its reader refuses is tokenizer_malformed. Pure: no I/O. */
#ifndef STG_VALIDATOR_TOKENIZER_H
#define STG_VALIDATOR_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* SentencePiece's ModelProto fields and piece types (sentencepiece_model.proto). */
#define STG_SPM_FIELD_PIECES 1u
#define STG_SPM_PIECE_FIELD_PIECE 1u
#define STG_SPM_PIECE_FIELD_TYPE 3u
#define STG_SPM_TYPE_UNKNOWN 2u
#define STG_SPM_TYPE_CONTROL 3u
#define STG_SPM_TYPE_BYTE 6u

/* The four checks add their findings to r; each returns STG_OK, or STG_E_NOMEM (the report
 * then fails closed). */
stg_status stg_spm_check(const uint8_t *buf, size_t len, const stg_limits *lim, stg_report *r);
stg_status stg_tiktoken_check(const uint8_t *buf, size_t len, stg_report *r);
stg_status stg_vocab_check(const uint8_t *buf, size_t len, stg_report *r);
stg_status stg_merges_check(const uint8_t *buf, size_t len, stg_report *r);

#endif
