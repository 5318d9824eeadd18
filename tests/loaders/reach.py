#!/usr/bin/python3
"""Reachability oracle: does the real loader reach a dangerous call on this file?

Drives the real loaders (torch.load with weights_only=False, numpy.load with allow_pickle=True,
joblib.load, pickle.load, pickle.load of gzip.open) on each FILE with a refusing audit hook installed first:

- every `pickle.find_class` (C and pure-Python unpicklers, so joblib's NumpyUnpickler too) is
  recorded; a global on the payload list below is refused before it is imported, and the file
  counts as reached;
- the audit events that running a command raises (os.system, subprocess.Popen, os.exec,
  os.posix_spawn, os.spawn, os.fork, ctypes.dlopen) are refused too and count as reached, so a
  gadget chain that gets to os.system without naming it is still caught;
- any other global is let through (the reconstruction calls a benign file needs).

Nothing a malicious fixture asks for is ever run: the hook raises before the import or the call.
Audit hooks cannot be removed, so this runs as its own process (one for many files).

Usage: reach.py [--let MODULE.NAME]... LOADER FILE...   LOADER: torch | numpy | joblib | pickle | gzip
--let lets one exact global of the payload list through (a benign reconstruction that needs it:
Python 3.11 pickles enum members through builtins.getattr); the command events stay refused.
Prints one JSON object per file: {"file", "loader", "reached", "globals": [[module, name]...],
"events": [...], "error": text or null}. Exit status 0 (results are in the output).
Needs Debian's python3-torch / python3-numpy / python3-joblib for the loaders it is asked for.
"""
import json
import os
import sys

# Globals whose import means the payload was reached (module prefixes and exact pairs).
PAYLOAD_MODULES = ("os", "posix", "nt", "subprocess", "pty", "commands", "runpy", "webbrowser",
                   "socket", "shutil", "ctypes", "_posixsubprocess")
PAYLOAD_PAIRS = {("builtins", n) for n in ("eval", "exec", "compile", "__import__", "open",
                                           "getattr", "breakpoint", "input")}
PAYLOAD_PAIRS |= {("__builtin__", n) for n in ("eval", "execfile", "compile", "__import__",
                                               "open", "getattr", "file")}
# Audit events raised when a command or native code would actually run.
PAYLOAD_EVENTS = ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn",
                  "os.fork", "os.forkpty", "ctypes.dlopen", "os.startfile")


class Refused(Exception):
    """Raised by the audit hook to stop the loader at the payload."""


_state = {"globals": [], "events": [], "reached": False, "armed": False, "let": set()}


def _is_payload_global(module, name):
    root = module.split(".")[0]
    return root in PAYLOAD_MODULES or (module, name) in PAYLOAD_PAIRS or \
        (root in ("builtins", "__builtin__") and name.split(".")[0] in
         {n for _, n in PAYLOAD_PAIRS})


def _hook(event, args):
    if not _state["armed"]:
        return
    if event == "pickle.find_class":
        module, name = str(args[0]), str(args[1])
        _state["globals"].append([module, name])
        if _is_payload_global(module, name) and (module, name) not in _state["let"]:
            _state["reached"] = True
            raise Refused("refused global %s.%s" % (module, name))
    elif event in PAYLOAD_EVENTS:
        _state["events"].append(event)
        _state["reached"] = True
        raise Refused("refused event %s" % event)


def _load(loader, path):
    if loader == "torch":
        import torch
        return torch.load(path, map_location="cpu", weights_only=False)
    if loader == "numpy":
        import numpy
        out = numpy.load(path, allow_pickle=True)
        if hasattr(out, "files"):  # NpzFile: members are read when accessed
            for k in out.files:
                out[k]
        return out
    if loader == "joblib":
        import joblib
        return joblib.load(path)
    if loader == "pickle":
        import pickle
        with open(path, "rb") as f:
            return pickle.load(f)
    if loader == "gzip":  # a gzip-compressed plain pickle, as pickle.load(gzip.open(path))
        import gzip
        import pickle
        with gzip.open(path, "rb") as f:
            return pickle.load(f)
    raise SystemExit("reach.py: unknown loader %r" % loader)


def check(loader, path):
    """One file: what the loader asked for, and whether it reached the payload."""
    _state.update(globals=[], events=[], reached=False, armed=True)
    error = None
    try:
        _load(loader, path)
    except Refused as e:
        error = str(e)
    except BaseException as e:  # a broken file: the loader failed (before or after a payload)
        error = "%s: %s" % (type(e).__name__, e)
    finally:
        _state["armed"] = False
    return {"file": path, "loader": loader, "reached": _state["reached"],
            "globals": list(_state["globals"]), "events": list(_state["events"]),
            "error": error}


def main(argv):
    while len(argv) > 2 and argv[1] == "--let":
        module, _, name = argv[2].rpartition(".")
        _state["let"].add((module, name))
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    loader = argv[1]
    # Import the loader before arming, so its own imports are not recorded.
    for module in {"torch": ["torch"], "numpy": ["numpy"], "joblib": ["joblib"],
                   "gzip": ["gzip", "pickle"]}.get(loader, ["pickle"]):
        __import__(module)
    sys.addaudithook(_hook)
    for path in argv[2:]:
        print(json.dumps(check(loader, os.fspath(path))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
