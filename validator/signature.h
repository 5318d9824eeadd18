/* Model signature rules without I/O or cryptography (docs/signing.md, "What is verified"): the
 * signed file list as a table (names checked, repeats found), the ignore rules model_signing
 * applies (a path-component prefix from the model root), the comparison of the files found with
 * the list, and the findings of a signature check. loader/verify.c feeds it the files and does the
 * cryptography. */
#ifndef STG_VALIDATOR_SIGNATURE_H
#define STG_VALIDATOR_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/sigbundle.h"
#include "stguard/stguard.h"

#define STG_SIG_FINDINGS_MAX 1000u /* stored; more are counted in `dropped` */

typedef struct stg_sig_findings {
    stg_signature_finding *items;
    size_t count, cap;
    uint64_t dropped; /* findings past STG_SIG_FINDINGS_MAX or refused memory */
    bool lost;        /* a finding could not be stored (memory): never verified */
} stg_sig_findings;

/* Adds a finding (severity from codes.def); file (file_len bytes, may be NULL) is copied. The
 * message is a printf format of constant text: input bytes go in `file`, never in fmt. */
void stg_sig_note(stg_sig_findings *f, stg_code code, bool has_offset, uint64_t offset,
                  const char *file, size_t file_len, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
void stg_sig_findings_free(stg_sig_findings *f);

/* Paths to leave out of the comparison, normalised as Python's PurePosixPath reads them (empty
 * and "." components dropped); a path matches an entry equal to it or to one of its leading
 * folders. */
typedef struct stg_sig_ignores {
    char *text; /* the normalised entries, each NUL-terminated */
    size_t text_len, text_cap;
    size_t *at; /* start of each entry in text, sorted by entry once sealed */
    size_t count, cap;
    bool covers_all; /* an entry was the model root itself ("." or "") */
    bool sorted;     /* sealed: `at` is in entry order, lookups bisect */
} stg_sig_ignores;

/* Adds path[0..len): false only when memory is refused. An absolute path or one with a ".."
 * component is dropped (it names nothing inside the model, as for the reference). */
bool stg_sig_ignores_add(stg_sig_ignores *ig, const uint8_t *path, size_t len);
/* Sorts the entries; call once after the last add and before any lookup. */
void stg_sig_ignores_seal(stg_sig_ignores *ig);
/* rel: a canonical model-relative path (no empty, "." or ".." component). */
bool stg_sig_ignored(const stg_sig_ignores *ig, const char *rel, size_t len);
void stg_sig_ignores_free(stg_sig_ignores *ig);

/* true when name is what model_signing writes as a resource name: "." (a single-file model) or
 * a relative POSIX path whose components are neither empty, "." nor "..", without NUL. */
bool stg_sig_name_canonical(const uint8_t *name, size_t len);

typedef struct stg_sig_manifest {
    const stg_sig_resource *res;
    size_t count;
    uint32_t *order; /* indexes of res sorted by name */
    uint8_t *seen;   /* per resource: a file of that name was found */
} stg_sig_manifest;

/* The table of st's resources. Names that are not canonical and names listed twice are
 * signature_statement_invalid (offset: the resource in the payload). STG_E_NOMEM when memory is
 * refused. */
stg_status stg_sig_manifest_init(stg_sig_manifest *m, const stg_sig_statement *st,
                                 stg_sig_findings *f);
/* A file found: signed_file_extra when the list lacks it, signed_file_modified when its digest
 * differs. */
void stg_sig_manifest_file(stg_sig_manifest *m, const char *rel, size_t len,
                           const uint8_t digest[32], stg_sig_findings *f);
/* A listed file that was found but could not be hashed: marks it seen (its finding is the
 * caller's, signed_file_unverifiable), so it is not also reported missing. */
void stg_sig_manifest_seen(stg_sig_manifest *m, const char *rel, size_t len);
/* Every listed file not found: signed_file_missing. */
void stg_sig_manifest_finish(const stg_sig_manifest *m, stg_sig_findings *f);
void stg_sig_manifest_free(stg_sig_manifest *m);

#endif
