/* Test-only driver: what ggml's own GGUF reader (gguf_init_from_file, ggml's src/gguf.cpp) reads
 * from each file given, as one JSON line per file, for tests/differential/script_gguf_ggml.sh. Built by that
 * script against a ggml source tree the caller supplies (GGML_SRC); not part of stguard's build.
 * Besides what gguf_init_from_file checks, a file is refused when a tensor's data ends past the
 * file's end, as llama.cpp's model loader refuses it before mapping ("tensor data is not within
 * the file bounds"): gguf_init_from_file with no_alloc reads no tensor data. */
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "ggml.h"
#include "gguf.h"

static void put_string(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        struct ggml_context *meta = NULL;
        struct gguf_init_params params = {.no_alloc = true, .ctx = &meta};
        struct gguf_context *g = gguf_init_from_file(argv[a], params);
        struct stat st;
        int ok = g != NULL && stat(argv[a], &st) == 0;
        int64_t n = ok ? gguf_get_n_tensors(g) : 0;
        size_t data = ok ? gguf_get_data_offset(g) : 0;
        for (int64_t i = 0; ok && i < n; i++) {
            size_t end = data + gguf_get_tensor_offset(g, i) + gguf_get_tensor_size(g, i);
            if (end < data || end > (size_t)st.st_size) {
                ok = 0; /* llama.cpp: tensor data is not within the file bounds */
            }
        }
        printf("{\"file\": ");
        put_string(argv[a]);
        printf(", \"ok\": %s", ok ? "true" : "false");
        if (ok) {
            printf(", \"version\": %u, \"alignment\": %zu, \"data_offset\": %zu, \"tensors\": [",
                   gguf_get_version(g), gguf_get_alignment(g), data);
            for (int64_t i = 0; i < n; i++) {
                const char *name = gguf_get_tensor_name(g, i);
                struct ggml_tensor *t = ggml_get_tensor(meta, name);
                printf("%s{\"name\": ", i == 0 ? "" : ", ");
                put_string(name);
                printf(", \"type\": ");
                put_string(ggml_type_name(gguf_get_tensor_type(g, i)));
                printf(", \"ne\": [");
                /* all GGML_MAX_DIMS entries: ggml pads a tensor's dimensions with 1 */
                int dims = t != NULL ? GGML_MAX_DIMS : 0;
                for (int d = 0; d < dims; d++) {
                    printf("%s%" PRId64, d == 0 ? "" : ", ", t->ne[d]);
                }
                printf("], \"begin\": %zu, \"end\": %zu}", data + gguf_get_tensor_offset(g, i),
                       data + gguf_get_tensor_offset(g, i) + gguf_get_tensor_size(g, i));
            }
            printf("]");
        }
        printf("}\n");
        if (g != NULL) {
            gguf_free(g);
        }
        if (meta != NULL) {
            ggml_free(meta);
        }
    }
    return 0;
}
