#!/bin/bash
# NeMo checkpoints and hydra configs written as NeMo and OmegaConf write them
# (tests/remotecode/gen_nemo.py): the benign .nemo and config are ok (label nemo / yaml); every
# _target_ hydra.utils.instantiate would import and call outside NeMo's allowed namespaces (or
# through them to os, or naming a loader) is hydra_target_unsafe with its member path; an
# interpolated _target_ is hydra_target_unresolved; YAML that does not parse is yaml_malformed,
# a tag yaml_unsupported. Skips (77) when Debian's python3 cannot import torch and yaml.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "torch, yaml"
"$PY" "$SRC/tests/remotecode/gen_nemo.py" "$tmp" || { echo "FAIL: generator"; exit 1; }
. "$(dirname "$0")/cli_expect.sh"
expect benign/model.nemo OK nemo
expect unsafe-system/model.nemo UNSAFE nemo "hydra_target_unsafe" "[global os.system]" \
    'member "./model_config.yaml"' "with _args_"
expect unsafe-partial/model.nemo UNSAFE nemo "[global subprocess.Popen]" "_partial_: true"
expect unsafe-getattr/model.nemo UNSAFE nemo "[global nemo.collections.asr.models.os.system]" \
    "through an allowed package"
expect unsafe-loader/model.nemo UNSAFE nemo "ModelPT.restore_from]" "a loader of pickles"
expect unsafe-nemo-target/model.nemo UNSAFE nemo "NeMo's top-level target" "[global builtins.exec]"
expect unresolved/model.nemo WARN nemo "hydra_target_unresolved"
expect configs/train.yaml OK yaml
expect configs/plain.yml OK yaml
expect configs/unsafe.yaml UNSAFE yaml "[global builtins.eval]"
expect configs/not_yaml.yaml INVALID yaml "yaml_malformed"
expect configs/tagged.yaml WARN yaml "yaml_unsupported" "a tag"
# --fail-on warning blocks what only warns; the benign ones pass it
"$STGUARD_CLI" scan --no-digest --fail-on warning "$tmp/unresolved/model.nemo" >/dev/null 2>&1
[ $? -eq 1 ] || { echo "FAIL: --fail-on warning let an unresolved _target_ pass"; fail=1; }
"$STGUARD_CLI" scan --no-digest --fail-on warning "$tmp/benign/model.nemo" "$tmp/configs/train.yaml" \
    >/dev/null 2>&1 || { echo "FAIL: --fail-on warning blocked benign NeMo files"; fail=1; }
# a .nemo name over bytes that are no tar: NeMo's tarfile.open refuses it
printf 'not a tar' >"$tmp/fake.nemo"
expect fake.nemo INVALID unknown "format_mismatch"
[ $fail -eq 0 ] && echo "NeMo checkpoints and hydra configs judged as expected"
exit $fail
