#!/usr/bin/python3
"""Builds a Hugging Face hub cache as huggingface_hub lays it out (file_download.py):

  HUB/models--ORG--NAME/blobs/<etag>             content; etag = SHA-256 for Git LFS files,
                                                 the Git blob id (SHA-1 of "blob <size>\\0" +
                                                 content) for files kept in Git
  HUB/models--ORG--NAME/snapshots/<commit>/FILE  relative links to ../../blobs/<etag>
  HUB/models--ORG--NAME/refs/main                the commit hash (no newline)
  HUB/models--ORG--NAME/.no_exist/<commit>/FILE  empty markers of files the Hub does not have
  HUB/.locks/models--ORG--NAME/<etag>.lock       empty lock files

Three repos: org--single (one model.safetensors), org--sharded (an index and two shards),
org--torch (pytorch_model.bin written by torch.save), each with config.json, README.md and
.gitattributes; the sharded one with tokenizer files.

Usage: gen_hf_cache.py HUB VARIANT, VARIANT one of
  clean         the cache as downloaded
  tampered      one shard's blob changed after download (its name no longer matches)
  broken_index  the index names a shard the snapshot lacks (the blob is named correctly)
  junk_alias    single's model.safetensors is junk, and a second link `a` leads to that blob
  evil          torch's pytorch_model.bin is torch.save of an object whose __reduce__ calls
                os.system (never loaded here: the test asks tests/loaders/reach.py)
Prints nothing; the test reads the tree.
"""
import hashlib
import json
import os
import struct
import sys

COMMIT = "8f2e3a1b9c0d4e5f6a7b8c9d0e1f2a3b4c5d6e7f"


def safetensors(tensors, metadata=None):
    """A safetensors file as the reference writer lays it out (header padded to 8 bytes)."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    body = json.dumps(header, separators=(",", ":")).encode()
    body += b" " * ((-len(body)) % 8)
    return struct.pack("<Q", len(body)) + body + data


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def git_blob_id(content):
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


GITATTRIBUTES = (b"*.bin filter=lfs diff=lfs merge=lfs -text\n"
                 b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
                 b"*.pt filter=lfs diff=lfs merge=lfs -text\n")


def write_repo(hub, repo, files, lfs, no_exist, aliases=None, tamper=None):
    """files: name -> bytes; lfs: names stored in Git LFS (SHA-256 blob names)."""
    folder = os.path.join(hub, "models--" + repo.replace("/", "--"))
    blobs = os.path.join(folder, "blobs")
    snap = os.path.join(folder, "snapshots", COMMIT)
    os.makedirs(blobs, exist_ok=True)
    os.makedirs(snap, exist_ok=True)
    os.makedirs(os.path.join(folder, "refs"), exist_ok=True)
    with open(os.path.join(folder, "refs", "main"), "w") as f:
        f.write(COMMIT)
    locks = os.path.join(hub, ".locks", os.path.basename(folder))
    os.makedirs(locks, exist_ok=True)
    etags = {}
    for name, content in files.items():
        etag = hashlib.sha256(content).hexdigest() if name in lfs else git_blob_id(content)
        etags[name] = etag
        stored = content
        if tamper == name:
            stored = content[:-1] + bytes([content[-1] ^ 0xFF])
        with open(os.path.join(blobs, etag), "wb") as f:
            f.write(stored)
        os.symlink(os.path.join("..", "..", "blobs", etag), os.path.join(snap, name))
        open(os.path.join(locks, etag + ".lock"), "wb").close()
    for alias, name in (aliases or {}).items():
        os.symlink(os.path.join("..", "..", "blobs", etags[name]), os.path.join(snap, alias))
    marker_dir = os.path.join(folder, ".no_exist", COMMIT)
    os.makedirs(marker_dir, exist_ok=True)
    for name in no_exist:
        open(os.path.join(marker_dir, name), "wb").close()


def torch_bin(evil):
    import torch  # Debian's python3-torch

    class Payload:
        def __reduce__(self):
            return (os.system, ("echo reached",))

    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "hfgen-%d.bin" % os.getpid())
    state = {"dense.weight": torch.arange(6, dtype=torch.float32).reshape(2, 3),
             "dense.bias": torch.zeros(2)}
    if evil:
        state["extra"] = Payload()
    torch.save(state, path)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return data


def main():
    hub, variant = sys.argv[1], sys.argv[2]
    if variant not in ("clean", "tampered", "broken_index", "junk_alias", "evil"):
        sys.exit("unknown variant " + variant)
    os.makedirs(hub, exist_ok=True)
    readme = b"---\nlicense: apache-2.0\n---\n# A small model\n\nFor tests.\n"
    config = json.dumps({"architectures": ["TinyModel"], "hidden_size": 2,
                         "torch_dtype": "float32"}, indent=2).encode() + b"\n"

    single = safetensors({"dense.weight": ("F32", [2, 3], f32(*range(6))),
                          "dense.bias": ("F32", [2], f32(0, 0))}, {"format": "pt"})
    if variant == "junk_alias":
        single = b"\x00\x01\x02 this is not a model \xff\xfe" * 4
    write_repo(hub, "org/single",
               {"model.safetensors": single, "config.json": config, "README.md": readme,
                ".gitattributes": GITATTRIBUTES},
               lfs={"model.safetensors"}, no_exist=["adapter_config.json", "generation_config.json"],
               aliases={"a": "model.safetensors"} if variant == "junk_alias" else None)

    shard1 = safetensors({"embed.weight": ("F32", [2, 2], f32(1, 2, 3, 4))}, {"format": "pt"})
    shard2 = safetensors({"head.weight": ("F32", [2], f32(5, 6))}, {"format": "pt"})
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    weight_map = {"embed.weight": names[0], "head.weight": names[1]}
    if variant == "broken_index":
        weight_map["lm_head.weight"] = "model-00003-of-00003.safetensors"
    index = json.dumps({"metadata": {"total_size": 24}, "weight_map": weight_map},
                       indent=2).encode() + b"\n"
    tokenizer = json.dumps({"version": "1.0", "model": {"type": "WordLevel",
                                                        "vocab": {"[UNK]": 0, "a": 1}}}).encode()
    write_repo(hub, "org/sharded",
               {names[0]: shard1, names[1]: shard2, "model.safetensors.index.json": index,
                "config.json": config, "tokenizer.json": tokenizer,
                "tokenizer_config.json": b'{"model_max_length": 512}\n',
                "special_tokens_map.json": b'{"unk_token": "[UNK]"}\n', "README.md": readme,
                ".gitattributes": GITATTRIBUTES},
               lfs=set(names), no_exist=["model.safetensors"],
               tamper=names[1] if variant == "tampered" else None)

    write_repo(hub, "org/torch",
               {"pytorch_model.bin": torch_bin(variant == "evil"), "config.json": config,
                "README.md": readme, ".gitattributes": GITATTRIBUTES},
               lfs={"pytorch_model.bin"}, no_exist=[])


if __name__ == "__main__":
    main()
