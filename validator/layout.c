/* Safetensors stage 3: the tensor table against the data section.
 *
 * Tensors are put in (begin, end, name bytes) order (deterministic, whatever the hash order of
 * any reader), then walked once with the end of the bytes covered so far:
 *   - end past the data section          -> offsets_out_of_range
 *   - begin before the covered end       -> offsets_overlap (zero-size tensors share no byte and
 *     may sit together at a boundary, but one pointing inside another tensor's bytes is refused
 *     as the reference refuses it; exact aliases of non-empty ranges overlap)
 *   - begin after the covered end        -> data_gap (a first tensor not at 0 included)
 *   - covered end short of the data size -> data_trailing
 * This accepts exactly the layouts the reference accepts: every begin equals the previous end,
 * from 0 to the data size. Sorting is stg_sort_index32 (heapsort over 32-bit indexes, O(n log n)
 * worst case, no allocation) followed by an in-place permutation; it is skipped when the
 * table is already in order, as writers produce it. */
#include <string.h>

#include "../parser/sort.h"
#include "../parser/util.h"
#include "safetensors.h"

/* (begin, end, name bytes) order: < 0, 0, > 0. */
static int tensor_cmp(const stg_st_header *h, const stg_st_tensor *a, const stg_st_tensor *b)
{
    if (a->begin != b->begin) {
        return a->begin < b->begin ? -1 : 1;
    }
    if (a->end != b->end) {
        return a->end < b->end ? -1 : 1;
    }
    const char *an, *bn;
    size_t al, bl;
    stg_st_name(h, a, &an, &al);
    stg_st_name(h, b, &bn, &bl);
    size_t m = al < bl ? al : bl;
    int c = m > 0 ? memcmp(an, bn, m) : 0;
    if (c != 0) {
        return c;
    }
    return al < bl ? -1 : (al > bl ? 1 : 0);
}

static int tensor_index_cmp(size_t a, size_t b, void *ctx)
{
    const stg_st_header *h = ctx;
    return tensor_cmp(h, &h->tensors[a], &h->tensors[b]);
}

/* Sorts h->tensors (and the shapes beside them); false when the index array did not fit the
 * memory budget. A table stage 2 found in strictly increasing (begin, end) (data_order) is
 * sorted already. */
static bool sort_tensors(stg_st_header *h)
{
    size_t n = h->tensor_count;
    bool sorted = true;
    for (size_t i = 1; i < n && sorted && !h->data_order; i++) {
        sorted = tensor_cmp(h, &h->tensors[i], &h->tensors[i - 1]) >= 0;
    }
    if (sorted) {
        return true;
    }
    if (n > UINT32_MAX) {
        return false;
    }
    uint32_t *idx = stg_arena_alloc(&h->arena, n * sizeof *idx, sizeof *idx);
    if (idx == NULL) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        idx[i] = (uint32_t)i;
    }
    stg_sort_index32(idx, n, tensor_index_cmp, h);
    /* Position i must receive record idx[i]: follow each cycle once. */
    stg_st_shape *sh = h->shapes;
    for (size_t i = 0; i < n; i++) {
        if (idx[i] == i) {
            continue;
        }
        stg_st_tensor saved = h->tensors[i];
        stg_st_shape saved_shape = {NULL, 0};
        if (sh != NULL) {
            saved_shape = sh[i];
        }
        size_t j = i;
        while (idx[j] != i) {
            size_t from = idx[j];
            h->tensors[j] = h->tensors[from];
            if (sh != NULL) {
                sh[j] = sh[from];
            }
            idx[j] = (uint32_t)j;
            j = from;
        }
        h->tensors[j] = saved;
        if (sh != NULL) {
            sh[j] = saved_shape;
        }
        idx[j] = (uint32_t)j;
    }
    return true;
}

static stg_finding *tensor_finding(const stg_st_header *h, stg_report *r, const stg_st_tensor *t,
                                   stg_finding *f)
{
    const char *name;
    size_t len;
    stg_st_name(h, t, &name, &len);
    stg_report_set_tensor(r, f, name, len);
    return f;
}

/* The public views of a door that asked for them (want_public), in the table's order. */
static bool publish(stg_st_header *h)
{
    if (!h->want_public || h->tensor_count == 0) {
        return true;
    }
    void *buf = h->pub; /* reserved by stage 2 */
    if (stg_arena_grow_buffer(&h->pub_arena, &buf, &h->pub_cap_bytes,
                              h->tensor_count * sizeof(stg_tensor)) != 0) {
        return false;
    }
    h->pub = buf;
    /* Names point into the header, where the closing quote follows them: each view gets a
     * NUL-terminated copy in the room stage 2 reserved (so a stream holds no more once its
     * header is in). */
    char *names = h->pub_names;
    if (names == NULL) {
        return false;
    }
    for (size_t i = 0; i < h->tensor_count; i++) {
        const stg_st_tensor *t = &h->tensors[i];
        stg_tensor *p = &h->pub[i];
        const char *name;
        stg_st_name(h, t, &name, &p->name_len);
        if (p->name_len > 0) {
            memcpy(names, name, p->name_len);
        }
        names[p->name_len] = '\0';
        p->name = names;
        names += p->name_len + 1;
        p->dtype = stg_st_dtype(t);
        p->rank = h->shapes[i].rank;
        p->shape = h->shapes[i].dims;
        p->begin = t->begin;
        p->end = t->end;
        p->shard = 0;
    }
    return true;
}

void stg_st_check_layout(stg_st_header *h, uint64_t data_len, const stg_limits *lim, stg_report *r)
{
    (void)lim;
    h->layout_ok = false;
    if (!h->schema_ok) {
        return; /* depends on a valid table */
    }
    bool errors = false;
    if (h->data_start % 8 != 0) {
        stg_report_add(r, STG_HEADER_NOT_PADDED, h->data_start,
                       "the data section starts at byte %llu, not a multiple of 8",
                       (unsigned long long)h->data_start);
    }
    if (!sort_tensors(h) || !publish(h)) {
        stg_report_limit(r, h->data_start, "max_memory", (uint64_t)h->arena.cap);
        if (h->arena.out_of_memory) {
            stg_report_oom(r);
        }
        if (h->want_public) {
            h->tensor_count = 0; /* no views to hand out: the door exposes no table */
        }
        return;
    }
    uint32_t elem_bits[STG_ST_DTYPE_MASK + 1]; /* stg_dtype_bits, looked up once */
    for (uint32_t d = 0; d <= STG_ST_DTYPE_MASK; d++) {
        elem_bits[d] = stg_dtype_bits((stg_dtype)d);
    }
    uint64_t covered = 0;              /* bytes [0, covered) are accounted for */
    const stg_st_tensor *owner = NULL; /* the tensor whose end is `covered` */
    uint64_t start = h->data_start;
    for (size_t i = 0; i < h->tensor_count; i++) {
        const stg_st_tensor *t = &h->tensors[i];
        uint64_t b = t->begin, e = t->end; /* b <= e after stage 2 */
        uint32_t bits = elem_bits[stg_st_dtype(t)];
        uint64_t size = bits / 8;
        /* elements of 16 bits and more are 2, 4 or 8 bytes: a mask, not a division */
        uint64_t rem = (size & (size - 1)) == 0 ? (b & (size - 1)) : b % (size == 0 ? 1 : size);
        if (bits >= 16 && e > b && rem != 0) { /* zero-size tensors have no bytes */
            tensor_finding(h, r, t,
                           stg_report_add(r, STG_TENSOR_MISALIGNED, stg_st_offsets_offset(h, t),
                                          "the tensor begins at data byte %llu, not a multiple "
                                          "of its %u-byte element",
                                          (unsigned long long)b, bits / 8));
        }
        if (e > data_len) {
            errors = true;
            tensor_finding(h, r, t,
                           stg_report_add(r, STG_OFFSETS_OUT_OF_RANGE, stg_st_offsets_offset(h, t),
                                          "the tensor ends at data byte %llu but the data "
                                          "section has %llu bytes",
                                          (unsigned long long)e, (unsigned long long)data_len));
            /* Count what it claims inside the section as covered, to avoid follow-on noise. */
            if (b > covered && b <= data_len) {
                stg_report_add(r, STG_DATA_GAP, start + covered,
                               "data bytes [%llu, %llu) are covered by no tensor",
                               (unsigned long long)covered, (unsigned long long)b);
            }
            covered = data_len;
            owner = t;
            continue;
        }
        if (b < covered) { /* covered > 0: owner is the tensor that ends there */
            errors = true;
            tensor_finding(h, r, t,
                           stg_report_add(r, STG_OFFSETS_OVERLAP, stg_st_offsets_offset(h, t),
                                          "the tensor's range [%llu, %llu) overlaps the tensor "
                                          "whose data_offsets are at byte %llu",
                                          (unsigned long long)b, (unsigned long long)e,
                                          (unsigned long long)stg_st_offsets_offset(h, owner)));
            if (e > covered) {
                covered = e;
                owner = t;
            }
            continue;
        }
        if (b > covered) {
            errors = true;
            /* start + covered <= start + data_len, the file size: no overflow */
            stg_report_add(r, STG_DATA_GAP, start + covered,
                           "data bytes [%llu, %llu) are covered by no tensor",
                           (unsigned long long)covered, (unsigned long long)b);
        }
        covered = e;
        owner = t;
    }
    if (covered < data_len) {
        errors = true;
        stg_report_add(r, STG_DATA_TRAILING, start + covered,
                       "%llu byte(s) follow the last tensor's data",
                       (unsigned long long)(data_len - covered));
    }
    h->layout_ok = !errors;
}
