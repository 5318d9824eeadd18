/* Target: stg_yaml_parse (parser/yaml.c) and stg_hydra_check (validator/hydra.c). Seeds:
 * corpus/yaml/. Dict: fuzz/yaml.dict.
 * Properties checked (abort on failure):
 *   - the same bytes parse the same way twice (status, offset, node count);
 *   - an error's offset lies inside the buffer (or at its end), with a reason;
 *   - a complete tree is well formed: node 0 spans it, every subtree ends after its node and
 *     inside its parent, every mapping has an even number of children, every scalar's bytes lie
 *     in the input or were decoded, never over the limits (depth, nodes);
 *   - the hydra rules over the same bytes: a refused parse is never an ok verdict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/check.h"
#include "parser/arena.h"
#include "parser/yaml.h"
#include "validator/hydra.h"
#include "validator/report.h"

static void tree_props(const stg_yaml_doc *d)
{
    size_t open_end[STG_YAML_DEPTH_CEILING + 2];
    size_t children[STG_YAML_DEPTH_CEILING + 2];
    bool is_map[STG_YAML_DEPTH_CEILING + 2];
    size_t depth = 0;
    if (d->count > 0 && d->nodes[0].end != d->count) {
        abort();
    }
    for (size_t i = 0; i <= d->count; i++) {
        while (depth > 0 && open_end[depth - 1] == i) {
            if (is_map[depth - 1] && children[depth - 1] % 2 != 0) {
                abort();
            }
            depth--;
        }
        if (i == d->count) {
            break;
        }
        const stg_yaml_node *n = &d->nodes[i];
        if (n->end <= i || n->end > d->count || (depth > 0 && n->end > open_end[depth - 1])) {
            abort();
        }
        if (depth > 0) {
            children[depth - 1]++;
        }
        if (n->kind == STG_YAML_SCALAR) {
            if (n->end != i + 1 || (n->str_len > 0 && n->str == NULL)) {
                abort();
            }
        } else if (n->end > i + 1) {
            if (depth > STG_YAML_DEPTH_CEILING) {
                abort();
            }
            open_end[depth] = n->end;
            children[depth] = 0;
            is_map[depth] = n->kind == STG_YAML_MAP;
            depth++;
        }
    }
    if (depth != 0) {
        abort();
    }
}

static void parse_props(const uint8_t *data, size_t size, uint32_t max_depth, size_t max_nodes,
                        size_t cap)
{
    stg_arena a, b;
    stg_arena_init(&a, cap);
    stg_arena_init(&b, cap);
    stg_yaml_doc x, y;
    stg_yaml_status sx = stg_yaml_parse(data, size, max_depth, max_nodes, &a, &x);
    stg_yaml_status sy = stg_yaml_parse(data, size, max_depth, max_nodes, &b, &y);
    if (sx != sy || x.count != y.count || (sx != STG_YAML_OK && x.error_offset != y.error_offset)) {
        abort();
    }
    if (sx != STG_YAML_OK && (x.error_offset > size || x.error_what == NULL)) {
        abort();
    }
    if (max_nodes > 0 && x.count > max_nodes) {
        abort();
    }
    if (sx == STG_YAML_OK) {
        tree_props(&x);
    }
    stg_yaml_release(&x, &a);
    stg_yaml_release(&y, &b);
    stg_arena_release(&a);
    stg_arena_release(&b);
}

static void check_props(const uint8_t *data, size_t size, const stg_limits *lim)
{
    stg_report *r = stg_report_new(lim);
    if (r == NULL) {
        return;
    }
    stg_check_ctx ctx;
    stg_check_ctx_init(&ctx, lim, r);
    stg_hydra_check(data, size, &ctx);
    stg_report_finish(r);
    stg_arena arena;
    stg_arena_init(&arena, (size_t)64 << 20);
    stg_yaml_doc doc;
    stg_yaml_status st = stg_yaml_parse(data, size, lim->max_json_depth, 0, &arena, &doc);
    if (st != STG_YAML_OK && lim->max_memory == 0 && stg_report_verdict(r) == STG_VERDICT_OK) {
        abort(); /* a refused document passed */
    }
    stg_yaml_release(&doc, &arena);
    stg_arena_release(&arena);
    stg_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_props(data, size, 64, 0, (size_t)64 << 20);
    parse_props(data, size, 4, 64, (size_t)64 << 20);
    parse_props(data, size, 64, 0, 4096 + (size & 0xFFFF)); /* the cap refuses somewhere */
    stg_limits lim;
    stg_limits_default(&lim);
    for (int p = 0; p < 2; p++) {
        lim.profile = (stg_profile)p;
        check_props(data, size, &lim);
    }
    return 0;
}
