/* The name rules of the format table (see names.h). */
#include "names.h"

#include <string.h>

#include "sniff.h"

const stg_name_rule stg_safetensors_index_names[] = {
    {.suffix = ".safetensors.index.json", .power = STG_NAME_DECIDES}, {.suffix = NULL}};
const stg_name_rule stg_safetensors_names[] = {
    {.suffix = ".safetensors", .power = STG_NAME_DECIDES}, {.suffix = NULL}};
/* ONNX's name decides only for content no other entry claims (it is the last resort). */
const stg_name_rule stg_onnx_names[] = {{.suffix = ".onnx", .power = STG_NAME_DECIDES},
                                        {.suffix = NULL}};
/* A Core ML model's name decides, for content no other entry claims (a last resort, as ONNX):
 * model.mlmodel is a protobuf with no magic. */
const stg_name_rule stg_coreml_model_names[] = {{.suffix = ".mlmodel", .power = STG_NAME_DECIDES},
                                                {.suffix = NULL}};
/* A GGUF name decides nothing (the magic does) but claims the format: other content under it
 * is format_mismatch, as for the pickle suffixes (ggml's gguf_init_from_file refuses it). */
const stg_name_rule stg_gguf_names[] = {{.suffix = ".gguf", .power = STG_NAME_CLAIMS},
                                        {.suffix = NULL}};
/* Keras 3's load_model takes a zip only under a .keras name (saving_lib.load_model); the zip
 * content decides, other content under the name is format_mismatch. */
const stg_name_rule stg_keras_names[] = {{.suffix = ".keras", .power = STG_NAME_CLAIMS},
                                         {.suffix = NULL}};
/* HDF5: Keras' legacy load_model takes .h5 and .hdf5 (legacy h5 format); the content decides. */
const stg_name_rule stg_hdf5_names[] = {{.suffix = ".h5", .power = STG_NAME_CLAIMS},
                                        {.suffix = ".hdf5", .power = STG_NAME_CLAIMS},
                                        {.suffix = NULL}};
/* TensorFlow's loader reads saved_model.pb by its name inside a SavedModel folder (no magic);
 * tf_keras' keras_metadata.pb beside it. */
const stg_name_rule stg_savedmodel_names[] = {
    {.suffix = "saved_model.pb", .power = STG_NAME_DECIDES}, {.suffix = NULL}};
const stg_name_rule stg_keras_metadata_names[] = {
    {.suffix = "keras_metadata.pb", .power = STG_NAME_DECIDES}, {.suffix = NULL}};

/* A chat template file (chat_template.jinja beside a tokenizer): transformers reads a
 * template from it whatever its content, so the name decides. */
const stg_name_rule stg_chat_template_names[] = {{.suffix = ".jinja", .power = STG_NAME_DECIDES},
                                                 {.suffix = NULL}};
/* TFLite, ExecuTorch, Parquet and Arrow names claim their format (the content decides; other
 * content under them is format_mismatch, as the runtimes refuse it). */
const stg_name_rule stg_tflite_names[] = {{.suffix = ".tflite", .power = STG_NAME_CLAIMS},
                                          {.suffix = NULL}};
const stg_name_rule stg_executorch_names[] = {{.suffix = ".pte", .power = STG_NAME_CLAIMS},
                                              {.suffix = NULL}};
const stg_name_rule stg_tf_index_names[] = {{.suffix = "variables.index", .power = STG_NAME_CLAIMS},
                                            {.suffix = NULL}};
/* A checkpoint's data shard has no magic: TensorFlow's bundle reader reads it as raw tensor
 * bytes at the offsets its .index gives, so its name decides: the one-shard name SavedModel
 * (variables/variables.data-00000-of-00001) and tf.train.Checkpoint (model.ckpt.data-...)
 * write. */
const stg_name_rule stg_tf_data_names[] = {
    {.suffix = ".data-00000-of-00001", .power = STG_NAME_DECIDES}, {.suffix = NULL}};
const stg_name_rule stg_parquet_names[] = {{.suffix = ".parquet", .power = STG_NAME_CLAIMS},
                                           {.suffix = NULL}};
const stg_name_rule stg_arrow_names[] = {{.suffix = ".arrow", .power = STG_NAME_CLAIMS},
                                         {.suffix = ".feather", .power = STG_NAME_CLAIMS},
                                         {.suffix = NULL}};
/* CSV and JSON Lines: text the name decides is a dataset (content that is no text goes back to
 * the dispatcher's unknown-content route). */
const stg_name_rule stg_dataset_text_names[] = {{.suffix = ".csv", .power = STG_NAME_DECIDES},
                                                {.suffix = ".jsonl", .power = STG_NAME_DECIDES},
                                                {.suffix = NULL}};
/* The names of pickle-based model files (np.load unpickles a .npy/.npz that is no array):
 * content no entry claims is walked as a pickle, and refused when it is none. */
const stg_name_rule stg_pickle_names[] = {
    {.suffix = ".bin", .power = STG_NAME_CLAIMS},
    {.suffix = ".pt", .power = STG_NAME_CLAIMS},
    {.suffix = ".pth", .power = STG_NAME_CLAIMS},
    {.suffix = ".ckpt", .power = STG_NAME_CLAIMS},
    {.suffix = ".pkl", .power = STG_NAME_CLAIMS, .member = STG_FMT_PICKLE},
    {.suffix = ".pickle", .power = STG_NAME_CLAIMS, .member = STG_FMT_PICKLE},
    {.suffix = ".joblib", .power = STG_NAME_CLAIMS, .label = STG_FMT_JOBLIB},
    {.suffix = ".npy", .power = STG_NAME_CLAIMS, .member = STG_FMT_NUMPY},
    {.suffix = ".npz", .power = STG_NAME_CLAIMS},
    {.suffix = NULL}};

/* A Flax checkpoint (flax_model.msgpack, any *.msgpack): flax.serialization's msgpack, whatever
 * the content (other content under the name is reported by the Flax rules). */
const stg_name_rule stg_flax_names[] = {{.suffix = ".msgpack", .power = STG_NAME_DECIDES},
                                        {.suffix = NULL}};

/* Tokenizer files (docs/tokenizers.md) by the names their readers are given: SentencePiece
 * models (llama's tokenizer.model, T5's spiece.model, XLM-R's sentencepiece.bpe.model, Marian's
 * *.spm, DeBERTa's spm.model, Mistral's tokenizer.model.v3), tiktoken
 * files, WordPiece vocabularies and BPE merge lists (the last two are text: their label). */
const stg_name_rule stg_sentencepiece_names[] = {
    {.suffix = "tokenizer.model", .power = STG_NAME_DECIDES},
    {.suffix = "spiece.model", .power = STG_NAME_DECIDES},
    {.suffix = "sentencepiece.bpe.model", .power = STG_NAME_DECIDES},
    {.suffix = "sentencepiece.model", .power = STG_NAME_DECIDES},
    {.suffix = ".spm", .power = STG_NAME_DECIDES},      /* Marian's source.spm, target.spm */
    {.suffix = "spm.model", .power = STG_NAME_DECIDES}, /* DeBERTa-v2/v3's DebertaV2Tokenizer */
    /* mistral_common's versioned names (get_spm_version: tokenizer.model.v3, .v7m1, ...) */
    {.suffix = "tokenizer.model.v1", .power = STG_NAME_DECIDES},
    {.suffix = "tokenizer.model.v2", .power = STG_NAME_DECIDES},
    {.suffix = "tokenizer.model.v3", .power = STG_NAME_DECIDES},
    {.suffix = "tokenizer.model.v7", .power = STG_NAME_DECIDES},
    {.suffix = "tokenizer.model.v7m1", .power = STG_NAME_DECIDES},
    {.suffix = NULL}};
const stg_name_rule stg_tiktoken_names[] = {{.suffix = ".tiktoken", .power = STG_NAME_DECIDES},
                                            {.suffix = NULL}};
const stg_name_rule stg_vocab_names[] = {{.suffix = "vocab.txt", .power = STG_NAME_DECIDES},
                                         {.suffix = NULL}};
const stg_name_rule stg_merges_names[] = {{.suffix = "merges.txt", .power = STG_NAME_DECIDES},
                                          {.suffix = NULL}};

/* A name decides these only for text: other bytes under them go to the format they are
 * (dispatch/check.c asks the content when the named format turns them down). */
const stg_name_rule stg_hf_config_names[] = {
    {.suffix = STG_CONFIG_JSON_NAME, .power = STG_NAME_DECIDES}, {.suffix = NULL}};
const stg_name_rule stg_python_names[] = {
    {.suffix = STG_PYTHON_SUFFIX, .power = STG_NAME_DECIDES, .label = STG_FMT_PYTHON_CODE},
    {.suffix = NULL}};
/* A NeMo checkpoint is a tar (docs/yaml.md): other content under the name is format_mismatch
 * (NeMo's restore opens it with tarfile). */
const stg_name_rule stg_tar_names[] = {
    {.suffix = ".nemo", .power = STG_NAME_CLAIMS, .label = STG_FMT_NEMO}, {.suffix = NULL}};
/* A skops file is a zip (skops.io.dump writes one with schema.json): other content under the
 * name is format_mismatch. Its schema.json member is read by the skops rules. */
const stg_name_rule stg_zip_names[] = {
    {.suffix = ".skops", .power = STG_NAME_CLAIMS, .label = STG_FMT_SKOPS}, {.suffix = NULL}};
const stg_name_rule stg_skops_schema_names[] = {
    {.suffix = "schema.json", .power = STG_NAME_DECIDES}, {.suffix = NULL}};
const stg_name_rule stg_yaml_names[] = {{.suffix = ".yaml", .power = STG_NAME_DECIDES},
                                        {.suffix = ".yml", .power = STG_NAME_DECIDES},
                                        {.suffix = NULL}};

/* The longest suffix of the rules of every entry wins (a member name has one meaning). */
stg_format stg_member_name_holds(const char *name)
{
    static const stg_name_rule *const all[] = {stg_safetensors_index_names,
                                               stg_safetensors_names,
                                               stg_onnx_names,
                                               stg_gguf_names,
                                               stg_pickle_names,
                                               stg_flax_names,
                                               stg_keras_names,
                                               stg_hdf5_names,

                                               stg_chat_template_names,
                                               stg_hf_config_names,
                                               stg_python_names,
                                               stg_yaml_names,
                                               stg_tar_names,
                                               stg_coreml_model_names};
    const stg_name_rule *best = NULL;
    for (size_t t = 0; name != NULL && t < sizeof all / sizeof all[0]; t++) {
        for (const stg_name_rule *r = all[t]; r->suffix != NULL; r++) {
            if (stg_name_hint_has_suffix(name, r->suffix) &&
                (best == NULL || strlen(r->suffix) > strlen(best->suffix))) {
                best = r;
            }
        }
    }
    return best != NULL ? best->member : STG_FMT_UNKNOWN;
}

/* OpenVINO's IR frontend opens the weights of a model `X.xml` as `X.bin` (frontend.cpp: the
 * model's path up to its last '.', then ".bin"): the first pickle rule's suffix, written once. */
const char *stg_openvino_weights_suffix(void)
{
    return stg_pickle_names[0].suffix;
}
