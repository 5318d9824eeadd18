/* The table of formats (internal; docs/design.md, "The format table"): one entry per format
 * the dispatcher routes, each the whole format: how it is recognised (magic, content sniff
 * and its precedence, the names that decide or claim it), how much of a file is read for it,
 * how it is scanned, its label (for a full scan, dispatch/check.c, as for the quick label of a
 * file too large to scan, stg_sniff) and the public door that opens it. Beside it, the table
 * of compression filters. No precedence depends on the row order. */
#ifndef STG_DISPATCH_FORMATS_H
#define STG_DISPATCH_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/inflate.h"
#include "../validator/ctx.h"
#include "containers.h"
#include "names.h"
#include "sniff.h"
#include "stguard/stguard.h"

/* How much of a file the loader reads for the entry's rules (loader/scan.c). */
typedef enum stg_read_plan {
    STG_READ_WHOLE = 0, /* the whole file, up to max_inflate_bytes */
    STG_READ_HEAD,      /* a bounded head: the header its rules read (GGUF, loader/gguf_open.h) */
    STG_READ_WINDOWS    /* windows: header and tail (safetensors), directory and members (zip) */
} stg_read_plan;

typedef struct stg_format_entry stg_format_entry;

/* What a name says: the rule the table holds for it and its entry (both NULL for a NULL name
 * or a name no rule matches). */
typedef struct stg_name_hint {
    const stg_format_entry *entry;
    const stg_name_rule *rule;
} stg_name_hint;

/* What a name says, by the table's name rules. */
stg_name_hint stg_name_hint_of(const char *name);
/* The entry the name decides (a STG_NAME_DECIDES rule of an entry that is no last resort),
 * NULL when none does. */
const stg_format_entry *stg_name_hint_decides(const stg_name_hint *h);
/* true when the name claims a pickle-based format (.pt, .pkl, .npy ...: the pickle entry's
 * names), so content no entry claims is walked as a pickle and refused when it is none. */
bool stg_name_hint_claims_pickle(const stg_name_hint *h);
/* The label the name gives a pickle (joblib for .joblib), else fallback. */
stg_format stg_name_hint_pickle_label(const stg_name_hint *h, stg_format fallback);

/* true when buf would be taken for a pickle by a loader reading from offset 0: a pickle that
 * reaches STOP, or a PROTO opcode (0x80, protocol 0-5) even when the stream is broken
 * (scanning it then reports why, instead of calling it unknown). false with *out_of_memory set
 * (if not NULL) when the walk was refused memory. */
bool stg_sniff_is_pickle(const uint8_t *buf, size_t len, bool *out_of_memory);

/* What the dispatcher knows of the payload besides its bytes. */
typedef struct stg_dispatch_args {
    stg_name_hint hint;    /* what its name says (all NULL without a name) */
    const char *name_hint; /* that name, or NULL */
    bool top_level;        /* a whole file as a loader reads it (or a decompressed stream) */
    stg_member_mode mode;
} stg_dispatch_args;

/* One format: everything the library knows of it is here (docs/design.md, "The format
 * table"). Entries are designated initializers; a field left out is 0/NULL/false. */
struct stg_format_entry {
    const char *name; /* for messages and docs */
    /* The magic at offset 0 (NULL: none), each written once, here or in the parser that reads
     * the format; an entry with a magic and no sniff is recognised by the magic alone. */
    const char *magic;
    size_t magic_len;
    /* true when buf (from offset 0) is this format; NULL: the magic (or the name) only. May set
     * *out_of_memory: the answer is then unsure and the caller fails closed. */
    bool (*sniff)(const uint8_t *buf, size_t len, bool *out_of_memory);
    /* Sniff precedence: when the content sniffs of several entries accept the same bytes,
     * the lowest sniff_order wins (unique per entry; the row order does not matter). */
    unsigned sniff_order;
    const stg_name_rule *names; /* terminated by a rule with a NULL suffix; NULL: none */
    stg_read_plan read_plan;
    /* Runs the format's rules; false when the bytes turn out not to be this format after all
     * (the dispatcher then treats them as unknown content). Sets res->format. */
    bool (*scan)(const stg_format_entry *e, const uint8_t *buf, size_t len,
                 const stg_dispatch_args *a, stg_check_ctx *ctx, stg_member_result *res);
    stg_format label; /* the label of a scan that found nothing to refine it */
    /* The quick label (no inflating, no rules run), NULL: `label` (or the name rule's label). */
    stg_format (*quick_label)(const uint8_t *buf, size_t len);
    /* The public door that opens such a file for `inspect` (0, STG_DOOR_SAFETENSORS: none of
     * its own; the safetensors door, stg_file_open, is every file's fallback). The door
     * functions live in loader/ (above this layer), so the entry names the door and
     * stg_door_of hands it to the caller. */
    stg_door door;
    bool pickle;     /* a pickle stream: a member is one only when its walk imports something */
    bool alone;      /* its result depends on its bytes alone (no side files, no shards) */
    bool neighbours; /* a file of it on disk is checked with the files its content names beside
                        it (an index's shards: loader/model.c) */
    bool streams;    /* standard input named so is checked as it streams, never held whole */
    /* true: the dispatcher's last resort (ONNX, which has no magic): neither its names nor its
     * sniff are asked by stg_format_by_name / stg_format_sniff, only by
     * stg_format_last_resort, for a whole file that every other reading left unclaimed */
    bool last_resort;
};

/* The entry a name decides, NULL when none does. */
const stg_format_entry *stg_format_by_name(const char *name);
/* The entry whose names match name, whether or not the name decides the format (.gguf claims
 * GGUF: the magic decides); NULL for none or a NULL name. */
const stg_format_entry *stg_format_claimed(const char *name);

/* The entry whose sniff (or magic) accepts buf, the lowest sniff_order first; NULL when none
 * does. */
const stg_format_entry *stg_format_sniff(const uint8_t *buf, size_t len, bool *out_of_memory);

/* The entry whose magic buf starts with (no content walk), NULL when none. */
const stg_format_entry *stg_format_by_magic(const uint8_t *buf, size_t len);

/* The longest magic of the table: what stg_format_by_magic needs of a file's head. */
size_t stg_format_magic_max(void);

/* For a whole file no entry claimed, after the dispatcher's other last readings (a zip at its
 * end, a pickle stream a loader would still run): the last-resort entry whose names match
 * name (may be NULL) or whose sniff accepts buf; NULL when none does. */
const stg_format_entry *stg_format_last_resort(const uint8_t *buf, size_t len, const char *name);

/* The door (stguard.h, stg_door_of) of a file by its name and its first bytes head[0..len):
 * a name that decides an entry with a door, else a magic whose entry has one, else the
 * deciding name of a last-resort entry (.onnx); else STG_DOOR_SAFETENSORS (a name that only
 * claims a format, .gguf, opens no door: the magic decides). */
stg_door stg_format_door(const char *name, const uint8_t *head, size_t len);

/* The entries, for tests and the table's own checks: *count gets their number. */
const stg_format_entry *const *stg_format_entries(size_t *count);

/* ------------------------------------------------------------------ compression filters */

/* A compression that wraps a payload (libarchive's filters, beside its formats): the format
 * table has one entry for compressed streams, which asks this table which filter the bytes
 * are and unwraps them (or reports them unscannable) in one place. */
typedef struct stg_filter_entry {
    const char *name; /* in messages ("gzip", "zstd-compressed") */
    bool (*sniff)(const uint8_t *buf, size_t len, bool *out_of_memory);
    unsigned sniff_order;       /* as in stg_format_entry */
    stg_inflate_format inflate; /* how parser/inflate.h decompresses it */
    bool scannable;             /* false: stguard cannot decompress it (format_unscannable) */
    stg_format label;           /* the label of a stream whose content is no joblib */
} stg_filter_entry;

/* The filter whose sniff accepts buf (lowest sniff_order first), NULL when none does. */
const stg_filter_entry *stg_filter_sniff(const uint8_t *buf, size_t len);
const stg_filter_entry *const *stg_filter_entries(size_t *count);

/* An archive's label from what its scan (or its quick look) found: torch-zip when a pickle
 * member was found, numpy-zip when every member is a .npy, else zip; torch-tar for torch's
 * legacy tar layout, else tar. */
stg_format stg_format_zip_label(const stg_archive_facts *f);
stg_format stg_format_tar_label(const stg_archive_facts *f);

/* The label of a file too large to scan: the table's quick label, or for content no entry
 * claims what its name and a text check say. */
stg_format stg_format_quick_label(const uint8_t *buf, size_t len, const char *name_hint);

#endif
