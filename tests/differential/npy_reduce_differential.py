"""numpy.dtype reduce strings: stguard's reading (parser/npy_reduce, through npy_probe --reduce)
against numpy's own, as the unpickler calls it (numpy.dtype(typestr, False, True)).

joblib's NumpyArrayWrapper pickles are followed by the raw array bytes; stguard skips
count x itemsize of them, with itemsize read from the dtype's reduce string. A string stguard
reads with a different size than numpy would make it skip the wrong bytes, so:
- whenever stguard understands a string (a fixed kind with its size, an object, or a flexible
  S/U/V kind with its count) and numpy accepts it, both give the same item size and the same
  "holds objects" answer, and numpy does not treat a fixed reading as resizable by the state;
- every reduce string numpy itself writes for its built-in types is understood (a benign file
  is never walked as if its array bytes were a pickle).
Strings numpy accepts and stguard does not understand are counted: their bytes are walked and
fail closed, which is safe. Usage: npy_reduce_differential.py PROBE SEED COUNT
"""
import json
import random
import subprocess
import sys
import warnings

import numpy as np

FIXED_KINDS = "biufcMmO"
FLEXIBLE_KINDS = "SUV"


def numpy_reading(raw):
    """(itemsize, hasobject, flexible) as numpy reads raw, or None when numpy refuses it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for arg in (raw.decode("latin-1"), raw):
            try:
                d = np.dtype(arg, False, True)
            except Exception:
                continue
            flexible = d.kind in FLEXIBLE_KINDS and d.names is None and d.subdtype is None
            return d.itemsize, d.hasobject, flexible
    return None


def candidates(rng, count):
    out = set()
    numbers = [str(i) for i in range(0, 41)] + ["64", "128", "256", "007", "08", "016",
                                                 "0", "00", "99999999999", "4294967296",
                                                 "9223372036854775808", "-1", "+1", " 1", "1 "]
    for kind in FIXED_KINDS + FLEXIBLE_KINDS + "aglGqQhHLepd?<>=|":
        out.add(kind)
        for n in numbers:
            out.add(kind + n)
    for prefix in "<>=|":
        for kind in FIXED_KINDS + FLEXIBLE_KINDS:
            for n in ("1", "2", "4", "8", "16"):
                out.add(prefix + kind + n)
    alphabet = FIXED_KINDS + FLEXIBLE_KINDS + "0123456789[]<>|=, afgx\x00\xff"
    while len(out) < count + 600:
        n = rng.randint(1, 8)
        out.add("".join(rng.choice(alphabet) for _ in range(n)))
    return sorted(s.encode("latin-1") for s in out)


def numpy_written():
    """Reduce strings numpy writes for its built-in types and flexible sizes."""
    types = set(np.sctypeDict.values())
    dtypes = [np.dtype(t) for t in types if t not in (np.str_, np.bytes_, np.void)]
    dtypes += [np.dtype(k + str(n)) for k in "SUV" for n in (0, 1, 7, 64, 4096)]
    dtypes += [np.dtype("M8[ns]"), np.dtype("m8[D]"), np.dtype([("a", "<i4"), ("b", "S3")]),
               np.dtype(("f4", (2, 3)))]
    return sorted({d.__reduce__()[1][0].encode() for d in dtypes})


def probe(path, strings):
    out = []
    for i in range(0, len(strings), 500):
        part = strings[i:i + 500]
        res = subprocess.run([path, "--reduce"] + [s.hex() for s in part], check=True,
                             capture_output=True, text=True)
        out += [json.loads(line) for line in res.stdout.splitlines()]
    return out


def main():
    probe_path, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    strings = candidates(rng, count)
    readings = probe(probe_path, strings)
    fail = 0
    unread = 0
    for raw, st in zip(strings, readings):
        ref = numpy_reading(raw)
        if st["fixed"] or st["flexible"]:
            if ref is None:
                continue  # numpy refuses: the load fails before any array byte is read
            itemsize, hasobject, flexible = ref
            if st["fixed"] and st["object"]:
                ok = hasobject
            elif st["fixed"]:
                ok = not hasobject and not flexible and itemsize == st["itemsize"]
            elif st["kind"] == "V":
                ok = not hasobject  # stguard takes a void type's size from its state only
            else:
                per = 4 if st["kind"] == "U" else 1
                ok = not hasobject and flexible and itemsize == st["count"] * per
            if not ok:
                print("FAIL: %r: stguard %s, numpy itemsize %d hasobject %s flexible %s"
                      % (raw, st, itemsize, hasobject, flexible))
                fail = 1
        elif ref is not None:
            unread += 1
    written = numpy_written()
    for raw, st in zip(written, probe(probe_path, written)):
        if not (st["fixed"] or st["flexible"]):
            print("FAIL: numpy writes %r for a built-in type and stguard does not read it" % raw)
            fail = 1
    print("%d strings (seed %d), %d numpy writes; %d numpy accepts that stguard leaves to the "
          "walk" % (len(strings), seed, len(written), unread))
    return fail


if __name__ == "__main__":
    sys.exit(main())
