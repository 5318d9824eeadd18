/* The globals of a TorchScript archive's pickles as TorchScript's own loader resolves them
 * (docs/containers.md, "TorchScript"). torch.jit.load, and torch.load of a zip with a
 * `constants.pkl` record, read data.pkl, constants.pkl and the code/ debug pickles with torch's
 * C++ unpickler, which imports no Python module: it builds a fixed set of torch.jit._pickle
 * helpers itself and defines every other class from the archive's own code/ folder. The
 * dispatcher (dispatch/containers.c) lists an archive's code/ sources when torch's reader would
 * take that route, and hands the list to the scans of its members through the scan context. */
#ifndef STG_VALIDATOR_TORCHSCRIPT_H
#define STG_VALIDATOR_TORCHSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One code/ record: its name after "code/" (e.g. "__torch__/a/b.py"), bytes of the archive. */
typedef struct stg_ts_source {
    const char *name;
    size_t len;
} stg_ts_source;

/* The archive's sources, sorted by stg_torchscript_sort, and the depth of the scans of its
 * direct members (only those are read by TorchScript's unpickler: a pickle inside a nested
 * container is not). */
typedef struct stg_torchscript {
    stg_ts_source *sources;
    size_t count;
    uint32_t member_depth;
} stg_torchscript;

typedef enum stg_ts_global {
    STG_TS_OTHER = 0,      /* not TorchScript's: the pickle policy judges it */
    STG_TS_BUILTIN,        /* a torch.jit._pickle helper the C++ unpickler builds itself */
    STG_TS_CLASS,          /* a __torch__ class whose source the archive holds */
    STG_TS_CLASS_UNDEFINED /* a __torch__ class whose source record is absent */
} stg_ts_global;

/* true when TorchScript's C++ unpickler reads the archive member of this (central) name:
 * `data.pkl`, `constants.pkl`, `bytecode.pkl` (the lite interpreter's) or a `code/...debug_pkl`
 * after the archive's first folder, as torch's reader lists records (the first 511 bytes). Any
 * other pickle member (an `extra/` file, a stray `.pkl`) is read, if at all, by Python code that
 * unpickles it itself: the policy judges its globals. */
bool stg_torchscript_reads(const char *member_name);

/* Sorts ts->sources (bytewise) so that stg_torchscript_classify can search them. */
void stg_torchscript_sort(stg_torchscript *ts);

/* What module.name is to TorchScript's unpickler. *source (may be NULL) gets the code/ record
 * it is defined from for STG_TS_CLASS and STG_TS_CLASS_UNDEFINED ("__torch__/a.py", the
 * record's bytes cut at *source_len; the buffer holds at least STG_TS_SOURCE_NAME_MAX + 1). */
#define STG_TS_SOURCE_NAME_MAX 511u
stg_ts_global stg_torchscript_classify(const stg_torchscript *ts, const char *module,
                                       size_t module_len, const char *name, size_t name_len,
                                       char *source, size_t *source_len);

#endif
