/* `stguard verify` and the signature part of `stguard scan --signature` (docs/signing.md,
 * docs/cli.md): options, the call of the library's stg_signature_* functions, and the text and
 * JSON rendering of the result. The checks themselves are the library's. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define EXIT_NOT_VERIFIED 1
#define EXIT_USAGE 2

__attribute__((format(printf, 1, 2))) static int sig_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("stguard: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'stguard verify --help'.\n", stderr);
    return EXIT_USAGE;
}

static int push(const char ***list, size_t *count, const char *v)
{
    const char **p = realloc(*list, (*count + 1) * sizeof *p);
    if (p == NULL) {
        return sig_usage("%s", "out of memory");
    }
    p[(*count)++] = v;
    *list = p;
    return 0;
}

int cli_sig_option(cli_sig_config *c, int ch, const char *arg)
{
    c->requested = true;
    switch ((enum cli_sig_option_id)ch) {
    case CLI_SIG_SIGNATURE: c->signature = arg; return 0;
    case CLI_SIG_PUBLIC_KEY: c->public_key = arg; return 0;
    case CLI_SIG_CHAIN: return push(&c->chains, &c->chain_count, arg);
    case CLI_SIG_TRUSTED_ROOT: c->trusted_root = arg; return 0;
    case CLI_SIG_IDENTITY: c->identity = arg; return 0;
    case CLI_SIG_IDENTITY_PROVIDER: c->identity_provider = arg; return 0;
    case CLI_SIG_IGNORE_PATHS: return push(&c->ignore_paths, &c->ignore_count, arg);
    case CLI_SIG_NO_IGNORE_GIT: c->no_ignore_git_paths = true; return 0;
    case CLI_SIG_ALLOW_SYMLINKS: c->allow_symlinks = true; return 0;
    }
    return sig_usage("%s", "unknown signature option");
}

void cli_sig_free(cli_sig_config *c)
{
    free(c->chains);
    free(c->ignore_paths);
    memset(c, 0, sizeof *c);
}

int cli_sig_open(const cli_sig_config *c, const char *model, stg_signature **out)
{
    *out = NULL;
    bool keyless = c->trusted_root != NULL || c->identity != NULL || c->identity_provider != NULL;
    int methods = (c->public_key != NULL) + (c->chain_count > 0) + keyless;
    if (methods != 1) {
        return sig_usage("%s", "give exactly one of --public-key PEM, --certificate-chain PEM "
                               "(repeatable) and --trusted-root JSON --identity ID "
                               "--identity-provider URL");
    }
    if (keyless &&
        (c->trusted_root == NULL || c->identity == NULL || c->identity_provider == NULL)) {
        return sig_usage("%s", "keyless checks need --trusted-root, --identity and "
                               "--identity-provider together");
    }
    stg_signature_options o;
    stg_signature_options_default(&o);
    o.public_key = c->public_key;
    o.certificate_chain = c->chains;
    o.certificate_chain_count = c->chain_count;
    o.trusted_root = c->trusted_root;
    o.ignore_paths = c->ignore_paths;
    o.ignore_path_count = c->ignore_count;
    o.ignore_git_paths = !c->no_ignore_git_paths;
    o.allow_symlinks = c->allow_symlinks;
    stg_status st = stg_signature_open(model, c->signature, &o, out);
    if (st == STG_OK) {
        return 0;
    }
    const char *what = st == STG_E_IO ? "cannot read the model, the signature or a trust file"
                       : st == STG_E_BAD_ARG ? "the key or chain file holds no PEM public key or "
                                               "certificate"
                       : st == STG_E_CRYPTO  ? "OpenSSL's libcrypto cannot be loaded"
                       : st == STG_E_NOMEM   ? "out of memory"
                                             : stg_status_name(st);
    fprintf(stderr, "stguard: %s: %s\n", model, what);
    return EXIT_USAGE;
}

void cli_text_signature(FILE *out, const stg_signature *s, const char *model)
{
    bool ok = stg_signature_verified(s);
    cli_text_escape(out, model, strlen(model), false);
    fprintf(out, ": signature %s (%s", ok ? "verified" : "NOT verified",
            stg_signature_method_name(stg_signature_method_of(s)));
    const char *who = stg_signature_signer(s);
    if (who != NULL) {
        fputs(", signer ", out);
        cli_text_escape(out, who, strlen(who), false);
    }
    fprintf(out, ", %" PRIu64 " files)\n", stg_signature_file_count(s));
    for (size_t i = 0; i < stg_signature_finding_count(s); i++) {
        const stg_signature_finding *f = stg_signature_finding_at(s, i);
        fprintf(out, "  %s %s", stg_severity_name(f->severity), stg_code_name(f->code));
        if (f->has_offset) {
            fprintf(out, " @%" PRIu64, f->offset);
        }
        if (f->file != NULL) {
            fputs(" (file \"", out);
            cli_text_escape(out, f->file, strlen(f->file), true);
            fputs("\")", out);
        }
        fprintf(out, ": %s\n", f->message);
    }
    if (stg_signature_findings_dropped(s) > 0) {
        fprintf(out, "  (%" PRIu64 " more findings not listed)\n",
                stg_signature_findings_dropped(s));
    }
}

static void json_opt(FILE *out, const char *key, const char *v)
{
    fprintf(out, ",\"%s\":", key);
    if (v == NULL) {
        fputs("null", out);
    } else {
        cli_json_string(out, v, strlen(v));
    }
}

void cli_json_signature_fields(FILE *out, const stg_signature *s, const char *model)
{
    fputs("\"path\":", out);
    cli_json_string(out, model, strlen(model));
    json_opt(out, "signature_file", stg_signature_file(s));
    fprintf(out, ",\"verified\":%s", stg_signature_verified(s) ? "true" : "false");
    json_opt(out, "method", stg_signature_method_name(stg_signature_method_of(s)));
    json_opt(out, "signer", stg_signature_signer(s));
    json_opt(out, "model_name", stg_signature_model_name(s));
    fprintf(out, ",\"files\":%" PRIu64 ",\"findings\":[", stg_signature_file_count(s));
    for (size_t i = 0; i < stg_signature_finding_count(s); i++) {
        const stg_signature_finding *f = stg_signature_finding_at(s, i);
        fprintf(out, "%s{\"code\":\"%s\",\"severity\":\"%s\",\"offset\":", i > 0 ? "," : "",
                stg_code_name(f->code), stg_severity_name(f->severity));
        if (f->has_offset) {
            fprintf(out, "%" PRIu64, f->offset);
        } else {
            fputs("null", out);
        }
        fputs(",\"message\":", out);
        cli_json_string(out, f->message, strlen(f->message));
        if (f->file != NULL) {
            fputs(",\"file\":", out);
            cli_json_string(out, f->file, strlen(f->file));
        }
        fputc('}', out);
    }
    fprintf(out, "],\"findings_dropped\":%" PRIu64, stg_signature_findings_dropped(s));
}

static const char verify_usage[] =
    "usage: stguard verify [--signature SIG] (--public-key PEM | --certificate-chain PEM\n"
    "                      [--certificate-chain PEM ...] | --trusted-root JSON --identity ID\n"
    "                      --identity-provider URL) [--ignore-paths PATH]...\n"
    "                      [--no-ignore-git-paths] [--allow-symlinks] [--format text|json]\n"
    "                      MODEL\n"
    "\n"
    "Verifies an OpenSSF model signature (model_signing's model.sig) offline: the DSSE\n"
    "signature with the signer's EC public key (key method) or a leaf certificate chaining to\n"
    "the given roots (certificate method), then the SHA-256 of every file of MODEL against the\n"
    "signed list. Keyless Sigstore signatures are not verified (signature_unsupported).\n"
    "  --signature SIG        the signature file (default MODEL/model.sig)\n"
    "  --public-key PEM       the signer's public key (also --key, --public_key)\n"
    "  --certificate-chain PEM  trusted certificates, repeatable (also --cert-chain)\n"
    "  --ignore-paths PATH    leave PATH (inside MODEL, from the working folder) out; repeatable\n"
    "  --no-ignore-git-paths  compare .git, .gitattributes, .github, .gitignore too\n"
    "  --allow-symlinks       hash links to files with their target's bytes\n"
    "  --format text|json     output (json: one JSON object)\n"
    "exit status: 0 verified; 1 not verified (any finding); 2 usage error or unreadable input\n";

static const struct option verify_options[] = {
    CLI_SIG_OPTIONS,
    {"format", required_argument, NULL, 'f'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int verify_run(const cli_sig_config *c, const char *model, bool json)
{
    stg_signature *s = NULL;
    int rc = cli_sig_open(c, model, &s);
    if (rc != 0) {
        return rc;
    }
    stg_status st = stg_signature_hash_model(s);
    st = st == STG_OK ? stg_signature_finish(s) : st;
    if (st != STG_OK) {
        fprintf(stderr, "stguard: %s: the model could not be hashed: %s\n", model,
                stg_status_name(st));
        stg_signature_free(s);
        return EXIT_USAGE;
    }
    if (json) {
        fprintf(stdout, "{\"type\":\"signature\",\"schema\":%d,", CLI_JSON_SCHEMA);
        cli_json_signature_fields(stdout, s, model);
        fputs("}\n", stdout);
    } else {
        cli_text_signature(stdout, s, model);
    }
    bool ok = stg_signature_verified(s);
    stg_signature_free(s);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_USAGE;
    }
    return ok ? 0 : EXIT_NOT_VERIFIED;
}

int cli_verify(int argc, char **argv)
{
    cli_sig_config c;
    memset(&c, 0, sizeof c);
    bool json = false;
    optind = 1;
    opterr = 0;
    int ch, rc = 0;
    while (rc == 0 && (ch = getopt_long(argc, argv, ":h", verify_options, NULL)) != -1) {
        if (ch >= CLI_SIG_OPTION_BASE) {
            rc = cli_sig_option(&c, ch, optarg);
        } else if (ch == 'f' && (strcmp(optarg, "json") == 0 || strcmp(optarg, "text") == 0)) {
            json = strcmp(optarg, "json") == 0;
        } else if (ch == 'f') {
            rc = sig_usage("unknown --format '%s' (text or json)", optarg);
        } else if (ch == 'h') {
            fputs(verify_usage, stdout);
            cli_sig_free(&c);
            return 0;
        } else if (ch == ':') {
            rc = sig_usage("option '%s' needs a value", argv[optind - 1]);
        } else {
            rc = sig_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (rc == 0 && argc - optind != 1) {
        rc = sig_usage("%s", "verify takes exactly one MODEL (a folder, or one file)");
    }
    if (rc == 0) {
        rc = verify_run(&c, argv[optind], json);
    }
    cli_sig_free(&c);
    return rc;
}
