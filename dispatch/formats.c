/* The table of formats (see formats.h) and each format's scan: which rules run, which label
 * the result gets.
 *
 * Labels (docs/containers.md):
 *  - joblib: a pickle whose name ends .joblib, or which imports a global from
 *    joblib.numpy_pickle* (every joblib file with arrays does); a compressed stream whose
 *    content is joblib is labelled joblib too (that is how joblib's compress= writes files);
 *    other compressed streams keep the compression's label (gzip, zlib, bz2, xz).
 *  - zip: keras when its root config.json is a Keras model config (Keras 3's .keras), else
 *    torch-zip when a pickle member was scanned, numpy-zip when every member is a .npy, else zip (the quick label looks at names and stored members only);
 *  - tar: torch-tar when members named pickle and storages are found, else tar. */
#include "formats.h"

#include <string.h>

#include "../parser/ggml_legacy.h"
#include "../parser/dataformats.h"
#include "../parser/gguf.h"
#include "../parser/hdf5.h"
#include "../parser/npy.h"
#include "../parser/tar.h"
#include "../parser/torch.h"
#include "../parser/zip.h"
#include "../validator/flax.h"
#include "../validator/dataformats.h"
#include "../validator/flatbuf_models.h"
#include "../validator/gguf.h"
#include "../validator/hydra.h"
#include "../validator/index.h"
#include "../validator/keras.h"
#include "../validator/coreml.h"
#include "../validator/onnx.h"
#include "../validator/openvino.h"
#include "../validator/pickle_scan.h"
#include "../validator/remote_code.h"
#include "../validator/skops.h"
#include "../validator/tokenizer.h"
#include "../validator/savedmodel.h"
#include "../validator/template.h"
#include "safetensors.h"
#include "containers.h"
#include "polyglot.h"

/* ------------------------------------------------------------------------------ labels */

stg_format stg_format_zip_label(const stg_archive_facts *f)
{
    if (f->keras) {
        return STG_FMT_KERAS; /* a pickle member in it is still scanned and reported */
    }
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

/* A local header, or the end record of an empty archive (the table's magic is the first). */
static bool sniff_zip(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_sniff_has_prefix(buf, len, STG_ZIP_LOCAL_MAGIC, 4) ||
           stg_sniff_has_prefix(buf, len, STG_ZIP_END_MAGIC, 4);
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

/* An HDF5 superblock signature at 0 or after a user block (512, 1024, ...). */
static bool sniff_hdf5(const uint8_t *buf, size_t len, bool *oom)
{
    uint64_t at;
    (void)oom;
    return stg_hdf5_find_superblock(buf, len, &at);
}

/* A JSON object whose top level has class_name and config: a Keras model config (the root
 * config.json of a .keras zip, model.to_json() output). */
static bool sniff_keras_config(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_keras_sniff_config(buf, len);
}

static bool sniff_joblib_zf(const uint8_t *buf, size_t len, bool *oom)
{
    uint64_t declared;
    size_t at;
    (void)oom;
    return stg_sniff_zfile_header(buf, len, &declared, &at);
}

static bool sniff_compressed(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_filter_sniff(buf, len) != NULL;
}

static bool sniff_flax(const uint8_t *buf, size_t len, bool *oom)
{
    return stg_flax_sniff(buf, len, oom);
}

/* A validator that did not run (never for the arguments the scans pass) fails closed with
 * the status it gave. */
static void report_status(stg_check_ctx *ctx, const stg_format_entry *e, stg_status st)
{
    if (st == STG_E_NOMEM) {
        stg_report_oom(ctx->report);
    } else if (st != STG_OK) {
        stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, STG_NO_OFFSET,
                       "the %s rules stopped with status %s: not scanned", e->name,
                       stg_status_name(st));
    }
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
    if (!a->top_level) {
        bool oom = false;
        bool imports = stg_pickle_sniff_imports(buf, len, &oom);
        if (oom) {
            stg_report_oom(ctx->report);
        }
        if (!imports) {
            return false;
        }
    }
    size_t globals_before = ctx->report->global_count;
    stg_check_pickles(buf, len, 0, a->top_level ? STG_PICKLE_RAW : STG_PICKLE_MEMBER, ctx);
    bool joblib = stg_name_hint_pickle_label(&a->hint, e->label) == STG_FMT_JOBLIB;
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
    stg_archive_facts facts = {false, false, false, false};
    (void)stg_containers_scan_zip_readers(buf, len, true, ctx, res, &facts);
    res->format = stg_format_zip_label(&facts);
    if (res->format == STG_FMT_ZIP && a->hint.rule != NULL &&
        a->hint.rule->label == STG_FMT_SKOPS) {
        res->format = STG_FMT_SKOPS; /* its schema.json member was judged as a member */
    }
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
        stg_polyglot_check_tar(buf, len, e->name, ctx);
    }
    return true;
}

/* A NeMo checkpoint: a tar named .nemo, or one holding model_config.yaml at its top (NeMo's
 * SaveRestoreConnector._make_nemo_file_from_folder: tarfile.open(filename, "w:") and
 * tar.add(source_dir, arcname="."), nemo/core/connectors/save_restore_connector.py, NVIDIA/NeMo
 * 8cfedd7, lines 599-606). Its members are scanned as any tar's: model_config.yaml by the
 * YAML rules (docs/yaml.md), model_weights.ckpt as a torch checkpoint. */
static bool tar_is_nemo(const uint8_t *buf, size_t len, const stg_dispatch_args *a)
{
    if (a->hint.rule != NULL && a->hint.rule->label == STG_FMT_NEMO) {
        return true;
    }
    stg_tar_list l;
    bool nemo = stg_tar_list_build(&l, buf, len) &&
                (stg_tar_list_find(&l, "./model_config.yaml", 19) != STG_TAR_NONE ||
                 stg_tar_list_find(&l, "model_config.yaml", 17) != STG_TAR_NONE);
    stg_tar_list_free(&l);
    return nemo;
}

static bool scan_tar(const stg_format_entry *e, const uint8_t *buf, size_t len,
                     const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)e;
    stg_archive_facts facts = {false, false, false, false};
    stg_containers_scan_tar(buf, len, ctx, res, &facts);
    res->format = stg_format_tar_label(&facts);
    if (res->format == STG_FMT_TAR && tar_is_nemo(buf, len, a)) {
        res->format = STG_FMT_NEMO;
    }
    return true;
}

/* A compressed stream (the filter table below). joblib's compress= writes these (zlib, gzip,
 * bz2, xz, lzma); its reader, like Python's, decompresses the whole stream and unpickles the
 * result. A filter stguard cannot decompress (zstd, lz4) is format_unscannable. */
static bool scan_compressed(const stg_format_entry *e, const uint8_t *buf, size_t len,
                            const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)e;
    const stg_filter_entry *f = stg_filter_sniff(buf, len);
    if (f == NULL) {
        return false;
    }
    res->format = f->label;
    if (!f->scannable) {
        stg_report_add(ctx->report, STG_FORMAT_UNSCANNABLE, 0,
                       "%s data cannot be opened by stguard: not scanned", f->name);
        return true;
    }
    bool recognised = true;
    stg_member_result inner = stg_containers_scan_compressed(buf, len, f->inflate, f->name, ctx,
                                                             &recognised);
    if (!recognised) {
        return false; /* a zlib-looking header over something else: unknown content */
    }
    res->pickle_based = inner.pickle_based;
    res->inflated = inner.inflated;
    bool named_joblib = stg_name_hint_pickle_label(&a->hint, STG_FMT_PICKLE) == STG_FMT_JOBLIB;
    res->format = inner.format == STG_FMT_JOBLIB || (named_joblib && inner.pickle_based)
                      ? STG_FMT_JOBLIB
                      : f->label;
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

/* GGUF (docs/gguf.md): the header, metadata, tensor infos and data layout, then (for a whole
 * file) the tar reading of the same bytes. */
static bool scan_gguf(const stg_format_entry *e, const uint8_t *buf, size_t len,
                      const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    report_status(ctx, e,
                  stg_gguf_check(buf, len, ctx->lim, ctx->hash_seed, ctx->report, NULL, NULL));
    if (a->top_level) {
        stg_polyglot_check_tar(buf, len, e->name, ctx);
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
    stg_status st = stg_onnx_check(buf, len, ctx->lim, ctx->hash_seed, ctx->report, &m);
    report_status(ctx, e, st);
    if (st == STG_OK && ctx->onnx_external != NULL && a->top_level && ctx->depth == 0 &&
        ctx->member == NULL && m.next > 0) {
        ctx->onnx_external(ctx->onnx_external_arg, m.ext, m.next, ctx->report);
    }
    stg_onnx_model_release(&m);
    res->format = e->label;
    return true;
}

/* Flax msgpack (docs/flax.md): a file or member named *.msgpack, or by content a whole file
 * whose name claims no other format. A member of another name whose bytes happen to read as a
 * small msgpack map is tensor data, and bytes under a pickle name are what its loader reads
 * them as, a pickle (the fallback pickle reading takes them). */
static bool scan_flax(const stg_format_entry *e, const uint8_t *buf, size_t len,
                      const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    if (a->hint.entry != e && (!a->top_level || a->hint.entry != NULL)) {
        return false;
    }
    report_status(ctx, e, stg_flax_check(buf, len, ctx->lim, ctx->report, NULL, NULL));
    res->format = e->label;
    return true;
}

/* Legacy GGML (docs/tokenizers.md, "Legacy GGML"): named, with its version, and warned about as a
 * superseded format; its tensors are not walked. The tar reading of a whole file as for GGUF. */
static bool scan_ggml_legacy(const stg_format_entry *e, const uint8_t *buf, size_t len,
                             const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    stg_ggml_legacy g;
    if (!stg_ggml_legacy_read(buf, len, &g)) {
        return false;
    }
    if (!g.versioned) {
        stg_report_add(ctx->report, STG_GGML_LEGACY, 0,
                       "a legacy GGML file (%s, unversioned): a format GGUF superseded, which "
                       "current loaders refuse; its tensors are not checked",
                       g.kind);
    } else if (g.has_version) {
        stg_report_add(ctx->report, STG_GGML_LEGACY, 0,
                       "a legacy GGML file (%s, version %u%s): a format GGUF superseded, which "
                       "current loaders refuse; its tensors are not checked",
                       g.kind, (unsigned)g.version, g.known ? "" : ", never written by llama.cpp");
    } else {
        stg_report_add(ctx->report, STG_GGML_LEGACY, 0,
                       "a legacy GGML file (%s, its version cut off): a format GGUF superseded, "
                       "which current loaders refuse",
                       g.kind);
    }
    if (a->top_level) {
        stg_polyglot_check_tar(buf, len, e->name, ctx);
    }
    res->format = e->label;
    return true;
}

/* stg_sniff_is_pickle, its out-of-memory said to the report. */
static bool sniffs_as_pickle(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    bool oom = false;
    bool pickle = stg_sniff_is_pickle(buf, len, &oom);
    if (oom) {
        stg_report_oom(ctx->report);
    }
    return pickle;
}

/* Llama 3 ships its tiktoken BPE file as original/tokenizer.model (its reference tokenizer hands
 * that name to tiktoken's load_tiktoken_bpe). A SentencePiece ModelProto starts with the tag of
 * one of its fields 1-5 (0x0a..0x2a), never a base64 character; a tiktoken line always does. */
static bool starts_base64(const uint8_t *buf, size_t len)
{
    if (len == 0) {
        return false;
    }
    uint8_t c = buf[0];
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/* Tokenizer files (docs/tokenizers.md), by their names. Text that a pickle reader would run is
 * left to the fallback pickle reading of unknown content, as it was before these names. */
static bool scan_tokenizer(const stg_format_entry *e, const uint8_t *buf, size_t len,
                           const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)a;
    stg_status st = STG_OK;
    stg_format label = e->label;
    if (label == STG_FMT_SENTENCEPIECE && starts_base64(buf, len)) {
        label = STG_FMT_TIKTOKEN;
    }
    if (label == STG_FMT_SENTENCEPIECE) {
        st = stg_spm_check(buf, len, ctx->lim, ctx->report);
    } else if (sniffs_as_pickle(buf, len, ctx)) {
        return false;
    } else if (label == STG_FMT_TIKTOKEN) {
        st = stg_tiktoken_check(buf, len, ctx->report);
    } else if (e->names == stg_vocab_names) {
        st = stg_vocab_check(buf, len, ctx->report);
    } else {
        st = stg_merges_check(buf, len, ctx->report);
    }
    report_status(ctx, e, st);
    res->format = label;
    return true;
}

/* A whole file whose own format does not start as a zip but whose last bytes are one (bytes
 * prepended to an archive): zipfile opens it, so its members are scanned, as for content no entry
 * claims (check.c's scan_unknown); the label stays the file's. */
static void trailing_zip(const uint8_t *buf, size_t len, const stg_dispatch_args *a,
                         stg_check_ctx *ctx, stg_member_result *res)
{
    stg_archive_facts facts = {false, false, false, false};
    if (a->top_level) {
        (void)stg_containers_scan_zip_readers(buf, len, false, ctx, res, &facts);
    }
}

/* A Keras model config (docs/keras.md): every object at any depth judged as Keras' deserializer
 * resolves it. */
static bool scan_keras_config(const stg_format_entry *e, const uint8_t *buf, size_t len,
                              const stg_dispatch_args *a, stg_check_ctx *ctx,
                              stg_member_result *res)
{
    report_status(ctx, e, stg_keras_check_config(buf, len, 0, ctx->lim, ctx->report, NULL));
    trailing_zip(buf, len, a, ctx, res);
    res->format = e->label;
    return true;
}

/* HDF5 (docs/keras.md): the root attributes; a root model_config makes it a legacy Keras model,
 * judged by the config rules. */
static bool scan_hdf5(const stg_format_entry *e, const uint8_t *buf, size_t len,
                      const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    stg_keras_hdf5 h;
    report_status(ctx, e, stg_keras_check_hdf5(buf, len, ctx->lim, ctx->report, &h));
    res->format = h.model_config ? STG_FMT_KERAS : e->label;
    uint64_t sb = 0;
    (void)stg_hdf5_find_superblock(buf, len, &sb);
    if (a->top_level && sb > 0 && sniffs_as_pickle(buf, (size_t)sb, ctx)) {
        /* the user block before the superblock is a pickle: pickle.load and torch.load of the
         * file run it, whatever HDF5 holds after it */
        stg_check_pickles(buf, len, 0, STG_PICKLE_RAW, ctx);
        res->pickle_based = true;
    }
    if (a->top_level) {
        stg_polyglot_check_tar(buf, len, e->name, ctx); /* a user block tarfile opens */
    }
    trailing_zip(buf, len, a, ctx, res);
    res->format = h.model_config ? STG_FMT_KERAS : e->label;
    return true;
}

/* A TensorFlow SavedModel (docs/keras.md): every op of its graphs and function library. */
static bool scan_savedmodel(const stg_format_entry *e, const uint8_t *buf, size_t len,
                            const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)a;
    report_status(ctx, e, stg_tf_check_savedmodel(buf, len, ctx->lim, ctx->report, NULL));
    res->format = e->label;
    return true;
}

/* tf_keras' keras_metadata.pb: each object's metadata JSON by the Keras config rules. */
static bool scan_keras_metadata(const stg_format_entry *e, const uint8_t *buf, size_t len,
                                const stg_dispatch_args *a, stg_check_ctx *ctx,
                                stg_member_result *res)
{
    (void)a;
    report_status(ctx, e, stg_tf_check_keras_metadata(buf, len, ctx->lim, ctx->report));
    res->format = e->label;
    return true;
}

/* A chat template file (docs/templates.md): the whole file is one Jinja2 template. */
static bool scan_chat_template(const stg_format_entry *e, const uint8_t *buf, size_t len,
                               const stg_dispatch_args *a, stg_check_ctx *ctx,
                               stg_member_result *res)
{
    (void)a;
    stg_template_src src = {buf, len, 0, NULL, NULL, "chat_template.jinja", NULL, 0};
    stg_template_check(&src, ctx->hash_seed, ctx->report);
    res->format = e->label;
    return true;
}

/* A Hugging Face config (docs/remote-code.md): JSON text whose auto_map is judged. Bytes that
 * are no JSON text are turned down (the content decides what they are). */
static bool scan_hf_config(const stg_format_entry *e, const uint8_t *buf, size_t len,
                           const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)a;
    if (!stg_sniff_is_text(buf, len) || !stg_remote_code_check(buf, len, ctx)) {
        return false;
    }
    res->format = e->label;
    /* The same JSON is what the other loaders of a repo read under the name: transformers'
     * tokenizer_config.json chat templates, and Keras 3's config.json (a .keras zip's root
     * member, or a model folder's) when it is a Keras model config. */
    (void)stg_template_check_json(buf, len, ctx->lim, ctx->hash_seed, ctx->report);
    if (stg_keras_sniff_config(buf, len)) {
        report_status(ctx, e, stg_keras_check_config(buf, len, 0, ctx->lim, ctx->report, NULL));
        res->format = STG_FMT_KERAS;
    }
    return true;
}

/* Python source: a label only (an auto_map that names it is what is reported). */
static bool scan_python(const stg_format_entry *e, const uint8_t *buf, size_t len,
                        const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)a;
    (void)ctx;
    if (!stg_sniff_is_text(buf, len)) {
        return false;
    }
    res->format = e->label;
    return true;
}

/* A skops schema.json (docs/remote-code.md, skops): a JSON document whose top level holds
 * "protocol" and "__loader__" is judged by the skops rules; other JSON is plain JSON. */
static bool scan_skops_schema(const stg_format_entry *e, const uint8_t *buf, size_t len,
                              const stg_dispatch_args *a, stg_check_ctx *ctx,
                              stg_member_result *res)
{
    (void)a;
    bool schema;
    if (!stg_sniff_is_text(buf, len) || !stg_skops_check(buf, len, ctx, &schema)) {
        return false;
    }
    res->format = e->label;
    return true;
}

/* A YAML config (docs/yaml.md): hydra _target_ rules over the bounded YAML reader. */
static bool scan_yaml(const stg_format_entry *e, const uint8_t *buf, size_t len,
                      const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)a;
    if (!stg_sniff_is_text(buf, len)) {
        return false;
    }
    stg_hydra_check(buf, len, ctx);
    res->format = e->label;
    return true;
}

/* OpenVINO IR (docs/openvino.md): the XML's rules; for the file itself (not an archive member:
 * its weights are beside it on disk) the constants go to the loader's hook. */
static bool sniff_openvino(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_openvino_sniff(buf, len);
}

static bool scan_openvino(const stg_format_entry *e, const uint8_t *buf, size_t len,
                          const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    stg_openvino_ir ir;
    stg_openvino_ir_init(&ir);
    stg_status st = stg_openvino_check(buf, len, ctx->report, &ir);
    report_status(ctx, e, st);
    if (st == STG_OK && ctx->openvino_weights != NULL && a->top_level && ctx->depth == 0 &&
        ctx->member == NULL) {
        ctx->openvino_weights(ctx->openvino_weights_arg, &ir, ctx->report);
    }
    stg_openvino_ir_release(&ir);
    res->format = e->label;
    return true;
}

/* Core ML model.mlmodel (docs/coreml.md): the Model protobuf's wire data. */
static bool scan_coreml_model(const stg_format_entry *e, const uint8_t *buf, size_t len,
                              const stg_dispatch_args *a, stg_check_ctx *ctx,
                              stg_member_result *res)
{
    (void)a;
    stg_coreml_model_check(buf, len, ctx->report);
    res->format = e->label;
    return true;
}

/* ------------------------------------------------------- flatbuffer models, data files */

static bool sniff_tflite(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_tflite_sniff(buf, len);
}

static bool sniff_executorch(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_executorch_sniff(buf, len);
}

static bool sniff_parquet(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_parquet_sniff(buf, len);
}

static bool sniff_arrow(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_arrow_sniff(buf, len);
}

static bool sniff_tf_index(const uint8_t *buf, size_t len, bool *oom)
{
    (void)oom;
    return stg_sstable_sniff(buf, len);
}

/* A flatbuffer model's first bytes are its root offset: a pickle reader that followed them to
 * STOP would read another program from the same file (the safetensors polyglot rule), and
 * torch.load would try them as a tar first. */
static void flatbuf_polyglots(const uint8_t *buf, size_t len, const char *name, stg_check_ctx *ctx)
{
    size_t stop_end = 0;
    bool oom = false;
    if (stg_pickle_sniff_file(buf, len, len, &stop_end, NULL, NULL, &oom)) {
        stg_report_add(ctx->report, STG_POLYGLOT_PICKLE, 0,
                       "the first %zu bytes are also a pickle that runs to STOP", stop_end);
        stg_check_pickles(buf, stop_end, 0, STG_PICKLE_RAW, ctx);
    }
    if (oom) {
        stg_report_oom(ctx->report);
    }
    stg_polyglot_check_tar(buf, len, name, ctx);
}

/* TFLite and ExecuTorch (docs/flatbuffers.md). */
static bool scan_flatbuf_model(const stg_format_entry *e, const uint8_t *buf, size_t len,
                               const stg_dispatch_args *a, stg_check_ctx *ctx,
                               stg_member_result *res)
{
    report_status(ctx, e,
                  e->label == STG_FMT_TFLITE ? stg_tflite_check(buf, len, ctx->report, NULL)
                                             : stg_executorch_check(buf, len, ctx->report, NULL));
    if (a->top_level) {
        flatbuf_polyglots(buf, len, e->name, ctx);
    }
    res->format = e->label;
    return true;
}

/* Data files (docs/data-formats.md): their framing checked, nothing loaded runs code. */
static bool scan_data_file(const stg_format_entry *e, const uint8_t *buf, size_t len,
                           const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res)
{
    (void)a;
    /* a variables.data shard is raw tensor bytes with no framing of its own: nothing to check */
    if (e->label == STG_FMT_PARQUET) {
        stg_check_parquet(buf, len, ctx->report);
    } else if (e->label == STG_FMT_ARROW) {
        stg_check_arrow(buf, len, ctx->report);
    } else if (e->label == STG_FMT_TF_VARIABLES_INDEX) {
        stg_check_tf_index(buf, len, ctx->report);
    }
    res->format = e->label;
    return true;
}

/* JSON Lines: the first line (of at most len bytes) that is not a JSON document. */
static void check_json_lines(const uint8_t *buf, size_t len, stg_check_ctx *ctx)
{
    size_t bad = 0, first_bad = 0;
    for (size_t start = 0; start < len;) {
        const uint8_t *nl = memchr(buf + start, '\n', len - start);
        size_t end = nl != NULL ? (size_t)(nl - buf) : len;
        size_t b = start, n = end;
        while (b < n && (buf[b] == ' ' || buf[b] == '\t' || buf[b] == '\r')) {
            b++;
        }
        while (n > b && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r')) {
            n--;
        }
        bool oom = false;
        if (n > b && !stg_sniff_json_document(buf + b, n - b, ctx->lim->max_json_depth,
                                              ctx->lim->max_memory, &oom)) {
            if (oom) {
                stg_report_oom(ctx->report);
                return;
            }
            first_bad = bad++ == 0 ? b : first_bad;
        }
        start = end + 1;
    }
    if (bad > 0) {
        stg_report_add(ctx->report, STG_DATASET_TEXT_INVALID, first_bad,
                       "%zu line(s) of the JSON Lines file are not a JSON object or array", bad);
    }
}

/* CSV and JSON Lines by name: text is a dataset; anything else, and text that walks as a pickle
 * importing a global, goes back to the dispatcher as unknown content (an archive at its end, a
 * pickle a loader would run, the name's mismatch). */
static bool scan_dataset_text(const stg_format_entry *e, const uint8_t *buf, size_t len,
                              const stg_dispatch_args *a, stg_check_ctx *ctx,
                              stg_member_result *res)
{
    if (!stg_sniff_is_text(buf, len)) {
        return false;
    }
    /* A protocol-0 pickle is text too: one that imports a global is what pickle.load of the
     * file would run, so it takes the unknown-content route (walked and reported as a pickle,
     * as under any other text name) rather than pass as a dataset. */
    bool oom = false;
    bool imports = stg_pickle_sniff_imports(buf, len, &oom);
    if (oom) {
        stg_report_oom(ctx->report);
    }
    if (imports) {
        /* the entry its content sniffs as (the pickle entry) scans it, at the top level as in
         * an archive member; none: the unknown-content route */
        const stg_format_entry *by_content = stg_format_sniff(buf, len, &oom);
        return by_content != NULL && by_content != e &&
               by_content->scan(by_content, buf, len, a, ctx, res);
    }
    if (a->hint.rule == &stg_dataset_text_names[STG_DATASET_JSONL_RULE]) { /* .jsonl */
        check_json_lines(buf, len, ctx);
    }
    res->format = e->label;
    return true;
}

/* ------------------------------------------------------------------------- quick labels */

static stg_format quick_label_hf_config(const uint8_t *buf, size_t len)
{
    if (!stg_sniff_is_text(buf, len)) {
        return STG_FMT_UNKNOWN;
    }
    return stg_sniff_is_json(buf, len, 127, 0) ? STG_FMT_JSON : STG_FMT_TEXT;
}

static stg_format quick_label_python(const uint8_t *buf, size_t len)
{
    return stg_sniff_is_text(buf, len) ? STG_FMT_PYTHON_CODE : STG_FMT_UNKNOWN;
}

static stg_format quick_label_yaml(const uint8_t *buf, size_t len)
{
    return stg_sniff_is_text(buf, len) ? STG_FMT_YAML : STG_FMT_UNKNOWN;
}

/* Label of an archive by its directory alone (no inflating): torch-zip when a member is named
 * *.pkl / *.pickle or a stored member's bytes are a pickle; numpy-zip when every member is a
 * .npy; else zip. A full scan can say torch-zip where only a deflated member is a pickle. */
static stg_format quick_label_zip(const uint8_t *buf, size_t len)
{
    stg_archive_facts facts = {false, false, false, false};
    stg_zip z;
    stg_zip_error err;
    if (stg_zip_open(&z, buf, len, &err) != STG_ZIPR_OK) {
        return stg_format_zip_label(&facts);
    }
    stg_zip_entry e;
    bool all_npy = z.entry_count > 0, pickle = false, config = false, metadata = false;
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
        /* Keras 3's saving_lib writes these two at the root of every .keras zip */
        config = config || (e.name_len == 11 && memcmp(e.name, STG_CONFIG_JSON_NAME, 11) == 0);
        metadata = metadata || (e.name_len == 13 && memcmp(e.name, "metadata.json", 13) == 0);
        stg_format holds = stg_member_name_holds(name);
        bool npy = holds == STG_FMT_NUMPY;
        all_npy = all_npy && npy;
        if (holds == STG_FMT_PICKLE) {
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
    facts.keras = config && metadata;
    return stg_format_zip_label(&facts);
}

/* torch-tar when tarfile's getmember() finds members named pickle and storages (what torch's
 * legacy_load() reads), else tar (the same rule as the full scan, containers.c). */
static stg_format quick_label_tar(const uint8_t *buf, size_t len)
{
    stg_tar_list l;
    stg_archive_facts facts = {false, false, false, false};
    facts.torch_tar = stg_tar_list_build(&l, buf, len) &&
                      stg_tar_list_find(&l, "pickle", 6) != STG_TAR_NONE &&
                      stg_tar_list_find(&l, "storages", 8) != STG_TAR_NONE;
    stg_tar_list_free(&l);
    return stg_format_tar_label(&facts);
}

static stg_format quick_label_compressed(const uint8_t *buf, size_t len)
{
    const stg_filter_entry *f = stg_filter_sniff(buf, len);
    return f != NULL ? f->label : STG_FMT_UNKNOWN;
}

/* -------------------------------------------------------------------------------- table */

/* sniff_order: the order in which the loaders check content (what a loader checks first
 * wins); every entry has its own. */
static const stg_format_entry safetensors_index_entry = {
    .name = "safetensors index",
    .names = stg_safetensors_index_names,
    .scan = scan_safetensors_index,
    .label = STG_FMT_SAFETENSORS_INDEX,
    .door = STG_DOOR_MODEL,
    .neighbours = true,
};
static const stg_format_entry safetensors_entry = {
    .name = "safetensors",
    .sniff = sniff_safetensors,
    .sniff_order = 10,
    .names = stg_safetensors_names,
    .read_plan = STG_READ_WINDOWS,
    .scan = scan_safetensors,
    .label = STG_FMT_SAFETENSORS,
    .alone = true,
    .streams = true,
};
static const stg_format_entry zip_entry = {
    .name = "zip",
    .magic = STG_ZIP_LOCAL_MAGIC,
    .magic_len = 4,
    .sniff = sniff_zip,
    .sniff_order = 20,
    .names = stg_zip_names,
    .read_plan = STG_READ_WINDOWS,
    .scan = scan_zip,
    .label = STG_FMT_ZIP,
    .quick_label = quick_label_zip,
};
static const stg_format_entry npy_entry = {
    .name = "npy",
    .magic = STG_NPY_MAGIC,
    .magic_len = STG_NPY_MAGIC_LEN,
    .sniff_order = 30,
    .scan = scan_npy,
    .label = STG_FMT_NUMPY,
};
static const stg_format_entry gguf_entry = {
    .name = "GGUF",
    .magic = STG_GGUF_MAGIC,
    .magic_len = 4,
    .sniff_order = 40,
    .names = stg_gguf_names,
    .read_plan = STG_READ_HEAD,
    .scan = scan_gguf,
    .label = STG_FMT_GGUF,
    .door = STG_DOOR_GGUF,
};
/* The legacy GGML magics, one entry each (the magic decides); a bounded head is read, as for
 * GGUF: the rules read the magic and the version only. */
static const stg_format_entry ggml_entry = {
    .name = "legacy GGML",
    .magic = STG_GGML_MAGIC_GGML,
    .magic_len = STG_GGML_MAGIC_LEN,
    .sniff_order = 41,
    .read_plan = STG_READ_HEAD,
    .scan = scan_ggml_legacy,
    .label = STG_FMT_GGML_LEGACY,
    .alone = true,
};
static const stg_format_entry ggmf_entry = {
    .name = "legacy GGML (ggmf)",
    .magic = STG_GGML_MAGIC_GGMF,
    .magic_len = STG_GGML_MAGIC_LEN,
    .sniff_order = 42,
    .read_plan = STG_READ_HEAD,
    .scan = scan_ggml_legacy,
    .label = STG_FMT_GGML_LEGACY,
    .alone = true,
};
static const stg_format_entry ggjt_entry = {
    .name = "legacy GGML (ggjt)",
    .magic = STG_GGML_MAGIC_GGJT,
    .magic_len = STG_GGML_MAGIC_LEN,
    .sniff_order = 43,
    .read_plan = STG_READ_HEAD,
    .scan = scan_ggml_legacy,
    .label = STG_FMT_GGML_LEGACY,
    .alone = true,
};
static const stg_format_entry ggla_entry = {
    .name = "legacy GGML (ggla)",
    .magic = STG_GGML_MAGIC_GGLA,
    .magic_len = STG_GGML_MAGIC_LEN,
    .sniff_order = 44,
    .read_plan = STG_READ_HEAD,
    .scan = scan_ggml_legacy,
    .label = STG_FMT_GGML_LEGACY,
    .alone = true,
};

static const stg_format_entry hdf5_entry = {
    .name = "HDF5",
    .magic = STG_HDF5_MAGIC,
    .magic_len = STG_HDF5_MAGIC_LEN,
    .sniff = sniff_hdf5,
    .sniff_order = 45,
    .names = stg_hdf5_names,
    .scan = scan_hdf5,
    .label = STG_FMT_HDF5,
    .alone = true,
};
static const stg_format_entry tar_entry = {
    .name = "tar",
    .sniff = sniff_tar,
    .sniff_order = 50,
    .names = stg_tar_names,
    .scan = scan_tar,
    .label = STG_FMT_TAR,
    .quick_label = quick_label_tar,
};
static const stg_format_entry torch_legacy_entry = {
    .name = "legacy torch",
    .sniff = sniff_torch_legacy,
    .sniff_order = 60,
    .scan = scan_torch_legacy,
    .label = STG_FMT_TORCH_LEGACY,
};
static const stg_format_entry pickle_entry = {
    .name = "pickle",
    .sniff = sniff_pickle,
    .sniff_order = 70,
    .names = stg_pickle_names,
    .scan = scan_pickle,
    .label = STG_FMT_PICKLE,
    .pickle = true,
};
static const stg_format_entry joblib_zf_entry = {
    .name = "joblib ZF",
    .sniff = sniff_joblib_zf,
    .sniff_order = 80,
    .scan = scan_joblib_zf,
    .label = STG_FMT_JOBLIB,
};
/* After the pickle sniff: bytes a pickle reader would run are scanned as a pickle first. */
static const stg_format_entry flax_entry = {
    .name = "Flax msgpack",
    .sniff = sniff_flax,
    .sniff_order = 75,
    .names = stg_flax_names,
    .scan = scan_flax,
    .label = STG_FMT_FLAX_MSGPACK,
    .alone = true,
};
static const stg_format_entry sentencepiece_entry = {
    .name = "SentencePiece model",
    .names = stg_sentencepiece_names,
    .scan = scan_tokenizer,
    .label = STG_FMT_SENTENCEPIECE,
    .alone = true,
};
static const stg_format_entry tiktoken_entry = {
    .name = "tiktoken BPE file",
    .names = stg_tiktoken_names,
    .scan = scan_tokenizer,
    .label = STG_FMT_TIKTOKEN,
    .alone = true,
};
static const stg_format_entry vocab_entry = {
    .name = "WordPiece vocabulary",
    .names = stg_vocab_names,
    .scan = scan_tokenizer,
    .label = STG_FMT_TEXT,
    .alone = true,
};
static const stg_format_entry merges_entry = {
    .name = "BPE merges",
    .names = stg_merges_names,
    .scan = scan_tokenizer,
    .label = STG_FMT_TEXT,
    .alone = true,
};

/* A Keras model config on its own or as a .keras zip's config.json: before the pickle sniff, which
 * a JSON object's opening brace (EMPTY_DICT) would otherwise reach. */
static const stg_format_entry keras_config_entry = {
    .name = "Keras config",
    .sniff = sniff_keras_config,
    .sniff_order = 65,
    .names = stg_keras_names,
    .scan = scan_keras_config,
    .label = STG_FMT_KERAS,
    .alone = true,
};
/* TensorFlow SavedModel files, by name only (no magic): saved_model.pb, keras_metadata.pb. */
static const stg_format_entry savedmodel_entry = {
    .name = "TensorFlow SavedModel",
    .names = stg_savedmodel_names,
    .scan = scan_savedmodel,
    .label = STG_FMT_TF_SAVEDMODEL,
    .alone = true,
};
static const stg_format_entry keras_metadata_entry = {
    .name = "Keras SavedModel metadata",
    .names = stg_keras_metadata_names,
    .scan = scan_keras_metadata,
    .label = STG_FMT_KERAS,
    .alone = true,
};
/* Every compression of the filter table below, unwrapped in one place (scan_compressed). */
static const stg_format_entry compressed_entry = {
    .name = "compressed stream",
    .sniff = sniff_compressed,
    .sniff_order = 90,
    .scan = scan_compressed,
    .label = STG_FMT_UNKNOWN,
    .quick_label = quick_label_compressed,
};
/* A Jinja2 chat template, by its name only (it is text: no magic, no sniff). */
static const stg_format_entry chat_template_entry = {
    .name = "chat template",
    .names = stg_chat_template_names,
    .scan = scan_chat_template,
    .label = STG_FMT_CHAT_TEMPLATE,
    .alone = true,
};
/* Flatbuffer models: the identifier at bytes 4-7 (after the root offset) decides. */
static const stg_format_entry tflite_entry = {
    .name = "TFLite",
    .sniff = sniff_tflite,
    .sniff_order = 46,
    .names = stg_tflite_names,
    .scan = scan_flatbuf_model,
    .label = STG_FMT_TFLITE,
    .alone = true,
};
static const stg_format_entry executorch_entry = {
    .name = "ExecuTorch",
    .sniff = sniff_executorch,
    .sniff_order = 47,
    .names = stg_executorch_names,
    .scan = scan_flatbuf_model,
    .label = STG_FMT_EXECUTORCH,
    .alone = true,
};
static const stg_format_entry parquet_entry = {
    .name = "Parquet",
    .magic = STG_PARQUET_MAGIC,
    .magic_len = 4,
    .sniff = sniff_parquet,
    .sniff_order = 48,
    .names = stg_parquet_names,
    .scan = scan_data_file,
    .label = STG_FMT_PARQUET,
    .alone = true,
};
static const stg_format_entry arrow_entry = {
    .name = "Arrow",
    .magic = STG_ARROW_MAGIC,
    .magic_len = 6,
    .sniff = sniff_arrow,
    .sniff_order = 49,
    .names = stg_arrow_names,
    .scan = scan_data_file,
    .label = STG_FMT_ARROW,
    .alone = true,
};
/* The magic is at the end: asked after the pickle and compression entries, so bytes a loader
 * reads from offset 0 as something else are never taken for a table by their last bytes. */
static const stg_format_entry tf_index_entry = {
    .name = "TensorFlow variables.index",
    .sniff = sniff_tf_index,
    .sniff_order = 95,
    .names = stg_tf_index_names,
    .scan = scan_data_file,
    .label = STG_FMT_TF_VARIABLES_INDEX,
    .alone = true,
};
static const stg_format_entry tf_data_entry = {
    .name = "TensorFlow variables.data",
    .names = stg_tf_data_names,
    .scan = scan_data_file,
    .label = STG_FMT_TF_VARIABLES_DATA,
    .alone = true,
};
static const stg_format_entry dataset_text_entry = {
    .name = "dataset text",
    .names = stg_dataset_text_names,
    .scan = scan_dataset_text,
    .label = STG_FMT_DATASET_TEXT,
    .alone = true,
};
/* ONNX, by its name or by a content walk, only for a whole file that every entry above and
 * the dispatcher's other last readings left unclaimed (docs/onnx.md, "Recognition"): it never
 * takes what another format claims. */
static const stg_format_entry onnx_entry = {
    .name = "ONNX",
    .sniff = sniff_onnx,
    .names = stg_onnx_names,
    .scan = scan_onnx,
    .label = STG_FMT_ONNX,
    .door = STG_DOOR_ONNX,
    .last_resort = true,
};

/* Text formats a name decides (a scan turns other bytes down): configs that name code. */
static const stg_format_entry hf_config_entry = {
    .name = "Hugging Face config",
    .names = stg_hf_config_names,
    .scan = scan_hf_config,
    .label = STG_FMT_JSON,
    .quick_label = quick_label_hf_config,
};
static const stg_format_entry python_entry = {
    .name = "Python source",
    .names = stg_python_names,
    .scan = scan_python,
    .label = STG_FMT_PYTHON_CODE,
    .quick_label = quick_label_python,
    .alone = true,
};

static const stg_format_entry yaml_entry = {
    .name = "YAML config",
    .names = stg_yaml_names,
    .scan = scan_yaml,
    .label = STG_FMT_YAML,
    .quick_label = quick_label_yaml,
    .alone = true,
};

static const stg_format_entry skops_schema_entry = {
    .name = "skops schema",
    .names = stg_skops_schema_names,
    .scan = scan_skops_schema,
    .label = STG_FMT_JSON,
    .quick_label = quick_label_hf_config,
    .alone = true,
};

/* OpenVINO IR: XML whose root element is <net>, after every other entry (text is otherwise
 * no format). Its weights file beside it is checked by the loader (loader/sibling.h). */
static const stg_format_entry openvino_entry = {
    .name = "OpenVINO IR",
    .sniff = sniff_openvino,
    .sniff_order = 180,
    .scan = scan_openvino,
    .label = STG_FMT_OPENVINO_IR,
};

/* Core ML's model.mlmodel, by its name only, for a whole file every other reading left
 * unclaimed (before ONNX's content walk, which a Model protobuf may also pass). */
static const stg_format_entry coreml_model_entry = {
    .name = "Core ML model",
    .names = stg_coreml_model_names,
    .scan = scan_coreml_model,
    .label = STG_FMT_COREML_MODEL,
    .last_resort = true,
};

static const stg_format_entry *const formats[] = {
    &safetensors_index_entry,
    &safetensors_entry,
    &zip_entry,
    &npy_entry,
    &gguf_entry,
    &ggml_entry,
    &ggmf_entry,
    &ggjt_entry,
    &ggla_entry,
    &hdf5_entry,
    &tar_entry,
    &torch_legacy_entry,
    &pickle_entry,
    &keras_config_entry,
    &savedmodel_entry,
    &keras_metadata_entry,
    &joblib_zf_entry,
    &flax_entry,
    &sentencepiece_entry,
    &tiktoken_entry,
    &vocab_entry,
    &merges_entry,
    &compressed_entry,
    &tflite_entry,
    &executorch_entry,
    &parquet_entry,
    &arrow_entry,
    &tf_index_entry,
    &tf_data_entry,
    &dataset_text_entry,
    &chat_template_entry,
    &coreml_model_entry,
    &onnx_entry,
    &openvino_entry,
    &hf_config_entry,
    &python_entry,
    &yaml_entry,
    &skops_schema_entry,
};

enum { FORMAT_COUNT = sizeof formats / sizeof formats[0] };

const stg_format_entry *const *stg_format_entries(size_t *count)
{
    *count = FORMAT_COUNT;
    return formats;
}

/* The compressions (libarchive's filters). Their sniffs exclude one another (distinct magic
 * bytes); sniff_order still says which is asked first. */
static const stg_filter_entry gzip_filter = {.name = "gzip",
                                             .sniff = stg_sniff_is_gzip,
                                             .sniff_order = 10,
                                             .inflate = STG_INFLATE_GZIP,
                                             .scannable = true,
                                             .label = STG_FMT_GZIP};
static const stg_filter_entry bzip2_filter = {.name = "bzip2",
                                              .sniff = stg_sniff_is_bzip2,
                                              .sniff_order = 20,
                                              .inflate = STG_INFLATE_BZIP2,
                                              .scannable = true,
                                              .label = STG_FMT_BZ2};
static const stg_filter_entry xz_filter = {.name = "xz",
                                           .sniff = stg_sniff_is_xz,
                                           .sniff_order = 30,
                                           .inflate = STG_INFLATE_LZMA,
                                           .scannable = true,
                                           .label = STG_FMT_XZ};
static const stg_filter_entry lzma_filter = {.name = "lzma",
                                             .sniff = stg_sniff_is_lzma_alone,
                                             .sniff_order = 40,
                                             .inflate = STG_INFLATE_LZMA,
                                             .scannable = true,
                                             .label = STG_FMT_XZ};
static const stg_filter_entry zstd_filter = {.name = "zstd-compressed",
                                             .sniff = stg_sniff_is_zstd,
                                             .sniff_order = 50,
                                             .label = STG_FMT_UNKNOWN};
static const stg_filter_entry lz4_filter = {.name = "lz4-compressed",
                                            .sniff = stg_sniff_is_lz4,
                                            .sniff_order = 60,
                                            .label = STG_FMT_UNKNOWN};
static const stg_filter_entry zlib_filter = {.name = "zlib",
                                             .sniff = stg_sniff_is_zlib,
                                             .sniff_order = 70,
                                             .inflate = STG_INFLATE_ZLIB,
                                             .scannable = true,
                                             .label = STG_FMT_ZLIB};

static const stg_filter_entry *const filters[] = {
    &gzip_filter, &bzip2_filter, &xz_filter, &lzma_filter, &zstd_filter, &lz4_filter, &zlib_filter,
};

enum { FILTER_COUNT = sizeof filters / sizeof filters[0] };

const stg_filter_entry *const *stg_filter_entries(size_t *count)
{
    *count = FILTER_COUNT;
    return filters;
}

/* The index of the lowest nonzero order (0: not asked, or asked already), n when none is
 * left: the table is asked in precedence order, whatever its rows. */
static size_t next_in_order(const unsigned *orders, size_t n)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
        if (orders[i] != 0 && (best == n || orders[i] < orders[best])) {
            best = i;
        }
    }
    return best;
}

const stg_filter_entry *stg_filter_sniff(const uint8_t *buf, size_t len)
{
    unsigned orders[FILTER_COUNT];
    for (size_t i = 0; i < FILTER_COUNT; i++) {
        orders[i] = filters[i]->sniff_order;
    }
    for (size_t i; (i = next_in_order(orders, FILTER_COUNT)) < FILTER_COUNT;) {
        if (filters[i]->sniff(buf, len, NULL)) {
            return filters[i];
        }
        orders[i] = 0; /* asked */
    }
    return NULL;
}

static bool magic_matches(const stg_format_entry *e, const uint8_t *buf, size_t len)
{
    return e->magic != NULL && stg_sniff_has_prefix(buf, len, e->magic, e->magic_len);
}

/* The rule of e matching name, the longest suffix first; NULL when none. */
static const stg_name_rule *rule_of(const stg_format_entry *e, const char *name)
{
    const stg_name_rule *best = NULL;
    for (size_t i = 0; e->names != NULL && e->names[i].suffix != NULL; i++) {
        if (stg_name_hint_has_suffix(name, e->names[i].suffix) &&
            (best == NULL || strlen(e->names[i].suffix) > strlen(best->suffix))) {
            best = &e->names[i];
        }
    }
    return best;
}

stg_name_hint stg_name_hint_of(const char *name)
{
    stg_name_hint h = {NULL, NULL};
    for (size_t i = 0; name != NULL && i < FORMAT_COUNT; i++) {
        const stg_name_rule *r = rule_of(formats[i], name);
        if (r != NULL && (h.rule == NULL || strlen(r->suffix) > strlen(h.rule->suffix))) {
            h.entry = formats[i];
            h.rule = r;
        }
    }
    return h;
}

const stg_format_entry *stg_name_hint_decides(const stg_name_hint *h)
{
    return h->rule != NULL && h->rule->power == STG_NAME_DECIDES && !h->entry->last_resort
               ? h->entry
               : NULL;
}

bool stg_name_hint_claims_pickle(const stg_name_hint *h)
{
    return h->entry != NULL && h->entry->pickle;
}

stg_format stg_name_hint_pickle_label(const stg_name_hint *h, stg_format fallback)
{
    return stg_name_hint_claims_pickle(h) && h->rule->label != STG_FMT_UNKNOWN ? h->rule->label
                                                                               : fallback;
}

const stg_format_entry *stg_format_by_name(const char *name)
{
    stg_name_hint h = stg_name_hint_of(name);
    return stg_name_hint_decides(&h);
}

const stg_format_entry *stg_format_claimed(const char *name)
{
    return stg_name_hint_of(name).entry;
}

const stg_format_entry *stg_format_sniff(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    unsigned orders[FORMAT_COUNT];
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        const stg_format_entry *e = formats[i];
        orders[i] = e->last_resort || (e->sniff == NULL && e->magic == NULL) ? 0 : e->sniff_order;
    }
    for (size_t i; (i = next_in_order(orders, FORMAT_COUNT)) < FORMAT_COUNT;) {
        const stg_format_entry *e = formats[i];
        if (e->sniff != NULL ? e->sniff(buf, len, out_of_memory) : magic_matches(e, buf, len)) {
            return e;
        }
        orders[i] = 0; /* asked */
    }
    return NULL;
}

const stg_format_entry *stg_format_by_magic(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        if (magic_matches(formats[i], buf, len)) {
            return formats[i];
        }
    }
    return NULL;
}

size_t stg_format_magic_max(void)
{
    size_t max = 0;
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        max = formats[i]->magic_len > max ? formats[i]->magic_len : max;
    }
    return max;
}

const stg_format_entry *stg_format_last_resort(const uint8_t *buf, size_t len, const char *name)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        const stg_format_entry *e = formats[i];
        if (e->last_resort &&
            (rule_of(e, name) != NULL || (e->sniff != NULL && e->sniff(buf, len, NULL)))) {
            return e;
        }
    }
    return NULL;
}

stg_door stg_format_door(const char *name, const uint8_t *head, size_t len)
{
    stg_name_hint h = stg_name_hint_of(name);
    const stg_format_entry *decided = stg_name_hint_decides(&h);
    if (decided != NULL && decided->door != STG_DOOR_SAFETENSORS) {
        return decided->door;
    }
    const stg_format_entry *by_magic = stg_format_by_magic(head, len);
    if (by_magic != NULL && by_magic->door != STG_DOOR_SAFETENSORS) {
        return by_magic->door;
    }
    /* a last resort's deciding name (.onnx); a claiming name (.gguf) opens no door */
    return h.rule != NULL && h.rule->power == STG_NAME_DECIDES ? h.entry->door
                                                               : STG_DOOR_SAFETENSORS;
}

stg_format stg_format_quick_label(const uint8_t *buf, size_t len, const char *name_hint)
{
    stg_name_hint h = stg_name_hint_of(name_hint);
    stg_lfs_pointer ptr;
    if (stg_sniff_lfs_pointer(buf, len, &ptr)) {
        return STG_FMT_GIT_LFS_POINTER; /* whatever the name: it is not what the name says */
    }
    const stg_format_entry *e = stg_name_hint_decides(&h);
    bool out_of_memory = false; /* only a label here: the scan itself fails closed */
    if (e == NULL) {
        e = stg_format_sniff(buf, len, &out_of_memory);
    }
    stg_format quick = STG_FMT_UNKNOWN;
    if (e != NULL) {
        quick = e->quick_label != NULL ? e->quick_label(buf, len) : e->label;
    }
    if (quick != STG_FMT_UNKNOWN) {
        return e->pickle ? stg_name_hint_pickle_label(&h, quick) : quick;
    }
    e = stg_format_last_resort(buf, len, name_hint);
    if (e != NULL) {
        return e->label;
    }
    if (h.entry != NULL || !stg_sniff_is_text(buf, len)) {
        return STG_FMT_UNKNOWN;
    }
    return stg_sniff_is_json(buf, len, 127, 0) ? STG_FMT_JSON : STG_FMT_TEXT;
}

bool stg_sniff_is_pickle(const uint8_t *buf, size_t len, bool *out_of_memory)
{
    return sniff_pickle(buf, len, out_of_memory);
}
