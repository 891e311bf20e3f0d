"""The one detector: `plan`/`run` without --layout pick the dialect `import` assigns (but for a
config its file name gives to another chain, and a chain config whose lines two families'
tables read: `--layout FAMILY` picks that family's, as import does from the folder), and a config
that fits no dialect or several is refused naming the candidates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tipcgen.check.source import plan_source
from tipcgen.cli import app
from tipcgen.dialects import LAYOUTS, detect
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
                # another chain's config (PTQ's by its name): import names that chain, and `plan`
                # without --layout follows that chain's script
                mode = runner_for(chain).MODES[0]
                if layout != chain.name:
                    # two families' scripts read these lines (the models tutorials' paddle2onnx is
                    # PaddleSeg's): import knew the folder's family; `plan --layout FAMILY` says it
                    family = chain_family(layout)
                    assert chain_of_text(text, file, family).name == layout, (source, layout)
                    assert plan_source(source, mode, layout=family).layout == layout, (source, layout)
                    continue
                assert layout == chain.name == plan_source(source, mode).layout, (source, layout)
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
