"""Emit: the generated bash runs the seed documents' commands, and agrees with the Plan."""

from __future__ import annotations

import shlex

import pytest

from conftest import SEED_000_INFER, SEED_000_TRAIN, SPECS, run_bash
from tipcgen.check.spec import load_spec
from tipcgen.dialects import get_layout
from tipcgen.emit.files import build_files
from tipcgen.lower.text import config_text
from tipcgen.plan.planner import plan_config
from tipcgen.plan.steps import skip_reason
from tipcgen.spec.modes import MODES

# Seed 000 (quoted in legacy-format.md §4): the first and a CPU inference line of the fleet run.
SEED_000 = [SEED_000_TRAIN, SEED_000_INFER]
# What the models script really runs on the tutorial's fleet config (legacy-format.md §4; seed 001's
# own two lines are stale). argv after python3.7, with CUDA_VISIBLE_DEVICES.
_M = "./test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/fleet_train_gpus_0,1_autocast_False_nodes_2.log"
MODELS_FLEET = [
    (
        None,
        f"-m paddle.distributed.launch --ips=192.168.0.1,192.168.0.2 --gpus=0,1 train.py --output-dir={_M} --epochs=5 --batch-size=4",
    ),
    ("0", f"train.py --test-only --pretrained={_M}/latest.pdparams"),
    (
        "0",
        f"tools/export_model.py --model=mobilenet_v3_small --pretrained={_M}/latest.pdparams --save-inference-dir={_M}",
    ),
    ("0", f"deploy/inference_python/infer.py --use-gpu=False --model-dir={_M} --batch-size=1 --benchmark=True"),
]


def _tree(tmp_path, spec_file: str):
    spec = load_spec(str(SPECS / spec_file))
    for rel, data in build_files(spec).items():
        path = tmp_path / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return spec, tmp_path / "repo"


def _run(recorder, repo, config, mode, fail=None, extra=(), cuda=None):
    recorder.install("python3.7")
    recorder.reset()
    proc = run_bash(
        repo / "test_tipc/test_train_inference_python.sh",
        [config, mode, *extra],
        repo,
        recorder.env(fail=fail, cuda=cuda),
    )
    return proc, recorder.records()


def test_fleet_ocr_runs_seed_000_commands(tmp_path, recorder):
    spec, repo = _tree(tmp_path, "ch_PP-OCRv3_rec.yml")
    config = f"test_tipc/configs/{spec.model}/{spec.suites['fleet'].file}"
    proc, recs = _run(recorder, repo, config, "lite_train_lite_infer")
    assert proc.returncode == 0, proc.stderr
    argvs = [r["argv"] for r in recs]
    seed = [shlex.split(line)[1:] for line in SEED_000]
    assert argvs[0] == seed[0]
    assert seed[1] in argvs
    assert all(r["cvd"] is None for r in recs), "a multi-node run sets no CUDA_VISIBLE_DEVICES upstream"
    # the status log holds one success line per step, with upstream's wording
    log = (repo / "test_tipc/output/ch_PP-OCRv3_rec/lite_train_lite_infer/results_python.log").read_text()
    assert log.count("Run successfully with command - ch_PP-OCRv3_rec - ") == len(recs)
    assert "tipc: 6 steps run, 6 passed, 0 failed, 0 skipped" in proc.stdout


def test_fleet_models_runs_the_four_commands(tmp_path, recorder):
    spec, repo = _tree(tmp_path, "mobilenet_v3_small.yml")
    config = f"test_tipc/configs/{spec.model}/{spec.suites['fleet'].file}"
    proc, recs = _run(recorder, repo, config, "lite_train_lite_infer")
    assert proc.returncode == 0, proc.stderr
    assert [(r["cvd"], r["argv"]) for r in recs] == [(cvd, line.split()) for cvd, line in MODELS_FLEET]
    log = (repo / "test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/results_python.log").read_text()
    assert (
        f"Run successfully with command - mobilenet_v3_small - python3.7 -m paddle.distributed.launch --ips=192.168.0.1,192.168.0.2 --gpus=0,1 train.py --output-dir={_M} --epochs=5   --batch-size=4!"
        in log
    )
    assert "python_infer_cpu_batchsize_1.log 2>&1 !" in log


@pytest.mark.parametrize(
    "spec_file,suite_name,fail",
    [
        ("ch_PP-OCRv3_rec.yml", "fleet", "tools/export_model.py"),
        ("mobilenet_v3_small.yml", "fleet", "tools/export_model.py"),
        ("ch_PP-OCRv3_rec.yml", "normal", "tools/train.py"),
    ],
)
def test_failed_step_keeps_going_logs_failure_and_exits_1(tmp_path, recorder, spec_file, suite_name, fail):
    spec, repo = _tree(tmp_path, spec_file)
    suite = spec.suites[suite_name]
    config = f"test_tipc/configs/{spec.model}/{suite.file}"
    proc, recs = _run(recorder, repo, config, "lite_train_lite_infer", fail=fail)
    assert proc.returncode == 1
    plan = plan_config(config_text(suite, get_layout(spec.layout)), get_layout(spec.layout), "lite_train_lite_infer")
    # later steps still run (as upstream), except those of a run whose training failed
    ran, failed, skipped = [], set(), []
    for step in plan.steps:
        if skip_reason(step, failed):
            skipped.append(step)
            continue
        ran.append(step)
        if any(fail in a for a in step.argv):
            failed.add(step.index)
    assert failed
    assert [r["argv"] for r in recs] == [list(s.argv[1:]) for s in ran]
    log = (repo / f"test_tipc/output/{suite.model_name}/lite_train_lite_infer/results_python.log").read_text()
    assert log.count("Run failed with command - ") == len(failed)
    assert log.count("Run successfully with command - ") == len(ran) - len(failed)
    assert log.count("Run skipped (train failed) with command - ") == len(skipped)
    if fail == "tools/export_model.py":
        assert not skipped and any(s.kind == "infer" for s in ran), "inference still runs after a failed export"
    else:
        assert skipped and all(s.kind != "train" for s in skipped)
    summary = f"{len(ran)} steps run, {len(ran) - len(failed)} passed, {len(failed)} failed, {len(skipped)} skipped"
    assert summary in proc.stdout


@pytest.mark.parametrize("spec_file", ["ch_PP-OCRv3_rec.yml", "mobilenet_v3_small.yml"])
@pytest.mark.parametrize("mode", MODES)
def test_bash_equals_plan_for_every_suite_and_mode(tmp_path, recorder, spec_file, mode):
    spec, repo = _tree(tmp_path, spec_file)
    layout = get_layout(spec.layout)
    for name, suite in spec.suites.items():
        config = f"test_tipc/configs/{spec.model}/{suite.file}"
        for cuda, extra in ((None, ()), ("3", ("5",) if mode == "whole_infer" else ())):
            proc, recs = _run(recorder, repo, config, mode, extra=extra, cuda=cuda)
            assert proc.returncode == 0, proc.stderr
            plan = plan_config(
                config_text(suite, layout), layout, mode, gpuid=extra[0] if extra else None, cuda_visible_devices=cuda
            )
            got = [(r["cvd"], r["argv"]) for r in recs]
            want = [(s.cuda_visible_devices, list(s.argv[1:])) for s in plan.steps]
            assert got == want, f"{name} {mode}"
            assert all(r["cwd"] == str(repo) for r in recs)
            for step in plan.steps:
                if step.log:
                    assert (repo / step.log).exists(), step.log


def test_bad_arguments_exit_2(tmp_path, recorder):
    spec, repo = _tree(tmp_path, "ch_PP-OCRv3_rec.yml")
    script = repo / "test_tipc/test_train_inference_python.sh"
    env = recorder.env()
    assert run_bash(script, [], repo, env).returncode == 2
    assert run_bash(script, ["missing.txt", "lite_train_lite_infer"], repo, env).returncode == 2
    config = f"test_tipc/configs/{spec.model}/{spec.suites['fleet'].file}"
    proc = run_bash(script, [config, "lite_train_infer"], repo, env)
    assert proc.returncode == 2 and "unknown MODE" in proc.stderr
