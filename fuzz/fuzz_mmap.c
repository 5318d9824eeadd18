/* Target: stg_file_open and the stg_file_* accessors (loader/mmap.c). */
/* Needs: loader */
/* Seeds: corpus/mmap/ (and every other corpus file: any bytes are a candidate file).
 * Dict: fuzz/mmap.dict. Byte 0 = flags (bit 0: compat, bit 1: small limits); the rest is the file,
 * written to an anonymous memfd and opened through its /proc/self/fd path (no file system
 * writes). Properties checked (abort on violation):
 *  - open gives the findings, truncated count and verdict of the whole-buffer validation of the
 *    same bytes (stg_validate_buffer: both doors run the one pipeline of
 *    dispatch/safetensors.h; fuzz/compare.h compares); STG_OK exactly when the verdict is ok or
 *    warn, else STG_E_INVALID with no handle;
 *  - an opened file's tensors are in data order, tile the data section, are found by their exact
 *    name bytes, and stg_file_read_tensor and stg_file_tensor_data give the file's bytes;
 *  - header length and data start agree with the length field. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stguard/stguard.h"
#include "dispatch/check.h"
#include "fuzz/compare.h"
#include "validator/report.h"
#include "validator/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CMP (STG_FUZZ_CMP_MESSAGE)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    uint8_t flags = data[0];
    const uint8_t *file = data + 1;
    size_t len = size - 1;
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
    int fd = memfd_create("fuzz_mmap", MFD_CLOEXEC);
    if (fd < 0) {
        abort();
    }
    if (len > 0 && write(fd, file, len) != (ssize_t)len) {
        abort();
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    stg_file *f = NULL;
    stg_report *got = NULL;
    stg_status st = stg_file_open(path, &lim, &f, &got);
    stg_report *want = NULL;
    if (stg_validate_buffer(file, len, &lim, &want) != STG_OK || got == NULL) {
        abort();
    }
    if (!stg_fuzz_same_report(want, got, CMP)) {
        abort();
    }
    stg_verdict v = stg_report_verdict(got);
    if ((st == STG_OK) != (v <= STG_VERDICT_WARN) || (st == STG_OK) != (f != NULL) ||
        (st != STG_OK && st != STG_E_INVALID)) {
        abort();
    }
    if (f != NULL) {
        uint64_t n = stg_file_header_length(f);
        uint64_t start = stg_file_data_start(f);
        if (len < 8 || start != n + 8 || start > len) {
            abort();
        }
        uint64_t covered = 0;
        for (size_t i = 0; i < stg_file_tensor_count(f); i++) {
            const stg_tensor *t = stg_file_tensor_at(f, i);
            if (t->begin != covered || t->end < t->begin || start + t->end > len) {
                abort();
            }
            covered = t->end;
            if (stg_file_tensor_find(f, t->name, t->name_len) == NULL) {
                abort();
            }
            size_t tl = (size_t)(t->end - t->begin);
            uint8_t *copy = malloc(tl == 0 ? 1 : tl);
            if (copy == NULL || stg_file_read_tensor(f, t, copy, tl) != STG_OK ||
                memcmp(copy, file + start + t->begin, tl) != 0 ||
                (tl > 0 && memcmp(stg_file_tensor_data(f, t), copy, tl) != 0)) {
                abort();
            }
            free(copy);
        }
        if (start + covered != len) {
            abort();
        }
        for (size_t i = 0; i < stg_file_metadata_count(f); i++) {
            const char *k, *val;
            size_t kl, vl;
            if (stg_file_metadata_at(f, i, &k, &kl, &val, &vl) != STG_OK) {
                abort();
            }
        }
    }
    stg_file_close(f);
    stg_report_free(want);
    stg_report_free(got);
    close(fd);
    return 0;
}
