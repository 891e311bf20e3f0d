"""Shared by tests/test_step_limits.py and tests/test_stall_watchdog.py: a model repo compiled
from the PP-OCRv3 spec with the `limits` a test gives, a fake `python3.7` whose training never
ends, and running the generated bash and `tipcgen run` on it side by side."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

from conftest import SPECS
from tipcgen.check.spec import load_spec
from tipcgen.emit.files import build_files

MODE = "lite_train_lite_infer"
MODEL = "ch_PP-OCRv3_rec"
NORMAL = "train_infer_python.txt"
FLEET = "train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"

# A `python3.7` whose training never ends: it writes worker 0's log once (as
# paddle.distributed.launch would), prints one line, then waits for a child that sleeps (both
# pids noted in FAKE_PIDS; FAKE_IGNORE_TERM: through SIGTERM too). Every other step succeeds.
SLEEPER = r"""#!/usr/bin/env bash
for arg in "$@"; do
    if [[ $arg == *train.py ]]; then
        if [[ -n ${FAKE_IGNORE_TERM:-} ]]; then trap '' TERM; fi
        mkdir -p log && echo "worker 0: epoch 1 started ($$)" >log/workerlog.0
        echo "fake trainer: step 1 loss 2.0"
        sleep 600 &
        echo "$$ $!" >>"$FAKE_PIDS"
        wait
        exit 0
    fi
done
exit 0
"""


def spec_with_limits(root: Path, limits: Optional[dict], single_gpu: bool = True) -> Path:
    """The PP-OCRv3 spec with `defaults.limits` (its normal suite on one GPU: one train step)."""
    data = yaml.safe_load((SPECS / f"{MODEL}.yml").read_text())
    if limits is not None:
        data["defaults"]["limits"] = limits
    if single_gpu:
        data["suites"]["normal"]["topology"] = [0]
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{MODEL}.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def repo(root: Path, spec: Path) -> Path:
    """A scratch model repo holding the spec's generated test_tipc/ tree and a copy of the spec."""
    for rel, content in build_files(load_spec(str(spec))).items():
        out = root / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(content)
    (root / "spec.yml").write_bytes(spec.read_bytes())
    return root


def sleeper_env(tmp: Path, **extra: str) -> dict:
    """PATH with the sleeping `python3.7` first; FAKE_PIDS collects its pids."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    python = bin_dir / "python3.7"
    python.write_text(SLEEPER)
    python.chmod(python.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    drop = ("CUDA_VISIBLE_DEVICES", "TIPC_NODE_IP", "FLAGS_START_PORT", "TIPC_STEP_TIMEOUT", "TIPC_STALL_TIMEOUT")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", FAKE_PIDS=str(tmp / "pids"))
    env.update(extra)
    return env


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def flat(self) -> str:
        """stdout and stderr with rich's wrapping undone."""
        return " ".join((self.stdout + " " + self.stderr).split())


def start_bash(root: Path, config: str, env: dict, mode: str = MODE) -> tuple:
    argv = ["bash", "test_tipc/test_train_inference_python.sh", f"test_tipc/configs/{MODEL}/{config}", mode]
    return _start(argv, root, env)


def start_run(root: Path, args: list, env: dict) -> tuple:
    code = "import sys; sys.argv[0] = 'tipcgen'; from tipcgen.cli import main; main()"
    return _start([sys.executable, "-c", code, "run", *args], root, {**env, "COLUMNS": "200"})


def _start(argv: list, cwd: Path, env: dict) -> tuple:
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, time.monotonic()


def finish(started: tuple, timeout: float = 60) -> Finished:
    proc, t0 = started
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"still running after {timeout} s: {proc.args}\n{out[-3000:]}\n{err[-3000:]}") from None
    return Finished(proc.returncode, out, err, time.monotonic() - t0)


def alive(pid: int) -> bool:
    """Whether `pid` still runs, from /proc (gone, a zombie or dead: not running)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def sleepers_left(tmp: Path) -> list:
    """The fake trainers and their sleeping children still running: none after a stopped step."""
    pids = [int(p) for p in (tmp / "pids").read_text().split()] if (tmp / "pids").exists() else []
    assert pids, "the fake trainer never started"
    return [p for p in pids if alive(p)]
