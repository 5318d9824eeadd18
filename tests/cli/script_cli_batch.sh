#!/usr/bin/env bash
# The CLI as batch and code-scanning tools use it:
#  - SARIF output validates against the official SARIF 2.1.0 schema (tests/data/sarif) and has the
#    fields GitHub code scanning reads (rule help text and markdown, security-severity and tags,
#    region.startLine, partialFingerprints stable across runs, relative URIs under %SRCROOT%,
#    artifacts with SHA-256), and never lists its own output file; a passing file raises no
#    alert (info findings only with --sarif-info), rules rank per code, messages name what
#    they are about;
#  - JSON Lines records validate against docs/cli.schema.json (file, summary, inspect);
#  - --shard K/N: the union of the shards is the whole scan, with no overlap;
#  - --files-from (newline and --null lists, - for stdin) and --check (sha256sum lists).
# Skips (77) only when Debian's python3 lacks jsonschema.
set -u
PY=/usr/bin/python3
B=${STGUARD_CLI:?set by ctest}
SRC=${STG_SOURCE_DIR:?set by ctest}
if ! "$PY" -c "import jsonschema" >/dev/null 2>&1; then
    echo "skip: $PY has no jsonschema (python3-jsonschema)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# A tree with ok, warn, invalid and unsafe files, scanned from its parent with relative paths.
mkdir -p "$tmp/w/models"
cp -r "$SRC/corpus/examples/." "$tmp/w/models/"
cd "$tmp/w"

# ---- SARIF: schema, GitHub's fields, stable fingerprints, self-exclusion
"$B" scan --format sarif models > "$tmp/second.sarif"
"$B" scan --format sarif models > models/out.sarif
rc=$?
[ $rc -eq 1 ] || bad "sarif scan of the examples: exit $rc, want 1"
"$PY" - "$SRC/tests/data/sarif/sarif-schema-2.1.0.json" models/out.sarif "$tmp/second.sarif" <<'PYEOF' || fail=1
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
again = json.load(open(sys.argv[3]))
jsonschema.Draft4Validator(schema).validate(doc)
run = doc["runs"][0]
errs = []
if not run["results"]:
    errs.append("no results")
rules = run["tool"]["driver"]["rules"]
for rule in rules:
    for key in ("id", "shortDescription", "fullDescription", "help", "properties"):
        if key not in rule:
            errs.append("rule %s lacks %s" % (rule.get("id"), key))
    if rule["fullDescription"]["text"] == rule["shortDescription"]["text"]:
        errs.append("rule %s: fullDescription repeats shortDescription" % rule["id"])
    if not rule["help"].get("text") or not rule["help"].get("markdown"):
        errs.append("rule %s: help lacks text or markdown" % rule["id"])
    sev = float(rule["properties"]["security-severity"])
    if not 0.0 <= sev <= 10.0 or "security" not in rule["properties"]["tags"]:
        errs.append("rule %s: security-severity/tags" % rule["id"])
crit = [r for r in rules if r["id"] == "pickle_global_dangerous"]
inval = [r for r in rules if r["id"] == "offsets_overlap"]
if not crit or not inval or float(crit[0]["properties"]["security-severity"]) <= \
        float(inval[0]["properties"]["security-severity"]):
    errs.append("critical findings must rank above invalid ones")
# The properties GitHub's "SARIF support for code scanning" page marks as required or reads:
# tool.driver.name, rules[].id / shortDescription.text / fullDescription.text / help.text,
# results[].ruleId / message.text / locations[].physicalLocation.artifactLocation.uri /
# region.startLine, partialFingerprints; tags and security-severity from rule properties.
if not run["tool"]["driver"].get("name") or not run["tool"]["driver"].get("semanticVersion"):
    errs.append("tool.driver name / semanticVersion")
for rule in rules:
    if len(rule["properties"]["tags"]) > 20 or not all(isinstance(t, str) for t in rule["properties"]["tags"]):
        errs.append("rule %s: tags" % rule["id"])
    if rule.get("defaultConfiguration", {}).get("level") not in ("note", "warning", "error"):
        errs.append("rule %s: defaultConfiguration.level" % rule["id"])
uris = set()
for res in run["results"]:
    if rules[res["ruleIndex"]]["id"] != res["ruleId"] or not res["message"]["text"]:
        errs.append("result: ruleIndex / ruleId / message.text %r" % res["ruleId"])
    if len(res["locations"]) != 1:
        errs.append("result with %d locations" % len(res["locations"]))
    loc = res["locations"][0]["physicalLocation"]
    if "byteOffset" in loc["region"] and loc["region"].get("byteLength") != 1:
        errs.append("region with byteOffset but no byteLength 1: %r" % loc["region"])
    if loc["region"].get("startLine") != 1:
        errs.append("region without startLine 1")
    al = loc["artifactLocation"]
    if al.get("uriBaseId") != "%SRCROOT%" or al["uri"].startswith("file:") or al["uri"].startswith("/"):
        errs.append("not relative to %%SRCROOT%%: %r" % al)
    uris.add(al["uri"])
    if "stguardFinding/v1" not in res.get("partialFingerprints", {}):
        errs.append("result without partialFingerprints")
    if run["artifacts"][al["index"]]["location"]["uri"] != al["uri"]:
        errs.append("artifact index does not match")
if not run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///"):
    errs.append("originalUriBaseIds")
if any(u.endswith("out.sarif") for u in uris) or \
        any(a["location"]["uri"].endswith("out.sarif") for a in run["artifacts"]):
    errs.append("the output file itself was scanned")
if not all("sha-256" in a.get("hashes", {}) for a in run["artifacts"]):
    errs.append("artifact without sha-256")
fp1 = [r["partialFingerprints"] for r in run["results"]]
fp2 = [r["partialFingerprints"] for r in again["runs"][0]["results"]]
if fp1 != fp2 or len({json.dumps(f) for f in fp1}) != len(fp1):
    errs.append("fingerprints not stable across runs or not distinct")
inv = run["invocations"][0]
if inv["exitCode"] != 1 or inv["executionSuccessful"] is not True:
    errs.append("invocation %r" % inv)
if errs:
    sys.exit("sarif: " + "; ".join(errs[:8]))
PYEOF
rm -f models/out.sarif

# ---- SARIF alerts (issue 24): a passing file raises none (its info findings are left out unless
# --sarif-info); a rule's security-severity is its code's, whatever else the run found; the
# message text names the global or tensor.
"$B" scan --format sarif models/torch/pytorch_model.bin > "$tmp/pass.sarif"
rc=$?
[ $rc -eq 0 ] || bad "sarif of a weights-only pytorch_model.bin: exit $rc, want 0"
"$B" scan --format sarif --sarif-info models/torch/pytorch_model.bin > "$tmp/pass-info.sarif"
"$B" scan --format sarif --sarif-info models/torch models/unsafe models/broken > "$tmp/mixed.sarif"
"$B" scan --format sarif --sarif-info models/unsafe/os_system.pkl > "$tmp/unsafe.sarif"
"$PY" - "$SRC/tests/data/sarif/sarif-schema-2.1.0.json" "$tmp/pass.sarif" "$tmp/pass-info.sarif" \
    "$tmp/mixed.sarif" "$tmp/unsafe.sarif" <<'PYEOF' || fail=1
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
docs = [json.load(open(p)) for p in sys.argv[2:]]
for d in docs:
    jsonschema.Draft4Validator(schema).validate(d)
runs = [d["runs"][0] for d in docs]
errs = []
# 1. the passing file: no result, no rule, but its artifact
if runs[0]["results"] or runs[0]["tool"]["driver"]["rules"] or len(runs[0]["artifacts"]) != 1:
    errs.append("a passing file raised results: %r" % runs[0]["results"])
# --sarif-info: its pickle_file info finding is a note
info = runs[1]["results"]
if [(r["ruleId"], r["level"]) for r in info] != [("pickle_file", "note")]:
    errs.append("--sarif-info: %r" % [(r["ruleId"], r["level"]) for r in info])
# 2. security-severity per code: pickle_file ranks the same alone, next to an unsafe pickle
# (whose pickle_file is a warning) and in the unsafe file's run
def sev(run, rule):
    return [r["properties"]["security-severity"] for r in run["tool"]["driver"]["rules"]
            if r["id"] == rule]
pf = [sev(r, "pickle_file") for r in runs[1:]]
if any(len(x) != 1 for x in pf) or len({x[0] for x in pf}) != 1:
    errs.append("pickle_file security-severity differs between runs: %r" % pf)
if sev(runs[2], "pickle_global_dangerous") != ["9.5"] or sev(runs[2], "offsets_overlap") != ["7.0"]:
    errs.append("per-code severities: %r %r" % (sev(runs[2], "pickle_global_dangerous"),
                                                sev(runs[2], "offsets_overlap")))
levels = {(r["ruleId"], r["level"]) for r in runs[2]["results"]}
if ("pickle_file", "note") not in levels or ("pickle_file", "warning") not in levels:
    errs.append("a result's level is its finding's severity: %r" % sorted(levels))
# 3. message.text names the global and the tensor
texts = {r["ruleId"]: r["message"]["text"] for r in runs[2]["results"]}
if "[global posix.system]" not in texts.get("pickle_global_dangerous", "") and \
        "[global os.system]" not in texts.get("pickle_global_dangerous", ""):
    errs.append("global not in message: %r" % texts.get("pickle_global_dangerous"))
if '[tensor "' not in texts.get("offsets_overlap", ""):
    errs.append("tensor not in message: %r" % texts.get("offsets_overlap"))
if errs:
    sys.exit("sarif alerts: " + "; ".join(errs))
PYEOF
# Links: a link in the tree is its own artifact (the path a user sees), with its resolved target
# as properties.blob and the target's digest; a path with ".." is resolved and made relative.
ln -s model.safetensors models/link.safetensors
"$B" scan --format sarif models/link.safetensors > "$tmp/link.sarif"
(cd models/sharded && "$B" scan --format sarif ../model.safetensors) > "$tmp/dotdot.sarif"
rm -f models/link.safetensors
"$PY" - "$tmp/link.sarif" "$tmp/dotdot.sarif" "$(sha256sum models/model.safetensors | cut -c1-64)" \
    "$(cd models && pwd -P)" <<'PYEOF' || fail=1
import json, sys
link = json.load(open(sys.argv[1]))["runs"][0]["artifacts"]
dotdot = json.load(open(sys.argv[2]))["runs"][0]
sha, real = sys.argv[3], sys.argv[4]
assert len(link) == 1 and link[0]["location"] == {"uri": "models/link.safetensors", "uriBaseId": "%SRCROOT%"}, link
assert link[0]["properties"]["blob"].endswith("model.safetensors") and link[0]["hashes"]["sha-256"] == sha, link
# "../model.safetensors" from models/sharded lies outside the working directory: its real path
assert dotdot["artifacts"][0]["location"] == {"uri": "file://" + real + "/model.safetensors"}, dotdot["artifacts"]
PYEOF
(cd models && "$B" scan --format sarif sharded/../model.safetensors) > "$tmp/dotdot2.sarif"
grep -q '"uri":"model.safetensors","uriBaseId":"%SRCROOT%"' "$tmp/dotdot2.sarif" ||
    bad "a path with .. below the working directory is not made relative: $(grep -o '"artifacts":[^]]*' "$tmp/dotdot2.sarif")"
# An absolute path outside the working directory is an absolute file:// URI.
(cd / && "$B" scan --format sarif "$tmp/w/models/model.safetensors") > "$tmp/abs.sarif"
grep -q '"uri":"file:///' "$tmp/abs.sarif" || bad "absolute path not a file:// URI"

# ---- JSON Lines against the documented schema (scan records, summary, inspect)
"$B" scan --format json models > "$tmp/scan.jsonl"
"$B" inspect --format json models/model.safetensors > "$tmp/inspect.jsonl"
"$B" inspect --format json models/gguf/model.gguf >> "$tmp/inspect.jsonl"
mkdir -p "$tmp/w/onnx"
cp -r "$SRC/tests/data/onnx/ok-inspect" "$SRC/tests/data/onnx/ok-subgraph" "$tmp/w/onnx/"
"$B" inspect --format json onnx/ok-inspect/model.onnx >> "$tmp/inspect.jsonl"
"$B" inspect --format json onnx/ok-subgraph/model.onnx >> "$tmp/inspect.jsonl"
"$PY" - "$SRC/docs/cli.schema.json" "$tmp/scan.jsonl" "$tmp/inspect.jsonl" <<'PYEOF' || fail=1
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
v = jsonschema.Draft7Validator(schema)
n = 0
for path in sys.argv[2:]:
    for line in open(path):
        rec = json.loads(line)
        v.validate(rec)
        n += 1
        if rec["schema"] != 1:
            sys.exit("schema field %r" % rec["schema"])
if n < 5:
    sys.exit("too few records: %d" % n)
# A record that breaks the schema must be refused (the schema is not vacuous).
try:
    v.validate({"type": "file", "schema": 1, "path": "x"})
except jsonschema.ValidationError:
    pass
else:
    sys.exit("an incomplete record passed the schema")
# An ONNX record breaks the schema without its op histogram, or with an external tensor that
# names no location.
o = json.loads(open(sys.argv[3]).read().splitlines()[2])
assert o["format"] == "onnx", o
v.validate(o)
ext = dict(o["tensors"][0])
assert ext["stored"] == "external", ext
del ext["location"]
for rec, what in ((dict(o, op_types=None), "an ONNX record without op_types"),
                  (dict(o, tensors=[ext]), "an external ONNX tensor without its location")):
    try:
        v.validate(rec)
    except jsonschema.ValidationError:
        pass
    else:
        sys.exit(what + " passed the schema")
# GGUF metadata may hold numbers and array summaries; safetensors metadata only strings.
g = json.loads(open(sys.argv[3]).read().splitlines()[1])
bad = dict(g, metadata={"k": {"array": "str"}})
st = json.loads(open(sys.argv[3]).readline())
for rec, what in ((bad, "a GGUF array without its count"),
                  (dict(st, metadata={"k": 1}), "a number in safetensors metadata")):
    try:
        v.validate(rec)
    except jsonschema.ValidationError:
        pass
    else:
        sys.exit(what + " passed the schema")
PYEOF

# 40 files of 8 MB for the progress checks
mkdir -p "$tmp/big"
for i in $(seq 1 40); do head -c 8000000 /dev/zero > "$tmp/big/f$i.dat"; done

# ---- progress: files and bytes done of the totals, rate, never on stdout
"$B" scan --progress always --format json "$tmp/big" >"$tmp/prog.out" 2>"$tmp/prog.err"
tr '\r' '\n' < "$tmp/prog.err" | grep -q "/40 files, .*/305.2 MiB" ||
    bad "progress line without totals: $(tr '\r' '\n' < "$tmp/prog.err" | tail -2)"
grep -q "MiB" "$tmp/prog.out" && bad "progress written to stdout"
"$B" scan --format json "$tmp/big" 2>"$tmp/prog2.err" >/dev/null
[ -s "$tmp/prog2.err" ] && bad "progress shown on a pipe without --progress always"

# ---- progress within one large file: the bytes move before the file is done. A single file's
# line is drawn once the scan has run a second; 4 GiB keeps the digest past that on a fast
# machine (1 GiB was hashed in under a second now and then: no line, a flaky failure).
truncate -s 4G "$tmp/one.safetensors"
"$B" scan --progress always --format json "$tmp/one.safetensors" >/dev/null 2>"$tmp/prog3.err"
"$PY" - "$tmp/prog3.err" <<'PYEOF' || fail=1
import re, sys
lines = open(sys.argv[1], "rb").read().decode("utf-8", "replace").replace("\r", "\n").split("\n")
within = [float(m.group(1)) for l in lines
          for m in [re.search(r"0/1 files, ([0-9.]+)/4096.0 MiB", l)] if m]
if not any(0.0 < x < 4096.0 for x in within):
    sys.exit("no progress within the file: %r" % within[:5])
PYEOF
rm -f "$tmp/one.safetensors"

# ---- --shard K/N: union = whole scan, no overlap
"$B" scan --no-digest --format json models > "$tmp/all.jsonl"
for k in 1 2 3; do
    "$B" scan --no-digest --format json --shard $k/3 models > "$tmp/shard$k.jsonl"
done
"$PY" - "$tmp" <<'PYEOF' || fail=1
import json, sys
d = sys.argv[1]
def recs(f):
    return [json.loads(l) for l in open(f) if json.loads(l)["type"] == "file"]
whole = {r["path"]: r["verdict"] for r in recs(d + "/all.jsonl")}
parts = [recs("%s/shard%d.jsonl" % (d, k)) for k in (1, 2, 3)]
union = [r["path"] for p in parts for r in p]
if sorted(union) != sorted(whole) or len(set(union)) != len(union):
    sys.exit("shards do not cover the scan exactly once: %r vs %r" % (sorted(union), sorted(whole)))
if sum(1 for p in parts if p) < 2:
    sys.exit("every file fell in one shard")
for p in parts:
    for r in p:
        if whole[r["path"]] != r["verdict"]:
            sys.exit("verdict of %s differs in its shard" % r["path"])
PYEOF
for badshard in 0/3 4/3 1/0 x/2 1/2x; do
    "$B" scan --shard $badshard models >/dev/null 2>&1
    [ $? -eq 2 ] || bad "--shard $badshard accepted"
done

# ---- --files-from (newline, NUL, stdin)
printf 'models/model.safetensors\nmodels/broken\n' > "$tmp/list"
printf 'models/model.safetensors\0models/broken\0' > "$tmp/list0"
n1=$("$B" scan --no-digest --format json --files-from "$tmp/list" | grep -c '"type":"file"')
n2=$("$B" scan --no-digest --format json --null --files-from "$tmp/list0" | grep -c '"type":"file"')
n3=$("$B" scan --no-digest --format json --files-from - < "$tmp/list" | grep -c '"type":"file"')
nd=$(ls models/broken | wc -l)
[ "$n1" -eq $((nd + 1)) ] && [ "$n2" -eq "$n1" ] && [ "$n3" -eq "$n1" ] ||
    bad "--files-from: $n1 / $n2 / $n3 records, want $((nd + 1))"
"$B" scan --files-from - - < "$tmp/list" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--files-from - with - accepted"

# ---- --check: sha256sum lists
(cd models && sha256sum model.safetensors unsafe/os_system.pkl) > "$tmp/sums"
(cd models && "$B" scan --format json --check "$tmp/sums") > "$tmp/check.jsonl"
rc=$?
[ $rc -eq 1 ] || bad "--check of an ok and an unsafe file: exit $rc, want 1"
grep -q digest_mismatch "$tmp/check.jsonl" && bad "--check: digest_mismatch on matching sums"
(cd models && sha256sum model.safetensors) | sed 's/^./0/;s/^00/11/' > "$tmp/sums.bad"
(cd models && "$B" scan --format json --check "$tmp/sums.bad") > "$tmp/check2.jsonl"
rc=$?
[ $rc -eq 1 ] && grep -q digest_mismatch "$tmp/check2.jsonl" || bad "--check: a wrong sum not reported (exit $rc)"
printf 'not a sum line\n' > "$tmp/sums.junk"
"$B" scan --check "$tmp/sums.junk" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--check: a malformed line not a usage error"

# ---- inspect: totals, aligned table, sharded models, files that are not safetensors
"$B" inspect models/model.safetensors > "$tmp/insp.txt"
grep -q "tensors: *2, 8 parameters, 32 bytes" "$tmp/insp.txt" &&
    grep -Eq "^  linear.weight +F32 +\[2, 3\] +6  \[0, 24\)$" "$tmp/insp.txt" ||
    bad "inspect table: $(cat "$tmp/insp.txt")"
for target in models/sharded models/sharded/model.safetensors.index.json; do
    "$B" inspect --format json "$target" > "$tmp/insp.json"
    rc=$?
    "$PY" - "$tmp/insp.json" "$SRC/docs/cli.schema.json" <<'PYEOF' || bad "inspect $target (exit $rc)"
import json, sys, jsonschema
d = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator(json.load(open(sys.argv[2]))).validate(d)
assert len(d["shards"]) == 2 and "header_length" not in d, d
assert d["parameters"] == sum(t["parameters"] for t in d["tensors"]) == 4, d
assert sorted(t["shard"] for t in d["tensors"]) == [0, 1], d
PYEOF
done
# GGUF: version, metadata (the vocabulary as a count), ggml type names, totals
"$B" inspect --format json models/gguf/model.gguf > "$tmp/insp.json" || bad "inspect of a GGUF file: exit $?"
"$PY" - "$tmp/insp.json" <<'PYEOF' || bad "inspect GGUF JSON: $(cat "$tmp/insp.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "gguf" and d["version"] == 3 and d["alignment"] == 32, d
assert d["metadata"]["tokenizer.ggml.tokens"] == {"array": "str", "count": 5}, d
assert d["metadata"]["llama.context_length"] == 64, d
assert d["parameters"] == 12 == sum(t["parameters"] for t in d["tensors"]), d
assert [t["dtype"] for t in d["tensors"]] == ["F32", "F32"], d
assert d["tensors"][0]["shape"] == [2, 5] and d["tensors"][0]["begin"] == d["data_start"], d
PYEOF
"$B" inspect models/gguf/model.gguf > "$tmp/insp.txt"
grep -q "GGUF version: *3" "$tmp/insp.txt" && grep -q "tokenizer.ggml.tokens (arr): \[str x 5\]" "$tmp/insp.txt" &&
    grep -Eq "^  token_embd.weight +F32 +\[2, 5\] +10  \[384, 424\)$" "$tmp/insp.txt" ||
    bad "inspect GGUF text: $(cat "$tmp/insp.txt")"
"$B" inspect models/broken/lying_dims.gguf > "$tmp/insp.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "offsets_out_of_range" "$tmp/insp.txt" || bad "inspect of a lying GGUF: exit $rc, $(cat "$tmp/insp.txt")"
# ONNX: header fields, metadata, symbolic dimensions, the op histogram, inline and external
# initializers; by name and, renamed, by content; a model whose external data escapes refused
"$B" inspect --format json onnx/ok-inspect/model.onnx > "$tmp/insp.json" || bad "inspect of an ONNX model: exit $?"
cp onnx/ok-inspect/model.onnx onnx/ok-inspect/renamed.bin
"$B" inspect --format json onnx/ok-inspect/renamed.bin > "$tmp/insp2.json" || bad "inspect of a renamed ONNX model: exit $?"
"$PY" - "$tmp/insp.json" "$tmp/insp2.json" <<'PYEOF' || bad "inspect ONNX JSON: $(cat "$tmp/insp.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "onnx" and d["ir_version"] == 8 and d["model_version"] == 3, d
assert d["producer_name"] == "stguard-test" and d["domain"] == "org.example", d
assert d["graph_name"] == "inspect-graph" and d["metadata"] == {"author": "stguard", "license": "MIT"}, d
assert d["opset_import"] == [{"domain": "", "version": 13}], d
assert d["inputs"] == [{"name": "x", "elem_type": "FLOAT", "shape": ["batch", 4, None]}], d
assert d["nodes"] == 4 and [(o["op_type"], o["count"]) for o in d["op_types"]] == [("Relu", 3), ("Add", 1)], d
assert d["parameters"] == 266 == sum(t["parameters"] for t in d["tensors"]), d
assert d["tensor_bytes"] == 1068 and d["external_tensors"] == 1, d
big = d["tensors"][0]
assert big == {"name": "big", "dtype": "FLOAT", "shape": [16, 16], "parameters": 256, "bytes": 1024,
               "stored": "external", "location": "inspect.data", "offset": 0, "length": 1024}, big
assert [t["stored"] for t in d["tensors"][1:]] == ["inline", "inline"], d
r = json.load(open(sys.argv[2]))
assert dict(r, path=d["path"]) == d, r
PYEOF
"$B" inspect onnx/ok-inspect/model.onnx > "$tmp/insp.txt"
grep -q "ONNX IR version: *8" "$tmp/insp.txt" && grep -q 'producer: *"stguard-test"' "$tmp/insp.txt" &&
    grep -q "x  FLOAT  \[batch, 4, ?\]" "$tmp/insp.txt" && grep -Eq "^ +3  Relu$" "$tmp/insp.txt" &&
    grep -Eq "^  big +FLOAT +\[16, 16\] +256 +1,024  external inspect.data @0 \+1024$" "$tmp/insp.txt" ||
    bad "inspect ONNX text: $(cat "$tmp/insp.txt")"
"$B" inspect models/unsafe/escape.onnx > "$tmp/insp.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "onnx_external_path_unsafe" "$tmp/insp.txt" || bad "inspect of an escaping ONNX model: exit $rc, $(cat "$tmp/insp.txt")"
"$B" inspect --tensor-sha256 onnx/ok-inspect/model.onnx >/dev/null 2>&1
[ $? -eq 2 ] || bad "inspect --tensor-sha256 of an ONNX model is not a usage error"
"$B" inspect models/sharded > "$tmp/insp.txt"
grep -q "sharded model: 2 shards" "$tmp/insp.txt" || bad "inspect folder text: $(cat "$tmp/insp.txt")"
"$B" inspect models/torch/pytorch_model.bin >/dev/null 2>"$tmp/insp.err"
rc=$?
[ $rc -eq 1 ] && grep -q "torch-zip file, not safetensors" "$tmp/insp.err" &&
    grep -q "stguard scan" "$tmp/insp.err" || bad "inspect of a torch zip: exit $rc, $(cat "$tmp/insp.err")"

# ---- --allow-global names the real reason for a refusal
"$B" scan --allow-global os:system models/model.safetensors >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "hard-block" "$tmp/err" || bad "--allow-global os:system: exit $rc, $(cat "$tmp/err")"
"$B" scan --allow-global os.system models/model.safetensors >/dev/null 2>"$tmp/err"
grep -q "expected MODULE:NAME" "$tmp/err" || bad "--allow-global os.system: $(cat "$tmp/err")"

[ $fail -eq 0 ] && echo "all batch and code-scanning checks passed"
exit $fail
