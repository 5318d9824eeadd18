/* The type strings numpy's dtype.__reduce__ writes as the argument of numpy.dtype(...) in a
 * pickle (joblib's NumpyArrayWrapper states carry them): bytes -> structure; which arrays are
 * skipped by these sizes is decided by validator/pickle_scan.c. */
#ifndef STG_PARSER_NPY_REDUCE_H
#define STG_PARSER_NPY_REDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A fixed-size kind with a size numpy accepts ("f8", "i4", "b1", "M8", "c32"...): *size is
 * its item size. "O" (or anything starting with it) is an object: *object set,
 * true. false for anything else (strings and void types may be resized by the state). */
bool stg_npy_reduce_fixed(const uint8_t *p, size_t n, uint64_t *size, bool *object);

/* A flexible kind ("S7", "U5", "V16"; structured and subarray types reduce to "V<size>"):
 * *kind is 'S', 'U' or 'V' and *count the decimal number after it, only digits, with an item
 * size (U: 4 x count) that fits numpy's C int. false otherwise: numpy's size would wrap. */
bool stg_npy_reduce_flexible(const uint8_t *p, size_t n, uint8_t *kind, uint64_t *count);

#endif
