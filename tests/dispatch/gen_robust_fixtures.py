#!/usr/bin/python3
"""Fixtures for tests/dispatch/script_robust.sh: files whose first question (what is this?) runs into a
limit. Written by hand, byte by byte: no pickler writes them, and nothing here loads them.

  stack_deep.dat     protocol 0 (no PROTO), 1,000,001 NONE pushes (one past the default
                     max_pickle_stack), then GLOBAL os system + REDUCE: pickle.load and torch's
                     legacy loader reach os.system; stguard must not call it unknown
  stack_shallow.dat  the near miss: 1,000 pushes, the same payload (recognised, unsafe)

Usage: gen_robust_fixtures.py OUTDIR
"""
import os
import sys

PAYLOAD = b"cos\nsystem\n(Vecho reached\ntR."


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "stack_deep.dat"), "wb") as f:
        f.write(b"N" * 1000001 + PAYLOAD)
    with open(os.path.join(out, "stack_shallow.dat"), "wb") as f:
        f.write(b"N" * 1000 + PAYLOAD)


if __name__ == "__main__":
    main()
