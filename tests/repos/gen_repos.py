#!/usr/bin/python3
"""Folders shaped like real Hugging Face model repos, each file written by its real writer where
Debian has one, small, for tests/repos/script_repos.sh:

  gen_repos.py OUT

The file lists (names and folders) are those of the Hub repos each folder is named after, as
the Hub's API lists them (`siblings`; for gpt2 as `hf download openai-community/gpt2 --dry-run`
prints them, 26 files) and as the libraries that write them lay them out:

  OUT/bert-base-uncased/      google-bert/bert-base-uncased: 16 files, Core ML package included
  OUT/gpt2/                   openai-community/gpt2: 26 files (three TFLite, onnx/ of ten)
  OUT/all-MiniLM-L6-v2/       sentence-transformers/all-MiniLM-L6-v2: modules.json,
                              1_Pooling/, onnx/ (8 exports), openvino/ (2 IRs), train_script.py
  OUT/keras-savedmodel/       a keras-io repo as push_to_hub_keras (TF 2.x) writes it:
                              saved_model.pb, keras_metadata.pb, fingerprint.pb, variables/
  OUT/keras3/                 a Keras 3 repo (keras.saving.save_model("hf://...")): config.json,
                              metadata.json, model.weights.h5; plus a model.keras
  OUT/llama-gguf/             a GGUF repo (bartowski-style: quantizations, a chat template in
                              each GGUF's tokenizer.chat_template)
  OUT/llama3-instruct/        meta-llama/Meta-Llama-3-8B-Instruct: four shards, original/ with
                              consolidated.00.pth, params.json and a tiktoken tokenizer.model
  OUT/mistral-v0.3/           mistralai/Mistral-7B-Instruct-v0.3: tokenizer.model.v3 and
                              consolidated.safetensors beside the transformers files
  OUT/deberta-v3-base/        microsoft/deberta-v3-base: spm.model
  OUT/stable-diffusion/       a diffusers pipeline (stable-diffusion-v1-5): model_index.json,
                              unet/, vae/, text_encoder/, safety_checker/, scheduler/,
                              tokenizer/, feature_extractor/, the single-file checkpoint and
                              its v1-inference.yaml (ldm `target:` keys, no hydra `_target_`)
  OUT/phi3-remote-code/       a remote-code repo (microsoft/Phi-3-mini-4k-instruct's layout):
                              auto_map -> configuration_phi3.py, modeling_phi3.py (present),
                              sharded safetensors, SentencePiece tokenizer.model, a chat template
  OUT/parakeet-nemo/          a NeMo repo: one .nemo (tests/remotecode/gen_nemo.py)

Formats int does not read yet (the test lists their findings as expected to fix):
  OUT/whisperkit-coreml/      argmaxinc/whisperkit-coreml: compiled Core ML (*.mlmodelc/)
  OUT/faster-whisper/         Systran/faster-whisper-tiny: a CTranslate2 model.bin
  OUT/fasttext-lid/           facebook/fasttext-language-identification: fastText's model.bin
  OUT/whisper-cpp/            ggerganov/whisper.cpp: ggml-*.bin (magic ggml)
  (and keras-savedmodel's model.png, fingerprint.pb)

Known misses (OUT/attack-<name>/, the test asserts them still quiet):
  st-dense-activation, st-custom-module, diffusers-custom-component (see misses()),
  speechbrain-apply (speechbrain-ecapa's hyperparams.yaml with `!apply:os.system`)
  OUT/speechbrain-ecapa/      speechbrain/spkrec-ecapa-voxceleb: HyperPyYAML hyperparams.yaml

Attack variants, each a copy of one repo above with ONE file replaced (OUT/attack-<name>/):
  keras-lambda       keras3/model.keras with a Lambda layer (marshalled bytecode)
  keras-h5-lambda    bert-base-uncased/tf_model.h5 with a Keras 2 model_config holding a Lambda
  keras-metadata     keras-savedmodel/keras_metadata.pb with a Lambda layer
  template-gadget    phi3-remote-code/tokenizer_config.json chat_template reaching os
  gguf-template      llama-gguf's Q4_K_M.gguf with that gadget in tokenizer.chat_template
  hydra-target       parakeet-nemo's .nemo with encoder._target_ os.system
  automap-cross      bert-base-uncased/config.json with an auto_map into another repo
  pickle-payload     bert-base-uncased/pytorch_model.bin: torch.save of an os.system reduce
  onnx-escape        all-MiniLM-L6-v2/onnx/model.onnx whose external data is ../../../x.bin
                     (an outside file that exists)

OUT/hub/: bert-base-uncased and all-MiniLM-L6-v2 as huggingface_hub caches them
(models--ORG--NAME/blobs/<etag>, snapshots/<rev>/ relative links, refs/main, .no_exist/);
OUT/evil-hub/: the pickle-payload repo the same way (models--evil--bert).

Writers: torch.save (python3-torch), h5py, onnx (onnx.save_model, reloaded and checked),
sentencepiece's trainer, msgpack through tests/flax/flaxpack.py (flax.serialization's layout),
protobuf through tests/keras/gen_savedmodel.py, Keras' HDF5 and zip layouts through
tests/keras/gen_hdf5.py, the OpenVINO IR and Core ML package of tests/siblings, the .nemo of
tests/remotecode/gen_nemo.py, libtorch's own rust_model.ot (tests/data/torchscript/libtorch),
the chat templates real models ship (tests/templates/data/benign), safetensors as the
reference writer lays it out (tests/cli/gen_hf_cache.py), GGUF to the specification
(tests/fixtures/gen_gguf.py), TFLite through python3-flatbuffers' Builder (file identifier
TFL3, Model.version 3, as tflite's schema.fbs declares)."""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
for sub in ("cli", "flax", "siblings", "remotecode", "fixtures", "flatbuf"):
    sys.path.insert(0, os.path.join(TESTS, sub))

import flaxpack  # noqa: E402
import gen_data  # noqa: E402
import gen_gguf  # noqa: E402
import gen_hf_cache  # noqa: E402
import gen_nemo  # noqa: E402
import gen_openvino  # noqa: E402
import gen_siblings  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OUT = sys.argv[1]
TEMPLATES = os.path.join(TESTS, "templates", "data", "benign")
LIBTORCH = os.path.join(TESTS, "data", "torchscript", "libtorch")
GADGET = "{{ cycler.__init__.__globals__.os.popen('id').read() }}"
GITATTRIBUTES = "".join("%s filter=lfs diff=lfs merge=lfs -text\n" % p for p in (
    "*.7z", "*.arrow", "*.bin", "*.h5", "*.joblib", "*.mlmodel", "*.msgpack", "*.nemo", "*.onnx",
    "*.ot", "*.pb", "*.pt", "*.pth", "*.safetensors", "*.tflite", "*.gguf", "*.ckpt",
    "saved_model/**/*", "variables/*", "tokenizer.json"))


def put(repo, rel, data):
    path = os.path.join(OUT, repo, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w", encoding=None if isinstance(
            data, bytes) else "utf-8") as f:
        f.write(data)
    return path


def jdump(obj):
    return json.dumps(obj, indent=2) + "\n"


def safetensors(names):
    t = {n: ("F32", [2, 2], gen_hf_cache.f32(1, 2, 3, 4)) for n in names}
    return gen_hf_cache.safetensors(t, {"format": "pt"})


def torch_bin(names, payload=False):
    state = {n: torch.arange(4, dtype=torch.float32).reshape(2, 2) for n in names}
    if payload:
        class Payload:
            def __reduce__(self):
                return (os.system, ("echo reached",))
        state["extra"] = Payload()
    with tempfile.TemporaryDirectory() as d:  # the archive's folder is the file's stem
        path = os.path.join(d, "pytorch_model.bin")
        torch.save(state, path)
        return open(path, "rb").read()


def onnx_model(path, location=None, n=16):
    """A MatMul + Add graph as torch.onnx.export would leave it; location: external data."""
    w = numpy_helper.from_array(np.arange(n * n, dtype=np.float32).reshape(n, n), name="W")
    b = numpy_helper.from_array(np.ones(n, dtype=np.float32), name="B")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["input_ids", "W"], ["H"]),
         helper.make_node("Add", ["H", "B"], ["last_hidden_state"])], "main_graph",
        [helper.make_tensor_value_info("input_ids", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, n])], [w, b])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                          producer_name="pytorch", producer_version="2.1.0")
    m.ir_version = 8
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if location:
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=location, size_threshold=0)
    else:
        onnx.save_model(m, path)
        onnx.checker.check_model(onnx.load(path))


def flax_msgpack(top):
    rng = np.random.default_rng(1)
    tree = {top: {"embeddings": {"word_embeddings": {
        "embedding": rng.standard_normal((12, 4)).astype(np.float32)}},
        "LayerNorm": {"scale": np.ones(4, np.float32), "bias": np.zeros(4, np.float32)}}}
    return flaxpack.serialize(tree)


def tf_weights_h5(path, top, names):
    """tf_model.h5 as transformers' TFPreTrainedModel.save_pretrained writes it (tf.keras
    save_weights, HDF5): root attributes backend, keras_version, layer_names; a group per
    layer holding weight_names and the variables under their scoped names."""
    with h5py.File(path, "w") as f:
        f.attrs["backend"] = b"tensorflow"
        f.attrs["keras_version"] = b"2.15.0"
        f.attrs["layer_names"] = np.array([top.encode()])
        g = f.create_group(top)
        g.attrs["weight_names"] = np.array([n.encode() for n in names])
        for n in names:
            g.create_dataset(n, data=np.ones((2, 2), dtype=np.float32))


def tflite(description):
    """A TFLite flatbuffer (schema.fbs: Model { version:uint; operator_codes; subgraphs;
    description:string; buffers; }, file_identifier "TFL3") with one empty buffer."""
    import flatbuffers
    b = flatbuffers.Builder(256)
    desc = b.CreateString(description)
    b.StartObject(0)
    empty = b.EndObject()  # Buffer {}
    b.StartVector(4, 1, 4)
    b.PrependUOffsetTRelative(empty)
    buffers = b.EndVector()
    b.StartVector(4, 0, 4)
    subgraphs = b.EndVector()
    b.StartObject(5)
    b.PrependUint32Slot(0, 3, 0)
    b.PrependUOffsetTRelativeSlot(2, subgraphs, 0)
    b.PrependUOffsetTRelativeSlot(3, desc, 0)
    b.PrependUOffsetTRelativeSlot(4, buffers, 0)
    b.Finish(b.EndObject(), file_identifier=b"TFL3")
    data = bytes(b.Output())
    assert data[4:8] == b"TFL3"
    return data


def vocab_txt():
    return "".join(t + "\n" for t in ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                      "the", "of", "and", "##s", "##ing", "paris"])


def bert_tokenizer_json():
    vocab = {t: i for i, t in enumerate(vocab_txt().split())}
    return json.dumps({"version": "1.0", "truncation": None, "padding": None,
                       "added_tokens": [{"id": 0, "content": "[PAD]", "special": True}],
                       "normalizer": {"type": "BertNormalizer", "lowercase": True},
                       "pre_tokenizer": {"type": "BertPreTokenizer"},
                       "model": {"type": "WordPiece", "unk_token": "[UNK]",
                                 "continuing_subword_prefix": "##", "vocab": vocab}})


def bert():
    r = "bert-base-uncased"
    names = ["bert.embeddings.word_embeddings.weight", "cls.predictions.bias"]
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "LICENSE", "Apache License\nVersion 2.0, January 2004\n")
    put(r, "README.md", "---\nlanguage: en\nlicense: apache-2.0\ndatasets:\n- bookcorpus\n"
        "- wikipedia\n---\n\n# BERT base model (uncased)\n")
    put(r, "config.json", jdump({"architectures": ["BertForMaskedLM"], "model_type": "bert",
                                 "hidden_size": 768, "vocab_size": 30522,
                                 "transformers_version": "4.6.0.dev0"}))
    gen_siblings.coreml_package(os.path.join(OUT, r, "coreml", "fill-mask",
                                             "float32_model.mlpackage"))
    put(r, "flax_model.msgpack", flax_msgpack("bert"))
    onnx_model(os.path.join(OUT, r, "model.onnx"))
    put(r, "model.safetensors", safetensors(names))
    put(r, "pytorch_model.bin", torch_bin(names))
    shutil.copy(os.path.join(LIBTORCH, "rust_model.ot"), os.path.join(OUT, r, "rust_model.ot"))
    tf_weights_h5(os.path.join(OUT, r, "tf_model.h5"), "bert",
                  ["tf_bert_for_masked_lm/bert/embeddings/word_embeddings/weight:0"])
    put(r, "tokenizer.json", bert_tokenizer_json())
    put(r, "tokenizer_config.json", jdump({"do_lower_case": True, "model_max_length": 512}))
    put(r, "vocab.txt", vocab_txt())


def gpt2_files(r, sub=""):
    put(r, sub + "merges.txt", "#version: 0.2\n\u0120 t\n\u0120 a\nh e\ni n\n\u0120t he\n")
    put(r, sub + "vocab.json", json.dumps({"!": 0, "\u0120t": 1, "he": 2, "<|endoftext|>": 3}))
    put(r, sub + "tokenizer.json", json.dumps({"version": "1.0", "model": {
        "type": "BPE", "vocab": {"!": 0, "\u0120t": 1, "he": 2}, "merges": ["\u0120 t"]}}))
    put(r, sub + "tokenizer_config.json", jdump({"model_max_length": 1024}))
    put(r, sub + "generation_config.json", jdump({"bos_token_id": 50256, "eos_token_id": 50256}))


def gpt2():
    r = "gpt2"
    names = ["h.0.attn.c_attn.weight", "wte.weight"]
    put(r, ".gitattributes", GITATTRIBUTES)
    for name, desc in (("64-8bits.tflite", "TOCO Converted."), ("64-fp16.tflite", "fp16"),
                       ("64.tflite", "TOCO Converted.")):
        put(r, name, tflite(desc))
    put(r, "README.md", "---\nlanguage: en\ntags:\n- exbert\nlicense: mit\n---\n\n# GPT-2\n")
    put(r, "config.json", jdump({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
                                 "n_embd": 768, "vocab_size": 50257}))
    put(r, "flax_model.msgpack", flax_msgpack("transformer"))
    put(r, "model.safetensors", safetensors(names))
    put(r, "pytorch_model.bin", torch_bin(names))
    shutil.copy(os.path.join(LIBTORCH, "rust_model.ot"), os.path.join(OUT, r, "rust_model.ot"))
    tf_weights_h5(os.path.join(OUT, r, "tf_model.h5"), "transformer",
                  ["tfgp_t2lm_head_model/transformer/wte/weight:0"])
    gpt2_files(r)
    put(r, "onnx/config.json", jdump({"model_type": "gpt2", "use_cache": True}))
    put(r, "onnx/special_tokens_map.json", jdump({"bos_token": "<|endoftext|>"}))
    gpt2_files(r, "onnx/")
    for name in ("decoder_model.onnx", "decoder_model_merged.onnx", "decoder_with_past_model.onnx"):
        onnx_model(os.path.join(OUT, r, "onnx", name))


def minilm():
    r = "all-MiniLM-L6-v2"
    names = ["embeddings.word_embeddings.weight", "pooler.dense.weight"]
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "1_Pooling/config.json", jdump({"word_embedding_dimension": 384,
                                           "pooling_mode_cls_token": False,
                                           "pooling_mode_mean_tokens": True}))
    put(r, "README.md", "---\nlanguage: en\nlicense: apache-2.0\nlibrary_name: "
        "sentence-transformers\npipeline_tag: sentence-similarity\n---\n\n# all-MiniLM-L6-v2\n")
    put(r, "config.json", jdump({"architectures": ["BertModel"], "model_type": "bert",
                                 "hidden_size": 384}))
    put(r, "config_sentence_transformers.json", jdump({"__version__": {
        "sentence_transformers": "2.0.0", "transformers": "4.6.1", "pytorch": "1.8.1"}}))
    put(r, "data_config.json", jdump([{"name": "stackexchange_title_body_small.jsonl.gz",
                                       "lines": 364001, "weight": 17}]))
    put(r, "model.safetensors", safetensors(names))
    put(r, "modules.json", jdump([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"}]))
    for name in ("model.onnx", "model_O1.onnx", "model_O2.onnx", "model_O3.onnx",
                 "model_O4.onnx", "model_qint8_arm64.onnx", "model_qint8_avx512.onnx",
                 "model_qint8_avx512_vnni.onnx", "model_quint8_avx2.onnx"):
        onnx_model(os.path.join(OUT, r, "onnx", name))
    ov = os.path.join(OUT, r, "openvino")
    gen_openvino.write(ov, "openvino_model", gen_openvino.model("Model0", False))
    gen_openvino.write(ov, "openvino_model_qint8_quantized", gen_openvino.model("Model1", True))
    put(r, "pytorch_model.bin", torch_bin(names))
    shutil.copy(os.path.join(LIBTORCH, "rust_model.ot"), os.path.join(OUT, r, "rust_model.ot"))
    put(r, "sentence_bert_config.json", jdump({"max_seq_length": 256, "do_lower_case": False}))
    put(r, "special_tokens_map.json", jdump({"unk_token": "[UNK]", "sep_token": "[SEP]"}))
    tf_weights_h5(os.path.join(OUT, r, "tf_model.h5"), "bert",
                  ["tf_bert_model/bert/embeddings/word_embeddings/weight:0"])
    put(r, "tokenizer.json", bert_tokenizer_json())
    put(r, "tokenizer_config.json", jdump({"do_lower_case": True, "model_max_length": 512,
                                           "tokenizer_class": "BertTokenizer"}))
    put(r, "train_script.py", "import argparse\nimport gzip\nimport json\n\n"
        "from sentence_transformers import SentenceTransformer, models\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--model', default='nreimers/MiniLM-L6-H384-uncased')\n"
        "    args = parser.parse_args()\n    word = models.Transformer(args.model)\n"
        "    print(json.dumps({'model': args.model}))\n\n\nif __name__ == '__main__':\n"
        "    main()\n")
    put(r, "vocab.txt", vocab_txt())


def run_keras_generators(tmp):
    """tests/keras' generators write at import time: run them and take their files."""
    k, s = os.path.join(tmp, "h5"), os.path.join(tmp, "sm")
    os.makedirs(k)
    for gen, out in (("gen_hdf5.py", k), ("gen_savedmodel.py", s)):
        subprocess.run([sys.executable, os.path.join(TESTS, "keras", gen), out], check=True,
                       stdout=subprocess.DEVNULL)
    return k, s


def keras(tmp):
    k, s = run_keras_generators(tmp)
    r = "keras-savedmodel"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlibrary_name: keras\ntags:\n- timeseries\n---\n\n## Model "
        "description\n\nTimeseries anomaly detection using an Autoencoder.\n")
    put(r, "config.json", jdump({"name": "model", "layers": [{"class_name": "InputLayer"}]}))
    shutil.copy(os.path.join(s, "ok-tf2-keras", "saved_model.pb"),
                os.path.join(OUT, r, "saved_model.pb"))
    shutil.copy(os.path.join(s, "ok-tf2-keras", "keras_metadata.pb"),
                os.path.join(OUT, r, "keras_metadata.pb"))
    # fingerprint.proto (TF 2.11+): FingerprintDef { uint64 saved_model_checksum = 1;
    # uint64 graph_def_program_hash = 2; ... VersionDef version = 6 { int32 producer = 1; } }
    put(r, "fingerprint.pb", b"\x08\x91\xa3\xd5\xe7\x09\x10\xe2\xc4\xa6\x88\x0a"
        b"\x18\x83\x86\x89\x8c\x0f\x20\xa4\xc8\xec\x90\x02\x28\x95\xaa\xbf\x04\x32\x02\x08\x01")
    # variables/: a TensorBundle (tensor_bundle.proto, table format of tensorflow/core/lib/io)
    put(r, "variables/variables.data-00000-of-00001", np.ones(8, np.float32).tobytes())
    # TensorFlow's table format is LevelDB's: a table LevelDB itself writes (tests/flatbuf)
    put(r, "variables/variables.index", gen_data.leveldb_table())
    # huggingface_hub's save_pretrained_keras(plot_model=True) writes the model's plot
    put(r, "model.png", png())
    put(r, "history.json", jdump({"loss": [0.5, 0.25], "val_loss": [0.6, 0.3]}))

    r = "keras3"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlibrary_name: keras\n---\n\nThis model was saved with Keras 3.\n")
    with __import__("zipfile").ZipFile(os.path.join(k, "ok-seq-latest.keras")) as z:
        for name in ("config.json", "metadata.json", "model.weights.h5"):
            put(r, name, z.read(name))
    shutil.copy(os.path.join(k, "ok-seq-latest.keras"), os.path.join(OUT, r, "model.keras"))
    return k, s


def png():
    """A 1x1 RGB PNG (signature, IHDR, IDAT, IEND, each chunk with its CRC)."""
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def gguf_file(template):
    G = gen_gguf
    kvs = [G.kv("general.architecture", G.STR, "llama"),
           G.kv("general.name", G.STR, "Llama 3.2 1B Instruct"),
           G.kv("general.file_type", G.U32, 15),
           G.kv("llama.context_length", G.U32, 131072),
           G.kv("tokenizer.ggml.model", G.STR, "gpt2"),
           G.kv("tokenizer.ggml.tokens", G.ARR, (G.STR, ["<|begin_of_text|>", "a", "b"])),
           G.kv("tokenizer.chat_template", G.STR, template),
           G.kv("general.quantization_version", G.U32, 2)]
    return G.gguf(kvs=kvs, tensors=[("token_embd.weight", [8, 4], 0),
                                    ("output_norm.weight", [8], 0)])


def llama_gguf():
    r = "llama-gguf"
    t = open(os.path.join(TEMPLATES, "llama3.2-3b.jinja"), encoding="utf-8").read()
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nbase_model: meta-llama/Llama-3.2-1B-Instruct\nlicense: llama3.2"
        "\nquantized_by: bartowski\npipeline_tag: text-generation\n---\n\n## Llamacpp imatrix "
        "Quantizations of Llama-3.2-1B-Instruct\n")
    for q in ("Q4_K_M", "Q8_0", "f16"):
        put(r, "Llama-3.2-1B-Instruct-%s.gguf" % q, gguf_file(t))


def llama3():
    """meta-llama/Meta-Llama-3-8B-Instruct: sharded safetensors, and original/ with the
    consolidated checkpoint, params.json and tokenizer.model, which is a tiktoken BPE file (the
    reference code's Tokenizer loads it with tiktoken's load_tiktoken_bpe, whose format
    dump_tiktoken_bpe writes: base64(token) rank, one a line, by rank)."""
    r = "llama3-instruct"
    put(r, ".gitattributes", GITATTRIBUTES)
    for name in ("LICENSE", "USE_POLICY.md"):
        put(r, name, "META LLAMA 3 COMMUNITY LICENSE AGREEMENT\n")
    put(r, "README.md", "---\nlanguage:\n- en\npipeline_tag: text-generation\nlicense: llama3\n"
        "---\n\n## Model Details\n")
    put(r, "config.json", jdump({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                 "torch_dtype": "bfloat16", "vocab_size": 128256}))
    put(r, "generation_config.json", jdump({"bos_token_id": 128000,
                                            "eos_token_id": [128001, 128009]}))
    shards = ["model-%05d-of-00004.safetensors" % i for i in range(1, 5)]
    names = ["model.embed_tokens.weight", "model.layers.0.mlp.up_proj.weight",
             "model.norm.weight", "lm_head.weight"]
    for shard, name in zip(shards, names):
        put(r, shard, safetensors([name]))
    put(r, "model.safetensors.index.json", jdump({"metadata": {"total_size": 64},
                                                  "weight_map": dict(zip(names, shards))}))
    put(r, "original/consolidated.00.pth", torch_bin(["tok_embeddings.weight", "norm.weight"]))
    put(r, "original/params.json", json.dumps({"dim": 4096, "n_layers": 32, "n_heads": 32,
                                               "vocab_size": 128256, "rope_theta": 500000.0}))
    ranks = [bytes([b]) for b in range(256)] + [b" the", b"in", b"er"]
    put(r, "original/tokenizer.model", b"".join(
        __import__("base64").b64encode(t) + b" %d\n" % i for i, t in enumerate(ranks)))
    put(r, "special_tokens_map.json", jdump({"bos_token": "<|begin_of_text|>"}))
    put(r, "tokenizer.json", json.dumps({"version": "1.0", "model": {
        "type": "BPE", "vocab": {"!": 0}, "merges": []}}))
    template = open(os.path.join(TEMPLATES, "llama3-8b.jinja"), encoding="utf-8").read()
    put(r, "tokenizer_config.json", jdump({"bos_token": "<|begin_of_text|>",
                                           "chat_template": template,
                                           "tokenizer_class": "PreTrainedTokenizerFast"}))


def spm_model(tmp, name):
    """A SentencePiece model from sentencepiece's own trainer (a small unigram model)."""
    import sentencepiece as spm
    d = os.path.join(tmp, name)
    os.makedirs(d)
    with open(os.path.join(d, "c.txt"), "w") as f:
        for i in range(200):
            f.write("the quick brown fox jumps over the lazy dog %d times\n" % i)
    spm.SentencePieceTrainer.train(input=os.path.join(d, "c.txt"), vocab_size=60,
                                   model_prefix=os.path.join(d, "t"), minloglevel=2)
    return open(os.path.join(d, "t.model"), "rb").read()


def mistral(tmp):
    """mistralai/Mistral-7B-Instruct-v0.3: transformers' shards and mistral's own
    consolidated.safetensors, params.json, tokenizer.model.v3 (mistral_common's versioned name)
    beside tokenizer.model."""
    r = "mistral-v0.3"
    sp = spm_model(tmp, "mistral")
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlicense: apache-2.0\nbase_model: mistralai/Mistral-7B-v0.3\n---\n"
        "\n# Model Card for Mistral-7B-Instruct-v0.3\n")
    put(r, "config.json", jdump({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
                                 "vocab_size": 32768}))
    put(r, "consolidated.safetensors", safetensors(["tok_embeddings.weight", "norm.weight"]))
    put(r, "generation_config.json", jdump({"bos_token_id": 1, "eos_token_id": 2}))
    shards = ["model-%05d-of-00003.safetensors" % i for i in range(1, 4)]
    names = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"]
    for shard, name in zip(shards, names):
        put(r, shard, safetensors([name]))
    put(r, "model.safetensors.index.json", jdump({"metadata": {"total_size": 48},
                                                  "weight_map": dict(zip(names, shards))}))
    put(r, "params.json", jdump({"dim": 4096, "n_layers": 32, "vocab_size": 32768}))
    put(r, "special_tokens_map.json", jdump({"bos_token": "<s>", "eos_token": "</s>"}))
    put(r, "tokenizer.json", json.dumps({"version": "1.0", "model": {
        "type": "BPE", "vocab": {"<unk>": 0}, "merges": []}}))
    put(r, "tokenizer.model", sp)
    put(r, "tokenizer.model.v3", sp)
    template = open(os.path.join(TEMPLATES, "mistral-7b-instruct-fp16.jinja"),
                    encoding="utf-8").read()
    put(r, "tokenizer_config.json", tokenizer_config(template))
    # microsoft/deberta-v3-base: DebertaV2Tokenizer's spm.model
    r = "deberta-v3-base"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlanguage: en\nlicense: mit\n---\n\n## DeBERTaV3\n")
    put(r, "config.json", jdump({"model_type": "deberta-v2", "hidden_size": 768}))
    put(r, "pytorch_model.bin", torch_bin(["deberta.embeddings.word_embeddings.weight"]))
    shutil.copy(os.path.join(LIBTORCH, "rust_model.ot"), os.path.join(OUT, r, "rust_model.ot"))
    put(r, "spm.model", spm_model(tmp, "deberta"))
    tf_weights_h5(os.path.join(OUT, r, "tf_model.h5"), "deberta",
                  ["tf_deberta_v2_model/deberta/embeddings/word_embeddings/weight:0"])
    put(r, "tokenizer_config.json", jdump({"do_lower_case": False, "vocab_type": "spm"}))


def diffusers():
    r = "stable-diffusion"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlicense: creativeml-openrail-m\ntags:\n- stable-diffusion\n"
        "- text-to-image\ninference: true\n---\n\n# Stable Diffusion v1-5 Model Card\n")
    put(r, "model_index.json", jdump({
        "_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.6.0",
        "feature_extractor": ["transformers", "CLIPImageProcessor"],
        "safety_checker": ["stable_diffusion", "StableDiffusionSafetyChecker"],
        "scheduler": ["diffusers", "PNDMScheduler"],
        "text_encoder": ["transformers", "CLIPTextModel"],
        "tokenizer": ["transformers", "CLIPTokenizer"],
        "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"]}))
    put(r, "feature_extractor/preprocessor_config.json", jdump({
        "crop_size": 224, "do_center_crop": True, "do_normalize": True, "do_resize": True,
        "feature_extractor_type": "CLIPFeatureExtractor", "image_mean": [0.4815, 0.4578, 0.4082],
        "resample": 3, "size": 224}))
    put(r, "scheduler/scheduler_config.json", jdump({
        "_class_name": "PNDMScheduler", "_diffusers_version": "0.6.0", "beta_end": 0.012,
        "beta_schedule": "scaled_linear", "beta_start": 0.00085, "num_train_timesteps": 1000,
        "skip_prk_steps": True}))
    for sub, cls in (("safety_checker", "StableDiffusionSafetyChecker"),
                     ("text_encoder", "CLIPTextModel")):
        put(r, sub + "/config.json", jdump({"architectures": [cls], "model_type": "clip"}))
        put(r, sub + "/model.safetensors", safetensors(["w"]))
        put(r, sub + "/pytorch_model.bin", torch_bin(["w"]))
        put(r, sub + "/model.fp16.safetensors", safetensors(["w"]))
    put(r, "tokenizer/merges.txt", "#version: 0.2\ni n\nt h\n")
    put(r, "tokenizer/special_tokens_map.json", jdump({"bos_token": "<|startoftext|>"}))
    put(r, "tokenizer/tokenizer_config.json", jdump({"model_max_length": 77,
                                                     "tokenizer_class": "CLIPTokenizer"}))
    put(r, "tokenizer/vocab.json", json.dumps({"!": 0, "in</w>": 1}))
    for sub, cls in (("unet", "UNet2DConditionModel"), ("vae", "AutoencoderKL")):
        put(r, sub + "/config.json", jdump({"_class_name": cls, "_diffusers_version": "0.6.0"}))
        put(r, sub + "/diffusion_pytorch_model.safetensors", safetensors(["conv_in.weight"]))
        put(r, sub + "/diffusion_pytorch_model.fp16.safetensors", safetensors(["conv_in.weight"]))
        put(r, sub + "/diffusion_pytorch_model.bin", torch_bin(["conv_in.weight"]))
    put(r, "v1-5-pruned-emaonly.safetensors", safetensors(["model.diffusion_model.out.2.bias"]))
    put(r, "v1-5-pruned-emaonly.ckpt", torch_bin(["model.diffusion_model.out.2.bias"]))
    # CompVis' configs/stable-diffusion/v1-inference.yaml shape: ldm's instantiate_from_config
    # reads `target:` (no hydra `_target_`)
    put(r, "v1-inference.yaml", "model:\n  base_learning_rate: 1.0e-04\n"
        "  target: ldm.models.diffusion.ddpm.LatentDiffusion\n  params:\n"
        "    linear_start: 0.00085\n    linear_end: 0.0120\n    num_timesteps_cond: 1\n"
        "    first_stage_key: \"jpg\"\n    cond_stage_key: \"txt\"\n    image_size: 64\n"
        "    channels: 4\n    scale_factor: 0.18215\n    use_ema: False\n\n"
        "    unet_config:\n      target: ldm.modules.diffusionmodules.openaimodel.UNetModel\n"
        "      params:\n        image_size: 32\n        in_channels: 4\n"
        "        attention_resolutions: [ 4, 2, 1 ]\n        channel_mult: [ 1, 2, 4, 4 ]\n"
        "        use_checkpoint: True\n\n"
        "    cond_stage_config:\n      target: ldm.modules.encoders.modules.FrozenCLIPEmbedder\n")


def phi3(tmp):
    r = "phi3-remote-code"
    put(r, ".gitattributes", GITATTRIBUTES)
    for name in ("CODE_OF_CONDUCT.md", "NOTICE.md", "SECURITY.md"):
        put(r, name, "# %s\n\nMicrosoft.\n" % name[:-3])
    put(r, "LICENSE", "MIT License\n\nCopyright (c) Microsoft Corporation.\n")
    put(r, "README.md", "---\nlicense: mit\npipeline_tag: text-generation\n---\n\n## Model "
        "Summary\n\nPhi-3-Mini-4K-Instruct.\n")
    put(r, "added_tokens.json", jdump({"<|assistant|>": 32001, "<|end|>": 32007}))
    put(r, "config.json", jdump({
        "_name_or_path": "Phi-3-mini-4k-instruct", "architectures": ["Phi3ForCausalLM"],
        "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config",
                     "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"},
        "model_type": "phi3", "hidden_size": 3072, "torch_dtype": "bfloat16"}))
    put(r, "configuration_phi3.py", '""" Phi-3 model configuration"""\n\n'
        "from transformers.configuration_utils import PretrainedConfig\n\n\n"
        "class Phi3Config(PretrainedConfig):\n    model_type = \"phi3\"\n")
    put(r, "modeling_phi3.py", '""" PyTorch Phi-3 model."""\n\nimport torch\nfrom torch import '
        "nn\n\nfrom .configuration_phi3 import Phi3Config\n\n\nclass Phi3ForCausalLM(nn.Module):"
        "\n    config_class = Phi3Config\n")
    put(r, "sample_finetune.py", "import datasets\nimport torch\nfrom transformers import "
        "AutoModelForCausalLM\n\nprint('fine-tune')\n")
    put(r, "generation_config.json", jdump({"bos_token_id": 1, "eos_token_id": [32000, 32007]}))
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    put(r, shards[0], safetensors(["model.embed_tokens.weight"]))
    put(r, shards[1], safetensors(["lm_head.weight"]))
    put(r, "model.safetensors.index.json", jdump({
        "metadata": {"total_size": 32},
        "weight_map": {"model.embed_tokens.weight": shards[0], "lm_head.weight": shards[1]}}))
    put(r, "special_tokens_map.json", jdump({"bos_token": "<s>", "eos_token": "<|endoftext|>"}))
    put(r, "tokenizer.json", json.dumps({"version": "1.0", "model": {
        "type": "BPE", "vocab": {"<unk>": 0, "<s>": 1}, "merges": []}}))
    spm_dir = os.path.join(tmp, "spm")
    os.makedirs(spm_dir)
    import sentencepiece as spm
    with open(os.path.join(spm_dir, "c.txt"), "w") as f:
        for i in range(200):
            f.write("the quick brown fox jumps over the lazy dog %d times\n" % i)
    spm.SentencePieceTrainer.train(input=os.path.join(spm_dir, "c.txt"), vocab_size=60,
                                   model_prefix=os.path.join(spm_dir, "t"), minloglevel=2,
                                   byte_fallback=False)
    shutil.copy(os.path.join(spm_dir, "t.model"), os.path.join(OUT, r, "tokenizer.model"))
    template = open(os.path.join(TEMPLATES, "phi3-3.8b.jinja"), encoding="utf-8").read()
    put(r, "tokenizer_config.json", tokenizer_config(template))


def tokenizer_config(template):
    return jdump({"add_bos_token": True, "bos_token": "<s>", "chat_template": template,
                  "eos_token": "<|endoftext|>", "legacy": False, "model_max_length": 4096,
                  "tokenizer_class": "LlamaTokenizer"})


def nemo():
    r = "parakeet-nemo"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlicense: cc-by-4.0\nlibrary_name: nemo\ntags:\n- "
        "automatic-speech-recognition\n---\n\n# Parakeet TDT 0.6B\n")
    gen_nemo.write_nemo(os.path.join(OUT, r, "parakeet-tdt-0.6b-v2.nemo"),
                        gen_nemo.to_yaml(gen_nemo.asr_config()))


def not_read_yet():
    """Repos of formats int has no reader for (their files are format_unknown, or
    format_mismatch under a .bin name): the test lists them as expected to fix."""
    # argmaxinc/whisperkit-coreml: compiled Core ML models (X.mlmodelc/: coremldata.bin,
    # analytics/coremldata.bin, metadata.json, model.mil, weights/weight.bin); no Manifest.json
    # names the weights, and coremldata.bin is Core ML's compiled description
    r = "whisperkit-coreml"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlicense: mit\ntags:\n- whisper\n- coreml\n---\n\n# WhisperKit\n")
    put(r, "config.json", jdump({"name": "whisperkit-coreml", "version": "0.2"}))
    for part in ("AudioEncoder", "MelSpectrogram", "TextDecoder"):
        d = "openai_whisper-tiny/%s.mlmodelc/" % part
        put(r, d + "coremldata.bin", b"\x08\x08\x12\x04\x0a\x02ab" + bytes(24))
        put(r, d + "analytics/coremldata.bin", b"\x0a\x06abcdef" + bytes(10))
        put(r, d + "metadata.json", jdump([{"metadataOutputVersion": "3.0",
                                            "specificationVersion": 7}]))
        # the MIL text Core ML's compiler writes for an iOS 16 program: each constant kept
        # in the weights names them by BLOBFILE(path = "@model_path/weights/weight.bin")
        put(r, d + "model.mil", "program(1.0)\n[buildInfo = dict<tensor<string, []>, tensor<"
            "string, []>>({{\"coremlc-version\", \"1436.100.10\"}})]\n{\n    func main<ios16>("
            "tensor<fp16, [1, 80, 1, 3000]> melspectrogram_features) {\n        tensor<fp16, "
            "[4, 8]> w_to_fp16 = const()[name = tensor<string, []>(\"w_to_fp16\"), val = "
            "tensor<fp16, [4, 8]>(BLOBFILE(path = tensor<string, []>(\"@model_path/weights/"
            "weight.bin\"), offset = tensor<uint64, []>(64)))];\n    } -> (encoder_output_embeds)"
            ";\n}\n")
        blob = bytes(64)
        data = struct.pack("<II", 1, 2) + bytes(56)
        data += struct.pack("<IIQQQ", 0xDEADBEEF, 1, len(blob), len(data) + 64, 0) + bytes(32)
        put(r, d + "weights/weight.bin", data + blob)
    put(r, "openai_whisper-tiny/config.json", jdump({"model_type": "whisper"}))
    put(r, "openai_whisper-tiny/generation_config.json", jdump({"max_length": 448}))
    # Systran/faster-whisper-tiny: a CTranslate2 model.bin (the header models/model.cc reads:
    # uint32 binary version, the spec name as uint16 length + bytes with its NUL, uint32
    # revision, uint32 variable count: none here)
    r = "faster-whisper"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlicense: mit\nlibrary_name: ctranslate2\n---\n\n# Whisper tiny "
        "model for CTranslate2\n")
    put(r, "config.json", jdump({"alignment_heads": [[2, 2]], "lang_ids": [50259],
                                 "suppress_ids": [1, 2]}))
    put(r, "model.bin", struct.pack("<IH", 6, 8) + b"whisper\x00" + struct.pack("<II", 3, 0))
    put(r, "tokenizer.json", json.dumps({"version": "1.0", "model": {
        "type": "BPE", "vocab": {"!": 0}, "merges": []}}))
    put(r, "vocabulary.txt", "!\n\"\n#\n")
    # facebook/fasttext-language-identification: fastText's binary model.bin (magic
    # 793712314, version 12, then the Args block)
    r = "fasttext-lid"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlicense: cc-by-nc-4.0\nlibrary_name: fasttext\n---\n\n# fastText "
        "(Language Identification)\n")
    put(r, "model.bin", struct.pack("<ii", 793712314, 12) + struct.pack("<12i", *range(12)) +
        struct.pack("<d", 1e-4))
    # ggerganov/whisper.cpp: ggml models (magic `ggml`, then whisper's hyperparameters), the
    # format whisper.cpp's loader reads today
    r = "whisper-cpp"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlicense: mit\n---\n\n# OpenAI's Whisper models converted to "
        "ggml format\n")
    for name in ("ggml-tiny.bin", "ggml-tiny.en.bin"):
        put(r, name, struct.pack("<I", 0x67676D6C) + struct.pack(
            "<11i", 51865, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1) + bytes(16))


SPEECHBRAIN_YAML = """# ############################################################################
# Model: ECAPA big for Speaker verification
# ############################################################################

n_mels: 80
pretrained_path: speechbrain/spkrec-ecapa-voxceleb

compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>

mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False

embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    channels: [1024, 1024, 1024, 1024, 3072]
    lin_neurons: 192

modules:
    compute_features: !ref <compute_features>
    embedding_model: !ref <embedding_model>

pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
    paths:
        embedding_model: !ref <pretrained_path>/embedding_model.ckpt
"""


def speechbrain():
    """speechbrain/spkrec-ecapa-voxceleb: hyperparams.yaml in HyperPyYAML (`!new:`, `!ref`
    tags: load_hyperpyyaml imports and instantiates what `!new:`/`!apply:` name), the .ckpt
    state dicts, label_encoder.txt, and the example audio the model card plays."""
    r = "speechbrain-ecapa"
    put(r, ".gitattributes", GITATTRIBUTES)
    put(r, "README.md", "---\nlanguage: en\nlicense: apache-2.0\ntags:\n- speechbrain\n"
        "- embeddings\n---\n\n# Speaker Verification with ECAPA-TDNN embeddings on Voxceleb\n")
    put(r, "hyperparams.yaml", SPEECHBRAIN_YAML)
    for name in ("classifier.ckpt", "embedding_model.ckpt", "mean_var_norm_emb.ckpt"):
        put(r, name, torch_bin(["weight"]))
    put(r, "label_encoder.txt", "'id10001' => 0\n'id10002' => 1\n================\n"
        "'starting_index' => 0\n")
    put(r, "example1.wav", b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00"
        b"\x80>\x00\x00\x00}\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
    # the attack: !apply: runs its callable while the YAML loads
    r = attack("speechbrain-apply", "speechbrain-ecapa")
    put(r, "hyperparams.yaml", SPEECHBRAIN_YAML + "\nbackdoor: !apply:os.system\n    - id\n")


def misses():
    """Code a loader runs that no rule of int sees yet: copies of all-MiniLM-L6-v2 and
    stable-diffusion, each with the files one vector needs. The test asserts they are still
    quiet (expected to fix: move them to the attacks once caught)."""
    # sentence-transformers' Dense.load: import_from_string(config["activation_function"])()
    # (3.0 and before unconditionally; later releases unless trust_remote_code or "torch.")
    r = attack("st-dense-activation", "all-MiniLM-L6-v2")
    put(r, "modules.json", jdump([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]))
    put(r, "2_Dense/config.json", jdump({"in_features": 384, "out_features": 384, "bias": True,
                                         "activation_function": "os.fork"}))
    # a modules.json type naming a module shipped in the repo: sentence-transformers imports
    # it from the repo with trust_remote_code=True (as transformers does auto_map)
    r = attack("st-custom-module", "all-MiniLM-L6-v2")
    put(r, "modules.json", jdump([{"idx": 0, "name": "0", "path": "",
                                   "type": "custom_st.CustomTransformer"}]))
    put(r, "custom_st.py", "import os\n\n\nclass CustomTransformer:\n    pass\n")
    # a diffusers pipeline whose model_index.json names a component module of the repo:
    # DiffusionPipeline.from_pretrained loads it as custom code (trust_remote_code)
    r = attack("diffusers-custom-component", "stable-diffusion")
    index = json.load(open(os.path.join(OUT, r, "model_index.json")))
    index["unet"] = ["my_unet", "MyUNet"]
    put(r, "model_index.json", jdump(index))
    put(r, "unet/my_unet.py", "import os\n\n\nclass MyUNet:\n    pass\n")


def attack(name, base):
    dst = os.path.join(OUT, "attack-" + name)
    shutil.copytree(os.path.join(OUT, base), dst, symlinks=True)
    return "attack-" + name


def attacks(k, s):
    r = attack("keras-lambda", "keras3")
    shutil.copy(os.path.join(k, "bad-keras_lambda-latest.keras"),
                os.path.join(OUT, r, "model.keras"))
    r = attack("keras-h5-lambda", "bert-base-uncased")
    shutil.copy(os.path.join(k, "bad-keras_lambda-earliest.h5"), os.path.join(OUT, r, "tf_model.h5"))
    r = attack("keras-metadata", "keras-savedmodel")
    shutil.copy(os.path.join(s, "bad-keras_lambda-metadata", "keras_metadata.pb"),
                os.path.join(OUT, r, "keras_metadata.pb"))
    r = attack("template-gadget", "phi3-remote-code")
    put(r, "tokenizer_config.json", tokenizer_config(GADGET))
    r = attack("gguf-template", "llama-gguf")
    put(r, "Llama-3.2-1B-Instruct-Q4_K_M.gguf", gguf_file(GADGET))
    r = attack("hydra-target", "parakeet-nemo")
    os.unlink(os.path.join(OUT, r, "parakeet-tdt-0.6b-v2.nemo"))
    gen_nemo.write_nemo(os.path.join(OUT, r, "parakeet-tdt-0.6b-v2.nemo"), gen_nemo.variant(
        lambda c: c["encoder"].update({"_target_": "os.system", "_args_": ["id"]})))
    r = attack("automap-cross", "bert-base-uncased")
    put(r, "config.json", jdump({"architectures": ["BertForMaskedLM"], "model_type": "bert",
                                 "auto_map": {"AutoModel": "evil-org/helper--modeling_x.X"}}))
    r = attack("pickle-payload", "bert-base-uncased")
    put(r, "pytorch_model.bin", torch_bin(["bert.embeddings.word_embeddings.weight"], True))
    r = attack("onnx-escape", "all-MiniLM-L6-v2")
    os.makedirs(os.path.join(OUT, "outside"), exist_ok=True)
    onnx_model(os.path.join(OUT, "outside", "o", "x.onnx"), "x.bin")  # writes OUT/outside/o/x.bin
    m = onnx.load(os.path.join(OUT, r, "onnx", "model.onnx"))
    t = m.graph.initializer[0]
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    for key, value in (("location", "../../outside/o/x.bin"), ("offset", "0"), ("length", "1024")):
        t.external_data.add(key=key, value=value)
    t.ClearField("raw_data")
    with open(os.path.join(OUT, r, "onnx", "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    os.unlink(os.path.join(OUT, "outside", "o", "x.onnx"))


LFS_SUFFIXES = (".bin", ".h5", ".msgpack", ".onnx", ".ot", ".safetensors", ".tflite", ".gguf",
                ".mlmodel", ".nemo", ".ckpt", ".pb")


def repo_files(folder):
    """(path in the repo, content, stored in Git LFS) of every file, in walk order."""
    for base, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(base, name), folder)
            lfs = name.endswith(LFS_SUFFIXES) or rel.startswith("variables/") or "/weights/" in rel
            yield rel, open(os.path.join(base, name), "rb").read(), lfs


def hub_repo(hub, repo_id, folder, rev):
    """folder as huggingface_hub caches repo_id (file_download.py): blobs named by SHA-256 for
    Git LFS files and by Git blob id for the others, relative snapshot links, refs/main."""
    top = os.path.join(hub, "models--" + repo_id.replace("/", "--"))
    os.makedirs(os.path.join(top, "blobs"), exist_ok=True)
    os.makedirs(os.path.join(top, "refs"), exist_ok=True)
    with open(os.path.join(top, "refs", "main"), "w") as f:
        f.write(rev)
    for rel, data, lfs in repo_files(folder):
        etag = hashlib.sha256(data).hexdigest() if lfs else gen_hf_cache.git_blob_id(data)
        link = os.path.join(top, "snapshots", rev, rel)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        with open(os.path.join(top, "blobs", etag), "wb") as f:
            f.write(data)
        os.symlink(os.path.relpath(os.path.join(top, "blobs", etag), os.path.dirname(link)), link)
    marker = os.path.join(top, ".no_exist", rev)
    os.makedirs(marker, exist_ok=True)
    open(os.path.join(marker, "adapter_config.json"), "wb").close()


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        bert()
        gpt2()
        minilm()
        k, s = keras(tmp)
        llama_gguf()
        llama3()
        mistral(tmp)
        diffusers()
        phi3(tmp)
        nemo()
        attacks(k, s)
        not_read_yet()
        misses()
        speechbrain()
    hub = os.path.join(OUT, "hub")
    hub_repo(hub, "google-bert/bert-base-uncased", os.path.join(OUT, "bert-base-uncased"),
             "86b5e0934494bd15c9632b12f734a8a67f723594")
    hub_repo(hub, "sentence-transformers/all-MiniLM-L6-v2",
             os.path.join(OUT, "all-MiniLM-L6-v2"), "c9745ed1d9f207416be6d2e6f8de32d1f16199bf")
    evil = os.path.join(OUT, "evil-hub")
    hub_repo(evil, "evil/bert", os.path.join(OUT, "attack-pickle-payload"),
             "0123456789abcdef0123456789abcdef01234567")


if __name__ == "__main__":
    main()
