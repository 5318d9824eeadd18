#!/bin/bash
# Benign Flax checkpoints written as flax.serialization writes them (tests/flax/gen_flax.py,
# tests/flax/flaxpack.py cites the source): a BERT-like parameter tree, a training state with
# every leaf kind (numpy scalars, complex, Python values, lists, 0-d and empty arrays, every
# numeric dtype, bfloat16), a shard of 40 layers, and a checkpoint without a name that says
# anything. Each is read back by flax's reader (msgpack.unpackb with its extension hook); stguard
# must call every one ok, format flax-msgpack, with no finding, and exit 0 under --fail-on warning.
# Skips (77) when Debian's python3 cannot import msgpack and numpy.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "msgpack, numpy"
mkdir "$tmp/fx"
"$PY" "$SRC/tests/flax/gen_flax.py" "$tmp/fx" >"$tmp/names" || { echo "FAIL: generator"; exit 1; }
"$STGUARD_CLI" scan --no-digest --fail-on warning --format json "$tmp/fx" >"$tmp/scan.jsonl"
rc=$?
"$PY" - "$tmp/scan.jsonl" "$rc" "$tmp/names" <<'PYEOF'
import json, os, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "file"]
want = set(open(sys.argv[3]).read().split())
bad = []
got = {os.path.basename(r["path"]) for r in recs}
if not want <= got:
    bad.append("files not scanned: %r" % sorted(want - got))
for r in recs:
    if os.path.basename(r["path"]) not in want:
        continue
    if r["verdict"] != "ok" or r["format"] != "flax-msgpack" or r["findings"]:
        bad.append("%s: %s %s %r" % (r["path"], r["verdict"], r["format"],
                                     [(f["code"], f.get("offset")) for f in r["findings"]]))
if int(sys.argv[2]) != 0:
    bad.append("exit status %s" % sys.argv[2])
for b in bad:
    print("FAIL " + b)
print("%d files, %d failures" % (len(want), len(bad)))
sys.exit(1 if bad else 0)
PYEOF
