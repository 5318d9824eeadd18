#!/usr/bin/python3
"""Writes real framework outputs for the pickle scanner's tests into OUTDIR.

Benign (must never come out unsafe or invalid): torch.save in the legacy format
(_use_new_zipfile_serialization=False) of a state_dict, a training checkpoint with optimizer
state, a bf16 nn.Parameter and a whole nn.Module (benign classes); the data.pkl of zip-format
saves; joblib.dump of arrays, a dict and an object array; numpy .npy (plain and object arrays);
plain pickles of numpy arrays in protocols 0, 2, 4 and 5.

Malicious (must come out unsafe): torch.save of an object whose __reduce__ calls os.system, in
both formats (the legacy file and the zip's data.pkl).

Needs Debian's python3-torch, python3-numpy and python3-joblib (run with /usr/bin/python3).
Usage: gen_torch_fixtures.py OUTDIR [SEED]
"""
import os
import pickle
import sys
import zipfile

import joblib
import numpy as np
import torch


class Evil:
    """What an attacker pickles: loading it would run a shell command."""

    def __reduce__(self):
        return (os.system, ("echo pwned",))


def zip_data_pkl(path, out):
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n.endswith("/data.pkl") or n == "data.pkl"]
        with open(out, "wb") as f:
            f.write(z.read(names[0]))


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    p = lambda name: os.path.join(out, name)

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    sd = model.state_dict()
    torch.save(sd, p("state_dict.legacy.pt"), _use_new_zipfile_serialization=False)
    torch.save(sd, p("state_dict.zip.pt"))
    zip_data_pkl(p("state_dict.zip.pt"), p("state_dict.data.pkl"))

    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
            "loss": 0.25, "step": torch.tensor(7)}
    torch.save(ckpt, p("checkpoint.legacy.pt"), _use_new_zipfile_serialization=False)
    torch.save(ckpt, p("checkpoint.zip.pt"))
    zip_data_pkl(p("checkpoint.zip.pt"), p("checkpoint.data.pkl"))

    param = torch.nn.Parameter(torch.randn(3, 5).to(torch.bfloat16))
    torch.save(param, p("bf16_param.legacy.pt"), _use_new_zipfile_serialization=False)
    torch.save(param, p("bf16_param.zip.pt"))
    zip_data_pkl(p("bf16_param.zip.pt"), p("bf16_param.data.pkl"))

    torch.save(model, p("module.legacy.pt"), _use_new_zipfile_serialization=False)

    joblib.dump(rng.standard_normal(10), p("array.joblib"))
    joblib.dump({"weights": rng.standard_normal((3, 4)), "ids": np.arange(5, dtype=np.int32),
                 "names": ["a", "b"], "flags": np.zeros(4, dtype=np.bool_)}, p("dict.joblib"))
    joblib.dump(np.array([1, "a", None], dtype=object), p("object.joblib"))
    joblib.dump({"labels": np.array(["cat", "dog", "mouse"]), "raw": np.array([b"ab", b"c"]),
                 "void": np.zeros(2, dtype="V3"), "x": np.arange(3)}, p("strings.joblib"))
    joblib.dump({"labels": np.array(["cat", "dog", "mouse"])}, p("strings_p2.joblib"),
                protocol=2)

    np.save(p("plain.npy"), rng.standard_normal((2, 3)).astype(np.float32))
    np.save(p("object.npy"), np.array([1, "x", {"k": 2}], dtype=object), allow_pickle=True)
    for proto in (0, 2, 4, 5):
        with open(p("numpy_p%d.pkl" % proto), "wb") as f:
            pickle.dump({"x": np.arange(3), "y": np.float64(1.5)}, f, protocol=proto)

    torch.save({"model": sd, "payload": Evil()}, p("evil.legacy.pt"),
               _use_new_zipfile_serialization=False)
    torch.save({"model": sd, "payload": Evil()}, p("evil.zip.pt"))
    zip_data_pkl(p("evil.zip.pt"), p("evil.data.pkl"))


if __name__ == "__main__":
    main()
