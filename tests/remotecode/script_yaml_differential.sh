#!/bin/bash
# The YAML subset reader (parser/yaml.c) against PyYAML's composer (python3-yaml), on the seeds
# of corpus/yaml, the NeMo configs tests/remotecode/gen_nemo.py writes the way OmegaConf does,
# and fixed-seed mutations of each: where stguard reads a document its tree equals PyYAML's;
# where it refuses one, the CLI never calls the file ok. Skips (77) without python3-yaml/torch.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "yaml, torch"
[ -n "${STG_YAML_PROBE:-}" ] && [ -x "$STG_YAML_PROBE" ] || { echo "skip: no yaml_probe"; exit 77; }
"$PY" "$SRC/tests/remotecode/gen_nemo.py" "$tmp/gen" || { echo "FAIL: generator"; exit 1; }
mkdir -p "$tmp/nemo"
for f in "$tmp"/gen/*/model.nemo; do
    c=$(basename "$(dirname "$f")")
    tar -xOf "$f" ./model_config.yaml >"$tmp/nemo/$c.yaml" || exit 1
done
"$PY" "$SRC/tests/remotecode/yaml_differential.py" "$STG_YAML_PROBE" "$SRC"/corpus/yaml/*.yaml \
    "$tmp"/nemo/*.yaml "$tmp"/gen/configs/*.y*ml --mutate 60 --cli "$STGUARD_CLI"
