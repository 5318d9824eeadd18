#!/usr/bin/python3
"""Differential of stguard's YAML subset reader (parser/yaml.c, through tests/support/yaml_probe)
against PyYAML's composer (yaml.compose: the parse yaml.safe_load constructs from).

usage: yaml_differential.py PROBE FILE... [--mutate N] [--cli STGUARD]

For every file stguard reads (status ok), PyYAML must compose it too, into the same tree: the
same mappings (keys in order), sequences and scalar texts. Where stguard refuses, the file is
counted (the CLI then never says ok: script_yaml.sh checks that). With --mutate N, N mutations of
each file (bytes deleted, inserted, lines repeated or re-indented; a fixed seed) are judged the
same way. With --cli, every input stguard refuses is scanned by the CLI as a .yaml file, whose
verdict must not be ok (a reading that cannot conclude never passes). Exit 1 on the first
disagreement, with the input."""
import json
import os
import random
import subprocess
import sys
import tempfile

import yaml


class Recursive(ValueError):
    """A node that holds itself (an alias inside its own anchor): no finite tree."""


def tree(node, path=()):
    if node is None:
        return None
    if isinstance(node, yaml.ScalarNode):
        return {"s": node.value}
    if id(node) in path:
        raise Recursive("recursive alias")
    path = path + (id(node),)
    if isinstance(node, yaml.SequenceNode):
        return {"q": [tree(n, path) for n in node.value]}
    return {"m": [[tree(k, path), tree(v, path)] for k, v in node.value]}


def pyyaml(data):
    try:
        return True, tree(yaml.compose(data.decode("utf-8")))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as e:
        return False, " / ".join(str(e).splitlines()[:4]) if str(e) else type(e).__name__


TOKENS = [b":", b"-", b" ", b"  ", b"\t", b"#", b"'", b'"', b"[", b"]", b"{", b"}", b"\n",
          b"|", b">", b"&a", b"*a", b"!t", b"?", b",", b": ", b"- ", b"\\", b"\r", b"x"]


def mutate(data, rnd):
    d = bytearray(data)
    kind = rnd.randrange(4)
    if kind == 0 and d:
        del d[rnd.randrange(len(d))]
    elif kind == 1:
        at = rnd.randrange(len(d) + 1)
        d[at:at] = rnd.choice(TOKENS)
    else:
        lines = bytes(d).split(b"\n")
        i = rnd.randrange(len(lines))
        if kind == 2:
            lines.insert(i, lines[i])
        else:
            lines[i] = b" " * rnd.randrange(4) + lines[i].lstrip(b" ")
        d = bytearray(b"\n".join(lines))
    return bytes(d)


def main():
    args = sys.argv[1:]
    mutate_n, cli = 0, None
    if "--mutate" in args:
        i = args.index("--mutate")
        mutate_n = int(args[i + 1])
        del args[i:i + 2]
    if "--cli" in args:
        i = args.index("--cli")
        cli = args[i + 1]
        del args[i:i + 2]
    probe, files = args[0], args[1:]
    inputs = []
    rnd = random.Random(20261207)
    for f in files:
        data = open(f, "rb").read()
        inputs.append((f, data))
        for k in range(mutate_n):
            inputs.append(("%s~%d" % (f, k), mutate(data, rnd)))
    tmp = tempfile.mkdtemp()
    paths = []
    for i, (_, data) in enumerate(inputs):
        p = os.path.join(tmp, "%06d.yaml" % i)
        open(p, "wb").write(data)
        paths.append(p)
    out = subprocess.run([probe] + paths, check=True, capture_output=True).stdout
    rows = [json.loads(line) for line in out.decode().splitlines()]
    assert len(rows) == len(inputs), "probe printed %d rows for %d files" % (len(rows), len(inputs))
    agreed = refused = 0
    refused_paths = []
    for (name, data), row, path in zip(inputs, rows, paths):
        ok, theirs = pyyaml(data)
        if row["status"] != "ok":
            refused += 1
            refused_paths.append(path)
            continue
        mine = row["tree"]
        if theirs is None and mine is None:
            agreed += 1
            continue
        if theirs == {"s": ""} and mine is None:  # "---" alone: an empty scalar
            agreed += 1
            continue
        if not ok or mine != theirs:
            keep = os.path.join(tempfile.gettempdir(), "yaml_disagree.yaml")
            open(keep, "wb").write(data)
            sys.exit("(input kept in %s) " % keep +"DISAGREE on %s (%r):\n stguard: %s\n PyYAML:  %s"
                     % (name, data[:400], json.dumps(mine)[:400],
                        theirs if not ok else json.dumps(theirs)[:400]))
        agreed += 1
    if cli is not None and refused_paths:
        scan = subprocess.run([cli, "scan", "--no-digest", "--format", "json"] + refused_paths,
                              capture_output=True).stdout
        for line in scan.decode().splitlines():
            r = json.loads(line)
            if r.get("type") == "file" and r["verdict"] == "ok":
                sys.exit("a YAML stguard refuses was scanned ok: %s (%r)"
                         % (r["path"], open(r["path"], "rb").read()[:300]))
    for p in paths:
        os.unlink(p)
    os.rmdir(tmp)
    print("%d inputs: %d read alike by stguard and PyYAML, %d refused by stguard"
          % (len(inputs), agreed, refused))


if __name__ == "__main__":
    main()
