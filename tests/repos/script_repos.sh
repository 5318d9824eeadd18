#!/bin/bash
# Whole Hugging Face repos judged at once (issue 27's "Done when", issue 26's held-out layouts):
# tests/repos/gen_repos.py writes folders with the real file lists of bert-base-uncased, gpt2,
# all-MiniLM-L6-v2, a Keras SavedModel repo, a Keras 3 repo, a GGUF repo, a diffusers
# pipeline, a remote-code repo and a NeMo repo, each file from its real writer, then attack
# copies with one malicious file each, and two of the repos as a Hugging Face cache.
#   - benign: `stguard scan --fail-on warning REPO` prints no line but the summary and the
#     repo's deliberate warnings, and exactly these (file, code) pairs are warnings or worse:
#     DELIBERATE (what the design means to say) + TO_FIX (formats int does not read yet:
#     format_unknown, format_mismatch under a .bin name; a wrong message: listed so that the
#     day they are read this test fails and is updated); the exit status follows (1 when any
#     remain, 0 otherwise; the default scan 1 only for errors); every other file is ok, and
#     the repo holds the number of files its real list has;
#   - attacks: the replaced file carries the expected code and verdict, every other file is
#     judged as in the benign repo, --fail-on warning exits 1; known misses (MISSES: code a
#     loader runs that no rule sees yet) are asserted quiet, to be moved once caught;
#   - the cache: every snapshot file is judged as the same file of the plain folder, through
#     its blob; the attack repo cached is unsafe.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "torch, numpy, h5py, onnx, sentencepiece, flatbuffers, plyvel, yaml, google.protobuf"
"$PY" "$SRC/tests/repos/gen_repos.py" "$tmp/r" || { echo "FAIL: generator"; exit 1; }
cd "$tmp/r" || exit 1
for d in */; do
    d=${d%/}
    [ "$d" = outside ] && continue
    "$STGUARD_CLI" scan --format json "$d" >"$tmp/$d.json" 2>"$tmp/$d.err"
    echo $? >"$tmp/$d.rc"
    "$STGUARD_CLI" scan --fail-on warning "$d" >"$tmp/$d.txt" 2>&1
    echo $? >"$tmp/$d.failrc"
done
"$PY" - "$tmp" <<'EOF'
import json, os, sys
T = sys.argv[1]
fails = []
checks = 0


def load(d):
    lines = [json.loads(l) for l in open(os.path.join(T, d + ".json")) if l.strip()]
    recs = {r["path"][len(d) + 1:]: r for r in lines if r["type"] == "file"}
    return recs, lines[-1]


def loud(recs):
    """(file, code) of every finding of warning severity or worse."""
    return {(p, f["code"]) for p, r in recs.items() for f in r["findings"]
            if f["severity"] not in ("info",)}


def rc(d, kind):
    return int(open(os.path.join(T, d + "." + kind)).read())


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        fails.append(what)


# a libtorch archive (tch's VarStore::save): TorchScript's C++ loader reads its pickles with
# no Python import, but the archive holds a program (code/__torch__.py, a Module class that
# only declares its parameters), which docs/findings.md keeps a warning (torchscript_program,
# pickle_file): deliberate, and what still keeps these three repos from exit 0
RUST = {("rust_model.ot", "pickle_file"), ("rust_model.ot", "torchscript_program")}
REPOS = {
    # name: (files in the real list, deliberate warnings, expected-to-fix warnings)
    "bert-base-uncased": (16, RUST, set()),
    "gpt2": (26, RUST, set()),
    "all-MiniLM-L6-v2": (30, RUST, set()),
    # TO FIX: fingerprint.pb (beside saved_model.pb since TF 2.11) has no reader
    "keras-savedmodel": (9, set(), {("fingerprint.pb", "format_unknown")}),
    "keras3": (6, set(), set()),
    "llama-gguf": (5, set(), set()),
    # original/tokenizer.model is a tiktoken file under a SentencePiece name
    "llama3-instruct": (17, set(), set()),
    # tokenizer.model.v3, spm.model: SentencePiece under the names mistral_common and
    # DebertaV2Tokenizer give it
    "mistral-v0.3": (15, set(), set()),
    "deberta-v3-base": (8, RUST, set()),
    "stable-diffusion": (28, set(), set()),
    # auto_map names two modules shipped beside config.json: transformers runs them with
    # trust_remote_code=True (the .py files themselves are labelled code, quiet)
    "phi3-remote-code": (19, {("config.json", "remote_code")}, set()),
    "parakeet-nemo": (3, set(), set()),
    # compiled Core ML models (*.mlmodelc) as WhisperKit ships them: weights/weight.bin is
    # named by model.mil and read as blob storage (coreml-weights, below); TO FIX (no reader):
    # coremldata.bin, Core ML's compiled description, is format_mismatch (error) under .bin
    "whisperkit-coreml": (20, set(), {("openai_whisper-tiny/%s.mlmodelc/%s" % (m, f),
                                       "format_mismatch")
                                      for m in ("AudioEncoder", "MelSpectrogram", "TextDecoder")
                                      for f in ("coremldata.bin", "analytics/coremldata.bin")}),
    # TO FIX: CTranslate2's model.bin (faster-whisper) and fastText's model.bin: formats of
    # their own under the .bin name, format_mismatch (error)
    "faster-whisper": (6, set(), {("model.bin", "format_mismatch")}),
    "fasttext-lid": (3, set(), {("model.bin", "format_mismatch")}),
    # TO FIX: ggml_legacy says the format is superseded, but ggml (magic `ggml`) is the
    # format whisper.cpp's loader reads today
    "whisper-cpp": (4, set(), {("ggml-tiny.bin", "ggml_legacy"),
                               ("ggml-tiny.en.bin", "ggml_legacy")}),
    # TO FIX: HyperPyYAML's tags (`!new:`, `!ref`) are outside the YAML subset
    # (yaml_unsupported, a warning on every SpeechBrain repo); example audio matches no format
    "speechbrain-ecapa": (8, set(), {("hyperparams.yaml", "yaml_unsupported"),
                                     ("example1.wav", "format_unknown")}),
}
REPOS["keras-savedmodel"] = (10, set(), REPOS["keras-savedmodel"][2] | {
    # TO FIX: images (a README's figures, save_pretrained_keras' model.png) match no format
    ("model.png", "format_unknown")})
for d, (count, deliberate, tofix) in REPOS.items():
    recs, summary = load(d)
    check(len(recs) == count, "%s: %d files, want %d: %s" % (d, len(recs), count, sorted(recs)))
    got = loud(recs)
    check(got == deliberate | tofix, "%s: loud findings %s, want %s + %s" % (
        d, sorted(got), sorted(deliberate), sorted(tofix)))
    noisy = {p for p, _ in deliberate | tofix}
    bad = {p: r["verdict"] for p, r in recs.items() if p not in noisy and r["verdict"] != "ok"}
    check(not bad, "%s: not ok: %s" % (d, bad))
    check(not [p for p, _ in deliberate if recs[p]["verdict"] != "warn"],
          "%s: deliberate not warn" % d)
    errors = [f for r in recs.values() for f in r["findings"] if f["severity"] == "error"]
    check(rc(d, "rc") == (1 if errors else 0), "%s: default scan exit %d" % (d, rc(d, "rc")))
    want = 1 if noisy else 0
    check(rc(d, "failrc") == want, "%s: --fail-on warning exit %d, want %d" % (
        d, rc(d, "failrc"), want))
    # the text output: no line but the summary and the noisy files' records
    listed = set()
    for line in open(os.path.join(T, d + ".txt")):
        line = line.rstrip("\n")
        if line.startswith(d + "/"):
            listed.add(line[len(d) + 1:].rsplit(": ", 1)[0])
        elif not (line.startswith("  ") or line.startswith("(%d ok files not listed" %
                                                               (count - len(noisy)))
                  or line.startswith("%d files: " % count)):
            check(False, "%s: unexpected line %r" % (d, line))
    check(listed == noisy, "%s: text lists %s, want %s" % (d, sorted(listed), sorted(noisy)))
# the formats each kind of file is recognised as (none left to the generic readers when a
# reader exists): a change here is a regression or a fix to account for
FORMATS = {
    ("bert-base-uncased", "coreml/fill-mask/float32_model.mlpackage/Data/com.apple.CoreML/"
     "weights/weight.bin"): "coreml-weights",
    ("bert-base-uncased", "coreml/fill-mask/float32_model.mlpackage/Data/com.apple.CoreML/"
     "model.mlmodel"): "coreml-model",
    ("bert-base-uncased", "flax_model.msgpack"): "flax-msgpack",
    ("whisperkit-coreml", "openai_whisper-tiny/TextDecoder.mlmodelc/weights/weight.bin"):
        "coreml-weights",
    ("bert-base-uncased", "tf_model.h5"): "hdf5",
    ("bert-base-uncased", "model.onnx"): "onnx",
    ("all-MiniLM-L6-v2", "openvino/openvino_model.bin"): "openvino-weights",
    ("all-MiniLM-L6-v2", "openvino/openvino_model_qint8_quantized.xml"): "openvino-ir",
    ("all-MiniLM-L6-v2", "train_script.py"): "python_code",
    ("keras-savedmodel", "saved_model.pb"): "tf-savedmodel",
    ("keras-savedmodel", "variables/variables.index"): "tf-variables-index",
    ("keras-savedmodel", "variables/variables.data-00000-of-00001"): "tf-variables-data",
    ("gpt2", "64-8bits.tflite"): "tflite",
    ("keras-savedmodel", "keras_metadata.pb"): "keras",
    ("keras3", "model.keras"): "keras",
    ("keras3", "config.json"): "keras",
    ("keras3", "model.weights.h5"): "hdf5",
    ("llama-gguf", "Llama-3.2-1B-Instruct-Q8_0.gguf"): "gguf",
    ("llama3-instruct", "original/tokenizer.model"): "tiktoken",
    ("mistral-v0.3", "tokenizer.model.v3"): "sentencepiece",
    ("deberta-v3-base", "spm.model"): "sentencepiece",
    ("stable-diffusion", "v1-inference.yaml"): "yaml",
    ("phi3-remote-code", "tokenizer.model"): "sentencepiece",
    ("phi3-remote-code", "modeling_phi3.py"): "python_code",
    ("phi3-remote-code", "model.safetensors.index.json"): "safetensors-index",
    ("parakeet-nemo", "parakeet-tdt-0.6b-v2.nemo"): "nemo",
}
for (d, p), fmt in FORMATS.items():
    got = load(d)[0][p]["format"]
    check(got == fmt, "%s/%s: format %s, want %s" % (d, p, got, fmt))
# templates real models ship are found and checked (chat_template_found, info)
for d, p in (("llama-gguf", "Llama-3.2-1B-Instruct-Q4_K_M.gguf"),
             ("phi3-remote-code", "tokenizer_config.json")):
    codes = [f["code"] for f in load(d)[0][p]["findings"]]
    check(codes == ["chat_template_found"], "%s/%s: %s" % (d, p, codes))

# ---- attacks: (base repo, the one file replaced, the code it must carry, its verdict)
ATTACKS = {
    "keras-lambda": ("keras3", "model.keras", "keras_lambda", "unsafe"),
    "keras-h5-lambda": ("bert-base-uncased", "tf_model.h5", "keras_lambda", "unsafe"),
    "keras-metadata": ("keras-savedmodel", "keras_metadata.pb", "keras_lambda", "unsafe"),
    "template-gadget": ("phi3-remote-code", "tokenizer_config.json", "chat_template_unsafe",
                        "unsafe"),
    "gguf-template": ("llama-gguf", "Llama-3.2-1B-Instruct-Q4_K_M.gguf",
                      "chat_template_unsafe", "unsafe"),
    "hydra-target": ("parakeet-nemo", "parakeet-tdt-0.6b-v2.nemo", "hydra_target_unsafe",
                     "unsafe"),
    "automap-cross": ("bert-base-uncased", "config.json", "remote_code_cross_repo", "warn"),
    "pickle-payload": ("bert-base-uncased", "pytorch_model.bin", "pickle_global_dangerous",
                       "unsafe"),
    "onnx-escape": ("all-MiniLM-L6-v2", "onnx/model.onnx", "onnx_external_path_unsafe",
                    "unsafe"),
}
for name, (base, path, code, verdict) in ATTACKS.items():
    d = "attack-" + name
    recs, _ = load(d)
    brecs, _ = load(base)
    r = recs.get(path)
    check(r is not None and code in [f["code"] for f in r["findings"]] and
          r["verdict"] == verdict, "%s: %s: %s" % (d, path, r))
    others = {p: (x["verdict"], sorted(f["code"] for f in x["findings"]))
              for p, x in recs.items() if p != path}
    bothers = {p: (x["verdict"], sorted(f["code"] for f in x["findings"]))
               for p, x in brecs.items() if p != path}
    check(others == bothers, "%s: other files differ from %s: %s" % (
        d, base, {p: v for p, v in others.items() if bothers.get(p) != v}))
    check(rc(d, "failrc") == 1, "%s: --fail-on warning exit %d" % (d, rc(d, "failrc")))
    want = 1 if verdict == "unsafe" else 0
    check(rc(d, "rc") == want, "%s: default exit %d, want %d" % (d, rc(d, "rc"), want))

# ---- KNOWN MISSES, to fix (then move them to ATTACKS): code a loader runs that no rule sees.
# (copy of, the files the vector needs; each still ok, the other files as in the copied repo)
MISSES = {
    # sentence-transformers' Dense.load calls import_from_string(activation_function)()
    "st-dense-activation": ("all-MiniLM-L6-v2", ["modules.json", "2_Dense/config.json"]),
    # a modules.json type naming custom_st.py of the repo (imported with trust_remote_code)
    "st-custom-module": ("all-MiniLM-L6-v2", ["modules.json", "custom_st.py"]),
    # a model_index.json component naming unet/my_unet.py (diffusers' custom components)
    "diffusers-custom-component": ("stable-diffusion", ["model_index.json", "unet/my_unet.py"]),
}
# KNOWN WEAK, to fix: caught only as yaml_unsupported (a warning that says nothing of the code):
# HyperPyYAML's `!apply:os.system` runs while load_hyperpyyaml reads the file; want unsafe
recs, _ = load("attack-speechbrain-apply")
r = recs["hyperparams.yaml"]
check(r["verdict"] == "warn" and [f["code"] for f in r["findings"]] == ["yaml_unsupported"],
      "speechbrain-apply changed (now %s: move it to ATTACKS)" % r["verdict"])
for name, (base, paths) in MISSES.items():
    d = "attack-" + name
    recs, _ = load(d)
    brecs, _ = load(base)
    for p in paths:
        check(p in recs and recs[p]["verdict"] == "ok" and not loud({p: recs[p]}),
              "%s: %s is no longer quiet (caught? move it to ATTACKS): %s" % (d, p, recs.get(p)))
    check(loud({p: r for p, r in recs.items() if p not in paths}) == loud(brecs),
          "%s: other files differ from %s" % (d, base))

# ---- the Hugging Face cache: each snapshot file judged as the same file of the plain folder
lines = [json.loads(l) for l in open(os.path.join(T, "hub.json")) if l.strip()]
hub = {r["path"]: r for r in lines if r["type"] == "file"}
for repo_id, d, n in (("google-bert--bert-base-uncased", "bert-base-uncased", 16),
                      ("sentence-transformers--all-MiniLM-L6-v2", "all-MiniLM-L6-v2", 30)):
    plain, _ = load(d)
    mine = {p.split("/snapshots/", 1)[1].split("/", 1)[1]: r for p, r in hub.items()
            if p.startswith("hub/models--%s/snapshots/" % repo_id)}
    check(len(mine) == n and set(mine) == set(plain), "hub %s: %s" % (d, sorted(mine)))
    for p, r in mine.items():
        check(r["blob"] and "/blobs/" in r["blob"], "hub %s/%s: no blob %s" % (d, p, r["blob"]))
        a = (r["verdict"], r["format"], sorted(f["code"] for f in r["findings"]))
        b = (plain[p]["verdict"], plain[p]["format"], sorted(f["code"] for f in plain[p]["findings"]))
        check(a == b, "hub %s/%s: %s, folder %s" % (d, p, a, b))
check(lines[-1]["skipped_no_exist"] == 2, "hub summary %s" % lines[-1])
check(rc("hub", "failrc") == 1 and rc("hub", "rc") == 0, "hub exits")
lines = [json.loads(l) for l in open(os.path.join(T, "evil-hub.json")) if l.strip()]
bad = {r["path"].rsplit("/", 1)[1]: r["verdict"] for r in lines
       if r["type"] == "file" and r["verdict"] not in ("ok",)}
check(bad == {"pytorch_model.bin": "unsafe", "rust_model.ot": "warn"}, "evil hub: %s" % bad)
check(rc("evil-hub", "rc") == 1, "evil hub exit")

for f in fails:
    print("FAIL:", f)
print("%d checks, %d failed" % (checks, len(fails)))
sys.exit(1 if fails else 0)
EOF
