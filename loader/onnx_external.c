/* ONNX external-data files (see onnx_external.h). Each entry: the joined path must resolve
 * inside the root (a link out is as unsafe as ".."), then the resolved file is opened without
 * following a link in its last component and examined through that descriptor, so what is
 * checked is what was opened. */
#include "onnx_external.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../parser/mem.h"
#include "../parser/util.h"
#include "open_file.h"
#include "path.h"
#include "within.h"

static stg_finding *entry_finding(stg_report *r, const stg_onnx_external *e, const char *loc,
                                  stg_finding *f)
{
    if (f != NULL && e->tensor != NULL) {
        stg_report_set_tensor(r, f, (const char *)e->tensor, e->tensor_len);
    }
    stg_report_set_member(r, f, loc, STG_NO_OFFSET);
    return f;
}

/* A runtime would block on it (FIFO), read a device or fail: the model's data is not a file,
 * so the model is invalid, whatever not_regular_file means for a walked path. */
static void not_regular(stg_report *r, const stg_onnx_external *e, const char *loc,
                        const struct stat *st)
{
    entry_finding(r, e, loc,
                  stg_report_add_sev(r, STG_NOT_REGULAR_FILE, STG_SEV_ERROR, e->offset,
                                     "an external-data location is a %s, not a regular file: "
                                     "not opened",
                                     stg_file_kind(st->st_mode)));
}

static void check_one(const char *dir, const char *root, const stg_onnx_external *e, stg_report *r)
{
    /* safe entries hold no NUL, so the copy is the whole location */
    char *loc = stg_mem_strndup((const char *)e->location, e->location_len);
    char *path = loc != NULL ? stg_path_join(dir, loc) : NULL;
    if (path == NULL) {
        stg_report_oom(r);
        stg_mem_free(loc);
        return;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR) {
            entry_finding(r, e, loc,
                          stg_report_add(r, STG_ONNX_EXTERNAL_MISSING, e->offset,
                                         "an external-data file does not exist"));
        } else {
            entry_finding(r, e, loc,
                          stg_report_add(r, STG_IO_ERROR, e->offset,
                                         "an external-data file could not be examined "
                                         "(errno %d)",
                                         err));
        }
        goto done;
    }
    stg_within in = stg_path_within(root != NULL ? root : dir, path);
    if (in == STG_WITHIN_ROOT_ERROR || in == STG_WITHIN_PATH_ERROR ||
        in == STG_WITHIN_UNSUPPORTED) {
        entry_finding(r, e, loc,
                      stg_report_add(r, STG_IO_ERROR, e->offset,
                                     "an external-data path could not be resolved (errno %d)",
                                     errno));
        goto done;
    }
    if (in == STG_WITHIN_NO) {
        entry_finding(r, e, loc,
                      stg_report_add(r, STG_ONNX_EXTERNAL_PATH_UNSAFE, e->offset,
                                     "an external-data location resolves outside the model's "
                                     "folder (through a link): it is not opened"));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        not_regular(r, e, loc, &st);
        goto done;
    }
    /* Opened without blocking and refused unless a regular file before a byte is read
     * (loader/open_file.h): a FIFO named here would otherwise hang the scan for good. */
    char real[PATH_MAX];
    int fd = -1, err = 0;
    stg_open_result o = STG_OPEN_FAILED;
    if (realpath(path, real) == NULL) {
        err = errno;
    } else {
        o = stg_open_file(real, O_NOFOLLOW, &fd, &st, &err);
    }
    if (o == STG_OPEN_FAILED) {
        entry_finding(r, e, loc,
                      stg_report_add(r, STG_IO_ERROR, e->offset,
                                     "an external-data file could not be opened (errno %d)", err));
        goto done;
    }
    if (o == STG_OPEN_NOT_REGULAR) {
        not_regular(r, e, loc, &st); /* it was swapped since the stat */
        goto done;
    }
    close(fd);
    uint64_t size = (uint64_t)st.st_size;
    uint64_t need = e->data_offset;
    if (e->has_length && stg_add_u64(e->data_offset, e->data_length, &need)) {
        need = UINT64_MAX; /* the validator refused it already; never true for safe entries */
    }
    if (size < need || (!e->has_length && size < e->data_offset)) {
        entry_finding(r, e, loc,
                      stg_report_add(r, STG_ONNX_EXTERNAL_MISSING, e->offset,
                                     "the external-data file has %llu bytes, fewer than offset "
                                     "%llu + length %llu",
                                     (unsigned long long)size, (unsigned long long)e->data_offset,
                                     (unsigned long long)(e->has_length ? e->data_length : 0)));
    }
done:
    stg_mem_free(path);
    stg_mem_free(loc);
}

void stg_onnx_check_external_files(const char *model_dir, const char *root,
                                   const stg_onnx_external *ext, size_t n, stg_report *r)
{
    for (size_t i = 0; i < n; i++) {
        if (ext[i].safe) {
            check_one(model_dir, root, &ext[i], r);
        }
    }
}
