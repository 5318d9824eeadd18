/* The table of formats (internal; docs/design.md, "How to add a format"): one entry per format
 * the dispatcher routes, in the order the loaders check them (what a loader checks first wins).
 * Each entry says how the format is recognised (content sniff, and the names that decide it
 * whatever the content), how it is scanned, and its label: the table is the one place a
 * format's `stg_format` label is decided, for a full scan (dispatch/check.c) as for the
 * quick label of a file too large to scan (stg_sniff). */
#ifndef STG_DISPATCH_FORMATS_H
#define STG_DISPATCH_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/inflate.h"
#include "../validator/ctx.h"
#include "containers.h"
#include "sniff.h"

/* What a name hint says (docs/containers.md). All false for a NULL hint. */
typedef struct stg_name_hint {
    bool safetensors;       /* ends ".safetensors": validated as safetensors whatever it holds */
    bool safetensors_index; /* ends ".safetensors.index.json" */
    bool onnx;              /* ends ".onnx" */
    bool joblib;            /* ends ".joblib" */
    bool claims_pickle;     /* .bin .pt .pth .ckpt .pkl .pickle .joblib .npy .npz */
} stg_name_hint;

/* What a name says, by the table's names and the pickle suffixes (docs/containers.md). */
stg_name_hint stg_name_hint_of(const char *name);

/* Kind of buf by magic bytes and content walks (pickles): the first entry of the format table
 * (formats.c) that accepts it. When the pickle walk is refused memory, *out_of_memory (if not
 * NULL) is set and the later rules still apply: the caller must fail closed, since the answer
 * may be wrong. */
stg_sniff_kind stg_sniff_kind_of(const uint8_t *buf, size_t len, bool *out_of_memory);

/* true when buf would be taken for a pickle by a loader reading from offset 0: a pickle that
 * reaches STOP, or a PROTO opcode (0x80, protocol 0-5) even when the stream is broken
 * (scanning it then reports why, instead of calling it unknown). false with *out_of_memory set
 * (if not NULL) when the walk was refused memory. */
bool stg_sniff_is_pickle(const uint8_t *buf, size_t len, bool *out_of_memory);

/* What the dispatcher knows of the payload besides its bytes. */
typedef struct stg_dispatch_args {
    stg_name_hint hint;    /* what its name says (all false without a name) */
    const char *name_hint; /* that name, or NULL */
    bool top_level;        /* a whole file as a loader reads it (or a decompressed stream) */
    stg_member_mode mode;
} stg_dispatch_args;

typedef struct stg_format_entry stg_format_entry;

struct stg_format_entry {
    stg_sniff_kind kind;
    const char *name; /* for messages and docs */
    /* true when buf (from offset 0) is this format; NULL: recognised by name only. May set
     * *out_of_memory: the answer is then unsure and the caller fails closed. */
    bool (*sniff)(const uint8_t *buf, size_t len, bool *out_of_memory);
    /* Runs the format's rules; false when the bytes turn out not to be this format after all
     * (the dispatcher then treats them as unknown content). Sets res->format. */
    bool (*scan)(const stg_format_entry *e, const uint8_t *buf, size_t len,
                 const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res);
    stg_format label; /* the label of a scan that found nothing to refine it */
    /* The quick label (no inflating, no rules run), NULL: `label` (or joblib by name for
     * pickles). */
    stg_format (*quick_label)(const uint8_t *buf, size_t len);
    const char *const *names; /* name suffixes (lower case) that decide the format whatever
                                 the content, NULL-terminated; NULL: none */
    /* compressed streams: how to decompress and what to call the compression in messages */
    stg_inflate_format inflate;
    const char *what;
    /* true: the dispatcher's last resort (ONNX, which has no magic): neither its names nor its
     * sniff are asked by stg_format_by_name / stg_format_sniff, only by
     * stg_format_last_resort, for a whole file that every other reading left unclaimed */
    bool last_resort;
};

/* The entry a name decides (`names`), NULL when none does. */
const stg_format_entry *stg_format_by_name(const char *name);
/* The entry whose names include name's suffix, whether or not the name decides the format
 * (.gguf claims GGUF: the magic decides); NULL for none or a NULL name. */
const stg_format_entry *stg_format_claimed(const char *name);

/* The first entry whose sniff accepts buf, NULL when none does. */
const stg_format_entry *stg_format_sniff(const uint8_t *buf, size_t len, bool *out_of_memory);

/* For a whole file no entry claimed, after the dispatcher's other last readings (a zip at its
 * end, a pickle stream a loader would still run): the last-resort entry whose names match
 * name (may be NULL) or whose sniff accepts buf; NULL when none does. */
const stg_format_entry *stg_format_last_resort(const uint8_t *buf, size_t len, const char *name);

/* The entry of a kind (every kind but STG_SNIFF_UNKNOWN has one). */
const stg_format_entry *stg_format_of_kind(stg_sniff_kind kind);

/* An archive's label from what its scan (or its quick look) found: torch-zip when a pickle
 * member was found, numpy-zip when every member is a .npy, else zip; torch-tar for torch's
 * legacy tar layout, else tar. */
stg_format stg_format_zip_label(const stg_archive_facts *f);
stg_format stg_format_tar_label(const stg_archive_facts *f);

/* The label of a file too large to scan: the table's quick label, or for content no entry
 * claims what its name and a text check say. */
stg_format stg_format_quick_label(const uint8_t *buf, size_t len, const char *name_hint);

#endif
