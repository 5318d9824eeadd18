#!/usr/bin/env bash
# The stguard CLI end to end (docs/cli.md): options, exit statuses, text, JSON Lines and SARIF
# output, -j ordering, links, FIFOs, the Hugging Face cache layout, include/exclude, standard
# input, --sha256, io_error, progress, interrupts by real SIGINT/SIGTERM, inspect. Fixtures are built in a fresh
# temporary directory with printf and the python3 standard library.
set -u
CLI=${STGUARD_CLI:-}
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then
    echo "FAIL: STGUARD_CLI is not set to the stguard binary"
    exit 1
fi
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
CLI=$(cd "$(dirname "$CLI")" && pwd)/$(basename "$CLI") # the tests run in a temporary folder
if [ -n "${STG_SOURCE_DIR:-}" ]; then
    STG_SOURCE_DIR=$(cd "$STG_SOURCE_DIR" && pwd)
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/stgcli.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
FAILS=0
CHECKS=0

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { CHECKS=$((CHECKS + 1)); }
# expect_rc WANT DESCRIPTION -- command...   (stdout to out.txt, stderr to err.txt)
expect_rc() {
    local want=$1 what=$2
    shift 3
    "$@" >out.txt 2>err.txt </dev/null
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$what: exit $rc, want $want; stdout: $(head -c 600 out.txt); stderr: $(head -c 300 err.txt)"
    else
        ok
    fi
}
# py DESCRIPTION SCRIPT [args]: a python3 assertion script reading out.txt
# wait_started FILE: until FILE (a scan's stderr with --progress always, removed before the scan
# starts) is not empty, at most 20 s: the scan has begun reading and its signal handlers are in
# place (a signal sent while the shell's child has not yet run stguard can be lost)
wait_started() {
    local i
    for i in $(seq 200); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
py() {
    local what=$1
    shift
    if python3 - "$@" >py.txt 2>&1; then ok; else fail "$what: $(cat py.txt)"; fi
}

# ------------------------------------------------------------------ fixtures
python3 - <<'EOF'
import json, os, struct
def st(header=None, data=b"", raw=None, pad=True):
    body = (raw if raw is not None else json.dumps(header, separators=(",", ":"))).encode()
    if pad:
        body += b" " * ((-(8 + len(body))) % 8)
    return struct.pack("<Q", len(body)) + body + data
def f32(*v):
    return struct.pack("<%df" % len(v), *v)
def w(path, data):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    open(path, "wb").write(data)
ok = st({"__metadata__": {"format": "pt"},
         "weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
         "bias": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}},
        f32(1, 2, 3, 4) + f32(5, 6))
w("ok.safetensors", ok)
w("warn.safetensors", st(raw='{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}', pad=False,
                         data=b"abc"))
w("invalid.safetensors", st({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                             "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}},
                            b"\0" * 24))
w("two_errors.safetensors", st({"a": {"dtype": "F16", "shape": [3], "data_offsets": [0, 4]},
                                "b": {"dtype": "F16", "shape": [3], "data_offsets": [4, 8]}},
                               b"\0" * 8))
w("rank2.safetensors", st({"a": {"dtype": "U8", "shape": [1, 2], "data_offsets": [0, 2]}},
                          b"\0\0"))
w("leading_ws.safetensors", st(raw=' {"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}',
                               data=b"\0" * 4))
# a tensor name holding NUL and an escape sequence (ESC [31m): must never reach a terminal raw
w("ctrl.safetensors", st(raw='{"a\\u0000\\u001b[31mb":{"dtype":"U8","shape":[4],'
                             '"data_offsets":[0,4]}}', data=b"\0" * 4))
w("pickle/os_system.pkl", b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00id\x85R.")
w("pickle/custom.pkl", b"\x80\x02cmymod\nMyClass\n)\x81.")
w("plain.txt", b"hello\n")
# many files for -j ordering
for i in range(24):
    name = "many/%02d_%s.safetensors" % ((i * 7) % 24, "x" * (i % 3))
    w(name, ok if i % 4 else st({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 8]}},
                                b"\0" * 8))
EOF
OKSHA=$(sha256sum ok.safetensors | cut -c1-64)
ZEROS=0000000000000000000000000000000000000000000000000000000000000000

# ------------------------------------------------------------------ version, help, usage errors
expect_rc 0 "--version" -- "$CLI" --version
grep -q '^stguard 0\.1\.0$' out.txt && grep -q '^policy [0-9A-Za-z]' out.txt && ok ||
    fail "--version output: $(cat out.txt)"
POLICY_VERSION=$(sed -n 's/^policy //p' out.txt)
expect_rc 0 "--help" -- "$CLI" --help
grep -q 'stguard scan' out.txt && ok || fail "--help text"
expect_rc 0 "scan --help" -- "$CLI" scan --help
expect_rc 2 "no arguments" -- "$CLI"
expect_rc 2 "unknown command" -- "$CLI" frobnicate
expect_rc 2 "scan without paths" -- "$CLI" scan
expect_rc 2 "unknown option" -- "$CLI" scan --bogus ok.safetensors
grep -q "unknown option" err.txt && ok || fail "unknown option message: $(cat err.txt)"
expect_rc 2 "option missing its value" -- "$CLI" scan ok.safetensors --format
expect_rc 2 "bad --format" -- "$CLI" scan --format xml ok.safetensors
expect_rc 2 "bad --profile" -- "$CLI" scan --profile lax ok.safetensors
expect_rc 2 "bad --fail-on" -- "$CLI" scan --fail-on info ok.safetensors
expect_rc 2 "-j 0" -- "$CLI" scan -j 0 ok.safetensors
expect_rc 2 "-j abc" -- "$CLI" scan -j abc ok.safetensors
expect_rc 2 "--limit unknown name" -- "$CLI" scan --limit max_bogus=1 ok.safetensors
expect_rc 2 "--limit bad value" -- "$CLI" scan --limit max_rank=-1 ok.safetensors
expect_rc 2 "--limit without =" -- "$CLI" scan --limit max_rank ok.safetensors
expect_rc 2 "--max-rank not a number" -- "$CLI" scan --max-rank x ok.safetensors
expect_rc 2 "--max-header-len overflow" -- "$CLI" scan --max-header-len 99999999999999999999999 ok.safetensors
expect_rc 2 "--allow-global without colon" -- "$CLI" scan --allow-global os.system ok.safetensors
expect_rc 2 "--policy missing file" -- "$CLI" scan --policy "$T/nope.policy" ok.safetensors
expect_rc 2 "--sha256 not hex" -- "$CLI" scan --sha256 xyz ok.safetensors
expect_rc 2 "--sha256 with two paths" -- "$CLI" scan --sha256 "$OKSHA" ok.safetensors warn.safetensors
expect_rc 2 "--sha256 over a directory of many files" -- "$CLI" scan --sha256 "$OKSHA" many
expect_rc 2 "stdin twice" -- "$CLI" scan - -
expect_rc 2 "inspect with sarif" -- "$CLI" inspect --format sarif ok.safetensors
expect_rc 2 "inspect with a scan-only option" -- "$CLI" inspect --include '*' ok.safetensors
expect_rc 2 "inspect two files" -- "$CLI" inspect ok.safetensors warn.safetensors
expect_rc 2 "--tensor-sha256 is not a scan option" -- "$CLI" scan --tensor-sha256 ok.safetensors

# ------------------------------------------------------------------ exit statuses and text output
expect_rc 0 "ok file" -- "$CLI" scan ok.safetensors
# text lists what needs a look: an ok file is counted, not listed, unless -v
grep -q 'ok.safetensors' out.txt && fail "ok file listed without -v: $(cat out.txt)" || ok
grep -qx '(1 ok file not listed: -v lists every file)' out.txt && ok || fail "unlisted count: $(cat out.txt)"
expect_rc 0 "ok file, -v" -- "$CLI" scan -v ok.safetensors
grep -qx 'ok.safetensors: OK (safetensors)' out.txt && ok || fail "text record line: $(cat out.txt)"
grep -q "^1 file: 1 ok, 0 warn, 0 invalid, 0 unsafe, 0 error; $(stat -c %s ok.safetensors) bytes in " out.txt && ok ||
    fail "text summary: $(cat out.txt)"
expect_rc 0 "warn file" -- "$CLI" scan warn.safetensors
grep -qx 'warn.safetensors: WARN (safetensors)' out.txt && ok || fail "warn line: $(cat out.txt)"
grep -q '^  header_not_padded @[0-9]*: ' out.txt && ok || fail "finding line: $(cat out.txt)"
expect_rc 1 "warn with --fail-on warning" -- "$CLI" scan --fail-on warning warn.safetensors
expect_rc 0 "ok with --fail-on warning" -- "$CLI" scan --fail-on warning ok.safetensors
expect_rc 0 "--fail-on error (the default) with a warn file" -- "$CLI" scan --fail-on error warn.safetensors
# every verdict name: ok, warn, invalid, unsafe (warning and error are the older names)
expect_rc 1 "--fail-on warn" -- "$CLI" scan --fail-on warn warn.safetensors
expect_rc 1 "--fail-on invalid with an invalid file" -- "$CLI" scan --fail-on invalid invalid.safetensors
expect_rc 0 "--fail-on invalid with a warn file" -- "$CLI" scan --fail-on invalid warn.safetensors
expect_rc 1 "--fail-on ok with an ok file" -- "$CLI" scan --fail-on ok ok.safetensors
expect_rc 0 "--fail-on unsafe with an invalid file" -- "$CLI" scan --fail-on unsafe invalid.safetensors
expect_rc 0 "--fail-on unsafe with a warn file" -- "$CLI" scan --fail-on unsafe warn.safetensors
expect_rc 1 "--fail-on unsafe with an unsafe file" -- "$CLI" scan --fail-on unsafe invalid.safetensors pickle/os_system.pkl
expect_rc 1 "invalid file" -- "$CLI" scan invalid.safetensors
grep -q '^  offsets_overlap @[0-9]*: .* \[tensor "b"\]$' out.txt && ok || fail "tensor in text: $(cat out.txt)"
expect_rc 3 "missing path" -- "$CLI" scan "$T/does-not-exist.safetensors"
grep -q 'io_error' out.txt && ok || fail "io_error record: $(cat out.txt)"
expect_rc 3 "invalid plus missing" -- "$CLI" scan invalid.safetensors "$T/does-not-exist"
# -o FILE: the report goes to FILE (and FILE is not scanned); stdout stays empty
expect_rc 1 "-o FILE" -- "$CLI" scan --format json -o report.jsonl invalid.safetensors .
[ ! -s out.txt ] && grep -q '"path":"invalid.safetensors"' report.jsonl &&
    ! grep -q '"path":"./report.jsonl"' report.jsonl && ok || fail "-o: $(head -c 300 report.jsonl)"
expect_rc 2 "-o into a missing folder" -- "$CLI" scan -o "$T/nowhere/r.txt" ok.safetensors
grep -q 'cannot write the output file' err.txt && ok || fail "-o error: $(cat err.txt)"
rm -f report.jsonl
# stguard PATH is stguard scan PATH; an unknown word that is no path stays a usage error
expect_rc 1 "stguard PATH" -- "$CLI" invalid.safetensors --format json
grep -q '"path":"invalid.safetensors","blob":null,"format":"safetensors"' out.txt && ok ||
    fail "stguard PATH: $(cat out.txt)"
expect_rc 1 "ctrl name" -- "$CLI" scan ctrl.safetensors
py "no raw control bytes in text output" <<'EOF'
data = open("out.txt", "rb").read()
bad = [b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f]
assert not bad, "raw control bytes %r in %r" % (bad, data)
assert b'[tensor "a\\x00\\x1b[31mb"]' in data, data
EOF

# --quiet: only files that are not ok, then the summary
expect_rc 1 "--quiet" -- "$CLI" scan --quiet ok.safetensors invalid.safetensors
py "--quiet output" <<'EOF'
lines = open("out.txt").read().splitlines()
assert not any(l.startswith("ok.safetensors") for l in lines), lines
assert lines[0] == "invalid.safetensors: INVALID (safetensors)", lines
assert lines[-1].startswith("2 files: 1 ok, 0 warn, 1 invalid"), lines
EOF

# ------------------------------------------------------------------ limits and profiles
expect_rc 1 "--max-rank" -- "$CLI" scan --format json --max-rank 1 rank2.safetensors
grep -q '"limit":"max_rank"' out.txt && ok || fail "--max-rank: $(cat out.txt)"
expect_rc 0 "--max-rank at the limit" -- "$CLI" scan --max-rank 2 rank2.safetensors
expect_rc 1 "--limit max_rank=1" -- "$CLI" scan --format json --limit max_rank=1 rank2.safetensors
grep -q '"limit":"max_rank"' out.txt && ok || fail "--limit: $(cat out.txt)"
expect_rc 1 "--max-header-len" -- "$CLI" scan --format json --max-header-len 10 ok.safetensors
grep -q '"code":"header_too_large"' out.txt && ok || fail "--max-header-len: $(cat out.txt)"
expect_rc 1 "--max-json-depth" -- "$CLI" scan --format json --max-json-depth 1 ok.safetensors
grep -q '"code":"json_too_deep"' out.txt && ok || fail "--max-json-depth: $(cat out.txt)"
expect_rc 1 "--max-tensors" -- "$CLI" scan --format json --max-tensors 1 ok.safetensors
grep -q '"limit":"max_tensors"' out.txt && ok || fail "--max-tensors: $(cat out.txt)"
expect_rc 1 "--max-memory" -- "$CLI" scan --format json --max-memory 100 ok.safetensors
grep -q '"limit":"max_memory"' out.txt && ok || fail "--max-memory: $(cat out.txt)"
expect_rc 1 "--max-findings" -- "$CLI" scan --format json --max-findings 1 two_errors.safetensors
py "--max-findings keeps one and says so" <<'EOF'
import json
rec = json.loads(open("out.txt").read().splitlines()[0])
codes = [f["code"] for f in rec["findings"]]
assert codes.count("size_mismatch") == 1 and "findings_truncated" in codes, codes
EOF
expect_rc 1 "strict: leading whitespace" -- "$CLI" scan leading_ws.safetensors
expect_rc 0 "compat: leading whitespace is a warning" -- "$CLI" scan --profile compat leading_ws.safetensors
grep -q 'WARN' out.txt && ok || fail "compat verdict: $(cat out.txt)"
expect_rc 1 "--limit profile=strict" -- "$CLI" scan --limit profile=strict leading_ws.safetensors

# ------------------------------------------------------------------ JSON Lines
expect_rc 3 "json over a mixed set" -- "$CLI" scan --format json ok.safetensors warn.safetensors \
    invalid.safetensors ctrl.safetensors plain.txt "$T/missing.bin"
py "JSON Lines records" "$OKSHA" "$POLICY_VERSION" <<'EOF'
import json, os, sys
oksha, policy = sys.argv[1], sys.argv[2]
recs = [json.loads(l) for l in open("out.txt", encoding="utf-8").read().splitlines()]
files, summary = recs[:-1], recs[-1]
assert [r["type"] for r in files] == ["file"] * 6, recs
keys = {"type", "path", "blob", "format", "size", "sha256", "verdict", "findings", "globals"}
for r in files:
    assert keys <= set(r), r
    for f in r["findings"]:
        assert {"code", "severity", "offset", "message"} <= set(f), f
        assert f["severity"] in ("info", "warning", "error", "critical"), f
        assert f["offset"] is None or isinstance(f["offset"], int), f
paths = [r["path"] for r in files]
assert paths == ["ok.safetensors", "warn.safetensors", "invalid.safetensors",
                 "ctrl.safetensors", "plain.txt", paths[5]] and paths[5].endswith("missing.bin"), paths
ok, warn, inv, ctrl, plain, missing = files
assert ok["verdict"] == "ok" and ok["format"] == "safetensors", ok
assert ok["size"] == os.path.getsize("ok.safetensors"), ok
assert ok["sha256"] == oksha and ok["blob"] is None and ok["findings"] == [], ok
assert warn["verdict"] == "warn" and warn["findings"][0]["code"] == "header_not_padded", warn
overlap = [f for f in inv["findings"] if f["code"] == "offsets_overlap"][0]
assert overlap["tensor"] == "b" and isinstance(overlap["offset"], int), inv
name = [f for f in ctrl["findings"] if f["code"] == "tensor_name_invalid"][0]
assert name["tensor"] == "a\x00\x1b[31mb", name
assert plain["format"] == "text" and plain["verdict"] == "ok" and plain["findings"] == [], plain
assert missing["verdict"] == "error" and missing["findings"][0]["code"] == "io_error", missing
assert missing["findings"][0]["offset"] is None and missing["sha256"] is None, missing
assert summary["type"] == "summary" and summary["files"] == 6, summary
assert (summary["ok"], summary["warn"], summary["invalid"], summary["unsafe"],
        summary["error"]) == (2, 1, 2, 0, 1), summary
assert summary["bytes"] == sum(r["size"] for r in files[:5]), summary
assert summary["tool_version"] == "0.1.0" and summary["policy_version"] == policy, summary
assert isinstance(summary["seconds"], (int, float)), summary
EOF
# every byte escaped: raw JSON text has no control bytes, the NUL is \u0000
py "JSON escaping" <<'EOF'
data = open("out.txt", "rb").read()
assert not [b for b in data if b < 0x20 and b != 0x0a], "raw control bytes"
assert b'"tensor":"a\\u0000\\u001b[31mb"' in data, data
EOF
expect_rc 0 "--no-digest" -- "$CLI" scan --format json --no-digest ok.safetensors
py "--no-digest: sha256 null" <<'EOF'
import json
assert json.loads(open("out.txt").readline())["sha256"] is None
EOF
# a path with invalid UTF-8: U+FFFD in path, raw bytes in path_hex
BADNAME=$(printf 'bad\377name.dat')
printf 'zz' >"$BADNAME"
expect_rc 0 "invalid UTF-8 path" -- "$CLI" scan --format json "$BADNAME"
py "path_hex" <<'EOF'
import json
r = json.loads(open("out.txt", encoding="utf-8").readline())
assert r["path"] == "bad\ufffdname.dat", r
assert r["path_hex"] == b"bad\xffname.dat".hex(), r
EOF
expect_rc 0 "invalid UTF-8 path in text" -- "$CLI" scan -v "$BADNAME"
grep -q '^bad\\xffname.dat: OK (text)$' out.txt && ok || fail "escaped path: $(cat out.txt)"

# ------------------------------------------------------------------ SARIF
expect_rc 3 "sarif" -- "$CLI" scan --format sarif ok.safetensors warn.safetensors invalid.safetensors \
    ctrl.safetensors "$T/missing.bin"
cp out.txt sarif.json
"$CLI" scan --format json ok.safetensors warn.safetensors invalid.safetensors ctrl.safetensors \
    "$T/missing.bin" >lines.json 2>/dev/null
py "SARIF 2.1.0 structure" "$POLICY_VERSION" <<'EOF'
import json, sys
doc = json.load(open("sarif.json", encoding="utf-8"))
assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"], doc.keys()
assert len(doc["runs"]) == 1
run = doc["runs"][0]
drv = run["tool"]["driver"]
assert drv["name"] == "stguard" and drv["version"] == "0.1.0", drv
assert drv["properties"]["policyVersion"] == sys.argv[1], drv
rule_ids = [r["id"] for r in drv["rules"]]
assert len(rule_ids) == len(set(rule_ids)) and all(r["shortDescription"]["text"] for r in drv["rules"])
recs = [json.loads(l) for l in open("lines.json", encoding="utf-8")][:-1]
# info findings are left out of SARIF by default (--sarif-info includes them)
findings = [(r["path"], f) for r in recs for f in r["findings"] if f["severity"] != "info"]
assert len(run["results"]) == len(findings), (len(run["results"]), len(findings))
for res, (path, f) in zip(run["results"], findings):
    assert res["ruleId"] == f["code"], (res, f)
    assert rule_ids[res["ruleIndex"]] == res["ruleId"], res
    want = {"critical": "error", "error": "error", "warning": "warning", "info": "note"}[f["severity"]]
    assert res["level"] == want, (res, f)
    # the message, then what it names (dashboards show no properties)
    text = res["message"]["text"]
    assert text.startswith(f["message"]), (text, f)
    assert ("tensor" in f) == (' [tensor "' in text), (text, f)
    assert ("global" not in f) or ("[global " in text), (text, f)
    loc = res["locations"][0]["physicalLocation"]
    uri = loc["artifactLocation"]["uri"]
    base = loc["artifactLocation"].get("uriBaseId")
    import os
    rel = os.path.relpath(path) if path.startswith("/") else path
    assert (base == "%SRCROOT%" and uri == rel) or (base is None and uri.startswith("file:///")), \
        (uri, base, path)
    assert loc["region"]["startLine"] == 1, loc
    if f["offset"] is None:
        assert "byteOffset" not in loc["region"] and "byteLength" not in loc["region"], loc
    else:
        assert loc["region"]["byteOffset"] == f["offset"], (loc, f)
        assert loc["region"]["byteLength"] == 1, loc  # the byte the finding names
assert set(rule_ids) == {f["code"] for _, f in findings}, rule_ids
EOF

expect_rc 0 "sarif without findings" -- "$CLI" scan --format sarif ok.safetensors
py "empty SARIF run" <<'EOF'
import json
doc = json.load(open("out.txt"))
run = doc["runs"][0]
assert run["results"] == [] and run["tool"]["driver"]["rules"] == [], run
assert run["invocations"][0]["exitCode"] == 0, run
EOF
expect_rc 2 "sarif usage error writes no document" -- "$CLI" scan --format sarif --sha256 "$OKSHA" many
[ ! -s out.txt ] && ok || fail "stdout after a usage error: $(head -c 200 out.txt)"

# ------------------------------------------------------------------ -j: same records, same order
"$CLI" scan --format json -j 1 many ok.safetensors invalid.safetensors >j1.txt 2>/dev/null
rc1=$?
"$CLI" scan --format json -j 4 many ok.safetensors invalid.safetensors >j4.txt 2>/dev/null
rc4=$?
"$CLI" scan --format json --jobs 3 many ok.safetensors invalid.safetensors >j3.txt 2>/dev/null
[ "$rc1" -eq 1 ] && [ "$rc4" -eq 1 ] && ok || fail "-j exit statuses $rc1 $rc4"
py "-j 4 records identical to -j 1" <<'EOF'
import json
def load(p):
    recs = [json.loads(l) for l in open(p)]
    return recs[:-1], recs[-1]
a, sa = load("j1.txt")
for other in ("j4.txt", "j3.txt"):
    b, sb = load(other)
    assert a == b, other
    sa2, sb2 = dict(sa), dict(sb)
    sa2.pop("seconds"); sb2.pop("seconds")
    assert sa2 == sb2, (sa2, sb2)
paths = [r["path"] for r in a]
many = [p for p in paths if p.startswith("many/")]
assert many == sorted(many) and len(many) == 24, paths
assert paths[24:] == ["ok.safetensors", "invalid.safetensors"], paths
EOF

# ------------------------------------------------------------------ links, cycles, FIFOs
mkdir -p tree/sub outside
cp ok.safetensors tree/a.safetensors
cp invalid.safetensors tree/sub/b.safetensors
cp ok.safetensors outside/secret.safetensors
ln -s ../a.safetensors tree/sub/inside_link.safetensors
ln -s ../outside/secret.safetensors tree/out_link.safetensors
ln -s ../outside tree/out_dir
ln -s .. tree/sub/cycle
ln -s "$T/nowhere" tree/dangling
ln -s loop_b tree/loop_a
ln -s loop_a tree/loop_b
mkfifo tree/fifo.safetensors
timeout 20 "$CLI" scan --format json tree >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 3 ] && ok || fail "tree scan exit $rc (want 3: dangling link is io_error)"
py "links and FIFO records" <<'EOF'
import json
recs = [json.loads(l) for l in open("out.txt")]
by = {r["path"]: r for r in recs[:-1]}
codes = lambda p: [f["code"] for f in by[p]["findings"]]
assert list(by) == sorted(by), list(by)
assert codes("tree/out_link.safetensors") == ["symlink_skipped"], by["tree/out_link.safetensors"]
assert codes("tree/out_dir") == ["symlink_skipped"]
assert codes("tree/sub/cycle") == ["symlink_skipped"]
assert codes("tree/loop_a") == ["symlink_skipped"] and codes("tree/loop_b") == ["symlink_skipped"]
assert codes("tree/dangling") == ["io_error"] and by["tree/dangling"]["verdict"] == "error"
fifo = by["tree/fifo.safetensors"]
assert codes("tree/fifo.safetensors") == ["not_regular_file"] and fifo["verdict"] == "warn", fifo
assert fifo["sha256"] is None
link = by["tree/sub/inside_link.safetensors"]
assert link["verdict"] == "ok" and link["blob"] == "tree/a.safetensors", link
assert by["tree/sub/b.safetensors"]["verdict"] == "invalid"
assert not any("secret" in p for p in by), list(by)
# a.safetensors and the link to it: one read
assert recs[-1]["bytes"] == by["tree/a.safetensors"]["size"] + by["tree/sub/b.safetensors"]["size"], recs[-1]
EOF
# a FIFO named on the command line is reported, not opened: verdict error (it was not read),
# whatever --fail-on says; inside a tree it stays a warning (above)
timeout 20 "$CLI" scan tree/fifo.safetensors >out.txt 2>&1
rc=$?
[ "$rc" -eq 3 ] && grep -q 'not_regular_file' out.txt && grep -q 'ERROR' out.txt && ok ||
    fail "FIFO argument: rc $rc $(cat out.txt)"
timeout 20 "$CLI" scan --fail-on unsafe tree/fifo.safetensors >out.txt 2>&1
[ $? -eq 3 ] && ok || fail "FIFO argument with --fail-on unsafe: $(cat out.txt)"
expect_rc 3 "a device named on the command line" -- "$CLI" scan /dev/zero
grep -q 'not_regular_file' out.txt && ok || fail "/dev/zero: $(cat out.txt)"
ln -s fifo.safetensors tree/link_to_fifo_arg
expect_rc 3 "a link to a FIFO named on the command line" -- "$CLI" scan tree/link_to_fifo_arg
rm tree/link_to_fifo_arg
ln -s nowhere dangling_arg
expect_rc 3 "a dangling link named on the command line" -- "$CLI" scan dangling_arg
grep -q 'io_error' out.txt && ok || fail "dangling argument: $(cat out.txt)"
rm dangling_arg
# nothing checked is no pass: an empty folder, an --include that matches nothing
mkdir empty_dir
expect_rc 4 "an empty directory" -- "$CLI" scan empty_dir
grep -q 'no file was checked' err.txt && ok || fail "empty directory message: $(cat err.txt)"
expect_rc 4 "an --include matching nothing" -- "$CLI" scan --include '*.nothing' tree
grep -q 'no file was checked' err.txt && ok || fail "--include message: $(cat err.txt)"
expect_rc 4 "--format json, nothing checked" -- "$CLI" scan --format json empty_dir
grep -q '"type":"summary","schema":1,"files":0' out.txt && ok || fail "empty json summary: $(cat out.txt)"
rmdir empty_dir
timeout 20 "$CLI" inspect tree/fifo.safetensors >out.txt 2>&1
rc=$?
[ "$rc" -eq 3 ] && grep -q 'not_regular_file' out.txt && ok || fail "inspect FIFO: rc $rc $(cat out.txt)"
# a link named on the command line is followed (the user named it); blob is its target
expect_rc 0 "link argument" -- "$CLI" scan --format json tree/out_link.safetensors
py "link argument followed" <<'EOF'
import json
r = json.loads(open("out.txt").readline())
assert r["verdict"] == "ok" and r["blob"].endswith("/outside/secret.safetensors"), r
EOF

# ------------------------------------------------------------------ Hugging Face cache layout
R=hf/hub/models--org--name
mkdir -p $R/blobs $R/refs $R/snapshots/aaa $R/snapshots/bbb
cp ok.safetensors "$R/blobs/$OKSHA"
BAD=ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
printf 'not what the name says' >"$R/blobs/$BAD"
printf 'aaa' >$R/refs/main
ln -s "../../blobs/$OKSHA" $R/snapshots/aaa/model.safetensors
ln -s "../../blobs/$OKSHA" $R/snapshots/bbb/model.safetensors
ln -s "../../blobs/$BAD" $R/snapshots/bbb/extra.bin
expect_rc 1 "HF cache" -- "$CLI" scan --format json $R
py "HF cache records" "$R" "$OKSHA" "$BAD" <<'EOF'
import json, sys
R, oksha, bad = sys.argv[1:4]
recs = [json.loads(l) for l in open("out.txt")]
files, summary = recs[:-1], recs[-1]
paths = [r["path"] for r in files]
assert paths == [R + "/refs/main", R + "/snapshots/aaa/model.safetensors",
                 R + "/snapshots/bbb/extra.bin", R + "/snapshots/bbb/model.safetensors"], paths
a, x, b = files[1], files[2], files[3]
assert a["blob"] == R + "/blobs/" + oksha and b["blob"] == a["blob"], (a, b)
assert a["verdict"] == b["verdict"] == "ok" and a["sha256"] == oksha, a
assert x["blob"] == R + "/blobs/" + bad
assert "digest_mismatch" in [f["code"] for f in x["findings"]] and x["verdict"] == "invalid", x
# the shared blob is read once: bytes = refs/main + one copy of the blob + the bad blob
import os
assert summary["bytes"] == 3 + os.path.getsize("ok.safetensors") + len(b"not what the name says"), summary
EOF
# a snapshot folder or a snapshot file alone: the root is still models--org--name
expect_rc 0 "HF snapshot file" -- "$CLI" scan --format json $R/snapshots/aaa/model.safetensors
grep -q "\"blob\":\"$R/blobs/$OKSHA\"" out.txt && ok || fail "HF file argument: $(cat out.txt)"
expect_rc 1 "HF snapshot folder" -- "$CLI" scan $R/snapshots/bbb
grep -q 'digest_mismatch' out.txt && ok || fail "HF folder argument: $(cat out.txt)"

# scanning "." inside a snapshot: the cache is found through the real path
(cd $R/snapshots/bbb && "$CLI" scan --format json .) >out.txt 2>err.txt
[ $? -eq 1 ] && ok || fail "scan . in a snapshot: exit status"
py "scan . in a snapshot" "$OKSHA" <<'EOF2'
import json, sys
recs = [json.loads(l) for l in open("out.txt")][:-1]
by = {r["path"]: r for r in recs}
assert set(by) == {"./extra.bin", "./model.safetensors"}, by
assert by["./model.safetensors"]["blob"].endswith("/models--org--name/blobs/" + sys.argv[1])
assert by["./model.safetensors"]["blob"].startswith("/"), by
assert "digest_mismatch" in [f["code"] for f in by["./extra.bin"]["findings"]], by
EOF2
# an index in a snapshot: its shards are links into blobs/, inside the root, so they are found
IDX=hfidx/models--o--n
mkdir -p $IDX/blobs $IDX/snapshots/r1 idx
python3 - <<'EOF2'
import json, struct
def st(name, data):
    body = json.dumps({name: {"dtype": "U8", "shape": [len(data)],
                              "data_offsets": [0, len(data)]}}).encode()
    body += b" " * ((-(8 + len(body))) % 8)
    return struct.pack("<Q", len(body)) + body + data
open("idx/s1.safetensors", "wb").write(st("a", b"12345678"))
open("idx/s2.safetensors", "wb").write(st("b", b"abcdefgh"))
open("idx/model.safetensors.index.json", "w").write(json.dumps(
    {"metadata": {"total_size": 16}, "weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}}))
EOF2
for f in idx/*; do
    h=$(sha256sum "$f" | cut -c1-64)
    cp "$f" "$IDX/blobs/$h"
    ln -s "../../blobs/$h" "$IDX/snapshots/r1/$(basename "$f")"
done
expect_rc 0 "sharded model in a HF snapshot" -- "$CLI" scan --format json $IDX
grep -q '"format":"safetensors-index"' out.txt && ok || fail "HF index: $(cat out.txt)"
rm idx/s2.safetensors
expect_rc 1 "index naming a missing shard" -- "$CLI" scan --format json idx
py "index_shard_missing" <<'EOF2'
import json
recs = [json.loads(l) for l in open("out.txt")][:-1]
r = [r for r in recs if r["path"] == "idx/model.safetensors.index.json"][0]
f = [f for f in r["findings"] if f["code"] == "index_shard_missing"][0]
assert r["verdict"] == "invalid" and f["member"] == "s2.safetensors", r
EOF2

# ------------------------------------------------------------------ include / exclude
"$CLI" scan --format json --include '*.safetensors' tree >out.txt 2>/dev/null
py "--include" <<'EOF'
import json
paths = [json.loads(l).get("path") for l in open("out.txt")][:-1]
# include selects files; directory links are still walked (or reported when skipped)
files = [p for p in paths if p not in ("tree/out_dir", "tree/sub/cycle")]
assert files and all(p.endswith(".safetensors") for p in files), paths
assert "tree/dangling" not in paths and "tree/fifo.safetensors" in paths, paths
EOF
"$CLI" scan --format json --exclude sub --exclude 'fifo*' tree >out.txt 2>/dev/null
py "--exclude prunes a directory and matches base names" <<'EOF'
import json
paths = [json.loads(l).get("path") for l in open("out.txt")][:-1]
assert not any(p.startswith("tree/sub") for p in paths), paths
assert "tree/fifo.safetensors" not in paths and "tree/a.safetensors" in paths, paths
EOF
"$CLI" scan --format json --include 'sub/*' tree >out.txt 2>/dev/null
py "--include on the relative path" <<'EOF'
import json
paths = [json.loads(l).get("path") for l in open("out.txt")][:-1]
assert paths == ["tree/out_dir", "tree/sub/b.safetensors", "tree/sub/cycle",
                 "tree/sub/inside_link.safetensors"], paths
EOF
expect_rc 1 "a file argument is never filtered" -- "$CLI" scan --exclude '*' invalid.safetensors
grep -q '^invalid.safetensors: INVALID' out.txt && ok || fail "explicit file filtered: $(cat out.txt)"

# ------------------------------------------------------------------ standard input
"$CLI" scan --format json - <ok.safetensors >out.txt 2>err.txt
[ $? -eq 0 ] && ok || fail "stdin ok: $(cat out.txt err.txt)"
py "stdin record" "$OKSHA" <<'EOF'
import json, os, sys
r = json.loads(open("out.txt").readline())
assert r["path"] == "-" and r["format"] == "safetensors" and r["verdict"] == "ok", r
assert r["sha256"] == sys.argv[1] and r["size"] == os.path.getsize("ok.safetensors"), r
EOF
cat ok.safetensors | "$CLI" scan --format json --stdin-name upload.safetensors - >out.txt 2>err.txt
grep -q '"path":"upload.safetensors"' out.txt && ok || fail "--stdin-name: $(cat out.txt)"
# the name is a hint: non-format content named .pt is format_mismatch
printf 'plain words' | "$CLI" scan --format json --stdin-name model.pt - >out.txt 2>err.txt
[ $? -eq 1 ] && grep -q '"code":"format_mismatch"' out.txt && ok || fail "stdin hint: $(cat out.txt)"
# without the name: text (ok, exit 0); binary content is format_unknown (warn, exit 0)
printf 'plain words' | "$CLI" scan -v - >out.txt 2>err.txt
[ $? -eq 0 ] && grep -q '^-: OK (text)$' out.txt && ok || fail "stdin no hint: $(cat out.txt)"
printf 'plain\001words' | "$CLI" scan - >out.txt 2>err.txt
[ $? -eq 0 ] && grep -q '^-: WARN (unknown)$' out.txt && ok || fail "stdin binary: $(cat out.txt)"
# a Git LFS pointer on standard input is git-lfs-pointer / lfs_pointer exactly as the file is,
# also when --stdin-name says safetensors (the stream route is not taken for it)
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 4096\n' \
    4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393 >model.safetensors
"$CLI" scan --format json model.safetensors >file.json 2>/dev/null
for name in "" model.safetensors; do
    if [ -n "$name" ]; then
        "$CLI" scan --format json --stdin-name "$name" - <model.safetensors >stdin.json 2>/dev/null
    else
        "$CLI" scan --format json - <model.safetensors >stdin.json 2>/dev/null
    fi
    [ $? -eq 1 ] && ok || fail "stdin LFS pointer ($name): exit status"
    py "stdin LFS pointer ($name)" <<'EOF2'
import json
a = json.loads(open("stdin.json").readline())
b = json.loads(open("file.json").readline())
assert a["format"] == b["format"] == "git-lfs-pointer", (a, b)
assert [f["code"] for f in a["findings"]] == ["lfs_pointer"], a
assert a["findings"] == b["findings"] and a["verdict"] == b["verdict"] == "invalid", (a, b)
assert a["sha256"] == b["sha256"] and a["size"] == b["size"], (a, b)
EOF2
done
rm -f model.safetensors
# invalid safetensors through the stream: same findings as the file
"$CLI" scan --format json - <invalid.safetensors >stdin.json 2>/dev/null
"$CLI" scan --format json invalid.safetensors >file.json 2>/dev/null
py "stdin findings equal the file's" <<'EOF'
import json
a = json.loads(open("stdin.json").readline())
b = json.loads(open("file.json").readline())
assert a["findings"] == b["findings"] and a["verdict"] == b["verdict"] == "invalid", (a, b)
EOF
# a header length past the end: a file without a hint is no format (warn); stdin agrees
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<Q", 4096) + b"{\"a\":1}")' >trunc.dat
"$CLI" scan --format json trunc.dat >file.json 2>/dev/null
"$CLI" scan --format json - <trunc.dat >stdin.json 2>/dev/null
py "truncated header: stdin verdict equals the file's" <<'EOF'
import json
a = json.loads(open("stdin.json").readline())
b = json.loads(open("file.json").readline())
assert (a["format"], a["verdict"], a["findings"]) == (b["format"], b["verdict"], b["findings"]), (a, b)
EOF
# a broken header early in a long stream: the whole input is still read and digested
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<Q", 5) + b"{\"a\":" + b"x" * 300000)' >badhdr.dat
"$CLI" scan --format json - <badhdr.dat >out.txt 2>/dev/null
py "stream reads to the end after a header error" "$(sha256sum badhdr.dat | cut -c1-64)" <<'EOF'
import json, sys
r = json.loads(open("out.txt").readline())
assert r["verdict"] == "invalid" and r["size"] == 300013 and r["sha256"] == sys.argv[1], r
EOF
# over --max-memory: limit_exceeded with limit max_memory
head -c 300000 /dev/zero | tr '\0' 'x' | "$CLI" scan --format json --max-memory 100000 - >out.txt 2>err.txt
[ $? -eq 1 ] || fail "stdin over max_memory exit"
py "stdin over max_memory" <<'EOF'
import json
r = json.loads(open("out.txt").readline())
f = [f for f in r["findings"] if f["code"] == "limit_exceeded"][0]
assert f["limit"] == "max_memory" and f["offset"] == 100000 and r["size"] == 300000, r
EOF
"$CLI" scan --sha256 "$OKSHA" - <ok.safetensors >out.txt 2>&1
[ $? -eq 0 ] && ok || fail "stdin --sha256 match: $(cat out.txt)"
"$CLI" scan --format json --sha256 "$ZEROS" - <ok.safetensors >out.txt 2>&1
[ $? -eq 1 ] && grep -q '"code":"digest_mismatch"' out.txt && ok || fail "stdin --sha256 mismatch: $(cat out.txt)"

# ------------------------------------------------------------------ --sha256 on a file
expect_rc 0 "--sha256 match" -- "$CLI" scan --sha256 "$OKSHA" ok.safetensors
UPPER=$(printf '%s' "$OKSHA" | tr 'a-f' 'A-F')
expect_rc 0 "--sha256 match, upper case" -- "$CLI" scan --sha256 "$UPPER" ok.safetensors
expect_rc 1 "--sha256 mismatch" -- "$CLI" scan --format json --sha256 "$ZEROS" ok.safetensors
grep -q '"code":"digest_mismatch","severity":"error","offset":null' out.txt && ok ||
    fail "digest_mismatch record: $(cat out.txt)"
expect_rc 1 "--sha256 with --no-digest still checks" -- "$CLI" scan --no-digest --sha256 "$ZEROS" ok.safetensors

# ------------------------------------------------------------------ a directory with bad files
mkdir -p mixed
cp ok.safetensors mixed/1.safetensors
cp invalid.safetensors mixed/2.safetensors
ln -s "$T/gone" mixed/3.safetensors
cp warn.safetensors mixed/4.safetensors
expect_rc 3 "scan goes past bad files" -- "$CLI" scan -v mixed
py "every file of the folder reported" <<'EOF'
lines = open("out.txt").read().splitlines()
heads = [l for l in lines if not l.startswith(" ")]
assert heads[:4] == ["mixed/1.safetensors: OK (safetensors)",
                     "mixed/2.safetensors: INVALID (safetensors)",
                     "mixed/3.safetensors: ERROR (unknown)",
                     "mixed/4.safetensors: WARN (safetensors)"], heads
assert heads[4].startswith("4 files: 1 ok, 1 warn, 1 invalid, 0 unsafe, 1 error"), heads
EOF

# ------------------------------------------------------------------ progress
expect_rc 0 "no progress when stderr is not a terminal" -- "$CLI" scan warn.safetensors ok.safetensors
[ ! -s err.txt ] && ok || fail "stderr not empty: $(od -c err.txt | head -3)"
expect_rc 1 "--progress always" -- "$CLI" scan --progress always -j 2 many
grep -q $'\r' err.txt && grep -q 'files' err.txt && ok || fail "progress line: $(od -c err.txt | head)"
py "progress ends cleared" <<'EOF'
err = open("err.txt", "rb").read()
assert err.endswith(b"\r\x1b[K"), err[-40:]
assert b"\n" not in err, err
EOF
expect_rc 1 "--progress never" -- "$CLI" scan --progress never many
[ ! -s err.txt ] && ok || fail "progress never"

# auto: on a terminal (script(1) gives stderr a pty) the line shows for several files only,
# and never with --quiet
if command -v script >/dev/null 2>&1; then
    script -qec "'$CLI' scan many >/dev/null" /dev/null >tty.txt 2>&1
    grep -q 'stguard: [0-9]*/24 files' tty.txt && ok || fail "progress on a terminal: $(od -c tty.txt | head -3)"
    script -qec "'$CLI' scan ok.safetensors >/dev/null" /dev/null >tty.txt 2>&1
    grep -q 'files,' tty.txt && fail "progress for one quick file: $(od -c tty.txt | head -3)" || ok
    script -qec "'$CLI' scan -q many >/dev/null" /dev/null >tty.txt 2>&1
    grep -q 'files,' tty.txt && fail "progress with --quiet: $(od -c tty.txt | head -3)" || ok
fi

# ------------------------------------------------------------------ interrupts (real signals)
# Sparse 256 MiB files: hashing each takes long enough that the signal lands during the scan.
# Every format is closed validly (SARIF also against the official schema when python3 has
# jsonschema), the records printed are the ones counted, the progress line is cleared.
mkdir -p huge
for i in $(seq 1 30); do truncate -s 256M "huge/f$i.dat"; done
for sig in INT TERM; do
    for fmt in text json sarif; do
        rm -f int.err # wait_started must not see the last run's line
        "$CLI" scan --progress always --format $fmt huge >int.out 2>int.err &
        pid=$!
        wait_started int.err
        kill -$sig $pid
        wait $pid
        rc=$?
        want=$([ $sig = INT ] && echo 130 || echo 143)
        [ $rc -eq $want ] && ok || fail "SIG$sig during a $fmt scan: exit $rc, want $want"
        py "$fmt output after SIG$sig" $sig $fmt "${STG_SOURCE_DIR:-}" <<'EOF'
import json, re, sys
sig, fmt, src = sys.argv[1:4]
out = open("int.out").read()
err = open("int.err", "rb").read()
assert err.endswith(b"\r\x1b[K"), err[-60:]  # the progress line is cleared
if fmt == "text":
    lines = out.splitlines()
    assert lines and lines[-1].startswith("interrupted by SIG" + sig), lines[-3:]
    m = re.match(r"(\d+) files?: ", lines[-2])
    printed = len([l for l in lines[:-2] if not l.startswith(" ")])
    counted = int(m.group(1))
elif fmt == "json":
    recs = [json.loads(l) for l in out.splitlines()]
    assert recs[-1]["type"] == "summary" and recs[-1]["interrupted"] is True, recs[-1]
    printed, counted = len(recs) - 1, recs[-1]["files"]
else:
    doc = json.loads(out)
    try:
        import jsonschema
        schema = json.load(open(src + "/tests/data/sarif/sarif-schema-2.1.0.json"))
        jsonschema.Draft4Validator(schema).validate(doc)
    except ImportError:
        pass
    run = doc["runs"][0]
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False and inv["exitSignalName"] == "SIG" + sig, inv
    assert inv["exitCode"] == (130 if sig == "INT" else 143), inv
    printed, counted = len(run["artifacts"]), run["properties"]["files"]
assert printed == counted < 30, (printed, counted)
EOF
    done
done
rm -rf huge
# The signal during the last (here the only) file, sent once its progress line shows (a second
# into the file): the read in progress stops at once (a 16 GiB sparse file takes seconds to
# hash), the file gets no record, the output says interrupted and the status is 130 / 143; with
# -j 2 and two such files too.
truncate -s 16G last.safetensors
truncate -s 16G last2.safetensors
for run in "INT last.safetensors" "TERM last.safetensors" "INT -j 2 last.safetensors last2.safetensors"; do
    sig=${run%% *}
    for args in "${run#* }"; do
        rm -f int.err
        # shellcheck disable=SC2086
        "$CLI" scan --progress always --format json $args >int.out 2>int.err &
        pid=$!
        wait_started int.err
        start=$(date +%s%N)
        kill -$sig $pid
        wait $pid
        rc=$?
        ms=$((($(date +%s%N) - start) / 1000000))
        want=$([ $sig = INT ] && echo 130 || echo 143)
        [ $rc -eq $want ] && ok || fail "SIG$sig during the last file ($args): exit $rc, want $want"
        [ $ms -lt 3000 ] && ok || fail "SIG$sig during the last file ($args): ${ms} ms to stop"
        py "output after SIG$sig during the last file" <<'EOF'
import json
recs = [json.loads(l) for l in open("int.out")]
assert recs[-1]["type"] == "summary" and recs[-1]["interrupted"] is True, recs[-1]
assert recs[-1]["files"] == len(recs) - 1 == 0, recs
EOF
    done
done
rm -f last.safetensors last2.safetensors
# ... and while standard input is an idle pipe (a writer holds it open, sends nothing): the read
# stops too, with and without a progress thread
mkfifo idle.fifo
exec 9<>idle.fifo
for prog in never always; do
    rm -f int.err
    "$CLI" scan --format json --progress $prog - <idle.fifo >int.out 2>int.err &
    pid=$!
    # with a progress line: once it shows; without: a second, and a signal before the walk
    # begins stops it as well (the handlers are set first)
    if [ $prog = always ]; then wait_started int.err; else sleep 1; fi
    start=$(date +%s%N)
    kill -INT $pid
    wait $pid
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    [ $rc -eq 130 ] && [ $ms -lt 3000 ] && grep -q '"files":0,.*"interrupted":true' int.out && ok ||
        fail "SIGINT while stdin is idle (progress $prog): exit $rc after ${ms} ms: $(cat int.out)"
done
exec 9>&-
rm -f idle.fifo

# ------------------------------------------------------------------ inspect
expect_rc 0 "inspect text" -- "$CLI" inspect ok.safetensors
grep -q 'header length: ' out.txt && grep -Eq '^  weight +F32 +\[2, 2\] +4  \[0, 16\)$' out.txt &&
    grep -q '"format": "pt"' out.txt && ok || fail "inspect text: $(cat out.txt)"
expect_rc 0 "inspect json" -- "$CLI" inspect --format json ok.safetensors
py "inspect json" <<'EOF'
import json, struct
d = json.loads(open("out.txt").read())
raw = open("ok.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
assert list(d) == ["type", "schema", "path", "header_length", "data_start", "parameters",
                   "tensor_bytes", "metadata", "tensors"], list(d)
assert d["type"] == "inspect" and d["path"] == "ok.safetensors", d
assert d["header_length"] == n and d["data_start"] == 8 + n, d
assert d["metadata"] == {"format": "pt"}, d
t = {x["name"]: x for x in d["tensors"]}
assert t["weight"] == {"name": "weight", "dtype": "F32", "shape": [2, 2], "parameters": 4,
                       "begin": 0, "end": 16}, t
assert t["bias"] == {"name": "bias", "dtype": "F32", "shape": [2], "parameters": 2, "begin": 16,
                     "end": 24}, t
assert d["parameters"] == 6 and d["tensor_bytes"] == 24, d
EOF
expect_rc 0 "inspect --tensor-sha256" -- "$CLI" inspect --format json --tensor-sha256 ok.safetensors
cp out.txt inspect.json
START=$(python3 -c 'import json; print(json.load(open("inspect.json"))["data_start"])')
WSHA=$(dd if=ok.safetensors bs=1 skip=$((START + 0)) count=16 2>/dev/null | sha256sum | cut -c1-64)
BSHA=$(dd if=ok.safetensors bs=1 skip=$((START + 16)) count=8 2>/dev/null | sha256sum | cut -c1-64)
py "tensor digests equal sha256sum of the bytes" "$WSHA" "$BSHA" <<'EOF'
import json, sys
t = {x["name"]: x for x in json.load(open("inspect.json"))["tensors"]}
assert t["weight"]["sha256"] == sys.argv[1], (t, sys.argv)
assert t["bias"]["sha256"] == sys.argv[2], (t, sys.argv)
EOF
expect_rc 0 "inspect text --tensor-sha256" -- "$CLI" inspect --tensor-sha256 ok.safetensors
grep -q "sha256 $WSHA" out.txt && ok || fail "inspect text digest: $(cat out.txt)"
expect_rc 1 "inspect an invalid file" -- "$CLI" inspect invalid.safetensors
grep -q 'offsets_overlap' out.txt && ok || fail "inspect invalid findings: $(cat out.txt)"
expect_rc 1 "inspect an invalid file, json" -- "$CLI" inspect --format json invalid.safetensors
grep -q '"code":"offsets_overlap"' out.txt && ok || fail "inspect invalid json: $(cat out.txt)"
expect_rc 1 "inspect strict: leading whitespace is invalid" -- "$CLI" inspect leading_ws.safetensors
expect_rc 0 "inspect --profile compat" -- "$CLI" inspect --profile compat leading_ws.safetensors
grep -q '^  note: header_not_json_object: ' out.txt && grep -Eq '^  a +U8 +\[4\] +4  \[0, 4\)$' out.txt && ok ||
    fail "inspect compat warnings: $(cat out.txt)"
expect_rc 3 "inspect a missing file" -- "$CLI" inspect "$T/nope.safetensors"
expect_rc 0 "inspect with a limit option" -- "$CLI" inspect --max-rank 2 rank2.safetensors
expect_rc 1 "inspect with a limit that is hit" -- "$CLI" inspect --max-rank 1 rank2.safetensors

# ------------------------------------------------------------------ pickle policy options
expect_rc 1 "dangerous pickle" -- "$CLI" scan --format json pickle/os_system.pkl
grep -q '"verdict":"unsafe"' out.txt && grep -q '"global":"os.system"' out.txt && ok ||
    fail "os.system pickle: $(cat out.txt)"
# a hard-blocked global cannot be allowed: the option is refused as a usage error
expect_rc 2 "--allow-global refuses a hard-blocked global" -- \
    "$CLI" scan --format json --allow-global os:system pickle/os_system.pkl
grep -q 'allow-global' err.txt && ok || fail "hard block message: $(cat err.txt)"
expect_rc 1 "unknown global" -- "$CLI" scan --format json pickle/custom.pkl
grep -q '"code":"pickle_global_unknown"' out.txt && ok || fail "unknown global: $(cat out.txt)"
expect_rc 0 "--allow-global allows an unknown global" -- \
    "$CLI" scan --format json --allow-global mymod:MyClass pickle/custom.pkl
py "allowed global listed" <<'EOF'
import json
r = json.loads(open("out.txt").readline())
assert r["verdict"] == "warn", r
g = [g for g in r["globals"] if g["module"] == "mymod" and g["name"] == "MyClass"]
assert g and g[0]["class"] == "allowed" and {"offset", "member"} <= set(g[0]), r
EOF

printf 'stguard-policy 1\n# reviewed\nallow mymod MyClass\n' >allow.policy
expect_rc 0 "--policy allow list" -- "$CLI" scan --format json --policy allow.policy pickle/custom.pkl
grep -q '"class":"allowed"' out.txt && ok || fail "--policy allow: $(cat out.txt)"
printf 'stguard-policy 1\nallow mymod\n' >broken.policy
expect_rc 2 "--policy with a bad line" -- "$CLI" scan --policy broken.policy pickle/custom.pkl
grep -q 'broken.policy:2:' err.txt && ok || fail "--policy error line: $(cat err.txt)"

# ------------------------------------------------------------------ the bundled examples
if [ -n "${STG_SOURCE_DIR:-}" ] && [ -d "$STG_SOURCE_DIR/corpus/examples" ]; then
    EX=$STG_SOURCE_DIR/corpus/examples
    python3 "$STG_SOURCE_DIR/tools/make_examples.py" "$T/regen" &&
        diff -r "$EX" "$T/regen" >/dev/null && ok ||
        fail "corpus/examples differs from what tools/make_examples.py writes"
    (cd "$EX" && "$CLI" scan --format json .) >out.txt 2>err.txt
    [ $? -eq 1 ] && ok || fail "examples exit status"
    py "example verdicts (corpus/examples/README.md)" <<'EOF2'
import json
recs = [json.loads(l) for l in open("out.txt")]
got = {r["path"]: r["verdict"] for r in recs[:-1]}
want = {"./README.md": "ok", "./model.safetensors": "ok", "./unpadded.safetensors": "warn",
        "./broken/overlap.safetensors": "invalid", "./broken/truncated.safetensors": "invalid",
        "./broken/size_mismatch.safetensors": "invalid", "./broken/weights.bin": "invalid",
        "./unsafe/os_system.pkl": "unsafe",
        "./torch/pytorch_model.bin": "ok",  # only allowlisted globals: pickle_file is info
        "./sharded/model-00001-of-00002.safetensors": "ok",
        "./sharded/model-00002-of-00002.safetensors": "ok",
        "./sharded/model.safetensors.index.json": "ok",
        "./gguf/model.gguf": "ok", "./broken/lying_dims.gguf": "invalid",
        "./unsafe/escape.onnx": "unsafe"}
assert got == want, got
EOF2
fi

echo "$CHECKS checks passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
