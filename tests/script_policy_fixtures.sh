#!/bin/bash
# Benign files the policy and the stream readers must pass, and their malicious counterparts,
# written by the real libraries (tests/gen_policy_fixtures.py): quantized tensors, whole
# torch.nn module saves, a Trainer training_args.bin (enums by value, and by name through
# getattr as Python 3.11 writes them, pickle protocols 2-5), joblib dumps compressed with zlib, gzip,
# bz2, xz and lzma, a joblib ZF file. Each file goes through the real loader under
# tests/loaders/reach.py: every benign file loads without reaching a payload, every malicious one
# reaches os.system (refused, nothing runs). Then through the CLI: benign files never unsafe or
# invalid, malicious ones unsafe with the os.system global. Skips (77) when Debian's python3
# cannot import torch, numpy and joblib.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "torch, numpy, joblib"
"$PY" "$SRC/tests/gen_policy_fixtures.py" "$tmp/fx" || { echo "FAIL: generator"; exit 1; }

# The real loaders: the file name's first word says which one.
(cd "$tmp/fx" && "$PY" "$SRC/tests/loaders/reach.py" joblib benign/joblib_* evil/joblib_* &&
    PYTHONPATH="$tmp/fx/stub" "$PY" "$SRC/tests/loaders/reach.py" torch \
        $(ls benign/torch_* evil/torch_* | grep -v _py311) &&
    PYTHONPATH="$tmp/fx/stub" "$PY" "$SRC/tests/loaders/reach.py" --let builtins.getattr \
        --let __builtin__.getattr torch benign/torch_*_py311* evil/torch_*_py311* &&
    PYTHONPATH="$tmp/fx/stub" "$PY" "$SRC/tests/loaders/reach.py" --let builtins.getattr \
        --let __builtin__.getattr pickle benign/pickle_* evil/pickle_*) >"$tmp/reach.jsonl" ||
    { echo "FAIL: reach.py"; exit 1; }
(cd "$tmp/fx" && "$STGUARD_CLI" scan --no-digest --format json benign/* evil/*) \
    >"$tmp/scan.jsonl" 2>"$tmp/scan.err"
rc=$?
"$PY" - "$tmp/fx" "$tmp/reach.jsonl" "$tmp/scan.jsonl" "$rc" <<'PYEOF'
import json, os, sys
fx, reach_out, scan_out, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
files = sorted("%s/%s" % (k, n) for k in ("benign", "evil") for n in os.listdir(os.path.join(fx, k)))
reach = {r["file"]: r for r in map(json.loads, open(reach_out))}
scan = {r["path"]: r for r in map(json.loads, open(scan_out)) if r.get("type") == "file"}
bad = []
for f in files:
    evil = f.startswith("evil/")
    r = reach.get(f)
    if r is None:
        bad.append("%s: not run through the real loader" % f)
    elif evil and not r["reached"]:
        bad.append("%s: the real loader does not reach the payload: %r" % (f, r["error"]))
    elif not evil and (r["reached"] or r["error"] is not None):
        bad.append("%s: the real loader fails or reaches a payload: %r" % (f, r["error"]))
    s = scan.get(f)
    if s is None:
        bad.append("%s: no scan record" % f)
        continue
    codes = [(x["code"], x["severity"], x.get("global")) for x in s["findings"]]
    globs = {(g["module"], g["name"]): g["class"] for g in s.get("globals", [])}
    if evil:
        if s["verdict"] != "unsafe" or not any(
                c == "pickle_global_dangerous" and g and g.endswith(".system") for c, _, g in codes):
            bad.append("%s: malicious file not blocked: %s %r" % (f, s["verdict"], codes))
        continue
    if s["verdict"] not in ("ok", "warn") or any(sev in ("error", "critical") for _, sev, _ in codes):
        bad.append("%s: benign file flagged: %s %r" % (f, s["verdict"], codes))
    if f.startswith("benign/joblib_") and s["format"] != "joblib":
        bad.append("%s: labelled %s, not joblib" % (f, s["format"]))
expect = {
    "benign/torch_quantized.pt": [("torch._utils", "_rebuild_qtensor", "allowed"),
                                  ("torch", "per_tensor_affine", "allowed"),
                                  ("torch", "per_channel_affine", "allowed")],
    "benign/torch_training_args.bin": [("transformers.training_args", "TrainingArguments", "benign"),
                                       ("transformers.trainer_utils", "IntervalStrategy", "benign"),
                                       ("transformers.debug_utils", "DebugOption", "benign"),
                                       ("torch", "device", "allowed")],
    "benign/torch_training_args_py311.bin": [
        ("transformers.training_args", "TrainingArguments", "benign"),
        ("transformers.trainer_utils", "IntervalStrategy", "benign"),
        ("__builtin__", "getattr", "benign")],  # protocol 2 names Python 2's module
    "benign/pickle_training_args_py311_p2.bin": [("__builtin__", "getattr", "benign")],
    "benign/pickle_training_args_py311_p3.bin": [("builtins", "getattr", "benign")],
    "benign/pickle_training_args_py311_p5.bin": [("builtins", "getattr", "benign")],
    "benign/torch_nn_LSTM.pt": [("torch.nn.modules.rnn", "LSTM", "benign")],
    "benign/torch_nn_TransformerEncoder.pt": [("torch.nn.functional", "relu", "benign")],
    "benign/joblib_xz.joblib": [("numpy", "matrix", "allowed"), ("builtins", "range", "allowed")],
}
for f, want in expect.items():
    globs = {(g["module"], g["name"]): g["class"] for g in scan.get(f, {}).get("globals", [])}
    for m, n, cls in want:
        if globs.get((m, n)) != cls:
            bad.append("%s: global %s.%s not listed as %s: %r" % (f, m, n, cls, globs))
if rc != 1:
    bad.append("CLI exit status %d, want 1 (malicious files present)" % rc)
for b in bad:
    print("FAIL", b)
print("%d files, %d failures" % (len(files), len(bad)))
sys.exit(1 if bad else 0)
PYEOF
