/* Legacy GGML files: the formats llama.cpp and ggml wrote before GGUF (August 2023). Each starts
 * with a uint32 magic that llama.cpp wrote in the host's (little-endian) byte order, so the bytes
 * at offset 0 read backwards: 0x67676d6c 'ggml' (unversioned), 0x67676d66 'ggmf' (version 1),
 * 0x67676a74 'ggjt' (versions 1 to 3), and 0x67676c61 'ggla' for LoRA adapters of the same
 * era; a uint32 version follows every magic but 'ggml'. Only the magic and the version are
 * read: the tensors are not walked (docs/tokenizers.md, "Legacy GGML"). */
#ifndef STG_PARSER_GGML_LEGACY_H
#define STG_PARSER_GGML_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STG_GGML_MAGIC_GGML "lmgg"
#define STG_GGML_MAGIC_GGMF "fmgg"
#define STG_GGML_MAGIC_GGJT "tjgg"
#define STG_GGML_MAGIC_GGLA "algg"
#define STG_GGML_MAGIC_LEN 4u

typedef struct stg_ggml_legacy {
    const char *kind; /* "ggml", "ggmf", "ggjt", "ggla" */
    bool versioned;   /* a version field follows the magic */
    bool has_version; /* ... and the file holds it */
    uint32_t version; /* when has_version */
    bool known;       /* a (magic, version) pair llama.cpp wrote */
} stg_ggml_legacy;

/* true when buf starts with one of the magics above; *out says which, and its version. */
bool stg_ggml_legacy_read(const uint8_t *buf, size_t len, stg_ggml_legacy *out);

#endif
