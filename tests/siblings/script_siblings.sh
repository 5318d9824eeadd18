#!/bin/bash
# Sibling data files through the CLI (docs/siblings.md): folders written by Debian's python3-onnx
# (tests/siblings/gen_siblings.py: models whose weights are in model.onnx_data or weights.bin,
# reloaded by onnx.load; a bert-like repo with ONNX, OpenVINO and Core ML weights; the same
# repo as a Hugging Face cache, every file a blob behind a snapshot link) exit 0 under
# --fail-on warning, with the data files labelled onnx-external-data, openvino-weights and
# coreml-weights; the same data file alone (no model beside it) keeps its finding; a model
# whose tensor runs past the end of its data file makes that file invalid
# (sibling_range_outside). Skips (77) when Debian's python3 cannot import onnx.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "onnx, numpy"
fail=0
"$PY" "$SRC/tests/siblings/gen_siblings.py" "$tmp/f" || { echo "FAIL: gen_siblings.py"; exit 1; }
# records(JSON file, base): Python source that loads the file records of a `scan --format json`
# output into `recs`, keyed by the path after base
records() {
    printf 'import json\nrecs = {}\nfor line in open(%s):\n    r = json.loads(line)\n    if r["type"] == "file":\n        recs[r["path"].rsplit(%s, 1)[1]] = r\n' "'$1'" "'$2'"
}

for d in onnx_data onnx_bin repo hub; do
    if ! out=$("$STGUARD_CLI" scan --fail-on warning "$tmp/f/$d"); then
        echo "FAIL: $d does not pass --fail-on warning:"; echo "$out"; fail=1
    fi
    if printf '%s\n' "$out" | grep -v -e '^[0-9]* files: ' -e '^([0-9]* ok files\? not listed' >/dev/null; then
        echo "FAIL: $d prints more than the summary:"; echo "$out"; fail=1
    fi
done

# labels, from the JSON records (walk order: a data file may come before its model)
"$STGUARD_CLI" scan --format json "$tmp/f/repo" > "$tmp/repo.json"
{ records "$tmp/repo.json" "/repo/"; cat; } <<'PY' | "$PY" - || fail=1
want = {"onnx/model.onnx": "onnx", "onnx/model.onnx_data": "onnx-external-data",
        "onnx/model_fp16.onnx": "onnx", "onnx/weights.bin": "onnx-external-data",
        "config.json": "json", "tokenizer.json": "json",
        "openvino/openvino_model.xml": "openvino-ir", "openvino/openvino_model.bin": "openvino-weights",
        "coreml/fill-mask/float32_model.mlpackage/Manifest.json": "json",
        "coreml/fill-mask/float32_model.mlpackage/Data/com.apple.CoreML/model.mlmodel": "coreml-model",
        "coreml/fill-mask/float32_model.mlpackage/Data/com.apple.CoreML/weights/weight.bin": "coreml-weights"}
for path, fmt in want.items():
    r = recs[path]
    assert r["format"] == fmt and r["verdict"] == "ok" and not r["findings"], (path, r)
print("labels ok:", len(recs), "records")
PY

# alone, a data file is what it was: format_mismatch under .bin, format_unknown otherwise
mkdir "$tmp/alone"
cp "$tmp/f/onnx_bin/weights.bin" "$tmp/f/onnx_data/model.onnx_data" "$tmp/alone/"
"$STGUARD_CLI" scan --format json "$tmp/alone" > "$tmp/alone.json" && { echo "FAIL: data files alone pass"; fail=1; }
{ records "$tmp/alone.json" "/"; cat; } <<'PY' | "$PY" - || fail=1
codes = {k: [f["code"] for f in r["findings"]] for k, r in recs.items()}
assert codes == {"weights.bin": ["format_mismatch"], "model.onnx_data": ["format_unknown"]}, codes
PY

# a data file cut short: onnx reads 1000 bytes where the tensor needs 16384 (its array does not
# build), and stguard calls both files invalid
cp -r "$tmp/f/onnx_bin" "$tmp/short"
truncate -s 1000 "$tmp/short/weights.bin"
if "$PY" -c "import onnx, sys; from onnx import numpy_helper as h
h.to_array(onnx.load(sys.argv[1]).graph.initializer[0])" "$tmp/short/model.onnx" 2>/dev/null; then
    echo "FAIL: onnx.load accepts a cut data file (the oracle changed)"; fail=1
fi
"$STGUARD_CLI" scan --format json "$tmp/short" > "$tmp/short.json" && { echo "FAIL: a cut data file passes"; fail=1; }
{ records "$tmp/short.json" "/"; cat; } <<'PY' | "$PY" - || fail=1
bin_ = recs["weights.bin"]
assert bin_["format"] == "onnx-external-data" and bin_["verdict"] == "invalid", bin_
assert {f["code"] for f in bin_["findings"]} == {"sibling_range_outside"}, bin_
assert "onnx_external_missing" in {f["code"] for f in recs["model.onnx"]["findings"]}
PY
exit $fail
