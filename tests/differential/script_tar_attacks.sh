#!/bin/bash
# Files torch.load reads as a PyTorch 0.1 tar where a simpler tar reader sees something else
# (tests/differential/gen_tar_attacks.py: unknown type flags, links, pax path/size/GNU.sparse.name/global
# records, duplicate names, V7 headers, signed checksums, safetensors/.npy/GGUF files that are
# also tars, an empty zip end record at byte 0 that is also a tar's first header). Each evil_*
# file must be reached by the real torch.load (tests/loaders/reach.py:
# the loader runs under a refusing audit hook, nothing executes) and must come out unsafe; the
# polyglots must carry polyglot_tar; the benign_* near misses must not be unsafe and the plain
# safetensors file must carry no polyglot_tar. Skips (77) when Debian's python3 cannot import
# torch or the CLI is absent.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "torch"
"$PY" "$SRC/tests/differential/gen_tar_attacks.py" "$tmp/fx" || { echo "FAIL: generator"; exit 1; }
"$PY" "$SRC/tests/loaders/reach.py" torch "$tmp"/fx/* >"$tmp/reach.jsonl" 2>"$tmp/reach.err" ||
    { echo "FAIL: reach.py"; cat "$tmp/reach.err"; exit 1; }
fail=0
for f in "$tmp"/fx/*; do
    "$STGUARD_CLI" scan --no-digest --format json "$f" >"$tmp/out.json" 2>/dev/null
    if ! "$PY" - "$f" "$tmp/out.json" "$tmp/reach.jsonl" <<'PYEOF'
import json, os, sys
path, out, reach = sys.argv[1:4]
name = os.path.basename(path)
files = [r for r in map(json.loads, filter(str.strip, open(out))) if r.get("type") == "file"]
if len(files) != 1:
    sys.exit("%s: expected one file record" % name)
r = files[0]
codes = {f["code"] for f in r["findings"]}
reached = {os.path.basename(x["file"]): x["reached"] for x in map(json.loads, open(reach))}
def fail(msg):
    sys.exit("%s: %s (verdict %s, codes %s)" % (name, msg, r["verdict"], sorted(codes)))
if name.startswith("evil"):
    if reached.get(name) is not True:
        fail("torch.load does not reach the payload: the fixture proves nothing")
    if r["verdict"] != "unsafe":
        fail("reached by torch.load but not unsafe")
    if "pickle_global_dangerous" not in codes:
        fail("the payload global is not reported")
    if name.split(".")[0] in ("evil_safetensors_tar", "evil_npy_tar", "evil_gguf_tar",
                              "evil_zip_end_tar") and \
            "polyglot_tar" not in codes:
        fail("no polyglot_tar")
else:
    if reached.get(name) is not False:
        fail("a benign file reaches a payload")
    if r["verdict"] == "unsafe" or "polyglot_tar" in codes:
        fail("benign file flagged")
print("ok %s: %s %s" % (name, r["verdict"], sorted(codes)))
PYEOF
    then
        fail=1
    fi
done
exit $fail
