/* The scan context every format's rules receive (internal; docs/design.md, "Recursion"). It is
 * the only thing rules and container walkers know of the dispatcher: a payload found inside
 * another (an archive member, a decompressed stream, bytes handed to a nested loader) is handed
 * back through the one callback `scan`, which the dispatcher installs (dispatch/check.h). The
 * dispatcher alone guards the depth (min(max_nesting, STG_NESTING_CEILING)).
 *
 * Member paths are a parent chain of links, one per level, each naming its entry; the path a
 * finding carries ("outer!inner", cut to STG_MEMBER_PATH_MAX) is rendered only when a finding
 * inside a member needs it, and then kept on the link for the rest of that member's scan. */
#ifndef STG_VALIDATOR_CTX_H
#define STG_VALIDATOR_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* How a payload handed to ctx->scan is read. */
typedef enum stg_member_mode {
    STG_MEMBER_ARCHIVE = 0, /* an archive member: sniffed; content no rule knows is plain data */
    STG_MEMBER_STREAM,      /* a decompressed file: sniffed; unknown content is reported and
                               walked as pickles (a loader unpickles it as a whole file) */
    STG_MEMBER_PICKLE,      /* one pickle member whatever it looks like (its name says pickle,
                               so a loader will unpickle it): STG_PICKLE_MEMBER */
    STG_MEMBER_PICKLES,     /* a stream of pickles (STG_PICKLE_RAW) */
    STG_MEMBER_TORCH01_STORAGES, /* PyTorch 0.1 `storages`: count pickle, then per storage an
                                    argument pickle, an 8-byte element count and the elements */
    STG_MEMBER_TORCH01_TENSORS   /* PyTorch 0.1 `tensors`: count pickle, then per tensor an
                                    argument pickle, ndim (i32), 4 pad bytes, sizes, strides and
                                    the storage offset (8 bytes each) */
} stg_member_mode;

/* What a payload's scan found, for labelling its container. */
typedef struct stg_member_result {
    stg_format format; /* the payload's own format (STG_FMT_UNKNOWN for plain data) */
    bool pickle_based; /* a pickle was scanned in it (at any depth) */
    uint64_t inflated; /* bytes inflated while scanning it, nested members included */
} stg_member_result;

/* One level of the member chain. `name` is NUL-terminated and outlives the member's scan;
 * `path` is the rendered chain (NULL until first needed, owned by the link). */
typedef struct stg_member_link {
    const struct stg_member_link *up; /* NULL: a member of the top-level buffer */
    const char *name;
    char *path;
} stg_member_link;

/* A payload handed back to the dispatcher. */
typedef struct stg_payload {
    const uint8_t *buf;
    size_t len;
    const char *name;        /* the entry's name (NUL-terminated): one more link of the path */
    uint64_t offset;         /* the entry's header offset in the enclosing buffer */
    stg_member_mode mode;    /* how its bytes are read */
    uint64_t inflate_budget; /* what its subtree may inflate (containers.h) */
} stg_payload;

typedef struct stg_check_ctx stg_check_ctx;
struct stg_onnx_external; /* validator/onnx.h */
struct stg_openvino_ir;   /* validator/openvino.h */
struct stg_torchscript;   /* validator/torchscript.h */

/* What the loader found of a file named beside the one scanned (ctx->beside). */
typedef enum stg_beside {
    STG_BESIDE_UNKNOWN = 0, /* not looked up (a buffer, an archive member) or not resolvable */
    STG_BESIDE_PRESENT,     /* a regular file of that name in the folder, inside the scan root */
    STG_BESIDE_ABSENT       /* no such file */
} stg_beside;

/* Scans a payload one level deeper into a report of its own and merges it into ctx->report
 * with the member path set. */
typedef stg_member_result (*stg_scan_fn)(stg_check_ctx *ctx, const stg_payload *p);

struct stg_check_ctx {
    const stg_limits *lim;
    const stg_policy *policy; /* NULL: built-in lists */
    stg_report *report;       /* findings go here */
    uint32_t depth;           /* containers/pickles entered so far */
    stg_member_link *member;  /* set while inside an archive member (findings carry its path) */
    uint64_t member_offset;   /* file offset of that member's local header */
    uint64_t hash_seed;       /* keys the hash tables of input-chosen keys (parser/hash.h):
                                 loader/ draws it from the OS per scan; 0: a fixed default */
    stg_scan_fn scan;         /* the dispatcher's entry for nested payloads (never NULL in a
                                 context made by stg_check_ctx_init) */
    /* Set by loader/ for a file on disk (NULL for buffers and streams): called with the
     * external-data entries of a top-level ONNX model (validator/onnx.h) so their files are
     * examined next to the model; without it only the locations' form is checked. */
    void (*onnx_external)(void *arg, const struct stg_onnx_external *ext, size_t n, stg_report *r);
    void *onnx_external_arg;
    /* The same for a top-level OpenVINO IR (validator/openvino.h): its constants are checked
     * against the weights file beside it (loader/sibling.h). */
    void (*openvino_weights)(void *arg, const struct stg_openvino_ir *ir, stg_report *r);
    void *openvino_weights_arg;
    /* Set by loader/ for a file on disk (NULL otherwise): whether a file of the plain name
     * `name` lies in that file's folder (inside the scan root, as ONNX external data), for
     * rules that say whether code a config names ships with it (validator/remote_code.h). The
     * report then records that its result depends on neighbours. Shares onnx_external_arg. */
    stg_beside (*beside)(void *arg, const char *name, stg_report *r);
    /* Set while scanning what joblib's old ZF reader decompresses (numpy_pickle_compat): its
     * ZipNumpyUnpickler reads no NumpyArrayWrapper array, so those bytes are opcodes. */
    bool joblib_compat;
    /* Set while scanning the members of a zip that torch's reader takes for a TorchScript
     * archive (a `constants.pkl` record: torch.load hands it to torch.jit.load): its pickles'
     * globals are resolved as TorchScript's C++ unpickler resolves them (validator/torchscript.h),
     * for the scans at its member_depth only. */
    const struct stg_torchscript *torchscript;
};

/* Hands a payload back to the dispatcher (ctx->scan). */
static inline stg_member_result stg_ctx_scan(stg_check_ctx *ctx, const uint8_t *buf, size_t len,
                                             const char *name, uint64_t offset,
                                             stg_member_mode mode, uint64_t inflate_budget)
{
    stg_payload p = {buf, len, name, offset, mode, inflate_budget};
    return ctx->scan(ctx, &p);
}

/* The path of the member being scanned ("outer!inner"), NULL at top level; rendered on first
 * use and kept on the link. NULL with stg_report_oom(ctx->report) called when memory fails. */
const char *stg_ctx_member_path(stg_check_ctx *ctx);

/* The path a finding about entry `name` of the current container carries: the chain, then
 * name (stg_mem_alloc'd, the caller frees it; NULL when memory fails). A path longer than
 * STG_MEMBER_PATH_MAX keeps "..." and its last bytes, so the innermost name is always there. */
char *stg_ctx_entry_path(const stg_check_ctx *ctx, const char *name);

/* The member link's rendering with `name` below it (the helper both functions use). */
char *stg_member_path_render(const stg_member_link *up, const char *name);

/* Sets the current member path on f (nothing at top level). */
void stg_ctx_set_member(stg_check_ctx *ctx, stg_finding *f);

#endif
