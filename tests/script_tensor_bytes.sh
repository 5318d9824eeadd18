#!/bin/bash
# Tensor bytes are data, whatever they happen to look like: state dicts of 3,000 small tensors
# each (float32, bfloat16, float16, int8; a fixed seed) written by torch.save. Some storages start
# with a short pickle that imports nothing (")2.", an EXT code before STOP): before the rule of
# docs/pickle.md ("An archive member that no loader unpickles by its name") two of these four
# files were called invalid. Every file must be ok, with pickle_file its only finding. Skips (77)
# when Debian's python3 cannot import torch.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "torch"
"$PY" - "$tmp" <<'PYEOF' || { echo "FAIL: generator"; exit 1; }
import sys, torch
g = torch.Generator().manual_seed(20261202)
for dt in (torch.float32, torch.bfloat16, torch.float16, torch.int8):
    sd = {}
    for i in range(3000):
        if dt == torch.int8:
            t = torch.randint(-128, 128, (8,), generator=g, dtype=torch.int8)
        else:
            t = torch.randn(4, generator=g).to(dt)
        sd["layer.%d.weight" % i] = t
    torch.save(sd, "%s/state_%s.pt" % (sys.argv[1], str(dt).split(".")[1]))
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
