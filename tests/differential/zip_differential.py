#!/usr/bin/python3
"""Differential test of stguard's zip readings against the real readers.

Builds archives of every class where zip readers can disagree (prepended and appended bytes,
two end records, a zip stored inside a member, ZIP64 locators and records that lead elsewhere
or nowhere, entry counts, directory offsets, comments holding end-record signatures) plus
seeded random variations of them, and compares, per reader, what stguard's test driver
(tests/support/zip_members.c) says it loads with what Python's zipfile.ZipFile and
torch._C.PyTorchFileReader really return: whether the archive opens, the member names in
order, and each member's bytes (zipfile: also its local header offset and data start).

Every member is stored (method 0) with a correct CRC, so a reader that reads the bytes stguard
names returns exactly them. The archives hold no pickles: nothing is unpickled, only listed
and read as bytes.

Usage: zip_differential.py DRIVER WORKDIR [SEED COUNT]
Exit status 0 when every archive agrees, 1 otherwise (each disagreement is printed).
"""
import json
import os
import random
import struct
import subprocess
import sys
import zipfile
import zlib

try:
    import torch
except ImportError:  # the caller skips the test
    sys.exit(77)

SIG_LOCAL, SIG_CENTRAL, SIG_EOCD = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"
SIG_EOCD64, SIG_LOC64 = b"PK\x06\x06", b"PK\x06\x07"


def local_header(name, data):
    return (SIG_LOCAL + struct.pack("<HHHHHIIIHH", 20, 0, 0, 0, 0, zlib.crc32(data), len(data),
                                    len(data), len(name), 0) + name + data)


def central_header(name, data, offset, version_needed=20):
    return (SIG_CENTRAL + struct.pack("<HHHHHHIIIHHHHHII", 20, version_needed, 0, 0, 0, 0,
                                      zlib.crc32(data), len(data), len(data), len(name), 0, 0, 0,
                                      0, 0, offset) + name)


def eocd(count, cd_size, cd_offset, comment=b"", count_disk=None):
    count_disk = count if count_disk is None else count_disk
    return SIG_EOCD + struct.pack("<HHHHIIH", 0, 0, count_disk, count, cd_size, cd_offset,
                                  len(comment)) + comment


def eocd64(count, cd_size, cd_offset):
    return SIG_EOCD64 + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, count, count, cd_size,
                                    cd_offset)


def locator(record_offset, disks=1):
    return SIG_LOC64 + struct.pack("<IQI", 0, record_offset, disks)


class Archive:
    """A zip under construction: members, then directory records appended by the caller."""

    def __init__(self, prefix=b"", offset_base=None):
        self.out = bytearray(prefix)
        # offsets written into headers are relative to offset_base (default: the archive's
        # own start, as a writer that never saw the prefix would write them)
        self.base = len(prefix) if offset_base is None else offset_base
        self.entries = []

    def add(self, name, data):
        self.entries.append((name, data, len(self.out) - self.base))
        self.out += local_header(name, data)

    def directory(self, entries=None, version_needed=20):
        """Writes a central directory; returns (its offset as written, its size)."""
        start = len(self.out)
        for name, data, off in (self.entries if entries is None else entries):
            self.out += central_header(name, data, off, version_needed)
        return start - self.base, len(self.out) - start

    def finish(self, comment=b"", count=None, cd=None, zip64=False, locator_to=None):
        off, size = self.directory() if cd is None else cd
        n = len(self.entries) if count is None else count
        if zip64:
            rec = len(self.out) - self.base
            self.out += eocd64(n, size, off)
            self.out += locator(rec if locator_to is None else locator_to)
            self.out += eocd(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, comment)
        else:
            self.out += eocd(n, size, off, comment)
        return bytes(self.out)


def torch_members(tag):
    """A torch-style layout (PyTorchStreamReader needs a top folder and a version record)."""
    return [(b"arc/version", b"3\n"), (b"arc/data.pkl", b"member data " + tag.encode()),
            (b"arc/data/0", tag.encode() * 3)]


def plain(tag, prefix=b"", **kw):
    a = Archive(prefix, kw.pop("offset_base", None))
    for name, data in torch_members(tag):
        a.add(name, data)
    return a.finish(**kw)


def classes(rng):
    """(label, bytes) for every class, with a few fixed and random parameters each."""
    yield "plain", plain("p")
    yield "plain-comment", plain("c", comment=b"a comment")
    for n in (1, 100, 4096):
        yield "prepended-%d" % n, plain("pre", prefix=b"X" * n)
        yield "prepended-absolute-%d" % n, plain("abs", prefix=b"X" * n, offset_base=0)
    for n in (1, 21, 22, 100, 65535, 65536, 65537, 69000, 69561, 69562, 69563, 70000):
        yield "appended-%d" % n, plain("app") + b"\0" * n
    # two archives one after the other: both readers take the second end record
    first = plain("one")
    yield "two-archives", first + plain("two", prefix=b"", offset_base=-len(first))
    yield "two-archives-relative", first + plain("two")
    # a complete zip stored inside a member, then the outer end record broken
    inner = plain("inner")
    for how in ("ok", "count", "offset", "size", "locator-nowhere", "locator-elsewhere"):
        a = Archive()
        a.add(b"arc/version", b"3\n")
        a.add(b"arc/data.pkl", b"outer data")
        a.add(b"arc/inner.zip", inner)
        if how == "ok":
            yield "inner-zip", a.finish()
            continue
        off, size = a.directory()
        if how == "count":
            yield "inner-zip-count-too-big", a.finish(count=9, cd=(off, size))
        elif how == "offset":
            yield "inner-zip-offset-past-cd", a.finish(cd=(off + 7, size))
        elif how == "size":
            yield "inner-zip-size-too-big", a.finish(cd=(off, size + 4096))
        elif how == "locator-nowhere":
            yield "inner-zip-locator-nowhere", a.finish(cd=(off, size), zip64=True,
                                                        locator_to=10 ** 12)
        else:
            # the locator points at a ZIP64 record inside the stored inner zip's bytes
            yield "inner-zip-locator-elsewhere", a.finish(cd=(off, size), zip64=True,
                                                          locator_to=40)
    # ZIP64: miniz follows the locator to the record it declares, zipfile takes the 56 bytes
    # right before the locator: two records, each for its own directory. Layout: members,
    # directory A, record A (the locator's target), directory B, record B, locator, end record.
    a = Archive()
    for name, data in torch_members("z64"):
        a.add(name, data)
    other = (b"arc/data.pkl", b"other data!", len(a.out))
    a.out += local_header(other[0], other[1])
    off_a, size_a = a.directory(a.entries)
    rec_a = len(a.out)
    a.out += eocd64(3, size_a, off_a)
    off_b, size_b = a.directory([a.entries[0], other])
    rec_b = len(a.out)
    a.out += eocd64(2, size_b, off_b)
    a.out += locator(rec_a)
    a.out += eocd(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    assert rec_b == off_b + size_b
    yield "zip64-two-records", bytes(a.out)
    yield "zip64-plain", plain("z", zip64=True)
    yield "zip64-locator-nowhere", plain("zn", zip64=True, locator_to=10 ** 12)
    yield "zip64-locator-to-start", plain("zs", zip64=True, locator_to=0)
    # entry counts
    for count in (0, 1, 2, 4, 200):
        yield "count-%d" % count, plain("n", count=count)
    # a directory offset past the real directory, or before it
    for delta in (-30, -1, 1, 46, 5000):
        a = Archive()
        for name, data in torch_members("off"):
            a.add(name, data)
        off, size = a.directory()
        yield "cd-offset%+d" % delta, a.finish(cd=(max(off + delta, 0), size))
    # comments holding end-record signatures
    yield "comment-sig-tail", plain("ct", comment=b"x" * 30 + SIG_EOCD + b"y" * 10)
    yield "comment-sig-last4", plain("c4", comment=b"x" * 30 + SIG_EOCD)
    fake = plain("fake")
    yield "comment-fake-eocd", plain("cf", comment=fake[-22:] + b"z")
    yield "comment-fake-eocd-exact", plain("ce", comment=fake[-22:])
    # a version zipfile refuses
    a = Archive()
    for name, data in torch_members("ver"):
        a.add(name, data)
    yield "version-needed-64", a.finish(cd=a.directory(version_needed=64))
    # seeded random variations of the templates above
    templates = ["plain", "prepend", "append", "two", "count", "offset", "comment", "zip64"]
    for i in range(int(os.environ.get("ZIPDIFF_RANDOM", "60"))):
        kind = rng.choice(templates)
        tag = "r%d" % i
        if kind == "plain":
            yield "random-%d-plain" % i, plain(tag)
        elif kind == "prepend":
            n = rng.randrange(1, 3000)
            yield "random-%d-prepend" % i, plain(tag, prefix=bytes(rng.randrange(256)
                                                               for _ in range(n)),
                                                 offset_base=rng.choice([None, 0]))
        elif kind == "append":
            yield "random-%d-append" % i, plain(tag) + os.urandom(0) + bytes(
                rng.randrange(256) for _ in range(rng.randrange(1, 2000)))
        elif kind == "two":
            one = plain(tag + "a")
            yield "random-%d-two" % i, one + plain(tag + "b", offset_base=rng.choice(
                [None, -len(one)]))
        elif kind == "count":
            yield "random-%d-count" % i, plain(tag, count=rng.randrange(0, 8))
        elif kind == "offset":
            a = Archive()
            for name, data in torch_members(tag):
                a.add(name, data)
            off, size = a.directory()
            yield "random-%d-offset" % i, a.finish(cd=(max(0, off + rng.randrange(-60, 60)),
                                                       size + rng.choice([0, 0, -1, 1, 46])))
        elif kind == "comment":
            c = bytearray(rng.randrange(256) for _ in range(rng.randrange(0, 80)))
            if c and rng.random() < 0.7:
                p = rng.randrange(len(c))
                c[p:p + 4] = SIG_EOCD
            yield "random-%d-comment" % i, plain(tag, comment=bytes(c[:80]))
        else:
            yield "random-%d-zip64" % i, plain(tag, zip64=True, locator_to=rng.choice(
                [None, 0, 10 ** 9, rng.randrange(0, 400)]))


def real_zipfile(path):
    try:
        zf = zipfile.ZipFile(path)
    except Exception as exc:  # BadZipFile, NotImplementedError, struct errors
        return {"open": False, "why": repr(exc)}
    members = []
    for info in zf.infolist():
        m = {"name": info.orig_filename.encode("cp437", "replace").hex(),
             "header_offset": info.header_offset}
        try:
            with zf.open(info) as f:
                m["data_offset"] = f._orig_compress_start
                m["data"] = f.read().hex()
        except Exception as exc:
            m["error"] = repr(exc)
        members.append(m)
    return {"open": True, "members": members}


def real_torch(path):
    try:
        r = torch._C.PyTorchFileReader(path)
        names = r.get_all_records()
    except Exception as exc:
        return {"open": False, "why": str(exc).splitlines()[0][:200]}
    members = []
    for name in names:
        m = {"name": name}
        try:
            m["data"] = bytes(r.get_record(name)).hex()
        except Exception as exc:
            m["error"] = str(exc).splitlines()[0][:200]
        members.append(m)
    return {"open": True, "members": members}


def compare_zipfile(buf, ours, real):
    """Problems (strings) between stguard's zipfile reading and zipfile's."""
    if (ours["open"] == "ok") != real["open"]:
        return ["zipfile open: stguard %s, real %s" % (ours["open"], real.get("why", "opens"))]
    if not real["open"]:
        return []
    problems = []
    mine = ours["entries"]
    if len(mine) != len(real["members"]):
        problems.append("zipfile: stguard %d entries, real %d" % (len(mine),
                                                                 len(real["members"])))
    for e, m in zip(mine, real["members"]):
        if e["name"] != m["name"]:
            problems.append("zipfile: name %s vs %s" % (e["name"], m["name"]))
            continue
        if e["status"] != "ok":
            continue  # stguard reports this entry as malformed: an error, never a pass
        if e["local_offset"] != m["header_offset"]:
            problems.append("zipfile %s: local header %d vs %d" % (
                bytes.fromhex(e["name"]), e["local_offset"], m["header_offset"]))
        if "error" in m:
            problems.append("zipfile %s: stguard reads it, zipfile fails: %s" % (
                bytes.fromhex(e["name"]), m["error"]))
            continue
        if e["data_offset"] != m["data_offset"]:
            problems.append("zipfile %s: data at %d vs %d" % (
                bytes.fromhex(e["name"]), e["data_offset"], m["data_offset"]))
        ours_data = buf[e["data_offset"]:e["data_offset"] + e["data_len"]].hex()
        if ours_data != m["data"]:
            problems.append("zipfile %s: data differs" % bytes.fromhex(e["name"]))
    return problems


def compare_torch(buf, ours, real):
    if (ours["open"] == "ok") != real["open"]:
        # torch also refuses archives miniz opens (no top folder, no version record)
        if ours["open"] == "ok" and not real["open"] and (
                "subdirectory" in real["why"] or "version" in real["why"] or
                "does not contain any files" in real["why"]):
            return []
        return ["miniz open: stguard %s, real %s" % (ours["open"], real.get("why", "opens"))]
    if not real["open"]:
        return []
    problems = []
    mine = ours["entries"]
    names = [bytes.fromhex(e["name"]).decode("latin-1") for e in mine]
    prefix = names[0].split("/", 1)[0] + "/" if names else ""
    stripped = [n[len(prefix):] for n in names]
    real_names = [m["name"] for m in real["members"]]
    if stripped != real_names:
        problems.append("miniz names: stguard %s, real %s" % (stripped, real_names))
        return problems
    unique = {n for n in stripped if stripped.count(n) == 1}
    for e, n, m in zip(mine, stripped, real["members"]):
        if n not in unique or e["status"] != "ok":
            continue
        if "error" in m:
            problems.append("miniz %s: stguard reads it, torch fails: %s" % (n, m["error"]))
            continue
        ours_data = buf[e["data_offset"]:e["data_offset"] + e["data_len"]].hex()
        if ours_data != m["data"]:
            problems.append("miniz %s: data differs" % n)
    return problems


def main():
    driver, workdir = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    rng = random.Random(seed)
    files = []
    for label, data in classes(rng):
        path = os.path.join(workdir, label + ".zip")
        with open(path, "wb") as f:
            f.write(data)
        files.append((label, path, data))
    out = subprocess.run([driver] + [p for _, p, _ in files], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    failures = 0
    ambiguous = 0
    for (label, path, data), line in zip(files, out):
        ours = json.loads(line)
        zf, mz = real_zipfile(path), real_torch(path)
        problems = compare_zipfile(data, ours["zipfile"], zf) + compare_torch(data,
                                                                              ours["miniz"], mz)
        if zf["open"] and mz["open"]:
            zf_data = sorted(m.get("data", "") for m in zf["members"])
            mz_data = sorted(m.get("data", "") for m in mz["members"])
            ambiguous += zf_data != mz_data
        status = "FAIL" if problems else "ok"
        print("%s %s zipfile=%s miniz=%s" % (status, label, ours["zipfile"]["open"],
                                              ours["miniz"]["open"]))
        for p in problems:
            print("    " + p)
        failures += bool(problems)
    print("%d archives, %d disagreements, %d where both loaders open different data" %
          (len(files), failures, ambiguous))
    # the classes must exercise what they are for: some archives where both readers open
    # different data, some where exactly one opens
    one_opens = sum((json.loads(l)["zipfile"]["open"] == "ok") !=
                    (json.loads(l)["miniz"]["open"] == "ok") for l in out)
    if ambiguous == 0 or one_opens == 0:
        print("the generated classes did not produce reader disagreements")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
