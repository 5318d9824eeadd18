#!/usr/bin/python3
"""joblib < 0.10 files whose NDArrayWrapper names a side file (joblib.load then calls
np.load(os.path.join(dirname(joblib file), filename), allow_pickle=True)).

The main pickles are written by pickle.dump of joblib's own NDArrayWrapper class (what
joblib <= 0.9 wrote), the side files by numpy.save. One folder per case under DIR:

  benign/        model.pkl + model.pkl_01.npy (floats) + model.pkl_02.npy (a benign object array)
  subdir/        the side file in a subfolder, named 'sub/a..b.npy' (near miss of '..')
  evil_npy/      the side .npy is an object array holding an os.system call
  evil_raw/      the side file is no .npy: np.load pickle.load-s it (os.system)
  evil_abs/      the name is absolute (a file in DIR/outside/)
  evil_dotdot/   the name is '../outside/evil.npy'
  evil_link/     the side file is a symbolic link to DIR/outside/evil.npy
  link_inside/   the side file is a link to another file in the same folder (near miss)
  missing/       the side file does not exist
Only ever loaded under tests/loaders/reach.py.

Usage: gen_joblib_side.py DIR
"""
import os
import pickle
import sys

import numpy as np
from joblib.numpy_pickle_compat import NDArrayWrapper


class Payload:
    def __reduce__(self):
        return (os.system, ("true",))


def main_file(folder, names, protocol=2):
    os.makedirs(folder, exist_ok=True)
    objs = [NDArrayWrapper(n, np.ndarray) for n in names]
    with open(os.path.join(folder, "model.pkl"), "wb") as f:
        pickle.dump(objs, f, protocol=protocol)


def evil_npy(path):
    np.save(path, np.array([Payload(), 1], dtype=object), allow_pickle=True)


def main():
    out = sys.argv[1]
    outside = os.path.join(out, "outside")
    os.makedirs(outside, exist_ok=True)
    evil_npy(os.path.join(outside, "evil.npy"))

    d = os.path.join(out, "benign")
    main_file(d, ["model.pkl_01.npy", "model.pkl_02.npy"], protocol=3)
    np.save(os.path.join(d, "model.pkl_01.npy"), np.arange(6.0))
    np.save(os.path.join(d, "model.pkl_02.npy"), np.array([1, "a", None], dtype=object))

    d = os.path.join(out, "subdir")
    main_file(d, ["sub/a..b.npy"])
    os.makedirs(os.path.join(d, "sub"), exist_ok=True)
    np.save(os.path.join(d, "sub", "a..b.npy"), np.arange(3))

    d = os.path.join(out, "evil_npy")
    main_file(d, ["model.pkl_01.npy"])
    evil_npy(os.path.join(d, "model.pkl_01.npy"))

    d = os.path.join(out, "evil_raw")
    main_file(d, ["model.pkl_01.npy"])
    with open(os.path.join(d, "model.pkl_01.npy"), "wb") as f:
        pickle.dump(Payload(), f, protocol=2)

    main_file(os.path.join(out, "evil_abs"), [os.path.join(os.path.abspath(outside), "evil.npy")])
    main_file(os.path.join(out, "evil_dotdot"), ["../outside/evil.npy"])

    d = os.path.join(out, "evil_link")
    main_file(d, ["model.pkl_01.npy"])
    os.symlink(os.path.abspath(os.path.join(outside, "evil.npy")),
               os.path.join(d, "model.pkl_01.npy"))

    d = os.path.join(out, "link_inside")
    main_file(d, ["model.pkl_01.npy"])
    np.save(os.path.join(d, "real.npy"), np.arange(3))
    os.symlink("real.npy", os.path.join(d, "model.pkl_01.npy"))

    main_file(os.path.join(out, "missing"), ["model.pkl_01.npy"])


if __name__ == "__main__":
    main()
