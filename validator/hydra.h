/* hydra and NeMo configs (docs/yaml.md): every `_target_` of a YAML document (and NeMo's
 * top-level `target`) judged against the namespaces NeMo's own safe_instantiate allows, since
 * hydra.utils.instantiate imports and calls whatever a `_target_` names. */
#ifndef STG_VALIDATOR_HYDRA_H
#define STG_VALIDATOR_HYDRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* Reads buf as YAML (parser/yaml.h) and reports hydra_target_unsafe,
 * hydra_target_unresolved, yaml_malformed, yaml_unsupported or the limit that stopped it. */
void stg_hydra_check(const uint8_t *buf, size_t len, stg_check_ctx *ctx);

/* NULL when a hydra `_target_` of text t[0..n) lies in the allowed namespaces and names no
 * loader or module reached through them; else why not (constant text). */
const char *stg_hydra_target_refusal(const char *t, size_t n);

/* true when hydra's _locate could resolve t[0..n) at all (dotted Python identifiers); a
 * target it cannot resolve makes instantiate raise before anything runs. */
bool stg_hydra_target_locatable(const char *t, size_t n);

#endif
