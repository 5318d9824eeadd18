/* TFLite and ExecuTorch rules (see flatbuf_models.h).
 *
 * TFLite: tensorflow/tflite-micro @ 90b983c2b3f1480642e040bbd2ddb37b998f3424,
 * tensorflow/compiler/mlir/lite/schema/schema.fbs: file_identifier "TFL3" (line 33), Tensor
 * (249-: field 2 buffer:uint, line 263; field 3 name), BuiltinOperator CUSTOM = 32 (338),
 * OperatorCode (1522-1537: 0 deprecated_builtin_code:byte, 1 custom_code:string, 2 version,
 * 3 builtin_code:int32), Operator (1559-1601: 0 opcode_index:uint, 1 inputs, 2 outputs,
 * 3-4 builtin_options union, 5 custom_options:[ubyte], 6 custom_options_format,
 * 7 mutating_variable_inputs, 8 intermediates, 9-10 large_custom_options_offset/size:ulong),
 * SubGraph (1609-: 0 tensors, 1 inputs, 2 outputs, 3 operators, 4 name), Buffer (1634-1641:
 * 0 data:[ubyte], 1 offset:ulong, 2 size:ulong, "only valid if > 1"), Metadata (1661-1665:
 * 0 name, 1 buffer:uint), Model (1697-1736: 0 version, 1 operator_codes, 2 subgraphs,
 * 3 description, 4 buffers, 5 metadata_buffer:[int], 6 metadata, 7 signature_defs). The builtin code of an
 * operator code is the larger of its two code fields (the schema's comments at 1523-1536: the
 * byte field below PLACEHOLDER_FOR_GREATER_OP_CODES, the int field above it).
 *
 * ExecuTorch: pytorch/executorch @ 6458243573cd97f4e099316dd56e2a0de9c190c1, schema/program.fbs:
 * file_identifier "ET12"; Tensor (0 scalar_type, 1 storage_offset, 2 sizes, 3 dim_order,
 * 4 requires_grad, 5 data_buffer_idx:uint, 6 allocation_info), KernelTypes union (Null 1, Int 2,
 * Bool 3, Double 4, Tensor 5, ...), EValue (0-1 val), Operator (0 name, 1 overload), KernelCall
 * (0 op_index, 1 args), DelegateCall (0 delegate_index, 1 args), InstructionArguments (KernelCall
 * 1, DelegateCall 2, ...), Instruction (0-1 instr_args), BackendDelegateDataReference
 * (0 location: INLINE 0 / SEGMENT 1, 1 index), BackendDelegate (0 id, 1 processed,
 * 2 compile_specs), Chain (0 inputs, 1 outputs, 2 instructions), ExecutionPlan (0 name,
 * 1 container_meta_type, 2 values, 3 inputs, 4 outputs, 5 chains, 6 operators, 7 delegates),
 * Buffer (0 storage), BackendDelegateInlineData (0 data), DataSegment (0 offset, 1 size: from
 * the segment base), SubsegmentOffsets (0 segment_index, 1 offsets:[uint64]), Program
 * (0 version, 1 execution_plan, 2 constant_buffer, 3 backend_delegate_data, 4 segments,
 * 5 constant_segment, 6 mutable_data_segments). The extended header at byte 8 (pytorch/executorch
 * @ 28d4948ec356e5f3649e73320d25638367130666, exir/_serialize/_program.py, _ExtendedHeader):
 * "eh00", u32 header length (at least 24), u64 program size, u64 segment base offset. */
#include "flatbuf_models.h"

#include <stdio.h>
#include <string.h>

#include "../parser/cursor.h"
#include "../parser/flatbuffer.h"

enum {
    TFL_BUILTIN_CUSTOM = 32,
    ET_VALUE_TENSOR = 5,
    ET_INSTR_KERNEL_CALL = 1,
    ET_INSTR_DELEGATE_CALL = 2,
    ET_DATA_INLINE = 0,
    ET_DATA_SEGMENT = 1,
    NAME_SHOWN_MAX = 48 /* bytes of one name a message shows */
};

/* ------------------------------------------------------------------ shared helpers */

/* Names collected for one warning: as many as fit the text, all of them counted. */
typedef struct name_list {
    char text[240];
    size_t used;
    uint32_t count, shown;
    uint64_t first_at;
} name_list;

/* Appends a name, printable ASCII kept and every other byte shown as '?', so no input byte
 * that could steer a terminal reaches a message. */
static void name_list_add(name_list *l, const uint8_t *s, size_t n, uint64_t at)
{
    if (l->count++ == 0) {
        l->first_at = at;
    }
    size_t need = (l->used > 0 ? 2 : 0) + (n < NAME_SHOWN_MAX ? n : NAME_SHOWN_MAX + 3);
    if (l->used + need + 1 > sizeof l->text) {
        return;
    }
    if (l->used > 0) {
        l->text[l->used++] = ',';
        l->text[l->used++] = ' ';
    }
    for (size_t k = 0; k < n && k < NAME_SHOWN_MAX; k++) {
        uint8_t b = s[k];
        l->text[l->used++] = b >= 0x20 && b < 0x7f && b != '"' && b != '\\' ? (char)b : '?';
    }
    if (n > NAME_SHOWN_MAX) {
        memcpy(l->text + l->used, "...", 3);
        l->used += 3;
    }
    l->text[l->used] = '\0';
    l->shown++;
}

static const char *name_list_more(const name_list *l, char out[48])
{
    out[0] = '\0';
    if (l->shown < l->count) {
        (void)snprintf(out, 48, " and %u more", (unsigned)(l->count - l->shown));
    }
    return out;
}

/* The walk's failure as a finding: malformed structure at its offset, or the visit limit. */
static void report_walk(stg_report *r, const stg_fb *fb, const char *format)
{
    if (fb->status == STG_PARSE_LIMIT) {
        stg_report_add(r, STG_LIMIT_EXCEEDED, fb->detail.offset, "the %s walk stopped: %s", format,
                       fb->detail.what);
    } else if (fb->status != STG_PARSE_OK) {
        stg_report_add(r, STG_FLATBUFFER_MALFORMED, fb->detail.offset, "the %s flatbuffer: %s",
                       format, fb->detail.what);
    }
}

/* true when a range of size bytes at offset lies inside a file of len bytes. */
static bool range_inside(uint64_t offset, uint64_t size, size_t len)
{
    uint64_t end = 0;
    return !stg_add_u64(offset, size, &end) && end <= (uint64_t)len;
}

/* Checks every element of an int32 vector of indices: below count (or -1 where allowed). */
static void check_indices(stg_fb *fb, stg_report *r, const stg_fb_vec *v, uint32_t count,
                          bool minus_one_ok, const char *what)
{
    for (uint32_t i = 0; i < v->count && fb->status == STG_PARSE_OK; i++) {
        uint64_t raw = 0;
        if (stg_fb_vec_scalar(fb, v, i, &raw) != STG_PARSE_OK) {
            return;
        }
        int32_t ix = (int32_t)(uint32_t)raw;
        if ((ix == -1 && minus_one_ok) || (ix >= 0 && (uint32_t)ix < count)) {
            continue;
        }
        stg_report_add(r, STG_FLATBUFFER_INDEX_INVALID, v->data + 4 * (uint64_t)i,
                       "%s %d names none of the %u entries", what, (int)ix, (unsigned)count);
    }
}

static bool sniff_root(const uint8_t *buf, size_t len)
{
    stg_cursor c = stg_cur_make(buf, len);
    uint32_t root = 0;
    return stg_cur_le32(&c, &root) == STG_OK && root >= 8 && root < len;
}

bool stg_tflite_sniff(const uint8_t *buf, size_t len)
{
    return len >= 8 && memcmp(buf + 4, STG_TFLITE_IDENTIFIER, 4) == 0 && sniff_root(buf, len);
}

bool stg_executorch_sniff(const uint8_t *buf, size_t len)
{
    return len >= 8 && memcmp(buf + 4, STG_EXECUTORCH_IDENTIFIER_PREFIX, 2) == 0 && buf[6] >= '0' &&
           buf[6] <= '9' && buf[7] >= '0' && buf[7] <= '9' && sniff_root(buf, len);
}

/* ------------------------------------------------------------------------- TFLite */

typedef struct tfl_walk {
    stg_fb fb;
    stg_report *r;
    size_t len;
    uint32_t nopcodes, nbuffers;
    name_list custom;
    bool flex;
} tfl_walk;

static void tfl_opcodes(tfl_walk *w, const stg_fb_vec *codes)
{
    for (uint32_t i = 0; i < codes->count; i++) {
        stg_fb_table oc;
        uint64_t dep = 0, builtin = 0;
        stg_fb_str name;
        bool named = false;
        if (stg_fb_vec_table(&w->fb, codes, i, &oc) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &oc, 0, 1, 0, &dep) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &oc, 3, 4, 0, &builtin) != STG_PARSE_OK ||
            stg_fb_string(&w->fb, &oc, 1, &name, &named) != STG_PARSE_OK) {
            return;
        }
        int32_t code_dep = (int8_t)(uint8_t)dep, code_ext = (int32_t)(uint32_t)builtin;
        int32_t code = code_dep > code_ext ? code_dep : code_ext;
        if (code != TFL_BUILTIN_CUSTOM) {
            continue;
        }
        if (!named) {
            name_list_add(&w->custom, (const uint8_t *)"(unnamed)", 9, oc.pos);
            continue;
        }
        w->flex = w->flex || (name.len >= 4 && memcmp(name.bytes, "Flex", 4) == 0);
        name_list_add(&w->custom, name.bytes, name.len, name.pos);
    }
}

/* Buffers: the data vector is checked by the walker; offset/size (models over 2 GiB) must lie
 * inside the file when the offset is > 1. */
static void tfl_buffers(tfl_walk *w, const stg_fb_vec *bufs)
{
    for (uint32_t i = 0; i < bufs->count; i++) {
        stg_fb_table b;
        stg_fb_vec data;
        uint64_t off = 0, size = 0;
        if (stg_fb_vec_table(&w->fb, bufs, i, &b) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &b, 0, 1, &data) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &b, 1, 8, 0, &off) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &b, 2, 8, 0, &size) != STG_PARSE_OK) {
            return;
        }
        if (off > 1 && !range_inside(off, size, w->len)) {
            stg_report_add(w->r, STG_FLATBUFFER_DATA_RANGE, b.pos,
                           "TFLite buffer %u: %llu bytes at offset %llu run past the file's end "
                           "(%zu bytes)",
                           (unsigned)i, (unsigned long long)size, (unsigned long long)off, w->len);
        }
    }
}

static void tfl_operators(tfl_walk *w, const stg_fb_vec *ops, uint32_t ntensors,
                          stg_fb_model_info *info)
{
    for (uint32_t i = 0; i < ops->count; i++) {
        stg_fb_table op;
        stg_fb_vec in, out, inter, custom;
        uint64_t opcode = 0, loff = 0, lsize = 0;
        if (stg_fb_vec_table(&w->fb, ops, i, &op) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &op, 0, 4, 0, &opcode) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &op, 1, 4, &in) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &op, 2, 4, &out) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &op, 5, 1, &custom) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &op, 8, 4, &inter) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &op, 9, 8, 0, &loff) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &op, 10, 8, 0, &lsize) != STG_PARSE_OK) {
            return;
        }
        info->operators++;
        if (opcode >= w->nopcodes) {
            stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, op.pos,
                           "a TFLite operator's opcode_index %llu names none of the %u operator "
                           "codes",
                           (unsigned long long)opcode, (unsigned)w->nopcodes);
        }
        check_indices(&w->fb, w->r, &in, ntensors, true, "an operator input tensor index");
        check_indices(&w->fb, w->r, &out, ntensors, true, "an operator output tensor index");
        check_indices(&w->fb, w->r, &inter, ntensors, false, "an operator intermediate tensor");
        if (loff > 1 && !range_inside(loff, lsize, w->len)) {
            stg_report_add(w->r, STG_FLATBUFFER_DATA_RANGE, op.pos,
                           "a TFLite operator's custom options (%llu bytes at offset %llu) run "
                           "past the file's end",
                           (unsigned long long)lsize, (unsigned long long)loff);
        }
    }
}

static void tfl_subgraph(tfl_walk *w, const stg_fb_table *sg, stg_fb_model_info *info)
{
    stg_fb_vec tensors, in, out, ops;
    if (stg_fb_vector(&w->fb, sg, 0, 4, &tensors) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, sg, 1, 4, &in) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, sg, 2, 4, &out) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, sg, 3, 4, &ops) != STG_PARSE_OK) {
        return;
    }
    for (uint32_t i = 0; i < tensors.count; i++) {
        stg_fb_table t;
        stg_fb_str name;
        bool named = false;
        uint64_t buffer = 0;
        if (stg_fb_vec_table(&w->fb, &tensors, i, &t) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &t, 2, 4, 0, &buffer) != STG_PARSE_OK ||
            stg_fb_string(&w->fb, &t, 3, &name, &named) != STG_PARSE_OK) {
            return;
        }
        info->tensors++;
        /* buffer 0 is the empty sentinel every model has (the schema, Tensor.buffer) */
        if (buffer != 0 && buffer >= w->nbuffers) {
            stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, t.pos,
                           "a TFLite tensor's buffer index %llu names none of the %u buffers",
                           (unsigned long long)buffer, (unsigned)w->nbuffers);
        }
    }
    check_indices(&w->fb, w->r, &in, tensors.count, false, "a subgraph input tensor index");
    check_indices(&w->fb, w->r, &out, tensors.count, false, "a subgraph output tensor index");
    tfl_operators(w, &ops, tensors.count, info);
}

static void tfl_metadata(tfl_walk *w, const stg_fb_vec *meta, const stg_fb_vec *meta_buffer)
{
    check_indices(&w->fb, w->r, meta_buffer, w->nbuffers, false, "a metadata_buffer index");
    for (uint32_t i = 0; i < meta->count; i++) {
        stg_fb_table m;
        uint64_t buffer = 0;
        if (stg_fb_vec_table(&w->fb, meta, i, &m) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &m, 1, 4, 0, &buffer) != STG_PARSE_OK) {
            return;
        }
        if (buffer >= w->nbuffers) {
            stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, m.pos,
                           "a TFLite metadata entry's buffer index %llu names none of the %u "
                           "buffers",
                           (unsigned long long)buffer, (unsigned)w->nbuffers);
        }
    }
}

/* Signature defs (SignatureDef, schema lines 1680-1695: 0 inputs, 1 outputs, 2 signature_key,
 * 3 deprecated_tag, 4 subgraph_index; TensorMap: 0 name, 1 tensor_index): the subgraph each
 * names, and the tensors of that subgraph its maps name. */
static void tfl_signatures(tfl_walk *w, const stg_fb_vec *sigs, const stg_fb_vec *subgraphs)
{
    for (uint32_t i = 0; i < sigs->count; i++) {
        stg_fb_table sig, sg;
        stg_fb_vec maps[2], tensors;
        uint64_t index = 0;
        if (stg_fb_vec_table(&w->fb, sigs, i, &sig) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &sig, 0, 4, &maps[0]) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &sig, 1, 4, &maps[1]) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &sig, 4, 4, 0, &index) != STG_PARSE_OK) {
            return;
        }
        if (index >= subgraphs->count) {
            stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, sig.pos,
                           "a TFLite signature's subgraph_index %llu names none of the %u "
                           "subgraphs",
                           (unsigned long long)index, (unsigned)subgraphs->count);
            continue;
        }
        if (stg_fb_vec_table(&w->fb, subgraphs, (uint32_t)index, &sg) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &sg, 0, 4, &tensors) != STG_PARSE_OK) {
            return;
        }
        for (unsigned m = 0; m < 2; m++) {
            for (uint32_t k = 0; k < maps[m].count; k++) {
                stg_fb_table map;
                uint64_t tensor = 0;
                if (stg_fb_vec_table(&w->fb, &maps[m], k, &map) != STG_PARSE_OK ||
                    stg_fb_scalar(&w->fb, &map, 1, 4, 0, &tensor) != STG_PARSE_OK) {
                    return;
                }
                if (tensor >= tensors.count) {
                    stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, map.pos,
                                   "a TFLite signature's tensor_index %llu names none of the %u "
                                   "tensors of its subgraph",
                                   (unsigned long long)tensor, (unsigned)tensors.count);
                }
            }
        }
    }
}

static void tfl_report_custom(const tfl_walk *w)
{
    if (w->custom.count == 0) {
        return;
    }
    char more[48];
    stg_report_add(w->r, STG_FLATBUFFER_CUSTOM_OP, w->custom.first_at,
                   "the TFLite model uses %u custom operator code(s): %s%s; the interpreter "
                   "runs them only with a resolver that registers native code for them%s",
                   (unsigned)w->custom.count, w->custom.text, name_list_more(&w->custom, more),
                   w->flex ? " (Flex ops run TensorFlow kernels through the Flex delegate)" : "");
}

stg_status stg_tflite_check(const uint8_t *buf, size_t len, stg_report *r, stg_fb_model_info *info)
{
    stg_fb_model_info local;
    info = info != NULL ? info : &local;
    memset(info, 0, sizeof *info);
    if ((buf == NULL && len > 0) || r == NULL) {
        return STG_E_BAD_ARG;
    }
    tfl_walk w;
    memset(&w, 0, sizeof w);
    w.r = r;
    w.len = len;
    stg_fb_init(&w.fb, buf, len, stg_fb_visit_budget(len));
    stg_fb_table model;
    stg_fb_vec codes, subgraphs, buffers, meta_buffer, meta, sigs;
    stg_fb_str desc;
    bool described = false;
    uint64_t version = 0;
    if (stg_fb_root(&w.fb, &model) == STG_PARSE_OK &&
        stg_fb_scalar(&w.fb, &model, 0, 4, 0, &version) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &model, 1, 4, &codes) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &model, 2, 4, &subgraphs) == STG_PARSE_OK &&
        stg_fb_string(&w.fb, &model, 3, &desc, &described) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &model, 4, 4, &buffers) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &model, 5, 4, &meta_buffer) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &model, 6, 4, &meta) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &model, 7, 4, &sigs) == STG_PARSE_OK) {
        info->version = (uint32_t)version;
        info->operator_codes = w.nopcodes = codes.count;
        info->buffers = w.nbuffers = buffers.count;
        info->subgraphs = subgraphs.count;
        tfl_opcodes(&w, &codes);
        tfl_buffers(&w, &buffers);
        for (uint32_t i = 0; i < subgraphs.count && w.fb.status == STG_PARSE_OK; i++) {
            stg_fb_table sg;
            if (stg_fb_vec_table(&w.fb, &subgraphs, i, &sg) == STG_PARSE_OK) {
                tfl_subgraph(&w, &sg, info);
            }
        }
        tfl_metadata(&w, &meta, &meta_buffer);
        tfl_signatures(&w, &sigs, &subgraphs);
    }
    info->custom_ops = w.custom.count;
    tfl_report_custom(&w);
    report_walk(r, &w.fb, "TFLite");
    info->complete = w.fb.status == STG_PARSE_OK;
    return STG_OK;
}

/* ---------------------------------------------------------------------- ExecuTorch */

/* The operator namespaces of ExecuTorch's own kernel libraries (portable, optimized and
 * quantized kernels, the dim-order and primitive ops the exporter emits); any other namespace
 * is a custom op: a runtime without that kernel registered refuses the program, one with it
 * runs native code the program names. */
static bool et_core_namespace(const uint8_t *s, size_t n)
{
    static const char *const core[] = {"aten", "dim_order_ops", "quantized_decomposed",
                                       "executorch_prim"};
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
        size_t k = strlen(core[i]);
        if (n > k + 1 && memcmp(s, core[i], k) == 0 && s[k] == ':' && s[k + 1] == ':') {
            return true;
        }
    }
    return false;
}

typedef struct et_walk {
    stg_fb fb;
    stg_report *r;
    size_t len;
    bool has_header;
    uint64_t segment_base;
    uint32_t nsegments, nconst_buffers, nconst_offsets, ndelegate_data;
    name_list custom, delegates;
} et_walk;

/* The extended header, when present: its lengths inside the file. */
static void et_header(et_walk *w, const uint8_t *buf, size_t len)
{
    stg_cursor c = stg_cur_make(buf, len);
    const uint8_t *magic = NULL;
    uint32_t hlen = 0;
    uint64_t program_size = 0, base = 0;
    if (stg_cur_seek(&c, 8) != STG_OK || stg_cur_take(&c, 4, &magic) != STG_OK ||
        memcmp(magic, STG_EXECUTORCH_HEADER_MAGIC, 4) != 0) {
        return;
    }
    if (stg_cur_le32(&c, &hlen) != STG_OK || hlen < 24 ||
        stg_cur_le64(&c, &program_size) != STG_OK || stg_cur_le64(&c, &base) != STG_OK ||
        hlen > len - 8) {
        stg_report_add(w->r, STG_FLATBUFFER_MALFORMED, 8,
                       "the ExecuTorch extended header is shorter than 24 bytes or runs past the "
                       "file's end");
        return;
    }
    if (program_size > len || base > len) {
        stg_report_add(w->r, STG_FLATBUFFER_DATA_RANGE, 8,
                       "the ExecuTorch extended header's program size %llu or segment base %llu "
                       "lies past the file's end (%zu bytes)",
                       (unsigned long long)program_size, (unsigned long long)base, len);
    }
    w->has_header = true;
    w->segment_base = base;
}

static void et_segments(et_walk *w, const stg_fb_vec *segs)
{
    for (uint32_t i = 0; i < segs->count; i++) {
        stg_fb_table s;
        uint64_t off = 0, size = 0, at = 0;
        if (stg_fb_vec_table(&w->fb, segs, i, &s) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &s, 0, 8, 0, &off) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &s, 1, 8, 0, &size) != STG_PARSE_OK) {
            return;
        }
        if (!w->has_header || stg_add_u64(w->segment_base, off, &at) ||
            !range_inside(at, size, w->len)) {
            stg_report_add(w->r, STG_FLATBUFFER_DATA_RANGE, s.pos,
                           "ExecuTorch segment %u (%llu bytes at %llu past the segment base) lies "
                           "outside the file%s",
                           (unsigned)i, (unsigned long long)size, (unsigned long long)off,
                           w->has_header ? "" : " (no extended header gives a segment base)");
        }
    }
}

/* Buffers of inline data: the walker checks each storage vector lies inside the file. */
static void et_inline_buffers(et_walk *w, const stg_fb_vec *bufs)
{
    for (uint32_t i = 0; i < bufs->count; i++) {
        stg_fb_table b;
        stg_fb_vec data;
        if (stg_fb_vec_table(&w->fb, bufs, i, &b) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &b, 0, 1, &data) != STG_PARSE_OK) {
            return;
        }
    }
}

static void et_constant_segment(et_walk *w, const stg_fb_table *program)
{
    stg_fb_table cs;
    stg_fb_vec offsets;
    bool present = false;
    uint64_t seg = 0;
    if (stg_fb_table_field(&w->fb, program, 5, &cs, &present) != STG_PARSE_OK || !present ||
        stg_fb_scalar(&w->fb, &cs, 0, 4, 0, &seg) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, &cs, 1, 8, &offsets) != STG_PARSE_OK) {
        return;
    }
    w->nconst_offsets = offsets.count;
    if (offsets.count > 0 && seg >= w->nsegments) {
        stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, cs.pos,
                       "the ExecuTorch constant segment's index %llu names none of the %u "
                       "segments",
                       (unsigned long long)seg, (unsigned)w->nsegments);
    }
}

static void et_operators(et_walk *w, const stg_fb_vec *ops)
{
    for (uint32_t i = 0; i < ops->count; i++) {
        stg_fb_table op;
        stg_fb_str name, overload;
        bool named = false, overloaded = false;
        if (stg_fb_vec_table(&w->fb, ops, i, &op) != STG_PARSE_OK ||
            stg_fb_string(&w->fb, &op, 0, &name, &named) != STG_PARSE_OK ||
            stg_fb_string(&w->fb, &op, 1, &overload, &overloaded) != STG_PARSE_OK) {
            return;
        }
        if (!named || !et_core_namespace(name.bytes, name.len)) {
            name_list_add(&w->custom, named ? name.bytes : (const uint8_t *)"(unnamed)",
                          named ? name.len : 9, op.pos);
        }
    }
}

static void et_delegates(et_walk *w, const stg_fb_vec *dels)
{
    for (uint32_t i = 0; i < dels->count; i++) {
        stg_fb_table d, ref;
        stg_fb_str id;
        bool named = false, processed = false;
        uint64_t where = 0, index = 0;
        if (stg_fb_vec_table(&w->fb, dels, i, &d) != STG_PARSE_OK ||
            stg_fb_string(&w->fb, &d, 0, &id, &named) != STG_PARSE_OK ||
            stg_fb_table_field(&w->fb, &d, 1, &ref, &processed) != STG_PARSE_OK) {
            return;
        }
        name_list_add(&w->delegates, named ? id.bytes : (const uint8_t *)"(unnamed)",
                      named ? id.len : 9, d.pos);
        if (!processed) {
            continue;
        }
        if (stg_fb_scalar(&w->fb, &ref, 0, 1, 0, &where) != STG_PARSE_OK ||
            stg_fb_scalar(&w->fb, &ref, 1, 4, 0, &index) != STG_PARSE_OK) {
            return;
        }
        uint32_t count = where == ET_DATA_INLINE ? w->ndelegate_data : w->nsegments;
        if ((where != ET_DATA_INLINE && where != ET_DATA_SEGMENT) || index >= count) {
            stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, ref.pos,
                           "an ExecuTorch delegate's processed data (location %llu, index %llu) "
                           "names none of the %u entries of its list",
                           (unsigned long long)where, (unsigned long long)index, (unsigned)count);
        }
    }
}

/* Values: a constant tensor's data_buffer_idx names a constant buffer or a constant segment
 * offset (the schema has one list or the other; a program with both is held to the longer, so
 * no reading of it is refused that the runtime could take). */
static void et_values(et_walk *w, const stg_fb_vec *values)
{
    uint32_t nconst = w->nconst_buffers > w->nconst_offsets ? w->nconst_buffers : w->nconst_offsets;
    for (uint32_t i = 0; i < values->count; i++) {
        stg_fb_table v, t, alloc;
        uint8_t type = 0;
        uint64_t idx = 0;
        bool allocated = false;
        if (stg_fb_vec_table(&w->fb, values, i, &v) != STG_PARSE_OK ||
            stg_fb_union(&w->fb, &v, 0, &type, &t) != STG_PARSE_OK) {
            return;
        }
        if (type != ET_VALUE_TENSOR) {
            continue;
        }
        if (stg_fb_scalar(&w->fb, &t, 5, 4, 0, &idx) != STG_PARSE_OK ||
            stg_fb_table_field(&w->fb, &t, 6, &alloc, &allocated) != STG_PARSE_OK) {
            return;
        }
        if (idx > 0 && !allocated && idx >= nconst) {
            stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, t.pos,
                           "an ExecuTorch constant tensor's data_buffer_idx %llu names none of "
                           "the %u constant buffers",
                           (unsigned long long)idx, (unsigned)nconst);
        }
    }
}

static void et_chains(et_walk *w, const stg_fb_vec *chains, uint32_t nvalues, uint32_t nops,
                      uint32_t ndelegates)
{
    for (uint32_t c = 0; c < chains->count; c++) {
        stg_fb_table chain;
        stg_fb_vec instrs;
        if (stg_fb_vec_table(&w->fb, chains, c, &chain) != STG_PARSE_OK ||
            stg_fb_vector(&w->fb, &chain, 2, 4, &instrs) != STG_PARSE_OK) {
            return;
        }
        for (uint32_t i = 0; i < instrs.count; i++) {
            stg_fb_table in, call;
            stg_fb_vec args;
            uint8_t type = 0;
            uint64_t target = 0;
            if (stg_fb_vec_table(&w->fb, &instrs, i, &in) != STG_PARSE_OK ||
                stg_fb_union(&w->fb, &in, 0, &type, &call) != STG_PARSE_OK) {
                return;
            }
            if (type != ET_INSTR_KERNEL_CALL && type != ET_INSTR_DELEGATE_CALL) {
                continue;
            }
            if (stg_fb_scalar(&w->fb, &call, 0, 4, 0, &target) != STG_PARSE_OK ||
                stg_fb_vector(&w->fb, &call, 1, 4, &args) != STG_PARSE_OK) {
                return;
            }
            bool kernel = type == ET_INSTR_KERNEL_CALL;
            int32_t ix = (int32_t)(uint32_t)target;
            uint32_t count = kernel ? nops : ndelegates;
            if (ix < 0 || (uint32_t)ix >= count) {
                stg_report_add(w->r, STG_FLATBUFFER_INDEX_INVALID, call.pos,
                               "an ExecuTorch %s call's index %d names none of the %u %s",
                               kernel ? "kernel" : "delegate", (int)ix, (unsigned)count,
                               kernel ? "operators" : "delegates");
            }
            check_indices(&w->fb, w->r, &args, nvalues, false, "an instruction argument value");
        }
    }
}

static void et_plan(et_walk *w, const stg_fb_table *plan, stg_fb_model_info *info)
{
    stg_fb_vec values, in, out, chains, ops, dels;
    stg_fb_str name;
    bool named = false;
    if (stg_fb_string(&w->fb, plan, 0, &name, &named) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, plan, 2, 4, &values) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, plan, 3, 4, &in) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, plan, 4, 4, &out) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, plan, 5, 4, &chains) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, plan, 6, 4, &ops) != STG_PARSE_OK ||
        stg_fb_vector(&w->fb, plan, 7, 4, &dels) != STG_PARSE_OK) {
        return;
    }
    info->tensors += values.count;
    info->operators += ops.count;
    info->delegates += dels.count;
    et_values(w, &values);
    check_indices(&w->fb, w->r, &in, values.count, false, "an execution plan input value");
    check_indices(&w->fb, w->r, &out, values.count, false, "an execution plan output value");
    et_operators(w, &ops);
    et_delegates(w, &dels);
    et_chains(w, &chains, values.count, ops.count, dels.count);
}

static void et_report_lists(const et_walk *w)
{
    char more[48];
    if (w->custom.count > 0) {
        stg_report_add(w->r, STG_FLATBUFFER_CUSTOM_OP, w->custom.first_at,
                       "the ExecuTorch program calls %u operator(s) outside ExecuTorch's own "
                       "kernel libraries: %s%s; a runtime runs them only with native kernels "
                       "registered for them",
                       (unsigned)w->custom.count, w->custom.text, name_list_more(&w->custom, more));
    }
    if (w->delegates.count > 0) {
        stg_report_add(w->r, STG_EXECUTORCH_DELEGATE, w->delegates.first_at,
                       "the ExecuTorch program hands %u subgraph(s) to backend delegates: %s%s; "
                       "each backend's native code parses its processed blob",
                       (unsigned)w->delegates.count, w->delegates.text,
                       name_list_more(&w->delegates, more));
    }
}

stg_status stg_executorch_check(const uint8_t *buf, size_t len, stg_report *r,
                                stg_fb_model_info *info)
{
    stg_fb_model_info local;
    info = info != NULL ? info : &local;
    memset(info, 0, sizeof *info);
    if ((buf == NULL && len > 0) || r == NULL) {
        return STG_E_BAD_ARG;
    }
    et_walk w;
    memset(&w, 0, sizeof w);
    w.r = r;
    w.len = len;
    et_header(&w, buf, len);
    stg_fb_init(&w.fb, buf, len, stg_fb_visit_budget(len));
    stg_fb_table program;
    stg_fb_vec plans, consts, deldata, segs;
    uint64_t version = 0;
    if (stg_fb_root(&w.fb, &program) == STG_PARSE_OK &&
        stg_fb_scalar(&w.fb, &program, 0, 4, 0, &version) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &program, 1, 4, &plans) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &program, 2, 4, &consts) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &program, 3, 4, &deldata) == STG_PARSE_OK &&
        stg_fb_vector(&w.fb, &program, 4, 4, &segs) == STG_PARSE_OK) {
        info->version = (uint32_t)version;
        info->subgraphs = plans.count;
        w.nsegments = segs.count;
        w.nconst_buffers = consts.count;
        w.ndelegate_data = deldata.count;
        info->buffers = consts.count + segs.count;
        et_segments(&w, &segs);
        et_inline_buffers(&w, &consts);
        et_inline_buffers(&w, &deldata);
        et_constant_segment(&w, &program);
        for (uint32_t i = 0; i < plans.count && w.fb.status == STG_PARSE_OK; i++) {
            stg_fb_table plan;
            if (stg_fb_vec_table(&w.fb, &plans, i, &plan) == STG_PARSE_OK) {
                et_plan(&w, &plan, info);
            }
        }
    }
    info->custom_ops = w.custom.count;
    et_report_lists(&w);
    report_walk(r, &w.fb, "ExecuTorch");
    info->complete = w.fb.status == STG_PARSE_OK;
    return STG_OK;
}
