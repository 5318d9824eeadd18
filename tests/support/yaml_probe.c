/* Test-only driver: prints stguard's reading of YAML files (parser/yaml) as one JSON line per
 * file, {"file": ..., "status": "ok"|"syntax"|"unsupported"|..., "tree": ...} with scalars as
 * {"s": text}, mappings as {"m": [[key, value], ...]} and sequences as {"q": [...]}, so
 * tests/remotecode/yaml_differential.py can compare it with PyYAML's composer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/arena.h"
#include "parser/yaml.h"

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            break;
        }
        uint8_t *nb = realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void json_string(const uint8_t *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c < 0x20 || c == 0x7f) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

static const char *status_name(stg_yaml_status st)
{
    switch (st) {
    case STG_YAML_OK: return "ok";
    case STG_YAML_E_SYNTAX: return "syntax";
    case STG_YAML_E_UNSUPPORTED: return "unsupported";
    case STG_YAML_E_DEPTH: return "depth";
    case STG_YAML_E_NODES: return "nodes";
    case STG_YAML_E_MEMORY: return "memory";
    }
    return "?";
}

/* The tree in document order, closing each collection when its end is reached. */
static void print_tree(const stg_yaml_doc *d)
{
    size_t ends[STG_YAML_DEPTH_CEILING + 1];
    int in_map[STG_YAML_DEPTH_CEILING + 1], pos[STG_YAML_DEPTH_CEILING + 1];
    size_t depth = 0;
    for (size_t i = 0; i <= d->count; i++) {
        while (depth > 0 && ends[depth - 1] == i) {
            fputs(in_map[depth - 1] ? "]]}" : "]}", stdout);
            depth--;
            if (depth > 0) {
                pos[depth - 1]++;
            }
        }
        if (i == d->count) {
            break;
        }
        if (depth > 0) {
            int p = pos[depth - 1];
            if (in_map[depth - 1]) {
                fputs(p == 0 ? "" : p % 2 == 1 ? "," : "],[", stdout);
            } else if (p > 0) {
                putchar(',');
            }
        }
        const stg_yaml_node *n = &d->nodes[i];
        if (n->kind == STG_YAML_SCALAR) {
            fputs("{\"s\":", stdout);
            json_string(n->str, n->str_len);
            putchar('}');
            if (depth > 0) {
                pos[depth - 1]++;
            }
            continue;
        }
        int map = n->kind == STG_YAML_MAP;
        fputs(map ? (n->end == i + 1 ? "{\"m\":[" : "{\"m\":[[") : "{\"q\":[", stdout);
        if (map && n->end == i + 1) {
            fputs("]}", stdout);
            if (depth > 0) {
                pos[depth - 1]++;
            }
            continue;
        }
        if (!map && n->end == i + 1) {
            fputs("]}", stdout);
            if (depth > 0) {
                pos[depth - 1]++;
            }
            continue;
        }
        ends[depth] = n->end;
        in_map[depth] = map;
        pos[depth] = 0;
        depth++;
    }
}

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        size_t len = 0;
        uint8_t *buf = slurp(argv[a], &len);
        if (buf == NULL) {
            return 2;
        }
        stg_arena arena;
        stg_arena_init(&arena, (size_t)1 << 30);
        stg_yaml_doc doc;
        stg_yaml_status st = stg_yaml_parse(buf, len, 256, 0, &arena, &doc);
        printf("{\"file\":");
        json_string((const uint8_t *)argv[a], strlen(argv[a]));
        printf(",\"status\":\"%s\",\"offset\":%zu,\"what\":\"%s\",\"tree\":", status_name(st),
               doc.error_offset, doc.error_what != NULL ? doc.error_what : "");
        if (st == STG_YAML_OK && doc.count > 0) {
            print_tree(&doc);
        } else {
            fputs("null", stdout);
        }
        puts("}");
        stg_yaml_release(&doc, &arena);
        stg_arena_release(&arena);
        free(buf);
    }
    return 0;
}
