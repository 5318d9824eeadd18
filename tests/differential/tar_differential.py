#!/usr/bin/python3
"""Differential test of stguard's tar reader against CPython's tarfile (the reader torch.load
uses for the PyTorch 0.1 format).

Usage: tar_differential.py DRIVER OUTDIR SEED [COUNT]

Builds archives of every class tarfile treats specially (ustar/GNU/pax writers, unknown type
flags, hard and symbolic links, duplicate names, pax size/path/linkpath/GNU.sparse.name/global
records, GNU long names and links, V7 headers, signed checksums, base-256 and odd octal numbers,
zero blocks, truncation, missing padding), then COUNT seeded random mutations of them (type
flags, checksums, pax records, links, duplicates, V7 headers, truncation). For each archive it
compares what DRIVER (tests/support/tar_members.c: stguard's member list as JSON) says with what
tarfile returns: whether it opens, whether listing fails, every member's name, link, type,
offsets and size, which member extractfile() reads for each member (links followed) and which
member getmember() finds for sys_info, pickle, storages and tensors.

stguard may refuse (report the archive malformed) where tarfile reads something stguard does not
model; each refusal must be of a listed kind and is counted. Exit status 1 on any disagreement.
"""
import io
import json
import os
import random
import subprocess
import sys
import tarfile

BLK = 512
TORCH_NAMES = ("sys_info", "pickle", "storages", "tensors")

# ----------------------------------------------------------------------------- building


def octal(n, width):
    return ("%0*o" % (width - 1, n)).encode() + b"\0"


def header(name=b"", size=0, type=b"0", link=b"", magic=b"ustar\x0000", prefix=b"",
           mode=b"0000644\0", uid=b"0001750\0", gid=b"0001750\0", mtime=None, size_field=None,
           chk="unsigned", uname=b"user", gname=b"group", dev=b"\0" * 16):
    h = bytearray(BLK)
    h[0:100] = name[:100].ljust(100, b"\0")
    h[100:108] = mode
    h[108:116] = uid
    h[116:124] = gid
    h[124:136] = size_field if size_field is not None else octal(size, 12)
    h[136:148] = mtime if mtime is not None else octal(1700000000, 12)
    h[156:157] = type
    h[157:257] = link[:100].ljust(100, b"\0")
    h[257:265] = magic[:8].ljust(8, b"\0")
    h[265:297] = uname.ljust(32, b"\0")
    h[297:329] = gname.ljust(32, b"\0")
    h[329:345] = dev
    h[345:500] = prefix[:155].ljust(155, b"\0")
    return set_checksum(h, chk)


def set_checksum(h, chk="unsigned"):
    h = bytearray(h)
    h[148:156] = b" " * 8
    if chk == "signed":
        s = 256 + sum((b - 256 if b >= 128 else b) for i, b in enumerate(h)
                      if not 148 <= i < 156)
        if s < 0:
            h[148:156] = b"\xff" + (s % (256 ** 7)).to_bytes(7, "big")
        else:
            h[148:156] = ("%06o" % s).encode() + b"\0 "
    elif chk == "bad":
        h[148:156] = b"0000001\0"
    elif isinstance(chk, bytes):
        h[148:156] = chk
    else:
        s = 256 + sum(b for i, b in enumerate(h) if not 148 <= i < 156)
        h[148:156] = ("%06o" % s).encode() + b"\0 "
    return bytes(h)


def pad(data):
    return data + b"\0" * ((-len(data)) % BLK)


def member(name, data=b"", **kw):
    return header(name=name, size=len(data), **kw) + pad(data)


def pax_record(key, value):
    body = b" " + key + b"=" + value + b"\n"
    n = len(body) + 1
    while len(str(n).encode()) + len(body) != n:
        n += 1
    return str(n).encode() + body


def pax(records, type=b"x", **kw):
    data = b"".join(pax_record(k, v) for k, v in records)
    return member(b"././@PaxHeader", data, type=type, **kw)


def end():
    return b"\0" * (2 * BLK)


PICKLE = b"\x80\x02K\x01."


def writer(fmt, entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                t.addfile(info)
            else:
                info.type = tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE
                info.linkname = data
                t.addfile(info)
    return buf.getvalue()


def fixed_cases():
    c = {}
    entries = [("storages", "file", PICKLE), ("tensors", "file", PICKLE),
               ("pickle", "file", PICKLE * 300), ("dir", "dir", None),
               ("dir/" + "n" * 120, "file", b"long"), ("lnk", "sym", "pickle"),
               ("hard", "hard", "storages"), ("\u00fc\u00df", "file", b"u")]
    for fmt, tag in ((tarfile.PAX_FORMAT, "pax"), (tarfile.GNU_FORMAT, "gnu")):
        c["writer_" + tag] = writer(fmt, entries)
    c["writer_ustar"] = writer(tarfile.USTAR_FORMAT, [e for e in entries if len(e[0]) < 100])
    for t in (b"A", b"Z", b"8", b"9", b"V", b"M", b"N", b"\x80", b"x\x00"[:1]):
        if t == b"x":
            continue
        c["unknown_type_%02x" % t[0]] = member(b"pickle", PICKLE, type=t) + end()
    # links
    c["hard_to_earlier"] = member(b"a", PICKLE) + member(b"pickle", type=b"1", link=b"a") + end()
    c["hard_to_later"] = member(b"pickle", type=b"1", link=b"a") + member(b"a", PICKLE) + end()
    c["sym_to_later"] = member(b"pickle", type=b"2", link=b"a") + member(b"a", PICKLE) + end()
    c["sym_loop"] = member(b"pickle", type=b"2", link=b"pickle") + end()
    c["sym_pair_loop"] = (member(b"pickle", type=b"2", link=b"b") +
                          member(b"b", type=b"2", link=b"pickle") + end())
    c["hard_self"] = member(b"pickle", type=b"1", link=b"pickle") + end()
    c["sym_dir_relative"] = (member(b"d/x", PICKLE) + member(b"d/pickle", type=b"2", link=b"x")
                             + member(b"pickle", type=b"2", link=b"d/pickle") + end())
    c["sym_dotdot"] = (member(b"x", PICKLE) + member(b"d/e/s", type=b"2", link=b"../../x") +
                       member(b"pickle", type=b"2", link=b"d/e/s") + end())
    c["sym_absolute"] = member(b"x", PICKLE) + member(b"pickle", type=b"2", link=b"/x") + end()
    c["hard_normalised"] = (member(b"./a//b", PICKLE) +
                            member(b"pickle", type=b"1", link=b"a/./c/../b") + end())
    c["link_to_dir"] = member(b"d", type=b"5") + member(b"pickle", type=b"2", link=b"d") + end()
    c["link_missing"] = member(b"pickle", type=b"1", link=b"nothing") + end()
    c["sym_chain"] = (member(b"a", PICKLE) + member(b"b", type=b"2", link=b"a") +
                      member(b"c", type=b"1", link=b"b") + member(b"pickle", type=b"2", link=b"c")
                      + end())
    c["link_empty_name"] = member(b"", PICKLE) + member(b"pickle", type=b"2", link=b"") + end()
    # duplicates
    c["duplicate_last_wins"] = (member(b"pickle", b"first") + member(b"pickle", PICKLE) +
                                member(b"storages", PICKLE) + member(b"storages", b"x") + end())
    c["duplicate_trailing_slash"] = member(b"pickle", PICKLE) + member(b"pickle/", b"y") + end()
    # pax
    c["pax_path"] = pax([(b"path", b"pickle")]) + member(b"other", PICKLE) + end()
    c["pax_path_slash"] = pax([(b"path", b"pickle///")]) + member(b"x", PICKLE) + end()
    c["pax_sparse_name"] = pax([(b"GNU.sparse.name", b"pickle")]) + member(b"x", PICKLE) + end()
    c["pax_path_then_sparse_name"] = (pax([(b"path", b"a"), (b"GNU.sparse.name", b"pickle"),
                                           (b"path", b"b")]) + member(b"x", PICKLE) + end())
    c["pax_size_bigger"] = (pax([(b"size", b"1030")]) + member(b"pickle", PICKLE) +
                            member(b"hidden", PICKLE) + end())
    c["pax_size_smaller"] = (pax([(b"size", b"0")]) + header(b"pickle", size=1024) +
                             member(b"inner", PICKLE) + end())
    c["pax_size_junk"] = pax([(b"size", b"12abc")]) + member(b"pickle", PICKLE) + end()
    c["pax_size_forms"] = pax([(b"size", b" +0_5\t")]) + member(b"pickle", PICKLE) + end()
    c["pax_linkpath"] = (member(b"a", PICKLE) + pax([(b"linkpath", b"a")]) +
                         member(b"pickle", type=b"2", link=b"zzz") + end())
    c["pax_hdrcharset"] = (pax([(b"hdrcharset", b"BINARY"), (b"path", b"pick\xffle")]) +
                           member(b"x", PICKLE) + end())
    c["pax_global_path"] = (pax([(b"path", b"pickle")], type=b"g") + member(b"a", PICKLE) +
                            member(b"b", b"second") + end())
    c["pax_global_size"] = (pax([(b"size", b"3")], type=b"g") + member(b"a", PICKLE) +
                            member(b"b", PICKLE) + end())
    c["pax_global_size_then_x"] = (pax([(b"size", b"600")], type=b"g") +
                                   pax([(b"mtime", b"1")]) + member(b"a", PICKLE) +
                                   member(b"b", PICKLE) + end())
    c["pax_solaris_X"] = pax([(b"path", b"pickle")], type=b"X") + member(b"x", PICKLE) + end()
    c["pax_bad_length"] = pax([(b"path", b"pickle")]).replace(b"15 path", b"99 path") + end()
    c["pax_no_newline_first"] = (member(b"././@PaxHeader", b"15 path=pickleX", type=b"x") +
                                 member(b"x", PICKLE) + end())
    c["pax_no_newline_later"] = (member(b"ok", PICKLE) +
                                 member(b"././@PaxHeader", b"15 path=pickleX", type=b"x") +
                                 member(b"x", PICKLE) + end())
    c["pax_record_in_padding"] = (member(b"././@PaxHeader", b"", type=b"x")[:BLK] +
                                  pad(b"15 path=pickle\n") + member(b"x", PICKLE) + end())
    c["pax_short_record"] = (member(b"././@PaxHeader", b"4 a\n", type=b"x") +
                             member(b"x", PICKLE) + end())
    c["pax_empty_value"] = pax([(b"path", b"")]) + member(b"pickle", PICKLE) + end()
    c["pax_then_zero"] = pax([(b"path", b"pickle")]) + end()
    c["pax_sparse_map"] = (pax([(b"GNU.sparse.map", b"0,5"), (b"GNU.sparse.name", b"pickle")]) +
                           member(b"x", PICKLE) + end())
    # GNU long names
    c["gnu_longname"] = (member(b"././@LongLink", b"pickle\0", type=b"L") +
                         member(b"x", PICKLE) + end())
    c["gnu_longname_dir_slash"] = (member(b"././@LongLink", b"dd//\0", type=b"L") +
                                   member(b"x", type=b"5") + end())
    c["gnu_longlink"] = (member(b"a", PICKLE) + member(b"././@LongLink", b"a\0", type=b"K") +
                         member(b"pickle", type=b"1", link=b"zzz") + end())
    c["gnu_longname_over_pax"] = (member(b"././@LongLink", b"pickle\0", type=b"L") +
                                  pax([(b"path", b"other")]) + member(b"x", PICKLE) + end())
    c["pax_over_gnu_longname"] = (pax([(b"path", b"pickle")]) +
                                  member(b"././@LongLink", b"other\0", type=b"L") +
                                  member(b"x", PICKLE) + end())
    c["gnu_longlink_over_sparse_name_dir"] = (member(b"././@LongLink", b"t\0", type=b"K") +
                                              pax([(b"GNU.sparse.name", b"d//")]) +
                                              member(b"x", type=b"5") + end())
    c["gnu_longname_no_member"] = member(b"././@LongLink", b"pickle\0", type=b"L") + end()
    c["gnu_longname_last"] = member(b"ok", PICKLE) + member(b"././@LongLink", b"pickle\0",
                                                            type=b"L")
    # V7, prefix, checksums, numbers
    c["v7_no_magic"] = member(b"pickle", PICKLE, magic=b"") + end()
    c["v7_dir_slash"] = member(b"d/", b"", type=b"\0", magic=b"") + end()
    c["v7_prefix_join"] = member(b"pickle", PICKLE, magic=b"", prefix=b"p") + end()
    c["gnu_magic_prefix"] = member(b"pickle", PICKLE, magic=b"ustar  \0", prefix=b"q") + end()
    c["signed_checksum"] = member(b"pickle", PICKLE, uname=b"\xff" * 32, chk="signed") + end()
    c["signed_checksum_later"] = (member(b"a", b"1") + member(b"pickle", PICKLE, uname=b"\xf0" * 32,
                                                              chk="signed") + end())
    c["bad_checksum_first"] = member(b"pickle", PICKLE, chk="bad") + end()
    c["bad_checksum_later"] = member(b"a", PICKLE) + member(b"pickle", PICKLE, chk="bad") + end()
    c["checksum_base256"] = member(b"pickle", PICKLE, chk=b"\x80" + b"\0" * 7) + end()
    c["checksum_octal_prefix"] = member(b"pickle", PICKLE, chk=b"0o00000 ") + end()
    c["size_base256"] = (member(b"pickle", PICKLE, size_field=b"\x80" + b"\0" * 10 + b"\x0e") +
                         end())
    c["size_base256_negative"] = (header(b"d", type=b"5", size_field=b"\xff" * 12) +
                                  member(b"pickle", PICKLE) + end())
    c["size_negative_octal"] = header(b"pickle", size_field=b"-7\0" + b"\0" * 9) + end()
    c["size_octal_prefix"] = member(b"pickle", PICKLE, size_field=b"0o1_6\0" + b"\0" * 6) + end()
    c["size_spaces_tabs"] = member(b"pickle", PICKLE, size_field=b"\t 16 \x0b\0" + b"\0" * 5) + end()
    c["size_hex_invalid"] = member(b"pickle", PICKLE, size_field=b"0x0e\0" + b"\0" * 7) + end()
    c["mode_base256"] = member(b"pickle", PICKLE, mode=b"\x80" + b"\0" * 6 + b"\x01") + end()
    c["mode_invalid"] = member(b"pickle", PICKLE, mode=b"9999999\0") + end()
    c["mode_invalid_later"] = member(b"a", PICKLE) + member(b"pickle", PICKLE,
                                                             mode=b"9\0") + end()
    c["uid_nonascii"] = member(b"pickle", PICKLE, uid=b"\xc3\xa9\0" + b"\0" * 5) + end()
    c["dev_invalid"] = member(b"pickle", PICKLE, dev=b"zz" + b"\0" * 14) + end()
    c["type_dir_with_size"] = (header(b"d", type=b"5", size=1024) + member(b"pickle", PICKLE) +
                               end())
    c["type_fifo_with_size"] = (header(b"f", type=b"6", size=5000) + member(b"pickle", PICKLE) +
                                end())
    # ends
    c["empty_file"] = b""
    c["zero_first"] = end() + member(b"pickle", PICKLE) + end()
    c["zero_between"] = member(b"a", PICKLE) + end() + member(b"pickle", PICKLE) + end()
    c["no_end_blocks"] = member(b"pickle", PICKLE)
    c["missing_padding"] = member(b"pickle", PICKLE)[:BLK + len(PICKLE)]
    c["truncated_header"] = member(b"a", PICKLE) + member(b"pickle", PICKLE)[:300]
    c["short_first"] = member(b"pickle", PICKLE)[:300]
    c["data_past_end"] = header(b"pickle", size=5000) + pad(PICKLE)
    return c


# ---------------------------------------------------------------------------- mutations


def headers_of(data):
    """Offsets of the blocks that look like headers (a plain walk, good enough to mutate)."""
    out = []
    pos = 0
    while pos + BLK <= len(data) and len(out) < 64:
        h = data[pos:pos + BLK]
        if h.count(0) == BLK:
            break
        out.append(pos)
        try:
            size = int(h[124:136].split(b"\0")[0].strip() or b"0", 8)
        except ValueError:
            size = 0
        if h[156:157] in (b"1", b"2", b"3", b"4", b"5", b"6"):
            size = 0
        pos += BLK + (size + BLK - 1) // BLK * BLK
    return out


def mutate(rng, data):
    data = bytearray(data)
    hs = headers_of(bytes(data))
    for _ in range(rng.randint(1, 3)):
        if not hs:
            break
        at = rng.choice(hs)
        op = rng.randrange(12)
        h = bytearray(data[at:at + BLK])
        if len(h) < BLK:
            continue
        if op == 0:
            h[156] = rng.choice(b"0\x0012345679ALKSxgXZ")
        elif op == 1:
            h[257:265] = rng.choice([b"\0" * 8, b"ustar  \0", b"ustar\x0000", b"junkjunk"])
        elif op == 2:
            h[0:100] = rng.choice([b"pickle", b"storages", b"tensors", b"sys_info", b"pickle/",
                                   b"./pickle", b"a/pickle", b"d/"]).ljust(100, b"\0")
        elif op == 3:
            h[157:257] = rng.choice([b"pickle", b"a", b"../a", b"/a", b"d/../a", b""]).ljust(
                100, b"\0")
        elif op == 4:
            i = rng.randrange(BLK)
            h[i] = rng.randrange(256)
        elif op == 5:
            h[124:136] = rng.choice([octal(rng.randrange(0, 3000), 12), b"\x80" + bytes(10) +
                                     bytes([rng.randrange(256)]), b"   17  \0\0\0\0\0",
                                     b"0o17\0\0\0\0\0\0\0\0"])
        elif op == 6:
            h[345:500] = rng.choice([b"", b"p", b"a/b"]).ljust(155, b"\0")
        elif op == 7:
            # raise bytes so that only the signed sum matches
            h[265:297] = bytes([rng.randrange(128, 256)]) * 32
        elif op == 8:
            cut = rng.randrange(0, len(data) + 1)
            del data[cut:]
            hs = [x for x in hs if x + BLK <= len(data)]
            continue
        elif op == 9:
            extra = pax([(rng.choice([b"path", b"size", b"linkpath", b"GNU.sparse.name",
                                      b"mtime", b"hdrcharset"]),
                          rng.choice([b"pickle", b"0", b"600", b"a", b"pickle/", b"x y"]))],
                        type=rng.choice([b"x", b"g"]))
            data[at:at] = extra
            hs = headers_of(bytes(data))
            continue
        elif op == 10:
            dup = bytes(data[at:])
            data.extend(dup[:rng.randrange(len(dup) + 1)])
            continue
        else:
            data[at:at] = member(b"pickle", type=rng.choice([b"1", b"2"]),
                                 link=rng.choice([b"a", b"pickle", b"storages", b"x"]))
            hs = headers_of(bytes(data))
            continue
        if rng.random() < 0.85:
            h = bytearray(set_checksum(h, "signed" if op == 7 and rng.random() < 0.5
                                       else "unsigned"))
        data[at:at + BLK] = h
    return bytes(data)


# ------------------------------------------------------------------------------ reading


def name_hex(s):
    return s.encode("utf-8", "surrogateescape").hex()


class BoundedTarFile(tarfile.TarFile):
    """tarfile as it is, but a listing that runs away (a negative size sends next() back to an
    earlier header forever) stops with an error instead of filling memory."""

    def next(self):
        if len(self.members) > 20000:
            raise RuntimeError("tarfile keeps listing: a loop")
        return super().next()


def python_view(path):
    v = {"opens": False, "load": None, "members": [], "lookup": None, "exc": None}
    f = open(path, "rb")
    try:
        try:
            tf = BoundedTarFile.open(fileobj=f, mode="r:", format=tarfile.PAX_FORMAT)
        except tarfile.TarError:
            return v
        except Exception as e:  # noqa: BLE001 - any other failure of the real reader
            v["exc"] = type(e).__name__
            return v
        v["opens"] = True
        try:
            tf.getmembers()
            v["load"] = "ok"
        except tarfile.TarError:
            v["load"] = "readerror"
        except Exception as e:  # noqa: BLE001
            v["load"] = "exc:" + type(e).__name__
        members = list(tf.members)
        ids = {id(m): i for i, m in enumerate(members)}

        def resolve(m, depth=0):
            if m.isreg() or m.type not in tarfile.SUPPORTED_TYPES:
                return ids[id(m)]
            if m.islnk() or m.issym():
                if depth > 60:
                    return "loop"
                try:
                    t = tf._find_link_target(m)
                except KeyError:
                    return "missing"
                return resolve(t, depth + 1)
            return "none"

        for m in members:
            v["members"].append({
                "name": name_hex(m.name), "link": name_hex(m.linkname),
                "type": m.type[0] if m.type else 0, "offset": m.offset,
                "offset_data": m.offset_data, "size": m.size, "sparse": m.sparse is not None,
                "resolves": resolve(m) if v["load"] == "ok" else None})
        if v["load"] == "ok":
            look = {}
            for n in TORCH_NAMES:
                try:
                    look[n] = ids[id(tf.getmember(n))]
                except KeyError:
                    look[n] = -1
            v["lookup"] = look
    finally:
        f.close()
    return v


FIELDS = ("name", "link", "type", "offset", "offset_data", "size", "sparse")


def member_has_data(m):
    return m["type"] in b"0\x007S" or chr(m["type"]).encode() not in b"0\x00712345S67LK"


def listed(m):
    """What stguard lists: a member without data whose size field is 2^56 or more in magnitude
    (tarfile keeps it, but never reads by it) is listed with size 0."""
    if not member_has_data(m) and abs(m["size"]) >= 1 << 56:
        return dict(m, size=0)
    return m


def same_member(a, b):
    a, b = listed(a), listed(b)
    keys = FIELDS if not (a["sparse"] or b["sparse"]) else ("name", "link", "type", "offset",
                                                             "sparse")
    return all(a[k] == b[k] for k in keys)


def refusable(pm, filesize):
    """A member stguard is allowed to refuse: what tarfile does with it is not modelled."""
    has_data = member_has_data(pm)
    return (pm["sparse"] or pm["size"] < 0 or len(pm["name"]) > 8192 or len(pm["link"]) > 8192
            or (has_data and pm["offset_data"] + pm["size"] > filesize))


def compare(name, path, sg, py):
    """Returns (ok, refused, message)."""
    size = os.path.getsize(path)
    sm = sg["members"]
    pm = py["members"]
    if not py["opens"]:
        if py["exc"] is not None and sg["end"] == "malformed":
            return True, True, None  # tarfile fails with a non-TarError: stguard refuses
        if sg["opens"]:
            return False, False, "tarfile does not open it, stguard does"
        return True, False, None
    if not sg["opens"]:
        return False, False, "tarfile opens it, stguard does not (%s)" % sg["why"]
    prefix_ok = all(same_member(a, b) for a, b in zip(sm, pm))
    if not prefix_ok:
        for i, (a, b) in enumerate(zip(sm, pm)):
            if not same_member(a, b):
                return False, False, "member %d differs: stguard %r, tarfile %r" % (i, a, b)
    if py["load"] == "ok":
        if sg["end"] == "malformed":
            k = len(sm)
            if k < len(pm) and refusable(pm[k], size):
                return True, True, None
            return False, False, "tarfile lists it, stguard refuses at member %d: %s" % (
                k, sg["why"])
        if len(sm) != len(pm):
            return False, False, "%d members for stguard, %d for tarfile" % (len(sm), len(pm))
        for i, (a, b) in enumerate(zip(sm, pm)):
            if a["resolves"] != b["resolves"] and not (b["resolves"] == "loop" and
                                                       a["resolves"] == "loop"):
                return False, False, "member %d resolves to %r for stguard, %r for tarfile" % (
                    i, a["resolves"], b["resolves"])
        if sg["lookup"] != py["lookup"]:
            return False, False, "getmember: stguard %r, tarfile %r" % (sg["lookup"],
                                                                        py["lookup"])
        return True, False, None
    # tarfile raised while listing: stguard must fail too, having listed the same members
    # (tarfile appends the member whose data runs past the end before it raises).
    if sg["end"] != "malformed":
        return False, False, "tarfile fails listing (%s), stguard ends cleanly" % py["load"]
    if len(sm) == len(pm) or (len(sm) == len(pm) - 1 and "past the end" in sg["why"]):
        return True, py["load"] != "readerror", None
    if len(sm) < len(pm) and refusable(pm[len(sm)], size):
        return True, True, None
    return False, False, "tarfile listed %d members before failing, stguard %d (%s)" % (
        len(pm), len(sm), sg["why"])


def main():
    driver, outdir, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 400
    os.makedirs(outdir, exist_ok=True)
    rng = random.Random(seed)
    cases = fixed_cases()
    bases = list(cases.values())
    for i in range(count):
        cases["random_%04d" % i] = mutate(rng, rng.choice(bases))
    paths = {}
    for name, data in cases.items():
        p = os.path.join(outdir, name + ".tar")
        with open(p, "wb") as f:
            f.write(data)
        paths[name] = p
    names = list(cases)
    out = subprocess.run([driver] + [paths[n] for n in names], check=True,
                         stdout=subprocess.PIPE).stdout.decode().splitlines()
    if len(out) != len(names):
        sys.exit("driver printed %d lines for %d files" % (len(out), len(names)))
    bad = refused = opened = 0
    for name, line in zip(names, out):
        sg = json.loads(line)
        py = python_view(paths[name])
        opened += py["opens"]
        ok, ref, msg = compare(name, paths[name], sg, py)
        refused += ref
        if not ok:
            bad += 1
            print("DIFF %s: %s" % (name, msg))
    print("seed %d: %d archives (%d fixed, %d random), %d open for tarfile, %d refused by "
          "stguard, %d disagreements" % (seed, len(names), len(bases), count, opened, refused,
                                          bad))
    # The fixed classes must really be what they claim: a few spot checks on tarfile itself.
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
