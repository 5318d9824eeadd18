#!/usr/bin/env bash
# The polyglot-pickle probe's newline rule against the real unpicklers (loader/window.c,
# docs/loaders.md): a safetensors file whose header length starts 0x56 (UNICODE, a text line)
# and whose data holds no '\n' is no pickle to CPython's C unpickler (pickle.load: "pickle data
# was truncated") nor to the Python one (pickle._Unpickler, as joblib uses: EOFError), and
# stguard finds no polyglot pickle in it; the near miss, the same file ending in "\n." (STOP),
# is loaded by both as a string and stguard reports polyglot_pickle. Skips (77) only without
# Debian's python3.
set -u
PY=/usr/bin/python3
B=${STGUARD_CLI:?set by ctest}
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" - "$tmp" <<'PYEOF' || exit 1
import io, pickle, struct, sys
d = sys.argv[1]
n = 0x56 + 256  # the length's first byte is 0x56: UNICODE
head = b'{"w":{"dtype":"U8","shape":[4096],"data_offsets":[0,4096]}}'
for name, data in (("free", b"\x3f" * 4096), ("ends", b"\x3f" * 4094 + b"\n.")):
    blob = struct.pack("<Q", n) + head + b" " * (n - len(head)) + data
    open("%s/%s.safetensors" % (d, name), "wb").write(blob)
    for reader, load in (("C", pickle.load), ("Python", lambda f: pickle._Unpickler(f).load())):
        try:
            load(io.BytesIO(blob))
            loaded = True
        except Exception:
            loaded = False
        if loaded != (name == "ends"):
            sys.exit("FAIL: the %s unpickler %s %s" % (reader, "loads" if loaded else "refuses", name))
PYEOF
"$B" scan -v --no-digest "$tmp/free.safetensors" "$tmp/ends.safetensors" >"$tmp/out.txt" 2>&1
# the finding lines of one file's record (indented, under its path line)
record() { awk -v f="$1" '/^[^ ]/ { on = index($0, f ":") == 1 } on && /^  / { print }' "$tmp/out.txt"; }
fail=0
record "$tmp/free.safetensors" | grep -q polyglot_pickle && fail=1
record "$tmp/ends.safetensors" | grep -q polyglot_pickle || fail=1
if [ $fail -ne 0 ]; then
    echo "FAIL: stguard's polyglot verdicts differ from the unpicklers'"; cat "$tmp/out.txt"; exit 1
fi
echo PASS
