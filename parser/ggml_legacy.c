/* Legacy GGML magics and versions (see ggml_legacy.h). The (magic, version) pairs are those
 * llama.cpp's pre-GGUF loader accepted (llama_file_loader::read_magic in llama.cpp before August
 * 2023: the magic read with read_u32 in host order, then ggmf 1 and ggjt 1 to 3; anything else
 * "unknown (magic, version) combination"); the magic values are llama.h's LLAMA_FILE_MAGIC_*
 * (ggerganov/llama.cpp llama.h at 010571490fd3 still defines LLAMA_FILE_MAGIC_GGLA
 * 0x67676c61u). */
#include "ggml_legacy.h"

#include <string.h>

#include "cursor.h"

bool stg_ggml_legacy_read(const uint8_t *buf, size_t len, stg_ggml_legacy *out)
{
    static const struct {
        const char *magic, *kind;
        bool versioned;
        uint32_t max_version;
    } kinds[] = {
        {STG_GGML_MAGIC_GGML, "ggml", false, 0},
        {STG_GGML_MAGIC_GGMF, "ggmf", true, 1},
        {STG_GGML_MAGIC_GGJT, "ggjt", true, 3},
        {STG_GGML_MAGIC_GGLA, "ggla", true, 1},
    };
    memset(out, 0, sizeof *out);
    stg_cursor c = stg_cur_make(buf, len);
    const uint8_t *magic;
    if (stg_cur_take(&c, STG_GGML_MAGIC_LEN, &magic) != STG_OK) {
        return false;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (memcmp(magic, kinds[i].magic, STG_GGML_MAGIC_LEN) == 0) {
            out->kind = kinds[i].kind;
            out->versioned = kinds[i].versioned;
            out->has_version = out->versioned && stg_cur_le32(&c, &out->version) == STG_OK;
            out->known = !out->versioned || (out->has_version && out->version >= 1 &&
                                             out->version <= kinds[i].max_version);
            return true;
        }
    }
    return false;
}
