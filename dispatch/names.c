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
    static const stg_name_rule *const all[] = {stg_safetensors_index_names,
                                               stg_safetensors_names,
                                               stg_onnx_names,
                                               stg_gguf_names,
                                               stg_pickle_names,
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
