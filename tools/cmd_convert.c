/* `stguard convert INPUT OUTPUT`: a client of stg_convert (docs/convert.md, docs/cli.md). It
 * prints the report's findings to stderr, the output's digest with --sha256, and exits 0
 * (converted), 1 (refused: nothing written) or 2 (error: usage, I/O). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char convert_usage[] =
    "usage: stguard convert INPUT OUTPUT [--select KEY] [--force] [--drop-aliases]\n"
    "                       [--strict-leaves] [--sha256] [--max-output N] [limits]\n"
    "\n"
    "Converts a PyTorch checkpoint (torch.save zip, or the legacy format) or a NumPy\n"
    ".npy / .npz to safetensors without running its pickle: the file is scanned first (a\n"
    "file the scan calls invalid or unsafe is never converted), the pickle is read by a\n"
    "restricted evaluator that rebuilds only tensors, storages, dicts, lists and scalars,\n"
    "and the output is validated by the strict validator before it is renamed into place.\n"
    "\n"
    "  --select KEY      convert the dict under KEY of a checkpoint dict (state_dict, model)\n"
    "  --force           replace an existing OUTPUT\n"
    "  --drop-aliases    leave out tensors that exactly alias another (named in __metadata__)\n"
    "  --strict-leaves   refuse when the mapping holds values that are not tensors\n"
    "                    (default: they are reported and left out)\n"
    "  --sha256          print the output's SHA-256\n"
    "  --max-output N    most bytes of output (header and data; default: no bound)\n"
    "  --profile strict|compat, --max-memory N, --max-findings N, --limit NAME=VALUE\n"
    "                    the limits of the scan that runs first, as for stguard scan\n"
    "                    (the output is always checked by the strict validator)\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 converted, 1 refused (nothing written), 2 usage error, 3 the input could\n"
    "not be read or the output not written (nothing written).\n"
    "manual: man stguard; convert.md in share/doc/stguard/\n";

/* A byte count: decimal digits only, no sign, no suffix. */
static bool parse_count(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9') {
        return false;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* Bytes of a name from the file, printable ASCII as is and the rest as \xNN. */
static void put_escaped(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
            fputc(c, f);
        } else {
            fprintf(f, "\\x%02x", c);
        }
    }
}

/* Why a conversion did not happen, for a person (the status name follows for scripts). */
static const char *convert_failure(stg_status st)
{
    if (st == STG_E_IO) {
        return "the input could not be read or the output not written (see above)";
    }
    if (st == STG_E_NOMEM) {
        return "out of memory";
    }
    if (st == STG_E_BAD_ARG) {
        return "the options or paths are not usable";
    }
    if (st == STG_E_LIMIT || st == STG_E_LIMIT_MEMORY || st == STG_E_LIMIT_DEPTH ||
        st == STG_E_LIMIT_TENSORS) {
        return "a limit was reached (see above)";
    }
    return "the conversion stopped";
}

static void print_findings(const stg_report *r)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->severity == STG_SEV_INFO && f->code != STG_CONVERT_ALIAS_DROPPED) {
            continue; /* the scan's pickle_file note and the like */
        }
        fprintf(stderr, "stguard convert: %s %s", stg_severity_name(f->severity),
                stg_code_name(f->code));
        if (f->has_offset) {
            fprintf(stderr, " @%llu", (unsigned long long)f->offset);
        }
        if (f->member != NULL) {
            fputs(" in ", stderr);
            put_escaped(stderr, f->member, strlen(f->member));
        }
        if (f->tensor != NULL) {
            fputs(" (tensor \"", stderr);
            put_escaped(stderr, f->tensor, f->tensor_len);
            fputs("\")", stderr);
        }
        if (f->module != NULL) {
            fputs(" (global ", stderr);
            put_escaped(stderr, f->module, f->module_len);
            fputc('.', stderr);
            put_escaped(stderr, f->name != NULL ? f->name : "", f->name_len);
            fputc(')', stderr);
        }
        if (f->limit != NULL) {
            fprintf(stderr, " [limit %s]", f->limit);
        }
        fprintf(stderr, ": %s\n", f->message);
    }
}

int cli_convert(int argc, char **argv)
{
    static const struct option longopts[] = {{"select", required_argument, NULL, 's'},
                                             {"force", no_argument, NULL, 'f'},
                                             {"drop-aliases", no_argument, NULL, 'a'},
                                             {"strict-leaves", no_argument, NULL, 'l'},
                                             {"sha256", no_argument, NULL, 'd'},
                                             {"max-output", required_argument, NULL, 'o'},
                                             {"profile", required_argument, NULL, 'p'},
                                             {"max-memory", required_argument, NULL, 'm'},
                                             {"max-findings", required_argument, NULL, 'n'},
                                             {"limit", required_argument, NULL, 'L'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    stg_convert_options o;
    stg_convert_options_default(&o);
    optind = 1;
    int ch, rc = 0;
    while (rc == 0 && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 's': o.select = optarg; break;
        case 'f': o.force = true; break;
        case 'a': o.drop_aliases = true; break;
        case 'l': o.strict_leaves = true; break;
        case 'd': o.sha256 = true; break;
        case 'o':
            if (!parse_count(optarg, &o.max_output) || o.max_output == 0) {
                fprintf(stderr, "stguard convert: --max-output expects a byte count above 0\n");
                rc = 2;
            }
            break;
        case 'p': rc = cli_set_limit(&o.scan.limits, "profile", optarg, "--profile"); break;
        case 'm': rc = cli_set_limit(&o.scan.limits, "max_memory", optarg, "--max-memory"); break;
        case 'n':
            rc = cli_set_limit(&o.scan.limits, "max_findings", optarg, "--max-findings");
            break;
        case 'L': rc = cli_set_limit_pair(&o.scan.limits, optarg); break;
        case 'h': fputs(convert_usage, stdout); return 0;
        default: fputs(convert_usage, stderr); return 2;
        }
    }
    if (rc != 0) {
        return rc;
    }
    if (argc - optind != 2) {
        fputs("stguard convert: takes exactly INPUT and OUTPUT\n", stderr);
        fputs(convert_usage, stderr);
        return 2;
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    stg_report *r = NULL;
    stg_status st = stg_convert(in, out, &o, &r);
    if (r != NULL) {
        print_findings(r);
    }
    int status = 3;
    if (st == STG_OK) {
        if (o.sha256 && stg_report_sha256(r) != NULL) {
            printf("%s  ", stg_report_sha256(r));
            put_escaped(stdout, out, strlen(out));
            fputc('\n', stdout);
        }
        status = 0;
    } else if (st == STG_E_INVALID) {
        fputs("stguard convert: refused: nothing was written\n", stderr);
        status = 1;
    } else {
        status = st == STG_E_BAD_ARG ? 2 : 3;
        fprintf(stderr, "stguard convert: not converted: %s; nothing was written (%s)\n",
                convert_failure(st), stg_status_name(st));
    }
    stg_report_free(r);
    return status;
}
