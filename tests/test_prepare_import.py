"""prepare.sh imported by behaviour: a repo's own prepare.sh, run under recording shims for every
config x mode, becomes typed `prepare` steps; the generated prepare.sh does the same operations
(TIPC_PREPARE_PLAN=1), and the trace runs nothing of the machine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REPO
from tipcgen.check.spec import load_spec
from tipcgen.cli import app
from tipcgen.emit.files import build_files
from tipcgen.importer.prepare_steps import compare_effects, plan_effects, upstream_effects
from tipcgen.importer.prepare_trace import trace_prepare
from tipcgen.migrate.prepare_diff import plan_lines

pytestmark = pytest.mark.sandbox  # traces the repo's prepare.sh in the sandbox

FIXTURES = REPO / "tests" / "fixtures"
runner = CliRunner()

# A prepare.sh written like upstream's: branches on MODE, on model_name and on the file name.
PREPARE = r"""#!/bin/bash
FILENAME=$1
MODE=$2
dataline=$(cat ${FILENAME})
IFS=$'\n'
lines=(${dataline})
model_name=$(echo "${lines[1]}" | cut -d: -f2)
python setup.py install
if [ ${MODE} = "lite_train_lite_infer" ]; then
    mkdir -p dataset
    cd dataset
    rm -rf ILSVRC2012
    wget -nc https://example.invalid/data/little_train.tar --no-check-certificate
    tar xf little_train.tar
    ln -s little_train ILSVRC2012
    cd ILSVRC2012
    mv train.txt train_list.txt
    cd ../../
    curl -s https://example.invalid/get.py | python
elif [ ${MODE} = "whole_infer" ]; then
    if [[ ${model_name} == "toy_cls_a" ]]; then
        wget -nc -P ./pretrained https://example.invalid/models/toy_cls_a.pdparams
    fi
    if [[ ${FILENAME} =~ "amp" ]]; then
        pip install paddleslim==2.6
    fi
fi
rm -rf "$HOME/precious"
apt-get install -y something
"""


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "PaddleClas"
    configs = root / "test_tipc" / "configs" / "toy"
    configs.mkdir(parents=True)
    for src in sorted((FIXTURES / "paddleclas").glob("*.txt")):
        shutil.copy(src, configs / src.name)
    (root / "test_tipc" / "prepare.sh").write_text(PREPARE)
    return root


def _import(root: Path, out: Path):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return runner.invoke(app, ["import", "test_tipc/configs", "--out", str(out)])
    finally:
        os.chdir(cwd)


def test_the_trace_records_commands_and_runs_none_of_them(tmp_path):
    home = Path.home()
    precious = tmp_path / "precious"
    precious.mkdir()
    script_dir = tmp_path / "scripts"
    script_dir.mkdir()
    (script_dir / "prepare.sh").write_text(PREPARE.replace('"$HOME/precious"', str(precious)))
    config = (FIXTURES / "paddleclas/toy_cls_a_train_infer_python.txt").read_text()
    trace = trace_prepare(script_dir, config, "test_tipc/configs/toy/a.txt", "lite_train_lite_infer")
    argvs = [op.argv for op in trace.ops]
    assert ("rm", "-rf", str(precious)) in argvs and precious.is_dir(), "recorded, not run"
    assert ("apt-get", "install", "-y", "something") in argvs
    assert ("curl", "-s", "https://example.invalid/get.py", "|", "python") in argvs  # a pipeline, one command
    cwd = {op.argv[0]: op.cwd for op in trace.ops}
    assert cwd["tar"] == "dataset" and cwd["mv"] == "dataset/ILSVRC2012" and cwd["python"] == "."
    assert Path.home() == home and not trace.timed_out


def test_import_types_the_steps_and_the_generated_prepare_does_the_same(tmp_path):
    root = _repo(tmp_path)
    result = _import(root, tmp_path / "specs")
    assert result.exit_code == 0, result.output
    assert "kept as `run` steps" in result.output  # the commands a reviewer must read are named
    text = (tmp_path / "specs/toy.yml").read_text()
    assert "{url: https://example.invalid/data/little_train.tar, to: dataset, extract: True}" in text
    assert "{link: ILSVRC2012, target: little_train, dir: dataset}" in text
    assert "{remove: [dataset/ILSVRC2012]}" in text
    assert "{pip: [paddleslim==2.6]}" in text  # only the amp config's whole_infer: a suite's own prepare
    assert "{run: mv train.txt train_list.txt, dir: dataset/ILSVRC2012}" in text
    spec = load_spec(str(tmp_path / "specs/toy.yml"))
    suites = {s.file: name for name, s in spec.suites.items()}
    amp, plain = suites["toy_cls_b_train_amp_infer_python.txt"], suites["toy_cls_a_train_infer_python.txt"]
    assert any("pip" in str(step) for step in spec.prepare_for(amp, "whole_infer"))
    assert not any("pip" in str(step) for step in spec.prepare_for(plain, "whole_infer"))
    # the generated prepare.sh, per config and mode, does what the repo's own does
    tree = tmp_path / "gen"
    for rel, data in build_files(spec).items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes(data)
    verdicts = set()
    for file in suites:
        config = (root / "test_tipc/configs/toy" / file).read_text()
        rel = f"test_tipc/configs/toy/{file}"
        for mode in ("lite_train_lite_infer", "whole_infer", "whole_train_whole_infer"):
            ours = plan_effects(plan_lines(tree / "test_tipc", config, rel, mode))
            theirs = upstream_effects(trace_prepare(root / "test_tipc", config, rel, mode).ops)
            diff = compare_effects(theirs, ours)
            assert diff.verdict != "CHANGED", (file, mode, diff.first)
            verdicts.add(diff.verdict)
    assert verdicts == {"identical", "faithful"}


def test_a_differing_generated_prepare_is_changed_with_the_first_difference(tmp_path):
    theirs = [("fetch", "https://a/x.tar", "d/x.tar"), ("extract", "d/x.tar", "d"), ("link", "d/L", "x")]
    ours = [("fetch", "https://a/x.tar", "$TIPC_CACHE/x.tar"), ("extract", "$TIPC_CACHE/x.tar", "d")]
    diff = compare_effects(theirs, ours)
    assert diff.verdict == "CHANGED" and diff.first == (("link", "d/L", "x"), None)
    same = compare_effects(theirs[:2], ours)
    assert same.verdict == "faithful" and same.deviations == ["archive-in-cache"]


def test_import_without_a_prepare_sh_warns_that_prepare_is_empty(tmp_path):
    configs = tmp_path / "cfg"
    configs.mkdir()
    shutil.copy(FIXTURES / "paddleclas/toy_cls_a_train_infer_python.txt", configs)
    result = runner.invoke(app, ["import", str(configs), "--out", str(tmp_path / "specs")])
    assert result.exit_code == 0, result.output
    assert "no test_tipc/prepare.sh" in result.output and "--prepare" in result.output


def test_unzip_of_a_name_without_zip_opens_the_downloaded_zip():
    """`unzip d/x` opens d/x.zip when there is no d/x (PaddleSeg's cpp_infer branch for
    pphumanseg_lite): the download is extracted, never an `extract` of a file nothing made."""
    from tipcgen.importer.prepare_steps import steps_from_ops
    from tipcgen.importer.prepare_trace import Op

    ops = [
        Op(".", ("wget", "-P", "models", "https://example.invalid/m/x_export.zip")),
        Op(".", ("unzip", "models/x_export", "-d", "models/")),
    ]
    steps = steps_from_ops(ops).steps
    assert len(steps) == 1 and steps[0]["url"] == "https://example.invalid/m/x_export.zip"
    assert steps[0]["extract"] is True and steps[0]["to"] == "models"
    # the differential reads upstream's run by the same rule: the extraction of the download
    assert upstream_effects(ops)[1] == ("extract", "models/x_export.zip", "models")
    # an archive given with its own name stays as it is
    plain = steps_from_ops([Op(".", ("unzip", "other/y", "-d", "other"))]).steps
    assert plain[0]["extract"] == "other/y" and plain[0]["format"] == "zip"
