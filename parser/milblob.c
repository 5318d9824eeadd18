/* Core ML blob storage records (parser/milblob.h). */
#include "milblob.h"

#include "cursor.h"

bool stg_milblob_read_header(const uint8_t *rec, size_t len, stg_milblob_header *h)
{
    stg_cursor c = stg_cur_make(rec, len);
    return len >= STG_MILBLOB_RECORD && stg_cur_le32(&c, &h->count) == STG_OK &&
           stg_cur_le32(&c, &h->version) == STG_OK;
}

bool stg_milblob_read_meta(const uint8_t *rec, size_t len, stg_milblob_meta *m)
{
    stg_cursor c = stg_cur_make(rec, len);
    return len >= STG_MILBLOB_RECORD && stg_cur_le32(&c, &m->sentinel) == STG_OK &&
           stg_cur_le32(&c, &m->dtype) == STG_OK && stg_cur_le64(&c, &m->size) == STG_OK &&
           stg_cur_le64(&c, &m->offset) == STG_OK && stg_cur_le64(&c, &m->padding_bits) == STG_OK;
}

bool stg_milblob_next(const stg_milblob_meta *m, uint64_t *next)
{
    uint64_t end, rounded;
    if (stg_add_u64(m->offset, m->size, &end) ||
        stg_add_u64(end, STG_MILBLOB_ALIGNMENT - 1, &rounded)) {
        return false;
    }
    *next = rounded - rounded % STG_MILBLOB_ALIGNMENT;
    return true;
}
