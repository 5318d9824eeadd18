#!/bin/bash
# Tokenizer files from the real writers and repository-shaped folders (tests/flax/gen_tokenizers.py:
# sentencepiece's trainer, tiktoken's and transformers' file layouts, bert-base-uncased and gpt2
# file lists with a Flax checkpoint): `stguard scan --fail-on warning` exits 0 and every file is ok
# with no finding, each with its label. Then what SentencePieceProcessor.Load refuses (a model
# without its unk piece, with a piece twice, with an empty piece, cut short) is
# tokenizer_malformed, and a llama.cpp ggjt v3 header is ggml_legacy (a warning) whatever its
# .bin name. Skips (77) when Debian's python3 cannot import sentencepiece, msgpack and numpy.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "sentencepiece, msgpack, numpy"
mkdir "$tmp/ok" "$tmp/bad"
"$PY" "$SRC/tests/flax/gen_tokenizers.py" "$tmp/ok" >/dev/null || { echo "FAIL: generator"; exit 1; }
"$STGUARD_CLI" scan --no-digest --fail-on warning --format json "$tmp/ok" >"$tmp/ok.jsonl"
rc=$?
"$PY" - "$tmp/bad" <<'PYEOF' || { echo "FAIL: bad fixtures"; exit 1; }
import os, struct, sys
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as mp
out = sys.argv[1]
src = os.path.join(os.path.dirname(out), "ok", "tokenizer.model")
good = open(src, "rb").read()
def variant(name, edit):
    m = mp.ModelProto()
    m.ParseFromString(good)
    edit(m)
    return name, m.SerializeToString()
def no_unk(m):
    for p in m.pieces:
        if p.type == mp.ModelProto.SentencePiece.UNKNOWN:
            p.type = mp.ModelProto.SentencePiece.NORMAL
def dup(m):
    m.pieces[10].piece = m.pieces[11].piece
def empty(m):
    m.pieces[7].piece = ""
files = [variant("nounk_tokenizer.model", no_unk), variant("dup_tokenizer.model", dup),
         variant("empty_tokenizer.model", empty), ("cut_tokenizer.model", good[:1001])]
for name, data in files:
    path = os.path.join(out, name)
    open(path, "wb").write(data)
    sp = spm.SentencePieceProcessor()
    try:
        refused = not sp.Load(path)
    except Exception:
        refused = True
    assert refused, "SentencePieceProcessor loads %s" % name
# llama.cpp's ggjt v3 header: magic, version, then n_vocab, n_embd, n_mult, n_head, n_layer,
# n_rot, ftype (uint32 each, little-endian), as its converter wrote them
open(os.path.join(out, "ggml-model-q4_0.bin"), "wb").write(
    struct.pack("<9I", 0x67676A74, 3, 32000, 4096, 256, 32, 32, 128, 2) + bytes(64))
PYEOF
"$STGUARD_CLI" scan --no-digest --format json "$tmp/bad" >"$tmp/bad.jsonl"
"$PY" - "$tmp/ok.jsonl" "$rc" "$tmp/bad.jsonl" <<'PYEOF'
import json, os, sys
bad = []
recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "file"]
labels = {"tokenizer.model": "sentencepiece", "spiece.model": "sentencepiece",
          "tiny_base.tiktoken": "tiktoken", "vocab.txt": "text", "merges.txt": "text",
          "flax_model.msgpack": "flax-msgpack"}
seen = set()
for r in recs:
    name = os.path.basename(r["path"])
    if r["verdict"] != "ok" or r["findings"]:
        bad.append("%s: %s %r" % (r["path"], r["verdict"], [f["code"] for f in r["findings"]]))
    if name in labels:
        seen.add(name)
        if r["format"] != labels[name]:
            bad.append("%s: format %s, not %s" % (r["path"], r["format"], labels[name]))
if seen != set(labels):
    bad.append("not scanned: %r" % sorted(set(labels) - seen))
if int(sys.argv[2]) != 0:
    bad.append("--fail-on warning exit status %s on benign files" % sys.argv[2])
for r in (r for r in map(json.loads, open(sys.argv[3])) if r.get("type") == "file"):
    name = os.path.basename(r["path"])
    codes = [f["code"] for f in r["findings"]]
    want = "ggml_legacy" if name.startswith("ggml") else "tokenizer_malformed"
    if codes != [want]:
        bad.append("%s: %r, not [%s]" % (name, codes, want))
for b in bad:
    print("FAIL " + b)
print("%d benign files, %d failures" % (len(recs), len(bad)))
sys.exit(1 if bad else 0)
PYEOF
