/* TensorFlow SavedModels (docs/keras.md, "TensorFlow SavedModel"): saved_model.pb walked with
 * the bounded protobuf walker (parser/protobuf.h) along the schema's path to every op
 * (SavedModel.meta_graphs -> MetaGraphDef.graph_def -> GraphDef.node, and
 * GraphDef.library -> FunctionDef.node_def: TF2 keeps most ops in functions), each NodeDef.op
 * judged; and keras_metadata.pb, whose SavedObject.metadata strings are Keras configs judged by
 * validator/keras.h. */
#ifndef STG_VALIDATOR_SAVEDMODEL_H
#define STG_VALIDATOR_SAVEDMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

typedef struct stg_tf_summary {
    uint64_t meta_graphs;
    uint64_t nodes;     /* NodeDefs of every graph and function */
    uint64_t functions; /* FunctionDefs */
} stg_tf_summary;

/* saved_model.pb: tf_op_unsafe for file-system ops, tf_pyfunc for PyFunc-like ops,
 * tf_savedmodel_malformed for wire data protobuf refuses or no meta graph. summary may be
 * NULL. STG_OK or STG_E_BAD_ARG. */
stg_status stg_tf_check_savedmodel(const uint8_t *buf, size_t len, const stg_limits *lim,
                                   stg_report *r, stg_tf_summary *summary);

/* keras_metadata.pb (tf_keras' SavedMetadata): every SavedObject.metadata JSON judged by the
 * Keras config rules (any object at any depth), offsets those of the string in the file. */
stg_status stg_tf_check_keras_metadata(const uint8_t *buf, size_t len, const stg_limits *lim,
                                       stg_report *r);

#endif
