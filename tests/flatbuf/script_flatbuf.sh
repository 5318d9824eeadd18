#!/usr/bin/env bash
# TFLite and ExecuTorch files written by the real FlatBuffers writer (gen_flatbuf.py, along the
# two schemas): each file's name says what stguard must find (ok_*: verdict ok, no finding;
# <code>_*: that code among its findings), and a directory of all of them scans without a crash.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "flatbuffers"
"$PY" "$SRC/tests/flatbuf/gen_flatbuf.py" "$tmp/fb" || exit 1
"$STGUARD_CLI" scan --format json "$tmp/fb" >"$tmp/out.jsonl"
case $? in 0 | 1) ;; *) echo "FAIL: scan exited $?"; exit 1 ;; esac
"$PY" - "$tmp/out.jsonl" <<'PY'
import json, os, sys
codes = ["flatbuffer_custom_op", "flatbuffer_index_invalid", "flatbuffer_data_range",
         "flatbuffer_malformed", "executorch_delegate", "limit_exceeded"]
seen, bad = 0, 0
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if "path" not in rec:
        continue
    seen += 1
    name = os.path.basename(rec["path"])
    found = [f["code"] for f in rec["findings"]]
    want = "tflite" if name.endswith(".tflite") else "executorch"
    if rec["format"] != want:
        print("FAIL", name, "format", rec["format"]); bad += 1
    if name.startswith("ok_"):
        if found or rec["verdict"] != "ok":
            print("FAIL", name, rec["verdict"], found); bad += 1
        continue
    code = max((c for c in codes if name.startswith(c + "_")), key=len, default=None)
    if code is None or code not in found:
        print("FAIL", name, "wants", code, "found", found); bad += 1
if seen < 22:
    print("FAIL: only", seen, "files"); bad += 1
sys.exit(1 if bad else 0)
PY
