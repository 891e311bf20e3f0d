"""PaddleOCR's runner today (plan/runners/ocr_head.py, templates/runner_ocr_head.sh.j2): our bash
equals our Plan on the paddleocr fixtures (all modes, failing train and export, gpu list variants),
and what a user sees of today's script: no autocast flag, the GPUs in inference log names, the
whole_infer export log beside the mode's folder, status lines naming each step's log, the train
output in `<save_log>.log`; a spec or `tipcgen plan` picks the runner, an unknown one is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

from typer.testing import CliRunner

from conftest import SPECS
from helpers.configs import variant
from helpers.difftest import Case, Harness
from tipcgen.cli import app
from tipcgen.dialects import get_layout
from tipcgen.emit.files import runner_script
from tipcgen.plan.planner import plan_config
from tipcgen.spec.modes import MODES

FIXTURES = Path(__file__).parent / "fixtures" / "paddleocr"
A = FIXTURES / "train_infer_python.txt"  # gpu_list 0|0,1, autocast null, whole_infer without export
B = FIXTURES / "train_linux_gpu_fleet_amp_infer_python_linux_gpu_cpu.txt"  # two nodes, amp, pact
LAYOUT = get_layout("paddleocr")
cli = CliRunner()


def _plan(path: Path, mode: str, runner: str = "ocr_head", **kw):
    return plan_config(path.read_text(), LAYOUT, mode, runner=runner, **kw)


def _exported(tmp_path: Path) -> Path:
    """A: whole_infer exports its model first."""
    return variant(tmp_path, A, "exported", infer_export="tools/export_model.py -c configs/det/toy_det_a.yml -o")


def test_bash_equals_plan_on_the_fixtures_and_variants(tmp_path):
    configs = [
        A,
        B,
        _exported(tmp_path),
        variant(tmp_path, A, "entries", gpu_list="-1|3|0,1,2,3", **{"Global.use_gpu": "False|True|True"}),
        variant(tmp_path, B, "cpu_infer", **{"--use_gpu": "False"}),
    ]
    cases = []
    for n, config in enumerate(configs):
        cases += [
            Case(str(config), "paddleocr", mode, cuda="7" if n % 2 else None, runner="ocr_head") for mode in MODES
        ]
        cases.append(Case(str(config), "paddleocr", "whole_infer", gpuid="1", runner="ocr_head"))
        cases.append(Case(str(config), "paddleocr", "lite_train_lite_infer", fail="train.py", runner="ocr_head"))
        cases.append(Case(str(config), "paddleocr", "lite_train_lite_infer", fail="export", runner="ocr_head"))
    cases.append(Case(str(configs[2]), "paddleocr", "whole_infer", fail="export", runner="ocr_head"))
    cases.append(Case(str(B), "paddleocr", "lite_train_lite_infer", node_ip="10.0.0.2", runner="ocr_head"))
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} disagree; first: {mismatches[0]}"


def test_the_train_command_no_longer_passes_the_autocast_flag():
    """Today's script dropped `${set_autocast}` and kept its blanks: `<pretrained>  <batch size>`."""
    head, seed = _plan(B, "lite_train_lite_infer").steps[0], _plan(B, "lite_train_lite_infer", "ocr").steps[0]
    assert head.kind == seed.kind == "train"
    assert "Global.auto_cast=amp" in seed.argv
    assert not [a for a in head.argv if a.startswith("Global.auto_cast")]
    assert head.argv == tuple(a for a in seed.argv if a != "Global.auto_cast=amp")
    assert head.command == seed.command.replace(" Global.auto_cast=amp ", "  ")
    assert "Global.use_amp=True" in head.argv  # the amp flags still follow the autocast value


def test_inference_logs_name_the_gpus_of_the_run():
    log_dir = "./test_tipc/output/toy_det_a/lite_train_lite_infer"
    steps = _plan(A, "lite_train_lite_infer").steps
    infer = [s.log for s in steps if s.kind == "infer"]
    assert f"{log_dir}/python_infer_gpu_gpus_0_usetrt_False_precision_fp32_batchsize_1.log" in infer
    assert f"{log_dir}/python_infer_cpu_gpus_0,1_usemkldnn_True_threads_1_precision_fp32_batchsize_1.log" in infer
    assert all("_gpus_0_" in log or "_gpus_0,1_" in log for log in infer)
    seed = [s.log for s in _plan(A, "lite_train_lite_infer", "ocr").steps if s.kind == "infer"]
    assert [log.replace("_gpus_0,1_", "_").replace("_gpus_0_", "_") for log in infer] == seed


def test_whole_infer_logs_name_gpu_0_whatever_the_gpuid(tmp_path):
    """Upstream sets gpu=0 in whole_infer; GPUID still sets CUDA_VISIBLE_DEVICES."""
    plan = _plan(_exported(tmp_path), "whole_infer", gpuid="1")
    export, *infer = plan.steps
    assert export.kind == "export" and export.cuda_visible_devices == "1"
    # `${LOG_PATH}_export_${Count}.log`: beside the mode's folder, not in it
    assert export.log == "./test_tipc/output/toy_det_a/whole_infer_export_0.log"
    assert infer and all(s.kind == "infer" and "_gpus_0_" in s.log and s.cuda_visible_devices == "1" for s in infer)


def test_an_empty_quant_flag_shifts_the_gpu_id_out_of_whole_infers_log_names(tmp_path):
    """Upstream passes whole_infer's quant flag unquoted before the GPU id: for a model without one
    the id takes the flag's place, and the log names say `gpus_` (an upstream bug, reproduced)."""
    config = variant(tmp_path, B, "short_quant", infer_quant="True")  # two models, one flag
    infer = [s for s in _plan(config, "whole_infer").steps if s.kind == "infer"]
    first = [s.log for s in infer if "toy_rec_b_infer " in s.command + " "]
    second = [s.log for s in infer if "toy_rec_b_quant_infer" in s.command]
    assert first and all("_gpus_0_" in log for log in first)
    assert second and all("_gpus__" in log for log in second)
    cases = [Case(str(config), "paddleocr", "whole_infer", gpuid=g, runner="ocr_head") for g in (None, "2")]
    mismatches = Harness(tmp_path / "h").run(cases)
    assert not mismatches, mismatches[0]


def test_status_lines_name_each_steps_log_and_train_logs_to_save_log_dot_log():
    plan = _plan(B, "lite_train_lite_infer")
    train = plan.steps[0]
    save_log = "./test_tipc/output/toy_rec_b/lite_train_lite_infer/norm_train_gpus_0,1_autocast_amp_nodes_2"
    assert f"Global.save_model_dir={save_log}" in train.argv
    assert (train.log, train.status_path, train.output) == (f"{save_log}.log", f"{save_log}.log", "tee")
    assert (
        plan.status_line(train, True)
        == f"Run successfully with command - toy_rec_b - {train.command} - {save_log}.log "
    )
    for step in plan.steps:
        assert step.log and step.status_path == step.log
        assert plan.status_line(step, False).endswith(f" - {step.log} ")
        if step.kind == "train":  # upstream's status line shows the train command without a redirect
            assert step.output == "tee" and "2>&1" not in step.command and step.log.endswith("_nodes_2.log")
        else:
            assert step.command.endswith(f" > {step.log} 2>&1 ")


def test_the_bash_writes_the_logs_the_plan_names(tmp_path):
    """Every log file of the plan (the train's `<save_log>.log`, where its output goes as well as to
    the terminal; the export beside the mode's folder) and nothing else is written under
    test_tipc/output/."""
    script, common = runner_script(LAYOUT, "test", "ocr_head")
    tipc = tmp_path / "repo" / "test_tipc"
    tipc.mkdir(parents=True)
    (tipc / "test_train_inference_python.sh").write_text(script)
    (tipc / "common_func.sh").write_text(common)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.7").write_text('#!/bin/sh\necho "ran $1"\n')
    (bin_dir / "python3.7").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    for config, mode in ((A, "lite_train_lite_infer"), (_exported(tmp_path), "whole_infer")):
        proc = subprocess.run(
            ["bash", "test_tipc/test_train_inference_python.sh", str(config), mode],
            cwd=tipc.parent, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        plan = _plan(config, mode)
        output = tipc / "output"
        written = {"./" + p.relative_to(tipc.parent).as_posix() for p in output.rglob("*") if p.is_file()}
        assert written == {s.log for s in plan.steps} | {plan.status_log}
        for step in plan.steps:
            assert (tipc.parent / step.log).read_text() == f"ran {step.argv[1]}\n"
        if mode != "whole_infer":
            assert proc.stdout.startswith("ran tools/train.py\n")  # tee: the terminal shows it too
        subprocess.run(["rm", "-r", "--", str(output)], check=True)


def test_a_spec_with_runner_ocr_head_builds_todays_script(tmp_path):
    text = (SPECS / "tiny_rec.yml").read_text()
    assert "\nlayout: paddleocr\n" in text and "\nrunner:" not in text
    spec = tmp_path / "tiny_rec.yml"
    spec.write_text(text.replace("\nlayout: paddleocr\n", "\nlayout: paddleocr\nrunner: ocr_head\n"))
    result = cli.invoke(app, ["build", str(spec), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    built = (tmp_path / "out" / "tiny_rec" / "test_tipc" / "test_train_inference_python.sh").read_text().split("\n")
    head = runner_script(LAYOUT, "banner", "ocr_head")[0].split("\n")
    seed = runner_script(LAYOUT, "banner", "ocr")[0].split("\n")
    assert built[1].startswith("# Generated by tipcgen")
    assert built[:1] + built[2:] == head[:1] + head[2:] != seed[:1] + seed[2:]


def test_plan_cli_follows_the_runner_and_refuses_an_unknown_one():
    result = cli.invoke(app, ["plan", "--runner", "ocr_head", "-m", "whole_infer", str(A)])
    assert result.exit_code == 0, result.output
    assert "python_infer_gpu_gpus_0_usetrt_False" in result.output
    seed = cli.invoke(app, ["plan", "-m", "whole_infer", str(A)])
    assert seed.exit_code == 0 and "python_infer_gpu_usetrt_False" in seed.output and "gpus_0" not in seed.output
    bad = cli.invoke(app, ["plan", "--runner", "nope", str(A)])
    assert bad.exit_code == 2
    assert "has no runner 'nope'; its runners are ocr, ocr_head" in bad.output


def test_an_unknown_runner_in_a_spec_is_a_located_error(tmp_path):
    text = (SPECS / "tiny_rec.yml").read_text()
    spec = tmp_path / "tiny_rec.yml"
    spec.write_text(text.replace("\nlayout: paddleocr\n", "\nlayout: paddleocr\nrunner: ocr_tomorrow\n"))
    line = spec.read_text().split("\n").index("runner: ocr_tomorrow") + 1
    for command in ("validate", "build"):
        result = cli.invoke(
            app, [command, str(spec), "--out", str(tmp_path / "o")][: 2 if command == "validate" else 4]
        )
        assert result.exit_code == 2, result.output
        assert (
            f"{spec}:{line}:9: error: field `runner`: runner 'ocr_tomorrow' is not one of layout paddleocr's runners: ocr, ocr_head"
            in result.output
        )
