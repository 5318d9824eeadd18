/* skops files (docs/remote-code.md, "skops"): the schema.json of a .skops zip, judged as skops'
 * own audit judges it before anything is loaded (skops/io/_audit.py, get_untrusted_types), with
 * the pickle policy's deny list on top. */
#ifndef STG_VALIDATOR_SKOPS_H
#define STG_VALIDATOR_SKOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* Reads buf as a JSON document. false when it is no JSON (nothing reported); true otherwise.
 * A document whose top level holds "protocol" and "__loader__" is a skops schema: every node
 * whose type skops does not trust by default is skops_type_untrusted, or skops_type_dangerous
 * when the pickle policy denies it; a schema without them, or a node without its type, is
 * skops_malformed. *is_schema says whether it was a skops schema. */
bool stg_skops_check(const uint8_t *buf, size_t len, stg_check_ctx *ctx, bool *is_schema);

/* true when skops trusts the type module.name for a node of that loader by default. */
bool stg_skops_trusted(const char *loader, const char *module, size_t module_len, const char *name,
                       size_t name_len);

#endif
