#!/bin/bash
# The test data Debian ships with python3-joblib (joblib/test/data/: joblib 0.8-0.11 dumps from
# Python 2.7-3.6: single files, gzip/zlib/bz2/xz/lzma-compressed ones, ZF files and their side
# .npy/.npy.z files) and python3-numpy (*/tests/data/*.pkl, lib/tests/data/*objarr*: object
# arrays from Python 2 and 3), read from the installed packages: every file parsed (no
# pickle_malformed, no format_unknown but the raw array bytes of a .npy.z side file), none unsafe
# or invalid; the side files joblib 0.9 dumps name are found and scanned with them. Skips (77) only when neither package ships any such file.
set -u
if [ -z "${STGUARD_CLI:-}" ] || [ ! -x "$STGUARD_CLI" ]; then
    echo "skip: no CLI binary (STGUARD_CLI)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
    dpkg -L python3-joblib 2>/dev/null | grep '/joblib/test/data/' | grep -v '\.py$'
    dpkg -L python3-numpy 2>/dev/null | grep -E '/tests/data/[^/]*\.pkl$|/lib/tests/data/[^/]*objarr'
} | while read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done >"$tmp/files"
n=$(wc -l <"$tmp/files")
if [ "$n" -eq 0 ]; then
    echo "skip: python3-joblib and python3-numpy ship no test data here"
    exit 77
fi
echo "$n files from python3-joblib and python3-numpy"
tr '\n' '\0' <"$tmp/files" | xargs -0 "$STGUARD_CLI" scan --no-digest --format json \
    >"$tmp/scan.jsonl" 2>"$tmp/err"
rc=$?
fail=0
while read -r f; do
    if ! grep -qF "\"path\":\"$f\"" "$tmp/scan.jsonl"; then
        echo "FAIL $f: no record"
        fail=1
    fi
done <"$tmp/files"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" - "$tmp/scan.jsonl" "$rc" <<'PYEOF' || fail=1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = 0
for r in (x for x in recs if x.get("type") == "file"):
    p = r["path"]
    codes = [(f["code"], f["severity"]) for f in r["findings"]]
    problems = []
    if r["verdict"] not in ("ok", "warn"):
        problems.append("verdict " + r["verdict"])
    if any(s in ("error", "critical") for _, s in codes):
        problems.append("error/critical findings")
    if any(c == "pickle_malformed" for c, _ in codes):
        problems.append("not parsed")
    side_z = p.endswith(".npy.z")  # raw array bytes after inflating: no format to find
    if any(c == "format_unknown" for c, _ in codes) and not side_z:
        problems.append("format unknown")
    if side_z and r["format"] != "joblib":
        problems.append("a ZF side file not read as ZF")
    if any(c.startswith("joblib_side_file") for c, _ in codes):
        problems.append("a side file not found or not resolved")
    # joblib 0.9.2 dumps name side .npy files (NDArrayWrapper); _03.npy is an object array:
    # its pickle's globals, scanned as np.load reads it, carry the side file as member
    base = p.rsplit("/", 1)[-1]
    if base.startswith("joblib_0.9.2_pickle_") and base.endswith(".pkl"):
        side = base + "_03.npy"
        if not any(g.get("member") == side for g in r["globals"]):
            problems.append("side file %s not scanned" % side)
    if problems:
        bad += 1
        print("FAIL %s: %s (%s, %r)" % (p, "; ".join(problems), r["format"], codes))
if int(sys.argv[2]) != 0:
    print("FAIL CLI exit status %s" % sys.argv[2])
    bad += 1
sys.exit(1 if bad else 0)
PYEOF
[ $fail -eq 0 ] && echo "all $n files parsed, none unsafe or invalid"
exit $fail
