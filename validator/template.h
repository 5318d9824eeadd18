/* Chat-template rules (internal API; docs/templates.md): a Jinja2 template, as a model's
 * tokenizer_config.json, chat_template.jinja or GGUF tokenizer.chat_template ships it, is
 * lexed (parser/jinja.h) and its grammar walked as jinja2's parser reads it; nothing is
 * rendered. Findings: chat_template_unsafe (an attribute or item whose name starts with an
 * underscore, a name the template builds or takes from an object's text and then looks up,
 * the globals whose functions reach Python's modules), chat_template_malformed (jinja2 would
 * refuse to compile it), chat_template_loader (it loads other templates), and one
 * chat_template_found (info) per template, naming it. Pure: no I/O. */
#ifndef STG_VALIDATOR_TEMPLATE_H
#define STG_VALIDATOR_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "stguard/stguard.h"

/* Where a byte of the template text is in the file: offset -> file offset. */
typedef uint64_t (*stg_template_offset_fn)(const void *arg, size_t offset);

typedef struct stg_template_src {
    const uint8_t *text; /* the template (escapes of its container already decoded) */
    size_t len;
    uint64_t base;              /* file offset of text[0], when map is NULL */
    stg_template_offset_fn map; /* NULL: text[i] is at base + i */
    const void *map_arg;
    const char *where;   /* constant text naming its container ("tokenizer_config.json ...") */
    const uint8_t *name; /* the template's own name (a named template), NULL for the default */
    size_t name_len;
} stg_template_src;

/* Checks one template, adding findings to r. hash_seed keys the name tables (0: default). */
void stg_template_check(const stg_template_src *src, uint64_t hash_seed, stg_report *r);

/* The templates of a JSON document whose top-level object has a "chat_template" member (a
 * string, or a list of {"name", "template"} objects, as transformers reads it): each is
 * decoded and checked, with offsets in buf. Returns the number of templates found (0: no
 * such member, or buf is no JSON object; nothing is reported then). */
size_t stg_template_check_json(const uint8_t *buf, size_t len, const stg_limits *lim,
                               uint64_t hash_seed, stg_report *r);

#endif
