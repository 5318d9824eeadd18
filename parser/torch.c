/* Legacy torch framing (see torch.h). */
#include "torch.h"

#include <string.h>

bool stg_torch_legacy_magic(const uint8_t *buf, size_t len)
{
    static const uint8_t magic_long1[] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                                          0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
    static const char magic_line[] = "L119547037146038801333356L\n.";
    if (buf == NULL) {
        return false;
    }
    stg_cursor c = stg_cur_make(buf, len);
    const uint8_t *p;
    if (stg_cur_peek(&c, sizeof magic_line - 1, &p) == STG_OK &&
        memcmp(p, magic_line, sizeof magic_line - 1) == 0) {
        return true;
    }
    /* PROTO 2..5, then an optional FRAME (opcode and 8-byte length) */
    if (stg_cur_take(&c, 2, &p) != STG_OK || p[0] != 0x80 || p[1] < 2 || p[1] > 5) {
        return false;
    }
    if (stg_cur_peek(&c, 9, &p) == STG_OK && p[0] == 0x95) {
        (void)stg_cur_skip(&c, 9);
    }
    return stg_cur_peek(&c, sizeof magic_long1, &p) == STG_OK &&
           memcmp(p, magic_long1, sizeof magic_long1) == 0;
}

stg_status stg_torch_storage_record(stg_cursor *c, uint64_t elsize, uint64_t *bytes)
{
    uint64_t count;
    if (stg_cur_le64(c, &count) != STG_OK) {
        return STG_E_TRUNCATED;
    }
    if (stg_mul_u64(count, elsize, bytes) || *bytes > stg_cur_avail(c)) {
        return STG_E_INT_OVERFLOW;
    }
    return STG_OK;
}

bool stg_torch01_tensor_record(stg_cursor *c)
{
    stg_cursor t = *c;
    uint32_t ndim;
    if (stg_cur_le32(&t, &ndim) != STG_OK || ndim > STG_TORCH01_MAX_NDIM) {
        return false;
    }
    /* 4 pad bytes, sizes and strides, the storage offset */
    uint64_t rest = 4 + 16 * (uint64_t)ndim + 8;
    if (rest > stg_cur_avail(&t)) {
        return false;
    }
    (void)stg_cur_skip(&t, (size_t)rest);
    *c = t;
    return true;
}
