#!/usr/bin/env python3
"""Regenerates the container fixtures of tests/test_containers.c and tests/test_zip.c.
Python standard library only; every file stays small. Pickles are written byte by byte so no
class has to exist. Run from anywhere: python3 make_fixtures.py (writes next to itself)."""
import bz2, gzip, io, lzma, os, struct, tarfile, zipfile, zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# os.system('id') in protocol 2; collections.OrderedDict() in protocol 2; a joblib wrapper.
EVIL = b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03."
BENIGN = b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01."
JOBLIB = b"\x80\x02cjoblib.numpy_pickle\nNumpyArrayWrapper\nq\x00)\x81q\x01."
ZEROS = b"\0" * (2 << 20)


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def fixed_time(info):
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def tar_of(members):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            info = fixed_time(tarfile.TarInfo(name))
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def zip_of(members, method=zipfile.ZIP_STORED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return out.getvalue()


def main():
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    put("zeros-2m.deflate", co.compress(ZEROS) + co.flush())
    put("zeros-2m.zlib", zlib.compress(ZEROS, 9))
    put("zeros-2m.gz", gzip.compress(ZEROS, 9, mtime=0))
    put("evil.pkl.gz", gzip.compress(EVIL, 9, mtime=0))
    put("evil.pkl.zlib", zlib.compress(EVIL, 9))
    put("joblib-zlib.joblib", zlib.compress(JOBLIB, 9))
    put("evil.pkl.bz2", bz2.compress(EVIL))
    put("evil.pkl.xz", lzma.compress(EVIL, format=lzma.FORMAT_XZ))
    put("evil.pkl.lzma", lzma.compress(EVIL, format=lzma.FORMAT_ALONE))
    # PyTorch 0.1 layout: the evil pickle is the 'pickle' member.
    legacy_tar = tar_of([("sys_info", BENIGN), ("pickle", EVIL), ("storages", b"\x80\x02K\x00."),
                         ("tensors", b"\x80\x02K\x00.")])
    put("torch01-evil.tar", legacy_tar)
    put("torch01-benign.tar", tar_of([("sys_info", BENIGN), ("pickle", BENIGN),
                                      ("storages", b"\x80\x02K\x00."),
                                      ("tensors", b"\x80\x02K\x00.")]))
    # PyTorch 0.1 records as torch 0.1 wrote them: storages = count pickle, then per storage an
    # argument pickle, an 8-byte element count and the elements; tensors = count pickle, then per
    # tensor an argument pickle, ndim (i32), 4 pad bytes, sizes, strides, storage offset.
    args = b"\x80\x02X\x01\x00\x00\x000q\x00X\x03\x00\x00\x00cpuq\x01ctorch\nFloatStorage\nq\x02\x87q\x03."
    floats = struct.pack("<q", 4) + struct.pack("<4f", 1.5, -2.25, 3.0, 1e-3)
    storages = b"\x80\x02K\x02." + args + floats + args + floats
    tensors = (b"\x80\x02K\x01." +
               b"\x80\x02X\x01\x00\x00\x001q\x00X\x01\x00\x00\x000q\x01ctorch\nFloatTensor\nq\x02\x87q\x03." +
               struct.pack("<i", 1) + b"\0" * 4 + struct.pack("<q", 4) + struct.pack("<q", 1) + struct.pack("<q", 0))
    put("torch01-framed.tar", tar_of([("sys_info", BENIGN), ("pickle", BENIGN), ("storages", storages),
                                      ("tensors", tensors)]))
    # The second storage's argument pickle is the payload.
    put("torch01-framed-evil.tar", tar_of([("sys_info", BENIGN), ("pickle", BENIGN),
                                           ("storages", b"\x80\x02K\x02." + args + floats + EVIL + floats),
                                           ("tensors", tensors)]))
    put("plain-evil.tar", tar_of([("dir/readme.txt", b"hello\n"), ("dir/model.bin", EVIL)]))
    long_name = "d/" + "x" * 150 + "/payload.pkl"
    put("longname-evil.tar", tar_of([(long_name, EVIL)]))
    # A torch zip whose data.pkl is deflated.
    put("torch-deflated-evil.pt", zip_of([("archive/data.pkl", EVIL), ("archive/version", b"3\n")],
                                         zipfile.ZIP_DEFLATED))
    put("torch-benign.pt", zip_of([("archive/data.pkl", BENIGN), ("archive/data/0", b"\1\2\3\4" * 4),
                                   ("archive/version", b"3\n")]))


if __name__ == "__main__":
    main()
