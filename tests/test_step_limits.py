"""Bounded steps: the spec's `limits` reach the Plan, the generated bash and `tipcgen run`; a
step past its limit is stopped with everything it started, its status line stays upstream's
`Run failed ...`, and the summary says it timed out. TIPC_STEP_TIMEOUT and --step-timeout win.

Real processes: the generated bash and `tipcgen run` on a scratch repo, with a fake
`python3.7` whose training never ends (tests/helpers/limits.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.limits import (
    FLEET,
    MODE,
    MODEL,
    NORMAL,
    finish,
    repo,
    sleeper_env,
    sleepers_left,
    spec_with_limits,
    start_bash,
    start_run,
)
from helpers.machine import bound
from tipcgen.cli import app


def _status_log(root, model_name="PPOCRv3_ocr_rec") -> str:
    return (root / f"test_tipc/output/{model_name}/{MODE}/results_python.log").read_text()


def test_spec_limit_stops_a_training_that_never_ends_in_bash_and_run(tmp_path):
    """Acceptance (a) and (b): a 5 s limit from the spec, the same in both executors."""
    spec = spec_with_limits(tmp_path / "specs", {"train": {MODE: 5}})
    bash_root, run_root = repo(tmp_path / "bash", spec), repo(tmp_path / "run", spec)
    bash_env, run_env = sleeper_env(tmp_path / "b"), sleeper_env(tmp_path / "r")
    bash = start_bash(bash_root, NORMAL, bash_env)
    run = start_run(run_root, ["spec.yml", "--suite", "normal", "-m", MODE, "--json", "report.json"], run_env)
    done = {"bash": finish(bash), "run": finish(run)}

    for name, root, tmp in (("bash", bash_root, tmp_path / "b"), ("run", run_root, tmp_path / "r")):
        result = done[name]
        assert result.returncode == 1, (name, result.stdout[-2000:], result.stderr[-2000:])
        assert result.seconds < bound(15), (name, result.seconds)
        summary = [line for line in result.stdout.splitlines() if " steps run, " in line]
        assert summary and "step 1 timed out after 5 s" in summary[-1], (name, summary)
        assert "timed out after 5 s (limit from the spec's limits)" in result.flat, name
        status = _status_log(root)
        assert status.count("Run failed with command - ") == 1 and "Run successfully" not in status
        assert "Run skipped (train failed)" in status
        assert sleepers_left(tmp) == [], f"{name}: a process of the stopped step survived"
    report = json.loads((run_root / "report.json").read_text())
    assert report["steps"][0]["status"] == "timed out"
    assert report["steps"][0]["limit"] == "5 s (the spec's limits)"
    # the bash and the executor wrote the same status log
    assert _status_log(bash_root) == _status_log(run_root)


def test_environment_and_option_override_the_spec_and_a_term_ignoring_step_is_killed(tmp_path):
    """TIPC_STEP_TIMEOUT (bash) and --step-timeout (run) beat the spec's 600 s; a trainer that
    ignores SIGTERM is killed after the grace; a multi-node train's failure names the doctor."""
    spec = spec_with_limits(tmp_path / "specs", {"train": 600})
    bash_root, run_root = repo(tmp_path / "bash", spec), repo(tmp_path / "run", spec)
    bash_env = sleeper_env(tmp_path / "b", TIPC_STEP_TIMEOUT="1", TIPC_KILL_GRACE="1", FAKE_IGNORE_TERM="1")
    run_env = sleeper_env(tmp_path / "r", TIPC_STEP_TIMEOUT="900", FAKE_IGNORE_TERM="1")
    config = f"test_tipc/configs/{MODEL}/{FLEET}"
    bash = start_bash(bash_root, FLEET, bash_env)
    run = start_run(run_root, [config, "-m", MODE, "--step-timeout", "1", "--kill-grace", "1"], run_env)
    results = {"bash": finish(bash), "run": finish(run)}

    for (name, result), tmp, source in zip(
        results.items(), (tmp_path / "b", tmp_path / "r"), ("TIPC_STEP_TIMEOUT", "--step-timeout")
    ):
        assert result.returncode == 1, (name, result.stdout[-2000:], result.stderr[-2000:])
        assert result.seconds < bound(15), (name, result.seconds)
        assert f"timed out after 1 s (limit from {source})" in result.flat, (name, result.flat[-2000:])
        assert f'run "tipcgen doctor {config}" on every node' in result.flat, name
        assert sleepers_left(tmp) == [], f"{name}: the TERM-ignoring trainer survived"


@pytest.mark.parametrize("value", ["-3"])
def test_a_bad_step_timeout_in_the_environment_is_refused_before_any_step(tmp_path, value):
    spec = spec_with_limits(tmp_path / "specs", None)
    root = repo(tmp_path / "repo", spec)
    env = sleeper_env(tmp_path / "b", TIPC_STEP_TIMEOUT=value)
    for result in (finish(start_bash(root, NORMAL, env)), finish(start_run(root, ["spec.yml", "-m", MODE], env))):
        assert result.returncode == 2, result.stdout + result.stderr
        assert "TIPC_STEP_TIMEOUT" in result.stderr
    assert not (tmp_path / "b" / "pids").exists(), "a step ran"


def test_plan_carries_the_spec_limits_per_kind_mode_and_topology(tmp_path):
    """Acceptance (d): the plan JSON shows each step's limit; a multi-node train gets the factor."""
    limits = {
        "train": {MODE: 600, "whole_train_whole_infer": 86400},
        "infer": 30,
        "multinode_factor": 1.5,
        "stall": {MODE: 120},
    }
    spec = spec_with_limits(tmp_path / "specs", limits)
    runner = CliRunner()
    normal = runner.invoke(app, ["plan", str(spec), "--suite", "normal", "-m", MODE, "--format", "json"])
    fleet = runner.invoke(app, ["plan", str(spec), "--suite", "fleet", "-m", MODE, "--format", "json"])
    whole = runner.invoke(app, ["plan", str(spec), "--suite", "fleet", "-m", "whole_train_whole_infer"])
    assert normal.exit_code == fleet.exit_code == whole.exit_code == 0, normal.output + fleet.output
    by_kind = {}
    for step in json.loads(normal.stdout)["steps"]:
        by_kind.setdefault(step["kind"], set()).add((step["timeout"], step["stall"]))
    assert by_kind == {"train": {(600, 120)}, "export": {(None, None)}, "infer": {(30, None)}}
    [train] = [s for s in json.loads(fleet.stdout)["steps"] if s["kind"] == "train"]
    assert "--ips=192.168.0.1,192.168.0.2" in train["argv"] and train["timeout"] == 900  # 600 x 1.5
    assert "limit: 129600 s (the spec's limits)" in whole.stdout  # 86400 x 1.5, no stall limit there


def test_generated_bash_embeds_the_same_limits(tmp_path):
    """The script serves every suite: its table is keyed by config file and mode."""
    spec = spec_with_limits(tmp_path / "specs", {"train": {MODE: 600}, "eval": 60, "multinode_factor": 2})
    root = repo(tmp_path / "repo", spec)
    script = (root / "test_tipc/test_train_inference_python.sh").read_text()
    rows = dict(re.findall(r"^(\S+:\S+)\) tipc_limits=\((.*)\) ;;$", script, re.M))
    assert rows[f"{NORMAL}:{MODE}"] == "600 60 0 0 1200 0"
    assert rows[f"{FLEET}:whole_train_whole_infer"] == "0 60 0 0 518400 0"  # the default 3 days x 2
    assert rows[f"{FLEET}:whole_infer"].split()[1:4] == ["60", "0", "0"]  # whole_infer: eval, export, infer


@pytest.mark.parametrize(
    "limits,message",
    [
        ("{train: 0}", "whole seconds from 1"),
        ("{train: 1.5}", "whole seconds from 1"),
        ("{train: {whole_infer: 5}}", "whole_infer does not train"),
        ("{train: {lite_train: 5}}", "lite_train"),
        ("{eval: 5, stall_after: 3}", "stall_after"),
        ("{multinode_factor: 0.5}", "a number from 1 to 1000"),
    ],
)
def test_bad_limits_are_located_errors(tmp_path, limits, message):
    text = spec_with_limits(tmp_path / "specs", None).read_text()
    lines = text.splitlines()
    at = lines.index("defaults:") + 1
    lines.insert(at, f"  limits: {limits}")
    bad = tmp_path / "bad.yml"
    bad.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2, result.output
    assert re.search(rf"{re.escape(str(bad))}:{at + 1}:\d+: error: .*limits", result.output), result.output
    assert message in result.output


def test_interrupting_the_bash_stops_the_running_step_and_its_watcher(tmp_path):
    """Ctrl-C (SIGINT) while a step runs in its own process group: the script stops the step
    and the limit's watcher (nothing keeps its output open), and exits 130."""
    import signal
    import time

    root = repo(tmp_path / "repo", spec_with_limits(tmp_path / "specs", None))
    proc, _ = start_bash(root, NORMAL, sleeper_env(tmp_path / "b"))
    deadline = time.monotonic() + 20
    while not (tmp_path / "b" / "pids").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    result = finish((proc, time.monotonic()), timeout=20)
    assert result.returncode == 130 and result.seconds < bound(10), (result.returncode, result.seconds)
    assert sleepers_left(tmp_path / "b") == []


# A `python3.7` whose training takes a second and whose other steps end at once.
BRIEF = r"""#!/usr/bin/env bash
for arg in "$@"; do
    if [[ $arg == *train.py ]]; then
        sleep 1
    fi
done
exit 0
"""


def _watchers(seconds: int) -> list:
    """Pids of the limit watchers' `sleep SECONDS` processes (a unique SECONDS per test) that can
    still run: not one the script has SIGKILLed whose kernel exit is pending (on a loaded machine
    a killed `sleep` waits for a CPU to die on: SIGKILL pending, re-parented, gone a moment later)."""
    found = []
    for stat_dir in Path("/proc").iterdir():
        if stat_dir.name.isdigit():
            try:
                argv = (stat_dir / "cmdline").read_bytes().split(b"\0")
                status = dict(
                    line.split(":", 1) for line in (stat_dir / "status").read_text().splitlines() if ":" in line
                )
            except OSError:
                continue
            pending = int(status.get("SigPnd", "0"), 16) | int(status.get("ShdPnd", "0"), 16)
            if argv[:2] == [b"sleep", str(seconds).encode()] and not pending & (1 << 8):  # bit 8: SIGKILL
                found.append(int(stat_dir.name))
    return found


def test_the_limit_watcher_holds_no_pipe_of_the_caller_and_never_outlives_the_script(tmp_path):
    """A caller reading the script's output through a pipe (CI, subprocess) sees it end when the
    script ends: the watcher's stdio is not the caller's, and no watcher survives the script,
    even when steps end the moment their watcher starts (bash blocks SIGTERM while it forks, so
    a SIGTERM'd watcher could leave its `sleep` behind)."""
    import os
    import time

    limit = 4321
    root = repo(tmp_path / "repo", spec_with_limits(tmp_path / "specs", None))
    env = sleeper_env(tmp_path / "b", TIPC_STEP_TIMEOUT=str(limit))
    fake = tmp_path / "b" / "bin" / "python3.7"
    fake.write_text(BRIEF)

    proc, _ = start_bash(root, NORMAL, env)
    deadline = time.monotonic() + 20
    while not _watchers(limit) and time.monotonic() < deadline:
        time.sleep(0.02)
    watchers = _watchers(limit)
    assert watchers, "no watcher seen while the training ran"
    caller_pipes = {os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in (1, 2)}
    for pid in watchers:
        held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1, 2)}
        assert held == {"/dev/null"} and not held & caller_pipes, held
    result = finish((proc, time.monotonic()))
    assert result.returncode == 0, result.stderr[-2000:]

    fake.write_text("#!/usr/bin/env bash\nexit 0\n")  # every step ends at once: the race's best odds
    for _ in range(15):
        result = finish(start_bash(root, NORMAL, env), timeout=30)
        assert result.returncode == 0, result.stderr[-2000:]
    assert _watchers(limit) == [], "a step's watcher outlived the script"


def test_a_step_that_exits_0_on_sigterm_still_counts_as_timed_out(tmp_path):
    """A trainer that catches SIGTERM and exits 0 when its limit stops it must not pass."""
    root = repo(tmp_path / "repo", spec_with_limits(tmp_path / "specs", None))
    env = sleeper_env(tmp_path / "b", TIPC_STEP_TIMEOUT="2", TIPC_KILL_GRACE="5")
    (tmp_path / "b" / "bin" / "python3.7").write_text(
        "#!/usr/bin/env bash\n"
        'for arg in "$@"; do\n'
        "    if [[ $arg == *train.py ]]; then\n"
        "        trap 'exit 0' TERM\n"
        '        sleep 600 &\n        echo "$$ $!" >>"$FAKE_PIDS"\n        wait\n        exit 0\n'
        "    fi\n"
        "done\n"
        "exit 0\n"
    )
    result = finish(start_bash(root, NORMAL, env))
    assert result.returncode == 1, (result.stdout[-2000:], result.stderr[-2000:])
    assert "step 1 timed out after 2 s" in result.stdout, result.stdout[-2000:]
    status = _status_log(root)
    assert status.count("Run failed with command - ") == 1 and "Run successfully" not in status
