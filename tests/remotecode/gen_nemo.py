#!/usr/bin/python3
"""NeMo checkpoints and hydra configs for script_nemo.sh, written the way NeMo writes them.

A .nemo is what NeMo's SaveRestoreConnector._make_nemo_file_from_folder makes
(nemo/core/connectors/save_restore_connector.py, NVIDIA/NeMo 8cfedd7, lines 599-606):
tarfile.open(filename, "w:") and tar.add(source_dir, arcname="."), the folder holding
model_config.yaml (OmegaConf.save(config, f, resolve=True), lines 580-591: OmegaConf's to_yaml is
yaml.dump(container, default_flow_style=False, allow_unicode=True, sort_keys=False)) and
model_weights.ckpt (torch.save of the state dict). The config's shape follows NeMo's own ASR
configs (examples/asr/conf/conformer/conformer_ctc_bpe.yaml: preprocessor, spec_augment,
encoder, decoder _target_s under nemo.collections.asr.modules, optim by name).

usage: gen_nemo.py OUTDIR   (writes OUTDIR/<case>/model.nemo and OUTDIR/configs/*.yaml)"""
import copy
import io
import os
import sys
import tarfile
import tempfile

import torch
import yaml


def asr_config():
    return {
        "sample_rate": 16000,
        "log_prediction": True,
        "train_ds": {"manifest_filepath": "/data/train.json", "sample_rate": 16000,
                     "batch_size": 32, "shuffle": True, "max_duration": 16.7},
        "validation_ds": {"manifest_filepath": ["/data/dev_clean.json", "/data/dev_other.json"],
                          "batch_size": 32, "shuffle": False},
        "tokenizer": {"dir": "/tok", "type": "bpe", "model_path": "nemo:0a1b_tokenizer.model"},
        "preprocessor": {"_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
                         "sample_rate": 16000, "normalize": "per_feature", "window_size": 0.025,
                         "window": "hann", "features": 80, "n_fft": 512, "dither": 1.0e-05},
        "spec_augment": {"_target_": "nemo.collections.asr.modules.SpectrogramAugmentation",
                         "freq_masks": 2, "time_masks": 10, "freq_width": 27, "time_width": 0.05},
        "encoder": {"_target_": "nemo.collections.asr.modules.ConformerEncoder", "feat_in": 80,
                    "n_layers": 2, "d_model": 64, "att_context_size": [-1, -1],
                    "self_attention_model": "rel_pos", "xscaling": True},
        "decoder": {"_target_": "nemo.collections.asr.modules.ConvASRDecoder", "feat_in": 64,
                    "num_classes": 4, "vocabulary": ["<unk>", "\u2581the", "s", "'"]},
        "optim": {"name": "adamw", "lr": 2.0, "betas": [0.9, 0.98], "weight_decay": 0.001,
                  "sched": {"name": "NoamAnnealing", "warmup_steps": 10000, "min_lr": 1e-06}},
        "loss": {"_target_": "torch.nn.CTCLoss", "blank": 0},
        "callbacks": [{"_target_": "lightning.pytorch.callbacks.ModelCheckpoint",
                       "monitor": "val_wer"}],
        "target": "nemo.collections.asr.models.ctc_bpe_models.EncDecCTCModelBPE",
        "nemo_version": "2.0.0",
    }


def to_yaml(cfg):
    return yaml.dump(cfg, default_flow_style=False, allow_unicode=True, sort_keys=False)


def write_nemo(path, cfg_text):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "model_config.yaml"), "w", encoding="utf-8") as f:
            f.write(cfg_text)
        torch.save({"encoder.weight": torch.zeros(2, 2)}, os.path.join(d, "model_weights.ckpt"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tarfile.open(path, "w:") as tar:
            tar.add(d, arcname=".")


def variant(edit):
    cfg = copy.deepcopy(asr_config())
    edit(cfg)
    return to_yaml(cfg)


def main():
    out = sys.argv[1]
    cases = {
        "benign": to_yaml(asr_config()),
        # what hydra.utils.instantiate would import and call (the CVE class of NeMo configs)
        "unsafe-system": variant(lambda c: c["encoder"].update(
            {"_target_": "os.system", "_args_": ["id > /tmp/pwned"]})),
        "unsafe-partial": variant(lambda c: c["optim"].update(
            {"_target_": "subprocess.Popen", "_partial_": True})),
        # inside an allowed prefix, but reaching os through a module's attributes
        "unsafe-getattr": variant(lambda c: c["decoder"].update(
            {"_target_": "nemo.collections.asr.models.os.system"})),
        "unsafe-loader": variant(lambda c: c["encoder"].update(
            {"_target_": "nemo.core.classes.modelPT.ModelPT.restore_from"})),
        "unsafe-nemo-target": variant(lambda c: c.update({"target": "builtins.exec"})),
        "unresolved": variant(lambda c: c["encoder"].update({"_target_": "${oops.target}"})),
    }
    for name, text in cases.items():
        write_nemo(os.path.join(out, name, "model.nemo"), text)
    configs = os.path.join(out, "configs")
    os.makedirs(configs, exist_ok=True)
    with open(os.path.join(configs, "train.yaml"), "w", encoding="utf-8") as f:
        f.write(to_yaml({"model": asr_config(), "trainer": {"devices": 1, "max_epochs": 10}}))
    with open(os.path.join(configs, "plain.yml"), "w", encoding="utf-8") as f:
        f.write(to_yaml({"language": ["en"], "license": "cc-by-4.0", "tags": ["asr"]}))
    with open(os.path.join(configs, "unsafe.yaml"), "w", encoding="utf-8") as f:
        f.write(to_yaml({"model": {"_target_": "builtins.eval", "_args_": ["1+1"]}}))
    with open(os.path.join(configs, "not_yaml.yaml"), "w", encoding="utf-8") as f:
        f.write("model:\n  a: [1, 2\n")
    with open(os.path.join(configs, "tagged.yaml"), "w", encoding="utf-8") as f:
        f.write("model: !!python/object/apply:os.system ['id']\n")


if __name__ == "__main__":
    main()
