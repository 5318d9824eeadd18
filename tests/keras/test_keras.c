/* Keras model configs (validator/keras.c) through the public scan: for every keras_* code an
 * input that triggers it (severity in both profiles, byte offset) and a near miss that does not;
 * benign configs in the shapes Keras 3 and Keras 2 write (Sequential, Functional, Conv2D, a
 * model nested in a model) are ok; a .keras zip (saving_lib's three members) is labelled keras
 * and judged by its config.json, and its findings name the member.
 *
 * The benign configs follow what Keras writes: keras-team/keras at commit
 * 3422977a5e38fb2f7709aaa9a08e47f0c43d0f60, keras/src/saving/serialization_lib.py
 * serialize_keras_object (lines 158-322: module, class_name, config, registered_name,
 * build_config, compile_config; a function as module "builtins", class_name "function", its name
 * as config, registered_name "function", lines 309-322 with serialize_with_public_class 325-359),
 * keras/src/layers/core/lambda_layer.py Lambda._serialize_function_to_config (lines 151-167:
 * __lambda__ with code/defaults/closure), and saving_lib.py _save_model_to_fileobj (lines
 * 198-267: metadata.json, config.json, model.weights.h5 stored in a zip). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "stguard/stguard.h"
#include "codetest.h"
#include "testutil.h"
#include "validator/keras.h"
#include "zipbuild.h"

#define C STG_SEV_CRITICAL
#define E STG_SEV_ERROR
#define W STG_SEV_WARNING
#define NONE TU_NONE

static stg_report *scan_named(const void *buf, size_t len, const char *name, stg_profile p)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.digest = false;
    opt.limits.profile = p;
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(buf, len, name, &opt, &r), STG_OK);
    return r;
}

static stg_report *run_config(const tu_buf *b, stg_profile p)
{
    return scan_named(b->p, b->n, "config.json", p);
}

static tu_buf text(const char *s)
{
    tu_buf b = {NULL, 0, 0};
    tu_buf_put(&b, s, strlen(s));
    return b;
}

/* The offset of the n-th (0-based) occurrence of needle in s. */
static uint64_t at(const char *s, const char *needle, int n)
{
    const char *p = s;
    for (int i = 0;; i++) {
        p = strstr(p, needle);
        ck_assert_ptr_nonnull(p);
        if (i == n) {
            return (uint64_t)(p - s);
        }
        p++;
    }
}

static void expect(const char *cfg, stg_code code, stg_severity sev, uint64_t off)
{
    tu_buf b = text(cfg);
    tu_expect(run_config, &b, code, sev, sev, off);
    free(b.p);
}

static void expect_clean_keras(const char *cfg)
{
    tu_buf b = text(cfg);
    tu_expect_clean(run_config, &b);
    stg_report *r = run_config(&b, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS);
    stg_report_free(r);
    free(b.p);
}

/* ------------------------------------------------------------------------------ configs */

#define DTYPE                                                                          \
    "{\"module\": \"keras\", \"class_name\": \"DTypePolicy\", \"config\": {\"name\": " \
    "\"float32\"}, \"registered_name\": null}"
#define INIT(cls)                                                                               \
    "{\"module\": \"keras.initializers\", \"class_name\": \"" cls "\", \"config\": {\"seed\": " \
    "null}, \"registered_name\": null}"
#define DENSE(name, units, act)                                                                   \
    "{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"" name    \
    "\", \"trainable\": true, \"dtype\": " DTYPE ", \"units\": " units ", \"activation\": \"" act \
    "\", \"use_bias\": true, \"kernel_initializer\": " INIT(                                      \
        "GlorotUniform") ", \"bias_initializer\": {\"module\": \"keras.initializers\", "          \
                         "\"class_name\": \"Zeros\", "                                            \
                         "\"config\": {}, \"registered_name\": null}, \"kernel_regularizer\": "   \
                         "null, "                                                                 \
                         "\"bias_regularizer\": null, \"kernel_constraint\": null, "              \
                         "\"bias_constraint\": null}, "                                           \
                         "\"registered_name\": null, \"build_config\": {\"input_shape\": [null, " \
                         "4]}}"
#define INPUT(name)                                                                   \
    "{\"module\": \"keras.layers\", \"class_name\": \"InputLayer\", \"config\": "     \
    "{\"batch_shape\": "                                                              \
    "[null, 4], \"dtype\": \"float32\", \"sparse\": false, \"name\": \"" name "\"}, " \
    "\"registered_name\": null}"
#define COMPILE                                                                               \
    "\"compile_config\": {\"optimizer\": {\"module\": \"keras.optimizers\", \"class_name\": " \
    "\"Adam\", \"config\": {\"name\": \"adam\", \"learning_rate\": 0.001, \"beta_1\": 0.9}, " \
    "\"registered_name\": null}, \"loss\": {\"module\": \"builtins\", \"class_name\": "       \
    "\"function\", \"config\": \"mean_squared_error\", \"registered_name\": \"function\"}, "  \
    "\"metrics\": null, \"jit_compile\": false}"

static const char sequential[] =
    "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"name\": "
    "\"sequential\", \"trainable\": true, \"dtype\": " DTYPE
    ", \"layers\": [" INPUT("input_layer") ", " DENSE("dense", "8", "relu") ", " DENSE(
        "dense_1", "1", "linear") "], \"build_input_shape\": [null, 4]}, \"registered_name\": "
                                  "null, \"build_config\": "
                                  "{\"input_shape\": [null, 4]}, " COMPILE "}";

static const char conv2d[] =
    "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"name\": \"cnn\", "
    "\"layers\": [{\"module\": \"keras.layers\", \"class_name\": \"Conv2D\", \"config\": "
    "{\"name\": \"conv2d\", \"dtype\": " DTYPE ", \"filters\": 4, \"kernel_size\": [3, 3], "
    "\"strides\": [1, 1], \"padding\": \"valid\", \"data_format\": \"channels_last\", "
    "\"dilation_rate\": [1, 1], \"groups\": 1, \"activation\": {\"module\": \"builtins\", "
    "\"class_name\": \"function\", \"config\": \"relu\", \"registered_name\": \"function\"}, "
    "\"use_bias\": true, \"kernel_initializer\": " INIT(
        "HeNormal") ", \"kernel_regularizer\": "
                    "{\"module\": \"keras.regularizers\", \"class_name\": \"L2\", \"config\": "
                    "{\"l2\": 0.01}, "
                    "\"registered_name\": null}}, \"registered_name\": null}, {\"module\": "
                    "\"keras.layers\", "
                    "\"class_name\": \"MaxPooling2D\", \"config\": {\"name\": \"max_pooling2d\", "
                    "\"pool_size\": "
                    "[2, 2]}, \"registered_name\": null}, {\"module\": \"keras.layers\", "
                    "\"class_name\": "
                    "\"Flatten\", \"config\": {\"name\": \"flatten\"}, \"registered_name\": "
                    "null}]}, "
                    "\"registered_name\": null}";

#define KT(layer)                                                                           \
    "{\"class_name\": \"__keras_tensor__\", \"config\": {\"shape\": [null, 4], \"dtype\": " \
    "\"float32\", \"keras_history\": [\"" layer "\", 0, 0]}}"

static const char functional[] =
    "{\"module\": \"keras.src.models.functional\", \"class_name\": \"Functional\", \"config\": "
    "{\"name\": \"functional\", \"trainable\": true, \"layers\": [{\"module\": \"keras.layers\", "
    "\"class_name\": \"InputLayer\", \"config\": {\"batch_shape\": [null, 4], \"dtype\": "
    "\"float32\", \"name\": \"x\"}, \"registered_name\": null, \"name\": \"x\", "
    "\"inbound_nodes\": []}, {\"module\": \"keras.layers\", \"class_name\": \"Dense\", "
    "\"config\": {\"name\": \"d\", \"units\": 4, \"activation\": \"tanh\"}, \"registered_name\": "
    "null, \"build_config\": {\"input_shape\": [null, 4]}, \"name\": \"d\", \"inbound_nodes\": "
    "[{\"args\": [" KT(
        "x") "], \"kwargs\": {}}]}, {\"module\": \"keras.layers\", \"class_name\": "
             "\"Add\", \"config\": {\"name\": \"add\"}, \"registered_name\": null, \"name\": "
             "\"add\", "
             "\"inbound_nodes\": [{\"args\": [[" KT("x") ", " KT(
                 "d") "]], \"kwargs\": {}}]}], "
                      "\"input_layers\": [[\"x\", 0, 0]], \"output_layers\": [[\"add\", 0, 0]]}, "
                      "\"registered_name\": \"Functional\", \"build_config\": {\"input_shape\": "
                      "null}}";

/* A Sequential inside a Functional, and a named function in a Lambda (no bytecode). */
static const char nested[] =
    "{\"module\": \"keras.src.models.functional\", \"class_name\": \"Functional\", \"config\": "
    "{\"name\": \"outer\", \"layers\": [" INPUT(
        "x") ", {\"module\": \"keras\", \"class_name\": "
             "\"Sequential\", \"config\": {\"name\": \"inner\", \"layers\": [" DENSE(
                 "d", "4",
                 "relu") ", {\"module\": \"keras.layers\", \"class_name\": \"Lambda\", \"config\": "
                         "{\"name\": "
                         "\"__lambda__\", \"function\": {\"module\": \"builtins\", \"class_name\": "
                         "\"function\", "
                         "\"config\": \"abs\", \"registered_name\": \"function\"}, \"arguments\": "
                         "{}}, "
                         "\"registered_name\": null}]}, \"registered_name\": null, "
                         "\"inbound_nodes\": [{\"args\": [" KT(
                             "x") "], \"kwargs\": {}}]}], \"input_layers\": [[\"x\", 0, 0]], "
                                  "\"output_layers\": "
                                  "[[\"inner\", 0, 0]]}, \"registered_name\": \"Functional\"}";

/* Keras 2 (tf.keras) model_config: no module keys. */
static const char keras2[] =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"sequential\", \"layers\": "
    "[{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], "
    "\"dtype\": \"float32\", \"sparse\": false, \"ragged\": false, \"name\": \"dense_input\"}}, "
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"dense\", \"trainable\": true, "
    "\"units\": 2, \"activation\": \"relu\", \"kernel_initializer\": {\"class_name\": "
    "\"GlorotUniform\", \"config\": {\"seed\": null}}}}]}, \"keras_version\": \"2.12.0\", "
    "\"backend\": \"tensorflow\"}";

START_TEST(test_benign_configs)
{
    expect_clean_keras(sequential);
    expect_clean_keras(conv2d);
    expect_clean_keras(functional);
    expect_clean_keras(nested);
    expect_clean_keras(keras2);
    /* the summary counts the layers of every `layers` list */
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    stg_keras_summary s;
    ck_assert_int_eq(
        stg_keras_check_config((const uint8_t *)nested, sizeof nested - 1, 0, &lim, r, &s), STG_OK);
    ck_assert_str_eq(s.top_class, "Functional");
    ck_assert(s.top_is_model);
    ck_assert_uint_eq(s.layers, 4); /* x, inner; d, the Lambda */
    stg_report_free(r);
}
END_TEST

START_TEST(test_lambda)
{
    /* Keras 3: the Lambda's function as __lambda__ (marshalled code) */
    static const char k3[] =
        "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"layers\": "
        "[{\"module\": \"keras.layers\", \"class_name\": \"Lambda\", \"config\": {\"name\": "
        "\"lambda\", \"function\": {\"class_name\": \"__lambda__\", \"config\": {\"code\": "
        "\"4wEAAAAAAAAAAAAAAAEAAAADAAAAQwAAAPMKAAAAfABkARcAUwA=\", \"defaults\": null, "
        "\"closure\": null}}, \"arguments\": {}}, \"registered_name\": null}]}, "
        "\"registered_name\": null}";
    expect(k3, STG_KERAS_LAMBDA, C, at(k3, "{\"class_name\": \"__lambda__\"", 0));
    /* serialize_keras_object of a bare lambda (an activation): class_name __lambda__, value */
    static const char act[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [{\"class_name\": \"Dense\", "
        "\"config\": {\"activation\": {\"config\": {\"value\": [\"4wEAAAA=\", null, null]}, "
        "\"class_name\": \"__lambda__\"}}}]}}";
    expect(act, STG_KERAS_LAMBDA, C, at(act, "{\"config\": {\"value\"", 0));
    /* Keras 2: function_type lambda, the function a base64 marshal list */
    static const char k2[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [{\"class_name\": \"Lambda\", "
        "\"config\": {\"name\": \"lambda\", \"function\": [\"4wEAAAAAAAAA\\n\", null, null], "
        "\"function_type\": \"lambda\", \"output_shape\": null, \"arguments\": {}}}]}}";
    expect(k2, STG_KERAS_LAMBDA, C, at(k2, "{\"name\": \"lambda\"", 0));
    /* an escaped key is the same key to json.loads */
    static const char esc[] =
        "{\"class_name\": \"M\", \"config\": {\"f\": {\"cl\\u0061ss_name\": \"__l\\u0061mbda__\", "
        "\"config\": {}}}}";
    expect(esc, STG_KERAS_LAMBDA, C, at(esc, "{\"cl\\u", 0));
    /* near misses: __lambda__ as a name, function_type function, a named function */
    expect(nested, STG_KERAS_LAMBDA, NONE, STG_NO_OFFSET);
    static const char named[] =
        "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [{\"class_name\": \"Lambda\", "
        "\"config\": {\"name\": \"__lambda__\", \"function\": \"relu\", \"function_type\": "
        "\"function\", \"module\": \"keras.activations\"}}]}}";
    expect(named, STG_KERAS_LAMBDA, NONE, STG_NO_OFFSET);
    expect_clean_keras(named);
}
END_TEST

START_TEST(test_module_unsafe)
{
    /* CVE-2025-1550: a module Keras imports, nested inside another layer's config */
    static const char os[] =
        "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"layers\": "
        "[{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"units\": 1, "
        "\"kernel_initializer\": {\"module\": \"os\", \"class_name\": \"system\", \"config\": "
        "{}, \"registered_name\": null}}}]}}";
    expect(os, STG_KERAS_MODULE_UNSAFE, C, at(os, "{\"module\": \"os\"", 0));
    /* a denied module stays unsafe under a registration-shaped name */
    static const char reg[] =
        "{\"class_name\": \"M\", \"config\": {\"x\": {\"module\": \"subprocess\", \"class_name\": "
        "\"Popen\", \"config\": {}, \"registered_name\": \"a>b\"}}}";
    expect(reg, STG_KERAS_MODULE_UNSAFE, C, at(reg, "{\"module\": \"subprocess\"", 0));
    expect(reg, STG_KERAS_CUSTOM_OBJECT, NONE, STG_NO_OFFSET);
    /* an unregistered module outside Keras */
    static const char other[] =
        "{\"class_name\": \"M\", \"config\": {\"x\": {\"module\": \"evil.pkg\", \"class_name\": "
        "\"Thing\", \"config\": {}, \"registered_name\": \"Thing\"}}}";
    expect(other, STG_KERAS_MODULE_UNSAFE, C, at(other, "{\"module\": \"evil.pkg\"", 0));
    /* builtins: eval is unsafe, abs and Keras' own names (relu) are not */
    static const char ev[] =
        "{\"class_name\": \"M\", \"config\": {\"activation\": {\"module\": \"builtins\", "
        "\"class_name\": \"function\", \"config\": \"eval\", \"registered_name\": \"function\"}}}";
    expect(ev, STG_KERAS_MODULE_UNSAFE, C, at(ev, "{\"module\": \"builtins\"", 0));
    static const char imp[] =
        "{\"class_name\": \"M\", \"config\": {\"a\": {\"module\": \"builtins\", \"class_name\": "
        "\"function\", \"config\": \"__import__\"}}}";
    expect(imp, STG_KERAS_MODULE_UNSAFE, C, at(imp, "{\"module\"", 0));
    /* NON_MODELING_APIS, under its public and internal spellings */
    static const char gf[] =
        "{\"class_name\": \"M\", \"config\": {\"a\": {\"module\": \"keras.utils\", \"class_name\": "
        "\"function\", \"config\": \"get_file\", \"registered_name\": \"get_file\"}, \"b\": "
        "{\"module\": \"keras.src.saving.saving_api\", \"class_name\": \"load_model\", "
        "\"config\": {}}}}";
    expect(gf, STG_KERAS_MODULE_UNSAFE, C, at(gf, "{\"module\": \"keras.utils\"", 0));
    tu_buf b = text(gf);
    stg_report *r = run_config(&b, STG_PROFILE_STRICT);
    ck_assert_uint_eq(tu_count(r, STG_KERAS_MODULE_UNSAFE), 2);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    stg_report_free(r);
    free(b.p);
    /* a TensorFlow function is unsafe, a TensorFlow class (a TypeSpec) is not */
    static const char tff[] =
        "{\"class_name\": \"M\", \"config\": {\"a\": {\"module\": \"tensorflow.io\", "
        "\"class_name\": \"function\", \"config\": \"write_file\"}}}";
    expect(tff, STG_KERAS_MODULE_UNSAFE, C, at(tff, "{\"module\": \"tensorflow.io\"", 0));
    static const char tfc[] =
        "{\"class_name\": \"M\", \"config\": {\"a\": {\"class_name\": \"__typespec__\", "
        "\"spec_name\": \"TensorSpec\", \"module\": \"tensorflow.python.framework.tensor_spec\", "
        "\"config\": [[null, 4], \"float32\", null], \"registered_name\": null}}}";
    expect_clean_keras(tfc);
    /* near misses: Keras modules, pure builtins, a root that only starts like "os" */
    expect(sequential, STG_KERAS_MODULE_UNSAFE, NONE, STG_NO_OFFSET);
    static const char pure[] =
        "{\"class_name\": \"M\", \"config\": {\"a\": {\"module\": \"builtins\", \"class_name\": "
        "\"function\", \"config\": \"abs\"}, \"b\": {\"module\": \"keras.utils\", "
        "\"class_name\": \"function\", \"config\": \"to_categorical\"}}}";
    expect_clean_keras(pure);
    static const char osmo[] =
        "{\"class_name\": \"M\", \"config\": {\"a\": {\"module\": \"osmosis.layers\", "
        "\"class_name\": \"L\", \"config\": {}, \"registered_name\": \"osmosis>L\"}}}";
    expect(osmo, STG_KERAS_MODULE_UNSAFE, NONE, STG_NO_OFFSET);
}
END_TEST

START_TEST(test_custom_object)
{
    static const char custom[] =
        "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"layers\": "
        "[{\"module\": \"my_pkg.layers\", \"class_name\": \"MyLayer\", \"config\": {}, "
        "\"registered_name\": \"my_pkg>MyLayer\"}]}}";
    expect(custom, STG_KERAS_CUSTOM_OBJECT, W, at(custom, "{\"module\": \"my_pkg", 0));
    tu_buf b = text(custom);
    stg_report *r = run_config(&b, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_WARN);
    const stg_finding *f = stg_report_at(r, (size_t)tu_find(r, STG_KERAS_CUSTOM_OBJECT));
    ck_assert_ptr_nonnull(strstr(f->message, "my_pkg>MyLayer"));
    stg_report_free(r);
    free(b.p);
    /* a registered custom function (module builtins, its registered name as config) */
    static const char fn[] =
        "{\"class_name\": \"M\", \"config\": {\"loss\": {\"module\": \"builtins\", "
        "\"class_name\": \"function\", \"config\": \"Custom>my_loss\", \"registered_name\": "
        "\"function\"}}}";
    expect(fn, STG_KERAS_CUSTOM_OBJECT, W, at(fn, "{\"module\"", 0));
    /* no module at all, a registration name */
    static const char bare[] = "{\"class_name\": \"M\", \"config\": {\"x\": {\"class_name\": "
                               "\"L\", \"config\": {}, \"registered_name\": \"pkg>L\"}}}";
    expect(bare, STG_KERAS_CUSTOM_OBJECT, W, at(bare, "{\"class_name\": \"L\"", 0));
    /* a legacy Lambda of the saving program's __main__ */
    static const char mainfn[] =
        "{\"class_name\": \"M\", \"config\": {\"x\": {\"class_name\": \"Lambda\", \"config\": "
        "{\"function\": \"f\", \"function_type\": \"function\", \"module\": \"__main__\"}}}}";
    expect(mainfn, STG_KERAS_CUSTOM_OBJECT, W, at(mainfn, "{\"function\"", 0));
    /* near miss: Functional's registered_name is its class_name */
    expect(functional, STG_KERAS_CUSTOM_OBJECT, NONE, STG_NO_OFFSET);
}
END_TEST

START_TEST(test_malformed)
{
    /* keys seen, then the JSON breaks */
    static const char cut[] = "{\"class_name\": \"Sequential\", \"config\": {\"layers\": [";
    expect(cut, STG_KERAS_CONFIG_MALFORMED, E, sizeof cut - 1);
    /* class_name not a string */
    static const char num[] = "{\"class_name\": 5, \"config\": {}}";
    expect(num, STG_KERAS_CONFIG_MALFORMED, E, 0);
    /* nested past max_json_depth */
    char deep[600];
    int prefix = snprintf(deep, sizeof deep, "{\"class_name\": \"M\", \"config\": ");
    int n = prefix;
    for (int i = 0; i < 200; i++) {
        deep[n++] = '[';
    }
    deep[n] = '\0';
    expect(deep, STG_KERAS_CONFIG_MALFORMED, E, (uint64_t)prefix + 126); /* the 128th level */
    /* near miss */
    expect(sequential, STG_KERAS_CONFIG_MALFORMED, NONE, STG_NO_OFFSET);
    /* JSON without the two keys is no Keras config: plain json, no finding */
    static const char hf[] = "{\"architectures\": [\"BertModel\"], \"model_type\": \"bert\"}";
    tu_buf b = text(hf);
    stg_report *r = run_config(&b, STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_JSON);
    ck_assert_uint_eq(stg_report_count(r), 0);
    stg_report_free(r);
    free(b.p);
    ck_assert(!stg_keras_sniff_config((const uint8_t *)hf, sizeof hf - 1));
    ck_assert(stg_keras_sniff_config((const uint8_t *)cut, sizeof cut - 1));
}
END_TEST

/* json.loads of bytes takes a UTF-8 BOM, UTF-16 and UTF-32 (json.detect_encoding): so does
 * the sniff, and offsets are those of the file's bytes. */
static tu_buf encode(const char *s, unsigned unit, bool big_endian, bool bom)
{
    tu_buf b = {NULL, 0, 0};
    uint8_t u[4];
    if (bom && unit == 1) {
        tu_buf_put(&b, "\xEF\xBB\xBF", 3);
    }
    for (size_t i = bom && unit > 1 ? 0 : 1; i <= strlen(s); i++) {
        uint32_t v = i == 0 ? 0xFEFF : (uint8_t)s[i - 1];
        for (unsigned k = 0; k < unit; k++) {
            unsigned shift = 8 * (big_endian ? unit - 1 - k : k);
            u[k] = (uint8_t)(v >> shift);
        }
        tu_buf_put(&b, u, unit);
    }
    return b;
}

START_TEST(test_encodings)
{
    static const char os[] = "{\"class_name\": \"M\", \"config\": {\"a\": {\"module\": \"os\"}}}";
    uint64_t rel = at(os, "{\"module\"", 0);
    const struct {
        unsigned unit;
        bool big_endian, bom;
        uint64_t want;
    } cases[] = {
        {1, false, true, 3 + rel},     {2, false, true, 2 + 2 * rel}, {2, true, false, 2 * rel},
        {4, false, true, 4 + 4 * rel}, {4, true, false, 4 * rel},     {2, false, false, 2 * rel},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_buf b = encode(os, cases[i].unit, cases[i].big_endian, cases[i].bom);
        b.n -= cases[i].unit; /* the encoded NUL terminator */
        ck_assert_msg(stg_keras_sniff_config(b.p, b.n), "case %zu", i);
        tu_expect(run_config, &b, STG_KERAS_MODULE_UNSAFE, C, C, cases[i].want);
        free(b.p);
    }
    /* near misses: UTF-16 JSON without the keys, zeros */
    tu_buf hf = encode("{\"model_type\": \"bert\"}", 2, false, true);
    hf.n -= 2;
    ck_assert(!stg_keras_sniff_config(hf.p, hf.n));
    free(hf.p);
    static const uint8_t zeros[64] = {0};
    ck_assert(!stg_keras_sniff_config(zeros, sizeof zeros));
}
END_TEST

/* ---------------------------------------------------------------------------------- .keras */

static uint8_t *keras_zip(const char *config, size_t *len)
{
    static const char metadata[] =
        "{\"keras_version\": \"3.5.0\", \"date_saved\": \"2024-09-01@10:00:00\"}";
    static const uint8_t weights[] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    zb_entry e[3] = {zb_file("metadata.json", metadata, sizeof metadata - 1),
                     zb_file("config.json", config, strlen(config)),
                     zb_file("model.weights.h5", weights, sizeof weights)};
    zb_opts o;
    memset(&o, 0, sizeof o);
    return zb_build(e, 3, &o, len, NULL);
}

START_TEST(test_keras_zip)
{
    size_t len;
    uint8_t *z = keras_zip(sequential, &len);
    stg_report *r = scan_named(z, len, "model.keras", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS);
    ck_assert_int_eq(stg_sniff(z, len, "model.keras"), STG_FMT_KERAS);
    ck_assert_msg(tu_count(r, STG_KERAS_LAMBDA) + tu_count(r, STG_KERAS_MODULE_UNSAFE) == 0, "%s",
                  tu_describe(r));
    stg_report_free(r);
    free(z);
    static const char bad[] =
        "{\"module\": \"keras\", \"class_name\": \"Sequential\", \"config\": {\"layers\": "
        "[{\"module\": \"keras.layers\", \"class_name\": \"Lambda\", \"config\": {\"function\": "
        "{\"class_name\": \"__lambda__\", \"config\": {\"code\": \"4wE=\"}}}}]}}";
    z = keras_zip(bad, &len);
    r = scan_named(z, len, "model.keras", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS);
    ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_UNSAFE);
    const stg_finding *f = stg_report_at(r, (size_t)tu_find(r, STG_KERAS_LAMBDA));
    ck_assert_ptr_nonnull(f->member);
    ck_assert_str_eq(f->member, "config.json");
    ck_assert_uint_eq(f->offset, at(bad, "{\"class_name\": \"__lambda__\"", 0));
    stg_report_free(r);
    free(z);
    /* near miss: config.json in a folder is no .keras root member: a plain zip */
    zb_entry e[1] = {zb_file("sub/config.json", sequential, strlen(sequential))};
    zb_opts o;
    memset(&o, 0, sizeof o);
    z = zb_build(e, 1, &o, &len, NULL);
    r = scan_named(z, len, "x.zip", STG_PROFILE_STRICT);
    ck_assert_int_eq(stg_report_format(r), STG_FMT_ZIP);
    stg_report_free(r);
    free(z);
    /* a .keras name over content that is no zip and no config: format_mismatch */
    static const char junk[] = "\x01\x02\x03 not a model";
    r = scan_named(junk, sizeof junk - 1, "model.keras", STG_PROFILE_STRICT);
    ck_assert_msg(tu_find(r, STG_FORMAT_MISMATCH) >= 0, "%s", tu_describe(r));
    stg_report_free(r);
}
END_TEST

/* Bytes after the config: json.loads refuses them; a zip there is what zipfile opens, so its
 * members are scanned (as for any file whose last bytes are an archive). */
START_TEST(test_trailing_bytes)
{
    static const char cfg[] = "{\"class_name\": \"M\", \"config\": {}}";
    tu_buf b = text(cfg);
    tu_buf_put(&b, " x", 2);
    tu_expect(run_config, &b, STG_KERAS_CONFIG_MALFORMED, E, E, sizeof cfg - 1);
    free(b.p);
    b = text(cfg);
    tu_buf_put(&b, " \n\t", 3); /* near miss: whitespace */
    tu_expect_clean(run_config, &b);
    free(b.p);
    static const uint8_t pickle[] = "\x80\x02"
                                    "cposix\nsystem\nq\x00X\x02\x00\x00\x00"
                                    "idq\x01\x85R.";
    zb_entry e[1] = {zb_file("data.pkl", pickle, sizeof pickle - 1)};
    size_t zlen;
    uint8_t *z = zb_build(e, 1, NULL, &zlen, NULL);
    b = text(cfg);
    tu_buf_put(&b, z, zlen);
    stg_report *r = run_config(&b, STG_PROFILE_STRICT);
    ck_assert_msg(tu_find(r, STG_PICKLE_GLOBAL_DANGEROUS) >= 0, "%s", tu_describe(r));
    ck_assert_int_eq(stg_report_format(r), STG_FMT_KERAS);
    stg_report_free(r);
    free(b.p);
    free(z);
}
END_TEST

START_TEST(test_limits_and_args)
{
    stg_limits lim;
    stg_limits_default(&lim);
    stg_report *r = stg_report_new(&lim);
    ck_assert_int_eq(stg_keras_check_config(NULL, 1, 0, &lim, r, NULL), STG_E_BAD_ARG);
    ck_assert_int_eq(stg_keras_check_config((const uint8_t *)"{}", 2, 0, NULL, r, NULL),
                     STG_E_BAD_ARG);
    /* a memory cap the parser hits is limit_exceeded, never ok */
    lim.max_memory = 64;
    ck_assert_int_eq(stg_keras_check_config((const uint8_t *)sequential, sizeof sequential - 1, 0,
                                            &lim, r, NULL),
                     STG_OK);
    stg_report_finish(r);
    ck_assert_msg(tu_find(r, STG_LIMIT_EXCEEDED) >= 0, "%s", tu_describe(r));
    ck_assert_int_ne(stg_report_verdict(r), STG_VERDICT_OK);
    stg_report_free(r);
    /* base shifts every offset (an HDF5 attribute's place in its file) */
    stg_limits_default(&lim);
    r = stg_report_new(&lim);
    static const char ev[] = "{\"class_name\": \"M\", \"config\": {\"module\": \"os\"}}";
    ck_assert_int_eq(
        stg_keras_check_config((const uint8_t *)ev, sizeof ev - 1, 1000, &lim, r, NULL), STG_OK);
    stg_report_finish(r);
    long i = tu_find(r, STG_KERAS_MODULE_UNSAFE);
    ck_assert_int_ge(i, 0);
    ck_assert_uint_eq(stg_report_at(r, (size_t)i)->offset, 1000 + at(ev, "{\"module\"", 0));
    stg_report_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("keras");
    TCase *tc = tcase_create("keras");
    tcase_add_test(tc, test_benign_configs);
    tcase_add_test(tc, test_lambda);
    tcase_add_test(tc, test_module_unsafe);
    tcase_add_test(tc, test_custom_object);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_encodings);
    tcase_add_test(tc, test_keras_zip);
    tcase_add_test(tc, test_trailing_bytes);
    tcase_add_test(tc, test_limits_and_args);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
