#!/bin/bash
# Tensor bytes are data, whatever they happen to look like: state dicts of 3,000 small tensors
# each (float32, bfloat16, float16, int8; a fixed seed) written by torch.save. Some storages start
# with a short pickle that imports nothing (")2.", an EXT code before STOP): before the rule of
# docs/pickle.md ("An archive member that no loader unpickles by its name") two of these four
# files were called invalid. Every file must be ok, with pickle_file its only finding. The real
# loader reads them the same way: torch.load (under tests/loaders/reach.py's refusing hook)
# imports only the allowed globals of data.pkl, and every tensor it returns equals the one saved,
# so the storages that look like pickles were read as raw bytes. And the Flax msgpack bytes of
# test_containers (EXT1 at offset 0) are refused by pickle.load before any find_class: the EXT
# code is unregistered. Skips (77) when Debian's python3 cannot import torch.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "torch"
cat >"$tmp/gen.py" <<'PYEOF'
import sys, torch
def state_dicts():
    g = torch.Generator().manual_seed(20261202)
    for dt in (torch.float32, torch.bfloat16, torch.float16, torch.int8):
        sd = {}
        for i in range(3000):
            if dt == torch.int8:
                t = torch.randint(-128, 128, (8,), generator=g, dtype=torch.int8)
            else:
                t = torch.randn(4, generator=g).to(dt)
            sd["layer.%d.weight" % i] = t
        yield "state_%s.pt" % str(dt).split(".")[1], sd
if __name__ == "__main__":
    for name, sd in state_dicts():
        torch.save(sd, "%s/%s" % (sys.argv[1], name))
PYEOF
"$PY" "$tmp/gen.py" "$tmp" || { echo "FAIL: generator"; exit 1; }
printf '\x82\xa6params\x81\xa7Dense_0\x82\xa6kernel\xc4\x04\0\0\x80?\xa4bias\xc4\x04\0\0\0\0\xabbatch_stats\x80' \
    >"$tmp/flax_model.msgpack"
# the real loaders' reading
(cd "$tmp" && "$PY" "$SRC/tests/loaders/reach.py" torch state_*.pt &&
    "$PY" "$SRC/tests/loaders/reach.py" pickle flax_model.msgpack) >"$tmp/reach.jsonl" ||
    { echo "FAIL: reach.py"; exit 1; }
(cd "$tmp" && "$PY" - <<'PYEOF') || { echo "FAIL: torch.load does not return the saved tensors"; exit 1; }
import sys, torch
sys.path.insert(0, ".")
from gen import state_dicts
for name, sd in state_dicts():
    got = torch.load(name, weights_only=True)
    assert list(got) == list(sd), name
    for k, t in sd.items():
        assert got[k].dtype == t.dtype and torch.equal(got[k], t), (name, k)
PYEOF
"$PY" - "$tmp/reach.jsonl" <<'PYEOF' || exit 1
import json, sys
bad = []
recs = {r["file"]: r for r in map(json.loads, open(sys.argv[1]))}
for f, r in sorted(recs.items()):
    if r["reached"]:
        bad.append("%s: the real loader reaches a payload" % f)
    if f.endswith(".pt") and r["error"] is not None:
        bad.append("%s: torch.load fails: %s" % (f, r["error"]))
flax = recs.get("flax_model.msgpack")
if flax is None or flax["globals"] or "extension" not in (flax["error"] or ""):
    bad.append("flax_model.msgpack: pickle.load did not refuse it at the EXT code: %r" % flax)
if len(recs) != 5:
    bad.append("%d reach records, not 5" % len(recs))
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PYEOF
"$STGUARD_CLI" scan --no-digest --format json "$tmp"/state_*.pt >"$tmp/scan.jsonl"
rc=$?
"$PY" - "$tmp/scan.jsonl" "$rc" <<'PYEOF'
import json, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "file"]
bad = []
if len(recs) != 4:
    bad.append("%d scan records, not 4" % len(recs))
for r in recs:
    codes = sorted({f["code"] for f in r["findings"]})
    if r["verdict"] != "ok" or codes != ["pickle_file"]:
        bad.append("%s: %s %r" % (r["path"], r["verdict"], [(f["code"], f.get("member")) for f in r["findings"]]))
if int(sys.argv[2]) != 0:
    bad.append("exit status %s" % sys.argv[2])
for b in bad:
    print("FAIL " + b)
print("%d files, %d failures" % (len(recs), len(bad)))
sys.exit(1 if bad else 0)
PYEOF
