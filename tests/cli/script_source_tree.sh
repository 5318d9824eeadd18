#!/bin/bash
# A source tree with no model files in it reports nothing unsafe or invalid: this repository
# cloned (with its .git), corpus/ and tests/data/ (deliberately malicious or broken fixtures)
# removed, scanned as a user would. Text, code and configs are `text`/`json`; `.git` is skipped
# and counted, and --scan-git walks it (its objects hold the history of corpus/ and tests/data/,
# so only the walk is checked there). Fails when git is absent or the source is not a git
# checkout. Also: every script in tools/ is executable in git.
set -u
if [ -z "${STGUARD_CLI:-}" ] || [ ! -x "$STGUARD_CLI" ]; then
    echo "FAIL: no CLI binary (STGUARD_CLI)"
    exit 1
fi
command -v git >/dev/null || { echo "FAIL: git missing (tools/setup-debian.sh installs it)"; exit 1; }
SRC=${STG_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 || { echo "FAIL: $SRC is not a git checkout"; exit 1; }
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
git clone -q --no-hardlinks "$SRC" "$T/src" || { echo "FAIL: git clone"; exit 1; }
FAILS=0

# Every script in tools/ and .ci/ (a file starting with #!) is executable in git, so a fresh
# clone runs tools/run-tests.sh and the rest as the README writes them.
while read -r mode _ _ path; do
    if [ "$(head -c 2 "$T/src/$path")" = "#!" ] && [ "$mode" != 100755 ]; then
        echo "FAIL: $path is a script with mode $mode in git (want 100755)"
        FAILS=$((FAILS + 1))
    fi
done < <(git -C "$T/src" ls-files -s -- tools .ci)
[ -x "$T/src/tools/run-tests.sh" ] || { echo "FAIL: tools/run-tests.sh not executable in a clone"; FAILS=$((FAILS + 1)); }
rm -rf "$T/src/corpus" "$T/src/tests/data"

for opt in "" --scan-git; do
    # shellcheck disable=SC2086 # opt is one word or none
    "$STGUARD_CLI" scan --format json $opt "$T/src" >"$T/out.json" 2>"$T/err.txt"
    rc=$?
    if ! "$PY" - "$T/out.json" "$rc" "$opt" <<'EOF'; then FAILS=$((FAILS + 1)); fi
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rc, opt = int(sys.argv[2]), sys.argv[3]
files = [r for r in lines if r["type"] == "file"]
summary = lines[-1]
if opt == "--scan-git":
    assert summary["skipped_git"] == 0 and any("/.git/" in r["path"] for r in files), summary
    sys.exit(0)
bad = [(r["path"], r["verdict"], [f["code"] for f in r["findings"]][:3])
       for r in files if r["verdict"] in ("invalid", "unsafe", "error")]
if bad or rc != 0:
    sys.exit("FAIL: exit %d, %d not ok: %r" % (rc, len(bad), bad[:10]))
assert summary["skipped_git"] == 1, summary
assert not [r for r in files if "/.git/" in r["path"]], "a .git path was scanned"
assert any(r["format"] == "text" for r in files) and any(r["format"] == "json" for r in files)
print("%d files, none invalid or unsafe" % len(files))
EOF
done
[ "$FAILS" -eq 0 ]
