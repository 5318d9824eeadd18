#!/usr/bin/python3
"""Malicious zip fixtures where the archive stguard used to read is not the one the loader reads.

Each file's pickle calls os.system; tests/differential/script_zip_attacks.sh checks with
tests/loaders/reach.py that the real loader named in the file name (torch-* for torch.load,
numpy-* for numpy.load) reaches that call, and that stguard blocks the file. The benign-*
files are near misses built the same way with nothing to find: they must not be flagged
zip_ambiguous.

- torch-locator-nowhere: a ZIP64 locator before the last end record points at byte 0, which
  holds no ZIP64 record; both readers then keep the classic fields of that record. stguard used
  to treat the record as unusable and fall back to the end record of a benign torch zip stored
  as a member.
- numpy-count-too-big: the last end record declares more entries than its directory holds;
  zipfile never reads the count. Same fallback before.
- numpy-offset-past-cd: the declared directory offset, and every local header offset, lie 7
  bytes past the real ones; zipfile corrects them all by the difference. Same fallback before.
- numpy-zip64-two-records, torch-zip64-two-records: two ZIP64 end records, one right before
  the locator (zipfile's) and one where the locator points (miniz's), each for its own
  directory; the payload is in the directory the named loader reads. stguard used to read the
  one the locator points to, so the numpy one passed.

Expected findings (besides the payload's pickle_global_dangerous) are in EXPECT.

Usage: gen_zip_attacks.py OUTDIR
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zip_differential as zd  # noqa: E402  (the archive builders)

EVIL_PICKLE = b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03."
BENIGN_PICKLE = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01K\x01s."


def npy(payload, descr="|O"):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }" % descr
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def benign_npy():
    return npy(struct.pack("<d", 1.5), descr="<f8")


def torch_layout(pickle_bytes):
    return [(b"arc/version", b"3\n"), (b"arc/data.pkl", pickle_bytes)]


def with_inner(members, inner):
    a = zd.Archive()
    for name, data in members:
        a.add(name, data)
    a.add(b"arc/inner.zip" if members[0][0].startswith(b"arc/") else b"inner.zip", inner)
    return a


def benign_torch_zip():
    a = zd.Archive()
    for name, data in torch_layout(BENIGN_PICKLE):
        a.add(name, data)
    return a.finish()


def benign_npz():
    a = zd.Archive()
    a.add(b"x.npy", benign_npy())
    return a.finish()


def locator_nowhere(members, inner):
    a = with_inner(members, inner)
    off, size = a.directory()
    a.out += zd.locator(0)
    a.out += zd.eocd(len(a.entries), size, off)
    return bytes(a.out)


def count_too_big(members, inner):
    a = with_inner(members, inner)
    return a.finish(count=50)


def offset_past_cd(members, inner, delta=7):
    a = zd.Archive(offset_base=-delta)
    for name, data in members:
        a.add(name, data)
    a.add(b"inner.zip", inner)
    return a.finish()


def two_records(zipfile_members, miniz_members):
    """Directory A (miniz, via the locator) and directory B (zipfile, right before the
    locator), over members stored once each."""
    a = zd.Archive()
    for name, data in miniz_members:
        a.add(name, data)
    entries_a = list(a.entries)
    a.entries = []
    for name, data in zipfile_members:
        a.add(name, data)
    entries_b = list(a.entries)
    off_a, size_a = a.directory(entries_a)
    rec_a = len(a.out)
    a.out += zd.eocd64(len(entries_a), size_a, off_a)
    off_b, size_b = a.directory(entries_b)
    a.out += zd.eocd64(len(entries_b), size_b, off_b)
    a.out += zd.locator(rec_a)
    a.out += zd.eocd(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    return bytes(a.out)


# fixture -> finding code stguard must report besides the payload
EXPECT = {
    "torch-locator-nowhere.pt": "zip_malformed",  # zipfile cannot open it, miniz can
    "numpy-count-too-big.npz": "zip_malformed",
    "numpy-offset-past-cd.npz": "zip_malformed",
    "numpy-zip64-two-records.npz": "zip_ambiguous",
    "torch-zip64-two-records.pt": "zip_ambiguous",
}


def fixtures():
    evil_torch, good_torch = torch_layout(EVIL_PICKLE), torch_layout(BENIGN_PICKLE)
    evil_npz, good_npz = [(b"x.npy", npy(EVIL_PICKLE))], [(b"x.npy", benign_npy())]
    yield "torch-locator-nowhere.pt", locator_nowhere(evil_torch, benign_torch_zip())
    yield "numpy-count-too-big.npz", count_too_big(evil_npz, benign_npz())
    yield "numpy-offset-past-cd.npz", offset_past_cd(evil_npz, benign_npz())
    yield "numpy-zip64-two-records.npz", two_records(evil_npz, good_npz)
    yield "torch-zip64-two-records.pt", two_records(good_torch, evil_torch)
    # near misses: the same constructions with nothing to find and one reading
    yield "benign-locator-nowhere.pt", locator_nowhere(good_torch, benign_torch_zip())
    a = zd.Archive()
    for name, data in good_torch:
        a.add(name, data)
    yield "benign-zip64-one-record.pt", a.finish(zip64=True)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in fixtures():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
