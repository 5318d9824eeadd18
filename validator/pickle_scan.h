/* Pickle-based content (internal API between the dispatcher in dispatch/ and the pickle scanner).
 * The walker (parser/pickle) never executes anything; the policy (pickle_policy) classifies
 * every global; this glue turns both into findings and `globals` entries of ctx->report. */
#ifndef STG_VALIDATOR_PICKLE_SCAN_H
#define STG_VALIDATOR_PICKLE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

/* What framing the bytes follow: decides which bytes after a STOP are skipped by declared sizes
 * (docs/policy.md) before the walk goes on looking for a further pickle. */
typedef enum stg_pickle_flavor {
    STG_PICKLE_RAW = 0,          /* a file's or stream's pickle(s): when it is the whole file, or
                                    the stream joblib decompresses from it, joblib.load may read
                                    it (arrays after NumpyArrayWrapper BUILDs are data) and so
                                    may pickle.load (they are opcodes): both readings are scanned */
    STG_PICKLE_TORCH_LEGACY = 1, /* magic, protocol, sys_info, data, storage keys, storages */
    STG_PICKLE_MEMBER = 2,       /* one pickle member of an archive (e.g. data.pkl) */
    STG_PICKLE_PLAIN = 3         /* pickle(s) only a plain unpickler reads (.npy object data) */
} stg_pickle_flavor;

/* Scans buf[0..len) as a sequence of pickles until the end, adding findings and globals to
 * ctx->report with offsets base_offset + position (inside ctx->member when set). Anything that
 * could not be walked completely is a failing finding (pickle_malformed or worse), never clean.
 * Bytes handed to nested loaders are handed back through ctx->scan (validator/ctx.h). */
void stg_check_pickles(const uint8_t *buf, size_t len, uint64_t base_offset,
                       stg_pickle_flavor flavor, stg_check_ctx *ctx);

/* Numpy .npy: validates the header as numpy.lib.format reads it (container_malformed, or
 * limit_exceeded) and the data size of every dtype without objects; a dtype holding objects
 * (at any depth) has its data scanned as the pickle numpy would load. Returns true for those. */
bool stg_check_npy(const uint8_t *buf, size_t len, uint64_t base_offset, stg_check_ctx *ctx);

/* true when a pickle reader starting at buf[0] would reach a STOP opcode without error (used
 * for sniffing raw pickles and for polyglot_pickle); *stop_end gets the offset after STOP.
 * When the system refuses memory the walk cannot tell: the answer is false and
 * *out_of_memory (if not NULL) is set, so a caller never takes "unknown" for "not a pickle". */
bool stg_pickle_sniff(const uint8_t *buf, size_t len, size_t *stop_end, bool *out_of_memory);
/* stg_pickle_sniff over a window (the first len bytes of something longer); *ran_out (may be
 * NULL) is true when bytes past the window could change the answer (stg_pickle_ran_out). */
bool stg_pickle_sniff_window(const uint8_t *buf, size_t len, size_t *stop_end, bool *ran_out,
                             bool *out_of_memory);
/* stg_pickle_sniff_window for a pickle read from a file's first byte, buf[0..len) being the
 * first bytes of a file of file_size bytes: the readers that do so (torch.load's magic-number
 * pickle of the legacy format, pickle.load, numpy.load with allow_pickle, joblib.load) set no
 * persistent_load, so a PERSID or BINPERSID ends the load with an error (the C unpickler
 * before it reads PERSID's line): the walk ends there too, and no byte after it can change the
 * answer. Nor can any when a counted argument (string, bytes, FRAME) ends past file_size.
 * open_line (may be NULL): when the walk ran out in a text line no '\n' ends in buf, the line's
 * offset (stg_pickle_open_line), else UINT64_MAX. */
bool stg_pickle_sniff_file(const uint8_t *buf, size_t len, uint64_t file_size, size_t *stop_end,
                           bool *ran_out, uint64_t *open_line, bool *out_of_memory);
/* true when a pickle reader starting at buf[0] would import or call something before it stops,
 * however it stops: it reaches STOP, or reaches a GLOBAL/INST/STACK_GLOBAL with a real name
 * before the stream breaks off. Such bytes run code on load even without a STOP, so they are a
 * pickle for every reader (docs/pickle.md). */
bool stg_pickle_sniff_acts(const uint8_t *buf, size_t len, bool *out_of_memory);
/* true when the walk from buf[0] imports a named global before it stops, or a limit leaves it
 * undecided: the test for bytes no loader reads as a pickle by their name (archive members).
 * A clean STOP alone does not count there: a pickle that imports nothing runs nothing, and
 * tensor data starts with one by chance (")2." is EMPTY_TUPLE, DUP, STOP). */
bool stg_pickle_sniff_imports(const uint8_t *buf, size_t len, bool *out_of_memory);

/* PyTorch 0.1 `storages` member (torch 1.13 serialization.py legacy_load): what the pickle at
 * buf[0] returns on STOP: the storage count (a non-negative int), or the element size of the
 * storage class its (key, location, storage_type) tuple names. false: the pickle does not
 * reach STOP or returns something else (for a class: one of no known element size). */
bool stg_pickle_torch01_count(const uint8_t *buf, size_t len, uint64_t *count);
bool stg_pickle_torch01_elsize(const uint8_t *buf, size_t len, uint32_t *elsize);

/* Policy lists' version (also public as stg_policy_version). */
#endif
