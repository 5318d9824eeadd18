"""GGUF: stguard's reading against ggml's own reader (gguf_init_from_file, through
tests/loaders/ggml_gguf_probe.c), on the fixtures tests/fixtures/gen_gguf.py writes and seeded
mutations of the valid ones (bytes changed, 64-bit fields overwritten with edge values, cuts).

Checked, in the compat profile (docs/gguf.md: what ggml accepts, except where ggml is wrong):
- a file stguard reads as GGUF and calls ok or warn is one ggml reads, and both read the same
  version, alignment, data start and tensors (name, type, dimensions, byte range): a file
  stguard passes must not mean something else to the loader;
- a file ggml reads is one stguard reads as GGUF (not another format, not unknown).
Files that are GGUF to neither (a broken magic, a cut to nothing) make no claim.
Files ggml reads and stguard refuses are listed by stguard's finding codes: stguard is stricter
there (its documented deviations, e.g. dimensions whose element count wraps in ggml).
Usage: gguf_ggml_differential.py PROBE STGUARD_CLI GEN_GGUF WORK_DIR SEED COUNT
"""
import json
import os
import random
import struct
import subprocess
import sys


def run_probe(probe, files):
    """One process per file: ggml aborts on some inputs (GGML_ASSERT), which is a refusal."""
    out = {}
    for f in files:
        res = subprocess.run([probe, f], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        lines = res.stdout.decode("utf-8", "replace").splitlines()
        out[f] = json.loads(lines[0]) if res.returncode == 0 and lines else {
            "file": f, "ok": False, "aborted": True}
    return out


def run_stguard(cli, files, command):
    out = {}
    for f in files:
        if True:
            if command == "scan":
                res = subprocess.run([cli, "scan", "--format", "json", "--no-digest",
                                      "--profile", "compat", f], capture_output=True, text=True)
                rec = [json.loads(x) for x in res.stdout.splitlines()
                       if json.loads(x).get("type") == "file"][0]
            else:
                res = subprocess.run([cli, "inspect", "--format", "json", "--profile", "compat",
                                      f], capture_output=True, text=True)
                rec = json.loads(res.stdout) if res.returncode == 0 else None
            out[f] = rec
    return out


EDGE = [0, 1, 2, 31, 32, 33, 255, 256, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**63,
        2**64 - 1, 2**64 - 32]


def mutate(data, rng):
    b = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:  # a 64-bit field (counts, lengths, dimensions, offsets) to an edge value
        at = rng.randrange(0, max(1, len(b) - 8))
        b[at:at + 8] = struct.pack("<Q", rng.choice(EDGE))
    elif kind == 1:  # a 32-bit field (types, n_dims, version)
        at = rng.randrange(0, max(1, len(b) - 4))
        b[at:at + 4] = struct.pack("<I", rng.choice([0, 1, 2, 3, 4, 5, 12, 13, 39, 43, 255,
                                                     2**31, 2**32 - 1]))
    elif kind == 2:  # a few bytes
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    else:  # a cut
        del b[rng.randrange(len(b)):]
    return bytes(b)


def padded(ne):
    """Dimensions as ggml holds them: GGML_MAX_DIMS (4) entries, the missing ones 1."""
    return list(ne) + [1] * (4 - len(ne))


def name_as_text(name):
    """The probe writes bytes; stguard's JSON writes invalid UTF-8 as U+FFFD."""
    return name.encode("latin-1").decode("utf-8", "replace")


def same_reading(g, s):
    if g["version"] != s["version"] or g["alignment"] != s["alignment"]:
        return "version or alignment"
    if g["data_offset"] != s["data_start"]:
        return "data start %d vs %d" % (g["data_offset"], s["data_start"])
    if len(g["tensors"]) != len(s["tensors"]):
        return "tensor count"
    for a, b in zip(g["tensors"], s["tensors"]):
        if (name_as_text(a["name"]), a["type"].lower(), padded(a["ne"]), a["begin"],
                a["end"]) != (b["name"], b["dtype"].lower(), padded(b["shape"]), b["begin"],
                              b["end"]):
            return "tensor %r: ggml %r, stguard %r" % (a["name"], a, b)
    return None


def main():
    probe, cli, gen, work, seed, count = sys.argv[1:7]
    seed, count = int(seed), int(count)
    fx = os.path.join(work, "fixtures")
    os.makedirs(fx, exist_ok=True)
    subprocess.run([sys.executable, gen, fx], check=True, stdout=subprocess.DEVNULL)
    files = sorted(os.path.join(fx, f) for f in os.listdir(fx) if f.endswith(".gguf"))
    valid = [f for f in files if os.path.basename(f).startswith("ok-")]
    rng = random.Random(seed)
    mut = os.path.join(work, "mutated")
    os.makedirs(mut, exist_ok=True)
    for i in range(count):
        src = rng.choice(valid)
        path = os.path.join(mut, "m%05d-%s" % (i, os.path.basename(src)))
        with open(src, "rb") as f:
            data = mutate(f.read(), rng)
        with open(path, "wb") as f:
            f.write(data)
        files.append(path)
    ggml = run_probe(probe, files)
    scans = run_stguard(cli, files, "scan")
    passed = [f for f in files if scans[f]["verdict"] in ("ok", "warn")]
    views = run_stguard(cli, passed, "inspect")
    fail = 0
    stricter = {}
    for f in files:
        g, s = ggml[f], scans[f]
        gguf = s["format"] == "gguf"
        passes = s["verdict"] in ("ok", "warn")
        if not g["ok"]:
            if gguf and passes:  # not GGUF for ggml (bad magic, empty): no claim either way
                print("FAIL: %s: stguard %s, ggml refuses it" % (f, s["verdict"]))
                fail = 1
        elif not gguf:
            print("FAIL: %s: ggml reads it, stguard calls it %s" % (f, s["format"]))
            fail = 1
        elif passes:
            why = same_reading(g, views[f]) if views[f] is not None else "inspect refused it"
            if why is not None:
                print("FAIL: %s: readings differ: %s" % (f, why))
                fail = 1
        else:
            codes = ",".join(sorted({x["code"] for x in s["findings"]
                                     if x["severity"] == "error"}))
            stricter.setdefault(codes, []).append(os.path.basename(f))
    n_ok = sum(1 for f in files if ggml[f]["ok"])
    print("%d files (%d fixtures, %d mutations, seed %d): ggml reads %d, stguard passes %d"
          % (len(files), len(files) - count, count, seed, n_ok, len(passed)))
    for codes, names in sorted(stricter.items()):
        print("  stguard stricter (%s): %d, e.g. %s" % (codes or "-", len(names), names[0]))
    return fail


if __name__ == "__main__":
    sys.exit(main())
