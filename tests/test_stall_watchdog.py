"""The stall watchdog: a train step whose logs (its log, log/workerlog.*) stop growing is
stopped within its stall limit and reported "stalled" (the status line stays `Run failed ...`),
with the last lines of each worker log and what to export to find where it hangs.

Real processes: the generated bash and `tipcgen run` on scratch repos, with a fake `python3.7`
that writes its worker log once and then sleeps (tests/helpers/limits.py), and one that keeps
writing; all four runs at once, to keep the fast tier fast.
"""

from __future__ import annotations

import json

from helpers import limits as h
from helpers.machine import bound

STALL = 3  # seconds; the acceptance bound is STALL + 5

# A trainer whose worker log grows every 0.4 s for 2.4 s: never stalled with a 1 s limit.
CHATTY = """#!/usr/bin/env bash
for a in "$@"; do
    if [[ $a == *train.py ]]; then
        mkdir -p log
        for i in 1 2 3 4 5 6; do echo "step $i" >>log/workerlog.0; sleep 0.4; done
    fi
done
exit 0
"""


def _chatty_env(tmp_path):
    chatty = tmp_path / "chatty"
    chatty.mkdir()
    (chatty / "python3.7").write_text(CHATTY)
    (chatty / "python3.7").chmod(0o755)
    env = h.sleeper_env(tmp_path / "c")
    env["PATH"] = f"{chatty}:{env['PATH']}"
    return env


def test_a_worker_that_prints_once_then_sleeps_is_stopped_as_stalled(tmp_path):
    # The spec's stall limit reaches both through the Plan / the script's table; the step limit
    # (600 s) is far away, so only the watchdog can stop the step.
    spec = h.spec_with_limits(tmp_path / "specs", {"train": 600, "stall": {h.MODE: STALL}})
    bash_root, run_root = h.repo(tmp_path / "bash", spec), h.repo(tmp_path / "run", spec)
    # TIPC_STALL_TIMEOUT / --stall-timeout turn the watchdog on without a spec limit, and a
    # step whose log keeps growing runs to its end.
    plain = h.spec_with_limits(tmp_path / "plain", None)
    chatty_bash, chatty_run = h.repo(tmp_path / "cbash", plain), h.repo(tmp_path / "crun", plain)
    chatty = _chatty_env(tmp_path)
    started = {
        "bash": h.start_bash(bash_root, h.NORMAL, h.sleeper_env(tmp_path / "b")),
        "run": h.start_run(
            run_root, ["spec.yml", "--suite", "normal", "-m", h.MODE, "--json", "r.json"], h.sleeper_env(tmp_path / "r")
        ),
        "chatty bash": h.start_bash(chatty_bash, h.NORMAL, {**chatty, "TIPC_STALL_TIMEOUT": "1"}),
        "chatty run": h.start_run(
            chatty_run, ["spec.yml", "--suite", "normal", "-m", h.MODE, "--stall-timeout", "1"], chatty
        ),
    }
    results = {name: h.finish(proc) for name, proc in started.items()}

    report = json.loads((run_root / "r.json").read_text())
    train = report["steps"][0]
    assert train["kind"] == "train" and train["status"] == "stalled", train
    assert train["seconds"] < STALL + 5
    assert [s["status"] for s in report["steps"]].count("stalled") == 1 and report["summary"]["failed"] == 1
    assert results["bash"].seconds < STALL + bound(5), results["bash"].seconds
    for name, root, tmp in (("bash", bash_root, tmp_path / "b"), ("run", run_root, tmp_path / "r")):
        result = results[name]
        assert result.returncode == 1, (name, result.stdout[-2000:], result.stderr[-2000:])
        flat = result.flat
        assert f"stalled: no log output for {STALL} s (limit from the spec's limits)" in flat, (name, flat[-3000:])
        summary = [line for line in result.stdout.splitlines() if " steps run, " in line]
        assert summary and f"step 1 stalled: no log output for {STALL} s" in summary[-1], name
        assert "workerlog.0" in flat and "worker 0: epoch 1 started" in flat, f"{name}: no worker log tail"
        for hint in ("GLOG_v=3", "FLAGS_benchmark=1", "NCCL_DEBUG=INFO"):
            assert hint in flat, (name, hint)
        status = (root / f"test_tipc/output/PPOCRv3_ocr_rec/{h.MODE}/results_python.log").read_text()
        assert status.count("Run failed with command - ") == 1
        assert h.sleepers_left(tmp) == [], f"{name}: a process of the stalled step survived"
    for name in ("chatty bash", "chatty run"):
        result = results[name]
        assert result.returncode == 0, (name, result.stdout[-2000:], result.stderr[-2000:])
        assert "stalled" not in result.flat, name
