"""Presets: named partial suites between `defaults` and the suites that pick one, and the importer
that writes them (what the amp configs of several models share)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tipcgen.check.spec import load_spec_text
from tipcgen.emit.files import config_files
from tipcgen.errors import SpecError

SPEC = """\
tipcgen: 1
model: demo
layout: paddleocr
defaults:
  topology: [0]
  train:
    device: {key: Global.use_gpu, values: [True]}
    epochs: {key: Global.epoch_num, by_mode: {lite_train_lite_infer: 1}}
    batch_size: {key: Train.loader.batch_size_per_card, by_mode: {lite_train_lite_infer: 2}}
  trainers:
    norm: {train: 'tools/train.py -c configs/${model_name}.yml -o', export: tools/export_model.py -c a.yml -o}
  inference:
    script: tools/infer/predict_rec.py
    use_gpu: {key: --use_gpu, values: [False]}
    batch_size: {key: --rec_batch_num, values: [1]}
presets:
  amp:
    file: ${model_name}_train_amp_infer_python.txt
    train:
      autocast: {key: Global.use_amp, values: [amp]}
suites:
  a_amp: {model_name: alpha, preset: amp}
  b_amp:
    model_name: beta
    preset: amp
    train:
      autocast: {values: [fp16]}
  a_normal: {file: alpha_train_infer_python.txt, model_name: alpha}
"""


def test_a_preset_is_merged_between_defaults_and_the_suite():
    spec = load_spec_text(SPEC, "demo.yml")
    a, b, plain = spec.suites["a_amp"], spec.suites["b_amp"], spec.suites["a_normal"]
    assert (a.file, b.file) == ("alpha_train_amp_infer_python.txt", "beta_train_amp_infer_python.txt")
    assert a.train.autocast.values == ["amp"] and b.train.autocast.values == ["fp16"]
    assert a.train.autocast.key == b.train.autocast.key == "Global.use_amp"
    assert plain.train.autocast is None and plain.preset is None
    files = config_files(spec)
    assert "Global.use_amp:amp\n" in files["test_tipc/configs/demo/alpha_train_amp_infer_python.txt"]
    assert "-c configs/beta.yml" in files["test_tipc/configs/demo/beta_train_amp_infer_python.txt"]


def test_an_unknown_preset_is_located_with_a_suggestion():
    text = SPEC.replace("model_name: beta\n    preset: amp", "model_name: beta\n    preset: ampp")
    with pytest.raises(SpecError) as exc:
        load_spec_text(text, "d.yml")
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (_line(text, "preset: ampp"), "suites.b_amp.preset")
    assert "unknown preset 'ampp'" in problem.message and "'amp'" in (problem.hint or "")


def test_an_error_inside_a_preset_is_reported_once_at_its_line():
    bad = SPEC.replace(
        "autocast: {key: Global.use_amp, values: [amp]}", "autocast: {key: Global.use_amp, valuez: [amp]}"
    )
    with pytest.raises(SpecError) as exc:
        load_spec_text(bad, "d.yml")
    located = [p for p in exc.value.problems if p.field and p.field.startswith("presets.amp")]
    assert len(located) == 1 and located[0].line == _line(bad, "valuez"), exc.value.problems
    assert "did you mean 'values'" in (located[0].hint or "")


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.corpus
def test_the_resnet_import_shares_its_amp_configs_in_a_preset_and_rebuilds_them(corpus):
    from tipcgen.importer import import_group

    folder = corpus / "PaddleClas" / "ResNet"
    paths = sorted(str(p) for p in folder.glob("*.txt"))
    report = import_group(paths)
    assert report.exact == len(paths) and report.yaml
    spec = load_spec_text(report.yaml, "ResNet.yml")
    amp = [n for n, s in spec.suites.items() if s.preset == "amp"]
    assert sum(spec.suites[n].file.endswith("_train_amp_infer_python.txt") for n in amp) >= 3
    source = sum(Path(p).stat().st_size for p in paths)
    assert len(report.yaml.encode()) <= 0.50 * source  # 1.27x before defaults, 0.62x before presets
    built = config_files(spec)
    for p in paths:
        assert built[f"test_tipc/configs/ResNet/{os.path.basename(p)}"].encode() == Path(p).read_bytes()
