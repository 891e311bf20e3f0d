"""The Paddle-Lite ARM CPU chain (PaddleClas's test_lite_arm_cpu_cpp.sh): what is its own. Its toy
configs, their Plans (edit deploy/lite/config.txt with `sed -i`, then per threads x batch size x
precision `adb push` it and run the predictor with `adb shell`) and its generated script are the
golden harness's (tests/fixtures/paddleclas_lite_arm/, tests/test_dialects.py: bash = Plan with
adb and sed recorded, each step failing). Here: what would break the device's shell line is
refused, the built script edits the predictor's config in a checkout, and the corpus tier holds
the Plan against the real script with the same recorders: every difference a named deviation
(its Linux test errors and edits nothing; its status lines name no model).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.configs import fixture_text
from helpers.difftest import Case, Harness
from helpers.oracle_runs import need_upstream, oracle
from tipcgen.dialects import signature
from tipcgen.dialects.chains import PADDLECLAS_LITE_ARM, chain_layout
from tipcgen.plan.runners.paddleclas_lite_arm import ORACLE_CHECKOUT, ORACLE_TOOLS
from tipcgen.script.lines import split_lines

LAYOUT = PADDLECLAS_LITE_ARM.name
MODE = "lite_infer"
WORK = "/data/local/tmp/arm_cpu/"

# A toy model of our own, shaped like PaddleClas's Lite configs (headerless): the harness's.
TOY = fixture_text(LAYOUT, "toy_lite_arm_cpu_cpp.txt")
REFUSED = {
    "quote": TOY.replace("toy.jpg", "it's.jpg"),  # it would close the remote command's quotes
    "slash": TOY.replace("FP32|INT8", "FP32|a/b"),  # its items name log files
    "space": TOY.replace(WORK, "/data/local/tmp/arm cpu/"),  # a word on the device's shell line
    "option": TOY.replace("FP32|INT8", "FP32|-e"),  # an item read as an option
}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / f"{name}_lite_arm_cpu_cpp.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_what_would_break_the_device_line_is_refused_by_plan_and_script(tmp_path):
    assert chain_layout(signature(split_lines(TOY.replace("clas_model_file", "det_model_file")))) is None
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "quote", REFUSED["quote"])), "--mode", MODE)
    assert res.exit_code == 2 and "inference_cmd:clas_system config.txt it's.jpg: it contains" in res.output
    # a space in the work path would add a word to the device's shell line: refused as the spec's type is
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "space", REFUSED["space"])), "--mode", MODE)
    assert res.exit_code == 2 and "lite_arm_work_path:/data/local/tmp/arm cpu/: it contains U+0020" in res.output
    cases = [Case(str(_write(tmp_path, name, text)), LAYOUT, MODE) for name, text in REFUSED.items()]
    mismatches = Harness(tmp_path / "h", tools=ORACLE_TOOLS).run(cases)
    assert not mismatches, "\n".join(mismatches)


def test_build_emits_the_chain_script_and_it_edits_the_predictor_config(tmp_path):
    """A spec carrying a Lite config (imported, kept verbatim) builds test_lite_arm_cpu_cpp.sh;
    run from the tree with a stand-in adb: config.txt ends up pointing at the device, set to the
    last combination, and every run has its status line and exit code."""
    folder = tmp_path / "src" / "ToyNet"
    folder.mkdir(parents=True)
    (folder / "ToyNet_lite_arm_cpu_cpp.txt").write_text(TOY)
    res = invoke_in(tmp_path, "import", str(folder), "--out", str(tmp_path / "specs"))
    assert res.exit_code == 0, res.output
    res = invoke_in(tmp_path, "build", str(tmp_path / "specs" / "ToyNet.yml"), "--out", str(tmp_path / "gen"))
    assert res.exit_code == 0, res.output
    root = tmp_path / "gen" / "ToyNet"
    for rel, text in ORACLE_CHECKOUT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.replace("label_path ./", "label_path ../../ppcls/utils/"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "adb").write_text('#!/bin/sh\necho "adb $*"\n[ "$1" != shell ] || [ -z "$ADB_FAIL" ]\n')
    (bin_dir / "adb").chmod(0o755)
    status = root / "deploy/lite/output/results.log"
    for fail in ("", "1"):
        run = subprocess.run(
            ["bash", "test_tipc/test_lite_arm_cpu_cpp.sh", "test_tipc/configs/ToyNet/ToyNet_lite_arm_cpu_cpp.txt"],
            cwd=root, env=dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", ADB_FAIL=fail),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        lines = status.read_text().splitlines()
        status.unlink()
        verdict = "Run failed" if fail else "Run successfully"
        assert run.returncode == (1 if fail else 0), run.stdout + run.stderr
        assert len(lines) == 4 and all(f"{verdict} with command - ToyNet - adb shell" in x for x in lines), lines
    config = (root / "deploy/lite/config.txt").read_text()
    assert f"clas_model_file {WORK}ToyNet.nb\n" in config and f"label_path {WORK}imagenet1k_label_list.txt\n" in config
    assert "num_threads 4\n" in config and "precision INT8\n" in config and "tipc_benchmark 1\n" in config


@pytest.mark.corpus
def test_every_paddleclas_lite_config_is_faithful_to_the_real_script(corpus, tmp_path):
    """Every corpus config of the chain x (passing, the predictor failing, the push failing): the
    real test_lite_arm_cpu_cpp.sh (adb and sed recorded, a checkout's deploy/lite/config.txt) and
    our Plan agree, every difference a deviation; its status lines are ours once the model name
    it leaves out is put back; and our generated script agrees with the Plan."""
    need_upstream("test_lite_arm_cpu_cpp.sh")
    configs = sorted(
        p for p in (corpus / "PaddleClas").rglob("*.txt")
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace")))) is PADDLECLAS_LITE_ARM
    )  # fmt: skip
    assert configs, "no PaddleClas Lite config in the corpus"
    tally = oracle("PaddleClas", [(c, MODE, None, f) for c in configs for f in (None, "LD_LIBRARY_PATH", "push")],
                   chain=LAYOUT)  # fmt: skip
    print(tally.report("lite oracle"))
    assert not tally.unfaithful, "\n".join(tally.unfaithful[:5])
    for (_config, _mode, _gpuid, fail), d in tally.diffs:
        assert "missing `]'" in d.upstream.stderr  # upstream's Linux test, broken on every run
        want = [d.plan.status_line(s, fail != "LD_LIBRARY_PATH") for s in d.plan.steps if s.writes_status]
        got = [
            line.replace(d.upstream.root, ".").replace("command -  - ", f"command - {d.plan.model_name} - ")
            for line in d.upstream.status_lines
        ]
        assert got == [f"\x1b[33m {line}\x1b[0m" for line in want]
    cases = [Case(str(c), LAYOUT, MODE, fail=f) for c in configs for f in (None, "LD_LIBRARY_PATH")]
    mismatches = Harness(tmp_path / "h", tools=ORACLE_TOOLS).run(cases)
    assert not mismatches, "\n".join(mismatches[:5])
