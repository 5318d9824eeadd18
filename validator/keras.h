/* Keras model configs (docs/keras.md): the JSON a `.keras` zip keeps in its root config.json
 * (Keras 3's saving_lib), `model.to_json()` output, and the `model_config` root attribute of a
 * legacy Keras HDF5 file. The config is walked with the project's JSON parser (bounded depth,
 * no recursion); every object at any depth is judged as Keras' deserializer would resolve it:
 * marshalled bytecode (keras_lambda), a module or API outside Keras' model-building namespaces
 * (keras_module_unsafe), a registered custom object (keras_custom_object); a config that is no
 * readable model config is keras_config_malformed. */
#ifndef STG_VALIDATOR_KERAS_H
#define STG_VALIDATOR_KERAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* What the walk saw, for labels and `inspect`. */
typedef struct stg_keras_summary {
    uint64_t objects;   /* objects with a class_name */
    uint64_t layers;    /* of them, those inside a `layers` list */
    char top_class[64]; /* the top-level class_name ("Sequential", "Functional"), cut */
    bool top_is_model;  /* the top-level object has class_name and config */
} stg_keras_summary;

/* true when buf (from its first non-blank byte) is a JSON object whose top level has the keys
 * `class_name` and `config`: the shape of every Keras model config. Reads only the top level's
 * keys (nested values are walked by the parser, not kept); bounded by STG_KERAS_SNIFF_MEMORY. */
bool stg_keras_sniff_config(const uint8_t *buf, size_t len);

/* Judges the config buf[0..len): findings go to r with offsets base + the position in buf (the
 * config's place in the file: 0 for a config.json, the attribute's data for an HDF5 file).
 * summary may be NULL. STG_OK; STG_E_BAD_ARG for NULL arguments; STG_E_NOMEM (frames). */
stg_status stg_keras_check_config(const uint8_t *buf, size_t len, uint64_t base,
                                  const stg_limits *lim, stg_report *r, stg_keras_summary *summary);

/* The same rules over JSON whose top level need not be a model (training_config's compile
 * arguments, keras_metadata.pb's per-object metadata): every object at any depth. */
stg_status stg_keras_check_json(const uint8_t *buf, size_t len, uint64_t base,
                                const stg_limits *lim, stg_report *r);

/* What an HDF5 file's root attributes held. */
typedef struct stg_keras_hdf5 {
    bool model_config;         /* a root attribute model_config: a legacy Keras model */
    stg_keras_summary summary; /* of model_config */
    char keras_version[32];    /* the root attributes, cut; "" when absent or not strings */
    char backend[32];
} stg_keras_hdf5;

/* An HDF5 file (legacy Keras .h5, or weights such as a .keras zip's model.weights.h5): the
 * bounded reader (parser/hdf5.h) reads the superblock and the root group's attributes;
 * model_config (a model config) and training_config (compile arguments) are judged as above,
 * with offsets of the string in the file. hdf5_malformed / hdf5_unsupported when the root
 * cannot be read. out may be NULL. STG_OK, STG_E_BAD_ARG, STG_E_NOMEM. */
stg_status stg_keras_check_hdf5(const uint8_t *buf, size_t len, const stg_limits *lim,
                                stg_report *r, stg_keras_hdf5 *out);

#define STG_KERAS_SNIFF_MEMORY ((uint64_t)64 << 20)

#endif
