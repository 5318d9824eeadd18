/* Format sniffing: content decides, names only hint (DESIGN.md section 6). Every rule reads
 * through explicit length checks; nothing here allocates. */
#include "sniff.h"

#include <string.h>

#include "../parser/util.h"
#include "check.h"

static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    if (k > n) {
        return false;
    }
    const char *tail = s + (n - k);
    for (size_t i = 0; i < k; i++) {
        char a = tail[i];
        if (a >= 'A' && a <= 'Z') {
            a = (char)(a - 'A' + 'a');
        }
        if (a != suffix[i]) {
            return false;
        }
    }
    return true;
}

stg_name_hint stg_name_hint_of(const char *name)
{
    stg_name_hint h;
    memset(&h, 0, sizeof h);
    if (name == NULL) {
        return h;
    }
    static const char *const pickle_suffixes[] = {".bin", ".pt", ".pth", ".ckpt", ".pkl",
                                                  ".pickle", ".joblib", ".npy", ".npz"};
    size_t n = strlen(name);
    h.safetensors_index = ends_with_ci(name, n, ".safetensors.index.json");
    h.safetensors = ends_with_ci(name, n, ".safetensors");
    h.onnx = ends_with_ci(name, n, ".onnx");
    h.joblib = ends_with_ci(name, n, ".joblib");
    for (size_t i = 0; i < sizeof pickle_suffixes / sizeof pickle_suffixes[0]; i++) {
        if (ends_with_ci(name, n, pickle_suffixes[i])) {
            h.claims_pickle = true;
        }
    }
    return h;
}

static bool is_json_ws(uint8_t b)
{
    return b == ' ' || b == '\t' || b == '\r' || b == '\n';
}

bool stg_sniff_is_safetensors(const uint8_t *buf, size_t len)
{
    if (len < 10) {
        return false;
    }
    uint64_t n = stg_le64(buf);
    if (n < 2 || n > (uint64_t)(len - 8)) {
        return false;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint8_t b = buf[8 + i];
        if (!is_json_ws(b)) {
            return b == '{';
        }
    }
    return false;
}

bool stg_sniff_is_pickle(const uint8_t *buf, size_t len)
{
    /* PROTO opcode with a protocol the reference unpickler knows. */
    return len >= 2 && buf[0] == 0x80 && buf[1] <= 5;
}

static bool has_prefix(const uint8_t *buf, size_t len, const char *magic, size_t k)
{
    return len >= k && memcmp(buf, magic, k) == 0;
}

stg_sniff_kind stg_sniff_kind_of(const uint8_t *buf, size_t len)
{
    if (stg_sniff_is_safetensors(buf, len)) {
        return STG_SNIFF_SAFETENSORS;
    }
    if (has_prefix(buf, len, "PK\x03\x04", 4) || has_prefix(buf, len, "PK\x05\x06", 4)) {
        return STG_SNIFF_ZIP;
    }
    if (has_prefix(buf, len, "\x93NUMPY", 6)) {
        return STG_SNIFF_NPY;
    }
    if (has_prefix(buf, len, "GGUF", 4)) {
        return STG_SNIFF_GGUF;
    }
    if (stg_sniff_is_pickle(buf, len)) {
        return STG_SNIFF_PICKLE;
    }
    return STG_SNIFF_UNKNOWN;
}

stg_format stg_sniff(const uint8_t *buf, size_t len, const char *name_hint)
{
    stg_name_hint h = stg_name_hint_of(name_hint);
    if (h.safetensors_index) {
        return STG_FMT_SAFETENSORS_INDEX;
    }
    if (h.safetensors) {
        return STG_FMT_SAFETENSORS;
    }
    switch (stg_sniff_kind_of(buf, len)) {
    case STG_SNIFF_SAFETENSORS: return STG_FMT_SAFETENSORS;
    case STG_SNIFF_PICKLE: return h.joblib ? STG_FMT_JOBLIB : STG_FMT_PICKLE;
    case STG_SNIFF_TORCH_LEGACY: return STG_FMT_TORCH_LEGACY;
    case STG_SNIFF_ZIP: return STG_FMT_ZIP;
    case STG_SNIFF_NPY: return STG_FMT_NUMPY;
    case STG_SNIFF_TAR: return STG_FMT_TAR;
    case STG_SNIFF_GZIP: return STG_FMT_GZIP;
    case STG_SNIFF_ZLIB: return STG_FMT_ZLIB;
    case STG_SNIFF_BZ2: return STG_FMT_BZ2;
    case STG_SNIFF_XZ:
    case STG_SNIFF_LZMA: return STG_FMT_XZ;
    case STG_SNIFF_GGUF: return STG_FMT_GGUF;
    case STG_SNIFF_ZSTD:
    case STG_SNIFF_LZ4:
    case STG_SNIFF_UNKNOWN: break;
    }
    return h.onnx ? STG_FMT_ONNX : STG_FMT_UNKNOWN;
}
