#!/bin/bash
# Real framework outputs through the CLI: files torch.save (legacy and zip formats), joblib.dump
# and numpy.save write right now must never come out unsafe or invalid; torch.save of an object
# whose __reduce__ calls os.system must come out unsafe. Skips (77) when Debian's python3 cannot
# import torch, numpy and joblib. Fixtures: tests/gen_torch_fixtures.py.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "torch, numpy, joblib"
seed=$((RANDOM % 1000))
echo "seed $seed"
"$PY" "$SRC/tests/gen_torch_fixtures.py" "$tmp/fx" "$seed" || { echo "FAIL: generator"; exit 1; }

fail=0
for f in "$tmp"/fx/*; do
    "$STGUARD_CLI" scan --no-digest --format json "$f" >"$tmp/out.json" 2>"$tmp/err.txt"
    rc=$?
    if ! "$PY" - "$f" "$rc" "$tmp/out.json" <<'PYEOF'
import json, os, sys
path, rc, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
name = os.path.basename(path)
rec = [json.loads(l) for l in open(out) if l.strip()]
files = [r for r in rec if r.get("type") == "file"]
if len(files) != 1:
    sys.exit("%s: expected one file record, got %r" % (name, rec))
r = files[0]
codes = [(f["code"], f["severity"], f.get("global")) for f in r["findings"]]
globs = {(g["module"], g["name"]): g["class"] for g in r.get("globals", [])}
def fail(msg):
    sys.exit("%s: %s (verdict %s, findings %r)" % (name, msg, r["verdict"], codes))
if name.startswith("evil"):
    if r["verdict"] != "unsafe" or rc != 1:
        fail("malicious file not unsafe")
    if not any(c == "pickle_global_dangerous" and g and g.endswith(".system") for c, _, g in codes):
        fail("os.system not reported dangerous")
    sys.exit(0)
if r["verdict"] not in ("ok", "warn") or rc != 0:
    fail("benign file flagged")
bad = [c for c in codes if c[1] in ("error", "critical")]
if bad:
    fail("error/critical findings on a benign file")
expect = {
    "module.legacy.pt": [("torch.nn.modules.linear", "Linear", "benign"),
                         ("torch.nn.modules.container", "Sequential", "benign")],
    "object.npy": [("numpy.core.multiarray", "_reconstruct", "allowed")],
    "object.joblib": [("joblib.numpy_pickle", "NumpyArrayWrapper", "allowed")],
    "dict.joblib": [("joblib.numpy_pickle", "NumpyArrayWrapper", "allowed")],
    "checkpoint.legacy.pt": [("torch._utils", "_rebuild_tensor_v2", "allowed"),
                             ("collections", "OrderedDict", "allowed")],
    "bf16_param.legacy.pt": [("torch._utils", "_rebuild_parameter", "allowed"),
                             ("torch", "BFloat16Storage", "allowed")],
}
for m, n, cls in expect.get(name, []):
    if globs.get((m, n)) != cls:
        fail("global %s.%s not listed as %s: %r" % (m, n, cls, globs))
if name.endswith(".pt") or name.endswith(".pkl") or name.endswith(".joblib"):
    if not globs:
        fail("no globals listed for a pickle-based file")
PYEOF
    then
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "all fixtures as expected"
exit $fail
