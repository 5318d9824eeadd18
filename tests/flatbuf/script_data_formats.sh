#!/usr/bin/env bash
# The data files a model repository holds (gen_data.py: a TensorFlow variables.index written by
# LevelDB itself, Arrow IPC streams and files, Parquet's framing, CSV, JSON Lines): each file's
# name says what stguard must find (ok_*: its data format, verdict ok, no finding; <code>_*:
# that code among its findings).
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "flatbuffers, plyvel"
"$PY" "$SRC/tests/flatbuf/gen_data.py" "$tmp/d" || exit 1
"$STGUARD_CLI" scan --format json "$tmp/d" >"$tmp/out.jsonl"
case $? in 0 | 1) ;; *) echo "FAIL: scan exited $?"; exit 1 ;; esac
"$PY" - "$tmp/out.jsonl" <<'PY'
import json, os, sys
codes = ["tf_index_malformed", "dataset_malformed", "dataset_text_invalid"]
formats = {".index": "tf-variables-index", "-of-00001": "tf-variables-data",
           ".parquet": "parquet", ".arrow": "arrow", ".feather": "arrow",
           ".csv": "dataset-text", ".jsonl": "dataset-text"}
seen, bad = 0, 0
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if "path" not in rec:
        continue
    seen += 1
    name = os.path.basename(rec["path"])
    found = [f["code"] for f in rec["findings"]]
    want = next(v for k, v in formats.items() if name.endswith(k))
    if rec["format"] != want:
        print("FAIL", name, "format", rec["format"], "wants", want); bad += 1
    if name.startswith("ok_"):
        if found or rec["verdict"] != "ok":
            print("FAIL", name, rec["verdict"], found); bad += 1
        continue
    code = next((c for c in codes if name.startswith(c + "_")), None)
    if code is None or code not in found:
        print("FAIL", name, "wants", code, "found", found); bad += 1
if seen < 15:
    print("FAIL: only", seen, "files"); bad += 1
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || exit 1

# A repo-shaped folder of benign files (a SavedModel's variables, a TFLite and an ExecuTorch
# export, datasets): `--fail-on warning` exits 0, every file in a known format.
"$PY" "$SRC/tests/flatbuf/gen_flatbuf.py" "$tmp/fb" || exit 1
r="$tmp/repo"
mkdir -p "$r/saved_model/variables" "$r/data"
cp "$tmp/d/ok_variables.index" "$r/saved_model/variables/variables.index"
cp "$tmp/d/ok_variables.data-00000-of-00001" "$r/saved_model/variables/variables.data-00000-of-00001"
cp "$tmp/d/ok_train.parquet" "$r/data/train-00000-of-00001.parquet"
cp "$tmp/d/ok_stream.arrow" "$r/data/data-00000-of-00001.arrow"
cp "$tmp/d/ok_rows.csv" "$r/data/test.csv"
cp "$tmp/d/ok_rows.jsonl" "$r/data/validation.jsonl"
cp "$tmp/fb/ok_model.tflite" "$r/model.tflite"
cp "$tmp/fb/ok_program.pte" "$r/model.pte"
"$STGUARD_CLI" scan --fail-on warning --format json "$r" >"$tmp/repo.jsonl"
rc=$?
if [ $rc -ne 0 ] || grep -q '"format":"unknown"' "$tmp/repo.jsonl"; then
    echo "FAIL: the benign repo folder exits $rc"; cat "$tmp/repo.jsonl"; exit 1
fi
# the same folder with a custom-op model beside: the warning fails it
cp "$tmp/fb/flatbuffer_custom_op_custom.tflite" "$r/custom.tflite"
"$STGUARD_CLI" scan --fail-on warning -q "$r" >/dev/null
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a custom-op model beside exits $rc, not 1"; exit 1; }
exit 0
