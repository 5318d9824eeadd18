/* Test-only writer: files without tensors written by ggml's own writer (gguf_write_to_file,
 * ggml's src/gguf.cpp gguf_write_out: header, metadata, tensor infos, then padding to the
 * alignment whatever the tensor count), for tests/differential/script_gguf_ggml.sh. A vocabulary-only model
 * is what a vocabulary-only conversion writes; ggml's reader reads no padding without tensors,
 * so a reader that treats the writer's padding as data would call it trailing bytes. Built by
 * that script against GGML_SRC; not part of stguard's build. Usage: ggml_gguf_write DIR */
#include <stdbool.h>
#include <stdio.h>

#include "gguf.h"

static bool write_one(const char *dir, const char *name, unsigned alignment, bool vocab)
{
    struct gguf_context *ctx = gguf_init_empty();
    gguf_set_val_str(ctx, "general.architecture", "llama");
    if (alignment != 0) {
        gguf_set_val_u32(ctx, "general.alignment", alignment);
    }
    if (vocab) {
        static const char *tokens[] = {"<unk>", "<s>", "</s>", "a", "b"};
        static const float scores[] = {0.0f, 0.0f, 0.0f, -1.0f, -2.0f};
        static const int types[] = {2, 3, 3, 1, 1};
        gguf_set_val_str(ctx, "tokenizer.ggml.model", "llama");
        gguf_set_arr_str(ctx, "tokenizer.ggml.tokens", tokens, 5);
        gguf_set_arr_data(ctx, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, 5);
        gguf_set_arr_data(ctx, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, 5);
        gguf_set_val_bool(ctx, "tokenizer.ggml.add_bos_token", true);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
    bool ok = gguf_write_to_file(ctx, path, false);
    gguf_free(ctx);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        return 2;
    }
    bool ok = write_one(argv[1], "ggml-meta", 0, false) &&
              write_one(argv[1], "ggml-vocab", 0, true) &&
              write_one(argv[1], "ggml-vocab-align64", 64, true) &&
              write_one(argv[1], "ggml-align-8", 8, false) &&
              write_one(argv[1], "ggml-align-2mib", 1u << 21, false);
    return ok ? 0 : 1;
}
