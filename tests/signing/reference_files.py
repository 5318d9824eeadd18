#!/usr/bin/python3
"""The file half of model_signing's verify, run from its own source: hashes a model with
model_signing.hashing.Config (its walk, ignore rules, link rule and SHA-256) as
verifying.py:100-118 does after the signature checked, and compares the result with the resources
the signature lists (verifying.py:120-124, manifest.py:445-447). Prints one line: "match",
"mismatch", or "error <exception type>" (the walk refused, e.g. a symbolic link).

Usage: reference_files.py MODEL_SIGNING_SRC MODEL SIGNATURE [--allow-symlinks]
       [--no-ignore-git-paths] [--ignore-paths PATH]...
MODEL_SIGNING_SRC: a checkout's src/ (sigstore/model-transparency). Only model_signing's hashing,
manifest and _serialization modules are imported (they sign nothing); its package __init__ (which
imports the signers and sigstore) is replaced by an empty one and the `blake3` module, which the
files method with SHA-256 never calls, by a stub. The signature is read with json and base64: its
signature is not checked here (stguard's part, tests/signing/script_verify.sh)."""
import base64
import importlib.util
import json
import pathlib
import sys
import types

src, model, sig = sys.argv[1], sys.argv[2], sys.argv[3]
rest = sys.argv[4:]
allow_symlinks = "--allow-symlinks" in rest
ignore_git = "--no-ignore-git-paths" not in rest
cli_ignores = [rest[i + 1] for i, a in enumerate(rest) if a == "--ignore-paths"]

stub = types.ModuleType("blake3")  # names only: the sha256 files method never calls it
stub.blake3 = type("blake3", (), {"AUTO": -1})
sys.modules["blake3"] = stub
pkg = types.ModuleType("model_signing")
pkg.__path__ = [str(pathlib.Path(src) / "model_signing")]
sys.modules["model_signing"] = pkg
from model_signing import hashing, manifest  # noqa: E402
from model_signing._hashing import hashing as hashing_core  # noqa: E402

bundle = json.loads(pathlib.Path(sig).read_text(encoding="utf-8"))
payload = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
pred = payload["predicate"]
ser = pred["serialization"]
expected = manifest.Manifest(
    "model",
    [manifest.FileManifestItem(path=pathlib.PurePosixPath(r["name"]),
                               digest=hashing_core.Digest(r["algorithm"],
                                                          bytes.fromhex(r["digest"])))
     for r in pred["resources"]],
    manifest._FileSerialization(ser["hash_type"], ser["allow_symlinks"],
                                ser.get("ignore_paths", [])))


def resolve(p):  # _cli.py:159-171
    root = pathlib.Path(model).resolve()
    cand = (pathlib.Path(p) if pathlib.Path(p).is_absolute() else pathlib.Path.cwd() / p).resolve()
    try:
        return [cand.relative_to(root)]
    except ValueError:
        return []


ignored = [q for p in cli_ignores + [sig] for q in resolve(p)]
config = (hashing.Config().set_ignored_paths(paths=ignored, ignore_git_paths=ignore_git)
          .set_allow_symlinks(allow_symlinks))
if "ignore_paths" in ser:  # verifying.py:102-106
    config.add_ignored_paths(model_path=model, paths=ser["ignore_paths"])
try:
    actual = config.hash(model)
except Exception as e:  # the walk refuses what it cannot hash
    print("error", type(e).__name__)
    sys.exit(0)
print("match" if actual == expected else "mismatch")
