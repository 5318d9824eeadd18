#include "testutil.h"

#include "dispatch/check.h"
#include "parser/inflate.h"
#include "parser/map.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint8_t *tu_st_file(const char *header, size_t pad, const void *data, size_t data_len, size_t *len)
{
    size_t hl = strlen(header) + pad;
    size_t total = 8 + hl + data_len;
    uint8_t *b = malloc(total == 0 ? 1 : total);
    if (b == NULL) {
        abort();
    }
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    }
    memcpy(b + 8, header, strlen(header));
    memset(b + 8 + strlen(header), ' ', pad);
    if (data_len > 0) {
        if (data != NULL) {
            memcpy(b + 8 + hl, data, data_len);
        } else {
            memset(b + 8 + hl, 0, data_len);
        }
    }
    *len = total;
    return b;
}

long tu_find(const stg_report *r, stg_code code)
{
    for (size_t i = 0; i < stg_report_count(r); i++) {
        if (stg_report_at(r, i)->code == code) {
            return (long)i;
        }
    }
    return -1;
}

size_t tu_count(const stg_report *r, stg_code code)
{
    size_t n = 0;
    for (size_t i = 0; i < stg_report_count(r); i++) {
        n += stg_report_at(r, i)->code == code;
    }
    return n;
}

stg_report *tu_validate(const void *buf, size_t len, stg_profile profile)
{
    stg_limits lim;
    stg_report *r = NULL;
    stg_limits_default(&lim);
    lim.profile = profile;
    if (stg_validate_buffer(buf, len, &lim, &r) != STG_OK) {
        return NULL;
    }
    return r;
}

stg_report *tu_scan_pickles(const uint8_t *buf, size_t len, stg_pickle_flavor flavor,
                            const stg_limits *lim)
{
    stg_limits defaults;
    if (lim == NULL) {
        stg_limits_default(&defaults);
        lim = &defaults;
    }
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return NULL;
    }
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, lim, r);
    stg_check_pickles(buf, len, 0, flavor, &ctx);
    stg_report_finish(r);
    return r;
}

stg_report *tu_validate_header(const char *header, const void *data, size_t data_len,
                               stg_profile profile)
{
    size_t len;
    uint8_t *b = tu_st_file(header, 0, data, data_len, &len);
    stg_report *r = tu_validate(b, len, profile);
    free(b);
    return r;
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            b = realloc(b, cap);
        }
        size_t got = fread(b + n, 1, cap - n, f);
        if (got == 0) {
            break;
        }
        n += got;
    }
    fclose(f);
    *len = n;
    return b;
}

int tu_write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return -1;
    }
    int rc = fwrite(buf, 1, len, f) == len ? 0 : -1;
    if (fclose(f) != 0) {
        rc = -1;
    }
    return rc;
}

char *tu_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/stgtest.XXXXXX", base != NULL ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d != NULL ? strdup(d) : NULL;
}

void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        unlink(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            tu_rmtree(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

const char *tu_src(const char *rel)
{
    static char buf[4096];
    const char *s = getenv("STG_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", s != NULL ? s : ".", rel);
    return buf;
}

const char *tu_describe(const stg_report *r)
{
    static char buf[8192];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < stg_report_count(r) && used + 128 < sizeof buf; i++) {
        const stg_finding *f = stg_report_at(r, i);
        int n = snprintf(buf + used, sizeof buf - used, "%s@%lld(%s);", stg_code_name(f->code),
                         f->has_offset ? (long long)f->offset : -1LL,
                         stg_severity_name(f->severity));
        if (n > 0) {
            used += (size_t)n;
        }
    }
    return buf;
}

void tu_buf_put(tu_buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL) {
            abort();
        }
    }
    if (n > 0) {
        memcpy(b->p + b->n, d, n);
    }
    b->n += n;
}

void tu_store_le(uint8_t *dst, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n && i < 8; i++) {
        dst[i] = (uint8_t)(v >> (8 * i));
    }
}

void tu_store_f32_le(uint8_t *dst, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    tu_store_le(dst, bits, 4);
}

stg_code tu_code_by_name(const char *name, size_t n)
{
    for (int c = 1; c <= STG_CODE_MAX; c++) {
        const char *cn = stg_code_name((stg_code)c);
        if (cn != NULL && strlen(cn) == n && memcmp(cn, name, n) == 0) {
            return (stg_code)c;
        }
    }
    return (stg_code)0;
}

void tu_map_colliding_keys(uint64_t seed, char (*out)[24], size_t n)
{
    stg_map probe;
    stg_map_init(&probe, sizeof(uint64_t), seed, 64);
    size_t made = 0;
    for (uint64_t ctr = 0; made < n; ctr++) {
        char name[24];
        int k = snprintf(name, sizeof name, "c%llx", (unsigned long long)ctr);
        if ((stg_map_hash(&probe, (const uint8_t *)name, (size_t)k, NULL, 0) & 0xffeu) == 0) {
            memcpy(out[made++], name, (size_t)k + 1);
        }
    }
}

void tu_tar_checksum(uint8_t *h)
{
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < 512; i++) {
        sum += h[i];
    }
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
}

int tu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

bool tu_inflate_format_built(stg_inflate_format fmt)
{
    bool configured = false;
    switch (fmt) {
    case STG_INFLATE_RAW:
    case STG_INFLATE_ZLIB:
    case STG_INFLATE_GZIP:
#ifdef STG_TEST_WITH_ZLIB
        configured = true;
#endif
        break;
    case STG_INFLATE_LZMA:
    case STG_INFLATE_ZIP_LZMA:
#ifdef STG_TEST_WITH_LZMA
        configured = true;
#endif
        break;
    case STG_INFLATE_BZIP2:
#ifdef STG_TEST_WITH_BZIP2
        configured = true;
#endif
        break;
    }
    bool available = stg_inflate_format_available(fmt);
    ck_assert_msg(available == configured,
                  "inflate format %u: the build is configured %s it, the library says %s",
                  (unsigned)fmt, configured ? "with" : "without",
                  available ? "available" : "unavailable");
    return available;
}

bool tu_inflate_built(void)
{
    return tu_inflate_format_built(STG_INFLATE_ZLIB);
}
