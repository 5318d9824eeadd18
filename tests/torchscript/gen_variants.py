#!/usr/bin/python3
"""Writes the hostile and near-miss variants of tests/torchscript into OUTDIR
(tests/data/torchscript/variants) from the libtorch archive tests/data/torchscript/libtorch/
rust_model.ot (what tch-rs's save writes; gen_libtorch.cpp). Each copies every record and changes
one thing, so a verdict that differs from the real archive's is caused by that thing:

- undefined-class.ot: data.pkl names `__torch__.evil.Module`, whose source
  code/__torch__/evil.py the archive does not hold (torchscript_class_undefined).
- payload-global.ot: data.pkl names `os.system` instead of the module class (a payload global:
  unsafe on every route, though TorchScript's loader would only look for code/os.py).
- jit-other.ot: the debug pickle names `torch.jit._pickle.build_evil`, a helper TorchScript's
  unpickler refuses (not one of its builtins: the hard block stands).
- no-constants.ot: the constants.pkl record renamed constants.pkx: torch.load no longer hands the
  file to torch.jit.load and unpickles data.pkl in Python, so `__torch__.Module` and
  torch.jit._pickle.build_intlist are judged as Python imports (unsafe).
- extra-pickle.ot: an extra record `extra/state.pkl` holding data.pkl's bytes: no TorchScript
  reader unpickles it (a program that does, does it in Python), so its globals are Python's.

Stdlib only; deterministic (fixed dates, stored records in the base archive's order).
Usage: gen_variants.py BASE OUTDIR
"""
import os
import sys
import zipfile


def copy(base, out, change):
    """Writes out from base's records, each (name, bytes) passed through change (None: drop)."""
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            for name, data in change(info.filename, src.read(info.filename)):
                z = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                z.external_attr = 0o644 << 16
                dst.writestr(z, data)


def replace_in(member_suffix, old, new):
    def change(name, data):
        if name.endswith(member_suffix):
            assert old in data, (name, old)
            data = data.replace(old, new, 1)
        yield name, data
    return change


def rename(old_suffix, new_suffix):
    def change(name, data):
        if name.endswith(old_suffix):
            name = name[: -len(old_suffix)] + new_suffix
        yield name, data
    return change


def add_extra(name, data):
    yield name, data
    if name.endswith("/data.pkl"):
        yield name[: -len("data.pkl")] + "extra/state.pkl", data


def main():
    base, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    module_global = b"c__torch__\nModule\n"
    variants = {
        "undefined-class.ot": replace_in("/data.pkl", module_global,
                                         b"c__torch__.evil\nModule\n"),
        "payload-global.ot": replace_in("/data.pkl", module_global, b"cos\nsystem\n"),
        "jit-other.ot": replace_in(".debug_pkl", b"torch.jit._pickle\nbuild_intlist\n",
                                   b"torch.jit._pickle\nbuild_evil\n"),
        "no-constants.ot": rename("/constants.pkl", "/constants.pkx"),
        "extra-pickle.ot": add_extra,
    }
    for name, change in variants.items():
        copy(base, os.path.join(out, name), change)
    return 0


if __name__ == "__main__":
    sys.exit(main())
