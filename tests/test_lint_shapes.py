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
    count toward the lines a script reads), with the Plans validation already made: a line no Plan
    read is not planned again at all; a line one read is, fixed, once per mode."""
    import tipcgen.plan.planner as planner

    fixture = Path(__file__).parent / "fixtures" / "paddleclas" / "toy_cls_a_train_infer_python.txt"
    layout = get_layout("paddleclas")
    real = planner.plan_config
    seen: list[str] = []
    monkeypatch.setattr(planner, "plan_config", lambda t, *a, **k: seen.append(t) or real(t, *a, **k))

    def typo_findings(old: str, new: str) -> tuple[str, list]:
        text = fixture.read_text().replace(old, new).replace("\n", "\n\n", 3)  # blank lines before it
        planner.mode_plans(text, layout)  # what validation does first
        seen.clear()
        found = [f for f in lint_text(text, layout, "toy.txt") if f.rule == "TIPC001"]
        assert len(found) == 1 and found[0].line == text.split("\n").index(new) + 1, found
        return text, found

    # PaddleClas's runner never reads the quant flag: the typo changes nothing, nothing is planned
    text, found = typo_findings("infer_quant:False", "infer_quant:Fasle")
    assert "no effect" in found[0].message and seen == []
    # it reads use_tensorrt: the fixed config is planned in every mode, the config itself never again
    text, found = typo_findings("-o Global.use_tensorrt:True|False", "-o Global.use_tensorrt:True|Fasle")
    assert len(seen) == len(runner_for(layout).MODES) and text not in seen
    assert all(t == text.replace("True|Fasle", "True|False") for t in seen)
    assert "no effect" not in found[0].message, found  # 'Fasle' runs no TensorRT-off inference


def test_the_roles_a_plan_read_are_known_and_reading_the_text_counts_as_reading_every_line():
    """roles_read (what lets a typo's check skip planning): PaddleClas's runner reads model_name and
    never the quant flag; a runner that reads the config's whole text (PaddleSeg's, for its
    to-static line) or its lines as such makes every line matter."""
    from tipcgen.lower.configview import WHOLE, ConfigView
    from tipcgen.plan.planner import roles_read

    fixtures = Path(__file__).parent / "fixtures"
    clas = roles_read(
        (fixtures / "paddleclas" / "toy_cls_a_train_infer_python.txt").read_text(), get_layout("paddleclas")
    )
    assert "model_name" in clas and "infer_quant" not in clas and WHOLE not in clas
    seg = roles_read((fixtures / "paddleseg" / "train_infer_python.txt").read_text(), get_layout("paddleseg"))
    assert WHOLE in seg
    view = ConfigView.parse("a:b\n", get_layout("paddleclas"))
    assert WHOLE not in view.roles_read()
    assert view.lines == ("a:b",) and WHOLE in view.roles_read()
