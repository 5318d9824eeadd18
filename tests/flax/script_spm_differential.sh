#!/bin/bash
# stguard's SentencePiece rules against SentencePieceProcessor.Load (Debian's
# python3-sentencepiece) over 600 seeded mutations of a model its trainer wrote (byte changes in
# the piece table, cuts, inserted bytes): where stguard reports tokenizer_malformed (or any
# other finding), the processor refuses the model too: no false alarm on a model that loads.
# (The other way round is not claimed: the processor also checks the normalizer's character map
# and the trainer spec, which stguard does not read; docs/tokenizers.md.) Skips (77) without
# sentencepiece.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "sentencepiece, msgpack, numpy"
mkdir "$tmp/ok" "$tmp/m"
"$PY" "$SRC/tests/flax/gen_tokenizers.py" "$tmp/ok" >/dev/null || { echo "FAIL: generator"; exit 1; }
"$PY" - "$tmp/ok/spiece.model" "$tmp/m" <<'PYEOF' || { echo "FAIL: mutants"; exit 1; }
import os, random, sys
good = open(sys.argv[1], "rb").read()
r = random.Random(20261207)
# the pieces come first in the file (field 1): mutate there, where the rules look
end = min(len(good), 2000)
for i in range(600):
    b = bytearray(good)
    for _ in range(r.choice((1, 1, 2))):
        k = r.randrange(4)
        at = r.randrange(end)
        if k == 0:
            b[at] = r.randrange(256)
        elif k == 1:
            b[at] ^= 1 << r.randrange(8)
        elif k == 2:
            b.insert(at, r.randrange(256))
        else:
            del b[at]
    open(os.path.join(sys.argv[2], "m%04d_tokenizer.model" % i), "wb").write(bytes(b))
PYEOF
"$STGUARD_CLI" scan --no-digest --format json "$tmp/m" >"$tmp/scan.jsonl"
"$PY" - "$tmp/scan.jsonl" <<'PYEOF'
import json, sys
import sentencepiece as spm
bad, table = [], {}
recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "file"]
for r in recs:
    sp = spm.SentencePieceProcessor()
    try:
        loads = bool(sp.Load(r["path"]))
    except Exception:
        loads = False
    ok = r["verdict"] == "ok"
    table[(ok, loads)] = table.get((ok, loads), 0) + 1
    if not ok and loads:
        bad.append("%s: stguard %s %r, the processor loads it" % (
            r["path"], r["verdict"], [(f["code"], f.get("offset")) for f in r["findings"]]))
if len(recs) != 600:
    bad.append("%d records, not 600" % len(recs))
for b in bad[:30]:
    print("FAIL " + b)
print("stguard ok / loads: %d, ok / refused: %d, not ok / loads: %d, not ok / refused: %d; "
      "%d failures" % (table.get((True, True), 0), table.get((True, False), 0),
                       table.get((False, True), 0), table.get((False, False), 0), len(bad)))
sys.exit(1 if bad else 0)
PYEOF
