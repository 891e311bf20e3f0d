"""Load: malformed specs give one located error, exit 2, no traceback, nothing written."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from helpers.cli import run_argv
from tipcgen.check.spec import load_spec, load_spec_text
from tipcgen.cli import app
from tipcgen.errors import SpecError

VALID = """\
tipcgen: 1
model: demo
layout: paddleocr
suites:
  normal:
    file: train_infer_python.txt
    model_name: demo_rec
    topology: [0, [0, 1]]
    train:
      device: {key: Global.use_gpu, values: [True, True]}
      epochs: {key: Global.epoch_num, by_mode: {lite_train_lite_infer: 1}}
      batch_size: {key: Train.loader.batch_size_per_card, by_mode: {lite_train_lite_infer: 2}}
    trainers:
      norm: {train: tools/train.py -c a.yml -o, export: tools/export_model.py -c a.yml -o}
    inference:
      script: tools/infer/predict_rec.py
      use_gpu: {key: --use_gpu, values: [False]}
      batch_size: {key: --rec_batch_num, values: [1]}
"""

# (name, replace old -> new in VALID (or a whole text), expected line, expected field or None, words in message)
CASES = [
    ("yaml_syntax", ("topology: [0, [0, 1]]", "topology: [0, [0, 1]"), 9, None, "YAML syntax"),
    (
        "duplicate_key",
        ("    model_name: demo_rec\n", "    model_name: demo_rec\n    model_name: other\n"),
        8,
        None,
        "duplicate key",
    ),
    (
        "wrong_type",
        ("by_mode: {lite_train_lite_infer: 1}", "by_mode: {lite_train_lite_infer: [1, 2]}"),
        11,
        "suites.normal.train.epochs.by_mode.lite_train_lite_infer",
        "got a list",
    ),
    (
        "unknown_key_near_miss",
        ("      batch_size: {key: Train", "      bach_size: {key: Train"),
        12,
        "suites.normal.train.bach_size",
        "did you mean 'batch_size'",
    ),
    ("unknown_top_key", ("layout: paddleocr", "layuot: paddleocr"), 3, "layuot", "did you mean 'layout'"),
    (
        "bad_ip",
        ("topology: [0, [0, 1]]", "topology: [{ips: [192.168.0.1, 192.168.0.300], gpus: [0, 1]}]"),
        8,
        "suites.normal.topology[0].ips",
        "not an IPv4 address",
    ),
    (
        "duplicate_gpu",
        ("topology: [0, [0, 1]]", "topology: [0, [0, 0]]"),
        8,
        "suites.normal.topology[1].gpus",
        "listed twice",
    ),
    (
        "duplicate_ip",
        ("topology: [0, [0, 1]]", "topology: [{ips: [10.0.0.1, 10.0.0.1], gpus: [0]}]"),
        8,
        "suites.normal.topology[0].ips",
        "listed twice",
    ),
    (
        "unknown_mode",
        ("by_mode: {lite_train_lite_infer: 1}", "by_mode: {lite_train_infer: 1}"),
        11,
        "suites.normal.train.epochs.by_mode",
        "unknown mode 'lite_train_infer'",
    ),
    ("empty_model_name", ("model_name: demo_rec", 'model_name: ""'), 7, "suites.normal.model_name", "empty"),
    (
        "shell_meta_name",
        ("model_name: demo_rec", 'model_name: "demo;rm -rf ~"'),
        7,
        "suites.normal.model_name",
        "letters, digits",
    ),
    ("unknown_layout", ("layout: paddleocr", "layout: paddlenlp"), 3, "layout", "paddleocr"),
    (
        "shell_meta_command",
        ("norm: {train: tools/train.py -c a.yml -o,", "norm: {train: tools/train.py $(whoami),"),
        14,
        "suites.normal.trainers.norm.train",
        "metacharacters",
    ),
    (
        "device_list_short",
        ("values: [True, True]", "values: [True]"),
        10,
        "suites.normal.train.device",
        "gpu_list entries",
    ),
    (
        "file_with_dir",
        ("file: train_infer_python.txt", "file: ../train_infer_python.txt"),
        6,
        "suites.normal.file",
        "plain",
    ),
    ("missing_topology", ("    topology: [0, [0, 1]]\n", ""), 6, "suites.normal.topology", "required"),
    (
        "single_ip_multinode",
        ("topology: [0, [0, 1]]", "topology: [{ips: [10.0.0.1], gpus: [0]}]"),
        8,
        "suites.normal.topology[0]",
        "at least two ips",
    ),
    ("negative_gpu", ("topology: [0, [0, 1]]", "topology: [[0, -2]]"), 8, "suites.normal.topology[0].gpus", ">= 0"),
    (
        "not_expressible",
        [
            ("layout: paddleocr", "layout: models"),
            ("      script:", "      mkldnn: {key: --enable_mkldnn, values: [False]}\n      script:"),
        ],
        16,
        "suites.normal.inference.mkldnn",
        "no line",
    ),
    ("bad_prepare_mode", ("suites:\n", "prepare:\n  nightly_infer: []\nsuites:\n"), 5, "prepare", "unknown mode"),
    (
        "bad_sha256",
        (
            "suites:\n",
            "prepare:\n  whole_infer:\n    - {url: 'https://x.org/a.tar', to: ./inference, sha256: abc}\nsuites:\n",
        ),
        6,
        "prepare.whole_infer[0].sha256",
        "64",
    ),
    ("list_document", None, 1, None, "YAML mapping"),
]


def _text(case):
    name, change = case[0], case[1]
    if change is None:
        return "- just\n- a list\n"
    text = VALID
    for old, new in change if isinstance(change, list) else [change]:
        assert old in text, name
        text = text.replace(old, new, 1)
    return text


def test_valid_base_builds(tmp_path):
    spec = tmp_path / "demo.yml"
    spec.write_text(VALID)
    result = CliRunner().invoke(app, ["build", str(spec), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_malformed_spec(tmp_path, case):
    name, _, line, field, words = case
    spec = tmp_path / f"{name}.yml"
    spec.write_text(_text(case))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["build", str(spec), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    text = result.output
    assert "Traceback" not in text
    first = text.strip().splitlines()[0]
    m = re.match(rf"^{re.escape(str(spec))}:(\d+)(?::(\d+))?: error: (.*)$", first)
    assert m, first
    assert int(m.group(1)) == line, first
    if field:
        assert f"field `{field}`" in first, first
    assert words in first, first
    assert not out.exists(), "nothing may be written when a spec is bad"


def test_not_utf8(tmp_path):
    spec = tmp_path / "latin1.yml"
    spec.write_bytes(VALID.replace("demo_rec", "d\xe9mo").encode("latin-1"))
    result = CliRunner().invoke(app, ["validate", str(spec)])
    assert result.exit_code == 2
    assert "not UTF-8" in result.output and "latin1.yml:7: error" in result.output


def test_real_process_prints_no_traceback(tmp_path):
    spec = tmp_path / "bad.yml"
    spec.write_text(VALID.replace("layout: paddleocr", "layuot: paddleocr"))
    proc = run_argv(
        ["build", str(spec), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "did you mean 'layout'" in proc.stderr
    assert proc.stdout == ""
    assert not (tmp_path / "o").exists()


def test_one_bad_spec_among_good_ones_writes_nothing(tmp_path):
    good = tmp_path / "good.yml"
    good.write_text(VALID)
    bad = tmp_path / "bad.yml"
    bad.write_text(VALID.replace("model: demo", "model: other").replace("[0, [0, 1]]", "[0, [1, 1]]"))
    result = CliRunner().invoke(app, ["build", str(good), str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_an_error_in_defaults_is_reported_once_at_its_own_line(tmp_path):
    """A bad value in `defaults` is named `defaults.<field>` at its line, once, not once per
    suite that inherits it; the same value set in a suite is still named there."""
    path = tmp_path / "d.yml"
    path.write_text(
        "tipcgen: 1\nmodel: demo\nlayout: models\ndefaults:\n  train:\n"
        "    epochs: {by_mode: {lite_train_lite_infer: abc}}\n"
        "suites:\n  a:\n    file: a.txt\n    topology: [0]\n  b:\n    file: b.txt\n    topology: [0]\n"
        "  c:\n    file: c.txt\n    topology: [0]\n    train:\n      epochs: {by_mode: {lite_train_lite_infer: xyz}}\n"
    )
    with pytest.raises(SpecError) as info:
        load_spec(str(path))
    lines = [p.render() for p in info.value.problems]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"{path}:6:") and "field `defaults.train.epochs.by_mode`" in lines[0]
    assert "field `suites.c.train.epochs.by_mode`" in lines[1] and "'xyz'" in lines[1]


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        ("tipcgen: 1\nlayout: models\nsuites:\n  a: {file: a.txt, topology: [0]}\n", ":1:1:",
         "field `model`: required field is missing (add `model: ...`)"),
        ("tipcgen: 1\nmodel: m\nlayout: models\nsuites:\n  a:\n    file: a.txt\n    topology: 0\n", ":7:15:",
         "expected a list (`[a, b]`, or one `- item` per line), got the number 0"),
        ("tipcgen: 1\nmodel: m\nlayout: models\nsuites:\n  a:\n    file: a.txt\n    topology: [0]\n    train: x\n",
         ":8:12:", "field `suites.a.train`: expected a mapping (`key: value` lines), got the text 'x'"),
    ],
)  # fmt: skip
def test_common_mistakes_are_worded_for_yaml_authors(tmp_path, text, where, says):
    path = tmp_path / "s.yml"
    path.write_text(text)
    with pytest.raises(SpecError) as info:
        load_spec(str(path))
    rendered = [p.render() for p in info.value.problems]
    assert any(where in r and says in r for r in rendered), rendered
    assert not any("Input should be" in r for r in rendered), rendered


def test_model_name_variable_expands_per_suite(tmp_path):
    """`${model_name}` in a suite's text (here from `defaults`) is that suite's model_name, the one
    substitution a spec has; any other `$` is still refused by the character policy."""
    from tipcgen.emit.files import config_files

    path = tmp_path / "m.yml"
    path.write_text(
        "tipcgen: 1\nmodel: m\nlayout: models\n"
        "defaults:\n  topology: [0]\n  trainers: {norm: {train: 'train.py -c configs/${model_name}.yaml'}}\n"
        "suites:\n  a: {file: a.txt, model_name: small}\n  b: {file: b.txt, model_name: large}\n"
    )
    files = config_files(load_spec(str(path)))
    assert "norm_train:train.py -c configs/small.yaml\n" in files["test_tipc/configs/m/a.txt"]
    assert "norm_train:train.py -c configs/large.yaml\n" in files["test_tipc/configs/m/b.txt"]
    path.write_text(path.read_text().replace("${model_name}", "${model}"))
    with pytest.raises(SpecError) as info:
        load_spec(str(path))
    assert "contains '$'" in info.value.problems[0].render()


@pytest.mark.parametrize("libyaml", [True, False])
def test_a_tab_in_the_indentation_says_to_use_spaces(libyaml):
    from tipcgen.spec.yamlpos import load_yaml

    text = VALID.replace("    model_name: demo_rec", "\tmodel_name: demo_rec")
    with pytest.raises(SpecError) as exc:
        load_yaml(text, "tabs.yml", libyaml=libyaml)
    (problem,) = exc.value.problems
    assert problem.line == 7 and "indent with spaces" in (problem.hint or ""), problem


def test_docs_inference_devices_must_match_what_the_matrix_runs():
    text = VALID.replace("layout: paddleocr\n", "layout: paddleocr\ndocs: {inference_devices: [gpu]}\n", 1)
    with pytest.raises(SpecError) as exc:
        load_spec_text(text, "d.yml")
    (problem,) = exc.value.problems
    assert problem.field == "docs.inference_devices" and problem.line == 4
    assert "says gpu" in problem.message and "runs inference on cpu" in problem.message
    ok = VALID.replace("layout: paddleocr\n", "layout: paddleocr\ndocs: {inference_devices: [cpu]}\n", 1)
    assert load_spec_text(ok, "d.yml").suites["normal"].inference_devices == ["cpu"]
