#!/usr/bin/env bash
# The file half of the verdict against model_signing's own code: for every model
# tests/signing/gen_signing.py writes whose signature checks out, tests/signing/reference_files.py
# hashes it with model_signing's hashing.Config (its walk, ignore and link rules) and compares
# with the signed list; stguard verify must agree: "match" when it verifies, "mismatch" or a
# refused walk when it reports signed_file_* findings. The upstream vectors too.
# The oracle is model_signing's source (not packaged for Debian): set MODEL_SIGNING_SRC to the
# src/ folder of a sigstore/model-transparency checkout (1.1.1 was used:
# e3430730bca924e672b2e59f10524a7ffb5adf79); without it the test is skipped (77).
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "cryptography, typing_extensions"
if [ -z "${MODEL_SIGNING_SRC:-}" ] || [ ! -f "$MODEL_SIGNING_SRC/model_signing/hashing.py" ]; then
    echo "skip: MODEL_SIGNING_SRC does not name model_signing's source (src/ of model-transparency)"
    exit 77
fi
S=$STGUARD_CLI
REF="$SRC/tests/signing/reference_files.py"
fails=0
compared=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# one model: reference verdict vs stguard's file findings; $1 model, $2 signature, rest: options
agree() {
    local model=$1 sig=$2
    shift 2
    ref=$("$PY" "$REF" "$MODEL_SIGNING_SRC" "$model" "$sig" "$@" 2>&1 | tail -1)
    out=$("$S" verify --format json --signature "$sig" "${trust[@]}" "$@" "$model")
    ours=$(echo "$out" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
codes = {f["code"] for f in d["findings"]}
other = {c for c in codes if not c.startswith("signed_file_")}
print("other" if other else "files" if codes else "verified")')
    compared=$((compared + 1))
    case "$ref:$ours" in
    match:verified | mismatch:files | "error ValueError:files") ;;
    match:files) [ "$model" = linked-folder/model ] ||
        fail "$model: model_signing says [$ref], stguard [$ours]: $out" ;; # docs/signing.md: stricter
    *) fail "$model: model_signing says [$ref], stguard [$ours]: $out" ;;
    esac
}

"$PY" "$SRC/tests/signing/gen_signing.py" "$tmp/fx" || exit 1
cd "$tmp/fx" || exit 1
for d in */; do
    d=${d%/}
    [ -f "$d/expect" ] || continue
    # only cases whose signature and statement are fine: the rest never reach the files
    tail -1 "$d/expect" | grep -q 'signature_' && continue
    mapfile -t opts < <(sed -n '/^--$/q;p' "$d/expect")
    trust=()
    extra=()
    sig="$d/model/model.sig"
    for ((i = 0; i < ${#opts[@]}; i++)); do
        case ${opts[i]} in
        --signature) sig=${opts[i + 1]}; i=$((i + 1)) ;;
        --public-key | --certificate-chain) trust+=("${opts[i]}" "${opts[i + 1]}"); i=$((i + 1)) ;;
        *) extra+=("${opts[i]}") ;;
        esac
    done
    agree "$d/model" "$sig" "${extra[@]}"
done

cd "$SRC/tests/signing/upstream" || exit 1
trust=(--public-key keys/signing-key-pub.pem)
agree v1.1.0-elliptic-key v1.1.0-elliptic-key/model.sig
agree v1.0.1-elliptic-key v1.0.1-elliptic-key/model.sig --ignore-paths v1.0.1-elliptic-key/ignore-me
agree v1.0.1-elliptic-key v1.0.1-elliptic-key/model.sig
agree v1.0.0-elliptic-key/signme-1 v1.0.0-elliptic-key/model.sig
trust=(--certificate-chain keys/ca-cert.pem)
agree v1.1.0-certificate v1.1.0-certificate/model.sig

[ "$fails" = 0 ] || exit 1
echo "ok: $compared models, model_signing's file verdict and stguard's agree"
