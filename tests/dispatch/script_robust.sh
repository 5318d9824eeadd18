#!/bin/bash
# A limit reached while deciding what a file is fails closed: a protocol-0 pickle that pushes
# more values than max_pickle_stack before its payload is still a pickle (limit_exceeded naming
# the limit), never format_unknown. The real loaders reach the payload of every attack fixture
# (tests/loaders/reach.py, nothing runs). Skips (77) when Debian's python3 or torch is absent.
# Fixtures: tests/dispatch/gen_robust_fixtures.py.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "torch"
"$PY" "$SRC/tests/dispatch/gen_robust_fixtures.py" "$tmp/fx" || { echo "FAIL: generator"; exit 1; }
fail=0

# 1. The real loaders reach the payload of both fixtures.
for loader in pickle torch; do
    "$PY" "$SRC/tests/loaders/reach.py" "$loader" "$tmp"/fx/stack_*.dat >"$tmp/reach.jsonl"
    if ! "$PY" - "$tmp/reach.jsonl" <<'PYEOF'; then
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if len(rows) != 2 or not all(r["reached"] for r in rows):
    sys.exit("not reached: %r" % rows)
PYEOF
        echo "FAIL: $loader does not reach the fixtures' payload"
        fail=1
    fi
done

# 2. stguard: expect VERDICT [CODE LIMIT] for FILE with extra CLI options.
check() {
    local file=$1 verdict=$2 code=$3 limit=$4
    shift 4
    "$STGUARD_CLI" scan --no-digest --format json "$@" "$tmp/fx/$file" >"$tmp/out.json"
    local rc=$?
    if ! "$PY" - "$tmp/out.json" "$rc" "$verdict" "$code" "$limit" <<'PYEOF'; then
import json, sys
out, rc, verdict, code, limit = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
r = [json.loads(l) for l in open(out) if l.strip()][0]
found = [(f["code"], f.get("limit")) for f in r["findings"]]
if r["verdict"] != verdict or rc == 0:
    sys.exit("verdict %s rc %d, want %s: %r" % (r["verdict"], rc, verdict, found))
if any(c == "format_unknown" for c, _ in found):
    sys.exit("called unknown: %r" % found)
if code != "-" and (code, limit if limit != "-" else None) not in found:
    sys.exit("no %s %s: %r" % (code, limit, found))
PYEOF
        echo "FAIL: $file $*"
        fail=1
    fi
}
check stack_deep.dat invalid limit_exceeded max_pickle_stack
check stack_shallow.dat unsafe pickle_global_dangerous -
# the limit raised past the pushes: the payload itself is reported
check stack_deep.dat unsafe pickle_global_dangerous - --limit max_pickle_stack=2000000
# a limit lowered below the near miss's pushes: named too
check stack_shallow.dat invalid limit_exceeded max_pickle_stack --limit max_pickle_stack=500

# 3. A NUL inside a global's module is part of it in every output, shown escaped.
printf 'cos\000junk\nsystem\n(Vx\ntR.' >"$tmp/nul.pkl"
"$STGUARD_CLI" scan --no-digest "$tmp/nul.pkl" >"$tmp/nul.txt"
if ! grep -qF '[global os\x00junk.system]' "$tmp/nul.txt"; then
    echo "FAIL: text output of a NUL in a module:"; cat -v "$tmp/nul.txt"
    fail=1
fi
"$STGUARD_CLI" scan --no-digest --format json "$tmp/nul.pkl" >"$tmp/nul.json"
"$STGUARD_CLI" scan --no-digest --format sarif "$tmp/nul.pkl" >"$tmp/nul.sarif"
if ! "$PY" - "$tmp/nul.json" "$tmp/nul.sarif" <<'PYEOF'; then
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][0]
f = [f for f in r["findings"] if f["code"] == "pickle_global_unknown"]
if len(f) != 1 or f[0]["module"] != "os\x00junk" or f[0]["global"] != "os\x00junk.system":
    sys.exit("json findings: %r" % r["findings"])
if [(g["module"], g["name"], g["class"]) for g in r["globals"]] != [("os\x00junk", "system", "unknown")]:
    sys.exit("json globals: %r" % r["globals"])
sarif = json.load(open(sys.argv[2]))
props = [x["properties"] for x in sarif["runs"][0]["results"] if "module" in x["properties"]]
if [p["module"] for p in props] != ["os\x00junk"]:
    sys.exit("sarif: %r" % props)
PYEOF
    echo "FAIL: JSON / SARIF output of a NUL in a module"
    fail=1
fi
exit $fail
