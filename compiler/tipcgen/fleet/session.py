"""Run one command on every node at once over ssh: stream each node's output prefixed `[ip]`, and
when a node fails, the run outlives its bound or the user presses Ctrl-C, stop every node.

Killing the local ssh client would leave the remote run going (no tty, no SIGHUP), so stopping
is a second ssh per node running `stop_script` (the run's token finds all its processes there).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Callable, Optional

from tipcgen.fleet.nodes import Node
from tipcgen.fleet.preflight import SLACK, run_bounded
from tipcgen.fleet.ssh import MARK, run_script, stop_script
from tipcgen.fleet.transport import Transport
from tipcgen.fsio import open_output


class Printer:
    """Whole lines from several threads, each prefixed with its node (`[ip] ...`)."""

    def __init__(self, stream: Optional[IO[str]] = None):
        self.stream = stream
        self.lock = threading.Lock()

    def line(self, ip: str, text: str) -> None:
        stream = self.stream or sys.stdout
        with self.lock:
            stream.write(f"[{ip}] {text.rstrip()}\n")
            stream.flush()


@dataclass
class NodeRun:
    node: Node
    argv: list
    token: str
    out_path: str
    proc: Optional[subprocess.Popen] = None
    reader: Optional[threading.Thread] = None
    started: float = 0.0
    seconds: float = 0.0
    returncode: Optional[int] = None  # None: still running when it was stopped
    stopped: Optional[str] = None  # why we stopped it while it ran
    stop_note: Optional[str] = None  # what the stop command said when it did not get through

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.stopped is None


def _read(run: NodeRun, printer: Printer) -> None:
    assert run.proc is not None and run.proc.stdout is not None
    stdout = run.proc.stdout
    with open_output(run.out_path, append=True) as out:
        # a line longer than 64 KiB comes in pieces: a node's output is never held whole
        for raw in iter(lambda: stdout.readline(1 << 16), b""):
            out.write(raw)
            out.flush()
            text = raw.decode("utf-8", "replace")
            if not text.startswith(MARK):
                printer.line(run.node.ip, text)


def _start(run: NodeRun, printer: Printer) -> None:
    os.makedirs(os.path.dirname(run.out_path), exist_ok=True)
    run.started = time.monotonic()
    run.proc = subprocess.Popen(
        run.argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # Ctrl-C reaches us only; we stop the nodes ourselves
    )
    run.reader = threading.Thread(target=_read, args=(run, printer), daemon=True)
    run.reader.start()


def _stop(runs: list[NodeRun], opts: Transport, grace: float, reason: str) -> None:
    """Stop the run on every node that has not finished well (a failed node may leave workers)."""
    bound = opts.connect_timeout + grace + SLACK
    todo = [r for r in runs if not (r.proc is not None and r.proc.poll() == 0)]
    for r in todo:
        if r.proc is not None and r.proc.poll() is None:
            r.stopped = reason

    def one(run: NodeRun) -> None:
        code, out, err = run_bounded(opts.argv(run.node.ip, stop_script(run.node.dir, run.token, grace)), bound)
        if f"{MARK} stopped" not in out:
            run.stop_note = opts.failure(run.node.ip, code, err, bound)

    if todo:
        with ThreadPoolExecutor(max_workers=len(todo)) as pool:
            list(pool.map(one, todo))
    for r in todo:  # the remote run is gone: its ssh client ends; one that hangs is killed
        if r.proc is None:
            continue
        try:
            r.proc.wait(timeout=grace + SLACK)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(r.proc.pid, signal.SIGKILL)
            r.proc.wait()


def _note_ends(runs: list[NodeRun]) -> None:
    """Record the exit code and duration of every run that has just ended."""
    for r in runs:
        if r.proc is not None and r.returncode is None and r.stopped is None and r.proc.poll() is not None:
            r.returncode = r.proc.returncode
            r.seconds = time.monotonic() - r.started


def _failure(runs: list[NodeRun]) -> Optional[str]:
    """Why to stop everything: the first node whose command ended with a non-zero exit."""
    failed = [r for r in runs if r.returncode not in (None, 0) and r.stopped is None]
    if not failed:
        return None
    first = min(failed, key=lambda r: r.started + r.seconds)
    return f"node {first.node.ip} failed (exit {first.returncode})"


def run_everywhere(
    nodes: Sequence[Node],
    command: Callable[[Node], list],
    *,
    opts: Transport,
    env: Callable[[Node], list],
    token: str,
    timeout: float,
    grace: float,
    out_path: Callable[[Node], str],
    printer: Printer,
) -> tuple[list[NodeRun], Optional[str]]:
    """Run `command(node)` on every node at once; (the runs, why they were stopped or None).

    A node's token is `<token>-<ip>`: two nodes sharing a host never stop each other's runs."""
    runs = []
    for n in nodes:
        tok = f"{token}-{n.ip}"
        runs.append(NodeRun(n, opts.argv(n.ip, run_script(n.dir, command(n), env(n), tok)), tok, out_path(n)))
    reason: Optional[str] = None
    try:
        for r in runs:
            _start(r, printer)
        deadline = time.monotonic() + timeout
        while True:
            _note_ends(runs)
            reason = _failure(runs)
            if reason or all(r.returncode is not None for r in runs):
                break
            if time.monotonic() >= deadline:
                reason = f"timed out after {timeout:g} s"
                break
            time.sleep(0.2)
    except KeyboardInterrupt:
        reason = "interrupted"
    if reason:
        _stop(runs, opts, grace, reason)
    for r in runs:
        if r.proc is not None and r.proc.poll() is None:  # pragma: no cover (each ended or was killed)
            with contextlib.suppress(subprocess.TimeoutExpired):
                r.proc.wait(timeout=SLACK)
        if r.stopped is not None and r.proc is not None:
            r.returncode, r.seconds = r.proc.returncode, time.monotonic() - r.started
        if r.reader is not None:
            r.reader.join(timeout=SLACK)
    return runs, reason
