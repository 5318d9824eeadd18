/* Member paths of the scan context (see ctx.h). */
#include "ctx.h"

#include <string.h>

#include "../parser/mem.h"

/* Copies the last bytes of s (length n) in front of *w, at most *left of them. */
static void put_tail(char *p, size_t *w, size_t *left, const char *s, size_t n)
{
    size_t take = n < *left ? n : *left;
    memcpy(p + *w - take, s + (n - take), take);
    *w -= take;
    *left -= take;
}

/* The whole path is "root!...!up!name"; past STG_MEMBER_PATH_MAX only "..." and its last
 * STG_MEMBER_PATH_MAX - 3 bytes are kept. It is written from its end, so nothing longer than
 * the result is ever built, whatever the depth. */
char *stg_member_path_render(const stg_member_link *up, const char *name)
{
    size_t full = strlen(name);
    for (const stg_member_link *l = up; l != NULL; l = l->up) {
        full += 1 + strlen(l->name);
    }
    size_t keep = full <= STG_MEMBER_PATH_MAX ? full : STG_MEMBER_PATH_MAX - 3;
    size_t total = full == keep ? keep : keep + 3;
    char *p = stg_mem_alloc(total + 1);
    if (p == NULL) {
        return NULL;
    }
    p[total] = '\0';
    size_t w = total, left = keep;
    put_tail(p, &w, &left, name, strlen(name));
    for (const stg_member_link *l = up; l != NULL && left > 0; l = l->up) {
        put_tail(p, &w, &left, "!", 1);
        put_tail(p, &w, &left, l->name, strlen(l->name));
    }
    if (full != keep) {
        memcpy(p, "...", 3);
    }
    return p;
}

char *stg_ctx_entry_path(const stg_check_ctx *ctx, const char *name)
{
    return stg_member_path_render(ctx->member, name);
}

const char *stg_ctx_member_path(stg_check_ctx *ctx)
{
    stg_member_link *m = ctx->member;
    if (m == NULL) {
        return NULL;
    }
    if (m->path == NULL) {
        m->path = stg_member_path_render(m->up, m->name);
        if (m->path == NULL) {
            stg_report_oom(ctx->report);
        }
    }
    return m->path;
}

void stg_ctx_set_member(stg_check_ctx *ctx, stg_finding *f)
{
    if (f != NULL && ctx->member != NULL) {
        stg_report_set_member(ctx->report, f, stg_ctx_member_path(ctx), ctx->member_offset);
    }
}
