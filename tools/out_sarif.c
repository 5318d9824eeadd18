/* SARIF 2.1.0 output: one run; one result per finding (ruleId = the finding's code, level from
 * its severity, byteOffset where an offset exists); the rules array lists the codes used, in
 * order of first use, so ruleIndex can be given while results are streamed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct cli_sarif {
    FILE *out;
    size_t results;
    int rule_index[STG_CODE_MAX + 1]; /* -1: not used yet */
    stg_code rules[STG_CODE_MAX + 1];
    size_t rule_count;
    bool opened;
};

const char *cli_code_description(stg_code code)
{
    switch (code) {
    case STG_FILE_TOO_SMALL: return "The file has fewer than 8 bytes.";
    case STG_HEADER_LENGTH_INVALID: return "The header length is 0.";
    case STG_HEADER_TOO_LARGE: return "The header length exceeds max_header_len.";
    case STG_HEADER_TRUNCATED: return "The header runs past the end of the file.";
    case STG_HEADER_NOT_JSON_OBJECT: return "The header does not start with a JSON object.";
    case STG_HEADER_TRAILING_BYTES: return "Bytes follow the header's JSON object.";
    case STG_JSON_SYNTAX: return "The header is not valid JSON (RFC 8259).";
    case STG_JSON_INVALID_UTF8: return "The header holds invalid UTF-8.";
    case STG_JSON_DUPLICATE_KEY: return "A key is repeated in one JSON object.";
    case STG_JSON_TOO_DEEP: return "JSON nesting exceeds max_json_depth.";
    case STG_JSON_NUMBER_OVERFLOW: return "An integer does not fit in 64 bits.";
    case STG_TENSOR_INFO_INVALID: return "A tensor entry has missing, extra or mistyped fields.";
    case STG_TENSOR_NAME_INVALID: return "A tensor name is empty or has control characters.";
    case STG_DTYPE_UNKNOWN: return "A dtype is not in the table.";
    case STG_SHAPE_INVALID: return "A dimension is not an unsigned integer.";
    case STG_SHAPE_OVERFLOW: return "A tensor's element count or byte size overflows.";
    case STG_SUBBYTE_MISALIGNED: return "A sub-byte tensor does not fill whole bytes.";
    case STG_SIZE_MISMATCH: return "A tensor's byte range differs from its shape and dtype.";
    case STG_OFFSETS_INVALID: return "data_offsets are not two ordered unsigned integers.";
    case STG_OFFSETS_OUT_OF_RANGE: return "A tensor ends past the data section.";
    case STG_OFFSETS_OVERLAP: return "Two tensors share bytes.";
    case STG_DATA_GAP: return "Some data bytes belong to no tensor.";
    case STG_DATA_TRAILING: return "Bytes follow the last tensor.";
    case STG_HEADER_NOT_PADDED: return "The data section does not start at a multiple of 8.";
    case STG_TENSOR_MISALIGNED: return "A tensor does not start at a multiple of its element size.";
    case STG_METADATA_INVALID: return "__metadata__ is not an object of strings.";
    case STG_LIMIT_EXCEEDED: return "A configured limit was hit.";
    case STG_FINDINGS_TRUNCATED: return "More findings than max_findings; the rest were counted.";
    case STG_POLYGLOT_ZIP: return "A zip archive is appended to the file.";
    case STG_POLYGLOT_PICKLE: return "The file also reads as a pickle from offset 0.";
    case STG_FORMAT_UNKNOWN: return "The content matches no known format.";
    case STG_FORMAT_MISMATCH: return "The name claims a pickle-based format the content lacks.";
    case STG_FORMAT_NOT_VALIDATED: return "A recognised format stguard does not validate.";
    case STG_FORMAT_UNSCANNABLE: return "A container or compression stguard cannot open.";
    case STG_PICKLE_FILE: return "A pickle-based file: loading it can run code.";
    case STG_PICKLE_GLOBAL_BENIGN:
        return "A reviewed framework class only weights_only=False loads.";
    case STG_PICKLE_GLOBAL_DANGEROUS: return "A global on the denylist or hard-block list.";
    case STG_PICKLE_GLOBAL_UNKNOWN: return "A global on no list (denied by default).";
    case STG_PICKLE_GLOBAL_UNRESOLVED: return "A global whose name cannot be resolved statically.";
    case STG_PICKLE_FRAME_DIVERGENCE: return "A pickle argument straddles a FRAME end.";
    case STG_PICKLE_MALFORMED: return "A truncated or invalid pickle opcode stream.";
    case STG_PICKLE_NESTED: return "Bytes handed to a nested loader.";
    case STG_PICKLE_BUILD_ON_GLOBAL: return "BUILD or SETITEM applied to an imported object.";
    case STG_ZIP_MALFORMED: return "Unparseable zip structures.";
    case STG_CONTAINER_MALFORMED: return "Unparseable tar, .npy or .npz headers or streams.";
    case STG_ZIP_HEADER_MISMATCH: return "A zip local header disagrees with the central directory.";
    case STG_ZIP_ENCRYPTED_FLAG: return "A zip entry has flag bits set.";
    case STG_ZIP_BOMB: return "Inflated size or ratio over the caps.";
    case STG_INDEX_INVALID: return "The index JSON does not have the expected shape.";
    case STG_INDEX_SHARD_PATH_UNSAFE: return "A shard name is absolute or leaves the folder.";
    case STG_INDEX_SHARD_MISSING: return "A shard the index names does not exist.";
    case STG_INDEX_TENSOR_MISSING: return "The index names a tensor its shard lacks.";
    case STG_INDEX_TENSOR_UNLISTED: return "A shard holds a tensor the index lacks.";
    case STG_INDEX_TENSOR_DUPLICATE: return "A tensor is in two shards.";
    case STG_INDEX_TOTAL_SIZE_MISMATCH:
        return "metadata.total_size differs from the tensors' sizes.";
    case STG_DIGEST_MISMATCH: return "The content does not match its expected SHA-256.";
    case STG_SYMLINK_SKIPPED: return "A link leading outside the scan root, or a cycle.";
    case STG_NOT_REGULAR_FILE: return "A FIFO, device or socket: never opened.";
    case STG_FILE_CHANGED_CODE: return "The file changed while it was scanned.";
    case STG_IO_ERROR: return "The file could not be read.";
    case STG_LFS_POINTER:
        return "The file is a Git LFS pointer: the content it stands for was not downloaded or "
               "checked.";
    }
    return "Unknown finding code.";
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

/* A relative URI reference for a path: unreserved bytes and '/' as they are, everything else
 * percent-encoded; absolute paths become file:// URIs. */
static void write_uri(FILE *out, const char *path)
{
    fputc('"', out);
    if (path[0] == '/') {
        fputs("file://", out);
    }
    for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
        unsigned char c = *p;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
        if (plain) {
            fputc(c, out);
        } else {
            fprintf(out, "%%%02X", c);
        }
    }
    fputc('"', out);
}

cli_sarif *cli_sarif_begin(FILE *out)
{
    cli_sarif *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    s->out = out;
    for (size_t i = 0; i <= STG_CODE_MAX; i++) {
        s->rule_index[i] = -1;
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

void cli_sarif_discard(cli_sarif *s)
{
    free(s);
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

void cli_sarif_record(cli_sarif *s, const stg_report *r)
{
    FILE *out = s->out;
    const char *path = stg_report_path(r) != NULL ? stg_report_path(r) : "-";
    const char *verdict = stg_verdict_name(stg_report_verdict(r));
    open_document(s);
    for (size_t i = 0; i < stg_report_count(r); i++) {
        const stg_finding *f = stg_report_at(r, i);
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
        cli_json_string(out, f->message, strlen(f->message));
        fputs("},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":", out);
        write_uri(out, path);
        fputc('}', out);
        /* Inside an archive member the offset is in the member's bytes: the region then points
         * at the member's local header, the inner offset goes to the properties. */
        if (f->member != NULL && f->has_member_offset) {
            fprintf(out, ",\"region\":{\"byteOffset\":%" PRIu64 "}", f->member_offset);
        } else if (f->member == NULL && f->has_offset) {
            fprintf(out, ",\"region\":{\"byteOffset\":%" PRIu64 "}", f->offset);
        }
        fprintf(out, "}}],\"properties\":{\"severity\":\"%s\",\"verdict\":\"%s\"",
                stg_severity_name(f->severity), verdict);
        if (f->tensor != NULL) {
            fputs(",\"tensor\":", out);
            cli_json_string(out, f->tensor, f->tensor_len);
        }
        if (f->module != NULL && f->name != NULL) {
            fputs(",\"module\":", out);
            cli_json_string(out, f->module, strlen(f->module));
            fputs(",\"name\":", out);
            cli_json_string(out, f->name, strlen(f->name));
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
        stg_code c = s->rules[i];
        const char *name = stg_code_name(c);
        const char *desc = cli_code_description(c);
        if (i > 0) {
            fputc(',', out);
        }
        fprintf(out, "{\"id\":\"%s\",\"name\":\"%s\",\"shortDescription\":{\"text\":", name, name);
        cli_json_string(out, desc, strlen(desc));
        fputs("},\"fullDescription\":{\"text\":", out);
        cli_json_string(out, desc, strlen(desc));
        fputs("}}", out);
    }
    fprintf(out,
            "]}},\"invocations\":[{\"executionSuccessful\":%s,\"exitCode\":%d}],"
            "\"properties\":{\"files\":%" PRIu64 ",\"ok\":%" PRIu64 ",\"warn\":%" PRIu64
            ",\"invalid\":%" PRIu64 ",\"unsafe\":%" PRIu64 ",\"error\":%" PRIu64
            ",\"bytes\":%" PRIu64 ",\"skippedGit\":%" PRIu64 ",\"skippedNoExist\":%" PRIu64
            ",\"skippedLocks\":%" PRIu64 "}}]}\n",
            exit_code == 2 ? "false" : "true", exit_code, sum->files, sum->verdicts[STG_VERDICT_OK],
            sum->verdicts[STG_VERDICT_WARN], sum->verdicts[STG_VERDICT_INVALID],
            sum->verdicts[STG_VERDICT_UNSAFE], sum->verdicts[STG_VERDICT_ERROR], sum->bytes,
            sum->skipped_git, sum->skipped_no_exist, sum->skipped_locks);
    free(s);
}
