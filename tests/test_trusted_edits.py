"""Edits that take effect or fail loudly, and no dead ends (issue 22): a placeholder fleet gpu_list
imports as a typed topology, a line override shadowing a typed field is a located error, a spec of
verbatim configs only plans to a clear refusal, another chain's config is named and refused."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from conftest import REPO
from tipcgen.check.spec import load_spec, load_spec_text
from tipcgen.cli import app
from tipcgen.emit.files import build_files
from tipcgen.errors import SpecError
from tipcgen.fleet.nodes import name_problem

runner = CliRunner()
TOY = REPO / "tests/fixtures/paddleclas/toy_cls_a_train_infer_python.txt"


def _fleet_config(tmp_path):
    folder = tmp_path / "cfg" / "toy"
    folder.mkdir(parents=True)
    text = TOY.read_text().replace("gpu_list:0|0,1", "gpu_list:xx.xx.xx.xx,yy.yy.yy.yy;0,1")
    assert "xx.xx.xx.xx" in text
    (folder / "toy_fleet_train_infer_python.txt").write_text(text)
    return folder


def test_a_placeholder_fleet_gpu_list_is_typed_and_its_topology_edit_reaches_the_config(tmp_path):
    folder = _fleet_config(tmp_path)
    result = runner.invoke(app, ["import", str(folder), "--out", str(tmp_path / "specs"), "--prepare", "none"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "specs/toy.yml").read_text()
    assert "line_overrides" not in text and "xx.xx.xx.xx" in text
    spec = load_spec(str(tmp_path / "specs/toy.yml"))
    (suite,) = spec.suites.values()
    assert suite.topology[0].ips == ["xx.xx.xx.xx", "yy.yy.yy.yy"]  # typed: two nodes, GPUs 0,1
    config = f"test_tipc/configs/toy/{suite.file}"
    assert "gpu_list:xx.xx.xx.xx,yy.yy.yy.yy;0,1\n" in build_files(spec)[config].decode()
    # the user puts in their nodes: the config follows
    edited = text.replace("xx.xx.xx.xx", "10.0.0.1").replace("yy.yy.yy.yy", "10.0.0.2")
    spec2 = load_spec_text(edited, str(tmp_path / "specs/toy.yml"))
    files = build_files(spec2)
    assert "gpu_list:10.0.0.1,10.0.0.2;0,1\n" in files[config].decode()
    doc = next(v.decode() for k, v in files.items() if k.endswith(".md"))
    assert "10.0.0.1" in doc
    # fleet and doctor refuse a placeholder as a host, saying what to do
    assert "placeholder" in (name_problem("xx.xx.xx.xx") or "")
    assert name_problem("10.0.0.1") is None


SHADOW = """\
tipcgen: 1
model: demo
layout: paddleocr
suites:
  normal:
    file: train_infer_python.txt
    topology: [0]
    train:
      epochs: {key: Global.epoch_num, value: 3}
    trivia:
      line_overrides: {6: 'Global.epoch_num:lite_train_lite_infer=1|whole_train_whole_infer=9'}
"""


def test_an_override_shadowing_a_typed_field_fails_at_the_overrides_line():
    with pytest.raises(SpecError) as exc:
        load_spec_text(SHADOW, "s.yml")
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (11, "suites.normal.trivia.line_overrides.6")
    assert "`train.epochs`" in problem.message and "never reach the config" in problem.message
    assert "set `train.epochs: null`" in (problem.hint or "")
    # either fix validates: the override alone, or the typed field alone
    assert load_spec_text(SHADOW.replace("epochs: {key: Global.epoch_num, value: 3}", "epochs: null"), "s.yml")
    assert load_spec_text(SHADOW.split("    trivia:")[0], "s.yml")


def test_a_spec_of_verbatim_configs_only_builds_and_plans_to_a_clear_refusal(tmp_path):
    folder = tmp_path / "PP-ShiTuV2"
    folder.mkdir()
    (folder / "x_serving_python.txt").write_text(
        "===========================serving_params===========================\nmodel_name:x\npython:python3.7\n"
    )
    assert runner.invoke(app, ["import", str(folder), "--out", str(tmp_path / "specs")]).exit_code == 0
    spec = tmp_path / "specs/PP-ShiTuV2.yml"
    validate = runner.invoke(app, ["validate", str(spec)])
    assert validate.exit_code == 0 and "no train suite" in validate.output
    assert runner.invoke(app, ["build", str(spec), "--out", str(tmp_path / "gen")]).exit_code == 0
    for args in (["plan", str(spec)], ["run", str(spec), "--mode", "lite_train_lite_infer", "--dry-run"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "nothing to plan or run" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    "header, script",
    [
        ("paddle2onnx_params", "test_paddle2onnx.sh"),
        ("serving_params", "test_serving_infer_python.sh"),
        ("cpp_infer_params", "test_inference_cpp.sh"),
    ],
)
def test_another_chains_config_is_named_and_refused_even_with_a_layout(tmp_path, header, script):
    config = tmp_path / "c.txt"
    shutil.copy(TOY, config)
    config.write_text(config.read_text().replace("train_params", header, 1))
    for extra in ([], ["--layout", "paddleclas"]):
        result = runner.invoke(app, ["plan", str(config), "--mode", "lite_train_lite_infer", *extra])
        assert result.exit_code == 2, result.output
        assert f"test_tipc/{script}" in result.output and "does not run it" in result.output


def test_allow_is_per_suite_so_a_suite_added_later_is_checked():
    text = SHADOW.split("    trivia:")[0].replace("suites:\n", "defaults:\n  allow: [TIPC001]\nsuites:\n")
    with pytest.raises(SpecError) as exc:
        load_spec_text(text, "s.yml")
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (5, "defaults.allow") and "per suite" in problem.message
    # an imported spec keeps each suite's own allow: a suite added by hand inherits nothing
    spec = load_spec_text(text.replace("defaults:\n  allow: [TIPC001]\n", ""), "s.yml")
    assert spec.suites["normal"].allow == []
