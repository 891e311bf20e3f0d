"""The port the user chooses is the port paddle's launcher uses, GPU and CPU suites alike.

paddle >= 2.3's `paddle.distributed.launch` takes its first port from PADDLE_START_PORT (over
`--start_port`), never from FLAGS_START_PORT, the variable seed 000 tells users to export. The
generated runner and the executor pass FLAGS_START_PORT on as PADDLE_START_PORT when that is
unset; doctor names the port the launcher really takes and advises the variable that moves it.
The real launcher's side is checked in the paddle tier (test_start_port_real_launcher).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tipcgen.plan.steps import Step
from tipcgen.run.doctor import Launch, check_ports, start_port
from tipcgen.run.executor import step_env

GPU = Launch(("10.0.0.1", "10.0.0.2"), None, None, 2)  # `--ips=... --gpus=0,1`: no --start_port
CPU = Launch(("10.0.0.1", "10.0.0.2"), "10.0.0.1", "17000", 1)  # cpuxN: --host and --start_port


def _step() -> Step:
    return Step(0, "train", "python3 x.py", ("python3", "x.py"), None, None)


def test_flags_start_port_reaches_a_gpu_launch():
    assert start_port(GPU, {"FLAGS_START_PORT": "17100"}) == (
        "17100",
        "FLAGS_START_PORT, exported as PADDLE_START_PORT",
    )
    assert start_port(GPU, {})[0] == "6070"
    # The launcher's own variable wins over both, as in paddle.
    assert start_port(CPU, {"PADDLE_START_PORT": "18000", "FLAGS_START_PORT": "17000"})[0] == "18000"


def test_busy_port_advice_names_the_variable_that_moves_it():
    busy = lambda ip, port: "Address already in use"  # noqa: E731
    by_flags = check_ports(GPU, {"FLAGS_START_PORT": "17100"}, busy=busy)
    assert by_flags.verdict == "fail" and "export another FLAGS_START_PORT" in by_flags.fix
    by_paddle = check_ports(GPU, {"FLAGS_START_PORT": "17100", "PADDLE_START_PORT": "17200"}, busy=busy)
    assert "port 17200" in by_paddle.found
    assert "export another PADDLE_START_PORT (it overrides FLAGS_START_PORT)" in by_paddle.fix


def test_executor_exports_the_plans_defaults_only_where_unset():
    defaults = (("PADDLE_START_PORT", "17100"),)
    assert step_env(_step(), {"PATH": "/bin"}, defaults)["PADDLE_START_PORT"] == "17100"
    assert step_env(_step(), {"PADDLE_START_PORT": ""}, defaults)["PADDLE_START_PORT"] == "17100"
    assert step_env(_step(), {"PADDLE_START_PORT": "9"}, defaults)["PADDLE_START_PORT"] == "9"


def test_plan_carries_the_default(tmp_path):
    from tipcgen.check.source import plan_source

    spec = str(Path(__file__).resolve().parents[1] / "specs" / "tiny_rec.yml")
    with_port = plan_source(spec, "lite_train_lite_infer", suite="fleet", node_ip="127.0.0.2", start_port="17100")
    assert with_port.env == (("PADDLE_START_PORT", "17100"),)
    assert plan_source(spec, "lite_train_lite_infer", suite="fleet").env == ()


@pytest.mark.paddle
def test_start_port_real_launcher(tmp_path):
    """paddle's launcher itself: FLAGS_START_PORT alone leaves it on 6070; PADDLE_START_PORT moves it."""
    pytest.importorskip("paddle")
    (tmp_path / "w.py").write_text("import os\nprint('ENDPOINTS', os.environ['PADDLE_TRAINER_ENDPOINTS'])\n")
    seen = {}
    for name in ("FLAGS_START_PORT", "PADDLE_START_PORT"):
        env = {k: v for k, v in os.environ.items() if not k.endswith("START_PORT")}
        env[name] = "17222"
        res = subprocess.run(
            [sys.executable, "-m", "paddle.distributed.launch", "--ips=127.0.0.2,127.0.0.3", "--host=127.0.0.2",
             "--nproc_per_node=1", f"--log_dir={tmp_path / name}", "w.py"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        log = (tmp_path / name / "workerlog.0").read_text()
        seen[name] = next(line.split()[1] for line in log.splitlines() if line.startswith("ENDPOINTS"))
    assert seen == {
        "FLAGS_START_PORT": "127.0.0.2:6070,127.0.0.3:6070",
        "PADDLE_START_PORT": "127.0.0.2:17222,127.0.0.3:17222",
    }


STUB = """#!/usr/bin/env bash
printf '%s|%s\\n' "${PADDLE_START_PORT-unset}" "$*" >> "$START_PORT_SEEN"
exit 0
"""


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"FLAGS_START_PORT": "17100"}, "17100"),  # seed 000's instruction now reaches the launcher
        ({"FLAGS_START_PORT": "17100", "PADDLE_START_PORT": "17300"}, "17300"),  # the launcher's own wins
        ({}, "unset"),
    ],
)
def test_generated_runner_passes_the_port_on(tmp_path, env, expected):
    """The bash runner the spec compiles to, run for real with a stub interpreter."""
    repo = Path(__file__).resolve().parents[1]
    work = tmp_path / "repo"
    (work / "test_tipc").mkdir(parents=True)
    for item in (repo / "generated" / "tiny_rec" / "test_tipc").iterdir():
        if item.is_file():
            (work / "test_tipc" / item.name).write_bytes(item.read_bytes())
    config = work / "fleet.txt"
    config.write_bytes(
        (repo / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_linux_cpu_fleet_infer_python.txt").read_bytes()
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(STUB)
    (bin_dir / "python3").chmod(0o755)
    seen = tmp_path / "seen.txt"
    run_env = {k: v for k, v in os.environ.items() if not k.endswith("START_PORT")}
    run_env.update(env, PATH=f"{bin_dir}:{os.environ['PATH']}", START_PORT_SEEN=str(seen), TIPC_NODE_IP="127.0.0.2")
    res = subprocess.run(
        ["bash", "test_tipc/test_train_inference_python.sh", "fleet.txt", "lite_train_lite_infer"],
        cwd=work, env=run_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    lines = seen.read_text().splitlines()
    launch = [ln for ln in lines if "paddle.distributed.launch" in ln]
    assert launch, lines
    assert all(ln.split("|", 1)[0] == expected for ln in lines), lines
