#!/usr/bin/env bash
# The duplicate check's hash is keyed by a per-scan seed (STGUARD_HASH_SEED fixes it): no
# verdict and no finding may depend on it. Every adversarial header shape of bench_worst_case
# (at 50 KB, the keys crafted to collide under the default seed among them) is scanned by the
# CLI under three seeds and the OS's, in both profiles, and the JSON must be the same but for the
# timing field.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "json"
gen=${STG_BENCH_WORST_CASE:-}
if [ -z "$gen" ] || [ ! -x "$gen" ]; then
    echo "FAIL: no bench_worst_case (STG_BENCH_WORST_CASE)"
    exit 1
fi
"$gen" --sizes 0.05 --seconds 0 --no-floor --no-pickle --check-verdicts --keep --dir "$tmp" \
    >"$tmp/table.md" || { cat "$tmp/table.md"; echo "FAIL: generator"; exit 1; }
files=("$tmp"/worst-*.safetensors)
[ "${#files[@]}" -ge 15 ] || { echo "FAIL: only ${#files[@]} shapes written"; exit 1; }
scan() { # seed profile: JSON lines of every file, the timing left out
    if [ "$1" = os ]; then
        env -u STGUARD_HASH_SEED "$STGUARD_CLI" scan --format json --no-digest --profile "$2" "${files[@]}"
    else
        STGUARD_HASH_SEED=$1 "$STGUARD_CLI" scan --format json --no-digest --profile "$2" "${files[@]}"
    fi | "$PY" -c '
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("seconds", "elapsed")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
for line in sys.stdin:
    print(json.dumps(strip(json.loads(line)), sort_keys=True))
'
}
fail=0
for profile in compat strict; do
    scan 1 "$profile" >"$tmp/base.jsonl"
    lines=$(wc -l <"$tmp/base.jsonl")
    [ "$lines" -ge 15 ] || { echo "FAIL: $profile: $lines lines"; fail=1; }
    grep -q '"code": "json_duplicate_key"\|duplicate' "$tmp/base.jsonl" ||
        { echo "FAIL: $profile: no duplicate key reported"; fail=1; }
    for seed in 0x243F6A8885A308D3 0xdeadbeefcafef00d os; do
        scan "$seed" "$profile" >"$tmp/other.jsonl"
        if ! cmp -s "$tmp/base.jsonl" "$tmp/other.jsonl"; then
            echo "FAIL: $profile: seed $seed changes the output"
            diff "$tmp/base.jsonl" "$tmp/other.jsonl" | head -20
            fail=1
        fi
    done
done
[ $fail -eq 0 ] && echo "ok: ${#files[@]} shapes, 2 profiles, 4 seeds, same findings"
exit $fail
