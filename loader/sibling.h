/* Sibling data files (internal API of loader/sibling.c; docs/siblings.md). Some models keep
 * their weights in a file beside them whose bytes are raw tensor data: an ONNX model's
 * external-data files (any name: `model.onnx_data`, `weights.bin`), an OpenVINO IR's `.bin`.
 * Alone such a file is no known format (format_unknown, or format_mismatch under a `.bin`
 * name, which claims a pickle). Once a file's scan found nothing else, this step looks for a
 * model beside it that names it, by the path resolution the model's own loader does, and
 * compares identities (device and inode), so a name that only looks alike never counts. A
 * file so named is relabelled as that model's data and validated against it: every range the
 * model reads from it must lie inside it. A file no model names keeps its findings. */
#ifndef STG_LOADER_SIBLING_H
#define STG_LOADER_SIBLING_H

#include "../validator/openvino.h"
#include "../validator/report.h"
#include "stguard/stguard.h"

/* Folder entries read when looking for ONNX models beside a file: a folder with more is not
 * searched (the file keeps its findings), so the result never depends on readdir's order. */
#define STG_SIBLING_DIR_ENTRIES_CEILING 4096u
/* ONNX models beside a file that are read; more: none is (as above). */
#define STG_SIBLING_MODELS_CEILING 32u
/* A model file larger than this is not read: an IR's XML or a package manifest (one file each
 * data file asks). */
#define STG_SIBLING_MODEL_BYTES_CEILING ((uint64_t)256 << 20)
/* An ONNX model beside the file larger than this is not read (a model that keeps its tensors
 * outside is small: external data exists because a ModelProto stops at 2 GiB), and the ONNX
 * models of one folder are read only when their sizes add up to at most
 * STG_SIBLING_ONNX_READ_CEILING (else the folder is not searched): what one data file can
 * make the step read is bounded whatever the folder holds. */
#define STG_SIBLING_ONNX_MODEL_BYTES_CEILING ((uint64_t)64 << 20)
#define STG_SIBLING_ONNX_READ_CEILING ((uint64_t)256 << 20)
/* Ranges kept for one data file (tensors of the models that name it). */
#define STG_SIBLING_RANGES_CEILING 1000000u

/* Folders whose ONNX model listing one walk keeps (a folder of thousands of files of no known
 * format is listed once, not once a file); past it, folders are listed each time. */
#define STG_SIBLING_CACHE_DIRS 4096u

/* The listings of one tree walk, shared by its worker threads (its own lock). */
typedef struct stg_sibling_cache stg_sibling_cache;
/* NULL when memory fails (the step then lists the folder each time). */
stg_sibling_cache *stg_sibling_cache_new(void);
void stg_sibling_cache_free(stg_sibling_cache *c);

/* The step for a file scanned into r (not finished) at path (the path as walked or given: a
 * link's folder, as the model's loader sees it). Runs only when r's findings are all
 * format_unknown / format_mismatch of the file itself (nothing truncated, no global, no scan
 * error): then r depends on its neighbours (r->neighbours). Models are looked up in path's
 * folder and must resolve inside opt->root (or that folder when no root is set). When one
 * names the file, those findings are dropped, r gets the data format's label and
 * sibling_range_outside for each range past the file's end. cache: a walk's listings (keyed
 * by the folder's device and inode), or NULL. */
void stg_sibling_scan(const char *path, const stg_scan_options *opt, stg_sibling_cache *cache,
                      stg_report *r);

/* The model's side, for an OpenVINO IR scanned by path (the dispatcher's hook, loader/scan.c):
 * its weights file is the IR's path up to its last '.' plus ".bin", as OpenVINO's frontend
 * derives it. When the IR has constants, that file must exist, be a regular file inside root
 * (NULL: the IR's folder) and hold every constant's offset + size bytes, else
 * openvino_weights_missing (at the constant's <data>). r then depends on its neighbours. */
void stg_openvino_check_weights(const char *xml_path, const char *root, const stg_openvino_ir *ir,
                                stg_report *r);

#endif
