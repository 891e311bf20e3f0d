"""Run one benchmark run for real: every node's train command at once, bounded and watched.

Each node's command runs from the repo root in a session of its own, its output in the run's
log directory. While they run we poll every 0.25 s: the rank-0 log for progress (epochs done),
and /proc for the memory of everything the commands started (the peak of the summed resident
set sizes, launcher and workers included). A run that outlives its timeout has every process
it started killed (the executor's ProcessTree: the launcher puts workers in sessions of their
own); so does Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Optional

from tipcgen.bench.matrix import BenchRun
from tipcgen.bench.parse import progress
from tipcgen.errors import TipcError
from tipcgen.fsio import open_output
from tipcgen.inputs import open_read, read_bytes
from tipcgen.run.executor import ProcessTree, kill_group

POLL = 0.25
GRACE = 5.0
# The caller's distributed settings would redirect the launcher (a stale master, endpoints).
TAIL_STEP_BYTES = 16 << 20  # read of a growing log per poll: progress lines, not the whole file at once
_DROP_ENV = ("CUDA_VISIBLE_DEVICES", "PADDLE_TRAINER_ENDPOINTS", "PADDLE_MASTER", "PADDLE_TRAINERS_NUM")


@dataclass
class Outcome:
    status: str  # passed | failed | timed out
    returncodes: list[Optional[int]]
    seconds: float
    peak_rss_mb: Optional[float]  # None: no /proc


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        with contextlib.suppress(TipcError, ValueError, IndexError):
            status = read_bytes(f"/proc/{pid}/status", 1 << 16, tree="/proc", what="a process's status")
            for line in status.splitlines():
                if line.startswith(b"VmRSS:"):
                    total += int(line.split()[1])  # kB
                    break
    return total / 1024.0


def node_env(cuda_visible_devices: Optional[str], base: Optional[dict] = None) -> dict:
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _DROP_ENV}
    env["PYTHONUNBUFFERED"] = "1"  # progress shows as it happens
    if cuda_visible_devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible_devices
    return env


def _tail(path: str, state: dict) -> str:
    """What `path` gained since the last call (state keeps the offset and a partial line)."""
    try:
        with open_read(path, what="a training log") as fh:
            fh.seek(state.get(path, 0))
            chunk = fh.read(TAIL_STEP_BYTES)
    except (TipcError, OSError):
        return ""
    state[path] = state.get(path, 0) + len(chunk)
    return chunk.decode("utf-8", "replace")


class _Watch:
    """What the poll loop keeps: the rank-0 log read so far, the memory peak."""

    def __init__(self, run: BenchRun, on_progress: Optional[Callable[[int, int], None]]):
        self.run = run
        self.on_progress = on_progress
        self.offsets: dict = {}
        self.text = ""
        self.peak: Optional[float] = 0.0 if os.path.isdir("/proc") else None

    def poll(self, trees: list[ProcessTree]) -> None:
        pids = []
        for tree in trees:
            tree.refresh()
            pids.extend(tree.alive())
        if self.peak is not None:
            self.peak = max(self.peak, _rss_mb(pids))
        self.text = (self.text + _tail(self.run.main_log, self.offsets))[-65536:]
        done = progress(self.text)
        if done and self.on_progress:
            self.on_progress(*done)


def execute(
    run: BenchRun,
    root: str,
    on_progress: Optional[Callable[[int, int], None]] = None,
    environ: Optional[dict] = None,
) -> Outcome:
    """Run every node of `run` concurrently from `root`; wait for all (or the timeout)."""
    os.makedirs(run.log_dir, exist_ok=True)
    procs: list[tuple[subprocess.Popen, ProcessTree]] = []
    started = time.monotonic()
    watch = _Watch(run, on_progress)
    status = "passed"
    with contextlib.ExitStack() as files:
        try:
            for i, node in enumerate(run.nodes):
                proc = subprocess.Popen(
                    list(node.argv),
                    cwd=os.path.join(root, node.cwd) if node.cwd else root,
                    env=node_env(node.cuda_visible_devices, environ),
                    stdin=subprocess.DEVNULL,
                    stdout=files.enter_context(open_output(run.node_output(i))),
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                procs.append((proc, ProcessTree(proc.pid)))
            while any(p.poll() is None for p, _ in procs):
                if time.monotonic() - started > run.timeout:
                    status = "timed out"
                    break
                watch.poll([tree for _, tree in procs])
                time.sleep(POLL)
        except BaseException:
            for proc, tree in procs:
                kill_group(proc, GRACE, tree)
            raise
    for proc, tree in procs:
        if proc.poll() is None or tree.alive():
            kill_group(proc, GRACE, tree)
    codes = [p.returncode for p, _ in procs]
    if status == "passed" and any(c != 0 for c in codes):
        status = "failed"
    return Outcome(status, codes, time.monotonic() - started, watch.peak)
