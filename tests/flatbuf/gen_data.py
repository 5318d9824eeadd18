#!/usr/bin/python3
"""Writes the data files a model repository holds beside its models into the folder argv[1]:

- a TensorFlow checkpoint's variables.index: a LevelDB table written by LevelDB itself
  (python3-plyvel; TensorFlow's table format, tensorflow/core/lib/io/format.cc, is LevelDB's,
  same footer and magic 0xdb4775248b80fb57), and its variables.data shard;
- Arrow IPC streams and files, their Message and Footer flatbuffers written with the FlatBuffers
  Builder along apache/arrow's format/Message.fbs (Message: 0 version, 1 header_type, 2 header,
  3 bodyLength), format/Schema.fbs (Schema: 0 endianness, 1 fields) and format/File.fbs (Footer:
  0 version, 1 schema, 2 dictionaries, 3 recordBatches; Block struct offset:long,
  metaDataLength:int, padding, bodyLength:long), framed as the columnar format's "IPC Streaming
  Format" (0xFFFFFFFF, int32 length, message, body; 0xFFFFFFFF 0 at the end) and "IPC File
  Format" ("ARROW1", padding, stream, footer, int32 footer length, "ARROW1");
- Parquet's framing ("PAR1", data, footer, u32 footer length, "PAR1": Debian has no Parquet
  writer, so the footer's Thrift bytes are a stand-in: stguard checks the framing only);
- CSV and JSON Lines text.

Names say what stguard must find (script_data.sh): ok_* nothing; <code>_* that code."""
import glob
import os
import shutil
import struct
import sys
import tempfile

import flatbuffers


def leveldb_table():
    import plyvel

    d = tempfile.mkdtemp()
    try:
        db = plyvel.DB(d, create_if_missing=True, compression=None)
        for i in range(500):
            db.put(b"layer_with_weights-%03d/kernel/.ATTRIBUTES/VARIABLE_VALUE" % i,
                   struct.pack("<10I", *range(i, i + 10)))
        db.compact_range()
        db.close()
        return open(sorted(glob.glob(d + "/*.ldb"))[0], "rb").read()
    finally:
        shutil.rmtree(d)


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def broken_footer(table):
    """The index handle's offset moved past the file (the footer is the last 48 bytes)."""
    footer = table[-48:]
    pos = 0
    for _ in range(2):  # the metaindex handle: two varints
        while footer[pos] & 0x80:
            pos += 1
        pos += 1
    handle = varint(len(table) * 4) + varint(100)
    body = (footer[:pos] + handle).ljust(40, b"\0")
    return table[:-48] + body + footer[40:]


def arrow_message(header_type, body_len):
    b = flatbuffers.Builder(256)
    b.StartVector(4, 0, 4)
    fields = b.EndVector()
    b.StartObject(2)  # Schema
    b.PrependUOffsetTRelativeSlot(1, fields, 0)
    schema = b.EndObject()
    b.StartObject(4)  # Message
    b.PrependInt16Slot(0, 4, 0)  # MetadataVersion V5
    b.PrependUint8Slot(1, header_type, 0)
    b.PrependUOffsetTRelativeSlot(2, schema, 0)
    b.PrependInt64Slot(3, body_len, 0)
    b.Finish(b.EndObject())
    meta = bytes(b.Output())
    meta += b"\0" * (-len(meta) % 8)
    return struct.pack("<Ii", 0xFFFFFFFF, len(meta)) + meta


def arrow_stream(body=b""):
    out = arrow_message(1, 0)
    if body:
        out += arrow_message(3, len(body)) + body  # a RecordBatch message's body
    return out + struct.pack("<Ii", 0xFFFFFFFF, 0)


def arrow_file(batch_len_extra=0):
    schema_msg = arrow_message(1, 0)
    body = b"\x01" * 16
    batch_msg = arrow_message(3, len(body))
    stream = schema_msg + batch_msg + body + struct.pack("<Ii", 0xFFFFFFFF, 0)
    batch_at = 8 + len(schema_msg)
    b = flatbuffers.Builder(256)
    b.StartVector(24, 1, 8)
    b.Prep(8, 24)
    b.PrependInt64(len(body) + batch_len_extra)  # bodyLength
    b.PrependInt32(0)  # padding
    b.PrependInt32(len(batch_msg))  # metaDataLength
    b.PrependInt64(batch_at)  # offset
    blocks = b.EndVector()
    b.StartObject(4)
    b.PrependInt16Slot(0, 4, 0)
    b.PrependUOffsetTRelativeSlot(3, blocks, 0)
    b.Finish(b.EndObject())
    footer = bytes(b.Output())
    return b"ARROW1\0\0" + stream + footer + struct.pack("<i", len(footer)) + b"ARROW1"


def parquet(footer_len=None):
    footer = b"\x15\x02\x19\x2c\x48\x06schema\x15\x02\x00\x16\x00\x00"
    n = len(footer) if footer_len is None else footer_len
    return b"PAR1" + b"\0" * 32 + footer + struct.pack("<I", n) + b"PAR1"


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    table = leveldb_table()
    files = {
        "ok_variables.index": table,
        "tf_index_malformed_variables.index": broken_footer(table),
        "ok_variables.data-00000-of-00001": os.urandom(4096),
        "ok_model.ckpt.data-00000-of-00001": os.urandom(1024),
        "ok_model.ckpt.index": table,
        "ok_train.parquet": parquet(),
        "dataset_malformed_footer.parquet": parquet(footer_len=1 << 20),
        "ok_stream.arrow": arrow_stream(b"\x02" * 24),
        "ok_empty_schema.arrow": arrow_stream(),
        "ok_file.feather": arrow_file(),
        "dataset_malformed_block.arrow": arrow_file(batch_len_extra=4096),
        "dataset_malformed_cut.arrow": arrow_stream(b"\x02" * 24)[:-20],
        "ok_rows.csv": b"id,text,label\n1,\"hello, world\",0\n2,caf\xc3\xa9,1\n",
        "ok_rows.jsonl": b'{"text": "a", "label": 0}\n\n{"text": "b", "label": 1}\r\n',
        "dataset_text_invalid_rows.jsonl": b'{"text": "a"}\nnot json\n{"text": "b"}\n',
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
