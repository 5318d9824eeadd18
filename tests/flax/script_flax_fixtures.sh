#!/bin/bash
# Benign Flax checkpoints written as flax.serialization writes them (tests/flax/gen_flax.py,
# tests/flax/flaxpack.py cites the source): a BERT-like parameter tree, a training state with
# every leaf kind (numpy scalars, complex, Python values, lists, 0-d and empty arrays, every
# numeric dtype, bfloat16), a shard of 40 layers, and a checkpoint without a name that says
# anything. Each is read back by flax's reader (msgpack.unpackb with its extension hook); stguard
# must call every one ok, format flax-msgpack, with no finding, and exit 0 under --fail-on warning.
# `stguard inspect --format json` of each validates against docs/cli.schema.json and lists the
# same array leaves (name, dtype, shape, bytes) as flax's reader returns, in file order.
# Skips (77) when Debian's python3 cannot import msgpack, numpy and jsonschema.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "msgpack, numpy, jsonschema"
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
[ $? -eq 0 ] || exit 1
for f in $(cat "$tmp/names"); do
    "$STGUARD_CLI" inspect --format json "$tmp/fx/$f" >"$tmp/$f.inspect.json" ||
        { echo "FAIL: inspect $f exits $?"; exit 1; }
done
"$PY" - "$SRC" "$tmp" <<'PYEOF'
import json, os, sys
import jsonschema
import numpy as np
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "flax"))
import flaxpack
schema = json.load(open(os.path.join(sys.argv[1], "docs", "cli.schema.json")))
tmp = sys.argv[2]
bad = []
for name in open(os.path.join(tmp, "names")).read().split():
    rec = json.load(open(os.path.join(tmp, name + ".inspect.json")))
    try:
        jsonschema.validate(rec, schema)
    except jsonschema.ValidationError as e:
        bad.append("%s: inspect record fails the schema: %s" % (name, e.message))
    tree = flaxpack.restore(open(os.path.join(tmp, "fx", name), "rb").read())
    def walk(t, path=()):
        if isinstance(t, dict):
            for k, v in t.items():
                yield from walk(v, path + (k,))
        elif isinstance(t, list):
            for i, v in enumerate(t):
                yield from walk(v, path + (str(i),))
        elif isinstance(t, tuple) and len(t) == 3 and t[0] in ("array", "scalar"):
            a = np.asarray(t[2])
            yield ["/".join(path), t[1].decode(), list(a.shape), a.nbytes]
    want = list(walk(tree))
    got = [[t["name"], t["dtype"], t["shape"], t["bytes"]] for t in rec["tensors"]]
    if got != want:
        bad.append("%s: inspect lists %r, the reader %r" % (name, got[:3], want[:3]))
    if rec["parameters"] != sum(int(np.prod(w[2])) for w in want):
        bad.append("%s: parameters %r" % (name, rec["parameters"]))
for b in bad:
    print("FAIL " + b)
print("inspect: %d failures" % len(bad))
sys.exit(1 if bad else 0)
PYEOF
