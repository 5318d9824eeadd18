#!/bin/bash
# Compat conformance check: stguard's `compat` verdicts against huggingface/safetensors 0.8's.
#
#   tools/conformance.sh [CONFORMANCE_DIR]
#
# CONFORMANCE_DIR (default: $STG_SOURCE_DIR/../shared/conformance, else <repo>/../shared/conformance)
# holds gen_probes.py and reference_verdicts.tsv. The probes are regenerated into a temporary
# directory and each one is validated in the compat profile: ok/warn must match the reference's
# OK and invalid its ERR. Runs through the CLI (`stguard scan --profile compat --format json`) when
# one is built and usable, else through the test_conformance driver of a build tree.
# Exit: 0 all agree, 1 some disagree, 77 skipped (folder, python3 or binaries missing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=${STG_SOURCE_DIR:-$(dirname "$here")}
conf=${1:-$root/../shared/conformance}

if [ ! -d "$conf" ] || [ ! -f "$conf/gen_probes.py" ] || [ ! -f "$conf/reference_verdicts.tsv" ]; then
    echo "SKIPPED: ../shared/conformance not found ($conf)"
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIPPED: python3 is needed to generate the probes"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stg-conformance.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! python3 "$conf/gen_probes.py" "$tmp/probes" >/dev/null; then
    echo "conformance: gen_probes.py failed"
    exit 1
fi

# A CLI that understands the contract (docs/cli.md)?
cli=""
for c in "${STGUARD_CLI:-}" "${STG_BINARY_DIR:-/nonexistent}/stguard" "$root"/build/dev/stguard \
         "$root"/build/*/stguard; do
    if [ -n "$c" ] && [ -x "$c" ] && [ -f "$tmp/probes/ok_hand_pad8.safetensors" ] &&
       "$c" scan --profile compat --format json "$tmp/probes/ok_hand_pad8.safetensors" 2>/dev/null |
           grep -q '"verdict"'; then
        cli=$c
        break
    fi
done

if [ -n "$cli" ]; then
    echo "conformance: using $cli"
    python3 - "$cli" "$tmp/probes" "$conf/reference_verdicts.tsv" <<'PY'
import json, subprocess, sys
cli, probes, tsv = sys.argv[1:4]
passed = failed = 0
for line in open(tsv):
    parts = line.rstrip("\n").split("\t")
    if len(parts) < 2:
        continue
    name, ref = parts[0], parts[1].split()[0]
    out = subprocess.run([cli, "scan", "--profile", "compat", "--format", "json",
                          f"{probes}/{name}.safetensors"], capture_output=True, text=True).stdout
    verdict = "?"
    for rec in out.splitlines():
        try:
            obj = json.loads(rec)
        except ValueError:
            continue
        if obj.get("type") == "file":
            verdict = obj.get("verdict", "?")
    ours = "OK" if verdict in ("ok", "warn") else "ERR" if verdict == "invalid" else "?"
    if ours == ref:
        passed += 1
    else:
        failed += 1
        print(f"MISMATCH {name}: reference {ref}, stguard {verdict}")
print(f"conformance: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
PY
    exit $?
fi

drv=""
for d in "${STG_BINARY_DIR:-/nonexistent}/tests/test_conformance" "$root"/build/dev/tests/test_conformance \
         "$root"/build/*/tests/test_conformance; do
    if [ -x "$d" ]; then
        drv=$d
        break
    fi
done
if [ -z "$drv" ]; then
    echo "SKIPPED: no usable stguard CLI and no test_conformance binary built"
    exit 77
fi
echo "conformance: using $drv"
STG_CONFORMANCE_DIR="$tmp/probes" STG_CONFORMANCE_TSV="$conf/reference_verdicts.tsv" CK_FORK=no \
    CK_VERBOSITY=silent "$drv"
