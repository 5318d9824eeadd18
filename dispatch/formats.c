/* The table of formats (see formats.h) and each format's scan: which rules run, which label
 * the result gets.
 *
 * Labels (docs/containers.md):
 *  - joblib: a pickle whose name ends .joblib, or which imports a global from
 *    joblib.numpy_pickle* (every joblib file with arrays does); a compressed stream whose
 *    content is joblib is labelled joblib too (that is how joblib's compress= writes files);
 *    other compressed streams keep the compression's label (gzip, zlib, bz2, xz).
 *  - zip: torch-zip when a pickle member was scanned, numpy-zip when every member is a .npy,
 *    else zip (the quick label looks at names and stored members only);
 *  - tar: torch-tar when members named pickle and storages are found, else tar. */
#include "formats.h"

#include <string.h>

#include "../parser/tar.h"
#include "../parser/torch.h"
#include "../parser/zip.h"
#include "../validator/gguf.h"
#include "../validator/index.h"
#include "../validator/onnx.h"
#include "../validator/pickle_scan.h"
#include "safetensors.h"
#include "containers.h"
#include "polyglot.h"

/* ------------------------------------------------------------------------------ labels */

stg_format stg_format_zip_label(const stg_archive_facts *f)
{
    if (f->pickle) {
        return STG_FMT_TORCH_ZIP;
    }
    return f->all_npy ? STG_FMT_NUMPY_ZIP : STG_FMT_ZIP;
}

stg_format stg_format_tar_label(const stg_archive_facts *f)
{
    return f->torch_tar ? STG_FMT_TORCH_TAR : STG_FMT_TAR;
}

/* ------------------------------------------------------------------------------ sniffs */

static bool sniff_safetensors(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_sniff_is_safetensors(buf, len);
}

static bool sniff_zip(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_sniff_has_prefix(buf, len, "PK\x03\x04", 4) ||
           stg_sniff_has_prefix(buf, len, "PK\x05\x06", 4);
}

static bool sniff_npy(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_sniff_has_prefix(buf, len, "\x93NUMPY", 6);
}

static bool sniff_gguf(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_sniff_has_prefix(buf, len, "GGUF", 4);
}

static bool sniff_tar(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_tar_opens(buf, len);
}

static bool sniff_torch_legacy(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_torch_legacy_magic(buf, len);
}

/* A PROTO opcode with a protocol the reference unpickler knows is a pickle even when broken
 * (scanning it then reports why); else a pickle is what a reader would import or call from. */
static bool sniff_pickle(const uint8_t *buf, size_t len, bool *oom)
{
    if (len >= 2 && buf[0] == 0x80 && buf[1] <= 5) {
        return true;
    }
    return stg_pickle_sniff_acts(buf, len, oom);
}

/* ONNX has no magic: bytes that walk as a ModelProto (validator/onnx.h, stg_onnx_sniff). Text
 * never does (a text file holds no 0x08 byte, the tag of ir_version, nor any tag byte of a
 * multi-byte form of it); it is excluded outright all the same. */
static bool sniff_onnx(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return !stg_sniff_is_text(buf, len) && stg_onnx_sniff(buf, len);
}

static bool sniff_joblib_zf(const uint8_t *buf, size_t len, bool *oom)
{
    uint64_t declared;
    size_t at;
    (void)oom;
    return stg_sniff_zfile_header(buf, len, &declared, &at);
}

/* -------------------------------------------------------------------------------- scans */

static bool scan_safetensors_index(const stg_format_entry *e, const uint8_t *buf, size_t len,
                                   const stg_dispatch_args *a, stg_check_ctx *ctx,
                                   stg_member_result *res)
{
    /* The index's own rules. Shards are files, so a buffer check cannot open them;
     * loader/model.c checks them against the map. */
    (void)a;
    stg_index ix;
    stg_index_init(&ix);
    (void)stg_index_parse(buf, len, ctx->lim, ctx->report, &ix);
    stg_index_release(&ix);
    res->format = e->label;
    return true;
}

static bool scan_safetensors(const stg_format_entry *e, const uint8_t *buf, size_t len,
                             const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)a;
    stg_st_scan(buf, len, ctx, NULL);
    res->format = e->label;
    return true;
}

static bool scan_torch_legacy(const stg_format_entry *e, const uint8_t *buf, size_t len,
                              const stg_dispatch_args *a, stg_check_ctx *ctx,
                              stg_member_result *res)
{
    (void)a;
    stg_check_pickles(buf, len, 0, STG_PICKLE_TORCH_LEGACY, ctx);
    stg_polyglot_check_pickle(buf, len, ctx);
    res->format = e->label;
    res->pickle_based = true;
    return true;
}

/* Pickle rules over the whole buffer; the label is joblib per the rule above. An archive member
 * no loader unpickles by its name is a pickle only when its walk imports something: a PROTO-like
 * first byte, or a short import-free pickle such as ")2." (EMPTY_TUPLE, DUP, STOP) at the start
 * of tensor data, is chance, and an import-free pickle runs nothing. */
static bool scan_pickle(const stg_format_entry *e, const uint8_t *buf, size_t len,
                        const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    if (!a->top_level && !stg_pickle_sniff_imports(buf, len, &ctx->report->out_of_memory)) {
        return false;
    }
    size_t globals_before = ctx->report->global_count;
    stg_check_pickles(buf, len, 0, a->top_level ? STG_PICKLE_RAW : STG_PICKLE_MEMBER, ctx);
    bool joblib = a->hint.joblib;
    for (size_t i = globals_before; i < ctx->report->global_count && !joblib; i++) {
        const char *m = ctx->report->globals[i].module;
        joblib = m != NULL && strncmp(m, "joblib.numpy_pickle", 19) == 0;
    }
    res->format = joblib ? STG_FMT_JOBLIB : e->label;
    stg_polyglot_check_pickle(buf, len, ctx);
    res->pickle_based = true;
    return true;
}

static bool scan_zip(const stg_format_entry *e, const uint8_t *buf, size_t len,
                     const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    /* Every reading a loader's zip reader takes; no usable directory fails closed. */
    (void)e;
    stg_archive_facts facts = {false, false, false};
    (void)stg_containers_scan_zip_readers(buf, len, true, ctx, res, &facts);
    res->format = stg_format_zip_label(&facts);
    if (a->top_level) {
        stg_polyglot_check_zip_tar(buf, len, ctx, res); /* torch.load's reading */
    }
    return true;
}

static bool scan_npy(const stg_format_entry *e, const uint8_t *buf, size_t len,
                     const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    res->format = e->label;
    res->pickle_based = stg_check_npy(buf, len, 0, ctx);
    if (a->top_level) {
        stg_polyglot_check_tar(buf, len, ".npy", ctx);
    }
    return true;
}

static bool scan_tar(const stg_format_entry *e, const uint8_t *buf, size_t len,
                     const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)e;
    (void)a;
    stg_archive_facts facts = {false, false, false};
    stg_containers_scan_tar(buf, len, ctx, res, &facts);
    res->format = stg_format_tar_label(&facts);
    return true;
}

/* joblib's compress= writes these (zlib, gzip, bz2, xz, lzma); its reader, like Python's,
 * decompresses the whole stream and unpickles the result. */
static bool scan_compressed(const stg_format_entry *e, const uint8_t *buf, size_t len,
                            const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    bool recognised = true;
    stg_member_result inner = stg_containers_scan_compressed(buf, len, e->inflate, e->what, ctx,
                                                             &recognised);
    if (!recognised) {
        return false; /* a zlib-looking header over something else: unknown content */
    }
    res->pickle_based = inner.pickle_based;
    res->inflated = inner.inflated;
    res->format = inner.format == STG_FMT_JOBLIB || (a->hint.joblib && inner.pickle_based)
                      ? STG_FMT_JOBLIB
                      : e->label;
    return true;
}

static bool scan_joblib_zf(const stg_format_entry *e, const uint8_t *buf, size_t len,
                           const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    size_t from = ctx->report->count;
    stg_member_result inner = stg_containers_scan_zfile(buf, len, ctx);
    /* joblib < 0.10 names a ZF side file `<dump>_NN.npy.z` (numpy_pickle_compat's
     * ZNDArrayWrapper): raw array bytes, read on their own as the side-file route reads them */
    if (!inner.pickle_based && a->name_hint != NULL &&
        stg_name_hint_has_suffix(a->name_hint, ".npy.z")) {
        stg_report_drop_raw_unknown(ctx->report, from);
    }
    res->pickle_based = inner.pickle_based;
    res->inflated = inner.inflated;
    res->format = e->label;
    return true;
}

static bool scan_unscannable(const stg_format_entry *e, const uint8_t *buf, size_t len,
                             const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)buf;
    (void)len;
    (void)a;
    stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, 0,
                   "%s data cannot be opened by stguard: not scanned", e->what);
    res->format = e->label;
    return true;
}

/* GGUF (docs/gguf.md): the header, metadata, tensor infos and data layout, then (for a whole
 * file) the tar reading of the same bytes. */
static bool scan_gguf(const stg_format_entry *e, const uint8_t *buf, size_t len,
                      const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    if (stg_gguf_check(buf, len, ctx->lim, ctx->hash_seed, ctx->report, NULL, NULL) != STG_OK) {
        ctx->report->out_of_memory = true; /* never for these arguments: fail closed */
    }
    if (a->top_level) {
        stg_polyglot_check_tar(buf, len, "GGUF", ctx);
    }
    res->format = e->label;
    return true;
}

/* ONNX (docs/onnx.md): the ModelProto's wire data and rules; the external-data files of a
 * model on disk are examined by the loader's hook (only for the file itself, never for an
 * archive member: its locations are relative to no folder). */
static bool scan_onnx(const stg_format_entry *e, const uint8_t *buf, size_t len,
                      const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    stg_onnx_model m;
    stg_onnx_model_init(&m);
    if (stg_onnx_check(buf, len, ctx->lim, ctx->hash_seed, ctx->report, &m) != STG_OK) {
        ctx->report->out_of_memory = true; /* never for these arguments: fail closed */
    } else if (ctx->onnx_external != NULL && a->top_level && ctx->depth == 0 &&
               ctx->member == NULL && m.next > 0) {
        ctx->onnx_external(ctx->onnx_external_arg, m.ext, m.next, ctx->report);
    }
    stg_onnx_model_release(&m);
    res->format = e->label;
    return true;
}

/* ------------------------------------------------------------------------- quick labels */

/* Label of an archive by its directory alone (no inflating): torch-zip when a member is named
 * *.pkl / *.pickle or a stored member's bytes are a pickle; numpy-zip when every member is a
 * .npy; else zip. A full scan can say torch-zip where only a deflated member is a pickle. */
static stg_format quick_label_zip(const uint8_t *buf, size_t len)
{
    stg_archive_facts facts = {false, false, false};
    stg_zip z;
    stg_zip_error err;
    if (stg_zip_open(&z, buf, len, &err) != STG_ZIPR_OK) {
        return stg_format_zip_label(&facts);
    }
    stg_zip_entry e;
    bool all_npy = z.entry_count > 0, pickle = false;
    for (;;) {
        stg_zip_result zr = stg_zip_next(&z, &e, &err);
        if (zr == STG_ZIPR_END || zr == STG_ZIPR_MALFORMED) {
            break;
        }
        char name[64];
        size_t n = e.name_len < sizeof name - 1 ? e.name_len : sizeof name - 1;
        /* Only the name's tail matters for the suffix tests. */
        memcpy(name, e.name + (e.name_len - n), n);
        name[n] = '\0';
        bool npy = stg_name_hint_has_suffix(name, ".npy");
        all_npy = all_npy && npy;
        if (stg_name_hint_has_suffix(name, ".pkl") || stg_name_hint_has_suffix(name, ".pickle")) {
            pickle = true;
        } else if (zr == STG_ZIPR_OK && e.method == 0 && !npy) {
            size_t stop_end;
            bool out_of_memory = false; /* only a label: torch-zip is the safer guess */
            pickle = stg_pickle_sniff(buf + e.data_offset, (size_t)e.data_len, &stop_end,
                                      &out_of_memory) ||
                     out_of_memory;
        }
        if (pickle) {
            break;
        }
    }
    facts.pickle = pickle;
    facts.all_npy = all_npy;
    return stg_format_zip_label(&facts);
}

/* torch-tar when tarfile's getmember() finds members named pickle and storages (what torch's
 * legacy_load() reads), else tar (the same rule as the full scan, containers.c). */
static stg_format quick_label_tar(const uint8_t *buf, size_t len)
{
    stg_tar_list l;
    stg_archive_facts facts = {false, false, false};
    facts.torch_tar = stg_tar_list_build(&l, buf, len) &&
                      stg_tar_list_find(&l, "pickle", 6) != STG_TAR_NONE &&
                      stg_tar_list_find(&l, "storages", 8) != STG_TAR_NONE;
    stg_tar_list_free(&l);
    return stg_format_tar_label(&facts);
}

/* -------------------------------------------------------------------------------- table */

static const char *const safetensors_index_names[] = {".safetensors.index.json", NULL};
static const char *const safetensors_names[] = {".safetensors", NULL};
static const char *const onnx_names[] = {".onnx", NULL};
/* A GGUF name decides nothing (the magic does) but claims the format: other content under it
 * is format_mismatch, as for the pickle suffixes (ggml's gguf_init_from_file refuses it). */
static const char *const gguf_names[] = {".gguf", NULL};

/* Name-decided entries first (in this order), then content in loader order. */
static const stg_format_entry formats[] = {
    {STG_SNIFF_SAFETENSORS_INDEX, "safetensors index", NULL, scan_safetensors_index,
     STG_FMT_SAFETENSORS_INDEX, NULL, safetensors_index_names, STG_INFLATE_RAW, NULL, false},
    {STG_SNIFF_SAFETENSORS, "safetensors", sniff_safetensors, scan_safetensors, STG_FMT_SAFETENSORS,
     NULL, safetensors_names, STG_INFLATE_RAW, NULL, false},
    {STG_SNIFF_ZIP, "zip", sniff_zip, scan_zip, STG_FMT_ZIP, quick_label_zip, NULL, STG_INFLATE_RAW,
     NULL, false},
    {STG_SNIFF_NPY, "npy", sniff_npy, scan_npy, STG_FMT_NUMPY, NULL, NULL, STG_INFLATE_RAW, NULL,
     false},
    {STG_SNIFF_GGUF, "GGUF", sniff_gguf, scan_gguf, STG_FMT_GGUF, NULL, gguf_names, STG_INFLATE_RAW,
     NULL, false},
    {STG_SNIFF_TAR, "tar", sniff_tar, scan_tar, STG_FMT_TAR, quick_label_tar, NULL, STG_INFLATE_RAW,
     NULL, false},
    {STG_SNIFF_TORCH_LEGACY, "legacy torch", sniff_torch_legacy, scan_torch_legacy,
     STG_FMT_TORCH_LEGACY, NULL, NULL, STG_INFLATE_RAW, NULL, false},
    {STG_SNIFF_PICKLE, "pickle", sniff_pickle, scan_pickle, STG_FMT_PICKLE, NULL, NULL,
     STG_INFLATE_RAW, NULL, false},
    {STG_SNIFF_GZIP, "gzip", stg_sniff_is_gzip, scan_compressed, STG_FMT_GZIP, NULL, NULL,
     STG_INFLATE_GZIP, "gzip", false},
    {STG_SNIFF_JOBLIB_ZF, "joblib ZF", sniff_joblib_zf, scan_joblib_zf, STG_FMT_JOBLIB, NULL, NULL,
     STG_INFLATE_ZLIB, "joblib ZF", false},
    {STG_SNIFF_BZ2, "bzip2", stg_sniff_is_bzip2, scan_compressed, STG_FMT_BZ2, NULL, NULL,
     STG_INFLATE_BZIP2, "bzip2", false},
    {STG_SNIFF_XZ, "xz", stg_sniff_is_xz, scan_compressed, STG_FMT_XZ, NULL, NULL, STG_INFLATE_LZMA,
     "xz", false},
    {STG_SNIFF_LZMA, "lzma", stg_sniff_is_lzma_alone, scan_compressed, STG_FMT_XZ, NULL, NULL,
     STG_INFLATE_LZMA, "lzma", false},
    {STG_SNIFF_ZSTD, "zstd", stg_sniff_is_zstd, scan_unscannable, STG_FMT_UNKNOWN, NULL, NULL,
     STG_INFLATE_RAW, "zstd-compressed", false},
    {STG_SNIFF_LZ4, "lz4", stg_sniff_is_lz4, scan_unscannable, STG_FMT_UNKNOWN, NULL, NULL,
     STG_INFLATE_RAW, "lz4-compressed", false},
    {STG_SNIFF_ZLIB, "zlib", stg_sniff_is_zlib, scan_compressed, STG_FMT_ZLIB, NULL, NULL,
     STG_INFLATE_ZLIB, "zlib", false},
    /* ONNX, by its name or by a content walk, only for a whole file that every entry above
     * and the dispatcher's other last readings left unclaimed (docs/onnx.md, "Recognition"):
     * it never takes what another format claims. */
    {STG_SNIFF_ONNX, "ONNX", sniff_onnx, scan_onnx, STG_FMT_ONNX, NULL, onnx_names, STG_INFLATE_RAW,
     NULL, true},
};

enum { FORMAT_COUNT = sizeof formats / sizeof formats[0] };

/* The entries a name decides before any content is looked at (ONNX is decided by name or
 * content only for content no entry claims: stg_format_last_resort). */
enum { NAME_FIRST_COUNT = 2 };

static bool name_matches(const stg_format_entry *e, const char *name)
{
    for (size_t i = 0; e != NULL && e->names != NULL && e->names[i] != NULL; i++) {
        if (stg_name_hint_has_suffix(name, e->names[i])) {
            return true;
        }
    }
    return false;
}

const stg_format_entry *stg_format_by_name(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        if (name_matches(&formats[i], name)) {
            return i < NAME_FIRST_COUNT ? &formats[i] : NULL;
        }
    }
    return NULL;
}

const stg_format_entry *stg_format_claimed(const char *name)
{
    for (size_t i = 0; name != NULL && i < FORMAT_COUNT; i++) {
        if (name_matches(&formats[i], name)) {
            return &formats[i];
        }
    }
    return NULL;
}

const stg_format_entry *stg_format_sniff(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        if (!formats[i].last_resort && formats[i].sniff != NULL &&
            formats[i].sniff(buf, len, out_of_memory)) {
            return &formats[i];
        }
    }
    return NULL;
}

const stg_format_entry *stg_format_last_resort(const uint8_t *buf, size_t len, const char *name)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        const stg_format_entry *e = &formats[i];
        if (e->last_resort &&
            (name_matches(e, name) || (e->sniff != NULL && e->sniff(buf, len, NULL)))) {
            return e;
        }
    }
    return NULL;
}

const stg_format_entry *stg_format_of_kind(stg_sniff_kind kind)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        if (formats[i].kind == kind) {
            return &formats[i];
        }
    }
    return NULL;
}

stg_name_hint stg_name_hint_of(const char *name)
{
    stg_name_hint h;
    memset(&h, 0, sizeof h);
    if (name == NULL) {
        return h;
    }
    static const char *const pickle_suffixes[] = {".bin",    ".pt",     ".pth", ".ckpt", ".pkl",
                                                  ".pickle", ".joblib", ".npy", ".npz"};
    /* The names that decide a format are the table's. */
    const stg_format_entry *decided = stg_format_by_name(name);
    h.safetensors_index = decided != NULL && decided->kind == STG_SNIFF_SAFETENSORS_INDEX;
    h.safetensors = decided != NULL && decided->kind == STG_SNIFF_SAFETENSORS;
    h.onnx = name_matches(stg_format_of_kind(STG_SNIFF_ONNX), name);
    h.joblib = stg_name_hint_has_suffix(name, ".joblib");
    for (size_t i = 0; i < sizeof pickle_suffixes / sizeof pickle_suffixes[0]; i++) {
        if (stg_name_hint_has_suffix(name, pickle_suffixes[i])) {
            h.claims_pickle = true;
        }
    }
    return h;
}

stg_format stg_format_quick_label(const uint8_t *buf, size_t len, const char *name_hint)
{
    stg_name_hint h = stg_name_hint_of(name_hint);
    stg_lfs_pointer ptr;
    if (stg_sniff_lfs_pointer(buf, len, &ptr)) {
        return STG_FMT_GIT_LFS_POINTER; /* whatever the name: it is not what the name says */
    }
    const stg_format_entry *e = stg_format_by_name(name_hint);
    bool out_of_memory = false; /* only a label here: the scan itself fails closed */
    if (e == NULL) {
        e = stg_format_sniff(buf, len, &out_of_memory);
    }
    if (e != NULL && e->label != STG_FMT_UNKNOWN) {
        if (e->quick_label != NULL) {
            return e->quick_label(buf, len);
        }
        return e->kind == STG_SNIFF_PICKLE && h.joblib ? STG_FMT_JOBLIB : e->label;
    }
    e = stg_format_last_resort(buf, len, name_hint);
    if (e != NULL) {
        return e->label;
    }
    if (h.claims_pickle || stg_format_claimed(name_hint) != NULL || !stg_sniff_is_text(buf, len)) {
        return STG_FMT_UNKNOWN;
    }
    return stg_sniff_is_json(buf, len, 127, 0) ? STG_FMT_JSON : STG_FMT_TEXT;
}

stg_sniff_kind stg_sniff_kind_of(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    const stg_format_entry *e = stg_format_sniff(buf, len, out_of_memory);
    return e != NULL ? e->kind : STG_SNIFF_UNKNOWN;
}

bool stg_sniff_is_pickle(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    return sniff_pickle(buf, len, out_of_memory);
}
