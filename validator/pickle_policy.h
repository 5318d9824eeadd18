/* Pickle global policy: (module, name) -> allowed / benign / dangerous / unknown, in the order of
 * docs/policy.md. Built-in lists carry a version (stg_policy_version); a stg_policy adds the
 * caller's allow and deny entries (--allow-global, --policy FILE; format in docs/policy.md). */
#ifndef STG_VALIDATOR_PICKLE_POLICY_H
#define STG_VALIDATOR_PICKLE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "stguard/stguard.h"

#define STG_POLICY_VERSION "2026.12.2"

/* Why a global got its class (constant text for messages). */
typedef struct stg_policy_verdict {
    stg_global_class klass;
    bool hard_block;    /* on the hard-block list: no option overrides it */
    const char *reason; /* e.g. "hard-block list", "denylist", "private module" */
} stg_policy_verdict;

/* Classifies module.name. p may be NULL (built-in lists only). module and name are bytes with
 * lengths (they may hold anything a pickle wrote). */
stg_policy_verdict stg_policy_classify(const stg_policy *p, const char *module, size_t module_len,
                                       const char *name, size_t name_len);

#endif
