/* Target: parser/zip (stg_zip_open, stg_zip_next, stg_zip_sort_overlaps, stg_zip_local_next), parser/inflate on every
 * deflated entry with small caps, and parser/tar over the same bytes.
 * Properties: every name, local header and data range an entry yields lies inside the buffer;
 * two walks over the same bytes give the same entries; inflate never passes its cap; tar members
 * lie inside the buffer. Seeds: corpus/zip/. Dict: fuzz/zip.dict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/inflate.h"
#include "parser/tar.h"
#include "parser/zip.h"

#define MAX_ENTRIES 256
#define INFLATE_CAP (1u << 20)

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t walk_zip(const uint8_t *data, size_t size, int do_inflate)
{
    stg_zip z;
    stg_zip_error err;
    uint64_t h = (uint64_t)stg_zip_open(&z, data, size, &err);
    if (h != STG_ZIPR_OK) {
        return mix(h, err.offset);
    }
    if (z.cd_start > size || z.cd_size > size - z.cd_start || z.eocd_offset + 22 > size) {
        abort();
    }
    stg_zip_range ranges[MAX_ENTRIES];
    size_t n = 0;
    for (int i = 0; i < MAX_ENTRIES; i++) {
        stg_zip_entry e;
        stg_zip_result zr = stg_zip_next(&z, &e, &err);
        h = mix(h, (uint64_t)zr);
        if (zr == STG_ZIPR_END || zr == STG_ZIPR_MALFORMED) {
            h = mix(h, err.offset);
            break;
        }
        if (zr == STG_ZIPR_ENTRY_BAD) {
            h = mix(h, err.offset);
            continue;
        }
        /* Everything yielded lies inside the buffer. */
        if (e.name < data || e.name_len > size || e.name > data + size - e.name_len ||
            e.local_name < data || e.local_name_len > size ||
            e.local_name > data + size - e.local_name_len || e.local_offset >= size ||
            e.data_offset > size || e.data_len > size - e.data_offset ||
            e.data_offset < e.local_offset + 30 || e.data_offset + e.data_len > z.cd_start) {
            abort();
        }
        h = mix(h, e.local_offset);
        h = mix(h, e.data_offset);
        h = mix(h, e.data_len);
        h = mix(h, e.mismatch);
        if (n < MAX_ENTRIES) {
            ranges[n].begin = e.local_offset;
            ranges[n].end = e.data_offset + e.data_len;
            ranges[n].index = e.index;
            n++;
        }
        if (do_inflate && e.method == 8) {
            stg_inflate_out out;
            stg_inflate_result ir = stg_inflate(data + e.data_offset, (size_t)e.data_len,
                                                STG_INFLATE_RAW, INFLATE_CAP, 1000, &out);
            if (out.len > INFLATE_CAP || out.consumed > e.data_len) {
                abort();
            }
            h = mix(h, (uint64_t)ir);
            h = mix(h, out.len);
            stg_inflate_free(&out);
        }
    }
    size_t first = 0;
    size_t overlaps = stg_zip_sort_overlaps(ranges, n, &first);
    for (size_t i = 1; i < n; i++) {
        if (ranges[i - 1].begin > ranges[i].begin) {
            abort(); /* sorted */
        }
    }
    return mix(h, overlaps);
}

/* The recovery walk over local headers: ranges inside the buffer, always moving forward. */
static uint64_t walk_local(const uint8_t *data, size_t size)
{
    uint64_t pos = 0, h = 0;
    for (int i = 0; i < MAX_ENTRIES; i++) {
        stg_zip_entry e;
        stg_zip_error err;
        uint64_t before = pos;
        stg_zip_result zr = stg_zip_local_next(data, size, &pos, &e, &err);
        h = mix(h, (uint64_t)zr);
        if (zr != STG_ZIPR_OK) {
            break;
        }
        if (pos <= before || pos > size || e.data_offset > size ||
            e.data_len > size - e.data_offset || e.name_len > size ||
            e.name > data + size - e.name_len || e.name < data) {
            abort();
        }
        h = mix(h, pos);
    }
    return h;
}

static uint64_t walk_tar(const uint8_t *data, size_t size)
{
    stg_tar t;
    static stg_tar_entry e;
    uint64_t err_offset = 0, h = 0;
    const char *why = NULL;
    stg_tar_init(&t, data, size);
    for (int i = 0; i < MAX_ENTRIES; i++) {
        stg_tar_result tr = stg_tar_next(&t, &e, &err_offset, &why);
        h = mix(h, (uint64_t)tr);
        if (tr != STG_TARR_OK) {
            break;
        }
        /* members without data (directories, links) keep tarfile's size, which may be < 0 */
        bool has_data = stg_tar_type_has_data(e.type);
        if (e.data_offset > size || (has_data && e.size < 0) ||
            (has_data && (uint64_t)e.size > size - e.data_offset) ||
            e.name_len > STG_TAR_NAME_MAX) {
            abort();
        }
        h = mix(h, e.data_offset);
    }
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t first = walk_zip(data, size, 1);
    if (walk_zip(data, size, 1) != first) {
        abort(); /* same bytes, same result */
    }
    (void)walk_tar(data, size);
    if (walk_local(data, size) != walk_local(data, size)) {
        abort();
    }
    return 0;
}
