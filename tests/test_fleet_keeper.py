"""The Slurm run step's keeper (fleet/slurm.py KEEPER_PY) on this machine, without Slurm: the
command after srun's own options, exactly as the transport builds it, with the signals Slurm's
proctrack/linuxproc sends (to each process of the step, one at a time, in either order).

A trainer that outlives its launcher must stay the keeper's until the stop's KILL: CI once saw a
stop's TERM reach the keeper just after the launcher had died of it, the keeper exit, and the
trainer escape to init (still running after the job was gone)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers.machine import bound
from tipcgen.fleet.slurm import KEEPER_LATE, SlurmTransport

# A launcher whose trainer ignores TERM in a session of its own; the launcher dies of TERM.
STUBBORN = '(trap "" INT TERM HUP; exec setsid sleep 300) & echo "$!" > trainer.pid; wait "$!"'


def _keeper(tmp_path: Path, script: str) -> subprocess.Popen:
    argv = SlurmTransport(job="1", names=()).argv("198.18.0.11", script, run="tok")
    tail = argv[argv.index("--input=none") + 1 :]
    assert tail[:2] == ["sh", "-c"] and tail[-1] == script, tail
    return subprocess.Popen(tail, cwd=tmp_path)


def _until(what, seconds: float):
    end = time.monotonic() + bound(seconds)
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    pytest.fail(f"not within {bound(seconds):g} s: {what.__doc__}")


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError):
        return 0


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _trainer(tmp_path: Path) -> int:
    def started() -> int:
        """the trainer started"""
        text = (tmp_path / "trainer.pid").read_text() if (tmp_path / "trainer.pid").exists() else ""
        return int(text) if text.strip() and _alive(int(text)) else 0

    return _until(started, 20)


def _kill(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("keeper_first", [True, False], ids=["keeper-signalled-first", "keeper-signalled-last"])
def test_a_stopped_run_never_leaves_a_trainer_outside_the_step(tmp_path, keeper_first):
    """Whichever process hears the stop first, the trainer never runs on outside the keeper: the
    keeper stays while it runs (Slurm's KILL then ends both), or, when the stop reached it too late
    to tell (a loaded machine), it has ended the trainer itself. The old keeper left with the
    trainer still running, re-parented away from the step."""
    keeper = _keeper(tmp_path, STUBBORN)
    trainer = _trainer(tmp_path)
    launcher = _parent(trainer)
    assert launcher not in (0, keeper.pid), "the trainer should be the launcher's child at first"
    try:
        order = [keeper.pid, launcher] if keeper_first else [launcher, keeper.pid]
        for i, pid in enumerate(order):
            if not keeper_first and i == 1:  # the launcher has died of it and the trainer is the keeper's
                _until(lambda: _parent(trainer) == keeper.pid, 20)
            os.kill(pid, signal.SIGTERM)
        time.sleep(KEEPER_LATE + 1)  # past the keeper's wait for a late stop
        if keeper.poll() is None:
            assert _alive(trainer) and _parent(trainer) == keeper.pid, "the trainer left the step"
        else:
            _until(lambda: not _alive(trainer), 10)  # the keeper is gone: so must the trainer be
        if keeper_first:  # heard at once: a stop, not a run that ended on its own
            assert keeper.poll() is None, "the keeper left the step while the trainer still ran"
    finally:
        _kill(keeper.pid, trainer)  # Slurm's KILL: the step's processes, together
        keeper.wait(timeout=bound(10))
    _until(lambda: not _alive(trainer), 10)


def test_a_run_that_ends_on_its_own_takes_what_it_left_with_it(tmp_path):
    """No stop: the keeper ends with the run's exit code, and a process the run left behind is
    ended by the keeper (what Slurm does to what is left of a finished step) instead of escaping."""
    keeper = _keeper(tmp_path, '(trap "" INT TERM HUP; exec setsid sleep 300) & echo "$!" > trainer.pid; exit 3')
    trainer = _trainer(tmp_path)
    try:
        assert keeper.wait(timeout=bound(KEEPER_LATE + 10)) == 3
        _until(lambda: not _alive(trainer), 10)
    finally:
        _kill(keeper.pid, trainer)


def test_a_run_that_leaves_nothing_ends_at_once_with_its_exit_code(tmp_path):
    t0 = time.monotonic()
    keeper = _keeper(tmp_path, "exit 5")
    assert keeper.wait(timeout=bound(10)) == 5
    assert time.monotonic() - t0 < bound(KEEPER_LATE), "the keeper waited for nothing"
