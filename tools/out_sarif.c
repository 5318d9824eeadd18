/* SARIF 2.1.0 output for code-scanning dashboards (GitHub code scanning among them): one run;
 * one result per finding (ruleId = the finding's code, level from its severity, a region with
 * startLine 1 and the byte offset and length, a partial fingerprint stable across runs); one
 * artifact per scanned file (length, SHA-256); the rules array lists the codes used, in order of first use,
 * so ruleIndex can be given while results are streamed, each with its help text and a
 * security-severity fixed per code (its default severity, validator/codes.def), never by what
 * else the run found. Info findings are left out unless asked for (--sarif-info): a file that
 * passes raises no alert. Paths below the working directory are relative to the base
 * %SRCROOT%; others are absolute file:// URIs of their real path. */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct sarif_artifact {
    char *uri;     /* percent-encoded */
    bool relative; /* relative to %SRCROOT% */
    uint64_t size;
    char sha256[65]; /* "" when not computed */
    char *blob;      /* resolved link target, NULL */
} sarif_artifact;

struct cli_sarif {
    FILE *out;
    size_t results;
    int rule_index[STG_CODE_MAX + 1]; /* -1: not used yet */
    stg_code rules[STG_CODE_MAX + 1];
    size_t rule_count;
    bool opened;
    bool include_info; /* info findings become note results too */
    char *srcroot;     /* real path of the working directory, with a trailing '/' */
    sarif_artifact *artifacts;
    size_t artifact_count, artifact_cap;
};

/* What a finding of each family means and what to do; the code's own description precedes it. */
const char *cli_code_remedy(stg_code code)
{
    const char *n = stg_code_name(code);
    if (n == NULL) {
        return "Review the file before anything loads it.";
    }
    if (strncmp(n, "signature_", 10) == 0 || strncmp(n, "signed_file_", 12) == 0) {
        return "The model is not shown to be the one its publisher signed: a file changed, was "
               "added or removed, or the signature does not verify with the key or certificates "
               "given. Do not load it until `stguard verify` says verified with the publisher's "
               "own trust material (docs/signing.md).";
    }
    if (strncmp(n, "pickle_", 7) == 0) {
        return "A pickle-based loader (torch.load with weights_only=False, pickle.load, "
               "joblib.load, numpy.load with allow_pickle=True) runs whatever this pickle asks "
               "for. Do not load the file from an untrusted source; prefer a safetensors copy of "
               "the weights. A global that is known to be safe where the file is used can be "
               "allowed with --allow-global MODULE:NAME or a --policy file.";
    }
    if (strncmp(n, "polyglot_", 9) == 0) {
        return "The file reads as one format to one loader and as another to a second loader, "
               "so what was checked need not be what is loaded. Do not publish or load it; "
               "write the model again with a single writer.";
    }
    if (strncmp(n, "zip_", 4) == 0 || strncmp(n, "container_", 10) == 0 ||
        strncmp(n, "tar_", 4) == 0) {
        return "An archive or compressed stream in the file is malformed, ambiguous or over the "
               "decompression caps: loaders may see other members than the ones checked, or "
               "exhaust memory. Do not load it; create the archive again with a standard tool.";
    }
    if (strncmp(n, "index_", 6) == 0) {
        return "The sharded model's index and its shards disagree, or a shard name leaves the "
               "model folder: a loader may load other tensors than the index lists, or read a "
               "file outside the model. Write the index again with the tool that wrote the "
               "shards.";
    }
    if (strncmp(n, "format_", 7) == 0) {
        return "stguard could not establish what this file is or could not open it, so it was "
               "not checked completely. Review the file before anything loads it.";
    }
    if (strncmp(n, "gguf_", 5) == 0) {
        return "The GGUF file does not follow the GGUF format, or its header describes its data "
               "inaccurately: loaders that trust the header (llama.cpp, ggml, Ollama) can read "
               "out of bounds or refuse it. Do not load it; convert the model again with a "
               "current writer (gguf-py, llama.cpp's convert scripts).";
    }
    if (strncmp(n, "onnx_", 5) == 0) {
        return "The ONNX model is malformed, points its tensor data outside its folder, or "
               "needs operators from a custom domain (native code the runtime loads). Do not "
               "load it from an untrusted source; keep external data files beside the model, "
               "with relative names.";
    }
    if (strcmp(n, "limit_exceeded") == 0 || strcmp(n, "findings_truncated") == 0) {
        return "A configured limit was reached, so the file was not checked completely. Raise "
               "the limit (--limit NAME=VALUE) only for files from trusted sources.";
    }
    if (strcmp(n, "digest_mismatch") == 0) {
        return "The content is not what its expected digest (an option, or the name of a Hugging "
               "Face blob) promises: it was altered or damaged. Download it again.";
    }
    if (strcmp(n, "symlink_skipped") == 0 || strcmp(n, "not_regular_file") == 0 ||
        strcmp(n, "file_changed") == 0 || strcmp(n, "io_error") == 0) {
        return "The file could not be checked as it is (unreadable, not a regular file, a link "
               "leaving the scanned folder, or changed while it was read). Scan it again once "
               "it is stable; never load what was not checked.";
    }
    return "The file does not follow its format (safetensors, or the format its content "
           "has), or its header describes its data inaccurately: readers that trust the header "
           "can read out of bounds, and different readers load different tensors. Do not load "
           "it; obtain it again from a trusted source or write it again with the format's "
           "reference writer (for safetensors: safetensors save_file).";
}

static const char *level_of(stg_severity s)
{
    switch (s) {
    case STG_SEV_INFO: return "note";
    case STG_SEV_WARNING: return "warning";
    case STG_SEV_ERROR:
    case STG_SEV_CRITICAL: return "error";
    }
    return "error";
}

/* GitHub's scale: 9.0 and up critical, 7.0 high, 4.0 medium, below low. */
static const char *security_severity(stg_severity s)
{
    switch (s) {
    case STG_SEV_INFO: return "1.0";
    case STG_SEV_WARNING: return "4.0";
    case STG_SEV_ERROR: return "7.0";
    case STG_SEV_CRITICAL: return "9.5";
    }
    return "7.0";
}

/* Appends s percent-encoded (unreserved bytes and '/' as they are) to a new string. */
static char *uri_encode(const char *prefix, const char *s)
{
    size_t pl = strlen(prefix), n = strlen(s);
    char *out = malloc(pl + 3 * n + 1);
    if (out == NULL) {
        return NULL;
    }
    memcpy(out, prefix, pl);
    size_t o = pl;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        unsigned char c = *p;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
        if (plain) {
            out[o++] = (char)c;
        } else {
            static const char hex[] = "0123456789ABCDEF";
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

/* A path given relative and without ".." stays as it is, below %SRCROOT%; any other path is
 * resolved (links included) and made relative when it lies below the working directory. */
static char *artifact_uri(const cli_sarif *s, const char *path, bool *relative)
{
    *relative = true;
    bool dotdot = strcmp(path, "..") == 0 || strncmp(path, "../", 3) == 0 ||
                  strstr(path, "/../") != NULL;
    if (path[0] != '/' && !dotdot) {
        return uri_encode("", strncmp(path, "./", 2) == 0 ? path + 2 : path);
    }
    char real[PATH_MAX];
    const char *p = realpath(path, real) != NULL ? real : path;
    size_t rl = s->srcroot != NULL ? strlen(s->srcroot) : 0;
    if (rl > 0 && strncmp(p, s->srcroot, rl) == 0 && p[rl] != '\0') {
        return uri_encode("", p + rl);
    }
    *relative = false;
    return uri_encode(p[0] == '/' ? "file://" : "", p);
}

cli_sarif *cli_sarif_begin(FILE *out, bool include_info)
{
    cli_sarif *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    s->out = out;
    s->include_info = include_info;
    for (size_t i = 0; i <= STG_CODE_MAX; i++) {
        s->rule_index[i] = -1;
    }
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd - 1) != NULL) {
        size_t n = strlen(cwd);
        s->srcroot = malloc(n + 2);
        if (s->srcroot != NULL) {
            memcpy(s->srcroot, cwd, n);
            s->srcroot[n] = '/';
            s->srcroot[n + 1] = '\0';
            if (n == 1) {
                s->srcroot[1] = '\0'; /* the root folder is "/" already */
            }
        }
    }
    return s;
}

/* The document opens with the first result (or at the end), so a run stopped by a usage error
 * prints nothing. */
static void open_document(cli_sarif *s)
{
    if (!s->opened) {
        fputs(
            "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\","
            "\"runs\":[{\"results\":[",
            s->out);
        s->opened = true;
    }
}

static void free_sarif(cli_sarif *s)
{
    for (size_t i = 0; i < s->artifact_count; i++) {
        free(s->artifacts[i].uri);
        free(s->artifacts[i].blob);
    }
    free(s->artifacts);
    free(s->srcroot);
    free(s);
}

void cli_sarif_discard(cli_sarif *s)
{
    free_sarif(s);
}

static int rule_for(cli_sarif *s, stg_code code)
{
    unsigned c = (unsigned)code;
    if (c > STG_CODE_MAX) {
        return -1;
    }
    if (s->rule_index[c] < 0) {
        s->rule_index[c] = (int)s->rule_count;
        s->rules[s->rule_count++] = code;
    }
    return s->rule_index[c];
}

/* message.text: the finding's message, then what it names as the text output writes it
 * (cli_text_finding_names): dashboards show the text, not the properties. Names are escaped
 * for display (control and bidirectional characters as escapes), then the whole as JSON. */
static void write_message(FILE *out, const stg_finding *f)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m == NULL) {
        cli_json_string(out, f->message, strlen(f->message));
        return;
    }
    fputs(f->message, m);
    cli_text_finding_names(m, f);
    if (fclose(m) == 0 && text != NULL) {
        cli_json_string(out, text, len);
    } else {
        cli_json_string(out, f->message, strlen(f->message));
    }
    free(text);
}

/* FNV-1a over the fields that identify a finding (code, file, member, place), so the same
 * finding in the same file gets the same fingerprint on every run. */
static uint64_t fnv_add(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return (h ^ 0xffu) * 0x100000001b3ull; /* a separator, so fields cannot run together */
}

static uint64_t fingerprint(const char *uri, const stg_finding *f)
{
    const char *name = stg_code_name(f->code);
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv_add(h, name != NULL ? name : "", name != NULL ? strlen(name) : 0);
    h = fnv_add(h, uri, strlen(uri));
    h = fnv_add(h, f->member != NULL ? f->member : "", f->member != NULL ? strlen(f->member) : 0);
    /* The offset as 8 little-endian bytes, so a big-endian host gives the same fingerprint. */
    uint64_t off = f->has_offset ? f->offset : UINT64_MAX;
    unsigned char off_le[8];
    for (size_t i = 0; i < sizeof off_le; i++) {
        off_le[i] = (unsigned char)(off >> (8 * i));
    }
    h = fnv_add(h, off_le, sizeof off_le);
    h = fnv_add(h, f->tensor != NULL ? f->tensor : "", f->tensor != NULL ? f->tensor_len : 0);
    h = fnv_add(h, f->module != NULL ? f->module : "", f->module != NULL ? strlen(f->module) : 0);
    return fnv_add(h, f->name != NULL ? f->name : "", f->name != NULL ? strlen(f->name) : 0);
}

static void write_location(FILE *out, const sarif_artifact *a, size_t index)
{
    fputs("{\"uri\":", out);
    cli_json_string(out, a->uri, strlen(a->uri));
    if (a->relative) {
        fputs(",\"uriBaseId\":\"%SRCROOT%\"", out);
    }
    fprintf(out, ",\"index\":%zu}", index);
}

void cli_sarif_record(cli_sarif *s, const stg_report *r)
{
    FILE *out = s->out;
    const char *path = stg_report_path(r) != NULL ? stg_report_path(r) : "-";
    const char *verdict = stg_verdict_name(stg_report_verdict(r));
    open_document(s);
    if (s->artifact_count == s->artifact_cap) {
        size_t ncap = s->artifact_cap == 0 ? 64 : s->artifact_cap * 2;
        sarif_artifact *na = realloc(s->artifacts, ncap * sizeof *na);
        if (na == NULL) {
            return; /* out of memory: the record's results are left out, the run says so */
        }
        s->artifacts = na;
        s->artifact_cap = ncap;
    }
    size_t ai = s->artifact_count;
    sarif_artifact *a = &s->artifacts[ai];
    memset(a, 0, sizeof *a);
    a->uri = artifact_uri(s, path, &a->relative);
    if (a->uri == NULL) {
        return;
    }
    a->size = stg_report_size(r);
    if (stg_report_sha256(r) != NULL) {
        memcpy(a->sha256, stg_report_sha256(r), 64);
    }
    if (stg_report_blob(r) != NULL) {
        a->blob = strdup(stg_report_blob(r));
    }
    s->artifact_count++;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
        if (f->severity == STG_SEV_INFO && !s->include_info) {
            continue;
        }
        if (s->results++ > 0) {
            fputc(',', out);
        }
        const char *name = stg_code_name(f->code);
        fputs("{\"ruleId\":", out);
        cli_json_string(out, name != NULL ? name : "unknown",
                        strlen(name != NULL ? name : "unknown"));
        int idx = rule_for(s, f->code);
        if (idx >= 0) {
            fprintf(out, ",\"ruleIndex\":%d", idx);
        }
        fprintf(out, ",\"level\":\"%s\",\"message\":{\"text\":", level_of(f->severity));
        write_message(out, f);
        fputs("},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":", out);
        write_location(out, a, ai);
        /* Binary files have no lines: line 1 with the byte offset. Inside an archive member
         * the offset is in the member's bytes: the region then points at the member's local
         * header, the inner offset goes to the properties. */
        fputs(",\"region\":{\"startLine\":1", out);
        /* A finding names one byte (it has no length): byteLength 1, not SARIF's default 0,
         * which would be a point between two bytes. */
        if (f->member != NULL && f->has_member_offset) {
            fprintf(out, ",\"byteOffset\":%" PRIu64 ",\"byteLength\":1", f->member_offset);
        } else if (f->member == NULL && f->has_offset) {
            fprintf(out, ",\"byteOffset\":%" PRIu64 ",\"byteLength\":1", f->offset);
        }
        fprintf(out, "}}}],\"partialFingerprints\":{\"stguardFinding/v1\":\"%016" PRIx64 "\"}",
                fingerprint(a->uri, f));
        fprintf(out, ",\"properties\":{\"severity\":\"%s\",\"verdict\":\"%s\"",
                stg_severity_name(f->severity), verdict);
        if (f->tensor != NULL) {
            fputs(",\"tensor\":", out);
            cli_json_string(out, f->tensor, f->tensor_len);
        }
        if (f->module != NULL && f->name != NULL) {
            fputs(",\"module\":", out);
            cli_json_string(out, f->module, f->module_len);
            fputs(",\"name\":", out);
            cli_json_string(out, f->name, f->name_len);
        }
        if (f->member != NULL) {
            fputs(",\"member\":", out);
            cli_json_string(out, f->member, strlen(f->member));
            if (f->has_offset) {
                fprintf(out, ",\"memberByteOffset\":%" PRIu64, f->offset);
            }
        }
        if (f->limit != NULL) {
            fputs(",\"limit\":", out);
            cli_json_string(out, f->limit, strlen(f->limit));
        }
        fputs("}}", out);
    }
}

/* A rule's level and security-severity come from its code's default severity (strict), so a
 * rule ranks the same in every run whatever else was found. */
static void write_rule(FILE *out, stg_code c)
{
    stg_severity sev = stg_code_severity(c, STG_PROFILE_STRICT);
    const char *name = stg_code_name(c);
    const char *desc = stg_code_description(c); /* the code table, validator/codes.def */
    if (desc == NULL) {
        desc = "Unknown finding code.";
    }
    const char *remedy = cli_code_remedy(c);
    fprintf(out, "{\"id\":\"%s\",\"name\":\"%s\",\"shortDescription\":{\"text\":", name, name);
    cli_json_string(out, desc, strlen(desc));
    fputs("},\"fullDescription\":{\"text\":", out);
    /* description, then what it means for the user */
    size_t dl = strlen(desc), rl = strlen(remedy);
    char *full = malloc(dl + rl + 2);
    if (full != NULL) {
        memcpy(full, desc, dl);
        full[dl] = ' ';
        memcpy(full + dl + 1, remedy, rl + 1);
        cli_json_string(out, full, dl + 1 + rl);
    } else {
        cli_json_string(out, desc, dl);
    }
    fputs("},\"help\":{\"text\":", out);
    cli_json_string(out, remedy, rl);
    fputs(",\"markdown\":", out);
    size_t nl = strlen(name);
    static const char more[] = "\n\nThe finding codes are described in findings.md (installed "
                               "under share/doc/stguard).";
    char *md = malloc(nl + dl + rl + sizeof more + 16);
    if (md != NULL) {
        int n = snprintf(md, nl + dl + rl + sizeof more + 16, "**%s**: %s\n\n%s%s", name, desc,
                         remedy, more);
        cli_json_string(out, md, n > 0 ? (size_t)n : 0);
    } else {
        cli_json_string(out, remedy, rl);
    }
    free(full);
    free(md);
    fprintf(out,
            "},\"defaultConfiguration\":{\"level\":\"%s\"},\"properties\":{\"tags\":"
            "[\"security\",\"supply-chain\",\"%s\"],\"precision\":\"very-high\","
            "\"security-severity\":\"%s\"}}",
            level_of(sev), strncmp(name, "pickle_", 7) == 0 ? "code-execution" : "model-file",
            security_severity(sev));
}

void cli_sarif_end(cli_sarif *s, const cli_summary *sum, int exit_code)
{
    FILE *out = s->out;
    open_document(s);
    fprintf(out,
            "],\"tool\":{\"driver\":{\"name\":\"stguard\",\"version\":\"%s\","
            "\"semanticVersion\":\"%s\",\"properties\":{\"policyVersion\":",
            stg_version(), stg_version());
    cli_json_string(out, stg_policy_version(), strlen(stg_policy_version()));
    fputs("},\"rules\":[", out);
    for (size_t i = 0; i < s->rule_count; i++) {
        if (i > 0) {
            fputc(',', out);
        }
        write_rule(out, s->rules[i]);
    }
    fputs("]}}", out);
    if (s->srcroot != NULL) {
        char *root = uri_encode("file://", s->srcroot);
        if (root != NULL) {
            fputs(",\"originalUriBaseIds\":{\"%SRCROOT%\":{\"uri\":", out);
            cli_json_string(out, root, strlen(root));
            fputs("}}", out);
            free(root);
        }
    }
    fputs(",\"artifacts\":[", out);
    for (size_t i = 0; i < s->artifact_count; i++) {
        const sarif_artifact *a = &s->artifacts[i];
        fputs(i > 0 ? ",{\"location\":{\"uri\":" : "{\"location\":{\"uri\":", out);
        cli_json_string(out, a->uri, strlen(a->uri));
        if (a->relative) {
            fputs(",\"uriBaseId\":\"%SRCROOT%\"", out);
        }
        fprintf(out, "},\"length\":%" PRIu64, a->size);
        if (a->sha256[0] != '\0') {
            fprintf(out, ",\"hashes\":{\"sha-256\":\"%s\"}", a->sha256);
        }
        if (a->blob != NULL) {
            fputs(",\"properties\":{\"blob\":", out);
            cli_json_string(out, a->blob, strlen(a->blob));
            fputc('}', out);
        }
        fputc('}', out);
    }
    bool interrupted = sum->interrupted_signal != 0;
    fprintf(out, "],\"invocations\":[{\"executionSuccessful\":%s,\"exitCode\":%d",
            exit_code == 2 || interrupted ? "false" : "true", exit_code);
    if (interrupted) {
        fprintf(out,
                ",\"exitSignalName\":\"%s\",\"toolExecutionNotifications\":[{\"level\":"
                "\"error\",\"message\":{\"text\":\"interrupted: the files after the last "
                "result were not scanned\"}}]",
                sum->interrupted_signal == 15 ? "SIGTERM" : "SIGINT");
    }
    fprintf(out,
            "}],\"properties\":{\"files\":%" PRIu64 ",\"ok\":%" PRIu64 ",\"warn\":%" PRIu64
            ",\"invalid\":%" PRIu64 ",\"unsafe\":%" PRIu64 ",\"error\":%" PRIu64
            ",\"bytes\":%" PRIu64 ",\"skippedGit\":%" PRIu64 ",\"skippedNoExist\":%" PRIu64
            ",\"skippedLocks\":%" PRIu64 ",\"skippedIncomplete\":%" PRIu64
            ",\"interrupted\":%s}}]}\n",
            sum->files, sum->verdicts[STG_VERDICT_OK], sum->verdicts[STG_VERDICT_WARN],
            sum->verdicts[STG_VERDICT_INVALID], sum->verdicts[STG_VERDICT_UNSAFE],
            sum->verdicts[STG_VERDICT_ERROR], sum->bytes, sum->skipped_git, sum->skipped_no_exist,
            sum->skipped_locks, sum->skipped_incomplete, interrupted ? "true" : "false");
    free_sarif(s);
}

/* The findings of a signature check: each a result located at the file it names (under the
 * model) or at the signature file, with the rule of its code. A check that verified adds none. */
void cli_sarif_signature(cli_sarif *s, const stg_signature *sig, const char *model)
{
    const char *sig_path = stg_signature_file(sig);
    FILE *out = s->out;
    open_document(s);
    for (size_t i = 0; i < stg_signature_finding_count(sig); i++) {
        const stg_signature_finding *f = stg_signature_finding_at(sig, i);
        char *path = NULL;
        size_t plen = 0;
        FILE *m = open_memstream(&path, &plen);
        if (m == NULL) {
            return;
        }
        if (f->file != NULL) {
            fprintf(m, "%s/%s", model, strcmp(f->file, ".") == 0 ? "" : f->file);
        } else {
            fputs(sig_path, m);
        }
        if (fclose(m) != 0 || path == NULL) {
            free(path);
            return;
        }
        bool relative = false;
        char *uri = artifact_uri(s, path, &relative);
        free(path);
        if (uri == NULL) {
            return;
        }
        if (s->results++ > 0) {
            fputc(',', out);
        }
        const char *name = stg_code_name(f->code);
        fputs("{\"ruleId\":", out);
        cli_json_string(out, name, strlen(name));
        int idx = rule_for(s, f->code);
        if (idx >= 0) {
            fprintf(out, ",\"ruleIndex\":%d", idx);
        }
        fprintf(out, ",\"level\":\"%s\",\"message\":{\"text\":", level_of(f->severity));
        cli_json_string(out, f->message, strlen(f->message));
        fputs("},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":", out);
        cli_json_string(out, uri, strlen(uri));
        fputs(relative ? ",\"uriBaseId\":\"%SRCROOT%\"}" : "}", out);
        if (f->has_offset && f->file == NULL) {
            fprintf(out, ",\"region\":{\"byteOffset\":%" PRIu64 ",\"byteLength\":1}", f->offset);
        }
        fprintf(out, "}}],\"properties\":{\"severity\":\"%s\",\"signature\":true}}",
                stg_severity_name(f->severity));
        free(uri);
    }
}
