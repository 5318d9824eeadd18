/* OpenVINO IR rules (validator/openvino.h). What the frontend reads, and so what is checked
 * (openvinotoolkit/openvino; the files and commits are cited in docs/openvino.md):
 *  - the root element, compared ASCII case-insensitively with "net", and its `version`
 *    attribute: IR 10 and 11 are read, anything else is refused (frontend.cpp);
 *  - every <layer> child of a <layers> element (the net's, and a subgraph's <body>); a layer
 *    whose `type` is "Const" takes its value from its first <data> child: an inline `value`
 *    attribute, else `offset` and `size` (unsigned integers as std::stoll reads them),
 *    `element_type` (a name element::Type knows) and `shape` (comma-separated integers), and
 *    the weights must hold offset + size bytes, of which the shape and type need at least
 *    ceil(elements x bits / 8) (ir_deserializer.cpp, XmlDeserializer::on_adapter). */
#include "openvino.h"

#include <string.h>

#include "../parser/mem.h"
#include "../parser/util.h"
#include "../parser/xml.h"

void stg_openvino_ir_init(stg_openvino_ir *ir)
{
    memset(ir, 0, sizeof *ir);
}

void stg_openvino_ir_release(stg_openvino_ir *ir)
{
    for (size_t i = 0; i < ir->nconsts; i++) {
        stg_mem_free(ir->consts[i].name);
    }
    stg_mem_free(ir->consts);
    memset(ir, 0, sizeof *ir);
}

/* ------------------------------------------------------------------------------ values */

/* element::Type's string constructor (element_type.cpp, type_from_string) and the bits of one
 * element (its TypeInfo); string is 0: its bytes are a packed string tensor of any size. */
static const struct {
    const char *name, *legacy;
    uint32_t bits;
} element_types[] = {
    {"f16", "FP16", 16},     {"f32", "FP32", 32},     {"bf16", "BF16", 16},
    {"f64", "FP64", 64},     {"i4", "I4", 4},         {"i8", "I8", 8},
    {"i16", "I16", 16},      {"i32", "I32", 32},      {"i64", "I64", 64},
    {"u1", "U1", 1},         {"BIN", "bin", 1},       {"u2", "U2", 2},
    {"u3", "U3", 3},         {"u4", "U4", 4},         {"u6", "U6", 6},
    {"u8", "U8", 8},         {"u16", "U16", 16},      {"u32", "U32", 32},
    {"u64", "U64", 64},      {"boolean", "BOOL", 8},  {"string", "STRING", 0},
    {"nf4", "NF4", 4},       {"f8e4m3", "F8E4M3", 8}, {"f8e5m2", "F8E5M2", 8},
    {"f4e2m1", "F4E2M1", 4}, {"f8e8m0", "F8E8M0", 8},
};

bool stg_openvino_element_bits(const uint8_t *s, size_t n, uint32_t *bits)
{
    for (size_t i = 0; i < sizeof element_types / sizeof element_types[0]; i++) {
        const char *names[2] = {element_types[i].name, element_types[i].legacy};
        for (int k = 0; k < 2; k++) {
            if (strlen(names[k]) == n && memcmp(names[k], s, n) == 0) {
                *bits = element_types[i].bits;
                return true;
            }
        }
    }
    return false;
}

/* An attribute's decoded value in out (NUL-terminated); false when absent or longer than cap
 * - 1 bytes. */
static bool attr_text(const uint8_t *buf, stg_xml_span attrs, const char *name, char *out,
                      size_t cap, size_t *len)
{
    stg_xml_span raw;
    size_t at;
    if (!stg_xml_attr(buf, attrs, name, &raw, &at)) {
        return false;
    }
    size_t n = stg_xml_decode(buf, raw, (uint8_t *)out, cap - 1);
    if (n == SIZE_MAX) {
        return false;
    }
    out[n] = '\0';
    *len = n;
    return true;
}

static bool c_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

/* s[*i..n) as std::stoll reads a number: white space, a sign, decimal digits (at least one),
 * at most INT64_MAX in magnitude; *neg for a '-'. Moves *i past it. */
static bool read_integer(const char *s, size_t n, size_t *i, uint64_t *v, bool *neg)
{
    while (*i < n && c_space(s[*i])) {
        (*i)++;
    }
    *neg = *i < n && s[*i] == '-';
    if (*i < n && (s[*i] == '-' || s[*i] == '+')) {
        (*i)++;
    }
    size_t start = *i;
    *v = 0;
    for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
        uint64_t d = (uint64_t)(s[*i] - '0');
        if (*v > ((uint64_t)INT64_MAX - d) / 10) {
            return false;
        }
        *v = *v * 10 + d;
    }
    return *i > start;
}

/* get_uint64_attr: the whole value one number, not negative. */
static bool parse_unsigned(const char *s, size_t n, uint64_t *v)
{
    size_t i = 0;
    bool neg;
    return read_integer(s, n, &i, v, &neg) && i == n && (!neg || *v == 0);
}

/* The element count of a `shape` value: comma-separated dimensions (none: a scalar, 1), each
 * a non-negative integer with optional white space around it. false: malformed or the product
 * overflows. */
static bool shape_elements(const char *s, size_t n, uint64_t *count)
{
    *count = 1;
    size_t i = 0;
    while (i < n) {
        uint64_t d;
        bool neg;
        if (!read_integer(s, n, &i, &d, &neg) || (neg && d != 0)) {
            return false;
        }
        while (i < n && c_space(s[i])) {
            i++;
        }
        if (stg_mul_u64(*count, d, count)) {
            return false;
        }
        if (i < n && (s[i] != ',' || i + 1 == n)) {
            return false;
        }
        i += i < n ? 1 : 0;
    }
    return true;
}

/* ------------------------------------------------------------------------------ walk */

typedef struct ov_walk {
    const uint8_t *buf;
    stg_report *r;
    stg_openvino_ir *ir;
    bool limit_hit, nomem;
    /* per depth: a <layers> element, a Const layer (its start and attributes) and whether
     * its <data> was seen */
    bool layers[STG_XML_DEPTH_CEILING + 1];
    bool is_const[STG_XML_DEPTH_CEILING + 1];
    bool has_data[STG_XML_DEPTH_CEILING + 1];
    size_t layer_at[STG_XML_DEPTH_CEILING + 1];
    stg_xml_span layer_attrs[STG_XML_DEPTH_CEILING + 1];
} ov_walk;

/* The layer's decoded `name` as a new string (NULL when absent; *nomem when memory fails). */
static char *layer_name(ov_walk *w, stg_xml_span attrs, size_t *len)
{
    stg_xml_span raw;
    size_t at;
    *len = 0;
    if (!stg_xml_attr(w->buf, attrs, "name", &raw, &at)) {
        return NULL;
    }
    char *s = stg_mem_alloc(raw.len + 1); /* decoding never lengthens more than the raw text */
    size_t n = s != NULL ? stg_xml_decode(w->buf, raw, (uint8_t *)s, raw.len) : SIZE_MAX;
    if (n == SIZE_MAX) {
        w->nomem = s == NULL;
        stg_mem_free(s);
        return NULL;
    }
    s[n] = '\0';
    *len = n;
    return s;
}

static void const_finding(ov_walk *w, uint64_t at, stg_xml_span layer_attrs, const char *what)
{
    size_t len;
    char *name = layer_name(w, layer_attrs, &len);
    stg_finding *f = stg_report_add(w->r, STG_OPENVINO_CONST_INVALID, at,
                                    "a Const layer's <data> %s: OpenVINO refuses the model", what);
    if (name != NULL) {
        stg_report_set_tensor(w->r, f, name, len);
    }
    stg_mem_free(name);
}

static void keep_const(ov_walk *w, uint64_t at, uint64_t offset, uint64_t size,
                       stg_xml_span layer_attrs)
{
    stg_openvino_ir *ir = w->ir;
    if (ir == NULL) {
        return;
    }
    if (ir->nconsts == STG_OPENVINO_CONSTS_CEILING) {
        if (!w->limit_hit) {
            stg_report_limit(w->r, at, "openvino_consts", STG_OPENVINO_CONSTS_CEILING);
        }
        w->limit_hit = true;
        return;
    }
    if (ir->nconsts == ir->cap) {
        size_t ncap = ir->cap == 0 ? 64 : ir->cap * 2;
        stg_openvino_const *n = stg_mem_realloc(ir->consts, ncap * sizeof *n);
        if (n == NULL) {
            w->nomem = true;
            return;
        }
        ir->consts = n;
        ir->cap = ncap;
    }
    stg_openvino_const *k = &ir->consts[ir->nconsts++];
    k->offset = at;
    k->data_offset = offset;
    k->data_size = size;
    k->name = layer_name(w, layer_attrs, &k->name_len);
}

/* A Const layer's first <data>: its value's description (ir_deserializer.cpp). */
static void check_data(ov_walk *w, const stg_xml_event *ev, stg_xml_span layer_attrs)
{
    char text[128], shape[4096];
    size_t n, shape_n;
    stg_xml_span raw;
    size_t at;
    if (stg_xml_attr(w->buf, ev->attrs, "value", &raw, &at)) {
        return; /* the value is inline: nothing is read from the weights */
    }
    uint64_t offset, size, count;
    uint32_t bits;
    if (!attr_text(w->buf, ev->attrs, "offset", text, sizeof text, &n) ||
        !parse_unsigned(text, n, &offset)) {
        const_finding(w, ev->offset, layer_attrs, "has no offset that is an unsigned integer");
    } else if (!attr_text(w->buf, ev->attrs, "size", text, sizeof text, &n) ||
               !parse_unsigned(text, n, &size)) {
        const_finding(w, ev->offset, layer_attrs, "has no size that is an unsigned integer");
    } else if (!attr_text(w->buf, ev->attrs, "element_type", text, sizeof text, &n) ||
               !stg_openvino_element_bits((const uint8_t *)text, n, &bits)) {
        const_finding(w, ev->offset, layer_attrs, "has no element_type OpenVINO knows");
    } else if (!attr_text(w->buf, ev->attrs, "shape", shape, sizeof shape, &shape_n) ||
               !shape_elements(shape, shape_n, &count)) {
        const_finding(w, ev->offset, layer_attrs,
                      "has no shape of non-negative integers, or its element count overflows");
    } else {
        uint64_t need_bits, end;
        bool wraps = stg_mul_u64(count, bits, &need_bits) || stg_add_u64(need_bits, 7, &need_bits);
        uint64_t need = need_bits / 8;
        if (wraps || stg_add_u64(offset, size, &end)) {
            const_finding(w, ev->offset, layer_attrs,
                          "has a size, offset + size or shape x element size that overflows");
        } else if (size < need) {
            size_t len;
            char *name = layer_name(w, layer_attrs, &len);
            stg_finding *f = stg_report_add(
                w->r, STG_OPENVINO_CONST_INVALID, ev->offset,
                "a Const layer's <data> size %llu is smaller than the %llu bytes its shape and "
                "element type need: OpenVINO refuses the model",
                (unsigned long long)size, (unsigned long long)need);
            if (name != NULL) {
                stg_report_set_tensor(w->r, f, name, len);
            }
            stg_mem_free(name);
        } else {
            keep_const(w, ev->offset, offset, size, layer_attrs);
        }
    }
}

/* The root: `net`, IR version 10 or 11 (frontend.cpp, supported_impl). */
static void check_root(ov_walk *w, const stg_xml_event *ev)
{
    char text[128];
    size_t n;
    uint64_t version = 0;
    if (!attr_text(w->buf, ev->attrs, "version", text, sizeof text, &n) ||
        !parse_unsigned(text, n, &version) || version < 10 || version > 11) {
        stg_report_add(w->r, STG_OPENVINO_VERSION_UNSUPPORTED, ev->offset,
                       "the IR's version is %llu (absent or malformed: 0), not 10 or 11: "
                       "OpenVINO's IR frontend does not read it",
                       (unsigned long long)version);
    }
}

static void on_start(ov_walk *w, const stg_xml_event *ev)
{
    uint32_t d = ev->depth;
    w->layers[d] = stg_xml_span_is(w->buf, ev->name, "layers", false);
    w->is_const[d] = false;
    w->has_data[d] = false;
    if (d == 1) {
        check_root(w, ev);
        return;
    }
    char type[16];
    size_t n;
    if (w->layers[d - 1] && stg_xml_span_is(w->buf, ev->name, "layer", false) &&
        attr_text(w->buf, ev->attrs, "type", type, sizeof type, &n) && n == 5 &&
        memcmp(type, "Const", 5) == 0) {
        w->is_const[d] = true;
        w->layer_at[d] = ev->offset;
        w->layer_attrs[d] = ev->attrs;
    } else if (w->is_const[d - 1] && !w->has_data[d - 1] &&
               stg_xml_span_is(w->buf, ev->name, "data", false)) {
        w->has_data[d - 1] = true;
        check_data(w, ev, w->layer_attrs[d - 1]);
    }
}

static const char *xml_reason(stg_xml_error e)
{
    switch (e) {
    case STG_XML_E_DTD: return "a document type declaration (DTDs are not read)";
    case STG_XML_E_ENTITY: return "a reference to an entity that is not predefined";
    case STG_XML_E_UNBALANCED: return "an element that is not closed by its own end tag";
    case STG_XML_E_DEPTH: return "elements nested deeper than 256";
    case STG_XML_E_ATTRS: return "more than 1024 attributes on one element";
    case STG_XML_E_OUTSIDE: return "content outside the root element";
    case STG_XML_E_NONE:
    case STG_XML_E_SYNTAX: break;
    }
    return "bytes that are not well-formed XML";
}

stg_status stg_openvino_check(const uint8_t *buf, size_t len, stg_report *r, stg_openvino_ir *ir)
{
    if ((buf == NULL && len > 0) || r == NULL) {
        return STG_E_BAD_ARG;
    }
    static const ov_walk zero; /* the walk starts from all zeros */
    ov_walk *w = stg_mem_alloc(sizeof *w);
    if (w == NULL) {
        return STG_E_NOMEM;
    }
    *w = zero;
    w->buf = buf;
    w->r = r;
    w->ir = ir;
    stg_xml x;
    stg_xml_init(&x, buf, len);
    stg_xml_event ev;
    stg_xml_kind k = STG_XML_ERROR;
    while (!w->nomem && (k = stg_xml_next(&x, &ev)) != STG_XML_DONE && k != STG_XML_ERROR) {
        if (k == STG_XML_START) {
            on_start(w, &ev);
        } else if (w->is_const[ev.depth] && !w->has_data[ev.depth]) {
            const_finding(w, w->layer_at[ev.depth], w->layer_attrs[ev.depth],
                          "is missing (a Const layer without one)");
        }
    }
    if (!w->nomem && k == STG_XML_ERROR) {
        stg_report_add(r, STG_XML_MALFORMED, x.error_offset, "the IR's XML has %s",
                       xml_reason(x.error));
    }
    if (ir != NULL) {
        ir->complete = !w->nomem && k == STG_XML_DONE && !w->limit_hit;
    }
    bool nomem = w->nomem;
    stg_mem_free(w);
    return nomem ? STG_E_NOMEM : STG_OK;
}

/* ------------------------------------------------------------------------------ sniff */

bool stg_openvino_sniff(const uint8_t *buf, size_t len)
{
    size_t window = len < STG_OPENVINO_SNIFF_WINDOW ? len : STG_OPENVINO_SNIFF_WINDOW;
    stg_xml x;
    stg_xml_init(&x, buf, window);
    stg_xml_event ev;
    /* the first event is the root's start, unless the window cuts the prolog or the tag */
    return stg_xml_next(&x, &ev) == STG_XML_START && stg_xml_span_is(buf, ev.name, "net", true);
}
