/* Framing of the converter's inputs (input.h): torch zip archives as torch.load's miniz reader
 * opens them, and legacy torch files framed as validator/pickle_scan.c frames them (magic,
 * protocol, sys_info, data and key-list pickles, then each storage as an 8-byte element count
 * and its bytes: parser/torch.h). */
#include "input.h"

#include <string.h>

#include "../parser/cursor.h"
#include "../parser/inflate.h"
#include "../parser/mem.h"
#include "../parser/npy.h"
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

static bool read_npz(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root,
                     stg_report *rep);

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

/* A member's bytes. Stored members are read in place (the streaming path: the storage is
 * copied from the mapping when written). Deflated ones are inflated, as the scanner inflates
 * them, into memory kept by e until the output is written: all of them together at most
 * max_inflate_bytes, each within max_inflate_ratio. *base: the file offset findings inside the
 * bytes are reported against (the data for stored members; the local header for deflated ones,
 * whose inner offsets are not file offsets). */
static bool member_bytes(const uint8_t *buf, const stg_zip_entry *en, stg_zip_reader reader,
                         stg_cv_eval *e, stg_report *rep, const uint8_t **p, uint64_t *n,
                         uint64_t *base)
{
    if (en->method == 0) {
        if (en->comp_size != en->uncomp_size) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, en->local_offset,
                          "a stored member whose compressed and uncompressed sizes differ");
        }
        *p = buf + en->data_offset;
        *n = en->data_len;
        *base = en->data_offset;
        return true;
    }
    stg_inflate_format fmt;
    /* torch's miniz inflates deflate only; numpy's zipfile bzip2 and LZMA too */
    if (!stg_zip_method_format(en->method, &fmt) ||
        (reader == STG_ZIP_READER_MINIZ && fmt != STG_INFLATE_RAW)) {
        return refuse(rep, STG_CONVERT_UNSUPPORTED, en->local_offset,
                      reader == STG_ZIP_READER_MINIZ
                          ? "a member compressed by a method other than deflate (torch.load "
                            "cannot read it)"
                          : "a member compressed by a method other than deflate, bzip2 or LZMA");
    }
    uint64_t left = e->lim.max_inflate_bytes > e->inflated ? e->lim.max_inflate_bytes - e->inflated
                                                           : 0;
    stg_inflate_out out;
    stg_inflate_result ir = stg_inflate(buf + en->data_offset, (size_t)en->data_len, fmt, left,
                                        e->lim.max_inflate_ratio, &out);
    if (ir == STG_INFLATE_OK && (uint64_t)out.len != en->uncomp_size) {
        stg_inflate_free(&out);
        return refuse(rep, STG_ZIP_MALFORMED, en->local_offset,
                      "a member inflates to a size other than the declared one");
    }
    switch (ir) {
    case STG_INFLATE_OK: break;
    case STG_INFLATE_TOO_BIG:
    case STG_INFLATE_RATIO: {
        bool ratio = ir == STG_INFLATE_RATIO;
        stg_inflate_free(&out);
        stg_finding *f = stg_report_add(
            rep, STG_ZIP_BOMB, en->local_offset, "%s: not converted",
            ratio ? "a member inflates past the ratio cap"
                  : "the inflated members, held until written, pass the size cap");
        stg_report_set_limit(rep, f, ratio ? "max_inflate_ratio" : "max_inflate_bytes");
        return false;
    }
    case STG_INFLATE_CORRUPT:
    case STG_INFLATE_TRUNCATED: {
        uint64_t at = en->data_offset + out.error_offset;
        stg_inflate_free(&out);
        return refuse(rep, STG_ZIP_MALFORMED, at,
                      ir == STG_INFLATE_CORRUPT ? "invalid compressed data in a member"
                                                : "the compressed data of a member is truncated");
    }
    case STG_INFLATE_NOMEM:
        stg_inflate_free(&out);
        return refuse(rep, STG_LIMIT_EXCEEDED, en->local_offset, "the system refused memory");
    case STG_INFLATE_UNAVAILABLE:
        return refuse(rep, STG_CONVERT_UNSUPPORTED, en->local_offset,
                      "a compressed member, and its library (zlib, libbz2, liblzma) is not "
                      "available");
    }
    static const uint8_t empty[1] = {0};
    e->inflated += out.len;
    *n = out.len;
    *base = en->local_offset;
    if (out.data == NULL) {
        *p = empty;
        return true;
    }
    *p = out.data;
    if (!stg_cv_keep(e, out.data)) {
        return refuse(rep, STG_LIMIT_EXCEEDED, en->local_offset, "the system refused memory");
    }
    return true;
}

/* torch's reader copies each name into a 512-byte buffer as a C string (miniz's
 * mz_zip_reader_get_filename with MZ_ZIP_MAX_ARCHIVE_FILENAME_SIZE, in PyTorchStreamReader's
 * getAllRecords) and zipfile cuts a name at its first NUL (ZipInfo): a name that holds a NUL or
 * passes 511 bytes reads as another name to them than to us, e.g. `<folder>/constants.pkl`,
 * which makes torch.load hand the archive to torch.jit.load. Such archives are refused. */
static bool names_read_alike(const uint8_t *buf, size_t len, stg_zip_reader reader, stg_report *rep)
{
    stg_zip z;
    stg_zip_error zerr;
    stg_zip_entry en;
    if (stg_zip_open_as(&z, buf, len, reader, &zerr) != STG_ZIPR_OK) {
        return true; /* that reader loads nothing from it */
    }
    while (stg_zip_next(&z, &en, &zerr) == STG_ZIPR_OK) {
        if (en.name_len > 511 || memchr(en.name, 0, en.name_len) != NULL ||
            en.local_name_len > 511 || memchr(en.local_name, 0, en.local_name_len) != NULL) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, en.cd_offset,
                          "a member name that holds a NUL byte or passes 511 bytes (torch's and "
                          "zipfile's readers cut it, and read another name)");
        }
    }
    return true;
}

/* The torch archive's folder (the first entry's name up to its first '/', as torch.load takes
 * it) when the archive has `<folder>/data.pkl`; false when torch.load would not read it as a
 * checkpoint. */
static bool torch_folder(const uint8_t *buf, size_t len, const uint8_t **prefix, size_t *pl)
{
    stg_zip z;
    stg_zip_error zerr;
    stg_zip_entry en;
    if (stg_zip_open_as(&z, buf, len, STG_ZIP_READER_MINIZ, &zerr) != STG_ZIPR_OK ||
        stg_zip_next(&z, &en, &zerr) != STG_ZIPR_OK) {
        return false;
    }
    const void *slash = memchr(en.name, '/', en.name_len);
    if (slash == NULL) {
        return false;
    }
    *prefix = en.name;
    *pl = (size_t)((const uint8_t *)slash - en.name) + 1;
    do {
        size_t at;
        if (has_prefix(&en, *prefix, *pl, "data.pkl", &at) && at == en.name_len) {
            return true;
        }
    } while (stg_zip_next(&z, &en, &zerr) == STG_ZIPR_OK);
    return false;
}

/* numpy.load reads any zip as an .npz (NpzFile): its members NAME.npy are the arrays NAME,
 * whatever their names hold ('params/Dense_0/kernel.npy', as Flax exports write). */
static bool has_npy_member(const uint8_t *buf, size_t len)
{
    stg_zip z;
    stg_zip_error zerr;
    stg_zip_entry en;
    if (stg_zip_open_as(&z, buf, len, STG_ZIP_READER_ZIPFILE, &zerr) != STG_ZIPR_OK) {
        return false;
    }
    while (stg_zip_next(&z, &en, &zerr) == STG_ZIPR_OK) {
        if (en.name_len > 4 && memcmp(en.name + en.name_len - 4, ".npy", 4) == 0) {
            return true;
        }
    }
    return false;
}

/* A zip is a torch archive when torch.load reads it as one (`<folder>/data.pkl`), else an
 * .npz when numpy.load finds arrays in it. */
static bool read_zip(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root, stg_report *rep)
{
    if (!names_read_alike(buf, len, STG_ZIP_READER_MINIZ, rep) ||
        !names_read_alike(buf, len, STG_ZIP_READER_ZIPFILE, rep)) {
        return false;
    }
    const uint8_t *prefix = NULL;
    size_t pl = 0;
    if (!torch_folder(buf, len, &prefix, &pl)) {
        if (has_npy_member(buf, len)) {
            return read_npz(buf, len, e, root, rep);
        }
        return refuse(rep, STG_CONVERT_INPUT_UNKNOWN, 0,
                      "a zip that is neither a torch archive (<folder>/data.pkl) nor an .npz "
                      "(members NAME.npy)");
    }
    stg_zip z;
    stg_zip_error zerr;
    stg_zip_entry en;
    (void)stg_zip_open_as(&z, buf, len, STG_ZIP_READER_MINIZ, &zerr);
    stg_zip_result zr;
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
    const uint8_t *p;
    uint64_t n, base;
    if (have_order) {
        if (!member_bytes(buf, &order_en, STG_ZIP_READER_MINIZ, e, rep, &p, &n, &base)) {
            return false;
        }
        if (n == 3 && memcmp(p, "big", 3) == 0) {
            big = true;
        } else if (!(n == 6 && memcmp(p, "little", 6) == 0)) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, base,
                          "the byteorder member is neither 'little' nor 'big'");
        }
    }
    if (!member_bytes(buf, pkl, STG_ZIP_READER_MINIZ, e, rep, &p, &n, &base)) {
        return false;
    }
    size_t end;
    if (!stg_cv_run(e, p, (size_t)n, 0, root, &end)) {
        if (pkl->method != 0) {
            e->err.offset = 0; /* inside the inflated pickle: reported at its member */
        }
        stg_cv_report_error(e, rep, base);
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
        if (!member_bytes(buf, &en, STG_ZIP_READER_MINIZ, e, rep, &p, &n, &base)) {
            return false;
        }
        s->data = p;
        s->data_len = n;
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
    e->legacy = true;
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

/* ---------------------------------------------------------------- NumPy .npy / .npz */

static const struct npy_type {
    char kind;
    uint8_t size;
    stg_dtype dtype;
} npy_types[] = {
    {'f', 8, STG_DTYPE_F64}, {'f', 4, STG_DTYPE_F32}, {'f', 2, STG_DTYPE_F16},
    {'i', 8, STG_DTYPE_I64}, {'i', 4, STG_DTYPE_I32}, {'i', 2, STG_DTYPE_I16},
    {'i', 1, STG_DTYPE_I8},  {'u', 8, STG_DTYPE_U64}, {'u', 4, STG_DTYPE_U32},
    {'u', 2, STG_DTYPE_U16}, {'u', 1, STG_DTYPE_U8},  {'b', 1, STG_DTYPE_BOOL},
    {'c', 8, STG_DTYPE_C64},
};

/* A plain numeric typestr ('<f4', '|b1', '>i8', '=u2'): its dtype and byte order. */
static bool npy_dtype(const uint8_t *t, size_t n, stg_dtype *dt, bool *big)
{
    if (n != 3 || (t[0] != '<' && t[0] != '>' && t[0] != '|' && t[0] != '=') || t[2] < '1' ||
        t[2] > '8') {
        return false;
    }
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
        if (npy_types[i].kind == (char)t[1] && npy_types[i].size == (uint8_t)(t[2] - '0')) {
            *dt = npy_types[i].dtype;
            *big = t[0] == '>' && npy_types[i].size > 1;
            return true;
        }
    }
    return false;
}

/* One .npy at buf[0..len) (base: its offset in the file) as a tensor over its own storage. */
static stg_cv *npy_tensor(const uint8_t *buf, size_t len, uint64_t base, stg_cv_eval *e,
                          stg_report *rep)
{
    stg_limits def;
    stg_limits_default(&def);
    stg_npy_limits nl = {def.max_header_len, def.max_json_depth, def.max_metadata_entries};
    size_t cap = stg_npy_nodes_needed(buf, len, &nl);
    stg_pylit_node *nodes = cap > 0 ? stg_mem_calloc(cap, sizeof *nodes) : NULL;
    stg_npy_dtype *scratch = cap > 0 ? stg_mem_calloc(cap, sizeof *scratch) : NULL;
    stg_npy_header h;
    stg_npy_error err;
    stg_cv *v = NULL;
    const char *why = NULL;
    uint8_t ts[8];
    size_t tl = 0;
    stg_dtype dt = STG_DTYPE_U8;
    bool big = false;
    if (nodes == NULL || scratch == NULL ||
        stg_npy_read(buf, len, &nl, nodes, scratch, cap, &h, &err) != STG_PARSE_OK) {
        why = "the .npy header does not read as numpy reads it";
    } else if (nodes[h.descr_node].kind != STG_PYLIT_STR ||
               !stg_pylit_str(buf, &nodes[h.descr_node], h.major < 3, ts, sizeof ts, &tl) ||
               !npy_dtype(ts, tl, &dt, &big)) {
        why = "a .npy dtype that is not a plain number or bool (structured, object, text, "
              "time, float128 ...)";
    } else if (!h.count_known || h.ndim > e->lim.max_rank) {
        why = "a .npy shape of negative dimensions, too many dimensions, or an overflowing size";
    }
    uint64_t bytes = 0, elsize = stg_dtype_bits(dt) / 8;
    if (why == NULL && (stg_mul_u64(h.count, elsize, &bytes) || bytes > len - h.data_offset)) {
        why = "the .npy data is shorter than its shape and dtype say";
    }
    stg_cv_storage *s = why == NULL ? stg_arena_alloc(&e->arena, sizeof *s, 8) : NULL;
    stg_cv_tensor *t = s != NULL ? stg_arena_alloc(&e->arena, sizeof *t, 8) : NULL;
    uint64_t *dims = t != NULL ? stg_arena_alloc(&e->arena, (h.ndim + 1) * 16u, 8) : NULL;
    v = dims != NULL ? stg_arena_alloc(&e->arena, sizeof *v, 8) : NULL;
    if (why == NULL && v == NULL) {
        why = "memory ran out";
    }
    if (why == NULL) {
        memset(s, 0, sizeof *s);
        memset(t, 0, sizeof *t);
        memset(v, 0, sizeof *v);
        s->dtype = dt;
        s->elsize = (uint32_t)elsize;
        s->numel = h.count;
        s->offset = base;
        s->data = buf + h.data_offset;
        s->data_len = bytes;
        s->big_endian = big;
        s->index = UINT32_MAX; /* in no persistent-id table */
        t->storage = s;
        t->rank = h.ndim;
        t->shape = dims;
        t->stride = dims + h.ndim + 1;
        t->offset = base;
        size_t c = h.shape_node + 1;
        for (uint32_t k = 0; k < h.ndim; k++, c = nodes[c].next) {
            size_t d = c;
            while (nodes[d].kind == STG_PYLIT_PAREN) {
                d++;
            }
            dims[k] = (uint64_t)nodes[d].ival;
        }
        /* C order: row-major strides; Fortran order: column-major (copied in row-major) */
        uint64_t step = 1;
        for (uint32_t k = 0; k < h.ndim; k++) {
            uint32_t i = h.fortran_order ? k : h.ndim - 1 - k;
            t->stride[i] = step;
            step *= dims[i] > 0 ? dims[i] : 1;
        }
        v->kind = STG_CV_TENSOR;
        v->offset = base;
        v->u.t = t;
    } else {
        (void)refuse(rep, STG_CONVERT_UNSUPPORTED, base, why);
        v = NULL;
    }
    stg_mem_free(nodes);
    stg_mem_free(scratch);
    return v;
}

/* A dict value of n pairs, in the evaluator's arena. */
static stg_cv *new_dict(stg_cv_eval *e, uint32_t n)
{
    stg_cv *d = stg_arena_alloc(&e->arena, sizeof *d, 8);
    stg_cv **items = d != NULL ? stg_arena_alloc(&e->arena, (2 * (size_t)n + 2) * sizeof *items, 8)
                               : NULL;
    if (items == NULL) {
        return NULL;
    }
    memset(d, 0, sizeof *d);
    d->kind = STG_CV_DICT;
    d->cap = 2 * n + 2;
    d->u.items = items;
    return d;
}

static bool dict_add(stg_cv_eval *e, stg_cv *d, const uint8_t *name, size_t n, stg_cv *v)
{
    stg_cv *k = stg_arena_alloc(&e->arena, sizeof *k, 8);
    if (k == NULL || 2 * (size_t)d->n + 2 > d->cap) {
        return false;
    }
    memset(k, 0, sizeof *k);
    k->kind = STG_CV_STR;
    k->u.s.p = name;
    k->u.s.len = n;
    k->offset = v->offset;
    d->u.items[2 * (size_t)d->n] = k;
    d->u.items[2 * (size_t)d->n + 1] = v;
    d->n++;
    return true;
}

/* .npy: one tensor named "array". */
static bool read_npy(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root, stg_report *rep)
{
    stg_cv *t = npy_tensor(buf, len, 0, e, rep);
    stg_cv *d = t != NULL ? new_dict(e, 1) : NULL;
    if (t != NULL && (d == NULL || !dict_add(e, d, (const uint8_t *)"array", 5, t))) {
        return refuse(rep, STG_LIMIT_EXCEEDED, STG_NO_OFFSET, "memory ran out");
    }
    *root = d;
    return d != NULL;
}

/* .npz (numpy.savez, numpy.savez_compressed): every member NAME.npy, stored or compressed
 * (deflate, bzip2, LZMA), becomes the tensor NAME; zipfile's reading, as numpy.load's. */
static bool read_npz(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root, stg_report *rep)
{
    stg_zip z;
    stg_zip_error zerr;
    stg_zip_entry en;
    if (stg_zip_open_as(&z, buf, len, STG_ZIP_READER_ZIPFILE, &zerr) != STG_ZIPR_OK) {
        return refuse(rep, STG_ZIP_MALFORMED, zerr.offset, "numpy's zip reader refuses it");
    }
    if (z.entry_count > e->lim.max_items) {
        return refuse(rep, STG_CONVERT_UNSUPPORTED, z.cd_start, "too many members");
    }
    stg_cv *d = new_dict(e, (uint32_t)z.entry_count);
    if (d == NULL) {
        return refuse(rep, STG_LIMIT_EXCEEDED, STG_NO_OFFSET, "memory ran out");
    }
    stg_zip_result zr;
    while ((zr = stg_zip_next(&z, &en, &zerr)) == STG_ZIPR_OK) {
        if (en.name_len < 4 || memcmp(en.name + en.name_len - 4, ".npy", 4) != 0) {
            return refuse(rep, STG_CONVERT_UNSUPPORTED, en.cd_offset,
                          "an .npz member that is not a .npy");
        }
        const uint8_t *p;
        uint64_t n, base;
        if (!member_bytes(buf, &en, STG_ZIP_READER_ZIPFILE, e, rep, &p, &n, &base)) {
            return false;
        }
        stg_cv *t = npy_tensor(p, (size_t)n, base, e, rep);
        if (t == NULL) {
            return false;
        }
        if (!dict_add(e, d, en.name, en.name_len - 4, t)) {
            return refuse(rep, STG_LIMIT_EXCEEDED, STG_NO_OFFSET, "memory ran out");
        }
    }
    if (zr != STG_ZIPR_END) {
        return refuse(rep, STG_ZIP_MALFORMED, zerr.offset, "an archive entry is unusable");
    }
    *root = d;
    return true;
}

bool stg_cv_read_input(const uint8_t *buf, size_t len, stg_cv_eval *e, stg_cv **root,
                       stg_report *rep)
{
    if (len >= 4 && memcmp(buf, STG_ZIP_LOCAL_MAGIC, 4) == 0) {
        return read_zip(buf, len, e, root, rep);
    }
    if (stg_torch_legacy_magic(buf, len)) {
        return read_legacy(buf, len, e, root, rep);
    }
    if (len >= STG_NPY_MAGIC_LEN && memcmp(buf, STG_NPY_MAGIC, STG_NPY_MAGIC_LEN) == 0) {
        return read_npy(buf, len, e, root, rep);
    }
    return refuse(rep, STG_CONVERT_INPUT_UNKNOWN, 0,
                  "the input is none of a torch zip archive, a legacy torch file, .npy, .npz");
}
