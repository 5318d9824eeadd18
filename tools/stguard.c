/* stguard: the command-line tool (docs/cli.md; user documentation in docs/cli.md).
 *   stguard scan [options] PATH...     files, directories (recursively), - for standard input
 *   stguard inspect [options] FILE     the header and tensor table of a valid safetensors or GGUF file
 *   stguard verify [options] MODEL     an OpenSSF model signature, offline (cmd_verify.c)
 *   stguard --version | --help
 * It parses no model bytes itself: the walk, the scan and the validation are the library's;
 * this file reads options, calls the library and renders what it returns.
 *   stguard PATH...                    the same as `stguard scan PATH...` when PATH exists and is
 *                                      not a command name
 * Exit status (docs/cli.md): 130 / 143 interrupted; else 2 usage error; else 3 a file that could
 * not be scanned (verdict error) or a scan that stopped; else 1 any verdict from --fail-on
 * (warn, invalid = the default, unsafe) up; else 4 nothing was checked; else 0. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define EXIT_FAIL 1    /* a file at or above the --fail-on verdict */
#define EXIT_USAGE 2   /* the command line (or a list or policy file it names) is wrong */
#define EXIT_ERROR 3   /* a file could not be scanned (verdict error), or the scan stopped */
#define EXIT_NOTHING 4 /* no file was checked: the paths hold nothing the filters select */
/* A policy file is read whole; this caps what a typo (a model file) could make us read. */
#define POLICY_FILE_MAX ((size_t)16 << 20)

enum out_format { OUT_TEXT, OUT_JSON, OUT_SARIF };

enum long_only {
    OPT_FORMAT = 256,
    OPT_PROFILE,
    OPT_FAIL_ON,
    OPT_ALLOW_GLOBAL,
    OPT_POLICY,
    OPT_INCLUDE,
    OPT_EXCLUDE,
    OPT_MAX_HEADER_LEN,
    OPT_MAX_TENSORS,
    OPT_MAX_RANK,
    OPT_MAX_JSON_DEPTH,
    OPT_MAX_MEMORY,
    OPT_MAX_FINDINGS,
    OPT_LIMIT,
    OPT_SHA256,
    OPT_STDIN_NAME,
    OPT_NO_DIGEST,
    OPT_SCAN_GIT,
    OPT_TENSOR_SHA256,
    OPT_PROGRESS,
    OPT_FILES_FROM,
    OPT_NULL,
    OPT_SHARD,
    OPT_CHECK,
    OPT_SARIF_INFO,
    OPT_OUTPUT
};

static const struct option scan_options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
    {"allow-global", required_argument, NULL, OPT_ALLOW_GLOBAL},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"include", required_argument, NULL, OPT_INCLUDE},
    {"exclude", required_argument, NULL, OPT_EXCLUDE},
    {"max-header-len", required_argument, NULL, OPT_MAX_HEADER_LEN},
    {"max-tensors", required_argument, NULL, OPT_MAX_TENSORS},
    {"max-rank", required_argument, NULL, OPT_MAX_RANK},
    {"max-json-depth", required_argument, NULL, OPT_MAX_JSON_DEPTH},
    {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
    {"max-findings", required_argument, NULL, OPT_MAX_FINDINGS},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"sha256", required_argument, NULL, OPT_SHA256},
    {"stdin-name", required_argument, NULL, OPT_STDIN_NAME},
    {"no-digest", no_argument, NULL, OPT_NO_DIGEST},
    {"scan-git", no_argument, NULL, OPT_SCAN_GIT},
    {"jobs", required_argument, NULL, 'j'},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"output", required_argument, NULL, 'o'},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"tensor-sha256", no_argument, NULL, OPT_TENSOR_SHA256},
    {"files-from", required_argument, NULL, OPT_FILES_FROM},
    {"null", no_argument, NULL, OPT_NULL},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"check", required_argument, NULL, OPT_CHECK},
    {"sarif-info", no_argument, NULL, OPT_SARIF_INFO},
    CLI_SIG_OPTIONS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char usage_text[] =
    "usage: stguard scan [options] PATH...   (a PATH of - reads standard input)\n"
    "       stguard PATH [options] [PATH...]    (scan, when PATH exists and is not a command)\n"
    "       stguard inspect [--format text|json] [-o FILE] [--tensor-sha256] [limits]\n"
    "                       FILE|INDEX|FOLDER|HF-REPO-FOLDER\n"
    "       stguard verify [--signature SIG] (--public-key PEM | --certificate-chain PEM ...)\n"
    "                      MODEL   (stguard verify --help)\n"
    "       stguard convert INPUT OUTPUT [--select KEY] [--force] [--drop-aliases]\n"
    "                       [--strict-leaves] [--sha256]   (stguard convert --help)\n"
    "       stguard --version | --help\n"
    "\n"
    "scan options:\n"
    "  --format text|json|sarif   output format (default text; json is JSON Lines)\n"
    "  --sarif-info               SARIF: also write info findings (note results)\n"
    "  --profile strict|compat    rule profile (default strict)\n"
    "  --fail-on VERDICT          lowest verdict that makes the exit status 1: ok, warn,\n"
    "                             invalid (the default) or unsafe (warning = warn and\n"
    "                             error = invalid, the older names, are accepted)\n"
    "  -o, --output FILE          write the report to FILE instead of standard output\n"
    "  --allow-global MODULE:NAME allow one pickle global (repeatable)\n"
    "  --policy FILE              allow/deny lists for pickle globals (format: policy.md)\n"
    "  --include GLOB             scan only files whose relative path or name matches\n"
    "  --exclude GLOB             skip files and directories whose relative path or name matches\n"
    "  --max-header-len N, --max-tensors N, --max-rank N, --max-json-depth N,\n"
    "  --max-memory N, --max-findings N, --limit NAME=VALUE (any limit, e.g. max_nesting=2)\n"
    "  --sha256 HEX               expected SHA-256 of the one file (or standard input) scanned\n"
    "  --stdin-name NAME          name standard input's content carries (a format hint)\n"
    "  --no-digest                do not compute SHA-256 digests\n"
    "  --scan-git                 also walk .git folders (skipped and counted by default)\n"
    "  -j, --jobs N               scan with N threads (output order does not change)\n"
    "  -v, --verbose              text: every file (ok ones too) and the blob a link leads to\n"
    "  -q, --quiet                print only files that are not ok (json too), and the summary;\n"
    "                             no progress line\n"
    "  --progress auto|always|never  progress line on stderr (default auto: a terminal,\n"
    "                             not with --quiet)\n"
    "  --files-from FILE          also scan the paths listed in FILE, one per line (- : stdin)\n"
    "  --null                     --files-from and --check lists are NUL-separated\n"
    "  --shard K/N                scan only shard K of N (1 <= K <= N), chosen by path: N runs\n"
    "                             with K = 1..N cover every file exactly once\n"
    "  --check FILE               verify and scan the files a sha256sum list names (- : stdin)\n"
    "  --signature SIG --public-key PEM | --certificate-chain PEM\n"
    "                             also verify the model signature of the one MODEL folder\n"
    "                             scanned, in the same pass (options: stguard verify --help);\n"
    "                             a signature that does not verify makes the exit status 1\n"
    "\n"
    "text output lists the files that need a look (not ok) and the counts; -v lists every file\n"
    "\n"
    "exit status: 0 every file checked passed; 1 a file at or above the --fail-on verdict\n"
    "             (default: invalid or unsafe); 2 usage error; 3 a file could not be scanned\n"
    "             (verdict error, e.g. unreadable, a FIFO or a dangling link); 4 no file was\n"
    "             checked at all; 130 / 143 interrupted by SIGINT / SIGTERM (the read in\n"
    "             progress stops, the output is valid and says so)\n"
    "\n"
    "manual: man stguard; documents (findings.md, policy.md, ...): share/doc/stguard/\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("stguard: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'stguard --help'.\n", stderr);
    return EXIT_USAGE;
}

typedef struct cli_config {
    enum out_format format;
    stg_verdict fail_on; /* lowest verdict giving exit 1 */
    bool quiet;
    bool verbose;
    bool tensor_sha256;
    const char *output; /* -o FILE, NULL: standard output */
    int progress;       /* -1 never, 0 auto, 1 always */
    stg_tree_options walk;
    stg_policy *policy;
    const char **include, **exclude;
    size_t include_count, exclude_count;
    char *expected;      /* lower-case copy of --sha256 */
    bool scan_only_seen; /* an option inspect does not take */
    const char *scan_only_name;
    const char *files_from; /* --files-from FILE */
    const char *check;      /* --check FILE */
    bool null_separated;
    bool sarif_info;    /* --sarif-info: info findings become SARIF results too */
    cli_sig_config sig; /* --signature and its trust options (cmd_verify.c) */
} cli_config;

/* Set by the SIGINT/SIGTERM handler; the walk polls it. */
static volatile int interrupt_signal;

static void on_signal(int sig)
{
    interrupt_signal = sig;
}

/* A first SIGINT or SIGTERM asks the walk to stop after the current files and the outputs are
 * closed properly; the handler is reset, so a second one ends the process at once. */
static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* "stguard: BEFORE<path>AFTER\n" on stderr, the path escaped for the terminal. */
static void say_path(const char *before, const char *path, const char *after)
{
    fprintf(stderr, "stguard: %s", before);
    cli_text_escape(stderr, path, strlen(path), false);
    fprintf(stderr, "%s\n", after);
}

int cli_set_limit(stg_limits *lim, const char *name, const char *value, const char *opt)
{
    stg_status st = stg_limits_set(lim, name, value);
    if (st == STG_E_NOT_FOUND) {
        return usage_error("unknown limit '%s'", name);
    }
    if (st != STG_OK) {
        fprintf(stderr, "stguard: invalid value for %s: ", opt);
        cli_text_escape(stderr, value, strlen(value), false);
        fputc('\n', stderr);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_set_limit_pair(stg_limits *lim, const char *pair)
{
    const char *eq = strchr(pair, '=');
    if (eq == NULL || eq == pair) {
        return usage_error("--limit expects NAME=VALUE, got '%s'", pair);
    }
    char name[64];
    size_t n = (size_t)(eq - pair);
    if (n >= sizeof name) {
        return usage_error("unknown limit in '%s'", pair);
    }
    memcpy(name, pair, n);
    name[n] = '\0';
    return cli_set_limit(lim, name, eq + 1, "--limit");
}

static stg_policy *need_policy(cli_config *c)
{
    if (c->policy == NULL && stg_policy_new(&c->policy) != STG_OK) {
        c->policy = NULL;
    }
    return c->policy;
}

static int load_policy_file(cli_config *c, const char *path)
{
    stg_policy *p = need_policy(c);
    if (p == NULL) {
        fputs("stguard: out of memory\n", stderr);
        return EXIT_USAGE;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        say_path("cannot read policy file ", path,
                 errno == ENOENT ? ": no such file" : ": unreadable");
        return EXIT_USAGE;
    }
    char *buf = malloc(POLICY_FILE_MAX + 1);
    size_t len = buf != NULL ? fread(buf, 1, POLICY_FILE_MAX + 1, f) : 0;
    bool err = buf == NULL || ferror(f) != 0;
    fclose(f);
    if (err || len > POLICY_FILE_MAX) {
        say_path("cannot read policy file ", path,
                 len > POLICY_FILE_MAX ? ": larger than 16 MiB" : "");
        free(buf);
        return EXIT_USAGE;
    }
    uint64_t line = 0;
    stg_status st = stg_policy_load(p, buf, len, &line);
    free(buf);
    if (st != STG_OK) {
        char where[64];
        snprintf(where, sizeof where, ":%" PRIu64 ": invalid policy entry (%s)", line,
                 stg_status_name(st));
        say_path("", path, where);
        return EXIT_USAGE;
    }
    return 0;
}

static int push_glob(const char ***list, size_t *count, const char *glob)
{
    const char **n = realloc(*list, (*count + 1) * sizeof *n);
    if (n == NULL) {
        fputs("stguard: out of memory\n", stderr);
        return EXIT_USAGE;
    }
    n[(*count)++] = glob;
    *list = n;
    return 0;
}

/* MODULE:NAME with both sides dotted Python identifiers (ASCII): then a refusal by the
 * library can only be the hard-block list. */
static bool spec_shape_ok(const char *spec)
{
    const char *colon = strchr(spec, ':');
    if (colon == NULL || colon == spec || colon[1] == '\0' || strchr(colon + 1, ':') != NULL) {
        return false;
    }
    bool start = true;
    for (const char *p = spec; *p != '\0'; p++) {
        char ch = *p;
        if (ch == ':' || ch == '.') {
            if (start) {
                return false; /* empty component */
            }
            start = true;
            continue;
        }
        bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
        if (!alpha && !(ch >= '0' && ch <= '9' && !start)) {
            return false;
        }
        start = false;
    }
    return !start;
}

/* A --fail-on value: every verdict name that can fail a gate (verdict error always does, with its
 * own status) and the older names warning (warn) and error (invalid). */
static bool fail_on_verdict(const char *name, stg_verdict *out)
{
    static const struct {
        const char *name;
        stg_verdict verdict;
    } names[] = {
        {"ok", STG_VERDICT_OK},         {"warn", STG_VERDICT_WARN},
        {"warning", STG_VERDICT_WARN},  {"invalid", STG_VERDICT_INVALID},
        {"error", STG_VERDICT_INVALID}, {"unsafe", STG_VERDICT_UNSAFE},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].verdict;
            return true;
        }
    }
    return false;
}

/* The --max-* options: each sets the limit of its name. */
static int set_named_limit(stg_limits *lim, int opt)
{
    static const struct {
        int opt;
        const char *limit, *flag;
    } named[] = {
        {OPT_MAX_HEADER_LEN, "max_header_len", "--max-header-len"},
        {OPT_MAX_TENSORS, "max_tensors", "--max-tensors"},
        {OPT_MAX_RANK, "max_rank", "--max-rank"},
        {OPT_MAX_JSON_DEPTH, "max_json_depth", "--max-json-depth"},
        {OPT_MAX_MEMORY, "max_memory", "--max-memory"},
        {OPT_MAX_FINDINGS, "max_findings", "--max-findings"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (named[i].opt == opt) {
            return cli_set_limit(lim, named[i].limit, optarg, named[i].flag);
        }
    }
    return usage_error("unknown limit option");
}

static int parse_threads(const char *arg, cli_config *c)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || n < 1 || n > STG_TREE_MAX_THREADS) {
        return usage_error("-j expects a number of threads from 1 to 256, got '%s'", arg);
    }
    c->walk.threads = (uint32_t)n;
    return 0;
}

static int parse_shard(const char *arg, cli_config *c)
{
    unsigned k = 0, n = 0;
    char tail = 0;
    if (sscanf(arg, "%u/%u%c", &k, &n, &tail) != 2 || n == 0 || k == 0 || k > n || arg[0] < '0' ||
        arg[0] > '9') {
        return usage_error("--shard expects K/N with 1 <= K <= N, got '%s'", arg);
    }
    c->walk.shard_index = k - 1;
    c->walk.shard_count = n;
    return 0;
}

/* Parses options into c; returns 0, or the exit status of a usage error (or -1 after --help). */
static int parse_options(int argc, char **argv, cli_config *c, bool inspect)
{
    stg_limits *lim = &c->walk.scan.limits;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":j:qvo:h", scan_options, NULL)) != -1) {
        int rc = 0;
        bool scan_only = true;
        switch (ch) {
        case OPT_FORMAT:
            scan_only = false;
            if (strcmp(optarg, "text") == 0) {
                c->format = OUT_TEXT;
            } else if (strcmp(optarg, "json") == 0) {
                c->format = OUT_JSON;
            } else if (strcmp(optarg, "sarif") == 0 && !inspect) {
                c->format = OUT_SARIF;
            } else {
                return usage_error("unknown --format '%s'", optarg);
            }
            break;
        case OPT_PROFILE:
            scan_only = false;
            if (strcmp(optarg, "strict") != 0 && strcmp(optarg, "compat") != 0) {
                return usage_error("unknown --profile '%s' (strict or compat)", optarg);
            }
            rc = cli_set_limit(lim, "profile", optarg, "--profile");
            break;
        case OPT_FAIL_ON:
            if (!fail_on_verdict(optarg, &c->fail_on)) {
                return usage_error("unknown --fail-on '%s' (ok, warn, invalid or unsafe)", optarg);
            }
            break;
        case OPT_ALLOW_GLOBAL: {
            stg_policy *p = need_policy(c);
            if (p == NULL) {
                return usage_error("out of memory");
            }
            if (stg_policy_allow_spec(p, optarg) != STG_OK) {
                if (spec_shape_ok(optarg)) {
                    return usage_error("--allow-global '%s': this global is on the hard-block "
                                       "list (it can run code, import or load nested pickles) "
                                       "and cannot be allowed",
                                       optarg);
                }
                return usage_error("invalid --allow-global '%s' (expected MODULE:NAME, dotted "
                                   "Python names)",
                                   optarg);
            }
            break;
        }
        case OPT_POLICY: rc = load_policy_file(c, optarg); break;
        case OPT_INCLUDE: rc = push_glob(&c->include, &c->include_count, optarg); break;
        case OPT_EXCLUDE: rc = push_glob(&c->exclude, &c->exclude_count, optarg); break;
        case OPT_MAX_HEADER_LEN:
        case OPT_MAX_TENSORS:
        case OPT_MAX_RANK:
        case OPT_MAX_JSON_DEPTH:
        case OPT_MAX_MEMORY:
        case OPT_MAX_FINDINGS:
            scan_only = false;
            rc = set_named_limit(lim, ch);
            break;
        case OPT_LIMIT:
            scan_only = false;
            rc = cli_set_limit_pair(lim, optarg);
            break;
        case OPT_SHA256: {
            if (!stg_sha256_hex_normalize(optarg, NULL)) {
                return usage_error("--sha256 expects 64 hex digits, got '%s'", optarg);
            }
            free(c->expected);
            c->expected = malloc(65);
            if (c->expected == NULL) {
                return usage_error("out of memory");
            }
            stg_sha256_hex_normalize(optarg, c->expected);
            c->walk.scan.expected_sha256 = c->expected;
            break;
        }
        case OPT_STDIN_NAME: c->walk.stdin_name = optarg; break;
        case OPT_NO_DIGEST: c->walk.scan.digest = false; break;
        case OPT_SCAN_GIT: c->walk.scan_git = true; break;
        case OPT_SARIF_INFO: c->sarif_info = true; break;
        case 'j': rc = parse_threads(optarg, c); break;
        case 'q': c->quiet = true; break;
        case 'v': c->verbose = true; break;
        case 'o':
            scan_only = false;
            c->output = optarg;
            break;
        case OPT_PROGRESS:
            if (strcmp(optarg, "auto") == 0) {
                c->progress = 0;
            } else if (strcmp(optarg, "always") == 0) {
                c->progress = 1;
            } else if (strcmp(optarg, "never") == 0) {
                c->progress = -1;
            } else {
                return usage_error("unknown --progress '%s' (auto, always or never)", optarg);
            }
            break;
        case OPT_FILES_FROM: c->files_from = optarg; break;
        case OPT_NULL: c->null_separated = true; break;
        case OPT_CHECK: c->check = optarg; break;
        case OPT_SHARD: rc = parse_shard(optarg, c); break;
        case OPT_TENSOR_SHA256:
            if (!inspect) {
                return usage_error("--tensor-sha256 is an option of inspect");
            }
            scan_only = false;
            c->tensor_sha256 = true;
            break;
        case 'h': fputs(usage_text, stdout); return -1;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            if (ch < CLI_SIG_OPTION_BASE) {
                return usage_error("unknown option '%s'", argv[optind - 1]);
            }
            rc = cli_sig_option(&c->sig, ch, optarg);
            break;
        }
        if (rc != 0) {
            return rc;
        }
        if (scan_only && inspect) {
            return usage_error("option '%s' is not an option of inspect", argv[optind - 1]);
        }
    }
    c->walk.include = c->include;
    c->walk.include_count = c->include_count;
    c->walk.exclude = c->exclude;
    c->walk.exclude_count = c->exclude_count;
    c->walk.scan.policy = c->policy;
    return 0;
}

/* ------------------------------------------------------------------------------ scan */

typedef struct scan_state {
    const cli_config *cfg;
    cli_summary sum;
    cli_sarif *sarif;
    bool progress_enabled;
    bool progress_shown;
    double start;
    uint64_t distinct_scanned; /* files (and stdin) read, over every walk */
    stg_signature *sig;        /* --signature: the check the records feed */
} scan_state;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void clear_progress(scan_state *s)
{
    if (s->progress_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        s->progress_shown = false;
    }
}

static void on_record(void *user, const stg_tree_record *rec)
{
    scan_state *s = user;
    const stg_report *r = rec->report;
    stg_verdict v = stg_report_verdict(r);
    s->sum.files++;
    s->sum.verdicts[v]++;
    clear_progress(s);
    if (s->sig != NULL && stg_signature_add_record(s->sig, rec) != STG_OK) {
        /* a record outside the model as opened: cannot be compared, so never verified */
        (void)stg_signature_add_file(s->sig, ".", STG_SIGNATURE_ENTRY_UNHASHED, NULL);
    }
    /* Text is for a person: what passes is counted, not listed, unless -v. */
    bool show = !(s->cfg->quiet && v == STG_VERDICT_OK);
    switch (s->cfg->format) {
    case OUT_TEXT:
        if (s->cfg->verbose || v != STG_VERDICT_OK) {
            cli_text_record(stdout, r, NULL, s->cfg->verbose);
        } else {
            s->sum.unlisted_ok++;
        }
        break;
    case OUT_JSON:
        if (show) {
            cli_json_record(stdout, r, NULL);
        }
        break;
    case OUT_SARIF: cli_sarif_record(s->sarif, r); break;
    }
    fflush(stdout);
}

static void on_progress(void *user, const stg_tree_progress *p)
{
    scan_state *s = user;
    if (!s->progress_enabled || (p->files_total <= 1 && p->seconds < 1.0) ||
        p->files_done >= p->files_total) {
        return;
    }
    double mib = 1024.0 * 1024.0, done = (double)p->bytes_done / mib;
    double total = (double)(p->bytes_total > p->bytes_done ? p->bytes_total : p->bytes_done) / mib;
    fprintf(stderr, "\r\033[Kstguard: %" PRIu64 "/%" PRIu64 " files, %.1f/%.1f MiB", p->files_done,
            p->files_total, done, total);
    if (p->seconds > 0.5 && done > 0.0) {
        double rate = done / p->seconds;
        fprintf(stderr, ", %.1f MiB/s, ETA %.0f s", rate, (total - done) / rate);
    }
    if (p->current != NULL) {
        /* the file being scanned, its last 40 bytes, escaped for the terminal */
        size_t n = strlen(p->current);
        const char *tail = n > 40 ? p->current + n - 40 : p->current;
        fputs(n > 40 ? ", ..." : ", ", stderr);
        cli_text_escape(stderr, tail, strlen(tail), false);
    }
    fflush(stderr);
    s->progress_shown = true;
}

static int exit_status(const cli_config *c, const cli_summary *s)
{
    if (s->verdicts[STG_VERDICT_ERROR] > 0) {
        return EXIT_ERROR;
    }
    for (int v = (int)c->fail_on; v <= (int)STG_VERDICT_UNSAFE; v++) {
        if (s->verdicts[v] > 0) {
            return EXIT_FAIL;
        }
    }
    return 0;
}

/* -o FILE: standard output becomes FILE (created or truncated), so the writers and the rule that
 * the output file is never scanned see one stdout. 0, or the usage status after a message. */
static int redirect_output(const char *path)
{
    if (path == NULL) {
        return 0;
    }
    fflush(stdout);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
        }
        say_path("cannot write the output file ", path, "");
        fprintf(stderr, "stguard: %s\n", strerror(err));
        return EXIT_USAGE;
    }
    close(fd);
    return 0;
}

/* A list read whole: --files-from (paths) and --check (sha256sum lines). */
typedef struct cli_list {
    char *buf;
    char **items;
    size_t count;
} cli_list;

static void free_list(cli_list *l)
{
    free(l->buf);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Reads path ("-": standard input) and splits it at '\n' (or NUL); empty entries are dropped. */
static int read_list(const char *path, bool nul, cli_list *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        say_path("cannot read list ", path, "");
        return EXIT_USAGE;
    }
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 65536) {
            size_t ncap = cap == 0 ? 65536 : cap * 2;
            char *nb = ncap > cap ? realloc(out->buf, ncap + 1) : NULL;
            if (nb == NULL) {
                if (f != stdin) {
                    fclose(f);
                }
                free_list(out);
                return usage_error("out of memory reading a list");
            }
            out->buf = nb;
            cap = ncap;
        }
        size_t got = fread(out->buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            break;
        }
    }
    bool err = ferror(f) != 0;
    if (f != stdin) {
        fclose(f);
    }
    if (err) {
        free_list(out);
        say_path("cannot read list ", path, "");
        return EXIT_USAGE;
    }
    out->buf[len] = '\0';
    char sep = nul ? '\0' : '\n';
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        n += out->buf[i] == sep;
    }
    out->items = calloc(n + 2, sizeof *out->items);
    if (out->items == NULL) {
        free_list(out);
        return usage_error("out of memory reading a list");
    }
    size_t begin = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || out->buf[i] == sep) {
            out->buf[i] = '\0';
            if (i > begin) {
                out->items[out->count++] = out->buf + begin;
            }
            begin = i + 1;
        }
    }
    return 0;
}

/* One sha256sum line: "HEX  NAME" or "HEX *NAME"; a line starting with a backslash has "\\"
 * and "\n" escapes in NAME (as sha256sum writes names holding them). Decodes in place. */
static bool parse_check_line(char *line, char **hex, char **name)
{
    bool escaped = line[0] == '\\';
    if (escaped) {
        line++;
    }
    size_t n = strlen(line);
    if (n < 67 || (line[64] != ' ') || (line[65] != ' ' && line[65] != '*')) {
        return false;
    }
    line[64] = '\0';
    *hex = line;
    char *nm = line + 66;
    if (escaped) {
        char *o = nm;
        for (char *p = nm; *p != '\0'; p++) {
            if (*p == '\\' && (p[1] == '\\' || p[1] == 'n')) {
                *o++ = p[1] == 'n' ? '\n' : '\\';
                p++;
            } else {
                *o++ = *p;
            }
        }
        *o = '\0';
    }
    size_t nl = strlen(nm);
    if (nl > 0 && nm[nl - 1] == '\r') {
        nm[nl - 1] = '\0'; /* a list written on Windows */
    }
    *name = nm;
    return nm[0] != '\0';
}

/* One walk, its records going to the writers; adds to the summary. */
static stg_status run_walk(scan_state *s, const char *const *paths, size_t n,
                           const stg_tree_options *opt, bool *interrupted)
{
    stg_tree_summary res;
    stg_status st = stg_scan_tree(paths, n, opt, on_record, s, &res);
    clear_progress(s);
    s->sum.bytes += res.bytes;
    s->sum.skipped_git += res.skipped_git;
    s->sum.skipped_no_exist += res.skipped_no_exist;
    s->sum.skipped_locks += res.skipped_locks;
    s->sum.skipped_incomplete += res.skipped_incomplete;
    s->distinct_scanned += res.files_read;
    *interrupted = res.interrupted;
    return st;
}

/* --check: one walk per listed file, each with its expected digest, in list order; *bad_lines
 * counts the lines that are no sha256sum line or name no one file. */
static stg_status run_check_list(scan_state *s, cli_config *c, const cli_list *checks,
                                 bool *interrupted, size_t *bad_lines)
{
    stg_status st = STG_OK;
    for (size_t i = 0; i < checks->count && st == STG_OK && !*interrupted; i++) {
        char *hex = NULL, *name = NULL;
        char lower[65];
        if (!parse_check_line(checks->items[i], &hex, &name) ||
            !stg_sha256_hex_normalize(hex, lower)) {
            fprintf(stderr, "stguard: %s: line %zu is not a sha256sum line\n", c->check, i + 1);
            ++*bad_lines;
            continue;
        }
        stg_tree_options one = c->walk;
        one.scan.expected_sha256 = lower;
        const char *p[1] = {name};
        st = run_walk(s, p, 1, &one, interrupted);
        if (st == STG_E_BAD_ARG) {
            say_path("--check: ", name, ": not one file; skipped");
            ++*bad_lines;
            st = STG_OK;
        }
    }
    return st;
}

/* --signature: one model (folder or file), no filter that would hide a file from the
 * comparison, digests on; the walk sees every file the signature covers (.git folders too,
 * no Hugging Face cache rules). Then the signature is read and checked (*sig). 0, or the
 * usage status. */
static int signature_scan_args(cli_config *c, size_t npaths, size_t stdin_count, const char *model,
                               stg_signature **sig)
{
    if (npaths != 1 || stdin_count > 0 || c->files_from != NULL || c->check != NULL) {
        return usage_error("--signature verifies one MODEL: give exactly one PATH (no -, "
                           "--files-from or --check)");
    }
    if (c->include_count > 0 || c->exclude_count > 0 || c->walk.shard_count > 0 ||
        !c->walk.scan.digest) {
        return usage_error("--signature compares every file: no --include, --exclude, --shard "
                           "or --no-digest");
    }
    c->walk.scan_git = true;
    c->walk.hf_cache = false;
    return cli_sig_open(&c->sig, model, sig);
}

/* --signature: ends the check, writes its record, and makes a check that did not verify a
 * failing status (1, unless the scan's own status is worse). */
static int finish_signature(scan_state *s, const char *model, int status)
{
    if (s->sig == NULL) {
        return status;
    }
    (void)stg_signature_finish(s->sig);
    switch (s->cfg->format) {
    case OUT_TEXT: cli_text_signature(stdout, s->sig, model); break;
    case OUT_JSON:
        fprintf(stdout, "{\"type\":\"signature\",\"schema\":%d,\"path\":", CLI_JSON_SCHEMA);
        cli_json_string(stdout, model, strlen(model));
        fputs(",\"signature\":{", stdout);
        cli_json_signature_fields(stdout, s->sig, model);
        fputs("}}\n", stdout);
        break;
    case OUT_SARIF: cli_sarif_signature(s->sarif, s->sig, model); break;
    }
    return !stg_signature_verified(s->sig) && status == 0 ? EXIT_FAIL : status;
}

static int cmd_scan(int argc, char **argv, cli_config *c)
{
    /* From the start: a signal before the walk begins stops it before any file (valid output). */
    install_signal_handlers();
    int rc = parse_options(argc, argv, c, false);
    if (rc != 0) {
        return rc < 0 ? 0 : rc;
    }
    cli_list listed, checks;
    memset(&listed, 0, sizeof listed);
    memset(&checks, 0, sizeof checks);
    if (c->files_from != NULL && (rc = read_list(c->files_from, c->null_separated, &listed)) != 0) {
        return rc;
    }
    if (c->check != NULL && (rc = read_list(c->check, c->null_separated, &checks)) != 0) {
        free_list(&listed);
        return rc;
    }
    size_t nargs = (size_t)(argc - optind);
    size_t npaths = nargs + listed.count;
    const char **paths = calloc(npaths + 1, sizeof *paths);
    if (paths == NULL) {
        free_list(&listed);
        free_list(&checks);
        return usage_error("out of memory");
    }
    for (size_t i = 0; i < nargs; i++) {
        paths[i] = argv[optind + (int)i];
    }
    for (size_t i = 0; i < listed.count; i++) {
        paths[nargs + i] = listed.items[i];
    }
    rc = 0;
    size_t stdin_count = 0;
    stg_signature *sig = NULL; /* --signature: read and checked before the walk */
    for (size_t i = 0; i < npaths; i++) {
        stdin_count += strcmp(paths[i], "-") == 0;
    }
    bool list_on_stdin = (c->files_from != NULL && strcmp(c->files_from, "-") == 0) ||
                         (c->check != NULL && strcmp(c->check, "-") == 0);
    if (c->check != NULL && (npaths > 0 || c->expected != NULL)) {
        rc = usage_error("--check takes its paths and digests from its list: no PATH, no "
                         "--sha256, no --files-from");
    } else if (c->check == NULL && npaths == 0) {
        rc = usage_error("scan needs at least one PATH (- for standard input)");
    } else if (stdin_count > 1 || (stdin_count > 0 && list_on_stdin)) {
        rc = usage_error("standard input (-) can be read once");
    } else if (c->expected != NULL && npaths != 1) {
        rc = usage_error("--sha256 names the digest of one file: give exactly one PATH");
    } else if (c->sig.requested) {
        rc = signature_scan_args(c, npaths, stdin_count, paths[0], &sig);
    }
    if (rc == 0) {
        rc = redirect_output(c->output);
    }
    if (rc != 0) {
        stg_signature_free(sig);
        free(paths);
        free_list(&listed);
        free_list(&checks);
        return rc;
    }
    scan_state s;
    memset(&s, 0, sizeof s);
    s.cfg = c;
    s.sig = sig;
    /* auto: a terminal, and not --quiet (which asks for the files that matter only) */
    s.progress_enabled = c->progress > 0 ||
                         (c->progress == 0 && !c->quiet && isatty(STDERR_FILENO));
    s.start = now_seconds();
    if (c->format == OUT_SARIF) {
        s.sarif = cli_sarif_begin(stdout, c->sarif_info);
        if (s.sarif == NULL) {
            stg_signature_free(sig);
            free(paths);
            free_list(&listed);
            free_list(&checks);
            fputs("stguard: out of memory\n", stderr);
            return EXIT_ERROR;
        }
    }
    /* The output file, when stdout is one, is never scanned (scan . > out.sarif). */
    struct stat out_st;
    if (fstat(STDOUT_FILENO, &out_st) == 0 && S_ISREG(out_st.st_mode)) {
        c->walk.skip_file = true;
        c->walk.skip_dev = (uint64_t)out_st.st_dev;
        c->walk.skip_ino = (uint64_t)out_st.st_ino;
    }
    c->walk.cancel = &interrupt_signal;
    c->walk.on_progress = s.progress_enabled ? on_progress : NULL; /* NULL: one file, no thread */
    stg_status st = STG_OK;
    bool interrupted = false;
    size_t bad_lines = 0;
    if (c->check != NULL) {
        st = run_check_list(&s, c, &checks, &interrupted, &bad_lines);
    } else {
        st = run_walk(&s, paths, npaths, &c->walk, &interrupted);
    }
    s.sum.seconds = now_seconds() - s.start;
    /* A signal after the last read still counts: the caller asked to stop, and is told. */
    interrupted = interrupted || interrupt_signal != 0;
    s.sum.interrupted_signal = interrupted ? interrupt_signal : 0;
    if (st == STG_E_BAD_ARG && s.sum.files == 0) {
        if (s.sarif != NULL) {
            cli_sarif_discard(s.sarif);
        }
        stg_signature_free(s.sig);
        free(paths);
        free_list(&listed);
        free_list(&checks);
        if (c->expected != NULL) {
            return usage_error("--sha256 names the digest of one file, but the path holds "
                               "more than one");
        }
        return usage_error("invalid arguments");
    }
    int status = finish_signature(&s, paths[0], exit_status(c, &s.sum));
    if (st != STG_OK) {
        fprintf(stderr, "stguard: the scan stopped: %s\n", stg_status_name(st));
        status = EXIT_ERROR;
    } else if (s.distinct_scanned == 0 && s.sum.verdicts[STG_VERDICT_ERROR] == 0 && !interrupted &&
               status == 0) {
        /* An empty folder or an --include that matches nothing proves nothing: a gate must not
         * read it as a pass. */
        fputs("stguard: no file was checked (the paths hold no regular file that the filters "
              "select)\n",
              stderr);
        status = EXIT_NOTHING;
    }
    if (bad_lines > 0 && status != EXIT_ERROR) {
        status = EXIT_USAGE; /* a --check line that is no sha256sum line: the list is wrong */
    }
    if (interrupted) {
        status = 128 + s.sum.interrupted_signal;
    }
    switch (c->format) {
    case OUT_TEXT: cli_text_summary(stdout, &s.sum); break;
    case OUT_JSON: cli_json_summary(stdout, &s.sum); break;
    case OUT_SARIF: cli_sarif_end(s.sarif, &s.sum, status); break;
    }
    stg_signature_free(s.sig);
    free(paths);
    free_list(&listed);
    free_list(&checks);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_ERROR;
    }
    return status;
}

/* ------------------------------------------------------------------------------ inspect */

static int print_failed_open(const cli_config *c, const char *path, stg_report *rep)
{
    if (c->format == OUT_JSON) {
        cli_json_record(stdout, rep, path);
    } else {
        cli_text_record(stdout, rep, path, true);
    }
    return stg_report_verdict(rep) == STG_VERDICT_ERROR ? EXIT_ERROR : EXIT_FAIL;
}

static int inspect_onnx(const cli_config *c, const char *path);
static int inspect_flax(const cli_config *c, const char *path);
static int inspect_summary(const cli_config *c, const char *path);

/* A file that is not safetensors: an ONNX model or a Flax checkpoint (by the scan's label) is
 * inspected as one; else say
 * what it is and where to look instead. */
static int not_safetensors(const cli_config *c, const char *path, stg_report **rep)
{
    stg_report *r = NULL;
    stg_scan_options so = c->walk.scan;
    so.digest = false;
    if (stg_scan_path(path, &so, &r) != STG_OK || r == NULL) {
        return -1;
    }
    stg_format fmt = stg_report_format(r);
    if (fmt == STG_FMT_SAFETENSORS || stg_report_verdict(r) == STG_VERDICT_ERROR) {
        stg_report_free(r);
        return -1;
    }
    stg_report_free(*rep);
    *rep = NULL;
    if (fmt == STG_FMT_ONNX) {
        stg_report_free(r);
        if (c->tensor_sha256) {
            return usage_error("--tensor-sha256 takes a safetensors file, not ONNX");
        }
        return inspect_onnx(c, path);
    }
    if (fmt == STG_FMT_FLAX_MSGPACK) {
        stg_report_free(r);
        if (c->tensor_sha256) {
            return usage_error("--tensor-sha256 takes a safetensors file, not a Flax checkpoint");
        }
        return inspect_flax(c, path);
    }
    int shown = inspect_summary(c, path); /* Keras, SavedModel, templates, auto_map */
    if (shown >= 0) {
        stg_report_free(r);
        return shown;
    }
    say_path("", path, "");
    fprintf(stderr,
            "stguard: this is a %s file, not safetensors: inspect shows safetensors, GGUF, ONNX "
            "and Flax files, sharded models, and what Keras models, SavedModels, chat templates "
            "and auto_map entries a file holds; use `stguard scan` to check it\n",
            stg_format_name(fmt));
    stg_report_free(r);
    return 1;
}

/* Shard names in file order (by their bytes, as model-00001-of-00003... sort) and the tensor
 * rows shard by shard in that order, data order inside each. */
static const char *const *sort_shard_names;

static int cmp_shard_rank(const void *a, const void *b)
{
    return strcmp(sort_shard_names[*(const uint32_t *)a], sort_shard_names[*(const uint32_t *)b]);
}

static int cmp_tensor_rows(const void *pa, const void *pb)
{
    const cli_inspect_tensor *a = pa, *b = pb;
    if (a->shard != b->shard) {
        return a->shard < b->shard ? -1 : 1;
    }
    return a->tensor->begin < b->tensor->begin ? -1 : (a->tensor->begin > b->tensor->begin);
}

static bool number_shards(const stg_model *m, cli_inspect_tensor *tensors, size_t nt,
                          const char **shards, size_t ns)
{
    uint32_t *order = calloc(ns + 1, sizeof *order), *rank = calloc(ns + 1, sizeof *rank);
    const char **names = calloc(ns + 1, sizeof *names);
    bool ok = order != NULL && rank != NULL && names != NULL;
    for (size_t i = 0; ok && i < ns; i++) {
        names[i] = stg_model_shard_name(m, i);
        order[i] = (uint32_t)i;
    }
    if (ok) {
        sort_shard_names = names;
        qsort(order, ns, sizeof *order, cmp_shard_rank);
        for (size_t k = 0; k < ns; k++) {
            rank[order[k]] = (uint32_t)k;
            shards[k] = names[order[k]];
        }
        for (size_t i = 0; i < nt; i++) {
            uint32_t sh = tensors[i].tensor->shard;
            tensors[i].shard = sh < ns ? rank[sh] : sh;
        }
        qsort(tensors, nt, sizeof *tensors, cmp_tensor_rows);
    }
    free(order);
    free(rank);
    free(names);
    return ok;
}

/* An index file or a model folder: the sharded view of stg_model_open. */
static int inspect_model(const cli_config *c, const char *path)
{
    stg_model *m = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_model_open(path, &c->walk.scan.limits, &m, &rep);
    if (m == NULL) {
        int status = EXIT_ERROR;
        if (rep != NULL) {
            status = print_failed_open(c, path, rep);
        } else {
            say_path("cannot open the model ", path, "");
            fprintf(stderr, "stguard: status %s\n", stg_status_name(st));
        }
        stg_report_free(rep);
        return status;
    }
    size_t nt = stg_model_tensor_count(m), ns = stg_model_shard_count(m);
    cli_inspect_tensor *tensors = calloc(nt + 1, sizeof *tensors);
    const char **shards = calloc(ns + 1, sizeof *shards);
    int status = 0;
    if (tensors == NULL || shards == NULL) {
        fputs("stguard: out of memory\n", stderr);
        status = EXIT_ERROR;
    } else {
        for (size_t i = 0; i < nt; i++) {
            tensors[i].tensor = stg_model_tensor_at(m, i);
        }
        if (!number_shards(m, tensors, nt, shards, ns)) {
            fputs("stguard: out of memory\n", stderr);
            status = EXIT_ERROR;
        }
    }
    if (status == 0) {
        cli_inspect in = {
            .path = path,
            .tensor_count = nt,
            .tensors = tensors,
            .model = true,
            .shard_count = ns,
            .shards = shards,
        };
        if (c->format == OUT_JSON) {
            cli_json_inspect(stdout, &in);
        } else {
            cli_text_inspect(stdout, &in);
        }
    }
    free(tensors);
    free(shards);
    stg_model_close(m);
    stg_report_free(rep);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_ERROR;
    }
    return status;
}

/* A door (stg_gguf_open, stg_onnx_open) refused the file: its report, or why there is none. */
static int door_refused(const cli_config *c, const char *path, stg_report *rep, stg_status st)
{
    int status = EXIT_ERROR;
    if (rep != NULL) {
        status = print_failed_open(c, path, rep);
    } else {
        say_path("cannot open ", path, "");
        fprintf(stderr, "stguard: status %s\n", stg_status_name(st));
    }
    stg_report_free(rep);
    return status;
}

/* The findings of a file a door opened (warnings, notes), after its text view. */
static void print_notes(const stg_report *rep)
{
    for (size_t i = 0; rep != NULL && i < stg_report_count(rep); i++) {
        const stg_finding *fd = stg_report_at(rep, i);
        fprintf(stdout, "  note: %s: ", stg_code_name(fd->code));
        cli_text_escape(stdout, fd->message, strlen(fd->message), false);
        fputc('\n', stdout);
    }
}

/* A GGUF file: its validated header through stg_gguf_open. */
static int inspect_gguf(const cli_config *c, const char *path)
{
    stg_gguf *g = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_gguf_open(path, &c->walk.scan.limits, &g, &rep);
    if (g == NULL) {
        return door_refused(c, path, rep, st);
    }
    /* The chat templates it holds, as the summary door gives them (the scan's template rules):
     * the GGUF door validates the container, not what a loader renders. */
    stg_summary *templates = NULL;
    (void)stg_summary_open(path, &c->walk.scan.limits, &templates, NULL);
    if (c->format == OUT_JSON) {
        cli_json_inspect_gguf(stdout, path, g, templates);
    } else {
        cli_text_inspect_gguf(stdout, path, g);
        if (templates != NULL) {
            cli_text_summary_templates(stdout, templates);
        }
        print_notes(rep);
    }
    stg_summary_close(templates);
    stg_gguf_close(g);
    stg_report_free(rep);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_ERROR;
    }
    return 0;
}

/* An ONNX model (by its name, or by what a scan calls it): its validated ModelProto through
 * stg_onnx_open. */
static int inspect_onnx(const cli_config *c, const char *path)
{
    stg_onnx *m = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_onnx_open(path, &c->walk.scan.limits, &m, &rep);
    if (m == NULL) {
        return door_refused(c, path, rep, st);
    }
    if (c->format == OUT_JSON) {
        cli_json_inspect_onnx(stdout, path, m);
    } else {
        cli_text_inspect_onnx(stdout, path, m);
        print_notes(rep);
    }
    stg_onnx_close(m);
    stg_report_free(rep);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_ERROR;
    }
    return 0;
}

/* A Flax checkpoint: its array leaves through stg_flax_open. */
static int inspect_flax(const cli_config *c, const char *path)
{
    stg_flax *f = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_flax_open(path, &c->walk.scan.limits, &f, &rep);
    if (f == NULL) {
        return door_refused(c, path, rep, st);
    }
    if (c->format == OUT_JSON) {
        cli_json_inspect_flax(stdout, path, f);
    } else {
        cli_text_inspect_flax(stdout, path, f);
        print_notes(rep);
    }
    stg_flax_close(f);
    stg_report_free(rep);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_ERROR;
    }
    return 0;
}

/* Any other format (the summary door, stg_summary_open): what the rules met in it, whatever
 * its verdict (showing an unsafe file's Lambda layer is the point). -1 when the file holds none
 * of what the door reports (the caller then says what the file is); else the exit status: 0
 * for ok and warn, EXIT_FAIL for invalid and unsafe, EXIT_ERROR when it could not be read. */
static int inspect_summary(const cli_config *c, const char *path)
{
    stg_summary *s = NULL;
    stg_report *rep = NULL;
    stg_status st = stg_summary_open(path, &c->walk.scan.limits, &s, &rep);
    if (s == NULL) {
        return door_refused(c, path, rep, st);
    }
    if (stg_summary_count(s) == 0) {
        stg_summary_close(s);
        stg_report_free(rep);
        return -1;
    }
    if (c->tensor_sha256) {
        const char *fmt = stg_format_name(stg_report_format(rep)); /* a constant string */
        stg_summary_close(s);
        stg_report_free(rep);
        return usage_error("--tensor-sha256 takes a safetensors file, not %s", fmt);
    }
    if (c->format == OUT_JSON) {
        cli_json_inspect_summary(stdout, path, rep, s);
    } else {
        cli_text_inspect_summary(stdout, path, rep, s);
        print_notes(rep);
    }
    stg_verdict v = stg_report_verdict(rep);
    stg_summary_close(s);
    stg_report_free(rep);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_ERROR;
    }
    return v >= STG_VERDICT_INVALID ? EXIT_FAIL : 0;
}

/* A Hugging Face repo folder (models--ORG--NAME: refs/main names the snapshot scan reads) or a
 * hub cache holding exactly one repo folder: *out becomes the snapshot folder refs/main names
 * (malloc'd). false when path is neither, or refs/main names no snapshot folder; *repos counts
 * the repo folders of a hub cache (more than one: inspect cannot choose). */
static bool hf_snapshot(const char *path, int depth, char **out, size_t *repos)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/refs/main", path);
    FILE *f = fopen(buf, "rb");
    if (f != NULL) {
        char ref[128];
        size_t n = fread(ref, 1, sizeof ref - 1, f);
        fclose(f);
        while (n > 0 && (ref[n - 1] == '\n' || ref[n - 1] == '\r')) {
            n--;
        }
        ref[n] = '\0';
        /* a commit hash: letters and digits only, so it names one folder in snapshots/ */
        bool word = n > 0;
        for (size_t i = 0; i < n; i++) {
            word = word && ((ref[i] >= '0' && ref[i] <= '9') || (ref[i] >= 'a' && ref[i] <= 'z') ||
                            (ref[i] >= 'A' && ref[i] <= 'Z'));
        }
        struct stat st;
        int len = snprintf(buf, sizeof buf, "%s/snapshots/%s", path, ref);
        if (!word || len < 0 || (size_t)len >= sizeof buf || stat(buf, &st) != 0 ||
            !S_ISDIR(st.st_mode)) {
            return false;
        }
        *out = strdup(buf);
        return *out != NULL;
    }
    if (depth > 0) {
        return false;
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        return false;
    }
    char *only = NULL;
    *repos = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, "models--", 8) == 0 || strncmp(e->d_name, "datasets--", 10) == 0 ||
            strncmp(e->d_name, "spaces--", 8) == 0) {
            ++*repos;
            free(only);
            only = NULL;
            snprintf(buf, sizeof buf, "%s/%s", path, e->d_name);
            only = *repos == 1 ? strdup(buf) : NULL;
        }
    }
    closedir(d);
    size_t inner = 0;
    bool found = only != NULL && hf_snapshot(only, depth + 1, out, &inner);
    free(only);
    return found;
}

static int cmd_inspect_path(const char *path, cli_config *c);

static int cmd_inspect(int argc, char **argv, cli_config *c)
{
    int rc = parse_options(argc, argv, c, true);
    if (rc != 0) {
        return rc < 0 ? 0 : rc;
    }
    if (argc - optind != 1) {
        return usage_error("inspect takes exactly one FILE");
    }
    if ((rc = redirect_output(c->output)) != 0) {
        return rc;
    }
    struct stat dir_st;
    char *snapshot = NULL;
    size_t repos = 0;
    bool folder = stat(argv[optind], &dir_st) == 0 && S_ISDIR(dir_st.st_mode);
    if (folder && hf_snapshot(argv[optind], 0, &snapshot, &repos)) {
        rc = cmd_inspect_path(snapshot,
                              c); /* what scan reads of it: the snapshot refs/main names */
        free(snapshot);
        return rc;
    }
    if (folder && repos > 1) {
        return usage_error("inspect shows one model: this hub cache holds several repos; name "
                           "one repo folder (models--ORG--NAME)");
    }
    return cmd_inspect_path(argv[optind], c);
}

static int cmd_inspect_path(const char *path, cli_config *c)
{
    /* Only regular files: a FIFO or device must not be opened (it could block or never end). */
    struct stat st;
    /* Which door opens a regular file is the library's to say (its format table). */
    stg_door door = STG_DOOR_SAFETENSORS;
    bool regular = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (regular) {
        (void)stg_door_of(path, &door); /* unreadable: the door its name says reports why */
    }
    if ((regular && door == STG_DOOR_MODEL) || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        if (c->tensor_sha256) {
            return usage_error("--tensor-sha256 takes one safetensors file, not a model");
        }
        return inspect_model(c, path);
    }
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        stg_report *r = NULL;
        stg_scan_options so = c->walk.scan;
        so.digest = false;
        if (stg_scan_path(path, &so, &r) != STG_OK) {
            say_path("cannot inspect ", path, "");
            return EXIT_ERROR;
        }
        int status = print_failed_open(c, path, r);
        stg_report_free(r);
        return status == EXIT_FAIL ? EXIT_ERROR : status;
    }
    if (door == STG_DOOR_GGUF) {
        if (c->tensor_sha256) {
            return usage_error("--tensor-sha256 takes a safetensors file, not GGUF");
        }
        return inspect_gguf(c, path);
    }
    if (door == STG_DOOR_ONNX) {
        if (c->tensor_sha256) {
            return usage_error("--tensor-sha256 takes a safetensors file, not ONNX");
        }
        return inspect_onnx(c, path);
    }
    stg_file *f = NULL;
    stg_report *rep = NULL;
    stg_status st_open = stg_file_open(path, &c->walk.scan.limits, &f, &rep);
    if (f == NULL) {
        int status = EXIT_ERROR;
        int other = rep != NULL ? not_safetensors(c, path, &rep) : -1;
        if (other >= 0) {
            status = other;
        } else if (rep != NULL) {
            status = print_failed_open(c, path, rep);
        } else {
            say_path("cannot open ", path, "");
            fprintf(stderr, "stguard: status %s\n", stg_status_name(st_open));
        }
        stg_report_free(rep);
        return status;
    }
    size_t nt = stg_file_tensor_count(f), nm = stg_file_metadata_count(f);
    cli_inspect_tensor *tensors = calloc(nt + 1, sizeof *tensors);
    const char **keys = calloc(nm + 1, sizeof *keys);
    const char **values = calloc(nm + 1, sizeof *values);
    size_t *key_lens = calloc(nm + 1, sizeof *key_lens);
    size_t *value_lens = calloc(nm + 1, sizeof *value_lens);
    int status = 0;
    if (tensors == NULL || keys == NULL || values == NULL || key_lens == NULL ||
        value_lens == NULL) {
        fputs("stguard: out of memory\n", stderr);
        status = EXIT_ERROR;
    }
    for (size_t i = 0; status == 0 && i < nm; i++) {
        if (stg_file_metadata_at(f, i, &keys[i], &key_lens[i], &values[i], &value_lens[i]) !=
            STG_OK) {
            keys[i] = values[i] = "";
            key_lens[i] = value_lens[i] = 0;
        }
    }
    for (size_t i = 0; status == 0 && i < nt; i++) {
        const stg_tensor *t = stg_file_tensor_at(f, i);
        tensors[i].tensor = t;
        if (!c->tensor_sha256) {
            continue;
        }
        uint64_t n64 = t->end - t->begin;
        size_t n = (size_t)n64;
        void *buf = n64 <= SIZE_MAX ? malloc(n == 0 ? 1 : n) : NULL;
        if (buf == NULL) {
            fputs("stguard: a tensor is too large to be read into memory\n", stderr);
            status = EXIT_ERROR;
            break;
        }
        stg_status rs = stg_file_read_tensor(f, t, buf, n);
        if (rs == STG_OK && stg_sha256_hex(buf, n, tensors[i].sha256) == STG_OK) {
            tensors[i].has_sha256 = true;
        } else if (rs == STG_FILE_CHANGED) {
            /* The finding's name a scan gives, so a script sees one vocabulary. */
            say_path("file_changed: ", path, " changed while it was read");
            status = EXIT_ERROR;
        } else {
            say_path("io_error: cannot read a tensor of ", path, "");
            status = EXIT_ERROR;
        }
        free(buf);
    }
    if (status == 0) {
        cli_inspect in = {
            .path = path,
            .header_length = stg_file_header_length(f),
            .data_start = stg_file_data_start(f),
            .metadata_count = nm,
            .meta_keys = keys,
            .meta_key_lens = key_lens,
            .meta_values = values,
            .meta_value_lens = value_lens,
            .tensor_count = nt,
            .tensors = tensors,
        };
        if (c->format == OUT_JSON) {
            cli_json_inspect(stdout, &in);
        } else {
            cli_text_inspect(stdout, &in);
            for (size_t i = 0; rep != NULL && i < stg_report_count(rep); i++) {
                const stg_finding *fd = stg_report_at(rep, i);
                fprintf(stdout, "  note: %s: ", stg_code_name(fd->code));
                cli_text_escape(stdout, fd->message, strlen(fd->message), false);
                fputc('\n', stdout);
            }
        }
    }
    free(tensors);
    free(keys);
    free(values);
    free(key_lens);
    free(value_lens);
    stg_file_close(f);
    stg_report_free(rep);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return EXIT_ERROR;
    }
    return status;
}

/* ------------------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("stguard %s\npolicy %s\n", stg_version(), stg_policy_version());
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    cli_config c;
    memset(&c, 0, sizeof c);
    c.fail_on = STG_VERDICT_INVALID;
    stg_tree_options_default(&c.walk);
    c.walk.stdin_fd = STDIN_FILENO;
    if (strcmp(cmd, "convert") == 0) {
        return cli_convert(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "verify") == 0) {
        return cli_verify(argc - 1, argv + 1);
    }
    int status;
    struct stat path_st;
    if (strcmp(cmd, "scan") == 0) {
        status = cmd_scan(argc - 1, argv + 1, &c);
    } else if (strcmp(cmd, "inspect") == 0) {
        status = cmd_inspect(argc - 1, argv + 1, &c);
    } else if (cmd[0] != '-' && lstat(cmd, &path_st) == 0) {
        /* `stguard PATH ...` is `stguard scan PATH ...`: the first argument names something
         * that exists and is no command (a file named scan or inspect needs ./scan). */
        status = cmd_scan(argc, argv, &c);
    } else {
        status = usage_error("unknown command '%s' (scan, inspect, verify, convert, --version, "
                             "--help)",
                             cmd);
    }
    stg_policy_free(c.policy);
    free(c.include);
    free(c.exclude);
    free(c.expected);
    cli_sig_free(&c.sig);
    return status;
}
