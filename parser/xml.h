/* A bounded pull parser for the XML that model files use (OpenVINO IR: docs/openvino.md). It
 * reads one document from a buffer and hands out element starts and ends, in order, with each
 * start tag's attributes checked and reachable by name. What it reads: an optional UTF-8 byte
 * order mark, processing instructions (`<?xml ...?>` included), comments, CDATA sections,
 * elements with single- or double-quoted attributes, character data, and the references
 * `&lt; &gt; &amp; &quot; &apos; &#N; &#xH;`. What it refuses (an error with its offset,
 * never a guess): a DTD (`<!DOCTYPE`, so no entity is ever defined or expanded), any other
 * entity, `<` inside an attribute value, an end tag that does not close the open element,
 * content after the root element or outside it, no root element, nesting deeper than
 * STG_XML_DEPTH_CEILING and more than STG_XML_ATTRS_CEILING attributes on one element.
 * No allocation, no recursion; every byte is looked at a bounded number of times (an
 * attribute lookup walks one start tag). */
#ifndef STG_PARSER_XML_H
#define STG_PARSER_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cursor.h"

#define STG_XML_DEPTH_CEILING 256u
#define STG_XML_ATTRS_CEILING 1024u

/* A range of the input: absolute offset and length. */
typedef struct stg_xml_span {
    size_t off, len;
} stg_xml_span;

typedef enum stg_xml_kind {
    STG_XML_START = 0, /* an element's start tag (a `<x/>` is a START then an END) */
    STG_XML_END,       /* the element closes */
    STG_XML_DONE,      /* the document ended well-formed */
    STG_XML_ERROR      /* x->error says why, x->error_offset where */
} stg_xml_kind;

typedef enum stg_xml_error {
    STG_XML_E_NONE = 0,
    STG_XML_E_SYNTAX,     /* bytes that are no markup the subset reads */
    STG_XML_E_DTD,        /* a document type declaration */
    STG_XML_E_ENTITY,     /* a reference that is no predefined entity or valid character */
    STG_XML_E_UNBALANCED, /* an end tag for another element, or the input ends inside one */
    STG_XML_E_DEPTH,      /* nesting past STG_XML_DEPTH_CEILING */
    STG_XML_E_ATTRS,      /* more than STG_XML_ATTRS_CEILING attributes on one element */
    STG_XML_E_OUTSIDE,    /* content before or after the root element, or no root at all */
} stg_xml_error;

typedef struct stg_xml_event {
    stg_xml_kind kind;
    size_t offset;      /* of the tag's `<` (START, END), or of the end (DONE) */
    stg_xml_span name;  /* the element's name */
    stg_xml_span attrs; /* START: the checked attributes between the name and `>` */
    uint32_t depth;     /* the element's depth: the root is 1 */
} stg_xml_event;

typedef struct stg_xml {
    stg_cursor c;
    stg_xml_span open[STG_XML_DEPTH_CEILING]; /* names of the open elements */
    uint32_t depth;
    bool root_done;   /* the root element closed */
    bool pending_end; /* the last START was `<x/>`: its END comes next */
    stg_xml_error error;
    size_t error_offset;
} stg_xml;

void stg_xml_init(stg_xml *x, const uint8_t *buf, size_t len);

/* The next event. After DONE or ERROR every call returns the same. */
stg_xml_kind stg_xml_next(stg_xml *x, stg_xml_event *ev);

/* true when the span's bytes are s (exactly, or ASCII case-insensitively with fold). */
bool stg_xml_span_is(const uint8_t *base, stg_xml_span sp, const char *s, bool fold);

/* The first attribute named `name` of a start tag's attrs: its raw value (between the quotes,
 * references not decoded) in *value and the attribute's offset in *at; false when absent. */
bool stg_xml_attr(const uint8_t *base, stg_xml_span attrs, const char *name, stg_xml_span *value,
                  size_t *at);

/* Decodes a checked raw value into out[0..cap): references become their characters (UTF-8).
 * Returns the decoded length, or SIZE_MAX when it does not fit. */
size_t stg_xml_decode(const uint8_t *base, stg_xml_span raw, uint8_t *out, size_t cap);

#endif
