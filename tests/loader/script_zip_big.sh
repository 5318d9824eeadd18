#!/bin/bash
# A torch-zip larger than max_inflate_bytes (4 GiB): a pickle member and one stored 4.5 GiB
# storage member (ZIP64), written with a hole so it takes no disk. Zips are read in windows
# (loader/zip_window.c): the storage is never read as bytes, so the scan holds a few pages and
# ends with the pickle's verdict (ok, torch-zip: pickle_file is info, its pickle names no global
# off the built-in allowlist), not limit_exceeded. --no-digest: the digest
# would read the 4.5 GiB hole. Skips (77) when the file system cannot hold a sparse file of that
# size (the scan must not read 4.5 GiB of real disk in ctest).
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "zlib"

big=$tmp/model.pt
"$PY" - "$big" <<'PYEOF' || { echo "FAIL: generator"; exit 1; }
import pickle, struct, sys, zlib

path = sys.argv[1]
members = [("archive/data.pkl", pickle.dumps({"w": 1}, protocol=2), None),
           ("archive/version", b"3\n", None),
           ("archive/data/0", None, 4608 << 20)]  # 4.5 GiB of zeros (a hole)
central = b""
with open(path, "wb") as f:
    for name, data, hole in members:
        nb = name.encode()
        size = len(data) if data is not None else hole
        crc = zlib.crc32(data) if data is not None else 0
        offset = f.tell()
        # ZIP64 extra in both headers: uncompressed and compressed sizes (and the offset)
        extra_l = struct.pack("<HHQQ", 1, 16, size, size)
        f.write(struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0, crc,
                            0xFFFFFFFF, 0xFFFFFFFF, len(nb), len(extra_l)) + nb + extra_l)
        if data is not None:
            f.write(data)
        else:
            f.seek(size, 1)
        extra_c = struct.pack("<HHQQQ", 1, 24, size, size, offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(nb), len(extra_c), 0, 0, 0, 0,
                               0xFFFFFFFF) + nb + extra_c
    cd_start = f.tell()
    f.write(central)
    rec = f.tell()
    n = len(members)
    f.write(struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, len(central),
                        cd_start))
    f.write(struct.pack("<IIQI", 0x07064b50, 0, rec, 1))
    f.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                        0xFFFFFFFF, 0))
PYEOF

size=$(stat -c %s "$big")
blocks=$(du -k "$big" | cut -f1)
if [ "$size" -le $((4 << 30)) ]; then
    echo "FAIL: the file has $size bytes, not more than 4 GiB"
    exit 1
fi
if [ "$blocks" -gt $((64 * 1024)) ]; then
    echo "skip: $tmp does not keep holes (the file takes $blocks KiB)"
    exit 77
fi

start=$(date +%s%N)
out=$("$STGUARD_CLI" scan --format json --no-digest "$big")
status=$?
end=$(date +%s%N)
echo "$out"
echo "scan of $size bytes: $(((end - start) / 1000000)) ms, exit $status"
fail=0
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status (an ok verdict exits 0)"; fail=1; }
echo "$out" | grep -q '"format":"torch-zip"' || { echo "FAIL: not torch-zip"; fail=1; }
echo "$out" | grep -q '"verdict":"ok"' || { echo "FAIL: verdict is not ok"; fail=1; }
echo "$out" | grep -q 'limit_exceeded' && { echo "FAIL: limit_exceeded"; fail=1; }
echo "$out" | grep -q '"code":"pickle_file","severity":"info"' ||
    { echo "FAIL: the pickle member was not scanned"; fail=1; }

# Near miss: the same archive read whole needs more than max_inflate_bytes. A storage member
# named *.pkl must be read as bytes, so the windows need all of it: limit_exceeded, as before.
"$PY" - "$big" <<'PYEOF' || { echo "FAIL: rename"; exit 1; }
import sys
path = sys.argv[1]
with open(path, "r+b") as f:
    f.seek(0, 2)
    end = f.tell()
    f.seek(end - 200000 if end > 200000 else 0)
    tail = f.read()
    at = tail.rfind(b"archive/data/0")
    assert at >= 0
    f.seek(end - len(tail) + at)
    f.write(b"archive/da.pkl")  # the central name, same length, now says pickle
PYEOF
out=$("$STGUARD_CLI" scan --format json --no-digest "$big")
echo "$out" | grep -q 'max_inflate_bytes' || { echo "FAIL: a pickle member of 4.5 GiB is not limit_exceeded"; echo "$out"; fail=1; }
exit $fail
