#!/usr/bin/python3
"""Writes the TorchScript fixtures of test_containers into OUTDIR (tests/data/torchscript):

- scripted.pt: torch.jit.save of a small scripted module (a Linear and a relu): a torch zip
  with `code/` members (the program's source), `constants.pkl` and the usual data.pkl and
  storages. torch.jit.load compiles and runs its program: torchscript_program.
- scripted.ptl: the same module saved for the lite interpreter, which adds `bytecode.pkl`.
- plain.pt: torch.save of the module's state_dict: a torch zip without a program (near miss).
- names.zip: a stored zip whose names come close to the TorchScript ones without being them
  (`notcode/`, `code` without a folder, `constants.pkl.bak`, `xbytecode.pkl`): near miss.

The scripted ones are checked again at generation time: torch.jit.load must load them and run
the program. Needs Debian's python3-torch (run with /usr/bin/python3). Deterministic: running it
again writes the same bytes (script_torchscript.sh checks that).

Usage: gen_torchscript.py OUTDIR
"""
import linecache
import os
import sys
import zipfile

import torch

# TorchScript keeps the source file's name in its debug records (code/*.debug_pkl): the module
# is compiled from this text under a fixed name, so the bytes do not depend on where the source
# tree is.
SOURCE_NAME = "stguard_torchscript_fixture.py"
SOURCE = """
import torch


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        return torch.relu(self.lin(x))
"""
linecache.cache[SOURCE_NAME] = (len(SOURCE), None, SOURCE.splitlines(True), SOURCE_NAME)
_ns = {"__name__": "stguard_torchscript_fixture"}
exec(compile(SOURCE, SOURCE_NAME, "exec"), _ns)
Small = _ns["Small"]


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":
        # torch.jit writes a class's constants in set order: a fixed hash seed fixes it
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    module = Small()
    scripted = torch.jit.script(module)
    paths = {k: os.path.join(out, k) for k in ("scripted.pt", "scripted.ptl", "plain.pt",
                                               "names.zip")}
    torch.jit.save(scripted, paths["scripted.pt"])
    scripted._save_for_lite_interpreter(paths["scripted.ptl"])
    torch.save(module.state_dict(), paths["plain.pt"])
    x = torch.ones(1, 2)
    assert torch.equal(torch.jit.load(paths["scripted.pt"])(x), module(x))
    with zipfile.ZipFile(paths["names.zip"], "w", zipfile.ZIP_STORED) as z:
        for name in ("names/notcode/__torch__.py", "names/code", "names/constants.pkl.bak",
                     "names/xbytecode.pkl", "names/version"):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, b"3\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
