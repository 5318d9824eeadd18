/* Building reports (internal). A report collects findings, globals and facts about one file or
 * buffer; stg_report_finish sorts the findings into file order and marks the run complete.
 * Until then, and whenever memory ran out while adding, the verdict is `error` (fail closed). */
#ifndef STG_VALIDATOR_REPORT_H
#define STG_VALIDATOR_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stguard/stguard.h"

/* Room for code numbers 0-255 in a report's seen-code bitmap (STG_CODE_MAX must stay below). */
#define STG_SEEN_CODE_WORDS 4

#define STG_NO_OFFSET UINT64_MAX

struct stg_report {
    stg_finding *findings;
    size_t count, cap;
    uint64_t truncated; /* findings counted but not stored */
    uint32_t max_findings;
    stg_severity worst; /* over stored and truncated findings */
    bool any;           /* at least one finding was added */
    bool scan_error;    /* io_error / file_changed seen: verdict error */
    bool out_of_memory; /* a finding or string could not be stored: verdict error */
    bool complete;      /* stg_report_finish ran */
    stg_global *globals;
    size_t global_count, global_cap;
    stg_format format;
    uint64_t size;
    char sha256[65];
    bool has_sha256;
    char *path, *blob;
    stg_profile profile;
    uint64_t seen_codes[STG_SEEN_CODE_WORDS]; /* bit per stg_code added */
    /* joblib < 0.10 side files the pickles name (validator/joblib_side.h), in the order met */
    struct stg_side_file *sides;
    size_t side_count, side_cap;
    /* the result depends on files next to the path (index shards, ONNX external data, joblib
     * side files): the same bytes under another folder may be judged otherwise */
    bool neighbours;
    /* what the rules met, for the summary door (validator/report.h, stg_report_add_row) */
    struct stg_report_row *rows;
    size_t row_count, row_cap;
    uint64_t rows_dropped; /* past STG_SUMMARY_ENTRIES_MAX */
};

/* One entry of the summary door (stg_summary_entry, stguard.h): the strings are copied by
 * stg_report_add_row and owned by the report (NUL-terminated; member NULL at top level). */
typedef struct stg_report_row {
    stg_summary_kind kind;
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
    const char *member;
    uint64_t count, offset;
    stg_verdict verdict;
    stg_summary_state state;
} stg_report_row;

/* Records a row (its strings copied; value may be NULL). A Keras layer or TensorFlow op row with
 * the name and member of one already kept adds its count to it (a histogram); past
 * STG_SUMMARY_ENTRIES_MAX rows the row is counted in rows_dropped. Memory failing is
 * stg_report_oom. */
void stg_report_add_row(stg_report *r, const stg_report_row *row);

/* Frees the rows (and their strings) and empties the table. */
void stg_report_drop_rows(stg_report *r);
/* Frees n rows taken out of a report (the summary door owns them then). */
void stg_report_rows_free(stg_report_row *rows, size_t n);

/* The verdict a set of findings of severity `worst` gives (any: at least one): the mapping of
 * stg_report_verdict for a complete report. */
stg_verdict stg_verdict_of_severity(bool any, stg_severity worst);

/* A side file a joblib NDArrayWrapper / ZNDArrayWrapper names: joblib.load opens
 * os.path.join(dirname(joblib file), name). name holds the exact decoded bytes (it may hold
 * NUL: use name_len; it is also NUL-terminated). offset: where the name's bytes are (inside
 * member when set). zfile: a ZNDArrayWrapper (read as a ZF stream of raw array bytes), else
 * an NDArrayWrapper (read with np.load(allow_pickle=True)). */
typedef struct stg_side_file {
    char *name;
    size_t name_len;
    uint64_t offset;
    char *member; /* NULL when the naming pickle is not inside a member */
    bool zfile;
} stg_side_file;

/* Records a side file (names, member copied). Past STG_SIDE_FILES_CEILING entries nothing is
 * recorded and false is returned (the caller reports the limit). */
#define STG_SIDE_FILES_CEILING 256u
bool stg_report_add_side_file(stg_report *r, const uint8_t *name, size_t name_len, uint64_t offset,
                              const char *member, bool zfile);
/* Drops side files from index keep on (the ones a nested scan of a side file recorded: np.load
 * reads that file with a plain unpickler, which opens no side files). */
void stg_report_drop_side_files(stg_report *r, size_t keep);

stg_report *stg_report_new(const stg_limits *lim);

/* Memory ran out while r was built (a finding, a string, a table, a parser's arena refused by
 * the system): r is incomplete and its verdict is error whatever else it holds. The one way the
 * library says so (nothing else writes out_of_memory). */
void stg_report_oom(stg_report *r);

/* Adds a finding with its code's default severity for the report's profile (the code table,
 * validator/codes.def: stg_code_severity). `fmt` is constant text with printf conversions for
 * values only: input bytes never reach a format string. Returns the stored finding (valid until
 * the next add) or NULL when it was only counted (past max_findings) or memory failed. */
stg_finding *stg_report_add(stg_report *r, stg_code code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
stg_finding *stg_report_addv(stg_report *r, stg_code code, uint64_t offset, const char *fmt,
                             va_list ap) __attribute__((format(printf, 4, 0)));

/* The same with the severity the call site gives: only where the context, not the code,
 * decides (validator/codes.def lists those sites), and to copy findings as they are. */
stg_finding *stg_report_add_sev(stg_report *r, stg_code code, stg_severity sev, uint64_t offset,
                                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
stg_finding *stg_report_addv_sev(stg_report *r, stg_code code, stg_severity sev, uint64_t offset,
                                 const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Optional fields of a finding just added (f may be NULL: then nothing happens). */
void stg_report_set_tensor(stg_report *r, stg_finding *f, const char *name, size_t len);
void stg_report_set_global(stg_report *r, stg_finding *f, const char *module, size_t module_len,
                           const char *name, size_t name_len);
void stg_report_set_member(stg_report *r, stg_finding *f, const char *member,
                           uint64_t member_offset);
void stg_report_set_limit(stg_report *r, stg_finding *f, const char *limit);

/* Shorthand for the limit_exceeded finding with the limit's name. */
void stg_report_limit(stg_report *r, uint64_t offset, const char *limit, uint64_t value);

/* Records a global (every one, whatever its class). member may be NULL. */
void stg_report_add_global(stg_report *r, const char *module, size_t module_len, const char *name,
                           size_t name_len, uint64_t offset, const char *member,
                           stg_global_class klass);

void stg_report_set_format(stg_report *r, stg_format f);
void stg_report_set_size(stg_report *r, uint64_t size);
void stg_report_set_sha256(stg_report *r, const uint8_t digest[32]);
void stg_report_set_path(stg_report *r, const char *path);
void stg_report_set_blob(stg_report *r, const char *blob);

/* Copies every finding and global of src into dst (member and member_offset set on those that
 * had none, when member is not NULL). Used for payloads scanned inside a container. */
void stg_report_merge(stg_report *dst, const stg_report *src, const char *member,
                      uint64_t member_offset);

/* Drops the format_unknown findings of member "(decompressed)" among findings [from, count)
 * (a joblib ZF side file's raw array bytes: report.c). */
void stg_report_drop_raw_unknown(stg_report *r, size_t from);

/* Drops every finding with this code (a sibling data file that its model labels is no
 * format_mismatch: loader/sibling.c). */
void stg_report_drop_code(stg_report *r, stg_code code);

/* stg_report_merge of the findings keep() and the globals keep_global() accept (each NULL:
 * all); side files, memory and scan errors are always copied. */
void stg_report_merge_if(stg_report *dst, const stg_report *src, const char *member,
                         uint64_t member_offset, bool (*keep)(const stg_finding *f, void *arg),
                         bool (*keep_global)(const stg_global *g, void *arg), void *arg);

/* true when a finding with this code was added (stored or not). */
bool stg_report_has(const stg_report *r, stg_code code);

/* Sorts findings into file order (no-offset ones first, ties in the order added) and marks the
 * report complete. */
void stg_report_finish(stg_report *r);

/* Hands r to the caller of an open call: *rep = r, or r freed when rep is NULL. */
static inline void stg_report_hand_out(stg_report *r, stg_report **rep)
{
    if (rep != NULL) {
        *rep = r;
    } else {
        stg_report_free(r);
    }
}

/* Severity of a strict-or-compat finding under the report's profile. */
static inline stg_severity stg_sev(const stg_limits *lim, stg_severity strict_sev,
                                   stg_severity compat_sev)
{
    return lim->profile == STG_PROFILE_COMPAT ? compat_sev : strict_sev;
}

#endif
