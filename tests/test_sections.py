"""Typed benchmark sections: the view `benchmark_train.sh` reads, its lint rules, and the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tipcgen.cli import app
from tipcgen.spec.sections import BenchmarkParams, InputShape, read_params

SPEC = """\
tipcgen: 1
model: demo
layout: paddleocr
suites:
  normal:
    file: train_infer_python.txt
    model_name: demo_rec
    topology: [0]
    train:
      device: {key: Global.use_gpu, values: [True]}
      epochs: {key: Global.epoch_num, by_mode: {lite_train_lite_infer: 1}}
      batch_size: {key: Train.loader.batch_size_per_card, by_mode: {lite_train_lite_infer: 2}}
    trainers:
      norm: {train: tools/train.py -c a.yml -o, export: tools/export_model.py -c a.yml -o}
    inference:
      script: tools/infer/predict_rec.py
      use_gpu: {key: --use_gpu, values: [False]}
      batch_size: {key: --rec_batch_num, values: [1]}
    trivia: {pre_sections: ['null:null']}
    sections:
      train_benchmark_params:
        batch_size: 8|16
        fp_items: fp32|fp16
        epoch: 1
        --profiler_options: batch_range=[10,20];state=GPU
        flags: FLAGS_cudnn_exhaustive_search=1;FLAGS_conv_workspace_size_limit=4096
      infer_benchmark_params:
        random_infer_input: '[{float32,[3, 224, 224]},{int32,[1]}]'
"""


def test_a_suite_reads_its_benchmark_sections_typed(tmp_path):
    from tipcgen.check.spec import load_spec_text

    suite = load_spec_text(SPEC, "demo.yml").suites["normal"]
    train = suite.benchmark()
    assert train == BenchmarkParams(
        batch_sizes=(8, 16),
        fp_items=("fp32", "fp16"),
        epoch=1,
        profiler_options="batch_range=[10,20];state=GPU",
        flags=(("FLAGS_cudnn_exhaustive_search", "1"), ("FLAGS_conv_workspace_size_limit", "4096")),
    )
    infer = suite.benchmark("infer_benchmark_params")
    assert infer is not None
    assert infer.random_inputs == (InputShape("float32", (3, 224, 224)), InputShape("int32", (1,)))
    assert suite.benchmark("disable_train_benchmark") is None


def test_the_sections_still_lower_to_the_same_lines(tmp_path):
    result = CliRunner().invoke(app, ["build", str(_write(tmp_path, SPEC)), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out/demo/test_tipc/configs/demo/train_infer_python.txt").read_text()
    assert text.endswith(
        "null:null\n===========================train_benchmark_params==========================\n"
        "batch_size:8|16\nfp_items:fp32|fp16\nepoch:1\n--profiler_options:batch_range=[10,20];state=GPU\n"
        "flags:FLAGS_cudnn_exhaustive_search=1;FLAGS_conv_workspace_size_limit=4096\n"
        "===========================infer_benchmark_params==========================\n"
        "random_infer_input:[{float32,[3, 224, 224]},{int32,[1]}]\n"
    )


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("batch_size", "8,16", "not whole numbers"),
        ("fp_items", "fp32|pure_fp16", "without `_`"),
        ("epoch", "two", "not a whole number"),
        ("flags", "FLAGS_a=1;oops", "not NAME=VALUE"),
        ("random_infer_input", "[{float32,[3,224}]", "not [{dtype"),
        ("numpy_infer_input", "3x224x224.png", ".npy"),
    ],
)
def test_a_value_the_script_misreads_is_a_located_error(tmp_path, key, value, words):
    old = {
        "batch_size": "batch_size: 8|16",
        "fp_items": "fp_items: fp32|fp16",
        "epoch": "epoch: 1",
        "flags": "flags: FLAGS_cudnn_exhaustive_search=1;FLAGS_conv_workspace_size_limit=4096",
        "random_infer_input": "random_infer_input: '[{float32,[3, 224, 224]},{int32,[1]}]'",
        "numpy_infer_input": "random_infer_input: '[{float32,[3, 224, 224]},{int32,[1]}]'",
    }[key]
    text = SPEC.replace(old, f"{key}: '{value}'")
    result = CliRunner().invoke(app, ["validate", str(_write(tmp_path, text))])
    assert result.exit_code == 2
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip() == f"{key}: '{value}'")
    assert f"demo.yml:{line}:" in result.output and "TIPC023" in result.output and words in result.output
    assert f"sections.{'infer' if 'input' in key else 'train'}_benchmark_params.{key}" in result.output


def test_blanks_at_the_end_are_a_warning_and_null_is_no_value():
    params, issues = read_params({"flags": "FLAGS_a=1 ", "num_workers": "null", "repeat": 3})
    assert [i.rule for i in issues] == ["TIPC024"]
    assert params.flags == (("FLAGS_a", "1"),) and params.num_workers is None and params.repeat == 3


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "demo.yml"
    path.write_text(text)
    return path


@pytest.mark.corpus
def test_every_corpus_benchmark_section_is_typed_and_none_is_left_in_trivia(corpus, tmp_path):
    from tipcgen.check.spec import load_spec

    out = tmp_path / "specs"
    result = CliRunner().invoke(app, ["import", str(corpus), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    typed = 0
    for path in sorted(out.glob("*.yml")):
        spec = load_spec(str(path))
        # (train suites: a dy2static config's second section, `amp_train`, is its chain's tail)
        for name, suite in spec.train_suites.items():
            assert suite.trivia.tail is None, f"{path.name} {name}: a trailing section kept as raw lines"
            for section, params in suite.sections.items():
                view, issues = read_params(params)
                assert not [i for i in issues if i.rule == "TIPC023"], (path.name, name, section, issues)
                typed += 1
                if section == "train_benchmark_params":
                    assert view.batch_sizes and view.fp_items, (path.name, name, params)
    assert typed > 100, "the corpus import typed too few sections to say anything"


def test_section_keys_pick_and_order_the_written_keys(tmp_path):
    text = SPEC.replace(
        "trivia: {pre_sections: ['null:null']}",
        "trivia: {pre_sections: ['null:null'], section_keys: {train_benchmark_params: [fp_items, batch_size]}}",
    )
    result = CliRunner().invoke(app, ["build", str(_write(tmp_path, text)), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    config = (tmp_path / "out/demo/test_tipc/configs/demo/train_infer_python.txt").read_text()
    assert "train_benchmark_params==========================\nfp_items:fp32|fp16\nbatch_size:8|16\n====" in config
    bad = text.replace("[fp_items, batch_size]", "[fp_items, batchsize]")
    result = CliRunner().invoke(app, ["validate", str(_write(tmp_path, bad))])
    assert result.exit_code == 2 and "`batchsize` is not a key of section 'train_benchmark_params'" in result.output
    assert "suites.normal.trivia.section_keys.train_benchmark_params" in result.output
