#!/usr/bin/env bash
# Chat templates against the real reader, python3-jinja2 (docs/templates.md, "Proof"):
#  - every benign template (the ones real models ship, tests/templates/data/benign, and the same
#    templates inside tokenizer_config.json files, string, list and ASCII-escaped forms, and
#    GGUF files) renders in transformers' ImmutableSandboxedEnvironment, and stguard calls it ok;
#  - every malicious one reaches os.popen under a plain jinja2.Environment (an audit hook sees
#    it and refuses it), and stguard calls it unsafe;
#  - seeded mutations of the benign ones: none whose plain render reaches the hook is ok.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "jinja2"
here="$SRC/tests/templates"
"$PY" "$here/gen_templates.py" "$tmp/gen" 300

# the oracle's side
"$PY" "$here/oracle_templates.py" sandbox "$here"/data/benign/*.jinja "$tmp"/gen/json/benign-* \
    "$tmp"/gen/gguf/benign-* || exit 1
"$PY" "$here/oracle_templates.py" reach "$tmp"/gen/malicious/* "$tmp"/gen/json/malicious-* \
    "$tmp"/gen/gguf/malicious-* "$tmp"/gen/mutants/* >"$tmp/reach.txt"
if grep -v '/mutants/' "$tmp/reach.txt" | grep -q '^quiet'; then
    echo "a malicious template does not reach its payload:"
    grep -v '/mutants/' "$tmp/reach.txt" | grep '^quiet'
    exit 1
fi

# stguard's side: one JSON Lines record per file
"$STGUARD_CLI" scan --format json --no-digest "$here/data/benign" "$tmp/gen" >"$tmp/scan.jsonl"
"$PY" - "$tmp/scan.jsonl" "$tmp/reach.txt" <<'EOF'
import json, os, sys
verdicts = {}
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    if r.get("type") == "file":
        verdicts[os.path.realpath(r["path"])] = r["verdict"]
reached = {os.path.realpath(l.split(" ", 1)[1].strip()) for l in open(sys.argv[2])
           if l.startswith("reached ")}
bad = 0
counts = {"benign": 0, "malicious": 0, "mutant": 0, "mutant reached": 0}
for path, verdict in sorted(verdicts.items()):
    name = os.path.basename(path)
    kind = "benign" if name.startswith("benign") or "/data/benign/" in path else \
           "malicious" if name.startswith("malicious") else "mutant"
    counts[kind] += 1
    if kind == "benign" and verdict != "ok":
        print("false alarm: %s is %s" % (path, verdict)); bad += 1
    if kind == "malicious" and verdict != "unsafe":
        print("missed: %s is %s" % (path, verdict)); bad += 1
    if kind == "mutant" and path in reached:
        counts["mutant reached"] += 1
        if verdict == "ok":
            print("missed mutant: %s reaches the payload and is ok" % path); bad += 1
print(counts)
if counts["benign"] < 300 or counts["malicious"] < 60 or counts["mutant reached"] < 20:
    print("fewer fixtures than expected"); bad += 1
print("%d passed, %d failed" % (sum(counts[k] for k in ("benign", "malicious", "mutant")) - bad, bad))
sys.exit(1 if bad else 0)
EOF
