#!/bin/bash
# `stguard inspect` of the code-bearing formats (the summary door, stg_summary_open), against
# what the real readers read from the same files: the Keras layer classes of a .keras zip's
# config.json (zipfile + json) and of a legacy .h5's model_config (h5py), the op histogram of a
# SavedModel (python3-protobuf through tests/keras/gen_savedmodel.py's schema), the chat
# templates of a tokenizer_config.json, a .jinja file and a GGUF file (name, length in bytes as
# Python decodes them, verdict), and auto_map entries (present, absent, another repo). Every
# JSON record validates against docs/cli.schema.json; text output names the same things; exit
# status 0 for ok and warn, 1 for unsafe.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "h5py, google.protobuf, jsonschema"
fail=0
SCHEMA=$SRC/docs/cli.schema.json

# inspect --format json of $1 into $tmp/out.json; its exit status checked against $2
inspect_json() {
    "$STGUARD_CLI" inspect --format json "$1" >"$tmp/out.json" 2>"$tmp/err.txt"
    local rc=$?
    if [ "$rc" -ne "$2" ]; then
        echo "FAIL: inspect $1 exited $rc, not $2"; cat "$tmp/err.txt"; fail=1
    fi
}

# compares the record in $tmp/out.json with the oracle's expectation (python, stdin: JSON)
compare() { # $1: file, $2: the oracle's JSON of expected contents, $3: kinds compared
    "$PY" - "$tmp/out.json" "$SCHEMA" "$1" "$2" "$3" <<'PYEOF' || fail=1
import collections, json, sys
import jsonschema
out, schema, path, expected, kinds = sys.argv[1:6]
lines = open(out).read().splitlines()
assert len(lines) == 1, "%s: %d lines" % (path, len(lines))
rec = json.loads(lines[0])
jsonschema.Draft7Validator(json.load(open(schema))).validate(rec)
got = [e for e in rec["contents"] if e["kind"] in kinds.split()]
def key(e):
    return (e["kind"], e["name"], e["count"], e.get("verdict"), e.get("state"), e.get("value"))
want = json.loads(expected)
assert want, "%s: the oracle expects nothing" % path
g = sorted(key(e) for e in got)
w = sorted((e["kind"], e["name"], e["count"], e.get("verdict"), e.get("state"), e.get("value"))
           for e in want)
if g != w:
    print("FAIL %s:\n  stguard %s\n  oracle  %s" % (path, g, w))
    sys.exit(1)
PYEOF
}

# --- Keras: layer classes the real readers find (objects inside a `layers` list, any depth)
cat >"$tmp/layers.py" <<'PYEOF'
import collections, json
def layers(cfg):
    count = collections.Counter()
    def walk(v, in_layers):
        if isinstance(v, dict):
            if in_layers and isinstance(v.get("class_name"), str):
                count[v["class_name"]] += 1
            for k, x in v.items():
                walk(x, k == "layers" and isinstance(x, list))
        elif isinstance(v, list):
            for x in v:
                walk(x, in_layers)
    walk(cfg, False)
    return [{"kind": "keras-layer", "name": n, "count": c, "value": ""} for n, c in count.items()]
PYEOF
keras_expect() { # $1: file; the oracle reads it with zipfile or h5py
    "$PY" - "$1" "$tmp" <<'PYEOF'
import json, sys, zipfile
sys.path.insert(0, sys.argv[2])
from layers import layers
path = sys.argv[1]
if zipfile.is_zipfile(path):
    cfg = json.loads(zipfile.ZipFile(path).read("config.json"))
else:
    import h5py
    raw = h5py.File(path, "r").attrs["model_config"]
    cfg = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
print(json.dumps(layers(cfg)))
PYEOF
}
for f in "$SRC"/corpus/keras/lambda.keras "$SRC"/corpus/hdf5/*keras_lambda*.h5 \
    "$SRC"/corpus/hdf5/ok-k2-*.h5; do
    case "$(basename "$f")" in ok-*) rc=0 ;; *) rc=1 ;; esac
    inspect_json "$f" "$rc"
    compare "$f" "$(keras_expect "$f")" keras-layer
done
out=$("$STGUARD_CLI" inspect "$SRC/corpus/keras/lambda.keras")
for t in "format:           keras" "verdict:          unsafe" "Lambda  x1  in config.json" \
    "note: keras_lambda"; do
    grep -qF -- "$t" <<<"$out" || { echo "FAIL: no '$t' in:"; echo "$out"; fail=1; }
done

# --- SavedModel: every NodeDef.op of the graphs and the function library, counted
"$PY" - "$SRC/tests/keras/gen_savedmodel.py" "$tmp/sm" >"$tmp/sm_expect.txt" <<'PYEOF' || fail=1
import collections, contextlib, io, json, os, runpy, sys
gen, out = sys.argv[1:3]
sys.argv = [gen, out]
with contextlib.redirect_stdout(io.StringIO()):
    g = runpy.run_path(gen, run_name="gen")
for case in sorted(os.listdir(out)):
    sm = g["C"]["SavedModel"]()
    sm.ParseFromString(open(os.path.join(out, case, "saved_model.pb"), "rb").read())
    ops = [n.op for mg in sm.meta_graphs for n in mg.graph_def.node]
    ops += [n.op for mg in sm.meta_graphs for f in mg.graph_def.library.function
            for n in f.node_def]
    c = collections.Counter(ops)
    print(case, json.dumps([{"kind": "tf-op", "name": k, "count": v, "value": ""}
                            for k, v in c.items()]))
PYEOF
while read -r case expect; do
    case "$case" in ok-* | bad-tf_pyfunc | bad-keras_*) rc=0 ;; *) rc=1 ;; esac # pyfunc: a warning
    inspect_json "$tmp/sm/$case/saved_model.pb" "$rc"
    compare "$case" "$expect" tf-op
    if [ -e "$tmp/sm/$case/keras_metadata.pb" ]; then
        case "$case" in bad-keras_*) rc=1 ;; *) rc=0 ;; esac # the Lambda is in the metadata
        inspect_json "$tmp/sm/$case/keras_metadata.pb" "$rc"
        grep -q '"kind":"keras-layer","name":"Dense"\|"kind":"keras-layer","name":"Lambda"' \
            "$tmp/out.json" || { echo "FAIL: $case keras_metadata.pb layers"; fail=1; }
    fi
done <"$tmp/sm_expect.txt"
[ -s "$tmp/sm_expect.txt" ] || { echo "FAIL: no SavedModel cases"; fail=1; }
out=$("$STGUARD_CLI" inspect "$tmp/sm/bad-tf_op_unsafe-graph/saved_model.pb")
for t in "TensorFlow ops:" "WriteFile  x1" "MatchingFiles  x1" "note: tf_op_unsafe"; do
    grep -qF -- "$t" <<<"$out" || { echo "FAIL: no '$t' in:"; echo "$out"; fail=1; }
done

# --- chat templates: two named ones in tokenizer_config.json (one reaching Python's globals),
# real models' templates as chat_template.jinja, and a GGUF tokenizer.chat_template
benign=$(ls "$SRC"/tests/templates/data/benign/*.jinja | head -3)
"$PY" - "$tmp/tk" $benign <<'PYEOF' || fail=1
import json, os, struct, sys
out, files = sys.argv[1], sys.argv[2:]
os.makedirs(out)
llama = open(files[0], encoding="utf-8").read()
bad = "{{ cycler.__init__.__globals__.os.popen('id').read() }}"
json.dump({"chat_template": [{"name": "default", "template": llama},
                             {"name": "tool_use", "template": bad}]},
          open(os.path.join(out, "tokenizer_config.json"), "w"))
exp = [{"kind": "chat-template", "name": "default", "count": len(llama.encode()),
        "verdict": "ok", "value": "JSON chat_template"},
       {"kind": "chat-template", "name": "tool_use", "count": len(bad.encode()),
        "verdict": "unsafe", "value": "JSON chat_template"}]
json.dump(exp, open(os.path.join(out, "tokenizer_config.expect"), "w"))
def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b
kv = [("general.architecture", "llama"), ("tokenizer.chat_template", llama)]
gguf = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
for k, v in kv:
    gguf += gstr(k) + struct.pack("<I", 8) + gstr(v)
gguf += b"\0" * ((32 - len(gguf) % 32) % 32)
open(os.path.join(out, "model.gguf"), "wb").write(gguf)
PYEOF
inspect_json "$tmp/tk/tokenizer_config.json" 1
compare tokenizer_config.json "$(cat "$tmp/tk/tokenizer_config.expect")" chat-template
for f in $benign; do
    cp "$f" "$tmp/tk/chat_template.jinja"
    inspect_json "$tmp/tk/chat_template.jinja" 0
    n=$("$PY" -c 'import sys; print(len(open(sys.argv[1], "rb").read()))' "$f")
    compare "$(basename "$f")" "[{\"kind\":\"chat-template\",\"name\":\"default\",\"count\":$n,\"verdict\":\"ok\",\"value\":\"chat_template.jinja\"}]" chat-template
done
"$STGUARD_CLI" inspect --format json "$tmp/tk/model.gguf" >"$tmp/out.json" ||
    { echo "FAIL: inspect model.gguf"; fail=1; }
"$PY" - "$tmp/out.json" "$SCHEMA" "$(echo "$benign" | head -1)" <<'PYEOF' || fail=1
import json, sys
import jsonschema
rec = json.loads(open(sys.argv[1]).read())
jsonschema.Draft7Validator(json.load(open(sys.argv[2]))).validate(rec)
n = len(open(sys.argv[3], "rb").read())
t = [e for e in rec["contents"] if e["kind"] == "chat-template"]
assert rec["format"] == "gguf" and len(t) == 1 and t[0]["count"] == n and \
    t[0]["verdict"] == "ok", rec["contents"]
PYEOF
out=$("$STGUARD_CLI" inspect "$tmp/tk/model.gguf")
grep -q "chat templates:" <<<"$out" || { echo "FAIL: GGUF text view has no templates"; fail=1; }
out=$("$STGUARD_CLI" inspect "$tmp/tk/tokenizer_config.json")
for t in "chat templates:" "tool_use  " "unsafe  (JSON chat_template)" \
    "note: chat_template_unsafe"; do
    grep -qF -- "$t" <<<"$out" || { echo "FAIL: no '$t' in:"; echo "$out"; fail=1; }
done

# --- auto_map: a module beside the config, one absent, one in another repo
mkdir -p "$tmp/repo"
cat >"$tmp/repo/config.json" <<'JSON'
{"auto_map": {"AutoConfig": "configuration_x.XConfig", "AutoModel": "modeling_x.XModel",
  "AutoModelForCausalLM": "someone/other-repo--modeling_y.YModel"}, "model_type": "x"}
JSON
printf 'class XConfig: pass\n' >"$tmp/repo/configuration_x.py"
inspect_json "$tmp/repo/config.json" 0
compare config.json '[{"kind":"auto-map","name":"AutoConfig","count":1,"state":"present","value":"configuration_x.XConfig"},
 {"kind":"auto-map","name":"AutoModel","count":1,"state":"absent","value":"modeling_x.XModel"},
 {"kind":"auto-map","name":"AutoModelForCausalLM","count":1,"state":"other-repo","value":"someone/other-repo--modeling_y.YModel"}]' auto-map
out=$("$STGUARD_CLI" inspect "$tmp/repo/config.json")
for t in "auto_map:" "AutoConfig  configuration_x.XConfig  present" \
    "AutoModel  modeling_x.XModel  absent" "other-repo"; do
    grep -qF -- "$t" <<<"$out" || { echo "FAIL: no '$t' in:"; echo "$out"; fail=1; }
done
# a config holding none of it is still refused, naming what it is
printf '{"model_type": "bert"}\n' >"$tmp/plain.json"
"$STGUARD_CLI" inspect "$tmp/plain.json" >/dev/null 2>"$tmp/err.txt"
[ $? -ne 0 ] && grep -q "not safetensors" "$tmp/err.txt" ||
    { echo "FAIL: a plain JSON file was not refused"; cat "$tmp/err.txt"; fail=1; }
exit $fail
