/* joblib < 0.10 side files: resolve, contain, open and scan (loader/joblib_side.h). */
#include "joblib_side.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../parser/mem.h"
#include "open_file.h"
#include "path.h"
#include "within.h"

/* "outer!name" when the naming pickle sits inside a member (e.g. "(decompressed)"), else the
 * name: the member path a side file's findings carry. */
static char *side_member(const stg_side_file *sf)
{
    if (sf->member == NULL) {
        return stg_mem_strndup(sf->name, sf->name_len);
    }
    size_t a = strlen(sf->member);
    char *p = stg_mem_alloc(a + 1 + sf->name_len + 1);
    if (p != NULL) {
        memcpy(p, sf->member, a);
        p[a] = '!';
        memcpy(p + a + 1, sf->name, sf->name_len);
        p[a + 1 + sf->name_len] = '\0';
    }
    return p;
}

static void side_finding(stg_report *r, const stg_side_file *sf, const char *member, stg_code code,
                         const char *msg)
{
    stg_finding *f = stg_report_add(r, code, sf->offset, "%s", msg);
    stg_report_set_member(r, f, member, STG_NO_OFFSET);
}

void stg_joblib_side_unresolved(stg_report *r)
{
    for (size_t i = 0; i < r->side_count; i++) {
        char *member = side_member(&r->sides[i]);
        if (member == NULL) {
            stg_report_oom(r);
            return;
        }
        side_finding(r, &r->sides[i], member, STG_JOBLIB_SIDE_FILE_UNRESOLVED,
                     "joblib.load would open this side file next to the joblib file, but the "
                     "content has no folder here (a buffer or standard input): not scanned");
        stg_mem_free(member);
    }
}

/* Real paths already scanned (with how: np.load or ZF), so names that differ but lead to one
 * file ("a.npy", "./a.npy", "sub/../a.npy" is refused earlier) read it once. */
typedef struct side_seen {
    char **paths;
    bool *zfile;
    size_t count;
} side_seen;

static bool seen_before(side_seen *seen, const char *resolved, bool zfile, stg_report *r)
{
    for (size_t i = 0; i < seen->count; i++) {
        if (seen->zfile[i] == zfile && strcmp(seen->paths[i], resolved) == 0) {
            return true;
        }
    }
    char *copy = stg_mem_strndup(resolved, strlen(resolved));
    if (copy == NULL) {
        stg_report_oom(r);
        return true;
    }
    seen->paths[seen->count] = copy;
    seen->zfile[seen->count++] = zfile;
    return false;
}

/* Scans one side file (its path resolved inside root_real) into r. */
static void scan_side(const stg_side_file *sf, const char *folder, const char *root_real,
                      side_seen *seen, const stg_scan_options *opt, stg_side_scan_fn scan,
                      stg_report *r)
{
    char *member = side_member(sf);
    char *path = stg_path_join(folder, sf->name); /* as a C string: up to a NUL in the name */
    if (member == NULL || path == NULL) {
        stg_report_oom(r);
        stg_mem_free(member);
        stg_mem_free(path);
        return;
    }
    char resolved[PATH_MAX];
    struct stat st;
    int got = stat(path, &st);
    if (got != 0 && (errno == ENOENT || errno == ENOTDIR)) {
        side_finding(r, sf, member, STG_JOBLIB_SIDE_FILE_MISSING,
                     "a side file joblib.load would open is absent: joblib.load "
                     "raises, and a file put there later is not checked");
    } else if (realpath(path, resolved) == NULL) {
        side_finding(r, sf, member, STG_JOBLIB_SIDE_FILE_UNRESOLVED,
                     "a side file joblib.load would open could not be resolved: not scanned");
    } else if (!stg_path_inside(resolved, root_real)) {
        side_finding(r, sf, member, STG_JOBLIB_SIDE_FILE_ESCAPE,
                     "a side file joblib.load would open resolves outside the scan root (a "
                     "link): not followed, not scanned");
    } else if (got == 0 && !S_ISREG(st.st_mode)) {
        /* np.load would block on a FIFO or read a device: the side file is not one, and it is
         * never opened here (stg_scan_file_into would refuse it too, without blocking) */
        stg_finding *f = stg_report_add_sev(r, STG_NOT_REGULAR_FILE, STG_SEV_ERROR, sf->offset,
                                            "a side file joblib.load would open is a %s, not a "
                                            "regular file: not opened",
                                            stg_file_kind(st.st_mode));
        stg_report_set_member(r, f, member, STG_NO_OFFSET);
    } else if (seen_before(seen, resolved, sf->zfile, r)) {
        /* the same file read the same way: scanned once */
    } else {
        stg_scan_options sub_opt = *opt;
        sub_opt.digest = false;
        sub_opt.expected_sha256 = NULL;
        stg_report *sub = stg_report_new(&opt->limits);
        if (sub == NULL) {
            stg_report_oom(r);
        } else {
            scan(resolved, &sub_opt, sub);
            if (sf->zfile && sub->format == STG_FMT_JOBLIB) {
                stg_report_drop_raw_unknown(sub, 0);
            }
            stg_report_merge(r, sub, member, STG_NO_OFFSET);
            stg_report_free(sub);
        }
    }
    stg_mem_free(path);
    stg_mem_free(member);
}

void stg_joblib_side_scan(const char *joblib_path, const stg_scan_options *opt,
                          stg_side_scan_fn scan, stg_report *r)
{
    size_t n = r->side_count;
    if (n == 0) {
        return;
    }
    r->neighbours = true;
    char *folder = stg_path_dir(joblib_path);
    if (folder == NULL) {
        stg_report_oom(r);
        return;
    }
    char root_real[PATH_MAX];
    const char *root = opt->root != NULL ? opt->root : folder;
    if (realpath(root, root_real) == NULL) {
        stg_scan_add_errno(r, STG_IO_ERROR,
                           "the folder joblib side files are resolved in could not be resolved",
                           errno);
        stg_mem_free(folder);
        return;
    }
    side_seen seen = {stg_mem_calloc(n, sizeof(char *)), stg_mem_calloc(n, sizeof(bool)), 0};
    if (seen.paths == NULL || seen.zfile == NULL) {
        stg_report_oom(r);
        n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        /* a copy: merging a side file's report may move r->sides */
        stg_side_file sf = r->sides[i];
        bool repeat = false;
        for (size_t j = 0; j < i && !repeat; j++) {
            repeat = r->sides[j].name_len == sf.name_len && r->sides[j].zfile == sf.zfile &&
                     memcmp(r->sides[j].name, sf.name, sf.name_len) == 0;
        }
        if (!repeat) {
            scan_side(&sf, folder, root_real, &seen, opt, scan, r);
        }
    }
    for (size_t i = 0; i < seen.count; i++) {
        stg_mem_free(seen.paths[i]);
    }
    stg_mem_free(seen.paths);
    stg_mem_free(seen.zfile);
    stg_report_drop_side_files(r, r->side_count < n ? r->side_count : n);
    stg_mem_free(folder);
}
