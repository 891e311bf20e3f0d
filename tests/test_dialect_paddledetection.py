"""The PaddleDetection dialect: its line table, its detection rule, import of Detection's own lines
(kl_quant_export, infer_mode/infer_quant) into typed fields, and lint knowing Detection's keys."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tipcgen.check.lint_paths import lint_config
from tipcgen.dialects import LAYOUTS, detect, get_layout
from tipcgen.importer import import_group, import_suite
from tipcgen.lint.checks import lint_text
from tipcgen.lower.text import config_text
from tipcgen.script.decode import decode
from tipcgen.script.lines import header_name, split_line, split_lines
from tipcgen.spec.ir import Suite

FIXTURES = Path(__file__).parent / "fixtures" / "paddledetection"
TOYDET = FIXTURES / "toydet_tiny_8e_demo_train_infer_python.txt"
LAYOUT = get_layout("paddledetection")


def _lines(path: Path = TOYDET) -> list[str]:
    return split_lines(path.read_text())


def test_the_table_puts_detections_keys_on_the_lines_its_script_reads():
    rows = LAYOUT.rows
    assert len(rows) == LAYOUT.read_lines == 51
    # lines[10] is the model file the script appends to <save_log>/<model_name>/
    assert LAYOUT.index("train.model_file") == 10 and rows[10].key == "trained_model_name"
    # lines[12] is train_param_key1/value1, `filename:null` in Detection's configs
    assert LAYOUT.index("train.extra") == 12 and "filename" in rows[12].lint_keys
    assert rows[22].text == "===========================eval_params==========================="
    # kl_quant_export (35), `##` (36), infer_mode (37) and infer_quant (38)
    assert rows[35].key == "kl_quant_export" and LAYOUT.index("export.kl_quant") == 35 and rows[36].kind == "sep"
    assert rows[37].key == "infer_mode" and LAYOUT.index("whole_infer.models") == 37 and rows[38].key == "infer_quant"
    for index, line in enumerate(_lines()[:51]):
        row = rows[index]
        if row.kind == "header":
            assert header_name(line) == row.name, index
        elif row.kind == "sep":
            assert line == row.text, index
        elif row.key or row.lint_keys:
            assert split_line(line)[0] in ((row.key,) if row.key else ()) + row.lint_keys, index


def test_detection_picks_paddledetection_for_its_fixtures_only():
    for config in sorted(FIXTURES.glob("*.txt")):
        name, why = detect(_lines(config))
        assert name == "paddledetection" and "PaddleDetection" in why, config
    for other in sorted(LAYOUTS):
        if other == "paddledetection":
            continue
        for config in sorted((FIXTURES.parent / other).glob("*.txt")):
            assert detect(_lines(config))[0] == other, config


def test_a_config_built_from_a_spec_that_leaves_lines_35_and_37_alone_is_still_detection():
    suite = Suite.model_validate(import_suite(decode(str(TOYDET), TOYDET.read_bytes()), LAYOUT, TOYDET.name))
    bare = suite.model_copy(update={"trivia": suite.trivia.model_copy(update={"line_overrides": {}})})
    lines = split_lines(config_text(bare, LAYOUT))
    assert (
        lines[35]
        == "kl_quant_export:tools/post_quant.py -c configs/toydet/toydet_tiny_8e_demo.yml --slim_config configs/slim/post_quant/toydet_ptq.yml -o"
    )
    assert lines[37] == "infer_mode:norm|kl_quant" and lines[38] == "infer_quant:False|True"
    # a suite without them: the script reads `null` there (no kl_quant export, no whole_infer run)
    empty = bare.model_copy(update={"whole_infer": [], "export": bare.export.model_copy(update={"kl_quant": None})})
    lines = split_lines(config_text(empty, LAYOUT))
    assert lines[35] == "kl_quant_export:null" and lines[37] == "infer_mode:null" and lines[38] == "infer_quant:null"
    assert detect(lines)[0] == "paddledetection"
    assert [f.rule for f in lint_text(config_text(bare, LAYOUT), LAYOUT, TOYDET.name) if f.rule == "TIPC005"] == []


def test_import_types_detections_own_lines():
    report = import_group([str(c) for c in sorted(FIXTURES.glob("*.txt"))])
    assert report.exact == report.files == 2 and not report.failures
    assert set(report.layouts.values()) == {"paddledetection"}
    data = import_suite(decode(str(TOYDET), TOYDET.read_bytes()), LAYOUT, TOYDET.name)
    assert data["train"]["model_file"] == "model_final.pdparams"
    assert data["train"]["extra"] == {"key": "filename", "value": None}
    assert data["trainers"]["pact"]["export_name"] == "pact_export"
    assert "line_overrides" not in data.get("trivia", {})
    assert data["export"]["kl_quant"].startswith("tools/post_quant.py -c ")
    assert data["whole_infer"] == [{"model": "norm", "quant": False}, {"model": "kl_quant", "quant": True}]
    # Detection's infer_benchmark_params header (27 `=` on the right) is the layout's default
    assert "headers" not in data["trivia"]


def test_lint_knows_detections_keys_and_finds_a_shifted_line():
    text = TOYDET.read_text()
    assert [f for f in lint_text(text, LAYOUT, TOYDET.name) if f.rule == "TIPC005"] == []
    # one line missing above kl_quant_export: it lands on line index 34
    shifted = text.replace("export2:null\n", "")
    findings = [f for f in lint_text(shifted, LAYOUT, TOYDET.name) if f.rule == "TIPC005"]
    assert findings and "kl_quant_export" in findings[0].message
    # a missing `##` moves infer_mode onto line index 36
    shifted = text.replace("-o\n##\ninfer_mode", "-o\ninfer_mode")
    findings = [f for f in lint_text(shifted, LAYOUT, TOYDET.name) if f.rule == "TIPC005"]
    assert findings and "infer_mode" in findings[0].message


def test_lint_still_refuses_shell_metacharacters_on_the_verbatim_lines(tmp_path):
    assert "TIPC021" not in {f.rule for f in lint_config(str(TOYDET))}  # `|` in infer_mode is a list
    config = tmp_path / TOYDET.name
    for line in ("kl_quant_export:tools/post_quant.py -o; rm -rf ~", "infer_mode:norm;reboot|kl_quant"):
        key = line.split(":")[0]
        lines = [line if split_line(old)[0] == key else old for old in _lines()]
        config.write_text("\n".join(lines) + "\n")
        assert "TIPC021" in {f.rule for f in lint_config(str(config))}, line


@pytest.mark.corpus
def test_every_paddledetection_train_config_is_detection_and_nothing_else_is(corpus):
    seen: Counter = Counter()
    for path in sorted(corpus.rglob("*.txt")):
        repo = path.relative_to(corpus).parts[0]
        try:
            lines = decode(str(path), path.read_bytes()).lines
        except Exception:  # unreadable corpus files are test_import's business
            continue
        name = detect(lines)[0]
        if repo == "PaddleDetection" and lines and header_name(lines[0]) == "train_params":
            assert name == "paddledetection", path
            seen[name] += 1
        else:
            assert name != "paddledetection", path
    assert seen["paddledetection"] > 0


@pytest.mark.corpus
def test_lint_reports_no_misplaced_key_on_the_paddledetection_corpus(corpus):
    findings = [f for path in sorted((corpus / "PaddleDetection").rglob("*.txt")) for f in lint_config(str(path))]
    assert [f for f in findings if f.rule == "TIPC005"] == []
