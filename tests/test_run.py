"""The reference executor (`tipcgen run`): same steps, status log and log files as the generated
bash; timeouts that leave nothing running; dry-run; JSON/JUnit reports; the AutoLog parser.

Real processes throughout: a recording `python3.7` (conftest's Recorder) or small fake
interpreters placed first on PATH.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import (
    GENERATED,
    REPO,
    SEED_000_INFER,
    SEED_000_INFER_REDIRECT,
    SEED_000_TRAIN,
    SPECS,
    copy_suite,
    run_bash,
)
from helpers.cli import run_argv
from helpers.machine import bound
from tipcgen.check.spec import load_spec
from tipcgen.dialects import get_layout
from tipcgen.plan.planner import plan_config
from tipcgen.plan.steps import Plan, Step, skip_reason
from tipcgen.run.autolog import parse_autolog
from tipcgen.run.executor import FAILED, PASSED, TIMED_OUT, run_plan

FIXTURES = Path(__file__).parent / "fixtures" / "executor"
AUTOLOG_LOG = FIXTURES / "autolog_seed000.log"
SEEDS = REPO.parent / "shared" / "seeds"
FLEET_TXT = "train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"
MODE = "lite_train_lite_infer"

# Seed 000's two status lines, the command part (between "ch_PP-OCRv3_rec - " and "!"), verbatim.
SEED_000_COMMANDS = [SEED_000_TRAIN, SEED_000_INFER + SEED_000_INFER_REDIRECT]

# A fake `python3.7`: hangs (with a child, like paddle.distributed.launch's workers) on train.py,
# prints the AutoLog block of seed 000 on predict_rec.py, fails on an argument holding $FAKE_FAIL.
FAKE_PYTHON = r"""#!/usr/bin/env bash
for arg in "$@"; do
    if [[ -n ${FAKE_FAIL:-} && $arg == *"$FAKE_FAIL"* ]]; then
        echo "fake: failing on $arg" >&2
        exit 1
    fi
done
for arg in "$@"; do
    if [[ -n ${FAKE_HANG:-} && $arg == *train.py ]]; then
        if [[ -n ${FAKE_IGNORE_TERM:-} ]]; then trap '' TERM; fi
        sleep 600 &
        echo "$$ $!" >>"$FAKE_PIDS"
        wait
        exit 0
    fi
    if [[ $arg == *predict_rec.py && -n ${FAKE_AUTOLOG:-} ]]; then
        cat "$FAKE_AUTOLOG"
    fi
done
exit 0
"""


def _tree(root: Path, spec_file: str):
    """A scratch model repo holding the spec's generated test_tipc/ tree (as committed)."""
    spec = load_spec(str(SPECS / spec_file))
    copy_suite(GENERATED / spec.model, root)
    return spec


def _plan(root: Path, spec, suite: str, mode: str, **kw) -> Plan:
    """The Plan of a suite's config as laid out in the scratch repo."""
    text = (root / f"test_tipc/configs/{spec.model}/{spec.suites[suite].file}").read_text()
    return plan_config(text, get_layout(spec.layout), mode, **kw)


def _tipcgen(args: list, cwd: Path, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    return run_argv(args, cwd=cwd, env=env, timeout=timeout)


def _files(root: Path) -> dict:
    out = root / "test_tipc" / "output"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _install(bin_dir: Path, name: str, text: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie nobody reaped does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


# 1-2. The executor and the generated bash, run side by side on the same tree and recorder.


@pytest.mark.parametrize(
    "spec_file,suite,mode,cuda,gpuid,fail",
    [
        ("ch_PP-OCRv3_rec.yml", "fleet", MODE, None, None, None),
        ("ch_PP-OCRv3_rec.yml", "normal", MODE, "3", None, None),
        ("ch_PP-OCRv3_rec.yml", "normal", "whole_infer", "3", "5", None),
        ("mobilenet_v3_small.yml", "fleet", MODE, None, None, None),
        ("ch_PP-OCRv3_rec.yml", "normal", MODE, None, None, "tools/train.py"),
        ("ch_PP-OCRv3_rec.yml", "fleet", MODE, None, None, "tools/export_model.py"),
    ],
)
def test_run_equals_generated_bash(tmp_path, recorder, spec_file, suite, mode, cuda, gpuid, fail):
    recorder.install("python3.7")
    env = recorder.env(fail=fail, cuda=cuda)
    spec = _tree(tmp_path / "bash", spec_file)
    _tree(tmp_path / "run", spec_file)
    config = f"test_tipc/configs/{spec.model}/{spec.suites[suite].file}"
    extra = [gpuid] if gpuid else []

    bash = run_bash(
        tmp_path / "bash/test_tipc/test_train_inference_python.sh", [config, mode, *extra], tmp_path / "bash", env
    )
    bash_recs = recorder.records()
    recorder.reset()
    run = _tipcgen(["run", config, "--mode", mode, *(["--gpuid", gpuid] if gpuid else [])], tmp_path / "run", env)
    run_recs = recorder.records()

    # what ran: argv and CUDA_VISIBLE_DEVICES equal the Plan's (minus skipped steps) and the bash's
    plan = _plan(tmp_path / "run", spec, suite, mode, gpuid=gpuid, cuda_visible_devices=cuda)
    failed, ran, skipped = set(), [], []
    for step in plan.steps:
        if skip_reason(step, failed):
            skipped.append(step)
            continue
        ran.append(step)
        if fail and any(fail in a for a in step.argv):
            failed.add(step.index)
    want = [(s.cuda_visible_devices, list(s.argv[1:])) for s in ran]
    assert [(r["cvd"], r["argv"]) for r in run_recs] == want
    assert [(r["cvd"], r["argv"]) for r in bash_recs] == want
    assert {r["cwd"] for r in run_recs} == {str(tmp_path / "run")}

    # same exit code, same summary, byte-identical status log and the same log files
    assert run.returncode == bash.returncode == (1 if fail else 0), run.stderr + bash.stderr
    summary = f"{len(ran)} steps run, {len(ran) - len(failed)} passed, {len(failed)} failed, {len(skipped)} skipped"
    assert summary in bash.stdout and summary in run.stdout
    assert _files(tmp_path / "run") == _files(tmp_path / "bash")
    status = (tmp_path / "run" / plan.status_log).read_bytes()
    assert status.count(b"\n") == len(plan.steps)
    if fail == "tools/train.py":
        assert skipped and status.count(b"Run skipped (train failed) with command - ") == len(skipped)
    if fail == "tools/export_model.py":
        assert not skipped and any(s.kind == "infer" for s in ran), "inference still runs after a failed export"


# 3. Timeouts: the step's whole process group goes, later steps follow the skip rule.


@pytest.mark.parametrize("suite,ignore_term", [("fleet", False), ("normal", True)])
def test_hanging_train_times_out_and_leaves_nothing_running(tmp_path, suite, ignore_term):
    spec = _tree(tmp_path / "repo", "ch_PP-OCRv3_rec.yml")
    _install(tmp_path / "bin", "python3.7", FAKE_PYTHON)
    pids = tmp_path / "pids"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "CUDA_VISIBLE_DEVICES"))}
    env.update(PATH=f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}", FAKE_HANG="1", FAKE_PIDS=str(pids))
    if ignore_term:
        env["FAKE_IGNORE_TERM"] = "1"  # SIGTERM is ignored: only the SIGKILL after the grace ends it
    config = f"test_tipc/configs/{spec.model}/{spec.suites[suite].file}"
    plan = _plan(tmp_path / "repo", spec, suite, MODE)
    trains = [s for s in plan.steps if s.kind == "train"]

    started = time.monotonic()
    proc = _tipcgen(
        ["run", config, "--mode", MODE, "--step-timeout", "2", "--kill-grace", "1", "--json", "report.json"],
        tmp_path / "repo",
        env,
        timeout=60,
    )
    elapsed = time.monotonic() - started

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert elapsed < bound(30)
    recorded = [tuple(map(int, line.split())) for line in pids.read_text().splitlines()]
    assert len(recorded) == len(trains)
    for shell_pid, child_pid in recorded:
        assert not _alive(shell_pid) and not _alive(child_pid), "a process of the step survived"
    report = json.loads((tmp_path / "repo/report.json").read_text())
    statuses = {s["index"]: s["status"] for s in report["steps"]}
    assert {statuses[t.index] for t in trains} == {TIMED_OUT}
    assert all(statuses[s.index] == "skipped" for s in plan.steps if s.kind != "train")
    assert (
        f"{len(trains)} steps run, 0 passed, {len(trains)} failed, {len(plan.steps) - len(trains)} skipped"
        in proc.stdout
    )
    status = (tmp_path / "repo" / plan.status_log).read_text()
    assert status.count("Run failed with command - ") == len(trains)
    out = " ".join(proc.stdout.split())  # rich may wrap long messages
    assert "timed out after 2 s" in out
    if suite == "fleet":
        assert trains[0].nodes == 2
        assert "the other 1 node(s) did not join within the timeout" in out
        assert "192.168.0.1,192.168.0.2" in out and "FLAGS_START_PORT" in out
    else:
        assert "did not join" not in out


def test_processes_a_step_leaves_behind_are_stopped(tmp_path):
    """A step that exits while its children still run (a crashed launcher's workers) does not
    leave them running: the rest of its process group is stopped when it ends."""
    pidfile = tmp_path / "child.pid"
    argv = ("bash", "-c", f"sleep 600 & echo $! > {pidfile}; exit 0")
    log_dir = "./out/m/lite_train_lite_infer"
    plan = Plan(
        "paddleocr",
        MODE,
        "m",
        log_dir,
        f"{log_dir}/results_python.log",
        (Step(0, "train", " ".join(argv), argv, None, None),),
    )
    started = time.monotonic()
    [result] = run_plan(plan, timeout=30, grace=5, cwd=str(tmp_path))
    assert result.status == PASSED and time.monotonic() - started < 10
    assert not _alive(int(pidfile.read_text()))


# 4. --dry-run: the seed's commands, nothing run or written.


def test_dry_run_prints_seed_000_commands_and_writes_nothing(tmp_path, corpus):
    config = corpus / "PaddleOCR" / "ch_PP-OCRv3_rec" / FLEET_TXT
    bin_dir = tmp_path / "bin"
    _install(bin_dir, "python3.7", '#!/bin/sh\ntouch "$0.ran"\n')
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = _tipcgen(["run", str(config), "--mode", MODE, "--dry-run"], work, env)
    assert proc.returncode == 0, proc.stderr
    # each word shell-quoted (pasting a line runs nothing a value holds): the seed's words
    lines = [shlex.split(line) for line in proc.stdout.splitlines()]
    for command in SEED_000_COMMANDS:
        assert shlex.split(command) in lines
    assert lines[0] == shlex.split(SEED_000_COMMANDS[0])
    assert list(work.iterdir()) == [] and not (bin_dir / "python3.7.ran").exists()
    seeds = sorted(SEEDS.glob("000_*.txt"))
    if seeds:  # the constants above are the seed's own text
        seed = seeds[0].read_text()
        for command in SEED_000_COMMANDS:
            assert f"ch_PP-OCRv3_rec - {command}!" in seed


def test_user_errors_exit_2_without_traceback(tmp_path):
    spec = _tree(tmp_path, "ch_PP-OCRv3_rec.yml")
    config = f"test_tipc/configs/{spec.model}/{spec.suites['fleet'].file}"
    for args, message in (
        (["run", config, "--mode", "lite_train_infer"], "unknown mode"),
        (["run", "missing.txt", "--mode", MODE], "missing.txt"),
        (["run", str(SPECS / "ch_PP-OCRv3_rec.yml"), "--suite", "nope", "--mode", MODE], "no suite"),
    ):
        proc = _tipcgen(args, tmp_path, dict(os.environ))
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "test_tipc" / "output").exists()


# 5. Reports.


def test_junit_and_json_reports(tmp_path):
    spec = _tree(tmp_path / "repo", "ch_PP-OCRv3_rec.yml")
    _install(tmp_path / "bin", "python3.7", FAKE_PYTHON)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "CUDA_VISIBLE_DEVICES"))}
    # the multi-GPU training fails: its export and inference are skipped
    env.update(
        PATH=f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}", FAKE_AUTOLOG=str(AUTOLOG_LOG), FAKE_FAIL="--gpus=0,1"
    )
    suite = spec.suites["normal"]
    config = f"test_tipc/configs/{spec.model}/{suite.file}"
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "step_summary.md")
    args = ["--junit", "out/junit.xml", "--json", "out/report.json", "--summary", "out/summary.md"]
    proc = _tipcgen(["run", config, "--mode", MODE, *args], tmp_path / "repo", env)
    assert proc.returncode == 1, proc.stderr
    plan = _plan(tmp_path / "repo", spec, "normal", MODE)
    failed_train = next(s for s in plan.steps if s.kind == "train" and "--gpus=0,1" in s.argv)
    dependents = {s.index for s in plan.steps if s.depends_on == failed_train.index}

    root = ET.parse(tmp_path / "repo/out/junit.xml").getroot()
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(plan.steps)
    assert {c.get("classname") for c in cases} == {f"{suite.model_name}.{MODE}"}
    assert [c.get("name") for c in cases] == [f"{s.index} {s.kind} {s.group}" for s in plan.steps]
    failures = [i for i, c in enumerate(cases) if c.find("failure") is not None]
    skips = [i for i, c in enumerate(cases) if c.find("skipped") is not None]
    assert failures == [failed_train.index] and set(skips) == dependents
    assert cases[failed_train.index].find("failure").get("message") == "exit status 1"
    assert root.find("testsuite").get("failures") == "1" and root.find("testsuite").get("skipped") == str(
        len(dependents)
    )
    first_infer = next(s for s in plan.steps if s.kind == "infer")
    out = cases[first_infer.index].find("system-out").text
    assert "Perf info" in out and "\x1b" not in out

    report = json.loads((tmp_path / "repo/out/report.json").read_text())
    assert (report["model_name"], report["mode"], report["layout"]) == (suite.model_name, MODE, "paddleocr")
    # what ran, for the status page's rows: a legacy config is its own suite (no suite name)
    assert report["record"]["config"] == config and "suite" not in report["record"]
    assert report["summary"] == {
        "steps": len(plan.steps),
        "run": len(plan.steps) - len(dependents),
        "passed": len(plan.steps) - len(dependents) - 1,
        "failed": 1,
        "skipped": len(dependents),
        "timed_out": 0,
        "exit_code": 1,
    }
    steps = report["steps"]
    assert [s["index"] for s in steps] == list(range(len(plan.steps)))
    assert [s["argv"] for s in steps] == [list(s.argv) for s in plan.steps]
    assert [s["command"] for s in steps] == [s.command for s in plan.steps]
    assert steps[failed_train.index]["returncode"] == 1
    assert {steps[i]["reason"] for i in dependents} == {"train failed"}
    bench = steps[first_infer.index]["benchmark"]
    assert bench == parse_autolog(AUTOLOG_LOG.read_text())
    assert bench["perf"]["inference_time(ms)"] == 79.5877 and bench["data"]["batch_size"] == 1.0
    assert steps[failed_train.index]["benchmark"] is None
    assert all(steps[i]["benchmark"] is None for i in dependents)
    # versioned: schema, tipcgen, the repo (no git checkout here: no commit), machine, paddle
    rec = report["record"]
    assert (rec["schema"], rec["kind"]) == (2, "run") and "model_commit" not in rec and "node" not in rec
    assert rec["root"] == str(tmp_path / "repo") and rec["machine"]["cpus"] >= 1 and rec["paddle"]

    # the markdown summary names the failed step, its command and its log's last lines
    summary = (tmp_path / "repo/out/summary.md").read_text()
    assert summary == (tmp_path / "step_summary.md").read_text().rstrip("\n") + "\n"  # appended for GitHub too
    assert summary.startswith(f"### ❌ FAILED: {suite.model_name} · {MODE} · paddleocr · 1 node\n")
    assert f"#### step {failed_train.index + 1} `train` {failed_train.group}: failed (exit status 1)" in summary
    assert failed_train.command.split(" > ")[0].strip() in summary
    assert failed_train.log is None and "last 15 lines" not in summary  # its output went to the terminal
    log_dir = plan.log_dir.removeprefix("./")
    assert f"Logs: [{plan.log_dir}](<../{log_dir}>)" in summary  # relative to out/


# run_plan directly: steps that cannot run, CUDA_VISIBLE_DEVICES, missing interpreters.


def test_run_plan_edge_cases(tmp_path):
    show = "import os; print('cvd=' + os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>'))"
    log_dir = "./out/m/lite_train_lite_infer"

    def step(i, kind, argv, log=None, cvd=None, depends_on=None):
        command = " ".join(argv) if argv else "python3.7 'unbalanced"
        if log:
            command += f" > {log} 2>&1 "
        return Step(i, kind, command, argv, log, cvd, depends_on)

    steps = (
        step(0, "train", None),  # quotes do not balance: fails without running
        step(1, "eval", (sys.executable, "-c", show), f"{log_dir}/never.log", depends_on=0),
        step(2, "train", (sys.executable, "-c", show), f"{log_dir}/a.log", cvd="7"),
        step(3, "export", (sys.executable, "-c", show), f"{log_dir}/b.log", cvd=None, depends_on=2),
        step(4, "infer", ("tipcgen-no-such-interpreter", "x.py"), f"{log_dir}/c.log", depends_on=2),
    )
    plan = Plan("paddleocr", MODE, "m", log_dir, f"{log_dir}/results_python.log", steps)
    events = []
    results = run_plan(
        plan,
        timeout=30,
        cwd=str(tmp_path),
        environ=dict(os.environ, CUDA_VISIBLE_DEVICES="1"),
        on_event=lambda kind, s, r: events.append((kind, s.index)),
    )
    assert [r.status for r in results] == [FAILED, "skipped", PASSED, PASSED, FAILED]
    assert results[0].returncode is None and results[4].returncode == 127
    assert (tmp_path / log_dir / "a.log").read_text() == "cvd=7\n"
    assert (tmp_path / log_dir / "b.log").read_text() == "cvd=<unset>\n"
    assert "tipcgen-no-such-interpreter" in (tmp_path / log_dir / "c.log").read_text()
    assert not (tmp_path / log_dir / "never.log").exists()
    assert ("start", 1) not in events and ("end", 1) in events and events[0] == ("start", 0)
    status = (tmp_path / plan.status_log).read_text()
    assert status.splitlines() == [f"\033[33m {r.status_line}\033[0m" for r in results]
    assert (
        status.splitlines()[1] == f"\033[33m Run skipped (train failed) with command - m - {steps[1].command}!  \033[0m"
    )


# 6. The AutoLog parser on seed 000's block.

SEED_BLOCK = {
    "env": {
        "OS_version": "Ubuntu 16.04",
        "CUDA_version": "10.1.243",
        "CUDNN_version": "7.6.5",
        "drivier_version": "460.32.03",
    },
    "paddle": {
        "paddle_version": "2.3.0-rc0",
        "paddle_commit": "5d4980c052583fec022812d9c29460aff7cdc18b",
        "log_api_version": "1.0",
    },
    "conf": {
        "runtime_device": "cpu",
        "ir_optim": True,
        "enable_memory_optim": True,
        "enable_tensorrt": False,
        "enable_mkldnn": False,
        "cpu_math_library_num_threads": 6.0,
    },
    "model": {"model_name": "rec", "precision": "fp32"},
    "data": {"batch_size": 1.0, "input_shape": "dynamic", "data_num": 6.0},
    "perf": {
        "cpu_rss(MB)": 288.957,
        "gpu_rss(MB)": None,
        "gpu_util": None,
        "total time spent(s)": 0.4824,
        "preprocess_time(ms)": 0.1136,
        "inference_time(ms)": 79.5877,
        "postprocess_time(ms)": 0.6945,
    },
}


def test_autolog_parses_seed_block():
    text = AUTOLOG_LOG.read_text()
    assert parse_autolog(text) == SEED_BLOCK  # the prediction lines around it do not leak in
    seeds = sorted(SEEDS.glob("000_*.txt"))
    if seeds:
        assert parse_autolog(seeds[0].read_text()) == SEED_BLOCK


def test_autolog_tolerates_prefixes_missing_sections_and_repeats():
    assert parse_autolog("") is None
    assert parse_autolog("[2022/06/02 22:53:35] ppocr INFO: Predicts of x.jpg:('a', 0.9)\n") is None
    bare = (
        "------------- Model info -------------\n"
        " model_name: clas\n"
        "------------- Perf info -------------\n"
        " cpu_rss(MB): 100, gpu_rss(MB): 2048.5, gpu_util: 35.0%\n"
        " inference_time(ms): 3\n"
        "done.\n"
        " stray: 1\n"
    )
    got = parse_autolog(bare)
    assert got == {
        "env": {},
        "paddle": {},
        "conf": {},
        "data": {},
        "model": {"model_name": "clas"},
        "perf": {"cpu_rss(MB)": 100.0, "gpu_rss(MB)": 2048.5, "gpu_util": 35.0, "inference_time(ms)": 3.0},
    }
    other_prefix = "\n".join(f"I0602 root INFO: {line}" if line.strip() else line for line in bare.splitlines()[:4])
    assert parse_autolog(other_prefix)["perf"]["gpu_util"] == 35.0
    two = bare.replace("35.0%", "1%") + bare
    assert parse_autolog(two)["perf"]["gpu_util"] == 35.0  # the last block wins


def test_timeout_also_stops_workers_in_their_own_session(tmp_path):
    """paddle.distributed.launch starts workers with setsid; a timeout must stop them too."""
    import sys as _sys
    import time as _time

    from tipcgen.plan.steps import Step
    from tipcgen.run.executor import Bounds, _execute

    pidfile = tmp_path / "worker.pid"
    launcher = tmp_path / "launcher.py"
    launcher.write_text(
        "import os, subprocess, sys, time, signal\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"  # a launcher that ignores SIGTERM
        "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(w.pid))\n"
        "time.sleep(600)\n"
    )
    step = Step(0, "train", "launcher", (_sys.executable, str(launcher)), None, None)
    t0 = _time.monotonic()
    status, code, reason = _execute(step, str(tmp_path), Bounds(2, "--step-timeout"), grace=1, env=dict(os.environ))
    assert status == "timed out" and "timed out" in reason
    assert _time.monotonic() - t0 < 20
    worker = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        _time.sleep(0.1)
    else:
        os.kill(worker, 9)
        raise AssertionError("the detached worker survived the timeout")


def test_dry_run_and_plan_text_show_env_directory_and_skips(tmp_path):
    """What a step runs with is visible before running: `run --dry-run` prefixes the
    CUDA_VISIBLE_DEVICES a step gets (and `env -u` when the caller's one is dropped), and
    `plan` names a step's skip (a node other than trainer 0's) as its JSON does."""
    from tipcgen.check.source import plan_source

    spec = str(SPECS / "mobilenet_v3_small.yml")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "TIPC_NODE_IP")}
    proc = _tipcgen(["run", spec, "--mode", MODE, "--dry-run"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    plan = plan_source(spec, MODE)

    def redirect(s):  # the step's argv runs, with its log
        return [*s.argv, ">", s.log, "2>&1"] if s.log else list(s.argv)

    want = [
        ([f"CUDA_VISIBLE_DEVICES={s.cuda_visible_devices}"] if s.cuda_visible_devices is not None else []) + redirect(s)
        for s in plan.steps
    ]
    assert [shlex.split(line) for line in proc.stdout.splitlines()] == want
    assert any(line.startswith("CUDA_VISIBLE_DEVICES=0 ") for line in proc.stdout.splitlines())
    # With the caller's CUDA_VISIBLE_DEVICES=3: inherited where the script keeps it, dropped
    # (`env -u`) once the script has unset it (after a run's inference).
    caller = _tipcgen(["run", spec, "--mode", MODE, "--dry-run"], tmp_path, {**env, "CUDA_VISIBLE_DEVICES": "3"})
    inherited = plan_source(spec, MODE, cuda_visible_devices="3")
    want = [
        (
            [f"CUDA_VISIBLE_DEVICES={s.cuda_visible_devices}"]
            if s.cuda_visible_devices is not None
            else ["env", "-u", "CUDA_VISIBLE_DEVICES"]
        )
        + redirect(s)
        for s in inherited.steps
    ]
    assert [shlex.split(line) for line in caller.stdout.splitlines()] == want
    want = [" ".join(w) for w in want]
    assert want[0].startswith("CUDA_VISIBLE_DEVICES=3 ") and any(w.startswith("env -u ") for w in want)

    fleet = _tipcgen(["plan", spec, "--suite", "fleet"], tmp_path, {**env, "TIPC_NODE_IP": "192.168.0.2"})
    assert fleet.returncode == 0, fleet.stderr
    assert "skipped: not trainer 0" in fleet.stdout
    skipped = [s for s in plan_source(spec, MODE, suite="fleet", node_ip="192.168.0.2").steps if s.skip]
    assert skipped and fleet.stdout.count("skipped: not trainer 0") == len(skipped)
