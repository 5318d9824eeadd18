/* The name rules of the format table (internal; dispatch/formats.c points each entry at its
 * rules): every suffix the library routes a file or an archive member by is written here,
 * once (tools/check-formats.sh checks it). A module of its own so that the archive scans
 * (containers.c), which the table's scans call, read the member rules without a cycle. */
#ifndef STG_DISPATCH_NAMES_H
#define STG_DISPATCH_NAMES_H

#include <stdbool.h>

#include "stguard/stguard.h"

/* How a name bears on the format of an entry that lists it (docs/containers.md). */
typedef enum stg_name_power {
    STG_NAME_CLAIMS = 1, /* content decides; other content under the name is format_mismatch */
    STG_NAME_DECIDES = 2 /* validated as this format whatever the content */
} stg_name_power;

/* One name rule of an entry: a suffix (lower case, matched ASCII case-insensitively). When
 * several rules of the table match a name, the longest suffix wins: the table's row order
 * never matters (tests/dispatch/test_format_table.c checks that no suffix is listed twice). */
typedef struct stg_name_rule {
    const char *suffix;
    stg_name_power power;
    stg_format label;  /* STG_FMT_UNKNOWN, or the label the name gives the entry's content
                          (a pickle named *.joblib is joblib) */
    stg_format member; /* what an archive member of this name holds for its readers: a pickle
                          (torch's data.pkl), an array (np.savez's *.npy); else unknown */
} stg_name_rule;

/* Each entry's rules, terminated by a rule with a NULL suffix. */
extern const stg_name_rule stg_safetensors_index_names[];
extern const stg_name_rule stg_safetensors_names[];
extern const stg_name_rule stg_onnx_names[];
extern const stg_name_rule stg_gguf_names[];
extern const stg_name_rule stg_pickle_names[];
extern const stg_name_rule stg_tflite_names[];
extern const stg_name_rule stg_executorch_names[];
extern const stg_name_rule stg_tf_index_names[];
extern const stg_name_rule stg_tf_data_names[];
extern const stg_name_rule stg_parquet_names[];
extern const stg_name_rule stg_arrow_names[];
extern const stg_name_rule stg_dataset_text_names[];
/* The index of the JSON Lines rule in stg_dataset_text_names (its lines are checked). */
#define STG_DATASET_JSONL_RULE 1
extern const stg_name_rule stg_coreml_model_names[];
extern const stg_name_rule stg_flax_names[];
extern const stg_name_rule stg_sentencepiece_names[];
extern const stg_name_rule stg_tiktoken_names[];
extern const stg_name_rule stg_vocab_names[];
extern const stg_name_rule stg_merges_names[];
extern const stg_name_rule stg_keras_names[];
extern const stg_name_rule stg_hdf5_names[];
extern const stg_name_rule stg_savedmodel_names[];
extern const stg_name_rule stg_keras_metadata_names[];
extern const stg_name_rule stg_chat_template_names[];
/* Hugging Face configs whose auto_map names remote code (config.json, tokenizer_config.json,
 * preprocessor_config.json, processor_config.json: every *config.json) */
/* A Hugging Face config's name (any *config.json) and Keras 3's root member of a .keras zip. */
#define STG_CONFIG_JSON_NAME "config.json"
/* Python source (a .py file of a repo; a TorchScript archive's code/ records). */
#define STG_PYTHON_SUFFIX ".py"
extern const stg_name_rule stg_hf_config_names[];
extern const stg_name_rule stg_python_names[];
extern const stg_name_rule stg_yaml_names[];
extern const stg_name_rule stg_tar_names[];          /* .nemo */
extern const stg_name_rule stg_zip_names[];          /* .skops */
extern const stg_name_rule stg_skops_schema_names[]; /* schema.json */

/* What an archive member named so holds by its name (stg_name_rule.member), unknown when no
 * rule says. */
stg_format stg_member_name_holds(const char *name);

/* The suffix OpenVINO's IR frontend gives a model's weights file (".bin", loader/sibling.c). */
const char *stg_openvino_weights_suffix(void);

#endif
