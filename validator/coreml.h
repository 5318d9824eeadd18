/* Core ML (internal API; docs/coreml.md): an .mlpackage's Manifest.json (which items the
 * package holds) and the model.mlmodel protobuf, pure; the package's weights file
 * (weights/weight.bin, parser/milblob.h) is walked by loader/sibling.c. */
#ifndef STG_VALIDATOR_COREML_H
#define STG_VALIDATOR_COREML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../parser/milblob.h"
#include "report.h"

/* Nesting read in a manifest (it is three objects deep). */
#define STG_COREML_MANIFEST_DEPTH 16u

/* true when buf[0..len) is a JSON object whose "itemInfoEntries" object holds an entry whose
 * "path" (a string without escapes) is one of paths[0..n): the manifest coremltools writes
 * (libmodelpackage: {"fileFormatVersion", "itemInfoEntries": {id: {"author", "description",
 * "name", "path"}}, "rootModelIdentifier"}). Malformed JSON names nothing. */
bool stg_coreml_manifest_names(const uint8_t *buf, size_t len, const char *const *paths, size_t n);

/* A model.mlmodel: a Core ML Model protobuf whose wire data reads to its end and that starts
 * with specificationVersion (field 1, a varint of at least 1). Else coreml_model_malformed at
 * the offset where it stopped. */
void stg_coreml_model_check(const uint8_t *buf, size_t len, stg_report *r);

/* Reads the 64-byte record at offset `at` of a weights file into rec; false when it cannot
 * (past the end, a read error). */
typedef bool (*stg_coreml_read_fn)(void *arg, uint64_t at, uint8_t rec[STG_MILBLOB_RECORD]);

/* A weights file of `size` bytes as Core ML's blob storage reader walks it
 * (mlmodel/src/MILBlob/Blob/StorageReader.cpp @ 85b7305c7aac2ee0f7545f56263875dd205c8a08:
 * the header's version must be 2; `count` metadata records follow, the first at 64, each with
 * the sentinel, its data [offset, offset + size) inside the file (MMapFileReader::ReadData
 * slices the mapping), the next at the data's end rounded up to 64). Adds coreml_blob_invalid
 * at the first problem (the walk stops there); records are read through read_record(arg, ...). The
 * walk moves forward at least 64 bytes a record, so it reads at most size / 64 records. */
void stg_coreml_blob_check(stg_coreml_read_fn read_record, void *arg, uint64_t size, stg_report *r);

/* The same over a buffer (tests, fuzzing). */
void stg_coreml_blob_check_buffer(const uint8_t *buf, size_t len, stg_report *r);

#endif
