"""Benign tokenizer files and repository-shaped folders: python3 gen_tokenizers.py OUTDIR.

- SentencePiece models from sentencepiece's own trainer (Debian's python3-sentencepiece: a
  unigram model with byte fallback, a BPE model), loaded back with SentencePieceProcessor.
- A tiktoken file as tiktoken's dump_tiktoken_bpe writes it (one "base64(token) rank" line per
  token, sorted by rank; tiktoken is not in Debian), read back as load_tiktoken_bpe reads it.
- vocab.txt as BertTokenizer.save_vocabulary writes it (one token a line, in id order) and
  merges.txt as GPT2Tokenizer.save_vocabulary does ("#version: 0.2", then "a b" lines).
- Two folders shaped like Hub repositories (bert-base-uncased, gpt2: the file names of their
  real file lists), with a Flax checkpoint from tests/flax/flaxpack.py and the JSON files.
"""
import base64
import json
import os
import sys

import numpy as np
import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flaxpack  # noqa: E402

WORDS = ("the quick brown fox jumps over the lazy dog while seven wizards quietly hex "
         "jumbled pancakes and bright vixens jump").split()


def sentencepiece_models(out):
    corpus = os.path.join(out, "corpus.txt")
    with open(corpus, "w") as f:
        for i in range(300):
            f.write(" ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(12)) + " %d\n" % i)
    for prefix, kind, extra in (("unigram", "unigram", {"byte_fallback": True}),
                                ("bpe", "bpe", {})):
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(out, prefix),
                                       vocab_size=300 if extra else 80, model_type=kind,
                                       minloglevel=2, **extra)
    os.remove(corpus)
    names = {"unigram.model": "tokenizer.model", "bpe.model": "spiece.model"}
    for src, dst in names.items():
        os.replace(os.path.join(out, src), os.path.join(out, dst))
        os.remove(os.path.join(out, src.replace(".model", ".vocab")))
        sp = spm.SentencePieceProcessor()
        assert sp.Load(os.path.join(out, dst)) and sp.GetPieceSize() > 0, dst
    return list(names.values())


def tiktoken_file(out):
    ranks = {bytes([b]): b for b in range(256)}
    for w in WORDS:
        ranks.setdefault(w.encode(), len(ranks))
        ranks.setdefault(b" " + w.encode(), len(ranks))
    path = os.path.join(out, "tiny_base.tiktoken")
    with open(path, "wb") as f:
        for token, rank in sorted(ranks.items(), key=lambda x: x[1]):
            f.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    back = {base64.b64decode(t): int(r) for t, r in (l.split() for l in
                                                      open(path, "rb").read().splitlines() if l)}
    assert back == ranks
    return ["tiny_base.tiktoken"]


def bert_repo(out):
    d = os.path.join(out, "bert-base-uncased")
    os.makedirs(d)
    vocab = ["[PAD]"] + ["[unused%d]" % i for i in range(5)] + ["[UNK]", "[CLS]", "[SEP]",
                                                               "[MASK]"] + WORDS + ["##s",
                                                                                    "##ing", "é"]
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        for tok in vocab:
            f.write(tok + "\n")
    rng = np.random.default_rng(7)
    tree = {"bert": {"embeddings": {"word_embeddings": {
        "embedding": rng.standard_normal((len(vocab), 8)).astype(np.float32)}}}}
    with open(os.path.join(d, "flax_model.msgpack"), "wb") as f:
        f.write(flaxpack.serialize(tree))
    json_files = {
        "config.json": {"architectures": ["BertForMaskedLM"], "model_type": "bert"},
        "tokenizer_config.json": {"do_lower_case": True, "model_max_length": 512},
        "tokenizer.json": {"version": "1.0", "model": {"type": "WordPiece",
                                                       "vocab": {t: i for i, t in enumerate(vocab)}}},
    }
    for name, obj in json_files.items():
        with open(os.path.join(d, name), "w") as f:
            json.dump(obj, f)
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("# BERT base model (uncased)\n")


def gpt2_repo(out):
    d = os.path.join(out, "gpt2")
    os.makedirs(d)
    with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in (("\u0120", "t"), ("\u0120", "a"), ("h", "e"), ("i", "n"), ("\u0120t", "he")):
            f.write("%s %s\n" % (a, b))
    with open(os.path.join(d, "vocab.json"), "w") as f:
        json.dump({"!": 0, "\u0120t": 1, "he": 2}, f)
    rng = np.random.default_rng(8)
    tree = {"transformer": {"wte": {"embedding": rng.standard_normal((3, 4)).astype(np.float32)},
                            "h": {"0": {"ln_1": {"scale": np.ones(4, np.float32),
                                                 "bias": np.zeros(4, np.float32)}}}}}
    with open(os.path.join(d, "flax_model.msgpack"), "wb") as f:
        f.write(flaxpack.serialize(tree))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "gpt2"}, f)


def main(out):
    files = sentencepiece_models(out) + tiktoken_file(out)
    bert_repo(out)
    gpt2_repo(out)
    print("\n".join(files))


if __name__ == "__main__":
    main(sys.argv[1])
