#!/usr/bin/env bash
# Text is not a pickle unless a pickle reader would act on it (docs/pickle.md): a protocol-0/1
# GLOBAL or INST whose module or name is no dotted Python name ends the real load before any
# import or call, so such bytes are text. This must open no bypass: for many streams around the
# rule (valid payloads, and names with spaces, CR, tabs, '=', '-', leading digits, empty parts),
# whenever pickle.load under tests/loaders/reach.py reaches the payload, stguard says unsafe.
# Also: everyday text that starts with 'c' or 'i' comes out as text, not unsafe.
# Skips (77) only when Debian's python3 is missing.
set -u
PY=/usr/bin/python3
B=${STGUARD_CLI:?set by ctest}
SRC=${STG_SOURCE_DIR:?set by ctest}
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" - "$tmp" <<'PYEOF' || exit 1
import os, sys
d = sys.argv[1]
mods = ["os", "posix", "os ", " os", "os\r", "o s", "os-x", "0os", "os.", ".os", "os..path",
        "os=1", "os\t", "_os", "os9", "builtins", "subprocess"]
names = ["system", "system ", "sys tem", "system\r", "sys=tem", "9system", "system.", "getoutput",
         "eval"]
n = 0
for m in mods:
    for nm in names:
        for form in ("global", "inst"):
            if form == "global":
                data = b"c" + m.encode() + b"\n" + nm.encode() + b"\n(S'true'\ntR."
            else:
                data = b"(S'true'\ni" + m.encode() + b"\n" + nm.encode() + b"\n."
            with open(os.path.join(d, "p%04d.dat" % n), "wb") as f:
                f.write(data)
            n += 1
texts = {"requirements.txt": "certifi==2024.2.2\ncharset-normalizer==3.3.2\n",
         "config.py": "class Config:\n    hidden = 4\n",
         "conf.yaml": "cuda: true\nbatch: 8\n",
         "CMakeLists.txt": "cmake_minimum_required(VERSION 3.25)\nproject(x C)\n",
         "notes.md": "include this\nand that\n"}
for k, v in texts.items():
    with open(os.path.join(d, k), "w") as f:
        f.write(v)
PYEOF
"$PY" "$SRC/tests/loaders/reach.py" pickle "$tmp"/p*.dat > "$tmp/reach.jsonl"
"$B" scan --no-digest --format json "$tmp" > "$tmp/scan.jsonl"
"$PY" - "$tmp" <<'PYEOF'
import json, os, sys
d = sys.argv[1]
reach = {os.path.basename(r["file"]): r for r in map(json.loads, open(d + "/reach.jsonl"))}
scan = {os.path.basename(r["path"]): r for r in map(json.loads, open(d + "/scan.jsonl"))
        if r["type"] == "file"}
bad, reached, quiet = [], 0, 0
for name, r in reach.items():
    v = scan[name]["verdict"]
    if r["reached"]:
        reached += 1
        if v != "unsafe":
            bad.append("%s reached %r but stguard says %s" % (name, r["globals"], v))
    elif v not in ("unsafe", "invalid"):
        quiet += 1
if reached < 20 or quiet < 20:
    bad.append("the rule was not exercised: %d reached, %d quiet" % (reached, quiet))
# text formats a name decides keep their own label (docs/remote-code.md, docs/yaml.md)
labels = {"config.py": "python_code", "conf.yaml": "yaml"}
for t in ("requirements.txt", "config.py", "conf.yaml", "CMakeLists.txt", "notes.md"):
    if scan[t]["verdict"] != "ok" or scan[t]["format"] != labels.get(t, "text"):
        bad.append("%s: %s %s" % (t, scan[t]["format"], scan[t]["verdict"]))
if bad:
    sys.exit("FAIL:\n" + "\n".join(bad[:20]))
print("%d streams: %d reached (all unsafe), %d not a pickle for the loader and not flagged; "
      "text files ok" % (len(reach), reached, quiet))
PYEOF
