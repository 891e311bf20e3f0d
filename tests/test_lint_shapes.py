"""`tipcgen lint test_tipc/configs` as docs/import-lint.md says to run it on a model repo: it reads the TIPC
configs and the specs of the folder, not the models' own YAML files kept next to them; and a `|`
is reported as reaching an `eval` only where a planned command still carries it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.cli import run_cli
from helpers.upstream import corpus_dir, upstream_dir
from tipcgen.dialects import get_layout
from tipcgen.lint.checks import lint_text
from tipcgen.plan.planner import runner_for

FIXTURES = Path(__file__).parent / "fixtures"
TOY = FIXTURES / "paddleclas" / "toy_cls_a_train_infer_python.txt"
REPO = Path(__file__).resolve().parent.parent

# A model's own YAML (as PaddleDetection and PaddleSeg keep them in test_tipc/configs/<model>/).
MODEL_YAML = """\
_BASE_: ['../_base_/ppyoloe_crn.yml']
batch_size: 8
worker_num: 4
model: PPYOLOE
TrainReader:
  sample_transforms:
    - Decode: {}
"""


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "configs" / "toy"
    folder.mkdir(parents=True)
    shutil.copy(TOY, folder / TOY.name)
    (folder / "toy_model.yml").write_text(MODEL_YAML)
    (folder / "reader.yaml").write_text("tipcgen_like: 1\n")  # a key that merely starts like it
    return tmp_path / "configs"


def test_lint_of_a_configs_folder_skips_the_models_own_yaml(tmp_path):
    configs = _folder(tmp_path)
    result = run_cli("lint", configs, "--format", "json", cwd=tmp_path, timeout=60)
    assert result.returncode in (0, 1), result.stderr
    assert "toy_model.yml" not in result.stdout + result.stderr and "reader.yaml" not in result.stdout
    # a spec in the folder is still linted, and a YAML file named on the command line is read as one
    shutil.copy(REPO / "specs" / "mobilenet_v3_small.yml", configs / "toy" / "mobilenet_v3_small.yml")
    again = run_cli("lint", configs, cwd=tmp_path, timeout=60)
    assert again.returncode in (0, 1) and "Traceback" not in again.stderr, again.stderr
    named = run_cli("lint", configs / "toy" / "toy_model.yml", cwd=tmp_path, timeout=60)
    assert named.returncode == 2 and "toy_model.yml" in named.stdout + named.stderr
    assert "Traceback" not in named.stderr


@pytest.mark.parametrize("bar", ["|rm -rf x", "|", "||cat", "x|y", " | tee out"])
def test_a_bar_a_command_carries_is_still_reported(bar):
    text = TOY.read_text()
    line = next(line for line in text.splitlines() if line.startswith("norm_train:"))
    found = lint_text(text.replace(line, line + bar), get_layout("paddleclas"), "toy.txt")
    bars = [f for f in found if f.rule == "TIPC021" and "'|'" in f.message]
    assert len(bars) == 1 and "eval" in bars[0].message and "PaddleClas's runner" in bars[0].message, found


@pytest.mark.corpus
def test_no_bar_finding_on_the_corpus_where_the_runner_splits_first(monkeypatch):
    """Corpus lines have a `|` where TIPC021's table expects none (serving, C++ and PTQ use_gpu
    lists, dy2static mode tables and gpu_list, PaddleSeg's --config mode table): the runners split
    each on `|` before building a command, so none is reported. The count is the corpus's (it grows
    as chains get typed), so it is not pinned: the shapes named above must all be among them."""
    from tipcgen.check.lint_paths import lint_config
    from tipcgen.lint import effects

    corpus = corpus_dir()
    if not corpus.is_dir():
        pytest.skip("corpus absent")
    paths = sorted(corpus.rglob("*.txt"))
    after = [f for p in paths for f in lint_config(str(p)) if f.rule == "TIPC021" and "'|'" in f.message]
    monkeypatch.setattr(effects, "with_effects", lambda findings, *a, **k: findings)
    before = [f for p in paths for f in lint_config(str(p)) if f.rule == "TIPC021" and "'|'" in f.message]
    assert after == [], after[:3]
    shapes = {f.role.split(".")[0] + "." + f.role.split(".")[-1] for f in before}
    assert {"serving.use_gpu", "cpp.use_gpu", "dy2static.gpu_list"} <= shapes, shapes


@pytest.mark.corpus
def test_lint_reads_a_real_repo_configs_folder(tmp_path):
    """PaddleSeg's and PaddleDetection's configs folders with a real upstream YAML beside them."""
    yaml = upstream_dir() / "PaddleSeg" / "serving_python" / "config.yml"
    if not yaml.is_file():
        pytest.skip("upstream absent")
    for repo, folder in (("PaddleSeg", "deeplabv3p_resnet50"), ("PaddleDetection", "ttfnet")):
        target = tmp_path / repo / "test_tipc" / "configs" / folder
        shutil.copytree(corpus_dir() / repo / folder, target)
        shutil.copy(yaml, target / "config.yml")
        result = run_cli("lint", "test_tipc/configs", cwd=tmp_path / repo, timeout=120)
        assert result.returncode in (0, 1), result.stdout + result.stderr
        assert "config.yml" not in result.stdout


@pytest.mark.corpus
def test_import_accepts_no_false_bar_defect_into_a_spec(monkeypatch):
    """PaddleSeg's panoptic_deeplab `--config` is a mode table (`mode=path|mode=path`): the spec
    import writes (and migrate applies) carries no `allow: [TIPC021]` for it."""
    from tipcgen.importer import import_group
    from tipcgen.lint import effects

    folder = corpus_dir() / "PaddleSeg" / "contrib" / "PanopticSeg" / "panoptic_deeplab"
    if not folder.is_dir():
        pytest.skip("corpus absent")
    paths = [str(p) for p in sorted(folder.glob("*.txt"))]
    report = import_group(paths)
    assert not report.failures and report.yaml and "TIPC021" not in report.yaml
    monkeypatch.setattr(effects, "with_effects", lambda findings, *a, **k: findings)
    unchecked = import_group(paths)
    assert unchecked.yaml and "- TIPC021  # kept from upstream" in unchecked.yaml  # what it wrote before


def test_the_effect_checks_plan_the_config_as_it_is_and_reuse_validations_plans(monkeypatch):
    """A typo's effect is decided on the config as the script reads it, blank lines and all (they
    count toward the lines a script reads), with the Plans validation already made: only the fixed
    config is planned again, once per mode."""
    import tipcgen.plan.planner as planner

    fixture = Path(__file__).parent / "fixtures" / "paddleclas" / "toy_cls_a_train_infer_python.txt"
    text = fixture.read_text().replace("infer_quant:False", "infer_quant:Fasle")
    text = text.replace("\n", "\n\n", 3)  # blank lines before the typo
    layout = get_layout("paddleclas")
    planner.mode_plans(text, layout)  # what validation does first
    seen: list[str] = []
    real = planner.plan_config
    monkeypatch.setattr(planner, "plan_config", lambda t, *a, **k: seen.append(t) or real(t, *a, **k))
    findings = [f for f in lint_text(text, layout, "toy.txt") if f.rule == "TIPC001"]
    assert findings and "no effect" in findings[0].message, findings
    assert findings[0].line == text.split("\n").index("infer_quant:Fasle") + 1
    modes = runner_for(layout).MODES
    assert len(seen) == len(modes) and text not in seen, "the config itself is planned again"
    assert all(t == text.replace("infer_quant:Fasle", "infer_quant:False") for t in seen)
