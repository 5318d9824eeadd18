#!/usr/bin/python3
"""Malicious and benign files that torch.load reads as a PyTorch 0.1 tar (tests/differential/script_tar_attacks.sh).

Usage: gen_tar_attacks.py OUTDIR

Every evil_* file is one class of tar reading where Python's tarfile (what torch.load uses) and a
simpler reader disagree; its payload calls os.system when torch unpickles it. The payload has no
STOP opcode in most classes: torch runs the call before it fails, while a sniffer that needs
STOP to call something a pickle lets it through unless it knows which member torch reads.
benign_* files are near misses that must not come out unsafe. Nothing here loads anything.
"""
import io
import json
import os
import struct
import sys
import tarfile

BLK = 512
EVIL = b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03."
EVIL_NOSTOP = EVIL[:-1]
STORAGES_OK = b"\x80\x02K\x00.\x80\x02]q\x00."  # no storages, no views
TENSORS_OK = b"\x80\x02K\x00."                  # no tensors
BENIGN_PICKLE = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01K\x01s."  # {'a': 1}


def octal(n, width):
    return ("%0*o" % (width - 1, n)).encode() + b"\0"


def checksum(h, signed=False):
    h = bytearray(h)
    h[148:156] = b" " * 8
    if signed:
        s = 256 + sum((b - 256 if b >= 128 else b) for i, b in enumerate(h) if not 148 <= i < 156)
    else:
        s = 256 + sum(b for i, b in enumerate(h) if not 148 <= i < 156)
    assert s >= 0
    h[148:156] = ("%06o" % s).encode() + b"\0 "
    return bytes(h)


def header(name, size, type=b"0", link=b"", magic=b"ustar\x0000", uname=b"user",
           signed=False):
    h = bytearray(BLK)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = b"0001750\0"
    h[116:124] = b"0001750\0"
    h[124:136] = octal(size, 12)
    h[136:148] = octal(1700000000, 12)
    h[156:157] = type
    h[157:157 + len(link)] = link
    h[257:265] = magic.ljust(8, b"\0")
    h[265:265 + len(uname)] = uname
    return checksum(h, signed)


def pad(b):
    return b + b"\0" * ((-len(b)) % BLK)


def member(name, data=b"", **kw):
    return header(name, len(data), **kw) + pad(data)


def pax_record(key, value):
    body = b" " + key + b"=" + value + b"\n"
    n = len(body) + 1
    while len(str(n).encode()) + len(body) != n:
        n += 1
    return str(n).encode() + body


def pax(records, type=b"x"):
    return member(b"././@PaxHeader", b"".join(pax_record(k, v) for k, v in records), type=type)


END = b"\0" * (2 * BLK)


def torch_tar(pickle_part, storages=None, tensors=None):
    """storages and tensors that torch loads without error, then whatever carries 'pickle'."""
    s = storages if storages is not None else member(b"storages", STORAGES_OK)
    t = tensors if tensors is not None else member(b"tensors", TENSORS_OK)
    return member(b"sys_info", BENIGN_PICKLE) + s + t + pickle_part + END


def safetensors_tar(payload_tar):
    """A valid safetensors file whose first 512 bytes are a pax header ('x'); the pax records
    and the rest of the tar are the one tensor's data."""
    prefix = b'{"__metadata__":{"p":"'
    body_start = 8 + len(prefix)
    tail_tmpl = '"},"w":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]}}'
    records = pax_record(b"path", b"storages")
    rest = pad(records) + payload_tar
    n = len(rest)
    tail = (tail_tmpl % (n, n)).encode()
    hlen = BLK - 8  # the JSON ends exactly at the first block's end
    # the metadata string covers the tar header's fields up to the devminor field (345)
    fill = bytearray(b"a" * (345 + 4 - body_start))

    def put(at, text):
        fill[at - body_start:at - body_start + len(text)] = text

    for at, n_ in ((100, 8), (108, 8), (116, 8), (136, 12), (329, 8), (337, 8)):
        put(at, b" " * n_)
    put(124, ("%011o " % len(records)).encode())
    put(156, b"x")
    head = prefix + bytes(fill) + tail
    head = head + b" " * (hlen - len(head))
    assert len(head) == hlen, len(head)
    blob = bytearray(struct.pack("<Q", hlen) + head)
    # checksum over the block with the field as spaces, written as octal digits and spaces
    blob[148:156] = b" " * 8
    s = 256 + sum(b for i, b in enumerate(blob[:BLK]) if not 148 <= i < 156)
    blob[148:156] = ("%07o " % s).encode()
    json.loads(bytes(blob[8:8 + hlen]))  # still a JSON header
    return bytes(blob) + rest


def npy_tar(payload_tar):
    """A valid .npy (uint8 vector) whose first block is a pax header: the tar fields sit in a
    comment after the header dict, which numpy's literal_eval ignores."""
    records = pax_record(b"path", b"storages")
    rest = pad(records) + payload_tar
    d = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), } #" % len(rest)
    hdr = bytearray(d.encode().ljust(BLK - 10 - 1, b"a") + b"\n")
    full = bytearray(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr)
    for at, n_ in ((100, 8), (108, 8), (116, 8), (136, 12), (329, 8), (337, 8)):
        full[at:at + n_] = b" " * n_
    full[124:136] = ("%011o " % len(records)).encode()
    full[156:157] = b"x"
    full[148:156] = b" " * 8
    s = 256 + sum(b for i, b in enumerate(full[:BLK]) if not 148 <= i < 156)
    full[148:156] = ("%07o " % s).encode()
    assert len(full) == BLK
    return bytes(full) + rest


def gguf_tar(payload_tar):
    """A GGUF v3 file (no tensors, one string key) whose first block is a pax header; the whole
    tar lives inside the string value."""
    records = pax_record(b"path", b"storages")
    key = b"general.name"
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    head += struct.pack("<I", 8)  # string
    value_at = len(head) + 8
    rest = pad(records) + payload_tar
    value_len = BLK - value_at + len(rest)
    blob = bytearray(head + struct.pack("<Q", value_len) + b" " * (BLK - value_at))
    for at, n_ in ((100, 8), (108, 8), (116, 8), (136, 12), (329, 8), (337, 8)):
        blob[at:at + n_] = b" " * n_
    blob[124:136] = ("%011o " % len(records)).encode()
    blob[156:157] = b"x"
    blob[148:156] = b" " * 8
    s = 256 + sum(b for i, b in enumerate(blob[:BLK]) if not 148 <= i < 156)
    blob[148:156] = ("%07o " % s).encode()
    return bytes(blob) + rest


def zip_end_tar(payload_tar):
    """A zip end record with no entries at byte 0 whose comment runs to the end of the file
    (Python's zipfile opens it: numpy.load's NpzFile with no members), inside the name field of
    an empty first tar member: torch.load (no PK\\3\\4, so not its zip route) reads the tar."""
    total = BLK + len(payload_tar)
    eocd = b"PK\x05\x06" + b"\0" * 16 + struct.pack("<H", total - 22)
    out = header(eocd, 0) + payload_tar
    assert len(out) == total
    import zipfile
    assert zipfile.ZipFile(io.BytesIO(out)).namelist() == []
    assert tarfile.open(fileobj=io.BytesIO(out), mode="r:").getnames()[0] == "PK\x05\x06"
    return out


def evil_tail():
    """What follows the polyglots' pax header: the member it names, then the rest of the
    PyTorch 0.1 layout."""
    return (header(b"decoy", len(EVIL_NOSTOP)) + pad(EVIL_NOSTOP) + member(b"tensors", TENSORS_OK)
            + member(b"pickle", BENIGN_PICKLE) + END)


def cases():
    c = {}
    c["evil_unknown_type"] = torch_tar(member(b"pickle", EVIL_NOSTOP, type=b"A"))
    c["evil_unknown_type_storages"] = torch_tar(member(b"pickle", BENIGN_PICKLE),
                                                storages=member(b"storages", EVIL, type=b"Z"))
    c["evil_symlink_pickle"] = torch_tar(member(b"blob", EVIL_NOSTOP, type=b"V") +
                                         member(b"pickle", type=b"2", link=b"blob"))
    c["evil_hardlink_storages"] = torch_tar(member(b"pickle", BENIGN_PICKLE),
                                            storages=member(b"blob", EVIL, type=b"8") +
                                            member(b"storages", type=b"1", link=b"./blob"))
    c["evil_pax_path_slash"] = torch_tar(pax([(b"path", b"pickle///")]) +
                                         member(b"notes.txt", EVIL_NOSTOP))
    c["evil_pax_sparse_name"] = torch_tar(pax([(b"GNU.sparse.name", b"pickle")]) +
                                          member(b"notes.txt", EVIL_NOSTOP))
    c["evil_pax_global_path"] = (member(b"sys_info", BENIGN_PICKLE) +
                                 member(b"storages", STORAGES_OK) + member(b"tensors", TENSORS_OK)
                                 + pax([(b"path", b"pickle")], type=b"g") +
                                 member(b"notes.txt", EVIL_NOSTOP) + END)
    c["evil_pax_size"] = torch_tar(pax([(b"size", str(len(EVIL_NOSTOP)).encode())]) +
                                   header(b"pickle", 0) + pad(EVIL_NOSTOP))
    c["evil_duplicate_last"] = torch_tar(member(b"pickle", BENIGN_PICKLE) +
                                         member(b"pickle", EVIL_NOSTOP, type=b"Q"))
    v7 = (member(b"sys_info", BENIGN_PICKLE, magic=b"") + member(b"storages", STORAGES_OK, magic=b"")
          + member(b"tensors", TENSORS_OK, magic=b"") + member(b"pickle", EVIL, magic=b"") + END)
    c["evil_v7_header"] = v7
    c["evil_signed_checksum"] = (member(b"sys_info", BENIGN_PICKLE, uname=b"\xe9" * 31,
                                        signed=True) + member(b"storages", STORAGES_OK) +
                                 member(b"tensors", TENSORS_OK) + member(b"pickle", EVIL) + END)
    c["evil_safetensors_tar"] = safetensors_tar(evil_tail())
    c["evil_npy_tar"] = npy_tar(evil_tail())
    c["evil_gguf_tar"] = gguf_tar(evil_tail())
    c["evil_zip_end_tar"] = zip_end_tar(torch_tar(member(b"pickle", EVIL_NOSTOP))[:-len(END)] +
                                        END)
    # near miss: the end record alone (zipfile opens it, no tar header: torch's tarfile fails)
    c["benign_empty_zip"] = b"PK\x05\x06" + b"\0" * 18
    # near misses: a tar as tarfile writes it with benign members; a plain safetensors file
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in ((b"sys_info", BENIGN_PICKLE), (b"storages", STORAGES_OK),
                           (b"tensors", TENSORS_OK), (b"pickle", BENIGN_PICKLE)):
            info = tarfile.TarInfo(name.decode())
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    c["benign_torch01"] = buf.getvalue()
    head = b'{"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}'
    head += b" " * ((-len(head)) % 8)
    c["benign_safetensors"] = struct.pack("<Q", len(head)) + head + b"abcd"
    return c


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ext = {"evil_safetensors_tar": ".safetensors", "evil_npy_tar": ".npy",
           "evil_gguf_tar": ".gguf", "benign_safetensors": ".safetensors"}
    for name, data in cases().items():
        with open(os.path.join(out, name + ext.get(name, ".pt")), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
