/* Framing of the converter's inputs (input.h): torch zip archives as torch.load's miniz reader
 * opens them, and legacy torch files framed as validator/pickle_scan.c frames them (magic,
 * protocol, sys_info, data and key-list pickles, then each storage as an 8-byte element count
 * and its bytes: parser/torch.h). */
#include "input.h"

#include <string.h>

#include "../parser/cursor.h"
#include "../parser/zip.h"
#include "../parser/torch.h"

void stg_cv_report_error(const stg_cv_eval *e, stg_report *rep, uint64_t base)
{
    const stg_cv_error *err = &e->err;
    stg_finding *f = stg_report_add(rep, err->what != NULL ? err->code : STG_CONVERT_UNSUPPORTED,
                                    base + err->offset, "%s: not converted",
                                    err->what != NULL ? err->what : "the evaluation failed");
    if (err->module != NULL) {
        stg_report_set_global(rep, f, (const char *)err->module, err->module_len,
                              (const char *)err->name, err->name_len);
    }
    if (err->limit != NULL) {
        stg_report_set_limit(rep, f, err->limit);
    }
}

static bool refuse(stg_report *rep, stg_code code, uint64_t offset, const char *what)
{
    (void)stg_report_add(rep, code, offset, "%s: not converted", what);
    return false;
}

/* Every storage the pickle named has bytes, at least numel x elsize of them. */
static bool all_bound(stg_cv_eval *e, stg_report *rep)
{
    for (uint32_t i = 0; i < e->nstorages; i++) {
        const stg_cv_storage *s = e->storages[i];
        uint64_t need;
        if (s->data == NULL) {
            return refuse(rep, STG_CONVERT_TENSOR_INVALID, s->offset,
                          "a storage the pickle names has no bytes in the file");
        }
        if (stg_mul_u64(s->numel, s->elsize, &need) || need > s->data_len) {
            return refuse(rep, STG_CONVERT_TENSOR_INVALID, s->offset,
                          "a storage is shorter than its declared element count");
        }
    }
    return true;
}

/* ---------------------------------------------------------------- torch zip */

static bool has_prefix(const stg_zip_entry *en, const uint8_t *p, size_t pl, const char *rest,
                       size_t *rest_end)
{
    size_t rl = strlen(rest);
    if (en->name_len < pl + rl || memcmp(en->name, p, pl) != 0 ||
        memcmp(en->name + pl, rest, rl) != 0) {
        return false;
    }
    *rest_end = pl + rl;
    return true;
}

static bool stored_range(const stg_zip_entry *en, stg_report *rep)
{
    if (en->method != 0 || en->comp_size != en->uncomp_size) {
        return refuse(rep, STG_CONVERT_UNSUPPORTED, en->local_offset,
                      "a member the converter reads is compressed (torch.save stores them)");
    }
    return true;
}

static bool read_zip(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root, stg_report *rep)
{
    stg_zip z;
    stg_zip_error zerr;
    stg_zip_entry en;
    if (stg_zip_open_as(&z, buf, len, STG_ZIP_READER_MINIZ, &zerr) != STG_ZIPR_OK) {
        return refuse(rep, STG_ZIP_MALFORMED, zerr.offset, "torch's zip reader refuses it");
    }
    /* torch.load: the archive's folder is the first entry's name up to its first '/'. */
    stg_zip_result zr = stg_zip_next(&z, &en, &zerr);
    if (zr != STG_ZIPR_OK) {
        return refuse(rep, STG_ZIP_MALFORMED, zerr.offset, "the archive has no usable entry");
    }
    const void *slash = memchr(en.name, '/', en.name_len);
    if (slash == NULL) {
        return refuse(rep, STG_CONVERT_INPUT_UNKNOWN, en.cd_offset,
                      "a zip whose first entry is not in a folder: not a torch archive");
    }
    const uint8_t *prefix = en.name;
    size_t pl = (size_t)((const uint8_t *)slash - en.name) + 1;
    const stg_zip_entry *pkl = NULL;
    stg_zip_entry pkl_en, order_en;
    bool big = false, have_order = false;
    stg_zip scan = z;
    (void)stg_zip_open_as(&scan, buf, len, STG_ZIP_READER_MINIZ, &zerr);
    for (;;) {
        zr = stg_zip_next(&scan, &en, &zerr);
        if (zr == STG_ZIPR_END) {
            break;
        }
        if (zr != STG_ZIPR_OK) {
            return refuse(rep, STG_ZIP_MALFORMED, zerr.offset, "an archive entry is unusable");
        }
        size_t at;
        if (has_prefix(&en, prefix, pl, "data.pkl", &at) && at == en.name_len && pkl == NULL) {
            pkl_en = en;
            pkl = &pkl_en;
        } else if (has_prefix(&en, prefix, pl, "byteorder", &at) && at == en.name_len &&
                   !have_order) {
            order_en = en;
            have_order = true;
        }
    }
    if (pkl == NULL) {
        return refuse(rep, STG_CONVERT_INPUT_UNKNOWN, 0,
                      "a zip without <folder>/data.pkl: not a torch archive");
    }
    if (!stored_range(pkl, rep)) {
        return false;
    }
    if (have_order) {
        const uint8_t *p = buf + order_en.data_offset;
        if (!stored_range(&order_en, rep)) {
            return false;
        }
        if (order_en.data_len == 3 && memcmp(p, "big", 3) == 0) {
            big = true;
        } else if (!(order_en.data_len == 6 && memcmp(p, "little", 6) == 0)) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, order_en.data_offset,
                          "the byteorder member is neither 'little' nor 'big'");
        }
    }
    size_t end;
    if (!stg_cv_run(e, buf + pkl->data_offset, (size_t)pkl->data_len, 0, root, &end)) {
        stg_cv_report_error(e, rep, pkl->data_offset);
        return false;
    }
    /* Bind storages: <folder>/data/<key>. */
    scan = z;
    (void)stg_zip_open_as(&scan, buf, len, STG_ZIP_READER_MINIZ, &zerr);
    while (stg_zip_next(&scan, &en, &zerr) == STG_ZIPR_OK) {
        size_t at;
        if (!has_prefix(&en, prefix, pl, "data/", &at)) {
            continue;
        }
        stg_cv_storage *s = stg_cv_find_storage(e, en.name + at, en.name_len - at);
        if (s == NULL) {
            continue; /* a storage no tensor uses: torch.load never reads it either */
        }
        if (s->data != NULL) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, en.cd_offset,
                          "a storage member is listed twice");
        }
        if (!stored_range(&en, rep)) {
            return false;
        }
        s->data = buf + en.data_offset;
        s->data_len = en.data_len;
        s->big_endian = big;
    }
    return all_bound(e, rep);
}

/* ---------------------------------------------------------------- legacy torch */

static bool read_legacy(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root,
                        stg_report *rep)
{
    size_t pos = 0, end;
    stg_cv *v;
    /* magic number, protocol version, sys_info */
    for (int i = 0; i < 3; i++) {
        if (!stg_cv_run(e, buf, len, pos, &v, &end)) {
            stg_cv_report_error(e, rep, 0);
            return false;
        }
        if (i == 1 && (v->kind != STG_CV_INT || v->u.i != 1001)) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, pos,
                          "a legacy torch file of a protocol version other than 1001");
        }
        if (i == 2) {
            stg_cv *le = stg_cv_dict_get(v, "little_endian");
            if (le == NULL || le->kind != STG_CV_BOOL || le->u.i != 1) {
                return refuse(rep, STG_CONVERT_UNSUPPORTED, pos,
                              "a legacy torch file written on a big-endian machine");
            }
        }
        pos = end;
    }
    if (!stg_cv_run(e, buf, len, pos, root, &end)) {
        stg_cv_report_error(e, rep, 0);
        return false;
    }
    pos = end;
    stg_cv *keys;
    if (!stg_cv_run(e, buf, len, pos, &keys, &end)) {
        stg_cv_report_error(e, rep, 0);
        return false;
    }
    if (keys->kind != STG_CV_LIST) {
        return refuse(rep, STG_CONVERT_UNSUPPORTED, pos,
                      "the legacy storage-key pickle is not a list");
    }
    stg_cursor c = stg_cur_make(buf, len);
    (void)stg_cur_seek(&c, end);
    for (uint32_t i = 0; i < keys->n; i++) {
        const stg_cv *k = keys->u.items[i];
        size_t rec = c.pos;
        stg_cv_storage *s = k->kind == STG_CV_STR ? stg_cv_find_storage(e, k->u.s.p, k->u.s.len)
                                                  : NULL;
        if (s == NULL) {
            return refuse(rep, STG_CONVERT_TENSOR_INVALID, rec,
                          "the key list names a storage the data pickle did not declare");
        }
        uint64_t bytes;
        if (stg_torch_storage_record(&c, s->elsize, &bytes) != STG_OK) {
            return refuse(rep, STG_CONVERT_TENSOR_INVALID, rec,
                          "a storage runs past the end of the file");
        }
        if (s->data != NULL) {
            return refuse(rep, STG_CONVERT_TENSOR_INVALID, rec, "a storage key is listed twice");
        }
        s->data = buf + c.pos;
        s->data_len = bytes;
        c.pos += (size_t)bytes;
    }
    return all_bound(e, rep);
}

bool stg_cv_read_input(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root,
                       stg_report *rep)
{
    if (len >= 4 && memcmp(buf, "PK\x03\x04", 4) == 0) {
        return read_zip(buf, len, e, root, rep);
    }
    if (stg_torch_legacy_magic(buf, len)) {
        return read_legacy(buf, len, e, root, rep);
    }
    if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0) {
        return refuse(rep, STG_CONVERT_INPUT_UNKNOWN, 0,
                      ".npy input is not converted yet (docs/convert.md)");
    }
    return refuse(rep, STG_CONVERT_INPUT_UNKNOWN, 0,
                  "the input is neither a torch zip archive nor a legacy torch file");
}
