#!/usr/bin/python3
"""Writes signed models as OpenSSF model_signing 1.1.1 writes them, and tampered copies, for
tests/signing/script_verify.sh. Needs only python3-cryptography (Debian's 38.0.4).

model_signing itself is not packaged for Debian, so this follows its writer's code line by line
(sigstore/model-transparency at e3430730bca924e672b2e59f10524a7ffb5adf79, src/model_signing/):
- the manifest: every file of the model folder (itertools.chain((model_path,), glob("**/*"))),
  minus the ignored paths (a path-component prefix, serialization.py:58-70; the git paths of
  hashing.py:163-174 and the signature), each file's SHA-256 over its whole content
  (_hashing/io.py:114-130), named by its POSIX path relative to the model
  (_serialization/file.py:157-172), the resources sorted (manifest.py:449-452);
- the statement: signing.py:254-287 (Payload: resources {name, algorithm, digest}, the subject's
  digest = SHA-256 over the raw resource digests in order, predicate {serialization, resources},
  predicateType https://model_signing/signature/v1.0), written by protobuf's MessageToJson
  (sign_ec_key.py:104-106: indent 2);
- the serialization parameters: manifest.py:330-338 (method, hash_type, allow_symlinks, and
  ignore_paths when not empty);
- the signature: ECDSA with SHA-256/384/512 by curve (sign_ec_key.py:57-82) over the DSSE PAE
  with the in-toto payload type (sign_sigstore_pb.py:46-66), base64 (sign_ec_key.py:108-122);
- the bundle: media type v0.3 (sign_sigstore_pb.py:43), verificationMaterial publicKey.hint =
  hex SHA-256 of the PEM SubjectPublicKeyInfo (sign_ec_key.py:132-146) or x509CertificateChain
  [leaf DER, chain DER...] (sign_certificate.py:82-106), tlogEntries [], written compact in the
  field order sigstore_models' Bundle.to_json gives (as upstream's v1.1.0 vectors show:
  tests/signing/upstream/v1.1.0-*/model.sig).

Usage: gen_signing.py OUTDIR. Writes OUTDIR/keys/*.pem and one folder per case,
OUTDIR/<case>/{model/, model.sig, expect}; `expect` holds the verify options (one per line,
paths relative to OUTDIR) then a line "--", then the expected exit status and the finding
codes, sorted, space-separated (empty: verified).
"""
import base64
import datetime
import hashlib
import json
import os
import shutil
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PAYLOAD_TYPE = "application/vnd.in-toto+json"
GIT_PATHS = [".git", ".gitattributes", ".github", ".gitignore"]
OUT = sys.argv[1]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def safetensors_file(n=2):
    header = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}},
                        separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    return len(header).to_bytes(8, "little") + header + bytes(i % 251 for i in range(4 * n))


def make_model(root, big=False):
    """A small model folder: weights, config, a nested tokenizer, a hidden file, git files.
    big: 1 MiB of weights, more than a scan holds of a safetensors file (its header and about
    129 KiB, loader/window.h): its digest still covers every byte."""
    write(f"{root}/model.safetensors", safetensors_file(1 << 18 if big else 2))
    write(f"{root}/config.json", '{"architectures": ["Tiny"], "hidden_size": 2}\n')
    write(f"{root}/sub/tokenizer.json", '{"version": "1.0", "model": {"type": "BPE"}}\n')
    write(f"{root}/.hidden", "hidden files are signed too\n")
    write(f"{root}/.git/HEAD", "ref: refs/heads/main\n")
    write(f"{root}/.gitattributes", "*.safetensors filter=lfs\n")


def ignored(rel, ignores):
    parts = rel.split("/")
    return any(parts[:len(i.split("/"))] == i.split("/") for i in ignores)


def manifest(root, ignores, allow_symlinks=False):
    items = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if ignored(rel, ignores):
                continue
            if os.path.islink(full) and not allow_symlinks:
                raise ValueError(f"symlink {rel}")
            if os.path.isfile(full):
                with open(full, "rb") as f:
                    items[rel] = hashlib.sha256(f.read()).hexdigest()
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return [(k, items[k]) for k in sorted(items, key=lambda p: p.split("/"))]


def statement(name, resources, ser):
    root = hashlib.sha256(b"".join(bytes.fromhex(d) for _, d in resources)).hexdigest()
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": name, "digest": {"sha256": root}}],
        "predicateType": "https://model_signing/signature/v1.0",
        "predicate": {
            "serialization": ser,
            "resources": [{"name": n, "algorithm": "sha256", "digest": d} for n, d in resources],
        },
    }


def hash_for(key):
    return {256: hashes.SHA256(), 384: hashes.SHA384(), 521: hashes.SHA512()}[key.curve.key_size]


def pae(payload):
    return b"DSSEv1 %d %s %d " % (len(PAYLOAD_TYPE), PAYLOAD_TYPE.encode(), len(payload)) + payload


def bundle(payload, sig, material):
    return json.dumps({
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": material,
        "dsseEnvelope": {
            "payload": base64.b64encode(payload).decode(),
            "payloadType": PAYLOAD_TYPE,
            "signatures": [{"sig": base64.b64encode(sig).decode(), "keyid": ""}],
        },
    }, separators=(",", ":"))


def key_material(pub):
    pem = pub.public_bytes(serialization.Encoding.PEM,
                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return {"publicKey": {"hint": hashlib.sha256(pem).hexdigest()}, "tlogEntries": []}


def chain_material(certs):
    der = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in certs]
    return {"x509CertificateChain": {"certificates": [{"rawBytes": d} for d in der]},
            "tlogEntries": []}


def sign(priv, st, material, tamper=None):
    payload = json.dumps(st, indent=2).encode()
    sig = priv.sign(pae(payload), ec.ECDSA(hash_for(priv)))
    if tamper == "payload":  # signed, then edited
        payload = payload.replace(b'"sha256"', b'"sha256" ', 1)
    if tamper == "sig":
        sig = sig[:-1] + bytes([sig[-1] ^ 1])
    return bundle(payload, sig, material)


# ---------------------------------------------------------------- keys and certificates

def pem_pub(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


NOW = datetime.datetime(2026, 1, 1)


def cert(subject, key, issuer=None, issuer_key=None, ca=False, ku=True, eku=False,
         not_before=None, days=3650):
    if not_before is None:  # CAs from long before their leaves: the chain is checked then
        not_before = NOW - datetime.timedelta(days=1000 if ca else 1)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    b = (x509.CertificateBuilder().subject_name(name)
         .issuer_name(issuer.subject if issuer is not None else name)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(not_before).not_valid_after(not_before + datetime.timedelta(days=days)))
    b = b.add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    if ca or ku:
        b = b.add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False,
                                          key_encipherment=not ku, data_encipherment=False,
                                          key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                          encipher_only=False, decipher_only=False),
                            critical=True)
    if eku:
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
    return b.sign(issuer_key if issuer_key is not None else key, hashes.SHA256())


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(f"{OUT}/keys")
    keys = {n: ec.generate_private_key(c) for n, c in
            [("p256", ec.SECP256R1()), ("p384", ec.SECP384R1()), ("p521", ec.SECP521R1()),
             ("other", ec.SECP256R1()), ("k1", ec.SECP256K1())]}
    for n, k in keys.items():
        write(f"{OUT}/keys/{n}.pub.pem", pem_pub(k))
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    write(f"{OUT}/keys/rsa.pub.pem", pem_pub(rsa_key))

    root_key, mid_key, other_key = (ec.generate_private_key(ec.SECP384R1()) for _ in range(3))
    root = cert("test-root", root_key, ca=True)
    mid = cert("test-intermediate", mid_key, root, root_key, ca=True)
    other_root = cert("other-root", other_key, ca=True)
    old_root_key = ec.generate_private_key(ec.SECP256R1())
    old_root = cert("expired-root", old_root_key, ca=True, not_before=NOW - datetime.timedelta(
        days=400), days=30)
    write(f"{OUT}/keys/root.pem", root.public_bytes(serialization.Encoding.PEM))
    write(f"{OUT}/keys/other-root.pem", other_root.public_bytes(serialization.Encoding.PEM))
    write(f"{OUT}/keys/expired-root.pem", old_root.public_bytes(serialization.Encoding.PEM))
    leaf_key = keys["p256"]
    leaves = {
        "leaf": cert("model-signer", leaf_key, mid, mid_key),
        "leaf-eku": cert("eku-signer", leaf_key, mid, mid_key, ku=False, eku=True),
        "leaf-no-usage": cert("no-usage", leaf_key, mid, mid_key, ku=False),
        # checked at its notBefore, as model_signing does: expired later still verifies
        "leaf-expired": cert("expired-leaf", leaf_key, mid, mid_key,
                             not_before=NOW - datetime.timedelta(days=100), days=10),
        "leaf-of-expired-root": cert("late-leaf", leaf_key, old_root, old_root_key),
    }

    def case(name, opts, status, codes, mutate=None, material=None, priv=None, ignores=None,
             ser_extra=None, res_edit=None, tamper=None, sig_name="model.sig", link=False,
             before=None, st_edit=None, big=False):
        d = f"{OUT}/{name}"
        make_model(f"{d}/model", big)
        if before:
            before(f"{d}/model")
        if link:
            os.symlink("config.json", f"{d}/model/config-link.json")
        ign = GIT_PATHS + ["model.sig"] + (ignores or [])
        res = manifest(f"{d}/model", ign, allow_symlinks=link)
        ser = {"method": "files", "hash_type": "sha256", "allow_symlinks": link,
               "ignore_paths": sorted(ign)}
        ser.update(ser_extra or {})
        if res_edit:
            res = res_edit(res)
        st = statement("model", res, ser)
        if st_edit:
            st_edit(st)
        p = priv if priv is not None else keys["p256"]
        mat = material if material is not None else key_material(p.public_key())
        text = sign(p, st, mat, tamper)
        write(f"{d}/model/{sig_name}" if sig_name != "outside" else f"{d}/outside.sig", text)
        if mutate:
            mutate(f"{d}/model")
        with open(f"{d}/expect", "w") as f:
            f.write("\n".join(opts) + "\n--\n" + f"{status} " + " ".join(sorted(codes)) + "\n")

    k256 = ["--public-key", "keys/p256.pub.pem"]
    # verified, one per curve and method, and near misses of every file rule
    case("key-p256", k256, 0, [])
    case("key-p384", ["--public-key", "keys/p384.pub.pem"], 0, [], priv=keys["p384"])
    case("key-p521", ["--public-key", "keys/p521.pub.pem"], 0, [], priv=keys["p521"])
    chain = chain_material([leaves["leaf"], mid])
    case("cert", ["--certificate-chain", "keys/root.pem"], 0, [], material=chain)
    case("cert-eku", ["--certificate-chain", "keys/root.pem"], 0, [],
         material=chain_material([leaves["leaf-eku"], mid]))
    case("cert-expired-leaf", ["--certificate-chain", "keys/root.pem"], 0, [],
         material=chain_material([leaves["leaf-expired"], mid]))
    case("cert-two-chain-files", ["--certificate-chain", "keys/other-root.pem",
                                  "--certificate-chain", "keys/root.pem"], 0, [], material=chain)
    case("signed-ignore-path", k256, 0, [], ignores=["logs"],
         mutate=lambda m: write(f"{m}/logs/run.txt", "written after signing\n"))
    # model_signing ignores the git paths at the model's root only (hashing.py:163-174)
    case("nested-git-signed", k256, 0, [],
         before=lambda m: write(f"{m}/sub/.git/config", "[core]\n"))
    case("allow-symlinks", k256 + ["--allow-symlinks"], 0, [], link=True)
    # tampered
    def flip_last_byte(m):  # a tensor's data: the file stays valid safetensors
        with open(f"{m}/model.safetensors", "r+b") as f:
            f.seek(-1, os.SEEK_END)
            b = f.read(1)
            f.seek(-1, os.SEEK_END)
            f.write(bytes([b[0] ^ 0x01]))

    case("byte-changed", k256, 1, ["signed_file_modified"], mutate=flip_last_byte)

    def flip_middle_byte(m):  # a byte the scan's windows do not hold
        with open(f"{m}/model.safetensors", "r+b") as f:
            f.seek(1 << 19)
            b = f.read(1)
            f.seek(1 << 19)
            f.write(bytes([b[0] ^ 0x80]))

    case("byte-changed-large", k256, 1, ["signed_file_modified"], mutate=flip_middle_byte,
         big=True)
    case("file-added", k256, 1, ["signed_file_extra"],
         mutate=lambda m: write(f"{m}/extra.bin", b"\x80\x04K\x01."))
    case("file-removed", k256, 1, ["signed_file_missing"],
         mutate=lambda m: os.remove(f"{m}/config.json"))
    case("file-renamed", k256, 1, ["signed_file_extra", "signed_file_missing"],
         mutate=lambda m: os.rename(f"{m}/sub/tokenizer.json", f"{m}/sub/tokenizer2.json"))
    case("sig-name-near-miss", k256, 1, ["signed_file_extra"],
         mutate=lambda m: write(f"{m}/model.sig2", "not the signature\n"))
    case("nested-git-unsigned", k256, 1, ["signed_file_extra"],
         mutate=lambda m: write(f"{m}/sub/.git/config", "[core]\n"))
    case("symlink-refused", k256, 1, ["signed_file_unverifiable"], link=True)
    # stricter than the reference: a linked folder is neither hashed nor walked by it
    case("linked-folder", k256 + ["--allow-symlinks"], 1, ["signed_file_unverifiable"], link=True,
         mutate=lambda m: os.symlink(os.path.abspath(f"{m}/../outside"), f"{m}/plugins"),
         before=lambda m: write(f"{m}/../outside/plugin.py", "import os\n"))
    case("payload-edited", k256, 1, ["signature_invalid"], tamper="payload")
    case("signature-flipped", k256, 1, ["signature_invalid"], tamper="sig")
    case("wrong-key", ["--public-key", "keys/other.pub.pem"], 1, ["signature_untrusted"])
    case("wrong-key-no-hint", ["--public-key", "keys/other.pub.pem"], 1, ["signature_invalid"],
         material={"publicKey": {}, "tlogEntries": []})
    case("key-not-nist", ["--public-key", "keys/k1.pub.pem"], 1, ["signature_untrusted"],
         priv=keys["k1"])
    case("key-rsa", ["--public-key", "keys/rsa.pub.pem"], 1, ["signature_untrusted"])
    case("cert-wrong-root", ["--certificate-chain", "keys/other-root.pem"], 1,
         ["signature_untrusted"], material=chain)
    case("cert-no-intermediate", ["--certificate-chain", "keys/root.pem"], 1,
         ["signature_untrusted"], material=chain_material([leaves["leaf"]]))
    case("cert-no-usage", ["--certificate-chain", "keys/root.pem"], 1, ["signature_untrusted"],
         material=chain_material([leaves["leaf-no-usage"], mid]))
    case("cert-root-expired", ["--certificate-chain", "keys/expired-root.pem"], 1,
         ["signature_untrusted"], material=chain_material([leaves["leaf-of-expired-root"]]))
    case("cert-swapped-leaf", ["--certificate-chain", "keys/root.pem"], 1, ["signature_invalid"],
         material=chain, priv=keys["other"])
    case("root-digest-wrong", k256, 1, ["signature_statement_invalid"],
         st_edit=lambda st: st["subject"][0]["digest"].update(sha256="0" * 64))
    case("resource-twice", k256, 1, ["signature_statement_invalid"],
         res_edit=lambda r: r + [r[0]])
    case("shards", k256, 1, ["signature_unsupported"], ser_extra={"method": "shards"})
    case("blake3", k256, 1, ["signature_unsupported"], ser_extra={"hash_type": "blake3"})
    case("signature-outside", k256 + ["--signature", "signature-outside/outside.sig"], 0, [],
         sig_name="outside")


if __name__ == "__main__":
    main()
