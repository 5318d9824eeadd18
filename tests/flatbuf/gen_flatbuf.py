#!/usr/bin/python3
"""Writes TFLite and ExecuTorch files with the real FlatBuffers writer (python3-flatbuffers'
Builder), field by field along the two schemas, into the folder given as argv[1]:

TFLite: tensorflow/tflite-micro @ 90b983c2b3f1480642e040bbd2ddb37b998f3424,
tensorflow/compiler/mlir/lite/schema/schema.fbs (file_identifier "TFL3", line 33; Tensor
249-263; CUSTOM = 32, line 338; OperatorCode 1522-1537; Operator 1559-1601; SubGraph 1609-;
Buffer 1634-1641; Metadata 1661-1665; SignatureDef 1680-1695; Model 1697-1736).
ExecuTorch: pytorch/executorch @ 6458243573cd97f4e099316dd56e2a0de9c190c1, schema/program.fbs
(file_identifier "ET12"; Tensor, EValue, Operator, KernelCall, DelegateCall, Instruction,
BackendDelegateDataReference, BackendDelegate, Chain, ExecutionPlan, Buffer, DataSegment,
SubsegmentOffsets, Program); the extended header as pytorch/executorch @
28d4948ec356e5f3649e73320d25638367130666, exir/_serialize/_program.py (_ExtendedHeader: "eh00",
u32 length 24, u64 program size, u64 segment base offset) inserts it after the identifier.

Each file's name says what stguard must find in it (script_flatbuf.sh checks that): ok_* has no
finding; the others name their code."""
import os
import struct
import sys

import flatbuffers


def vec_offsets(b, offs):
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def vec_i32(b, vals):
    b.StartVector(4, len(vals), 4)
    for v in reversed(vals):
        b.PrependInt32(v)
    return b.EndVector()


def vec_u64(b, vals):
    b.StartVector(8, len(vals), 8)
    for v in reversed(vals):
        b.PrependUint64(v)
    return b.EndVector()


# ------------------------------------------------------------------------------ TFLite

def tfl_opcode(b, builtin, custom=None):
    name = b.CreateString(custom) if custom is not None else None
    b.StartObject(4)
    b.PrependInt8Slot(0, min(builtin, 127), 0)  # deprecated_builtin_code
    if name is not None:
        b.PrependUOffsetTRelativeSlot(1, name, 0)  # custom_code
    b.PrependInt32Slot(2, 1, 1)  # version
    b.PrependInt32Slot(3, builtin, 0)  # builtin_code
    return b.EndObject()


def tfl_tensor(b, name, buffer, shape):
    n = b.CreateString(name)
    s = vec_i32(b, shape)
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(0, s, 0)  # shape
    b.PrependInt8Slot(1, 0, 0)  # type FLOAT32
    b.PrependUint32Slot(2, buffer, 0)  # buffer
    b.PrependUOffsetTRelativeSlot(3, n, 0)  # name
    return b.EndObject()


def tfl_operator(b, opcode, inputs, outputs):
    i = vec_i32(b, inputs)
    o = vec_i32(b, outputs)
    b.StartObject(3)
    b.PrependUint32Slot(0, opcode, 0)  # opcode_index
    b.PrependUOffsetTRelativeSlot(1, i, 0)
    b.PrependUOffsetTRelativeSlot(2, o, 0)
    return b.EndObject()


def tfl_buffer(b, data=None, offset=0, size=0):
    d = b.CreateByteVector(data) if data is not None else None
    b.StartObject(3)
    if d is not None:
        b.PrependUOffsetTRelativeSlot(0, d, 0)
    b.PrependUint64Slot(1, offset, 0)
    b.PrependUint64Slot(2, size, 0)
    return b.EndObject()


def tfl_signature(b, subgraph_index, tensor_indices):
    """SignatureDef (schema lines 1680-1695) with one TensorMap (name, tensor_index) per index."""
    maps = []
    for t in tensor_indices:
        n = b.CreateString("x%d" % t)
        b.StartObject(2)
        b.PrependUOffsetTRelativeSlot(0, n, 0)
        b.PrependUint32Slot(1, t, 0)
        maps.append(b.EndObject())
    mv = vec_offsets(b, maps)
    key = b.CreateString("serving_default")
    b.StartObject(5)
    b.PrependUOffsetTRelativeSlot(0, mv, 0)  # inputs
    b.PrependUOffsetTRelativeSlot(2, key, 0)  # signature_key
    b.PrependUint32Slot(4, subgraph_index, 0)
    return b.EndObject()


def tflite(custom=(), tensor_buffer=1, opcode_index=0, big_buffer=None, subgraph_copies=1,
           tensors_per_subgraph=3, signature=None):
    b = flatbuffers.Builder(1024)
    codes = [tfl_opcode(b, 0)] + [tfl_opcode(b, 32, c) for c in custom]
    names = ["input", "weight", "output"] + ["t%d" % i for i in range(tensors_per_subgraph - 3)]
    tensors = [tfl_tensor(b, n, tensor_buffer if n == "weight" else 0, [1, 4]) for n in names]
    ops = [tfl_operator(b, opcode_index, [0, 1], [2])]
    for k in range(len(custom)):
        ops.append(tfl_operator(b, 1 + k, [2], [2]))
    tv, ov = vec_offsets(b, tensors), vec_offsets(b, ops)
    iv, outv = vec_i32(b, [0]), vec_i32(b, [2])
    sname = b.CreateString("main")
    b.StartObject(5)
    b.PrependUOffsetTRelativeSlot(0, tv, 0)
    b.PrependUOffsetTRelativeSlot(1, iv, 0)
    b.PrependUOffsetTRelativeSlot(2, outv, 0)
    b.PrependUOffsetTRelativeSlot(3, ov, 0)
    b.PrependUOffsetTRelativeSlot(4, sname, 0)
    sg = b.EndObject()
    bufs = [tfl_buffer(b), tfl_buffer(b, struct.pack("<4f", 1, 2, 3, 4))]
    if big_buffer is not None:
        bufs.append(tfl_buffer(b, offset=big_buffer[0], size=big_buffer[1]))
    cv, sv, bv = vec_offsets(b, codes), vec_offsets(b, [sg] * subgraph_copies), vec_offsets(b, bufs)
    desc = b.CreateString("stguard test model")
    sigv = vec_offsets(b, [tfl_signature(b, *signature)]) if signature is not None else None
    b.StartObject(8)
    b.PrependUint32Slot(0, 3, 0)  # version
    b.PrependUOffsetTRelativeSlot(1, cv, 0)
    b.PrependUOffsetTRelativeSlot(2, sv, 0)
    b.PrependUOffsetTRelativeSlot(3, desc, 0)
    b.PrependUOffsetTRelativeSlot(4, bv, 0)
    if sigv is not None:
        b.PrependUOffsetTRelativeSlot(7, sigv, 0)  # signature_defs
    b.Finish(b.EndObject(), file_identifier=b"TFL3")
    return bytes(b.Output())


# -------------------------------------------------------------------------- ExecuTorch

def et_tensor_value(b, data_buffer_idx):
    sizes = vec_i32(b, [4])
    b.StartObject(10)
    b.PrependInt8Slot(0, 6, 0)  # scalar_type FLOAT
    b.PrependUOffsetTRelativeSlot(2, sizes, 0)
    b.PrependUint32Slot(5, data_buffer_idx, 0)
    t = b.EndObject()
    b.StartObject(2)
    b.PrependUint8Slot(0, 5, 0)  # val_type Tensor
    b.PrependUOffsetTRelativeSlot(1, t, 0)
    return b.EndObject()


def et_instruction(b, kind, index, args):
    a = vec_i32(b, args)
    b.StartObject(2)
    b.PrependInt32Slot(0, index, 0)  # op_index / delegate_index
    b.PrependUOffsetTRelativeSlot(1, a, 0)
    call = b.EndObject()
    b.StartObject(2)
    b.PrependUint8Slot(0, kind, 0)  # 1 KernelCall, 2 DelegateCall
    b.PrependUOffsetTRelativeSlot(1, call, 0)
    return b.EndObject()


def et_operator(b, name, overload):
    n, o = b.CreateString(name), b.CreateString(overload)
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(0, n, 0)
    b.PrependUOffsetTRelativeSlot(1, o, 0)
    return b.EndObject()


def et_delegate(b, backend, index):
    i = b.CreateString(backend)
    b.StartObject(2)
    b.PrependInt8Slot(0, 0, 0)  # location INLINE
    b.PrependUint32Slot(1, index, 0)
    ref = b.EndObject()
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(0, i, 0)
    b.PrependUOffsetTRelativeSlot(1, ref, 0)
    return b.EndObject()


def executorch(ops=("aten::add",), op_index=0, delegates=(), segment=None, data_idx=1):
    b = flatbuffers.Builder(1024)
    values = [et_tensor_value(b, data_idx), et_tensor_value(b, 0), et_tensor_value(b, 0)]
    instrs = [et_instruction(b, 1, op_index, [0, 1, 2])]
    for k in range(len(delegates)):
        instrs.append(et_instruction(b, 2, k, [2]))
    iv = vec_offsets(b, instrs)
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(2, iv, 0)
    chain = b.EndObject()
    opv = vec_offsets(b, [et_operator(b, n, "out") for n in ops])
    dv = vec_offsets(b, [et_delegate(b, d, 0) for d in delegates])
    vv, cv = vec_offsets(b, values), vec_offsets(b, [chain])
    inv, outv = vec_i32(b, [1]), vec_i32(b, [2])
    name = b.CreateString("forward")
    b.StartObject(8)
    b.PrependUOffsetTRelativeSlot(0, name, 0)
    b.PrependUOffsetTRelativeSlot(2, vv, 0)
    b.PrependUOffsetTRelativeSlot(3, inv, 0)
    b.PrependUOffsetTRelativeSlot(4, outv, 0)
    b.PrependUOffsetTRelativeSlot(5, cv, 0)
    b.PrependUOffsetTRelativeSlot(6, opv, 0)
    b.PrependUOffsetTRelativeSlot(7, dv, 0)
    plan = b.EndObject()
    consts = []
    for data in (b"", struct.pack("<4f", 1, 2, 3, 4)):
        d = b.CreateByteVector(data)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, d, 0)
        consts.append(b.EndObject())
    blobs = []
    if delegates:
        d = b.CreateByteVector(b"processed-by-backend")
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, d, 0)
        blobs.append(b.EndObject())
    segs = []
    if segment is not None:
        b.StartObject(2)
        b.PrependUint64Slot(0, segment[0], 0)
        b.PrependUint64Slot(1, segment[1], 0)
        segs.append(b.EndObject())
    pv, kv, bv, sv = (vec_offsets(b, x) for x in ([plan], consts, blobs, segs))
    b.StartObject(7)
    b.PrependUint32Slot(0, 0, 0)
    b.PrependUOffsetTRelativeSlot(1, pv, 0)
    b.PrependUOffsetTRelativeSlot(2, kv, 0)
    b.PrependUOffsetTRelativeSlot(3, bv, 0)
    b.PrependUOffsetTRelativeSlot(4, sv, 0)
    b.Finish(b.EndObject(), file_identifier=b"ET12")
    program = bytes(b.Output())
    if segment is None:
        return program
    # The extended header after the identifier (padded to 32 so every alignment holds), the
    # segment data after the program at the segment base.
    header_len = 32
    base = (len(program) + header_len + 15) // 16 * 16
    root = struct.unpack_from("<I", program, 0)[0] + header_len
    header = b"eh00" + struct.pack("<IQQ", 24, len(program) + header_len, base)
    out = struct.pack("<I", root) + program[4:8] + header.ljust(header_len, b"\0") + program[8:]
    return out.ljust(base, b"\0") + b"\x01" * 64


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    good = tflite()
    files = {
        "ok_model.tflite": good,
        "ok_custom_free.tflite": tflite(tensors_per_subgraph=5),
        "flatbuffer_custom_op_custom.tflite": tflite(custom=("MyCustomOp",)),
        "flatbuffer_custom_op_flex.tflite": tflite(custom=("FlexAddV2", "FlexSplitV")),
        "flatbuffer_index_invalid_buffer.tflite": tflite(tensor_buffer=9),
        "flatbuffer_index_invalid_opcode.tflite": tflite(opcode_index=4),
        "flatbuffer_data_range_buffer.tflite": tflite(big_buffer=(1 << 20, 16)),
        "ok_signature.tflite": tflite(signature=(0, [0, 2])),
        "flatbuffer_index_invalid_signature.tflite": tflite(signature=(0, [0, 3])),
        "flatbuffer_index_invalid_signature_subgraph.tflite": tflite(signature=(1, [0])),
        "ok_big_buffer_inside.tflite": tflite(big_buffer=(8, 16)),
        "flatbuffer_malformed_cut.tflite": good[: len(good) // 2],
        "limit_exceeded_shared.tflite": tflite(subgraph_copies=20000, tensors_per_subgraph=200),
        "ok_program.pte": executorch(),
        "ok_core_ops.pte": executorch(ops=("aten::add", "dim_order_ops::_to_dim_order_copy")),
        "flatbuffer_custom_op_llama.pte": executorch(ops=("aten::add", "llama::sdpa_with_kv_cache")),
        "executorch_delegate_xnnpack.pte": executorch(delegates=("XnnpackBackend",)),
        "flatbuffer_index_invalid_kernel.pte": executorch(op_index=3),
        "flatbuffer_index_invalid_constant.pte": executorch(data_idx=7),
        "ok_segment.pte": executorch(segment=(0, 64)),
        "flatbuffer_data_range_segment.pte": executorch(segment=(0, 4096)),
        "flatbuffer_malformed_cut.pte": executorch()[:40],
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
