#!/bin/bash
# File races through the CLI: files of every format (safetensors, zip, pickle, tar, gzip, npy,
# an index with its shard) are truncated, extended and replaced by another process while
# `stguard scan -j2` scans their folder in a loop. Every run must end with exit status 0, 1
# or 3 (a verdict, or an error such as file_changed/io_error), never a signal (exit >= 128,
# e.g. 135 for SIGBUS). tests/loader/test_file_races.c does the same through the library.
set -u
PY=/usr/bin/python3
if [ -z "${STGUARD_CLI:-}" ] || [ ! -x "$STGUARD_CLI" ]; then
    echo "FAIL: no CLI binary (STGUARD_CLI)"
    exit 1
fi
if [ ! -x "$PY" ]; then
    echo "skip: no $PY"
    exit 77
fi
tmp=$(mktemp -d)
mutator=
cleanup() {
    if [ -n "$mutator" ]; then
        kill "$mutator" 2>/dev/null
        wait "$mutator" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/fx" "$tmp/orig"

# Fixtures (Python's standard library only), written to orig/ and copied to fx/.
"$PY" - "$tmp/orig" <<'PYEOF' || { echo "FAIL: generator"; exit 1; }
import gzip, io, json, os, pickle, struct, sys, tarfile, zipfile
out = sys.argv[1]
def put(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
def st(n):
    hdr = json.dumps({"t": {"dtype": "U8", "shape": [n], "data_offsets": [0, n]}}).encode()
    hdr += b" " * (-len(hdr) % 8)
    return struct.pack("<Q", len(hdr)) + hdr + bytes(i % 251 for i in range(n))
put("model.safetensors", st(1 << 21))
put("model-00001-of-00001.safetensors", st(1 << 20))
put("model.safetensors.index.json",
    json.dumps({"metadata": {}, "weight_map": {"t": "model-00001-of-00001.safetensors"}}).encode())
obj = {"w": b"x" * 400000, "n": list(range(1000))}
blob = pickle.dumps(obj, protocol=2)
put("model.pkl", blob)
z = io.BytesIO()
with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as zf:
    zf.writestr("archive/data.pkl", pickle.dumps({"a": 1}, protocol=2))
    zf.writestr("archive/data/0", b"\x11" * (1 << 20))
put("model.pt", z.getvalue())
t = io.BytesIO()
with tarfile.open(fileobj=t, mode="w", format=tarfile.USTAR_FORMAT) as tf:
    info = tarfile.TarInfo("model.pkl")
    info.size = len(blob)
    tf.addfile(info, io.BytesIO(blob))
put("model.tar", t.getvalue())
put("model.pkl.gz", gzip.compress(blob))
d = "{'descr': '|u1', 'fortran_order': False, 'shape': (500000,), }"
d += " " * (-(10 + len(d) + 1) % 64) + "\n"
put("model.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + b"\x22" * 500000)
PYEOF
cp "$tmp"/orig/* "$tmp/fx/"

# The mutator: another process that cuts, extends, rewrites and replaces every file in turn.
"$PY" - "$tmp/orig" "$tmp/fx" <<'PYEOF' &
import os, sys, time
orig, fx = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(orig))
data = {n: open(os.path.join(orig, n), "rb").read() for n in names}
i = 0
while True:
    for n in names:
        p = os.path.join(fx, n)
        i += 1
        try:
            with open(p, "r+b") as f:
                f.truncate(len(data[n]) // (2 + i % 5))
                time.sleep(0.0002)
                f.truncate(0)
                f.write(data[n])
                f.write(b"\0" * 4096)
                f.truncate(len(data[n]))
            other = data[names[i % len(names)]]
            with open(p + ".new", "wb") as f:
                f.write(other)
            os.rename(p + ".new", p)
            with open(p + ".new", "wb") as f:
                f.write(data[n])
            os.rename(p + ".new", p)
        except OSError:
            pass
PYEOF
mutator=$!

fail=0
runs=0
end=$((SECONDS + 4))
while [ "$SECONDS" -lt "$end" ]; do
    "$STGUARD_CLI" scan -j2 --format json "$tmp/fx" >"$tmp/out.jsonl" 2>"$tmp/err.txt"
    rc=$?
    runs=$((runs + 1))
    if [ "$rc" -gt 3 ]; then
        echo "FAIL: run $runs ended with exit status $rc (a signal or a crash)"
        head -5 "$tmp/err.txt"
        fail=1
        break
    fi
    # every record has a verdict; an error verdict names the file problem
    if ! "$PY" - "$tmp/out.jsonl" <<'PYEOF'
import json, sys
ok = True
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if rec.get("type", "file") != "file":
        continue
    v = rec.get("verdict")
    if v not in ("ok", "warn", "invalid", "unsafe", "error"):
        print("FAIL: record without a verdict:", line.strip()[:200]); ok = False
    codes = {f.get("code") for f in rec.get("findings", [])}
    if v == "error" and not codes & {"file_changed", "io_error"}:
        print("FAIL: error verdict without file_changed/io_error:", line.strip()[:300]); ok = False
sys.exit(0 if ok else 1)
PYEOF
    then
        fail=1
        break
    fi
done
kill "$mutator" 2>/dev/null
wait "$mutator" 2>/dev/null
mutator=
echo "$runs CLI runs while the files changed"
if [ "$runs" -lt 2 ]; then
    echo "FAIL: too few runs to mean anything"
    fail=1
fi
# Once the files are back, the folder scans without a file problem.
cp "$tmp"/orig/* "$tmp/fx/"
"$STGUARD_CLI" scan -j2 --format json "$tmp/fx" >"$tmp/out.jsonl" 2>"$tmp/err.txt"
rc=$?
if [ "$rc" -gt 1 ] || grep -q '"file_changed"\|"io_error"' "$tmp/out.jsonl"; then
    echo "FAIL: the restored files do not scan cleanly (exit $rc)"
    fail=1
fi
exit $fail
