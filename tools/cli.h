/* Shared declarations of the stguard command-line tool: the writers for text, JSON Lines and
 * SARIF output. The tool parses no model bytes itself: every decision comes from the library;
 * the writers only render reports and escape what they print. */
#ifndef STG_TOOLS_CLI_H
#define STG_TOOLS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <stguard/stguard.h>

/* Totals for the summary record. */
typedef struct cli_summary {
    uint64_t files;
    uint64_t verdicts[5]; /* indexed by stg_verdict */
    uint64_t bytes;
    double seconds;
    int interrupted_signal; /* SIGINT/SIGTERM that stopped the scan early, 0 when it finished */
    /* folders the walk skipped (docs/cli.md): .git, Hugging Face .no_exist and .locks */
    uint64_t skipped_git, skipped_no_exist, skipped_locks;
    uint64_t skipped_incomplete; /* Hugging Face partial downloads (blobs/<etag>.incomplete) */
    uint64_t unlisted_ok;        /* text output: ok files counted but not listed (no -v) */
} cli_summary;

/* Version of the JSON Lines record shapes (the "schema" field; docs/cli.schema.json). */
#define CLI_JSON_SCHEMA STG_REPORT_JSON_SCHEMA

/* One tensor of `inspect`. */
typedef struct cli_inspect_tensor {
    const stg_tensor *tensor;
    uint32_t shard; /* a sharded model's: the shard's place in file order (cli_inspect.shards) */
    bool has_sha256;
    char sha256[65];
} cli_inspect_tensor;

/* What `inspect` shows about a valid file. */
typedef struct cli_inspect {
    const char *path;
    uint64_t header_length;
    uint64_t data_start;
    size_t metadata_count;
    const char *const *meta_keys;
    const size_t *meta_key_lens;
    const char *const *meta_values;
    const size_t *meta_value_lens;
    size_t tensor_count;
    const cli_inspect_tensor *tensors;
    /* a sharded model (an index file or a model folder): the shards' file names, by number;
     * header_length, data_start and metadata do not apply */
    bool model;
    size_t shard_count;
    const char *const *shards;
} cli_inspect;

/* Element count of a validated tensor (the product of its shape; 1 for a scalar). */
uint64_t cli_tensor_params(const stg_tensor *t);

/* ---- text (out_text.c) ---- */

/* Decodes the UTF-8 sequence at s[0..len) into *cp; returns its length, or 0 when it is invalid
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
size_t cli_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);
/* Writes bytes for a person's terminal: printable ASCII and valid UTF-8 as they are, control
 * characters, invalid UTF-8 and bidirectional formatting characters as escapes; with quoted,
 * also `"` and `\` are escaped. */
void cli_text_escape(FILE *out, const char *s, size_t len, bool quoted);
/* What a finding names, as the text output writes it after the message: [tensor "..."],
 * [global module.name], [member "..." @offset], [limit ...] (each when present). */
void cli_text_finding_names(FILE *out, const stg_finding *f);
/* `path: VERDICT (format)`, with show_blob the `  -> BLOB` line of a link, then one indented
 * line per finding. path overrides the report's. */
void cli_text_record(FILE *out, const stg_report *r, const char *path, bool show_blob);
void cli_text_summary(FILE *out, const cli_summary *s);
void cli_text_inspect(FILE *out, const cli_inspect *in);
/* `inspect` of a GGUF file: version, alignment, metadata (arrays as their type and count),
 * tensor table with ggml type names, totals. */
void cli_text_inspect_gguf(FILE *out, const char *path, const stg_gguf *g);
/* `inspect` of an ONNX model: header fields, metadata, opset imports, inputs and outputs, the
 * op-type histogram (the CLI_ONNX_TOP most frequent, custom domains flagged), initializers. */
#define CLI_ONNX_TOP 10
void cli_text_inspect_onnx(FILE *out, const char *path, const stg_onnx *m);
/* `inspect` of a Flax checkpoint: its array leaves (path, dtype, shape) and totals. */
void cli_text_inspect_flax(FILE *out, const char *path, const stg_flax *f);
/* `inspect` of any other format (the summary door): what its rules met, kind by kind (Keras
 * model and layer classes, SavedModel op histogram, chat templates, auto_map entries). */
void cli_text_inspect_summary(FILE *out, const char *path, const stg_report *rep,
                              const stg_summary *s);
/* The chat-template entries alone (the GGUF view's addition). */
void cli_text_summary_templates(FILE *out, const stg_summary *s);

/* ---- JSON (out_json.c) ---- */

/* A JSON string literal of s[0..len): control characters as \u00XX, invalid UTF-8 replaced by
 * U+FFFD (one per invalid byte). Returns true when some byte was invalid UTF-8. */
bool cli_json_string(FILE *out, const char *s, size_t len);
/* true when s[0..len) is valid UTF-8. */
bool cli_utf8_valid(const char *s, size_t len);
/* The file record: stg_report_to_json and a newline. */
void cli_json_record(FILE *out, const stg_report *r, const char *path);
void cli_json_summary(FILE *out, const cli_summary *s);
void cli_json_inspect(FILE *out, const cli_inspect *in);
/* templates: the summary door's entries of the same file (its chat templates), or NULL. */
void cli_json_inspect_gguf(FILE *out, const char *path, const stg_gguf *g,
                           const stg_summary *templates);
/* The same, every op type and initializer (docs/cli.schema.json). */
void cli_json_inspect_onnx(FILE *out, const char *path, const stg_onnx *m);
void cli_json_inspect_flax(FILE *out, const char *path, const stg_flax *f);
/* The summary door's record: format, verdict, contents (docs/cli.schema.json). */
void cli_json_inspect_summary(FILE *out, const char *path, const stg_report *rep,
                              const stg_summary *s);
/* ",\"contents\":[...]" of s's entries (also the GGUF record's chat templates). */
void cli_json_summary_contents(FILE *out, const stg_summary *s);
/* "u8", "str", "arr", ... for a GGUF value type; "?" for an unknown one. */
const char *cli_gguf_type_name(uint32_t type);

/* ---- SARIF 2.1.0 (out_sarif.c): one run, results streamed, rules written at the end ---- */

typedef struct cli_sarif cli_sarif;
/* include_info: info findings become `note` results too (--sarif-info); by default they are
 * left out, so a file that passes raises no alert. */
cli_sarif *cli_sarif_begin(FILE *out, bool include_info);
/* The results of r's findings (info ones only with include_info), and its artifact. */
void cli_sarif_record(cli_sarif *s, const stg_report *r);
/* Writes the tool (with the rules used), the artifacts, the invocation (exit code; a run stopped
 * by a signal is not successful and says so) and closes the document; frees s. */
void cli_sarif_end(cli_sarif *s, const cli_summary *sum, int exit_code);
/* Frees s without writing anything more (a usage error stopped the run). */
void cli_sarif_discard(cli_sarif *s);
/* The findings of a signature check as results (at the file each names, or the signature). */
void cli_sarif_signature(cli_sarif *s, const stg_signature *sig, const char *model);

/* What a finding of this code means for the user and what to do (SARIF rules' help). */
const char *cli_code_remedy(stg_code code);

/* ---- convert (cmd_convert.c) ---- */

/* `stguard convert` (argv[0] is "convert"): 0 converted, 1 refused, 2 error. */
int cli_convert(int argc, char **argv);

/* ---- signatures (cmd_verify.c) ---- */

/* The signature options `verify` and `scan --signature` share (docs/signing.md). */
typedef struct cli_sig_config {
    const char *signature; /* --signature SIG (NULL: MODEL/model.sig) */
    bool requested;        /* scan: a signature option was given */
    const char *public_key;
    const char **chains;
    size_t chain_count;
    const char *trusted_root, *identity, *identity_provider; /* keyless: not verified */
    const char **ignore_paths;
    size_t ignore_count;
    bool no_ignore_git_paths, allow_symlinks;
} cli_sig_config;

/* The shared options (long options only; their values start at CLI_SIG_OPTION_BASE): the
 * issue's names, model_signing's spellings and the short aliases, as rows of a getopt table. */
#define CLI_SIG_OPTION_BASE 512
enum cli_sig_option_id {
    CLI_SIG_SIGNATURE = CLI_SIG_OPTION_BASE,
    CLI_SIG_PUBLIC_KEY,
    CLI_SIG_CHAIN,
    CLI_SIG_TRUSTED_ROOT,
    CLI_SIG_IDENTITY,
    CLI_SIG_IDENTITY_PROVIDER,
    CLI_SIG_IGNORE_PATHS,
    CLI_SIG_NO_IGNORE_GIT,
    CLI_SIG_ALLOW_SYMLINKS
};
#define CLI_SIG_OPTIONS                                                            \
    {"signature", required_argument, NULL, CLI_SIG_SIGNATURE},                     \
        {"public-key", required_argument, NULL, CLI_SIG_PUBLIC_KEY},               \
        {"public_key", required_argument, NULL, CLI_SIG_PUBLIC_KEY},               \
        {"key", required_argument, NULL, CLI_SIG_PUBLIC_KEY},                      \
        {"certificate-chain", required_argument, NULL, CLI_SIG_CHAIN},             \
        {"certificate_chain", required_argument, NULL, CLI_SIG_CHAIN},             \
        {"cert-chain", required_argument, NULL, CLI_SIG_CHAIN},                    \
        {"trusted-root", required_argument, NULL, CLI_SIG_TRUSTED_ROOT},           \
        {"identity", required_argument, NULL, CLI_SIG_IDENTITY},                   \
        {"identity-provider", required_argument, NULL, CLI_SIG_IDENTITY_PROVIDER}, \
        {"identity_provider", required_argument, NULL, CLI_SIG_IDENTITY_PROVIDER}, \
        {"ignore-paths", required_argument, NULL, CLI_SIG_IGNORE_PATHS},           \
        {"ignore_paths", required_argument, NULL, CLI_SIG_IGNORE_PATHS},           \
        {"no-ignore-git-paths", no_argument, NULL, CLI_SIG_NO_IGNORE_GIT},         \
    {                                                                              \
        "allow-symlinks", no_argument, NULL, CLI_SIG_ALLOW_SYMLINKS                \
    }
/* Takes one option of cli_sig_long_options (ch its value): 0, or the usage exit status. */
int cli_sig_option(cli_sig_config *c, int ch, const char *arg);
/* Checks the combination and opens the check of model; *out is set on 0. Returns 0, or the
 * exit status (2: usage error or unreadable input) after a message. */
int cli_sig_open(const cli_sig_config *c, const char *model, stg_signature **out);
/* Renders a finished check: text lines, or the fields of a JSON object (no braces). */
void cli_text_signature(FILE *out, const stg_signature *s, const char *model);
void cli_json_signature_fields(FILE *out, const stg_signature *s, const char *model);
void cli_sig_free(cli_sig_config *c);
/* `stguard verify` (argv[0] is "verify"): 0 verified, 1 not verified, 2 usage or unreadable. */
int cli_verify(int argc, char **argv);

/* stg_limits_set(lim, name, value) with the CLI's messages for an unknown limit and a bad
 * value (opt names the option given): 0, or the usage exit status. */
int cli_set_limit(stg_limits *lim, const char *name, const char *value, const char *opt);
/* "NAME=VALUE" of --limit through cli_set_limit. */
int cli_set_limit_pair(stg_limits *lim, const char *pair);

#endif
