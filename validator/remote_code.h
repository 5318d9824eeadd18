/* Remote code a Hugging Face config names (docs/remote-code.md): the `auto_map` object of
 * config.json, tokenizer_config.json, preprocessor_config.json and processor_config.json, whose
 * entries transformers resolves with get_class_from_dynamic_module when a caller passes
 * trust_remote_code=True: it imports the module file and runs it. */
#ifndef STG_VALIDATOR_REMOTE_CODE_H
#define STG_VALIDATOR_REMOTE_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* Most auto_map references judged per file; past it, limit_exceeded (a loader has no cap). */
#define STG_AUTO_MAP_REFS_CEILING 256u

/* Reads buf as a JSON config and reports every auto_map reference (remote_code,
 * remote_code_cross_repo, remote_code_invalid). For a top-level file on disk (ctx->beside set,
 * depth 0) each module file is looked up beside the config. false when buf is not JSON (then
 * no loader reads it as a config and nothing was reported); true otherwise, also when a limit
 * stopped the walk (reported). */
bool stg_remote_code_check(const uint8_t *buf, size_t len, stg_check_ctx *ctx);

#endif
