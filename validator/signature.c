/* Model signature rules (see signature.h). */
#include "signature.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../parser/mem.h"
#include "../parser/sort.h"
#include "../parser/text.h"

void stg_sig_note(stg_sig_findings *f, stg_code code, bool has_offset, uint64_t offset,
                  const char *file, size_t file_len, const char *fmt, ...)
{
    if (f->count >= STG_SIG_FINDINGS_MAX) {
        f->dropped++;
        return;
    }
    if (f->count == f->cap) {
        size_t cap = f->cap == 0 ? 16 : f->cap * 2;
        void *p = stg_mem_realloc(f->items, cap * sizeof *f->items);
        if (p == NULL) {
            f->dropped++;
            f->lost = true;
            return;
        }
        f->items = p;
        f->cap = cap;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t mlen = n < 0 ? 0 : (size_t)n >= sizeof msg ? sizeof msg - 1 : (size_t)n;
    char *m = stg_mem_strndup(msg, mlen);
    char *fl = file != NULL ? stg_mem_strndup(file, file_len) : NULL;
    if (m == NULL || (file != NULL && fl == NULL)) {
        stg_mem_free(m);
        stg_mem_free(fl);
        f->dropped++;
        f->lost = true;
        return;
    }
    stg_signature_finding *it = &f->items[f->count++];
    memset(it, 0, sizeof *it);
    it->code = code;
    it->severity = stg_code_severity(code, STG_PROFILE_STRICT);
    it->has_offset = has_offset;
    it->offset = has_offset ? offset : 0;
    it->file = fl;
    it->message = m;
}

void stg_sig_findings_free(stg_sig_findings *f)
{
    for (size_t i = 0; i < f->count; i++) {
        stg_mem_free((void *)(uintptr_t)f->items[i].file);
        stg_mem_free((void *)(uintptr_t)f->items[i].message);
    }
    stg_mem_free(f->items);
    memset(f, 0, sizeof *f);
}

/* ------------------------------------------------------------------------------------------ */
/* Ignore paths */

static bool grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return true;
    }
    size_t cap2 = *cap == 0 ? 64 : *cap;
    while (cap2 < need) {
        cap2 *= 2;
    }
    void *p = stg_mem_realloc(*buf, cap2 * elem);
    if (p == NULL) {
        return false;
    }
    *buf = p;
    *cap = cap2;
    return true;
}

bool stg_sig_ignores_add(stg_sig_ignores *ig, const uint8_t *path, size_t len)
{
    if (len > 0 && path[0] == '/') {
        return true;
    }
    if (!grow((void **)&ig->text, &ig->text_cap, ig->text_len + len + 1u, 1) ||
        !grow((void **)&ig->at, &ig->cap, ig->count + 1u, sizeof *ig->at)) {
        return false;
    }
    size_t start = ig->text_len, o = start;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && path[j] != '/') {
            j++;
        }
        size_t n = j - i;
        if (n == 2 && path[i] == '.' && path[i + 1] == '.') {
            return true; /* dropped: names nothing inside the model */
        }
        if (n > 0 && !(n == 1 && path[i] == '.')) {
            if (o > start) {
                ig->text[o++] = '/';
            }
            memcpy(ig->text + o, path + i, n);
            o += n;
        }
        i = j + 1;
    }
    if (o == start) {
        ig->covers_all = true;
        return true;
    }
    ig->text[o++] = 0;
    ig->at[ig->count++] = start;
    ig->sorted = false;
    ig->text_len = o;
    return true;
}

static int cmp_entries(size_t a, size_t b, void *ctx)
{
    const stg_sig_ignores *ig = ctx;
    return strcmp(ig->text + ig->at[a], ig->text + ig->at[b]);
}

void stg_sig_ignores_seal(stg_sig_ignores *ig)
{
    /* sort positions through an index permutation (stg_sort_index sorts indexes) */
    size_t *idx = ig->count > 0 ? stg_mem_alloc(ig->count * sizeof *idx) : NULL;
    if (idx == NULL) {
        return; /* unsorted: lookups fall back to a scan */
    }
    for (size_t i = 0; i < ig->count; i++) {
        idx[i] = i;
    }
    stg_sort_index(idx, ig->count, cmp_entries, ig);
    for (size_t i = 0; i < ig->count; i++) {
        idx[i] = ig->at[idx[i]];
    }
    memcpy(ig->at, idx, ig->count * sizeof *idx);
    stg_mem_free(idx);
    ig->sorted = true;
}

/* Whether rel[0..len) is an entry exactly. */
static bool is_entry(const stg_sig_ignores *ig, const char *rel, size_t len)
{
    size_t lo = 0, hi = ig->count;
    if (!ig->sorted) {
        for (size_t i = 0; i < ig->count; i++) {
            const char *e = ig->text + ig->at[i];
            if (strlen(e) == len && memcmp(e, rel, len) == 0) {
                return true;
            }
        }
        return false;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = ig->text + ig->at[mid];
        int c = strncmp(e, rel, len);
        if (c == 0 && e[len] != 0) {
            c = 1; /* e is longer: sorts after */
        }
        if (c == 0) {
            return true;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return false;
}

bool stg_sig_ignored(const stg_sig_ignores *ig, const char *rel, size_t len)
{
    if (ig->covers_all) {
        return true;
    }
    /* the path itself and each of its leading folders */
    for (size_t i = 0; i <= len; i++) {
        if ((i == len || rel[i] == '/') && is_entry(ig, rel, i)) {
            return true;
        }
    }
    return false;
}

void stg_sig_ignores_free(stg_sig_ignores *ig)
{
    stg_mem_free(ig->text);
    stg_mem_free(ig->at);
    memset(ig, 0, sizeof *ig);
}

/* ------------------------------------------------------------------------------------------ */
/* The signed file list */

bool stg_sig_name_canonical(const uint8_t *name, size_t len)
{
    if (len == 1 && name[0] == '.') {
        return true;
    }
    if (len == 0 || memchr(name, 0, len) != NULL) {
        return false;
    }
    for (size_t i = 0; i <= len;) {
        size_t j = i;
        while (j < len && name[j] != '/') {
            j++;
        }
        size_t n = j - i;
        if (n == 0 || (n == 1 && name[i] == '.') ||
            (n == 2 && name[i] == '.' && name[i + 1] == '.')) {
            return false;
        }
        i = j + 1;
        if (j == len) {
            break;
        }
    }
    return true;
}

static int cmp_names(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n > 0 ? memcmp(a, b, n) : 0;
    return c != 0 ? c : al < bl ? -1 : al > bl ? 1 : 0;
}

static int cmp_resources(size_t a, size_t b, void *ctx)
{
    const stg_sig_resource *r = ctx;
    int c = cmp_names(r[a].name, r[a].name_len, r[b].name, r[b].name_len);
    return c != 0 ? c : a < b ? -1 : a > b ? 1 : 0; /* ties by listed order: the repeat is later */
}

stg_status stg_sig_manifest_init(stg_sig_manifest *m, const stg_sig_statement *st,
                                 stg_sig_findings *f)
{
    memset(m, 0, sizeof *m);
    m->res = st->resources;
    m->count = st->resource_count;
    if (m->count == 0) {
        return STG_OK;
    }
    m->order = stg_mem_alloc(m->count * sizeof *m->order);
    m->seen = stg_mem_calloc(m->count, 1);
    if (m->order == NULL || m->seen == NULL) {
        stg_sig_manifest_free(m);
        return STG_E_NOMEM;
    }
    for (size_t i = 0; i < m->count; i++) {
        m->order[i] = (uint32_t)i;
        const stg_sig_resource *r = &m->res[i];
        if (!stg_sig_name_canonical(r->name, r->name_len)) {
            stg_sig_note(f, STG_SIGNATURE_STATEMENT_INVALID, true, r->offset, (const char *)r->name,
                         r->name_len,
                         "a resource name that is not a plain relative path (offset in the DSSE "
                         "payload)");
        }
    }
    stg_sort_index32(m->order, m->count, cmp_resources, (void *)(uintptr_t)m->res);
    for (size_t i = 1; i < m->count; i++) {
        const stg_sig_resource *a = &m->res[m->order[i - 1]], *b = &m->res[m->order[i]];
        if (cmp_names(a->name, a->name_len, b->name, b->name_len) == 0) {
            stg_sig_note(f, STG_SIGNATURE_STATEMENT_INVALID, true, b->offset, (const char *)b->name,
                         b->name_len,
                         "a file listed twice (offset in the DSSE payload; the reference keeps "
                         "the last)");
        }
    }
    return STG_OK;
}

/* Index into res of the first resource named rel, or SIZE_MAX. */
static size_t find(const stg_sig_manifest *m, const char *rel, size_t len)
{
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const stg_sig_resource *r = &m->res[m->order[mid]];
        if (cmp_names(r->name, r->name_len, (const uint8_t *)rel, len) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < m->count) {
        const stg_sig_resource *r = &m->res[m->order[lo]];
        if (cmp_names(r->name, r->name_len, (const uint8_t *)rel, len) == 0) {
            return m->order[lo];
        }
    }
    return SIZE_MAX;
}

void stg_sig_manifest_seen(stg_sig_manifest *m, const char *rel, size_t len)
{
    size_t i = find(m, rel, len);
    if (i != SIZE_MAX) {
        m->seen[i] = 1;
    }
}

void stg_sig_manifest_file(stg_sig_manifest *m, const char *rel, size_t len,
                           const uint8_t digest[32], stg_sig_findings *f)
{
    size_t i = find(m, rel, len);
    if (i == SIZE_MAX) {
        stg_sig_note(f, STG_SIGNED_FILE_EXTRA, false, 0, rel, len,
                     "a file the signature does not list (added or renamed after signing)");
        return;
    }
    m->seen[i] = 1;
    if (memcmp(m->res[i].digest, digest, 32) != 0) {
        char want[65], got[65];
        stg_hex_encode(m->res[i].digest, 32, want);
        stg_hex_encode(digest, 32, got);
        stg_sig_note(f, STG_SIGNED_FILE_MODIFIED, false, 0, rel, len,
                     "the file's SHA-256 is %s but the signature says %s", got, want);
    }
}

void stg_sig_manifest_finish(const stg_sig_manifest *m, stg_sig_findings *f)
{
    for (size_t k = 0; k < m->count; k++) {
        size_t i = m->order[k];
        /* a repeat's first occurrence decides; the repeat is already a finding */
        if (!m->seen[i] &&
            (k == 0 || cmp_names(m->res[m->order[k - 1]].name, m->res[m->order[k - 1]].name_len,
                                 m->res[i].name, m->res[i].name_len) != 0)) {
            stg_sig_note(f, STG_SIGNED_FILE_MISSING, false, 0, (const char *)m->res[i].name,
                         m->res[i].name_len,
                         "a file the signature lists is not in the model (removed or renamed)");
        }
    }
}

void stg_sig_manifest_free(stg_sig_manifest *m)
{
    stg_mem_free(m->order);
    stg_mem_free(m->seen);
    memset(m, 0, sizeof *m);
}
