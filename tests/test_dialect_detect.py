"""The one detector: `plan`/`run` without --layout pick the dialect `import` assigns (a chain
config whose lines two families' tables read by the folder's train configs, as import does; `--layout
FAMILY` picks that family's), and a config that fits no dialect or several is refused naming the
candidates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tipcgen.check.source import plan_source
from tipcgen.cli import app
from tipcgen.dialects import LAYOUTS, chain_of, detect, get_layout
from tipcgen.dialects.chains import chain_family, chain_of_text
from tipcgen.importer import import_group
from tipcgen.plan.planner import runner_for
from tipcgen.script.lines import split_lines
from tipcgen.spec.modes import MODES

runner = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.corpus
def test_plan_without_layout_equals_plan_with_the_imported_layout_on_the_whole_corpus(corpus):
    groups: dict = {}
    for path in sorted(corpus.rglob("*.txt")):
        groups.setdefault(path.parent, []).append(str(path))
    compared, differ = 0, []
    for directory, paths in sorted(groups.items()):
        report = import_group(sorted(paths))
        for file, layout in report.layouts.items():
            if layout == "raw":
                continue
            source = str(directory / file)
            text = Path(source).read_text()
            chain = chain_of_text(text, file)
            if chain is not None:
                # another chain's config: `plan` without --layout follows the script import names,
                # telling two families' tables apart by the folder's train configs, as import does
                mode = runner_for(get_layout(layout)).MODES[0]
                assert plan_source(source, mode).layout == layout, (source, layout)
                if layout != chain.name and chain_of(text) is not None:
                    # no train script reads it: `plan --layout FAMILY` names that family's twin
                    # (a train-type one, like PaddleClas's PTQ config, --layout plans as a train config)
                    assert plan_source(source, mode, layout=chain_family(layout)).layout == layout, (source, layout)
                continue
            # plan_source plans with the layout given, else with the one it detects: the same
            # layout is the same Plan in every mode (plan_config is a function of text, layout, mode)
            auto = plan_source(source, MODES[compared % len(MODES)])
            compared += 1
            if auto.layout != layout:
                differ.append((source, auto.layout, layout))
    assert compared > 0 and not differ, f"{len(differ)} of {compared} differ, e.g. {differ[:3]}"


def _ocr_fixture_lines() -> list[str]:
    return split_lines((FIXTURES / "paddleocr" / "train_infer_python.txt").read_text())


def test_every_registered_dialect_detects_its_fixtures():
    for name in LAYOUTS:
        configs = sorted((FIXTURES / name).glob("*.txt"))
        assert configs, f"dialect {name} has no fixtures"
        for config in configs:
            assert detect(split_lines(config.read_text()))[0] == name, config


def test_a_config_fitting_two_dialects_is_refused_naming_both(tmp_path):
    lines = _ocr_fixture_lines()
    # A PaddleSeg export_params header and a PaddleClas kl_quant key in one config.
    lines[26] = "===========================export_params==========================="
    lines[33] = "kl_quant:null"
    name, why = detect(lines)
    assert name is None and "paddleclas" in why and "paddleseg" in why
    config = tmp_path / "both.txt"
    config.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["plan", str(config)])
    assert result.exit_code == 2
    assert "fits several dialects" in result.output and "--layout" in result.output
    # naming the dialect settles it
    assert runner.invoke(app, ["plan", str(config), "--layout", "paddleseg"]).exit_code == 0


def test_a_config_fitting_no_dialect_is_refused_listing_the_dialects(tmp_path):
    lines = _ocr_fixture_lines()
    trainer = next(i for i, line in enumerate(lines) if line.startswith("trainer:"))
    lines.insert(trainer, "extra:null")  # trainer on line 15: no table has it there
    config = tmp_path / "none.txt"
    config.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["plan", str(config)])
    assert result.exit_code == 2
    for name in LAYOUTS:
        assert name in result.output
    assert str(config) in result.output and os.linesep not in result.output.strip()


def test_a_chain_config_two_families_read_is_planned_by_its_folders_family(tmp_path):
    """PaddleSeg's dy2static config also fits PaddleClas's table: beside PaddleSeg train configs
    (or in a folder of its own among theirs), `plan` takes PaddleSeg's, as import types it; alone,
    the first table; a sibling linked out of the folder is never read to decide."""
    dy2static = (FIXTURES / "paddleseg_dy2static" / "toyseg_train_dy2static_python.txt").read_text()
    seg_train = (FIXTURES / "paddleseg" / "train_infer_python.txt").read_text()
    clas_train = (FIXTURES / "paddleclas" / "toy_cls_a_train_infer_python.txt").read_text()
    alone = tmp_path / "alone" / "train_dy2static_python.txt"
    alone.parent.mkdir()
    alone.write_text(dy2static)
    assert plan_source(str(alone), "lite_train_lite_infer").layout == "paddleclas_dy2static"

    repo = tmp_path / "seg" / "configs"
    (repo / "toy").mkdir(parents=True)
    (repo / "toy" / "train_infer_python.txt").write_text(seg_train)
    config = repo / "toy" / "train_dy2static_python.txt"
    config.write_text(dy2static)
    assert plan_source(str(config), "lite_train_lite_infer").layout == "paddleseg_dy2static"
    (repo / "BMN").mkdir()  # a folder holding the chain config only: its neighbours tell
    (repo / "BMN" / "train_dy2static_python.txt").write_text(dy2static)
    assert plan_source(str(repo / "BMN" / "train_dy2static_python.txt"), "lite_train_lite_infer").layout == (
        "paddleseg_dy2static"
    )

    # links to PaddleClas configs outside the folder outnumber the real sibling: not read
    outside = tmp_path / "clas.txt"
    outside.write_text(clas_train)
    for i in range(3):
        os.symlink(outside, repo / "toy" / f"a{i}_train_infer_python.txt")
    assert plan_source(str(config), "lite_train_lite_infer").layout == "paddleseg_dy2static"
    # the same configs really there: they decide
    for i in range(3):
        (repo / "toy" / f"a{i}_train_infer_python.txt").unlink()
        (repo / "toy" / f"a{i}_train_infer_python.txt").write_text(clas_train)
    assert plan_source(str(config), "lite_train_lite_infer").layout == "paddleclas_dy2static"
