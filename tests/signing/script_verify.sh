#!/usr/bin/env bash
# stguard verify and scan --signature on real signatures: model_signing's own release vectors
# (tests/signing/upstream, run with the options upstream's scripts/tests/test-verify-v*.sh give
# model_signing), and the signed models and tampered copies tests/signing/gen_signing.py writes
# as model_signing 1.1.1 writes them (each case's `expect` file: the options, the exit status and
# the finding codes). Also: the scan pass reads each file once and reports the signature record
# in JSON Lines, text and SARIF; the exit statuses of usage errors.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "cryptography"
S=$STGUARD_CLI
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

codes_of() { # JSON of verify (or a scan's signature record) on stdin -> "verified codes..."
    "$PY" -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d.get("type") != "signature":
        continue
    d = d.get("signature", d)
    print(str(d["verified"]).lower(), " ".join(sorted(f["code"] for f in d["findings"])))'
}

# 1. upstream vectors (tests/signing/upstream/README.md)
cd "$SRC/tests/signing/upstream" || exit 1
K=keys/signing-key-pub.pem
C=keys/ca-cert.pem
check_up() { # want-status want-codes args...
    local want=$1 codes=$2
    shift 2
    out=$("$S" verify --format json "$@")
    rc=$?
    got=$(echo "$out" | codes_of)
    [ "$rc" = "$want" ] && [ "$got" = "$codes" ] || fail "upstream $*: rc $rc, $got"
}
check_up 0 "true " --signature v0.3.1-elliptic-key/model.sig --public-key $K v0.3.1-elliptic-key/signme-1
check_up 0 "true " --signature v1.0.0-elliptic-key/model.sig --public-key $K v1.0.0-elliptic-key/signme-1
check_up 0 "true " --ignore-paths ./v1.0.1-elliptic-key/ignore-me --signature ./v1.0.1-elliptic-key/model.sig --public-key $K ./v1.0.1-elliptic-key
check_up 1 "false signed_file_extra" --public-key $K v1.0.1-elliptic-key
check_up 0 "true " --ignore-paths ./v1.1.0-elliptic-key/ignore-me --signature ./v1.1.0-elliptic-key/model.sig --public_key $K ./v1.1.0-elliptic-key
for v in v0.3.1 v1.0.0 v1.1.0; do
    check_up 0 "true " --signature ./$v-certificate/model.sig --certificate_chain $C ./$v-certificate/
done
check_up 0 "true " --ignore-paths ./v1.0.1-certificate/ignore-me --certificate-chain $C ./v1.0.1-certificate
check_up 1 "false signature_unsupported" --certificate-chain $C v0.2.0-certificate
echo '{}' >"$tmp/trusted_root.json"
check_up 1 "false signature_unsupported" --trusted-root "$tmp/trusted_root.json" --identity stefanb@us.ibm.com \
    --identity-provider https://sigstore.verify.ibm.com/oauth2 v1.1.0-sigstore
check_up 1 "false signature_untrusted" --certificate-chain $C v1.1.0-elliptic-key
"$S" verify --trusted-root none.json --identity a --identity-provider b v1.1.0-sigstore >/dev/null 2>&1
[ $? = 2 ] || fail "an unreadable trusted root is not exit 2"
check_up 1 "false signature_untrusted" --public-key $K v1.1.0-certificate

# 2. generated cases
"$PY" "$SRC/tests/signing/gen_signing.py" "$tmp/fx" || exit 1
cd "$tmp/fx" || exit 1
n=0
for d in */; do
    d=${d%/}
    [ -f "$d/expect" ] || continue
    n=$((n + 1))
    mapfile -t opts < <(sed -n '/^--$/q;p' "$d/expect")
    read -r want_rc want_codes < <(tail -1 "$d/expect")
    sigopt=()
    printf '%s\n' "${opts[@]}" | grep -q -- '^--signature$' || sigopt=(--signature "$d/model/model.sig")
    out=$("$S" verify --format json "${sigopt[@]}" "${opts[@]}" "$d/model")
    rc=$?
    got=$(echo "$out" | codes_of)
    want="$([ "$want_rc" = 0 ] && echo true || echo false) ${want_codes:-}"
    [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ] || fail "$d: want rc $want_rc [$want], got rc $rc [$got]"
done
[ "$n" -ge 30 ] || fail "only $n generated cases"

# 3. scan --signature: the same verdicts from the scan's own pass, one record per file
out=$("$S" scan --format json --signature key-p256/model/model.sig --public-key keys/p256.pub.pem key-p256/model)
rc=$?
[ "$rc" = 0 ] && [ "$(echo "$out" | codes_of)" = "true " ] || fail "scan key-p256: rc $rc $out"
files=$(echo "$out" | grep -c '"type":"file"')
[ "$files" = 7 ] || fail "scan key-p256: $files file records (4 signed files, model.sig, .git/HEAD, .gitattributes: 7)"
out=$("$S" scan --format json --signature byte-changed/model/model.sig --public-key keys/p256.pub.pem byte-changed/model)
rc=$?
[ "$rc" = 1 ] && [ "$(echo "$out" | codes_of)" = "false signed_file_modified" ] || fail "scan byte-changed: rc $rc"
echo "$out" | "$PY" -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
sig = [r for r in recs if r["type"] == "signature"][0]["signature"]
f = sig["findings"][0]
assert f["file"] == "model.safetensors", f
shas = {r["path"]: r["sha256"] for r in recs if r["type"] == "file"}
assert shas["byte-changed/model/model.safetensors"] in f["message"], (f, shas)
st = [r for r in recs if r["type"] == "file" and r["path"].endswith("model.safetensors")][0]
assert st["verdict"] == "ok", st  # the scan alone sees a valid file: only the signature tells
' || fail "scan byte-changed: the finding does not name the file with the digest the scan computed"
out=$("$S" scan --format json --signature byte-changed-large/model/model.sig --public-key keys/p256.pub.pem byte-changed-large/model)
rc=$?
[ "$rc" = 1 ] && [ "$(echo "$out" | codes_of)" = "false signed_file_modified" ] &&
    echo "$out" | grep -q '"path":"byte-changed-large/model/model.safetensors".*"verdict":"ok"' ||
    fail "scan byte-changed-large (a byte outside what the scan holds): rc $rc"
out=$("$S" scan --signature symlink-refused/model/model.sig --public-key keys/p256.pub.pem symlink-refused/model)
rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q 'signature NOT verified' && echo "$out" | grep -q 'signed_file_unverifiable (file "config-link.json")' ||
    fail "scan symlink-refused text: rc $rc $out"
out=$("$S" scan --signature allow-symlinks/model/model.sig --public-key keys/p256.pub.pem --allow-symlinks allow-symlinks/model)
[ $? = 0 ] && echo "$out" | grep -q 'signature verified' || fail "scan allow-symlinks: $out"
out=$("$S" scan --format sarif --signature file-removed/model/model.sig --public-key keys/p256.pub.pem file-removed/model)
rc=$?
[ "$rc" = 1 ] && echo "$out" | "$PY" -c '
import json, sys
doc = json.load(sys.stdin)
res = doc["runs"][0]["results"]
r = [x for x in res if x["ruleId"] == "signed_file_missing"]
assert len(r) == 1 and r[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("config.json"), res
' || fail "scan file-removed sarif: rc $rc"

# the records follow docs/cli.schema.json
if "$PY" -c "import jsonschema" 2>/dev/null; then
    { "$S" scan --format json --signature byte-changed/model/model.sig --public-key keys/p256.pub.pem byte-changed/model
      "$S" verify --format json --signature cert/model/model.sig --certificate-chain keys/root.pem cert/model
      "$S" verify --format json --public-key keys/p256.pub.pem --signature key-p256/model/model.sig file-renamed/model; } |
        "$PY" -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
n = 0
for line in sys.stdin:
    jsonschema.validate(json.loads(line), schema)
    n += 1
assert n == 11, n
' "$SRC/docs/cli.schema.json" || fail "records not valid against docs/cli.schema.json"
fi

# 4. usage errors and unreadable input: exit 2
"$S" verify key-p256/model >/dev/null 2>&1
[ $? = 2 ] || fail "verify without trust material"
"$S" verify --public-key keys/p256.pub.pem --certificate-chain keys/root.pem key-p256/model >/dev/null 2>&1
[ $? = 2 ] || fail "verify with two methods"
"$S" verify --public-key keys/p256.pub.pem --signature nowhere.sig key-p256/model >/dev/null 2>&1
[ $? = 2 ] || fail "verify with a missing signature"
"$S" verify --public-key key-p256/model/config.json key-p256/model >/dev/null 2>&1
[ $? = 2 ] || fail "verify with a key file that holds no key"
"$S" scan --signature key-p256/model/model.sig --public-key keys/p256.pub.pem key-p256/model cert/model >/dev/null 2>&1
[ $? = 2 ] || fail "scan --signature with two paths"
"$S" scan --signature key-p256/model/model.sig --public-key keys/p256.pub.pem --exclude '*.json' key-p256/model >/dev/null 2>&1
[ $? = 2 ] || fail "scan --signature with --exclude"

[ "$fails" = 0 ] || exit 1
echo "ok: upstream vectors, $n generated cases, scan --signature, usage errors"
