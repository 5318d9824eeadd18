/* ONNX external data on disk (internal API; docs/onnx.md). validator/onnx.c extracts the
 * (location, offset, length) entries of a model and checks their locations without I/O; this
 * opens what those rules let through, the way a runtime resolves them: relative to the model
 * file's folder, never leaving it (nor `root`, when links may lead into a wider tree such as a
 * Hugging Face cache), and checks that each file holds offset + length bytes. */
#ifndef STG_LOADER_ONNX_EXTERNAL_H
#define STG_LOADER_ONNX_EXTERNAL_H

#include <stddef.h>

#include "../validator/onnx.h"
#include "../validator/report.h"

/**
 * Checks the files of ext[0..n) (entries whose `safe` is false are skipped: their findings were
 * added by the validator). Adds onnx_external_missing (absent, not a regular file, or shorter
 * than offset + length), onnx_external_path_unsafe (a link that resolves outside `root`) or
 * io_error.
 * @param model_dir  the folder of the model file (external locations are relative to it).
 * @param root       the folder the real paths must stay in; NULL: model_dir.
 */
void stg_onnx_check_external_files(const char *model_dir, const char *root,
                                   const stg_onnx_external *ext, size_t n, stg_report *r);

#endif
