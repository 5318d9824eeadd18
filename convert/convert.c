/* stg_convert and stg_convert_buffer (include/stguard/stguard.h, docs/convert.md): scan, then
 * evaluate (eval.c, input.c), plan and stream the output (write.c), validate it strictly, and
 * only then hand it over (rename into place, or return the buffer). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../loader/digest.h"
#include "../parser/mem.h"
#include "../validator/limits.h"
#include "../validator/report.h"
#include "input.h"
#include "load.h"
#include "write.h"

#define STG_CV_BUFFER_OUTPUT_DEFAULT ((uint64_t)4 << 30)

stg_status stg_convert_options_init(stg_convert_options *out, uint32_t struct_version)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    memset(out, 0, sizeof *out);
    out->struct_version = struct_version;
    return stg_scan_options_init(&out->scan, struct_version);
}

void stg_convert_free(void *buf)
{
    stg_mem_free(buf);
}

/* The options a call works with: versions checked, limits accepted, defaults for NULL. */
static stg_status accept_options(const stg_convert_options *in, stg_convert_options *o)
{
    stg_convert_options_default(o);
    if (in == NULL) {
        return STG_OK;
    }
    if (!stg_struct_version_known(in->struct_version) ||
        !stg_struct_version_known(in->scan.struct_version)) {
        return STG_E_STRUCT_VERSION;
    }
    stg_limits lim;
    stg_status st = stg_limits_accept(&in->scan.limits, &lim);
    if (st != STG_OK) {
        return st;
    }
    o->scan.limits = lim;
    o->scan.policy = in->scan.policy;
    o->scan.expected_sha256 = in->scan.expected_sha256;
    o->scan.root = in->scan.root;
    o->select = in->select;
    o->force = in->force;
    o->drop_aliases = in->drop_aliases;
    o->strict_leaves = in->strict_leaves;
    o->sha256 = in->sha256;
    o->max_output = in->max_output;
    return STG_OK;
}

/* ---------------------------------------------------------------- the common core */

typedef struct job {
    stg_convert_options o;
    stg_report *rep;
    stg_cv_eval ev;
    stg_cv_plan plan;
} job;

/* Options accepted and the report made (*rep set). */
static stg_status job_start(job *j, const stg_convert_options *opt, stg_report **rep)
{
    memset(j, 0, sizeof *j);
    stg_status st = accept_options(opt, &j->o);
    if (st != STG_OK) {
        return st;
    }
    j->rep = stg_report_new(&j->o.scan.limits);
    if (j->rep == NULL) {
        return STG_E_NOMEM;
    }
    *rep = j->rep;
    return STG_OK;
}

/* Scan, evaluate, plan. STG_OK: job->plan is ready; else rep says why. */
static stg_status prepare(job *j, const uint8_t *buf, size_t len, const char *name_hint,
                          uint64_t max_output)
{
    stg_report *scan = NULL;
    stg_scan_options so = j->o.scan;
    so.digest = false;
    stg_status st = stg_scan_buffer(buf, len, name_hint, &so, &scan);
    if (st != STG_OK) {
        stg_report_free(scan);
        return st;
    }
    stg_report_merge(j->rep, scan, NULL, 0);
    stg_report_set_format(j->rep, stg_report_format(scan));
    stg_verdict v = stg_report_verdict(scan);
    bool runs = v <= STG_VERDICT_WARN && stg_cv_refuse_code_runs(scan, j->rep);
    stg_report_free(scan);
    if (v > STG_VERDICT_WARN || runs) {
        return STG_E_INVALID; /* the scan's findings say why */
    }
    stg_cv_limits cl;
    stg_cv_limits_from(&j->o.scan.limits, &cl);
    stg_cv_init(&j->ev, &cl);
    stg_cv *root = NULL;
    if (!stg_cv_read_input(buf, len, &j->ev, &root, j->rep)) {
        return STG_E_INVALID;
    }
    stg_cv_select sel = {j->o.select, j->o.drop_aliases, j->o.strict_leaves,
                         j->o.scan.limits.max_header_len};
    if (!stg_cv_plan_build(root, &sel, &j->plan, j->rep)) {
        return STG_E_INVALID;
    }
    uint64_t total = j->plan.header_len + j->plan.data_len;
    if (max_output != 0 && total > max_output) {
        stg_finding *f = stg_report_add(j->rep, STG_LIMIT_EXCEEDED, STG_NO_OFFSET,
                                        "the output would be %llu bytes, past max_output %llu: "
                                        "not converted",
                                        (unsigned long long)total, (unsigned long long)max_output);
        stg_report_set_limit(j->rep, f, "max_output");
        return STG_E_INVALID;
    }
    return STG_OK;
}

static void job_free(job *j)
{
    stg_cv_plan_free(&j->plan);
    stg_cv_free(&j->ev);
}

static stg_limits strict_limits(const stg_limits *from)
{
    stg_limits lim = *from;
    lim.profile = STG_PROFILE_STRICT;
    return lim;
}

/* ---------------------------------------------------------------- sinks */

typedef struct mem_sink {
    uint8_t *p;
    size_t len, cap;
    stg_sha256 *h;
} mem_sink;

static stg_status mem_write(void *ctx, const uint8_t *p, size_t n)
{
    mem_sink *m = ctx;
    if (n > m->cap - m->len) {
        void *q = stg_mem_realloc(m->p, m->len + n); /* exact: the plan said the total */
        if (q == NULL) {
            return STG_E_NOMEM;
        }
        m->p = q;
        m->cap = m->len + n;
    }
    memcpy(m->p + m->len, p, n);
    m->len += n;
    return m->h != NULL ? stg_sha256_update(m->h, p, n) : STG_OK;
}

typedef struct fd_sink {
    int fd;
    stg_sha256 *h;
    size_t page;
    const uint8_t *map; /* the input's mapping: only its pages are released */
    size_t map_len;
} fd_sink;

static stg_status fd_write(void *ctx, const uint8_t *p, size_t n)
{
    fd_sink *s = ctx;
    if (s->h != NULL && stg_sha256_update(s->h, p, n) != STG_OK) {
        return STG_E_CRYPTO;
    }
    while (n > 0) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return STG_E_IO;
        }
        p += w;
        n -= (size_t)w;
    }
    return STG_OK;
}

/* Storage bytes already copied leave the process's resident set (the mapping stays). Bytes
 * of an inflated member are heap memory, which MADV_DONTNEED would zero under a second tensor
 * of the same storage: only the mapping's pages are released. */
static void fd_release(void *ctx, const uint8_t *p, size_t n)
{
    fd_sink *s = ctx;
    uintptr_t lo = (uintptr_t)s->map, hi = lo + s->map_len;
    if (s->map == NULL || (uintptr_t)p < lo || (uintptr_t)p > hi || n > hi - (uintptr_t)p) {
        return;
    }
    uintptr_t a = (uintptr_t)p, b = a + n;
    a = (a + s->page - 1) & ~(uintptr_t)(s->page - 1);
    b &= ~(uintptr_t)(s->page - 1);
    if (b > a) {
        (void)madvise((void *)a, b - a, MADV_DONTNEED);
    }
}

static void set_digest(stg_report *rep, stg_sha256 *h)
{
    uint8_t d[32];
    if (h != NULL && stg_sha256_final(h, d) == STG_OK) {
        stg_report_set_sha256(rep, d);
    }
}

/* ---------------------------------------------------------------- buffer to buffer */

stg_status stg_convert_buffer(const void *in, size_t len, const stg_convert_options *opt,
                              void **out, size_t *out_len, stg_report **rep)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (out_len != NULL) {
        *out_len = 0;
    }
    if (rep != NULL) {
        *rep = NULL;
    }
    if ((in == NULL && len > 0) || out == NULL || out_len == NULL || rep == NULL) {
        return STG_E_BAD_ARG;
    }
    job j;
    stg_status st = job_start(&j, opt, rep);
    if (st != STG_OK) {
        return st;
    }
    static const uint8_t empty[1] = {0};
    const uint8_t *buf = in != NULL ? in : empty;
    uint64_t max_out = j.o.max_output != 0 ? j.o.max_output : STG_CV_BUFFER_OUTPUT_DEFAULT;
    if (max_out > SIZE_MAX) {
        max_out = SIZE_MAX;
    }
    st = prepare(&j, buf, len, NULL, max_out);
    mem_sink m = {NULL, 0, 0, NULL};
    if (st == STG_OK && j.o.sha256) {
        st = stg_sha256_new(&m.h);
    }
    if (st == STG_OK) {
        stg_cv_sink sink = {mem_write, NULL, &m};
        st = stg_cv_plan_write(&j.plan, &sink);
    }
    if (st == STG_OK) {
        stg_report *v = NULL;
        stg_limits lim = strict_limits(&j.o.scan.limits);
        st = stg_validate_buffer(m.p, m.len, &lim, &v);
        if (st == STG_OK && stg_report_verdict(v) != STG_VERDICT_OK) {
            stg_report_merge(j.rep, v, NULL, 0);
            st = STG_E_INVALID;
        }
        stg_report_free(v);
    }
    if (st == STG_OK) {
        set_digest(j.rep, m.h);
        *out = m.p;
        *out_len = m.len;
        m.p = NULL;
    }
    stg_sha256_free(m.h);
    stg_mem_free(m.p);
    job_free(&j);
    stg_report_finish(j.rep);
    return st;
}

/* ---------------------------------------------------------------- file to file */

static stg_status io_fail(stg_report *rep, const char *what, const char *path_role, int err)
{
    stg_report_add(rep, STG_IO_ERROR, STG_NO_OFFSET, "%s %s: %s", what, path_role, strerror(err));
    return STG_E_IO;
}

/* Folder part of path with a temporary name: "<dir>/.<base>.stguard-XXXXXX". */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dl;
    size_t n = dl + 1 + strlen(base) + sizeof ".stguard-XXXXXX";
    char *t = stg_mem_alloc(n);
    if (t != NULL) {
        memcpy(t, path, dl);
        snprintf(t + dl, n - dl, ".%s.stguard-XXXXXX", base);
    }
    return t;
}

/* Moves tmp to out: over an existing file only with force. */
static int place(const char *tmp, const char *out, bool force)
{
    if (force) {
        return rename(tmp, out);
    }
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE) == 0) {
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) {
        return -1;
    }
#endif
    if (link(tmp, out) != 0) {
        return -1;
    }
    return unlink(tmp);
}

stg_status stg_convert(const char *in, const char *out, const stg_convert_options *opt,
                       stg_report **rep)
{
    if (rep != NULL) {
        *rep = NULL;
    }
    if (in == NULL || out == NULL || rep == NULL) {
        return STG_E_BAD_ARG;
    }
    job j;
    stg_status st = job_start(&j, opt, rep);
    if (st != STG_OK) {
        return st;
    }
    stg_report_set_path(j.rep, in);
    struct stat sb;
    if (!j.o.force && lstat(out, &sb) == 0) {
        stg_report_add(j.rep, STG_IO_ERROR, STG_NO_OFFSET,
                       "the output file exists and was kept: the force option (stguard convert "
                       "--force) replaces it");
        st = STG_E_IO;
        stg_report_finish(j.rep);
        return st;
    }
    int fd = open(in, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        st = io_fail(j.rep, "open failed:", "input", errno);
        stg_report_finish(j.rep);
        return st;
    }
    uint8_t *map = NULL;
    size_t len = 0;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = io_fail(j.rep, "not a regular file:", "input", EINVAL);
    } else if (sb.st_size > 0) {
        len = (size_t)sb.st_size;
        void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            st = io_fail(j.rep, "mmap failed:", "input", errno);
        } else {
            map = p;
        }
    }
    close(fd);
    if (st == STG_OK) {
        static const uint8_t empty[1] = {0};
        const char *base = strrchr(in, '/');
        st = prepare(&j, map != NULL ? map : empty, len, base != NULL ? base + 1 : in,
                     j.o.max_output);
        if (map != NULL) {
            (void)madvise(map, len, MADV_DONTNEED); /* the scan's pages: read again as needed */
        }
    }
    char *tmp = NULL;
    int ofd = -1;
    fd_sink fs = {-1, NULL, (size_t)sysconf(_SC_PAGESIZE), map, len};
    if (st == STG_OK) {
        tmp = temp_template(out);
        ofd = tmp != NULL ? mkstemp(tmp) : -1;
        if (tmp == NULL) {
            st = STG_E_NOMEM;
        } else if (ofd < 0) {
            st = io_fail(j.rep, "cannot create the temporary file:", "output", errno);
            stg_mem_free(tmp);
            tmp = NULL;
        }
    }
    if (st == STG_OK && j.o.sha256) {
        st = stg_sha256_new(&fs.h);
    }
    if (st == STG_OK) {
        fs.fd = ofd;
        stg_cv_sink sink = {fd_write, fd_release, &fs};
        st = stg_cv_plan_write(&j.plan, &sink);
        if (st == STG_E_IO) {
            st = io_fail(j.rep, "write failed:", "output", errno);
        }
    }
    if (ofd >= 0) {
        if (st == STG_OK && (fchmod(ofd, 0644) != 0 || fsync(ofd) != 0)) {
            st = io_fail(j.rep, "fsync failed:", "output", errno);
        }
        if (close(ofd) != 0 && st == STG_OK) {
            st = io_fail(j.rep, "close failed:", "output", errno);
        }
    }
    if (st == STG_OK) {
        stg_file *f = NULL;
        stg_report *v = NULL;
        stg_limits lim = strict_limits(&j.o.scan.limits);
        stg_status vs = stg_file_open(tmp, &lim, &f, &v);
        if (vs != STG_OK || stg_report_verdict(v) != STG_VERDICT_OK) {
            if (v != NULL) {
                stg_report_merge(j.rep, v, NULL, 0);
            }
            st = vs == STG_OK ? STG_E_INVALID : vs;
        }
        stg_file_close(f);
        stg_report_free(v);
    }
    if (st == STG_OK && place(tmp, out, j.o.force) != 0) {
        st = io_fail(j.rep, "cannot move the output into place:", "output", errno);
    }
    if (tmp != NULL) {
        if (st != STG_OK) {
            (void)unlink(tmp);
        }
        stg_mem_free(tmp);
    }
    if (st == STG_OK) {
        set_digest(j.rep, fs.h);
    }
    stg_sha256_free(fs.h);
    if (map != NULL) {
        munmap(map, len);
    }
    job_free(&j);
    stg_report_finish(j.rep);
    return st;
}
