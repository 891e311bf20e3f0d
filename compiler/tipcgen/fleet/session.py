"""Run one command on every node at once over ssh: stream each node's output prefixed `[ip]`, and
when a node fails, the run outlives its bound or the user presses Ctrl-C, stop every node.

Killing the local ssh client (or srun) would leave the remote run going, so stopping is the
transport's own `stop` (transport.py): over ssh a second ssh running the stop script, on Slurm
`scancel` of the run's job step. `run_everywhere` is the one place runs are started, and every
way out of it (a node failing, the run bound, SIGINT, SIGTERM via `Stop`, an exception) passes
through `_stop` for every run that has not ended well.
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
from typing import IO, Callable, NoReturn, Optional

from tipcgen.fleet.bounded import SLACK
from tipcgen.fleet.nodes import Node
from tipcgen.fleet.ssh import MARK, run_script
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


class Stop(BaseException):
    """Raised in the main thread by the CLI's signal handlers (ask_stop): stop every node, say why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# The stops signals asked for during a run. A handler's exception can be lost: Python prints and
# drops one raised inside a garbage collector's callback or a __del__ (the signal is then gone), so
# the request is also kept here, where the watch loop reads it.
_ASKED: list[str] = []


def ask_stop(reason: str) -> NoReturn:
    """What a signal handler calls: the run stops every node with `reason`, even if the exception
    raised here is dropped ("interrupted": KeyboardInterrupt, as Ctrl-C raises without us)."""
    _ASKED.append(reason)
    if reason == "interrupted":
        raise KeyboardInterrupt
    raise Stop(reason)


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
    """Stop the run on every node that has not finished well (a failed node may leave workers),
    through the transport's `stop` only; what it could not stop is kept in `stop_note`."""
    todo = [r for r in runs if r.proc is not None and r.proc.poll() != 0]
    for r in todo:
        if r.proc is not None and r.proc.poll() is None:
            r.stopped = reason

    def one(run: NodeRun) -> None:
        run.stop_note = opts.stop(run.node.ip, run.node.dir, run.token, grace)

    def wait_all(bound: float) -> list[NodeRun]:
        end = time.monotonic() + bound
        for r in todo:
            assert r.proc is not None
            with contextlib.suppress(subprocess.TimeoutExpired):
                r.proc.wait(timeout=max(0.0, end - time.monotonic()))
        return [r for r in todo if r.proc is not None and r.proc.poll() is None]

    if not todo:
        return
    with _signals_held(), ThreadPoolExecutor(max_workers=len(todo)) as pool:
        list(pool.map(one, todo))
        # The remote run is gone: its ssh client (or srun) ends. One still here may have been
        # starting its run as it was stopped: stopped once more, then it is killed.
        late = wait_all(SLACK / 4)
        list(pool.map(one, [r for r in late if r.stop_note is None]))
        for r in wait_all(SLACK / 4):
            assert r.proc is not None
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(r.proc.pid, signal.SIGKILL)
            r.proc.wait()


@contextlib.contextmanager
def _signals_held():
    """A second Ctrl-C or SIGTERM while stopping must not cut the stop short: ignored meanwhile
    (from the main thread only, where Python can set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


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


def _watch(runs: list[NodeRun], timeout: float) -> Optional[str]:
    """Wait until every run ended (None), one failed or the bound passed (why to stop them)."""
    deadline = time.monotonic() + timeout
    while True:
        if _ASKED:
            raise Stop(_ASKED[-1])
        _note_ends(runs)
        reason = _failure(runs)
        if reason or all(r.returncode is not None for r in runs):
            return reason
        if time.monotonic() >= deadline:
            return f"timed out after {timeout:g} s"
        time.sleep(0.2)


def node_token(token: str, ip: str) -> str:
    """The token a node's run is started and stopped by: two nodes sharing a host never stop each
    other's runs. The one spelling for the runs, the dry run's commands and the stop line."""
    return f"{token}-{ip}"


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

    A node's run carries `node_token(token, ip)`."""
    runs = []
    for n in nodes:
        tok = node_token(token, n.ip)
        argv = opts.argv(n.ip, run_script(n.dir, command(n), env(n), tok), run=tok)
        runs.append(NodeRun(n, argv, tok, out_path(n)))
    reason: Optional[str] = None
    error: Optional[BaseException] = None
    _ASKED.clear()
    try:
        for r in runs:
            _start(r, printer)
        reason = _watch(runs, timeout)
    except KeyboardInterrupt:
        reason = "interrupted"
    except Stop as exc:
        reason = exc.reason
    except BaseException as exc:  # re-raised once every node is stopped
        reason, error = f"error here: {type(exc).__name__}: {exc}", exc
    finally:
        # Every way out: a node that has not ended well is stopped, whatever the reason.
        _note_ends(runs)
        if reason or any(r.proc is not None and r.proc.poll() != 0 for r in runs):
            _stop(runs, opts, grace, reason or "the run ended")
    if error is not None:
        raise error
    for r in runs:
        if r.proc is not None and r.proc.poll() is None:  # pragma: no cover (each ended or was killed)
            with contextlib.suppress(subprocess.TimeoutExpired):
                r.proc.wait(timeout=SLACK)
        if r.stopped is not None and r.proc is not None:
            r.returncode, r.seconds = r.proc.returncode, time.monotonic() - r.started
        if r.reader is not None:
            r.reader.join(timeout=SLACK)
    return runs, reason
