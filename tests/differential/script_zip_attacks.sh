#!/bin/bash
# Malicious zips where the loaders' zip readers take another directory than stguard used to
# (tests/differential/gen_zip_attacks.py): each must be reached by its real loader under the refusing audit
# hook (tests/loaders/reach.py) and come out unsafe from the CLI with the finding the generator
# names; the benign near misses must be neither reached nor flagged zip_ambiguous. Skips (77)
# only when /usr/bin/python3 cannot import torch and numpy or the CLI was not built.
set -u
py=/usr/bin/python3
if ! [ -x "$py" ] || ! "$py" -c 'import torch, numpy' >/dev/null 2>&1; then
    echo "skip: no /usr/bin/python3 with torch and numpy"
    exit 77
fi
if [ -z "${STGUARD_CLI:-}" ] || [ ! -x "$STGUARD_CLI" ]; then
    echo "FAIL: no CLI binary (STGUARD_CLI)"
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" "$STG_SOURCE_DIR/tests/differential/gen_zip_attacks.py" "$work/fx" || { echo "FAIL: generator"; exit 1; }
reach=$STG_SOURCE_DIR/tests/loaders/reach.py
"$py" "$reach" torch "$work"/fx/torch-* "$work"/fx/benign-* >"$work/reach.jsonl"
"$py" "$reach" numpy "$work"/fx/numpy-* >>"$work/reach.jsonl"
for f in "$work"/fx/*; do
    "$STGUARD_CLI" scan --no-digest --format json "$f" >"$work/$(basename "$f").json" 2>/dev/null
done
"$py" - "$work" "$STG_SOURCE_DIR/tests/differential" <<'PYEOF'
import json, os, sys
work, tests = sys.argv[1], sys.argv[2]
sys.path.insert(0, tests)
from gen_zip_attacks import EXPECT
reach = {os.path.basename(r["file"]): r for r in map(json.loads, open(work + "/reach.jsonl"))}
bad = 0
for name in sorted(os.listdir(work + "/fx")):
    rec = [json.loads(l) for l in open("%s/%s.json" % (work, name)) if l.strip()]
    r = [x for x in rec if x.get("type") == "file"][0]
    codes = {f["code"] for f in r["findings"]}
    problems = []
    reached = reach[name]["reached"]
    if name.startswith("benign-"):
        if reached:
            problems.append("benign file reached a payload")
        if "zip_ambiguous" in codes or r["verdict"] == "unsafe":
            problems.append("near miss flagged")
    else:
        if not reached:
            problems.append("the real loader does not reach the payload: %r" % reach[name])
        if r["verdict"] != "unsafe" or "pickle_global_dangerous" not in codes:
            problems.append("not blocked as unsafe")
        if EXPECT[name] not in codes:
            problems.append("no %s" % EXPECT[name])
    print("%s %s: verdict %s, reached %s, codes %s" % ("FAIL" if problems else "ok", name,
                                                       r["verdict"], reached, sorted(codes)))
    for p in problems:
        print("    " + p)
    bad += bool(problems)
sys.exit(1 if bad else 0)
PYEOF
