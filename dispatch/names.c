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
/* A GGUF name decides nothing (the magic does) but claims the format: other content under it
 * is format_mismatch, as for the pickle suffixes (ggml's gguf_init_from_file refuses it). */
const stg_name_rule stg_gguf_names[] = {{.suffix = ".gguf", .power = STG_NAME_CLAIMS},
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

/* The longest suffix of the rules of every entry wins (a member name has one meaning). */
stg_format stg_member_name_holds(const char *name)
{
    static const stg_name_rule *const all[] = {stg_safetensors_index_names, stg_safetensors_names,
                                               stg_onnx_names, stg_gguf_names, stg_pickle_names};
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
