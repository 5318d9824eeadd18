#!/bin/bash
# A Hugging Face hub cache as huggingface_hub writes it (tests/cli/gen_hf_cache.py: three repos, blobs
# named by SHA-256 and by Git blob id, refs, .no_exist markers, .locks), scanned at hub level and
# per repo folder:
#   - clean: every snapshot file once, under its snapshot path with `blob`; no record under
#     blobs/, .no_exist/ or .locks/ (those are counted in the summary); exit 0 by default and
#     with --fail-on warning (pytorch_model.bin names only allowlisted globals: pickle_file is
#     info); a near miss with a benign global (a saved nn.Module) keeps the warning;
#   - partial downloads: blobs/<etag>.incomplete no snapshot links to is not read (counted as
#     skipped_incomplete), one a link leads to is scanned under the link; a snapshot link whose
#     blob is missing is a dangling link (io_error, verdict error, exit 2);
#   - tampered shard blob -> digest_mismatch; index naming a missing shard ->
#     index_shard_missing; junk model.safetensors with an alias link -> invalid under its own
#     name; torch.save with an os.system payload -> unsafe, reached by the real torch.load
#     (tests/loaders/reach.py, which refuses the call) and blocked by stguard.
#   - side files through snapshot links: an ONNX model + model.onnx.data and a joblib 0.9 file +
#     its .npy side files, every snapshot path a link into blobs/, scan clean from the hub, the
#     repo folder and the file itself (the repo folder is their limit, as it is for links); a
#     side file or external-data link leading outside the repo folder still fails; outside a
#     cache a folder scan confines them to the folder, a file named alone to its own folder.
# Skips (77) when Debian's python3 cannot import torch.
set -u
PY=/usr/bin/python3
if ! "$PY" -c "import torch" >/dev/null 2>&1; then
    echo "skip: $PY cannot import torch"
    exit 77
fi
if [ -z "${STGUARD_CLI:-}" ] || [ ! -x "$STGUARD_CLI" ]; then
    echo "FAIL: no CLI binary (STGUARD_CLI)"
    exit 1
fi
SRC=${STG_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
FAILS=0
CHECKS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { CHECKS=$((CHECKS + 1)); }
SNAP=snapshots/8f2e3a1b9c0d4e5f6a7b8c9d0e1f2a3b4c5d6e7f

for v in clean tampered broken_index junk_alias evil; do
    "$PY" "$SRC/tests/cli/gen_hf_cache.py" "$T/$v" "$v" || { echo "FAIL: generator $v"; exit 1; }
done

# scan VARIANT WANT_RC [options and paths relative to the hub...]: JSON Lines into VARIANT.json
scan() {
    local v=$1 want=$2
    shift 2
    (cd "$T/$v" && "$STGUARD_CLI" scan --format json "$@") >"$T/$v.json" 2>"$T/$v.err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$v $*: exit $rc, want $want: $(head -c 800 "$T/$v.json") $(cat "$T/$v.err")"
    else
        ok
    fi
}
# check VARIANT PYTHON: assertions over recs (file records by path) and summary
check() {
    local v=$1
    if "$PY" - "$T/$v.json" "$2" >"$T/py.txt" 2>&1 <<'EOF'; then ok; else fail "$v: $(cat "$T/py.txt")"; fi
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
recs = {r["path"]: r for r in lines if r["type"] == "file"}
summary = lines[-1]
assert summary["type"] == "summary", summary
def codes(path):
    return [f["code"] for f in recs[path]["findings"]]
exec(sys.argv[2])
EOF
}

# ---- clean, at hub level
scan clean 0 .
check clean '
snap = "8f2e3a1b9c0d4e5f6a7b8c9d0e1f2a3b4c5d6e7f"
assert not [p for p in recs if "/blobs/" in p or ".no_exist" in p or ".locks" in p], list(recs)
assert len(recs) == 20, sorted(recs)
assert summary["files"] == 20 and summary["skipped_no_exist"] == 3, summary
assert summary["skipped_locks"] == 1 and summary["skipped_git"] == 0, summary
for p, r in recs.items():
    if "/snapshots/" in p:
        assert r["blob"] and "/blobs/" in r["blob"], r
    if p.endswith("pytorch_model.bin"):
        assert codes(p) == ["pickle_file"] and r["verdict"] == "ok", r
        assert r["findings"][0]["severity"] == "info", r
        assert all(g["class"] == "allowed" for g in r["globals"]), r
    assert r["verdict"] == "ok", r
assert summary["ok"] == 20 and summary["warn"] == 0, summary
assert summary["skipped_incomplete"] == 0, summary
fmt = {p.rsplit("/", 1)[1]: r["format"] for p, r in recs.items()}
assert fmt["model.safetensors.index.json"] == "safetensors-index", fmt
assert fmt["config.json"] == "json" and fmt["README.md"] == "text", fmt
assert fmt["main"] == "text" and fmt[".gitattributes"] == "text", fmt
assert fmt["pytorch_model.bin"] == "torch-zip", fmt
'
# blobs named by Git blob id are really checked (and named as huggingface_hub names them)
check clean '
import hashlib, os
for p, r in recs.items():
    if r["blob"]:
        etag = os.path.basename(r["blob"])
        data = open(os.path.join(os.path.dirname(sys.argv[1]), "clean", r["blob"]), "rb").read()
        want = hashlib.sha256(data).hexdigest() if len(etag) == 64 else \
            hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        assert etag == want, (p, etag, want)
        assert r["sha256"] == hashlib.sha256(data).hexdigest(), r
assert any(len(os.path.basename(r["blob"] or "")) == 40 for r in recs.values())
'
scan clean 0 --fail-on warning .
check clean 'assert summary["ok"] == 20 and summary["files"] == 20, summary'
# near miss: a pytorch_model.bin that names a benign global (torch.save of a whole nn.Module)
# keeps the pickle_file warning and fails --fail-on warning
mkdir -p "$T/module"
"$PY" -c '
import sys, torch
torch.save(torch.nn.Linear(2, 2), sys.argv[1])
' "$T/module/pytorch_model.bin" || fail "torch.save of a module"
scan module 0 pytorch_model.bin
scan module 1 --fail-on warning pytorch_model.bin
check module '
r = recs["pytorch_model.bin"]
sev = {f["code"]: f["severity"] for f in r["findings"]}
assert sev["pickle_file"] == "warning" and sev["pickle_global_benign"] == "warning", r
assert r["verdict"] == "warn", r
'
# one repo folder gives the same records as the hub scan shows for it
scan clean 0 models--org--sharded
check clean '
assert len(recs) == 10 and summary["skipped_no_exist"] == 1, (sorted(recs), summary)
assert all(r["verdict"] == "ok" for r in recs.values()), recs
'
# a snapshot folder given as the argument: the repo folder is still its root
scan clean 0 "models--org--single/$SNAP"
check clean 'assert len(recs) == 4 and all(r["verdict"] == "ok" for r in recs.values()), recs'
# text output: the summary says what was skipped
(cd "$T/clean" && "$STGUARD_CLI" scan .) >"$T/text.txt" 2>&1
grep -q '^skipped: 0 .git, 3 .no_exist, 1 .locks' "$T/text.txt" && ok ||
    fail "text summary: $(tail -3 "$T/text.txt")"
# text on a cache is quiet about what passes: no ok file, no `->` blob line, the counts; -v
# lists every file with the blob its link leads to
grep -q ': OK (\|  -> ' "$T/text.txt" && fail "ok files or blob lines without -v: $(head -3 "$T/text.txt")" || ok
grep -qx '(20 ok files not listed: -v lists every file)' "$T/text.txt" && ok ||
    fail "unlisted count: $(tail -4 "$T/text.txt")"
(cd "$T/clean" && "$STGUARD_CLI" scan -v .) >"$T/text.txt" 2>&1
[ "$(grep -c ': OK (' "$T/text.txt")" = 20 ] && grep -q '^  -> ./models--org--torch/blobs/' "$T/text.txt" &&
    ok || fail "-v on a cache: $(head -4 "$T/text.txt")"
# inspect takes the repo folder (and a hub holding one repo): the snapshot refs/main names, its
# shards numbered in file order from 1
(cd "$T/clean" && "$STGUARD_CLI" inspect models--org--sharded) >"$T/insp.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -qx "models--org--sharded/$SNAP" "$T/insp.txt" &&
    grep -qx '    1: model-00001-of-00002.safetensors' "$T/insp.txt" &&
    grep -qx '    2: model-00002-of-00002.safetensors' "$T/insp.txt" &&
    grep -Eq '^  embed.weight +F32 +\[2, 2\] +4  1: \[0, 16\)$' "$T/insp.txt" && ok ||
    fail "inspect a repo folder: rc $rc $(cat "$T/insp.txt")"
mkdir -p "$T/onehub" && cp -a "$T/clean/models--org--sharded" "$T/onehub/"
"$STGUARD_CLI" inspect --format json "$T/onehub" >"$T/insp.json" 2>&1 && "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["shards"] == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"], d
assert [t["shard"] for t in d["tensors"]] == [0, 1], d["tensors"]
' "$T/insp.json" && ok || fail "inspect a hub of one repo: $(head -c 400 "$T/insp.json")"
# a hub of several repos: inspect cannot choose one, and says so (a usage error, exit 2)
"$STGUARD_CLI" inspect "$T/clean" >"$T/insp.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'name one repo folder' "$T/insp.txt" && ok ||
    fail "inspect a hub of several repos: rc $rc $(cat "$T/insp.txt")"
# an explicit path under .no_exist (find ... | stguard scan --files-from -) is a marker: skipped
# and counted, never file_too_small; with nothing else named, nothing was checked (exit 4)
(cd "$T/clean" && find . -path '*/.no_exist/*' -type f | "$STGUARD_CLI" scan --format json --files-from -) \
    >"$T/clean.json" 2>"$T/clean.err"
rc=$?
[ $rc -eq 4 ] && ok || fail "markers only: exit $rc, want 4: $(cat "$T/clean.json")"
check clean 'assert not recs and summary["skipped_no_exist"] == 3, (recs, summary)'
scan clean 0 "models--org--single/.no_exist/${SNAP#snapshots/}/adapter_config.json" "models--org--single/$SNAP/config.json"
check clean 'assert len(recs) == 1 and summary["skipped_no_exist"] == 1, (recs, summary)'
# a non-empty file there is no marker huggingface_hub wrote: scanned like any named file
printf 'not a marker' >"$T/clean/models--org--single/.no_exist/${SNAP#snapshots/}/extra.bin"
scan clean 1 "models--org--single/.no_exist/${SNAP#snapshots/}/extra.bin"
check clean 'assert [r["verdict"] for r in recs.values()] == ["invalid"], recs'
rm "$T/clean/models--org--single/.no_exist/${SNAP#snapshots/}/extra.bin"
# a blob two snapshots link to is read once (one open) and counted once in bytes
T2="$T/clean/models--org--torch"
cp -a "$T2/$SNAP" "$T2/snapshots/$(printf '2%.0s' $(seq 40))"
scan clean 0 models--org--torch
check clean '
import os
files = sorted(set(os.path.realpath(os.path.join("'"$T"'/clean", p)) for p in recs))
assert len(recs) == 9, sorted(recs)
assert summary["bytes"] == sum(os.path.getsize(f) for f in files), (summary, files)
'
if command -v strace >/dev/null 2>&1; then
    (cd "$T/clean" && strace -f -e trace=openat "$STGUARD_CLI" scan models--org--torch) 2>&1 >/dev/null |
        grep -c 'blobs/[0-9a-f]*", O_RDONLY|O_NOCTTY' >"$T/opens.txt"
    [ "$(cat "$T/opens.txt")" = 4 ] && ok || fail "blobs opened $(cat "$T/opens.txt") times (4 blobs)"
fi
rm -rf "$T2/snapshots/$(printf '2%.0s' $(seq 40))"
# text named model.gguf claims GGUF as text named .bin claims a pickle: format_mismatch
printf 'not a model\n' >"$T/clean/model.gguf"
scan clean 1 model.gguf
check clean 'assert codes("model.gguf") == ["format_mismatch"] and recs["model.gguf"]["verdict"] == "invalid", recs'
printf 'not a model\n' >"$T/clean/model.txt"
scan clean 0 model.txt
check clean 'assert recs["model.txt"]["format"] == "text" and recs["model.txt"]["verdict"] == "ok", recs'
rm "$T/clean/model.gguf" "$T/clean/model.txt"
(cd "$T/clean" && "$STGUARD_CLI" scan --format sarif .) >"$T/sarif.json" 2>&1
"$PY" -c '
import json, sys
p = json.load(open(sys.argv[1]))["runs"][0]["properties"]
assert p["skippedNoExist"] == 3 and p["skippedLocks"] == 1 and p["files"] == 20, p
' "$T/sarif.json" && ok || fail "SARIF summary: $(head -c 600 "$T/sarif.json")"

# ---- a shard's blob changed after download
scan tampered 1 .
check tampered '
p = "./models--org--sharded/'"$SNAP"'/model-00002-of-00002.safetensors"
assert "digest_mismatch" in codes(p) and recs[p]["verdict"] == "invalid", recs[p]
assert sum(1 for r in recs.values() if r["verdict"] != "ok") == 1, \
    [(k, r["verdict"]) for k, r in recs.items()]  # the shard only
'
# ---- partial downloads (huggingface_hub writes blobs/<etag>.incomplete, renames it to
# blobs/<etag> when complete, and only then links the snapshot path to it)
cp -a "$T/clean" "$T/partial"
R="$T/partial/models--org--single"
printf 'half a download' >"$R/blobs/$(printf 'a%.0s' $(seq 64)).incomplete"
printf 'a git blob half done' >"$R/blobs/$(printf 'c%.0s' $(seq 40)).incomplete"
scan partial 0 --fail-on warning .
check partial '
assert not [p for p in recs if p.endswith(".incomplete")], list(recs)
assert len(recs) == 20 and summary["skipped_incomplete"] == 2, summary
assert all(r["verdict"] == "ok" for r in recs.values()), recs
'
(cd "$T/partial" && "$STGUARD_CLI" scan .) >"$T/text.txt" 2>&1
grep -q '^skipped files: 2 partial downloads' "$T/text.txt" && ok ||
    fail "text summary of partial downloads: $(tail -3 "$T/text.txt")"
# the same file named as an argument is read (a path named on the command line is never skipped)
# (its name is no blob name: no digest is promised, the content is judged as it is)
scan partial 0 "models--org--single/blobs/$(printf 'a%.0s' $(seq 64)).incomplete"
check partial '
assert len(recs) == 1 and summary["skipped_incomplete"] == 0, (recs, summary)
r = list(recs.values())[0]
assert r["size"] == 15 and r["format"] == "text" and r["sha256"], r
'
# a link to an .incomplete file (no huggingface_hub writes one) is scanned under the link
ln -s "../../blobs/$(printf 'a%.0s' $(seq 64)).incomplete" "$R/$SNAP/odd.bin"
scan partial 1 .
check partial '
p = "./models--org--single/'"$SNAP"'/odd.bin"
assert recs[p]["blob"].endswith(".incomplete") and recs[p]["verdict"] == "invalid", recs[p]
assert summary["skipped_incomplete"] == 1 and len(recs) == 21, summary
'
rm "$R/$SNAP/odd.bin"
# a snapshot link whose blob is missing (deleted, or never finished) is a dangling link
ln -s "../../blobs/$(printf 'b%.0s' $(seq 64))" "$R/$SNAP/missing.safetensors"
scan partial 3 .
check partial '
p = "./models--org--single/'"$SNAP"'/missing.safetensors"
assert recs[p]["verdict"] == "error" and codes(p) == ["io_error"], recs[p]
assert summary["error"] == 1 and summary["ok"] == 20, summary
'

# ---- the index names a shard the snapshot does not have
scan broken_index 1 .
check broken_index '
p = "./models--org--sharded/'"$SNAP"'/model.safetensors.index.json"
assert recs[p]["format"] == "safetensors-index", recs[p]
assert "index_shard_missing" in codes(p) and recs[p]["verdict"] == "invalid", recs[p]
assert "digest_mismatch" not in codes(p), recs[p]
'
# ---- junk model.safetensors, and an alias link `a` to the same blob (met first)
scan junk_alias 1 .
check junk_alias '
d = "./models--org--single/'"$SNAP"'/"
assert recs[d + "model.safetensors"]["verdict"] == "invalid", recs[d + "model.safetensors"]
assert recs[d + "a"]["verdict"] == "warn" and codes(d + "a") == ["format_unknown"], recs[d + "a"]
assert recs[d + "a"]["blob"] == recs[d + "model.safetensors"]["blob"]
'
scan junk_alias 1 "models--org--single/$SNAP/model.safetensors"
check junk_alias 'assert [r["verdict"] for r in recs.values()] == ["invalid"], recs'

# ---- a malicious pytorch_model.bin: the real loader reaches the payload, stguard blocks it
scan evil 1 .
check evil '
p = "./models--org--torch/'"$SNAP"'/pytorch_model.bin"
assert recs[p]["verdict"] == "unsafe", recs[p]
assert ("posix", "system") in {(g["module"], g["name"]) for g in recs[p]["globals"]} or \
    ("os", "system") in {(g["module"], g["name"]) for g in recs[p]["globals"]}, recs[p]
'
evil_blob=$(readlink -f "$T/evil/models--org--torch/$SNAP/pytorch_model.bin")
"$PY" "$SRC/tests/loaders/reach.py" torch "$evil_blob" >"$T/reach.json" 2>"$T/reach.err"
"$PY" -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["reached"] is True, r
' "$T/reach.json" && ok || fail "reach.py: $(cat "$T/reach.json" "$T/reach.err")"
clean_blob=$(readlink -f "$T/clean/models--org--torch/$SNAP/pytorch_model.bin")
"$PY" "$SRC/tests/loaders/reach.py" torch "$clean_blob" >"$T/reach.json" 2>"$T/reach.err"
"$PY" -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["reached"] is False and r["error"] is None, r
' "$T/reach.json" && ok || fail "reach.py on the clean file: $(cat "$T/reach.json" "$T/reach.err")"

# ---- side files reached through snapshot links (ONNX external data, joblib 0.9 .npy files)
"$PY" - "$T/side" "$SRC/tests" <<'EOF' || fail "side-file cache generator"
import hashlib, os, sys
sys.path[:0] = [sys.argv[2] + "/differential", sys.argv[2] + "/fixtures"]
import numpy as np, onnx
import gen_joblib_side, gen_onnx
out = sys.argv[1]
snap = "snapshots/" + "1" * 40
work = os.path.join(out, "work")
os.makedirs(os.path.join(out, "outside"))
# the model and its side files, written where the tools write them, then moved into blobs/
gen_onnx.save(work, "onnx", gen_onnx.model(gen_onnx.graph_with_weight(n=1024)),
              save_as_external_data=True, all_tensors_to_one_file=True,
              location="model.onnx.data", size_threshold=0)
jl = os.path.join(work, "joblib")
gen_joblib_side.main_file(jl, ["model.pkl_01.npy", "model.pkl_02.npy"], protocol=3)
np.save(os.path.join(jl, "model.pkl_01.npy"), np.arange(6.0))
np.save(os.path.join(jl, "model.pkl_02.npy"), np.array([1, "a", None], dtype=object))
gen_joblib_side.evil_npy(os.path.join(out, "outside", "evil.npy"))
with open(os.path.join(out, "outside", "model.onnx.data"), "wb") as f:
    f.write(open(os.path.join(work, "onnx", "model.onnx.data"), "rb").read())

def repo(name, files, outside=()):
    r = os.path.join(out, "hub", "models--org--" + name)
    os.makedirs(os.path.join(r, "blobs"))
    os.makedirs(os.path.join(r, snap))
    for src, dst in files:
        data = open(src, "rb").read()
        blob = hashlib.sha256(data).hexdigest()
        with open(os.path.join(r, "blobs", blob), "wb") as f:
            f.write(data)
        os.symlink("../../blobs/" + blob, os.path.join(r, snap, dst))
    for target, dst in outside:
        os.symlink(os.path.abspath(target), os.path.join(r, snap, dst))

o, j = os.path.join(work, "onnx"), jl
repo("onnx", [(os.path.join(o, "model.onnx"), "model.onnx"),
              (os.path.join(o, "model.onnx.data"), "model.onnx.data")])
repo("joblib", [(os.path.join(j, n), n) for n in ("model.pkl", "model.pkl_01.npy", "model.pkl_02.npy")])
repo("onnx_out", [(os.path.join(o, "model.onnx"), "model.onnx")],
     [(os.path.join(out, "outside", "model.onnx.data"), "model.onnx.data")])
repo("joblib_out", [(os.path.join(j, n), n) for n in ("model.pkl", "model.pkl_02.npy")],
     [(os.path.join(out, "outside", "evil.npy"), "model.pkl_01.npy")])
# outside a cache: the side file is a link to a sibling folder of the tree
plain = os.path.join(out, "plain")
os.makedirs(os.path.join(plain, "model"))
os.makedirs(os.path.join(plain, "arrays"))
os.rename(os.path.join(j, "model.pkl"), os.path.join(plain, "model", "model.pkl"))
os.rename(os.path.join(j, "model.pkl_02.npy"), os.path.join(plain, "model", "model.pkl_02.npy"))
os.rename(os.path.join(j, "model.pkl_01.npy"), os.path.join(plain, "arrays", "a.npy"))
os.symlink("../arrays/a.npy", os.path.join(plain, "model", "model.pkl_01.npy"))
EOF
SIDE_CODES='("joblib_side_file_escape", "onnx_external_path_unsafe", "joblib_side_file_missing",
         "onnx_external_missing", "io_error")'
# side ARGS...: JSON Lines of a scan from $T/side into side.json (exit status in side.rc)
side() {
    (cd "$T/side" && "$STGUARD_CLI" scan --format json "$@") >"$T/side.json" 2>"$T/side.err"
    echo $? >"$T/side.rc"
}
side_check() { # DESCRIPTION PYTHON: assertions over recs and rc
    if "$PY" - "$T/side.json" "$(cat "$T/side.rc")" "$2" >"$T/py.txt" 2>&1 <<'EOF'; then ok; else fail "$1: $(cat "$T/py.txt") $(cat "$T/side.err")"; fi
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
recs = {r["path"]: r for r in lines if r["type"] == "file"}
rc = int(sys.argv[2])
def codes(p):
    return [f["code"] for f in recs[p]["findings"]]
exec(sys.argv[3])
EOF
}
S="snapshots/$(printf '1%.0s' $(seq 40))"
for arg in hub hub/models--org--onnx "hub/models--org--onnx/$S/model.onnx"; do
    side "$arg"
    side_check "onnx $arg" '
p = "hub/models--org--onnx/'"$S"'/model.onnx"
p = [k for k in recs if k.endswith(p)][0]
assert recs[p]["blob"] and "/blobs/" in recs[p]["blob"], recs[p]
assert recs[p]["verdict"] == "ok", recs[p]
assert not set(codes(p)) & set('"$SIDE_CODES"'), recs[p]
'
done
for arg in hub hub/models--org--joblib "hub/models--org--joblib/$S/model.pkl"; do
    side "$arg"
    side_check "joblib $arg" '
p = [k for k in recs if k.endswith("hub/models--org--joblib/'"$S"'/model.pkl")][0]
assert recs[p]["blob"] and "/blobs/" in recs[p]["blob"], recs[p]
assert recs[p]["verdict"] == "ok", recs[p]
assert not set(codes(p)) & set('"$SIDE_CODES"'), recs[p]
assert any(f.get("member") == "model.pkl_02.npy" for f in recs[p]["findings"]), recs[p]
'
done
# near misses: the side file / external data is a link out of the repo folder
for c in "onnx_out model.onnx onnx_external_path_unsafe" "joblib_out model.pkl joblib_side_file_escape"; do
    set -- $c
    for arg in hub "hub/models--org--$1" "hub/models--org--$1/$S/$2"; do
        side "$arg"
        side_check "$1 $arg" '
p = [k for k in recs if k.endswith("hub/models--org--'"$1/$S/$2"'")][0]
assert "'"$3"'" in codes(p), recs[p]
assert recs[p]["verdict"] != "ok" and rc == 1, (recs[p], rc)
'
    done
done
# outside a cache: a folder scan confines the side file to the folder (the link to the sibling
# folder is inside it), a file named alone to its own folder (the same link escapes)
side plain
side_check "plain folder" '
assert recs["plain/model/model.pkl"]["verdict"] == "ok", recs["plain/model/model.pkl"]
assert "joblib_side_file_escape" not in codes("plain/model/model.pkl"), recs
'
side plain/model/model.pkl
side_check "plain file" '
assert "joblib_side_file_escape" in codes("plain/model/model.pkl"), recs
assert rc == 1, rc
'
# both in one run: one file, one folder, two roots: two results (not shared)
side plain plain/model/model.pkl
side_check "plain folder and file" '
mine = [r for r in lines if r["type"] == "file" and r["path"] == "plain/model/model.pkl"]
has = ["joblib_side_file_escape" in [f["code"] for f in r["findings"]] for r in mine]
assert has == [False, True], mine
'

# the same pickle blob in two snapshots whose side files differ: each judged on its own (the
# first one's result looked at its neighbours, so the second is read under its own folder)
R="$T/side/hub/models--org--joblib"
S2="snapshots/$(printf '2%.0s' $(seq 40))"
mkdir -p "$R/$S2"
cp -P "$R/$S/model.pkl" "$R/$S/model.pkl_02.npy" "$R/$S2/"
ln -s "$T/side/outside/evil.npy" "$R/$S2/model.pkl_01.npy"
side hub/models--org--joblib
side_check "one pickle blob, two snapshots, other side files" '
a = "hub/models--org--joblib/'"$S"'/model.pkl"
b = "hub/models--org--joblib/'"$S2"'/model.pkl"
assert recs[a]["verdict"] == "ok" and "joblib_side_file_escape" not in codes(a), recs[a]
assert "joblib_side_file_escape" in codes(b) and recs[b]["verdict"] != "ok", recs[b]
assert recs[a]["blob"] == recs[b]["blob"], (recs[a]["blob"], recs[b]["blob"])
'
rm -rf "${R:?}/$S2"

echo "$CHECKS checks passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
