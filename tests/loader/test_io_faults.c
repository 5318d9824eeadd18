/* I/O failure: every system call (and OpenSSL EVP call) the loader makes fails in turn.
 *
 * The I/O analogue of test_alloc.c. The test is linked with GNU ld's --wrap for the libc and
 * OpenSSL EVP functions loader/ calls (their forwarders in loader/evp.h; tests/CMakeLists.txt
 * lists them all), so each call from the library
 * lands in a __wrap_ function below that counts it and, when told to, makes call number k of one
 * function misbehave:
 *   - fail with a chosen errno (open, read, pread, fstat, stat, lstat, mmap, realpath, opendir,
 *     readdir, pthread_create; EVP_MD_CTX_new returns NULL, the other EVP calls return 0);
 *   - EINTR once, before the real call (read, pread): must be retried transparently;
 *   - a short read (half the bytes asked) or end of file (0) (read, pread);
 *   - a file that changed under the scan: fstat/stat/lstat report another inode or device,
 *     fstat/stat another size, fstat a FIFO or a negative size;
 *   - a digest of the wrong length from EVP_DigestFinal_ex;
 *   - an allocation failure (stg_mem_*, the library's only allocator), also for the loader entry
 *     points test_alloc does not reach (stg_scan_fd, the tree walk, sharded models).
 * For k = 1, 2, ... each entry point runs until an iteration completes without reaching call k.
 * Every time the result must be either exactly the result without faults (the fault was absorbed:
 * EINTR, short reads and a failed pthread_create must always be), or a clean failure: a report
 * whose verdict is `error` with an io_error or file_changed finding (io_error, carrying the errno
 * as text or number, when a system call failed with one; never file_changed for a failed read),
 * or an error status with no object handed out. When read() ends standard input early, the
 * result must be exactly that of the bytes that arrived.
 * Never a crash, never a better verdict for a file that could not be read, never a tensor read
 * that says STG_OK with bytes other than the file's. After every call no descriptor is left open
 * (/proc/self/fd is counted) and every stg_mem allocation is freed; under the asan preset
 * LeakSanitizer also checks OpenSSL's and libc's memory at exit. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/scan.h"
#include "stguard/stguard.h"
#include "testutil.h"
#include "zipbuild.h"

/* ------------------------------------------------------------------------ fault injection */

typedef enum io_fn {
    IO_OPEN,
    IO_READ,
    IO_PREAD,
    IO_FSTAT,
    IO_STAT,
    IO_LSTAT,
    IO_MMAP,
    IO_REALPATH,
    IO_OPENDIR,
    IO_READDIR,
    IO_THREAD,
    IO_EVP_NEW,
    IO_EVP_INIT,
    IO_EVP_UPDATE,
    IO_EVP_FINAL,
    IO_ALLOC,
    IO_FN_COUNT
} io_fn;

static const char *const FN_NAMES[IO_FN_COUNT] = {
    "open",           "read",           "pread",           "fstat",   "stat",    "lstat",
    "mmap",           "realpath",       "opendir",         "readdir", "pthread", "EVP_new",
    "EVP_DigestInit", "EVP_DigestUpd.", "EVP_DigestFinal", "stg_mem"};

typedef enum io_mode {
    MODE_FAIL,        /* -1 / NULL / 0 with err */
    MODE_EINTR,       /* -1 with EINTR, once; the retry is the next call */
    MODE_SHORT,       /* half of what was asked (at least 1 byte) */
    MODE_EOF,         /* 0: the file ended here */
    MODE_OTHER_INODE, /* the stat call reports another inode */
    MODE_OTHER_DEV,   /* the stat call reports another device */
    MODE_RESIZED,     /* the stat call reports one byte more */
    MODE_FIFO,        /* fstat reports a FIFO */
    MODE_HUGE         /* fstat reports a negative size (too large for off_t) */
} io_mode;

static const char *const MODE_NAMES[] = {"fail",   "EINTR", "short", "EOF", "inode",
                                         "device", "size",  "FIFO",  "huge"};

typedef struct fault {
    io_fn fn;
    io_mode mode;
    int err;
} fault;

static struct {
    atomic_bool armed;
    fault f;
    unsigned long k; /* 1-based call of f.fn to disturb; 0 = none */
    fault always;    /* a fault on every call of always.fn (IO_FN_COUNT: none) */
    atomic_ulong calls[IO_FN_COUNT];
    atomic_long live;        /* stg_mem blocks allocated and not freed */
    atomic_ulong read_bytes; /* bytes read() delivered since arm() */
} inj = {.always = {IO_FN_COUNT, MODE_FAIL, 0}};

/* Faults that fired over the whole run, per function (checked by the last test). */
static unsigned long fired_total[IO_FN_COUNT];
static atomic_bool fired;

static void arm(void)
{
    for (int i = 0; i < IO_FN_COUNT; i++) {
        atomic_store(&inj.calls[i], 0);
    }
    atomic_store(&fired, false);
    atomic_store(&inj.read_bytes, 0);
    atomic_store(&inj.armed, true);
}

/* Arms again after a pause, counting on from where the last arm() left off. */
static void resume(void)
{
    atomic_store(&inj.armed, true);
}

static void disarm(void)
{
    atomic_store(&inj.armed, false);
}

/* Counts a call of fn; the fault to apply to it, or NULL to make the real call. */
static const fault *hit(io_fn fn)
{
    if (!atomic_load(&inj.armed)) {
        return NULL;
    }
    if (inj.always.fn == fn) {
        return &inj.always;
    }
    unsigned long n = atomic_fetch_add(&inj.calls[fn], 1) + 1;
    if (inj.f.fn != fn || n != inj.k) {
        return NULL;
    }
    atomic_store(&fired, true);
    return &inj.f;
}

/* ---- libc */

/* What the linker sends the library's calls to (prototypes for -Wmissing-prototypes). */
int __wrap_open(const char *path, int flags, ...);
int __wrap___open_2(const char *path, int flags);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap___read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __wrap___pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
int __wrap_fstat(int fd, struct stat *st);
int __wrap_stat(const char *path, struct stat *st);
int __wrap_lstat(const char *path, struct stat *st);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
char *__wrap_realpath(const char *path, char *resolved);
char *__wrap___realpath_chk(const char *path, char *resolved, size_t resolvedlen);
DIR *__wrap_opendir(const char *name);
struct dirent *__wrap_readdir(DIR *d);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
EVP_MD_CTX *__wrap_stg_evp_md_ctx_new(void);
int __wrap_stg_evp_digest_init_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl);
int __wrap_stg_evp_digest_update(EVP_MD_CTX *ctx, const void *d, size_t n);
int __wrap_stg_evp_digest_final_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *n);
void *__wrap_stg_mem_alloc(size_t n);
void *__wrap_stg_mem_calloc(size_t count, size_t size);
void *__wrap_stg_mem_realloc(void *p, size_t n);
char *__wrap_stg_mem_strndup(const char *s, size_t n);
void __wrap_stg_mem_free(void *p);

int __real_open(const char *path, int flags, ...);
int __real___open_2(const char *path, int flags);
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __real___read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __real___pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
int __real_fstat(int fd, struct stat *st);
int __real_stat(const char *path, struct stat *st);
int __real_lstat(const char *path, struct stat *st);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
char *__real_realpath(const char *path, char *resolved);
char *__real___realpath_chk(const char *path, char *resolved, size_t resolvedlen);
DIR *__real_opendir(const char *name);
struct dirent *__real_readdir(DIR *d);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

int __wrap_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if ((flags & O_CREAT) != 0) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    const fault *h = hit(IO_OPEN);
    if (h != NULL) {
        errno = h->err;
        return -1;
    }
    return __real_open(path, flags, mode);
}

/* _FORTIFY_SOURCE builds (release) call this when the flags are not a constant. */
int __wrap___open_2(const char *path, int flags)
{
    const fault *h = hit(IO_OPEN);
    if (h != NULL) {
        errno = h->err;
        return -1;
    }
    return __real___open_2(path, flags);
}

/* read and pread share their faults; real() is the undisturbed call with n bytes. */
typedef ssize_t (*read_call)(const void *ctx, size_t n);

static ssize_t disturbed_read(io_fn fn, size_t n, read_call real, const void *ctx)
{
    const fault *h = hit(fn);
    if (h == NULL) {
        return real(ctx, n);
    }
    switch (h->mode) {
    case MODE_EINTR: errno = EINTR; return -1;
    case MODE_SHORT: return real(ctx, n > 1 ? n / 2 : n);
    case MODE_EOF: return 0;
    case MODE_FAIL:
    case MODE_OTHER_INODE:
    case MODE_OTHER_DEV:
    case MODE_RESIZED:
    case MODE_FIFO:
    case MODE_HUGE: break;
    }
    errno = h->err;
    return -1;
}

typedef struct read_args {
    int fd;
    void *buf;
    off_t off;
    size_t buflen;
    bool chk;
} read_args;

static ssize_t real_read(const void *ctx, size_t n)
{
    const read_args *a = ctx;
    return a->chk ? __real___read_chk(a->fd, a->buf, n, a->buflen) : __real_read(a->fd, a->buf, n);
}

static ssize_t real_pread(const void *ctx, size_t n)
{
    const read_args *a = ctx;
    return a->chk ? __real___pread_chk(a->fd, a->buf, n, a->off, a->buflen)
                  : __real_pread(a->fd, a->buf, n, a->off);
}

static ssize_t counted_read(ssize_t got)
{
    if (got > 0 && atomic_load(&inj.armed)) {
        atomic_fetch_add(&inj.read_bytes, (unsigned long)got);
    }
    return got;
}

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
    read_args a = {fd, buf, 0, 0, false};
    return counted_read(disturbed_read(IO_READ, n, real_read, &a));
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
    read_args a = {fd, buf, off, 0, false};
    return disturbed_read(IO_PREAD, n, real_pread, &a);
}

/* _FORTIFY_SOURCE builds (release) call these when the buffer size is known. */
ssize_t __wrap___read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    read_args a = {fd, buf, 0, buflen, true};
    return counted_read(disturbed_read(IO_READ, n, real_read, &a));
}

ssize_t __wrap___pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    read_args a = {fd, buf, off, buflen, true};
    return disturbed_read(IO_PREAD, n, real_pread, &a);
}

/* A stat call: fails, or reports a file that is not the one the library saw before. */
static int disturbed_stat(io_fn fn, int rc, struct stat *st)
{
    const fault *h = hit(fn);
    if (h == NULL) {
        return rc;
    }
    if (h->mode == MODE_FAIL) {
        errno = h->err;
        return -1;
    }
    if (rc != 0) {
        return rc;
    }
    switch (h->mode) {
    case MODE_OTHER_INODE: st->st_ino += 1000003; break;
    case MODE_OTHER_DEV: st->st_dev = st->st_dev == 0 ? 1 : 0; break; /* 0: no real device */
    case MODE_RESIZED: st->st_size += 1; break;
    case MODE_FIFO: st->st_mode = (st->st_mode & ~(mode_t)S_IFMT) | S_IFIFO; break;
    case MODE_HUGE: st->st_size = -1; break;
    case MODE_FAIL:
    case MODE_EINTR:
    case MODE_SHORT:
    case MODE_EOF: break;
    }
    return rc;
}

int __wrap_fstat(int fd, struct stat *st)
{
    return disturbed_stat(IO_FSTAT, __real_fstat(fd, st), st);
}

int __wrap_stat(const char *path, struct stat *st)
{
    return disturbed_stat(IO_STAT, __real_stat(path, st), st);
}

int __wrap_lstat(const char *path, struct stat *st)
{
    return disturbed_stat(IO_LSTAT, __real_lstat(path, st), st);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    const fault *h = hit(IO_MMAP);
    if (h != NULL) {
        errno = h->err;
        return MAP_FAILED;
    }
    return __real_mmap(addr, len, prot, flags, fd, off);
}

char *__wrap_realpath(const char *path, char *resolved)
{
    const fault *h = hit(IO_REALPATH);
    if (h != NULL) {
        errno = h->err;
        return NULL;
    }
    return __real_realpath(path, resolved);
}

char *__wrap___realpath_chk(const char *path, char *resolved, size_t resolvedlen)
{
    const fault *h = hit(IO_REALPATH);
    if (h != NULL) {
        errno = h->err;
        return NULL;
    }
    return __real___realpath_chk(path, resolved, resolvedlen);
}

DIR *__wrap_opendir(const char *name)
{
    const fault *h = hit(IO_OPENDIR);
    if (h != NULL) {
        errno = h->err;
        return NULL;
    }
    return __real_opendir(name);
}

struct dirent *__wrap_readdir(DIR *d)
{
    const fault *h = hit(IO_READDIR);
    if (h != NULL) {
        errno = h->err;
        return NULL;
    }
    return __real_readdir(d);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    const fault *h = hit(IO_THREAD);
    if (h != NULL) {
        return h->err;
    }
    return __real_pthread_create(t, attr, fn, arg);
}

/* ---- OpenSSL EVP (loader/digest.c calls them through loader/evp.h) */

EVP_MD_CTX *__real_stg_evp_md_ctx_new(void);
int __real_stg_evp_digest_init_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl);
int __real_stg_evp_digest_update(EVP_MD_CTX *ctx, const void *d, size_t n);
int __real_stg_evp_digest_final_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *n);

EVP_MD_CTX *__wrap_stg_evp_md_ctx_new(void)
{
    return hit(IO_EVP_NEW) ? NULL : __real_stg_evp_md_ctx_new();
}

int __wrap_stg_evp_digest_init_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl)
{
    return hit(IO_EVP_INIT) ? 0 : __real_stg_evp_digest_init_ex(ctx, type, impl);
}

int __wrap_stg_evp_digest_update(EVP_MD_CTX *ctx, const void *d, size_t n)
{
    return hit(IO_EVP_UPDATE) ? 0 : __real_stg_evp_digest_update(ctx, d, n);
}

int __wrap_stg_evp_digest_final_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *n)
{
    const fault *h = hit(IO_EVP_FINAL);
    if (h == NULL) {
        return __real_stg_evp_digest_final_ex(ctx, md, n);
    }
    if (h->mode == MODE_SHORT) { /* success, but a digest of the wrong length */
        int rc = __real_stg_evp_digest_final_ex(ctx, md, n);
        *n = 20;
        return rc;
    }
    return 0;
}

/* ---- the library's allocator (parser/mem.c): counted always, failed when told to */

void *__real_stg_mem_alloc(size_t n);
void *__real_stg_mem_calloc(size_t count, size_t size);
void *__real_stg_mem_realloc(void *p, size_t n);
char *__real_stg_mem_strndup(const char *s, size_t n);
void __real_stg_mem_free(void *p);

static void *counted(void *p)
{
    if (p != NULL) {
        atomic_fetch_add(&inj.live, 1);
    }
    return p;
}

void *__wrap_stg_mem_alloc(size_t n)
{
    return hit(IO_ALLOC) ? NULL : counted(__real_stg_mem_alloc(n));
}

void *__wrap_stg_mem_calloc(size_t count, size_t size)
{
    return hit(IO_ALLOC) ? NULL : counted(__real_stg_mem_calloc(count, size));
}

void *__wrap_stg_mem_realloc(void *p, size_t n)
{
    if (hit(IO_ALLOC)) {
        return NULL;
    }
    void *q = __real_stg_mem_realloc(p, n);
    return p == NULL ? counted(q) : q;
}

char *__wrap_stg_mem_strndup(const char *s, size_t n)
{
    return hit(IO_ALLOC) ? NULL : counted(__real_stg_mem_strndup(s, n));
}

void __wrap_stg_mem_free(void *p)
{
    if (p != NULL) {
        atomic_fetch_sub(&inj.live, 1);
    }
    __real_stg_mem_free(p);
}

/* ------------------------------------------------------------------------ outcomes */

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n;
}

typedef struct strbuf {
    char *p;
    size_t len, cap;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    ck_assert_int_ge(n, 0);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* What one report says, comparable across runs, plus the facts the checks need. */
typedef struct report_view {
    bool present;
    stg_verdict verdict;
    bool io_error, changed, special, errno_shown;
    char *text; /* verdict, format, size, digest, findings */
    char *blob; /* stg_report_blob, "-" when none */
} report_view;

static void view_report(const stg_report *r, report_view *v)
{
    memset(v, 0, sizeof *v);
    strbuf b = {0};
    sb_printf(&b, "-");
    v->present = r != NULL;
    if (r != NULL) {
        b.len = 0;
        v->verdict = stg_report_verdict(r);
        const char *sha = stg_report_sha256(r);
        const char *blob = stg_report_blob(r);
        v->blob = strdup(blob != NULL ? blob : "-");
        sb_printf(&b, "%s %s size=%llu sha=%s globals=%zu [", stg_verdict_name(v->verdict),
                  stg_format_name(stg_report_format(r)), (unsigned long long)stg_report_size(r),
                  sha != NULL ? sha : "-", stg_report_global_count(r));
        char want_text[160], want_num[32];
        snprintf(want_text, sizeof want_text, "%s", strerror(inj.f.err));
        snprintf(want_num, sizeof want_num, "errno %d", inj.f.err);
        for (size_t i = 0; i < stg_report_count(r); i++) {
            const stg_finding *f = stg_report_at(r, i);
            sb_printf(&b, "%s/%s@", stg_code_name(f->code), stg_severity_name(f->severity));
            if (f->has_offset) {
                sb_printf(&b, "%llu", (unsigned long long)f->offset);
            } else {
                sb_printf(&b, "-");
            }
            sb_printf(&b, "%s%s: %s; ", f->member != NULL ? " in " : "",
                      f->member != NULL ? f->member : "", f->message);
            if (f->code == STG_IO_ERROR) {
                v->io_error = true;
                v->errno_shown |= inj.f.err != 0 && (strstr(f->message, want_text) != NULL ||
                                                     strstr(f->message, want_num) != NULL);
            }
            v->changed |= f->code == STG_FILE_CHANGED_CODE;
            v->special |= f->code == STG_NOT_REGULAR_FILE;
        }
        sb_printf(&b, "]");
    }
    v->text = b.p;
    if (v->blob == NULL) {
        v->blob = strdup("-");
    }
}

#define MAX_ITEMS 64

/* What one run of an entry point produced: a status and reports (one, or one per walk record),
 * and for the tensor readers the status of each read. */
typedef struct outcome {
    stg_status status;
    size_t nreports;
    char *names[MAX_ITEMS]; /* record paths (walk) */
    report_view reports[MAX_ITEMS];
    size_t nreads;
    stg_status reads[MAX_ITEMS];
} outcome;

static void outcome_free(outcome *o)
{
    for (size_t i = 0; i < o->nreports; i++) {
        free(o->names[i]);
        free(o->reports[i].text);
        free(o->reports[i].blob);
    }
    memset(o, 0, sizeof *o);
}

static void add_report(outcome *o, const char *name, const stg_report *r)
{
    ck_assert_uint_lt(o->nreports, MAX_ITEMS);
    o->names[o->nreports] = strdup(name != NULL ? name : "");
    view_report(r, &o->reports[o->nreports]);
    o->nreports++;
}

static void add_read(outcome *o, stg_status s)
{
    ck_assert_uint_lt(o->nreads, MAX_ITEMS);
    o->reads[o->nreads++] = s;
}

static bool same_outcome(const outcome *a, const outcome *b)
{
    if (a->status != b->status || a->nreports != b->nreports || a->nreads != b->nreads) {
        return false;
    }
    for (size_t i = 0; i < a->nreports; i++) {
        if (strcmp(a->names[i], b->names[i]) != 0 ||
            strcmp(a->reports[i].text, b->reports[i].text) != 0 ||
            strcmp(a->reports[i].blob, b->reports[i].blob) != 0) {
            return false;
        }
    }
    return memcmp(a->reads, b->reads, a->nreads * sizeof a->reads[0]) == 0;
}

static void print_outcome(strbuf *b, const outcome *o)
{
    sb_printf(b, "status %s;", stg_status_name(o->status));
    for (size_t i = 0; i < o->nreports; i++) {
        sb_printf(b, " {%s: %s blob=%s}", o->names[i], o->reports[i].text, o->reports[i].blob);
    }
    for (size_t i = 0; i < o->nreads; i++) {
        sb_printf(b, " read%zu=%s", i, stg_status_name(o->reads[i]));
    }
}

/* ------------------------------------------------------------------------ inputs */

typedef struct fixture {
    char *dir;
    char small[4096], big[4096], pickle[4096], link[4096], zlib_member[4096];
    char model[4096], index[4096];
    char tree[4096], hf_snapshot[4096];
    char fd_stream[4096], fd_pickle[4096], fd_claim[4096];
    uint8_t *big_bytes;
    size_t big_len;
} fixture;

static fixture fx;

static const char *const SMALL_HEADER =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
    "\"b\":{\"dtype\":\"U8\",\"shape\":[2,4],\"data_offsets\":[8,16]}}";
static const uint8_t DATA16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* pickle protocol 2: os.system("id") through REDUCE. */
static const uint8_t PICKLE_EVIL[] =
    "\200\002cos\nsystem\nq\000X\002\000\000\000idq\001\205q\002Rq\003.";

/* PICKLE_EVIL through zlib with a 1 KiB window: the stream starts 0x28 (MARK), so sniffing the
 * member walks a pickle that allocates before it fails. A walk refused memory there must not
 * turn the member into plain data (the zlib rule comes after the pickle rule). */
static const uint8_t ZLIB_EVIL_W10[] = {0x28, 0x91, 0x6b, 0x60, 0x4a, 0xce, 0x2f, 0xe6, 0x2a, 0xae,
                                        0x2c, 0x2e, 0x49, 0xcd, 0xe5, 0x2a, 0x64, 0x88, 0x60, 0x62,
                                        0x60, 0x60, 0xc8, 0x4c, 0x29, 0x64, 0x6c, 0x2d, 0x64, 0x0a,
                                        0x2a, 0x64, 0xd6, 0x03, 0x00, 0x93, 0xe4, 0x08, 0x77};

#define BIG_DATA 90000 /* over 64 KiB (the file is mapped), the file size no page multiple */

static uint8_t *st_file(const char *header, const void *data, size_t data_len, size_t *len)
{
    size_t n = strlen(header);
    size_t pad = (8 - (8 + n) % 8) % 8;
    uint8_t *p = tu_st_file(header, pad, data, data_len, len);
    ck_assert_ptr_nonnull(p);
    return p;
}

static void join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, 4096, "%s/%s", dir, name);
    ck_assert(n > 0 && n < 4096);
}

static void write_at(char *out, const char *dir, const char *name, const void *buf, size_t len)
{
    join(out, dir, name);
    ck_assert_int_eq(tu_write_file(out, buf, len), 0);
}

static void make_dir(char *out, const char *parent, const char *name)
{
    join(out, parent, name);
    ck_assert_int_eq(mkdir(out, 0700), 0);
}

static void make_fixture(void)
{
    memset(&fx, 0, sizeof fx);
    fx.dir = tu_tempdir();
    ck_assert_ptr_nonnull(fx.dir);
    char p[4096];

    size_t small_len;
    uint8_t *small = st_file(SMALL_HEADER, DATA16, sizeof DATA16, &small_len);
    write_at(fx.small, fx.dir, "small.safetensors", small, small_len);

    uint8_t *data = malloc(BIG_DATA);
    ck_assert_ptr_nonnull(data);
    for (size_t i = 0; i < BIG_DATA; i++) {
        data[i] = (uint8_t)(i * 7 + 3);
    }
    char header[256];
    snprintf(header, sizeof header,
             "{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
             "\"y\":{\"dtype\":\"U8\",\"shape\":[%d],\"data_offsets\":[16,%d]}}",
             BIG_DATA - 16, BIG_DATA);
    fx.big_bytes = st_file(header, data, BIG_DATA, &fx.big_len);
    ck_assert_uint_ne(fx.big_len % 4096, 0);
    write_at(fx.big, fx.dir, "big.safetensors", fx.big_bytes, fx.big_len);
    write_at(fx.pickle, fx.dir, "evil.pkl", PICKLE_EVIL, sizeof PICKLE_EVIL - 1);
    zb_entry member = zb_file("archive/data", ZLIB_EVIL_W10, sizeof ZLIB_EVIL_W10);
    size_t zip_len;
    uint8_t *zip = zb_build(&member, 1, NULL, &zip_len, NULL);
    ck_assert_ptr_nonnull(zip);
    write_at(fx.zlib_member, fx.dir, "zlib-member.zip", zip, zip_len);
    free(zip);
    join(fx.link, fx.dir, "link.safetensors");
    ck_assert_int_eq(symlink("small.safetensors", fx.link), 0);

    /* Standard-input routes of stg_scan_fd, each over 64 KiB so that several reads happen:
     * safetensors by content (the stream), a pickle (buffered), and a safetensors-looking
     * prefix whose header claims more bytes than arrive (kept, then scanned as a buffer). */
    write_at(fx.fd_stream, fx.dir, "stream.bin", fx.big_bytes, fx.big_len);
    size_t plen = 100000 + 64;
    uint8_t *pk = malloc(plen);
    ck_assert_ptr_nonnull(pk);
    size_t n = 0, blen = 100000;
    pk[n++] = 0x80;
    pk[n++] = 2;
    pk[n++] = 'X';
    for (int i = 0; i < 4; i++) {
        pk[n++] = (uint8_t)(blen >> (8 * i));
    }
    memset(pk + n, 'a', blen);
    n += blen;
    pk[n++] = '0'; /* POP */
    memcpy(pk + n, PICKLE_EVIL + 2, sizeof PICKLE_EVIL - 3);
    n += sizeof PICKLE_EVIL - 3;
    write_at(fx.fd_pickle, fx.dir, "pickle.bin", pk, n);
    free(pk);
    size_t clen = 100000;
    uint8_t *claim = malloc(clen);
    ck_assert_ptr_nonnull(claim);
    memset(claim, ' ', clen);
    uint64_t hl = 200000;
    for (int i = 0; i < 8; i++) {
        claim[i] = (uint8_t)(hl >> (8 * i));
    }
    claim[8] = '{';
    write_at(fx.fd_claim, fx.dir, "claim.bin", claim, clen);
    free(claim);

    /* A sharded model: the index and two shards. */
    make_dir(fx.model, fx.dir, "model");
    size_t s1_len, s2_len;
    uint8_t *s1 = st_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}", "abc",
                          3, &s1_len);
    uint8_t *s2 = st_file("{\"b\":{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[0,5]}}",
                          "defgh", 5, &s2_len);
    write_at(p, fx.model, "model-00001-of-00002.safetensors", s1, s1_len);
    write_at(p, fx.model, "model-00002-of-00002.safetensors", s2, s2_len);
    const char *json = "{\"metadata\":{\"total_size\":8},\"weight_map\":{"
                       "\"a\":\"model-00001-of-00002.safetensors\","
                       "\"b\":\"model-00002-of-00002.safetensors\"}}";
    write_at(fx.index, fx.model, "model.safetensors.index.json", json, strlen(json));

    /* A tree: files, a big file, a subfolder with a pickle, a link inside the root to a file
     * also walked directly, and a FIFO (never opened). */
    char sub[4096];
    make_dir(fx.tree, fx.dir, "tree");
    write_at(p, fx.tree, "a.safetensors", small, small_len);
    write_at(p, fx.tree, "big.safetensors", fx.big_bytes, fx.big_len);
    make_dir(sub, fx.tree, "sub");
    write_at(p, sub, "evil.pkl", PICKLE_EVIL, sizeof PICKLE_EVIL - 1);
    join(p, sub, "link.safetensors");
    ck_assert_int_eq(symlink("../a.safetensors", p), 0);
    join(p, fx.tree, "pipe");
    ck_assert_int_eq(mkfifo(p, 0600), 0);

    /* A Hugging Face cache: a snapshot link into blobs/, the blob named by its SHA-256. */
    stg_report *r = NULL;
    ck_assert_int_eq(stg_scan_buffer(small, small_len, NULL, NULL, &r), STG_OK);
    char sha[65];
    snprintf(sha, sizeof sha, "%s", stg_report_sha256(r));
    stg_report_free(r);
    char repo[4096], blobs[4096], snaps[4096];
    make_dir(repo, fx.dir, "models--org--name");
    make_dir(blobs, repo, "blobs");
    write_at(p, blobs, sha, small, small_len);
    make_dir(snaps, repo, "snapshots");
    make_dir(fx.hf_snapshot, snaps, "main");
    join(p, fx.hf_snapshot, "model.safetensors");
    char target[128];
    snprintf(target, sizeof target, "../../blobs/%s", sha);
    ck_assert_int_eq(symlink(target, p), 0);

    free(small);
    free(data);
    free(s1);
    free(s2);
}

static void free_fixture(void)
{
    tu_rmtree(fx.dir);
    free(fx.dir);
    free(fx.big_bytes);
}

/* ------------------------------------------------------------------------ entry points */

typedef struct input {
    const char *what;
    const char *path;
    const char *hint; /* stg_scan_fd's name hint */
    const char *root; /* stg_scan_path's scan root */
} input;

typedef void (*entry_fn)(const input *in, outcome *out);

static void run_scan_path(const input *in, outcome *out)
{
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    opt.root = in->root;
    stg_report *r = NULL;
    arm();
    out->status = stg_scan_path(in->path, &opt, &r);
    disarm();
    add_report(out, in->path, r);
    stg_report_free(r);
}

static void run_scan_fd(const input *in, outcome *out)
{
    int fd = open(in->path, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *r = NULL;
    arm();
    out->status = stg_scan_fd(fd, "-", in->hint, &opt, &r);
    disarm();
    close(fd);
    add_report(out, "-", r);
    stg_report_free(r);
}

/* Reads every tensor through the safe path; a read that says STG_OK must give the file's bytes. */
static void check_reads(outcome *out, const char *path, size_t count,
                        const stg_tensor *(*at)(const void *, size_t),
                        stg_status (*read_fn)(const void *, const stg_tensor *, void *, size_t),
                        const void *obj, uint64_t data_start)
{
    size_t file_len = 0;
    uint8_t *file = tu_read_file(path, &file_len);
    ck_assert_ptr_nonnull(file);
    for (size_t i = 0; i < count; i++) {
        const stg_tensor *t = at(obj, i);
        size_t n = (size_t)(t->end - t->begin);
        uint8_t *dst = malloc(n + 1);
        ck_assert_ptr_nonnull(dst);
        memset(dst, 0xAA, n + 1);
        resume();
        stg_status s = read_fn(obj, t, dst, n);
        disarm();
        add_read(out, s);
        if (s == STG_OK) {
            ck_assert_msg(memcmp(dst, file + data_start + t->begin, n) == 0,
                          "%s: tensor %zu read STG_OK with other bytes than the file's", path, i);
        }
        free(dst);
    }
    free(file);
}

static const stg_tensor *file_at(const void *f, size_t i)
{
    return stg_file_tensor_at(f, i);
}

static stg_status file_read(const void *f, const stg_tensor *t, void *dst, size_t len)
{
    return stg_file_read_tensor(f, t, dst, len);
}

static void run_file_open(const input *in, outcome *out)
{
    stg_file *f = NULL;
    stg_report *r = NULL;
    arm();
    out->status = stg_file_open(in->path, NULL, &f, &r);
    disarm();
    ck_assert_msg(out->status == STG_OK || f == NULL, "stg_file_open: %s with a file handed out",
                  stg_status_name(out->status));
    add_report(out, in->path, r);
    stg_report_free(r);
    if (f != NULL) {
        check_reads(out, in->path, stg_file_tensor_count(f), file_at, file_read, f,
                    stg_file_data_start(f));
        stg_file_close(f);
    }
}

static void run_model_open(const input *in, outcome *out)
{
    stg_model *m = NULL;
    stg_report *r = NULL;
    arm();
    out->status = stg_model_open(in->path, NULL, &m, &r);
    disarm();
    ck_assert_msg(out->status == STG_OK || m == NULL, "stg_model_open: %s with a model handed out",
                  stg_status_name(out->status));
    add_report(out, in->path, r);
    stg_report_free(r);
    if (m != NULL) {
        /* Bytes are compared per shard file below (each shard's data starts at 8 + n). */
        size_t count = stg_model_tensor_count(m);
        for (size_t i = 0; i < count; i++) {
            const stg_tensor *t = stg_model_tensor_at(m, i);
            char shard[4096];
            join(shard, fx.model, stg_model_shard_name(m, t->shard));
            size_t len = 0;
            uint8_t *file = tu_read_file(shard, &len);
            ck_assert_ptr_nonnull(file);
            uint64_t start = 8;
            for (int b = 0; b < 8; b++) {
                start += (uint64_t)file[b] << (8 * b);
            }
            size_t n = (size_t)(t->end - t->begin);
            uint8_t dst[16];
            ck_assert_uint_le(n, sizeof dst);
            resume();
            stg_status s = stg_model_read_tensor(m, t, dst, n);
            disarm();
            add_read(out, s);
            if (s == STG_OK) {
                ck_assert_msg(memcmp(dst, file + start + t->begin, n) == 0,
                              "model tensor %zu read STG_OK with other bytes than the shard's", i);
            }
            free(file);
        }
        stg_model_close(m);
    }
}

typedef struct walk_collect {
    outcome *out;
} walk_collect;

static void on_record(void *user, const stg_report *r)
{
    walk_collect *c = user;
    /* The record's path is the walk's display path: relative to the fixture for stable names. */
    const char *path = stg_report_path(r);
    if (path == NULL) { /* the walk could not store it (out of memory): the verdict says error */
        ck_assert_int_eq(stg_report_verdict(r), STG_VERDICT_ERROR);
        path = "(no path)";
    }
    size_t n = strlen(fx.dir);
    add_report(c->out, strncmp(path, fx.dir, n) == 0 ? path + n : path, r);
}

static void run_walk(const input *in, outcome *out)
{
    int fd = open(fx.small, O_RDONLY | O_CLOEXEC); /* standard input: a safetensors file */
    ck_assert_int_ge(fd, 0);
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    wo.stdin_fd = fd;
    wo.threads = 1;
    const char *paths[2] = {in->path, "-"};
    walk_collect c = {out};
    stg_walk_result res;
    arm();
    out->status = stg_walk(paths, 2, &wo, on_record, NULL, &c, &res);
    disarm();
    close(fd);
}

/* stg_scan_buffer with its digest (the file's bytes read beforehand, without faults). */
static void run_scan_buffer(const input *in, outcome *out)
{
    size_t len = 0;
    uint8_t *bytes = tu_read_file(in->path, &len);
    ck_assert_ptr_nonnull(bytes);
    stg_scan_options opt;
    stg_scan_options_default(&opt);
    stg_report *r = NULL;
    arm();
    out->status = stg_scan_buffer(bytes, len, in->hint, &opt, &r);
    disarm();
    add_report(out, "buffer", r);
    stg_report_free(r);
    free(bytes);
}

/* A stream with per-tensor digests: no system calls, but every EVP call of the stream. */
static void run_stream(const input *in, outcome *out)
{
    size_t len = 0;
    uint8_t *bytes = tu_read_file(in->path, &len);
    ck_assert_ptr_nonnull(bytes);
    stg_stream_options so;
    stg_stream_options_default(&so);
    so.tensor_digests = true;
    stg_stream *s = NULL;
    stg_report *r = NULL;
    arm();
    stg_status st = stg_stream_new(NULL, &so, &s);
    for (size_t pos = 0; st == STG_OK && pos < len; pos += 4099) {
        st = stg_stream_feed(s, bytes + pos, len - pos < 4099 ? len - pos : 4099);
    }
    if (s != NULL) {
        stg_status fin = stg_stream_finish(s, &r);
        st = st == STG_OK ? fin : st;
    }
    disarm();
    out->status = st;
    add_report(out, "stream", r);
    if (s != NULL) {
        for (size_t i = 0; st == STG_OK && i < stg_stream_tensor_count(s); i++) {
            uint8_t d[32];
            add_read(out, stg_stream_tensor_sha256(s, i, d));
        }
    }
    stg_report_free(r);
    stg_stream_free(s);
    free(bytes);
}

/* ------------------------------------------------------------------------ the loop */

static bool syscall_fn(io_fn fn)
{
    return fn <= IO_READDIR;
}

/* true when a report says plainly that the file could not be read as a whole. */
static bool report_failed(const report_view *v, const fault *f)
{
    if (f->mode == MODE_FIFO && v->present && v->special && v->verdict >= STG_VERDICT_WARN) {
        return true; /* a file swapped for a FIFO: not_regular_file, never read (docs/containers.md) */
    }
    if (f->mode == MODE_HUGE && v->present && v->verdict >= STG_VERDICT_INVALID) {
        return true; /* a size no buffer can hold: io_error, or over the index's size cap */
    }
    if (!v->present || v->verdict != STG_VERDICT_ERROR) {
        return false;
    }
    if (f->fn == IO_ALLOC) {
        return true; /* an incomplete report (out of memory) fails closed */
    }
    return v->io_error || v->changed || (f->mode == MODE_FIFO && v->special);
}

/* The checks of one disturbed run against the undisturbed one; NULL when it passes. stdin_eof:
 * when read() said end of file early, the result of scanning the bytes delivered until then
 * (a pipe that ends early is a shorter input, not an error: that is the answer it must give). */
static const char *judge(const char *entry, const fault *f, const outcome *base, const outcome *got,
                         const outcome *stdin_eof)
{
    bool is_walk = strcmp(entry, "walk") == 0;
    if (stdin_eof != NULL && !is_walk) {
        return same_outcome(stdin_eof, got) ? NULL : "an early end of input must scan what arrived";
    }
    if (same_outcome(base, got)) {
        return NULL;
    }
    bool read_fn = f->fn == IO_READ || f->fn == IO_PREAD;
    if (f->mode == MODE_EINTR || (f->mode == MODE_SHORT && read_fn) || f->fn == IO_THREAD) {
        return "must be absorbed: the result differs from the run without faults";
    }
    if (!is_walk) {
        const report_view *v = &got->reports[0];
        bool reads_clean = true;
        for (size_t i = 0; i < got->nreads; i++) {
            stg_status s = got->reads[i];
            bool same = i < base->nreads && s == base->reads[i];
            reads_clean &= same || s == STG_E_IO || s == STG_FILE_CHANGED || s == STG_E_CRYPTO ||
                           s == STG_E_NOMEM;
        }
        if (!reads_clean) {
            return "a tensor read failed with an unexpected status";
        }
        bool report_same = got->status == base->status &&
                           strcmp(v->text, base->reports[0].text) == 0;
        if (report_same) {
            /* The fault hit a tensor read after the open (its status said so), or the lstat
             * that tells a link: the content was read and judged all the same, only `blob` (the
             * link's target) is missing. */
            return NULL;
        }
        if (got->status != STG_OK && got->status != STG_E_INVALID && !v->present) {
            /* An error status without a report: only for out of memory and OpenSSL. */
            return f->fn == IO_ALLOC || f->fn >= IO_EVP_NEW
                       ? NULL
                       : "an I/O failure must give a report, not only a status";
        }
        if (!report_failed(v, f)) {
            return "the report does not say error with io_error or file_changed";
        }
        if (f->mode == MODE_FAIL && read_fn && !v->io_error) {
            return "a read that failed must be io_error (file_changed is for a file that changed)";
        }
        /* stg_model_open: when stat says the path is no folder, the path itself is read as the
         * index, and the io_error says it is not a regular file (true, and no errno applies). */
        bool model_stat = strcmp(entry, "model") == 0 && f->fn == IO_STAT;
        if (syscall_fn(f->fn) && f->mode == MODE_FAIL && v->io_error && !v->errno_shown &&
            !model_stat) {
            return "io_error does not carry the errno";
        }
        return NULL;
    }
    /* The walk: problems with one path are records; only memory and OpenSSL end it, each
     * with its own status. */
    if (got->status != STG_OK) {
        if (f->fn == IO_ALLOC) {
            return got->status == STG_E_NOMEM ? NULL : "out of memory must end the walk as nomem";
        }
        if (f->fn >= IO_EVP_NEW) {
            return got->status == STG_E_CRYPTO ? NULL
                                               : "an OpenSSL failure must end the walk as crypto";
        }
        return "the walk failed on an I/O problem";
    }
    bool any_failed = false;
    for (size_t i = 0; i < got->nreports; i++) {
        const report_view *v = &got->reports[i];
        if (stdin_eof != NULL && strcmp(got->names[i], "-") == 0) {
            if (strcmp(v->text, stdin_eof->reports[0].text) != 0) {
                return "an early end of standard input must scan what arrived";
            }
            any_failed = true;
            continue;
        }
        size_t j = 0;
        while (j < base->nreports && strcmp(base->names[j], got->names[i]) != 0) {
            j++;
        }
        bool failed = report_failed(v, f);
        any_failed |= failed;
        if (j == base->nreports) {
            if (!failed) {
                return "a record the walk does not make without faults";
            }
            continue;
        }
        if (strcmp(v->text, base->reports[j].text) != 0 && !failed) {
            return "a record differs without saying error";
        }
        if (failed && syscall_fn(f->fn) && f->mode == MODE_FAIL && v->io_error && !v->errno_shown) {
            return "io_error does not carry the errno";
        }
        if (failed && f->mode == MODE_FAIL && read_fn && !v->io_error) {
            return "a read that failed must be io_error (file_changed is for a file that changed)";
        }
    }
    /* A record that vanished must lie under a folder whose record says it was not read, or
     * be one whose path could not be stored (out of memory: "(no path)", verdict error). */
    size_t pathless = 0;
    for (size_t i = 0; i < got->nreports; i++) {
        pathless += strcmp(got->names[i], "(no path)") == 0;
    }
    for (size_t j = 0; j < base->nreports; j++) {
        bool found = false;
        for (size_t i = 0; i < got->nreports && !found; i++) {
            found = strcmp(base->names[j], got->names[i]) == 0;
        }
        for (size_t i = 0; i < got->nreports && !found; i++) {
            size_t n = strlen(got->names[i]);
            found = got->reports[i].io_error && strncmp(base->names[j], got->names[i], n) == 0 &&
                    base->names[j][n] == '/';
        }
        if (!found && pathless > 0) {
            pathless--;
            found = true;
        }
        if (!found) {
            return "a record vanished without an io_error on its folder";
        }
    }
    return any_failed ? NULL : "the records changed without one saying error";
}

static void run_scan_fd(const input *in, outcome *out);

/* What stg_scan_fd says about the first n bytes of the file at path (no faults). */
static void scan_prefix(const char *path, const char *hint, size_t n, outcome *out)
{
    size_t len = 0;
    uint8_t *all = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(all);
    ck_assert_uint_le(n, len);
    char prefix[4096];
    join(prefix, fx.dir, "prefix.bin");
    ck_assert_int_eq(tu_write_file(prefix, all, n), 0);
    free(all);
    fault saved = inj.f;
    unsigned long saved_k = inj.k;
    inj.k = 0;
    input in = {"prefix", prefix, hint, NULL};
    run_scan_fd(&in, out);
    inj.f = saved;
    inj.k = saved_k;
    unlink(prefix);
}

static unsigned failures;

static unsigned long sweep(const char *entry, entry_fn fn, const input *in, fault f)
{
    /* The run without faults: the reference, and how often each function is called. */
    inj.f = (fault){IO_FN_COUNT, MODE_FAIL, 0};
    inj.k = 0;
    outcome base;
    memset(&base, 0, sizeof base);
    int fds = count_fds();
    long live = atomic_load(&inj.live);
    fn(in, &base);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_int_eq(atomic_load(&inj.live), live);
    bool is_walk = strcmp(entry, "walk") == 0;

    unsigned long k;
    for (k = 1;; k++) {
        outcome got;
        memset(&got, 0, sizeof got);
        inj.f = f;
        inj.k = k;
        fn(in, &got);
        bool reached = atomic_load(&fired);
        ck_assert_msg(count_fds() == fds, "%s(%s), %s %s #%lu: a descriptor was left open", entry,
                      in->what, FN_NAMES[f.fn], MODE_NAMES[f.mode], k);
        ck_assert_msg(atomic_load(&inj.live) == live,
                      "%s(%s), %s %s #%lu: %ld stg_mem blocks not freed", entry, in->what,
                      FN_NAMES[f.fn], MODE_NAMES[f.mode], k, atomic_load(&inj.live) - live);
        if (!reached) {
            outcome_free(&got);
            break;
        }
        outcome eof;
        memset(&eof, 0, sizeof eof);
        bool stdin_eof = f.fn == IO_READ && f.mode == MODE_EOF &&
                         (is_walk || strcmp(entry, "scan_fd") == 0);
        if (stdin_eof) {
            size_t n = (size_t)atomic_load(&inj.read_bytes);
            scan_prefix(is_walk ? fx.small : in->path, is_walk ? NULL : in->hint, n, &eof);
        }
        const char *why = judge(entry, &f, &base, &got, stdin_eof ? &eof : NULL);
        if (why != NULL) {
            strbuf b = {0};
            sb_printf(&b, "got ");
            print_outcome(&b, &got);
            sb_printf(&b, "\n  without faults ");
            print_outcome(&b, &base);
            if (stdin_eof) {
                sb_printf(&b, "\n  the bytes that arrived ");
                print_outcome(&b, &eof);
            }
            printf("FAIL %s(%s), %s %s (errno %d) at call %lu: %s\n  %s\n", entry, in->what,
                   FN_NAMES[f.fn], MODE_NAMES[f.mode], f.err, k, why, b.p);
            free(b.p);
            failures++;
        }
        outcome_free(&eof);
        outcome_free(&got);
    }
    fired_total[f.fn] += k - 1;
    outcome_free(&base);
    inj.f = (fault){IO_FN_COUNT, MODE_FAIL, 0};
    inj.k = 0;
    return k - 1;
}

static const fault SYSCALL_FAULTS[] = {
    {IO_OPEN, MODE_FAIL, EACCES},     {IO_OPEN, MODE_FAIL, ELOOP},
    {IO_READ, MODE_FAIL, EIO},        {IO_READ, MODE_EINTR, 0},
    {IO_READ, MODE_SHORT, 0},         {IO_READ, MODE_EOF, 0},
    {IO_PREAD, MODE_FAIL, EIO},       {IO_PREAD, MODE_EINTR, 0},
    {IO_PREAD, MODE_SHORT, 0},        {IO_PREAD, MODE_EOF, 0},
    {IO_FSTAT, MODE_OTHER_DEV, 0},    {IO_STAT, MODE_OTHER_DEV, 0},
    {IO_LSTAT, MODE_OTHER_DEV, 0},    {IO_FSTAT, MODE_FAIL, EIO},
    {IO_FSTAT, MODE_OTHER_INODE, 0},  {IO_FSTAT, MODE_RESIZED, 0},
    {IO_FSTAT, MODE_FIFO, 0},         {IO_FSTAT, MODE_HUGE, 0},
    {IO_STAT, MODE_FAIL, EACCES},     {IO_STAT, MODE_OTHER_INODE, 0},
    {IO_STAT, MODE_RESIZED, 0},       {IO_LSTAT, MODE_FAIL, EACCES},
    {IO_LSTAT, MODE_OTHER_INODE, 0},  {IO_MMAP, MODE_FAIL, ENOMEM},
    {IO_REALPATH, MODE_FAIL, EACCES}, {IO_OPENDIR, MODE_FAIL, EMFILE},
    {IO_READDIR, MODE_FAIL, EIO},     {IO_THREAD, MODE_FAIL, EAGAIN},
    {IO_EVP_NEW, MODE_FAIL, 0},       {IO_EVP_INIT, MODE_FAIL, 0},
    {IO_EVP_UPDATE, MODE_FAIL, 0},    {IO_EVP_FINAL, MODE_FAIL, 0},
    {IO_EVP_FINAL, MODE_SHORT, 0},
};
#define N_SYSCALL_FAULTS (sizeof SYSCALL_FAULTS / sizeof SYSCALL_FAULTS[0])

static const fault ALLOC_FAULT = {IO_ALLOC, MODE_FAIL, ENOMEM};

static void sweep_all(const char *entry, entry_fn fn, const input *in)
{
    unsigned long total = 0;
    for (size_t i = 0; i < N_SYSCALL_FAULTS; i++) {
        total += sweep(entry, fn, in, SYSCALL_FAULTS[i]);
    }
    unsigned long allocs = sweep(entry, fn, in, ALLOC_FAULT);
    printf("io: %-10s %-24s %4lu calls disturbed in turn, %4lu allocations failed\n", entry,
           in->what, total, allocs);
    fflush(stdout);
    ck_assert_uint_gt(total, 0);
}

/* ------------------------------------------------------------------------ tests */

/* Every fault for each input in turn, through one entry point. */
static void sweep_inputs(const char *entry, entry_fn fn, const input *ins, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        sweep_all(entry, fn, &ins[i]);
    }
}

/* Ends a test: the fixture goes, and every disturbed run must have passed its checks. */
static void finish_fixture(void)
{
    free_fixture();
    ck_assert_msg(failures == 0, "%u disturbed runs failed their checks (listed above)", failures);
}

START_TEST(scan_path_survives_io_faults)
{
    make_fixture();
    input ins[] = {
        {"small safetensors", fx.small, NULL, NULL},
        {"big safetensors (mmap)", fx.big, NULL, NULL},
        {"pickle", fx.pickle, NULL, NULL},
        {"link", fx.link, NULL, NULL},
        {"zip, zlib member", fx.zlib_member, NULL, NULL},
        {"link, root given", fx.link, NULL, fx.dir},
        {"index + shards", fx.index, NULL, fx.model},
    };
    sweep_inputs("scan_path", run_scan_path, ins, sizeof ins / sizeof ins[0]);
    finish_fixture();
}
END_TEST

START_TEST(scan_fd_survives_io_faults)
{
    make_fixture();
    input ins[] = {
        {"safetensors stream", fx.fd_stream, NULL, NULL},
        {"safetensors by name", fx.fd_stream, "model.safetensors", NULL},
        {"pickle (buffered)", fx.fd_pickle, NULL, NULL},
        {"header past the end", fx.fd_claim, NULL, NULL},
        {"small pickle", fx.pickle, "evil.pkl", NULL},
    };
    sweep_inputs("scan_fd", run_scan_fd, ins, sizeof ins / sizeof ins[0]);
    finish_fixture();
}
END_TEST

START_TEST(file_open_survives_io_faults)
{
    make_fixture();
    input ins[] = {
        {"small safetensors", fx.small, NULL, NULL},
        {"big safetensors", fx.big, NULL, NULL},
        {"not safetensors", fx.pickle, NULL, NULL},
    };
    /* The pickle too: a walk that runs out of memory while sniffing the polyglot must fail
     * closed (error), never drop polyglot_pickle and the dangerous global. */
    sweep_inputs("file_open", run_file_open, ins, sizeof ins / sizeof ins[0]);
    finish_fixture();
}
END_TEST

START_TEST(model_open_survives_io_faults)
{
    make_fixture();
    input ins[] = {
        {"folder", fx.model, NULL, NULL},
        {"index file", fx.index, NULL, NULL},
    };
    sweep_inputs("model", run_model_open, ins, sizeof ins / sizeof ins[0]);
    finish_fixture();
}
END_TEST

START_TEST(walk_survives_io_faults)
{
    make_fixture();
    input ins[] = {
        {"tree + stdin", fx.tree, NULL, NULL},
        {"HF snapshot + stdin", fx.hf_snapshot, NULL, NULL},
    };
    sweep_inputs("walk", run_walk, ins, sizeof ins / sizeof ins[0]);
    /* Two faults at once: every opendir fails, and allocation k fails while the walk records
     * that (an io_error record needs memory too). */
    inj.always = (fault){IO_OPENDIR, MODE_FAIL, EACCES};
    unsigned long allocs = sweep("walk", run_walk, &ins[0], ALLOC_FAULT);
    inj.always = (fault){IO_FN_COUNT, MODE_FAIL, 0};
    printf("io: %-10s %-24s %4lu allocations failed while every opendir failed\n", "walk",
           ins[0].what, allocs);
    ck_assert_uint_gt(allocs, 0);
    finish_fixture();
}
END_TEST

/* The routes without system calls: only OpenSSL (and memory) can fail there. */
static void sweep_digests(const char *entry, entry_fn fn, const input *in)
{
    unsigned long total = 0;
    for (size_t i = 0; i < N_SYSCALL_FAULTS; i++) {
        if (SYSCALL_FAULTS[i].fn >= IO_EVP_NEW) {
            total += sweep(entry, fn, in, SYSCALL_FAULTS[i]);
        }
    }
    unsigned long allocs = sweep(entry, fn, in, ALLOC_FAULT);
    printf("io: %-10s %-24s %4lu EVP calls failed in turn, %4lu allocations failed\n", entry,
           in->what, total, allocs);
    ck_assert_uint_gt(total, 0);
}

START_TEST(digests_survive_evp_faults)
{
    make_fixture();
    input big = {"tensor digests", fx.big, NULL, NULL};
    sweep_digests("stream", run_stream, &big);
    input buffers[] = {
        {"big safetensors", fx.big, "model.safetensors", NULL},
        {"pickle", fx.pickle, "evil.pkl", NULL},
    };
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) {
        sweep_digests("scan_buf", run_scan_buffer, &buffers[i]);
    }
    finish_fixture();
}
END_TEST

static void ignore_progress(void *user, const stg_walk_progress *p)
{
    (void)user;
    (void)p;
}

/* One file with no progress to report is scanned on the calling thread; with progress, or more
 * files, workers start as before. The records are the same either way. */
START_TEST(one_file_walk_starts_no_thread)
{
    make_fixture();
    stg_walk_options wo;
    stg_walk_options_default(&wo);
    wo.threads = 2;
    const char *one[1] = {fx.small};
    const char *two[2] = {fx.small, fx.big};
    struct {
        const char *const *paths;
        size_t count;
        stg_walk_progress_fn progress;
        unsigned long threads;
    } runs[] = {{one, 1, NULL, 0}, {one, 1, ignore_progress, 1}, {two, 2, NULL, 2}};
    char *first = NULL;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        outcome out;
        memset(&out, 0, sizeof out);
        walk_collect c = {&out};
        stg_walk_result res;
        arm();
        stg_status st = stg_walk(runs[i].paths, runs[i].count, &wo, on_record, runs[i].progress, &c,
                                 &res);
        disarm();
        ck_assert_int_eq(st, STG_OK);
        ck_assert_uint_eq(out.nreports, runs[i].count);
        ck_assert_uint_eq(atomic_load(&inj.calls[IO_THREAD]), runs[i].threads);
        if (first == NULL) {
            first = strdup(out.names[0]);
        }
        ck_assert_str_eq(out.names[0], first);
        outcome_free(&out);
    }
    free(first);
    finish_fixture();
}
END_TEST

/* Without this, a build whose --wrap options were lost would pass every sweep above with no
 * fault injected at all. */
START_TEST(every_wrapped_function_was_disturbed)
{
    /* Under CK_FORK each test runs in its own process: repeat the cheapest sweeps here. */
    make_fixture();
    input path = {"small safetensors", fx.small, NULL, NULL};
    input big = {"big safetensors (mmap)", fx.big, NULL, NULL};
    input tree = {"tree + stdin", fx.tree, NULL, NULL};
    for (size_t i = 0; i < N_SYSCALL_FAULTS; i++) {
        sweep("scan_path", run_scan_path, &path, SYSCALL_FAULTS[i]);
        sweep("scan_path", run_scan_path, &big, SYSCALL_FAULTS[i]);
        sweep("walk", run_walk, &tree, SYSCALL_FAULTS[i]);
    }
    sweep("walk", run_walk, &tree, ALLOC_FAULT);
    finish_fixture();
    for (int fn = 0; fn < IO_FN_COUNT; fn++) {
        ck_assert_msg(fired_total[fn] > 0,
                      "no call of %s was ever disturbed: is --wrap=%s missing?", FN_NAMES[fn],
                      FN_NAMES[fn]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("io_faults");
    TCase *tc = tcase_create("every system call fails in turn");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, scan_path_survives_io_faults);
    tcase_add_test(tc, scan_fd_survives_io_faults);
    tcase_add_test(tc, file_open_survives_io_faults);
    tcase_add_test(tc, model_open_survives_io_faults);
    tcase_add_test(tc, walk_survives_io_faults);
    tcase_add_test(tc, digests_survive_evp_faults);
    tcase_add_test(tc, one_file_walk_starts_no_thread);
    tcase_add_test(tc, every_wrapped_function_was_disturbed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
