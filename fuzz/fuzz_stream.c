/* Target: stg_stream_new / stg_stream_feed / stg_stream_finish (loader/stream.c). */
/* Needs: loader */
/* Seeds: corpus/stream/. Dict: fuzz/stream.dict (same tokens as validate.dict).
 * Input layout: byte 0 = flags (bit 0: compat, bit 1: small limits, bits 4-6: number k of split
 * sizes, 0-7), then k bytes of chunk sizes (0 means an empty feed), then the file. The file is
 * fed in chunks cycling through those sizes (all zero: one byte at a time).
 * Properties checked (abort on violation):
 *  - the stream's findings (code, severity, offset, tensor, message, member), truncated count
 *    and verdict equal those of stg_validate_buffer on the same bytes (both doors run the one
 *    pipeline of dispatch/safetensors.h; inputs here are at most 65,557 bytes, where the
 *    stream has every byte and must match exactly; fuzz/compare.h compares);
 *  - the report's SHA-256 equals stg_sha256_buffer of the file; size equals its length;
 *  - an accepted stream's table tiles the data section and each tensor digest equals the
 *    digest of its bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader/digest.h"
#include "loader/stream.h"
#include "dispatch/check.h"
#include "fuzz/compare.h"
#include "validator/report.h"
#include "validator/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CMP (STG_FUZZ_CMP_MESSAGE | STG_FUZZ_CMP_TENSOR)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    uint8_t flags = data[0];
    size_t k = (size_t)((flags >> 4) & 7);
    if (size < 1 + k) {
        return 0;
    }
    const uint8_t *sizes = data + 1;
    const uint8_t *file = data + 1 + k;
    size_t len = size - 1 - k;
    if (len > STG_STREAM_TAIL) {
        return 0; /* beyond the window the stream documents its differences */
    }
    stg_limits lim;
    stg_limits_default(&lim);
    lim.profile = (flags & 1) ? STG_PROFILE_COMPAT : STG_PROFILE_STRICT;
    if (flags & 2) {
        lim.max_header_len = 4096;
        lim.max_tensors = 16;
        lim.max_rank = 4;
        lim.max_json_depth = 8;
        lim.max_findings = 8;
        lim.max_memory = 1u << 16;
    }
    stg_stream_options opt;
    stg_stream_options_default(&opt);
    opt.tensor_digests = true;
    stg_stream *s = NULL;
    if (stg_stream_new(&lim, &opt, &s) != STG_OK) {
        abort();
    }
    size_t pos = 0, turn = 0;
    bool any_nonzero = false;
    for (size_t i = 0; i < k; i++) {
        any_nonzero = any_nonzero || sizes[i] != 0;
    }
    while (pos < len) {
        size_t want = any_nonzero ? sizes[turn++ % k] : 1;
        if (want > len - pos) {
            want = len - pos;
        }
        stg_status st = stg_stream_feed(s, file + pos, want);
        if (st != STG_OK && st != STG_E_INVALID) {
            abort();
        }
        pos += want;
    }
    stg_report *got = NULL;
    if (stg_stream_finish(s, &got) != STG_OK || got == NULL) {
        abort();
    }
    stg_report *want = NULL;
    if (stg_validate_buffer(file, len, &lim, &want) != STG_OK) {
        abort();
    }
    if (!stg_fuzz_same_report(want, got, CMP)) {
        abort();
    }
    uint8_t d[32];
    char hex[65];
    if (stg_sha256_buffer(file, len, d) != STG_OK) {
        abort();
    }
    stg_hex_encode(d, 32, hex);
    if (stg_report_sha256(got) == NULL || strcmp(stg_report_sha256(got), hex) != 0 ||
        stg_report_size(got) != len) {
        abort();
    }
    size_t n = stg_stream_tensor_count(s);
    if (n > 0) {
        uint64_t covered = 0, data_start = 0;
        /* data start: 8 + the header length field */
        data_start = 8 + ((uint64_t)file[0] | ((uint64_t)file[1] << 8) | ((uint64_t)file[2] << 16) |
                          ((uint64_t)file[3] << 24) | ((uint64_t)file[4] << 32) |
                          ((uint64_t)file[5] << 40) | ((uint64_t)file[6] << 48) |
                          ((uint64_t)file[7] << 56));
        for (size_t i = 0; i < n; i++) {
            const stg_tensor *t = stg_stream_tensor_at(s, i);
            if (t == NULL || t->begin != covered || t->end < t->begin ||
                data_start + t->end > len) {
                abort();
            }
            uint8_t td[32];
            if (stg_stream_tensor_sha256(s, i, td) != STG_OK ||
                stg_sha256_buffer(file + data_start + t->begin, (size_t)(t->end - t->begin), d) !=
                    STG_OK ||
                memcmp(td, d, 32) != 0) {
                abort();
            }
            covered = t->end;
        }
        if (data_start + covered != len) {
            abort();
        }
    }
    stg_report_free(want);
    stg_report_free(got);
    stg_stream_free(s);
    return 0;
}
