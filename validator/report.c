#include "report.h"

#include <stdio.h>
#include <string.h>

#include "../parser/mem.h"
#include "../parser/text.h"

/* Frees a string the report owns but exposes as const. */
static void free_const(const void *p)
{
    stg_mem_free((void *)(uintptr_t)p);
}

/* Frees the strings a finding owns. */
static void free_finding(const stg_finding *f)
{
    free_const(f->message);
    free_const(f->tensor);
    free_const(f->module);
    free_const(f->name);
    free_const(f->member);
    free_const(f->limit);
}

stg_report *stg_report_new(const stg_limits *lim)
{
    stg_report *r = stg_mem_calloc(1, sizeof *r);
    if (r == NULL) {
        return NULL;
    }
    stg_limits def;
    if (lim == NULL) {
        stg_limits_default(&def);
        lim = &def;
    }
    r->max_findings = lim->max_findings < STG_FINDINGS_CEILING ? lim->max_findings
                                                               : STG_FINDINGS_CEILING;
    r->profile = lim->profile;
    r->worst = STG_SEV_INFO;
    return r;
}

static void note_severity(stg_report *r, stg_code code, stg_severity sev)
{
    if (!r->any || sev > r->worst) {
        r->worst = sev;
    }
    r->any = true;
    if (code == STG_IO_ERROR || code == STG_FILE_CHANGED_CODE) {
        r->scan_error = true;
    }
    unsigned c = (unsigned)code;
    if (c < 64u * STG_SEEN_CODE_WORDS) {
        r->seen_codes[c / 64] |= (uint64_t)1 << (c % 64);
    }
}

void stg_report_oom(stg_report *r)
{
    r->out_of_memory = true; /* the one write: stg_report_verdict fails closed on it */
}

bool stg_report_has(const stg_report *r, stg_code code)
{
    unsigned c = (unsigned)code;
    return c < 64u * STG_SEEN_CODE_WORDS &&
           (r->seen_codes[c / 64] & ((uint64_t)1 << (c % 64))) != 0;
}

stg_finding *stg_report_addv_sev(stg_report *r, stg_code code, stg_severity sev, uint64_t offset,
                                 const char *fmt, va_list ap)
{
    note_severity(r, code, sev);
    if (r->count >= r->max_findings) {
        r->truncated++;
        return NULL;
    }
    if (r->count == r->cap) {
        size_t ncap = r->cap == 0 ? 16 : r->cap * 2;
        if (ncap > r->max_findings) {
            ncap = r->max_findings;
        }
        stg_finding *nf = stg_mem_realloc(r->findings, ncap * sizeof *nf);
        if (nf == NULL) {
            stg_report_oom(r);
            return NULL;
        }
        r->findings = nf;
        r->cap = ncap;
    }
    char msg[512];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n < 0) {
        msg[0] = '\0';
        n = 0;
    }
    size_t mlen = strlen(msg);
    char *m = stg_mem_strndup(msg, mlen);
    if (m == NULL) {
        stg_report_oom(r);
        return NULL;
    }
    stg_finding *f = &r->findings[r->count++];
    memset(f, 0, sizeof *f);
    f->code = code;
    f->severity = sev;
    f->has_offset = offset != STG_NO_OFFSET;
    f->offset = f->has_offset ? offset : 0;
    f->message = m;
    return f;
}

stg_finding *stg_report_add_sev(stg_report *r, stg_code code, stg_severity sev, uint64_t offset,
                                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stg_finding *f = stg_report_addv_sev(r, code, sev, offset, fmt, ap);
    va_end(ap);
    return f;
}

stg_finding *stg_report_addv(stg_report *r, stg_code code, uint64_t offset, const char *fmt,
                             va_list ap)
{
    return stg_report_addv_sev(r, code, stg_code_severity(code, r->profile), offset, fmt, ap);
}

stg_finding *stg_report_add(stg_report *r, stg_code code, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    stg_finding *f = stg_report_addv(r, code, offset, fmt, ap);
    va_end(ap);
    return f;
}

static const char *dup_or_fail(stg_report *r, const char *s, size_t len)
{
    char *d = stg_mem_strndup(s, len);
    if (d == NULL) {
        stg_report_oom(r);
    }
    return d;
}

void stg_report_set_tensor(stg_report *r, stg_finding *f, const char *name, size_t len)
{
    if (f == NULL || f->tensor != NULL) {
        return;
    }
    f->tensor = dup_or_fail(r, name, len);
    f->tensor_len = f->tensor != NULL ? len : 0;
}

void stg_report_set_global(stg_report *r, stg_finding *f, const char *module, size_t module_len,
                           const char *name, size_t name_len)
{
    if (f == NULL || f->module != NULL) {
        return;
    }
    f->module = dup_or_fail(r, module, module_len);
    f->name = dup_or_fail(r, name, name_len);
    f->module_len = f->module != NULL ? module_len : 0;
    f->name_len = f->name != NULL ? name_len : 0;
}

void stg_report_set_member(stg_report *r, stg_finding *f, const char *member,
                           uint64_t member_offset)
{
    if (f == NULL || f->member != NULL || member == NULL) {
        return;
    }
    f->member = dup_or_fail(r, member, strlen(member));
    f->has_member_offset = member_offset != STG_NO_OFFSET;
    f->member_offset = f->has_member_offset ? member_offset : 0;
}

void stg_report_set_limit(stg_report *r, stg_finding *f, const char *limit)
{
    if (f == NULL || f->limit != NULL) {
        return;
    }
    f->limit = dup_or_fail(r, limit, strlen(limit));
}

void stg_report_limit(stg_report *r, uint64_t offset, const char *limit, uint64_t value)
{
    stg_finding *f = stg_report_add(r, STG_LIMIT_EXCEEDED, offset,
                                    "the configured limit %s (%llu) was exceeded", limit,
                                    (unsigned long long)value);
    stg_report_set_limit(r, f, limit);
}

void stg_report_add_global(stg_report *r, const char *module, size_t module_len, const char *name,
                           size_t name_len, uint64_t offset, const char *member,
                           stg_global_class klass)
{
    if (r->global_count == r->global_cap) {
        size_t ncap = r->global_cap == 0 ? 16 : r->global_cap * 2;
        stg_global *ng = stg_mem_realloc(r->globals, ncap * sizeof *ng);
        if (ng == NULL) {
            stg_report_oom(r);
            return;
        }
        r->globals = ng;
        r->global_cap = ncap;
    }
    stg_global g;
    memset(&g, 0, sizeof g);
    g.module = dup_or_fail(r, module, module_len);
    g.name = dup_or_fail(r, name, name_len);
    g.member = member != NULL ? dup_or_fail(r, member, strlen(member)) : NULL;
    g.module_len = module_len;
    g.name_len = name_len;
    g.offset = offset;
    g.klass = klass;
    if (g.module == NULL || g.name == NULL || (member != NULL && g.member == NULL)) {
        free_const(g.module);
        free_const(g.name);
        free_const(g.member);
        return;
    }
    r->globals[r->global_count++] = g;
}

void stg_report_set_format(stg_report *r, stg_format f)
{
    r->format = f;
}

void stg_report_set_size(stg_report *r, uint64_t size)
{
    r->size = size;
}

void stg_report_set_sha256(stg_report *r, const uint8_t digest[32])
{
    stg_hex_encode(digest, 32, r->sha256);
    r->has_sha256 = true;
}

static void replace_string(stg_report *r, char **slot, const char *s)
{
    stg_mem_free(*slot);
    *slot = NULL;
    if (s != NULL) {
        *slot = stg_mem_strndup(s, strlen(s));
        if (*slot == NULL) {
            stg_report_oom(r);
        }
    }
}

void stg_report_set_path(stg_report *r, const char *path)
{
    replace_string(r, &r->path, path);
}

void stg_report_set_blob(stg_report *r, const char *blob)
{
    replace_string(r, &r->blob, blob);
}

void stg_report_merge(stg_report *dst, const stg_report *src, const char *member,
                      uint64_t member_offset)
{
    stg_report_merge_if(dst, src, member, member_offset, NULL, NULL, NULL);
}

void stg_report_merge_if(stg_report *dst, const stg_report *src, const char *member,
                         uint64_t member_offset, bool (*keep)(const stg_finding *f, void *arg),
                         bool (*keep_global)(const stg_global *g, void *arg), void *arg)
{
    for (size_t i = 0; i < src->count; i++) {
        const stg_finding *s = &src->findings[i];
        if (keep != NULL && !keep(s, arg)) {
            continue;
        }
        stg_finding *f = stg_report_add_sev(
            dst, s->code, s->severity, s->has_offset ? s->offset : STG_NO_OFFSET, "%s", s->message);
        if (f == NULL) {
            continue;
        }
        if (s->tensor != NULL) {
            stg_report_set_tensor(dst, f, s->tensor, s->tensor_len);
        }
        if (s->module != NULL && s->name != NULL) {
            stg_report_set_global(dst, f, s->module, s->module_len, s->name, s->name_len);
        }
        if (s->member != NULL) {
            stg_report_set_member(dst, f, s->member,
                                  s->has_member_offset ? s->member_offset : STG_NO_OFFSET);
        } else if (member != NULL) {
            stg_report_set_member(dst, f, member, member_offset);
        }
        if (s->limit != NULL) {
            stg_report_set_limit(dst, f, s->limit);
        }
    }
    /* Counted-only findings still decide the verdict (a filter cannot see them: all count). */
    dst->truncated += src->truncated;
    if (src->any && (keep == NULL || src->truncated > 0)) {
        if (!dst->any || src->worst > dst->worst) {
            dst->worst = src->worst;
        }
        dst->any = true;
    }
    if (keep == NULL || src->truncated > 0) {
        for (size_t w = 0; w < STG_SEEN_CODE_WORDS; w++) {
            dst->seen_codes[w] |= src->seen_codes[w];
        }
    }
    dst->scan_error = dst->scan_error || src->scan_error;
    if (src->out_of_memory) {
        stg_report_oom(dst);
    }
    for (size_t i = 0; i < src->global_count; i++) {
        const stg_global *g = &src->globals[i];
        if (keep_global != NULL && !keep_global(g, arg)) {
            continue;
        }
        const char *m = g->member != NULL ? g->member : member;
        stg_report_add_global(dst, g->module, g->module_len, g->name, g->name_len, g->offset, m,
                              g->klass);
    }
    for (size_t i = 0; i < src->side_count; i++) {
        const stg_side_file *sf = &src->sides[i];
        (void)stg_report_add_side_file(dst, (const uint8_t *)sf->name, sf->name_len, sf->offset,
                                       sf->member != NULL ? sf->member : member, sf->zfile);
    }
    for (size_t i = 0; i < src->row_count; i++) {
        stg_report_row row = src->rows[i];
        row.member = row.member != NULL ? row.member : member;
        stg_report_add_row(dst, &row);
    }
    dst->rows_dropped += src->rows_dropped;
}

bool stg_report_add_side_file(stg_report *r, const uint8_t *name, size_t name_len, uint64_t offset,
                              const char *member, bool zfile)
{
    if (r->side_count >= STG_SIDE_FILES_CEILING) {
        return false;
    }
    if (r->side_count == r->side_cap) {
        size_t ncap = r->side_cap == 0 ? 8 : r->side_cap * 2;
        stg_side_file *ns = stg_mem_realloc(r->sides, ncap * sizeof *ns);
        if (ns == NULL) {
            stg_report_oom(r);
            return true; /* out_of_memory fails the report already */
        }
        r->sides = ns;
        r->side_cap = ncap;
    }
    stg_side_file sf;
    memset(&sf, 0, sizeof sf);
    sf.name = stg_mem_strndup((const char *)name, name_len);
    sf.member = member != NULL ? stg_mem_strndup(member, strlen(member)) : NULL;
    if (sf.name == NULL || (member != NULL && sf.member == NULL)) {
        stg_report_oom(r);
        stg_mem_free(sf.name);
        stg_mem_free(sf.member);
        return true;
    }
    sf.name_len = name_len;
    sf.offset = offset;
    sf.zfile = zfile;
    r->sides[r->side_count++] = sf;
    return true;
}

void stg_report_drop_side_files(stg_report *r, size_t keep)
{
    while (r->side_count > keep) {
        r->side_count--;
        stg_mem_free(r->sides[r->side_count].name);
        stg_mem_free(r->sides[r->side_count].member);
    }
}

/* Stable merge sort of findings by (has_offset, offset): findings ≤ max_findings. */
static bool finding_before(const stg_finding *a, const stg_finding *b)
{
    if (a->has_offset != b->has_offset) {
        return !a->has_offset;
    }
    return a->has_offset && a->offset < b->offset;
}

static void merge_sort(stg_finding *v, stg_finding *tmp, size_t n)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                tmp[k++] = finding_before(&v[j], &v[i]) ? v[j++] : v[i++];
            }
            while (i < mid) {
                tmp[k++] = v[i++];
            }
            while (j < hi) {
                tmp[k++] = v[j++];
            }
        }
        memcpy(v, tmp, n * sizeof *v);
    }
}

void stg_report_finish(stg_report *r)
{
    if (r->truncated > 0 && !stg_report_has(r, STG_FINDINGS_TRUNCATED)) {
        /* Appended past the cap on purpose: the reader must learn that findings are missing. */
        uint32_t saved = r->max_findings;
        r->max_findings = UINT32_MAX;
        stg_report_add(r, STG_FINDINGS_TRUNCATED, STG_NO_OFFSET,
                       "%llu more findings were counted but not stored (max_findings %u)",
                       (unsigned long long)r->truncated, saved);
        r->max_findings = saved;
    }
    if (r->count > 1) {
        stg_finding *tmp = stg_mem_alloc(r->count * sizeof *tmp);
        if (tmp == NULL) {
            stg_report_oom(r);
        } else {
            merge_sort(r->findings, tmp, r->count);
            stg_mem_free(tmp);
        }
    }
    r->complete = true;
}

size_t stg_report_count(const stg_report *r)
{
    return r == NULL ? 0 : r->count;
}

const stg_finding *stg_report_at(const stg_report *r, size_t i)
{
    return r == NULL || i >= r->count ? NULL : &r->findings[i];
}

uint64_t stg_report_truncated(const stg_report *r)
{
    return r == NULL ? 0 : r->truncated;
}

stg_verdict stg_report_verdict(const stg_report *r)
{
    if (r == NULL || !r->complete || r->out_of_memory || r->scan_error) {
        return STG_VERDICT_ERROR;
    }
    return stg_verdict_of_severity(r->any, r->worst);
}

stg_format stg_report_format(const stg_report *r)
{
    return r == NULL ? STG_FMT_UNKNOWN : r->format;
}

uint64_t stg_report_size(const stg_report *r)
{
    return r == NULL ? 0 : r->size;
}

const char *stg_report_sha256(const stg_report *r)
{
    return r != NULL && r->has_sha256 ? r->sha256 : NULL;
}

const char *stg_report_path(const stg_report *r)
{
    return r == NULL ? NULL : r->path;
}

const char *stg_report_blob(const stg_report *r)
{
    return r == NULL ? NULL : r->blob;
}

size_t stg_report_global_count(const stg_report *r)
{
    return r == NULL ? 0 : r->global_count;
}

const stg_global *stg_report_global_at(const stg_report *r, size_t i)
{
    return r == NULL || i >= r->global_count ? NULL : &r->globals[i];
}

void stg_report_free(stg_report *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->count; i++) {
        free_finding(&r->findings[i]);
    }
    for (size_t i = 0; i < r->global_count; i++) {
        free_const(r->globals[i].module);
        free_const(r->globals[i].name);
        free_const(r->globals[i].member);
    }
    stg_report_drop_side_files(r, 0);
    stg_report_drop_rows(r);
    stg_mem_free(r->sides);
    stg_mem_free(r->findings);
    stg_mem_free(r->globals);
    stg_mem_free(r->path);
    stg_mem_free(r->blob);
    stg_mem_free(r);
}

/* Drops the format_unknown findings of member "(decompressed)" among findings [from, count):
 * what scanning a joblib ZF side file's raw array bytes says about their format. They have none:
 * joblib hands them to ndarray.__setstate__, never to a reader (loader/joblib_side.c, and a
 * `*.npy.z` file scanned on its own: dispatch/formats.c). */
/* Keeps the findings [from, count) that drop() refuses (freeing the others), then recomputes
 * the seen-code bit of `code` (the only code drop() accepts) and, when nothing was truncated,
 * `any` and `worst` from what is left (else a finding that was counted but not stored may be
 * the worst). */
static void drop_findings(stg_report *r, size_t from, stg_code code,
                          bool (*drop)(const stg_finding *f, stg_code code))
{
    size_t w = from;
    for (size_t i = from; i < r->count; i++) {
        stg_finding *f = &r->findings[i];
        if (drop(f, code)) {
            free_finding(f);
            continue;
        }
        r->findings[w++] = *f;
    }
    r->count = w;
    r->seen_codes[code / 64] &= ~((uint64_t)1 << (code % 64));
    for (size_t i = 0; i < w; i++) {
        if (r->findings[i].code == code) {
            r->seen_codes[code / 64] |= (uint64_t)1 << (code % 64);
        }
    }
    if (r->truncated == 0) {
        r->any = w > 0;
        r->worst = STG_SEV_INFO;
        for (size_t i = 0; i < w; i++) {
            if (r->findings[i].severity > r->worst) {
                r->worst = r->findings[i].severity;
            }
        }
    }
}

static bool is_raw_unknown(const stg_finding *f, stg_code code)
{
    return f->code == code && f->member != NULL && strcmp(f->member, "(decompressed)") == 0;
}

void stg_report_drop_raw_unknown(stg_report *r, size_t from)
{
    drop_findings(r, from, STG_FORMAT_UNKNOWN, is_raw_unknown);
}

static bool has_code(const stg_finding *f, stg_code code)
{
    return f->code == code;
}

void stg_report_drop_code(stg_report *r, stg_code code)
{
    drop_findings(r, 0, code, has_code);
}

_Static_assert(STG_CODE_MAX < 64 * STG_SEEN_CODE_WORDS,
               "every code number fits the seen-code bitmap");
